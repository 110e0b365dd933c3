#!/usr/bin/env bash
# harness/ops/gpu-model.sh -- `make gpu-model`: every CUDA kernel a verdict
# judges, read from the build's machine code with no GPU, and the fraction
# of each GPU's roof its own count allows (kernels/README.md, the lab
# sheet; harness/ops/gpu_model.c, the model).
#
#   1. for each architecture in SMS (default 80 90), the build's CUDA
#      objects are opened (cuobjdump -xelf) and each cubin disassembled
#      with its line information (nvdisasm -gi -c) into
#      $B/gpu-model/smNN/*.sass, with an index of the kernels in them
#      (index.tsv: the name as ptxas reports it, the mangled name, the file);
#   2. $B/gpu-model-tool reads those, the ptxas records beside the objects
#      (*.cu.o.res: registers, spills, shared memory) and the kernels'
#      sources (rare-code markers), prints the table and writes
#      results/LABEL/gpu-model.csv (default LABEL: gpu-model);
#   3. gnuplot draws plots/LABEL/gpu-model.{png,svg} from the CSV
#      (skipped, with the command to draw it later, without gnuplot).
#
# cuobjdump and nvdisasm come from the toolkit, or PyPI where it lacks
# them (harness/ops/cuda-tools.sh). Environment: B (build), SMS, LABEL,
# GPUS (the GPUs to model, default every one whose SM is in SMS), ARGS
# (more options for the tool: $B/gpu-model-tool --help), RESULTS and
# PLOTS (the folders for the CSV and the chart: results, plots).
# Exit codes: 0 every judged kernel at or above its bar, 1 some below,
# 2 bad usage or nothing to read, 77 no cuobjdump to be had.
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
B=${B:-build} SMS=${SMS:-80 90} LABEL=${LABEL:-gpu-model}
RESULTS=${RESULTS:-results} PLOTS=${PLOTS:-plots}
# shellcheck source=harness/ops/cuda-tools.sh
. harness/ops/cuda-tools.sh
tools=$(cuda_tools_dir gpu-model) || exit 77
tools=$(cd "$tools" && pwd) root=$(pwd)

objs=$(find "$B/obj/kernels" "$B/obj/harness" -name '*.cu.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "gpu-model: no CUDA objects under $B/obj: build with nvcc first (make build)" >&2; exit 2; }
out=$B/gpu-model
rm -rf "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for sm in $SMS; do
    mkdir -p "$out/sm$sm"
    : >"$out/sm$sm/index.tsv"
done
for o in $objs; do
    base=$(basename "$o" .cu.o)
    rm -rf "${work:?}"/*
    case $o in /*) abs=$o ;; *) abs=$root/$o ;; esac
    (cd "$work" && "$tools/cuobjdump" -xelf all "$abs" >/dev/null)
    for sm in $SMS; do
        cubin=$(find "$work" -name "*.sm_$sm.cubin" | head -n1)
        [ -n "$cubin" ] || continue
        listing=$out/sm$sm/$base.sass
        "$tools/nvdisasm" -gi -c "$cubin" >"$listing"
        # name as ptxas reports it (c++filt, "void " and the arguments off) \t mangled \t file
        sed -n 's/^\.text\.\([^:]*\):$/\1/p' "$listing" | while read -r mangled; do
            short=$(echo "$mangled" | c++filt | sed 's/^void //; s/(.*$//')
            printf '%s\t%s\t%s\n' "$short" "$mangled" "$listing"
        done >>"$out/sm$sm/index.tsv"
    done
done
mkdir -p "$RESULTS/$LABEL"
csv=$RESULTS/$LABEL/gpu-model.csv
# What the CSV records of the build: the commit (dirty when tracked files
# differ from it) and nvcc's release.
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
[ -n "$commit" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit=$commit-dirty
nvcc_version="nvcc $("${NVCC:-nvcc}" --version 2>/dev/null | sed -n 's/.*release //p')"
status=0
# shellcheck disable=SC2046,SC2086
"$B/gpu-model-tool" --listings "$out" --sms "$SMS" --source-root . --csv "$csv" --roofs results/reference \
    --commit "${commit:-unknown}" --nvcc "$nvcc_version" ${GPUS:+--gpus "$GPUS"} ${ARGS:-} \
    $(find "$B/obj" -name '*.cu.o.res' | sort) || status=$?
[ $status -le 1 ] || exit $status
draw="csv='$csv'; out='$PLOTS/$LABEL/gpu-model'; rooflab='$B/rooflab'"
if command -v gnuplot >/dev/null 2>&1; then
    mkdir -p "$PLOTS/$LABEL"
    for fmt in png svg; do
        gnuplot -e "$draw; fmt='$fmt'" plots/gpu-model.gp || { echo "gpu-model: gnuplot failed" >&2; exit 2; }
    done
    echo "gpu-model: wrote $PLOTS/$LABEL/gpu-model.png and .svg"
else
    echo "gpu-model: charts not drawn (no gnuplot): gnuplot -e \"$draw; fmt='png'\" plots/gpu-model.gp"
fi
exit $status

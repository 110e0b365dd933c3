#!/usr/bin/env bash
# gpu-day.sh -- `make gpu-day OUT=folder`: everything a GPU lent for ten
# minutes should give, in one command and one tarball.
#
#   1. the steps of make check-gpu (driver against nvcc, packages -- from
#      bundle/ when there is one --, build, CUDA kernels against the CPU
#      references, every experiment with --quick, compute-sanitizer)
#   2. the full sweeps of every experiment into results/reference/<gpu>/
#      (what make reference does) and their summary
#   3. one tarball in OUT of results/, plots/ and every log (logs/), its
#      path, and the summary table (step, pass/FAIL/skip, seconds, note),
#      also written to OUT/gpu-day-summary.txt
# A failed step does not stop the later ones that can still run.
#
# Time: at most GPU_DAY_BUDGET_S (default 600 s: ten minutes on an
# H100/H200-class GPU). The check steps get CHECK_GPU_BUDGET_S (300 s) of
# it, with their own caps (see tests/check-gpu.sh); each sweep stops at
# CAP_EXP_FULL_S (default 45 s), or CAP_EXP_NN_S for experiment NN;
# PACK_RESERVE_S (30 s) is kept for the summary and the tarball. A step
# with too little time left is skipped.
#
# What runs: GPU_DAY_EXPS, the experiments' numbers in the order their
# sweeps run (default all, in order: put first what matters most when
# time runs short); GPU_DAY_MODE full (default: make reference's sweeps)
# or lab (the lab stop rule: on an H200 the full sweeps plan minutes for
# exp-01 alone, and every full run measures the ceilings afresh, where a
# lab run reuses them); GPU_DAY_QUICK=0
# leaves the --quick runs out of the checks (a second lease, once they
# passed on a first).
#
# Environment: OUT (required), MAKE, NVCC; ROOFLAB_GIT_COMMIT, the commit
# a copy of the tree without .git came from (the CSVs record it);
# RL_STEPS_BACKEND=cpu runs the experiments on the CPU, only for a dry run
# of this script's flow without a GPU (PATH=tests/fake:$PATH, see
# tests/fake/). Exit codes: 0 every step passed, 1 a step failed (the
# tarball is still written), 2 bad usage, 77 no GPU (at once, nothing
# written).
set -uo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
# shellcheck source=tests/gpu-lib.sh
. tests/gpu-lib.sh
SCRIPT_NAME=gpu-day
GPU_DAY_BUDGET_S=${GPU_DAY_BUDGET_S:-600}
CHECK_GPU_BUDGET_S=${CHECK_GPU_BUDGET_S:-300}
CAP_EXP_FULL_S=${CAP_EXP_FULL_S:-45}
GPU_DAY_EXPS=${GPU_DAY_EXPS:-}
GPU_DAY_MODE=${GPU_DAY_MODE:-full}
export GPU_DAY_QUICK=${GPU_DAY_QUICK:-1}
CAP_SUMMARY_S=${CAP_SUMMARY_S:-20}
PACK_RESERVE_S=${PACK_RESERVE_S:-30}
OUT=${OUT:-}
[ -n "$OUT" ] || { echo "usage: make gpu-day OUT=folder (where the tarball goes)" >&2; exit 2; }
case $GPU_DAY_MODE in
full) mode_flag=--full ;;
lab) mode_flag="" ;;
*) echo "gpu-day: GPU_DAY_MODE is full or lab, not '$GPU_DAY_MODE'" >&2; exit 2 ;;
esac
for n in $GPU_DAY_EXPS; do
    [[ $n =~ ^[0-9][0-9]$ ]] || { echo "gpu-day: GPU_DAY_EXPS lists two-digit numbers (04 03), not '$n'" >&2; exit 2; }
done

gpu_gate gpu-day
mkdir -p "$OUT" || { echo "gpu-day: cannot create $OUT" >&2; exit 2; }
DAY_T0=$SECONDS
stamp=$(date -u +%Y%m%dT%H%M%SZ)
logs=build/sm$SM/gpu-day-$stamp
mkdir -p "$logs"
echo "gpu-day: $GPU_NAME (compute capability $GPU_CAP), driver $DRIVER (CUDA ${DRIVER_CUDA:-?});" \
     "budget ${GPU_DAY_BUDGET_S} s; logs in $logs/"

# What the machine is, for whoever reads the results later.
{
    echo "== date"; date -u
    echo "== git"; git describe --always --dirty 2>&1; git status --short 2>&1 | head -n 50
    echo "ROOFLAB_GIT_COMMIT=${ROOFLAB_GIT_COMMIT:-}"
    echo "== uname"; uname -a
    echo "== os-release"; cat /etc/os-release 2>&1
    echo "== nvcc"; "${NVCC:-nvcc}" --version 2>&1
    echo "== nvidia-smi"; nvidia-smi 2>&1
    echo "== nvidia-smi -q"; nvidia-smi -q 2>&1
    echo "== cpu"; lscpu 2>&1 | head -n 20
} >"$logs/system.txt" 2>&1

# 1. the checks, within their own budget.
budget_start "$CHECK_GPU_BUDGET_S"
check_steps "$logs/check-gpu"

# 2. the reference sweeps, within what is left of the day but the packing.
budget_start $((GPU_DAY_BUDGET_S - (SECONDS - DAY_T0) - PACK_RESERVE_S))
slug=""
if [ -n "$fatal" ]; then
    row "reference sweeps" skip "" "not run: $fatal"
else
    slug=$("$B/exp-01" --print-label --backend "$RL_STEPS_BACKEND" 2>"$logs/label.log")
    if [ -z "$slug" ]; then
        row "reference sweeps" FAIL "" "no label for the GPU: $(head -n1 "$logs/label.log")"
        failed=1
    fi
fi
if [ -n "$slug" ]; then
    mkdir -p "$logs/reference"
    exps=$GPU_DAY_EXPS
    if [ -z "$exps" ]; then
        for bin in "$B"/exp-[0-9][0-9]; do exps="$exps ${bin##*/exp-}"; done
    fi
    for n in $exps; do
        bin=$B/exp-$n exp=exp-$n
        cap_var=CAP_EXP_${n}_S
        [ -x "$bin" ] || { row "$exp $GPU_DAY_MODE sweep" FAIL "" "no $bin"; failed=1; continue; }
        # shellcheck disable=SC2086
        step "$exp $GPU_DAY_MODE sweep (reference/$slug)" "${!cap_var:-$CAP_EXP_FULL_S}" \
            "$logs/reference/$exp.log" "$bin" $mode_flag --backend "$RL_STEPS_BACKEND" \
            --label "reference/$slug" --reference none || continue
        note=$(charts_note "$logs/reference/$exp.log") && rerow pass "$note"
    done
    step "summary of reference/$slug" "$CAP_SUMMARY_S" "$logs/reference/summary.log" \
        "$B/rooflab" summary --label "reference/$slug"
fi

# 3. the tarball, written beside and renamed when complete; the table in
# it lacks only its own row.
title="gpu-day summary: $GPU_NAME"
print_summary "$title" >"$logs/summary.txt"
name=rooflab-gpu-day-${slug:-sm$SM}-$stamp.tar.gz
t0=$SECONDS
stage=$(mktemp -d "build/sm$SM/.pack.XXXXXX")
ln -s "$(pwd)/$logs" "$stage/logs"
if tar -czhf "$OUT/.$name.tmp" results plots -C "$stage" logs && mv "$OUT/.$name.tmp" "$OUT/$name"; then
    row "pack $name" pass $((SECONDS - t0)) "results/, plots/, logs/"
else
    rm -f "$OUT/.$name.tmp"
    row "pack $name" FAIL $((SECONDS - t0)) "tar failed"
    failed=1
fi
rm -rf "$stage"
{
    print_summary "$title ($((SECONDS - DAY_T0)) s of ${GPU_DAY_BUDGET_S} s)"
    echo
    echo "gpu-day: $([ $failed -eq 0 ] && echo "every step passed" || echo "some steps FAILED")"
    [ -f "$OUT/$name" ] && echo "gpu-day: tarball $OUT/$name ($(du -h "$OUT/$name" | cut -f1))"
} | tee "$OUT/gpu-day-summary.txt"
exit $failed

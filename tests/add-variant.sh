#!/usr/bin/env bash
# tests/add-variant.sh -- the README's "Adding a kernel variant", done by a
# script in a scratch copy of the tree: one function in kernels/cpu/fusion.c,
# a CUDA launcher in kernels/fusion.cu, their declarations in
# kernels/fusion.h, one row in kernels/fusion.c (.cuda = CUDA_ONLY(...));
# then experiment 05 built without nvcc (CPU backend, quick) must validate
# it, time it, write its rows and draw it on the speedup chart, with
# nothing else edited. Then the student's comparison: a second run,
# without the new variant, and `make compare` of the two must name it in
# the ratio table (its row, "-" for the run without it) and on the
# overlaid chart. Where nvcc exists, the same tree built with CUDA (one
# SM: ADD_VARIANT_SM, default 75) must link the launcher into exp-05; where
# a GPU answers too, a quick CUDA run must validate and time it.
#
# usage: tests/add-variant.sh [SCRATCH]   (default: a temporary folder, removed)
# Exit 0 when every check passes, 1 with the failing check otherwise.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
scratch=${1:-}
if [ -z "$scratch" ]; then
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/rooflab-add-variant.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
fi
fail() { echo "add-variant: FAILED: $*" >&2; exit 1; }

tree=$scratch/tree
mkdir -p "$tree"
cp -a "$src"/{Makefile,harness,kernels,experiments,plots} "$tree"/
mkdir -p "$tree/results" && cp -a "$src/results/published" "$tree/results/"   # the charts' published numbers
mkdir -p "$tree/tests"    # the Makefile globs tests/*.c; experiments need none of them

# 1. The function (what a student writes): a fused pair, one element at a time.
cat >>"$tree/kernels/cpu/fusion.c" <<'EOF'

void fusion_fused_scalar_cpu(const fusion_args *a)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < a->n; i++) {
        float x = a->in[i];
        for (int j = 0; j < a->k; j++)
            x = fusion_apply(x, a->op);
        a->out[i] = x;
    }
}
EOF
# ... the GPU's: one element per thread (compiled only where nvcc is) ...
cat >>"$tree/kernels/fusion.cu" <<'EOF'

template <fusion_op OP>
__global__ void chain_scalar(float *__restrict__ out, const float *__restrict__ in, size_t n, int k)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        for (int j = 0; j < k; j++)
            x = op<OP>(x);
        out[i] = x;
    }
}

extern "C" void fusion_fused_scalar_cuda(const fusion_args *a)
{
    unsigned grid = blocks_for(a->n);
    if (a->op == FUSION_COS)
        chain_scalar<FUSION_COS><<<grid, BLOCK, 0, a->stream>>>(a->out, a->in, a->n, a->k);
    else
        chain_scalar<FUSION_AFFINE><<<grid, BLOCK, 0, a->stream>>>(a->out, a->in, a->n, a->k);
    RL_CUDA_CHECK_LAUNCH();
}
EOF
# ... their declarations ...
sed -i 's|^void fusion_fused_cpu(const fusion_args \*a);|&\nvoid fusion_fused_scalar_cpu(const fusion_args *a);\nvoid fusion_fused_scalar_cuda(const fusion_args *a);|' \
    "$tree/kernels/fusion.h"
grep -q fusion_fused_scalar_cuda "$tree/kernels/fusion.h" || fail "no place for the declarations in kernels/fusion.h"
# ... and its row, the last before the table's end: CUDA_ONLY() names the
# launcher where the build has CUDA and is NULL where it has not.
row='    {.number = 10, .name = "pair_fused_scalar", .k = 2, .fused = true,\n     .what = "as pair_fused, one element at a time (added by tests/add-variant.sh)",\n     .cpu = fusion_fused_scalar_cpu, .cuda = CUDA_ONLY(fusion_fused_scalar_cuda),\n     .bytes = fusion_bytes_one_pass},'
awk -v row="$row" 'BEGIN {gsub(/\\n/, "\n", row)} /^const fusion_variant fusion_variants\[\]/ {t = 1}
     t && /^    \{0\},$/ {print row; t = 0} {print}' "$src/kernels/fusion.c" >"$tree/kernels/fusion.c"
grep -q pair_fused_scalar "$tree/kernels/fusion.c" || fail "the row was not added to kernels/fusion.c"

# 2. Build experiment 05 alone, without nvcc (the scratch copy's own build):
# the row must compile where the .cu is not built.
echo "add-variant: building exp-05 in $tree, without CUDA" >&2
make -C "$tree" --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" NVCC= B=build build/exp-05 \
    >"$scratch/build.log" 2>&1 || { tail -20 "$scratch/build.log"; fail "the scratch build"; }

# 3. --list shows it; a quick run validates, times, writes and draws it. The
# runs write into the tree's results/ and plots/, where make compare reads
# and draws; one op keeps them short.
"$tree/build/exp-05" --list --backend cpu | grep -q pair_fused_scalar || fail "--list does not show the new row"
ceilings=()
[ -f "$src/tests/fixtures/ceilings-cpu.csv" ] && ceilings=(--ceilings "$src/tests/fixtures/ceilings-cpu.csv")
run=(--quick --backend cpu --max-bytes 64Mi --op affine --out "$tree/results" --plots "$tree/plots" "${ceilings[@]}")
"$tree/build/exp-05" "${run[@]}" --label add --variant one_op,pair_unfused,pair_fused,pair_fused_scalar \
    >"$scratch/run.log" 2>&1 || { tail -30 "$scratch/run.log"; fail "the run"; }
csv=$tree/results/add/exp-05.csv
[ -f "$csv" ] || fail "no CSV at $csv"
# complete_rows ROOFLAB CSV COLUMN...: whether CSV has rows of
# pair_fused_scalar and every one is validated with each COLUMN set, read
# through rooflab query (the harness's reader of its CSVs), never awk.
complete_rows() {
    local tool=$1 file=$2 all complete where=()
    shift 2
    for c in "$@"; do where+=(--where "$c!="); done
    all=$("$tool" query "$file" columns variant --where variant=pair_fused_scalar | wc -l) || return 1
    complete=$("$tool" query "$file" columns variant --where variant=pair_fused_scalar \
        --where validated=yes "${where[@]}" | wc -l) || return 1
    [ "$all" -gt 0 ] && [ "$complete" -eq "$all" ]
}
complete_rows "$tree/build/rooflab" "$csv" time_us_median speedup_vs_unfused ||
    fail "the CSV lacks validated, timed rows of pair_fused_scalar with a speedup"
have_gnuplot=$(command -v gnuplot >/dev/null && echo yes || echo no)
if [ "$have_gnuplot" = yes ]; then
    grep -l pair_fused_scalar "$tree"/plots/add/exp-05*.svg >/dev/null 2>&1 ||
        fail "no chart of plots/add/ names pair_fused_scalar"
    echo "add-variant: pair_fused_scalar was validated, timed, written and drawn"
else
    echo "add-variant: pair_fused_scalar was validated, timed and written (no gnuplot: the chart was not checked)"
fi

# 4. The student's comparison: a run without the new variant under a second
# label, the base, and make compare of the two. The ratio table (as data:
# RATIOS_FILE, compare's --ratios-file) lists the new variant's rows (keys
# op, variant, k, n; no time for the base, the new run's time, no ratio),
# and the overlaid chart names it for the run that has it only.
"$tree/build/exp-05" "${run[@]}" --label before --variant one_op,pair_unfused,pair_fused \
    >"$scratch/before.log" 2>&1 || { tail -30 "$scratch/before.log"; fail "the run without the variant"; }
ratios=$scratch/ratios.csv
make -C "$tree" --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" NVCC= B=build compare EXP=05 RUNS="before add" \
    RATIOS_FILE="$ratios" >"$scratch/compare.log" 2>&1 || { tail -30 "$scratch/compare.log"; fail "make compare"; }
# the table as data (--ratios-file), read through rooflab query, not the printed table
[ "$("$tree/build/rooflab" query "$ratios" meta base)" = before ] ||
    fail "the ratio table does not name its base run: $ratios"
# its rows: the new run's time, none for the base, so no ratio
new_times=$("$tree/build/rooflab" query "$ratios" columns run_value --where variant=pair_fused_scalar \
    --where run=add --where base_value= --where ratio=) || fail "cannot read $ratios"
awk '$1 + 0 > 0 { n++ } END { exit !n }' <<<"$new_times" ||
    { cat "$scratch/compare.log"; fail "the ratio table has no row of pair_fused_scalar, none for the base: $ratios"; }
if [ "$have_gnuplot" = yes ]; then
    chart=$tree/plots/compare/before--add/exp-05.svg
    grep -q 'add: affine, pair_fused_scalar' "$chart" ||
        fail "the overlaid chart $chart does not name pair_fused_scalar for the run add"
    ! grep -q 'before: affine, pair_fused_scalar' "$chart" ||
        fail "the overlaid chart names pair_fused_scalar for the run without it"
    echo "add-variant: make compare lists pair_fused_scalar in its ratio table and draws it on the overlay"
else
    echo "add-variant: make compare lists pair_fused_scalar in its ratio table (no gnuplot: the overlay was not checked)"
fi

# 5. The CUDA half, where nvcc exists: the same tree built with CUDA for
# one SM (every .cu of the kernels' library: minutes), the launcher linked
# into exp-05's table; run where a GPU answers.
nvcc=$(command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
if [ -z "$nvcc" ]; then
    echo "add-variant: no nvcc: the CUDA half (fusion_fused_scalar_cuda) was not built"
    exit 0
fi
sm=${ADD_VARIANT_SM:-75}
echo "add-variant: building exp-05 in $tree with CUDA (SMS=$sm)" >&2
make -C "$tree" --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" NVCC="$nvcc" SMS="$sm" B=build-cuda \
    build-cuda/exp-05 >"$scratch/build-cuda.log" 2>&1 || { tail -20 "$scratch/build-cuda.log"; fail "the scratch build with CUDA"; }
# awk reads all of nm's output (grep -q would stop early: SIGPIPE, and pipefail).
nm --defined-only "$tree/build-cuda/exp-05" | awk '$3 == "fusion_fused_scalar_cuda" {n++} END {exit !n}' ||
    fail "exp-05 built with CUDA does not hold fusion_fused_scalar_cuda"
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "add-variant: fusion_fused_scalar_cuda was built and linked with CUDA (no GPU here: not run)"
    exit 0
fi
"$tree/build-cuda/exp-05" --quick --backend cuda --op affine --out "$tree/results" --plots "$tree/plots" \
    --no-plot --label add-cuda --variant pair_unfused,pair_fused_scalar >"$scratch/run-cuda.log" 2>&1 ||
    { tail -30 "$scratch/run-cuda.log"; fail "the CUDA run"; }
complete_rows "$tree/build-cuda/rooflab" "$tree/results/add-cuda/exp-05.csv" time_us_median ||
    fail "the CUDA run's CSV lacks validated, timed rows of pair_fused_scalar"
echo "add-variant: fusion_fused_scalar_cuda was built, validated and timed on the GPU"

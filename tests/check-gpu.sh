#!/usr/bin/env bash
# check-gpu.sh -- `make check-gpu`, for whoever has a GPU for a few minutes.
#
# In this order, each step timed and capped (tests/gpu-lib.sh):
#   1. the driver against nvcc: build/smNN/cuda-probe says, before any
#      compiling, whether the driver can run a build of this nvcc (and why
#      not: driver too old, fabric manager, module mismatch, MIG, busy GPU)
#   2. the packages: harness/ops/deps.sh, from bundle/ when there is one
#   3. the build for the GPU present (its own SM only, on every core)
#   4. every CUDA kernel against its CPU reference (the cuda_ suites)
#   5. the CUDA suites under compute-sanitizer memcheck, where it works
#   6. every experiment with --quick --backend cuda, in lab order (what
#      never ran on a GPU first: tests/gpu-order.sh, as make gpu-day)
# then one summary table (step, result, seconds, note) and each
# experiment's verdicts. A failed step does not stop the later ones that
# can still run; the driver, packages and build steps are what they need.
# Without Criterion (not in bundle/ either) the experiments still build
# and run; steps 4 and 5 skip and say so. A run stopped at its cap keeps
# the points it measured: a CSV marked partial, and its row says so.
#
# Time: at most CHECK_GPU_BUDGET_S (default: five minutes, sized for an
# H100/H200-class GPU) for the whole; each step stops at its cap,
# CAP_PROBE_S=30 CAP_DEPS_S=120 CAP_BUILD_S=150 CAP_CUDA_TESTS_S=60
# CAP_EXP_QUICK_S=45 (each experiment) SANITIZER_S=60, cut to what is left
# of the budget.
#
# Environment: MAKE, NVCC, B (the build folder; default build/smNN), LABEL
# (the quick runs' label; default the GPU's slug), GPU_DAY_EXPS and
# GPU_DAY_FIRST (the order: tests/gpu-order.sh); RL_STEPS_BACKEND=cpu
# runs the experiments on the CPU, only for a dry run of this script's
# flow without a GPU (see tests/fake/): the GPU steps then skip and the
# build is CPU-only (tests/gpu-lib.sh).
# Exit codes: 0 every step passed, 1 a step failed, 77 no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
# shellcheck source=tests/gpu-lib.sh
. tests/gpu-lib.sh
SCRIPT_NAME=check-gpu
LABEL=${LABEL:-}
CHECK_GPU_BUDGET_S=${CHECK_GPU_BUDGET_S:-300}

gpu_gate check-gpu
budget_start "$CHECK_GPU_BUDGET_S"
echo "check-gpu: $GPU_NAME (compute capability $GPU_CAP), driver $DRIVER (CUDA ${DRIVER_CUDA:-?});" \
     "building for sm_$SM into $B/; budget ${CHECK_GPU_BUDGET_S} s"
compute_order
check_steps "$B/check-logs"

print_summary "check-gpu summary: $GPU_NAME ($((SECONDS - BUDGET_T0)) s of ${CHECK_GPU_BUDGET_S} s)"
for log in "$B"/check-logs/exp-[0-9][0-9].log; do
    [ -f "$log" ] || continue
    echo
    echo "== $(basename "$log" .log) verdicts =="
    sed -n '/^verdicts (/,/^wrote/p' "$log"
done
exit $failed

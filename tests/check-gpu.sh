#!/usr/bin/env bash
# check-gpu.sh -- `make check-gpu`, for whoever has a GPU for a few minutes.
#
# Builds for the GPU that is present (its own SM only, so the build is
# fast), validates every CUDA kernel against its CPU reference, runs the
# CUDA suites under compute-sanitizer where it works, runs every experiment
# with --quick on the GPU, and prints one summary table.
#
# Exit codes: 0 every step passed, 1 a step failed, 77 there is no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
LABEL=${LABEL:-}
NO_GPU=77

if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "check-gpu: no GPU here (nvidia-smi is not installed): nothing to check"
    exit $NO_GPU
fi
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
if [ -z "$cap" ] || [ -z "$gpu" ]; then
    echo "check-gpu: no GPU here (nvidia-smi lists no device): nothing to check"
    exit $NO_GPU
fi
sm=${cap/./}
B=build/sm$sm
log_dir=$B/check-logs
mkdir -p "$log_dir"
echo "check-gpu: $gpu (compute capability $cap); building for sm_$sm into $B/"

rows=()
failed=0
# step NAME LOG COMMAND...: runs, times, records a row; prints the log's tail on failure.
step() {
    local name=$1 log=$2
    shift 2
    local t0=$SECONDS status
    echo "check-gpu: $name"
    "$@" >"$log" 2>&1
    status=$?
    local secs=$((SECONDS - t0)) result=pass note=""
    if [ $status -ne 0 ]; then
        result=FAIL
        failed=1
        note="exit $status, see $log"
        tail -n 25 "$log" | sed 's/^/    | /'
    fi
    rows+=("$(printf '%-42s %-5s %6ss  %s' "$name" "$result" "$secs" "$note")")
    return $status
}

# On every core: a serial build is about a minute of the GPU's time.
jobs=$(nproc 2>/dev/null || echo 4)
if ! step "build (SMS=$sm)" "$log_dir/build.log" \
    "$MAKE" --no-print-directory -j"$jobs" B="$B" SMS="$sm" build-tests; then
    printf '%s\n' "${rows[@]}"
    exit 1
fi

# The CUDA suites must run, not skip: on a GPU machine a skip is a failure.
# --verbose also prints "[SKIP] suite::test: Test is disabled" for every
# test the filter leaves out, so only the cuda_ suites' own lines count.
# One test at a time: Criterion runs one process per core by default, and
# cuda_busy's duty-cycle test times 5 ms bursts from events, which other
# processes time-slicing the GPU would stretch.
cuda_tests() {
    "$B/tests/rooflab-tests" --verbose --jobs 1 --filter='cuda_*/*' || return 1
}
if step "CUDA kernels vs CPU references" "$log_dir/cuda-tests.log" cuda_tests; then
    skipped=$(grep -m1 -E '^\[SKIP\] cuda_' "$log_dir/cuda-tests.log")
    ran=$(grep -c -E '^\[RUN \] cuda_' "$log_dir/cuda-tests.log")
    why=""
    [ "$ran" -eq 0 ] && why="no cuda_ test ran"
    [ -n "$skipped" ] && why="skipped on a GPU machine: $skipped"
    if [ -n "$why" ]; then
        rows[-1]="$(printf '%-42s %-5s %6s   %s' "CUDA kernels vs CPU references" FAIL "" "$why")"
        failed=1
    fi
fi

for bin in "$B"/exp-[0-9][0-9]; do
    exp=$(basename "$bin")
    step "$exp --quick --backend cuda" "$log_dir/$exp.log" \
        "$bin" --quick --backend cuda ${LABEL:+--label "$LABEL"}
done

# Last, so that a slow sanitizer cannot crowd out the experiments: every
# CUDA suite but the one timing test (cuda_busy's duty cycle is read from
# event timestamps around 5 ms bursts, and the sanitizer's work around each
# launch lands inside them; the same kernels run in the other tests). It
# gets SANITIZER_S seconds; running out is reported, not failed.
SANITIZER_S=${SANITIZER_S:-120}
if command -v compute-sanitizer >/dev/null 2>&1; then
    sanitize() {
        timeout "$SANITIZER_S" compute-sanitizer --tool memcheck --target-processes all \
            --error-exitcode 1 "$B/tests/rooflab-tests" --jobs 1 --filter='cuda_*/!(duty_*)'
        local rc=$?
        [ $rc -eq 124 ] && { echo "check-gpu: memcheck ran past ${SANITIZER_S} s, stopped"; return 0; }
        return $rc
    }
    step "compute-sanitizer memcheck (CUDA suites)" "$log_dir/sanitizer.log" sanitize
    grep -q "ran past" "$log_dir/sanitizer.log" &&
        rows[-1]="$(printf '%-42s %-5s %6s   %s' "compute-sanitizer memcheck" stop "" \
            "ran past ${SANITIZER_S} s (SANITIZER_S=... for more); nothing found before that")"
else
    rows+=("$(printf '%-42s %-5s %6s   %s' "compute-sanitizer memcheck" skip "" "not installed")")
fi

echo
echo "check-gpu summary: $gpu"
printf '%-42s %-5s %7s  %s\n' step result time note
printf '%s\n' "${rows[@]}"
for bin in "$B"/exp-[0-9][0-9]; do
    echo
    echo "== $(basename "$bin") verdicts =="
    sed -n '/^verdicts (/,/^wrote/p' "$log_dir/$(basename "$bin").log"
done
exit $failed

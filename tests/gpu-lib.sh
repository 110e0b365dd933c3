# gpu-lib.sh -- what check-gpu.sh and gpu-day.sh share: the GPU gate, the
# time budget, timed and capped steps with a summary table, and the steps
# of make check-gpu. Sourced, not run; the caller has cd'ed to the root.
#
# Time: every step runs under a cap (timeout) and the whole under a budget
# (BUDGET_S, from budget_start): a step's cap is cut to what is left of
# the budget, and a step with less than MIN_STEP_S left is skipped and
# says so. So the budget bounds the run, whatever hangs. The small calls
# around the steps (nvidia-smi, git, tar) run under a cap too (capped).
#
# Dry run: RL_STEPS_BACKEND=cpu runs the experiments on the CPU, to try
# these scripts' flow on a machine without a GPU (PATH=tests/fake:$PATH
# for a stand-in nvidia-smi). The steps that need a GPU (the driver probe,
# the CUDA suites, compute-sanitizer) are then skip rows, and the build is
# the CPU backend alone (NVCC=), of the binaries only: nvcc's fat binary
# and the test binary are minutes of a small machine's time for steps
# that would skip anyway.
#
# The build folder is B when set (make gpu-day B=dir passes it), else
# build/smNN: the GPU's architecture alone, apart from a build/ for every
# SMS. Without Criterion (libcriterion-dev, not in bundle/ either: deps.sh
# exits 3) only the test binary is not built: the CUDA suites and the
# sanitizer are skip rows that say so, and the experiments build and run.
#
# A run its cap stops keeps what it measured: timeout's TERM asks the
# experiment to stop at its next point, and it writes the CSV of the
# points measured, marked partial (its --outcome-file says so as data;
# KILL comes KILL_AFTER_S later). Its row says so.

# CUDA device 0 is then the GPU nvidia-smi lists first (by PCI bus), not
# the one CUDA would call fastest.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

MAKE=${MAKE:-make}
export MAKE # the steps run in child shells
MIN_STEP_S=${MIN_STEP_S:-10}
KILL_AFTER_S=5 # after its cap, a step gets TERM, then KILL this much later

# Per-step caps of the check-gpu steps, in seconds (each cut to the budget).
CAP_PROBE_S=${CAP_PROBE_S:-30}
CAP_DEPS_S=${CAP_DEPS_S:-120}
CAP_BUILD_S=${CAP_BUILD_S:-150}
CAP_CUDA_TESTS_S=${CAP_CUDA_TESTS_S:-60}
CAP_EXP_QUICK_S=${CAP_EXP_QUICK_S:-45} # above exp-01 --quick's time on an H200 (its README)
# Each quick run's --budget in seconds; empty: none (make check-gpu's default).
QUICK_BUDGET_S=${QUICK_BUDGET_S:-}
CAP_SMI_S=${CAP_SMI_S:-20} # each nvidia-smi call: a wedged driver can hang it
SANITIZER_S=${SANITIZER_S:-60}

# The experiments' backend: cuda. cpu only for a dry run of these scripts
# on a machine without a GPU (with the stand-ins of tests/fake/).
RL_STEPS_BACKEND=${RL_STEPS_BACKEND:-cuda}
dry_run() { [ "$RL_STEPS_BACKEND" = cpu ]; }

# capped SECONDS COMMAND...: COMMAND under timeout, for the calls that are
# not steps of their own (nvidia-smi, git, tar): none of them may hang the
# lease.
capped() {
    local cap=$1
    shift
    timeout --kill-after="$KILL_AFTER_S" "$cap" "$@"
}

rows=()
failed=0
fatal=""

# gpu_gate NAME: one line and exit 77 when no GPU is listed; else sets
# GPU_NAME, GPU_CAP (9.0), SM (90), DRIVER, DRIVER_CUDA (nvidia-smi's).
gpu_gate() {
    if ! command -v nvidia-smi >/dev/null 2>&1; then
        echo "$1: no GPU here (nvidia-smi is not installed): nothing to do"
        exit 77
    fi
    GPU_CAP=$(capped "$CAP_SMI_S" nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')
    GPU_NAME=$(capped "$CAP_SMI_S" nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
    if [ -z "$GPU_CAP" ] || [ -z "$GPU_NAME" ]; then
        echo "$1: no GPU here (nvidia-smi lists no device): nothing to do"
        exit 77
    fi
    SM=${GPU_CAP/./}
    B=${B:-build/sm$SM}
    export B
    DRIVER=$(capped "$CAP_SMI_S" nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
    DRIVER_CUDA=$(capped "$CAP_SMI_S" nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n1)
}

# NVCC (the make variable, else PATH, else /usr/local/cuda) and its version.
find_nvcc() {
    [ -n "${NVCC:-}" ] || NVCC=$(command -v nvcc 2>/dev/null || true)
    [ -n "$NVCC" ] || { [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc; }
    NVCC_VERSION=""
    [ -n "$NVCC" ] && NVCC_VERSION=$("$NVCC" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
    export NVCC
}

# compute-sanitizer on PATH, beside nvcc, or in the toolkit's own folder.
find_sanitizer() {
    local d
    command -v compute-sanitizer 2>/dev/null && return 0
    d=$(dirname "$(readlink -f "$NVCC")")
    for c in "$d/compute-sanitizer" "$d/../compute-sanitizer/compute-sanitizer"; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

budget_start() { BUDGET_S=$1; BUDGET_T0=$SECONDS; }
time_left() { echo $((BUDGET_S - (SECONDS - BUDGET_T0))); }

# row NAME RESULT SECONDS NOTE: one line of the summary table (the note's
# first line, cut to 160 characters: the logs have the rest).
row() {
    local note=${4%%$'\n'*}
    [ ${#note} -gt 160 ] && note="${note:0:157}..."
    rows+=("$(printf '%-44s %-5s %6s  %s' "$1" "$2" "$3" "$note")")
}
# rerow RESULT NOTE: rewrites the last step's row, keeping its name and time.
rerow() {
    unset 'rows[-1]'
    row "$last_step" "$1" "$last_secs" "$2"
}

# An experiment's step passes --outcome-file "$(outcome_of LOG)": how the
# run ended, as key=value lines (harness/outcome.c), which the notes below
# read instead of the sentences its log prints for people.
outcome_of() { printf '%s\n' "${1%.log}.outcome"; }
# outcome_value LOG KEY: one key of LOG's outcome file ("" when absent).
outcome_value() { sed -n "s/^$2=//p" "$(outcome_of "$1")" 2>/dev/null | head -n 1; }

# The note of a run its cap stopped, from its outcome file: "stopped at its
# cap; partial CSV kept (N of M points)" when the experiment wrote what it
# had measured, one for a run the TERM found measured (its CSV whole, its
# charts not drawn), else the plain one (no outcome: it did not end on its
# own, or is no experiment).
capped_note() { # CAP LOG
    local written
    written=$(outcome_value "$2" csv_written)
    if [ "$written" = yes ] && [ "$(outcome_value "$2" partial)" = yes ]; then
        echo "stopped at its ${1} s cap; partial CSV kept ($(outcome_value "$2" points_done) of" \
            "$(outcome_value "$2" points_total) points); see $2"
    elif [ "$written" = yes ]; then
        echo "stopped at its ${1} s cap once measured: CSV whole, charts not drawn; see $2"
    else
        echo "ran past its ${1} s cap, stopped; see $2"
    fi
}

# step NAME CAP LOG COMMAND...: runs the command (a program, or a function
# exported with export -f) under min(CAP, what is left), logs its output,
# records a row. A failure prints the log's tail and marks the run failed;
# it does not stop the caller, which decides what can still run.
step() {
    local name=$1 cap=$2 log=$3
    shift 3
    last_step=$name last_secs=""
    local left
    left=$(($(time_left) - KILL_AFTER_S))
    if [ "$left" -lt "$MIN_STEP_S" ]; then
        row "$name" skip "" "no time left in the ${BUDGET_S} s budget"
        return 125
    fi
    [ "$cap" -gt "$left" ] && cap=$left
    echo "${SCRIPT_NAME:-gpu}: $name (cap ${cap} s)"
    rm -f "$(outcome_of "$log")" # an older run's: only this run's outcome counts
    local t0=$SECONDS status shell=()
    # A function runs in a bash of its own; a program is timeout's own
    # child, so that its TERM reaches the program and timeout waits for it
    # (a bash between them would die at once, and timeout with it, leaving
    # the program writing its partial CSV beside the next step).
    declare -F "$1" >/dev/null && shell=(bash -c '"$@"' step)
    timeout --kill-after="$KILL_AFTER_S" "$cap" "${shell[@]}" "$@" >"$log" 2>&1
    status=$?
    local secs=$((SECONDS - t0)) result=pass note=""
    if [ $status -eq 124 ] || [ $status -eq 137 ]; then
        result=FAIL note=$(capped_note "$cap" "$log")
    elif [ $status -ne 0 ]; then
        result=FAIL note="exit $status, see $log"
    fi
    if [ "$result" = FAIL ]; then
        failed=1
        tail -n 25 "$log" | sed 's/^/    | /'
    fi
    echo "${SCRIPT_NAME:-gpu}:   $result in ${secs} s"
    last_secs=$secs
    row "$name" "$result" "$secs" "$note"
    return $status
}

# skip_rest NAME...: rows for steps that cannot run after a fatal failure.
skip_rest() {
    local n
    for n in "$@"; do row "$n" skip "" "not run: $fatal"; done
}

print_summary() { # TITLE
    echo
    echo "$1"
    printf '%-44s %-5s %7s  %s\n' step result time note
    printf '%s\n' "${rows[@]}"
}

# ---- the steps of make check-gpu -----------------------------------------------

# A charts note for an experiment's row, when its outcome says gnuplot is
# absent: the command that draws them later.
charts_note() { # LOG
    [ "$(outcome_value "$1" charts_why)" = no_gnuplot ] &&
        echo "charts not drawn (no gnuplot): $(outcome_value "$1" redraw)"
}

# The CUDA suites must run, not skip: on a GPU machine a skip is a failure.
# --verbose also prints "[SKIP] suite::test: Test is disabled" for every
# test the filter leaves out, so only the cuda_ suites' own lines count.
# One test at a time: cuda_busy's duty-cycle test times 5 ms bursts from
# events, which other processes time-slicing the GPU would stretch.
cuda_tests() { "$B/tests/rooflab-tests" --verbose --jobs 1 --filter='cuda_*/*'; }

# Every CUDA suite but the one timing test under memcheck (the sanitizer's
# work around each launch would land inside cuda_busy's duty-cycle bursts;
# the same kernels run in the other tests). Running out of time is not a
# failure: it is reported.
sanitize() {
    "$SANITIZER" --tool memcheck --target-processes all --error-exitcode 1 \
        "$B/tests/rooflab-tests" --verbose --jobs 1 --filter='cuda_*/!(duty_*)'
}
export -f cuda_tests sanitize

# check_steps LOG_DIR: the steps of make check-gpu, in order: the probe,
# the packages, the build, the CUDA suites and the sanitizer right after
# them, then the --quick runs in lab order (order, tests/gpu-order.sh:
# what never ran on a GPU first), so that the code that has never run is
# not what a short budget cuts. Needs gpu_gate (B) and budget_start first,
# and compute_order for the order (without it, by number); sets fatal (why
# the later steps cannot run, or empty) and no_tests (why the suites
# cannot, or empty).
check_steps() {
    local logs=$1 target=build-tests what="SMS=$SM"
    no_tests=""
    mkdir -p "$logs"
    if dry_run; then
        # The CPU backend alone; no driver to probe (see the top).
        NVCC="" target=build what="CPU only: dry run"
        export NVCC
        row "driver vs nvcc (probe)" skip "" "dry run (RL_STEPS_BACKEND=cpu): no GPU to probe"
    else
        probe_step "$logs"
    fi
    [ -z "$fatal" ] && packages_step "$logs"
    # shellcheck disable=SC1091
    [ -f "$B/bundle-root/env.sh" ] && . "$B/bundle-root/env.sh"
    [ -n "$no_tests" ] && target=build
    # On every core: a serial build is minutes of the GPU's time.
    [ -z "$fatal" ] && ! step "build ($what)" "$CAP_BUILD_S" "$logs/build.log" \
        "$MAKE" --no-print-directory -j"$(nproc 2>/dev/null || echo 4)" B="$B" SMS="$SM" \
        NVCC="$NVCC" "$target" && fatal="the build failed (see $logs/build.log)"
    if [ -n "$fatal" ]; then
        skip_rest "CUDA kernels vs CPU references" "compute-sanitizer memcheck" "experiments --quick"
        return
    fi
    if [ -n "$no_tests" ]; then
        row "CUDA kernels vs CPU references" skip "" "$no_tests"
        row "compute-sanitizer memcheck (CUDA suites)" skip "" "$no_tests"
    elif dry_run; then
        row "CUDA kernels vs CPU references" skip "" "dry run (RL_STEPS_BACKEND=cpu): no GPU"
        row "compute-sanitizer memcheck (CUDA suites)" skip "" "dry run (RL_STEPS_BACKEND=cpu): no GPU"
    else
        cuda_suites "$logs"
        sanitizer_step "$logs"
    fi
    if [ "${GPU_DAY_QUICK:-1}" = 0 ]; then
        row "experiments --quick" skip "" "GPU_DAY_QUICK=0"
    else
        quick_experiments "$logs"
    fi
}

# The packages: fatal when what the experiments need is missing; without
# Criterion alone (deps.sh's exit 3) the test binary is not built, and
# no_tests says why the suites skip.
packages_step() {
    local name="packages (deps.sh test, bundle/)" status
    step "$name" "$CAP_DEPS_S" "$1/deps.log" packages
    status=$?
    if [ $status -eq 3 ]; then
        no_tests="Criterion missing (libcriterion-dev, not in bundle/): no test binary"
        rerow FAIL "Criterion missing: the CUDA suites and the sanitizer skip; the experiments build and run; see $1/deps.log"
    elif [ $status -ne 0 ]; then
        fatal="packages missing (see $1/deps.log)"
    fi
}

# The driver against nvcc, before any compiling: sets fatal when the
# driver cannot run what this nvcc builds (or there is no nvcc).
probe_step() {
    find_nvcc
    if [ -z "$NVCC" ] || [ -z "$NVCC_VERSION" ]; then
        fatal="no nvcc (install the CUDA toolkit, or make ... NVCC=/path/to/nvcc)"
        row "driver vs nvcc" FAIL "" "$fatal"
        failed=1
    elif ! step "driver vs nvcc $NVCC_VERSION (probe)" "$CAP_PROBE_S" "$1/probe.log" \
        probe_driver "$NVCC_VERSION"; then
        fatal="the driver cannot run a CUDA $NVCC_VERSION build (see $1/probe.log)"
        sed 's/^/    /' "$1/probe.log"
    fi
}

probe_driver() {
    "$MAKE" --no-print-directory -s B="$B" "$B/cuda-probe" NVCC="$NVCC" >/dev/null &&
        "$B/cuda-probe" --runtime "$1"
}

packages() { # deps.sh test's exit: 0, 3 (only Criterion missing) or 1
    harness/ops/deps.sh bundle && harness/ops/deps.sh test
}
export -f probe_driver packages

cuda_suites() {
    local log=$1/cuda-tests.log name="CUDA kernels vs CPU references"
    step "$name" "$CAP_CUDA_TESTS_S" "$log" cuda_tests || return 0
    local skipped ran
    skipped=$(grep -E '^\[SKIP\] cuda_' "$log" | grep -v 'Test is disabled' | head -n1)
    ran=$(grep -c -E '^\[RUN \] cuda_' "$log")
    if [ "$ran" -eq 0 ]; then
        rerow FAIL "no cuda_ test ran"
        failed=1
    elif [ -n "$skipped" ]; then
        rerow FAIL "skipped on a GPU machine: $skipped"
        failed=1
    fi
}

# The experiment binaries of B in lab order: order's first (those that
# exist), then the others by number.
quick_order() {
    local n bin
    for n in "${order[@]}"; do [ -x "$B/exp-$n" ] && echo "$B/exp-$n"; done
    for bin in "$B"/exp-[0-9][0-9]; do
        [ -x "$bin" ] && [[ " ${order[*]} " != *" ${bin##*/exp-} "* ]] && echo "$bin"
    done
}

# Every experiment with --quick, in lab order, with --budget QUICK_BUDGET_S
# when set (so that the smoke tests cannot eat a short lease: the cap
# stops a run, the budget plans one to end in time with its CSV written).
quick_experiments() {
    local bin exp note
    for bin in $(quick_order); do
        exp=$(basename "$bin")
        # shellcheck disable=SC2086
        step "$exp --quick --backend $RL_STEPS_BACKEND${QUICK_BUDGET_S:+ --budget $QUICK_BUDGET_S}" \
            "$CAP_EXP_QUICK_S" "$1/$exp.log" "$bin" --quick --backend "$RL_STEPS_BACKEND" \
            ${QUICK_BUDGET_S:+--budget "$QUICK_BUDGET_S"} ${LABEL:+--label "$LABEL"} \
            --outcome-file "$(outcome_of "$1/$exp.log")" || continue
        note=$(charts_note "$1/$exp.log") && rerow pass "$note"
    done
}

# The last "ERROR SUMMARY: N errors" count of a sanitizer log, or nothing
# when it has none (the sanitizer never got to check a launch).
sanitizer_errors() {
    sed -n 's/^=* *ERROR SUMMARY: *\([0-9][0-9]*\) error.*/\1/p' "$1" | tail -n 1
}

# Why a sanitizer run that checked nothing could not: a known refusal of
# a sandboxed runtime ("Device not supported", then error 999), a CUDA
# suite that skipped under it (no GPU to be had through it), or else its
# first message, or the log's last line.
sanitizer_why_not() {
    local why
    why=$(grep -m1 -E 'Device not supported|cudaErrorUnknown|error 999|unknown error' "$1")
    [ -n "$why" ] || why=$(grep -E '^\[SKIP\] cuda_' "$1" | grep -v 'Test is disabled' | head -n1)
    [ -n "$why" ] || why=$(grep -m1 -E '^=+ +[^ ]' "$1" | grep -v -E 'COMPUTE-SANITIZER|ERROR SUMMARY')
    [ -n "$why" ] || why=$(grep -v '^[[:space:]]*$' "$1" | tail -n 1)
    echo "${why:-no output}" | sed 's/^[= ]*//' | cut -c1-120
}

# memcheck's verdict is its ERROR SUMMARY: N > 0 errors fail the step, 0
# pass it (the suites' own failures are the CUDA suites step's). A run
# without that line checked nothing: the sanitizer cannot run here (some
# sandboxed GPU runtimes refuse it), a skip with the reason, not a failure
# of the code; so is a summary of 0 over CUDA suites that skipped. Running
# out of its cap is reported, not failed.
sanitizer_step() {
    local log=$1/sanitizer.log name="compute-sanitizer memcheck (CUDA suites)"
    if ! SANITIZER=$(find_sanitizer); then
        row "$name" skip "" "not installed (looked on PATH, beside nvcc, in the toolkit)"
        return
    fi
    export SANITIZER
    local before=$failed status errors skipped first
    step "$name" "$SANITIZER_S" "$log" sanitize
    status=$?
    [ $status -eq 125 ] && return # no time left: step's row says so
    errors=$(sanitizer_errors "$log")
    skipped=$(grep -E '^\[SKIP\] cuda_' "$log" | grep -v 'Test is disabled' | head -n1)
    # memcheck's reports, one per error, as they come (a run stopped at
    # its cap has them without a summary)
    first=$(grep -m1 -E '^=+ +(Invalid|Program hit|Uninitialized|Leaked|Race|Barrier|Misaligned|Out-of-range)' "$log" |
        sed 's/^[= ]*//' | cut -c1-100)
    failed=$before
    if [ -n "$errors" ] && [ "$errors" -gt 0 ]; then
        failed=1
        rerow FAIL "$errors memcheck errors: ${first:-see the log}; see $log"
    elif { [ $status -eq 124 ] || [ $status -eq 137 ]; } && [ -n "$first" ]; then
        failed=1
        rerow FAIL "memcheck errors before its cap stopped it: $first; see $log"
    elif [ $status -eq 124 ] || [ $status -eq 137 ]; then
        rerow stop "ran past its cap (SANITIZER_S=... for more); nothing found before that"
    elif [ -z "$errors" ] || [ -n "$skipped" ]; then
        rerow skip "sanitizer unsupported here: $(sanitizer_why_not "$log")"
    elif [ $status -ne 0 ]; then
        rerow pass "0 memcheck errors (the suites exited $status under it: see the CUDA suites step)"
    else
        rerow pass "0 memcheck errors"
    fi
}

# The order of the runs (compute_order): tests/gpu-order.sh, beside this file.
# shellcheck source=tests/gpu-order.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu-order.sh"

#!/usr/bin/env bash
# harness/ops/stability.sh -- make stability: one experiment run N times back
# to back, then `rooflab stability` on the runs, so that a verdict that
# flips with the minute shows before anyone believes it (issue 25).
#
#   EXP=NN      the experiment (required)
#   RUNS=N      how many runs (default 3, 2 to 16), or rounds with BUDGET (1 to 8)
#   MODE=lab    lab (the default: no --quick or --full) or quick (--quick)
#   PREFIX=p    the runs' labels are p/1 .. p/N (default stability/exp-NN);
#               the report goes to results/p/stability.md
#   BUDGET=S    each of the RUNS rounds is two runs side by side: one in
#               MODE with no budget (label p/lab-i) and one under --budget S
#               (p/budget-S-i), so that the report shows what a tight budget
#               does to each verdict: "not measured" is allowed, the opposite
#               of the unbudgeted run's verdict is flagged OPPOSITE
#   SPIN=1      keep one core busy with a plain busy loop for the whole
#               series, to see what a loaded host does to the verdicts; the
#               loop is killed at the end, also on a failure or Ctrl-C
#   BACKEND, ARGS  passed to every run, as make exp-NN does; B the build folder
#
# Every run has --reference none (no overlay of a checked-in run) and
# --no-plot (the charts are not what is compared, and drawing them costs
# time between the runs). A failed run stops the series with its exit code
# (77: no GPU, as the experiments say); the runs so far stay under
# results/p/. Exit codes: those of rooflab stability, 2 bad usage.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
exp=${EXP:-}
runs=${RUNS:-3}
mode=${MODE:-lab}
prefix=${PREFIX:-stability/exp-$exp}
backend=${BACKEND:-auto}
usage='usage: make stability EXP=NN [RUNS=3] [MODE=lab|quick] [BUDGET=S] [LABEL=prefix] [SPIN=1]'

[ -n "$exp" ] || { echo "$usage" >&2; exit 2; }
case $runs in '' | *[!0-9]*) echo "stability: RUNS must be a number, not '$runs'; $usage" >&2; exit 2 ;; esac
budget=${BUDGET:-}
case $budget in
    '') ;;
    *[!0-9]* | 0*) echo "stability: BUDGET must be a whole number of seconds, not '$budget'" >&2; exit 2 ;;
esac
# With BUDGET a round is two runs: one round is a series already.
if [ -n "$budget" ]; then
    if [ "$runs" -lt 1 ] || [ "$runs" -gt 8 ]; then echo "stability: RUNS=$runs with BUDGET: 1 to 8 rounds of two runs" >&2; exit 2; fi
elif [ "$runs" -lt 2 ] || [ "$runs" -gt 16 ]; then
    echo "stability: RUNS=$runs: 2 to 16 runs" >&2
    exit 2
fi
case $mode in
    lab) mode_flag=() ;;
    quick) mode_flag=(--quick) ;;
    *) echo "stability: MODE must be lab or quick, not '$mode'" >&2; exit 2 ;;
esac
bin=$B/exp-$exp tool=$B/rooflab
if [ ! -x "$bin" ] || [ ! -x "$tool" ]; then echo "stability: no $bin or $tool (make build B=$B)" >&2; exit 2; fi

# The spinner: a shell loop that never sleeps, one core's worth of load.
# Killed by the EXIT trap, which INT and TERM reach through their exits (a
# background job of a script ignores Ctrl-C itself, so it must be killed).
# With KILL: a TERM that reaches the child between its fork and its exec
# (a run that fails at once, on a loaded machine) meets this script's own
# TERM trap there and can be lost, and the wait below then never returns
# (the CI saw it once: the spinner ran on and the test timed out).
spin_pid=
stop_spinner() {
    if [ -n "$spin_pid" ]; then
        kill -KILL "$spin_pid" 2>/dev/null
        wait "$spin_pid" 2>/dev/null
        echo "stability: spinner (pid $spin_pid) stopped"
        spin_pid=
    fi
}
trap stop_spinner EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
if [ "${SPIN:-}" = 1 ]; then
    sh -c 'while :; do :; done' &
    spin_pid=$!
    echo "stability: SPIN=1: a busy loop (pid $spin_pid) keeps one core busy through every run"
fi

labels=()
start=$SECONDS
# One run: its label, a line to say what it is, and any extra options.
one_run() {
    local label=$1 what=$2
    shift 2
    labels+=("$label")
    echo "stability: $what of exp-$exp ($mode mode) under label $label"
    local t0=$SECONDS
    # ARGS unquoted: several options, as make exp-NN passes them.
    # shellcheck disable=SC2086
    "$bin" --backend "$backend" "${mode_flag[@]}" --reference none --no-plot --label "$label" "$@" ${ARGS:-}
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "stability: $what failed (exit $rc): series stopped; runs so far under results/$prefix/" >&2
        exit $rc
    fi
    echo "stability: $what done in $((SECONDS - t0)) s"
    echo
}
for i in $(seq 1 "$runs"); do
    if [ -n "$budget" ]; then
        one_run "$prefix/lab-$i" "round $i/$runs, no budget,"
        one_run "$prefix/budget-$budget-$i" "round $i/$runs, --budget $budget," --budget "$budget"
    else
        one_run "$prefix/$i" "run $i/$runs"
    fi
done
stop_spinner
echo "stability: ${#labels[@]} runs in $((SECONDS - start)) s"
echo
"$tool" stability --exp "$exp" --prefix "$prefix" "${labels[@]}"

#!/usr/bin/env bash
# test-slurm.sh -- `make test-slurm`: make slurm for real, on a one-node
# Slurm cluster on this machine (tests/slurm/cluster.sh starts it when
# none answers; that needs root), then checks what came back:
#
#   1. make slurm PARTITIONS=debug QUICK=1 BACKEND=cpu EXPS="05 06": both
#      tasks ran under the label cluster/<this CPU>, with their plan and
#      result lines; the label's CSVs, verdicts and summary.md are new; the
#      run's summary.txt lists both; the comparison charts against the
#      checked-in reference run of this CPU were drawn (when there is one);
#   2. the same with BACKEND=cuda and a build without CUDA: each task fails
#      with exit 77 and its reason, in its output and in the summary, and
#      the summary job still runs (afterany);
#   3. a full sweep of exp-06 with TIME_LIMIT=1 (and the roofs of
#      tests/fixtures/ceilings-cpu.csv): Slurm stops it, the task
#      had warned that its plan needs more (the numbers of the plan file
#      the run wrote, --plan-file), the summary names the limit,
#      and no CSV is left (its scratch label, test-slurm-limit/, is removed).
#
# Not part of make test: it needs root (or SLURM_CONF of a cluster with a
# partition debug) and takes a few minutes. It holds the measurement lock
# of the Criterion suites (build/tests/.measure.lock) while jobs run.
# Environment: MAKE; TEST_SLURM_TIMEOUT_S (default 1200) bounds each wait.
# Exit codes: 0 every check passed, 1 a check failed, 77 no cluster and
# not root.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
case "${1:-}" in -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
MAKE=${MAKE:-make}
TIMEOUT_S=${TEST_SLURM_TIMEOUT_S:-1200}
failures=0
t0=$SECONDS

say() { echo "test-slurm: $*"; }
check() { # DESCRIPTION COMMAND...: one line, ok or FAIL
    if "${@:2}"; then echo "  ok    $1"; else echo "  FAIL  $1"; failures=$((failures + 1)); fi
}

# ---- a cluster ----------------------------------------------------------------------
if ! sinfo -h -p debug -o %P 2>/dev/null | grep -q .; then
    if [ "$(id -u)" != 0 ]; then
        echo "test-slurm: no Slurm cluster with a partition debug answers, and starting one needs root" >&2
        exit 77
    fi
    tests/slurm/cluster.sh start || exit 1
    eval "$(tests/slurm/cluster.sh env)"
fi
say "cluster: $(sinfo -h -p debug -o '%P %D node(s) %T, gres %G' | head -n 1) (SLURM_CONF=${SLURM_CONF:-default})"

mkdir -p build/tests
exec 9>build/tests/.measure.lock
say "waiting for the measurement lock (build/tests/.measure.lock)"
flock 9
stamp=$(mktemp)

# submit LOG ARGS...: make slurm ARGS, its output shown and kept; sets run
# and jobs from the run file submit.sh writes (RL_SLURM_RUN_FILE: data),
# never from the table it prints.
submit() {
    local log=$1 runfile
    shift
    runfile=$(mktemp)
    say "make slurm $*"
    RL_SLURM_RUN_FILE=$runfile "$MAKE" --no-print-directory slurm "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    run=$(field "$runfile" run)
    jobs=$(field "$runfile" jobs)
    rm -f "$runfile"
    [ "$rc" -eq 0 ] && [ -n "$run" ] && [ -n "$jobs" ] || {
        echo "test-slurm: make slurm failed (exit $rc)" >&2
        exit 1
    }
}

# wait_for JOBS: until none is pending or running.
wait_for() {
    local start=$SECONDS
    say "waiting for jobs $1"
    while squeue -h -j "$1" -o %i 2>/dev/null | grep -q .; do
        if [ $((SECONDS - start)) -gt "$TIMEOUT_S" ]; then
            echo "test-slurm: jobs $1 still queued after ${TIMEOUT_S} s; cancelling them" >&2
            scancel "${1//,/ }"
            exit 1
        fi
        sleep 3
    done
    say "jobs $1 ended after $((SECONDS - start)) s"
}

field() { sed -n "s/^$2=//p" "$1"; } # FILE KEY: a value of a task's record
newer() { [ -s "$1" ] && [ "$1" -nt "$stamp" ]; }
has() { grep -q -e "$2" "$1" 2>/dev/null; } # FILE PATTERN

# ---- 1. two experiments that run ----------------------------------------------------
log1=$(mktemp)
submit "$log1" PARTITIONS=debug QUICK=1 BACKEND=cpu EXPS="05 06"
run1=$run jobs1=$jobs
wait_for "$jobs1"
d=results/slurm/$run1
slug=$(build/slurm-cpu/exp-05 --print-label --backend cpu)
label=cluster/$slug
say "checks of run $run1 (label $label)"
for e in 05 06; do
    check "exp-$e: its record says ok, label $label" \
        eval '[ "$(field $d/debug/exp-$e.result result)" = ok ] && [ "$(field $d/debug/exp-$e.result label)" = "$label" ]'
    check "exp-$e: its output has the plan and the result line" \
        eval 'has $d/debug/exp-$e.out "^plan  " && has $d/debug/exp-$e.out "^rooflab-slurm: result exp-$e ok"'
    check "exp-$e: results/$label/exp-$e.csv is new" newer "results/$label/exp-$e.csv"
done
check "verdicts.csv of $label has both experiments' rows" \
    eval 'has results/$label/verdicts.csv "^05-fusion,.*,cpu," && has results/$label/verdicts.csv "^06-launch-graphs,.*,cpu,"'
check "results/$label/summary.md is new and has both experiments" \
    eval 'newer results/$label/summary.md && has results/$label/summary.md "## 05-fusion" && has results/$label/summary.md "## 06-launch-graphs"'
check "$d/summary.txt: 2 of 2 tasks ran, the label's summary listed" \
    eval 'has $d/summary.txt "2 of 2 tasks ran" && has $d/summary.txt "^  $label .*summary.md: [0-9]* hold"'
check "the time limit is the table's for quick runs (10 min)" eval '[ "$(field $d/run.env LIMIT)" = 10 ]'
charts=()
if [ -f "results/reference/$slug/exp-05.csv" ]; then
    # the charts each comparison drew, as data (finish.sh: rooflab compare --charts-file)
    mapfile -t charts < <(cat "$d/compare-exp-05.charts" "$d/compare-exp-06.charts" 2>/dev/null | sed -n 's/^chart=//p')
    check "comparison charts for exp-05 and exp-06 listed" eval '[ ${#charts[@]} -ge 2 ] && has $d/summary.txt "exp-05  reference/$slug $label" && has $d/summary.txt "exp-06  reference/$slug $label"'
    for c in "${charts[@]}"; do
        check "chart $c (and .pdf, .svg) is new" eval 'newer "$c" && newer "${c%.png}.pdf" && newer "${c%.png}.svg"'
    done
else
    check "no reference run of $slug: the summary says there is nothing to compare" \
        has "$d/summary.txt" "not compared: one label"
fi

# ---- 2. tasks that fail: no GPU -----------------------------------------------------------
log2=$(mktemp)
submit "$log2" PARTITIONS=debug QUICK=1 BACKEND=cuda EXPS="05 06" NVCC=
run2=$run jobs2=$jobs
wait_for "$jobs2"
d2=results/slurm/$run2
say "checks of run $run2 (BACKEND=cuda, a build without CUDA: every task must fail, with its reason)"
for e in 05 06; do
    check "exp-$e: its record says FAIL, exit 77, with the reason" \
        eval '[ "$(field $d2/debug/exp-$e.result result)" = FAIL ] && [ "$(field $d2/debug/exp-$e.result exit)" = 77 ] && [ -n "$(field $d2/debug/exp-$e.result note)" ]'
    check "exp-$e: its output says why" has "$d2/debug/exp-$e.out" "^rooflab: exp-$e: --backend cuda, but no GPU"
    check "exp-$e: the summary has the row and the reason" has "$d2/summary.txt" "^debug  *$e .*FAIL (77) .*no GPU"
done
check "the summary job ran after the failures: 0 of 2 tasks ran, nothing compared" \
    eval 'has $d2/summary.txt "0 of 2 tasks ran" && has $d2/summary.txt "not compared: no task of it ran"'

# ---- 3. a task stopped at its time limit --------------------------------------------------
# With the fixture's roofs (it measures none), so that the run makes its
# plan within the minute: a full sweep's own ceilings can take longer than
# that where the reported LLC is large, and a run stopped before its plan
# has nothing to warn about.
log3=$(mktemp)
submit "$log3" PARTITIONS=debug BACKEND=cpu EXPS=06 TIME_LIMIT=1 PREFIX=test-slurm-limit \
    ARGS="--ceilings tests/fixtures/ceilings-cpu.csv"
run3=$run jobs3=$jobs
wait_for "$jobs3"
d3=results/slurm/$run3
say "checks of run $run3 (a full sweep of exp-06 within 1 minute: Slurm must stop it)"
check "exp-06: Slurm stopped it at the time limit" has "$d3/debug/exp-06.err" "DUE TO TIME LIMIT"
# The warning's numbers are the run's plan file's (--plan-file), not its plan line's.
low3=$(field "$d3/debug/exp-06.plan" expected_s_low) high3=$(field "$d3/debug/exp-06.plan" expected_s_high)
check "exp-06: its plan file ($d3/debug/exp-06.plan) has the plan's seconds, low <= high" \
    eval '[[ $low3 =~ ^[0-9]+$ && $high3 =~ ^[0-9]+$ ]] && [ "$low3" -gt 0 ] && [ "$low3" -le "$high3" ]'
check "exp-06: its output warned, with those seconds, that the plan needs more than 1 min" \
    has "$d3/debug/exp-06.out" "^rooflab-slurm: warning: the plan expects $low3 s to $high3 s, .*more than this job's time limit of 1 min"
check "exp-06: its record says FAIL, stopped by Slurm" \
    eval '[ "$(field $d3/debug/exp-06.result result)" = FAIL ] && [ "$(field $d3/debug/exp-06.result exit)" = 143 ]'
check "the summary names the time limit" has "$d3/summary.txt" "^debug  *06 .*FAIL (143) .*stopped at its time limit of 1 min"
check "no CSV was left by the stopped run" eval '[ ! -e results/test-slurm-limit/$slug/exp-06.csv ]'
rm -rf results/test-slurm-limit plots/test-slurm-limit

# ---- what came back ----------------------------------------------------------------------
echo
say "run $run1: jobs $jobs1 (the arrays, then the summary job)"
cat "$d/summary.txt"
echo
say "run $run2: jobs $jobs2"
cat "$d2/summary.txt"
echo
say "run $run3: jobs $jobs3"
cat "$d3/summary.txt"
echo
rm -f "$stamp" "$log1" "$log2" "$log3"
if [ $failures -eq 0 ]; then
    say "every check passed ($((SECONDS - t0)) s)"
    exit 0
fi
say "$failures check(s) FAILED ($((SECONDS - t0)) s)"
exit 1

#!/usr/bin/env bash
# harness/ops/run-all.sh -- make all: every experiment under one label, then
# the summary of their verdicts. A failed experiment does not stop the
# others; the exit code says a run failed (77 at once: no GPU).
#
#   LABEL=name    the runs' label (required: the Makefile passes the device's
#                 slug when none is given)
#   FLAGS="..."   flags for every run (--backend, --quick, --full, ARGS)
#   BUDGET=S      the whole series' wall-clock seconds. First, before any
#                 experiment runs, each one's plan under --budget (--points
#                 --plan-file: nothing timed); the first of these measures
#                 the label's ceilings when it has none (short trials), so
#                 that they come out of the whole budget, not out of one
#                 experiment's share. Each experiment needs the larger of
#                 its plan's budget_needed_s (the least time that times
#                 every point of its verdicts on this machine) and its
#                 weight (below). Where what is left is less than they
#                 need together, it says so and what BUDGET would do, and
#                 runs nothing: a budget split too thin leaves verdicts
#                 "not measured", it does not judge them. Else, before
#                 each one, what is left goes to it and the ones after in
#                 proportion to their needs, so that time an experiment
#                 leaves unused passes to the next; each runs with
#                 --budget (its share) and so fits it +10 %. They run from
#                 the smallest need to the largest.
#   (no BUDGET)   a lab series (no --quick or --full in FLAGS) keeps the
#                 lab's promise of 10 minutes on 2 cores: LAB_SERIES_S
#                 (590 s) is split as the series goes, each experiment's
#                 --slot its share of what is left in proportion to its
#                 LAB_WEIGHT (below), at most RL_LAB_SLOT_S (105 s), so
#                 time one leaves unused passes to the next, in order
#                 01, 02, ... A fresh label's ceilings are measured first
#                 (the first experiment's --points), out of the series'
#                 time, not out of one experiment's slot. A slot sheds a
#                 chart's sweep points first (harness/budget.c).
#   EXPS="07 03"  only these experiments (two-digit numbers; default all):
#                 make reference EXPS=07 re-measures one experiment's
#                 reference run and leaves the others' CSVs as they are
#   B             the build folder
#
# The weights: about the least wall time in which each experiment judged
# the verdicts its lab run judges under --budget, ceilings reused (its
# needed points down to the floor's stop rule, its inputs, the time it
# keeps for its charts), on the machine README.md names ("Runs that fit a
# clock"); a floor under the plan's model, which leaves out part of some
# inputs' cost (exp-03's model). An experiment not listed weighs 20.
set -uo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
LABEL=${LABEL:-}
FLAGS=${FLAGS:-}
BUDGET=${BUDGET:-}
declare -A WEIGHT=([01]=12 [02]=28 [03]=48 [04]=10 [05]=10 [06]=9 [07]=58 [08]=35 [09]=40)
# The lab series' weights: about what each lab run took with no clock on
# the machine README.md names ("Runs that fit a clock"), a little more for
# the ones that cannot shed (exp-01's holds, exp-03's model), so that they
# keep what they need and what they leave passes on. Not listed: 60.
declare -A LAB_WEIGHT=([01]=50 [02]=95 [03]=70 [04]=55 [05]=100 [06]=80 [07]=100 [08]=65 [09]=90)
LAB_SERIES_S=${LAB_SERIES_S:-590}
LAB_SLOT_MAX=105

[ -n "$LABEL" ] || { echo "run-all: LABEL is required" >&2; exit 2; }
if [ -n "$BUDGET" ] && ! [[ $BUDGET =~ ^[0-9]+$ && $BUDGET -ge 1 ]]; then
    echo "run-all: BUDGET is whole seconds, not '$BUDGET'" >&2
    exit 2
fi

EXPS=${EXPS:-}
if [ -n "$EXPS" ]; then
    bins=()
    for n in $EXPS; do
        [[ $n =~ ^[0-9][0-9]$ ]] || { echo "run-all: EXPS lists two-digit numbers (07 03), not '$n'" >&2; exit 2; }
        [ -x "$B/exp-$n" ] || { echo "run-all: no experiment $n ($B/exp-$n is not built)" >&2; exit 2; }
        bins+=("$B/exp-$n")
    done
else
    bins=("$B"/exp-[0-9][0-9])
fi
out_dir=results
[[ " $FLAGS " =~ \ --out\ ([^ ]+) ]] && out_dir=${BASH_REMATCH[1]}

# Before anything runs: each experiment's need (see BUDGET above), read
# from its plan file; the first plan measures the ceilings if the label
# has none. Sets NEED (by binary) and sorts bins from the smallest need.
declare -A NEED=()
plan_needs() {
    local plans b n need rc
    plans=$(mktemp -d) || exit 2
    for b in "${bins[@]}"; do
        n=${b##*/exp-}
        # shellcheck disable=SC2086
        "$b" $FLAGS --points --budget "$BUDGET" --plan-file "$plans/$n" --label "$LABEL" \
            >"$plans/$n.log" 2>&1
        rc=$?
        [ $rc -eq 77 ] && { cat "$plans/$n.log"; rm -rf "$plans"; exit 77; }
        need=$(sed -n 's/^budget_needed_s=\([0-9][0-9]*\)$/\1/p' "$plans/$n" 2>/dev/null)
        if [ $rc -ne 0 ] || [ -z "$need" ]; then
            echo "run-all: ${b##*/} made no plan (exit $rc): its weight stands for its need" >&2
            need=0
        fi
        [ "${WEIGHT[$n]:-20}" -gt "$need" ] && need=${WEIGHT[$n]:-20}
        NEED[$b]=$need
    done
    rm -rf "$plans"
    mapfile -t bins < <(for b in "${bins[@]}"; do echo "${NEED[$b]} $b"; done |
        sort -s -n -k1,1 | cut -d' ' -f2-)
}

# The share of experiment i (of the list) from what is left.
share_of() {
    local i=$1 left=$2 rest=0 j
    for ((j = i; j < ${#bins[@]}; j++)); do rest=$((rest + NEED[${bins[j]}])); done
    echo $((left * NEED[${bins[i]}] / rest))
}

t0=$SECONDS
if [ -n "$BUDGET" ]; then
    fresh=no
    [ -f "$out_dir/$LABEL/ceilings.csv" ] || fresh=yes
    plan_needs
    planned=$((SECONDS - t0)) total=0 list=""
    for b in "${bins[@]}"; do
        total=$((total + NEED[$b])) list="$list ${b##*/}:${NEED[$b]}"
    done
    what=plans
    [ $fresh = yes ] && what="ceilings and plans"
    echo "run-all: the $what took ${planned} s of BUDGET=${BUDGET}; the experiments need ${total} s (s each:${list})"
    if [ $((BUDGET - planned)) -lt "$total" ]; then
        would=$(( (planned + total + 9) / 10 * 10 ))
        echo "run-all: BUDGET=${BUDGET} is too little on this machine: ${total} s for the experiments' verdicts" \
             "and ${planned} s for the $what; BUDGET=${would} would do. Nothing run (the ceilings are kept)." >&2
        exit 2
    fi
fi
# A lab series: no BUDGET, no --quick or --full, no --slot of its own.
lab_series=no
[ -z "$BUDGET" ] && ! [[ " $FLAGS " =~ \ --(quick|full|slot)[\ =] ]] && lab_series=yes

# Experiment i's slot in a lab series: its weight's share of what is left.
lab_slot_of() {
    local i=$1 left=$2 rest=0 j n share
    for ((j = i; j < ${#bins[@]}; j++)); do
        n=${bins[j]##*/exp-}
        rest=$((rest + ${LAB_WEIGHT[$n]:-60}))
    done
    n=${bins[i]##*/exp-}
    share=$((left * ${LAB_WEIGHT[$n]:-60} / rest))
    [ "$share" -le "$LAB_SLOT_MAX" ] || share=$LAB_SLOT_MAX
    [ "$share" -ge 1 ] || share=1
    echo "$share"
}

if [ $lab_series = yes ] && [ ! -f "$out_dir/$LABEL/ceilings.csv" ] && [ ${#bins[@]} -gt 0 ]; then
    echo "run-all: a fresh label: its ceilings first, out of the series' ${LAB_SERIES_S} s"
    # shellcheck disable=SC2086
    "${bins[0]}" $FLAGS --points --label "$LABEL" >/dev/null ||
        echo "run-all: the ceilings were not measured up front; the first experiment will" >&2
fi

failed=0
for ((i = 0; i < ${#bins[@]}; i++)); do
    bin=${bins[i]} budget_flag=()
    if [ -n "$BUDGET" ]; then
        left=$((BUDGET - (SECONDS - t0)))
        share=$(share_of "$i" "$left")
        [ "$share" -ge 1 ] || share=1
        echo "run-all: ${bin##*/} gets ${share} s of the ${left} s left of BUDGET=${BUDGET}"
        budget_flag=(--budget "$share")
    elif [ $lab_series = yes ]; then
        left=$((LAB_SERIES_S - (SECONDS - t0)))
        share=$(lab_slot_of "$i" "$left")
        echo "run-all: ${bin##*/} gets a ${share} s slot of the ${left} s left of the lab series' ${LAB_SERIES_S} s"
        budget_flag=(--slot "$share")
    fi
    # shellcheck disable=SC2086
    "$bin" $FLAGS "${budget_flag[@]}" --label "$LABEL"
    rc=$?
    echo
    [ $rc -eq 77 ] && exit 77
    [ $rc -eq 0 ] || failed=1
done
[ -n "$BUDGET" ] && echo "run-all: the experiments took $((SECONDS - t0)) s of BUDGET=${BUDGET}"
[ $lab_series = yes ] && echo "run-all: the lab series took $((SECONDS - t0)) s of its ${LAB_SERIES_S} s"
"$B/rooflab" summary --label "$LABEL" || failed=1
exit $failed

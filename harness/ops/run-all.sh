#!/usr/bin/env bash
# harness/ops/run-all.sh -- make all: every experiment under one label, then
# the summary of their verdicts. A failed experiment does not stop the
# others; the exit code says a run failed (77 at once: no GPU).
#
#   LABEL=name    the runs' label (required: the Makefile passes the device's
#                 slug when none is given)
#   FLAGS="..."   flags for every run (--backend, --quick, --full, ARGS)
#   BUDGET=S      the whole series' wall-clock seconds, split across the
#                 experiments: before each one, what is left goes to it and
#                 the ones after in proportion to their weights (below), so
#                 that time an experiment leaves unused passes to the next;
#                 each runs with --budget (its share) and so fits it +10 %.
#                 They run from the smallest weight to the largest.
#   EXPS="07 03"  only these experiments (two-digit numbers; default all):
#                 make reference EXPS=07 re-measures one experiment's
#                 reference run and leaves the others' CSVs as they are
#   B             the build folder
#
# The weights: about the least wall time in which each experiment judged
# the verdicts its lab run judges under --budget, ceilings reused (its
# needed points down to the floor's stop rule, its inputs, the time it
# keeps for its charts); README.md, "Runs that fit a clock", has the
# times they were drawn from and the machine that gave them.
# make all BUDGET=120 and 150 set them (README, "Runs that fit a
# clock"). The first experiment also measures the ceilings (about 6 s
# with a budget's short trials) when the label has none. An experiment
# not listed weighs 20.
set -uo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
LABEL=${LABEL:-}
FLAGS=${FLAGS:-}
BUDGET=${BUDGET:-}
declare -A WEIGHT=([01]=12 [02]=28 [03]=48 [04]=10 [05]=10 [06]=9 [07]=58 [08]=35)
CEILINGS_WEIGHT=6

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
# With a budget, the smallest shares run first and the largest last: what
# an experiment leaves unused passes to the ones after it, and the large
# ones, whose fixed work (exp-03's model) cannot shrink, need it most.
# Without one, in order.
if [ -n "$BUDGET" ]; then
    mapfile -t bins < <(for b in "${bins[@]}"; do
        echo "${WEIGHT[${b##*/exp-}]:-20} $b"; done | sort -s -n -k1,1 | cut -d' ' -f2-)
fi
out_dir=results
[[ " $FLAGS " =~ \ --out\ ([^ ]+) ]] && out_dir=${BASH_REMATCH[1]}
first_measures=0
[ -f "$out_dir/$LABEL/ceilings.csv" ] || first_measures=$CEILINGS_WEIGHT
weight_of() {
    local w=${WEIGHT[${1##*/exp-}]:-20}
    [ "$1" = "${bins[0]}" ] && w=$((w + first_measures))
    echo "$w"
}

# The share of experiment i (of the list) from what is left.
share_of() {
    local i=$1 left=$2 rest=0 j
    for ((j = i; j < ${#bins[@]}; j++)); do rest=$((rest + $(weight_of "${bins[j]}"))); done
    echo $((left * $(weight_of "${bins[i]}") / rest))
}

t0=$SECONDS failed=0
for ((i = 0; i < ${#bins[@]}; i++)); do
    bin=${bins[i]} budget_flag=()
    if [ -n "$BUDGET" ]; then
        left=$((BUDGET - (SECONDS - t0)))
        share=$(share_of "$i" "$left")
        [ "$share" -ge 1 ] || share=1
        echo "run-all: ${bin##*/} gets ${share} s of the ${left} s left of BUDGET=${BUDGET}"
        budget_flag=(--budget "$share")
    fi
    # shellcheck disable=SC2086
    "$bin" $FLAGS "${budget_flag[@]}" --label "$LABEL"
    rc=$?
    echo
    [ $rc -eq 77 ] && exit 77
    [ $rc -eq 0 ] || failed=1
done
[ -n "$BUDGET" ] && echo "run-all: the experiments took $((SECONDS - t0)) s of BUDGET=${BUDGET}"
"$B/rooflab" summary --label "$LABEL" || failed=1
exit $failed

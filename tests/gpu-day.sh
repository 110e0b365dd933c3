#!/usr/bin/env bash
# gpu-day.sh -- `make gpu-day OUT=folder`: everything a GPU lent for ten
# minutes should give, in one command, within GPU_DAY_BUDGET_S (default:
# nine minutes) of wall time from a cold tree on an H100/H200-class GPU:
#
#   1. the steps of make check-gpu (driver against nvcc, packages -- from
#      bundle/ when there is one --, build, CUDA kernels against the CPU
#      references, compute-sanitizer right after them, then every
#      experiment with --quick --budget 12 in lab order, below)
#   2. every experiment in lab mode into results/reference/<gpu>/, each
#      with --budget S computed from the time left (below), in lab order:
#      first those that never ran on a GPU (07 08), then those that never
#      finished there (04), then those whose CUDA code changed since the
#      last GPU run, then the rest; then their summary
#   3. a tarball in OUT of results/, plots/ and every log (logs/), written
#      after the checks and rewritten after each experiment (to a .tmp
#      file, then renamed), so a lease cut short still leaves in OUT all
#      that finished; beside it OUT/gpu-day-summary.txt, the summary table
#      (step, pass/FAIL/skip, seconds, note), kept current the same way
# A failed step does not stop the later ones that can still run. Without
# Criterion (libcriterion-dev, not in bundle/ either) the experiments
# still build and run; only the CUDA suites and the sanitizer skip, and
# say so. A run stopped at its cap keeps the points it measured: its CSV
# is written, marked partial ('# partial: stopped by SIGTERM after N of M
# points'), and its row says "stopped at its cap; partial CSV kept".
#
# Budgets. Before each experiment, what is left of the day (less
# PACK_RESERVE_S for the summary and the last tarball, less each
# remaining experiment's margin and packing) is shared among the
# experiments still to run in proportion to their estimated lab times;
# the share, divided by 1.1, is the experiment's --budget S, and its
# step's cap is S * 1.1 + GPU_DAY_STEP_MARGIN_S: the budget is the plan
# (a budgeted run ends with its CSV, charts and verdicts within S + 10 %),
# the cap only the safety net. One that ends early leaves its time to the
# rest. The checks get CHECK_GPU_BUDGET_S (default a third of the day),
# with their own caps (tests/check-gpu.sh).
#
# Estimates: seconds on an H200, from the lease logs in
# results/reference/h200/gpu-day-logs/, each a default in
# tests/gpu-day-plan.sh with the file:line it comes from, or how it was
# derived (the build: from a cold build timed on a small machine); the
# EST_* variables override them; --plan prints each with its source.
#
# Lab order (tests/gpu-order.sh), for the lab runs and the quick runs:
# GPU_DAY_FIRST when given; then the experiments that never ran on a GPU
# (no lease log in results/reference/*/gpu-day-logs/, no CUDA CSV under
# results/reference/), then those that ran and never finished there (no
# whole CUDA CSV); then those whose kernels' .cu/.cuh files changed since
# the commit of the last GPU run (the newest gpu-day-logs/*/system.txt,
# its ROOFLAB_GIT_COMMIT line, else its "== git" line) or that are new
# since, then those where only shared CUDA code (harness/*.cu), the
# headers their .cu files include or their own experiments/NN-*/ sources
# changed, then the rest; by number within each. Without git (a copy of
# the tree), or when the commit is not in it, what the logs leave follows
# GPU_DAY_DEFAULT_ORDER, what the rule gave when it was last written down.
# `tests/gpu-day.sh --plan` where git is prints the order to pass as
# GPU_DAY_EXPS.
#
# Variables (environment or make): GPU_DAY_BUDGET_S (540), GPU_DAY_EXPS
# (the lab runs, in order, instead of the rule: "03 04"), GPU_DAY_FIRST
# (none: experiments to put first, "07 04"), GPU_DAY_DEFAULT_ORDER (07 08
# 04 02 03 05 01 06), B (the build folder: build/smNN), GPU_DAY_MODE
# (lab, or full: make reference's sweeps), GPU_DAY_QUICK=0 (no --quick runs: a second
# lease, once they passed on a first), GPU_DAY_QUICK_BUDGET_S (12),
# GPU_DAY_STEP_MARGIN_S (5), GPU_DAY_MIN_BUDGET_S (15: a smaller share
# gets this much while there is time), GPU_DAY_EST_NEW_S (60: the weight
# of an experiment without a lease log), GPU_DAY_PREFIX (reference; a dry
# run: gpu-day-dry-run, away from the checked-in CPU reference),
# CHECK_GPU_BUDGET_S, CAP_EXP_NN_S (a fixed cap for experiment NN: its
# budget then follows from it), CAP_LABEL_S (20), CAP_SYSTEM_S (60),
# CAP_PACK_S (60), CAP_SUMMARY_S (20), PACK_RESERVE_S (20), the caps of
# tests/gpu-lib.sh, and the estimates EST_*.
#
# Usage: tests/gpu-day.sh [--plan | --help]; --plan prints the estimates,
# the order and the budgets the day would plan, without a GPU, and exits.
# Environment: OUT (required), MAKE, NVCC; ROOFLAB_GIT_COMMIT, the commit
# a copy of the tree without .git came from (the CSVs record it);
# RL_STEPS_BACKEND=cpu runs the experiments on the CPU, only for a dry run
# of this script's flow without a GPU (PATH=tests/fake:$PATH, see
# tests/fake/ and tests/gpu-lib.sh): the GPU steps then skip and the
# build is CPU-only. Exit codes: 0 every step passed, 1 a step failed (the
# tarball is still written), 2 bad usage, 77 no GPU (at once, nothing
# written).
set -uo pipefail
cd "$(dirname "$0")/.."
plan_only=""
case "${1:-}" in
-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
--plan) plan_only=1 ;;
"") ;;
*) echo "usage: tests/gpu-day.sh [--plan | --help] (make gpu-day OUT=folder)" >&2; exit 2 ;;
esac
quick_cap_given=${CAP_EXP_QUICK_S:-} # before gpu-lib.sh gives it make check-gpu's default
# shellcheck source=tests/gpu-lib.sh
. tests/gpu-lib.sh
SCRIPT_NAME=gpu-day

GPU_DAY_BUDGET_S=${GPU_DAY_BUDGET_S:-540} # a 600 s lease less its start and the copy back
CHECK_GPU_BUDGET_S=${CHECK_GPU_BUDGET_S:-$((GPU_DAY_BUDGET_S / 3))}
# GPU_DAY_EXPS, GPU_DAY_FIRST, GPU_DAY_DEFAULT_ORDER: tests/gpu-order.sh.
GPU_DAY_MODE=${GPU_DAY_MODE:-lab}
export GPU_DAY_QUICK=${GPU_DAY_QUICK:-1}
GPU_DAY_QUICK_BUDGET_S=${GPU_DAY_QUICK_BUDGET_S:-12}
# A run's start and exit, outside its own clock: the H200 lease's
# lease3-lab/reference/exp-01.log:49 ("took") against that step's time in
# lease3-lab/summary.txt:15; the margin leaves room for a slower start.
GPU_DAY_STEP_MARGIN_S=${GPU_DAY_STEP_MARGIN_S:-5}
GPU_DAY_MIN_BUDGET_S=${GPU_DAY_MIN_BUDGET_S:-15}
GPU_DAY_EST_NEW_S=${GPU_DAY_EST_NEW_S:-60}
if dry_run; then GPU_DAY_PREFIX=${GPU_DAY_PREFIX:-gpu-day-dry-run}; else GPU_DAY_PREFIX=${GPU_DAY_PREFIX:-reference}; fi
CAP_LABEL_S=${CAP_LABEL_S:-20}
CAP_SYSTEM_S=${CAP_SYSTEM_S:-60}
CAP_PACK_S=${CAP_PACK_S:-60}
CAP_SUMMARY_S=${CAP_SUMMARY_S:-20}
PACK_RESERVE_S=${PACK_RESERVE_S:-20} # the summary step's MIN_STEP_S + KILL_AFTER_S, and the last tarball
OUT=${OUT:-}

# The cap of a run with --budget S: S + 10 % (the budget's contract) + the margin.
cap_for() { echo $(((${1} * 11 + 9) / 10 + GPU_DAY_STEP_MARGIN_S)); }
# The budget a cap leaves: its inverse.
budget_for() { local b=$((((${1} - GPU_DAY_STEP_MARGIN_S) * 10) / 11)); echo $((b < 1 ? 1 : b)); }

# The quick runs' budget and the cap that follows from it (CAP_EXP_QUICK_S,
# when given, wins).
QUICK_BUDGET_S=$GPU_DAY_QUICK_BUDGET_S
CAP_EXP_QUICK_S=${quick_cap_given:-$(cap_for "$QUICK_BUDGET_S")}

# The estimates, the order and the budgets (tests/gpu-day-plan.sh).
# shellcheck source=tests/gpu-day-plan.sh
. tests/gpu-day-plan.sh

case $GPU_DAY_MODE in
full) mode_flag=--full ;;
lab) mode_flag="" ;;
*) echo "gpu-day: GPU_DAY_MODE is full or lab, not '$GPU_DAY_MODE'" >&2; exit 2 ;;
esac
for n in $GPU_DAY_EXPS $GPU_DAY_FIRST $GPU_DAY_DEFAULT_ORDER; do
    [[ $n =~ ^[0-9][0-9]$ ]] || { echo "gpu-day: GPU_DAY_EXPS, GPU_DAY_FIRST and GPU_DAY_DEFAULT_ORDER list two-digit numbers (04 03), not '$n'" >&2; exit 2; }
done
if [ -n "$plan_only" ]; then
    print_estimates
    echo
    compute_order
    print_plan
    exit 0
fi

# ---- the day -------------------------------------------------------------------
[ -n "$OUT" ] || { echo "usage: make gpu-day OUT=folder (where the tarball goes)" >&2; exit 2; }

gpu_gate gpu-day
mkdir -p "$OUT" || { echo "gpu-day: cannot create $OUT" >&2; exit 2; }
DAY_T0=$SECONDS
day_left() { echo $((GPU_DAY_BUDGET_S - (SECONDS - DAY_T0))); }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
logs=$B/gpu-day-$stamp
mkdir -p "$logs"
echo "gpu-day: $GPU_NAME (compute capability $GPU_CAP), driver $DRIVER (CUDA ${DRIVER_CUDA:-?});" \
     "budget ${GPU_DAY_BUDGET_S} s; logs in $logs/"
# (Not through a pipe: compute_order sets the order for this shell.)
{ print_estimates; echo; compute_order; print_plan; } >"$logs/plan.txt"
cat "$logs/plan.txt"

# What the machine is, for whoever reads the results later.
# shellcheck disable=SC2317 # (these two run as steps, by name)
system_info() {
    echo "== date"; date -u
    echo "== git"; git describe --always --dirty 2>&1; git status --short 2>&1 | head -n 50
    echo "ROOFLAB_GIT_COMMIT=${ROOFLAB_GIT_COMMIT:-}"
    echo "== uname"; uname -a
    echo "== os-release"; cat /etc/os-release 2>&1
    echo "== nvcc"; "${NVCC:-nvcc}" --version 2>&1
    echo "== nvidia-smi"; nvidia-smi 2>&1
    echo "== nvidia-smi -q"; nvidia-smi -q 2>&1
    echo "== cpu"; lscpu 2>&1 | head -n 20
    return 0 # a description, not a check: only its cap can fail it
}
# The label the experiments use for this GPU (h200), into FILE.
# shellcheck disable=SC2317
print_label() {
    local bin
    for bin in "$B"/exp-[0-9][0-9]; do
        "$bin" --print-label --backend "$RL_STEPS_BACKEND" >"$1"
        return
    done
    echo "no experiment binary in $B/" >&2
    return 1
}
export -f system_info print_label

title="gpu-day summary: $GPU_NAME"
name=""
packs=0
# pack WHEN: the tarball of results/, plots/ and logs/ as they are now,
# and the summary table so far beside it, each written to a .tmp file and
# renamed: OUT always holds the last complete pair, whatever stops the
# lease. A failure is a row; a success one line here.
pack() {
    local when=$1 t0=$SECONDS stage ok=1
    print_summary "$title (after $when: $((SECONDS - DAY_T0)) s of ${GPU_DAY_BUDGET_S} s)" >"$logs/summary.txt"
    stage=$(mktemp -d "$B/.pack.XXXXXX")
    ln -s "$(pwd)/$logs" "$stage/logs"
    capped "$CAP_PACK_S" tar -czhf "$OUT/.$name.tmp" results plots -C "$stage" logs &&
        mv "$OUT/.$name.tmp" "$OUT/$name" || ok=0
    rm -rf "$stage"
    cp "$logs/summary.txt" "$OUT/.gpu-day-summary.txt.tmp" && mv "$OUT/.gpu-day-summary.txt.tmp" "$OUT/gpu-day-summary.txt"
    if [ $ok = 1 ]; then
        packs=$((packs + 1))
        echo "gpu-day: packed after $when: $OUT/$name ($(du -h "$OUT/$name" | cut -f1), $((SECONDS - t0)) s; $(day_left) s of the day left)"
        return 0
    fi
    rm -f "$OUT/.$name.tmp"
    row "pack after $when" FAIL $((SECONDS - t0)) "tar failed; $OUT/$name is the one before, if any"
    failed=1
    return 1
}

# 1. the checks, within their own budget; the system's description and
# the label are steps of it.
budget_start "$CHECK_GPU_BUDGET_S"
step "system.txt (nvidia-smi -q, nvcc, git)" "$CAP_SYSTEM_S" "$logs/system.txt" system_info
check_steps "$logs/check-gpu"
slug=""
if [ -z "$fatal" ]; then
    budget_start $(($(day_left) - PACK_RESERVE_S))
    if step "label (--print-label)" "$CAP_LABEL_S" "$logs/label.log" print_label "$logs/label.txt"; then
        slug=$(head -n1 "$logs/label.txt")
        [ -n "$slug" ] || { rerow FAIL "no label printed"; failed=1; }
    fi
fi
name=rooflab-gpu-day-${slug:-sm$SM}-$stamp.tar.gz
pack "the checks"

# 2. the lab runs, each under a budget from the time left of the day.
budget_start $(($(day_left) - PACK_RESERVE_S))
label=$GPU_DAY_PREFIX/$slug
if [ -n "$fatal" ] || [ -z "$slug" ]; then
    row "$GPU_DAY_MODE runs" skip "" "not run: ${fatal:-no label for the GPU (see $logs/label.log)}"
else
    mkdir -p "$logs/reference"
    # A lab run reuses the ceilings an earlier one measured (cached): the
    # first run that gets to its ceilings caches them (results/LABEL/ceilings.csv)
    # for the rest.
    ceilings_seen=0
    for ((k = 0; k < ${#order[@]}; k++)); do
        n=${order[k]} bin=$B/exp-${order[k]} exp=exp-${order[k]}
        [ -x "$bin" ] || { row "$exp $GPU_DAY_MODE" FAIL "" "no $bin"; failed=1; continue; }
        extra_first_s=0
        [ "$GPU_DAY_MODE" = lab ] && [ $ceilings_seen = 0 ] && extra_first_s=$EST_CEILINGS_LAB_S
        left=$(time_left)
        budget=$(lab_budget "$left" "${order[@]:k}")
        cap=$(lab_cap "$n" "$budget")
        # Cut to what is left: a budget the cap cannot hold is no plan.
        if [ "$cap" -gt $((left - KILL_AFTER_S)) ]; then
            cap=$((left - KILL_AFTER_S))
            budget=$(budget_for "$cap")
        fi
        echo "gpu-day: $exp: budget ${budget} s, cap ${cap} s (${left} s left for ${order[*]:k};" \
            "estimate $(($(est_lab "$n") + extra_first_s)) s: $(est_source "$n"))"
        if [ "$budget" -lt "$GPU_DAY_MIN_BUDGET_S" ]; then
            row "$exp $GPU_DAY_MODE ($label)" skip "" "only ${left} s left: a budget under GPU_DAY_MIN_BUDGET_S=${GPU_DAY_MIN_BUDGET_S}"
            continue
        fi
        # shellcheck disable=SC2086
        step "$exp $GPU_DAY_MODE ($label)" "$cap" "$logs/reference/$exp.log" "$bin" $mode_flag \
            --budget "$budget" --backend "$RL_STEPS_BACKEND" --label "$label" --reference none \
            --outcome-file "$(outcome_of "$logs/reference/$exp.log")"
        status=$?
        [ -f "results/$label/ceilings.csv" ] && ceilings_seen=1 # measured once, then cached
        if [ $status -eq 0 ]; then
            note=$(charts_note "$logs/reference/$exp.log")
            rerow pass "budget ${budget} s${note:+; $note}"
        fi
        [ $status -eq 125 ] || pack "$exp" # 125: skipped, nothing new to pack
    done
    budget_start "$(day_left)"
    if [ -f "results/$label/verdicts.csv" ]; then
        step "summary of $label" "$CAP_SUMMARY_S" "$logs/reference/summary.log" \
            "$B/rooflab" summary --label "$label"
    else
        row "summary of $label" skip "" "no run wrote its verdicts"
    fi
fi

# 3. the last tarball, with the summary's row; the table in it lacks only
# its own row.
t0=$SECONDS
pack "the summary" && row "pack $name" pass $((SECONDS - t0)) \
    "results/, plots/, logs/; written $packs times (after the checks, each run, the summary)"
{
    print_summary "$title ($((SECONDS - DAY_T0)) s of ${GPU_DAY_BUDGET_S} s)"
    echo
    echo "gpu-day: $([ $failed -eq 0 ] && echo "every step passed" || echo "some steps FAILED")"
    [ -f "$OUT/$name" ] && echo "gpu-day: tarball $OUT/$name ($(du -h "$OUT/$name" | cut -f1))"
} >"$OUT/.gpu-day-summary.txt.tmp" && mv "$OUT/.gpu-day-summary.txt.tmp" "$OUT/gpu-day-summary.txt"
cat "$OUT/gpu-day-summary.txt"
exit $failed

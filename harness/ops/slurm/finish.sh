#!/usr/bin/env bash
# finish.sh -- the job make slurm runs once every task of its arrays has
# ended, however (--dependency=afterany): one table for the whole run.
#
#   finish.sh --runs DIR --run ID
#
# Writes DIR/ID/summary.txt, and prints it:
#   - one row per task: partition, experiment, node, label, ok or FAIL,
#     seconds, and why a task failed (its own record; else Slurm's word in
#     its error file: the time limit, a cancel; else that it never ran);
#   - per label the run produced, the summary of its verdicts (rooflab
#     summary: results/<label>/summary.md);
#   - per experiment, the labels that ran it compared (rooflab compare: the
#     ratio tables in this job's output, the charts in
#     plots/compare/<labels>/, and what was drawn as data in
#     DIR/ID/compare-exp-NN.charts: drawn=, chart=, why= lines, from
#     rooflab compare --charts-file). An experiment that only one label ran is
#     compared with the checked-in reference run of the same device
#     (results/reference/<device>/) where there is one.
# Exit code: 0 every task ran and every summary and comparison was made,
# 1 otherwise (the table says what), 2 bad usage.
set -uo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
# shellcheck source=harness/ops/slurm/lib.sh
. harness/ops/slurm/lib.sh || { echo "rooflab-slurm: not in the repository root ($PWD)" >&2; exit 2; }

runs="" run=""
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2 ;;
        --run) run=$2 ;;
        *) echo "rooflab-slurm: finish.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift 2 || { echo "rooflab-slurm: finish.sh: $1 needs a value" >&2; exit 2; }
done
[ -n "$runs" ] && [ -n "$run" ] || { echo "rooflab-slurm: finish.sh needs --runs and --run" >&2; exit 2; }
dir=$runs/$run
# shellcheck source=/dev/null
. "$dir/run.env" || { echo "rooflab-slurm: no run settings at $dir/run.env" >&2; exit 2; }
read -ra partitions <<<"$PARTITIONS"
read -ra exps <<<"$EXPS"
read -ra arrays <<<"$ARRAY_JOBS"
failed=0
shown=${dir#"$PWD"/}

# Why a task left no record: what Slurm wrote in its error file, or that
# it never started.
no_record_note() { # PARTITION EXP ARRAY_JOB
    local out=$dir/$1/exp-$2.out err=$dir/$1/exp-$2.err line
    if line=$(grep -m1 'DUE TO TIME LIMIT' "$err" 2>/dev/null); then
        echo "stopped at its time limit of $LIMIT min (make slurm TIME_LIMIT=... gives more)"
    elif line=$(grep -m1 'CANCELLED' "$err" 2>/dev/null); then
        echo "cancelled: ${line#*\*\*\* }"
    elif [ ! -e "$out" ]; then
        echo "never started (cancelled while pending, or Slurm could not start it: scontrol show job $3_$((10#$2)))"
    else
        echo "ended without a result; see $shown/$1/exp-$2.out and .err"
    fi
}

# ---- the tasks -------------------------------------------------------------------------
rows=() ok_labels=() all_labels=()
declare -A labels_of_exp=()
n_ok=0 n_tasks=0
for i in "${!partitions[@]}"; do
    p=${partitions[$i]}
    for e in "${exps[@]}"; do
        n_tasks=$((n_tasks + 1))
        rec=$dir/$p/exp-$e.result
        if [ -f "$rec" ]; then
            read_result "$rec"
            # A task stopped by Slurm says so; its error file says whether the limit did it.
            if [ "$r_result" != ok ] && grep -q 'DUE TO TIME LIMIT' "$dir/$p/exp-$e.err" 2>/dev/null; then
                r_note="stopped at its time limit of $LIMIT min (make slurm TIME_LIMIT=... gives more)"
            fi
        else
            r_node="-" r_label="" r_result=FAIL r_seconds="" r_exit="-"
            r_note=$(no_record_note "$p" "$e" "${arrays[$i]}")
        fi
        if [ "$r_result" = ok ]; then
            n_ok=$((n_ok + 1))
            labels_of_exp[$e]+="$r_label "
            ok_labels+=("$r_label")
        else
            failed=1
            r_result="FAIL"
            [ "$r_exit" != "-" ] && r_result="FAIL ($r_exit)"
        fi
        [ -n "$r_label" ] && all_labels+=("$r_label")
        rows+=("$(printf '%-12s %-4s %-10s %-30s %-10s %6s  %s' "$p" "$e" "${r_node:--}" \
            "${r_label:--}" "$r_result" "${r_seconds:+$r_seconds s}" "${r_note:0:300}")")
    done
done

# ---- every label's summary ---------------------------------------------------------------
unique() { printf '%s\n' "$@" | awk 'NF && !seen[$0]++'; }
# "N hold, N do not hold, N not measured, N premise not met" for a label,
# from rooflab summary --counts (data: key=value lines), never from the
# sentence the summary prints for readers.
verdict_counts() {
    local key value holds="" no="" unmeasured="" premise=""
    while IFS='=' read -r key value; do
        case $key in
        holds) holds=$value ;;
        does_not_hold) no=$value ;;
        not_measured) unmeasured=$value ;;
        premise_not_met) premise=$value ;;
        esac
    done < <("$B/rooflab" summary --counts --out "$OUT" --label "$1" 2>/dev/null)
    if [ -z "$holds" ]; then
        echo "counts unavailable"
    else
        echo "$holds hold, $no do not hold, $unmeasured not measured, $premise premise not met"
    fi
}

label_rows=()
while IFS= read -r label; do
    [ -n "$label" ] || continue
    if [ ! -f "$OUT/$label/verdicts.csv" ]; then # its tasks found the device, none finished
        label_rows+=("$(printf '  %-30s no verdicts: none of its tasks finished' "$label")")
        continue
    fi
    echo "== rooflab summary --label $label"
    if text=$("$B/rooflab" summary --out "$OUT" --label "$label" 2>&1); then
        echo "$text"
        counts=$(verdict_counts "$label")
        label_rows+=("$(printf '  %-30s %s/%s/summary.md: %s' "$label" "$OUT" "$label" "$counts")")
    else
        echo "$text"
        label_rows+=("$(printf '  %-30s no summary: %s' "$label" "$(echo "$text" | head -n 1)")")
        failed=1
    fi
    echo
done < <(unique "${all_labels[@]}")

# ---- every experiment's comparison ---------------------------------------------------------
compare_rows=()
for e in "${exps[@]}"; do
    mapfile -t labels < <(unique ${labels_of_exp[$e]:-})
    why=""
    if [ ${#labels[@]} -eq 0 ]; then
        compare_rows+=("$(printf '  exp-%s  not compared: no task of it ran' "$e")")
        continue
    elif [ ${#labels[@]} -eq 1 ]; then
        ref=reference/${labels[0]##*/}
        if [ "$ref" != "${labels[0]}" ] && [ -f "$OUT/$ref/exp-$e.csv" ]; then
            labels=("$ref" "${labels[0]}")
            why=" (one device ran it: compared with its checked-in reference run)"
        else
            compare_rows+=("$(printf '  exp-%s  not compared: one label (%s) and no reference run of its device' \
                "$e" "${labels[0]}")")
            continue
        fi
    elif [ ${#labels[@]} -gt 8 ]; then
        why=" (the first 8 of ${#labels[@]} labels: rooflab compare overlays at most 8)"
        labels=("${labels[@]:0:8}")
    fi
    echo "== rooflab compare --exp $e ${labels[*]}"
    charts_file=$dir/compare-exp-$e.charts
    rm -f "$charts_file"
    text=$("$B/rooflab" compare --out "$OUT" --plots "$PLOTS" --charts-file "$charts_file" --exp "$e" \
        "${labels[@]}" 2>&1)
    status=$?
    echo "$text"
    echo
    # What was drawn, from the charts file (data), never from the "charts"
    # line compare prints for people.
    charts="" not_drawn="no charts file"
    while IFS='=' read -r key value; do
        case $key in
        chart) charts+="${charts:+, }$value" ;;
        why) not_drawn=$value ;;
        esac
    done < <(cat "$charts_file" 2>/dev/null)
    [ -n "$charts" ] && charts+=" (+ .pdf, .svg)"
    if [ $status -ne 0 ]; then
        compare_rows+=("$(printf '  exp-%s  %s: FAILED (exit %d): %s' "$e" "${labels[*]}" "$status" \
            "$(echo "$text" | grep -m1 -E 'rooflab|error' || echo "$text" | tail -n 1)")")
        failed=1
    elif [ -n "$charts" ]; then
        compare_rows+=("$(printf '  exp-%s  %s%s\n          charts %s' "$e" "${labels[*]}" "$why" "$charts")")
    else
        compare_rows+=("$(printf '  exp-%s  %s%s: ratios above; charts not drawn (%s)' "$e" "${labels[*]}" \
            "$why" "$not_drawn")")
    fi
done

# ---- the table ---------------------------------------------------------------------------
{
    echo "rooflab on Slurm, run $RUN ($MODE sweeps, submitted $SUBMITTED, commit $COMMIT): $n_ok of $n_tasks tasks ran"
    echo
    printf '%-12s %-4s %-10s %-30s %-10s %6s  %s\n' partition exp node label result time note
    printf '%s\n' "${rows[@]}"
    echo
    echo "labels (the summary of each: rooflab summary)"
    [ ${#label_rows[@]} -gt 0 ] && printf '%s\n' "${label_rows[@]}" || echo "  none: no task found its device"
    echo
    echo "comparisons (rooflab compare; the ratio tables are in $shown/summary.out)"
    printf '%s\n' "${compare_rows[@]}"
    echo
    echo "task output: $shown/<partition>/exp-NN.out and .err"
} | write_file "$dir/summary.txt" || { echo "rooflab-slurm: cannot write $dir/summary.txt" >&2; exit 1; }
echo "== summary: $shown/summary.txt"
cat "$dir/summary.txt"
exit $failed

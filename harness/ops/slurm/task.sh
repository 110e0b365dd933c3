#!/usr/bin/env bash
# task.sh -- one task of make slurm's job arrays (harness/ops/slurm/submit.sh):
# the experiment whose number is this task's array index, on the device
# this node gives it, under the label PREFIX/<device slug>.
#
#   task.sh --runs DIR --backend auto|cuda|cpu --limit MINUTES [--run ID]
#
# Slurm runs it (a copy of it) in the repository root (--chdir); it reads
# the run's settings from DIR/ID/run.env (ID: --run, else this array's
# job id: the first array names the run). Its output is the experiment's,
# between lines starting "rooflab-slurm:": what ran where, and at the end
# the result. The result also goes to DIR/ID/<partition>/exp-NN.result
# (key=value lines) for the summary job. A failure (no GPU on the node,
# a driver that cannot run the build: the diagnosis of exit 77) is
# recorded with its reason and ends only this task.
# Exit code: the experiment's (0 ran, 1 failed validation, 77 no usable
# GPU, ...), 2 bad usage, 143 stopped by Slurm (time limit, scancel).
set -uo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
# shellcheck source=harness/ops/slurm/lib.sh
. harness/ops/slurm/lib.sh || { echo "rooflab-slurm: not in the repository root ($PWD)" >&2; exit 2; }

runs="" backend="" limit="" run=""
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2 ;;
        --backend) backend=$2 ;;
        --limit) limit=$2 ;;
        --run) run=$2 ;;
        *) echo "rooflab-slurm: task.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift 2 || { echo "rooflab-slurm: task.sh: $1 needs a value" >&2; exit 2; }
done
run=${run:-${SLURM_ARRAY_JOB_ID:-}}
if [ -z "$runs" ] || [ -z "$backend" ] || [ -z "$run" ] || [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
    echo "rooflab-slurm: task.sh needs --runs, --backend and a Slurm array task (see --help)" >&2
    exit 2
fi
dir=$runs/$run
# shellcheck source=/dev/null
. "$dir/run.env" || { echo "rooflab-slurm: no run settings at $dir/run.env" >&2; exit 2; }

# Slurm's gres numbers GPUs as NVML does, by PCI bus; CUDA's default
# order (fastest first) could map CUDA_VISIBLE_DEVICES to another GPU.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

exp=$(printf '%02d' "$SLURM_ARRAY_TASK_ID")
partition=${SLURM_JOB_PARTITION:-?}
node=$(hostname -s 2>/dev/null || hostname)
job=${SLURM_ARRAY_JOB_ID:-?}_$SLURM_ARRAY_TASK_ID
record=$dir/$partition/exp-$exp.result
log=$(mktemp "${TMPDIR:-/tmp}/rooflab-task-$exp.XXXXXX")
# The run's plan as data (next to the record, for whoever reads the run
# later), in a temporary file where that folder cannot be written.
plan=$dir/$partition/exp-$exp.plan
[ -d "$dir/$partition" ] && [ -w "$dir/$partition" ] || plan=$log.plan
rm -f "$plan"
t0=$SECONDS
label=""

say() { echo "rooflab-slurm: $*"; }

# finish RESULT EXIT NOTE: the result line and the record; exits.
finish() {
    local result=$1 code=$2 note=$3
    say "result exp-$exp $result (exit $code)${label:+, label $label}, $((SECONDS - t0)) s on $node${note:+: $note}"
    printf '%s\n' "exp=$exp" "partition=$partition" "node=$node" "job=$job" "label=$label" \
        "backend=$backend" "exit=$code" "result=$result" "seconds=$((SECONDS - t0))" \
        "note=${note//$'\n'/ }" | write_file "$record" ||
        say "could not write $record"
    rm -f "$log" "$log.plan"
    exit "$code"
}
# Slurm sends TERM at the time limit and on scancel (then KILL after KillWait).
trap 'finish FAIL 143 "stopped by Slurm (SIGTERM): the time limit of $limit min, or scancel"' TERM

# The reason a failed run gives: its first "rooflab:" line (exit 77's
# diagnosis, a usage error), a validation failure, or its last line.
reason() {
    grep -m1 -E '^rooflab: |FAILED validation' "$log" || grep -v '^[[:space:]]*$' "$log" | tail -n 1
}

# The plan's numbers come from the file the run writes before it prints
# its plan line (--plan-file: key=value lines), never from that line,
# whose wording is for people and free to change.
plan_value() { sed -n "s/^$1=\([0-9][0-9]*\)\$/\1/p" "$plan" 2>/dev/null | head -n 1; }

# Warns when the plan may not fit this job's time limit. It compares the
# plan's high end (every point sampled up to its time limit): the plan
# leaves out the inputs, references and charts, so even its high end is
# no upper bound, and a job whose limit is below it can be stopped before
# it ends; below the low end, it will be.
warn_if_plan_exceeds_limit() {
    local low high how
    low=$(plan_value expected_s_low) high=$(plan_value expected_s_high)
    [ -n "$low" ] && [ -n "$high" ] && [[ $limit =~ ^[0-9]+$ ]] || return 0
    [ "$high" -gt $((limit * 60)) ] || return 0
    how="may be more"
    [ "$low" -gt $((limit * 60)) ] && how="more"
    say "warning: the plan expects $low s to $high s, $how than this job's time limit of $limit min;" \
        "make slurm TIME_LIMIT=$(((high * 2 + 59) / 60)) gives more"
}

# Copies the run's output through and keeps it in $log; once the plan
# file appears (the run has planned), checks it against the time limit.
follow() {
    local line planned=""
    while IFS= read -r line; do
        printf '%s\n' "$line"
        printf '%s\n' "$line" >>"$log"
        if [ -z "$planned" ] && [ -s "$plan" ]; then
            planned=1
            warn_if_plan_exceeds_limit
        fi
    done
}

say "exp-$exp of run $run on partition $partition, node $node, job $job; time limit ${limit:-?} min; backend $backend"
if command -v nvidia-smi >/dev/null 2>&1; then
    say "GPUs: $(nvidia-smi -L 2>&1 | paste -sd';' -) (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset})"
else
    say "GPUs: none listed (no nvidia-smi on $node)"
fi

bin=$B/exp-$exp
[ -x "$bin" ] || finish FAIL 2 "$bin is not built or not visible on $node (the tree must be on a shared file system)"
slug=$("$bin" --print-label --backend "$backend" 2>"$log")
code=$?
if [ $code -ne 0 ] || [ -z "$slug" ]; then
    cat "$log" # the diagnosis, with its remedies, in the task's output
    [ $code -eq 0 ] && code=1
    finish FAIL "$code" "$(reason)"
fi
label=$PREFIX/$slug
say "label $label"

read -ra extra <<<"${ARGS:-}"
read -ra reference <<<"${REFERENCE_FLAG:-}"
cmd=("$bin" --backend "$backend" --label "$label" "$MODE_FLAG" "${reference[@]}" --out "$OUT"
    --plots "$PLOTS" --plan-file "$plan" "${extra[@]}")
say "${cmd[*]}"
"${cmd[@]}" 2>&1 </dev/null | follow
code=${PIPESTATUS[0]}
if [ "$code" -eq 0 ]; then
    finish ok 0 ""
fi
finish FAIL "$code" "$(reason)"

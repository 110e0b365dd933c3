#!/usr/bin/env bash
# submit.sh -- `make slurm PARTITIONS="a100 h100" [EXPS="01 04"] [QUICK=1]
# [SBATCH_ARGS="--account=..."]`: the suite on a Slurm cluster, a job
# array per partition, and one table across the GPUs at the end.
#
#   1. builds once, here (the login node), for the SMs of the partitions'
#      GPUs (from sinfo's gres names; SMS="80 90" chooses), into B
#      (default build/slurm; build/slurm-cpu for a build without CUDA);
#   2. per partition, one job array, a task per experiment (the array
#      index is the experiment's number), each running its binary under
#      the label PREFIX/<the slug of the device it found>; --gres=gpu:1 on
#      partitions with GPUs, the whole node (--exclusive) for a CPU run;
#   3. one job after them all (--dependency=afterany): the run's summary
#      (results/slurm/<job>/summary.txt), the summary of every label and
#      the charts comparing the labels (rooflab compare), per experiment.
# Every job is submitted held and released once all are in, so a failure
# half way cancels what was submitted. Output and error files go to
# results/slurm/<job>/ (<job>: the first array's id). Prints the job ids
# and squeue --me.
#
# Environment (make slurm passes its variables):
#   PARTITIONS        the partitions, one array each (required)
#   EXPS              the experiments (default all: 01 02 ...)
#   QUICK             --quick for short sweeps; empty: the full sweeps
#   BACKEND           auto (default: cuda where the partition has GPUs),
#                     cuda, or cpu (no --gres, no CUDA in the build)
#   PREFIX            labels are PREFIX/<device>; default reference for the
#                     full sweeps (as make reference), cluster for quick runs
#   SMS, SMS_DEFAULT  the SMs to build for (SMS given wins over the
#                     partitions' GPUs; SMS_DEFAULT when a GPU type is unknown)
#   TIME_LIMIT        minutes for every array (default: harness/ops/slurm/time-limits.tsv)
#   GRES              what a GPU task asks for (default gpu:1; none: no --gres)
#   CPUS              CPUs per GPU task (default 4: the CPU references)
#   SBATCH_ARGS       added to every sbatch (--account=..., --qos=...)
#   FINISH_PARTITION  where the summary job runs (default the first partition)
#   REFERENCE, ARGS   passed to every experiment, as for make exp-NN
#   B, NVCC, MAKE     the build folder, the CUDA compiler, make
#   SKIP_BUILD=1      use B as it is built
#   RL_SLURM_RUNS, RL_OUT, RL_PLOTS   the runs' folder (results/slurm), the
#                     results and plots roots (results, plots); for tests
#   RL_SLURM_RUN_FILE also write the run's id and its job ids to this file
#                     as key=value lines (run=ID, jobs=ID,ID,...: the arrays,
#                     then the summary job), for a script that waits on them
# Exit codes: 0 submitted; 1 the build or a submission failed (nothing
# stays submitted); 2 bad usage, or no sbatch here.
set -uo pipefail
cd "${0%/*}/../../.." || exit 2 # no dirname: without sbatch, PATH may hold nothing
case "${1:-}" in -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
# shellcheck source=harness/ops/slurm/lib.sh
. harness/ops/slurm/lib.sh

usage_error() { echo "make slurm: $*" >&2; exit 2; }
say() { echo "slurm: $*"; }

command -v sbatch >/dev/null 2>&1 ||
    usage_error "sbatch not found: this submits to a Slurm cluster, run it where sbatch is (a login node)"
[ -n "${PARTITIONS:-}" ] && [ -n "${PARTITIONS// /}" ] ||
    usage_error 'usage: make slurm PARTITIONS="a100 h100" [EXPS="01 04"] [QUICK=1] [SBATCH_ARGS="--account=..."]'

MAKE=${MAKE:-make}
BACKEND=${BACKEND:-auto}
CPUS=${CPUS:-4}
RUNS=${RL_SLURM_RUNS:-results/slurm}
# shellcheck disable=SC2034 # written to run.env by name
OUT=${RL_OUT:-results} PLOTS=${RL_PLOTS:-plots}
read -ra partitions <<<"$PARTITIONS"
dup=$(printf '%s\n' "${partitions[@]}" | sort | uniq -d | head -n 1)
[ -z "$dup" ] || usage_error "PARTITIONS names $dup twice"
read -ra sbatch_extra <<<"${SBATCH_ARGS:-}"

case $BACKEND in auto | cuda | cpu) ;; *) usage_error "BACKEND=$BACKEND: auto, cuda or cpu" ;; esac
[[ ${TIME_LIMIT:-} =~ ^([1-9][0-9]*)?$ ]] || usage_error "TIME_LIMIT=$TIME_LIMIT: whole minutes, at least 1"
[[ $CPUS =~ ^[1-9][0-9]*$ ]] || usage_error "CPUS=$CPUS: a number of CPUs"

# The experiments, as two digits, each one this tree has.
known=" $(all_experiments) "
exps=()
for e in ${EXPS:-$known}; do
    [[ $e =~ ^[0-9]{1,2}$ ]] && e=$(printf '%02d' $((10#$e)))
    [[ $known == *" $e "* ]] || usage_error "EXPS: no experiment '$e' here (there are:$known)"
    exps+=("$e")
done

if [ -n "${QUICK:-}" ]; then mode=quick mode_flag=--quick; else mode=full mode_flag=--full; fi
PREFIX=${PREFIX:-$([ $mode = full ] && echo reference || echo cluster)}
[[ $PREFIX =~ ^[A-Za-z0-9._-]+$ ]] || usage_error "PREFIX=$PREFIX: letters, digits, . _ - only"
[ "$PREFIX/$mode" = reference/quick ] &&
    usage_error "quick runs do not go under reference/ (only full sweeps do): drop QUICK, or set PREFIX"
reference_flag=""
if [ "$PREFIX" = reference ]; then
    reference_flag="--reference none" # as make reference: the run is the reference
elif [ -n "${REFERENCE:-}" ]; then
    reference_flag="--reference $REFERENCE"
fi

# ---- the partitions: GPUs, backend, what each task asks for ---------------------
backends=() gres_asks=() notes=() sms=() unknown_types=()
for p in "${partitions[@]}"; do
    gres=$(partition_gres "$p")
    [ -n "$gres" ] || usage_error "no partition '$p' here (sinfo -p $p lists no node)"
    ask="" backend=$BACKEND
    if [ "$BACKEND" != cpu ]; then
        case ${GRES:-} in
            none) ;;
            "") has_gpus "$gres" && ask=gpu:1 ;;
            *) ask=$GRES ;;
        esac
        [ "$BACKEND" = auto ] && [ -n "$ask" ] && backend=cuda # a node without its GPU is an error, not a CPU run
    fi
    types=$(gpu_types_of "$gres")
    for t in $types; do
        if sm=$(sm_of_gpu_type "$t"); then
            sms+=("$sm")
        elif [ "$t" = "?" ]; then
            unknown_types+=("$p (a gpu gres without a type)")
        else
            unknown_types+=("$p's $t")
        fi
    done
    backends+=("$backend")
    gres_asks+=("$ask")
    if [ -n "$types" ]; then notes+=("GPUs: $types"); else notes+=("no GPUs in its gres"); fi
done

# ---- one build for every task ----------------------------------------------------
nvcc=${NVCC:-}
[ "$BACKEND" = cpu ] && nvcc="" # no task uses CUDA
if [ -n "${SMS:-}" ]; then
    build_sms=$SMS sms_why="SMS given"
elif [ ${#sms[@]} -gt 0 ] && [ ${#unknown_types[@]} -eq 0 ]; then
    build_sms=$(printf '%s\n' "${sms[@]}" | sort -nu | paste -sd' ' -) sms_why="the partitions' GPUs"
else
    build_sms=$(printf '%s\n' ${SMS_DEFAULT:-75 80 86 89 90} "${sms[@]}" | sort -nu | paste -sd' ' -)
    sms_why="the default SMS"
    [ ${#unknown_types[@]} -gt 0 ] &&
        sms_why+=", as the SM of ${unknown_types[*]} is not known (SMS=... to choose)"
fi
B=${B:-$([ -n "$nvcc" ] && echo build/slurm || echo build/slurm-cpu)}
if [ -n "$nvcc" ]; then
    say "build $B for SMS $build_sms ($sms_why)"
else
    say "build $B: the CPU backend only ($([ "$BACKEND" = cpu ] && echo BACKEND=cpu || echo "no nvcc"))"
fi
if [ -z "${SKIP_BUILD:-}" ]; then
    B="$B" harness/ops/deps.sh run || { echo "make slurm: packages missing (above): nothing submitted" >&2; exit 1; }
    "$MAKE" --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" B="$B" SMS="$build_sms" \
        NVCC="$nvcc" build || { echo "make slurm: the build failed (above): nothing submitted" >&2; exit 1; }
fi
for e in "${exps[@]}"; do
    [ -x "$B/exp-$e" ] || usage_error "$B/exp-$e is not built (drop SKIP_BUILD)"
done
[ -x "$B/rooflab" ] || usage_error "$B/rooflab is not built (drop SKIP_BUILD)"

# ---- time limits -------------------------------------------------------------------
limit=0
for e in "${exps[@]}"; do
    m=$(time_limit "$e" "$mode") || usage_error "no time limit for exp-$e in harness/ops/slurm/time-limits.tsv"
    [ "$m" -gt "$limit" ] && limit=$m
done
[ -n "${TIME_LIMIT:-}" ] && limit=$TIME_LIMIT
array=$(printf '%s\n' "${exps[@]}" | sed 's/^0//' | paste -sd, -)

# ---- submitting: everything held, then released ------------------------------------
mkdir -p "$RUNS" || usage_error "cannot create $RUNS"
RUNS=$(cd "$RUNS" && pwd)
ids=() run=""
undo() {
    [ ${#ids[@]} -gt 0 ] && scancel "${ids[@]}" 2>/dev/null
    [ -n "$run" ] && rm -rf "${RUNS:?}/$run"
}
fail() {
    undo
    echo "make slurm: $*: nothing stays submitted" >&2
    exit 1
}
trap 'fail "interrupted"' INT TERM

# submit ARGS...: sbatch --parsable --hold ARGS, the job id appended to ids.
submit() {
    local out id
    out=$(sbatch --parsable --hold "$@" 2>&1) || fail "sbatch failed: $(echo "$out" | tail -n 1)"
    id=${out%%;*} # --parsable prints "id" or "id;cluster"
    [[ $id =~ ^[0-9]+$ ]] || fail "sbatch printed no job id: $out"
    ids+=("$id")
}

for i in "${!partitions[@]}"; do
    p=${partitions[$i]} ask=${gres_asks[$i]} backend=${backends[$i]}
    opts=(--job-name="rooflab-$p" --partition="$p" --array="$array" --time="$limit" --chdir="$PWD")
    if [ -n "$ask" ]; then
        opts+=(--gres="$ask" --cpus-per-task="$CPUS")
    elif [ "$backend" != cuda ]; then
        opts+=(--exclusive) # a CPU run measures the node: no other task beside it
    fi
    # The first array's tasks name the run by their array id (%A); the later
    # ones are told it. Held, none starts before its folder exists.
    folder=${run:-%A}
    task_args=(--runs "$RUNS" --backend "$backend" --limit "$limit" ${run:+--run "$run"})
    submit "${opts[@]}" --output="$RUNS/$folder/$p/exp-%2a.out" --error="$RUNS/$folder/$p/exp-%2a.err" \
        "${sbatch_extra[@]}" harness/ops/slurm/task.sh "${task_args[@]}"
    if [ -z "$run" ]; then
        run=${ids[0]}
        for q in "${partitions[@]}"; do mkdir -p "$RUNS/$run/$q" || fail "cannot create $RUNS/$run/$q"; done
    fi
done
finish_partition=${FINISH_PARTITION:-${partitions[0]}}
dependency=afterany:$(IFS=:; echo "${ids[*]}")
submit --job-name=rooflab-summary --partition="$finish_partition" --dependency="$dependency" \
    --time=30 --chdir="$PWD" --output="$RUNS/$run/summary.out" --error="$RUNS/$run/summary.err" \
    "${sbatch_extra[@]}" harness/ops/slurm/finish.sh --runs "$RUNS" --run "$run"
finish_job=${ids[-1]}

# What the tasks and the summary job read: this run's settings.
{
    for v in RUN RUNS OUT PLOTS B MODE MODE_FLAG PREFIX REFERENCE_FLAG ARGS PARTITIONS EXPS \
        ARRAY_JOBS BACKENDS GRES_ASKS LIMIT FINISH_JOB SUBMITTED COMMIT; do
        case $v in
            RUN) val=$run ;; MODE) val=$mode ;; MODE_FLAG) val=$mode_flag ;;
            REFERENCE_FLAG) val=$reference_flag ;; ARGS) val=${ARGS:-} ;;
            PARTITIONS) val="${partitions[*]}" ;; EXPS) val="${exps[*]}" ;;
            ARRAY_JOBS) val="${ids[*]:0:${#partitions[@]}}" ;; BACKENDS) val="${backends[*]}" ;;
            GRES_ASKS) val=$(printf '%s\n' "${gres_asks[@]}" | sed 's/^$/-/' | paste -sd' ' -) ;;
            LIMIT) val=$limit ;; FINISH_JOB) val=$finish_job ;;
            SUBMITTED) val=$(date -u +%Y-%m-%dT%H:%M:%SZ) ;;
            COMMIT) val=$(git describe --always --dirty 2>/dev/null || echo "${ROOFLAB_GIT_COMMIT:-?}") ;;
            *) val=${!v} ;;
        esac
        printf '%s=%q\n' "$v" "$val"
    done
} | write_file "$RUNS/$run/run.env" || fail "cannot write $RUNS/$run/run.env"
# The run and its jobs as data, for a script (tests/test-slurm.sh), which
# would otherwise read them from the table printed below.
if [ -n "${RL_SLURM_RUN_FILE:-}" ]; then
    printf 'run=%s\njobs=%s\n' "$run" "$(IFS=,; echo "${ids[*]}")" | write_file "$RL_SLURM_RUN_FILE" ||
        fail "cannot write RL_SLURM_RUN_FILE $RL_SLURM_RUN_FILE"
fi

scontrol release "$(IFS=,; echo "${ids[*]}")" >/dev/null || fail "scontrol release failed"
trap - INT TERM

# ---- what was submitted --------------------------------------------------------------
shown=${RUNS#"$PWD"/}
say "run $run: $shown/$run/ ($mode sweeps, labels $PREFIX/<device>, experiments ${exps[*]})"
printf '  %-12s %-8s %-14s %-11s %-8s %s\n' partition job "experiments" "time limit" backend asks
for i in "${!partitions[@]}"; do
    ask=${gres_asks[$i]}
    [ -z "$ask" ] && { [ "${backends[$i]}" = cuda ] && ask="no gres" || ask="whole node (--exclusive)"; }
    printf '  %-12s %-8s %-14s %-11s %-8s %s; %s\n' "${partitions[$i]}" "${ids[$i]}" "${exps[*]}" \
        "$limit min" "${backends[$i]}" "$ask" "${notes[$i]}"
done
printf '  %-12s %-8s after every task ends (afterany): %s\n' summary "$finish_job" \
    "$shown/$run/summary.txt"
say "task output: $shown/$run/<partition>/exp-NN.{out,err}; watch them with: squeue --me"
squeue --me

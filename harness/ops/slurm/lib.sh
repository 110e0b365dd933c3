# shellcheck shell=bash
# lib.sh -- what submit.sh, task.sh and finish.sh share: the GPU types
# Slurm names, their SM, the time-limit table, the result records.
# Sourced, not run; the caller has cd'ed to the repository root.

# The CUDA architecture (SM) of a GPU type as clusters name it in gres
# (gpu:a100:4, gpu:nvidia_h100_80gb_hbm3:8, gpu:tesla_t4:1): matched on
# the lowercased name, longest names first (a100 before a10, l40 before l4).
sm_of_gpu_type() {
    local t=${1,,}
    case $t in
        *gh200* | *h100* | *h200* | *h800*) echo 90 ;;
        *gb200* | *b200* | *b100*) echo 100 ;;
        *rtx_pro_6000* | *rtxpro6000* | *5090* | *5080*) echo 120 ;;
        *a100* | *a800* | *a30*) echo 80 ;;
        *l40* | *4090* | *4080* | *6000ada* | *6000_ada* | *ada*) echo 89 ;;
        *a10* | *a40* | *a16* | *a6000* | *a5000* | *3090* | *3080*) echo 86 ;;
        *l4*) echo 89 ;;
        *t4* | *2080* | *quadro_rtx*) echo 75 ;;
        *v100*) echo 70 ;;
        *) return 1 ;;
    esac
}

# The generic resources of a partition's nodes, comma-joined ("(null)"
# where none); nothing when Slurm knows no such partition.
partition_gres() {
    sinfo -h -p "$1" -o '%G' 2>/dev/null | sort -u | paste -sd, -
}

# The GPU type names in a gres string: gpu:a100:4(S:0-1),gpu:h100:2 gives
# "a100 h100"; a count without a type (gpu:4) gives "?".
gpu_types_of() {
    local item rest
    local IFS=,
    for item in $1; do
        item=${item%%(*}
        [[ $item == gpu:* ]] || continue
        rest=${item#gpu:}
        if [[ $rest == *:* ]]; then echo "${rest%%:*}"; else echo "?"; fi
    done | sort -u | paste -sd' ' -
}

has_gpus() { [[ ,$1 == *,gpu:* ]]; }

# time_limit EXP MODE (quick or full): minutes, from time-limits.tsv.
time_limit() {
    awk -v e="$1" -v col="$([ "$2" = quick ] && echo 2 || echo 3)" \
        '!/^#/ && $1 == e { print $col; found = 1 } END { exit !found }' \
        harness/ops/slurm/time-limits.tsv
}

# The experiments this tree has: 01 02 ...
all_experiments() {
    local d
    for d in experiments/[0-9][0-9]-*/; do d=${d#experiments/}; echo "${d%%-*}"; done | paste -sd' ' -
}

# read_result FILE: sets the r_<key> variables from a task's record
# (key=value lines; read, never sourced).
# shellcheck disable=SC2034 # the callers read them
read_result() {
    local k v
    r_exp="" r_partition="" r_node="" r_job="" r_label="" r_backend="" r_exit="" r_result=""
    r_seconds="" r_note=""
    while IFS='=' read -r k v; do
        case $k in
            exp | partition | node | job | label | backend | exit | result | seconds | note)
                printf -v "r_$k" '%s' "$v" ;;
        esac
    done <"$1"
}

# write_file PATH: stdin into PATH, whole or not at all (a temporary file
# beside it, renamed).
write_file() {
    local tmp
    tmp=$(mktemp "$(dirname "$1")/.$(basename "$1").tmp.XXXXXX") || return 1
    # mktemp's file is the owner's only; results are shared, as umask says.
    if cat >"$tmp" && chmod "$(printf '%o' $((0666 & ~$(umask))))" "$tmp" && mv -f "$tmp" "$1"; then
        return 0
    fi
    rm -f "$tmp"
    return 1
}

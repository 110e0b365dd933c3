# gpu-order.sh -- the order of the experiments on a lent GPU: make gpu-day's
# lab runs, and the --quick runs of make check-gpu and make gpu-day (lab
# order). What has never run on a GPU goes first, so that a lease cut short
# cuts what has run before. Sourced by tests/gpu-lib.sh (it needs its
# capped); compute_order sets the array order and prints why.
#
#   1. GPU_DAY_FIRST, when given (an override: "07 04"), as given;
#   2. the experiments that never ran on a GPU: no lease log of theirs
#      (results/reference/*/gpu-day-logs/<lease>/.../exp-NN.log whose
#      backend line says cuda) and no CUDA CSV (results/reference/*/
#      exp-NN.csv with '# backend: cuda');
#   3. those that ran on one and never finished there: no whole CUDA CSV
#      (none, or only a partial one: '# partial:', a run its cap stopped);
#   4. those whose kernels' .cu/.cuh files changed since the commit of the
#      last GPU run (the newest gpu-day-logs/*/system.txt, its
#      ROOFLAB_GIT_COMMIT line, else its "== git" line) or that are new
#      since;
#   5. those where only shared CUDA code (harness/*.cu), the headers their
#      .cu files include or their own experiments/NN-*/ sources changed;
#   6. the rest;
# by number within each. 2 and 3 need only the tree's files (the lease
# logs are checked in); 4 to 6 need git and that commit. Without them
# (a copy of the tree without .git, git missing, the commit not in it),
# what 1 to 3 leave follows GPU_DAY_DEFAULT_ORDER, what the rule gave when
# it was last written down, with the experiments it does not list (newer
# than it) first. Without any lease log, 2 and 3 are not known, and
# GPU_DAY_DEFAULT_ORDER orders all.

GPU_DAY_EXPS=${GPU_DAY_EXPS:-}
order=() # compute_order sets it
GPU_DAY_FIRST=${GPU_DAY_FIRST:-}
# The rule's answer at ce47dd2 against 085351b, the commit of lease3-lab:
# exp-07 and exp-08 never ran on a GPU (new since), exp-04 never finished
# there (its lab run ran past its cap; no CUDA CSV); then gemv.cu and
# cublas_handle.cuh (exp-02), quant.cu (exp-03), fusion.cu (exp-05) among
# the kernels' .cu files; harness/*.cu for all.
GPU_DAY_DEFAULT_ORDER=${GPU_DAY_DEFAULT_ORDER:-07 08 04 02 03 05 01 06}

# ---- what ran on a GPU: the lease logs and the CUDA CSVs ------------------------

have_lease_logs() { compgen -G 'results/reference/*/gpu-day-logs/*/system.txt' >/dev/null; }

# ran_on_a_gpu N: a lease log of experiment N from a run on the CUDA
# backend (its story's "backend cuda" line: it got past opening the GPU).
ran_on_a_gpu() {
    local f
    for f in results/reference/*/gpu-day-logs/*/exp-"$1".log \
        results/reference/*/gpu-day-logs/*/*/exp-"$1".log; do
        [ -f "$f" ] && grep -q -m1 '^backend *cuda' "$f" && return 0
    done
    return 1
}

# finished_on_a_gpu N: a whole CSV of experiment N from the CUDA backend
# under results/reference/ (its header says backend cuda, and not partial).
finished_on_a_gpu() {
    local f header
    for f in results/reference/*/exp-"$1".csv; do
        [ -f "$f" ] || continue
        header=$(sed '/^[^#]/q' "$f")
        grep -q '^# backend: cuda$' <<<"$header" && ! grep -q '^# partial:' <<<"$header" && return 0
    done
    return 1
}

# ---- what changed since the last GPU run: git ------------------------------------

# The commit of the last GPU run: from the newest lease's system.txt (by
# its "== date" line), its ROOFLAB_GIT_COMMIT line when set (a copy of
# the tree: its .git, if any, can be stale -- lease3-lab's "== git" says
# 9575f3d-dirty for a tree of 085351b), else its "== git" line. Sets
# last_commit and last_source (file:line).
find_last_gpu_run() {
    local f t newest=0 n c
    last_commit="" last_source=""
    for f in results/reference/*/gpu-day-logs/*/system.txt; do
        [ -f "$f" ] || continue
        t=$(date -d "$(sed -n '/^== date$/{n;p;q}' "$f")" +%s 2>/dev/null) || continue
        [ "$t" -gt "$newest" ] || continue
        n=$(grep -n -m1 '^ROOFLAB_GIT_COMMIT=.' "$f" | cut -d: -f1)
        if [ -n "$n" ]; then
            c=$(sed -n "${n}s/^ROOFLAB_GIT_COMMIT=//p" "$f")
        else
            n=$(($(grep -n -m1 '^== git$' "$f" | cut -d: -f1) + 1))
            c=$(sed -n "${n}{s/-dirty\$//;s/.*-g//;p}" "$f")
        fi
        [ -n "$c" ] || continue
        newest=$t last_commit=$c last_source=$f:$n
    done
}

# The CUDA sources of experiment N's kernels: the families its sources
# list (FAMILIES[] = {&gemm_family, ...}), each defined in kernels/*.c with
# its .cu file ({"gemm", "cpu/gemm.c", "gemm.cu", ...}). cu_sources N
# prints the .cu files and the .cuh they include; cu_headers N the other
# headers of kernels/ they include.
cu_files() {
    local fam cu
    for fam in $(grep -ho '&[a-z0-9_]*_family' experiments/"$1"-*/*.c 2>/dev/null | tr -d '&' | sort -u); do
        cu=$(grep -h "kernel_family $fam = {" kernels/*.c |
            sed -n 's/.*= *{ *"[^"]*", *"[^"]*", *"\([^"]*\.cu\)".*/\1/p' | head -n1)
        [ -n "$cu" ] && [ -f "kernels/$cu" ] && echo "kernels/$cu"
    done | sort -u
}
cu_includes() { # FILE...: the files of kernels/ they include
    local f inc
    for f in "$@"; do
        for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
            [ -f "kernels/$inc" ] && echo "kernels/$inc"
        done
    done | sort -u
}
cu_sources() {
    local cus
    cus=$(cu_files "$1")
    # shellcheck disable=SC2086
    { echo "$cus"; cu_includes $cus | grep '\.cuh$'; } | sed '/^$/d' | sort -u
}
cu_headers() {
    # shellcheck disable=SC2046
    cu_includes $(cu_files "$1") | grep -v '\.cuh$'
}

# changed_since COMMIT FILE...: those of FILE... that differ from COMMIT in
# the working tree (uncommitted changes count: they are what runs) or
# that COMMIT lacks.
changed_since() {
    local c=$1 f
    shift
    for f in "$@"; do
        if ! capped 10 git cat-file -e "$c:$f" 2>/dev/null; then
            echo "$f"
        elif ! capped 10 git diff --quiet "$c" -- "$f" 2>/dev/null; then
            echo "$f"
        fi
    done
}

# Why git cannot order (empty when it can): no git, no .git, or the last
# GPU run's commit not in it. Needs find_last_gpu_run.
git_unusable() {
    if ! command -v git >/dev/null 2>&1; then
        echo "git is not installed here"
    elif ! capped 10 git rev-parse --git-dir >/dev/null 2>&1; then
        echo "no .git here (a copy of the tree)"
    elif [ -z "$last_commit" ] || ! capped 10 git cat-file -e "$last_commit^{commit}" 2>/dev/null; then
        echo "the last GPU run's commit ${last_commit:-?} (${last_source:-no system.txt}) is not in this .git"
    fi
}

# ---- the order ---------------------------------------------------------------------

exp_dir() { # N: experiments/NN-name/
    local d=(experiments/"$1"-*/)
    echo "${d[0]}"
}
# exp_numbers: the experiments of the tree (experiments/NN-*/main.c).
exp_numbers() {
    local d
    for d in experiments/[0-9][0-9]-*/main.c; do
        [ -f "$d" ] || continue
        d=${d#experiments/}
        echo "${d%%-*}"
    done
}

# by_git N...: tiers 4 to 6 of N... (the experiments not placed yet), as
# changed_kernels, changed_code and unchanged; prints why.
by_git() {
    local n d shared ch
    changed_kernels="" changed_code="" unchanged=""
    echo "last GPU run: commit ${last_commit:0:12} ($last_source)"
    # shellcheck disable=SC2046
    shared=$(changed_since "$last_commit" $(ls harness/*.cu harness/*.cuh 2>/dev/null) | tr '\n' ' ')
    for n in "$@"; do
        d=$(exp_dir "$n")
        if ! capped 10 git cat-file -e "$last_commit:${d}main.c" 2>/dev/null; then
            changed_kernels="$changed_kernels $n" && echo "  exp-$n: new since then"
            continue
        fi
        # shellcheck disable=SC2046
        ch=$(changed_since "$last_commit" $(cu_sources "$n") | tr '\n' ' ')
        if [ -n "$ch" ]; then
            changed_kernels="$changed_kernels $n" && echo "  exp-$n: its kernels changed: $ch"
            continue
        fi
        # shellcheck disable=SC2046
        ch=$(changed_since "$last_commit" $(cu_headers "$n") $(ls "$d"*.c "$d"*.h 2>/dev/null) | tr '\n' ' ')
        if [ -n "$ch$shared" ]; then
            changed_code="$changed_code $n" && echo "  exp-$n: shared or own code changed: ${shared}${ch}"
        else
            unchanged="$unchanged $n" && echo "  exp-$n: unchanged"
        fi
    done
}

# by_default N...: N... in GPU_DAY_DEFAULT_ORDER's order, those it does
# not list (newer than it) first.
by_default() {
    local n listed=" $GPU_DAY_DEFAULT_ORDER " left=" $* "
    for n in "$@"; do [[ $listed == *" $n "* ]] || echo "$n"; done
    for n in $GPU_DAY_DEFAULT_ORDER; do [[ $left == *" $n "* ]] && echo "$n"; done
}

# compute_order: sets order (the experiments' numbers) and prints why.
compute_order() {
    local n all=() rest=() never="" unfinished="" first="" why
    order=()
    if [ -n "$GPU_DAY_EXPS" ]; then
        read -ra order <<<"$GPU_DAY_EXPS"
        echo "order: ${order[*]} (GPU_DAY_EXPS)"
        return
    fi
    mapfile -t all < <(exp_numbers)
    for n in $GPU_DAY_FIRST; do
        [[ " ${all[*]} " == *" $n "* ]] && first="$first $n"
    done
    if have_lease_logs; then
        for n in "${all[@]}"; do
            [[ " $first " == *" $n "* ]] && continue
            if finished_on_a_gpu "$n"; then
                rest+=("$n")
            elif ran_on_a_gpu "$n"; then
                unfinished="$unfinished $n" && echo "  exp-$n: ran on a GPU, never finished there (a lease log, no whole CUDA CSV)"
            else
                never="$never $n" && echo "  exp-$n: never ran on a GPU (no lease log, no CUDA CSV)"
            fi
        done
    else
        echo "  (no lease logs, results/reference/*/gpu-day-logs/: what never ran on a GPU is not known)"
        for n in "${all[@]}"; do [[ " $first " == *" $n "* ]] || rest+=("$n"); done
    fi
    # shellcheck disable=SC2206
    order=($first $never $unfinished)
    local head="${first:+GPU_DAY_FIRST:$first; }never ran on a GPU:${never:- none}; never finished on one:${unfinished:- none}"
    find_last_gpu_run
    why=$(git_unusable)
    if [ -n "$why" ]; then
        mapfile -t -O "${#order[@]}" order < <(by_default "${rest[@]}")
        echo "order: ${order[*]} ($head; then GPU_DAY_DEFAULT_ORDER, new experiments first: $why)"
        return
    fi
    by_git "${rest[@]}"
    # shellcheck disable=SC2206
    order+=($changed_kernels $changed_code $unchanged)
    echo "order: ${order[*]} ($head; changed kernels:${changed_kernels:- none}; shared or own code:${changed_code:- none}; unchanged:${unchanged:- none})"
}

# gpu-day-plan.sh -- what make gpu-day plans before it starts: the time
# estimates (each a default with the lease log's file:line it comes from,
# or how it was derived) and the experiments' budgets; their order is
# tests/gpu-order.sh's. Sourced by tests/gpu-day.sh, after its variables;
# not run.

# ---- the estimates -----------------------------------------------------------
# estimate VAR SECONDS SOURCE [WHY]: VAR's default, SECONDS, measured on an
# H200 where SOURCE (file:line under LEASE_LOGS) says, or "derived" (WHY
# says from what: never a number made up for the GPU machine); a value
# already in the environment wins, and the plan then says "override".
LEASE_LOGS=results/reference/h200/gpu-day-logs
est_vars=()
declare -A est_src est_why
estimate() {
    local var=$1
    est_vars+=("$var")
    if [ -n "${!var:-}" ]; then
        est_src[$var]="override (default $2: $3)"
    else
        printf -v "$var" %s "$2"
        est_src[$var]=$3
    fi
    est_why[$var]=${4:-}
}
# lease2-quick (2026-11-30): the checks with the quick runs, then full
# sweeps that ran past their caps.
estimate EST_PROBE_S 1 lease2-quick/summary.txt:4
estimate EST_DEPS_S 5 lease2-quick/summary.txt:5 "from bundle/"
# The build from an empty build folder (a bare GPU machine): the leases'
# build times (lease2-quick/summary.txt:6, lease3-lab/summary.txt:6) do not
# say whether their build folder was empty (issue 47 reads them as warm
# builds), so the estimate is derived from a cold build timed job by job
# on a 2-core VM: `make B=<empty> -j2 SMS=90 build-tests` with SHELL= a
# wrapper that logs each recipe's CPU time (/usr/bin/time), the CPU time
# being what a job needs whatever else runs. At -j16 a list schedule
# takes at least the longest chain of jobs that wait for each other and
# at most the jobs' sum / 16 + that chain (Graham's bound): here the
# slowest nvcc object, then the generated kernel_resources.c, the archive
# and the test binary's link. The GPU machine's cores may be faster or
# slower than this VM's (an Intel Xeon): the cap (CAP_BUILD_S) covers it.
estimate EST_BUILD_S 8 derived \
    "cold build-tests SMS=90 at ce47dd2 on a 2-core VM: 53.7 s of jobs' CPU (nvcc 18.8 s), the longest chain 3.8 s (attention.cu 3.5 s); at -j16 3.8 to 53.7 / 16 + 3.8 = 7.2 s"
estimate EST_CUDA_TESTS_S 8 lease3-lab/summary.txt:7 "7 s in lease2-quick/summary.txt:7"
estimate EST_QUICK_01_S 29 lease2-quick/summary.txt:8 "without --budget"
estimate EST_QUICK_02_S 9 lease2-quick/summary.txt:9
estimate EST_QUICK_03_S 9 lease2-quick/summary.txt:10
estimate EST_QUICK_04_S 40 lease2-quick/summary.txt:11 "at least: stopped at its 40 s cap"
estimate EST_QUICK_05_S 13 lease2-quick/summary.txt:12
estimate EST_QUICK_06_S 25 lease2-quick/summary.txt:13
estimate EST_SANITIZER_S 9 lease2-quick/summary.txt:14
estimate EST_CEILINGS_FULL_S 36 lease2-quick/reference/exp-01.log:17 \
    "a full run measures the ceilings itself, every time: \"36 s of it so far\" at its plan"
# lease3-lab (the same H200, GPU_DAY_MODE=lab, exp-04 first): the lab runs,
# the ceilings measured by the first and reused (cached) by the others.
estimate EST_CEILINGS_LAB_S 9 lease3-lab/reference/exp-04.log:16 \
    "the first lab run measures them (\"9 s of it so far\"; exp-04.log:9 \"measured now\"), the later ones reuse them"
estimate EST_LAB_01_S 78 lease3-lab/summary.txt:15 "ceilings cached"
estimate EST_LAB_02_S 30 lease3-lab/summary.txt:12 "ceilings cached"
estimate EST_LAB_03_S 130 derived \
    "32 s in lease3-lab/summary.txt:11 (ceilings cached), 18 points, before the batch part; its 96 points (8 M x 6 formats x 2 paths) at the lab stop rule's 1 s time limit each: 32 + 96 = 128 s"
estimate EST_LAB_04_S 179 lease3-lab/reference/exp-04.log:16 \
    "its plan's upper end, 2 min 59 s: it ran past its 120 s cap (lease3-lab/summary.txt:10)"
estimate EST_LAB_05_S 65 lease3-lab/reference/exp-05.log:16 \
    "its plan's upper end: it ran past its 40 s cap (lease3-lab/summary.txt:13)"
estimate EST_LAB_06_S 107 lease3-lab/reference/exp-06.log:16 \
    "its plan's upper end, 1 min 47 s: it ran past its 55 s cap (lease3-lab/summary.txt:14)"
estimate EST_SUMMARY_S 0 lease3-lab/summary.txt:16 "rooflab summary"
# Not timed in the lease logs: --print-label and system.txt ran uncapped
# and untimed; the tarball was written after summary.txt.
estimate EST_LABEL_S 2 - "not in the lease logs (an untimed call then); CUDA's start"
estimate EST_SYSTEM_S 2 - "not in the lease logs (untimed then): nvidia-smi -q, nvcc --version, git"
estimate EST_PACK_S 1 - "not in the lease logs (packed after summary.txt was written); 0.3 s for results/ + plots/ on a 2-core VM"

# quote SOURCE: the line SOURCE (file:line under LEASE_LOGS) names, its
# spaces squeezed, so the plan shows what each estimate stands on.
quote() {
    local file=${1%:*} line=${1##*:}
    [ -f "$LEASE_LOGS/$file" ] || { echo "(no $LEASE_LOGS/$file)"; return; }
    sed -n "${line}p" "$LEASE_LOGS/$file" | tr -s ' ' | cut -c1-110
}

print_estimates() {
    local v src
    echo "estimates (seconds on an H200; sources under $LEASE_LOGS/, file:line, or derived: from what):"
    for v in "${est_vars[@]}"; do
        src=${est_src[$v]}
        printf '  %-20s %4s  %s\n' "$v" "${!v}" "$src${est_why[$v]:+ -- ${est_why[$v]}}"
        case $src in
        override* | - | derived) ;;
        *) printf '  %-20s       | %s\n' "" "$(quote "$src")" ;;
        esac
    done
}

# est_lab N: the lab estimate (or full: plus its own ceilings) of experiment N.
est_lab() {
    local var=EST_LAB_${1}_S e
    e=${!var:-$GPU_DAY_EST_NEW_S}
    [ "$GPU_DAY_MODE" = full ] && e=$((e + EST_CEILINGS_FULL_S))
    echo "$e"
}
est_source() {
    local var=EST_LAB_${1}_S src
    src=${est_src[$var]:-"none: no lease log yet (GPU_DAY_EST_NEW_S)"}
    [ "$GPU_DAY_MODE" = full ] && src="$src + its ceilings, EST_CEILINGS_FULL_S"
    echo "$src"
}

# ---- the budgets ---------------------------------------------------------------
# lab_budget LEFT N...: the --budget of experiment N (the first) when LEFT
# seconds remain for N... (the reserve already out): LEFT less each one's
# margin and packing, shared in proportion to their estimates (the first
# lab run also measures the ceilings: extra_first_s), divided by 1.1 so
# that the caps add up to LEFT. A fixed CAP_EXP_NN_S gives its own.
lab_budget() {
    local left=$1 n sum=0 first=$2 e b cap_var
    shift
    cap_var=CAP_EXP_${first}_S
    [ -n "${!cap_var:-}" ] && { budget_for "${!cap_var}"; return; }
    for n in "$@"; do sum=$((sum + $(est_lab "$n"))); done
    sum=$((sum + extra_first_s))
    [ "$sum" -gt 0 ] || sum=1 # every estimate overridden to 0
    e=$(($(est_lab "$first") + extra_first_s))
    left=$((left - $# * (GPU_DAY_STEP_MARGIN_S + EST_PACK_S)))
    b=$((left > 0 ? left * e * 10 / (11 * sum) : 0))
    [ "$b" -lt "$GPU_DAY_MIN_BUDGET_S" ] && b=$GPU_DAY_MIN_BUDGET_S
    echo "$b"
}
lab_cap() { # N BUDGET
    local cap_var=CAP_EXP_${1}_S
    echo "${!cap_var:-$(cap_for "$2")}"
}

# The checks' expected seconds, from the estimates.
checks_estimate() {
    local t=$((EST_SYSTEM_S + EST_PROBE_S + EST_DEPS_S + EST_BUILD_S + EST_CUDA_TESTS_S + EST_SANITIZER_S + EST_LABEL_S + EST_PACK_S))
    local n var q
    if [ "$GPU_DAY_QUICK" != 0 ]; then
        for n in $(exp_numbers); do
            var=EST_QUICK_${n}_S
            q=${!var:-$CAP_EXP_QUICK_S}
            t=$((t + (q < CAP_EXP_QUICK_S ? q : CAP_EXP_QUICK_S)))
        done
    fi
    echo "$t"
}

# print_plan: the budgets the day expects, had every step its estimate
# (the real ones are computed again before each experiment, from the
# time then left).
print_plan() {
    local checks left k n b cap e took
    checks=$(checks_estimate)
    [ "$checks" -gt "$CHECK_GPU_BUDGET_S" ] && checks=$CHECK_GPU_BUDGET_S
    left=$((GPU_DAY_BUDGET_S - checks - PACK_RESERVE_S))
    echo "plan: ${GPU_DAY_BUDGET_S} s (GPU_DAY_BUDGET_S): the checks ~${checks} s" \
        "(of CHECK_GPU_BUDGET_S=${CHECK_GPU_BUDGET_S}; quick runs --budget ${QUICK_BUDGET_S}, cap ${CAP_EXP_QUICK_S} s)," \
        "${PACK_RESERVE_S} s kept for the summary and the last tarball, ${left} s for the $GPU_DAY_MODE runs:"
    printf '  %-7s %6s %6s %6s  %s\n' exp est budget cap "estimate's source"
    extra_first_s=$([ "$GPU_DAY_MODE" = lab ] && echo "$EST_CEILINGS_LAB_S" || echo 0)
    # shellcheck disable=SC2154 # order: compute_order's (tests/gpu-order.sh)
    for ((k = 0; k < ${#order[@]}; k++)); do
        n=${order[k]}
        b=$(lab_budget "$left" "${order[@]:k}")
        cap=$(lab_cap "$n" "$b")
        e=$(($(est_lab "$n") + extra_first_s))
        printf '  exp-%-3s %5ss %5ss %5ss  %s%s\n' "$n" "$e" "$b" "$cap" "$(est_source "$n")" \
            "$([ "$extra_first_s" -gt 0 ] && echo " + the ceilings, EST_CEILINGS_LAB_S")"
        took=$((e < cap ? e : cap))
        left=$((left - took - EST_PACK_S))
        extra_first_s=0
    done
    echo "  (expected: ${left} s to spare; each budget is computed again before its run, from the time then left)"
}

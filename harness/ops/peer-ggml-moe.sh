#!/usr/bin/env bash
# harness/ops/peer-ggml-moe.sh -- make peer-ggml-moe: experiment 08's CPU
# MoE layer (the active experts) beside ggml's MUL_MAT_ID, on this machine,
# in one session. It builds ggml's test-backend-ops (harness/ops/ggml-lib.sh),
# then, ROUNDS times, alternating:
#   ours:  $B/exp-08 --moe-shape E,K,B,M,N --cache hot --backend cpu
#          (moe_active, validated first; one routing, repeated)
#   ggml:  test-backend-ops perf -o MUL_MAT_ID -b CPU -p REGEX, the perf
#          case of the same shape: F16 experts (n_mats = E of m = M rows by
#          k = N), n_used = K, n = B tokens, F32 tokens; its ids are each
#          token's K distinct experts, drawn once and repeated
# and writes the best of the rounds per shape and side to
# results/LABEL/peers-moe.csv and the side-by-side table on the console
# (both with every thread of the machine).
#
#   SHAPES="E,K,B,M,N ..."  the shapes (default: ggml's Qwen3-30B-A3B cases,
#                   128 experts of 768 x 2048, top-8, B = 1, 4, 8, 32, 64,
#                   and its 32-expert case, 1792 x 2048, top-4, B = 1 and 8);
#                   a shape ggml has no perf case for is an error
#   ROUNDS=N        alternating rounds (default 2; at most 10)
#   LABEL=name      results/LABEL/ (default: exp-08's label for this machine)
#   B               our build folder (default build)
#   RESULTS         the results root (default results)
#   GGML_SRC, GGML_COMMIT: harness/ops/ggml-lib.sh
set -uo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
RESULTS=${RESULTS:-results}
ROUNDS=${ROUNDS:-2}
SHAPES=${SHAPES:-128,8,1,768,2048 128,8,4,768,2048 128,8,8,768,2048 128,8,32,768,2048 128,8,64,768,2048 32,4,1,1792,2048 32,4,8,1792,2048}
die() { echo "peer-ggml-moe: $*" >&2; exit 2; }

[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $ROUNDS -le 10 ]] || die "ROUNDS wants 1 to 10, not '$ROUNDS'"
for s in $SHAPES; do
    [[ $s =~ ^[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+$ ]] || die "SHAPES wants E,K,B,M,N items (e.g. 128,8,1,768,2048), not '$s'"
done
[ -x "$B/exp-08" ] || die "$B/exp-08 is not built (make build)"
# the rooflab command writes the CSV (as the experiments write theirs) and reads it back
[ -x "$B/rooflab" ] || die "$B/rooflab is not built (make build)"
LABEL=${LABEL:-$("$B/exp-08" --backend cpu --print-label)} || die "exp-08 --print-label failed"

# shellcheck source=harness/ops/ggml-lib.sh
. harness/ops/ggml-lib.sh
ggml_build # sets src, commit, tbo and peer

declare -A OURS_MS GGML_MS OURS_ALL GGML_ALL
ceilings=$RESULTS/$LABEL/ceilings.csv

# ggml's regular expression for a shape (its vars(): type_a, type_b, n_mats, n_used, b, m, n, k).
ggml_regex() {
    local e k b m n
    IFS=, read -r e k b m n <<<"$1"
    echo "type_a=f16,type_b=f32,n_mats=$e,n_used=$k,b=0,m=$m,n=$b,k=$n\$"
}

ours_round() {
    local r=$1 s log rows ms
    for s in $SHAPES; do
        log=$peer/ours-moe-$r-${s//,/x}.log rows=$peer/ours-moe-$r-${s//,/x}.csv
        local flags=(--moe-shape "$s" --cache hot --backend cpu --label "$LABEL" --out "$RESULTS" --no-plot
                     --rows-file "$rows")
        [ -f "$ceilings" ] && flags+=(--ceilings "$ceilings")
        "$B/exp-08" "${flags[@]}" >"$log" 2>&1 || die "exp-08 --moe-shape $s failed (round $r): $log"
        # its rows as data (--rows-file), not its printed table
        ms=$(ours_ms "$rows" part=moe_batch variant=moe_active) || die "cannot read $rows"
        [ -n "$ms" ] || die "no validated moe_active row in $rows"
        echo "  round $r ours  $s moe_active $ms ms"
        OURS_ALL[$s]+="${OURS_ALL[$s]:+ }$ms"
        OURS_MS[$s]=$(best_of "$ms" "${OURS_MS[$s]:-}")
    done
}
ggml_round() { ggml_shapes_round "$1" MUL_MAT_ID; }

cpu=$(cpu_name)
flags=$(cpu_flags)
echo "peer-ggml-moe: shapes $SHAPES, $(nproc) threads, on $cpu ($flags); ggml $commit; $ROUNDS rounds"
alternate_rounds

out=$RESULTS/$LABEL
mkdir -p "$out" || die "cannot make $out"
# One row a shape, its cells tab-separated, for rooflab csv-write.
peer_rows() {
    local s e k b m n mib ratio
    for s in $SHAPES; do
        IFS=, read -r e k b m n <<<"$s"
        mib=$(awk -v e="$e" -v k="$k" -v b="$b" -v m="$m" -v n="$n" 'BEGIN { t = k * b < e ? k * b : e; printf "%.1f", t * m * n * 2 / 1048576 }')
        ratio=$(awk -v a="${OURS_MS[$s]}" -v b="${GGML_MS[$s]}" 'BEGIN { printf "%.3f", a / b }')
        printf '%s\t' "$s" "$mib" "${OURS_MS[$s]}" "${GGML_MS[$s]}" "$ratio" "${OURS_ALL[$s]}"
        printf '%s\n' "${GGML_ALL[$s]}"
    done
}
peer_rows | "$B/rooflab" csv-write "$out/peers-moe.csv" \
    --meta "about=experiment 08's CPU MoE layer (the active experts) beside ggml's MUL_MAT_ID (F16 experts, F32 tokens), best of $ROUNDS alternating rounds" \
    --meta "rounds=$ROUNDS" \
    --meta "cpu=$cpu" \
    --meta "cpu_flags=$flags" \
    --meta "threads=$(nproc)" \
    --meta "ggml_commit=$commit" \
    --meta "ours=$B/exp-08 --moe-shape E,K,B,M,N --cache hot --backend cpu (one routing and one layer, repeated)" \
    --meta "ggml=test-backend-ops perf -o MUL_MAT_ID -b CPU -p 'type_a=f16,type_b=f32,n_mats=E,n_used=K,b=0,m=M,n=B,k=N'" \
    --meta "touched_mib=at most min(E, K x B) experts of M x N x 2 bytes (each side's routing draws its own)" \
    --meta "git_commit=$(git rev-parse --short=12 HEAD 2>/dev/null)" \
    --meta "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --columns shape,touched_mib,ours_ms,ggml_ms,ours_over_ggml,ours_ms_rounds,ggml_ms_rounds ||
    die "cannot write $out/peers-moe.csv"

echo
echo "| shape E,K,B,M,N | at most MiB | rooflab moe_active ms | ggml MUL_MAT_ID ms | rooflab / ggml |"
echo "| --- | --- | --- | --- | --- |"
# (joined by the unit separator, not a tab: read would merge a tab run, an empty cell)
while IFS=$'\x1f' read -r s mib ours ggml ratio; do
    printf '| %s | %s | %.3f | %.3f | %.2f |\n' "$s" "$mib" "$ours" "$ggml" "$ratio"
done < <("$B/rooflab" query "$out/peers-moe.csv" columns \
             shape,touched_mib,ours_ms,ggml_ms,ours_over_ggml --join $'\x1f')
echo
echo "wrote $out/peers-moe.csv"

#!/usr/bin/env bash
# harness/ops/peer-ggml-attention.sh -- make peer-ggml-attention: experiment
# 07's CPU decode attention beside ggml's flash attention, on this machine,
# in one session. It builds ggml's test-backend-ops (harness/ops/ggml-lib.sh),
# then, ROUNDS times, alternating:
#   ours:  $B/exp-07 --shape B,HQ,HKV,D,L --cache hot --backend cpu
#          (decode_fused and decode_materialized, each validated first)
#   ggml:  test-backend-ops perf -o FLASH_ATTN_EXT -b CPU -p REGEX, the perf
#          case of the same shape: hsk = hsv = D, nh = HKV, nr23 = [HQ/HKV, B],
#          kv = L, nb = 1 (one query per sequence: decode), F16 K and V
# and writes the best of the rounds per shape and side to
# results/LABEL/peers-attention.csv and the side-by-side table on the
# console (both with every thread of the machine).
#
#   SHAPES="B,HQ,HKV,D,L ..."  the shapes (default 1,64,8,64,7680: the one
#                   decode shape with F16 K and V among ggml's perf cases at
#                   d99724f2 that ours runs -- its others have d = 256 and 16
#                   query heads per KV head); a shape ggml has no perf case
#                   for is an error
#   ROUNDS=N        alternating rounds (default 2; at most 10)
#   LABEL=name      results/LABEL/ (default: exp-07's label for this machine)
#   B               our build folder (default build)
#   RESULTS         the results root (default results)
#   GGML_SRC, GGML_COMMIT: harness/ops/ggml-lib.sh
set -uo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
RESULTS=${RESULTS:-results}
ROUNDS=${ROUNDS:-2}
SHAPES=${SHAPES:-1,64,8,64,7680}
die() { echo "peer-ggml-attention: $*" >&2; exit 2; }

[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $ROUNDS -le 10 ]] || die "ROUNDS wants 1 to 10, not '$ROUNDS'"
for s in $SHAPES; do
    [[ $s =~ ^[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+$ ]] || die "SHAPES wants B,HQ,HKV,D,L items (e.g. 1,64,8,64,7680), not '$s'"
done
[ -x "$B/exp-07" ] || die "$B/exp-07 is not built (make build)"
# the rooflab command writes the CSV (as the experiments write theirs) and reads it back
[ -x "$B/rooflab" ] || die "$B/rooflab is not built (make build)"
LABEL=${LABEL:-$("$B/exp-07" --backend cpu --print-label)} || die "exp-07 --print-label failed"

# shellcheck source=harness/ops/ggml-lib.sh
. harness/ops/ggml-lib.sh
ggml_build # sets src, commit, tbo and peer

declare -A OURS_MS MAT_MS GGML_MS OURS_ALL GGML_ALL
ceilings=$RESULTS/$LABEL/ceilings.csv

# ggml's regular expression for a shape (its vars(): hsk, hsv, nh, nr23, kv, nb, ..., type_K, type_V).
ggml_regex() {
    local b hq hkv d L
    IFS=, read -r b hq hkv d L <<<"$1"
    echo "hsk=$d,hsv=$d,nh=$hkv,nr23=\\[$((hq / hkv)),$b\\],kv=$L,nb=1,.*type_K=f16,type_V=f16"
}

ours_round() {
    local r=$1 s log rows ms mat
    for s in $SHAPES; do
        log=$peer/ours-attention-$r-${s//,/x}.log rows=$peer/ours-attention-$r-${s//,/x}.csv
        local flags=(--shape "$s" --cache hot --backend cpu --label "$LABEL" --out "$RESULTS" --no-plot
                     --rows-file "$rows")
        [ -f "$ceilings" ] && flags+=(--ceilings "$ceilings")
        "$B/exp-07" "${flags[@]}" >"$log" 2>&1 || die "exp-07 --shape $s failed (round $r): $log"
        # its rows as data (--rows-file), not its printed table
        ms=$(ours_ms "$rows" phase=decode config=shape variant=decode_fused) || die "cannot read $rows"
        mat=$(ours_ms "$rows" phase=decode config=shape variant=decode_materialized) || die "cannot read $rows"
        [ -n "$ms" ] || die "no validated decode_fused row in $rows"
        echo "  round $r ours  $s decode_fused $ms ms, decode_materialized ${mat:-?} ms"
        OURS_ALL[$s]+="${OURS_ALL[$s]:+ }$ms"
        OURS_MS[$s]=$(best_of "$ms" "${OURS_MS[$s]:-}")
        [ -n "$mat" ] && MAT_MS[$s]=$(best_of "$mat" "${MAT_MS[$s]:-}")
    done
}
ggml_round() { ggml_shapes_round "$1" FLASH_ATTN_EXT; }

cpu=$(cpu_name)
flags=$(cpu_flags)
echo "peer-ggml-attention: decode shapes $SHAPES, $(nproc) threads, on $cpu ($flags); ggml $commit; $ROUNDS rounds"
alternate_rounds

out=$RESULTS/$LABEL
mkdir -p "$out" || die "cannot make $out"
# One row a shape, its cells tab-separated, for rooflab csv-write.
peer_rows() {
    local s b hq hkv d L kv ratio
    for s in $SHAPES; do
        IFS=, read -r b hq hkv d L <<<"$s"
        kv=$(awk -v b="$b" -v h="$hkv" -v d="$d" -v l="$L" 'BEGIN { printf "%.1f", b * l * h * d * 4 / 1048576 }')
        ratio=$(awk -v a="${OURS_MS[$s]}" -v b="${GGML_MS[$s]}" 'BEGIN { printf "%.3f", a / b }')
        printf '%s\t' "$s" "$kv" "${OURS_MS[$s]}" "${MAT_MS[$s]:-}" "${GGML_MS[$s]}" "$ratio" "${OURS_ALL[$s]}"
        printf '%s\n' "${GGML_ALL[$s]}"
    done
}
peer_rows | "$B/rooflab" csv-write "$out/peers-attention.csv" \
    --meta "about=experiment 07's CPU decode attention beside ggml's FLASH_ATTN_EXT (F16 K and V, one query per sequence), best of $ROUNDS alternating rounds" \
    --meta "rounds=$ROUNDS" \
    --meta "cpu=$cpu" \
    --meta "cpu_flags=$flags" \
    --meta "threads=$(nproc)" \
    --meta "ggml_commit=$commit" \
    --meta "ours=$B/exp-07 --shape B,HQ,HKV,D,L --cache hot --backend cpu" \
    --meta "ggml=test-backend-ops perf -o FLASH_ATTN_EXT -b CPU -p 'hsk=D,hsv=D,nh=HKV,nr23=\\[HQ/HKV,B\\],kv=L,nb=1,.*type_K=f16,type_V=f16'" \
    --meta "kv_mib=the K and V bytes per call, B x L x HKV x D x 2 x 2" \
    --meta "git_commit=$(git rev-parse --short=12 HEAD 2>/dev/null)" \
    --meta "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --columns shape,kv_mib,ours_fused_ms,ours_materialized_ms,ggml_ms,ours_over_ggml,ours_ms_rounds,ggml_ms_rounds ||
    die "cannot write $out/peers-attention.csv"

echo
echo "| shape B,HQ,HKV,D,L | K+V MiB | rooflab fused ms | rooflab materialized ms | ggml FLASH_ATTN_EXT ms | rooflab / ggml |"
echo "| --- | --- | --- | --- | --- | --- |"
# (joined by the unit separator, not a tab: read would merge a tab run, an empty cell)
while IFS=$'\x1f' read -r s kv fused mat ggml ratio; do
    [ -n "$mat" ] && mat=$(printf '%.3f' "$mat") || mat=-
    printf '| %s | %s | %.3f | %s | %.3f | %.2f |\n' "$s" "$kv" "$fused" "$mat" "$ggml" "$ratio"
done < <("$B/rooflab" query "$out/peers-attention.csv" columns \
             shape,kv_mib,ours_fused_ms,ours_materialized_ms,ggml_ms,ours_over_ggml --join $'\x1f')
echo
echo "wrote $out/peers-attention.csv"

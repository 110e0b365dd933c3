#!/usr/bin/env bash
# harness/ops/peer-ggml.sh -- make peer-ggml: experiment 03's CPU decode
# beside ggml's, on this machine, in one session. It builds ggml's
# test-backend-ops (CPU backend only), then, ROUNDS times, alternating:
#   ours:  $B/exp-03 --matrix MATRIX --cache hot --backend cpu --rows-file F
#          (every format, every decode variant, each format timed alone with
#          its variants, as ggml times each type; the fastest valid one counts;
#          its rows and tuner's choices read from F with rooflab query)
#   ggml:  test-backend-ops perf -o MUL_MAT -b CPU -p "type_a=T,type_b=f32,m=ROWS,n=1,k=K,"
#          for each format's ggml type (both with every thread of the machine)
# and writes the best of the rounds per format to results/LABEL/peers.csv,
# the side-by-side table on the console, and a chart of ms per format, ours
# beside ggml's, to plots/LABEL/peers.{png,svg,pdf}.
#
#   GGML_SRC=path   a ggml source tree; GGML_COMMIT=c the commit cloned
#                   without one (default d99724f2): harness/ops/ggml-lib.sh
#   ROUNDS=N        alternating rounds (default 2; at most 10)
#   MATRIX=RxK      the matrix (default 4096x14336: ggml's perf case m=4096,
#                   k=14336, n=1, Llama-3's down projection; ggml's perf mode
#                   has no other n = 1 shape at d99724f2)
#   LABEL=name      results/LABEL/ (default: exp-03's label for this machine)
#   B               our build folder (default build)
#   RESULTS, PLOTS  the results and charts roots (default results, plots)
set -uo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
RESULTS=${RESULTS:-results}
PLOTS=${PLOTS:-plots}
ROUNDS=${ROUNDS:-2}
MATRIX=${MATRIX:-4096x14336}
die() { echo "peer-ggml: $*" >&2; exit 2; }

[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $ROUNDS -le 10 ]] || die "ROUNDS wants 1 to 10, not '$ROUNDS'"
[[ $MATRIX =~ ^([0-9]+)x([0-9]+)$ ]] || die "MATRIX wants ROWSxK (e.g. 4096x14336), not '$MATRIX'"
rows=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
[ -x "$B/exp-03" ] || die "$B/exp-03 is not built (make build)"
# the rooflab command writes the CSV (as the experiments write theirs) and reads it back
[ -x "$B/rooflab" ] || die "$B/rooflab is not built (make build)"
LABEL=${LABEL:-$("$B/exp-03" --backend cpu --print-label)} || die "exp-03 --print-label failed"
command -v gnuplot >/dev/null || die "gnuplot is needed (make deps)"

# ---- ggml: the source, then test-backend-ops (harness/ops/ggml-lib.sh) ----------
# shellcheck source=harness/ops/ggml-lib.sh
. harness/ops/ggml-lib.sh
ggml_build # sets src, commit and tbo

# ---- the formats and their ggml peers ---------------------------------------------
# Ours, ggml's type of the same bits per weight (q5: q5_0, 5.5 bits, as ours;
# q4: q4_0, 4.5 bits, and q4_K as a second peer).
formats=(f16 q8 q6 q5 q4 q2)
declare -A PEER=([f16]=f16 [q8]=q8_0 [q6]=q6_K [q5]=q5_0 [q4]=q4_0 [q2]=q2_K)
declare -A EXTRA=([q4]=q4_K)
declare -A OURS_MS OURS_VAR GGML_MS EXTRA_MS OURS_ALL GGML_ALL
TUNED=

ceilings=$RESULTS/$LABEL/ceilings.csv
ours_round() {
    local log=$peer/ours-$1.log rows=$peer/ours-$1.csv f v us ms choice tuned=() n=0
    local flags=(--matrix "$MATRIX" --cache hot --backend cpu --label "$LABEL" --out "$RESULTS" --no-plot
                 --rows-file "$rows")
    [ -f "$ceilings" ] && flags+=(--ceilings "$ceilings")
    "$B/exp-03" "${flags[@]}" >"$log" 2>&1 || die "exp-03 --matrix failed (round $1): $log"
    # its rows as data (--rows-file: a CSV, though --matrix keeps no results),
    # not its printed table. The decode shapes the tuner chose (or took from
    # results/LABEL/tuning.csv): the rows file's tuning_FORMAT_RxK_hot_choice keys.
    for f in "${formats[@]}"; do
        choice=$("$B/rooflab" query "$rows" meta "tuning_${f}_${MATRIX}_hot_choice" --default '') ||
            die "cannot read $rows"
        [ -n "$choice" ] && tuned+=("$f $choice")
    done
    TUNED=$(IFS=';'; echo "${tuned[*]}")
    echo "  round $1 ours  tuned: ${TUNED:-none}"
    # the validated, timed rows; the fastest variant per format
    while IFS=, read -r f v us; do
        ms=$(awk -v us="$us" 'BEGIN { printf "%.3f", us / 1000 }')
        echo "  round $1 ours  $f $v $ms ms"
        n=$((n + 1))
        OURS_ALL[$f]+="${OURS_ALL[$f]:+ }$ms"
        # F16 has one kernel in every decode variant, the FP16 GEMV, declared
        # once under the first variant's name
        [ "$f" = f16 ] && v=gemv_fp16
        if [ -z "${OURS_MS[$f]:-}" ] || awk -v a="$ms" -v b="${OURS_MS[$f]}" 'BEGIN { exit !(a < b) }'; then
            OURS_MS[$f]=$ms OURS_VAR[$f]=$v
        fi
    done < <("$B/rooflab" query "$rows" columns format,variant,time_us_median --where validated=yes \
                 --where 'time_us_median!=' | sort -t, -k1,1 -k3,3g | awk -F, '!seen[$1]++')
    [ $n -gt 0 ] || die "no validated, timed row in $rows (round $1)"
}
ggml_ms() { # type -> ms per call, from the console's "N us/run"
    ggml_perf_ms MUL_MAT "type_a=$1,type_b=f32,m=$rows,n=1,k=$k,"
}
better() { [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
ggml_round() {
    local f ms
    for f in "${formats[@]}"; do
        ms=$(ggml_ms "${PEER[$f]}")
        [ -n "$ms" ] || die "no 'us/run' in test-backend-ops' output for ${PEER[$f]}" \
            "(its perf mode times only the MUL_MAT shapes it lists, at d99724f2 m=4096, k=14336" \
            "for n = 1: test-backend-ops perf -o MUL_MAT -b CPU lists them)"
        echo "  round $1 ggml  $f ${PEER[$f]} $ms ms"
        GGML_ALL[$f]+="${GGML_ALL[$f]:+ }$ms"
        better "$ms" "${GGML_MS[$f]:-}" && GGML_MS[$f]=$ms
        if [ -n "${EXTRA[$f]:-}" ]; then
            ms=$(ggml_ms "${EXTRA[$f]}")
            [ -n "$ms" ] || die "no 'us/run' in test-backend-ops' output for ${EXTRA[$f]}"
            echo "  round $1 ggml  $f ${EXTRA[$f]} $ms ms"
            better "$ms" "${EXTRA_MS[$f]:-}" && EXTRA_MS[$f]=$ms
        fi
    done
}

cpu=$(cpu_name)
flags=$(cpu_flags)
echo "peer-ggml: $MATRIX, n = 1, $(nproc) threads, on $cpu ($flags); ggml $commit; $ROUNDS rounds"
alternate_rounds

# ---- the CSV, the table, the chart ------------------------------------------------
out=$RESULTS/$LABEL
mkdir -p "$out" "$PLOTS/$LABEL" || die "cannot make $out or $PLOTS/$LABEL"
# One row a format, its cells tab-separated, for rooflab csv-write.
peer_rows() {
    local f ratio
    for f in "${formats[@]}"; do
        ratio=$(awk -v a="${OURS_MS[$f]:-nan}" -v b="${GGML_MS[$f]:-nan}" 'BEGIN { printf "%.3f", a / b }')
        printf '%s\t' "$f" "${OURS_VAR[$f]:-}" "${OURS_MS[$f]:-}" "${PEER[$f]}" "${GGML_MS[$f]:-}" \
            "$ratio" "${EXTRA[$f]:-}" "${EXTRA_MS[$f]:-}" "${OURS_ALL[$f]:-}"
        printf '%s\n' "${GGML_ALL[$f]:-}"
    done
}
# rounds: the chart's title says how many (plots/peers.gp asks for it)
peer_rows | "$B/rooflab" csv-write "$out/peers.csv" \
    --meta "about=experiment 03's CPU decode (n = 1) beside ggml's test-backend-ops MUL_MAT, best of $ROUNDS alternating rounds" \
    --meta "rounds=$ROUNDS" \
    --meta "cpu=$cpu" \
    --meta "cpu_flags=$flags" \
    --meta "threads=$(nproc)" \
    --meta "matrix=$MATRIX (rows x k)" \
    --meta "ggml_commit=$commit" \
    --meta "ours=$B/exp-03 --matrix $MATRIX --cache hot --backend cpu (fastest valid variant per format)" \
    --meta "ours_tuning=${TUNED:-none (no SIMD kernels, or the GPU)} ($RESULTS/$LABEL/tuning.csv)" \
    --meta "ggml=test-backend-ops perf -o MUL_MAT -b CPU -p \"type_a=TYPE,type_b=f32,m=$rows,n=1,k=$k,\"" \
    --meta "git_commit=$(git rev-parse --short=12 HEAD 2>/dev/null)" \
    --meta "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --columns format,ours_variant,ours_ms,ggml_type,ggml_ms,ours_over_ggml,ggml_type_2,ggml_ms_2,ours_ms_rounds,ggml_ms_rounds ||
    die "cannot write $out/peers.csv"

echo
echo "| format | rooflab ms | rooflab variant | ggml type | ggml ms | rooflab / ggml |"
echo "| --- | --- | --- | --- | --- | --- |"
# (joined by the unit separator, not a tab: read would merge a tab run, an empty cell)
while IFS=$'\x1f' read -r f variant ms type ggml ratio type2 ms2; do
    extra=
    [ -n "$type2" ] && extra=$(printf ' (%s: %.2f ms)' "$type2" "$ms2")
    printf '| %s | %.2f | %s | %s | %.2f | %.2f%s |\n' "$f" "$ms" "$variant" "$type" "$ggml" "$ratio" "$extra"
done < <("$B/rooflab" query "$out/peers.csv" columns \
             format,ours_variant,ours_ms,ggml_type,ggml_ms,ours_over_ggml,ggml_type_2,ggml_ms_2 --join $'\x1f')
echo
echo "wrote $out/peers.csv"
drawn=1
for fmt in png svg pdf; do
    gnuplot -e "csv='$out/peers.csv'; out='$PLOTS/$LABEL/peers'; fmt='$fmt'; rooflab='$B/rooflab'" plots/peers.gp || drawn=0
done
[ $drawn = 1 ] && echo "wrote $PLOTS/$LABEL/peers.{png,svg,pdf}"
# a format slower than ggml's is a result, not a failure: the table says so

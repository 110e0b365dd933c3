#!/usr/bin/env bash
# harness/ops/peer-ggml-batch.sh -- make peer-ggml-batch: experiment 03's
# batch part on the CPU beside ggml's, on this machine, in one session:
# one matrix at M tokens per call, F16 and every format. It builds ggml's
# test-backend-ops (harness/ops/ggml-lib.sh), then, ROUNDS times, alternating:
#   ours:  $B/exp-03 --matrix MATRIX --tokens TOKENS --cache hot --backend cpu
#          (the batch kernels: gemm_int8 for the quantized formats, x in
#          8 bits once per call; the F16 batch GEMV; each validated first,
#          each format's M timed in a group of its own)
#   ggml:  test-backend-ops perf -b CPU --test-file F, one MUL_MAT case per
#          format and M (src0 the format's ggml type, rows x K; src1 F32,
#          K x M): ggml's perf list has M = 1-5, 8 and 512 only at 4096 x
#          14336, and its test file reaches any M
# and writes the best of the rounds per format and M to
# results/LABEL/peers-batch.csv, with each side's speedup over its own F16
# at the same M, and the side-by-side table on the console (both with
# every thread of the machine).
#
#   TOKENS=LIST     the tokens per call, ascending (default 1,2,4,8,16)
#   FORMATS="..."   ours among f16 q8 q6 q5 q4 q2 (default all; f16 always,
#                   the unit of the speedups)
#   MATRIX=RxK      the matrix (default 4096x14336, as make peer-ggml)
#   ROUNDS=N        alternating rounds (default 2; at most 10)
#   LABEL=name      results/LABEL/ (default: exp-03's label for this machine)
#   B               our build folder (default build)
#   RESULTS         the results root (default results)
#   GGML_SRC, GGML_COMMIT: harness/ops/ggml-lib.sh
set -uo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
RESULTS=${RESULTS:-results}
ROUNDS=${ROUNDS:-2}
MATRIX=${MATRIX:-4096x14336}
TOKENS=${TOKENS:-1,2,4,8,16}
FORMATS=${FORMATS:-f16 q8 q6 q5 q4 q2}
die() { echo "peer-ggml-batch: $*" >&2; exit 2; }

[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $ROUNDS -le 10 ]] || die "ROUNDS wants 1 to 10, not '$ROUNDS'"
[[ $MATRIX =~ ^([0-9]+)x([0-9]+)$ ]] || die "MATRIX wants ROWSxK (e.g. 4096x14336), not '$MATRIX'"
rows=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
[[ $TOKENS =~ ^[0-9]+(,[0-9]+)*$ ]] || die "TOKENS wants ascending counts, comma-separated (e.g. 1,2,4,8,16), not '$TOKENS'"
IFS=, read -r -a mlist <<<"$TOKENS"
# ggml's type of the same bits per weight for each of ours (make peer-ggml's),
# and its enum value in ggml.h (the test file names types by number)
declare -A PEER=([f16]=f16 [q8]=q8_0 [q6]=q6_K [q5]=q5_0 [q4]=q4_0 [q2]=q2_K)
declare -A TYPE_ID=([f16]=1 [q8_0]=8 [q6_K]=14 [q5_0]=6 [q4_0]=2 [q2_K]=10)
# a row's bytes: a block's bytes over its weights (ggml's type traits)
declare -A BLOCK=([f16]="2 1" [q8_0]="34 32" [q6_K]="210 256" [q5_0]="22 32" [q4_0]="18 32" [q2_K]="84 256")
formats=(f16)
for f in $FORMATS; do
    [ -n "${PEER[$f]:-}" ] || die "FORMATS wants some of f16 q8 q6 q5 q4 q2, not '$f'"
    [ "$f" = f16 ] || formats+=("$f")
done
[ -x "$B/exp-03" ] || die "$B/exp-03 is not built (make build)"
[ -x "$B/rooflab" ] || die "$B/rooflab is not built (make build)"
LABEL=${LABEL:-$("$B/exp-03" --backend cpu --print-label)} || die "exp-03 --print-label failed"

# shellcheck source=harness/ops/ggml-lib.sh
. harness/ops/ggml-lib.sh
ggml_build # sets src, commit, tbo and peer

declare -A OURS_MS GGML_MS OURS_ALL GGML_ALL
ceilings=$RESULTS/$LABEL/ceilings.csv

# ---- ours: one run of every format at every M; its rows read as data ---------
ours_round() {
    local r=$1 log=$peer/ours-batch-$1.log rows=$peer/ours-batch-$1.csv f m us ms n=0
    local flags=(--matrix "$MATRIX" --tokens "$TOKENS" --cache hot --backend cpu --label "$LABEL"
                 --out "$RESULTS" --no-plot --rows-file "$rows")
    [ -f "$ceilings" ] && flags+=(--ceilings "$ceilings")
    "$B/exp-03" "${flags[@]}" >"$log" 2>&1 || die "exp-03 --matrix --tokens failed (round $r): $log"
    while IFS=, read -r f m us; do
        [ -n "${PEER[$f]:-}" ] || continue
        ms=$(awk -v us="$us" 'BEGIN { printf "%.4f", us / 1000 }')
        OURS_ALL[$f,$m]+="${OURS_ALL[$f,$m]:+ }$ms"
        OURS_MS[$f,$m]=$(best_of "$ms" "${OURS_MS[$f,$m]:-}")
        n=$((n + 1))
    done < <("$B/rooflab" query "$rows" columns format,tokens,time_us_median --where validated=yes \
                 --where 'time_us_median!=')
    [ $n -gt 0 ] || die "no validated, timed row in $rows (round $r)"
    echo "  round $r ours  $n rows ($log)"
}

# ---- ggml: one test file of every format at every M, one call ----------------
# A line of test-export-graph-ops' format (test-backend-ops.cpp,
# make_test_cases_from_file): op (GGML_OP_MUL_MAT = 29 at d99724f2), the
# output's type (F32) and shape [rows, M, 1, 1], no op params, two sources
# (type, shape, strides in bytes), no name.
case_line() { # ggml_type M
    local t=$1 m=$2 bb wb row
    read -r bb wb <<<"${BLOCK[$t]}"
    row=$((k / wb * bb))
    echo "29 0 $rows $m 1 1 0 2 ${TYPE_ID[$t]} $k $rows 1 1 $bb $row $((row * rows)) $((row * rows))" \
         "0 $k $m 1 1 4 $((4 * k)) $((4 * k * m)) $((4 * k * m)) -"
}
cases=$peer/batch-cases.txt
{ for f in "${formats[@]}"; do for m in "${mlist[@]}"; do case_line "${PEER[$f]}" "$m"; done; done; } >"$cases" ||
    die "cannot write $cases"
declare -A OURS_OF
for f in "${formats[@]}"; do OURS_OF[${PEER[$f]}]=$f; done
ggml_round() {
    local r=$1 out t m us ms n=0
    out=$("$tbo" perf -b CPU --test-file "$cases" 2>&1) || die "test-backend-ops --test-file failed: $out"
    # "MUL_MAT(type=f32,ne=[ROWS,M,1,1],op_params=[],sources=TYPE[K,ROWS,1,1],...): R runs - US us/run"
    while read -r t m us; do
        [ -n "${OURS_OF[$t]:-}" ] || continue
        ms=$(awk -v us="$us" 'BEGIN { printf "%.4f", us / 1000 }')
        GGML_ALL[${OURS_OF[$t]},$m]+="${GGML_ALL[${OURS_OF[$t]},$m]:+ }$ms"
        GGML_MS[${OURS_OF[$t]},$m]=$(best_of "$ms" "${GGML_MS[${OURS_OF[$t]},$m]:-}")
        n=$((n + 1))
    done < <(sed -n 's/.*MUL_MAT(type=f32,ne=\[[0-9]*,\([0-9]*\),1,1\].*sources=\([a-zA-Z0-9_]*\)\[.* \([0-9.][0-9.]*\) us\/run.*/\2 \1 \3/p' <<<"$out")
    [ $n -eq $((${#formats[@]} * ${#mlist[@]})) ] ||
        die "test-backend-ops timed $n of the $((${#formats[@]} * ${#mlist[@]})) cases in $cases (round $r): $out"
    echo "  round $r ggml  $n cases"
}

cpu=$(cpu_name)
flags=$(cpu_flags)
echo "peer-ggml-batch: $MATRIX, M = $TOKENS, ${formats[*]}, $(nproc) threads, on $cpu ($flags); ggml $commit; $ROUNDS rounds"
alternate_rounds

# ---- the CSV and the table ----------------------------------------------------
out=$RESULTS/$LABEL
mkdir -p "$out" || die "cannot make $out"
for f in "${formats[@]}"; do
    for m in "${mlist[@]}"; do
        [ -n "${OURS_MS[$f,$m]:-}" ] || die "ours has no validated row for $f at M = $m (see $peer/ours-batch-*.log)"
    done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# One row a format and M, its cells tab-separated, for rooflab csv-write.
peer_rows() {
    local f m
    for f in "${formats[@]}"; do
        for m in "${mlist[@]}"; do
            printf '%s\t' "$f" "$m" "${OURS_MS[$f,$m]}" "${PEER[$f]}" "${GGML_MS[$f,$m]}" \
                "$(ratio "${OURS_MS[$f,$m]}" "${GGML_MS[$f,$m]}")" \
                "$(ratio "${OURS_MS[f16,$m]}" "${OURS_MS[$f,$m]}")" \
                "$(ratio "${GGML_MS[f16,$m]}" "${GGML_MS[$f,$m]}")" "${OURS_ALL[$f,$m]}"
            printf '%s\n' "${GGML_ALL[$f,$m]}"
        done
    done
}
peer_rows | "$B/rooflab" csv-write "$out/peers-batch.csv" \
    --meta "about=experiment 03's CPU batch kernels (one matrix, M tokens a call) beside ggml's test-backend-ops MUL_MAT at the same M, best of $ROUNDS alternating rounds" \
    --meta "rounds=$ROUNDS" \
    --meta "cpu=$cpu" \
    --meta "cpu_flags=$flags" \
    --meta "threads=$(nproc)" \
    --meta "matrix=$MATRIX (rows x k)" \
    --meta "tokens=$TOKENS" \
    --meta "ggml_commit=$commit" \
    --meta "ours=$B/exp-03 --matrix $MATRIX --tokens $TOKENS --cache hot --backend cpu (gemm_int8; F16: the batch GEMV)" \
    --meta "ggml=test-backend-ops perf -b CPU --test-file (one MUL_MAT case per type and M: src0 TYPE [$k, $rows], src1 f32 [$k, M])" \
    --meta "speedups=each side's time of F16 at the same M over its time of the format" \
    --meta "git_commit=$(git rev-parse --short=12 HEAD 2>/dev/null)" \
    --meta "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --columns format,tokens,ours_ms,ggml_type,ggml_ms,ours_over_ggml,ours_speedup,ggml_speedup,ours_ms_rounds,ggml_ms_rounds ||
    die "cannot write $out/peers-batch.csv"

echo
echo "| format | M | rooflab ms | ggml type | ggml ms | rooflab / ggml | rooflab x F16 | ggml x F16 |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
while IFS=$'\x1f' read -r f m ours type ggml r s1 s2; do
    printf '| %s | %s | %.3f | %s | %.3f | %.2f | %.2f | %.2f |\n' "$f" "$m" "$ours" "$type" "$ggml" "$r" "$s1" "$s2"
done < <("$B/rooflab" query "$out/peers-batch.csv" columns \
             format,tokens,ours_ms,ggml_type,ggml_ms,ours_over_ggml,ours_speedup,ggml_speedup --join $'\x1f')
echo
echo "wrote $out/peers-batch.csv"
# a format slower than ggml's is a result, not a failure: the table says so

#!/usr/bin/env bash
# harness/ops/redraw-check.sh -- does this tree draw the reference charts
# as they were committed? `make redraw-check`. Each checked-in reference
# run (results/reference/<lab>/exp-NN.csv) is redrawn by this build's
# experiment (--plot-only) into a scratch folder, and every chart is
# compared byte for byte with plots/reference/<lab>/: PNG and SVG whole,
# PDF without its /CreationDate line (gnuplot dates each PDF). A change to
# the harness, the plot scripts or the CSV reader that moves one pixel of
# one chart fails here. Nothing is measured.
#
# Usage: B=build harness/ops/redraw-check.sh. Exit codes: 0 every chart
# identical, 1 a chart differs or a redraw failed, 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
B=${B:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
same=0 total=0 failed=0
for dir in results/reference/*/; do
    lab=$(basename "$dir")
    [ -d "plots/reference/$lab" ] || continue
    for csv in "$dir"exp-*.csv; do
        [ -f "$csv" ] || continue
        id=$(basename "$csv" .csv)
        id=${id#exp-}
        [ -x "$B/exp-$id" ] || { echo "redraw-check: no $B/exp-$id (make build first)" >&2; exit 2; }
        if ! "$B/exp-$id" --plot-only --label "reference/$lab" --out results --plots "$out" >"$out/log" 2>&1; then
            echo "redraw-check: FAILED: $lab exp-$id did not redraw:"; sed 's/^/  /' "$out/log"
            failed=$((failed + 1))
        fi
    done
    for f in "plots/reference/$lab"/*; do
        drawn=$out/reference/$lab/$(basename "$f")
        [ -f "$drawn" ] || continue
        total=$((total + 1))
        if [[ $f == *.pdf ]]; then
            cmp -s <(grep -av /CreationDate "$f") <(grep -av /CreationDate "$drawn") && same=$((same + 1)) && continue
        else
            cmp -s "$f" "$drawn" && same=$((same + 1)) && continue
        fi
        echo "redraw-check: differs: $f"
    done
done
echo "redraw-check: $same of $total reference charts redrawn byte-identical"
[ "$same" -eq "$total" ] && [ "$total" -gt 0 ] && [ "$failed" -eq 0 ]

#!/usr/bin/env bash
# harness/ops/points-list.sh -- what every experiment would run, as text a
# diff can compare: `harness/ops/points-list.sh BUILD OUT [NN...]` writes,
# for each experiment (default all) in quick, lab and full mode, with the
# machine's LLC and with ROOFLAB_LLC=8Mi, its --points listing (the plan,
# the metadata and every declared point: part, group, optional, bytes,
# FLOPs, footprint, columns) on the CPU with the test fixture's ceilings,
# into OUT/NN-MODE-llc-LLC.txt, without the lines that change from run to
# run (date, commit, argv, label path). Nothing is timed or measured.
# Run it on two trees and `diff -r` the folders: a refactoring that moves
# no point leaves them identical (issue 49's rewrite was checked so).
#
# Exit codes: 0 listed, 1 a listing failed, 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in -h|--help|"") sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ -n "${1:-}" ]; exit $? ;; esac
[ $# -ge 2 ] || { echo "usage: harness/ops/points-list.sh BUILD OUT [NN...]" >&2; exit 2; }
B=$1 OUT=$2
shift 2
ids=("$@")
[ ${#ids[@]} -gt 0 ] || mapfile -t ids < <(ls experiments | sed -n 's/^\([0-9][0-9]\)-.*/\1/p')
mkdir -p "$OUT"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for e in "${ids[@]}"; do
    [ -x "$B/exp-$e" ] || { echo "points-list: no $B/exp-$e" >&2; exit 2; }
    for mode in quick lab full; do
        for llc in native 8Mi; do
            flag=()
            [ "$mode" = quick ] && flag=(--quick)
            [ "$mode" = full ] && flag=(--full)
            env_llc=()
            [ "$llc" = 8Mi ] && env_llc=(ROOFLAB_LLC=8Mi)
            file=$OUT/$e-$mode-llc-$llc.txt
            if ! env "${env_llc[@]}" "$B/exp-$e" "${flag[@]}" --backend cpu \
                    --ceilings tests/fixtures/ceilings-cpu.csv --points --out "$scratch" \
                    --plots "$scratch" >"$scratch/listing" 2>&1; then
                echo "points-list: exp-$e $mode (llc $llc) failed:" >&2
                sed 's/^/  /' "$scratch/listing" >&2
                status=1
                continue
            fi
            grep -v -E '^(meta (date_utc|git_commit|git_dirty|argv)=|label )' "$scratch/listing" >"$file" || true
            echo "exp-$e $mode llc-$llc: $(grep -c '^point' "$file") points"
        done
    done
done
exit $status

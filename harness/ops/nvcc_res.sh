#!/usr/bin/env bash
# nvcc_res.sh -- compiles one .cu file and records what ptxas gave each of
# its kernels, for $(B)/kernel-resources.txt (harness/ops/kernel_resources.c).
#
#   harness/ops/nvcc_res.sh OUT.res NVCC ARGS...    (the Makefile's .cu rule)
#   harness/ops/nvcc_res.sh --parse PTXAS_LOG [PTX...]  (the parse alone: tests)
#
# The compile adds --resource-usage (ptxas -v: registers, stack, spills,
# static shared memory per kernel and SM) and --keep (nvcc's intermediate
# files, in a folder of its own beside OUT, removed afterwards) for the PTX
# of each arch, whose .maxntid and .minnctapersm are the kernels' launch
# bounds, which ptxas does not print. The report's lines stay off the
# console (a build prints the table once, from every object); everything
# else nvcc writes on stderr, warnings and errors, passes through, and the
# exit status is nvcc's.
#
# OUT.res: one tab-separated line per kernel and SM: sm, kernel (demangled
# by c++filt where it is there), registers, stack bytes, spill stores and
# loads (bytes), static shared bytes, barriers, max threads and min blocks
# per SM of its launch bounds (0: none).
set -uo pipefail

# The report lines ptxas writes, as rows (mangled names), joined with the
# launch bounds found in the PTX files given.
parse() {
    local log=$1
    shift
    awk '
    FNR == 1 { file++ }
    file <= nptx && /^\.target / { arch = $2; sub(/^sm_/, "", arch); sub(/[^0-9].*/, "", arch) }
    file <= nptx && /^\.(visible |weak )?\.entry / { name = $NF; sub(/\(.*/, "", name); entry = name; next }
    file <= nptx && entry != "" && /^\.maxntid/ { v = $2; sub(/,/, "", v); ntid[arch, entry] = v + 0 }
    file <= nptx && entry != "" && /^\.minnctapersm/ { minb[arch, entry] = $2 + 0 }
    file <= nptx && /^\{/ { entry = "" }
    file > nptx && /Compiling entry function/ {
        match($0, /'\''[^'\'']+'\''/); fn = substr($0, RSTART + 1, RLENGTH - 2)
        match($0, /'\''sm_[0-9a-z]+'\''$/); sm = substr($0, RSTART + 4, RLENGTH - 5)
        stack = st = ld = 0
    }
    file > nptx && /bytes stack frame/ { stack = $1; st = $5; ld = $9 }
    file > nptx && /Used [0-9]+ registers/ {
        match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15) + 0
        smem = bars = 0
        if (match($0, /[0-9]+ bytes smem/)) smem = substr($0, RSTART, RLENGTH - 11) + 0
        if (match($0, /used [0-9]+ barriers/)) bars = substr($0, RSTART + 5, RLENGTH - 14) + 0
        a = sm; sub(/[^0-9].*/, "", a)
        printf "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", sm, fn, regs, stack, st, ld, smem, bars,
               ntid[a, fn] + 0, minb[a, fn] + 0
    }' nptx=$# "$@" "$log" | if command -v c++filt >/dev/null 2>&1; then c++filt; else cat; fi
}

if [ "${1:-}" = --parse ]; then
    [ $# -ge 2 ] || { echo "usage: $0 --parse PTXAS_LOG [PTX...]" >&2; exit 2; }
    log=$2
    shift 2
    parse "$log" "$@"
    exit 0
fi
[ $# -ge 2 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
out=$1
shift
keep=$out.keep
rm -rf "$keep" && mkdir -p "$keep" || exit 1
log=$keep/ptxas.log
"$@" --resource-usage --keep --keep-dir "$keep" 2>"$log"
rc=$?
grep -v -e '^ptxas info' -e 'bytes stack frame, ' "$log" >&2
if [ $rc -eq 0 ]; then
    shopt -s nullglob
    parse "$log" "$keep"/*.ptx >"$out.tmp" && mv "$out.tmp" "$out"
fi
rm -rf "$keep"
exit $rc

#!/usr/bin/env bash
# harness/ops/cpu-loops.sh -- the loops of the CPU kernels as the compiler
# built them, for any x86 CPU and without one: `make cpu-loops
# [FILE=kernels/cpu/quant_dot_avx2.c] [FUNC=rows_simd_q.*_1] [MARCH=native]`.
# FILE is compiled as the Makefile compiles kernels (-O3, OpenMP) for
# -march=MARCH into a temporary folder; for each function whose name
# matches FUNC (an awk pattern, anchored), each loop (a backward branch)
# that does arithmetic (a multiply-add, a dot product or an FMA) is printed
# with its instructions, its prefetches and its multiply-adds. A loop
# with a loop inside it is marked: its count holds the inner loop's once,
# however many times that runs.
#
# The CPU counterpart of `make sass` (harness/ops/sass.sh): a count, not a
# measurement. Experiment 03's README divides the block loop's count by the
# block's bytes (instructions per byte).
#
# Usage: harness/ops/cpu-loops.sh [FILE [FUNC [MARCH]]]. Exit codes: 0
# printed, 2 bad usage, no such file, a failed compile, or nothing matched.
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
file=${1:-kernels/cpu/quant_dot_avx2.c} func=${2:-rows_simd_q.*_1} march=${3:-native}
die() { echo "cpu-loops: $*" >&2; exit 2; }
[ -f "$file" ] || die "no such file: $file"
command -v objdump >/dev/null || die "objdump is needed (binutils)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${CC:-cc}" -std=c11 -O3 -march="$march" -fopenmp -Wno-psabi -D_GNU_SOURCE -Iharness -Ikernels \
    -c "$file" -o "$tmp/k.o" 2>"$tmp/cc.log" || die "$file did not compile for -march=$march: $(head -5 "$tmp/cc.log")"

echo "$file, -march=$march, $("${CC:-cc}" --version | head -1)"
objdump -d --no-show-raw-insn "$tmp/k.o" | awk -v want="^($func)\$" '
    function hex(s,   i, v) { # mawk has no strtonum
        v = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return v
    }
    function report(   i, j, n, pf, ma, inner, any) {
        if (name !~ want) return
        matched++
        for (i = 1; i <= count; i++) {
            if (op[i] !~ /^j/ || target[i] == "" || target[i] > addr[i]) continue
            n = pf = ma = inner = 0
            for (j = 1; j <= count; j++) {
                if (addr[j] < target[i] || addr[j] > addr[i]) continue
                n++
                if (op[j] ~ /^prefetch/) pf++
                if (op[j] ~ /madd|dpbusd|dpwssd|fmadd|fmsub|fnmadd/) ma++
                if (j != i && op[j] ~ /^j/ && target[j] != "" && target[j] <= addr[j] && target[j] >= target[i]) inner = 1
            }
            if (!ma) continue
            if (!any++) print name ":"
            printf "  loop at +0x%x: %d instructions, %d prefetch, %d multiply-add%s\n",
                   target[i] - start, n, pf, ma, inner ? " (holds a loop: counted once)" : ""
        }
    }
    /^[0-9a-f]+ <.*>:$/ {
        if (name != "") report()
        name = $2; sub(/^</, "", name); sub(/>:$/, "", name)
        start = hex($1); count = 0; next
    }
    /^ *[0-9a-f]+:\t/ {
        count++
        split($0, f, "\t"); a = f[1]; gsub(/[ :]/, "", a)
        addr[count] = hex(a)
        # the mnemonic after any encoding prefix ("{vex} vpdpbusd", "notrack jmp")
        nw = split(f[2], w, " "); k = 1
        while (k < nw && (w[k] ~ /^\{/ || w[k] == "notrack" || w[k] == "bnd")) k++
        op[count] = w[k]
        target[count] = ""
        if (op[count] ~ /^j/ && w[k + 1] ~ /^[0-9a-f]+$/) target[count] = hex(w[k + 1])
    }
    END { if (name != "") report(); if (!matched) exit 3 }
' || { rc=$?; [ $rc = 3 ] && die "no function matching '$func' in $file"; die "reading the disassembly failed ($rc)"; }

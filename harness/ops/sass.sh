#!/usr/bin/env bash
# harness/ops/sass.sh -- the machine code (SASS) of the CUDA kernels, without a
# GPU: `make sass KERNEL=gemv_dp4a [SM=90]`. What nvcc built for the SM is
# read back from the build's objects with cuobjdump; for each kernel whose
# name matches KERNEL (a grep pattern, on the mangled name): its registers,
# then each loop (a backward branch) with its instruction count and the
# kinds of instructions in it, most frequent first. The SASS itself goes to
# build/sass/<SM>/<kernel>.sass.
#
# cuobjdump (and nvdisasm, which it runs) come from the CUDA toolkit, or
# from PyPI where it lacks them (harness/ops/cuda-tools.sh).
#
# Usage: harness/ops/sass.sh KERNEL [SM]. Exit codes: 0 printed, 2 bad usage or
# nothing matched, 77 no cuobjdump to be had.
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in ''|-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;; esac
pattern=$1 sm=${2:-90} B=${B:-build}

# cuobjdump disassembles through nvdisasm: both from one folder.
# shellcheck source=harness/ops/cuda-tools.sh
. harness/ops/cuda-tools.sh
dir=$(cuda_tools_dir sass) || exit 77
tool=$dir/cuobjdump
export PATH="$dir:$PATH"

objs=$(find "$B/obj" -name '*.cu.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "sass: no CUDA objects under $B/obj: run make first" >&2; exit 2; }
out=$B/sass/sm$sm
mkdir -p "$out"
found=0
for o in $objs; do
    for fn in $("$tool" -sass -arch "sm_$sm" "$o" 2>/dev/null | sed -n 's/^[[:space:]]*Function : //p' | grep -e "$pattern" || true); do
        found=1
        "$tool" -sass -arch "sm_$sm" -fun "$fn" "$o" >"$out/$fn.sass"
        regs=$("$tool" -res-usage -arch "sm_$sm" "$o" 2>/dev/null | grep -A1 "Function $fn:" | sed -n 's/.*REG:\([0-9]*\).*/\1/p' | head -n1)
        echo "$fn (${o#"$B"/obj/}, sm_$sm): ${regs:-?} registers"
        # Loops: a branch back to an earlier address; its body is every
        # instruction from the target to the branch.
        awk '
        function hex(h,    v, i) { # mawk has no strtonum
            v = 0; h = tolower(h); sub(/^0x/, "", h)
            for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
            return v
        }
        match($0, /\/\*[0-9a-f]+\*\//) {
            addr = hex(substr($0, RSTART + 2, RLENGTH - 4))
            text = substr($0, RSTART + RLENGTH); sub(/;.*/, "", text); gsub(/^[ \t]+/, "", text)
            if (text == "") next
            n++; at[n] = addr; op[n] = text
        }
        END {
            for (i = 1; i <= n; i++) {
                if (!match(op[i], /BRA (0x[0-9a-f]+)/)) continue
                target = hex(substr(op[i], RSTART + 4, RLENGTH - 4))
                if (target >= at[i]) continue
                delete kinds; count = 0
                for (j = 1; j <= i; j++) {
                    if (at[j] < target) continue
                    k = op[j]; sub(/^@!?U?P[0-9T] /, "", k); split(k, w, /[ .]/); kinds[w[1]]++; count++
                }
                line = ""
                for (k in kinds) line = line sprintf("%s %d, ", k, kinds[k])
                printf "  loop %#06x-%#06x: %d instructions (%s)\n", target, at[i], count, substr(line, 1, length(line) - 2)
            }
        }' "$out/$fn.sass"
    done
done
[ $found = 1 ] || { echo "sass: no kernel matching '$pattern' for sm_$sm" >&2; exit 2; }
echo "SASS in $out/"

#!/usr/bin/env bash
# harness/ops/ab-decode.sh -- `make ab-decode [REV=HEAD] [MATRIX=1024x4096]
# [ROUNDS=200]`: this tree's CPU integer decode (kernels/cpu/quant_dot_avx2.c)
# against the same file at git revision REV, in one process, call by call
# (harness/ops/ab_decode.c says why: on a shared VM two runs of two
# binaries cannot tell a 10 % change from the machine's drift). Both are
# built as the Makefile builds kernels (-O3, CPU_ARCH, OpenMP) against
# this tree's headers, so REV's file must still compile with them; both
# are validated against the FP64 reference before they are timed.
#
# Prints, per format (q8..q2, each in its default shape on both sides),
# the best and median microseconds a call and the ratios new / old. Set
# OMP_NUM_THREADS=1 for one core. The matrix is ROWS x K of random
# weights; 1024 x 4096 sits in the LLC of the 2-core VMs, where the
# kernels are bound by their instructions (a DRAM-sized one compares the
# memory instead: MATRIX=16384x4096).
#
#   REV       the revision to compare with (default HEAD: this tree's edits)
#   OLD       a file to compare with instead (a copy of the kernel, edited)
#   MATRIX    ROWSxK (default 1024x4096)
#   ROUNDS    calls of each (default 200, 3 to 10000)
#   CPU_ARCH  code generation flags (default -march=native, as the Makefile)
#
# Exit codes: 0 compared, 1 a kernel is wrong, 2 bad usage or a failed
# build, 77 no SIMD decode in this build (no AVX2).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.."
REV=${REV:-HEAD} MATRIX=${MATRIX:-1024x4096} ROUNDS=${ROUNDS:-200} CPU_ARCH=${CPU_ARCH:--march=native}
die() { echo "ab-decode: $*" >&2; exit 2; }
[[ $MATRIX =~ ^([0-9]+)x([0-9]+)$ ]] || die "MATRIX wants ROWSxK (e.g. 1024x4096), not '$MATRIX'"
rows=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
((rows >= 1 && rows <= 65536 && k >= 256 && k <= 65536 && k % 256 == 0)) ||
    die "MATRIX wants 1 to 65536 rows and K a multiple of 256 up to 65536, not '$MATRIX'"
[[ $ROUNDS =~ ^[0-9]+$ ]] && ((ROUNDS >= 3 && ROUNDS <= 10000)) || die "ROUNDS wants 3 to 10000, not '$ROUNDS'"
kernel=kernels/cpu/quant_dot_avx2.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${OLD:-}" ]; then
    [ -f "$OLD" ] || die "OLD=$OLD: no such file"
    cp "$OLD" "$tmp/old.c"
    old_name=$OLD
else
    git show "$REV:$kernel" >"$tmp/old.c" 2>"$tmp/git.log" || die "no $kernel at '$REV': $(head -1 "$tmp/git.log")"
    old_name="$REV's ($(git rev-parse --short "$REV"))"
fi
if cmp -s "$tmp/old.c" "$kernel"; then
    echo "ab-decode: old and new are the same file: the ratios measure the noise alone"
fi

# shellcheck disable=SC2086 # CPU_ARCH is a list of flags
cc_kernel() { "${CC:-cc}" -std=c11 -O3 $CPU_ARCH -fopenmp -Wno-psabi -D_GNU_SOURCE -iquote kernels/cpu -Iharness -Ikernels "$@"; }
cc_kernel -c "$tmp/old.c" -o "$tmp/old-raw.o" 2>"$tmp/cc.log" ||
    die "the old $kernel does not compile against this tree's headers: $(head -3 "$tmp/cc.log")"
renames=()
for s in quant_dot_simd quant_dot_set_shape quant_dot_get_shape quant_dot_shape_default quant_isa_best \
         QUANT_DOT_ROWS QUANT_DOT_PREFETCH; do
    renames+=(--redefine-sym "$s=old_$s")
done
objcopy "${renames[@]}" "$tmp/old-raw.o" "$tmp/old.o" || die "objcopy failed"
cc_kernel -o "$tmp/ab-decode" harness/ops/ab_decode.c "$tmp/old.o" "$kernel" kernels/cpu/quant_format.c \
    kernels/cpu/quant_x8.c kernels/cpu/quant_dot_c.c kernels/ref/quant.c kernels/ref/gemv.c -lm \
    2>"$tmp/cc.log" || die "the driver does not build: $(head -3 "$tmp/cc.log")"
echo "ab-decode: new = this tree's $kernel, old = $old_name; $CPU_ARCH"
rc=0
"$tmp/ab-decode" "$rows" "$k" "$ROUNDS" || rc=$?
exit $rc

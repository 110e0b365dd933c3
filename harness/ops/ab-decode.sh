#!/usr/bin/env bash
# harness/ops/ab-decode.sh -- `make ab-decode [REV=HEAD] [MATRIX=1024x4096]
# [ROUNDS=200]`: this tree's CPU decode kernels (the integer formats'
# kernels/cpu/quant_dot_avx2.c and F16's GEMV, kernels/cpu/gemv.c) against
# the same files at git revision REV, in one process, call by call
# (harness/ops/ab_decode.c says why: on a shared VM two runs of two
# binaries cannot tell a 10 % change from the machine's drift). Both are
# built as the Makefile builds kernels (-O3, CPU_ARCH, OpenMP) against
# this tree's headers, so REV's files must still compile with them; the
# old build's symbols are renamed old_*; both are validated against the
# FP64 reference before they are timed.
#
# Prints, per format (F16, q8..q2, each in its default shape on both
# sides), the best and median microseconds a call and the ratios new /
# old. Set OMP_NUM_THREADS=1 for one core. The matrix is ROWS x K of
# random weights; 1024 x 4096 sits in the LLC of the 2-core VMs, where
# the integer kernels are bound by their instructions (a DRAM-sized one
# compares the memory instead: MATRIX=16384x4096).
#
#   REV       the revision to compare with (default HEAD: this tree's edits)
#   OLD       a file to take as the old quant_dot_avx2.c instead of REV's
#             (a copy, edited); gemv.c still comes from REV
#   MATRIX    ROWSxK (default 1024x4096)
#   ROUNDS    calls of each (default 200, 3 to 10000)
#   TOKENS    tokens a call (default 1): above 1, F16's GEMV alone (the
#             integer kernels decode one token)
#   F16_ROWS  F16's rows a step at n = 1 on each side, OLD:NEW (default:
#             each build's own); with REV=HEAD and an unedited gemv.c it
#             compares two shapes of one kernel call by call
#   SHAPE     the integer formats' shape on both sides, rows:prefetch
#             (rows 1, 2 or 4; prefetch in bytes), for their defaults
#   CPU_ARCH  code generation flags (default -march=native, as the Makefile)
#   OPENBLAS_CFLAGS, OPENBLAS_LIBS  as the Makefile finds them (gemv.c
#             calls cblas; default: no flags, -lopenblas)
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
if ! [[ $ROUNDS =~ ^[0-9]+$ ]] || ((ROUNDS < 3 || ROUNDS > 10000)); then
    die "ROUNDS wants 3 to 10000, not '$ROUNDS'"
fi
kernel=kernels/cpu/quant_dot_avx2.c gemv=kernels/cpu/gemv.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git_old() { # file -> $tmp/old-NAME.c, from REV
    git show "$REV:$1" >"$tmp/old-$(basename "$1")" 2>"$tmp/git.log" || die "no $1 at '$REV': $(head -1 "$tmp/git.log")"
}
git_old "$gemv"
if [ -n "${OLD:-}" ]; then
    [ -f "$OLD" ] || die "OLD=$OLD: no such file"
    cp "$OLD" "$tmp/old-quant_dot_avx2.c"
    old_name="$OLD (and $REV's gemv.c)"
else
    git_old "$kernel"
    old_name="$REV's ($(git rev-parse --short "$REV"))"
fi
if cmp -s "$tmp/old-quant_dot_avx2.c" "$kernel" && cmp -s "$tmp/old-gemv.c" "$gemv"; then
    echo "ab-decode: old and new are the same files: the ratios measure the noise alone"
fi

# shellcheck disable=SC2086 # CPU_ARCH and the OpenBLAS flags are lists of flags
cc_kernel() { "${CC:-cc}" -std=c11 -O3 $CPU_ARCH -fopenmp -Wno-psabi -D_GNU_SOURCE ${OPENBLAS_CFLAGS:-} -iquote kernels/cpu -Iharness -Ikernels "$@"; }
olds=()
for f in quant_dot_avx2 gemv; do
    cc_kernel -c "$tmp/old-$f.c" -o "$tmp/raw-$f.o" 2>"$tmp/cc.log" ||
        die "the old $f.c does not compile against this tree's headers: $(head -3 "$tmp/cc.log")"
    # every symbol it defines, renamed: the old build beside the new one
    renames=()
    for s in $(nm --defined-only -g "$tmp/raw-$f.o" | awk '{ print $3 }'); do
        renames+=(--redefine-sym "$s=old_$s")
    done
    objcopy "${renames[@]}" "$tmp/raw-$f.o" "$tmp/old-$f.o" || die "objcopy failed on $f.o"
    olds+=("$tmp/old-$f.o")
done
# shellcheck disable=SC2086 # OPENBLAS_LIBS is a list of flags
cc_kernel -o "$tmp/ab-decode" harness/ops/ab_decode.c "${olds[@]}" "$kernel" "$gemv" kernels/cpu/quant_format.c \
    kernels/cpu/quant_x8.c kernels/cpu/quant_dot_c.c kernels/cpu/quant_dot.c kernels/cpu/quant_batch_avx2.c kernels/ref/quant.c kernels/ref/gemv.c ${OPENBLAS_LIBS:--lopenblas} -lm \
    2>"$tmp/cc.log" || die "the driver does not build: $(head -3 "$tmp/cc.log")"
echo "ab-decode: new = this tree's $kernel and $gemv, old = $old_name; $CPU_ARCH"
rc=0
TOKENS=${TOKENS:-1}
[[ $TOKENS =~ ^[1-8]$ ]] || die "TOKENS wants 1 to 8, not '$TOKENS'"
if [ "$TOKENS" = 1 ]; then
    "$tmp/ab-decode" ${F16_ROWS:+--f16-rows "$F16_ROWS"} "$rows" "$k" "$ROUNDS" ${SHAPE:+"$SHAPE"} || rc=$?
else
    "$tmp/ab-decode" --tokens "$TOKENS" "$rows" "$k" "$ROUNDS" || rc=$?
fi
exit $rc

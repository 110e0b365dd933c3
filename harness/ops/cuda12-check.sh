#!/usr/bin/env bash
# harness/ops/cuda12-check.sh -- does the CUDA code build with a CUDA 12
# toolkit? `make check-cuda12`; CI runs it after make test. This machine's
# toolkit is CUDA 13, which needs an R580 driver and dropped sm_70 (V100);
# many lab machines have CUDA 12, an R535-R550 driver and V100s. Neither
# nvcc 12 nor a GPU is needed:
#
#  1. PyPI's CUDA 12 wheels (nvidia-cuda-runtime-cu12, nvidia-cublas-cu12,
#     nvidia-cuda-nvcc-cu12, nvidia-cuda-cccl-cu12, nvidia-nvtx-cu12 and,
#     for the headers clang's CUDA mode includes, nvidia-curand-cu12, all
#     of CUDA $CUDA12)
#     are downloaded (pip download) into $B/cuda12/wheels/ and unpacked
#     into one CUDA installation, $B/cuda12/cuda-X.Y/: include/, lib64/
#     (libcudart.so.12, libcublas.so.12, libcublasLt.so.12), bin/ptxas, nvvm/libdevice/.
#     Nothing is installed system-wide; both are kept for the next run.
#  2. The wheels hold no nvcc (nor cicc, fatbinary, nvlink: of the
#     compiler, only ptxas and libdevice), so harness/ops/clang-nvcc.sh,
#     clang++-19 in CUDA mode, stands in for it as that installation's
#     bin/nvcc, and the project's own Makefile builds with it into
#     $B/cuda12/make/: every .cu file of kernels/ and harness/ for each SM
#     in SMS (default 70 75 80 90) against CUDA 12's headers, its PTX
#     assembled by CUDA 12's ptxas; the C files; every binary, linked
#     against the wheels' libcudart.so.12. Warnings
#     are errors under CI=true, as in make test. The registers and spills
#     ptxas gave each kernel are in $B/cuda12/make/kernel-resources.txt;
#     the sm_70 rows are printed.
#  3. tests/cuda/*.cu, for the same SMs.
#  4. Every CUDA object in one program (an experiment's, with all of
#     them: a binary takes only the objects it calls), its symbols bound at
#     load (-z now), run once (--print-label, on the CPU): CUDA 12's
#     libcudart loads and has every CUDA function the code calls; cuBLAS
#     and cuBLASLt, which no binary links (harness/cublas_loader.cu opens
#     them at their first call), are opened as the binaries open them, and
#     CUDA 12's libcublas.so.12 and libcublasLt.so.12 have every function
#     the code calls.
#  5. No header came from another toolkit (a CUDA 13 in /usr/local/include
#     or /usr/local/cuda): each .cu file's headers, host and device side,
#     are this installation's, the system's or the tree's.
#
# What passing proves: the sources compile against CUDA 12's headers
# (runtime, cuBLAS, fp16, WMMA, no CUDA-13-only API), link against its
# libraries, and CUDA 12's ptxas accepts their code for sm_70 (V100) and
# the other SMs. What it does not: clang is not nvcc (another C++ front
# end, LLVM's optimizer instead of NVVM's), so it does not prove that nvcc
# 12 compiles the code, nor that its registers are nvcc 12's; the objects
# hold no device code (the wheels have no fatbinary), so nothing here runs
# on a GPU. What nvcc gives and clang lacks is supplied, and said, in
# harness/ops/clang-nvcc.h and clang-nvcc.sh.
#
# Usage: harness/ops/cuda12-check.sh [--help]
# Environment: B (default build; the work goes to $B/cuda12/), CUDA12
# (default 12.3: the oldest CUDA 12 whose wheels hold all its headers;
# 12.0 to 12.2's nvidia-cuda-cccl-cu12 lack nv/target, which cuda_fp16.h
# includes; so a call that 12.1 to 12.3 added passes here, though a 12.0
# to 12.2 toolkit lacks it), SMS
# (default "70 75 80 90"), CLANG (default clang++-19), MAKE, CI (true:
# warnings are errors).
# Exit codes: 0 built, linked and loaded; 1 a step failed (what it said is
# printed); 2 bad usage; 77 no clang++-19 here (apt-get install clang-19).
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
'') ;;
*) echo "usage: $0 [--help]" >&2; exit 2 ;;
esac
root=$PWD
B=${B:-build}
CUDA12=${CUDA12:-12.3}
SMS=${SMS:-70 75 80 90}
export CLANG=${CLANG:-clang++-19}
MAKE=${MAKE:-make}
[[ $CUDA12 =~ ^12\.[0-9]+$ ]] || { echo "cuda12-check: CUDA12=$CUDA12 is not a CUDA 12 version (12.0 .. 12.9)" >&2; exit 2; }

say() { echo "cuda12-check: $*"; }
# A failed step: its first errors and warnings, with their context, how
# many there were, and the log's end; then exit 1.
fail() { # STEP LOG
    local pattern='(error|warning) *:|fatal|undefined reference|\*\*\*' n
    say "FAILED: $1 (the whole log: $2)"
    n=$(grep -c -E "$pattern" "$2" || true)
    grep -E -m 12 -A3 "$pattern" "$2" || true
    [ "$n" -le 12 ] || echo "... $n lines with an error or a warning in all"
    echo "--- the log's last lines:"
    tail -n 8 "$2"
    exit 1
}

if ! command -v "$CLANG" >/dev/null 2>&1; then
    say "skipped: no $CLANG here (Debian 12 packages it: apt-get install clang-19)"
    exit 77
fi
mkdir -p "$B/cuda12"
work=$(cd "$B/cuda12" && pwd)
cuda=$work/cuda-$CUDA12
nvcc=$cuda/bin/nvcc
t0=$SECONDS

# ---- 1. the wheels, one installation --------------------------------------
# Each package at the newest release of CUDA12: cuBLAS numbers its releases
# after the CUDA version it ships with, as the others do; cuRAND 10.3.N+1
# ships with CUDA 12.N (10.3.1 with 12.0, 10.3.10 with 12.9).
PACKAGES="nvidia-cuda-runtime-cu12 nvidia-cublas-cu12 nvidia-cuda-nvcc-cu12 nvidia-cuda-cccl-cu12 nvidia-nvtx-cu12 nvidia-curand-cu12"
release_of() { # PACKAGE: its release series for CUDA12
    case $1 in
    nvidia-curand-cu12) echo "10.3.$((${CUDA12#12.} + 1))" ;;
    *) echo "$CUDA12" ;;
    esac
}
fetch_wheels() {
    local dest=$work/wheels/$CUDA12 specs=() p
    for p in $PACKAGES; do specs+=("$p==$(release_of "$p").*"); done
    mkdir -p "$dest"
    say "PyPI's CUDA $CUDA12 wheels into ${dest#"$root"/} (pip download; about 400 MB, kept)"
    python3 -m pip download -q --no-deps --only-binary=:all: --timeout 30 --retries 2 \
        --dest "$dest" "${specs[@]}" >"$work/pip.log" 2>&1 || fail "pip download" "$work/pip.log"
}

# The wheels' nvidia/<package>/{include,lib,bin,nvvm} in one CUDA layout,
# built beside and renamed into place: a run cut short leaves none.
assemble() {
    local tmp=$work/.cuda-$CUDA12.tmp w n
    rm -rf "$tmp" && mkdir -p "$tmp/unpacked" "$tmp/include" "$tmp/lib64" "$tmp/bin" "$tmp/nvvm/libdevice"
    for p in $PACKAGES; do
        n=$(printf '%s' "$p" | tr - _)
        w=$(find "$work/wheels/$CUDA12" -name "${n}-$(release_of "$p").*.whl" | sort -V | tail -n 1)
        [ -n "$w" ] || { say "no $p wheel of CUDA $CUDA12 in $work/wheels/$CUDA12"; exit 1; }
        echo "  $(basename "$w")"
        python3 -m zipfile -e "$w" "$tmp/unpacked"
    done
    local nv=$tmp/unpacked/nvidia same
    # One include/ of them all: no two wheels may hold the same header.
    same=$(cd "$nv" && find ./*/include -type f ! -name '__init__.py' | cut -d/ -f4- | sort | uniq -d)
    [ -z "$same" ] || { say "two of CUDA $CUDA12's wheels hold the same headers:"; echo "$same"; rm -rf "$tmp"; exit 1; }
    for d in "$nv"/*/include; do cp -a "$d/." "$tmp/include/"; done
    find "$tmp/include" -name '__init__.py' -delete
    find "$tmp/include" -name '__pycache__' -prune -exec rm -rf {} +
    mv "$nv"/cuda_runtime/lib/libcudart.so.12 "$nv"/cublas/lib/libcublas.so.12 \
        "$nv"/cublas/lib/libcublasLt.so.12 "$tmp/lib64/"
    mv "$nv"/cuda_nvcc/bin/ptxas "$tmp/bin/"
    mv "$nv"/cuda_nvcc/nvvm/libdevice/libdevice.10.bc "$tmp/nvvm/libdevice/"
    chmod +x "$tmp/bin/ptxas"
    # The wheels have no static runtime: the Makefile's -lcudart_static
    # finds libcudart.so.12 under that name, so the binaries load it.
    ln -s libcudart.so.12 "$tmp/lib64/libcudart.so"
    ln -s libcudart.so.12 "$tmp/lib64/libcudart_static.so"
    ln -s libcublas.so.12 "$tmp/lib64/libcublas.so"
    rm -rf "$tmp/unpacked"
    # cuda_fp16.h includes <nv/target>, which some releases' cccl wheels
    # lack: clang would take another toolkit's, or fail.
    if [ ! -f "$tmp/include/nv/target" ]; then
        say "CUDA $CUDA12's wheels lack include/nv/target (PyPI's nvidia-cuda-cccl-cu12 has it from 12.3.101.post1 on): use CUDA12=12.3 or newer"
        rm -rf "$tmp"
        exit 1
    fi
    echo "$PACKAGES" >"$tmp/.packages"
    rm -rf "$cuda" && mv "$tmp" "$cuda"
}

if [ "$(cat "$cuda/.packages" 2>/dev/null)" != "$PACKAGES" ]; then
    fetch_wheels
    assemble
fi
# The stand-in nvcc, each run (make does not see it change: a changed one
# rebuilds the CUDA objects).
if ! cmp -s harness/ops/clang-nvcc.sh "$nvcc" || ! cmp -s harness/ops/clang-nvcc.h "$cuda/bin/clang-nvcc.h"; then
    install -m 755 harness/ops/clang-nvcc.sh "$nvcc"
    install -m 644 harness/ops/clang-nvcc.h "$cuda/bin/clang-nvcc.h"
    [ ! -d "$work/make/obj" ] || find "$work/make/obj" -name '*.cu.o' -delete
fi
version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda/include/cuda.h")
say "CUDA $((version / 1000)).$((version % 1000 / 10)) in ${cuda#"$root"/}: ptxas $("$cuda/bin/ptxas" --version | sed -n 's/.*release \([^,]*\), V\(.*\)/\2/p'), $("$CLANG" --version | head -n 1) ($((SECONDS - t0)) s)"

# ---- 2. the Makefile's build with the stand-in ---------------------------
t=$SECONDS
say "building every .cu for SMS=\"$SMS\" with the Makefile (NVCC=${nvcc#"$root"/}) into ${work#"$root"/}/make"
"$MAKE" --no-print-directory -j"$(nproc)" B="$work/make" NVCC="$nvcc" SMS="$SMS" build \
    >"$work/build.log" 2>&1 || fail "the build" "$work/build.log"
# Warnings that did not fail it (outside CI=true) are shown.
grep -E -A4 'warning:' "$work/build.log" | head -n 60 || true
say "built: $(find "$work/make/obj" -name '*.cu.o' | wc -l) CUDA objects, every binary ($((SECONDS - t)) s)"
low=$(tr -s ' ' '\n' <<<"$SMS" | grep . | sort -n | head -n 1)
say "sm_$low as ptxas $CUDA12 assembled clang's PTX (${work#"$root"/}/make/kernel-resources.txt has every SM):"
awk -v sm="$low" '/^file / || $2 == sm' "$work/make/kernel-resources.txt" | sed 's/^/  /'

# ---- 3. tests/cuda/*.cu -------------------------------------------------------
gencode=()
for sm in $SMS; do gencode+=(-gencode "arch=compute_$sm,code=sm_$sm"); done
werror=()
[ "${CI:-}" != true ] || werror=(-Werror all-warnings)
mkdir -p "$work/tests-cuda"
for f in tests/cuda/*.cu; do
    "$nvcc" -std=c++17 -O3 -D_GNU_SOURCE -Iharness -Ikernels "${gencode[@]}" -Xcompiler -Wall,-Wextra \
        "${werror[@]}" -c "$f" -o "$work/tests-cuda/$(basename "$f").o" >"$work/tests-cuda.log" 2>&1 ||
        fail "$f" "$work/tests-cuda.log"
done
say "tests/cuda: $(find tests/cuda -name '*.cu' | wc -l) file(s) built for the same SMs"

# ---- 4. every CUDA object in one program, bound at load ------------------
mk() { "$MAKE" -s --no-print-directory B="$work/make" NVCC="$nvcc" SMS="$SMS" "print-$1"; }
cflags=$(mk CFLAGS)
ldlibs=$(mk LDLIBS)
main_dir=$(find "$work/make/obj/experiments" -mindepth 1 -maxdepth 1 -type d | sort | head -n 1)
mapfile -t cu_objs < <(find "$work/make/obj/kernels" "$work/make/obj/harness" -name '*.cu.o' | sort)
prog=$work/every-cuda-object
rm -f "$prog"
# The Makefile's link of an experiment, with every CUDA object named (the
# libraries give the rest, as they give any binary).
# shellcheck disable=SC2086 # the Makefile's flags, word by word
${CC:-cc} $cflags "$main_dir"/*.o "${cu_objs[@]}" "$work/make/libkernels.a" "$work/make/libreport.a" \
    "$work/make/librooflab.a" $ldlibs -Wl,-z,now -o "$prog" >"$work/link.log" 2>&1 ||
    fail "the link of every CUDA object" "$work/link.log"
libs=$(ldd "$prog" | awk '/libcudart|libcublas/ { print $1 " => " $3 }')
if ! grep -q "libcudart.so.12 => $cuda/" <<<"$libs" || grep -q "libcublas" <<<"$libs"; then
    say "FAILED: the program must load the installation's libcudart.so.12, and not cuBLAS (opened at its first call):"
    echo "$libs"
    exit 1
fi
label=$(LD_BIND_NOW=1 "$prog" --backend cpu --print-label 2>"$work/run.log") || fail "the program's run" "$work/run.log"
# cuBLAS is opened at its first call (harness/cublas_loader.cu), through
# the binaries' run path: every function the code calls, from CUDA 12's.
cat >"$work/cublas-check.c" <<'C'
#include <stddef.h>
#include <stdio.h>
int rl_cublas_resolve_all(char *why, size_t len);
int main(void)
{
    char why[600];
    int ok = rl_cublas_resolve_all(why, sizeof why);
    puts(why);
    return !ok;
}
C
# shellcheck disable=SC2086 # the Makefile's flags, word by word
${CC:-cc} "$work/cublas-check.c" "$work/make/obj/harness/cublas_loader.cu.o" $ldlibs -o "$work/cublas-check" \
    >"$work/cublas-link.log" 2>&1 || fail "the link of the cuBLAS loader" "$work/cublas-link.log"
cublas=$("$work/cublas-check" 2>&1) || { say "FAILED: CUDA $CUDA12's cuBLAS, opened as the binaries open it: $cublas"; exit 1; }
if ! grep -q "libcublas.so.12:" <<<"$cublas" || ! grep -q "libcublasLt.so.12:" <<<"$cublas"; then
    say "FAILED: not CUDA 12's cuBLAS and cuBLASLt: $cublas"
    exit 1
fi
say "the ${#cu_objs[@]} CUDA objects in one program: $(nm -D --undefined-only "$prog" | grep -c -E 'cuda') CUDA functions bound to CUDA $CUDA12's libcudart; it loads and runs (label $label); cuBLAS opened at its first call: $cublas"

# ---- 5. no other toolkit's headers ---------------------------------------------
foreign=""
for f in kernels/*.cu harness/*.cu tests/cuda/*.cu; do
    deps=$("$nvcc" -M -std=c++17 -D_GNU_SOURCE -DRL_HAVE_CUDA=1 -Iharness -Ikernels "${gencode[@]}" "$f" 2>&1) ||
        { say "FAILED: the headers of $f:"; echo "$deps"; exit 1; }
    bad=$(printf '%s\n' "$deps" | tr -s '[:space:]\134' '\n' | grep '^/' |
          grep -v -e "^$cuda/" -e '^/usr/include/' -e '^/usr/lib/' | sort -u || true)
    [ -z "$bad" ] || foreign="$foreign$f:"$'\n'"$bad"$'\n'
done
[ -z "$foreign" ] || { say "FAILED: headers from outside CUDA $CUDA12's installation:"; printf '%s' "$foreign"; exit 1; }
say "every header of every .cu (host and device side) is CUDA $CUDA12's, the system's or the tree's"

say "passed in $((SECONDS - t0)) s: the CUDA code builds against CUDA $CUDA12 (headers, cuBLAS, ptxas for sm_${SMS// /, sm_}) and links against its libraries"
say "not proven here: that nvcc $CUDA12 compiles it (clang's front end and optimizer stood in), nor that it runs on a GPU"

#!/usr/bin/env bash
# harness/ops/clang-nvcc.sh -- a stand-in for nvcc, for the CUDA 12 build
# check (harness/ops/cuda12-check.sh, `make check-cuda12`): clang in CUDA
# mode against a CUDA "installation" assembled from PyPI's CUDA 12 wheels,
# which carry the headers, libdevice, ptxas and the libraries but no nvcc.
# cuda12-check.sh copies this file to that installation's bin/nvcc, where
# it finds the rest (include/, bin/ptxas, nvvm/libdevice/) beside itself,
# and runs the project's own Makefile with NVCC= that copy.
#
# It takes the part of nvcc's command line the Makefile and
# harness/ops/nvcc_res.sh pass, and nothing else (an option it does not
# know is an error, not ignored):
#
#   -c FILE.cu -o OBJ    for each arch of -gencode/-arch: clang's device
#                        pass to PTX (--cuda-device-only -S), then this
#                        installation's ptxas to a cubin (so ptxas 12 checks
#                        the PTX); then clang's host pass to OBJ. OBJ holds
#                        the host code only: the wheels have no fatbinary,
#                        so the cubins are not embedded, and the objects
#                        link but launch no kernel.
#   -ptx FILE.cu -o PTX  the device pass alone, for one arch
#   -M FILE.cu           every header of both passes (the first arch's
#                        device pass), as make rules on standard output
#   --resource-usage     ptxas -v (registers, spills, shared memory)
#   --keep --keep-dir D  the PTX (and cubins) stay in D, for nvcc_res.sh
#   -Xcompiler A,B       A and B to clang, both passes; -Werror all-warnings:
#                        -Werror
#   --version, --list-gpu-arch   as nvcc answers them, for this installation
#   -std, -O, -g, -lineinfo, -D, -I, -MMD, -MP, -MF   as nvcc's
#
# Where it does what nvcc would not (clang's ways, not CUDA 12's; each is
# said again where it is done):
#   - clang-nvcc.h, included first: host min/max and the __ldcs family,
#     which nvcc's headers give and clang's CUDA mode does not;
#   - the PTX loses the lines of host tables (extern "C" const structs of
#     launcher pointers) that clang, unlike nvcc, also emits on the device;
#   - no -Wpass-failed (clang's optimizer failing a #pragma unroll) and no
#     -Wunknown-cuda-version (a CUDA newer than this clang knows);
#   - this installation's include/ comes before the system's, where
#     clang would put it after /usr/local/include (another toolkit's);
#   - the device pass drops -g and -lineinfo (line tables cost time and
#     change nothing checked).
# Environment: CLANG (default clang++-19).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac

cuda_root=$(cd "$(dirname "$0")/.." && pwd)
clang=${CLANG:-clang++-19}
die() { echo "clang-nvcc: $*" >&2; exit 2; }

# The installation's CUDA version, from cuda.h (12040 -> 12.4).
cuda_version() {
    local v
    v=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda_root/include/cuda.h")
    [ -n "$v" ] || die "no CUDA_VERSION in $cuda_root/include/cuda.h"
    echo "$((v / 1000)).$((v % 1000 / 10))"
}

# The archs both this clang (its NVPTX CPUs) and this ptxas (its --help)
# build, as nvcc lists them: compute_70 ...
gpu_archs() {
    comm -12 <("$clang" --target=nvptx64-nvidia-cuda --print-supported-cpus 2>&1 | grep -o 'sm_[0-9]*' | sort -u) \
             <("$cuda_root/bin/ptxas" --help | grep -o 'sm_[0-9]*' | sort -u) |
        sed 's/^sm_/compute_/' | sort -t_ -k2 -n
}

case "${1:-}" in
--version)
    # One line with "release ": the Makefile reads the version from it.
    echo "clang-nvcc: $("$clang" --version | head -n1) in CUDA mode, standing in for nvcc"
    echo "(headers, libdevice and ptxas $("$cuda_root/bin/ptxas" --version | sed -n 's/.*, V//p') of PyPI's CUDA wheels in $cuda_root)"
    echo "Cuda compilation tools, release $(cuda_version), clang stand-in"
    exit 0 ;;
--list-gpu-arch)
    gpu_archs
    exit 0 ;;
esac

archs=() flags=() host_flags=() src="" out="" mode="" keep="" verbose=""
while [ $# -gt 0 ]; do
    case $1 in
    -c) mode=obj ;;
    -ptx) mode=ptx ;;
    -M) mode=deps ;;
    -o) out=${2:?-o needs a file}; shift ;;
    -gencode) set -- "-gencode=${2:?-gencode needs a value}" "${@:3}"; continue ;;
    -gencode=*)
        a=${1#*arch=compute_}; a=${a%%,*}
        [[ $a =~ ^[0-9]+[a-z]?$ ]] || die "cannot read the arch of $1"
        archs+=("$a") ;;
    -arch) set -- "-arch=${2:?-arch needs a value}" "${@:3}"; continue ;;
    -arch=sm_* | -arch=compute_*) a=${1#-arch=*_}; archs+=("$a") ;;
    -Xcompiler) IFS=, read -r -a xs <<<"${2:?-Xcompiler needs a value}"; flags+=("${xs[@]}"); shift ;;
    -Werror) [ "${2:-}" = all-warnings ] || die "-Werror takes all-warnings here"; flags+=(-Werror); shift ;;
    --resource-usage) verbose=-v ;;
    --keep) ;;
    --keep-dir) keep=${2:?--keep-dir needs a folder}; shift ;;
    -lineinfo | -g) host_flags+=(-g) ;;
    -MMD | -MP) host_flags+=("$1") ;;
    -MF) host_flags+=("$1" "${2:?-MF needs a file}"); shift ;;
    -std=* | -O[0-3s] | -D* | -I* | -U*) flags+=("$1") ;;
    -*) die "option $1 not known (this stand-in takes what rooflab's Makefile passes: --help)" ;;
    *.cu) [ -z "$src" ] || die "one source file at a time"; src=$1 ;;
    *) die "argument $1 not known" ;;
    esac
    shift
done
if [ -z "$src" ] || [ -z "$mode" ] || { [ -z "$out" ] && [ "$mode" != deps ]; }; then
    die "usage: nvcc -c|-ptx FILE.cu -o OUT [options], or nvcc -M FILE.cu [options]"
fi
[ ${#archs[@]} -gt 0 ] || archs=(70)
mapfile -t archs < <(printf '%s\n' "${archs[@]}" | sort -un)

# clang: the installation, and no warning that clang knows this CUDA only
# "partially" (it compiles; it means newer features may be missing).
# Its include/ first (-isystem): clang puts --cuda-path's include/ after
# the system's, where /usr/local/include may hold another toolkit's
# headers (a CUDA 13 installed there would shadow these 12.x ones).
# clang-nvcc.h (beside this file in the installation): what nvcc's
# headers give and clang's CUDA mode does not (host min/max, __ldcs).
# -Wno-pass-failed: clang's optimizer saying that it could not unroll a
# loop under #pragma unroll is about clang's optimizer, not the source.
common=(-x cuda --cuda-path="$cuda_root" -isystem "$cuda_root/include" -Wno-unknown-cuda-version
        -include "$cuda_root/bin/clang-nvcc.h" "${flags[@]}" -Wno-pass-failed)

# A folder for the PTX and cubins, kept where --keep-dir says.
work=$keep
if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
base=$(basename "$src" .cu)

# clang, unlike nvcc, also emits on the device every externally visible
# const variable with a constant initializer (as an implicit __constant__):
# the tables of host launchers (extern "C" const busy_ops busy_arith_cuda =
# {..., arith_burst, ...}) become .const data holding the addresses of host
# functions, which ptxas refuses ("Cannot take address of function").
# Those tables are host data that no kernel reads: their lines are
# dropped from the PTX, and nothing else is changed.
drop_host_tables() { # PTX_IN PTX_OUT
    awk '
    /^\.extern \.func/ { name = $NF; sub(/\(.*/, "", name); host[name] = 1 }
    /^\.(visible |weak )?\.(const|global) .*= *\{/ {
        for (f in host) if ($0 ~ ("[{, ]" f "[,}]")) next
    }
    { print }' "$1" >"$2"
}

device_pass() { # ARCH PTX_OUT
    "$clang" "${common[@]}" --cuda-device-only --cuda-gpu-arch="sm_$1" -S "$src" -o "$2.clang"
    drop_host_tables "$2.clang" "$2"
    rm -f "$2.clang"
}

if [ "$mode" = deps ]; then
    "$clang" "${common[@]}" --cuda-host-only -M "$src"
    "$clang" "${common[@]}" --cuda-device-only --cuda-gpu-arch="sm_${archs[0]}" -M "$src"
    exit 0
fi
if [ "$mode" = ptx ]; then
    [ ${#archs[@]} -eq 1 ] || die "-ptx takes one arch"
    device_pass "${archs[0]}" "$out"
    exit 0
fi
for a in "${archs[@]}"; do
    device_pass "$a" "$work/$base.sm_$a.ptx"
    # ptxas writes "ptxas info : ..." lines, as under nvcc --resource-usage.
    "$cuda_root/bin/ptxas" -m64 -O3 ${verbose:+"$verbose"} -arch="sm_$a" "$work/$base.sm_$a.ptx" -o "$work/$base.sm_$a.cubin"
done
"$clang" "${common[@]}" "${host_flags[@]}" --cuda-host-only -c "$src" -o "$out"

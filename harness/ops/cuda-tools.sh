# cuda-tools.sh -- where cuobjdump and nvdisasm are, for the scripts that
# read the build's machine code (sass.sh, gpu-model.sh). Sourced, not run.
#
# Both come with a full CUDA toolkit; where they are missing (a toolkit
# without them, as on the CPU machines) they are taken from PyPI's
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels into $B/tools/
# (pip download, unzipped there: nothing is installed system-wide).
#
# cuda_tools_dir NAME: prints the folder that holds both, fetching them if
# needed (a line on stderr says so); returns 77 when they cannot be had.

# The first folder holding both: on PATH, beside nvcc, or fetched before.
cuda_tools_find() {
    local nvcc_dir d
    nvcc_dir=$(dirname "$(command -v "${NVCC:-nvcc}" 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
    for d in "$(dirname "$(command -v cuobjdump || echo /none/x)")" "$nvcc_dir" "${B:-build}"/tools/nvidia/*/bin; do
        [ -x "$d/cuobjdump" ] && [ -x "$d/nvdisasm" ] && { echo "$d"; return 0; }
    done
    return 1
}

cuda_tools_dir() {
    local name=$1 tools=${B:-build}/tools w
    cuda_tools_find && return 0
    echo "$name: no cuobjdump and nvdisasm: fetching PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm into $tools/" >&2
    mkdir -p "$tools"
    if ! python3 -m pip download -q --no-deps --timeout 10 --retries 1 --dest "$tools" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2; then
        echo "$name: skipped: no cuobjdump, and the wheels could not be downloaded" >&2
        return 77
    fi
    for w in "$tools"/nvidia_cuda_*.whl; do python3 -m zipfile -e "$w" "$tools"; done
    chmod +x "$tools"/nvidia/*/bin/*
    cuda_tools_find || { echo "$name: skipped: the wheels held no cuobjdump and nvdisasm" >&2; return 77; }
}

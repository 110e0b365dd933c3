#!/usr/bin/env bash
# cuda-loads.sh -- how many global loads, and of what width, one lane of the
# CUDA decode issues per block of a weight row, for every quantized format:
# tests/cuda/decode_loads.cu compiled to PTX (no GPU needed), its loads
# counted. Fails when a lane loads more than 16 bytes per block row, its
# weights and scales together: at most one 16-byte load's worth (a lane's
# eight weights take at most 8 bytes in every format, its scales 2 to 4).
# The count of load instructions is printed: several narrow loads cost
# issue slots, not bytes.
# Usage: tests/cuda-loads.sh [BUILD_DIR]
set -euo pipefail
B=${1:-build}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! [ -x "$NVCC" ]; then
    echo "cuda-loads: skipped: no nvcc (the CUDA toolkit is not installed)"
    exit 77
fi
mkdir -p "$B"
ptx=$B/decode_loads.ptx
"$NVCC" -ptx -O3 -std=c++17 -arch=sm_90 -Iharness -Ikernels tests/cuda/decode_loads.cu -o "$ptx"
awk '
/^\.visible \.entry probe_/ { name = $3; sub(/^probe_/, "", name); sub(/\(.*/, "", name); next }
name && /ld\.global/ {
    w = 4
    if ($0 ~ /\.v4\.(u32|b32|f32)/) w = 16; else if ($0 ~ /\.v2\.(u32|b32|f32)/ || $0 ~ /\.(u64|b64|f64)/) w = 8
    else if ($0 ~ /\.(u16|b16|s16)/) w = 2; else if ($0 ~ /\.(u8|b8|s8)/) w = 1
    loads[name]++; bytes[name] += w; if (w > widest[name]) widest[name] = w
    list[name] = list[name] " " w
}
/^}/ { name = "" }
END {
    printf "%-6s %6s %6s %8s  %s\n", "format", "loads", "bytes", "widest", "widths (bytes, in PTX order)"
    bad = 0
    n = split("q8 q6 q5 q4 q2", order, " ")
    for (i = 1; i <= n; i++) {
        f = order[i]
        if (!(f in loads)) { printf "%-6s no probe kernel found\n", f; bad = 1; continue }
        printf "%-6s %6d %6d %8d %s\n", f, loads[f], bytes[f], widest[f], list[f]
        if (bytes[f] > 16) bad = 1
    }
    exit bad
}' "$ptx"

/*
 * decode_loads.cu -- one lane's decode of one block row, per format, for
 * tests/cuda-loads.sh to count the global loads in the PTX: what a lane of
 * kernels/quant.cu's decode issues per block of a row. Compiled to PTX
 * only; nothing here runs.
 */
#include "quant.h"

#define DECODE_PROBE(fmt)                                                                   \
    extern "C" __global__ void probe_##fmt(const fmt##_block *__restrict__ w, float *out) \
    {                                                                                      \
        float v[8];                                                                        \
        fmt##_decode8(w + blockIdx.x, threadIdx.x % 32, v);                                \
        float s = 0;                                                                       \
        for (int i = 0; i < 8; i++)                                                        \
            s += v[i];                                                                     \
        out[blockIdx.x * 32 + threadIdx.x % 32] = s;                                      \
    }

DECODE_PROBE(q8)
DECODE_PROBE(q6)
DECODE_PROBE(q5)
DECODE_PROBE(q4)
DECODE_PROBE(q2)

/*
 * spill.cu -- CUDA variants of experiment 08's spilled GEMV (spill.h; the
 * table is spill.c). The slow tier is pinned host memory, mapped into the
 * device's address space: the copy variants read it with the copy
 * engines (cudaMemcpyAsync, as offloading engines move weights each
 * step), the zero-copy kernel reads it in place, each warp's loads
 * crossing PCIe or NVLink-C2C while the other warps read HBM.
 */
#include "check.h"
#include "gemv.h"
#include "spill.h"
#include "warp.cuh"

#include <cuda_fp16.h>
#include <stdio.h>

enum { BLOCK = 256, WARPS = BLOCK / 32 };

extern "C" bool spill_tier_open_cuda(spill_tier *t, const fp16 *rows, size_t bytes, char *why, size_t len)
{
    void *host = NULL, *dev = NULL;
    cudaError_t err = cudaHostAlloc(&host, bytes ? bytes : 16, cudaHostAllocMapped);
    if (err != cudaSuccess) {
        snprintf(why, len, "cudaHostAlloc of %zu bytes of pinned memory: %s", bytes, cudaGetErrorString(err));
        return false;
    }
    memcpy(host, rows, bytes);
    RL_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
    t->host = static_cast<fp16 *>(host);
    t->mapped = static_cast<const fp16 *>(dev);
    snprintf(t->where, sizeof t->where, "pinned host memory, mapped");
    return true;
}

extern "C" void spill_tier_close_cuda(spill_tier *t) { RL_CUDA_CHECK(cudaFreeHost(t->host)); }

static void gemv_rows(float *y, const fp16 *w, const fp16 *x, int rows, int k, cudaStream_t s)
{
    if (rows > 0) {
        gemv_args g = {y, w, x, rows, k, 1, NULL, s};
        gemv_fp16_cuda(&g);
    }
}

extern "C" void spill_tier_read_cuda(const spill_args *a)
{
    RL_REQUIRE(a->slow && a->slow->host && (a->slow_rows == 0 || a->staging),
               "the CUDA spill variants need the pinned tier and a staging buffer");
    size_t bytes = (size_t)a->slow_rows * a->k * sizeof(fp16);
    if (bytes)
        RL_CUDA_CHECK(cudaMemcpyAsync(a->staging, a->slow->host + (size_t)a->slow_first * a->k, bytes,
                                      cudaMemcpyHostToDevice, a->stream));
}

extern "C" void spill_sequential_cuda(const spill_args *a)
{
    spill_tier_read_cuda(a);
    gemv_rows(a->y, a->fast, a->x, a->fast_rows, a->k, a->stream);
    gemv_rows(a->y + a->fast_rows, a->staging, a->x, a->slow_rows, a->k, a->stream);
}

/* A warp per row, 16-byte loads, the row from whichever tier holds it. */
__global__ void __launch_bounds__(BLOCK)
spill_zero_copy(float *__restrict__ y, const uint4 *__restrict__ fast, const uint4 *__restrict__ slow,
                const uint4 *__restrict__ x, int fast_rows, int rows, int k8)
{
    int row = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const uint4 *wr = row < fast_rows ? fast + (size_t)row * k8 : slow + (size_t)(row - fast_rows) * k8;
    float acc = 0;
#pragma unroll 4
    for (int c = lane; c < k8; c += 32) {
        float wf[8], xf[8];
        unpack8(__ldcs(wr + c), wf);
        unpack8(__ldg(x + c), xf);
#pragma unroll
        for (int i = 0; i < 8; i++)
            acc = fmaf(wf[i], xf[i], acc);
    }
    float s = warp_sum(acc);
    if (lane == 0)
        y[row] = s;
}

extern "C" void spill_zero_copy_cuda(const spill_args *a)
{
    RL_REQUIRE(a->slow && a->slow->mapped && a->k % 8 == 0,
               "the zero-copy variant needs the mapped tier and k a multiple of 8");
    int rows = a->fast_rows + a->slow_rows;
    unsigned blocks = (unsigned)((rows + WARPS - 1) / WARPS);
    spill_zero_copy<<<blocks ? blocks : 1, BLOCK, 0, a->stream>>>(
        a->y, reinterpret_cast<const uint4 *>(a->fast), reinterpret_cast<const uint4 *>(a->slow->mapped + (size_t)a->slow_first * a->k),
        reinterpret_cast<const uint4 *>(a->x), a->fast_rows, rows, a->k / 8);
    RL_CUDA_CHECK_LAUNCH();
}

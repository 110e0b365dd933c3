/*
 * spill.cu -- CUDA variants of experiment 08's spilled GEMV (spill.h; the
 * table is spill.c). The slow tier is pinned host memory, mapped into the
 * device's address space: the copy variants read it with the copy
 * engines (cudaMemcpyAsync, as offloading engines move weights each
 * step), the zero-copy kernel reads it in place, each warp's loads
 * crossing PCIe or NVLink-C2C while the other warps read HBM. The slow
 * rows' blocks are spread over the grid (spill_schedule, spill.h says
 * why), and the slow tier's rate for the overlapped variant is measured
 * by the same kernel over the slow rows alone. The zero-copy kernel is in
 * spill_zero_copy.cuh.
 */
#include "check.h"
#include "gemv.h"
#include "spill.h"
#include "spill_zero_copy.cuh"
#include "warp.cuh"

#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>

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

static bool aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

/* The slow rows' first word in the mapping. */
static const fp16 *mapped_rows(const spill_args *a)
{
    RL_REQUIRE(a->slow && a->slow->mapped && a->k >= 8 && a->k % 8 == 0,
               "the zero-copy kernel needs the mapped tier and k a multiple of 8");
    const fp16 *rows = a->slow->mapped + (size_t)a->slow_first * a->k;
    RL_REQUIRE(aligned16(rows) && aligned16(a->x) && (a->fast_rows == 0 || aligned16(a->fast)),
               "the zero-copy kernel reads in 16-byte words: the tiers' rows and x 16-byte aligned");
    return rows;
}

/* land: the slow rows alone (fast_rows 0), their words stored there too. */
static void launch_zero_copy(const spill_args *a, float *y, int fast_rows, fp16 *land)
{
    RL_REQUIRE(!land || fast_rows == 0, "the zero-copy read of the slow tier alone has no fast rows");
    spill_launch g = spill_grid(fast_rows, a->slow_rows);
    if (!g.blocks)
        return;
    const uint4 *fast = reinterpret_cast<const uint4 *>(a->fast), *x = reinterpret_cast<const uint4 *>(a->x),
                *slow = reinterpret_cast<const uint4 *>(mapped_rows(a));
    if (land)
        spill_zero_copy<true><<<g.blocks, BLOCK, 0, a->stream>>>(
            y, fast, slow, x, reinterpret_cast<uint4 *>(land), fast_rows, a->slow_rows, g.fast_blocks,
            g.slow_blocks, a->k / 8);
    else
        spill_zero_copy<false><<<g.blocks, BLOCK, 0, a->stream>>>(
            y, fast, slow, x, NULL, fast_rows, a->slow_rows, g.fast_blocks, g.slow_blocks, a->k / 8);
    RL_CUDA_CHECK_LAUNCH();
}

extern "C" void spill_zero_copy_cuda(const spill_args *a) { launch_zero_copy(a, a->y, a->fast_rows, NULL); }

/* The overlapped variant's path over the slow rows alone: their outputs
 * land where the overlapped variant's would (after the fast rows'), their
 * words in staging. */
extern "C" void spill_tier_mapped_cuda(const spill_args *a)
{
    RL_REQUIRE(a->slow_rows == 0 || (a->staging && aligned16(a->staging)),
               "the zero-copy read of the slow tier needs a 16-byte aligned staging buffer");
    launch_zero_copy(a, a->y + a->fast_rows, 0, a->staging);
}

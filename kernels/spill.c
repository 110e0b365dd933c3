/*
 * spill.c -- experiment 08's spill variants (spill.h): one row each, its
 * launcher on each backend (cpu/spill.c, spill.cu); the zero-copy
 * kernel's grid (spill_grid); and the slow tier's opening and closing on
 * either (cpu/spill_tier.c, spill.cu).
 */
#include "spill.h"
#include "check.h"

#include <stdio.h>

const spill_variant spill_variants[] = {
    {.number = 1, .name = "spill_sequential", .role = "sequential", .gemv = true,
     .what = "the slow rows copied into the fast tier each step (pread from the file, O_DIRECT; "
             "cudaMemcpyAsync from pinned memory), then the GEMV over both tiers",
     .cpu = spill_sequential_cpu, .cuda = CUDA_ONLY(spill_sequential_cuda),
     .key = {"sequential (pread, then GEMV)", "sequential (cudaMemcpyAsync, then GEMV)"}},
    {.number = 2, .name = "spill_overlapped", .role = "overlapped", .gemv = true,
     .what = "both tiers at once: every 512 KiB chunk's read queued (io_submit) before the threads "
             "compute the fast rows, then each chunk as it lands (CPU); one kernel reading the slow "
             "rows in place, zero-copy (GPU)",
     .cpu = spill_overlapped_cpu, .cuda = CUDA_ONLY(spill_zero_copy_cuda),
     .key = {"overlapped (queued reads)", "zero-copy (mapped, in place)"}},
    {.number = 3, .name = "spill_tier_read", .role = "slow_tier",
     .what = "the slow tier's bandwidth: only the copy of the slow rows into the fast tier",
     .cpu = spill_tier_read_cpu, .cuda = CUDA_ONLY(spill_tier_read_cuda),
     .key = {"slow tier (pread)", "slow tier (cudaMemcpyAsync)"}},
    {.number = 4, .name = "spill_tier_read_overlapped", .role = "slow_tier_overlapped",
     .what = "the slow tier's bandwidth by the overlapped variant's own path, the slow rows alone: "
             "every chunk's read queued at once (io_submit), then waited for (CPU); the zero-copy "
             "kernel, SM loads through the mapping, each word also stored to the fast tier (GPU)",
     .cpu = spill_tier_queued_cpu, .cuda = CUDA_ONLY(spill_tier_mapped_cuda),
     .key = {"slow tier (queued reads)", "slow tier (zero-copy loads)"}},
    {0},
};

static bool has(const void *row, int backend)
{
    const spill_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

static void detail(const void *row, char *buf, size_t len)
{
    const spill_variant *v = row;
    snprintf(buf, len, "%s", v->gemv ? "n = 1" : "copy only");
}

const kernel_family spill_family = {"spill", "cpu/spill.c", "spill.cu", spill_variants,
                                    sizeof spill_variants[0], has, detail, "gemv.cu"};

spill_launch spill_grid(int fast_rows, int slow_rows)
{
    RL_REQUIRE(fast_rows >= 0 && slow_rows >= 0, "a spill grid takes rows of each tier, none or more");
    spill_launch g = {(fast_rows + SPILL_BLOCK_WARPS - 1) / SPILL_BLOCK_WARPS,
                      (slow_rows + SPILL_BLOCK_WARPS - 1) / SPILL_BLOCK_WARPS, 0};
    g.blocks = (unsigned)g.fast_blocks + (unsigned)g.slow_blocks;
    return g;
}

double spill_bytes(const spill_variant *v, int fast_rows, int slow_rows, int k)
{
    double slow = 2.0 * slow_rows * k;
    if (!v->gemv)
        return slow;
    return 2.0 * fast_rows * k + slow + 2.0 * k + 4.0 * (fast_rows + slow_rows);
}

bool spill_tier_open(spill_tier *t, int backend, const char *dir, const fp16 *rows, size_t bytes,
                     char *why, size_t len)
{
    *t = (spill_tier){.backend = backend, .bytes = bytes, .fd = -1, .direct_fd = -1};
    if (backend == KERNEL_CUDA) {
#ifdef RL_HAVE_CUDA
        return spill_tier_open_cuda(t, rows, bytes, why, len);
#else
        snprintf(why, len, "this build has no CUDA");
        return false;
#endif
    }
    return spill_tier_open_cpu(t, dir, rows, bytes, why, len);
}

void spill_tier_close(spill_tier *t)
{
    spill_tier_close_cpu(t);
#ifdef RL_HAVE_CUDA
    if (t->host)
        spill_tier_close_cuda(t);
#endif
    *t = (spill_tier){.fd = -1, .direct_fd = -1};
}

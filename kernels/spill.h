/*
 * spill.h -- experiment 08's spilled decode GEMV: one FP16 weight matrix
 * (rows x k, n = 1) whose first fast_rows rows live in the fast tier and
 * whose last slow_rows rows live in a slower one:
 *
 *   GPU  fast: device memory (HBM);  slow: pinned host memory, over PCIe
 *        or NVLink-C2C;
 *   CPU  fast: DRAM;  slow: a file on the machine's disk, read with
 *        O_DIRECT (past the page cache, as a loader streams weights from an
 *        SSD that memory cannot cache), or where the file system refuses
 *        it through the page cache after its pages were dropped
 *        (posix_fadvise DONTNEED, as for a model mmap'd from the SSD).
 *
 * The variants (spill.c's table; cpu/spill.c, spill.cu):
 *   - sequential: the slow rows copied into the fast tier, then the GEMV
 *     over both (an offloading engine's copy per step: cudaMemcpyAsync;
 *     pread on the CPU): t/t0 = (1 - f) + f r;
 *   - overlapped: both tiers read at once (GPU: one kernel, the slow rows
 *     read in place through the mapping, zero-copy; CPU: every chunk's
 *     read queued at once (io_submit) before the threads compute the fast
 *     rows, then each chunk as it lands): t/t0 = max(1 - f, f r);
 *   - slow_tier: only the copy of the slow rows into the fast tier: the
 *     slow tier's bandwidth, measured beside the others (r, the
 *     sequential variant's);
 *   - slow_tier_overlapped: the slow rows alone by the overlapped
 *     variant's own path (GPU: the zero-copy kernel, SM loads through the
 *     mapping, each word also stored to the fast tier; CPU: every chunk's
 *     read queued at once, then waited for): the r of the overlapped
 *     variant. A copy engine and SM loads need not cross PCIe at the same
 *     rate, so each variant is judged against its own path's r.
 *
 * The zero-copy kernel's schedule (spill_schedule) gives the slow rows'
 * blocks their share of every stretch of blockIdx, the first block
 * included, so that the slow tier streams from the first wave on while
 * the fast rows fill the rest of the SMs. The plan is host arithmetic
 * (spill_grid, and spill_schedule, which the kernel calls too), so that
 * tests and a static model see the schedule a launch will run.
 *
 * The output is the rows' GEMV, y[r] = sum_i w[r][i] x[i], validated
 * against gemv_reference (gemv.h) of the whole matrix.
 */
#ifndef KERNELS_SPILL_H
#define KERNELS_SPILL_H

#include "common.h"
#include "half.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most reads the CPU's overlapped variant queues at once. */
enum { SPILL_MOST_QUEUED = 256 };

/* The slow tier holding slow rows (spill_tier_open). */
typedef struct spill_tier {
    int backend;        /* KERNEL_CPU or KERNEL_CUDA */
    size_t bytes;
    int fd;             /* CPU: the file (unlinked: it goes when closed); -1 */
    int direct_fd;      /* CPU: the same file opened O_DIRECT (reads that bypass the page
                         * cache, DMA straight into the buffer); -1 where the file system
                         * refuses it: then fd's reads, after its pages are dropped */
    unsigned long aio;  /* CPU: a context for queued reads (io_setup; 0: none), made once:
                         * io_destroy waits for the kernel's RCU grace period, ~30 ms */
    fp16 *host;         /* GPU: pinned, mapped host memory */
    const fp16 *mapped; /* GPU: its address on the device */
    char where[256];    /* the file system (CPU) or "pinned host memory" */
} spill_tier;

/* Writes `bytes` of rows to a new slow tier: on the CPU an unnamed file in
 * dir, synced so that its pages are clean (only clean pages can be
 * dropped); on the GPU pinned, mapped host memory. false and why when it
 * cannot (no such folder, the disk full, a file system that lives in
 * memory: tmpfs has no slower tier). */
bool spill_tier_open(spill_tier *t, int backend, const char *dir, const fp16 *rows, size_t bytes,
                     char *why, size_t len);
void spill_tier_close(spill_tier *t);
/* Whether dir can hold the CPU's slow tier: a folder, writable, on a file
 * system that is not memory; else why not. */
bool spill_dir_usable(const char *dir, char *why, size_t len);
/* CPU: drops the file's pages from the page cache (every call of the
 * variants does, before it reads). */
void spill_tier_drop(const spill_tier *t);

typedef struct spill_args {
    float *y;                /* rows = fast_rows + slow_rows outputs */
    const fp16 *fast;        /* fast_rows x k, in the fast tier */
    const fp16 *x;           /* k */
    const spill_tier *slow;  /* the tier: its rows slow_first .. slow_first + slow_rows - 1 */
    fp16 *staging;           /* slow_rows x k in the fast tier, where copies land */
    int fast_rows, slow_rows, slow_first, k;
    struct CUstream_st *stream; /* CUDA only */
} spill_args;

KERNEL_CALL_TYPE(spill, spill_args)

typedef struct spill_variant {
    KERNEL_VARIANT_HEAD;
    bool gemv; /* computes y (the slow_tier variant only copies) */
    void (*cpu)(const spill_args *a);
    void (*cuda)(const spill_args *a);
} spill_variant;

extern const spill_variant spill_variants[]; /* ended by a zero row */
extern const kernel_family spill_family;

void spill_sequential_cpu(const spill_args *a);
void spill_overlapped_cpu(const spill_args *a);
void spill_tier_read_cpu(const spill_args *a);
void spill_tier_queued_cpu(const spill_args *a);
void spill_sequential_cuda(const spill_args *a);
void spill_zero_copy_cuda(const spill_args *a);
void spill_tier_read_cuda(const spill_args *a);
void spill_tier_mapped_cuda(const spill_args *a);

/* ---- the zero-copy kernel's launch plan (host arithmetic) -------------------
 * A block of SPILL_BLOCK_WARPS warps takes as many consecutive rows of one
 * tier, a warp a row; each lane issues SPILL_LOADS 16-byte streaming loads
 * before it uses the first (2 KiB in flight per warp).
 *
 * Which blocks take slow rows: the slow blocks spread in proportion over
 * the grid (before block b lie ceil(b s / n) of the s slow blocks of n),
 * block 0 one of them. The block scheduler hands out blocks in about the
 * order of blockIdx, so with the fast rows first (the old order) the
 * PCIe rows started only once the fast ones had drained: sequential.
 * Slow rows first would start the slow tier at once too, but its blocks
 * would hold the first wave's slots for the whole step, waiting on PCIe
 * (at f = 0.1 of 65536 rows, 819 slow blocks: more than an H100 holds at
 * once, 132 SMs x 4 blocks), the fast rows waiting for them: sequential
 * again. PCIe needs only a few hundred
 * requests in flight (its rate times its latency, ~80 KiB: some 40 warps
 * at 2 KiB; experiments/08-weight-tiers/README.md, "Method"),
 * which a tenth of any wave already holds; spread in proportion, the slow
 * blocks take their share of each wave and build up only as the
 * scheduler moves on, the fast rows keep most of the SMs, and both tiers
 * stream from the first wave on. */
enum { SPILL_BLOCK_WARPS = 8, SPILL_LOADS = 4 };

typedef struct spill_launch {
    int fast_blocks, slow_blocks; /* blocks of each tier's rows */
    unsigned blocks;              /* the grid: both */
} spill_launch;
spill_launch spill_grid(int fast_rows, int slow_rows);

/* What block `block` of a grid of fast_blocks + slow_blocks takes: slow
 * or fast rows, from its tier's row `first` (a multiple of
 * SPILL_BLOCK_WARPS; rows past the tier's end are no one's). Every row
 * of both tiers falls to exactly one block. The kernel calls it too. */
typedef struct spill_block {
    int slow;  /* 1: the slow tier's rows */
    int first; /* its first row within its tier */
} spill_block;

RL_HD spill_block spill_schedule(int block, int fast_blocks, int slow_blocks)
{
    long long n = (long long)fast_blocks + slow_blocks, s = slow_blocks, b = block;
    /* slow blocks before b, and before b + 1: ceil(b s / n) rises by 0 or 1 a block */
    long long before = n ? (b * s + n - 1) / n : 0, through = n ? ((b + 1) * s + n - 1) / n : 0;
    spill_block r;
    r.slow = through > before;
    r.first = (int)((r.slow ? before : b - before) * SPILL_BLOCK_WARPS);
    return r;
}

/* The CPU's tier (cpu/spill_tier.c): the file's fields of t. */
bool spill_tier_open_cpu(spill_tier *t, const char *dir, const fp16 *rows, size_t bytes, char *why,
                         size_t len);
void spill_tier_close_cpu(spill_tier *t);
/* The GPU's tier (spill.cu). */
bool spill_tier_open_cuda(spill_tier *t, const fp16 *rows, size_t bytes, char *why, size_t len);
void spill_tier_close_cuda(spill_tier *t);

/* Bytes a call moves: every weight once from its tier (a GEMV: x in and
 * y out too); the sequential CPU and GPU variants also write the slow rows
 * into staging and read them back, which the model's r leaves out (the
 * fast tier's share of a slow row is small beside the slow tier's). */
double spill_bytes(const spill_variant *v, int fast_rows, int slow_rows, int k);

#ifdef __cplusplus
}
#endif
#endif

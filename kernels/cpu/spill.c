/*
 * cpu/spill.c -- experiment 08's spilled GEMV on the CPU (spill.h): the
 * fast tier is DRAM, the slow one a file on the disk, read with O_DIRECT
 * so that every byte comes from the disk (or, where the file system has
 * no O_DIRECT, through the page cache after each call drops its pages).
 * The GEMV is gemv_fp16_cpu, the bandwidth kernel of experiments 02 and 03.
 */
#include "../gemv.h"
#include "../spill.h"
#include "check.h"

#include <linux/aio_abi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 512 KiB: the first chunk lands soon and the last leaves little to
 * compute after it. On a 2-core Zen 5 VM at f = 0.1 (11 MiB) the
 * overlapped variant lay at 0.24 of the way from its model to the
 * sequential one with 512 KiB chunks, 0.71 with 2 MiB and 0.33 with
 * 8 MiB (one run each; the disk's rate moves between runs). */
enum { CHUNK_BYTES = 512 << 10, DIRECT_ALIGN = 4096 };

static bool aligned(const void *p, size_t bytes, size_t offset)
{
    return (uintptr_t)p % DIRECT_ALIGN == 0 && bytes % DIRECT_ALIGN == 0 && offset % DIRECT_ALIGN == 0;
}

/* O_DIRECT where the buffer, length and offset allow it (rows of k >= 2048
 * halves are whole 4 KiB blocks), else the page cache's path. */
static void read_range(const spill_tier *t, void *dst, size_t bytes, size_t offset)
{
    int fd = t->direct_fd >= 0 && aligned(dst, bytes, offset) ? t->direct_fd : t->fd;
    for (size_t done = 0; done < bytes;) {
        ssize_t n = pread(fd, (char *)dst + done, bytes - done, (off_t)(offset + done));
        RL_REQUIRE(n > 0, "the slow tier's file reads back whole");
        done += (size_t)n;
    }
}

static void gemv_rows(float *y, const fp16 *w, const fp16 *x, int rows, int k)
{
    if (rows > 0)
        gemv_fp16_cpu(&(gemv_args){y, w, x, rows, k, 1, NULL, NULL});
}

static size_t slow_bytes(const spill_args *a) { return (size_t)a->slow_rows * a->k * sizeof(fp16); }

static void require_tier(const spill_args *a)
{
    RL_REQUIRE(a->slow && a->slow->fd >= 0 &&
                   a->slow->bytes >= slow_bytes(a) + (size_t)a->slow_first * a->k * sizeof(fp16) &&
                   (a->slow_rows == 0 || a->staging),
               "the CPU's spill variants need the slow tier's file and a staging buffer");
}

void spill_tier_read_cpu(const spill_args *a)
{
    require_tier(a);
    spill_tier_drop(a->slow);
    read_range(a->slow, a->staging, slow_bytes(a), (size_t)a->slow_first * a->k * sizeof(fp16));
}

void spill_sequential_cpu(const spill_args *a)
{
    spill_tier_read_cpu(a);
    gemv_rows(a->y, a->fast, a->x, a->fast_rows, a->k);
    gemv_rows(a->y + a->fast_rows, a->staging, a->x, a->slow_rows, a->k);
}

/* ---- overlapped: every chunk's read queued at once ------------------------------ */

/* Linux's native asynchronous I/O (io_submit), by its system calls: the
 * reads of every chunk are queued in one call before the GEMV starts, the
 * disk fills them by DMA while the threads compute the fast rows, and
 * each chunk is computed as it completes: the CPU's cudaMemcpyAsync. A
 * reader thread and posix_fadvise(WILLNEED) readahead were tried and did
 * not overlap (experiments/08-weight-tiers/README.md, "Method"). */
typedef struct aio {
    aio_context_t ctx; /* the tier's */
    int chunks, chunk_rows;
    struct iocb *cb;
    bool *landed;
} aio;

static long sys_io_submit(aio_context_t ctx, long n, struct iocb **cbs) { return syscall(SYS_io_submit, ctx, n, cbs); }
static long sys_io_getevents(aio_context_t ctx, long least, long most, struct io_event *ev)
{
    return syscall(SYS_io_getevents, ctx, least, most, ev, NULL);
}

static int chunk_length(const spill_args *a, const aio *q, int c)
{
    int first = c * q->chunk_rows;
    return a->slow_rows - first < q->chunk_rows ? a->slow_rows - first : q->chunk_rows;
}

/* Queues every chunk's read, in order; returns how many the kernel took
 * (the caller reads the others itself). */
static int queue_reads(const spill_args *a, aio *q)
{
    size_t row_bytes = (size_t)a->k * sizeof(fp16);
    struct iocb **list = calloc((size_t)q->chunks, sizeof *list);
    RL_REQUIRE(list, "out of memory for the reads");
    for (int c = 0; c < q->chunks; c++) {
        int first = c * q->chunk_rows;
        fp16 *dst = a->staging + (size_t)first * a->k;
        size_t bytes = (size_t)chunk_length(a, q, c) * row_bytes,
               offset = (size_t)(a->slow_first + first) * row_bytes;
        /* with O_DIRECT where the chunk allows it, else through the page
         * cache (the kernel then reads it as it is queued) */
        int fd = a->slow->direct_fd >= 0 && aligned(dst, bytes, offset) ? a->slow->direct_fd : a->slow->fd;
        q->cb[c] = (struct iocb){.aio_data = (uint64_t)c, .aio_lio_opcode = IOCB_CMD_PREAD,
                                 .aio_fildes = (uint32_t)fd, .aio_buf = (uint64_t)(uintptr_t)dst,
                                 .aio_nbytes = (uint64_t)bytes, .aio_offset = (int64_t)offset};
        list[c] = &q->cb[c];
    }
    long queued = 0;
    while (queued < q->chunks) {
        long n = sys_io_submit(q->ctx, q->chunks - queued, list + queued);
        if (n <= 0)
            break;
        queued += n;
    }
    free(list);
    return (int)queued;
}

static void wait_for(aio *q, int c)
{
    while (!q->landed[c]) {
        struct io_event ev[16];
        long n = sys_io_getevents(q->ctx, 1, 16, ev);
        RL_REQUIRE(n > 0, "the slow tier's queued reads complete");
        for (long i = 0; i < n; i++) {
            RL_REQUIRE(ev[i].res == (int64_t)q->cb[ev[i].data].aio_nbytes, "each queued read reads its chunk whole");
            q->landed[ev[i].data] = true;
        }
    }
}

/* Queues every chunk's read of the slow rows (where the tier has a
 * context and the chunks are not too many), before the caller computes
 * anything: q's chunks, and how many the kernel took. */
static int start_reads(const spill_args *a, aio *q)
{
    size_t row_bytes = (size_t)a->k * sizeof(fp16);
    *q = (aio){.chunk_rows = CHUNK_BYTES / row_bytes > 0 ? (int)(CHUNK_BYTES / row_bytes) : 1,
               .ctx = (aio_context_t)a->slow->aio};
    q->chunks = (a->slow_rows + q->chunk_rows - 1) / q->chunk_rows;
    if (!q->chunks)
        return 0;
    q->cb = calloc((size_t)q->chunks, sizeof *q->cb);
    q->landed = calloc((size_t)q->chunks, sizeof *q->landed);
    RL_REQUIRE(q->cb && q->landed, "out of memory for the reads");
    return q->ctx && q->chunks <= SPILL_MOST_QUEUED ? queue_reads(a, q) : 0;
}

/* Chunk c in staging: its queued read waited for, or (not queued) read now. */
static fp16 *land_chunk(const spill_args *a, aio *q, int c, int queued)
{
    size_t row_bytes = (size_t)a->k * sizeof(fp16);
    fp16 *dst = a->staging + (size_t)c * q->chunk_rows * a->k;
    if (c < queued)
        wait_for(q, c);
    else
        read_range(a->slow, dst, (size_t)chunk_length(a, q, c) * row_bytes,
                   (size_t)(a->slow_first + c * q->chunk_rows) * row_bytes);
    return dst;
}

static void end_reads(aio *q)
{
    free(q->cb);
    free(q->landed);
}

void spill_overlapped_cpu(const spill_args *a)
{
    require_tier(a);
    spill_tier_drop(a->slow);
    aio q;
    int queued = start_reads(a, &q);
    gemv_rows(a->y, a->fast, a->x, a->fast_rows, a->k);
    for (int c = 0; c < q.chunks; c++) {
        fp16 *dst = land_chunk(a, &q, c, queued);
        gemv_rows(a->y + a->fast_rows + (size_t)c * q.chunk_rows, dst, a->x, chunk_length(a, &q, c), a->k);
    }
    end_reads(&q);
}

/* The overlapped variant's path to the slow tier with nothing else: every
 * chunk's read queued at once, then each waited for (its r). */
void spill_tier_queued_cpu(const spill_args *a)
{
    require_tier(a);
    spill_tier_drop(a->slow);
    aio q;
    int queued = start_reads(a, &q);
    for (int c = 0; c < q.chunks; c++)
        land_chunk(a, &q, c, queued);
    end_reads(&q);
}

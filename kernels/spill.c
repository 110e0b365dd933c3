/*
 * spill.c -- experiment 08's spill variants (spill.h): one row each, its
 * launcher on each backend (cpu/spill.c, spill.cu); and the slow tier.
 */
#include "spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/aio_abi.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

const spill_variant spill_variants[] = {
    {.number = 1, .name = "spill_sequential", .role = "sequential", .gemv = true,
     .what = "the slow rows copied into the fast tier each step (pread after the pages are dropped; "
             "cudaMemcpyAsync from pinned memory), then the GEMV over both tiers",
     .cpu = spill_sequential_cpu, .cuda = CUDA_ONLY(spill_sequential_cuda),
     .key = {"sequential (pread, then GEMV)", "sequential (cudaMemcpyAsync, then GEMV)"}},
    {.number = 2, .name = "spill_overlapped", .role = "overlapped", .gemv = true,
     .what = "both tiers at once: the disk reads ahead into the page cache (WILLNEED) while the "
             "threads compute the fast rows, then 2 MiB chunks as they land (CPU); one kernel "
             "reading the slow rows in place, zero-copy (GPU)",
     .cpu = spill_overlapped_cpu, .cuda = CUDA_ONLY(spill_zero_copy_cuda),
     .key = {"overlapped (queued reads)", "zero-copy (mapped, in place)"}},
    {.number = 3, .name = "spill_tier_read", .role = "slow_tier",
     .what = "the slow tier's bandwidth: only the copy of the slow rows into the fast tier",
     .cpu = spill_tier_read_cpu, .cuda = CUDA_ONLY(spill_tier_read_cuda),
     .key = {"slow tier (pread)", "slow tier (cudaMemcpyAsync)"}},
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

double spill_bytes(const spill_variant *v, int fast_rows, int slow_rows, int k)
{
    double slow = 2.0 * slow_rows * k;
    if (!v->gemv)
        return slow;
    return 2.0 * fast_rows * k + slow + 2.0 * k + 4.0 * (fast_rows + slow_rows);
}

/* ---- the CPU's slow tier: a file ------------------------------------------------ */

/* File systems whose files live in memory: no slower tier behind them. */
static bool in_memory(const struct statfs *s)
{
    return s->f_type == 0x01021994 /* tmpfs */ || s->f_type == 0x858458f6 /* ramfs */;
}

static bool fail(char *why, size_t len, const char *what, const char *dir)
{
    snprintf(why, len, "%s in %s: %s", what, dir, strerror(errno));
    return false;
}

bool spill_dir_usable(const char *dir, char *why, size_t len)
{
    struct statfs fs;
    if (statfs(dir, &fs) != 0)
        return fail(why, len, "no folder for the slow tier's file", dir);
    if (in_memory(&fs)) {
        snprintf(why, len, "%s lives in memory (tmpfs or ramfs): its file would be no slower "
                 "tier; give a folder on a disk (--spill-dir)", dir);
        return false;
    }
    if (access(dir, W_OK) != 0)
        return fail(why, len, "cannot write the slow tier's file", dir);
    return true;
}

static bool open_file_tier(spill_tier *t, const char *dir, const fp16 *rows, size_t bytes,
                           char *why, size_t len)
{
    if (!spill_dir_usable(dir, why, len))
        return false;
    t->fd = open(dir, O_TMPFILE | O_RDWR, 0600);
    if (t->fd < 0) { /* a file system without O_TMPFILE: a named file, unlinked at once */
        char path[512];
        snprintf(path, sizeof path, "%s/rooflab-spill-XXXXXX", dir);
        t->fd = mkstemp(path);
        if (t->fd < 0)
            return fail(why, len, "cannot create the slow tier's file", dir);
        unlink(path);
    }
    for (size_t done = 0; done < bytes;) {
        ssize_t n = pwrite(t->fd, (const char *)rows + done, bytes - done, (off_t)done);
        if (n <= 0) {
            fail(why, len, "cannot write the slow tier's file", dir);
            close(t->fd);
            t->fd = -1;
            return false;
        }
        done += (size_t)n;
    }
    if (fdatasync(t->fd) != 0) {
        fail(why, len, "cannot sync the slow tier's file", dir);
        close(t->fd);
        t->fd = -1;
        return false;
    }
    /* The same file past the page cache: a file system without O_DIRECT
     * (tmpfs, some FUSE ones) says EINVAL, and the reads take fd's path. */
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", t->fd);
    t->direct_fd = open(self, O_RDONLY | O_DIRECT);
    aio_context_t ctx = 0;
    if (syscall(SYS_io_setup, SPILL_MOST_QUEUED, &ctx) == 0)
        t->aio = ctx;
    snprintf(t->where, sizeof t->where, "a file in %s, read %s", dir,
             t->direct_fd >= 0 ? "with O_DIRECT (past the page cache)"
                               : "through the page cache, its pages dropped before each read");
    return true;
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
    return open_file_tier(t, dir, rows, bytes, why, len);
}

void spill_tier_close(spill_tier *t)
{
    if (t->fd >= 0)
        close(t->fd);
    if (t->direct_fd >= 0)
        close(t->direct_fd);
    if (t->aio)
        syscall(SYS_io_destroy, (aio_context_t)t->aio);
#ifdef RL_HAVE_CUDA
    if (t->host)
        spill_tier_close_cuda(t);
#endif
    *t = (spill_tier){.fd = -1, .direct_fd = -1};
}

void spill_tier_drop(const spill_tier *t)
{
    if (t->fd >= 0)
        (void)posix_fadvise(t->fd, 0, (off_t)t->bytes, POSIX_FADV_DONTNEED);
}

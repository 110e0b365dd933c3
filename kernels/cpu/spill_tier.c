/*
 * cpu/spill_tier.c -- experiment 08's slow tier on the CPU (spill.h): a
 * file on the disk, written once and synced (only clean pages can be
 * dropped), read with O_DIRECT where the file system allows it, with a
 * context for the overlapped variant's queued reads.
 */
#include "../spill.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

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

/* fail(), the file closed first. */
static bool give_up(spill_tier *t, char *why, size_t len, const char *what, const char *dir)
{
    fail(why, len, what, dir);
    close(t->fd);
    t->fd = -1;
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

bool spill_tier_open_cpu(spill_tier *t, const char *dir, const fp16 *rows, size_t bytes, char *why,
                         size_t len)
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
        if (n <= 0)
            return give_up(t, why, len, "cannot write the slow tier's file", dir);
        done += (size_t)n;
    }
    if (fdatasync(t->fd) != 0)
        return give_up(t, why, len, "cannot sync the slow tier's file", dir);
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

void spill_tier_close_cpu(spill_tier *t)
{
    if (t->fd >= 0)
        close(t->fd);
    if (t->direct_fd >= 0)
        close(t->direct_fd);
    if (t->aio)
        syscall(SYS_io_destroy, (aio_context_t)t->aio);
    t->fd = t->direct_fd = -1;
    t->aio = 0;
}

void spill_tier_drop(const spill_tier *t)
{
    if (t->fd >= 0)
        (void)posix_fadvise(t->fd, 0, (off_t)t->bytes, POSIX_FADV_DONTNEED);
}

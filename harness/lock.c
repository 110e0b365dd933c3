/*
 * lock.c -- an advisory lock beside a results file.
 *
 * verdicts.csv and ceilings.csv are read, changed and written back by
 * every run of a label. Two runs of one label at once (two experiments of
 * a Slurm job array, two terminals) would each read the file, and the
 * second rename would drop the first run's rows. A run holds this lock,
 * an flock on ".<name>.lock" in the same folder, from its read to its
 * rename; the kernel drops it when the process dies, so a crashed run
 * cannot leave a label locked. flock works across the nodes of a cluster
 * on NFS (Linux emulates it with POSIX locks there).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static void lock_path(const char *path, char *buf, size_t len, char *dir, size_t dlen)
{
    snprintf(dir, dlen, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash) {
        *slash = '\0';
        snprintf(buf, len, "%s/.%s.lock", dir, base);
    } else {
        snprintf(dir, dlen, ".");
        snprintf(buf, len, ".%s.lock", base);
    }
}

int rl_lock_beside(const char *path)
{
    char lock[1100], dir[1024];
    lock_path(path, lock, sizeof lock, dir, sizeof dir);
    /* Without a lock the write still happens, atomically, as before this
     * lock existed: only a concurrent run of the same label could lose rows. */
    if (rl_mkdirs(dir) != 0) {
        fprintf(stderr, "rooflab: cannot create %s (%m): writing %s without a lock\n", dir, path);
        return -1;
    }
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        fprintf(stderr, "rooflab: cannot open %s (%m): writing %s without a lock\n", lock, path);
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    if (errno == EWOULDBLOCK) {
        /* Say why the run stands still: another run of this label holds it. */
        printf("waiting     for %s: another run of this label is measuring or writing it\n", path);
        fflush(stdout);
        int rc;
        while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
            continue;
        if (rc == 0)
            return fd;
    }
    fprintf(stderr, "rooflab: cannot lock %s (%m): writing %s without a lock\n", lock, path);
    close(fd);
    return -1;
}

void rl_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the only descriptor releases the flock */
}

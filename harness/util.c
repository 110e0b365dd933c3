/*
 * util.c -- clocks, names, fatal errors, and the clean-up of temporary
 * files when the process dies (so no half-written result is ever left).
 */
#include "check.h"
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double rl_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Lower case, runs of anything else become one '-', no leading or
 * trailing '-'. "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3". */
void rl_slugify(const char *in, char *out, size_t len)
{
    size_t j = 0;
    bool dash = false;
    for (const char *p = in; *p && j + 1 < len; p++) {
        if (isalnum((unsigned char)*p)) {
            if (dash && j > 0 && j + 2 < len)
                out[j++] = '-';
            out[j++] = (char)tolower((unsigned char)*p);
            dash = false;
        } else {
            dash = true;
        }
    }
    out[j] = '\0';
}

void rl_format_bytes(double bytes, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(buf, len, bytes == (double)(long long)bytes ? "%.0f %s" : "%.3g %s", bytes, unit[u]);
}

/* ---- temporary files to remove on a fatal error or a signal ---------- */
enum { MAX_CLEANUP = 16, PATH_LEN = 1200 };
static char cleanup_paths[MAX_CLEANUP][PATH_LEN];
static volatile sig_atomic_t cleanup_used[MAX_CLEANUP];

static void cleanup_all(void)
{
    for (int i = 0; i < MAX_CLEANUP; i++)
        if (cleanup_used[i]) {
            unlink(cleanup_paths[i]); /* async-signal-safe */
            cleanup_used[i] = 0;
        }
}

static void on_signal(int sig)
{
    cleanup_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- SIGTERM: stop at the next point, keep what was measured ---------- *
 * A cap (timeout sends TERM, then KILL 5 s later), a Slurm time limit or a
 * plain kill asks a run to stop. Once rl_stop_on_sigterm() is called, TERM
 * only sets this flag (all a handler may safely do); the measuring loops
 * read it between samples, points and parts, so the run stops at the next
 * boundary and writes the points it measured, marked partial (run.c,
 * context.c). More TERMs change nothing: timeout sends each one twice (to
 * the run, then to its process group), so a second one cannot mean
 * "now". What ends a run that does not stop in time (a kernel that hangs,
 * a part's inputs still being made) is a watchdog: ROOFLAB_STOP_GRACE_S
 * (default 4: under a cap's 5 s) after the first TERM, it dies by TERM as
 * it did before, its temporary files removed, nothing half-written (0: no
 * watchdog; Slurm's KillWait of 30 s could give 25). SIGINT (a user's
 * Ctrl-C) still ends a run at once: a partial CSV must not replace a
 * whole one unasked. */
enum { STOP_GRACE_S = 4 };
static volatile sig_atomic_t stop_signal;
static bool stop_gracefully;
static unsigned stop_grace_s = STOP_GRACE_S;

static void on_stop_signal(int sig)
{
    if (stop_signal)
        return;
    stop_signal = sig;
    if (stop_grace_s)
        alarm(stop_grace_s); /* async-signal-safe */
}

static void on_stop_overdue(int sig)
{
    (void)sig;
    on_signal(SIGTERM);
}

static void install_term_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = stop_gracefully ? on_stop_signal : on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* a write or a lock wait goes on: the flag is read later */
    sigaction(SIGTERM, &sa, NULL);
}

void rl_stop_on_sigterm(void)
{
    const char *grace = getenv("ROOFLAB_STOP_GRACE_S");
    if (grace && *grace)
        stop_grace_s = (unsigned)strtoul(grace, NULL, 10);
    stop_gracefully = true;
    install_term_handler();
    signal(SIGALRM, on_stop_overdue);
}

int rl_stop_requested(void) { return stop_signal; }

void rl_cleanup_register(const char *path)
{
    static bool handlers = false;
    if (!handlers) {
        signal(SIGINT, on_signal);
        install_term_handler();
        signal(SIGHUP, on_signal);
        handlers = true;
    }
    for (int i = 0; i < MAX_CLEANUP; i++)
        if (!cleanup_used[i]) {
            snprintf(cleanup_paths[i], PATH_LEN, "%s", path);
            cleanup_used[i] = 1;
            return;
        }
}

void rl_cleanup_unregister(const char *path)
{
    for (int i = 0; i < MAX_CLEANUP; i++)
        if (cleanup_used[i] && strcmp(cleanup_paths[i], path) == 0)
            cleanup_used[i] = 0;
}

void rl_die(int code, const char *fmt, ...)
{
    rl_progress_clear();
    va_list ap;
    va_start(ap, fmt);
    fputs("rooflab: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    cleanup_all();
    exit(code);
}

int rl_mkdirs(const char *path)
{
    char tmp[PATH_LEN];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

void *rl_host_alloc(size_t bytes)
{
    void *p = NULL;
    size_t rounded = (bytes + 4095) / 4096 * 4096;
    if (posix_memalign(&p, 4096, rounded ? rounded : 4096) != 0)
        rl_die(RL_EXIT_FAILED, "out of host memory allocating %zu bytes", bytes);
    return p;
}

void rl_host_free(void *p) { free(p); }

void rl_fail_check(const char *library, const char *message, const char *expr, const char *file,
                   int line)
{
    rl_progress_clear();
    fprintf(stderr, "rooflab: %s error: %s\n  in  %s\n  at  %s:%d\n", library, message, expr, file,
            line);
    cleanup_all();
    exit(RL_EXIT_FAILED);
}

int rl_mkstemp_shared(char *template_path)
{
    int fd = mkstemp(template_path);
    if (fd < 0)
        return -1;
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        close(fd);
        unlink(template_path);
        return -1;
    }
    return fd;
}

int rl_write_file_atomic(const char *path, const char *content)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = rl_mkstemp_shared(tmp);
    if (fd < 0)
        return -1;
    rl_cleanup_register(tmp);
    size_t len = strlen(content), done = 0;
    while (done < len) {
        ssize_t w = write(fd, content + done, len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int rc = done == len && fsync(fd) == 0 ? 0 : -1;
    close(fd);
    if (rc == 0)
        rc = rename(tmp, path);
    if (rc != 0)
        unlink(tmp);
    rl_cleanup_unregister(tmp);
    return rc;
}

void *rl_grow(void *v, int n, int *cap, int first, size_t elem, const char *what)
{
    if (n < *cap)
        return v;
    int more = *cap ? 2 * *cap : first;
    void *w = realloc(v, elem * (size_t)more);
    if (!w)
        rl_die(RL_EXIT_FAILED, "out of memory for %s", what);
    *cap = more;
    return w;
}

/*
 * helpers.c -- see helpers.h.
 */
#include "helpers.h"
#include "rl_backend.h"
#include "rl_csv.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void make_temp_dir(char *buf, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, len, "%s/rooflab-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        abort();
    }
}

void rm_tree(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static void slurp_fd(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return;
    for (int c; (c = fgetc(f)) != EOF;)
        if (n + 1 < cap)
            buf[n++] = (char)c;
    buf[n] = '\0';
}

int run_capture(const char *cmd, char *out, size_t out_cap, char *err, size_t err_cap)
{
    char errpath[] = "/tmp/rooflab-stderr-XXXXXX";
    int fd = mkstemp(errpath);
    if (fd < 0)
        return -1;
    close(fd);
    char full[4096];
    snprintf(full, sizeof full, "%s 2>'%s' </dev/null", cmd, errpath);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    slurp_fd(p, out, out_cap);
    int status = pclose(p);
    FILE *e = fopen(errpath, "r");
    if (e) {
        slurp_fd(e, err, err_cap);
        fclose(e);
    }
    unlink(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    size_t got = fread(buf, 1, (size_t)size, f);
    buf[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return buf;
}

long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

bool file_exists(const char *path) { return access(path, F_OK) == 0; }

int count_entries(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, part))
            n++;
    closedir(d);
    return n;
}

int temp_files_left(const char *dir, const char *label)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results/%s", dir, label);
    int n = count_entries(path, ".tmp");
    snprintf(path, sizeof path, "%s/plots/%s", dir, label);
    return n + count_entries(path, ".tmp");
}

/* ---- one measurement at a time ------------------------------------------------
 * Criterion runs tests in parallel processes. A test that times anything
 * holds this lock (an flock, released when the process dies), so that no
 * two measure at once and a busy machine cannot fail the suite. */
static int lock_fd = -1;

void measure_lock(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/.measure.lock", RL_BUILD_DIR);
    lock_fd = open(path, O_RDWR | O_CREAT, 0666);
    if (lock_fd < 0 || flock(lock_fd, LOCK_EX) != 0) {
        perror("measure_lock");
        abort();
    }
}

void measure_unlock(void)
{
    if (lock_fd >= 0) {
        flock(lock_fd, LOCK_UN);
        close(lock_fd);
        lock_fd = -1;
    }
}

/* Long enough for the fewest samples of a point (3 of at least 1 ms, a
 * group's up to 0.1 s each: measure.c), short enough that a quick run of
 * an experiment takes seconds, not the half minute of its 0.3 s rule. */
#define TEST_TIMEOUT "0.05"

/* A test that measures its own ceilings checks the ladder's shape, never
 * its numbers: a pretended 8 MiB last-level cache (unless the test set its
 * own) keeps the DRAM rung at tens of MiB, where a VM's reported L3 of
 * hundreds of MiB would put it at gigabytes and spend seconds in page faults. */
#define MEASURING_ENV "ROOFLAB_LLC=${ROOFLAB_LLC:-8Mi} "

static int run_locked(const char *bin, const char *dir, const char *ceilings, const char *env,
                      const char *args, char *out, size_t out_cap, char *err, size_t err_cap)
{
    char cmd[2048];
    /* Tests run beside each other by design: a verdict must not depend on
     * how loaded the machine is (claims.c, the busy-host gate). A test
     * checks the run's shape, never its numbers, so every sampling stops
     * after TEST_TIMEOUT (--timeout; a test may pass its own after it). */
    snprintf(cmd, sizeof cmd,
             "%sROOFLAB_HOST_BUSY=ignore %s --out '%s/results' --plots '%s/plots' --timeout " TEST_TIMEOUT
             "%s%s %s",
             env, bin, dir, dir, ceilings ? " --ceilings " : "", ceilings ? ceilings : "", args);
    measure_lock();
    int rc = run_capture(cmd, out, out_cap, err, err_cap);
    measure_unlock();
    return rc;
}

int run_experiment(const char *bin, const char *dir, const char *args, char *out, size_t out_cap,
                   char *err, size_t err_cap)
{
    return run_locked(bin, dir, TEST_CEILINGS, "", args, out, out_cap, err, err_cap);
}

int run_experiment_measuring(const char *bin, const char *dir, const char *args, char *out,
                             size_t out_cap, char *err, size_t err_cap)
{
    return run_locked(bin, dir, NULL, MEASURING_ENV, args, out, out_cap, err, err_cap);
}

/* Whether a chart (its SVG, whose text is searchable) states this run's
 * verdict on its claim: style.gp's run_line(), fed from verdicts.csv. */
static bool states_verdict(const char *svg)
{
    char *text = read_file(svg, NULL);
    bool found = text && (strstr(text, "this run: holds") || strstr(text, "this run: does not hold") ||
                          strstr(text, "this run: not measured") ||
                          strstr(text, "this run: premise not met"));
    free(text);
    return found;
}

int missing_charts(const char *dir, const char *label, const char *const *names, int n, char *first,
                   size_t len)
{
    static const char *const formats[] = {"png", "pdf", "svg"};
    int missing = 0;
    for (int i = 0; i < n; i++)
        for (int f = 0; f < 3; f++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/plots/%s/%s.%s", dir, label, names[i], formats[f]);
            if (file_size(path) < 1000 || (f == 2 && !states_verdict(path))) {
                if (missing++ == 0)
                    snprintf(first, len, "%s", path);
            }
        }
    return missing;
}

int missing_verdicts(const char *dir, const char *label, const char *experiment,
                     const char *backend, const char *const *ids, int n, char *first, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results/%s/verdicts.csv", dir, label);
    char *text = read_file(path, NULL);
    int missing = 0;
    for (int i = 0; i < n; i++) {
        char want[256];
        snprintf(want, sizeof want, "%s,%s,%s,", experiment, ids[i], backend);
        if ((!text || !strstr(text, want)) && missing++ == 0)
            snprintf(first, len, "%s (in %s)", want, path);
    }
    free(text);
    return missing;
}

/* ---- the GPU, or a skip ------------------------------------------------------ */

rl_backend *gpu_or_skip(void)
{
    char why[2048];
    rl_backend *be = rl_backend_open(RL_CUDA, 0, why, sizeof why);
    if (!be)
        cr_skip_test("no GPU: %s", why);
    return be;
}

void skip_if_a_gpu_is_present(void)
{
    char why[2048];
    rl_open_status status;
    rl_backend_close(rl_backend_open_status(RL_CUDA, 0, &status, why, sizeof why));
    if (status != RL_ABSENT)
        cr_skip_test("this machine has a GPU: the no-GPU path cannot be exercised");
}

/* ---- results read back ------------------------------------------------------ */

rl_table *load_results(const char *path, char *why, size_t len)
{
    size_t n = 0;
    char *text = read_file(path, &n);
    if (!text) {
        snprintf(why, len, "no file at %s", path);
        return NULL;
    }
    bool complete = n > 0 && text[n - 1] == '\n';
    free(text);
    if (!complete) {
        snprintf(why, len, "%s does not end with a newline", path);
        return NULL;
    }
    return rl_table_read(path, why, len);
}

void header_line(const rl_table *t, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < t->ncols && used < len; c++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", c ? "," : "", t->cols[c]);
}

bool has_meta(const rl_table *t, const char *line)
{
    const char *key = line + (line[0] == '#') + (line[1] == ' ');
    const char *colon = strstr(key, ": ");
    if (!colon)
        return false;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(colon - key), key);
    const char *value = rl_table_meta(t, name), *want = colon + 2;
    return value && !strncmp(value, want, strlen(want));
}

int table_count(const rl_table *t, const char *col, const char *value)
{
    int n = 0;
    for (int r = 0; r < t->nrows; r++)
        n += !strcmp(rl_table_get(t, r, col), value);
    return n;
}

/*
 * test_lock.c -- runs of one label at once (the tasks of a Slurm job
 * array: make slurm) share results/<label>/verdicts.csv and ceilings.csv,
 * which every run reads, changes and writes back. Each holds a lock beside
 * the file (harness/lock.c) across that, so no run's rows are lost and the
 * ceilings are measured once:
 *   - many processes writing their verdicts at the same instant keep every
 *     experiment's rows (without the lock most are lost: the last rename
 *     wins);
 *   - experiments 05 and 06 run at once under one label: both verdict sets;
 *   - a run that finds the ceilings locked waits, then reuses the roofs the
 *     holder saved instead of measuring its own.
 */
#include "helpers.h"
#include "internal.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXP05 RL_BUILD_DIR "/exp-05"
#define EXP06 RL_BUILD_DIR "/exp-06"

static char dir[512];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(lock, .init = setup, .fini = teardown, .timeout = 600);

/* Rows of verdicts.csv whose line starts with "slug,". */
static int rows_of(const char *text, const char *slug)
{
    char needle[96];
    snprintf(needle, sizeof needle, "\n%s,", slug);
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* ---- many writers at one instant ------------------------------------------------- */

enum { WRITERS = 12 };
static const rl_column NO_COLUMNS[] = {{.name = "n"}, {0}};

/* One child: an experiment of its own (lock-NN) that states one verdict,
 * blocks until the parent closes the pipe, then writes it (rl_end). */
static void writer(int i, int gate)
{
    static char id[8], slug[16];
    snprintf(id, sizeof id, "L%02d", i);
    snprintf(slug, sizeof slug, "lock-%02d", i);
    rl_experiment e = {.id = id, .slug = slug, .title = "lock test", .claim = "-",
                       .source = "-", .prediction = "-", .columns = NO_COLUMNS,
                       .default_cache = RL_HOT};
    char results[600], plots[600];
    snprintf(results, sizeof results, "%s/results", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    char *argv[] = {"lock-test", "--backend", "cpu", "--quick", "--no-plot", "--label", "shared",
                    "--out", results, "--plots", plots, NULL};
    if (!freopen("/dev/null", "w", stdout))
        _exit(3);
    rl_ctx *ctx = rl_begin(&e, 11, argv, NULL);
    rl_verdict(ctx, "v", "claim", "predicted", "measured", RL_HOLDS, NULL);
    char c;
    if (read(gate, &c, 1) != 0)
        _exit(3);
    int rc = rl_end(ctx);
    fflush(NULL);
    _exit(rc); /* not exit(): this is a copy of Criterion's test process */
}

Test(lock, writers_at_one_instant_keep_every_experiments_verdicts)
{
    int gate[2];
    cr_assert_eq(pipe(gate), 0);
    pid_t pids[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        /* No assertion in a child: Criterion's report of it, even of a
         * pass, waits on the parent's socket and can hang the child. */
        pids[i] = fork();
        if (pids[i] == 0) {
            close(gate[1]);
            writer(i, gate[0]);
        }
        cr_assert_geq(pids[i], 0, "fork");
    }
    close(gate[0]);
    usleep(300 * 1000); /* every child is at the gate */
    close(gate[1]);     /* and all go at once */
    for (int i = 0; i < WRITERS; i++) {
        int status;
        cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d: status %d", i, status);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/results/shared/verdicts.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no %s", path);
    for (int i = 0; i < WRITERS; i++) {
        char slug[16];
        snprintf(slug, sizeof slug, "lock-%02d", i);
        cr_assert_eq(rows_of(text, slug), 1, "%s's verdict is lost or doubled:\n%s", slug, text);
    }
    free(text);
    cr_assert_eq(temp_files_left(dir, "shared"), 0, "no temporary files left");
}

/* ---- two experiments at once ----------------------------------------------------- */

/* Starts a command in the background, its output to log; returns its pid. */
static pid_t start(const char *cmd, const char *log)
{
    pid_t pid = fork();
    if (pid == 0) { /* no assertion here: see writers' fork */
        char full[4096];
        snprintf(full, sizeof full, "exec %s >'%s' 2>&1 </dev/null", cmd, log);
        execl("/bin/sh", "sh", "-c", full, (char *)NULL);
        _exit(127);
    }
    cr_assert_geq(pid, 0, "fork");
    return pid;
}

static int finish(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void log_of(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.log", dir, name);
}

Test(lock, experiments_05_and_06_at_once_under_one_label_keep_both_verdict_sets)
{
    char cmd05[2048], cmd06[2048], log05[600], log06[600];
    const char *common = "--quick --backend cpu --max-bytes 64Mi --no-plot --label shared "
                         "--timeout 0.05 --ceilings " TEST_CEILINGS;
    snprintf(cmd05, sizeof cmd05, "%s %s --out '%s/results' --plots '%s/plots' --op affine",
             EXP05, common, dir, dir);
    snprintf(cmd06, sizeof cmd06, "%s %s --out '%s/results' --plots '%s/plots' --test doubling",
             EXP06, common, dir, dir);
    log_of("exp-05", log05, sizeof log05);
    log_of("exp-06", log06, sizeof log06);
    measure_lock(); /* both time kernels: no other test's run beside them */
    pid_t a = start(cmd05, log05), b = start(cmd06, log06);
    int rc05 = finish(a), rc06 = finish(b);
    measure_unlock();
    char *t05 = read_file(log05, NULL), *t06 = read_file(log06, NULL);
    cr_assert_eq(rc05, 0, "exp-05: exit %d\n%s", rc05, t05);
    cr_assert_eq(rc06, 0, "exp-06: exit %d\n%s", rc06, t06);
    free(t05);
    free(t06);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/shared/verdicts.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no %s", path);
    cr_assert_geq(rows_of(text, "05-fusion"), 1, "exp-05's verdicts are lost:\n%s", text);
    cr_assert_geq(rows_of(text, "06-launch-graphs"), 1, "exp-06's verdicts are lost:\n%s", text);
    free(text);
    snprintf(path, sizeof path, "%s/results/shared/exp-05.csv", dir);
    cr_assert(file_exists(path), "no %s", path);
    snprintf(path, sizeof path, "%s/results/shared/exp-06.csv", dir);
    cr_assert(file_exists(path), "no %s", path);
}

/* ---- the ceilings: measured once, reused by the run that waited ------------------ */

/* The fixture's roofs and curve, as a cache of this machine's CPU (its
 * identity line), dated now: a quick run of this device reuses it. */
static void write_cache_for_this_cpu(const char *path)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    const rl_device_info *d = rl_device(be);
    char *fixture = read_file(TEST_CEILINGS_CURVE, NULL);
    cr_assert_not_null(fixture);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    char id[320];
    rl_cpu_identity(d, id, sizeof id);
    fprintf(f, "# identity: %s\n# date_utc: written by test_lock.c\n", id);
    /* Everything of the fixture but its own identity and date lines. */
    for (char *line = strtok(fixture, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, "# identity:", 11) && strncmp(line, "# date_utc:", 11))
            fprintf(f, "%s\n", line);
    fclose(f);
    free(fixture);
    rl_backend_close(be);
}

/* Waits up to seconds for text to appear in the file. */
static bool wait_for_text(const char *path, const char *text, int seconds)
{
    for (int i = 0; i < seconds * 10; i++) {
        char *s = read_file(path, NULL);
        bool found = s && strstr(s, text);
        free(s);
        if (found)
            return true;
        usleep(100 * 1000);
    }
    return false;
}

Test(lock, a_run_waits_for_the_ceilings_and_reuses_what_the_holder_saved)
{
    char folder[600], cache[700], log[600], cmd[2048];
    snprintf(folder, sizeof folder, "%s/results/shared", dir);
    snprintf(cache, sizeof cache, "%s/ceilings.csv", folder);
    log_of("exp-05", log, sizeof log);
    snprintf(cmd, sizeof cmd, "%s --quick --backend cpu --max-bytes 64Mi --no-plot --label shared "
             "--op affine --variant 1,2,3 --out '%s/results' --plots '%s/plots'", EXP05, dir, dir);

    measure_lock();
    int held = rl_lock_beside(cache); /* as a run measuring the roofs holds it */
    cr_assert_geq(held, 0);
    pid_t run = start(cmd, log);
    bool waited = wait_for_text(log, "waiting     for", 60);
    /* The holder saves its roofs, then lets go. */
    write_cache_for_this_cpu(cache);
    rl_unlock(held);
    int rc = finish(run);
    measure_unlock();

    char *text = read_file(log, NULL);
    cr_assert(waited, "the run did not wait for the lock:\n%s", text);
    cr_assert_eq(rc, 0, "exit %d\n%s", rc, text);
    cr_assert(strstr(text, "cached, measured written by test_lock.c"),
              "the run reused the roofs saved while it waited:\n%s", text);
    cr_assert_null(strstr(text, "measured now"), "it measured its own:\n%s", text);
    free(text);
}

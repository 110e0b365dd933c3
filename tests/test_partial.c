/*
 * test_partial.c -- a run stopped by SIGTERM keeps what it measured.
 *
 * A cap (timeout: TERM, then KILL 5 s later) used to leave no CSV at all.
 * Now the first TERM asks the run to stop at its next point: it writes
 * the CSV of the points measured, marked partial, its other points as
 * rows that say why they were not run, no verdict judged, no chart drawn,
 * and exits 3 (RL_EXIT_STOPPED). The readers (compare, summary, the
 * charts drawn later) take such a CSV as they take any other.
 *
 * The signal is sent when the run's output shows its first part's table
 * (exp-04's staircase), not after a time: the moment depends on nothing
 * but the run's own progress, however loaded the machine is. For the same
 * reason the runs get ROOFLAB_STOP_GRACE_S=600: the next part's inputs,
 * begun when the signal comes, take what a busy machine makes them take,
 * and the 4 s watchdog (tested on its own) is not what these tests test.
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rl_process.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXP04 RL_BUILD_DIR "/exp-04"
#define ROOFLAB RL_BUILD_DIR "/rooflab"
/* The line exp-04 prints in its first part's table (the staircase):
 * written, and flushed, once that part is measured. */
#define FIRST_PART_DONE "<- end of a wave"

static char dir[512];
static char out[1 << 17], err[1 << 14];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(partial, .init = setup, .fini = teardown, .timeout = 300);

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts exp-04 quick on the CPU under label, its stdout in DIR/out.txt. */
static pid_t start_exp04(const char *label)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "exec env ROOFLAB_HOST_BUSY=ignore ROOFLAB_STOP_GRACE_S=600 '%s' --backend cpu --quick --out '%s/results' "
             "--plots '%s/plots' --ceilings '%s' --timeout 0.05 --max-bytes 64Mi --label %s "
             "--outcome-file '%s/%s.outcome' >'%s/out.txt' 2>'%s/err.txt'",
             EXP04, dir, dir, TEST_CEILINGS, label, dir, label, dir, dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork");
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Waits until DIR/out.txt holds text (or the run ended: false). */
static bool wait_for_output(pid_t pid, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    for (;;) {
        char *s = read_file(path, NULL);
        bool seen = s && strstr(s, text);
        free(s);
        if (seen)
            return true;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return false;
        sleep_ms(10);
    }
}

static int exit_code(pid_t pid, int *signal_out)
{
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    *signal_out = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* exp-04's rows of points: its wave model writes rows of its own
 * (part "model"), measured by nobody. */
static bool point_row(const rl_table *t, int r) { return strcmp(rl_table_get(t, r, "part"), "model"); }

static int count_rows_with(const rl_table *t, const char *column, const char *part)
{
    int n = 0;
    for (int r = 0; r < t->nrows; r++)
        n += point_row(t, r) && strstr(rl_table_get(t, r, column), part) != NULL;
    return n;
}

Test(partial, a_run_stopped_by_sigterm_keeps_the_points_it_measured)
{
    measure_lock();
    pid_t pid = start_exp04("stopped");
    bool running = wait_for_output(pid, FIRST_PART_DONE);
    if (running) { /* as timeout does: to the run, then again (to its process group) */
        kill(pid, SIGTERM);
        kill(pid, SIGTERM);
    }
    int sig, code = exit_code(pid, &sig);
    measure_unlock();
    char path[700], why[1200];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *console = read_file(path, NULL);
    cr_assert(running, "exp-04 ended before its first part's table:\n%s", console);
    cr_assert_eq(sig, 0, "killed by signal %d: TERM must only stop the run", sig);
    cr_assert_eq(code, RL_EXIT_STOPPED, "exit %d, not %d:\n%s", code, RL_EXIT_STOPPED, console);

    /* the CSV, whole and marked partial */
    snprintf(path, sizeof path, "%s/results/stopped/exp-04.csv", dir);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    const char *partial = rl_table_meta(t, "partial");
    cr_assert_not_null(partial, "no '# partial:' line in %s", path);
    /* the counts as data; the sentence for people says the same */
    const char *measured_text = rl_table_meta(t, "partial_points_measured"),
               *declared_text = rl_table_meta(t, "partial_points_declared");
    cr_assert(measured_text && declared_text, "no partial_points_* keys in %s", path);
    int measured = atoi(measured_text), declared = atoi(declared_text);
    char sentence[96];
    snprintf(sentence, sizeof sentence, "stopped by SIGTERM after %d of %d points", measured,
             declared);
    cr_assert(strstr(partial, sentence), "# partial: %s (want '%s')", partial, sentence);
    int rows = 0;
    for (int r = 0; r < t->nrows; r++)
        rows += point_row(t, r);
    cr_assert_eq(rows, declared, "one row per declared point: %d of %d", rows, declared);
    cr_assert_gt(measured, 0, "the staircase was measured before the signal");
    cr_assert_lt(measured, declared, "the vocab part was still to run");
    /* the measured rows keep their numbers; the others say why they are empty */
    cr_assert_eq(count_rows_with(t, "validated", "yes"), measured);
    int timed = 0;
    for (int r = 0; r < t->nrows; r++)
        timed += point_row(t, r) && rl_table_get(t, r, "time_us_median")[0] != '\0';
    cr_assert_eq(timed, measured);
    cr_assert_eq(count_rows_with(t, "skipped_reason", "not run: stopped by SIGTERM"),
                 declared - measured);
    rl_table_free(t);
    cr_assert_eq(temp_files_left(dir, "stopped"), 0, "a temporary file left behind");

    /* the console says so; no chart drawn (gnuplot's seconds may be more
     * than a cap's KILL leaves), the command that draws them given */
    cr_assert(strstr(console, "stopped     by SIGTERM after"), "%s", console);
    cr_assert(strstr(console, "(partial)"), "%s", console);
    cr_assert(strstr(console, "charts      not drawn: the run was stopped (SIGTERM); make plot-04"),
              "%s", console);
    free(console);
    snprintf(path, sizeof path, "%s/plots/stopped", dir);
    cr_assert_eq(count_entries(path, ".png"), 0, "a chart was drawn");

    /* the same as data, for a script (--outcome-file; tests/gpu-lib.sh) */
    snprintf(path, sizeof path, "%s/stopped.outcome", dir);
    char *outcome = read_file(path, NULL), want[256];
    cr_assert_not_null(outcome, "no outcome file %s", path);
    snprintf(want, sizeof want, "\nexit_status=%d\nstopped=yes\nstopped_why=sigterm\n"
             "points_done=%d\npoints_total=%d\n", RL_EXIT_STOPPED, measured, declared);
    cr_assert(strstr(outcome, want), "%s not in:\n%s", want, outcome);
    cr_assert(strstr(outcome, "\ncsv_written=yes\npartial=yes\n") &&
                  strstr(outcome, "\ncharts=not_drawn\ncharts_why=sigterm\nredraw=make plot-04 "),
              "%s", outcome);
    free(outcome);

    /* no verdict judged on part of the points: every one not measured, its note why */
    snprintf(path, sizeof path, "%s/results/stopped/verdicts.csv", dir);
    t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_gt(t->nrows, 0);
    for (int r = 0; r < t->nrows; r++) {
        cr_assert_str_eq(rl_table_get(t, r, "verdict"), "not measured", "%s: %s",
                         rl_table_get(t, r, "id"), rl_table_get(t, r, "verdict"));
        cr_assert(strstr(rl_table_get(t, r, "note"), "stopped by SIGTERM after"), "%s",
                  rl_table_get(t, r, "note"));
    }
    rl_table_free(t);
}

/* The readers take a partial CSV: compare marks it and lists its missing
 * points as "-", summary reads its verdicts, the charts draw from it. */
Test(partial, the_readers_take_a_partial_csv)
{
    measure_lock();
    pid_t pid = start_exp04("stopped");
    bool running = wait_for_output(pid, FIRST_PART_DONE);
    if (running)
        kill(pid, SIGTERM);
    int sig, code = exit_code(pid, &sig);
    measure_unlock();
    cr_assert(running && code == RL_EXIT_STOPPED, "exit %d, signal %d", code, sig);

    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' compare --exp 04 --out '%s/results' --plots '%s/plots' stopped stopped",
             ROOFLAB, dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cr_assert(strstr(out, ", partial: stopped by SIGTERM after "), "%s", out);
    cr_assert(strstr(out, "vocab"), "the points not run are listed too:\n%s", out);

    snprintf(cmd, sizeof cmd, "'%s' summary --out '%s/results' --label stopped", ROOFLAB, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cr_assert(strstr(out, "0 hold, 0 do not hold, "), "%s", out);

    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot not found: no chart to draw from the partial CSV");
    snprintf(cmd, sizeof cmd, "'%s' --plot-only --label stopped --out '%s/results' --plots '%s/plots'",
             EXP04, dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    const char *names[] = {"exp-04", "exp-04-vocab"};
    char first[256];
    cr_assert_eq(missing_charts(dir, "stopped", names, 2, first, sizeof first), 0, "%s", first);
}

/* The handler itself, in a child of its own: TERM only asks (the run
 * goes on, its temporary files kept), however many come (timeout sends
 * two); a run that has not ended 4 s later dies by TERM, its temporary
 * files removed. raise() delivers before it returns. */
Test(partial, sigterm_asks_and_a_run_overdue_dies_clean)
{
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s/.half-written.tmp", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork");
    if (pid == 0) {
        FILE *f = fopen(tmp, "w");
        if (!f)
            _exit(10);
        fclose(f);
        rl_cleanup_register(tmp);
        rl_stop_on_sigterm();
        if (rl_stop_requested() != 0)
            _exit(11);
        raise(SIGTERM);
        raise(SIGTERM);
        if (rl_stop_requested() != SIGTERM || access(tmp, F_OK) != 0)
            _exit(12); /* TERM must only set the flag */
        for (int i = 0; i < 30; i++)
            sleep(1); /* a run that does not stop: the watchdog ends it */
        _exit(13);
    }
    double t0 = (double)time(NULL);
    int sig, code = exit_code(pid, &sig);
    double took = (double)time(NULL) - t0;
    cr_assert_eq(sig, SIGTERM, "exit %d, signal %d: an overdue run dies by TERM", code, sig);
    cr_assert_geq(took, 2, "it died %.0f s after the TERM, not after its grace", took);
    cr_assert_not(file_exists(tmp), "the temporary file was not removed");
}

/* A CSV SIGTERM left without one measured point has nothing to draw:
 * --plot-only says so instead of feeding gnuplot an empty plot. */
Test(partial, nothing_measured_draws_nothing)
{
    char path[700], cmd[2048];
    snprintf(path, sizeof path, "%s/results/empty", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/results/empty/exp-04.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("# experiment: 04-waves\n# partial: stopped by SIGTERM after 0 of 2 points; the rows of "
          "the others say not run, and no verdict is judged\n# partial_points_measured: 0\n"
          "# partial_points_declared: 2\npart,variant,skipped_reason\n"
          "staircase,tiled,not run: stopped by SIGTERM before its part began\n"
          "vocab,tiled,not run: stopped by SIGTERM before its part began\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' --plot-only --label empty --out '%s/results' --plots '%s/plots'",
             EXP04, dir, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    if (rc != 0 && strstr(err, "gnuplot not found"))
        cr_skip_test("gnuplot not found: --plot-only stops before the CSV");
    cr_assert_eq(rc, 0, "%s%s", out, err);
    cr_assert(strstr(out, "charts      none: its run was stopped (SIGTERM) before its first point"),
              "%s%s", out, err);
}

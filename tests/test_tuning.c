/*
 * test_tuning.c -- a kernel's shape chosen on this machine (harness/tuning.c),
 * on a toy tunable of three candidates: the default spins 3 ms a call, the
 * second 0.1 ms, the third is faster still but fails its validation. A lab
 * run times them and keeps the second, a candidate that fails is never
 * chosen, a second run takes the cached choice without a call, --retune
 * times them again, and --quick times nothing and keeps the default. The
 * costs differ thirtyfold, far beyond what a loaded machine shifts.
 */
#include "helpers.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

typedef struct toy_tunable {
    int current, calls, checks, chosen, prepared;
} toy_tunable;

static toy_tunable toy;
static const double SPIN_S[] = {3e-3, 1e-4, 0};

static void toy_name(void *state, int i, char *buf, size_t len)
{
    (void)state;
    snprintf(buf, len, "shape %d", i);
}

static void toy_prepare(void *state) { ((toy_tunable *)state)->prepared++; }

static void toy_set(void *state, int i) { ((toy_tunable *)state)->current = i; }

static bool toy_check(void *state, char *why, size_t len)
{
    toy_tunable *t = state;
    t->checks++;
    if (t->current == 2) {
        snprintf(why, len, "shape 2 writes NaN");
        return false;
    }
    return true;
}

static void toy_call(void *state)
{
    toy_tunable *t = state;
    t->calls++;
    double until = rl_now_s() + SPIN_S[t->current];
    while (rl_now_s() < until)
        ;
}

static void run(void *arg) { ((float *)arg)[0] = 1; }

static float out_buf[1];
static double want[1] = {1};

static void toy_declare(rl_ctx *ctx)
{
    rl_tune t = {"tuning_toy", "toy shape", "toy; shapes 0 1 2", 3, 0, toy_name, toy_set,
                 toy_check, toy_call, toy_prepare, &toy};
    toy.chosen = rl_tune_choose(ctx, &t);
    rl_part_add(ctx, &(rl_part){0});
    rl_point_add(ctx, &(rl_point){.run = run, .arg = out_buf, .out = out_buf,
                                  .want = want, .count = 1, .atol = 1e-6, .bytes = 4,
                                  .footprint = 4, .pattern = RL_READ});
}

static const rl_column TOY_COLUMNS[] = {RL_COLUMN_VARIANT, {0}};
static const rl_experiment TOY = {
    .id = "t0", .slug = "t0-toy", .title = "a toy with a tunable", .claim = "none",
    .source = "tests/test_tuning.c", .columns = TOY_COLUMNS, .rates = RL_RATES_BANDWIDTH,
    .default_cache = RL_HOT, .compare_keys = "variant", .compare_value = "time_us_median",
    .declare = toy_declare,
};

/* One run of the toy into dir (a lab run unless mode says --quick, and
 * --retune if asked). */
static void run_toy(const char *dir, const char *mode, bool retune)
{
    char out[1100], plots[1100];
    snprintf(out, sizeof out, "%s/results", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    char *argv[16] = {"toy", "--backend", "cpu", "--no-plot", "--label", "toy", "--out", out,
                      "--plots", plots, "--ceilings", TEST_CEILINGS};
    int argc = 12;
    if (mode)
        argv[argc++] = (char *)mode;
    if (retune)
        argv[argc++] = "--retune";
    toy = (toy_tunable){0};
    measure_lock();
    int code = rl_run(&TOY, argc, argv, NULL);
    measure_unlock();
    cr_assert_eq(code, RL_EXIT_OK);
}

static char *read_all(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

Test(tuning, a_lab_run_keeps_the_fastest_valid_shape_and_caches_it, .init = cr_redirect_stdout,
     .timeout = 120)
{
    char dir[1024], path[1200];
    make_temp_dir(dir, sizeof dir);
    run_toy(dir, NULL, false);
    cr_assert_eq(toy.chosen, 1, "shape 1 is 30x faster than the default; shape 2 failed");
    cr_assert_eq(toy.current, 1, "the choice is the shape left set");
    cr_assert_eq(toy.checks, 3, "every candidate validated once");
    cr_assert_eq(toy.prepared, 1, "the inputs built once, before the candidates");
    cr_assert_eq(toy.calls, 2 * (1 + 9), "a warm-up and 9 rounds, valid ones only");
    snprintf(path, sizeof path, "%s/results/toy/tuning.csv", dir);
    char *csv = read_all(path);
    cr_assert(csv, "tuning.csv written beside ceilings.csv");
    cr_assert(strstr(csv, "\ntuning_toy,"), "%s", csv);
    cr_assert(strstr(csv, ",toy; shapes 0 1 2,shape 1,"), "the signature and the choice: %s", csv);
    cr_assert(strstr(csv, ",shape 0,"), "the default beside it: %s", csv);
    cr_assert(strstr(csv, ",3,1,"), "3 tried, 1 failed: %s", csv);

    run_toy(dir, NULL, false);
    cr_assert_eq(toy.chosen, 1, "the cached choice");
    cr_assert_eq(toy.calls + toy.checks + toy.prepared, 0,
                 "a cached choice builds, times and checks nothing");

    run_toy(dir, NULL, true);
    cr_assert_eq(toy.chosen, 1);
    cr_assert_gt(toy.calls, 0, "--retune times them again");
    csv = read_all(path);
    cr_assert_eq(strstr(strstr(csv, "\ntuning_toy,") + 1, "\ntuning_toy,"), NULL,
                 "one row per key and machine: %s", csv);
    rm_tree(dir);
}

Test(tuning, a_quick_run_keeps_the_default_and_times_nothing, .init = cr_redirect_stdout)
{
    char dir[1024], path[1200];
    make_temp_dir(dir, sizeof dir);
    run_toy(dir, "--quick", false);
    cr_assert_eq(toy.chosen, 0, "the default");
    cr_assert_eq(toy.current, 0);
    cr_assert_eq(toy.calls + toy.checks + toy.prepared, 0);
    snprintf(path, sizeof path, "%s/results/toy/tuning.csv", dir);
    cr_assert_eq(read_all(path), NULL, "nothing tuned, nothing cached");
    rm_tree(dir);
}

Test(tuning, the_command_line_takes_retune)
{
    rl_args a;
    char *argv[] = {"exp", "--retune", NULL};
    cr_assert_eq(rl_parse_args(2, argv, NULL, &a), 0);
    cr_assert(a.retune);
    char *none[] = {"exp", NULL};
    cr_assert_eq(rl_parse_args(1, none, NULL, &a), 0);
    cr_assert_not(a.retune);
}

/* A VM names Zen 3, 4 and 5 all "AMD EPYC": a shape cached under this
 * CPU's name and thread count but another family and model is timed
 * again, never lent, and the file keeps both machines' rows. */
Test(tuning, a_choice_cached_on_another_model_of_the_same_name_is_timed_again,
     .init = cr_redirect_stdout, .timeout = 120)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    rl_device_info other = *rl_device(be);
    rl_backend_close(be);
    if (!rl_cpu_model_known(&other))
        cr_skip_test("/proc/cpuinfo names no x86 family here");
    char me[320], them[320];
    rl_cpu_identity(&other, me, sizeof me);
    other.cpu_model++;
    rl_cpu_identity(&other, them, sizeof them);
    cr_assert(strstr(me, " | family ") && strcmp(me, them), "%s / %s", me, them);

    char dir[1024], path[1200];
    make_temp_dir(dir, sizeof dir);
    run_toy(dir, NULL, false);
    snprintf(path, sizeof path, "%s/results/toy/tuning.csv", dir);
    char csv[8192], *at;
    snprintf(csv, sizeof csv, "%s", read_all(path));
    cr_assert((at = strstr(csv, me)), "this machine's identity in %s", csv);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - csv), csv, them, at + strlen(me));
    fclose(f);

    run_toy(dir, NULL, false);
    cr_assert_gt(toy.calls, 0, "the other model's choice was lent");
    cr_assert_eq(toy.chosen, 1);
    char *now = read_all(path);
    cr_assert(strstr(now, them) && strstr(now, me), "both machines' rows: %s", now);
    rm_tree(dir);
}

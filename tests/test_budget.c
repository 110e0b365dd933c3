/*
 * test_budget.c -- --budget SECONDS (harness/budget.c) on a toy experiment:
 * a budget that is ample runs every point, the verdicts' groups before the
 * optional ones of their part; a budget already spent runs none, and
 * still writes every point's row, saying why it was not run. Nothing here
 * depends on how fast the machine is: the spent budget is spent by the
 * clock (declare waits past it), the ample one is ten minutes for
 * microseconds of work. make all BUDGET= (harness/ops/run-all.sh) on
 * stand-in experiments (tests/fake/experiment-with-need): the ceilings
 * and every plan come out of the whole budget before it is split, each
 * experiment gets at least what its plan says its verdicts need, and a
 * budget below their sum is refused before any runs, saying what would do.
 */
#include "helpers.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 128 };

/* The order points were prepared in: "n" a needed one, "o" an optional one. */
static char order[64];

typedef struct toy_part {
    float *out;
    double want[N];
} toy_part;

typedef struct toy_point {
    toy_part *at;
    bool optional;
} toy_point;

static void toy_run(void *arg)
{
    toy_point *t = arg;
    for (int i = 0; i < N; i++)
        t->at->out[i] = (float)i;
}

static void toy_open(rl_ctx *ctx, void *state)
{
    toy_part *s = state;
    s->out = rl_alloc(ctx->be, N * sizeof(float));
    for (int i = 0; i < N; i++)
        s->want[i] = i;
}

static void toy_done(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    rl_free(ctx->be, ((toy_part *)state)->out);
}

static void toy_prepare(rl_ctx *ctx, rl_point *p)
{
    (void)ctx;
    toy_point *t = RL_DATA_MUT(toy_point, p);
    p->out = t->at->out;
    p->want = t->at->want;
    strcat(order, t->optional ? "o" : "n");
}

/* One part: an optional point alone, then a needed group of two. */
static void toy_declare(rl_ctx *ctx)
{
    toy_part *s = RL_NEW(ctx, toy_part);
    rl_part_add(ctx, &(rl_part){.open = toy_open, .done = toy_done, .state = s});
    int group = rl_group_new(ctx);
    for (int i = 0; i < 3; i++) {
        toy_point *t = RL_NEW(ctx, toy_point);
        *t = (toy_point){s, i == 0};
        rl_point_add(ctx, &(rl_point){.group = i == 0 ? 0 : group, .run = toy_run, .arg = t,
                                      RL_POINT_DATA(t), .prepare = toy_prepare, .count = N,
                                      .atol = 1e-6, .bytes = 4.0 * N, .footprint = 4.0 * N,
                                      .pattern = RL_READ, .optional = t->optional});
    }
}

/* The same, declared once the budget (1 s) and its slack have passed. */
static void late_declare(rl_ctx *ctx)
{
    double until = rl_now_s() + 1.5;
    while (rl_now_s() < until)
        ;
    toy_declare(ctx);
}

static const rl_column TOY_COLUMNS[] = {RL_COLUMN_VARIANT, {0}};

static const rl_experiment TOY = {
    .id = "b0", .slug = "b0-toy", .title = "a toy under a budget", .claim = "none",
    .source = "tests/test_budget.c", .columns = TOY_COLUMNS, .rates = RL_RATES_BANDWIDTH,
    .default_cache = RL_HOT, .compare_keys = "variant", .compare_value = "time_us_median",
    .declare = toy_declare,
};

static rl_table *run_toy_clock(const rl_experiment *exp, const char *clock, const char *budget,
                               char *dir, size_t len)
{
    make_temp_dir(dir, len);
    char out[1100], plots[1100], csv[1200], why[256];
    snprintf(out, sizeof out, "%s/results", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    char *argv[] = {"toy", "--backend", "cpu", "--quick", "--no-plot", "--label", "toy",
                    (char *)clock, (char *)budget, "--out", out, "--plots", plots,
                    "--ceilings", TEST_CEILINGS, NULL};
    order[0] = '\0';
    measure_lock();
    int code = rl_run(exp, (int)(sizeof argv / sizeof argv[0]) - 1, argv, NULL);
    measure_unlock();
    cr_assert_eq(code, RL_EXIT_OK, "a run out of time is a run, not a failure");
    snprintf(csv, sizeof csv, "%s/results/toy/exp-%s.csv", dir, exp->id);
    rl_table *t = load_results(csv, why, sizeof why);
    cr_assert(t, "the CSV is written whole: %s", why);
    cr_assert_eq(t->nrows, 3, "one row per declared point");
    return t;
}

static rl_table *run_toy(const rl_experiment *exp, const char *budget, char *dir, size_t len)
{
    return run_toy_clock(exp, "--budget", budget, dir, len);
}

Test(budget, an_ample_budget_runs_every_point_the_needed_group_first, .init = cr_redirect_stdout)
{
    char dir[1024];
    rl_table *t = run_toy(&TOY, "600", dir, sizeof dir);
    cr_assert_str_eq(order, "nno", "the verdicts' group is validated and timed first");
    cr_assert_eq(table_count(t, "validated", "yes"), 3);
    cr_assert_eq(table_count(t, "skipped_reason", ""), 3);
    cr_assert(has_meta(t, "# budget_s: 600"));
    rl_table_free(t);
    rm_tree(dir);
}

Test(budget, a_spent_budget_runs_nothing_and_writes_every_row_with_why, .init = cr_redirect_stdout)
{
    rl_experiment late = TOY;
    late.declare = late_declare;
    char dir[1024];
    rl_table *t = run_toy(&late, "1", dir, sizeof dir);
    cr_assert_str_eq(order, "", "no point is validated once the budget is spent");
    cr_assert_eq(table_count(t, "validated", ""), 3, "not validated: not run");
    for (int r = 0; r < t->nrows; r++) {
        const char *why = rl_table_get(t, r, "skipped_reason");
        cr_assert(strstr(why, "--budget 1 s"), "row %d says why: '%s'", r, why);
        cr_assert_str_eq(rl_table_get(t, r, "time_us_median"), "", "row %d has no time", r);
    }
    rl_table_free(t);
    rm_tree(dir);
}

Test(budget, a_spent_slot_sheds_like_a_budget_and_says_it_was_the_slot,
     .init = cr_redirect_stdout)
{
    rl_experiment late = TOY;
    late.declare = late_declare;
    char dir[1024];
    rl_table *t = run_toy_clock(&late, "--slot", "1", dir, sizeof dir);
    cr_assert_str_eq(order, "", "no point is validated once the slot is spent");
    for (int r = 0; r < t->nrows; r++) {
        const char *why = rl_table_get(t, r, "skipped_reason");
        cr_assert(strstr(why, "--slot 1 s"), "row %d says why: '%s'", r, why);
    }
    cr_assert(has_meta(t, "# slot_s: 1"));
    cr_assert_not(has_meta(t, "# budget_s: 1"), "a slot is not a --budget");
    rl_table_free(t);
    rm_tree(dir);
}

Test(budget, a_lab_run_has_a_slot_that_only_budget_and_other_modes_lift)
{
    rl_args a;
    char *lab[] = {"exp", NULL};
    cr_assert_eq(rl_parse_args(1, lab, NULL, &a), 0);
    cr_assert_float_eq(a.slot_s, RL_LAB_SLOT_S, 1e-9, "a lab run keeps its two minutes");
    char *mine[] = {"exp", "--slot", "60", NULL};
    cr_assert_eq(rl_parse_args(3, mine, NULL, &a), 0);
    cr_assert_float_eq(a.slot_s, 60, 1e-9);
    char *none[] = {"exp", "--slot", "0", NULL};
    cr_assert_eq(rl_parse_args(3, none, NULL, &a), 0);
    cr_assert_eq(a.slot_s, 0, "--slot 0: no clock");
    char *budget[] = {"exp", "--budget", "30", NULL};
    cr_assert_eq(rl_parse_args(3, budget, NULL, &a), 0);
    cr_assert_eq(a.slot_s, 0, "--budget is the clock");
    char *quick[] = {"exp", "--quick", NULL}, *full[] = {"exp", "--full", NULL};
    cr_assert_eq(rl_parse_args(2, quick, NULL, &a), 0);
    cr_assert_eq(a.slot_s, 0, "a quick run is short by its rule");
    cr_assert_eq(rl_parse_args(2, full, NULL, &a), 0);
    cr_assert_eq(a.slot_s, 0, "the reference sweep has no clock");
    const char *bad[] = {"-1", "0.5", "ten", "1e9", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"exp", "--slot", (char *)bad[i], NULL};
        cr_redirect_stderr();
        cr_assert_eq(rl_parse_args(3, argv, NULL, &a), RL_EXIT_USAGE, "--slot '%s'", bad[i]);
    }
}

Test(budget, the_command_line_takes_seconds_and_refuses_the_rest)
{
    rl_args a;
    char *ok[] = {"exp", "--budget", "90", NULL};
    cr_assert_eq(rl_parse_args(3, ok, NULL, &a), 0);
    cr_assert_float_eq(a.budget_s, 90, 1e-9);
    char *none[] = {"exp", NULL};
    cr_assert_eq(rl_parse_args(1, none, NULL, &a), 0);
    cr_assert_eq(a.budget_s, 0, "no budget: the mode as it is");
    const char *bad[] = {"0", "-5", "ten", "1e9", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"exp", "--budget", (char *)bad[i], NULL};
        cr_redirect_stderr();
        cr_assert_eq(rl_parse_args(3, argv, NULL, &a), RL_EXIT_USAGE, "--budget '%s'", bad[i]);
    }
}

/* ---- make all BUDGET=: run-all.sh over stand-in experiments ---- */

static char all_out[1 << 14], all_err[1 << 14], all_log[1 << 12];

/* run-all.sh on three stand-ins, exp-91 to exp-93 (no weight of their
 * own: 20), needing 30, 25 and 60 s (exp-93 says nothing: its weight, 20,
 * where need93 is NULL), on a fresh label; the log of their calls in
 * all_log. Returns the script's exit code. */
static int run_all_with(const char *budget, const char *need93, const char *env, const char *flags)
{
    char dir[1024], cmd[8192];
    make_temp_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/bin' && for n in 91 92 93; do cp '" RL_SOURCE_ROOT
             "/tests/fake/experiment-with-need' '%s/bin/exp-'$n; done && "
             "printf '#!/bin/sh\\necho summary\\n' >'%s/bin/rooflab' && chmod +x '%s/bin/rooflab'",
             dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd,
             "env B='%s/bin' LABEL=t FLAGS='--out %s/results%s' BUDGET='%s' FAKE_LOG='%s/log' "
             "FAKE_CEILINGS_S=1 FAKE_NEED_91=30 FAKE_NEED_92=25 %s%s %s bash '" RL_SOURCE_ROOT
             "/harness/ops/run-all.sh'",
             dir, dir, flags, budget, dir, need93 ? "FAKE_NEED_93=" : "", need93 ? need93 : "", env);
    int rc = run_capture(cmd, all_out, sizeof all_out, all_err, sizeof all_err);
    snprintf(cmd, sizeof cmd, "%s/log", dir);
    char *log = read_file(cmd, NULL);
    snprintf(all_log, sizeof all_log, "%s", log ? log : "");
    free(log);
    rm_tree(dir);
    return rc;
}

static int run_all(const char *budget, const char *need93)
{
    return run_all_with(budget, need93, "", "");
}

/* The budget each stand-in ran with, from the log (-1: it did not run). */
static int ran_with(const char *n)
{
    char key[16];
    snprintf(key, sizeof key, "%s run ", n);
    const char *at = strstr(all_log, key);
    return at ? atoi(at + strlen(key)) : -1;
}

Test(budget, make_all_measures_the_ceilings_first_and_gives_each_its_need)
{
    int rc = run_all("200", "60");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, all_out, all_err);
    cr_assert(!strncmp(all_log, "ceilings\n91 plan\n92 plan\n93 plan\n", 33),
              "the ceilings, then every plan, before any run:\n%s", all_log);
    cr_assert(strstr(all_out, "the ceilings and plans took") &&
                  strstr(all_out, "the experiments need 115 s"), "%s", all_out);
    cr_assert_lt(strstr(all_log, "92 run") - all_log, strstr(all_log, "91 run") - all_log,
                 "the smallest need first:\n%s", all_log);
    cr_assert_lt(strstr(all_log, "91 run") - all_log, strstr(all_log, "93 run") - all_log);
    cr_assert_geq(ran_with("92"), 25, "%s", all_log);
    cr_assert_geq(ran_with("91"), 30, "%s", all_log);
    cr_assert_geq(ran_with("93"), 60, "%s", all_log);
    cr_assert_leq(ran_with("93"), 199, "the last gets what is left, less the ceilings' second:\n%s",
                  all_log);
}

Test(budget, make_all_refuses_a_budget_below_the_needs_and_says_what_would_do)
{
    int rc = run_all("100", "60");
    cr_assert_eq(rc, 2, "exit %d\n%s\n%s", rc, all_out, all_err);
    cr_assert(strstr(all_err, "BUDGET=100 is too little on this machine: 115 s") &&
                  strstr(all_err, "BUDGET=120 would do"), "%s", all_err);
    cr_assert_null(strstr(all_log, " run "), "nothing runs:\n%s", all_log);
    cr_assert_null(strstr(all_out, "summary"), "%s", all_out);
}

Test(budget, make_all_takes_a_weight_where_a_plan_says_no_need)
{
    int rc = run_all("200", NULL);
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, all_out, all_err);
    cr_assert(strstr(all_out, "the experiments need 75 s") && strstr(all_out, "exp-93:20"),
              "%s", all_out);
    cr_assert_geq(ran_with("93"), 20, "%s", all_log);
}

/* The --slot a stand-in ran with in a lab series (-1: none). */
static int slot_of(const char *n)
{
    char key[16];
    snprintf(key, sizeof key, "%s run - slot ", n);
    const char *at = strstr(all_log, key);
    return at ? atoi(at + strlen(key)) : -1;
}

Test(budget, make_all_without_a_budget_is_a_lab_series_on_the_lab_clock)
{
    int rc = run_all_with("", "60", "LAB_SERIES_S=150", "");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, all_out, all_err);
    cr_assert_null(strstr(all_log, "plan"), "no plan, no budget:\n%s", all_log);
    cr_assert(!strncmp(all_log, "ceilings\n91 points\n", 19),
              "a fresh label's ceilings first, out of the series' time:\n%s", all_log);
    cr_assert(strstr(all_log, "91 run - slot") && strstr(all_log, "92 run - slot") &&
                  strstr(all_log, "93 run - slot"), "in order, each with its slot:\n%s", all_log);
    cr_assert_lt(strstr(all_log, "91 run") - all_log, strstr(all_log, "92 run") - all_log);
    cr_assert_lt(strstr(all_log, "92 run") - all_log, strstr(all_log, "93 run") - all_log);
    /* equal weights (60 each): a third, then half of what is left, then the rest */
    cr_assert(slot_of("91") >= 45 && slot_of("91") <= 50, "%s", all_log);
    cr_assert(slot_of("92") >= 45 && slot_of("92") <= 75, "what 91 left passes on:\n%s", all_log);
    cr_assert(slot_of("93") >= 45 && slot_of("93") <= 105, "never over a lab slot:\n%s", all_log);
    cr_assert(strstr(all_out, "the lab series took"), "%s", all_out);
}

Test(budget, a_lab_series_caps_each_slot_at_a_lab_runs)
{
    int rc = run_all_with("", "60", "", "");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, all_out, all_err);
    cr_assert_eq(slot_of("91"), 105, "the series over three: each capped at 105 s:\n%s", all_log);
    cr_assert_eq(slot_of("93"), 105, "%s", all_log);
}

Test(budget, make_all_quick_or_full_has_no_clock)
{
    int rc = run_all_with("", "60", "", " --quick");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, all_out, all_err);
    cr_assert(strstr(all_log, "91 run -\n92 run -\n93 run -\n"), "in order, no clock:\n%s",
              all_log);
    cr_assert_null(strstr(all_log, "points"), "nothing measured up front:\n%s", all_log);
}

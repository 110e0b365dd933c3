/*
 * test_budget.c -- --budget SECONDS (harness/budget.c) on a toy experiment:
 * a budget that is ample runs every point, the verdicts' groups before the
 * optional ones of their part; a budget already spent runs none, and
 * still writes every point's row, saying why it was not run. Nothing here
 * depends on how fast the machine is: the spent budget is spent by the
 * clock (declare waits past it), the ample one is ten minutes for
 * microseconds of work.
 */
#include "helpers.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
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

static rl_table *run_toy(const rl_experiment *exp, const char *budget, char *dir, size_t len)
{
    make_temp_dir(dir, len);
    char out[1100], plots[1100], csv[1200], why[256];
    snprintf(out, sizeof out, "%s/results", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    char *argv[] = {"toy", "--backend", "cpu", "--quick", "--no-plot", "--label", "toy",
                    "--budget", (char *)budget, "--out", out, "--plots", plots,
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

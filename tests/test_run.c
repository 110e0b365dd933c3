/*
 * test_run.c -- rl_run (rl_main without charts), the one path every experiment takes, on a toy
 * experiment of two parts: the experiment's code runs once (declare), the
 * plan counts every declared point before any part opens, each part is
 * opened, validated, timed, measured, written and closed in turn, a point
 * that fails validation is never timed, and judge sees every point.
 */
#include "helpers.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

enum { N = 256 };

/* What happened, in order: one letter per event, the part's number after
 * its part's events ("d" declare, "o0" part 0 opened, "p0" a point of
 * part 0 prepared, "m0" measured, "c0" closed, "j" judge). */
static char events[256];

static void happened(const char *what, int part)
{
    size_t n = strlen(events);
    snprintf(events + n, sizeof events - n, part < 0 ? "%s " : "%s%d ", what, part);
}

typedef struct toy_part {
    int number;
    float *out; /* made when the part opens */
    double want[N];
} toy_part;

typedef struct toy_point {
    toy_part *at;
    int runs;
} toy_point;

static void toy_run(void *arg)
{
    toy_point *t = arg;
    t->runs++;
    for (int i = 0; i < N; i++)
        t->at->out[i] = (float)i;
}

static void toy_open(rl_ctx *ctx, void *state)
{
    toy_part *s = state;
    s->out = rl_alloc(ctx->be, N * sizeof(float));
    for (int i = 0; i < N; i++)
        s->want[i] = i;
    happened("o", s->number);
}

static void toy_prepare(rl_ctx *ctx, rl_point *p)
{
    (void)ctx;
    toy_point *t = RL_DATA_MUT(toy_point, p);
    cr_assert(t->at->out, "a point is prepared while its part is open");
    p->out = t->at->out;
    p->want = t->at->want;
    happened("p", t->at->number);
}

static void toy_measured(rl_ctx *ctx, rl_points *pts, void *state)
{
    (void)ctx;
    (void)pts;
    happened("m", ((toy_part *)state)->number);
}

static void toy_done(rl_ctx *ctx, const rl_points *pts, void *state)
{
    toy_part *s = state;
    cr_assert_eq(pts->n, 2, "done sees its own part's points");
    rl_free(ctx->be, s->out);
    s->out = NULL;
    happened("c", s->number);
}

static int timed_seen, failed_seen;

static void toy_declare(rl_ctx *ctx)
{
    happened("d", -1);
    for (int part = 0; part < 2; part++) {
        toy_part *s = RL_NEW(ctx, toy_part);
        s->number = part;
        rl_part_add(ctx, &(rl_part){.open = toy_open, .done = toy_done, .measured = toy_measured,
                                    .state = s});
        int group = rl_group_new(ctx);
        for (int i = 0; i < 2; i++) {
            toy_point *t = RL_NEW(ctx, toy_point);
            t->at = s;
            rl_point_add(ctx, &(rl_point){.group = group, .run = toy_run, .arg = t,
                                          RL_POINT_DATA(t), .prepare = toy_prepare,
                                          .count = N, .atol = 1e-6, .bytes = 4.0 * N,
                                          .footprint = 4.0 * N, .pattern = RL_READ});
        }
    }
}

static void toy_judge(rl_ctx *ctx, const rl_points *all)
{
    (void)ctx;
    happened("j", -1);
    for (int i = 0; i < all->n; i++) {
        timed_seen += rl_point_timed(&all->v[i]);
        failed_seen += all->v[i].state == RL_POINT_FAILED;
    }
}

static const rl_column TOY_COLUMNS[] = {RL_COLUMN_VARIANT, {0}};

static const rl_experiment TOY = {
    .id = "t0", .slug = "t0-toy", .title = "a toy experiment", .claim = "none",
    .source = "tests/test_run.c", .columns = TOY_COLUMNS, .rates = RL_RATES_BANDWIDTH,
    .default_cache = RL_HOT, .compare_keys = "variant", .compare_value = "time_us_median",
    .declare = toy_declare, .judge = toy_judge,
};

static int run_toy(const rl_experiment *exp, char *dir, size_t len)
{
    make_temp_dir(dir, len);
    char out[1100], plots[1100];
    snprintf(out, sizeof out, "%s/results", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    char *argv[] = {"toy", "--backend", "cpu", "--quick", "--no-plot", "--label", "toy",
                    "--out", out, "--plots", plots, "--ceilings", TEST_CEILINGS, NULL};
    events[0] = '\0';
    timed_seen = failed_seen = 0;
    measure_lock();
    int code = rl_run(exp, (int)(sizeof argv / sizeof argv[0]) - 1, argv, NULL);
    measure_unlock();
    return code;
}

Test(run, parts_open_validate_time_and_close_in_turn_and_judge_sees_all,
     .init = cr_redirect_stdout)
{
    char dir[1024];
    int code = run_toy(&TOY, dir, sizeof dir);
    cr_assert_eq(code, RL_EXIT_OK);
    cr_assert_str_eq(events, "d o0 p0 p0 m0 c0 o1 p1 p1 m1 c1 j ");
    cr_assert_eq(timed_seen, 4);
    cr_assert_eq(failed_seen, 0);
    char csv[1200];
    snprintf(csv, sizeof csv, "%s/results/toy/exp-t0.csv", dir);
    char why[256];
    rl_table *t = load_results(csv, why, sizeof why);
    cr_assert(t, "%s", why);
    cr_assert_eq(t->nrows, 4, "one row per declared point");
    cr_assert(has_meta(t, "# plan: 2 groups, 4 points"), "the plan counts every declared point");
    rl_table_free(t);
    rm_tree(dir);
}

/* The same toy whose part 1 has a point that writes the wrong values. */
static void wrong_run(void *arg)
{
    toy_point *t = arg;
    t->runs++;
    for (int i = 0; i < N; i++)
        t->at->out[i] = (float)i + 1.0f;
}

static void declare_with_a_wrong_point(rl_ctx *ctx)
{
    toy_declare(ctx);
    rl_points *all = (rl_points *)rl_points_all(ctx);
    all->v[all->n - 1].run = wrong_run;
}

Test(run, a_point_that_fails_validation_is_written_but_never_timed,
     .init = cr_redirect_stdout)
{
    rl_experiment exp = TOY;
    exp.declare = declare_with_a_wrong_point;
    cr_redirect_stderr();
    char dir[1024];
    int code = run_toy(&exp, dir, sizeof dir);
    cr_assert_eq(code, RL_EXIT_FAILED, "a failed kernel fails the run");
    cr_assert_eq(timed_seen, 3);
    cr_assert_eq(failed_seen, 1);
    rm_tree(dir);
}

static void declare_after_the_fact(rl_ctx *ctx)
{
    (void)ctx;
}

static void judge_adds_a_point(rl_ctx *ctx, const rl_points *all)
{
    (void)all;
    rl_point_add(ctx, &(rl_point){0}); /* after declare: an internal error */
}

Test(run, a_point_added_after_declare_is_an_internal_error, .init = cr_redirect_stdout,
     .exit_code = RL_EXIT_FAILED)
{
    rl_experiment exp = TOY;
    exp.declare = declare_after_the_fact;
    exp.judge = judge_adds_a_point;
    cr_redirect_stderr();
    char dir[1024];
    run_toy(&exp, dir, sizeof dir);
}

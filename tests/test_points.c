/*
 * test_points.c -- the harness's point pipeline in isolation, on the CPU
 * backend (whose device memory is host memory, so the work below writes it
 * directly): validation through the declared output (the call checked,
 * the preparation, in-place outputs), the verdicts' lookups, and the
 * console grid whose header and rows come from one column list.
 */
#include "rl_library.h"
#include "internal.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <string.h>

static const rl_experiment TEST_EXP = {.id = "t", .slug = "t-points", .title = "points"};

static rl_ctx open_ctx(void)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert(be, "%s", why);
    return (rl_ctx){.exp = &TEST_EXP, .be = be, .kind = RL_CPU};
}

enum { N = 64 };

typedef struct job {
    float *out;     /* backend memory */
    int n;          /* elements written: out[i] = i + 1 (x2 when in place) */
    bool in_place;  /* out[i] = 2 out[i] instead */
    int runs, checks, prepares;
} job;

static void run_job(void *arg)
{
    job *j = arg;
    j->runs++;
    for (int i = 0; i < j->n; i++)
        j->out[i] = j->in_place ? 2 * j->out[i] : (float)(i + 1);
}

static void check_job(void *arg)
{
    job *j = arg;
    j->checks++;
    for (int i = 0; i < N; i++)
        j->out[i] = (float)(i + 1);
}

static double want[N];

static void prepare_job(rl_ctx *ctx, rl_point *p)
{
    (void)ctx;
    job *j = p->arg;
    j->prepares++;
    for (int i = 0; i < N; i++) {
        j->out[i] = (float)i;        /* the in-place input */
        want[i] = j->in_place ? 2.0 * i : i + 1.0;
    }
    p->want = want;
}

static rl_point point_for(job *j)
{
    return (rl_point){.run = run_job, .arg = j, .out = j->out, .count = N, .atol = 1e-6,
                      .prepare = prepare_job};
}

Test(points, the_timed_call_is_validated_against_want)
{
    rl_ctx ctx = open_ctx();
    job j = {.out = rl_alloc(ctx.be, N * sizeof(float)), .n = N};
    rl_point p = point_for(&j);
    rl_point_validate(&ctx, &p);
    cr_assert_eq(p.state, RL_POINT_VALID, "%s", p.why);
    cr_assert_eq(j.prepares, 1);
    cr_assert_eq(j.runs, 1);
    cr_assert_eq(ctx.failures, 0);
}

Test(points, an_unwritten_output_fails_through_the_poison)
{
    rl_ctx ctx = open_ctx();
    job j = {.out = rl_alloc(ctx.be, N * sizeof(float)), .n = N - 1};
    rl_point p = point_for(&j);
    rl_point_validate(&ctx, &p);
    cr_assert_eq(p.state, RL_POINT_FAILED);
    cr_assert(strstr(p.why, "1 of 64 elements wrong"), "%s", p.why);
    cr_assert_eq(ctx.failures, 1);
}

Test(points, check_run_replaces_the_timed_call_in_validation)
{
    rl_ctx ctx = open_ctx();
    job j = {.out = rl_alloc(ctx.be, N * sizeof(float)), .n = 0}; /* the timed call writes nothing */
    rl_point p = point_for(&j);
    p.check_run = check_job, p.check_arg = &j;
    rl_point_validate(&ctx, &p);
    cr_assert_eq(p.state, RL_POINT_VALID, "%s", p.why);
    cr_assert_eq(j.checks, 1);
    cr_assert_eq(j.runs, 0, "the timed call does not run in validation");
}

Test(points, in_place_outputs_keep_the_prepared_input)
{
    rl_ctx ctx = open_ctx();
    job j = {.out = rl_alloc(ctx.be, N * sizeof(float)), .n = N, .in_place = true};
    rl_point p = point_for(&j);
    p.in_place = true;
    rl_point_validate(&ctx, &p);
    cr_assert_eq(p.state, RL_POINT_VALID, "%s", p.why);
    /* Not in place, the poison replaces the input: 2 x NaN fails. */
    rl_point q = point_for(&j);
    rl_point_validate(&ctx, &q);
    cr_assert_eq(q.state, RL_POINT_FAILED);
}

static void prepare_owned(rl_ctx *ctx, rl_point *p)
{
    prepare_job(ctx, p);
    double *copy = rl_host_alloc(N * sizeof(double));
    memcpy(copy, want, sizeof want);
    p->want = copy;
}

Test(points, a_want_the_point_frees_is_gone_after_the_check)
{
    rl_ctx ctx = open_ctx();
    job j = {.out = rl_alloc(ctx.be, N * sizeof(float)), .n = N};
    rl_point p = point_for(&j);
    p.prepare = prepare_owned, p.frees_want = true;
    rl_point_validate(&ctx, &p);
    cr_assert_eq(p.state, RL_POINT_VALID, "%s", p.why);
    cr_assert_null(p.want, "freed and cleared once checked");
}

/* ---- lookups ------------------------------------------------------------------- */

static const kernel_variant FAST = {.number = 1, .name = "fast", .what = "", .role = "fast_role"},
                            SLOW = {.number = 2, .name = "slow", .what = ""};

static bool even_group(const rl_point *p, const void *key)
{
    (void)key;
    return p->group % 2 == 0;
}

Test(points, lookups_see_timed_points_only)
{
    rl_points s = {0};
    double secs[] = {3, 1, 2, 0.5};
    const kernel_variant *v[] = {&SLOW, &FAST, &SLOW, &FAST};
    int groups[] = {2, 2, 4, 3};
    for (int i = 0; i < 4; i++) {
        rl_point *p = rl_points_add(&s, &(rl_point){.variant = v[i], .group = groups[i]});
        p->state = RL_POINT_TIMED;
        p->seconds = secs[i];
    }
    s.v[3].state = RL_POINT_FAILED; /* the fastest failed validation */
    cr_assert_eq(rl_points_fastest(&s, NULL, NULL, NULL), &s.v[1]);
    cr_assert_eq(rl_points_fastest(&s, NULL, even_group, NULL), &s.v[1]);
    cr_assert_eq(rl_points_find(&s, NULL, even_group, NULL), &s.v[0], "the first, not the fastest");
    cr_assert_eq(rl_points_find(&s, "fast_role", NULL, NULL), &s.v[1]);
    cr_assert_null(rl_points_find(&s, "no_such_role", NULL, NULL));
    cr_assert_eq(rl_points_find_last(&s, NULL, even_group, NULL), &s.v[2]);
    cr_assert_eq(rl_points_find_last(&s, "fast_role", NULL, NULL), &s.v[1], "the last timed one");
    rl_points_free(&s);
}

/* An own check (outputs that are not floats): it decides, the harness
 * keeps the books (state, failures, nothing compared); an observed point
 * counts as measured once the experiment says so. */
static bool odd_variant_passes(rl_ctx *ctx, rl_point *p)
{
    (void)ctx;
    snprintf(p->why, sizeof p->why, "%s", p->variant->number % 2 ? "ok" : "even: wrong end state");
    return p->variant->number % 2;
}

Test(points, an_own_check_decides_and_the_harness_keeps_the_books, .init = cr_redirect_stderr)
{
    rl_ctx ctx = open_ctx();
    rl_points s = {0};
    rl_points_add(&s, &(rl_point){.variant = &FAST, .check = odd_variant_passes}); /* number 1 */
    rl_points_add(&s, &(rl_point){.variant = &SLOW, .check = odd_variant_passes});
    rl_points_validate(&ctx, &s);
    cr_assert_eq(s.v[0].state, RL_POINT_VALID);
    cr_assert_eq(s.v[1].state, RL_POINT_FAILED);
    cr_assert(strstr(s.v[1].why, "wrong end state"));
    cr_assert_eq(ctx.failures, 1);
    for (int i = 0; i < 2; i++)
        rl_point_observed(&s.v[i]);
    cr_assert(rl_point_timed(&s.v[0]), "the valid one is measured");
    cr_assert(!rl_point_timed(&s.v[1]), "a failed one stays failed");
    rl_points_free(&s);
}

/* ---- the console grid -------------------------------------------------------------- */

Test(points, grid_header_and_rows_share_their_widths, .init = cr_redirect_stdout)
{
    static const rl_grid_column COLS[] = {{"name", "%-6s"}, {"n", "%4d"}, {"GB/s", "%7.2f"}, {0}};
    rl_grid_header(COLS);
    rl_grid_row(COLS, "q4", 12, 3.14159);
    rl_grid_row(COLS, "", 7, NAN);
    fflush(stdout);
    cr_assert_stdout_eq_str("  name      n    GB/s\n"
                            "  q4       12    3.14\n"
                            "  -         7       -\n");
}

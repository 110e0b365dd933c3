/*
 * test_axes.c -- a sweep's axes (rl_axes.h): each mode's values, the GPU's
 * where an axis has them, ranges that end at a top known at run time, and
 * a sweep's combinations declared in order with its parts and groups.
 */
#include "fusion.h" /* a kernel family for a variant axis */
#include "internal.h"
#include "rl_ctx_private.h" /* a context with rooms, for rl_sweep_declare */

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static rl_ctx ctx_in(rl_mode mode, rl_backend_kind kind)
{
    rl_ctx ctx = {.kind = kind};
    ctx.args.mode = mode;
    return ctx;
}

static void assert_values(rl_steps s, const double *want, int n, const char *what)
{
    cr_assert_eq(s.n, n, "%s: %d values, want %d", what, s.n, n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(s.v[i], want[i], "%s: value %d is %g, want %g", what, i, s.v[i], want[i]);
}

static const rl_axis GPU_BATCH = RL_AXIS("batch", RL_LIST(1, 4, 64), RL_LIST(1, 4, 64),
                                         RL_LIST(1, 64));
static const rl_axis BATCH = RL_AXIS("batch", RL_LIST(1, 4), RL_LIST(1, 4, 64),
                                     RL_LIST(1, 2, 4, 8), .gpu = &GPU_BATCH);

Test(axes, each_mode_reads_its_own_list_and_a_gpu_its_own_table)
{
    rl_ctx quick = ctx_in(RL_MODE_QUICK, RL_CPU), lab = ctx_in(RL_MODE_LAB, RL_CPU),
           full = ctx_in(RL_MODE_FULL, RL_CPU), gpu = ctx_in(RL_MODE_QUICK, RL_CUDA);
    assert_values(rl_axis_values(&quick, &BATCH), (double[]){1, 4}, 2, "quick");
    assert_values(rl_axis_values(&lab, &BATCH), (double[]){1, 4, 64}, 3, "lab");
    assert_values(rl_axis_values(&full, &BATCH), (double[]){1, 2, 4, 8}, 4, "full");
    assert_values(rl_axis_values(&gpu, &BATCH), (double[]){1, 4, 64}, 3, "gpu quick");
    cr_assert_eq(rl_axis_last(&full, &BATCH), 8);
    cr_assert(rl_axis_has(&full, &BATCH, 2) && !rl_axis_has(&lab, &BATCH, 2));
}

static double top_of_2_23(const rl_ctx *ctx)
{
    (void)ctx;
    return 1 << 23;
}

static const rl_axis SIZE = RL_AXIS("n", RL_ENDS(1 << 16), RL_TIMES(1 << 16, 4),
                                    RL_TIMES(1 << 16, 2), .top = top_of_2_23);

Test(axes, a_range_grows_to_its_top_and_ends_there)
{
    rl_ctx quick = ctx_in(RL_MODE_QUICK, RL_CPU), lab = ctx_in(RL_MODE_LAB, RL_CPU),
           full = ctx_in(RL_MODE_FULL, RL_CPU);
    assert_values(rl_axis_values(&quick, &SIZE), (double[]){1 << 16, 1 << 23}, 2, "ends");
    /* quadrupling passes the top at 2^24: the top itself is the last value */
    assert_values(rl_axis_values(&lab, &SIZE),
                  (double[]){1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 23}, 5, "times 4");
    rl_steps s = rl_axis_values(&full, &SIZE);
    cr_assert_eq(s.n, 8, "2^16 .. 2^23 doubling: %d values", s.n);
    cr_assert_eq(s.v[7], 1 << 23);
    char text[128];
    rl_axis_text(&full, &SIZE, text, sizeof text);
    cr_assert_str_eq(text, "65536 .. 8388608, doubling");
}

static double top_of_1000(const rl_ctx *ctx)
{
    (void)ctx;
    return 1000;
}

static const rl_axis STEPS = RL_AXIS("n", RL_STEPS(2000, 100), RL_STEPS(2000, 100),
                                     RL_STEPS(2000, 100), .top = top_of_1000);
static const rl_axis CAPPED = RL_AXIS("k", RL_LIST(10, 2000, 100), RL_LIST(10), RL_LIST(10),
                                      .top = top_of_1000);

Test(axes, a_top_below_the_start_leaves_the_top_alone_and_caps_a_list)
{
    rl_ctx quick = ctx_in(RL_MODE_QUICK, RL_CPU);
    assert_values(rl_axis_values(&quick, &STEPS), (double[]){1000}, 1, "steps");
    assert_values(rl_axis_values(&quick, &CAPPED), (double[]){10, 100}, 2, "capped list");
}

/* ---- sweeps ------------------------------------------------------------------- */

static const rl_axis LEN = RL_AXIS("len", RL_LIST(512, 2048), RL_LIST(512), RL_LIST(512));

typedef struct seen {
    int parts, calls;
    double len[16], batch[16];
    int group[16];
    bool last_batch[16];
    void *state[16];
} seen;

static void note_part(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    (void)ctx;
    (void)at;
    seen *s = state;
    part->state = &s->parts; /* any address the points then see */
    s->parts++;
}

static void note_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    seen *s = state;
    int i = s->calls++;
    s->len[i] = rl_at_value(at, &LEN);
    s->batch[i] = rl_at_int(at, &BATCH);
    s->group[i] = at->group;
    s->last_batch[i] = rl_at_last(at, &BATCH);
    s->state[i] = at->part_state;
    rl_point_add(ctx, &(rl_point){.group = at->group, .bytes = 1});
}

Test(axes, a_sweep_declares_every_combination_outer_axis_first_with_its_parts_and_groups)
{
    rl_ctx ctx = ctx_in(RL_MODE_QUICK, RL_CPU);
    rl_ctx_private priv = {0};
    ctx.priv = &priv;
    seen s = {0};
    static const rl_axis *const AXES[] = {&LEN, &BATCH, NULL};
    rl_sweep_declare(&ctx, &(rl_sweep){AXES, .part_axes = 1, .group_axes = 2, .part = note_part,
                                       .points = note_points, .state = &s});
    cr_assert_eq(s.calls, 4, "2 lengths x 2 batches: %d calls", s.calls);
    cr_assert_eq(s.parts, 2, "a part a length: %d", s.parts);
    double want_len[] = {512, 512, 2048, 2048}, want_batch[] = {1, 4, 1, 4};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(s.len[i], want_len[i], "call %d: len %g", i, s.len[i]);
        cr_assert_eq(s.batch[i], want_batch[i], "call %d: batch %g", i, s.batch[i]);
        cr_assert_eq(s.last_batch[i], i % 2 == 1, "call %d: last batch", i);
        cr_assert_eq(s.state[i], &s.parts, "call %d sees its part's state", i);
        for (int j = 0; j < i; j++)
            cr_assert_neq(s.group[i], s.group[j], "a group a combination: %d and %d", i, j);
    }
    const rl_points *all = rl_points_all(&ctx);
    cr_assert_eq(all->n, 4);
    cr_assert(all->v[0].part == 0 && all->v[1].part == 0 && all->v[2].part == 1 &&
              all->v[3].part == 1, "the points of one length share its part");
    rl_run_release(&ctx);
}

Test(axes, groups_by_the_outer_axis_alone_keep_its_inner_values_together)
{
    rl_ctx ctx = ctx_in(RL_MODE_QUICK, RL_CPU);
    rl_ctx_private priv = {0};
    ctx.priv = &priv;
    seen s = {0};
    static const rl_axis *const AXES[] = {&LEN, &BATCH, NULL};
    rl_sweep_declare(&ctx, &(rl_sweep){AXES, .group_axes = 1, .points = note_points, .state = &s});
    cr_assert_eq(s.parts, 0, "no part callback");
    cr_assert(s.group[0] == s.group[1] && s.group[2] == s.group[3] && s.group[0] != s.group[2],
              "groups %d %d %d %d", s.group[0], s.group[1], s.group[2], s.group[3]);
    cr_assert_null(s.state[0], "no part state without a part axis");
    rl_run_release(&ctx);
}

/* ---- variants and skipped combinations ------------------------------------------- */

static const rl_axis FUSION_VARIANT = RL_VARIANT_AXIS(&fusion_family);

Test(axes, a_variant_axis_is_the_rows_that_run_here_and_only_those_chosen)
{
    rl_ctx ctx = ctx_in(RL_MODE_QUICK, RL_CPU);
    rl_steps all = rl_axis_values(&ctx, &FUSION_VARIANT);
    int rows = 0;
    for (const fusion_variant *v = fusion_variants; v->name; v++)
        rows += v->cpu != NULL;
    cr_assert_eq(all.n, rows, "%d variants on the CPU, the axis has %d", rows, all.n);
    ctx.args.variants = "pair_fused";
    rl_steps one = rl_axis_values(&ctx, &FUSION_VARIANT);
    cr_assert_eq(one.n, 1, "--variant pair_fused: %d values", one.n);
    cr_assert_str_eq(fusion_variants[(int)one.v[0]].name, "pair_fused");
    char text[64];
    rl_axis_text(&ctx, &FUSION_VARIANT, text, sizeof text);
    cr_assert_str_eq(text, "pair_fused");
}

/* Only batch 4 at length 2048 has points. */
static bool only_2048_at_4(const rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)ctx;
    (void)state;
    return !(rl_at_value(at, &LEN) == 2048 && rl_at_int(at, &BATCH) == 4);
}

Test(axes, a_skipped_combination_makes_no_part_and_no_group)
{
    rl_ctx ctx = ctx_in(RL_MODE_QUICK, RL_CPU);
    rl_ctx_private priv = {0};
    ctx.priv = &priv;
    seen s = {0};
    static const rl_axis *const AXES[] = {&LEN, &BATCH, NULL};
    rl_sweep_declare(&ctx, &(rl_sweep){AXES, .part_axes = 1, .group_axes = 1, .part = note_part,
                                       .skip = only_2048_at_4, .points = note_points,
                                       .state = &s});
    cr_assert_eq(s.calls, 1, "one combination has points: %d calls", s.calls);
    cr_assert_eq(s.parts, 1, "one part, not one for the skipped length: %d", s.parts);
    cr_assert_eq(s.len[0], 2048);
    cr_assert_eq(s.batch[0], 4);
    cr_assert_eq(s.group[0], 1, "the first group made is the combination's: %d", s.group[0]);
    const rl_points *all = rl_points_all(&ctx);
    cr_assert(all->n == 1 && all->v[0].part == 0);
    rl_run_release(&ctx);
}

Test(axes, a_list_as_words_is_every_value_once)
{
    rl_ctx lab = ctx_in(RL_MODE_LAB, RL_CPU);
    char words[64];
    rl_axis_list(&lab, &BATCH, words, sizeof words);
    cr_assert_str_eq(words, "1 4 64");
}

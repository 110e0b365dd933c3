/*
 * columns.c -- what a row of experiment 08 holds: its CSV columns, the
 * ones computed from other points (r, t/t0, the models, t/t1), and the
 * console's table, which folds each point's ratio and model into one
 * column each.
 */
#include "exp08.h"

#include <math.h>

static double col_f(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return RL_DATA(exp08_call, p)->f;
}
static double col_t_over_t0(rl_ctx *ctx, const rl_point *p)
{
    return exp08_t_over_t0(rl_points_all(ctx), p);
}
/* The console's one model column: what the point's ratio is judged against. */
static double col_model(rl_ctx *ctx, const rl_point *p)
{
    if (rl_point_has_role(p, "sequential"))
        return exp08_col_model_sequential(ctx, p);
    if (rl_point_has_role(p, "overlapped"))
        return exp08_col_model_overlapped(ctx, p);
    return exp08_col_touched_ratio(ctx, p);
}
static double col_ratio(rl_ctx *ctx, const rl_point *p)
{
    double t0 = col_t_over_t0(ctx, p);
    return isnan(t0) ? exp08_col_t_over_t1(ctx, p) : t0;
}

const rl_column EXP08_COLUMNS[] = {
    RL_TEXT("part", NULL, NULL, exp08_call, part),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_TEXT("routing", NULL, NULL, exp08_call, routing),
    {"f", NULL, NULL, .num = col_f},
    RL_INT("rows", NULL, NULL, exp08_call, rows),
    RL_INT("k", NULL, NULL, exp08_call, k),
    RL_INT("experts", NULL, NULL, exp08_call, experts),
    RL_INT("top_k", NULL, NULL, exp08_call, top_k),
    RL_INT("batch", NULL, NULL, exp08_call, batch),
    RL_DOUBLE("touched", NULL, NULL, exp08_call, touched),
    RL_DOUBLE("touched_model", NULL, NULL, exp08_call, touched_model),
    {"flops", NULL, NULL, .num = rl_col_flops},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"ai", NULL, NULL, .num = rl_col_ai},
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    RL_INT("validated_rows", NULL, NULL, exp08_call, validated),
    {0},
};

const rl_column EXP08_DERIVED[] = {
    {"r", NULL, NULL, .num = exp08_col_r, .measured = true},
    {"t_over_t0", NULL, NULL, .num = col_t_over_t0, .measured = true},
    {"model_sequential", NULL, NULL, .num = exp08_col_model_sequential, .measured = true},
    {"model_overlapped", NULL, NULL, .num = exp08_col_model_overlapped, .measured = true},
    {"t_over_t1", NULL, NULL, .num = exp08_col_t_over_t1, .measured = true},
    {"touched_ratio_model", NULL, NULL, .num = exp08_col_touched_ratio},
    {0},
};

const rl_column EXP08_TABLE[] = {
    RL_TEXT(NULL, "part", "%-9s", exp08_call, part),
    {NULL, "variant", "%-26s", .str = rl_col_variant},
    RL_TEXT(NULL, "routing", "%-7s", exp08_call, routing),
    {NULL, "f", "%5.2f", .num = col_f},
    RL_INT(NULL, "top-k", "%5d", exp08_call, top_k),
    RL_INT(NULL, "B", "%3d", exp08_call, batch),
    RL_DOUBLE(NULL, "touched", "%7.1f", exp08_call, touched),
    RL_COLUMN_TIME_US,
    RL_COLUMN_GBPS,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    {NULL, "r", "%6.2f", .num = exp08_col_r, .measured = true},
    {NULL, "t/t0|t1", "%7.2f", .num = col_ratio, .measured = true},
    {NULL, "model", "%6.2f", .num = col_model, .measured = true},
    {0},
};


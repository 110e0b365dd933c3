/*
 * axis_list.c -- an axis's values as words (rl_axis_list.h).
 */
#include "rl_axis_list.h"

void rl_axis_list(const rl_ctx *ctx, const rl_axis *a, char *buf, size_t len)
{
    rl_steps s = rl_axis_values(ctx, a);
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < s.n; i++)
        rl_appendf(buf, len, "%s%.10g", i ? " " : "", s.v[i]);
}

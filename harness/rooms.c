/*
 * rooms.c -- the doors of a context's rooms (rl_ctx_private.h). Apart
 * from context.c, so that a file which needs one room (verdict.c, for a
 * tool that reads verdicts) does not pull in the life of a run and the
 * backends with it. A context a test made on the stack has no private
 * part: each door answers NULL.
 */
#include "rl_ctx_private.h"

rl_ctx_csv *rl_csv_room(const rl_ctx *ctx) { return ctx->priv ? &ctx->priv->csv : NULL; }

rl_ctx_verdicts *rl_verdicts_room(const rl_ctx *ctx)
{
    return ctx->priv ? &ctx->priv->verdicts : NULL;
}

rl_ctx_ceilings *rl_ceilings_room(const rl_ctx *ctx)
{
    return ctx->priv ? &ctx->priv->ceilings : NULL;
}

rl_ctx_plan *rl_plan_room(const rl_ctx *ctx) { return ctx->priv ? &ctx->priv->plan : NULL; }

rl_ctx_parts *rl_parts_room(const rl_ctx *ctx) { return ctx->priv ? &ctx->priv->parts : NULL; }

rl_ctx_clock *rl_clock_room(const rl_ctx *ctx) { return ctx->priv ? &ctx->priv->clock : NULL; }

rl_budget *rl_budget_of(const rl_ctx *ctx) { return ctx->priv ? ctx->priv->budget : NULL; }

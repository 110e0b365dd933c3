/*
 * rl_ctx_ceilings.h -- a run's room for the ceilings: the roofs once
 * measured (or read), and what became of them during the run (a rung
 * measured again, a roof a point still beat). ceilings.c fills it,
 * roofs.c judges points against it; the planner never sees this room,
 * only the ceilings it is handed (rl_ctx_plan.h).
 */
#ifndef RL_CTX_CEILINGS_H
#define RL_CTX_CEILINGS_H

#include "rooflab.h"

typedef struct rl_ctx_ceilings {
    rl_ceilings ceilings;
    bool have;                  /* measured, read from the cache or from --ceilings */
    bool fixed;                 /* --ceilings FILE: never measure */
    bool remeasured_bw[RL_LEVEL_COUNT][RL_PATTERN_COUNT], remeasured_compute;
    bool suspect;               /* a ceiling stayed under-measured */
    char suspect_note[320];
} rl_ctx_ceilings;

/* The room of ctx (rooms.c); NULL for a context without a private part. */
rl_ctx_ceilings *rl_ceilings_room(const rl_ctx *ctx);

/* The ceilings already measured (or read): never measures. Dies with an
 * internal error when there are none yet, so that code which must not
 * measure (the plan) cannot fall back on rl_ceilings_get's lazy measure. */
const rl_ceilings *rl_ceilings_measured(const rl_ctx *ctx);

#endif /* RL_CTX_CEILINGS_H */

/*
 * rl_ctx_private.h -- the private part of a context: its rooms, one
 * concern each (internal.h lists them), and what only context.c reads:
 * the seeds drawn, why the run fell back to the CPU, the charts' driver.
 * Only context.c (the life of a run) and rooms.c (the rooms' doors)
 * include it; every other file reaches a room through its door.
 */
#ifndef RL_CTX_PRIVATE_H
#define RL_CTX_PRIVATE_H

#include "internal.h"
#include "rl_budget.h"
#include "rl_ctx_ceilings.h"
#include "rl_ctx_clock.h"
#include "rl_ctx_csv.h"
#include "rl_ctx_parts.h"
#include "rl_ctx_plan.h"
#include "rl_ctx_verdicts.h"

struct rl_ctx_private {
    rl_ctx_csv csv;
    rl_ctx_verdicts verdicts;
    rl_ctx_ceilings ceilings;
    rl_ctx_plan plan;
    rl_ctx_parts parts;
    rl_ctx_clock clock;
    rl_budget *budget;           /* NULL without --budget */
    uint64_t seed_counter;
    char fallback_note[256];
    const rl_charts *charts;     /* NULL: no charts drawn */
};

#endif /* RL_CTX_PRIVATE_H */

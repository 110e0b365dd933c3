/*
 * rl_ctx_clock.h -- a run's room for its clock: when it began, what other
 * processes had run by then (the busy-host gate counts from it), and the
 * progress line's steps. context.c starts it; the plan, the budget,
 * the claims' gate and the progress line read it.
 */
#ifndef RL_CTX_CLOCK_H
#define RL_CTX_CLOCK_H

#include "rooflab.h"
#include "rl_host.h"

typedef struct rl_ctx_clock {
    double started;             /* rl_now_s() at rl_begin */
    rl_busy_mark busy_mark;     /* at rl_begin: what other processes ran since */
    int progress_total, progress_done;
} rl_ctx_clock;

/* The room of ctx (rooms.c); NULL for a context without a private part. */
rl_ctx_clock *rl_clock_room(const rl_ctx *ctx);

#endif /* RL_CTX_CLOCK_H */

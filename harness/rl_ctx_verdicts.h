/*
 * rl_ctx_verdicts.h -- a run's room for what the verdicts need: the rows
 * judged so far, in order (a later row of one id replaces an earlier one
 * when read). Only verdict.c includes it; everything else judges through
 * rl_verdict and reads through rl_verdict_find.
 */
#ifndef RL_CTX_VERDICTS_H
#define RL_CTX_VERDICTS_H

#include "rooflab.h"

typedef struct rl_verdict_row rl_verdict_row; /* verdict.c */

typedef struct rl_ctx_verdicts {
    rl_verdict_row *rows;
    int n, cap;
} rl_ctx_verdicts;

/* The room of ctx (rooms.c); NULL for a context without a private part. */
rl_ctx_verdicts *rl_verdicts_room(const rl_ctx *ctx);

#endif /* RL_CTX_VERDICTS_H */

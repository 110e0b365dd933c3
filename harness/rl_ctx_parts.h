/*
 * rl_ctx_parts.h -- a run's room for what rl_main declared: every point,
 * the parts they belong to, and the memory kept for them until the run
 * ends. run.c fills it and runs it part by part; points.c and context.c
 * read every point from it (counts, a partial run's end).
 */
#ifndef RL_CTX_PARTS_H
#define RL_CTX_PARTS_H

#include "rooflab.h"

/* A declared part and the range of points that belong to it. */
typedef struct rl_declared_part {
    rl_part part;
    int first, n;
} rl_declared_part;

typedef struct rl_ctx_parts {
    rl_points points;
    rl_declared_part *parts;
    int nparts, cap_parts;
    bool declared;              /* declare has returned: nothing more may be added */
    bool discard;               /* a side benchmark: no CSV, verdict or chart */
    void **kept;
    int nkept, cap_kept;
} rl_ctx_parts;

/* The room of ctx (rooms.c); NULL for a context without a private part. */
rl_ctx_parts *rl_parts_room(const rl_ctx *ctx);

#endif /* RL_CTX_PARTS_H */

/*
 * rl_ctx_plan.h -- a run's room for what the planner needs: the ceilings
 * it is handed once they are measured, and the sums it keeps (groups,
 * points, the expected seconds). run.c plans what was declared; plan.c
 * and the planning part of points.c include it.
 *
 * Planning does not measure: it reads the ceilings through this room's
 * const pointer only, set once they exist (rl_plan_start), and its
 * functions see the context const, so rl_ceilings_get (which measures
 * when it has nothing yet, and takes a mutable context) is out of its
 * reach. A plan asked for before the ceilings exist is an internal error.
 */
#ifndef RL_CTX_PLAN_H
#define RL_CTX_PLAN_H

#include "rooflab.h"

typedef struct rl_ctx_plan {
    const rl_ceilings *ceilings; /* NULL until rl_plan_start */
    double s;                    /* the plan's expected seconds */
    double max_s;                /* ... if every point ran to its time limit */
    int groups, points;
} rl_ctx_plan;

/* The room of ctx (rooms.c); NULL for a context without a private part. */
rl_ctx_plan *rl_plan_room(const rl_ctx *ctx);

/* Hands the plan the ceilings already measured or read; dies on NULL. */
void rl_plan_start(rl_ctx_plan *plan, const rl_ceilings *ceilings);

/* The roofline's time of one call: the larger of its bytes over the roof
 * of its working set and its FLOPs over the compute roof. */
double rl_plan_call_s(const rl_ctx_plan *plan, rl_backend_kind kind, double bytes,
                      double footprint, rl_pattern pattern, double flops);

/* One group as the plan sees it: its first point (an index among every
 * point), its members (points and the probes it will carry), the model's
 * time of its slowest call and of one call of each member, summed, and
 * whether a verdict reads one of its points. */
typedef struct rl_plan_entry {
    int leader, members;
    double call_s, sum_s;
    bool needed;
} rl_plan_entry;

/* The groups of s, whose first point is point `first` of every point,
 * into out (s->n of them at most); returns how many. It reads ctx as a
 * const (the kind of device, the experiment's probes, the backend's loops)
 * and the roofs from the plan alone. */
int rl_points_plan(const rl_ctx *ctx, const rl_ctx_plan *plan, const rl_points *s, int first,
                   rl_plan_entry *out);
/* Counts one group of members at seconds_per_call each into the plan. */
void rl_plan_group(rl_ctx_plan *plan, const rl_ctx *ctx, int members, double seconds_per_call);
/* Says the plan (console, metadata, --plan-file, the budget's share) and
 * sets the progress line's total: one step per group. */
void rl_plan_print(rl_ctx *ctx);

#endif /* RL_CTX_PLAN_H */

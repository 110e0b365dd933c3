/*
 * rl_budget.h -- --budget SECONDS as one object (budget.c), read only
 * through these functions: made at rl_begin, told each planned group (its
 * leader: the index of its first point among every point) and the fixed
 * work the plan counts, asked before each group whether it runs (admit;
 * a refused group's points are skipped, their rows saying why) and told
 * when it is done, and the time parts' opens took (outside). One loop
 * drives those calls: run.c's, part by part and group by group. Every
 * function does nothing (admit: true) given NULL, a run without a budget.
 */
#ifndef RL_BUDGET_H
#define RL_BUDGET_H

#include "rooflab.h"

typedef struct rl_budget rl_budget;

/* What a group member costs beyond the plan's model before any group has
 * run (validation, warm-up): the budget's first guess, and a part of the
 * plan's longest time. */
extern const double RL_MEMBER_OVERHEAD_S;

/* The one door to a run's budget: NULL without --budget or --slot (or
 * for a context without a private part, a test's). */
rl_budget *rl_budget_of(const rl_ctx *ctx);

/* The run's --budget (or else its --slot) from started on, its stop
 * rules scaled down from the run's (ctx->rule as it is now); NULL
 * without either. */
rl_budget *rl_budget_new(const rl_ctx *ctx, double started);
void rl_budget_free(rl_budget *b);

void rl_budget_group(rl_budget *b, int leader, int members, double call_s, double sum_s,
                     bool needed);
void rl_budget_fixed(rl_budget *b, double seconds);
void rl_budget_outside(rl_budget *b, double seconds);
void rl_budget_fixed_done(rl_budget *b);
/* Of the fixed work, fixed_s (told with rl_plan_fixed) may shrink under a
 * budget to least_s and still serve every verdict (exp-01's holds: down
 * to the window its readings need). The plan's least time for the needed
 * points (rl_budget_needed_s) counts least_s. */
void rl_budget_fixed_least(rl_budget *b, double fixed_s, double least_s);
/* The least seconds in which this run can time every point a verdict
 * needs: its fixed work at its least, the needed groups under the floor's
 * stop rule, the reserve; 0 without a budget. For a script that splits a
 * budget among runs (make all BUDGET=, through --plan-file). */
double rl_budget_needed_s(const rl_budget *b);

/* What fits, on the console with the plan. */
void rl_budget_print(const rl_budget *b);
double rl_budget_seconds(const rl_budget *b); /* the budget given; 0 without one */
bool rl_budget_is_slot(const rl_budget *b);   /* the clock is a lab run's --slot */

/* Before the group led by point `leader`: false, skip it; true, run it
 * under *rule (set here to the scaled stop rule). group_done after it,
 * under the rule it ran with. */
bool rl_budget_admit(rl_budget *b, int leader, rl_stop_rule *rule);
void rl_budget_group_done(rl_budget *b, const rl_stop_rule *rule);
/* A point admit refused: not run, and its row says why. */
void rl_budget_skip(const rl_budget *b, rl_point *p);
/* The seconds the group led by this point is expected to take now (0
 * without a budget, or for a point it does not know). */
double rl_budget_expected_s(const rl_budget *b, int leader);
/* Seconds until the deadline less the reserve (INFINITY without a budget):
 * what a group's timing may still take. */
double rl_budget_left_s(const rl_budget *b);

/* At the end: what the budget gave, on the console; meta gets the same
 * as the CSV's budget_run line. took: the run's seconds so far. */
void rl_budget_report(const rl_budget *b, double took, char *meta, size_t len);

#endif /* RL_BUDGET_H */

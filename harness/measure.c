/*
 * measure.c -- warm-up, cold or hot samples, and the adaptive stop.
 *
 * Cold: before each call the backend evicts the last-level cache (an L2
 * flush on the GPU, a read of twice the LLC on the CPU); one call is one
 * sample. Hot: calls run back to back; a sample is a batch of calls long
 * enough that timer resolution and launch jitter vanish (at least 1 ms,
 * and a fifth of min_time / min_samples, so the minimum time comes with a
 * few dozen samples for the noise estimate; in a group, as long as the
 * group's longest sample, up to 0.1 s: even_out_samples), and the time per
 * call is the batch time over its count; in a group whose working sets
 * overflow the cache, a member's sample follows untimed calls that bring
 * its data back (warm_again).
 *
 * Works that will be compared are measured as a group, in rounds: one
 * sample of each per round. A shared machine drifts (clocks, neighbours,
 * temperature) over seconds; interleaving makes the drift fall on every
 * member alike, so the ratios between them stay trustworthy.
 */
#include "internal.h"
#include "rl_budget.h"

#include <math.h>
#include <stdlib.h>

enum { SAMPLE_CAP = 1 << 16 };
/* A member out of time still gets this many samples: one is no median
 * and has no quartiles (a slow CPU's prefill call takes seconds, and its
 * group ran out of time after one round). */
enum { MIN_SAMPLES_ON_TIMEOUT = 3 };
static const double MIN_HOT_SAMPLE_S = 1e-3;
/* A warm-up longer than this is not repeated to size the batches. */
static const double SLOW_CALL_S = 0.1;

/* A hot sample times calls that find their data where the call before
 * left it. In a group the call before was another member's, and when the
 * group's working sets together fill more than half the cache level that
 * holds this member's (where the ladder calls a working set mixed), it
 * finds its data evicted: the six formats of experiment 03's --matrix,
 * together more than an LLC that holds each alone, were read at DRAM speed.
 * Such a member's sample starts with untimed calls until one is no faster
 * than the one before (at most MAX_WARM_CALLS): one is not always enough,
 * because an LLC may keep a line only on its second use. Nor is the
 * whole level the bound: a cache-sized model in six formats, interleaved
 * with no probes, read F16 well under its roof. README.md,
 * "Interleaving", has the runs' figures. */
enum { MAX_WARM_CALLS = 4 };

/* together: the footprints of the whole group */
static bool evicted_between_samples(rl_ctx *ctx, double footprint, double together)
{
    if (!(footprint > 0))
        return false;
    const rl_ceilings *c = rl_ceilings_get(ctx);
    for (int l = 0; l < RL_DRAM; l++) /* the level that holds it alone */
        if (c->level_bytes[l] > 0 && footprint <= c->level_bytes[l])
            return together > c->level_bytes[l] / 2;
    return false;
}

static void warm_again(rl_backend *be, const rl_work *w)
{
    double before = INFINITY;
    for (int i = 0; i < MAX_WARM_CALLS; i++) {
        be->ops->timer_start();
        w->fn(w->arg);
        double t = be->ops->timer_stop();
        if (!(t < 0.97 * before))
            return;
        before = t;
    }
}

/* One timed sample of `calls` calls, in seconds per call; rewarm: the
 * member's data was evicted since its last sample. */
static double time_sample(rl_backend *be, const rl_work *w, int calls, rl_cache_state cache,
                          bool rewarm)
{
    const rl_backend_ops *ops = be->ops;
    if (cache == RL_COLD)
        ops->flush_cache();
    else if (rewarm)
        warm_again(be, w);
    ops->range_push(w->name);
    ops->timer_start();
    for (int i = 0; i < calls; i++)
        w->fn(w->arg);
    double t = ops->timer_stop() / calls;
    ops->range_pop();
    return t;
}

/* Calls per hot sample: enough to fill target seconds, at least one. */
static int calls_for(double seconds_per_call, double target)
{
    if (!(seconds_per_call > 0))
        return 1;
    double calls = ceil(target / seconds_per_call);
    return calls > 1e6 ? 1000000 : calls < 1 ? 1 : (int)calls;
}

/* Warm-up: module loading, first touch, clocks ramping, all outside the
 * measurement. A fast first call is repeated, because one-time costs
 * (lazy module loading on CUDA) would make it a poor guide to batch size. */
static int warm_up(rl_ctx *ctx, const rl_work *w, rl_cache_state cache, double *call_s)
{
    double once = *call_s = time_sample(ctx->be, w, 1, cache, false);
    if (cache == RL_COLD)
        return 1;
    if (once < SLOW_CALL_S && !rl_stop_requested()) /* SIGTERM: no time to size batches */
        once = *call_s = time_sample(ctx->be, w, 1, cache, false);
    double target = fmax(MIN_HOT_SAMPLE_S, ctx->rule.min_time_s / ctx->rule.min_samples / 5);
    return calls_for(once, target);
}

/* Hot samples of a group take each member about the same time: a fast
 * member's batch grows to the longest member's sample (up to
 * MAX_EVEN_SAMPLE_S). Otherwise a 6 ms GEMV beside a 75 ms scalar loop
 * gets one call a round, two dozen calls in all, each as noisy as the
 * neighbours make DRAM, and its median moves by more than the claims'
 * margins from run to run; with even shares it gets a dozen calls a
 * round, and the round's pairs (its sample and its probe's, group_roof.c)
 * compare the same stretch of time. */
static const double MAX_EVEN_SAMPLE_S = 0.1;

static void even_out_samples(rl_measurement *out, const double *call_s, int n)
{
    double longest = 0;
    for (int i = 0; i < n; i++)
        longest = fmax(longest, call_s[i] * out[i].calls_per_sample);
    longest = fmin(longest, MAX_EVEN_SAMPLE_S);
    for (int i = 0; i < n; i++) {
        double calls = call_s[i] > 0 ? floor(longest / call_s[i] + 0.5) : 1;
        if (calls > out[i].calls_per_sample)
            out[i].calls_per_sample = calls > 1e6 ? 1000000 : (int)calls;
    }
}

static void measure_group_as(rl_ctx *ctx, const rl_work *works, int n, rl_cache_state cache,
                             rl_measurement *out, rl_rounds *rounds)
{
    double t0 = rl_now_s();
    rl_sampler *s = calloc((size_t)n, sizeof *s);
    double *buf = malloc(sizeof(double) * SAMPLE_CAP * (size_t)n);
    double *call_s = malloc(sizeof(double) * (size_t)n);
    if (!s || !buf || !call_s)
        rl_die(RL_EXIT_FAILED, "out of memory for samples");
    for (int i = 0; i < n; i++) {
        out[i] = (rl_measurement){.cache = cache, .stop = RL_CONTINUE};
        out[i].calls_per_sample = warm_up(ctx, &works[i], cache, &call_s[i]);
        rl_sampler_init(&s[i], &ctx->rule, buf + (size_t)i * SAMPLE_CAP, SAMPLE_CAP);
    }
    if (cache == RL_HOT && n > 1)
        even_out_samples(out, call_s, n);
    free(call_s);
    bool *rewarm = calloc((size_t)n, sizeof *rewarm);
    if (!rewarm)
        rl_die(RL_EXIT_FAILED, "out of memory for samples");
    double together = 0;
    for (int i = 0; i < n; i++)
        together += works[i].footprint;
    for (int i = 0; i < n && cache == RL_HOT; i++)
        rewarm[i] = n > 1 && evicted_between_samples(ctx, works[i].footprint, together);

    /* The group's budget is the sum of its members' budgets, cut to what
     * --budget has left (a few samples are taken all the same). */
    double start = rl_now_s();
    double budget = fmin(ctx->rule.timeout_s * n, rl_budget_left_s(rl_budget_of(ctx)));
    for (bool all_done = false; !all_done;) {
        for (int i = 0; i < n; i++)
            rl_sampler_add(&s[i], time_sample(ctx->be, &works[i], out[i].calls_per_sample, cache, rewarm[i]));
        bool timed_out = rl_now_s() - start >= budget;
        /* SIGTERM: every member stops after this round, whatever its rule
         * wants (a cap's KILL comes 5 s after it); the caller decides what
         * a group cut short is worth. */
        bool stopping = rl_stop_requested() != 0;
        all_done = true;
        for (int i = 0; i < n; i++) {
            if (out[i].stop == RL_CONTINUE) /* members keep sampling with the group */
                out[i].stop = rl_sampler_done(&s[i], 0.0);
            if (out[i].stop == RL_CONTINUE && timed_out && s[i].n >= MIN_SAMPLES_ON_TIMEOUT)
                out[i].stop = RL_STOP_TIMEOUT;
            if (out[i].stop == RL_CONTINUE && stopping)
                out[i].stop = RL_STOP_SIGNAL;
            all_done &= out[i].stop != RL_CONTINUE;
        }
    }

    double wall = rl_now_s() - t0;
    for (int i = 0; i < n; i++) {
        out[i].stats = rl_stats_of(s[i].samples, s[i].n < SAMPLE_CAP ? s[i].n : SAMPLE_CAP);
        out[i].wall_s = wall;
    }
    if (rounds)
        *rounds = (rl_rounds){buf, s[0].n < SAMPLE_CAP ? s[0].n : SAMPLE_CAP, SAMPLE_CAP};
    else
        free(buf);
    free(s);
    free(rewarm);
}

void rl_measure_group(rl_ctx *ctx, const rl_work *works, int n, rl_measurement *out,
                      rl_rounds *rounds)
{
    measure_group_as(ctx, works, n, ctx->args.cache, out, rounds);
}

void rl_rounds_free(rl_rounds *r)
{
    free(r->t);
    *r = (rl_rounds){0};
}

/* One work alone, in the given cache state: a group of one. */
static rl_measurement rl_measure_as(rl_ctx *ctx, const char *name, void (*work)(void *), void *arg,
                                    rl_cache_state cache)
{
    rl_work w = {name, work, arg, 0}; /* alone: nothing evicts it */
    rl_measurement m;
    measure_group_as(ctx, &w, 1, cache, &m, NULL);
    return m;
}

double rl_issue_s(rl_ctx *ctx, void (*work)(void *), void *arg)
{
    double t[32];
    int reps = ctx->args.mode == RL_MODE_QUICK ? 8 : 32;
    for (int i = 0; i < reps; i++) {
        double t0 = rl_now_s();
        work(arg);
        t[i] = rl_now_s() - t0;
        rl_sync(ctx->be);
    }
    return rl_stats_of(t, reps).median;
}

/* A trial of a ceiling: short, because a ceiling is the best of several
 * trials rather than the median of one long measurement. */
static const rl_stop_rule TRIAL_RULE = {.min_samples = 3, .min_time_s = 0.02, .max_noise = 0.02, .timeout_s = 0.5};
static const rl_stop_rule TRIAL_RULE_FULL = {.min_samples = 5, .min_time_s = 0.05, .max_noise = 0.01, .timeout_s = 1.0};
/* Under --budget: a trial stops at its minimum (the best of the trials
 * is the ceiling; a trial's own noise matters less than the run's clock). */
static const rl_stop_rule TRIAL_RULE_BUDGET = {.min_samples = 3, .min_time_s = 0.01, .max_noise = 0.05, .timeout_s = 0.1};

rl_band rl_measure_trials(rl_ctx *ctx, const char *name, void (*fn)(void *), void *arg,
                          double units_per_call, int trials)
{
    rl_stop_rule saved = ctx->rule;
    ctx->rule = ctx->args.mode == RL_MODE_FULL ? TRIAL_RULE_FULL
                : rl_budget_given(ctx)         ? TRIAL_RULE_BUDGET
                                               : TRIAL_RULE;
    if (ctx->args.timeout_s > 0) { /* --timeout holds for every sampling */
        ctx->rule.timeout_s = fmin(ctx->rule.timeout_s, ctx->args.timeout_s);
        ctx->rule.min_time_s = fmin(ctx->rule.min_time_s, ctx->rule.timeout_s);
    }
    rl_band b = {.best = -INFINITY, .worst = INFINITY, .probe_bytes = NAN};
    for (int t = 0; t < trials; t++) {
        if (t > 0 && rl_stop_requested()) /* SIGTERM: one trial is all a band gets now */
            break;
        rl_measurement m = rl_measure_as(ctx, name, fn, arg, RL_HOT);
        double rate = units_per_call / m.stats.median;
        b.best = fmax(b.best, rate);
        b.worst = fmin(b.worst, rate);
    }
    ctx->rule = saved;
    return b;
}

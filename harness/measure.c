/*
 * measure.c -- warm-up, cold or hot samples, and the adaptive stop.
 *
 * Cold: before each call the backend evicts the last-level cache (an L2
 * flush on the GPU, a read of twice the LLC on the CPU); one call is one
 * sample. Hot: calls run back to back; a sample is a batch of calls long
 * enough (HOT_SAMPLE_S) that timer resolution and launch jitter vanish,
 * and the time per call is the batch time over its count.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

enum { SAMPLE_CAP = 1 << 16 };
static const double HOT_SAMPLE_S = 1e-3;

/* One timed sample of `calls` calls, in seconds per call. */
static double time_sample(rl_backend *be, void (*work)(void *), void *arg, int calls,
                          rl_cache_state cache)
{
    const rl_backend_ops *ops = be->ops;
    if (cache == RL_COLD)
        ops->flush_cache();
    ops->timer_start();
    for (int i = 0; i < calls; i++)
        work(arg);
    return ops->timer_stop() / calls;
}

/* Calls per hot sample: enough to fill HOT_SAMPLE_S, at least one. */
static int calls_for(double seconds_per_call)
{
    if (!(seconds_per_call > 0))
        return 1;
    double calls = ceil(HOT_SAMPLE_S / seconds_per_call);
    return calls > 100000 ? 100000 : (int)calls;
}

rl_measurement rl_measure_as(rl_ctx *ctx, const char *name, void (*work)(void *), void *arg,
                             rl_cache_state cache)
{
    rl_backend *be = ctx->be;
    rl_measurement m = {.cache = cache, .calls_per_sample = 1};
    double t0 = rl_now_s();
    be->ops->range_push(name);

    /* Warm-up: module loading, first touch, clocks ramping, all outside
     * the measurement. Its time also sizes hot batches (an overestimate
     * only makes a batch shorter). */
    double once = time_sample(be, work, arg, 1, cache);
    if (cache == RL_HOT)
        m.calls_per_sample = calls_for(once);

    double *buf = malloc(sizeof(double) * SAMPLE_CAP);
    if (!buf)
        rl_die(RL_EXIT_FAILED, "out of memory for samples");
    rl_sampler s;
    rl_sampler_init(&s, &ctx->rule, buf, SAMPLE_CAP);
    double start = rl_now_s();
    do {
        rl_sampler_add(&s, time_sample(be, work, arg, m.calls_per_sample, cache));
        m.stop = rl_sampler_done(&s, rl_now_s() - start);
    } while (m.stop == RL_CONTINUE);

    m.stats = rl_stats_of(buf, s.n < SAMPLE_CAP ? s.n : SAMPLE_CAP);
    free(buf);
    be->ops->range_pop();
    m.wall_s = rl_now_s() - t0;
    return m;
}

rl_measurement rl_measure(rl_ctx *ctx, const char *name, void (*work)(void *), void *arg)
{
    return rl_measure_as(ctx, name, work, arg, ctx->args.cache);
}

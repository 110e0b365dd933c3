/*
 * group_roof.c -- roofs measured beside the points they judge.
 *
 * A roof measured at the start of a run judges points timed minutes later,
 * and a shared machine's bandwidth moves by 2x within that time (two
 * reference runs of experiment 02, 25 minutes apart, read DRAM at 57 and
 * at 110 GB/s). So a group of points that an experiment compares against
 * a roof carries its own probes (rl_experiment.probes): they join the
 * group's works and are timed with them, sample by sample in the same
 * cache mode (measure.c), and each point's MBU and MFU are the medians of
 * its rate over the probe's, round by round (rl_paired_ratio). The probes'
 * medians and quartiles are the group's roof in the CSV (group_roof_*),
 * and the run-start ladder stays beside them
 * (ceiling_gbps, the header's roof_* lines).
 *
 * A bandwidth probe reads the largest working set of the group's points
 * that live in one level: a roof at the points' own footprint, whatever
 * the caches really hold. A point that also writes gets a probe of its
 * own pattern instead (copy, triad): its MBU is over that probe, and a
 * read probe beside it would be timed in every round for no point.
 * Working sets beyond PROBE_CAP_BYTES are probed at that size: far beyond
 * every last-level cache known, where the rate no longer depends on the
 * size, and a second copy of a multi-gigabyte working set would only cost
 * memory.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PROBE_CAP_BYTES = 1024.0 * 1048576;

/* A point with bytes to move and a working set: judged against bandwidth. */
static bool moves_bytes(const rl_point *p) { return p->bytes > 0 && p->footprint > 0; }

/* A point that may be compute-bound: its intensity at least a quarter of
 * the ridge of the run-start roofs (below, the compute roof cannot bound
 * it, and its MFU needs no roof of the same minute). */
static bool may_be_compute_bound(const rl_ceilings *c, const rl_point *p)
{
    double ridge = rl_ceilings_ridge(c);
    return p->flops > 0 && p->bytes > 0 && rl_arith_intensity(p->flops, p->bytes) >= ridge / 4;
}

/* The probe a point needs: its level's class (the level its working set
 * lives in, mixed or not) and its pattern (a read's first loop); -1 when
 * none is made yet. */
static int probe_for(const rl_group_probes *gp, int cls, rl_pattern pattern)
{
    for (int i = 0; i < gp->n; i++)
        if (gp->spec[i].cls == cls && gp->spec[i].pattern == pattern && !gp->spec[i].wide)
            return i;
    return -1;
}

/* Of the probes of its class and pattern (a read has two loops), the one
 * of the highest median rate: a roof is the best reader there is. */
static int roof_of(const rl_group_probes *gp, const rl_measurement *m, int cls, rl_pattern pattern)
{
    int best = -1;
    for (int i = 0; i < gp->n; i++)
        if (i != gp->compute_at && gp->spec[i].cls == cls && gp->spec[i].pattern == pattern &&
            (best < 0 || gp->probe[i].per_call / m[i].stats.median >
                             gp->probe[best].per_call / m[best].stats.median))
            best = i;
    return best;
}

static int class_of(const rl_ctx *ctx, const rl_ceilings *c, const rl_point *p)
{
    rl_roof r = rl_roof_on(c, ctx->kind, fmin(p->footprint, PROBE_CAP_BYTES), p->pattern);
    return 2 * (int)r.level + r.mixed;
}

/* One bandwidth probe per level the group's points live in and pattern
 * they use, over the largest working set of those points: a probe over
 * the F16 weights would judge q4 weights that fit the cache against DRAM. */
static void plan_bandwidth(const rl_ctx *ctx, const rl_ceilings *c, rl_point *const *members,
                           int n, rl_group_probes *gp)
{
    for (int i = 0; i < n; i++) {
        if (!moves_bytes(members[i]))
            continue;
        int cls = class_of(ctx, c, members[i]);
        rl_pattern pattern = members[i]->pattern;
        int at = probe_for(gp, cls, pattern);
        if (at < 0 && gp->n < RL_GROUP_PROBES - 1) {
            at = gp->n++;
            gp->spec[at] = (rl_probe_spec){.cls = cls, .pattern = pattern};
        }
        if (at >= 0)
            gp->spec[at].bytes =
                fmax(gp->spec[at].bytes, fmin(members[i]->footprint, PROBE_CAP_BYTES));
    }
    for (int i = 0, reads = gp->n; i < reads; i++) /* each read's second loop */
        if (gp->spec[i].pattern == RL_READ && gp->n < RL_GROUP_PROBES - 1) {
            gp->spec[gp->n] = gp->spec[i];
            gp->spec[gp->n++].wide = true;
        }
}

/* The probes the backend makes, in order; the specs it has no loop for
 * (a second read loop on the GPU) are dropped. */
static void make_bandwidth_probes(rl_ctx *ctx, rl_group_probes *gp)
{
    bool cold = ctx->args.cache == RL_COLD;
    int kept = 0;
    for (int i = 0; i < gp->n; i++) {
        rl_probe_spec s = gp->spec[i];
        if (ctx->be->ops->bandwidth_probe(ctx, s.pattern, s.bytes, cold, s.wide, &gp->probe[kept]))
            gp->spec[kept++] = s;
        else if (!s.wide)
            rl_die(RL_EXIT_FAILED, "internal error: the backend made no bandwidth probe");
    }
    gp->n = kept;
}

/* Whether the group carries a compute probe. */
static bool wants_compute(const rl_ctx *ctx, const rl_ceilings *c, rl_point *const *members,
                          int n)
{
    for (int i = 0; i < n && (ctx->exp->probes & RL_PROBE_COMPUTE); i++)
        if (may_be_compute_bound(c, members[i]))
            return true;
    return false;
}

int rl_group_probes_count(const rl_ctx *ctx, const rl_ceilings *c, rl_point *const *members,
                          int n)
{
    if (ctx->args.start_roofs)
        return 0;
    rl_group_probes gp = {.compute_at = -1};
    if ((ctx->exp->probes & RL_PROBE_BANDWIDTH) && ctx->be->ops->bandwidth_probe)
        plan_bandwidth(ctx, c, members, n, &gp);
    bool compute = wants_compute(ctx, c, members, n);
    int wide = 0; /* a backend with one read loop drops these */
    for (int i = 0; i < gp.n && ctx->kind == RL_CUDA; i++)
        wide += gp.spec[i].wide;
    return gp.n - wide + (compute && ctx->be->ops->compute_probe);
}

int rl_group_probes_open(rl_ctx *ctx, rl_point *const *members, int n, rl_group_probes *gp,
                         rl_work *works)
{
    *gp = (rl_group_probes){.compute_at = -1};
    if (ctx->args.start_roofs)
        return 0;
    const rl_backend_ops *ops = ctx->be->ops;
    /* An experiment without probes reads no roof here: a test's group
     * may be timed with no ceilings at all. */
    const rl_ceilings *c = ctx->exp->probes ? rl_ceilings_get(ctx) : NULL;
    if ((ctx->exp->probes & RL_PROBE_BANDWIDTH) && ops->bandwidth_probe)
        plan_bandwidth(ctx, c, members, n, gp);
    make_bandwidth_probes(ctx, gp);
    bool compute = wants_compute(ctx, c, members, n);
    if (compute && ops->compute_probe && ops->compute_probe(ctx, &gp->probe[gp->n]))
        gp->compute_at = gp->n++;
    for (int i = 0; i < gp->n; i++)
        works[i] = (rl_work){gp->probe[i].name, gp->probe[i].run, gp->probe[i].state,
                             i == gp->compute_at ? 0 : gp->spec[i].bytes};
    return gp->n;
}

/* A probe's rate at its median time, and at its q3 and q1 times. */
static void rates_of(const rl_probe *probe, const rl_measurement *m, double unit, double *median,
                     double *lo, double *hi)
{
    *median = probe->per_call / m->stats.median / unit;
    *lo = probe->per_call / m->stats.q3 / unit;
    *hi = probe->per_call / m->stats.q1 / unit;
}

/* The point's rate over its probe's in each round, and the median of
 * those ratios. The two samples of a round are taken within one round's
 * time of each other, so a neighbour's load that comes and goes between
 * rounds falls on both and cancels; the ratio of the two medians would
 * set the point's quiet minutes against the probe's busy ones. */
rl_ratio rl_paired_ratio(const rl_rounds *r, int point, double point_units, int probe,
                         double probe_units)
{
    if (!r || !r->t || r->rounds < 1 || !(point_units > 0))
        return RL_RATIO_NONE;
    const double *tp = r->t + (size_t)point * r->stride, *tq = r->t + (size_t)probe * r->stride;
    rl_ratio q = rl_round_ratio(tq, tp, r->rounds);
    return rl_ratio_scaled(q, point_units / probe_units);
}

void rl_group_probes_close(rl_ctx *ctx, rl_group_probes *gp, const rl_measurement *m,
                           const rl_rounds *rounds, rl_point *const *members, int n)
{
    const rl_measurement *pm = m + n; /* the probes' measurements */
    for (int i = 0; i < n; i++) {
        const rl_point *p = members[i];
        rl_group_roof *r = &members[i]->roof;
        int at = moves_bytes(p) ? roof_of(gp, pm, class_of(ctx, rl_ceilings_get(ctx), p), p->pattern) : -1;
        if (at >= 0) {
            rates_of(&gp->probe[at], &pm[at], 1e9, &r->gbps, &r->gbps_q1, &r->gbps_q3);
            r->probe_bytes = gp->spec[at].bytes;
            rl_ratio u = rl_paired_ratio(rounds, i, p->bytes, n + at, gp->probe[at].per_call);
            r->mbu = u.median, r->mbu_q1 = u.lo, r->mbu_q3 = u.hi;
        }
        if (gp->compute_at >= 0) {
            int c = gp->compute_at;
            rates_of(&gp->probe[c], &pm[c], 1e12, &r->tflops, &r->tflops_q1, &r->tflops_q3);
            rl_ratio u = rl_paired_ratio(rounds, i, p->flops, n + c, gp->probe[c].per_call);
            r->mfu = u.median, r->mfu_q1 = u.lo, r->mfu_q3 = u.hi;
        }
    }
    for (int i = 0; i < gp->n; i++)
        ctx->be->ops->probe_release(ctx, &gp->probe[i]);
    gp->n = 0;
}

rl_group_roof rl_group_roof_none(void)
{
    return (rl_group_roof){.gbps = NAN, .gbps_q1 = NAN, .gbps_q3 = NAN, .probe_bytes = NAN,
                           .tflops = NAN, .tflops_q1 = NAN, .tflops_q3 = NAN, .mbu = NAN,
                           .mfu = NAN, .mbu_q1 = NAN, .mbu_q3 = NAN, .mfu_q1 = NAN,
                           .mfu_q3 = NAN};
}

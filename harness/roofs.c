/*
 * roofs.c -- which roof a point is judged against, and what happens when a
 * point beats its roof.
 *
 * A memory-bound point is judged against the bandwidth of the level its
 * working set lives in, for its own access pattern (ceilings.c measures
 * them all): where its footprint falls on the knees of the measured
 * bandwidth curve (curve.c), or on the reported sizes where the ceilings
 * have no curve. A working set between half a level and its spill (a
 * mixed roof, "L2-DRAM") has no rung of its own on the ladder: the group
 * probes measure it at its footprint (group_roof.c); without them it is
 * judged against the next level's rung, what the spill runs at, since a
 * stream longer than a cache finds little of itself there (README.md,
 * "How it measures", has a reference run's GEMV that did so). Only a
 * point that beats that
 * rung shows part of its working set hitting in the level: then the
 * level's own rung, the one roof it cannot beat, judges it. A utilization
 * above 1.05 is impossible for a true ceiling: it
 * means the ceiling was under-measured (another process took the cores
 * during its trials, or the suite's kernel beats the benchmark). The rung
 * is measured once more and the better value kept; if the point still beats
 * it, the run records that in its CSV header and rows (ceiling_flag) and
 * the verdicts that rest on the ceiling say so instead of judging.
 */
#include "internal.h"
#include "rl_ctx_ceilings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double OVER = 1.05; /* above this, a roof was beaten */

/* Pure: within half the capacity, as the ladder measured the level.
 * Mixed: beyond that but short of the spill, part of it still hits there. */
rl_level rl_level_on(const double cap[RL_LEVEL_COUNT], const double spill[RL_LEVEL_COUNT],
                     double footprint, bool *mixed)
{
    *mixed = false;
    for (int l = 0; l < RL_DRAM; l++)
        if (cap[l] > 0 && footprint < spill[l]) {
            *mixed = footprint > cap[l] / 2;
            return (rl_level)l;
        }
    return RL_DRAM;
}

/* A reported size spills at 4x: a cache is not strict LRU, and the report
 * may be smaller than what the machine gives. */
rl_level rl_level_for(const double cap[RL_LEVEL_COUNT], double footprint, bool *mixed)
{
    double spill[RL_LEVEL_COUNT];
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        spill[l] = 4 * cap[l];
    return rl_level_on(cap, spill, footprint, mixed);
}

/* The next measured level out from l (DRAM at the latest). */
static rl_level next_level(const double cap[RL_LEVEL_COUNT], rl_level l)
{
    int next = l + 1;
    while (next < RL_DRAM && !(cap[next] > 0))
        next++;
    return (rl_level)next;
}

double rl_ceilings_ridge(const rl_ceilings *c)
{
    return rl_ridge_point(c->matrix_tflops * 1e12, c->bw[RL_DRAM][RL_READ].best * 1e9);
}

double rl_ridge(rl_ctx *ctx) { return rl_ceilings_ridge(rl_ceilings_get(ctx)); }

rl_roof rl_roof_for(rl_ctx *ctx, double footprint, rl_pattern pattern)
{
    return rl_roof_on(rl_ceilings_get(ctx), ctx->kind, footprint, pattern);
}

rl_roof rl_roof_on(const rl_ceilings *c, rl_backend_kind kind, double footprint,
                   rl_pattern pattern)
{
    double cap[RL_LEVEL_COUNT]; /* the levels with a measured rung for this pattern */
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        cap[l] = isnan(c->bw[l][pattern].best) ? 0 : c->level_bytes[l];
    rl_roof r = {.pattern = pattern};
    r.level = r.judged = rl_level_on(cap, c->level_spill, footprint, &r.mixed);
    r.gbps = r.cached_gbps = c->bw[r.level][pattern].best;
    const char *name = rl_level_name(kind, r.level);
    if (r.mixed) {
        r.judged = next_level(cap, r.level);
        r.gbps = c->bw[r.judged][pattern].best;
        snprintf(r.name, sizeof r.name, "%s-%s", name, rl_level_name(kind, r.judged));
    } else {
        snprintf(r.name, sizeof r.name, "%s", name);
    }
    return r;
}

rl_level rl_roof_rung(const rl_roof *roof, double gbps)
{
    return roof->mixed && gbps > OVER * roof->gbps ? roof->level : roof->judged;
}

double rl_roof_rung_gbps(const rl_roof *roof, double gbps)
{
    return rl_roof_rung(roof, gbps) == roof->judged ? roof->gbps : roof->cached_gbps;
}

/* The last-level cache as the run uses it: the bandwidth curve's, once the
 * ceilings are in (a machine that reports a 480 MiB L3 may read 240 MiB at
 * DRAM speed), else the size the machine reports. */
static double llc_in_use(const rl_ctx *ctx)
{
    const rl_ctx_ceilings *room = rl_ceilings_room(ctx);
    double measured = room && room->have ? room->ceilings.level_bytes[RL_LLC] : 0;
    return measured > 0 ? measured : ctx->dev->llc_bytes;
}

bool rl_beyond_cache(const rl_ctx *ctx, double footprint)
{
    return footprint >= 4 * llc_in_use(ctx);
}

int rl_copies_beyond_cache(const rl_ctx *ctx, double buffer_bytes)
{
    int copies = (int)fmin(ceil(4 * llc_in_use(ctx) / buffer_bytes),
                           floor(rl_max_bytes(ctx) / buffer_bytes));
    return copies < 1 ? 1 : copies;
}

/* Records a roof that a point still beats after one more measurement. */
static void record_suspect(rl_ctx *ctx, const char *what, double ceiling, double achieved,
                           const char *unit)
{
    rl_ctx_ceilings *p = rl_ceilings_room(ctx);
    if (p->suspect)
        return; /* the first one tells the story */
    p->suspect = true;
    snprintf(p->suspect_note, sizeof p->suspect_note,
             "ceiling under-measured (busy machine?): %s measured %.3g %s, a point "
             "reached %.3g (or the caches are not the sizes the machine reports)",
             what, ceiling, unit, achieved);
    rl_meta(ctx, "ceiling_under_measured", "%s; rows above 1.05 say so in ceiling_flag",
            p->suspect_note);
    printf("warning     %s\n", p->suspect_note);
    fflush(stdout);
}

/* Against the rung the point's rate picks on its roof (rl_roof_rung):
 * re-measured, and then recorded as suspect, only where the point beats
 * the one rung it cannot beat. */
double rl_mbu(rl_ctx *ctx, double gbps, const rl_roof *roof)
{
    rl_ctx_ceilings *p = rl_ceilings_room(ctx);
    rl_level level = rl_roof_rung(roof, gbps);
    rl_band *rung = &p->ceilings.bw[level][roof->pattern];
    double u = gbps / rung->best;
    if (!(u > OVER))
        return u;
    if (!p->fixed && !p->remeasured_bw[level][roof->pattern]) {
        p->remeasured_bw[level][roof->pattern] = true;
        rl_band again = rl_ceilings_remeasure_rung(ctx, level, roof->pattern);
        if (again.best > rung->best) {
            rung->best = again.best;
            rl_ceilings_save(ctx);
        }
        rl_meta(ctx, "ceiling_remeasured", "%s %s: %.4g GB/s after a point reached %.4g",
                rl_level_name(ctx->kind, level), rl_pattern_name(roof->pattern), rung->best, gbps);
        /* The same as data: which rung, and the roof it now has (the rows
         * after this one are judged against it; the paper names it so). */
        char key[64];
        snprintf(key, sizeof key, "remeasured_%s_%s_gbps", rl_level_name(ctx->kind, level),
                 rl_pattern_name(roof->pattern));
        rl_meta(ctx, key, "%.6g", rung->best);
        u = gbps / rung->best;
    }
    if (u > OVER) {
        char what[48];
        snprintf(what, sizeof what, "%s %s bandwidth", rl_level_name(ctx->kind, level),
                 rl_pattern_name(roof->pattern));
        record_suspect(ctx, what, rung->best, gbps, "GB/s");
    }
    return u;
}

double rl_utilization_of_probe(rl_ctx *ctx, double achieved, double probe, double probe_hi,
                               const char *what, const char *unit)
{
    double u = achieved / probe;
    if (achieved > OVER * fmax(probe, probe_hi)) { /* beyond the probe's own spread */
        char name[64];
        snprintf(name, sizeof name, "the group's %s probe", what);
        record_suspect(ctx, name, probe, achieved, unit);
    }
    return u;
}

double rl_mfu(rl_ctx *ctx, double tflops)
{
    rl_ctx_ceilings *p = rl_ceilings_room(ctx);
    rl_ceilings *c = &p->ceilings;
    double u = tflops / c->matrix_tflops;
    if (!(u > OVER))
        return u;
    if (!p->fixed && !p->remeasured_compute) {
        p->remeasured_compute = true;
        rl_ceilings again = *c;
        rl_ceilings_remeasure_compute(ctx, &again);
        if (again.matrix_tflops > c->matrix_tflops) {
            c->matrix_tflops = again.matrix_tflops;
            c->gemm_tflops = fmax(c->gemm_tflops, again.gemm_tflops);
            c->fma_tflops = fmax(c->fma_tflops, again.fma_tflops);
            snprintf(c->matrix_source, sizeof c->matrix_source, "%s", again.matrix_source);
            rl_ceilings_save(ctx);
        }
        rl_meta(ctx, "ceiling_remeasured", "compute: %.4g TFLOP/s after a point reached %.4g",
                c->matrix_tflops, tflops);
        rl_meta(ctx, "remeasured_compute_tflops", "%.6g", c->matrix_tflops);
        u = tflops / c->matrix_tflops;
    }
    if (u > OVER)
        record_suspect(ctx, "the compute roof", c->matrix_tflops, tflops, "TFLOP/s");
    return u;
}

const char *rl_ceiling_suspect_note(const rl_ctx *ctx)
{
    const rl_ctx_ceilings *p = rl_ceilings_room(ctx);
    return p->suspect ? p->suspect_note : NULL;
}

void rl_set_roof(rl_ctx *ctx, const rl_roof *roof, double gbps)
{
    rl_set_str(ctx, "mem_level", roof->name);
    rl_set_num(ctx, "ceiling_gbps", rl_ceilings_room(ctx)->ceilings.bw[rl_roof_rung(roof, gbps)][roof->pattern].best);
}

void rl_point_roof_text(rl_ctx *ctx, const rl_point *p, char *buf, size_t len)
{
    if (isfinite(p->roof.gbps)) { /* no ladder needed: a test's points may have none */
        snprintf(buf, len, "the group's %s probe", rl_pattern_name(p->pattern));
        if (p->roof.probe_bytes > 0) {
            char size[32];
            rl_format_bytes(p->roof.probe_bytes, size, sizeof size);
            rl_appendf(buf, len, " (%s)", size);
        }
        return;
    }
    rl_roof roof = rl_point_roof(ctx, p);
    rl_level rung = rl_roof_rung(&roof, rl_point_gbps(p));
    snprintf(buf, len, "the run-start ladder's %s %s rung", rl_level_name(ctx->kind, rung),
             rl_pattern_name(roof.pattern));
    if (roof.mixed)
        rl_appendf(buf, len, rung == roof.judged ? " (the working set spills from the %s)"
                   : " (it beat the spill's rung: part of it hit in the %s)",
                   rl_level_name(ctx->kind, roof.level));
}

/* Called by rl_end_row: a row whose MBU or MFU beats 1.05 says so. */
void rl_flag_row(rl_ctx *ctx, rl_csv *csv)
{
    if (!rl_csv_has_column(csv, "ceiling_flag"))
        return;
    static const char *const utilizations[] = {"mbu", "mfu"};
    for (int i = 0; i < 2; i++)
        if (rl_csv_has_column(csv, utilizations[i]) &&
            atof(rl_csv_get(csv, utilizations[i])) > OVER) {
            rl_csv_set_str(csv, "ceiling_flag", "under-measured");
            return;
        }
    (void)ctx;
}

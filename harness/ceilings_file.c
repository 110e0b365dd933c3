/*
 * ceilings_file.c -- the measured roofs' cache, results/<label>/ceilings.csv
 * (ceilings.c decides when it is read and written).
 *
 * One row per rung of the ladder, one per compute roof and one per point
 * of the read-bandwidth curve, with the curve's levels and the device in
 * the '# key: value' header. On reading, the levels are found on the
 * curve again (curve.c): a file without a curve (a fixture, or one
 * written before curves) gives the reported sizes.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double REUSE_LAB_S = 1800; /* a lab run reuses roofs this recent */

static const char *const CACHE_COLUMNS[] = {"roof", "level", "pattern", "probe_bytes", "best",
                                            "worst", "unit", NULL};

void rl_ceilings_path(const rl_ctx *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s/ceilings.csv", ctx->args.out_dir, ctx->label);
}

/* What a cached roof or tuned shape was measured on. A CPU's family and
 * model are part of it: a VM names Zen 3, 4 and 5 all "AMD EPYC", and a
 * results folder carried from one to another must not lend it their
 * roofs or shapes. No commas: tuning.csv keeps it in a column. */
void rl_cpu_identity(const rl_device_info *d, char *buf, size_t len)
{
    if (rl_cpu_model_known(d))
        snprintf(buf, len, "cpu | %s | family %d model %d | %d threads", d->name, d->cpu_family,
                 d->cpu_model, d->threads);
    else
        snprintf(buf, len, "cpu | %s | %d threads", d->name, d->threads);
}

void rl_device_identity(const rl_ctx *ctx, char *buf, size_t len)
{
    if (ctx->kind == RL_CUDA)
        snprintf(buf, len, "cuda | %s | %d SMs", ctx->dev->name, ctx->dev->sm_count);
    else
        rl_cpu_identity(ctx->dev, buf, len);
}

static void save_row(rl_csv *f, const char *roof, const char *level, const char *pattern,
                     double probe, double best, double worst, const char *unit)
{
    rl_csv_set_str(f, "roof", roof);
    rl_csv_set_str(f, "level", level);
    rl_csv_set_str(f, "pattern", pattern);
    rl_csv_set_num(f, "probe_bytes", probe);
    rl_csv_set_num(f, "best", best);
    rl_csv_set_num(f, "worst", worst);
    rl_csv_set_str(f, "unit", unit);
    rl_csv_end_row(f);
}

/* The curve's rows (roof "curve"), each with the level its footprint
 * falls on: one file with the rungs, since the rungs were probed where the
 * curve put the levels, and a file that kept one without the other would
 * judge points on sizes its rungs were not measured at. */
static void save_curve(const rl_ctx *ctx, rl_csv *f, const rl_ceilings *c)
{
    rl_meta_line lines[RL_CURVE_META_MAX];
    int n = rl_curve_meta(c, ctx->kind, lines, RL_CURVE_META_MAX);
    for (int i = 0; i < n; i++)
        rl_csv_meta(f, lines[i].key, "%s", lines[i].value);
    if (c->curve_busy) /* its levels stay the reported sizes when read back */
        rl_csv_meta(f, "curve_host_busy", "yes");
    for (int i = 0; i < c->curve_n; i++) {
        bool mixed;
        rl_level l = rl_level_on(c->level_bytes, c->level_spill, c->curve[i].probe_bytes, &mixed);
        save_row(f, "curve", rl_level_name(ctx->kind, l), "read", c->curve[i].probe_bytes,
                 c->curve[i].best, c->curve[i].worst, "GB/s");
    }
}

void rl_ceilings_write(const rl_ctx *ctx, const char *path, const rl_ceilings *c)
{
    char id[320], date[64];
    rl_device_identity(ctx, id, sizeof id);
    rl_utc_now(date, sizeof date);
    rl_csv *f = rl_csv_open(path, CACHE_COLUMNS);
    rl_csv_meta(f, "about", "rooflab's measured ceilings for this label; delete to measure again");
    rl_csv_meta(f, "identity", "%s", id);
    /* what a chart of this file (make mountain) is titled with */
    rl_csv_meta(f, "device", "%s", ctx->dev->name);
    rl_csv_meta(f, "backend", "%s", rl_backend_name(ctx->kind));
    rl_csv_meta(f, "label", "%s", ctx->label);
    rl_csv_meta(f, "quick", "%s", ctx->args.quick ? "yes" : "no");
    rl_csv_meta(f, "mode", "%s", rl_mode_name(ctx->args.mode));
    rl_csv_meta(f, "copy_gbps", "%.6g", c->copy_gbps);
    rl_csv_meta(f, "matrix_tflops", "%.6g", c->matrix_tflops);
    rl_csv_meta(f, "matrix_source", "%s", c->matrix_source);
    rl_csv_meta(f, "how", "%s", c->how);
    rl_csv_meta(f, "trials", "%d", c->trials);
    rl_csv_meta(f, "date_utc", "%s", date);
    rl_csv_meta(f, "epoch_s", "%lld", (long long)time(NULL));
    for (int l = 0; l < RL_LEVEL_COUNT; l++) {
        char key[32];
        snprintf(key, sizeof key, "capacity_%d", l);
        rl_csv_meta(f, key, "%.0f", c->level_reported[l]);
        for (int p = 0; p < RL_PATTERN_COUNT; p++)
            if (!isnan(c->bw[l][p].best))
                save_row(f, "bandwidth", rl_level_name(ctx->kind, (rl_level)l),
                         rl_pattern_name((rl_pattern)p), c->bw[l][p].probe_bytes, c->bw[l][p].best,
                         c->bw[l][p].worst, "GB/s");
    }
    save_row(f, "compute", "-", "gemm", NAN, c->gemm_tflops, NAN, "TFLOP/s");
    save_row(f, "compute", "-", "fma", NAN, c->fma_tflops, NAN, "TFLOP/s");
    save_curve(ctx, f, c);
    rl_csv_commit(f);
}

static int level_by_name(rl_backend_kind kind, const char *s)
{
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        if (!strcmp(s, rl_level_name(kind, (rl_level)l)))
            return l;
    return -1;
}

static int pattern_by_name(const char *s)
{
    for (int p = 0; p < RL_PATTERN_COUNT; p++)
        if (!strcmp(s, rl_pattern_name((rl_pattern)p)))
            return p;
    return -1;
}

static void load_rows(const rl_ctx *ctx, const rl_table *t, rl_ceilings *c)
{
    for (int r = 0; r < t->nrows; r++) {
        const char *roof = rl_table_get(t, r, "roof"), *pat = rl_table_get(t, r, "pattern");
        double best = atof(rl_table_get(t, r, "best"));
        const char *worst = rl_table_get(t, r, "worst");
        double probe = atof(rl_table_get(t, r, "probe_bytes"));
        if (!strcmp(roof, "curve")) { /* written in ascending footprints */
            if (best > 0 && probe > 0 && c->curve_n < RL_CURVE_MAX)
                c->curve[c->curve_n++] = (rl_band){best, *worst ? atof(worst) : best, probe};
            continue;
        }
        if (!strcmp(roof, "compute")) {
            if (!strcmp(pat, "gemm")) c->gemm_tflops = best > 0 ? best : NAN;
            if (!strcmp(pat, "fma")) c->fma_tflops = best > 0 ? best : NAN;
            continue;
        }
        int l = level_by_name(ctx->kind, rl_table_get(t, r, "level")), p = pattern_by_name(pat);
        if (l < 0 || p < 0 || !(best > 0))
            continue;
        c->bw[l][p] = (rl_band){best, *worst ? atof(worst) : best, probe};
    }
}

bool rl_ceilings_read(const rl_ctx *ctx, const char *path, bool check, rl_ceilings *c,
                      char *why, size_t len)
{
    rl_table *t = rl_table_read(path, why, len);
    if (!t)
        return false;
    char want[320];
    rl_device_identity(ctx, want, sizeof want);
    const char *id = rl_table_meta(t, "identity"), *mode = rl_table_meta(t, "mode");
    const char *epoch = rl_table_meta(t, "epoch_s"), *date = rl_table_meta(t, "date_utc");
    double age = epoch ? difftime(time(NULL), (time_t)atoll(epoch)) : INFINITY;
    bool ok = true;
    if (check && (!id || strcmp(id, want))) {
        snprintf(why, len, "measured on another device");
        ok = false;
    } else if (check && ctx->args.mode == RL_MODE_LAB && !rl_budget_given(ctx) &&
               (age > REUSE_LAB_S || !mode || !strcmp(mode, "quick"))) {
        /* Under --budget any roofs of this device are reused, as a quick
         * run does: the verdicts' roofs are the probes timed beside each
         * group, and the budget is better spent on the points. */
        snprintf(why, len, "older than %.0f min or from a quick run", REUSE_LAB_S / 60);
        ok = false;
    }
    if (ok) {
        for (int l = 0; l < RL_LEVEL_COUNT; l++)
            for (int p = 0; p < RL_PATTERN_COUNT; p++)
                c->bw[l][p] = (rl_band){NAN, NAN, NAN};
        rl_levels_reported(ctx->dev, c->level_reported);
        c->curve_n = 0;
        load_rows(ctx, t, c);
        const char *busy = rl_table_meta(t, "curve_host_busy");
        c->curve_busy = busy && !strcmp(busy, "yes");
        rl_curve_apply(c, ctx->kind);
        const char *src = rl_table_meta(t, "matrix_source");
        c->copy_gbps = c->bw[RL_DRAM][ctx->kind == RL_CUDA ? RL_COPY : RL_TRIAD].best;
        c->matrix_tflops = fmax(c->gemm_tflops, isnan(c->fma_tflops) ? 0 : c->fma_tflops);
        snprintf(c->matrix_source, sizeof c->matrix_source, "%s", src ? src : "?");
        snprintf(c->how, sizeof c->how, "%s", rl_table_meta(t, "how") ? rl_table_meta(t, "how") : "?");
        c->trials = rl_table_meta(t, "trials") ? atoi(rl_table_meta(t, "trials")) : 0;
        if (check)
            snprintf(c->origin, sizeof c->origin, "cached, measured %s", date ? date : "?");
        else
            snprintf(c->origin, sizeof c->origin, "from %s, measured %s", path, date ? date : "?");
        snprintf(c->origin_kind, sizeof c->origin_kind, "%s", check ? "cached" : "file");
        snprintf(c->measured_utc, sizeof c->measured_utc, "%s", date ? date : "");
        ok = c->copy_gbps > 0 && c->matrix_tflops > 0;
        if (!ok)
            snprintf(why, len, "no DRAM or compute roof in it");
        /* A cache from before the curve is measured again; a file given
         * with --ceilings (a fixture) is used as it is, on the reported sizes. */
        if (ok && check && c->curve_n == 0) {
            snprintf(why, len, "no bandwidth curve in it (written before curves)");
            ok = false;
        }
    }
    rl_table_free(t);
    return ok;
}

/*
 * ceilings.c -- the measured roofs, cached per device and label.
 *
 * A full run always measures them afresh, at its start: a machine's
 * bandwidth drifts (neighbours, clocks), and MBU is only meaningful against
 * a ceiling taken in the same run. Every measurement is kept in
 * results/<label>/ceilings.csv, and a quick run reuses the one found there
 * when it was taken on the same device (and thread count), so that quick
 * runs stay quick. Delete the file to make a quick run measure again.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ceilings_path(const rl_ctx *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s/ceilings.csv", ctx->args.out_dir, ctx->label);
}

static void identity(const rl_ctx *ctx, char *buf, size_t len)
{
    if (ctx->kind == RL_CUDA)
        snprintf(buf, len, "cuda | %s | %d SMs", ctx->dev->name, ctx->dev->sm_count);
    else
        snprintf(buf, len, "cpu | %s | %d threads", ctx->dev->name, ctx->dev->threads);
}

static bool load_cached(const rl_ctx *ctx, const char *path, rl_ceilings *c)
{
    char want[320], got[320], quick[16], gbps[64], tflops[64], how[160], date[64];
    identity(ctx, want, sizeof want);
    if (!rl_csv_read_meta(path, "identity", got, sizeof got) || strcmp(got, want) != 0)
        return false;
    if (!rl_csv_read_meta(path, "quick", quick, sizeof quick) ||
        !rl_csv_read_meta(path, "copy_gbps", gbps, sizeof gbps) ||
        !rl_csv_read_meta(path, "matrix_tflops", tflops, sizeof tflops) ||
        !rl_csv_read_meta(path, "how", how, sizeof how) ||
        !rl_csv_read_meta(path, "date_utc", date, sizeof date))
        return false;
    c->copy_gbps = atof(gbps);
    c->matrix_tflops = atof(tflops);
    if (!(c->copy_gbps > 0) || !(c->matrix_tflops > 0))
        return false;
    snprintf(c->how, sizeof c->how, "%s; cached, measured %s%s", how, date,
             !strcmp(quick, "yes") ? " (quick)" : "");
    return true;
}

static void save(const rl_ctx *ctx, const char *path, const rl_ceilings *c)
{
    static const char *const cols[] = {"copy_gbps", "matrix_tflops", NULL};
    char id[320], date[64];
    identity(ctx, id, sizeof id);
    rl_utc_now(date, sizeof date);
    rl_csv *f = rl_csv_open(path, cols);
    rl_csv_meta(f, "about", "rooflab's measured ceilings for this label; delete to measure again");
    rl_csv_meta(f, "identity", "%s", id);
    rl_csv_meta(f, "quick", "%s", ctx->args.quick ? "yes" : "no");
    rl_csv_meta(f, "copy_gbps", "%.6g", c->copy_gbps);
    rl_csv_meta(f, "matrix_tflops", "%.6g", c->matrix_tflops);
    rl_csv_meta(f, "how", "%s", c->how);
    rl_csv_meta(f, "date_utc", "%s", date);
    rl_csv_set_num(f, "copy_gbps", c->copy_gbps);
    rl_csv_set_num(f, "matrix_tflops", c->matrix_tflops);
    rl_csv_end_row(f);
    rl_csv_commit(f);
}

static const rl_ceilings *publish(rl_ctx *ctx, rl_ceilings *c)
{
    const rl_datasheet *ds = ctx->dev->datasheet;
    c->sheet_gbps = ds ? ds->mem_gbps : NAN;
    c->sheet_tflops = ds ? ds->fp16_tflops : NAN;
    ctx->priv->ceilings = *c;
    ctx->priv->have_ceilings = true;

    const char *bw = ctx->kind == RL_CUDA ? "copy" : "triad";
    const char *mx = ctx->kind == RL_CUDA ? "FP16 GEMM" : "SGEMM";
    rl_meta(ctx, "ceiling_gbps", "%.6g", c->copy_gbps);
    rl_meta(ctx, "ceiling_tflops", "%.6g", c->matrix_tflops);
    rl_meta(ctx, "ceilings_how", "%s", c->how);
    if (ds)
        rl_meta(ctx, "datasheet_gbps_tflops", "%.0f GB/s, %.1f TFLOP/s (%s)", ds->mem_gbps,
                ds->fp16_tflops, ds->source);
    printf("ceilings    %s %.1f GB/s, %s %.2f TFLOP/s (%s)\n", bw, c->copy_gbps, mx,
           c->matrix_tflops, c->how);
    if (ds)
        printf("datasheet   %.0f GB/s, %.1f TFLOP/s dense FP16 (%s)\n", ds->mem_gbps,
               ds->fp16_tflops, ds->source);
    fflush(stdout);
    return &ctx->priv->ceilings;
}

const rl_ceilings *rl_ceilings_fresh(rl_ctx *ctx)
{
    char path[1024];
    rl_ceilings c = {0};
    ctx->be->ops->measure_ceilings(ctx, &c);
    ceilings_path(ctx, path, sizeof path);
    save(ctx, path, &c);
    snprintf(c.how + strlen(c.how), sizeof c.how - strlen(c.how), "; measured now");
    return publish(ctx, &c);
}

const rl_ceilings *rl_ceilings_get(rl_ctx *ctx)
{
    if (ctx->priv->have_ceilings)
        return &ctx->priv->ceilings;
    char path[1024];
    rl_ceilings c = {0};
    ceilings_path(ctx, path, sizeof path);
    if (ctx->args.quick && load_cached(ctx, path, &c))
        return publish(ctx, &c);
    return rl_ceilings_fresh(ctx);
}

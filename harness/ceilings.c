/*
 * ceilings.c -- the measured roofs, cached per device and label.
 *
 * Two kinds of roof (after the Empirical Roofline Toolkit and Intel
 * Advisor's cache-aware roofline):
 *   - a bandwidth ladder: every level of the memory hierarchy (CPU: L1, L2,
 *     the LLC, DRAM; GPU: L2 and device memory), each with three access
 *     patterns (read, copy, triad), measured over a working set that fits
 *     the level comfortably. The levels' sizes come from a read-bandwidth
 *     curve over footprints measured first (curve.c), not from the sizes
 *     the machine reports, which may not be what a read sees;
 *   - a compute roof: the best of the library GEMM at a few sizes and, on
 *     the CPU, an FMA-throughput microbenchmark.
 * Each ceiling is the best of at least three trials (a ceiling is a
 * maximum), and keeps its worst trial so a chart can draw the band.
 *
 * A full run measures afresh at its start: a machine's bandwidth drifts
 * (neighbours, clocks), and utilization is only meaningful against a roof
 * taken in the same run. Every measurement is kept in
 * results/<label>/ceilings.csv (ceilings_file.c), the curve with the
 * ladder; a lab run reuses one from the last half hour, a quick run any
 * of the same device (with a curve); --ceilings FILE uses a given
 * file and measures nothing (the end-to-end tests do, so that no test
 * measures a roof beside another test's run). roofs.c judges points
 * against these roofs.
 */
#include "internal.h"
#include "rl_ctx_ceilings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *rl_level_name(rl_backend_kind kind, rl_level l)
{
    static const char *const cpu[] = {"L1", "L2", "LLC", "DRAM"};
    static const char *const gpu[] = {"-", "-", "L2", "DRAM"};
    return l < RL_LEVEL_COUNT ? (kind == RL_CUDA ? gpu : cpu)[l] : "?";
}

const char *rl_pattern_name(rl_pattern p)
{
    static const char *const names[] = {"read", "copy", "triad"};
    return p < RL_PATTERN_COUNT ? names[p] : "?";
}

/* The trials each ceiling gets: at least three. */
static int rl_ceiling_trials(const rl_ctx *ctx) { return ctx->args.mode == RL_MODE_FULL ? 5 : 3; }

/* ---- what to measure -------------------------------------------------------- */

/* A cache level is measured at half its capacity (as the curve found it,
 * or as reported): well inside its plateau, with room for whatever else
 * lives there. DRAM at 4x the LLC (8x the L2 on a GPU), at least 64 MiB,
 * at most an eighth of the memory. */
static double probe_bytes(const rl_device_info *d, rl_level l, const rl_ceilings *c)
{
    if (l != RL_DRAM)
        return c->level_bytes[l] / 2;
    double want = fmax((d->kind == RL_CUDA ? 8 : 4) * c->level_bytes[RL_LLC], 64.0 * 1048576);
    return fmin(want, c->level_reported[RL_DRAM] / 8);
}

static rl_band measure_rung(rl_ctx *ctx, const rl_ceilings *c, rl_level l, rl_pattern p)
{
    if (!(c->level_bytes[l] > 0))
        return (rl_band){NAN, NAN, NAN};
    double probe = probe_bytes(ctx->dev, l, c);
    rl_band b = ctx->be->ops->bandwidth(ctx, p, probe, rl_ceiling_trials(ctx));
    b.probe_bytes = probe;
    return b;
}

/* The curve first: the rungs are probed inside the plateaus it finds. */
static void measure_ladder(rl_ctx *ctx, rl_ceilings *c)
{
    rl_levels_reported(ctx->dev, c->level_reported);
    rl_curve_measure(ctx, c, rl_ceiling_trials(ctx));
    rl_curve_apply(c, ctx->kind);
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        for (int p = 0; p < RL_PATTERN_COUNT; p++) /* SIGTERM: the rungs left stay unmeasured */
            c->bw[l][p] = rl_stop_requested() ? (rl_band){NAN, NAN, NAN}
                                              : measure_rung(ctx, c, (rl_level)l, (rl_pattern)p);
    c->copy_gbps = c->bw[RL_DRAM][ctx->kind == RL_CUDA ? RL_COPY : RL_TRIAD].best;
}

/* The compute roof: the best source wins. Quick and lab runs try the two
 * smallest GEMM sizes only (the FMA peak, where there is one, is above
 * them all). */
static int measure_compute(rl_ctx *ctx, rl_ceilings *c)
{
    const rl_backend_ops *ops = ctx->be->ops;
    int trials = rl_ceiling_trials(ctx), best_n = 0, largest = 0;
    c->gemm_tflops = NAN;
    for (int i = 0; ops->gemm_sizes[i]; i++) {
        if ((ctx->args.mode != RL_MODE_FULL && i >= 2) || rl_stop_requested())
            break;
        largest = ops->gemm_sizes[i];
        rl_band b = ops->gemm(ctx, largest, trials);
        if (!(b.best <= c->gemm_tflops)) {
            c->gemm_tflops = b.best;
            best_n = ops->gemm_sizes[i];
        }
    }
    c->fma_tflops = ops->fma_peak && !rl_stop_requested() ? ops->fma_peak(ctx, trials).best : NAN;
    bool fma_wins = c->fma_tflops > c->gemm_tflops;
    c->matrix_tflops = fma_wins ? c->fma_tflops : c->gemm_tflops;
    if (isnan(c->matrix_tflops)) /* SIGTERM came first */
        snprintf(c->matrix_source, sizeof c->matrix_source, "not measured");
    else if (fma_wins)
        snprintf(c->matrix_source, sizeof c->matrix_source, "FMA peak");
    else
        snprintf(c->matrix_source, sizeof c->matrix_source, "%s %d^3", ops->gemm_name, best_n);
    return largest;
}

static void measure_all(rl_ctx *ctx, rl_ceilings *c)
{
    c->trials = rl_ceiling_trials(ctx);
    measure_ladder(ctx, c);
    int largest = measure_compute(ctx, c);
    char end[32];
    rl_format_bytes(c->curve_n ? c->curve[c->curve_n - 1].probe_bytes : 0, end, sizeof end);
    snprintf(c->how, sizeof c->how,
             "best of %d trials: read bandwidth at %d footprints (16 KiB to %s), then the "
             "bandwidth ladder (read, copy, triad; bytes read + written) inside each level it "
             "shows; compute: %s up to %d^3%s", c->trials, c->curve_n, end,
             ctx->be->ops->gemm_name, largest,
             ctx->be->ops->fma_peak ? " and an FMA microbenchmark" : "");
}

/* ---- publishing: the CSV header and the console ------------------------------------ */

static void write_meta(rl_ctx *ctx, const rl_ceilings *c)
{
    rl_meta(ctx, "ceiling_gbps", "%.6g", c->copy_gbps);
    rl_meta(ctx, "ceiling_tflops", "%.6g", c->matrix_tflops);
    rl_meta(ctx, "ceiling_tflops_source", "%s", c->matrix_source);
    rl_meta(ctx, "ceilings_how", "%s; %s", c->how, c->origin);
    /* Where they came from and when, as data (the paper's "measured at its
     * start" or "reused"): ceilings_how says the same in words. */
    rl_meta(ctx, "ceilings_origin", "%s", c->origin_kind);
    rl_meta(ctx, "ceilings_date_utc", "%s", c->measured_utc);
    if (c->trials > 0) /* a file written before it was kept says it in words only */
        rl_meta(ctx, "ceilings_trials", "%d", c->trials);
    /* The curve and the levels' sizes, found and reported (curve.c). */
    rl_meta_line lines[RL_CURVE_META_MAX];
    int n = rl_curve_meta(c, ctx->kind, lines, RL_CURVE_META_MAX);
    for (int i = 0; i < n; i++)
        rl_meta(ctx, lines[i].key, "%s", lines[i].value);
    /* One line per rung, "best worst probe_bytes": charts draw the ladder. */
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        for (int p = 0; p < RL_PATTERN_COUNT; p++) {
            const rl_band *b = &c->bw[l][p];
            if (isnan(b->best))
                continue;
            char key[48];
            snprintf(key, sizeof key, "roof_%s_%s_gbps", rl_level_name(ctx->kind, (rl_level)l),
                     rl_pattern_name((rl_pattern)p));
            rl_meta(ctx, key, "%.6g %.6g %.0f", b->best, b->worst, b->probe_bytes);
        }
    const rl_datasheet *ds = ctx->dev->datasheet;
    if (ds)
        rl_meta(ctx, "datasheet_gbps_tflops", "%.0f GB/s, %.1f TFLOP/s (%s)", ds->mem_gbps,
                ds->fp16_tflops, ds->source);
}

static void print_ladder(const rl_ctx *ctx, const rl_ceilings *c)
{
    const char *mx = ctx->kind == RL_CUDA ? "matrix" : "compute";
    printf("ceilings    DRAM %s %.1f GB/s, %s %.3g TFLOP/s (%s); %s\n",
           ctx->kind == RL_CUDA ? "copy" : "triad", c->copy_gbps, mx, c->matrix_tflops,
           c->matrix_source, c->origin);
    printf("            %s\n", c->how);
    char levels[256];
    rl_curve_describe(c, ctx->kind, levels, sizeof levels);
    printf("            levels %s (%s)\n", levels, c->levels_source);
    printf("            GB/s       read     copy    triad   working set\n");
    for (int l = 0; l < RL_LEVEL_COUNT; l++) {
        if (isnan(c->bw[l][RL_READ].best) && isnan(c->bw[l][RL_TRIAD].best))
            continue;
        char ws[32];
        rl_format_bytes(c->bw[l][RL_READ].probe_bytes, ws, sizeof ws);
        printf("            %-6s", rl_level_name(ctx->kind, (rl_level)l));
        for (int p = 0; p < RL_PATTERN_COUNT; p++)
            printf(" %8.1f", c->bw[l][p].best);
        printf("   %s\n", ws);
    }
    if (!isnan(c->fma_tflops) || !isnan(c->gemm_tflops)) {
        printf("            compute: library GEMM %.3g TFLOP/s", c->gemm_tflops);
        if (isnan(c->fma_tflops)) /* the GPU's compute roof is the library GEMM alone */
            printf(" (no FMA peak measured on this backend)\n");
        else
            printf(", FMA peak %.3g TFLOP/s\n", c->fma_tflops);
    }
    const rl_datasheet *ds = ctx->dev->datasheet;
    if (ds)
        printf("datasheet   %.0f GB/s, %.1f TFLOP/s dense FP16 (%s)\n", ds->mem_gbps,
               ds->fp16_tflops, ds->source);
    fflush(stdout);
}

static const rl_ceilings *publish(rl_ctx *ctx, rl_ceilings *c)
{
    const rl_datasheet *ds = ctx->dev->datasheet;
    c->sheet_gbps = ds ? ds->mem_gbps : NAN;
    c->sheet_tflops = ds ? ds->fp16_tflops : NAN;
    rl_ctx_ceilings *room = rl_ceilings_room(ctx);
    room->ceilings = *c;
    room->have = true;
    write_meta(ctx, c);
    print_ladder(ctx, c);
    return &room->ceilings;
}

/* ---- a busy host ---------------------------------------------------------------- */

static void warn(rl_ctx *ctx, const char *msg)
{
    printf("warning     %s\n", msg);
    rl_meta(ctx, "host_busy_warning", "%s", msg);
    fflush(stdout);
}

/* Before measuring: other processes wanting the CPUs slow every roof. The
 * CPUs they keep busy now, over a quarter of a second, rather than the load
 * average, which still counts the experiment that ran before this one in a
 * make all for a minute after it ended. */
static bool warn_if_loaded(rl_ctx *ctx)
{
    double busy = rl_host_busy_cpus(0.25), load = rl_load_average();
    int cpus = ctx->dev->kind == RL_CPU ? ctx->dev->threads : 0;
    if (cpus <= 0) {
        rl_device_info host = {0};
        rl_cpu_describe(&host);
        cpus = host.threads > 0 ? host.threads : 1;
    }
    if (busy > cpus / 2.0) {
        char msg[256];
        snprintf(msg, sizeof msg, "the host is busy (other processes kept %.1f of %d CPUs busy "
                 "just now; load average %.1f): ceilings may be under-measured and times "
                 "inflated; rerun on a quiet machine", busy, cpus, load);
        warn(ctx, msg);
    }
    return busy > cpus / 2.0;
}

/* After measuring: a roof far below this device's last one says the same. */
static void warn_if_below_cached(rl_ctx *ctx, const rl_ceilings *fresh, const rl_ceilings *old)
{
    if (!(old->copy_gbps > 0) || fresh->copy_gbps >= 0.7 * old->copy_gbps)
        return;
    char msg[256];
    snprintf(msg, sizeof msg, "DRAM bandwidth measured %.1f GB/s, %.0f %% of this device's last "
             "%.1f GB/s: the host may be busy", fresh->copy_gbps,
             100 * fresh->copy_gbps / old->copy_gbps, old->copy_gbps);
    warn(ctx, msg);
}

/* ---- the entry point ------------------------------------------------------------------- */

const rl_ceilings *rl_ceilings_measured(const rl_ctx *ctx)
{
    const rl_ctx_ceilings *room = rl_ceilings_room(ctx);
    if (!room || !room->have)
        rl_die(RL_EXIT_FAILED, "internal error: exp-%s: the ceilings were read before they were "
               "measured", ctx->exp->id);
    return &room->ceilings;
}

const rl_ceilings *rl_ceilings_get(rl_ctx *ctx)
{
    if (rl_ceilings_room(ctx)->have)
        return &rl_ceilings_room(ctx)->ceilings;
    char path[1024], why[256] = "";
    rl_ceilings c = {0}, old = {0};
    if (ctx->args.ceilings_file) {
        if (!rl_ceilings_read(ctx, ctx->args.ceilings_file, false, &c, why, sizeof why))
            rl_die(RL_EXIT_USAGE, "exp-%s: --ceilings %s: %s", ctx->exp->id,
                   ctx->args.ceilings_file, why);
        rl_ceilings_room(ctx)->fixed = true;
        return publish(ctx, &c);
    }
    bool busy = warn_if_loaded(ctx); /* cached roofs or not, the run's own times suffer */
    rl_ceilings_path(ctx, path, sizeof path);
    /* Two runs of one label at once (a Slurm array's tasks) measure one
     * at a time: the second waits here, then reuses what the first saved. */
    int lock = rl_lock_beside(path);
    if (ctx->args.mode != RL_MODE_FULL && rl_ceilings_read(ctx, path, true, &c, why, sizeof why)) {
        rl_unlock(lock);
        return publish(ctx, &c);
    }
    bool have_old = rl_ceilings_read(ctx, path, false, &old, why, sizeof why);
    rl_progress_note(ctx, "measuring the ceilings");
    /* Other processes on the CPUs make knees of their own: the CPU's
     * curve is kept, its levels are not trusted. */
    c.curve_busy = busy && ctx->kind == RL_CPU;
    measure_all(ctx, &c);
    /* A SIGTERM cut the trials short (measure.c): roofs of a sample or
     * two serve this run's partial CSV, never the next run's cache. */
    bool cut = rl_stop_requested() != 0;
    if (!cut)
        rl_ceilings_write(ctx, path, &c);
    rl_unlock(lock);
    snprintf(c.origin, sizeof c.origin, cut ? "measured now, cut short by SIGTERM (not saved)"
                                            : "measured now");
    snprintf(c.origin_kind, sizeof c.origin_kind, "measured");
    rl_utc_now(c.measured_utc, sizeof c.measured_utc);
    if (have_old)
        warn_if_below_cached(ctx, &c, &old);
    return publish(ctx, &c);
}

/* roofs.c re-measures one rung, or the compute roof, when a point beats it. */
rl_band rl_ceilings_remeasure_rung(rl_ctx *ctx, rl_level l, rl_pattern p)
{
    return measure_rung(ctx, &rl_ceilings_room(ctx)->ceilings, l, p);
}

void rl_ceilings_remeasure_compute(rl_ctx *ctx, rl_ceilings *c) { (void)measure_compute(ctx, c); }

/* A ceiling is a maximum: of this run's roofs and the file's, the higher. */
static void keep_higher(rl_ceilings *mine, const rl_ceilings *file, rl_backend_kind kind)
{
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        for (int p = 0; p < RL_PATTERN_COUNT; p++)
            if (file->bw[l][p].best > mine->bw[l][p].best || isnan(mine->bw[l][p].best))
                mine->bw[l][p] = file->bw[l][p];
    mine->copy_gbps = mine->bw[RL_DRAM][kind == RL_CUDA ? RL_COPY : RL_TRIAD].best;
    mine->gemm_tflops = fmax(mine->gemm_tflops, file->gemm_tflops);
    mine->fma_tflops = fmax(mine->fma_tflops, file->fma_tflops);
    if (file->matrix_tflops > mine->matrix_tflops) {
        mine->matrix_tflops = file->matrix_tflops;
        snprintf(mine->matrix_source, sizeof mine->matrix_source, "%s", file->matrix_source);
    }
}

/* A roof re-measured mid-run: merged under the lock with the file as it is
 * now, so that roofs another run of this label saved since this one read
 * them are not lost. */
void rl_ceilings_save(rl_ctx *ctx)
{
    char path[1024], why[256];
    if (rl_stop_requested()) /* a re-measure SIGTERM cut short is no roof to keep */
        return;
    rl_ceilings_path(ctx, path, sizeof path);
    int lock = rl_lock_beside(path);
    rl_ceilings merged = rl_ceilings_room(ctx)->ceilings, now = {0};
    if (rl_ceilings_read(ctx, path, true, &now, why, sizeof why))
        keep_higher(&merged, &now, ctx->kind);
    rl_ceilings_write(ctx, path, &merged);
    rl_unlock(lock);
}

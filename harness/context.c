/*
 * context.c -- the life of one experiment run: command line, backend,
 * metadata (its standard lines: meta_header.c), rows, and the end
 * (commit, verdicts, charts).
 */
#include "internal.h"
#include "rl_budget.h"
#include "rl_ctx_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- choosing the backend --------------------------------------------- */

/* BACKEND=auto runs on the CPU only where there is no GPU at all. A GPU
 * that is here but cannot run this build (driver older than the runtime,
 * fabric manager down, MIG without an instance, held by another process)
 * is an error with its diagnosis: a quiet CPU run would take hours before
 * anyone noticed. BACKEND=cpu runs on the CPU on purpose. */
static void open_backend(rl_ctx *ctx)
{
    char why[2048] = "";
    const char *prog = ctx->exp->id;
    rl_open_status status = RL_ABSENT;
    switch (ctx->args.backend) {
    case RL_BACKEND_CUDA:
    case RL_BACKEND_AUTO:
        ctx->be = rl_backend_open_status(RL_CUDA, ctx->args.device, &status, why, sizeof why);
        if (ctx->be)
            break;
        if (status == RL_UNUSABLE)
            rl_die(RL_EXIT_NO_GPU, "exp-%s: %s", prog, why);
        if (ctx->args.backend == RL_BACKEND_CUDA)
            rl_die(RL_EXIT_NO_GPU, "exp-%s: --backend cuda, but no GPU: %s", prog, why);
        snprintf(ctx->priv->fallback_note, sizeof ctx->priv->fallback_note,
                 "no GPU (%s): running on the CPU backend", why);
        /* fall through */
    case RL_BACKEND_CPU:
        ctx->be = rl_backend_open(RL_CPU, 0, why, sizeof why);
        break;
    }
    ctx->kind = rl_kind(ctx->be);
    ctx->dev = rl_device(ctx->be);
}

/* ---- the reference run ---------------------------------------------------- */

/* The slug of the device that measured the results drawn: this device's,
 * except under --plot-only, where the CSV may come from another machine
 * (a GPU's results redrawn on a laptop): its backend and device lines. */
static void measured_device_slug(const rl_ctx *ctx, char *slug, size_t len)
{
    snprintf(slug, len, "%s", ctx->dev->slug);
    if (!ctx->args.plot_only)
        return;
    char why[256];
    rl_table *t = rl_table_read_meta(ctx->csv_path, why, sizeof why);
    const char *backend = t ? rl_table_meta(t, "backend") : NULL;
    const char *device = t ? rl_table_meta(t, "device") : NULL;
    if (backend && device)
        rl_device_slug(strcmp(backend, "cuda") ? RL_CPU : RL_CUDA, device, slug, len);
    rl_table_free(t);
}

/* The checked-in reference run of the device that measured these results
 * (results/reference/<slug>/), when there is one, --reference none was not
 * given, and this run is not a reference run itself: a reference's charts
 * are drawn alone, the same whichever machine redraws them. */
static bool find_reference(const rl_ctx *ctx, char *csv, size_t len, char *name, size_t nlen)
{
    if (ctx->args.no_reference || !strncmp(ctx->label, "reference/", 10))
        return false;
    char slug[64];
    measured_device_slug(ctx, slug, sizeof slug);
    snprintf(name, nlen, "reference/%s", slug);
    snprintf(csv, len, "%s/%s/exp-%s.csv", ctx->args.out_dir, name, ctx->exp->id);
    return access(csv, R_OK) == 0;
}

/* A CSV a SIGTERM left without one measured point (its header's
 * partial_points_measured: 0): a chart would have nothing to draw, and
 * some charts' gnuplot stops on an empty plot. */
static bool stopped_before_any_point(const char *csv)
{
    char why[256];
    rl_table *t = rl_table_read_meta(csv, why, sizeof why);
    const char *measured = t ? rl_table_meta(t, "partial_points_measured") : NULL;
    bool none = measured && !strcmp(measured, "0");
    rl_table_free(t);
    return none;
}

static int draw(const rl_ctx *ctx)
{
    char ref_csv[1024], ref_name[128], later[1400];
    rl_redraw_command(ctx, later, sizeof later);
    bool have_ref = find_reference(ctx, ref_csv, sizeof ref_csv, ref_name, sizeof ref_name);
    if (have_ref)
        printf("reference   %s, overlaid dashed (--reference none, or REFERENCE=none, leaves "
               "it out)\n", ref_csv);
    return ctx->priv->charts->draw(ctx->exp, ctx->csv_path, ctx->args.plots_dir, ctx->label,
                                   have_ref ? ref_csv : NULL, have_ref ? ref_name : NULL, later);
}

/* ---- begin and end ------------------------------------------------------ */

static rl_ctx *new_ctx(const rl_experiment *exp)
{
    rl_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx)
        ctx->priv = calloc(1, sizeof *ctx->priv);
    if (!ctx || !ctx->priv)
        rl_die(RL_EXIT_FAILED, "out of memory");
    ctx->exp = exp;
    return ctx;
}

/* The mode's stop rule (its time limit from --timeout if given; the
 * minimum measured time never above it), and the marks the run's duration
 * and the busy-host gate count from. */
static void start_clock(rl_ctx *ctx)
{
    ctx->rule = ctx->args.mode == RL_MODE_QUICK  ? RL_STOP_QUICK
                : ctx->args.mode == RL_MODE_FULL ? RL_STOP_FULL
                                                 : RL_STOP_LAB;
    if (ctx->args.timeout_s > 0) {
        ctx->rule.timeout_s = ctx->args.timeout_s;
        ctx->rule.min_time_s = fmin(ctx->rule.min_time_s, ctx->args.timeout_s);
    }
    ctx->priv->clock.started = rl_now_s();
    ctx->priv->clock.busy_mark = rl_busy_mark_now();
    ctx->priv->budget = rl_budget_new(ctx, ctx->priv->clock.started);
}

rl_ctx *rl_begin(const rl_experiment *exp, int argc, char **argv, const rl_charts *charts)
{
    rl_ctx *ctx = new_ctx(exp);
    ctx->priv->charts = charts;

    int rc = rl_parse_args(argc, argv, exp->options, &ctx->args);
    if (rc)
        exit(rc);
    if (ctx->args.help) {
        rl_print_usage(argv[0], exp->title, exp->options);
        exit(RL_EXIT_OK);
    }
    if (exp->default_cache == RL_CACHE_UNSET)
        rl_die(RL_EXIT_FAILED, "internal error: exp-%s declares no default_cache (RL_HOT or RL_COLD)",
               exp->id);
    if (!ctx->args.cache_given)
        ctx->args.cache = exp->default_cache;
    start_clock(ctx);

    open_backend(ctx);
    snprintf(ctx->label, sizeof ctx->label, "%s", ctx->args.label ? ctx->args.label : ctx->dev->slug);
    snprintf(ctx->csv_path, sizeof ctx->csv_path, "%s/%s/exp-%s.csv", ctx->args.out_dir, ctx->label,
             exp->id);
    if (ctx->args.print_label) {
        printf("%s\n", ctx->label);
        exit(RL_EXIT_OK);
    }
    if (ctx->args.plot_only) {
        FILE *f = fopen(ctx->csv_path, "r");
        if (!f)
            rl_die(RL_EXIT_USAGE, "exp-%s --plot-only: no results at %s (run the experiment first)",
                   exp->id, ctx->csv_path);
        fclose(f);
        if (!charts)
            rl_die(RL_EXIT_FAILED, "exp-%s --plot-only: this program draws no charts", exp->id);
        if (!charts->available())
            rl_die(RL_EXIT_FAILED, "exp-%s --plot-only: gnuplot not found (apt-get install "
                   "gnuplot-nox, or unpack a bundle: see README)", exp->id);
        if (stopped_before_any_point(ctx->csv_path)) {
            printf("charts      none: its run was stopped (SIGTERM) before its first point (%s)\n",
                   ctx->csv_path);
            exit(RL_EXIT_OK);
        }
        exit(draw(ctx) ? RL_EXIT_FAILED : RL_EXIT_OK);
    }
    if (exp->families && !rl_families_check(ctx))
        exit(RL_EXIT_USAGE); /* before anything is written or measured */
    if (!ctx->args.list) {
        rl_plan_file_check(ctx);
        rl_outcome_files_check(ctx);
    }
    if (ctx->args.list && exp->families) {
        rl_families_list(ctx);
        exit(RL_EXIT_OK);
    }
    if (ctx->args.list)
        return ctx; /* the experiment prints its variants and calls rl_end */

    rl_ctx_csv *csv = &ctx->priv->csv;
    csv->names = rl_csv_columns_of(exp);
    csv->csv = rl_csv_open(ctx->csv_path, csv->names);
    rl_write_standard_meta(ctx, argc, argv);
    rl_print_story(ctx);
    /* From here a SIGTERM (a cap, a time limit) stops the run at the next
     * point and keeps what it measured: rl_end writes it, marked partial. */
    rl_stop_on_sigterm();
    return ctx;
}

rl_ctx *rl_begin_bare(const rl_experiment *exp, const rl_args *args)
{
    rl_ctx *ctx = new_ctx(exp);
    ctx->args = *args;
    start_clock(ctx);
    open_backend(ctx);
    snprintf(ctx->label, sizeof ctx->label, "%s", args->label ? args->label : ctx->dev->slug);
    return ctx;
}

/* What rl_begin took: the verdicts, the backend, the context itself. */
static void release(rl_ctx *ctx)
{
    rl_verdicts_free(ctx);
    rl_run_release(ctx);
    rl_budget_free(ctx->priv->budget);
    rl_backend_close(ctx->be);
    free(ctx->priv->csv.names);
    free(ctx->priv->csv.rows_meta);
    free(ctx->priv);
    free(ctx);
}

/* Declared points of which none was timed (a --budget that ran out
 * before the first): no chart has a point to draw. */
static bool nothing_timed(const rl_ctx *ctx)
{
    const rl_points *all = &ctx->priv->parts.points;
    for (int i = 0; i < all->n; i++)
        if (rl_point_timed(&all->v[i]))
            return false;
    return all->n > 0;
}

/* A run SIGTERM stopped before every point was measured: the CSV says so
 * in its header ('# partial: stopped by SIGTERM after N of M points'), the
 * points not run say why in their rows, and no verdict is judged on part
 * of the points. False for a run the signal found finished. */
static bool some_point_stopped(const rl_ctx *ctx)
{
    const rl_points *all = &ctx->priv->parts.points;
    bool stopped = false;
    for (int i = 0; i < all->n; i++)
        stopped |= rl_point_stopped(&all->v[i]);
    return stopped;
}

static bool mark_partial(rl_ctx *ctx)
{
    if (!some_point_stopped(ctx))
        return false;
    int measured, declared;
    rl_points_count_measured(ctx, &measured, &declared);
    char why[160];
    snprintf(why, sizeof why, RL_STOPPED_WHY " after %d of %d points", measured, declared);
    rl_meta(ctx, "partial", "%s; the rows of the others say not run, and no verdict is judged",
            why);
    /* the same counts as data, for what reads the CSV back (--plot-only) */
    rl_meta(ctx, "partial_points_measured", "%d", measured);
    rl_meta(ctx, "partial_points_declared", "%d", declared);
    rl_verdicts_not_judged(ctx, why);
    rl_claims_not_judged(ctx, why);
    printf("stopped     %s: the CSV keeps them, marked partial; no verdict judged\n",
           why + strlen("stopped "));
    return true;
}

/* What the budget gave, on the console and in the CSV. */
static void report_budget(rl_ctx *ctx)
{
    const rl_budget *budget = ctx->priv->budget;
    if (!budget)
        return;
    char meta[512];
    rl_budget_report(budget, rl_now_s() - ctx->priv->clock.started, meta, sizeof meta);
    rl_meta(ctx, rl_budget_is_slot(budget) ? "slot_run" : "budget_run", "%s", meta);
}

/* The charts of a run that ended, or why none were drawn: said in words
 * on the console, and returned as a word for --outcome-file (NULL: drawn).
 * *failed: gnuplot failed. */
static const char *end_charts(const rl_ctx *ctx, bool written, bool stopping, bool *failed)
{
    *failed = false;
    if (!written)
        return "csv_not_written";
    if (ctx->args.no_plot)
        return "no_plot";
    if (!ctx->priv->charts)
        return "no_charts";
    if (stopping && nothing_timed(ctx)) {
        printf("charts      none: no point was measured before the run was stopped (SIGTERM)\n");
        return "no_point_timed";
    }
    if (stopping) { /* gnuplot's seconds may be more than a cap's KILL leaves */
        char later[1400];
        rl_redraw_command(ctx, later, sizeof later);
        printf("charts      not drawn: the run was stopped (SIGTERM); %s draws them from its CSV\n",
               later);
        return "sigterm";
    }
    if (nothing_timed(ctx)) {
        printf("charts      none: no point was timed (the budget ran out before the first)\n");
        return "no_point_timed";
    }
    bool gnuplot = ctx->priv->charts->available(); /* without it, draw says so and returns 0 */
    *failed = draw(ctx) != 0;
    return *failed ? "gnuplot_failed" : gnuplot ? NULL : "no_gnuplot";
}

int rl_end(rl_ctx *ctx)
{
    int code = ctx->failures ? RL_EXIT_FAILED : RL_EXIT_OK;
    rl_progress_clear();
    if (ctx->args.list) {
        code = RL_EXIT_OK;
        goto out;
    }
    rl_print_duration(ctx);
    report_budget(ctx);
    rl_outcome o = {.kept = true};
    o.stopped = rl_stop_requested() != 0;
    o.partial = o.stopped && mark_partial(ctx);
    o.rows_written = rl_rows_file_write(ctx) == 0;
    bool written = rl_csv_commit(ctx->priv->csv.csv) == 0 && rl_verdicts_write(ctx) == 0;
    o.csv_written = written;
    if (!written || !o.rows_written)
        code = RL_EXIT_FAILED;
    else if (o.partial)
        code = RL_EXIT_STOPPED;
    rl_verdicts_print(ctx);
    if (written)
        printf("\nwrote       %s%s\n", ctx->csv_path, o.partial ? " (partial)" : "");
    bool charts_failed;
    o.charts_why = end_charts(ctx, written, o.stopped, &charts_failed);
    if (charts_failed)
        code = RL_EXIT_FAILED;
    if (ctx->failures)
        printf("\n%d kernel(s) FAILED validation: their rows say so and they were not timed.\n",
               ctx->failures);
    o.exit_status = code;
    if (rl_outcome_write(ctx, &o) != 0)
        code = RL_EXIT_FAILED;
out:
    release(ctx);
    return code;
}

/* A run whose results are discarded (a side benchmark, --points): no CSV,
 * but its rows to --rows-file and its outcome to --outcome-file. */
int rl_end_discard(rl_ctx *ctx)
{
    int code = ctx->failures ? RL_EXIT_FAILED : rl_stop_requested() ? RL_EXIT_STOPPED : RL_EXIT_OK;
    rl_progress_clear();
    rl_outcome o = {.charts_why = "discarded"};
    o.stopped = rl_stop_requested() != 0;
    o.partial = o.stopped && ctx->priv->parts.points.n && some_point_stopped(ctx);
    o.rows_written = rl_rows_file_write(ctx) == 0;
    if (!o.rows_written)
        code = RL_EXIT_FAILED;
    if (ctx->priv->csv.csv)
        rl_csv_abort(ctx->priv->csv.csv);
    o.exit_status = code;
    if (rl_outcome_write(ctx, &o) != 0)
        code = RL_EXIT_FAILED;
    release(ctx);
    return code;
}

/* ---- seeds ------------------------------------ */

uint64_t rl_next_seed(rl_ctx *ctx)
{
    return ctx->args.seed * 1000003ULL + ++ctx->priv->seed_counter;
}

float *rl_host_random(rl_ctx *ctx, size_t n, float lo, float hi)
{
    float *x = rl_host_alloc(n * sizeof(float));
    rl_fill_uniform(x, n, lo, hi, rl_next_seed(ctx));
    return x;
}

uint16_t *rl_host_random_f16(rl_ctx *ctx, size_t n, float lo, float hi)
{
    uint16_t *x = rl_host_alloc(n * sizeof(uint16_t));
    rl_fill_uniform_f16(x, n, lo, hi, rl_next_seed(ctx));
    return x;
}

/*
 * columns.c -- one declared list of columns per experiment, from which
 * the harness writes the CSV header, every point's row and the console
 * table, so that header and rows can never disagree.
 *
 * A point's CSV row: the experiment's leading columns (what the point is),
 * the measurement (RL_MEASUREMENT_COLUMNS), the rates it asked for
 * (bandwidth: GB/s, MBU and its roof; compute: TFLOP/s and MFU), its
 * derived columns (computed from the measured points), then validated,
 * max_abs_err and skipped_reason. A point that failed validation keeps its
 * leading columns and says why; its measured cells stay empty.
 */
#include "internal.h"
#include "rl_ctx_csv.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const MEASUREMENT[] = {RL_MEASUREMENT_COLUMNS, NULL};
static const char *const BANDWIDTH[] = {"gbps", "mbu", RL_ROOF_COLUMNS, "mbu_datasheet", NULL};
static const char *const COMPUTE[] = {"tflops", "mfu", "mfu_datasheet", NULL};
/* The group's probes (group_roof.c): the roofs mbu and mfu are taken
 * against, from their median times, and the q1-q3 band of their rates. */
static const char *const GROUP_BANDWIDTH[] = {"group_roof_gbps", "group_roof_gbps_q1",
                                              "group_roof_gbps_q3", "group_roof_bytes", NULL};
static const char *const GROUP_COMPUTE[] = {"group_roof_tflops", "group_roof_tflops_q1",
                                            "group_roof_tflops_q3", NULL};

static void add_name(const char ***names, int *n, int *cap, const char *name)
{
    if (*n + 1 >= *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *names = realloc(*names, sizeof **names * (size_t)*cap);
        if (!*names)
            rl_die(RL_EXIT_FAILED, "out of memory");
    }
    (*names)[(*n)++] = name;
    (*names)[*n] = NULL;
}

static void add_columns(const char ***names, int *n, int *cap, const rl_column *cols)
{
    for (const rl_column *c = cols; c && (c->name || c->head); c++)
        if (c->name)
            add_name(names, n, cap, c->name);
}

static void add_list(const char ***names, int *n, int *cap, const char *const *list)
{
    for (; *list; list++)
        add_name(names, n, cap, *list);
}

const char **rl_csv_columns_of(const rl_experiment *e)
{
    const char **names = NULL;
    int n = 0, cap = 0;
    add_columns(&names, &n, &cap, e->columns);
    if (!e->observed)
        add_list(&names, &n, &cap, MEASUREMENT);
    if (e->rates & RL_RATES_BANDWIDTH)
        add_list(&names, &n, &cap, BANDWIDTH);
    if ((e->rates & RL_RATES_BANDWIDTH) && (e->probes & RL_PROBE_BANDWIDTH))
        add_list(&names, &n, &cap, GROUP_BANDWIDTH);
    if (e->rates & RL_RATES_COMPUTE)
        add_list(&names, &n, &cap, COMPUTE);
    if ((e->rates & RL_RATES_COMPUTE) && (e->probes & RL_PROBE_COMPUTE))
        add_list(&names, &n, &cap, GROUP_COMPUTE);
    add_columns(&names, &n, &cap, e->derived);
    add_name(&names, &n, &cap, "validated");
    if (!e->observed) /* an observed point's check compares no floats */
        add_name(&names, &n, &cap, "max_abs_err");
    add_name(&names, &n, &cap, "skipped_reason");
    return names;
}

/* ---- one cell ---------------------------------------------------------------------- */

/* A member of the point's data, by its offset. */
static const void *member(const rl_column *c, const rl_point *p)
{
    return (const char *)p->data + c->offset;
}

static bool is_text(const rl_column *c)
{
    return c->str || c->field == RL_TEXT_FIELD || c->field == RL_CHARS_FIELD ||
           c->field == RL_BYTES_FIELD;
}

static const char *text_of(rl_ctx *ctx, const rl_column *c, const rl_point *p, char *buf, size_t len)
{
    if (c->field == RL_CHARS_FIELD)
        return (const char *)member(c, p);
    if (c->field == RL_BYTES_FIELD) {
        rl_format_bytes(*(const double *)member(c, p), buf, len);
        return buf;
    }
    if (c->field == RL_TEXT_FIELD) {
        const char *s = *(const char *const *)member(c, p);
        return s ? s : "";
    }
    return c->str(ctx, p, buf, len);
}

static double number_of(rl_ctx *ctx, const rl_column *c, const rl_point *p)
{
    if (c->field == RL_INT_FIELD)
        return *(const int *)member(c, p);
    if (c->field == RL_DOUBLE_FIELD || c->field == RL_WHOLE_FIELD)
        return *(const double *)member(c, p);
    if (c->ratio) {
        rl_ratio r = c->ratio(ctx, p);
        return c->field == RL_RATIO_LO ? r.lo : c->field == RL_RATIO_HI ? r.hi : r.median;
    }
    return c->num(ctx, p);
}

/* The column's value as text: "" (CSV) when it has none for this point. */
static const char *cell(rl_ctx *ctx, const rl_column *c, const rl_point *p, char *buf, size_t len)
{
    buf[0] = '\0';
    if (c->measured && !rl_point_timed(p))
        return buf;
    if (is_text(c))
        return text_of(ctx, c, p, buf, len);
    if (c->field == RL_INT_FIELD) { /* every digit, as rl_set_int writes it */
        snprintf(buf, len, "%d", *(const int *)member(c, p));
        return buf;
    }
    double v = number_of(ctx, c, p);
    if (isfinite(v))
        snprintf(buf, len, c->field == RL_WHOLE_FIELD ? "%.0f" : "%.6g", v);
    return buf;
}

static void set_cells(rl_ctx *ctx, const rl_column *cols, const rl_point *p)
{
    char buf[256];
    for (const rl_column *c = cols; c && (c->name || c->head); c++)
        if (c->name)
            rl_set_str(ctx, c->name, cell(ctx, c, p, buf, sizeof buf));
}

void rl_set_point_columns(rl_ctx *ctx, const rl_point *p) { set_cells(ctx, ctx->exp->columns, p); }

static void set_rates(rl_ctx *ctx, const rl_point *p)
{
    const rl_ceilings *ceil = rl_ceilings_get(ctx);
    if (ctx->exp->rates & RL_RATES_BANDWIDTH) {
        rl_roof roof = rl_point_roof(ctx, p);
        rl_set_num(ctx, "gbps", rl_point_gbps(p));
        rl_set_num(ctx, "mbu", rl_point_mbu(ctx, p));
        rl_set_roof(ctx, &roof, rl_point_gbps(p));
        rl_set_num(ctx, "mbu_datasheet", rl_point_gbps(p) / ceil->sheet_gbps);
        if (ctx->exp->probes & RL_PROBE_BANDWIDTH) {
            rl_set_num(ctx, "group_roof_gbps", p->roof.gbps);
            rl_set_num(ctx, "group_roof_gbps_q1", p->roof.gbps_q1);
            rl_set_num(ctx, "group_roof_gbps_q3", p->roof.gbps_q3);
            rl_set_num(ctx, "group_roof_bytes", p->roof.probe_bytes);
        }
    }
    if (ctx->exp->rates & RL_RATES_COMPUTE) {
        rl_set_num(ctx, "tflops", rl_point_tflops(p));
        rl_set_num(ctx, "mfu", rl_point_mfu(ctx, p));
        rl_set_num(ctx, "mfu_datasheet", rl_point_tflops(p) / ceil->sheet_tflops);
        if (ctx->exp->probes & RL_PROBE_COMPUTE) {
            rl_set_num(ctx, "group_roof_tflops", p->roof.tflops);
            rl_set_num(ctx, "group_roof_tflops_q1", p->roof.tflops_q1);
            rl_set_num(ctx, "group_roof_tflops_q3", p->roof.tflops_q3);
        }
    }
}

static void write_row(rl_ctx *ctx, const rl_point *p)
{
    set_cells(ctx, ctx->exp->columns, p);
    if (rl_point_timed(p)) {
        if (!ctx->exp->observed) {
            rl_set_measurement(ctx, &p->m);
            set_rates(ctx, p);
        }
        set_cells(ctx, ctx->exp->derived, p);
    }
    bool failed = p->state == RL_POINT_FAILED, skipped = p->state == RL_POINT_SKIPPED;
    rl_set_str(ctx, "validated", failed ? "no" : skipped ? "" : "yes");
    if (!ctx->exp->observed)
        rl_set_num(ctx, "max_abs_err", p->max_abs_err);
    if (failed || skipped)
        rl_set_str(ctx, "skipped_reason", p->why);
    rl_end_row(ctx);
}

/* ---- the console table ------------------------------------------------------------ */

static int width_of(const char *fmt)
{
    const char *p = strchr(fmt, '%');
    return p ? abs(atoi(p + 1 + (p[1] == '-'))) : 8;
}

/* Text in a column's width, aligned as its format aligns its values. */
static void print_padded(const char *fmt, const char *text)
{
    printf(" %*s", fmt && strchr(fmt, '-') ? -width_of(fmt) : width_of(fmt), text);
}

static void print_header(const rl_column *table)
{
    printf("\n ");
    for (const rl_column *c = table; c->name || c->head; c++)
        if (c->head)
            print_padded(c->fmt, c->head);
    printf("\n");
}

static void print_line(rl_ctx *ctx, const rl_column *table, const rl_point *p)
{
    char buf[256];
    printf(" ");
    for (const rl_column *c = table; c->name || c->head; c++) {
        if (!c->head)
            continue;
        if (c->measured && !rl_point_timed(p)) {
            printf(" %*s", width_of(c->fmt), "-");
            continue;
        }
        if (is_text(c)) {
            printf(" ");
            printf(c->fmt, text_of(ctx, c, p, buf, sizeof buf));
            continue;
        }
        double v = number_of(ctx, c, p);
        if (isfinite(v)) {
            printf(" ");
            if (c->field == RL_INT_FIELD)
                printf(c->fmt, (int)v);
            else
                printf(c->fmt, v);
        } else {
            printf(" %*s", width_of(c->fmt), "-");
        }
    }
    if (p->state == RL_POINT_FAILED)
        printf("  FAILED validation: %s", p->why);
    printf("\n");
}

void rl_points_report_as(rl_ctx *ctx, const rl_points *s, const rl_column *table)
{
    rl_progress_clear();
    rl_ctx_csv *room = rl_csv_room(ctx);
    if (table && room->last_table != table) {
        print_header(table);
        room->last_table = table;
    }
    int skipped = 0, stopped = 0;
    for (int i = 0; i < s->n; i++) {
        write_row(ctx, &s->v[i]);
        stopped += rl_point_stopped(&s->v[i]);
        skipped += s->v[i].state == RL_POINT_SKIPPED && !rl_point_stopped(&s->v[i]);
        if (table && s->v[i].state != RL_POINT_SKIPPED)
            print_line(ctx, table, &s->v[i]);
    }
    if (table && skipped)
        printf("  (and %d point(s) not run: the budget left no time for them; the CSV has their rows)\n",
               skipped);
    if (table && stopped)
        printf("  (and %d point(s) not run: " RL_STOPPED_WHY "; the CSV has their rows)\n", stopped);
    fflush(stdout);
}

/* "op=cos variant=cos_cos_fused k=2 n=65536": the compare keys' values. */
void rl_point_key(rl_ctx *ctx, const rl_point *p, char *buf, size_t len)
{
    const char *keys = ctx->exp->compare_keys;
    size_t used = 0;
    buf[0] = '\0';
    for (const char *k = keys ? keys : ""; *k && used < len;) {
        size_t n = strcspn(k, ",");
        for (const rl_column *c = ctx->exp->columns; c && (c->name || c->head); c++) {
            if (!c->name || strlen(c->name) != n || strncmp(c->name, k, n))
                continue;
            char v[128];
            used += (size_t)snprintf(buf + used, len - used, "%s%.*s=%s", used ? " " : "", (int)n, k,
                                     cell(ctx, c, p, v, sizeof v));
        }
        k += n + (k[n] == ',');
    }
    if (!buf[0] && p->variant)
        snprintf(buf, len, "%s", p->variant->name);
}

/* "part=0 group=1 optional=0 variant=... op=cos k=1 n=65536 ...": what
 * --points prints of a point before it runs: where it is declared, and
 * every named column of the experiment's that a point has unmeasured. */
void rl_point_describe(rl_ctx *ctx, const rl_point *p, char *buf, size_t len)
{
    snprintf(buf, len, "part=%d group=%d optional=%d bytes=%.6g flops=%.6g footprint=%.6g", p->part,
             p->group, p->optional, p->bytes, p->flops, p->footprint);
    for (const rl_column *c = ctx->exp->columns; c && (c->name || c->head); c++) {
        char v[128];
        if (c->name && !c->measured)
            rl_appendf(buf, len, " %s=%s", c->name, cell(ctx, c, p, v, sizeof v));
    }
}

/* ---- ready-made columns ----------------------------------------------------------------- */

const char *rl_col_variant(rl_ctx *ctx, const rl_point *p, char *buf, size_t len)
{
    (void)ctx;
    snprintf(buf, len, "%s", p->variant ? p->variant->name : "");
    return buf;
}

double rl_col_number(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->variant ? p->variant->number : NAN;
}

double rl_col_time_us(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->seconds * 1e6;
}

double rl_col_time_ms(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->seconds * 1e3;
}

double rl_col_max_abs_err(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->max_abs_err;
}

double rl_col_gbps(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return rl_point_gbps(p);
}

double rl_col_tflops(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return rl_point_tflops(p);
}

double rl_col_mbu(rl_ctx *ctx, const rl_point *p) { return rl_point_mbu(ctx, p); }
double rl_col_mfu(rl_ctx *ctx, const rl_point *p) { return rl_point_mfu(ctx, p); }

double rl_col_vs_copy(rl_ctx *ctx, const rl_point *p)
{
    return rl_point_gbps(p) / rl_ceilings_get(ctx)->copy_gbps;
}

double rl_col_vs_dram_read(rl_ctx *ctx, const rl_point *p)
{
    return rl_point_gbps(p) / rl_ceilings_get(ctx)->bw[RL_DRAM][RL_READ].best;
}

rl_ratio rl_round_ratio(const double *num, const double *den, int n)
{
    if (n < 1)
        return RL_RATIO_NONE;
    double *q = malloc(sizeof(double) * (size_t)n);
    if (!q)
        rl_die(RL_EXIT_FAILED, "out of memory for a ratio's rounds");
    for (int k = 0; k < n; k++)
        q[k] = num[k] / den[k];
    rl_stats s = rl_stats_of(q, n);
    free(q);
    return (rl_ratio){s.median, s.q1, s.q3};
}

/* Rounds of one group timing, enough of them for quartiles. */
static bool paired(const rl_point *a, const rl_point *b)
{
    enum { MIN_PAIRED_ROUNDS = 3 };
    return a->round_s && b->round_s && a->timing && a->timing == b->timing &&
           a->rounds == b->rounds && a->rounds >= MIN_PAIRED_ROUNDS;
}

rl_ratio rl_time_ratio(const rl_point *num, const rl_point *den)
{
    if (!num || !den || !rl_point_timed(num) || !rl_point_timed(den))
        return RL_RATIO_NONE;
    if (paired(num, den))
        return rl_round_ratio(num->round_s, den->round_s, num->rounds);
    const rl_stats *a = &num->m.stats, *b = &den->m.stats;
    return (rl_ratio){a->median / b->median, a->q1 / b->q3, a->q3 / b->q1};
}

const char *rl_col_level(rl_ctx *ctx, const rl_point *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s", rl_point_roof(ctx, p).name);
    return buf;
}

double rl_col_bytes(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->bytes;
}

double rl_col_flops(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->flops;
}

double rl_col_footprint(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->footprint;
}

double rl_col_cache_resident(rl_ctx *ctx, const rl_point *p)
{
    return !rl_beyond_cache(ctx, p->footprint);
}

double rl_col_ai(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return rl_arith_intensity(p->flops, p->bytes);
}

/* Under the group's probes where it had them, as its MBU and MFU. */
double rl_col_attainable(rl_ctx *ctx, const rl_point *p)
{
    double gbps = rl_point_roof_gbps(ctx, p);
    double tflops = isfinite(p->roof.tflops) ? p->roof.tflops : rl_ceilings_get(ctx)->matrix_tflops;
    return rl_attainable(rl_arith_intensity(p->flops, p->bytes), tflops * 1e12, gbps * 1e9) / 1e12;
}

/* ---- a console table of other rows: the same discipline ---------------------------- */

static char conversion_of(const char *fmt)
{
    size_t n = strlen(fmt);
    return n ? fmt[n - 1] : 0;
}

void rl_grid_header(const rl_grid_column *cols)
{
    printf(" ");
    for (const rl_grid_column *c = cols; c->head; c++)
        print_padded(c->fmt, c->head);
    printf("\n");
}

void rl_grid_row(const rl_grid_column *cols, ...)
{
    va_list ap;
    va_start(ap, cols);
    printf(" ");
    for (const rl_grid_column *c = cols; c->head; c++) {
        char conv = conversion_of(c->fmt);
        if (conv == 's') {
            const char *s = va_arg(ap, const char *);
            print_padded(c->fmt, s && *s ? s : "-");
        } else if (conv == 'd') {
            printf(" ");
            printf(c->fmt, va_arg(ap, int));
        } else {
            double v = va_arg(ap, double);
            if (isfinite(v)) {
                printf(" ");
                printf(c->fmt, v);
            } else {
                print_padded(c->fmt, "-");
            }
        }
    }
    va_end(ap);
    printf("\n");
}

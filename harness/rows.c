/*
 * rows.c -- what an experiment writes into its CSV: metadata for the
 * header, and rows, column by column (the CSV room, rl_ctx_csv.h).
 */
#include "internal.h"
#include "rl_ctx_csv.h"

#include <stdarg.h>
#include <stdio.h>

void rl_meta(rl_ctx *ctx, const char *key, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rl_csv *csv = rl_csv_room(ctx)->csv;
    if (csv) /* a bare context (rl_begin_bare) writes no CSV */
        rl_csv_meta(csv, key, "%s", buf);
    if (ctx->args.list_points) /* --points: what the CSV's header would say, too */
        printf("meta %s=%s\n", key, buf);
}

void rl_set_str(rl_ctx *ctx, const char *column, const char *value)
{
    rl_csv_set_str(rl_csv_room(ctx)->csv, column, value);
}

void rl_set_num(rl_ctx *ctx, const char *column, double value)
{
    rl_csv_set_num(rl_csv_room(ctx)->csv, column, value);
}

void rl_set_int(rl_ctx *ctx, const char *column, long long value)
{
    rl_csv_set_int(rl_csv_room(ctx)->csv, column, value);
}

void rl_set_measurement(rl_ctx *ctx, const rl_measurement *m)
{
    rl_set_str(ctx, "cache", m->cache == RL_COLD ? "cold" : "hot");
    rl_set_int(ctx, "samples", m->stats.samples);
    rl_set_str(ctx, "stop_reason", rl_stop_reason_name(m->stop));
    rl_set_num(ctx, "time_us_median", m->stats.median * 1e6);
    rl_set_num(ctx, "time_us_q1", m->stats.q1 * 1e6);
    rl_set_num(ctx, "time_us_q3", m->stats.q3 * 1e6);
    rl_set_num(ctx, "time_us_min", m->stats.min * 1e6);
    rl_set_num(ctx, "time_us_mean", m->stats.mean * 1e6);
    rl_set_num(ctx, "rel_stddev", m->stats.rel_stddev);
}

void rl_end_row(rl_ctx *ctx)
{
    rl_csv *csv = rl_csv_room(ctx)->csv;
    rl_flag_row(ctx, csv);
    rl_csv_end_row(csv);
}

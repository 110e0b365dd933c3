/*
 * options.c -- what an experiment asks of its run's options: whether a
 * variant was selected (--variant), the cap on working sets, its own
 * options' numbers. Out of context.c, which keeps the life of a run.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool item_names(const char *item, size_t len, int number, const char *name);

bool rl_variant_selected(const rl_ctx *ctx, int number, const char *name)
{
    const char *list = ctx->args.variants;
    if (!list || !*list)
        return true;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (item_names(p, n, number, name))
            return true;
        p += n;
        if (*p == ',')
            p++;
    }
    return false;
}

/* Whether one item of a --variant list names this variant. */
static bool item_names(const char *item, size_t len, int number, const char *name)
{
    char num[16];
    snprintf(num, sizeof num, "%d", number);
    return (strlen(name) == len && !strncmp(item, name, len)) ||
           (strlen(num) == len && !strncmp(item, num, len));
}

/* Defaults sized for each mode; never more than a quarter of the memory. */
double rl_max_bytes(const rl_ctx *ctx)
{
    static const double GiB = 1024.0 * 1024 * 1024;
    double cap = ctx->args.max_bytes;
    if (!(cap > 0))
        cap = ctx->args.mode == RL_MODE_QUICK ? 0.25 * GiB : ctx->args.mode == RL_MODE_FULL ? 8 * GiB : 3 * GiB;
    double memory = ctx->kind == RL_CUDA ? ctx->dev->mem_bytes : rl_host_ram_bytes();
    return memory > 0 && cap > memory / 4 ? memory / 4 : cap;
}

bool rl_option_is(const char *value, const char *name)
{
    return !strcmp(value, "all") || !strcmp(value, name);
}

int rl_units(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? ctx->dev->sm_count : ctx->dev->threads;
}

double rl_option_number(const rl_ctx *ctx, const char *name, const char *value, double lo,
                        double hi, bool integer, const char *or_words)
{
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end || !(v >= lo && v <= hi) || (integer && v != (double)(long long)v))
        rl_die(RL_EXIT_USAGE, "exp-%s: --%s wants a %s %g..%g%s%s, not '%s'", ctx->exp->id, name,
               integer ? "whole number" : "number", lo, hi, or_words ? " or " : "",
               or_words ? or_words : "", value);
    return v;
}

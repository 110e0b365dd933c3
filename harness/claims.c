/*
 * claims.c -- an experiment's claims as data: each declared once (id,
 * text, the range in which it holds, how its value prints), and from that
 * one declaration the harness writes the prediction in the CSV header, the
 * "predicted" column of the verdict table, and the verdict itself.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void value_text(const rl_claim *c, double v, char *buf, size_t len)
{
    const char *unit = c->unit ? c->unit : "";
    if (!strcmp(unit, "%"))
        snprintf(buf, len, "%.*f %%", c->digits, v);
    else
        snprintf(buf, len, "%.*f%s%s", c->digits, v, unit[0] && unit[0] != 'x' ? " " : "", unit);
}

/* "1.7x to 2.3x", ">= 2.5x", "< 5 %", "within +-15 %"-style texts come
 * from the range; a claim may name its own (predicted_text). */
static void rl_claim_predicted(const rl_claim *c, double lo, double hi, char *buf, size_t len)
{
    char a[48], b[48];
    if (c->predicted_text) {
        snprintf(buf, len, "%s", c->predicted_text);
        return;
    }
    value_text(c, lo, a, sizeof a);
    value_text(c, hi, b, sizeof b);
    if (isinf(hi) && isinf(lo))
        snprintf(buf, len, "any");
    else if (isinf(hi))
        snprintf(buf, len, ">= %s", a);
    else if (isinf(lo) || lo == 0)
        snprintf(buf, len, "<= %s", b);
    else
        snprintf(buf, len, "%s to %s", a, b);
}

/* "fused_speedup" + "cos" -> "fused_speedup_cos"; the text gets " (cos)". */
static void scoped(const rl_claim *c, const char *scope, char *id, size_t idlen, char *text,
                   size_t textlen)
{
    bool s = scope && *scope;
    snprintf(id, idlen, "%s%s%s", c->id, s ? "_" : "", s ? scope : "");
    snprintf(text, textlen, "%s%s%s%s", c->text, s ? " (" : "", s ? scope : "", s ? ")" : "");
}

void rl_judge_within(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, double lo,
                     double hi, const char *note)
{
    char id[96], text[256], predicted[128], measured[64] = "-";
    scoped(c, scope, id, sizeof id, text, sizeof text);
    rl_claim_predicted(c, lo, hi, predicted, sizeof predicted);
    if (!isnan(value))
        value_text(c, value, measured, sizeof measured);
    rl_verdict_status st = rl_within(value, lo, hi);
    if (c->on_ceiling)
        rl_verdict_on_ceiling(ctx, id, text, predicted, measured, st, note);
    else
        rl_verdict(ctx, id, text, predicted, measured, st, note);
}

void rl_judge(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, const char *note)
{
    rl_judge_within(ctx, c, scope, value, c->lo, c->hi, note);
}

void rl_judge_status(rl_ctx *ctx, const rl_claim *c, const char *scope, const char *measured,
                     rl_verdict_status status, const char *note)
{
    char id[96], text[256], predicted[128];
    scoped(c, scope, id, sizeof id, text, sizeof text);
    rl_claim_predicted(c, c->lo, c->hi, predicted, sizeof predicted);
    if (c->on_ceiling)
        rl_verdict_on_ceiling(ctx, id, text, predicted, measured, status, note);
    else
        rl_verdict(ctx, id, text, predicted, measured, status, note);
}

/* The prediction in the CSV header and the story: every claim and its range. */
void rl_claims_prediction(const rl_experiment *e, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s", e->prediction ? e->prediction : "");
    for (const rl_claim *c = e->claims; c && c->id && used < len; c++) {
        char predicted[128];
        rl_claim_predicted(c, c->lo, c->hi, predicted, sizeof predicted);
        used += (size_t)snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : "", c->text,
                                 predicted);
    }
}

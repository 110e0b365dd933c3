/*
 * verdict.c -- each claim, what it predicts, what was measured, and
 * whether it holds; printed as a table and kept in verdicts.csv.
 */
#include "internal.h"
#include "rl_ctx_verdicts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rl_verdict_row {
    char id[64], claim[256], predicted[128], measured[160], note[400];
    rl_verdict_status status;
};

static const char *const VERDICT_COLUMNS[] = {"experiment", "id", "backend", "device", "label",
                                              "quick", "claim", "predicted", "measured",
                                              "verdict", "note", "date_utc", NULL};

rl_verdict_status rl_within(double x, double lo, double hi)
{
    /* A bound can be a measurement too (a quarter of a measured MFU): one
     * not measured judges nothing, as a value not measured does. */
    if (isnan(x) || isnan(lo) || isnan(hi))
        return RL_NOT_MEASURED;
    return lo <= x && x <= hi ? RL_HOLDS : RL_DOES_NOT_HOLD;
}

void rl_verdict(rl_ctx *ctx, const char *id, const char *claim, const char *predicted,
                const char *measured, rl_verdict_status status, const char *note)
{
    rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    p->rows = rl_grow(p->rows, p->n, &p->cap, 8, sizeof(rl_verdict_row), "verdicts");
    rl_verdict_row *v = &p->rows[p->n++];
    snprintf(v->id, sizeof v->id, "%s", id);
    snprintf(v->claim, sizeof v->claim, "%s", claim);
    snprintf(v->predicted, sizeof v->predicted, "%s", predicted);
    snprintf(v->measured, sizeof v->measured, "%s", measured ? measured : "");
    snprintf(v->note, sizeof v->note, "%s", note ? note : "");
    v->status = status;
}

bool rl_verdict_find(const rl_ctx *ctx, const char *id, rl_verdict_status *status,
                     const char **note)
{
    const rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    for (int i = p->n - 1; i >= 0; i--)
        if (!strcmp(p->rows[i].id, id)) {
            *status = p->rows[i].status;
            *note = p->rows[i].note;
            return true;
        }
    return false;
}

const char *rl_verdict_measured(const rl_ctx *ctx, const char *id)
{
    const rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    for (int i = p->n - 1; i >= 0; i--)
        if (!strcmp(p->rows[i].id, id))
            return p->rows[i].measured;
    return NULL;
}

void rl_verdict_on_ceiling(rl_ctx *ctx, const char *id, const char *claim, const char *predicted,
                           const char *measured, rl_verdict_status status, const char *note)
{
    const char *suspect = rl_ceiling_suspect_note(ctx);
    if (suspect)
        rl_verdict(ctx, id, claim, predicted, measured, RL_NOT_MEASURED, suspect);
    else
        rl_verdict(ctx, id, claim, predicted, measured, status, note);
}

void rl_verdicts_not_judged(rl_ctx *ctx, const char *why)
{
    rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    for (int i = 0; i < p->n; i++) {
        rl_verdict_row *v = &p->rows[i];
        char note[sizeof v->note];
        snprintf(note, sizeof note, "%s: not judged on part of its points (they read: %s)%s%.*s",
                 why, rl_verdict_name(v->status), v->note[0] ? "; " : "",
                 (int)(sizeof note / 2), v->note);
        snprintf(v->note, sizeof v->note, "%s", note);
        v->status = RL_NOT_MEASURED;
    }
}

bool rl_verdict_judged(const rl_ctx *ctx, const char *claim_id)
{
    size_t n = strlen(claim_id);
    const rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    for (int i = 0; i < p->n; i++) {
        const char *id = p->rows[i].id; /* the claim's id, or its id_scope */
        if (!strncmp(id, claim_id, n) && (id[n] == '\0' || id[n] == '_'))
            return true;
    }
    return false;
}

void rl_verdicts_print(rl_ctx *ctx)
{
    const rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    printf("\nverdicts (%s backend: %s)\n", rl_backend_name(ctx->kind), ctx->dev->name);
    printf("  %-44s %-16s %-24s %s\n", "claim", "predicted", "measured", "verdict");
    for (int i = 0; i < p->n; i++) {
        const rl_verdict_row *v = &p->rows[i];
        printf("  %-44s %-16s %-24s %s\n", v->claim, v->predicted, v->measured,
               rl_verdict_name(v->status));
        if (v->note[0])
            printf("  %-44s   %s\n", "", v->note);
    }
    if (p->n == 0)
        printf("  (none stated)\n");
}

/* Copies the rows of other experiments (or other backends) from an
 * existing verdicts.csv, read as every CSV is (rl_table_read) and
 * written back through the writer: the file is a
 * table of the latest verdict per experiment and backend, not a log. A
 * file that cannot be read (none yet) has no rows to keep. */
static void keep_other_rows(const char *path, const char *slug, const char *backend, rl_csv *c)
{
    char why[256];
    rl_table *old = rl_table_read(path, why, sizeof why);
    for (int r = 0; old && r < old->nrows; r++) {
        if (!strcmp(rl_table_get(old, r, "experiment"), slug) &&
            !strcmp(rl_table_get(old, r, "backend"), backend))
            continue;
        for (const char *const *col = VERDICT_COLUMNS; *col; col++)
            rl_csv_set_str(c, *col, rl_table_get(old, r, *col));
        rl_csv_end_row(c);
    }
    rl_table_free(old);
}

int rl_verdicts_write(rl_ctx *ctx)
{
    char path[1024], date[64];
    snprintf(path, sizeof path, "%s/%s/verdicts.csv", ctx->args.out_dir, ctx->label);
    rl_utc_now(date, sizeof date);
    /* From reading the other experiments' rows to the rename: another run
     * of this label (a Slurm array's next task) must not write in between. */
    int lock = rl_lock_beside(path);
    rl_csv *c = rl_csv_open(path, VERDICT_COLUMNS);
    rl_csv_meta(c, "about", "latest verdict per experiment and backend for label %s", ctx->label);
    const char *backend = rl_backend_name(ctx->kind);
    keep_other_rows(path, ctx->exp->slug, backend, c);
    const rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    for (int i = 0; i < p->n; i++) {
        const rl_verdict_row *v = &p->rows[i];
        rl_csv_set_str(c, "experiment", ctx->exp->slug);
        rl_csv_set_str(c, "id", v->id);
        rl_csv_set_str(c, "backend", backend);
        rl_csv_set_str(c, "device", ctx->dev->name);
        rl_csv_set_str(c, "label", ctx->label);
        rl_csv_set_str(c, "quick", ctx->args.quick ? "yes" : "no");
        rl_csv_set_str(c, "claim", v->claim);
        rl_csv_set_str(c, "predicted", v->predicted);
        rl_csv_set_str(c, "measured", v->measured);
        rl_csv_set_str(c, "verdict", rl_verdict_name(v->status));
        rl_csv_set_str(c, "note", v->note);
        rl_csv_set_str(c, "date_utc", date);
        rl_csv_end_row(c);
    }
    int rc = rl_csv_commit(c);
    rl_unlock(lock);
    return rc;
}

void rl_verdicts_free(rl_ctx *ctx)
{
    rl_ctx_verdicts *p = rl_verdicts_room(ctx);
    free(p->rows);
    *p = (rl_ctx_verdicts){0};
}

/*
 * variants.c -- what the harness does with a kernel family's one table
 * (kernels/common.h): --list, the --variant check, which rows run on this
 * backend, lookups by role, and what the charts learn of the rows from the
 * CSV's header. An experiment never writes these loops; it names its
 * families in its rl_experiment.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rl_kernel_backend(const rl_ctx *ctx) { return ctx->kind == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU; }

/* The row has this run's backend. */
static bool rl_variant_here(const rl_ctx *ctx, const kernel_family *f, const kernel_variant *v)
{
    return f->has(v, rl_kernel_backend(ctx));
}

bool rl_runs(const rl_ctx *ctx, const kernel_family *f, const kernel_variant *v)
{
    return rl_variant_here(ctx, f, v) && rl_variant_selected(ctx, v->number, v->name);
}

const kernel_variant *rl_variant_by_role(const rl_ctx *ctx, const kernel_family *f, const char *role)
{
    for (int i = 0; kernel_row(f, i)->name; i++) {
        const kernel_variant *v = kernel_row(f, i);
        if (v->role && !strcmp(v->role, role) && rl_runs(ctx, f, v))
            return v;
    }
    return NULL;
}

/* --list: every row of every family, and where it runs. */
void rl_families_list(const rl_ctx *ctx)
{
    for (const kernel_family *const *f = ctx->exp->families; f && *f; f++) {
        printf("variants of %s (kernels/%s, kernels/%s):\n", (*f)->name, (*f)->cpu_file,
               (*f)->cuda_file);
        for (int i = 0; kernel_row(*f, i)->name; i++) {
            const kernel_variant *v = kernel_row(*f, i);
            char where[32];
            snprintf(where, sizeof where, "%s%s%s", (*f)->has(v, KERNEL_CPU) ? "cpu" : "",
                     (*f)->has(v, KERNEL_CPU) && (*f)->has(v, KERNEL_CUDA) ? "+" : "",
                     (*f)->has(v, KERNEL_CUDA) ? "cuda" : "");
            char role[48] = "", detail[64] = "";
            if (v->role)
                snprintf(role, sizeof role, "  [role: %s]", v->role);
            if ((*f)->detail) {
                char d[48];
                (*f)->detail(v, d, sizeof d);
                snprintf(detail, sizeof detail, " (%s)", d);
            }
            printf("  %2d  %-22s %-9s %s%s%s\n", v->number, v->name, where, v->what, detail, role);
        }
    }
}

/* Whether one item of a --variant list names this row. */
static bool names(const char *item, size_t len, const kernel_variant *v)
{
    char num[16];
    snprintf(num, sizeof num, "%d", v->number);
    return (strlen(v->name) == len && !strncmp(item, v->name, len)) ||
           (strlen(num) == len && !strncmp(item, num, len));
}

static bool known_here(const rl_ctx *ctx, const char *item, size_t len)
{
    for (const kernel_family *const *f = ctx->exp->families; f && *f; f++)
        for (int i = 0; kernel_row(*f, i)->name; i++)
            if (rl_variant_here(ctx, *f, kernel_row(*f, i)) && names(item, len, kernel_row(*f, i)))
                return true;
    return false;
}

static void list_valid(const rl_ctx *ctx)
{
    int shown = 0;
    for (const kernel_family *const *f = ctx->exp->families; f && *f; f++)
        for (int i = 0; kernel_row(*f, i)->name; i++)
            if (rl_variant_here(ctx, *f, kernel_row(*f, i)))
                fprintf(stderr, "%s %d (%s)", shown++ ? "," : "", kernel_row(*f, i)->number,
                        kernel_row(*f, i)->name);
    fprintf(stderr, "\n");
}

/* A --variant item that names no variant of this backend is a usage error,
 * found before anything is opened or measured. */
bool rl_families_check(const rl_ctx *ctx)
{
    const char *list = ctx->args.variants;
    for (const char *p = list ? list : ""; *p;) {
        size_t len = strcspn(p, ",");
        if (!known_here(ctx, p, len)) {
            fprintf(stderr, "exp-%s: --variant: no variant '%.*s' on the %s backend; valid:",
                    ctx->exp->id, (int)len, p, rl_backend_name(ctx->kind));
            list_valid(ctx);
            return false;
        }
        p += len + (p[len] == ',');
    }
    return true;
}

/* What a chart needs of a family's rows, as header keys, so that no
 * plot.gp names a variant: which row has a role (role_<family>_<role>:
 * name, for the rows this backend has) and the words a key gives a row
 * (key_cpu_<family>_<name> and key_cuda_...: a CPU chart gives the CUDA
 * words beside its own). */
void rl_families_meta(rl_ctx *ctx)
{
    for (const kernel_family *const *f = ctx->exp->families; f && *f; f++)
        for (int i = 0; kernel_row(*f, i)->name; i++) {
            const kernel_variant *v = kernel_row(*f, i);
            if (!rl_variant_here(ctx, *f, v))
                continue;
            char key[160];
            if (v->role) { /* one row per role (tests/test_families.c) */
                snprintf(key, sizeof key, "role_%s_%s", (*f)->name, v->role);
                rl_meta(ctx, key, "%s", v->name);
            }
            static const char *const backend[2] = {[KERNEL_CPU] = "cpu", [KERNEL_CUDA] = "cuda"};
            for (int b = 0; b < 2; b++)
                if (v->key[b]) {
                    snprintf(key, sizeof key, "key_%s_%s_%s", backend[b], (*f)->name, v->name);
                    rl_meta(ctx, key, "%s", v->key[b]);
                }
        }
}

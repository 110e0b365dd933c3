/*
 * Experiment 02 -- prefill vs decode: arithmetic intensity, the roofline,
 * MFU vs MBU.
 *
 * One linear layer with a transformer's shape and FP16 weights, applied to
 * n tokens at once. At n = 1 (decode) each weight read from memory serves
 * one multiply-add: ~1 FLOP per byte, memory-bound, MBU near 1 and MFU a few
 * percent. As n grows (prefill, or batched decode) each weight serves n
 * tokens: time per step stays flat while the arithmetic hides under the
 * memory time, then the layer turns compute-bound and MFU climbs.
 *
 * Method: for each shape and each n, validate every variant of
 * kernels/gemv.{cu,c} against a double-precision reference on fresh random
 * inputs, then time it, rotating through enough copies of the weights that
 * they never sit in the last-level cache. See README.md.
 */
#include "exp02.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *shape_choice = "all";

static const rl_option OPTIONS[] = {
    {"shape", "SHAPE", "the layer, inputs x outputs: 4096x14336 (Llama 3 8B's MLP up-projection), "
     "8192x8192, or all", "4096x14336|8192x8192|all", &shape_choice},
    {0},
};

static const char *const COLUMNS[] = {
    "shape", "k", "rows", "n", "variant", "number", "flops", "bytes", "ai", "copies",
    "footprint_bytes", "cache_resident", RL_MEASUREMENT_COLUMNS, "tflops", "gbps", "mfu", "mbu",
    RL_ROOF_COLUMNS, "mfu_datasheet", "mbu_datasheet", "attainable_tflops", "time_per_token_us", "tokens_per_s",
    "validated", "validated_rows", "max_abs_err", "skipped_reason", NULL};

static const rl_experiment EXP02 = {
    .id = "02",
    .slug = "02-prefill-decode",
    .title = "Prefill vs decode: arithmetic intensity, the roofline, MFU vs MBU",
    .claim = "A linear layer applied to one token (decode, a GEMV) does ~1 FLOP per byte of "
             "weights: memory-bound, MBU near 1 and MFU a few percent. Applied to many tokens "
             "(prefill, a GEMM) it reuses each weight n times: time per step stays flat while "
             "batching is free, then the layer turns compute-bound and MFU climbs.",
    .source = "NVIDIA Deep Learning Performance Guide (GPU Performance Background; Matrix "
              "Multiplication: arithmetic intensity of linear layers); MBU as defined in "
              "Databricks, \"LLM Inference Performance Engineering: Best Practices\" (2023)",
    .prediction = "GPU: AI at n = 1 ~1 FLOP/B; MBU(1) >= 0.8; MFU(1) < 5 %; time per step at "
                  "n = 8 within 1.25x of n = 1; MFU >= 50 % for n >= 2048. CPU: the same "
                  "against the CPU's own ridge (README)",
    .columns = COLUMNS,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "shape,variant,n",
    .compare_value = "time_us_median",
};

static const shape SHAPES[] = {{"4096x14336", 4096, 14336}, {"8192x8192", 8192, 8192}};

/* Token counts: powers of two in a full run, fewer on the CPU (a 14336 x
 * 4096 x 512 SGEMM takes half a second there); a lab run keeps every point
 * a verdict needs and enough between them to draw the curves; a quick run
 * only what the verdicts need. */
static const int GPU_FULL[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 0};
static const int GPU_LAB[] = {1, 2, 4, 8, 32, 128, 512, 2048, 8192, 0};
static const int GPU_QUICK[] = {1, 2, 4, 8, 64, 512, 2048, 0};
static const int CPU_FULL[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 0};
static const int CPU_LAB[] = {1, 2, 4, 8, 32, 128, 512, 0};
static const int CPU_QUICK[] = {1, 2, 8, 128, 0};

static const int *token_counts(const rl_ctx *ctx)
{
    bool gpu = ctx->kind == RL_CUDA;
    switch (ctx->args.mode) {
    case RL_MODE_QUICK: return gpu ? GPU_QUICK : CPU_QUICK;
    case RL_MODE_FULL: return gpu ? GPU_FULL : CPU_FULL;
    default: return gpu ? GPU_LAB : CPU_LAB;
    }
}

/* Validation: every row of the layer while that costs at most 2^29
 * multiply-adds in double on the host (every GEMV point); beyond, the first
 * rows (at least 64) within 2^28: the same call with fewer rows. */
static int validation_rows(const shape *s, int n)
{
    double macs = (double)s->rows * s->k * n;
    if (macs <= 536870912.0)
        return s->rows;
    int v = (int)(268435456.0 / ((double)s->k * n)) / 64 * 64;
    return v < 64 ? 64 : v > s->rows ? s->rows : v;
}

/* ---- rates ---------------------------------------------------------------- */

double point_tflops(const point *p) { return gemv_flops(p->s->rows, p->s->k, p->n) / p->seconds / 1e12; }
double point_gbps(const point *p) { return gemv_bytes(p->s->rows, p->s->k, p->n) / p->seconds / 1e9; }
double point_ai(const point *p)
{
    return rl_arith_intensity(gemv_flops(p->s->rows, p->s->k, p->n), gemv_bytes(p->s->rows, p->s->k, p->n));
}
double point_mfu(const run *r, const point *p) { return rl_mfu(r->ctx, point_tflops(p)); }

/* A GEMV reads its weights and little else: the read pattern, at the level
 * where the rotating copies of the weights live. */
rl_roof point_roof(const run *r, const point *p) { return rl_roof_for(r->ctx, p->footprint, RL_READ); }

double point_mbu(const run *r, const point *p)
{
    rl_roof roof = point_roof(r, p);
    return rl_mbu(r->ctx, point_gbps(p), &roof);
}

/* ---- one shape's buffers --------------------------------------------------- */

typedef struct layer {
    const shape *s;
    int copies, nmax;
    fp16 *w, *x, *hw, *hx; /* device (copies of w), and host copies for the reference */
    float *y, *yval;
    void *scratch;
    double *ref_small;     /* every row, the first min(8, nmax) tokens */
    int ref_small_n;
} layer;

static fp16 *random_halves(rl_ctx *ctx, size_t n)
{
    float *f = rl_host_alloc(n * sizeof(float));
    fp16 *h = rl_host_alloc(n * sizeof(fp16));
    rl_fill_uniform(f, n, -1, 1, rl_next_seed(ctx));
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        h[i] = float_to_fp16(f[i]);
    rl_host_free(f);
    return h;
}

/* Enough copies of the weights to span 4x the last-level cache, as many
 * as --max-bytes allows (at least one). */
static int copies_for(const rl_ctx *ctx, const shape *s)
{
    double wbytes = 2.0 * s->rows * (double)s->k;
    int copies = (int)fmin(ceil(4 * ctx->dev->llc_bytes / wbytes), floor(rl_max_bytes(ctx) / wbytes));
    return copies < 1 ? 1 : copies;
}

static void layer_open(run *r, layer *L, const shape *s)
{
    rl_ctx *ctx = r->ctx;
    const int *ns = token_counts(ctx);
    size_t wn = (size_t)s->rows * s->k, scratch = 0, yval = 0;
    *L = (layer){.s = s};
    for (; *ns; ns++) {
        L->nmax = *ns > L->nmax ? *ns : L->nmax;
        size_t v = (size_t)validation_rows(s, *ns) * (size_t)*ns;
        yval = v > yval ? v : yval;
        for (const gemv_variant *g = r->table; g->name; g++)
            if (g->scratch_bytes && g->launch) {
                size_t b = g->scratch_bytes(s->rows, s->k, *ns);
                scratch = b > scratch ? b : scratch;
            }
    }
    double wbytes = 2.0 * (double)wn;
    L->copies = copies_for(ctx, s);
    L->hw = random_halves(ctx, wn);
    L->hx = random_halves(ctx, (size_t)L->nmax * s->k);
    L->w = rl_alloc(ctx->be, wbytes * L->copies);
    for (int c = 0; c < L->copies; c++)
        rl_upload(ctx->be, L->w + c * wn, L->hw, wbytes);
    L->x = rl_alloc(ctx->be, (size_t)L->nmax * s->k * 2);
    rl_upload(ctx->be, L->x, L->hx, (size_t)L->nmax * s->k * 2);
    L->y = rl_alloc(ctx->be, (size_t)L->nmax * s->rows * 4);
    L->yval = rl_alloc(ctx->be, yval * 4);
    L->scratch = scratch ? rl_alloc(ctx->be, scratch) : NULL;
    L->ref_small_n = L->nmax < GEMV_MAX_BATCH ? L->nmax : GEMV_MAX_BATCH;
    L->ref_small = rl_host_alloc(sizeof(double) * (size_t)L->ref_small_n * s->rows);
    gemv_reference(L->ref_small, L->hw, L->hx, s->rows, s->k, L->ref_small_n);
}

static void layer_close(rl_ctx *ctx, layer *L)
{
    rl_free(ctx->be, L->w);
    rl_free(ctx->be, L->x);
    rl_free(ctx->be, L->y);
    rl_free(ctx->be, L->yval);
    if (L->scratch)
        rl_free(ctx->be, L->scratch);
    rl_host_free(L->hw);
    rl_host_free(L->hx);
    rl_host_free(L->ref_small);
}

/* ---- validate, then time ----------------------------------------------------- */

static void launch_job(void *p)
{
    job *j = p;
    j->a.w = j->w0 + (size_t)j->next * j->copy_elems;
    j->next = (j->next + 1) % j->copies;
    j->v->launch(&j->a);
}

static double footprint_of(const layer *L, int n)
{
    return 2.0 * L->s->rows * L->s->k * L->copies + 2.0 * L->s->k * n + 4.0 * L->s->rows * n;
}

static void validate_point(run *r, layer *L, const gemv_variant *v, int n)
{
    rl_ctx *ctx = r->ctx;
    const shape *s = L->s;
    point *p = &r->pts[r->npts++];
    size_t wn = (size_t)s->rows * s->k;
    *p = (point){.s = s, .v = v, .n = n, .validated_rows = validation_rows(s, n),
                 .footprint = footprint_of(L, n)};
    p->job = (job){v, {L->y, L->w, L->x, s->rows, s->k, n, L->scratch, rl_stream(ctx->be)},
                   L->w, wn, L->copies, 0};
    int vr = p->validated_rows;
    job check = {v, {L->yval, L->w, L->x, vr, s->k, n, L->scratch, rl_stream(ctx->be)}, L->w, 0, 1, 0};
    double *want = L->ref_small, *own = NULL;
    if (vr != s->rows || n > L->ref_small_n) { /* a reference of its own: the first vr rows */
        own = want = rl_host_alloc(sizeof(double) * (size_t)vr * n);
        gemv_reference(want, L->hw, L->hx, vr, s->k, n);
    }
    rl_check c = rl_validate_f32(ctx->be, launch_job, &check, L->yval, (size_t)vr * n, want,
                                 gemv_atol(s->k), 0);
    if (own)
        rl_host_free(own);
    p->ok = c.ok;
    p->max_abs_err = c.max_abs_err;
    if (!c.ok) {
        rl_check_describe(&c, p->why, sizeof p->why);
        fprintf(stderr, "exp-02: %s (%s, n=%d) %s\n", v->name, s->name, n, p->why);
        ctx->failures++;
    }
}

static void time_points(run *r, int first)
{
    rl_work works[MAX_POINTS];
    point *members[MAX_POINTS];
    rl_measurement m[MAX_POINTS];
    int count = 0;
    for (int i = first; i < r->npts; i++)
        if (r->pts[i].ok) {
            members[count] = &r->pts[i];
            works[count++] = (rl_work){r->pts[i].v->name, launch_job, &r->pts[i].job};
        }
    if (count == 0)
        return;
    rl_progress_step(r->ctx, "%s n=%d..%d", members[0]->s->name, members[0]->n,
                     members[count - 1]->n);
    rl_measure_group(r->ctx, works, count, m);
    for (int i = 0; i < count; i++) {
        members[i]->m = m[i];
        members[i]->seconds = m[i].stats.median;
    }
}

/* ---- output ------------------------------------------------------------------- */


static void write_row(run *r, const layer *L, const point *p)
{
    rl_ctx *ctx = r->ctx;
    const rl_ceilings *c = r->ceil;
    double flops = gemv_flops(p->s->rows, p->s->k, p->n), bytes = gemv_bytes(p->s->rows, p->s->k, p->n);
    double footprint = p->footprint;
    rl_set_str(ctx, "shape", p->s->name);
    rl_set_int(ctx, "k", p->s->k);
    rl_set_int(ctx, "rows", p->s->rows);
    rl_set_int(ctx, "n", p->n);
    rl_set_str(ctx, "variant", p->v->name);
    rl_set_int(ctx, "number", p->v->number);
    rl_set_num(ctx, "flops", flops);
    rl_set_num(ctx, "bytes", bytes);
    rl_set_num(ctx, "ai", rl_arith_intensity(flops, bytes));
    rl_set_int(ctx, "copies", L->copies);
    rl_set_num(ctx, "footprint_bytes", footprint);
    rl_set_int(ctx, "cache_resident", !rl_beyond_cache(ctx, footprint));
    rl_roof roof = point_roof(r, p);
    rl_set_num(ctx, "attainable_tflops",
               rl_attainable(rl_arith_intensity(flops, bytes), c->matrix_tflops * 1e12, roof.gbps * 1e9) / 1e12);
    rl_set_str(ctx, "validated", p->ok ? "yes" : "no");
    rl_set_int(ctx, "validated_rows", p->validated_rows);
    rl_set_num(ctx, "max_abs_err", p->max_abs_err);
    if (p->ok) {
        rl_set_measurement(ctx, &p->m);
        rl_set_num(ctx, "tflops", point_tflops(p));
        rl_set_num(ctx, "gbps", point_gbps(p));
        rl_set_num(ctx, "mfu", point_mfu(r, p));
        rl_set_num(ctx, "mbu", point_mbu(r, p));
        rl_set_roof(ctx, &roof);
        rl_set_num(ctx, "mfu_datasheet", point_tflops(p) / c->sheet_tflops);
        rl_set_num(ctx, "mbu_datasheet", point_gbps(p) / c->sheet_gbps);
        rl_set_num(ctx, "time_per_token_us", p->seconds / p->n * 1e6);
        rl_set_num(ctx, "tokens_per_s", p->n / p->seconds);
    } else {
        rl_set_str(ctx, "skipped_reason", p->why);
    }
    rl_end_row(ctx);
}

static void print_point(const run *r, const point *p)
{
    printf("  %-10s %5d  %-16s", p->s->name, p->n, p->v->name);
    if (!p->ok) {
        printf("  FAILED validation\n");
        return;
    }
    printf(" %11.1f %8.3f %8.1f %7.1f %6.3f %-8s %6.3f %11.0f\n", p->seconds * 1e6,
           point_tflops(p), point_gbps(p), point_ai(p), point_mfu(r, p), point_roof(r, p).name,
           point_mbu(r, p), p->n / p->seconds);
}

/* ---- the sweep ---------------------------------------------------------------- */

static bool runs_at(const rl_ctx *ctx, const gemv_variant *v, int n)
{
    return v->launch && (!v->max_n || n <= v->max_n) && rl_variant_selected(ctx, v->number, v->name);
}

/* The GEMV points (n <= 8) are timed as one group: the batching verdict
 * compares them. Each larger n is a group of its own. */
static void sweep_shape(run *r, const shape *s)
{
    rl_ctx *ctx = r->ctx;
    layer L;
    layer_open(r, &L, s);
    const int *ns = token_counts(ctx);
    for (int i = 0; ns[i];) {
        int first = r->npts;
        do {
            for (const gemv_variant *v = r->table; v->name; v++)
                if (runs_at(ctx, v, ns[i]) && r->npts < MAX_POINTS)
                    validate_point(r, &L, v, ns[i]);
            i++;
        } while (ns[i] && ns[i] <= GEMV_MAX_BATCH && ns[i - 1] <= GEMV_MAX_BATCH);
        time_points(r, first);
        rl_progress_clear();
        for (int j = first; j < r->npts; j++) {
            write_row(r, &L, &r->pts[j]);
            print_point(r, &r->pts[j]);
        }
        fflush(stdout);
    }
    layer_close(ctx, &L);
}

static const gemv_variant *table_for(rl_backend_kind kind)
{
#ifdef RL_HAVE_CUDA
    if (kind == RL_CUDA)
        return gemv_cuda_variants;
#endif
    (void)kind;
    return gemv_cpu_variants;
}

static void list_variants(const run *r)
{
    printf("variants of kernels/%s:\n", r->ctx->kind == RL_CUDA ? "gemv.cu" : "cpu/gemv.c");
    for (const gemv_variant *v = r->table; v->name; v++) {
        char what[256], range[32] = "any n";
        if (v->max_n)
            snprintf(range, sizeof range, v->max_n == 1 ? "n = 1" : "n <= %d", v->max_n);
        snprintf(what, sizeof what, "%s (%s)", v->what, range);
        rl_list_variant(v->number, v->name, what);
    }
}

static bool shape_selected(const shape *s)
{
    return !strcmp(shape_choice, "all") || !strcmp(shape_choice, s->name);
}

/* The plan: per shape, the GEMV points as one group, then one group per
 * larger n; each call at the roofline's time. */
static void plan(run *r)
{
    rl_ctx *ctx = r->ctx;
    const int *ns = token_counts(ctx);
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const shape *s = &SHAPES[i];
        if (!shape_selected(s))
            continue;
        double weights = 2.0 * s->rows * (double)s->k, footprint = weights * copies_for(ctx, s);
        int members = 0;
        double call_s = 0;
        for (int j = 0; ns[j]; j++) {
            for (const gemv_variant *v = r->table; v->name; v++)
                if (runs_at(ctx, v, ns[j])) {
                    members++;
                    call_s = fmax(call_s, rl_estimate_call_s(ctx, gemv_bytes(s->rows, s->k, ns[j]),
                        footprint, RL_READ, gemv_flops(s->rows, s->k, ns[j])));
                }
            /* as sweep_shape groups them: n <= 8 together, larger n alone */
            if (!ns[j + 1] || ns[j + 1] > GEMV_MAX_BATCH || ns[j] > GEMV_MAX_BATCH) {
                if (members)
                    rl_plan_group(ctx, members, call_s);
                members = 0;
                call_s = 0;
            }
        }
    }
    rl_plan_print(ctx);
}

static void check_variants(const run *r)
{
    int numbers[32], n = 0;
    const char *names[32];
    for (const gemv_variant *v = r->table; v->name && n < 32; v++)
        if (v->launch) {
            numbers[n] = v->number;
            names[n++] = v->name;
        }
    rl_check_variants(r->ctx, numbers, names, n);
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP02, argc, argv);
    run *r = calloc(1, sizeof *r);
    r->ctx = ctx;
    r->table = table_for(ctx->kind);
    check_variants(r);
    if (ctx->args.list) {
        list_variants(r);
        free(r);
        return rl_end(ctx);
    }
    r->ceil = rl_ceilings_get(ctx);
    const int *ns = token_counts(ctx);
    char list[160] = "";
    for (int i = 0; ns[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? " " : "", ns[i]);
    rl_meta(ctx, "shapes", "%s (inputs x outputs; FP16 weights and tokens, FP32 outputs)", shape_choice);
    rl_meta(ctx, "tokens", "n = %s", list);
    rl_meta(ctx, "bytes_model", "2 rows k (weights) + 2 k n (tokens in) + 4 rows n (out): each once");
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol k * 2^-20; every "
            "row while rows k n <= 2^29, else the first rows (>= 64) within 2^28 multiply-adds");
    rl_meta(ctx, "ridge_flop_per_byte", "%.1f (measured ceilings)", measured_ridge(r));
    plan(r);

    printf("\n  %-10s %5s  %-16s %11s %8s %8s %7s %6s %-8s %6s %11s\n", "shape", "n", "variant",
           "time/us", "TFLOP/s", "GB/s", "AI", "MFU", "level", "MBU", "tokens/s");
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (shape_selected(&SHAPES[i])) {
            sweep_shape(r, &SHAPES[i]);
            judge_shape(r, &SHAPES[i]);
        }
    free(r);
    return rl_end(ctx);
}

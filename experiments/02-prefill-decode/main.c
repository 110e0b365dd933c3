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
 * Method: for each shape, every variant of kernels/gemv.c at every n is a
 * point: the harness validates it against a double-precision reference on
 * fresh random inputs, then times it, the call rotating through enough
 * copies of the weights that they never sit in the last-level cache. The
 * GEMV points (n <= 8) are timed as one group: the batching verdict
 * compares them. See README.md.
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

static const shape SHAPES[] = {{"4096x14336", 4096, 14336}, {"8192x8192", 8192, 8192}};

/* ---- the columns ------------------------------------------------------------- */

static double col_ai(rl_ctx *c, const rl_point *p) { (void)c; return rl_arith_intensity(p->flops, p->bytes); }
static double col_per_token_us(rl_ctx *c, const rl_point *p) { (void)c; return p->seconds / call_of(p)->n * 1e6; }
static double col_tokens_per_s(rl_ctx *c, const rl_point *p) { (void)c; return call_of(p)->n / p->seconds; }

/* The roofline's attainable rate at this point's intensity, against the
 * roof of the level its weights live in. */
static double col_attainable(rl_ctx *c, const rl_point *p)
{
    rl_roof roof = rl_point_roof(c, p);
    return rl_attainable(rl_arith_intensity(p->flops, p->bytes),
                         rl_ceilings_get(c)->matrix_tflops * 1e12, roof.gbps * 1e9) / 1e12;
}

static const rl_column COLUMNS[] = {
    RL_TEXT("shape", NULL, NULL, call, shape),
    RL_INT("k", NULL, NULL, call, k),
    RL_INT("rows", NULL, NULL, call, rows),
    RL_INT("n", NULL, NULL, call, n),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    {"flops", NULL, NULL, .num = rl_col_flops},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"ai", NULL, NULL, .num = col_ai},
    RL_INT("copies", NULL, NULL, call, copies),
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    {"cache_resident", NULL, NULL, .num = rl_col_cache_resident},
    RL_INT("validated_rows", NULL, NULL, call, validated_rows),
    {0},
};

static const rl_column DERIVED[] = {
    {"attainable_tflops", NULL, NULL, .num = col_attainable},
    {"time_per_token_us", NULL, NULL, .num = col_per_token_us},
    {"tokens_per_s", NULL, NULL, .num = col_tokens_per_s},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "shape", "%-10s", call, shape),
    RL_INT(NULL, "n", "%5d", call, n),
    {NULL, "variant", "%-16s", .str = rl_col_variant},
    RL_COLUMN_TIME_US,
    RL_COLUMN_TFLOPS,
    RL_COLUMN_GBPS,
    {NULL, "AI", "%7.1f", .num = col_ai},
    RL_COLUMN_MFU,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    {NULL, "tokens/s", "%11.0f", .num = col_tokens_per_s, .measured = true},
    {0},
};

static const kernel_family *const FAMILIES[] = {&gemv_family, NULL};

extern const rl_claim EXP02_CLAIMS[]; /* judge.c */

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
    .prediction = "on a GPU the claim's numbers; on the CPU the same claims against the CPU's "
                  "own ridge (README)",
    .claims = EXP02_CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "shape,variant,n",
    .compare_value = "time_us_median",
};

/* ---- the sweep -------------------------------------------------------------- */

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
    return ctx->kind == RL_CUDA ? RL_BY_MODE(ctx, GPU_QUICK, GPU_LAB, GPU_FULL)
                                : RL_BY_MODE(ctx, CPU_QUICK, CPU_LAB, CPU_FULL);
}

static bool shape_selected(const shape *s)
{
    return !strcmp(shape_choice, "all") || !strcmp(shape_choice, s->name);
}

static bool runs_at(const rl_ctx *ctx, const gemv_variant *v, int n)
{
    return rl_runs(ctx, &gemv_family, KERNEL_VARIANT(v)) && (!v->max_n || n <= v->max_n);
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

/* Enough copies of the weights to span 4x the last-level cache, as many
 * as --max-bytes allows (at least one). */
static int copies_for(const rl_ctx *ctx, const shape *s)
{
    double wbytes = 2.0 * s->rows * (double)s->k;
    int copies = (int)fmin(ceil(4 * ctx->dev->llc_bytes / wbytes), floor(rl_max_bytes(ctx) / wbytes));
    return copies < 1 ? 1 : copies;
}

/* ---- one shape's buffers ------------------------------------------------------------ */

typedef struct layer {
    const shape *s;
    int copies, nmax;
    fp16 *w, *x, *hw, *hx; /* device (copies of w), and host copies for the reference */
    float *y, *yval;
    void *scratch;
    call *calls;           /* one per point */
    double *ref;           /* the last reference computed: its rows and tokens */
    int ref_rows, ref_n;
} layer;

static fp16 *random_halves(rl_ctx *ctx, size_t n)
{
    fp16 *h = rl_host_alloc(n * sizeof(fp16));
    rl_fill_uniform_f16(h, n, -1, 1, rl_next_seed(ctx));
    return h;
}

/* The largest scratch any variant asks for, on the CPU (CUDA asks none). */
static size_t scratch_bytes(const rl_ctx *ctx, const shape *s, const int *ns)
{
    size_t most = 0;
    for (; *ns && ctx->kind == RL_CPU; ns++)
        for (const gemv_variant *v = gemv_variants; v->name; v++)
            if (v->cpu_scratch && runs_at(ctx, v, *ns)) {
                size_t b = v->cpu_scratch(s->rows, s->k, *ns);
                most = b > most ? b : most;
            }
    return most;
}

static void layer_open(rl_ctx *ctx, layer *L, const shape *s)
{
    const int *ns = token_counts(ctx);
    size_t wn = (size_t)s->rows * s->k, yval = 0, scratch = scratch_bytes(ctx, s, ns);
    *L = (layer){.s = s, .copies = copies_for(ctx, s)};
    for (int i = 0; ns[i]; i++) {
        L->nmax = ns[i] > L->nmax ? ns[i] : L->nmax;
        size_t v = (size_t)validation_rows(s, ns[i]) * (size_t)ns[i];
        yval = v > yval ? v : yval;
    }
    double wbytes = 2.0 * (double)wn;
    L->hw = random_halves(ctx, wn);
    L->hx = random_halves(ctx, (size_t)L->nmax * s->k);
    L->w = rl_alloc(ctx->be, wbytes * L->copies);
    for (int c = 0; c < L->copies; c++)
        rl_upload(ctx->be, L->w + c * wn, L->hw, wbytes);
    L->x = rl_alloc_copy(ctx->be, L->hx, (size_t)L->nmax * s->k * 2);
    L->y = rl_alloc(ctx->be, (size_t)L->nmax * s->rows * 4);
    L->yval = rl_alloc(ctx->be, yval * 4);
    L->scratch = scratch ? rl_alloc(ctx->be, scratch) : NULL;
}

static void layer_close(rl_ctx *ctx, layer *L)
{
    rl_free(ctx->be, L->w);
    rl_free(ctx->be, L->x);
    rl_free(ctx->be, L->y);
    rl_free(ctx->be, L->yval);
    rl_free(ctx->be, L->scratch);
    rl_host_free(L->hw);
    rl_host_free(L->hx);
    rl_host_free(L->ref);
    free(L->calls);
}

/* ---- a point: one call, and how it is validated --------------------------------- */

static void run_call(void *arg)
{
    call *c = arg;
    c->a.w = c->w0 + (size_t)c->next * c->copy_elems;
    c->next = (c->next + 1) % c->copies;
    c->launch(&c->a);
}

/* The reference of the first rows at n tokens: the variants at one n
 * share it, so it is computed once. */
static const double *reference(layer *L, int rows, int n)
{
    if (!L->ref || L->ref_rows != rows || L->ref_n != n) {
        rl_host_free(L->ref);
        L->ref = rl_host_alloc(sizeof(double) * (size_t)rows * n);
        gemv_reference(L->ref, L->hw, L->hx, rows, L->s->k, n);
        L->ref_rows = rows;
        L->ref_n = n;
    }
    return L->ref;
}

/* Validation runs the same call on the first validated_rows rows (all of
 * them while the host's reference is cheap), on the first copy of the
 * weights. */
static void run_check(void *arg)
{
    call *c = arg;
    c->launch(&c->check);
}

static void prepare_check(rl_ctx *ctx, rl_point *p)
{
    (void)ctx;
    const call *c = p->data;
    p->want = reference(c->L, c->validated_rows, c->n);
}

/* Every variant at every n: the GEMV points (n <= 8) as one group, each
 * larger n a group of its own. */
static void declare_points(rl_ctx *ctx, rl_points *pts, layer *L)
{
    const shape *s = L->s;
    const int *ns = token_counts(ctx);
    int count = 0, gemv_group = rl_points_new_group(pts);
    for (int i = 0; ns[i]; i++)
        count += rl_family_size(&gemv_family);
    L->calls = calloc((size_t)count, sizeof *L->calls);
    if (!L->calls)
        rl_die(RL_EXIT_FAILED, "out of memory");
    call *c = L->calls;
    for (int i = 0; ns[i]; i++) {
        int n = ns[i], group = n <= GEMV_MAX_BATCH ? gemv_group : rl_points_new_group(pts);
        for (const gemv_variant *v = gemv_variants; v->name; v++) {
            if (!runs_at(ctx, v, n))
                continue;
            *c = (call){.shape = s->name, .k = s->k, .rows = s->rows, .n = n, .L = L, .s = s, .v = v, .launch = RL_LAUNCHER(ctx, v),
                        .a = {L->y, L->w, L->x, s->rows, s->k, n, L->scratch, rl_stream(ctx->be)},
                        .w0 = L->w, .hw = L->hw, .hx = L->hx, .copy_elems = (size_t)s->rows * s->k,
                        .copies = L->copies, .validated_rows = validation_rows(s, n)};
            c->check = (gemv_args){L->yval, L->w, L->x, c->validated_rows, s->k, n, L->scratch,
                                   rl_stream(ctx->be)};
            double weights = 2.0 * s->rows * (double)s->k;
            rl_points_add(pts, &(rl_point){
                .variant = KERNEL_VARIANT(v), .group = group, .run = run_call, .arg = c,
                .data = c, .check_run = run_check, .check_arg = c, .prepare = prepare_check,
                .out = L->yval, .count = (size_t)c->validated_rows * n, .atol = gemv_atol(s->k),
                .flops = gemv_flops(s->rows, s->k, n), .bytes = gemv_bytes(s->rows, s->k, n),
                .footprint = weights * L->copies + 2.0 * s->k * n + 4.0 * s->rows * n,
                .pattern = RL_READ});
            c++;
        }
    }
}

/* ---- main ------------------------------------------------------------------------- */

static void describe(rl_ctx *ctx)
{
    const int *ns = token_counts(ctx);
    char list[160] = "";
    for (int i = 0; ns[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? " " : "", ns[i]);
    rl_meta(ctx, "shapes", "%s (inputs x outputs; FP16 weights and tokens, FP32 outputs)", shape_choice);
    rl_meta(ctx, "tokens", "n = %s", list);
    rl_meta(ctx, "bytes_model", "2 rows k (weights) + 2 k n (tokens in) + 4 rows n (out): each once");
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol k * 2^-20; every "
            "row while rows k n <= 2^29, else the first rows (>= 64) within 2^28 multiply-adds");
    rl_meta(ctx, "ridge_flop_per_byte", "%.1f (measured ceilings: compute roof / DRAM read)",
            measured_ridge(ctx));
}

/* The plan, from points declared on empty layers: their counts and bytes. */
static void plan(rl_ctx *ctx)
{
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        if (!shape_selected(&SHAPES[i]))
            continue;
        rl_points pts = {0};
        layer L = {.s = &SHAPES[i], .copies = copies_for(ctx, &SHAPES[i])};
        declare_points(ctx, &pts, &L);
        rl_points_plan(ctx, &pts);
        rl_points_free(&pts);
        free(L.calls);
    }
    rl_plan_print(ctx);
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP02, argc, argv);
    rl_ceilings_get(ctx);
    describe(ctx);
    plan(ctx);
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        if (!shape_selected(&SHAPES[i]))
            continue;
        layer L;
        rl_points pts = {0};
        layer_open(ctx, &L, &SHAPES[i]);
        declare_points(ctx, &pts, &L);
        rl_points_measure(ctx, &pts);
        rl_points_report(ctx, &pts);
        judge_shape(ctx, &pts, &SHAPES[i]);
        rl_points_free(&pts);
        layer_close(ctx, &L);
    }
    return rl_end(ctx);
}

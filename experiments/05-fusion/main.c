/*
 * Experiment 05 -- fusion: x.cos().cos() as two kernels vs one.
 *
 * Each element-wise kernel reads its input from memory and writes its
 * output back. Two cosines as two kernels cross the memory bus four times;
 * fused into one kernel, twice. When the op is cheap next to moving a
 * float, time follows memory trips, not arithmetic.
 *
 * Method: for sizes from 2^16 elements to several times the last-level
 * cache, every variant of kernels/fusion.c is a point: the harness
 * validates it against a double-precision reference on fresh random
 * inputs, then times it, the variants of one size together. At the
 * largest size, the chain variants sweep k = 1..8. See README.md.
 */
#include "fusion.h"
#include "rooflab.h"

#include <math.h>
#include <stdio.h>

static const char *op_choice = "all";

static const rl_option OPTIONS[] = {
    {"op", "OP", "cos (the claim's op), affine (one FMA, memory-bound anywhere) or all",
     "cos|affine|all", &op_choice},
    {0},
};

enum { MAX_K = 8, MAX_CALLS = 64 }; /* MAX_CALLS: the points of one size */

/* One call of one variant: what a point runs, and its columns. */
typedef struct call {
    const char *op;
    int k, n; /* n: elements */
    const fusion_variant *v;
    void (*launch)(const fusion_args *a);
    fusion_args a;
    const rl_points *all; /* the size's points: the unfused twin, for the speedup */
} call;

static void run_call(void *arg)
{
    const call *c = arg;
    c->launch(&c->a);
}

static const call *call_of(const rl_point *p) { return p->data; }

/* The unfused point with the same op, size and k, preferring the same
 * family (pair or chain): a fused point's twin, for its speedup. */
static const rl_point *unfused_twin(const rl_point *p)
{
    const call *c = call_of(p);
    const rl_point *twin = NULL;
    for (int i = 0; i < c->all->n; i++) {
        const rl_point *q = &c->all->v[i];
        const call *d = call_of(q);
        if (rl_point_timed(q) && !d->v->fused && d->op == c->op && d->k == c->k &&
            d->v->libm == c->v->libm && /* the same cos: the vector one or the C library's */
            (!twin || d->v->k == c->v->k))
            twin = q;
    }
    return twin;
}

/* A fused point's speedup: its twin's time over its own, with the spread
 * of both times (rl_time_ratio), so that a chart can draw the ratio's bars
 * from the same two points. NaN on an unfused point. */
static rl_ratio speedup_of(const rl_point *p)
{
    return rl_time_ratio(call_of(p)->v->fused ? unfused_twin(p) : NULL, p);
}

static double speedup(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return speedup_of(p).median;
}

static double speedup_lo(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return speedup_of(p).lo;
}

static double speedup_hi(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return speedup_of(p).hi;
}

static const rl_column COLUMNS[] = {
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_TEXT("op", NULL, NULL, call, op),
    RL_INT("k", NULL, NULL, call, k),
    RL_INT("n", NULL, NULL, call, n),
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"cache_resident", NULL, NULL, .num = rl_col_cache_resident},
    {0},
};

static const rl_column DERIVED[] = {
    {"speedup_vs_unfused", NULL, NULL, .num = speedup},
    {"speedup_vs_unfused_lo", NULL, NULL, .num = speedup_lo},
    {"speedup_vs_unfused_hi", NULL, NULL, .num = speedup_hi},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "op", "%-7s", call, op),
    RL_INT(NULL, "n", "%10d", call, n),
    {NULL, "variant", "%-20s", .str = rl_col_variant},
    RL_INT(NULL, "k", "%2d", call, k),
    RL_COLUMN_TIME_US,
    RL_COLUMN_GBPS,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    {NULL, "speedup", "%7.2f", .num = speedup, .measured = true},
    {0},
};

enum { FUSED_SPEEDUP, FUSED_VS_ONE_OP };

static const rl_claim CLAIMS[] = {
    [FUSED_SPEEDUP] = {"fused_speedup", "fused/unfused speedup, 2 ops", 1.7, 2.3, "x", 2},
    [FUSED_VS_ONE_OP] = {"fused_vs_one_op", "fused 2 ops / one op, time", 0.85, 1.15, "x", 2},
    {0},
};

static const kernel_family *const FAMILIES[] = {&fusion_family, NULL};

static const rl_experiment EXP05 = {
    .id = "05",
    .slug = "05-fusion",
    .title = "Fusion: x.cos().cos() as two kernels vs one",
    .claim = "Element-wise ops are memory-bound: x.cos().cos() as two kernels reads and writes "
             "memory four times, fused only twice, so the fused kernel is ~2x faster and about "
             "as fast as a single x.cos().",
    .source = "Horace He, \"Making Deep Learning Go Brrrr From First Principles\" (2022)",
    .prediction = "at the largest size (beyond the cache where --max-bytes allows, else judged "
                  "against the cache it fits), per op; unfused time grows with the chain length "
                  "k, fused stays flat until the op turns compute-bound",
    .claims = CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "op,variant,k,n",
    .compare_value = "time_us_median",
};

/* ---- sizes ------------------------------------------------------------------- */

/* The claim is about memory traffic, so the largest size should defeat
 * the cache: input plus output at least 8x the GPU's L2, or 4x the CPU's
 * LLC; but in, out and tmp together stay within --max-bytes. */
static size_t largest_n(const rl_ctx *ctx)
{
    double factor = ctx->kind == RL_CUDA ? 8 : 4;
    double cap = rl_max_bytes(ctx) / (3.0 * sizeof(float));
    size_t n = 1 << 16;
    while (2.0 * (double)n * sizeof(float) < factor * ctx->dev->llc_bytes && 2.0 * n <= cap)
        n *= 2;
    return n;
}

/* 2^16 .. nmax: doubling in a full run, quadrupling in a lab run; a quick
 * run keeps 2^16 and nmax. */
static size_t next_size(const rl_ctx *ctx, size_t n, size_t nmax)
{
    size_t next = RL_BY_MODE(ctx, nmax, n * 4, n * 2);
    return n < nmax && next > nmax ? nmax : next > n ? next : n * 2;
}

/* Pair variants run at every size at their own k; chain variants only at
 * the largest size, over k = 1..8 in a full run, else k = 1, 2, 4, 8; the
 * C library's cos rows only for op cos. */
static bool runs_at(const rl_ctx *ctx, const fusion_variant *v, fusion_op op, int k, size_t n,
                    size_t nmax)
{
    if (!rl_runs(ctx, &fusion_family, KERNEL_VARIANT(v)) || (v->libm && op != FUSION_COS))
        return false;
    if (v->k)
        return v->k == k;
    bool swept = ctx->args.mode == RL_MODE_FULL || k == 1 || k == 2 || k == 4 || k == 8;
    return n == nmax && swept;
}

/* ---- one part: one op at one size ------------------------------------------------ */

typedef struct run {
    fusion_op ops[2];
    size_t sizes[48];      /* 2^16 .. nmax */
    int nops, nsizes;
    float *in, *out, *tmp; /* on the backend's device */
    double *ref;           /* host: op^k(input), one op at a time */
    call calls[MAX_CALLS];
} run;

/* The parts: every size of the first op, then of the second. Every point
 * of a part: the pair variants as one group, each chain length as one, the
 * C library's cos rows as one (ten times slower, they would only stretch
 * the others' rounds). live: on fresh inputs, each point validated as it
 * is declared, while ref holds op^k of the input. */
static void declare_part(rl_ctx *ctx, rl_points *pts, int part, bool live, void *arg)
{
    run *r = arg;
    fusion_op op = r->ops[part / r->nsizes];
    size_t n = r->sizes[part % r->nsizes], nmax = r->sizes[r->nsizes - 1];
    if (live) {
        float *host = rl_host_random(ctx, n, -4.0f, 4.0f);
        rl_upload(ctx->be, r->in, host, n * sizeof(float));
        for (size_t i = 0; i < n; i++)
            r->ref[i] = host[i];
        rl_host_free(host);
    }
    int kmax = n == nmax ? MAX_K : 2, used = 0;
    int pair_group = rl_points_new_group(pts), libm_group = rl_points_new_group(pts);
    for (int k = 1; k <= kmax; k++) {
        if (live)
            fusion_reference_step(r->ref, n, op); /* ref now holds op^k(input) */
        int chain_group = 0;
        for (const fusion_variant *v = fusion_variants; v->name; v++) {
            if (!runs_at(ctx, v, op, k, n, nmax))
                continue;
            if (used == MAX_CALLS)
                rl_die(RL_EXIT_FAILED, "exp-05: more than %d points at one size: raise MAX_CALLS",
                       MAX_CALLS);
            if (!v->k && !chain_group)
                chain_group = rl_points_new_group(pts);
            call *c = &r->calls[used++];
            *c = (call){fusion_op_name(op), k, (int)n, v, RL_LAUNCHER(ctx, v),
                        {r->out, r->in, r->tmp, n, k, op, rl_stream(ctx->be)}, pts};
            rl_point *p = rl_points_add(pts, &(rl_point){
                .variant = KERNEL_VARIANT(v),
                .group = v->libm ? libm_group : v->k ? pair_group : chain_group,
                .run = run_call, .arg = c, .data = c, .out = r->out, .count = n, .want = r->ref,
                .atol = FUSION_ATOL, .rtol = FUSION_RTOL, .bytes = v->bytes(n, k),
                .footprint = fusion_footprint(v, n, k), .flops = fusion_flops(op, n, k),
                .pattern = RL_COPY});
            if (live)
                rl_point_validate(ctx, p);
        }
    }
}

/* ---- verdicts -------------------------------------------------------------------- */

/* Which regime did this op run in? A single pass that moves data at half
 * the roof or more is memory-bound; one that cannot is limited by the op's
 * arithmetic, and fusion can then save little. A working set that spills
 * from one level to the next is judged against the slower one. */
static void describe_regime(rl_ctx *ctx, const rl_point *one, char *buf, size_t len)
{
    if (!one) {
        snprintf(buf, len, "regime unknown (one_op not measured)");
        return;
    }
    rl_roof roof = rl_point_roof(ctx, one);
    double gbps = rl_point_gbps(one), mbu = rl_point_mbu_spilled(ctx, one);
    const char *level = roof.name, *op = call_of(one)->op;
    if (mbu >= 0.5)
        snprintf(buf, len, "memory-bound: one %s pass moves %.0f GB/s, %.2f of the %s copy "
                 "bandwidth", op, gbps, mbu, level);
    else
        snprintf(buf, len, "compute-bound: one %s pass moves only %.1f GB/s, %.2f of the %s copy "
                 "bandwidth, so arithmetic, not memory, sets the time", op, gbps, mbu, level);
}

/* The verdicts compare times at the largest size. Beyond the cache they
 * are about device memory, the claim's own setting; when --max-bytes keeps
 * the arrays in a cache, the same ratios are judged there, and say so. */
static void judge(rl_ctx *ctx, const rl_points *pts, fusion_op op, size_t nmax)
{
    const rl_point *one = rl_points_find(pts, "one_op", NULL, NULL),
                   *unfused = rl_points_find(pts, "pair_unfused", NULL, NULL),
                   *fused = rl_points_find(pts, "pair_fused", NULL, NULL);
    char note[600], regime[200];
    describe_regime(ctx, one, regime, sizeof regime);
    double footprint = 2.0 * (double)nmax * sizeof(float); /* in + out */
    if (!rl_beyond_cache(ctx, footprint)) {
        char size[32];
        rl_format_bytes(footprint, size, sizeof size);
        snprintf(note, sizeof note, "judged in the %s: the largest arrays (%s) are under 4x the "
                 "last-level cache (--max-bytes); %s", rl_roof_for(ctx, footprint, RL_COPY).name,
                 size, regime);
    } else {
        snprintf(note, sizeof note, "%s", regime);
    }
    /* A fused pass slower than one op's pass: the second op's arithmetic
     * shows through, and the fused kernel leaves part of the roof unused. */
    if (one && fused && fused->seconds > CLAIMS[FUSED_VS_ONE_OP].hi * one->seconds) {
        double mbu = rl_point_mbu_spilled(ctx, fused);
        rl_appendf(note, sizeof note, "; the fused pass (two %s per element) moves %.2f of the "
                   "roof, its arithmetic not hidden under the memory time", call_of(fused)->op, mbu);
    }
    const char *name = fusion_op_name(op);
    rl_judge(ctx, &CLAIMS[FUSED_SPEEDUP], name, unfused && fused ? unfused->seconds / fused->seconds : NAN, note);
    rl_judge(ctx, &CLAIMS[FUSED_VS_ONE_OP], name, fused && one ? fused->seconds / one->seconds : NAN, note);
}

/* After an op's largest size, whose points are still in pts: its verdicts. */
static void judge_part(rl_ctx *ctx, const rl_points *pts, int part, void *arg)
{
    const run *r = arg;
    if (part % r->nsizes == r->nsizes - 1)
        judge(ctx, pts, r->ops[part / r->nsizes], r->sizes[r->nsizes - 1]);
}

/* ---- main ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP05, argc, argv);
    run r = {0};
    for (fusion_op op = FUSION_COS; op <= FUSION_AFFINE; op++)
        if (rl_option_is(op_choice, fusion_op_name(op)))
            r.ops[r.nops++] = op;

    rl_ceilings_get(ctx);
    size_t nmax = largest_n(ctx);
    for (size_t n = 1 << 16; n <= nmax; n = next_size(ctx, n, nmax))
        r.sizes[r.nsizes++] = n;
    char big[32];
    rl_format_bytes((double)nmax * sizeof(float), big, sizeof big);
    rl_meta(ctx, "ops", "%s", op_choice);
    rl_meta(ctx, "sizes", "n = 2^16 .. %zu floats (%s per array), %s", nmax, big,
            RL_BY_MODE(ctx, "2^16 and the largest", "quadrupling", "doubling"));
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol %g, rtol %g",
            FUSION_ATOL, FUSION_RTOL);

    r.in = rl_alloc(ctx->be, nmax * sizeof(float));
    r.out = rl_alloc(ctx->be, nmax * sizeof(float));
    r.tmp = rl_alloc(ctx->be, nmax * sizeof(float));
    r.ref = rl_host_alloc(nmax * sizeof(double));
    rl_points_sweep(ctx, r.nops * r.nsizes, declare_part, judge_part, &r);
    rl_free(ctx->be, r.in);
    rl_free(ctx->be, r.out);
    rl_free(ctx->be, r.tmp);
    rl_host_free(r.ref);
    return rl_end(ctx);
}

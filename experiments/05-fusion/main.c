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
 *
 * The file reads top to bottom: the claims, the axes (sizes, chain
 * lengths, ops), the point (one call of one variant), the judgement, and
 * last the columns and the experiment that ties them together.
 */
#include "fusion.h"
#include "rooflab.h"

#include <math.h>
#include <stdio.h>

/* ---- the claims --------------------------------------------------------------------- */

enum { FUSED_SPEEDUP, FUSED_VS_ONE_OP };

static const rl_claim CLAIMS[] = {
    /* Claims about memory-bound passes: judged where one op's pass and the
     * unfused pair read at least 0.7 of their group's roof (README). */
    [FUSED_SPEEDUP] = {"fused_speedup", "fused/unfused speedup, 2 ops", 1.7, 2.3, "x", 2,
                       .premise_mbu = 0.7},
    [FUSED_VS_ONE_OP] = {"fused_vs_one_op", "fused 2 ops / one op, time", 0.85, 1.15, "x", 2,
                         .premise_mbu = 0.7},
    {0},
};

/* ---- the axes ------------------------------------------------------------------------ */

/* The claim is about memory traffic, so the largest size should defeat
 * the cache: input plus output at least 8x the GPU's L2, or 4x the CPU's
 * LLC; but in, out and tmp together stay within --max-bytes. */
static double largest_n(const rl_ctx *ctx)
{
    double factor = ctx->kind == RL_CUDA ? 8 : 4;
    double cap = rl_max_bytes(ctx) / (3.0 * sizeof(float));
    size_t n = 1 << 16;
    while (2.0 * (double)n * sizeof(float) < factor * ctx->dev->llc_bytes && 2.0 * n <= cap)
        n *= 2;
    return (double)n;
}

/* Elements per array, 2^16 to the largest: a quick run keeps the two ends,
 * a lab run quadruples, a full run doubles. The verdicts read the largest. */
static const rl_axis SIZE = RL_AXIS("n", RL_ENDS(1 << 16), RL_TIMES(1 << 16, 4),
                                    RL_TIMES(1 << 16, 2), .top = largest_n);
/* The chain length k: the chain variants sweep it at the largest size;
 * a pair variant runs at its own k (1 or 2) at every size. */
static const rl_axis CHAIN_K = RL_AXIS("k", RL_LIST(1, 2, 4, 8), RL_LIST(1, 2, 4, 8),
                                       RL_LIST(1, 2, 3, 4, 5, 6, 7, 8));
static const rl_axis *const AXES[] = {&SIZE, &CHAIN_K, NULL};

/* The op is the reader's choice, not the mode's: each op chosen is a sweep. */
static const char *op_choice = "all";

static const rl_option OPTIONS[] = {
    {"op", "OP", "cos (the claim's op), affine (one FMA, memory-bound anywhere) or all",
     "cos|affine|all", &op_choice},
    {0},
};

static bool op_chosen(fusion_op op) { return rl_option_is(op_choice, fusion_op_name(op)); }

/* ---- the point: one call of one variant ------------------------------------------------ */

/* A part is one op at one size: its buffers, made when it opens (the
 * input, drawn fresh, and the reference op^ref_k(input), stepped up as its
 * points are validated in order of k), and its groups: the pair variants
 * as one, the C library's cos rows as one (ten times slower, they would
 * only stretch the others' rounds); each chain length is a group of its own. */
typedef struct size_part {
    fusion_op op;
    size_t n;
    float *in, *out, *tmp; /* on the backend's device */
    float *host_in;        /* the input, on the host: a reference starts from it */
    double *ref;           /* host */
    int ref_k;
    int pair_group, libm_group;
} size_part;

/* One call of one variant: what a point runs, and its columns. */
typedef struct exp05_call {
    const char *op;
    int k, n; /* n: elements */
    const fusion_variant *v;
    fusion_call kernel; /* its pointers bound when the point is prepared */
    size_part *at;      /* the part (op and size) it runs in */
} exp05_call;

static void open_size(rl_ctx *ctx, void *state)
{
    size_part *s = state;
    size_t n = s->n;
    s->in = rl_alloc(ctx->be, n * sizeof(float));
    s->out = rl_alloc(ctx->be, n * sizeof(float));
    s->tmp = rl_alloc(ctx->be, n * sizeof(float));
    s->ref = rl_host_alloc(n * sizeof(double));
    s->host_in = rl_host_random(ctx, n, -4.0f, 4.0f);
    rl_upload(ctx->be, s->in, s->host_in, n * sizeof(float));
    s->ref_k = -1; /* made at the first point's validation */
}

static void close_size(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    size_part *s = state;
    rl_free(ctx->be, s->in);
    rl_free(ctx->be, s->out);
    rl_free(ctx->be, s->tmp);
    rl_host_free(s->host_in);
    rl_host_free(s->ref);
}

/* Binds the call to its part's buffers, and brings the reference to
 * op^k(input): stepped up from the last k (the points come in order of k,
 * but under --budget the verdicts' groups come first), or from the input. */
static void prepare_call(rl_ctx *ctx, rl_point *p)
{
    exp05_call *c = RL_DATA_MUT(exp05_call, p);
    size_part *s = c->at;
    if (s->ref_k < 0 || s->ref_k > c->k) {
        for (size_t i = 0; i < s->n; i++)
            s->ref[i] = s->host_in[i];
        s->ref_k = 0;
    }
    for (; s->ref_k < c->k; s->ref_k++)
        fusion_reference_step(s->ref, s->n, s->op);
    c->kernel.args = (fusion_args){s->out, s->in, s->tmp, s->n, c->k, s->op, rl_stream(ctx->be)};
    p->out = s->out;
    p->want = s->ref;
}

/* A new size of the op (the sweep's state): its part and its groups. */
static void open_part(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    size_part *s = RL_NEW(ctx, size_part);
    *s = (size_part){.op = *(const fusion_op *)state, .n = rl_at_size(at, &SIZE)};
    *part = (rl_part){.open = open_size, .done = close_size, .state = s};
    s->pair_group = rl_group_new(ctx);
    s->libm_group = rl_group_new(ctx);
}

/* A pair variant runs at its own k, a chain variant at the largest size;
 * the C library's cos rows only for op cos. */
static bool runs_at(const rl_ctx *ctx, const fusion_variant *v, fusion_op op, int k, bool largest)
{
    if (!rl_runs(ctx, &fusion_family, KERNEL_VARIANT(v)) || (v->libm && op != FUSION_COS))
        return false;
    return v->k ? v->k == k : largest;
}

/* Every variant that runs at one size and chain length. */
static void variants_at(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    size_part *s = at->part_state;
    int k = rl_at_int(at, &CHAIN_K), chain_group = 0;
    bool largest = rl_at_last(at, &SIZE);
    size_t n = s->n;
    for (const fusion_variant *v = fusion_variants; v->name; v++) {
        if (!runs_at(ctx, v, s->op, k, largest))
            continue;
        if (!v->k && !chain_group)
            chain_group = rl_group_new(ctx);
        exp05_call *c = RL_NEW(ctx, exp05_call);
        *c = (exp05_call){fusion_op_name(s->op), k, (int)n, v, {.launch = RL_LAUNCHER(ctx, v)}, s};
        rl_point_add(ctx, &(rl_point){
            .variant = KERNEL_VARIANT(v),
            .group = v->libm ? s->libm_group : v->k ? s->pair_group : chain_group,
            .call = fusion_kernel_call(&c->kernel), RL_POINT_DATA(c),
            .prepare = prepare_call, .count = n, .atol = FUSION_ATOL, .rtol = FUSION_RTOL,
            .bytes = v->bytes(n, k), .footprint = fusion_footprint(v, n, k),
            .flops = fusion_flops(s->op, n, k), .pattern = RL_COPY,
            /* the verdicts compare the pair variants at the largest size */
            .optional = !(largest && v->k && !v->libm)});
    }
}

/* Each op chosen: every size a part, every chain length at it. */
static void declare(rl_ctx *ctx)
{
    size_t nmax = (size_t)rl_axis_last(ctx, &SIZE);
    char big[32];
    rl_format_bytes((double)nmax * sizeof(float), big, sizeof big);
    rl_meta(ctx, "ops", "%s", op_choice);
    rl_meta(ctx, "sizes", "n = 2^16 .. %zu floats (%s per array), %s", nmax, big,
            RL_BY_MODE(ctx, "2^16 and the largest", "quadrupling", "doubling"));
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol %g, rtol %g",
            FUSION_ATOL, FUSION_RTOL);
    for (fusion_op op = FUSION_COS; op <= FUSION_AFFINE; op++)
        if (op_chosen(op))
            rl_sweep_declare(ctx, &(rl_sweep){AXES, .part_axes = 1, .part = open_part,
                                              .points = variants_at, .state = &op});
}

/* ---- the judgement ----------------------------------------------------------------------- */

/* Which regime did this op run in? A single pass that moves data at half
 * the roof or more is memory-bound; one that cannot is limited by the op's
 * arithmetic, and fusion can then save little. The roof is the one its
 * MBU is taken against (a working set that spills from one level to the
 * next: what the spill runs at, rl_roof). */
static void describe_regime(rl_ctx *ctx, const rl_point *one, char *buf, size_t len)
{
    if (!one) {
        snprintf(buf, len, "regime unknown (one_op not measured)");
        return;
    }
    double gbps = rl_point_gbps(one), mbu = rl_point_mbu(ctx, one);
    const char *op = RL_DATA(exp05_call, one)->op;
    char roof[160];
    rl_point_roof_text(ctx, one, roof, sizeof roof);
    if (mbu >= 0.5)
        snprintf(buf, len, "memory-bound: one %s pass moves %.0f GB/s, %.2f of %s", op, gbps, mbu,
                 roof);
    else
        snprintf(buf, len, "compute-bound: one %s pass moves only %.1f GB/s, %.2f of %s, so "
                 "arithmetic, not memory, sets the time", op, gbps, mbu, roof);
}

/* Where the verdicts are judged: beyond the cache, device memory, the
 * claim's own setting; when --max-bytes keeps the arrays in a cache, the
 * same ratios are judged there, and the note says so. */
static void where_judged(rl_ctx *ctx, size_t nmax, const char *regime, char *note, size_t len)
{
    double footprint = 2.0 * (double)nmax * sizeof(float); /* in + out */
    if (rl_beyond_cache(ctx, footprint)) {
        snprintf(note, len, "%s", regime);
        return;
    }
    char size[32];
    rl_format_bytes(footprint, size, sizeof size);
    snprintf(note, len, "judged in the %s: the largest arrays (%s) are under 4x the last-level "
             "cache (--max-bytes); %s", rl_roof_for(ctx, footprint, RL_COPY).name, size, regime);
}

static bool of_op_and_size(const rl_point *p, const void *key)
{
    const exp05_call *c = RL_DATA(exp05_call, p), *want = key;
    return c->op == want->op && c->n == want->n;
}

/* Both claims presume the fused pass memory-bound too: it moves the same
 * bytes as one op's pass, so it should take about as long. Where it takes
 * longer than one op's pass by more than 1 / FUSED_PACE (one op's pass is
 * the yardstick: the copy probe can be slower), its arithmetic, not the
 * bytes, sets its time, and a failure would be the arithmetic's. Whether
 * two cos per element fit under one pass's memory time can change with
 * the minute on a shared VM: the fused pass's time stays, one op's moves
 * with the memory (README, Method). */
static const double FUSED_PACE = 0.7;

/* And the premise in its own terms: the two ops' arithmetic fits under one
 * pass's memory time. Where it takes more than this share of it, even a
 * perfect overlap leaves the fused pass too little slack to stay within
 * the claim's 1.15x of one pass (README, Method). */
static const double FUSED_ARITH_SHARE = 0.8;

/* The arithmetic of one op over the largest arrays: the slope of the fused
 * chain's time over its length k, between the two longest chains timed.
 * Where the chain is compute-bound that is one op's arithmetic; where it
 * is still memory-bound the slope is smaller than the arithmetic, but then
 * k ops of it hide under one trip, and two do all the more. NaN where
 * fewer than two chains were timed. */
static double one_op_arithmetic_s(const rl_points *all, const exp05_call *key)
{
    const rl_point *longest = NULL, *next = NULL;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        const exp05_call *c = RL_DATA(exp05_call, p);
        if (!rl_point_timed(p) || !rl_point_has_role(p, "chain_fused") ||
            !of_op_and_size(p, key))
            continue;
        if (!longest || c->k > RL_DATA(exp05_call, longest)->k) {
            next = longest;
            longest = p;
        } else if (!next || c->k > RL_DATA(exp05_call, next)->k) {
            next = p;
        }
    }
    if (!longest || !next)
        return NAN;
    int dk = RL_DATA(exp05_call, longest)->k - RL_DATA(exp05_call, next)->k;
    return dk > 0 ? fmax(0, longest->seconds - next->seconds) / dk : NAN;
}

/* The verdicts compare the pair variants' times at the largest size. */
static void judge_op(rl_ctx *ctx, const rl_points *all, fusion_op op, size_t nmax)
{
    const exp05_call key = {.op = fusion_op_name(op), .n = (int)nmax};
    const rl_point *one = rl_points_find(all, "one_op", of_op_and_size, &key),
                   *unfused = rl_points_find(all, "pair_unfused", of_op_and_size, &key),
                   *fused = rl_points_find(all, "pair_fused", of_op_and_size, &key);
    char note[720], regime[320];
    describe_regime(ctx, one, regime, sizeof regime);
    where_judged(ctx, nmax, regime, note, sizeof note);
    /* A fused pass slower than one op's pass: the second op's arithmetic
     * shows through, and the fused kernel leaves part of the roof unused. */
    if (one && fused && fused->seconds > CLAIMS[FUSED_VS_ONE_OP].hi * one->seconds)
        rl_appendf(note, sizeof note, "; the fused pass (two %s per element) moves %.2f of the "
                   "roof, its arithmetic not hidden under the memory time", key.op,
                   rl_point_mbu(ctx, fused));
    rl_premise pr = rl_premise_start();
    rl_premise_memory_bound(ctx, &pr, &CLAIMS[FUSED_SPEEDUP], one, "one_op's pass");
    rl_premise_memory_bound(ctx, &pr, &CLAIMS[FUSED_SPEEDUP], unfused, "the unfused pair");
    rl_premise_within_bytes(&pr, unfused, fused, "pair_fused over pair_unfused");
    char fused_what[64];
    snprintf(fused_what, sizeof fused_what, "the fused pass (two %s per element)", key.op);
    rl_premise_times_alike_to_fail(&pr, one, "one op's pass over the same bytes", fused, fused_what,
                                   FUSED_PACE, "the fused pass's arithmetic, not the bytes, sets "
                                   "its time here, so a failure would be the arithmetic's");
    char arith_what[96];
    snprintf(arith_what, sizeof arith_what, "two %s per element (the fused chain's slope over k)",
             key.op);
    rl_premise_hides_under_to_fail(&pr, 2 * one_op_arithmetic_s(all, &key), arith_what,
                                   one ? one->seconds : NAN, "one op's pass (its memory trip)",
                                   FUSED_ARITH_SHARE, "on this machine the pair's arithmetic "
                                   "does not fit under one trip through memory, so the op is not "
                                   "memory-bound here and a failure would be the arithmetic's");
    /* on the ratios with their spread: a verdict the noise could turn is
     * "not measured", never its opposite */
    rl_judge_ratio_given(ctx, &CLAIMS[FUSED_SPEEDUP], key.op, rl_time_ratio(unfused, fused), &pr,
                         note);
    rl_judge_ratio_given(ctx, &CLAIMS[FUSED_VS_ONE_OP], key.op, rl_time_ratio(fused, one), &pr,
                         note);
}

static void judge(rl_ctx *ctx, const rl_points *all)
{
    size_t nmax = (size_t)rl_axis_last(ctx, &SIZE);
    for (fusion_op op = FUSION_COS; op <= FUSION_AFFINE; op++)
        if (op_chosen(op))
            judge_op(ctx, all, op, nmax);
}

/* ---- the columns ---------------------------------------------------------------------------- */

/* The unfused point with the same op, size and k, and the same cos (the
 * vector one or the C library's): a fused point's twin, for its speedup. */
static bool unfused_twin_of(const rl_point *q, const void *fused)
{
    const exp05_call *d = RL_DATA(exp05_call, q), *c = RL_DATA(exp05_call, fused);
    return !d->v->fused && d->op == c->op && d->k == c->k && d->n == c->n &&
           d->v->libm == c->v->libm;
}

/* ... of the same family, pair or chain, where there is one. */
static bool unfused_twin_in_family(const rl_point *q, const void *fused)
{
    return unfused_twin_of(q, fused) &&
           RL_DATA(exp05_call, q)->v->k == RL_DATA(exp05_call, fused)->v->k;
}

static const rl_point *unfused_twin(rl_ctx *ctx, const rl_point *p)
{
    const rl_points *all = rl_points_all(ctx);
    const rl_point *twin = rl_points_find_last(all, NULL, unfused_twin_in_family, p);
    return twin ? twin : rl_points_find(all, NULL, unfused_twin_of, p);
}

/* A fused point's speedup: its twin's time over its own, with the spread
 * of both times (rl_time_ratio), so that a chart can draw the ratio's bars
 * from the same two points. NaN on an unfused point. */
static rl_ratio speedup_of(rl_ctx *ctx, const rl_point *p)
{
    return rl_time_ratio(RL_DATA(exp05_call, p)->v->fused ? unfused_twin(ctx, p) : NULL, p);
}

static double speedup(rl_ctx *ctx, const rl_point *p) { return speedup_of(ctx, p).median; }

static const rl_column COLUMNS[] = {
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_TEXT("op", NULL, NULL, exp05_call, op),
    RL_INT("k", NULL, NULL, exp05_call, k),
    RL_INT("n", NULL, NULL, exp05_call, n),
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"cache_resident", NULL, NULL, .num = rl_col_cache_resident},
    {0},
};

static const rl_column DERIVED[] = {
    RL_RATIO_COLUMNS("speedup_vs_unfused", speedup_of),
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "op", "%-7s", exp05_call, op),
    RL_INT(NULL, "n", "%10d", exp05_call, n),
    {NULL, "variant", "%-20s", .str = rl_col_variant},
    RL_INT(NULL, "k", "%2d", exp05_call, k),
    RL_COLUMN_TIME_US,
    RL_COLUMN_GBPS,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    {NULL, "speedup", "%7.2f", .num = speedup, .measured = true},
    {0},
};

/* ---- the experiment ---------------------------------------------------------------------- */

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
    .probes = RL_PROBE_BANDWIDTH,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "op,variant,k,n",
    .compare_value = "time_us_median",
    .declare = declare,
    .judge = judge,
};

int main(int argc, char **argv) { return rl_main(&EXP05, argc, argv); }

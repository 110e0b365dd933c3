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
 *
 * The file reads top to bottom: the claims, the axes (shapes and token
 * counts), a point (one call of one variant at one n), the verdicts, then
 * the columns and the experiment that names them all.
 */
#include "gemv.h"
#include "rl_weights.h"
#include "rooflab.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the claims ------------------------------------------------------------------ */

/* On the GPU the ranges are the claim's. On the CPU the same claims are
 * judged against the CPU's own ceilings: its ridge point R (compute roof
 * over DRAM read bandwidth: a few FLOP/B on a two-core server slice, near
 * 200 on a data-centre GPU) decides which n is still "nearly free" and
 * which is compute-bound. README.md, "Tolerances", derives each rule. */
enum { AI_DECODE, MBU_DECODE, MFU_DECODE_GPU, MFU_DECODE_CPU, MFU_PREFILL, BATCHING_FREE };

static const rl_claim EXP02_CLAIMS[] = {
    [AI_DECODE] = {"ai_decode", "arithmetic intensity at n = 1 (counted)", 0.9, 1.1, "FLOP/B", 3,
                   .predicted_text = "~1 FLOP/B", .counted = true},
    /* judged where the GEMV reads at least 0.7 of its group's roof: below,
     * its instructions, not the bytes, set its time (README, Tolerances) */
    [MBU_DECODE] = {"mbu_decode", "MBU at n = 1 (gemv_fp16)", 0.8, INFINITY, "", 2, .on_ceiling = true,
                    .premise_mbu = 0.7},
    [MFU_DECODE_GPU] = {"mfu_decode", "MFU at n = 1 (gemv_fp16)", 0, 5, "%", 2, .on_ceiling = true},
    /* the CPU's bound is a quarter of its own compute-bound MFU: set at run
     * time; judged where the GEMV is memory-bound, as the MBU claim, and
     * where the ridge at its roof leaves room under the bound (README,
     * Tolerances) */
    [MFU_DECODE_CPU] = {"mfu_decode", "MFU at n = 1, vs MFU when compute-bound", 0, NAN, "%", 1,
                        .on_ceiling = true, .predicted_text = "< 1/4 of the compute-bound MFU",
                        .premise_mbu = 0.7},
    [MFU_PREFILL] = {"mfu_prefill", "MFU when compute-bound", 50, INFINITY, "%", 1, .on_ceiling = true},
    /* judged where the step at n = 1 reads at least 1 / 1.25 of its
     * roof, the claim's own band (a slower one could make it hold for
     * its instructions' sake), and failed only where the step at the free
     * batch does too (a slower one can only fail it); the note names the
     * bound a step hit instead (README, Tolerances) */
    [BATCHING_FREE] = {"batching_free", "time per step, free batch over n = 1", 0, 1.25, "x", 2,
                       .premise_mbu = 0.8},
    {0},
};

/* ---- the axes --------------------------------------------------------------------- */

/* One linear layer: k inputs, rows outputs ("4096x14336": in x out). */
typedef struct shape {
    const char *name;
    int k, rows;
} shape;

static const shape SHAPES[] = {{"4096x14336", 4096, 14336}, {"8192x8192", 8192, 8192}};

/* The layers, as indices into SHAPES; --shape picks one or all. */
static const rl_axis SHAPE = RL_AXIS("shape", RL_LIST(0, 1), RL_LIST(0, 1), RL_LIST(0, 1));

static const char *shape_choice = "all";

static const rl_option OPTIONS[] = {
    {"shape", "SHAPE", "the layer, inputs x outputs: 4096x14336 (Llama 3 8B's MLP up-projection), "
     "8192x8192, or all", "4096x14336|8192x8192|all", &shape_choice},
    {0},
};

/* The measured ridge, FLOP/B, once declare has it (NaN before): it
 * places the top of the CPU's token counts (tokens_top). */
static double tokens_ridge = NAN;

/* The CPU's compute-bound points: counted AI at least this many ridges
 * (compute_bound says why); the sweep reaches twice that, so that the two
 * largest counts both pass it (AI(n / 2) >= AI(n) / 2) and no measured
 * ridge leaves the largest point a hair either side of it. */
static const double COMPUTE_BOUND_RIDGES = 32, TOP_RIDGES = 64;
/* The CPU sweep's top stays within these counts: the old fixed top, so
 * that a small ridge keeps the curves as they were, and a cap, so that a
 * ridge past a layer's reach (its AI tends to 2 rows k / (2 k + 4 rows))
 * does not run GEMMs of many seconds for nothing. */
enum { TOP_LEAST = 512, TOP_MOST = 4096 };

/* A layer's counted AI at n tokens. */
static double ai_at(const shape *s, double n)
{
    return rl_arith_intensity(gemv_flops(s->rows, s->k, n), gemv_bytes(s->rows, s->k, n));
}

/* The working set of a point at n tokens without the weights' other
 * copies: one copy, the tokens, the outputs and the largest scratch of a
 * variant that takes n. */
static double one_copy_bytes(const shape *s, int n)
{
    double scratch = 0;
    for (const gemv_variant *v = gemv_variants; v->name; v++)
        if (gemv_takes(v, n))
            scratch = fmax(scratch, (double)gemv_scratch_bytes(v, KERNEL_CPU, s->rows, s->k, n));
    return gemv_bytes(s->rows, s->k, n) + scratch;
}

/* The token count the CPU sweep ends at: the smallest power of two whose
 * AI reaches TOP_RIDGES x the measured ridge on every layer the run
 * times, within --max-bytes (never under TOP_LEAST, the old top, which
 * ran whatever --max-bytes said), between TOP_LEAST and TOP_MOST. The
 * GPU's counts are its own (its rule is n >= 2048, fixed). */
static double tokens_top(const rl_ctx *ctx)
{
    if (ctx->kind == RL_CUDA)
        return INFINITY;
    if (!(tokens_ridge > 0))
        return TOP_LEAST; /* before the ridge is known: the sweep as it was */
    int top = TOP_LEAST;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const shape *s = &SHAPES[i];
        if (!rl_option_is(shape_choice, s->name))
            continue;
        int n = TOP_LEAST;
        while (n < TOP_MOST && ai_at(s, n) < TOP_RIDGES * tokens_ridge &&
               one_copy_bytes(s, 2 * n) <= rl_max_bytes(ctx))
            n *= 2;
        top = n > top ? n : top;
    }
    return top;
}

/* Token counts: powers of two in a full run, fewer on the CPU (a 14336 x
 * 4096 x 2048 SGEMM takes seconds there); a lab run keeps every point a
 * verdict needs and enough between them to draw the curves; a quick run
 * only what the verdicts need. The CPU's lab and full runs end at
 * tokens_top, placed from the measured ridge, and double up to it from
 * 128, so that the count before the top has at least half its AI: with
 * the top at 64 R, the two largest are both compute-bound (32 R). A lab
 * list that went from 128 to 512 left one such point where the top was
 * 512, and mfu_prefill unjudged (a 2-core Zen 3 VM, R = 3.9). */
static const rl_axis GPU_TOKENS =
    RL_AXIS("n", RL_LIST(1, 2, 4, 8, 64, 512, 2048, 8192),
            RL_LIST(1, 2, 4, 8, 32, 128, 512, 2048, 8192),
            RL_LIST(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192));
static const rl_axis TOKENS =
    RL_AXIS("n", RL_LIST(1, 2, 8, 128), RL_LIST(1, 2, 4, 8, 32, 128, 256, 512, 1024, 2048, 4096),
            RL_LIST(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), .gpu = &GPU_TOKENS,
            .top = tokens_top);

static const rl_axis *const AXES[] = {&SHAPE, &TOKENS, NULL};

static const shape *shape_at(const rl_at *at) { return &SHAPES[rl_at_int(at, &SHAPE)]; }

/* ---- a point: one call of a variant at n tokens ---------------------------------- */

/* One call at n tokens, on the next copy of the weights: the copies
 * rotate so that the weights are read from where they live (DRAM, when
 * there are enough copies to span 4x the last-level cache). */
typedef struct exp02_call {
    /* what the point is: its CSV columns */
    const char *shape;
    int k, rows, n, copies, validated_rows;
    rl_weights *W;    /* the shape's buffers, and its reference */
    gemv_call kernel; /* every row, on the copy of the weights next names */
    gemv_call check;  /* validation: the first validated_rows rows, on the first copy */
    int next;         /* the copy the next call reads */
} exp02_call;

/* The timed work is the experiment's own, not one kernel call: each call
 * reads the next copy of the weights, so that they come from where they
 * live and not from the cache the last call left them in. */
static void run_rotating(void *arg)
{
    exp02_call *c = arg;
    c->kernel.args.w = c->W->w + (size_t)c->next * c->rows * c->k;
    c->next = (c->next + 1) % c->copies;
    gemv_call_run(&c->kernel);
}

/* Both calls on the shape's buffers: the timed one on every row, the
 * check on the first validated_rows rows (all of them while the host's
 * reference is cheap) of the first copy. */
static void prepare(rl_ctx *ctx, rl_point *p)
{
    exp02_call *c = RL_DATA_MUT(exp02_call, p);
    rl_weights_bind(ctx, c->W, p, &c->kernel, &c->check, c->n, c->validated_rows);
}

/* A shape --shape leaves out has no points, and no part. */
static bool shape_not_chosen(const rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)ctx;
    (void)state;
    return !rl_option_is(shape_choice, shape_at(at)->name);
}

/* A shape is a part, its weights made when it opens: every row drawn,
 * copies spanning 4x the last-level cache. Its GEMV points (n <= 8) share
 * one group. */
static void shape_part(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    (void)state;
    const shape *s = shape_at(at);
    rl_weights W = {.rows = s->rows, .k = s->k, .drawn_rows = s->rows,
                    .copies = rl_copies_beyond_cache(ctx, 2.0 * s->rows * s->k),
                    .group = rl_group_new(ctx)};
    *part = rl_weights_part(ctx, &W);
}

/* Whether a verdict reads the points at n tokens (else they draw the
 * curves, and a run under --budget measures them as time allows): the
 * quick run's counts, which are the verdicts', and the two largest, the
 * most compute-bound (the prefill verdict reads two). */
static bool verdicts_read(const rl_ctx *ctx, const rl_at *at)
{
    rl_ctx quick = *ctx;
    quick.args.mode = RL_MODE_QUICK;
    rl_steps all = rl_axis_values(ctx, &TOKENS);
    double n = rl_at_value(at, &TOKENS);
    return rl_axis_has(&quick, &TOKENS, n) || n >= all.v[all.n > 1 ? all.n - 2 : 0];
}

static void add_call(rl_ctx *ctx, const rl_at *at, const gemv_variant *v, int group)
{
    const shape *s = shape_at(at);
    rl_weights *W = at->part_state;
    int n = rl_at_int(at, &TOKENS);
    exp02_call *c = RL_NEW(ctx, exp02_call);
    *c = (exp02_call){s->name, s->k, s->rows, n, W->copies, gemv_validation_rows(s->rows, s->k, n), W,
                      .kernel.launch = RL_LAUNCHER(ctx, v), .check.launch = RL_LAUNCHER(ctx, v)};
    rl_weights_fit(ctx, W, v, n, c->validated_rows);
    /* the working set: the bytes moved, and the other copies of the weights */
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .run = run_rotating, .arg = c,
        RL_POINT_DATA(c), .check_call = gemv_kernel_call(&c->check), .prepare = prepare,
        .count = (size_t)c->validated_rows * n, .atol = gemv_atol(s->k),
        .flops = gemv_flops(s->rows, s->k, n), .bytes = gemv_bytes(s->rows, s->k, n),
        .footprint = gemv_bytes(s->rows, s->k, n) + 2.0 * s->rows * s->k * (W->copies - 1),
        .pattern = RL_READ, .optional = !verdicts_read(ctx, at)});
}

/* Every variant that takes n tokens: the GEMV points (n <= 8) in the
 * shape's group, each larger n a group of its own. */
static void token_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    rl_weights *W = at->part_state;
    int n = rl_at_int(at, &TOKENS);
    int group = n <= GEMV_MAX_BATCH ? W->group : rl_group_new(ctx);
    for (const gemv_variant *v = gemv_variants; v->name; v++)
        if (rl_runs(ctx, &gemv_family, KERNEL_VARIANT(v)) && gemv_takes(v, n))
            add_call(ctx, at, v, group);
}

static void describe(rl_ctx *ctx)
{
    char tokens[160];
    rl_axis_list(ctx, &TOKENS, tokens, sizeof tokens);
    rl_meta(ctx, "shapes", "%s (inputs x outputs; FP16 weights and tokens, FP32 outputs)", shape_choice);
    rl_meta(ctx, "tokens", "n = %s", tokens);
    rl_meta(ctx, "bytes_model", "2 rows k (weights) + 2 k n (tokens in) + 4 rows n (out): each once");
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol k * 2^-20; every "
            "row while rows k n <= 2^29, else the first rows (>= 64) within 2^28 multiply-adds");
    rl_meta(ctx, "ridge_flop_per_byte", "%.1f (measured ceilings: compute roof / DRAM read)",
            rl_ridge(ctx));
    /* The compute roof's two sources, for the roofline's band: the library
     * GEMM (what a library reaches) and, on the CPU, the FMA microbenchmark
     * (the cores' peak); ceiling_tflops is the larger. */
    const rl_ceilings *c = rl_ceilings_get(ctx);
    if (!isnan(c->gemm_tflops))
        rl_meta(ctx, "roof_compute_gemm_tflops", "%.6g", c->gemm_tflops);
    if (!isnan(c->fma_tflops))
        rl_meta(ctx, "roof_compute_fma_tflops", "%.6g", c->fma_tflops);
}

static void declare(rl_ctx *ctx)
{
    rl_tune_decode_cpu(ctx, false); /* the FP16 GEMV's rows per step, on this machine */
    tokens_ridge = rl_ridge(ctx); /* before the token counts are read */
    describe(ctx);
    rl_sweep_declare(ctx, &(rl_sweep){AXES, .part_axes = 1, .part = shape_part,
                                      .skip = shape_not_chosen, .points = token_points});
}

/* ---- the judgement ---------------------------------------------------------------- */

static bool of_shape(const rl_point *p, const shape *s)
{
    return !strcmp(RL_DATA(exp02_call, p)->shape, s->name);
}

/* The key of a lookup: a shape's points at n tokens. */
typedef struct at_n_key {
    const shape *s;
    int n;
} at_n_key;

static bool at_n(const rl_point *p, const void *key)
{
    const at_n_key *a = key;
    return of_shape(p, a->s) && RL_DATA(exp02_call, p)->n == a->n;
}

/* The batch the claim calls free: fixed and stated, 8 tokens on a GPU
 * and 2 on a CPU. The additive model (compute and memory never overlap,
 * the worst case) gives t(n) / t(1) = (1 + n / R) / (1 + 1 / R) for
 * AI(1) = 1, within 1.25x while n - 1 <= R / 4: n = 8 is well inside a
 * GPU's R ~ 200, and n = 2 inside a CPU's R from 4 on. A batch chosen
 * from the measured R instead moved with it: on a 2-core Zen 3 VM, R read
 * 3.3 in one run and 3.9 in the next, around the 4 where n = 2 turns
 * free, so that whether the claim was judged moved with the minute. At
 * a fixed n the points decide: where n = 2 is compute-bound, its step
 * reads under its memory roof and the premise check names that bound. */
static int free_batch_tokens(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? 8 : 2;
}

/* GPU: the claim's n >= 2048 (AI ~1000, five times the ridge). CPU: the
 * library path also pays an FP16 -> FP32 conversion pass (~10 bytes per
 * weight, five times the model's 2), so the intensity it really has is a
 * fifth of the counted one; compute-bound means that real intensity is at
 * least 6.4 R (the memory part at most a sixth of the compute part, even
 * if the two never overlap): a counted AI of at least 32 R. At 8 R the
 * conversion pass still took a quarter of the time, and its share moved
 * with the DRAM rate the neighbours left: MFU 45-55 % from run to run. */
static bool compute_bound(rl_ctx *ctx, const rl_point *p)
{
    if (!rl_point_has_role(p, "library"))
        return false;
    if (ctx->kind == RL_CUDA)
        return RL_DATA(exp02_call, p)->n >= 2048;
    return rl_arith_intensity(p->flops, p->bytes) >= COMPUTE_BOUND_RIDGES * rl_ridge(ctx);
}

/* The samples a compute-bound point needs to be read: the stop rule's
 * minimum, or, where its time limit stopped it, the floor the harness
 * gives every member out of time (measure.c), a median and its quartiles:
 * a slow CPU's prefill GEMM takes a second a call and gets no more. */
enum { TIMED_OUT_SAMPLES = 3 };

static bool enough_samples(const rl_ctx *ctx, const rl_point *p)
{
    int n = p->m.stats.samples;
    return n >= ctx->rule.min_samples || (p->m.stop == RL_STOP_TIMEOUT && n >= TIMED_OUT_SAMPLES);
}

/* What the prefill verdict reads: the lowest MFU among the shape's
 * compute-bound points that were timed with enough samples (NaN unless at
 * least two were: one point is one minute's), how many, the smallest n
 * among them, and why the others were left out. */
typedef struct compute_bound_read {
    double mfu;
    int read, n_lo;
    char why[400];
} compute_bound_read;

/* One compute-bound point: read, or its reason added to r->why. */
static void read_compute_bound(rl_ctx *ctx, const rl_point *p, compute_bound_read *r)
{
    int n = RL_DATA(exp02_call, p)->n;
    if (!rl_point_timed(p) || !enough_samples(ctx, p)) {
        if (rl_point_timed(p))
            rl_appendf(r->why, sizeof r->why, "; n = %d has %d samples, under the stop rule's %d",
                       n, p->m.stats.samples, ctx->rule.min_samples);
        else
            rl_appendf(r->why, sizeof r->why, "; n = %d was not timed", n);
        return;
    }
    double mfu = rl_point_mfu(ctx, p);
    r->mfu = r->read == 0 || mfu < r->mfu ? mfu : r->mfu;
    r->n_lo = r->read == 0 || n < r->n_lo ? n : r->n_lo;
    r->read++;
}

/* The shape's compute-bound points, read (a loop, not rl_points_best: MFU
 * and the bound read the run's roofs); fewer than two read: NaN, and why. */
static compute_bound_read compute_bound_mfu(rl_ctx *ctx, const rl_points *all, const shape *s)
{
    compute_bound_read r = {.mfu = NAN};
    int found = 0;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        if (of_shape(p, s) && compute_bound(ctx, p)) {
            found++;
            read_compute_bound(ctx, p, &r);
        }
    }
    if (r.read >= 2)
        return r;
    char left_out[sizeof r.why];
    memcpy(left_out, r.why, sizeof left_out);
    r.why[0] = '\0';
    double ridge = rl_ridge(ctx), last = rl_axis_last(ctx, &TOKENS);
    if (found)
        rl_appendf(r.why, sizeof r.why, "%d of the %d compute-bound library point(s) read, two "
                   "needed; ", r.read, found);
    if (ctx->kind == RL_CUDA)
        rl_appendf(r.why, sizeof r.why, "compute-bound: n >= 2048");
    else
        rl_appendf(r.why, sizeof r.why, "compute-bound: AI >= %g x the ridge (%.1f FLOP/B: %.0f); "
                   "the layer's AI at n = %.0f, the sweep's largest: %.0f", COMPUTE_BOUND_RIDGES,
                   ridge, COMPUTE_BOUND_RIDGES * ridge, last, ai_at(s, last));
    rl_appendf(r.why, sizeof r.why, "%s", left_out);
    r.mfu = NAN;
    return r;
}

/* What the decode MBU was judged against (a mixed roof: what the spill
 * runs at, rl_roof), and where --max-bytes put the weights: under 4x the
 * LLC they spill from it (mixed) or sit in it, not in device memory. */
static void decode_note(rl_ctx *ctx, const rl_point *g, const rl_point *lib, char *buf, size_t len)
{
    char roof[160], size[32];
    rl_point_roof_text(ctx, g, roof, sizeof roof);
    rl_format_bytes(g->footprint, size, sizeof size);
    snprintf(buf, len, "gemv_fp16 moves %.0f GB/s against %s", rl_point_gbps(g), roof);
    if (!rl_beyond_cache(ctx, g->footprint))
        rl_appendf(buf, len, rl_point_roof(ctx, g).mixed ? "; --max-bytes keeps the weights' "
                   "copies (%s) under 4x the last-level cache" : "; --max-bytes keeps the "
                   "weights (%s) in the cache", size);
    rl_appendf(buf, len, "; the library path: MBU %.2f", lib ? rl_point_mbu(ctx, lib) : NAN);
}

/* MFU at n = 1 on the CPU: under a quarter of its own compute-bound MFU. */
static void judge_decode_mfu_cpu(rl_ctx *ctx, const shape *s, const rl_point *g, double mfu_compute)
{
    char note[400];
    double ridge = rl_ridge(ctx);
    if (isnan(mfu_compute))
        snprintf(note, sizeof note, "CPU ridge %.1f FLOP/B, so MFU(1) = MBU/ridge; the bound, a "
                 "quarter of the compute-bound MFU, was not measured", ridge);
    else
        snprintf(note, sizeof note, "CPU ridge %.1f FLOP/B, so MFU(1) = MBU/ridge; the GPU's 5 %% "
                 "assumes a ridge near 200; bound %.1f %% = a quarter of %.1f %%",
                 ridge, 25 * mfu_compute, 100 * mfu_compute);
    rl_premise room = rl_premise_start();
    rl_premise_memory_bound(ctx, &room, &EXP02_CLAIMS[MFU_DECODE_CPU], g, "gemv_fp16 at n = 1");
    rl_premise_room_under_mfu(ctx, &room, g, mfu_compute / 4, "gemv_fp16 at n = 1");
    rl_judge_within_given(ctx, &EXP02_CLAIMS[MFU_DECODE_CPU], s->name,
                          g ? 100 * rl_point_mfu(ctx, g) : NAN, 0, 25 * mfu_compute, &room, note);
}

static void judge_decode(rl_ctx *ctx, const rl_points *all, const shape *s, double mfu_compute)
{
    const rl_point *g = rl_points_find(all, "bandwidth", at_n, &(at_n_key){s, 1}),
                   *lib = rl_points_find(all, "library", at_n, &(at_n_key){s, 1});
    char note[400];
    rl_judge(ctx, &EXP02_CLAIMS[AI_DECODE], s->name,
             rl_arith_intensity(gemv_flops(s->rows, s->k, 1), gemv_bytes(s->rows, s->k, 1)),
             "2 FLOPs and 2 bytes per weight; a count, not a measurement");

    snprintf(note, sizeof note, "gemv_fp16 not measured");
    if (g)
        decode_note(ctx, g, lib, note, sizeof note);
    rl_premise pr = rl_premise_start();
    rl_premise_memory_bound(ctx, &pr, &EXP02_CLAIMS[MBU_DECODE], g, "gemv_fp16 at n = 1");
    /* on its spread, as every MBU against a bound: a lone median at 0.8
     * would turn with the noise of the minute */
    rl_judge_ratio_given(ctx, &EXP02_CLAIMS[MBU_DECODE], s->name,
                         g ? rl_point_mbu_spread(ctx, g) : RL_RATIO_NONE, &pr, note);

    if (ctx->kind == RL_CUDA)
        rl_judge(ctx, &EXP02_CLAIMS[MFU_DECODE_GPU], s->name, g ? 100 * rl_point_mfu(ctx, g) : NAN,
                 "decode leaves the tensor cores idle: MFU = MBU x AI / ridge");
    else
        judge_decode_mfu_cpu(ctx, s, g, mfu_compute);
}

/* The step's time at the free batch over its time at n = 1, the fastest
 * variant at each, judged on the ratio's spread (rl_judge_ratio_given)
 * where both steps read their memory roof: the step at n = 1 at least
 * the claim's premise (else a slow one could make it hold), the step at
 * the free batch too before it can fail it (a slow one only fails it). */
static void judge_batching(rl_ctx *ctx, const rl_points *all, const shape *s)
{
    int nf = free_batch_tokens(ctx);
    const rl_point *t1 = rl_points_fastest(all, NULL, at_n, &(at_n_key){s, 1}),
                   *tn = rl_points_fastest(all, NULL, at_n, &(at_n_key){s, nf});
    double ratio = t1 && tn ? tn->seconds / t1->seconds : NAN;
    const rl_claim *claim = &EXP02_CLAIMS[BATCHING_FREE];
    char what1[64], whatn[64];
    snprintf(what1, sizeof what1, "%s at n = 1", t1 ? t1->variant->name : "-");
    snprintf(whatn, sizeof whatn, "%s at n = %d", tn ? tn->variant->name : "-", nf);
    rl_premise pr = rl_premise_start();
    rl_premise_at_memory_roof(ctx, &pr, claim, t1, what1);
    rl_premise_at_memory_roof_to_fail(ctx, &pr, claim, tn, whatn);
    char note[256];
    if (tn && t1)
        snprintf(note, sizeof note, "n = %d (the claim's batch on this backend); fastest at each n: "
                 "%s, %s; %.1fx the tokens for %.2fx the time; ridge %.1f FLOP/B", nf,
                 t1->variant->name, tn->variant->name, (double)nf, ratio, rl_ridge(ctx));
    else
        snprintf(note, sizeof note, "n = %d not measured", nf);
    rl_judge_ratio_given(ctx, claim, s->name, t1 && tn ? rl_time_ratio(tn, t1) : RL_RATIO_NONE, &pr,
                         note);
}

/* Verdict texts are fixed; what depends on the measured ridge (which n is
 * compute-bound, which batch is free) goes into the notes. */
static void judge_shape(rl_ctx *ctx, const rl_points *all, const shape *s)
{
    compute_bound_read c = compute_bound_mfu(ctx, all, s);
    judge_decode(ctx, all, s, c.mfu);

    char note[512] = "";
    if (c.read >= 2)
        rl_appendf(note, sizeof note, "the lowest of %d points (the library GEMM, n >= %d)", c.read,
                   c.n_lo);
    rl_appendf(note, sizeof note, "%s", c.why);
    rl_judge(ctx, &EXP02_CLAIMS[MFU_PREFILL], s->name, 100 * c.mfu, note);
    judge_batching(ctx, all, s);
}

/* Each shape's verdicts, in the order of the shapes. */
static void judge(rl_ctx *ctx, const rl_points *all)
{
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (rl_option_is(shape_choice, SHAPES[i].name))
            judge_shape(ctx, all, &SHAPES[i]);
}

/* ---- the columns and the experiment ----------------------------------------------- */

static double col_per_token_us(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->seconds / RL_DATA(exp02_call, p)->n * 1e6;
}

static double col_tokens_per_s(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return RL_DATA(exp02_call, p)->n / p->seconds;
}

static const rl_column COLUMNS[] = {
    RL_TEXT("shape", NULL, NULL, exp02_call, shape),
    RL_INT("k", NULL, NULL, exp02_call, k),
    RL_INT("rows", NULL, NULL, exp02_call, rows),
    RL_INT("n", NULL, NULL, exp02_call, n),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    {"flops", NULL, NULL, .num = rl_col_flops},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"ai", NULL, NULL, .num = rl_col_ai},
    RL_INT("copies", NULL, NULL, exp02_call, copies),
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    {"cache_resident", NULL, NULL, .num = rl_col_cache_resident},
    RL_INT("validated_rows", NULL, NULL, exp02_call, validated_rows),
    {0},
};

static const rl_column DERIVED[] = {
    {"attainable_tflops", NULL, NULL, .num = rl_col_attainable},
    {"time_per_token_us", NULL, NULL, .num = col_per_token_us},
    {"tokens_per_s", NULL, NULL, .num = col_tokens_per_s},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "shape", "%-10s", exp02_call, shape),
    RL_INT(NULL, "n", "%5d", exp02_call, n),
    {NULL, "variant", "%-16s", .str = rl_col_variant},
    RL_COLUMN_TIME_US,
    RL_COLUMN_TFLOPS,
    RL_COLUMN_GBPS,
    {NULL, "AI", "%7.1f", .num = rl_col_ai},
    RL_COLUMN_MFU,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    {NULL, "tokens/s", "%11.0f", .num = col_tokens_per_s, .measured = true},
    {0},
};

static const kernel_family *const FAMILIES[] = {&gemv_family, NULL};

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
    .probes = RL_PROBE_BANDWIDTH | RL_PROBE_COMPUTE,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "shape,variant,n",
    .compare_value = "time_us_median",
    .declare = declare,
    .judge = judge,
};

int main(int argc, char **argv) { return rl_main(&EXP02, argc, argv); }

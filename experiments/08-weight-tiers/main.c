/*
 * Experiment 08 -- where the weights live: spilled weights and mixture of
 * experts.
 *
 * Decode reads every weight once per token, so its time is the bytes over
 * the bandwidth of wherever they live. Spill: with a fraction f of the
 * weights in a tier r times slower, one tier after the other gives
 * t/t0 = (1 - f) + f r (1.9x at f = 0.1, r = 10), both at once
 * max(1 - f, f r). Mixture of experts: a MoE layer holds E experts but a
 * token reads only its top-k, so at batch 1 it decodes like a model k/E
 * its size; a batch of B tokens touches E (1 - (1 - k/E)^B) of them, and
 * the bytes grow with that curve, not with B.
 *
 * Method: a spill part (one GEMV at each f, the slow tier's copy beside
 * it), a MoE part at batch 1 over top-k, one over the batch; every point
 * validated against a double-precision reference (the copy bit for bit),
 * then timed in its part's group beside the fast tier's roof. This file
 * reads top to bottom: the claims, the axes, the parts, the judgement;
 * tiers.c and experts.c are the two chapters' points. See README.md.
 */
#include "exp08.h"

#include <math.h>
#include <stdio.h>

/* ---- the claims ------------------------------------------------------------------ */

enum { SPILL_SEQ, SPILL_OVL, MOE_ACTIVE, MOE_DENSE, MOE_ROUTED, MOE_CURVE };

static const double JUDGED_F = 0.1;
static const double CURVE_PACE = 0.85; /* MOE_CURVE's premise, below */
/* MOE_ACTIVE's premise: a step's bytes at the roof take at least 10x its
 * launches' fixed cost. A step that paid that cost in full on top of its
 * bytes' time would still read 1 / 1.1 = 0.91 of the roof, inside the
 * claim's band (0.87 or more): the launch alone cannot fail the claim,
 * and a failure is the kernel's. Below it, a GPU's microsecond kernels
 * (top-1 of 128 experts, 3 MiB: a microsecond of an H100's HBM at its
 * datasheet rate, less on an H200) are timed on the launch. */
static const double FIXED_COST_MULTIPLE = 10;

static const rl_claim CLAIMS[] = {
    [SPILL_SEQ] = {"spill_sequential_model",
                   "spill, f = 0.1: sequential t/t0 over its model (1 - f) + f r, r measured",
                   0.85, 1.15, "x", 2, .predicted_text = "within +-15 %"},
    /* 0: on max(1 - f, f r); 1: on (1 - f) + f r; r: the slow tier as the
     * overlapped variant reads it */
    [SPILL_OVL] = {"spill_overlapped_closer",
                   "spill, f = 0.1: overlapped t/t0 between its model max(1 - f, f r) (0) and the "
                   "sequential one (1), r of its own path", -INFINITY, 0.5, "", 2,
                   .predicted_text = "below 0.5: closer to its own model"},
    /* judged where the step's bytes at the roof take at least 10x its
     * launches (FIXED_COST_MULTIPLE: the launch alone cannot fail it), and
     * where the same kernel reading every expert (the dense path, a dense
     * layer's stream) is itself inside the claim's band, at 1/1.15 = 0.87
     * of that roof or more: on a shared VM the probe's many streams can
     * outrun any GEMV's, and then the roof, not the experts' bytes, would
     * decide. Past the premises, a failure is the experts' own cost. */
    [MOE_ACTIVE] = {"moe_active_bytes",
                    "MoE, B = 1: step time over the active bytes / the roof measured beside it",
                    0.85, 1.15, "x", 2, .on_ceiling = true,
                    .predicted_text = "within +-15 % (judged where the bytes at the roof take >= 10x "
                                      "the step's launches)",
                    .premise_mbu = 0.87},
    [MOE_DENSE] = {"moe_dense_over_active",
                   "MoE, B = 1: the dense kernel's time over the active one's, over their bytes' ratio",
                   0.7, 1.3, "x", 2, .predicted_text = "~1: the time is the bytes"},
    [MOE_ROUTED] = {"moe_routed_touched", "MoE: experts the routings touch over E (1 - (1 - k/E)^B) "
                    "(counted)", 0.95, 1.05, "x", 3, .counted = true},
    /* t(B)/t(1) is the bytes' ratio times rate(1)/rate(B): judged where B's
     * step reads at least 0.85 of B = 1's GB/s, so that the kernel moves the
     * ratio by under 1/0.85 = 1.18, inside the band, and the bytes decide
     * (a batch whose passes turn compute-bound reads slower). Against B = 1's
     * rate, not the probe's: on a shared VM the probe's streams can outrun
     * every GEMV's while both points still stream alike. */
    [MOE_CURVE] = {"moe_touched_curve", "MoE over the batch: t(B)/t(1) over touched(B)/touched(1)",
                   0.8, 1.2, "x", 2,
                   .predicted_text = "within +-20 % (judged where B reads >= 0.85 of B = 1's GB/s)"},
    {0},
};

/* ---- the axes -------------------------------------------------------------------- */

/* The spilled GEMV's rows (k = 4096): 14336 x 4096 (Llama 3 8B's up
 * projection, 112 MiB) is DRAM-sized on a CPU; a GPU's 50-60 MB L2 needs
 * 4x more to read from HBM. A part of its own. */
enum { SPILL_K = 4096 };
static const rl_axis SPILL_ROWS_GPU = RL_AXIS("rows", RL_LIST(2048), RL_LIST(65536), RL_LIST(65536));
static const rl_axis SPILL_ROWS = RL_AXIS("rows", RL_LIST(2048), RL_LIST(14336), RL_LIST(14336),
                                          .gpu = &SPILL_ROWS_GPU);
/* The fraction of its rows in the slow tier; the verdicts read 0 and 0.1. */
static const rl_axis FRACTION = RL_AXIS("f", RL_LIST(0, 0.1, 0.5), RL_LIST(0, 0.05, 0.1, 0.2, 0.3, 0.5),
                                        RL_LIST(0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5));

/* The MoE layer: Qwen3-30B-A3B's expert matrices as in ggml's MUL_MAT_ID
 * perf case, 128 experts of 768 x 2048 FP16 (3 MiB each, 384 MiB in all),
 * top-8; a quick run's 32 experts, top-4, 96 MiB, fit its 256 MiB
 * working-set limit. Each MoE part is one layer of EXPERTS. */
enum { EXPERT_ROWS = 768, EXPERT_K = 2048 };
static const rl_axis EXPERTS = RL_AXIS("experts", RL_LIST(32), RL_LIST(128), RL_LIST(128));
static int model_top_k(const rl_ctx *ctx) { return RL_BY_MODE(ctx, 4, 8, 8); }
static double experts_in_layer(const rl_ctx *ctx) { return rl_axis_first(ctx, &EXPERTS); }
static moe_shape layer_of(const rl_ctx *ctx)
{
    return (moe_shape){(int)experts_in_layer(ctx), EXPERT_ROWS, EXPERT_K, model_top_k(ctx)};
}
/* Batch 1 over top-k (no more than the layer's experts), and the model's
 * top-k over the batch, uniform routing (the model's case) and skewed. */
static const rl_axis TOP_K = RL_AXIS("top_k", RL_LIST(1, 4), RL_LIST(1, 2, 4, 8, 16, 32),
                                     RL_LIST(1, 2, 4, 8, 16, 32), .top = experts_in_layer);
static const rl_axis BATCH = RL_AXIS("batch", RL_LIST(1, 4), RL_LIST(1, 4, 16, 64),
                                     RL_LIST(1, 2, 4, 8, 16, 32, 64));
static const rl_axis ROUTING = RL_AXIS("routing", RL_LIST(MOE_UNIFORM, MOE_SKEWED),
                                       RL_LIST(MOE_UNIFORM, MOE_SKEWED), RL_LIST(MOE_UNIFORM, MOE_SKEWED));
/* Seeded routings a point rotates through, so that successive calls read
 * other experts, as successive tokens do: a setting, not an axis. */
static int routings(const rl_ctx *ctx) { return RL_BY_MODE(ctx, 16, 32, 64); }

/* ---- the parts: a spill part, a MoE part at batch 1, one over the batch --------------- */

static void open_spill(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    (void)state;
    exp08_spill_part(ctx, part, rl_at_int(at, &SPILL_ROWS), SPILL_K, rl_axis_last(ctx, &FRACTION));
}

static void spill_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    double f = rl_at_value(at, &FRACTION);
    bool judged = f == 0 || fabs(f - JUDGED_F) < 1e-9;
    exp08_spill_points(ctx, at->part_state, f, at->group, !judged);
}

/* A MoE part: one layer of EXPERTS (state: its heading). */
static void open_moe(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    moe_shape layer = {rl_at_int(at, &EXPERTS), EXPERT_ROWS, EXPERT_K, model_top_k(ctx)};
    exp08_moe_part(ctx, part, &layer, routings(ctx), state, false);
}

/* Batch 1, every top-k: the active variant; at the last, the dense one at
 * the model's top-k (the same kernel's stream over every expert: two
 * verdicts read its time and its reach of the roof), and the empty launch
 * (the steps' premise: their bytes at the roof against their launches). */
static void top_k_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    exp08_moe_point(ctx, at->part_state, MOE_TOP_K, at->group, "active", rl_at_int(at, &TOP_K), 1,
                    MOE_UNIFORM, false);
    if (!rl_at_last(at, &TOP_K))
        return;
    exp08_moe_point(ctx, at->part_state, MOE_TOP_K, at->group, "dense", model_top_k(ctx), 1,
                    MOE_UNIFORM, false);
    exp08_moe_empty_point(ctx, at->part_state, at->group);
}

/* The model's top-k at each batch, uniform and skewed (optional); the
 * dense variant after the last batch's. */
static void batch_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    int top_k = model_top_k(ctx), batch = rl_at_int(at, &BATCH);
    moe_routing how = (moe_routing)rl_at_int(at, &ROUTING);
    exp08_moe_point(ctx, at->part_state, MOE_BATCH, at->group, "active", top_k, batch, how,
                    how != MOE_UNIFORM);
    if (rl_at_last(at, &BATCH) && rl_at_last(at, &ROUTING))
        exp08_moe_point(ctx, at->part_state, MOE_BATCH, at->group, "dense", top_k, batch,
                        MOE_UNIFORM, true);
}

/* The values of an axis in this run, "0 0.1 0.5". */
static void list_values(const rl_ctx *ctx, const rl_axis *a, char *buf, size_t len)
{
    rl_steps s = rl_axis_values(ctx, a);
    buf[0] = '\0';
    for (int i = 0; i < s.n; i++)
        rl_appendf(buf, len, "%s%g", i ? " " : "", s.v[i]);
}

static void describe(rl_ctx *ctx)
{
    char f[96], k[64], b[64];
    list_values(ctx, &FRACTION, f, sizeof f);
    list_values(ctx, &TOP_K, k, sizeof k);
    list_values(ctx, &BATCH, b, sizeof b);
    moe_shape layer = layer_of(ctx);
    rl_meta(ctx, "spill", "a %dx%d FP16 GEMV (n = 1), f = %s of its rows in the slow tier: %s",
            (int)rl_axis_first(ctx, &SPILL_ROWS), SPILL_K, f, ctx->kind == RL_CUDA
            ? "pinned host memory, mapped" : "a file on the disk, its pages dropped "
            "(posix_fadvise DONTNEED) before each call");
    rl_meta(ctx, "spill_dir", "%s", ctx->kind == RL_CUDA ? "" : exp08_spill_dir() ? exp08_spill_dir()
                                                                                 : exp08_spill_why());
    rl_meta(ctx, "moe", "%d experts of %dx%d FP16; batch 1 at top-k = %s; top-%d at B = %s; %d "
            "seeded routings per point, uniform and skewed (Zipf 1/(e+1))", layer.experts,
            layer.rows, layer.k, k, layer.top_k, b, routings(ctx));
    rl_meta(ctx, "bytes_model", "spill: every weight once from its tier, + x and y; MoE: the "
            "touched experts' weights (the routings' mean), + x and y; dense: all E experts, + its "
            "E x B output rows written and the chosen ones read back");
    rl_meta(ctx, "validation", "spill: every row vs a double-precision reference, the slow tier's "
            "copy bit for bit; MoE: the first routing's first output rows (~2^27 multiply-adds) vs "
            "a double-precision reference");
}

static void declare(rl_ctx *ctx)
{
    rl_tune_decode_cpu(ctx, false); /* the FP16 GEMV's rows per step, on this machine */
    if (exp08_moe_shape_chosen()) { /* a side benchmark: its table only */
        exp08_declare_moe_shape(ctx);
        return;
    }
    describe(ctx);
    if (ctx->kind == RL_CUDA || exp08_spill_dir()) /* else the spill claims say why not */
        rl_sweep_declare(ctx, &(rl_sweep){(const rl_axis *const[]){&SPILL_ROWS, &FRACTION, NULL},
                                          .part_axes = 1, .group_axes = 1, .part = open_spill,
                                          .points = spill_points});
    rl_sweep_declare(ctx, &(rl_sweep){(const rl_axis *const[]){&EXPERTS, &TOP_K, NULL},
                                      .part_axes = 1, .group_axes = 1, .part = open_moe,
                                      .points = top_k_points,
                                      .state = "MoE at batch 1: the active experts' bytes over top-k"});
    rl_sweep_declare(ctx, &(rl_sweep){(const rl_axis *const[]){&EXPERTS, &BATCH, &ROUTING, NULL},
                                      .part_axes = 1, .group_axes = 1, .part = open_moe,
                                      .points = batch_points,
                                      .state = "MoE over the batch: the experts touched"});
}

/* ---- the judgement ------------------------------------------------------------------
 * The spill claims judge f = 0.1 with the r measured in the same run (the
 * fast tier's rate, each variant's own GEMV at f = 0, over the slow tier's read of
 * f = 0.1's rows by each variant's own path: the copy for the sequential
 * one; the zero-copy loads, or the queued reads, for the overlapped one);
 * the MoE claims judge the active variant's time against its bytes over
 * the roof measured beside it (batch 1, where those bytes outlast the
 * step's launches), and its growth over the batch against the
 * touched-experts curve. */

/* ---- spill ---- */

/* ---- MoE ---- */

/* How the fixed cost of one launch was measured, for the notes. */
static const char *launch_text(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? "an empty kernel's launch, timed beside the steps"
                                : "an empty OpenMP parallel region, timed beside the steps";
}

static void judge_active(rl_ctx *ctx, const rl_points *all, const moe_shape *layer)
{
    const rl_point *dense = exp08_moe_find(all, MOE_TOP_K, "dense", layer->top_k, 1, "uniform"),
                   *empty = exp08_moe_find(all, MOE_TOP_K, "fixed_cost", 1, 1, "uniform");
    double launch_s = empty ? empty->seconds : NAN;
    rl_steps top_ks = rl_axis_values(ctx, &TOP_K);
    for (int i = 0; i < top_ks.n; i++) {
        int k = (int)top_ks.v[i];
        const rl_point *p = exp08_moe_find(all, MOE_TOP_K, "active", k, 1, "uniform");
        char scope[16], what[48], note[400] = "not measured";
        snprintf(scope, sizeof scope, "k%d", k);
        snprintf(what, sizeof what, "top-%d of %d", k, layer->experts);
        rl_premise pr = rl_premise_start();
        if (p) {
            char roof[160];
            double launches = RL_DATA(exp08_call, p)->launches;
            rl_point_roof_text(ctx, p, roof, sizeof roof);
            snprintf(note, sizeof note, "%s: %.1f MiB of active weights in %.1f us, %.1f GB/s against "
                     "%s; %g launch%s of %.2f us each (%s)", what, p->bytes / 1048576, p->seconds * 1e6,
                     rl_point_gbps(p), roof, launches, launches == 1 ? "" : "es", launch_s * 1e6,
                     launch_text(ctx));
            rl_premise_outlasts_fixed_cost(ctx, &pr, p, launches, launch_s, FIXED_COST_MULTIPLE, what,
                                           launch_text(ctx));
        }
        rl_premise_memory_bound(ctx, &pr, &CLAIMS[MOE_ACTIVE], dense,
                                "the dense path (the same kernel over every expert)");
        /* the time over the roof's, on its spread: a lone median turns with the minute */
        rl_judge_ratio_given(ctx, &CLAIMS[MOE_ACTIVE], scope,
                             p ? rl_ratio_inverse(rl_point_mbu_spread(ctx, p)) : RL_RATIO_NONE, &pr,
                             note);
    }
}

static void judge_dense(rl_ctx *ctx, const rl_points *all, const moe_shape *layer)
{
    int k = layer->top_k;
    const rl_point *a = exp08_moe_find(all, MOE_TOP_K, "active", k, 1, "uniform"),
                   *d = exp08_moe_find(all, MOE_TOP_K, "dense", k, 1, "uniform");
    char note[300] = "not measured";
    rl_ratio value = RL_RATIO_NONE;
    rl_premise pr = rl_premise_start();
    if (a && d) {
        value = rl_ratio_scaled(rl_time_ratio(d, a), a->bytes / d->bytes);
        rl_premise_same_group(&pr, d, a, "the dense and the active step");
        snprintf(note, sizeof note, "top-%d of %d: dense %.2f ms, active %.3f ms (%.1fx), their "
                 "bytes %.1fx apart", k, layer->experts, d->seconds * 1e3, a->seconds * 1e3,
                 d->seconds / a->seconds, d->bytes / a->bytes);
    }
    rl_judge_ratio_given(ctx, &CLAIMS[MOE_DENSE], NULL, value, &pr, note);
}

static void judge_routed(rl_ctx *ctx, const rl_points *all)
{
    rl_steps batches = rl_axis_values(ctx, &BATCH);
    for (int i = 0; i < batches.n; i++) {
        int b = (int)batches.v[i];
        const exp08_call *found = exp08_moe_declared(all, b, "uniform");
        char scope[16], note[200] = "no uniform point at this batch";
        snprintf(scope, sizeof scope, "B%d", b);
        if (found)
            snprintf(note, sizeof note, "%d routings: %.2f experts on average, the model %.2f "
                     "(of %d, top-%d)", routings(ctx), found->touched, found->touched_model,
                     found->experts, found->top_k);
        rl_judge(ctx, &CLAIMS[MOE_ROUTED], scope,
                 found ? found->touched / found->touched_model : NAN, note);
    }
}

/* B's step must read at least CURVE_PACE of B = 1's GB/s (the claim's
 * premise, above), or the kernel, not the bytes, sets the ratio. */
static void curve_premise(rl_ctx *ctx, rl_premise *pr, const rl_point *p, const rl_point *one)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    double pace = rl_point_gbps(p) / rl_point_gbps(one);
    if (!pr->met || pace >= CURVE_PACE) /* the first unmet premise tells the story */
        return;
    pr->met = false;
    snprintf(pr->why, sizeof pr->why, "B = %d reads %.2f of B = 1's GB/s (%.1f against "
             "%.1f; MBU %.2f and %.2f): its passes of %.1f tokens per expert no longer "
             "stream like B = 1's, so the bytes alone do not set the ratio", c->batch, pace,
             rl_point_gbps(p), rl_point_gbps(one), rl_point_mbu(ctx, p),
             rl_point_mbu(ctx, one), (double)c->batch * c->top_k / c->touched);
}

static void judge_curve(rl_ctx *ctx, const rl_points *all, const moe_shape *layer)
{
    const rl_point *one = exp08_moe_find(all, MOE_BATCH, "active", layer->top_k, 1, "uniform");
    rl_steps batches = rl_axis_values(ctx, &BATCH);
    for (int i = 0; i < batches.n; i++) {
        int b = (int)batches.v[i];
        if (b == 1)
            continue;
        const rl_point *p = exp08_moe_find(all, MOE_BATCH, "active", layer->top_k, b, "uniform");
        char scope[16], note[300] = "not measured";
        snprintf(scope, sizeof scope, "B%d", b);
        rl_ratio value = RL_RATIO_NONE;
        rl_premise pr = rl_premise_start();
        if (p && one) {
            const exp08_call *c = RL_DATA(exp08_call, p);
            double model = c->touched_model / rl_moe_experts_touched(c->experts, c->top_k, 1);
            value = rl_ratio_scaled(rl_time_ratio(p, one), 1 / model);
            snprintf(note, sizeof note, "t(%d)/t(1) = %.2f; the model touches %.1f of %d experts "
                     "against %d at B = 1 (a ratio of %.2f; the routings' %.2f)", b,
                     p->seconds / one->seconds, c->touched_model, c->experts, c->top_k, model,
                     c->touched / RL_DATA(exp08_call, one)->touched);
            rl_premise_same_group(&pr, p, one, "B's step and B = 1's");
            curve_premise(ctx, &pr, p, one);
        }
        rl_judge_ratio_given(ctx, &CLAIMS[MOE_CURVE], scope, value, &pr, note);
    }
}

static void judge(rl_ctx *ctx, const rl_points *all)
{
    moe_shape layer = layer_of(ctx);
    exp08_judge_spill(ctx, all, &CLAIMS[SPILL_SEQ], &CLAIMS[SPILL_OVL], JUDGED_F);
    judge_active(ctx, all, &layer);
    judge_dense(ctx, all, &layer);
    judge_routed(ctx, all);
    judge_curve(ctx, all, &layer);
}

/* ---- options, columns and the experiment ---------------------------------------------- */

static const rl_option OPTIONS[] = {
    {"spill-dir", "DIR", "where the CPU's slow tier keeps its file (a folder on a disk, not tmpfs; "
     "the file is unnamed and goes when the run ends; default the first of /var/tmp, $TMPDIR "
     "and /tmp on a disk)", NULL, &exp08_spill_dir_option},
    {"moe-shape", "E,K,B[,M,N]", "instead of the sweeps: time the active-experts kernel at one shape "
     "(E experts of M x N, default 768 x 2048, top-K, a batch of B) with one routing and one layer "
     "repeated, as ggml's test-backend-ops MUL_MAT_ID perf case does; writes no results", NULL,
     &exp08_moe_shape_option},
    {0},
};

static void read_options(rl_ctx *ctx)
{
    if (ctx->kind != RL_CUDA)
        exp08_spill_choose_dir();
    exp08_moe_shape_read();
}

static const kernel_family *const FAMILIES[] = {&spill_family, &moe_family, &gemv_family, NULL};

static const rl_experiment EXP08 = {
    .id = "08",
    .slug = "08-weight-tiers",
    .title = "Where the weights live: spilled weights and mixture of experts",
    .claim = "Decode speed is set by the bandwidth of wherever the weights live: moving 10 % of "
             "them to a tier ten times slower roughly doubles the time per token (one tier after "
             "the other: t/t0 = (1 - f) + f r, 1.9x; both at once: max(1 - f, f r)). A mixture of "
             "experts reads only its active experts per token while it holds all of them, so at "
             "batch 1 it decodes like a small model; over a batch the experts touched grow as "
             "E (1 - (1 - k/E)^B), and the bytes with them.",
    .source = "the seed articles on GPU utilization; llama.cpp's llama-bench (-ngl rows); ggml's "
              "MUL_MAT_ID perf case (Qwen3-30B-A3B: 128 experts, top-8, 768 x 2048)",
    .prediction = "on a GPU over PCIe or C2C, and on the CPU with the disk as the slow tier: the "
                  "same models with the r measured in the run (README)",
    .claims = CLAIMS,
    .families = FAMILIES,
    .columns = EXP08_COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .probes = RL_PROBE_BANDWIDTH,
    .derived = EXP08_DERIVED,
    .table = EXP08_TABLE,
    .default_cache = RL_HOT,
    .compare_keys = "part,variant,routing,f,top_k,batch",
    .compare_value = "time_us_median",
    .declare = declare,
    .judge = judge,
    .options = OPTIONS,
    .read_options = read_options,
};

int main(int argc, char **argv) { return rl_main(&EXP08, argc, argv); }

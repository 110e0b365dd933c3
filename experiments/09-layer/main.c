/*
 * Experiment 09 -- a transformer layer's time goes to the steps that do no
 * arithmetic, and fusion takes it back.
 *
 * A layer's matrix products do nearly all of its arithmetic; its
 * normalizations (softmax, layer norm) and element-wise steps (bias,
 * activation, residual, mask) do almost none, yet each reads and writes
 * a whole activation. Timed step by step, they take a share of the time
 * far above their share of the FLOPs, the share their bytes at the memory
 * roof predict. Fused (bias and activation in the GEMM's epilogue, bias,
 * residual and norm in one pass, attention in one kernel) the layer moves
 * fewer bytes and saves at least the time those bytes took.
 *
 * Method: BERT-large's encoder layer and a Llama-style decoder block,
 * each built from experiment 09's kernels (kernels/layer.c) twice, unfused
 * and fused (model.c). Every step is a point, validated on its own inputs
 * against a double-precision reference; each whole layer is a point,
 * validated end to end (check.c). A shape's points are timed as one group,
 * round by round, with the roofs beside them; shares are taken per round.
 * See README.md.
 *
 * This file reads top to bottom: the claims, the axes, the points, the
 * judgement, then the columns and the experiment.
 */
#include "exp09.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the claims ----------------------------------------------------------------------- */

static const rl_claim CLAIMS[] = {
    [CHEAP_FLOPS] = {"cheap_flop_share", "unfused: normalization and element-wise steps' share of "
                     "the FLOPs (counted)", 0, 1, "%", 2, .counted = true,
                     .predicted_text = "under 1 %"},
    /* judged where their intensity is under a tenth of the ridge measured
     * beside them (judge.c) */
    [CHEAP_TIME_OVER_FLOPS] = {"cheap_time_over_flops", "unfused: their share of the time over "
                               "their share of the FLOPs", 5, INFINITY, "x", 0,
                               .predicted_text = "far above: >= 5x"},
    /* The model: each cheap step's bytes at the bandwidth probe of its
     * working set, measured beside it; the products at their measured
     * time. Judged where each cheap step reads at least half of its roof:
     * below, its own instructions, not its bytes, set its time, and a
     * failure would be the kernel's. */
    [CHEAP_TIME_MODEL] = {"cheap_time_share_model", "unfused: their share of the time over the "
                          "share their bytes at the roof predict", 1 / 1.5, 1.5, "x", 2,
                          .premise_mbu = 0.5, .predicted_text = "within 1.5x either way"},
    [STEPS_ADD_UP] = {"steps_add_up", "unfused: its steps' times, each timed alone, over the "
                      "whole layer's time", 0.85, 1.15, "x", 2, .predicted_text = "within +-15 %"},
    [FUSED_SAVING] = {"fused_saving_model", "fused: the time the layer saves over the bytes it "
                      "removes at the roof", 1.0, INFINITY, "x", 2,
                      .predicted_text = ">= 1: at least the removed bytes' time"},
    /* The published shares are training's: the same model, on the forward
     * and the backward pass together (BERT; the full sweep's) */
    [TRAIN_TIME_MODEL] = {"train_cheap_time_share_model", "training (forward and backward): "
                          "the cheap steps' share of the time over the share their bytes at the "
                          "roof predict", 1 / 1.5, 1.5, "x", 2, .premise_mbu = 0.5,
                          .predicted_text = "within 1.5x either way"},
    {0},
};

/* ---- the axes --------------------------------------------------------------------------- */

static const exp09_config CONFIGS[] = {
    /* BERT-large: 24 of these layers */
    {"bert-large", "bert", false, 1024, 16, 16, 64, 4096},
    /* Llama 3.2 1B's block: grouped-query attention, 8 KV heads */
    {"llama-1b", "llama", true, 2048, 32, 8, 64, 8192},
};

/* A shape: a configuration, a batch of sequences and their length. */
typedef struct exp09_shape {
    int config, batch, seq;
} exp09_shape;

static const exp09_shape SHAPES[] = {
    {0, 1, 128}, {0, 1, 512}, {0, 4, 512}, {1, 1, 128}, {1, 1, 512}, {1, 4, 512},
    {0, 32, 512}, {1, 8, 512}, /* a GPU's */
};

/* The shapes, as indices into SHAPES. The verdicts read each
 * configuration's last shape in the list: beyond the CPU's last-level
 * cache for BERT at 4 x 512 (its scores alone are 64 MiB), for Llama by
 * its weights. A quick run keeps one small BERT shape. */
static const rl_axis SHAPE_GPU = RL_AXIS("shape", RL_LIST(0), RL_LIST(2, 6, 4, 7),
                                         RL_LIST(0, 1, 2, 6, 3, 4, 5, 7));
static const rl_axis SHAPE = RL_AXIS("shape", RL_LIST(0), RL_LIST(1, 2, 4),
                                     RL_LIST(0, 1, 2, 3, 4, 5), .gpu = &SHAPE_GPU);

static const exp09_shape *shape_at(const rl_at *at) { return &SHAPES[rl_at_int(at, &SHAPE)]; }

/* Whether a shape is the one its configuration's verdicts read. */
static bool judged_shape(const rl_ctx *ctx, int index)
{
    rl_steps s = rl_axis_values(ctx, &SHAPE);
    int last = -1;
    for (int i = 0; i < s.n; i++)
        if (SHAPES[(int)s.v[i]].config == SHAPES[index].config)
            last = (int)s.v[i];
    return last == index;
}

/* ---- the points ------------------------------------------------------------------------- */

static void run_step(void *arg) { exp09_step_run(((const exp09_call *)arg)->s); }
static void run_program(void *arg) { exp09_program_run(((const exp09_call *)arg)->P); }

static void prepare_step(rl_ctx *ctx, rl_point *p)
{
    const exp09_call *c = RL_DATA(exp09_call, p);
    p->out = c->s->a.y;
    p->want = exp09_step_want(ctx, c->L, c->s, &p->count);
    p->frees_want = true;
}

static int program_output(const exp09_call *c)
{
    if (c->P == &c->L->backward)
        return c->L->grad_input;
    return c->P == &c->L->fused ? c->L->output_fused : c->L->output_unfused;
}

static void prepare_program(rl_ctx *ctx, rl_point *p)
{
    const exp09_call *c = RL_DATA(exp09_call, p);
    p->out = c->L->t[program_output(c)].dev;
    p->want = exp09_program_want(ctx, c->L, c->P, &p->count);
    p->frees_want = true;
}

/* A whole layer's tolerance: two norms and four products deep, each
 * product's rounding carried through the next. */
static const double WHOLE_ATOL = 2e-3, WHOLE_RTOL = 2e-3;

/* The distinct tensors a program touches, in bytes: its working set. */
static double program_footprint(const exp09_layer *L, const exp09_program *P)
{
    bool used[EXP09_MAX_TENSORS] = {0};
    for (int i = 0; i < P->n; i++) {
        const exp09_step *s = &P->s[i];
        int ids[] = {s->y, s->y2, s->x, s->r, s->w, s->bias, s->gamma, s->beta, s->mask};
        for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
            if (ids[k] >= 0)
                used[ids[k]] = true;
    }
    double bytes = 0;
    for (int i = 0; i < L->nt; i++)
        bytes += used[i] ? 4.0 * (double)L->t[i].count : 0;
    return bytes;
}

static exp09_call *call_of(rl_ctx *ctx, exp09_layer *L, const exp09_program *P, int index,
                           bool judged)
{
    exp09_call *c = RL_NEW(ctx, exp09_call);
    const exp09_step *s = index >= 0 ? &P->s[index] : NULL;
    *c = (exp09_call){L->cfg.name, P->name, s ? s->name : "layer",
                      s ? layer_class_name(s->v->cls) : "layer", L->batch, L->seq, index, judged,
                      s, P, L};
    return c;
}

static void add_program_points(rl_ctx *ctx, exp09_layer *L, const exp09_program *P, int group,
                               bool judged)
{
    int backend = rl_kernel_backend(ctx);
    for (int i = 0; i < P->n; i++) {
        const exp09_step *s = &P->s[i];
        double bytes = layer_bytes(s->v, &s->a, backend);
        exp09_call *c = call_of(ctx, L, P, i, judged);
        rl_point_add(ctx, &(rl_point){
            .variant = KERNEL_VARIANT(s->v), .group = group, .run = run_step, .arg = c,
            RL_POINT_DATA(c),
            .prepare = prepare_step, .atol = layer_atol(s->v, &s->a), .rtol = LAYER_RTOL,
            .bytes = bytes, .flops = layer_flops(s->v, &s->a), .footprint = bytes,
            .pattern = s->v->cls == LAYER_CONTRACTION ? RL_READ : RL_COPY, .optional = !judged});
    }
    exp09_call *whole = call_of(ctx, L, P, -1, judged);
    rl_point_add(ctx, &(rl_point){
        .group = group, .run = run_program, .arg = whole, RL_POINT_DATA(whole),
        .prepare = prepare_program, .atol = WHOLE_ATOL, .rtol = WHOLE_RTOL,
        .bytes = exp09_program_bytes(P, backend), .flops = exp09_program_flops(P),
        .footprint = program_footprint(L, P), .pattern = RL_COPY, .optional = !judged});
}

static void open_layer(rl_ctx *ctx, void *state) { exp09_layer_open(ctx, state); }

/* Before the buffers go: one traced call of each program. */
static void measured_layer(rl_ctx *ctx, rl_points *pts, void *state)
{
    (void)pts;
    exp09_trace_part(ctx, state);
}

static void close_layer(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    exp09_layer_close(ctx, state);
}

/* A shape that does not fit the working-set limit, or whose steps this
 * backend lacks, is left out (and said). */
static bool shape_left_out(const rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    const exp09_shape *sh = shape_at(at);
    exp09_layer L;
    char why[160];
    const exp09_config *cfg = &CONFIGS[sh->config];
    if (!exp09_layer_plan((rl_ctx *)ctx, &L, cfg, sh->batch, sh->seq,
                          exp09_wants_backward(ctx, cfg, sh->batch), why, sizeof why))
        return true;
    return exp09_layer_bytes(&L) > rl_max_bytes(ctx);
}

static void layer_part(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    (void)state;
    const exp09_shape *sh = shape_at(at);
    exp09_layer *L = RL_NEW(ctx, exp09_layer);
    char why[160], *heading = rl_keep(ctx, 200);
    const exp09_config *cfg = &CONFIGS[sh->config];
    if (!exp09_layer_plan(ctx, L, cfg, sh->batch, sh->seq, exp09_wants_backward(ctx, cfg, sh->batch),
                          why, sizeof why))
        rl_die(RL_EXIT_FAILED, "exp-09: %s", why);
    snprintf(heading, 200, "%s, batch %d x %d tokens: the unfused layer's steps, the fused layer's%s, "
             "each whole", L->cfg.name, L->batch, L->seq,
             L->backward.n ? ", the backward pass's" : "");
    *part = (rl_part){.open = open_layer, .measured = measured_layer, .done = close_layer,
                      .state = L, .heading = heading};
}

static void layer_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    exp09_layer *L = at->part_state;
    int group = rl_group_new(ctx);
    bool judged = judged_shape(ctx, rl_at_int(at, &SHAPE));
    add_program_points(ctx, L, &L->unfused, group, judged);
    add_program_points(ctx, L, &L->fused, group, judged);
    /* the training table's (judge.c), timed in the same group as the
     * forward pass it completes */
    if (L->backward.n)
        add_program_points(ctx, L, &L->backward, group, false);
}

static void declare(rl_ctx *ctx)
{
    char shapes[256] = "";
    rl_steps s = rl_axis_values(ctx, &SHAPE);
    for (int i = 0; i < s.n; i++) {
        const exp09_shape *sh = &SHAPES[(int)s.v[i]];
        rl_appendf(shapes, sizeof shapes, "%s%s %dx%d", i ? ", " : "", CONFIGS[sh->config].name,
                   sh->batch, sh->seq);
    }
    rl_meta(ctx, "shapes", "%s (configuration, batch x sequence length); the verdicts read each "
            "configuration's last", shapes);
    rl_meta(ctx, "configs", "bert-large: hidden 1024, 16 heads of 64, FFN 4096, post-norm, GELU "
            "(tanh), padding mask (the last eighth of each sequence's keys); llama-1b: hidden "
            "2048, 32 query heads and 8 KV heads of 64, FFN 8192 (SwiGLU), pre-norm RMSNorm, RoPE, "
            "causal; FP32 throughout");
    rl_meta(ctx, "classes", "contraction: the GEMMs and the attention's products (and the fused "
            "attention, and a GEMM with its epilogue); normalization: softmax, layer norm, "
            "RMSNorm; element-wise: bias, GELU, SwiGLU's gate, residual add, scale and mask, RoPE");
    rl_meta(ctx, "validation", "each step: the first sequence of its output against a "
            "double-precision reference on its own inputs (atol per step, rtol %g); each whole "
            "layer: end to end from its input (atol %g, rtol %g)", LAYER_RTOL, WHOLE_ATOL,
            WHOLE_RTOL);
    static const rl_axis *const AXES[] = {&SHAPE, NULL};
    rl_sweep_declare(ctx, &(rl_sweep){AXES, .part_axes = 1, .part = layer_part,
                                      .skip = shape_left_out, .points = layer_points});
}

/* ---- the judgement ------------------------------------------------------------------------- */

/* judge.c: each configuration's verdicts at its judged shape, and the
 * tables of shares and of fusions; then the trace of every shape. */
static void judge(rl_ctx *ctx, const rl_points *all)
{
    for (size_t c = 0; c < sizeof CONFIGS / sizeof CONFIGS[0]; c++) {
        exp09_judge_config(ctx, all, CLAIMS, &CONFIGS[c]);
        if (!CONFIGS[c].llama)
            exp09_judge_training(ctx, all, &CLAIMS[TRAIN_TIME_MODEL], &CONFIGS[c]);
    }
    exp09_trace_write(ctx);
}

/* ---- the columns ------------------------------------------------------------------------------ */

static const rl_column COLUMNS[] = {
    RL_TEXT("config", NULL, NULL, exp09_call, config),
    RL_INT("batch", NULL, NULL, exp09_call, batch),
    RL_INT("seq", NULL, NULL, exp09_call, seq),
    RL_TEXT("program", NULL, NULL, exp09_call, program),
    RL_INT("step_index", NULL, NULL, exp09_call, index),
    RL_TEXT("step", NULL, NULL, exp09_call, step),
    RL_TEXT("class", NULL, NULL, exp09_call, cls),
    RL_INT("judged", NULL, NULL, exp09_call, judged),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    {"flops", NULL, NULL, .num = rl_col_flops},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"ai", NULL, NULL, .num = rl_col_ai},
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    {0},
};

static const rl_column DERIVED[] = {
    {"attainable_tflops", NULL, NULL, .num = rl_col_attainable},
    {"share_of_layer", NULL, NULL, .num = exp09_col_share, .measured = true},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "program", "%-8s", exp09_call, program),
    RL_TEXT(NULL, "step", "%-26s", exp09_call, step),
    RL_TEXT(NULL, "class", "%-13s", exp09_call, cls),
    RL_COLUMN_TIME_US,
    RL_COLUMN_GBPS,
    RL_COLUMN_TFLOPS,
    {NULL, "AI", "%7.1f", .num = rl_col_ai},
    RL_COLUMN_MBU,
    RL_COLUMN_MFU,
    {NULL, "share", "%6.3f", .num = exp09_col_share, .measured = true},
    {0},
};

/* ---- the experiment ---------------------------------------------------------------------------- */

static const kernel_family *const FAMILIES[] = {&layer_family, NULL};

static const rl_experiment EXP09 = {
    .id = "09",
    .slug = "09-layer",
    .title = "A transformer layer's time goes to the steps that do no arithmetic",
    .claim = "In a transformer layer the tensor contractions do 99.8 % of the FLOPs, yet "
             "normalization and element-wise steps, 0.2 % of the FLOPs, take about 37 % of the "
             "time of a BERT layer (Ivanov et al., training on a V100): each moves a whole "
             "activation through memory for almost no arithmetic, so its share of the time is "
             "what its bytes at the memory roof take. Fusing them into the products' epilogues "
             "and one-pass norms, and attention into one kernel, saves that time.",
    .source = "Ivanov, Dryden, Ben-Nun, Li, Hoefler, \"Data Movement Is All You Need: A Case "
              "Study on Optimizing Transformers\" (MLSys 2021, arXiv 2007.00072)",
    .prediction = "the forward pass judged against its own model (each step's bytes and FLOPs at "
                  "the roofs measured beside it); the published shares are training's (forward "
                  "and backward) on a V100, drawn beside ours as another machine's",
    .claims = CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .probes = RL_PROBE_BANDWIDTH | RL_PROBE_COMPUTE,
    .derived = DERIVED,
    .table = TABLE,
    .default_cache = RL_HOT,
    .compare_keys = "config,batch,seq,program,step",
    .compare_value = "time_us_median",
    .declare = declare,
    .judge = judge,
};

int main(int argc, char **argv) { return rl_main(&EXP09, argc, argv); }

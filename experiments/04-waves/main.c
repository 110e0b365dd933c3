/*
 * Experiment 04 -- tile and wave quantization at 108 and 132 SMs, and
 * vocabulary padding.
 *
 * A GEMM's output is cut into tiles, one thread block each. An SM holds a
 * fixed number of blocks at once, so blocks run in waves of SMs x blocks
 * per SM, and a partly filled last wave costs as long as a full one: one
 * more column of tiles can cost a whole wave.
 *
 * One part of arithmetic and three measured, one file each (model.c,
 * staircase.c, library.c, vocab.c), declared below in that order; each
 * chapter reads top to bottom, its axes, its part and points, its
 * verdict, and judges the claim main.c gives it when its points are
 * measured. Every GEMM is a point (calls.c): validated against a
 * double-precision reference, then timed by the harness. See README.md.
 */
#include "exp04.h"

#include <math.h>

/* ---- the claims, one per verdict; the own kernel's has a text per backend ---- */

enum { CLAIM_MODEL, CLAIM_STEP_GPU, CLAIM_STEP_CPU, CLAIM_LIBRARY, CLAIM_VOCAB };

static const rl_claim CLAIMS[] = {
    [CLAIM_MODEL] = {"wave_model_108_132", "model: waves on 108 and 132 SMs", 0, 0, "", 0,
                     .predicted_text = "all N agree", .counted = true},
    [CLAIM_STEP_GPU] = {"wave_step_own_kernel", "own kernel, 1 step past a full wave", 1.7,
                        INFINITY, "x", 2, .predicted_text = ">= 1.7x time"},
    [CLAIM_STEP_CPU] = {"wave_step_own_kernel", "own kernel, 1 step past a wave of threads", 1.7,
                        INFINITY, "x", 2, .predicted_text = ">= 1.7x time"},
    [CLAIM_LIBRARY] = {"wave_step_library", "cuBLAS TFLOP/s: wave end / 1 step past", 1 + 1e-9,
                       INFINITY, "x", 2, .predicted_text = "> 1x"},
    /* at least 2 % faster, or twice the measured spread: set at run time */
    [CLAIM_VOCAB] = {"vocab_padding", "V 50257 -> 50304: fwd+bwd time ratio", 1.02, INFINITY, "x",
                     3, .predicted_text = "> 1x beyond noise"},
    {0},
};

static const char *part_choice = "all";

static const rl_option OPTIONS[] = {
    {"part", "PART",
     "staircase (own kernel vs N), library (cuBLAS sawtooth, GPU only), vocab (GPT-2's output "
     "layer) or all; the model rows are always written",
     "staircase|library|vocab|all", &part_choice},
    {0},
};

/* What a point is; the model's rows (model.c) fill the same columns. */
static const rl_column COLUMNS[] = {
    RL_TEXT("part", NULL, NULL, exp04_call, part),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_TEXT("gemm", NULL, NULL, exp04_call, gemm),
    RL_INT("m", NULL, NULL, exp04_call, kernel.args.m),
    RL_INT("n", NULL, NULL, exp04_call, kernel.args.n),
    RL_INT("k", NULL, NULL, exp04_call, kernel.args.k),
    RL_DOUBLE("vocab", NULL, NULL, exp04_call, vocab),
    RL_WAVE_MODEL_COLUMNS(exp04_call, w),
    RL_DOUBLE("wave_end", NULL, NULL, exp04_call, wave_end),
    {"flops", NULL, NULL, .num = rl_col_flops},
    {0},
};

/* Computed from every point: staircase.c's model, vocab.c's speedups. */
static const rl_column DERIVED[] = {
    {"model_time_us", NULL, NULL, .num = exp04_staircase_model_us},
    RL_RATIO_COLUMNS("speedup_vs_v50257", exp04_vocab_speedup_ratio),
    {0},
};


static const kernel_family *const FAMILIES[] = {&gemm_family, NULL};

static void declare(rl_ctx *ctx);

static const rl_experiment EXP04 = {
    .id = "04",
    .slug = "04-waves",
    .title = "Tile and wave quantization at 108 and 132 SMs, and vocabulary padding",
    .claim = "A GEMM's tiles run in waves of SMs x blocks per SM, and a partial last wave costs a "
             "full one: 117 tiles on 108 SMs take about twice as long as 108 tiles for ~0.5 % more "
             "work. Padding GPT-2's vocabulary from 50257 to 50304 (64 x 786) makes it faster.",
    .source = "NVIDIA, Matrix Multiplication Background User's Guide (wave quantization, M = 2304, "
              "K = 4096); Andrej Karpathy, nanoGPT (vocab_size 50304, ~25 % faster training)",
    .prediction = "on the CPU the threads play the SMs: the mechanism, not the GPU's numbers",
    .claims = CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_COMPUTE,
    .derived = DERIVED,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "part,variant,gemm,m,n,k",
    .compare_value = "time_us_median",
    .declare = declare, /* each part judges its own claim (exp04.h) */
};

/* The model's rows first, whatever --part says; then the parts chosen. */
static void declare(rl_ctx *ctx)
{
    rl_meta(ctx, "part", "%s", part_choice);
    rl_meta(ctx, "units", "%s", ctx->kind == RL_CUDA ? "SMs" : "CPU threads, standing in for SMs");
    rl_meta(ctx, "validation", "every element vs a double-precision reference (OpenBLAS dgemm "
                               "on the same FP16-representable inputs in [-1, 1]), atol 1e-6 x k, "
                               "rtol %g", GEMM_RTOL);
    exp04_model_declare(ctx, &CLAIMS[CLAIM_MODEL]);
    if (rl_option_is(part_choice, "staircase"))
        exp04_staircase_declare(ctx, &CLAIMS[ctx->kind == RL_CUDA ? CLAIM_STEP_GPU : CLAIM_STEP_CPU]);
    if (rl_option_is(part_choice, "library"))
        exp04_library_declare(ctx, &CLAIMS[CLAIM_LIBRARY]);
    if (rl_option_is(part_choice, "vocab"))
        exp04_vocab_declare(ctx, &CLAIMS[CLAIM_VOCAB]);
}

int main(int argc, char **argv) { return rl_main(&EXP04, argc, argv); }

/*
 * Experiment 04 -- tile and wave quantization at 108 and 132 SMs, and
 * vocabulary padding.
 *
 * A GEMM's output is cut into tiles, one thread block each. An SM holds a
 * fixed number of blocks at once, so blocks run in waves of SMs x blocks
 * per SM, and a partly filled last wave costs as long as a full one: one
 * more column of tiles can cost a whole wave.
 *
 * Method: three measured parts and one of arithmetic.
 *   staircase  the own tiled kernel (variant 1) on this device, M chosen so
 *              that whole tile columns fill whole waves, N swept across
 *              several waves: time climbs in steps (sweeps.c);
 *   library    cuBLAS (variant 2) on NVIDIA's example, M = 2304, K = 4096,
 *              N in steps of 8: TFLOP/s as a sawtooth, GPU only (sweeps.c);
 *   vocab      GPT-2 small's output layer, V = 50257 vs 50304 = 64 x 786,
 *              a short sweep of V, and both backward GEMMs (vocab.c);
 *   model      the wave count of NVIDIA's example on 108 SMs (A100) and
 *              132 SMs (H100/H200), whatever the device (model.c).
 * Every GEMM is validated against a double-precision reference before it
 * is timed (points.c). See README.md for what to look for.
 */
#include "exp04.h"

#include <stdio.h>
#include <string.h>

static const char *part_choice = "all";

static const rl_option OPTIONS[] = {
    {"part", "PART",
     "staircase (own kernel vs N), library (cuBLAS sawtooth, GPU only), vocab (GPT-2's output "
     "layer) or all; the model rows are always written",
     "staircase|library|vocab|all", &part_choice},
    {0},
};

static const char *const COLUMNS[] = {
    "part", "variant", "number", "gemm", "m", "n", "k", "vocab", "tile_m", "tile_n", "tiles",
    "units", "blocks_per_unit", "waves", "wave_efficiency", "wave_end", "flops",
    RL_MEASUREMENT_COLUMNS, "tflops", "mfu", "model_time_us", "speedup_vs_v50257", "validated",
    "max_abs_err", "skipped_reason", NULL};

static const rl_experiment EXP04 = {
    .id = "04",
    .slug = "04-waves",
    .title = "Tile and wave quantization at 108 and 132 SMs, and vocabulary padding",
    .claim = "A GEMM's tiles run in waves of SMs x blocks per SM, and a partial last wave costs a "
             "full one: 117 tiles on 108 SMs take about twice as long as 108 tiles for ~0.5 % more "
             "work. Padding GPT-2's vocabulary from 50257 to 50304 (64 x 786) makes it faster.",
    .source = "NVIDIA, Matrix Multiplication Background User's Guide (wave quantization, M = 2304, "
              "K = 4096); Andrej Karpathy, nanoGPT (vocab_size 50304, ~25 % faster training)",
    .prediction = "own kernel: one step of N past a full wave costs >= 1.7x the full wave; cuBLAS: "
                  "TFLOP/s falls one step past a wave; padded V faster; the wave counts of 108 and "
                  "132 SMs match the formula",
    .columns = COLUMNS,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "part,variant,gemm,m,n,k",
    .compare_value = "time_us_median",
};

const gemm_variant *variant_number(const run *r, int number)
{
    for (const gemm_variant *v = r->table; v->name; v++)
        if (v->number == number && rl_variant_selected(r->ctx, v->number, v->name))
            return v;
    return NULL;
}

bool part_selected(const run *r, const char *part)
{
    return !strcmp(r->part, "all") || !strcmp(r->part, part);
}

static const gemm_variant *table_for(rl_backend_kind kind)
{
#ifdef RL_HAVE_CUDA
    if (kind == RL_CUDA)
        return gemm_cuda_variants;
#endif
    (void)kind;
    return gemm_cpu_variants;
}

static void check_variants(const run *r)
{
    int numbers[32], n = 0;
    const char *names[32];
    for (const gemm_variant *v = r->table; v->name && n < 32; v++, n++) {
        numbers[n] = v->number;
        names[n] = v->name;
    }
    rl_check_variants(r->ctx, numbers, names, n);
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP04, argc, argv);
    run r = {.ctx = ctx, .table = table_for(ctx->kind), .part = part_choice};
    r.units = ctx->kind == RL_CUDA ? ctx->dev->sm_count : ctx->dev->threads;
    check_variants(&r);
    if (ctx->args.list) {
        printf("variants of kernels/%s:\n", ctx->kind == RL_CUDA ? "gemm.cu" : "cpu/gemm.c");
        for (const gemm_variant *v = r.table; v->name; v++)
            rl_list_variant(v->number, v->name, v->what);
        return rl_end(ctx);
    }

    /* Every part states its plan in the CSV header before the first row. */
    r.ceil = rl_ceilings_get(ctx);
    rl_meta(ctx, "part", "%s", r.part);
    rl_meta(ctx, "units", "%s", ctx->kind == RL_CUDA ? "SMs" : "CPU threads, standing in for SMs");
    rl_meta(ctx, "validation", "every element vs a double-precision reference (OpenBLAS dgemm "
                               "on the same FP16-representable inputs in [-1, 1]), atol 1e-6 x k, "
                               "rtol %g", GEMM_RTOL);
    wave_sweep stairs = plan_staircase(&r), lib = plan_library(&r);
    vocab_plan voc = plan_vocab(&r);
    plan_sweep(ctx, &stairs);
    plan_sweep(ctx, &lib);
    plan_vocab_time(ctx, &voc, (variant_number(&r, 1) != NULL) + (variant_number(&r, 2) != NULL));
    rl_plan_print(ctx);

    model_rows(ctx);
    judge_model(ctx);
    run_staircase(&r, &stairs);
    run_library(&r, &lib);
    run_vocab(&r, &voc);
    return rl_end(ctx);
}

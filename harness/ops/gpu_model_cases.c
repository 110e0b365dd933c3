/*
 * gpu_model_cases.c -- the verdicts make gpu-model judges, each at the
 * shapes its experiment's lab sweep judges on a GPU, with the launch its
 * kernel's launcher would make there (the grid, from the kernels' own
 * plan functions where they have one) and the verdict's bar as a fraction
 * of the roof. A bar's reason names the claim it comes from.
 */
#include "gpu_model_cases.h"

#include "attention.h"
#include "gemv.h"
#include "layer_plan.h"
#include "moe.h"
#include "quant.h"
#include "quant_dp4a.h"
#include "quant_mma.h"
#include "spill.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

typedef struct cases {
    judged_case *v;
    int n, max;
    int *relative_to;
    double *factor;
    const rl_gpu_spec *gpu;
    blocks_per_sm_fn occupancy;
} cases;

static judged_case *add(cases *c, const char *exp, const char *claim, const char *source,
                        rl_stream_rule rule, double bar, const char *why)
{
    if (c->n >= c->max)
        return NULL;
    judged_case *j = &c->v[c->n];
    *j = (judged_case){.exp = exp, .claim = claim, .source = source, .rule = rule, .bar = bar};
    snprintf(j->bar_why, sizeof j->bar_why, "%s", why);
    c->relative_to[c->n] = -1;
    c->factor[c->n] = 1;
    c->n++;
    return j;
}

static case_part *part(judged_case *j, const char *kernel, int times)
{
    case_part *p = &j->part[j->nparts++];
    *p = (case_part){.times = times, .launch.kernels = 1};
    snprintf(p->kernel, sizeof p->kernel, "%s", kernel);
    return p;
}

/* ---- exp-02: the FP16 GEMV (kernels/gemv.cu) ------------------------------------- */

/* gemv_tile: 16 rows a warp, k split over warps while the grid fits one
 * wave (gemv.c's gemv_cuda_plan_for, as the launcher plans it). */
static void gemv_fp16(cases *c, judged_case *j, int rows, int k, int n)
{
    case_part *p = part(j, "gemv_tile", 1);
    int per_sm = c->occupancy(c->gpu, "gemv_tile", 32 * GEMV_CUDA_BLOCK_WARPS, 0);
    gemv_cuda_plan plan = gemv_cuda_plan_for(rows, k, c->gpu->sms, per_sm);
    p->launch.blocks = plan.blocks;
    p->launch.threads = plan.threads;
    p->launch.bytes = 2.0 * rows * k + 2.0 * n * k + 4.0 * n * rows;
}

static void exp02(cases *c)
{
    static const struct { const char *name; int k, rows; } SHAPES[] = {{"4096x14336", 4096, 14336},
                                                                       {"8192x8192", 8192, 8192}};
    for (int s = 0; s < 2; s++) {
        int one = c->n;
        for (int n = 1; n <= 8; n++) {
            judged_case *j = n == 1 ? add(c, "02", "mbu_decode", "kernels/gemv* kernels/warp.cuh kernels/half.h", RL_STREAM_EF, 0.8,
                                          "exp-02 mbu_decode: MBU at n = 1 >= 0.80")
                                    : add(c, "02", "batching_free", "kernels/gemv* kernels/warp.cuh kernels/half.h", RL_STREAM_EF, NAN,
                                          "exp-02 batching_free: t(n) / t(1) <= 1.25, so n = 1's fraction (at most the roof) / 1.25");
            if (!j)
                return;
            snprintf(j->what, sizeof j->what, "%s n=%d", SHAPES[s].name, n);
            snprintf(j->kind, sizeof j->kind, "%s", SHAPES[s].name);
            snprintf(j->meas_where, sizeof j->meas_where, "shape=%s,variant=gemv_fp16,n=%d", SHAPES[s].name, n);
            gemv_fp16(c, j, SHAPES[s].rows, SHAPES[s].k, n);
            if (n > 1) {
                c->relative_to[c->n - 1] = one;
                c->factor[c->n - 1] = 1 / 1.25;
            }
        }
    }
}

/* ---- exp-03: the integer decode (kernels/quant.cu, gemv_dp4a) --------------------- */

typedef struct format {
    const char *name, *block;
    int bytes;        /* per block of 256 weights */
    bool pairs_rows;  /* two rows a warp from 8192 rows (quant.cu's pairs_rows) */
} format;

/* The formats exp-03's decode claims judge: 8.5 to 4.5 bits (q2 is
 * measured and drawn, not judged). */
static const format FORMATS[] = {
    {"q8", "q8_block", sizeof(q8_block), true}, {"q6", "q6_block", sizeof(q6_block), false},
    {"q5", "q5_block", sizeof(q5_block), false}, {"q4", "q4_block", sizeof(q4_block), true},
};

/* One matrix of the step: quant.cu's launch_dp4a. */
static void dp4a_matrix(judged_case *j, const format *f, int rows, int k, int sms)
{
    int r = f->pairs_rows && rows >= 8192 ? 2 : 1, nb = k / QUANT_BLOCK;
    bool tail = nb % 8 != 0; /* 2 x DP4A_UNROLL blocks per iteration */
    char name[64];
    snprintf(name, sizeof name, "gemv_dp4a<%s, %d, %s>", f->block, r, tail ? "true" : "false");
    case_part *p = part(j, name, 1);
    int per_block = quant_dp4a_warps_per_block(rows, r, sms);
    p->launch.blocks = ceil_div(ceil_div(rows, r), per_block);
    p->launch.threads = 32 * per_block;
    p->launch.dyn_smem = (double)nb * 32 * 16;
    p->launch.bytes = (double)rows * nb * f->bytes + 4.0 * k + 4.0 * rows;
}

/* A decode step of one Llama 3 8B layer: its matrices as exp-03's model
 * plans them (q, k and v as one; o; gate and up as one; down), in F16
 * (the claims' baseline: gemv_fp16_cuda's gemv_tile) and each format. */
static const struct { int rows, k; } LAYER[] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}};
enum { LAYER_MATRICES = sizeof LAYER / sizeof LAYER[0] };

static judged_case *layer_case(cases *c, const char *format, const char *sources)
{
    judged_case *j = add(c, "03", "size_x_decode_flat", sources, RL_STREAM_GLOBAL, 0.85,
                         "exp-03 size_x_decode premise: every format's decode at >= 0.85 of its roof");
    if (j) {
        snprintf(j->what, sizeof j->what, "%s: a Llama 3 8B layer (4 matrices)", format);
        snprintf(j->kind, sizeof j->kind, "%s", format);
        snprintf(j->meas_where, sizeof j->meas_where, "source=measured,format=%s,phase=decode,variant=gemv_int8",
                 format);
    }
    return j;
}

static void exp03(cases *c, const rl_gpu_spec *g)
{
    judged_case *f16 = layer_case(c, "f16", "kernels/gemv* kernels/warp.cuh kernels/half.h");
    if (!f16)
        return;
    f16->rule = RL_STREAM_EF;
    for (int m = 0; m < LAYER_MATRICES; m++)
        gemv_fp16(c, f16, LAYER[m].rows, LAYER[m].k, 1);
    for (size_t f = 0; f < sizeof FORMATS / sizeof FORMATS[0]; f++) {
        judged_case *j = layer_case(c, FORMATS[f].name, "kernels/quant* kernels/warp.cuh kernels/half.h");
        if (!j)
            return;
        for (int m = 0; m < LAYER_MATRICES; m++)
            dp4a_matrix(j, &FORMATS[f], LAYER[m].rows, LAYER[m].k, g->sms);
    }
}

/* ---- exp-03's batch part: gemm_mma (kernels/quant_mma.cuh) --------------------------- */

/* One matrix at n tokens: quant.cu's launch_mma (and, split, the sum). */
static void mma_matrix(judged_case *j, int rows, int k, int n, int sms)
{
    int per_split, splits = quant_mma_splits(rows, n, k, sms, &per_split);
    int mt = quant_mma_token_tiles(n);
    char name[64];
    snprintf(name, sizeof name, "gemm_mma<q4_block, %d>", mt);
    case_part *p = part(j, name, 1);
    p->launch.blocks = ceil_div(n, 16 * mt) * ceil_div(rows, QUANT_MMA_ROWS) * splits;
    p->launch.threads = 32 * QUANT_MMA_WARPS;
    /* the weights once, x once (the L2 serves the other thread blocks),
     * the slices' partial sums written and read back, y */
    p->launch.bytes = (double)rows * (k / QUANT_BLOCK) * sizeof(q4_block) + 2.0 * n * k +
                      4.0 * n * rows * (splits > 1 ? 2 * splits + 1 : 1);
    p->launch.kernels = splits > 1 ? 2 : 1;
}

/* batch_speedup_small_q4 at M = 2, the smallest past one on a GPU's lab
 * axis: q4 over F16 >= 2.5x, with F16 (cuBLAS) at most at the roof, so
 * q4's step must read its own bytes at 2.5 / (512 / 144) of it. */
static void exp03_batch(cases *c, const rl_gpu_spec *g)
{
    judged_case *j = add(c, "03", "batch_speedup_small_q4", "kernels/quant* kernels/warp.cuh kernels/half.h",
                         RL_STREAM_EF, 2.5 / (512.0 / 144),
                         "exp-03 batch_speedup_small_q4: q4 >= 2.5x an F16 step at the roof, M = 2");
    if (!j)
        return;
    snprintf(j->what, sizeof j->what, "q4 M=2: a Llama 3 8B layer (4 matrices)");
    snprintf(j->kind, sizeof j->kind, "q4 M=2");
    snprintf(j->meas_where, sizeof j->meas_where, "source=measured,format=q4,phase=batch,variant=gemm_mma,tokens=2");
    for (int m = 0; m < LAYER_MATRICES; m++)
        mma_matrix(j, LAYER[m].rows, LAYER[m].k, 2, g->sms);
}

/* ---- exp-07: attention (kernels/attention.cu) --------------------------------------- */

static void exp07_decode(cases *c, const rl_gpu_spec *g)
{
    static const struct { const char *name; int hq, hkv; } CONFIGS[] = {
        {"MHA", 32, 32}, {"GQA4", 32, 8}, {"GQA8", 32, 4}};
    static const int B[] = {1, 4, 64}, L[] = {2048, 8192};
    const int dim = 128;
    for (int cf = 0; cf < 3; cf++)
        for (int b = 0; b < 3; b++)
            for (int l = 0; l < 2; l++) {
                int pairs = B[b] * CONFIGS[cf].hkv, g_size = CONFIGS[cf].hq / CONFIGS[cf].hkv;
                double kv = (double)pairs * L[l] * dim * 2 * 2;
                if (kv <= g->l2_mb * 1e6)
                    continue; /* judged only beyond the cache */
                judged_case *j = add(c, "07", "attention_mbu", "kernels/attention* kernels/warp.cuh kernels/half.h", RL_STREAM_EF, 0.7,
                                     "exp-07 attention_mbu: MBU >= 0.70 at L >= 2048 beyond the cache");
                if (!j)
                    return;
                snprintf(j->what, sizeof j->what, "%s B=%d L=%d", CONFIGS[cf].name, B[b], L[l]);
                snprintf(j->kind, sizeof j->kind, "%s", CONFIGS[cf].name);
                snprintf(j->meas_where, sizeof j->meas_where,
                         "phase=decode,config=%s,variant=decode_fused,batch=%d,ctx=%d", CONFIGS[cf].name, B[b], L[l]);
                char name[64];
                snprintf(name, sizeof name, "decode_split<%d, %d>", dim, g_size);
                case_part *p = part(j, name, 1);
                p->launch.threads = 32 * ATTN_DECODE_WARPS;
                p->launch.dyn_smem = (double)attention_decode_smem_bytes(dim, g_size);
                int per_sm = c->occupancy(g, name, p->launch.threads, p->launch.dyn_smem);
                int splits = attention_decode_splits(L[l], pairs, g->sms, per_sm);
                p->launch.blocks = (long long)splits * pairs;
                p->launch.bytes = kv + (double)B[b] * CONFIGS[cf].hq * dim * 2 * 2 +
                                  (double)B[b] * CONFIGS[cf].hq * splits * (dim + 2) * 4 * 2;
                p->launch.kernels = 2; /* and the merge */
            }
}

/* The fused prefill (WMMA, tensor cores) against the materialized path at
 * its best: cuBLAS at the tensor peak and the n x n scores through DRAM
 * (12 bytes a score: attention.cu's header). Fused wins while its
 * fraction of the peak exceeds (FLOPs / peak) / that path's time. */
static double prefill_bar(const rl_gpu_spec *g, int n, int dim)
{
    double flops = 4.0 * n * n * dim, at_peak = flops / (g->tensor_tflops * 1e12);
    return at_peak / (at_peak + 12.0 * n * n / (g->dram_gbps * 1e9));
}

static void exp07_prefill(cases *c, const rl_gpu_spec *g)
{
    static const int N[] = {4096, 8192};
    const int heads = 16, dim = 128;
    for (int i = 0; i < 2; i++) {
        char why[160];
        snprintf(why, sizeof why, "exp-07 prefill_fused_faster: faster than cuBLAS at the peak and "
                 "12 B a score through DRAM: %.2f of the peak", prefill_bar(g, N[i], dim));
        judged_case *j = add(c, "07", "prefill_fused_faster", "kernels/attention* kernels/warp.cuh kernels/half.h", RL_STREAM_ASYNC,
                             prefill_bar(g, N[i], dim), why);
        if (!j)
            return;
        j->tensor = true;
        snprintf(j->what, sizeof j->what, "n=%d %d heads d=%d", N[i], heads, dim);
        snprintf(j->kind, sizeof j->kind, "n=%d", N[i]);
        snprintf(j->meas_where, sizeof j->meas_where, "phase=prefill,variant=prefill_fused,ctx=%d", N[i]);
        /* two stages where an SM holds two blocks of them, as the launcher chooses */
        int two = c->occupancy(g, "flash_prefill<128, 2>", 128, (double)attention_prefill_smem_bytes(dim, 2));
        case_part *p = part(j, two >= 2 ? "flash_prefill<128, 2>" : "flash_prefill<128, 1>", 1);
        p->launch.blocks = (long long)(N[i] / 64) * heads;
        p->launch.threads = 128;
        p->launch.dyn_smem = (double)attention_prefill_smem_bytes(dim, two >= 2 ? 2 : 1);
        p->launch.bytes = 4.0 * heads * N[i] * dim * 2;
        p->launch.tensor_fma = 2.0 * heads * N[i] * (double)N[i] * dim;
    }
}

/* ---- exp-08: the MoE layer (kernels/moe.cu) ------------------------------------------ */

static void exp08_moe(cases *c)
{
    static const int TOP_K[] = {1, 2, 4, 8};
    const int rows = 768, k = 2048;
    for (int i = 0; i < 4; i++) {
        judged_case *j = add(c, "08", "moe_active_bytes", "kernels/moe* kernels/warp.cuh kernels/half.h",
                             RL_STREAM_EF, 0.87,
                             "exp-08 moe_active_bytes: the step at >= 0.87 of the roof (1 / 1.15)");
        if (!j)
            return;
        snprintf(j->what, sizeof j->what, "Qwen3-30B-A3B experts B=1 top-%d", TOP_K[i]);
        snprintf(j->kind, sizeof j->kind, "B=1");
        snprintf(j->meas_where, sizeof j->meas_where, "part=moe_top_k,variant=moe_active,top_k=%d,batch=1",
                 TOP_K[i]);
        j->launch_premise = 10; /* exp-08's FIXED_COST_MULTIPLE: its premise on the launch */
        case_part *p = part(j, "moe_plan_kernel", 1);
        moe_launch g = moe_grid(rows, k, TOP_K[i], c->gpu->sms);
        p->launch.blocks = (long long)g.blocks_x * g.blocks_y;
        p->launch.threads = 32 * MOE_BLOCK_WARPS;
        p->launch.bytes = (double)TOP_K[i] * rows * k * 2 + 2.0 * k + 4.0 * rows * TOP_K[i];
    }
}

/* The overlapped spill at the judged f: the zero-copy kernel's grid
 * (spill_grid), its blocks in spill_schedule's order (gpu_model_spill.c). */
static void exp08_spill(cases *c)
{
    const int rows = 65536, k = 4096; /* exp-08's GPU matrix */
    const double f = 0.1;
    judged_case *j = add(c, "08", "spill_overlapped_closer", "kernels/spill* kernels/warp.cuh kernels/half.h",
                         RL_STREAM_EF, 0.5,
                         "exp-08 spill_overlapped_closer: below 0.5, closer to max(1 - f, f r) than to "
                         "(1 - f) + f r");
    if (!j)
        return;
    j->model = MODEL_SPILL;
    j->at_most = true;
    j->rows = rows, j->k = k, j->f = f;
    snprintf(j->what, sizeof j->what, "%dx%d f=%.1f over the host link", rows, k, f);
    snprintf(j->kind, sizeof j->kind, "f=%.1f", f);
    case_part *p = part(j, "spill_zero_copy<false>", 1);
    p->launch.blocks = spill_grid(rows - (int)(f * rows + 0.5), (int)(f * rows + 0.5)).blocks;
    p->launch.threads = 32 * SPILL_BLOCK_WARPS;
    p->launch.bytes = 2.0 * rows * k;
}

/* ---- exp-09: a layer's streams (kernels/layer_kernels.cuh) ----------------------------- */

/* BERT-large's layer at the GPU lab's judged shape, 32 x 512 tokens: its
 * element-wise and row steps, each a kernel whose premise is half the
 * roof (the claim cheap_time_share_model's premise_mbu). Kinds and plans
 * as layer.cu launches them (layer_plan.h); the 16-byte path (aligned
 * buffers, rows of whole groups of 4). */
enum { EXP09_TOKENS = 32 * 512, EXP09_HIDDEN = 1024, EXP09_FFN = 4096, EXP09_HEADS = 16, EXP09_SEQ = 512 };

static judged_case *exp09_case(cases *c, const char *step)
{
    judged_case *j = add(c, "09", "cheap_time_share_model", "kernels/layer* kernels/warp.cuh", RL_STREAM_GLOBAL,
                         0.5, "exp-09 cheap_time_share_model: each cheap step at >= 0.5 of the roof (its premise)");
    if (!j)
        return NULL;
    snprintf(j->what, sizeof j->what, "bert-large 32x512 %s", step);
    snprintf(j->kind, sizeof j->kind, "%s", step);
    snprintf(j->meas_where, sizeof j->meas_where,
             "config=bert-large,batch=32,seq=512,program=unfused,step=%s", step);
    return j;
}

/* One pass of the element-wise kernel of this kind over n outputs. */
static void exp09_stream(cases *c, const char *step, int kind, double n, double bytes_per_value)
{
    judged_case *j = exp09_case(c, step);
    if (!j)
        return;
    char name[48];
    snprintf(name, sizeof name, "layer_elementwise<%d, true>", kind);
    case_part *p = part(j, name, 1);
    p->launch.blocks = layer_ew_blocks((size_t)n, true, c->gpu->sms);
    p->launch.threads = LAYER_EW_THREADS;
    p->launch.bytes = n * bytes_per_value;
}

/* One row kernel of this kind over rows x cols. */
static void exp09_rows(cases *c, const char *step, int kind, int rows, int cols, double bytes_per_value)
{
    judged_case *j = exp09_case(c, step);
    if (!j)
        return;
    layer_row_plan plan = layer_row_plan_for(rows, cols);
    char name[48];
    snprintf(name, sizeof name, "layer_rows<%d, %d, true>", kind, plan.per);
    case_part *p = part(j, name, 1);
    p->launch.blocks = plan.blocks;
    p->launch.threads = (int)plan.threads;
    p->launch.bytes = (double)rows * cols * bytes_per_value;
}

static void exp09(cases *c)
{
    const double ffn = (double)EXP09_TOKENS * EXP09_FFN, hidden = (double)EXP09_TOKENS * EXP09_HIDDEN;
    const int score_rows = 32 * EXP09_HEADS * EXP09_SEQ;
    exp09_stream(c, "ffn1_bias", 0, ffn, 8);  /* LAYER_EW_BIAS: x in, y out */
    exp09_stream(c, "gelu", 1, ffn, 8);       /* LAYER_EW_GELU */
    exp09_stream(c, "residual1", 3, hidden, 12); /* LAYER_EW_ADD: x and r in */
    exp09_stream(c, "attn_scale_mask", 6, (double)score_rows * EXP09_SEQ, 8); /* LAYER_EW_SCALE_MASK */
    exp09_rows(c, "attn_softmax", 0, score_rows, EXP09_SEQ, 8);           /* LAYER_ROW_SOFTMAX */
    exp09_rows(c, "layernorm1", 2, EXP09_TOKENS, EXP09_HIDDEN, 8);       /* LAYER_ROW_LAYERNORM */
}

int gpu_model_cases(const rl_gpu_spec *g, blocks_per_sm_fn occupancy, judged_case *out, int max,
                    int *relative_to, double *factor)
{
    cases c = {out, 0, max, relative_to, factor, g, occupancy};
    exp02(&c);
    exp03(&c, g);
    exp03_batch(&c, g);
    exp07_decode(&c, g);
    exp07_prefill(&c, g);
    exp08_moe(&c);
    exp08_spill(&c);
    exp09(&c);
    return c.n;
}

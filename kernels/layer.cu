/*
 * layer.cu -- CUDA launchers of experiment 09's steps (layer.h; the table
 * is layer.c). FP32 throughout; the kernels are in layer_kernels.cuh
 * and layer_flash.cuh.
 *
 * Products: cuBLAS (the process's handle, cublas_handle.cuh), FP32 in and
 * out with CUBLAS_COMPUTE_32F and the default math mode: no TF32, so the
 * products are the FP32 the CPU side and the reference compute. cuBLAS is
 * column-major, and a row-major r x c matrix read column-major is its
 * transpose (c x r, leading dimension c), so each row-major product C = A
 * B^T is asked for as C^T = B A^T with the operands swapped (gemm.cu).
 *  - GEMM: y^T (cols x rows, ld cols) = w x^T: w read column-major is w^T
 *    (k x cols, ld k), hence CUBLAS_OP_T; x read so is x^T, CUBLAS_OP_N.
 *  - SCORES, per sequence and head: S^T (seq x seq, ld seq) = K Q^T, K and
 *    Q read in place in the QKV output (ld (heads + 2 heads_kv) head_dim:
 *    no copies): K^T as stored, CUBLAS_OP_T; Q^T as stored, CUBLAS_OP_N.
 *  - CONTEXT: O^T (head_dim x seq, ld heads head_dim: the head's columns
 *    of y) = V^T P^T, both as stored, CUBLAS_OP_N twice.
 *  The attention's products are strided batches (cublasGemmStridedBatchedEx,
 *  the only batched call the loader gives, harness/cublas_loader.cu). One
 *  batch needs one stride between its problems, and (sequence, head) has
 *  none: a sequence's rows are seq x ld floats apart, its heads head_dim.
 *  So one call takes either the heads_kv heads at one place g' of their
 *  groups (head g G + g', stride G head_dim; its KV head g, stride
 *  head_dim), a call per (sequence, g'), or the sequences of one head
 *  (stride seq x ld), a call per head: whichever makes fewer calls.
 *
 * GEMM epilogue: bias, bias and GELU, bias and the residual run inside
 * the product, in cuBLASLt's epilogues (layer_lt.cu: which, why its GELU
 * is layer.h's, and when it is not used). Where cuBLASLt cannot (no
 * library, no algorithm for the shape, its GELU not layer.h's) and for
 * SwiGLU, which no cuBLASLt epilogue computes, the epilogue is a second
 * pass: the element-wise kernel over the cuBLAS product in place
 * (layer_gemm_epilogue_in_product says which, and layer.h counts the
 * pass's traffic). SwiGLU's product is rows x 2 cols, which y (rows x
 * cols) cannot hold: on CUDA, LAYER_EPI_SILU_GATE needs a->y2 to point to
 * a rows x 2 cols scratch buffer, where the product goes before the
 * epilogue writes y (a deviation from layer.h, where y2 is ADD_RMSNORM's
 * alone; a scratch field would be the clean way). layer_gemm_cuda is the
 * same call.
 *
 * Element-wise steps: one grid-stride kernel, 16-byte loads and stores
 * where every pointer is 16-byte aligned (and rows are whole groups of 4
 * where the op reads by column), scalar otherwise and for a tail.
 * Softmax and the norms: a row a warp (up to 256 columns, 4 rows a block)
 * or a block, held in registers between its statistics (shuffles, then
 * shared memory across a block's warps) and its output, so it is read and
 * written once. Fused attention: FlashAttention's online softmax on FP32
 * CUDA cores (layer_flash.cuh), head_dim 64 and 128.
 *
 * Every kernel launch is checked (RL_CUDA_CHECK_LAUNCH), every cuBLAS call
 * (RL_CUBLAS_CHECK), every shape a kernel assumes before it launches
 * (RL_REQUIRE, with why).
 */
#include "check.h"
#include "cublas_handle.cuh"
#include "device.cuh"
#include "layer.h"
#include "layer_flash.cuh"
#include "layer_lt.cuh"

#include <cublas_v2.h>
#include <math.h>
#include <stdint.h>

static cudaStream_t stream_of(const layer_args *a) { return (cudaStream_t)a->stream; }

/* ---- shapes ------------------------------------------------------------------------ */

static void require_activation(const layer_args *a)
{
    RL_REQUIRE(a->y && a->x, "the step needs its input x and output y");
    RL_REQUIRE(a->rows >= 1 && a->cols >= 1, "an activation of at least one row and one column");
}

/* The attention's steps: the QKV layout of layer.h. */
static void require_attention_shape(const layer_args *a)
{
    RL_REQUIRE(a->y && a->x, "the step needs its input x and output y");
    RL_REQUIRE(a->batch >= 1 && a->seq >= 1 && a->head_dim >= 1,
               "at least one sequence, one token and one dimension a head");
    RL_REQUIRE(a->heads_kv >= 1 && a->heads >= a->heads_kv && a->heads % a->heads_kv == 0,
               "the query heads are a whole number of groups per KV head");
    RL_REQUIRE((long long)a->batch * a->seq == a->rows, "rows = batch x seq tokens");
    RL_REQUIRE((long long)(a->heads + 2 * a->heads_kv) * a->head_dim <= INT32_MAX,
               "a QKV row's columns fit an int (cuBLAS's leading dimension)");
}

static void require_mask(const layer_args *a)
{
    RL_REQUIRE(a->mask_kind == LAYER_MASK_NONE || a->mask_kind == LAYER_MASK_PADDING ||
                   a->mask_kind == LAYER_MASK_CAUSAL,
               "mask_kind is one of layer_mask");
    RL_REQUIRE(a->mask_kind != LAYER_MASK_PADDING || a->mask, "a padding mask needs its batch x seq values");
}

/* ---- element-wise ------------------------------------------------------------------- */

template <int KIND> static void launch_elementwise(const layer_ew_args &e, cudaStream_t st)
{
    const bool vec = layer_ew_vec(KIND, &e);
    const unsigned blocks = layer_ew_blocks(e.n, vec, rl_device_sms());
    if (vec)
        layer_elementwise<KIND, true><<<blocks, LAYER_EW_THREADS, 0, st>>>(e);
    else
        layer_elementwise<KIND, false><<<blocks, LAYER_EW_THREADS, 0, st>>>(e);
    RL_CUDA_CHECK_LAUNCH();
}

/* y = op(x (, bias, r)) over the rows x cols activation. */
template <int KIND> static void activation_step(const layer_args *a, const float *r, const float *bias)
{
    require_activation(a);
    layer_ew_args e = {};
    e.y = a->y, e.x = a->x, e.r = r, e.bias = bias;
    e.n = (size_t)a->rows * (size_t)a->cols, e.cols = a->cols;
    launch_elementwise<KIND>(e, stream_of(a));
}

extern "C" void layer_bias_cuda(const layer_args *a)
{
    RL_REQUIRE(a->bias, "bias: the bias, cols values");
    activation_step<LAYER_EW_BIAS>(a, NULL, a->bias);
}

extern "C" void layer_gelu_cuda(const layer_args *a) { activation_step<LAYER_EW_GELU>(a, NULL, NULL); }

extern "C" void layer_bias_gelu_cuda(const layer_args *a)
{
    RL_REQUIRE(a->bias, "bias_gelu: the bias, cols values");
    activation_step<LAYER_EW_BIAS_GELU>(a, NULL, a->bias);
}

extern "C" void layer_add_cuda(const layer_args *a)
{
    RL_REQUIRE(a->r, "add: the residual r, rows x cols");
    activation_step<LAYER_EW_ADD>(a, a->r, NULL);
}

/* x is rows x 2 cols (gate | up), y rows x cols. */
extern "C" void layer_silu_gate_cuda(const layer_args *a) { activation_step<LAYER_EW_SILU_GATE>(a, NULL, NULL); }

/* ---- GEMM and its epilogue ------------------------------------------------------------ */

/* y (rows x n, row-major) = x w^T, x rows x k, w n x k. */
static void product(const layer_args *a, float *y, int n)
{
    const float one = 1.0f, zero = 0.0f;
    RL_CUBLAS_CHECK(cublasGemmEx(rl_cublas_on(a->stream), CUBLAS_OP_T, CUBLAS_OP_N, n, a->rows, a->k, &one, a->w,
                                 CUDA_R_32F, a->k, a->x, CUDA_R_32F, a->k, &zero, y, CUDA_R_32F, n,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void gemm_with_epilogue(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->w && a->k >= 1, "the GEMM needs its weight w and k >= 1");
    RL_REQUIRE(a->epilogue >= LAYER_EPI_NONE && a->epilogue <= LAYER_EPI_SILU_GATE, "epilogue is one of layer_epilogue");
    RL_REQUIRE((a->epilogue != LAYER_EPI_BIAS && a->epilogue != LAYER_EPI_BIAS_GELU) || a->bias,
               "a bias epilogue needs its bias, cols values");
    RL_REQUIRE(a->epilogue != LAYER_EPI_BIAS_ADD || a->r, "the residual epilogue needs r, rows x cols");
    RL_REQUIRE(a->epilogue != LAYER_EPI_SILU_GATE || (a->y2 && a->y2 != a->y),
               "on CUDA the SwiGLU epilogue needs y2: a rows x 2 cols scratch for the product (layer.cu)");
    RL_REQUIRE(a->epilogue != LAYER_EPI_SILU_GATE || 2LL * a->cols <= INT32_MAX, "2 cols fit an int");

    /* bias, GELU, residual: in the product where cuBLASLt can (layer_lt.cu) */
    if (a->epilogue != LAYER_EPI_NONE && a->epilogue != LAYER_EPI_SILU_GATE && layer_lt_gemm(a))
        return;

    layer_ew_args e = {};
    e.y = a->y, e.x = a->y, e.n = (size_t)a->rows * (size_t)a->cols, e.cols = a->cols;
    e.bias = a->bias, e.r = a->r;
    const cudaStream_t st = stream_of(a);
    switch (a->epilogue) {
    case LAYER_EPI_NONE: product(a, a->y, a->cols); break;
    case LAYER_EPI_BIAS:
        product(a, a->y, a->cols);
        launch_elementwise<LAYER_EW_BIAS>(e, st);
        break;
    case LAYER_EPI_BIAS_GELU:
        product(a, a->y, a->cols);
        launch_elementwise<LAYER_EW_BIAS_GELU>(e, st);
        break;
    case LAYER_EPI_BIAS_ADD:
        product(a, a->y, a->cols);
        launch_elementwise<LAYER_EW_BIAS_ADD>(e, st);
        break;
    case LAYER_EPI_SILU_GATE:
        product(a, a->y2, 2 * a->cols);
        e.x = a->y2, e.bias = NULL, e.r = NULL;
        launch_elementwise<LAYER_EW_SILU_GATE>(e, st);
        break;
    }
}

extern "C" void layer_gemm_cuda(const layer_args *a) { gemm_with_epilogue(a); }
extern "C" void layer_gemm_epilogue_cuda(const layer_args *a) { gemm_with_epilogue(a); }

/* layer.h: what gemm_with_epilogue will do with a's shape and epilogue. */
extern "C" bool layer_gemm_epilogue_in_product(const layer_args *a)
{
    switch (a->epilogue) {
    case LAYER_EPI_NONE: return true; /* nothing runs after the product */
    case LAYER_EPI_SILU_GATE: return false;
    default: return layer_lt_plans(a);
    }
}

/* ---- the attention's products ------------------------------------------------------- */

/* Which index a call loops over (see the top): true, a call per
 * (sequence, place in a group), its batch the KV heads; false, a call per
 * query head, its batch the sequences. */
static bool batch_over_kv_heads(const layer_args *a)
{
    return (long long)a->batch * (a->heads / a->heads_kv) <= a->heads;
}

/* y[b][h] (seq x seq) = Q_bh K_b,h/G^T. */
extern "C" void layer_scores_cuda(const layer_args *a)
{
    require_attention_shape(a);
    cublasHandle_t hd = rl_cublas_on(a->stream);
    const int d = a->head_dim, n = a->seq, G = a->heads / a->heads_kv;
    const int ld = (a->heads + 2 * a->heads_kv) * d;
    const long long seq_x = (long long)n * ld, sq = (long long)n * n;
    const float one = 1.0f, zero = 0.0f;
    if (batch_over_kv_heads(a)) {
        for (int b = 0; b < a->batch; b++)
            for (int place = 0; place < G; place++) {
                const float *x = a->x + b * seq_x;
                RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
                    hd, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &one, x + (size_t)a->heads * d, CUDA_R_32F, ld, d,
                    x + (size_t)place * d, CUDA_R_32F, ld, (long long)G * d, &zero,
                    a->y + ((long long)b * a->heads + place) * sq, CUDA_R_32F, n, (long long)G * sq, a->heads_kv,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            }
    } else {
        for (int h = 0; h < a->heads; h++)
            RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
                hd, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &one, a->x + (size_t)(a->heads + h / G) * d, CUDA_R_32F, ld,
                seq_x, a->x + (size_t)h * d, CUDA_R_32F, ld, seq_x, &zero, a->y + (long long)h * sq, CUDA_R_32F, n,
                (long long)a->heads * sq, a->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
}

/* y[tokens of b][h's columns] = P_bh V_b,h/G, P from x, V from r. */
extern "C" void layer_context_cuda(const layer_args *a)
{
    require_attention_shape(a);
    RL_REQUIRE(a->r, "context: r, the QKV output whose value columns it reads");
    cublasHandle_t hd = rl_cublas_on(a->stream);
    const int d = a->head_dim, n = a->seq, G = a->heads / a->heads_kv;
    const int ld = (a->heads + 2 * a->heads_kv) * d, ldy = a->heads * d;
    const long long seq_x = (long long)n * ld, seq_y = (long long)n * ldy, sq = (long long)n * n;
    const float *v = a->r + (size_t)(a->heads + a->heads_kv) * d;
    const float one = 1.0f, zero = 0.0f;
    if (batch_over_kv_heads(a)) {
        for (int b = 0; b < a->batch; b++)
            for (int place = 0; place < G; place++)
                RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
                    hd, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one, v + b * seq_x, CUDA_R_32F, ld, d,
                    a->x + ((long long)b * a->heads + place) * sq, CUDA_R_32F, n, (long long)G * sq, &zero,
                    a->y + b * seq_y + (long long)place * d, CUDA_R_32F, ldy, (long long)G * d, a->heads_kv,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else {
        for (int h = 0; h < a->heads; h++)
            RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
                hd, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one, v + (size_t)(h / G) * d, CUDA_R_32F, ld, seq_x,
                a->x + (long long)h * sq, CUDA_R_32F, n, (long long)a->heads * sq, &zero, a->y + (long long)h * d,
                CUDA_R_32F, ldy, seq_y, a->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
}

/* ---- the scores' element-wise and row steps -------------------------------------------- */

static void require_scores(const layer_args *a)
{
    RL_REQUIRE(a->y && a->x, "the step needs its input x and output y");
    RL_REQUIRE(a->batch >= 1 && a->heads >= 1 && a->seq >= 1, "scores of at least one sequence, head and token");
    RL_REQUIRE((long long)a->batch * a->heads * a->seq <= INT32_MAX, "the scores' rows fit an int");
    require_mask(a);
}

extern "C" void layer_scale_mask_cuda(const layer_args *a)
{
    require_scores(a);
    layer_ew_args e = {};
    e.y = a->y, e.x = a->x, e.mask = a->mask_kind == LAYER_MASK_PADDING ? a->mask : NULL;
    e.n = (size_t)a->batch * a->heads * (size_t)a->seq * a->seq;
    e.cols = a->seq, e.seq = a->seq, e.heads = a->heads, e.mask_kind = a->mask_kind, e.scale = a->scale;
    launch_elementwise<LAYER_EW_SCALE_MASK>(e, stream_of(a));
}

template <int KIND, int PER> static void launch_rows_per(const layer_row_args &r, const layer_row_plan &p, cudaStream_t st)
{
    if (layer_row_vec(&r))
        layer_rows<KIND, PER, true><<<p.blocks, p.threads, 0, st>>>(r);
    else
        layer_rows<KIND, PER, false><<<p.blocks, p.threads, 0, st>>>(r);
    RL_CUDA_CHECK_LAUNCH();
}

template <int KIND> static void launch_rows(layer_row_args r, cudaStream_t st)
{
    RL_REQUIRE(r.rows >= 1 && r.cols >= 1, "at least one row of at least one column");
    RL_REQUIRE(r.cols <= LAYER_ROW_MAX_COLS, "a row kernel holds rows of at most 16384 columns in registers");
    const layer_row_plan p = layer_row_plan_for(r.rows, r.cols);
    r.team = p.team;
    if (p.per == LAYER_ROW_PER)
        launch_rows_per<KIND, LAYER_ROW_PER>(r, p, st);
    else
        launch_rows_per<KIND, LAYER_ROW_PER_LONG>(r, p, st);
}

/* A softmax over rows x cols: scores' rows are batch x heads x seq of seq. */
extern "C" void layer_softmax_cuda(const layer_args *a)
{
    require_activation(a);
    layer_row_args r = {};
    r.y = a->y, r.x = a->x, r.rows = a->rows, r.cols = a->cols;
    launch_rows<LAYER_ROW_SOFTMAX>(r, stream_of(a));
}

extern "C" void layer_scale_mask_softmax_cuda(const layer_args *a)
{
    require_scores(a);
    layer_row_args r = {};
    r.y = a->y, r.x = a->x, r.mask = a->mask_kind == LAYER_MASK_PADDING ? a->mask : NULL;
    r.rows = a->batch * a->heads * a->seq, r.cols = a->seq;
    r.seq = a->seq, r.heads = a->heads, r.mask_kind = a->mask_kind, r.scale = a->scale;
    launch_rows<LAYER_ROW_SCALE_MASK_SOFTMAX>(r, stream_of(a));
}

static layer_row_args norm_args(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->gamma, "the norm needs gamma, cols values");
    RL_REQUIRE(a->eps >= 0.0f, "eps >= 0");
    layer_row_args r = {};
    r.y = a->y, r.x = a->x, r.gamma = a->gamma, r.rows = a->rows, r.cols = a->cols, r.eps = a->eps;
    return r;
}

extern "C" void layer_layernorm_cuda(const layer_args *a)
{
    layer_row_args r = norm_args(a);
    RL_REQUIRE(a->beta, "layer norm needs beta, cols values");
    r.beta = a->beta;
    launch_rows<LAYER_ROW_LAYERNORM>(r, stream_of(a));
}

extern "C" void layer_bias_add_layernorm_cuda(const layer_args *a)
{
    layer_row_args r = norm_args(a);
    RL_REQUIRE(a->beta && a->r, "bias_add_layernorm needs beta and the residual r");
    r.beta = a->beta, r.r = a->r, r.bias = a->bias; /* bias may be NULL */
    launch_rows<LAYER_ROW_BIAS_ADD_LAYERNORM>(r, stream_of(a));
}

extern "C" void layer_rmsnorm_cuda(const layer_args *a)
{
    launch_rows<LAYER_ROW_RMSNORM>(norm_args(a), stream_of(a));
}

extern "C" void layer_add_rmsnorm_cuda(const layer_args *a)
{
    layer_row_args r = norm_args(a);
    RL_REQUIRE(a->r && a->y2, "add_rmsnorm needs the residual r and y2 for the sum it keeps");
    r.r = a->r, r.y2 = a->y2;
    launch_rows<LAYER_ROW_ADD_RMSNORM>(r, stream_of(a));
}

/* ---- RoPE ----------------------------------------------------------------------------- */

extern "C" void layer_rope_cuda(const layer_args *a)
{
    require_attention_shape(a);
    RL_REQUIRE(a->head_dim % 2 == 0, "RoPE turns pairs: an even head_dim");
    RL_REQUIRE(a->rope_theta > 1.0f, "rope_theta > 1 (Llama: 10000, Llama 3: 500000)");
    const unsigned blocks = layer_rope_blocks(a->rows, a->head_dim, rl_device_sms());
    layer_rope_kernel<<<blocks, LAYER_ROPE_THREADS, 0, stream_of(a)>>>(
        a->y, a->x, a->rows, a->seq, a->heads, a->heads_kv, a->head_dim, log2((double)a->rope_theta));
    RL_CUDA_CHECK_LAUNCH();
}

/* ---- fused attention ------------------------------------------------------------------ */

/* Above 48 KB a kernel must opt into its dynamic shared memory; asked
 * once (and the blocks an SM then holds, which must be one at least: on
 * sm_75, 64 KB a block is its whole limit). */
template <int DIM> static void flash_prepare(void)
{
    static bool ready;
    if (ready)
        return;
    const size_t smem = layer_flash_smem_bytes(DIM);
    int dev = 0, optin = 0, blocks = 0;
    RL_CUDA_CHECK(cudaGetDevice(&dev));
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    RL_REQUIRE(smem <= (size_t)optin, "the fused attention's tiles fit a block's shared memory on this GPU");
    RL_CUDA_CHECK(cudaFuncSetAttribute(layer_flash<DIM>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    RL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, layer_flash<DIM>, LAYER_FA_THREADS, smem));
    RL_REQUIRE(blocks >= 1, "a block of the fused attention fits an SM");
    ready = true;
}

template <int DIM> static void launch_flash(const layer_args *a)
{
    flash_prepare<DIM>();
    layer_flash_args f = {};
    f.y = a->y, f.qkv = a->x, f.mask = a->mask_kind == LAYER_MASK_PADDING ? a->mask : NULL;
    f.seq = a->seq, f.heads = a->heads, f.heads_kv = a->heads_kv, f.mask_kind = a->mask_kind;
    f.c = a->scale * LAYER_LOG2E;
    const dim3 grid((unsigned)((a->seq + LAYER_FA_BQ - 1) / LAYER_FA_BQ), (unsigned)a->heads, (unsigned)a->batch);
    layer_flash<DIM><<<grid, LAYER_FA_THREADS, layer_flash_smem_bytes(DIM), stream_of(a)>>>(f);
    RL_CUDA_CHECK_LAUNCH();
}

extern "C" void layer_attention_cuda(const layer_args *a)
{
    require_attention_shape(a);
    require_mask(a);
    RL_REQUIRE(a->head_dim == 64 || a->head_dim == 128, "the fused attention is built for head_dim 64 and 128");
    RL_REQUIRE(layer_aligned16(a->x) && layer_aligned16(a->y), "x and y start 16-byte aligned (16-byte copies)");
    RL_REQUIRE(a->scale > 0.0f, "scale > 0 (1 / sqrt(head_dim))");
    RL_REQUIRE(a->heads <= 65535 && a->batch <= 65535, "a grid row per head and a layer per sequence: at most 65535");
    if (a->head_dim == 64)
        launch_flash<64>(a);
    else
        launch_flash<128>(a);
}

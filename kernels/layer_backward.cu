/*
 * layer_backward.cu -- CUDA launchers of experiment 09's backward steps
 * (layer.h, from LAYER_OP_GEMM_DX; the table is layer.c; the forward's
 * are layer.cu). FP32 throughout; the kernels are in
 * layer_backward_kernels.cuh, their plans in layer_backward_plan.h.
 *
 * Products: cuBLAS as layer.cu calls it (cublasGemmEx and
 * cublasGemmStridedBatchedEx, the calls harness/cublas_loader.cu gives,
 * FP32 in and out with CUBLAS_COMPUTE_32F: the FP32 of cublasSgemm, no
 * TF32). Row-major data read column-major is its transpose, so a
 * row-major product is asked for as its transpose (layer.cu):
 *  - GEMM_DX: y (rows x k) = x w. y^T (k x rows, ld k) = w^T x^T: w read
 *    column-major is w^T (k x cols, ld k), x is x^T (cols x rows, ld
 *    cols): CUBLAS_OP_N twice.
 *  - GEMM_DW: y (cols x k) = x^T r. y^T (k x cols, ld k) = r^T x: r read
 *    so is r^T (ld k), CUBLAS_OP_N; x is x^T (ld cols), CUBLAS_OP_T.
 *  - CONTEXT_DP, per sequence and head: dP^T (seq x seq, ld seq) = V dO^T:
 *    V in place in the QKV output (ld (heads + 2 heads_kv) head_dim),
 *    CUBLAS_OP_T; dO in place in x (ld heads head_dim), CUBLAS_OP_N (the
 *    forward's SCORES with V for K and dO for Q).
 *  - CONTEXT_DV, per sequence and KV head: dV^T (head_dim x seq, ld
 *    heads_kv head_dim: the KV head's columns of y) = dO^T P, dO as
 *    stored (ld heads head_dim), CUBLAS_OP_N; P read column-major is P^T,
 *    CUBLAS_OP_T.
 *  - SCORES_BACKWARD: dQ^T (head_dim x seq, ld (heads + heads_kv)
 *    head_dim: the query head's columns of y) = K^T dS^T, both as stored,
 *    CUBLAS_OP_N twice (the forward's CONTEXT with K for V); dK^T (the KV
 *    head's columns, after the query heads') = Q^T dS, Q as stored,
 *    CUBLAS_OP_N, dS CUBLAS_OP_T (as CONTEXT_DV).
 * A grouped-query KV head's gradient (dV, dK) is the sum over the G =
 * heads / heads_kv query heads that share it: the group's first query
 * head's product is written (beta 0), each next one's added to it (beta
 * 1), in head order, calls on one stream: the same sum every run. The
 * batches are strided as layer.cu's: a call per (sequence, place g' in a
 * group), its batch the heads_kv heads g G + g', or a call per query head,
 * its batch the sequences, whichever makes fewer calls.
 *
 * The streams: GELU's gradient an element-wise grid-stride kernel (the
 * forward's plan), softmax's and layer norm's input gradients a row
 * kernel (the forward's row plan: a warp a row up to 256 columns, else a
 * block; the row held in registers from its load to its store), concat a
 * copy of each row's two parts. 16-byte loads and stores where every
 * pointer is 16-byte aligned and rows are whole groups of 4, scalar
 * otherwise.
 *
 * The sums over the tokens (BIAS_GRAD, LAYERNORM_PARAM_GRAD): two
 * kernels, partial sums of slabs of rows then their sum in slab order
 * (layer_backward_plan.h): no atomics, the same bits every run on one GPU.
 * The partials need scratch that layer_args does not carry (other
 * families' args have a scratch field; layer.h has none): this file keeps
 * one device buffer, grown when a call needs more (cudaMalloc, after the
 * device has finished with the old one), which a step's first call (its
 * validation, untimed) sizes. Calls on two streams at once would share
 * it: the suite runs one.
 *
 * Every kernel launch is checked (RL_CUDA_CHECK_LAUNCH), every CUDA and
 * cuBLAS call (RL_CUDA_CHECK, RL_CUBLAS_CHECK), every shape a kernel or a
 * call assumes before it runs (RL_REQUIRE, with why).
 */
#include "check.h"
#include "cublas_handle.cuh"
#include "device.cuh"
#include "layer.h"
#include "layer_backward_kernels.cuh"

#include <cublas_v2.h>
#include <stdint.h>

static cudaStream_t stream_of(const layer_args *a) { return (cudaStream_t)a->stream; }

/* ---- shapes ------------------------------------------------------------------------ */

static void require_activation(const layer_args *a)
{
    RL_REQUIRE(a->y && a->x, "the step needs its input x and output y");
    RL_REQUIRE(a->rows >= 1 && a->cols >= 1, "an activation of at least one row and one column");
}

/* The attention's steps: the QKV layout of layer.h (as layer.cu). */
static void require_attention_shape(const layer_args *a)
{
    RL_REQUIRE(a->y && a->x && a->r, "the step needs its inputs x and r and its output y");
    RL_REQUIRE(a->batch >= 1 && a->seq >= 1 && a->head_dim >= 1,
               "at least one sequence, one token and one dimension a head");
    RL_REQUIRE(a->heads_kv >= 1 && a->heads >= a->heads_kv && a->heads % a->heads_kv == 0,
               "the query heads are a whole number of groups per KV head");
    RL_REQUIRE((long long)a->batch * a->seq == a->rows, "rows = batch x seq tokens");
    RL_REQUIRE((long long)(a->heads + 2 * a->heads_kv) * a->head_dim <= INT32_MAX,
               "a QKV row's columns fit an int (cuBLAS's leading dimension)");
}

/* ---- a linear layer's gradients --------------------------------------------------------- */

/* y (rows x k) = x (rows x cols) w (cols x k). */
extern "C" void layer_gemm_dx_cuda(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->w && a->k >= 1, "gemm_dx needs the weight w, cols x k, and k >= 1");
    const float one = 1.0f, zero = 0.0f;
    RL_CUBLAS_CHECK(cublasGemmEx(rl_cublas_on(a->stream), CUBLAS_OP_N, CUBLAS_OP_N, a->k, a->rows, a->cols, &one,
                                 a->w, CUDA_R_32F, a->k, a->x, CUDA_R_32F, a->cols, &zero, a->y, CUDA_R_32F, a->k,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* y (cols x k) = x^T (cols x rows) r (rows x k): the sum over the tokens. */
extern "C" void layer_gemm_dw_cuda(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->r && a->k >= 1, "gemm_dw needs r, the GEMM's input (rows x k), and k >= 1");
    const float one = 1.0f, zero = 0.0f;
    RL_CUBLAS_CHECK(cublasGemmEx(rl_cublas_on(a->stream), CUBLAS_OP_N, CUBLAS_OP_T, a->k, a->cols, a->rows, &one,
                                 a->r, CUDA_R_32F, a->k, a->x, CUDA_R_32F, a->cols, &zero, a->y, CUDA_R_32F, a->k,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* ---- the attention's products ------------------------------------------------------- */

/* As layer.cu's: true, a call per (sequence, place in a group), its batch
 * the KV heads; false, a call per query head, its batch the sequences. */
static bool batch_over_kv_heads(const layer_args *a)
{
    return (long long)a->batch * (a->heads / a->heads_kv) <= a->heads;
}

/* One strided batch of FP32 products, C = alpha op(A) op(B) + beta C. */
static void batched(const layer_args *a, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const float *A, int lda, long long sa, const float *B, int ldb, long long sb, float beta, float *C,
                    int ldc, long long sc, int count)
{
    const float one = 1.0f;
    RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(rl_cublas_on(a->stream), ta, tb, m, n, k, &one, A, CUDA_R_32F, lda, sa,
                                               B, CUDA_R_32F, ldb, sb, &beta, C, CUDA_R_32F, ldc, sc, count,
                                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* y[b][h] (seq x seq) = dO_bh V_b,h/G^T: dO from x (rows x heads head_dim),
 * V from r's value columns. */
extern "C" void layer_context_dp_cuda(const layer_args *a)
{
    require_attention_shape(a);
    const int d = a->head_dim, n = a->seq, G = a->heads / a->heads_kv;
    const int ld = (a->heads + 2 * a->heads_kv) * d, ldo = a->heads * d;
    const long long seq_r = (long long)n * ld, seq_o = (long long)n * ldo, sq = (long long)n * n;
    const float *v = a->r + (size_t)(a->heads + a->heads_kv) * d;
    if (batch_over_kv_heads(a)) {
        for (int b = 0; b < a->batch; b++)
            for (int place = 0; place < G; place++)
                batched(a, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, v + b * seq_r, ld, d, a->x + b * seq_o + (size_t)place * d,
                        ldo, (long long)G * d, 0.0f, a->y + ((long long)b * a->heads + place) * sq, n, (long long)G * sq,
                        a->heads_kv);
    } else {
        for (int h = 0; h < a->heads; h++)
            batched(a, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, v + (size_t)(h / G) * d, ld, seq_r, a->x + (size_t)h * d, ldo,
                    seq_o, 0.0f, a->y + (long long)h * sq, n, (long long)a->heads * sq, a->batch);
    }
}

/* The KV heads' gradient, y[tokens of b][g's columns] (ld ldy) = the sum
 * over the group's query heads h of P_bh^T U_bh, with P the scores'-shaped
 * x and U a query head's columns of u (ld ldu, head h at column h d):
 * CONTEXT_DV (U = dO) and SCORES_BACKWARD's dK (U = Q). */
static void kv_heads_gradient(const layer_args *a, const float *u, int ldu, float *y, int ldy)
{
    const int d = a->head_dim, n = a->seq, G = a->heads / a->heads_kv;
    const long long seq_u = (long long)n * ldu, seq_y = (long long)n * ldy, sq = (long long)n * n;
    if (batch_over_kv_heads(a)) {
        for (int b = 0; b < a->batch; b++)
            for (int place = 0; place < G; place++)
                batched(a, CUBLAS_OP_N, CUBLAS_OP_T, d, n, n, u + b * seq_u + (size_t)place * d, ldu, (long long)G * d,
                        a->x + ((long long)b * a->heads + place) * sq, n, (long long)G * sq, place ? 1.0f : 0.0f,
                        y + b * seq_y, ldy, d, a->heads_kv);
    } else {
        for (int h = 0; h < a->heads; h++)
            batched(a, CUBLAS_OP_N, CUBLAS_OP_T, d, n, n, u + (size_t)h * d, ldu, seq_u, a->x + (long long)h * sq, n,
                    (long long)a->heads * sq, h % G ? 1.0f : 0.0f, y + (size_t)(h / G) * d, ldy, seq_y, a->batch);
    }
}

/* y (rows x heads_kv head_dim) = P^T dO summed over each group: P from x,
 * dO from r (rows x heads head_dim). */
extern "C" void layer_context_dv_cuda(const layer_args *a)
{
    require_attention_shape(a);
    kv_heads_gradient(a, a->r, a->heads * a->head_dim, a->y, a->heads_kv * a->head_dim);
}

/* y (rows x (heads + heads_kv) head_dim): dQ_bh = dS_bh K_b,h/G into the
 * query heads' columns, then dK (kv_heads_gradient with Q); dS from x, Q
 * and K from r. */
extern "C" void layer_scores_backward_cuda(const layer_args *a)
{
    require_attention_shape(a);
    const int d = a->head_dim, n = a->seq, G = a->heads / a->heads_kv;
    const int ld = (a->heads + 2 * a->heads_kv) * d, ldy = (a->heads + a->heads_kv) * d;
    const long long seq_r = (long long)n * ld, seq_y = (long long)n * ldy, sq = (long long)n * n;
    const float *k = a->r + (size_t)a->heads * d;
    if (batch_over_kv_heads(a)) {
        for (int b = 0; b < a->batch; b++)
            for (int place = 0; place < G; place++)
                batched(a, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, k + b * seq_r, ld, d,
                        a->x + ((long long)b * a->heads + place) * sq, n, (long long)G * sq, 0.0f,
                        a->y + b * seq_y + (size_t)place * d, ldy, (long long)G * d, a->heads_kv);
    } else {
        for (int h = 0; h < a->heads; h++)
            batched(a, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, k + (size_t)(h / G) * d, ld, seq_r, a->x + (long long)h * sq, n,
                    (long long)a->heads * sq, 0.0f, a->y + (size_t)h * d, ldy, seq_y, a->batch);
    }
    kv_heads_gradient(a, a->r, ld, a->y + (size_t)a->heads * d, ldy);
}

/* ---- element-wise and rows ---------------------------------------------------------------- */

/* y = x gelu'(r). */
extern "C" void layer_gelu_backward_cuda(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->r, "gelu_backward needs r, the GELU's input (rows x cols)");
    const size_t n = (size_t)a->rows * (size_t)a->cols;
    const bool vec = lb_aligned16(a->y) && lb_aligned16(a->x) && lb_aligned16(a->r);
    const unsigned blocks = layer_ew_blocks(n, vec, rl_device_sms());
    if (vec)
        layer_gelu_backward_kernel<true><<<blocks, LAYER_EW_THREADS, 0, stream_of(a)>>>(a->y, a->x, a->r, n);
    else
        layer_gelu_backward_kernel<false><<<blocks, LAYER_EW_THREADS, 0, stream_of(a)>>>(a->y, a->x, a->r, n);
    RL_CUDA_CHECK_LAUNCH();
}

template <int KIND, int PER> static void launch_bw_rows_per(const layer_bw_row_args &r, const layer_row_plan &p, cudaStream_t st)
{
    if (layer_bw_row_vec(&r))
        layer_bw_rows<KIND, PER, true><<<p.blocks, p.threads, 0, st>>>(r);
    else
        layer_bw_rows<KIND, PER, false><<<p.blocks, p.threads, 0, st>>>(r);
    RL_CUDA_CHECK_LAUNCH();
}

template <int KIND> static void launch_bw_rows(layer_bw_row_args r, cudaStream_t st)
{
    RL_REQUIRE(r.rows >= 1 && r.cols >= 1, "at least one row of at least one column");
    RL_REQUIRE(r.cols <= LAYER_ROW_MAX_COLS, "a row kernel holds rows of at most 16384 columns in registers");
    const layer_row_plan p = layer_row_plan_for(r.rows, r.cols);
    r.team = p.team;
    if (p.per == LAYER_ROW_PER)
        launch_bw_rows_per<KIND, LAYER_ROW_PER>(r, p, st);
    else
        launch_bw_rows_per<KIND, LAYER_ROW_PER_LONG>(r, p, st);
}

/* y = r (x - sum(x r)) per row: x the probabilities' gradient, r the probabilities. */
extern "C" void layer_softmax_backward_cuda(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->r, "softmax_backward needs r, the probabilities (rows x cols)");
    layer_bw_row_args r = {};
    r.y = a->y, r.x = a->x, r.r = a->r, r.rows = a->rows, r.cols = a->cols;
    launch_bw_rows<LAYER_BW_SOFTMAX>(r, stream_of(a));
}

/* The layer norm's input gradient per row: x the output's gradient, r the
 * norm's input, gamma. */
extern "C" void layer_layernorm_backward_cuda(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->r && a->gamma, "layernorm_backward needs r, the norm's input, and gamma");
    RL_REQUIRE(a->eps >= 0.0f, "eps >= 0");
    layer_bw_row_args r = {};
    r.y = a->y, r.x = a->x, r.r = a->r, r.gamma = a->gamma, r.rows = a->rows, r.cols = a->cols, r.eps = a->eps;
    launch_bw_rows<LAYER_BW_LAYERNORM>(r, stream_of(a));
}

/* ---- sums over the tokens ------------------------------------------------------------------- */

/* The partials' buffer, at least `floats` of it (see the top). */
static float *colsum_scratch(size_t floats)
{
    static float *buf;
    static size_t have;
    static int dev = -1;
    int cur = 0;
    RL_CUDA_CHECK(cudaGetDevice(&cur));
    if (buf && floats <= have && cur == dev)
        return buf;
    if (buf) {
        RL_CUDA_CHECK(cudaDeviceSynchronize()); /* every kernel that reads the old buffer has run */
        RL_CUDA_CHECK(cudaFree(buf));
        buf = NULL;
    }
    RL_CUDA_CHECK(cudaMalloc((void **)&buf, floats * sizeof(float)));
    have = floats, dev = cur;
    return buf;
}

template <int KIND, int PER, bool VEC>
static void launch_colsums_as(const layer_colsum_args &c, const layer_colsum_plan &p, cudaStream_t st)
{
    layer_colsums<KIND, PER, VEC><<<p.blocks, p.threads, 0, st>>>(c);
    RL_CUDA_CHECK_LAUNCH();
}

/* y (width = cols, or 2 cols for layer norm's) = the column sums over the
 * rows x cols of x (and r): one slab writes y, else slabs of partials
 * summed by the second kernel. */
template <int KIND> static void launch_colsums(const layer_args *a)
{
    RL_REQUIRE(a->cols <= LAYER_ROW_MAX_COLS, "the column sums hold rows of at most 16384 columns in registers");
    const layer_colsum_plan p = layer_colsum_plan_for(a->rows, a->cols, rl_device_sms());
    const int width = KIND == LAYER_COLSUM_LAYERNORM ? 2 * a->cols : a->cols;
    RL_REQUIRE(p.teams == 1 || width <= LAYER_COLSUM_SHARED, "a block of several teams adds their sums in shared memory");
    layer_colsum_args c = {};
    c.out = p.blocks == 1 ? a->y : colsum_scratch((size_t)p.blocks * (size_t)width);
    c.x = a->x, c.r = a->r, c.rows = a->rows, c.cols = a->cols, c.eps = a->eps;
    c.team = p.team, c.teams = p.teams, c.sub = p.sub, c.slab = p.slab;
    const cudaStream_t st = stream_of(a);
    const bool vec = layer_colsum_vec(&c);
    if (p.per == LAYER_ROW_PER && vec)
        launch_colsums_as<KIND, LAYER_ROW_PER, true>(c, p, st);
    else if (p.per == LAYER_ROW_PER)
        launch_colsums_as<KIND, LAYER_ROW_PER, false>(c, p, st);
    else if (vec)
        launch_colsums_as<KIND, LAYER_ROW_PER_LONG, true>(c, p, st);
    else
        launch_colsums_as<KIND, LAYER_ROW_PER_LONG, false>(c, p, st);
    if (p.blocks == 1)
        return;
    layer_colsum_final<<<layer_colsum_final_blocks(width), LAYER_COLSUM_FINAL_THREADS, 0, st>>>(a->y, c.out,
                                                                                               (int)p.blocks, width);
    RL_CUDA_CHECK_LAUNCH();
}

/* y (cols) = the sums of x over the rows. */
extern "C" void layer_bias_grad_cuda(const layer_args *a)
{
    require_activation(a);
    launch_colsums<LAYER_COLSUM_BIAS>(a);
}

/* y (2 x cols) = the sums over the rows of x h, then of x: h the layer
 * norm's normalized input, from r. */
extern "C" void layer_layernorm_param_grad_cuda(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->r, "layernorm_param_grad needs r, the norm's input (rows x cols)");
    RL_REQUIRE(a->eps >= 0.0f, "eps >= 0");
    launch_colsums<LAYER_COLSUM_LAYERNORM>(a);
}

/* ---- concat ------------------------------------------------------------------------------------ */

/* y (rows x cols) = per row, x's k values, then r's cols - k. */
extern "C" void layer_concat_cuda(const layer_args *a)
{
    RL_REQUIRE(a->y, "concat needs its output y");
    RL_REQUIRE(a->rows >= 1 && a->cols >= 1, "an activation of at least one row and one column");
    RL_REQUIRE(a->k >= 0 && a->k <= a->cols, "0 <= k <= cols: x's k columns, then r's cols - k");
    RL_REQUIRE(a->k == 0 || a->x, "concat needs x, rows x k");
    RL_REQUIRE(a->k == a->cols || a->r, "concat needs r, rows x (cols - k)");
    const bool vec = a->k % 4 == 0 && a->cols % 4 == 0 && lb_aligned16(a->y) && lb_aligned16(a->x) &&
                     lb_aligned16(a->r);
    const layer_concat_plan p = layer_concat_plan_for(a->rows, a->cols, vec, rl_device_sms());
    const dim3 threads(p.tx, p.ty);
    if (vec)
        layer_concat_kernel<true><<<p.blocks, threads, 0, stream_of(a)>>>(a->y, a->x, a->r, a->rows, a->cols, a->k);
    else
        layer_concat_kernel<false><<<p.blocks, threads, 0, stream_of(a)>>>(a->y, a->x, a->r, a->rows, a->cols, a->k);
    RL_CUDA_CHECK_LAUNCH();
}

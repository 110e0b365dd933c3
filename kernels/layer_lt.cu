/*
 * layer_lt.cu -- the GEMM's epilogue inside the product: cuBLASLt's
 * epilogues, for layer.cu (layer_lt.cuh).
 *
 * cuBLASLt is opened at its first call, as cuBLAS is
 * (harness/cublas_loader.cu). One call computes D = epilogue(alpha op(A)
 * op(B) + beta C), FP32 in and out, CUBLAS_COMPUTE_32F (no TF32: the FP32
 * the reference and the cuBLAS path compute). Row-major data is mapped as
 * layer.cu's cuBLAS call maps it: y^T (cols x rows, ld cols) = w x^T, w
 * read column-major is w^T (k x cols, ld k) with CUBLASLT op T, x read so
 * is x^T (k x rows, ld k) with op N. A row-major output column is a row of
 * D, and cuBLASLt's bias is one value per row of D, broadcast over its
 * columns: layer.h's bias[c], broadcast over the tokens.
 *  - LAYER_EPI_BIAS: CUBLASLT_EPILOGUE_BIAS, beta 0.
 *  - LAYER_EPI_BIAS_GELU: CUBLASLT_EPILOGUE_GELU_BIAS (bias, then GELU),
 *    beta 0, where the library's GELU is layer.h's (below).
 *  - LAYER_EPI_BIAS_ADD: C = r, beta 1, D = y, with CUBLASLT_EPILOGUE_BIAS,
 *    or CUBLASLT_EPILOGUE_DEFAULT where the bias is NULL: the residual is
 *    added as C, and each of x, w, bias, r is read once and y written once.
 *  - LAYER_EPI_SILU_GATE: none (no epilogue of cuBLASLt computes silu(gate)
 *    up from two columns of the product): layer.cu's two passes.
 *
 * Which GELU. NVIDIA's documentation of cublasLtEpilogue_t says only "apply
 * GELU point-wise transform to the results (x:=GELU(x))", not which form
 * (https://docs.nvidia.com/cuda/cublas/#cublasltepilogue-t). NVIDIA's own
 * tests of the epilogue in nvmath-python check it against the tanh form,
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.0447 x^3))), and its DGELU against
 * "the derivative of (tanh-approximated) gelu"
 * (https://github.com/NVIDIA/nvmath-python/blob/main/tests/nvmath_tests/linalg/advanced/matmul/test_epilog.py),
 * and PyTorch, which fuses torch._addmm_activation's GELU with this
 * epilogue, applies gelu(..., approximate="tanh") where it cannot
 * (aten/src/ATen/native/cuda/Blas.cpp). So it is layer.h's form. That
 * says nothing of its precision, and LAYER_RTOL is 1e-4: a tanh of the
 * hardware's approximate instruction (2^-11 relative) or the erf form
 * (up to 4.7e-4 apart) would fail the experiment's check. So the library
 * is asked once, before its GELU is used (gelu_is_layers): a product whose
 * every value is exact (k = 4, one non-zero term a row), GELU_BIAS over
 * x + bias from -8 to 8 in steps of 1/64, each output within 2e-6
 * max(1, |x|) + 2.5e-5 |want| of the tanh form in double (a quarter of
 * the check's rtol; the tanh form rounded to FP32 is within 1% of that
 * bar, the erf form fails 1892 of the 4096 values, a tanh 2^-11 off 251
 * of the 256 rows). Where it does not meet that, LAYER_EPI_BIAS_GELU is
 * layer.cu's two passes. The probe is one small product: the large
 * shapes' kernels are other kernels, whose GELU the experiment's check of
 * each step still judges.
 *
 * The plan: one handle, one 32 MiB workspace (NVIDIA's recommendation for
 * Hopper; 4 MiB for older GPUs), allocated once when cuBLASLt is first
 * asked for, and per shape (rows, cols, k, epilogue, each pointer's
 * alignment: the heuristic assumes 256 bytes, cudaMalloc's, unless told)
 * the descriptors and the heuristic's first algorithm, cached: a call on a
 * planned shape sets the bias pointer and calls cublasLtMatmul. Planning
 * runs on the first call of a shape (the counting's, layer_lt_plans, or
 * the first launch: both outside any timing). One host thread.
 *
 * Nothing here fails a run for want of cuBLASLt: no device, no library
 * (cublasLtCreate returns CUBLAS_STATUS_NOT_INITIALIZED), no workspace, no
 * algorithm from the heuristic, or cublasLtMatmul's "not supported" leave
 * the shape to layer.cu's two passes. Any other failure of cublasLtMatmul
 * is a bug, and fails as a checked call does.
 */
#include "check.h"
#include "layer_lt.cuh"

#include <cublasLt.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { LT_WORKSPACE_BYTES = 32 << 20, LT_PLANS = 128, LT_ALIGN = 256 };

typedef struct lt_state {
    bool tried, ok;
    cublasLtHandle_t handle;
    void *workspace;
    int gelu; /* -1 not asked yet, 0 not layer.h's GELU, 1 layer.h's */
} lt_state;
static lt_state lt = {false, false, NULL, NULL, -1};

/* cuBLASLt, a handle and the workspace, once; false where any is missing. */
static bool lt_ready(void)
{
    if (lt.tried)
        return lt.ok;
    lt.tried = true;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        (void)cudaGetLastError(); /* no device: not an error of a later call */
        return false;
    }
    if (cublasLtCreate(&lt.handle) != CUBLAS_STATUS_SUCCESS) {
        lt.handle = NULL;
        return false;
    }
    if (cudaMalloc(&lt.workspace, LT_WORKSPACE_BYTES) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cublasLtDestroy(lt.handle);
        lt.handle = NULL, lt.workspace = NULL;
        return false;
    }
    lt.ok = true;
    return true;
}

/* ---- plans ---------------------------------------------------------------------------- */

typedef struct lt_key {
    int rows, cols, k;
    uint32_t epilogue;  /* cublasLtEpilogue_t */
    uint32_t align[5];  /* bytes: w (A), x (B), C, y (D), bias */
} lt_key;

typedef struct lt_plan {
    lt_key key;
    bool used, ok;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c; /* C and D share a layout */
    cublasLtMatmulAlgo_t algo;
} lt_plan;

static lt_plan plans[LT_PLANS];
static int next_plan;

static bool has_bias(uint32_t epilogue) { return (epilogue & CUBLASLT_EPILOGUE_BIAS) != 0; }

/* The largest power of two up to 256 that divides the address. */
static uint32_t alignment(const void *p)
{
    const uintptr_t v = (uintptr_t)p;
    uint32_t a = LT_ALIGN;
    while (a > 1 && v % a)
        a /= 2;
    return a;
}

/* C: the residual where it is added, else y (beta 0: not read). */
static const float *c_of(const layer_args *a) { return a->epilogue == LAYER_EPI_BIAS_ADD ? a->r : a->y; }

static lt_key key_of(const layer_args *a, uint32_t epilogue, bool real_pointers)
{
    lt_key k;
    memset(&k, 0, sizeof k);
    k.rows = a->rows, k.cols = a->cols, k.k = a->k, k.epilogue = epilogue;
    const void *p[5] = {a->w, a->x, c_of(a), a->y, a->bias};
    for (int i = 0; i < 5; i++)
        k.align[i] = real_pointers ? alignment(p[i]) : (uint32_t)LT_ALIGN;
    return k;
}

static void plan_free(lt_plan *p)
{
    if (p->desc)
        (void)cublasLtMatmulDescDestroy(p->desc);
    if (p->a)
        (void)cublasLtMatrixLayoutDestroy(p->a);
    if (p->b)
        (void)cublasLtMatrixLayoutDestroy(p->b);
    if (p->c)
        (void)cublasLtMatrixLayoutDestroy(p->c);
    p->desc = NULL, p->a = p->b = p->c = NULL;
}

static bool desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void *v, size_t n)
{
    return cublasLtMatmulDescSetAttribute(d, attr, v, n) == CUBLAS_STATUS_SUCCESS;
}

static bool pref_set(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const void *v,
                     size_t n)
{
    return cublasLtMatmulPreferenceSetAttribute(p, attr, v, n) == CUBLAS_STATUS_SUCCESS;
}

static bool layout(cublasLtMatrixLayout_t *l, int rows, int cols, int ld)
{
    return cublasLtMatrixLayoutCreate(l, CUDA_R_32F, (uint64_t)rows, (uint64_t)cols, ld) == CUBLAS_STATUS_SUCCESS;
}

/* The descriptors and the heuristic's algorithm for p's key; bias: a
 * pointer of the key's alignment (the heuristic reads its value, not what
 * it points to). */
static bool plan_make(lt_plan *p, const void *bias)
{
    const lt_key *k = &p->key;
    const int32_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
    bool ok = cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
              desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t) &&
              desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n) &&
              desc_set(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &k->epilogue, sizeof k->epilogue) &&
              (!has_bias(k->epilogue) || desc_set(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias)) &&
              layout(&p->a, k->k, k->cols, k->k) && layout(&p->b, k->k, k->rows, k->k) &&
              layout(&p->c, k->cols, k->rows, k->cols);
    cublasLtMatmulPreference_t pref = NULL;
    const uint64_t workspace = LT_WORKSPACE_BYTES;
    ok = ok && cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
         pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace) &&
         pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &k->align[0], sizeof k->align[0]) &&
         pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &k->align[1], sizeof k->align[1]) &&
         pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &k->align[2], sizeof k->align[2]) &&
         pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &k->align[3], sizeof k->align[3]);
    cublasLtMatmulHeuristicResult_t found;
    int count = 0;
    memset(&found, 0, sizeof found);
    ok = ok && cublasLtMatmulAlgoGetHeuristic(lt.handle, p->desc, p->a, p->b, p->c, p->c, pref, 1, &found, &count) ==
                   CUBLAS_STATUS_SUCCESS &&
         count >= 1 && found.state == CUBLAS_STATUS_SUCCESS && found.workspaceSize <= (size_t)LT_WORKSPACE_BYTES;
    if (pref)
        (void)cublasLtMatmulPreferenceDestroy(pref);
    if (ok)
        p->algo = found.algo;
    else
        plan_free(p);
    return ok;
}

/* The key's plan, made on its first use (the oldest dropped when all
 * LT_PLANS are taken). */
static lt_plan *plan_for(const lt_key *key, const void *bias)
{
    for (int i = 0; i < LT_PLANS; i++)
        if (plans[i].used && memcmp(&plans[i].key, key, sizeof *key) == 0)
            return &plans[i];
    lt_plan *p = &plans[next_plan];
    next_plan = (next_plan + 1) % LT_PLANS;
    if (p->used)
        plan_free(p);
    memset(p, 0, sizeof *p);
    p->key = *key, p->used = true;
    p->ok = plan_make(p, bias);
    return p;
}

/* One cublasLtMatmul of a planned shape; false where the library says it
 * cannot (the plan is dropped: the shape takes the two passes from then
 * on). */
static bool plan_run(lt_plan *p, const layer_args *a)
{
    if (has_bias(p->key.epilogue) && !desc_set(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &a->bias, sizeof a->bias))
        rl_fail_check("cuBLASLt", "the bias pointer of a planned descriptor was refused",
                      "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", __FILE__, __LINE__);
    const float one = 1.0f, beta = a->epilogue == LAYER_EPI_BIAS_ADD ? 1.0f : 0.0f;
    const cublasStatus_t st = cublasLtMatmul(lt.handle, p->desc, &one, a->w, p->a, a->x, p->b, &beta, c_of(a), p->c,
                                             a->y, p->c, &p->algo, lt.workspace, LT_WORKSPACE_BYTES,
                                             (cudaStream_t)a->stream);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH || st == CUBLAS_STATUS_NOT_INITIALIZED) {
        plan_free(p);
        p->ok = false;
        return false;
    }
    if (st != CUBLAS_STATUS_SUCCESS)
        rl_fail_check("cuBLASLt", cublasLtGetStatusString(st), "cublasLtMatmul(...)", __FILE__, __LINE__);
    return true;
}

/* ---- which GELU (see the top) ------------------------------------------------------------ */

static bool probe_gelu(void)
{
    enum { R = 256, C = 16, K = 4, X = 0, W = R * K, B = W + C * K, Y = B + 64, FLOATS = Y + R * C };
    static float host[FLOATS];
    memset(host, 0, sizeof host);
    for (int i = 0; i < R; i++)
        host[X + i * K] = -8.0f + (float)i / 16.0f; /* x: one non-zero term a row */
    for (int c = 0; c < C; c++)
        host[W + c * K] = 1.0f, host[B + c] = (float)(c - C / 2) / 64.0f;
    float *dev = NULL;
    if (cudaMalloc(&dev, sizeof host) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    layer_args a = {};
    a.x = dev + X, a.w = dev + W, a.bias = dev + B, a.y = dev + Y; /* each 256-byte aligned */
    a.rows = R, a.cols = C, a.k = K, a.epilogue = LAYER_EPI_BIAS_GELU;
    const lt_key key = key_of(&a, CUBLASLT_EPILOGUE_GELU_BIAS, true);
    lt_plan *p = plan_for(&key, a.bias);
    bool ok = cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess && p->ok &&
              plan_run(p, &a) && cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (int i = 0; ok && i < R; i++)
        for (int c = 0; c < C; c++) {
            const double s = -8.0 + i / 16.0 + (c - C / 2) / 64.0; /* x + bias, exact */
            const double want = 0.5 * s * (1.0 + tanh(LAYER_GELU_C * (s + LAYER_GELU_A * s * s * s)));
            if (!(fabs(host[Y + i * C + c] - want) <= 2e-6 * fmax(1.0, fabs(s)) + 2.5e-5 * fabs(want)))
                ok = false;
        }
    (void)cudaGetLastError();
    (void)cudaFree(dev);
    return ok;
}

static bool gelu_is_layers(void)
{
    if (lt.gelu < 0)
        lt.gelu = probe_gelu() ? 1 : 0;
    return lt.gelu == 1;
}

/* ---- layer_lt.cuh ------------------------------------------------------------------------ */

/* The cuBLASLt epilogue that computes a's, 0 where none does. */
static uint32_t lt_epilogue(const layer_args *a)
{
    switch (a->epilogue) {
    case LAYER_EPI_BIAS: return CUBLASLT_EPILOGUE_BIAS;
    case LAYER_EPI_BIAS_GELU: return gelu_is_layers() ? CUBLASLT_EPILOGUE_GELU_BIAS : 0;
    case LAYER_EPI_BIAS_ADD: return a->bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    default: return 0;
    }
}

bool layer_lt_plans(const layer_args *a)
{
    if (a->rows < 1 || a->cols < 1 || a->k < 1 || !lt_ready())
        return false;
    const uint32_t epilogue = lt_epilogue(a);
    if (!epilogue)
        return false;
    const lt_key key = key_of(a, epilogue, false);
    return plan_for(&key, lt.workspace)->ok; /* the workspace: a 256-byte aligned stand-in for the bias */
}

bool layer_lt_gemm(const layer_args *a)
{
    if (!lt_ready())
        return false;
    const uint32_t epilogue = lt_epilogue(a);
    if (!epilogue)
        return false;
    const lt_key key = key_of(a, epilogue, true);
    lt_plan *p = plan_for(&key, a->bias);
    return p->ok && plan_run(p, a);
}

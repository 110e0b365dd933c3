/*
 * layer_kernels.cuh -- the device code of experiment 09's CUDA steps
 * (layer.h; the launchers and the design are in layer.cu): the
 * element-wise kernel (also the GEMM's epilogue, run in place on its
 * output), the row kernel (softmax, scale-mask-softmax, layer norm,
 * RMSNorm and their fused forms) and RoPE; the fused FP32 attention is
 * layer_flash.cuh.
 * Device code and the host arithmetic of the launch plans only, so that
 * tests/emu/ compiles the same text with g++ (tests/emu/layer.cpp) and
 * launches each kernel with the launcher's own plan.
 */
#ifndef KERNELS_LAYER_KERNELS_CUH
#define KERNELS_LAYER_KERNELS_CUH

#include "layer.h"
#include "layer_common.cuh"
#include "layer_plan.h"
#include "warp.cuh"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define LAYER_LOG2E 1.4426950408889634f
/* A finite start for a running maximum: 2^(start - m) is 0, never NaN
 * (as -inf - -inf would be). */
#define LAYER_NO_SCORE (-1e30f)

/* ---- the math of one value -------------------------------------------------------- */

/* layer.h's GELU, tanh form: 0.5 x (1 + tanh(c (x + a x^3))). */
__device__ __forceinline__ float lk_gelu(float x)
{
    const float c = (float)LAYER_GELU_C, a = (float)LAYER_GELU_A;
    return 0.5f * x * (1.0f + tanhf(c * fmaf(a * x, x * x, x)));
}

/* x sigmoid(x); for x far below 0, exp(-x) is +inf and the quotient -0. */
__device__ __forceinline__ float lk_silu(float x) { return x / (1.0f + expf(-x)); }

/* The additive mask of key j for query q of sequence b (layer_mask). */
__device__ __forceinline__ float lk_mask(const float *mask, layer_mask kind, size_t b, size_t q, size_t j, int seq)
{
    if (kind == LAYER_MASK_PADDING)
        return mask[b * (size_t)seq + j];
    if (kind == LAYER_MASK_CAUSAL)
        return j > q ? LAYER_MASKED : 0.0f;
    return 0.0f;
}

/* ---- element-wise: one value in, one out ------------------------------------------- */

/* Each kind is one op of layer.h, or a GEMM epilogue (BIAS, BIAS_GELU,
 * BIAS_ADD, SILU_GATE run in place on the product: y == x, or y from the
 * SwiGLU product in scratch). */
enum layer_ew_kind {
    LAYER_EW_BIAS = 0,    /* x + bias[c] */
    LAYER_EW_GELU,        /* gelu(x) */
    LAYER_EW_BIAS_GELU,   /* gelu(x + bias[c]) */
    LAYER_EW_ADD,         /* x + r */
    LAYER_EW_BIAS_ADD,    /* x + bias[c] + r, bias may be NULL */
    LAYER_EW_SILU_GATE,   /* silu(x[i][c]) x[i][cols + c], x rows x 2 cols */
    LAYER_EW_SCALE_MASK,  /* x scale + mask, x in scores' shape */
    LAYER_EW_KINDS
};

/* Not __restrict__: the epilogue passes y == x. */
struct layer_ew_args {
    float *y;
    const float *x, *r, *bias, *mask;
    size_t n;            /* outputs */
    int cols;            /* an output row's columns (bias's; SILU_GATE: half of x's row) */
    int seq, heads;      /* SCALE_MASK: x is batch x heads x seq x seq */
    layer_mask mask_kind;
    float scale;
};


/* Whether a kind reads a per-column or per-key operand: its 16-byte path
 * needs each group of 4 outputs inside one row (cols, or seq, % 4 == 0). */
static inline bool layer_ew_by_column(int kind) { return kind != LAYER_EW_GELU && kind != LAYER_EW_ADD; }

static inline bool layer_aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

/* The 16-byte path: every pointer 16-byte aligned (NULL ones are) and, for
 * a kind that indexes by column, rows of whole groups of 4. */
static inline bool layer_ew_vec(int kind, const layer_ew_args *a)
{
    const int row = kind == LAYER_EW_SCALE_MASK ? a->seq : a->cols;
    return layer_aligned16(a->y) && layer_aligned16(a->x) && layer_aligned16(a->r) && layer_aligned16(a->bias) &&
           layer_aligned16(a->mask) && (!layer_ew_by_column(kind) || row % 4 == 0);
}


/* Output i, alone. */
template <int KIND> __device__ __forceinline__ float lk_ew1(const layer_ew_args &a, size_t i)
{
    if constexpr (KIND == LAYER_EW_GELU) {
        return lk_gelu(a.x[i]);
    } else if constexpr (KIND == LAYER_EW_ADD) {
        return a.x[i] + a.r[i];
    } else if constexpr (KIND == LAYER_EW_SCALE_MASK) {
        const size_t row = i / (size_t)a.seq, j = i % (size_t)a.seq;
        return fmaf(a.x[i], a.scale, lk_mask(a.mask, a.mask_kind, row / ((size_t)a.seq * a.heads), row % a.seq, j, a.seq));
    } else {
        const size_t row = i / (size_t)a.cols;
        const int c = (int)(i % (size_t)a.cols);
        if constexpr (KIND == LAYER_EW_SILU_GATE) {
            const float *xr = a.x + row * 2 * (size_t)a.cols;
            return lk_silu(xr[c]) * xr[a.cols + c];
        } else {
            const float v = a.x[i] + (a.bias ? a.bias[c] : 0.0f);
            if constexpr (KIND == LAYER_EW_BIAS_GELU)
                return lk_gelu(v);
            else if constexpr (KIND == LAYER_EW_BIAS_ADD)
                return v + a.r[i];
            else
                return v;
        }
    }
}

/* Outputs i .. i + 3 (i % 4 == 0, in one row: layer_ew_vec), 16 bytes a load. */
template <int KIND> __device__ __forceinline__ float4 lk_ew4(const layer_ew_args &a, size_t i)
{
    if constexpr (KIND == LAYER_EW_GELU) {
        const float4 x = lk_ld4(a.x + i);
        return make_float4(lk_gelu(x.x), lk_gelu(x.y), lk_gelu(x.z), lk_gelu(x.w));
    } else if constexpr (KIND == LAYER_EW_ADD) {
        const float4 x = lk_ld4(a.x + i), r = lk_ld4(a.r + i);
        return make_float4(x.x + r.x, x.y + r.y, x.z + r.z, x.w + r.w);
    } else if constexpr (KIND == LAYER_EW_SCALE_MASK) {
        const size_t row = i / (size_t)a.seq, j = i % (size_t)a.seq, q = row % a.seq;
        const size_t b = row / ((size_t)a.seq * a.heads);
        const float4 x = lk_ld4(a.x + i);
        float4 m = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (a.mask_kind == LAYER_MASK_PADDING)
            m = lk_ld4(a.mask + b * (size_t)a.seq + j);
        else if (a.mask_kind == LAYER_MASK_CAUSAL)
            m = make_float4(j > q ? LAYER_MASKED : 0.0f, j + 1 > q ? LAYER_MASKED : 0.0f,
                            j + 2 > q ? LAYER_MASKED : 0.0f, j + 3 > q ? LAYER_MASKED : 0.0f);
        return make_float4(fmaf(x.x, a.scale, m.x), fmaf(x.y, a.scale, m.y), fmaf(x.z, a.scale, m.z),
                           fmaf(x.w, a.scale, m.w));
    } else {
        const size_t row = i / (size_t)a.cols;
        const int c = (int)(i % (size_t)a.cols);
        if constexpr (KIND == LAYER_EW_SILU_GATE) {
            const float *xr = a.x + row * 2 * (size_t)a.cols;
            const float4 g = lk_ld4(xr + c), u = lk_ld4(xr + a.cols + c);
            return make_float4(lk_silu(g.x) * u.x, lk_silu(g.y) * u.y, lk_silu(g.z) * u.z, lk_silu(g.w) * u.w);
        } else {
            const float4 x = lk_ld4(a.x + i);
            const float4 bi = a.bias ? lk_ld4(a.bias + c) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            float4 v = make_float4(x.x + bi.x, x.y + bi.y, x.z + bi.z, x.w + bi.w);
            if constexpr (KIND == LAYER_EW_BIAS_GELU) {
                v = make_float4(lk_gelu(v.x), lk_gelu(v.y), lk_gelu(v.z), lk_gelu(v.w));
            } else if constexpr (KIND == LAYER_EW_BIAS_ADD) {
                const float4 r = lk_ld4(a.r + i);
                v = make_float4(v.x + r.x, v.y + r.y, v.z + r.z, v.w + r.w);
            }
            return v;
        }
    }
}

/* Grid-stride over the outputs: VEC, groups of 4 with 16-byte loads and
 * stores, then the n % 4 left (only where no row structure forbids them:
 * a kind by column has n % 4 == 0) one by one; else one by one. Each
 * thread reads its outputs' inputs before it writes them, so y == x (the
 * epilogue, in place) is safe. */
template <int KIND, bool VEC>
__global__ void __launch_bounds__(LAYER_EW_THREADS) layer_elementwise(layer_ew_args a)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (VEC) {
        const size_t groups = a.n / 4;
        for (size_t g = t; g < groups; g += stride)
            lk_st4(a.y + 4 * g, lk_ew4<KIND>(a, 4 * g));
        t += 4 * groups;
    }
    for (size_t i = t; i < a.n; i += stride)
        a.y[i] = lk_ew1<KIND>(a, i);
}

/* ---- rows: softmax and the norms ------------------------------------------------------ */

enum layer_row_kind {
    LAYER_ROW_SOFTMAX = 0,         /* softmax(x) */
    LAYER_ROW_SCALE_MASK_SOFTMAX,  /* softmax(x scale + mask), x in scores' shape */
    LAYER_ROW_LAYERNORM,           /* layer norm of x, gamma, beta */
    LAYER_ROW_BIAS_ADD_LAYERNORM,  /* layer norm of x + bias + r (bias may be NULL) */
    LAYER_ROW_RMSNORM,             /* RMSNorm of x, gamma */
    LAYER_ROW_ADD_RMSNORM,         /* y2 = x + r; RMSNorm of it, gamma */
    LAYER_ROW_KINDS
};

struct layer_row_args {
    float *y, *y2;
    const float *x, *r, *bias, *gamma, *beta, *mask;
    int rows, cols;
    int team;            /* threads a row (layer_row_plan_for) */
    int seq, heads;      /* SCALE_MASK_SOFTMAX: row (b heads + h) seq + q */
    layer_mask mask_kind;
    float scale, eps;
};


/* The 16-byte path: cols % 4 == 0 and every pointer 16-byte aligned. */
static inline bool layer_row_vec(const layer_row_args *a)
{
    return a->cols % 4 == 0 && layer_aligned16(a->y) && layer_aligned16(a->y2) && layer_aligned16(a->x) &&
           layer_aligned16(a->r) && layer_aligned16(a->bias) && layer_aligned16(a->gamma) &&
           layer_aligned16(a->beta) && layer_aligned16(a->mask);
}

/* The max (MAX) or sum of v over a row's team, in every thread of it: a
 * warp's shuffles, then (a team of several warps, the whole block) each
 * warp's through red[]. The barrier first: every thread has read red[]
 * of the reduction before. The same order in every thread: every thread
 * gets the same bits. */
template <bool MAX> __device__ __forceinline__ float lk_team_reduce(float v, int team, float *red)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = MAX ? fmaxf(v, w) : v + w;
    }
    if (team <= 32)
        return v;
    __syncthreads();
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < team / 32; w++)
        v = MAX ? fmaxf(v, red[w]) : v + red[w];
    return v;
}


/* One row a team (layer_row_plan_for). Thread t of the team holds the 4
 * columns from (g team + t) 4, g < PER / 4: each access of the team
 * coalesced, a 16-byte one where VEC (layer_row_vec), else four 4-byte
 * ones (any alignment, any cols; the same addresses a group, so no more
 * registers than the 16-byte path). Columns past the row hold what
 * changes no statistic (-inf for a maximum, 0 for a sum) and are neither
 * read nor written. */
template <int KIND, int PER, bool VEC>
__global__ void __launch_bounds__(PER == LAYER_ROW_PER ? LAYER_ROW_MAX_THREADS : LAYER_ROW_LONG_THREADS)
layer_rows(layer_row_args a)
{
    enum { G = PER / 4 };
    __shared__ float red[LAYER_ROW_MAX_THREADS / 32];
    /* long rows: a team of a constant 512, so that a value's address is
     * its row's plus a constant */
    const int team = PER == LAYER_ROW_PER ? a.team : LAYER_ROW_LONG_THREADS;
    const int t = team == 32 ? (int)(threadIdx.x % 32) : (int)threadIdx.x;
    const int row = team == 32 ? (int)(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) : (int)blockIdx.x;
    if (row >= a.rows) /* a whole warp of the last block (team 32: no barrier in this kernel) */
        return;
    const int n = a.cols;
    const size_t off = (size_t)row * n;
    constexpr bool softmax = KIND == LAYER_ROW_SOFTMAX || KIND == LAYER_ROW_SCALE_MASK_SOFTMAX;
    const float none = softmax ? -INFINITY : 0.0f;
    float v[G][4];

    /* Scale-mask-softmax with a padding mask: the mask's largest value
     * over the sequence's keys is taken from every key's, which changes no
     * softmax and keeps a row whose keys are all masked (-10000 each) exact:
     * its scores are then x scale alone, not -10000 + x scale rounded to
     * FP32's 2^-10 at 10000. */
    float mshift = 0.0f;
    if constexpr (KIND == LAYER_ROW_SCALE_MASK_SOFTMAX) {
        if (a.mask_kind == LAYER_MASK_PADDING) {
            const float *mk = a.mask + (size_t)(row / (a.heads * a.seq)) * a.seq;
            float mx = -INFINITY;
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int c = (g * team + t) * 4;
                if (c < n) {
                    lk_load4<VEC>(v[g], mk, c, n, -INFINITY);
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        mx = fmaxf(mx, v[g][e]);
                }
            }
            mshift = lk_team_reduce<true>(mx, team, red);
        }
    }

    /* the row, once, into registers */
    const int q = KIND == LAYER_ROW_SCALE_MASK_SOFTMAX ? row % a.seq : 0;
#pragma unroll
    for (int g = 0; g < G; g++) {
        const int c = (g * team + t) * 4;
        if (c >= n) {
#pragma unroll
            for (int e = 0; e < 4; e++)
                v[g][e] = none;
            continue;
        }
        float x[4];
        lk_load4<VEC>(x, a.x + off, c, n, 0.0f);
        if constexpr (KIND == LAYER_ROW_SCALE_MASK_SOFTMAX) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float m = 0.0f;
                if (a.mask_kind == LAYER_MASK_PADDING)
                    m = v[g][e] - mshift;
                else if (a.mask_kind == LAYER_MASK_CAUSAL)
                    m = c + e > q ? LAYER_MASKED : 0.0f;
                v[g][e] = c + e < n ? fmaf(x[e], a.scale, m) : none;
            }
        } else if constexpr (KIND == LAYER_ROW_BIAS_ADD_LAYERNORM || KIND == LAYER_ROW_ADD_RMSNORM) {
            float r[4], bi[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            lk_load4<VEC>(r, a.r + off, c, n, 0.0f);
            if (KIND == LAYER_ROW_BIAS_ADD_LAYERNORM && a.bias)
                lk_load4<VEC>(bi, a.bias, c, n, 0.0f);
#pragma unroll
            for (int e = 0; e < 4; e++)
                v[g][e] = x[e] + bi[e] + r[e]; /* 0 past the row */
            if constexpr (KIND == LAYER_ROW_ADD_RMSNORM)
                lk_store4<VEC>(a.y2 + off, v[g], c, n); /* the residual stream, kept */
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++)
                v[g][e] = c + e < n ? x[e] : none;
        }
    }

    if constexpr (softmax) {
        float mx = -INFINITY;
#pragma unroll
        for (int g = 0; g < G; g++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                mx = fmaxf(mx, v[g][e]);
        mx = lk_team_reduce<true>(mx, team, red);
        float sum = 0.0f;
#pragma unroll
        for (int g = 0; g < G; g++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                sum += v[g][e] = expf(v[g][e] - mx); /* -inf past the row: 0 */
        const float inv = lk_rcp(lk_team_reduce<false>(sum, team, red));
#pragma unroll
        for (int g = 0; g < G; g++) {
            const int c = (g * team + t) * 4;
            if (c < n) {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    v[g][e] *= inv;
                lk_store4<VEC>(a.y + off, v[g], c, n);
            }
        }
    } else {
        /* layer norm: mean, then the variance of the deviations (the row is
         * in registers: two passes over them cost no traffic and none of
         * the cancellation of E[x^2] - E[x]^2); RMSNorm: the mean square */
        constexpr bool layernorm = KIND == LAYER_ROW_LAYERNORM || KIND == LAYER_ROW_BIAS_ADD_LAYERNORM;
        const float inv_n = lk_rcp((float)n); /* not a division: see lk_rcp */
        float mean = 0.0f;
        if (layernorm) {
            float sum = 0.0f;
#pragma unroll
            for (int g = 0; g < G; g++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    sum += v[g][e];
            mean = lk_team_reduce<false>(sum, team, red) * inv_n;
        }
        float sq = 0.0f;
#pragma unroll
        for (int g = 0; g < G; g++) {
            const int c = (g * team + t) * 4;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float d = c + e < n ? v[g][e] - mean : 0.0f;
                sq = fmaf(d, d, sq);
            }
        }
        const float rs = lk_rsqrt(fmaf(lk_team_reduce<false>(sq, team, red), inv_n, a.eps));
#pragma unroll
        for (int g = 0; g < G; g++) {
            const int c = (g * team + t) * 4;
            if (c >= n)
                continue;
            float ga[4], be[4];
            lk_load4<VEC>(ga, a.gamma, c, n, 0.0f);
            if (layernorm)
                lk_load4<VEC>(be, a.beta, c, n, 0.0f);
#pragma unroll
            for (int e = 0; e < 4; e++)
                v[g][e] = layernorm ? fmaf((v[g][e] - mean) * rs, ga[e], be[e]) : v[g][e] * rs * ga[e];
            lk_store4<VEC>(a.y + off, v[g], c, n);
        }
    }
}

/* ---- RoPE ------------------------------------------------------------------------------ */


/* One thread a (token, pair c): the angle pos theta^(-2c / dim) depends on
 * nothing else, so it is computed once and turns the pair (c, c + dim / 2)
 * of every query and key head of the token; the thread copies the same two
 * columns of each value head. Consecutive threads take consecutive c: each
 * head's half-rows are read and written coalesced. The angle in double,
 * reduced modulo 2 pi before the float sine and cosine: in float, pos x
 * theta^(-2c/dim) at pos 4096 is off by up to 2^-24 x 4096 radians, which
 * moves the output by 2.4e-4 of its size, past the check's 1e-4; the cost
 * is a few double operations a (token, pair), shared by every head. */
__global__ void __launch_bounds__(LAYER_ROPE_THREADS)
layer_rope_kernel(float *__restrict__ y, const float *__restrict__ x, int rows, int seq, int heads, int heads_kv,
                  int dim, double log2_theta)
{
    const int half = dim / 2, ld = (heads + 2 * heads_kv) * dim;
    const size_t n = (size_t)rows * half, stride = (size_t)gridDim.x * blockDim.x;
    const double two_pi = 6.283185307179586;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        const size_t row = i / half;
        const int c = (int)(i % half), pos = (int)(row % seq);
        double angle = pos * exp2(-(2.0 * c / dim) * log2_theta);
        angle -= two_pi * rint(angle / two_pi);
        float sn, cs;
        lk_sincos((float)angle, &sn, &cs);
        const float *xr = x + row * ld;
        float *yr = y + row * ld;
        for (int h = 0; h < heads + heads_kv; h++) {
            const float lo = xr[h * dim + c], hi = xr[h * dim + c + half];
            yr[h * dim + c] = lo * cs - hi * sn;
            yr[h * dim + c + half] = hi * cs + lo * sn;
        }
        for (int h = heads + heads_kv; h < heads + 2 * heads_kv; h++) {
            yr[h * dim + c] = xr[h * dim + c];
            yr[h * dim + c + half] = xr[h * dim + c + half];
        }
    }
}


#endif

/*
 * layer_backward_kernels.cuh -- the device code of experiment 09's
 * backward steps that are not products (layer.h's GELU_BACKWARD,
 * SOFTMAX_BACKWARD, LAYERNORM_BACKWARD, BIAS_GRAD, LAYERNORM_PARAM_GRAD,
 * CONCAT; the launchers and the products are layer_backward.cu): an
 * element-wise kernel, a row kernel, the column sums over the tokens and
 * a copy, in the forward's manner (layer_kernels.cuh): 16-byte loads and
 * stores where aligned, a scalar path otherwise, the forward's row teams
 * and plans (layer_plan.h; this file's own, layer_backward_plan.h).
 * Device code and the host arithmetic of the launch plans only, so that
 * tests/emu/ compiles the same text with g++ (tests/emu/layer_backward.cpp).
 *
 * Its few helpers are its own (lb_*), copies of layer_kernels.cuh's
 * lk_* ones: that header defines a kernel that is not a template
 * (layer_rope_kernel), which a second .cu including it would define
 * again, and the link would refuse.
 */
#ifndef KERNELS_LAYER_BACKWARD_KERNELS_CUH
#define KERNELS_LAYER_BACKWARD_KERNELS_CUH

#include "layer.h"
#include "layer_backward_plan.h"
#include "layer_common.cuh"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* ---- helpers (the device ones shared with the forward: layer_common.cuh) ---------------- */

static inline bool lb_aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

/* ---- GELU's gradient -------------------------------------------------------------------
 *
 * layer.h's GELU is u (1 + tanh z) / 2 with z = c (u + a u^3), and
 * (1 + tanh z) / 2 is the sigmoid of 2 z: s = 1 / (1 + e), e = exp(-2 z).
 * So gelu'(u) = s + u s (1 - s) 2 c (1 + 3 a u^2), and 1 - s = e s: one
 * exp and one reciprocal, no tanh and no cancellation. e is kept finite
 * (its exponent at most 80) where u is far below 0, so that e s s is a
 * tiny number there and not inf x 0. */
__device__ __forceinline__ float lb_gelu_grad(float u)
{
    const float c2 = (float)(2.0 * LAYER_GELU_C), a = (float)LAYER_GELU_A, a3 = (float)(3.0 * LAYER_GELU_A);
    const float u2 = u * u;
    const float e = expf(fminf(-c2 * fmaf(a * u, u2, u), 80.0f));
    const float s = lk_rcp(1.0f + e);
    return fmaf(u * c2 * fmaf(a3, u2, 1.0f), (e * s) * s, s);
}

/* y = x gelu'(r) over n values: groups of 4 with 16-byte loads and stores
 * where VEC (y, x and r 16-byte aligned), then the n % 4 left one by one;
 * else one by one. Grid-stride, planned as the forward's element-wise
 * kernel (layer_ew_blocks, LAYER_EW_THREADS). */
template <bool VEC>
__global__ void __launch_bounds__(LAYER_EW_THREADS)
layer_gelu_backward_kernel(float *__restrict__ y, const float *__restrict__ x, const float *__restrict__ r, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (VEC) {
        const size_t groups = n / 4;
        for (size_t g = t; g < groups; g += stride) {
            const float4 d = lk_ld4(x + 4 * g), u = lk_ld4(r + 4 * g);
            lk_st4(y + 4 * g, make_float4(d.x * lb_gelu_grad(u.x), d.y * lb_gelu_grad(u.y), d.z * lb_gelu_grad(u.z),
                                          d.w * lb_gelu_grad(u.w)));
        }
        t += 4 * groups;
    }
    for (size_t i = t; i < n; i += stride)
        y[i] = x[i] * lb_gelu_grad(r[i]);
}

/* ---- rows: softmax's and layer norm's input gradients ---------------------------------------- */

enum layer_bw_row_kind {
    LAYER_BW_SOFTMAX = 0, /* y = r (x - sum(x r)), r the probabilities */
    LAYER_BW_LAYERNORM,   /* y = (g - mean(g) - h mean(g h)) / std, g = x gamma, h = (r - mean) / std */
    LAYER_BW_ROW_KINDS
};

struct layer_bw_row_args {
    float *y;
    const float *x, *r, *gamma;
    int rows, cols;
    int team; /* threads a row (layer_row_plan_for) */
    float eps;
};

/* The 16-byte path: cols % 4 == 0 and every pointer 16-byte aligned. */
static inline bool layer_bw_row_vec(const layer_bw_row_args *a)
{
    return a->cols % 4 == 0 && lb_aligned16(a->y) && lb_aligned16(a->x) && lb_aligned16(a->r) &&
           lb_aligned16(a->gamma);
}

/* The sums of v[0..N) over the threads of the team this thread is in, in
 * every thread of it: the forward's lk_team_reduce for N values at once,
 * and for a block of several teams (the column sums'): a warp's shuffles,
 * then, a team of several warps, its warps' values through red[i][warp]
 * (a team's warps side by side). The barriers are the block's: every
 * thread of it comes, in every team at once. The same order in every
 * thread: every thread of a team gets the same bits. */
template <int N> __device__ __forceinline__ void lb_teams_sum(float (&v)[N], int team, float (*red)[32])
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int i = 0; i < N; i++)
            v[i] += __shfl_xor_sync(0xffffffffu, v[i], o);
    if (team <= 32)
        return;
    __syncthreads(); /* every thread has read red[] of the reduction before */
    if (threadIdx.x % 32 == 0)
#pragma unroll
        for (int i = 0; i < N; i++)
            red[i][threadIdx.x / 32] = v[i];
    __syncthreads();
    const int first = (int)threadIdx.x / team * (team / 32);
#pragma unroll
    for (int i = 0; i < N; i++) {
        v[i] = red[i][first];
        for (int w = 1; w < team / 32; w++)
            v[i] += red[i][first + w];
    }
}

/* One row a team, as the forward's layer_rows: thread t of the team holds
 * the 4 columns from (g team + t) 4, g < PER / 4, of x and r (the second
 * input) from one load each to the output's store, so each is read once
 * and y written once. Columns past the row hold 0 and are neither read
 * nor written. Softmax: one reduction (the dot product of x and r). Layer
 * norm: two of two sums each: the row's sum and g's, then the squared
 * deviations (the row is in registers: no E[r^2] - E[r]^2 cancellation)
 * and g's dot product with them; so mean(g h) = that dot / (n std). */
template <int KIND, int PER, bool VEC>
__global__ void __launch_bounds__(PER == LAYER_ROW_PER ? LAYER_ROW_MAX_THREADS : LAYER_ROW_LONG_THREADS)
layer_bw_rows(layer_bw_row_args a)
{
    enum { G = PER / 4 };
    __shared__ float red[2][32];
    const int team = PER == LAYER_ROW_PER ? a.team : LAYER_ROW_LONG_THREADS;
    const int t = team == 32 ? (int)(threadIdx.x % 32) : (int)threadIdx.x;
    const int row = team == 32 ? (int)(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) : (int)blockIdx.x;
    if (row >= a.rows) /* a whole warp of the last block (team 32: no barrier in this kernel) */
        return;
    const int n = a.cols;
    const size_t off = (size_t)row * n;
    float xv[G][4], rv[G][4]; /* softmax: x and the probabilities; layer norm: g = x gamma and r */
    float s[KIND == LAYER_BW_LAYERNORM ? 2 : 1] = {}; /* softmax: x . r; layer norm: r's sum, g's */
#pragma unroll
    for (int g = 0; g < G; g++) {
        const int c = (g * team + t) * 4;
#pragma unroll
        for (int e = 0; e < 4; e++)
            xv[g][e] = rv[g][e] = 0.0f;
        if (c >= n)
            continue;
        lk_load4<VEC>(xv[g], a.x + off, c, n, 0.0f);
        lk_load4<VEC>(rv[g], a.r + off, c, n, 0.0f);
        if constexpr (KIND == LAYER_BW_LAYERNORM) {
            float ga[4];
            lk_load4<VEC>(ga, a.gamma, c, n, 0.0f);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                xv[g][e] *= ga[e];
                s[0] += rv[g][e];
                s[1] += xv[g][e];
            }
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[0] = fmaf(xv[g][e], rv[g][e], s[0]);
        }
    }
    if constexpr (KIND == LAYER_BW_SOFTMAX) {
        lb_teams_sum(s, team, red);
#pragma unroll
        for (int g = 0; g < G; g++) {
            const int c = (g * team + t) * 4;
            if (c >= n)
                continue;
#pragma unroll
            for (int e = 0; e < 4; e++)
                xv[g][e] = rv[g][e] * (xv[g][e] - s[0]);
            lk_store4<VEC>(a.y + off, xv[g], c, n);
        }
    } else {
        lb_teams_sum(s, team, red);
        const float inv_n = lk_rcp((float)n);
        const float mean = s[0] * inv_n, mean_g = s[1] * inv_n;
        float q[2] = {0.0f, 0.0f}; /* the squared deviations' sum, g's dot product with the deviations */
#pragma unroll
        for (int g = 0; g < G; g++) {
            const int c = (g * team + t) * 4;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                rv[g][e] = c + e < n ? rv[g][e] - mean : 0.0f;
                q[0] = fmaf(rv[g][e], rv[g][e], q[0]);
                q[1] = fmaf(xv[g][e], rv[g][e], q[1]);
            }
        }
        lb_teams_sum(q, team, red);
        const float rs = lk_rsqrt(fmaf(q[0], inv_n, a.eps));
        const float mean_gh = q[1] * rs * inv_n;
#pragma unroll
        for (int g = 0; g < G; g++) {
            const int c = (g * team + t) * 4;
            if (c >= n)
                continue;
#pragma unroll
            for (int e = 0; e < 4; e++)
                xv[g][e] = (xv[g][e] - mean_g - rv[g][e] * rs * mean_gh) * rs;
            lk_store4<VEC>(a.y + off, xv[g], c, n);
        }
    }
}

/* ---- column sums over the tokens (layer_colsum_plan_for) ------------------------------------- */

enum layer_colsum_kind {
    LAYER_COLSUM_BIAS = 0,  /* the sums of x: width cols */
    LAYER_COLSUM_LAYERNORM, /* the sums of x h (h: r's row normalized), then of x: width 2 cols */
    LAYER_COLSUM_KINDS
};

struct layer_colsum_args {
    float *out;                   /* partials: blocks x width (one block: y) */
    const float *x, *r;
    int rows, cols, team, teams, sub, slab;
    float eps;
};

/* The 16-byte loads: cols % 4 == 0, x and r 16-byte aligned (the sums
 * are written a value at a time). */
static inline bool layer_colsum_vec(const layer_colsum_args *a)
{
    return a->cols % 4 == 0 && lb_aligned16(a->x) && lb_aligned16(a->r);
}

/* The first kernel (layer_backward_plan.h): team `ti` of the block sums
 * the slab's rows first + ti sub .. + sub - 1, in order; every team makes
 * the same number of turns (a turn's row past the slab does nothing but
 * the barriers of layer norm's reductions). Bias: U rows at a time, their
 * loads issued before their sums (U rows of loads in flight). Layer norm:
 * each row's mean and 1 / std as its forward computes them (two passes
 * over the row, held in registers where HOLD; long rows read again, from
 * the cache, keeping the registers for the sums), then h. */
template <int KIND, int PER, bool VEC>
__global__ void __launch_bounds__(PER == LAYER_ROW_PER ? LAYER_ROW_MAX_THREADS : LAYER_ROW_LONG_THREADS)
layer_colsums(layer_colsum_args a)
{
    enum { G = PER / 4 };
    constexpr bool LN = KIND == LAYER_COLSUM_LAYERNORM, HOLD = PER == LAYER_ROW_PER;
    __shared__ float red[2][32];
    __shared__ float sums[LAYER_COLSUM_SHARED];
    /* long rows: a team of a constant 512, alone in its block */
    const int team = PER == LAYER_ROW_PER ? a.team : LAYER_ROW_LONG_THREADS;
    const int teams = PER == LAYER_ROW_PER ? a.teams : 1;
    const int ti = (int)threadIdx.x / team, t = (int)threadIdx.x - ti * team;
    const int n = a.cols, first = (int)blockIdx.x * a.slab + ti * a.sub;
    const int end = first + a.sub < a.rows ? first + a.sub : a.rows; /* this team's rows: first .. end - 1 */
    float acc[G][4], accx[LN ? G : 1][4]; /* bias: x; layer norm: x h, and x */
#pragma unroll
    for (int g = 0; g < G; g++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            acc[g][e] = accx[LN ? g : 0][e] = 0.0f;

    if constexpr (!LN) {
        constexpr int U = HOLD ? 2 : 1;
        int row = first;
        const float *xr = a.x + (size_t)row * n;
        for (; row + U <= end; row += U, xr += (size_t)U * n) {
            float v[U][G][4];
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int g = 0; g < G; g++) {
                    const int c = (g * team + t) * 4;
                    if (c < n)
                        lk_load4<VEC>(v[u][g], xr + u * n, c, n, 0.0f);
                }
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int c = (g * team + t) * 4;
                if (c < n)
#pragma unroll
                    for (int u = 0; u < U; u++)
#pragma unroll
                        for (int e = 0; e < 4; e++)
                            acc[g][e] += v[u][g][e];
            }
        }
        for (; row < end; row++, xr += n)
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int c = (g * team + t) * 4;
                if (c < n) {
                    float x[4];
                    lk_load4<VEC>(x, xr, c, n, 0.0f);
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[g][e] += x[e];
                }
            }
    } else {
        for (int i = 0; i < a.sub; i++) {
            const int row = first + i;
            const bool live = row < end;
            const size_t off = (size_t)(live ? row : 0) * n;
            const float *xr = a.x + off, *rr = a.r + off;
            /* HOLD: x, and r's deviations once the mean is known */
            float rv[HOLD ? G : 1][4], xv[HOLD ? G : 1][4];
            float s[1] = {0.0f};
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int c = (g * team + t) * 4;
                float r[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                if (live && c < n) {
                    lk_load4<VEC>(r, rr, c, n, 0.0f);
                    if constexpr (HOLD)
                        lk_load4<VEC>(xv[g], xr, c, n, 0.0f);
                }
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    s[0] += r[e];
                    if constexpr (HOLD)
                        rv[g][e] = r[e];
                }
            }
            lb_teams_sum(s, team, red);
            const float inv_n = lk_rcp((float)n), mean = s[0] * inv_n;
            float sq[1] = {0.0f};
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int c = (g * team + t) * 4;
                float r[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                if constexpr (HOLD) {
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        r[e] = rv[g][e];
                } else if (live && c < n) {
                    lk_load4<VEC>(r, rr, c, n, 0.0f);
                }
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const float d = live && c + e < n ? r[e] - mean : 0.0f;
                    sq[0] = fmaf(d, d, sq[0]);
                    if constexpr (HOLD)
                        rv[g][e] = d;
                }
            }
            lb_teams_sum(sq, team, red);
            const float rs = lk_rsqrt(fmaf(sq[0], inv_n, a.eps));
            if (!live)
                continue;
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int c = (g * team + t) * 4;
                if (c >= n)
                    continue;
                float d[4], x[4];
                if constexpr (HOLD) {
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        d[e] = rv[g][e], x[e] = xv[g][e];
                } else {
                    lk_load4<VEC>(d, rr, c, n, 0.0f);
                    lk_load4<VEC>(x, xr, c, n, 0.0f);
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        d[e] -= mean;
                }
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    acc[g][e] = fmaf(x[e], d[e] * rs, acc[g][e]);
                    accx[g][e] += x[e];
                }
            }
        }
    }

    /* The block's sums: a team alone writes its own; else each team in
     * turn adds its own to sums[] (team 0 stores), in team order. */
    const int width = LN ? 2 * n : n;
    float *out = a.out + (size_t)blockIdx.x * width;
    float *dst = teams == 1 ? out : sums;
    for (int k = 0; k < teams; k++) {
        if (ti == k) {
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int c = (g * team + t) * 4;
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (c + e < n) {
                        dst[c + e] = k ? dst[c + e] + acc[g][e] : acc[g][e];
                        if constexpr (LN)
                            dst[n + c + e] = k ? dst[n + c + e] + accx[g][e] : accx[g][e];
                    }
            }
        }
        if (teams > 1)
            __syncthreads();
    }
    if (teams > 1)
        for (int j = (int)threadIdx.x; j < width; j += teams * team) /* the block's threads */
            out[j] = sums[j];
}

/* The second kernel: y[c] = the sum of partials[p][c] over p in order of
 * slab, for 32 columns a block: warp w adds slabs w, w + 32, ... (its
 * loads independent, in flight together), then warp 0 the 32 warps'
 * sums in warp order. */
__global__ void __launch_bounds__(LAYER_COLSUM_FINAL_THREADS)
layer_colsum_final(float *__restrict__ y, const float *__restrict__ partials, int parts, int width)
{
    __shared__ float red[LAYER_COLSUM_FINAL_THREADS / 32][32];
    const int lane = (int)threadIdx.x % 32, w = (int)threadIdx.x / 32;
    const int c = (int)blockIdx.x * 32 + lane;
    float s = 0.0f;
    if (c < width)
        for (int p = w; p < parts; p += LAYER_COLSUM_FINAL_THREADS / 32)
            s += partials[(size_t)p * width + c];
    red[w][lane] = s;
    __syncthreads();
    if (w == 0 && c < width) {
        for (int k = 1; k < LAYER_COLSUM_FINAL_THREADS / 32; k++)
            s += red[k][lane];
        y[c] = s;
    }
}

/* ---- concat ---------------------------------------------------------------------------------- */

/* y (rows x cols) = per row, x's k values then r's cols - k: thread
 * (tx, ty) of a block copies columns tx, tx + blockDim.x, ... (16-byte
 * groups where VEC: k, cols and every pointer on 16 bytes) of rows
 * blockIdx.x blockDim.y + ty, + gridDim.x blockDim.y, ...
 * (layer_concat_plan_for). */
template <bool VEC>
__global__ void __launch_bounds__(LAYER_CONCAT_THREADS)
layer_concat_kernel(float *__restrict__ y, const float *__restrict__ x, const float *__restrict__ r, int rows,
                    int cols, int k)
{
    const int kr = cols - k, step = VEC ? 4 * (int)blockDim.x : (int)blockDim.x;
    const int c0 = VEC ? 4 * (int)threadIdx.x : (int)threadIdx.x;
    for (int row = (int)(blockIdx.x * blockDim.y + threadIdx.y); row < rows; row += (int)(gridDim.x * blockDim.y)) {
        float *yr = y + (size_t)row * cols;
        const float *xr = x + (size_t)row * k, *rr = r + (size_t)row * kr;
        for (int c = c0; c < k; c += step) {
            if (VEC)
                lk_st4(yr + c, lk_ld4(xr + c));
            else
                yr[c] = xr[c];
        }
        for (int c = c0; c < kr; c += step) {
            if (VEC)
                lk_st4(yr + k + c, lk_ld4(rr + c));
            else
                yr[k + c] = rr[c];
        }
    }
}

#endif

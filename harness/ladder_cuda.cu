/*
 * ladder_cuda.cu -- the CUDA backend's ceilings: read, copy and triad
 * bandwidth over one working set (the L2's half, or device memory), and
 * cuBLAS GEMM rates (FP16 in, FP32 out and accumulate: the type the
 * experiments' own cuBLAS GEMMs write).
 *
 * An L2-sized pass takes a few microseconds on a data-centre GPU, about a
 * launch; so one launch makes several passes, each thread over the same
 * 16-byte elements every pass (they stay in L2), with a compiler barrier
 * between passes so that no load is reused from registers.
 */
#include "check.h"
#include "internal.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>

enum { LADDER_BLOCK = 256 };

__global__ void __launch_bounds__(LADDER_BLOCK)
ladder_kernel(rl_pattern pattern, float4 *a, const float4 *b, const float4 *c, size_t n4,
              int passes, float *sink)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    float sum = 0;
    for (int p = 0; p < passes; p++) {
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += stride) {
            if (pattern == RL_READ) {
                float4 v = a[i];
                sum += (v.x + v.y) + (v.z + v.w);
            } else if (pattern == RL_COPY) {
                float4 v = b[i];
                a[i] = make_float4(1.0000001f * v.x, 1.0000001f * v.y, 1.0000001f * v.z,
                                   1.0000001f * v.w);
            } else {
                float4 x = b[i], y = c[i];
                a[i] = make_float4(x.x + 3 * y.x, x.y + 3 * y.y, x.z + 3 * y.z, x.w + 3 * y.w);
            }
        }
        asm volatile("" ::: "memory");
    }
    if (sum == -1.2345f) /* never true for our data; keeps the reads */
        sink[0] = sum;
}

/* Random floats in [-1, 1) from a hash of the index: never zeros. */
__global__ void fill_random_float(float *x, size_t n, unsigned long long seed)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long z = seed * 0x9e3779b97f4a7c15ULL + i + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    x[i] = (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void float_to_half(__half *dst, const float *src, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = __float2half(src[i]);
}

static unsigned grid_for(size_t n) { return (unsigned)((n + 255) / 256); }

static void fill_random(rl_ctx *ctx, float *x, size_t n)
{
    fill_random_float<<<grid_for(n), 256, 0, rl_stream(ctx->be)>>>(x, n, rl_next_seed(ctx));
    RL_CUDA_CHECK_LAUNCH();
}

typedef struct ladder_args {
    rl_pattern pattern;
    float4 *a, *b, *c;
    size_t n4;
    int passes, blocks;
    float *sink;
    cudaStream_t stream;
} ladder_args;

static void ladder_call(void *arg)
{
    const ladder_args *x = (const ladder_args *)arg;
    ladder_kernel<<<x->blocks, LADDER_BLOCK, 0, x->stream>>>(x->pattern, x->a, x->b, x->c, x->n4,
                                                             x->passes, x->sink);
    RL_CUDA_CHECK_LAUNCH();
}

static float4 *random_array(rl_ctx *ctx, size_t n4)
{
    float4 *p = (float4 *)rl_alloc(ctx->be, n4 * sizeof(float4));
    fill_random(ctx, (float *)p, 4 * n4);
    return p;
}

static int arrays_of(rl_pattern p) { return p == RL_READ ? 1 : p == RL_COPY ? 2 : 3; }

/* The arrays of one pattern over a working set of probe_bytes (at most a
 * quarter of the free memory), passes enough to move ~256 MiB per launch,
 * or one. */
static ladder_args ladder_over(rl_ctx *ctx, rl_pattern pattern, double probe_bytes, bool one_pass)
{
    size_t free_b, total_b;
    RL_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    probe_bytes = fmin(probe_bytes, free_b / 4.0);
    int arrays = arrays_of(pattern);
    ladder_args x = {};
    x.pattern = pattern;
    x.n4 = (size_t)(probe_bytes / arrays / sizeof(float4)) / 256 * 256;
    x.n4 = x.n4 < 256 ? 256 : x.n4;
    x.a = random_array(ctx, x.n4);
    x.b = arrays > 1 ? random_array(ctx, x.n4) : NULL;
    x.c = arrays > 2 ? random_array(ctx, x.n4) : NULL;
    x.sink = (float *)rl_alloc(ctx->be, sizeof(float));
    x.stream = rl_stream(ctx->be);
    x.blocks = ctx->dev->sm_count * 8;
    double bytes_per_pass = (double)arrays * x.n4 * sizeof(float4);
    x.passes = one_pass ? 1 : (int)fmax(1, ceil(256.0 * 1048576 / bytes_per_pass));
    return x;
}

static double ladder_bytes(const ladder_args *x)
{
    return (double)arrays_of(x->pattern) * x->n4 * sizeof(float4) * x->passes;
}

static void ladder_release(rl_ctx *ctx, ladder_args *x)
{
    rl_free(ctx->be, x->a);
    rl_free(ctx->be, x->b);
    rl_free(ctx->be, x->c);
    rl_free(ctx->be, x->sink);
}

extern "C" rl_band rl_cuda_bandwidth(rl_ctx *ctx, rl_pattern pattern, double probe_bytes,
                                     int trials)
{
    ladder_args x = ladder_over(ctx, pattern, probe_bytes, false);
    double bytes_per_pass = ladder_bytes(&x) / x.passes;
    char name[64];
    snprintf(name, sizeof name, "ceiling: %s over %.0f MiB", rl_pattern_name(pattern),
             bytes_per_pass / 1048576);
    rl_band band = rl_measure_trials(ctx, name, ladder_call, &x, bytes_per_pass * x.passes / 1e9,
                                     trials);
    ladder_release(ctx, &x);
    return band;
}

/* ---- the GEMM ------------------------------------------------------------------ */

typedef struct gemm_args { cublasHandle_t h; const __half *a, *b; float *c; int n; } gemm_args;

static void fp16_gemm(void *arg)
{
    const gemm_args *g = (const gemm_args *)arg;
    const float one = 1.0f, zero = 0.0f;
    RL_CUBLAS_CHECK(cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->a,
                                 CUDA_R_16F, g->n, g->b, CUDA_R_16F, g->n, &zero, g->c, CUDA_R_32F,
                                 g->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static __half *random_halves(rl_ctx *ctx, size_t n, float *staging)
{
    __half *h = (__half *)rl_alloc(ctx->be, n * sizeof(__half));
    fill_random(ctx, staging, n);
    float_to_half<<<grid_for(n), 256, 0, rl_stream(ctx->be)>>>(h, staging, n);
    RL_CUDA_CHECK_LAUNCH();
    return h;
}

extern "C" rl_band rl_cuda_gemm(rl_ctx *ctx, int n, int trials)
{
    size_t elems = (size_t)n * n;
    gemm_args g;
    g.n = n;
    RL_CUBLAS_CHECK(cublasCreate(&g.h));
    RL_CUBLAS_CHECK(cublasSetStream(g.h, rl_stream(ctx->be)));
    g.c = (float *)rl_alloc(ctx->be, elems * sizeof(float)); /* staging first, then C */
    g.a = random_halves(ctx, elems, g.c);
    g.b = random_halves(ctx, elems, g.c);
    char name[64];
    snprintf(name, sizeof name, "ceiling: cuBLAS FP16 GEMM %d^3", n);
    rl_band band = rl_measure_trials(ctx, name, fp16_gemm, &g, rl_gemm_flops(n, n, n) / 1e12,
                                     trials);
    rl_free(ctx->be, (void *)g.a);
    rl_free(ctx->be, (void *)g.b);
    rl_free(ctx->be, g.c);
    RL_CUBLAS_CHECK(cublasDestroy(g.h));
    return band;
}

extern "C" const int rl_cuda_gemm_sizes[] = {2048, 4096, 8192, 0};

/* ---- probes: the same kernels, timed beside a group's points ------------------- */

extern "C" bool rl_cuda_bandwidth_probe(rl_ctx *ctx, rl_pattern pattern, double bytes,
                                        bool one_pass, bool wide, rl_probe *out)
{
    if (wide) /* one read loop on the GPU */
        return false;
    ladder_args *x = (ladder_args *)rl_host_alloc(sizeof *x);
    *x = ladder_over(ctx, pattern, bytes, one_pass);
    rl_sync(ctx->be); /* the random fill, before the first sample */
    *out = rl_probe{"roof probe", ladder_call, x, ladder_bytes(x)};
    return true;
}

/* The GEMM size of the compute probe: the largest of the ceiling's sizes,
 * the one that reaches the matrix units' peak on a data-centre GPU. */
enum { PROBE_GEMM_N = 8192 };

extern "C" bool rl_cuda_compute_probe(rl_ctx *ctx, rl_probe *out)
{
    size_t elems = (size_t)PROBE_GEMM_N * PROBE_GEMM_N;
    gemm_args *g = (gemm_args *)rl_host_alloc(sizeof *g);
    g->n = PROBE_GEMM_N;
    RL_CUBLAS_CHECK(cublasCreate(&g->h));
    RL_CUBLAS_CHECK(cublasSetStream(g->h, rl_stream(ctx->be)));
    g->c = (float *)rl_alloc(ctx->be, elems * sizeof(float));
    g->a = random_halves(ctx, elems, g->c);
    g->b = random_halves(ctx, elems, g->c);
    rl_sync(ctx->be);
    *out = rl_probe{"compute probe", fp16_gemm, g, rl_gemm_flops(g->n, g->n, g->n)};
    return true;
}

extern "C" void rl_cuda_probe_release(rl_ctx *ctx, rl_probe *probe)
{
    if (probe->run == ladder_call) {
        ladder_release(ctx, (ladder_args *)probe->state);
    } else if (probe->run == fp16_gemm) {
        gemm_args *g = (gemm_args *)probe->state;
        rl_free(ctx->be, (void *)g->a);
        rl_free(ctx->be, (void *)g->b);
        rl_free(ctx->be, g->c);
        RL_CUBLAS_CHECK(cublasDestroy(g->h));
    }
    if (probe->state)
        rl_host_free(probe->state);
    *probe = rl_probe{};
}

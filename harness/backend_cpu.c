/*
 * backend_cpu.c -- the CPU backend: host memory, OpenMP threads, the
 * monotonic clock, and the host's memory hierarchy in place of HBM and L2.
 *
 * Ceilings: a STREAM-style triad (a = b + s*c, counting 24 bytes per
 * element read and written, as STREAM does) over at least 4x the last-level
 * cache, and OpenBLAS SGEMM for the matrix rate.
 */
#include "internal.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *flush_buf;
static size_t flush_len;
static double timer_t0;
static volatile double sink; /* keeps the flush read from being optimized out */
static double cpu_llc;

static rl_open_status cpu_open(int device, rl_device_info *info, char *why, size_t whylen)
{
    (void)device, (void)why, (void)whylen;
    rl_cpu_describe(info);
    cpu_llc = info->llc_bytes;
    snprintf(info->driver, sizeof info->driver, "n/a");
    snprintf(info->runtime, sizeof info->runtime, "OpenMP %d", _OPENMP);
    snprintf(info->nvml, sizeof info->nvml, "n/a (CPU backend)");
    return RL_OPENED;
}

static void cpu_close(void)
{
    free(flush_buf);
    flush_buf = NULL;
    flush_len = 0;
}

/* First touch by the worker threads, with the static schedule the kernels
 * use, so each page lives near the thread that will stream it. */
static void *cpu_alloc(size_t bytes)
{
    unsigned char *p = rl_host_alloc(bytes);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < bytes; i += 4096)
        p[i] = 0;
    return p;
}

static void cpu_copy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
static void cpu_poison(void *p, size_t bytes) { memset(p, 0xFF, bytes); }
static void cpu_sync(void) {}
static struct CUstream_st *cpu_stream(void) { return NULL; }

/* Reading twice the LLC evicts whatever the last sample left there. */
static void cpu_flush_cache(void)
{
    if (!flush_buf) {
        flush_len = (size_t)(2 * cpu_llc / sizeof(double));
        flush_buf = cpu_alloc(flush_len * sizeof(double));
        rl_fill_uniform_f64(flush_buf, flush_len, 0, 1, 42);
    }
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (size_t i = 0; i < flush_len; i += 8) /* one read per 64-byte line */
        s += flush_buf[i];
    sink = s;
}

static void cpu_timer_start(void) { timer_t0 = rl_now_s(); }
static double cpu_timer_stop(void) { return rl_now_s() - timer_t0; }
static void cpu_range(const char *name) { (void)name; }
static void cpu_range_pop(void) {}

typedef struct triad_args { double *a, *b, *c; size_t n; } triad_args;

static void triad(void *arg)
{
    triad_args *t = arg;
    double *restrict a = t->a;
    const double *restrict b = t->b, *restrict c = t->c;
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < t->n; i++)
        a[i] = b[i] + 3.0 * c[i];
}

typedef struct sgemm_args { float *a, *b, *c; int n; } sgemm_args;

static void sgemm(void *arg)
{
    sgemm_args *g = arg;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f, g->a, g->n,
                g->b, g->n, 0.0f, g->c, g->n);
}

static double measure_triad_gbps(rl_ctx *ctx, double *working_set)
{
    /* Three arrays of n doubles: the working set is 24n bytes >= 4 x LLC. */
    size_t n = (size_t)(4 * ctx->dev->llc_bytes / 24.0);
    n = (n + (1u << 20) - 1) / (1u << 20) * (1u << 20);
    triad_args t = {cpu_alloc(n * 8), cpu_alloc(n * 8), cpu_alloc(n * 8), n};
    rl_fill_uniform_f64(t.b, n, -1, 1, rl_next_seed(ctx));
    rl_fill_uniform_f64(t.c, n, -1, 1, rl_next_seed(ctx));
    rl_measurement m = rl_measure_as(ctx, "ceiling: triad", triad, &t, RL_HOT);
    free(t.a), free(t.b), free(t.c);
    *working_set = 24.0 * (double)n;
    return 24.0 * (double)n / m.stats.median / 1e9;
}

static double measure_sgemm_tflops(rl_ctx *ctx)
{
    int n = ctx->args.quick ? 1024 : 2048;
    size_t elems = (size_t)n * n;
    sgemm_args g = {cpu_alloc(elems * 4), cpu_alloc(elems * 4), cpu_alloc(elems * 4), n};
    rl_fill_uniform(g.a, elems, -1, 1, rl_next_seed(ctx));
    rl_fill_uniform(g.b, elems, -1, 1, rl_next_seed(ctx));
    rl_measurement m = rl_measure_as(ctx, "ceiling: sgemm", sgemm, &g, RL_HOT);
    free(g.a), free(g.b), free(g.c);
    return rl_gemm_flops(n, n, n) / m.stats.median / 1e12;
}

static void cpu_measure_ceilings(rl_ctx *ctx, rl_ceilings *out)
{
    double working_set;
    out->copy_gbps = measure_triad_gbps(ctx, &working_set);
    out->matrix_tflops = measure_sgemm_tflops(ctx);
    snprintf(out->how, sizeof out->how, "triad over %.0f MiB, OpenBLAS SGEMM %d^3, %d threads",
             working_set / 1048576.0, ctx->args.quick ? 1024 : 2048, omp_get_max_threads());
}

const rl_backend_ops rl_cpu_ops = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = free,
    .upload = cpu_copy,
    .download = cpu_copy,
    .poison = cpu_poison,
    .sync = cpu_sync,
    .stream = cpu_stream,
    .flush_cache = cpu_flush_cache,
    .timer_start = cpu_timer_start,
    .timer_stop = cpu_timer_stop,
    .range_push = cpu_range,
    .range_pop = cpu_range_pop,
    .measure_ceilings = cpu_measure_ceilings,
};

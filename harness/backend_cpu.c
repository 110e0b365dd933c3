/*
 * backend_cpu.c -- the CPU backend: host memory, OpenMP threads, the
 * monotonic clock, and the host's memory hierarchy in place of HBM and L2.
 *
 * Ceilings (ladder_cpu.c): read, copy and triad bandwidth at every level
 * of the memory hierarchy, OpenBLAS SGEMM and the FMA peak.
 */
#include "internal.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
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
    rl_cpu_ladder_release();
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

typedef struct sgemm_args { float *a, *b, *c; int n; } sgemm_args;

static void sgemm(void *arg)
{
    sgemm_args *g = arg;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f, g->a, g->n,
                g->b, g->n, 0.0f, g->c, g->n);
}

static rl_band cpu_gemm(rl_ctx *ctx, int n, int trials)
{
    size_t elems = (size_t)n * n;
    sgemm_args g = {cpu_alloc(elems * 4), cpu_alloc(elems * 4), cpu_alloc(elems * 4), n};
    rl_fill_uniform(g.a, elems, -1, 1, rl_next_seed(ctx));
    rl_fill_uniform(g.b, elems, -1, 1, rl_next_seed(ctx));
    rl_band b = rl_measure_trials(ctx, "ceiling: sgemm", sgemm, &g, rl_gemm_flops(n, n, n) / 1e12,
                                  trials);
    free(g.a), free(g.b), free(g.c);
    return b;
}

static const int CPU_GEMM_SIZES[] = {512, 1024, 2048, 0};

/* OpenBLAS's idle workers spin for about 2^28 cycles (a tenth of a second)
 * after each call before they sleep. A group times OpenBLAS calls and
 * OpenMP kernels and probes in turn, sample by sample, so a spinning worker
 * took a core from the next sample: on a 2-core VM, experiment 02's GEMV
 * samples after the library's had a relative spread of 0.3-0.45 (0.15-0.24
 * without the spin), and a compute probe after a large GEMM once ran at a
 * quarter of its rate. The setting that shortens the spin is read when the
 * library loads, before main; so the program runs itself again, once, with
 * OPENBLAS_THREAD_TIMEOUT=4 (2^4 cycles), unless the variable is set. */
void rl_cpu_quiet_blas_workers(char **argv)
{
    if (getenv("OPENBLAS_THREAD_TIMEOUT"))
        return;
    if (setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* no /proc: run on, the workers spinning (the header says so) */
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
    .bandwidth = rl_cpu_bandwidth,
    .gemm = cpu_gemm,
    .fma_peak = rl_cpu_fma_peak,
    .bandwidth_probe = rl_cpu_bandwidth_probe,
    .compute_probe = rl_cpu_compute_probe,
    .probe_release = rl_cpu_probe_release,
    .gemm_sizes = CPU_GEMM_SIZES,
    .gemm_name = "OpenBLAS SGEMM",
};

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
#include <strings.h>

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
 * quarter of its rate. OPENBLAS_THREAD_TIMEOUT=4 (2^4 cycles) shortens the
 * spin. */
static bool quiet_blas_workers(void)
{
    return !getenv("OPENBLAS_THREAD_TIMEOUT") && setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1) == 0;
}

/* OpenBLAS picks its kernels by the CPU model it knows. One it does not
 * know gets the oldest x86-64 kernels: Debian's 0.3.21 took an Emerald
 * Rapids class Xeon (family 6, model 207) for "Prescott" and ran SSE3
 * code, its SGEMM at a quarter of what its own Cooperlake kernels reach
 * there (README.md, "How it measures", has the GEMM's times). The
 * library a user would install on that machine
 * (a newer OpenBLAS) knows it; so when the kernels in use lack AVX2 and
 * the CPU has it, the run asks for the kernels of the CPU's instruction
 * set: Cooperlake (AVX-512 with BF16), SkylakeX (AVX-512) or Haswell
 * (AVX2 and FMA). Only a misdetection is mended: a known CPU keeps what
 * the library chose for it. */
static const char *const AVX2_CORES[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                         "SapphireRapids", "Excavator", NULL};

static const char *blas_core_for_this_cpu(void)
{
#if defined(__x86_64__)
    const char *core = openblas_get_corename();
    for (const char *const *c = AVX2_CORES; core && *c; c++)
        if (!strcasecmp(core, *c))
            return NULL;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#endif
    return NULL;
}

static bool mend_blas_core(void)
{
    const char *core = getenv("OPENBLAS_CORETYPE") ? NULL : blas_core_for_this_cpu();
    if (!core)
        return false;
    /* what the library chose, for the run's header (rl_cpu_blas_note) */
    setenv("ROOFLAB_BLAS_DETECTED", openblas_get_corename(), 1);
    return setenv("OPENBLAS_CORETYPE", core, 1) == 0;
}

/* Both settings are read when the library loads, before main; so the
 * program runs itself again, once, with them in its environment. */
void rl_cpu_prepare_blas(char **argv)
{
    bool again = quiet_blas_workers();
    again |= mend_blas_core();
    if (again)
        execv("/proc/self/exe", argv);
    /* no /proc: run on, as the library chose (the header says so) */
}

static const char *const AVX512_CORES[] = {"SkylakeX", "Cooperlake", "SapphireRapids", NULL};

bool rl_cpu_blas_narrower(char *why, size_t len)
{
#if defined(__x86_64__)
    const char *core = openblas_get_corename();
    __builtin_cpu_init();
    if (!core || !__builtin_cpu_supports("avx512f"))
        return false;
    for (const char *const *c = AVX512_CORES; *c; c++)
        if (!strcasecmp(core, *c))
            return false;
    const char *forced = getenv("OPENBLAS_CORETYPE");
    snprintf(why, len, "OpenBLAS runs its %s kernels%s%s%s, without AVX-512, on a CPU with it: the "
             "library's GEMM cannot reach the compute roof measured with AVX-512", core,
             forced ? " (OPENBLAS_CORETYPE=" : "", forced ? forced : "", forced ? " in the environment)" : "");
    return true;
#else
    (void)why, (void)len;
    return false;
#endif
}

void rl_cpu_blas_note(char *buf, size_t len)
{
    const char *detected = getenv("ROOFLAB_BLAS_DETECTED"), *forced = getenv("OPENBLAS_CORETYPE");
    const char *core = openblas_get_corename();
    if (detected && forced)
        snprintf(buf, len, "OpenBLAS %s kernels (OPENBLAS_CORETYPE=%s: the library took this CPU "
                 "for %s)", core, forced, detected);
    else if (forced)
        snprintf(buf, len, "OpenBLAS %s kernels (OPENBLAS_CORETYPE=%s, given)", core, forced);
    else
        snprintf(buf, len, "OpenBLAS %s kernels (the library's choice)", core);
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

/*
 * ladder_cpu.c -- the CPU backend's ceilings: bandwidth at one working set
 * for each access pattern, and the FP32 FMA peak.
 *
 * A level of cache is only measurable if the fork and join of an OpenMP
 * region do not drown it: an L1-sized pass takes well under a microsecond.
 * So one call runs many passes inside one parallel region, each thread over
 * its own slice (the slices the first touch placed near it), and no barrier
 * between passes. The loops use plain stores, as the suite's kernels do:
 * each written line is read first (write-allocate) in both, so utilization
 * compares like with like.
 */
#include "internal.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
enum { VEC_BYTES = 64 };
#else
enum { VEC_BYTES = 32 };
#endif
typedef double vdouble __attribute__((vector_size(VEC_BYTES)));
typedef float vfloat __attribute__((vector_size(VEC_BYTES)));
enum { DLANES = VEC_BYTES / 8, ACC = 8 }; /* independent sums: hide the add latency */

static volatile double sink; /* results go here, so no pass is optimized away */

/* Software prefetch 4 KiB ahead of every stream: the decode kernels do it
 * (it lifts them above what the hardware prefetchers reach alone:
 * kernels/cpu/quant_dot_avx2.c), and a ceiling must be at least as good as
 * the kernels it judges. */
enum { AHEAD = 4096 / sizeof(double) };
#define PREFETCH_READ(p) __builtin_prefetch((p) + AHEAD, 0)
#define PREFETCH_WRITE(p) __builtin_prefetch((p) + AHEAD, 1)

/* Keeps the compiler from merging or dropping repeated passes. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

typedef struct ladder_args {
    double *a, *b, *c;
    size_t n;        /* doubles per array */
    int passes;      /* per call */
    rl_pattern pattern;
    bool wide;       /* read: the wide loop (read_slice's second form) */
} ladder_args;

/* A read over several interleaved streams per thread: the GEMV kernels
 * read several rows at once, and a core keeps more misses in flight over
 * several streams than over one, so a single stream would be a roof the
 * kernels it judges can beat. Each stream keeps ACC / streams independent
 * sums, to hide the add latency. Two forms, and a read roof is the better
 * of the two, because which is faster depends on the machine: 4 streams
 * with software prefetch (what the decode kernels do), or 8 streams left
 * to the hardware prefetchers (what the F16 GEMV does, 8 rows at once).
 * On one 2-core VM whose DRAM its neighbours kept busy, the GEMV beat the
 * first form by up to 10 % and never the second (git log). */
static inline __attribute__((always_inline)) double read_streams(const double *a, size_t lo,
                                                                 size_t hi, int streams,
                                                                 bool prefetch)
{
    const int per_stream = ACC / streams;
    vdouble acc[ACC] = {{0}};
    size_t len = (hi - lo) / (size_t)streams, step = (size_t)per_stream * DLANES, i = 0;
    for (; i + step <= len; i += step)
        for (int s = 0; s < streams; s++) {
            const double *p = a + lo + (size_t)s * len + i;
            for (int line = 0; prefetch && line < (int)step; line += 8) /* each 64-byte line */
                PREFETCH_READ(p + line);
            for (int j = 0; j < per_stream; j++) {
                vdouble v;
                memcpy(&v, p + j * DLANES, sizeof v);
                acc[s * per_stream + j] += v;
            }
        }
    double sum = 0;
    for (int j = 0; j < ACC; j++)
        for (int l = 0; l < DLANES; l++)
            sum += acc[j][l];
    for (int s = 0; s < streams; s++) /* each stream's tail */
        for (size_t k = lo + (size_t)s * len + i; k < lo + (size_t)(s + 1) * len; k++)
            sum += a[k];
    for (size_t k = lo + (size_t)streams * len; k < hi; k++) /* the slice's tail */
        sum += a[k];
    return sum;
}

static double read_slice(const double *a, size_t lo, size_t hi, bool wide)
{
    return wide ? read_streams(a, lo, hi, 8, false) : read_streams(a, lo, hi, 4, true);
}

/* In cache lines of 8 doubles, each line's streams prefetched ahead, but
 * not past the slice: there another thread's lines are, and a prefetch
 * for writing takes them from its core every pass (at a footprint inside
 * an L1, most of a pass's time). */
static void copy_slice(double *restrict b, const double *restrict a, size_t lo, size_t hi)
{
    size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        if (i + AHEAD < hi) {
            PREFETCH_READ(a + i);
            PREFETCH_WRITE(b + i);
        }
        for (int j = 0; j < 8; j++) /* scaled, so the compiler cannot call memcpy */
            b[i + j] = 1.0000001 * a[i + j];
    }
    for (; i < hi; i++)
        b[i] = 1.0000001 * a[i];
}

static void triad_slice(double *restrict a, const double *restrict b, const double *restrict c,
                        size_t lo, size_t hi)
{
    size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        if (i + AHEAD < hi) { /* as copy_slice */
            PREFETCH_READ(b + i);
            PREFETCH_READ(c + i);
            PREFETCH_WRITE(a + i);
        }
        for (int j = 0; j < 8; j++)
            a[i + j] = b[i + j] + 3.0 * c[i + j];
    }
    for (; i < hi; i++)
        a[i] = b[i] + 3.0 * c[i];
}

static void ladder_call(void *arg)
{
    const ladder_args *x = arg;
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t lo = x->n * (size_t)t / (size_t)nt, hi = x->n * (size_t)(t + 1) / (size_t)nt;
        for (int p = 0; p < x->passes; p++) {
            if (x->pattern == RL_READ)
                total += read_slice(x->a, lo, hi, x->wide);
            else if (x->pattern == RL_COPY)
                copy_slice(x->b, x->a, lo, hi);
            else
                triad_slice(x->a, x->b, x->c, lo, hi);
            BARRIER();
        }
    }
    sink = total;
}

static int arrays_of(rl_pattern p) { return p == RL_READ ? 1 : p == RL_COPY ? 2 : 3; }

/* One buffer per working set, shared by the three patterns (each cuts it
 * into its one, two or three arrays), allocated and first-touched like the
 * backend's device memory: allocating and faulting in a gigabyte three
 * times would cost more than measuring it. */
static double *probe_buf;
static size_t probe_doubles;

static double *probe_buffer(rl_ctx *ctx, size_t doubles)
{
    if (probe_buf && probe_doubles == doubles)
        return probe_buf;
    rl_cpu_ladder_release();
    probe_buf = rl_alloc(ctx->be, doubles * sizeof(double));
    probe_doubles = doubles;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < doubles; i++) /* any values but zeros and denormals */
        probe_buf[i] = 1.0 + (double)(i % 1021) / 1021.0;
    return probe_buf;
}

void rl_cpu_ladder_release(void)
{
    free(probe_buf);
    probe_buf = NULL;
    probe_doubles = 0;
}

/* Doubles of a working set of `bytes`: a whole number of cache lines per
 * array, whichever the pattern, so that the three share one buffer; at
 * least 4 KiB per array, so that a footprint well inside an L1 is
 * measured inside it (the bandwidth curve starts at 16 KiB). */
static size_t working_set_doubles(double bytes)
{
    size_t total = (size_t)(bytes / sizeof(double)) / (3 * 8) * (3 * 8);
    return total < 3 * 512 ? 3 * 512 : total;
}

/* The arrays of one pattern cut from buf; passes enough to move ~64 MiB
 * per call (fork and join become noise), or one. */
static ladder_args ladder_over(double *buf, size_t total, rl_pattern pattern, bool one_pass)
{
    int arrays = arrays_of(pattern);
    ladder_args x = {.n = total / (size_t)arrays, .pattern = pattern};
    x.a = buf;
    x.b = arrays > 1 ? buf + x.n : NULL;
    x.c = arrays > 2 ? buf + 2 * x.n : NULL;
    double bytes_per_pass = (double)arrays * x.n * sizeof(double);
    x.passes = one_pass ? 1 : (int)fmax(1, ceil(64.0 * 1048576 / bytes_per_pass));
    return x;
}

static double ladder_bytes(const ladder_args *x)
{
    return (double)arrays_of(x->pattern) * x->n * sizeof(double) * x->passes;
}

rl_band rl_cpu_bandwidth(rl_ctx *ctx, rl_pattern pattern, double probe_bytes, int trials)
{
    size_t total = working_set_doubles(probe_bytes);
    rl_band better = {.best = -INFINITY};
    for (int wide = 0; wide <= (pattern == RL_READ); wide++) { /* a read: both forms */
        ladder_args x = ladder_over(probe_buffer(ctx, total), total, pattern, false);
        x.wide = wide;
        char name[64];
        snprintf(name, sizeof name, "ceiling: %s over %zu doubles", rl_pattern_name(pattern), x.n);
        rl_band b = rl_measure_trials(ctx, name, ladder_call, &x, ladder_bytes(&x) / 1e9, trials);
        if (b.best > better.best)
            better = b;
    }
    return better;
}

/* ---- probes: the same loops over a group's own working set --------------------
 * Its own buffer, not the ladder's: a rung re-measured while a group runs
 * must not move the probe's memory. */
typedef struct cpu_probe {
    ladder_args x;
    double *buf;
} cpu_probe;

static void probe_call(void *state) { ladder_call(&((cpu_probe *)state)->x); }

bool rl_cpu_bandwidth_probe(rl_ctx *ctx, rl_pattern pattern, double bytes, bool one_pass,
                            bool wide, rl_probe *out)
{
    if (wide && pattern != RL_READ)
        return false;
    size_t total = working_set_doubles(bytes);
    cpu_probe *p = rl_host_alloc(sizeof *p);
    p->buf = rl_alloc(ctx->be, total * sizeof(double));
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < total; i++) /* first touch by the threads that read it */
        p->buf[i] = 1.0 + (double)(i % 1021) / 1021.0;
    p->x = ladder_over(p->buf, total, pattern, one_pass);
    p->x.wide = wide;
    *out = (rl_probe){.name = "roof probe", .run = probe_call, .state = p,
                      .per_call = ladder_bytes(&p->x)};
    return true;
}

/* ---- the FMA peak ------------------------------------------------------------
 * Each thread keeps CHAINS independent vector multiply-adds in flight: with
 * a latency of 4-5 cycles and two FMA units, ten or more keep both busy.
 * acc = acc * m + a converges to a / (1 - m): no overflow, no denormals. */
enum { CHAINS = 12, FMA_ITERS = 1 << 14 };

static inline vfloat fma_vec(vfloat x, vfloat m, vfloat a)
{
#if defined(__AVX512F__)
    return (vfloat)_mm512_fmadd_ps((__m512)x, (__m512)m, (__m512)a);
#elif defined(__FMA__)
    return (vfloat)_mm256_fmadd_ps((__m256)x, (__m256)m, (__m256)a);
#else
    return x * m + a; /* two instructions: the peak of a machine without FMA */
#endif
}

/* arg: the iterations, or NULL for FMA_ITERS. */
static void fma_call(void *arg)
{
    long iters = arg ? *(const long *)arg : FMA_ITERS;
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
        vfloat acc[CHAINS], m = (vfloat){0} + 0.999999f, a = (vfloat){0} + 1e-3f;
        for (int j = 0; j < CHAINS; j++)
            acc[j] = (vfloat){0} + (float)j;
        for (long it = 0; it < iters; it++) {
            for (int j = 0; j < CHAINS; j++)
                acc[j] = fma_vec(acc[j], m, a);
        }
        for (int j = 0; j < CHAINS; j++)
            total += acc[j][0];
    }
    sink = total;
}

static double fma_flops_per_call(long iters)
{
    return 2.0 * CHAINS * (VEC_BYTES / sizeof(float)) * (double)iters * omp_get_max_threads();
}

rl_band rl_cpu_fma_peak(rl_ctx *ctx, int trials)
{
    return rl_measure_trials(ctx, "ceiling: FMA peak", fma_call, NULL,
                             fma_flops_per_call(FMA_ITERS) / 1e12, trials);
}

/* A probe's call runs ~1 ms, as long as the GEMM calls it judges: a 12 us
 * region would pay a fork and a join per 12 us, and wait out a thread
 * that the scheduler set aside for a quantum. */
static const long PROBE_FMA_ITERS = 64L * FMA_ITERS;

bool rl_cpu_compute_probe(rl_ctx *ctx, rl_probe *out)
{
    (void)ctx;
    *out = (rl_probe){.name = "compute probe", .run = fma_call, .state = (void *)&PROBE_FMA_ITERS,
                      .per_call = fma_flops_per_call(PROBE_FMA_ITERS)};
    return true;
}

void rl_cpu_probe_release(rl_ctx *ctx, rl_probe *probe)
{
    if (probe->run == probe_call) {
        cpu_probe *p = probe->state;
        rl_free(ctx->be, p->buf);
        rl_host_free(p);
    }
    *probe = (rl_probe){0};
}

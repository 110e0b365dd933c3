/*
 * matrix.c -- exp-03 --matrix ROWSxK: the decode of one matrix (n = 1, all
 * threads, the run's --cache, hot by default) in every format and with
 * every decode variant, for a side-by-side with ggml's CPU mat-vec:
 *
 *   build/exp-03 --matrix 4096x14336 --cache hot
 *   test-backend-ops perf -o MUL_MAT -b CPU    (m = 4096, k = 14336, n = 1)
 *
 * Each kernel is validated against the double-precision reference (the
 * integer-dot ones within their stated bound), then all are timed together,
 * interleaved. It prints ms per call, GB/s of weights, the speedup over
 * the same run's F16 GEMV, and the fraction of the measured triad and read
 * bandwidths. It writes no results: the model run's CSV is left alone.
 */
#include "exp03.h"
#include "cpu/quant_dot.h"
#include "cpu/simd.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    quant_format f;
    const quant_variant *v;
    quant_args a;
    bool ok;
    double max_err;
    rl_measurement m;
} entry;

enum { MAX_ENTRIES = 64 };

static void launch_entry(void *p)
{
    entry *e = p;
    e->v->launch(&e->a);
}

static void parse_matrix(const char *spec, int *rows, int *k)
{
    char tail;
    if (sscanf(spec, "%dx%d%c", rows, k, &tail) != 2 || *rows < 1 || *k < QUANT_BLOCK ||
        *k % QUANT_BLOCK != 0 || (double)*rows * *k > 4e9)
        rl_die(RL_EXIT_USAGE, "exp-03: --matrix wants ROWSxK with K a multiple of %d (e.g. "
               "4096x14336), not '%s'", QUANT_BLOCK, spec);
}

/* Random halves in [-1, 1), element i from a hash of (seed, i): parallel
 * and the same whatever the thread count, without a float copy of a
 * matrix that may be gigabytes. */
static fp16 *random_halves(rl_ctx *ctx, size_t n)
{
    fp16 *h = rl_host_alloc(n * sizeof(fp16));
    uint64_t seed = rl_next_seed(ctx);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull; /* splitmix64 */
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        h[i] = float_to_fp16((float)(z >> 40) * 0x1p-23f - 1.0f);
    }
    return h;
}

/* ---- the read bandwidth: what a decode could reach ------------------------------ */

typedef struct reader { const float *p; size_t n; double sum; } reader;

/* Four independent vector sums per thread over its contiguous share, the
 * input asked for 4 KiB ahead as the decode kernels do: the loads, not the
 * adds' latency, set the pace (a plain float reduction would not even
 * vectorize without reassociation). */
static void read_all(void *arg)
{
    reader *r = arg;
    size_t blocks = r->n / 32;
    double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (size_t b = 0; b < blocks; b++) {
        const float *p = r->p + 32 * b;
        __builtin_prefetch(p + 1024);
        __builtin_prefetch(p + 1024 + 16);
        v8f s = (v8f_load(p) + v8f_load(p + 8)) + (v8f_load(p + 16) + v8f_load(p + 24));
        total += v8f_sum(s);
    }
    r->sum += total;
}

/* GB/s of a parallel read over 4x the LLC, hot: a read-only stream, as a
 * decode's weights are (the triad also writes, and counts 24 bytes). */
static double read_gbps(rl_ctx *ctx)
{
    size_t n = (size_t)(4 * ctx->dev->llc_bytes / sizeof(float));
    float *p = rl_alloc(ctx->be, n * sizeof(float));
    rl_fill_uniform(p, n, 0, 1, rl_next_seed(ctx));
    reader r = {p, n, 0};
    rl_measurement m = rl_measure_as(ctx, "ceiling: read", read_all, &r, RL_HOT);
    rl_free(ctx->be, p);
    return (double)n * sizeof(float) / m.stats.median / 1e9;
}

/* ---- validate, time, print ---------------------------------------------------------- */

static void validate(rl_ctx *ctx, entry *e, const double *ref, const double *bound)
{
    rl_check c = e->v->quantizes_x
                     ? rl_validate_f32_bound(ctx->be, launch_entry, e, e->a.y, (size_t)e->a.rows, ref, bound)
                     : rl_validate_f32(ctx->be, launch_entry, e, e->a.y, (size_t)e->a.rows, ref,
                                       gemv_atol(e->a.k), 0);
    e->ok = c.ok;
    e->max_err = c.max_abs_err;
    if (!c.ok) {
        char why[256];
        rl_check_describe(&c, why, sizeof why);
        fprintf(stderr, "exp-03: %s %s: %s\n", e->v->name, quant_formats[e->f].name, why);
        ctx->failures++;
    }
}

static void print_entries(const entry *es, int n, int rows, int k, double triad, double read)
{
    double f16 = NAN;
    for (int i = 0; i < n; i++)
        if (es[i].ok && es[i].f == QF_F16)
            f16 = es[i].m.stats.median;
    printf("\n  %-6s %7s  %-13s %9s %9s %9s %7s %7s  %s\n", "format", "bits/w", "variant", "ms/call",
           "GB/s", "x F16", "/triad", "/read", "max |err| (bound: int8)");
    for (int i = 0; i < n; i++) {
        const entry *e = &es[i];
        if (!e->ok) {
            printf("  %-6s %7.4g  %-13s FAILED validation\n", quant_formats[e->f].name,
                   quant_bits_per_weight(e->f), e->v->name);
            continue;
        }
        double s = e->m.stats.median, gbps = quant_row_bytes(e->f, k) * (double)rows / s / 1e9;
        printf("  %-6s %7.4g  %-13s %9.3f %9.1f %8.2fx %7.2f %7.2f  %.2g\n", quant_formats[e->f].name,
               quant_bits_per_weight(e->f), e->v->name, s * 1e3, gbps, f16 / s, gbps / triad,
               gbps / read, e->max_err);
    }
}

int run_matrix(rl_ctx *ctx, const quant_variant *table, const char *spec)
{
    int rows, k;
    parse_matrix(spec, &rows, &k);
    printf("\nmatrix      %d x %d, n = 1, %s, %d threads, integer dot products: %s\n", rows, k,
           ctx->args.cache == RL_HOT ? "hot" : "cold", omp_get_max_threads(),
           quant_isa_name(quant_isa_best()));
    fflush(stdout);
    fp16 *w16 = random_halves(ctx, (size_t)rows * k), *x16 = random_halves(ctx, (size_t)k);
    fp16 *x = rl_alloc(ctx->be, sizeof(fp16) * k);
    rl_upload(ctx->be, x, x16, sizeof(fp16) * k);
    double *ref = rl_host_alloc(sizeof(double) * rows), *bound = rl_host_alloc(sizeof(double) * rows);
    size_t scratch = 0;
    for (const quant_variant *v = table; v->name; v++)
        if (v->phase == QUANT_DECODE && v->launch && v->scratch_bytes &&
            v->scratch_bytes(rows, k, 1) > scratch)
            scratch = v->scratch_bytes(rows, k, 1);
    void *scr = scratch ? rl_alloc(ctx->be, scratch) : NULL;
    float *y = rl_alloc(ctx->be, sizeof(float) * rows);

    entry *es = calloc(MAX_ENTRIES, sizeof *es);
    void *w[QF_COUNT];
    int n = 0;
    for (int f = 0; f < QF_COUNT; f++) {
        size_t bytes = quant_row_bytes((quant_format)f, k) * rows;
        void *enc = f == QF_F16 ? w16 : rl_host_alloc(bytes);
        if (f != QF_F16)
            quant_encode_matrix((quant_format)f, enc, w16, rows, k);
        w[f] = rl_alloc(ctx->be, bytes);
        rl_upload(ctx->be, w[f], enc, bytes);
        quant_reference(ref, (quant_format)f, enc, x16, rows, k, 1, false);
        quant_int8_error_bound(bound, (quant_format)f, enc, x16, rows, k);
        if (f != QF_F16)
            rl_host_free(enc);
        bool f16_done = false; /* F16 is one kernel (gemv_fp16) in every decode variant */
        for (const quant_variant *v = table; v->name && n < MAX_ENTRIES; v++) {
            if (v->phase != QUANT_DECODE || !v->launch || (f == QF_F16 && f16_done) ||
                !rl_variant_selected(ctx, v->number, v->name))
                continue;
            f16_done = true;
            es[n] = (entry){.f = (quant_format)f, .v = v, .a = {(quant_format)f, y, w[f], x, rows, k, 1, scr, rl_stream(ctx->be)}};
            validate(ctx, &es[n++], ref, bound);
        }
    }
    rl_host_free(w16);

    rl_work works[MAX_ENTRIES];
    entry *timed[MAX_ENTRIES];
    rl_measurement out[MAX_ENTRIES];
    int nt = 0;
    for (int i = 0; i < n; i++)
        if (es[i].ok) {
            timed[nt] = &es[i];
            works[nt++] = (rl_work){quant_formats[es[i].f].name, launch_entry, &es[i]};
        }
    rl_progress_step(ctx, "%d kernels interleaved", nt);
    rl_measure_group(ctx, works, nt, out);
    for (int i = 0; i < nt; i++)
        timed[i]->m = out[i];
    rl_progress_clear();
    const rl_ceilings *ceil = rl_ceilings_get(ctx);
    double read = read_gbps(ctx);
    printf("read        %.1f GB/s (a parallel sum over %.0f MiB, hot)\n", read,
           4 * ctx->dev->llc_bytes / 1048576);
    print_entries(es, n, rows, k, ceil->copy_gbps, read);
    double f16_bytes = quant_row_bytes(QF_F16, k) * (double)rows;
    printf("\n  weights: %.0f MiB in F16, %.0f MiB in q4; the last-level cache holds %.0f MiB%s\n",
           f16_bytes / 1048576, f16_bytes * 4.5 / 16 / 1048576, ctx->dev->llc_bytes / 1048576,
           f16_bytes * 2.625 / 16 < 4 * ctx->dev->llc_bytes ? " (some formats run from cache)" : "");

    for (int f = 0; f < QF_COUNT; f++)
        rl_free(ctx->be, w[f]);
    rl_free(ctx->be, x);
    rl_free(ctx->be, y);
    if (scr)
        rl_free(ctx->be, scr);
    rl_host_free(x16);
    rl_host_free(ref);
    rl_host_free(bound);
    free(es);
    return rl_end_discard(ctx);
}

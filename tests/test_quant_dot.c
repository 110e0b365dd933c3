/*
 * test_quant_dot.c -- the integer-dot decode (cpu/quant_dot.h): x's 8-bit
 * quantization within half a step, every format at odd sizes within its
 * stated error bound on both paths (SIMD and portable C), within FP32
 * rounding of the exact dot product with the quantized x, the bound sharp
 * on an adversarial input, and a wrong output caught by it.
 */
#include "cpu/quant_dot.h"
#include "quant_dp4a.h"
#include "gemv.h"
#include "helpers.h"
#include "rooflab.h"
#include "rl_measure.h"

#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fp16 *random_halves(size_t n, float lo, float hi, uint64_t seed)
{
    float *f = rl_host_alloc(n * sizeof(float));
    fp16 *h = rl_host_alloc(n * sizeof(fp16));
    rl_fill_uniform(f, n, lo, hi, seed);
    for (size_t i = 0; i < n; i++)
        h[i] = float_to_fp16(f[i]);
    rl_host_free(f);
    return h;
}

Test(quant_dot, x_is_quantized_within_half_a_step)
{
    enum { K = 4096 };
    fp16 *x = random_halves(K, -3, 3, 7);
    for (int i = 0; i < 32; i++)
        x[64 + i] = 0; /* a group of zeros: scale 0, integers 0 */
    for (int i = 0; i < K; i += 97)
        x[i] = float_to_fp16(fp16_to_float(x[i]) * 1e-3f); /* small values too */
    double *xhat = rl_host_alloc(K * sizeof(double));
    quant_x8_dequantized(xhat, x, K);
    for (int g = 0; g < K / QX_GROUP; g++) {
        int8_t q[QX_GROUP];
        float d = quant_x8_scale(x + QX_GROUP * g), amax = 0;
        quant_x8_group(q, x + QX_GROUP * g, d);
        bool hit = false;
        for (int i = 0; i < QX_GROUP; i++) {
            float v = fp16_to_float(x[QX_GROUP * g + i]);
            amax = fmaxf(amax, fabsf(v));
            cr_assert(q[i] >= -127 && q[i] <= 127, "group %d: q = %d", g, q[i]);
            cr_assert_leq(fabs(v - (double)d * q[i]), d / 2 * (1 + 0x1p-13), "group %d value %d", g, i);
            cr_assert_eq(xhat[QX_GROUP * g + i], (double)d * q[i]);
            hit |= abs(q[i]) == 127;
        }
        cr_assert_eq(d, amax / 127.0f);
        cr_assert(hit || amax == 0, "group %d: the largest value maps to +-127", g);
    }
    rl_host_free(x);
    rl_host_free(xhat);
}

/* ---- every format, both paths, odd sizes ---------------------------------------- */

typedef struct problem {
    quant_format f;
    int rows, k;
    fp16 *x;
    void *w;
    double *ref, *bound, *hat, *fp_tol; /* exact y, its bound, y with x-hat, FP32 part */
} problem;

/* y with x-hat in double, and the FP32 part of the bound on its own: what
 * is left once x's rounding is taken out. */
static void exact_with_xhat(problem *p)
{
    double *xhat = rl_host_alloc(sizeof(double) * p->k);
    quant_x8_dequantized(xhat, p->x, p->k);
    size_t rb = quant_row_bytes(p->f, p->k);
    float w[QUANT_BLOCK], sc[QUANT_BLOCK], mn[QUANT_BLOCK];
    int16_t q[QUANT_BLOCK];
    for (int r = 0; r < p->rows; r++) {
        double y = 0, parts = 0;
        for (int b = 0; b < p->k / QUANT_BLOCK; b++) {
            const char *blk = (const char *)p->w + r * rb + (size_t)b * quant_formats[p->f].block_bytes;
            quant_decode_row(p->f, blk, w, QUANT_BLOCK);
            quant_block_split(p->f, blk, q, sc, mn);
            for (int i = 0; i < QUANT_BLOCK; i++) {
                double xh = xhat[QUANT_BLOCK * b + i];
                y += (double)w[i] * xh;
                parts += (fabs((double)sc[i] * q[i]) + fabs((double)mn[i])) * fabs(xh);
            }
        }
        p->hat[r] = y;
        p->fp_tol[r] = ((double)p->k / 16 + 32) * 0x1p-24 * parts;
    }
    rl_host_free(xhat);
}

/* W from w_seed, x from x_seed: tokens of one batch share their W. */
static problem make_problem_of(quant_format f, int rows, int k, uint64_t w_seed, uint64_t x_seed)
{
    problem p = {f, rows, k, random_halves(k, -1, 1, x_seed), NULL, NULL, NULL, NULL, NULL};
    fp16 *w16 = random_halves((size_t)rows * k, -1, 1, w_seed);
    p.w = rl_host_alloc(quant_row_bytes(f, k) * rows);
    quant_encode_matrix(f, p.w, w16, rows, k);
    rl_host_free(w16);
    p.ref = rl_host_alloc(sizeof(double) * rows);
    p.bound = rl_host_alloc(sizeof(double) * rows);
    p.hat = rl_host_alloc(sizeof(double) * rows);
    p.fp_tol = rl_host_alloc(sizeof(double) * rows);
    quant_reference(p.ref, f, p.w, p.x, rows, k, 1, false);
    quant_int8_error_bound(p.bound, f, p.w, p.x, rows, k);
    exact_with_xhat(&p);
    return p;
}

static problem make_problem(quant_format f, int rows, int k, uint64_t seed)
{
    return make_problem_of(f, rows, k, seed, seed + 1);
}

static void free_problem(problem *p)
{
    rl_host_free(p->x);
    rl_host_free(p->w);
    rl_host_free(p->ref);
    rl_host_free(p->bound);
    rl_host_free(p->hat);
    rl_host_free(p->fp_tol);
}

static float *run_decode(const problem *p, quant_isa isa)
{
    float *y = rl_host_alloc(sizeof(float) * p->rows);
    void *scratch = rl_host_alloc(quant_int8_scratch(p->rows, p->k, 1));
    memset(y, 0xFF, sizeof(float) * p->rows); /* NaN: an unwritten output fails */
    quant_args a = {p->f, y, p->w, p->x, p->rows, p->k, 1, scratch, NULL};
    quant_decode_int8(&a, isa);
    rl_host_free(scratch);
    return y;
}

/* y (rows floats, not freed) against p's exact y and its bound, and
 * against y with x-hat to within FP32 rounding. */
static void check_y(const problem *p, const float *y, const char *what)
{
    rl_check c = rl_compare_f32_bound(y, p->ref, p->bound, (size_t)p->rows);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(c.ok, "%s %s (rows %d, k %d, %d threads): %s", quant_formats[p->f].name, what,
              p->rows, p->k, omp_get_max_threads(), msg);
    for (int r = 0; r < p->rows; r++)
        cr_assert_leq(fabs(y[r] - p->hat[r]), p->fp_tol[r], "%s %s row %d: %.9g vs %.9g (x-hat)",
                      quant_formats[p->f].name, what, r, y[r], p->hat[r]);
}

static void check_problem(const problem *p, quant_isa isa)
{
    float *y = run_decode(p, isa);
    rl_check c = rl_compare_f32_bound(y, p->ref, p->bound, (size_t)p->rows);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(c.ok, "%s on %s (rows %d, k %d, %d threads): %s", quant_formats[p->f].name,
              quant_isa_name(isa), p->rows, p->k, omp_get_max_threads(), msg);
    for (int r = 0; r < p->rows; r++) /* the integer sums are exact: only FP32 rounding is left */
        cr_assert_leq(fabs(y[r] - p->hat[r]), p->fp_tol[r], "%s on %s row %d: %.9g vs %.9g (x-hat)",
                      quant_formats[p->f].name, quant_isa_name(isa), r, y[r], p->hat[r]);
    rl_host_free(y);
}

Test(quant_dot, every_format_within_its_bound_on_both_paths, .timeout = 300)
{
    static const int ROWS[] = {1, 3, 7, 33, 257, 1031}, KS[] = {256, 768, 1280, 4096};
    static const int THREADS[] = {1, 2, 3};
    quant_isa isas[2] = {QUANT_ISA_C, quant_isa_best()};
    int saved = omp_get_max_threads(), checked = 0;
    uint64_t seed = 900;
    for (int f = QF_Q8; f < QF_COUNT; f++)
        for (size_t r = 0; r < sizeof ROWS / sizeof ROWS[0]; r++)
            for (size_t ki = 0; ki < sizeof KS / sizeof KS[0]; ki++) {
                if (ROWS[r] * KS[ki] > 1031 * 1280)
                    continue;
                problem p = make_problem((quant_format)f, ROWS[r], KS[ki], seed += 2);
                for (int i = 0; i < 2; i++) {
                    omp_set_num_threads(THREADS[(r + ki + (size_t)i) % 3]);
                    check_problem(&p, isas[i]);
                    checked++;
                }
                free_problem(&p);
            }
    omp_set_num_threads(saved);
    cr_assert_gt(checked, 150);
}

/* The batch kernel at a few tokens (one tile: the one-token kernel's
 * shape, rows side by side) and past a tile (a row at a time): each
 * token's y within its bound, for every shape the tuner may choose, on
 * row counts with a remainder of each size. */
Test(quant_dot, the_batch_kernel_at_every_shape_and_token_count_within_its_bound,
     .timeout = 300)
{
    if (quant_isa_best() == QUANT_ISA_C)
        cr_skip_test("this build has no SIMD kernels: the batch runs the one-token C kernel");
    enum { K = 1280, MOST = 5 };
    int checked = 0;
    for (int f = QF_Q8; f < QF_COUNT; f++) {
        quant_dot_shape saved = quant_dot_get_shape((quant_format)f);
        for (int rows = 65; rows <= 67; rows++) {
            problem p[MOST];
            fp16 *x = rl_host_alloc(sizeof(fp16) * K * MOST);
            for (int t = 0; t < MOST; t++) {
                p[t] = make_problem_of((quant_format)f, rows, K, 800 + 10 * f + rows,
                                       900 + 10 * t + rows);
                memcpy(x + (size_t)t * K, p[t].x, sizeof(fp16) * K);
            }
            float *y = rl_host_alloc(sizeof(float) * rows * MOST);
            void *scratch = rl_host_alloc(quant_batch_int8_scratch(rows, K, MOST));
            for (const int *r = QUANT_DOT_ROWS; *r >= 0; r++)
                for (int n = 2; n <= MOST; n++) {
                    cr_assert(quant_dot_set_shape((quant_format)f, (quant_dot_shape){*r, 1024}));
                    memset(y, 0xFF, sizeof(float) * rows * MOST); /* NaN: unwritten fails */
                    quant_args a = {(quant_format)f, y, p[0].w, x, rows, K, n, scratch, NULL};
                    quant_batch_int8(&a, quant_isa_best());
                    char what[64];
                    for (int t = 0; t < n; t++, checked++) {
                        snprintf(what, sizeof what, "batch of %d, token %d, %d rows a step", n, t, *r);
                        check_y(&p[t], y + (size_t)t * rows, what);
                    }
                }
            for (int t = 0; t < MOST; t++)
                free_problem(&p[t]);
            rl_host_free(x);
            rl_host_free(y);
            rl_host_free(scratch);
        }
        cr_assert(quant_dot_set_shape((quant_format)f, saved));
    }
    cr_assert_eq(checked, 5 * 3 * 3 * (2 + 3 + 4 + 5));
}

/* Every shape the tuner may choose (rows side by side, prefetch distance)
 * decodes within the bound, on row counts with a remainder of each size;
 * setting the default back restores the kernel the others use. */
Test(quant_dot, every_candidate_shape_within_its_bound, .timeout = 300)
{
    if (quant_isa_best() == QUANT_ISA_C) {
        cr_assert_not(quant_dot_set_shape(QF_Q4, (quant_dot_shape){1, 0}));
        cr_skip_test("this build has no SIMD kernels: no shapes to choose");
    }
    int shapes = 0;
    for (int f = QF_Q8; f < QF_COUNT; f++) {
        quant_dot_shape saved = quant_dot_get_shape((quant_format)f);
        cr_assert_eq(saved.rows, quant_dot_shape_default((quant_format)f).rows);
        for (int n = 65; n <= 67; n++) {
            problem p = make_problem((quant_format)f, n, 1280, 700 + 10 * f + n);
            for (const int *r = QUANT_DOT_ROWS; *r >= 0; r++)
                for (const int *d = QUANT_DOT_PREFETCH; *d >= 0; d++) {
                    cr_assert(quant_dot_set_shape((quant_format)f, (quant_dot_shape){*r, *d}));
                    cr_assert_eq(quant_dot_get_shape((quant_format)f).rows, *r);
                    check_problem(&p, quant_isa_best());
                    shapes++;
                }
            free_problem(&p);
        }
        cr_assert(quant_dot_set_shape((quant_format)f, saved));
    }
    cr_assert_not(quant_dot_set_shape(QF_Q4, (quant_dot_shape){3, 0}), "3 rows is no candidate");
    cr_assert_not(quant_dot_set_shape(QF_F16, (quant_dot_shape){1, 0}), "F16 has no integer kernel");
    cr_assert_eq(shapes, 5 * 3 * 9);
}

/* The two paths compute the same integer sums in another order: they agree
 * to the FP32 part of the bound, on matrices of every bit pattern the
 * encoders write, scaled small and large. */
Test(quant_dot, simd_and_portable_paths_agree)
{
    if (quant_isa_best() == QUANT_ISA_C)
        cr_skip_test("this build has no SIMD kernels");
    for (int f = QF_Q8; f < QF_COUNT; f++) {
        problem p = make_problem((quant_format)f, 67, 2048, 40 + f);
        float *a = run_decode(&p, QUANT_ISA_C), *b = run_decode(&p, quant_isa_best());
        for (int r = 0; r < p.rows; r++)
            cr_assert_leq(fabs(a[r] - b[r]), 2 * p.fp_tol[r], "%s row %d: %.9g vs %.9g",
                          quant_formats[f].name, r, a[r], b[r]);
        rl_host_free(a);
        rl_host_free(b);
        free_problem(&p);
    }
}

/* Every row of quant.c that quantizes x runs this decode on the CPU: its
 * launcher, with the scratch it asks for, within the bound (the experiment
 * validates those rows so). */
Test(quant_dot, the_tables_integer_rows_stay_within_the_bound)
{
    int rows = 0;
    for (const quant_variant *v = quant_variants; v->name; v++) {
        if (!v->quantizes_x || !quant_family.has(v, KERNEL_CPU))
            continue;
        rows++;
        for (int f = QF_Q8; f < QF_COUNT; f++) {
            problem p = make_problem((quant_format)f, 37, 768, 60 + f);
            float *y = rl_host_alloc(sizeof(float) * p.rows);
            void *scratch = rl_host_alloc(quant_scratch(v, KERNEL_CPU, p.rows, p.k, 1));
            memset(y, 0xFF, sizeof(float) * p.rows);
            quant_args a = {p.f, y, p.w, p.x, p.rows, p.k, 1, scratch, NULL};
            quant_launcher(v, KERNEL_CPU)(&a);
            rl_check c = rl_compare_f32_bound(y, p.ref, p.bound, (size_t)p.rows);
            cr_assert(c.ok, "%s, %s: %zu outputs out of bounds", v->name, quant_formats[f].name, c.bad);
            rl_host_free(y);
            rl_host_free(scratch);
            free_problem(&p);
        }
    }
    cr_assert_geq(rows, 1, "the table has an integer-dot decode");
}

/* ---- the bound: sharp, and it catches wrong outputs ---------------------------- */

/* Weights all +1 (q8), x in every group at +-1 (the scale: d = 1/127) and
 * otherwise just below half a step past a level, all the same way: x's
 * rounding errors all add up. The measured error must reach most of the
 * bound, and stay under it. */
Test(quant_dot, the_bound_is_sharp_on_an_adversarial_x)
{
    enum { K = 2048, ROWS = 5 };
    float *wf = rl_host_alloc(sizeof(float) * K * ROWS);
    fp16 *x = rl_host_alloc(sizeof(fp16) * K);
    for (int i = 0; i < K * ROWS; i++)
        wf[i] = 1;
    for (int i = 0; i < K; i++) {
        float step = 1.0f / 127;
        x[i] = float_to_fp16(i % QX_GROUP == 0 ? 1.0f : ((i * 7) % 50 + 0.47f) * step);
    }
    void *w = rl_host_alloc(quant_row_bytes(QF_Q8, K) * ROWS);
    for (int r = 0; r < ROWS; r++)
        quant_encode_row(QF_Q8, (char *)w + r * quant_row_bytes(QF_Q8, K), wf + (size_t)r * K, K);
    double ref[ROWS], bound[ROWS];
    quant_reference(ref, QF_Q8, w, x, ROWS, K, 1, false);
    quant_int8_error_bound(bound, QF_Q8, w, x, ROWS, K);
    problem p = {QF_Q8, ROWS, K, x, w, NULL, NULL, NULL, NULL};
    float *y = run_decode(&p, quant_isa_best());
    for (int r = 0; r < ROWS; r++) {
        double err = fabs(y[r] - ref[r]);
        cr_assert_leq(err, bound[r], "row %d: error %g, bound %g", r, err, bound[r]);
        cr_assert_geq(err, 0.85 * bound[r], "row %d: error %g, only %.2f of the bound", r, err, err / bound[r]);
    }
    rl_host_free(y);
    rl_host_free(wf);
    rl_host_free(x);
    rl_host_free(w);
}

Test(quant_dot, the_bound_catches_a_wrong_or_unwritten_output)
{
    problem p = make_problem(QF_Q4, 100, 1024, 77);
    float *y = run_decode(&p, quant_isa_best());
    cr_assert(rl_compare_f32_bound(y, p.ref, p.bound, 100).ok);
    float saved = y[42];
    y[42] = (float)(p.ref[42] + 1.01 * p.bound[42]);
    rl_check c = rl_compare_f32_bound(y, p.ref, p.bound, 100);
    cr_assert(!c.ok && c.bad == 1 && c.first_bad == 42);
    y[42] = saved;
    memset(&y[99], 0xFF, sizeof(float)); /* the poison a kernel left */
    c = rl_compare_f32_bound(y, p.ref, p.bound, 100);
    cr_assert(!c.ok && c.nonfinite == 1 && c.first_bad == 99);
    rl_host_free(y);
    free_problem(&p);
}

Test(quant_dot, the_isa_is_what_the_build_targets)
{
    quant_isa best = quant_isa_best();
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    cr_assert_eq(best, QUANT_ISA_AVX512VNNI);
#elif defined(__AVXVNNI__)
    cr_assert_eq(best, QUANT_ISA_AVXVNNI);
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
    cr_assert_eq(best, QUANT_ISA_AVX2);
#else
    cr_assert_eq(best, QUANT_ISA_C);
#endif
    for (int f = QF_Q8; f < QF_COUNT; f++) {
        cr_assert_not_null(quant_dot_c((quant_format)f));
        cr_assert_eq(quant_dot_simd((quant_format)f) != NULL, best != QUANT_ISA_C);
    }
    cr_assert_null(quant_dot_c(QF_F16));
    cr_assert_str_eq(quant_isa_name(QUANT_ISA_AVX2), "avx2");
}

/* ---- the GPU's dp4a decode, lane by lane, on the host (quant_dp4a.h) ------------- */

/* Each format's lane functions unpack the same integers quant_block_split
 * names: the 32 lanes' shares of a block add up to the exact dot product
 * of the decoded weights with the quantized x, to FP32 rounding. Checked
 * here because the bit tricks (nibble spreads, byte permutes) are the same
 * code on the GPU, where nothing can be debugged in a lease of minutes. */
Test(quant_dot, the_gpu_lanes_unpack_every_format_exactly)
{
    enum { BLOCKS = 64, K = QUANT_BLOCK * BLOCKS };
    for (int f = QF_Q8; f < QF_COUNT; f++) {
        fp16 *w16 = random_halves(K, -1, 1, 900 + f), *x = random_halves(K, -2, 2, 950 + f);
        size_t bb = (size_t)quant_formats[f].block_bytes;
        unsigned char *w = rl_host_alloc(bb * BLOCKS);
        float *wf = rl_host_alloc(K * sizeof(float));
        for (int i = 0; i < K; i++)
            wf[i] = fp16_to_float(w16[i]);
        quant_encode_row((quant_format)f, w, wf, K);
        double worst = 0;
        for (int b = 0; b < BLOCKS; b++) {
            const void *block = w + bb * b;
            int16_t q[QUANT_BLOCK];
            float scale[QUANT_BLOCK], offset[QUANT_BLOCK];
            quant_block_split((quant_format)f, block, q, scale, offset);
            int8_t xq[QUANT_BLOCK];
            float dx[QUANT_BLOCK / QX_GROUP];
            for (int g = 0; g < QUANT_BLOCK / QX_GROUP; g++) {
                dx[g] = quant_x8_scale(x + QUANT_BLOCK * b + QX_GROUP * g);
                quant_x8_group(xq + QX_GROUP * g, x + QUANT_BLOCK * b + QX_GROUP * g, dx[g]);
            }
            double exact = 0, size = 0, lanes = 0;
            for (int i = 0; i < QUANT_BLOCK; i++) {
                double t = ((double)scale[i] * q[i] - offset[i]) * dx[i / QX_GROUP] * xq[i];
                exact += t, size += fabs(t);
            }
            for (int l = 0; l < 32; l++) {
                uint32_t x0, x1;
                memcpy(&x0, xq + 8 * l, 4);
                memcpy(&x1, xq + 8 * l + 4, 4);
                quant_x_lane xl = quant_x_lane_make(x0, x1, dx[l / 4]);
                float dot = quant_lane_dot((quant_format)f, block, l, &xl);
                /* as the kernel reads x back from shared memory: the same bits */
                bool natural = f == QF_Q8;
                quant_x_lane back = quant_x_words_lane(quant_x_words_pack(&xl, natural), natural);
                cr_assert_eq(quant_lane_dot((quant_format)f, block, l, &back), dot, "%s lane %d: x's words",
                             quant_formats[f].name, l);
                lanes += dot;
            }
            cr_assert_leq(fabs(lanes - exact), 1e-5 * size + 1e-30, "%s block %d: lanes %.9g, exact %.9g",
                          quant_formats[f].name, b, lanes, exact);
            worst = fmax(worst, fabs(lanes - exact) / (size + 1e-30));
        }
        cr_log_info("%s: worst |lanes - exact| / sum |terms| = %.2g", quant_formats[f].name, worst);
        rl_host_free(w16), rl_host_free(x), rl_host_free(w), rl_host_free(wf);
    }
}

/* The byte tools behave as CUDA's __dp4a and __byte_perm (their host
 * stand-ins are what the test above ran). */
Test(quant_dot, the_host_dp4a_and_prmt_are_cudas)
{
    cr_assert_eq(rl_dp4a(0x807f01ffu, 0x02ff7f01u, 5), 5 + (-1 * 1) + (1 * 127) + (127 * -1) + (-128 * 2));
    cr_assert_eq(rl_prmt(0x33221100u, 0x77665544u, 0x6420u), 0x66442200u);
    cr_assert_eq(rl_prmt(0x33221100u, 0x77665544u, 0x7531u), 0x77553311u);
    cr_assert_eq(quant_spread_nibbles(0x3210u), 0x03020100u);
    cr_assert_eq(quant_spread_bits_to_bit4(0xffu), 0x10101010u);
    cr_assert_eq(quant_spread_bits_to_bit4(0x04u), 0x00001000u);
}

/* x's 8-bit rounding needs no clamp to +-127 (the GPU has none, the CPU's
 * is a no-op): a group's largest |x| is a half, its scale d = amax / 127,
 * and amax (1 / d) rounds to 127 at most, for every positive half; any
 * other value of the group is smaller and rounds no further. Exhaustive. */
Test(quant_dot, the_largest_x_rounds_to_127_at_most_for_every_half)
{
    int checked = 0;
    for (unsigned h = 1; h < 0x7c00u; h++) { /* every positive finite half */
        volatile float amax = fp16_to_float((fp16)h), d = amax / 127.0f, id = 1.0f / d;
        volatile float r = amax * id;
        cr_assert_leq(nearbyintf(r), 127.0f, "half %#x: %.9g rounds to %g", h, (double)r, (double)nearbyintf(r));
        checked++;
    }
    cr_assert_eq(checked, 0x7bff);
}

/* The dp4a decode's launch shape (quant_dp4a_warps_per_block): a short
 * matrix spreads over every SM, a long one keeps blocks of 16 warps (each
 * block quantizes all of x), and the blocks always cover every row. */
Test(quant_dot, a_short_matrix_spreads_over_every_sm)
{
    /* an H200: the 1024-row k and v projections were 64 blocks of 16 warps */
    cr_assert_eq(quant_dp4a_warps_per_block(1024, 1, 132), 4, "256 blocks of 4 warps");
    cr_assert_eq(quant_dp4a_warps_per_block(4096, 1, 132), 16, "256 blocks: every SM has one");
    cr_assert_eq(quant_dp4a_warps_per_block(14336, 2, 132), 16);
    cr_assert_eq(quant_dp4a_warps_per_block(128256, 2, 132), 16);
    cr_assert_eq(quant_dp4a_warps_per_block(1024, 1, 108), 8, "an A100: 128 blocks of 8");
    cr_assert_eq(quant_dp4a_warps_per_block(1, 1, 132), QUANT_DP4A_MIN_WARPS, "never below 2 warps");
    static const int ROWS[] = {1, 3, 33, 257, 1024, 2048, 4096, 8192, 14336, 128256};
    static const int SMS[] = {1, 40, 108, 132, 170};
    for (size_t r = 0; r < sizeof ROWS / sizeof ROWS[0]; r++)
        for (size_t s = 0; s < sizeof SMS / sizeof SMS[0]; s++)
            for (int per = 1; per <= 2; per++) {
                long long warps = (ROWS[r] + per - 1) / per;
                int w = quant_dp4a_warps_per_block(ROWS[r], per, SMS[s]);
                long long blocks = (warps + w - 1) / w;
                cr_assert(w >= QUANT_DP4A_MIN_WARPS && w <= QUANT_DP4A_MAX_WARPS && (w & (w - 1)) == 0,
                          "%d warps", w);
                cr_assert_geq(blocks * w * per, ROWS[r], "every row has a warp");
                /* below 16 warps only to reach every SM, and no further than that */
                cr_assert(w == QUANT_DP4A_MAX_WARPS || (warps + 2 * w - 1) / (2 * w) < SMS[s],
                          "%d rows on %d SMs: %d warps where %d reached every SM", ROWS[r], SMS[s], w, 2 * w);
                cr_assert(w == QUANT_DP4A_MIN_WARPS || blocks >= SMS[s] || w == QUANT_DP4A_MAX_WARPS,
                          "%d rows on %d SMs: %lld blocks of %d leave SMs idle", ROWS[r], SMS[s], blocks, w);
            }
}

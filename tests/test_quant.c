/*
 * test_quant.c -- experiment 03's formats and kernels: bits per weight
 * exactly ggml's, round trips within each format's step, decoding by hand
 * on known blocks, and every kernel against the double-precision reference
 * (the CUDA suite skips without a GPU).
 */
#include "quant.h"
#include "quant_dp4a.h"
#include "cpu/quant_dot.h"
#include "helpers.h"
#include "rooflab.h"
#include "rl_backend.h"
#include "rl_measure.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double GGML_BITS[QF_COUNT] = {16, 8.5, 6.5625, 5.5, 4.5, 2.625};

Test(quant, bits_per_weight_are_ggmls_exactly)
{
    for (int f = 0; f < QF_COUNT; f++) {
        cr_assert_eq(quant_formats[f].id, f);
        cr_assert_eq(quant_bits_per_weight((quant_format)f), GGML_BITS[f], "%s: %g bits",
                     quant_formats[f].name, quant_bits_per_weight((quant_format)f));
        cr_assert_eq(quant_row_bytes((quant_format)f, 4096) * 8, (size_t)(GGML_BITS[f] * 4096));
        cr_assert_eq(quant_format_by_name(quant_formats[f].name), f);
    }
    cr_assert_eq(sizeof(q4_block), 144);
    cr_assert_eq(sizeof(q6_block), 210);
    cr_assert_eq(sizeof(q2_block), 84);
    cr_assert_eq(quant_format_by_name("Q4"), QF_Q4);
    cr_assert_eq(quant_format_by_name("q3"), QF_COUNT);
    cr_assert_eq(quant_format_by_name("q"), QF_COUNT);
    /* every format together: 16 + 8.5 + 6.5625 + 5.5 + 4.5 + 2.625 bits per weight */
    cr_assert_eq(quant_bytes_all_formats(4096), 4096 * 43.6875 / 8);
}

/* Hand-built blocks: the decoders read the layout the header documents. */
Test(quant, decoders_read_the_documented_layout)
{
    float w[8];
    q4_block q4 = {0};
    q4.d[1] = float_to_fp16(0.5f);
    q4.qs[5] = 0x76543210u; /* lane 5: sub-block 1, nibbles 0..7 */
    q4_decode8(&q4, 5, w);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(w[i], 0.5f * (i - 8), "q4 weight %d: %g", i, w[i]);

    q8_block q8 = {0};
    q8.d[0] = float_to_fp16(0.25f);
    q8.qs[2] = 0x81ff7f0201000000ull; /* bytes 0, 0, 0, 1, 2, 127, -1, -127 */
    const int want8[8] = {0, 0, 0, 1, 2, 127, -1, -127};
    q8_decode8(&q8, 2, w);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(w[i], 0.25f * want8[i], "q8 weight %d", i);

    q5_block q5 = {0};
    q5.d[7] = float_to_fp16(2.0f);
    q5.qs[31] = 0xfedcba98u;
    q5.qh[31] = 0x0f; /* the first four get the fifth bit */
    q5_decode8(&q5, 31, w);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(w[i], 2.0f * ((8 + i) + (i < 4 ? 16 : 0) - 16), "q5 weight %d", i);

    q6_block q6 = {0};
    q6.d = float_to_fp16(0.125f);
    q6.s[3] = -3; /* lanes 6 and 7 */
    q6.ql[14] = 0x3210, q6.ql[15] = 0x7654;
    q6.qh[7] = 0xffff; /* high bits 3: q = 48 + i */
    q6_decode8(&q6, 7, w);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(w[i], 0.125f * -3 * (48 + i - 32), "q6 weight %d", i);

    q2_block q2 = {0};
    q2.d = float_to_fp16(0.5f), q2.dmin = float_to_fp16(0.25f);
    q2.sm[4] = 3 | 2 << 4; /* scale 3, min 2: lanes 8 and 9 */
    q2.qs[9] = 0xe4e4;     /* 0, 1, 2, 3, 0, 1, 2, 3 */
    q2_decode8(&q2, 9, w);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(w[i], 0.5f * 3 * (i % 4) - 0.25f * 2, "q2 weight %d", i);
}

/* Round trips on random weights: every weight within its block's step
 * (the clamp at the far end of the symmetric formats costs at most one
 * step), and the RMS error near what uniform rounding predicts. */
static double round_trip_rms(quant_format f, const float *x, int k, int rows, double *worst_in_steps)
{
    size_t rb = quant_row_bytes(f, k);
    char *enc = malloc(rb * rows);
    float *dec = malloc(sizeof(float) * k);
    double se = 0, sx = 0;
    *worst_in_steps = 0;
    for (int r = 0; r < rows; r++) {
        quant_encode_row(f, enc + r * rb, x + (size_t)r * k, k);
        quant_decode_row(f, enc + r * rb, dec, k);
        for (int i = 0; i < k; i += 16) { /* sub-blocks of 16: step = the largest gap */
            double step = 0, lo = INFINITY, hi = -INFINITY;
            for (int j = i; j < i + 16; j++) {
                lo = fmin(lo, dec[j]);
                hi = fmax(hi, dec[j]);
            }
            (void)lo, (void)hi;
            for (int j = i; j < i + 16; j++)
                for (int m = i; m < i + 16; m++)
                    if (dec[m] != dec[j])
                        step = step == 0 ? fabs(dec[m] - dec[j]) : fmin(step, fabs(dec[m] - dec[j]));
            for (int j = i; j < i + 16; j++) {
                double e = fabs(dec[j] - x[(size_t)r * k + j]);
                se += e * e;
                sx += (double)x[(size_t)r * k + j] * x[(size_t)r * k + j];
                if (step > 0)
                    *worst_in_steps = fmax(*worst_in_steps, e / step);
            }
        }
    }
    free(enc);
    free(dec);
    return sqrt(se / sx);
}

Test(quant, round_trips_stay_within_one_step)
{
    enum { K = 4096, ROWS = 8 };
    float *x = malloc(sizeof(float) * K * ROWS);
    rl_fill_uniform(x, (size_t)K * ROWS, -1, 1, 11);
    for (int i = 0; i < K * ROWS; i += 977)
        x[i] *= 0.01f; /* some small weights too */
    /* Uniform rounding error is step / sqrt(12); for U(-1, 1) data (RMS
     * 1/sqrt(3)) the relative RMS error is about step / 2. Steps: q8 1/127,
     * q6 1/32 of the sub-block's max, q5 1/16, q4 1/8, q2 a third of the range.
     * F16's step is 2^-10 of the value's power of two: for U(0, 1) the mean
     * squared step is 2^-20 / 7, so the relative error is 2^-10 sqrt(3 / 84). */
    const double predicted[QF_COUNT] = {0x1p-10 * 0.18898, 0.5 / 127, 0.5 / 32, 0.5 / 16, 0.5 / 8, 0.5 * 2 / 3};
    double prev = 0;
    for (int f = 0; f < QF_COUNT; f++) {
        double worst, rms = round_trip_rms((quant_format)f, x, K, ROWS, &worst);
        cr_assert(rms < 1.3 * predicted[f] && rms > 0.5 * predicted[f],
                  "%s: relative RMS error %.3g, predicted ~%.3g", quant_formats[f].name, rms,
                  predicted[f]);
        cr_assert(rms > prev, "%s: fewer bits, more error", quant_formats[f].name);
        prev = rms;
        /* One step: the clamp of the value opposite the largest, plus the
         * FP16 rounding of the scale (2^-11 of 32 levels). q2 is asymmetric. */
        if (f != QF_F16 && f != QF_Q2)
            cr_assert(worst <= 1.02, "%s: an error of %.3f steps", quant_formats[f].name, worst);
    }
    free(x);
}

/* Zeros come back as zeros; a constant comes back within the precision of
 * an FP16 scale (the formats round their scales to FP16). */
Test(quant, zeros_and_constants_come_back)
{
    float x[QUANT_BLOCK], y[QUANT_BLOCK];
    unsigned char buf[512];
    for (int f = 0; f < QF_COUNT; f++) {
        for (int c = 0; c < 2; c++) {
            for (int i = 0; i < QUANT_BLOCK; i++)
                x[i] = c ? -0.375f : 0.0f;
            memset(buf, 0xA5, sizeof buf); /* garbage the encoder must overwrite */
            quant_encode_row((quant_format)f, buf, x, QUANT_BLOCK);
            quant_decode_row((quant_format)f, buf, y, QUANT_BLOCK);
            for (int i = 0; i < QUANT_BLOCK; i++)
                cr_assert(fabsf(y[i] - x[i]) <= 0.375f / 1024, "%s: %g -> %g",
                          quant_formats[f].name, x[i], y[i]);
        }
    }
}

/* The CPU kernels' vector decoders give the shared decoders' floats, bit
 * for bit, on any bytes at all (random blocks: every bit pattern of the
 * scales and integers), not only on what the encoders write. */
Test(quant, cpu_vector_decoders_match_the_shared_ones)
{
    enum { K = 4096 };
    unsigned char *row = malloc(quant_row_bytes(QF_F16, K));
    float *a = malloc(sizeof(float) * K), *b = malloc(sizeof(float) * K);
    uint64_t z = 12345;
    for (int trial = 0; trial < 50; trial++)
        for (int f = 0; f < QF_COUNT; f++) {
            size_t bytes = quant_row_bytes((quant_format)f, K);
            for (size_t i = 0; i < bytes; i++) { /* xorshift: cheap random bytes */
                z ^= z << 13, z ^= z >> 7, z ^= z << 17;
                row[i] = (unsigned char)(z >> 24);
            }
            quant_decode_row((quant_format)f, row, a, K);
            quant_decode_row_cpu((quant_format)f, row, b, K);
            for (int i = 0; i < K; i++)
                cr_assert((isnan(a[i]) && isnan(b[i])) || memcmp(&a[i], &b[i], 4) == 0,
                          "%s weight %d: %a vs %a", quant_formats[f].name, i, a[i], b[i]);
        }
    free(row);
    free(a);
    free(b);
}

/* ---- kernels against the reference ---------------------------------------- */

typedef struct job { quant_launcher_fn launch; quant_args a; } job;

/* quant.cu's dp4a decode loads the scales of a group of
 * QUANT_GROUP_BLOCKS blocks (q8, q5, q4: eight FP16 scales each) with one
 * 2-byte load a lane, and each lane takes its own from another lane with a
 * shuffle. Every scale of the group is loaded by exactly one lane, and lane
 * l at block u gets d[l / 4] of block u: the words without their scale plus
 * the scale so passed are the lane as loaded whole, in every format that
 * takes this path. */
Test(quant, a_groups_scales_reach_every_lane_of_every_block)
{
    bool loaded[QUANT_GROUP_BLOCKS][8] = {{false}};
    for (int l = 0; l < 32; l++) {
        int b = quant_group_scale_block(l), i = quant_group_scale_index(l);
        cr_assert(b >= 0 && b < QUANT_GROUP_BLOCKS && i >= 0 && i < 8, "lane %d: block %d, scale %d", l, b, i);
        cr_assert_not(loaded[b][i], "block %d's scale %d loaded twice", b, i);
        loaded[b][i] = true;
    }
    for (int u = 0; u < QUANT_GROUP_BLOCKS; u++)
        for (int l = 0; l < 32; l++) {
            int s = quant_group_scale_source(u, l);
            cr_assert(s >= 0 && s < 32, "block %d lane %d: lane %d", u, l, s);
            cr_assert(quant_group_scale_block(s) == u && quant_group_scale_index(s) == l / 4,
                      "block %d lane %d: lane %d holds block %d's d[%d], not d[%d]", u, l, s,
                      quant_group_scale_block(s), quant_group_scale_index(s), l / 4);
        }

    enum { K = QUANT_BLOCK * QUANT_GROUP_BLOCKS };
    float wf[K];
    rl_fill_uniform(wf, K, -1, 1, 77);
    static const quant_format GROUPED[] = {QF_Q8, QF_Q5, QF_Q4};
    for (size_t fi = 0; fi < sizeof GROUPED / sizeof GROUPED[0]; fi++) {
        quant_format f = GROUPED[fi];
        _Alignas(16) unsigned char w[K * 2];
        quant_encode_row(f, w, wf, K);
        size_t bb = (size_t)quant_formats[f].block_bytes;
        uint32_t held[32]; /* what each lane loads: the kernel's d[r] */
        for (int l = 0; l < 32; l++) {
            const fp16 *d = (const fp16 *)(w + bb * quant_group_scale_block(l)); /* d[8] leads the block */
            held[l] = d[quant_group_scale_index(l)];
        }
        for (int u = 0; u < QUANT_GROUP_BLOCKS; u++)
            for (int l = 0; l < 32; l++) {
                fp16 d = (fp16)held[quant_group_scale_source(u, l)];
                const void *block = w + bb * u;
                bool same;
                if (f == QF_Q8) {
                    q8_lane a = q8_lane_words(block, l), b = q8_lane_load(block, l);
                    same = a.lo == b.lo && a.hi == b.hi && a.d == 0 && d == b.d;
                } else if (f == QF_Q5) {
                    q5_lane a = q5_lane_words(block, l), b = q5_lane_load(block, l);
                    same = a.q == b.q && a.h == b.h && a.d == 0 && d == b.d;
                } else {
                    q4_lane a = q4_lane_words(block, l), b = q4_lane_load(block, l);
                    same = a.q == b.q && a.d == 0 && d == b.d;
                }
                cr_assert(same, "%s block %d lane %d", quant_formats[f].name, u, l);
            }
    }
}

static void launch(void *p)
{
    job *j = p;
    j->launch(&j->a);
}

static fp16 *random_halves(size_t n, uint64_t seed)
{
    float *f = rl_host_alloc(n * sizeof(float));
    fp16 *h = rl_host_alloc(n * sizeof(fp16));
    rl_fill_uniform(f, n, -1, 1, seed);
    for (size_t i = 0; i < n; i++)
        h[i] = float_to_fp16(f[i]);
    rl_host_free(f);
    return h;
}

/* One variant in one format on one backend: its own launcher, scratch and
 * FP16 rounding there. */
static void check_kernel(rl_backend *be, const quant_variant *v, quant_format f, int rows, int k,
                         int n, uint64_t seed)
{
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    size_t wbytes = quant_row_bytes(f, k) * rows, xn = (size_t)n * k, yn = (size_t)n * rows;
    fp16 *w16 = random_halves((size_t)rows * k, seed), *x = random_halves(xn, seed + 1);
    void *w = rl_host_alloc(wbytes);
    quant_encode_matrix(f, w, w16, rows, k);
    double *want = rl_host_alloc(yn * sizeof(double));
    quant_reference(want, f, w, x, rows, k, n, quant_rounds_to_fp16(v, backend));

    size_t scratch = quant_scratch(v, backend, rows, k, n);
    job j = {quant_launcher(v, backend), {f, rl_alloc(be, yn * 4), rl_alloc(be, wbytes), rl_alloc(be, xn * 2), rows, k, n,
                                          scratch ? rl_alloc(be, scratch) : NULL, rl_stream(be)}};
    rl_upload(be, (void *)j.a.w, w, wbytes);
    rl_upload(be, (void *)j.a.x, x, xn * 2);
    rl_check c;
    if (v->quantizes_x) { /* x rounded to 8 bits: its own bound, output by output */
        double *bound = rl_host_alloc(yn * sizeof(double));
        for (int t = 0; t < n; t++) /* each token's x is rounded on its own */
            quant_int8_error_bound(bound + (size_t)t * rows, f, w, x + (size_t)t * k, rows, k);
        c = rl_validate_f32_bound(be, launch, &j, j.a.y, yn, want, bound);
        rl_host_free(bound);
    } else {
        c = rl_validate_f32(be, launch, &j, j.a.y, yn, want, gemv_atol(k), 0);
    }
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(c.ok, "%s %s, %s (rows %d, k %d, n %d): %s", rl_backend_name(rl_kind(be)), v->name,
              quant_formats[f].name, rows, k, n, msg);
    rl_free(be, j.a.y);
    rl_free(be, (void *)j.a.w);
    rl_free(be, (void *)j.a.x);
    rl_free(be, j.a.scratch);
    rl_host_free(w16);
    rl_host_free(x);
    rl_host_free(w);
    rl_host_free(want);
}

/* Every row the backend has, in every format. */
static void check_table(rl_backend *be)
{
    static const int ROWS[] = {1, 3, 33, 257, 8193}, KS[] = {256, 768, 4096}, PREFILL_N[] = {1, 7, 64};
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    uint64_t seed = 300;
    int checked = 0;
    for (const quant_variant *v = quant_variants; v->name; v++)
        for (int f = 0; f < QF_COUNT && quant_family.has(v, backend); f++)
            for (size_t r = 0; r < sizeof ROWS / sizeof ROWS[0]; r++)
                for (size_t ki = 0; ki < sizeof KS / sizeof KS[0]; ki++) {
                    if (ROWS[r] * (size_t)KS[ki] > (1u << 22))
                        continue; /* the big row count only with a short k */
                    for (size_t t = 0; t < 3; t++) {
                        int n = v->phase == QUANT_DECODE ? 1 : PREFILL_N[t];
                        check_kernel(be, v, (quant_format)f, ROWS[r], KS[ki], n, seed += 2);
                        checked++;
                        if (v->phase == QUANT_DECODE)
                            break;
                    }
                }
    /* The GPU decodes' other paths: k a multiple of 2048 without a tail
     * (one and two rows per warp), a tail past whole pairs of groups, and
     * the k and v projections' shape, which gemv_dp4a splits into blocks
     * of fewer warps to reach every SM (quant_dp4a_warps_per_block: 4 on
     * an H200; the small row counts above take 2). */
    static const int GPU_SHAPES[][2] = {{33, 2048}, {8192, 2048}, {65, 2304}, {1024, 4096}};
    enum { NSHAPES = sizeof GPU_SHAPES / sizeof GPU_SHAPES[0] };
    for (const quant_variant *v = quant_variants; v->name && backend == KERNEL_CUDA; v++)
        for (int f = 0; f < QF_COUNT && v->phase == QUANT_DECODE && quant_family.has(v, backend); f++)
            for (int s = 0; s < NSHAPES; s++, checked++)
                check_kernel(be, v, (quant_format)f, GPU_SHAPES[s][0], GPU_SHAPES[s][1], 1, seed += 2);
    /* The GPU's batch kernel (gemm_mma): tiles of 16, 32 and 64 tokens with
     * a partial last one, and a matrix whose rows fill the GPU without
     * slices of k (quant_mma.h) beside ones that take them. */
    static const int BATCH_SHAPES[][3] = {{300, 4096, 100}, {100, 768, 17}, {8192, 2048, 2}};
    for (const quant_variant *v = quant_variants; v->name && backend == KERNEL_CUDA; v++)
        for (int f = 0; f < QF_COUNT && v->phase == QUANT_BATCH && quant_family.has(v, backend); f++)
            for (int s = 0; s < 3; s++, checked++)
                check_kernel(be, v, (quant_format)f, BATCH_SHAPES[s][0], BATCH_SHAPES[s][1],
                             BATCH_SHAPES[s][2], seed += 2);
    cr_assert_gt(checked, 100, "the table was walked");
}

Test(quant_cpu, every_kernel_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_table(be);
    rl_backend_close(be);
}

/* Rounding the weights to FP16 (the GPU's prefill path) is visible to the
 * reference: without it, a q8 matrix would fail the GPU's check. */
Test(quant_cpu, the_fp16_rounding_of_the_prefill_path_matters)
{
    int rows = 16, k = 4096;
    fp16 *w16 = random_halves((size_t)rows * k, 41), *x = random_halves(k, 42);
    void *w = rl_host_alloc(quant_row_bytes(QF_Q8, k) * rows);
    quant_encode_matrix(QF_Q8, w, w16, rows, k);
    double exact[16], rounded[16], diff = 0;
    quant_reference(exact, QF_Q8, w, x, rows, k, 1, false);
    quant_reference(rounded, QF_Q8, w, x, rows, k, 1, true);
    for (int r = 0; r < rows; r++)
        diff = fmax(diff, fabs(exact[r] - rounded[r]));
    cr_assert(diff > 1e-4, "q8 weights are not FP16 values: rounding moves y by %g", diff);
    rl_host_free(w16);
    rl_host_free(x);
    rl_host_free(w);
}

static const quant_variant *with_role(const char *role)
{
    for (const quant_variant *v = quant_variants; v->name; v++)
        if (v->role && !strcmp(v->role, role))
            return v;
    return NULL;
}

/* Experiment 03 finds its variants by these roles; what each row says of
 * itself per backend is what its path does. */
Test(quant_cpu, the_roles_experiment_03_uses_name_rows)
{
    const quant_variant *dq = with_role("decode_dequant"), *i8 = with_role("decode_int8"),
                        *pf = with_role("prefill");
    cr_assert(dq && i8 && pf);
    cr_assert(dq->phase == QUANT_DECODE && i8->phase == QUANT_DECODE && pf->phase == QUANT_PREFILL);
    cr_assert(i8->quantizes_x && !dq->quantizes_x && !pf->quantizes_x);
    cr_assert(quant_family.has(i8, KERNEL_CPU), "the integer-dot decode runs on the CPU");
    /* only the GPU's prefill computes with FP16 weights (cuBLAS FP16 GEMM) */
    cr_assert(quant_rounds_to_fp16(pf, KERNEL_CUDA) && !quant_rounds_to_fp16(pf, KERNEL_CPU));
    cr_assert(!quant_rounds_to_fp16(dq, KERNEL_CUDA) && !quant_rounds_to_fp16(dq, KERNEL_CPU));
    cr_assert_gt(quant_scratch(pf, KERNEL_CPU, 16, 256, 8), 0, "the CPU prefill dequantizes into scratch");
    /* the batch part's kernels: the CPU's takes x in 8 bits; the GPU's
     * rounds the weights to FP16 for its MMAs, as the prefill path does */
    const quant_variant *bi = with_role("batch_int8"), *bm = with_role("batch_mma");
    cr_assert(bi && bm && bi->phase == QUANT_BATCH && bm->phase == QUANT_BATCH);
    cr_assert(bi->quantizes_x && !bm->quantizes_x);
    cr_assert(quant_family.has(bi, KERNEL_CPU) && !quant_family.has(bm, KERNEL_CPU));
    cr_assert(quant_rounds_to_fp16(bm, KERNEL_CUDA));
#ifdef RL_HAVE_CUDA
    cr_assert(quant_family.has(bm, KERNEL_CUDA), "gemm_mma runs on the GPU");
    cr_assert(quant_family.has(dq, KERNEL_CUDA) && quant_family.has(pf, KERNEL_CUDA));
    cr_assert(quant_family.has(i8, KERNEL_CUDA), "and on the GPU (dp4a)");
    cr_assert_eq(quant_scratch(pf, KERNEL_CUDA, 16, 256, 8), sizeof(fp16) * 16 * 256);
#endif
}

Test(cuda_quant, every_kernel_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    check_table(be);
    rl_backend_close(be);
}

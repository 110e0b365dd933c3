/*
 * cpu/gemv.c -- the C + OpenMP counterparts of gemv.cu, and OpenBLAS for
 * the library path (the table is gemv.c, the reference ref/gemv.c).
 *
 * A CPU streams a matrix from DRAM the way a GPU streams it from HBM: the
 * question is again whether the loop keeps the memory bus busy. Variant 2
 * does what the GPU kernel does: vector loads of halves, converted in one
 * instruction (F16C; AVX-512F for 16 at a time), several rows at a time so
 * that each load of x serves several rows, FP32 accumulation in vector
 * registers.
 */
#include "../gemv.h"
#include "check.h"
#include "simd.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- variant 1: one row at a time, one weight at a time ------------------ */

/* The loop a C programmer writes first: x converted to floats once (in
 * the scratch), then for each row a scalar loop that converts one weight
 * at a time. The bit-level conversion does not vectorize: a few
 * instructions per weight, far from what the memory bus could feed.
 * Decode only (n = 1). */
size_t gemv_scalar_cpu_scratch(int rows, int k, int n)
{
    (void)rows, (void)n;
    return sizeof(float) * (size_t)k;
}

void gemv_scalar_cpu(const gemv_args *a)
{
    const int k = a->k;
    float *x = a->scratch;
    gemv_convert_fp16(x, a->x, (size_t)k);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < a->rows; r++) {
        const fp16 *wr = a->w + (size_t)r * k;
        float acc = 0;
        for (int i = 0; i < k; i++)
            acc += fp16_to_float(wr[i]) * x[i];
        a->y[r] = acc;
    }
}

/* ---- variant 2: vector loads, ROWS rows x NT tokens per step -------------- */

/* A step of NT tokens holds ROWS x NT accumulators and the ROWS weight
 * vectors it converted, in AVX2's 16 vector registers or AVX-512's 32,
 * with one left for a token's x: as many rows as fit, at most 8.
 * Each token's x, loaded (and converted) once a step, then serves ROWS
 * rows: fewer rows reload x more often, from L2 once n x k halves of x
 * outgrow L1 (README, "What bounds the F16 GEMV at n tokens"). More
 * rows also stream more rows at once, and a CPU keeps more bytes in
 * flight that way. One token's rows are the tuner's, 4 by default: on
 * 16 KiB rows (k = 8192) 8 and 2 rows a step read under the memory roof
 * where 4 read at it, and on 8 KiB rows 4 is as fast as the others
 * (experiment 02's README, "What bounds the F16 GEMV"). */
#if defined(__AVX512F__)
#define GEMV_VREGS 32
#else
#define GEMV_VREGS 16
#endif
#define GEMV_ROWS_FIT(NT) ((GEMV_VREGS - 1) / ((NT) + 1))
#define GEMV_ROWS(NT)                                                                              \
    ((NT) == 1 ? 4 : GEMV_ROWS_FIT(NT) > 8 ? 8 : GEMV_ROWS_FIT(NT) < 1 ? 1 : GEMV_ROWS_FIT(NT))
/* One token may take more rows (a candidate of the tuner): 16 only where
 * 32 vector registers hold their accumulators and weights. */
#define GEMV_MOST_ROWS (GEMV_VREGS >= 32 ? 16 : 8)

/* ROWS rows that lie `stride` rows apart, NT tokens, one pass over k:
 * VF_LANES halves a step (16 on AVX-512, because converting halves is
 * what bound it: 16-lane steps reached ggml's time where 8-lane ones did
 * not), and the last k % 16 in one 8-lane step (k is a multiple of 8).
 * prefetch: bytes ahead of each load to ask for (0: none), in the row's
 * own stream, which runs on into the segment's next row. It helped from
 * DRAM and hurt in the LLC: a tuner's choice. The times behind both are
 * in experiments/03-quant-decode/README.md, "Tuned per machine". The
 * test is loop-invariant: the
 * compiler (-O3's unswitching) makes a loop with and one without. */
static inline __attribute__((always_inline)) void rows_vec(const gemv_args *a, int r0, int stride,
                                                          int ROWS, int NT, int prefetch)
{
    const int k = a->k;
    vf acc[GEMV_MOST_ROWS][GEMV_MAX_BATCH];
    for (int j = 0; j < ROWS; j++)
        for (int t = 0; t < NT; t++)
            acc[j][t] = (vf){0};
    int i = 0;
    for (; i + VF_LANES <= k; i += VF_LANES) {
        vf wv[GEMV_MOST_ROWS];
        for (int j = 0; j < ROWS; j++) {
            const fp16 *w = a->w + (size_t)(r0 + j * stride) * k + i;
            if (prefetch)
                __builtin_prefetch((const char *)w + prefetch);
            wv[j] = fp16_to_vf(w);
        }
        for (int t = 0; t < NT; t++) {
            vf xv = fp16_to_vf(a->x + (size_t)t * k + i);
            for (int j = 0; j < ROWS; j++)
                acc[j][t] = vf_fma(wv[j], xv, acc[j][t]);
        }
    }
    for (int j = 0; j < ROWS; j++)
        for (int t = 0; t < NT; t++) {
            float y = vf_sum(acc[j][t]);
            for (int e = i; e < k; e += 8)
                y += v8f_sum(fp16x8_to_v8f(a->w + (size_t)(r0 + j * stride) * k + e) *
                             fp16x8_to_v8f(a->x + (size_t)t * k + e));
            a->y[(size_t)t * a->rows + r0 + j * stride] = y;
        }
}

/* Each thread takes a contiguous share of the rows and cuts it into ROWS
 * segments; a step takes the next row of every segment. Rows lie one
 * after another in memory, so each segment is one long stream, as long
 * as the share over ROWS. Taking ROWS neighbouring rows per step instead
 * makes ROWS short streams (a 4096-input row is 8 KiB) that the hardware
 * prefetchers lose at every step; the long ones read a 14336 x 4096
 * matrix 5-10 % faster on a 2-core Zen 3. The last rows % ROWS rows of a
 * share go one at a time. The counts must be constants inside the loop
 * for the compiler to keep the accumulators in registers: one function
 * per token count. */
#define GEMV_VEC(name, NT, ROWS)                                                \
    static void name(const gemv_args *a)                                        \
    {                                                                           \
        const int prefetch = (NT) == 1 ? one_token_prefetch : 0;                \
        _Pragma("omp parallel")                                                 \
        {                                                                       \
            int threads = omp_get_num_threads(), me = omp_get_thread_num();     \
            int lo = (int)((long)a->rows * me / threads);                       \
            int hi = (int)((long)a->rows * (me + 1) / threads);                 \
            int segment = (hi - lo) / (ROWS);                                   \
            for (int r = lo; r < lo + segment; r++)                             \
                rows_vec(a, r, segment, ROWS, NT, prefetch);                    \
            for (int r = lo + segment * (ROWS); r < hi; r++)                    \
                rows_vec(a, r, 0, 1, NT, prefetch);                             \
        }                                                                       \
    }
/* One token's shape, the tuner's (cpu/decode_shapes.c lists the candidates): rows per step and
 * the prefetch distance; more tokens keep no prefetch. */
static int one_token_rows = GEMV_ROWS(1), one_token_prefetch = 0;
const int GEMV_FP16_PREFETCH[] = {0, 1024, 4096, -1};
/* One token: a function per candidate row count, chosen at run time. */
GEMV_VEC(gemv_vec_1_2, 1, 2)
GEMV_VEC(gemv_vec_1_4, 1, 4)
GEMV_VEC(gemv_vec_1_8, 1, 8)
#if GEMV_MOST_ROWS >= 16
GEMV_VEC(gemv_vec_1_16, 1, 16)
const int GEMV_FP16_ROWS[] = {2, 4, 8, 16, -1};
#else
const int GEMV_FP16_ROWS[] = {2, 4, 8, -1};
#endif

/* Whether v is in the -1-ended list of candidates. */
static bool listed(const int *list, int v)
{
    for (; *list >= 0; list++)
        if (*list == v)
            return true;
    return false;
}

int gemv_fp16_rows_default(void) { return GEMV_ROWS(1); }
int gemv_fp16_get_rows(void) { return one_token_rows; }
int gemv_fp16_lanes(void) { return VF_LANES; }

bool gemv_fp16_set_rows(int rows)
{
    if (!listed(GEMV_FP16_ROWS, rows))
        return false;
    one_token_rows = rows;
    return true;
}

int gemv_fp16_get_prefetch(void) { return one_token_prefetch; }

bool gemv_fp16_set_prefetch(int bytes)
{
    if (!listed(GEMV_FP16_PREFETCH, bytes))
        return false;
    one_token_prefetch = bytes;
    return true;
}

static void gemv_vec_1(const gemv_args *a)
{
    switch (one_token_rows) {
    case 2: gemv_vec_1_2(a); break;
    case 4: gemv_vec_1_4(a); break;
#if GEMV_MOST_ROWS >= 16
    case 16: gemv_vec_1_16(a); break;
#endif
    default: gemv_vec_1_8(a); break;
    }
}
GEMV_VEC(gemv_vec_2, 2, GEMV_ROWS(2))
GEMV_VEC(gemv_vec_3, 3, GEMV_ROWS(3))
GEMV_VEC(gemv_vec_4, 4, GEMV_ROWS(4))
GEMV_VEC(gemv_vec_5, 5, GEMV_ROWS(5))
GEMV_VEC(gemv_vec_6, 6, GEMV_ROWS(6))
GEMV_VEC(gemv_vec_7, 7, GEMV_ROWS(7))
GEMV_VEC(gemv_vec_8, 8, GEMV_ROWS(8))

bool gemv_batch_ok(int n, char *why, size_t len)
{
    if (n >= 1 && n <= GEMV_MAX_BATCH)
        return true;
    snprintf(why, len, "the hand-written GEMV takes 1 to %d tokens, got n = %d (gemv_library_* "
                       "takes any n)", GEMV_MAX_BATCH, n);
    return false;
}

void gemv_fp16_cpu(const gemv_args *a)
{
    static void (*const by_tokens[GEMV_MAX_BATCH + 1])(const gemv_args *) = {
        NULL, gemv_vec_1, gemv_vec_2, gemv_vec_3, gemv_vec_4,
        gemv_vec_5, gemv_vec_6, gemv_vec_7, gemv_vec_8};
    char why[128] = "";
    RL_REQUIRE(gemv_batch_ok(a->n, why, sizeof why), why);
    by_tokens[a->n](a);
}

/* ---- any n: the FP16 kernel over token tiles ------------------------------------
 * Past GEMV_MAX_BATCH tokens the accumulators no longer fit the registers,
 * so the tokens go 8 at a time; each thread walks its rows a panel at a
 * time, and every tile of tokens reads the panel from the L2, so each
 * weight crosses the memory bus once per call whatever n is, and the
 * arithmetic grows with n: the FP16 side of experiment 03's batch part. */
enum { PANEL_BYTES = 192 * 1024 }; /* a panel of rows, well inside any L2 */

#define GEMV_TILE(NT)                                                         \
    static void tile_##NT(const gemv_args *a, int p0, int p1)                 \
    {                                                                         \
        enum { R = GEMV_ROWS(NT) };                                           \
        int r = p0;                                                           \
        for (; r + R <= p1; r += R)                                           \
            rows_vec(a, r, 1, R, NT, 0);                                      \
        for (; r < p1; r++)                                                   \
            rows_vec(a, r, 0, 1, NT, 0);                                      \
    }
GEMV_TILE(1)
GEMV_TILE(2)
GEMV_TILE(3)
GEMV_TILE(4)
GEMV_TILE(5)
GEMV_TILE(6)
GEMV_TILE(7)
GEMV_TILE(8)

void gemv_fp16_batch_cpu(const gemv_args *a)
{
    static void (*const tile[GEMV_MAX_BATCH + 1])(const gemv_args *, int, int) = {
        NULL, tile_1, tile_2, tile_3, tile_4, tile_5, tile_6, tile_7, tile_8};
    RL_REQUIRE(a->n >= 1, "the FP16 batch kernel takes n >= 1 tokens");
    int panel = PANEL_BYTES / (2 * a->k);
    panel = panel < 1 ? 1 : panel;
#pragma omp parallel
    {
        int threads = omp_get_num_threads(), me = omp_get_thread_num();
        int lo = (int)((long)a->rows * me / threads), hi = (int)((long)a->rows * (me + 1) / threads);
        for (int p0 = lo; p0 < hi; p0 += panel) {
            int p1 = hi - p0 < panel ? hi : p0 + panel;
            for (int t0 = 0; t0 < a->n; t0 += GEMV_MAX_BATCH) {
                int nt = a->n - t0 < GEMV_MAX_BATCH ? a->n - t0 : GEMV_MAX_BATCH;
                gemv_args tokens = *a; /* this tile's x and y; rows_vec indexes y by a->rows */
                tokens.x = a->x + (size_t)t0 * a->k;
                tokens.y = a->y + (size_t)t0 * a->rows;
                tile[nt](&tokens, p0, p1);
            }
        }
    }
}

/* ---- variant 3: the library path ------------------------------------------ */

void gemv_sgemm_f32(float *y, const float *w, const float *x, int rows, int k, int n)
{
    /* y (n x rows) = x (n x k) . w^T, all row-major */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, rows, k, 1.0f, x, k, w, k, 0.0f, y,
                rows);
}

size_t gemv_library_cpu_scratch(int rows, int k, int n)
{
    return sizeof(float) * ((size_t)rows * k + (size_t)n * k);
}

/* In parallel strips of 4096 (a multiple of 8: vector conversions). */
void gemv_convert_fp16(float *dst, const fp16 *src, size_t n)
{
    enum { STRIP = 4096 };
    size_t strips = (n + STRIP - 1) / STRIP;
#pragma omp parallel for schedule(static)
    for (size_t s = 0; s < strips; s++) {
        size_t lo = s * STRIP;
        fp16_row_to_float(dst + lo, src + lo, n - lo < STRIP ? n - lo : STRIP);
    }
}

/* OpenBLAS has no FP16 GEMM: convert both operands to FP32 in the scratch
 * (a streaming pass), then SGEMM. At small n the conversion dominates;
 * from a few dozen tokens on, SGEMM's arithmetic does. */
void gemv_library_cpu(const gemv_args *a)
{
    float *w32 = a->scratch, *x32 = w32 + (size_t)a->rows * a->k;
    gemv_convert_fp16(w32, a->w, (size_t)a->rows * a->k);
    gemv_convert_fp16(x32, a->x, (size_t)a->n * a->k);
    gemv_sgemm_f32(a->y, w32, x32, a->rows, a->k, a->n);
}

/* ---- variant 4: the library on blocks of rows ------------------------------ */

/* Rows per block: 64 x 4096 FP32 weights, 1 MiB, converted into one
 * thread's buffer and multiplied there, so that each FP16 weight crosses
 * the memory bus once and its FP32 copy never does (variant 3 writes and
 * reads the whole FP32 matrix every call). */
enum { TILED_ROWS = 64 };

size_t gemv_library_tiled_cpu_scratch(int rows, int k, int n)
{
    (void)rows;
    return sizeof(float) * ((size_t)n * k + (size_t)omp_get_max_threads() * TILED_ROWS * k);
}

void gemv_library_tiled_cpu(const gemv_args *a)
{
    const size_t k = (size_t)a->k;
    float *x32 = a->scratch, *blocks = x32 + (size_t)a->n * k;
    gemv_convert_fp16(x32, a->x, (size_t)a->n * k);
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1); /* each OpenMP thread multiplies its own blocks */
#pragma omp parallel
    {
        float *w32 = blocks + (size_t)omp_get_thread_num() * TILED_ROWS * k;
#pragma omp for schedule(static)
        for (int r0 = 0; r0 < a->rows; r0 += TILED_ROWS) {
            int nr = a->rows - r0 < TILED_ROWS ? a->rows - r0 : TILED_ROWS;
            fp16_row_to_float(w32, a->w + (size_t)r0 * k, (size_t)nr * k);
            /* y[:, r0 .. r0 + nr) = x . w32^T, y row-major n x rows */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, a->n, nr, a->k, 1.0f, x32, a->k, w32,
                        a->k, 0.0f, a->y + r0, a->rows);
        }
    }
    openblas_set_num_threads(blas_threads);
}

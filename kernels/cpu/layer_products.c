/*
 * cpu/layer_products.c -- the C + OpenMP counterparts of layer.cu's
 * products: the GEMM (with and without its epilogue), the attention's two
 * batched products and fused attention, on OpenBLAS (the streams are
 * cpu/layer.c; the table is layer.c, the reference ref/layer.c).
 *
 * The products are OpenBLAS SGEMM, straight on the activations' layouts
 * (leading dimensions pick a head's columns out of the QKV output: no
 * copies), always on OpenMP's threads with OpenBLAS single-threaded inside
 * (layer_vec.h: one thread pool for the whole layer). Where a step is many
 * small products (one per sequence and head, or one per output tile), the
 * threads take whole ones, as attention.c's prefill does; a large GEMM is
 * cut into a slab of columns a thread.
 */
#include "check.h"
#include "layer_vec.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum {
    TILE_BYTES = 8 << 20, /* a GEMM epilogue's tile (its product and SwiGLU's up), at most ... */
    TILE_MIN_ROWS = 64,   /* ... unless its rows would be fewer (see gemm_tiles) */
    BR = 256,      /* fused attention: queries per task (causal: half) ... */
    BC = 128       /* ... by keys per online-softmax step */
};

/* ---- the attention's products ---------------------------------------------- */

/* One product per (sequence, head), each of seq^2 d multiply-adds: too
 * small to share among threads, so each thread takes whole products,
 * OpenBLAS single-threaded inside them. */
static void scores_pair(const layer_args *a, int p)
{
    int b = p / a->heads, h = p % a->heads, n = a->seq, ld = (int)qkv_ld(a);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, a->head_dim, 1.0f, query_of(a, a->x, b, h),
                ld, key_of(a, a->x, b, h), ld, 0.0f, a->y + (size_t)p * n * n, n);
}

static void context_pair(const layer_args *a, int p)
{
    int b = p / a->heads, h = p % a->heads, n = a->seq, ld = (int)qkv_ld(a), d = a->head_dim;
    float *y = a->y + (size_t)b * n * a->heads * d + (size_t)h * d;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0f, a->x + (size_t)p * n * n, n,
                value_of(a, a->r, b, h), ld, 0.0f, y, a->heads * d);
}

void layer_scores_cpu(const layer_args *a)
{
    require_qkv(a);
    int pairs = a->batch * a->heads, blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel for schedule(static)
    for (int p = 0; p < pairs; p++)
        scores_pair(a, p);
    openblas_set_num_threads(blas_threads);
}

void layer_context_cpu(const layer_args *a)
{
    require_qkv(a);
    RL_REQUIRE(a->r, "CONTEXT reads V from r, the QKV output");
    int pairs = a->batch * a->heads, blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel for schedule(static)
    for (int p = 0; p < pairs; p++)
        context_pair(a, p);
    openblas_set_num_threads(blas_threads);
}

/* ---- fused attention ----------------------------------------------------------- */

/* One thread's tile: scores (then weights) BR x BC, the partial output BR
 * x head_dim, and each query row's running maximum and sum. */
typedef struct attention_tile {
    float *s, *o, m[BR], l[BR];
} attention_tile;

/* The mask on a block of scores: rows queries i0.., columns keys j0.. */
static void mask_block(const layer_args *a, float *s, int rows, int nk, int b, int i0, int j0)
{
    if (a->mask_kind == LAYER_MASK_PADDING) {
        const float *m = a->mask + (size_t)b * a->seq + j0;
        for (int r = 0; r < rows; r++)
            map2(s + (size_t)r * BC, s + (size_t)r * BC, m, (size_t)nk, add);
    } else if (a->mask_kind == LAYER_MASK_CAUSAL) {
        for (int r = 0; r < rows; r++)
            for (int j = i0 + r + 1 - j0 < 0 ? 0 : i0 + r + 1 - j0; j < nk; j++)
                s[(size_t)r * BC + j] += LAYER_MASKED;
    }
}

/* The online softmax: each row's maximum grows to take in the block,
 * its sum and partial output are rescaled by e^(old - new), and the
 * block's scores become e^(s - new), ready to weight V. */
static void online_update(attention_tile *t, int rows, int nk, int d)
{
    for (int r = 0; r < rows; r++) {
        float *s = t->s + (size_t)r * BC;
        float mn = fmaxf(t->m[r], row_max(s, nk));
        float corr = expf(t->m[r] - mn); /* 0 for the first block, m = -inf */
        t->l[r] = t->l[r] * corr + exp_row(s, s, nk, mn);
        if (corr != 1.0f)
            scale_row(t->o + (size_t)r * d, t->o + (size_t)r * d, d, corr);
        t->m[r] = mn;
    }
}

/* Queries per task: causal tasks take half as many, so that fewer of
 * their scores fall past the diagonal (computed, then masked). */
static int queries_per_task(const layer_args *a) { return a->mask_kind == LAYER_MASK_CAUSAL ? BR / 2 : BR; }

/* Queries i0 .. of sequence b, head h, against their keys a block of BC
 * at a time. Causal: the blocks past the last query's position are
 * skipped, as every one of their weights is e^-10000, 0 in float. */
static void attention_task(const layer_args *a, attention_tile *t, int b, int h, int i0)
{
    const int n = a->seq, d = a->head_dim, ld = (int)qkv_ld(a), rows = MIN(queries_per_task(a), n - i0);
    const float *q = query_of(a, a->x, b, h) + (size_t)i0 * ld, *k = key_of(a, a->x, b, h),
                *v = value_of(a, a->x, b, h);
    int keys = a->mask_kind == LAYER_MASK_CAUSAL ? i0 + rows : n;
    for (int r = 0; r < rows; r++)
        t->m[r] = -INFINITY, t->l[r] = 0;
    memset(t->o, 0, sizeof(float) * (size_t)rows * d);
    for (int j0 = 0; j0 < keys; j0 += BC) {
        int nk = MIN(BC, keys - j0);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, nk, d, a->scale, q, ld,
                    k + (size_t)j0 * ld, ld, 0.0f, t->s, BC);
        mask_block(a, t->s, rows, nk, b, i0, j0);
        online_update(t, rows, nk, d);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, d, nk, 1.0f, t->s, BC,
                    v + (size_t)j0 * ld, ld, 1.0f, t->o, d);
    }
    float *y = a->y + ((size_t)b * n + i0) * a->heads * d + (size_t)h * d;
    for (int r = 0; r < rows; r++)
        scale_row(y + (size_t)r * a->heads * d, t->o + (size_t)r * d, d, 1.0f / t->l[r]);
}

void layer_attention_cpu(const layer_args *a)
{
    require_qkv(a);
    RL_REQUIRE(a->mask_kind != LAYER_MASK_PADDING || a->mask, "a padding mask needs mask");
    const int br = queries_per_task(a), blocks = (a->seq + br - 1) / br, tasks = a->batch * a->heads * blocks;
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel
    {
        attention_tile t;
        t.s = malloc(sizeof(float) * BR * BC);
        t.o = malloc(sizeof(float) * BR * (size_t)a->head_dim);
        RL_REQUIRE(t.s && t.o, "out of memory for an attention tile");
        /* dynamic: causal tasks near the diagonal's end cost more */
#pragma omp for schedule(dynamic, 1)
        for (int task = 0; task < tasks; task++) {
            int p = task / blocks;
            attention_task(a, &t, p / a->heads, p % a->heads, task % blocks * br);
        }
        free(t.s);
        free(t.o);
    }
    openblas_set_num_threads(blas_threads);
}

/* ---- GEMM ----------------------------------------------------------------------- */

static void require_gemm(const layer_args *a)
{
    RL_REQUIRE(a->rows >= 1 && a->cols >= 1 && a->k >= 1, "a GEMM needs rows, cols and k >= 1");
    RL_REQUIRE(a->y && a->x && a->w, "a GEMM needs x, w and y");
}

/* Each thread's slab: a whole number of vectors of C's columns, as even
 * as that allows (OpenBLAS packs the thread's part of B once, and all of
 * A: A is the activation, B the larger weight, in every layer's GEMM). */
void layer_sgemm_one_pool(bool trans_a, bool trans_b, int m, int n, int k, const float *a, int lda,
                          const float *b, int ldb, float *c, int ldc)
{
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel
    {
        int threads = omp_get_num_threads(), t = omp_get_thread_num();
        int vectors = (n + VF_LANES - 1) / VF_LANES;
        int n0 = MIN(n, (int)((long)vectors * t / threads) * VF_LANES);
        int n1 = MIN(n, (int)((long)vectors * (t + 1) / threads) * VF_LANES);
        if (n1 > n0) {
            const float *b0 = b + (trans_b ? (size_t)n0 * ldb : (size_t)n0);
            cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                        trans_b ? CblasTrans : CblasNoTrans, m, n1 - n0, k, 1.0f, a, lda, b0, ldb, 0.0f,
                        c + n0, ldc);
        }
    }
    openblas_set_num_threads(blas_threads);
}

void layer_gemm_cpu(const layer_args *a)
{
    require_gemm(a);
    RL_REQUIRE(a->epilogue == LAYER_EPI_NONE, "gemm has no epilogue: use gemm_epilogue");
    layer_sgemm_one_pool(false, true, a->rows, a->cols, a->k, a->x, a->k, a->w, a->k, a->y, a->cols);
}

/* The epilogue on one row of a tile, n values at column c of row i, in
 * the cache since the product wrote them (up: SwiGLU's up projection). */
static void epilogue_row(const layer_args *a, float *y, int i, int c, int n, const float *up)
{
    const float *r = a->r ? a->r + (size_t)i * a->cols + c : NULL;
    switch (a->epilogue) {
    case LAYER_EPI_BIAS: map2(y, y, a->bias + c, (size_t)n, add); break;
    case LAYER_EPI_BIAS_GELU: map2(y, y, a->bias + c, (size_t)n, add_gelu); break;
    case LAYER_EPI_BIAS_ADD:
        map2(y, y, r, (size_t)n, add);
        if (a->bias)
            map2(y, y, a->bias + c, (size_t)n, add);
        break;
    case LAYER_EPI_SILU_GATE: map2(y, y, up, (size_t)n, silu_times); break;
    default: break;
    }
}

/* The epilogue's tiles of the output: tm x tn tiles of m x n values, a
 * column slab of the output a thread (tn: as many as the threads), cut
 * into tm row tiles. OpenBLAS packs each call's part of w and of x anew,
 * so a tile's product costs more the smaller it is: every row tile packs
 * the slab of w again. Small tiles (a core's L2) spent more on that than
 * the epilogue's pass saves, and so did a tile per round of the threads
 * (a thread packing another's columns): the fused GEMM was slower than
 * the GEMM and a pass. So each thread keeps its slab of w, as
 * layer_sgemm_one_pool's GEMM does, and a tile takes as many rows as
 * TILE_BYTES allows (the epilogue reads it back from the last-level
 * cache, where the product left it, not from memory), or as the slab of
 * w is large, whichever is more. */
typedef struct gemm_tiles {
    int m, n, tm, tn;
} gemm_tiles;

static gemm_tiles gemm_tiles_of(const layer_args *a)
{
    gemm_tiles t;
    int threads = omp_get_max_threads(), vectors = (a->cols + VF_LANES - 1) / VF_LANES;
    t.n = (vectors + threads - 1) / threads * VF_LANES;
    t.tn = (a->cols + t.n - 1) / t.n;
    /* a row tile at least as large as the slab of w it packs again: below
     * that, packing w costs more traffic than the tile's epilogue from
     * memory would (SwiGLU's slab of w, gate and up, is 4x its tile at
     * Llama-1B's 512 tokens: one tile) */
    size_t widths = a->epilogue == LAYER_EPI_SILU_GATE ? 2 : 1;
    size_t row_bytes = sizeof(float) * (size_t)t.n * widths, slab_bytes = row_bytes * (size_t)a->k;
    size_t fit = (TILE_BYTES > slab_bytes ? TILE_BYTES : slab_bytes) / row_bytes;
    int most = (int)MIN((size_t)a->rows, fit > TILE_MIN_ROWS ? fit : TILE_MIN_ROWS);
    t.tm = (a->rows + most - 1) / most;
    t.m = (a->rows + t.tm - 1) / t.tm;
    return t;
}

/* Output rows i0.., columns c0..: the product (SwiGLU: the gate's into y,
 * the up projection's into up, t->n floats a row), then the epilogue
 * while the tile is in this core's caches. */
static void epilogue_tile(const layer_args *a, const gemm_tiles *t, int i0, int c0, float *up)
{
    const int m = MIN(t->m, a->rows - i0), n = MIN(t->n, a->cols - c0), k = a->k;
    const float *x = a->x + (size_t)i0 * k;
    float *y = a->y + (size_t)i0 * a->cols + c0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k, a->w + (size_t)c0 * k, k,
                0.0f, y, a->cols);
    if (up)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k,
                    a->w + ((size_t)a->cols + c0) * k, k, 0.0f, up, t->n);
    for (int i = 0; i < m; i++)
        epilogue_row(a, y + (size_t)i * a->cols, i0 + i, c0, n, up ? up + (size_t)i * t->n : NULL);
}

void layer_gemm_epilogue_cpu(const layer_args *a)
{
    require_gemm(a);
    RL_REQUIRE(a->bias || (a->epilogue != LAYER_EPI_BIAS && a->epilogue != LAYER_EPI_BIAS_GELU),
               "a bias epilogue needs a bias");
    RL_REQUIRE(a->epilogue != LAYER_EPI_BIAS_ADD || a->r, "a residual epilogue needs r");
    const gemm_tiles t = gemm_tiles_of(a);
    const bool gate = a->epilogue == LAYER_EPI_SILU_GATE;
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel
    {
        float *up = gate ? malloc(sizeof(float) * (size_t)t.m * t.n) : NULL;
        RL_REQUIRE(!gate || up, "out of memory for an up-projection tile");
        /* static: thread j takes slab j's row tiles, in order */
#pragma omp for schedule(static)
        for (int i = 0; i < t.tm * t.tn; i++)
            epilogue_tile(a, &t, i % t.tm * t.m, i / t.tm * t.n, up);
        free(up);
    }
    openblas_set_num_threads(blas_threads);
}

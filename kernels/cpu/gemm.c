/*
 * cpu/gemm.c -- the C + OpenMP counterparts of gemm.cu, and OpenBLAS for
 * the library path (the table is gemm.c, the reference ref/gemm.c).
 *
 * The tiled GEMM is the CPU's picture of a GPU launch. The output is cut
 * into TILE_M x TILE_N tiles and the P threads take them in a fixed order:
 * thread p computes tiles p, p + P, p + 2P, ... (a static schedule). Every
 * tile costs the same, so the threads finish their rounds together and a
 * run takes ceil(tiles / P) tile-times: the GPU's waves, with P threads in
 * the place of the SMs and one tile per thread at a time.
 */
#include "../gemm.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* The tile is fixed at compile time. Change it, rebuild, and predict where
 * experiment 04's steps move before you look. SLAB_K only sets how much of
 * the k dimension is packed at once (cache blocking), not the steps. */
enum { TILE_M = 64, TILE_N = 64, SLAB_K = 256 };

static inline float a_at(const gemm_args *g, int i, int kk)
{
    return ((const float *)g->a)[gemm_a_index(g, i, kk)];
}

static inline float b_at(const gemm_args *g, int kk, int j)
{
    return ((const float *)g->b)[gemm_b_index(g, kk, j)];
}

/* ap[i][kk] = A(m0 + i, k0 + kk): the tile's rows of one slab of A, in
 * the order the multiply reads them, zero below the matrix's last row. */
static void pack_a(float ap[TILE_M][SLAB_K], const gemm_args *g, int m0, int k0, int kc)
{
    for (int i = 0; i < TILE_M; i++)
        for (int kk = 0; kk < kc; kk++)
            ap[i][kk] = m0 + i < g->m ? a_at(g, m0 + i, k0 + kk) : 0.0f;
}

/* bp[kk][j] = B(k0 + kk, n0 + j), zero beyond the matrix's last column. */
static void pack_b(float bp[SLAB_K][TILE_N], const gemm_args *g, int k0, int n0, int kc)
{
    for (int kk = 0; kk < kc; kk++)
        for (int j = 0; j < TILE_N; j++)
            bp[kk][j] = n0 + j < g->n ? b_at(g, k0 + kk, n0 + j) : 0.0f;
}

/* ct += ap bp over the whole tile, padding included: an edge tile costs
 * as much as a full one, as a thread block's idle lanes do on the GPU.
 * One row of the tile at a time, its accumulators in vector registers. */
static void multiply_slab(float ct[TILE_M][TILE_N], const float ap[TILE_M][SLAB_K],
                          const float bp[SLAB_K][TILE_N], int kc)
{
    for (int i = 0; i < TILE_M; i++) {
        float acc[TILE_N];
        memcpy(acc, ct[i], sizeof acc);
        for (int kk = 0; kk < kc; kk++)
            for (int j = 0; j < TILE_N; j++)
                acc[j] = fmaf(ap[i][kk], bp[kk][j], acc[j]);
        memcpy(ct[i], acc, sizeof acc);
    }
}

/* One output tile: pack a slab of A and of B, multiply, repeat along k,
 * then write the part of the tile that lies inside C. */
static void compute_tile(const gemm_args *g, int m0, int n0)
{
    float ct[TILE_M][TILE_N] = {{0}};
    float ap[TILE_M][SLAB_K], bp[SLAB_K][TILE_N];
    for (int k0 = 0; k0 < g->k; k0 += SLAB_K) {
        int kc = g->k - k0 < SLAB_K ? g->k - k0 : SLAB_K;
        pack_a(ap, g, m0, k0, kc);
        pack_b(bp, g, k0, n0, kc);
        multiply_slab(ct, ap, bp, kc);
    }
    for (int i = 0; i < TILE_M && m0 + i < g->m; i++)
        for (int j = 0; j < TILE_N && n0 + j < g->n; j++)
            g->c[(size_t)(m0 + i) * (size_t)g->n + (size_t)(n0 + j)] = ct[i][j];
}

/* tiled: the tiles, statically scheduled over the threads. */
static void launch_tiled(const gemm_args *g)
{
    long tiles_m = (g->m + TILE_M - 1) / TILE_M, tiles_n = (g->n + TILE_N - 1) / TILE_N;
    long tiles = tiles_m * tiles_n;
#pragma omp parallel
    {
        long p = omp_get_thread_num(), threads = omp_get_num_threads();
        for (long t = p; t < tiles; t += threads)
            compute_tile(g, (int)(t / tiles_n) * TILE_M, (int)(t % tiles_n) * TILE_N);
    }
}

/* A thread computes one tile at a time. */
static int one_tile_per_thread(void) { return 1; }

/* blas: the machine's BLAS, which picks its own blocking. */
static void launch_sgemm(const gemm_args *g)
{
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
                g->trans_b ? CblasTrans : CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a,
                g->trans_a ? g->m : g->k, g->b, g->trans_b ? g->k : g->n, 0.0f, g->c, g->n);
}

const gemm_impl gemm_tiled_cpu = {.launch = launch_tiled, .in_bytes = 4, .tile_m = TILE_M,
                                  .tile_n = TILE_N, .blocks_per_unit = one_tile_per_thread};
const gemm_impl gemm_sgemm_cpu = {.launch = launch_sgemm, .in_bytes = 4};

/*
 * quant_mma.h -- the plan of quant.cu's variant 5, gemm_mma (the kernel:
 * quant_mma.cuh): how many tokens a thread block takes, and into how many
 * slices of k the matrix is split so that a short matrix still fills the
 * GPU. Plain C, for the launcher, its scratch, the emulator's driver and
 * the tests alike.
 */
#ifndef KERNELS_QUANT_MMA_H
#define KERNELS_QUANT_MMA_H

#include "quant.h"

enum {
    QUANT_MMA_WARPS = 4,                      /* a thread block: 4 warps */
    QUANT_MMA_ROWS = 8 * QUANT_MMA_WARPS,     /* a warp's 8 rows: one n8 of the MMA */
    QUANT_MMA_MOST_SPLITS = 8,                /* slices of k at most */
    QUANT_MMA_MOST_SMS = 256,                 /* the scratch's bound on a GPU's SMs */
    QUANT_MMA_BLOCKS_PER_SM = 8               /* thread blocks per SM the split aims at */
};

/* The tokens' tile of 16: a thread block's tokens are 16 mt of them,
 * mt = 1, 2 or 4 (n up to 16, 32, then 64 a tile). */
static inline int quant_mma_token_tiles(int n) { return n <= 16 ? 1 : n <= 32 ? 2 : 4; }

/* Slices of k: enough thread blocks for QUANT_MMA_BLOCKS_PER_SM per SM
 * where the rows and tokens alone give fewer, at most
 * QUANT_MMA_MOST_SPLITS and one block of k each; *per_split, the blocks
 * of 256 weights each slice takes (the last may take fewer). A memory-bound
 * kernel needs bytes in flight on every SM: 4096 rows are 128 thread
 * blocks, one per SM of an H100, four warps each. */
static inline int quant_mma_splits(int rows, int n, int k, int sms, int *per_split)
{
    int nb = k / QUANT_BLOCK, tile = 16 * quant_mma_token_tiles(n);
    long long tiles = (long long)((rows + QUANT_MMA_ROWS - 1) / QUANT_MMA_ROWS) * ((n + tile - 1) / tile);
    long long want = ((long long)QUANT_MMA_BLOCKS_PER_SM * sms + tiles - 1) / tiles;
    long long most = QUANT_MMA_MOST_SPLITS;
    int splits = (int)(want < 1 ? 1 : want > most ? most : want);
    splits = splits > nb ? nb : splits;
    *per_split = (nb + splits - 1) / splits;
    return (nb + *per_split - 1) / *per_split; /* no empty slice */
}

/* The partial sums of every slice past one: floats, slices x n x rows. */
static inline size_t quant_mma_scratch_bytes(int rows, int k, int n, int sms)
{
    int per_split, splits = quant_mma_splits(rows, n, k, sms, &per_split);
    return splits > 1 ? sizeof(float) * (size_t)splits * n * rows : 0;
}

#endif

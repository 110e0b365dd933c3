/*
 * layer_backward_plan.h -- the launch plans of experiment 09's backward
 * kernels (layer_backward_kernels.cuh; layer_backward.cu launches them),
 * plain C as layer_plan.h is, so that the device code, the emulator
 * (tests/emu/layer_backward.cpp) and a model of the launches plan them
 * from one text. GELU's gradient is planned as the forward's element-wise
 * kernel (layer_ew_blocks), softmax's and layer norm's input gradients as
 * its row kernel (layer_row_plan_for).
 */
#ifndef KERNELS_LAYER_BACKWARD_PLAN_H
#define KERNELS_LAYER_BACKWARD_PLAN_H

#include "layer_plan.h"

/* ---- concat: a row's two copies ------------------------------------------------------------ */

enum { LAYER_CONCAT_THREADS = 256, LAYER_CONCAT_BLOCKS_PER_SM = 2048 / LAYER_CONCAT_THREADS };

/* Blocks of tx x ty = 256 threads: tx along a row (a power of 2 from 32
 * to 256, the fewest that cover its items: 16-byte groups, or values),
 * ty rows side by side; the rows' grid-stride loop takes the rest past
 * what `sms` SMs hold at once. No division in the kernel: a row and a
 * column are the thread's indices. */
typedef struct layer_concat_plan {
    unsigned tx, ty, blocks;
} layer_concat_plan;

static inline layer_concat_plan layer_concat_plan_for(int rows, int cols, bool vec, int sms)
{
    layer_concat_plan p;
    const int items = vec ? cols / 4 : cols;
    p.tx = 32;
    while ((int)p.tx < items && p.tx < LAYER_CONCAT_THREADS)
        p.tx *= 2;
    p.ty = LAYER_CONCAT_THREADS / p.tx;
    const size_t need = ((size_t)rows + p.ty - 1) / p.ty;
    const size_t cap = (size_t)(sms > 0 ? sms : 1) * LAYER_CONCAT_BLOCKS_PER_SM;
    p.blocks = (unsigned)(need < 1 ? 1 : need > cap ? cap : need);
    return p;
}

/* ---- column sums over the tokens: bias's, gamma's and beta's gradients ----------------------
 *
 * Deterministic, no atomics, in two kernels. The first: a block a slab of
 * consecutive rows, all of their columns, as teams of the row kernel's
 * plan (layer_row_plan_for: a team holds a row, PER values a thread),
 * several teams a block up to 512 threads, each team `sub` consecutive
 * rows of the slab one after another, each thread summing its columns
 * over them in registers; the teams' sums then added in team order
 * through shared memory, and the block's written as one row of
 * `partials` (blocks x width). The second: each column's partials added
 * in slab order. The slabs: as many as the GPU holds blocks of them at
 * once (LAYER_COLSUM_BLOCKS_PER_SM an SM), fewer where the rows run out
 * (LAYER_COLSUM_MIN_SLAB rows a slab at least), so that the partials'
 * traffic is a small part of the input's; a slab of all the rows writes y
 * directly. The bits depend on the plan (the SMs), never on timing. */
enum { LAYER_COLSUM_THREADS = 512, LAYER_COLSUM_BLOCKS_PER_SM = 2,
       /* the columns a block of teams holds in shared memory: teams > 1
        * only where a team is 256 threads or fewer (2048 columns), and a
        * layer norm's two sums a column */
       LAYER_COLSUM_SHARED = 2 * 256 * LAYER_ROW_PER,
       /* rows a slab at least (a row a team, if more): the partials'
        * traffic at most 2 / 32 of the input's */
       LAYER_COLSUM_MIN_SLAB = 32,
       LAYER_COLSUM_FINAL_THREADS = 1024 /* 32 columns, the partials split over 32 warps */ };

typedef struct layer_colsum_plan {
    int per, team, teams; /* as layer_row_plan_for, and teams a block */
    int sub, slab;        /* rows a team, rows a block (teams x sub) */
    unsigned threads, blocks;
} layer_colsum_plan;

static inline layer_colsum_plan layer_colsum_plan_for(int rows, int cols, int sms)
{
    const layer_row_plan r = layer_row_plan_for(rows, cols);
    layer_colsum_plan p;
    p.per = r.per, p.team = r.team;
    p.teams = r.team >= LAYER_COLSUM_THREADS ? 1 : LAYER_COLSUM_THREADS / r.team;
    p.threads = (unsigned)(p.teams * p.team);
    const long long cap = (long long)(sms > 0 ? sms : 1) * LAYER_COLSUM_BLOCKS_PER_SM;
    const int least = p.teams > LAYER_COLSUM_MIN_SLAB ? p.teams : LAYER_COLSUM_MIN_SLAB; /* rows a slab */
    long long slabs = ((long long)rows + least - 1) / least;
    if (slabs > cap)
        slabs = cap;
    p.sub = (int)(((long long)rows + slabs * p.teams - 1) / (slabs * p.teams));
    p.slab = p.sub * p.teams;
    p.blocks = (unsigned)(((long long)rows + p.slab - 1) / p.slab);
    return p;
}

/* The second kernel's blocks over the width summed (cols, or 2 cols). */
static inline unsigned layer_colsum_final_blocks(int width) { return (unsigned)((width + 31) / 32); }

#endif

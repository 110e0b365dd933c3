/*
 * layer_plan.h -- the launch plans of experiment 09's CUDA steps (blocks
 * and threads as layer.cu's launchers choose them), plain C, so that the
 * device code (layer_kernels.cuh), the emulator and make gpu-model's cases
 * (harness/ops/gpu_model_cases.c) plan the same launches from one text.
 */
#ifndef KERNELS_LAYER_PLAN_H
#define KERNELS_LAYER_PLAN_H

#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>

enum { LAYER_EW_THREADS = 256, LAYER_EW_BLOCKS_PER_SM = 2048 / LAYER_EW_THREADS };

/* Blocks of LAYER_EW_THREADS: one per 256 items (a 16-byte group, or one
 * value), at most what `sms` SMs hold at once (2048 threads each); the
 * grid-stride loop takes the rest. */
static inline unsigned layer_ew_blocks(size_t n, bool vec, int sms)
{
    const size_t items = vec ? (n / 4 > 0 ? n / 4 : 1) : n;
    const size_t need = (items + LAYER_EW_THREADS - 1) / LAYER_EW_THREADS;
    const size_t cap = (size_t)(sms > 0 ? sms : 1) * LAYER_EW_BLOCKS_PER_SM;
    return (unsigned)(need < 1 ? 1 : need > cap ? cap : need);
}

/* A row is held in registers from its load to its store, PER values a
 * thread, so that it crosses the memory bus once each way whatever its
 * statistics need: up to 1024 threads of 8 (8192 columns: hidden sizes up
 * to a 70B model's, scores rows up to 8192 keys), else 512 of 32 (16384:
 * a 405B model's hidden size; a block of 512 may use 128 registers a
 * thread; 64 values a thread spilled there, 32 a thread at 1024 threads'
 * 64 registers too). */
enum { LAYER_ROW_MAX_THREADS = 1024, LAYER_ROW_PER = 8, LAYER_ROW_LONG_THREADS = 512, LAYER_ROW_PER_LONG = 32,
       LAYER_ROW_MAX_COLS = LAYER_ROW_LONG_THREADS * LAYER_ROW_PER_LONG,
       LAYER_ROW_WARP_BLOCK = 128 /* rows of one warp: 4 of them a block */ };

typedef struct layer_row_plan {
    int per;             /* values a thread: LAYER_ROW_PER or LAYER_ROW_PER_LONG */
    int team;            /* threads a row, a multiple of 32 */
    unsigned threads, blocks;
} layer_row_plan;

/* A warp a row while a warp holds it (cols <= 256), 4 such rows a block
 * (a reduction of shuffles alone); else a block a row, as few threads as
 * hold it (each warp's part combined through shared memory); a long row
 * (8193 to 16384 columns) a block of 512 whatever its length. */
static inline layer_row_plan layer_row_plan_for(int rows, int cols)
{
    layer_row_plan p;
    p.per = cols <= LAYER_ROW_MAX_THREADS * LAYER_ROW_PER ? LAYER_ROW_PER : LAYER_ROW_PER_LONG;
    const int threads = (cols + p.per - 1) / p.per; /* groups of 4 columns: PER / 4 a thread */
    p.team = p.per == LAYER_ROW_PER_LONG ? LAYER_ROW_LONG_THREADS : threads <= 32 ? 32 : (threads + 31) / 32 * 32;
    if (p.team == 32) {
        p.threads = LAYER_ROW_WARP_BLOCK;
        p.blocks = (unsigned)((rows + LAYER_ROW_WARP_BLOCK / 32 - 1) / (LAYER_ROW_WARP_BLOCK / 32));
    } else {
        p.threads = (unsigned)p.team;
        p.blocks = (unsigned)rows;
    }
    return p;
}

enum { LAYER_ROPE_THREADS = 256 };

static inline unsigned layer_rope_blocks(int rows, int dim, int sms)
{
    const size_t n = (size_t)rows * (dim / 2), need = (n + LAYER_ROPE_THREADS - 1) / LAYER_ROPE_THREADS;
    const size_t cap = (size_t)(sms > 0 ? sms : 1) * (2048 / LAYER_ROPE_THREADS);
    return (unsigned)(need < 1 ? 1 : need > cap ? cap : need);
}

#endif

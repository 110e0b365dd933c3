/*
 * rl_models.h -- the models the verdicts and charts compare measurements
 * with: roofline arithmetic, the datasheet table, GEMM tiles and waves.
 * Pure functions, no measurement: every number here is a model and says so.
 */
#ifndef RL_MODELS_H
#define RL_MODELS_H

#include "rl_library.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Models and the datasheet table (models.c, datasheet.c)
 * ---------------------------------------------------------------------- */
struct rl_datasheet {
    const char *slug, *name;
    const char *match;        /* substring of the CUDA device name */
    int sm_count;
    double mem_gbps;          /* memory bandwidth, GB/s */
    double fp16_tflops;       /* dense FP16/BF16 tensor, FP32 accumulate */
    double fp32_tflops;       /* plain FP32 (non-tensor) */
    double l2_mb;
    const char *source;
};

extern const rl_datasheet rl_datasheets[]; /* terminated by a zero row */
const rl_datasheet *rl_datasheet_find(const char *device_name);
const rl_datasheet *rl_datasheet_by_slug(const char *slug);

/* A device's slug, its default label and the folder of its reference run:
 * "cpu-" and the CPU's name ("cpu-amd-epyc"); a GPU's datasheet slug
 * ("h200"), or its name made a slug where no datasheet knows it. */
void rl_device_slug(rl_backend_kind kind, const char *name, char *slug, size_t len);

double rl_arith_intensity(double flops, double bytes);                /* FLOP/B */
double rl_ridge_point(double peak_flops, double peak_bytes_per_s);    /* FLOP/B */
double rl_attainable(double ai, double peak_flops, double peak_bytes_per_s);
/* Memory-bound decode ceiling: bandwidth / bytes of weights read per token. */
double rl_tokens_per_s_ceiling(double bytes_per_s, double weight_bytes);
long long rl_tiles(long long m, long long n, long long tile_m, long long tile_n);
long long rl_waves(long long tiles, int sms, int blocks_per_sm);
/* GEMM C[m x n] = A[m x k] B[k x n], every operand moved once. */
double rl_gemm_flops(double m, double n, double k);
double rl_gemm_bytes(double m, double n, double k, double bytes_per_elem);

/* Weights spilled to a slower tier (experiment 08): a fraction f of a
 * memory-bound step's bytes read r times slower. Read one tier after the
 * other, t / t0 = (1 - f) + f r (1.9x at f = 0.1, r = 10); both tiers
 * streaming at once, t / t0 = max(1 - f, f r). */
double rl_spill_slowdown_sequential(double f, double r);
double rl_spill_slowdown_overlapped(double f, double r);
/* Mixture of experts: the experts a step at batch B touches, E experts,
 * top-k of them per token, routed uniformly and independently: E (1 - (1 -
 * k/E)^B) (8, 29, 82, 112, 126 of 128 at top-8, B = 1, 4, 16, 32, 64). */
double rl_moe_experts_touched(double experts, double top_k, double batch);

/* ------------------------------------------------------------------------
 * Wave planning (waves.c): the tile schedule of a GEMM on a number of SMs
 * ---------------------------------------------------------------------- */
/* The most square cut of one wave of tiles (SMs x blocks per SM) into tile
 * rows x tile columns: the largest divisor of wave_tiles not above its
 * square root (132 -> 11 rows of 12; 108 -> 9 rows of 12; 2 -> 1 row of 2).
 * A GEMM with that many tile rows fills whole waves every wave_tiles / rows
 * tile columns. */
int rl_wave_tile_rows(long long wave_tiles);
/* rl_waves() the long way: tiles handed to free slots round by round, as a
 * block scheduler does when every tile takes the same time. */
long long rl_waves_by_rounds(long long tiles, int sms, int blocks_per_sm);

/* A GEMM's tiling on a device: an output of m rows cut into tile_m x
 * tile_n tiles, run on units (SMs) x per_unit slots at a time. */
typedef struct rl_tiling {
    int m, tile_m, tile_n, units, per_unit;
} rl_tiling;
/* Its wave model at output width n, as numbers for a CSV row (doubles, so
 * that a row without a model can hold NaN); efficiency = tiles / (waves x
 * slots). */
typedef struct rl_wave_model {
    double tile_m, tile_n, tiles, units, blocks_per_unit, waves, efficiency;
} rl_wave_model;
rl_wave_model rl_wave_model_of(const rl_tiling *t, long long n);
/* Whether n is the last width of its wave count: one more column of the
 * output needs another wave. */
bool rl_wave_ends_at(const rl_tiling *t, long long n);
/* A sweep of the width across waves (n on a grid of step, past <= step):
 * the width after n is the next multiple of step, or n + past where n ends
 * a wave, so that both sides of each wave's edge are measured. */
long long rl_wave_sweep_next(const rl_tiling *t, long long n, int step, int past);

#ifdef __cplusplus
}
#endif
#endif /* RL_MODELS_H */

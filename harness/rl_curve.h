/*
 * rl_curve.h -- the bandwidth curve, its knees and the cache levels
 * they show (curve.c). The harness's own: internal.h
 * includes it; experiments do not.
 */
#ifndef ROOFLAB_RL_CURVE_H
#define ROOFLAB_RL_CURVE_H

#include "rooflab.h"
#include "rl_roofs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the bandwidth curve and its knees (curve.c) ---------------------------------- */
/* The footprints a curve measures: 16 KiB up, doubling, to 4x the LLC (at
 * least 64 MiB), at most max_bytes and an eighth of the memory
 * (ram_bytes; 0: unknown), at most max and RL_CURVE_MAX of them. */
int rl_curve_plan(double llc_bytes, double max_bytes, double ram_bytes, double *bytes, int max);
/* Measures c->curve with the backend's read bandwidth, `trials` trials a
 * footprint, planned from c->level_reported. */
void rl_curve_measure(rl_ctx *ctx, rl_ceilings *c, int trials);
/* A knee: where the curve leaves a plateau. bytes, the capacity it gives
 * the level: where the rate is half-way down to the next plateau; reach,
 * the next plateau's first footprint; the two plateaus' rates. */
typedef struct rl_knee {
    double bytes, reach, from_gbps, to_gbps;
} rl_knee;
/* The knees of a curve (best rates, ascending footprints), in order; at
 * most max. Pure. */
int rl_curve_knees(const rl_band *curve, int n, rl_knee *out, int max);
/* The levels a curve shows, given the reported sizes (0: no such level):
 * measured (0 where no knee is the level's) and spill (the knee's reach,
 * else 4x the reported size) per level. Pure. */
void rl_curve_levels(const rl_band *curve, int n, const double reported[RL_LEVEL_COUNT],
                     double measured[RL_LEVEL_COUNT], double spill[RL_LEVEL_COUNT]);
/* The sizes the device reports, for the whole device: per-core caches
 * times the cores, the shared LLC once, the memory; 0: no such level. */
void rl_levels_reported(const rl_device_info *d, double cap[RL_LEVEL_COUNT]);
/* Fills c's level_measured, level_bytes, level_spill and levels_source
 * from c->curve and c->level_reported (the reported sizes hold where no
 * knee is a level's, and all of them under ROOFLAB_LLC or when the curve
 * was measured on a busy host). */
void rl_curve_apply(rl_ceilings *c, rl_backend_kind kind);
/* The curve and the levels as '# key: value' lines: levels_source,
 * curve_read_gbps and curve_read_worst_gbps ("bytes:GB/s ..."),
 * level_<name>_bytes_reported and, where found, level_<name>_bytes_measured.
 * Returns how many (at most max). */
typedef struct rl_meta_line {
    char key[48], value[640];
} rl_meta_line;
enum { RL_CURVE_META_MAX = 12 };
int rl_curve_meta(const rl_ceilings *c, rl_backend_kind kind, rl_meta_line *out, int max);
/* "L1 64 KiB (reported 64 KiB), L2 1 MiB reported, ...": the console's line. */
void rl_curve_describe(const rl_ceilings *c, rl_backend_kind kind, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif

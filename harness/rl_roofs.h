/*
 * rl_roofs.h -- the roofs a point is judged against, as an experiment
 * sees them: the memory levels and access patterns, the measured
 * ceilings (the bandwidth ladder and curve, the compute roof), and the
 * roof of a working set. A room of rooflab.h: experiments get it through
 * rooflab.h; the harness's ceiling code (ceilings.c, roofs.c, curve.c)
 * and the tools that read ceilings.csv include it with it. How a rung is
 * picked on a mixed roof is the harness's own (internal.h).
 */
#ifndef RL_ROOFS_H
#define RL_ROOFS_H

#include "rl_library.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_ctx rl_ctx;

/* The memory hierarchy as the ceilings see it. On the CPU: each core's L1
 * and L2 (capacities summed over the cores), the shared last-level cache
 * and DRAM. On a GPU: its L2 (the LLC) and device memory; it has no rungs
 * for L1 and L2 of its own here. */
typedef enum rl_level { RL_L1 = 0, RL_L2, RL_LLC, RL_DRAM, RL_LEVEL_COUNT } rl_level;

/* How a kernel touches memory: only reads (a GEMV's weights, a sum), one
 * read and one write stream (an element-wise map), two reads and a write
 * (STREAM's triad). Bytes are counted as the program reads and writes
 * them; the hardware also reads each written line first (write-allocate),
 * for the ceilings and the kernels alike, so the two stay comparable. */
typedef enum rl_pattern { RL_READ = 0, RL_COPY, RL_TRIAD, RL_PATTERN_COUNT } rl_pattern;


/* One ceiling: the best of its trials (a ceiling is a maximum), and the
 * worst, so charts can draw it as a band. NaN when not measured. */
typedef struct rl_band {
    double best, worst;
    double probe_bytes; /* the working set it was measured at */
} rl_band;

enum { RL_CURVE_MAX = 24 }; /* the most footprints a bandwidth curve measures */

typedef struct rl_ceilings {
    /* The bandwidth ladder, GB/s, bytes read plus written. */
    rl_band bw[RL_LEVEL_COUNT][RL_PATTERN_COUNT];
    /* The read bandwidth over footprints from 16 KiB up, doubling, past the
     * reported LLC (probe_bytes: the footprint), and the levels found on
     * it (curve.c): a level ends where the curve leaves its plateau. No
     * curve (curve_n 0: a file written before curves, a fixture): the
     * reported sizes hold. */
    rl_band curve[RL_CURVE_MAX];
    int curve_n;
    bool curve_busy; /* other processes kept the CPUs busy as it was measured */
    double level_reported[RL_LEVEL_COUNT]; /* the sizes the machine reports; 0: no such level */
    double level_measured[RL_LEVEL_COUNT]; /* the curve's knee for the level; 0: none found */
    /* In use: the measured capacity where there is one, else the reported;
     * 0 where the device has no such level. A footprint from level_spill on
     * no longer hits the level (the next plateau's start, or 4x a reported
     * size). */
    double level_bytes[RL_LEVEL_COUNT];
    double level_spill[RL_LEVEL_COUNT];
    char levels_source[192]; /* "curve", or why (some) levels are the reported sizes */
    double copy_gbps;      /* the headline device-memory roof: DRAM copy (GPU) or triad (CPU) */
    /* The compute roof: the best of the library GEMM at a few sizes and
     * (on the CPU) an FMA-throughput microbenchmark. */
    double matrix_tflops;
    double gemm_tflops, fma_tflops; /* its sources; NaN where not measured */
    char matrix_source[64];         /* which source set the roof */
    double sheet_gbps;     /* datasheet, NaN when the device is not in the table */
    double sheet_tflops;
    char how[256];         /* what was measured */
    int trials;            /* each ceiling the best of so many; 0 when unknown */
    char origin[160];      /* "measured now", "cached, measured <date>", "from <file>, ..." */
    /* The origin as data, for the CSV's header (ceilings_origin and
     * ceilings_date_utc): what reads a header never parses the words. */
    char origin_kind[16];  /* "measured" (by this run), "cached" (reused), "file" (--ceilings) */
    char measured_utc[32]; /* when the roofs were measured, ISO 8601; "" when unknown */
} rl_ceilings;

/* The measured ceilings. A full run measures them now. A lab run reuses
 * results/<label>/ceilings.csv when a full or lab run of this device wrote
 * it within the last half hour, a quick run whenever it holds this device;
 * --ceilings FILE uses that file and measures nothing. Every measurement is
 * saved there. The first call prints a warning when the host looks busy. */
const rl_ceilings *rl_ceilings_get(rl_ctx *ctx);

/* The roof a memory-bound point is judged against: the ceiling of the
 * level its working set lives in, for its access pattern, on the levels'
 * sizes as the bandwidth curve found them (rl_ceilings.level_bytes). A
 * working set over half a level but short of its spill (where the curve
 * reaches the next plateau; 4x a reported size) is marked mixed
 * ("L2-DRAM"): the ladder has no rung at its size, so it is judged
 * against the next level's rung, what the spill runs at (the group
 * probes, where a group has them, measure its own footprint instead). A
 * point that beats that rung partly hit in the level: it is judged
 * against the level's own rung (rl_roof_rung), since a roof must never
 * be beaten. */
typedef struct rl_roof {
    rl_level level;      /* the level the working set lives in (mixed: partly) */
    bool mixed;          /* between level and the next one out */
    rl_pattern pattern;
    double gbps;         /* the rung judged against (mixed: the next level's); NaN: not measured */
    rl_level judged;     /* that rung's level: level, or mixed the next one out */
    double cached_gbps;  /* level's own rung: mixed, the bound of a point that beats gbps */
    char name[16];       /* "LLC", "L2-LLC", "DRAM" */
} rl_roof;

rl_roof rl_roof_for(rl_ctx *ctx, double footprint_bytes, rl_pattern pattern);
/* The machine's ridge, FLOP/B: the matrix roof over the DRAM read roof,
 * the intensity at which a GEMM reading DRAM turns compute-bound.
 * rl_ridge: this run's ceilings'. */
double rl_ceilings_ridge(const rl_ceilings *c);
double rl_ridge(rl_ctx *ctx);
/* Whether a working set is at least 4x the last-level cache (the curve's,
 * where the ceilings found it; else the reported one): what a claim
 * about device memory needs (cache_resident is the opposite). */
bool rl_beyond_cache(const rl_ctx *ctx, double footprint_bytes);
/* How many copies of a buffer a call should rotate through so that it is
 * read from device memory: enough to span 4x the last-level cache, as many
 * as --max-bytes allows, at least one. */
int rl_copies_beyond_cache(const rl_ctx *ctx, double buffer_bytes);

#ifdef __cplusplus
}
#endif
#endif /* RL_ROOFS_H */

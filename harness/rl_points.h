/*
 * rl_points.h -- the points of a run, as an experiment declares and reads
 * them: the columns of its CSV and console table (and the ready-made
 * ones), a point (what it runs, how it is validated, what it moves) and
 * what the harness fills in (its measurement, its group's roofs), and the
 * lookups the verdicts use. A room of rooflab.h: experiments get it
 * through rooflab.h; points.c, columns.c and the tests of the pipeline
 * use it with it.
 */
#ifndef RL_POINTS_H
#define RL_POINTS_H

#include "common.h" /* kernels/: kernel_variant, kernel_call */
#include "rl_library.h"
#include "rl_roofs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_ctx rl_ctx;
typedef struct rl_point rl_point;
typedef struct rl_points rl_points;

/* A column of an experiment's points: its CSV name (NULL: console only),
 * its console heading and printf format (NULL: CSV only), and its value,
 * a number (num) or a text (str). measured: empty for a point that was
 * not timed. The lists end with a zero row; the harness writes the header
 * and every row from them (columns.c). */
typedef enum rl_field {
    RL_NO_FIELD = 0, RL_INT_FIELD, RL_DOUBLE_FIELD, RL_TEXT_FIELD, RL_CHARS_FIELD, RL_WHOLE_FIELD,
    RL_BYTES_FIELD,
    RL_RATIO_MEDIAN, RL_RATIO_LO, RL_RATIO_HI /* one part of a ratio function's rl_ratio */
} rl_field;

/* A ratio of two points' times (num / den) and its spread. Two points
 * timed in one group are compared round by round (their samples a round
 * apart at most see the same machine): the median of the rounds' ratios,
 * lo and hi their q1 and q3. Points timed apart: the ratio of the
 * medians, lo and hi the two times at opposite ends of their
 * interquartile ranges (q1 / q3 and q3 / q1), a conservative band for a
 * ratio of two noisy times that drift apart. Charts draw it as the
 * ratio's bars (RL_RATIO_COLUMNS writes <name>, <name>_lo and
 * <name>_hi). NaN where either point was not timed. */
typedef struct rl_ratio {
    double median, lo, hi;
} rl_ratio;

typedef struct rl_column {
    const char *name, *head, *fmt;
    double (*num)(rl_ctx *ctx, const rl_point *p);
    const char *(*str)(rl_ctx *ctx, const rl_point *p, char *buf, size_t len);
    bool measured;
    /* Or a member of the experiment's point data (rl_point.data):
     * RL_INT("n", "n", "%5d", call, n) instead of a function. */
    rl_field field;
    size_t offset;
    /* Or one part (field: RL_RATIO_*) of a ratio: RL_RATIO_COLUMNS. */
    rl_ratio (*ratio)(rl_ctx *ctx, const rl_point *p);
} rl_column;

/* A ratio and its spread as three CSV columns, name, name_lo and name_hi,
 * from one function: RL_RATIO_COLUMNS("speedup_vs_unfused", speedup_of). */
#define RL_RATIO_COLUMNS(name, fn)                                  \
    {name, NULL, NULL, .field = RL_RATIO_MEDIAN, .ratio = fn},      \
    {name "_lo", NULL, NULL, .field = RL_RATIO_LO, .ratio = fn},    \
    {name "_hi", NULL, NULL, .field = RL_RATIO_HI, .ratio = fn}

#define RL_INT(name, head, fmt, type, member) \
    {name, head, fmt, .field = RL_INT_FIELD, .offset = offsetof(type, member)}
#define RL_DOUBLE(name, head, fmt, type, member) \
    {name, head, fmt, .field = RL_DOUBLE_FIELD, .offset = offsetof(type, member)}
#define RL_TEXT(name, head, fmt, type, member) \
    {name, head, fmt, .field = RL_TEXT_FIELD, .offset = offsetof(type, member)}
/* A double that holds a whole number (a count; NaN: none, an empty cell):
 * every digit in the CSV, as RL_INT writes it, not 6 significant ones. */
#define RL_WHOLE(name, head, fmt, type, member) \
    {name, head, fmt, .field = RL_WHOLE_FIELD, .offset = offsetof(type, member)}
/* A number of the point's data that exists only once it is measured:
 * empty (or "-" on the console) before. */
#define RL_DOUBLE_MEASURED(name, head, fmt, type, member) \
    {name, head, fmt, .measured = true, .field = RL_DOUBLE_FIELD, .offset = offsetof(type, member)}
/* Text held in the data itself (a char array), not pointed to. */
#define RL_CHARS(name, head, fmt, type, member) \
    {name, head, fmt, .field = RL_CHARS_FIELD, .offset = offsetof(type, member)}
/* A double that counts bytes, as text ("431 MiB", rl_format_bytes), that
 * exists only once the point is measured. */
#define RL_BYTES_MEASURED(name, head, fmt, type, member) \
    {name, head, fmt, .measured = true, .field = RL_BYTES_FIELD, .offset = offsetof(type, member)}

/* One point's measurement (measure.c). */
typedef struct rl_measurement {
    rl_stats stats;            /* seconds per call of work() */
    rl_stop_reason stop;
    rl_cache_state cache;
    int calls_per_sample;      /* >1 for hot samples of short work */
    double wall_s;
} rl_measurement;

/* ------------------------------------------------------------------------
 * Points (points.c, columns.c): what an experiment declares, and the one
 * pipeline every point goes through: validate on fresh inputs, time each
 * group interleaved, derive the rates, write a row and a console line.
 * ---------------------------------------------------------------------- */
/* The roofs a group's probes measured, as a point of the group sees them:
 * the bandwidth probe of its own access pattern over the group's
 * footprint, and the compute probe; rates from the probes' median, q1 and
 * q3 times (the q1 rate is the slower one), and the point's MBU and MFU
 * against them round by round. NaN where none was measured. */
typedef struct rl_group_roof {
    double gbps, gbps_q1, gbps_q3;
    double probe_bytes;            /* the probe's working set */
    double tflops, tflops_q1, tflops_q3;
    /* The point's rate over the probe's, round by round: the median of
     * those ratios (group_roof.c says why they, not gbps, give MBU), and
     * their q1 and q3, the spread of a paired ratio. */
    double mbu, mfu;
    double mbu_q1, mbu_q3, mfu_q1, mfu_q3;
} rl_group_roof;

/* SKIPPED: not run, for lack of time under --budget (an optional point's
 * row says so; why holds the reason). */
typedef enum rl_point_state {
    RL_POINT_DECLARED = 0, RL_POINT_VALID, RL_POINT_FAILED, RL_POINT_TIMED, RL_POINT_SKIPPED
} rl_point_state;

struct rl_point {
    /* declared by the experiment */
    const kernel_variant *variant; /* NULL when the point is no variant's */
    int group;                     /* timed with the points of the same group; 0: alone */
    /* One call of the measured work: a kernel call (gemv_kernel_call(&c),
     * kernels/common.h), or work of the experiment's own (run(arg): a
     * sequence of calls, such as a model's forward pass). */
    kernel_call call;
    void (*run)(void *arg);
    void *arg;
    /* Validation: one call of check_run(check_arg), or of run(arg) when
     * the call checked is the one timed, into out (poisoned first, unless
     * in_place: the output overwrites the input), compared with want within
     * atol + rtol |want|, or within bound[i] where bound is set. prepare(),
     * when given, runs first: it builds what the call replays, writes fresh
     * inputs, computes want. */
    float *out;
    size_t count;
    const double *want, *bound;
    double atol, rtol;
    kernel_call check_call;        /* or check_run(check_arg) */
    void (*check_run)(void *arg);
    void *check_arg;
    bool in_place;
    void (*prepare)(rl_ctx *ctx, rl_point *p);
    /* Or a check of the experiment's own, for outputs that are not floats
     * (integer end states): true when it passes, else it writes p->why.
     * It may read check_arg, for its own use. */
    bool (*check)(rl_ctx *ctx, rl_point *p);
    bool frees_want; /* want came from rl_host_alloc in prepare: freed after the check */
    /* What one call moves: counted bytes (read + written) and FLOPs, the
     * working set, its access pattern; extra_s: a fixed cost per call the
     * roofline does not see (launches), for the plan only. */
    double bytes, flops, footprint, extra_s;
    rl_pattern pattern;
    /* Its FLOPs are 8-bit integer multiply-adds (VNNI, dp4a), which the
     * compute roof (FP32 or FP16 matrix arithmetic) does not bound: its
     * MFU is NaN, and it never marks that roof as under-measured. */
    bool integer_flops;
    /* No verdict reads it: a point of a chart's sweep between the points
     * the verdicts compare. A run under --budget measures the groups of
     * optional points only as time allows (budget.c); others always. */
    bool optional;
    /* The experiment's own, for its columns: set by RL_POINT_DATA(ptr),
     * read back by RL_DATA(type, p), which checks the size. */
    const void *data;
    size_t data_size;
    int part;                      /* which declared part it belongs to (rl_main) */
    /* filled by the harness */
    rl_point_state state;
    char why[256];                 /* why validation failed */
    double max_abs_err, seconds;   /* seconds: the median per call */
    rl_measurement m;
    rl_group_roof roof;            /* measured beside it; NaN where its group had none */
    /* Its seconds per call in each round of its group's timing, so that
     * two points of one group compare round by round (rl_time_ratio), as
     * a point and its probe do; timing numbers the group timings of a run
     * (0: not timed in a group). */
    const double *round_s;
    int rounds, timing;
};

struct rl_points {
    rl_point *v;
    int n, cap, last_group;
};

/* A row that is no measured point (a model's): the experiment's leading
 * columns, from p's data and FLOPs as a point's row has them; the
 * caller sets the other cells (validated) and ends the row. */
void rl_set_point_columns(rl_ctx *ctx, const rl_point *p);

/* A point's data, typed: .data = c, .data_size = sizeof *c in a point's
 * initializer; and back, RL_DATA(call, p), a const call * (a point of
 * another type is an internal error, said at once). */
#define RL_POINT_DATA(ptr) .data = (ptr), .data_size = sizeof *(ptr)
#define RL_DATA(type, p) ((const type *)rl_point_data((p), sizeof(type), #type))
#define RL_DATA_MUT(type, p) ((type *)rl_point_data((p), sizeof(type), #type))
void *rl_point_data(const rl_point *p, size_t size, const char *type);

bool rl_point_timed(const rl_point *p);
/* Whether the point's variant has this role. */
bool rl_point_has_role(const rl_point *p, const char *role);
/* Lookups for the verdicts, among the timed points: those of a variant with
 * this role (NULL: any) that match(p, key) accepts (NULL: all); the first
 * one, the last one, or the fastest. NULL when none. */
typedef bool (*rl_point_filter)(const rl_point *p, const void *key);
const rl_point *rl_points_find(const rl_points *s, const char *role, rl_point_filter match,
                               const void *key);
const rl_point *rl_points_find_last(const rl_points *s, const char *role, rl_point_filter match,
                                    const void *key);
const rl_point *rl_points_fastest(const rl_points *s, const char *role, rl_point_filter match,
                                  const void *key);
/* ... or the one of the highest score(p), a NaN score the lowest (ties: the first). */
const rl_point *rl_points_best(const rl_points *s, const char *role, rl_point_filter match,
                               const void *key, double (*score)(const rl_point *p));
/* The timed point of this group whose variant has this role, or NULL. */
const rl_point *rl_points_in_group(const rl_points *s, int group, const char *role);
double rl_point_gbps(const rl_point *p);   /* NaN when not timed or no bytes */
double rl_point_tflops(const rl_point *p); /* NaN when not timed or no FLOPs */
rl_roof rl_point_roof(rl_ctx *ctx, const rl_point *p);
/* The bandwidth roof the point is judged against, GB/s: its group's probe
 * where it had one, else the run-start ladder's rung. */
double rl_point_roof_gbps(rl_ctx *ctx, const rl_point *p);
/* MBU against the same roof: a mixed roof's spill rung where no probe
 * measured the group (rl_roof). */
double rl_point_mbu(rl_ctx *ctx, const rl_point *p);
/* That MBU and its spread, for a claim judged on it with
 * rl_judge_ratio_given: the q1 and q3 of the rounds' ratios to the group's
 * probe, or, without rounds, the point's q3 and q1 times over the probe's
 * q1 and q3 rates (lo, hi). A threshold on a lone median turns with the
 * noise; on the spread it degrades to "not measured". */
rl_ratio rl_point_mbu_spread(rl_ctx *ctx, const rl_point *p);
double rl_point_mfu(rl_ctx *ctx, const rl_point *p);
/* MFU and its spread, as rl_point_mbu_spread, against the group's
 * compute probe where it had one. */
rl_ratio rl_point_mfu_spread(rl_ctx *ctx, const rl_point *p);
/* A ratio and its spread times k (a fraction as %), or inverted (1/MBU:
 * the time over the roof's time): lo and hi stay the low and high ends. */
rl_ratio rl_ratio_scaled(rl_ratio r, double k);
rl_ratio rl_ratio_inverse(rl_ratio r);
/* Which roof the point's MBU was taken against, for a verdict's note:
 * "the group's read probe (234 MiB)", "the run-start ladder's DRAM
 * read rung (the working set spills from the L2)". */
void rl_point_roof_text(rl_ctx *ctx, const rl_point *p, char *buf, size_t len);

/* A console table of rows that are not points (summaries, models), with
 * the header and the rows from one column list, so they cannot disagree:
 * a heading and a printf conversion each ("%8.1f", "%-13s", "%5d"), ended
 * by {0}. A row passes one value per column: a double for f, g or e, an
 * int for d, a string for s. A NaN, NULL or empty value prints "-". */
typedef struct rl_grid_column { const char *head, *fmt; } rl_grid_column;
void rl_grid_header(const rl_grid_column *cols);
void rl_grid_row(const rl_grid_column *cols, ...);

/* Ready-made columns: {"variant", "variant", "%-20s", .str = rl_col_variant}. */
const char *rl_col_variant(rl_ctx *ctx, const rl_point *p, char *buf, size_t len);
const char *rl_col_level(rl_ctx *ctx, const rl_point *p, char *buf, size_t len);
double rl_col_number(rl_ctx *ctx, const rl_point *p);
double rl_col_time_us(rl_ctx *ctx, const rl_point *p);
double rl_col_time_ms(rl_ctx *ctx, const rl_point *p);
double rl_col_max_abs_err(rl_ctx *ctx, const rl_point *p); /* the validation's */
double rl_col_gbps(rl_ctx *ctx, const rl_point *p);
double rl_col_tflops(rl_ctx *ctx, const rl_point *p);
double rl_col_mbu(rl_ctx *ctx, const rl_point *p);
double rl_col_mfu(rl_ctx *ctx, const rl_point *p);
/* The point's GB/s over fixed rungs, whatever level its working set lives
 * in: the headline device-memory roof (copy_gbps) and the DRAM read rung. */
double rl_col_vs_copy(rl_ctx *ctx, const rl_point *p);
double rl_col_vs_dram_read(rl_ctx *ctx, const rl_point *p);
/* Two points' rl_ratio (its comment is at rl_ratio). */
rl_ratio rl_time_ratio(const rl_point *num, const rl_point *den);
/* num[k] / den[k] over n paired samples: the median, q1 and q3 (NaN for
 * n < 1). */
rl_ratio rl_round_ratio(const double *num, const double *den, int n);
/* No ratio (yet): what a point's rl_ratio member starts as (NAN: <math.h>). */
#define RL_RATIO_NONE ((rl_ratio){NAN, NAN, NAN})
double rl_col_bytes(rl_ctx *ctx, const rl_point *p);
double rl_col_flops(rl_ctx *ctx, const rl_point *p);
double rl_col_footprint(rl_ctx *ctx, const rl_point *p);
double rl_col_cache_resident(rl_ctx *ctx, const rl_point *p);
double rl_col_ai(rl_ctx *ctx, const rl_point *p); /* arithmetic intensity, FLOP/B */
/* The roofline's attainable TFLOP/s at the point's intensity, under the
 * compute roof and the roof of the level its working set lives in. */
double rl_col_attainable(rl_ctx *ctx, const rl_point *p);
#define RL_COLUMN_VARIANT {"variant", "variant", "%-20s", .str = rl_col_variant}
#define RL_COLUMN_NUMBER {"number", NULL, NULL, .num = rl_col_number}
#define RL_COLUMN_TIME_US {NULL, "time/us", "%11.2f", .num = rl_col_time_us, .measured = true}
#define RL_COLUMN_GBPS {NULL, "GB/s", "%9.1f", .num = rl_col_gbps, .measured = true}
#define RL_COLUMN_TFLOPS {NULL, "TFLOP/s", "%8.3f", .num = rl_col_tflops, .measured = true}
#define RL_COLUMN_LEVEL {NULL, "level", "%-8s", .str = rl_col_level}
#define RL_COLUMN_MBU {NULL, "MBU", "%6.2f", .num = rl_col_mbu, .measured = true}
#define RL_COLUMN_MFU {NULL, "MFU", "%6.3f", .num = rl_col_mfu, .measured = true}
/* The CSV columns of a wave model (rl_models.h) held in the point's data:
 * tile_m, tile_n, tiles, units, blocks_per_unit, waves, wave_efficiency. */
#define RL_WAVE_MODEL_COLUMNS(type, member)                                 \
    RL_DOUBLE("tile_m", NULL, NULL, type, member.tile_m),                   \
    RL_DOUBLE("tile_n", NULL, NULL, type, member.tile_n),                   \
    RL_DOUBLE("tiles", NULL, NULL, type, member.tiles),                     \
    RL_DOUBLE("units", NULL, NULL, type, member.units),                     \
    RL_DOUBLE("blocks_per_unit", NULL, NULL, type, member.blocks_per_unit), \
    RL_DOUBLE("waves", NULL, NULL, type, member.waves),                     \
    RL_DOUBLE("wave_efficiency", NULL, NULL, type, member.efficiency)
#ifdef __cplusplus
}
#endif
#endif /* RL_POINTS_H */

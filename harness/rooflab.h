/*
 * rooflab.h -- what an experiment includes: the experiment API.
 *
 * An experiment declares, and the harness does. Its program is an
 * rl_experiment (claim, columns, claims, the kernel families it compares,
 * options: --help, --list and --variant come free) with a declare and a
 * judge function, and one line of main: rl_main (run.c, "One way in"
 * below) parses the command line, calls declare once (the parts and
 * points: what runs, the bytes and FLOPs it moves, how to validate it,
 * its group of compared variants), prints the plan, validates every point
 * against a CPU reference on fresh random inputs, times each group
 * interleaved, writes the CSV rows and the console table from the
 * declared columns (GB/s, MBU and MFU against the measured roofs), calls
 * judge (rl_judge*: the verdicts of the declared claims), and ends: the
 * CSV committed, the charts drawn, the verdicts printed.
 *
 * The harness knows nothing of any experiment; kernels know nothing of the
 * harness. Other audiences: rl_library.h (statistics, CSV, CLI, validation:
 * tools and tests), rl_models.h (roofline and wave models), internal.h
 * (the harness's own files, and tests of them), probes/rl_probes.h (duty
 * cycles, OS busy time, NVML). Plain C11, usable from .c and .cu files.
 */
#ifndef ROOFLAB_H
#define ROOFLAB_H

#include "common.h" /* kernels/: the variant tables */
#include "rl_library.h"
#include "rl_models.h"

#ifdef __cplusplus
extern "C" {
#endif
/* ------------------------------------------------------------------------
 * The experiment context (context.c)
 * ---------------------------------------------------------------------- */
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

/* A ratio of two points' median times (num / den) and its spread: lo and
 * hi put the two times at opposite ends of their interquartile ranges
 * (q1 / q3 and q3 / q1), a conservative band for a ratio of two noisy
 * times. Charts draw it as the ratio's bars (RL_RATIO_COLUMNS writes
 * <name>, <name>_lo and <name>_hi). NaN where either point was not timed. */
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

/* A claim, declared once: the verdict's id and text, the range in which it
 * holds (+-INFINITY: no bound), how its value prints, and whether it is a
 * utilization (then "not measured" while a roof stays under-measured). The
 * prediction, the predicted column and the check all come from it. */
typedef struct rl_claim {
    const char *id, *text;
    double lo, hi;
    const char *unit;           /* "x", "%", "FLOP/B", "" */
    int digits;
    bool on_ceiling;
    const char *predicted_text; /* instead of the range's text, e.g. "within +-15 %" */
    /* A count or a model, not a timing: judged even on a busy host (every
     * other claim is "not measured (busy host)" there, claims.c). */
    bool counted;
    /* A claim about memory-bound points: judged only where each point it
     * compares reads at least this fraction of its roof (0: no premise). */
    double premise_mbu;
} rl_claim;

/* The standard rate columns a point's row gets. */
enum { RL_RATES_BANDWIDTH = 1, RL_RATES_COMPUTE = 2 };

/* Roofs measured beside the points they judge (group_roof.c): a group
 * with a point that moves bytes gets a bandwidth probe over the group's
 * footprint (a read stream, and the points' own pattern where they also
 * write); a group with a point that may be compute-bound (arithmetic
 * intensity at least a quarter of the ridge) gets a compute probe. Each
 * probe is timed interleaved with the group's points, sample by sample,
 * and MBU and MFU are taken against it. */
enum { RL_PROBE_BANDWIDTH = 1, RL_PROBE_COMPUTE = 2 };

typedef struct rl_experiment {
    const char *id;         /* "05" */
    const char *slug;       /* "05-fusion": the folder under experiments/ */
    const char *title;
    const char *claim;
    const char *source;
    const char *prediction; /* said before the claims' ranges, or NULL */
    const rl_claim *claims; /* ended by a zero row */
    const kernel_family *const *families; /* NULL-terminated: --list and --variant */
    /* The CSV of points: leading columns (what a point is), the measurement,
     * the rates, derived columns (computed from the measured points), then
     * validated, max_abs_err, skipped_reason. The console table, apart. */
    const rl_column *columns, *derived, *table;
    int rates;
    int probes; /* RL_PROBE_*: the roofs its groups carry (0: the run-start ladder only) */
    /* Its points are observed by the experiment (a load held while a tool
     * is read), not timed by the harness: no measurement columns, no
     * max_abs_err; it calls rl_points_validate, then rl_point_observed. */
    bool observed;
    const rl_option *options;    /* NULL-terminated array, or NULL */
    rl_cache_state default_cache; /* RL_HOT or RL_COLD: never left unset */
    /* For comparing runs (make compare): the columns that identify a point
     * across runs, e.g. "op,variant,k,n", and the column whose ratio is
     * reported, e.g. "time_us_median". Written to the CSV header. */
    const char *compare_keys;
    const char *compare_value;
    /* The experiment's code, which rl_main calls (see "One way in" below):
     * declare its metadata, parts and points, once; judge the claims from
     * every point once all are measured (NULL: its parts judge); observe
     * one valid point (an observed experiment only). */
    void (*declare)(rl_ctx *ctx);
    void (*judge)(rl_ctx *ctx, const rl_points *all);
    void (*observe)(rl_ctx *ctx, rl_point *p);
    /* Reads and checks the experiment's own options (rl_option_number)
     * before anything is measured, so that a usage error exits at once,
     * not after the ceilings; NULL: nothing to check. */
    void (*read_options)(rl_ctx *ctx);
} rl_experiment;

typedef struct rl_ctx_private rl_ctx_private;

struct rl_ctx {
    const rl_experiment *exp;
    rl_args args;
    rl_backend *be;
    rl_backend_kind kind;
    const rl_device_info *dev;
    rl_stop_rule rule;          /* RL_STOP_FULL or RL_STOP_QUICK */
    char label[64];
    char csv_path[512];
    int failures;               /* kernels that failed validation */
    rl_ctx_private *priv;
};

/* The largest working set a point may have: --max-bytes, or the mode's
 * default (quick 256 MiB, lab 3 GiB, full 8 GiB), at most a quarter of the
 * device's memory. Sweeps stop below it; a claim about device memory that
 * the cap keeps in the cache is judged against the cache, and says so. */
double rl_max_bytes(const rl_ctx *ctx);
/* The units a device runs work on side by side: its SMs on a GPU, its
 * hardware threads on the CPU (which stand in for SMs in a wave model). */
int rl_units(const rl_ctx *ctx);
/* An experiment's own numeric option, checked: a number in [lo, hi]
 * (integer: a whole one), else a usage error that names the option and its
 * valid values, with the option's other words when it has some ("exp-03:
 * --layers wants a whole number 1..32 or auto, not '0'"). */
double rl_option_number(const rl_ctx *ctx, const char *name, const char *value, double lo,
                        double hi, bool integer, const char *or_words);

/* Whether an experiment's option that picks one thing or "all" (--shape,
 * --op) picks the one named. */
bool rl_option_is(const char *value, const char *name);

/* A fresh seed for each input set, derived from --seed. */
uint64_t rl_next_seed(rl_ctx *ctx);
/* Fresh random inputs on the host (rl_host_free them): n values uniform in
 * [lo, hi) from the next seed, as floats or as FP16 bits. */
float *rl_host_random(rl_ctx *ctx, size_t n, float lo, float hi);
uint16_t *rl_host_random_f16(rl_ctx *ctx, size_t n, float lo, float hi);

/* Metadata for the CSV header; call before the first row. */
void rl_meta(rl_ctx *ctx, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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
/* The level whose rung judges a point moving gbps on this roof, and that
 * rung's GB/s: roof->judged, or on a mixed roof whose spill rung the point
 * beats by more than 5 %, the level's own (roof->level, cached_gbps). */
rl_level rl_roof_rung(const rl_roof *roof, double gbps);
double rl_roof_rung_gbps(const rl_roof *roof, double gbps);
/* Whether a working set is at least 4x the last-level cache (the curve's,
 * where the ceilings found it; else the reported one): what a claim
 * about device memory needs (cache_resident is the opposite). */
bool rl_beyond_cache(const rl_ctx *ctx, double footprint_bytes);
/* How many copies of a buffer a call should rotate through so that it is
 * read from device memory: enough to span 4x the last-level cache, as many
 * as --max-bytes allows, at least one. */
int rl_copies_beyond_cache(const rl_ctx *ctx, double buffer_bytes);

/* ------------------------------------------------------------------------
 * Measurement (measure.c)
 * ---------------------------------------------------------------------- */
typedef struct rl_measurement {
    rl_stats stats;            /* seconds per call of work() */
    rl_stop_reason stop;
    rl_cache_state cache;
    int calls_per_sample;      /* >1 for hot samples of short work */
    double wall_s;
} rl_measurement;

/* The host's time to issue work(arg) without waiting for it (launches on
 * rl_stream()): the median of 8 calls (32 outside a quick run), the device
 * synchronized after each, off the clock. */
double rl_issue_s(rl_ctx *ctx, void (*work)(void *), void *arg);

/* Rows of the experiment's CSV. */
void rl_set_str(rl_ctx *ctx, const char *column, const char *value);
void rl_set_num(rl_ctx *ctx, const char *column, double value);
void rl_set_int(rl_ctx *ctx, const char *column, long long value);
void rl_end_row(rl_ctx *ctx);

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
     * those ratios (group_roof.c says why they, not gbps, give MBU). */
    double mbu, mfu;
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
double rl_point_mfu(rl_ctx *ctx, const rl_point *p);
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
/* Two points' rl_ratio (its comment is at rl_field). */
rl_ratio rl_time_ratio(const rl_point *num, const rl_point *den);
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

/* ------------------------------------------------------------------------
 * One way in (run.c): the one path every experiment takes.
 *
 *   int main(int argc, char **argv) { return rl_main(&EXP05, argc, argv); }
 *
 * rl_main parses the command line (rl_begin), calls exp->read_options when
 * given, measures the ceilings, calls exp->declare once, and then does the
 * rest itself:
 *   1. declare adds metadata (rl_meta), parts (rl_part_add) and their
 *      points (rl_point_add). Nothing runs: a part's buffers do not exist
 *      yet, so a point says what it will run, not on what;
 *   2. the plan of every declared point is printed (how long the run takes);
 *   3. each part in turn: open() makes its buffers and inputs, its points
 *      are validated on fresh inputs, each group is timed interleaved (or,
 *      for an observed experiment, each valid point goes to exp->observe),
 *      measured() (what a row needs besides its times), its rows and
 *      console table are written, then done() (its verdicts, freeing its
 *      buffers);
 *   4. exp->judge(ctx, every point), then rl_end: the CSV, the verdicts,
 *      the charts.
 * ---------------------------------------------------------------------- */
int rl_main(const rl_experiment *exp, int argc, char **argv);

/* A part of a run: points that share buffers (a shape, a size, a test).
 * Every callback may be NULL; state is the part's own. */
typedef struct rl_part {
    void (*open)(rl_ctx *ctx, void *state);
    void (*done)(rl_ctx *ctx, const rl_points *pts, void *state); /* pts: the part's */
    void *state;
    const rl_column *table; /* its console table; NULL: the experiment's */
    const char *heading;    /* printed above its table, or NULL */
    /* Once its points are timed (or observed), before their rows are
     * written, its buffers still open: what a row needs that timing does
     * not give and a column cannot compute (exp-06: the host's cost to
     * issue a timed chain, measured on the chain's own buffers). */
    void (*measured)(rl_ctx *ctx, rl_points *pts, void *state);
} rl_part;

/* In declare: a new part; the points added after it are its points. */
void rl_part_add(rl_ctx *ctx, const rl_part *part);
/* A point of the current part (a first part is opened if none was); the
 * pointer stays valid until the next add. */
rl_point *rl_point_add(rl_ctx *ctx, const rl_point *p);
/* A fresh group number: points of one group are timed together. */
int rl_group_new(rl_ctx *ctx);
/* Every point declared so far (after rl_main's runs: measured), for
 * derived columns that compare a point with another. */
const rl_points *rl_points_all(const rl_ctx *ctx);
/* Zeroed memory that lives until the run ends, for what points point to
 * (their data, their kernel calls): call *c = RL_NEW(ctx, call). */
void *rl_keep(rl_ctx *ctx, size_t bytes);
#define RL_NEW(ctx, type) ((type *)rl_keep((ctx), sizeof(type)))
/* In declare: this run is a side benchmark (exp-03's --matrix): its rows
 * are printed, and no CSV, verdict or chart is written; its points carry
 * no roof probes (--roofs start). */
void rl_discard_results(rl_ctx *ctx);

/* ------------------------------------------------------------------------
 * Inputs drawn when first needed (random.c)
 * ---------------------------------------------------------------------- */
/* A matrix of random inputs that points share, declared by its count and
 * drawn at its first rl_input_on (a point's prepare), so that a plan can
 * declare points on inputs it never draws: values in [-1, 1] (rl_next_seed)
 * on the host, for references, made exact in a narrower format by exact
 * (NULL: as drawn), and their FP32 copy on the device. */
typedef void rl_convert_fn(void *dst, const float *src, size_t n, struct CUstream_st *stream);
typedef struct rl_input {
    size_t count;
    void (*exact)(float *x, size_t n);
    float *host, *dev;
    void *converted; /* the device copy in a variant's own format, made once */
} rl_input;

/* The device copy, or (convert given) that copy converted once into
 * bytes-per-value values: one such format per input. */
const void *rl_input_on(rl_ctx *ctx, rl_input *in, int bytes, rl_convert_fn *convert);
/* Frees what was drawn; the input can be drawn again. */
void rl_input_free(rl_ctx *ctx, rl_input *in);

/* ------------------------------------------------------------------------
 * Variants (variants.c): the families an experiment names in its
 * rl_experiment. --list and a bad --variant are handled by rl_begin.
 * ---------------------------------------------------------------------- */
/* This run's backend as the variant tables name it: KERNEL_CPU or KERNEL_CUDA. */
int rl_kernel_backend(const rl_ctx *ctx);
/* The row has this run's backend and --variant selects it. */
bool rl_runs(const rl_ctx *ctx, const kernel_family *f, const kernel_variant *v);
/* The row's launcher (or ops) on this run's backend: row->cuda or row->cpu. */
#define RL_LAUNCHER(ctx, row) ((ctx)->kind == RL_CUDA ? (row)->cuda : (row)->cpu)
/* One of three values by the run's mode (--quick, lab, --full). */
#define RL_BY_MODE(ctx, quick, lab, full)                                                \
    ((ctx)->args.mode == RL_MODE_QUICK ? (quick) : (ctx)->args.mode == RL_MODE_LAB ? (lab) : (full))
/* The first row with this role that runs here, or NULL. */
const kernel_variant *rl_variant_by_role(const rl_ctx *ctx, const kernel_family *f, const char *role);

/* ------------------------------------------------------------------------
 * Verdicts (verdict.c)
 * ---------------------------------------------------------------------- */
/* RL_PREMISE_NOT_MET: the points were measured, but not under the claim's
 * premise (a memory-bound claim whose points are far below their roof, a
 * baseline slower than its bytes allow): the claim is not judged, and the
 * note names the point and what it measured. Counted apart everywhere. */
typedef enum rl_verdict_status {
    RL_HOLDS, RL_DOES_NOT_HOLD, RL_NOT_MEASURED, RL_PREMISE_NOT_MET,
    RL_NOT_MEASURED_BUSY /* "not measured (busy host)": other processes took the CPUs */
} rl_verdict_status;

/* A declared claim judged on a value (NaN: not measured); scope, when
 * given, is added to its id ("_cos") and text (" (cos)"). _within: with
 * a range known only at run time; _status: a verdict decided by the
 * experiment, from a measurement that is not one number. */
void rl_judge(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, const char *note);
void rl_judge_within(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, double lo,
                     double hi, const char *note);
void rl_judge_status(rl_ctx *ctx, const rl_claim *c, const char *scope, const char *measured,
                     rl_verdict_status status, const char *note);
/* A claim's premise (premise.c), checked on the points it compares before
 * it is judged: start, add each check, then judge _given it, which says
 * "premise not met" with the first unmet check's reason, or judges. */
typedef struct rl_premise {
    bool met;          /* false: the claim is not judged */
    bool met_to_fail;  /* false: it may hold, but a "does not hold" is not judged */
    char why[512], why_to_fail[512];
} rl_premise;
rl_premise rl_premise_start(void);
/* p (what: its name in the note) reads at least c->premise_mbu of its roof. */
void rl_premise_memory_bound(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *p,
                             const char *what);
/* The same, for the point that must be fast enough for a lower bound (a
 * speedup of at least x): below its roof it can only make the claim fail,
 * so only a "does not hold" waits for it; a "holds" stands, because a
 * faster p would widen the margin. */
void rl_premise_memory_bound_to_fail(rl_ctx *ctx, rl_premise *pr, const rl_claim *c,
                                     const rl_point *p, const char *what);
/* fast's speedup over baseline (their times' ratio) no larger than their
 * bytes' ratio allows beyond its noise band (its lo-hi, at least 5 %): a
 * larger one means the baseline, not the bytes, set it. */
void rl_premise_within_bytes(rl_premise *pr, const rl_point *baseline, const rl_point *fast,
                             const char *what);
/* An upper bound on p's MFU (bound: a fraction of the compute peak)
 * presumes that the ridge at p's memory roof leaves room under it: read
 * at that roof, p would use its AI over that ridge of the peak (MFU over
 * MBU). Where that alone reaches the bound, no memory-bound kernel can
 * meet it and a faster one fails it sooner: the bound is the machine's
 * ridge, not the claim. */
void rl_premise_room_under_mfu(rl_ctx *ctx, rl_premise *pr, const rl_point *p, double bound,
                               const char *what);
/* A claim on a short call's MBU presumes that its bytes at its roof
 * (rl_point_roof_gbps) take at least `multiple` times its fixed cost:
 * launches (GPU kernel launches, CPU parallel regions) per call, each
 * launch_s (an empty one's time, measured in the same run: launch_what
 * says how, for the note). Where they do not, the launch sets the time,
 * not the bytes; where launch_s is not known (NaN, 0), neither is the
 * premise, and the claim is not judged either. */
void rl_premise_outlasts_fixed_cost(rl_ctx *ctx, rl_premise *pr, const rl_point *p, double launches,
                                    double launch_s, double multiple, const char *what,
                                    const char *launch_what);
void rl_judge_given(rl_ctx *ctx, const rl_claim *c, const char *scope, double value,
                    const rl_premise *pr, const char *note);
/* rl_judge_given with a range known only at run time, as rl_judge_within. */
void rl_judge_within_given(rl_ctx *ctx, const rl_claim *c, const char *scope, double value,
                           double lo, double hi, const rl_premise *pr, const char *note);
void rl_judge_status_given(rl_ctx *ctx, const rl_claim *c, const char *scope, const char *measured,
                           rl_verdict_status status, const rl_premise *pr, const char *note);
/* RL_HOLDS when lo <= x <= hi; RL_NOT_MEASURED when x or a bound is NaN. */
rl_verdict_status rl_within(double x, double lo, double hi);

/* ------------------------------------------------------------------------
 * Progress line (progress.c): on stderr, only when stderr is a terminal.
 * ---------------------------------------------------------------------- */
void rl_progress_step(rl_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rl_progress_clear(void);
/* A message on the progress line that is not a step ("encoding L0.q"). */
void rl_progress_note(rl_ctx *ctx, const char *msg);

/* Work outside the points that the plan should count (building inputs,
 * encoding weights, an observed point's hold), in declare: its expected
 * seconds. */
void rl_plan_fixed(rl_ctx *ctx, double seconds);
/* Under --budget, the factor (at most 1) by which fixed work of want_s
 * seconds must shrink to fit the time left (an observed experiment's holds);
 * 1 without a budget. */
double rl_budget_fit(const rl_ctx *ctx, double want_s);

/* ------------------------------------------------------------------------
 * Tuning (tuning.c): a kernel's shape chosen on this machine from a few
 * candidates, once per machine and signature, cached in tuning.csv
 * beside ceilings.csv (--retune: timed again). --quick and --budget
 * runs use a cached choice or the default, and time nothing.
 * ---------------------------------------------------------------------- */
typedef struct rl_tune {
    const char *key;       /* "tuning_q8": its row in tuning.csv, its metadata key */
    const char *what;      /* "q8's integer decode": the console's words for it */
    const char *signature; /* what the choice depends on besides the machine */
    int n, fallback;       /* candidates; the default's index, kept unless beaten by 3 % */
    void (*name)(void *state, int i, char *buf, size_t len); /* candidate i in words */
    void (*set)(void *state, int i);                         /* make i the kernel's shape */
    bool (*check)(void *state, char *why, size_t len);       /* validate the shape set */
    void (*call)(void *state);                               /* one call, as timed */
    /* Optional: build the inputs check and call need, only when the
     * candidates are timed (not for a cached choice or a default). */
    void (*prepare)(void *state);
    void *state;
} rl_tune;
/* Sets and returns the candidate chosen, and prints and records it (no
 * field may hold a comma). Each candidate is validated before it is
 * timed; one that fails is never chosen. */
int rl_tune_choose(rl_ctx *ctx, const rl_tune *t);

/* The CPU decode kernels' shapes (kernels/cpu/decode_shapes.h), chosen
 * through rl_tune_choose (tune_decode.c): on the CPU backend the FP16
 * GEMV's rows per step and prefetch distance (key tuning_f16), and with
 * integer_formats each integer format's rows and prefetch distance
 * (tuning_q8 ... tuning_q2), timed on a matrix read from DRAM. Nothing on
 * the GPU. */
void rl_tune_decode_cpu(rl_ctx *ctx, bool integer_formats);
/* The same, timed on one hot rows x k matrix instead (exp-03 --matrix
 * --cache hot, and a cache-sized model): a matrix that fits a cache may
 * want another shape than one read from DRAM, so its choice is cached
 * under its own keys (tuning_f16_4096x14336_hot ...). rows = 0:
 * rl_tune_decode_cpu. */
void rl_tune_decode_cpu_at(rl_ctx *ctx, bool integer_formats, int rows, int k);

#ifdef __cplusplus
}
#endif
#endif /* ROOFLAB_H */

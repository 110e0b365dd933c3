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
 * harness. What an experiment sees is this file and the rooms it
 * includes: rl_roofs.h (the ceilings, a working set's roof), rl_points.h
 * (columns, points, their lookups), rl_axes.h (a sweep's axes), rl_verdicts.h (claims, verdicts,
 * premises), rl_library.h (memory, statistics, tables, helpers) and
 * rl_models.h (roofline and wave models). Other audiences have rooms of
 * their own, which experiments do not include: rl_measure.h,
 * rl_backend.h, rl_process.h, rl_host.h, rl_csv.h and rl_occupancy.h
 * (the library beneath the pipeline: tools and tests), internal.h (the
 * harness's own files, and tests of them, with rl_curve.h and
 * rl_diagnose.h), probes/rl_probes.h (duty
 * cycles, the host's load, the observer: experiments 01 and 06) and
 * probes/rl_sensors.h beneath it (intervals, /proc, NVML). Plain C11,
 * usable from .c and .cu files.
 */
#ifndef ROOFLAB_H
#define ROOFLAB_H

#include "common.h" /* kernels/: the variant tables */
#include "rl_library.h"
#include "rl_models.h"
#include "rl_roofs.h"    /* the ceilings and a working set's roof */
#include "rl_points.h"   /* columns, points and their lookups */
#include "rl_verdicts.h" /* claims and verdicts */
#include "rl_axes.h"     /* a sweep's axes and their combinations */

#ifdef __cplusplus
extern "C" {
#endif
/* ------------------------------------------------------------------------
 * The experiment and its context (context.c)
 * ---------------------------------------------------------------------- */

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


/* ------------------------------------------------------------------------
 * Measurement (measure.c) and the experiment's own rows
 * ---------------------------------------------------------------------- */
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
/* Of that fixed work, `seconds` may shrink under --budget to least_s and
 * still serve every verdict (an observed experiment's holds down to the
 * window its readings need): the least time the budget's plan says its
 * verdicts need counts least_s. Nothing without a budget. */
void rl_plan_fixed_least(rl_ctx *ctx, double seconds, double least_s);
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
/* The FP16 GEMV's rows per step and prefetch distance for a matrix of
 * rows of k inputs read from DRAM, chosen as rl_tune_decode_cpu chooses
 * (cached under tuning_f16_k<k>; tuning_f16 at k = 4096) and set: rows
 * of another length can want another shape (experiment 02's README, "What
 * bounds the F16 GEMV", has a machine where they do). An experiment with
 * several shapes keeps each one's and sets it before the shape's points
 * (rl_weights.gemv_shape, rl_f16_shape_set). Rows 0 (the GPU): nothing. */
typedef struct rl_f16_shape {
    int rows, prefetch;
} rl_f16_shape;
rl_f16_shape rl_tune_f16_dram(rl_ctx *ctx, int k);
void rl_f16_shape_set(rl_f16_shape shape);

#ifdef __cplusplus
}
#endif
#endif /* ROOFLAB_H */

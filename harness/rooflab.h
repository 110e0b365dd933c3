/*
 * rooflab.h -- the one public header of the measurement harness.
 *
 * An experiment is a short C program that
 *   1. calls rl_begin() with its description (claim, columns, options),
 *   2. allocates buffers on the chosen backend (CUDA or CPU) with rl_alloc(),
 *   3. validates each kernel against a CPU reference (rl_validate_f32()),
 *   4. times it with rl_measure() and writes one CSV row per point,
 *   5. states verdicts with rl_verdict(),
 *   6. returns rl_end(), which commits the CSV, draws the charts and prints
 *      the verdict table.
 *
 * The harness knows nothing of any experiment; kernels know nothing of the
 * harness. Everything here is plain C11, usable from .c and .cu files.
 */
#ifndef ROOFLAB_H
#define ROOFLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Exit codes (documented in the README; every binary uses them).
 * ---------------------------------------------------------------------- */
enum {
    RL_EXIT_OK = 0,      /* it ran; a claim that does not hold is a result */
    RL_EXIT_FAILED = 1,  /* a kernel failed validation, or the device failed */
    RL_EXIT_USAGE = 2,   /* bad command line */
    RL_EXIT_NO_GPU = 77  /* needs a GPU and there is none (automake's "skip") */
};

/* ------------------------------------------------------------------------
 * Statistics and the adaptive stop rule (stats.c)
 * ---------------------------------------------------------------------- */
typedef struct rl_stats {
    int samples;
    double median, q1, q3, min, max, mean;
    double rel_stddev; /* sample standard deviation / mean */
} rl_stats;

/* Statistics of n values (n >= 1). Sorts a private copy; x is untouched. */
rl_stats rl_stats_of(const double *x, int n);

typedef struct rl_stop_rule {
    int min_samples;
    double min_time_s;  /* measured time (sum of samples) before stopping */
    double max_noise;   /* relative standard deviation target, 0.005 = 0.5 % */
    double timeout_s;   /* wall time for the point, preparation included */
} rl_stop_rule;

extern const rl_stop_rule RL_STOP_FULL;  /* 10 samples, 0.5 s, 0.5 %, 15 s */
extern const rl_stop_rule RL_STOP_QUICK; /*  3 samples, 0.05 s, 5 %, 2 s: a smoke test */

typedef enum rl_stop_reason {
    RL_CONTINUE = 0,
    RL_STOP_NOISE,     /* relative stddev reached the target */
    RL_STOP_CONVERGED, /* noisier than the target, but the mean is known to it */
    RL_STOP_TIMEOUT,   /* wall-time budget spent */
    RL_STOP_CAP        /* sample buffer full */
} rl_stop_reason;

const char *rl_stop_reason_name(rl_stop_reason r);

/* Running state of one measurement: Welford's mean and variance, so that
 * the stop rule is O(1) per sample. */
typedef struct rl_sampler {
    const rl_stop_rule *rule;
    double *samples; /* seconds, one per sample */
    int n, cap;
    double mean, m2, sum;
} rl_sampler;

void rl_sampler_init(rl_sampler *s, const rl_stop_rule *rule, double *buf, int cap);
void rl_sampler_add(rl_sampler *s, double seconds);
double rl_sampler_noise(const rl_sampler *s);
rl_stop_reason rl_sampler_done(const rl_sampler *s, double elapsed_wall_s);

/* ------------------------------------------------------------------------
 * Backends and devices (backend.c, backend_cpu.c, backend_cuda.cu)
 * ---------------------------------------------------------------------- */
typedef enum rl_backend_kind { RL_CPU = 0, RL_CUDA = 1 } rl_backend_kind;
const char *rl_backend_name(rl_backend_kind k);

typedef struct rl_datasheet rl_datasheet; /* see models */

typedef struct rl_device_info {
    rl_backend_kind kind;
    char name[256];       /* "NVIDIA H200" or the CPU model */
    char slug[64];        /* "h200", "cpu-amd-epyc": the default label */
    /* GPU */
    int sm_count, cc_major, cc_minor;
    double sm_clock_mhz, mem_clock_mhz; /* peak, from cudaDeviceGetAttribute */
    int mem_bus_bits;
    double mem_bytes;
    double theoretical_gbps; /* 2 x memory clock x bus width (DDR) */
    char driver[48], runtime[32];
    char nvml[160];          /* what NVML said, or why it is unavailable */
    /* CPU */
    int cores, threads;
    double l1d_bytes, l2_bytes, l3_bytes;
    /* both: the cache a "cold" measurement must defeat (GPU L2, CPU LLC) */
    double llc_bytes;
    const rl_datasheet *datasheet; /* NULL when the device is not in the table */
} rl_device_info;

typedef struct rl_backend rl_backend;

/* Opens a backend on a device. Returns NULL and a reason when it is not
 * available (built without nvcc, no driver, no device, bad index). */
rl_backend *rl_backend_open(rl_backend_kind kind, int device, char *why, size_t whylen);
void rl_backend_close(rl_backend *be);
bool rl_gpu_available(int device, char *why, size_t whylen);

const rl_device_info *rl_device(const rl_backend *be);
rl_backend_kind rl_kind(const rl_backend *be);

/* Memory on the backend's device ("device memory" is host memory on the
 * CPU backend, allocated aligned and first-touched by the worker threads). */
void *rl_alloc(rl_backend *be, size_t bytes);
void rl_free(rl_backend *be, void *p);
void rl_upload(rl_backend *be, void *dst, const void *src, size_t bytes);
void rl_download(rl_backend *be, void *dst, const void *src, size_t bytes);
/* Fills with 0xFF bytes: NaN as float, so an unwritten output fails. */
void rl_poison(rl_backend *be, void *p, size_t bytes);
void rl_sync(rl_backend *be);
/* The stream kernels must be launched on (CUDA); NULL on the CPU. This is
 * the same type as cudaStream_t, spelled so that C can carry it. */
struct CUstream_st *rl_stream(rl_backend *be);

/* Page-aligned host memory; aborts with a message when out of memory. */
void *rl_host_alloc(size_t bytes);
void rl_host_free(void *p);

/* ------------------------------------------------------------------------
 * Random inputs and validation (random.c, validate.c)
 * ---------------------------------------------------------------------- */
/* Deterministic for a seed, whatever the thread count. */
void rl_fill_uniform(float *x, size_t n, float lo, float hi, uint64_t seed);
void rl_fill_uniform_f64(double *x, size_t n, double lo, double hi, uint64_t seed);

typedef struct rl_check {
    bool ok;
    size_t n, bad, nonfinite; /* nonfinite: NaN/Inf, unwritten outputs too */
    size_t first_bad;
    float got_at_first_bad;
    double want_at_first_bad;
    double max_abs_err, rel_l2_err;
} rl_check;

/* Every element: |got - want| <= atol + rtol * |want|, and finite. */
rl_check rl_compare_f32(const float *got, const double *want, size_t n, double atol, double rtol);

/* Poisons dev_out, runs work(arg) once, downloads n floats and compares
 * with want. The standard "validate before timing" step. */
rl_check rl_validate_f32(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                         size_t n, const double *want, double atol, double rtol);

/* The same with a bound per element, for kernels whose error is known
 * element by element (e.g. a decode that rounds x to 8 bits first):
 * |got[i] - want[i]| <= bound[i], and finite. */
rl_check rl_compare_f32_bound(const float *got, const double *want, const double *bound, size_t n);
rl_check rl_validate_f32_bound(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                               size_t n, const double *want, const double *bound);

/* One line such as "ok (max abs err 3.1e-08)" or "FAILED: 12 of 4096
 * elements wrong, first at 17: got nan, want 0.41 (unwritten?)". */
void rl_check_describe(const rl_check *c, char *buf, size_t len);

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
/* Growth per period of a total growth over a span: total^(period/span). */
double rl_growth_per_period(double total, double span_years, double period_years);

/* ------------------------------------------------------------------------
 * Command line (cli.c)
 * ---------------------------------------------------------------------- */
/* An experiment-specific option: "--name VALUE" (or a flag when metavar is
 * NULL, then *value is set to "1"). choices, when set, is a '|'-separated
 * list the value must be one of. */
typedef struct rl_option {
    const char *name, *metavar, *help, *choices;
    const char **value; /* in: the default; out: what the user gave */
} rl_option;

typedef enum rl_backend_choice { RL_BACKEND_AUTO, RL_BACKEND_CPU, RL_BACKEND_CUDA } rl_backend_choice;
typedef enum rl_cache_state { RL_COLD, RL_HOT } rl_cache_state;

typedef struct rl_args {
    rl_backend_choice backend;
    bool quick, list, help, no_plot, plot_only, print_label, cache_given, no_reference;
    const char *out_dir, *plots_dir, *label, *variants;
    int device;
    uint64_t seed;
    rl_cache_state cache;
} rl_args;

/* Parses argv into args. Returns 0, or RL_EXIT_USAGE after printing a
 * one-line error naming the program and the bad argument to stderr. */
int rl_parse_args(int argc, char **argv, const rl_option *extra, rl_args *args);
void rl_print_usage(const char *prog, const char *title, const rl_option *extra);
/* Parses a size such as "4096", "64Ki", "1Mi", "2^20". Returns false on junk. */
bool rl_parse_size(const char *s, size_t *out);

/* ------------------------------------------------------------------------
 * CSV (csv.c): tidy rows, '# key: value' metadata header, atomic commit.
 * ---------------------------------------------------------------------- */
typedef struct rl_csv rl_csv;

/* Opens a temporary file beside path; nothing appears at path until
 * rl_csv_commit(). columns is NULL-terminated. */
rl_csv *rl_csv_open(const char *path, const char *const *columns);
void rl_csv_meta(rl_csv *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rl_csv_set_str(rl_csv *c, const char *column, const char *value);
void rl_csv_set_num(rl_csv *c, const char *column, double value); /* NaN: empty */
void rl_csv_set_int(rl_csv *c, const char *column, long long value);
void rl_csv_end_row(rl_csv *c); /* writes the row; unset cells stay empty */
int rl_csv_commit(rl_csv *c);  /* flush, fsync, rename; 0 on success */
void rl_csv_abort(rl_csv *c);  /* removes the temporary file */
/* Reads "# key: value" from a CSV's header into buf; false if absent. */
bool rl_csv_read_meta(const char *path, const char *key, char *buf, size_t len);

/* ------------------------------------------------------------------------
 * Reading results back (table.c): for comparisons, summaries, the paper.
 * ---------------------------------------------------------------------- */
typedef struct rl_table {
    int ncols, nrows, nmeta;
    char **cols;              /* the header's column names */
    char ***cells;            /* cells[row][col], "" when empty */
    char **meta_keys, **meta_values;
} rl_table;

/* NULL and a reason when the file is missing or malformed. */
rl_table *rl_table_read(const char *path, char *why, size_t whylen);
void rl_table_free(rl_table *t);
int rl_table_col(const rl_table *t, const char *name);              /* -1 if absent */
const char *rl_table_get(const rl_table *t, int row, const char *column); /* "" if absent */
const char *rl_table_meta(const rl_table *t, const char *key);      /* NULL if absent */
/* The row of t whose key columns equal those of src's row, or -1. */
int rl_table_match(const rl_table *t, const rl_table *src, int src_row, const char *const *keys,
                   int nkeys);

/* ------------------------------------------------------------------------
 * The experiment context (context.c)
 * ---------------------------------------------------------------------- */
typedef struct rl_ceilings {
    double copy_gbps;      /* measured: GPU device copy or CPU triad, bytes read + written */
    double matrix_tflops;  /* measured: cuBLAS FP16 GEMM or OpenBLAS SGEMM */
    double sheet_gbps;     /* datasheet, NaN when the device is not in the table */
    double sheet_tflops;
    char how[256];         /* what was measured, and whether it came from the cache */
} rl_ceilings;

typedef struct rl_experiment {
    const char *id;         /* "05" */
    const char *slug;       /* "05-fusion": the folder under experiments/ */
    const char *title;
    const char *claim;
    const char *source;
    const char *prediction;
    const char *const *columns;  /* NULL-terminated; see RL_MEASUREMENT_COLUMNS */
    const rl_option *options;    /* NULL-terminated array, or NULL */
    rl_cache_state default_cache;
    /* For comparing runs (make compare): the columns that identify a point
     * across runs, e.g. "op,variant,k,n", and the column whose ratio is
     * reported, e.g. "time_us_median". Written to the CSV header. */
    const char *compare_keys;
    const char *compare_value;
} rl_experiment;

typedef struct rl_ctx_private rl_ctx_private;

typedef struct rl_ctx {
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
} rl_ctx;

/* Parses the command line, opens the backend (saying so when it falls back
 * to the CPU), prints the claim. On --help, bad usage, --print-label,
 * --plot-only or "no GPU" with --backend cuda it exits the process itself
 * with the documented code. */
rl_ctx *rl_begin(const rl_experiment *exp, int argc, char **argv);

/* Commits the CSV, rewrites this experiment's rows of verdicts.csv, draws
 * the charts and prints the verdict table. Returns the exit code. */
int rl_end(rl_ctx *ctx);

/* Ends a run that writes no results (a side benchmark, such as exp-03's
 * --matrix): removes the temporary CSV and returns the exit code
 * (RL_EXIT_FAILED when a kernel failed validation). */
int rl_end_discard(rl_ctx *ctx);

/* For --list: prints one variant line and returns. */
void rl_list_variant(int number, const char *name, const char *what);
/* True when --variant was not given, or names this variant (by number or name). */
bool rl_variant_selected(const rl_ctx *ctx, int number, const char *name);

/* A fresh seed for each input set, derived from --seed. */
uint64_t rl_next_seed(rl_ctx *ctx);

/* Metadata for the CSV header; call before the first row. */
void rl_meta(rl_ctx *ctx, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The measured ceilings. A full run measures them now; a quick run reuses
 * results/<label>/ceilings.csv when it holds a measurement of this device.
 * Every measurement is saved there. rl_ceilings_fresh() always measures. */
const rl_ceilings *rl_ceilings_get(rl_ctx *ctx);
const rl_ceilings *rl_ceilings_fresh(rl_ctx *ctx);

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

/* Warms up, then samples work(arg) until the stop rule says so. On CUDA,
 * work() must only enqueue on rl_stream(); it is timed with events. Cold
 * samples flush the L2 (GPU) or read a buffer twice the LLC (CPU) before
 * each call; hot samples run calls back to back. name labels the NVTX range
 * around each sample. */
rl_measurement rl_measure(rl_ctx *ctx, const char *name, void (*work)(void *), void *arg);
rl_measurement rl_measure_as(rl_ctx *ctx, const char *name, void (*work)(void *), void *arg,
                             rl_cache_state cache);

/* Works that will be compared with each other: measured in rounds, one
 * sample of each per round, so that a machine's drift falls on all alike.
 * Each gets its own statistics; the group stops when every member has met
 * the stop rule, or after the sum of their timeouts. */
typedef struct rl_work {
    const char *name;
    void (*fn)(void *);
    void *arg;
} rl_work;

void rl_measure_group(rl_ctx *ctx, const rl_work *works, int n, rl_measurement *out);
void rl_measure_group_as(rl_ctx *ctx, const rl_work *works, int n, rl_cache_state cache,
                         rl_measurement *out);

/* The columns rl_set_measurement() fills, for an experiment's column list. */
#define RL_MEASUREMENT_COLUMNS                                                              \
    "cache", "samples", "stop_reason", "time_us_median", "time_us_q1", "time_us_q3",       \
        "time_us_min", "time_us_mean", "rel_stddev"

/* Rows of the experiment's CSV. */
void rl_set_str(rl_ctx *ctx, const char *column, const char *value);
void rl_set_num(rl_ctx *ctx, const char *column, double value);
void rl_set_int(rl_ctx *ctx, const char *column, long long value);
void rl_set_measurement(rl_ctx *ctx, const rl_measurement *m);
void rl_end_row(rl_ctx *ctx);

/* ------------------------------------------------------------------------
 * Verdicts (verdict.c)
 * ---------------------------------------------------------------------- */
typedef enum rl_verdict_status { RL_HOLDS, RL_DOES_NOT_HOLD, RL_NOT_MEASURED } rl_verdict_status;
const char *rl_verdict_name(rl_verdict_status s);

/* id: short and stable ("fused_speedup_cos"); note: why, in a few words. */
void rl_verdict(rl_ctx *ctx, const char *id, const char *claim, const char *predicted,
                const char *measured, rl_verdict_status status, const char *note);
/* RL_HOLDS when lo <= x <= hi; RL_NOT_MEASURED when x is NaN. */
rl_verdict_status rl_within(double x, double lo, double hi);

/* ------------------------------------------------------------------------
 * Progress line (progress.c): on stderr, only when stderr is a terminal.
 * ---------------------------------------------------------------------- */
void rl_progress_total(rl_ctx *ctx, int total);
void rl_progress_step(rl_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rl_progress_clear(void);

/* ------------------------------------------------------------------------
 * Small helpers (util.c)
 * ---------------------------------------------------------------------- */
double rl_now_s(void);              /* CLOCK_MONOTONIC */
void rl_slugify(const char *in, char *out, size_t len);
/* "1.5 GiB", "256 KiB" */
void rl_format_bytes(double bytes, char *buf, size_t len);
/* Prints "rooflab: <message>" to stderr and exits with code. */
void rl_die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* Writes a whole file through a temporary and a rename; 0 on success. */
int rl_write_file_atomic(const char *path, const char *content);
/* Registers a file to remove if the process dies (temporary outputs). */
void rl_cleanup_register(const char *path);
void rl_cleanup_unregister(const char *path);

/* ------------------------------------------------------------------------
 * Experiment 04 (issue 6): wave planning (waves.c)
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

/* ========================================================================
 * Issue 4 (experiments 01 and 06): duty cycles, OS busy time, NVML sampler
 * ====================================================================== */

/* ---- Duty cycles from timestamps (duty.c): pure, exact arithmetic -------- */
typedef struct rl_interval {
    double start, end; /* seconds on one clock; end >= start */
} rl_interval;

/* The fraction of the window [t0, t1] covered by at least one interval:
 * NVML's definition of utilization.gpu ("percent of time during which one
 * or more kernels was executing"), computed from our own timestamps.
 * Intervals may come in any order, overlap, nest, or stick out of the
 * window (only the part inside counts). NaN when t1 <= t0. */
double rl_busy_fraction(const rl_interval *busy, size_t n, double t0, double t1);

/* Cuts [t0, t1] into consecutive windows of length period starting at t0
 * (a last window shorter than period is dropped) and writes each window's
 * busy fraction to out, at most max of them. Returns the number written. */
int rl_busy_windows(const rl_interval *busy, size_t n, double t0, double t1, double period,
                    double *out, int max);

/* ---- Operating-system busy time (osbusy.c): the CPU's duty cycle --------- */
/* utime + stime, in clock ticks, from one line of /proc/<pid>/stat or
 * /proc/<pid>/task/<tid>/stat (fields 14 and 15; the command name in
 * parentheses may hold spaces and parentheses). False on a malformed line. */
bool rl_proc_stat_ticks(const char *line, unsigned long long *ticks);
/* CPU seconds the kernel has charged to a thread of this process (tid from
 * gettid()), or to the whole process (tid 0), as top and ps read them.
 * NaN when unreadable. */
double rl_cpu_busy_s(int tid);
double rl_process_rss_bytes(void); /* VmRSS: resident memory of this process */
double rl_host_ram_bytes(void);    /* physical memory of the machine */
/* Sleeps until rl_now_s() reaches t (absolute, on CLOCK_MONOTONIC). */
void rl_sleep_until(double t);
/* The machine's 1-minute load average (/proc/loadavg): how many threads
 * wanted a CPU, on average. NaN when unreadable. */
double rl_load_average(void);
/* Records the load average at the start and end of a run in the CSV header
 * (key host_load). Returns the larger reading when it exceeded the logical
 * CPUs -- other processes competed for them -- and 0 otherwise. */
double rl_record_host_load(rl_ctx *ctx, double load_start);

/* ---- NVML (nvml.c, nvml_sampler.c) -------------------------------------- */
/* Loads NVML with dlopen (soname NULL: libnvidia-ml.so.1). False, and why
 * ("NVML not available (...)", "NVML too old: no ..."), when it cannot;
 * never a crash. Idempotent once it has succeeded. */
bool rl_nvml_load(const char *soname, char *why, size_t len);

/* What NVML said about the device over one window of time. NaN (empty in
 * the CSV) for what it could not say; note says why. */
typedef struct rl_nvml_window {
    double util_gpu_pct;   /* utilization.gpu: mean of the samples in the window */
    double util_mem_pct;   /* utilization.memory: the same for memory traffic */
    int util_samples;
    const char *util_source; /* "nvmlDeviceGetSamples" or "nvmlDeviceGetUtilizationRates" */
    double mem_used_bytes, mem_total_bytes; /* memory.used (largest seen) and memory.total */
    double sm_clock_mhz;   /* mean of the polls */
    bool gpm;              /* GPM metrics below were read over the window */
    double gpm_sm_util_pct, gpm_sm_occupancy_pct, gpm_any_tensor_util_pct, gpm_dram_bw_util_pct;
    char gpm_status[96];   /* "ok", or "not supported (...)" */
    char note[160];
} rl_nvml_window;

typedef struct rl_nvml_sampler rl_nvml_sampler;

/* Starts a thread that polls NVML for the device with this PCI bus id
 * every poll_s seconds: utilization samples (nvmlDeviceGetSamples with
 * their own timestamps, or nvmlDeviceGetUtilizationRates where samples are
 * not supported), memory.used/total, the SM clock, and GPM counters where
 * the device has them (Hopper and later). NULL, and why, when NVML is not
 * available. */
rl_nvml_sampler *rl_nvml_sampler_start(const char *pci_bus_id, double poll_s, char *why,
                                       size_t len);
/* NVML's readings over [t0, t1] (rl_now_s() times; t1 in the recent past,
 * within the last ~20 s for GPM). */
void rl_nvml_sampler_window(rl_nvml_sampler *s, double t0, double t1, rl_nvml_window *out);
/* One line for the CSV header: sources, NVML's sample period, GPM support. */
void rl_nvml_sampler_describe(rl_nvml_sampler *s, char *buf, size_t len);
void rl_nvml_sampler_stop(rl_nvml_sampler *s);

#ifdef __cplusplus
}
#endif
#endif /* ROOFLAB_H */

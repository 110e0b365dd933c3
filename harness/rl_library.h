/*
 * rl_library.h -- the parts of the harness that know no experiment:
 * exit codes, statistics and the stop rule, backends, random inputs and
 * validation, the command line, CSV files and reading them back, small
 * helpers. The tools (compare, summary, the paper) and the tests use them
 * directly; an experiment gets them through rooflab.h.
 */
#ifndef RL_LIBRARY_H
#define RL_LIBRARY_H

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
    RL_EXIT_STOPPED = 3, /* stopped by SIGTERM (a cap, a time limit): its CSV holds the points
                          * measured before it, marked partial ('# partial: ...') */
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

/* One rule per run mode (see rl_mode): a reference run, a lab run (the
 * default), a smoke test. */
extern const rl_stop_rule RL_STOP_FULL;  /* 10 samples, 0.5 s, 0.5 %, 2.5 s */
extern const rl_stop_rule RL_STOP_LAB;   /*  5 samples, 0.15 s, 1 %, 1 s */
extern const rl_stop_rule RL_STOP_QUICK; /*  3 samples, 0.03 s, 5 %, 0.3 s: a smoke test */

typedef enum rl_stop_reason {
    RL_CONTINUE = 0,
    RL_STOP_NOISE,     /* relative stddev reached the target */
    RL_STOP_CONVERGED, /* noisier than the target, but the mean is known to it */
    RL_STOP_TIMEOUT,   /* wall-time budget spent */
    RL_STOP_CAP,       /* sample buffer full */
    RL_STOP_SIGNAL     /* SIGTERM: the run was asked to stop (rl_stop_requested) */
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
    char pci_bus_id[32];     /* how NVML finds the device */
    char nvml[160];          /* what NVML said, or why it is unavailable */
    /* CPU */
    int cores, threads;
    /* x86 family and model (25 and 1: Zen 3), -1 where /proc/cpuinfo has none: what
     * tells Zen 3 from 4 and 5 where a VM names them all "AMD EPYC" */
    int cpu_family, cpu_model;
    double l1d_bytes, l2_bytes, l3_bytes;
    /* both: the cache a "cold" measurement must defeat (GPU L2, CPU LLC) */
    double llc_bytes;
    const rl_datasheet *datasheet; /* NULL when the device is not in the table */
} rl_device_info;

typedef struct rl_backend rl_backend;

/* Opens a backend on a device. Returns NULL and a reason when it is not
 * available (built without nvcc, no driver, no device, bad index). */
rl_backend *rl_backend_open(rl_backend_kind kind, int device, char *why, size_t whylen);

/* RL_ABSENT: no such device (no NVIDIA driver at all, a build without
 * CUDA): auto may use the CPU. RL_UNUSABLE: a GPU is here that this build
 * cannot use (old driver, fabric manager, MIG, busy...): why holds the
 * diagnosis (diagnose.c), which a CPU run would hide. */
typedef enum rl_open_status { RL_OPENED, RL_ABSENT, RL_UNUSABLE } rl_open_status;
rl_backend *rl_backend_open_status(rl_backend_kind kind, int device, rl_open_status *status,
                                   char *why, size_t whylen);
void rl_backend_close(rl_backend *be);

const rl_device_info *rl_device(const rl_backend *be);
rl_backend_kind rl_kind(const rl_backend *be);

/* Memory on the backend's device ("device memory" is host memory on the
 * CPU backend, allocated aligned and first-touched by the worker threads). */
void *rl_alloc(rl_backend *be, size_t bytes);
void rl_free(rl_backend *be, void *p);
void rl_upload(rl_backend *be, void *dst, const void *src, size_t bytes);
void rl_download(rl_backend *be, void *dst, const void *src, size_t bytes);
/* A device copy of host data: rl_alloc, then rl_upload. */
void *rl_alloc_copy(rl_backend *be, const void *host, size_t bytes);
/* A host copy of device data: rl_host_alloc, then rl_download. */
void *rl_download_copy(rl_backend *be, const void *dev, size_t bytes);
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
/* FP16 bits (kernels/half.h's fp16), each the float draw rounded to nearest
 * even: no float copy of a matrix that may be gigabytes. */
void rl_fill_uniform_f16(uint16_t *x, size_t n, float lo, float hi, uint64_t seed);

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
/* For a call whose output overwrites its input (written fresh by the
 * caller): not poisoned; a bound when given, else atol and rtol. */
rl_check rl_validate_f32_in_place(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                                  size_t n, const double *want, const double *bound, double atol,
                                  double rtol);

/* One line such as "ok: 4096 elements, max abs err 3.1e-08, rel L2 err
 * 2e-08" or "FAILED: 12 of 4096 elements wrong (12 NaN/Inf: unwritten or
 * overflowed), first at index 17: got nan, want 0.41". */
void rl_check_describe(const rl_check *c, char *buf, size_t len);

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
/* No zero value on purpose: an experiment must say which it wants. */
typedef enum rl_cache_state { RL_CACHE_UNSET = 0, RL_COLD, RL_HOT } rl_cache_state;

/* How much a run measures. A lab run (the default) keeps the points the
 * verdicts need and a few more for the charts, sized to finish in about
 * two minutes on a two-core CPU; --full is the reference sweep; --quick a
 * smoke test of a few seconds. */
typedef enum rl_mode { RL_MODE_LAB = 0, RL_MODE_QUICK, RL_MODE_FULL } rl_mode;
const char *rl_mode_name(rl_mode m); /* "lab", "quick", "full" */

typedef struct rl_args {
    rl_backend_choice backend;
    bool quick, full, list, help, no_plot, plot_only, print_label, cache_given, no_reference;
    bool start_roofs; /* --roofs start: judge against the run-start ladder, no group probes */
    bool retune;      /* --retune: time the tunable kernels' candidates again (tuning.c) */
    rl_mode mode; /* from --quick / --full */
    const char *out_dir, *plots_dir, *label, *variants;
    const char *ceilings_file; /* --ceilings FILE: use these roofs, measure none */
    const char *plan_file;     /* --plan-file FILE: the plan as key=value lines (plan.c) */
    double max_bytes;          /* --max-bytes: largest working set; 0: the mode's default */
    double budget_s;           /* --budget: the run's wall-clock seconds; 0: none (plan.c) */
    double timeout_s;          /* --timeout: a point's sampling time limit; 0: the mode's */
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
 * rl_csv_commit(). columns is NULL-terminated. Metadata may be added at any
 * time before the commit; it is written above the rows. */
rl_csv *rl_csv_open(const char *path, const char *const *columns);
void rl_csv_meta(rl_csv *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rl_csv_set_str(rl_csv *c, const char *column, const char *value);
void rl_csv_set_num(rl_csv *c, const char *column, double value); /* NaN: empty */
void rl_csv_set_int(rl_csv *c, const char *column, long long value);
void rl_csv_end_row(rl_csv *c); /* keeps the row; unset cells stay empty */
bool rl_csv_has_column(const rl_csv *c, const char *column);
const char *rl_csv_get(const rl_csv *c, const char *column); /* the row being built; "" if unset */
int rl_csv_commit(rl_csv *c);  /* flush, fsync, rename; 0 on success */
void rl_csv_abort(rl_csv *c);  /* removes the temporary file */

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
/* The '# key: value' header alone (no columns, no rows): NULL and a reason
 * when the file cannot be read. */
rl_table *rl_table_read_meta(const char *path, char *why, size_t whylen);
/* One key of a CSV's header into buf; false when the file or the key is
 * absent. */
bool rl_csv_read_meta(const char *path, const char *key, char *buf, size_t len);
void rl_table_free(rl_table *t);
int rl_table_col(const rl_table *t, const char *name);              /* -1 if absent */
const char *rl_table_get(const rl_table *t, int row, const char *column); /* "" if absent */
const char *rl_table_meta(const rl_table *t, const char *key);      /* NULL if absent */
/* The first row whose column holds value, or -1. */
int rl_table_find(const rl_table *t, const char *column, const char *value);
/* A cell as a number: NaN when empty (or row is -1). */
double rl_table_num(const rl_table *t, int row, const char *column);
/* The row of t whose key columns equal those of src's row, or -1. */
int rl_table_match(const rl_table *t, const rl_table *src, int src_row, const char *const *keys,
                   int nkeys);

/* ------------------------------------------------------------------------
 * Small helpers (util.c)
 * ---------------------------------------------------------------------- */
double rl_now_s(void);              /* CLOCK_MONOTONIC */
double rl_host_ram_bytes(void);     /* physical memory of the machine (osbusy.c) */
/* The machine's 1-minute load average (/proc/loadavg): how many threads
 * wanted a CPU, on average. NaN when unreadable (osbusy.c). */
double rl_load_average(void);
/* The aggregate "cpu" line of /proc/stat: busy ticks (user, nice, system,
 * irq, softirq, steal) and all ticks. False on a malformed line. */
bool rl_proc_stat_cpu(const char *line, unsigned long long *busy, unsigned long long *total);
/* How many CPUs other processes kept busy over the next window_s seconds,
 * during which this process sleeps: the load now, where the load average
 * still remembers the last minute (an experiment that just ended). NaN
 * when /proc/stat is unreadable. */
double rl_host_busy_cpus(double window_s);
/* The CPUs other processes kept busy, on average, since a mark: the
 * host's busy time (/proc/stat) less this process's own (its threads'
 * user and system time), over the wall time. NaN when unreadable. */
typedef struct rl_busy_mark {
    double wall_s, self_s, host_busy_s;
} rl_busy_mark;
rl_busy_mark rl_busy_mark_now(void);
double rl_others_busy_cpus_since(const rl_busy_mark *mark);
void rl_slugify(const char *in, char *out, size_t len);
/* "1.5 GiB", "256 KiB" */
void rl_format_bytes(double bytes, char *buf, size_t len);
/* Appends to the string in buf (of len bytes), truncating: a note built
 * clause by clause. Once buf is full, further appends do nothing
 * (diagnose.c). */
void rl_appendf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A 0-ended list of whole numbers as words ("1 4 64"), for metadata. */
void rl_list_ints(char *buf, size_t len, const int *v);
/* Prints "rooflab: <message>" to stderr and exits with code. */
void rl_die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* Writes a whole file through a temporary and a rename; 0 on success. */
int rl_write_file_atomic(const char *path, const char *content);
/* Registers a file to remove if the process dies (temporary outputs). */
void rl_cleanup_register(const char *path);
void rl_cleanup_unregister(const char *path);
/* From now on SIGTERM only asks the run to stop (util.c says why); one
 * that has not ended ROOFLAB_STOP_GRACE_S (4) later dies by it, its
 * temporary files removed. */
void rl_stop_on_sigterm(void);
/* The signal that asked the run to stop (SIGTERM), or 0. */
int rl_stop_requested(void);

#ifdef __cplusplus
}
#endif
#endif /* RL_LIBRARY_H */

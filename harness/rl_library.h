/*
 * rl_library.h -- the parts of the harness that know no experiment and
 * that an experiment uses (it gets them through rooflab.h): exit codes,
 * statistics, device and host memory, comparing outputs with a
 * reference, the command line's types, reading a results table, small
 * helpers. The rest of the library is in rooms of its own, for the
 * harness, the tools (compare, summary, the paper) and the tests:
 * rl_measure.h (the stop rule, the sampler, random fills, validation on
 * a device), rl_backend.h (opening a backend), rl_process.h (parsing the
 * command line, temporary files, SIGTERM), rl_host.h (how busy the host
 * is), rl_csv.h (writing CSVs, reading headers, matching rows).
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

typedef enum rl_stop_reason {
    RL_CONTINUE = 0,
    RL_STOP_NOISE,     /* relative stddev reached the target */
    RL_STOP_CONVERGED, /* noisier than the target, but the mean is known to it */
    RL_STOP_TIMEOUT,   /* wall-time budget spent */
    RL_STOP_CAP,       /* sample buffer full */
    RL_STOP_SIGNAL     /* SIGTERM: the run was asked to stop (rl_stop_requested) */
} rl_stop_reason;


/* ------------------------------------------------------------------------
 * Backends and devices (backend.c, backend_cpu.c, backend_cuda.cu)
 * ---------------------------------------------------------------------- */
typedef enum rl_backend_kind { RL_CPU = 0, RL_CUDA = 1 } rl_backend_kind;

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


/* Memory on the backend's device ("device memory" is host memory on the
 * CPU backend, allocated aligned and first-touched by the worker threads). */
void *rl_alloc(rl_backend *be, size_t bytes);
void rl_free(rl_backend *be, void *p);
void rl_upload(rl_backend *be, void *dst, const void *src, size_t bytes);
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
/* A named range around the work issued until its pop, as Nsight Systems
 * shows it: an NVTX range (nvtxRangePushA / nvtxRangePop, NVTX3: header
 * only, nothing linked) on the CUDA backend; nothing on the CPU backend
 * nor in a build without CUDA. Ranges nest; a pop with none open is
 * ignored on every backend. */
void rl_range_push(rl_backend *be, const char *name);
/* Whether the CPU backend's BLAS runs narrower vectors than this CPU has
 * (x86-64: kernels without AVX-512 on a CPU with it, as OPENBLAS_CORETYPE
 * given in the environment may ask, which the run keeps), and why: then
 * the library cannot reach the compute roof the run measures, and a
 * compute-bound verdict on it is the setting's, not the machine's. */
bool rl_cpu_blas_narrower(char *why, size_t len);
void rl_range_pop(rl_backend *be);

/* Page-aligned host memory; aborts with a message when out of memory. */
void *rl_host_alloc(size_t bytes);
void rl_host_free(void *p);

/* ------------------------------------------------------------------------
 * Random inputs and validation (random.c, validate.c)
 * ---------------------------------------------------------------------- */

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

/* The same with a bound per element, for kernels whose error is known
 * element by element (e.g. a decode that rounds x to 8 bits first):
 * |got[i] - want[i]| <= bound[i], and finite. */
rl_check rl_compare_f32_bound(const float *got, const double *want, const double *bound, size_t n);

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

/* A lab run's clock when none is given: it ends within this +10 %, under
 * the two minutes a lab run promises, whatever the CPU (budget.c). */
#define RL_LAB_SLOT_S 105.0

typedef struct rl_args {
    rl_backend_choice backend;
    bool quick, full, list, help, no_plot, plot_only, print_label, cache_given, no_reference;
    bool slot_given;  /* --slot given, 0 included */
    bool start_roofs; /* --roofs start: judge against the run-start ladder, no group probes */
    bool retune;      /* --retune: time the tunable kernels' candidates again (tuning.c) */
    bool list_points; /* --points: print the declared points and exit (run.c) */
    rl_mode mode; /* from --quick / --full */
    const char *out_dir, *plots_dir, *label, *variants;
    const char *ceilings_file; /* --ceilings FILE: use these roofs, measure none */
    const char *plan_file;     /* --plan-file FILE: the plan as key=value lines (plan.c) */
    const char *outcome_file;  /* --outcome-file FILE: how the run ended, key=value (outcome.c) */
    const char *rows_file;     /* --rows-file FILE: the run's rows as a CSV, kept or not */
    double max_bytes;          /* --max-bytes: largest working set; 0: the mode's default */
    double budget_s;           /* --budget: the run's wall-clock seconds; 0: none (plan.c) */
    double slot_s;             /* --slot: a lab run's clock (budget.c); 0: none. A lab run
                                  without --budget or --slot gets RL_LAB_SLOT_S */
    double timeout_s;          /* --timeout: a point's sampling time limit; 0: the mode's */
    int device;
    uint64_t seed;
    rl_cache_state cache;
} rl_args;

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
const char *rl_table_get(const rl_table *t, int row, const char *column); /* "" if absent */
/* The first row whose column holds value, or -1. */
int rl_table_find(const rl_table *t, const char *column, const char *value);
/* A cell as a number: NaN when empty (or row is -1). */
double rl_table_num(const rl_table *t, int row, const char *column);

/* ------------------------------------------------------------------------
 * Small helpers (util.c)
 * ---------------------------------------------------------------------- */
double rl_now_s(void);              /* CLOCK_MONOTONIC */
double rl_host_ram_bytes(void);     /* physical memory of the machine (osbusy.c) */
/* The machine's 1-minute load average (/proc/loadavg): how many threads
 * wanted a CPU, on average. NaN when unreadable (osbusy.c). */
double rl_load_average(void);
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

#ifdef __cplusplus
}
#endif
#endif /* RL_LIBRARY_H */

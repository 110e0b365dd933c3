/*
 * internal.h -- what the harness's own files share; not for experiments.
 *
 * Each backend is one file that fills an rl_backend_ops table (the
 * BabelStream idea: one interface, one file per backend).
 */
#ifndef ROOFLAB_INTERNAL_H
#define ROOFLAB_INTERNAL_H

#include "rooflab.h"
/* The rooms of the library that experiments do not see: the harness's own
 * files see everything. */
#include "rl_backend.h"
#include "rl_csv.h"
#include "rl_curve.h"
#include "rl_diagnose.h"
#include "rl_host.h"
#include "rl_measure.h"
#include "rl_occupancy.h"
#include "rl_process.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A roof probe: a work the harness times, and what one call moves (bytes
 * or FLOPs); state is the backend's (its buffers). */
typedef struct rl_probe {
    const char *name;
    void (*run)(void *state);
    void *state;
    double per_call;
} rl_probe;

typedef struct rl_backend_ops {
    const char *name;
    /* Opens device; fills info. Returns RL_OPENED, or why not (see
     * rl_open_status) and the reason in words. */
    rl_open_status (*open)(int device, rl_device_info *info, char *why, size_t whylen);
    void (*close)(void);
    void *(*alloc)(size_t bytes);
    void (*free)(void *p);
    void (*upload)(void *dst, const void *src, size_t bytes);
    void (*download)(void *dst, const void *src, size_t bytes);
    void (*poison)(void *p, size_t bytes);
    void (*sync)(void);
    struct CUstream_st *(*stream)(void);
    /* Evicts the measured data from the last-level cache. */
    void (*flush_cache)(void);
    /* Timer around enqueued (CUDA) or executed (CPU) work. */
    void (*timer_start)(void);
    double (*timer_stop)(void); /* seconds; waits for the work to finish */
    /* NVTX ranges on CUDA; nothing on the CPU. */
    void (*range_push)(const char *name);
    void (*range_pop)(void);
    /* The ceilings (ceilings.c decides what to measure): one access pattern
     * over one working set, one GEMM size, or the FMA peak (NULL where the
     * backend has none), each measured `trials` times; the band of rates
     * (GB/s, bytes read plus written; TFLOP/s). */
    rl_band (*bandwidth)(rl_ctx *ctx, rl_pattern p, double probe_bytes, int trials);
    rl_band (*gemm)(rl_ctx *ctx, int n, int trials);
    rl_band (*fma_peak)(rl_ctx *ctx, int trials);
    /* Roof probes for a group (group_roof.c): the same loops as the
     * ladder, as a work the group times beside its points. bandwidth_probe:
     * one pattern over `bytes`, one pass per call when one_pass (a cold
     * cache: each call must start from memory), else enough passes that a
     * call is long against its launch or fork. compute_probe: the compute
     * roof's work (the FMA peak on the CPU, the library GEMM at a size
     * that reaches its peak on the GPU). wide: a read's second loop, where
     * the backend has one (a read roof is the better of its loops). Both
     * fill out, or return false when the backend has none; probe_release
     * frees what they made. */
    bool (*bandwidth_probe)(rl_ctx *ctx, rl_pattern p, double bytes, bool one_pass, bool wide,
                            rl_probe *out);
    bool (*compute_probe)(rl_ctx *ctx, rl_probe *out);
    void (*probe_release)(rl_ctx *ctx, rl_probe *probe);
    const int *gemm_sizes; /* 0-terminated: the library GEMM's n for the compute roof */
    const char *gemm_name; /* "OpenBLAS SGEMM", "cuBLAS FP16 GEMM (FP32 out)" */
} rl_backend_ops;

extern const rl_backend_ops rl_cpu_ops;
/* ladder_cpu.c: the CPU backend's bandwidth and FMA ceilings. */
rl_band rl_cpu_bandwidth(rl_ctx *ctx, rl_pattern pattern, double probe_bytes, int trials);
rl_band rl_cpu_fma_peak(rl_ctx *ctx, int trials);
void rl_cpu_ladder_release(void); /* frees the working-set buffer */
/* Before anything else: re-executes the program once with OpenBLAS's idle
 * workers told to sleep at once and, where the library took the CPU for
 * an older one, its kernels for this CPU's instruction set (backend_cpu.c
 * says why). */
void rl_cpu_prepare_blas(char **argv);
/* Which OpenBLAS kernels run, and who chose them: for the header. */
void rl_cpu_blas_note(char *buf, size_t len);
bool rl_cpu_bandwidth_probe(rl_ctx *ctx, rl_pattern p, double bytes, bool one_pass, bool wide,
                            rl_probe *out);
bool rl_cpu_compute_probe(rl_ctx *ctx, rl_probe *out);
void rl_cpu_probe_release(rl_ctx *ctx, rl_probe *probe);
extern const rl_backend_ops rl_cuda_ops; /* backend_cuda.cu, or backend_nocuda.c */
/* ladder_cuda.cu: the CUDA backend's ceilings. */
rl_band rl_cuda_bandwidth(rl_ctx *ctx, rl_pattern pattern, double probe_bytes, int trials);
rl_band rl_cuda_gemm(rl_ctx *ctx, int n, int trials);
bool rl_cuda_bandwidth_probe(rl_ctx *ctx, rl_pattern p, double bytes, bool one_pass, bool wide,
                             rl_probe *out);
bool rl_cuda_compute_probe(rl_ctx *ctx, rl_probe *out);
void rl_cuda_probe_release(rl_ctx *ctx, rl_probe *probe);
extern const int rl_cuda_gemm_sizes[];

struct rl_backend {
    const rl_backend_ops *ops;
    rl_device_info info;
    int ranges; /* open rl_range_push ranges: a pop with none open is ignored */
};

/* The private part of a context is a few rooms, one concern each, each
 * declared in its own header and reached through its own door (rooms.c;
 * rl_ctx_private.h holds them, for context.c alone): rl_ctx_csv.h (what the
 * CSV needs), rl_ctx_verdicts.h (the verdicts), rl_ctx_ceilings.h (the
 * roofs and what became of them), rl_ctx_plan.h (what the planner needs),
 * rl_ctx_parts.h (what rl_main declared), rl_ctx_clock.h (when the run
 * began) and rl_budget.h (--budget, one object). A file includes the
 * rooms it touches and no other. */
typedef struct rl_charts rl_charts;

/* util.c: room for one more element in a growing array of n elements
 * of elem bytes (capacity *cap, doubled from first when full); dies
 * naming what when memory runs out. Returns the array, maybe moved. */
void *rl_grow(void *v, int n, int *cap, int first, size_t elem, const char *what);

/* run.c: frees what rl_main declared (rl_end's release). */
void rl_run_release(rl_ctx *ctx);

/* measure.c: work measured `trials` times under a short stop rule; the
 * band of units_per_call / median time (the best trial is the ceiling). */
rl_band rl_measure_trials(rl_ctx *ctx, const char *name, void (*fn)(void *), void *arg,
                          double units_per_call, int trials);

/* ceilings.c: measuring one rung or the compute roof again (roofs.c, when
 * a point beats it); saving the context's ceilings to
 * results/<label>/ceilings.csv. */
rl_band rl_ceilings_remeasure_rung(rl_ctx *ctx, rl_level l, rl_pattern p);
void rl_ceilings_remeasure_compute(rl_ctx *ctx, rl_ceilings *c);
void rl_ceilings_save(rl_ctx *ctx);
/* ceilings_file.c: the cache, results/<label>/ceilings.csv. Reading:
 * check asks for this device's roofs, fit for reuse (for a lab run no
 * older than half an hour, from a lab or full run; with a curve); why
 * says what was wrong. */
void rl_ceilings_path(const rl_ctx *ctx, char *buf, size_t len);
void rl_ceilings_write(const rl_ctx *ctx, const char *path, const rl_ceilings *c);
bool rl_ceilings_read(const rl_ctx *ctx, const char *path, bool check, rl_ceilings *c,
                      char *why, size_t len);

/* columns.c: the CSV header of an experiment's points (malloc'd, NULL-ended). */
const char **rl_csv_columns_of(const rl_experiment *e);
/* variants.c: --list, and the --variant check (false: a usage error, said). */
void rl_families_list(const rl_ctx *ctx);
bool rl_families_check(const rl_ctx *ctx);
void rl_families_meta(rl_ctx *ctx);

/* What ptxas gave each CUDA kernel of this build, per SM built, and the
 * blocks of its launch bound an SM holds: generated at build time from
 * the objects' ptxas reports (harness/ops/kernel_resources.c, into
 * $(B)/gen/kernel_resources.c; kernel-resources.txt is the same table),
 * empty in a build without nvcc (kernel_resources_none.c). Ended by a row
 * whose kernel is NULL. */
typedef struct rl_kernel_resource {
    const char *file;   /* "kernels/quant.cu" */
    const char *kernel; /* "gemv_dp4a<q4_block, 1, false>" */
    int sm, registers, stack_bytes, spill_bytes, shared_bytes;
    int max_threads, min_blocks; /* its launch bounds; 0: none */
    int blocks, warps, max_warps;  /* per SM at max_threads (rl_occupancy_of) */
    const char *limit;
} rl_kernel_resource;
extern const rl_kernel_resource rl_kernel_resources[];
extern const char rl_kernel_resources_nvcc[]; /* "" without nvcc */
/* kernel_resources.c: the row in words, and the CSV header's lines of a
 * CUDA run: one kernel_resources_<kernel> per kernel of its families' .cu
 * files for the device's SM, and kernel_resources saying where they came
 * from (or that this build holds none for the SM). */
void rl_kernel_resource_text(const rl_kernel_resource *r, char *buf, size_t len);
void rl_kernel_resources_meta(rl_ctx *ctx, const rl_kernel_resource *table);
/* Those lines but the last, for an experiment and an SM (at most max): pure. */
typedef struct rl_meta_line rl_meta_line;
int rl_kernel_resources_lines(const rl_experiment *exp, int sm, const rl_kernel_resource *table,
                              rl_meta_line *out, int max);
/* claims.c: the prediction text, from the free text and every claim. */
void rl_claims_prediction(const rl_experiment *e, char *buf, size_t len);

/* roofs.c: sets ceiling_flag on a row whose MBU or MFU beats 1.05. */
void rl_flag_row(rl_ctx *ctx, rl_csv *csv);

/* progress.c */
void rl_print_duration(rl_ctx *ctx); /* "took ... (the plan expected ...)" */

/* csv.c: the file under construction, header written, for raw rows. */
FILE *rl_csv_stream(rl_csv *c);

/* verdict_kind.c */
/* A verdict's name as verdicts.csv writes it: "holds", "does not hold",
 * "premise not met", "not measured", "not measured (busy host)". */
const char *rl_verdict_name(rl_verdict_status s);
/* A verdicts.csv cell read back as one of the four kinds every reader
 * counts (RL_HOLDS .. RL_PREMISE_NOT_MET): RL_NOT_MEASURED for "not
 * measured (busy host)" and for anything else (a cell of an unknown kind). */
rl_verdict_status rl_verdict_kind(const char *verdict);
/* verdict.c */
void rl_verdicts_print(rl_ctx *ctx);
int rl_verdicts_write(rl_ctx *ctx); /* results/<label>/verdicts.csv */
void rl_verdicts_free(rl_ctx *ctx);
/* The latest verdict with this id: its kind and note (false: none). */
bool rl_verdict_find(const rl_ctx *ctx, const char *id, rl_verdict_status *status,
                     const char **note);
/* Its measured value as printed ("0.83"), or NULL: none with this id. */
const char *rl_verdict_measured(const rl_ctx *ctx, const char *id);

/* How a run's charts are drawn, for the core that never calls the report
 * layer itself: rl_main (harness/report/experiment_main.c) hands the plot
 * driver (harness/report/plot.c) to rl_run. NULL: this program draws no
 * charts (a test's toy experiment). */
struct rl_charts {
    bool (*available)(void); /* gnuplot is there */
    /* A run's charts into plots_dir/label/, overlaying a reference run
     * when reference_csv is not NULL; later: the command that draws them
     * on another machine. 0 when drawn (or gnuplot is absent), -1 if not. */
    int (*draw)(const rl_experiment *exp, const char *csv_path, const char *plots_dir,
                const char *label, const char *reference_csv, const char *reference_name,
                const char *later);
};

/* run.c: rl_main's work, with the charts' driver. */
int rl_run(const rl_experiment *exp, int argc, char **argv, const rl_charts *charts);

/* meta_header.c: the metadata header's standard lines, and the story the
 * console prints first (rl_begin's, once the backend is open). */
void rl_write_standard_meta(rl_ctx *ctx, int argc, char **argv);
void rl_print_story(const rl_ctx *ctx);

/* context.c: the life of one run. rl_begin parses the command line, opens
 * the backend (saying so when it falls back to the CPU), prints the
 * claim; on --help, bad usage, --print-label, --plot-only or "no GPU"
 * with --backend cuda it exits the process itself with the documented
 * code. rl_end commits the CSV, rewrites this experiment's rows of
 * verdicts.csv, draws the charts and prints the verdict table, and
 * returns the exit code; rl_end_discard ends a run that writes no
 * results (exp-03's --matrix). */
rl_ctx *rl_begin(const rl_experiment *exp, int argc, char **argv, const rl_charts *charts);
int rl_end(rl_ctx *ctx);
int rl_end_discard(rl_ctx *ctx);
/* A context for a program that measures the device but runs no
 * experiment (build/mountain): args as given (the caller parsed them),
 * the backend opened as for a run, the label; no CSV (rl_meta writes
 * nothing) and no story. exp names the program in messages;
 * rl_end_discard ends it. */
rl_ctx *rl_begin_bare(const rl_experiment *exp, const rl_args *args);

/* sysinfo.c */
/* The commit the code ran from, in words ("abc1234", "abc1234 (dirty)",
 * "unknown (not a git checkout)"), and *dirty as data: "yes" (uncommitted
 * changes to the code), "no", or "unknown" (a copy, not a checkout). */
void rl_git_describe(char *buf, size_t len, const char **dirty);
void rl_utc_now(char *buf, size_t len);
void rl_cpu_describe(rl_device_info *info);
const char *rl_source_root(void);

/* nvml.c: names and clocks for the metadata header. */
void rl_nvml_describe(const char *pci_bus_id, char *buf, size_t len);

/* util.c */
int rl_mkdirs(const char *path); /* mkdir -p; 0 on success */
/* mkstemp makes files only the owner can read; results are shared (rw-r--r-- under the usual umask). */
int rl_mkstemp_shared(char *template_path);

/* lock.c: an exclusive flock on ".<name>.lock" beside path, held across a
 * read-modify-write of a file every run of a label shares (verdicts.csv,
 * ceilings.csv); waits, saying so, while another run holds it. Returns the
 * descriptor for rl_unlock, or -1 (said on stderr) to go on unlocked. */
int rl_lock_beside(const char *path);
void rl_unlock(int fd);

/* True when --variant was not given, or names this variant (by number or
 * name): variants.c's rl_runs() asks it. */
bool rl_variant_selected(const rl_ctx *ctx, int number, const char *name);

const char *rl_level_name(rl_backend_kind kind, rl_level l); /* "L1" ... "DRAM" */
const char *rl_pattern_name(rl_pattern p);                   /* "read", "copy", "triad" */

/* ------------------------------------------------------------------------
 * The point pipeline's own parts, which rl_run calls (experiments go
 * through rl_main and rooflab.h only; tests of the pipeline call these).
 * ---------------------------------------------------------------------- */
/* Its rule alone, for the reported sizes: the first level whose capacity
 * (0: absent) exceeds a quarter of the footprint; mixed when the
 * footprint exceeds half of it. */
rl_level rl_level_for(const double capacity[RL_LEVEL_COUNT], double footprint_bytes, bool *mixed);
/* The same for any levels: the first level (capacity 0: absent) whose
 * spill (the footprint from which none of it hits the level: where the
 * curve reaches the next plateau, or 4x a reported size) exceeds the
 * footprint; mixed beyond half the capacity, where the rungs are probed. */
rl_level rl_level_on(const double capacity[RL_LEVEL_COUNT], const double spill[RL_LEVEL_COUNT],
                     double footprint_bytes, bool *mixed);

/* The level whose rung judges a point moving gbps on a roof (rl_roofs.h),
 * and that rung's GB/s: roof->judged, or on a mixed roof whose spill rung
 * the point beats by more than 5 %, the level's own (roof->level,
 * cached_gbps). */
rl_level rl_roof_rung(const rl_roof *roof, double gbps);
/* rl_roof_for on the ceilings given (pure: it reads and measures nothing else). */
rl_roof rl_roof_on(const rl_ceilings *c, rl_backend_kind kind, double footprint,
                   rl_pattern pattern);
double rl_roof_rung_gbps(const rl_roof *roof, double gbps);
/* Utilization against a roof: achieved / the rung the rate picks on it
 * (rl_roof_rung: a mixed roof's spill rung, unless beaten). Above 1.05 the ceiling
 * was under-measured (a busy machine, or a kernel faster than the
 * benchmark): it is measured again once; if the point still beats it, the
 * CSV says so (metadata, and ceiling_flag in the row when the experiment
 * has that column) and rl_ceiling_suspect_note() returns its note. */
double rl_mbu(rl_ctx *ctx, double gbps, const rl_roof *roof);
double rl_mfu(rl_ctx *ctx, double tflops);
/* achieved over a group probe's median rate. Above 1.05 times the
 * probe's fastest quartile (probe_hi), the probe was beaten (a kernel
 * that outruns the probe's loop): the run records it as an under-measured
 * ceiling, as for the ladder. */
double rl_utilization_of_probe(rl_ctx *ctx, double achieved, double probe, double probe_hi,
                               const char *what, const char *unit);
/* Once a ceiling stayed under-measured, what happened (NULL while none
 * did): verdicts built on MBU or MFU must then say so instead of judging
 * (rl_verdict_on_ceiling). */
const char *rl_ceiling_suspect_note(const rl_ctx *ctx);
/* The columns of a memory-bound row: mem_level, ceiling_gbps, ceiling_flag.
 * rl_set_roof() fills them for the roof a row moving gbps was judged
 * against (its rung: rl_roof_rung). */
#define RL_ROOF_COLUMNS "mem_level", "ceiling_gbps", "ceiling_flag"
void rl_set_roof(rl_ctx *ctx, const rl_roof *roof, double gbps);

/* Works that will be compared with each other: measured in rounds, one
 * sample of each per round, so that a machine's drift falls on all alike.
 * Each gets its own statistics; the group stops when every member has met
 * the stop rule, or after the sum of their timeouts. Each work warms up,
 * then is sampled. On CUDA, fn() must only enqueue on rl_stream(); it is
 * timed with events. Cold samples flush the L2 (GPU) or read a buffer
 * twice the LLC (CPU) before each call; hot samples run calls back to
 * back. name labels the NVTX range around each sample. footprint: the
 * bytes its calls touch (0: unknown), which decides whether the other
 * members of its group evict them between its hot samples (measure.c). */
typedef struct rl_work {
    const char *name;
    void (*fn)(void *);
    void *arg;
    double footprint;
} rl_work;

/* A group's roof probes (group_roof.c): open decides which the group
 * carries and writes their works (at most RL_GROUP_PROBES) for the
 * group's rounds; close, given their measurements, fills each member's
 * roof and frees the probes. */
enum { RL_GROUP_PROBES = 8 };
typedef struct rl_probe_spec {
    int cls;            /* the level its points live in: 2 x level + mixed */
    rl_pattern pattern;
    bool wide;          /* a read's second loop (the backend's bandwidth_probe) */
    double bytes;       /* the largest working set of those points */
} rl_probe_spec;
/* Each member's samples in the order of the rounds (seconds per call):
 * member i's round r is t[i * stride + r], and every member has `rounds`
 * of them (members sample with the group until all are done). */
typedef struct rl_rounds {
    double *t;
    int rounds, stride;
} rl_rounds;
typedef struct rl_group_probes {
    rl_probe probe[RL_GROUP_PROBES];
    rl_probe_spec spec[RL_GROUP_PROBES]; /* of the bandwidth probes, the first ones */
    int n, compute_at;                   /* index of the compute probe, or -1 */
} rl_group_probes;
int rl_group_probes_open(rl_ctx *ctx, rl_point *const *members, int n, rl_group_probes *gp,
                         rl_work *works);
/* Member `point`'s rate (point_units per call) over member `probe`'s, in
 * each round: the median of those ratios and their q1 and q3 (lo, hi);
 * NaN without rounds. */
rl_ratio rl_paired_ratio(const rl_rounds *r, int point, double point_units, int probe,
                         double probe_units);
/* m and rounds hold the members first, then the probes (rounds' member
 * n + j is probe j). */
void rl_group_probes_close(rl_ctx *ctx, rl_group_probes *gp, const rl_measurement *m,
                           const rl_rounds *rounds, rl_point *const *members, int n);
rl_group_roof rl_group_roof_none(void);
/* How many probes open would make for these members: the plan's count,
 * on the ceilings given (the plan's: it measures nothing). */
int rl_group_probes_count(const rl_ctx *ctx, const rl_ceilings *c, rl_point *const *members,
                          int n);

/* Times the works as one group, in rounds (measure.c); with rounds, also
 * keeps the samples round by round (free them with rl_rounds_free). */
void rl_measure_group(rl_ctx *ctx, const rl_work *works, int n, rl_measurement *out,
                      rl_rounds *rounds);
void rl_rounds_free(rl_rounds *r);

/* The columns rl_set_measurement() fills, for an experiment's column list. */
#define RL_MEASUREMENT_COLUMNS                                                              \
    "cache", "samples", "stop_reason", "time_us_median", "time_us_q1", "time_us_q3",       \
        "time_us_min", "time_us_mean", "rel_stddev"

void rl_set_measurement(rl_ctx *ctx, const rl_measurement *m);

/* Adds a copy of p; the pointer stays valid until the next add. */
rl_point *rl_points_add(rl_points *s, const rl_point *p);
int rl_points_new_group(rl_points *s); /* a fresh group number */
void rl_points_free(rl_points *s);

/* The groups of a set of points, for run.c's one loop over them: the
 * first point of each, in the order declared (out: s->n at most; returns
 * how many); whether point j is in the group of point first; whether a
 * verdict reads one of a group's points (not all of them are optional). */
int rl_points_leaders(const rl_points *s, int *out);
bool rl_points_same_group(const rl_points *s, int first, int j);
bool rl_points_group_needed(const rl_points *s, int first);
/* Validates the group of point first (where not done yet) just before it
 * is timed, then times its valid points together. */
void rl_points_run_group(rl_ctx *ctx, rl_points *s, int first);
/* The group of point first, not run: the run was asked to stop. */
void rl_points_stop_group(rl_points *s, int first);
/* Only validates (an observed experiment measures the valid points itself,
 * then marks each one observed). */
void rl_points_validate(rl_ctx *ctx, rl_points *s);
void rl_point_observed(rl_point *p);

void rl_point_validate(rl_ctx *ctx, rl_point *p);

/* A run asked to stop (SIGTERM, rl_stop_requested): the points it will not
 * measure are not run, each row saying so ("not run: stopped by SIGTERM
 * <when>"); rl_end writes the CSV of the others, marked partial. */
#define RL_STOPPED_WHY "stopped by SIGTERM"
void rl_point_stop(rl_point *p, const char *when);
bool rl_point_stopped(const rl_point *p); /* not run because of the stop */
/* How many points were measured (timed or observed), of how many declared. */
void rl_points_count_measured(const rl_ctx *ctx, int *measured, int *declared);
/* A partial run's verdicts (verdict.c, claims.c): none is judged on part
 * of its points; each says what it read, and every declared claim no part
 * got to judge has its row too. */
void rl_verdicts_not_judged(rl_ctx *ctx, const char *why);
void rl_claims_not_judged(rl_ctx *ctx, const char *why);
/* Whether a verdict on this claim (its id, or its id_scope) was given. */
bool rl_verdict_judged(const rl_ctx *ctx, const char *claim_id);
/* One CSV row per point, and the console table (the experiment's, or the
 * one given; its header is printed when it differs from the last one). */
void rl_points_report_as(rl_ctx *ctx, const rl_points *s, const rl_column *table);

/* "op=cos variant=cos_cos_fused k=2 n=65536": the values of the
 * experiment's compare keys, for messages. */
void rl_point_key(rl_ctx *ctx, const rl_point *p, char *buf, size_t len);
/* --points: a point as declared, its part, group and unmeasured columns. */
void rl_point_describe(rl_ctx *ctx, const rl_point *p, char *buf, size_t len);


/* id: short and stable ("fused_speedup_cos"); note: why, in a few words. */
void rl_verdict(rl_ctx *ctx, const char *id, const char *claim, const char *predicted,
                const char *measured, rl_verdict_status status, const char *note);

/* The same for a claim judged on MBU or MFU: when a ceiling stayed
 * under-measured, the verdict is "not measured" with the reason instead. */
void rl_verdict_on_ceiling(rl_ctx *ctx, const char *id, const char *claim, const char *predicted,
                           const char *measured, rl_verdict_status status, const char *note);

/* Dies with a usage error, before anything is measured, when --plan-file
 * names a file that cannot be written (no such folder, not writable). */
void rl_plan_file_check(const rl_ctx *ctx);

/* outcome.c: how a run ended, as data for scripts (--outcome-file,
 * --rows-file). rl_data_file_check dies with a usage error when path (an
 * option's file, NULL: not given) cannot be written; rl_outcome_files_check
 * checks both files and removes an older outcome file. */
void rl_data_file_check(const char *option, const char *path);
void rl_outcome_files_check(const rl_ctx *ctx);
/* A '# key: value' line for --rows-file's CSV alone (the run's CSV is left
 * as it is); nothing without --rows-file. */
void rl_meta_rows_file(rl_ctx *ctx, const char *key, const char *value);
/* The run's CSV as it stands, with rl_meta_rows_file's lines, to
 * --rows-file (when given); 0 on success, -1 said on stderr. */
int rl_rows_file_write(rl_ctx *ctx);
/* "make plot-NN LABEL=...": the command that draws a run's charts later. */
void rl_redraw_command(const rl_ctx *ctx, char *buf, size_t len);
typedef struct rl_outcome {
    int exit_status;
    bool stopped;           /* a SIGTERM asked the run to stop */
    bool partial;           /* ... before every point was measured */
    bool kept;              /* the run keeps results (not rl_discard_results) */
    bool csv_written;
    bool rows_written;      /* --rows-file's CSV */
    const char *charts_why; /* NULL: the charts were drawn; else a word saying why not */
} rl_outcome;
/* Writes --outcome-file (when given) atomically; 0 on success. */
int rl_outcome_write(const rl_ctx *ctx, const rl_outcome *o);

/* "cpu | NAME | family F model M | N threads" (no family where /proc/cpuinfo has
 * none) or "cuda | NAME | N SMs": whose roofs and tuning a file holds. */
void rl_device_identity(const rl_ctx *ctx, char *buf, size_t len);
void rl_cpu_identity(const rl_device_info *d, char *buf, size_t len);
/* rl_cpu_describe found the x86 family and model (a zeroed struct has not). */
static inline bool rl_cpu_model_known(const rl_device_info *d)
{
    return d->cpu_family > 0 && d->cpu_model >= 0;
}
/* Whether the run was given --budget: the one door to it outside budget.c
 * (roofs reused, trials shortened and tuning skipped under a budget); the
 * budget itself is rl_budget.h's object. */
bool rl_budget_given(const rl_ctx *ctx);
/* progress.c: the progress line's total, one step per group (the plan sets it). */
void rl_progress_total(rl_ctx *ctx, int total);

#ifdef __cplusplus
}
#endif
#endif

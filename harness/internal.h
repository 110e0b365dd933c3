/*
 * internal.h -- what the harness's own files share; not for experiments.
 *
 * Each backend is one file that fills an rl_backend_ops table (the
 * BabelStream idea: one interface, one file per backend).
 */
#ifndef ROOFLAB_INTERNAL_H
#define ROOFLAB_INTERNAL_H

#include "rooflab.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_backend_ops {
    const char *name;
    /* Opens device; fills info. Returns false and a reason when unavailable. */
    bool (*open)(int device, rl_device_info *info, char *why, size_t whylen);
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
    /* Measures the copy/triad bandwidth and the matrix rate. */
    void (*measure_ceilings)(rl_ctx *ctx, rl_ceilings *out);
} rl_backend_ops;

extern const rl_backend_ops rl_cpu_ops;
extern const rl_backend_ops rl_cuda_ops; /* backend_cuda.cu, or backend_nocuda.c */

struct rl_backend {
    const rl_backend_ops *ops;
    rl_device_info info;
};

/* The private part of a context. */
struct rl_ctx_private {
    rl_csv *csv;
    bool row_open;
    int progress_total, progress_done;
    uint64_t seed_counter;
    struct rl_verdict_row *verdicts;
    int n_verdicts, cap_verdicts;
    rl_ceilings ceilings;
    bool have_ceilings;
    char fallback_note[256];
};

/* csv.c: the file under construction, header written, for raw rows. */
FILE *rl_csv_stream(rl_csv *c);

/* verdict.c */
void rl_verdicts_print(rl_ctx *ctx);
int rl_verdicts_write(rl_ctx *ctx); /* results/<label>/verdicts.csv */
void rl_verdicts_free(rl_ctx *ctx);

/* plot.c: draws an experiment's charts from one or more runs' CSVs (the
 * run drawn first) into dir; runs_title says what is compared, or "". */
int rl_draw(const char *exp_id, const char *exp_slug, const char *const *csvs,
            const char *const *names, int nruns, const char *dir, const char *runs_title);
/* A run's charts into plots_dir/label/, overlaying a reference run when
 * reference_csv is not NULL. */
int rl_draw_charts(const rl_experiment *exp, const char *csv_path, const char *plots_dir,
                   const char *label, const char *reference_csv, const char *reference_name);

/* sysinfo.c */
void rl_git_describe(char *buf, size_t len); /* "abc1234" or "abc1234-dirty" */
void rl_utc_now(char *buf, size_t len);
void rl_cpu_describe(rl_device_info *info);
const char *rl_source_root(void);

/* nvml.c: names and clocks for the metadata header. */
void rl_nvml_describe(const char *pci_bus_id, char *buf, size_t len);

/* util.c */
int rl_mkdirs(const char *path); /* mkdir -p; 0 on success */
/* mkstemp makes files only the owner can read; results are shared (rw-r--r-- under the usual umask). */
int rl_mkstemp_shared(char *template_path);

#ifdef __cplusplus
}
#endif
#endif

/*
 * exp01.h -- what experiment 01's files share: the variants' buffers on
 * the device (setup.c: buffers, validation, and the observer that reads
 * NVML or the operating system), the sweeps (main.c) and the verdicts
 * (verdicts.c).
 */
#ifndef EXP01_H
#define EXP01_H

#include "busy.h"
#include "rl_probes.h"
#include "rooflab.h"

enum { MAX_CPU_WORKERS = 256 };

/* What the monitoring tool said about one window of time. */
typedef struct reading {
    double util_pct;        /* CUDA: utilization.gpu. CPU: the workers' busy time (top -H) */
    double util_mem_pct;    /* CUDA: utilization.memory. CPU: none */
    double units_busy_pct;  /* CUDA: GPM SM_UTIL. CPU: process CPU time / (cores x wall) */
    double occupancy_pct, tensor_pct, dram_bw_pct; /* GPM, CUDA only */
    double mem_used, mem_total; /* CUDA: memory.used/total. CPU: resident set, RAM */
    double sm_clock_mhz;
    int util_samples;
    char util_source[64], gpm_status[96], note[256];
} reading;

/* Reads NVML (through the harness's sampler thread) on CUDA, and the
 * kernel's per-thread busy time (/proc) on the CPU. */
typedef struct observer {
    rl_ctx *ctx;
    rl_nvml_sampler *nvml;
    char nvml_why[256];
    int ntids;
    double t[2], proc[2];                  /* at the window's two edges */
    double thread_busy[2][MAX_CPU_WORKERS];
    double rss;
} observer;

/* Whether the variant has this role (busy.h: compute, latency, bandwidth). */
bool role_is(const busy_variant *v, const char *role);

/* The variants' buffers on the backend's device, and what validation found
 * for each row of busy_variants (by its index). */
typedef struct buffers {
    rl_ctx *ctx;
    int max_workers;        /* CUDA: 4 blocks per SM; CPU: the cores */
    size_t lanes;           /* max_workers x the largest lanes per worker */
    uint32_t *states, *seeds_host;
    unsigned long long *counts, *work;
    uint32_t *chain, *chain_starts;  /* chase: the chain, one start per lane */
    size_t chain_lines, chain_stride;
    float *x, *y;
    size_t n;
    double bytes_per_hop;   /* memory traffic of one chase hop: a cache line or sector */
    bool *valid;            /* per row: passed validation */
    char (*why)[256];
} buffers;

/* One measured point of a sweep. */
typedef struct point {
    const char *sweep, *name;  /* name: the variant's, or "idle_allocation" */
    const busy_variant *v;
    bool idle;                 /* memory held, no kernel (the variant at duty 0) */
    int workers;
    double duty, alloc_bytes;
    double duty_measured, duty_min, duty_max, window_s, work, work_per_s;
    long long bursts;
    reading rd;
    bool ok;
} point;

/* verdicts.c: the claims, judged from the points. full: the most work per
 * second the compute variant did (the full device); units: SMs or logical
 * CPUs. */
void judge(rl_ctx *ctx, const point *pts, int n, int units, double full, double ceiling_gbps,
           double bytes_per_hop);

void buffers_open(buffers *b, rl_ctx *ctx);
void buffers_close(buffers *b);
/* Runs the variant once on fresh inputs and checks it; false on failure. */
bool validate_variant(buffers *b, const busy_variant *v);
const busy_ops *ops_of(const rl_ctx *ctx, const busy_variant *v);
/* The arguments for a run of v on `workers` at this duty. */
busy_args variant_args(buffers *b, const busy_variant *v, int workers, double duty,
                       double period_s);

void observer_open(observer *o, rl_ctx *ctx);
void observer_edge(void *arg, int which, const int *tids, int ntids);
void observer_read(observer *o, const busy_result *r, reading *out);
void observer_describe(observer *o, char *buf, size_t len);
void observer_close(observer *o);

/* Device memory held idle: allocated and written once. */
void *idle_allocation(rl_ctx *ctx, double *bytes);

#endif

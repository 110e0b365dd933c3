/*
 * exp01.h -- what experiment 01's files share: the variants' buffers on
 * the device (setup.c: buffers and validation), the sweeps (main.c, with
 * the harness's observer, which reads NVML or the operating system) and
 * the verdicts (verdicts.c).
 */
#ifndef EXP01_H
#define EXP01_H

#include "busy.h"
#include "rl_probes.h"
#include "rooflab.h"

enum { MAX_CPU_WORKERS = RL_OBSERVER_MAX_THREADS }; /* the observer reads each one */

/* Whether the variant has this role (busy.h: compute, latency, bandwidth). */
static inline bool role_is(const busy_variant *v, const char *role)
{
    return kernel_has_role(KERNEL_VARIANT(v), role);
}

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
    signed char *valid;     /* per row: 1 passed validation, 0 failed, -1 not yet run */
    char (*why)[256];
} buffers;

/* One point of a sweep: what it is, then what was observed (its CSV row
 * and console line are declared in main.c). */
typedef struct point {
    const char *sweep, *name;  /* name: the variant's, or "idle_allocation" */
    const char *worker_unit, *work_unit;
    const busy_variant *v;
    buffers *w;                /* for the variant's validation */
    bool idle;                 /* memory held, no kernel (the variant at duty 0) */
    int workers;
    double duty, workers_per_unit, period_ms, alloc_bytes;
    /* observed */
    bool ok;
    int bursts;
    double duty_measured_pct, duty_min_pct, duty_max_pct, window_s, work, work_per_s;
    double work_fraction, gbps; /* against the full device; the bytes a chase or stream moved */
    rl_reading rd;
} point;

/* verdicts.c: the claims, judged from the points. full: the most work per
 * second the compute variant did (the full device); units: SMs or logical
 * CPUs. */
void judge(rl_ctx *ctx, const point *pts, int n, int units, double full, double ceiling_gbps,
           double bytes_per_hop);

void buffers_open(buffers *b, rl_ctx *ctx);
void buffers_close(buffers *b);
/* A point's check: its variant run once on fresh inputs and checked (once
 * per variant; the points of a failed one fail with its reason). */
bool check_point(rl_ctx *ctx, rl_point *p);
/* The arguments for a run of v on `workers` at this duty. */
busy_args variant_args(buffers *b, const busy_variant *v, int workers, double duty,
                       double period_s);

/* The GPU's PCI bus id for the observer (NULL on the CPU). */
const char *observed_gpu(rl_ctx *ctx, char pci[32]);

/* Device memory held idle: allocated and written once. */
void *idle_allocation(rl_ctx *ctx, double *bytes);

#endif

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

/* The variants' buffers on the backend's device. */
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
    const rl_points *points; /* whose variants check_point() validates */
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
    rl_duty measured;          /* the duty cycle from the bursts' timestamps */
    double window_s, work, work_per_s;
    double work_fraction, gbps; /* against the full device; the bytes a chase or stream moved */
    rl_reading rd;
} point;

enum { MAX_POINTS = 64 };

/* A run of the experiment (main.c). */
typedef struct run {
    rl_ctx *ctx;
    buffers w;
    rl_observer obs;
    double settle_s, hold_s, period_s;
    int units;              /* SMs or logical CPUs: "the full device" */
    point pts[MAX_POINTS];  /* the points' data */
    rl_points points;
} run;

/* verdicts.c: the claims, judged from the observed points. full: the most
 * work per second the compute variant did (the full device). */
void judge(const run *r, double full);

void buffers_open(buffers *b, rl_ctx *ctx);
void buffers_close(buffers *b);
/* A point's check: its variant run once on fresh inputs and checked (once
 * per variant; the points of a failed one fail with its reason). */
bool check_point(rl_ctx *ctx, rl_point *p);
/* The arguments for a run of v on `workers` at this duty. */
busy_args variant_args(buffers *b, const busy_variant *v, int workers, double duty,
                       double period_s);

#endif

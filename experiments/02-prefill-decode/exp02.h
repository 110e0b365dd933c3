/*
 * exp02.h -- what experiment 02's two files share: its points and the
 * rules its verdicts use. main.c measures; judge.c states verdicts.
 */
#ifndef EXP02_H
#define EXP02_H

#include "gemv.h"
#include "rooflab.h"

/* One linear layer: k inputs, rows outputs ("4096x14336": in x out). */
typedef struct shape {
    const char *name;
    int k, rows;
} shape;

/* What rl_measure_group() calls: one launch on the next copy of the
 * weights (copies rotate so that the weights are never in cache). */
typedef struct job {
    const gemv_variant *v;
    gemv_args a;
    const fp16 *w0;
    size_t copy_elems;
    int copies, next;
} job;

typedef struct point {
    const shape *s;
    const gemv_variant *v;
    int n;
    job job;
    bool ok;
    int validated_rows;
    double footprint; /* bytes: the rotating weights, the tokens, the outputs */
    double max_abs_err, seconds;
    rl_measurement m;
    char why[256];
} point;

enum { MAX_POINTS = 192 };

typedef struct run {
    rl_ctx *ctx;
    const gemv_variant *table;
    const rl_ceilings *ceil;
    point pts[MAX_POINTS];
    int npts;
} run;

/* Rates of a measured point, from its median time. */
double point_tflops(const point *p);
double point_gbps(const point *p);
double point_ai(const point *p);
double point_mfu(const run *r, const point *p);
double point_mbu(const run *r, const point *p);
rl_roof point_roof(const run *r, const point *p);

/* judge.c */
const point *find_point(const run *r, const shape *s, int n, const char *variant);
const point *fastest_at(const run *r, const shape *s, int n);
/* The ridge of the measured ceilings, FLOP/B. */
double measured_ridge(const run *r);
/* The tokens a batching verdict compares with n = 1, and the points the
 * compute-bound verdict judges, by backend (README, "Tolerances"). */
int free_batch_tokens(const run *r);
bool in_compute_bound_verdict(const run *r, const point *p);
void judge_shape(run *r, const shape *s);

#endif

/*
 * points.h -- experiment 04's measured points: the GEMMs of one part of
 * the experiment, validated, timed in groups, written as CSV rows.
 */
#ifndef EXP04_POINTS_H
#define EXP04_POINTS_H

#include "gemm.h"
#include "rooflab.h"

/* One input matrix: the same numbers on the host (for the reference) and
 * on the device (FP32, and FP16 once a variant asks for it). */
typedef struct operand {
    float *host;
    float *dev;
    void *dev16;
    size_t count;
} operand;

/* Fresh random values in [-1, 1], rounded to FP16 so that FP16 and FP32
 * variants multiply exactly the same numbers. */
operand operand_new(rl_ctx *ctx, size_t count);
void operand_free(rl_ctx *ctx, operand *op);

typedef struct point {
    /* what is run */
    const char *part;     /* "staircase", "library", "vocab" */
    const char *gemm;     /* "nt" (B stored n x k), "forward", "backward_data", ... */
    const gemm_variant *v;
    gemm_args g;          /* shape and layout; the pointers are bound at validation */
    operand *a, *b;       /* g.a and g.b read the start of these */
    int vocab;            /* vocabulary size, for the vocab part */
    /* the reference: columns 0..n-1 of a wider product (ld ref_ld), or
     * NULL: computed for this point alone */
    const double *ref;
    size_t ref_ld;
    /* the wave model of this point */
    int tile_m, tile_n, units, blocks_per_unit;
    long long tiles, waves;
    bool wave_end;        /* the last swept n of its wave */
    int group;            /* points of one group are timed together */
    /* results */
    bool ok;
    double max_abs_err;
    char why[200];
    rl_measurement m;
    double seconds;       /* median */
    double model_s;       /* the wave model's time, NaN when not modelled */
    double speedup;       /* vocab: time at V = 50257 over this time */
} point;

typedef struct sweep {
    rl_ctx *ctx;
    point *pts;
    int n, cap;
    float *c;             /* every point writes here: sized for the largest */
    size_t c_count;
    int next_group;
} sweep;

void sweep_init(sweep *s, rl_ctx *ctx);
/* Adds a copy of p; returns it. Its group is a fresh one unless set. */
point *sweep_add(sweep *s, const point *p);
int sweep_new_group(sweep *s);
/* Fills the wave columns of p from its tile and the units. */
void point_set_waves(point *p, int tile_m, int tile_n, int units, int blocks_per_unit);
/* Validates every point, then times each group of valid ones. */
void sweep_run(sweep *s);
/* Writes the CSV rows and prints the table; extra names its last column
 * (the model's time, or the speedup over V = 50257). */
void sweep_report(sweep *s, const char *extra);
void sweep_free(sweep *s);

double point_flops(const point *p);
double point_tflops(const point *p);

#endif

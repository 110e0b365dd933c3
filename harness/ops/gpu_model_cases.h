/*
 * gpu_model_cases.h -- what make gpu-model judges: each verdict that reads
 * a CUDA kernel against a roof, at the shapes its lab sweep judges, and
 * the bar the verdict needs (gpu_model_cases.c).
 */
#ifndef GPU_MODEL_CASES_H
#define GPU_MODEL_CASES_H

#include "rl_gpu_model.h"

enum { CASE_MAX_PARTS = 8 };

/* One kernel launch of a case, and how many times the call makes it. */
typedef struct case_part {
    char kernel[96];   /* the name as ptxas reports it: decode_split<128, 8> */
    int times;
    rl_gpu_launch launch;
} case_part;

/* How a case is predicted: its kernel's own count against the roof, or
 * (the overlapped spill) the schedule of its blocks, simulated. */
typedef enum case_model { MODEL_ROOF, MODEL_SPILL } case_model;

/* A verdict's case on one GPU: a call made of parts (a decode step: one
 * launch per matrix), judged against bar (a fraction of the roof). */
typedef struct judged_case {
    const char *exp, *claim; /* "07", "attention_mbu" */
    char what[96];           /* the shape: "GQA8 B=64 L=2048" */
    char kind[48];           /* what one verdict judges, its worst case charted: "GQA8" */
    const char *source;      /* its sources, git pathspecs: "kernels/attention* kernels/warp.cuh" */
    rl_stream_rule rule;
    case_model model;
    bool tensor;             /* judged against the tensor peak */
    bool at_most;            /* the bar is an upper bound: the prediction must not exceed it */
    double launch_premise;   /* the verdict judges only where the call's bytes at the roof take
                                this many times its launches (0: no such premise) */
    int rows, k;             /* MODEL_SPILL: the matrix, f its slow part */
    double f;
    int inner_trips;
    double bar;
    char bar_why[160];
    int nparts;
    case_part part[CASE_MAX_PARTS];
    /* Where a run measured it: the experiment's CSV, the row (columns and
     * values, "shape=8192x8192,variant=gemv_fp16,n=1"), read with
     * --measured DIR beside the prediction (its gbps, or tflops for a
     * tensor-bound case, over the datasheet's). */
    char meas_where[160];
} judged_case;

/* The blocks of kernel (launched with threads a block and dyn_smem bytes
 * of dynamic shared memory) an SM of gpu holds, by ptxas's record of it:
 * what a launcher asks the occupancy API for on a GPU. 0: not known. */
typedef int (*blocks_per_sm_fn)(const rl_gpu_spec *gpu, const char *kernel, int threads, double dyn_smem);

/* The cases on gpu, into out (at most max); returns how many. Cases whose
 * shape a verdict on that GPU does not judge (a working set the L2 holds)
 * are left out. relative_to: for a case whose bar is another case's
 * prediction (batching_free: n = 1's over 1.25), the index of that case,
 * else -1, and relative_factor the factor. */
int gpu_model_cases(const rl_gpu_spec *gpu, blocks_per_sm_fn occupancy, judged_case *out, int max,
                    int *relative_to, double *relative_factor);

/* MODEL_SPILL: the claim's metric for the overlapped spill of rows x k
 * at f (gpu_model_spill.c), from the kernel's occupancy (p) and bytes in
 * flight (l); the slow tier's r on the kernel's path in *r. */
double gpu_model_spill_closeness(const rl_gpu_spec *g, const rl_gpu_prediction *p,
                                 const rl_sass_loop *l, int rows, int k, double f, double *r);

#endif

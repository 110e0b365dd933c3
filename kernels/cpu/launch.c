/*
 * cpu/launch.c -- experiment 06's chain and step on the CPU (the table is
 * launch.c, the references ref/launch.c).
 *
 * A CPU "launch" is an OpenMP parallel region: the fork wakes the pool's
 * threads, the join waits for the last of them, and a barrier inside a
 * region is a join without the fork. Those are the CPU's launch and
 * synchronization costs. The chain's loops use schedule(static) over the
 * same n: OpenMP then gives every thread the same elements in every loop,
 * so a loop needs no barrier to see its own elements' previous values.
 */
#include "../launch.h"
#include "simd.h"

#include <math.h>
#include <omp.h>

/* ---- the chain ------------------------------------------------------------ */

static void chain_sync_each(launch_args *a)
{
    float *x = a->x;
    for (int j = 0; j < a->k; j++) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < a->n; i++)
            x[i] = launch_op(x[i]);
    }
}

static void chain_barrier(launch_args *a)
{
    float *x = a->x;
    size_t n = a->n;
    int k = a->k;
#pragma omp parallel
    for (int j = 0; j < k; j++) {
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++)
            x[i] = launch_op(x[i]);
    }
}

static void chain_nowait(launch_args *a)
{
    float *x = a->x;
    size_t n = a->n;
    int k = a->k;
#pragma omp parallel
    for (int j = 0; j < k; j++) {
#pragma omp for schedule(static) nowait
        for (size_t i = 0; i < n; i++)
            x[i] = launch_op(x[i]);
    }
}

/* The floor: one region, each thread its static slice, k passes over it.
 * The empty asm is a compiler barrier: it keeps the passes apart, so the
 * compiler cannot fuse them into one pass with k ops in registers. */
static void one_kernel(launch_args *a)
{
    float *x = a->x;
    size_t n = a->n;
    int k = a->k;
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = n * t / nt, hi = n * (t + 1) / nt;
        for (int j = 0; j < k; j++) {
            for (size_t i = lo; i < hi; i++)
                x[i] = launch_op(x[i]);
            __asm__ __volatile__("" ::: "memory");
        }
    }
}

/* Pass by pass, the compiler barrier keeping the passes apart. */
static void serial(launch_args *a)
{
    float *x = a->x;
    for (int j = 0; j < a->k; j++) {
        for (size_t i = 0; i < a->n; i++)
            x[i] = launch_op(x[i]);
        __asm__ __volatile__("" ::: "memory");
    }
}

/* A CPU has no launch queue: no variant issues without waiting. */
const launch_ops launch_sync_each_cpu = {.run = chain_sync_each};
const launch_ops launch_async_cpu = {.run = chain_barrier};
const launch_ops launch_graph_cpu = {.run = chain_nowait};
const launch_ops launch_one_kernel_cpu = {.run = one_kernel};
const launch_ops launch_serial_cpu = {.run = serial};

/* ---- the step -------------------------------------------------------------- */

/* Output columns per task, a strip of VB vectors, and batch rows per task:
 * each strip of W is loaded once for up to RB rows, not once per row, and
 * the RB x VB accumulators stay in registers (16 vectors). Re-reading W
 * for every row, and sums kept in memory, made the step's time grow with
 * the batch from batch 1: the kernel's cost, not the machine's. */
enum { VB = 4, JB = VB * VF_LANES, RB = 4 };

/* Rows [b0, b0 + rows) of out = in W, a full strip from column j0, the k
 * loop outside; inlined with rows a constant (gemm_tasks' switch), so that
 * no row is computed that is not stored. */
static inline __attribute__((always_inline)) void gemm_strip(float *out, const float *in,
                                                             const float *w, int d, int b0, int j0,
                                                             const int rows)
{
    vf acc[RB][VB];
    for (int r = 0; r < RB; r++)
        for (int v = 0; v < VB; v++)
            acc[r][v] = (vf){0};
    for (int k = 0; k < d; k++) {
        vf wk[VB];
        for (int v = 0; v < VB; v++)
            wk[v] = vf_load(w + (size_t)k * d + j0 + v * VF_LANES);
        for (int r = 0; r < rows; r++) {
            vf xk = (vf){0} + in[(size_t)(b0 + r) * d + k];
            for (int v = 0; v < VB; v++)
                acc[r][v] = vf_fma(xk, wk[v], acc[r][v]);
        }
    }
    for (int r = 0; r < rows; r++)
        for (int v = 0; v < VB; v++)
            vf_store(out + (size_t)(b0 + r) * d + j0 + v * VF_LANES, acc[r][v]);
}

/* The last strip where d is not a multiple of JB (--width 80): narrower
 * than a strip, the sums in memory, a row at a time, still the k loop
 * outside so that the columns vectorize. */
static void gemm_narrow(float *out, const float *in, const float *w, int d, int b0, int rows,
                        int j0)
{
    for (int r = 0; r < rows; r++) {
        float acc[JB] = {0};
        for (int k = 0; k < d; k++) {
            const float xk = in[(size_t)(b0 + r) * d + k], *wk = w + (size_t)k * d + j0;
            for (int j = 0; j < d - j0; j++)
                acc[j] += xk * wk[j];
        }
        for (int j = 0; j < d - j0; j++)
            out[(size_t)(b0 + r) * d + j0 + j] = acc[j];
    }
}

/* out = in W for rows [0, batch): each task up to RB rows and one strip
 * of columns. Called inside a parallel region: an orphaned "omp for". */
static void gemm_tasks(float *out, const float *in, const float *w, int batch, int d)
{
    int strips = (d + JB - 1) / JB, tiles = (batch + RB - 1) / RB;
#pragma omp for schedule(static)
    for (int t = 0; t < tiles * strips; t++) {
        int b0 = t / strips * RB, rows = batch - b0 < RB ? batch - b0 : RB, j0 = t % strips * JB;
        if (j0 + JB > d)
            gemm_narrow(out, in, w, d, b0, rows, j0);
        else if (rows == RB)
            gemm_strip(out, in, w, d, b0, j0, RB);
        else if (rows == 3)
            gemm_strip(out, in, w, d, b0, j0, 3);
        else if (rows == 2)
            gemm_strip(out, in, w, d, b0, j0, 2);
        else
            gemm_strip(out, in, w, d, b0, j0, 1);
    }
}

static void bias_relu_tasks(float *h, const float *bias, int batch, int d)
{
#pragma omp for schedule(static)
    for (size_t i = 0; i < (size_t)batch * d; i++)
        h[i] = fmaxf(h[i] + bias[i % d], 0.0f);
}

static void residual_tasks(float *y, const float *x, int batch, int d)
{
#pragma omp for schedule(static)
    for (size_t i = 0; i < (size_t)batch * d; i++)
        y[i] += x[i];
}

/* Four regions: the CPU's four launches and synchronizations. */
static void step_regions(step_args *s)
{
#pragma omp parallel
    gemm_tasks(s->h, s->x, s->w1, s->batch, s->d);
#pragma omp parallel
    bias_relu_tasks(s->h, s->bias, s->batch, s->d);
#pragma omp parallel
    gemm_tasks(s->y, s->h, s->w2, s->batch, s->d);
#pragma omp parallel
    residual_tasks(s->y, s->x, s->batch, s->d);
}

/* One region, the ops separated by the barriers their loops end with. */
static void step_one_region(step_args *s)
{
#pragma omp parallel
    {
        gemm_tasks(s->h, s->x, s->w1, s->batch, s->d);
        bias_relu_tasks(s->h, s->bias, s->batch, s->d);
        gemm_tasks(s->y, s->h, s->w2, s->batch, s->d);
        residual_tasks(s->y, s->x, s->batch, s->d);
    }
}

const step_ops step_launches_cpu = {.run = step_regions};
const step_ops step_graph_cpu = {.run = step_one_region};

/*
 * launch.c -- experiment 06's variants: how the chain is launched, and how
 * the step is, one row each, with what each backend runs (cpu/launch.c,
 * launch.cu) and the words a chart key gives it on each (CPU, then CUDA).
 * Add a row and its functions; the experiment validates, times, writes and
 * draws it like the others. Then how a variant's ops are called, and the
 * step's inputs.
 */
#include "launch.h"

#include <math.h>

const launch_variant launch_variants[] = {
    {.number = 1, .name = "sync_each", .role = "synchronous",
     .key = {"fork/join per kernel", "sync after each launch"},
     .what = "launch, synchronize, repeat (GPU); a parallel region per kernel: fork and join each time (CPU)",
     .cpu = &launch_sync_each_cpu, .cuda = CUDA_ONLY(&launch_sync_each_cuda)},
    {.number = 2, .name = "async", .role = "asynchronous",
     .key = {"a barrier per kernel", "K launches, one sync"},
     .what = "K launches, one synchronize (GPU); one persistent region, a barrier after each kernel (CPU)",
     .cpu = &launch_async_cpu, .cuda = CUDA_ONLY(&launch_async_cuda)},
    {.number = 3, .name = "graph", .role = "graph",
     .key = {"no barriers", "a CUDA graph, cudaGraphLaunch"},
     .what = "the K launches captured once into a CUDA graph, replayed (GPU); one persistent region, "
             "no barriers: each thread runs its elements through the chain (CPU)",
     .cpu = &launch_graph_cpu, .cuda = CUDA_ONLY(&launch_graph_cuda)},
    {.number = 4, .name = "one_kernel", .role = "floor",
     .key = {"one region", "one kernel, K passes"},
     .what = "the floor: one launch (one region), each thread K passes over its own elements",
     .cpu = &launch_one_kernel_cpu, .cuda = CUDA_ONLY(&launch_one_kernel_cuda)},
    {.number = 5, .name = "serial", .role = "serial",
     .key = {"one thread", "one thread of one block"},
     .what = "one thread runs the whole chain: one thread of one block (GPU), the calling thread (CPU)",
     .cpu = &launch_serial_cpu, .cuda = CUDA_ONLY(&launch_serial_cuda)},
    {0},
};

const step_variant step_variants[] = {
    {.number = 1, .name = "launches", .role = "op_by_op",
     .key = {"four parallel regions", "four launches, one sync"},
     .what = "four launches, one synchronize (GPU); four parallel regions, one per op (CPU)",
     .cpu = &step_launches_cpu, .cuda = CUDA_ONLY(&step_launches_cuda)},
    {.number = 2, .name = "graph", .role = "graph",
     .key = {"one region, barriers between ops", "the four launches as a CUDA graph"},
     .what = "the four launches captured once into a CUDA graph, replayed (GPU); one parallel "
             "region for the step, a barrier between ops (CPU)",
     .cpu = &step_graph_cpu, .cuda = CUDA_ONLY(&step_graph_cuda)},
    {0},
};

static bool has_chain(const void *row, int backend)
{
    const launch_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

static bool has_step(const void *row, int backend)
{
    const step_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

const kernel_family launch_family = {"chain", "cpu/launch.c", "launch.cu", launch_variants,
                                     sizeof launch_variants[0], has_chain, NULL, NULL};
const kernel_family step_family = {"step", "cpu/launch.c", "launch.cu", step_variants,
                                   sizeof step_variants[0], has_step, NULL, NULL};

void launch_call(void *a) { ((launch_args *)a)->ops->run(a); }

void launch_issue(void *a) { ((launch_args *)a)->ops->enqueue(a); }

void step_call(void *s) { ((step_args *)s)->ops->run(s); }

size_t step_input(int i, int batch, int d, float *lo, float *hi)
{
    *hi = i == STEP_BIAS ? 0.5f : i == STEP_X ? 1.0f : sqrtf(3.0f / d); /* weights: variance 1/d */
    *lo = -*hi;
    return i == STEP_BIAS ? (size_t)d : i == STEP_X ? (size_t)batch * d : (size_t)d * d;
}

step_args step_on(const step_ops *ops, float *const in[STEP_INPUTS], float *h, float *y,
                  int batch, int d, struct CUstream_st *stream)
{
    return (step_args){.ops = ops, .batch = batch, .d = d, .w1 = in[STEP_W1], .w2 = in[STEP_W2],
                       .bias = in[STEP_BIAS], .x = in[STEP_X], .h = h, .y = y, .stream = stream};
}

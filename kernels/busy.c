/*
 * busy.c -- experiment 01's variants: one row each, with what each backend
 * runs (cpu/busy.c, busy.cu). The role says which reference checks a
 * variant (ref/busy.c): a new variant takes one of the three, or brings
 * its own check there (busy_check_lanes). Below: the lookups, and the
 * arguments of a run on the buffers every variant shares.
 */
#include "busy.h"

const busy_variant busy_variants[] = {
    {.number = 1, .name = "arith", .role = "compute", .work_unit = "LCG steps",
     .what = "LCG chains, one per GPU thread, 8 per CPU thread: dependent integer multiply-adds, "
             "no memory",
     .cpu = &busy_arith_cpu, .cuda = CUDA_ONLY(&busy_arith_cuda)},
    {.number = 2, .name = "chase", .role = "latency", .work_unit = "hops",
     .what = "one pointer chase per thread through >= 4x the last-level cache: every hop a "
             "memory access",
     .cpu = &busy_chase_cpu, .cuda = CUDA_ONLY(&busy_chase_cuda)},
    {.number = 3, .name = "stream", .role = "bandwidth", .work_unit = "bytes",
     .what = "y = a x + b over >= 4x the last-level cache (16-byte accesses on the GPU, a slice "
             "per CPU thread): the memory bus busy",
     .cpu = &busy_stream_cpu, .cuda = CUDA_ONLY(&busy_stream_cuda)},
    {0},
};

busy_device_fn *const busy_device = CUDA_ONLY(busy_cuda_device);

static bool has(const void *row, int backend)
{
    const busy_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

int busy_max_lanes(int backend)
{
    int most = 1;
    for (const busy_variant *v = busy_variants; v->name; v++) {
        const busy_ops *ops = backend == KERNEL_CUDA ? v->cuda : v->cpu;
        if (ops && ops->lanes > most)
            most = ops->lanes;
    }
    return most;
}

busy_args busy_args_on(const busy_buffers *b, int workers, double duty, double period_s,
                       struct CUstream_st *stream)
{
    return (busy_args){.workers = workers, .duty = duty, .period_s = period_s,
                       .lcg_a = BUSY_LCG_A, .lcg_c = BUSY_LCG_C, .states = b->states,
                       .counts = b->counts, .chain = b->chain, .x = b->x, .y = b->y, .n = b->n,
                       .work = b->work, .stream = stream};
}

const uint32_t *busy_lane_starts(const busy_variant *v, const busy_buffers *b)
{
    return busy_has_role(v, "latency") ? b->chain_starts : b->seeds;
}

const kernel_family busy_family = {"busy", "cpu/busy.c", "busy.cu", busy_variants,
                                   sizeof busy_variants[0], has, NULL, NULL};

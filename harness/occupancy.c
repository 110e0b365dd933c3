/*
 * occupancy.c -- how many thread blocks of a kernel an SM holds at once (a
 * model of the hardware's limits, no device): CUDA's occupancy calculator
 * (cuda_occupancy.h, cudaOccMaxActiveBlocksPerMultiprocessor) for the SMs
 * of the compute capabilities table of the CUDA C++ Programming Guide.
 *
 * Registers are allocated per warp, in units of 256, within each of an
 * SM's four sub-partitions (a quarter of the register file each): warps
 * per sub-partition = 16384 / registers per warp, times four. So 64
 * registers a thread give 32 warps an SM (two blocks of 512 threads, not
 * four), 40 give 48 (three). Threads and blocks per SM are plain caps;
 * shared memory is the block's static and dynamic bytes plus 1 KiB the
 * system reserves per block (sm_80 on), in units of 128 bytes (256 on
 * sm_75), against the largest carve-out.
 */
#include "rl_occupancy.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct sm_limits {
    int sm, threads, blocks, regs, smem, smem_unit, reserved;
} sm_limits;

static const sm_limits SMS[] = {
    {70, 2048, 32, 65536, 98304, 256, 0},
    {75, 1024, 16, 65536, 65536, 256, 0},   {80, 2048, 32, 65536, 167936, 128, 1024},
    {86, 1536, 16, 65536, 102400, 128, 1024}, {87, 1536, 16, 65536, 167936, 128, 1024},
    {89, 1536, 24, 65536, 102400, 128, 1024}, {90, 2048, 32, 65536, 233472, 128, 1024},
    {100, 2048, 32, 65536, 233472, 128, 1024}, {120, 1536, 32, 65536, 102400, 128, 1024},
};

static const sm_limits *limits_of(int sm)
{
    for (size_t i = 0; i < sizeof SMS / sizeof SMS[0]; i++)
        if (SMS[i].sm == sm)
            return &SMS[i];
    return NULL;
}

static int round_up(int x, int unit) { return (x + unit - 1) / unit * unit; }

/* The smaller of the bound so far and a new one, naming the new one when it binds. */
static void cap(rl_occupancy *o, int blocks, const char *why)
{
    if (blocks < o->blocks) {
        o->blocks = blocks;
        o->limit = why;
    }
}

rl_occupancy rl_occupancy_of(int sm, int registers, int threads, double shared_bytes)
{
    const sm_limits *l = limits_of(sm);
    if (!l)
        return (rl_occupancy){0, 0, 0, "an SM this model does not know"};
    rl_occupancy o = {.blocks = l->blocks, .max_warps = l->threads / 32, .limit = "blocks"};
    if (threads <= 0 || threads > 1024)
        return (rl_occupancy){0, 0, o.max_warps, "no block size (no launch bound)"};
    int warps = (threads + 31) / 32;
    cap(&o, o.max_warps / warps, "threads");
    if (registers > 0) {
        int per_warp = round_up(registers * 32, 256);
        int resident = registers > 255 ? 0 : l->regs / 4 / per_warp * 4;
        cap(&o, resident / warps, "registers");
    }
    if (shared_bytes > 0 || l->reserved > 0) {
        int per_block = round_up((int)ceil(shared_bytes) + l->reserved, l->smem_unit);
        cap(&o, per_block > 0 ? l->smem / per_block : o.blocks, "shared memory");
    }
    o.warps = o.blocks * warps;
    return o;
}

void rl_kernel_short_name(const char *demangled, char *out, size_t len)
{
    const char *s = strncmp(demangled, "void ", 5) ? demangled : demangled + 5;
    size_t n = 0;
    for (int depth = 0; s[n] && !(s[n] == '(' && depth == 0); n++)
        depth += (s[n] == '<') - (s[n] == '>');
    snprintf(out, len, "%.*s", (int)n, s);
}

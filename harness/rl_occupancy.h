/*
 * rl_occupancy.h -- a model of how many thread blocks of a kernel one SM
 * holds (occupancy.c), and the short names of kernels as ptxas reports
 * them. The build's kernel_resources tool (harness/ops/kernel_resources.c)
 * and the harness's record of each kernel's resources use it; no
 * experiment does.
 */
#ifndef RL_OCCUPANCY_H
#define RL_OCCUPANCY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Occupancy (occupancy.c): the thread blocks of a kernel one SM holds at
 * once, from its registers per thread, threads per block and shared memory
 * per block, by the rules of CUDA's occupancy calculator (cuda_occupancy.h)
 * for the SMs it knows (sm_70 to sm_120). A model of the hardware's limits,
 * with no device: the build records it for every kernel
 * (harness/ops/kernel_resources.c).
 * ---------------------------------------------------------------------- */
typedef struct rl_occupancy {
    int blocks;        /* per SM; 0: the block does not fit, or the SM is not known */
    int warps;         /* resident: blocks x warps per block */
    int max_warps;     /* the SM's most; 0: not known */
    const char *limit; /* what sets blocks: "registers", "threads", "blocks", "shared memory", or why none */
} rl_occupancy;
rl_occupancy rl_occupancy_of(int sm, int registers, int threads, double shared_bytes);
/* A kernel's name as ptxas's report demangles it, "void gemv_dp4a<q4_block,
 * 1, false>(float*, ...)", to the name and template arguments that tell
 * its instances apart: "gemv_dp4a<q4_block, 1, false>". */
void rl_kernel_short_name(const char *demangled, char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* RL_OCCUPANCY_H */

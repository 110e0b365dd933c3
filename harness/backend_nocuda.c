/*
 * backend_nocuda.c -- stands in for backend_cuda.cu when nvcc was not found
 * at build time: the CUDA backend exists but is never available.
 */
#include "internal.h"

#include <stdio.h>

static rl_open_status nocuda_open(int device, rl_device_info *info, char *why, size_t whylen)
{
    (void)device, (void)info;
    snprintf(why, whylen, "this build has no CUDA backend (nvcc was not found at build time)");
    return RL_ABSENT;
}

const rl_backend_ops rl_cuda_ops = {.name = "cuda", .open = nocuda_open};

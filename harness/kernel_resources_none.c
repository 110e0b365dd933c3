/*
 * kernel_resources_none.c -- a build without nvcc has no CUDA kernels, so
 * no record of them (the CUDA build generates $(B)/gen/kernel_resources.c
 * instead: harness/ops/kernel_resources.c).
 */
#include "internal.h"

const char rl_kernel_resources_nvcc[] = "";
const rl_kernel_resource rl_kernel_resources[] = {{0}};

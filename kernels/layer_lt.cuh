/*
 * layer_lt.cuh -- experiment 09's GEMM with its epilogue inside the
 * product, through cuBLASLt (layer_lt.cu), for layer.cu: bias, bias and
 * GELU, bias and the residual. What cuBLASLt cannot do here (no library,
 * no device, no algorithm for the shape, a GELU that is not layer.h's),
 * layer.cu does as before: the product, then a second pass.
 */
#ifndef KERNELS_LAYER_LT_CUH
#define KERNELS_LAYER_LT_CUH

#include "layer.h"

/* Whether layer_lt_gemm runs a GEMM of a's shape and epilogue in one
 * cuBLASLt call, its pointers taken as cudaMalloc's (256-byte aligned:
 * the counting calls it before the buffers exist). Loads cuBLASLt and
 * asks its heuristic on the first call for a shape (then cached): call it
 * outside any timing. */
bool layer_lt_plans(const layer_args *a);

/* y = epilogue(x w^T) in one cuBLASLt call on a's stream; false, with
 * nothing launched, where cuBLASLt cannot run it here (the caller then
 * runs the product and a second pass). A shape's first call plans it
 * (the heuristic): the experiment validates each step once before it is
 * timed. */
bool layer_lt_gemm(const layer_args *a);

#endif

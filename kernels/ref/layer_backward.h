/*
 * ref/layer_backward.h -- the backward pass's reference (ref/
 * layer_backward.c), for layer_reference (ref/layer.c) alone: the ops
 * LAYER_OP_GEMM_DX .. LAYER_OP_CONCAT, in double, on layer_reference's
 * arguments.
 */
#ifndef KERNELS_REF_LAYER_BACKWARD_H
#define KERNELS_REF_LAYER_BACKWARD_H

#include "../layer.h"

void layer_backward_reference(layer_op op, const layer_args *shape, const layer_ref *io);

#endif

/*
 * cpu/decode_shapes.h -- the CPU decode kernels' candidate shapes, for the
 * harness's tuner (harness/tune_decode.c) to time on this machine:
 *   - each integer format: rows decoded side by side and the prefetch
 *     distance (cpu/quant_dot.h's candidates);
 *   - F16: the FP16 GEMV's rows per step and prefetch distance (gemv.h's).
 *
 * Plain C: the kernels say what they could be and run as told; timing,
 * validation, the cache and the choice are the harness's.
 */
#ifndef KERNELS_CPU_DECODE_SHAPES_H
#define KERNELS_CPU_DECODE_SHAPES_H

#include "quant_dot.h"

#include <stdbool.h>
#include <stddef.h>

enum { DECODE_SHAPES_MAX = 16 };

/* One format's candidates, and what a choice among them depends on
 * besides the machine. */
typedef struct decode_shapes {
    quant_format format;
    int n;                                /* candidates */
    quant_dot_shape shape[DECODE_SHAPES_MAX];
    int default_index;                    /* the compile-time choice; -1: none of them */
    char signature[128];                  /* a new signature is a new candidate set */
} decode_shapes;

/* The last format with a shape to choose, from QF_F16 on: F16 alone, or
 * with integer_formats every format where a SIMD kernel runs (the portable
 * C integer kernels have no shape). */
quant_format decode_shapes_last_format(bool integer_formats);

/* Format f's candidates, to be timed on a rows x k matrix: hot (that one
 * matrix, in a cache) or read from DRAM. The matrix is in the signature. */
void decode_shapes_list(decode_shapes *s, quant_format f, int rows, int k, bool hot);

/* Candidate i in words ("4 rows 1024 B ahead"), no comma. */
void decode_shapes_name(const decode_shapes *s, int i, char *buf, size_t len);

/* Makes candidate i the kernel's shape; false: the kernel rejected it. */
bool decode_shapes_select(const decode_shapes *s, int i);

/* One decode call (y = W x, n = 1) of format f in the shape selected, with
 * the best kernel of the build: W rows x k as quant_encode_matrix wrote
 * it, scratch quant_int8_scratch(rows, k, 1) bytes. */
void decode_shapes_run(quant_format f, float *y, const void *w, const fp16 *x, int rows, int k,
                       void *scratch);

#endif

/*
 * common.h -- what every kernel family shares, usable from C and CUDA.
 */
#ifndef KERNELS_COMMON_H
#define KERNELS_COMMON_H

/* Functions that run on both sides: one definition serves the CPU
 * reference and the CUDA kernel. */
#ifdef __CUDACC__
#define RL_HD __host__ __device__ __forceinline__
#else
#define RL_HD static inline
#endif

/* cudaStream_t is "struct CUstream_st *"; C code carries it by this name. */
struct CUstream_st;

#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>

/* In a family's table (a .c file, compiled with or without CUDA): a CUDA
 * launcher where the build has CUDA, NULL where it has not. */
#ifdef RL_HAVE_CUDA
#define CUDA_ONLY(launcher) launcher
#else
#define CUDA_ONLY(launcher) NULL
#endif

/* ---- one table per kernel family ---------------------------------------------
 * Every family's variant row starts with these fields, then its own (the
 * launcher of each backend, .cpu and .cuda, NULL where a backend lacks the
 * variant; what the family needs to count or run it). Rows are written
 * with designated initializers; a row whose name is NULL ends the table.
 * Experiments find a variant by its role, never by its number. */
#define KERNEL_VARIANT_HEAD                                                          \
    int number;        /* stable: CSVs, --variant and --list use it */               \
    const char *name;  /* says what it does, for every op it runs */                 \
    const char *what;  /* one line for --list */                                    \
    const char *role /* what an experiment looks it up by ("fused"); NULL: none */

typedef struct kernel_variant {
    KERNEL_VARIANT_HEAD;
} kernel_variant;

/* A family's row seen as its head, for the generic code. */
#define KERNEL_VARIANT(row) ((const kernel_variant *)(row))

enum { KERNEL_CPU = 0, KERNEL_CUDA = 1 };

/* A family's table for code that does not know its row type (the harness:
 * --list, --variant, lookups; the tests: both backends' rows). */
typedef struct kernel_family {
    const char *name;                 /* "fusion" */
    const char *cpu_file, *cuda_file; /* under kernels/, for --list */
    const void *rows;
    size_t stride;                    /* sizeof one row */
    bool (*has)(const void *row, int backend); /* KERNEL_CPU or KERNEL_CUDA */
    /* What --list adds to a row ("n <= 8"), or NULL. */
    void (*detail)(const void *row, char *buf, size_t len);
} kernel_family;

/* Whether the row has this role (NULL rows and rows without one: no). */
static inline bool kernel_has_role(const kernel_variant *v, const char *role)
{
    return v && v->role && role && !__builtin_strcmp(v->role, role);
}

static inline const kernel_variant *kernel_row(const kernel_family *f, int i)
{
    return (const kernel_variant *)((const char *)f->rows + (size_t)i * f->stride);
}

#endif

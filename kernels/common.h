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

/* ---- one call of a kernel, as a value ------------------------------------------
 * Every launcher of a family has one shape, void f(const <family>_args *),
 * so a call is a launcher and its arguments. KERNEL_CALL_TYPE(gemv,
 * gemv_args) defines, once per family (in its header), the struct
 * gemv_call {launch, args} and gemv_kernel_call(&c), the kernel_call the
 * harness runs: a point carries it, and no experiment writes the glue
 * that casts a void pointer back to its call. Type-checked at compile
 * time: a launcher of another family does not fit. */
typedef struct kernel_call {
    void (*run)(void *call); /* makes the call */
    void *call;              /* the family's <family>_call */
} kernel_call;

#define KERNEL_CALL_TYPE(prefix, args_type)                                       \
    typedef struct prefix##_call {                                                \
        void (*launch)(const args_type *a);                                       \
        args_type args;                                                           \
    } prefix##_call;                                                              \
    static inline void prefix##_call_run(void *c)                                 \
    {                                                                             \
        const prefix##_call *k = (const prefix##_call *)c;                        \
        k->launch(&k->args);                                                      \
    }                                                                             \
    static inline kernel_call prefix##_kernel_call(prefix##_call *c)              \
    {                                                                             \
        kernel_call k = {prefix##_call_run, c};                                   \
        return k;                                                                 \
    }

/* ---- one table per kernel family ---------------------------------------------
 * Every family's variant row starts with these fields, then its own (the
 * launcher of each backend, .cpu and .cuda, NULL where a backend lacks the
 * variant; what the family needs to count or run it). Rows are written
 * with designated initializers; a row whose name is NULL ends the table.
 * Experiments find a variant by its role, never by its number; charts
 * find it by its role and name it by its key, both read from the CSV's
 * header (role_<family>_<role>, key_<backend>_<family>_<name>). */
#define KERNEL_VARIANT_HEAD                                                          \
    int number;        /* stable: CSVs, --variant and --list use it */               \
    const char *name;  /* says what it does, for every op it runs */                 \
    const char *what;  /* one line for --list */                                     \
    const char *role;  /* what an experiment looks it up by ("fused"); NULL: none */ \
    /* Its words in a chart key, [KERNEL_CPU] and [KERNEL_CUDA]; NULL: its           \
     * name alone. A run writes them and the role into its CSV's header. */          \
    const char *key[2]

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
    /* Another family's .cu file whose kernels its CUDA rows launch too
     * (quant's F16 rows run gemv.cu's gemv_fp16), or NULL: the run's
     * kernel_resources lines list both files' kernels. */
    const char *also_cuda_file;
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

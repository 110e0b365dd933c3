/*
 * cublas_loader.cu -- cuBLAS loaded when a program first calls it, not
 * when the program starts.
 *
 * Linked the usual way (-lcublas), libcublas and the libcublasLt it pulls
 * in (over half a gigabyte) are mapped and relocated at every start of
 * every binary, the CPU backend's too, where no cuBLAS call is ever made:
 * most of the start-up time of an experiment and of each test process.
 * So the binaries do not link it: this file defines the few cuBLAS
 * functions the kernels and the harness call, each of which opens the
 * library of the toolkit the build compiled against (libcublas.so.N, N
 * its CUBLAS_VER_MAJOR) on the first call, through the binary's run path,
 * and forwards to the real function. The definitions take their types
 * from cublas_api.h, so a toolkit whose API differs fails to compile here,
 * not at run time. Where the library cannot be opened, every call returns
 * CUBLAS_STATUS_NOT_INITIALIZED and cublasGetStatusString says why, so a
 * checked call (check.h) names the missing library.
 */
#include "rl_backend.h"

/* The declarations this file defines, as host functions: cublas_v2.h
 * declares them __host__ __device__ for device-side cuBLAS under some
 * toolkits (CUDA 12), and a host definition cannot match that. They are
 * the same functions; only this file sees them so. */
#define CUBLASAPI
#include <cublas_api.h>
#include <dlfcn.h>
#include <stdio.h>

#define RL_TEXT_OF(x) #x
#define RL_NUMBER_TEXT(x) RL_TEXT_OF(x)
static const char CUBLAS_SONAME[] = "libcublas.so." RL_NUMBER_TEXT(CUBLAS_VER_MAJOR);

static char load_error[512];

/* The library, opened once; NULL (and load_error) where it cannot be. */
static void *cublas_library(void)
{
    static void *lib;
    static bool tried;
    if (!tried) {
        tried = true;
        lib = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            snprintf(load_error, sizeof load_error, "cuBLAS could not be loaded (%s): %s",
                     CUBLAS_SONAME, dlerror());
    }
    return lib;
}

static void *cublas_symbol(const char *name)
{
    void *lib = cublas_library();
    void *fn = lib ? dlsym(lib, name) : NULL;
    if (lib && !fn)
        snprintf(load_error, sizeof load_error, "%s has no %s: %s", CUBLAS_SONAME, name,
                 dlerror());
    return fn;
}

/* The real function of this name (of type real_fn), looked up once. */
#define RL_REAL(type, name) \
    static type real_ = NULL; \
    if (!real_) \
        real_ = (type)cublas_symbol(name)

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t *handle)
{
    typedef cublasStatus_t (*real_fn)(cublasHandle_t *);
    RL_REAL(real_fn, "cublasCreate_v2");
    return real_ ? real_(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle)
{
    typedef cublasStatus_t (*real_fn)(cublasHandle_t);
    RL_REAL(real_fn, "cublasDestroy_v2");
    return real_ ? real_(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    typedef cublasStatus_t (*real_fn)(cublasHandle_t, cudaStream_t);
    RL_REAL(real_fn, "cublasSetStream_v2");
    return real_ ? real_(handle, stream) : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *CUBLASWINAPI cublasGetStatusString(cublasStatus_t status)
{
    typedef const char *(*real_fn)(cublasStatus_t);
    RL_REAL(real_fn, "cublasGetStatusString");
    return real_ ? real_(status) : load_error;
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void *alpha, const void *A, cudaDataType Atype,
                                         int lda, const void *B, cudaDataType Btype, int ldb,
                                         const void *beta, void *C, cudaDataType Ctype, int ldc,
                                         cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    typedef cublasStatus_t (*real_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                               const void *, const void *, cudaDataType, int, const void *,
                               cudaDataType, int, const void *, void *, cudaDataType, int,
                               cublasComputeType_t, cublasGemmAlgo_t);
    RL_REAL(real_fn, "cublasGemmEx");
    return real_ ? real_(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
                         C, Ctype, ldc, computeType, algo)
                 : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType Atype, int lda, long long int strideA,
    const void *B, cudaDataType Btype, int ldb, long long int strideB, const void *beta, void *C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    typedef cublasStatus_t (*real_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                               const void *, const void *, cudaDataType, int, long long int,
                               const void *, cudaDataType, int, long long int, const void *,
                               void *, cudaDataType, int, long long int, int, cublasComputeType_t,
                               cublasGemmAlgo_t);
    RL_REAL(real_fn, "cublasGemmStridedBatchedEx");
    return real_ ? real_(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
                         ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo)
                 : CUBLAS_STATUS_NOT_INITIALIZED;
}

/* Every function above resolved from the library: 1, or 0 and why (for
 * the checks that a build finds its cuBLAS: make check-cuda12, the tests). */
int rl_cublas_resolve_all(char *why, size_t len)
{
    static const char *const NAMES[] = {"cublasCreate_v2", "cublasDestroy_v2",
                                        "cublasSetStream_v2", "cublasGetStatusString",
                                        "cublasGemmEx", "cublasGemmStridedBatchedEx"};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!cublas_symbol(NAMES[i])) {
            snprintf(why, len, "%s", load_error);
            return 0;
        }
    snprintf(why, len, "%s: every function found", CUBLAS_SONAME);
    return 1;
}

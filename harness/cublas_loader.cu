/*
 * cublas_loader.cu -- cuBLAS and cuBLASLt loaded when a program first
 * calls them, not when the program starts.
 *
 * Linked the usual way (-lcublas), libcublas and the libcublasLt it pulls
 * in (over half a gigabyte) are mapped and relocated at every start of
 * every binary, the CPU backend's too, where no cuBLAS call is ever made:
 * most of the start-up time of an experiment and of each test process.
 * So the binaries link neither: this file defines the few cuBLAS and
 * cuBLASLt functions the kernels and the harness call, each of which opens
 * the library of the toolkit the build compiled against (libcublas.so.N,
 * libcublasLt.so.N, N its CUBLAS_VER_MAJOR: the two ship together) on the
 * first call, through the binary's run path, and forwards to the real
 * function. The definitions take their types from cublas_api.h and
 * cublasLt.h, so a toolkit whose API differs fails to compile here, not at
 * run time. Where a library cannot be opened, every call into it returns
 * CUBLAS_STATUS_NOT_INITIALIZED and cublasGetStatusString (cuBLAS) or
 * cublasLtGetStatusString (cuBLASLt) says why, so a checked call (check.h)
 * names the missing library; the callers of cuBLASLt (kernels/layer_lt.cu)
 * take such a status as "not here" and run without it.
 */
#include "rl_backend.h"

/* The declarations this file defines, as host functions: cublas_v2.h
 * declares them __host__ __device__ for device-side cuBLAS under some
 * toolkits (CUDA 12), and a host definition cannot match that. They are
 * the same functions; only this file sees them so. */
#define CUBLASAPI
#include <cublas_api.h>
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdio.h>

#define RL_TEXT_OF(x) #x
#define RL_NUMBER_TEXT(x) RL_TEXT_OF(x)

/* One library: its name, its handle once opened (NULL and error where it
 * cannot be). */
typedef struct rl_library {
    const char *soname, *what;
    void *lib;
    bool tried;
    char error[512];
} rl_library;

static rl_library cublas_lib = {"libcublas.so." RL_NUMBER_TEXT(CUBLAS_VER_MAJOR), "cuBLAS", NULL, false, ""};
static rl_library cublaslt_lib = {"libcublasLt.so." RL_NUMBER_TEXT(CUBLAS_VER_MAJOR), "cuBLASLt", NULL, false, ""};

/* The library, opened once; NULL (and its error) where it cannot be. */
static void *library(rl_library *l)
{
    if (!l->tried) {
        l->tried = true;
        l->lib = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
        if (!l->lib)
            snprintf(l->error, sizeof l->error, "%s could not be loaded (%s): %s", l->what, l->soname,
                     dlerror());
    }
    return l->lib;
}

static void *symbol(rl_library *l, const char *name)
{
    void *lib = library(l);
    void *fn = lib ? dlsym(lib, name) : NULL;
    if (lib && !fn)
        snprintf(l->error, sizeof l->error, "%s has no %s: %s", l->soname, name, dlerror());
    return fn;
}

/* The real function of this name (of type type) in library l, looked up
 * once. */
#define RL_REAL_IN(l, type, name) \
    static type real_ = NULL; \
    if (!real_) \
        real_ = (type)symbol(&(l), name)
#define RL_REAL(type, name) RL_REAL_IN(cublas_lib, type, name)
#define RL_REAL_LT(type, name) RL_REAL_IN(cublaslt_lib, type, name)

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
    return real_ ? real_(status) : cublas_lib.error;
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

/* ---- cuBLASLt: the matmul with an epilogue (kernels/layer_lt.cu) ---- */

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t *lightHandle)
{
    typedef cublasStatus_t (*real_fn)(cublasLtHandle_t *);
    RL_REAL_LT(real_fn, "cublasLtCreate");
    return real_ ? real_(lightHandle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    typedef cublasStatus_t (*real_fn)(cublasLtHandle_t);
    RL_REAL_LT(real_fn, "cublasLtDestroy");
    return real_ ? real_(lightHandle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *CUBLASWINAPI cublasLtGetStatusString(cublasStatus_t status)
{
    typedef const char *(*real_fn)(cublasStatus_t);
    RL_REAL_LT(real_fn, "cublasLtGetStatusString");
    return real_ ? real_(status) : cublaslt_lib.error;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                                     cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
    RL_REAL_LT(real_fn, "cublasLtMatmulDescCreate");
    return real_ ? real_(matmulDesc, computeType, scaleType) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatmulDesc_t);
    RL_REAL_LT(real_fn, "cublasLtMatmulDescDestroy");
    return real_ ? real_(matmulDesc) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void *buf, size_t sizeInBytes)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                      const void *, size_t);
    RL_REAL_LT(real_fn, "cublasLtMatmulDescSetAttribute");
    return real_ ? real_(matmulDesc, attr, buf, sizeInBytes) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout,
                                                       cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t,
                                      int64_t);
    RL_REAL_LT(real_fn, "cublasLtMatrixLayoutCreate");
    return real_ ? real_(matLayout, type, rows, cols, ld) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatrixLayout_t);
    RL_REAL_LT(real_fn, "cublasLtMatrixLayoutDestroy");
    return real_ ? real_(matLayout) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatmulPreference_t *);
    RL_REAL_LT(real_fn, "cublasLtMatmulPreferenceCreate");
    return real_ ? real_(pref) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatmulPreference_t);
    RL_REAL_LT(real_fn, "cublasLtMatmulPreferenceDestroy");
    return real_ ? real_(pref) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
    size_t sizeInBytes)
{
    typedef cublasStatus_t (*real_fn)(cublasLtMatmulPreference_t,
                                      cublasLtMatmulPreferenceAttributes_t, const void *, size_t);
    RL_REAL_LT(real_fn, "cublasLtMatmulPreferenceSetAttribute");
    return real_ ? real_(pref, attr, buf, sizeInBytes) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount)
{
    typedef cublasStatus_t (*real_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                      cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                      cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                                      cublasLtMatmulHeuristicResult_t[], int *);
    RL_REAL_LT(real_fn, "cublasLtMatmulAlgoGetHeuristic");
    return real_ ? real_(lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc, preference,
                         requestedAlgoCount, heuristicResultsArray, returnAlgoCount)
                 : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t lightHandle,
                                           cublasLtMatmulDesc_t computeDesc, const void *alpha,
                                           const void *A, cublasLtMatrixLayout_t Adesc,
                                           const void *B, cublasLtMatrixLayout_t Bdesc,
                                           const void *beta, const void *C,
                                           cublasLtMatrixLayout_t Cdesc, void *D,
                                           cublasLtMatrixLayout_t Ddesc,
                                           const cublasLtMatmulAlgo_t *algo, void *workspace,
                                           size_t workspaceSizeInBytes, cudaStream_t stream)
{
    typedef cublasStatus_t (*real_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                      const void *, cublasLtMatrixLayout_t, const void *,
                                      cublasLtMatrixLayout_t, const void *, const void *,
                                      cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                      const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
    RL_REAL_LT(real_fn, "cublasLtMatmul");
    return real_ ? real_(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D,
                         Ddesc, algo, workspace, workspaceSizeInBytes, stream)
                 : CUBLAS_STATUS_NOT_INITIALIZED;
}

/* Every function above resolved from its library: 1, or 0 and why (for
 * the checks that a build finds its cuBLAS and cuBLASLt: make
 * check-cuda12, the tests). */
int rl_cublas_resolve_all(char *why, size_t len)
{
    static const char *const NAMES[] = {"cublasCreate_v2", "cublasDestroy_v2",
                                        "cublasSetStream_v2", "cublasGetStatusString",
                                        "cublasGemmEx", "cublasGemmStridedBatchedEx"};
    static const char *const LT_NAMES[] = {
        "cublasLtCreate", "cublasLtDestroy", "cublasLtGetStatusString", "cublasLtMatmulDescCreate",
        "cublasLtMatmulDescDestroy", "cublasLtMatmulDescSetAttribute", "cublasLtMatrixLayoutCreate",
        "cublasLtMatrixLayoutDestroy", "cublasLtMatmulPreferenceCreate",
        "cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreferenceSetAttribute",
        "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul"};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!symbol(&cublas_lib, NAMES[i])) {
            snprintf(why, len, "%s", cublas_lib.error);
            return 0;
        }
    for (size_t i = 0; i < sizeof LT_NAMES / sizeof LT_NAMES[0]; i++)
        if (!symbol(&cublaslt_lib, LT_NAMES[i])) {
            snprintf(why, len, "%s", cublaslt_lib.error);
            return 0;
        }
    snprintf(why, len, "%s: every function found; %s: every function found", cublas_lib.soname,
             cublaslt_lib.soname);
    return 1;
}

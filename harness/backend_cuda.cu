/*
 * backend_cuda.cu -- the CUDA backend: device memory, one stream, events
 * for timing, an L2 flush for cold samples; its ceilings are in
 * ladder_cuda.cu.
 *
 * cudart is linked statically, so on a machine without a driver the first
 * call returns an error that open() turns into a sentence, not a crash.
 */
#include "check.h"
#include "internal.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static cudaStream_t stream;
static cudaEvent_t ev_start, ev_stop;
static void *flush_buf;
static size_t flush_bytes;
static int flush_value;

static const char *no_gpu_reason(cudaError_t e)
{
    switch (e) {
    case cudaErrorInsufficientDriver: return "no NVIDIA driver (or one older than this CUDA runtime)";
    case cudaErrorNoDevice: return "no CUDA-capable device";
    default: return cudaGetErrorString(e);
    }
}

static void describe(int device, rl_device_info *info)
{
    cudaDeviceProp p;
    RL_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->mem_bytes = (double)p.totalGlobalMem;

    /* CUDA 13 removed the clock fields from cudaDeviceProp: ask attributes. */
    int v;
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
    info->sm_count = v;
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device));
    info->sm_clock_mhz = v / 1000.0;
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, device));
    info->mem_clock_mhz = v / 1000.0;
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, device));
    info->mem_bus_bits = v;
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, device));
    info->llc_bytes = v;
    /* Double data rate: two transfers per memory clock. */
    info->theoretical_gbps = 2.0 * info->mem_clock_mhz * 1e6 * info->mem_bus_bits / 8 / 1e9;

    int drv, rt;
    RL_CUDA_CHECK(cudaDriverGetVersion(&drv));
    RL_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    snprintf(info->driver, sizeof info->driver, "CUDA %d.%d", drv / 1000, drv % 1000 / 10);
    snprintf(info->runtime, sizeof info->runtime, "CUDA %d.%d", rt / 1000, rt % 1000 / 10);

    char pci[32];
    RL_CUDA_CHECK(cudaDeviceGetPCIBusId(pci, sizeof pci, device));
    rl_nvml_describe(pci, info->nvml, sizeof info->nvml);
}

static bool cuda_open(int device, rl_device_info *info, char *why, size_t whylen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        snprintf(why, whylen, "%s", e != cudaSuccess ? no_gpu_reason(e) : "no CUDA-capable device");
        cudaGetLastError(); /* clear it, so that later calls start clean */
        return false;
    }
    if (device < 0 || device >= count) {
        snprintf(why, whylen, "no CUDA device %d (this machine has %d)", device, count);
        return false;
    }
    RL_CUDA_CHECK(cudaSetDevice(device));
    describe(device, info);
    RL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    RL_CUDA_CHECK(cudaEventCreate(&ev_start));
    RL_CUDA_CHECK(cudaEventCreate(&ev_stop));
    return true;
}

static void cuda_close(void)
{
    if (flush_buf)
        RL_CUDA_CHECK(cudaFree(flush_buf));
    flush_buf = NULL;
    RL_CUDA_CHECK(cudaEventDestroy(ev_start));
    RL_CUDA_CHECK(cudaEventDestroy(ev_stop));
    RL_CUDA_CHECK(cudaStreamDestroy(stream));
}

static void *cuda_alloc(size_t bytes)
{
    void *p = NULL;
    RL_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
}

static void cuda_free(void *p) { RL_CUDA_CHECK(cudaFree(p)); }

static void cuda_upload(void *dst, const void *src, size_t bytes)
{
    RL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

static void cuda_download(void *dst, const void *src, size_t bytes)
{
    RL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

static void cuda_poison(void *p, size_t bytes)
{
    RL_CUDA_CHECK(cudaMemsetAsync(p, 0xFF, bytes, stream));
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

static void cuda_sync(void) { RL_CUDA_CHECK(cudaStreamSynchronize(stream)); }
static struct CUstream_st *cuda_stream(void) { return stream; }

/* Writing a buffer twice the L2 evicts the measured data from it. The
 * buffer is allocated once; the value changes so no write is redundant. */
static void cuda_flush_cache(void)
{
    if (!flush_buf) {
        int l2 = 0, dev = 0;
        RL_CUDA_CHECK(cudaGetDevice(&dev));
        RL_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
        RL_CUDA_CHECK(cudaMalloc(&flush_buf, flush_bytes));
    }
    RL_CUDA_CHECK(cudaMemsetAsync(flush_buf, ++flush_value & 0xFF, flush_bytes, stream));
}

static void cuda_timer_start(void) { RL_CUDA_CHECK(cudaEventRecord(ev_start, stream)); }

static double cuda_timer_stop(void)
{
    float ms = 0;
    RL_CUDA_CHECK(cudaEventRecord(ev_stop, stream));
    RL_CUDA_CHECK(cudaEventSynchronize(ev_stop));
    RL_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    return ms / 1e3;
}

static void cuda_range_push(const char *name) { nvtxRangePushA(name); }
static void cuda_range_pop(void) { nvtxRangePop(); }

extern "C" const rl_backend_ops rl_cuda_ops = {
    "cuda",
    cuda_open,
    cuda_close,
    cuda_alloc,
    cuda_free,
    cuda_upload,
    cuda_download,
    cuda_poison,
    cuda_sync,
    cuda_stream,
    cuda_flush_cache,
    cuda_timer_start,
    cuda_timer_stop,
    cuda_range_push,
    cuda_range_pop,
    rl_cuda_bandwidth,
    rl_cuda_gemm,
    NULL, /* no FMA roof: the matrix units set the GPU's */
    rl_cuda_gemm_sizes,
    "cuBLAS FP16 GEMM (FP32 out)",
};

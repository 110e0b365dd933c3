/*
 * backend_cuda.cu -- the CUDA backend: device memory, one stream, events
 * for timing, an L2 flush for cold samples; its ceilings are in
 * ladder_cuda.cu.
 *
 * cudart is linked statically, so on a machine without a driver the first
 * call returns an error that open() turns into a diagnosis (diagnose.c),
 * not a crash.
 */
#include "check.h"
#include "internal.h"
#include "probes/rl_probes.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static cudaStream_t stream;
static cudaEvent_t ev_start, ev_stop;
static void *flush_buf;
static size_t flush_bytes;
static int flush_value;

/* The diagnosis's error numbers are CUDA's. */
#define SAME_ERROR(ours, cuda) static_assert((int)(ours) == (int)(cuda), #ours " is " #cuda)
SAME_ERROR(RL_CUERR_INITIALIZATION, cudaErrorInitializationError);
SAME_ERROR(RL_CUERR_STUB_LIBRARY, cudaErrorStubLibrary);
SAME_ERROR(RL_CUERR_INSUFFICIENT_DRIVER, cudaErrorInsufficientDriver);
SAME_ERROR(RL_CUERR_CALL_REQUIRES_NEWER_DRIVER, cudaErrorCallRequiresNewerDriver);
SAME_ERROR(RL_CUERR_DEVICES_UNAVAILABLE, cudaErrorDevicesUnavailable);
SAME_ERROR(RL_CUERR_NO_DEVICE, cudaErrorNoDevice);
SAME_ERROR(RL_CUERR_INVALID_DEVICE, cudaErrorInvalidDevice);
SAME_ERROR(RL_CUERR_UNSUPPORTED_PTX_VERSION, cudaErrorUnsupportedPtxVersion);
SAME_ERROR(RL_CUERR_SYSTEM_NOT_READY, cudaErrorSystemNotReady);
SAME_ERROR(RL_CUERR_SYSTEM_DRIVER_MISMATCH, cudaErrorSystemDriverMismatch);
SAME_ERROR(RL_CUERR_COMPAT_NOT_SUPPORTED, cudaErrorCompatNotSupportedOnDevice);
SAME_ERROR(RL_CUERR_UNKNOWN, cudaErrorUnknown);

/* A device that did not open: gathers what the driver, NVML and the
 * kernel module say, and lets the diagnosis decide between "no GPU here"
 * and "a GPU CUDA cannot use". The failed call's error is cleared, so
 * that later calls start clean. Neither version call can fail with a
 * driver missing: they report 0 for it. */
static rl_open_status not_opened(cudaError_t e, const char *call, int device, int count, char *why,
                                 size_t whylen)
{
    cudaGetLastError();
    rl_cuda_facts f = {};
    f.error = (int)e;
    f.call = call;
    f.device = device;
    f.device_count = count;
    if (cudaDriverGetVersion(&f.driver_cuda) != cudaSuccess)
        f.driver_cuda = 0;
    if (cudaRuntimeGetVersion(&f.runtime_cuda) != cudaSuccess)
        f.runtime_cuda = CUDART_VERSION;
    cudaGetLastError();
    rl_cuda_facts_gather(&f, device);
    rl_open_status st = rl_cuda_diagnose(&f, why, whylen);
    if (st == RL_OPENED) { /* the facts show nothing wrong: say what CUDA said */
        snprintf(why, whylen, "%s: %s", call, cudaGetErrorString(e));
        st = RL_UNUSABLE;
    }
    return st;
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

    RL_CUDA_CHECK(cudaDeviceGetPCIBusId(info->pci_bus_id, sizeof info->pci_bus_id, device));
    rl_nvml_describe(info->pci_bus_id, info->nvml, sizeof info->nvml);
}

static rl_open_status cuda_open(int device, rl_device_info *info, char *why, size_t whylen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return not_opened(e, "cudaGetDeviceCount", device, count, why, whylen);
    if (device < 0 || device >= count)
        return not_opened(cudaSuccess, "cudaGetDeviceCount", device, count, why, whylen);
    /* The context is created here: an exclusive-process GPU held by another
     * process fails now, and deserves a diagnosis, not a check failure. */
    e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return not_opened(e, "cudaSetDevice", device, count, why, whylen);
    describe(device, info);
    RL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    RL_CUDA_CHECK(cudaEventCreate(&ev_start));
    RL_CUDA_CHECK(cudaEventCreate(&ev_stop));
    return RL_OPENED;
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

/* Reads the whole buffer. The sink is written only when the sum takes a
 * value it practically never takes, but the compiler cannot know that, so
 * every load stays. */
__global__ void read_all(const uint4 *__restrict__ p, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc += v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

/* Writing a buffer twice the L2 evicts the measured data from it; the
 * value changes so no write is redundant. That leaves the L2 full of dirty
 * lines, which the timed kernel would then write back as it evicts them
 * (a large share of a short kernel's time, a GEMV's). Reading the buffer next
 * writes them back now, before the start event, and leaves clean lines.
 * The buffer is allocated once, with 16 bytes more for the reader's sink. */
static void cuda_flush_cache(void)
{
    if (!flush_buf) {
        int l2 = 0, dev = 0;
        RL_CUDA_CHECK(cudaGetDevice(&dev));
        RL_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
        RL_CUDA_CHECK(cudaMalloc(&flush_buf, flush_bytes + sizeof(uint4)));
    }
    RL_CUDA_CHECK(cudaMemsetAsync(flush_buf, ++flush_value & 0xFF, flush_bytes, stream));
    size_t n = flush_bytes / sizeof(uint4);
    unsigned *sink = (unsigned *)((char *)flush_buf + flush_bytes);
    read_all<<<1024, 256, 0, stream>>>((const uint4 *)flush_buf, n, sink);
    RL_CUDA_CHECK_LAUNCH();
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
    rl_cuda_bandwidth_probe,
    rl_cuda_compute_probe,
    rl_cuda_probe_release,
    rl_cuda_gemm_sizes,
    "cuBLAS FP16 GEMM (FP32 out)",
};

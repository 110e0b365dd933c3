/*
 * busy.cu -- experiment 01's variants on the GPU (the table is busy.c).
 *
 * Every thread reads the GPU's global nanosecond timer (%globaltimer) when
 * it starts and works until a deadline on it, so a kernel's length is set
 * by the host and its work is counted: steps, hops or bytes, summed into
 * one device counter (one atomic per warp). A run launches one kernel per
 * period from the host, sleeping in between, and brackets each kernel with
 * events: the kernels' busy intervals on the GPU's own clock.
 */
#include "busy.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

__device__ __forceinline__ unsigned long long globaltimer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Adds the warp's sum of v to *work: one atomic per warp, not per thread. */
__device__ __forceinline__ void add_work(unsigned long long *work, unsigned long long v)
{
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(work, v);
}

/* Variant 1: one LCG chain per thread, a dependent integer multiply-add per
 * step. a and c are kernel arguments, so the chain cannot be folded. */
__global__ void arith_kernel(uint32_t *states, unsigned long long *counts, unsigned long long *work,
                             uint32_t a, uint32_t c, unsigned long long ns)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    uint32_t x = states[i];
    unsigned long long steps = 0, deadline = globaltimer_ns() + ns;
    do {
#pragma unroll
        for (int k = 0; k < BUSY_ARITH_CHUNK; k++)
            x = busy_lcg(x, a, c);
        steps += BUSY_ARITH_CHUNK;
    } while (globaltimer_ns() < deadline);
    states[i] = x;
    counts[i] = steps;
    add_work(work, steps);
}

/* Variant 2: one pointer chase per thread; each load waits for the last. */
__global__ void chase_kernel(const uint32_t *chain, uint32_t *states, unsigned long long *counts,
                             unsigned long long *work, unsigned long long ns)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    uint32_t p = states[i];
    unsigned long long hops = 0, deadline = globaltimer_ns() + ns;
    do {
#pragma unroll
        for (int k = 0; k < BUSY_CHASE_CHUNK; k++)
            p = chain[p];
        hops += BUSY_CHASE_CHUNK;
    } while (globaltimer_ns() < deadline);
    states[i] = p;
    counts[i] = hops;
    add_work(work, hops);
}

__device__ __forceinline__ float4 stream_op(float4 v)
{
    v.x = fmaf(v.x, BUSY_STREAM_A, BUSY_STREAM_B);
    v.y = fmaf(v.y, BUSY_STREAM_A, BUSY_STREAM_B);
    v.z = fmaf(v.z, BUSY_STREAM_A, BUSY_STREAM_B);
    v.w = fmaf(v.w, BUSY_STREAM_A, BUSY_STREAM_B);
    return v;
}

/* Variant 3: grid-stride passes of y = a x + b with 16-byte accesses, four
 * independent loads in flight per thread; whole passes until the deadline
 * (at least one, so that every element is written). */
__global__ void stream_kernel(const float4 *__restrict__ x, float4 *__restrict__ y, size_t n4,
                              unsigned long long *counts, unsigned long long *work,
                              unsigned long long ns)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long done = 0, deadline = globaltimer_ns() + ns;
    do {
        size_t j = i;
        for (; j + 3 * stride < n4; j += 4 * stride) {
            float4 v0 = x[j], v1 = x[j + stride], v2 = x[j + 2 * stride], v3 = x[j + 3 * stride];
            y[j] = stream_op(v0);
            y[j + stride] = stream_op(v1);
            y[j + 2 * stride] = stream_op(v2);
            y[j + 3 * stride] = stream_op(v3);
            done += 4;
        }
        for (; j < n4; j += stride, done++)
            y[j] = stream_op(x[j]);
    } while (globaltimer_ns() < deadline);
    counts[i] = 4 * done;
    add_work(work, 32 * done); /* 16 bytes read and 16 written per float4 */
}

/* ---- launches ------------------------------------------------------------- */

typedef void (*launch_fn)(const busy_args *a, unsigned long long ns);

static void launch_arith(const busy_args *a, unsigned long long ns)
{
    arith_kernel<<<a->workers, BUSY_BLOCK, 0, a->stream>>>(a->states, a->counts, a->work, a->lcg_a,
                                                           a->lcg_c, ns);
    RL_CUDA_CHECK_LAUNCH();
}

static void launch_chase(const busy_args *a, unsigned long long ns)
{
    chase_kernel<<<a->workers, BUSY_BLOCK, 0, a->stream>>>(a->chain, a->states, a->counts, a->work, ns);
    RL_CUDA_CHECK_LAUNCH();
}

static void launch_stream(const busy_args *a, unsigned long long ns)
{
    stream_kernel<<<a->workers, BUSY_BLOCK, 0, a->stream>>>(
        reinterpret_cast<const float4 *>(a->x), reinterpret_cast<float4 *>(a->y), a->n / 4, a->counts,
        a->work, ns);
    RL_CUDA_CHECK_LAUNCH();
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "rooflab: busy: out of host memory\n");
        abort();
    }
    return p;
}

static void burst_with(const busy_args *a, double seconds, launch_fn launch)
{
    RL_CUDA_CHECK(cudaMemsetAsync(a->work, 0, sizeof *a->work, a->stream));
    launch(a, (unsigned long long)(seconds * 1e9));
    RL_CUDA_CHECK(cudaStreamSynchronize(a->stream));
}

/* Launches one kernel per period, at most two in flight. Below full duty
 * the host sleeps until the next period first: the GPU idles in between.
 * At full duty the kernels queue back to back. */
static void run_with(const busy_args *a, double seconds, busy_result *out, launch_fn launch)
{
    cudaStream_t s = a->stream;
    double P = a->period_s;
    long long periods = (long long)(seconds / P + 1e-9);
    periods = periods < 1 ? 1 : periods;
    long long n = a->duty > 0 ? periods : 0;
    unsigned long long ns = (unsigned long long)((a->duty >= 1 ? P : a->duty * P) * 1e9);
    cudaEvent_t ref, fin, *ev = (cudaEvent_t *)host_alloc(2 * (size_t)n * sizeof *ev);
    RL_CUDA_CHECK(cudaEventCreate(&ref));
    RL_CUDA_CHECK(cudaEventCreate(&fin));
    for (long long i = 0; i < 2 * n; i++)
        RL_CUDA_CHECK(cudaEventCreate(&ev[i]));
    RL_CUDA_CHECK(cudaMemsetAsync(a->work, 0, sizeof *a->work, s));
    RL_CUDA_CHECK(cudaStreamSynchronize(s));

    if (a->edge)
        a->edge(a->edge_arg, 0, NULL, 0);
    RL_CUDA_CHECK(cudaEventRecord(ref, s));
    double t0 = busy_now_s();
    for (long long i = 0; i < n; i++) {
        if (a->duty < 1)
            busy_sleep_until(t0 + (double)i * P);
        RL_CUDA_CHECK(cudaEventRecord(ev[2 * i], s));
        launch(a, ns);
        RL_CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], s));
        if (i >= 2)
            RL_CUDA_CHECK(cudaEventSynchronize(ev[2 * (i - 2) + 1]));
    }
    busy_sleep_until(t0 + (double)periods * P);
    RL_CUDA_CHECK(cudaEventRecord(fin, s));
    RL_CUDA_CHECK(cudaEventSynchronize(fin));
    double t1 = busy_now_s();
    if (a->edge)
        a->edge(a->edge_arg, 1, NULL, 0);

    float ms;
    out->t0 = t0;
    out->t1 = t1;
    out->bursts = n;
    RL_CUDA_CHECK(cudaEventElapsedTime(&ms, ref, fin));
    out->window_s = ms / 1e3;
    out->starts = (double *)host_alloc((size_t)n * sizeof(double));
    out->ends = (double *)host_alloc((size_t)n * sizeof(double));
    for (long long i = 0; i < n; i++) {
        RL_CUDA_CHECK(cudaEventElapsedTime(&ms, ref, ev[2 * i]));
        out->starts[i] = ms / 1e3;
        RL_CUDA_CHECK(cudaEventElapsedTime(&ms, ref, ev[2 * i + 1]));
        out->ends[i] = ms / 1e3;
    }
    unsigned long long work = 0;
    RL_CUDA_CHECK(cudaMemcpyAsync(&work, a->work, sizeof work, cudaMemcpyDeviceToHost, s));
    RL_CUDA_CHECK(cudaStreamSynchronize(s));
    out->work = (double)work;

    for (long long i = 0; i < 2 * n; i++)
        RL_CUDA_CHECK(cudaEventDestroy(ev[i]));
    RL_CUDA_CHECK(cudaEventDestroy(ref));
    RL_CUDA_CHECK(cudaEventDestroy(fin));
    free(ev);
}

/* Each variant's functions (the table is busy.c): lanes per block, burst, run. */
#define CUDA_VARIANT(name)                                                                       \
    static void name##_burst(const busy_args *a, double seconds) { burst_with(a, seconds, launch_##name); } \
    static void name##_run(const busy_args *a, double seconds, busy_result *out)                 \
    {                                                                                            \
        run_with(a, seconds, out, launch_##name);                                                \
    }                                                                                            \
    extern "C" const busy_ops busy_##name##_cuda = {BUSY_BLOCK, name##_burst, name##_run};
CUDA_VARIANT(arith)
CUDA_VARIANT(chase)
CUDA_VARIANT(stream)

extern "C" void busy_cuda_device(char *pci_bus_id, int len, double *free_bytes, double *total_bytes)
{
    int dev;
    size_t f, t;
    RL_CUDA_CHECK(cudaGetDevice(&dev));
    RL_CUDA_CHECK(cudaDeviceGetPCIBusId(pci_bus_id, len, dev));
    RL_CUDA_CHECK(cudaMemGetInfo(&f, &t));
    *free_bytes = (double)f;
    *total_bytes = (double)t;
}

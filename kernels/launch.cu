/*
 * launch.cu -- experiment 06's chain and step on the GPU, launched one by
 * one or captured once into a CUDA graph and replayed.
 *
 * Every launch is followed by RL_CUDA_CHECK_LAUNCH() (one cudaGetLastError,
 * tens of nanoseconds: part of the host's cost per launch, as it is in any
 * careful program). Graphs are captured from the experiment's own stream
 * in thread-local mode, so that no other thread's CUDA call can invalidate
 * the capture.
 */
#include "check.h"
#include "launch.h"

enum { BLOCK = 256 };

__global__ void chain_kernel(float *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = launch_op(x[i]);
}

/* The floor: the chain in one launch. Each thread makes the k passes over
 * its grid-stride elements that k launches would make; the empty asm is a
 * compiler barrier that keeps the passes apart (no fusion into registers). */
__global__ void floor_kernel(float *x, size_t n, int k)
{
    size_t i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    for (int j = 0; j < k; j++) {
        for (size_t i = i0; i < n; i += stride)
            x[i] = launch_op(x[i]);
        asm volatile("" ::: "memory");
    }
}

/* The serial variant: one thread applies the whole chain, pass by pass (the
 * compiler barrier keeps the passes apart, as in the floor). */
__global__ void serial_kernel(float *x, size_t n, int k)
{
    for (int j = 0; j < k; j++) {
        for (size_t i = 0; i < n; i++)
            x[i] = launch_op(x[i]);
        asm volatile("" ::: "memory");
    }
}

static unsigned blocks_for(size_t n)
{
    size_t b = (n + BLOCK - 1) / BLOCK;
    return (unsigned)(b ? b : 1);
}

/* Threads per block: as many as elements, up to BLOCK ("empty": 1 thread). */
static unsigned threads_for(size_t n) { return n < BLOCK ? (unsigned)(n ? n : 1) : (unsigned)BLOCK; }

static void launch_one(float *x, size_t n, cudaStream_t s)
{
    chain_kernel<<<blocks_for(n), threads_for(n), 0, s>>>(x, n);
    RL_CUDA_CHECK_LAUNCH();
}

static void enqueue_chain(launch_args *a)
{
    for (int j = 0; j < a->k; j++)
        launch_one(a->x, a->n, a->stream);
}

static void wait_stream(launch_args *a) { RL_CUDA_CHECK(cudaStreamSynchronize(a->stream)); }

static void run_sync_each(launch_args *a)
{
    for (int j = 0; j < a->k; j++) {
        launch_one(a->x, a->n, a->stream);
        wait_stream(a);
    }
}

static void run_async(launch_args *a)
{
    enqueue_chain(a);
    wait_stream(a);
}

/* ---- graphs ---------------------------------------------------------------- */

/* Captures what issue() enqueues on stream into an instantiated graph. */
static cudaGraphExec_t capture(cudaStream_t stream, void (*issue)(void *), void *arg)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    RL_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    issue(arg);
    RL_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    RL_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    RL_CUDA_CHECK(cudaGraphDestroy(graph)); /* the executable graph keeps what it needs */
    return exec;
}

static void issue_chain(void *arg) { enqueue_chain((launch_args *)arg); }

static void build_graph(launch_args *a) { a->graph = capture(a->stream, issue_chain, a); }

static void release_graph(launch_args *a)
{
    if (a->graph)
        RL_CUDA_CHECK(cudaGraphExecDestroy((cudaGraphExec_t)a->graph));
    a->graph = NULL;
}

static void enqueue_graph(launch_args *a)
{
    RL_CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)a->graph, a->stream));
}

static void run_graph(launch_args *a)
{
    enqueue_graph(a);
    wait_stream(a);
}

enum { FLOOR_MAX_BLOCKS = 1024 }; /* about one wave of 256-thread blocks on a large GPU */

static void run_one_kernel(launch_args *a)
{
    unsigned blocks = blocks_for(a->n);
    floor_kernel<<<blocks < FLOOR_MAX_BLOCKS ? blocks : (unsigned)FLOOR_MAX_BLOCKS, threads_for(a->n), 0,
                   a->stream>>>(a->x, a->n, a->k);
    RL_CUDA_CHECK_LAUNCH();
    wait_stream(a);
}

static void run_serial(launch_args *a)
{
    serial_kernel<<<1, 1, 0, a->stream>>>(a->x, a->n, a->k);
    RL_CUDA_CHECK_LAUNCH();
    wait_stream(a);
}

/* Each variant's functions (the table is launch.c): enqueue, run, build,
 * release. */
extern "C" const launch_ops launch_sync_each_cuda = {NULL, run_sync_each, NULL, NULL};
extern "C" const launch_ops launch_async_cuda = {enqueue_chain, run_async, NULL, NULL};
extern "C" const launch_ops launch_graph_cuda = {enqueue_graph, run_graph, build_graph, release_graph};
extern "C" const launch_ops launch_one_kernel_cuda = {NULL, run_one_kernel, NULL, NULL};
extern "C" const launch_ops launch_serial_cuda = {NULL, run_serial, NULL, NULL};

/* ---- the step ----------------------------------------------------------------- */

/* out[b][j] = sum_k in[b][k] w[k][j]: a thread per output, the blocks of a
 * row's columns consecutive, so a warp reads consecutive columns of w. */
__global__ void gemm_kernel(float *__restrict__ out, const float *__restrict__ in,
                            const float *__restrict__ w, int batch, int d)
{
    int strips = (d + BLOCK - 1) / BLOCK;
    int b = blockIdx.x / strips, j = blockIdx.x % strips * BLOCK + threadIdx.x;
    if (b >= batch || j >= d)
        return;
    const float *row = in + (size_t)b * d;
    float acc = 0;
    for (int k = 0; k < d; k++)
        acc = fmaf(row[k], w[(size_t)k * d + j], acc);
    out[(size_t)b * d + j] = acc;
}

__global__ void bias_relu_kernel(float *h, const float *bias, size_t total, int d)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < total)
        h[i] = fmaxf(h[i] + bias[i % d], 0.0f);
}

__global__ void residual_kernel(float *y, const float *x, size_t total)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < total)
        y[i] += x[i];
}

static void issue_step(void *arg)
{
    step_args *s = (step_args *)arg;
    cudaStream_t st = s->stream;
    size_t total = (size_t)s->batch * s->d;
    unsigned gemm_blocks = (unsigned)(s->batch * ((s->d + BLOCK - 1) / BLOCK));
    gemm_kernel<<<gemm_blocks, BLOCK, 0, st>>>(s->h, s->x, s->w1, s->batch, s->d);
    RL_CUDA_CHECK_LAUNCH();
    bias_relu_kernel<<<blocks_for(total), BLOCK, 0, st>>>(s->h, s->bias, total, s->d);
    RL_CUDA_CHECK_LAUNCH();
    gemm_kernel<<<gemm_blocks, BLOCK, 0, st>>>(s->y, s->h, s->w2, s->batch, s->d);
    RL_CUDA_CHECK_LAUNCH();
    residual_kernel<<<blocks_for(total), BLOCK, 0, st>>>(s->y, s->x, total);
    RL_CUDA_CHECK_LAUNCH();
}

static void step_launches(step_args *s)
{
    issue_step(s);
    RL_CUDA_CHECK(cudaStreamSynchronize(s->stream));
}

static void step_build(step_args *s) { s->graph = capture(s->stream, issue_step, s); }

static void step_release(step_args *s)
{
    if (s->graph)
        RL_CUDA_CHECK(cudaGraphExecDestroy((cudaGraphExec_t)s->graph));
    s->graph = NULL;
}

static void step_graph(step_args *s)
{
    RL_CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)s->graph, s->stream));
    RL_CUDA_CHECK(cudaStreamSynchronize(s->stream));
}

/* run, build, release */
extern "C" const step_ops step_launches_cuda = {step_launches, NULL, NULL};
extern "C" const step_ops step_graph_cuda = {step_graph, step_build, step_release};

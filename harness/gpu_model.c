/*
 * gpu_model.c -- the fraction of a GPU's roof a kernel's main loop can
 * reach by its own count (rl_gpu_model.h), from published figures only.
 *
 * Three ceilings, each a fraction of the roof (DRAM bandwidth; the tensor
 * peak for a tensor-bound kernel), and the prediction is their lowest:
 *
 *   issue    an SM shares its pipes among its warps: one warp-iteration
 *            takes max(instructions / 4 schedulers, each pipe's count /
 *            its rate, L1 bytes / L1 rate) clocks, and moves its stream
 *            bytes (or its multiply-adds): with every SM busy, that rate
 *            over the roof;
 *   latency  Little's law: a warp keeps its stream loads' bytes in flight
 *            for a memory latency, so an SM moves (resident warps x bytes
 *            in flight) per latency, against bandwidth x latency / SMs,
 *            the latency under load (RL_LOADED_OVER_IDLE);
 *   launch   a call's kernels each cost a launch on the host and a gap on
 *            the GPU: a short kernel is bound by them, not by its bytes.
 *
 * The grid is run in waves of resident blocks; a last partial wave (or a
 * grid smaller than one wave) has fewer SMs and warps at work, and the
 * issue and latency ceilings are taken wave by wave, weighted by time
 * (when that, and not a full wave's ceilings, sets the prediction, its
 * limit is "last wave").
 * The bandwidth ceiling itself is 1: the model says what the kernel cannot
 * reach, not that it will reach the rest.
 *
 * Every figure below is published, with its source; none was measured by
 * this suite (those are in results/). Where no source gives a figure for
 * an architecture, it is NAN and the model says "not modelled".
 */
#include "rl_gpu_model.h"

#include <math.h>
#include <string.h>

/* Per SM and clock, in warp-instructions (32 results a clock = 1): the
 * CUDA C++ Programming Guide's table "Throughput of Native Arithmetic
 * Instructions" (results per clock per multiprocessor): FP32 add,
 * multiply, FMA 64 (7.x, 8.0) or 128 (8.6, 8.9, 9.0); FP16 (a half2
 * counts two) 128 (7.x), 256 (8.0, 8.6, 9.0), 128 (8.9); 32-bit integer
 * add, logical, shift, compare, min/max 64; warp shuffle 32; special
 * functions (MUFU) and type conversions 16. FP16 pairs run on a pipe of
 * their own on GA100 and are dual-issued to the FMA pipes on GA10x and
 * GH100 (NVIDIA's answer in the Developer Forums thread "Separate CUDA
 * core pipeline for FP16 and FP32?", 2024). One instruction a clock
 * from each of the SM's four schedulers (the Volta to Hopper
 * whitepapers). Loads and stores: 32 lanes a clock; L1 and shared memory
 * 128 bytes a clock (32 banks of 4 bytes; T4's L1 64: Jia et al.,
 * "Dissecting the NVidia Turing T4 GPU via Microbenchmarking", 2019,
 * Table 3.2). Tensor cores, dense FP16 in and FP32 accumulate, multiply-
 * adds a clock: 512 on Volta and Turing, 1024 on A100 (the A100
 * whitepaper), 512 on L4 (its datasheet's dense tensor peak, the table
 * below, over 58 SMs at 2040 MHz); on Hopper the kernels' mma.sync (HMMA)
 * reaches a fraction of the H800 PCIe's dense peak, the two figures of
 * Luo et al., "Benchmarking and Dissecting the Nvidia Hopper GPU
 * Architecture", IPDPS 2024, Table VII, so 2048 (two A100 SMs: the H100
 * whitepaper) times that fraction, the sm 90 row's tensor rate. Not
 * found for GA10x
 * (sm_86): not modelled. */
static const rl_sm_rates RATES[] = {
    /* sm  issue   fma half alu  xu  shfl lsu  tensor  ctrl     L1  half_on_fma */
    {70, 4, {2, 2, 2, 0.5, 1, 1, 512, INFINITY}, 128, false},
    {75, 4, {2, 2, 2, 0.5, 1, 1, 512, INFINITY}, 64, false},
    {80, 4, {2, 4, 2, 0.5, 1, 1, 1024, INFINITY}, 128, false},
    {86, 4, {4, 4, 2, 0.5, 1, 1, NAN, INFINITY}, 128, true},
    {89, 4, {4, 2, 2, 0.5, 1, 1, 512, INFINITY}, 128, true},
    {90, 4, {4, 4, 2, 0.5, 1, 1, 2048 * 490.7 / 756.5, INFINITY}, 128, true},
};

const rl_sm_rates *rl_sm_rates_of(int sm)
{
    for (size_t i = 0; i < sizeof RATES / sizeof RATES[0]; i++)
        if (RATES[i].sm == sm)
            return &RATES[i];
    return NULL;
}

/* The GPUs: SMs, DRAM bandwidth, L2 and tensor peak from each datasheet
 * and whitepaper (harness/datasheet.c cites the same); the boost clock
 * from the application clocks nvidia-smi sets at their most (Amazon
 * EC2's guide "Optimize GPU settings", P3, G4dn, P4de, G6, P5, P5e);
 * DRAM latency from pointer chases at that clock, the idle latency,
 * which the latency under full bandwidth only exceeds: so the latency
 * ceiling is an upper bound (RRZE's gpu-benches, gpu-latency: V100 PCIe
 * ~430 cycles at 1380 MHz, A100 SXM 80 GB 552 cycles at 1410, GH200's
 * H100 689 cycles at 1980 for H100 and H200, L40 625 cycles at 2490 for
 * L4; for T4 none was found, and V100's is used); the launch, the time of
 * a back-to-back small kernel in a stream (RRZE's gpu-small-kernels for
 * A100 and H200, H200's used for H100 too; NVIDIA's "Getting Started
 * with CUDA Graphs", 2019, for the others; the launch column); the host
 * link, PCIe x16 in one direction: Gen3 (V100, T4), Gen4 (A100, L4),
 * Gen5 (H100, H200: the H100 whitepaper's rate in each direction), the
 * host column. */
const rl_gpu_spec rl_gpu_specs[] = {
    /* slug           name              sm  SMs   MHz    GB/s  lat ns  L2 MB  TFLOPS  launch us  host GB/s */
    {"v100-sxm", "V100 SXM2", 70, 80, 1530, 900, 430 / 1.38, 6, 125, 3.8, 16},
    {"t4", "T4", 75, 40, 1590, 320, 430 / 1.38, 4, 65, 3.8, 16},
    {"a100-sxm-80gb", "A100 80GB SXM", 80, 108, 1410, 2039, 552 / 1.41, 40, 312, 2.6, 32},
    {"l4", "L4", 89, 58, 2040, 300, 625 / 2.49, 48, 121, 3.8, 32},
    {"h100-sxm", "H100 SXM", 90, 132, 1980, 3350, 689 / 1.98, 50, 989.4, 2.4, 64},
    {"h200", "H200 SXM", 90, 132, 1980, 4800, 689 / 1.98, 60, 989.4, 2.4, 64},
    {0},
};

const rl_gpu_spec *rl_gpu_spec_by_slug(const char *slug)
{
    for (const rl_gpu_spec *g = rl_gpu_specs; g->slug; g++)
        if (!strcmp(g->slug, slug))
            return g;
    return NULL;
}

/* ---- the ceilings --------------------------------------------------------------- */

/* An SM's clocks for one warp-iteration: the busiest of its schedulers,
 * pipes and L1; which one, in *limit. */
static double cycles_per_iteration(const rl_sm_rates *r, const rl_sass_loop *l, const char **limit)
{
    double c = l->instructions / r->issue;
    *limit = "issue";
    for (int p = 0; p < RL_PIPES; p++) {
        double need = p == RL_PIPE_TENSOR ? l->tensor_fma : l->pipe[p];
        if (r->half_on_fma && p == RL_PIPE_FMA)
            need += l->pipe[RL_PIPE_HALF]; /* the pairs share the FMA pipes */
        double t = need > 0 ? need / r->pipe[p] : 0;
        if (t > c) {
            c = t;
            *limit = rl_pipe_names[p];
        }
    }
    double t = l->l1_bytes / r->l1_bytes;
    if (t > c) {
        c = t;
        *limit = "l1";
    }
    return c;
}

/* The roof an SM's share is judged against, per clock: DRAM bytes, or
 * tensor multiply-adds. */
static double roof_per_sm_clock(const rl_gpu_spec *g, const rl_sm_rates *r, bool tensor)
{
    if (tensor)
        return g->tensor_tflops * 1e12 / 2 / (g->sms * g->clock_mhz * 1e6);
    (void)r;
    return g->dram_gbps * 1e9 / (g->sms * g->clock_mhz * 1e6);
}

typedef struct wave_ceilings {
    double issue, latency;
} wave_ceilings;

/* One wave of blocks resident at once: its issue and latency ceilings. */
static wave_ceilings wave_of(const rl_gpu_spec *g, const rl_gpu_prediction *p, const rl_sass_loop *l,
                             long long blocks, int warps_per_block, double issue_full, bool tensor)
{
    int active = blocks < g->sms ? (int)blocks : g->sms;
    long long per_sm = (blocks + g->sms - 1) / g->sms;
    if (per_sm > p->occ.blocks)
        per_sm = p->occ.blocks;
    wave_ceilings w = {issue_full * active / g->sms, INFINITY};
    if (!tensor) {
        double inflight = (double)active * per_sm * warps_per_block * l->inflight_bytes;
        w.latency = inflight / (g->dram_gbps * g->latency_ns * RL_LOADED_OVER_IDLE);
    }
    return w;
}

static double lowest(double a, double b) { return b < a ? b : a; }

rl_gpu_prediction rl_gpu_predict(const rl_gpu_spec *g, const rl_sass_loop *l,
                                 const rl_gpu_resources *res, const rl_gpu_launch *launch, bool tensor)
{
    rl_gpu_prediction p = {.issue = NAN, .latency = NAN, .fixed = NAN, .predicted = NAN};
    const rl_sm_rates *r = rl_sm_rates_of(g->sm);
    double work = tensor ? l->tensor_fma : l->stream_bytes;
    p.occ = rl_occupancy_of(g->sm, res->registers, launch->threads, res->static_smem + launch->dyn_smem);
    if (!r || (tensor && !isfinite(r->pipe[RL_PIPE_TENSOR]))) {
        p.limit = "not modelled";
        return p;
    }
    if (p.occ.blocks <= 0 || launch->blocks <= 0) {
        p.limit = "does not fit an SM";
        return p;
    }
    if (!(work > 0)) {
        p.limit = tensor ? "no tensor instructions" : "no stream loads";
        return p;
    }
    p.cycles_per_iter = cycles_per_iteration(r, l, &p.issue_limit);
    double issue_full = work / p.cycles_per_iter / roof_per_sm_clock(g, r, tensor);
    int warps_per_block = (launch->threads + 31) / 32;
    long long slots = (long long)g->sms * p.occ.blocks;
    p.waves = (int)((launch->blocks + slots - 1) / slots);
    p.needed_per_sm = g->dram_gbps * g->latency_ns * RL_LOADED_OVER_IDLE / g->sms; /* GB/s x ns = B */
    p.inflight_per_sm = (double)p.occ.blocks * warps_per_block * l->inflight_bytes;

    /* Each wave moves its blocks' share of the work at its own pace. */
    long long full = launch->blocks / slots, rest = launch->blocks % slots;
    wave_ceilings first = wave_of(g, &p, l, full ? slots : rest, warps_per_block, issue_full, tensor);
    double time = 0;
    if (full) {
        double f = lowest(1, lowest(first.issue, first.latency));
        time += (double)full * slots / f;
    }
    if (rest) {
        wave_ceilings last = wave_of(g, &p, l, rest, warps_per_block, issue_full, tensor);
        time += (double)rest / lowest(1, lowest(last.issue, last.latency));
    }
    double kernels = launch->blocks / time; /* the waves together, a fraction of the roof */
    p.issue = first.issue;
    p.latency = first.latency;

    /* The launch: each of the call's kernels costs the host a launch, and
     * the GPU a gap between kernels; the call takes the longer. */
    double at_roof_s = tensor ? 2 * launch->tensor_fma / (g->tensor_tflops * 1e12)
                              : launch->bytes / (g->dram_gbps * 1e9);
    double launch_s = launch->kernels * g->launch_us * 1e-6;
    p.fixed = at_roof_s / fmax(at_roof_s, launch_s);
    double call_s = fmax(at_roof_s / kernels, launch_s);
    p.predicted = lowest(1, at_roof_s / call_s);

    p.limit = tensor ? "tensor peak" : "bandwidth";
    double low = 1;
    if (p.issue < low)
        low = p.issue, p.limit = "issue";
    if (p.latency < low)
        low = p.latency, p.limit = "latency";
    if (kernels < 0.98 * low)
        low = kernels, p.limit = "last wave"; /* a partial wave, too few warps to keep up */
    if (p.fixed < low)
        low = p.fixed, p.limit = "launch";
    return p;
}

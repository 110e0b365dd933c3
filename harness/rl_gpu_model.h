/*
 * rl_gpu_model.h -- a CUDA kernel judged by what the compiler made of it,
 * with no GPU: its main loop read from the SASS (sass.c), and the fraction
 * of a GPU's roof that loop can reach by its own count (gpu_model.c). Pure
 * functions, no measurement: every number here is a model and says so.
 * make gpu-model (harness/ops/gpu_model.c) runs them over the build's
 * kernels; kernels/README.md is the lab sheet that teaches it.
 */
#ifndef RL_GPU_MODEL_H
#define RL_GPU_MODEL_H

#include "rl_models.h"
#include "rl_occupancy.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The main loop of a kernel, from nvdisasm's listing (sass.c)
 * ---------------------------------------------------------------------- */

/* Where an SM issues an instruction: each has its own rate per clock
 * (rl_sm_rates). FMA: FP32 arithmetic and IMAD; HALF: packed FP16
 * arithmetic (its own pipe on sm_70 to sm_80, the FMA pipes' from sm_86,
 * where rl_sm_rates.half_on_fma says so); ALU:
 * integer, logic, compares, min/max, moves; XU: MUFU and conversions;
 * SHFL: warp shuffles; LSU: loads and stores (L1 data is counted apart,
 * in bytes); TENSOR: HMMA/IMMA; CTRL: branches, barriers, uniform-datapath
 * and everything else, issued but not on a throughput pipe of its own. */
typedef enum rl_pipe {
    RL_PIPE_FMA, RL_PIPE_HALF, RL_PIPE_ALU, RL_PIPE_XU, RL_PIPE_SHFL, RL_PIPE_LSU, RL_PIPE_TENSOR,
    RL_PIPE_CTRL, RL_PIPES
} rl_pipe;
extern const char *const rl_pipe_names[RL_PIPES];
rl_pipe rl_sass_pipe_of(const char *opcode);

/* Which global loads carry the kernel's DRAM stream: those with the
 * evict-first hint (__ldcs: LDG.E.EF), the way most kernels here mark the
 * bytes they read once, or every global load of the loop (kernels that
 * read their stream through the read-only path, __ldg), or cp.async's
 * copies (LDGSTS). */
typedef enum rl_stream_rule { RL_STREAM_EF, RL_STREAM_GLOBAL, RL_STREAM_ASYNC } rl_stream_rule;

/* Lines of a source file the code marks as rare (rl_rare_ranges_scan):
 * their instructions are left out of an iteration's count. */
typedef struct rl_rare_range {
    char file[96]; /* the source's base name: attention.cu */
    int first, last;
} rl_rare_range;

/* One warp's iteration of the main loop: the innermost loop that carries
 * stream loads (or tensor instructions), every instruction of its body counted once (both sides of
 * a branch: a warp whose lanes disagree runs both), but for code marked
 * rare and the paths a converged warp never takes (BRA.DIV's). Without a
 * streaming loop, the whole kernel is one iteration (found = false). */
typedef struct rl_sass_loop {
    bool found;
    unsigned first_addr, last_addr; /* the loop's extent in the listing */
    int blocks, instructions, rare;  /* basic blocks; instructions counted; left out as rare */
    int pipe[RL_PIPES];              /* instructions per pipe */
    int stream_loads;
    double stream_bytes;  /* the stream loads' data per warp (bytes a lane x 32) */
    double l1_bytes;      /* every load and store's data through L1 and shared memory per warp */
    double tensor_fma;    /* HMMA/IMMA multiply-adds per warp */
    int local_ops;        /* LDL/STL in the loop: register spills, paid every iteration */
    double inflight_bytes; /* stream bytes a warp has in flight when it waits (Little's law) */
    int waits;             /* waits for a stream load per iteration, each a memory latency */
} rl_sass_loop;

/* How to read a kernel: which loads are its stream, the rare code, how
 * often a loop inside the counted code runs (a loop over k ops in an
 * element-wise kernel: 0 or 1, once), and whether the main loop is the
 * one with the stream loads or (tensor) the one with the tensor
 * instructions. */
typedef struct rl_sass_options {
    rl_stream_rule rule;
    const rl_rare_range *rare;
    int nrare;
    int inner_trips;
    bool tensor;
} rl_sass_options;

/* The main loop of function (its mangled name) in listing (nvdisasm -gi -c
 * of a cubin). False, with why, when the function is not in the listing. */
bool rl_sass_loop_of(const char *listing, const char *function, const rl_sass_options *o,
                     rl_sass_loop *out, char *why, size_t len);

/* The blocks a source file marks with marker (a comment on the line that
 * opens the block: "rl-model: rare"), each from the line after the marker
 * to the brace that closes the block. Returns how many (at most max), -1
 * when the file cannot be read. */
int rl_rare_ranges_scan(const char *path, const char *marker, rl_rare_range *out, int max);

/* ------------------------------------------------------------------------
 * The model (gpu_model.c): published figures and the ceilings
 * ---------------------------------------------------------------------- */

/* What an SM of one architecture issues per clock, in warp-instructions
 * (tensor: multiply-adds; L1: bytes). NAN where not modelled. */
typedef struct rl_sm_rates {
    int sm;
    double issue;           /* all pipes together: one instruction per scheduler */
    double pipe[RL_PIPES];  /* warp-instructions per clock; TENSOR in FMA per clock */
    double l1_bytes;        /* bytes per clock through L1/shared memory */
    bool half_on_fma;       /* packed FP16 issues to the FMA pipes: their counts add */
} rl_sm_rates;
const rl_sm_rates *rl_sm_rates_of(int sm);

/* A GPU of the model: published figures (gpu_model.c cites each). */
typedef struct rl_gpu_spec {
    const char *slug, *name;
    int sm;             /* compute capability, 90 */
    int sms;            /* streaming multiprocessors */
    double clock_mhz;   /* boost clock */
    double dram_gbps;   /* datasheet */
    double latency_ns;  /* DRAM load latency of an idle GPU (a pointer chase) */
    double l2_mb;
    double tensor_tflops; /* dense FP16 in, FP32 accumulate */
    double launch_us;   /* one kernel's fixed cost when launched back to back */
    double host_gbps;   /* the host link, one direction: PCIe's per generation */
} rl_gpu_spec;
extern const rl_gpu_spec rl_gpu_specs[]; /* ended by a zero row */
const rl_gpu_spec *rl_gpu_spec_by_slug(const char *slug);

/* A warp's DRAM latency while the GPU streams at a good part of its
 * bandwidth, over the idle latency of a pointer chase: queues in the
 * memory system stretch it. No published figure was found; the lab sheet
 * (kernels/README.md, "The latency under load") derives this one from the
 * lent H200's GEMV, whose kernel has not changed since. */
#define RL_LOADED_OVER_IDLE 2.0

/* A kernel's launch at the shape a verdict judges. */
typedef struct rl_gpu_launch {
    long long blocks;
    int threads;       /* per block */
    double dyn_smem;   /* dynamic shared memory per block, bytes */
    double bytes;      /* DRAM bytes the call moves */
    double tensor_fma; /* multiply-adds on tensor cores (tensor-bound kernels) */
    int kernels;       /* launches per call (a split and its merge: 2) */
} rl_gpu_launch;

/* What ptxas gave the kernel (its .res record). */
typedef struct rl_gpu_resources {
    int registers, static_smem, spill_bytes;
} rl_gpu_resources;

/* The ceilings, each a fraction of the roof (DRAM bandwidth, or the
 * tensor peak for a tensor-bound kernel), and the prediction: their
 * lowest. */
typedef struct rl_gpu_prediction {
    rl_occupancy occ;          /* blocks and warps an SM holds */
    int waves;                 /* of resident blocks, the last maybe partial */
    double cycles_per_iter;    /* an SM's clocks for one warp-iteration */
    const char *issue_limit;   /* the pipe (or "issue") that sets them */
    double inflight_per_sm;    /* stream bytes in flight, full wave */
    double needed_per_sm;      /* what Little's law asks: bandwidth x loaded latency / SMs */
    double issue, latency, fixed; /* the three ceilings (bandwidth's is 1) */
    double predicted;
    const char *limit;         /* which ceiling is lowest: "bandwidth", "latency", "issue", "launch" */
} rl_gpu_prediction;

/* tensor: judge against the tensor peak (multiply-adds) rather than DRAM. */
rl_gpu_prediction rl_gpu_predict(const rl_gpu_spec *gpu, const rl_sass_loop *loop,
                                 const rl_gpu_resources *res, const rl_gpu_launch *launch,
                                 bool tensor);

#ifdef __cplusplus
}
#endif
#endif /* RL_GPU_MODEL_H */

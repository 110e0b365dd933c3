/*
 * busy.h -- experiment 01's variants: work that keeps a processor busy
 * for a chosen time, at a chosen duty cycle.
 *
 * Each burst runs on `workers` (CUDA thread blocks of BUSY_BLOCK threads,
 * or CPU threads) until a deadline on the device's own clock (%globaltimer
 * on the GPU, CLOCK_MONOTONIC on the CPU), so a burst's length does not
 * depend on how much work it gets done: the work done is counted instead.
 * A run repeats one burst per period (duty x period long) and waits for
 * the rest of the period, as a host that launches a kernel every period.
 *
 * Three variants, one table (busy.c) naming each one's launchers in
 * busy.cu (CUDA) and cpu/busy.c (POSIX threads); references in ref/busy.c:
 *   1 arith  -- chains of a linear congruential generator: all arithmetic
 *   2 chase  -- pointer chasing through a buffer >= 4x the last-level
 *               cache: every step waits for memory
 *   3 stream -- y = a x + b over a buffer >= 4x the last-level cache:
 *               the memory bus kept busy
 */
#ifndef KERNELS_BUSY_H
#define KERNELS_BUSY_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    BUSY_BLOCK = 128,      /* CUDA threads per block: one lane each */
    BUSY_CPU_LANES = 8,    /* arith: independent chains per CPU thread */
    BUSY_ARITH_CHUNK = 64, /* LCG steps between two reads of the clock */
    BUSY_CHASE_CHUNK = 8,  /* hops between two reads of the clock */
};

/* The LCG of Numerical Recipes, x -> a x + c mod 2^32. The constants reach
 * the kernels at run time (busy_args), so that no compiler folds a chain
 * of steps into one multiply-add. */
#define BUSY_LCG_A 1664525u
#define BUSY_LCG_C 1013904223u

RL_HD uint32_t busy_lcg(uint32_t x, uint32_t a, uint32_t c) { return x * a + c; }

/* y = a x + b, the stream variant's op. */
#define BUSY_STREAM_A 0.75f
#define BUSY_STREAM_B 0.125f

typedef struct busy_args {
    int workers;           /* CUDA: thread blocks; CPU: threads */
    double duty;           /* fraction of each period a burst runs, 0..1 */
    double period_s;       /* one burst per period */
    uint32_t lcg_a, lcg_c; /* BUSY_LCG_A, BUSY_LCG_C */
    /* arith and chase, one entry per lane (lanes = workers x variant->lanes) */
    uint32_t *states;           /* in: the start (LCG state or chain index); out: the end */
    unsigned long long *counts; /* out: steps, hops or elements of the last burst */
    const uint32_t *chain;      /* chase: the next index, at every used slot */
    /* stream */
    const float *x;
    float *y;
    size_t n;                   /* a multiple of 4 */
    unsigned long long *work;   /* CUDA: device counter of the run's total work */
    struct CUstream_st *stream; /* CUDA only */
    /* Called on the host at the start (which = 0) and the end (1) of a
     * run's window, with the CPU worker threads' ids while they are alive
     * (none on CUDA): where the experiment reads the OS's counters. */
    void (*edge)(void *arg, int which, const int *tids, int ntids);
    void *edge_arg;
} busy_args;

/* What one run did. Times are seconds from the window's start, measured
 * on the device (CUDA events; CLOCK_MONOTONIC on the CPU). */
typedef struct busy_result {
    double t0, t1;          /* the window on the host's CLOCK_MONOTONIC */
    double window_s;        /* the window on the device's clock */
    double *starts, *ends;  /* each burst; CPU: every thread's */
    long long bursts;
    double work;            /* steps, hops or bytes over the window */
} busy_result;

void busy_result_free(busy_result *r);

/* What one backend runs for one variant. */
typedef struct busy_ops {
    int lanes;              /* per worker: states and counts entries */
    /* One burst of `seconds` on every worker, then waits for it. */
    void (*burst)(const busy_args *a, double seconds);
    /* The duty-cycled load for `seconds` (whole periods), then waits. */
    void (*run)(const busy_args *a, double seconds, busy_result *out);
} busy_ops;

/* One row per variant (busy.c); see kernels/common.h. The role says what
 * kind of work it is, and so how its inputs are made and its result is
 * checked: "compute" (LCG chains), "latency" (a pointer chase through
 * busy_make_chain's cycle), "bandwidth" (y = a x + b). */
typedef struct busy_variant {
    KERNEL_VARIANT_HEAD;
    const char *work_unit;  /* "LCG steps", "hops", "bytes" */
    const busy_ops *cpu, *cuda;
} busy_variant;

extern const busy_variant busy_variants[]; /* ended by a zero row */
extern const kernel_family busy_family;

/* Whether the row has this role: what experiments and checks go by. */
static inline bool busy_has_role(const busy_variant *v, const char *role)
{
    return kernel_has_role(KERNEL_VARIANT(v), role);
}

/* The most lanes per worker of the variants a backend has (KERNEL_CPU or
 * KERNEL_CUDA): how many states and counts a run on `workers` may need. */
int busy_max_lanes(int backend);

/* The buffers every variant's runs share: on the device, but for the
 * lanes' starts, host copies that a run's states are uploaded from. */
typedef struct busy_buffers {
    size_t lanes;                   /* entries of states, counts, seeds and chain_starts */
    uint32_t *states;               /* in: each lane's start; out: its end */
    unsigned long long *counts, *work;
    uint32_t *seeds, *chain_starts; /* host: LCG states; slots of the chain (NULL: no chain) */
    uint32_t *chain;                /* the chase's cycle (busy_make_chain) */
    float *x, *y;
    size_t n;                       /* the stream's elements */
} busy_buffers;

/* The arguments of a run of `workers` at this duty, on b. */
busy_args busy_args_on(const busy_buffers *b, int workers, double duty, double period_s,
                       struct CUstream_st *stream);
/* Where v's lanes start: a chase from slots of the chain, any other
 * variant from the seeds. */
const uint32_t *busy_lane_starts(const busy_variant *v, const busy_buffers *b);

/* The launchers of each backend (cpu/busy.c, busy.cu). */
extern const busy_ops busy_arith_cpu, busy_chase_cpu, busy_stream_cpu;
extern const busy_ops busy_arith_cuda, busy_chase_cuda, busy_stream_cuda;

/* The current CUDA device's PCI bus id (for NVML) and its free and total
 * memory: busy.cu's busy_cuda_device, NULL in a build without CUDA. */
typedef void busy_device_fn(char *pci_bus_id, int len, double *free_bytes, double *total_bytes);
busy_device_fn busy_cuda_device;
extern busy_device_fn *const busy_device;

/* ---- host helpers (cpu/busy.c) ------------------------------------------- */

/* The monotonic clock and an absolute sleep, for the run loops. */
double busy_now_s(void);
void busy_sleep_until(double t);

/* ---- the references and the variants' inputs (ref/busy.c) --------------- */

/* The LCG after `steps` steps, in O(log steps): the arith reference. */
uint32_t busy_lcg_jump(uint32_t x, unsigned long long steps, uint32_t a, uint32_t c);

/* n scattered LCG states, the lanes' starts: the same ones for a seed. */
void busy_make_seeds(uint32_t *seeds, size_t n, uint64_t seed);

/* A random cycle through `lines` lines of `stride` uint32 entries each:
 * chain[line_i * stride] holds the slot of the next line, the other slots
 * 0. Sattolo's algorithm, so that one cycle visits every line. starts[k],
 * for k < nstarts, get slots spread evenly along the cycle. */
void busy_make_chain(uint32_t *chain, size_t lines, size_t stride, uint32_t *starts, size_t nstarts,
                     uint64_t seed);

/* Lanes whose end state differs from the reference (start, count), or
 * whose count is zero; the first such lane in *first_bad. */
size_t busy_check_arith(const uint32_t *start, const uint32_t *end, const unsigned long long *counts,
                        size_t lanes, uint32_t a, uint32_t c, size_t *first_bad);
size_t busy_check_chase(const uint32_t *chain, const uint32_t *start, const uint32_t *end,
                        const unsigned long long *counts, size_t lanes, size_t *first_bad);

/* One burst of a variant checked against the reference its role names,
 * from host copies of its lanes' starts, end states and counts (chain: the
 * chase's): busy_check_arith for "compute", busy_check_chase for
 * "latency"; any other role has no lanes to check and fails. True when
 * every lane matches; why says what was found. */
bool busy_check_lanes(const busy_variant *v, const uint32_t *chain, const uint32_t *start,
                      const uint32_t *end, const unsigned long long *counts, size_t lanes,
                      char *why, size_t len);
/* The "bandwidth" role's reference: want = a x + b, in double. */
void busy_stream_reference(const float *x, double *want, size_t n);

#ifdef __cplusplus
}
#endif
#endif

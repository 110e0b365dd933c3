/*
 * cpu/fusion.c -- the C + OpenMP counterparts of fusion.cu (the table is
 * fusion.c, the reference ref/fusion.c).
 *
 * A "kernel launch" here is an OpenMP parallel loop: its fork and join are
 * the CPU's launch overhead, and each unfused pass streams the whole array
 * through the memory hierarchy, as a GPU kernel streams it through HBM.
 */
#include "../fusion.h"
#include "vmath.h"

#include <string.h>

/* Work is cut into strips small enough to stay in L1. A fused chain
 * applies its first op from the input into the strip of out, then the
 * remaining ops over that strip in place while it is still in L1: only
 * the first read and the last write reach memory, which is what fusion
 * means. The chain stays in registers, a vector at a time, and each
 * vector is stored once (affine_chain, and the vector cos, written by
 * hand); the C library's scalar cos goes op by op over the strip, a plain
 * loop per op.
 *
 * cos comes two ways: rl_cos_v (vmath.h: a whole vector at once, 16 lanes
 * with AVX-512, 8 otherwise, a polynomial, max 2 ulp), the default, as
 * PyTorch evaluates it with SLEEF; or the C library's scalar cosf (the
 * _libm variants), one call per element: tens of nanoseconds, so a pass is
 * bound by arithmetic, and fusion, which saves memory trips, saves
 * little. */
enum { STRIP = 512 };

typedef enum cos_eval { COS_VECTOR, COS_LIBM } cos_eval;

/* One op over n floats from x to o (o == x allowed: in place). */
static inline __attribute__((always_inline)) void apply_n(float *o, const float *x, size_t n,
                                                          fusion_op op)
{
    for (size_t i = 0; i < n; i++) /* libm: one call each */
        o[i] = fusion_apply(x[i], op);
}

/* The vector cos keeps a whole chain in registers and asks for the input
 * 4 KiB ahead: at about a cycle per cos, the core would otherwise issue
 * its next loads too late to keep the memory bus busy.
 *
 * Four vectors at a time: one cos is a chain of about 15 dependent vector
 * operations, and a chain's next cos needs the last one's result, so the
 * core needs several chains to overlap. And no call in the loop: a strip whose inputs
 * are all in the polynomial's range (experiment 05's always are, and every
 * cos after the first is within [-1, 1]) runs vm_cos_reduced alone. With
 * the C library's fallback inlined in the loop, even never taken, the
 * compiler kept the constants in memory, which made every cos markedly
 * slower. */
enum { PREFETCH_FLOATS = 1024, CHAINS = 4 };

static inline __attribute__((always_inline)) size_t cos_chain_in_range(float *o, const float *x,
                                                                       size_t n, int k)
{
    size_t i = 0;
    for (; i + CHAINS * VF_LANES <= n; i += CHAINS * VF_LANES) {
        for (int line = 0; line < CHAINS * VF_LANES * 4; line += 64) /* never faults */
            __builtin_prefetch((const char *)(x + i + PREFETCH_FLOATS) + line);
        vf v[CHAINS];
        vfi out; /* all lanes are in range: nothing to mark */
        for (int c = 0; c < CHAINS; c++)
            v[c] = vf_load(x + i + c * VF_LANES);
        for (int j = 0; j < k; j++)
            for (int c = 0; c < CHAINS; c++)
                v[c] = vm_cos_reduced(v[c], &out);
        for (int c = 0; c < CHAINS; c++)
            vf_store(o + i + c * VF_LANES, v[c]);
    }
    return i;
}

static inline __attribute__((always_inline)) void cos_chain(float *o, const float *x, size_t n,
                                                            int k)
{
    size_t i = rl_cos_all_in_range(x, n) ? cos_chain_in_range(o, x, n, k) : 0;
    for (; i + VF_LANES <= n; i += VF_LANES) { /* any input: the fallback per lane */
        vf v = vf_load(x + i);
        for (int j = 0; j < k; j++)
            v = rl_cos_v(v);
        vf_store(o + i, v);
    }
    for (; i < n; i++) {
        float v = x[i];
        for (int j = 0; j < k; j++)
            v = rl_cosf(v);
        o[i] = v;
    }
}

/* The affine chain in registers, a vector at a time: one full-width
 * store per vector whatever k is. Applied pass by pass over the strip
 * instead (apply_n k times, in place after the first), the chain stored
 * every vector k times; each store waits in the core's store buffer until
 * its line arrives from memory (the output is written without being
 * read), so twice the stores let half as many lines be in flight, and a
 * fused pair took half again one op's time while its FMAs cost a tenth
 * (experiment 05's README, "The CPU's fused affine pair"). */
static inline __attribute__((always_inline)) void affine_chain(float *o, const float *x, size_t n,
                                                               int k)
{
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vf v = vf_load(x + i);
        for (int j = 0; j < k; j++)
            v = v * FUSION_AFFINE_A + FUSION_AFFINE_B;
        vf_store(o + i, v);
    }
    for (; i < n; i++) {
        float v = x[i];
        for (int j = 0; j < k; j++)
            v = fusion_apply(v, FUSION_AFFINE);
        o[i] = v;
    }
}

static inline __attribute__((always_inline)) void chain_strip(float *out, const float *in,
                                                              size_t n, size_t lo, int k,
                                                              fusion_op op, cos_eval how)
{
    size_t len = n - lo < STRIP ? n - lo : STRIP;
    if (op == FUSION_COS && how == COS_VECTOR) {
        cos_chain(out + lo, in + lo, len, k);
        return;
    }
    if (op == FUSION_AFFINE) {
        affine_chain(out + lo, in + lo, len, k);
        return;
    }
    apply_n(out + lo, in + lo, len, op);
    for (int j = 1; j < k; j++)
        apply_n(out + lo, out + lo, len, op);
}

/* Variant 4's strip: explicit 16-byte vectors (GCC's vector extension),
 * the CPU's counterpart of the GPU's float4 loads and stores. cos works
 * on VF_LANES lanes, so two (8 lanes) or four (16) 16-byte loads feed
 * one evaluation. */
typedef float v4sf __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) v4sf load4(const float *p)
{
    v4sf v;
    memcpy(&v, p, sizeof v); /* one 16-byte load */
    return v;
}

/* The 16-byte pieces side by side as one vector for the cos, and back, in
 * registers: through memory (a memcpy), four 16-byte stores and one
 * 64-byte load defeat store forwarding (the load waits until the stores
 * have reached the cache). */
typedef float v8sf __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) vf join_parts(const v4sf *p)
{
    v8sf lo = __builtin_shufflevector(p[0], p[1], 0, 1, 2, 3, 4, 5, 6, 7);
#if VF_LANES == 16
    v8sf hi = __builtin_shufflevector(p[2], p[3], 0, 1, 2, 3, 4, 5, 6, 7);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#else
    return lo;
#endif
}

static inline __attribute__((always_inline)) void split_parts(vf v, v4sf *p)
{
#if VF_LANES == 16
    v8sf lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    v8sf hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    p[2] = __builtin_shufflevector(hi, hi, 0, 1, 2, 3);
    p[3] = __builtin_shufflevector(hi, hi, 4, 5, 6, 7);
#else
    v8sf lo = v;
#endif
    p[0] = __builtin_shufflevector(lo, lo, 0, 1, 2, 3);
    p[1] = __builtin_shufflevector(lo, lo, 4, 5, 6, 7);
}

/* VF_LANES floats at a time, as 16-byte loads and stores; returns where
 * it stopped. in_range: every input is in the vector cos's range, so the
 * loop needs no fallback call (see cos_chain_in_range). */
static inline __attribute__((always_inline)) size_t vec4_loop(float *out, const float *in,
                                                              size_t i, size_t hi, int k,
                                                              fusion_op op, bool in_range)
{
    for (; i + VF_LANES <= hi; i += VF_LANES) {
        v4sf part[VF_LANES / 4];
        for (int q = 0; q < VF_LANES / 4; q++)
            part[q] = load4(in + i + 4 * q);
        if (op == FUSION_AFFINE) {
            for (int q = 0; q < VF_LANES / 4; q++)
                for (int j = 0; j < k; j++)
                    part[q] = part[q] * FUSION_AFFINE_A + FUSION_AFFINE_B;
        } else {
            vf v = join_parts(part);
            vfi outside;
            for (int j = 0; j < k; j++)
                v = in_range ? vm_cos_reduced(v, &outside) : rl_cos_v(v);
            split_parts(v, part);
        }
        for (int q = 0; q < VF_LANES / 4; q++)
            memcpy(out + i + 4 * q, &part[q], sizeof part[q]); /* 16-byte stores */
    }
    return i;
}

static inline __attribute__((always_inline)) void vec4_strip(float *out, const float *in,
                                                             size_t n, size_t lo, int k,
                                                             fusion_op op, cos_eval how)
{
    (void)how;
    size_t hi = n - lo < STRIP ? n : lo + STRIP, i;
    if (op == FUSION_AFFINE || rl_cos_all_in_range(in + lo, hi - lo))
        i = vec4_loop(out, in, lo, hi, k, op, true);
    else
        i = vec4_loop(out, in, lo, hi, k, op, false);
    for (; i < hi; i++) { /* the last n % VF_LANES elements */
        float v = in[i];
        for (int j = 0; j < k; j++)
            v = op == FUSION_COS ? rl_cosf(v) : fusion_apply(v, op);
        out[i] = v;
    }
}

/* One parallel loop over the strips per kernel, op and cos evaluation.
 * They must be constants inside the parallel region for the compiler to
 * specialise the loop, and OpenMP outlines a region before any inlining:
 * hence one function per combination, generated here. */
#define PARALLEL_OVER_STRIPS(name, strip, op, how)                           \
    static void name(float *out, const float *in, size_t n, int k)           \
    {                                                                        \
        size_t strips = (n + STRIP - 1) / STRIP;                             \
        _Pragma("omp parallel for schedule(static)")                         \
        for (size_t s = 0; s < strips; s++)                                  \
            strip(out, in, n, s * STRIP, k, op, how);                        \
    }
PARALLEL_OVER_STRIPS(chain_cos, chain_strip, FUSION_COS, COS_VECTOR)
PARALLEL_OVER_STRIPS(chain_cos_libm, chain_strip, FUSION_COS, COS_LIBM)
PARALLEL_OVER_STRIPS(chain_affine, chain_strip, FUSION_AFFINE, COS_VECTOR)
PARALLEL_OVER_STRIPS(vec4_cos, vec4_strip, FUSION_COS, COS_VECTOR)
PARALLEL_OVER_STRIPS(vec4_affine, vec4_strip, FUSION_AFFINE, COS_VECTOR)

typedef void (*chain_fn)(float *out, const float *in, size_t n, int k);

static chain_fn chain_for(fusion_op op, cos_eval how)
{
    return op == FUSION_AFFINE ? chain_affine : how == COS_LIBM ? chain_cos_libm : chain_cos;
}

/* k parallel loops, one op each: the intermediate goes through memory,
 * alternating tmp and out so that the last pass lands in out. */
static void unfused(const fusion_args *a, cos_eval how)
{
    const float *src = a->in;
    for (int j = 0; j < a->k; j++) {
        float *dst = fusion_pass_output(a, j);
        chain_for(a->op, how)(dst, src, a->n, 1);
        src = dst;
    }
}

void fusion_fused_cpu(const fusion_args *a) { chain_for(a->op, COS_VECTOR)(a->out, a->in, a->n, a->k); }
void fusion_unfused_cpu(const fusion_args *a) { unfused(a, COS_VECTOR); }
void fusion_fused_libm_cpu(const fusion_args *a) { chain_for(a->op, COS_LIBM)(a->out, a->in, a->n, a->k); }
void fusion_unfused_libm_cpu(const fusion_args *a) { unfused(a, COS_LIBM); }

void fusion_fused_vec4_cpu(const fusion_args *a)
{
    (a->op == FUSION_COS ? vec4_cos : vec4_affine)(a->out, a->in, a->n, a->k);
}

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
 * means. Each inner loop is a plain loop the compiler can vectorize (it
 * will not vectorize across an inner loop of run-time length); the vector
 * cos, written by hand, keeps the chain in registers instead.
 *
 * cos comes two ways: rl_cos8 (vmath.h: eight lanes at once, a polynomial,
 * max 2 ulp), the default, as PyTorch evaluates it with SLEEF; or the C
 * library's scalar cosf (the _libm variants), one call per element: tens
 * of nanoseconds, so a pass is bound by arithmetic, and fusion, which
 * saves memory trips, saves little. */
enum { STRIP = 512 };

typedef enum cos_eval { COS_VECTOR, COS_LIBM } cos_eval;

/* One op over n floats from x to o (o == x allowed: in place). */
static inline __attribute__((always_inline)) void apply_n(float *o, const float *x, size_t n,
                                                          fusion_op op)
{
    for (size_t i = 0; i < n; i++) /* affine: the compiler vectorizes; libm: one call each */
        o[i] = fusion_apply(x[i], op);
}

/* The vector cos keeps a whole chain in registers, two vectors at a time
 * (independent work for the out-of-order core), and asks for the input
 * 4 KiB ahead: at ~1.5 cycles per cos, the core would otherwise issue its
 * next loads too late to keep the memory bus busy. */
enum { PREFETCH_FLOATS = 1024 };

static inline __attribute__((always_inline)) void cos_chain(float *o, const float *x, size_t n,
                                                            int k)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __builtin_prefetch(x + i + PREFETCH_FLOATS); /* never faults, even past the end */
        v8f a = v8f_load(x + i), b = v8f_load(x + i + 8);
        for (int j = 0; j < k; j++) {
            a = rl_cos8(a);
            b = rl_cos8(b);
        }
        v8f_store(o + i, a);
        v8f_store(o + i + 8, b);
    }
    for (; i < n; i++) {
        float v = x[i];
        for (int j = 0; j < k; j++)
            v = rl_cosf(v);
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
    apply_n(out + lo, in + lo, len, op);
    for (int j = 1; j < k; j++)
        apply_n(out + lo, out + lo, len, op);
}

/* Variant 4's strip: explicit 16-byte vectors (GCC's vector extension),
 * the CPU's counterpart of the GPU's float4 loads and stores. cos works
 * on eight lanes, so two 16-byte loads feed one evaluation. */
typedef float v4sf __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) v4sf load4(const float *p)
{
    v4sf v;
    memcpy(&v, p, sizeof v); /* one 16-byte load */
    return v;
}

static inline __attribute__((always_inline)) void vec4_strip(float *out, const float *in,
                                                             size_t n, size_t lo, int k,
                                                             fusion_op op, cos_eval how)
{
    (void)how;
    size_t hi = n - lo < STRIP ? n : lo + STRIP, i = lo;
    for (; i + 8 <= hi; i += 8) {
        v4sf a = load4(in + i), b = load4(in + i + 4);
        if (op == FUSION_AFFINE) {
            for (int j = 0; j < k; j++) {
                a = a * FUSION_AFFINE_A + FUSION_AFFINE_B;
                b = b * FUSION_AFFINE_A + FUSION_AFFINE_B;
            }
        } else {
            v8f v = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7);
            for (int j = 0; j < k; j++)
                v = rl_cos8(v);
            a = __builtin_shufflevector(v, v, 0, 1, 2, 3);
            b = __builtin_shufflevector(v, v, 4, 5, 6, 7);
        }
        memcpy(out + i, &a, sizeof a); /* two 16-byte stores */
        memcpy(out + i + 4, &b, sizeof b);
    }
    for (; i < hi; i++) { /* the last n % 8 elements */
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

/*
 * cpu/fusion.c -- the C + OpenMP counterparts of fusion.cu (the table is
 * fusion.c, the reference ref/fusion.c).
 *
 * A "kernel launch" here is an OpenMP parallel loop: its fork and join are
 * the CPU's launch overhead, and each unfused pass streams the whole array
 * through the memory hierarchy, as a GPU kernel streams it through HBM.
 */
#include "../fusion.h"

#include <string.h>

/* Work is cut into strips small enough to stay in L1. A fused chain
 * applies its first op from the input into the strip of out, then the
 * remaining ops over that strip in place while it is still in L1: only
 * the first read and the last write reach memory, which is what fusion
 * means. Each inner loop is a plain loop the compiler can vectorize (it
 * will not vectorize across an inner loop of run-time length). */
enum { STRIP = 512 };

static inline __attribute__((always_inline)) void chain_strip(float *restrict out,
                                                              const float *restrict in, size_t n,
                                                              size_t lo, int k, fusion_op op)
{
    size_t len = n - lo < STRIP ? n - lo : STRIP;
    float *restrict o = out + lo;
    const float *restrict x = in + lo;
    for (size_t i = 0; i < len; i++)
        o[i] = fusion_apply(x[i], op);
    for (int j = 1; j < k; j++)
        for (size_t i = 0; i < len; i++)
            o[i] = fusion_apply(o[i], op);
}

/* Variant 4's strip: explicit 16-byte vectors (GCC's vector extension),
 * the CPU's counterpart of the GPU's float4 loads and stores. */
typedef float v4sf __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) v4sf apply4(v4sf v, fusion_op op)
{
    if (op == FUSION_AFFINE)
        return v * FUSION_AFFINE_A + FUSION_AFFINE_B; /* four lanes at once */
    for (int l = 0; l < 4; l++)
        v[l] = cosf(v[l]);
    return v;
}

static inline __attribute__((always_inline)) void vec4_strip(float *out, const float *in,
                                                             size_t n, size_t lo, int k,
                                                             fusion_op op)
{
    size_t hi = n - lo < STRIP ? n : lo + STRIP, i = lo;
    for (; i + 4 <= hi; i += 4) {
        v4sf v;
        memcpy(&v, in + i, sizeof v); /* one 16-byte load */
        for (int j = 0; j < k; j++)
            v = apply4(v, op);
        memcpy(out + i, &v, sizeof v); /* one 16-byte store */
    }
    for (; i < hi; i++) { /* the last n % 4 elements */
        float v = in[i];
        for (int j = 0; j < k; j++)
            v = fusion_apply(v, op);
        out[i] = v;
    }
}

/* One parallel loop over the strips per kernel and op. The op must be a
 * constant inside the parallel region for the compiler to specialise the
 * loop, and OpenMP outlines a region before any inlining: hence one
 * function per op, generated here. */
#define PARALLEL_OVER_STRIPS(name, strip, op)                                \
    static void name(float *out, const float *in, size_t n, int k)           \
    {                                                                        \
        size_t strips = (n + STRIP - 1) / STRIP;                             \
        _Pragma("omp parallel for schedule(static)")                         \
        for (size_t s = 0; s < strips; s++)                                  \
            strip(out, in, n, s * STRIP, k, op);                             \
    }
PARALLEL_OVER_STRIPS(chain_cos, chain_strip, FUSION_COS)
PARALLEL_OVER_STRIPS(chain_affine, chain_strip, FUSION_AFFINE)
PARALLEL_OVER_STRIPS(vec4_cos, vec4_strip, FUSION_COS)
PARALLEL_OVER_STRIPS(vec4_affine, vec4_strip, FUSION_AFFINE)

static void chain(float *out, const float *in, size_t n, int k, fusion_op op)
{
    (op == FUSION_COS ? chain_cos : chain_affine)(out, in, n, k);
}

void fusion_fused_cpu(const fusion_args *a) { chain(a->out, a->in, a->n, a->k, a->op); }

/* k parallel loops, one op each: the intermediate goes through memory,
 * alternating tmp and out so that the last pass lands in out. */
void fusion_unfused_cpu(const fusion_args *a)
{
    const float *src = a->in;
    for (int j = 0; j < a->k; j++) {
        float *dst = fusion_pass_output(a, j);
        chain(dst, src, a->n, 1, a->op);
        src = dst;
    }
}

void fusion_fused_vec4_cpu(const fusion_args *a)
{
    (a->op == FUSION_COS ? vec4_cos : vec4_affine)(a->out, a->in, a->n, a->k);
}

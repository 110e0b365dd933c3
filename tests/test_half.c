/*
 * test_half.c -- the bit-level FP16 conversions of kernels/half.h against
 * the compiler's own half type (_Float16, where it exists) and F16C, on
 * every one of the 65536 halves and on floats chosen to hit every rounding
 * case; and the GPU's __half conversions against the same, on a GPU.
 */
#include "cpu/simd.h"
#include "half.h"
#include "helpers.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool is_nan_bits(fp16 h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }

static bool same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || rl_float_to_bits(a) == rl_float_to_bits(b);
}

/* Every half, by its value: the exact float it stands for. */
Test(half, every_half_converts_exactly)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = fp16_to_float((fp16)h);
        int e = (h >> 10) & 31, m = h & 1023;
        double want = e == 0    ? ldexp(m, -24)
                      : e == 31 ? (m ? NAN : INFINITY)
                                : ldexp(1024 + m, e - 25);
        if (h & 0x8000u)
            want = -want;
        cr_assert(same_float(f, (float)want), "half 0x%04x: got %a, want %a", h, f, want);
        if (!is_nan_bits((fp16)h)) /* and back, bit for bit */
            cr_assert_eq(float_to_fp16(f), h, "round trip of 0x%04x", h);
        else
            cr_assert(is_nan_bits(float_to_fp16(f)), "NaN 0x%04x stays NaN", h);
    }
}

/* Floats around every half: the half itself, the midpoints to both
 * neighbours (ties go to the even one) and a hair either side of them. */
static float probe(uint32_t h, int which)
{
    float lo = fp16_to_float((fp16)h), hi = fp16_to_float((fp16)(h + 1));
    float mid = (float)(((double)lo + (double)hi) / 2); /* exact in float */
    switch (which) {
    case 0: return lo;
    case 1: return mid;
    case 2: return nextafterf(mid, -INFINITY);
    default: return nextafterf(mid, INFINITY);
    }
}

static fp16 want_rounding(uint32_t h, int which)
{
    /* the midpoint goes to the even neighbour; off the midpoint, the nearer one */
    if (which == 0 || which == 2)
        return (fp16)h;
    if (which == 3)
        return (fp16)(h + 1);
    return (fp16)(h % 2 == 0 ? h : h + 1);
}

Test(half, rounding_is_to_nearest_even_everywhere)
{
    for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u)
        for (uint32_t h = 0; h < 0x7bffu; h++) /* up to the largest finite half */
            for (int which = 0; which < 4; which++) {
                float f = probe(h, which);
                if (sign)
                    f = -f;
                fp16 got = float_to_fp16(f);
                fp16 want = (fp16)(want_rounding(h, which) | sign);
                cr_assert_eq(got, want, "%a (case %d near 0x%04x): got 0x%04x, want 0x%04x", f,
                             which, h, got, want);
            }
}

Test(half, overflow_underflow_and_specials)
{
    cr_assert_eq(float_to_fp16(65504.0f), 0x7bffu, "the largest half");
    cr_assert_eq(float_to_fp16(65519.99f), 0x7bffu, "below the midpoint to infinity");
    cr_assert_eq(float_to_fp16(65520.0f), 0x7c00u, "the midpoint rounds to even: infinity");
    cr_assert_eq(float_to_fp16(1e30f), 0x7c00u);
    cr_assert_eq(float_to_fp16(-INFINITY), 0xfc00u);
    cr_assert_eq(float_to_fp16(0x1p-25f), 0x0000u, "half the smallest subnormal: to even (0)");
    cr_assert_eq(float_to_fp16(0x1.000002p-25f), 0x0001u, "just above: the smallest subnormal");
    cr_assert_eq(float_to_fp16(0x1.8p-24f), 0x0002u, "1.5 steps: to even (2)");
    cr_assert_eq(float_to_fp16(-0.0f), 0x8000u, "negative zero keeps its sign");
    cr_assert_eq(float_to_fp16(0x1.ffcp-15f), 0x0400u, "the top subnormal midpoint rounds up to a normal");
    cr_assert(is_nan_bits(float_to_fp16(NAN)));
}

#ifdef __FLT16_MAX__
/* The compiler's _Float16 (GCC 12+ on x86) as a second opinion. */
Test(half, agrees_with_the_compilers_half_type)
{
    for (uint32_t h = 0; h < 65536; h++) {
        _Float16 v;
        memcpy(&v, &h, 2);
        cr_assert(same_float(fp16_to_float((fp16)h), (float)v), "0x%04x", h);
    }
    float *f = malloc(sizeof(float) * (1 << 20));
    rl_fill_uniform(f, 1 << 20, -70000.0f, 70000.0f, 7);
    for (int i = 0; i < (1 << 20); i++) {
        float x = i % 2 ? f[i] : f[i] * 1e-8f; /* and the subnormal range */
        _Float16 v = (_Float16)x;
        fp16 bits;
        memcpy(&bits, &v, 2);
        cr_assert_eq(float_to_fp16(x), bits, "%a", x);
    }
    free(f);
}
#endif

/* Eight at a time: the CPU kernels' vector conversion. */
Test(half, vector_conversions_match_the_scalar_one)
{
    fp16 h[8];
    for (uint32_t base = 0; base < 65536; base += 8) {
        for (int i = 0; i < 8; i++)
            h[i] = (fp16)(base + i);
        v8f generic = fp16x8_to_v8f_generic(h), fast = fp16x8_to_v8f(h);
        for (int i = 0; i < 8; i++) {
            float want = fp16_to_float(h[i]);
            cr_assert(same_float(generic[i], want), "generic, 0x%04x", h[i]);
            cr_assert(same_float(fast[i], want), "fast, 0x%04x", h[i]);
        }
    }
}

/* ---- the GPU: __half2float and __float2half_rn vs the bit-level C ------- */

Test(cuda_half, device_conversions_match_the_c_ones)
{
    rl_backend *be = gpu_or_skip();
    enum { N = 1 << 20 };
    float *probes = malloc(sizeof(float) * N), *got_f = malloc(sizeof(float) * 65536);
    fp16 *got_h = malloc(sizeof(fp16) * N);
    int n = 0;
    for (uint32_t h = 0; h < 0x7bffu && n + 8 <= N; h += 1)
        for (int which = 0; which < 4; which++) {
            probes[n++] = probe(h, which);
            probes[n++] = -probe(h, which);
        }
#ifdef RL_HAVE_CUDA
    fp16_convert_on_device(probes, n, got_h, got_f);
#else
    cr_assert_fail("a GPU backend opened in a build without CUDA");
#endif
    for (uint32_t h = 0; h < 65536; h++)
        cr_assert(same_float(got_f[h], fp16_to_float((fp16)h)), "__half2float(0x%04x) = %a", h,
                  got_f[h]);
    for (int i = 0; i < n; i++)
        cr_assert_eq(got_h[i], float_to_fp16(probes[i]), "__float2half_rn(%a)", probes[i]);
    free(probes);
    free(got_f);
    free(got_h);
    rl_backend_close(be);
}

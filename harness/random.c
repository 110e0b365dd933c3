/*
 * random.c -- reproducible random inputs.
 *
 * Each element is a hash of (seed, index): the same seed gives the same
 * data whatever the number of threads, and filling is embarrassingly
 * parallel, which matters for the gigabyte inputs of the GPU runs.
 */
#include "half.h"
#include "rooflab.h"

/* SplitMix64's finalizer: a strong 64-bit mixing function. */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline double unit_at(uint64_t seed, size_t i)
{
    uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i + 1);
    return (double)(h >> 11) * 0x1.0p-53; /* [0, 1) */
}

void rl_fill_uniform(float *x, size_t n, float lo, float hi, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(lo + (hi - lo) * unit_at(seed, i));
}

void rl_fill_uniform_f16(uint16_t *x, size_t n, float lo, float hi, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        x[i] = float_to_fp16((float)(lo + (hi - lo) * unit_at(seed, i)));
}

void rl_fill_uniform_f64(double *x, size_t n, double lo, double hi, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * unit_at(seed, i);
}

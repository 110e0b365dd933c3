/*
 * random.c -- reproducible random inputs, and inputs drawn when first
 * needed (rl_input).
 *
 * Each element is a hash of (seed, index): the same seed gives the same
 * data whatever the number of threads, and filling is embarrassingly
 * parallel, which matters for the gigabyte inputs of the GPU runs.
 */
#include "half.h"
#include "rl_measure.h"
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

const void *rl_input_on(rl_ctx *ctx, rl_input *in, int bytes, rl_convert_fn *convert)
{
    if (!in->host) {
        in->host = rl_host_alloc(in->count * sizeof(float));
        rl_fill_uniform(in->host, in->count, -1.0f, 1.0f, rl_next_seed(ctx));
        if (in->exact)
            in->exact(in->host, in->count);
        in->dev = rl_alloc_copy(ctx->be, in->host, in->count * sizeof(float));
    }
    if (convert && !in->converted) {
        in->converted = rl_alloc(ctx->be, in->count * (size_t)bytes);
        convert(in->converted, in->dev, in->count, rl_stream(ctx->be));
        rl_sync(ctx->be);
    }
    return convert ? in->converted : in->dev;
}

void rl_input_free(rl_ctx *ctx, rl_input *in)
{
    rl_host_free(in->host);
    rl_free(ctx->be, in->dev);
    rl_free(ctx->be, in->converted);
    in->host = in->dev = NULL;
    in->converted = NULL;
}

/*
 * models.c -- the arithmetic every experiment leans on. Each function is a
 * model, not a measurement: charts label the curves drawn from here so.
 */
#include "rooflab.h"

#include <math.h>

/* Arithmetic intensity: FLOPs per byte moved to and from device memory. */
double rl_arith_intensity(double flops, double bytes) { return bytes > 0 ? flops / bytes : NAN; }

/* The AI at which the memory roof meets the compute roof. */
double rl_ridge_point(double peak_flops, double peak_bytes_per_s)
{
    return peak_bytes_per_s > 0 ? peak_flops / peak_bytes_per_s : NAN;
}

/* The roofline: min(peak, AI x bandwidth). */
double rl_attainable(double ai, double peak_flops, double peak_bytes_per_s)
{
    double memory_roof = ai * peak_bytes_per_s;
    return memory_roof < peak_flops ? memory_roof : peak_flops;
}

/* Decode reads every weight once per token, so a memory-bound decoder can
 * emit at most bandwidth / weight bytes tokens per second. */
double rl_tokens_per_s_ceiling(double bytes_per_s, double weight_bytes)
{
    return weight_bytes > 0 ? bytes_per_s / weight_bytes : NAN;
}

/* Output tiles of an m x n result cut into tile_m x tile_n pieces. */
long long rl_tiles(long long m, long long n, long long tile_m, long long tile_n)
{
    return ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
}

/* Blocks run in waves of (SMs x resident blocks per SM); a partial last
 * wave costs as long as a full one. */
long long rl_waves(long long tiles, int sms, int blocks_per_sm)
{
    long long per_wave = (long long)sms * blocks_per_sm;
    return per_wave > 0 ? (tiles + per_wave - 1) / per_wave : 0;
}

double rl_gemm_flops(double m, double n, double k) { return 2.0 * m * n * k; }

double rl_gemm_bytes(double m, double n, double k, double bytes_per_elem)
{
    return bytes_per_elem * (m * k + k * n + m * n);
}


double rl_spill_slowdown_sequential(double f, double r) { return (1.0 - f) + f * r; }

double rl_spill_slowdown_overlapped(double f, double r) { return fmax(1.0 - f, f * r); }

double rl_moe_experts_touched(double experts, double top_k, double batch)
{
    if (!(experts > 0) || top_k < 0 || top_k > experts || batch < 0)
        return NAN;
    return experts * (1.0 - pow(1.0 - top_k / experts, batch));
}

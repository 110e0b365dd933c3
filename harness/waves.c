/*
 * waves.c -- wave planning (a model, beside rl_tiles() and rl_waves()): how to shape a
 * GEMM so that its tiles fill whole waves, the wave count the long way, as
 * a block scheduler would hand tiles out, to check the closed form
 * rl_waves() against, and a GEMM's wave model at each width of a sweep
 * across waves.
 */
#include "rooflab.h"

/* The most square cut of one wave into tile rows x tile columns: the
 * largest divisor of wave_tiles that is not above its square root. */
int rl_wave_tile_rows(long long wave_tiles)
{
    int rows = 1;
    for (long long r = 1; r * r <= wave_tiles; r++)
        if (wave_tiles % r == 0)
            rows = (int)r;
    return rows;
}

/* Every tile takes the same time, so the scheduler works in rounds: each
 * round, every free slot (SMs x blocks per SM) takes a waiting tile. */
long long rl_waves_by_rounds(long long tiles, int sms, int blocks_per_sm)
{
    long long slots = (long long)sms * blocks_per_sm, rounds = 0;
    if (slots <= 0)
        return 0;
    for (long long waiting = tiles; waiting > 0; waiting -= slots)
        rounds++;
    return rounds;
}

static long long waves_at(const rl_tiling *t, long long n)
{
    return rl_waves(rl_tiles(t->m, n, t->tile_m, t->tile_n), t->units, t->per_unit);
}

rl_wave_model rl_wave_model_of(const rl_tiling *t, long long n)
{
    long long tiles = rl_tiles(t->m, n, t->tile_m, t->tile_n), waves = waves_at(t, n);
    return (rl_wave_model){t->tile_m, t->tile_n, (double)tiles, t->units, t->per_unit,
                           (double)waves, (double)tiles / ((double)waves * t->units * t->per_unit)};
}

bool rl_wave_ends_at(const rl_tiling *t, long long n)
{
    return waves_at(t, n + 1) > waves_at(t, n);
}

long long rl_wave_sweep_next(const rl_tiling *t, long long n, int step, int past)
{
    long long next = (n / step + 1) * step;
    return rl_wave_ends_at(t, n) && n + past < next ? n + past : next;
}

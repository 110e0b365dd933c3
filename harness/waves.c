/*
 * waves.c -- wave planning (a model, beside rl_tiles() and rl_waves()): how to shape a
 * GEMM so that its tiles fill whole waves, and the wave count the long
 * way, as a block scheduler would hand tiles out, to check the closed
 * form rl_waves() against.
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

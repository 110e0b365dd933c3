/*
 * model.c -- the wave count of NVIDIA's example (M = 2304, K = 4096,
 * 256 x 128 tiles, one block per SM) on 108 SMs (A100) and 132 SMs
 * (H100, H200), written as rows whatever the device is. Arithmetic, not
 * measurement: no time; each row fills the points' columns from a call,
 * as a point would, and says validated = model.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>

static const struct {
    const char *name;
    int sms;
} MODELS[] = {{"model_108sm", 108}, {"model_132sm", 132}};
enum { N_MAX = 4608 }; /* three whole waves on 108 SMs */

static long long tiles_at(int n) { return rl_tiles(EX_M, n, EX_TILE_M, EX_TILE_N); }

/* Writes the rows of N = 8..4608 on one model's SMs; returns how many
 * agree with the scheduler's rounds (of *checked). */
static int write_rows_of(rl_ctx *ctx, const char *name, int sms, int *checked)
{
    int agree = 0;
    rl_tiling t = {EX_M, EX_TILE_M, EX_TILE_N, sms, 1};
    for (int n = WAVE_STEP; n <= N_MAX; n += WAVE_STEP, (*checked)++) {
        exp04_call c = {.part = "model", .kernel.args = {.m = EX_M, .n = n, .k = EX_K},
                        .vocab = NAN, .w = rl_wave_model_of(&t, n),
                        .wave_end = rl_wave_ends_at(&t, n)};
        rl_point p = {RL_POINT_DATA(&c), .flops = rl_gemm_flops(EX_M, n, EX_K)};
        rl_set_point_columns(ctx, &p);
        rl_set_str(ctx, "variant", name);
        rl_set_str(ctx, "validated", "model");
        rl_end_row(ctx);
        agree += c.w.waves == rl_waves_by_rounds((long long)c.w.tiles, sms, 1);
    }
    return agree;
}

/* The published case: N = 1536 is 108 tiles, one wave on 108 SMs; every
 * N from 1537 to 1664 is 117 tiles, two waves. */
static bool published_case_holds(void)
{
    bool holds = tiles_at(1536) == 108 && rl_waves(tiles_at(1536), 108, 1) == 1;
    for (int n = 1537; n <= 1664; n++)
        holds &= tiles_at(n) == 117 && rl_waves(tiles_at(n), 108, 1) == 2;
    return holds;
}

/* The rows, the closed form against the scheduler's rounds at each of
 * their N, and the published case (state: the claim). */
static void write_rows(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    int checked = 0, agree = 0;
    for (size_t g = 0; g < sizeof MODELS / sizeof MODELS[0]; g++)
        agree += write_rows_of(ctx, MODELS[g].name, MODELS[g].sms, &checked);
    bool published = published_case_holds();
    char measured[64], note[256];
    snprintf(measured, sizeof measured, "%d/%d agree", agree, checked);
    snprintf(note, sizeof note,
             "model, no measurement: ceil(tiles / SMs) vs the scheduler's rounds at N = %d..%d on "
             "108 and 132 SMs; 1536 -> 108 tiles, 1 wave; 1537..1664 -> 117 tiles, 2 waves: %s",
             WAVE_STEP, N_MAX, published ? "reproduced" : "NOT reproduced");
    rl_judge_status(ctx, state, NULL, measured,
                    agree == checked && published ? RL_HOLDS : RL_DOES_NOT_HOLD, note);
}

/* A part of no points, declared first: when its turn comes, before any
 * GEMM runs, it writes the model's rows and judges them. */
void exp04_model_declare(rl_ctx *ctx, const rl_claim *claim)
{
    rl_meta(ctx, "model",
            "rows with part = model: NVIDIA's example, M = %d, K = %d, %dx%d tiles, one block per "
            "SM, N = %d..%d step %d, on 108 and 132 SMs; waves = ceil(tiles / SMs)",
            EX_M, EX_K, EX_TILE_M, EX_TILE_N, WAVE_STEP, N_MAX, WAVE_STEP);
    rl_part_add(ctx, &(rl_part){.done = write_rows, .state = (void *)claim});
}

/*
 * test_curve.c -- the read-bandwidth curve's knees and the levels found on
 * them (curve.c), on synthetic curves: no test measures a bandwidth.
 */
#include "helpers.h"
#include "internal.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double KiB = 1024, MiB = 1024 * 1024, GiB = 1024.0 * 1024 * 1024;

/* A curve of n rates at 16 KiB, 32 KiB, ... (worst a tenth below best). */
static int curve_of(const double *gbps, int n, rl_band *out)
{
    for (int i = 0; i < n; i++)
        out[i] = (rl_band){gbps[i], 0.9 * gbps[i], 16 * KiB * pow(2, i)};
    return n;
}

/* Within a factor of 1.5 of want: a knee is interpolated between points. */
static bool near(double got, double want) { return got > want / 1.5 && got < want * 1.5; }

/* Each level's rate half-way down at its capacity: 64 KiB (L1, 2 x 32
 * KiB), 1 MiB (L2, 2 x 512 KiB) and 32 MiB (the LLC), as a 2-core Zen 3
 * reports them; 16 KiB to 128 MiB. */
static const double STEPS[] = {400, 400, 300, 200, 200, 200, 150,
                               100, 100, 100, 100, 60,  20,  20};
enum { NSTEPS = sizeof STEPS / sizeof STEPS[0] };
static const double ZEN3[RL_LEVEL_COUNT] = {64 * KiB, 1 * MiB, 32 * MiB, 16 * GiB};

Test(curve, clean_steps_give_one_knee_per_level)
{
    rl_band c[RL_CURVE_MAX];
    int n = curve_of(STEPS, NSTEPS, c);
    rl_knee k[RL_CURVE_MAX];
    cr_assert_eq(rl_curve_knees(c, n, k, RL_CURVE_MAX), 3);
    cr_assert(near(k[0].bytes, 64 * KiB), "L1's knee at %.0f", k[0].bytes);
    cr_assert(near(k[1].bytes, 1 * MiB), "L2's knee at %.0f", k[1].bytes);
    cr_assert(near(k[2].bytes, 32 * MiB), "the LLC's knee at %.0f", k[2].bytes);
    cr_assert_eq(k[0].reach, 128 * KiB, "the L2 plateau's first point");
    cr_assert_eq(k[2].reach, 64 * MiB, "a fall over two points is one knee");
    cr_assert_eq(k[2].from_gbps, 100);
    cr_assert_eq(k[2].to_gbps, 20);

    double measured[RL_LEVEL_COUNT], spill[RL_LEVEL_COUNT];
    rl_curve_levels(c, n, ZEN3, measured, spill);
    for (int l = 0; l < RL_DRAM; l++)
        cr_assert_eq(measured[l], k[l].bytes, "level %d takes knee %d, in order", l, l);
    cr_assert_eq(measured[RL_DRAM], 0, "DRAM has no knee");
}

Test(curve, one_noisy_point_makes_no_knee)
{
    rl_band clean[RL_CURVE_MAX], noisy[RL_CURVE_MAX];
    int n = curve_of(STEPS, NSTEPS, clean);
    rl_knee want[RL_CURVE_MAX], got[RL_CURVE_MAX];
    cr_assert_eq(rl_curve_knees(clean, n, want, RL_CURVE_MAX), 3);
    /* A neighbour's burst at any one footprint: no knee more or less, and
     * each where it was (one beside a step may move it by a point). */
    for (int at = 1; at < n - 1; at++) {
        curve_of(STEPS, NSTEPS, noisy);
        noisy[at].best /= 3;
        cr_assert_eq(rl_curve_knees(noisy, n, got, RL_CURVE_MAX), 3, "a slow point at %d", at);
        for (int i = 0; i < 3; i++)
            cr_assert(got[i].bytes >= want[i].bytes / 2.01 && got[i].bytes <= want[i].bytes * 2.01,
                      "a slow point at %d moved knee %d from %.0f to %.0f", at, i, want[i].bytes,
                      got[i].bytes);
    }
    /* ... a slow first point is a rise, a slow last point alone no step */
    curve_of(STEPS, NSTEPS, noisy);
    noisy[0].best = 40;
    cr_assert_eq(rl_curve_knees(noisy, n, got, RL_CURVE_MAX), 3);
    const double flat_end[] = {100, 100, 100, 100, 100, 100, 40};
    n = curve_of(flat_end, 7, noisy);
    cr_assert_eq(rl_curve_knees(noisy, n, got, RL_CURVE_MAX), 0, "the last point alone");
}

Test(curve, a_dip_the_curve_climbs_back_from_is_no_knee)
{
    /* Two slow points in a row (the median keeps them), then the plateau again. */
    const double dip[] = {200, 200, 200, 90, 90, 200, 200, 200, 40, 40, 40};
    rl_band c[RL_CURVE_MAX];
    int n = curve_of(dip, 11, c);
    rl_knee k[RL_CURVE_MAX];
    cr_assert_eq(rl_curve_knees(c, n, k, RL_CURVE_MAX), 1);
    cr_assert(near(k[0].bytes, 16 * KiB * 128), "the real step: %.0f", k[0].bytes);
    cr_assert_eq(k[0].from_gbps, 200);
}

Test(curve, a_monotone_curve_has_no_knee)
{
    double sinking[16], rising[16];
    for (int i = 0; i < 16; i++) {
        sinking[i] = 100 * pow(0.95, i); /* 5 % a doubling: 54 % over the curve */
        rising[i] = 10 * (i + 1);        /* a GPU's small footprints, too few threads */
    }
    rl_band c[RL_CURVE_MAX];
    rl_knee k[RL_CURVE_MAX];
    cr_assert_eq(rl_curve_knees(c, curve_of(sinking, 16, c), k, RL_CURVE_MAX), 0);
    cr_assert_eq(rl_curve_knees(c, curve_of(rising, 16, c), k, RL_CURVE_MAX), 0);
    double measured[RL_LEVEL_COUNT], spill[RL_LEVEL_COUNT];
    rl_curve_levels(c, 16, ZEN3, measured, spill);
    for (int l = 0; l < RL_LEVEL_COUNT; l++) {
        cr_assert_eq(measured[l], 0, "no knee, no measured level %d", l);
        cr_assert_eq(spill[l], 4 * ZEN3[l], "the reported size's rule");
    }
}

/* A 2-core Xeon VM: L1d 48 KiB and L2 2 MiB a core, and its host's
 * 480 MiB L3 reported, of which the VM reads 32 MiB at LLC speed. */
static const double XEON[RL_LEVEL_COUNT] = {96 * KiB, 4 * MiB, 480 * MiB, 64 * GiB};
static const double XEON_CURVE[] = {300, 300, 300, 150, 150, 150, 150, 150, 100,
                                    60,  60,  40,  12,  12,  12,  12,  12,  12}; /* to 2 GiB */

Test(curve, a_reported_llc_of_480_MiB_that_reads_like_32_MiB)
{
    rl_band c[RL_CURVE_MAX];
    int n = curve_of(XEON_CURVE, 18, c);
    cr_assert_eq(c[n - 1].probe_bytes, 2 * GiB);
    double measured[RL_LEVEL_COUNT], spill[RL_LEVEL_COUNT];
    rl_curve_levels(c, n, XEON, measured, spill);
    cr_assert(near(measured[RL_L1], 96 * KiB), "%.0f", measured[RL_L1]);
    cr_assert(near(measured[RL_L2], 4 * MiB), "%.0f", measured[RL_L2]);
    cr_assert(near(measured[RL_LLC], 32 * MiB), "the LLC ends near 32 MiB, not 480: %.0f",
              measured[RL_LLC]);
    cr_assert_leq(spill[RL_LLC], 128 * MiB, "DRAM's plateau from %.0f", spill[RL_LLC]);

    /* Without its inner knees (too small a step), the last knee is still
     * the LLC's: the curve went far past the reported LLC. */
    const double llc_only[] = {150, 150, 150, 150, 150, 150, 150, 150, 150,
                               150, 150, 150, 20,  20,  20,  20,  20,  20};
    n = curve_of(llc_only, 18, c);
    rl_curve_levels(c, n, XEON, measured, spill);
    cr_assert_eq(measured[RL_L1], 0);
    cr_assert_eq(measured[RL_L2], 0, "the nearer reported size does not take it");
    cr_assert(near(measured[RL_LLC], 32 * MiB), "%.0f", measured[RL_LLC]);
}

Test(curve, level_for_with_measured_capacities)
{
    rl_band c[RL_CURVE_MAX];
    int n = curve_of(XEON_CURVE, 18, c);
    double measured[RL_LEVEL_COUNT], spill[RL_LEVEL_COUNT];
    rl_curve_levels(c, n, XEON, measured, spill);
    double cap[RL_LEVEL_COUNT];
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        cap[l] = measured[l] > 0 ? measured[l] : XEON[l];
    bool mixed;
    /* 256 MiB: DRAM on the curve, though half the reported LLC */
    cr_assert_eq(rl_level_for(XEON, 256 * MiB, &mixed), RL_LLC, "the reported sizes' rule");
    cr_assert_eq(rl_level_on(cap, spill, 256 * MiB, &mixed), RL_DRAM);
    cr_assert_not(mixed);
    /* inside each plateau, pure */
    cr_assert_eq(rl_level_on(cap, spill, 32 * KiB, &mixed), RL_L1);
    cr_assert_not(mixed);
    cr_assert_eq(rl_level_on(cap, spill, 1 * MiB, &mixed), RL_L2);
    cr_assert_not(mixed);
    cr_assert_eq(rl_level_on(cap, spill, 8 * MiB, &mixed), RL_LLC);
    cr_assert_not(mixed);
    /* in the LLC's fall, mixed: its class is the LLC's, its rung DRAM's (roofs.c) */
    cr_assert_eq(rl_level_on(cap, spill, 48 * MiB, &mixed), RL_LLC);
    cr_assert(mixed);
    cr_assert_eq(rl_level_on(cap, spill, spill[RL_LLC], &mixed), RL_DRAM, "the next plateau");
}

Test(curve, a_gpu_maps_its_last_knee_to_its_l2)
{
    /* Small footprints leave the GPU idle (a rise), then the SMs' L1s
     * hit (to 8 MiB here), then its L2 of 50 MiB, then device memory:
     * only the L2 is a level here, and it takes the last knee. */
    const double h200[] = {50,   100,  200,  400,  800,  1600, 3200, 9000, 9000,
                           9000, 4000, 4000, 3000, 2000, 2000, 2000, 2000, 2000};
    const double rep[RL_LEVEL_COUNT] = {0, 0, 50 * MiB, 141 * GiB};
    rl_band c[RL_CURVE_MAX];
    int n = curve_of(h200, 18, c);
    rl_knee k[RL_CURVE_MAX];
    cr_assert_eq(rl_curve_knees(c, n, k, RL_CURVE_MAX), 2);
    double measured[RL_LEVEL_COUNT], spill[RL_LEVEL_COUNT];
    rl_curve_levels(c, n, rep, measured, spill);
    cr_assert_eq(measured[RL_L1], 0);
    cr_assert_eq(measured[RL_L2], 0);
    cr_assert(near(measured[RL_LLC], 50 * MiB), "the step to device memory: %.0f",
              measured[RL_LLC]);
}

Test(curve, the_plan_doubles_to_4x_the_llc_within_the_caps)
{
    double b[RL_CURVE_MAX + 4];
    int n = rl_curve_plan(32 * MiB, 3 * GiB, 16 * GiB, b, RL_CURVE_MAX + 4);
    cr_assert_eq(n, 14, "16 KiB to 128 MiB");
    cr_assert_eq(b[0], 16 * KiB);
    cr_assert_eq(b[n - 1], 128 * MiB);
    cr_assert_eq(rl_curve_plan(32 * MiB, 64 * MiB, 16 * GiB, b, RL_CURVE_MAX), 13, "--max-bytes");
    cr_assert_eq(rl_curve_plan(480 * MiB, 3 * GiB, 8 * GiB, b, RL_CURVE_MAX), 17,
                 "an eighth of the memory: 1 GiB");
    cr_assert_eq(rl_curve_plan(1 * MiB, 3 * GiB, 0, b, RL_CURVE_MAX), 13, "at least 64 MiB");
    cr_assert_eq(rl_curve_plan(1024 * GiB, 1e15, 0, b, RL_CURVE_MAX + 4), RL_CURVE_MAX,
                 "never more than %d points", RL_CURVE_MAX);
}

/* ---- the ceilings' files, with a curve and without ------------------------------------ */

#define CURVE_FIXTURE RL_SOURCE_ROOT "/tests/fixtures/ceilings-curve.csv"

static rl_ctx *context(void)
{
    rl_ctx *ctx = calloc(1, sizeof *ctx);
    char why[256];
    ctx->be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(ctx->be, "%s", why);
    ctx->kind = RL_CPU;
    ctx->dev = rl_device(ctx->be);
    return ctx;
}

static void release(rl_ctx *ctx)
{
    rl_backend_close(ctx->be);
    free(ctx);
}

Test(curve, fixture_ceilings_without_a_curve_load_on_the_reported_sizes)
{
    rl_ctx *ctx = context();
    rl_ceilings c;
    char why[256] = "";
    cr_assert(rl_ceilings_read(ctx, TEST_CEILINGS, false, &c, why, sizeof why), "%s", why);
    cr_assert_eq(c.curve_n, 0);
    cr_assert(!strncmp(c.levels_source, "reported", 8), "%s", c.levels_source);
    for (int l = 0; l < RL_LEVEL_COUNT; l++) {
        cr_assert_eq(c.level_bytes[l], c.level_reported[l], "level %d", l);
        cr_assert_eq(c.level_measured[l], 0);
    }
    rl_meta_line lines[RL_CURVE_META_MAX];
    int n = rl_curve_meta(&c, RL_CPU, lines, RL_CURVE_META_MAX);
    bool reported = false;
    for (int i = 0; i < n; i++) {
        cr_assert(!strstr(lines[i].key, "curve_") && !strstr(lines[i].key, "_measured"),
                  "%s", lines[i].key);
        reported |= !strcmp(lines[i].key, "level_L1_bytes_reported");
    }
    cr_assert(reported, "the header names the reported sizes");
    release(ctx);
}

Test(curve, ceilings_with_a_curve_load_its_levels)
{
    rl_ctx *ctx = context();
    rl_ceilings c;
    char why[256] = "";
    cr_assert(rl_ceilings_read(ctx, CURVE_FIXTURE, false, &c, why, sizeof why), "%s", why);
    cr_assert_eq(c.curve_n, 14);
    cr_assert(!strncmp(c.levels_source, "curve", 5), "%s", c.levels_source);
    cr_assert(near(c.level_measured[RL_LLC], 32 * MiB), "%.0f", c.level_measured[RL_LLC]);
    cr_assert_eq(c.level_bytes[RL_LLC], c.level_measured[RL_LLC]);
    rl_meta_line lines[RL_CURVE_META_MAX];
    int n = rl_curve_meta(&c, RL_CPU, lines, RL_CURVE_META_MAX);
    const char *curve = NULL, *llc = NULL;
    for (int i = 0; i < n; i++) {
        if (!strcmp(lines[i].key, "curve_read_gbps"))
            curve = lines[i].value;
        if (!strcmp(lines[i].key, "level_LLC_bytes_measured"))
            llc = lines[i].value;
    }
    cr_assert_not_null(curve);
    cr_assert(!strncmp(curve, "16384:400 32768:400 65536:300 ", 30), "%s", curve);
    cr_assert_not_null(llc);
    cr_assert_eq(atof(llc), round(c.level_measured[RL_LLC]));
    /* ... and a cache without a curve is not reused: it is measured again */
    cr_assert_not(rl_ceilings_read(ctx, TEST_CEILINGS, true, &c, why, sizeof why));
    release(ctx);
}

/* ---- make mountain, on fixture ceilings (nothing measured) ------------------------------ */

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(mountain, .init = setup, .fini = teardown, .timeout = 120);

#define MOUNTAIN RL_BUILD_DIR "/mountain"

static int mountain(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --backend cpu --out '%s/results' --plots '%s/plots' %s", MOUNTAIN,
             dir, dir, args);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

Test(mountain, draws_the_curve_of_given_ceilings)
{
    int rc = mountain("--label fx --ceilings " CURVE_FIXTURE);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
    cr_assert(strstr(out, "   32 MiB       60.0       54.0   LLC-DRAM"), "the curve table: %s", out);
    cr_assert(strstr(out, "knees       3: 64 KiB"), "%s", out);
    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/fx/bandwidth.csv", dir);
    rl_table *t = rl_table_read(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_eq(t->nrows, 14);
    cr_assert_str_eq(rl_table_get(t, 0, "level"), "L1");
    cr_assert_str_eq(rl_table_get(t, 13, "level"), "DRAM");
    cr_assert_str_eq(rl_table_meta(t, "levels_source"), "curve");
    cr_assert_not_null(rl_table_meta(t, "level_LLC_bytes_measured"));
    cr_assert_not_null(rl_table_meta(t, "level_LLC_bytes_reported"));
    rl_table_free(t);
    const char *formats[] = {"png", "pdf", "svg"};
    for (int f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s/plots/fx/mountain.%s", dir, formats[f]);
        cr_assert_gt(file_size(path), 1000, "%s", path);
    }
    snprintf(path, sizeof path, "%s/plots/fx/mountain.svg", dir);
    char *svg = read_file(path, NULL);
    cr_assert(svg && strstr(svg, "LLC knee") && strstr(svg, "LLC reported"),
              "the knees and the reported sizes are marked");
    free(svg);
    cr_assert_eq(temp_files_left(dir, "fx"), 0);
}

Test(mountain, usage_errors_and_help)
{
    cr_assert_eq(mountain("--help"), 0);
    cr_assert(strstr(out, "usage: ") && strstr(out, "--ceilings FILE"), "%s", out);
    cr_assert_eq(mountain("--no-such-option"), 2);
    cr_assert_eq(mountain("--variant 1"), 2);
    cr_assert(strstr(err, "--variant is an experiment's option"), "%s", err);
    cr_assert_eq(mountain("--ceilings /no/such/file.csv"), 2);
    cr_assert_eq(mountain("--label fx --ceilings " TEST_CEILINGS), 2, "%s", err);
    cr_assert(strstr(err, "holds no bandwidth curve"), "%s", err);
}

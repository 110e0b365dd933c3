/*
 * test_roofs.c -- which roof a working set is judged against, and what a
 * run does when a point beats its roof: re-measure once, then flag the
 * rows and turn the verdicts that rest on the roof into "not measured".
 */
#include "helpers.h"
#include "internal.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double KiB = 1024, MiB = 1024 * 1024;

Test(roofs, a_working_set_lives_in_the_first_level_it_fits)
{
    /* 2 cores: L1 64 KiB, L2 1 MiB, LLC 32 MiB */
    const double cap[RL_LEVEL_COUNT] = {64 * KiB, 1 * MiB, 32 * MiB, 16384 * MiB};
    bool mixed;
    cr_assert_eq(rl_level_for(cap, 32 * KiB, &mixed), RL_L1);
    cr_assert_not(mixed);
    cr_assert_eq(rl_level_for(cap, 16 * MiB, &mixed), RL_LLC);
    cr_assert_not(mixed, "half the LLC is where its rung was measured");
    cr_assert_eq(rl_level_for(cap, 32 * MiB, &mixed), RL_LLC);
    cr_assert(mixed, "a full LLC spills: judged against the LLC, marked mixed");
    cr_assert_eq(rl_level_for(cap, 1024 * MiB, &mixed), RL_DRAM);
    cr_assert_not(mixed);
}

Test(roofs, just_past_a_level_is_mixed_with_the_next)
{
    /* A cache is not strict LRU: a working set up to 4x its size may still
     * hit in it, so it is marked mixed (which rung judges it: below). */
    const double cap[RL_LEVEL_COUNT] = {64 * KiB, 1 * MiB, 32 * MiB, 16384 * MiB};
    bool mixed;
    cr_assert_eq(rl_level_for(cap, 100 * KiB, &mixed), RL_L1);
    cr_assert(mixed);
    cr_assert_eq(rl_level_for(cap, 100 * MiB, &mixed), RL_LLC);
    cr_assert(mixed);
    cr_assert_eq(rl_level_for(cap, 128 * MiB, &mixed), RL_DRAM, "4x the LLC is DRAM's");
}

Test(roofs, absent_levels_are_skipped)
{
    /* A GPU: no L1 or L2 rung, its L2 is the LLC */
    const double cap[RL_LEVEL_COUNT] = {0, 0, 50 * MiB, 80000 * MiB};
    bool mixed;
    cr_assert_eq(rl_level_for(cap, 1 * KiB, &mixed), RL_LLC);
    cr_assert_not(mixed);
    cr_assert_eq(rl_level_for(cap, 40 * MiB, &mixed), RL_LLC);
    cr_assert(mixed);
    cr_assert_eq(rl_level_for(cap, 150 * MiB, &mixed), RL_LLC);
    cr_assert(mixed);
}

/* ---- a working set that spills: judged against what the spill runs at ------------ */

/* Fabricated roofs (the fixture: LLC read 100 GB/s, DRAM read 20) on a
 * pretended 32 MiB LLC, without a curve: the reported sizes hold, and a
 * working set from 16 MiB (half the LLC) to 128 MiB (4x) is LLC-DRAM. */
static rl_ctx *spill_ctx;
static const rl_experiment SPILL_EXP = {.id = "t", .slug = "t-spill", .title = "spill"};
static const rl_claim MBU_CLAIM = {"mbu", "MBU of the spilled point", 0.8, INFINITY, "", 2,
                                   .on_ceiling = true, .premise_mbu = 0.7};

static void spill_setup(void)
{
    setenv("ROOFLAB_HOST_BUSY", "ignore", 1);
    setenv("ROOFLAB_LLC", "32Mi", 1);
    rl_args args = {.backend = RL_BACKEND_CPU, .label = "t-spill", .ceilings_file = TEST_CEILINGS,
                    .start_roofs = true};
    spill_ctx = rl_begin_bare(&SPILL_EXP, &args);
}

static void spill_teardown(void) { rl_end_discard(spill_ctx); }

TestSuite(roofs_spill, .init = spill_setup, .fini = spill_teardown);

/* A point that read `footprint` bytes once at `gbps`, with no group probe
 * (--roofs start: the run-start ladder judges it). */
static rl_point read_at(double footprint, double gbps)
{
    rl_point p = {.state = RL_POINT_TIMED, .bytes = footprint, .footprint = footprint,
                  .pattern = RL_READ, .seconds = footprint / (gbps * 1e9)};
    p.m.stats = (rl_stats){.median = p.seconds, .q1 = p.seconds, .q3 = p.seconds, .samples = 5};
    p.roof = rl_group_roof_none();
    return p;
}

Test(roofs_spill, the_verdict_takes_mbu_against_the_rung_the_spill_runs_at)
{
    const rl_ceilings *c = rl_ceilings_get(spill_ctx);
    cr_assert_eq(c->level_bytes[RL_LLC], 32 * MiB, "the pretended LLC holds: %g", c->level_bytes[RL_LLC]);
    static const double FOOTPRINTS[] = {0.6, 1.0, 1.5, 2.0, 3.0, 3.9}; /* x the LLC */
    for (size_t i = 0; i < sizeof FOOTPRINTS / sizeof FOOTPRINTS[0]; i++) {
        /* the H200's case: 0.82 of DRAM, far below the cache's rung */
        rl_point p = read_at(FOOTPRINTS[i] * 32 * MiB, 16.4);
        rl_roof roof = rl_point_roof(spill_ctx, &p);
        cr_assert(roof.mixed && roof.level == RL_LLC && !strcmp(roof.name, "LLC-DRAM"),
                  "%.1fx the LLC: %s", FOOTPRINTS[i], roof.name);
        cr_assert_float_eq(roof.gbps, 20, 1e-9, "judged on the DRAM read rung: %g", roof.gbps);
        cr_assert_float_eq(roof.cached_gbps, 100, 1e-9);
        cr_assert_float_eq(rl_point_mbu(spill_ctx, &p), 0.82, 1e-9,
                           "%.1fx: %g, not 16.4 / 100 (the LLC's rung)", FOOTPRINTS[i],
                           rl_point_mbu(spill_ctx, &p));
        cr_assert_float_eq(rl_point_roof_gbps(spill_ctx, &p), 20, 1e-9);
        rl_premise pr = rl_premise_start();
        rl_premise_memory_bound(spill_ctx, &pr, &MBU_CLAIM, &p, "the spilled point");
        rl_judge_given(spill_ctx, &MBU_CLAIM, NULL, rl_point_mbu(spill_ctx, &p), &pr, "");
        rl_verdict_status st;
        const char *note;
        cr_assert(rl_verdict_find(spill_ctx, "mbu", &st, &note));
        cr_assert_eq(st, RL_HOLDS, "%.1fx: %s", FOOTPRINTS[i], note);
        cr_assert_str_eq(rl_verdict_measured(spill_ctx, "mbu"), "0.82");
    }
    cr_assert_null(rl_ceiling_suspect_note(spill_ctx), "no roof was beaten");
}

Test(roofs_spill, a_slow_spill_is_named_against_its_rung_in_the_premise)
{
    rl_point p = read_at(64 * MiB, 10); /* 0.5 of DRAM's rung */
    rl_premise pr = rl_premise_start();
    rl_premise_memory_bound(spill_ctx, &pr, &MBU_CLAIM, &p, "the spilled point");
    cr_assert_not(pr.met);
    cr_assert(strstr(pr.why, "the spilled point at 0.50 of its roof") &&
                  strstr(pr.why, "the run-start ladder's DRAM read rung (the working set spills "
                         "from the LLC)"),
              "%s", pr.why);
}

Test(roofs_spill, a_point_beating_the_spill_rung_is_judged_against_the_cache)
{
    /* 50 GB/s over 48 MiB: 2.5x DRAM's rung, so part of it hit in the LLC;
     * the LLC's rung is the one roof it cannot beat, and no rung is
     * suspect for it. */
    rl_point p = read_at(48 * MiB, 50);
    cr_assert_float_eq(rl_point_mbu(spill_ctx, &p), 0.5, 1e-9, "%g", rl_point_mbu(spill_ctx, &p));
    cr_assert_float_eq(rl_point_roof_gbps(spill_ctx, &p), 100, 1e-9);
    cr_assert_null(rl_ceiling_suspect_note(spill_ctx));
    char text[160];
    rl_point_roof_text(spill_ctx, &p, text, sizeof text);
    cr_assert(strstr(text, "LLC read rung (it beat the spill's rung"), "%s", text);
    /* beyond the cache's rung too: that roof was under-measured */
    rl_point q = read_at(48 * MiB, 120);
    cr_assert_gt(rl_point_mbu(spill_ctx, &q), 1.05);
    cr_assert_not_null(rl_ceiling_suspect_note(spill_ctx));
    cr_assert(strstr(rl_ceiling_suspect_note(spill_ctx), "LLC read bandwidth"), "%s",
              rl_ceiling_suspect_note(spill_ctx));
}

Test(roofs_spill, a_group_probe_over_the_footprint_judges_the_spill)
{
    rl_point p = read_at(64 * MiB, 16);
    p.roof.gbps = p.roof.gbps_q1 = p.roof.gbps_q3 = 18; /* the probe read the same 64 MiB */
    p.roof.probe_bytes = 64 * MiB;
    p.roof.mbu = 16.0 / 18;
    cr_assert_float_eq(rl_point_mbu(spill_ctx, &p), 16.0 / 18, 1e-9);
    char text[160];
    rl_point_roof_text(spill_ctx, &p, text, sizeof text);
    cr_assert_str_eq(text, "the group's read probe (64 MiB)");
}

/* ---- end to end ----------------------------------------------------------------- */

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(roofs_e2e, .init = setup, .fini = teardown, .timeout = 300);

#define EXP02 RL_BUILD_DIR "/exp-02"
#define EXP05 RL_BUILD_DIR "/exp-05"
#define TINY RL_SOURCE_ROOT "/tests/fixtures/ceilings-tiny.csv"

/* Roofs that cannot be re-measured (--ceilings) and that every point
 * beats: every row is flagged, the CSV header says why, and the verdicts
 * on MBU and MFU say "not measured" instead of printing a utilization. */
Test(roofs_e2e, a_beaten_fixed_roof_flags_rows_and_verdicts)
{
    int rc = run_experiment_measuring(EXP02, dir, "--quick --backend cpu --max-bytes 64Mi --label tiny "
                                      "--shape 8192x8192 --no-plot --roofs start --ceilings " TINY,
                                      out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
    cr_assert(strstr(out, "ceiling under-measured (busy machine?)"), "%s", out);
    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/tiny/exp-02.csv", dir);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert(has_meta(t, "# ceiling_under_measured: ceiling under-measured"), "the header says so");
    cr_assert_null(rl_table_meta(t, "ceiling_remeasured"), "a --ceilings roof is never re-measured");
    cr_assert_str_eq(rl_table_meta(t, "ceilings_origin"), "file", "where its roofs came from, as data");
    cr_assert_str_eq(rl_table_meta(t, "ceilings_date_utc"), "2026-01-01T00:00:00Z",
                     "when they were measured: the file's date");
    for (int r = 0; r < t->nrows; r++)
        cr_assert_str_eq(rl_table_get(t, r, "ceiling_flag"), "under-measured", "row %d", r);
    rl_table_free(t);

    snprintf(path, sizeof path, "%s/results/tiny/verdicts.csv", dir);
    t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    int on_roofs = 0;
    for (int r = 0; r < t->nrows; r++) {
        const char *id = rl_table_get(t, r, "id");
        if (!strncmp(id, "mbu_", 4) || !strncmp(id, "mfu_", 4)) {
            cr_assert_str_eq(rl_table_get(t, r, "verdict"), "not measured", "%s", id);
            cr_assert(strstr(rl_table_get(t, r, "note"), "ceiling under-measured"), "%s", id);
            on_roofs++;
        }
        if (!strncmp(id, "ai_decode", 9)) /* a count, not a utilization: still judged */
            cr_assert_str_eq(rl_table_get(t, r, "verdict"), "holds", "%s", id);
    }
    cr_assert_eq(on_roofs, 3, "MBU and MFU at n = 1, MFU when compute-bound");
    rl_table_free(t);
}

/* Rewrites every rate in a ceilings.csv to a hundredth of a unit. */
static void lower_the_roofs(const char *path)
{
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no ceilings at %s", path);
    FILE *f = fopen(path, "w");
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char roof[32], level[16], pattern[16], probe[32];
        if (line[0] != '#' &&
            sscanf(line, "%31[^,],%15[^,],%15[^,],%31[^,],", roof, level, pattern, probe) == 4 &&
            strcmp(roof, "roof") != 0)
            fprintf(f, "%s,%s,%s,%s,0.01,0.01,%s\n", roof, level, pattern, probe,
                    !strcmp(roof, "compute") ? "TFLOP/s" : "GB/s");
        else if (!strncmp(line, "compute,-,", 10)) /* no probe_bytes: the scan stops early */
            fprintf(f, "compute,-,%s,,1e-05,,TFLOP/s\n", strstr(line, "fma") ? "fma" : "gemm");
        else
            fprintf(f, "%s\n", line);
    }
    fclose(f);
    free(text);
}

/* Cached roofs that a point beats are measured again, once, before any
 * row is flagged: a busy moment when they were measured is not a result. */
Test(roofs_e2e, a_beaten_cached_roof_is_measured_again)
{
    const char *args = "--quick --backend cpu --max-bytes 64Mi --label again --op affine "
                       "--variant 1 --no-plot --roofs start";
    cr_assert_eq(run_experiment_measuring(EXP05, dir, args, out, sizeof out, err, sizeof err), 0, "%s", err);
    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/again/ceilings.csv", dir);
    lower_the_roofs(path);
    cr_assert_eq(run_experiment_measuring(EXP05, dir, args, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(out, "cached"), "the lowered roofs were used: %s", out);
    snprintf(path, sizeof path, "%s/results/again/exp-05.csv", dir);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    const char *again = rl_table_meta(t, "ceiling_remeasured");
    cr_assert_not_null(again, "a beaten roof is measured again");
    cr_assert(strstr(again, "GB/s after a point reached"), "%s", again);
    /* The same as data: the rung measured again and the roof it has now,
     * far above the lowered one. */
    int rungs = 0;
    for (int m = 0; m < t->nmeta; m++)
        if (!strncmp(t->meta_keys[m], "remeasured_", 11) && strstr(t->meta_keys[m], "_gbps")) {
            cr_assert_gt(atof(t->meta_values[m]), 1.0, "%s: %s", t->meta_keys[m], t->meta_values[m]);
            rungs++;
        }
    cr_assert_gt(rungs, 0, "a remeasured_<level>_<pattern>_gbps line beside: %s", again);
    cr_assert_str_eq(rl_table_meta(t, "ceilings_origin"), "cached");
    rl_table_free(t);
}

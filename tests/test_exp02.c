/*
 * test_exp02.c -- experiment 02 end to end on the CPU backend: a quick run
 * into a temporary folder writes the documented columns and metadata, one
 * validated row per (shape, n, variant) it promises, its verdicts and
 * three charts; bad usage fails with the documented exit codes.
 */
#include "helpers.h"
#include "internal.h" /* a bare context, rl_verdict_find: the premise on stand-in points */
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP02 RL_BUILD_DIR "/exp-02"

static const char *const DOCUMENTED_COLUMNS =
    "shape,k,rows,n,variant,number,flops,bytes,ai,copies,footprint_bytes,cache_resident,"
    "validated_rows,cache,samples,stop_reason,time_us_median,time_us_q1,time_us_q3,time_us_min,"
    "time_us_mean,rel_stddev,gbps,mbu,mem_level,ceiling_gbps,ceiling_flag,mbu_datasheet,"
    "group_roof_gbps,group_roof_gbps_q1,group_roof_gbps_q3,group_roof_bytes,tflops,mfu,"
    "mfu_datasheet,group_roof_tflops,group_roof_tflops_q1,group_roof_tflops_q3,attainable_tflops,time_per_token_us,tokens_per_s,validated,max_abs_err,"
    "skipped_reason";

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp02, .init = setup, .fini = teardown, .timeout = 900);

static int run_exp02(const char *args)
{
    return run_experiment(EXP02, dir, args, out, sizeof out, err, sizeof err);
}

/* The quick CPU sweep: n = 1, 2, 8, 128; the scalar GEMV at n = 1 only,
 * gemv_fp16 to n = 8, the library path and its tiled form at every n. */
static int expected_rows(int n)
{
    return (n == 1) + (n <= 8) + 2;
}

static void check_rows(const rl_table *t, const char *shape)
{
    static const int NS[] = {1, 2, 8, 128};
    int total = 0;
    for (size_t i = 0; i < sizeof NS / sizeof NS[0]; i++) {
        int found = 0;
        for (int r = 0; r < t->nrows; r++)
            if (!strcmp(rl_table_get(t, r, "shape"), shape) && atoi(rl_table_get(t, r, "n")) == NS[i])
                found++;
        cr_assert_eq(found, expected_rows(NS[i]), "%s n=%d: %d rows", shape, NS[i], found);
        total += found;
    }
    cr_assert_eq(table_count(t, "shape", shape), total, "no other n for %s", shape);
}

/* The host's cache sizes would decide which levels the points land in
 * (a 105 MiB L3 holds every quick point): the test pretends a 32 MiB one,
 * so every machine runs the same sweep against the same levels. */
Test(exp02, quick_cpu_run_writes_csv_verdicts_and_charts)
{
    setenv("ROOFLAB_LLC", "32Mi", 1);
    int rc = run_exp02("--quick --backend cpu --max-bytes 64Mi --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "claim       "), "%s", out);
    cr_assert(strstr(out, "backend     cpu"), "%s", out);
    cr_assert(strstr(out, "verdicts (cpu backend"), "%s", out);
    const char *verdicts[] = {"arithmetic intensity at n = 1 (counted) (4096x14336)",
                              "MBU at n = 1 (gemv_fp16) (8192x8192)",
                              "MFU at n = 1, vs MFU when compute-bound (4096x14336)",
                              "MFU when compute-bound", "time per step, free batch over n = 1"};
    for (size_t i = 0; i < sizeof verdicts / sizeof verdicts[0]; i++)
        cr_assert(strstr(out, verdicts[i]), "verdict '%s' missing:\n%s", verdicts[i], out);

    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/e2e/exp-02.csv", dir);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    static const char *meta[] = {"# experiment: 02-prefill-decode", "# backend: cpu", "# quick: yes",
                                 "# tokens: n = 1 2 8 128", "# ceiling_gbps: ", "# ridge_flop_per_byte: ",
                                 "# validation: ", "# compare_keys: shape,variant,n"};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(has_meta(t, meta[i]), "metadata '%s' missing", meta[i]);
    char header[4096];
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    check_rows(t, "4096x14336");
    check_rows(t, "8192x8192");
    for (int r = 0; r < t->nrows; r++) {
        cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes", "row %d", r);
        cr_assert_gt(atof(rl_table_get(t, r, "time_us_median")), 0, "row %d", r);
        cr_assert_gt(atof(rl_table_get(t, r, "mbu")), 0, "row %d", r);
        double llc = atof(rl_table_meta(t, "llc_bytes")), fp = atof(rl_table_get(t, r, "footprint_bytes"));
        cr_assert_eq(atoi(rl_table_get(t, r, "cache_resident")), fp < 4 * llc, "row %d", r);
        cr_assert_neq(rl_table_get(t, r, "mem_level")[0], '\0', "row %d names its roof's level", r);
        double ai = atof(rl_table_get(t, r, "ai")), n = atof(rl_table_get(t, r, "n"));
        cr_assert(ai > 0.9 * n && ai < 1.01 * n, "FP16 weights: AI ~ n (row %d: n %g, AI %g)", r, n, ai);
        /* MFU / MBU is AI / ridge for every row: one time, two yardsticks */
        double mfu = atof(rl_table_get(t, r, "mfu")), mbu = atof(rl_table_get(t, r, "mbu"));
        double tfl = atof(rl_table_get(t, r, "tflops")), gbps = atof(rl_table_get(t, r, "gbps"));
        cr_assert_float_eq(mfu / mbu, ai * (gbps / mbu) / (tfl / mfu * 1000), 1e-3 * mfu / mbu);
    }
    rl_table_free(t);

    static const char *const ids[] = {"mbu_decode_4096x14336", "batching_free_8192x8192"};
    char first[1024] = "";
    cr_assert_eq(missing_verdicts(dir, "e2e", "02-prefill-decode", "cpu", ids, 2, first, sizeof first), 0,
                 "%s missing", first);
    static const char *const charts[] = {"exp-02", "exp-02-batch", "exp-02-util"};
    cr_assert_eq(missing_charts(dir, "e2e", charts, 3, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);
    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
}

/* A run whose points all fit the last-level cache (a quick run on a
 * Sapphire Rapids VM's 105 MiB L3) has no DRAM-level row: the chart draws
 * the run-start ladder's roofs instead of the group roofs' DRAM band, and
 * gnuplot must not stop at a statistic over no rows. */
Test(exp02, a_run_with_no_dram_level_point_still_draws_its_charts)
{
    setenv("ROOFLAB_LLC", "1Gi", 1);
    int rc = run_exp02("--quick --backend cpu --shape 4096x14336 --max-bytes 128Mi --label cached");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/cached/exp-02.csv", dir);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    for (int r = 0; r < t->nrows; r++)
        cr_assert_str_neq(rl_table_get(t, r, "mem_level"), "DRAM", "row %d fits the pretended LLC", r);
    rl_table_free(t);
    static const char *const charts[] = {"exp-02", "exp-02-batch", "exp-02-util"};
    char first[1024] = "";
    cr_assert_eq(missing_charts(dir, "cached", charts, 3, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);
}

/* The H200's quick run (results/reference/h200/gpu-day-logs/lease2-quick):
 * the weights' copies between half and 4x the LLC, judged against the
 * cache's rung, gave MBU 0.23 for a GEMV at 0.83 of DRAM. Here the same
 * class of working set on a pretended 64 MiB LLC (112 MiB of weights, one
 * copy: LLC-DRAM) against the fixture's roofs, the ladder judging (--roofs
 * start): the verdict's MBU is the GEMV's GB/s over the fixture's DRAM
 * read rung, what the spill runs at, unless the GEMV beats that rung
 * (then over the LLC's). */
Test(exp02, a_spilled_working_set_is_judged_against_the_spill_rung)
{
    setenv("ROOFLAB_LLC", "64Mi", 1);
    int rc = run_exp02("--quick --backend cpu --shape 4096x14336 --max-bytes 128Mi --roofs start "
                       "--no-plot --label spill");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/spill/exp-02.csv", dir);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    int row = -1;
    for (int r = 0; r < t->nrows; r++)
        if (!strcmp(rl_table_get(t, r, "variant"), "gemv_fp16") && atoi(rl_table_get(t, r, "n")) == 1)
            row = r;
    cr_assert_geq(row, 0, "gemv_fp16 at n = 1");
    cr_assert_str_eq(rl_table_get(t, row, "mem_level"), "LLC-DRAM");
    double gbps = rl_table_num(t, row, "gbps"), rung = gbps > 1.05 * 20 ? 100 : 20;
    cr_assert_float_eq(rl_table_num(t, row, "ceiling_gbps"), rung, 1e-9, "GB/s %g", gbps);
    cr_assert_float_eq(rl_table_num(t, row, "mbu"), gbps / rung, 1e-3 * gbps / rung);
    rl_table_free(t);

    snprintf(path, sizeof path, "%s/results/spill/verdicts.csv", dir);
    t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    int v = rl_table_find(t, "id", "mbu_decode_4096x14336");
    cr_assert_geq(v, 0);
    double measured = atof(rl_table_get(t, v, "measured"));
    cr_assert_float_eq(measured, gbps / rung, 0.0051, "the verdict's MBU %g, the GEMV's %g GB/s over "
                       "the %g GB/s rung: %s", measured, gbps, rung, rl_table_get(t, v, "note"));
    cr_assert(strstr(rl_table_get(t, v, "note"), rung == 20 ? "the run-start ladder's DRAM read rung"
                     : "the run-start ladder's LLC read rung"), "%s", rl_table_get(t, v, "note"));
    rl_table_free(t);
}

Test(exp02, usage_errors_exit_2)
{
    cr_assert_eq(run_exp02("--bogus"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp02("--shape 4096x4096"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--shape must be one of"), "%s", err);
}

Test(exp02, help_and_list)
{
    cr_assert_eq(run_exp02("--help"), 0);
    cr_assert(strstr(out, "--shape SHAPE") && strstr(out, "8192x8192"), "%s", out);
    cr_assert_eq(run_exp02("--backend cpu --list"), 0);
    cr_assert(strstr(out, "gemv_fp16_scalar") && strstr(out, "gemm_library") && strstr(out, "n = 1"),
              "%s", out);
}

Test(exp02, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp02("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}

/* ---- batching_free's premise, on stand-in points ------------------------------------ */

/* The claim as exp-02 declares it: the step at n over the step at n = 1,
 * within 1.25x; each step at least 1 / 1.25 of its roof. */
static const rl_claim BATCHING = {"batching_free", "time per step, free batch over n = 1", 0, 1.25,
                                  "x", 2, .premise_mbu = 0.8};

/* A GEMV step at n tokens (AI n: n FLOPs a byte) taking `seconds` (q1-q3
 * within 1 %), at `mbu` of its read probe, whose compute probe puts the
 * ridge at `ridge` FLOP/B. */
static rl_point step_at(int n, double seconds, double mbu, double ridge)
{
    rl_point p = {.state = RL_POINT_TIMED, .seconds = seconds, .bytes = 1e9, .flops = 1e9 * n,
                  .footprint = 1e9};
    p.m.stats = (rl_stats){.median = seconds, .q1 = 0.99 * seconds, .q3 = 1.01 * seconds,
                           .samples = 5};
    p.roof = rl_group_roof_none();
    p.roof.gbps = p.roof.gbps_q1 = p.roof.gbps_q3 = 1e9 / seconds / 1e9 / mbu;
    p.roof.mbu = mbu;
    p.roof.tflops = p.roof.tflops_q1 = p.roof.tflops_q3 = ridge * p.roof.gbps * 1e9 / 1e12;
    p.roof.mfu = mbu * n / ridge;
    return p;
}

static rl_verdict_status judge_batch(rl_ctx *c, rl_point t1, rl_point tn, const char **note)
{
    rl_premise pr = rl_premise_start();
    rl_premise_at_memory_roof(c, &pr, &BATCHING, &t1, "gemv_fp16 at n = 1");
    rl_premise_at_memory_roof_to_fail(c, &pr, &BATCHING, &tn, "gemv_fp16 at n = 4");
    rl_judge_ratio_given(c, &BATCHING, NULL, rl_time_ratio(&tn, &t1), &pr, "");
    rl_verdict_status st;
    cr_assert(rl_verdict_find(c, "batching_free", &st, note));
    return st;
}

static rl_ctx *bare(void)
{
    static const rl_experiment E = {.id = "t", .slug = "t-exp02", .title = "exp-02's premise"};
    setenv("ROOFLAB_HOST_BUSY", "ignore", 1); /* tests run beside each other */
    rl_args args = {.backend = RL_BACKEND_CPU, .label = "t-exp02"};
    return rl_begin_bare(&E, &args);
}

/* The VM of issue 48: n = 1 at 0.9 of its roof, n = 4 (AI 4, under a
 * ridge of 12) at 0.68 and 1.3x the time: the step at n = 4 is bound by
 * its instructions, so the claim cannot fail on it: premise not met,
 * naming the bound, never "does not hold". */
Test(exp02, a_batch_step_under_its_roof_below_the_ridge_is_premise_not_met)
{
    rl_ctx *c = bare();
    const char *note;
    cr_assert_eq(judge_batch(c, step_at(1, 1.0, 0.9, 12), step_at(4, 1.3, 0.68, 12), &note),
                 RL_PREMISE_NOT_MET, "%s", note);
    cr_assert(strstr(note, "gemv_fp16 at n = 4 at 0.68 of its roof") &&
              strstr(note, "under the ridge beside it, 12.0") && strstr(note, "its own instructions"),
              "%s", note);
    /* a slow step that still stays within the band: it holds */
    cr_assert_eq(judge_batch(c, step_at(1, 1.0, 0.9, 12), step_at(4, 1.2, 0.75, 12), &note),
                 RL_HOLDS, "%s", note);
    rl_end_discard(c);
}

/* At or above the ridge beside it the step is compute-bound: the note
 * says so. A slow n = 1 step gates either verdict. */
Test(exp02, a_compute_bound_step_and_a_slow_first_step_are_named)
{
    rl_ctx *c = bare();
    const char *note;
    cr_assert_eq(judge_batch(c, step_at(1, 1.0, 0.9, 3.5), step_at(4, 1.6, 0.56, 3.5), &note),
                 RL_PREMISE_NOT_MET, "%s", note);
    cr_assert(strstr(note, "the compute roof does (AI 4.0 FLOP/B, at or above the ridge beside "
                     "it, 3.5"), "%s", note);
    cr_assert_eq(judge_batch(c, step_at(1, 1.0, 0.6, 12), step_at(4, 1.1, 0.55, 12), &note),
                 RL_PREMISE_NOT_MET, "%s", note);
    cr_assert(strstr(note, "gemv_fp16 at n = 1 at 0.60 of its roof"), "%s", note);
    rl_end_discard(c);
}

/* Both steps at their roofs: judged on the ratio, both ways. */
Test(exp02, batch_steps_at_their_roofs_are_judged_on_the_ratio)
{
    rl_ctx *c = bare();
    const char *note;
    cr_assert_eq(judge_batch(c, step_at(1, 1.0, 0.9, 12), step_at(4, 1.1, 0.85, 12), &note),
                 RL_HOLDS, "%s", note);
    cr_assert_eq(judge_batch(c, step_at(1, 1.0, 0.95, 12), step_at(4, 1.4, 0.85, 12), &note),
                 RL_DOES_NOT_HOLD, "%s", note);
    rl_end_discard(c);
}

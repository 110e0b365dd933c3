/*
 * test_exp08.c -- experiment 08 end to end on the CPU backend: a quick run
 * into a temporary folder (its slow tier's file there too) writes the
 * documented CSV (every row validated; the spill rows' t/t0 and both
 * models, each with the r of its own path; the MoE rows' counted bytes the
 * touched experts' and the model's curve; the empty launch moving
 * nothing), prints and writes its verdicts (the overlapped one judged
 * with its own path's r, the batch-1 ones on a premise on the step's
 * launches) and draws its two charts; --moe-shape times one shape and writes nothing;
 * bad usage exits 2; a slow tier in memory is refused.
 */
#include "helpers.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#define EXP08 RL_BUILD_DIR "/exp-08"

static const char *const DOCUMENTED_COLUMNS =
    "part,variant,number,routing,f,rows,k,experts,top_k,batch,touched,touched_model,flops,bytes,ai,"
    "footprint_bytes,validated_rows,cache,samples,stop_reason,time_us_median,time_us_q1,time_us_q3,"
    "time_us_min,time_us_mean,rel_stddev,gbps,mbu,mem_level,ceiling_gbps,ceiling_flag,mbu_datasheet,"
    "group_roof_gbps,group_roof_gbps_q1,group_roof_gbps_q3,group_roof_bytes,tflops,mfu,mfu_datasheet,"
    "r,t_over_t0,model_sequential,model_overlapped,t_over_t1,touched_ratio_model,validated,"
    "max_abs_err,skipped_reason";

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp08, .init = setup, .fini = teardown, .timeout = 900);

static int run_exp08(const char *args)
{
    char all[1024];
    snprintf(all, sizeof all, "--spill-dir %s %s", dir, args);
    return run_experiment(EXP08, dir, all, out, sizeof out, err, sizeof err);
}

static double num(const rl_table *t, int r, const char *col) { return atof(rl_table_get(t, r, col)); }
static bool is(const rl_table *t, int r, const char *col, const char *v) { return !strcmp(rl_table_get(t, r, col), v); }
static bool near(double a, double b) { return fabs(a - b) <= 1e-5 * fabs(b) + 1e-9; }

/* A spill row: f's rows in the slow tier, t/t0 and both models for the
 * GEMV variants, the models (1 - f) + f r and max(1 - f, f r). */
static void check_spill_row(const rl_table *t, int r, int *gemv, int *copies)
{
    double f = num(t, r, "f"), rows = num(t, r, "rows"), k = num(t, r, "k");
    if (is(t, r, "variant", "spill_tier_read") || is(t, r, "variant", "spill_tier_read_overlapped")) {
        double slow = 8 * round(f * rows / 8);
        cr_assert(near(num(t, r, "bytes"), 2 * slow * k), "row %d: the tier read's bytes", r);
        cr_assert(f > 0, "row %d: no tier read at f = 0", r);
        (*copies)++;
        return;
    }
    (*gemv)++;
    cr_assert(near(num(t, r, "bytes"), 2 * rows * k + 2 * k + 4 * rows), "row %d: bytes", r);
    /* a time over a time of the same variant: positive and finite; how far
     * from 1 is the machine's (its own f = 0 sample, which a loaded
     * machine may have slowed), so no tighter bound is the code's */
    cr_assert(isfinite(num(t, r, "t_over_t0")) && num(t, r, "t_over_t0") > 0, "row %d", r);
    if (f == 0) { /* t0 is each variant's own f = 0 time, not the faster variant's */
        cr_assert(near(num(t, r, "t_over_t0"), 1), "row %d: t/t0 at f = 0 is %s", r,
                  rl_table_get(t, r, "t_over_t0"));
        return;
    }
    double rr = num(t, r, "r");
    cr_assert_gt(rr, 0, "row %d: r", r);
    if (is(t, r, "variant", "spill_sequential"))
        cr_assert(near(num(t, r, "model_sequential"), (1 - f) + f * rr), "row %d: the sequential model", r);
    else
        cr_assert(near(num(t, r, "model_overlapped"), fmax(1 - f, f * rr)), "row %d: the overlapped model", r);
}

/* A MoE row: the touched experts at least top-k and at most E; the bytes
 * the touched (or all, dense) experts' weights, x and y. */
static void check_moe_row(const rl_table *t, int r)
{
    if (is(t, r, "variant", "moe_empty_launch")) { /* the fixed cost: one launch, no bytes */
        cr_assert(near(num(t, r, "bytes"), 0) && is(t, r, "part", "moe_top_k"), "row %d: the empty launch", r);
        return;
    }
    double E = num(t, r, "experts"), K = num(t, r, "top_k"), B = num(t, r, "batch"),
           rows = num(t, r, "rows"), k = num(t, r, "k"), touched = num(t, r, "touched");
    cr_assert(touched >= K - 1e-9 && touched <= fmin(E, K * B) + 1e-9, "row %d: touched %g", r, touched);
    cr_assert(near(num(t, r, "touched_model"), E * (1 - pow(1 - K / E, B))), "row %d: the model", r);
    bool dense = is(t, r, "variant", "moe_dense");
    double bytes = (dense ? E : touched) * 2 * rows * k + 2 * k * B + 4 * rows * B * K +
                   (dense ? 4 * rows * (E * B + B * K) : 0);
    cr_assert(near(num(t, r, "bytes"), bytes), "row %d: bytes %s, want %g", r, rl_table_get(t, r, "bytes"), bytes);
    if (is(t, r, "part", "moe_batch") && B == 1 && !dense)
        cr_assert(near(num(t, r, "t_over_t1"), 1), "row %d: t(1)/t(1)", r);
}

Test(exp08, quick_cpu_run_writes_csv_verdicts_and_charts)
{
    struct statfs fs;
    if (statfs(dir, &fs) == 0 && (fs.f_type == 0x01021994 || fs.f_type == 0x858458f6))
        cr_skip_test("the temporary folder %s is tmpfs: no slower tier for the spill part", dir);
    int rc = run_exp08("--quick --backend cpu --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "verdicts (cpu backend"), "%s", out);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/e2e/exp-08.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text);
    static const char *meta[] = {"# experiment: 08-weight-tiers", "# backend: cpu", "# quick: yes",
                                 "# spill: a 2048x4096 FP16 GEMV (n = 1), f = 0 0.1 0.5 of its rows",
                                 "# spill_slow_tier: a file in ", "# moe: 32 experts of 768x2048 FP16",
                                 "# bytes_model: spill: every weight once", "# validation: spill: every row",
                                 "# compare_keys: part,variant,routing,f,top_k,batch"};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(strstr(text, meta[i]), "metadata '%s' missing", meta[i]);
    free(text);

    char why[512], header[4096];
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "the CSV parses, every row complete: %s", why);
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    int gemv = 0, copies = 0, top_k = 0, batch = 0;
    for (int r = 0; r < t->nrows; r++) {
        cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes", "row %d", r);
        cr_assert_gt(num(t, r, "time_us_median"), 0, "row %d", r);
        if (is(t, r, "part", "spill"))
            check_spill_row(t, r, &gemv, &copies);
        else {
            check_moe_row(t, r);
            top_k += is(t, r, "part", "moe_top_k");
            batch += is(t, r, "part", "moe_batch");
        }
    }
    cr_assert_eq(gemv, 2 * 3, "spill: 2 GEMV variants at f = 0, 0.1, 0.5");
    cr_assert_eq(copies, 2 * 2, "spill: the slow tier's copy and the overlapped path's read at f = 0.1 and 0.5");
    cr_assert_eq(top_k, 2 + 2, "batch 1: top-1 and top-4, the dense path and the empty launch");
    cr_assert_eq(batch, 2 * 2 + 1, "over the batch: B = 1 and 4, uniform and skewed, and the dense path");
    rl_table_free(t);

    static const char *const ids[] = {"spill_sequential_model", "spill_overlapped_closer",
                                      "moe_active_bytes_k1", "moe_active_bytes_k4",
                                      "moe_dense_over_active", "moe_routed_touched_B1",
                                      "moe_routed_touched_B4", "moe_touched_curve_B4"};
    char first[1024] = "";
    cr_assert_eq(missing_verdicts(dir, "e2e", "08-weight-tiers", "cpu", ids, 8, first, sizeof first), 0,
                 "%s missing", first);
    /* the verdicts say which r the overlapped one is judged with, and the
     * batch-1 premise on the step's launches (the notes, which carry the
     * numbers, are cut where a busy host's reason comes first) */
    snprintf(path, sizeof path, "%s/results/e2e/verdicts.csv", dir);
    text = read_file(path, NULL);
    cr_assert_not_null(text);
    cr_assert(strstr(text, "and the sequential one (1), r of its own path"), "%s", text);
    cr_assert(strstr(text, "judged where the bytes at the roof take >= 10x the step's launches"), "%s", text);
    free(text);
    static const char *const names[] = {"exp-08", "exp-08-moe"};
    cr_assert_eq(missing_charts(dir, "e2e", names, 2, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);
    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
}

/* --moe-shape: one shape, validated and timed, a table and no results. */
Test(exp08, moe_shape_times_one_shape_and_writes_nothing)
{
    int rc = run_exp08("--quick --backend cpu --label side --moe-shape 16,2,3,40,64");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    cr_assert(strstr(out, "shape       16 experts of 40x64 FP16, top-2, B = 3"), "%s", out);
    cr_assert(strstr(out, "moe_active"), "%s", out);
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/results/side/exp-08.csv", dir);
    cr_assert_neq(stat(path, &st), 0, "a side benchmark writes no CSV");
}

Test(exp08, usage_errors_exit_2)
{
    cr_assert_eq(run_exp08("--bogus"), RL_EXIT_USAGE);
    static const char *const bad[] = {"8,9,1", "0,1,1", "8,2,0", "8,2,1,768", "8,2,1,768,100", "8,2,1x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "--backend cpu --quick --moe-shape %s", bad[i]);
        cr_assert_eq(run_exp08(args), RL_EXIT_USAGE, "--moe-shape %s", bad[i]);
        cr_assert(strstr(err, "--moe-shape wants E,K,B"), "%s", err);
    }
}

/* The slow tier in memory, or no folder: the run stops with the reason
 * before it measures anything. */
Test(exp08, a_slow_tier_in_memory_is_refused)
{
    struct statfs fs;
    if (statfs("/dev/shm", &fs) != 0 || fs.f_type != 0x01021994)
        cr_skip_test("no tmpfs at /dev/shm to try");
    char args[256];
    snprintf(args, sizeof args, "--spill-dir /dev/shm --quick --backend cpu --label shm");
    int rc = run_experiment(EXP08, dir, args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, RL_EXIT_USAGE, "%s", out);
    cr_assert(strstr(err, "--spill-dir: /dev/shm lives in memory"), "%s", err);
    cr_assert_eq(run_experiment(EXP08, dir, "--spill-dir /no/such/dir --quick --backend cpu", out,
                                sizeof out, err, sizeof err), RL_EXIT_USAGE);
    cr_assert(strstr(err, "/no/such/dir"), "%s", err);
}

Test(exp08, help_and_list)
{
    cr_assert_eq(run_exp08("--help"), 0);
    cr_assert(strstr(out, "--spill-dir DIR") && strstr(out, "--moe-shape E,K,B[,M,N]"), "%s", out);
    cr_assert_eq(run_exp08("--backend cpu --list"), 0);
    static const char *const variants[] = {"spill_sequential", "spill_overlapped", "spill_tier_read",
                                           "spill_tier_read_overlapped", "moe_active", "moe_dense",
                                           "moe_empty_launch"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        cr_assert(strstr(out, variants[i]), "%s missing from --list:\n%s", variants[i], out);
}

Test(exp08, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp08("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}

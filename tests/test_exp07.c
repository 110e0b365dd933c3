/*
 * test_exp07.c -- experiment 07 end to end on the CPU backend: a quick run
 * into a temporary folder writes the documented CSV (its rows validated,
 * their counted bytes the formula, attention's AI its group size
 * at every batch, the share of the step on the fused decode rows), prints
 * and writes its verdicts and draws its three charts; --shape times one
 * decode shape and writes nothing; bad usage exits 2.
 */
#include "helpers.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXP07 RL_BUILD_DIR "/exp-07"

static const char *const DOCUMENTED_COLUMNS =
    "phase,config,variant,number,batch,ctx,heads_q,heads_kv,group,dim,flops,bytes,ai,kv_bytes,"
    "score_bytes,footprint_bytes,cache_resident,validated_rows,cache,samples,stop_reason,"
    "time_us_median,time_us_q1,time_us_q3,time_us_min,time_us_mean,rel_stddev,gbps,mbu,mem_level,"
    "ceiling_gbps,ceiling_flag,mbu_datasheet,group_roof_gbps,group_roof_gbps_q1,group_roof_gbps_q3,"
    "group_roof_bytes,tflops,mfu,mfu_datasheet,group_roof_tflops,group_roof_tflops_q1,"
    "group_roof_tflops_q3,attainable_tflops,share_of_step,speedup_vs_materialized,"
    "speedup_vs_materialized_lo,speedup_vs_materialized_hi,validated,max_abs_err,skipped_reason";

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp07, .init = setup, .fini = teardown, .timeout = 900);

static int run_exp07(const char *args)
{
    return run_experiment(EXP07, dir, args, out, sizeof out, err, sizeof err);
}

static double num(const rl_table *t, int r, const char *col) { return atof(rl_table_get(t, r, col)); }

/* One decode row: its counted bytes and FLOPs, its AI the group size. */
static void check_decode_row(const rl_table *t, int r)
{
    double B = num(t, r, "batch"), L = num(t, r, "ctx"), hq = num(t, r, "heads_q"),
           hkv = num(t, r, "heads_kv"), d = num(t, r, "dim"), G = num(t, r, "group");
    cr_assert_float_eq(G, hq / hkv, 1e-9, "row %d", r);
    /* the CSV keeps 6 significant digits */
    double kv = B * L * hkv * d * 2 * 2, flops = 4 * B * hq * L * d;
    cr_assert(fabs(num(t, r, "kv_bytes") - kv) <= 1e-5 * kv, "row %d: KV bytes", r);
    cr_assert(fabs(num(t, r, "flops") - flops) <= 1e-5 * flops, "row %d: FLOPs", r);
    bool fused = !strcmp(rl_table_get(t, r, "variant"), "decode_fused");
    double bytes = B * L * hkv * d * 4 + B * hq * d * 6 + (fused ? 0 : 16 * B * hq * L);
    cr_assert(fabs(num(t, r, "bytes") - bytes) <= 1e-5 * bytes, "row %d: bytes %s, want %g", r,
              rl_table_get(t, r, "bytes"), bytes);
    if (fused) {
        cr_assert(num(t, r, "ai") > 0.99 * G && num(t, r, "ai") <= G, "row %d: AI %s for G = %g", r,
                  rl_table_get(t, r, "ai"), G);
        double share = num(t, r, "share_of_step");
        cr_assert(share > 0 && share < 1, "row %d: share of the step %s", r,
                  rl_table_get(t, r, "share_of_step"));
    }
}

/* The prefill verdict needs a length whose scores (n x n x 4 B per head)
 * outgrow the LLC: n = 4096's 64 MiB does on a 32 MiB L3, not on a
 * 105 MiB one. The test pretends 32 MiB, so it asks the same of every host. */
Test(exp07, quick_cpu_run_writes_csv_verdicts_and_charts)
{
    setenv("ROOFLAB_LLC", "32Mi", 1);
    int rc = run_exp07("--quick --backend cpu --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "verdicts (cpu backend"), "%s", out);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/e2e/exp-07.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text);
    static const char *meta[] = {"# experiment: 07-attention", "# backend: cpu", "# quick: yes",
                                 "# decode: batch B = 1 4; cache length L = 2048;",
                                 "# weights: Llama 3 8B's layer", "# prefill: n = 512 4096;",
                                 "# bytes_model: decode KV = B L h_kv d x 2 tensors x 2 B",
                                 "# validation: decode and prefill: the first rows",
                                 "# ridge_flop_per_byte: ", "# compare_keys: phase,config,variant,batch,ctx"};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(strstr(text, meta[i]), "metadata '%s' missing", meta[i]);
    free(text);

    char why[512], header[4096];
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "the CSV parses, every row complete: %s", why);
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    int decode_fused = 0, decode_mat = 0, gemm = 0, prefill = 0;
    double prefill_bytes[2] = {0, 0}; /* materialized, fused at n = 4096 */
    for (int r = 0; r < t->nrows; r++) {
        cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes", "row %d", r);
        cr_assert_gt(num(t, r, "time_us_median"), 0, "row %d", r);
        const char *phase = rl_table_get(t, r, "phase"), *config = rl_table_get(t, r, "config"),
                   *variant = rl_table_get(t, r, "variant");
        if (!strcmp(config, "layer")) {
            gemm++;
            double ai = num(t, r, "ai"), B = num(t, r, "batch");
            cr_assert(ai > 0.95 * B && ai <= B, "row %d: the GEMM's AI %g at B = %g", r, ai, B);
        } else if (!strcmp(phase, "decode")) {
            check_decode_row(t, r);
            decode_fused += !strcmp(variant, "decode_fused");
            decode_mat += !strcmp(variant, "decode_materialized");
        } else {
            cr_assert_str_eq(phase, "prefill");
            prefill++;
            if (num(t, r, "ctx") == 4096)
                prefill_bytes[!strcmp(variant, "prefill_fused")] = num(t, r, "bytes");
        }
    }
    cr_assert_eq(gemm, 2, "the weight GEMM at B = 1 and 4");
    cr_assert_eq(decode_fused, 3 * 2, "fused decode: 3 configurations x 2 batches at L = 2048");
    cr_assert_eq(decode_mat, 2, "materialized decode: GQA4's 2 batches");
    cr_assert_eq(prefill, 2 * 2, "prefill: 2 lengths x 2 variants");
    cr_assert(prefill_bytes[0] > 50 * prefill_bytes[1], "n = 4096: %g against %g B", prefill_bytes[0],
              prefill_bytes[1]);
    rl_table_free(t);

    static const char *const ids[] = {"attention_ai_flat_MHA", "attention_ai_flat_GQA4",
                                      "attention_ai_flat_GQA8", "gemm_ai_linear",
                                      "attention_mbu_MHA", "attention_share_grows",
                                      "decode_bytes_saved", "prefill_bytes_drop",
                                      "prefill_fused_faster_n4096"};
    char first[1024] = "";
    cr_assert_eq(missing_verdicts(dir, "e2e", "07-attention", "cpu", ids, 9, first, sizeof first), 0,
                 "%s missing", first);
    static const char *const names[] = {"exp-07", "exp-07-prefill", "exp-07-share"};
    cr_assert_eq(missing_charts(dir, "e2e", names, 3, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);
    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
}

/* --shape: one decode shape, both variants validated and timed, a table
 * and no results. */
Test(exp07, shape_times_one_decode_shape_and_writes_nothing)
{
    int rc = run_exp07("--quick --backend cpu --label side --shape 2,8,2,64,300");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    cr_assert(strstr(out, "shape       B = 2, 8 query heads, 2 KV heads of dimension 64, L = 300"), "%s", out);
    cr_assert(strstr(out, "decode_fused") && strstr(out, "decode_materialized"), "%s", out);
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/results/side/exp-07.csv", dir);
    cr_assert_neq(stat(path, &st), 0, "a side benchmark writes no CSV");
}

Test(exp07, usage_errors_exit_2)
{
    cr_assert_eq(run_exp07("--bogus"), RL_EXIT_USAGE);
    static const char *const bad[] = {"1,8,3,128,64", "1,8,8,96,64", "0,8,8,128,64", "1,8,8,128",
                                      "1,8,8,128,64x", "1,64,4,128,64"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "--backend cpu --quick --shape %s", bad[i]);
        cr_assert_eq(run_exp07(args), RL_EXIT_USAGE, "--shape %s", bad[i]);
        cr_assert(strstr(err, "--shape wants B,HQ,HKV,D,L"), "%s", err);
    }
}

Test(exp07, help_and_list)
{
    cr_assert_eq(run_exp07("--help"), 0);
    cr_assert(strstr(out, "--shape B,HQ,HKV,D,L"), "%s", out);
    cr_assert_eq(run_exp07("--backend cpu --list"), 0);
    static const char *const variants[] = {"decode_fused", "decode_materialized", "prefill_materialized",
                                           "prefill_fused", "gemv_fp16", "gemm_library_tiled"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        cr_assert(strstr(out, variants[i]), "%s missing from --list:\n%s", variants[i], out);
}

Test(exp07, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp07("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}

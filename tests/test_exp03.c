/*
 * test_exp03.c -- experiment 03 end to end on the CPU backend: a quick run
 * writes a measured, validated row per variant and format, the published
 * llama.cpp rows beside them (marked as such), the tables and verdicts,
 * and three charts; bad usage fails with the documented exit codes.
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP03 RL_BUILD_DIR "/exp-03"

static const char *const DOCUMENTED_COLUMNS =
    "source,format,bits_per_weight,phase,variant,number,layers,params,size_bytes,size_gib,tokens,"
    "cache_resident,rel_size,cache,samples,stop_reason,time_us_median,time_us_q1,time_us_q3,"
    "time_us_min,time_us_mean,rel_stddev,gbps,mbu,mem_level,ceiling_gbps,ceiling_flag,mbu_datasheet,"
    "group_roof_gbps,group_roof_gbps_q1,group_roof_gbps_q3,group_roof_bytes,"
    "tflops,mfu,mfu_datasheet,group_roof_tflops,group_roof_tflops_q1,group_roof_tflops_q3,tokens_per_s,ceiling_tokens_per_s,rel_tokens_per_s,dequant_share_model,dequant_share_over_f16,speedup_model,validated,"
    "max_abs_err,skipped_reason";

static const char *const FORMATS[] = {"f16", "q8", "q6", "q5", "q4", "q2"};
static const double BITS[] = {16, 8.5, 6.5625, 5.5, 4.5, 2.625};
/* The CPU's variants (kernels/quant.c) and their phases: every one in every
 * format, a row each. */
static const char *const VARIANTS[][2] = {
    {"gemv_dequant", "decode"}, {"dequant_gemm", "prefill"}, {"gemv_int8", "decode"}};
enum { NVARIANTS = sizeof VARIANTS / sizeof VARIANTS[0] };
/* The batch part of a quick CPU run: M = 1, 2, 4 in F16 and q4. */
enum { BATCH_ROWS = 3 * 2 };

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp03, .init = setup, .fini = teardown, .timeout = 900);

static int run_exp03(const char *args)
{
    return run_experiment(EXP03, dir, args, out, sizeof out, err, sizeof err);
}

/* variant NULL: the first row of that source, format and phase. */
static int find_row(const rl_table *t, const char *source, const char *format, const char *phase,
                    const char *variant)
{
    for (int r = 0; r < t->nrows; r++)
        if (!strcmp(rl_table_get(t, r, "source"), source) &&
            !strcmp(rl_table_get(t, r, "format"), format) && !strcmp(rl_table_get(t, r, "phase"), phase) &&
            (!variant || !strcmp(rl_table_get(t, r, "variant"), variant)))
            return r;
    return -1;
}

/* The batch part's row of a format at M tokens. */
static int find_batch_row(const rl_table *t, const char *format, const char *tokens)
{
    for (int r = 0; r < t->nrows; r++)
        if (!strcmp(rl_table_get(t, r, "phase"), "batch") &&
            !strcmp(rl_table_get(t, r, "format"), format) && !strcmp(rl_table_get(t, r, "tokens"), tokens))
            return r;
    return -1;
}

/* Prefill rows: the conversion pass's share of the time, by the model (on
 * the CPU every format, F16 too, is converted to FP32: the format's bytes
 * read, 4 per weight written, at a copy rung of the fixture's ladder) and
 * over F16's time; decode rows have neither. */
static void check_pass_share(const rl_table *t, int r, int f16, bool prefill, double params,
                             double size, double us)
{
    const char *model = rl_table_get(t, r, "dequant_share_model"),
               *over = rl_table_get(t, r, "dequant_share_over_f16");
    if (!prefill) {
        cr_assert(!model[0] && !over[0], "a decode row has no pass: '%s' '%s'", model, over);
        return;
    }
    double share = atof(model), pass_s = share * us * 1e-6;
    cr_assert(share > 0 && share < 1, "%g", share);
    double gbps = (size + 4 * params) / pass_s / 1e9;
    static const double COPY_RUNGS[] = {300, 150, 80, 20}; /* tests/fixtures/ceilings-cpu.csv */
    bool on_a_rung = false;
    for (int i = 0; i < 4; i++)
        on_a_rung |= fabs(gbps - COPY_RUNGS[i]) < 1e-3 * COPY_RUNGS[i];
    cr_assert(on_a_rung, "the model's pass runs at a copy rung, not %g GB/s", gbps);
    double t16 = atof(rl_table_get(t, f16, "time_us_median"));
    cr_assert_float_eq(atof(over), 1 - t16 / us, 1e-4, "over F16: 1 - t_F16 / t");
}

static void check_measured(const rl_table *t)
{
    /* The model's size follows the cache (a cache-sized model here, under
     * --max-bytes 64Mi): every row states the same weights, in blocks of 256. */
    const double params = atof(rl_table_get(t, find_row(t, "measured", "f16", "decode", NULL), "params"));
    cr_assert_gt(params, 0);
    for (int f = 0; f < 6; f++)
        for (int v = 0; v < NVARIANTS; v++) {
            const char *variant = VARIANTS[v][0], *phase = VARIANTS[v][1];
            bool prefill = !strcmp(phase, "prefill");
            int r = find_row(t, "measured", FORMATS[f], phase, variant);
            cr_assert_geq(r, 0, "no %s %s row", FORMATS[f], variant);
            cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes", "%s %s", FORMATS[f], variant);
            cr_assert_float_eq(atof(rl_table_get(t, r, "bits_per_weight")), BITS[f], 1e-9);
            /* the CSV keeps six significant digits */
            cr_assert_float_eq(atof(rl_table_get(t, r, "params")), params, params * 1e-5);
            double size = atof(rl_table_get(t, r, "size_bytes"));
            cr_assert_float_eq(size, params * BITS[f] / 8, size * 1e-5, "%s: bytes = weights x bits / 8", FORMATS[f]);
            cr_assert_float_eq(atof(rl_table_get(t, r, "rel_size")), BITS[f] / 16, 1e-5);
            double tps = atof(rl_table_get(t, r, "tokens_per_s"));
            double us = atof(rl_table_get(t, r, "time_us_median"));
            int tokens = atoi(rl_table_get(t, r, "tokens"));
            cr_assert_eq(tokens, prefill ? 64 : 1, "quick CPU prefill takes 64 tokens");
            cr_assert_float_eq(tps, tokens / (us * 1e-6), tps * 1e-4, "%s %s tokens/s", FORMATS[f], variant);
            /* size x step rate: bytes per second */
            cr_assert_float_eq(atof(rl_table_get(t, r, "gbps")), size * tps / tokens / 1e9, 1e-3 * size * tps / tokens / 1e9);
            cr_assert_eq(rl_table_get(t, r, "ceiling_tokens_per_s")[0] == '\0', prefill,
                         "a decode row has its ceiling, a prefill row none");
            /* against F16 of the same variant, timed with it */
            int f16 = find_row(t, "measured", "f16", phase, variant);
            double rel = atof(rl_table_get(t, f16, "time_us_median")) / us;
            cr_assert_float_eq(atof(rl_table_get(t, r, "rel_tokens_per_s")), rel, rel * 1e-4, "%s %s", FORMATS[f], variant);
            check_pass_share(t, r, f16, prefill, params, size, us);
        }
}

/* /proc/cpuinfo names an x86 family (its size reads 0: read it by lines). */
static bool cpuinfo_has_family(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = !strncmp(line, "cpu family", 10);
    if (f)
        fclose(f);
    return found;
}

Test(exp03, quick_cpu_run_writes_csv_tables_verdicts_and_charts)
{
    int rc = run_exp03("--quick --backend cpu --max-bytes 64Mi --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    const char *printed[] = {"verdicts (cpu backend", "decode speedup, F16 -> 4.5 bits (q4)",
                             "size x decode rate, 8.5 to 4.5 bits, vs F16",
                             "prefill tokens/s, every format, vs F16", "size x dec GB/s",
                             "each format's best decode variant", "ms/step",
                             "relative to F16: this run vs llama.cpp's published table",
                             "model: decode tokens/s ceiling", "H200 SXM", "this device (DRAM read)",
                             "prefill: the weights' pass to FP32 before the GEMM", "share (model)"};
    for (size_t i = 0; i < sizeof printed / sizeof printed[0]; i++)
        cr_assert(strstr(out, printed[i]), "'%s' missing:\n%s", printed[i], out);

    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/e2e/exp-03.csv", dir);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    char header[4096];
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    static const char *meta[] = {"# experiment: 03-quant-decode", "# backend: cpu", "# quick: yes",
                                 "# params: ", "# regime: ", "# prefill_tokens: 64", "# q6: 6.5625 bits",
                                 "# published: ", "# compare_keys: source,format,phase,variant,tokens",
                                 "# prefill_dequant_share: f16 0."};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(has_meta(t, meta[i]), "metadata '%s' missing", meta[i]);
    check_measured(t);
    /* Which CPU: a VM names Zen 3, 4 and 5 all "AMD EPYC"; its family and
     * model tell them apart, so they go wherever the device is named. */
    if (cpuinfo_has_family()) {
        const char *detail = rl_table_meta(t, "device_detail");
        cr_assert(detail && strstr(detail, " (family ") && strstr(detail, ", model "), "%s", detail);
        cr_assert(strstr(out, detail), "the device line prints it: %s", detail);
    }

    /* The published table: every quant type, both phases, marked, its F16 the anchor. */
    /* and the batch part's: F16 and q4 at M = 1, 2, 4 in a quick CPU run,
     * each checked and a speedup over the F16 of its M */
    cr_assert_eq(table_count(t, "source", "measured"), 6 * NVARIANTS + BATCH_ROWS);
    for (int m = 1; m <= 4; m *= 2) {
        char tokens[8];
        snprintf(tokens, sizeof tokens, "%d", m);
        for (int f = 0; f < 2; f++) {
            int r = find_batch_row(t, f ? "q4" : "f16", tokens);
            cr_assert_geq(r, 0, "no batch row for %s at M = %d", f ? "q4" : "f16", m);
            cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes");
            double rel = atof(rl_table_get(t, r, "rel_tokens_per_s"));
            cr_assert(f ? rel > 0 : fabs(rel - 1) < 1e-12, "M = %d: %g over F16", m, rel);
            cr_assert_gt(atof(rl_table_get(t, r, "speedup_model")), 0.99);
        }
    }
    cr_assert_eq(table_count(t, "source", "llama.cpp"), 2 * 24);
    int f16 = find_row(t, "llama.cpp", "F16", "decode", NULL), q4 = find_row(t, "llama.cpp", "Q4_K_M", "decode", NULL);
    cr_assert_float_eq(atof(rl_table_get(t, f16, "tokens_per_s")), 29.17, 1e-9);
    cr_assert_float_eq(atof(rl_table_get(t, q4, "rel_tokens_per_s")), 71.93 / 29.17, 1e-5);
    cr_assert_float_eq(atof(rl_table_get(t, q4, "gbps")), 4.58 * 1073741824.0 * 71.93 / 1e9, 1e-3);
    cr_assert(strstr(rl_table_get(t, q4, "skipped_reason"), "published"));
    cr_assert_str_eq(rl_table_get(t, q4, "validated"), "");
    rl_table_free(t);

    /* Wherever the weights live, both decode verdicts are judged: holds or
     * does not hold, never "not measured". */
    snprintf(path, sizeof path, "%s/results/e2e/verdicts.csv", dir);
    rl_table *v = load_results(path, why, sizeof why);
    cr_assert_not_null(v, "%s", why);
    int judged = 0;
    for (int r = 0; r < v->nrows; r++)
        if (!strcmp(rl_table_get(v, r, "id"), "decode_speedup_q4") ||
            !strcmp(rl_table_get(v, r, "id"), "size_x_decode_flat")) {
            cr_assert_str_neq(rl_table_get(v, r, "verdict"), "not measured", "%s: %s",
                              rl_table_get(v, r, "id"), rl_table_get(v, r, "note"));
            cr_assert(strstr(rl_table_get(v, r, "note"), "weights in "), "says where: %s",
                      rl_table_get(v, r, "note"));
            judged++;
        }
    cr_assert_eq(judged, 2);
    int prefill = rl_table_find(v, "id", "prefill_flat");
    cr_assert_geq(prefill, 0);
    cr_assert(strstr(rl_table_get(v, prefill, "note"), "of their prefill time by a model of the pass"),
              "the note says the pass's share: %s", rl_table_get(v, prefill, "note"));
    rl_table_free(v);

    const char *charts[] = {"exp-03", "exp-03-bw", "exp-03-prefill"}, *fmts[] = {"png", "pdf", "svg"};
    for (size_t i = 0; i < 3; i++)
        for (size_t f = 0; f < 3; f++) {
            snprintf(path, sizeof path, "%s/plots/e2e/%s.%s", dir, charts[i], fmts[f]);
            cr_assert_gt(file_size(path), 1000, "%s is missing or empty", path);
        }
    /* Each variant is a series of its own on its phase's charts, found in
     * the CSV: plot.gp names none. */
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/plots/e2e/%s.svg", dir, charts[i]);
        char *svg = read_file(path, NULL);
        cr_assert_not_null(svg);
        for (int v = 0; v < NVARIANTS; v++) {
            char series[64];
            snprintf(series, sizeof series, "this run, %s, %s", VARIANTS[v][1], VARIANTS[v][0]);
            bool prefill_chart = i == 2, prefill = !strcmp(VARIANTS[v][1], "prefill");
            cr_assert_eq(strstr(svg, series) != NULL, prefill_chart == prefill, "%s: '%s'", charts[i], series);
        }
        free(svg);
    }
    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
}

/* --matrix: one matrix, every format and decode variant, validated and
 * timed, printed, and no results written. */
Test(exp03, one_matrix_is_timed_in_every_format_and_writes_nothing)
{
    int rc = run_exp03("--quick --backend cpu --label m --matrix 300x512");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    const char *printed[] = {"matrix      300 x 512, n = 1", "ms/call", "x F16", "read  "};
    for (size_t i = 0; i < sizeof printed / sizeof printed[0]; i++)
        cr_assert(strstr(out, printed[i]), "'%s' missing:\n%s", printed[i], out);
    for (int f = 0; f < 6; f++) {
        char line[64];
        snprintf(line, sizeof line, "\n  %-6s", FORMATS[f]);
        cr_assert(strstr(out, line), "no %s row:\n%s", FORMATS[f], out);
    }
    cr_assert(strstr(out, "gemv_int8") && strstr(out, "gemv_dequant"), "%s", out);
    cr_assert_null(strstr(out, "FAILED"), "%s", out);
    /* each format timed alone, as ggml times each type, yet every row
     * still has its ratio to the one F16 point */
    cr_assert(strstr(out, "6 group(s) of 11 point(s)"), "a group per format:\n%s", out);
    cr_assert_null(strstr(out, "nan"), "%s", out);
    char path[1024];
    snprintf(path, sizeof path, "%s/results/m/exp-03.csv", dir);
    cr_assert_eq(file_size(path), -1, "no CSV from --matrix");
    cr_assert_eq(temp_files_left(dir, "m"), 0, "no temporary files left");
    cr_assert_eq(run_exp03("--backend cpu --matrix 300x500"), RL_EXIT_USAGE, "K must be a multiple of 256");
    cr_assert_eq(run_exp03("--backend cpu --matrix 4096"), RL_EXIT_USAGE);
}

/* --matrix --tokens: the batch kernels at each M, every format, each
 * validated on the matrix's first rows for every token, and each ratio
 * over the F16 at the same M (make peer-ggml-batch reads these rows). */
Test(exp03, one_matrix_at_several_tokens_times_the_batch_kernels)
{
    char rows[1024];
    snprintf(rows, sizeof rows, "%s/rows.csv", dir);
    char args[1200];
    snprintf(args, sizeof args, "--quick --backend cpu --label t --matrix 300x512 --tokens 1,3,5 "
             "--rows-file %s", rows);
    int rc = run_exp03(args);
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "matrix      300 x 512, n = 1,3,5"), "%s", out);
    cr_assert(strstr(out, "6 group(s) of 18 point(s)"), "a group per format, 3 M each:\n%s", out);
    cr_assert_null(strstr(out, "FAILED"), "%s", out);
    cr_assert_null(strstr(out, "gemv_int8"), "no decode variant:\n%s", out);
    char why[256];
    rl_table *t = rl_table_read(rows, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_eq(t->nrows, 18, "%d rows", t->nrows);
    for (int r = 0; r < t->nrows; r++) {
        cr_assert_str_eq(rl_table_get(t, r, "variant"), "gemm_int8");
        cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes", "row %d", r);
        cr_assert_gt(rl_table_num(t, r, "rel_tokens_per_s"), 0, "row %d: a ratio over its M's F16", r);
        /* 8-bit integer dot products: the FP32 roof does not bound them */
        bool f16 = !strcmp(rl_table_get(t, r, "format"), "f16");
        cr_assert_eq(isnan(rl_table_num(t, r, "mfu")), !f16, "row %d (%s): mfu %s", r,
                     rl_table_get(t, r, "format"), rl_table_get(t, r, "mfu"));
    }
    rl_table_free(t);
    cr_assert_eq(run_exp03("--backend cpu --matrix 300x512 --tokens 3,1"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--tokens wants at most 16 ascending counts"), "%s", err);
    cr_assert_eq(run_exp03("--backend cpu --tokens 2"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--tokens goes with --matrix"), "%s", err);
}

/* --matrix --cache hot, a lab run: each format's shape is timed on that
 * matrix, as it lives, and cached under keys of its own, so the choice
 * for DRAM (the model's decode) is neither used nor overwritten. */
Test(exp03, a_hot_matrix_is_tuned_on_itself_under_its_own_keys)
{
    int rc = run_exp03("--backend cpu --label h --matrix 256x512 --cache hot --variant gemv_int8 --no-plot");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "q2 decode shape: ") && strstr(out, "timed now"), "%s", out);
    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/results/h/tuning.csv", dir);
    rl_table *t = rl_table_read(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    for (int f = 0; f < 6; f++) {
        char key[64];
        snprintf(key, sizeof key, "tuning_%s_256x512_hot", FORMATS[f]);
        int found = rl_table_find(t, "key", key);
        cr_assert_geq(found, 0, "no %s row in %s", key, path);
        cr_assert(strstr(rl_table_get(t, found, "signature"), "256 x 512 hot"), "%s",
                  rl_table_get(t, found, "signature"));
    }
    for (int r = 0; r < t->nrows; r++)
        cr_assert(strstr(rl_table_get(t, r, "key"), "_hot"), "a DRAM key written: %s", rl_table_get(t, r, "key"));
    rl_table_free(t);
}

Test(exp03, usage_errors_exit_2)
{
    cr_assert_eq(run_exp03("--bogus"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp03("--backend cpu --layers 0"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--layers"), "%s", err);
    cr_assert_eq(run_exp03("--backend cpu --layers two"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp03("--backend cpu --variant bogus"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "gemv_int8"), "the valid variants are listed: %s", err);
}

Test(exp03, help_and_list)
{
    cr_assert_eq(run_exp03("--help"), 0);
    cr_assert(strstr(out, "--layers N"), "%s", out);
    cr_assert_eq(run_exp03("--backend cpu --list"), 0);
    cr_assert(strstr(out, "gemv_dequant") && strstr(out, "dequant_gemm") && strstr(out, "gemv_int8"), "%s", out);
    cr_assert(strstr(out, "[role: decode_int8]") && strstr(out, "[role: prefill]"), "%s", out);
}

Test(exp03, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp03("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}

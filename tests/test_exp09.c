/*
 * test_exp09.c -- experiment 09 end to end on the CPU backend: a quick run
 * into a temporary folder writes a row per step of both layers and of
 * BERT's backward pass and per whole pass, every one validated, the steps' counts adding up to their
 * layer's; its verdicts; a Chrome trace naming every step; its charts.
 * Bad usage fails with the documented exit codes.
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP09 RL_BUILD_DIR "/exp-09"

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp09, .init = setup, .fini = teardown, .timeout = 600);

static int run_exp09(const char *args)
{
    return run_experiment(EXP09, dir, args, out, sizeof out, err, sizeof err);
}

static double num(const rl_table *t, int r, const char *col) { return atof(rl_table_get(t, r, col)); }

/* BERT-large's layer as model.c writes it: 17 steps eager, 7 fused. */
static const char *const UNFUSED_STEPS[] = {
    "qkv_matmul", "qkv_bias", "attn_scores", "attn_scale_mask", "attn_softmax", "attn_context",
    "out_matmul", "out_bias", "residual1", "layernorm1", "ffn1_matmul", "ffn1_bias", "gelu",
    "ffn2_matmul", "ffn2_bias", "residual2", "layernorm2"};
enum { UNFUSED = sizeof UNFUSED_STEPS / sizeof UNFUSED_STEPS[0], FUSED = 7, BACKWARD = 25 };

/* Every step row of a program validated, of a known class; its FLOPs and
 * bytes summing to its whole layer's row. Returns the steps seen. */
static int check_program(const rl_table *t, const char *program)
{
    double flops = 0, bytes = 0, layer_flops = NAN, layer_bytes = NAN;
    int steps = 0;
    for (int r = 0; r < t->nrows; r++) {
        if (strcmp(rl_table_get(t, r, "program"), program))
            continue;
        cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes", "%s row %d (%s) not validated",
                         program, r, rl_table_get(t, r, "step"));
        const char *cls = rl_table_get(t, r, "class");
        if (!strcmp(cls, "layer")) {
            layer_flops = num(t, r, "flops"), layer_bytes = num(t, r, "bytes");
            cr_assert_eq(num(t, r, "step_index"), -1);
            continue;
        }
        cr_assert(!strcmp(cls, "contraction") || !strcmp(cls, "normalization") ||
                      !strcmp(cls, "elementwise"), "class %s", cls);
        cr_assert(num(t, r, "time_us_median") > 0, "%s: %s untimed", program, rl_table_get(t, r, "step"));
        flops += num(t, r, "flops"), bytes += num(t, r, "bytes");
        steps++;
    }
    /* the CSV keeps 6 significant digits a cell */
    cr_assert(fabs(flops - layer_flops) <= 1e-4 * layer_flops, "%s: steps' FLOPs %g, layer %g",
              program, flops, layer_flops);
    cr_assert(fabs(bytes - layer_bytes) <= 1e-4 * layer_bytes, "%s: steps' bytes %g, layer %g",
              program, bytes, layer_bytes);
    return steps;
}

Test(exp09, quick_cpu_run_writes_steps_verdicts_trace_and_charts)
{
    int rc = run_exp09("--quick --backend cpu --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "verdicts (cpu backend"), "%s", out);
    cr_assert(strstr(out, "shares by class"), "the table of shares: %s", out);
    cr_assert(strstr(out, "what each fusion removes"), "the table of fusions: %s", out);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/e2e/exp-09.csv", dir);
    char why[256];
    rl_table *t = rl_table_read(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_eq(check_program(t, "unfused"), UNFUSED);
    cr_assert_eq(check_program(t, "fused"), FUSED);
    /* the quick run's BERT is one sequence: its backward pass runs too,
     * every step and the whole pass validated against the reference */
    cr_assert_eq(check_program(t, "backward"), BACKWARD);
    rl_table_free(t);
    cr_assert(strstr(out, "training (the unfused forward pass and the backward pass)"),
              "the training table: %s", out);

    /* the counted claim is judged whatever the machine does: BERT's cheap
     * steps are well under 1 % of its FLOPs */
    snprintf(path, sizeof path, "%s/results/e2e/verdicts.csv", dir);
    char *verdicts = read_file(path, NULL);
    cr_assert_not_null(verdicts);
    cr_assert(strstr(verdicts, "09-layer,cheap_flop_share_bert,cpu"), "%s", verdicts);
    cr_assert(strstr(verdicts, "(counted) (bert),under 1 %"), "%s", verdicts);
    cr_assert(strstr(verdicts, "09-layer,train_cheap_time_share_model_bert,cpu"), "%s", verdicts);
    cr_assert(!strstr(verdicts, "train_cheap_time_share_model_llama"), "no backward for llama: %s", verdicts);
    free(verdicts);

    /* the trace: the Trace Event Format's object, every step an event */
    snprintf(path, sizeof path, "%s/results/e2e/exp-09-trace.json", dir);
    char *trace = read_file(path, NULL);
    cr_assert_not_null(trace, "no trace at %s", path);
    cr_assert(!strncmp(trace, "{\"traceEvents\":[", 16), "%.80s", trace);
    for (int i = 0; i < UNFUSED; i++) {
        char name[96];
        snprintf(name, sizeof name, "\"name\":\"%s\"", UNFUSED_STEPS[i]);
        cr_assert(strstr(trace, name), "the trace has no event %s", UNFUSED_STEPS[i]);
    }
    cr_assert(strstr(trace, "\"name\":\"attn_scores_backward\""), "the backward pass in the trace");
    cr_assert(strstr(trace, "\"cat\":\"normalization\""));
    cr_assert(strstr(trace, "\"displayTimeUnit\":\"ms\"}"));
    free(trace);

    static const char *const charts[] = {"exp-09", "exp-09-roofline"};
    char first[1024];
    cr_assert_eq(missing_charts(dir, "e2e", charts, 2, first, sizeof first), 0, "%s", first);
}

Test(exp09, usage_errors_exit_2)
{
    cr_assert_eq(run_exp09("--bogus"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp09("--quick --backend cpu --variant no_such_step"), RL_EXIT_USAGE, "%s", err);
}

Test(exp09, help_and_list)
{
    cr_assert_eq(run_exp09("--help"), 0);
    cr_assert(strstr(out, "transformer layer"), "%s", out);
    cr_assert_eq(run_exp09("--list"), 0);
    cr_assert(strstr(out, "sgemm_epilogue") && strstr(out, "bias_add_layernorm"), "%s", out);
}

Test(exp09, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp09("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}

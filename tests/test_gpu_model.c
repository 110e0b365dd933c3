/*
 * test_gpu_model.c -- the static GPU model (rl_gpu_model.h): the loop
 * reader (sass.c, sass_ins.c) on a hand-written listing in nvdisasm's
 * shape (tests/fixtures/gpu-model/: its five kernels each a case), the ceilings (gpu_model.c) on loops
 * whose counts are given, and, in a build with nvcc, make gpu-model's
 * script on the build's own kernels: every kernel a verdict judges at or
 * above its bar on H100 and H200 (issue 47's rule: a kernel whose own
 * count cannot reach its verdict's bar is a defect now).
 */
#include "helpers.h"
#include "rl_gpu_model.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURES RL_SOURCE_ROOT "/tests/fixtures/gpu-model"

static char *listing;
static rl_rare_range rare[8];
static int nrare;

static void load_fixture(void)
{
    listing = read_file(FIXTURES "/loops.sass", NULL);
    cr_assert_not_null(listing, "the fixture listing");
    nrare = rl_rare_ranges_scan(FIXTURES "/fake.cu", "rl-model: rare", rare, 8);
}

static void free_fixture(void) { free(listing); }

TestSuite(sass, .init = load_fixture, .fini = free_fixture);

static rl_sass_loop loop_of(const char *function, rl_sass_options o)
{
    rl_sass_loop l;
    char why[200];
    cr_assert(rl_sass_loop_of(listing, function, &o, &l, why, sizeof why), "%s", why);
    return l;
}

Test(sass, a_marked_block_is_a_rare_range_to_its_closing_brace)
{
    cr_assert_eq(nrare, 1);
    cr_assert_str_eq(rare[0].file, "fake.cu");
    cr_assert_eq(rare[0].first, 15, "from the line after the marker");
    cr_assert_eq(rare[0].last, 17, "to the brace that closes the block");
    cr_assert_eq(rl_rare_ranges_scan(FIXTURES "/none.cu", "rl-model: rare", rare, 8), -1);
}

Test(sass, the_main_loop_is_counted_once_without_rare_code_or_the_divergent_path)
{
    rl_sass_loop l = loop_of("k_loop", (rl_sass_options){RL_STREAM_EF, rare, nrare, 1, false});
    cr_assert(l.found);
    cr_assert_eq(l.first_addr, 0x20);
    cr_assert_eq(l.last_addr, 0xf0, "BRA.DIV's path (0x110..) is not the loop's");
    cr_assert_eq(l.blocks, 5);
    cr_assert_eq(l.instructions, 12, "14 in the loop, 2 of them in the rare block (inlined code too)");
    cr_assert_eq(l.rare, 2);
    cr_assert_eq(l.pipe[RL_PIPE_FMA], 2);
    cr_assert_eq(l.pipe[RL_PIPE_XU], 0, "the MUFU is rare");
    cr_assert_eq(l.pipe[RL_PIPE_ALU], 3);
    cr_assert_eq(l.pipe[RL_PIPE_SHFL], 1);
    cr_assert_eq(l.pipe[RL_PIPE_LSU], 3);
    cr_assert_eq(l.pipe[RL_PIPE_CTRL], 3);
    cr_assert_eq(l.stream_loads, 2, "only the evict-first loads are the stream");
    cr_assert_float_eq(l.stream_bytes, 1024, 1e-9);
    cr_assert_float_eq(l.l1_bytes, 1536, 1e-9, "every load's 512 bytes a warp");
    cr_assert_eq(l.waits, 1);
    cr_assert_float_eq(l.inflight_bytes, 1024, 1e-9, "both loads in flight at the first use");
}

Test(sass, without_the_marks_every_block_counts)
{
    rl_sass_loop l = loop_of("k_loop", (rl_sass_options){RL_STREAM_EF, NULL, 0, 1, false});
    cr_assert_eq(l.instructions, 14);
    cr_assert_eq(l.pipe[RL_PIPE_XU], 1);
    rl_sass_loop g = loop_of("k_loop", (rl_sass_options){RL_STREAM_GLOBAL, NULL, 0, 1, false});
    cr_assert_eq(g.stream_loads, 3, "every global load under RL_STREAM_GLOBAL");
}

Test(sass, a_load_issued_after_a_wait_costs_a_latency_of_its_own)
{
    rl_sass_loop l = loop_of("k_serial", (rl_sass_options){RL_STREAM_EF, NULL, 0, 1, false});
    cr_assert_eq(l.waits, 2, "A and B wait together; C, issued after, alone");
    cr_assert_float_eq(l.inflight_bytes, (1024 + 512) / 2.0, 1e-9);
    cr_assert_float_eq(l.stream_bytes, 1536, 1e-9);
}

Test(sass, async_copies_stay_in_flight_by_group_and_the_tensor_loop_is_the_main_one)
{
    rl_sass_loop l = loop_of("k_async", (rl_sass_options){RL_STREAM_ASYNC, NULL, 0, 1, true});
    cr_assert(l.found);
    cr_assert_float_eq(l.tensor_fma, 2 * 16 * 8 * 16, 1e-9);
    cr_assert_eq(l.pipe[RL_PIPE_TENSOR], 2);
    cr_assert_float_eq(l.stream_bytes, 1024, 1e-9);
    cr_assert_eq(l.waits, 1);
    cr_assert_float_eq(l.inflight_bytes, 2048, 1e-9, "DEPBAR.LE 1: this iteration's group and the one before");
    cr_assert_float_eq(l.l1_bytes, 1024 + 512, 1e-9, "two 16-byte copies a lane, an LDSM of four matrices");
}

Test(sass, an_inner_loop_runs_its_trips_in_a_kernel_without_a_streaming_loop)
{
    rl_sass_loop one = loop_of("k_inner", (rl_sass_options){RL_STREAM_GLOBAL, NULL, 0, 1, false});
    cr_assert_not(one.found, "the loop has no stream load: the whole kernel is one pass");
    cr_assert_eq(one.instructions, 8);
    rl_sass_loop three = loop_of("k_inner", (rl_sass_options){RL_STREAM_GLOBAL, NULL, 0, 3, false});
    cr_assert_eq(three.instructions, 8 + 2 * 4);
    cr_assert_eq(three.pipe[RL_PIPE_XU], 3);
    cr_assert_eq(three.waits, 1);
    cr_assert_float_eq(three.inflight_bytes, 512, 1e-9);
}

Test(sass, of_sibling_loops_an_indirect_branch_reaches_the_one_with_the_most_bytes_is_the_main)
{
    rl_sass_loop l = loop_of("k_switch", (rl_sass_options){RL_STREAM_EF, NULL, 0, 1, false});
    cr_assert(l.found, "BRX's targets are reached");
    cr_assert_eq(l.first_addr, 0x60, "two loads an iteration, not the one-load loop");
    cr_assert_float_eq(l.stream_bytes, 1024, 1e-9);
    cr_assert_eq(l.instructions, 6);
}

Test(sass, a_function_not_in_the_listing_says_so)
{
    rl_sass_loop l;
    char why[200] = "";
    rl_sass_options o = {RL_STREAM_EF, NULL, 0, 1, false};
    cr_assert_not(rl_sass_loop_of(listing, "k_none", &o, &l, why, sizeof why));
    cr_assert(strstr(why, "k_none"), "%s", why);
}

Test(sass, opcodes_go_to_their_pipes)
{
    cr_assert_eq(rl_sass_pipe_of("FFMA"), RL_PIPE_FMA);
    cr_assert_eq(rl_sass_pipe_of("IMAD.WIDE"), RL_PIPE_FMA);
    cr_assert_eq(rl_sass_pipe_of("HADD2.F32"), RL_PIPE_HALF);
    cr_assert_eq(rl_sass_pipe_of("LOP3.LUT"), RL_PIPE_ALU);
    cr_assert_eq(rl_sass_pipe_of("MUFU.EX2"), RL_PIPE_XU);
    cr_assert_eq(rl_sass_pipe_of("SHFL.BFLY"), RL_PIPE_SHFL);
    cr_assert_eq(rl_sass_pipe_of("LDG.E.EF.128"), RL_PIPE_LSU);
    cr_assert_eq(rl_sass_pipe_of("HMMA.16816.F32"), RL_PIPE_TENSOR);
    cr_assert_eq(rl_sass_pipe_of("BAR.SYNC"), RL_PIPE_CTRL);
}

/* ---- the ceilings, on loops whose counts are given ----------------------------------- */

static rl_sass_loop streaming(int instructions, double inflight)
{
    return (rl_sass_loop){.found = true, .instructions = instructions, .stream_bytes = 1024,
                          .l1_bytes = 1024, .inflight_bytes = inflight, .pipe = {[RL_PIPE_FMA] = 50}};
}

static const rl_gpu_resources LIGHT = {32, 0, 0}; /* 32 registers: 64 warps an SM */

static rl_gpu_prediction on_h200(rl_sass_loop l, long long blocks, double bytes)
{
    const rl_gpu_spec *g = rl_gpu_spec_by_slug("h200");
    cr_assert_not_null(g);
    rl_gpu_launch launch = {.blocks = blocks, .threads = 256, .bytes = bytes, .kernels = 1};
    return rl_gpu_predict(g, &l, &LIGHT, &launch, false);
}

Test(gpu_model, little_needs_bandwidth_times_the_loaded_latency_in_flight)
{
    const rl_gpu_spec *g = rl_gpu_spec_by_slug("h200");
    rl_gpu_prediction p = on_h200(streaming(100, 1024), 100000, 1e9);
    cr_assert_eq(p.occ.blocks, 8);
    cr_assert_float_eq(p.inflight_per_sm, 8 * 8 * 1024.0, 1e-6);
    cr_assert_float_eq(p.needed_per_sm, g->dram_gbps * g->latency_ns * RL_LOADED_OVER_IDLE / g->sms, 1e-6);
    cr_assert_float_eq(p.latency, p.inflight_per_sm / p.needed_per_sm, 1e-9);
    cr_assert_float_eq(p.predicted, 1, 1e-9, "every ceiling above the roof: the bandwidth's");
    cr_assert_str_eq(p.limit, "bandwidth");
}

Test(gpu_model, too_few_bytes_in_flight_bind_on_latency)
{
    rl_gpu_prediction p = on_h200(streaming(100, 128), 100000, 1e9);
    cr_assert_str_eq(p.limit, "latency");
    cr_assert_lt(p.predicted, p.latency + 1e-9);
    cr_assert_gt(p.predicted, 0.9 * p.latency, "the last partial wave only a little lower");
}

Test(gpu_model, too_many_instructions_a_byte_bind_on_issue)
{
    const rl_gpu_spec *g = rl_gpu_spec_by_slug("h200");
    rl_gpu_prediction p = on_h200(streaming(1000, 4096), 100000, 1e9);
    double roof_per_clock = g->dram_gbps * 1e9 / (g->sms * g->clock_mhz * 1e6);
    cr_assert_float_eq(p.cycles_per_iter, 1000 / 4.0, 1e-9, "four schedulers");
    cr_assert_float_eq(p.issue, 1024 / 250.0 / roof_per_clock, 1e-9);
    cr_assert_str_eq(p.limit, "issue");
}

Test(gpu_model, a_short_kernel_is_bound_by_its_launch)
{
    const rl_gpu_spec *g = rl_gpu_spec_by_slug("h200");
    rl_gpu_prediction p = on_h200(streaming(100, 1024), 100000, 1e6);
    double at_roof = 1e6 / (g->dram_gbps * 1e9);
    cr_assert_float_eq(p.fixed, at_roof / (g->launch_us * 1e-6), 1e-9);
    cr_assert_float_eq(p.predicted, p.fixed, 1e-9);
    cr_assert_str_eq(p.limit, "launch");
}

Test(gpu_model, a_wave_of_one_block_drags_the_grid)
{
    rl_gpu_prediction p = on_h200(streaming(100, 1024), 132 * 8 + 1, 1e9);
    cr_assert_eq(p.waves, 2);
    cr_assert_lt(p.predicted, 0.8);
    cr_assert_str_eq(p.limit, "last wave");
}

Test(gpu_model, what_it_cannot_model_it_says)
{
    rl_gpu_spec ga102 = *rl_gpu_spec_by_slug("h200");
    ga102.sm = 86;
    rl_sass_loop l = streaming(100, 1024);
    l.tensor_fma = 4096;
    rl_gpu_launch launch = {.blocks = 1000, .threads = 256, .tensor_fma = 1e9, .kernels = 1};
    rl_gpu_prediction p = rl_gpu_predict(&ga102, &l, &LIGHT, &launch, true);
    cr_assert(isnan(p.predicted));
    cr_assert_str_eq(p.limit, "not modelled");
    rl_gpu_resources heavy = {300, 0, 0};
    p = rl_gpu_predict(rl_gpu_spec_by_slug("h200"), &l, &heavy, &launch, false);
    cr_assert_str_eq(p.limit, "does not fit an SM");
}

/* ---- make gpu-model on this build's kernels -------------------------------------------- */

static char dir[512];
static void setup_dir(void) { make_temp_dir(dir, sizeof dir); }
static void teardown_dir(void) { rm_tree(dir); }
TestSuite(gpu_model_build, .init = setup_dir, .fini = teardown_dir, .timeout = 240);

#ifdef RL_HAVE_CUDA /* a build without nvcc skips the tests that read them */
static char out[1 << 17], err[1 << 14];
#endif

/* The judged kernels of this build, by their own count, on H100 and H200. */
Test(gpu_model_build, every_judged_kernel_reaches_its_bar_on_h100_and_h200)
{
#ifndef RL_HAVE_CUDA
    cr_skip_test("a build without nvcc: no CUDA kernels to read");
#else
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && B='%s' SMS='90' LABEL=model RESULTS='%s/results' PLOTS='%s/plots' "
             "harness/ops/gpu-model.sh",
             RL_SOURCE_ROOT, RL_BUILD_DIR, dir, dir);
    int status = run_capture(cmd, out, sizeof out, err, sizeof err);
    if (status == 77)
        cr_skip_test("no cuobjdump and nvdisasm to be had (the toolkit lacks them, PyPI out of reach): %s", err);
    char csv[600];
    snprintf(csv, sizeof csv, "%s/results/model/gpu-model.csv", dir);
    cr_assert(file_exists(csv), "no CSV; exit %d\n%s\n%s", status, out, err);
    char *text = read_file(csv, NULL);
    cr_assert(strstr(text, "h100-sxm,90,07,attention_mbu"), "exp-07's decode judged on H100");
    cr_assert(strstr(text, "h200,90,08,moe_active_bytes"), "exp-08's MoE judged on H200");
    free(text);
    cr_assert_eq(status, 0, "a judged kernel below its bar on H100 or H200:\n%s%s", out, err);
#endif
}

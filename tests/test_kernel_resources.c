/*
 * test_kernel_resources.c -- the build's record of its CUDA kernels: the
 * occupancy rules (occupancy.c), the ptxas report read and tabled
 * (harness/ops/nvcc_res.sh --parse, harness/ops/kernel_resources.c) on a
 * fixture of real ptxas output, the CSV lines a run writes from the
 * table, and, in a build with nvcc, the build's own kernel-resources.txt
 * and compiled-in table with the dp4a decode kernels at two blocks per SM
 * or more.
 */
#include "helpers.h"
#include "internal.h"
#include "quant.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char out[1 << 16], err[1 << 14];

Test(occupancy, follows_cudas_register_thread_and_shared_memory_rules)
{
    /* 64 registers a thread: 32 warps an SM, so two blocks of 512, not four */
    rl_occupancy o = rl_occupancy_of(90, 64, 512, 0);
    cr_assert_eq(o.blocks, 2);
    cr_assert_str_eq(o.limit, "registers");
    cr_assert_eq(o.warps, 32);
    cr_assert_eq(o.max_warps, 64);
    cr_assert_eq(rl_occupancy_of(90, 58, 512, 0).blocks, 2, "58 round up to 64 a thread's warp share");
    cr_assert_eq(rl_occupancy_of(90, 40, 512, 0).blocks, 3, "48 warps");
    cr_assert_eq(rl_occupancy_of(90, 32, 512, 0).blocks, 4, "all 64 warps");
    cr_assert_str_eq(rl_occupancy_of(90, 32, 512, 0).limit, "threads");
    cr_assert_eq(rl_occupancy_of(75, 40, 512, 0).blocks, 2, "an sm_75 holds 1024 threads");
    cr_assert_eq(rl_occupancy_of(86, 32, 512, 0).blocks, 3, "an sm_86 holds 1536");
    cr_assert_eq(rl_occupancy_of(90, 16, 32, 0).blocks, 32, "at most 32 blocks");
    cr_assert_str_eq(rl_occupancy_of(90, 16, 32, 0).limit, "blocks");
    /* shared memory: 100 KiB blocks, with the 1 KiB the system keeps each */
    rl_occupancy s = rl_occupancy_of(90, 32, 256, 100 * 1024);
    cr_assert_eq(s.blocks, 2);
    cr_assert_str_eq(s.limit, "shared memory");
    cr_assert_eq(rl_occupancy_of(90, 53, 1024, 16896).blocks, 1, "tiled_gemm's 1024 threads");
    cr_assert_eq(rl_occupancy_of(90, 40, 0, 0).blocks, 0, "no launch bound, no block size");
    cr_assert_eq(rl_occupancy_of(61, 40, 512, 0).blocks, 0, "an SM the model does not know");
}

/* ---- the report read and tabled, on a fixture (no nvcc needed) ----------------------- */

static char dir[512];
static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(kernel_resources, .init = setup, .fini = teardown, .timeout = 120);

#define FIXTURES RL_SOURCE_ROOT "/tests/fixtures"

/* One line of text from at, its runs of spaces squeezed to one. */
static void line_at(const char *at, char *buf, size_t len)
{
    size_t n = 0;
    for (const char *p = at; *p && *p != '\n' && n + 1 < len; p++)
        if (!(*p == ' ' && n && buf[n - 1] == ' '))
            buf[n++] = *p;
    buf[n] = '\0';
}

/* The row of kernel (its short name) for sm in a kernel-resources.txt, squeezed
 * into buf; false when there is none. */
static bool row_of(const char *txt, const char *kernel, int sm, char *buf, size_t len)
{
    char want[128];
    snprintf(want, sizeof want, " %d %s ", sm, kernel);
    for (const char *line = txt; *line; line++) {
        line_at(line, buf, len);
        if (strstr(buf, want))
            return true;
        line = strchr(line, '\n');
        if (!line)
            break;
    }
    return false;
}

Test(kernel_resources, a_ptxas_report_becomes_the_table_and_the_harness_source)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p '%s/obj/kernels' && "
             "harness/ops/nvcc_res.sh --parse '%s/ptxas-resource-usage.log' '%s/kernels-sm90.ptx' "
             "> '%s/obj/kernels/quant.cu.o.res' && "
             "${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iharness -Ikernels "
             "harness/ops/kernel_resources.c harness/occupancy.c -o '%s/tool' -lm && "
             "'%s/tool' --obj '%s/obj' --txt '%s/k.txt' --c '%s/k.c' --nvcc 'nvcc 13.0, V13.0.88' "
             "'%s/obj/kernels/quant.cu.o.res' && "
             "${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -Iharness -Ikernels -c '%s/k.c' -o '%s/k.o'",
             RL_SOURCE_ROOT, dir, FIXTURES, FIXTURES, dir, dir, dir, dir, dir, dir, dir, dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s\n%s%s", cmd, out, err);
    char path[600];
    snprintf(path, sizeof path, "%s/k.txt", dir);
    char *txt = read_file(path, NULL);
    cr_assert_not_null(txt);
    cr_assert(strstr(txt, "nvcc 13.0, V13.0.88"), "%s", txt);
    static const struct { const char *kernel; int sm; const char *want; } ROWS[] = {
        /* regs stack spill smem bound min blocks occupancy limit */
        {"gemv_dp4a<q4_block, 1, false>", 90, "40 0 0 0 512 3 3 0.75 registers"},
        {"gemv_dp4a<q6_block, 1, false>", 90, "58 0 0 0 512 0 2 0.50 registers"},
        {"dequant_fp16<q4_block>", 90, "22 0 0 0 256 0 8 1.00 threads"},
        {"tiled_gemm", 90, "53 0 0 16896 0 0 - - no block size"},
        {"gemv_dp4a<q8_block, 1, false>", 80, "40 8 4 0 0 0 - -"},
    };
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        char line[512];
        cr_assert(row_of(txt, ROWS[i].kernel, ROWS[i].sm, line, sizeof line), "no %s for sm_%d in:\n%s",
                  ROWS[i].kernel, ROWS[i].sm, txt);
        cr_assert(strstr(line, ROWS[i].want), "%s: '%s', not '%s'", ROWS[i].kernel, line, ROWS[i].want);
        cr_assert(!strncmp(line, "kernels/quant.cu ", 17), "the object's source: %s", line);
    }
    free(txt);
    snprintf(path, sizeof path, "%s/k.c", dir);
    char *c = read_file(path, NULL);
    cr_assert(c && strstr(c, "{\"kernels/quant.cu\", \"gemv_dp4a<q4_block, 1, false>\", 90, 40, 0, 0, 0, "
                             "512, 3, 3, 48, 64, \"registers\"}"), "%s", c);
    free(c);
}

/* A run's header lines: the kernels of its families' .cu files, for its SM only. */
Test(kernel_resources, a_run_lists_its_families_kernels_for_its_sm)
{
    static const rl_kernel_resource TABLE[] = {
        {"kernels/quant.cu", "gemv_dp4a<q4_block, 1, false>", 90, 40, 0, 0, 0, 512, 3, 3, 48, 64, "registers"},
        {"kernels/quant.cu", "gemv_dp4a<q4_block, 1, false>", 80, 40, 0, 0, 0, 512, 3, 3, 48, 64, "registers"},
        {"kernels/gemv.cu", "gemv_vec<1, 8>", 90, 64, 0, 0, 0, 256, 0, 4, 32, 64, "registers"},
        {"kernels/fusion.cu", "chain<(fusion_op)0>", 90, 26, 32, 0, 0, 0, 0, 0, 0, 64, "no block size"},
        {0},
    };
    static const kernel_family *const FAMILIES[] = {&quant_family, NULL};
    const rl_experiment exp = {.id = "t", .families = FAMILIES};
    rl_meta_line lines[8];
    int n = rl_kernel_resources_lines(&exp, 90, TABLE, lines, 8);
    cr_assert_eq(n, 2, "quant.cu's and, for its F16 rows, gemv.cu's; not fusion's, not sm_80's");
    cr_assert_str_eq(lines[0].key, "kernel_resources_gemv_dp4a_q4_block_1_false");
    cr_assert(strstr(lines[0].value, "kernels/quant.cu sm_90: 40 registers") &&
                  strstr(lines[0].value, "launch bound 512 threads, min 3 blocks; 3 blocks per SM "
                                         "(48 of 64 warps), limited by registers"),
              "%s", lines[0].value);
    cr_assert_str_eq(lines[1].key, "kernel_resources_gemv_vec_1_8");
    cr_assert_eq(rl_kernel_resources_lines(&exp, 86, TABLE, lines, 8), 0, "no code for sm_86");
}

/* ---- the build's own record, where nvcc built the CUDA kernels -------------------------- */

/* Each dp4a kernel the decode launches (k a multiple of 2048: no tail) on
 * each SM the file has: its registers recorded, at least two blocks of
 * 512 per SM, three for one row of q8, q5 and q4 where the SM holds 1536
 * threads or more (quant.cu's launch bounds). */
Test(kernel_resources, the_build_records_its_dp4a_kernels_at_two_blocks_or_more)
{
#ifndef RL_HAVE_CUDA
    cr_skip_test("a build without nvcc has no CUDA kernels to record");
#else
    char *txt = read_file(RL_BUILD_DIR "/kernel-resources.txt", NULL);
    cr_assert_not_null(txt, "no " RL_BUILD_DIR "/kernel-resources.txt");
    int found = 0;
    for (const rl_kernel_resource *r = rl_kernel_resources; r->kernel; r++) {
        if (strncmp(r->kernel, "gemv_dp4a<", 10) || strstr(r->kernel, ", true>"))
            continue;
        found++;
        char line[512];
        cr_assert(row_of(txt, r->kernel, r->sm, line, sizeof line), "the table and the file agree: %s sm_%d",
                  r->kernel, r->sm);
        cr_assert_gt(r->registers, 0, "%s sm_%d", r->kernel, r->sm);
        cr_assert_eq(r->max_threads, 512, "%s sm_%d: its launch bound", r->kernel, r->sm);
        cr_assert_geq(r->blocks, 2, "%s sm_%d: %d registers, %d blocks per SM (%s)", r->kernel, r->sm,
                      r->registers, r->blocks, r->limit);
        bool three = strstr(r->kernel, ", 1, ") && !strstr(r->kernel, "q6_block") &&
                     !strstr(r->kernel, "q2_block") && rl_occupancy_of(r->sm, 1, 512, 0).blocks >= 3;
        if (three)
            cr_assert_geq(r->blocks, 3, "%s sm_%d: %d registers", r->kernel, r->sm, r->registers);
    }
    /* q8 and q4 at one and two rows, q6, q5 and q2 at one: 7 a built SM */
    cr_assert_geq(found, 7, "the dp4a kernels are recorded (%d rows)", found);
    cr_assert_eq(found % 7, 0, "7 a built SM, not %d", found);
    free(txt);
#endif
}

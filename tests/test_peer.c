/*
 * test_peer.c -- make peer-ggml's driver, harness/ops/peer-ggml.sh, with
 * stand-ins on both sides: an exp-03 that writes its --matrix rows to its
 * --rows-file (one time per round, from a counter) and a ggml tree whose CMake project
 * builds a test-backend-ops that prints a time per type. The driver builds
 * the stand-in, alternates the rounds, keeps the best of each side per
 * format and writes the CSV, the table and the chart; the same for the
 * attention (exp-07) and MoE (exp-08) drivers. Nothing is timed.
 */
#include "helpers.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(peer, .init = setup, .fini = teardown, .timeout = 300);

static void write_file(const char *rel, const char *text, bool exec)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = 0;
    cr_assert_eq(rl_mkdirs(path), 0, "%s", path);
    *slash = '/';
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    if (exec)
        cr_assert_eq(chmod(path, 0755), 0);
}

/* The stand-ins write their rows where --rows-file says, as the harness
 * does (a CSV: metadata, columns, rows), and print a console table whose
 * numbers and tuning lines differ: the drivers must read the file. */
#define ROWS_FILE_ARG "rows=; for a; do [ \"$prev\" = --rows-file ] && rows=$a; prev=$a; done\n"

/* Round 1 writes ours at 2x round 2's times: the best is round 2's. */
static const char FAKE_EXP03[] =
    "#!/bin/sh\n"
    "echo \"exp-03 $*\" >> \"$FAKE_DIR/calls\"\n"
    ROWS_FILE_ARG
    "tokens=; for a; do [ \"$before\" = --tokens ] && tokens=$a; before=$a; done\n"
    "n=$(cat \"$FAKE_DIR/ours-rounds\" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > \"$FAKE_DIR/ours-rounds\"\n"
    "f=$((3 - n)) # round 1: 2, round 2: 1\n"
    /* --tokens: the batch rows, M x 4 ms for F16, M x 1 ms for q4 (and a
     * fast q4 row that failed validation), M x 2 ms for the others */
    "if [ -n \"$tokens\" ]; then\n"
    "  { echo 'format,tokens,variant,time_us_median,validated'\n"
    "    for fmt in f16 q8 q6 q5 q4 q2; do for m in $(echo $tokens | tr , ' '); do\n"
    "      us=2000; [ $fmt = f16 ] && us=4000; [ $fmt = q4 ] && us=1000\n"
    "      echo \"$fmt,$m,gemm_int8,$((us * m * f)),yes\"\n"
    "    done; done; echo 'q4,1,gemm_int8,10,no'; } > \"$rows\"\n"
    "  exit 0\n"
    "fi\n"
    "echo 'tuning      q8 decode shape: 9 rows (printed, not the choice)'\n"
    "echo '  format  bits/w variant         ms/call      GB/s    x F16'\n"
    "echo '  q4         4.5 gemv_int8         0.001       1.0     1.00'\n"
    "[ -n \"$rows\" ] || exit 0 # --print-label\n"
    "{ echo '# experiment: 03-quant-decode'\n"
    "  echo '# tuning_q8_4096x14336_hot: 1 row 4096 B ahead (1 ms a call; cached x); avx2'\n"
    "  echo '# tuning_q8_4096x14336_hot_choice: 1 row 4096 B ahead'\n"
    "  echo '# tuning_q4_4096x14336_hot_choice: 2 rows no prefetch'\n"
    "  echo 'format,variant,time_us_median,validated'\n"
    "  for row in 'f16 gemv_dequant 4000' 'q8 gemv_dequant 9000' 'q8 gemv_int8 3000' 'q8 gemv_broken 100' \\\n"
    "             'q6 gemv_int8 2500' 'q5 gemv_int8 2000' 'q4 gemv_int8 1000' 'q2 gemv_int8 800'; do\n"
    "    set -- $row; ok=yes; [ $2 = gemv_broken ] && ok=no\n"
    "    echo \"$1,$2,$(($3 * f)),$ok\"\n"
    "  done; } > \"$rows\"\n";

/* ggml's stand-in: 2 ms for every type but q4_0 (4 ms) and q4_K (3 ms);
 * for FLASH_ATTN_EXT 9 ms, and only for the one decode shape its perf
 * cases have (an unknown shape prints no case, as ggml's filter does);
 * for MUL_MAT_ID 2.5 ms, for one shape (128 experts, top-8, n = 4). */
static const char FAKE_TBO[] =
    "#include <stdio.h>\n#include <string.h>\n"
    "int main(int argc, char **argv) {\n"
    /* --test-file: M ms a case (q4_0, type 2: M / 2 ms), named as ggml names them */
    "    if (argc > 5 && !strcmp(argv[4], \"--test-file\")) {\n"
    "        FILE *f = fopen(argv[5], \"r\");\n"
    "        int op, ot, rows, m, one, one2, np, ns, type, k;\n"
    "        char line[512];\n"
    "        while (f && fgets(line, sizeof line, f))\n"
    "            if (sscanf(line, \"%d %d %d %d %d %d %d %d %d %d\", &op, &ot, &rows, &m, &one, &one2,\n"
    "                       &np, &ns, &type, &k) == 10 && op == 29)\n"
    "                printf(\"  MUL_MAT(type=f32,ne=[%d,%d,1,1],op_params=[],sources=%s[%d,%d,1,1],\"\n"
    "                       \"f32[%d,%d,1,1]):     10 runs -  %.2f us/run -  1 kB/run\\n\", rows, m,\n"
    "                       type == 2 ? \"q4_0\" : type == 1 ? \"f16\" : \"other\", k, rows, k, m,\n"
    "                       (type == 2 ? 500.0 : 1000.0) * m);\n"
    "        printf(\"  Backend CPU: OK\\n\");\n"
    "        return f ? 0 : 1;\n"
    "    }\n"
    "    const char *p = argc > 7 ? argv[7] : \"\";\n"
    "    if (argc > 3 && !strcmp(argv[3], \"MUL_MAT_ID\")) {\n"
    "        if (!strcmp(p, \"type_a=f16,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=4,k=2048$\"))\n"
    "            printf(\"  MUL_MAT_ID(type_a=f16,...): 100 runs - 2500.00 us/run - 100 MFLOP/run\\n\");\n"
    "        printf(\"  Backend CPU: OK\\n\");\n"
    "        return 0;\n"
    "    }\n"
    "    if (argc > 3 && !strcmp(argv[3], \"FLASH_ATTN_EXT\")) {\n"
    "        if (!strcmp(p, \"hsk=64,hsv=64,nh=8,nr23=\\\\[8,1\\\\],kv=7680,nb=1,.*type_K=f16,type_V=f16\"))\n"
    "            printf(\"  FLASH_ATTN_EXT(hsk=64,...): 100 runs - 9000.00 us/run - 10 GFLOP/run\\n\");\n"
    "        printf(\"  Backend CPU: OK\\n\");\n"
    "        return 0;\n"
    "    }\n"
    "    double us = strstr(p, \"type_a=q4_0,\") ? 4000 : strstr(p, \"type_a=q4_K,\") ? 3000 : 2000;\n"
    "    printf(\"  MUL_MAT(%s...): 100 runs - %.2f us/run - 117 MFLOP/run\\n\", p, us);\n"
    "    printf(\"  Backend CPU: OK\\n\");\n"
    "    return 0;\n}\n";

static const char FAKE_CMAKE[] =
    "cmake_minimum_required(VERSION 3.10)\nproject(fake_ggml C)\n"
    "set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)\n"
    "add_executable(test-backend-ops tests/fake.c)\n";

/* exp-07 --shape's rows: 3 ms fused and 4 ms materialized in round 1,
 * 2 ms and 3 ms after (its printed table says otherwise). */
static const char FAKE_EXP07[] =
    "#!/bin/sh\n"
    "echo \"exp-07 $*\" >> \"$FAKE_DIR/calls\"\n"
    ROWS_FILE_ARG
    "n=$(cat \"$FAKE_DIR/ours07-rounds\" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > \"$FAKE_DIR/ours07-rounds\"\n"
    "f=$([ $n = 1 ] && echo 1000 || echo 0)\n"
    "echo '  phase   config   B   L|n variant                  time/us      GB/s'\n"
    "echo '  decode  shape    1  7680 decode_fused                1.00       7.1'\n"
    "{ echo 'phase,config,variant,time_us_median,validated'\n"
    "  echo \"prefill,shape,decode_fused,1,yes\"\n"
    "  echo \"decode,shape,decode_fused,$((2000 + f)),yes\"\n"
    "  echo \"decode,shape,decode_materialized,$((3000 + f)),yes\"; } > \"$rows\"\n";

/* exp-08 --moe-shape's rows: 3 ms in round 1, 2 ms after. */
static const char FAKE_EXP08[] =
    "#!/bin/sh\n"
    "echo \"exp-08 $*\" >> \"$FAKE_DIR/calls\"\n"
    ROWS_FILE_ARG
    "n=$(cat \"$FAKE_DIR/ours08-rounds\" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > \"$FAKE_DIR/ours08-rounds\"\n"
    "f=$([ $n = 1 ] && echo 1000 || echo 0)\n"
    "echo '  part      variant          routing     f top-k   B touched     time/us      GB/s'\n"
    "echo '  moe_batch moe_active       uniform     -     8   4    29.0        1.00      40.0'\n"
    "{ echo 'part,variant,time_us_median,validated'\n"
    "  echo \"moe_batch,moe_dense,1,yes\"\n"
    "  echo \"moe_batch,moe_active,$((2000 + f)),yes\"; } > \"$rows\"\n";

static int run_script(const char *script, const char *env)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "env B='%s/fakeb' FAKE_DIR='%s' GGML_SRC='%s/ggml' LABEL=peer RESULTS='%s/results' "
             "PLOTS='%s/plots' %s " RL_SOURCE_ROOT "/harness/ops/%s",
             dir, dir, dir, dir, dir, env, script);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

static int driver(const char *env) { return run_script("peer-ggml.sh", env); }

static void fake_trees(void)
{
    write_file("fakeb/exp-03", FAKE_EXP03, true);
    write_file("fakeb/exp-07", FAKE_EXP07, true);
    write_file("fakeb/exp-08", FAKE_EXP08, true);
    write_file("ggml/tests/test-backend-ops.cpp", "// the driver checks that this exists\n", false);
    write_file("ggml/tests/fake.c", FAKE_TBO, false);
    write_file("ggml/CMakeLists.txt", FAKE_CMAKE, false);
    /* The drivers write their CSVs through the real rooflab command and
     * read them back with it. */
    char tool[1024];
    snprintf(tool, sizeof tool, "%s/fakeb/rooflab", dir);
    cr_assert_eq(symlink(RL_BUILD_DIR "/rooflab", tool), 0, "%s", tool);
}

Test(peer, two_rounds_alternate_and_the_best_of_each_side_is_kept)
{
    if (system("command -v cmake >/dev/null 2>&1") != 0)
        cr_skip_test("no cmake: make peer-ggml builds ggml's test-backend-ops with it");
    fake_trees();
    cr_assert_eq(driver("ROUNDS=2"), 0, "%s\n%s", out, err);
    char path[1024];
    snprintf(path, sizeof path, "%s/calls", dir);
    char *calls = read_file(path, NULL);
    cr_assert_not_null(calls);
    cr_assert(strstr(calls, "--matrix 4096x14336 --cache hot --backend cpu --label peer"), "%s", calls);
    free(calls);

    snprintf(path, sizeof path, "%s/results/peer/peers.csv", dir);
    char *csv = read_file(path, NULL);
    cr_assert_not_null(csv, "peers.csv written:\n%s\n%s", out, err);
    cr_assert(strstr(csv, "# ours_tuning: q8 1 row 4096 B ahead;q4 2 rows no prefetch"), "%s", csv);
    cr_assert(strstr(csv, "# matrix: 4096x14336"), "%s", csv);
    cr_assert(strstr(csv, "\n# rounds: 2\n"), "the rounds as a key, for the chart: %s", csv);
    /* round 2's times (round 1 doubled them), the fastest variant per format */
    cr_assert(strstr(csv, "\nf16,gemv_fp16,4.000,f16,2.0000,2.000,"), "%s", csv);
    cr_assert(strstr(csv, "\nq8,gemv_int8,3.000,q8_0,2.0000,1.500,"), "%s", csv);
    cr_assert(strstr(csv, "\nq4,gemv_int8,1.000,q4_0,4.0000,0.250,q4_K,3.0000,2.000 1.000,"),
              "q4_K beside q4_0, and each round's time: %s", csv);
    cr_assert(strstr(csv, "\nq2,gemv_int8,0.800,q2_K,"), "%s", csv);
    free(csv);
    cr_assert(strstr(out, "| q4 | 1.00 | gemv_int8 | q4_0 | 4.00 | 0.25 (q4_K: 3.00 ms) |"), "%s", out);
    cr_assert(strstr(out, "round 1 ours  tuned: q8 1 row 4096 B ahead;q4 2 rows no prefetch"),
              "the tuner's choices: %s", out);
    const char *first_ggml = strstr(out, "round 2 ggml"), *second_ours = strstr(out, "round 2 ours");
    cr_assert(first_ggml && second_ours && first_ggml < second_ours, "round 2 starts with ggml");
    snprintf(path, sizeof path, "%s/plots/peer/peers.png", dir);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "the chart: %s\n%s", out, err);
    cr_assert_gt(st.st_size, 1000);
}

Test(peer, bad_settings_are_refused_with_a_reason)
{
    fake_trees();
    cr_assert_eq(driver("ROUNDS=0"), 2);
    cr_assert(strstr(err, "ROUNDS wants 1 to 10"), "%s", err);
    cr_assert_eq(driver("MATRIX=4096"), 2);
    cr_assert(strstr(err, "MATRIX wants ROWSxK"), "%s", err);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "env B='%s/fakeb' GGML_SRC='%s' " RL_SOURCE_ROOT
             "/harness/ops/peer-ggml.sh", dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "not a ggml tree"), "%s", err);
}

/* make peer-ggml-batch: ours at every M in one run (--matrix --tokens),
 * ggml's cases from a test file of its own format, the best of the rounds
 * per format and M, each side's speedup over its own F16. */
Test(peer, batch_rounds_keep_the_best_per_format_and_m)
{
    if (system("command -v cmake >/dev/null 2>&1") != 0)
        cr_skip_test("no cmake: make peer-ggml-batch builds ggml's test-backend-ops with it");
    fake_trees();
    cr_assert_eq(run_script("peer-ggml-batch.sh", "ROUNDS=2 TOKENS=1,2 FORMATS=q4"), 0, "%s\n%s",
                 out, err);
    char path[1024];
    snprintf(path, sizeof path, "%s/calls", dir);
    char *calls = read_file(path, NULL);
    cr_assert_not_null(calls);
    cr_assert(strstr(calls, "--matrix 4096x14336 --tokens 1,2 --cache hot --backend cpu --label peer"),
              "%s", calls);
    free(calls);
    /* ggml's case of q4_0 (type 2) at M = 2: 14336 / 32 blocks of 18 bytes a row */
    snprintf(path, sizeof path, "%s/fakeb/peer-ggml/batch-cases.txt", dir);
    char *cases = read_file(path, NULL);
    cr_assert_not_null(cases);
    cr_assert(strstr(cases, "29 0 4096 2 1 1 0 2 2 14336 4096 1 1 18 8064 33030144 33030144 "
                            "0 14336 2 1 1 4 57344 114688 114688 -\n"), "%s", cases);
    free(cases);
    snprintf(path, sizeof path, "%s/results/peer/peers-batch.csv", dir);
    char *csv = read_file(path, NULL);
    cr_assert_not_null(csv, "peers-batch.csv written:\n%s\n%s", out, err);
    /* round 2's times (round 1 doubled ours), the failed q4 row ignored;
     * speedups each over its own side's F16 at the same M */
    cr_assert(strstr(csv, "\nf16,2,8.0000,f16,2.0000,4.000,1.000,1.000,16.0000 8.0000,2.0000 2.0000\n"),
              "%s", csv);
    cr_assert(strstr(csv, "\nq4,1,1.0000,q4_0,0.5000,2.000,4.000,2.000,2.0000 1.0000,0.5000 0.5000\n"),
              "%s", csv);
    cr_assert_null(strstr(csv, "\nq8,"), "FORMATS=q4 leaves q8 out: %s", csv);
    free(csv);
    cr_assert(strstr(out, "| q4 | 2 | 2.000 | q4_0 | 1.000 | 2.00 | 4.00 | 2.00 |"), "%s", out);
    cr_assert_eq(run_script("peer-ggml-batch.sh", "TOKENS=1,x"), 2);
    cr_assert(strstr(err, "TOKENS wants ascending counts"), "%s", err);
    cr_assert_eq(run_script("peer-ggml-batch.sh", "FORMATS=q3"), 2);
    cr_assert(strstr(err, "FORMATS wants some of f16 q8 q6 q5 q4 q2, not 'q3'"), "%s", err);
}

/* make peer-ggml-attention: ours per shape (--shape), ggml's perf case of
 * the same shape by its regular expression, the best of the rounds. */
Test(peer, attention_rounds_keep_the_best_and_name_the_shape)
{
    if (system("command -v cmake >/dev/null 2>&1") != 0)
        cr_skip_test("no cmake: make peer-ggml-attention builds ggml's test-backend-ops with it");
    fake_trees();
    cr_assert_eq(run_script("peer-ggml-attention.sh", "ROUNDS=2"), 0, "%s\n%s", out, err);
    char path[1024];
    snprintf(path, sizeof path, "%s/calls", dir);
    char *calls = read_file(path, NULL);
    cr_assert_not_null(calls);
    cr_assert(strstr(calls, "--shape 1,64,8,64,7680 --cache hot --backend cpu --label peer"), "%s", calls);
    free(calls);
    snprintf(path, sizeof path, "%s/results/peer/peers-attention.csv", dir);
    char *csv = read_file(path, NULL);
    cr_assert_not_null(csv, "peers-attention.csv written:\n%s\n%s", out, err);
    /* round 2's times (round 1's were 1 ms slower), K and V 15 MiB, ggml's 9 ms */
    cr_assert(strstr(csv, "\n\"1,64,8,64,7680\",15.0,2.0000,3.0000,9.0000,0.222,3.0000 2.0000,9.0000 9.0000"),
              "%s", csv);
    free(csv);
    cr_assert(strstr(out, "| 1,64,8,64,7680 | 15.0 | 2.000 | 3.000 | 9.000 | 0.22 |"), "%s", out);
    /* a shape ggml has no perf case for is an error that says so */
    cr_assert_eq(run_script("peer-ggml-attention.sh", "ROUNDS=1 SHAPES=4,32,8,128,2048"), 2);
    cr_assert(strstr(err, "no FLASH_ATTN_EXT perf case of shape 4,32,8,128,2048"), "%s", err);
    cr_assert_eq(run_script("peer-ggml-attention.sh", "SHAPES=1,64"), 2);
    cr_assert(strstr(err, "SHAPES wants B,HQ,HKV,D,L"), "%s", err);
}

/* make peer-ggml-moe: ours per shape (--moe-shape), ggml's MUL_MAT_ID perf
 * case of the same shape, the best of the rounds. */
Test(peer, moe_rounds_keep_the_best_and_name_the_shape)
{
    if (system("command -v cmake >/dev/null 2>&1") != 0)
        cr_skip_test("no cmake: make peer-ggml-moe builds ggml's test-backend-ops with it");
    fake_trees();
    cr_assert_eq(run_script("peer-ggml-moe.sh", "ROUNDS=2 SHAPES=128,8,4,768,2048"), 0, "%s\n%s", out, err);
    char path[1024];
    snprintf(path, sizeof path, "%s/calls", dir);
    char *calls = read_file(path, NULL);
    cr_assert_not_null(calls);
    cr_assert(strstr(calls, "--moe-shape 128,8,4,768,2048 --cache hot --backend cpu --label peer"), "%s", calls);
    free(calls);
    snprintf(path, sizeof path, "%s/results/peer/peers-moe.csv", dir);
    char *csv = read_file(path, NULL);
    cr_assert_not_null(csv, "peers-moe.csv written:\n%s\n%s", out, err);
    /* round 2's time (round 1's was 1 ms slower); at most 32 experts of 3 MiB */
    cr_assert(strstr(csv, "\n\"128,8,4,768,2048\",96.0,2.0000,2.5000,0.800,3.0000 2.0000,2.5000 2.5000"),
              "%s", csv);
    free(csv);
    cr_assert(strstr(out, "| 128,8,4,768,2048 | 96.0 | 2.000 | 2.500 | 0.80 |"), "%s", out);
    cr_assert_eq(run_script("peer-ggml-moe.sh", "ROUNDS=1 SHAPES=128,8,2,768,2048"), 2);
    cr_assert(strstr(err, "no MUL_MAT_ID perf case of shape 128,8,2,768,2048"), "%s", err);
    cr_assert_eq(run_script("peer-ggml-moe.sh", "SHAPES=128,8"), 2);
    cr_assert(strstr(err, "SHAPES wants E,K,B,M,N"), "%s", err);
}

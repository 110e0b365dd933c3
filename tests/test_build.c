/*
 * test_build.c -- the build's own rules, checked without a GPU (nvcc only where noted):
 * the Makefile picks the newest SM numerically (its PTX is what newer GPUs
 * run) and takes sm_70 by default only where nvcc builds it, and check.h
 * refuses a CUDA runtime older than 12.
 */
#include "helpers.h"
#include "rl_backend.h" /* rl_cublas_resolve_all */

#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char out[1 << 14], err[1 << 14];

/* make print-VAR with SMS and a stand-in nvcc (nothing is compiled). */
static const char *make_print(const char *var, const char *sms)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "make -s --no-print-directory -C '%s' print-%s SMS='%s' NVCC=/bin/true",
             RL_SOURCE_ROOT, var, sms);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s: %s", cmd, err);
    return out;
}

Test(build, the_newest_sm_is_chosen_numerically)
{
    cr_assert_str_eq(make_print("NEWEST_SM", "90 100"), "100\n");
    cr_assert_str_eq(make_print("NEWEST_SM", "100 90"), "100\n");
    cr_assert_str_eq(make_print("NEWEST_SM", "75 80 86 89 90 100 120"), "120\n");
    cr_assert_str_eq(make_print("NEWEST_SM", "90"), "90\n");
}

Test(build, sms_90_100_embed_compute_100_ptx)
{
    const char *g = make_print("GENCODE", "90 100");
    cr_assert(strstr(g, "-gencode arch=compute_90,code=sm_90"), "%s", g);
    cr_assert(strstr(g, "-gencode arch=compute_100,code=sm_100"), "%s", g);
    cr_assert(strstr(g, "-gencode arch=compute_100,code=compute_100"), "the PTX of the newest: %s", g);
    cr_assert_null(strstr(g, "code=compute_90"), "no PTX of the older one: %s", g);
}

/* The default SMS with a stand-in nvcc whose --list-gpu-arch prints
 * archs (nothing is compiled), and given (SMS='...' or nothing) on the
 * command line; the outer make's variables are not passed down. */
static const char *default_sms(const char *archs, const char *given)
{
    char dir[512], nvcc[600], cmd[2048];
    make_temp_dir(dir, sizeof dir);
    snprintf(nvcc, sizeof nvcc, "%s/nvcc", dir);
    FILE *f = fopen(nvcc, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n[ \"$1\" = --list-gpu-arch ] && printf '%%s\\n' %s\n", archs);
    fclose(f);
    chmod(nvcc, 0755);
    snprintf(cmd, sizeof cmd,
             "env -u SMS -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory -C '%s' print-SMS NVCC='%s' %s",
             RL_SOURCE_ROOT, nvcc, given);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    rm_tree(dir);
    cr_assert_eq(rc, 0, "%s: %s", cmd, err);
    return out;
}

/* sm_70 (V100) is in the default SMS where nvcc builds it (CUDA 12 lists
 * compute_70) and not where it does not (CUDA 13 dropped it); a given SMS
 * is kept as given. */
Test(build, sm_70_joins_the_default_sms_where_nvcc_has_it)
{
    cr_assert_str_eq(default_sms("compute_70 compute_75 compute_80 compute_86 compute_89 compute_90", ""),
                     "70 75 80 86 89 90\n", "CUDA 12");
    cr_assert_str_eq(default_sms("compute_75 compute_80 compute_90 compute_100 compute_120", ""),
                     "75 80 86 89 90\n", "CUDA 13");
    cr_assert_str_eq(default_sms("compute_70 compute_75", "SMS='80 90'"), "80 90\n", "an SMS given");
}

/* make check-cuda12's script (CI runs it whole: a download and a build)
 * says what it proves and what not, and refuses what is not CUDA 12. */
Test(build, the_cuda_12_check_says_what_it_does_not_prove)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/harness/ops/cuda12-check.sh' --help", RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(out, "clang is not nvcc"), "%s", out);
    cr_assert(strstr(out, "nothing here runs"), "%s", out);
    snprintf(cmd, sizeof cmd, "CUDA12=11.8 '%s/harness/ops/cuda12-check.sh'", RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "not a CUDA 12 version"), "%s", err);
    snprintf(cmd, sizeof cmd, "'%s/harness/ops/clang-nvcc.sh' -c x.cu -o x.o --frobnicate", RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2, "an nvcc option it does not know");
    cr_assert(strstr(err, "option --frobnicate not known"), "%s", err);
}

/* check.h under nvcc (__CUDACC__) with a cuda_runtime.h of a given
 * version: preprocessed only, by cc. */
static int preprocess_check_h(const char *version)
{
    char dir[512], cmd[2048];
    make_temp_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd,
             "printf '#define CUDART_VERSION %s\\n' > '%s/cuda_runtime.h' && "
             "cc -E -D__CUDACC__ -I'%s' -x c '%s/harness/check.h' -o /dev/null",
             version, dir, dir, RL_SOURCE_ROOT);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    rm_tree(dir);
    return rc;
}

Test(build, cuda_older_than_12_is_refused_with_the_remedy)
{
    cr_assert_neq(preprocess_check_h("11080"), 0, "CUDA 11.8 must not build");
    cr_assert(strstr(err, "rooflab needs CUDA 12 or newer"), "%s", err);
    cr_assert(strstr(err, "NVCC=/usr/local/cuda-12.x/bin/nvcc"), "%s", err);
    cr_assert_eq(preprocess_check_h("12000"), 0, "CUDA 12.0 builds: %s", err);
    cr_assert_eq(preprocess_check_h("13000"), 0, "CUDA 13.0 builds: %s", err);
}

/* tests/cuda-loads.sh: one lane of the CUDA decode loads at most 16 bytes
 * per block row in every format (PTX from nvcc; no GPU needed). */
Test(build, cuda_decode_lane_loads_at_most_16_bytes_per_block_row, .timeout = 300)
{
    char dir[256], cmd[1024];
    make_temp_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "cd '%s' && tests/cuda-loads.sh '%s'", RL_SOURCE_ROOT, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    rm_tree(dir);
    if (rc == 77)
        cr_skip_test("%s", out);
    cr_assert_eq(rc, 0, "%s\n%s%s", cmd, out, err);
    for (const char *f = "q8\0q6\0q5\0q4\0q2\0"; *f; f += strlen(f) + 1) {
        char row[8];
        snprintf(row, sizeof row, "\n%s ", f);
        cr_assert(strstr(out, row), "no row for %s in:\n%s", f, out);
    }
}

/* The disassembly of source as built for -march, compiled once per test
 * for each source and -march it asks about (each compile takes most of a
 * second; a test asks several questions of one object). */
typedef struct disassembly {
    char source[128], march[32];
    char *text;
} disassembly;
static disassembly built[4];
static int nbuilt;

static const char *disassemble(const char *source, const char *march)
{
    for (int i = 0; i < nbuilt; i++)
        if (!strcmp(built[i].source, source) && !strcmp(built[i].march, march))
            return built[i].text;
    cr_assert_lt(nbuilt, 4, "more objects than the cache holds");
    char cmd[1024], dir[256];
    make_temp_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && ${CC:-cc} -std=c11 -O2 -march=%s -fopenmp -Wall -Wextra -Wno-psabi -Werror -D_GNU_SOURCE "
             "-Iharness -Ikernels -c %s -o '%s/q.o' 2>'%s/cc.log' && objdump -d '%s/q.o'",
             RL_SOURCE_ROOT, march, source, dir, dir, dir);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    size_t len = 0, cap = 1 << 20;
    char *text = malloc(cap);
    for (size_t got; (got = fread(text + len, 1, cap - len - 1, p)) > 0;)
        if ((len += got) == cap - 1)
            text = realloc(text, cap *= 2);
    text[len] = '\0';
    int rc = pclose(p);
    char log[700];
    snprintf(log, sizeof log, "%s/cc.log", dir);
    char *cc = read_file(log, NULL);
    cr_assert_eq(rc, 0, "%s\n%s", cmd, cc ? cc : "");
    cr_assert(!cc || (!strstr(cc, "error") && !strstr(cc, "warning")), "-march=%s: %s", march, cc);
    free(cc);
    rm_tree(dir);
    built[nbuilt] = (disassembly){.text = text};
    snprintf(built[nbuilt].source, sizeof built[nbuilt].source, "%s", source);
    snprintf(built[nbuilt].march, sizeof built[nbuilt].march, "%s", march);
    return built[nbuilt++].text;
}

/* The lines of the disassembly that match insn (a basic regular
 * expression, as grep -c counts them). */
static int count_in_object(const char *source, const char *march, const char *insn)
{
    regex_t re;
    cr_assert_eq(regcomp(&re, insn, REG_NOSUB), 0, "bad pattern %s", insn);
    int n = 0;
    for (const char *line = disassemble(source, march); *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        n += regexec(&re, buf, 0, NULL, 0) == 0;
        line += len + (eol != NULL);
    }
    regfree(&re);
    return n;
}

/* The integer-dot decode's VNNI paths: a machine runs one of them at
 * most (a 2-core Zen 4 EPYC runs AVX-512 VNNI; the AVX2-only machines
 * neither), so each is at least built as an AVX-VNNI and an AVX-512 VNNI
 * compiler would build it, and must use vpdpbusd (the #if that picks it
 * is checked), while the AVX2 build must not. */
Test(build, the_vnni_decode_paths_build_and_use_vpdpbusd)
{
    static const char *const Q = "kernels/cpu/quant_dot_avx2.c";
    cr_assert_gt(count_in_object(Q, "alderlake", "vpdpbusd"), 0, "AVX-VNNI: no vpdpbusd");
    cr_assert_gt(count_in_object(Q, "icelake-server", "vpdpbusd"), 0, "AVX-512 VNNI: no vpdpbusd");
    cr_assert_eq(count_in_object(Q, "haswell", "vpdpbusd"), 0, "AVX2 has no vpdpbusd");
    cr_assert_gt(count_in_object(Q, "haswell", "vpmaddubsw"), 0, "AVX2: maddubs");
    /* q2's block on 512-bit registers where AVX-512 is there, on 256 elsewhere */
    cr_assert_gt(count_in_object(Q, "icelake-server", "vpdpbusd.*zmm"), 0, "AVX-512 VNNI: no 512-bit q2");
    cr_assert_eq(count_in_object(Q, "alderlake", "vpdpbusd.*zmm"), 0, "AVX-VNNI has no zmm");
}

/* The loops of the one-row integer decodes (rows_simd_q*_1), as make
 * cpu-loops (harness/ops/cpu-loops.sh) prints them for a -march: one
 * compile for every function, into out. */
static void decode_loops(const char *march)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && harness/ops/cpu-loops.sh kernels/cpu/quant_dot_avx2.c "
             "'rows_simd_q.*_1' '%s'", RL_SOURCE_ROOT, march);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s\n%s", cmd, err);
}

/* The prefetches in the innermost arithmetic loop of one function, in
 * decode_loops' listing (out). */
static int prefetches_in_block_loop(const char *function)
{
    char head[128];
    snprintf(head, sizeof head, "\n%s:\n", function);
    const char *at = strstr(out, head);
    cr_assert_not_null(at, "no %s in:\n%s", function, out);
    for (const char *l = strstr(at + 1, "\n  loop "); l && l[1] == ' '; l = strstr(l + 1, "\n")) {
        const char *eol = strchr(l + 1, '\n'), *holds = strstr(l, "holds a loop");
        int n = 0, prefetches = 0;
        if ((!holds || (eol && holds > eol)) && sscanf(l, "\n  loop at +0x%*x: %d instructions, %d prefetch", &n, &prefetches) == 2)
            return prefetches;
    }
    cr_assert_fail("%s: every arithmetic loop holds a loop (the prefetches a loop of their own?):\n%s", function, out);
    return -1;
}

/* The integer decode asks for each block's lines ahead with one prefetch
 * a 64-byte line, unrolled: the block's size is a constant of each
 * format's function. Read from quant_formats[] (another file), it ran as
 * a loop of four instructions a line, 15-24 % of a block's instructions.
 * One row a step: q8's 272 bytes take five lines' prefetches, q2's 84 two. */
Test(build, the_decode_prefetches_each_line_of_a_block_without_a_loop)
{
    static const struct { const char *function; int lines; } ROWS1[] = {
        {"rows_simd_q8_1", 5}, {"rows_simd_q6_1", 4}, {"rows_simd_q5_1", 3},
        {"rows_simd_q4_1", 3}, {"rows_simd_q2_1", 2}};
    for (const char *march = "haswell\0icelake-server\0"; *march; march += strlen(march) + 1) {
        decode_loops(march);
        for (size_t i = 0; i < sizeof ROWS1 / sizeof ROWS1[0]; i++)
            cr_assert_geq(prefetches_in_block_loop(ROWS1[i].function), ROWS1[i].lines,
                          "%s (-march=%s): fewer than %d prefetches in its block loop, one a line",
                          ROWS1[i].function, march, ROWS1[i].lines);
    }
}

/* The F16 GEMV converts 16 halves per instruction where the build targets
 * AVX-512 (half the conversions of 8-lane steps: what bound it in cache),
 * and fuses its multiply-add wherever FMA is there (ISO C does not
 * contract a * b + c on its own). */
Test(build, the_fp16_gemv_takes_the_widest_vectors_and_fuses_its_multiply_add)
{
    static const char *const G = "kernels/cpu/gemv.c";
    cr_assert_gt(count_in_object(G, "icelake-server", "vcvtph2ps.*zmm"), 0, "AVX-512: no 16-half conversion");
    cr_assert_gt(count_in_object(G, "icelake-server", "vfmadd...ps.*zmm"), 0, "AVX-512: no 16-lane FMA");
    cr_assert_eq(count_in_object(G, "haswell", "zmm"), 0, "AVX2 has no zmm");
    cr_assert_gt(count_in_object(G, "haswell", "vfmadd...ps.*ymm"), 0, "FMA: the multiply-add is not fused");
}

/* The vector cos (cpu/vmath.h) on 16 lanes where the build targets
 * AVX-512 (zmm registers, the clamp in one vrangeps) and on 8 elsewhere;
 * test_vmath.c and test_vmath_8_lanes.c check the arithmetic of both. */
Test(build, the_vector_cos_takes_the_widest_vectors_the_build_targets)
{
    static const char *const F = "kernels/cpu/fusion.c";
    cr_assert_gt(count_in_object(F, "icelake-server", "zmm"), 0, "AVX-512: no 16-lane code");
    cr_assert_gt(count_in_object(F, "icelake-server", "vrangeps"), 0, "AVX-512DQ: no vrangeps clamp");
    cr_assert_eq(count_in_object(F, "haswell", "zmm"), 0, "AVX2 has no zmm");
    cr_assert_gt(count_in_object(F, "haswell", "ymm"), 0, "AVX2: 8 lanes in ymm");
    /* a portable build (CPU_ARCH=-march=x86-64): the generic code, no AVX */
    cr_assert_eq(count_in_object(F, "x86-64", "ymm"), 0, "x86-64 has no AVX");
}

/* The GPU's integer-dot decode, read from its SASS for sm_90 (make sass:
 * cuobjdump, from PyPI's wheels where the toolkit lacks it; no GPU): the
 * loop of one row per warp without a tail costs, per weight and lane, at
 * most about a fifth more than it did when it was written (q8 1.3, q4 1.8,
 * q5 2.8, q6 4.3, q2 4.5 with nvcc 13.0), well under the 2.9 to 6.9 of the
 * loop that stalled on its loads. A loop of 8 blocks x 8 weights per lane. */
Test(build, the_dp4a_decode_loop_stays_within_its_instruction_budget, .timeout = 300)
{
    static const struct { const char *format; double most; } BUDGET[] = {
        {"q8", 1.6}, {"q4", 2.2}, {"q5", 3.4}, {"q6", 5.2}, {"q2", 5.4}};
    static char sass[1 << 16];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && B='%s' harness/ops/sass.sh 'gemv_dp4aI8q[0-9]_blockLi1ELb0' 90",
             RL_SOURCE_ROOT, RL_BUILD_DIR);
    int rc = run_capture(cmd, sass, sizeof sass, err, sizeof err);
    if (rc == 77)
        cr_skip_test("no cuobjdump to be had: %s", err);
    if (rc == 2 && strstr(err, "no CUDA objects"))
        cr_skip_test("a build without CUDA: %s", err);
    cr_assert_eq(rc, 0, "%s\n%s", cmd, err);
    for (size_t i = 0; i < sizeof BUDGET / sizeof BUDGET[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "gemv_dp4aI8%s_block", BUDGET[i].format);
        const char *at = strstr(sass, name), *loop = NULL;
        cr_assert_not_null(at, "no %s kernel in:\n%s", BUDGET[i].format, sass);
        const char *next = strstr(at, "\n_Z"); /* the next kernel's section */
        /* the dot loop: the one with the 16 dp4a of its 8 blocks */
        for (const char *l = strstr(at, "\n  loop "); l && (!next || l < next) && !loop;
             l = strstr(l + 1, "\n  loop ")) {
            const char *eol = strchr(l + 1, '\n'), *idp = strstr(l, "IDP 16");
            if (idp && (!eol || idp < eol))
                loop = l;
        }
        cr_assert_not_null(loop, "%s: no loop with 16 IDP in:\n%s", BUDGET[i].format, at);
        int n = atoi(strstr(loop, ": ") + 2);
        cr_log_info("%s: %d instructions per 64 weights: %.2f per weight", BUDGET[i].format, n, n / 64.0);
        cr_assert_leq(n / 64.0, BUDGET[i].most, "%s: %.2f instructions per weight and lane (budget %.1f)",
                      BUDGET[i].format, n / 64.0, BUDGET[i].most);
    }
}

/* The layers (README, Layout): the measurement core (harness/, its files) includes
 * nothing of the report or ops layers and calls none of the plot driver's
 * functions; only harness/report/experiment_main.c hands the driver to it. */
Test(build, the_core_includes_and_calls_nothing_of_the_report_or_ops_layers)
{
    char cmd[2048], out[4096], err[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && grep -nE '#include \"(\\.\\./)?(report|ops)/|rl_draw|rl_have_gnuplot|"
             "rl_gnuplot_charts' harness/*.c harness/*.h harness/*.cu harness/probes/*",
             RL_SOURCE_ROOT);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 1, "the core reaches into the report or ops layer:\n%s%s", out, err);
    /* ... and the check itself finds such a line where there is one */
    snprintf(cmd, sizeof cmd, "cd '%s' && grep -cE 'rl_draw|rl_gnuplot_charts' "
             "harness/report/experiment_main.c harness/report/plot.h", RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0);
}

/* cuBLAS and cuBLASLt are opened at their first call, not linked
 * (cublas_loader.cu): no binary loads them at start-up (the grep matches
 * libcublasLt too), and every function the code calls is found in the
 * libraries of the toolkit it was built against. */
Test(build, cublas_is_opened_when_called_not_linked)
{
#ifdef RL_HAVE_CUDA
    char why[600], cmd[1024];
    cr_assert(rl_cublas_resolve_all(why, sizeof why), "%s", why);
    cr_assert(strstr(why, "libcublas.so."), "%s", why);
    cr_assert(strstr(why, "libcublasLt.so."), "%s", why);
    snprintf(cmd, sizeof cmd, "ldd '%s/exp-05' '%s/exp-09' | grep -c cublas || true", RL_BUILD_DIR,
             RL_BUILD_DIR);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(atoi(out), 0, "exp-05 or exp-09 (cuBLASLt) links cuBLAS at start-up:\n%s", out);
#else
    cr_skip_test("a build without nvcc has no cuBLAS");
#endif
}

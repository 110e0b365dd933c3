/*
 * test_blas.c -- the library GEMM runs the kernels of this CPU's
 * instruction set. OpenBLAS picks its kernels by the CPU model it knows;
 * Debian's 0.3.21 took an Emerald Rapids class Xeon for "Prescott" and ran
 * SSE3 code at a quarter of its speed (backend_cpu.c). An experiment then
 * asks for the kernels of the CPU's instruction set, and says so; a core
 * the user gives is kept.
 */
#include "helpers.h"
#include "rooflab.h"

#include <cblas.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXP05 RL_BUILD_DIR "/exp-05"

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(blas, .init = setup, .fini = teardown, .timeout = 300);

/* The '# openblas_core: ' line of a small run of experiment 05, started
 * with the environment prefix env_words. */
static void core_line(const char *env_words, char *line, size_t len)
{
    char bin[1024], path[1024];
    snprintf(bin, sizeof bin, "env %s %s", env_words, EXP05);
    int rc = run_experiment(bin, dir, "--quick --backend cpu --op affine --variant 1 --no-plot --label b",
                            out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "exit %d\n%s", rc, err);
    snprintf(path, sizeof path, "%s/results/b/exp-05.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no CSV at %s", path);
    const char *at = strstr(text, "# openblas_core: ");
    cr_assert_not_null(at, "no openblas_core line in the header");
    snprintf(line, len, "%.*s", (int)strcspn(at, "\n"), at);
    free(text);
    cr_assert(strstr(out, "library     OpenBLAS "), "the run says which kernels: %s", out);
}

static bool names_an_avx2_core(const char *line)
{
    static const char *const cores[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                        "SapphireRapids", "Excavator"};
    for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++) {
        char kernels[64];
        snprintf(kernels, sizeof kernels, "OpenBLAS %s kernels", cores[i]);
        if (strstr(line, kernels))
            return true;
    }
    return false;
}

Test(blas, a_cpu_with_avx2_gets_kernels_of_its_instruction_set)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
        cr_skip_test("this CPU has no AVX2 and FMA: OpenBLAS's oldest kernels are its own");
    char line[512];
    core_line("-u OPENBLAS_CORETYPE", line, sizeof line);
    cr_assert(names_an_avx2_core(line), "%s", line);
#else
    cr_skip_test("the kernel sets checked here are x86-64's");
#endif
}

Test(blas, a_core_the_user_gives_is_kept)
{
#if defined(__x86_64__)
    char line[512];
    core_line("OPENBLAS_CORETYPE=Prescott", line, sizeof line);
    cr_assert(strstr(line, "OpenBLAS Prescott kernels (OPENBLAS_CORETYPE=Prescott, given)"), "%s",
              line);
#else
    cr_skip_test("Prescott is an x86-64 kernel set");
#endif
}

/* A library told to run narrower vectors than the CPU's is named as such,
 * with its kernels and why (exp-02's compute-bound premise reads it);
 * one of the CPU's own width never is. */
Test(blas, kernels_narrower_than_the_cpu_are_named)
{
#if defined(__x86_64__)
    char why[256] = "";
    bool narrower = rl_cpu_blas_narrower(why, sizeof why);
    const char *core = openblas_get_corename();
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f"))
        cr_assert_not(narrower, "a CPU without AVX-512 has no wider vectors than %s's: %s", core, why);
    else if (!strcasecmp(core, "SkylakeX") || !strcasecmp(core, "Cooperlake") ||
             !strcasecmp(core, "SapphireRapids"))
        cr_assert_not(narrower, "%s kernels are AVX-512's: %s", core, why);
    else {
        cr_assert(narrower, "%s kernels on a CPU with AVX-512", core);
        cr_assert(strstr(why, core) && strstr(why, "without AVX-512"), "%s", why);
    }
#else
    cr_skip_test("the kernel sets checked here are x86-64's");
#endif
}

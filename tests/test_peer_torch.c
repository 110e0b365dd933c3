/*
 * test_peer_torch.c -- make peer-torch-layer's driver,
 * harness/ops/peer-torch-layer.sh, and its Python script, without torch and
 * without the network: --help answers, bad settings are refused with a
 * reason before anything is installed (nothing is made), and an
 * interpreter that cannot make the virtual environment is a skip (77) that
 * leaves no half-made environment behind.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRIPT RL_SOURCE_ROOT "/harness/ops/peer-torch-layer.sh"

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(peer_torch, .init = setup, .fini = teardown, .timeout = 60);

/* The driver with env, its environment and output in dir. */
static int driver(const char *env, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "env B='%s/b' TORCH_VENV='%s/venv' OUT='%s/out' %s %s %s", dir, dir, dir,
             env, SCRIPT, args);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

Test(peer_torch, help_names_the_settings)
{
    cr_assert_eq(driver("", "--help"), 0, "%s", err);
    static const char *const words[] = {"BATCH=1 SEQ=512", "CONFIGS", "MODES", "TORCH_VENV",
                                        "TORCH_WHEEL", "Exit codes", "77"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        cr_expect(strstr(out, words[i]), "--help names %s:\n%s", words[i], out);
    cr_expect_null(strstr(out, "set -uo"), "the help ends before the code");
}

Test(peer_torch, bad_settings_are_refused_before_anything_is_installed)
{
    static const char *const cases[][2] = {
        {"SEQ=abc", "SEQ wants a whole number 1 to 8192, not 'abc'"},
        {"SEQ=0", "SEQ wants a whole number"},
        {"BATCH=-1", "BATCH wants a whole number 1 to 64, not '-1'"},
        {"RUNS=1.5", "RUNS wants a whole number"},
        {"THREADS=x", "THREADS wants a whole number"},
        {"CONFIGS=gpt2", "CONFIGS wants some of bert llama, not 'gpt2'"},
        {"CONFIGS=' '", "CONFIGS wants some of bert llama, not nothing"},
        {"MODES='eager jit'", "MODES wants some of eager compile, not 'jit'"},
        {"TORCH_WHEEL=/nonexistent/torch.whl", "no such file"},
        {"TORCH_WHEEL=torch.tar.gz", "TORCH_WHEEL wants a .whl file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(driver(cases[i][0], ""), 2, "%s: %s", cases[i][0], err);
        cr_expect(strstr(err, cases[i][1]), "%s says '%s': %s", cases[i][0], cases[i][1], err);
    }
    cr_expect_eq(driver("", "--seq 5"), 2, "arguments are refused: settings are variables");
    cr_expect_eq(count_entries(dir, "venv"), 0, "nothing was installed");
    cr_expect_eq(count_entries(dir, "out"), 0, "nothing was written");
}

Test(peer_torch, no_way_to_make_the_environment_is_a_skip_that_leaves_nothing)
{
    cr_assert_eq(driver("PYTHON=false", ""), 77, "%s\n%s", out, err);
    cr_expect(strstr(err, "skipped: 'false -m venv' failed"), "%s", err);
    char venv[600];
    snprintf(venv, sizeof venv, "%s/venv", dir);
    cr_expect_not(file_exists(venv), "no half-made environment");
    cr_expect_eq(count_entries(dir, "out"), 0, "nothing was written");
}

/* The Python script parses its arguments before it imports torch. */
Test(peer_torch, the_python_script_refuses_bad_arguments_without_torch)
{
    if (system("command -v python3 >/dev/null 2>&1") != 0)
        cr_skip_test("no python3");
    const char *py = "python3 " RL_SOURCE_ROOT "/harness/ops/peer_torch_layer.py";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --help", py);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_expect(strstr(out, "contraction") && strstr(out, "normalization") && strstr(out, "data movement"),
              "--help says which op goes in which class:\n%s", out);
    snprintf(cmd, sizeof cmd, "%s --seq abc", py);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2);
    cr_expect(strstr(err, "wants a whole number 1 to 8192, not 'abc'"), "%s", err);
    snprintf(cmd, sizeof cmd, "%s --configs bert gpt2", py);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2);
    cr_expect(strstr(err, "invalid choice: 'gpt2'"), "%s", err);
}

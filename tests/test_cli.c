/*
 * test_cli.c -- the command line every experiment shares: defaults, each
 * option, and bad input rejected with exit code 2 and a clear message.
 */
#include "rl_process.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

static const char *op = "all";
static const char *flag = NULL;
static const rl_option EXTRA[] = {
    {"op", "OP", "the op", "cos|affine|all", &op},
    {"fast", NULL, "a flag", NULL, &flag},
    {0},
};

static int parse(rl_args *a, int argc, const char **argv)
{
    op = "all";
    flag = NULL;
    return rl_parse_args(argc, (char **)argv, EXTRA, a);
}

#define ARGV(...) ((const char *[]){"exp-xx", __VA_ARGS__})
#define ARGC(...) ((int)(sizeof((const char *[]){"exp-xx", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(a, ...) parse(a, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

Test(cli, defaults)
{
    rl_args a;
    const char *argv[] = {"exp-xx"};
    cr_assert_eq(parse(&a, 1, argv), 0);
    cr_assert_eq(a.backend, RL_BACKEND_AUTO);
    cr_assert_not(a.quick);
    cr_assert_str_eq(a.out_dir, "results");
    cr_assert_str_eq(a.plots_dir, "plots");
    cr_assert_null(a.label);
    cr_assert_eq(a.seed, 1);
    cr_assert_eq(a.device, 0);
    cr_assert_str_eq(op, "all");
}

Test(cli, every_common_option)
{
    rl_args a;
    cr_assert_eq(PARSE(&a, "--backend", "cpu", "--quick", "--out", "/tmp/r", "--plots=/tmp/p",
                       "--label", "reference/h200", "--variant", "1,cos", "--device", "3",
                       "--seed=42", "--cache", "cold", "--no-plot", "--list", "--plan-file",
                       "/tmp/p.plan"),
                 0);
    cr_assert_eq(a.backend, RL_BACKEND_CPU);
    cr_assert(a.quick && a.no_plot && a.list && a.cache_given);
    cr_assert_str_eq(a.out_dir, "/tmp/r");
    cr_assert_str_eq(a.plots_dir, "/tmp/p");
    cr_assert_str_eq(a.label, "reference/h200");
    cr_assert_str_eq(a.variants, "1,cos");
    cr_assert_eq(a.device, 3);
    cr_assert_eq(a.seed, 42);
    cr_assert_eq(a.cache, RL_COLD);
    cr_assert_str_eq(a.plan_file, "/tmp/p.plan");
}

Test(cli, experiment_options_and_flags)
{
    rl_args a;
    cr_assert_eq(PARSE(&a, "--op", "affine", "--fast"), 0);
    cr_assert_str_eq(op, "affine");
    cr_assert_str_eq(flag, "1");
    cr_assert_eq(PARSE(&a, "--op=cos"), 0);
    cr_assert_str_eq(op, "cos");
}

/* Each bad command line returns 2 and names the problem on stderr. */
static void assert_rejected(int argc, const char **argv, const char *needle)
{
    rl_args a;
    cr_assert_eq(parse(&a, argc, argv), RL_EXIT_USAGE, "accepted: %s", argv[1]);
    fflush(stderr);
    char buf[4096] = "";
    FILE *f = cr_get_redirected_stderr();
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    cr_assert(strstr(buf, needle), "stderr should mention '%s': %s", needle, buf);
    cr_assert(strstr(buf, "--help"), "stderr should point to --help: %s", buf);
}

Test(cli, unknown_option, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--bogus"), ARGV("--bogus"), "unknown option '--bogus'");
}

Test(cli, missing_value, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--out"), ARGV("--out"), "--out needs a value");
}

Test(cli, forgotten_value_is_not_taken_from_the_next_option, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--out", "--quick"), ARGV("--out", "--quick"), "--out needs a value");
}

Test(cli, bad_backend, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--backend", "tpu"), ARGV("--backend", "tpu"), "'tpu'");
}

Test(cli, bad_numbers, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--device", "x1"), ARGV("--device", "x1"), "bad --device");
}

Test(cli, negative_seed, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--seed", "-3"), ARGV("--seed", "-3"), "bad --seed");
}

Test(cli, labels_cannot_escape_the_results_folder, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--label", "../etc"), ARGV("--label", "../etc"), "bad --label");
}

Test(cli, label_with_spaces, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--label", "my run"), ARGV("--label", "my run"), "bad --label");
}

Test(cli, choices_are_enforced, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--op", "tan"), ARGV("--op", "tan"), "cos|affine|all");
}

Test(cli, flags_take_no_value, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("--quick=yes"), ARGV("--quick=yes"), "--quick takes no value");
}

Test(cli, stray_argument, .init = cr_redirect_stderr)
{
    assert_rejected(ARGC("quick"), ARGV("quick"), "unexpected argument 'quick'");
}

Test(cli, sizes)
{
    size_t n;
    cr_assert(rl_parse_size("4096", &n) && n == 4096);
    cr_assert(rl_parse_size("64Ki", &n) && n == 65536);
    cr_assert(rl_parse_size("3M", &n) && n == 3000000);
    cr_assert(rl_parse_size("1Gi", &n) && n == 1073741824);
    cr_assert(rl_parse_size("2^20", &n) && n == 1048576);
    cr_assert_not(rl_parse_size("12x", &n));
    cr_assert_not(rl_parse_size("-5", &n));
    cr_assert_not(rl_parse_size("", &n));
    cr_assert_not(rl_parse_size("2^99", &n));
}

/* --timeout caps each point's sampling (the mode's rule otherwise). */
Test(cli, timeout_takes_seconds)
{
    rl_args a;
    cr_assert_eq(PARSE(&a, "--quick", "--timeout", "0.05"), 0);
    cr_assert_float_eq(a.timeout_s, 0.05, 1e-12);
    cr_assert_eq(PARSE(&a, "--quick"), 0);
    cr_assert_eq(a.timeout_s, 0, "none given: the mode's");
    const char *bad[] = {"0", "-1", "0.0001", "5000", "fast", "1s", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_redirect_stderr();
        cr_assert_eq(PARSE(&a, "--timeout", bad[i]), RL_EXIT_USAGE, "--timeout '%s'", bad[i]);
    }
}

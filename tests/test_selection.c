/*
 * test_selection.c -- a bad selection is a usage error found before any
 * work, in every experiment: exit code 2, the valid values on stderr, no
 * ceiling measured and no CSV written.
 */
#include "helpers.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(selection, .init = setup, .fini = teardown, .timeout = 120);

/* Each experiment, with one bad value of its own option and what a valid
 * value looks like in the error message. */
static const struct {
    const char *id, *bad_option, *valid_hint;
} EXPERIMENTS[] = {
    {"01", "--sweep d", "a|b|c|all"},
    {"02", "--shape 4096x4096", "4096x14336|8192x8192|all"},
    {"03", "--layers 0", "1..32 or auto"},
    {"04", "--part waves", "staircase|library|vocab|all"},
    {"05", "--op tan", "cos|affine|all"},
    {"06", "--test nothing", "chain|size|doubling|all"},
};

static int run_bad(const char *id, const char *args)
{
    char bin[512];
    snprintf(bin, sizeof bin, "%s/exp-%s", RL_BUILD_DIR, id);
    return run_experiment(bin, dir, args, out, sizeof out, err, sizeof err);
}

static void assert_nothing_done(const char *id, const char *args)
{
    char csv[1024];
    snprintf(csv, sizeof csv, "%s/results/bad/exp-%s.csv", dir, id);
    cr_assert_not(file_exists(csv), "exp-%s %s wrote %s", id, args, csv);
    cr_assert_null(strstr(out, "ceilings    "), "exp-%s %s measured before failing:\n%s", id, args, out);
    cr_assert_eq(temp_files_left(dir, "bad"), 0, "exp-%s %s left temporary files", id, args);
}

Test(selection, an_unknown_variant_number_or_name_is_a_usage_error_everywhere)
{
    static const char *const bad[] = {"--variant 99", "--variant bogus", "--variant 1,bogus"};
    for (size_t e = 0; e < sizeof EXPERIMENTS / sizeof EXPERIMENTS[0]; e++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            char args[256];
            snprintf(args, sizeof args, "--backend cpu --quick --label bad %s", bad[b]);
            int rc = run_bad(EXPERIMENTS[e].id, args);
            cr_assert_eq(rc, RL_EXIT_USAGE, "exp-%s %s: exit %d\n%s", EXPERIMENTS[e].id, bad[b], rc, err);
            cr_assert(strstr(err, "--variant") && strstr(err, "valid: 1 ("),
                      "exp-%s %s lists the valid variants:\n%s", EXPERIMENTS[e].id, bad[b], err);
            assert_nothing_done(EXPERIMENTS[e].id, bad[b]);
        }
}

Test(selection, a_bad_option_value_lists_the_valid_ones)
{
    for (size_t e = 0; e < sizeof EXPERIMENTS / sizeof EXPERIMENTS[0]; e++) {
        char args[256];
        snprintf(args, sizeof args, "--backend cpu --quick --label bad %s", EXPERIMENTS[e].bad_option);
        int rc = run_bad(EXPERIMENTS[e].id, args);
        cr_assert_eq(rc, RL_EXIT_USAGE, "exp-%s %s: exit %d\n%s", EXPERIMENTS[e].id,
                     EXPERIMENTS[e].bad_option, rc, err);
        cr_assert(strstr(err, EXPERIMENTS[e].valid_hint), "exp-%s %s: '%s' not in:\n%s",
                  EXPERIMENTS[e].id, EXPERIMENTS[e].bad_option, EXPERIMENTS[e].valid_hint, err);
        assert_nothing_done(EXPERIMENTS[e].id, EXPERIMENTS[e].bad_option);
    }
}

Test(selection, a_valid_selection_by_name_and_number_is_accepted)
{
    int rc = run_bad("05", "--backend cpu --list --variant 1,pair_fused");
    cr_assert_eq(rc, 0, "%s", err);
}

Test(selection, quick_and_full_exclude_each_other)
{
    int rc = run_bad("05", "--backend cpu --quick --full --label bad");
    cr_assert_eq(rc, RL_EXIT_USAGE);
    cr_assert(strstr(err, "--quick and --full exclude each other"), "%s", err);
    rc = run_bad("05", "--backend cpu --max-bytes 12 --label bad");
    cr_assert_eq(rc, RL_EXIT_USAGE);
    cr_assert(strstr(err, "--max-bytes"), "%s", err);
}

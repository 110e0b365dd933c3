/*
 * test_meta.c -- the '# key: value' header has one reader (table.c); the
 * scripts ask it through `rooflab meta FILE KEY...` (the older spelling of
 * `rooflab query FILE meta KEY...`, tests/test_query.c). A CSV written by the
 * harness's own writer is read back by the command: a key present, a key
 * absent (an error, unless --default), a file missing, and the lines that
 * are not keys (a comment for people, a value holding ": ").
 */
#include "helpers.h"
#include "rl_csv.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL RL_BUILD_DIR "/rooflab"

static char dir[512], csv[1024];
static char out[4096], err[4096];

/* A results file as an experiment writes it, with a comment line after
 * the keys, as results/published/ files have. */
static void write_fixture(void)
{
    static const char *const cols[] = {"name", "n", NULL};
    snprintf(csv, sizeof csv, "%s/exp-99.csv", dir);
    rl_csv *c = rl_csv_open(csv, cols);
    rl_csv_meta(c, "backend", "cpu");
    rl_csv_meta(c, "roof_DRAM_read_gbps", "%g %g %.0f", 53.5, 51.25, 268435456.0);
    rl_csv_meta(c, "ceilings_how", "best of 5 trials: bandwidth ladder; measured now");
    rl_csv_meta(c, "empty", "%s", "");
    rl_csv_meta(c, "backend", "a second line of a key, never read");
    rl_csv_set_str(c, "name", "x");
    rl_csv_set_int(c, "n", 1);
    rl_csv_end_row(c);
    cr_assert_eq(rl_csv_commit(c), 0);
    FILE *f = fopen(csv, "r+");
    cr_assert_not_null(f);
    char *text = read_file(csv, NULL);
    fprintf(f, "# a comment for people: not a key, its words hold spaces\n%s", text);
    fclose(f);
    free(text);
}

static void setup(void)
{
    make_temp_dir(dir, sizeof dir);
    write_fixture();
}
static void teardown(void) { rm_tree(dir); }
TestSuite(meta, .init = setup, .fini = teardown);

/* `rooflab meta ARGS`, with FILE standing for the fixture's path. */
static int meta(const char *args)
{
    char cmd[2048], expanded[1536] = "";
    const char *at = strstr(args, "FILE");
    if (at)
        snprintf(expanded, sizeof expanded, "%.*s'%s'%s", (int)(at - args), args, csv, at + 4);
    else
        snprintf(expanded, sizeof expanded, "%s", args);
    snprintf(cmd, sizeof cmd, "%s meta %s", TOOL, expanded);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

Test(meta, prints_each_key_asked_one_line_each_in_order)
{
    cr_assert_eq(meta("FILE ceilings_how backend roof_DRAM_read_gbps"), 0, "%s", err);
    cr_assert_str_eq(out, "best of 5 trials: bandwidth ladder; measured now\n"
                          "cpu\n"
                          "53.5 51.25 268435456\n",
                     "a value is the whole line after ': ', the first line of a key twice");
    cr_assert_str_eq(err, "");
}

Test(meta, an_empty_value_is_present)
{
    cr_assert_eq(meta("FILE empty"), 0, "%s", err);
    cr_assert_str_eq(out, "\n");
}

Test(meta, an_absent_key_is_an_error_that_names_it)
{
    cr_assert_eq(meta("FILE backend no_such_key"), 1);
    cr_assert_str_eq(out, "cpu\n\n", "the absent key's line is empty: the others keep their places");
    cr_assert(strstr(err, "no '# no_such_key: ' line") && strstr(err, csv), "%s", err);
}

Test(meta, a_comment_line_is_not_a_key)
{
    cr_assert_eq(meta("FILE 'a comment for people'"), 1, "%s", out);
    cr_assert_eq(meta("FILE a"), 1, "%s", out);
}

Test(meta, with_a_default_an_absent_key_is_its_default)
{
    cr_assert_eq(meta("--default '' FILE no_such_key backend"), 0, "%s", err);
    cr_assert_str_eq(out, "\ncpu\n");
    cr_assert_eq(meta("--default unknown FILE no_such_key"), 0, "%s", err);
    cr_assert_str_eq(out, "unknown\n");
    cr_assert_str_eq(err, "");
}

Test(meta, a_missing_file_is_a_usage_error_that_names_it)
{
    char args[1024];
    snprintf(args, sizeof args, "'%s/absent.csv' backend", dir);
    cr_assert_eq(meta(args), RL_EXIT_USAGE);
    cr_assert_str_eq(out, "", "nothing printed for a file that is not there");
    cr_assert(strstr(err, "cannot read") && strstr(err, "absent.csv"), "%s", err);
}

Test(meta, a_command_line_without_a_key_is_a_usage_error)
{
    cr_assert_eq(meta("FILE"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "KEY"), "%s", err);
    cr_assert_eq(meta("--bogus FILE backend"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--bogus"), "%s", err);
    cr_assert_eq(meta("--help"), 0);
    cr_assert(strstr(out, "usage: rooflab query") && strstr(out, "FILE meta KEY"), "%s", out);
}

/* The C readers and the command give the same answers: one parser. */
Test(meta, the_library_reads_what_the_command_prints)
{
    char value[256], why[256];
    cr_assert(rl_csv_read_meta(csv, "ceilings_how", value, sizeof value));
    cr_assert_str_eq(value, "best of 5 trials: bandwidth ladder; measured now");
    rl_table *t = rl_table_read(csv, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_str_eq(rl_table_meta(t, "backend"), "cpu");
    cr_assert_null(rl_table_meta(t, "a comment for people"));
    cr_assert_eq(t->nrows, 1, "the comment line is not a row either");
    rl_table_free(t);
    t = rl_table_read_meta(csv, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_eq(t->nmeta, 5, "every key line, the repeated one included");
    cr_assert_eq(t->ncols, 0, "the header alone: no columns read");
    rl_table_free(t);
}

/*
 * test_query.c -- `rooflab query`, the one reader of results files for
 * charts and scripts, and `rooflab csv-write`, the writer a script's CSV
 * goes through. The fixture is written by the harness's own writer, with
 * what a file may hold that a naive reader gets wrong: quoted cells with
 * commas and quotes, a cell longer than any line buffer, a comment line,
 * a renamed column; the answers are checked against what was written.
 */
#include "helpers.h"
#include "rl_csv.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL RL_BUILD_DIR "/rooflab"

static char dir[512], csv_a[1024], csv_b[1024];
static char out[1 << 17], err[4096];
/* A cell longer than a 64 KiB line buffer: a reader that cuts lines there
 * would split this row in two. */
static char long_cell[70001];

static void write_run(const char *path, const char *variant_column, const char *const *rows)
{
    const char *cols[] = {"test", variant_column, "note", "time_us", NULL};
    rl_csv *c = rl_csv_open(path, cols);
    rl_csv_meta(c, "backend", "cpu");
    rl_csv_meta(c, "ceilings_how", "best of 5 trials: measured now");
    for (int r = 0; rows[r]; r += 4) {
        rl_csv_set_str(c, "test", rows[r]);
        rl_csv_set_str(c, variant_column, rows[r + 1]);
        rl_csv_set_str(c, "note", rows[r + 2]);
        rl_csv_set_str(c, "time_us", rows[r + 3]);
        rl_csv_end_row(c);
    }
    cr_assert_eq(rl_csv_commit(c), 0);
}

static void setup(void)
{
    make_temp_dir(dir, sizeof dir);
    memset(long_cell, 'x', sizeof long_cell - 1);
    snprintf(csv_a, sizeof csv_a, "%s/exp-98.csv", dir);
    snprintf(csv_b, sizeof csv_b, "%s/exp-98-old.csv", dir);
    const char *a[] = {"chain", "fused", "a, quoted \"note\"", "1.5",
                       "chain", "unfused", "", "2.5",
                       "doubling", "fused", long_cell, "3",
                       "chain", "fused", "again", "1.25",
                       "chain", "", "", "9", NULL};
    /* An older run, whose column was still called 'way'. */
    const char *b[] = {"chain", "graph", "", "4", "chain", "fused", "", "5", NULL};
    write_run(csv_a, "variant", a);
    write_run(csv_b, "way", b);
}
static void teardown(void) { rm_tree(dir); }
TestSuite(query, .init = setup, .fini = teardown);

/* `rooflab query ARGS`, with A and B standing for the two fixtures. */
static int query(const char *args)
{
    char expanded[3072] = "", cmd[4096];
    size_t used = 0;
    for (const char *p = args; *p && used < sizeof expanded - 1100; p++) {
        if ((*p == 'A' || *p == 'B') && (p == args || p[-1] == ' ') && (!p[1] || p[1] == ' '))
            used += (size_t)snprintf(expanded + used, sizeof expanded - used, "'%s'",
                                     *p == 'A' ? csv_a : csv_b);
        else
            expanded[used++] = *p;
    }
    expanded[used] = '\0';
    snprintf(cmd, sizeof cmd, "%s query %s", TOOL, expanded);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

Test(query, meta_prints_each_key_asked_one_line_each)
{
    cr_assert_eq(query("A meta ceilings_how backend"), 0, "%s", err);
    cr_assert_str_eq(out, "best of 5 trials: measured now\ncpu\n");
    cr_assert_eq(query("A meta backend no_such_key"), 1);
    cr_assert_str_eq(out, "cpu\n\n", "the absent key's line is empty: the others keep their places");
    cr_assert(strstr(err, "no '# no_such_key: ' line") && strstr(err, csv_a), "%s", err);
    cr_assert_eq(query("--default none A meta no_such_key"), 0, "%s", err);
    cr_assert_str_eq(out, "none\n");
}

Test(query, has_columns_answers_with_its_exit_and_names_the_absent_ones)
{
    cr_assert_eq(query("A has-columns test,variant time_us"), 0, "%s", err);
    cr_assert_str_eq(out, "", "nothing to name when every column is there");
    cr_assert_eq(query("A has-columns test q1 time_us q3"), 1);
    cr_assert_str_eq(out, "q1 q3\n", "the absent ones, in the order asked");
    cr_assert(strstr(err, "no column 'q1'") && strstr(err, csv_a), "%s", err);
}

Test(query, columns_prints_every_row_quoted_cells_whole)
{
    cr_assert_eq(query("A columns variant,note --where test=chain"), 0, "%s", err);
    cr_assert_str_eq(out, "fused,a, quoted \"note\"\n"
                          "unfused,\n"
                          "fused,again\n"
                          ",\n",
                     "the quoted cell comes back with its comma and quotes");
}

Test(query, a_cell_longer_than_a_line_buffer_is_one_cell)
{
    cr_assert_eq(query("A columns note --where test=doubling"), 0, "%s", err);
    cr_assert_eq(strlen(out), strlen(long_cell) + 1);
    cr_assert_eq(out[0], 'x');
    cr_assert_eq(query("A columns time_us --where test=doubling"), 0, "%s", err);
    cr_assert_str_eq(out, "3\n", "the row after the long cell is read in its place");
}

Test(query, distinct_words_is_a_gnuplot_list_in_the_order_first_met)
{
    cr_assert_eq(query("A columns variant --distinct --words"), 0, "%s", err);
    cr_assert_str_eq(out, "fused unfused\n", "each once, the empty variant left out");
    cr_assert_eq(query("A columns variant,test --join : --distinct --words"), 0, "%s", err);
    cr_assert_str_eq(out, "fused:chain unfused:chain fused:doubling :chain\n");
}

Test(query, where_not_and_several_where_all_hold)
{
    cr_assert_eq(query("A columns time_us --where test!=doubling --where variant=fused"), 0, "%s",
                 err);
    cr_assert_str_eq(out, "1.5\n1.25\n");
    cr_assert_eq(query("A columns time_us --where variant=none"), 0, "%s", err);
    cr_assert_str_eq(out, "", "an empty selection is an answer");
}

Test(query, several_files_in_order_and_a_renamed_column)
{
    cr_assert_eq(query("A B columns 'variant|way' --distinct --words"), 0, "%s", err);
    cr_assert_str_eq(out, "fused unfused graph\n",
                     "the first file's in its order, then what only the second has");
    cr_assert_eq(query("A B columns variant"), 1, "B has no 'variant': %s", out);
    cr_assert_str_eq(out, "", "no partial answer when one file lacks the column");
    cr_assert(strstr(err, "no column 'variant'") && strstr(err, csv_b), "%s", err);
}

Test(query, a_missing_column_in_where_is_named)
{
    cr_assert_eq(query("A columns variant --where part=x"), 1);
    cr_assert(strstr(err, "no column 'part' (--where)"), "%s", err);
}

Test(query, a_missing_or_malformed_file_is_an_error_that_names_it)
{
    char args[1200];
    snprintf(args, sizeof args, "'%s/absent.csv' columns variant", dir);
    cr_assert_eq(query(args), RL_EXIT_USAGE);
    cr_assert(strstr(err, "cannot read") && strstr(err, "absent.csv"), "%s", err);
    char bad[1024];
    snprintf(bad, sizeof bad, "%s/bad.csv", dir);
    FILE *f = fopen(bad, "w");
    cr_assert_not_null(f);
    fputs("# backend: cpu\na,b\n1,2\n3,4,5\n", f);
    fclose(f);
    snprintf(args, sizeof args, "'%s' columns a", bad);
    cr_assert_eq(query(args), RL_EXIT_USAGE);
    cr_assert_str_eq(out, "");
    cr_assert(strstr(err, "row 2 has 3 fields"), "%s", err);
}

Test(query, bad_usage_is_exit_2_and_says_what)
{
    cr_assert_eq(query("A"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "ACTION"), "%s", err);
    cr_assert_eq(query("A columns"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "column NAME"), "%s", err);
    cr_assert_eq(query("A B meta backend"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "one FILE"), "%s", err);
    cr_assert_eq(query("A columns variant --where nothing"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "COLUMN=VALUE"), "%s", err);
    cr_assert_eq(query("A columns variant --bogus"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--bogus"), "%s", err);
    cr_assert_eq(query("--help"), 0);
    cr_assert(strstr(out, "usage: rooflab query") && strstr(out, "Exit codes"), "%s", out);
}

Test(query, the_command_list_names_the_reader_and_the_writer)
{
    cr_assert_eq(run_capture(TOOL " --help", out, sizeof out, err, sizeof err), 0);
    cr_assert(strstr(out, "query [options] FILE...") && strstr(out, "csv-write OUT"), "%s", out);
}

/* ---- csv-write ------------------------------------------------------------------------ */

/* `rooflab csv-write ARGS < rows`, the rows written to a file first. */
static int csv_write(const char *args, const char *rows)
{
    char rows_path[1024], cmd[4096];
    snprintf(rows_path, sizeof rows_path, "%s/rows.tsv", dir);
    FILE *f = fopen(rows_path, "w");
    cr_assert_not_null(f);
    fputs(rows, f);
    fclose(f);
    /* In braces: run_capture's own </dev/null must not replace the rows. */
    snprintf(cmd, sizeof cmd, "{ %s csv-write %s < '%s'; }", TOOL, args, rows_path);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

Test(query, csv_write_writes_the_experiments_format_read_back_whole)
{
    char args[2048], why[256], path[1024];
    snprintf(path, sizeof path, "%s/peers/peers.csv", dir);
    snprintf(args, sizeof args,
             "'%s' --meta 'about=ours beside ggml, best of 4 rounds' --meta rounds=4 "
             "--columns format,ms,note", path);
    cr_assert_eq(csv_write(args, "f16\t4.199\ta, \"quoted\" note\nq8\t2.237\t\n"), 0, "%s", err);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "the folder is made, the file written");
    cr_assert_str_eq(text, "# about: ours beside ggml, best of 4 rounds\n"
                           "# rounds: 4\n"
                           "format,ms,note\n"
                           "f16,4.199,\"a, \"\"quoted\"\" note\"\n"
                           "q8,2.237,\n");
    free(text);
    rl_table *t = rl_table_read(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_str_eq(rl_table_meta(t, "rounds"), "4");
    cr_assert_eq(t->nrows, 2);
    cr_assert_str_eq(rl_table_get(t, 0, "note"), "a, \"quoted\" note");
    rl_table_free(t);
}

Test(query, csv_write_leaves_the_previous_file_when_a_row_is_malformed)
{
    char args[2048], path[1024];
    snprintf(path, sizeof path, "%s/peers.csv", dir);
    snprintf(args, sizeof args, "'%s' --columns a,b", path);
    cr_assert_eq(csv_write(args, "1\t2\n"), 0, "%s", err);
    cr_assert_eq(csv_write(args, "3\t4\n5\t6\t7\n"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "row 2 has 3 cells") && strstr(err, path), "%s", err);
    char *text = read_file(path, NULL);
    cr_assert_str_eq(text, "a,b\n1,2\n", "the first file stays whole");
    free(text);
    cr_assert_eq(count_entries(dir, ".tmp"), 0, "no temporary file left behind");
}

Test(query, csv_write_refuses_a_key_the_reader_would_not_read)
{
    char args[2048], path[1024];
    snprintf(path, sizeof path, "%s/x.csv", dir);
    snprintf(args, sizeof args, "'%s' --meta 'two words=v' --columns a", path);
    cr_assert_eq(csv_write(args, ""), RL_EXIT_USAGE);
    cr_assert(strstr(err, "KEY=VALUE") && strstr(err, "two words=v"), "%s", err);
    snprintf(args, sizeof args, "'%s' --meta k=v", path);
    cr_assert_eq(csv_write(args, ""), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--columns"), "%s", err);
    cr_assert(!file_exists(path), "nothing written on bad usage");
}

/*
 * test_csv.c -- the CSV writer: columns, metadata header, quoting, and the
 * atomic commit (nothing at the target until the file is complete).
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const COLS[] = {"name", "n", "gbps", "note", NULL};
static char dir[512], path[1024];

static void setup(void)
{
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/sub/folder/exp-xx.csv", dir);
}

static void teardown(void) { rm_tree(dir); }

TestSuite(csv, .init = setup, .fini = teardown);

Test(csv, header_rows_and_metadata)
{
    rl_csv *c = rl_csv_open(path, COLS);
    rl_csv_meta(c, "experiment", "%s", "xx-test");
    rl_csv_meta(c, "multi", "line one\nline two");
    rl_csv_set_str(c, "name", "copy");
    rl_csv_set_int(c, "n", 4096);
    rl_csv_set_num(c, "gbps", 123.456789);
    rl_csv_end_row(c);
    rl_csv_set_str(c, "name", "with, comma \"quoted\"");
    rl_csv_set_num(c, "gbps", NAN);
    rl_csv_end_row(c);
    cr_assert_eq(rl_csv_commit(c), 0);

    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "the folders are created and the file is there");
    cr_assert_str_eq(text, "# experiment: xx-test\n"
                           "# multi: line one line two\n"
                           "name,n,gbps,note\n"
                           "copy,4096,123.457,\n"
                           "\"with, comma \"\"quoted\"\"\",,,\n");
    free(text);
    char value[64];
    cr_assert(rl_csv_read_meta(path, "experiment", value, sizeof value));
    cr_assert_str_eq(value, "xx-test");
    cr_assert_not(rl_csv_read_meta(path, "absent", value, sizeof value));
}

Test(csv, nothing_appears_until_commit)
{
    rl_csv *c = rl_csv_open(path, COLS);
    rl_csv_set_str(c, "name", "x");
    rl_csv_end_row(c);
    cr_assert_not(file_exists(path), "half-written results must not be visible");
    char folder[1024];
    snprintf(folder, sizeof folder, "%s/sub/folder", dir);
    cr_assert_eq(count_entries(folder, ".tmp"), 1);
    cr_assert_eq(rl_csv_commit(c), 0);
    cr_assert(file_exists(path));
    cr_assert_eq(count_entries(folder, ".tmp"), 0, "the temporary file is renamed, not copied");
}

Test(csv, results_are_readable_by_others_as_the_umask_allows)
{
    mode_t old = umask(022);
    rl_csv *c = rl_csv_open(path, COLS);
    rl_csv_set_str(c, "name", "x");
    rl_csv_end_row(c);
    int rc = rl_csv_commit(c);
    umask(old);
    cr_assert_eq(rc, 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0644, "mode %o: a results file shared in a course lab must be readable",
                 (unsigned)(st.st_mode & 0777));
}

Test(csv, abort_leaves_nothing_and_keeps_the_previous_result)
{
    rl_csv *c = rl_csv_open(path, COLS);
    rl_csv_set_str(c, "name", "old");
    rl_csv_end_row(c);
    rl_csv_commit(c);

    c = rl_csv_open(path, COLS);
    rl_csv_set_str(c, "name", "new");
    rl_csv_end_row(c);
    rl_csv_abort(c);
    char *text = read_file(path, NULL);
    cr_assert(strstr(text, "old") && !strstr(text, "new"));
    free(text);
    char folder[1024];
    snprintf(folder, sizeof folder, "%s/sub/folder", dir);
    cr_assert_eq(count_entries(folder, ".tmp"), 0);
}

Test(csv, a_run_that_dies_leaves_no_partial_file)
{
    pid_t pid = fork();
    if (pid == 0) {
        rl_csv *c = rl_csv_open(path, COLS);
        rl_csv_set_str(c, "name", "doomed");
        rl_csv_end_row(c);
        rl_die(RL_EXIT_FAILED, "simulated device failure (expected in this test)");
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == RL_EXIT_FAILED);
    char folder[1024];
    snprintf(folder, sizeof folder, "%s/sub/folder", dir);
    cr_assert_not(file_exists(path));
    cr_assert_eq(count_entries(folder, ".tmp"), 0, "rl_die removes registered temporary files");
}

Test(csv, an_unknown_column_is_an_error_not_a_silent_drop)
{
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", 1);
        dup2(devnull, 2);
        rl_csv *c = rl_csv_open(path, COLS);
        rl_csv_set_str(c, "no_such_column", "x");
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == RL_EXIT_FAILED);
}

/*
 * test_verdicts_merge.c -- verdicts.csv is the latest verdict per
 * experiment and backend: a run rewrites its own rows and keeps the
 * others, read and written back as every CSV is, so that a note with
 * commas, quotes and a long text survives another experiment's run.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP05 RL_BUILD_DIR "/exp-05"

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(verdicts_merge, .init = setup, .fini = teardown, .timeout = 300);

/* Another experiment's row, its note quoted, with commas, doubled quotes
 * and more text than a line buffer of 8 KiB holds. */
static void write_other_row(const char *path, char *note, size_t len)
{
    snprintf(note, len, "a note, with commas, and \"quotes\"; ");
    while (strlen(note) + 20 < len)
        strcat(note, "and more words ");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fprintf(f, "# about: latest verdict per experiment and backend for label merge\n"
               "experiment,id,backend,device,label,quick,claim,predicted,measured,verdict,note,"
               "date_utc\n02-prefill-decode,mbu_decode,cpu,Some CPU,merge,yes,MBU at n = 1,"
               "0.6 .. 1,0.9,holds,\"");
    for (const char *c = note; *c; c++)
        fputs(*c == '"' ? "\"\"" : (char[]){*c, 0}, f);
    fprintf(f, "\",2026-01-01T00:00:00Z\n");
    fclose(f);
}

Test(verdicts_merge, another_experiments_row_survives_whole)
{
    char results[700], path[800], cmd[1200], note[12000], why[256];
    snprintf(results, sizeof results, "%s/results/merge", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", results);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/verdicts.csv", results);
    write_other_row(path, note, sizeof note);

    int rc = run_experiment(EXP05, dir, "--quick --backend cpu --op affine --variant 1 --no-plot "
                            "--label merge", out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);

    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    int other = rl_table_find(t, "experiment", "02-prefill-decode");
    cr_assert_geq(other, 0, "the other experiment's row was lost");
    cr_assert_str_eq(rl_table_get(t, other, "note"), note, "its note changed");
    cr_assert_str_eq(rl_table_get(t, other, "date_utc"), "2026-01-01T00:00:00Z");
    cr_assert_geq(rl_table_find(t, "experiment", "05-fusion"), 0, "this run's rows are missing");
    rl_table_free(t);
}

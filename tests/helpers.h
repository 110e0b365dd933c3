/*
 * helpers.h -- small utilities the test suites share: temporary folders,
 * running a binary and capturing its output, reading files.
 */
#ifndef TESTS_HELPERS_H
#define TESTS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#ifndef RL_BUILD_DIR
#define RL_BUILD_DIR "build"
#endif

/* A fresh folder under $TMPDIR; removed by rm_tree(). */
void make_temp_dir(char *buf, size_t len);
void rm_tree(const char *dir);

/* Runs a shell command; captures stdout and stderr (each up to cap bytes,
 * NUL-terminated) and returns the exit status (-1 on a signal). */
int run_capture(const char *cmd, char *out, size_t out_cap, char *err, size_t err_cap);

/* The whole file, NUL-terminated, malloc'd; NULL if unreadable. */
char *read_file(const char *path, size_t *len);
long file_size(const char *path);
bool file_exists(const char *path);
/* Number of entries in dir whose name contains part. */
int count_entries(const char *dir, const char *part);

/* Runs an experiment's binary with --out DIR/results --plots DIR/plots and
 * args, capturing as run_capture does. */
int run_experiment(const char *bin, const char *dir, const char *args, char *out, size_t out_cap,
                   char *err, size_t err_cap);
/* How many of the charts NAME.{png,pdf,svg} for each of the n names are
 * missing, or under 1000 bytes, in DIR/plots/LABEL; the first in first. */
int missing_charts(const char *dir, const char *label, const char *const *names, int n, char *first,
                   size_t len);

/* A parsed CSV: the '#' header lines skipped, the column names, and the
 * rows split into fields (quoted fields allowed); header_line is the
 * header as written. False when unreadable, when a row's field count
 * differs from the header's, or when the file does not end in a newline. */
typedef struct csv_table {
    char *text, *header_line;
    char **header;
    int ncols;
    char ***rows;
    int nrows;
} csv_table;

bool csv_load(const char *path, csv_table *t);
void csv_free(csv_table *t);
/* The index of a column, or -1. */
int csv_col(const csv_table *t, const char *name);

#endif

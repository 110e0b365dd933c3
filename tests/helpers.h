/*
 * helpers.h -- small utilities the test suites share: temporary folders,
 * running a binary and capturing its output, reading files.
 */
#ifndef TESTS_HELPERS_H
#define TESTS_HELPERS_H

#include "rooflab.h"

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

/* Temporary files or folders (".tmp") left in DIR/results/LABEL and
 * DIR/plots/LABEL: a finished run leaves none. */
int temp_files_left(const char *dir, const char *label);

/* The roofs the end-to-end tests use: a fixture of made-up values, so
 * that no test measures a ceiling (tests/README.md). */
#define TEST_CEILINGS RL_SOURCE_ROOT "/tests/fixtures/ceilings-cpu.csv"
/* The same roofs with a made-up read-bandwidth curve: what a cache of
 * this machine's holds (a cache without a curve is measured again). */
#define TEST_CEILINGS_CURVE RL_SOURCE_ROOT "/tests/fixtures/ceilings-curve.csv"

/* Tests that time anything hold this lock (an flock in the build folder):
 * one measurement at a time, whatever Criterion runs in parallel. */
void measure_lock(void);
void measure_unlock(void);

/* Runs an experiment's binary with --out DIR/results --plots DIR/plots,
 * --ceilings TEST_CEILINGS and args, under the measurement lock, capturing
 * as run_capture does. */
int run_experiment(const char *bin, const char *dir, const char *args, char *out, size_t out_cap,
                   char *err, size_t err_cap);
/* The same without the fixture: the run measures its own ceilings, with
 * ROOFLAB_LLC=8Mi unless the test set its own (a small ladder). */
int run_experiment_measuring(const char *bin, const char *dir, const char *args, char *out,
                             size_t out_cap, char *err, size_t err_cap);
/* How many of the charts NAME.{png,pdf,svg} for each of the n names are
 * missing, or under 1000 bytes, in DIR/plots/LABEL, or (the SVG) do not
 * state this run's verdict ("this run: holds", ...); the first in first. */
int missing_charts(const char *dir, const char *label, const char *const *names, int n, char *first,
                   size_t len);

/* How many of the verdict ids have no row "EXPERIMENT,ID,BACKEND," in
 * DIR/results/LABEL/verdicts.csv (all of them when the file is missing);
 * the first missing row in first. */
int missing_verdicts(const char *dir, const char *label, const char *experiment,
                     const char *backend, const char *const *ids, int n, char *first, size_t len);

/* The CUDA backend on device 0, or the running test skipped with the
 * reason (Criterion's skip) when there is no GPU. */
rl_backend *gpu_or_skip(void);
/* Skips the running test when a GPU is present: for tests of the no-GPU
 * path. */
void skip_if_a_gpu_is_present(void);

/* A results CSV read back with the harness's own reader, after checking
 * what every experiment's file must satisfy: it exists, ends in a newline,
 * and every row has the header's number of fields. NULL and why if not. */
rl_table *load_results(const char *path, char *why, size_t len);
/* The column names joined by commas: the header line as written. */
void header_line(const rl_table *t, char *buf, size_t len);
/* Whether the '# key: value' header has a line starting like this one,
 * e.g. has_meta(t, "# backend: cpu") or has_meta(t, "# ceiling_gbps: "). */
bool has_meta(const rl_table *t, const char *line);
/* Rows whose column col equals value. */
int table_count(const rl_table *t, const char *col, const char *value);

#endif

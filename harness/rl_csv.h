/*
 * rl_csv.h -- the results files as the harness and the tools see them:
 * writing a CSV (tidy rows under a '# key: value' header, committed
 * atomically), reading a header or a column back, matching a row across
 * two runs (compare), writing any file atomically. An experiment writes
 * its rows through its context (rl_set_*, rooflab.h) and reads a table
 * with rl_library.h's calls; context.c, the ceilings' file, the tools and
 * the tests include this room.
 */
#ifndef RL_CSV_H
#define RL_CSV_H

#include "rl_library.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * CSV (csv.c): tidy rows, '# key: value' metadata header, atomic commit.
 * ---------------------------------------------------------------------- */
typedef struct rl_csv rl_csv;

/* Opens a temporary file beside path; nothing appears at path until
 * rl_csv_commit(). columns is NULL-terminated. Metadata may be added at any
 * time before the commit; it is written above the rows. */
rl_csv *rl_csv_open(const char *path, const char *const *columns);
void rl_csv_meta(rl_csv *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rl_csv_set_str(rl_csv *c, const char *column, const char *value);
void rl_csv_set_num(rl_csv *c, const char *column, double value); /* NaN: empty */
void rl_csv_set_int(rl_csv *c, const char *column, long long value);
void rl_csv_end_row(rl_csv *c); /* keeps the row; unset cells stay empty */
bool rl_csv_has_column(const rl_csv *c, const char *column);
const char *rl_csv_get(const rl_csv *c, const char *column); /* the row being built; "" if unset */
int rl_csv_commit(rl_csv *c);  /* flush, fsync, rename; 0 on success */
/* The file as rl_csv_commit would write it now, with more_meta's '# key:
 * value' lines (NULL: none) below the metadata so far, written to path
 * atomically; c stays open. 0 on success. */
int rl_csv_write_copy(rl_csv *c, const char *path, const char *more_meta);
void rl_csv_abort(rl_csv *c);  /* removes the temporary file */

/* ------------------------------------------------------------------------
 * Reading results back (table.c), beyond rl_library.h's rows and cells:
 * headers alone, columns by index, and rows matched across runs.
 * ---------------------------------------------------------------------- */
/* The '# key: value' header alone (no columns, no rows): NULL and a reason
 * when the file cannot be read. */
rl_table *rl_table_read_meta(const char *path, char *why, size_t whylen);
/* One key of a CSV's header into buf; false when the file or the key is
 * absent. */
bool rl_csv_read_meta(const char *path, const char *key, char *buf, size_t len);
int rl_table_col(const rl_table *t, const char *name);              /* -1 if absent */
const char *rl_table_meta(const rl_table *t, const char *key);      /* NULL if absent */
/* The row of t whose key columns equal those of src's row, or -1. */
int rl_table_match(const rl_table *t, const rl_table *src, int src_row, const char *const *keys,
                   int nkeys);

/* Any other file (util.c). */
/* Writes a whole file through a temporary and a rename; 0 on success. */
int rl_write_file_atomic(const char *path, const char *content);

#ifdef __cplusplus
}
#endif
#endif /* RL_CSV_H */

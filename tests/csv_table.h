/*
 * csv_table.h -- a whole rooflab CSV in memory, for the end-to-end tests:
 * the "# key: value" header kept as text, the column names, and the rows
 * as fields (RFC 4180 quoting), looked up by column name.
 */
#ifndef TESTS_CSV_TABLE_H
#define TESTS_CSV_TABLE_H

#include <stdbool.h>

typedef struct csv_table {
    char *text;   /* the file, kept for the metadata and as field storage */
    char *meta;   /* the "#" lines, NUL-terminated */
    char *header; /* the column line as written */
    int ncols, nrows;
    char **cols;  /* ncols names */
    char **cells; /* nrows x ncols fields */
} csv_table;

/* NULL if the file cannot be read or a row has the wrong number of fields
 * (why says which). */
csv_table *csv_table_read(const char *path, char *why, int whylen);
void csv_table_free(csv_table *t);
/* The index of a column, or -1. */
int csv_table_col(const csv_table *t, const char *name);
/* A field by row and column name; "" for a missing column. */
const char *csv_table_get(const csv_table *t, int row, const char *col);
/* Rows whose column col equals value. */
int csv_table_count(const csv_table *t, const char *col, const char *value);

#endif

/*
 * table.c -- reads back the CSV files the harness writes: the '# key:
 * value' header, the column names, and the rows (quoted fields allowed).
 * Used to compare runs, summarise verdicts and generate the paper's
 * tables: everything downstream of an experiment reads its CSV only.
 *
 * This is the one reader of the header: the C code calls it, and charts
 * and scripts get its answers through the harness (plot.c passes every
 * key to gnuplot) or through `rooflab meta FILE KEY...`.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t bytes)
{
    p = realloc(p, bytes);
    if (!p)
        rl_die(RL_EXIT_FAILED, "out of memory reading a table");
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = strndup(s, n);
    if (!d)
        rl_die(RL_EXIT_FAILED, "out of memory reading a table");
    return d;
}

static char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

/* Splits one line into fields; quoted fields may hold commas and "". */
static char **split_fields(const char *line, int *count)
{
    char **f = NULL;
    int n = 0;
    const char *p = line;
    char *buf = xrealloc(NULL, strlen(line) + 1);
    for (;;) {
        size_t len = 0;
        if (*p == '"') {
            for (p++; *p; p++) {
                if (*p == '"' && p[1] == '"')
                    buf[len++] = '"', p++;
                else if (*p == '"') {
                    p++;
                    break;
                } else
                    buf[len++] = *p;
            }
        }
        while (*p && *p != ',' && *p != '\n' && *p != '\r')
            buf[len++] = *p++;
        buf[len] = '\0';
        f = xrealloc(f, sizeof(char *) * (size_t)(n + 1));
        f[n++] = xstrdup(buf);
        if (*p != ',')
            break;
        p++;
    }
    free(buf);
    *count = n;
    return f;
}

/* ---- the '# key: value' header: read here and nowhere else ---------------------
 *
 * A header line is '#', spaces, a key of letters, digits and underscores,
 * ": " and the value to the end of the line. Any other '#' line is a
 * comment for people ("# model_bpw is the whole-model bits per weight"),
 * and holds no key. A key given twice means its first line. */

static bool is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Splits one '#' line into its key and value (pointers into line and
 * lengths); false for a comment. */
static bool split_meta_line(const char *line, const char **key, size_t *klen, const char **value,
                            size_t *vlen)
{
    const char *p = line + 1;
    while (*p == ' ')
        p++;
    const char *k = p;
    while (is_key_char(*p))
        p++;
    if (p == k || p[0] != ':' || p[1] != ' ')
        return false;
    *key = k, *klen = (size_t)(p - k);
    *value = p + 2, *vlen = strcspn(p + 2, "\r\n");
    return true;
}

static void add_meta(rl_table *t, const char *line)
{
    const char *key, *value;
    size_t klen, vlen;
    if (!split_meta_line(line, &key, &klen, &value, &vlen))
        return;
    t->meta_keys = xrealloc(t->meta_keys, sizeof(char *) * (size_t)(t->nmeta + 1));
    t->meta_values = xrealloc(t->meta_values, sizeof(char *) * (size_t)(t->nmeta + 1));
    t->meta_keys[t->nmeta] = xstrndup(key, klen);
    t->meta_values[t->nmeta++] = xstrndup(value, vlen);
}

/* ---- the whole file ----------------------------------------------------------- */

/* Reads path into a table. header_only: stops at the column header, so that
 * a reader of the metadata alone need not read every row. */
static rl_table *read_table(const char *path, bool header_only, char *why, size_t whylen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, whylen, "cannot read %s: %m", path);
        return NULL;
    }
    rl_table *t = calloc(1, sizeof *t);
    if (!t)
        rl_die(RL_EXIT_FAILED, "out of memory reading a table");
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (line[0] == '#') {
            add_meta(t, line);
            continue;
        }
        if (line[0] == '\n' || line[0] == '\r')
            continue;
        if (header_only)
            break;
        int n;
        char **fields = split_fields(line, &n);
        if (!t->cols) {
            t->cols = fields;
            t->ncols = n;
            continue;
        }
        if (n != t->ncols) {
            snprintf(why, whylen, "%s: row %d has %d fields, the header %d", path, t->nrows + 1, n,
                     t->ncols);
            for (int i = 0; i < n; i++)
                free(fields[i]);
            free(fields);
            free(line);
            fclose(f);
            rl_table_free(t);
            return NULL;
        }
        t->cells = xrealloc(t->cells, sizeof(char **) * (size_t)(t->nrows + 1));
        t->cells[t->nrows++] = fields;
    }
    free(line);
    fclose(f);
    if (!header_only && !t->cols) {
        snprintf(why, whylen, "%s has no header line", path);
        rl_table_free(t);
        return NULL;
    }
    return t;
}

rl_table *rl_table_read(const char *path, char *why, size_t whylen)
{
    return read_table(path, false, why, whylen);
}

rl_table *rl_table_read_meta(const char *path, char *why, size_t whylen)
{
    return read_table(path, true, why, whylen);
}

bool rl_csv_read_meta(const char *path, const char *key, char *buf, size_t len)
{
    char why[64];
    rl_table *t = rl_table_read_meta(path, why, sizeof why);
    const char *value = t ? rl_table_meta(t, key) : NULL;
    if (value)
        snprintf(buf, len, "%s", value);
    rl_table_free(t);
    return value != NULL;
}

void rl_table_free(rl_table *t)
{
    if (!t)
        return;
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++)
            free(t->cells[r][c]);
        free(t->cells[r]);
    }
    for (int c = 0; c < t->ncols; c++)
        free(t->cols[c]);
    for (int i = 0; i < t->nmeta; i++) {
        free(t->meta_keys[i]);
        free(t->meta_values[i]);
    }
    free(t->cells);
    free(t->cols);
    free(t->meta_keys);
    free(t->meta_values);
    free(t);
}

int rl_table_col(const rl_table *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (!strcmp(t->cols[c], name))
            return c;
    return -1;
}

const char *rl_table_get(const rl_table *t, int row, const char *column)
{
    int c = rl_table_col(t, column);
    return c >= 0 && row >= 0 && row < t->nrows ? t->cells[row][c] : "";
}

int rl_table_find(const rl_table *t, const char *column, const char *value)
{
    for (int r = 0; r < t->nrows; r++)
        if (!strcmp(rl_table_get(t, r, column), value))
            return r;
    return -1;
}

double rl_table_num(const rl_table *t, int row, const char *column)
{
    const char *cell = rl_table_get(t, row, column);
    return cell[0] ? atof(cell) : NAN;
}

const char *rl_table_meta(const rl_table *t, const char *key)
{
    for (int i = 0; i < t->nmeta; i++)
        if (!strcmp(t->meta_keys[i], key))
            return t->meta_values[i];
    return NULL;
}

int rl_table_match(const rl_table *t, const rl_table *src, int src_row, const char *const *keys,
                   int nkeys)
{
    for (int r = 0; r < t->nrows; r++) {
        bool same = true;
        for (int k = 0; k < nkeys && same; k++)
            same = !strcmp(rl_table_get(t, r, keys[k]), rl_table_get(src, src_row, keys[k]));
        if (same)
            return r;
    }
    return -1;
}

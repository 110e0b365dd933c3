/*
 * table.c -- reads back the CSV files the harness writes: the '# key:
 * value' header, the column names, and the rows (quoted fields allowed).
 * Used to compare runs, summarise verdicts and generate the paper's
 * tables: everything downstream of an experiment reads its CSV only.
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

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        rl_die(RL_EXIT_FAILED, "out of memory reading a table");
    return d;
}

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

static void add_meta(rl_table *t, const char *line)
{
    const char *p = line + 1;
    while (*p == ' ')
        p++;
    const char *colon = strstr(p, ": ");
    if (!colon)
        return;
    t->meta_keys = xrealloc(t->meta_keys, sizeof(char *) * (size_t)(t->nmeta + 1));
    t->meta_values = xrealloc(t->meta_values, sizeof(char *) * (size_t)(t->nmeta + 1));
    t->meta_keys[t->nmeta] = strndup(p, (size_t)(colon - p));
    char *value = xstrdup(colon + 2);
    value[strcspn(value, "\r\n")] = '\0';
    t->meta_values[t->nmeta++] = value;
}

rl_table *rl_table_read(const char *path, char *why, size_t whylen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, whylen, "cannot read %s: %m", path);
        return NULL;
    }
    rl_table *t = calloc(1, sizeof *t);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (line[0] == '#') {
            add_meta(t, line);
            continue;
        }
        if (line[0] == '\n' || line[0] == '\r')
            continue;
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
    if (!t->cols) {
        snprintf(why, whylen, "%s has no header line", path);
        rl_table_free(t);
        return NULL;
    }
    return t;
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

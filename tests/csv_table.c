/*
 * csv_table.c -- see csv_table.h.
 */
#include "csv_table.h"
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cuts the next field off *p in place, unquoting it; returns it. Sets
 * *last when the line ends after it. */
static char *next_field(char **p, bool *last)
{
    char *start = *p, *out = *p, *in = *p;
    if (*in == '"') {
        for (in++; *in; in++) {
            if (in[0] == '"' && in[1] == '"')
                *out++ = '"', in++;
            else if (*in == '"') {
                in++;
                break;
            } else
                *out++ = *in;
        }
    } else {
        while (*in && *in != ',' && *in != '\n')
            *out++ = *in++;
    }
    *last = *in != ',';
    *p = *in ? in + 1 : in;
    *out = '\0';
    return start;
}

static int count_fields(const char *line)
{
    int n = 1;
    bool quoted = false;
    for (; *line && *line != '\n'; line++) {
        if (*line == '"')
            quoted = !quoted;
        else if (*line == ',' && !quoted)
            n++;
    }
    return n;
}

csv_table *csv_table_read(const char *path, char *why, int whylen)
{
    csv_table *t = calloc(1, sizeof *t);
    t->text = read_file(path, NULL);
    if (!t->text) {
        snprintf(why, (size_t)whylen, "cannot read %s", path);
        free(t);
        return NULL;
    }
    char *p = t->text;
    size_t meta_len = 0;
    while (p[meta_len] == '#') /* the metadata block: every line starting with # */
        meta_len += strcspn(p + meta_len, "\n") + 1;
    t->meta = strndup(p, meta_len);
    p += meta_len;
    t->header = strndup(p, strcspn(p, "\n"));
    t->ncols = count_fields(p);
    t->cols = calloc((size_t)t->ncols, sizeof *t->cols);
    bool last = false;
    for (int c = 0; c < t->ncols; c++)
        t->cols[c] = next_field(&p, &last);
    int cap = 64;
    t->cells = malloc(sizeof *t->cells * (size_t)cap * t->ncols);
    while (*p) {
        if (count_fields(p) != t->ncols) {
            snprintf(why, (size_t)whylen, "row %d has %d fields, not %d", t->nrows, count_fields(p),
                     t->ncols);
            csv_table_free(t);
            return NULL;
        }
        if (t->nrows == cap) {
            cap *= 2;
            t->cells = realloc(t->cells, sizeof *t->cells * (size_t)cap * t->ncols);
        }
        for (int c = 0; c < t->ncols; c++)
            t->cells[(size_t)t->nrows * t->ncols + c] = next_field(&p, &last);
        t->nrows++;
    }
    return t;
}

void csv_table_free(csv_table *t)
{
    if (!t)
        return;
    free(t->text);
    free(t->meta);
    free(t->header);
    free(t->cols);
    free(t->cells);
    free(t);
}

int csv_table_col(const csv_table *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (!strcmp(t->cols[c], name))
            return c;
    return -1;
}

const char *csv_table_get(const csv_table *t, int row, const char *col)
{
    int c = csv_table_col(t, col);
    return c < 0 || row < 0 || row >= t->nrows ? "" : t->cells[(size_t)row * t->ncols + c];
}

int csv_table_count(const csv_table *t, const char *col, const char *value)
{
    int n = 0;
    for (int r = 0; r < t->nrows; r++)
        n += !strcmp(csv_table_get(t, r, col), value);
    return n;
}

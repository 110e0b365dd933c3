/*
 * csv.c -- tidy CSV with a '# key: value' metadata header.
 *
 * Metadata goes straight into a temporary file beside the target; rows
 * wait in memory, so metadata may be added at any time before the end (a
 * ceiling re-measured half way, the run's duration). rl_csv_commit() writes
 * the column header and the rows, syncs and renames the file into place. A
 * run that dies half way leaves the previous result untouched and no
 * partial file behind.
 */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rl_csv {
    char path[1024], tmp[1024];
    FILE *f;
    const char *const *columns;
    int ncols;
    char **cells;          /* the row being built, one string per column */
    FILE *rows;            /* finished rows, in memory until the commit */
    char *rows_buf;
    size_t rows_len;
};

static void fail(const char *what, const char *path)
{
    rl_die(RL_EXIT_FAILED, "%s '%s': %m", what, path);
}

rl_csv *rl_csv_open(const char *path, const char *const *columns)
{
    rl_csv *c = calloc(1, sizeof *c);
    if (!c)
        rl_die(RL_EXIT_FAILED, "out of memory");
    snprintf(c->path, sizeof c->path, "%s", path);

    /* The temporary file lives in the same folder, so rename() is atomic. */
    char dir[900];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash) {
        *slash = '\0';
        if (rl_mkdirs(dir) != 0)
            fail("cannot create folder", dir);
        snprintf(c->tmp, sizeof c->tmp, "%s/.%s.tmp.XXXXXX", dir, base);
    } else {
        snprintf(c->tmp, sizeof c->tmp, ".%s.tmp.XXXXXX", base);
    }
    int fd = rl_mkstemp_shared(c->tmp);
    if (fd < 0)
        fail("cannot create temporary file", c->tmp);
    rl_cleanup_register(c->tmp);
    c->f = fdopen(fd, "w");
    if (!c->f)
        fail("cannot open", c->tmp);

    c->columns = columns;
    while (columns[c->ncols])
        c->ncols++;
    c->cells = calloc((size_t)c->ncols, sizeof(char *));
    c->rows = open_memstream(&c->rows_buf, &c->rows_len);
    if (!c->cells || !c->rows)
        rl_die(RL_EXIT_FAILED, "out of memory");
    return c;
}

void rl_csv_meta(rl_csv *c, const char *key, const char *fmt, ...)
{
    char value[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    for (char *p = value; *p; p++) /* one line per key */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(c->f, "# %s: %s\n", key, value);
}

static int find_column(const rl_csv *c, const char *column)
{
    for (int i = 0; i < c->ncols; i++)
        if (!strcmp(c->columns[i], column))
            return i;
    return -1;
}

static int column_index(const rl_csv *c, const char *column)
{
    int i = find_column(c, column);
    if (i < 0)
        rl_die(RL_EXIT_FAILED, "internal error: no column '%s' in %s", column, c->path);
    return i;
}

bool rl_csv_has_column(const rl_csv *c, const char *column) { return find_column(c, column) >= 0; }

const char *rl_csv_get(const rl_csv *c, const char *column)
{
    int i = find_column(c, column);
    return i >= 0 && c->cells[i] ? c->cells[i] : "";
}

void rl_csv_set_str(rl_csv *c, const char *column, const char *value)
{
    int i = column_index(c, column);
    free(c->cells[i]);
    c->cells[i] = strdup(value ? value : "");
}

void rl_csv_set_num(rl_csv *c, const char *column, double value)
{
    char buf[64] = "";
    if (isfinite(value))
        snprintf(buf, sizeof buf, "%.6g", value);
    rl_csv_set_str(c, column, buf);
}

void rl_csv_set_int(rl_csv *c, const char *column, long long value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", value);
    rl_csv_set_str(c, column, buf);
}

static void write_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p == '\n' ? ' ' : *p, f);
    }
    fputc('"', f);
}

static void write_header(const rl_csv *c, FILE *to)
{
    for (int i = 0; i < c->ncols; i++)
        fprintf(to, "%s%s", i ? "," : "", c->columns[i]);
    fputc('\n', to);
}

FILE *rl_csv_stream(rl_csv *c) { return c->rows; }

void rl_csv_end_row(rl_csv *c)
{
    for (int i = 0; i < c->ncols; i++) {
        if (i)
            fputc(',', c->rows);
        write_field(c->rows, c->cells[i] ? c->cells[i] : "");
        free(c->cells[i]);
        c->cells[i] = NULL;
    }
    fputc('\n', c->rows);
}

static void csv_free(rl_csv *c)
{
    for (int i = 0; i < c->ncols; i++)
        free(c->cells[i]);
    free(c->cells);
    if (c->rows)
        fclose(c->rows);
    free(c->rows_buf);
    free(c);
}

/* The column header, then the rows kept in memory. */
static int write_body(rl_csv *c)
{
    write_header(c, c->f);
    if (fflush(c->rows) != 0)
        return -1;
    if (c->rows_len && fwrite(c->rows_buf, 1, c->rows_len, c->f) != c->rows_len)
        return -1;
    return 0;
}

/* The metadata written so far, read back from the temporary file. */
static bool copy_meta(rl_csv *c, FILE *to)
{
    if (fflush(c->f) != 0)
        return false;
    FILE *from = fopen(c->tmp, "r");
    if (!from)
        return false;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, from)) > 0)
        fwrite(buf, 1, n, to);
    bool ok = !ferror(from);
    fclose(from);
    return ok;
}

int rl_csv_write_copy(rl_csv *c, const char *path, const char *more_meta)
{
    char *text = NULL;
    size_t len = 0;
    FILE *to = open_memstream(&text, &len);
    if (!to)
        return -1;
    bool ok = copy_meta(c, to) && fflush(c->rows) == 0;
    if (more_meta)
        fputs(more_meta, to);
    write_header(c, to);
    if (c->rows_len)
        fwrite(c->rows_buf, 1, c->rows_len, to);
    ok = fclose(to) == 0 && ok;
    int rc = ok && text ? rl_write_file_atomic(path, text) : -1;
    free(text);
    return rc;
}

int rl_csv_commit(rl_csv *c)
{
    int rc = write_body(c);
    if (fflush(c->f) != 0 || fsync(fileno(c->f)) != 0)
        rc = -1;
    if (fclose(c->f) != 0)
        rc = -1;
    if (rc == 0 && rename(c->tmp, c->path) != 0)
        rc = -1;
    if (rc != 0) {
        fprintf(stderr, "rooflab: cannot write '%s': %m\n", c->path);
        unlink(c->tmp);
    }
    rl_cleanup_unregister(c->tmp);
    csv_free(c);
    return rc;
}

void rl_csv_abort(rl_csv *c)
{
    fclose(c->f);
    unlink(c->tmp);
    rl_cleanup_unregister(c->tmp);
    csv_free(c);
}

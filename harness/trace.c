/*
 * trace.c -- a timeline in the Chrome trace format (rl_trace.h says what
 * is written). Events go straight to a temporary file beside the target,
 * one a line; the first failed write is remembered, later writes are
 * skipped, and rl_trace_close then removes the temporary file instead of
 * renaming it: nothing half-written ever reaches the path.
 */
#include "rl_trace.h"

#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rl_trace {
    char *path, *tmp;
    FILE *f;
    int events; /* written so far: the next one needs a comma */
    int error;  /* errno of the first failed write, or 0 */
};

static void note_error(rl_trace *t)
{
    if (!t->error)
        t->error = errno ? errno : EIO;
}

static void put(rl_trace *t, const char *s)
{
    if (!t->error && fputs(s, t->f) == EOF)
        note_error(t);
}

static void put_char(rl_trace *t, char c)
{
    if (!t->error && fputc(c, t->f) == EOF)
        note_error(t);
}

static void put_fmt(rl_trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_fmt(rl_trace *t, const char *fmt, ...)
{
    if (t->error)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(t->f, fmt, ap) < 0)
        note_error(t);
    va_end(ap);
}

/* The length of the well-formed UTF-8 sequence at s (2 to 4 bytes), or 0
 * (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short). */
static int utf8_length(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    int n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* s as a JSON string, quotes included (NULL: ""). */
static void put_string(rl_trace *t, const char *s)
{
    put_char(t, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p, esc[2] = 0;
            put(t, esc);
            p++;
        } else if (*p < 0x20) {
            const char *named = *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : *p == '\r' ? "\\r"
                              : *p == '\b' ? "\\b" : *p == '\f' ? "\\f" : NULL;
            if (named)
                put(t, named);
            else
                put_fmt(t, "\\u%04x", *p);
            p++;
        } else if (*p < 0x80) {
            put_char(t, (char)*p++);
        } else {
            int n = utf8_length(p);
            if (n) {
                memcpy(esc, p, (size_t)n);
                esc[n] = 0;
                put(t, esc);
                p += n;
            } else {
                put(t, "\\ufffd");
                p++;
            }
        }
    }
    put_char(t, '"');
}

/* A number as JSON has it: null when it is not finite. */
static void put_number(rl_trace *t, double v)
{
    if (isfinite(v))
        put_fmt(t, "%.15g", v);
    else
        put(t, "null");
}

/* The separator before an event, and its common head. */
static void begin_event(rl_trace *t, const char *name, const char *ph, int tid)
{
    put(t, t->events++ ? ",\n{\"name\":" : "\n{\"name\":");
    put_string(t, name);
    put_fmt(t, ",\"ph\":\"%s\",\"pid\":1,\"tid\":%d", ph, tid);
}

static void metadata(rl_trace *t, const char *what, int tid, const char *key, const char *text,
                     double number)
{
    begin_event(t, what, "M", tid);
    put(t, ",\"args\":{");
    put_string(t, key);
    put_char(t, ':');
    if (text)
        put_string(t, text);
    else
        put_number(t, number);
    put(t, "}}");
}

rl_trace *rl_trace_open(const char *path, const char *process)
{
    rl_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path) : 0;
    size_t len = strlen(path) + 16;
    t->path = strdup(path);
    t->tmp = malloc(len);
    if (!t->path || !t->tmp || !*base) {
        int e = *base ? ENOMEM : EISDIR;
        rl_trace_abort(t);
        errno = e;
        return NULL;
    }
    /* The temporary file lives in the same folder, so rename() is atomic. */
    snprintf(t->tmp, len, "%.*s%s.%s.tmp.XXXXXX", dirlen, path, slash ? "/" : "", base);
    int fd = rl_mkstemp_shared(t->tmp);
    if (fd < 0) {
        int e = errno;
        free(t->tmp), free(t->path), free(t);
        errno = e;
        return NULL;
    }
    rl_cleanup_register(t->tmp);
    t->f = fdopen(fd, "w");
    if (!t->f) {
        int e = errno;
        close(fd);
        rl_trace_abort(t);
        errno = e;
        return NULL;
    }
    put(t, "{\"traceEvents\":[");
    if (process)
        metadata(t, "process_name", 0, "name", process, 0);
    return t;
}

int rl_trace_complete(rl_trace *t, const char *name, const char *cat, double ts_us, double dur_us,
                      int tid, const char *const *keys, const double *values, int n)
{
    if (t->error || !isfinite(ts_us) || !isfinite(dur_us) || dur_us < 0)
        return -1;
    begin_event(t, name, "X", tid);
    put(t, ",\"cat\":");
    put_string(t, cat);
    put(t, ",\"ts\":");
    put_fmt(t, "%.3f", ts_us);
    put(t, ",\"dur\":");
    put_fmt(t, "%.3f", dur_us);
    put(t, ",\"args\":{");
    for (int i = 0; i < n; i++) {
        if (i)
            put_char(t, ',');
        put_string(t, keys[i]);
        put_char(t, ':');
        put_number(t, values[i]);
    }
    put(t, "}}");
    return t->error ? -1 : 0;
}

void rl_trace_thread_name(rl_trace *t, int tid, const char *name)
{
    metadata(t, "thread_name", tid, "name", name, 0);
    metadata(t, "thread_sort_index", tid, "sort_index", NULL, tid);
}

void rl_trace_abort(rl_trace *t)
{
    if (!t)
        return;
    if (t->f)
        fclose(t->f);
    if (t->tmp) {
        unlink(t->tmp);
        rl_cleanup_unregister(t->tmp);
    }
    free(t->tmp);
    free(t->path);
    free(t);
}

int rl_trace_close(rl_trace *t)
{
    put(t, "\n],\"displayTimeUnit\":\"ms\"}\n");
    if (!t->error && (fflush(t->f) != 0 || ferror(t->f) || fsync(fileno(t->f)) != 0))
        note_error(t);
    FILE *f = t->f;
    t->f = NULL;
    if (fclose(f) != 0)
        note_error(t);
    if (!t->error && rename(t->tmp, t->path) != 0)
        note_error(t);
    int e = t->error;
    if (!e) { /* renamed: nothing left to remove */
        rl_cleanup_unregister(t->tmp);
        free(t->tmp);
        t->tmp = NULL;
    }
    rl_trace_abort(t);
    errno = e;
    return e ? -1 : 0;
}

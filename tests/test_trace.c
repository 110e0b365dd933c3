/*
 * test_trace.c -- the Chrome trace writer (harness/trace.c). A trace with
 * awkward names (quotes, a backslash, control characters, UTF-8 and a
 * byte that is not) is read back with a strict JSON reader written here
 * (objects, arrays, strings with every escape, numbers as JSON spells
 * them, true, false, null; nothing after the value), and its structure is
 * checked as Perfetto reads it: traceEvents an array, every complete
 * event with name, ph, ts, dur >= 0, pid and tid, the process and thread
 * names present, numbers that are not finite written as null. A trace
 * that cannot be written (a folder that does not exist, a write past the
 * file size limit) leaves no file at its path and no temporary file.
 */
#include "helpers.h"
#include "internal.h"
#include "rl_trace.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[512];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(trace, .init = setup, .fini = teardown, .timeout = 60);

/* ---- a strict JSON reader ---------------------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } jtype;

typedef struct jvalue {
    jtype type;
    double number; /* J_NUMBER; J_BOOL: 0 or 1 */
    char *string;  /* J_STRING, decoded (UTF-8) */
    int n;         /* J_ARRAY, J_OBJECT: members */
    char **keys;   /* J_OBJECT */
    struct jvalue **items;
} jvalue;

typedef struct {
    const char *p;
    const char *error;
    int depth;
} jreader;

static jvalue *jnew(jtype type)
{
    jvalue *v = calloc(1, sizeof *v);
    cr_assert_not_null(v);
    v->type = type;
    return v;
}

static void jfree(jvalue *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

static void jskip(jreader *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

static jvalue *jfail(jreader *r, const char *why)
{
    if (!r->error)
        r->error = why;
    return NULL;
}

static void jappend(jvalue *v, char *key, jvalue *item)
{
    v->items = realloc(v->items, (size_t)(v->n + 1) * sizeof *v->items);
    cr_assert_not_null(v->items);
    if (v->type == J_OBJECT) {
        v->keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof *v->keys);
        cr_assert_not_null(v->keys);
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(char *out, size_t *len, unsigned cp)
{
    if (cp < 0x80) {
        out[(*len)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*len)++] = (char)(0xC0 | cp >> 6);
        out[(*len)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*len)++] = (char)(0xE0 | cp >> 12);
        out[(*len)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[(*len)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*len)++] = (char)(0xF0 | cp >> 18);
        out[(*len)++] = (char)(0x80 | (cp >> 12 & 0x3F));
        out[(*len)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[(*len)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* The length of a well-formed UTF-8 sequence at s, or 0 (RFC 3629). */
static int utf8_ok(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    int n = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
          : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) ||
        (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

/* A string at r->p (its opening quote), decoded. */
static char *jstring(jreader *r)
{
    if (*r->p != '"')
        return (char *)jfail(r, "a string must start with a quote");
    r->p++;
    size_t cap = strlen(r->p) + 1, len = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    for (;;) {
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            out[len] = 0;
            return out;
        }
        if (c == 0 || c < 0x20) {
            free(out);
            return (char *)jfail(r, c ? "a raw control character in a string" : "an unterminated string");
        }
        if (c != '\\') {
            int n = utf8_ok((const unsigned char *)r->p);
            if (!n) {
                free(out);
                return (char *)jfail(r, "a string that is not UTF-8");
            }
            memcpy(out + len, r->p, (size_t)n);
            len += (size_t)n;
            r->p += n;
            continue;
        }
        char e = r->p[1];
        r->p += 2;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *at = e ? strchr(from, e) : NULL;
        if (at) {
            out[len++] = to[at - from];
        } else if (e == 'u') {
            int cp = hex4(r->p);
            if (cp < 0) {
                free(out);
                return (char *)jfail(r, "a \\u escape without four hex digits");
            }
            r->p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                int lo = r->p[0] == '\\' && r->p[1] == 'u' ? hex4(r->p + 2) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(out);
                    return (char *)jfail(r, "a lone high surrogate");
                }
                r->p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(out);
                return (char *)jfail(r, "a lone low surrogate");
            }
            put_utf8(out, &len, (unsigned)cp);
        } else {
            free(out);
            return (char *)jfail(r, "an unknown escape");
        }
    }
}

/* A number as JSON spells it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static jvalue *jnumber(jreader *r)
{
    const char *s = r->p, *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return jfail(r, "not a value");
    if (*p == '.') {
        if (!(*++p >= '0' && *p <= '9'))
            return jfail(r, "a fraction without digits");
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return jfail(r, "an exponent without digits");
        while (*p >= '0' && *p <= '9')
            p++;
    }
    jvalue *v = jnew(J_NUMBER);
    v->number = strtod(s, NULL);
    r->p = p;
    return v;
}

static jvalue *jvalue_at(jreader *r);

static jvalue *jcontainer(jreader *r, bool object)
{
    if (++r->depth > 64)
        return jfail(r, "nested too deep");
    jvalue *v = jnew(object ? J_OBJECT : J_ARRAY);
    r->p++;
    jskip(r);
    if (*r->p == (object ? '}' : ']')) {
        r->p++;
        r->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        jskip(r);
        if (object) {
            if (!(key = jstring(r)))
                break;
            jskip(r);
            if (*r->p++ != ':') {
                free(key);
                jfail(r, "a key without a colon");
                break;
            }
        }
        jvalue *item = jvalue_at(r);
        if (!item) {
            free(key);
            break;
        }
        jappend(v, key, item);
        jskip(r);
        if (*r->p == ',') {
            r->p++;
            continue;
        }
        if (*r->p == (object ? '}' : ']')) {
            r->p++;
            r->depth--;
            return v;
        }
        jfail(r, object ? "an object without , or }" : "an array without , or ]");
        break;
    }
    jfree(v);
    return NULL;
}

static jvalue *jvalue_at(jreader *r)
{
    jskip(r);
    switch (*r->p) {
    case '{': return jcontainer(r, true);
    case '[': return jcontainer(r, false);
    case '"': {
        char *s = jstring(r);
        if (!s)
            return NULL;
        jvalue *v = jnew(J_STRING);
        v->string = s;
        return v;
    }
    case 't': case 'f': case 'n': {
        static const char *const words[] = {"true", "false", "null"};
        for (int i = 0; i < 3; i++)
            if (!strncmp(r->p, words[i], strlen(words[i]))) {
                r->p += strlen(words[i]);
                jvalue *v = jnew(i == 2 ? J_NULL : J_BOOL);
                v->number = i == 0;
                return v;
            }
        return jfail(r, "not a value");
    }
    default: return jnumber(r);
    }
}

/* The whole text as one JSON value, or NULL and why. */
static jvalue *jparse(const char *text, const char **why)
{
    jreader r = {.p = text};
    jvalue *v = jvalue_at(&r);
    if (v) {
        jskip(&r);
        if (*r.p) {
            jfree(v);
            v = jfail(&r, "something after the value");
        }
    }
    *why = r.error;
    return v;
}

static const jvalue *jget(const jvalue *v, const char *key)
{
    if (!v || v->type != J_OBJECT)
        return NULL;
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return v->items[i];
    return NULL;
}

static const char *jstr(const jvalue *v, const char *key)
{
    const jvalue *s = jget(v, key);
    return s && s->type == J_STRING ? s->string : NULL;
}

/* ---- the reader itself ---------------------------------------------------------- */

Test(trace, the_json_reader_refuses_what_json_does_not_allow)
{
    static const char *const bad[] = {
        "{\"a\":1} x", "{\"a\":1,}", "[1,]", "[01]", "[1.]", "[.5]", "[1e]", "[+1]", "[NaN]",
        "[Infinity]", "['a']", "[\"a\nb\"]", "[\"\\x41\"]", "[\"\\u12\"]", "[\"\\ud800\"]",
        "[\"\xff\"]", "[\"\xc0\xaf\"]", "{a:1}", "{\"a\" 1}", "[1 2]", "[", "", "nul", "[tru]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *why;
        jvalue *v = jparse(bad[i], &why);
        cr_expect_null(v, "accepted: %s", bad[i]);
        jfree(v);
    }
    static const char *const good[] = {
        "{}", "[]", " {\"a\" : [1, -0, 0.5, 1e3, 2E-2, -1.5e+10, true, false, null]} \n",
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"]", "\"caf\xc3\xa9\""};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *why = NULL;
        jvalue *v = jparse(good[i], &why);
        cr_expect_not_null(v, "refused (%s): %s", why, good[i]);
        jfree(v);
    }
    const char *why;
    jvalue *v = jparse("[\"a\\u00e9\\ud83d\\ude00\\n\"]", &why);
    cr_assert_not_null(v);
    cr_expect_str_eq(v->items[0]->string, "a\xc3\xa9\xf0\x9f\x98\x80\n");
    jfree(v);
}

/* ---- the trace ------------------------------------------------------------------ */

/* Reads path back as JSON; fails the test when it is not. */
static jvalue *read_trace(const char *path)
{
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "%s not written", path);
    const char *why = NULL;
    jvalue *v = jparse(text, &why);
    cr_assert_not_null(v, "%s is not JSON (%s):\n%s", path, why, text);
    free(text);
    return v;
}

/* The events of a trace, checked as a viewer reads them: complete events
 * with name, ph, ts, dur >= 0, pid, tid; metadata with its args. */
static const jvalue *checked_events(const jvalue *root)
{
    cr_assert_eq(root->type, J_OBJECT);
    cr_assert_str_eq(jstr(root, "displayTimeUnit"), "ms");
    const jvalue *events = jget(root, "traceEvents");
    cr_assert(events && events->type == J_ARRAY, "traceEvents is an array");
    for (int i = 0; i < events->n; i++) {
        const jvalue *e = events->items[i];
        cr_assert_eq(e->type, J_OBJECT, "event %d is an object", i);
        const char *ph = jstr(e, "ph");
        cr_assert(ph && (!strcmp(ph, "X") || !strcmp(ph, "M")), "event %d: ph %s", i, ph);
        cr_assert_not_null(jstr(e, "name"), "event %d has a name", i);
        const jvalue *pid = jget(e, "pid"), *tid = jget(e, "tid"), *args = jget(e, "args");
        cr_assert(pid && pid->type == J_NUMBER && tid && tid->type == J_NUMBER, "event %d: pid, tid", i);
        cr_assert(args && args->type == J_OBJECT, "event %d: args", i);
        if (!strcmp(ph, "X")) {
            const jvalue *ts = jget(e, "ts"), *dur = jget(e, "dur");
            cr_assert(ts && ts->type == J_NUMBER, "event %d: ts", i);
            cr_assert(dur && dur->type == J_NUMBER && dur->number >= 0, "event %d: dur", i);
            cr_assert_not_null(jstr(e, "cat"), "event %d: cat", i);
        }
    }
    return events;
}

/* The first event of phase ph named name (NULL: any), or NULL. */
static const jvalue *find_event(const jvalue *events, const char *ph, const char *name, int tid)
{
    for (int i = 0; i < events->n; i++) {
        const jvalue *e = events->items[i];
        if (!strcmp(jstr(e, "ph"), ph) && (!name || !strcmp(jstr(e, "name"), name)) &&
            (tid < 0 || jget(e, "tid")->number == tid))
            return e;
    }
    return NULL;
}

Test(trace, awkward_names_come_back_as_written)
{
    static const char *const names[] = {
        "say \"hi\"", "C:\\path\\to", "two\nlines\tand\ra \x01 bell\x7f", "ln \xce\xbc\xe2\x86\x92\xf0\x9f\x98\x80",
        "", "/ slash {}[],:"};
    char path[600];
    snprintf(path, sizeof path, "%s/layer.json", dir);
    rl_trace *t = rl_trace_open(path, "exp-09 \"layer\"\n");
    cr_assert_not_null(t, "%s", strerror(errno));
    cr_assert_not(file_exists(path), "nothing at the path before the close");
    rl_trace_thread_name(t, 1, "contractions \\ \"GEMM\"");
    rl_trace_thread_name(t, 2, "element-wise");
    const char *keys[] = {"bytes", "flop \"count\"", "nan", "inf"};
    double values[] = {1048576, 2.5e12, NAN, -INFINITY};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_assert_eq(rl_trace_complete(t, names[i], i % 2 ? "elementwise" : "contraction",
                                       1000.0 * (double)i, 12.5, 1 + (int)(i % 2), keys, values, 4), 0);
    cr_assert_eq(rl_trace_complete(t, "no args", NULL, 0.25, 0, 3, NULL, NULL, 0), 0);
    /* refused, and absent from the file */
    cr_assert_eq(rl_trace_complete(t, "negative", "x", 0, -1, 1, NULL, NULL, 0), -1);
    cr_assert_eq(rl_trace_complete(t, "nan ts", "x", NAN, 1, 1, NULL, NULL, 0), -1);
    cr_assert_eq(rl_trace_complete(t, "inf dur", "x", 0, INFINITY, 1, NULL, NULL, 0), -1);
    cr_assert_eq(rl_trace_close(t), 0, "%s", strerror(errno));
    cr_assert_eq(count_entries(dir, ".tmp"), 0, "no temporary file left");

    jvalue *root = read_trace(path);
    const jvalue *events = checked_events(root);
    const jvalue *process = find_event(events, "M", "process_name", -1);
    cr_assert_not_null(process);
    cr_assert_str_eq(jstr(jget(process, "args"), "name"), "exp-09 \"layer\"\n");
    const jvalue *thread = find_event(events, "M", "thread_name", 1);
    cr_assert_not_null(thread);
    cr_assert_str_eq(jstr(jget(thread, "args"), "name"), "contractions \\ \"GEMM\"");
    const jvalue *sort = find_event(events, "M", "thread_sort_index", 2);
    cr_assert(sort && jget(jget(sort, "args"), "sort_index")->number == 2);

    int complete = 0;
    for (int i = 0; i < events->n; i++)
        complete += !strcmp(jstr(events->items[i], "ph"), "X");
    cr_assert_eq(complete, (int)(sizeof names / sizeof names[0]) + 1, "the refused events are absent");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const jvalue *e = find_event(events, "X", names[i], -1);
        cr_assert_not_null(e, "event '%s' comes back by its name", names[i]);
        cr_expect_float_eq(jget(e, "ts")->number, 1000.0 * (double)i, 1e-9);
        cr_expect_float_eq(jget(e, "dur")->number, 12.5, 1e-9);
        cr_expect_eq(jget(e, "pid")->number, 1);
        cr_expect_eq(jget(e, "tid")->number, 1 + (int)(i % 2));
        const jvalue *args = jget(e, "args");
        cr_expect_eq(jget(args, "bytes")->number, 1048576);
        cr_expect_float_eq(jget(args, "flop \"count\"")->number, 2.5e12, 1);
        cr_expect_eq(jget(args, "nan")->type, J_NULL, "NaN is written as null");
        cr_expect_eq(jget(args, "inf")->type, J_NULL, "-inf is written as null");
    }
    const jvalue *bare = find_event(events, "X", "no args", 3);
    cr_assert_not_null(bare);
    cr_expect_str_eq(jstr(bare, "cat"), "");
    cr_expect_eq(jget(bare, "args")->n, 0);
    jfree(root);
}

Test(trace, a_byte_that_is_not_utf8_becomes_a_replacement_character)
{
    char path[600];
    snprintf(path, sizeof path, "%s/bytes.json", dir);
    rl_trace *t = rl_trace_open(path, NULL);
    cr_assert_not_null(t);
    /* a stray continuation byte, an overlong '/', a surrogate, a cut sequence */
    cr_assert_eq(rl_trace_complete(t, "a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x82", "c", 0, 1, 1,
                                   NULL, NULL, 0), 0);
    cr_assert_eq(rl_trace_close(t), 0);
    jvalue *root = read_trace(path);
    const jvalue *events = checked_events(root);
    cr_assert_eq(events->n, 1, "no process name when none was given");
    cr_assert_str_eq(jstr(events->items[0], "name"),
                     "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                     "d\xef\xbf\xbd\xef\xbf\xbd");
    jfree(root);
}

Test(trace, an_empty_trace_is_valid_json)
{
    char path[600];
    snprintf(path, sizeof path, "%s/empty.json", dir);
    rl_trace *t = rl_trace_open(path, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(rl_trace_close(t), 0);
    jvalue *root = read_trace(path);
    cr_assert_eq(checked_events(root)->n, 0);
    jfree(root);
}

Test(trace, a_folder_that_does_not_exist_gives_null_and_no_file)
{
    char path[600];
    snprintf(path, sizeof path, "%s/missing/layer.json", dir);
    errno = 0;
    cr_assert_null(rl_trace_open(path, "p"));
    cr_assert_eq(errno, ENOENT, "%s", strerror(errno));
    cr_assert_not(file_exists(path));
    cr_assert_eq(count_entries(dir, ".json"), 0);
}

Test(trace, an_abandoned_trace_leaves_nothing_and_the_old_file_stays)
{
    char path[600];
    snprintf(path, sizeof path, "%s/kept.json", dir);
    cr_assert_eq(rl_write_file_atomic(path, "{\"old\":1}\n"), 0);
    rl_trace *t = rl_trace_open(path, "p");
    cr_assert_not_null(t);
    cr_assert_eq(rl_trace_complete(t, "e", "c", 0, 1, 1, NULL, NULL, 0), 0);
    rl_trace_abort(t);
    char *text = read_file(path, NULL);
    cr_assert_str_eq(text, "{\"old\":1}\n");
    free(text);
    cr_assert_eq(count_entries(dir, ".tmp"), 0);
}

/* A write that fails (past RLIMIT_FSIZE, as on a full disk: EFBIG instead
 * of ENOSPC) in a child process: the close fails, the earlier file at the
 * path is untouched, and the temporary file is gone. */
Test(trace, a_failed_write_leaves_the_path_untouched_and_no_temporary_file)
{
    char path[600];
    snprintf(path, sizeof path, "%s/full.json", dir);
    cr_assert_eq(rl_write_file_atomic(path, "{\"old\":1}\n"), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {.rlim_cur = 8192, .rlim_max = 8192};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(10);
        rl_trace *t = rl_trace_open(path, "p");
        if (!t)
            _exit(11);
        int refused = 0;
        for (int i = 0; i < 2000; i++)
            refused += rl_trace_complete(t, "a step with a long enough name", "contraction", i, 1, 1,
                                         NULL, NULL, 0) != 0;
        if (!refused) /* the buffered writes failed before 2000 events */
            _exit(12);
        if (rl_trace_close(t) == 0)
            _exit(13);
        _exit(errno == EFBIG ? 0 : 14);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's check %d failed",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    char *text = read_file(path, NULL);
    cr_assert_str_eq(text, "{\"old\":1}\n", "the path is untouched");
    free(text);
    cr_assert_eq(count_entries(dir, ".tmp"), 0, "no temporary file left");
}


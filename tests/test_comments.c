/*
 * test_comments.c -- no machine's figure in a code comment. A measured
 * number outlives the run that gave it once it sits in a comment; in a
 * results file or a README it is regenerated with the rest. So a comment
 * says why, and the figure lives where it is regenerated (issue 49).
 *
 * The rule: a comment block is flagged when it holds both
 *   - a figure: a number followed by a unit of rate or time (GB/s, GiB/s,
 *     TB/s, MB/s, MiB/s, TFLOP/s, GFLOP/s, FLOP/s, TFLOPS, TOPS, tokens/s,
 *     s, ms, us, µs, ns, ...), a space or none between; and
 *   - a CPU or GPU model name (H100, H200, A100, T4, L40S, B200, GH200,
 *     Grace, MI300X, RTX 4090, Jetson, Xeon, EPYC, Zen 4, Sapphire Rapids,
 *     Emerald Rapids, Genoa, Apple M2, Graviton, ...), as a word.
 * Both are matched as written, case included: "h200" in a path and "SMs"
 * are neither a model nor a unit.
 * A block is a comment and the comments on the lines right after it: a
 * C comment, a run of // lines, a run of # lines (shell, make, gnuplot),
 * or trailing comments on consecutive lines. A blank or comment-free line
 * ends the block. Only comments are read: strings, code, and a C file's
 * #include or #define lines are not (a datasheet's constant in a table is
 * data with its source, not a comment).
 *
 * Scanned: harness/, kernels/, experiments/, tests/ (not tests/fixtures/,
 * which are inputs) and plots/, their .c .h .cu .cuh .cpp .sh .gp files
 * and scripts with a #! line, and the Makefile. Not scanned: results/
 * (data) and Markdown (READMEs are where figures belong).
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum lang { LANG_C, LANG_SHELL, LANG_GNUPLOT };

/* ---- the detector ---- */

/* Units of rate and time. The number comes right before its unit, so
 * the order matters only where one unit starts another ("seconds" before
 * "second"). */
static const char *const units[] = {
    "TB/s",     "TiB/s",    "GB/s",    "GiB/s",    "MB/s",    "MiB/s",   "KB/s",   "KiB/s",
    "kB/s",     "B/s",      "PFLOP/s", "TFLOP/s",  "GFLOP/s", "MFLOP/s", "FLOP/s", "PFLOPS",
    "TFLOPS",   "GFLOPS",   "MFLOPS",  "FLOPS",    "TOP/s",   "TOPS",    "GOP/s",  "tokens/s",
    "token/s",  "tok/s",    "tokens per second",   "GT/s",    "seconds", "second", "secs",
    "sec",      "ms",       "us",      "\xc2\xb5s" /* µs */,  "ns",      "s",      NULL};

/* Model names matched case-sensitively as a whole word; '%' stands for
 * one or more digits (Zen 4, RTX 4090, MI300X, Apple M3 Max, ...). */
static const char *const models[] = {
    "H100", "H200", "H800", "H20", "GH200", "GB200", "B100", "B200", "B300", "A100", "A800",
    "A10", "A10G", "A30", "A40", "A6000", "V100", "P100", "T4", "L4", "L40", "L40S", "K80",
    "RTX %", "RTX A%", "GTX %", "Quadro", "Tesla", "Titan", "TITAN", "Jetson", "Orin", "Xavier",
    "MI%", "MI%X", "MI%A", "Radeon", "Instinct", "Grace", "Xeon", "EPYC", "Epyc", "Ryzen",
    "Threadripper", "Zen", "Zen %", "Zen%", "Genoa", "Milan", "Bergamo", "Turin",
    "Sapphire Rapids", "Emerald Rapids", "Granite Rapids", "Ice Lake", "Cascade Lake",
    "Skylake", "Alder Lake", "Raptor Lake", "Core i%", "Apple M%", "M% Pro", "M% Max",
    "M% Ultra", "Graviton", "Graviton%", "Neoverse", "Ampere Altra", "Altra", NULL};

static bool word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Whether pattern matches at s ('%': one or more digits); the length. */
static size_t match_model(const char *s, const char *pattern)
{
    const char *q = s;
    for (const char *p = pattern; *p; p++) {
        if (*p == '%') {
            if (!isdigit((unsigned char)*q))
                return 0;
            while (isdigit((unsigned char)*q))
                q++;
        } else if (*p != *q++)
            return 0;
    }
    return (size_t)(q - s);
}

/* The first model name in s as a whole word, its offset and length. */
static const char *find_model(const char *s, size_t *len)
{
    for (const char *at = s; *at; at++) {
        if (at > s && word_char(at[-1]))
            continue;
        for (int i = 0; models[i]; i++) {
            size_t n = match_model(at, models[i]);
            if (n && !word_char(at[n])) {
                *len = n;
                return at;
            }
        }
    }
    return NULL;
}

/* The first figure in s: a number, optional space, a unit, the unit
 * ending a word. Its offset and length. */
static const char *find_figure(const char *s, size_t *len)
{
    for (const char *at = s; *at; at++) {
        if (!isdigit((unsigned char)*at) || (at > s && (word_char(at[-1]) || at[-1] == '.')))
            continue;
        const char *q = at;
        while (isdigit((unsigned char)*q) ||
               ((*q == '.' || *q == ',') && isdigit((unsigned char)q[1])))
            q++;
        if (*q == ' ')
            q++;
        for (int i = 0; units[i]; i++) {
            size_t n = strlen(units[i]);
            if (!strncmp(q, units[i], n) && !word_char(q[n]) && q[n] != '/') {
                *len = (size_t)(q + n - at);
                return at;
            }
        }
    }
    return NULL;
}

/* Whether a comment block's text pairs a figure with a model name; the
 * two, quoted, in why. */
static bool flagged(const char *text, char *why, size_t cap)
{
    size_t flen, mlen;
    const char *fig = find_figure(text, &flen), *model = find_model(text, &mlen);
    if (!fig || !model)
        return false;
    snprintf(why, cap, "\"%.*s\" with \"%.*s\"", (int)flen, fig, (int)mlen, model);
    return true;
}

/* ---- the comment reader ---- */

/* A comment block: its text (lines joined by '\n') and its first line. */
typedef struct {
    char *text;
    size_t len, cap;
    int first, last; /* lines; last < 0: empty */
} block;

typedef void (*on_block)(const block *b, void *ctx);

static void block_add(block *b, char c)
{
    if (b->len + 2 > b->cap) {
        b->cap = b->cap ? 2 * b->cap : 256;
        b->text = realloc(b->text, b->cap);
    }
    b->text[b->len++] = c;
    b->text[b->len] = '\0';
}

/* Starts a comment on line: joins the block if the block ended on this
 * line or the one before, else hands the block over and starts anew. */
static void comment_starts(block *b, int line, on_block fn, void *ctx)
{
    if (b->last >= 0 && line <= b->last + 1) {
        block_add(b, '\n');
        return;
    }
    if (b->last >= 0)
        fn(b, ctx);
    b->len = 0;
    if (b->text)
        b->text[0] = '\0';
    b->first = line;
}

/* Hands each comment block of a file's text to fn. */
static void comment_blocks(const char *s, enum lang lang, on_block fn, void *ctx)
{
    block b = {.last = -1};
    int line = 1;
    char quote = 0;
    bool line_start = true; /* only white space so far on this line */
    for (const char *p = s; *p; p++) {
        if (quote) { /* a string: skipped */
            if (*p == '\\' && p[1] && (lang == LANG_C || quote == '"')) {
                if (p[1] == '\n')
                    line++;
                p++;
            } else if (*p == quote)
                quote = 0;
            else if (*p == '\n') {
                line++;
                line_start = true;
                quote = 0; /* an unclosed quote ends with its line */
            }
            continue;
        }
        if (*p == '\n') {
            line++;
            line_start = true;
            continue;
        }
        if (lang == LANG_C && p[0] == '/' && p[1] == '*') {
            comment_starts(&b, line, fn, ctx);
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++) {
                if (*p == '\n')
                    line++;
                block_add(&b, *p);
            }
            b.last = line;
            if (!*p)
                break;
            p++;
            line_start = false;
            continue;
        }
        bool hash = lang != LANG_C && *p == '#' &&
                    (lang == LANG_GNUPLOT || line_start || isspace((unsigned char)p[-1]) ||
                     p[-1] == ';');
        if ((lang == LANG_C && p[0] == '/' && p[1] == '/') || hash) {
            comment_starts(&b, line, fn, ctx);
            for (p += hash ? 1 : 2; *p && *p != '\n'; p++)
                block_add(&b, *p);
            b.last = line;
            if (!*p)
                break;
            p--; /* the newline, counted above */
            continue;
        }
        if (*p == '"' || (*p == '\'' && !(lang == LANG_SHELL && p > s && p[-1] == '\\')))
            quote = *p;
        /* A shell's $# and ${#...} are not comments: the check above
         * needs white space before '#'. */
        if (!isspace((unsigned char)*p))
            line_start = false;
    }
    if (b.last >= 0)
        fn(&b, ctx);
    free(b.text);
}

/* ---- the scan ---- */

typedef struct {
    const char *path; /* relative to the source root */
    char *report;
    size_t report_len, report_cap;
    int hits;
} scan;

/* The line of the block that holds at, and that line's text. */
static void report_block(const block *b, void *ctx)
{
    scan *sc = ctx;
    char why[256];
    if (!flagged(b->text, why, sizeof why))
        return;
    size_t flen;
    const char *fig = find_figure(b->text, &flen);
    int line = b->first;
    const char *start = b->text;
    for (const char *q = b->text; q < fig; q++)
        if (*q == '\n')
            line++, start = q + 1;
    const char *end = strchr(fig, '\n');
    int n = end ? (int)(end - start) : (int)strlen(start);
    char entry[1024];
    int m = snprintf(entry, sizeof entry, "  %s:%d: %s:%.*s\n", sc->path, line, why, n, start);
    if (m < 0)
        return;
    if ((size_t)m >= sizeof entry)
        m = sizeof entry - 1;
    if (sc->report_len + (size_t)m + 1 > sc->report_cap) {
        sc->report_cap = 2 * (sc->report_cap + (size_t)m + 1);
        sc->report = realloc(sc->report, sc->report_cap);
    }
    memcpy(sc->report + sc->report_len, entry, (size_t)m + 1);
    sc->report_len += (size_t)m;
    sc->hits++;
}

static bool ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n >= m && !strcmp(s + n - m, end);
}

/* The language of a file by its name or its #! line; false: not code. */
static bool code_lang(const char *name, const char *text, enum lang *lang)
{
    static const char *const c_ext[] = {".c", ".h", ".cu", ".cuh", ".cpp", NULL};
    for (int i = 0; c_ext[i]; i++)
        if (ends_with(name, c_ext[i]))
            return *lang = LANG_C, true;
    if (ends_with(name, ".gp"))
        return *lang = LANG_GNUPLOT, true;
    if (ends_with(name, ".sh") || !strcmp(name, "Makefile") || !strncmp(text, "#!", 2))
        return *lang = LANG_SHELL, true;
    return false;
}

static void scan_file(scan *sc, const char *rel)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", RL_SOURCE_ROOT, rel);
    const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    if (strchr(name, '.') && !ends_with(name, ".c") && !ends_with(name, ".h") &&
        !ends_with(name, ".cu") && !ends_with(name, ".cuh") && !ends_with(name, ".cpp") &&
        !ends_with(name, ".gp") && !ends_with(name, ".sh"))
        return; /* images, CSV, Markdown, ...: not read */
    char *text = read_file(path, NULL);
    if (!text)
        return;
    enum lang lang;
    if ((long)strlen(text) == file_size(path) && code_lang(name, text, &lang)) {
        sc->path = rel;
        comment_blocks(text, lang, report_block, sc);
    }
    free(text);
}

static void scan_tree(scan *sc, const char *rel)
{
    if (!strcmp(rel, "tests/fixtures"))
        return;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", RL_SOURCE_ROOT, rel);
    DIR *d = opendir(path);
    cr_assert_not_null(d, "%s", path);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char child[1024], full[3072];
        snprintf(child, sizeof child, "%s/%s", rel, e->d_name);
        snprintf(full, sizeof full, "%s/%s", RL_SOURCE_ROOT, child);
        struct stat st;
        if (stat(full, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            scan_tree(sc, child);
        else if (S_ISREG(st.st_mode))
            scan_file(sc, child);
    }
    closedir(d);
}

/* ---- the tests ---- */

/* The comment blocks of a literal, one text per block, joined by '|'. */
static void collect(const block *b, void *ctx)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 1024 - n, "%s%d:%s", n ? "|" : "", b->first, b->text);
}

static bool any_flagged(const char *source, enum lang lang)
{
    scan sc = {.path = "literal"};
    comment_blocks(source, lang, report_block, &sc);
    free(sc.report);
    return sc.hits > 0;
}

TestSuite(comments);

/* The detector's fixtures: made-up figures and model names, each on a line
 * of its own and joined by the compiler, so that no line of this file pairs
 * a figure with a machine (the rule it tests, and a reader's first guess
 * that it is a measurement). */
#define GPU_A "H200"
#define GPU_B "H100"
#define GPU_C "RTX 4090"
#define CPU_A "Sapphire Rapids"
#define CPU_B "Zen 4"
#define CPU_C "Xeon"
#define RATE_A "4.1 TB/s"
#define RATE_B "~1,200 GB/s"
#define TIME_A "38.2ms"
#define TIME_B "0.66 us"
#define TIME_C "3 s"
#define TIME_D "12 ms"

Test(comments, the_detector_pairs_a_figure_with_a_model_name)
{
    char why[256];
    cr_assert(flagged(" on an " GPU_A " this loop streams " RATE_A " ", why, sizeof why));
    cr_assert_str_eq(why, "\"" RATE_A "\" with \"" GPU_A "\"");
    cr_assert(flagged(" " TIME_A " on " CPU_A, why, sizeof why));
    cr_assert(flagged(" " CPU_B ": " TIME_B " a call", why, sizeof why));
    cr_assert(flagged(" " RATE_B " (" GPU_C ")", why, sizeof why));
    cr_assert(flagged(" the " CPU_C " VM takes " TIME_C, why, sizeof why));
    cr_assert(!flagged(" streams at " RATE_A ", the roof", why, sizeof why), "a unit, no model");
    cr_assert(!flagged(" an " GPU_A "'s HBM is the roof here", why, sizeof why), "a model, no figure");
    cr_assert(!flagged(" " GPU_A " has 132 SMs and 2 copy engines", why, sizeof why),
              "a count is not a figure");
    cr_assert(!flagged(" sm_90 and h200-quick: " TIME_C, why, sizeof why), "a path, not a model");
    cr_assert(!flagged(" the Tensor cores give 4x in 2 steps", why, sizeof why));
    cr_assert(!flagged(" EXAMPLE 12 items", why, sizeof why));
}

Test(comments, only_comments_are_read_and_a_block_is_consecutive_lines)
{
    /* A datasheet constant in code, a string and a #define: not comments. */
    cr_assert(!any_flagged("#define H200_BW 4.8 /* TB/s */\n"
                           "static const char *s = \"" GPU_A ": 4.8 TB/s\";\n"
                           "double h100 = 3.35; // " GPU_B "\n",
                           LANG_C));
    /* A comment on the next line joins the block; a blank line ends it. */
    cr_assert(any_flagged("x = 1; // on an " GPU_B "\ny = 2; // it took " TIME_D "\n", LANG_C));
    cr_assert(!any_flagged("// on an " GPU_B "\n\n// it took " TIME_D "\n", LANG_C));
    cr_assert(any_flagged("/* on an " GPU_B "\n * it took " TIME_D " */\n", LANG_C));
    cr_assert(!any_flagged("/* on an " GPU_B " */ int x = '\"'; /* see below */\n\n"
                           "/* " TIME_D " */\n",
                           LANG_C));
    /* A shell's strings and $# are not comments; '#' after space is. */
    cr_assert(!any_flagged("echo \"# " GPU_B " " TIME_D "\"\nn=$#\n", LANG_SHELL));
    cr_assert(any_flagged("run # the " GPU_B " took " TIME_D "\n", LANG_SHELL));
    cr_assert(!any_flagged("set label '" GPU_B " # " TIME_D "'\n", LANG_GNUPLOT));
    cr_assert(any_flagged("plot x # " GPU_B ", " TIME_D "\n", LANG_GNUPLOT));

    char blocks[1024] = "";
    comment_blocks("a // one\nb // two\n\n/* three\n four */ c\n# not a comment in C\n", LANG_C,
                   collect, blocks);
    cr_assert_str_eq(blocks, "1: one\n two|4: three\n four ");
}

Test(comments, no_comment_carries_a_machines_figure)
{
    scan sc = {0};
    static const char *const trees[] = {"harness", "kernels", "experiments", "plots", "tests",
                                        NULL};
    for (int i = 0; trees[i]; i++)
        scan_tree(&sc, trees[i]);
    scan_file(&sc, "Makefile");
    cr_expect_eq(sc.hits, 0,
                 "%d comment block(s) pair a figure with a machine; say why in the comment and "
                 "keep the figure in a README or a results file:\n%s",
                 sc.hits, sc.report ? sc.report : "");
    free(sc.report);
}

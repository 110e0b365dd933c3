/*
 * sass.c -- the main loop of a CUDA kernel, read from the machine code
 * (SASS) nvdisasm prints (nvdisasm -gi -c on the build's cubins; no GPU).
 *
 * The listing is cut into basic blocks (a label starts one, a branch or an
 * exit ends one), their edges drawn (a converged warp never takes BRA.DIV,
 * the branch to the slow path of a warp-wide operation, so that edge is
 * left out), and the loops found as a compiler finds them: an edge back to
 * a block that dominates its source, and the blocks that reach it without
 * passing the header. The main loop is the innermost loop that issues the
 * kernel's stream loads (rl_stream_rule).
 *
 * An iteration is every instruction of the loop's body once: both sides
 * of a branch, as a warp whose lanes disagree runs both, except the code
 * the source marks as rare ("rl-model: rare" on the line that opens the
 * block: a running maximum that rises, a slow path), whose instructions
 * the listing's line information ties to those lines, inlined code
 * included. A marker is a claim about the data, so it says why in the
 * source.
 *
 * The blocks, their edges, dominators and natural loops: sass_cfg.c. What
 * each instruction is and moves, and the replay of its waits: sass_ins.c.
 */
#include "sass_internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* "/x/kernels/attention.cu", line 121 ... inlined at "...", line 9: is any
 * (file, line) of the chain inside a rare range? */
static bool location_is_rare(const char *loc, const rl_rare_range *rare, int nrare)
{
    for (const char *q = strchr(loc, '"'); q; q = strchr(q, '"')) {
        const char *end = strchr(q + 1, '"');
        if (!end)
            break;
        const char *name = q + 1;
        for (const char *s = q + 1; s < end; s++)
            if (*s == '/')
                name = s + 1;
        const char *ln = strstr(end, "line ");
        int line = ln ? atoi(ln + 5) : 0;
        size_t len = (size_t)(end - name);
        for (int r = 0; r < nrare; r++)
            if (len == strlen(rare[r].file) && !strncmp(name, rare[r].file, len) &&
                line >= rare[r].first && line <= rare[r].last)
                return true;
        q = end + 1;
    }
    return false;
}

/* One line of the listing ("/ *0110* /  @!P0 LDG.E.128 R24, desc[UR8][R6.64] ;",
 * the address in a comment) into i. */
static bool parse_instruction(const char *line, ins *i)
{
    const char *p = strstr(line, "/*");
    if (!p)
        return false;
    char *end;
    unsigned long addr = strtoul(p + 2, &end, 16);
    if (end == p + 2 || strncmp(end, "*/", 2))
        return false;
    *i = (ins){.addr = (unsigned)addr};
    p = end + 2;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '@') {
        size_t n = strcspn(p, " \t");
        i->conditional = !(n == 3 && !strncmp(p, "@PT", 3)) && !(n == 4 && !strncmp(p, "@UPT", 4));
        if ((n == 4 && !strncmp(p, "@!PT", 4)) || (n == 5 && !strncmp(p, "@!UPT", 5)))
            return false; /* never runs */
        p += n;
        while (isspace((unsigned char)*p))
            p++;
    }
    size_t n = strcspn(p, " \t;");
    if (n == 0 || n >= sizeof i->op)
        return false;
    memcpy(i->op, p, n);
    p += n;
    while (isspace((unsigned char)*p))
        p++;
    n = strcspn(p, ";");
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    snprintf(i->args, sizeof i->args, "%.*s", (int)n, p);
    const char *t = strstr(i->args, "`(");
    if (t) {
        size_t m = strcspn(t + 2, ")");
        snprintf(i->target, sizeof i->target, "%.*s", (int)m, t + 2);
    }
    /* BRA.U !UP0, `(.L_x_5): a uniform predicate among the operands */
    if (sass_base_is(i, "BRA") && (i->args[0] == '!' || starts_with(i->args, "P") || starts_with(i->args, "UP")) &&
        strchr(i->args, ','))
        i->conditional = true;
    return true;
}

static void add_instruction(listing *l, const ins *i)
{
    if (l->n == l->cap)
        l->v = sass_grow(l->v, &l->cap, sizeof(ins));
    l->v[l->n++] = *i;
}

static void add_label(listing *l, const char *name, size_t len)
{
    if (l->nlabels == l->label_cap)
        l->labels = sass_grow(l->labels, &l->label_cap, sizeof(label));
    label *b = &l->labels[l->nlabels++];
    snprintf(b->name, sizeof b->name, "%.*s", (int)(len < sizeof b->name ? len : sizeof b->name - 1), name);
    b->at = l->n;
}

/* The function's instructions: from its ".text.<name>:" line to the next
 * section or the first internal subroutine ($__internal_...). */
static bool read_function(const char *text, const char *function, const rl_rare_range *rare,
                          int nrare, listing *l)
{
    char head[512];
    snprintf(head, sizeof head, "\n.text.%s:", function);
    const char *p = strstr(text, head);
    if (!p)
        return false;
    p = strchr(p + 1, '\n');
    char loc[512] = "";
    while (p && *p) {
        p++;
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        const char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (starts_with(s, "//----") || starts_with(s, ".section") || s[0] == '$')
            break;
        if (starts_with(s, "//## File"))
            snprintf(loc, sizeof loc, "%s", s);
        else if (s[0] == '.' && strlen(s) > 1 && s[strlen(s) - 1] == ':')
            add_label(l, s, strlen(s) - 1);
        else {
            ins i;
            if (parse_instruction(s, &i)) {
                i.rare = nrare > 0 && location_is_rare(loc, rare, nrare);
                add_instruction(l, &i);
            }
        }
        p = eol;
    }
    return l->n > 0;
}

int sass_label_at(const listing *l, const char *name)
{
    for (int i = 0; i < l->nlabels; i++)
        if (!strcmp(l->labels[i].name, name))
            return l->labels[i].at;
    return -1;
}

/* ---- the main loop -------------------------------------------------------------------- */

static int popcount(const word *set, int words)
{
    int n = 0;
    for (int w = 0; w < words; w++)
        n += __builtin_popcountll(set[w]);
    return n;
}

static bool in_body(const listing *l, const word *body, int k) { return !body || sass_bit(body, l->v[k].block); }

static void count_body(const listing *l, const cfg *g, const word *body, rl_stream_rule rule,
                       rl_sass_loop *out)
{
    bool first = true;
    for (int k = 0; k < l->n; k++) {
        if (!in_body(l, body, k))
            continue;
        sass_count(&l->v[k], rule, out);
        if (first || l->v[k].addr < out->first_addr)
            out->first_addr = l->v[k].addr;
        if (first || l->v[k].addr > out->last_addr)
            out->last_addr = l->v[k].addr;
        first = false;
    }
    out->blocks = body ? popcount(body, g->words) : g->n;
}

/* Twice through the loop, counting the waits of the second (steady)
 * pass; a kernel without a loop, once. */
static void replay_body(const listing *l, const word *body, rl_stream_rule rule, rl_sass_loop *out)
{
    sass_replay *r = sass_replay_new();
    int passes = body ? 2 : 1;
    for (int pass = 0; pass < passes; pass++)
        for (int k = 0; k < l->n; k++)
            if (in_body(l, body, k))
                sass_replay_step(r, &l->v[k], rule, pass == passes - 1);
    sass_replay_end(r, out);
}

/* The body's main work an iteration (stream bytes, or tensor multiply-
 * adds), rare code aside, and its instructions. */
static double main_work_in(const listing *l, const word *body, const rl_sass_options *o, int *instructions)
{
    double work = 0;
    *instructions = 0;
    for (int k = 0; k < l->n; k++)
        if (in_body(l, body, k) && !l->v[k].rare) {
            work += sass_main_work(&l->v[k], o);
            ++*instructions;
        }
    return work;
}

typedef struct candidate {
    int header, instructions;
    double work;
    word *body;
} candidate;

/* Whether candidate i holds another candidate's loop: then it is not the
 * innermost. */
static bool holds_another(const candidate *c, int n, int i)
{
    for (int j = 0; j < n; j++)
        if (j != i && sass_bit(c[i].body, c[j].header))
            return true;
    return false;
}

/* The main loop: of the loops with main work that hold no other such loop
 * (the innermost: a switch over instances puts several side by side), the
 * one with the most work an iteration, the fewest instructions on a tie.
 * Its body (a bitset) or NULL, and its header in *header. */
static word *main_loop(const listing *l, const cfg *g, const rl_sass_options *o, int *header)
{
    candidate *c = malloc(sizeof *c * (size_t)g->n);
    int n = 0, best = -1;
    for (int h = 0; h < g->n; h++) {
        if (!g->reached[h] || !sass_is_header(g, h))
            continue;
        c[n] = (candidate){.header = h, .body = malloc(sizeof(word) * (size_t)g->words)};
        sass_natural_loop(g, h, c[n].body);
        c[n].work = main_work_in(l, c[n].body, o, &c[n].instructions);
        if (c[n].work > 0)
            n++;
        else
            free(c[n].body);
    }
    for (int i = 0; i < n; i++)
        if (!holds_another(c, n, i) &&
            (best < 0 || c[i].work > c[best].work ||
             (c[i].work == c[best].work && c[i].instructions < c[best].instructions)))
            best = i;
    word *body = best >= 0 ? c[best].body : NULL;
    *header = best >= 0 ? c[best].header : -1;
    for (int i = 0; i < n; i++)
        if (i != best)
            free(c[i].body);
    free(c);
    return body;
}

/* Loops inside the counted code (the main loop's body, or the whole
 * kernel) run trips times: their instructions are counted trips - 1 more. */
static void count_inner_loops(const listing *l, const cfg *g, const word *region, int header,
                              const rl_sass_options *o, rl_sass_loop *out)
{
    if (o->inner_trips <= 1)
        return;
    word *inner = malloc(sizeof(word) * (size_t)g->words);
    for (int h = 0; h < g->n; h++) {
        if (h == header || !g->reached[h] || !sass_is_header(g, h) || (region && !sass_bit(region, h)))
            continue;
        sass_natural_loop(g, h, inner);
        for (int t = 1; t < o->inner_trips; t++)
            for (int k = 0; k < l->n; k++)
                if (sass_bit(inner, l->v[k].block))
                    sass_count(&l->v[k], o->rule, out);
    }
    free(inner);
}

bool rl_sass_loop_of(const char *text, const char *function, const rl_sass_options *o,
                     rl_sass_loop *out, char *why, size_t len)
{
    *out = (rl_sass_loop){0};
    listing l = {0};
    bool ok = text && read_function(text, function, o->rare, o->nrare, &l);
    if (ok) {
        cfg g = {0};
        sass_cfg_build(&l, &g);
        int header;
        word *body = main_loop(&l, &g, o, &header);
        out->found = body != NULL;
        count_body(&l, &g, body, o->rule, out);
        count_inner_loops(&l, &g, body, header, o, out);
        replay_body(&l, body, o->rule, out);
        free(body);
        sass_cfg_free(&g);
    } else {
        snprintf(why, len, "%s: not in the listing", function);
    }
    free(l.v);
    free(l.labels);
    return ok;
}

/* ---- rare code, marked in the source -------------------------------------------------- */

int rl_rare_ranges_scan(const char *path, const char *marker, rl_rare_range *out, int max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char line[1024];
    int n = 0, lineno = 0, open_at = 0, depth = 0;
    bool inside = false;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!inside && strstr(line, marker)) {
            inside = true;
            open_at = lineno;
            depth = 0;
        }
        if (!inside)
            continue;
        for (const char *p = line; *p; p++) {
            if (p[0] == '/' && p[1] == '/')
                break; /* a comment's braces do not count */
            if (*p == '{')
                depth++;
            else if (*p == '}' && --depth == 0) {
                if (n < max) {
                    snprintf(out[n].file, sizeof out[n].file, "%s", base);
                    out[n].first = open_at + 1;
                    out[n].last = lineno;
                }
                n++;
                inside = false;
                break;
            }
        }
    }
    fclose(f);
    return n < max ? n : max;
}


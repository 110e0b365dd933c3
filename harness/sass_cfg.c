/*
 * sass_cfg.c -- a listing's control flow, as a compiler finds it: basic
 * blocks (a label starts one, a branch or an exit ends one), their edges
 * (a converged warp never takes BRA.DIV, so that edge is left out; BRX's
 * targets from its operands), the dominators of the reached blocks, and
 * the natural loop of a header (sass.c picks the main one).
 */
#include "sass_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool edge(const cfg *g, int from, int to)
{
    for (int i = 0; i < g->succ[from].n; i++)
        if (g->succ[from].v[i] == to)
            return true;
    return false;
}

static void set_bit(word *set, int i) { set[i / WBITS] |= (word)1 << (i % WBITS); }

static bool ends_block(const ins *i)
{
    return sass_base_is(i, "BRA") || sass_base_is(i, "EXIT") || sass_base_is(i, "RET") || sass_base_is(i, "BRX") ||
           sass_base_is(i, "JMP") || sass_base_is(i, "JMX") || sass_base_is(i, "KILL");
}

static void build_blocks(listing *l, cfg *g)
{
    bool *leader = calloc((size_t)l->n + 1, 1);
    leader[0] = true;
    for (int i = 0; i < l->nlabels; i++)
        if (l->labels[i].at < l->n)
            leader[l->labels[i].at] = true;
    for (int i = 0; i + 1 < l->n; i++)
        if (ends_block(&l->v[i]))
            leader[i + 1] = true;
    g->first = malloc(sizeof(int) * ((size_t)l->n + 1));
    g->n = 0;
    for (int i = 0; i < l->n; i++) {
        if (leader[i])
            g->first[g->n++] = i;
        l->v[i].block = g->n - 1;
    }
    g->first[g->n] = l->n;
    free(leader);
}

static void add_succ(succs *s, int block)
{
    if (block >= 0 && s->n < MAX_SUCC)
        s->v[s->n++] = block;
}

static int block_of_label(const listing *l, const char *name)
{
    int t = sass_label_at(l, name);
    return t >= 0 && t < l->n ? l->v[t].block : -1;
}

/* BRX's targets: (*"BRANCH_TARGETS .L_x_135,.L_x_136"*) among its operands. */
static void add_indirect(const listing *l, const ins *i, succs *s)
{
    const char *p = strstr(i->args, "BRANCH_TARGETS ");
    if (!p)
        return;
    for (p += strlen("BRANCH_TARGETS "); *p && *p != '"';) {
        size_t n = strcspn(p, ",\"");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        add_succ(s, block_of_label(l, name));
        p += n + (p[n] == ',');
    }
}

/* The successors of each block. A converged warp falls through BRA.DIV. */
static void build_edges(const listing *l, cfg *g)
{
    g->succ = calloc((size_t)g->n, sizeof *g->succ);
    for (int b = 0; b < g->n; b++) {
        const ins *last = &l->v[g->first[b + 1] - 1];
        int fall = b + 1 < g->n ? b + 1 : -1;
        bool stops = false;
        if (sass_base_is(last, "BRA") && !strstr(last->op, ".DIV")) {
            if (last->target[0])
                add_succ(&g->succ[b], block_of_label(l, last->target));
            stops = !last->conditional;
        } else if (sass_base_is(last, "BRX")) {
            add_indirect(l, last, &g->succ[b]);
            stops = !last->conditional;
        } else if (ends_block(last) && !sass_base_is(last, "BRA")) {
            stops = !last->conditional;
        }
        if (!stops)
            add_succ(&g->succ[b], fall);
    }
}

static void mark_reached(cfg *g, int b)
{
    if (b < 0 || g->reached[b])
        return;
    g->reached[b] = true;
    for (int i = 0; i < g->succ[b].n; i++)
        mark_reached(g, g->succ[b].v[i]);
}

/* Iterative dominators over the reached blocks. */
static void build_dominators(cfg *g)
{
    g->words = (g->n + WBITS - 1) / WBITS;
    g->dom = malloc(sizeof(word) * (size_t)g->words * (size_t)g->n);
    g->reached = calloc((size_t)g->n, 1);
    mark_reached(g, 0);
    for (int b = 0; b < g->n; b++)
        memset(g->dom + (size_t)b * g->words, b == 0 ? 0 : 0xff, sizeof(word) * (size_t)g->words);
    set_bit(g->dom, 0);
    word *tmp = malloc(sizeof(word) * (size_t)g->words);
    for (bool changed = true; changed;) {
        changed = false;
        for (int b = 1; b < g->n; b++) {
            if (!g->reached[b])
                continue;
            memset(tmp, 0xff, sizeof(word) * (size_t)g->words);
            for (int p = 0; p < g->n; p++)
                if (g->reached[p] && edge(g, p, b))
                    for (int w = 0; w < g->words; w++)
                        tmp[w] &= g->dom[(size_t)p * g->words + w];
            set_bit(tmp, b);
            word *d = g->dom + (size_t)b * g->words;
            if (memcmp(d, tmp, sizeof(word) * (size_t)g->words)) {
                memcpy(d, tmp, sizeof(word) * (size_t)g->words);
                changed = true;
            }
        }
    }
    free(tmp);
}

/* The natural loop of header h: the blocks with a back edge to h, and
 * every block that reaches one of them without passing h. */
void sass_natural_loop(const cfg *g, int h, word *body)
{
    memset(body, 0, sizeof(word) * (size_t)g->words);
    set_bit(body, h);
    int *stack = malloc(sizeof(int) * (size_t)g->n), top = 0;
    for (int b = 0; b < g->n; b++)
        if (g->reached[b] && edge(g, b, h) &&
            sass_bit(g->dom + (size_t)b * g->words, h) && !sass_bit(body, b)) {
            set_bit(body, b);
            stack[top++] = b;
        }
    while (top > 0) {
        int b = stack[--top];
        for (int p = 0; p < g->n; p++)
            if (g->reached[p] && edge(g, p, b) && !sass_bit(body, p)) {
                set_bit(body, p);
                stack[top++] = p;
            }
    }
    free(stack);
}

bool sass_is_header(const cfg *g, int h)
{
    for (int b = 0; b < g->n; b++)
        if (g->reached[b] && edge(g, b, h) &&
            sass_bit(g->dom + (size_t)b * g->words, h))
            return true;
    return false;
}

void sass_cfg_build(listing *l, cfg *g)
{
    build_blocks(l, g);
    build_edges(l, g);
    build_dominators(g);
}

void sass_cfg_free(cfg *g)
{
    free(g->first);
    free(g->succ);
    free(g->dom);
    free(g->reached);
}

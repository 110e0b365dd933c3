/*
 * sass_internal.h -- what sass.c (the listing, its main loop), sass_cfg.c
 * (its blocks, edges, dominators, loops) and sass_ins.c (one instruction,
 * the replay of the waits) share.
 */
#ifndef SASS_INTERNAL_H
#define SASS_INTERNAL_H

#include "rl_gpu_model.h"

#include <stdint.h>

typedef struct ins {
    unsigned addr;
    char op[48];    /* the opcode and its modifiers: LDG.E.EF.128 */
    char args[320]; /* the operands, without the closing ';' */
    char target[64]; /* the label a branch names, or "" */
    bool conditional; /* a predicate guards it (not @PT) */
    bool rare;
    int block;
} ins;

typedef struct label {
    char name[64];
    int at; /* the instruction it names */
} label;

typedef struct listing {
    ins *v;
    int n, cap;
    label *labels;
    int nlabels, label_cap;
} listing;

/* The instruction a label names (-1: none). */
int sass_label_at(const listing *l, const char *name);

/* ---- sass_cfg.c: blocks, edges, dominators, loops ---- */

typedef uint64_t word;
enum { WBITS = 64 };

/* A block's successors: its fall-through, its branch's target, or an
 * indirect branch's targets (BRX: a switch). */
enum { MAX_SUCC = 32 };
typedef struct succs {
    int n, v[MAX_SUCC];
} succs;

typedef struct cfg {
    int n;          /* blocks */
    int *first;     /* each block's first instruction; first[n] = the listing's end */
    succs *succ;
    int words;      /* per bitset */
    word *dom;      /* n bitsets */
    bool *reached;
} cfg;

static inline bool sass_bit(const word *set, int i) { return set[i / WBITS] >> (i % WBITS) & 1; }
/* The blocks of the listing (each instruction's block set), their edges
 * and the reached blocks' dominators; freed by sass_cfg_free. */
void sass_cfg_build(listing *l, cfg *g);
void sass_cfg_free(cfg *g);
/* The natural loop of header h: the blocks with a back edge to h, and
 * every block that reaches one of them without passing h (g->words words). */
void sass_natural_loop(const cfg *g, int h, word *body);
/* Whether h heads a loop: a reached block that h dominates branches to it. */
bool sass_is_header(const cfg *g, int h);

/* p with room for twice the elements of size (at least 256); exits when
 * memory runs out. */
void *sass_grow(void *p, int *cap, size_t size);
/* Whether the opcode's first word is base: LDG for LDG.E.EF.128. */
bool sass_base_is(const ins *i, const char *base);
bool sass_is_stream(const ins *i, rl_stream_rule rule);
/* What an instruction adds to a loop's main work: a stream load's bytes a
 * warp, or (o->tensor) a tensor instruction's multiply-adds. */
double sass_main_work(const ins *i, const rl_sass_options *o);
/* Adds one instruction of an iteration to out (rare ones to out->rare). */
void sass_count(const ins *i, rl_stream_rule rule, rl_sass_loop *out);

/* The replay of a loop's waits: each instruction in listing order, the
 * waits of the passes with counting set counted, then the result. */
typedef struct sass_replay sass_replay;
sass_replay *sass_replay_new(void);
void sass_replay_step(sass_replay *r, const ins *i, rl_stream_rule rule, bool counting);
void sass_replay_end(sass_replay *r, rl_sass_loop *out);

#endif

/*
 * sass_ins.c -- one instruction of a kernel's SASS (sass.c reads the
 * listing): the pipe it issues to, the bytes it moves, the registers it
 * reads and writes; and the replay of a loop's waits for its stream loads.
 *
 * Little's law needs the bytes a warp has in flight while it waits for
 * memory. The loop is replayed twice in listing order, the second time in
 * steady state (loads issued near the end of one iteration and used in the
 * next count as in flight), following registers: a stream load's
 * destination registers are pending until an instruction reads one of
 * them, and then the warp waits, for that load and (completing in order)
 * every older one. A wait is serial when the load it waits for was issued
 * after the previous serial wait: each serial wait costs one memory
 * latency, and the bytes pending at it are what the warp keeps in flight
 * meanwhile. cp.async copies (LDGSTS) are pending by group until a
 * DEPBAR.LE lets at most N groups stay.
 */
#include "sass_internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const rl_pipe_names[RL_PIPES] = {"fma", "half", "alu", "xu", "shfl", "lsu", "tensor", "ctrl"};

void *sass_grow(void *p, int *cap, size_t size)
{
    *cap = *cap ? 2 * *cap : 256;
    void *q = realloc(p, size * (size_t)*cap);
    if (!q) {
        fprintf(stderr, "sass: out of memory\n");
        exit(1);
    }
    return q;
}

/* The opcode's first word: LDG of LDG.E.EF.128. */
static void base_of(const char *op, char *out, size_t len)
{
    size_t n = strcspn(op, ".");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), op);
}

bool sass_base_is(const ins *i, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(i->op, base, n) && (i->op[n] == '\0' || i->op[n] == '.');
}

static bool is_in(const char *word, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(word, *list))
            return true;
    return false;
}

rl_pipe rl_sass_pipe_of(const char *opcode)
{
    static const char *const tensor[] = {"HMMA", "IMMA", "HGMMA", "IGMMA", "BMMA", "DMMA", NULL};
    static const char *const xu[] = {"MUFU", "I2F", "F2I", "F2F", "I2I", "FRND", "F2FP", "I2FP", NULL};
    static const char *const lsu[] = {"LDG", "STG", "LDS", "STS", "LD", "ST", "LDL", "STL", "LDSM",
                                      "LDGSTS", "ATOM", "ATOMS", "ATOMG", "RED", "MATCH", NULL};
    static const char *const fma[] = {"FFMA", "FADD", "FMUL", "FFMA32I", "FADD32I", "FMUL32I",
                                      "IMAD", "IMAD32I", "IDP", "IDP4A", "DFMA", "DADD", "DMUL", NULL};
    static const char *const half[] = {"HFMA2", "HADD2", "HMUL2", "HFMA2_32I", "HADD2_32I", "HMUL2_32I",
                                       "HSET2", NULL};
    static const char *const alu[] = {"IADD3", "IADD", "IADD32I", "LOP3", "LOP", "LOP32I", "SHF",
                                      "SHL", "SHR", "ISETP", "FSETP", "HSETP2", "SEL", "FSEL",
                                      "FMNMX", "IMNMX", "VIMNMX", "HMNMX2", "PRMT", "LEA", "MOV",
                                      "MOV32I", "CS2R", "P2R", "R2P", "PLOP3", "IABS", "POPC", "FLO",
                                      "BREV", "SGXT", "BMSK", "VOTE", "FCHK", "ISCADD", "IMNMX", NULL};
    char base[24];
    base_of(opcode, base, sizeof base);
    if (!strcmp(base, "SHFL"))
        return RL_PIPE_SHFL;
    if (is_in(base, tensor))
        return RL_PIPE_TENSOR;
    if (is_in(base, xu))
        return RL_PIPE_XU;
    if (is_in(base, lsu))
        return RL_PIPE_LSU;
    if (is_in(base, fma))
        return RL_PIPE_FMA;
    if (is_in(base, half))
        return RL_PIPE_HALF;
    if (is_in(base, alu))
        return RL_PIPE_ALU;
    return RL_PIPE_CTRL;
}

/* ---- what an instruction moves ------------------------------------------------------ */

/* Bytes a lane moves: .128 16, .64 8, .U16/.S16 2, .U8/.S8 1, else 4. */
static int lane_bytes(const char *op)
{
    if (strstr(op, ".128"))
        return 16;
    if (strstr(op, ".64"))
        return 8;
    if (strstr(op, ".U16") || strstr(op, ".S16"))
        return 2;
    if (strstr(op, ".U8") || strstr(op, ".S8"))
        return 1;
    return 4;
}

/* Bytes a warp's instruction moves through L1 or shared memory: LDSM
 * loads 1, 2 or 4 8x8 matrices of 16-bit values (128 bytes each). */
static double warp_bytes(const ins *i)
{
    if (sass_base_is(i, "LDSM")) {
        const char *x = strrchr(i->op, '.');
        int m = x ? atoi(x + 1) : 1;
        return 128.0 * (m > 0 ? m : 1);
    }
    return 32.0 * lane_bytes(i->op);
}

static bool is_memory(const ins *i)
{
    static const char *const mem[] = {"LDG", "STG", "LDS", "STS", "LD", "ST", "LDSM", "LDGSTS",
                                      "LDL", "STL", NULL};
    char base[24];
    base_of(i->op, base, sizeof base);
    return is_in(base, mem);
}

bool sass_is_stream(const ins *i, rl_stream_rule rule)
{
    switch (rule) {
    case RL_STREAM_EF: return sass_base_is(i, "LDG") && strstr(i->op, ".EF");
    case RL_STREAM_GLOBAL: return sass_base_is(i, "LDG") || sass_base_is(i, "LD");
    case RL_STREAM_ASYNC: return sass_base_is(i, "LDGSTS");
    }
    return false;
}

/* HMMA.16816.F32: 16 x 8 x 16 multiply-adds a warp; HMMA.1688: 16 x 8 x 8. */
static double tensor_fma_of(const ins *i)
{
    const char *d = strchr(i->op, '.');
    if (!d || strncmp(d + 1, "16", 2) || !isdigit((unsigned char)d[3]))
        return 0;
    int m = 16, n = d[3] - '0', k = atoi(d + 4);
    return (double)m * n * k;
}

double sass_main_work(const ins *i, const rl_sass_options *o)
{
    if (o->tensor)
        return rl_sass_pipe_of(i->op) == RL_PIPE_TENSOR ? tensor_fma_of(i) : 0;
    return sass_is_stream(i, o->rule) ? warp_bytes(i) : 0;
}

/* ---- registers, for the waits ------------------------------------------------------- */

/* (word and WBITS: sass_internal.h's bitsets) */
typedef struct regs {
    word w[4]; /* R0..R255 */
} regs;

static void reg_add(regs *r, int n, int count)
{
    for (int k = 0; k < count && n + k < 256; k++)
        r->w[(n + k) / WBITS] |= (word)1 << ((n + k) % WBITS);
}

static bool reg_meet(const regs *a, const regs *b)
{
    for (int k = 0; k < 4; k++)
        if (a->w[k] & b->w[k])
            return true;
    return false;
}

/* The R registers named in s (R6.64: R6 and R7), uniform ones (UR) aside. */
static void regs_in(const char *s, regs *out)
{
    for (const char *p = s; *p; p++) {
        if (*p != 'R' || !isdigit((unsigned char)p[1]) || (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
            continue;
        char *end;
        int n = (int)strtol(p + 1, &end, 10);
        reg_add(out, n, !strncmp(end, ".64", 3) ? 2 : 1);
        p = end - 1;
    }
}

/* What an instruction reads: every operand but the first (its
 * destination), or every operand of one that writes no register. */
static void reads_of(const ins *i, regs *out)
{
    static const char *const no_dest[] = {"STG", "STS", "ST", "STL", "RED", "BRA", "BSSY", "BSYNC",
                                          "WARPSYNC", "BAR", "EXIT", "RET", "DEPBAR", "LDGSTS",
                                          "CALL", "MEMBAR", "CCTL", "NOP", "YIELD", NULL};
    char base[24];
    base_of(i->op, base, sizeof base);
    *out = (regs){{0}};
    const char *from = i->args;
    if (!is_in(base, no_dest)) {
        const char *comma = strchr(i->args, ',');
        if (!comma)
            return;
        from = comma + 1;
    }
    regs_in(from, out);
}

/* The registers a load writes: its first operand, 1 to 4 of them. */
static void load_dest(const ins *i, regs *out)
{
    *out = (regs){{0}};
    const char *p = i->args;
    if (p[0] != 'R' || !isdigit((unsigned char)p[1]))
        return;
    int bytes = lane_bytes(i->op);
    reg_add(out, atoi(p + 1), bytes >= 4 ? bytes / 4 : 1);
}

/* ---- the replay: bytes in flight at each wait ---------------------------------------- */

typedef struct pending {
    long seq;    /* issue order */
    double bytes;
    regs dest;   /* LDG */
    int group;   /* LDGSTS: its commit group */
} pending;

struct sass_replay {
    pending *v;
    int n, cap;
    long seq, last_wait; /* the issue count, and the seq issued at the last serial wait */
    int open_group, groups; /* LDGSTS groups: the one being filled, those committed and pending */
    double sum;  /* bytes pending at each serial wait (second pass) */
    int waits;
};

static double pending_bytes(const sass_replay *r)
{
    double b = 0;
    for (int k = 0; k < r->n; k++)
        b += r->v[k].bytes;
    return b;
}

/* The warp waits for the load issued at seq (and every older one). */
static void wait_for(sass_replay *r, long seq, bool counting)
{
    if (seq > r->last_wait) {
        if (counting) {
            r->sum += pending_bytes(r);
            r->waits++;
        }
        r->last_wait = r->seq;
    }
    int kept = 0;
    for (int k = 0; k < r->n; k++)
        if (r->v[k].seq > seq)
            r->v[kept++] = r->v[k];
    r->n = kept;
}

static void issue_load(sass_replay *r, const pending *p)
{
    if (r->n == r->cap)
        r->v = sass_grow(r->v, &r->cap, sizeof(pending));
    r->v[r->n++] = *p;
}

/* DEPBAR.LE SB0, 0x1: at most that many committed groups stay pending. */
static void depbar(sass_replay *r, const ins *i, bool counting)
{
    const char *x = strstr(i->args, "SB0");
    const char *comma = x ? strchr(x, ',') : NULL;
    if (!comma)
        return;
    int keep = (int)strtol(comma + 1, NULL, 0);
    int oldest_kept = r->open_group - keep; /* groups below it must be done */
    long newest = -1;
    for (int k = 0; k < r->n; k++)
        if (r->v[k].group < oldest_kept && r->v[k].seq > newest)
            newest = r->v[k].seq;
    if (newest >= 0)
        wait_for(r, newest, counting);
}

void sass_replay_step(sass_replay *r, const ins *i, rl_stream_rule rule, bool counting)
{
    if (i->rare)
        return;
    if (sass_base_is(i, "LDGDEPBAR")) {
        r->open_group++;
        return;
    }
    if (sass_base_is(i, "DEPBAR")) {
        depbar(r, i, counting);
        return;
    }
    regs reads;
    reads_of(i, &reads);
    long newest = -1;
    for (int k = 0; k < r->n; k++)
        if (r->v[k].group < 0 && reg_meet(&r->v[k].dest, &reads) && r->v[k].seq > newest)
            newest = r->v[k].seq;
    if (newest >= 0)
        wait_for(r, newest, counting);
    r->seq++;
    if (sass_is_stream(i, rule)) {
        pending p = {.seq = r->seq, .bytes = warp_bytes(i), .group = -1};
        if (sass_base_is(i, "LDGSTS"))
            p.group = r->open_group;
        else
            load_dest(i, &p.dest);
        issue_load(r, &p);
    }
}


sass_replay *sass_replay_new(void)
{
    sass_replay *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "sass: out of memory\n");
        exit(1);
    }
    r->last_wait = -1;
    return r;
}

void sass_replay_end(sass_replay *r, rl_sass_loop *out)
{
    out->waits = r->waits;
    out->inflight_bytes = r->waits ? r->sum / r->waits : pending_bytes(r);
    free(r->v);
    free(r);
}

void sass_count(const ins *i, rl_stream_rule rule, rl_sass_loop *out)
{
    if (i->rare) {
        out->rare++;
        return;
    }
    out->instructions++;
    out->pipe[rl_sass_pipe_of(i->op)]++;
    if (is_memory(i))
        out->l1_bytes += warp_bytes(i);
    if (sass_is_stream(i, rule)) {
        out->stream_loads++;
        out->stream_bytes += warp_bytes(i);
    }
    if (rl_sass_pipe_of(i->op) == RL_PIPE_TENSOR)
        out->tensor_fma += tensor_fma_of(i);
    if (sass_base_is(i, "LDL") || sass_base_is(i, "STL"))
        out->local_ops++;
}


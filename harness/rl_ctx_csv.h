/*
 * rl_ctx_csv.h -- a run's room for what the CSV needs: the file under
 * construction, its header, and the console table printed last. The
 * files that write rows and metadata (context.c, columns.c) include it;
 * the rest of the harness writes through rl_meta and rl_set_*.
 */
#ifndef RL_CTX_CSV_H
#define RL_CTX_CSV_H

#include "rooflab.h"
#include "rl_csv.h"

typedef struct rl_ctx_csv {
    rl_csv *csv;                 /* NULL: a bare context (rl_begin_bare) writes none */
    const char **names;          /* the CSV header, built from the experiment's columns */
    const rl_column *last_table; /* the console table whose header was printed last */
    char *rows_meta;             /* '# key: value' lines for --rows-file alone (outcome.c) */
} rl_ctx_csv;

/* The room of ctx (rooms.c); NULL for a context without a private part
 * (a test's context on the stack). */
rl_ctx_csv *rl_csv_room(const rl_ctx *ctx);

#endif /* RL_CTX_CSV_H */

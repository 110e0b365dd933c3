/*
 * meta.c -- `rooflab meta [--default TEXT] FILE KEY...`: values from a
 * CSV's '# key: value' header, one line per key, for scripts. A shell
 * script asks this command instead of parsing the header itself, so that
 * the header has one reader (harness/table.c) and one meaning.
 *
 *   $ build/rooflab meta results/reference/h200/exp-01.csv backend mode
 *   cuda
 *   lab
 */
#include "tools.h"

#include <stdio.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab meta [--default TEXT] FILE KEY...\n\n"
    "Prints the value of each KEY in FILE's '# key: value' header, one line per key, in\n"
    "the order given. A key that is absent is an error (named on stderr; its line is\n"
    "empty, so that the others keep their places); with --default, its line is TEXT\n"
    "instead, and not an error. TEXT may be empty: --default ''.\n\n"
    "Exit codes: 0 every key printed, 1 a key is absent, 2 bad usage or FILE cannot be read.\n";

/* Like grep's 1 for "no match": an absent key is an answer, not a failure
 * of the command (which is 2, RL_EXIT_USAGE, as for every subcommand). */
enum { META_EXIT_ABSENT = 1 };

typedef struct meta_args {
    const char *fallback; /* --default TEXT; NULL: an absent key is an error */
    const char *file;
    char **keys;
    int nkeys;
} meta_args;

typedef enum { ARGS_OK, ARGS_HELP, ARGS_BAD } args_result;

/* Reads the command line into a; ARGS_BAD after saying what is wrong. */
static args_result parse_args(int argc, char **argv, meta_args *a)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("%s", USAGE);
            return ARGS_HELP;
        }
        if (strcmp(argv[i], "--default") != 0) {
            fprintf(stderr, "rooflab meta: unknown option '%s' (see --help)\n", argv[i]);
            return ARGS_BAD;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rooflab meta: --default needs a value, '' for an empty line\n");
            return ARGS_BAD;
        }
        a->fallback = argv[++i];
    }
    if (argc - i < 2) {
        fprintf(stderr, "rooflab meta: needs a FILE and at least one KEY (see --help)\n");
        return ARGS_BAD;
    }
    a->file = argv[i];
    a->keys = argv + i + 1;
    a->nkeys = argc - i - 1;
    return ARGS_OK;
}

int tool_meta(int argc, char **argv)
{
    meta_args a = {0};
    args_result parsed = parse_args(argc, argv, &a);
    if (parsed != ARGS_OK)
        return parsed == ARGS_HELP ? RL_EXIT_OK : RL_EXIT_USAGE;
    char why[1200];
    rl_table *t = rl_table_read_meta(a.file, why, sizeof why);
    if (!t) {
        fprintf(stderr, "rooflab meta: %s\n", why);
        return RL_EXIT_USAGE;
    }
    int absent = 0;
    for (int k = 0; k < a.nkeys; k++) {
        const char *value = rl_table_meta(t, a.keys[k]);
        if (!value && !a.fallback) {
            fprintf(stderr, "rooflab meta: %s has no '# %s: ' line\n", a.file, a.keys[k]);
            absent++;
        }
        printf("%s\n", value ? value : a.fallback ? a.fallback : "");
    }
    rl_table_free(t);
    return absent ? META_EXIT_ABSENT : RL_EXIT_OK;
}

/*
 * rows.c -- the points of several runs of one experiment, matched by the
 * CSV header's compare_keys: rooflab compare (ratios to a base run) and
 * rooflab stability (spread across repeated runs) read them alike, so a
 * point is the same point in both.
 */
#include "tools.h"

#include <string.h>

int tool_split_keys(char *buf, const char **keys)
{
    int n = 0;
    for (char *tok = strtok(buf, ","); tok && n < TOOL_MAX_KEYS; tok = strtok(NULL, ","))
        keys[n++] = tok;
    return n;
}

/* Whether a run before run i has a row with the keys of run i's row r. */
static bool listed_before(rl_table *const *t, int i, int r, const char *const *keys, int nkeys)
{
    for (int j = 0; j < i; j++)
        if (rl_table_match(t[j], t[i], r, keys, nkeys) >= 0)
            return true;
    return false;
}

int tool_union_rows(rl_table *const *t, int n, const char *const *keys, int nkeys, tool_row *rows)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        for (int r = 0; r < t[i]->nrows; r++)
            if (!listed_before(t, i, r, keys, nkeys))
                rows[count++] = (tool_row){i, r};
    return count;
}

int tool_row_in(rl_table *const *t, int i, tool_row row, const char *const *keys, int nkeys)
{
    return i == row.run ? row.row : rl_table_match(t[i], t[row.run], row.row, keys, nkeys);
}

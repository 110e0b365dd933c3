/*
 * tuning.c -- a kernel's shape chosen on the machine it runs on, the way
 * FFTW keeps its wisdom: the candidates are timed once per machine and
 * signature (what the choice depends on besides the machine: the
 * instruction set, the candidate list), the choice is cached in
 * tuning.csv beside ceilings.csv, printed and written in the CSV's
 * metadata, and timed again with --retune.
 *
 * The caller (tune_decode.c for the CPU decode) declares the candidates
 * (rl_tune: a name for each, how to set one, validate it and call it);
 * the harness validates each candidate before it times it (one that
 * fails is never chosen), then times them in rounds: each round calls
 * every candidate once, in an order that turns from round to round, and
 * each call is compared with the default's in the same round. A shared
 * host's memory bandwidth moves by a quarter within seconds; candidates
 * timed one after another would be ranked by the second each ran in,
 * while two calls a few milliseconds apart see the same machine. Each
 * candidate is then read at its fast rounds (the q1 of its 9, rl_stats_of's:
 * its third fastest): in a slow minute every shape waits on the same starved memory and
 * they all read alike, and the shapes differ where the memory lets them
 * run (experiment 02's README, "What bounds the F16 GEMV", has an F16
 * shape that read under the roof only in fast minutes). A candidate replaces the default only when
 * its q1 is under 0.97 of the default's and it was the faster in most
 * rounds; of those, the lowest q1 wins.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 9, MIN_WINS = 5, MAX_CANDIDATES = 64 };
/* A candidate must beat the default by this much to replace it. */
static const double MARGIN = 0.97;

static void tuning_path(const rl_ctx *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s/tuning.csv", ctx->args.out_dir, ctx->label);
}

/* Validates every candidate: ms[i] INFINITY for one that passed, NaN for
 * one that failed (and says why on stderr). */
static void validate_candidates(const rl_tune *t, double *ms, int *failed)
{
    char why[256];
    *failed = 0;
    for (int i = 0; i < t->n; i++) {
        t->set(t->state, i);
        ms[i] = t->check(t->state, why, sizeof why) ? INFINITY : NAN;
        if (isnan(ms[i])) {
            (*failed)++;
            char name[64];
            t->name(t->state, i, name, sizeof name);
            fprintf(stderr, "tuning: %s, %s failed validation and is never chosen: %s\n", t->key,
                    name, why);
        }
    }
}

static double timed_call_s(const rl_tune *t, int i)
{
    t->set(t->state, i);
    double t0 = rl_now_s();
    t->call(t->state);
    return rl_now_s() - t0;
}

/* ROUNDS rounds of one call per valid candidate, after one warm-up call
 * each: s[i * ROUNDS + r], candidate i's seconds in round r. Odd rounds
 * walk the list backwards from a starting point that moves each round,
 * so no candidate always runs just after the same one. */
static void time_rounds(const rl_tune *t, const double *ms, double *s)
{
    for (int i = 0; i < t->n; i++)
        if (!isnan(ms[i]))
            timed_call_s(t, i);
    for (int r = 0; r < ROUNDS; r++)
        for (int j = 0; j < t->n; j++) {
            int i = (r % 2 ? t->n - 1 - j + r : j + r) % t->n;
            if (!isnan(ms[i]))
                s[i * ROUNDS + r] = timed_call_s(t, i);
        }
}

/* In how many rounds candidate i was faster than the default. */
static int wins_over_default(const rl_tune *t, const double *s, int i)
{
    int wins = 0;
    for (int r = 0; r < ROUNDS; r++)
        wins += s[i * ROUNDS + r] < s[t->fallback * ROUNDS + r];
    return wins;
}

/* With --retune, every candidate's times, so that a choice can be read:
 * st[i], candidate i's rounds (its median and, for its fast rounds, q1). */
static void print_candidates(const rl_tune *t, const double *ms, const rl_stats *st,
                             const double *s)
{
    char name[64];
    printf("tuning      %s: candidate, median ms, fast rounds (q1) ms, rounds won over the default\n",
           t->key);
    for (int i = 0; i < t->n; i++) {
        t->name(t->state, i, name, sizeof name);
        if (isnan(ms[i]))
            printf("              %-24s failed validation\n", name);
        else
            printf("              %-24s %8.3f %8.3f  %d of %d%s\n", name, ms[i], 1e3 * st[i].q1,
                   i == t->fallback ? 0 : wins_over_default(t, s, i),
                   ROUNDS, i == t->fallback ? " (the default)" : "");
    }
}

/* Validates every candidate, then times the valid ones: ms[i] the median
 * of its calls, NaN for one that failed. The index chosen: the candidate
 * with the lowest fast-rounds time, if that is under MARGIN of the
 * default's and it won MIN_WINS rounds; the default otherwise (or, if the
 * default failed, the fastest median). */
static int time_candidates(const rl_tune *t, double *ms, int *failed, bool verbose)
{
    validate_candidates(t, ms, failed);
    double *s = calloc((size_t)t->n * ROUNDS, sizeof *s);
    if (!s)
        rl_die(RL_EXIT_FAILED, "out of memory tuning %s", t->key);
    time_rounds(t, ms, s);
    rl_stats st[MAX_CANDIDATES]; /* each candidate's rounds: the fast ones are its q1 */
    for (int i = 0; i < t->n; i++)
        if (!isnan(ms[i])) {
            st[i] = rl_stats_of(s + i * ROUNDS, ROUNDS);
            ms[i] = 1e3 * st[i].median;
        }
    if (verbose)
        print_candidates(t, ms, st, s);
    int best = -1;
    if (!isnan(ms[t->fallback])) {
        double best_ratio = MARGIN;
        for (int i = 0; i < t->n; i++) {
            if (isnan(ms[i]) || i == t->fallback)
                continue;
            double ratio = st[i].q1 / st[t->fallback].q1;
            if (ratio < best_ratio && wins_over_default(t, s, i) >= MIN_WINS)
                best = i, best_ratio = ratio;
        }
        best = best < 0 ? t->fallback : best;
    } else
        for (int i = 0; i < t->n; i++)
            if (!isnan(ms[i]) && (best < 0 || ms[i] < ms[best]))
                best = i;
    free(s);
    return best < 0 ? t->fallback : best;
}

/* ---- tuning.csv: key,machine,signature,choice,ms,default,default_ms,tried,failed,date --- */

static const char *const COLUMNS[] = {"key", "machine", "signature", "choice", "ms", "default",
                                      "default_ms", "tried", "failed", "date_utc"};
enum { NCOLS = sizeof COLUMNS / sizeof COLUMNS[0] };

/* The row of key for this machine and signature, or -1. */
static int cached_row(const rl_table *t, const char *key, const char *machine,
                      const char *signature)
{
    for (int r = t ? t->nrows - 1 : -1; r >= 0; r--)
        if (!strcmp(rl_table_get(t, r, "key"), key) &&
            !strcmp(rl_table_get(t, r, "machine"), machine) &&
            !strcmp(rl_table_get(t, r, "signature"), signature))
            return r;
    return -1;
}

/* Rewrites the file with key's row for this machine replaced by row, the
 * others kept (old: the file as the harness's one CSV reader, table.c,
 * read it). The fields hold no commas: rl_tune_choose refuses them. */
static void store(rl_ctx *ctx, const char *path, const rl_table *old, const char *row,
                  const char *key, const char *machine)
{
    char dir[1024], *all = NULL;
    size_t len = 0;
    snprintf(dir, sizeof dir, "%s/%s", ctx->args.out_dir, ctx->label);
    rl_mkdirs(dir);
    FILE *f = open_memstream(&all, &len);
    if (!f)
        rl_die(RL_EXIT_FAILED, "out of memory for %s", path);
    fprintf(f, "# rooflab tuning: each kernel's shape chosen on this machine (harness/tuning.c); "
               "--retune times them again\n");
    for (int c = 0; c < NCOLS; c++)
        fprintf(f, "%s%s", COLUMNS[c], c + 1 < NCOLS ? "," : "\n");
    for (int r = 0; old && r < old->nrows; r++)
        if (strcmp(rl_table_get(old, r, "key"), key) || strcmp(rl_table_get(old, r, "machine"), machine))
            for (int c = 0; c < NCOLS; c++)
                fprintf(f, "%s%s", rl_table_get(old, r, COLUMNS[c]), c + 1 < NCOLS ? "," : "\n");
    fprintf(f, "%s\n", row);
    fclose(f);
    if (rl_write_file_atomic(path, all) != 0)
        fprintf(stderr, "tuning: cannot write %s (%m): the choice is not kept\n", path);
    free(all);
}

static int index_of_name(const rl_tune *t, const char *name)
{
    char n[64];
    for (int i = 0; i < t->n; i++) {
        t->name(t->state, i, n, sizeof n);
        if (!strcmp(n, name))
            return i;
    }
    return -1;
}

int rl_tune_choose(rl_ctx *ctx, const rl_tune *t)
{
    if (t->n < 1 || t->n > MAX_CANDIDATES || t->fallback < 0 || t->fallback >= t->n)
        rl_die(RL_EXIT_FAILED, "internal error: tuning %s: %d candidates, default %d", t->key,
               t->n, t->fallback);
    char path[1024], machine[300], chosen[64], dflt[64], what[300];
    for (int i = 0; i < t->n; i++) {
        t->name(t->state, i, chosen, sizeof chosen);
        if (strchr(chosen, ','))
            rl_die(RL_EXIT_FAILED, "internal error: tuning %s: a comma in '%s'", t->key, chosen);
    }
    if (strchr(t->key, ',') || strchr(t->signature, ','))
        rl_die(RL_EXIT_FAILED, "internal error: tuning %s: a comma in its key or signature", t->key);
    tuning_path(ctx, path, sizeof path);
    rl_device_identity(ctx, machine, sizeof machine);
    t->name(t->state, t->fallback, dflt, sizeof dflt);
    int lock = rl_lock_beside(path);
    char why[256];
    rl_table *old = rl_table_read(path, why, sizeof why); /* NULL: none yet */
    /* --points lists what a run declares, the same on every machine and
     * every day: neither a cached choice nor a timing. */
    bool listing = ctx->args.list_points;
    int row = ctx->args.retune || listing ? -1 : cached_row(old, t->key, machine, t->signature);
    int pick = row >= 0 ? index_of_name(t, rl_table_get(old, row, "choice")) : -1;
    if (pick >= 0) {
        rl_unlock(lock);
        t->set(t->state, pick);
        snprintf(what, sizeof what, "%s (%.3g ms a call, the default %s %.3g ms; cached %s)",
                 rl_table_get(old, row, "choice"), rl_table_num(old, row, "ms"), dflt,
                 rl_table_num(old, row, "default_ms"), rl_table_get(old, row, "date_utc"));
    } else if (listing ||
               (!ctx->args.retune && (ctx->args.mode == RL_MODE_QUICK || rl_budget_given(ctx)))) {
        rl_unlock(lock); /* a smoke test, a clock or a listing: the defaults, nothing timed */
        t->set(t->state, pick = t->fallback);
        snprintf(what, sizeof what, "%s (the default: %s times nothing; a lab run or --retune "
                 "tunes)", dflt, listing ? "--points" : rl_budget_given(ctx) ? "--budget" : "--quick");
    } else {
        char note[96];
        snprintf(note, sizeof note, "tuning %s: %d candidates", t->key, t->n);
        rl_progress_note(ctx, note);
        double ms[MAX_CANDIDATES], t0 = rl_now_s();
        int failed;
        if (t->prepare)
            t->prepare(t->state);
        pick = time_candidates(t, ms, &failed, ctx->args.retune);
        t->set(t->state, pick);
        t->name(t->state, pick, chosen, sizeof chosen);
        char line[1024], date[32];
        rl_utc_now(date, sizeof date);
        snprintf(line, sizeof line, "%s,%s,%s,%s,%.4f,%s,%.4f,%d,%d,%s", t->key, machine,
                 t->signature, chosen, ms[pick], dflt, ms[t->fallback], t->n, failed, date);
        store(ctx, path, old, line, t->key, machine);
        rl_unlock(lock);
        snprintf(what, sizeof what, "%s (%.3g ms a call, the default %s %.3g ms; %d candidates "
                 "timed now in %.1f s%s)", chosen, ms[pick], dflt, ms[t->fallback], t->n,
                 rl_now_s() - t0, failed ? ", some failed validation" : "");
    }
    rl_table_free(old);
    rl_progress_clear();
    printf("tuning      %s: %s\n", t->what, what);
    rl_meta(ctx, t->key, "%s; %s", what, t->signature);
    /* the choice alone, as data, for a side benchmark's --rows-file (peer-ggml.sh) */
    char choice_key[128];
    t->name(t->state, pick, chosen, sizeof chosen);
    snprintf(choice_key, sizeof choice_key, "%s_choice", t->key);
    rl_meta_rows_file(ctx, choice_key, chosen);
    return pick;
}

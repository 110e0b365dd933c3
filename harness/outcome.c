/*
 * outcome.c -- how a run ended, as data for scripts: --outcome-file (key=value
 * lines: its exit status, whether a SIGTERM stopped it and how far it got,
 * its CSV, whether its charts were drawn and why not) and --rows-file (its
 * rows as a CSV, even for a side benchmark whose results are discarded:
 * exp-03 --matrix, exp-07 --shape, exp-08 --moe-shape). The lines printed
 * for people ("stopped ...", "wrote ... (partial)", "charts not drawn ...")
 * are free to change their wording; a script reads these files instead.
 */
#include "internal.h"
#include "rl_ctx_csv.h"
#include "rl_ctx_parts.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a file a script names: checked before anything is measured ---- */

void rl_data_file_check(const char *option, const char *path)
{
    if (!path)
        return;
    char copy[1024]; /* rl_write_file_atomic's temporary name must fit beside it */
    if (strlen(path) >= sizeof copy)
        rl_die(RL_EXIT_USAGE, "%s: a path of %zu characters is too long (at most %zu)", option,
               strlen(path), sizeof copy - 1);
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        rl_die(RL_EXIT_USAGE, "%s %s is a folder: name a file in it", option, path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        rl_die(RL_EXIT_USAGE, "%s %s: no folder %s (create it first)", option, path, dir);
    if (access(dir, W_OK) != 0)
        rl_die(RL_EXIT_USAGE, "%s %s: the folder %s is not writable: %s", option, path, dir,
               strerror(errno));
}

/* A run that dies (a KILL after its cap's TERM, an internal error) writes
 * no outcome: an older file of the same name is removed first, so that a
 * script finding none knows the run did not end on its own. */
void rl_outcome_files_check(const rl_ctx *ctx)
{
    rl_data_file_check("--outcome-file", ctx->args.outcome_file);
    rl_data_file_check("--rows-file", ctx->args.rows_file);
    if (ctx->args.outcome_file && unlink(ctx->args.outcome_file) != 0 && errno != ENOENT)
        rl_die(RL_EXIT_USAGE, "--outcome-file %s: cannot remove the older one: %s",
               ctx->args.outcome_file, strerror(errno));
}

/* ---- --rows-file: the rows as a CSV ---- */

void rl_meta_rows_file(rl_ctx *ctx, const char *key, const char *value)
{
    rl_ctx_csv *room = rl_csv_room(ctx);
    if (!room || !ctx->args.rows_file)
        return; /* without --rows-file, nothing changes */
    size_t more = strlen(key) + strlen(value) + 6, used = room->rows_meta ? strlen(room->rows_meta) : 0;
    char *grown = realloc(room->rows_meta, used + more);
    if (!grown)
        rl_die(RL_EXIT_FAILED, "out of memory for --rows-file's metadata");
    snprintf(grown + used, more, "# %s: %s\n", key, value);
    room->rows_meta = grown;
}

int rl_rows_file_write(rl_ctx *ctx)
{
    const rl_ctx_csv *room = rl_csv_room(ctx);
    if (!ctx->args.rows_file || !room || !room->csv)
        return 0;
    if (rl_csv_write_copy(room->csv, ctx->args.rows_file, room->rows_meta) == 0)
        return 0;
    fprintf(stderr, "rooflab: cannot write --rows-file %s: %s\n", ctx->args.rows_file,
            strerror(errno));
    return -1;
}

/* ---- --outcome-file: how the run ended ---- */

void rl_redraw_command(const rl_ctx *ctx, char *buf, size_t len)
{
    const rl_args *a = &ctx->args;
    bool default_dirs = !strcmp(a->out_dir, "results") && !strcmp(a->plots_dir, "plots");
    snprintf(buf, len, "make plot-%s LABEL=%s%s%s%s%s%s", ctx->exp->id, ctx->label,
             default_dirs ? "" : " ARGS=\"--out ", default_dirs ? "" : a->out_dir,
             default_dirs ? "" : " --plots ", default_dirs ? "" : a->plots_dir,
             default_dirs ? "" : "\"");
}

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

int rl_outcome_write(const rl_ctx *ctx, const rl_outcome *o)
{
    const char *path = ctx->args.outcome_file;
    if (!path)
        return 0;
    int done = 0, total = 0;
    if (rl_parts_room(ctx))
        rl_points_count_measured(ctx, &done, &total);
    char redraw[1400] = "", text[6144];
    if (o->csv_written && done > 0)
        rl_redraw_command(ctx, redraw, sizeof redraw);
    snprintf(text, sizeof text,
             "# how exp-%s's run ended (--outcome-file), written as it ends: exit_status, whether\n"
             "# a SIGTERM stopped it, its points measured of those declared, its CSV, its charts\n"
             "experiment=%s\nlabel=%s\nexit_status=%d\nstopped=%s\nstopped_why=%s\n"
             "points_done=%d\npoints_total=%d\nresults=%s\ncsv=%s\ncsv_written=%s\npartial=%s\n"
             "rows_file=%s\ncharts=%s\ncharts_why=%s\nredraw=%s\n",
             ctx->exp->id, ctx->exp->id, ctx->label, o->exit_status, yes_no(o->stopped),
             o->stopped ? "sigterm" : "", done, total, o->kept ? "kept" : "discarded",
             o->kept ? ctx->csv_path : "", yes_no(o->csv_written), yes_no(o->partial),
             ctx->args.rows_file && o->rows_written ? ctx->args.rows_file : "",
             o->charts_why ? "not_drawn" : "drawn", o->charts_why ? o->charts_why : "", redraw);
    if (rl_write_file_atomic(path, text) == 0)
        return 0;
    fprintf(stderr, "rooflab: cannot write --outcome-file %s: %s\n", path, strerror(errno));
    return -1;
}

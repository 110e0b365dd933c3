/*
 * mountain/main.c -- make mountain: this machine's read bandwidth over
 * footprints (the stride-1 slice of the memory mountain of Bryant and
 * O'Hallaron's "Computer Systems: A Programmer's Perspective"), with the
 * cache sizes the machine reports beside the ones the curve shows.
 *
 * It measures nothing of its own: the curve is part of the ceilings
 * (harness/curve.c), measured when a run of this label first needs them
 * and cached in results/<label>/ceilings.csv under the same rules. This
 * program asks for them as an experiment does, prints the curve, writes
 * it with the levels found on it to results/<label>/bandwidth.csv (the
 * chart's one input, whichever file the ceilings came from), and draws
 * plots/<label>/mountain.{png,pdf,svg} from that with plots/mountain.gp.
 */
#include "../plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rl_experiment MOUNTAIN = {
    .id = "mountain", .slug = "mountain", .title = "the memory mountain: read bandwidth over footprints",
    .default_cache = RL_HOT};

static void usage(const char *prog)
{
    printf("usage: %s [options]\n\n"
           "The read bandwidth of this machine over footprints, 16 KiB to 4x the last-level\n"
           "cache, with the knees where it leaves each level's plateau and the cache sizes\n"
           "the machine reports. The curve is part of the ceilings: reused from\n"
           "results/<label>/ceilings.csv when a run may reuse them (a quick run: any of this\n"
           "device; a lab run: from the last half hour), else measured (about a minute on a\n"
           "2-core CPU). Draws plots/<label>/mountain.{png,pdf,svg}.\n\n"
           "options:\n"
           "  --backend cuda|cpu|auto  where to measure (default auto: the GPU if there is one)\n"
           "  --quick                  reuse this device's ceilings whenever they are cached\n"
           "  --full                   measure afresh, five trials a footprint\n"
           "  --max-bytes SIZE         the curve's largest footprint at most SIZE\n"
           "  --ceilings FILE          draw the curve in FILE (a ceilings.csv); measure nothing\n"
           "  --out DIR                results root (default results)\n"
           "  --plots DIR              charts root; charts go to DIR/<label>/ (default plots)\n"
           "  --label NAME             name of the run (default: the device's slug)\n"
           "  --device N               CUDA device index (default 0)\n"
           "  --no-plot                print the curve, draw nothing\n"
           "  --help                   this text\n\n"
           "exit codes: 0 drawn, 1 the device or gnuplot failed, 2 bad usage (or a FILE\n"
           "without a curve), 77 --backend cuda and no GPU.\n",
           prog);
}

/* The options of an experiment that mean nothing here are refused, not ignored. */
static void refuse_experiment_options(const char *prog, const rl_args *a)
{
    const char *which = a->list ? "--list" : a->plot_only ? "--plot-only"
                        : a->print_label ? "--print-label" : a->variants ? "--variant"
                        : a->cache_given ? "--cache" : a->no_reference ? "--reference" : NULL;
    if (which) {
        fprintf(stderr, "%s: %s is an experiment's option, not this program's (see %s --help)\n",
                prog, which, prog);
        exit(RL_EXIT_USAGE);
    }
}

/* The level a footprint falls on, as a roof names it ("L2", "L2-LLC"). */
static void level_name(rl_backend_kind kind, const rl_ceilings *c, double bytes, char *buf,
                       size_t len)
{
    bool mixed;
    rl_level l = rl_level_on(c->level_bytes, c->level_spill, bytes, &mixed);
    int next = l + 1;
    while (mixed && next < RL_DRAM && !(c->level_bytes[next] > 0))
        next++;
    snprintf(buf, len, mixed ? "%s-%s" : "%s", rl_level_name(kind, l),
             rl_level_name(kind, (rl_level)next));
}

static void print_curve(const rl_ctx *ctx, const rl_ceilings *c)
{
    if (c->trials > 0)
        printf("curve       read bandwidth, best and worst of %d trials a footprint\n", c->trials);
    else
        printf("curve       read bandwidth, best and worst of its trials\n");
    printf("            %10s %10s %10s   level\n", "footprint", "GB/s best", "worst");
    for (int i = 0; i < c->curve_n; i++) {
        char size[32], level[24];
        rl_format_bytes(c->curve[i].probe_bytes, size, sizeof size);
        level_name(ctx->kind, c, c->curve[i].probe_bytes, level, sizeof level);
        printf("            %10s %10.1f %10.1f   %s\n", size, c->curve[i].best, c->curve[i].worst,
               level);
    }
    rl_knee k[RL_CURVE_MAX];
    int n = rl_curve_knees(c->curve, c->curve_n, k, RL_CURVE_MAX);
    printf("knees       %d:", n);
    for (int i = 0; i < n; i++) {
        char at[32], reach[32];
        rl_format_bytes(k[i].bytes, at, sizeof at);
        rl_format_bytes(k[i].reach, reach, sizeof reach);
        printf("%s %s (%.0f to %.0f GB/s, the next plateau from %s)", i ? "," : "", at,
               k[i].from_gbps, k[i].to_gbps, reach);
    }
    char levels[256];
    rl_curve_describe(c, ctx->kind, levels, sizeof levels);
    printf("%s\nlevels      %s\n            (%s)\n", n ? "" : " none", levels, c->levels_source);
    fflush(stdout);
}

static const char *const COLUMNS[] = {"footprint_bytes", "read_gbps_best", "read_gbps_worst",
                                      "level", NULL};

static void write_curve(const rl_ctx *ctx, const rl_ceilings *c, const char *from,
                        const char *path)
{
    rl_csv *f = rl_csv_open(path, COLUMNS);
    rl_csv_meta(f, "about", "the read-bandwidth curve make mountain drew, and the levels found on "
                "it; from the ceilings in %s", from);
    rl_csv_meta(f, "device", "%s", ctx->dev->name);
    rl_csv_meta(f, "backend", "%s", rl_backend_name(ctx->kind));
    rl_csv_meta(f, "label", "%s", ctx->label);
    rl_csv_meta(f, "ceilings_origin", "%s", c->origin);
    rl_csv_meta(f, "date_utc", "%s", c->measured_utc[0] ? c->measured_utc : "unknown");
    rl_csv_meta(f, "trials", "%d", c->trials);
    rl_meta_line lines[RL_CURVE_META_MAX];
    int n = rl_curve_meta(c, ctx->kind, lines, RL_CURVE_META_MAX);
    for (int i = 0; i < n; i++)
        rl_csv_meta(f, lines[i].key, "%s", lines[i].value);
    for (int i = 0; i < c->curve_n; i++) {
        char level[24];
        level_name(ctx->kind, c, c->curve[i].probe_bytes, level, sizeof level);
        rl_csv_set_num(f, "footprint_bytes", c->curve[i].probe_bytes);
        rl_csv_set_num(f, "read_gbps_best", c->curve[i].best);
        rl_csv_set_num(f, "read_gbps_worst", c->curve[i].worst);
        rl_csv_set_str(f, "level", level);
        rl_csv_end_row(f);
    }
    if (rl_csv_commit(f) != 0)
        rl_die(RL_EXIT_FAILED, "mountain: cannot write %s", path);
    printf("wrote       %s\n", path);
}

int main(int argc, char **argv)
{
    const char *prog = "mountain";
    rl_args a;
    int rc = rl_parse_args(argc, argv, NULL, &a);
    if (rc)
        return rc;
    if (a.help) {
        usage(argc > 0 ? argv[0] : prog);
        return RL_EXIT_OK;
    }
    refuse_experiment_options(prog, &a);
    rl_ctx *ctx = rl_begin_bare(&MOUNTAIN, &a);

    char path[1024];
    if (a.ceilings_file)
        snprintf(path, sizeof path, "%s", a.ceilings_file);
    else
        rl_ceilings_path(ctx, path, sizeof path);
    printf("== rooflab mountain: %s ==\n", MOUNTAIN.title);
    printf("device      %s (%s backend), label %s\n", ctx->dev->name, rl_backend_name(ctx->kind),
           ctx->label);
    printf("from        %s: %s\n", path,
           a.ceilings_file ? "read, nothing measured"
                           : "reused if this run may, else measured now with the curve");
    fflush(stdout);
    const rl_ceilings *c = rl_ceilings_get(ctx);
    rl_progress_clear();
    if (c->curve_n == 0)
        rl_die(RL_EXIT_USAGE, "mountain: %s holds no bandwidth curve (a fixture, or written before "
               "curves): nothing to draw; run without --ceilings to measure one", path);
    print_curve(ctx, c);
    char curve[1100];
    snprintf(curve, sizeof curve, "%s/%s/bandwidth.csv", a.out_dir, ctx->label);
    write_curve(ctx, c, path, curve);

    int code = RL_EXIT_OK;
    if (!a.no_plot) {
        char dir[1024], later[1200], script[1024];
        snprintf(dir, sizeof dir, "%s/%s", a.plots_dir, ctx->label);
        snprintf(script, sizeof script, "%s/plots/mountain.gp", rl_source_root());
        snprintf(later, sizeof later, "make mountain LABEL=%s QUICK=1", ctx->label);
        const char *csvs[1] = {curve}, *names[1] = {ctx->label};
        if (rl_draw_script(script, "mountain", "mountain", csvs, names, 1, dir, "", later) != 0)
            code = RL_EXIT_FAILED;
    }
    rl_end_discard(ctx);
    return code;
}

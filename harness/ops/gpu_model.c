/*
 * gpu_model.c -- make gpu-model's program: every CUDA kernel a verdict
 * judges (gpu_model_cases.c), read from the build's SASS (sass.c) and
 * ptxas records, and the fraction of each GPU's roof its own count allows
 * (gpu_model.c in harness/). No GPU runs anything: the numbers are a
 * model's, and the CSV says so.
 *
 * Usage: gpu-model-tool --listings DIR --sms "80 90" --source-root ROOT
 *          --csv FILE [--gpus a,b] [--judge h100-sxm,h200] [--roofs ROOT]
 *          [--measured DIR [--measured-any-commit]] [--commit C] [--nvcc V]
 *          OBJ.res...
 * DIR/smNN/index.tsv names each kernel's listing (harness/ops/gpu-model.sh
 * writes them). --roofs: where a lent GPU's reference run measured its
 * DRAM roof (ROOT/<gpu>/ceilings.csv), the prediction is over that roof,
 * as the verdicts' are. --measured: a run's CSVs (results/reference/h200),
 * whose fraction of the datasheet is printed beside the prediction where
 * the kernel's source has not changed since that run's commit (or, with
 * --measured-any-commit, whatever it did: for a change known to leave the
 * kernel's SASS as it was). --parts: each launch of a case's call (a
 * decode step's matrices) on a line of its own, above the case's. Exit 0 when every case on a judged GPU is at or above its
 * bar, 1 when one is below, 2 on bad usage or unreadable input.
 */
#include "gpu_model_cases.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_CASES = 128, MAX_RARE = 256 };

typedef struct options {
    const char *listings, *sms, *root, *csv, *gpus, *judge, *commit, *nvcc, *measured, *roofs;
    bool any_commit; /* --measured-any-commit: compare whatever the kernel's source did since */
    bool parts;      /* --parts: each part of a case on its own line, before the case */
    char **res;
    int nres;
} options;

static void usage(void)
{
    fprintf(stderr, "usage: gpu-model-tool --listings DIR --sms \"80 90\" --source-root ROOT --csv FILE\n"
                    "         [--gpus a,b] [--judge h100-sxm,h200] [--measured RESULTS_DIR [--measured-any-commit]]\n"
                    "         [--roofs RESULTS_ROOT] [--parts] [--commit C]"
                    "         [--nvcc V] OBJ.res...\n"
                    "GPUs: ");
    for (const rl_gpu_spec *g = rl_gpu_specs; g->slug; g++)
        fprintf(stderr, "%s%s", g->slug, g[1].slug ? ", " : "\n");
    exit(2);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *t = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (t && fread(t, 1, (size_t)n, f) == (size_t)n)
        t[n] = '\0';
    else {
        free(t);
        t = NULL;
    }
    fclose(f);
    return t;
}

/* Whether word is in a list separated by spaces or commas. */
static bool listed(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)); p += n) {
        bool start = p == list || p[-1] == ' ' || p[-1] == ',';
        bool end = p[n] == '\0' || p[n] == ' ' || p[n] == ',';
        if (start && end)
            return true;
    }
    return false;
}

/* ---- ptxas's records --------------------------------------------------------------- */

typedef struct res_row {
    int sm;
    char kernel[96];
    rl_gpu_resources r;
} res_row;

static res_row *RES;
static int NRES;

static void read_res(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gpu-model: %s: no ptxas record (rebuild the object)\n", path);
        exit(2);
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t'), *end = tab ? strchr(tab + 1, '\t') : NULL;
        if (!end)
            continue;
        *end = '\0';
        res_row row = {.sm = atoi(line)};
        rl_kernel_short_name(tab + 1, row.kernel, sizeof row.kernel);
        int regs, stack, st, ld, smem;
        if (sscanf(end + 1, "%d %d %d %d %d", &regs, &stack, &st, &ld, &smem) != 5)
            continue;
        row.r = (rl_gpu_resources){regs, smem, st + ld};
        RES = realloc(RES, sizeof *RES * (size_t)(NRES + 1));
        RES[NRES++] = row;
    }
    fclose(f);
}

static const res_row *res_of(int sm, const char *kernel)
{
    for (int i = 0; i < NRES; i++)
        if (RES[i].sm == sm && !strcmp(RES[i].kernel, kernel))
            return &RES[i];
    return NULL;
}

/* The blocks of kernel an SM of g holds (gpu_model_cases.h's blocks_per_sm_fn). */
static int blocks_per_sm(const rl_gpu_spec *g, const char *kernel, int threads, double dyn_smem)
{
    const res_row *r = res_of(g->sm, kernel);
    return r ? rl_occupancy_of(g->sm, r->r.registers, threads, r->r.static_smem + dyn_smem).blocks : 0;
}

/* ---- the listings --------------------------------------------------------------------- */

/* The mangled name and listing of kernel for sm, from DIR/smNN/index.tsv. */
static bool listing_of(const char *dir, int sm, const char *kernel, char *mangled, size_t mlen,
                       char *file, size_t flen)
{
    char path[1024], line[2048];
    snprintf(path, sizeof path, "%s/sm%d/index.tsv", dir, sm);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = strchr(line, '\t'), *b = a ? strchr(a + 1, '\t') : NULL;
        if (!b)
            continue;
        *a = *b = '\0';
        if (!strcmp(line, kernel)) {
            snprintf(mangled, mlen, "%s", a + 1);
            snprintf(file, flen, "%s", b + 1);
            found = true;
        }
    }
    fclose(f);
    return found;
}

typedef struct text_cache {
    char path[1024];
    char *text;
} text_cache;

static const char *listing_text(const char *path)
{
    static text_cache cache[32];
    static int next;
    for (int i = 0; i < 32; i++)
        if (cache[i].text && !strcmp(cache[i].path, path))
            return cache[i].text;
    text_cache *c = &cache[next++ % 32];
    free(c->text);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->text = read_text(path);
    return c->text;
}

/* Every block the kernels' sources mark rare (kernels/ *.cu, *.cuh, *.h). */
static int scan_rare(const char *root, rl_rare_range *out, int max)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/kernels", root);
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || (strcmp(dot, ".cu") && strcmp(dot, ".cuh") && strcmp(dot, ".h")))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int k = rl_rare_ranges_scan(path, "rl-model: rare", out + n, max - n);
        if (k > 0)
            n += k;
    }
    if (d)
        closedir(d);
    return n;
}

/* ---- one case on one GPU --------------------------------------------------------------- */

typedef struct result {
    bool ok;
    bool judged; /* the verdict's premise met (else why says how it is not) */
    char why[200];
    double predicted, at_roof_s, call_s;
    double of_roof; /* predicted over the roof the verdict divides by */
    const case_part *worst; /* the part that takes longest */
    const res_row *res;
    rl_sass_loop loop;
    rl_gpu_prediction p;
} result;

static void model_case(const options *o, const rl_gpu_spec *g, const judged_case *c,
                       const rl_rare_range *rare, int nrare, double roof, result *out)
{
    *out = (result){0};
    double worst_s = -1, launches = 0;
    for (int i = 0; i < c->nparts; i++) {
        const case_part *pt = &c->part[i];
        const res_row *r = res_of(g->sm, pt->kernel);
        char mangled[512], file[1024];
        if (!r || !listing_of(o->listings, g->sm, pt->kernel, mangled, sizeof mangled, file, sizeof file)) {
            snprintf(out->why, sizeof out->why, "%s: not built for sm_%d", pt->kernel, g->sm);
            return;
        }
        rl_sass_options so = {c->rule, rare, nrare, c->inner_trips, c->tensor};
        rl_sass_loop loop;
        if (!rl_sass_loop_of(listing_text(file), mangled, &so, &loop, out->why, sizeof out->why))
            return;
        rl_gpu_prediction p = rl_gpu_predict(g, &loop, &r->r, &pt->launch, c->tensor);
        if (!(p.predicted > 0)) {
            snprintf(out->why, sizeof out->why, "%s: %s", pt->kernel, p.limit);
            return;
        }
        double at_roof = c->tensor ? 2 * pt->launch.tensor_fma / (g->tensor_tflops * 1e12)
                                   : pt->launch.bytes / (g->dram_gbps * 1e9);
        double call = at_roof / p.predicted;
        if (o->parts)
            printf("  part %-30s x%d: %lld blocks, %d waves, %.2f us at the roof, %.2f predicted (%s)\n",
                   pt->kernel, pt->times, pt->launch.blocks, p.waves, at_roof * 1e6, p.predicted, p.limit);
        out->at_roof_s += pt->times * at_roof;
        out->call_s += pt->times * call;
        launches += pt->times * pt->launch.kernels;
        if (call > worst_s) {
            worst_s = call;
            out->worst = pt;
            out->res = r;
            out->loop = loop;
            out->p = p;
        }
    }
    out->ok = out->judged = true;
    out->predicted = out->at_roof_s / out->call_s;
    double fixed_s = launches * g->launch_us * 1e-6;
    if (c->launch_premise > 0 && out->at_roof_s < c->launch_premise * fixed_s) {
        out->judged = false;
        snprintf(out->why, sizeof out->why,
                 "premise not met: %.2f us at the roof, under %g x %g launches of %.1f us: not judged",
                 out->at_roof_s * 1e6, c->launch_premise, launches, g->launch_us);
    }
    out->of_roof = c->tensor ? out->predicted : out->predicted / roof;
    if (c->model == MODEL_SPILL) {
        out->predicted = out->of_roof =
            gpu_model_spill_closeness(g, &out->p, &out->loop, c->rows, c->k, c->f, NULL);
        out->ok = isfinite(out->predicted);
        if (!out->ok)
            snprintf(out->why, sizeof out->why, "%s: no schedule to simulate", c->part[0].kernel);
    }
}

/* Whether a case's prediction meets its bar (an upper bound for some). */
static bool meets(const judged_case *c, const result *r, double bar)
{
    return r->ok && (c->at_most ? r->of_roof <= bar : r->of_roof >= bar);
}

/* Whether a case fails: modelled, judged, and short of its bar; or not
 * modelled at all (a kernel missing from the build). */
static bool fails(const judged_case *c, const result *r, double bar)
{
    return !r->ok || (r->judged && !meets(c, r, bar));
}

/* ---- what a run measured (--measured DIR) ------------------------------------------------ */

/* The fields of a CSV line, quotes honoured, into f (at most max). */
static int csv_fields(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        bool quoted = *p == '"';
        char *start = quoted ? ++p : p, *out = p;
        while (*p && (quoted || (*p != ',' && *p != '\n'))) {
            if (quoted && *p == '"') {
                if (p[1] != '"') {
                    quoted = false;
                    p++;
                    continue;
                }
                p++;
            }
            *out++ = *p++;
        }
        bool more = *p == ',';
        *out = '\0';
        f[n++] = start;
        if (!more)
            break;
        p++;
    }
    return n;
}

/* Whether the row (fields f under header h) has every key=value of where. */
static bool row_matches(char **h, int nh, char **f, int nf, const char *where)
{
    char w[160];
    snprintf(w, sizeof w, "%s", where);
    for (char *save = NULL, *kv = strtok_r(w, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return false;
        *eq = '\0';
        bool ok = false;
        for (int i = 0; i < nh && i < nf && !ok; i++)
            ok = !strcmp(h[i], kv) && !strcmp(f[i], eq + 1);
        if (!ok)
            return false;
    }
    return true;
}

/* Whether the sources (git pathspecs, separated by spaces) are the same
 * in this tree as at the commit a run names: a measurement of another
 * kernel is no check of this one's model. */
static bool unchanged_since(const char *root, const char *commit, const char *sources)
{
    char cmd[2048];
    if (!commit[0] || strspn(commit, "0123456789abcdef") != strlen(commit) || strchr(sources, '\''))
        return false;
    int n = snprintf(cmd, sizeof cmd, "git -C '%s' diff --quiet %s --", root, commit);
    char list[512];
    snprintf(list, sizeof list, "%s", sources);
    for (char *save = NULL, *s = strtok_r(list, " ", &save); s && n < (int)sizeof cmd; s = strtok_r(NULL, " ", &save))
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", s);
    n += snprintf(cmd + n, sizeof cmd - (size_t)n, " 2>/dev/null");
    return n < (int)sizeof cmd && system(cmd) == 0;
}

/* The fraction of gpu's datasheet roof the run in dir measured for c: its
 * last matching row's gbps (tflops), or NAN (no such run, row, or GPU, or
 * the kernel's source changed since the run). */
static double measured_fraction(const char *dir, const char *root, bool any_commit,
                                const rl_gpu_spec *g, const judged_case *c)
{
    char path[1024], line[8192], head[8192], *h[128], *f[128], commit[64] = "";
    snprintf(path, sizeof path, "%s/exp-%s.csv", dir, c->exp);
    FILE *in = fopen(path, "r");
    if (!in || !c->meas_where[0]) {
        if (in)
            fclose(in);
        return NAN;
    }
    int nh = 0;
    double value = NAN;
    bool this_gpu = false;
    while (fgets(line, sizeof line, in)) {
        if (line[0] == '#') {
            if (!strncmp(line, "# datasheet: ", 13))
                this_gpu = !strncmp(line + 13, g->name, strlen(g->name)) && line[13 + strlen(g->name)] == '\n';
            if (!strncmp(line, "# git_commit: ", 14))
                sscanf(line + 14, "%63[0-9a-f]", commit);
            continue;
        }
        if (!nh) {
            snprintf(head, sizeof head, "%s", line);
            nh = csv_fields(head, h, 128);
            continue;
        }
        int nf = csv_fields(line, f, 128);
        if (!row_matches(h, nh, f, nf, c->meas_where))
            continue;
        for (int i = 0; i < nh && i < nf; i++)
            if (!strcmp(h[i], c->tensor ? "tflops" : "gbps") && f[i][0])
                value = atof(f[i]) / (c->tensor ? g->tensor_tflops : g->dram_gbps);
    }
    fclose(in);
    return this_gpu && (any_commit || unchanged_since(root, commit, c->source)) ? value : NAN;
}

/* The DRAM read roof a lent GPU measured, over its datasheet's (its
 * reference run's ceilings.csv under root/<slug>/), or 1 where none was
 * measured: the verdicts divide by the measured roof. */
static double roof_fraction(const char *root, const rl_gpu_spec *g)
{
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/%s/ceilings.csv", root ? root : "", g->slug);
    FILE *in = root ? fopen(path, "r") : NULL;
    double best = NAN;
    while (in && fgets(line, sizeof line, in))
        if (!strncmp(line, "bandwidth,DRAM,read,", 20))
            sscanf(line + 20, "%*[^,],%lf", &best);
    if (in)
        fclose(in);
    return best > 0 ? best / g->dram_gbps : 1;
}

/* ---- output ------------------------------------------------------------------------------ */

/* The columns: these, one per pipe (rl_pipe_names) where PIPES is, and the rest. */
static const char *COLUMNS_HEAD =
    "gpu,sm,exp,claim,kind,what,kernel,parts,registers,spill_bytes,smem_bytes,blocks_per_sm,warps_per_sm,"
    "occupancy_limit,grid_blocks,waves,main_loop,loop_instructions,rare_instructions,stream_bytes,"
    "instructions_per_byte,l1_bytes_per_byte,";
static const char *COLUMNS_TAIL =
    "local_ops,cycles_per_iter,issue_limit,inflight_per_warp,inflight_per_sm,needed_per_sm,issue_ceiling,latency_ceiling,"
    "launch_ceiling,predicted,limit,roof_fraction,predicted_of_roof,bar,meets_bar,bar_why,measured,"
    "chart,skipped_reason";

static void csv_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputs("\",", f);
}

static void csv_num(FILE *f, double v) { isfinite(v) ? fprintf(f, "%.4g,", v) : fputs(",", f); }

static void write_row(FILE *f, const rl_gpu_spec *g, const judged_case *c, const result *r, double bar,
                      double measured, double roof, bool chart)
{
    fprintf(f, "%s,%d,%s,%s,", g->slug, g->sm, c->exp, c->claim);
    csv_text(f, c->kind);
    csv_text(f, c->what);
    csv_text(f, r->worst ? r->worst->kernel : c->part[0].kernel);
    fprintf(f, "%d,", c->nparts);
    if (!r->ok) {
        for (int k = 0; k < 25 + RL_PIPES; k++) /* registers .. limit: empty */
            fputc(',', f);
        fprintf(f, "%.4g,,%.4g,,", roof, bar);
        csv_text(f, c->bar_why);
        csv_num(f, measured);
        fputs("no,", f);
        csv_text(f, r->why);
        fputs("\n", f);
        return;
    }
    const rl_sass_loop *l = &r->loop;
    const rl_gpu_prediction *p = &r->p;
    int wpb = (r->worst->launch.threads + 31) / 32;
    fprintf(f, "%d,%d,%d,%d,%d,", r->res->r.registers, r->res->r.spill_bytes,
            r->res->r.static_smem + (int)r->worst->launch.dyn_smem, p->occ.blocks, p->occ.blocks * wpb);
    csv_text(f, p->occ.limit ? p->occ.limit : "");
    fprintf(f, "%lld,%d,%s,%d,%d,", r->worst->launch.blocks, p->waves, l->found ? "loop" : "whole kernel",
            l->instructions, l->rare);
    csv_num(f, l->stream_bytes);
    csv_num(f, l->stream_bytes > 0 ? l->instructions / l->stream_bytes : NAN);
    csv_num(f, l->stream_bytes > 0 ? l->l1_bytes / l->stream_bytes : NAN);
    for (int k = 0; k < RL_PIPES; k++)
        fprintf(f, "%d,", l->pipe[k]);
    fprintf(f, "%d,", l->local_ops);
    csv_num(f, p->cycles_per_iter);
    csv_text(f, p->issue_limit ? p->issue_limit : "");
    csv_num(f, l->inflight_bytes);
    csv_num(f, p->inflight_per_sm);
    csv_num(f, p->needed_per_sm);
    csv_num(f, p->issue);
    csv_num(f, p->latency);
    csv_num(f, p->fixed);
    csv_num(f, r->predicted);
    csv_text(f, c->model == MODEL_SPILL ? "schedule" : p->limit);
    csv_num(f, roof);
    csv_num(f, r->of_roof);
    csv_num(f, bar);
    fprintf(f, "%s,", !r->judged ? "not judged" : meets(c, r, bar) ? "yes" : "no");
    csv_text(f, c->bar_why);
    csv_num(f, measured);
    fprintf(f, "%s,", chart ? "yes" : "no");
    csv_text(f, r->judged ? "" : r->why);
    fputs("\n", f);
}

static void print_row(const rl_gpu_spec *g, const judged_case *c, const result *r, double bar,
                      double measured)
{
    char head[160];
    snprintf(head, sizeof head, "exp-%s %-20s %-28s", c->exp, c->claim, c->what);
    if (!r->ok) {
        printf("%-9s %s  not modelled: %s\n", g->slug, head, r->why);
        return;
    }
    const rl_sass_loop *l = &r->loop;
    const rl_gpu_prediction *p = &r->p;
    char meas[16] = "";
    if (isfinite(measured))
        snprintf(meas, sizeof meas, " (ran: %.2f)", measured);
    printf("%-9s %s %-28s %3d %2dw %5.3f %5.0f  %4.2f %4.2f %4.2f  %4.2f %-9s %4.2f %s %4.2f %s%s\n",
           g->slug, head, r->worst->kernel, r->res->r.registers, p->occ.warps,
           c->tensor ? 1e3 * l->instructions / l->tensor_fma : l->instructions / l->stream_bytes,
           l->inflight_bytes, p->issue, p->latency, p->fixed, r->predicted,
           c->model == MODEL_SPILL ? "schedule" : p->limit, r->of_roof, c->at_most ? "<=" : ">=", bar,
           !r->judged ? "(premise not met)" : meets(c, r, bar) ? "ok" : c->at_most ? "ABOVE" : "BELOW", meas);
}

/* Whether case i has the least margin over its bar among the cases of its
 * claim and kind on this GPU: the one the chart draws. */
static bool worst_of_kind(const judged_case *c, const result *r, const double *bar, int n, int i)
{
    if (!r[i].ok || !r[i].judged)
        return false;
    for (int k = 0; k < n; k++)
        if (k != i && r[k].ok && r[k].judged && !strcmp(c[k].claim, c[i].claim) && !strcmp(c[k].kind, c[i].kind) &&
            (r[k].of_roof / bar[k] < r[i].of_roof / bar[i] || (r[k].of_roof / bar[k] == r[i].of_roof / bar[i] && k < i)))
            return false;
    return true;
}

static void parse_args(int argc, char **argv, options *o)
{
    *o = (options){.sms = "80 90", .root = ".", .judge = "h100-sxm,h200", .nvcc = ""};
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i += 2) {
        if (!strcmp(argv[i], "--measured-any-commit") || !strcmp(argv[i], "--parts")) {
            *(argv[i][2] == 'm' ? &o->any_commit : &o->parts) = true;
            i--;
            continue;
        }
        if (!strcmp(argv[i], "--help") || i + 1 >= argc)
            usage();
        const char *v = argv[i + 1];
        if (!strcmp(argv[i], "--listings")) o->listings = v;
        else if (!strcmp(argv[i], "--sms")) o->sms = v;
        else if (!strcmp(argv[i], "--source-root")) o->root = v;
        else if (!strcmp(argv[i], "--csv")) o->csv = v;
        else if (!strcmp(argv[i], "--gpus")) o->gpus = v;
        else if (!strcmp(argv[i], "--judge")) o->judge = v;
        else if (!strcmp(argv[i], "--commit")) o->commit = v;
        else if (!strcmp(argv[i], "--nvcc")) o->nvcc = v;
        else if (!strcmp(argv[i], "--measured")) o->measured = v;
        else if (!strcmp(argv[i], "--roofs")) o->roofs = v;
        else usage();
    }
    o->res = argv + i;
    o->nres = argc - i;
    if (!o->listings || !o->csv || o->nres == 0)
        usage();
    if (o->gpus)
        for (const char *p = o->gpus; *p;) {
            size_t n = strcspn(p, ", ");
            char slug[64];
            snprintf(slug, sizeof slug, "%.*s", (int)(n < sizeof slug ? n : sizeof slug - 1), p);
            if (n && !rl_gpu_spec_by_slug(slug)) {
                fprintf(stderr, "gpu-model: no GPU '%s' in the model\n", slug);
                usage();
            }
            p += n + (p[n] != '\0');
        }
}

static void write_header(FILE *f, const options *o)
{
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "# gpu-model: a static model of the judged CUDA kernels, from their SASS and ptxas's "
               "records; no GPU ran them. Every figure a model's.\n"
               "# method: kernels/README.md (issue, latency and launch ceilings; the prediction their "
               "lowest); GPU figures and their sources: harness/gpu_model.c\n"
               "# date_utc: %s\n# git_commit: %s\n# nvcc: %s\n# sms: %s\n",
            when, o->commit ? o->commit : "", o->nvcc, o->sms);
}

int main(int argc, char **argv)
{
    options o;
    parse_args(argc, argv, &o);
    for (int i = 0; i < o.nres; i++)
        read_res(o.res[i]);
    static rl_rare_range rare[MAX_RARE];
    int nrare = scan_rare(o.root, rare, MAX_RARE);
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", o.csv);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        perror(tmp);
        return 2;
    }
    write_header(f, &o);
    fputs(COLUMNS_HEAD, f);
    for (int k = 0; k < RL_PIPES; k++)
        fprintf(f, "%s,", rl_pipe_names[k]);
    fprintf(f, "%s\n", COLUMNS_TAIL);
    printf("%-9s %-55s %-28s %3s %3s %5s %5s  %4s %4s %4s  %4s %-9s %4s    %4s\n", "gpu",
           "verdict and shape", "kernel (the slowest part)", "reg", "wrp", "ins/B", "fly B", "iss", "lat",
           "lnch", "pred", "limit", "roof", "bar");
    int below = 0;
    for (const rl_gpu_spec *g = rl_gpu_specs; g->slug; g++) {
        char sm[8];
        snprintf(sm, sizeof sm, "%d", g->sm);
        if (!listed(o.sms, sm) || (o.gpus && !listed(o.gpus, g->slug)))
            continue;
        static judged_case cases[MAX_CASES];
        static result results[MAX_CASES];
        int rel[MAX_CASES];
        double factor[MAX_CASES];
        int n = gpu_model_cases(g, blocks_per_sm, cases, MAX_CASES, rel, factor);
        double roof = roof_fraction(o.roofs, g), bars[MAX_CASES];
        for (int i = 0; i < n; i++)
            model_case(&o, g, &cases[i], rare, nrare, roof, &results[i]);
        for (int i = 0; i < n; i++)
            bars[i] = rel[i] >= 0 ? fmin(results[rel[i]].of_roof, 1) * factor[i] : cases[i].bar;
        for (int i = 0; i < n; i++) {
            double bar = bars[i];
            double measured = o.measured ? measured_fraction(o.measured, o.root, o.any_commit, g, &cases[i]) : NAN;
            bool chart = listed(o.judge, g->slug) && worst_of_kind(cases, results, bars, n, i);
            write_row(f, g, &cases[i], &results[i], bar, measured, roof, chart);
            print_row(g, &cases[i], &results[i], bar, measured);
            if (listed(o.judge, g->slug) && fails(&cases[i], &results[i], bar))
                below++;
        }
    }
    if (fclose(f) != 0 || rename(tmp, o.csv) != 0) {
        perror(o.csv);
        return 2;
    }
    printf("gpu-model: wrote %s; %d case(s) on %s short of their bar (or not modelled)\n", o.csv, below, o.judge);
    return below ? 1 : 0;
}

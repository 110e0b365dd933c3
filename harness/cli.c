/*
 * cli.c -- the command line every experiment shares, plus its own options.
 *
 * Bad input gets one clear line on stderr and exit code 2; --help lists
 * the common options and the experiment's.
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *COMMON_HELP =
    "  --backend cuda|cpu|auto  where to run (default auto: the GPU if there is one)\n"
    "  --quick                  a smoke test: the fewest points, 3 samples each, seconds\n"
    "  --full                   the reference sweep (make reference): every point, the strict\n"
    "                           stop rule; without --quick or --full, a lab run (minutes)\n"
    "  --max-bytes SIZE         cap every working set at SIZE (e.g. 512Mi); points that then\n"
    "                           fit a cache are judged against that cache's ceiling\n"
    "  --budget SECONDS         finish within SECONDS of wall time (+10 %): the points the\n"
    "                           verdicts need first, then the rest as time allows\n"
    "  --slot SECONDS           a lab run's clock (default 105 in a lab run; 0: none): it ends\n"
    "                           within SECONDS (+10 %), the charts' sweep points shed first;\n"
    "                           unlike --budget, the tuner, ceilings and trials stay the lab's\n"
    "  --timeout SECONDS        stop sampling a point after SECONDS, quiet or not (default\n"
    "                           the mode's: quick 0.3, lab 1, full 2.5)\n"
    "  --ceilings FILE          use the roofs in FILE (a ceilings.csv) and measure none\n"
    "  --out DIR                results root; the CSV goes to DIR/<label>/ (default results)\n"
    "  --plots DIR              charts root; charts go to DIR/<label>/ (default plots)\n"
    "  --label NAME             name of this run (default: the device's slug)\n"
    "  --variant LIST           only these variants, by number or name, comma-separated\n"
    "  --list                   list the variants and exit\n"
    "  --device N               CUDA device index (default 0)\n"
    "  --seed N                 seed of the random inputs (default 1)\n"
    "  --cache cold|hot         flush the cache before each sample, or run back to back\n"
    "  --roofs group|start      judge MBU and MFU against roofs timed with each group (default)\n"
    "                           or against the ladder measured at the run's start only\n"
    "  --retune                 time the tunable kernels' shapes again on this machine\n"
    "                           (otherwise the choice cached in <label>/tuning.csv)\n"
    "  --no-plot                write the CSV but draw no charts\n"
    "  --reference auto|none    overlay the checked-in reference run of this device\n"
    "                           (results/reference/<device>/), if there is one (default auto)\n"
    "  --plot-only              redraw the charts from an existing CSV and exit\n"
    "  --print-label            print the label this run would use and exit\n"
    "  --points                 print the plan and every point it declares (its part, group\n"
    "                           and columns), then exit: nothing is timed (with --ceilings,\n"
    "                           nothing is measured at all)\n"
    "  --plan-file FILE         write the plan to FILE as key=value lines (expected_s_low,\n"
    "                           expected_s_high, ...) before it is printed: for scripts\n"
    "  --outcome-file FILE      write how the run ended to FILE as key=value lines, as it\n"
    "                           ends (a SIGTERM's stop too): exit_status, stopped,\n"
    "                           points_done, points_total, csv, partial, charts, charts_why\n"
    "  --rows-file FILE         write the run's rows to FILE as a CSV (its columns and\n"
    "                           header, the tuner's choices as <key>_choice), even for a\n"
    "                           side benchmark that keeps no results (exp-03 --matrix)\n"
    "  --help                   this text\n";

void rl_print_usage(const char *prog, const char *title, const rl_option *extra)
{
    printf("usage: %s [options]\n\n%s\n\noptions:\n%s", prog, title, COMMON_HELP);
    for (const rl_option *o = extra; o && o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->metavar ? " " : "",
                 o->metavar ? o->metavar : "");
        printf("  %-24s %s", left, o->help);
        if (o->value && *o->value && **o->value && o->metavar) /* "" is no default */
            printf(" (default %s)", *o->value);
        printf("\n");
    }
    printf("\nexit codes: 0 ran (a claim that does not hold is a result), 1 a kernel failed\n"
           "validation or the device failed, 2 bad usage, 77 needs a GPU and none is present.\n");
}

static int usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see %s --help)\n", prog);
    va_end(ap);
    return RL_EXIT_USAGE;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool rl_parse_size(const char *s, size_t *out)
{
    if (!s || !*s || *s == '-')
        return false;
    if (strncmp(s, "2^", 2) == 0) {
        uint64_t e;
        if (!parse_u64(s + 2, &e) || e > 62)
            return false;
        *out = (size_t)1 << e;
        return true;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    static const struct { const char *suffix; unsigned long long mul; } units[] = {
        {"", 1}, {"K", 1000ULL}, {"Ki", 1ULL << 10}, {"M", 1000000ULL}, {"Mi", 1ULL << 20},
        {"G", 1000000000ULL}, {"Gi", 1ULL << 30}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].suffix) == 0) {
            if (v > (~0ULL) / units[i].mul)
                return false;
            *out = (size_t)(v * units[i].mul);
            return true;
        }
    return false;
}

/* Seconds in [lo, hi]: a plain decimal number, nothing after it. */
static bool parse_seconds(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

/* A label names a folder under results/ and plots/: letters, digits,
 * '.', '_', '-', and '/' between parts (for "reference/h200"). */
static bool valid_label(const char *s)
{
    if (!*s || *s == '/' || strstr(s, "..") || strstr(s, "//") || s[strlen(s) - 1] == '/')
        return false;
    for (const char *p = s; *p; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-' || *p == '/'))
            return false;
    return true;
}

static bool in_choices(const char *value, const char *choices)
{
    size_t len = strlen(value);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, value, n) == 0)
            return true;
        if (!bar)
            break;
        p = bar + 1;
    }
    return false;
}

/* Splits "--name=value" or "--name value"; returns the value or NULL. */
static const char *take_value(int argc, char **argv, int *i, const char *eq)
{
    if (eq)
        return eq + 1;
    /* "--out --quick" is a forgotten value, not a folder named "--quick". */
    if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
        return argv[++*i];
    return NULL;
}

static int parse_common(const char *prog, const char *name, const char *value, rl_args *a)
{
    if (!strcmp(name, "backend")) {
        if (!strcmp(value, "cuda")) a->backend = RL_BACKEND_CUDA;
        else if (!strcmp(value, "cpu")) a->backend = RL_BACKEND_CPU;
        else if (!strcmp(value, "auto")) a->backend = RL_BACKEND_AUTO;
        else return usage_error(prog, "--backend must be cuda, cpu or auto, not '%s'", value);
    } else if (!strcmp(name, "roofs")) {
        if (!strcmp(value, "group")) a->start_roofs = false;
        else if (!strcmp(value, "start")) a->start_roofs = true;
        else return usage_error(prog, "--roofs must be group or start, not '%s'", value);
    } else if (!strcmp(name, "cache")) {
        if (!strcmp(value, "cold")) a->cache = RL_COLD;
        else if (!strcmp(value, "hot")) a->cache = RL_HOT;
        else return usage_error(prog, "--cache must be cold or hot, not '%s'", value);
        a->cache_given = true;
    } else if (!strcmp(name, "reference")) {
        if (!strcmp(value, "none")) a->no_reference = true;
        else if (!strcmp(value, "auto")) a->no_reference = false;
        else return usage_error(prog, "--reference must be auto or none, not '%s'", value);
    } else if (!strcmp(name, "out")) {
        a->out_dir = value;
    } else if (!strcmp(name, "plots")) {
        a->plots_dir = value;
    } else if (!strcmp(name, "label")) {
        if (!valid_label(value))
            return usage_error(prog, "bad --label '%s': use letters, digits, '.', '_', '-' "
                                     "and '/' between parts", value);
        a->label = value;
    } else if (!strcmp(name, "variant")) {
        a->variants = value;
    } else if (!strcmp(name, "ceilings")) {
        a->ceilings_file = value;
    } else if (!strcmp(name, "plan-file")) {
        a->plan_file = value;
    } else if (!strcmp(name, "outcome-file")) {
        a->outcome_file = value;
    } else if (!strcmp(name, "rows-file")) {
        a->rows_file = value;
    } else if (!strcmp(name, "max-bytes")) {
        size_t bytes;
        if (!rl_parse_size(value, &bytes) || bytes < (1u << 20))
            return usage_error(prog, "bad --max-bytes '%s': expected a size of at least 1Mi, "
                                     "such as 256Mi or 2Gi", value);
        a->max_bytes = (double)bytes;
    } else if (!strcmp(name, "budget")) {
        if (!parse_seconds(value, 1, 86400, &a->budget_s))
            return usage_error(prog, "bad --budget '%s': expected seconds, 1 to 86400", value);
    } else if (!strcmp(name, "slot")) {
        if (!parse_seconds(value, 0, 86400, &a->slot_s) || (a->slot_s > 0 && a->slot_s < 1))
            return usage_error(prog, "bad --slot '%s': expected seconds, 1 to 86400, or 0 for none",
                               value);
        a->slot_given = true;
    } else if (!strcmp(name, "timeout")) {
        if (!parse_seconds(value, 0.001, 3600, &a->timeout_s))
            return usage_error(prog, "bad --timeout '%s': expected seconds, 0.001 to 3600", value);
    } else if (!strcmp(name, "device")) {
        uint64_t d;
        if (!parse_u64(value, &d) || d > 64)
            return usage_error(prog, "bad --device '%s': expected a device index", value);
        a->device = (int)d;
    } else if (!strcmp(name, "seed")) {
        if (!parse_u64(value, &a->seed))
            return usage_error(prog, "bad --seed '%s': expected a non-negative integer", value);
    } else {
        return -1; /* not a common option with a value */
    }
    return 0;
}

static bool *common_flag(const char *name, rl_args *a)
{
    if (!strcmp(name, "quick")) return &a->quick;
    if (!strcmp(name, "full")) return &a->full;
    if (!strcmp(name, "list")) return &a->list;
    if (!strcmp(name, "help")) return &a->help;
    if (!strcmp(name, "no-plot")) return &a->no_plot;
    if (!strcmp(name, "retune")) return &a->retune;
    if (!strcmp(name, "plot-only")) return &a->plot_only;
    if (!strcmp(name, "print-label")) return &a->print_label;
    if (!strcmp(name, "points")) return &a->list_points;
    return NULL;
}

static bool common_takes_value(const char *name)
{
    static const char *with_value[] = {"backend", "cache",    "out",  "plots",    "label",
                                       "variant", "device",   "seed", "reference", "ceilings",
                                       "max-bytes", "roofs",   "budget", "slot", "timeout", "plan-file",
                                       "outcome-file", "rows-file"};
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
        if (!strcmp(name, with_value[i]))
            return true;
    return false;
}

static int parse_extra(const char *prog, const rl_option *o, const char *value)
{
    if (o->choices && !in_choices(value, o->choices))
        return usage_error(prog, "--%s must be one of %s", o->name, o->choices);
    if (!*value)
        return usage_error(prog, "--%s needs a value", o->name);
    *o->value = value;
    return 0;
}

int rl_parse_args(int argc, char **argv, const rl_option *extra, rl_args *a)
{
    const char *prog = argc > 0 ? argv[0] : "rooflab";
    memset(a, 0, sizeof *a);
    a->backend = RL_BACKEND_AUTO;
    a->out_dir = "results";
    a->plots_dir = "plots";
    a->seed = 1;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h")) {
            a->help = true;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 || !arg[2])
            return usage_error(prog, "unexpected argument '%s'", arg);
        char name[64];
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (len >= sizeof name)
            return usage_error(prog, "unknown option '%s'", arg);
        memcpy(name, arg + 2, len);
        name[len] = '\0';

        bool *flag = common_flag(name, a);
        if (flag) {
            if (eq)
                return usage_error(prog, "--%s takes no value", name);
            *flag = true;
            continue;
        }
        const rl_option *o = NULL;
        for (const rl_option *x = extra; x && x->name; x++)
            if (!strcmp(x->name, name))
                o = x;
        if (o && !o->metavar) {
            if (eq)
                return usage_error(prog, "--%s takes no value", name);
            *o->value = "1";
            continue;
        }
        if (!o && !common_takes_value(name))
            return usage_error(prog, "unknown option '%s'", arg);
        const char *value = take_value(argc, argv, &i, eq);
        if (!value)
            return usage_error(prog, "--%s needs a value", name);
        int rc = o ? parse_extra(prog, o, value) : parse_common(prog, name, value, a);
        if (rc)
            return rc;
    }
    if (a->plot_only && a->list)
        return usage_error(prog, "--plot-only and --list exclude each other");
    if (a->plot_only && a->list_points)
        return usage_error(prog, "--plot-only and --points exclude each other");
    if (a->quick && a->full)
        return usage_error(prog, "--quick and --full exclude each other");
    a->mode = a->quick ? RL_MODE_QUICK : a->full ? RL_MODE_FULL : RL_MODE_LAB;
    /* A lab run promises about two minutes on any machine: without a clock
     * of its own it takes the lab slot's. --budget is the stricter clock. */
    if (a->mode == RL_MODE_LAB && !a->slot_given)
        a->slot_s = RL_LAB_SLOT_S;
    if (a->budget_s > 0)
        a->slot_s = 0;
    return 0;
}

const char *rl_mode_name(rl_mode m)
{
    return m == RL_MODE_QUICK ? "quick" : m == RL_MODE_FULL ? "full" : "lab";
}

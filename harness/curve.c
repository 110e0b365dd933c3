/*
 * curve.c -- the read-bandwidth curve over footprints, and the levels of
 * the memory hierarchy found on it.
 *
 * The cache sizes a machine reports are not always the sizes a read sees:
 * a virtual machine may report its host's whole L3, of which it gets a
 * share. So the ceilings start with a curve: the backend's read bandwidth
 * at footprints from 16 KiB up, doubling, to 4x the reported LLC (a memory
 * mountain's one slice). Its plateaus are the levels, its knees where one
 * ends. ceilings.c then measures each level's rungs inside its plateau and
 * roofs.c judges a footprint by where it falls on the knees.
 *
 * A knee is where the rate falls clearly (DROP) below the plateau before
 * it and stays there. Shared machines make noisy curves: one slow point
 * (a neighbour's burst) is smoothed away, a fall at the last point alone
 * is not believed, and a plateau
 * the curve climbs back to was never left (a dip of several points). A
 * slow first point (the overhead of many short passes) is only a rise.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A knee: the rate falls by more than this share of the plateau's. A
 * cache's lead over the next level is most of its rate, a shared
 * machine's noise (once smoothed) a small part: a fifth tells them
 * apart. */
static const double DROP = 0.2;
/* A fall has ended, and the next plateau begun, once the next point is
 * within this share of the last: a step may take several points. */
static const double FLAT = 0.1;
static const double KiB = 1024, MiB = 1024 * 1024;

/* Capacities of the levels, for the whole device: per-core caches times
 * the cores, the shared LLC once; 0 where the device has no such level. */
void rl_levels_reported(const rl_device_info *d, double cap[RL_LEVEL_COUNT])
{
    if (d->kind == RL_CUDA) {
        cap[RL_L1] = cap[RL_L2] = 0;
        cap[RL_LLC] = d->llc_bytes;
        cap[RL_DRAM] = d->mem_bytes;
        return;
    }
    int cores = d->cores > 0 ? d->cores : 1;
    cap[RL_L1] = d->l1d_bytes * cores;
    cap[RL_L2] = d->l3_bytes > 0 ? d->l2_bytes * cores : 0; /* with no L3, the L2 is the LLC */
    cap[RL_LLC] = d->llc_bytes;
    cap[RL_DRAM] = rl_host_ram_bytes();
}

/* A developer's knob pretends the sizes (sysinfo.c) to see how runs size
 * themselves: the curve would undo the pretence, so the pretended sizes
 * hold. */
static const char *pretended(void)
{
    const char *env = getenv("ROOFLAB_LLC");
    return env && *env ? "ROOFLAB_LLC pretends the cache sizes" : NULL;
}

int rl_curve_plan(double llc_bytes, double max_bytes, double ram_bytes, double *bytes, int max)
{
    /* Past the LLC far enough for two points on the DRAM plateau, and at
     * least as far as the DRAM rung is measured (64 MiB). */
    double end = fmax(4 * llc_bytes, 64 * MiB);
    end = fmin(end, max_bytes);
    if (ram_bytes > 0)
        end = fmin(end, ram_bytes / 8);
    int n = 0;
    for (double b = 16 * KiB; b <= end && n < max && n < RL_CURVE_MAX; b *= 2)
        bytes[n++] = b;
    return n;
}

void rl_curve_measure(rl_ctx *ctx, rl_ceilings *c, int trials)
{
    double fp[RL_CURVE_MAX];
    int n = rl_curve_plan(c->level_reported[RL_LLC], rl_max_bytes(ctx),
                          c->level_reported[RL_DRAM], fp, RL_CURVE_MAX);
    for (int i = 0; i < n; i++) {
        if (rl_stop_requested()) { /* SIGTERM: the curve ends here (ceilings.c does not keep it) */
            n = i;
            break;
        }
        char note[128], size[32];
        rl_format_bytes(fp[i], size, sizeof size);
        snprintf(note, sizeof note, "measuring the ceilings: read bandwidth over %s (%d of %d)",
                 size, i + 1, n);
        rl_progress_note(ctx, note);
        c->curve[i] = ctx->be->ops->bandwidth(ctx, RL_READ, fp[i], trials);
        c->curve[i].probe_bytes = fp[i];
    }
    c->curve_n = n;
}

/* ---- knees ---------------------------------------------------------------------- */

/* The best rates, each inner point that is clearly (DROP) below both its
 * neighbours replaced by their mean: a step is never a point below both
 * sides, a neighbour's burst often is. (Noise only ever slows a point: a
 * point above both is a neighbour's slow one.) The ends stay raw: a slow
 * first point is a rise, not a fall, and a slow last one is what the
 * two-point rule is for. */
static void smooth(const rl_band *pt, int n, double *s)
{
    for (int i = 0; i < n; i++) {
        s[i] = pt[i].best;
        if (i == 0 || i == n - 1)
            continue;
        double a = pt[i - 1].best, b = pt[i + 1].best;
        if (s[i] < (1 - DROP) * fmin(a, b))
            s[i] = (a + b) / 2;
    }
}

/* Where the rate crosses half-way from the plateau (from) to the next
 * one (to), looked for from the plateau's start to the next plateau's
 * first point (end), interpolated in log footprint: the doubling grid
 * alone would put every knee at a grid point, up to a factor 2 early. */
static double crossing(const rl_band *pt, const double *s, int start, int end, double from,
                       double to)
{
    double mid = (from + to) / 2;
    int q = start;
    for (int i = start; i < end; i++)
        if (s[i] >= mid)
            q = i;
    double frac = (s[q] - mid) / (s[q] - s[q + 1]);
    frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    return pt[q].probe_bytes * pow(pt[q + 1].probe_bytes / pt[q].probe_bytes, frac);
}

/* The rate a point at x is held against: the better of the two points
 * before it on the plateau that starts at start. Two, not the plateau's
 * best: a curve that sinks a little at every doubling has no knee. */
static double held_to(const double *s, int start, int x)
{
    return x - 2 >= start ? fmax(s[x - 1], s[x - 2]) : s[x - 1];
}

static bool falls(const double *s, int start, int x)
{
    return s[x] < (1 - DROP) * held_to(s, start, x);
}

int rl_curve_knees(const rl_band *pt, int n, rl_knee *out, int max)
{
    if (n < 3)
        return 0; /* too short to tell a plateau from a knee */
    double s[RL_CURVE_MAX];
    smooth(pt, n, s);
    int k = 0, start = 0;         /* the current plateau's first point */
    int starts[RL_CURVE_MAX + 1]; /* each knee's plateau's, to undo it */
    for (int i = 1; i < n; i++) {
        if (k > 0 && s[i] >= (1 - DROP) * out[k - 1].from_gbps) {
            start = starts[--k]; /* back on the plateau before the last knee: a dip */
            continue;
        }
        if (!falls(s, start, i))
            continue;
        double from = held_to(s, start, i);
        if (i + 1 >= n || s[i + 1] >= (1 - DROP) * from)
            continue; /* one slow point alone is not a knee */
        int j = i; /* the next plateau's first point: where the fall ends */
        while (j + 1 < n && s[j + 1] < (1 - FLAT) * s[j])
            j++;
        if (k < max) {
            out[k] = (rl_knee){.bytes = crossing(pt, s, start, j, from, s[j]),
                               .reach = pt[j].probe_bytes, .from_gbps = from, .to_gbps = s[j]};
            starts[k++] = start;
        }
        start = i = j;
    }
    return k;
}

/* ---- knees to levels ---------------------------------------------------------------- */

/* Pairs knees (ascending footprints) with levels (ascending capacities) in
 * order: as many pairs as can be made, and of those pairings the one
 * nearest the reported sizes (the sum of |log2(knee / reported)|).
 * level_of[i]: the level knee i is paired with, or -1. */
static void pair_in_order(const double *knee, int m, const double *rep, int n, int *level_of)
{
    enum { N = RL_CURVE_MAX + 1, L = RL_LEVEL_COUNT + 1 };
    int count[N][L], how[N][L]; /* how: 0 skip the knee, 1 skip the level, 2 pair them */
    double cost[N][L];
    for (int i = 0; i <= m; i++)
        for (int j = 0; j <= n; j++) {
            count[i][j] = 0, cost[i][j] = 0, how[i][j] = i ? 0 : 1;
            if (!i || !j)
                continue;
            int c[3] = {count[i - 1][j], count[i][j - 1], count[i - 1][j - 1] + 1};
            double d[3] = {cost[i - 1][j], cost[i][j - 1],
                           cost[i - 1][j - 1] + fabs(log2(knee[i - 1] / rep[j - 1]))};
            int b = 0;
            for (int t = 1; t < 3; t++)
                if (c[t] > c[b] || (c[t] == c[b] && d[t] < d[b] - 1e-12))
                    b = t;
            count[i][j] = c[b], cost[i][j] = d[b], how[i][j] = b;
        }
    for (int i = 0; i < m; i++)
        level_of[i] = -1;
    for (int i = m, j = n; i > 0 && j > 0;) {
        if (how[i][j] == 2)
            level_of[i - 1] = j - 1;
        int h = how[i][j];
        i -= h != 1;
        j -= h != 0;
    }
}

void rl_curve_levels(const rl_band *pt, int n, const double reported[RL_LEVEL_COUNT],
                     double measured[RL_LEVEL_COUNT], double spill[RL_LEVEL_COUNT])
{
    rl_knee knees[RL_CURVE_MAX];
    int m = rl_curve_knees(pt, n, knees, RL_CURVE_MAX);
    int levels[RL_LEVEL_COUNT], nl = 0; /* the caches the device has, inner first */
    for (int l = 0; l < RL_LEVEL_COUNT; l++) {
        measured[l] = 0;
        spill[l] = 4 * reported[l];
        if (l != RL_DRAM && reported[l] > 0)
            levels[nl++] = l;
    }
    if (m == 0 || nl == 0)
        return;
    /* With as many knees as caches, the plateaus are the levels in order.
     * Otherwise, when the curve went well past the reported LLC, its last
     * knee is the step down to DRAM, whatever the reports say (a VM's
     * "480 MiB" L3); the other knees go to the inner caches they are
     * nearest. */
    int pairable = m, caches = nl;
    int level_of[RL_CURVE_MAX];
    if (m != nl && levels[nl - 1] == RL_LLC && pt[n - 1].probe_bytes >= 2 * reported[RL_LLC]) {
        pairable--, caches--;
        level_of[m - 1] = RL_LLC;
    }
    double kb[RL_CURVE_MAX], rep[RL_LEVEL_COUNT];
    for (int i = 0; i < pairable; i++)
        kb[i] = knees[i].bytes;
    for (int j = 0; j < caches; j++)
        rep[j] = reported[levels[j]];
    pair_in_order(kb, pairable, rep, caches, level_of);
    for (int i = 0; i < pairable; i++)
        level_of[i] = level_of[i] < 0 ? -1 : levels[level_of[i]];
    for (int i = 0; i < m; i++)
        if (level_of[i] >= 0) {
            measured[level_of[i]] = knees[i].bytes;
            spill[level_of[i]] = knees[i].reach;
        }
}

void rl_curve_apply(rl_ceilings *c, rl_backend_kind kind)
{
    const char *why_reported = pretended();
    if (!why_reported && c->curve_busy)
        why_reported = "the host was busy as the curve was measured";
    for (int l = 0; l < RL_LEVEL_COUNT; l++)
        c->level_measured[l] = 0;
    if (c->curve_n > 0 && !why_reported)
        rl_curve_levels(c->curve, c->curve_n, c->level_reported, c->level_measured,
                        c->level_spill);
    char missing[64] = "";
    for (int l = 0; l < RL_LEVEL_COUNT; l++) {
        bool found = c->level_measured[l] > 0;
        c->level_bytes[l] = found ? c->level_measured[l] : c->level_reported[l];
        if (!found)
            c->level_spill[l] = 4 * c->level_reported[l];
        if (!found && l != RL_DRAM && c->level_reported[l] > 0)
            rl_appendf(missing, sizeof missing, "%s%s", missing[0] ? ", " : "",
                       rl_level_name(kind, (rl_level)l));
    }
    if (why_reported)
        snprintf(c->levels_source, sizeof c->levels_source, "reported: %s", why_reported);
    else if (c->curve_n == 0)
        snprintf(c->levels_source, sizeof c->levels_source,
                 "reported: these ceilings hold no bandwidth curve");
    else if (missing[0])
        snprintf(c->levels_source, sizeof c->levels_source,
                 "curve; no knee found for %s: the reported size", missing);
    else
        snprintf(c->levels_source, sizeof c->levels_source, "curve");
}

/* ---- publishing -------------------------------------------------------------------- */

int rl_curve_meta(const rl_ceilings *c, rl_backend_kind kind, rl_meta_line *out, int max)
{
    int n = 0;
    if (n < max)
        out[n++] = (rl_meta_line){"levels_source", ""};
    snprintf(out[0].value, sizeof out[0].value, "%s", c->levels_source);
    for (int w = 0; w < 2 && c->curve_n > 0 && n < max; w++, n++) {
        /* footprint:GB/s pairs, best trials, then worst: one line each */
        snprintf(out[n].key, sizeof out[n].key, "%s", w ? "curve_read_worst_gbps" : "curve_read_gbps");
        out[n].value[0] = '\0';
        for (int i = 0; i < c->curve_n; i++)
            rl_appendf(out[n].value, sizeof out[n].value, "%s%.0f:%.4g", i ? " " : "",
                       c->curve[i].probe_bytes, w ? c->curve[i].worst : c->curve[i].best);
    }
    for (int l = 0; l < RL_DRAM; l++) {
        const char *name = rl_level_name(kind, (rl_level)l);
        if (!(c->level_reported[l] > 0))
            continue;
        if (n < max) {
            snprintf(out[n].key, sizeof out[n].key, "level_%s_bytes_reported", name);
            snprintf(out[n++].value, sizeof out[0].value, "%.0f", c->level_reported[l]);
        }
        if (c->level_measured[l] > 0 && n < max) {
            snprintf(out[n].key, sizeof out[n].key, "level_%s_bytes_measured", name);
            snprintf(out[n++].value, sizeof out[0].value, "%.0f", c->level_measured[l]);
        }
    }
    return n;
}

void rl_curve_describe(const rl_ceilings *c, rl_backend_kind kind, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int l = 0; l < RL_DRAM; l++) {
        if (!(c->level_reported[l] > 0))
            continue;
        char used[32], rep[32];
        rl_format_bytes(c->level_bytes[l], used, sizeof used);
        rl_format_bytes(c->level_reported[l], rep, sizeof rep);
        if (c->level_measured[l] > 0)
            rl_appendf(buf, len, "%s%s %s (reported %s)", buf[0] ? ", " : "",
                       rl_level_name(kind, (rl_level)l), used, rep);
        else
            rl_appendf(buf, len, "%s%s %s reported", buf[0] ? ", " : "",
                       rl_level_name(kind, (rl_level)l), rep);
    }
}

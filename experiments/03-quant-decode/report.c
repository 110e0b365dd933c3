/*
 * report.c -- experiment 03's summary per format (its best valid decode
 * variant), the published llama.cpp table it is compared with, and the
 * verdicts.
 */
#include "exp03.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double GIB = 1073741824.0;
static const char *PUBLISHED = RL_SOURCE_ROOT "/results/published/llamacpp-quantize-llama31-8b.csv";
/* The llama.cpp quant types closest to each of our formats: the all-K "_S"
 * mixes are the nearest to a single block type throughout. */
static const char *const PEERS[QF_COUNT] = {"F16", "Q8_0", "Q6_K", "Q5_K_S", "Q4_K_S", "Q2_K"};

enum { DECODE_SPEEDUP, SIZE_X_DECODE, PREFILL_FLAT };

const rl_claim EXP03_CLAIMS[] = {
    [DECODE_SPEEDUP] = {"decode_speedup_q4", "decode speedup, F16 -> 4.5 bits (q4)", 2.5, INFINITY,
                        "x", 2, .predicted_text = ">= 2.5x (bytes: 3.56x)"},
    /* the worst format's deviation from F16, in % */
    [SIZE_X_DECODE] = {"size_x_decode_flat", "size x decode rate, 8.5 to 4.5 bits, vs F16", -15, 15,
                       "%", 0, .predicted_text = "within +-15 %"},
    [PREFILL_FLAT] = {"prefill_flat", "prefill tokens/s, every format, vs F16", -25, 25, "%", 0,
                      .predicted_text = "within +-25 %"},
    {0},
};

/* ---- the points a summary or verdict looks at ------------------------------------ */

typedef struct of { quant_format f; int phase; } of;

static bool is_of(const rl_point *p, const void *key)
{
    const of *k = key;
    return step_of(p)->f == k->f && (k->phase < 0 || step_of(p)->v->phase == (quant_phase)k->phase);
}

/* A point's rate over the F16 point of its own group: the two were timed
 * together, interleaved, so the machine's drift between groups cancels (on
 * a shared 2-core VM, the memory bandwidth moved by a third between the
 * groups of one reference run). NaN when the group has no F16. */
static double vs_f16(const rl_point *p) { return p ? col_rel_tokens_per_s(NULL, p) : NAN; }

/* Its bytes per second over F16's: size x decode rate, relative. */
static double bytes_vs_f16(const rl_point *p) { return p ? vs_f16(p) * step_of(p)->rel_size : NAN; }

static double rank(const rl_point *p) { return isnan(vs_f16(p)) ? -INFINITY : vs_f16(p); }

/* A format's best valid point of a phase, the one the tables and the
 * verdicts use whatever variants the table has: the highest rate over the
 * F16 timed with it; for F16 itself (1 in every group), the fastest. */
static const rl_point *best_of(const rl_points *pts, quant_format f, quant_phase phase)
{
    of key = {f, (int)phase};
    if (f == QF_F16)
        return rl_points_fastest(pts, NULL, is_of, &key);
    const rl_point *best = NULL;
    for (int i = 0; i < pts->n; i++) {
        const rl_point *p = &pts->v[i];
        if (rl_point_timed(p) && is_of(p, &key) && (!best || rank(p) > rank(best)))
            best = p;
    }
    return best;
}

static const rl_point *best_decode(const rl_points *pts, quant_format f)
{
    return best_of(pts, f, QUANT_DECODE);
}

static const rl_point *best_prefill(const rl_points *pts, quant_format f)
{
    return best_of(pts, f, QUANT_PREFILL);
}

static const rl_point *by_role(const rl_points *pts, quant_format f, const char *role)
{
    return rl_points_find(pts, role, is_of, &(of){f, -1});
}

static double tps(const rl_point *p) { return p ? step_of(p)->tokens / p->seconds : NAN; }
static double gbps(const rl_point *p) { return p ? rl_point_gbps(p) : NAN; }

/* Decode reads the weights once per step: the read pattern, at the level
 * one format's weights live in. */
static rl_roof model_roof(rl_ctx *ctx, const model *m, quant_format f)
{
    return rl_roof_for(ctx, model_bytes(m, f), RL_READ);
}

static double decode_mbu(rl_ctx *ctx, const rl_points *pts, quant_format f)
{
    const rl_point *p = best_decode(pts, f);
    return p ? rl_point_mbu(ctx, p) : NAN;
}

/* ---- the published table ---------------------------------------------------------- */

static int find_published(const rl_table *t, const char *quant);

/* quant,model_bpw,size_gib,prefill_tps,prefill_tps_sd,decode_tps,decode_tps_sd; NULL when absent. */
static rl_table *read_published(void)
{
    char why[256];
    rl_table *t = rl_table_read(PUBLISHED, why, sizeof why);
    if (t && find_published(t, "F16") < 0) {
        rl_table_free(t);
        return NULL;
    }
    return t;
}

static int find_published(const rl_table *t, const char *quant)
{
    for (int r = 0; r < t->nrows; r++)
        if (!strcmp(rl_table_get(t, r, "quant"), quant))
            return r;
    return -1;
}

static double pub(const rl_table *t, int row, const char *column)
{
    return row < 0 ? NAN : atof(rl_table_get(t, row, column));
}

void write_published_rows(rl_ctx *ctx)
{
    rl_table *t = read_published();
    if (!t) {
        printf("\n(no published table at %s: the charts show this run only)\n", PUBLISHED);
        return;
    }
    int f16 = find_published(t, "F16");
    for (int d = 1; d >= 0; d--)
        for (int r = 0; r < t->nrows; r++) {
            const char *rate = d ? "decode_tps" : "prefill_tps";
            double size = pub(t, r, "size_gib"), tps = pub(t, r, rate);
            rl_set_str(ctx, "source", "llama.cpp");
            rl_set_str(ctx, "format", rl_table_get(t, r, "quant"));
            rl_set_num(ctx, "bits_per_weight", pub(t, r, "model_bpw"));
            rl_set_str(ctx, "phase", d ? "decode" : "prefill");
            rl_set_num(ctx, "size_bytes", size * GIB);
            rl_set_num(ctx, "size_gib", size);
            rl_set_int(ctx, "tokens", d ? 1 : 512);
            rl_set_num(ctx, "tokens_per_s", tps);
            rl_set_num(ctx, "gbps", d ? size * GIB * tps / 1e9 : NAN);
            rl_set_num(ctx, "rel_size", size / pub(t, f16, "size_gib"));
            rl_set_num(ctx, "rel_tokens_per_s", tps / pub(t, f16, rate));
            rl_set_str(ctx, "skipped_reason", "published: llama.cpp quantize README, another machine");
            rl_end_row(ctx);
        }
    rl_table_free(t);
}

/* ---- tables ------------------------------------------------------------------------ */

static void print_measured(rl_ctx *ctx, const rl_points *pts, const model *m)
{
    static const rl_grid_column COLS[] = {
        {"format", "%-6s"}, {"bits/w", "%8.6g"}, {"size MiB", "%10.1f"}, {"prefill t/s", "%12.1f"},
        {"decode t/s", "%11.1f"}, {"variant", "%-13s"}, {"size x dec GB/s", "%15.1f"},
        {"ceiling t/s", "%12.1f"}, {"level", "%-8s"}, {"MBU", "%6.2f"}, {0}};
    printf("\n  each format's best decode variant (fastest against the F16 timed with it), and its "
           "prefill\n");
    rl_grid_header(COLS);
    for (quant_format f = 0; f < QF_COUNT; f++) {
        const rl_point *d = best_decode(pts, f);
        rl_roof roof = model_roof(ctx, m, f);
        rl_grid_row(COLS, quant_formats[f].name, quant_bits_per_weight(f),
                    model_bytes(m, f) / 1048576.0, tps(best_prefill(pts, f)), tps(d),
                    d ? d->variant->name : NULL, gbps(d),
                    rl_tokens_per_s_ceiling(roof.gbps * 1e9, model_bytes(m, f)), roof.name,
                    decode_mbu(ctx, pts, f));
    }
}

static void print_published(const rl_points *pts, const model *m)
{
    static const rl_grid_column COLS[] = {
        {"format", "%-6s"}, {"size", "%8.3f"}, {"decode", "%8.2f"}, {"prefill", "%8.2f"},
        {"peer", "%-7s"}, {"size", "%8.3f"}, {"decode", "%8.2f"}, {"prefill", "%8.2f"}, {0}};
    rl_table *t = read_published();
    if (!t)
        return;
    int f16 = find_published(t, "F16");
    printf("\n  relative to F16: this run vs llama.cpp's published table (Llama-3.1-8B, another machine)\n");
    rl_grid_header(COLS);
    for (quant_format f = 0; f < QF_COUNT; f++) {
        int p = find_published(t, PEERS[f]);
        rl_grid_row(COLS, quant_formats[f].name, model_bytes(m, f) / model_bytes(m, QF_F16),
                    vs_f16(best_decode(pts, f)), vs_f16(best_prefill(pts, f)), PEERS[f],
                    pub(t, p, "size_gib") / pub(t, f16, "size_gib"),
                    pub(t, p, "decode_tps") / pub(t, f16, "decode_tps"),
                    pub(t, p, "prefill_tps") / pub(t, f16, "prefill_tps"));
    }
    rl_table_free(t);
}

/* The claims register's ceiling table: bandwidth over bytes per token, for
 * the datasheet GPUs and this device (a model, not a measurement). Sizes:
 * llama.cpp's quantize README (8B), the claims register (70B, 4.8 GB). */
static void ceiling_row(const char *device, double gbps)
{
    static const rl_grid_column COLS[] = {
        {"device", "%-26s"}, {"GB/s", "%9.0f"}, {"4.8 GB", "%11.1f"}, {"8B F16", "%11.1f"},
        {"8B Q4_K_M", "%11.1f"}, {"8B Q2_K", "%11.1f"}, {"70B Q4_K_M", "%11.1f"}, {0}};
    static const double GIB = 1073741824.0, BYTES[] = {4.8e9, 14.96 * GIB, 4.58 * GIB, 2.95 * GIB, 40.2 * GIB};
    double t[5];
    for (int i = 0; i < 5; i++)
        t[i] = rl_tokens_per_s_ceiling(gbps * 1e9, BYTES[i]);
    if (!device)
        rl_grid_header(COLS);
    else
        rl_grid_row(COLS, device, gbps, t[0], t[1], t[2], t[3], t[4]);
}

static void print_ceilings(rl_ctx *ctx)
{
    printf("\n  model: decode tokens/s ceiling = memory bandwidth / bytes of weights per token\n");
    ceiling_row(NULL, 0);
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++)
        ceiling_row(d->name, d->mem_gbps);
    ceiling_row("this device (DRAM read)", rl_ceilings_get(ctx)->bw[RL_DRAM][RL_READ].best);
}

void print_tables(rl_ctx *ctx, const rl_points *pts, const model *m)
{
    print_measured(ctx, pts, m);
    print_published(pts, m);
    print_ceilings(ctx);
    fflush(stdout);
}

/* ---- verdicts ---------------------------------------------------------------------- */

/* Why the quantized formats fall behind F16's bytes per second, read from
 * the shape of the gap over q8..q4 (each format's bytes per second over
 * the F16 timed with it): bytes per second that fall as the bits fall mean
 * a cost per weight (compute: decoding, not reading, sets the time); a
 * level below F16's means a cost per byte of the quantized path. */
static void decode_regime(rl_ctx *ctx, const rl_points *pts, char *buf, size_t len)
{
    double r[QF_COUNT], lo = INFINITY, hi = 0; /* each format's GB/s over F16's */
    for (int f = 0; f < QF_COUNT; f++)
        r[f] = bytes_vs_f16(best_decode(pts, f));
    size_t used = (size_t)snprintf(buf, len, "GB/s over the F16 timed with it");
    for (int f = QF_Q8; f < QF_COUNT && used < len; f++)
        used += (size_t)snprintf(buf + used, len - used, " %s %.2f", quant_formats[f].name, r[f]);
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, "; MBU");
    for (int f = 0; f < QF_COUNT && used < len; f++)
        used += (size_t)snprintf(buf + used, len - used, " %s %.2f", quant_formats[f].name,
                                 decode_mbu(ctx, pts, f));
    /* q2 is not judged, but its place below the bytes is explained */
    double q2 = r[QF_Q2];
    if (q2 < 0.85 && used < len)
        used += (size_t)snprintf(buf + used, len - used, "; q2 below the bytes (%.2f of F16's "
                                 "GB/s): its 2-bit planes cost the most instructions per byte "
                                 "read, %s", q2, ctx->kind == RL_CUDA ? "issue-bound (README)" :
                                 "compute-bound (README: instructions per byte)");
    for (int f = QF_Q8; f <= QF_Q4; f++)
        lo = fmin(lo, r[f]), hi = fmax(hi, r[f]);
    if (!(hi > 0) || used >= len || lo >= 0.85)
        return;
    double q8 = r[QF_Q8], q4 = r[QF_Q4];
    if (q4 < 0.8 * q8)
        snprintf(buf + used, len - used, "; GB/s falls with the bits (q4 %.2f of q8's): a cost "
                 "per weight, %s", q4 / q8, ctx->kind == RL_CUDA ?
                 "fixed per-step costs or the decode's instructions" :
                 "compute-bound: decoding, not reading, sets the time");
    else
        snprintf(buf + used, len - used, "; q8 to q4 read at one level, %.2f-%.2f of F16's GB/s, "
                 "whatever the bits: a cost per byte of the quantized path, not compute per "
                 "weight", lo, hi);
}

/* Where the judged formats' weights live: "DRAM", or "LLC" when they all
 * share one level, else the range ("L2-LLC to LLC"). */
static void judged_levels(rl_ctx *ctx, const model *m, char *buf, size_t len)
{
    rl_roof lo = model_roof(ctx, m, QF_Q4), hi = model_roof(ctx, m, QF_F16);
    if (!strcmp(lo.name, hi.name))
        snprintf(buf, len, "the %s", hi.name);
    else
        snprintf(buf, len, "%s (q4) to %s (f16)", lo.name, hi.name);
}

/* The largest deviation from F16 of a rate over formats [lo, hi], in %
 * ("q6 -80 %" in text), or NaN when one is missing: decode's bytes per
 * second, or prefill's tokens per second, each over the F16 timed with it. */
static double worst_deviation(const rl_points *pts, bool decode, int lo, int hi, char *text, size_t len)
{
    double worst = 0;
    int which = lo;
    snprintf(text, len, "-");
    for (int f = lo; f <= hi; f++) {
        double v = decode ? bytes_vs_f16(best_decode(pts, f)) : vs_f16(best_prefill(pts, f));
        if (isnan(v))
            return NAN;
        if (fabs(v - 1) >= fabs(worst)) {
            worst = v - 1;
            which = f;
        }
    }
    snprintf(text, len, "%s %+.0f %%", quant_formats[which].name, 100 * worst);
    return 100 * worst;
}

/* The verdicts are ratios between formats, each format against the F16
 * point timed with it: judged wherever the weights live, the note says
 * where (DRAM, or the LLC for a cache-sized model: the same claim about
 * that level's bandwidth). */
void judge(rl_ctx *ctx, const rl_points *pts, const model *m)
{
    const rl_claim *c = EXP03_CLAIMS;
    char note[800], regime[600], where[64], measured[64];
    decode_regime(ctx, pts, regime, sizeof regime);
    judged_levels(ctx, m, where, sizeof where);
    snprintf(note, sizeof note, "weights in %s; %s", where, regime);
    double speedup = vs_f16(best_decode(pts, QF_Q4));
    const rl_point *dq4 = by_role(pts, QF_Q4, "decode_dequant"), *dq16 = by_role(pts, QF_F16, "decode_dequant");
    if (dq4 && dq16 && dq4 != best_decode(pts, QF_Q4))
        snprintf(note + strlen(note), sizeof note - strlen(note), "; dequantizing decode (%s): "
                 "%.2fx", dq4->variant->name, tps(dq4) / tps(dq16));
    rl_judge(ctx, &c[DECODE_SPEEDUP], NULL, speedup, note);

    snprintf(note, sizeof note, "weights in %s; %s", where, regime);
    double dev = worst_deviation(pts, true, QF_Q8, QF_Q4, measured, sizeof measured);
    /* Over the band: a quantized format read its bytes faster than F16 did. */
    if (dev > c[SIZE_X_DECODE].hi)
        snprintf(note + strlen(note), sizeof note - strlen(note), "; %s: a quantized format read "
                 "more bytes per second than the F16 GEMV timed with it, so the F16 kernel, not "
                 "the bytes, was the slower reader", measured);
    rl_judge_status(ctx, &c[SIZE_X_DECODE], NULL, measured, rl_within(dev, c[SIZE_X_DECODE].lo,
                    c[SIZE_X_DECODE].hi), note);

    dev = worst_deviation(pts, false, QF_Q8, QF_Q2, measured, sizeof measured);
    const rl_point *p16 = best_prefill(pts, QF_F16);
    snprintf(note, sizeof note, "F16 prefill at %.0f %% MFU; the other formats are first dequantized %s",
             p16 ? 100 * rl_point_mfu(ctx, p16) : NAN,
             ctx->kind == RL_CUDA ? "to FP16 (a pass through memory)" : "to FP32");
    rl_judge_status(ctx, &c[PREFILL_FLAT], NULL, measured, rl_within(dev, c[PREFILL_FLAT].lo,
                    c[PREFILL_FLAT].hi), note);
}

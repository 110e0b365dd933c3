/*
 * report.c -- experiment 03's summary per format (its best valid decode
 * variant), the published llama.cpp table it is compared with, and the
 * verdicts.
 */
#include "exp03.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0
/* quant,model_bpw,size_gib,prefill_tps,prefill_tps_sd,decode_tps,decode_tps_sd */
static const char *PUBLISHED = RL_SOURCE_ROOT
    "/results/published/llamacpp-quantize-llama31-8b.csv";
/* The llama.cpp quant types closest to each of our formats: the all-K "_S"
 * mixes are the nearest to a single block type throughout. */
static const char *const PEERS[QF_COUNT] = {"F16", "Q8_0", "Q6_K", "Q5_K_S", "Q4_K_S", "Q2_K"};

enum { DECODE_SPEEDUP, SIZE_X_DECODE, PREFILL_FLAT };

const rl_claim EXP03_CLAIMS[] = {
    /* Both decode claims are about bytes: judged where the points compared
     * read near their group's roof, and where no format beats its bytes
     * over F16 (README, Tolerances). The speedup, a lower bound: F16 at
     * least 0.7 of its roof, else a slow baseline could make it hold; q4
     * too, for it to fail. */
    [DECODE_SPEEDUP] = {"decode_speedup_q4", "decode speedup, F16 -> 4.5 bits (q4)", 2.5, INFINITY,
                        "x", 2, .predicted_text = ">= 2.5x (bytes: 3.56x)", .premise_mbu = 0.7},
    /* The worst format's deviation from F16, in %. Flat within 15 % can
     * only be judged on points within 15 % of their roof: below 0.85, a
     * format's instructions alone take more than the tolerance. */
    [SIZE_X_DECODE] = {"size_x_decode_flat", "size x decode rate, 8.5 to 4.5 bits, vs F16", -15, 15,
                       "%", 0, .predicted_text = "within +-15 %", .premise_mbu = 0.85},
    [PREFILL_FLAT] = {"prefill_flat", "prefill tokens/s, every format, vs F16", -25, 25, "%", 0,
                      .predicted_text = "within +-25 %"},
    {0},
};

/* ---- the points a summary or verdict looks at ------------------------------------ */

typedef struct of { quant_format f; quant_phase phase; } of;

static bool is_of(const rl_point *p, const void *key)
{
    const of *k = key;
    const step *s = RL_DATA(step, p);
    return s->f == k->f && s->v->phase == k->phase;
}

/* A point's rate over the F16 point of its own group, timed with it: the
 * machine's drift between groups cancels (on a shared VM the memory
 * bandwidth can move a lot between the groups of one run). */
static double vs_f16(const rl_point *p) { return p ? exp03_col_rel_tokens_per_s(NULL, p) : NAN; }

/* Its bytes per second over F16's: size x decode rate, relative. */
static double bytes_vs_f16(const rl_point *p)
{
    return p ? vs_f16(p) * RL_DATA(step, p)->rel_size : NAN;
}

/* A format's best valid point of a phase, for the tables and verdicts: the
 * highest rate over the F16 timed with it; for F16 itself, the fastest. */
static const rl_point *best(const rl_points *pts, quant_format f, quant_phase phase)
{
    of key = {f, phase};
    return f == QF_F16 ? rl_points_fastest(pts, NULL, is_of, &key)
                       : rl_points_best(pts, NULL, is_of, &key, vs_f16);
}

static double mbu(rl_ctx *ctx, const rl_point *p) { return p ? rl_point_mbu(ctx, p) : NAN; }

/* ---- the published rows, the tables ---------------------------------------------- */

static void write_published_rows(rl_ctx *ctx, const rl_table *t)
{
    int f16 = rl_table_find(t, "quant", "F16");
    for (int d = 1; d >= 0; d--)
        for (int r = 0; r < t->nrows; r++) {
            const char *rate = d ? "decode_tps" : "prefill_tps";
            double size = rl_table_num(t, r, "size_gib"), tps = rl_table_num(t, r, rate);
            rl_set_str(ctx, "source", "llama.cpp");
            rl_set_str(ctx, "format", rl_table_get(t, r, "quant"));
            rl_set_num(ctx, "bits_per_weight", rl_table_num(t, r, "model_bpw"));
            rl_set_str(ctx, "phase", d ? "decode" : "prefill");
            rl_set_num(ctx, "size_bytes", size * GIB);
            rl_set_num(ctx, "size_gib", size);
            rl_set_int(ctx, "tokens", d ? 1 : 512);
            rl_set_num(ctx, "tokens_per_s", tps);
            rl_set_num(ctx, "gbps", d ? size * GIB * tps / 1e9 : NAN);
            rl_set_num(ctx, "rel_size", size / rl_table_num(t, f16, "size_gib"));
            rl_set_num(ctx, "rel_tokens_per_s", tps / rl_table_num(t, f16, rate));
            rl_set_str(ctx, "skipped_reason",
                       "published: llama.cpp quantize README, another machine");
            rl_end_row(ctx);
        }
}

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
        const rl_point *d = best(pts, f, QUANT_DECODE);
        rl_roof roof = rl_roof_for(ctx, exp03_model_bytes(m, f), RL_READ); /* read once per step */
        rl_grid_row(COLS, quant_formats[f].name, quant_bits_per_weight(f),
                    exp03_model_bytes(m, f) / 1048576.0, tps(best(pts, f, QUANT_PREFILL)), tps(d),
                    d ? d->variant->name : NULL, d ? rl_point_gbps(d) : NAN,
                    rl_tokens_per_s_ceiling((d ? rl_point_roof_gbps(ctx, d) : roof.gbps) * 1e9,
                                            exp03_model_bytes(m, f)), roof.name,
                    mbu(ctx, d));
    }
}

/* The conversion pass's share of each format's prefill (its best prefill
 * point): by the model, and measured as its time over the F16 prefill
 * timed with it; the same in the CSV's header, for the note. */
static void print_prefill_pass(rl_ctx *ctx, const rl_points *pts, const model *m)
{
    static const rl_grid_column COLS[] = {
        {"format", "%-6s"}, {"prefill ms", "%11.3f"}, {"pass MiB", "%10.1f"},
        {"pass ms (model)", "%16.3f"}, {"share (model)", "%14.2f"}, {"over F16", "%9.2f"}, {0}};
    bool gpu = ctx->kind == RL_CUDA;
    printf("\n  prefill: the weights' pass to %s before the GEMM, its share of each format's "
           "prefill\n  time: a model (the pass's bytes at the copy rung), and measured as the "
           "time over\n  the F16 prefill timed with it (the same GEMM; %s)\n", gpu ? "FP16" : "FP32",
           gpu ? "F16 skips the pass" : "F16 is converted too");
    rl_grid_header(COLS);
    char model_text[160] = "", over_text[160] = "";
    for (quant_format f = 0; f < QF_COUNT; f++) {
        const rl_point *p = best(pts, f, QUANT_PREFILL);
        double share = p ? exp03_col_pass_share_model(ctx, p) : NAN,
               over = p ? exp03_col_pass_share_over_f16(ctx, p) : NAN;
        rl_grid_row(COLS, quant_formats[f].name, p ? p->seconds * 1e3 : NAN,
                    exp03_model_pass_bytes(m, f, gpu) / 1048576.0, exp03_model_pass_s(ctx, m, f) * 1e3, share,
                    f == QF_F16 ? NAN : over);
        rl_appendf(model_text, sizeof model_text, "%s%s %.2f", f ? " " : "", quant_formats[f].name,
                   share);
        if (f != QF_F16)
            rl_appendf(over_text, sizeof over_text, "%s%s %.2f", f > 1 ? " " : "",
                       quant_formats[f].name, over);
    }
    rl_meta(ctx, "prefill_dequant_share", "%s (a model: the pass's bytes at the copy rung of its "
            "level, over each format's best prefill time); measured as the time over the F16 "
            "prefill timed with it: %s", model_text, over_text);
}

static void print_published(const rl_points *pts, const model *m, const rl_table *t)
{
    static const rl_grid_column COLS[] = {
        {"format", "%-6s"}, {"size", "%8.3f"}, {"decode", "%8.2f"}, {"prefill", "%8.2f"},
        {"peer", "%-7s"}, {"size", "%8.3f"}, {"decode", "%8.2f"}, {"prefill", "%8.2f"}, {0}};
    int f16 = rl_table_find(t, "quant", "F16");
    printf("\n  relative to F16: this run vs llama.cpp's published table (Llama-3.1-8B, another "
           "machine)\n");
    rl_grid_header(COLS);
    for (quant_format f = 0; f < QF_COUNT; f++) {
        int p = rl_table_find(t, "quant", PEERS[f]);
        rl_grid_row(COLS, quant_formats[f].name, exp03_model_bytes(m, f) / exp03_model_bytes(m, QF_F16),
                    vs_f16(best(pts, f, QUANT_DECODE)), vs_f16(best(pts, f, QUANT_PREFILL)),
                    PEERS[f], rl_table_num(t, p, "size_gib") / rl_table_num(t, f16, "size_gib"),
                    rl_table_num(t, p, "decode_tps") / rl_table_num(t, f16, "decode_tps"),
                    rl_table_num(t, p, "prefill_tps") / rl_table_num(t, f16, "prefill_tps"));
    }
}

/* ---- verdicts ---------------------------------------------------------------------- */

/* The largest deviation from F16 of a rate over formats [lo, hi], in %
 * ("q6 -80 %" in text), or NaN when one is missing: decode's bytes per
 * second, or prefill's tokens per second, each over the F16 timed with it. */
static double worst_deviation(const rl_points *pts, bool decode, int lo, int hi, char *text,
                              size_t len)
{
    double worst = 0;
    int which = lo;
    snprintf(text, len, "-");
    for (int f = lo; f <= hi; f++) {
        double v = decode ? bytes_vs_f16(best(pts, f, QUANT_DECODE))
                          : vs_f16(best(pts, f, QUANT_PREFILL));
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

/* The decode verdicts' note: where the judged formats' weights live, then
 * why the quantized formats fall behind F16's bytes per second, from the
 * shape of the gap over q8..q4: bytes per second that fall with the bits
 * mean a cost per weight (compute: decoding, not reading, sets the time);
 * a level below F16's, a cost per byte of the quantized path. */
static void decode_note(rl_ctx *ctx, const rl_points *pts, const model *m, char *buf, size_t len)
{
    rl_roof slow = rl_roof_for(ctx, exp03_model_bytes(m, QF_Q4), RL_READ);
    rl_roof fast = rl_roof_for(ctx, exp03_model_bytes(m, QF_F16), RL_READ);
    if (!strcmp(slow.name, fast.name))
        snprintf(buf, len, "weights in the %s; GB/s over the F16 timed with it", fast.name);
    else
        snprintf(buf, len, "weights in %s (q4) to %s (f16); GB/s over the F16 timed with it",
                 slow.name, fast.name);
    double r[QF_COUNT], lo = INFINITY, hi = 0; /* each format's GB/s over F16's */
    for (int f = 0; f < QF_COUNT; f++)
        r[f] = bytes_vs_f16(best(pts, f, QUANT_DECODE));
    for (int f = QF_Q8; f < QF_COUNT; f++)
        rl_appendf(buf, len, " %s %.2f", quant_formats[f].name, r[f]);
    rl_appendf(buf, len, "; MBU");
    for (int f = 0; f < QF_COUNT; f++)
        rl_appendf(buf, len, " %s %.2f", quant_formats[f].name,
                   mbu(ctx, best(pts, f, QUANT_DECODE)));
    /* q2 is not judged, but its place below the bytes is explained */
    if (r[QF_Q2] < 0.85)
        rl_appendf(buf, len, "; q2 below the bytes (%.2f of F16's GB/s): its 2-bit planes cost "
                   "the most instructions per byte read, %s", r[QF_Q2], ctx->kind == RL_CUDA ?
                   "issue-bound (README)" : "compute-bound (README: instructions per byte)");
    for (int f = QF_Q8; f <= QF_Q4; f++)
        lo = fmin(lo, r[f]), hi = fmax(hi, r[f]);
    if (!(hi > 0) || lo >= 0.85)
        return;
    double q8 = r[QF_Q8], q4 = r[QF_Q4];
    if (q4 < 0.8 * q8)
        rl_appendf(buf, len, "; GB/s falls with the bits (q4 %.2f of q8's): a cost per weight, %s",
                   q4 / q8, ctx->kind == RL_CUDA ? "fixed per-step costs or the decode's "
                   "instructions" : "compute-bound: decoding, not reading, sets the time");
    else
        rl_appendf(buf, len, "; q8 to q4 read at one level, %.2f-%.2f of F16's GB/s, whatever "
                   "the bits: a cost per byte of the quantized path, not compute per weight",
                   lo, hi);
}

/* The premise of a decode claim on a format's point: it and the F16 timed
 * with it read near their roof (the format's only to fail, where the claim
 * is a lower bound), and its speedup over that F16 stays within what its
 * bytes allow. */
static void decode_premise(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *q)
{
    const rl_point *f16 = exp03_f16_of(q);
    if (!q || !f16)
        return;
    char what[96];
    snprintf(what, sizeof what, "the F16 baseline (%s)", f16->variant->name);
    rl_premise_memory_bound(ctx, pr, c, f16, what);
    snprintf(what, sizeof what, "%s decode (%s)", RL_DATA(step, q)->format, q->variant->name);
    if (isinf(c->hi))
        rl_premise_memory_bound_to_fail(ctx, pr, c, q, what);
    else
        rl_premise_memory_bound(ctx, pr, c, q, what);
    snprintf(what, sizeof what, "%s over the F16 baseline (%s)", RL_DATA(step, q)->format,
             f16->variant->name);
    rl_premise_within_bytes(pr, f16, q, what);
}

/* The range over q8..q2 of the pass's share of the prefill time: by the
 * model, and over F16's time (on the GPU, where F16 skips the pass). */
static void pass_note(rl_ctx *ctx, const rl_points *pts, char *buf, size_t len)
{
    double lo = INFINITY, hi = -INFINITY, olo = INFINITY, ohi = -INFINITY;
    for (quant_format f = QF_Q8; f < QF_COUNT; f++) {
        const rl_point *p = best(pts, f, QUANT_PREFILL);
        if (!p)
            return;
        double s = exp03_col_pass_share_model(ctx, p), o = exp03_col_pass_share_over_f16(ctx, p);
        lo = fmin(lo, s), hi = fmax(hi, s), olo = fmin(olo, o), ohi = fmax(ohi, o);
    }
    rl_appendf(buf, len, ": %.0f-%.0f %% of their prefill time by a model of the pass (its bytes "
               "at the copy rung)", 100 * lo, 100 * hi);
    if (ctx->kind == RL_CUDA)
        rl_appendf(buf, len, ", %.0f-%.0f %% measured as the time over F16's (the same GEMM)",
                   100 * olo, 100 * ohi);
}

/* Ratios between formats, each against the F16 point timed with it, judged
 * wherever the weights live (DRAM, or the LLC of a cache-sized model: the
 * same claim about that level's bandwidth); the note says where. */
static void judge(rl_ctx *ctx, const rl_points *pts, const model *m)
{
    char decode[800], note[800], measured[64];
    decode_note(ctx, pts, m, decode, sizeof decode);
    snprintf(note, sizeof note, "%s", decode);
    const rl_point *q4 = best(pts, QF_Q4, QUANT_DECODE);
    /* the dequantizing decode against the F16 of its own group */
    const rl_point *dq4 = rl_points_find(pts, "decode_dequant", is_of, &(of){QF_Q4, QUANT_DECODE});
    if (dq4 && dq4 != q4 && !isnan(vs_f16(dq4)))
        rl_appendf(note, sizeof note, "; dequantizing decode (%s): %.2fx", dq4->variant->name,
                   vs_f16(dq4));
    rl_premise pr = rl_premise_start();
    decode_premise(ctx, &pr, &EXP03_CLAIMS[DECODE_SPEEDUP], q4);
    rl_judge_given(ctx, &EXP03_CLAIMS[DECODE_SPEEDUP], NULL, vs_f16(q4), &pr, note);

    const rl_claim *c = &EXP03_CLAIMS[SIZE_X_DECODE];
    pr = rl_premise_start();
    for (int f = QF_Q8; f <= QF_Q4; f++)
        decode_premise(ctx, &pr, c, best(pts, f, QUANT_DECODE));
    snprintf(note, sizeof note, "%s", decode);
    double dev = worst_deviation(pts, true, QF_Q8, QF_Q4, measured, sizeof measured);
    /* Over the band: a quantized format read its bytes faster than F16 did. */
    if (dev > c->hi)
        rl_appendf(note, sizeof note, "; %s: a quantized format read more bytes per second than "
                   "the F16 GEMV timed with it, so the F16 kernel, not the bytes, was the slower "
                   "reader", measured);
    rl_judge_status_given(ctx, c, NULL, measured, rl_within(dev, c->lo, c->hi), &pr, note);

    c = &EXP03_CLAIMS[PREFILL_FLAT];
    dev = worst_deviation(pts, false, QF_Q8, QF_Q2, measured, sizeof measured);
    const rl_point *p16 = best(pts, QF_F16, QUANT_PREFILL);
    snprintf(note, sizeof note, "F16 prefill at %.0f %% MFU; the other formats are first "
             "dequantized %s", p16 ? 100 * rl_point_mfu(ctx, p16) : NAN,
             ctx->kind == RL_CUDA ? "to FP16 (a pass through memory)" : "to FP32");
    pass_note(ctx, pts, note, sizeof note);
    rl_judge_status(ctx, c, NULL, measured, rl_within(dev, c->lo, c->hi), note);
}

/* The claims register's decode ceilings, a model: tokens/s <= memory
 * bandwidth / bytes of weights per token, for every datasheet GPU and this
 * device's DRAM read bandwidth. Sizes: llama.cpp's quantize README (8B),
 * the claims register (70B, 4.8 GB). */
static const rl_grid_column CEILING_COLS[] = {
    {"device", "%-26s"}, {"GB/s", "%9.0f"}, {"4.8 GB", "%11.1f"}, {"8B F16", "%11.1f"},
    {"8B Q4_K_M", "%11.1f"}, {"8B Q2_K", "%11.1f"}, {"70B Q4_K_M", "%11.1f"}, {0}};

static void ceiling_row(const char *device, double gbps)
{
    static const double BYTES[] = {4.8e9, 14.96 * GIB, 4.58 * GIB, 2.95 * GIB, 40.2 * GIB};
    double t[5];
    for (int i = 0; i < 5; i++)
        t[i] = rl_tokens_per_s_ceiling(gbps * 1e9, BYTES[i]);
    rl_grid_row(CEILING_COLS, device, gbps, t[0], t[1], t[2], t[3], t[4]);
}

static void print_ceilings(rl_ctx *ctx)
{
    printf("\n  model: decode tokens/s ceiling = memory bandwidth / bytes of weights per token\n");
    rl_grid_header(CEILING_COLS);
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++)
        ceiling_row(d->name, d->mem_gbps);
    ceiling_row("this device (DRAM read)", rl_ceilings_get(ctx)->bw[RL_DRAM][RL_READ].best);
    fflush(stdout);
}

void exp03_report(rl_ctx *ctx, const rl_points *pts, const model *m)
{
    char why[256];
    rl_table *published = rl_table_read(PUBLISHED, why, sizeof why);
    bool have = published && rl_table_find(published, "quant", "F16") >= 0; /* F16: the unit */
    if (have)
        write_published_rows(ctx, published);
    else
        printf("\n(no published table at %s: the charts show this run only)\n", PUBLISHED);
    print_measured(ctx, pts, m);
    if (m->prefill_n)
        print_prefill_pass(ctx, pts, m);
    if (have)
        print_published(pts, m, published);
    print_ceilings(ctx);
    rl_table_free(published);
    judge(ctx, pts, m);
}

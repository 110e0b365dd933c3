/*
 * report.c -- experiment 03's points against F16: each point's ratio to
 * the F16 timed with it and each format's best point, for the columns and
 * the verdicts (main.c); the summary per format, the published llama.cpp
 * table it is compared with, and the notes the verdicts print.
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

/* ---- each point against the F16 timed with it ----------------------------------- */

/* The F16 timed with p: in its group, at its tokens (the batch part's
 * group holds every M, and on the GPU two paths: the faster counts);
 * under --matrix, the one F16 point at those tokens (each format has a
 * group of its own there). */
static bool f16_of_group(const rl_point *q, const void *p)
{
    const step *s = RL_DATA(step, q), *t = RL_DATA(step, (const rl_point *)p);
    return (s->m->one_matrix || q->group == ((const rl_point *)p)->group) && s->f == QF_F16 &&
           s->tokens == t->tokens;
}

const rl_point *exp03_f16_of(const rl_point *p)
{
    return p ? rl_points_fastest(RL_DATA(step, p)->all, NULL, f16_of_group, p) : NULL;
}

/* A point's rate over the F16 point of its own group, timed with it: the
 * machine's drift between groups cancels (on a shared VM the memory
 * bandwidth can move a lot between the groups of one run). */
double exp03_vs_f16(const rl_point *p)
{
    const rl_point *f16 = exp03_f16_of(p);
    return f16 ? f16->seconds / p->seconds : NAN;
}

double exp03_col_rel_tokens_per_s(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return exp03_vs_f16(p);
}

/* Its bytes per second over F16's: size x decode rate, relative. */
double exp03_bytes_vs_f16(const rl_point *p)
{
    return p ? exp03_vs_f16(p) * RL_DATA(step, p)->rel_size : NAN;
}

typedef struct of { quant_format f; quant_phase phase; } of;

static bool is_of(const rl_point *p, const void *key)
{
    const of *k = key;
    const step *s = RL_DATA(step, p);
    return s->f == k->f && s->part == k->phase;
}

const rl_point *exp03_best(const rl_points *pts, quant_format f, quant_phase phase)
{
    of key = {f, phase};
    return f == QF_F16 ? rl_points_fastest(pts, NULL, is_of, &key)
                       : rl_points_best(pts, NULL, is_of, &key, exp03_vs_f16);
}

static bool is_prefill(const rl_point *p) { return RL_DATA(step, p)->part == QUANT_PREFILL; }

double exp03_col_pass_share_model(rl_ctx *ctx, const rl_point *p)
{
    const step *s = RL_DATA(step, p);
    return is_prefill(p) && rl_point_timed(p) ? exp03_model_pass_s(ctx, s->m, s->f) / p->seconds
                                              : NAN;
}

double exp03_col_pass_share_over_f16(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    const rl_point *f16 = exp03_f16_of(p);
    return is_prefill(p) && f16 && rl_point_timed(p) ? 1 - f16->seconds / p->seconds : NAN;
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
        const rl_point *d = exp03_best(pts, f, QUANT_DECODE);
        rl_roof roof = rl_roof_for(ctx, exp03_model_bytes(m, f), RL_READ); /* read once per step */
        rl_grid_row(COLS, quant_formats[f].name, quant_bits_per_weight(f),
                    exp03_model_bytes(m, f) / 1048576.0, tps(exp03_best(pts, f, QUANT_PREFILL)), tps(d),
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
        const rl_point *p = exp03_best(pts, f, QUANT_PREFILL);
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
                    exp03_vs_f16(exp03_best(pts, f, QUANT_DECODE)), exp03_vs_f16(exp03_best(pts, f, QUANT_PREFILL)),
                    PEERS[f], rl_table_num(t, p, "size_gib") / rl_table_num(t, f16, "size_gib"),
                    rl_table_num(t, p, "decode_tps") / rl_table_num(t, f16, "decode_tps"),
                    rl_table_num(t, p, "prefill_tps") / rl_table_num(t, f16, "prefill_tps"));
    }
}

/* ---- the verdicts' notes ---------------------------------------------------------------------- */

/* The decode verdicts' note: where the judged formats' weights live, then
 * why the quantized formats fall behind F16's bytes per second, from the
 * shape of the gap over q8..q4: bytes per second that fall with the bits
 * mean a cost per weight (compute: decoding, not reading, sets the time);
 * a level below F16's, a cost per byte of the quantized path. */
void exp03_decode_note(rl_ctx *ctx, const rl_points *pts, const model *m, char *buf, size_t len)
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
        r[f] = exp03_bytes_vs_f16(exp03_best(pts, f, QUANT_DECODE));
    for (int f = QF_Q8; f < QF_COUNT; f++)
        rl_appendf(buf, len, " %s %.2f", quant_formats[f].name, r[f]);
    rl_appendf(buf, len, "; MBU");
    for (int f = 0; f < QF_COUNT; f++)
        rl_appendf(buf, len, " %s %.2f", quant_formats[f].name,
                   mbu(ctx, exp03_best(pts, f, QUANT_DECODE)));
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

/* The range over q8..q2 of the pass's share of the prefill time: by the
 * model, and over F16's time (on the GPU, where F16 skips the pass). */
void exp03_pass_note(rl_ctx *ctx, const rl_points *pts, char *buf, size_t len)
{
    double lo = INFINITY, hi = -INFINITY, olo = INFINITY, ohi = -INFINITY;
    for (quant_format f = QF_Q8; f < QF_COUNT; f++) {
        const rl_point *p = exp03_best(pts, f, QUANT_PREFILL);
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

void exp03_summarize(rl_ctx *ctx, const rl_points *pts, const model *m)
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
}

/*
 * report.c -- experiment 03's rows, tables and verdicts, and the published
 * llama.cpp table it is compared with.
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

static const char *phase_name(quant_phase p) { return p == QUANT_DECODE ? "decode" : "prefill"; }

static int tokens_of(const report *r, const result *x)
{
    return x->phase == QUANT_DECODE ? 1 : r->m->prefill_n;
}

double result_tokens_per_s(const report *r, const result *x)
{
    return x->ok && x->v ? tokens_of(r, x) / x->seconds : NAN;
}

double result_gbps(const report *r, const result *x)
{
    return x->ok && x->v ? model_bytes(r->m, x->f) / x->seconds / 1e9 : NAN;
}

bool model_cache_resident(const report *r, quant_format f)
{
    return !rl_beyond_cache(r->ctx, model_bytes(r->m, f));
}

/* Decode reads the weights once per step: the read pattern, at the level
 * one format's weights live in. */
rl_roof model_roof(const report *r, quant_format f)
{
    return rl_roof_for(r->ctx, model_bytes(r->m, f), RL_READ);
}

static double format_mbu(const report *r, quant_format f)
{
    rl_roof roof = model_roof(r, f);
    return rl_mbu(r->ctx, result_gbps(r, &r->res[QUANT_DECODE][f]), &roof);
}

static double rel_to_f16(const report *r, const result *x)
{
    return result_tokens_per_s(r, x) / result_tokens_per_s(r, &r->res[x->phase][QF_F16]);
}

/* ---- rows ---------------------------------------------------------------------- */

static void write_result(report *r, const result *x)
{
    rl_ctx *ctx = r->ctx;
    double size = model_bytes(r->m, x->f), tps = result_tokens_per_s(r, x), gbps = result_gbps(r, x);
    bool decode = x->phase == QUANT_DECODE;
    rl_set_str(ctx, "source", "measured");
    rl_set_str(ctx, "format", quant_formats[x->f].name);
    rl_set_num(ctx, "bits_per_weight", quant_bits_per_weight(x->f));
    rl_set_str(ctx, "phase", phase_name(x->phase));
    rl_set_str(ctx, "variant", x->v->name);
    rl_set_int(ctx, "number", x->v->number);
    rl_set_int(ctx, "layers", r->m->layers);
    rl_set_num(ctx, "params", r->m->params);
    rl_set_num(ctx, "size_bytes", size);
    rl_set_num(ctx, "size_gib", size / GIB);
    rl_set_int(ctx, "tokens", tokens_of(r, x));
    rl_set_int(ctx, "cache_resident", model_cache_resident(r, x->f));
    rl_set_num(ctx, "rel_size", size / model_bytes(r->m, QF_F16));
    rl_set_str(ctx, "validated", x->ok ? "yes" : "no");
    rl_set_num(ctx, "max_abs_err", x->max_abs_err);
    if (!x->ok) {
        rl_set_str(ctx, "skipped_reason", x->why);
        rl_end_row(ctx);
        return;
    }
    rl_set_measurement(ctx, &x->m);
    rl_set_num(ctx, "tokens_per_s", tps);
    rl_set_num(ctx, "gbps", gbps);
    rl_set_num(ctx, "rel_tokens_per_s", rel_to_f16(r, x));
    if (decode) {
        rl_roof roof = model_roof(r, x->f);
        rl_set_num(ctx, "ceiling_tokens_per_s", rl_tokens_per_s_ceiling(roof.gbps * 1e9, size));
        rl_set_num(ctx, "mbu", rl_mbu(ctx, gbps, &roof));
        rl_set_roof(ctx, &roof);
        rl_set_num(ctx, "mbu_datasheet", gbps / r->ceil->sheet_gbps);
    } else {
        double tflops = 2.0 * r->m->params * r->m->prefill_n / x->seconds / 1e12;
        rl_set_num(ctx, "tflops", tflops);
        rl_set_num(ctx, "mfu", rl_mfu(ctx, tflops));
    }
    rl_end_row(ctx);
}

void write_rows(report *r)
{
    for (int p = 0; p < 2; p++)
        for (int f = 0; f < QF_COUNT; f++)
            if (r->res[p][f].v)
                write_result(r, &r->res[p][f]);
}

/* ---- the published table ---------------------------------------------------------- */

typedef struct published {
    char quant[16];
    double bpw, size_gib, prefill, decode;
} published;

enum { MAX_PUBLISHED = 64 };

/* quant,model_bpw,size_gib,prefill_tps,prefill_tps_sd,decode_tps,decode_tps_sd */
static int read_published(published *rows)
{
    FILE *f = fopen(PUBLISHED, "r");
    if (!f)
        return 0;
    char line[512];
    int n = 0;
    bool header = true;
    while (fgets(line, sizeof line, f) && n < MAX_PUBLISHED) {
        if (line[0] == '#')
            continue;
        if (header) {
            header = false;
            continue;
        }
        published *p = &rows[n];
        if (sscanf(line, "%15[^,],%lf,%lf,%lf,%*f,%lf", p->quant, &p->bpw, &p->size_gib,
                   &p->prefill, &p->decode) == 5)
            n++;
    }
    fclose(f);
    return n;
}

static const published *find_published(const published *rows, int n, const char *quant)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].quant, quant))
            return &rows[i];
    return NULL;
}

static void write_published_row(report *r, const published *p, const published *f16, bool decode)
{
    rl_ctx *ctx = r->ctx;
    double tps = decode ? p->decode : p->prefill;
    rl_set_str(ctx, "source", "llama.cpp");
    rl_set_str(ctx, "format", p->quant);
    rl_set_num(ctx, "bits_per_weight", p->bpw);
    rl_set_str(ctx, "phase", decode ? "decode" : "prefill");
    rl_set_num(ctx, "size_bytes", p->size_gib * GIB);
    rl_set_num(ctx, "size_gib", p->size_gib);
    rl_set_int(ctx, "tokens", decode ? 1 : 512);
    rl_set_num(ctx, "tokens_per_s", tps);
    if (decode)
        rl_set_num(ctx, "gbps", p->size_gib * GIB * tps / 1e9);
    rl_set_num(ctx, "rel_size", p->size_gib / f16->size_gib);
    rl_set_num(ctx, "rel_tokens_per_s", tps / (decode ? f16->decode : f16->prefill));
    rl_set_str(ctx, "skipped_reason", "published: llama.cpp quantize README, another machine");
    rl_end_row(ctx);
}

void write_published_rows(report *r)
{
    published rows[MAX_PUBLISHED];
    int n = read_published(rows);
    const published *f16 = find_published(rows, n, "F16");
    if (!f16) {
        printf("\n(no published table at %s: the charts show this run only)\n", PUBLISHED);
        return;
    }
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < n; i++)
            write_published_row(r, &rows[i], f16, d == 0);
}

/* ---- tables ------------------------------------------------------------------------ */

static void print_measured(const report *r)
{
    printf("\n  %-6s %8s %10s %12s %11s %14s %12s %-8s %6s\n", "format", "bits/w", "size MiB",
           "prefill t/s", "decode t/s", "size x dec GB/s", "ceiling t/s", "level", "MBU");
    for (int f = 0; f < QF_COUNT; f++) {
        const result *d = &r->res[QUANT_DECODE][f], *p = &r->res[QUANT_PREFILL][f];
        double size = model_bytes(r->m, (quant_format)f);
        rl_roof roof = model_roof(r, (quant_format)f);
        printf("  %-6s %8.6g %10.1f %12.1f %11.1f %14.1f %12.1f %-8s %6.2f\n", quant_formats[f].name,
               quant_bits_per_weight((quant_format)f), size / 1048576.0, result_tokens_per_s(r, p),
               result_tokens_per_s(r, d), result_gbps(r, d),
               rl_tokens_per_s_ceiling(roof.gbps * 1e9, size), roof.name,
               format_mbu(r, (quant_format)f));
    }
}

static void print_published(const report *r)
{
    published rows[MAX_PUBLISHED];
    int n = read_published(rows);
    const published *f16 = find_published(rows, n, "F16");
    if (!f16)
        return;
    printf("\n  relative to F16: this run vs llama.cpp's published table (Llama-3.1-8B, another machine)\n");
    printf("  %-6s %8s %8s %8s   %-7s %8s %8s %8s\n", "format", "size", "decode", "prefill",
           "peer", "size", "decode", "prefill");
    for (int f = 0; f < QF_COUNT; f++) {
        const published *p = find_published(rows, n, PEERS[f]);
        printf("  %-6s %8.3f %8.2f %8.2f   %-7s", quant_formats[f].name,
               model_bytes(r->m, (quant_format)f) / model_bytes(r->m, QF_F16),
               rel_to_f16(r, &r->res[QUANT_DECODE][f]), rel_to_f16(r, &r->res[QUANT_PREFILL][f]),
               PEERS[f]);
        if (p)
            printf(" %8.3f %8.2f %8.2f", p->size_gib / f16->size_gib, p->decode / f16->decode,
                   p->prefill / f16->prefill);
        printf("\n");
    }
}

/* The claims register's ceiling table: bandwidth over bytes per token, for
 * the datasheet GPUs and this device (a model, not a measurement). Sizes:
 * llama.cpp's quantize README (8B), the claims register (70B, 4.8 GB). */
static void print_ceilings(const report *r)
{
    static const struct { const char *name; double bytes; } MODELS[] = {
        {"4.8 GB", 4.8e9},
        {"8B F16", 14.96 * 1073741824.0},
        {"8B Q4_K_M", 4.58 * 1073741824.0},
        {"8B Q2_K", 2.95 * 1073741824.0},
        {"70B Q4_K_M", 40.2 * 1073741824.0},
    };
    enum { NM = sizeof MODELS / sizeof MODELS[0] };
    printf("\n  model: decode tokens/s ceiling = memory bandwidth / bytes of weights per token\n");
    printf("  %-26s %9s", "device", "GB/s");
    for (int i = 0; i < NM; i++)
        printf(" %11s", MODELS[i].name);
    printf("\n");
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++) {
        printf("  %-26s %9.0f", d->name, d->mem_gbps);
        for (int i = 0; i < NM; i++)
            printf(" %11.0f", rl_tokens_per_s_ceiling(d->mem_gbps * 1e9, MODELS[i].bytes));
        printf("\n");
    }
    double dram = r->ceil->bw[RL_DRAM][RL_READ].best;
    printf("  %-26s %9.0f", "this device (DRAM read)", dram);
    for (int i = 0; i < NM; i++)
        printf(" %11.1f", rl_tokens_per_s_ceiling(dram * 1e9, MODELS[i].bytes));
    printf("\n");
}

void print_tables(const report *r)
{
    print_measured(r);
    print_published(r);
    print_ceilings(r);
    fflush(stdout);
}

/* ---- verdicts ---------------------------------------------------------------------- */

/* Which formats fell behind F16's bandwidth on decode, from the measurement:
 * below three quarters of F16's bytes per second, something other than the
 * bytes (the decode's instructions, or fixed per-step costs) set the time. */
static void decode_regime(report *r, char *buf, size_t len)
{
    double ref = result_gbps(r, &r->res[QUANT_DECODE][QF_F16]);
    size_t used = (size_t)snprintf(buf, len, "MBU");
    char slow[64] = "";
    for (int f = 0; f < QF_COUNT && used < len; f++) {
        double g = result_gbps(r, &r->res[QUANT_DECODE][f]);
        used += (size_t)snprintf(buf + used, len - used, " %s %.2f", quant_formats[f].name,
                                 format_mbu(r, (quant_format)f));
        if (g < 0.75 * ref)
            snprintf(slow + strlen(slow), sizeof slow - strlen(slow), " %s", quant_formats[f].name);
    }
    if (slow[0] && used < len)
        snprintf(buf + used, len - used, "; below 3/4 of F16's GB/s:%s, %s", slow,
                 r->ctx->kind == RL_CUDA ? "fixed per-step costs or the decode's instructions"
                                         : "compute-bound: dequantizing, not reading, sets the time");
}

/* Where the judged formats' weights live: "DRAM", or "LLC" when they all
 * share one level, else the range ("L2-LLC to LLC"). */
static void judged_levels(const report *r, char *buf, size_t len)
{
    rl_roof lo = model_roof(r, QF_Q4), hi = model_roof(r, QF_F16);
    if (!strcmp(lo.name, hi.name))
        snprintf(buf, len, "the %s", hi.name);
    else
        snprintf(buf, len, "%s (q4) to %s (f16)", lo.name, hi.name);
}

/* The largest deviation from F16 of a rate over formats [lo, hi], or NaN
 * when one is missing. */
static double worst_deviation(const report *r, quant_phase p, bool bytes, int lo, int hi, int *which)
{
    const result *ref = &r->res[p][QF_F16];
    double base = bytes ? result_gbps(r, ref) : result_tokens_per_s(r, ref), worst = 0;
    for (int f = lo; f <= hi; f++) {
        const result *x = &r->res[p][f];
        double v = bytes ? result_gbps(r, x) : result_tokens_per_s(r, x);
        if (isnan(v) || isnan(base))
            return NAN;
        if (fabs(v / base - 1) >= fabs(worst)) {
            worst = v / base - 1;
            *which = f;
        }
    }
    return worst;
}

/* The decode verdicts are ratios between formats: judged wherever the
 * weights live, the note says where (DRAM, or the LLC for a cache-sized
 * model: the same claim about that level's bandwidth). */
void judge(report *r)
{
    rl_ctx *ctx = r->ctx;
    char note[400], regime[300], where[64], measured[64];
    const result *f16 = &r->res[QUANT_DECODE][QF_F16], *q4 = &r->res[QUANT_DECODE][QF_Q4];
    decode_regime(r, regime, sizeof regime);
    judged_levels(r, where, sizeof where);
    snprintf(note, sizeof note, "weights in %s; %s", where, regime);
    double speedup = result_tokens_per_s(r, q4) / result_tokens_per_s(r, f16);
    snprintf(measured, sizeof measured, isnan(speedup) ? "-" : "%.2fx", speedup);
    rl_verdict(ctx, "decode_speedup_q4", "decode speedup, F16 -> 4.5 bits (q4)",
               ">= 2.5x (bytes: 3.56x)", measured, rl_within(speedup, 2.5, INFINITY), note);

    int which = 0;
    double dev = worst_deviation(r, QUANT_DECODE, true, QF_Q8, QF_Q4, &which);
    snprintf(measured, sizeof measured, isnan(dev) ? "-" : "%s %+.0f %%", quant_formats[which].name,
             dev * 100);
    rl_verdict(ctx, "size_x_decode_flat", "size x decode rate, 8.5 to 4.5 bits, vs F16",
               "within +-15 %", measured, rl_within(fabs(dev), 0, 0.15), note);

    dev = worst_deviation(r, QUANT_PREFILL, false, QF_Q8, QF_Q2, &which);
    snprintf(measured, sizeof measured, isnan(dev) ? "-" : "%s %+.0f %%", quant_formats[which].name,
             dev * 100);
    const result *p16 = &r->res[QUANT_PREFILL][QF_F16];
    snprintf(note, sizeof note, "F16 prefill at %.0f %% MFU; the other formats are first dequantized %s",
             p16->ok ? 2.0 * r->m->params * r->m->prefill_n / p16->seconds / 1e12 /
                           r->ceil->matrix_tflops * 100 : NAN,
             ctx->kind == RL_CUDA ? "to FP16 (a pass through memory)" : "to FP32");
    rl_verdict(ctx, "prefill_flat", "prefill tokens/s, every format, vs F16", "within +-25 %",
               measured, rl_within(fabs(dev), 0, 0.25), note);
}

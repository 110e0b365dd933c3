/*
 * Experiment 08 -- where the weights live: spilled weights and mixture of
 * experts.
 *
 * Decode reads every weight once per token, so its time is the bytes over
 * the bandwidth of wherever they live. Spill: with a fraction f of the
 * weights in a tier r times slower, one tier after the other gives
 * t/t0 = (1 - f) + f r (1.9x at f = 0.1, r = 10), both at once
 * max(1 - f, f r). Mixture of experts: a MoE layer holds E experts but a
 * token reads only its top-k, so at batch 1 it decodes like a model k/E
 * its size; a batch of B tokens touches E (1 - (1 - k/E)^B) of them, and
 * the bytes grow with that curve, not with B.
 *
 * Method: a spill part (one GEMV at each f, the slow tier's copy beside
 * it), a MoE part at batch 1 over top-k, one over the batch; every point
 * validated against a double-precision reference (the copy bit for bit),
 * then timed in its part's group beside the fast tier's roof. See
 * README.md.
 */
#include "exp08.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the sweeps ------------------------------------------------------------------ */

static const double QUICK_F[] = {0, 0.1, 0.5, -1}, LAB_F[] = {0, 0.05, 0.1, 0.2, 0.3, 0.5, -1},
                    FULL_F[] = {0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, -1};
static const int QUICK_TOP_K[] = {1, 4, 0}, TOP_K[] = {1, 2, 4, 8, 16, 32, 0};
static const int QUICK_B[] = {1, 4, 0}, LAB_B[] = {1, 4, 16, 64, 0},
                 FULL_B[] = {1, 2, 4, 8, 16, 32, 64, 0};
/* Qwen3-30B-A3B's experts (ggml's MUL_MAT_ID perf case); a quick run's
 * 32 experts, top-4, 96 MiB, fit its 256 MiB working-set limit. */
static const moe_shape QWEN3_MOE = {128, 768, 2048, 8}, QUICK_MOE = {32, 768, 2048, 4};

exp08_sweep exp08_sweep_for(const rl_ctx *ctx)
{
    /* 14336 x 4096 (Llama 3 8B's up projection, 112 MiB) is DRAM-sized on a
     * CPU; a GPU's 50-60 MB L2 needs 4x more to read from HBM. */
    int rows = ctx->args.mode == RL_MODE_QUICK ? 2048 : ctx->kind == RL_CUDA ? 65536 : 14336;
    return (exp08_sweep){RL_BY_MODE(ctx, QUICK_F, LAB_F, FULL_F), rows, 4096,
                   RL_BY_MODE(ctx, QUICK_MOE, QWEN3_MOE, QWEN3_MOE),
                   RL_BY_MODE(ctx, QUICK_TOP_K, TOP_K, TOP_K), RL_BY_MODE(ctx, QUICK_B, LAB_B, FULL_B),
                   RL_BY_MODE(ctx, 16, 32, 64)};
}

/* --spill-dir, or "": the first of /var/tmp, $TMPDIR and /tmp that is a
 * writable folder on a disk (/tmp is memory on many systems). */
static const char *spill_dir = "";
static char spill_why[600];

const char *exp08_spill_dir(void) { return spill_dir[0] ? spill_dir : NULL; }
const char *exp08_spill_why(void) { return spill_why; }

static void choose_spill_dir(void)
{
    char why[256];
    if (spill_dir[0]) {
        if (!spill_dir_usable(spill_dir, why, sizeof why))
            rl_die(RL_EXIT_USAGE, "exp-08: --spill-dir: %s", why);
        return;
    }
    const char *tmpdir = getenv("TMPDIR");
    const char *candidates[] = {"/var/tmp", tmpdir && tmpdir[0] ? tmpdir : "/tmp", "/tmp"};
    snprintf(spill_why, sizeof spill_why, "no folder on a disk for the slow tier's file (--spill-dir DIR):");
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (spill_dir_usable(candidates[i], why, sizeof why)) {
            spill_dir = candidates[i];
            return;
        }
        rl_appendf(spill_why, sizeof spill_why, " %s", why);
    }
}

/* ---- finding points --------------------------------------------------------------- */

const rl_point *exp08_find(const rl_points *all, point_kind kind, const char *role, double f,
                           int top_k, int batch, const char *routing)
{
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        const exp08_call *c = RL_DATA(exp08_call, p);
        if (!rl_point_timed(p) || c->kind != kind || (role && !rl_point_has_role(p, role)))
            continue;
        if (kind == SPILL ? fabs(c->f - f) < 1e-9
                          : c->top_k == top_k && c->batch == batch && !strcmp(c->routing, routing))
            return p;
    }
    return NULL;
}

/* ---- the columns ------------------------------------------------------------------ */

static bool is_spill_gemv(const rl_point *p)
{
    return RL_DATA(exp08_call, p)->kind == SPILL && p->variant && ((const spill_variant *)p->variant)->gemv;
}

/* The r of the point's own path: the overlapped variant (and its tier
 * read) against the slow tier as it reads it, the others against the copy. */
static double col_r(rl_ctx *ctx, const rl_point *p) { return exp08_spill_r_of(rl_points_all(ctx), p); }
static double model_seq(double f, double r) { return rl_spill_slowdown_sequential(f, r); }
static double model_ovl(double f, double r) { return rl_spill_slowdown_overlapped(f, r); }
static double col_model_seq(rl_ctx *ctx, const rl_point *p)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    return !is_spill_gemv(p) ? NAN : c->f == 0 ? 1 : model_seq(c->f, col_r(ctx, p));
}
static double col_model_ovl(rl_ctx *ctx, const rl_point *p)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    return !is_spill_gemv(p) ? NAN : c->f == 0 ? 1 : model_ovl(c->f, col_r(ctx, p));
}
static double col_t_over_t0(rl_ctx *ctx, const rl_point *p) { return exp08_t_over_t0(rl_points_all(ctx), p); }
static double col_t_over_t1(rl_ctx *ctx, const rl_point *p) { return exp08_t_over_t1(rl_points_all(ctx), p); }
/* The model of a MoE step over the batch: touched(B) / touched(1). */
static double col_touched_ratio(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    const exp08_call *c = RL_DATA(exp08_call, p);
    return c->kind == MOE_BATCH ? c->touched_model / rl_moe_experts_touched(c->experts, c->top_k, 1) : NAN;
}
/* The console's one model column: what the point's ratio is judged against. */
static double col_model(rl_ctx *ctx, const rl_point *p)
{
    if (rl_point_has_role(p, "sequential"))
        return col_model_seq(ctx, p);
    if (rl_point_has_role(p, "overlapped"))
        return col_model_ovl(ctx, p);
    return col_touched_ratio(ctx, p);
}
static double col_ratio(rl_ctx *ctx, const rl_point *p)
{
    double t0 = col_t_over_t0(ctx, p);
    return isnan(t0) ? col_t_over_t1(ctx, p) : t0;
}
static double col_f(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return RL_DATA(exp08_call, p)->f;
}

static const rl_column COLUMNS[] = {
    RL_TEXT("part", NULL, NULL, exp08_call, part),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_TEXT("routing", NULL, NULL, exp08_call, routing),
    {"f", NULL, NULL, .num = col_f},
    RL_INT("rows", NULL, NULL, exp08_call, rows),
    RL_INT("k", NULL, NULL, exp08_call, k),
    RL_INT("experts", NULL, NULL, exp08_call, experts),
    RL_INT("top_k", NULL, NULL, exp08_call, top_k),
    RL_INT("batch", NULL, NULL, exp08_call, batch),
    RL_DOUBLE("touched", NULL, NULL, exp08_call, touched),
    RL_DOUBLE("touched_model", NULL, NULL, exp08_call, touched_model),
    {"flops", NULL, NULL, .num = rl_col_flops},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"ai", NULL, NULL, .num = rl_col_ai},
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    RL_INT("validated_rows", NULL, NULL, exp08_call, validated),
    {0},
};

static const rl_column DERIVED[] = {
    {"r", NULL, NULL, .num = col_r, .measured = true},
    {"t_over_t0", NULL, NULL, .num = col_t_over_t0, .measured = true},
    {"model_sequential", NULL, NULL, .num = col_model_seq, .measured = true},
    {"model_overlapped", NULL, NULL, .num = col_model_ovl, .measured = true},
    {"t_over_t1", NULL, NULL, .num = col_t_over_t1, .measured = true},
    {"touched_ratio_model", NULL, NULL, .num = col_touched_ratio},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "part", "%-9s", exp08_call, part),
    {NULL, "variant", "%-26s", .str = rl_col_variant},
    RL_TEXT(NULL, "routing", "%-7s", exp08_call, routing),
    {NULL, "f", "%5.2f", .num = col_f},
    RL_INT(NULL, "top-k", "%5d", exp08_call, top_k),
    RL_INT(NULL, "B", "%3d", exp08_call, batch),
    RL_DOUBLE(NULL, "touched", "%7.1f", exp08_call, touched),
    RL_COLUMN_TIME_US,
    RL_COLUMN_GBPS,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    {NULL, "r", "%6.2f", .num = col_r, .measured = true},
    {NULL, "t/t0|t1", "%7.2f", .num = col_ratio, .measured = true},
    {NULL, "model", "%6.2f", .num = col_model, .measured = true},
    {0},
};

static const kernel_family *const FAMILIES[] = {&spill_family, &moe_family, &gemv_family, NULL};

/* ---- options ------------------------------------------------------------------------ */

static const char *moe_shape_choice = "";
static const rl_option OPTIONS[] = {
    {"spill-dir", "DIR", "where the CPU's slow tier keeps its file (a folder on a disk, not tmpfs; "
     "the file is unnamed and goes when the run ends; default the first of /var/tmp, $TMPDIR "
     "and /tmp on a disk)", NULL, &spill_dir},
    {"moe-shape", "E,K,B[,M,N]", "instead of the sweeps: time the active-experts kernel at one shape "
     "(E experts of M x N, default 768 x 2048, top-K, a batch of B) with one routing and one layer "
     "repeated, as ggml's test-backend-ops MUL_MAT_ID perf case does; writes no results", NULL,
     &moe_shape_choice},
    {0},
};
static moe_shape side_shape; /* experts 0: the sweeps */
static int side_batch;

static void read_options(rl_ctx *ctx)
{
    if (ctx->kind != RL_CUDA)
        choose_spill_dir();
    if (!moe_shape_choice[0])
        return;
    int e, k, b, m = 768, n = 2048, used = 0, more = 0;
    int got = sscanf(moe_shape_choice, "%d,%d,%d%n,%d,%d%n", &e, &k, &b, &used, &m, &n, &more);
    size_t len = strlen(moe_shape_choice);
    bool whole = (got == 3 && (size_t)used == len) || (got == 5 && (size_t)more == len);
    if (!whole || e < 1 || e > 1024 || k < 1 || k > e || b < 1 || b > 512 ||
        m < 1 || m > 65536 || n < 8 || n > 65536 || n % 8 != 0)
        rl_die(RL_EXIT_USAGE, "exp-08: --moe-shape wants E,K,B or E,K,B,M,N: 1 <= K <= E <= 1024, B "
               "1 to 512, N a multiple of 8 (e.g. 128,8,1: ggml's Qwen3-30B-A3B case), not '%s'",
               moe_shape_choice);
    side_shape = (moe_shape){e, m, n, k};
    side_batch = b;
}

static void declare(rl_ctx *ctx);

static const rl_experiment EXP08 = {
    .id = "08",
    .slug = "08-weight-tiers",
    .title = "Where the weights live: spilled weights and mixture of experts",
    .claim = "Decode speed is set by the bandwidth of wherever the weights live: moving 10 % of "
             "them to a tier ten times slower roughly doubles the time per token (one tier after "
             "the other: t/t0 = (1 - f) + f r, 1.9x; both at once: max(1 - f, f r)). A mixture of "
             "experts reads only its active experts per token while it holds all of them, so at "
             "batch 1 it decodes like a small model; over a batch the experts touched grow as "
             "E (1 - (1 - k/E)^B), and the bytes with them.",
    .source = "the seed articles on GPU utilization; llama.cpp's llama-bench (-ngl rows); ggml's "
              "MUL_MAT_ID perf case (Qwen3-30B-A3B: 128 experts, top-8, 768 x 2048)",
    .prediction = "on a GPU over PCIe or C2C, and on the CPU with the disk as the slow tier: the "
                  "same models with the r measured in the run (README)",
    .claims = EXP08_CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .probes = RL_PROBE_BANDWIDTH,
    .derived = DERIVED,
    .table = TABLE,
    .default_cache = RL_HOT,
    .compare_keys = "part,variant,routing,f,top_k,batch",
    .compare_value = "time_us_median",
    .declare = declare,
    .judge = exp08_judge,
    .options = OPTIONS,
    .read_options = read_options,
};

static void describe(rl_ctx *ctx, const exp08_sweep *s)
{
    char f[96] = "", k[64], b[64];
    for (const double *x = s->fractions; *x >= 0; x++)
        rl_appendf(f, sizeof f, "%s%g", x == s->fractions ? "" : " ", *x);
    rl_list_ints(k, sizeof k, s->top_ks);
    rl_list_ints(b, sizeof b, s->batches);
    rl_meta(ctx, "spill", "a %dx%d FP16 GEMV (n = 1), f = %s of its rows in the slow tier: %s", s->spill_rows,
            s->spill_k, f, ctx->kind == RL_CUDA ? "pinned host memory, mapped" : "a file on the disk, "
            "its pages dropped (posix_fadvise DONTNEED) before each call");
    rl_meta(ctx, "spill_dir", "%s", ctx->kind == RL_CUDA ? "" : spill_dir[0] ? spill_dir : spill_why);
    rl_meta(ctx, "moe", "%d experts of %dx%d FP16; batch 1 at top-k = %s; top-%d at B = %s; %d "
            "seeded routings per point, uniform and skewed (Zipf 1/(e+1))", s->moe.experts,
            s->moe.rows, s->moe.k, k, s->moe.top_k, b, s->routings);
    rl_meta(ctx, "bytes_model", "spill: every weight once from its tier, + x and y; MoE: the "
            "touched experts' weights (the routings' mean), + x and y; dense: all E experts, + its "
            "E x B output rows written and the chosen ones read back");
    rl_meta(ctx, "validation", "spill: every row vs a double-precision reference, the slow tier's "
            "copy bit for bit; MoE: the first routing's first output rows (~2^27 multiply-adds) vs "
            "a double-precision reference");
}

static void declare(rl_ctx *ctx)
{
    rl_tune_decode_cpu(ctx, false); /* the FP16 GEMV's rows per step, on this machine */
    if (side_shape.experts) { /* a side benchmark: its table only */
        printf("\nshape       %d experts of %dx%d FP16, top-%d, B = %d\n", side_shape.experts,
               side_shape.rows, side_shape.k, side_shape.top_k, side_batch);
        rl_discard_results(ctx);
        exp08_declare_moe_shape(ctx, &side_shape, side_batch);
        return;
    }
    exp08_sweep s = exp08_sweep_for(ctx);
    describe(ctx, &s);
    if (ctx->kind == RL_CUDA || exp08_spill_dir()) /* else the spill claims say why not */
        exp08_declare_spill(ctx, &s);
    exp08_declare_moe_top_k(ctx, &s);
    exp08_declare_moe_batch(ctx, &s);
}

int main(int argc, char **argv) { return rl_main(&EXP08, argc, argv); }

/*
 * Experiment 05 -- fusion: x.cos().cos() as two kernels vs one.
 *
 * Each element-wise kernel reads its input from memory and writes its
 * output back. Two cosines as two kernels cross the memory bus four times;
 * fused into one kernel, twice. When the op is cheap next to moving a
 * float, time follows memory trips, not arithmetic.
 *
 * Method: for sizes from 2^16 elements to several times the last-level
 * cache, validate each variant against a double-precision reference on
 * fresh random inputs, then time it. At the largest size, sweep the chain
 * length k = 1..8, fused and unfused. See README.md for what to look for.
 */
#include "fusion.h"
#include "rooflab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *op_choice = "all";

static const rl_option OPTIONS[] = {
    {"op", "OP", "cos (the claim's op), affine (one FMA, memory-bound anywhere) or all",
     "cos|affine|all", &op_choice},
    {0},
};

static const char *const COLUMNS[] = {
    "variant", "number", "op", "k", "n", "footprint_bytes", "bytes", "cache_resident",
    RL_MEASUREMENT_COLUMNS, "gbps", "mbu", "mbu_datasheet", "speedup_vs_unfused",
    "validated", "max_abs_err", "skipped_reason", NULL};

static const rl_experiment EXP05 = {
    .id = "05",
    .slug = "05-fusion",
    .title = "Fusion: x.cos().cos() as two kernels vs one",
    .claim = "Element-wise ops are memory-bound: x.cos().cos() as two kernels reads and writes "
             "memory four times, fused only twice, so the fused kernel is ~2x faster and about "
             "as fast as a single x.cos().",
    .source = "Horace He, \"Making Deep Learning Go Brrrr From First Principles\" (2022)",
    .prediction = "far beyond the cache: fused/unfused speedup for two ops in [1.7, 2.3]; fused "
                  "two ops within 15 % of one op; unfused time grows with the chain length k, "
                  "fused stays flat until the op turns compute-bound",
    .columns = COLUMNS,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "op,variant,k,n",
    .compare_value = "time_us_median",
};

enum { MAX_K = 8, MAX_POINTS = 64 };
static const double ATOL = 1e-5, RTOL = 1e-5; /* float vs double, k <= 8 ops */

/* What rl_measure_group() calls: one launch of one variant. */
typedef struct job {
    const fusion_variant *v;
    fusion_args a;
} job;

static void launch_job(void *p)
{
    job *j = p;
    j->v->launch(&j->a);
}

/* One measured (or failed) point, kept until its size's rows are written. */
typedef struct point {
    const fusion_variant *v;
    job job;
    int k;
    size_t n;
    bool ok;
    double max_abs_err, seconds, gbps;
    rl_measurement m;
    char why[256];
} point;

typedef struct run {
    rl_ctx *ctx;
    const fusion_variant *table;
    const rl_ceilings *ceil;
    float *in, *out, *tmp; /* on the backend's device */
    double *ref;           /* host: the reference chain, one op at a time */
    point pts[MAX_POINTS];
    int npts;
} run;

/* ---- sizes ------------------------------------------------------------ */

/* The claim is about device memory, so the largest size must defeat the
 * cache: input plus output at least 8x the GPU's L2, or 4x the CPU's LLC. */
static size_t largest_n(const rl_ctx *ctx)
{
    double factor = ctx->kind == RL_CUDA ? 8 : 4;
    size_t n = 1 << 16;
    while (2.0 * (double)n * sizeof(float) < factor * ctx->dev->llc_bytes)
        n *= 2;
    return n;
}

static bool cache_resident(const rl_ctx *ctx, double footprint)
{
    return footprint < 4 * ctx->dev->llc_bytes;
}

static double footprint_of(const fusion_variant *v, int k, size_t n)
{
    int arrays = v->fused || k == 1 ? 2 : 3; /* in, out, and tmp when unfused */
    return (double)arrays * (double)n * sizeof(float);
}

/* ---- validate every point, then time them in groups ------------------- */

/* r->ref holds op^k(input): run the variant once and compare every element. */
static void validate_point(run *r, const fusion_variant *v, fusion_op op, int k, size_t n)
{
    rl_ctx *ctx = r->ctx;
    point *p = &r->pts[r->npts++];
    *p = (point){.v = v, .k = k, .n = n};
    p->job = (job){v, {r->out, r->in, r->tmp, n, k, op, rl_stream(ctx->be)}};
    rl_check c = rl_validate_f32(ctx->be, launch_job, &p->job, r->out, n, r->ref, ATOL, RTOL);
    p->max_abs_err = c.max_abs_err;
    p->ok = c.ok;
    if (!c.ok) {
        rl_check_describe(&c, p->why, sizeof p->why);
        fprintf(stderr, "exp-05: %s (%s, k=%d, n=%zu) %s\n", v->name, fusion_op_name(op), k, n,
                p->why);
        ctx->failures++;
    }
}

/* Points that are compared with each other are timed together, sample by
 * sample in turn: the fixed-length variants 1-4 (the verdicts compare
 * them), the two chain variants at each k, and the C library's cos rows
 * (a tenth of the speed: in their own group, they would only stretch the
 * rounds of the others). */
enum { LIBM_GROUP = MAX_K + 1 };

static int group_id(const fusion_variant *v, int k) { return v->libm ? LIBM_GROUP : v->k ? 0 : k; }
static int group_of(const point *p) { return group_id(p->v, p->k); }

static void time_group(run *r, int group)
{
    rl_work works[MAX_POINTS];
    point *members[MAX_POINTS];
    rl_measurement m[MAX_POINTS];
    int n = 0;
    for (int i = 0; i < r->npts; i++)
        if (r->pts[i].ok && group_of(&r->pts[i]) == group) {
            members[n] = &r->pts[i];
            works[n] = (rl_work){r->pts[i].v->name, launch_job, &r->pts[i].job};
            n++;
        }
    if (n == 0)
        return;
    rl_progress_step(r->ctx, "%s n=%zu %s", fusion_op_name(members[0]->job.a.op), members[0]->n,
                     group == LIBM_GROUP ? "C library's cos" : group ? "chain variants" : "variants 1-4");
    rl_measure_group(r->ctx, works, n, m);
    for (int i = 0; i < n; i++) {
        point *p = members[i];
        p->m = m[i];
        p->seconds = m[i].stats.median;
        p->gbps = p->v->bytes(p->n, p->k) / p->seconds / 1e9;
    }
}

/* The unfused point with the same op, size and k, for the speedup. */
static const point *unfused_twin(const run *r, const point *p)
{
    const point *best = NULL;
    for (int i = 0; i < r->npts; i++) {
        const point *q = &r->pts[i];
        if (q->ok && !q->v->fused && q->job.a.op == p->job.a.op && q->n == p->n && q->k == p->k &&
            q->v->libm == p->v->libm && /* the same cos: vector or the C library's */
            (!best || q->v->k == p->v->k)) /* prefer the same family: pair or chain */
            best = q;
    }
    return best;
}

static double speedup_of(const run *r, const point *p)
{
    const point *u = p->ok && p->v->fused ? unfused_twin(r, p) : NULL;
    return u ? u->seconds / p->seconds : NAN;
}

static void write_row(run *r, const point *p)
{
    rl_ctx *ctx = r->ctx;
    double footprint = footprint_of(p->v, p->k, p->n);
    rl_set_str(ctx, "variant", p->v->name);
    rl_set_int(ctx, "number", p->v->number);
    rl_set_str(ctx, "op", fusion_op_name(p->job.a.op));
    rl_set_int(ctx, "k", p->k);
    rl_set_int(ctx, "n", (long long)p->n);
    rl_set_num(ctx, "footprint_bytes", footprint);
    rl_set_num(ctx, "bytes", p->v->bytes(p->n, p->k));
    rl_set_int(ctx, "cache_resident", cache_resident(ctx, footprint));
    rl_set_str(ctx, "validated", p->ok ? "yes" : "no");
    rl_set_num(ctx, "max_abs_err", p->max_abs_err);
    if (p->ok) {
        rl_set_measurement(ctx, &p->m);
        rl_set_num(ctx, "gbps", p->gbps);
        rl_set_num(ctx, "mbu", p->gbps / r->ceil->copy_gbps);
        rl_set_num(ctx, "mbu_datasheet", p->gbps / r->ceil->sheet_gbps);
        rl_set_num(ctx, "speedup_vs_unfused", speedup_of(r, p));
    } else {
        rl_set_str(ctx, "skipped_reason", p->why);
    }
    rl_end_row(ctx);
}

static void print_point(const run *r, const point *p)
{
    if (!p->ok) {
        printf("  %-7s %10zu  %-20s %d  FAILED validation\n", fusion_op_name(p->job.a.op), p->n,
               p->v->name, p->k);
        return;
    }
    printf("  %-7s %10zu  %-20s %d %11.2f %9.1f %6.2f", fusion_op_name(p->job.a.op), p->n, p->v->name,
           p->k, p->seconds * 1e6, p->gbps, p->gbps / r->ceil->copy_gbps);
    double s = speedup_of(r, p);
    if (isfinite(s))
        printf(" %7.2fx", s);
    printf("%s\n", cache_resident(r->ctx, footprint_of(p->v, p->k, p->n)) ? "  (in cache)" : "");
}

/* ---- the sweep -------------------------------------------------------- */

/* Which chain lengths the k-sweep measures at the largest size. */
static bool in_chain_sweep(const rl_ctx *ctx, int k)
{
    return ctx->args.quick ? (k == 1 || k == 2 || k == 4 || k == 8) : k <= MAX_K;
}

/* Does variant v run at this (op, k, n)? Pair variants run at every size at
 * their own k; chain variants only at the largest size, over the k-sweep.
 * Not where the backend lacks it (no launch), and the C-library cos rows
 * only for cos (for affine they would repeat variants 1-3). */
static bool runs_at(const rl_ctx *ctx, const fusion_variant *v, fusion_op op, int k, size_t n,
                    size_t nmax)
{
    if (!v->launch || (v->libm && op != FUSION_COS) || !rl_variant_selected(ctx, v->number, v->name))
        return false;
    if (v->k)
        return v->k == k;
    return n == nmax && in_chain_sweep(ctx, k);
}

/* All points of one op at one size, on one fresh random input. */
static void sweep_size(run *r, fusion_op op, size_t n, size_t nmax)
{
    rl_ctx *ctx = r->ctx;
    float *host = rl_host_alloc(n * sizeof(float));
    rl_fill_uniform(host, n, -4.0f, 4.0f, rl_next_seed(ctx));
    rl_upload(ctx->be, r->in, host, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        r->ref[i] = host[i];
    rl_host_free(host);

    r->npts = 0;
    int kmax = n == nmax ? MAX_K : 2;
    for (int k = 1; k <= kmax; k++) {
        fusion_reference_step(r->ref, n, op); /* ref now holds op^k(input) */
        for (const fusion_variant *v = r->table; v->name; v++)
            if (runs_at(ctx, v, op, k, n, nmax))
                validate_point(r, v, op, k, n);
    }
    for (int group = 0; group <= kmax; group++)
        time_group(r, group);
    time_group(r, LIBM_GROUP);
    rl_progress_clear();
    for (int i = 0; i < r->npts; i++) {
        write_row(r, &r->pts[i]);
        print_point(r, &r->pts[i]);
    }
    fflush(stdout);
}

/* ---- verdicts --------------------------------------------------------- */

static const point *find_point(const run *r, const char *name, int k)
{
    for (int i = 0; i < r->npts; i++)
        if (r->pts[i].ok && r->pts[i].k == k && !strcmp(r->pts[i].v->name, name))
            return &r->pts[i];
    return NULL;
}

/* Which regime did this op run in? A single pass that moves data at half
 * the measured bandwidth or more is memory-bound; one that cannot is
 * limited by the op's arithmetic, and fusion can then save little. */
static void describe_regime(const run *r, const point *one, char *buf, size_t len)
{
    if (!one) {
        snprintf(buf, len, "regime unknown (variant 1 not measured)");
        return;
    }
    double mbu = one->gbps / r->ceil->copy_gbps;
    if (mbu >= 0.5)
        snprintf(buf, len, "memory-bound: one %s pass moves %.0f GB/s, %.2f of the measured "
                 "bandwidth", fusion_op_name(one->job.a.op), one->gbps, mbu);
    else
        snprintf(buf, len, "compute-bound: one %s pass moves only %.1f GB/s, %.2f of the measured "
                 "bandwidth, so arithmetic, not memory, sets the time", fusion_op_name(one->job.a.op),
                 one->gbps, mbu);
}

static void judge(run *r, fusion_op op, size_t nmax)
{
    rl_ctx *ctx = r->ctx;
    const char *name = fusion_op_name(op);
    const point *one = find_point(r, "cos", 1);
    const point *unfused = find_point(r, "cos_cos_unfused", 2);
    const point *fused = find_point(r, "cos_cos_fused", 2);
    char note[256], id[64], claim[128], measured[64];
    describe_regime(r, one, note, sizeof note);
    bool in_cache = cache_resident(ctx, 2.0 * (double)nmax * sizeof(float)); /* in + out */
    if (in_cache)
        snprintf(note, sizeof note, "the largest size fits in the cache: no memory-bound verdict");

    double speedup = unfused && fused && !in_cache ? unfused->seconds / fused->seconds : NAN;
    snprintf(id, sizeof id, "fused_speedup_%s", name);
    snprintf(claim, sizeof claim, "fused/unfused speedup, 2 ops (%s)", name);
    snprintf(measured, sizeof measured, isnan(speedup) ? "-" : "%.2fx", speedup);
    rl_verdict(ctx, id, claim, "1.7x to 2.3x", measured, rl_within(speedup, 1.7, 2.3), note);

    double ratio = fused && one && !in_cache ? fused->seconds / one->seconds : NAN;
    snprintf(id, sizeof id, "fused_vs_one_op_%s", name);
    snprintf(claim, sizeof claim, "fused 2 ops / one op, time (%s)", name);
    snprintf(measured, sizeof measured, isnan(ratio) ? "-" : "%.2fx", ratio);
    rl_verdict(ctx, id, claim, "0.85x to 1.15x", measured, rl_within(ratio, 0.85, 1.15), note);
}

/* ---- main ------------------------------------------------------------- */

static const fusion_variant *table_for(rl_backend_kind kind)
{
#ifdef RL_HAVE_CUDA
    if (kind == RL_CUDA)
        return fusion_cuda_variants;
#endif
    (void)kind;
    return fusion_cpu_variants;
}

/* 2^16 .. nmax, doubling; --quick keeps 2^16, 2^20 and nmax. */
static size_t next_size(const rl_ctx *ctx, size_t n, size_t nmax)
{
    if (!ctx->args.quick)
        return n * 2;
    if (n < (1u << 20) && nmax > (1u << 20))
        return 1u << 20;
    return n < nmax ? nmax : n * 2;
}

/* Progress steps: one per timed group (variants 1-4 and the C library's
 * at every size, and each chain length at the largest). */
static int count_groups(const run *r, const fusion_op *ops, int nops, size_t nmax)
{
    int total = 0;
    for (int o = 0; o < nops; o++)
        for (size_t n = 1 << 16; n <= nmax; n = next_size(r->ctx, n, nmax))
            for (int group = 0; group <= LIBM_GROUP; group++) {
                bool any = false;
                for (int k = 1; k <= MAX_K; k++)
                    for (const fusion_variant *v = r->table; v->name; v++)
                        any |= runs_at(r->ctx, v, ops[o], k, n, nmax) && group_id(v, k) == group;
                total += any;
            }
    return total;
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP05, argc, argv);
    run r = {.ctx = ctx, .table = table_for(ctx->kind)};
    if (ctx->args.list) {
        printf("variants of kernels/%s (pair variants run at every size, chain variants at the "
               "largest for k = 1..%d):\n", ctx->kind == RL_CUDA ? "fusion.cu" : "cpu/fusion.c",
               MAX_K);
        for (const fusion_variant *v = r.table; v->name; v++)
            if (v->launch) /* NULL: not on this backend */
                rl_list_variant(v->number, v->name, v->what);
        return rl_end(ctx);
    }

    fusion_op ops[2];
    int nops = 0;
    if (strcmp(op_choice, "affine") != 0)
        ops[nops++] = FUSION_COS;
    if (strcmp(op_choice, "cos") != 0)
        ops[nops++] = FUSION_AFFINE;

    r.ceil = rl_ceilings_get(ctx);
    size_t nmax = largest_n(ctx);
    char big[32];
    rl_format_bytes((double)nmax * sizeof(float), big, sizeof big);
    rl_meta(ctx, "ops", "%s", op_choice);
    rl_meta(ctx, "sizes", "n = 2^16 .. %zu floats (%s per array)%s", nmax, big,
            ctx->args.quick ? ", quick: 2^16, 2^20 and the largest" : "");
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol %g, rtol %g",
            ATOL, RTOL);

    r.in = rl_alloc(ctx->be, nmax * sizeof(float));
    r.out = rl_alloc(ctx->be, nmax * sizeof(float));
    r.tmp = rl_alloc(ctx->be, nmax * sizeof(float));
    r.ref = rl_host_alloc(nmax * sizeof(double));
    rl_progress_total(ctx, count_groups(&r, ops, nops, nmax));

    printf("\n  %-7s %10s  %-20s %s %11s %9s %6s %8s\n", "op", "n", "variant", "k", "time/us",
           "GB/s", "MBU", "speedup");
    for (int o = 0; o < nops; o++) {
        for (size_t n = 1 << 16; n <= nmax; n = next_size(ctx, n, nmax))
            sweep_size(&r, ops[o], n, nmax);
        judge(&r, ops[o], nmax); /* the points of the largest size are still in r */
    }

    rl_free(ctx->be, r.in);
    rl_free(ctx->be, r.out);
    rl_free(ctx->be, r.tmp);
    rl_host_free(r.ref);
    return rl_end(ctx);
}

/*
 * experts.c -- experiment 08's mixture of experts: one layer's expert
 * matrix (E experts of rows x k), at batch 1 over top-k (the active
 * bytes), and over the batch at a fixed top-k (the experts touched), each
 * point rotating through several seeded routings so that successive calls
 * read other experts, as successive tokens do.
 */
#include "exp08.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A point's routings: on the host (the reference's), and for each one the
 * routing and its two plans in one device buffer. */
typedef struct moe_routes {
    int n;
    int **experts;     /* host, n of batch x top_k */
    int **dev;         /* device: the routing, then the active plan, then the dense plan */
    moe_plan *active, *dense;
} moe_routes;

/* The experts of `layers` layers (copies of one drawn layer): a step reads
 * the next layer's, so that the experts a step leaves in the cache are
 * not the ones the next reads, as in a model, where every other layer
 * runs in between (with one layer, uniform routing at top-1 would find
 * about LLC / E of its experts still cached). */
typedef struct moe_part {
    moe_shape shape;
    int layers;
    int bmax, most_slots, most_out; /* most_out: batch x top_k, the most of a point */
    size_t scratch_bytes;
    fp16 *hw, *hx, *w, *x;
    float *y;
    void *scratch;
    double *ref;       /* the reference of the point being checked */
    int routings;      /* a point's, rotated through */
    exp08_call **calls; /* to free their routings' device buffers */
    int ncalls, cap;
} moe_part;

static void open_moe(rl_ctx *ctx, void *state)
{
    moe_part *M = state;
    const moe_shape *s = &M->shape;
    size_t n = (size_t)s->experts * s->rows * s->k;
    rl_progress_note(ctx, "drawing the experts");
    M->hw = rl_host_random_f16(ctx, n, -1, 1);
    M->hx = rl_host_random_f16(ctx, (size_t)M->bmax * s->k, -1, 1);
    M->w = rl_alloc(ctx->be, (size_t)M->layers * n * sizeof(fp16));
    for (int l = 0; l < M->layers; l++)
        rl_upload(ctx->be, M->w + (size_t)l * n, M->hw, n * sizeof(fp16));
    M->x = rl_alloc_copy(ctx->be, M->hx, (size_t)M->bmax * s->k * sizeof(fp16));
    M->y = rl_alloc(ctx->be, (size_t)M->most_out * s->rows * sizeof(float));
    M->scratch = M->scratch_bytes ? rl_alloc(ctx->be, M->scratch_bytes) : NULL;
    M->ref = rl_host_alloc(sizeof(double) * (size_t)M->most_slots * s->rows);
}

static void close_moe(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    moe_part *M = state;
    for (int i = 0; i < M->ncalls; i++) {
        moe_routes *R = M->calls[i]->routes;
        for (int r = 0; r < R->n && R->dev; r++)
            rl_free(ctx->be, R->dev[r]);
        free(R->dev);
        free(R->active);
        free(R->dense);
        R->dev = NULL, R->active = R->dense = NULL;
    }
    void *dev[] = {M->w, M->x, M->y, M->scratch};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(ctx->be, dev[i]);
    rl_host_free(M->hw);
    rl_host_free(M->hx);
    rl_host_free(M->ref);
}

/* The routings' device copies, made when the point is first prepared. */
static void upload_routes(rl_ctx *ctx, const exp08_call *c, moe_routes *R)
{
    if (R->dev)
        return;
    int E = c->experts, B = c->batch, K = c->top_k;
    size_t route = (size_t)B * K, plan = moe_plan_ints(E, B, K);
    int *host = malloc(sizeof(int) * (route + 2 * plan));
    R->dev = calloc((size_t)R->n, sizeof *R->dev);
    R->active = calloc((size_t)R->n, sizeof *R->active);
    R->dense = calloc((size_t)R->n, sizeof *R->dense);
    if (!host || !R->dev || !R->active || !R->dense)
        rl_die(RL_EXIT_FAILED, "exp-08: out of memory for the routings");
    for (int r = 0; r < R->n; r++) {
        memcpy(host, R->experts[r], sizeof(int) * route);
        moe_plan a = moe_plan_build(host + route, host, B, E, K, false);
        moe_plan d = moe_plan_build(host + route + plan, host, B, E, K, true);
        R->dev[r] = rl_alloc_copy(ctx->be, host, sizeof(int) * (route + 2 * plan));
        R->active[r] = moe_plan_rebase(a, host, R->dev[r]);
        R->dense[r] = moe_plan_rebase(d, host, R->dev[r]);
    }
    free(host);
}

static moe_args args_for(rl_ctx *ctx, const exp08_call *c, int r)
{
    const moe_part *M = c->state;
    const moe_routes *R = c->routes;
    return (moe_args){M->y, M->w, M->x, R->dev[r], R->active[r], R->dense[r], c->experts, c->rows,
                      c->k, c->batch, c->top_k, M->scratch, rl_stream(ctx->be)};
}

/* Each call runs the next routing on the next layer. */
static void run_rotating(void *arg)
{
    exp08_call *c = arg;
    const moe_part *M = c->state;
    int r = c->next % c->routes->n, layer = c->next % M->layers;
    c->next = (c->next + 1) % (c->routes->n * M->layers);
    moe_args *a = &c->moe.args;
    a->w = M->w + (size_t)layer * c->experts * c->rows * c->k;
    a->experts = c->routes->dev[r];
    a->active = c->routes->active[r];
    a->dense = c->routes->dense[r];
    moe_call_run(&c->moe);
}

/* The check runs the first routing; its first output rows are compared
 * with the reference. */
static void prepare_moe(rl_ctx *ctx, rl_point *p)
{
    exp08_call *c = RL_DATA_MUT(exp08_call, p);
    moe_part *M = c->state;
    upload_routes(ctx, c, c->routes);
    c->moe.args = args_for(ctx, c, 0);
    c->moe_check.args = c->moe.args;
    moe_reference(M->ref, M->hw, M->hx, c->routes->experts[0], c->rows, c->k, c->top_k, c->validated);
    p->out = M->y;
    p->want = M->ref;
}

/* ---- declaring --------------------------------------------------------------- */

/* Slots the reference affords: ~2^27 multiply-adds in double. */
static int validated_slots(const moe_shape *s, int batch, int top_k)
{
    int afford = (int)((1L << 27) / ((long)s->rows * s->k));
    int slots = batch * top_k;
    return slots < afford ? slots : afford < 1 ? 1 : afford;
}

/* Layers enough for 32x the last-level cache (about 3 % of a step's
 * experts still cached), as many as the working-set limit allows. */
static int layers_for(rl_ctx *ctx, double layer_bytes)
{
    const rl_ceilings *c = rl_ceilings_get(ctx);
    double llc = c->level_bytes[RL_LLC] > 0 ? c->level_bytes[RL_LLC] : ctx->dev->llc_bytes;
    int want = (int)ceil(32 * llc / layer_bytes), most = (int)(rl_max_bytes(ctx) / layer_bytes);
    int layers = want < most ? want : most;
    return layers > 1 ? layers : 1;
}

struct moe_part *exp08_moe_part(rl_ctx *ctx, rl_part *part, const moe_shape *shape, int routings,
                                const char *heading, bool one_layer)
{
    moe_part *M = RL_NEW(ctx, moe_part);
    *M = (moe_part){.shape = *shape, .routings = routings};
    M->layers = one_layer ? 1 : layers_for(ctx, 2.0 * shape->experts * shape->rows * shape->k);
    *part = (rl_part){.open = open_moe, .done = close_moe, .state = M, .heading = heading};
    return M;
}

static const moe_variant *by_role(const rl_ctx *ctx, const char *role)
{
    return (const moe_variant *)rl_variant_by_role(ctx, &moe_family, role);
}

/* The point's seeded routings, with the experts they touch and the passes
 * the kernel makes over them, each the routings' mean. */
static moe_routes *draw_routes(rl_ctx *ctx, const moe_part *M, int top_k, int batch,
                               moe_routing how, double *touched, double *passes)
{
    int E = M->shape.experts;
    moe_routes *R = RL_NEW(ctx, moe_routes);
    *R = (moe_routes){.n = M->routings};
    R->experts = rl_keep(ctx, sizeof(int *) * (size_t)R->n);
    *touched = *passes = 0;
    for (int r = 0; r < R->n; r++) {
        R->experts[r] = rl_keep(ctx, sizeof(int) * (size_t)batch * top_k);
        moe_route(R->experts[r], batch, E, top_k, how, rl_next_seed(ctx));
        *touched += moe_touched(R->experts[r], batch, top_k, E);
    }
    *touched /= R->n;
    for (int r = 0; r < R->n; r++)
        *passes += moe_passes(R->experts[r], batch, top_k, E);
    *passes /= R->n;
    return R;
}

/* The part's buffers hold the most any of its points needs; its calls
 * are kept to free their routings' device buffers. */
static void note_call(rl_ctx *ctx, moe_part *M, exp08_call *c, const moe_variant *v)
{
    if (M->ncalls == M->cap) {
        M->cap = M->cap ? 2 * M->cap : 16;
        exp08_call **grown = rl_keep(ctx, sizeof(exp08_call *) * (size_t)M->cap);
        if (M->ncalls)
            memcpy(grown, M->calls, sizeof(exp08_call *) * (size_t)M->ncalls);
        M->calls = grown;
    }
    M->calls[M->ncalls++] = c;
    int out = c->batch * c->top_k;
    M->bmax = c->batch > M->bmax ? c->batch : M->bmax;
    M->most_out = out > M->most_out ? out : M->most_out;
    M->most_slots = c->validated > M->most_slots ? c->validated : M->most_slots;
    const moe_shape *sh = &M->shape;
    size_t scratch = moe_scratch_bytes(v, rl_kernel_backend(ctx), sh->experts, sh->rows, sh->k, c->batch);
    M->scratch_bytes = scratch > M->scratch_bytes ? scratch : M->scratch_bytes;
}

void exp08_moe_point(rl_ctx *ctx, moe_part *M, point_kind kind, int group, const char *role,
                     int top_k, int batch, moe_routing how, bool optional)
{
    const moe_variant *v = by_role(ctx, role);
    if (!v || !rl_runs(ctx, &moe_family, KERNEL_VARIANT(v)))
        return;
    const moe_shape *sh = &M->shape;
    double touched, passes;
    moe_routes *R = draw_routes(ctx, M, top_k, batch, how, &touched, &passes);
    exp08_call *c = RL_NEW(ctx, exp08_call);
    *c = (exp08_call){.kind = kind, .part = kind == MOE_TOP_K ? "moe_top_k" : "moe_batch",
                .routing = how == MOE_UNIFORM ? "uniform" : "skewed", .f = NAN, .rows = sh->rows,
                .k = sh->k, .experts = sh->experts, .top_k = top_k, .batch = batch,
                .touched = touched, .touched_model = rl_moe_experts_touched(sh->experts, top_k, batch),
                .launches = moe_launches(v, rl_kernel_backend(ctx), passes, sh->experts, batch),
                .validated = validated_slots(sh, batch, top_k), .state = M, .routes = R,
                .moe.launch = RL_LAUNCHER(ctx, v), .moe_check.launch = RL_LAUNCHER(ctx, v)};
    note_call(ctx, M, c, v);
    double all = 2.0 * sh->experts * sh->rows * sh->k * M->layers;
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .run = run_rotating, .arg = c, RL_POINT_DATA(c),
        .check_call = moe_kernel_call(&c->moe_check), .prepare = prepare_moe,
        .count = (size_t)c->validated * sh->rows, .atol = gemv_atol(sh->k),
        .flops = moe_flops(v, sh->experts, sh->rows, sh->k, batch, top_k),
        .bytes = moe_bytes(v, touched, sh->experts, sh->rows, sh->k, batch, top_k),
        /* the routings rotate over every expert of every layer: all are the working set */
        .footprint = all, .pattern = RL_READ, .optional = optional});
}

/* The empty launch writes nothing: its output's first row keeps the
 * poison. Its call is bound here, the check running before it is timed. */
static bool check_empty(rl_ctx *ctx, rl_point *p)
{
    exp08_call *c = RL_DATA_MUT(exp08_call, p);
    moe_part *M = c->state;
    c->moe.args = (moe_args){.y = M->y, .stream = rl_stream(ctx->be)};
    size_t bytes = sizeof(float) * (size_t)c->rows;
    rl_poison(ctx->be, M->y, bytes);
    moe_call_run(&c->moe);
    rl_sync(ctx->be);
    unsigned char *got = rl_download_copy(ctx->be, M->y, bytes);
    bool untouched = true;
    for (size_t i = 0; i < bytes && untouched; i++)
        untouched = got[i] == 0xFF;
    rl_host_free(got);
    if (!untouched)
        snprintf(p->why, sizeof p->why, "the empty launch wrote to the output");
    return untouched;
}

/* The fixed cost of one launch (a GPU kernel, a CPU parallel region),
 * timed in the batch-1 group beside the steps it is compared with: a step
 * of a few microseconds of bytes is timed on its launch, not its bytes. */
void exp08_moe_empty_point(rl_ctx *ctx, moe_part *M, int group)
{
    const moe_variant *v = by_role(ctx, "fixed_cost");
    if (!v || !rl_runs(ctx, &moe_family, KERNEL_VARIANT(v)))
        return;
    const moe_shape *sh = &M->shape;
    exp08_call *c = RL_NEW(ctx, exp08_call);
    *c = (exp08_call){.kind = MOE_TOP_K, .part = "moe_top_k", .routing = "uniform", .f = NAN, .rows = sh->rows,
                .k = sh->k, .experts = sh->experts, .top_k = 1, .batch = 1, .touched = NAN,
                .touched_model = NAN, .launches = 1, .state = M, .moe.launch = RL_LAUNCHER(ctx, v)};
    /* the output it must leave alone, one row: the part's buffers hold a
     * step's at least, whichever points run */
    M->most_out = M->most_out > 1 ? M->most_out : 1;
    M->bmax = M->bmax > 1 ? M->bmax : 1;
    M->most_slots = M->most_slots > 1 ? M->most_slots : 1;
    rl_point_add(ctx, &(rl_point){.variant = KERNEL_VARIANT(v), .group = group,
                                  .call = moe_kernel_call(&c->moe), RL_POINT_DATA(c), .check = check_empty,
                                  .pattern = RL_READ});
}

/* ---- --moe-shape: a side benchmark -------------------------------------------- */

/* --moe-shape's value ("": the sweeps), and the shape and batch it asks for. */
const char *exp08_moe_shape_option = "";
static moe_shape side_shape;
static int side_batch;

bool exp08_moe_shape_chosen(void) { return side_shape.experts > 0; }

void exp08_moe_shape_read(void)
{
    const char *text = exp08_moe_shape_option;
    if (!text[0])
        return;
    int e, k, b, m = 768, n = 2048, used = 0, more = 0;
    int got = sscanf(text, "%d,%d,%d%n,%d,%d%n", &e, &k, &b, &used, &m, &n, &more);
    size_t len = strlen(text);
    bool whole = (got == 3 && (size_t)used == len) || (got == 5 && (size_t)more == len);
    if (!whole || e < 1 || e > 1024 || k < 1 || k > e || b < 1 || b > 512 ||
        m < 1 || m > 65536 || n < 8 || n > 65536 || n % 8 != 0)
        rl_die(RL_EXIT_USAGE, "exp-08: --moe-shape wants E,K,B or E,K,B,M,N: 1 <= K <= E <= 1024, B "
               "1 to 512, N a multiple of 8 (e.g. 128,8,1: ggml's Qwen3-30B-A3B case), not '%s'",
               text);
    side_shape = (moe_shape){e, m, n, k};
    side_batch = b;
}

/* One shape, as ggml's MUL_MAT_ID perf case times it: one routing (each
 * token's top-k distinct experts, uniform) and one layer, repeated, so
 * that the active experts stay wherever the last call left them (in the
 * cache when they fit it), the active variant only. */
void exp08_declare_moe_shape(rl_ctx *ctx)
{
    const moe_shape *sh = &side_shape;
    printf("\nshape       %d experts of %dx%d FP16, top-%d, B = %d\n", sh->experts, sh->rows, sh->k,
           sh->top_k, side_batch);
    rl_discard_results(ctx);
    rl_part part;
    moe_part *M = exp08_moe_part(ctx, &part, sh, 1, "MoE, one shape (one routing, repeated)", true);
    rl_part_add(ctx, &part);
    exp08_moe_point(ctx, M, MOE_BATCH, rl_group_new(ctx), "active", sh->top_k, side_batch,
                    MOE_UNIFORM, false);
}

/* ---- what the columns and verdicts read --------------------------------------- */

typedef struct moe_key {
    point_kind kind;
    int top_k, batch;
    const char *routing;
} moe_key;

static bool moe_matches(const rl_point *p, const void *key)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    const moe_key *k = key;
    return c->kind == k->kind && c->top_k == k->top_k && c->batch == k->batch &&
           !strcmp(c->routing, k->routing);
}

const rl_point *exp08_moe_find(const rl_points *all, point_kind kind, const char *role, int top_k,
                               int batch, const char *routing)
{
    return rl_points_find(all, role, moe_matches, &(moe_key){kind, top_k, batch, routing});
}

/* Declared, not timed: rl_points_find reads only the timed points. */
const exp08_call *exp08_moe_declared(const rl_points *all, int batch, const char *routing)
{
    for (int i = 0; i < all->n; i++) {
        const exp08_call *c = RL_DATA(exp08_call, &all->v[i]);
        if (c->kind == MOE_BATCH && c->batch == batch && !strcmp(c->routing, routing))
            return c;
    }
    return NULL;
}

double exp08_col_t_over_t1(rl_ctx *ctx, const rl_point *p)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    if (c->kind != MOE_BATCH || !rl_point_timed(p) || !p->variant)
        return NAN;
    const rl_point *one = exp08_moe_find(rl_points_all(ctx), MOE_BATCH, p->variant->role, c->top_k,
                                         1, c->routing);
    return one ? p->seconds / one->seconds : NAN;
}

double exp08_col_touched_ratio(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    const exp08_call *c = RL_DATA(exp08_call, p);
    return c->kind == MOE_BATCH ? c->touched_model / rl_moe_experts_touched(c->experts, c->top_k, 1)
                                : NAN;
}

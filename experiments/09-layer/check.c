/*
 * check.c -- experiment 09's references: each step on its own inputs, and
 * the whole layer from its input, in double precision.
 *
 * A sequence attends only to itself and every other step works token by
 * token, so the first sequence of a step's output depends on the first
 * sequence of its inputs alone (and the weights): the reference computes
 * that much, whatever the batch, and the check compares it. The backward
 * pass's weight, bias and norm-parameter gradients sum over every token:
 * those steps are checked over the whole batch.
 */
#include "exp09.h"

#include <string.h>

/* The step's shape for one sequence: its rows scale with the batch. */
static layer_args first_sequence(const exp09_step *s)
{
    layer_args a = s->a;
    a.rows = s->a.rows / s->a.batch;
    a.batch = 1;
    return a;
}

/* The shape a step's check compares: the first sequence, or the whole
 * batch where the step's output sums over every token (a weight's
 * gradient: its first sequence's sum is not the output). */
static layer_args checked_shape(const exp09_step *s)
{
    return layer_sums_tokens(s->v) ? s->a : first_sequence(s);
}

/* The first n floats of a device array, as doubles (NULL for n = 0). */
static double *download_doubles(rl_ctx *ctx, const float *dev, size_t n)
{
    if (!n || !dev)
        return NULL;
    float *host = rl_download_copy(ctx->be, dev, n * sizeof(float));
    double *d = rl_host_alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        d[i] = host[i];
    rl_host_free(host);
    return d;
}

/* The values of y a step writes for one sequence (ADD_RMSNORM's y2 apart). */
static size_t y_count(const exp09_step *s, const layer_args *one)
{
    size_t n = layer_out_count(s->v, one);
    return s->v->op == LAYER_OP_ADD_RMSNORM ? n / 2 : n;
}

/* The inputs of a step, in double: from `from` where it has the tensor
 * (the reference chain), else downloaded from the device. */
typedef struct inputs {
    double *x, *r, *w, *bias, *gamma, *beta, *mask;
    bool owned[7];
} inputs;

static double *input(rl_ctx *ctx, const exp09_layer *L, double *const *from, int id, size_t n,
                     bool *owned)
{
    *owned = false;
    if (id < 0 || !n)
        return NULL;
    if (from && from[id])
        return from[id];
    *owned = true;
    return download_doubles(ctx, L->t[id].dev, n);
}

static inputs gather(rl_ctx *ctx, const exp09_layer *L, const exp09_step *s, const layer_args *one,
                     double *const *from)
{
    layer_sizes z = layer_input_sizes(s->v, one);
    inputs in;
    in.x = input(ctx, L, from, s->x, z.x, &in.owned[0]);
    in.r = input(ctx, L, from, s->r, z.r, &in.owned[1]);
    in.w = input(ctx, L, from, s->w, z.w, &in.owned[2]);
    in.bias = input(ctx, L, from, s->bias, z.bias, &in.owned[3]);
    in.gamma = input(ctx, L, from, s->gamma, z.gamma, &in.owned[4]);
    in.beta = input(ctx, L, from, s->beta, z.beta, &in.owned[5]);
    in.mask = input(ctx, L, from, s->mask, z.mask, &in.owned[6]);
    return in;
}

static void release(inputs *in)
{
    double *all[7] = {in->x, in->r, in->w, in->bias, in->gamma, in->beta, in->mask};
    for (int i = 0; i < 7; i++)
        if (in->owned[i])
            rl_host_free(all[i]);
}

/* The reference of one step into y (and y2): its inputs from `from` or
 * the device. */
static void reference_step(rl_ctx *ctx, const exp09_layer *L, const exp09_step *s,
                           double *const *from, const layer_args *shape, double *y, double *y2)
{
    layer_args one = *shape;
    inputs in = gather(ctx, L, s, &one, from);
    layer_ref io = {y, y2, in.x, in.r, in.w, in.bias, in.gamma, in.beta, in.mask};
    layer_reference(s->v, &one, &io);
    release(&in);
}

double *exp09_step_want(rl_ctx *ctx, const exp09_layer *L, const exp09_step *s, size_t *count)
{
    layer_args one = checked_shape(s);
    size_t n = y_count(s, &one);
    double *y = rl_host_alloc(n * sizeof(double)), *y2 = NULL;
    if (s->y2 >= 0)
        y2 = rl_host_alloc(L->t[s->y2].first_count * sizeof(double));
    reference_step(ctx, L, s, NULL, &one, y, y2);
    rl_host_free(y2);
    *count = n;
    return y;
}

/* The chain: every activation's first sequence in double, the input and
 * the mask downloaded, each step's output computed from the ones before
 * (the weights downloaded for each step that reads them, one at a time).
 * A step that sums over the tokens sums the first sequence's here: its
 * output (a weight's gradient) is a leaf no later step reads, and its own
 * check (exp09_step_want) sums the whole batch. */
double *exp09_program_want(rl_ctx *ctx, exp09_layer *L, const exp09_program *P, size_t *count)
{
    double *ref[EXP09_MAX_TENSORS] = {0};
    for (int i = 0; i < L->nt; i++)
        if (i == L->input || !strcmp(L->t[i].name, "mask"))
            ref[i] = download_doubles(ctx, L->t[i].dev, L->t[i].first_count);
    int out = -1;
    for (int i = 0; i < P->n; i++) {
        const exp09_step *s = &P->s[i];
        ref[s->y] = rl_host_alloc(L->t[s->y].first_count * sizeof(double));
        if (s->y2 >= 0)
            ref[s->y2] = rl_host_alloc(L->t[s->y2].first_count * sizeof(double));
        layer_args one = first_sequence(s);
        reference_step(ctx, L, s, ref, &one, ref[s->y], s->y2 >= 0 ? ref[s->y2] : NULL);
        out = s->y;
    }
    if (out < 0)
        rl_die(RL_EXIT_FAILED, "exp-09: a program with no steps");
    double *want = ref[out];
    *count = L->t[out].first_count;
    for (int i = 0; i < L->nt; i++)
        if (i != out)
            rl_host_free(ref[i]);
    return want;
}

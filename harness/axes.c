/*
 * axes.c -- an axis's values in this run, and a sweep's combinations
 * declared in order (rl_axes.h).
 */
#include "rooflab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table this run reads: the GPU's where the axis has one, this mode's. */
static const rl_values *values_of(const rl_ctx *ctx, const rl_axis *a)
{
    if (ctx->kind == RL_CUDA && a->gpu)
        a = a->gpu;
    return ctx->args.mode == RL_MODE_QUICK ? &a->quick
           : ctx->args.mode == RL_MODE_LAB ? &a->lab
                                           : &a->full;
}

static bool is_range(const rl_values *v) { return !v->list; }

static void add_value(rl_steps *s, const rl_axis *a, double v)
{
    if (s->n == RL_AXIS_MAX_VALUES)
        rl_die(RL_EXIT_FAILED, "internal error: axis %s has more than %d values", a->name,
               RL_AXIS_MAX_VALUES);
    s->v[s->n++] = v;
}

/* A range's next value after v: a range that cannot grow would never end. */
static double next_in_range(const rl_axis *a, const rl_values *r, double v, double top)
{
    double next = r->ends ? top : r->factor > 0 ? v * r->factor : v + r->step;
    if (!(next > v))
        rl_die(RL_EXIT_FAILED, "internal error: axis %s: a range that does not grow (factor %g, "
               "step %g)", a->name, r->factor, r->step);
    return next;
}

/* A variant axis: the indices of its family's rows that run here. */
static rl_steps variants_of(const rl_ctx *ctx, const rl_axis *a)
{
    rl_steps s = {0};
    for (int i = 0; kernel_row(a->family, i)->name; i++)
        if (rl_runs(ctx, a->family, kernel_row(a->family, i)))
            add_value(&s, a, i);
    return s;
}

rl_steps rl_axis_values(const rl_ctx *ctx, const rl_axis *a)
{
    if (a->family)
        return variants_of(ctx, a);
    const rl_values *r = values_of(ctx, a);
    double top = a->top ? a->top(ctx) : INFINITY;
    rl_steps s = {0};
    if (!is_range(r)) {
        for (int i = 0; i < r->n; i++)
            if (r->list[i] <= top)
                add_value(&s, a, r->list[i]);
        return s;
    }
    if (!isfinite(top))
        rl_die(RL_EXIT_FAILED, "internal error: axis %s is a range without a top", a->name);
    for (double v = r->from; v < top; v = next_in_range(a, r, v, top))
        add_value(&s, a, v);
    add_value(&s, a, top);
    return s;
}

static rl_steps nonempty(const rl_ctx *ctx, const rl_axis *a)
{
    rl_steps s = rl_axis_values(ctx, a);
    if (s.n == 0)
        rl_die(RL_EXIT_FAILED, "internal error: axis %s has no values in this run", a->name);
    return s;
}

double rl_axis_first(const rl_ctx *ctx, const rl_axis *a) { return nonempty(ctx, a).v[0]; }

double rl_axis_last(const rl_ctx *ctx, const rl_axis *a)
{
    rl_steps s = nonempty(ctx, a);
    return s.v[s.n - 1];
}

bool rl_axis_has(const rl_ctx *ctx, const rl_axis *a, double v)
{
    rl_steps s = rl_axis_values(ctx, a);
    for (int i = 0; i < s.n; i++)
        if (s.v[i] == v)
            return true;
    return false;
}

void rl_axis_text(const rl_ctx *ctx, const rl_axis *a, char *buf, size_t len)
{
    const rl_values *r = values_of(ctx, a); /* unread for a variant axis */
    rl_steps s = rl_axis_values(ctx, a);
    buf[0] = '\0';
    if (a->family) {
        for (int i = 0; i < s.n; i++)
            rl_appendf(buf, len, "%s%s", i ? ", " : "", kernel_row(a->family, (int)s.v[i])->name);
        return;
    }
    if (is_range(r) && s.n > 2) {
        snprintf(buf, len, "%.10g .. %.10g", s.v[0], s.v[s.n - 1]);
        if (r->factor > 0)
            rl_appendf(buf, len, r->factor == 2 ? ", doubling" : ", times %g", r->factor);
        else
            rl_appendf(buf, len, ", every %g", r->step);
        return;
    }
    for (int i = 0; i < s.n; i++)
        rl_appendf(buf, len, "%s%.10g", i ? ", " : "", s.v[i]);
}

void rl_axis_list(const rl_ctx *ctx, const rl_axis *a, char *buf, size_t len)
{
    rl_steps s = rl_axis_values(ctx, a);
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < s.n; i++)
        rl_appendf(buf, len, "%s%.10g", i ? " " : "", s.v[i]);
}

/* ---- a combination's values --------------------------------------------------- */

static int axis_index(const rl_at *at, const rl_axis *a)
{
    for (int k = 0; k < at->n; k++)
        if (at->axes[k] == a)
            return k;
    rl_die(RL_EXIT_FAILED, "internal error: axis %s is not one of this sweep's", a->name);
}

double rl_at_value(const rl_at *at, const rl_axis *a) { return at->v[axis_index(at, a)]; }
int rl_at_int(const rl_at *at, const rl_axis *a) { return (int)rl_at_value(at, a); }
size_t rl_at_size(const rl_at *at, const rl_axis *a) { return (size_t)rl_at_value(at, a); }
bool rl_at_last(const rl_at *at, const rl_axis *a) { return at->last[axis_index(at, a)]; }

const kernel_variant *rl_at_variant(const rl_at *at, const rl_axis *a)
{
    if (!a->family)
        rl_die(RL_EXIT_FAILED, "internal error: axis %s is not a variant axis", a->name);
    return kernel_row(a->family, rl_at_int(at, a));
}

/* ---- the sweep ----------------------------------------------------------------- */

static int count_axes(const rl_sweep *s)
{
    int n = 0;
    while (s->axes[n])
        n++;
    if (n > RL_AXES_MAX || s->part_axes < 0 || s->part_axes > n || s->group_axes < 0 ||
        s->group_axes > n)
        rl_die(RL_EXIT_FAILED, "internal error: a sweep of %d axes (at most %d), parts by %d, "
               "groups by %d", n, RL_AXES_MAX, s->part_axes, s->group_axes);
    return n;
}

/* Moves at to the next combination, the last axis fastest; returns the
 * first axis whose value changed, or -1 after the last combination. */
static int advance(rl_at *at, const rl_steps *steps)
{
    for (int k = at->n - 1; k >= 0; k--) {
        if (++at->i[k] < steps[k].n)
            return k;
        at->i[k] = 0;
    }
    return -1;
}

static void set_values(rl_at *at, const rl_steps *steps)
{
    for (int k = 0; k < at->n; k++) {
        at->v[k] = steps[k].v[at->i[k]];
        at->last[k] = at->i[k] == steps[k].n - 1;
    }
}

/* Whether the first n axes of at differ from those of the combination
 * seen last (none yet: they do). */
static bool moved_since(const rl_at *at, const int *seen, bool have, int n)
{
    if (!have)
        return true;
    for (int k = 0; k < n; k++)
        if (at->i[k] != seen[k])
            return true;
    return false;
}

/* The combinations that have points, each in its part and group: a new
 * part where one of the part axes moved since the last part was made, a
 * new group where one of the group axes did. Made when a combination with
 * points reaches them, so that a skipped one makes none. */
typedef struct sweep_walk {
    int part_at[RL_AXES_MAX], group_at[RL_AXES_MAX];
    bool have_part, have_group;
} sweep_walk;

static void begin_part_and_group(rl_ctx *ctx, const rl_sweep *s, rl_at *at, sweep_walk *w)
{
    if (s->part_axes && moved_since(at, w->part_at, w->have_part, s->part_axes)) {
        rl_part part = {0};
        if (s->part)
            s->part(ctx, at, &part, s->state);
        rl_part_add(ctx, &part);
        at->part_state = part.state;
        memcpy(w->part_at, at->i, sizeof w->part_at);
        w->have_part = true;
    }
    if (s->group_axes && moved_since(at, w->group_at, w->have_group, s->group_axes)) {
        at->group = rl_group_new(ctx);
        memcpy(w->group_at, at->i, sizeof w->group_at);
        w->have_group = true;
    }
}

void rl_sweep_declare(rl_ctx *ctx, const rl_sweep *s)
{
    rl_at at = {.axes = s->axes, .n = count_axes(s)};
    rl_steps *steps = malloc(sizeof *steps * RL_AXES_MAX); /* 32 KiB an axis: not the stack */
    if (!steps)
        rl_die(RL_EXIT_FAILED, "out of memory for a sweep's axes");
    bool empty = false;
    for (int k = 0; k < at.n; k++) {
        steps[k] = rl_axis_values(ctx, s->axes[k]);
        empty |= steps[k].n == 0; /* an empty axis: no combination */
    }
    sweep_walk w = {0};
    for (int moved = 0; !empty && moved >= 0; moved = advance(&at, steps)) {
        set_values(&at, steps);
        if (s->skip && s->skip(ctx, &at, s->state))
            continue;
        begin_part_and_group(ctx, s, &at, &w);
        s->points(ctx, &at, s->state);
    }
    free(steps);
}

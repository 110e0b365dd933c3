/*
 * rl_axes.h -- a sweep's axes, declared once, and the points at their
 * combinations. A room of rooflab.h (axes.c).
 *
 * An experiment says what it sweeps, not how: each axis (sizes, batches,
 * cache lengths, fractions) is a table with its values in a quick, a lab
 * and a full run, and where a GPU needs other values, a second table for
 * the GPU. A sweep is the axes in order, the first outermost, and the one
 * function that declares the points at one combination of their values;
 * the harness expands the values for this run, walks every combination in
 * order, opens a part and a group where the sweep says, and calls the
 * function. Variants are an axis too (RL_VARIANT_AXIS: the rows of a
 * kernel family that run here). The budget then orders and admits the groups (budget.c): a
 * point the verdicts read is not optional, the rest are.
 *
 *   static const rl_axis BATCH = RL_AXIS("batch", RL_LIST(1, 4), RL_LIST(1, 4, 64),
 *                                        RL_LIST(1, 2, 4, 8, 16, 32, 64));
 *   static const rl_axis *const AXES[] = {&CACHE_LEN, &BATCH, NULL};
 *   rl_sweep_declare(ctx, &(rl_sweep){AXES, .part_axes = 1, .group_axes = 2,
 *                                     .part = open_cache, .points = batch_points});
 *
 * In the function, rl_at_int(at, &BATCH) is the batch of this combination.
 */
#ifndef RL_AXES_H
#define RL_AXES_H

#include "rl_points.h" /* rl_ctx */

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rl_part;

/* 4096 values: a sweep of N every 8 from 1024 to 4096 (exp-04's library
 * part) fits, and a staircase of tile columns to 3.5 waves on a GPU of
 * any size a lab has. */
enum { RL_AXIS_MAX_VALUES = 4096, RL_AXES_MAX = 6 };

/* One mode's values of an axis: a list, or a range that ends at the top
 * the axis gives at run time (rl_axis.top: a size from the cache, the
 * working-set cap), the top itself always its last value:
 *   RL_TIMES(from, factor): from, from * factor, ... (factor 2: doubling);
 *   RL_STEPS(from, step):   from, from + step, ...;
 *   RL_ENDS(from):          from and the top.
 * A list's values above a top are left out. */
typedef struct rl_values {
    const double *list;
    int n;
    double from, factor, step;
    bool ends; /* from and the top only */
} rl_values;

#define RL_LIST(...)                                                                       \
    {.list = (const double[]){__VA_ARGS__},                                                \
     .n = (int)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))}
#define RL_TIMES(from_, factor_) {.from = (from_), .factor = (factor_)}
#define RL_STEPS(from_, step_) {.from = (from_), .step = (step_)}
#define RL_ENDS(from_) {.from = (from_), .ends = true}

typedef struct rl_axis {
    const char *name; /* what it is, as the CSV column that holds it: "batch" */
    rl_values quick, lab, full;
    /* The values on the CUDA backend, where a GPU needs others (a larger
     * batch to fill it, sizes past its L2); NULL: the same as the CPU's. */
    const struct rl_axis *gpu;
    /* The top of a range (and a cap on a list), at run time; NULL: none. */
    double (*top)(const rl_ctx *ctx);
    /* Or the variants of a kernel family that run here (rl_runs: this
     * backend, --variant): RL_VARIANT_AXIS(&fusion_family). Its values are
     * the rows' indices; rl_at_variant gives the row. */
    const kernel_family *family;
} rl_axis;

#define RL_VARIANT_AXIS(family_) {.name = "variant", .family = (family_)}

/* An axis: its name and its quick, lab and full values, then any other
 * field: RL_AXIS("n", RL_ENDS(1 << 16), RL_TIMES(1 << 16, 4),
 * RL_TIMES(1 << 16, 2), .top = largest_n). Declared at file scope (the
 * lists are compound literals, static there). */
#define RL_AXIS(name_, quick_, lab_, full_, ...) \
    {.name = (name_), .quick = quick_, .lab = lab_, .full = full_, __VA_ARGS__}

/* An axis's values in this run: its mode's, on this backend, up to its top. */
typedef struct rl_steps {
    int n;
    double v[RL_AXIS_MAX_VALUES];
} rl_steps;
rl_steps rl_axis_values(const rl_ctx *ctx, const rl_axis *a);
/* The first and the last of them (an axis has at least one value). */
double rl_axis_first(const rl_ctx *ctx, const rl_axis *a);
double rl_axis_last(const rl_ctx *ctx, const rl_axis *a);
/* Whether v is one of them. */
bool rl_axis_has(const rl_ctx *ctx, const rl_axis *a, double v);
/* "1, 4, 64" (a range: "65536 .. 8388608, doubling"): for the CSV's metadata. */
void rl_axis_text(const rl_ctx *ctx, const rl_axis *a, char *buf, size_t len);
/* "1 4 64": every value, as words (the metadata of experiments 02 and 07). */
void rl_axis_list(const rl_ctx *ctx, const rl_axis *a, char *buf, size_t len);

/* One combination of a sweep's values: on each axis, in the sweep's order,
 * the value, its index and whether it is the axis's last (the largest
 * size, where a verdict is read). group: the group of the combination
 * (rl_sweep.group_axes), 0 where the sweep makes none. part_state: the
 * state of the part the combination runs in (rl_sweep.part), or NULL. */
typedef struct rl_at {
    const rl_axis *const *axes;
    int n;
    double v[RL_AXES_MAX];
    int i[RL_AXES_MAX];
    bool last[RL_AXES_MAX];
    int group;
    void *part_state;
} rl_at;

/* The combination's value on an axis of its sweep (another axis: an
 * internal error, said at once), and the same as an int or a size. */
double rl_at_value(const rl_at *at, const rl_axis *a);
int rl_at_int(const rl_at *at, const rl_axis *a);
size_t rl_at_size(const rl_at *at, const rl_axis *a);
/* Whether it is the axis's last value. */
bool rl_at_last(const rl_at *at, const rl_axis *a);
/* The row of a variant axis (RL_VARIANT_AXIS) at this combination. */
const kernel_variant *rl_at_variant(const rl_at *at, const rl_axis *a);

typedef struct rl_sweep {
    const rl_axis *const *axes; /* the first outermost; ended by NULL */
    /* The first part_axes axes: a new part at each combination of their
     * values (part() fills it in); 0: the points join the current part. */
    int part_axes;
    /* The first group_axes axes: a new group at each combination of their
     * values, in at->group; 0: none (the function makes its own). */
    int group_axes;
    void (*part)(rl_ctx *ctx, const rl_at *at, struct rl_part *part, void *state);
    /* Combinations that have no point (a variant that runs only at its own
     * size): skipped before a part or a group is made for them, so that
     * none is made empty; NULL: every combination has points. */
    bool (*skip)(const rl_ctx *ctx, const rl_at *at, void *state);
    /* The points at one combination of every axis's values. */
    void (*points)(rl_ctx *ctx, const rl_at *at, void *state);
    void *state;
} rl_sweep;

/* In declare: every combination of the sweep's values, in order. */
void rl_sweep_declare(rl_ctx *ctx, const rl_sweep *s);

#ifdef __cplusplus
}
#endif
#endif /* RL_AXES_H */

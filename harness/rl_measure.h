/*
 * rl_measure.h -- how the harness measures and validates, beneath what an
 * experiment declares: the stop rule of each run mode and the sampler
 * that applies it (stats.c), random fills for a seed (random.c), and
 * validation of a call against a reference on the device (validate.c).
 * An experiment never calls these: its points are validated and timed
 * by the pipeline (rl_points.h). measure.c, points.c, the ceilings and
 * the tests of them include it.
 */
#ifndef RL_MEASURE_H
#define RL_MEASURE_H

#include "rl_library.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rule per run mode (see rl_mode): a reference run, a lab run (the
 * default), a smoke test. */
extern const rl_stop_rule RL_STOP_FULL;  /* 10 samples, 0.5 s, 0.5 %, 2.5 s */
extern const rl_stop_rule RL_STOP_LAB;   /*  5 samples, 0.15 s, 1 %, 1 s */
extern const rl_stop_rule RL_STOP_QUICK; /*  3 samples, 0.03 s, 5 %, 0.3 s: a smoke test */

const char *rl_stop_reason_name(rl_stop_reason r);

/* Running state of one measurement: Welford's mean and variance, so that
 * the stop rule is O(1) per sample. */
typedef struct rl_sampler {
    const rl_stop_rule *rule;
    double *samples; /* seconds, one per sample */
    int n, cap;
    double mean, m2, sum;
} rl_sampler;

void rl_sampler_init(rl_sampler *s, const rl_stop_rule *rule, double *buf, int cap);
void rl_sampler_add(rl_sampler *s, double seconds);
rl_stop_reason rl_sampler_done(const rl_sampler *s, double elapsed_wall_s);

/* ---- Random inputs and validation (random.c, validate.c) ---- */
/* Deterministic for a seed, whatever the thread count. */
void rl_fill_uniform(float *x, size_t n, float lo, float hi, uint64_t seed);
void rl_fill_uniform_f64(double *x, size_t n, double lo, double hi, uint64_t seed);
/* FP16 bits (kernels/half.h's fp16), each the float draw rounded to nearest
 * even: no float copy of a matrix that may be gigabytes. */
void rl_fill_uniform_f16(uint16_t *x, size_t n, float lo, float hi, uint64_t seed);

/* Poisons dev_out, runs work(arg) once, downloads n floats and compares
 * with want. The standard "validate before timing" step. */
rl_check rl_validate_f32(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                         size_t n, const double *want, double atol, double rtol);

/* rl_validate_f32 with a bound per element, as rl_compare_f32_bound. */
rl_check rl_validate_f32_bound(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                               size_t n, const double *want, const double *bound);
/* For a call whose output overwrites its input (written fresh by the
 * caller): not poisoned; a bound when given, else atol and rtol. */
rl_check rl_validate_f32_in_place(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                                  size_t n, const double *want, const double *bound, double atol,
                                  double rtol);

#ifdef __cplusplus
}
#endif
#endif /* RL_MEASURE_H */

/*
 * validate.c -- "a fast wrong kernel is worse than a slow right one".
 *
 * Every output element is compared with a double-precision reference.
 * Outputs are poisoned with NaN first, so an element the kernel forgot to
 * write fails as non-finite instead of passing by luck.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>

/* One comparison for both entry points: bound[i] when given, else atol +
 * rtol |want|. */
static rl_check compare(const float *got, const double *want, const double *bound, size_t n,
                        double atol, double rtol)
{
    rl_check c = {.ok = true, .n = n};
    double err2 = 0, ref2 = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        double err = fabs(g - w);
        bool finite = isfinite(g);
        bool bad = !finite || !(err <= (bound ? bound[i] : atol + rtol * fabs(w)));
        if (!finite)
            c.nonfinite++;
        else {
            err2 += err * err;
            ref2 += w * w;
            if (err > c.max_abs_err)
                c.max_abs_err = err;
        }
        if (bad) {
            if (c.bad == 0) {
                c.first_bad = i;
                c.got_at_first_bad = got[i];
                c.want_at_first_bad = w;
            }
            c.bad++;
        }
    }
    c.rel_l2_err = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
    c.ok = c.bad == 0 && n > 0;
    return c;
}

rl_check rl_compare_f32(const float *got, const double *want, size_t n, double atol, double rtol)
{
    return compare(got, want, NULL, n, atol, rtol);
}

rl_check rl_compare_f32_bound(const float *got, const double *want, const double *bound, size_t n)
{
    return compare(got, want, bound, n, 0, 0);
}

/* Poison (unless the call works in place), run once, download, compare:
 * with a tolerance or a bound. */
static rl_check validate(rl_backend *be, void (*work)(void *), void *arg, float *dev_out, size_t n,
                         const double *want, const double *bound, double atol, double rtol,
                         bool poison)
{
    if (poison)
        rl_poison(be, dev_out, n * sizeof(float));
    work(arg);
    rl_sync(be);
    float *host = rl_host_alloc(n * sizeof(float));
    rl_download(be, host, dev_out, n * sizeof(float));
    rl_check c = compare(host, want, bound, n, atol, rtol);
    rl_host_free(host);
    return c;
}

rl_check rl_validate_f32_bound(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                               size_t n, const double *want, const double *bound)
{
    return validate(be, work, arg, dev_out, n, want, bound, 0, 0, true);
}

rl_check rl_validate_f32(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                         size_t n, const double *want, double atol, double rtol)
{
    return validate(be, work, arg, dev_out, n, want, NULL, atol, rtol, true);
}

rl_check rl_validate_f32_in_place(rl_backend *be, void (*work)(void *), void *arg, float *dev_out,
                                  size_t n, const double *want, const double *bound, double atol,
                                  double rtol)
{
    return validate(be, work, arg, dev_out, n, want, bound, atol, rtol, false);
}

void rl_check_describe(const rl_check *c, char *buf, size_t len)
{
    if (c->ok) {
        snprintf(buf, len, "ok: %zu elements, max abs err %.2g, rel L2 err %.2g", c->n,
                 c->max_abs_err, c->rel_l2_err);
        return;
    }
    if (c->n == 0) {
        snprintf(buf, len, "FAILED: nothing to compare");
        return;
    }
    snprintf(buf, len,
             "FAILED: %zu of %zu elements wrong (%zu NaN/Inf%s), first at index %zu: got %.9g, "
             "want %.9g",
             c->bad, c->n, c->nonfinite, c->nonfinite ? ": unwritten or overflowed" : "",
             c->first_bad, (double)c->got_at_first_bad, c->want_at_first_bad);
}

/*
 * check.cpp -- buffers and the check of each case: the harness's own
 * comparison (rl_compare_f32, as the CUDA suites' rl_validate_f32 uses
 * it), one printed line per case, and the tally main() exits by.
 */
#include "emu.h"

#include "rl_library.h"
#include "rl_measure.h"

#include <cstdarg>
#include <cstdio>

namespace rl_emu {
namespace {

int n_cases, n_failed;

/* A NaN no arithmetic produces: an output the kernel never wrote keeps it. */
const uint32_t UNWRITTEN = 0x7fc0dead;

void line(const char *kernel, const std::string &shape, const std::string &verdict)
{
    printf("  %-28s %-52s %s\n", kernel, shape.c_str(), verdict.c_str());
    fflush(stdout);
}

/* Outputs past n that changed: a write past the end. */
size_t written_past(const float *got, size_t n)
{
    size_t bad = 0;
    for (size_t i = n; i < n + GUARD; i++) {
        uint32_t u;
        memcpy(&u, &got[i], sizeof u);
        bad += u != UNWRITTEN;
    }
    return bad;
}

} // namespace

std::string format(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

void *alloc_bytes(size_t bytes)
{
    void *p = nullptr;
    if (posix_memalign(&p, 256, bytes ? bytes : 1)) {
        fprintf(stderr, "rooflab-emu: out of memory (%zu bytes)\n", bytes);
        abort();
    }
    return p;
}

owned<float> alloc_output(size_t n)
{
    owned<float> y = alloc<float>(n + GUARD);
    for (size_t i = 0; i < n + GUARD; i++)
        memcpy(&y[i], &UNWRITTEN, sizeof y[i]);
    return y;
}

owned<uint16_t> random_halves(size_t n, float lo, float hi, uint64_t seed)
{
    owned<uint16_t> h = alloc<uint16_t>(n);
    rl_fill_uniform_f16(h.get(), n, lo, hi, seed);
    return h;
}

bool check_f32(const char *kernel, const std::string &shape, const float *got, const double *want, size_t n,
               double atol, double rtol, const double *bound)
{
    const rl_check c = bound ? rl_compare_f32_bound(got, want, bound, n) : rl_compare_f32(got, want, n, atol, rtol);
    const size_t past = written_past(got, n);
    n_cases++;
    if (c.ok && !past) {
        line(kernel, shape,
             bound ? format("ok  max err %.2g (within each output's bound)", c.max_abs_err)
                   : format("ok  max err %.2g (atol %.2g, rtol %.2g)", c.max_abs_err, atol, rtol));
        return true;
    }
    n_failed++;
    std::string v = format("FAILED  %zu of %zu outputs wrong (%zu not written)", c.bad, n, c.nonfinite);
    if (c.bad)
        v += format(", the first at %zu: got %.9g, want %.9g", c.first_bad, (double)c.got_at_first_bad,
                    c.want_at_first_bad);
    if (past)
        v += format("; %zu floats written past the output", past);
    line(kernel, shape, v);
    return false;
}

bool check_fails(const char *kernel, const std::string &shape, const float *got, const double *want, size_t n,
                 double atol, double rtol)
{
    const rl_check c = rl_compare_f32(got, want, n, atol, rtol);
    n_cases++;
    if (!c.ok) {
        line(kernel, shape, format("fails, as it must  (%zu of %zu outside the tolerance)", c.bad, n));
        return true;
    }
    n_failed++;
    line(kernel, shape, format("FAILED  passed the check it must fail (max err %.2g)", c.max_abs_err));
    return false;
}

bool check_same(const char *kernel, const std::string &shape, const void *got, const void *want, size_t bytes,
                bool untouched_after)
{
    n_cases++;
    if (!memcmp(got, want, bytes) && untouched_after) {
        line(kernel, shape, format("ok  %zu bytes, bit for bit", bytes));
        return true;
    }
    n_failed++;
    line(kernel, shape, untouched_after ? "FAILED  the bytes differ" : "FAILED  written past the end");
    return false;
}

void fault(const char *kernel, const std::string &shape, const std::string &why)
{
    n_cases++, n_failed++;
    line(kernel, shape, "FAILED  " + why);
}

int cases(void) { return n_cases; }
int failures(void) { return n_failed; }

} // namespace rl_emu

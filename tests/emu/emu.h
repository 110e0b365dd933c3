/*
 * emu.h -- what a driver of tests/emu/ uses: launch a kernel on the
 * emulated machine, buffers, and the check of one case against the CPU
 * reference (one printed line each).
 */
#ifndef TESTS_EMU_EMU_H
#define TESTS_EMU_EMU_H

#include "cuda_shim.h"

#include <functional>
#include <memory>
#include <string>

namespace rl_emu {

/* A kernel's dynamic shared memory: its `extern __shared__` array as the
 * calling worker thread sees it (the array is thread_local), and its size. */
struct arena {
    void *base;
    size_t capacity;
};

struct launch_shape {
    dim3 grid, block;
    size_t shared_bytes;  /* dynamic, as the launch's third argument */
    arena (*shared)(void); /* the kernel's array; NULL when it has none */
};

/* Runs kernel() as every thread of every block of the grid, as its
 * launcher would launch it. False, and why, on a fault the machine models:
 * a warp-wide operation some lanes do not reach, a barrier some threads
 * do not reach (a deadlock), a misaligned or out-of-bounds shared access,
 * copies never waited for. */
bool launch(const launch_shape &s, const std::function<void()> &kernel, std::string &why);

/* The worker threads that run blocks side by side (RL_EMU_THREADS, default 2). */
int workers(void);

/* ---- buffers --------------------------------------------------------------------------- */

struct freer {
    void operator()(void *p) const { free(p); }
};
template <class T> using owned = std::unique_ptr<T[], freer>;

/* n elements, 256-byte aligned, exactly n: an address sanitizer sees the end. */
void *alloc_bytes(size_t bytes);
template <class T> owned<T> alloc(size_t n) { return owned<T>(static_cast<T *>(alloc_bytes(n * sizeof(T)))); }
/* n floats of output and GUARD more, all NaN: an element never written
 * fails its check, and a write past the n is seen (check_f32). */
enum { GUARD = 64 };
owned<float> alloc_output(size_t n);
/* n halves, uniform in [lo, hi] (the suites' rl_fill_uniform_f16). */
owned<uint16_t> random_halves(size_t n, float lo, float hi, uint64_t seed);

/* ---- checks: one line per case ------------------------------------------------------------ */

/* got (n, from alloc_output) against want: |got - want| <= atol + rtol
 * |want|, or <= bound[i] where bound is given; nothing written past n.
 * Prints the line "kernel  shape  ok/FAILED  max err ..." and counts it. */
bool check_f32(const char *kernel, const std::string &shape, const float *got, const double *want, size_t n,
               double atol, double rtol, const double *bound = nullptr);
/* A case that must fail its check (a kernel given wrong inputs): proves
 * the tolerance has teeth here too. */
bool check_fails(const char *kernel, const std::string &shape, const float *got, const double *want,
                 size_t n, double atol, double rtol);
/* A launch that faulted: its line, counted as a failure. */
void fault(const char *kernel, const std::string &shape, const std::string &why);
/* A check of bits (a copy's landing): its line. */
bool check_same(const char *kernel, const std::string &shape, const void *got, const void *want, size_t bytes,
                bool untouched_after);

int cases(void);
int failures(void);

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace rl_emu

/* The families (one driver each): each runs its cases, printing a line per case. */
void emu_attention(void);
void emu_gemv(void);
void emu_dp4a(void);
void emu_mma(void);
void emu_moe(void);
void emu_spill(void);
void emu_layer(void);
void emu_layer_backward(void);

#endif

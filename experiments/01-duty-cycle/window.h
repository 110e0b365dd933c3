/*
 * window.h -- what a busy reading needs to be trusted: the least hold
 * (observed seconds) of each point a claim reads, and the gate that turns
 * a claim read over shorter holds into "not measured" (never "does not
 * hold"). Plain data and one pure function, so that tests/test_exp01.c
 * can judge stand-in holds without timing anything.
 */
#ifndef EXP01_WINDOW_H
#define EXP01_WINDOW_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

/* A claim's least hold on each backend (0: no reading, any hold will do)
 * and why it needs that much. */
typedef struct exp01_window {
    double gpu_s, cpu_s;
    const char *why;
} exp01_window;

/* The reasons, shared by the claims that read the same tool. A hold is
 * read as HOLD_WINDOWS windows: on a GPU each window must span more than
 * NVML's own sample period (up to a sixth of a second), else a window
 * reads whichever sample it caught; on the CPU the kernel charges busy
 * time a scheduler tick at a time, and a thread's start falls inside the
 * window, so a window of a few ticks reads low. The least hold of each is
 * a quick run's, the shortest hold the experiment was written for. */
#define EXP01_BUSY_WINDOW                                                                          \
    1.0, 0.4, "a busy reading is charged a tick (CPU) or an NVML sample period (GPU) at a time; "  \
              "a shorter hold reads low"
#define EXP01_NO_WINDOW 0, 0, "work is counted by the workers, not sampled"

/* The least hold the claim needs here. */
static inline double exp01_window_s(const exp01_window *w, bool gpu)
{
    return gpu ? w->gpu_s : w->cpu_s;
}

/* True when the shortest hold among a claim's points (held_s; NaN: no
 * point held) is long enough to judge it. Else false, and why names the
 * hold it had, which point had it, and the hold it needs. */
static inline bool exp01_window_ok(const exp01_window *w, bool gpu, double held_s,
                                   const char *which, char *why, size_t len)
{
    double need = exp01_window_s(w, gpu);
    /* A window ends at the first burst past its seconds, so a hold is never
     * short of what was asked; the 1 % spares a clock's rounding only. */
    if (isnan(held_s) || !(need > 0) || held_s >= 0.99 * need)
        return true;
    snprintf(why, len, "%s held %.2f s, the claim needs %.2f s (%s)", which, held_s,
             need, w->why);
    return false;
}

#endif

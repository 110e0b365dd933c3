/*
 * rl_probes.h -- what watches a run from outside: duty cycles computed
 * from timestamps, the operating system's busy time, and NVML's readings
 * (utilization.gpu, memory, clocks, GPM), and the observer that reads a
 * window the way a monitoring tool would. Experiments 01 and 06 use them.
 */
#ifndef RL_PROBES_H
#define RL_PROBES_H

#include "rooflab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================
 * Duty cycles, OS busy time and the NVML sampler
 * ====================================================================== */

/* ---- Duty cycles from timestamps (duty.c): pure, exact arithmetic -------- */
typedef struct rl_interval {
    double start, end; /* seconds on one clock; end >= start */
} rl_interval;

/* The fraction of the window [t0, t1] covered by at least one interval:
 * NVML's definition of utilization.gpu ("percent of time during which one
 * or more kernels was executing"), computed from our own timestamps.
 * Intervals may come in any order, overlap, nest, or stick out of the
 * window (only the part inside counts). NaN when t1 <= t0. */
double rl_busy_fraction(const rl_interval *busy, size_t n, double t0, double t1);

/* Cuts [t0, t1] into consecutive windows of length period starting at t0
 * (a last window shorter than period is dropped) and writes each window's
 * busy fraction to out, at most max of them. Returns the number written. */
int rl_busy_windows(const rl_interval *busy, size_t n, double t0, double t1, double period,
                    double *out, int max);

/* The duty cycle of n bursts timed as two arrays, start[i] to end[i] in
 * seconds from the window's start, over the window [0, window_s], in
 * percent as a monitoring tool prints it: over the whole window, and the
 * least and the most over its sub-windows of sub_s (rl_busy_windows; NaN
 * when none fits). */
typedef struct rl_duty {
    double pct, min_pct, max_pct;
} rl_duty;
rl_duty rl_duty_of(const double *start, const double *end, size_t n, double window_s, double sub_s);

/* ---- Operating-system busy time (osbusy.c): the CPU's duty cycle --------- */
/* utime + stime, in clock ticks, from one line of /proc/<pid>/stat or
 * /proc/<pid>/task/<tid>/stat (fields 14 and 15; the command name in
 * parentheses may hold spaces and parentheses). False on a malformed line. */
bool rl_proc_stat_ticks(const char *line, unsigned long long *ticks);
/* CPU seconds the kernel has charged to a thread of this process (tid from
 * gettid()), or to the whole process (tid 0), as top and ps read them.
 * NaN when unreadable. */
double rl_cpu_busy_s(int tid);
double rl_process_rss_bytes(void); /* VmRSS: resident memory of this process */
/* Sleeps until rl_now_s() reaches t (absolute, on CLOCK_MONOTONIC). */
void rl_sleep_until(double t);
/* Records the load average at the start and end of a run in the CSV header
 * (key host_load); on the CPU backend, when other processes competed for
 * the CPUs, a console line: prefix, "load average L on N CPUs: ", then
 * what that did to the measurement (effect). */
void rl_note_host_load(rl_ctx *ctx, double load_start, const char *prefix, const char *effect);

/* ---- NVML (nvml.c, nvml_sampler.c) -------------------------------------- */
/* Loads NVML with dlopen (soname NULL: libnvidia-ml.so.1). False, and why
 * ("NVML not available (...)", "NVML too old: no ..."), when it cannot;
 * never a crash. Idempotent once it has succeeded. */
bool rl_nvml_load(const char *soname, char *why, size_t len);

/* What NVML said about the device over one window of time. NaN (empty in
 * the CSV) for what it could not say; note says why. */
typedef struct rl_nvml_window {
    double util_gpu_pct;   /* utilization.gpu: mean of the samples in the window */
    double util_mem_pct;   /* utilization.memory: the same for memory traffic */
    int util_samples;
    const char *util_source; /* "nvmlDeviceGetSamples" or "nvmlDeviceGetUtilizationRates" */
    double mem_used_bytes, mem_total_bytes; /* memory.used (largest seen) and memory.total */
    double sm_clock_mhz;   /* mean of the polls */
    bool gpm;              /* GPM metrics below were read over the window */
    double gpm_sm_util_pct, gpm_sm_occupancy_pct, gpm_any_tensor_util_pct, gpm_dram_bw_util_pct;
    char gpm_status[96];   /* "ok", or "not supported (...)" */
    char note[160];
} rl_nvml_window;

typedef struct rl_nvml_sampler rl_nvml_sampler;

/* Starts a thread that polls NVML for the device with this PCI bus id
 * every poll_s seconds: utilization samples (nvmlDeviceGetSamples with
 * their own timestamps, or nvmlDeviceGetUtilizationRates where samples are
 * not supported), memory.used/total, the SM clock, and GPM counters where
 * the device has them (Hopper and later). NULL, and why, when NVML is not
 * available. */
rl_nvml_sampler *rl_nvml_sampler_start(const char *pci_bus_id, double poll_s, char *why,
                                       size_t len);
/* NVML's readings over [t0, t1] (rl_now_s() times; t1 in the recent past,
 * within the last ~20 s for GPM). */
void rl_nvml_sampler_window(rl_nvml_sampler *s, double t0, double t1, rl_nvml_window *out);
/* One line for the CSV header: sources, NVML's sample period, GPM support. */
void rl_nvml_sampler_describe(rl_nvml_sampler *s, char *buf, size_t len);
void rl_nvml_sampler_stop(rl_nvml_sampler *s);

/* ---- A monitoring tool's reading of a window (observer.c) ---------------- */
enum { RL_OBSERVER_MAX_THREADS = 256 };

/* What the tool said about one window of time; NaN where it says nothing. */
typedef struct rl_reading {
    double util_pct;        /* CUDA: utilization.gpu. CPU: the workers' busy time (top -H) */
    double util_mem_pct;    /* CUDA: utilization.memory. CPU: none */
    double units_busy_pct;  /* CUDA: GPM SM_UTIL. CPU: process CPU time / (cores x wall) */
    double occupancy_pct, tensor_pct, dram_bw_pct; /* GPM, CUDA only */
    double mem_used, mem_total; /* CUDA: memory.used/total. CPU: resident set, RAM */
    double sm_clock_mhz;
    int util_samples;
    char util_source[64], gpm_status[96], note[256];
} rl_reading;

/* NVML (its sampler thread) on CUDA; on the CPU the kernel's busy time per
 * worker thread and for the process, read at the window's edges. */
typedef struct rl_observer {
    rl_ctx *ctx;
    rl_nvml_sampler *nvml;
    char nvml_why[256];
    int ntids;
    double t[2], proc[2];   /* at the window's two edges */
    double thread_busy[2][RL_OBSERVER_MAX_THREADS];
    double rss;
} rl_observer;

/* The CSV columns of a reading that is the member `reading` of an
 * experiment's point data of type `type`, in this order. */
#define RL_READING_COLUMNS(type, reading)                                              \
    RL_DOUBLE("util_pct", NULL, NULL, type, reading.util_pct),                         \
    RL_DOUBLE("util_mem_pct", NULL, NULL, type, reading.util_mem_pct),                 \
    RL_INT("util_samples", NULL, NULL, type, reading.util_samples),                    \
    RL_CHARS("util_source", NULL, NULL, type, reading.util_source),                    \
    RL_DOUBLE("units_busy_pct", NULL, NULL, type, reading.units_busy_pct),             \
    RL_DOUBLE("gpm_sm_occupancy_pct", NULL, NULL, type, reading.occupancy_pct),        \
    RL_DOUBLE("gpm_any_tensor_util_pct", NULL, NULL, type, reading.tensor_pct),        \
    RL_DOUBLE("gpm_dram_bw_util_pct", NULL, NULL, type, reading.dram_bw_pct),          \
    RL_CHARS("gpm_status", NULL, NULL, type, reading.gpm_status),                      \
    RL_DOUBLE("mem_used_bytes", NULL, NULL, type, reading.mem_used),                   \
    RL_DOUBLE("mem_total_bytes", NULL, NULL, type, reading.mem_total),                 \
    RL_DOUBLE("sm_clock_mhz", NULL, NULL, type, reading.sm_clock_mhz),                 \
    RL_CHARS("note", NULL, NULL, type, reading.note)

/* pci_bus_id: the GPU's on the CUDA backend (ctx->dev->pci_bus_id), NULL on the CPU. */
void rl_observer_open(rl_observer *o, rl_ctx *ctx, const char *pci_bus_id);
/* The edge callback of a CPU run: which 0 at the window's start, 1 at its
 * end, with the worker threads' ids. Nothing on CUDA. */
void rl_observer_edge(void *arg, int which, const int *tids, int ntids);
/* The reading over [t0, t1] (rl_now_s() times; NVML only). */
void rl_observer_read(rl_observer *o, double t0, double t1, rl_reading *out);
void rl_observer_describe(const rl_observer *o, char *buf, size_t len);
void rl_observer_close(rl_observer *o);

#ifdef __cplusplus
}
#endif
#endif /* RL_PROBES_H */

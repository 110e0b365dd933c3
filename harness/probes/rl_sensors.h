/*
 * rl_sensors.h -- the sensors beneath the probes: busy intervals and
 * their fractions of a window (duty.c), the kernel's CPU time and resident
 * memory of this process from /proc (osbusy.c), and NVML loaded at run
 * time and sampled by a thread (nvml.c, nvml_sampler.c). The observer
 * and the duty cycles of rl_probes.h read them for an experiment, which
 * never includes this room; the probes, gpu_facts.c and their tests do.
 */
#ifndef RL_SENSORS_H
#define RL_SENSORS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* RL_SENSORS_H */

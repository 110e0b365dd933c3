/*
 * rl_probes.h -- what watches a run from outside, as experiments 01 and
 * 06 use it: duty cycles computed from timestamps, the host's load in the
 * CSV header, and the observer that reads a window the way a monitoring
 * tool would (NVML's utilization.gpu, memory, clocks and GPM on a GPU,
 * the OS's busy time on the CPU). The sensors it reads are in
 * rl_sensors.h.
 */
#ifndef RL_PROBES_H
#define RL_PROBES_H

#include "rooflab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an experiment calls: the duty cycle of its bursts, the host's load
 * in the CSV header, and an observer that reads a window as a monitoring
 * tool does. The sensors beneath them (intervals, /proc, NVML) are a room
 * of their own, probes/rl_sensors.h. */

/* ---- Duty cycles from timestamps (duty.c) ------------------------------- */
/* The duty cycle of n bursts timed as two arrays, start[i] to end[i] in
 * seconds from the window's start, over the window [0, window_s], in
 * percent as a monitoring tool prints it: over the whole window, and the
 * least and the most over its sub-windows of sub_s (rl_busy_windows; NaN
 * when none fits). */
typedef struct rl_duty {
    double pct, min_pct, max_pct;
} rl_duty;
rl_duty rl_duty_of(const double *start, const double *end, size_t n, double window_s, double sub_s);

/* ---- The host's load (osbusy.c) ----------------------------------------- */
/* Records the load average at the start and end of a run in the CSV header
 * (key host_load); on the CPU backend, when other processes competed for
 * the CPUs, a console line: prefix, "load average L on N CPUs: ", then
 * what that did to the measurement (effect). */
void rl_note_host_load(rl_ctx *ctx, double load_start, const char *prefix, const char *effect);

/* NVML's sampler, which an observer holds (probes/rl_sensors.h). */
typedef struct rl_nvml_sampler rl_nvml_sampler;

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

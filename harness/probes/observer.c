/*
 * observer.c -- a monitoring tool's reading of one window of time, as a
 * user would take it: NVML on the GPU (through the sampler thread of
 * nvml_sampler.c), and on the CPU the kernel's busy time per thread (what
 * top -H shows) and for the whole process, read at the window's two edges.
 * Experiment 01 puts these readings on trial against the work done.
 */
#include "rl_probes.h"
#include "rl_sensors.h"

#include <math.h>
#include <stdio.h>

void rl_observer_open(rl_observer *o, rl_ctx *ctx, const char *pci_bus_id)
{
    *o = (rl_observer){.ctx = ctx};
    if (ctx->kind == RL_CUDA)
        o->nvml = rl_nvml_sampler_start(pci_bus_id, 0.05, o->nvml_why, sizeof o->nvml_why);
}

void rl_observer_edge(void *arg, int which, const int *tids, int ntids)
{
    rl_observer *o = arg;
    if (o->ctx->kind == RL_CUDA)
        return; /* NVML's thread samples on its own */
    o->ntids = ntids < RL_OBSERVER_MAX_THREADS ? ntids : RL_OBSERVER_MAX_THREADS;
    for (int i = 0; i < o->ntids; i++)
        o->thread_busy[which][i] = rl_cpu_busy_s(tids[i]);
    o->proc[which] = rl_cpu_busy_s(0);
    o->t[which] = rl_now_s();
    if (which == 1)
        o->rss = rl_process_rss_bytes();
}

static void read_nvml(rl_observer *o, double t0, double t1, rl_reading *out)
{
    if (!o->nvml) {
        snprintf(out->util_source, sizeof out->util_source, "not available");
        snprintf(out->gpm_status, sizeof out->gpm_status, "not available");
        snprintf(out->note, sizeof out->note, "%s", o->nvml_why);
        return;
    }
    rl_nvml_window nw;
    rl_nvml_sampler_window(o->nvml, t0, t1, &nw);
    out->util_pct = nw.util_gpu_pct;
    out->util_mem_pct = nw.util_mem_pct;
    out->util_samples = nw.util_samples;
    out->units_busy_pct = nw.gpm_sm_util_pct;
    out->occupancy_pct = nw.gpm_sm_occupancy_pct;
    out->tensor_pct = nw.gpm_any_tensor_util_pct;
    out->dram_bw_pct = nw.gpm_dram_bw_util_pct;
    out->mem_used = nw.mem_used_bytes;
    out->mem_total = nw.mem_total_bytes;
    out->sm_clock_mhz = nw.sm_clock_mhz;
    snprintf(out->util_source, sizeof out->util_source, "%s", nw.util_source);
    snprintf(out->gpm_status, sizeof out->gpm_status, "%s", nw.gpm_status);
    snprintf(out->note, sizeof out->note, "%s", nw.note);
}

void rl_observer_read(rl_observer *o, double t0, double t1, rl_reading *out)
{
    *out = (rl_reading){.util_pct = NAN, .util_mem_pct = NAN, .units_busy_pct = NAN,
                        .occupancy_pct = NAN, .tensor_pct = NAN, .dram_bw_pct = NAN,
                        .mem_used = NAN, .mem_total = NAN, .sm_clock_mhz = NAN};
    if (o->ctx->kind == RL_CUDA) {
        read_nvml(o, t0, t1, out);
        return;
    }
    double wall = o->t[1] - o->t[0], busy = 0;
    for (int i = 0; i < o->ntids; i++)
        busy += o->thread_busy[1][i] - o->thread_busy[0][i];
    out->util_pct = o->ntids ? 100 * busy / o->ntids / wall : NAN;
    out->units_busy_pct = 100 * (o->proc[1] - o->proc[0]) / (o->ctx->dev->threads * wall);
    out->mem_used = o->rss;
    out->mem_total = rl_host_ram_bytes();
    out->util_samples = 2;
    snprintf(out->util_source, sizeof out->util_source, "/proc/self/task/<tid>/stat");
    snprintf(out->gpm_status, sizeof out->gpm_status, "n/a (CPU backend)");
}

void rl_observer_describe(const rl_observer *o, char *buf, size_t len)
{
    if (o->ctx->kind != RL_CUDA)
        snprintf(buf, len, "CPU: each worker thread's utime + stime from /proc/self/task/<tid>/stat "
                 "(what top -H shows), the process's from /proc/self/stat, read at the window's "
                 "two ends; resident memory from /proc/self/statm");
    else if (o->nvml)
        rl_nvml_sampler_describe(o->nvml, buf, len);
    else
        snprintf(buf, len, "%s", o->nvml_why);
}

void rl_observer_close(rl_observer *o)
{
    rl_nvml_sampler_stop(o->nvml);
    o->nvml = NULL;
}

/*
 * nvml_sampler.c -- what nvidia-smi would say, sampled beside a running load.
 *
 * A thread polls NVML every poll_s seconds and keeps time series:
 *   - utilization.gpu and utilization.memory. Preferably from
 *     nvmlDeviceGetSamples, which returns the driver's own samples with
 *     their timestamps (one per NVML sample period, 1/6 s to 1 s by
 *     product). Its buffer runs dry while the GPU idles, and not every
 *     device supports it, so nvmlDeviceGetUtilizationRates is polled too,
 *     stamped with the poll's time, and a window without driver samples
 *     uses those. The samples' clock is documented only as "CPU timestamp
 *     in microseconds" (wall clock in practice; some report time since
 *     boot): the first fresh sample decides which clock it is.
 *   - memory.used and memory.total (nvmlDeviceGetMemoryInfo), SM clock.
 *   - GPM counters (Hopper and later): a raw sample every >= 150 ms into a
 *     ring; a window's metrics come from the first sample inside it and the
 *     last (nvmlGpmMetricsGet needs two samples >= 100 ms apart).
 * A window [t0, t1] on the monotonic clock averages what fell inside it.
 * Nothing here stops a run: NVML failures become notes and empty cells.
 */
#include "internal.h"
#include "rl_probes.h"
#include "rl_sensors.h"
#include "nvml_abi.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { GPM_RING = 160, SAMPLE_BUF = 256 };
static const double GPM_MIN_GAP_S = 0.15; /* NVML asks for > 100 ms */

typedef struct series {
    double *t, *v;
    size_t n, cap;
} series;

typedef struct gpm_slot {
    double t; /* when it was read; 0 while empty */
    nvmlGpmSample_t sample;
} gpm_slot;

struct rl_nvml_sampler {
    nvmlDevice_t dev;
    double poll_s;
    pthread_t thread;
    pthread_mutex_t lock;
    bool stop, started;
    /* utilization */
    bool use_samples;       /* nvmlDeviceGetSamples works on this device */
    bool drained[2];        /* the samples from before we started were skipped */
    int stamp_clock;        /* which clock the samples' stamps are on: CLOCK_*, or -1 */
    bool stamps_on_poll;    /* on none we know: stamped with the poll's time */
    unsigned long long last_seen[2];
    series util[2];         /* driver samples: [0] gpu, [1] memory, in percent */
    series rates[2];        /* nvmlDeviceGetUtilizationRates, stamped when polled */
    /* memory and clock, one point per poll */
    series mem_used, sm_clock;
    double mem_total;
    /* GPM */
    bool gpm;
    char gpm_status[96];
    gpm_slot ring[GPM_RING];
    int ring_next;
    double last_gpm_t;
    char note[160];
};

static void push(series *s, double t, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        double *nt = realloc(s->t, cap * sizeof *nt), *nv = realloc(s->v, cap * sizeof *nv);
        if (!nt || !nv)
            rl_die(RL_EXIT_FAILED, "out of memory for NVML samples");
        s->t = nt, s->v = nv, s->cap = cap;
    }
    s->t[s->n] = t;
    s->v[s->n++] = v;
}

static void series_free(series *s)
{
    free(s->t);
    free(s->v);
}

/* Mean (or max) of the values with t0 <= t <= t1; NaN when none. */
static double window_stat(const series *s, double t0, double t1, bool max, int *count)
{
    double acc = max ? -INFINITY : 0;
    int n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i] >= t0 && s->t[i] <= t1) {
            acc = max ? fmax(acc, s->v[i]) : acc + s->v[i];
            n++;
        }
    if (count)
        *count = n;
    return n == 0 ? NAN : max ? acc : acc / n;
}

static double value_of(nvmlValueType_t type, nvmlValue_t v)
{
    switch (type) {
    case NVML_VALUE_TYPE_DOUBLE: return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return v.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return (double)v.ulVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return (double)v.ullVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return (double)v.sllVal;
    case NVML_VALUE_TYPE_SIGNED_INT: return v.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT: return v.usVal;
    default: return NAN;
    }
}

/* Seconds to subtract from a stamp on clock c to land on CLOCK_MONOTONIC. */
static double clock_offset(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - rl_now_s();
}

/* The clock whose reading puts the newest fresh stamp just before now (a
 * sample is stamped when the driver computed it, at most a poll ago). */
static void decide_stamp_clock(rl_nvml_sampler *s, unsigned long long newest, double now)
{
    static const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_MONOTONIC};
    for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        double lag = now - ((double)newest * 1e-6 - clock_offset(clocks[i]));
        if (lag > -0.05 && lag < 5.0) {
            s->stamp_clock = (int)clocks[i];
            return;
        }
    }
    s->stamps_on_poll = true;
    snprintf(s->note, sizeof s->note, "NVML sample stamps on no known clock: stamped when polled");
}

/* New driver samples of one kind. False when the call is not supported. */
static bool poll_samples(rl_nvml_sampler *s, int which, double now)
{
    nvmlSamplingType_t type = which == 0 ? NVML_GPU_UTILIZATION_SAMPLES : NVML_MEMORY_UTILIZATION_SAMPLES;
    nvmlSample_t buf[SAMPLE_BUF];
    nvmlValueType_t vt;
    unsigned count = SAMPLE_BUF;
    nvmlReturn_t rc = rl_nv.samples(s->dev, type, s->last_seen[which], &vt, &count, buf);
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && count == 0)) {
        s->drained[which] = true; /* nothing new: the GPU may be idle */
        return true;
    }
    if (rc != NVML_SUCCESS) {
        snprintf(s->note, sizeof s->note, "nvmlDeviceGetSamples: %s", rl_nv.error_string(rc));
        return false;
    }
    unsigned long long newest = s->last_seen[which];
    for (unsigned i = 0; i < count; i++)
        if (buf[i].timeStamp > newest)
            newest = buf[i].timeStamp;
    bool first = !s->drained[which];
    s->drained[which] = true;
    if (!first && s->stamp_clock < 0 && !s->stamps_on_poll)
        decide_stamp_clock(s, newest, now);
    if (!first) { /* the first batch holds history from before we started */
        double offset = s->stamps_on_poll ? 0 : clock_offset((clockid_t)s->stamp_clock);
        for (unsigned i = 0; i < count; i++)
            if (buf[i].timeStamp > s->last_seen[which])
                push(&s->util[which], s->stamps_on_poll ? now : (double)buf[i].timeStamp * 1e-6 - offset,
                     value_of(vt, buf[i].sampleValue));
    }
    s->last_seen[which] = newest;
    return true;
}

static void poll_gpm(rl_nvml_sampler *s, double now)
{
    if (!s->gpm || now - s->last_gpm_t < GPM_MIN_GAP_S)
        return;
    gpm_slot *slot = &s->ring[s->ring_next];
    nvmlReturn_t rc = rl_nv.gpm_sample_get(s->dev, slot->sample);
    if (rc != NVML_SUCCESS) {
        snprintf(s->gpm_status, sizeof s->gpm_status, "not supported (nvmlGpmSampleGet: %s)",
                 rl_nv.error_string(rc));
        s->gpm = false;
        return;
    }
    slot->t = now;
    s->last_gpm_t = now;
    s->ring_next = (s->ring_next + 1) % GPM_RING;
}

/* One poll of everything; called with the lock held. */
static void poll_once(rl_nvml_sampler *s)
{
    double now = rl_now_s();
    if (s->use_samples && !(poll_samples(s, 0, now) && poll_samples(s, 1, now)))
        s->use_samples = false;
    nvmlUtilization_t u;
    nvmlReturn_t rc = rl_nv.utilization(s->dev, &u);
    if (rc == NVML_SUCCESS) {
        push(&s->rates[0], now, u.gpu);
        push(&s->rates[1], now, u.memory);
    } else {
        snprintf(s->note, sizeof s->note, "nvmlDeviceGetUtilizationRates: %s", rl_nv.error_string(rc));
    }
    nvmlMemory_t m;
    if (rl_nv.memory(s->dev, &m) == NVML_SUCCESS) {
        push(&s->mem_used, now, (double)m.used);
        s->mem_total = (double)m.total;
    }
    unsigned mhz;
    if (rl_nv.clock(s->dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS)
        push(&s->sm_clock, now, mhz);
    poll_gpm(s, now);
}

static void *sampler_thread(void *arg)
{
    rl_nvml_sampler *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        bool stop = s->stop;
        if (!stop)
            poll_once(s);
        pthread_mutex_unlock(&s->lock);
        if (stop)
            return NULL;
        rl_sleep_until(rl_now_s() + s->poll_s);
    }
}

static void gpm_open(rl_nvml_sampler *s)
{
    if (!rl_nv.gpm_query_support) {
        snprintf(s->gpm_status, sizeof s->gpm_status, "not supported (driver has no GPM API)");
        return;
    }
    nvmlGpmSupport_t sup = {.version = NVML_GPM_SUPPORT_VERSION};
    nvmlReturn_t rc = rl_nv.gpm_query_support(s->dev, &sup);
    if (rc != NVML_SUCCESS || !sup.isSupportedDevice) {
        snprintf(s->gpm_status, sizeof s->gpm_status, "not supported (%s)",
                 rc != NVML_SUCCESS ? rl_nv.error_string(rc) : "this device has no GPM");
        return;
    }
    for (int i = 0; i < GPM_RING; i++) {
        rc = rl_nv.gpm_sample_alloc(&s->ring[i].sample);
        if (rc != NVML_SUCCESS) {
            snprintf(s->gpm_status, sizeof s->gpm_status, "not supported (nvmlGpmSampleAlloc: %s)",
                     rl_nv.error_string(rc));
            return;
        }
    }
    s->gpm = true;
    snprintf(s->gpm_status, sizeof s->gpm_status, "ok");
}

rl_nvml_sampler *rl_nvml_sampler_start(const char *pci_bus_id, double poll_s, char *why, size_t len)
{
    if (!rl_nvml_load(NULL, why, len))
        return NULL;
    nvmlReturn_t rc = rl_nv.init();
    if (rc != NVML_SUCCESS) {
        snprintf(why, len, "NVML: nvmlInit_v2 failed: %s", rl_nv.error_string(rc));
        return NULL;
    }
    rl_nvml_sampler *s = calloc(1, sizeof *s);
    if (!s)
        rl_die(RL_EXIT_FAILED, "out of memory");
    rc = rl_nv.by_pci(pci_bus_id, &s->dev);
    if (rc != NVML_SUCCESS) {
        snprintf(why, len, "NVML: no device at PCI %s: %s", pci_bus_id, rl_nv.error_string(rc));
        rl_nv.shutdown();
        free(s);
        return NULL;
    }
    s->poll_s = poll_s > 0 ? poll_s : 0.05;
    s->use_samples = true;
    s->stamp_clock = -1;
    gpm_open(s);
    pthread_mutex_init(&s->lock, NULL);
    poll_once(s); /* the first call also drains the driver's older samples */
    if (pthread_create(&s->thread, NULL, sampler_thread, s) != 0) {
        snprintf(why, len, "cannot start the NVML sampler thread");
        rl_nvml_sampler_stop(s);
        return NULL;
    }
    s->started = true;
    return s;
}

/* GPM metrics between the first ring sample at or after t0 and the last at
 * or before t1. Called with the lock held. */
static void gpm_window(rl_nvml_sampler *s, double t0, double t1, rl_nvml_window *out)
{
    const gpm_slot *first = NULL, *last = NULL;
    for (int i = 0; i < GPM_RING; i++) {
        const gpm_slot *g = &s->ring[i];
        if (g->t <= 0 || g->t < t0 || g->t > t1)
            continue;
        if (!first || g->t < first->t)
            first = g;
        if (!last || g->t > last->t)
            last = g;
    }
    if (!first || !last || last->t - first->t < 0.1) {
        snprintf(out->gpm_status, sizeof out->gpm_status, "window too short for two GPM samples");
        return;
    }
    static const unsigned ids[] = {NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY,
                                   NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_DRAM_BW_UTIL};
    double *dst[] = {&out->gpm_sm_util_pct, &out->gpm_sm_occupancy_pct,
                     &out->gpm_any_tensor_util_pct, &out->gpm_dram_bw_util_pct};
    nvmlGpmMetricsGet_t *mg = calloc(1, sizeof *mg); /* ~13 KB: not on the stack */
    if (!mg)
        rl_die(RL_EXIT_FAILED, "out of memory");
    mg->version = NVML_GPM_METRICS_GET_VERSION;
    mg->numMetrics = 4;
    mg->sample1 = first->sample;
    mg->sample2 = last->sample;
    for (int i = 0; i < 4; i++)
        mg->metrics[i].metricId = ids[i];
    nvmlReturn_t rc = rl_nv.gpm_metrics_get(mg);
    if (rc != NVML_SUCCESS) {
        snprintf(out->gpm_status, sizeof out->gpm_status, "nvmlGpmMetricsGet: %s",
                 rl_nv.error_string(rc));
    } else {
        out->gpm = true;
        snprintf(out->gpm_status, sizeof out->gpm_status, "ok");
        for (int i = 0; i < 4; i++) {
            if (mg->metrics[i].nvmlReturn == NVML_SUCCESS)
                *dst[i] = mg->metrics[i].value;
            else
                snprintf(out->gpm_status, sizeof out->gpm_status, "metric %u: %s", ids[i],
                         rl_nv.error_string(mg->metrics[i].nvmlReturn));
        }
    }
    free(mg);
}

void rl_nvml_sampler_window(rl_nvml_sampler *s, double t0, double t1, rl_nvml_window *out)
{
    *out = (rl_nvml_window){.util_gpu_pct = NAN, .util_mem_pct = NAN, .mem_used_bytes = NAN,
                            .mem_total_bytes = NAN, .sm_clock_mhz = NAN, .gpm_sm_util_pct = NAN,
                            .gpm_sm_occupancy_pct = NAN, .gpm_any_tensor_util_pct = NAN,
                            .gpm_dram_bw_util_pct = NAN};
    pthread_mutex_lock(&s->lock);
    poll_once(s); /* samples stamped up to now, which is after t1 */
    /* The driver's own samples where the window has some; else the polls. */
    int gpu_n = 0, mem_n = 0;
    out->util_gpu_pct = window_stat(&s->util[0], t0, t1, false, &gpu_n);
    out->util_mem_pct = window_stat(&s->util[1], t0, t1, false, &mem_n);
    out->util_source = gpu_n > 0 ? "nvmlDeviceGetSamples" : "nvmlDeviceGetUtilizationRates";
    if (gpu_n == 0)
        out->util_gpu_pct = window_stat(&s->rates[0], t0, t1, false, &gpu_n);
    if (mem_n == 0)
        out->util_mem_pct = window_stat(&s->rates[1], t0, t1, false, NULL);
    out->util_samples = gpu_n;
    out->mem_used_bytes = window_stat(&s->mem_used, t0, t1, true, NULL);
    out->mem_total_bytes = s->mem_total > 0 ? s->mem_total : NAN;
    out->sm_clock_mhz = window_stat(&s->sm_clock, t0, t1, false, NULL);
    snprintf(out->note, sizeof out->note, "%s", s->note);
    if (out->util_samples == 0 && !out->note[0])
        snprintf(out->note, sizeof out->note, "no NVML utilization sample inside the window");
    if (s->gpm)
        gpm_window(s, t0, t1, out);
    else
        snprintf(out->gpm_status, sizeof out->gpm_status, "%s", s->gpm_status);
    pthread_mutex_unlock(&s->lock);
}

/* The median gap between the driver's utilization samples. */
static double sample_period_s(const series *u)
{
    if (u->n < 3)
        return NAN;
    double *gaps = malloc((u->n - 1) * sizeof *gaps);
    if (!gaps)
        return NAN;
    int n = 0;
    for (size_t i = 1; i < u->n; i++)
        if (u->t[i] > u->t[i - 1])
            gaps[n++] = u->t[i] - u->t[i - 1];
    double period = n ? rl_stats_of(gaps, n).median : NAN;
    free(gaps);
    return period;
}

void rl_nvml_sampler_describe(rl_nvml_sampler *s, char *buf, size_t len)
{
    pthread_mutex_lock(&s->lock);
    double period = s->use_samples && !s->stamps_on_poll ? sample_period_s(&s->util[0]) : NAN;
    char p[64] = "";
    if (isfinite(period))
        snprintf(p, sizeof p, ", one sample every %.0f ms", period * 1e3);
    snprintf(buf, len, "utilization from %s%s; memory and SM clock polled every %.0f ms; GPM: %s%s%s",
             s->use_samples ? "nvmlDeviceGetSamples (the driver's timestamps; "
                              "nvmlDeviceGetUtilizationRates where a window has none)"
                            : "nvmlDeviceGetUtilizationRates (stamped when polled)",
             p, s->poll_s * 1e3, s->gpm ? "SM_UTIL, SM_OCCUPANCY, ANY_TENSOR_UTIL, DRAM_BW_UTIL"
                                        : s->gpm_status,
             s->note[0] ? "; " : "", s->note);
    pthread_mutex_unlock(&s->lock);
}

void rl_nvml_sampler_stop(rl_nvml_sampler *s)
{
    if (!s)
        return;
    if (s->started) {
        pthread_mutex_lock(&s->lock);
        s->stop = true;
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
    }
    for (int i = 0; i < GPM_RING; i++)
        if (s->ring[i].sample.handle)
            rl_nv.gpm_sample_free(s->ring[i].sample);
    for (int i = 0; i < 2; i++) {
        series_free(&s->util[i]);
        series_free(&s->rates[i]);
    }
    series_free(&s->mem_used);
    series_free(&s->sm_clock);
    pthread_mutex_destroy(&s->lock);
    rl_nv.shutdown();
    free(s);
}

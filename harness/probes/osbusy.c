/*
 * osbusy.c -- the operating system's busy time, the CPU's own duty cycle.
 *
 * The kernel charges a thread the time it spent on a CPU (user + system),
 * whatever it did there: a thread stalled on cache misses and one retiring
 * four instructions a cycle both count every nanosecond. top, ps and
 * /proc/stat report this, as nvidia-smi reports kernel-running time.
 */
#include "rl_host.h"
#include "rl_probes.h"
#include "rl_sensors.h"
#include "rooflab.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

bool rl_proc_stat_ticks(const char *line, unsigned long long *ticks)
{
    /* "pid (comm) state ppid ...": fields are counted after the last ')'. */
    const char *p = line ? strrchr(line, ')') : NULL;
    if (!p)
        return false;
    p++;
    unsigned long long utime = 0, stime = 0;
    /* After ')': field 3 (state) is the first; utime is field 14, stime 15. */
    for (int field = 3; field <= 15; field++) {
        while (*p == ' ')
            p++;
        if (!*p || *p == '\n')
            return false;
        if (field >= 14) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(p, &end, 10);
            if (errno || end == p || (*end != ' ' && *end != '\n' && *end))
                return false;
            if (field == 14)
                utime = v;
            else
                stime = v;
            p = end;
        } else {
            p += strcspn(p, " \n");
        }
    }
    *ticks = utime + stime;
    return true;
}

double rl_cpu_busy_s(int tid)
{
    char path[64], line[1024];
    if (tid > 0)
        snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    else
        snprintf(path, sizeof path, "/proc/self/stat");
    FILE *f = fopen(path, "r");
    if (!f)
        return NAN;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    unsigned long long ticks;
    if (!ok || !rl_proc_stat_ticks(line, &ticks))
        return NAN;
    return (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

double rl_process_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return NAN;
    unsigned long long size, resident;
    int got = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    return got == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) : NAN;
}

double rl_host_ram_bytes(void)
{
    struct sysinfo si;
    if (sysinfo(&si) != 0)
        return NAN;
    return (double)si.totalram * (double)si.mem_unit;
}

void rl_sleep_until(double t)
{
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9)};
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

double rl_load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return NAN;
    double one;
    int got = fscanf(f, "%lf", &one);
    fclose(f);
    return got == 1 ? one : NAN;
}

bool rl_proc_stat_cpu(const char *line, unsigned long long *busy, unsigned long long *total)
{
    /* cpu  user nice system idle iowait irq softirq steal [guest guest_nice] */
    unsigned long long v[8];
    if (!line || strncmp(line, "cpu ", 4) ||
        sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) != 8)
        return false;
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* guest time is inside user already */
    *total = *busy + v[3] + v[4];
    return true;
}

static bool read_stat_cpu(unsigned long long *busy, unsigned long long *total)
{
    char line[512];
    FILE *f = fopen("/proc/stat", "r");
    bool ok = f && fgets(line, sizeof line, f) && rl_proc_stat_cpu(line, busy, total);
    if (f)
        fclose(f);
    return ok;
}

double rl_host_busy_cpus(double window_s)
{
    unsigned long long b0, t0, b1, t1;
    if (!read_stat_cpu(&b0, &t0))
        return NAN;
    rl_sleep_until(rl_now_s() + window_s);
    if (!read_stat_cpu(&b1, &t1) || t1 <= t0)
        return NAN;
    return (double)(b1 - b0) / (double)(t1 - t0) * (double)sysconf(_SC_NPROCESSORS_ONLN);
}

static double cpu_seconds(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 + (double)ru->ru_stime.tv_sec +
           ru->ru_stime.tv_usec * 1e-6;
}

rl_busy_mark rl_busy_mark_now(void)
{
    rl_busy_mark m = {.wall_s = rl_now_s(), .self_s = NAN, .host_busy_s = NAN};
    struct rusage self, children; /* children: what it ran and waited for (git) */
    if (getrusage(RUSAGE_SELF, &self) == 0 && getrusage(RUSAGE_CHILDREN, &children) == 0)
        m.self_s = cpu_seconds(&self) + cpu_seconds(&children);
    unsigned long long busy, total;
    if (read_stat_cpu(&busy, &total))
        m.host_busy_s = (double)busy / (double)sysconf(_SC_CLK_TCK);
    return m;
}

double rl_others_busy_cpus_since(const rl_busy_mark *mark)
{
    rl_busy_mark now = rl_busy_mark_now();
    double wall = now.wall_s - mark->wall_s;
    if (!(wall > 0))
        return NAN;
    double others = (now.host_busy_s - mark->host_busy_s) - (now.self_s - mark->self_s);
    return fmax(0, others / wall);
}

/* The host_load header line. Returns the larger reading when it exceeded
 * the logical CPUs -- other processes competed for them -- and 0 otherwise. */
static double rl_record_host_load(rl_ctx *ctx, double load_start)
{
    double load_end = rl_load_average();
    int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double peak = fmax(load_start, load_end);
    bool competed = peak > cpus + 0.5;
    rl_meta(ctx, "host_load", "load average %.1f at the start, %.1f at the end, on %d logical CPUs%s",
            load_start, load_end, cpus, competed ? ": other processes competed for the CPUs" : "");
    return competed ? peak : 0.0;
}

void rl_note_host_load(rl_ctx *ctx, double load_start, const char *prefix, const char *effect)
{
    double overload = rl_record_host_load(ctx, load_start);
    if (ctx->kind != RL_CUDA && overload > 0)
        printf("%sload average %.1f on %ld CPUs: %s\n", prefix, overload,
               sysconf(_SC_NPROCESSORS_ONLN), effect);
}

bool rl_busy_gates_off(void)
{
    const char *env = getenv("ROOFLAB_HOST_BUSY");
    return env && !strcmp(env, "ignore");
}

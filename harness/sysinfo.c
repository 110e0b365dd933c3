/*
 * sysinfo.c -- facts about the host for the metadata header: CPU model
 * and caches (sysfs), the source tree's git commit, the date.
 */
#include "internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef RL_SOURCE_ROOT
#define RL_SOURCE_ROOT "."
#endif

const char *rl_source_root(void)
{
    const char *env = getenv("ROOFLAB_ROOT"); /* for relocated trees */
    return env && *env ? env : RL_SOURCE_ROOT;
}

static bool read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* "32K", "1024K", "32768K" or "32M" as sysfs writes them. */
static double parse_cache_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K') v *= 1024;
    else if (*end == 'M') v *= 1024 * 1024;
    return v;
}

static void read_caches(rl_device_info *info)
{
    for (int i = 0; i < 8; i++) {
        char path[128], level[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (!read_line(path, level, sizeof level))
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        read_line(path, type, sizeof type);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!read_line(path, size, sizeof size))
            continue;
        double bytes = parse_cache_size(size);
        if (!strcmp(level, "1") && !strcmp(type, "Data")) info->l1d_bytes = bytes;
        if (!strcmp(level, "2")) info->l2_bytes = bytes;
        if (!strcmp(level, "3")) info->l3_bytes = bytes;
    }
    /* ROOFLAB_LLC=260Mi pretends the L3 has that size: to see how runs size
     * themselves on a machine with another cache (a developer's knob; the
     * CSV header says so, and the times measured are this machine's). */
    size_t pretend;
    const char *env = getenv("ROOFLAB_LLC");
    if (env && *env && rl_parse_size(env, &pretend) && pretend >= 65536)
        info->l3_bytes = (double)pretend;
    info->llc_bytes = info->l3_bytes > 0 ? info->l3_bytes : info->l2_bytes;
    if (info->llc_bytes <= 0)
        info->llc_bytes = 32.0 * 1024 * 1024; /* sysfs silent: assume a large L3 */
}

/* "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz" -> "Intel Xeon Gold 6338" */
static void tidy_model(char *s)
{
    static const char *noise[] = {"(R)", "(TM)", "(tm)", " CPU", " Processor"};
    char *at = strstr(s, " @ ");
    if (at)
        *at = '\0';
    for (size_t i = 0; i < sizeof noise / sizeof noise[0]; i++)
        for (char *p; (p = strstr(s, noise[i]));)
            memmove(p, p + strlen(noise[i]), strlen(p + strlen(noise[i])) + 1);
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        s[--n] = '\0';
}

void rl_cpu_describe(rl_device_info *info)
{
    snprintf(info->name, sizeof info->name, "unknown CPU");
    info->cpu_family = info->cpu_model = -1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[4096]; /* a flags line runs past 1,500 characters */
        /* the first processor's lines; its blank line ends them */
        while (fgets(line, sizeof line, f) && line[0] != '\n') {
            char *colon = strchr(line, ':');
            if (!colon)
                continue;
            if (!strncmp(line, "model name", 10)) {
                snprintf(info->name, sizeof info->name, "%s", colon + 2);
                info->name[strcspn(info->name, "\n")] = '\0';
            } else if (!strncmp(line, "cpu family", 10)) {
                info->cpu_family = atoi(colon + 1);
            } else if (!strncmp(line, "model", 5) && (line[5] == '\t' || line[5] == ' ')) {
                info->cpu_model = atoi(colon + 1);
            }
        }
        fclose(f);
    }
    tidy_model(info->name);
    info->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    info->threads = omp_get_max_threads();
    read_caches(info);
    rl_device_slug(RL_CPU, info->name, info->slug, sizeof info->slug);
}

/* Runs a short command and keeps its first line of output. */
static bool first_line_of(const char *cmd, char *buf, size_t len)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    bool ok = fgets(buf, (int)len, p) != NULL;
    int status = pclose(p);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok && status == 0;
}

void rl_git_describe(char *buf, size_t len, const char **dirty)
{
    *dirty = "unknown";
    char cmd[1200], commit[64], changes[8];
    /* A copy of the tree (a lent GPU machine gets one): the commit it was
     * copied from, when the caller says so. It wins over a .git that came
     * along: seen on an H200 lease, 2026-11-30, whose .git was older than
     * the files beside it. */
    const char *given = getenv("ROOFLAB_GIT_COMMIT");
    if (given && *given) {
        snprintf(buf, len, "%.64s (ROOFLAB_GIT_COMMIT: a copy, not a checkout)", given);
        return;
    }
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --short=12 HEAD 2>/dev/null", rl_source_root());
    if (!first_line_of(cmd, commit, sizeof commit)) {
        snprintf(buf, len, "unknown (not a git checkout)");
        return;
    }
    /* Dirty means the code differs from the commit: results/ and plots/
     * change under every run that writes into the checkout (make
     * reference rewrites its own checked-in CSVs and charts). */
    snprintf(cmd, sizeof cmd,
             "git -C '%s' status --porcelain --untracked-files=no -- . ':!results' ':!plots' "
             "2>/dev/null | head -c1 | wc -c",
             rl_source_root());
    bool is_dirty = first_line_of(cmd, changes, sizeof changes) && atoi(changes) > 0;
    snprintf(buf, len, "%s%s", commit, is_dirty ? " (dirty)" : "");
    *dirty = is_dirty ? "yes" : "no";
}

void rl_utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

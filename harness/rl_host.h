/*
 * rl_host.h -- how busy the host is, from /proc (osbusy.c): the CPUs other
 * processes keep busy, now or since a mark. The harness uses it to call a
 * host busy (a ceiling, a verdict "not measured (busy host)"); the probes
 * and their tests include it. An experiment reads only the load average
 * (rl_library.h), except experiment 01, whose busy readings on a CPU are
 * CPU time that another process takes away: it marks each hold.
 */
#ifndef RL_HOST_H
#define RL_HOST_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The aggregate "cpu" line of /proc/stat: busy ticks (user, nice, system,
 * irq, softirq, steal) and all ticks. False on a malformed line. */
bool rl_proc_stat_cpu(const char *line, unsigned long long *busy, unsigned long long *total);
/* How many CPUs other processes kept busy over the next window_s seconds,
 * during which this process sleeps: the load now, where the load average
 * still remembers the last minute (an experiment that just ended). NaN
 * when /proc/stat is unreadable. */
double rl_host_busy_cpus(double window_s);
/* The CPUs other processes kept busy, on average, since a mark: the
 * host's busy time (/proc/stat) less this process's own (its threads'
 * user and system time), over the wall time. NaN when unreadable. */
typedef struct rl_busy_mark {
    double wall_s, self_s, host_busy_s;
} rl_busy_mark;
rl_busy_mark rl_busy_mark_now(void);
double rl_others_busy_cpus_since(const rl_busy_mark *mark);
/* ROOFLAB_HOST_BUSY=ignore: every busy-host gate judges regardless (the
 * tests, which run beside each other by design). */
bool rl_busy_gates_off(void);

#ifdef __cplusplus
}
#endif
#endif /* RL_HOST_H */

/*
 * cpu/busy.c -- experiment 01's variants on CPU threads (the table is
 * busy.c, the references ref/busy.c).
 *
 * A worker is a POSIX thread (not OpenMP: the experiment needs exactly
 * `workers` threads and their ids, to read what the kernel charged each
 * one). A burst works until a deadline on CLOCK_MONOTONIC, reading the
 * clock every few steps; between bursts the thread sleeps, which is what
 * the operating system's busy time (top, /proc) sees as idle.
 */
#include "../busy.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- clock ---------------------------------------------------------------- */

double busy_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void busy_sleep_until(double t)
{
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9)};
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

void busy_result_free(busy_result *r)
{
    free(r->starts);
    free(r->ends);
    r->starts = r->ends = NULL;
}

/* ---- the work of one thread until a deadline ------------------------------ */

typedef struct team team;

typedef struct worker {
    const busy_args *a;
    team *team;
    int index, tid;
    size_t cursor;        /* stream: where the last burst stopped */
    double *starts, *ends;
    long long n;
    double work;          /* steps, hops or bytes */
} worker;

/* Work functions: run until `deadline` (at least one chunk), update the
 * worker's lanes, return the work done. */
typedef double (*work_fn)(worker *w, double deadline, bool full_pass);

static double arith_until(worker *w, double deadline, bool full_pass)
{
    (void)full_pass;
    const busy_args *a = w->a;
    uint32_t *st = a->states + (size_t)w->index * BUSY_CPU_LANES;
    const uint32_t m = a->lcg_a, c = a->lcg_c;
    uint32_t x[BUSY_CPU_LANES];
    memcpy(x, st, sizeof x);
    unsigned long long steps = 0;
    do {
        for (int k = 0; k < BUSY_ARITH_CHUNK; k++)
            for (int l = 0; l < BUSY_CPU_LANES; l++)
                x[l] = busy_lcg(x[l], m, c);
        steps += BUSY_ARITH_CHUNK;
    } while (busy_now_s() < deadline);
    memcpy(st, x, sizeof x);
    for (int l = 0; l < BUSY_CPU_LANES; l++)
        a->counts[(size_t)w->index * BUSY_CPU_LANES + l] = steps;
    return (double)steps * BUSY_CPU_LANES;
}

static double chase_until(worker *w, double deadline, bool full_pass)
{
    (void)full_pass;
    const busy_args *a = w->a;
    const uint32_t *chain = a->chain;
    uint32_t p = a->states[w->index];
    unsigned long long hops = 0;
    do {
        for (int k = 0; k < BUSY_CHASE_CHUNK; k++)
            p = chain[p];
        hops += BUSY_CHASE_CHUNK;
    } while (busy_now_s() < deadline);
    a->states[w->index] = p;
    a->counts[w->index] = hops;
    return (double)hops;
}

enum { STREAM_STEP = 4096 }; /* elements between two reads of the clock */

/* Each thread owns a slice of the arrays and walks it in steps, resuming
 * where its last burst stopped; a validation burst covers it all once. */
static double stream_until(worker *w, double deadline, bool full_pass)
{
    const busy_args *a = w->a;
    size_t per = (a->n / (size_t)a->workers + 15) / 16 * 16;
    size_t lo = (size_t)w->index * per, hi = lo + per < a->n ? lo + per : a->n;
    if (lo >= hi)
        return 0;
    const float *restrict x = a->x;
    float *restrict y = a->y;
    size_t done = 0, pos = w->cursor < lo || w->cursor >= hi ? lo : w->cursor;
    do {
        size_t end = pos + STREAM_STEP < hi ? pos + STREAM_STEP : hi;
#pragma omp simd
        for (size_t i = pos; i < end; i++)
            y[i] = x[i] * BUSY_STREAM_A + BUSY_STREAM_B;
        done += end - pos;
        pos = end == hi ? lo : end;
    } while ((full_pass && done < hi - lo) || busy_now_s() < deadline);
    w->cursor = pos;
    a->counts[w->index] = done;
    return 8.0 * (double)done; /* 4 bytes read, 4 written per element */
}

/* ---- threads ------------------------------------------------------------------ */

struct team {
    const busy_args *a;
    work_fn fn;
    double seconds, t0;
    long long periods;
    bool single_burst; /* burst(): one burst on every worker */
    pthread_barrier_t ready, go, done, leave;
};

static void record(worker *w, double s, double e)
{
    w->starts[w->n] = s;
    w->ends[w->n++] = e;
}

static void duty_loop(team *t, worker *w)
{
    const busy_args *a = t->a;
    double P = a->period_s, end = t->t0 + (double)t->periods * P;
    if (t->single_burst) {
        double s = busy_now_s();
        w->work += t->fn(w, s + t->seconds, true);
        record(w, s, busy_now_s());
    } else if (a->duty >= 1) {
        double s = busy_now_s();
        w->work += t->fn(w, end, false);
        record(w, s, busy_now_s());
    } else if (a->duty > 0) {
        for (long long i = 0; i < t->periods; i++) {
            double slot = t->t0 + (double)i * P, deadline = slot + a->duty * P;
            busy_sleep_until(slot);
            double s = busy_now_s();
            if (s >= deadline)
                continue; /* woke too late for this burst */
            w->work += t->fn(w, deadline, false);
            record(w, s, busy_now_s());
        }
    }
    busy_sleep_until(end);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    team *t = w->team;
    w->tid = (int)gettid();
    pthread_barrier_wait(&t->ready); /* the main thread reads the counters */
    pthread_barrier_wait(&t->go);    /* ... and sets t0 */
    duty_loop(t, w);
    pthread_barrier_wait(&t->done);  /* the main thread reads them again */
    pthread_barrier_wait(&t->leave);
    return NULL;
}

static void die(const char *what)
{
    fprintf(stderr, "rooflab: busy: %s failed\n", what);
    abort();
}

/* Runs fn on a->workers threads: one burst each (single), or the duty
 * cycle for whole periods. The calling thread waits, reading nothing but
 * the clock, and calls the edge hook at the window's two ends. */
static void run_team(const busy_args *a, work_fn fn, double seconds, bool single, busy_result *out)
{
    int n = a->workers;
    team t = {.a = a, .fn = fn, .seconds = seconds, .single_burst = single};
    t.periods = single ? 1 : (long long)floor(seconds / a->period_s + 1e-9);
    if (t.periods < 1)
        t.periods = 1;
    worker *w = calloc((size_t)n, sizeof *w);
    int *tids = calloc((size_t)n, sizeof *tids);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (!w || !tids || !th)
        die("calloc");
    if (pthread_barrier_init(&t.ready, NULL, (unsigned)n + 1) || pthread_barrier_init(&t.go, NULL, (unsigned)n + 1) ||
        pthread_barrier_init(&t.done, NULL, (unsigned)n + 1) || pthread_barrier_init(&t.leave, NULL, (unsigned)n + 1))
        die("pthread_barrier_init");
    long long cap = t.periods + 1;
    for (int i = 0; i < n; i++) {
        w[i] = (worker){.a = a, .team = &t, .index = i};
        w[i].starts = malloc((size_t)cap * sizeof(double));
        w[i].ends = malloc((size_t)cap * sizeof(double));
        if (!w[i].starts || !w[i].ends)
            die("malloc");
        if (pthread_create(&th[i], NULL, worker_main, &w[i]))
            die("pthread_create");
    }
    pthread_barrier_wait(&t.ready);
    for (int i = 0; i < n; i++)
        tids[i] = w[i].tid;
    if (a->edge)
        a->edge(a->edge_arg, 0, tids, n);
    t.t0 = busy_now_s();
    pthread_barrier_wait(&t.go);
    pthread_barrier_wait(&t.done);
    double t1 = busy_now_s();
    if (a->edge)
        a->edge(a->edge_arg, 1, tids, n);
    pthread_barrier_wait(&t.leave);

    long long total = 0;
    for (int i = 0; i < n; i++) {
        if (pthread_join(th[i], NULL))
            die("pthread_join");
        total += w[i].n;
    }
    *out = (busy_result){.t0 = t.t0, .t1 = t1, .window_s = t1 - t.t0, .bursts = total};
    out->starts = malloc((size_t)(total ? total : 1) * sizeof(double));
    out->ends = malloc((size_t)(total ? total : 1) * sizeof(double));
    if (!out->starts || !out->ends)
        die("malloc");
    long long k = 0;
    for (int i = 0; i < n; i++) {
        for (long long j = 0; j < w[i].n; j++, k++) {
            out->starts[k] = w[i].starts[j] - t.t0;
            out->ends[k] = w[i].ends[j] - t.t0;
        }
        out->work += w[i].work;
        free(w[i].starts);
        free(w[i].ends);
    }
    pthread_barrier_destroy(&t.ready);
    pthread_barrier_destroy(&t.go);
    pthread_barrier_destroy(&t.done);
    pthread_barrier_destroy(&t.leave);
    free(w);
    free(tids);
    free(th);
}

/* Each variant's functions (the table is busy.c): lanes per thread, burst, run. */
#define CPU_VARIANT(name, fn, lanes_per_thread)                                    \
    static void name##_burst(const busy_args *a, double seconds)                   \
    {                                                                              \
        busy_result r;                                                             \
        busy_args one = *a;                                                        \
        one.edge = NULL;                                                           \
        run_team(&one, fn, seconds, true, &r);                                     \
        busy_result_free(&r);                                                      \
    }                                                                              \
    static void name##_run(const busy_args *a, double seconds, busy_result *out)   \
    {                                                                              \
        run_team(a, fn, seconds, false, out);                                      \
    }                                                                              \
    const busy_ops busy_##name##_cpu = {.lanes = lanes_per_thread, .burst = name##_burst, \
                                        .run = name##_run};
CPU_VARIANT(arith, arith_until, BUSY_CPU_LANES)
CPU_VARIANT(chase, chase_until, 1)
CPU_VARIANT(stream, stream_until, 1)

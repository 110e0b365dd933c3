/*
 * test_busy.c -- experiment 01's variants: the LCG jump and the chain
 * builder against brute force, every CPU variant's burst against the
 * references, the duty-cycle loop's timestamps, and (suite cuda_busy, on a
 * GPU only) the CUDA variants and the NVML sampler on the real device.
 */
#include "busy.h"
#include "helpers.h"
#include "rl_probes.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Test(busy, lcg_jump_equals_stepping)
{
    uint32_t x = 12345u, y = 12345u;
    for (unsigned long long steps = 0; steps <= 3000; steps++) {
        cr_assert_eq(busy_lcg_jump(12345u, steps, BUSY_LCG_A, BUSY_LCG_C), x, "steps %llu", steps);
        x = busy_lcg(x, BUSY_LCG_A, BUSY_LCG_C);
    }
    /* Jumps compose: a + b steps = a steps, then b. */
    unsigned long long a = 1ULL << 40, b = 987654321ULL;
    y = busy_lcg_jump(busy_lcg_jump(y, a, BUSY_LCG_A, BUSY_LCG_C), b, BUSY_LCG_A, BUSY_LCG_C);
    cr_assert_eq(busy_lcg_jump(12345u, a + b, BUSY_LCG_A, BUSY_LCG_C), y);
}

Test(busy, the_chain_is_one_cycle_through_every_line)
{
    enum { LINES = 1000, STRIDE = 16, STARTS = 7 };
    uint32_t *chain = calloc(LINES * STRIDE, sizeof *chain), starts[STARTS];
    busy_make_chain(chain, LINES, STRIDE, starts, STARTS, 99);
    char *seen = calloc(LINES, 1);
    uint32_t p = starts[0];
    int pos_of_start[STARTS], found = 0;
    for (int hop = 0; hop < LINES; hop++) {
        cr_assert_eq(p % STRIDE, 0u, "only the first slot of a line is used");
        cr_assert_lt(p / STRIDE, (uint32_t)LINES);
        cr_assert_not(seen[p / STRIDE], "line %u visited twice", p / STRIDE);
        seen[p / STRIDE] = 1;
        for (int k = 0; k < STARTS; k++)
            if (starts[k] == p)
                pos_of_start[k] = hop, found++;
        p = chain[p];
    }
    cr_assert_eq(p, starts[0], "back to the start after every line");
    cr_assert_eq(found, STARTS, "every start is on the cycle");
    for (int k = 1; k < STARTS; k++) {
        int gap = pos_of_start[k] - pos_of_start[k - 1];
        cr_assert(gap >= LINES / STARTS - 1 && gap <= LINES / STARTS + 1, "starts evenly spread: gap %d", gap);
    }
    free(seen);
    free(chain);
}

/* ---- the variants on one backend ------------------------------------------------ */

typedef struct bufs {
    uint32_t *states, *seeds, *chain, *chain_host, *starts;
    unsigned long long *counts, *work;
    float *x, *y;
    size_t lanes, n, lines;
} bufs;

static void make_bufs(rl_backend *be, bufs *b, size_t lanes, size_t n)
{
    enum { STRIDE = 16 };
    b->lanes = lanes, b->n = n, b->lines = 4096;
    b->states = rl_alloc(be, lanes * 4);
    b->counts = rl_alloc(be, lanes * 8);
    b->work = rl_alloc(be, 8);
    b->seeds = rl_host_alloc(lanes * 4);
    for (size_t i = 0; i < lanes; i++)
        b->seeds[i] = (uint32_t)(i * 2654435761u + 7);
    b->chain_host = calloc(b->lines * STRIDE, 4);
    b->starts = rl_host_alloc(lanes * 4);
    busy_make_chain(b->chain_host, b->lines, STRIDE, b->starts, lanes, 5);
    b->chain = rl_alloc(be, b->lines * STRIDE * 4);
    rl_upload(be, b->chain, b->chain_host, b->lines * STRIDE * 4);
    b->x = rl_alloc(be, n * 4);
    b->y = rl_alloc(be, n * 4);
    float *hx = rl_host_alloc(n * 4);
    rl_fill_uniform(hx, n, -1, 1, 3);
    rl_upload(be, b->x, hx, n * 4);
    rl_host_free(hx);
}

static void free_bufs(rl_backend *be, bufs *b)
{
    void *dev[] = {b->states, b->counts, b->work, b->chain, b->x, b->y};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(be, dev[i]);
    rl_host_free(b->seeds);
    rl_host_free(b->starts);
    free(b->chain_host);
}

static busy_args args_for(rl_backend *be, bufs *b, int workers, double duty)
{
    return (busy_args){.workers = workers, .duty = duty, .period_s = 0.01, .lcg_a = BUSY_LCG_A,
                       .lcg_c = BUSY_LCG_C, .states = b->states, .counts = b->counts,
                       .chain = b->chain, .x = b->x, .y = b->y, .n = b->n, .work = b->work,
                       .stream = rl_stream(be)};
}

static bool role_is(const busy_variant *v, const char *role)
{
    return v->role && !strcmp(v->role, role);
}

static const busy_ops *ops_of(rl_backend *be, const busy_variant *v)
{
    return rl_kind(be) == RL_CUDA ? v->cuda : v->cpu;
}

/* The first variant with this role. */
static const busy_variant *with_role(const char *role)
{
    const busy_variant *v = busy_variants;
    while (v->name && !role_is(v, role))
        v++;
    cr_assert_not_null(v->name, "a busy variant has the role %s", role);
    return v;
}

/* One burst of every variant on `workers`; every lane and element checked
 * against the reference its role names. */
static void check_bursts(rl_backend *be, int workers, size_t n)
{
    int most = 1;
    for (const busy_variant *v = busy_variants; v->name; v++)
        if (ops_of(be, v))
            most = ops_of(be, v)->lanes > most ? ops_of(be, v)->lanes : most;
    bufs b;
    make_bufs(be, &b, (size_t)workers * most, n);
    for (const busy_variant *v = busy_variants; v->name; v++) {
        const busy_ops *ops = ops_of(be, v);
        if (!ops)
            continue;
        size_t lanes = (size_t)workers * ops->lanes, first = 0, bad;
        busy_args a = args_for(be, &b, workers, 1);
        rl_upload(be, b.states, role_is(v, "latency") ? b.starts : b.seeds, lanes * 4);
        rl_poison(be, b.counts, lanes * 8);
        rl_poison(be, b.y, n * 4);
        ops->burst(&a, 2e-3);
        uint32_t *end = rl_host_alloc(lanes * 4);
        unsigned long long *counts = rl_host_alloc(lanes * 8);
        rl_download(be, end, b.states, lanes * 4);
        rl_download(be, counts, b.counts, lanes * 8);
        if (role_is(v, "compute"))
            bad = busy_check_arith(b.seeds, end, counts, lanes, BUSY_LCG_A, BUSY_LCG_C, &first);
        else if (role_is(v, "latency"))
            bad = busy_check_chase(b.chain_host, b.starts, end, counts, lanes, &first);
        else {
            cr_assert(role_is(v, "bandwidth"), "%s: a role with a reference", v->name);
            float *x = rl_host_alloc(n * 4), *y = rl_host_alloc(n * 4);
            double *want = rl_host_alloc(n * 8);
            rl_download(be, x, b.x, n * 4);
            rl_download(be, y, b.y, n * 4);
            for (size_t i = 0; i < n; i++)
                want[i] = (double)x[i] * BUSY_STREAM_A + BUSY_STREAM_B;
            rl_check c = rl_compare_f32(y, want, n, 1e-6, 1e-6);
            bad = c.bad, first = c.first_bad;
            rl_host_free(x), rl_host_free(y), rl_host_free(want);
        }
        cr_assert_eq(bad, 0u, "%s %s on %d workers: %zu bad, first %zu", rl_backend_name(rl_kind(be)),
                     v->name, workers, bad, first);
        rl_host_free(end);
        rl_host_free(counts);
    }
    free_bufs(be, &b);
}

Test(busy, cpu_bursts_match_the_references)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    check_bursts(be, 1, 4099);
    check_bursts(be, 3, 4099 * 8 + 4); /* more threads than cores, odd slices */
    rl_backend_close(be);
}

typedef struct edges {
    int calls[2], ntids;
} edges;

static void count_edge(void *arg, int which, const int *tids, int ntids)
{
    edges *e = arg;
    e->calls[which]++;
    e->ntids = ntids;
    for (int i = 0; i < ntids; i++)
        cr_assert(isfinite(rl_cpu_busy_s(tids[i])), "worker %d's /proc entry is readable", tids[i]);
}

static double duty_of(const busy_result *r)
{
    rl_interval *iv = malloc((size_t)(r->bursts + 1) * sizeof *iv);
    for (long long i = 0; i < r->bursts; i++) {
        cr_assert(r->starts[i] >= 0 && r->ends[i] >= r->starts[i] && r->ends[i] <= r->window_s + 1e-3,
                  "burst %lld [%g, %g] inside the %g s window", i, r->starts[i], r->ends[i], r->window_s);
        iv[i] = (rl_interval){r->starts[i], r->ends[i]};
    }
    double d = rl_busy_fraction(iv, (size_t)r->bursts, 0, r->window_s);
    free(iv);
    return d;
}

/* 20 periods of 10 ms: at most one burst per period and worker (a thread
 * that wakes after its burst's deadline skips it: on a loaded machine
 * some do), a busy fraction near the duty (loose, for the same reason),
 * no bursts at duty 0. */
Test(busy, the_cpu_run_keeps_its_duty_cycle)
{
    measure_lock(); /* it times bursts: not beside another measurement */
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    bufs b;
    make_bufs(be, &b, 2 * BUSY_CPU_LANES, 1024);
    edges e = {0};
    busy_args a = args_for(be, &b, 2, 0.5);
    a.edge = count_edge, a.edge_arg = &e;
    busy_result r;
    const busy_ops *arith = with_role("compute")->cpu;
    arith->run(&a, 0.2, &r);
    cr_assert_eq(e.calls[0], 1);
    cr_assert_eq(e.calls[1], 1);
    cr_assert_eq(e.ntids, 2);
    cr_assert(r.bursts >= 20 && r.bursts <= 40, "%lld bursts for 2 threads x 20 periods", r.bursts);
    double d = duty_of(&r);
    cr_assert(d > 0.45 && d < 0.9, "duty %.3f for 0.5 on two threads", d);
    cr_assert(r.work > 0 && r.t1 > r.t0 && r.window_s >= 0.2);
    busy_result_free(&r);

    a.duty = 0, a.edge = NULL;
    arith->run(&a, 0.05, &r);
    cr_assert_eq(r.bursts, 0);
    cr_assert_eq(r.work, 0.0);
    busy_result_free(&r);
    a.duty = 1;
    arith->run(&a, 0.05, &r);
    cr_assert_eq(r.bursts, 2, "full duty: one burst per thread");
    cr_assert_geq(duty_of(&r), 0.9);
    busy_result_free(&r);
    free_bufs(be, &b);
    rl_backend_close(be);
}

/* ---- on a GPU ---------------------------------------------------------------- */

Test(cuda_busy, bursts_match_the_references)
{
    rl_backend *be = gpu_or_skip();
    check_bursts(be, 1, 4096 + 4);
    check_bursts(be, 3, (1 << 20) + 12);
    rl_backend_close(be);
}

/* One block at 50 % duty for 0.4 s: the events' busy fraction is the duty,
 * and NVML (where present) reads the same window without failing. */
Test(cuda_busy, duty_from_events_and_nvml)
{
    rl_backend *be = gpu_or_skip();
    cr_assert_not_null(busy_device, "a build that opens a GPU has busy.cu's device query");
    bufs b;
    make_bufs(be, &b, BUSY_BLOCK, 1024);
    char pci[32], why[256];
    double free_b, total_b;
    busy_device(pci, sizeof pci, &free_b, &total_b);
    cr_assert(free_b > 0 && total_b >= free_b);
    rl_nvml_sampler *s = rl_nvml_sampler_start(pci, 0.05, why, sizeof why);
    busy_args a = args_for(be, &b, 1, 0.5);
    rl_upload(be, b.states, b.seeds, BUSY_BLOCK * 4);
    busy_result r;
    with_role("compute")->cuda->run(&a, 0.4, &r);
    cr_assert_eq(r.bursts, 40);
    double d = duty_of(&r);
    cr_assert(fabs(d - 0.5) < 0.05, "duty from events %.3f", d);
    if (s) {
        rl_nvml_window w;
        rl_nvml_sampler_window(s, r.t0, r.t1, &w);
        cr_assert(w.mem_total_bytes > 0 && w.mem_used_bytes > 0, "%s", w.note);
        cr_assert(isfinite(w.util_gpu_pct) && w.util_gpu_pct >= 0 && w.util_gpu_pct <= 100,
                  "utilization.gpu %g (%s, %s)", w.util_gpu_pct, w.util_source, w.note);
        char line[512];
        rl_nvml_sampler_describe(s, line, sizeof line);
        cr_log_info("NVML: %s; util %.0f %%, GPM %s", line, w.util_gpu_pct, w.gpm_status);
        rl_nvml_sampler_stop(s);
    } else {
        cr_log_warn("NVML sampler not started: %s", why);
    }
    busy_result_free(&r);
    free_bufs(be, &b);
    rl_backend_close(be);
}

/*
 * test_busy.c -- experiment 01's variants: the LCG jump and the chain
 * builder against brute force, every CPU variant's burst against the
 * references, the duty-cycle loop's timestamps, and (suite cuda_busy, on a
 * GPU only) the CUDA variants and the NVML sampler on the real device.
 */
#include "busy.h"
#include "helpers.h"
#include "probes/rl_probes.h"
#include "probes/rl_sensors.h"
#include "rl_backend.h"
#include "rl_measure.h"
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
    uint32_t *chain = malloc(LINES * STRIDE * sizeof *chain), starts[STARTS];
    memset(chain, 0xff, LINES * STRIDE * sizeof *chain);
    busy_make_chain(chain, LINES, STRIDE, starts, STARTS, 99);
    for (int i = 0; i < LINES * STRIDE; i++)
        cr_assert(i % STRIDE == 0 || chain[i] == 0, "slot %d, which no hop reads, is 0", i);
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

/* The seeds are the same for a seed, and scattered: no two lanes alike. */
Test(busy, seeds_are_deterministic_and_distinct)
{
    enum { N = 4096 };
    uint32_t a[N], b[N];
    busy_make_seeds(a, N, 42);
    busy_make_seeds(b, N, 42);
    cr_assert_arr_eq(a, b, sizeof a);
    for (int i = 1; i < N; i++)
        cr_assert_neq(a[i], a[i - 1], "lanes %d and %d", i - 1, i);
    busy_make_seeds(b, N, 43);
    cr_assert_neq(a[0], b[0], "another seed, other starts");
}

/* ---- the variants on one backend ------------------------------------------------ */

typedef struct bufs {
    busy_buffers d;       /* what the runs use */
    uint32_t *chain_host; /* what a chase's check follows */
    size_t lines;
} bufs;

static void make_bufs(rl_backend *be, bufs *b, size_t lanes, size_t n)
{
    enum { STRIDE = 16 };
    busy_buffers *d = &b->d;
    d->lanes = lanes, d->n = n, b->lines = 4096;
    d->states = rl_alloc(be, lanes * 4);
    d->counts = rl_alloc(be, lanes * 8);
    d->work = rl_alloc(be, 8);
    d->seeds = rl_host_alloc(lanes * 4);
    busy_make_seeds(d->seeds, lanes, 7);
    b->chain_host = malloc(b->lines * STRIDE * 4);
    d->chain_starts = rl_host_alloc(lanes * 4);
    busy_make_chain(b->chain_host, b->lines, STRIDE, d->chain_starts, lanes, 5);
    d->chain = rl_alloc(be, b->lines * STRIDE * 4);
    rl_upload(be, d->chain, b->chain_host, b->lines * STRIDE * 4);
    d->x = rl_alloc(be, n * 4);
    d->y = rl_alloc(be, n * 4);
    float *hx = rl_host_alloc(n * 4);
    rl_fill_uniform(hx, n, -1, 1, 3);
    rl_upload(be, d->x, hx, n * 4);
    rl_host_free(hx);
}

static void free_bufs(rl_backend *be, bufs *b)
{
    void *dev[] = {b->d.states, b->d.counts, b->d.work, b->d.chain, b->d.x, b->d.y};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(be, dev[i]);
    rl_host_free(b->d.seeds);
    rl_host_free(b->d.chain_starts);
    free(b->chain_host);
}

static busy_args args_for(rl_backend *be, bufs *b, int workers, double duty)
{
    return busy_args_on(&b->d, workers, duty, 0.01, rl_stream(be));
}

static const busy_ops *ops_of(rl_backend *be, const busy_variant *v)
{
    return rl_kind(be) == RL_CUDA ? v->cuda : v->cpu;
}

/* The first variant with this role. */
static const busy_variant *with_role(const char *role)
{
    const busy_variant *v = busy_variants;
    while (v->name && !busy_has_role(v, role))
        v++;
    cr_assert_not_null(v->name, "a busy variant has the role %s", role);
    return v;
}

/* busy_check_lanes against hand-made end states: the reference's pass,
 * one wrong lane or a zero count fails and is named, and a role without
 * lanes to check fails with a reason. */
Test(busy, check_lanes_finds_the_wrong_lane)
{
    enum { LANES = 5, LINES = 64, STRIDE = 16 };
    const busy_variant *arith = with_role("compute"), *chase = with_role("latency");
    uint32_t start[LANES], end[LANES], *chain = calloc(LINES * STRIDE, sizeof *chain);
    unsigned long long counts[LANES];
    char why[256];
    for (int i = 0; i < LANES; i++) {
        start[i] = 1000u * (uint32_t)i + 1, counts[i] = 10u + (unsigned)i;
        end[i] = busy_lcg_jump(start[i], counts[i], BUSY_LCG_A, BUSY_LCG_C);
    }
    cr_assert(busy_check_lanes(arith, NULL, start, end, counts, LANES, why, sizeof why), "%s", why);
    cr_assert(strstr(why, "ok (5 lanes"), "%s", why);
    end[3] ^= 1;
    cr_assert_not(busy_check_lanes(arith, NULL, start, end, counts, LANES, why, sizeof why));
    cr_assert(strstr(why, "1 of 5 lanes wrong, first at 3"), "%s", why);
    end[3] ^= 1, counts[1] = 0;
    cr_assert_not(busy_check_lanes(arith, NULL, start, end, counts, LANES, why, sizeof why),
                  "a lane that did no work fails");

    busy_make_chain(chain, LINES, STRIDE, start, LANES, 3);
    for (int i = 0; i < LANES; i++) {
        counts[i] = 7;
        end[i] = start[i];
        for (int h = 0; h < 7; h++)
            end[i] = chain[end[i]];
    }
    cr_assert(busy_check_lanes(chase, chain, start, end, counts, LANES, why, sizeof why), "%s",
              why);
    counts[4] = 8;
    cr_assert_not(busy_check_lanes(chase, chain, start, end, counts, LANES, why, sizeof why));
    cr_assert(strstr(why, "first at 4"), "%s", why);

    busy_variant odd = *arith;
    odd.role = "exotic";
    cr_assert_not(busy_check_lanes(&odd, NULL, start, end, counts, LANES, why, sizeof why));
    cr_assert(strstr(why, "no reference check for variant arith (role exotic)"), "%s", why);
    free(chain);
}

/* One burst of every variant on `workers`; every lane and element checked
 * against the reference its role names. */
static void check_bursts(rl_backend *be, int workers, size_t n)
{
    int most = busy_max_lanes(rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU);
    bufs b;
    make_bufs(be, &b, (size_t)workers * most, n);
    for (const busy_variant *v = busy_variants; v->name; v++) {
        const busy_ops *ops = ops_of(be, v);
        if (!ops)
            continue;
        size_t lanes = (size_t)workers * ops->lanes;
        const uint32_t *start = busy_lane_starts(v, &b.d);
        busy_args a = args_for(be, &b, workers, 1);
        rl_upload(be, b.d.states, start, lanes * 4);
        rl_poison(be, b.d.counts, lanes * 8);
        rl_poison(be, b.d.y, n * 4);
        ops->burst(&a, 2e-3);
        char why[256];
        bool ok;
        if (busy_has_role(v, "bandwidth")) {
            float *x = rl_download_copy(be, b.d.x, n * 4), *y = rl_download_copy(be, b.d.y, n * 4);
            double *want = rl_host_alloc(n * 8);
            busy_stream_reference(x, want, n);
            rl_check c = rl_compare_f32(y, want, n, 1e-6, 1e-6);
            rl_check_describe(&c, why, sizeof why);
            ok = c.ok;
            rl_host_free(x), rl_host_free(y), rl_host_free(want);
        } else {
            uint32_t *end = rl_download_copy(be, b.d.states, lanes * 4);
            unsigned long long *counts = rl_download_copy(be, b.d.counts, lanes * 8);
            ok = busy_check_lanes(v, b.chain_host, start, end, counts, lanes, why, sizeof why);
            rl_host_free(end);
            rl_host_free(counts);
        }
        cr_assert(ok, "%s %s on %d workers: %s", rl_backend_name(rl_kind(be)), v->name, workers,
                  why);
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
    for (long long i = 0; i < r->bursts; i++)
        cr_assert(r->starts[i] >= 0 && r->ends[i] >= r->starts[i] &&
                      r->ends[i] <= r->window_s + 1e-3,
                  "burst %lld [%g, %g] inside the %g s window", i, r->starts[i], r->ends[i],
                  r->window_s);
    return rl_duty_of(r->starts, r->ends, (size_t)r->bursts, r->window_s, 0.1).pct / 100;
}

/* rl_duty_of, as experiment 01 reads a run: exact on bursts of known
 * length; sub-windows give the least and the most. */
Test(busy, duty_of_bursts_whole_and_by_sub_window)
{
    /* 1 s window: 0.1 s busy in each of the first five 0.2 s sub-windows,
     * none after; the last burst sticks out of the window. */
    double starts[] = {0.0, 0.2, 0.4, 0.6, 0.8, 0.95}, ends[] = {0.1, 0.3, 0.5, 0.7, 0.9, 1.2};
    rl_duty d = rl_duty_of(starts, ends, 6, 1.0, 0.2);
    cr_assert_float_eq(d.pct, 55.0, 1e-9);
    cr_assert_float_eq(d.min_pct, 50.0, 1e-9);
    cr_assert_float_eq(d.max_pct, 75.0, 1e-9);
    d = rl_duty_of(starts, ends, 0, 1.0, 0.2);
    cr_assert(d.pct == 0 && d.min_pct == 0 && d.max_pct == 0, "no bursts: idle");
    d = rl_duty_of(starts, ends, 6, 0.1, 0.2);
    cr_assert(isnan(d.min_pct) && isnan(d.max_pct), "no sub-window fits");
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
    /* 0.2 s, not 0.05: a thread that starts a few ms late beside the
     * suite's other tests (they share the cores) costs a few percent of
     * the window, not the tenth the check allows */
    arith->run(&a, 0.2, &r);
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
    rl_upload(be, b.d.states, b.d.seeds, BUSY_BLOCK * 4);
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

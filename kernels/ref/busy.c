/*
 * ref/busy.c -- what every busy variant, on either backend, is checked
 * against (experiment 01): the LCG jumped ahead, the pointer chase followed
 * hop by hop, y = a x + b in double; and the variants' inputs: the LCG
 * chains' seeds, the chase's one random cycle.
 */
#include "../busy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Composes x -> a x + c with itself by squaring: after the loop (A, C) is
 * the map applied `steps` times, all mod 2^32. */
uint32_t busy_lcg_jump(uint32_t x, unsigned long long steps, uint32_t a, uint32_t c)
{
    uint32_t acc_a = 1, acc_c = 0;
    while (steps) {
        if (steps & 1) {
            acc_a *= a;
            acc_c = acc_c * a + c;
        }
        c = c * a + c; /* (a, c) composed with itself */
        a *= a;
        steps >>= 1;
    }
    return x * acc_a + acc_c;
}

/* SplitMix64's output function: nearby inputs, unrelated outputs. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *s) { return mix64(*s += 0x9e3779b97f4a7c15ULL); }

void busy_make_seeds(uint32_t *seeds, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        seeds[i] = (uint32_t)mix64(seed * 0x9e3779b97f4a7c15ULL + i);
}

void busy_make_chain(uint32_t *chain, size_t lines, size_t stride, uint32_t *starts, size_t nstarts,
                     uint64_t seed)
{
    uint32_t *next = malloc(lines * sizeof *next);
    if (!next) {
        fprintf(stderr, "busy_make_chain: out of memory\n");
        abort();
    }
    for (size_t i = 0; i < lines; i++)
        next[i] = (uint32_t)i;
    /* Sattolo: swapping only with j < i leaves one cycle through all lines. */
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = (size_t)(splitmix64(&seed) % i);
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    memset(chain, 0, lines * stride * sizeof *chain); /* the slots no hop reads, too */
    for (size_t i = 0; i < lines; i++)
        chain[i * stride] = (uint32_t)(next[i] * stride);
    /* Walk the cycle once, dropping a start every lines / nstarts lines. */
    size_t line = 0;
    for (size_t k = 0, pos = 0; k < nstarts; pos++, line = next[line])
        if (pos * nstarts >= k * lines)
            starts[k++] = (uint32_t)(line * stride);
    free(next);
}

size_t busy_check_arith(const uint32_t *start, const uint32_t *end, const unsigned long long *counts,
                        size_t lanes, uint32_t a, uint32_t c, size_t *first_bad)
{
    size_t bad = 0;
    for (size_t i = 0; i < lanes; i++)
        if (counts[i] == 0 || end[i] != busy_lcg_jump(start[i], counts[i], a, c))
            if (bad++ == 0)
                *first_bad = i;
    return bad;
}

size_t busy_check_chase(const uint32_t *chain, const uint32_t *start, const uint32_t *end,
                        const unsigned long long *counts, size_t lanes, size_t *first_bad)
{
    size_t bad = 0;
    for (size_t i = 0; i < lanes; i++) {
        uint32_t p = start[i];
        for (unsigned long long h = 0; h < counts[i]; h++)
            p = chain[p];
        if (counts[i] == 0 || p != end[i])
            if (bad++ == 0)
                *first_bad = i;
    }
    return bad;
}

void busy_stream_reference(const float *x, double *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        want[i] = (double)x[i] * BUSY_STREAM_A + BUSY_STREAM_B;
}

bool busy_check_lanes(const busy_variant *v, const uint32_t *chain, const uint32_t *start,
                      const uint32_t *end, const unsigned long long *counts, size_t lanes,
                      char *why, size_t len)
{
    size_t bad, first = 0;
    if (busy_has_role(v, "compute"))
        bad = busy_check_arith(start, end, counts, lanes, BUSY_LCG_A, BUSY_LCG_C, &first);
    else if (busy_has_role(v, "latency"))
        bad = busy_check_chase(chain, start, end, counts, lanes, &first);
    else { /* a new kind of variant needs its own reference, here */
        snprintf(why, len, "no reference check for variant %s (role %s): give it one of busy.h's "
                 "roles, or a check in busy_check_lanes() in kernels/ref/busy.c", v->name,
                 v->role ? v->role : "none");
        return false;
    }
    if (bad)
        snprintf(why, len, "FAILED: %zu of %zu lanes wrong, first at %zu (count %llu)", bad, lanes,
                 first, counts[first]);
    else
        snprintf(why, len, "ok (%zu lanes, every end state equal to the reference's)", lanes);
    return bad == 0;
}

/*
 * ref/busy.c -- what every busy variant, on either backend, is checked
 * against (experiment 01): the LCG jumped ahead, the pointer chase followed
 * hop by hop, and the chase's input, one random cycle.
 */
#include "../busy.h"

#include <stdio.h>
#include <stdlib.h>

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

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
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

/*
 * test_vmath_8_lanes.c -- test_vmath.c's checks on the 8-lane vector cos,
 * which an AVX2 build runs: on an AVX-512 build the default is 16 lanes,
 * so without this file the 8-lane code would go untested there. The
 * Makefile builds this file with -mno-avx512f, so that it is the AVX2
 * code (vminps/vmaxps, not AVX-512VL's vrangeps) wherever it runs.
 */
#define VF_LANES 8
#define VMATH_SUITE vmath_8_lanes
#include "test_vmath.c"

/*
 * harness/ops/ab_decode.c -- two builds of the CPU decode kernels (the
 * integer formats' kernels/cpu/quant_dot_avx2.c and F16's GEMV,
 * kernels/cpu/gemv.c) in one process, call by call: the driver of `make
 * ab-decode` (harness/ops/ab-decode.sh builds it).
 *
 * On a shared VM the machine's speed drifts by a quarter within minutes,
 * so two runs of two binaries cannot tell a 10 % change from the drift.
 * Here the "old" build's symbols are renamed (old_quant_dot_simd, ...),
 * both kernels decode the same matrix, and each round times one call of
 * each, alternating which goes first: both meet the same machine, and
 * the ratio of their best and median times is what changed.
 *
 * Both are validated first, like any variant: every output within the
 * int8 bound of the FP64 reference (an unwritten output, NaN, fails).
 * Not a benchmark of the machine (experiment 03 is): only a comparison.
 *
 * Usage: ab-decode ROWS K ROUNDS [SHAPE]   (F16 and q8..q2, each in its
 * default shape or, for q8..q2, SHAPE = rows:prefetch, the same on both
 * sides; ROWS a multiple of the threads is best).
 *        ab-decode --tokens N ROWS K ROUNDS  (F16's GEMV alone, at N tokens:
 * the integer kernels take one).
 */
#define _GNU_SOURCE
#include "../../kernels/cpu/quant_dot.h"
#include "../../kernels/gemv.h"
#include "../../kernels/half.h"

#include <math.h>
#include <omp.h> /* omp_get_max_threads: the header line */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the old build, renamed by objcopy (ab-decode.sh) */
quant_dot_rows old_quant_dot_simd(quant_format f);
bool old_quant_dot_set_shape(quant_format f, quant_dot_shape s);
void old_gemv_fp16_cpu(const gemv_args *a);
bool old_gemv_fp16_set_rows(int rows);

/* gemv.c's RL_REQUIRE fails through this (harness/util.c's in the
 * experiments, which this tool does not link): say what, and stop. */
void rl_fail_check(const char *library, const char *message, const char *expr, const char *file, int line)
{
    fprintf(stderr, "ab-decode: %s error: %s (%s at %s:%d)\n", library, message, expr, file, line);
    exit(1);
}

enum { MOST_ROUNDS = 10000 };

/* Tokens a call (--tokens): F16's GEMV takes 1 to GEMV_MAX_BATCH. */
static int tokens = 1;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *must_alloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "ab-decode: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* One side of the comparison: F16's GEMV, or an integer row kernel. */
typedef struct side {
    void (*gemv)(const gemv_args *a);
    quant_dot_rows dot;
} side;

/* One call of a side: the GEMV, or quant_decode_int8's call with this
 * side's row kernel (x quantized once, rows split over the threads). */
static void decode(side s, quant_format f, float *y, const void *w, const fp16 *x, int rows, int k,
                   void *scratch)
{
    if (s.gemv) {
        gemv_args a = {y, w, x, rows, k, tokens, NULL, NULL};
        s.gemv(&a);
        return;
    }
    quant_args a = {f, y, w, x, rows, k, 1, scratch, NULL};
    quant_decode_int8_rows(&a, s.dot, quant_isa_best());
}

/* The first output outside the bound, or -1 (outputs token by token,
 * the bound a token's row's). */
static int first_wrong(const float *y, const double *ref, const double *bound, int rows)
{
    for (int r = 0; r < rows * tokens; r++)
        if (!isfinite(y[r]) || fabs(y[r] - ref[r]) > bound[r])
            return r;
    return -1;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double random_unit(void) { return 2.0 * rand() / RAND_MAX - 1.0; }

/* The integer formats' shape on both sides: this build's default unless
 * the command line gives one (rows == 0: none given). */
static quant_dot_shape asked;
/* F16's rows a step on each side: this build's default on both unless
 * --f16-rows OLD:NEW gives them (a shape against another, in one build
 * when REV is this tree). */
static int f16_rows[2];

/* Both sides of format f in the same shape; false when the old build has
 * no such shape. */
static bool pick_sides(quant_format f, side sides[2], char *what, size_t len)
{
    if (f == QF_F16) {
        int r_old = f16_rows[0] ? f16_rows[0] : gemv_fp16_rows_default();
        int r_new = f16_rows[1] ? f16_rows[1] : gemv_fp16_rows_default();
        if (!gemv_fp16_set_rows(r_new) || !old_gemv_fp16_set_rows(r_old))
            return false;
        sides[0] = (side){old_gemv_fp16_cpu, NULL}, sides[1] = (side){gemv_fp16_cpu, NULL};
        if (r_old == r_new)
            snprintf(what, len, "%d rows", r_new);
        else
            snprintf(what, len, "old %d rows, new %d rows", r_old, r_new);
        return true;
    }
    quant_dot_shape shape = asked.rows ? asked : quant_dot_shape_default(f);
    if (!quant_dot_set_shape(f, shape) || !old_quant_dot_set_shape(f, shape))
        return false;
    sides[0] = (side){NULL, old_quant_dot_simd(f)}, sides[1] = (side){NULL, quant_dot_simd(f)};
    snprintf(what, len, "%d row%s, %d B ahead", shape.rows, shape.rows > 1 ? "s" : "", shape.prefetch);
    return true;
}

/* ROUNDS calls of each side, alternating which goes first: the best and
 * the median of each, and their ratios. */
static void time_both(const side sides[2], quant_format f, float *y, const void *w, const fp16 *x, int rows,
                      int k, void *scratch, int rounds, const char *what)
{
    double *t[2] = {must_alloc(sizeof(double) * rounds), must_alloc(sizeof(double) * rounds)};
    for (int i = 0; i < rounds; i++)
        for (int j = 0; j < 2; j++) {
            int s = (i + j) % 2;
            double t0 = now();
            decode(sides[s], f, y, w, x, rows, k, scratch);
            t[s][i] = now() - t0;
        }
    for (int s = 0; s < 2; s++)
        qsort(t[s], rounds, sizeof(double), by_value);
    printf("%-4s %9.1f %9.1f %9.1f %9.1f %12.3f %12.3f  %s\n", quant_formats[f].name, 1e6 * t[0][0],
           1e6 * t[1][0], 1e6 * t[0][rounds / 2], 1e6 * t[1][rounds / 2], t[1][0] / t[0][0],
           t[1][rounds / 2] / t[0][rounds / 2], what);
    free(t[0]), free(t[1]);
}

/* One format on fresh random inputs: validate both sides, then time
 * them; false when a side is wrong. */
static bool compare_format(quant_format f, int rows, int k, int rounds)
{
    side sides[2];
    char what[32];
    if (!pick_sides(f, sides, what, sizeof what)) {
        printf("%-4s the old build has no such shape: not compared\n", quant_formats[f].name);
        return true;
    }
    size_t bytes = quant_row_bytes(f, k) * (size_t)rows;
    size_t outputs = (size_t)rows * tokens;
    fp16 *w16 = must_alloc(sizeof(fp16) * (size_t)rows * k), *x = must_alloc(sizeof(fp16) * k * tokens);
    for (size_t i = 0; i < (size_t)rows * k; i++)
        w16[i] = float_to_fp16((float)random_unit());
    for (int i = 0; i < k * tokens; i++)
        x[i] = float_to_fp16((float)random_unit());
    void *w = must_alloc(bytes), *scratch = must_alloc(quant_x8_bytes(k));
    quant_encode_matrix(f, w, w16, rows, k);
    float *y = must_alloc(sizeof(float) * outputs);
    double *ref = must_alloc(sizeof(double) * outputs), *bound = must_alloc(sizeof(double) * outputs);
    quant_reference(ref, f, w, x, rows, k, tokens, false);
    for (int t = 0; t < tokens; t++)
        quant_int8_error_bound(bound + (size_t)t * rows, f, w, x + (size_t)t * k, rows, k);

    static const char *const NAME[2] = {"old", "new"};
    bool ok = true;
    for (int s = 0; s < 2; s++) {
        memset(y, 0xFF, sizeof(float) * outputs); /* NaN: an unwritten output fails */
        decode(sides[s], f, y, w, x, rows, k, scratch);
        int r = first_wrong(y, ref, bound, rows);
        if (r >= 0) {
            printf("%-4s %s is wrong: row %d gave %g, the reference %g (bound %g)\n", quant_formats[f].name,
                   NAME[s], r, y[r], ref[r], bound[r]);
            ok = false;
        }
    }
    if (ok)
        time_both(sides, f, y, w, x, rows, k, scratch, rounds, what);
    free(w16), free(x), free(w), free(scratch), free(y), free(ref), free(bound);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--tokens")) {
        tokens = atoi(argv[2]);
        if (tokens < 1 || tokens > GEMV_MAX_BATCH) {
            fprintf(stderr, "ab-decode: --tokens wants 1 to %d, not '%s'\n", GEMV_MAX_BATCH, argv[2]);
            return 2;
        }
        argc -= 2, argv += 2;
    }
    if (argc > 2 && !strcmp(argv[1], "--f16-rows")) {
        char end;
        if (sscanf(argv[2], "%d:%d%c", &f16_rows[0], &f16_rows[1], &end) != 2 ||
            !gemv_fp16_set_rows(f16_rows[0]) || !gemv_fp16_set_rows(f16_rows[1])) {
            fprintf(stderr, "ab-decode: --f16-rows wants OLD:NEW, rows the F16 GEMV takes at n = 1, "
                            "not '%s'\n", argv[2]);
            return 2;
        }
        argc -= 2, argv += 2;
    }
    bool args = argc == 4 || argc == 5;
    int rows = args ? atoi(argv[1]) : 0, k = args ? atoi(argv[2]) : 0, rounds = args ? atoi(argv[3]) : 0;
    char tail;
    bool shape_ok = argc < 5 || (sscanf(argv[4], "%d:%d%c", &asked.rows, &asked.prefetch, &tail) == 2 &&
                                 quant_dot_set_shape(QF_Q8, asked));
    if (!args || rows < 1 || rows > 65536 || k < QUANT_BLOCK || k > 65536 || k % QUANT_BLOCK || rounds < 3 ||
        rounds > MOST_ROUNDS || !shape_ok) {
        fprintf(stderr, "usage: ab-decode ROWS K ROUNDS [SHAPE] (ROWS 1-65536, K a multiple of 256 up to 65536, "
                        "ROUNDS 3-%d; SHAPE the integer formats' rows:prefetch, rows 1, 2 or 4, prefetch "
                        "0-65536 bytes)\n", MOST_ROUNDS);
        return 2;
    }
    if (quant_isa_best() == QUANT_ISA_C) {
        fprintf(stderr, "ab-decode: this build has no SIMD decode (no AVX2): nothing to compare\n");
        return 77;
    }
    srand(1);
    printf("%d x %d, %d token%s, %d rounds, %d threads; microseconds a call, best and median\n", rows, k,
           tokens, tokens > 1 ? "s" : "", rounds, omp_get_max_threads());
    printf("%-4s %9s %9s %9s %9s %12s %12s  %s\n", "fmt", "old best", "new best", "old med", "new med",
           "new/old best", "new/old med", "shape (both)");
    bool ok = true;
    /* The integer kernels decode one token: at more, F16's GEMV alone. */
    for (quant_format f = QF_F16; f < (tokens > 1 ? QF_F16 + 1 : QF_COUNT); f++)
        ok = compare_format(f, rows, k, rounds) && ok;
    return ok ? 0 : 1;
}

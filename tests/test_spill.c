/*
 * test_spill.c -- experiment 08's spilled GEMV: every variant on the CPU
 * (the slow tier a file in a temporary folder) against the double-
 * precision reference at several splits, rows of whole 4 KiB blocks (the
 * O_DIRECT path) and not (the page cache's), the slow tier's reads (the
 * copy's, the overlapped path's) bit for bit; a folder in memory (tmpfs)
 * refused with the reason; the counted bytes; the zero-copy kernel's
 * schedule (host arithmetic): a slow row in the first block, the slow
 * rows' share in every wave, every row once. The CUDA suite skips without
 * a GPU.
 */
#include "gemv.h"
#include "helpers.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"
#include "spill.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

static char dir[512];
static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(spill_cpu, .init = setup, .fini = teardown);

typedef struct spill_job {
    spill_call call;
} spill_job;

static void launch(void *p) { spill_call_run(&((spill_job *)p)->call); }

/* Every variant at each split of a rows x k matrix. */
static void check_splits(rl_backend *be, int rows, int k, const int *slow_counts, int n)
{
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    size_t nw = (size_t)rows * k;
    fp16 *hw = rl_host_alloc(nw * sizeof(fp16)), *hx = rl_host_alloc((size_t)k * sizeof(fp16));
    rl_fill_uniform_f16(hw, nw, -1, 1, 11);
    rl_fill_uniform_f16(hx, (size_t)k, -1, 1, 12);
    double *want = rl_host_alloc(sizeof(double) * (size_t)rows);
    gemv_reference(want, hw, hx, rows, k, 1);
    spill_tier tier;
    char why[512];
    cr_assert(spill_tier_open(&tier, backend, dir, hw, nw * sizeof(fp16), why, sizeof why), "%s", why);
    fp16 *w = rl_alloc_copy(be, hw, nw * sizeof(fp16)), *x = rl_alloc_copy(be, hx, (size_t)k * sizeof(fp16));
    fp16 *staging = rl_alloc(be, nw * sizeof(fp16));
    float *y = rl_alloc(be, (size_t)rows * sizeof(float));
    int checked = 0, variants = 0;
    for (const spill_variant *v = spill_variants; v->name; v++)
        variants += spill_family.has(v, backend);
    for (int i = 0; i < n; i++) {
        int slow = slow_counts[i], fast = rows - slow;
        spill_args a = {y, w, x, &tier, staging, fast, slow, fast, k, rl_stream(be)};
        for (const spill_variant *v = spill_variants; v->name; v++) {
            if (!spill_family.has(v, backend))
                continue;
            spill_job j = {{backend == KERNEL_CUDA ? v->cuda : v->cpu, a}};
            if (v->gemv) {
                rl_check c = rl_validate_f32(be, launch, &j, y, (size_t)rows, want, gemv_atol(k), 0);
                char msg[256];
                rl_check_describe(&c, msg, sizeof msg);
                cr_assert(c.ok, "%s, %d x %d, %d slow rows: %s", v->name, rows, k, slow, msg);
            } else {
                size_t bytes = (size_t)slow * k * sizeof(fp16);
                rl_poison(be, staging, bytes + 2);
                launch(&j);
                rl_sync(be);
                fp16 *got = rl_download_copy(be, staging, bytes + 2);
                cr_assert(!memcmp(got, hw + (size_t)fast * k, bytes), "%s: %d rows differ", v->name, slow);
                cr_assert_eq(got[(size_t)slow * k], 0xFFFF, "%s wrote past the slow rows", v->name);
                rl_host_free(got);
            }
            checked++;
        }
    }
    cr_assert_eq(variants, 4, "the GEMVs and both tier reads");
    cr_assert_eq(checked, variants * n, "every variant at every split");
    spill_tier_close(&tier);
    rl_free(be, w), rl_free(be, x), rl_free(be, staging), rl_free(be, y);
    rl_host_free(hw), rl_host_free(hx), rl_host_free(want);
}

/* k = 2048: 4 KiB rows, O_DIRECT where the file system has it; 600 slow
 * rows make chunks of 128 rows and a tail. k = 72: rows off the block
 * size, through the page cache. */
Test(spill_cpu, every_variant_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_splits(be, 1000, 2048, (const int[]){0, 1, 100, 600, 1000}, 5);
    check_splits(be, 203, 72, (const int[]){0, 7, 203}, 3);
    rl_backend_close(be);
}

/* A folder whose files live in memory is no slower tier. */
Test(spill_cpu, a_folder_in_memory_is_refused)
{
    struct statfs fs;
    if (statfs("/dev/shm", &fs) != 0 || fs.f_type != 0x01021994)
        cr_skip_test("no tmpfs at /dev/shm to try");
    spill_tier t;
    char why[512];
    fp16 rows[8] = {0};
    cr_assert_not(spill_tier_open(&t, KERNEL_CPU, "/dev/shm", rows, sizeof rows, why, sizeof why));
    cr_assert(strstr(why, "lives in memory"), "%s", why);
    cr_assert_not(spill_tier_open(&t, KERNEL_CPU, "/no/such/folder", rows, sizeof rows, why, sizeof why));
    cr_assert(strstr(why, "/no/such/folder"), "%s", why);
}

Test(spill_cpu, bytes_are_the_counted_formula)
{
    const spill_variant *seq = &spill_variants[0], *tier = &spill_variants[2], *own = &spill_variants[3];
    cr_assert(seq->gemv && !tier->gemv && !own->gemv);
    cr_assert_str_eq(own->role, "slow_tier_overlapped");
    cr_assert_float_eq(spill_bytes(seq, 900, 100, 4096), 2.0 * 1000 * 4096 + 2.0 * 4096 + 4.0 * 1000, 1e-6);
    cr_assert_float_eq(spill_bytes(tier, 900, 100, 4096), 2.0 * 100 * 4096, 1e-6);
    cr_assert_float_eq(spill_bytes(own, 900, 100, 4096), 2.0 * 100 * 4096, 1e-6);
}

/* ---- the zero-copy kernel's schedule ----------------------------------------------- */

/* Every row of both tiers falls to exactly one block's warp; returns the
 * index of the first slow block (-1: none). `wave`: blocks resident at
 * once; each wave's (and each prefix's) slow blocks are their share. */
static int check_schedule(int fast_rows, int slow_rows, int wave)
{
    spill_launch g = spill_grid(fast_rows, slow_rows);
    cr_assert_eq(g.fast_blocks, (fast_rows + 7) / 8);
    cr_assert_eq(g.slow_blocks, (slow_rows + 7) / 8);
    cr_assert_eq(g.blocks, (unsigned)(g.fast_blocks + g.slow_blocks));
    unsigned char *fast = calloc((size_t)fast_rows + 1, 1), *slow = calloc((size_t)slow_rows + 1, 1);
    cr_assert(fast && slow);
    int first_slow = -1, slow_so_far = 0, n = (int)g.blocks;
    for (int b = 0; b < n; b++) {
        spill_block k = spill_schedule(b, g.fast_blocks, g.slow_blocks);
        cr_assert_eq(k.first % SPILL_BLOCK_WARPS, 0, "block %d starts at row %d", b, k.first);
        for (int w = 0; w < SPILL_BLOCK_WARPS; w++) {
            int row = k.first + w;
            if (k.slow && row < slow_rows)
                slow[row]++;
            else if (!k.slow && row < fast_rows)
                fast[row]++;
        }
        slow_so_far += k.slow;
        if (k.slow && first_slow < 0)
            first_slow = b;
        /* blocks 0..b hold their share of the slow blocks, to within one */
        double share = (double)(b + 1) * g.slow_blocks / n;
        cr_assert(slow_so_far >= share - 1e-9 && slow_so_far <= share + 1,
                  "%d + %d rows: %d slow blocks among the first %d, their share %.2f", fast_rows, slow_rows,
                  slow_so_far, b + 1, share);
        if ((b + 1) % wave == 0 || b == n - 1) { /* a whole wave: its share to within one */
            int start = b + 1 - ((b + 1) % wave ? (b + 1) % wave : wave), in_wave = 0;
            for (int c = start; c <= b; c++)
                in_wave += spill_schedule(c, g.fast_blocks, g.slow_blocks).slow;
            double want = (double)(b + 1 - start) * g.slow_blocks / n;
            cr_assert(fabs(in_wave - want) <= 1 + 1e-9, "wave from block %d: %d slow blocks, its share %.2f",
                      start, in_wave, want);
        }
    }
    for (int r = 0; r < fast_rows; r++)
        cr_assert_eq(fast[r], 1, "%d + %d rows: fast row %d taken %d times", fast_rows, slow_rows, r, fast[r]);
    for (int r = 0; r < slow_rows; r++)
        cr_assert_eq(slow[r], 1, "%d + %d rows: slow row %d taken %d times", fast_rows, slow_rows, r, slow[r]);
    cr_assert_eq(slow_so_far, g.slow_blocks);
    free(fast);
    free(slow);
    return first_slow;
}

/* The exp-08 GPU shape (65536 rows, f = 0.1: 6552 slow) on an H100's
 * 132 SMs x 4 blocks, and splits with tails: a slow block comes first
 * (the slow tier's long rows start with the launch), every wave carries
 * the slow tier's share, every row falls to one warp. */
Test(spill_cpu, the_schedule_starts_the_slow_tier_in_the_first_wave)
{
    cr_assert_eq(check_schedule(65536 - 6552, 6552, 132 * 4), 0, "a slow block first");
    cr_assert_eq(check_schedule(65536 - 32768, 32768, 132 * 4), 0);
    cr_assert_eq(check_schedule(1000 - 1, 1, 7), 0, "a single slow row, in block 0");
    cr_assert_eq(check_schedule(203, 0, 7), -1, "no slow rows, no slow block");
    cr_assert_eq(check_schedule(0, 203, 7), 0, "slow rows only");
    cr_assert_eq(check_schedule(13, 29, 3), 0, "tails in both tiers");
    /* the old order (fast rows first) put the first slow block after every fast one */
    spill_launch g = spill_grid(65536 - 6552, 6552);
    int slow_in_first_wave = 0;
    for (int b = 0; b < 132 * 4; b++)
        slow_in_first_wave += spill_schedule(b, g.fast_blocks, g.slow_blocks).slow;
    cr_assert(slow_in_first_wave >= 52 && slow_in_first_wave <= 54,
              "f = 0.1: %d of the first wave's 528 blocks slow, a tenth", slow_in_first_wave);
    spill_launch none = spill_grid(0, 0);
    cr_assert_eq(none.blocks, 0u, "nothing to read: no launch");
}

Test(cuda_spill, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    make_temp_dir(dir, sizeof dir);
    check_splits(be, 1000, 2048, (const int[]){0, 1, 100, 600, 1000}, 5);
    rm_tree(dir);
    rl_backend_close(be);
}

/*
 * test_spill.c -- experiment 08's spilled GEMV: every variant on the CPU
 * (the slow tier a file in a temporary folder) against the double-
 * precision reference at several splits, rows of whole 4 KiB blocks (the
 * O_DIRECT path) and not (the page cache's), the slow tier's copy bit for
 * bit; a folder in memory (tmpfs) refused with the reason; the counted
 * bytes. The CUDA suite skips without a GPU.
 */
#include "gemv.h"
#include "helpers.h"
#include "rooflab.h"
#include "spill.h"

#include <criterion/criterion.h>
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
    int checked = 0;
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
    cr_assert_eq(checked, 3 * n, "every variant at every split");
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
    const spill_variant *seq = &spill_variants[0], *tier = &spill_variants[2];
    cr_assert(seq->gemv && !tier->gemv);
    cr_assert_float_eq(spill_bytes(seq, 900, 100, 4096), 2.0 * 1000 * 4096 + 2.0 * 4096 + 4.0 * 1000, 1e-6);
    cr_assert_float_eq(spill_bytes(tier, 900, 100, 4096), 2.0 * 100 * 4096, 1e-6);
}

Test(cuda_spill, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    make_temp_dir(dir, sizeof dir);
    check_splits(be, 1000, 2048, (const int[]){0, 1, 100, 600, 1000}, 5);
    rm_tree(dir);
    rl_backend_close(be);
}

/*
 * test_range.c -- rl_range_push / rl_range_pop (backend.c): NVTX ranges
 * on the CUDA backend, nothing elsewhere. On the CPU backend they do
 * nothing but keep count: nested ranges close to none, a pop with none
 * open is ignored, and the backend works as before. The CUDA table's own
 * functions need no device (NVTX with no tool attached does nothing; a
 * build without CUDA has none): they are called on a backend that was
 * never opened.
 */
#include "helpers.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <string.h>

Test(range, push_and_pop_on_the_cpu_backend_are_balanced_no_ops)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    rl_range_push(be, "layer");
    rl_range_push(be, "qkv");
    rl_range_push(be, NULL);
    cr_assert_eq(be->ranges, 3);
    for (int i = 0; i < 3; i++)
        rl_range_pop(be);
    cr_assert_eq(be->ranges, 0);
    rl_range_pop(be); /* none open: ignored */
    cr_assert_eq(be->ranges, 0);
    rl_range_push(be, "after");
    cr_assert_eq(be->ranges, 1);
    rl_range_pop(be);

    float host[4] = {1, 2, 3, 4}, back[4] = {0};
    void *dev = rl_alloc_copy(be, host, sizeof host);
    rl_download(be, back, dev, sizeof back);
    rl_sync(be);
    cr_assert_eq(memcmp(host, back, sizeof host), 0);
    rl_free(be, dev);
    rl_backend_close(be);
}

Test(range, the_cuda_tables_ranges_need_no_device)
{
    rl_backend fake = {.ops = &rl_cuda_ops};
    rl_range_push(&fake, "no device");
    rl_range_pop(&fake);
    rl_range_pop(&fake);
    cr_assert_eq(fake.ranges, 0);
}

/*
 * test_families.c -- every kernel family's one table is well formed: the
 * numbers and names that CSVs, --variant and --list use are unique, every
 * row says what it does and runs on at least one backend, and each role an
 * experiment looks a variant up by names one row.
 */
#include "busy.h"
#include "fusion.h"
#include "gemm.h"
#include "gemv.h"
#include "launch.h"
#include "quant.h"

#include <criterion/criterion.h>
#include <string.h>

/* Every family; a new one is added here. */
static const kernel_family *const FAMILIES[] = {&busy_family, &fusion_family, &gemm_family,
                                                &gemv_family, &launch_family, &quant_family,
                                                &step_family, NULL};

static void check_family(const kernel_family *f)
{
    int rows = 0;
    for (int i = 0; kernel_row(f, i)->name; i++, rows++) {
        const kernel_variant *a = kernel_row(f, i);
        cr_assert(a->number > 0, "%s row %d: numbers start at 1", f->name, i);
        cr_assert(a->what && *a->what, "%s %s says what it does", f->name, a->name);
        cr_assert(f->has(a, KERNEL_CPU) || f->has(a, KERNEL_CUDA), "%s %s runs somewhere", f->name,
                  a->name);
        for (int j = i + 1; kernel_row(f, j)->name; j++) {
            const kernel_variant *b = kernel_row(f, j);
            cr_assert_neq(a->number, b->number, "%s: number %d twice", f->name, a->number);
            cr_assert_str_neq(a->name, b->name, "%s: name %s twice", f->name, a->name);
            if (a->role && b->role)
                cr_assert_str_neq(a->role, b->role, "%s: role %s twice", f->name, a->role);
        }
    }
    cr_assert_gt(rows, 0, "%s has rows", f->name);
    cr_assert_str_neq(f->cpu_file, "", "%s names its files", f->name);
}

Test(families, every_table_is_well_formed)
{
    for (const kernel_family *const *f = FAMILIES; *f; f++)
        check_family(*f);
}

/* The roles experiments look variants up by: renaming one would silently
 * drop a verdict or a sweep, so each must still name a row. */
static const struct {
    const kernel_family *f;
    const char *role;
} USED_ROLES[] = {
    {&launch_family, "synchronous"}, {&launch_family, "asynchronous"}, {&launch_family, "graph"},
    {&launch_family, "floor"}, {&launch_family, "serial"}, /* experiment 06 */
    {&step_family, "op_by_op"}, {&step_family, "graph"},
    {&busy_family, "compute"}, {&busy_family, "latency"}, {&busy_family, "bandwidth"}, /* 01 */
};

Test(families, the_roles_experiments_use_name_a_row)
{
    for (size_t i = 0; i < sizeof USED_ROLES / sizeof USED_ROLES[0]; i++) {
        const kernel_family *f = USED_ROLES[i].f;
        int found = 0;
        for (int r = 0; kernel_row(f, r)->name; r++)
            found += kernel_row(f, r)->role && !strcmp(kernel_row(f, r)->role, USED_ROLES[i].role);
        cr_assert_eq(found, 1, "%s: role %s names one row", f->name, USED_ROLES[i].role);
    }
}

#ifdef RL_HAVE_CUDA
/* A build with CUDA has every CUDA launcher the table names: none is NULL
 * by accident of CUDA_ONLY. */
Test(families, a_cuda_build_links_the_cuda_launchers)
{
    int cuda = 0;
    for (const kernel_family *const *f = FAMILIES; *f; f++)
        for (int i = 0; kernel_row(*f, i)->name; i++)
            cuda += (*f)->has(kernel_row(*f, i), KERNEL_CUDA);
    cr_assert_gt(cuda, 0);
}
#endif

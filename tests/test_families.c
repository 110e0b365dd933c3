/*
 * test_families.c -- every kernel family's one table is well formed: the
 * numbers and names that CSVs, --variant and --list use are unique, every
 * row says what it does and runs on at least one backend, and each role an
 * experiment looks a variant up by names one row.
 */
#include "fusion.h"
#include "gemv.h"
#include "quant.h"

#include <criterion/criterion.h>
#include <string.h>

/* Every family; a new one is added here. */
static const kernel_family *const FAMILIES[] = {&fusion_family, &gemv_family, &quant_family, NULL};

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

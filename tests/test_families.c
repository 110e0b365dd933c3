/*
 * test_families.c -- every kernel family's one table is well formed: the
 * numbers and names that CSVs, --variant and --list use are unique, every
 * row says what it does and runs on at least one backend, each role an
 * experiment or a chart looks a variant up by names one row, and no chart
 * names a variant (it reads roles and key words from the CSV's header).
 */
#include "attention.h"
#include "busy.h"
#include "helpers.h"
#include "fusion.h"
#include "gemm.h"
#include "gemv.h"
#include "launch.h"
#include "layer.h"
#include "moe.h"
#include "quant.h"
#include "spill.h"

#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every family; a new one is added here. */
static const kernel_family *const FAMILIES[] = {&attention_family, &busy_family, &fusion_family,
                                                &gemm_family, &gemv_family, &launch_family,
                                                &layer_family, &moe_family, &quant_family, &spill_family,
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
    {&gemv_family, "library"}, /* experiment 02's chart (role_gemv_library) */
    {&attention_family, "decode_fused"}, {&attention_family, "decode_materialized"}, /* 07 */
    {&attention_family, "prefill_fused"}, {&attention_family, "prefill_materialized"},
    {&spill_family, "sequential"}, {&spill_family, "overlapped"}, {&spill_family, "slow_tier"}, /* 08 */
    {&moe_family, "active"}, {&moe_family, "dense"},
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

/* A chart that names a variant never draws the one a student adds beside
 * it (issue 24): plot.gp finds rows by role and names them by the words
 * the run wrote into the CSV's header. So no variant's name appears
 * quoted in any chart script. */
Test(families, no_chart_names_a_variant)
{
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/experiments/*/plot.gp", RL_SOURCE_ROOT);
    glob_t g;
    cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no chart scripts under %s", pattern);
    char style[512];
    snprintf(style, sizeof style, "%s/plots/style.gp", RL_SOURCE_ROOT);
    for (size_t s = 0; s <= g.gl_pathc; s++) {
        const char *path = s < g.gl_pathc ? g.gl_pathv[s] : style;
        char *text = read_file(path, NULL);
        cr_assert_not_null(text, "cannot read %s", path);
        for (const kernel_family *const *f = FAMILIES; *f; f++)
            for (int i = 0; kernel_row(*f, i)->name; i++) {
                char single[96], dbl[96];
                snprintf(single, sizeof single, "'%s'", kernel_row(*f, i)->name);
                snprintf(dbl, sizeof dbl, "\"%s\"", kernel_row(*f, i)->name);
                cr_expect(!strstr(text, single) && !strstr(text, dbl),
                          "%s names the %s variant %s", path, (*f)->name, kernel_row(*f, i)->name);
            }
        free(text);
    }
    cr_assert_geq(g.gl_pathc, 6, "every experiment's chart script was read");
    globfree(&g);
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

/*
 * test_layering.c -- the kernels know nothing of the harness: no file
 * under kernels/ includes rooflab.h or any other harness header, so that a
 * student's kernel builds and runs on its own, and what the harness does
 * (timing, tuning, validation) stays on its side. The one exception is
 * harness/check.h, the CUDA error checks, which says it depends on nothing
 * else and is meant for kernels. An include resolves as the compiler's
 * does: beside the file, then -Iharness, then -Ikernels.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ALLOWED[] = {"check.h"};

/* The real path of name included from a file in dir (quoted: dir first),
 * or false where no file of that name is found (a system header). */
static bool resolve_include(const char *dir, const char *name, bool quoted, char *real)
{
    const char *search[] = {quoted ? dir : NULL, RL_SOURCE_ROOT "/harness", RL_SOURCE_ROOT "/kernels"};
    for (size_t i = 0; i < sizeof search / sizeof search[0]; i++) {
        char path[PATH_MAX];
        if (!search[i])
            continue;
        snprintf(path, sizeof path, "%s/%s", search[i], name);
        if (realpath(path, real))
            return true;
    }
    return false;
}

static bool is_allowed_harness_header(const char *real)
{
    char harness[PATH_MAX];
    cr_assert_not_null(realpath(RL_SOURCE_ROOT "/harness", harness));
    size_t n = strlen(harness);
    if (strncmp(real, harness, n) || real[n] != '/')
        return true; /* not the harness's */
    for (size_t i = 0; i < sizeof ALLOWED / sizeof ALLOWED[0]; i++)
        if (!strcmp(real + n + 1, ALLOWED[i]))
            return true;
    return false;
}

/* The first harness header path includes, into found; false: none. */
static bool includes_harness(const char *path, char *found, size_t len)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char copy[PATH_MAX], line[1024], name[512], real[PATH_MAX], open;
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    bool hit = false;
    while (!hit && fgets(line, sizeof line, f))
        if (sscanf(line, " # include %c%511[^\">]", &open, name) == 2 && (open == '"' || open == '<') &&
            resolve_include(dir, name, open == '"', real) && !is_allowed_harness_header(real)) {
            snprintf(found, len, "%s includes %s", path, real);
            hit = true;
        }
    fclose(f);
    return hit;
}

static char offence[2 * PATH_MAX];
static int offences;

static int check_source(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    static const char *const EXTS[] = {".c", ".h", ".cu", ".cuh", ".cpp"};
    const char *dot = strrchr(path, '.');
    if (type != FTW_F || !dot)
        return 0;
    for (size_t i = 0; i < sizeof EXTS / sizeof EXTS[0]; i++)
        if (!strcmp(dot, EXTS[i]) && includes_harness(path, offence, sizeof offence))
            offences++;
    return 0;
}

Test(layering, no_kernel_includes_a_harness_header)
{
    offences = 0;
    cr_assert_eq(nftw(RL_SOURCE_ROOT "/kernels", check_source, 16, FTW_PHYS), 0);
    cr_assert_eq(offences, 0, "%d kernel files include the harness, e.g. %s", offences, offence);
}

/* The check itself finds an include of rooflab.h, quoted or angled, and
 * lets check.h and the kernels' own headers pass. */
Test(layering, the_check_finds_rooflab_h)
{
    char dir[512], path[600], found[2 * PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/kernel.c", dir);
    const char *cases[][2] = {{"#include \"rooflab.h\"\n", "yes"}, {"#  include <rl_library.h>\n", "yes"},
                              {"#include \"check.h\"\n", "no"},   {"#include \"quant.h\"\n", "no"},
                              {"#include <stdio.h>\n", "no"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(cases[i][0], f);
        fclose(f);
        cr_expect_eq(includes_harness(path, found, sizeof found), !strcmp(cases[i][1], "yes"), "%s",
                     cases[i][0]);
    }
    rm_tree(dir);
}

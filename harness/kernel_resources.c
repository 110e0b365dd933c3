/*
 * kernel_resources.c -- a CUDA run's record of the kernels it may launch,
 * in its CSV header: for each kernel of the .cu files of the experiment's
 * kernel families, what ptxas gave it for this device's SM (registers,
 * stack, spills, static shared memory, launch bounds) and the blocks of
 * its launch bound an SM holds, from the table the build generated
 * (internal.h, rl_kernel_resources). A GPU whose SM the build lacks runs
 * the PTX the driver compiles, whose registers nobody recorded: the
 * header says so.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void rl_kernel_resource_text(const rl_kernel_resource *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s sm_%d: %d registers, %d B stack, %d B spilled, %d B static shared",
             r->file, r->sm, r->registers, r->stack_bytes, r->spill_bytes, r->shared_bytes);
    if (r->max_threads > 0)
        rl_appendf(buf, len, "; launch bound %d threads, min %d blocks; %d blocks per SM (%d of %d "
                   "warps), limited by %s", r->max_threads, r->min_blocks, r->blocks, r->warps,
                   r->max_warps, r->limit);
    else
        rl_appendf(buf, len, "; no launch bound (its block size is the launcher's)");
}

/* "gemv_dp4a<q4_block, 1, false>" -> "kernel_resources_gemv_dp4a_q4_block_1_false" */
static void key_of(const char *kernel, char *key, size_t len)
{
    size_t n = (size_t)snprintf(key, len, "kernel_resources_");
    bool gap = false;
    for (const char *p = kernel; *p && n + 2 < len; p++) {
        if (isalnum((unsigned char)*p)) {
            if (gap && key[n - 1] != '_')
                key[n++] = '_';
            key[n++] = *p;
            gap = false;
        } else {
            gap = true;
        }
    }
    key[n] = '\0';
}

static bool is_file(const char *cuda_file, const char *file)
{
    return cuda_file && !strncmp(file, "kernels/", 8) && !strcmp(file + 8, cuda_file);
}

/* Whether the kernel's file is one of the experiment's families' .cu files. */
static bool of_families(const rl_experiment *exp, const char *file)
{
    for (const kernel_family *const *f = exp->families; f && *f; f++)
        if (is_file((*f)->cuda_file, file) || is_file((*f)->also_cuda_file, file))
            return true;
    return false;
}

int rl_kernel_resources_lines(const rl_experiment *exp, int sm, const rl_kernel_resource *table,
                              rl_meta_line *out, int max)
{
    int n = 0;
    for (const rl_kernel_resource *r = table; r->kernel && n < max; r++)
        if (r->sm == sm && of_families(exp, r->file)) {
            key_of(r->kernel, out[n].key, sizeof out[n].key);
            rl_kernel_resource_text(r, out[n].value, sizeof out[n].value);
            n++;
        }
    return n;
}

void rl_kernel_resources_meta(rl_ctx *ctx, const rl_kernel_resource *table)
{
    if (ctx->kind != RL_CUDA || !ctx->exp->families)
        return;
    enum { MOST = 128 };
    static rl_meta_line lines[MOST];
    int sm = 10 * ctx->dev->cc_major + ctx->dev->cc_minor;
    int n = rl_kernel_resources_lines(ctx->exp, sm, table, lines, MOST);
    for (int i = 0; i < n; i++)
        rl_meta(ctx, lines[i].key, "%s", lines[i].value);
    if (n)
        rl_meta(ctx, "kernel_resources", "%d kernels of this experiment's families for sm_%d, as "
                "ptxas built them (%s; the build's kernel-resources.txt has every SM)", n, sm,
                rl_kernel_resources_nvcc);
    else
        rl_meta(ctx, "kernel_resources", "none recorded for sm_%d: this build holds no code for "
                "it (the driver compiled the PTX), or was built without nvcc", sm);
}

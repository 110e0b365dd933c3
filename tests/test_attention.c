/*
 * test_attention.c -- experiment 07's kernels against the double-precision
 * reference: every variant, decode at group sizes 1 to 8 and head
 * dimensions 64 and 128, cache lengths that leave every tail of the
 * blocks (32 keys, 8 / G keys per score step, 4 values per accumulate
 * step), prefill at lengths off the tiles. A kernel that drops one key
 * must fail at the tolerance the experiment uses. The counted bytes are
 * the formula. The split-K decode's launch plan is host-only C,
 * checked here without a GPU. The CUDA suite skips without a GPU.
 */
#include "attention.h"
#include "helpers.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

typedef struct shape {
    int batch, heads_q, heads_kv, dim, ctx;
} shape;

static const shape DECODE_SHAPES[] = {
    {1, 8, 8, 128, 1},   {3, 8, 8, 128, 33},  {2, 4, 2, 64, 31},   {1, 8, 2, 128, 100},
    {2, 16, 2, 64, 257}, {1, 32, 8, 128, 64}, {1, 8, 1, 128, 2047}, {4, 4, 4, 64, 95},
};
/* The CPU takes any n; the GPU's fused prefill takes n in tiles of 64. */
static const int PREFILL_N_CPU[] = {1, 5, 127, 129, 300};
static const int PREFILL_N_CUDA[] = {64, 128, 320};

typedef struct job {
    attention_call call;
} job;

static void launch(void *p) { attention_call_run(&((job *)p)->call); }

static attention_args args_for(attention_phase ph, const shape *s)
{
    return ph == ATTN_DECODE
               ? (attention_args){.batch = s->batch, .heads_q = s->heads_q, .heads_kv = s->heads_kv,
                                  .ctx = s->ctx, .dim = s->dim}
               : (attention_args){.batch = s->batch, .heads_q = 1, .heads_kv = 1, .ctx = s->ctx,
                                  .dim = s->dim};
}

static size_t elems_q(attention_phase ph, const attention_args *a)
{
    return (ph == ATTN_DECODE ? (size_t)a->batch * a->heads_q : (size_t)a->batch * a->ctx) * a->dim;
}

static size_t elems_kv(attention_phase ph, const attention_args *a)
{
    return (size_t)a->batch * (ph == ATTN_DECODE ? a->heads_kv : 1) * a->ctx * a->dim;
}

/* Runs variant v on fresh random inputs of shape a, the reference beside
 * it computed for ref_ctx keys (a->ctx unless a test makes them differ),
 * and returns the check. */
static rl_check run_variant(rl_backend *be, const attention_variant *v, attention_args a, int ref_ctx,
                            uint64_t seed)
{
    attention_phase ph = v->phase;
    size_t nq = elems_q(ph, &a), nkv = elems_kv(ph, &a);
    attention_args ra = a;
    ra.ctx = ref_ctx;
    size_t nkv_ref = elems_kv(ph, &ra) > nkv ? elems_kv(ph, &ra) : nkv;
    fp16 *hq = rl_host_alloc(nq * sizeof(fp16)), *hk = rl_host_alloc(nkv_ref * sizeof(fp16)),
         *hv = rl_host_alloc(nkv_ref * sizeof(fp16));
    rl_fill_uniform_f16(hq, nq, -1, 1, seed);
    rl_fill_uniform_f16(hk, nkv_ref, -1, 1, seed + 1);
    rl_fill_uniform_f16(hv, nkv_ref, -1, 1, seed + 2);
    /* the reference's K and V of ref_ctx keys per head; the kernel reads its
     * own a.ctx keys per head out of the same rows */
    double *want = rl_host_alloc(nq * sizeof(double));
    ra.q = hq, ra.k = hk, ra.v = hv;
    attention_reference(want, &ra, ph, 0, nq / a.dim);

    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    fp16 *q = rl_alloc(be, nq * sizeof(fp16)), *k = rl_alloc(be, nkv_ref * sizeof(fp16)),
         *val = rl_alloc(be, nkv_ref * sizeof(fp16));
    rl_upload(be, q, hq, nq * sizeof(fp16));
    rl_upload(be, k, hk, nkv_ref * sizeof(fp16));
    rl_upload(be, val, hv, nkv_ref * sizeof(fp16));
    float *out = rl_alloc(be, nq * sizeof(float));
    size_t scratch_bytes = attention_scratch_bytes(v, backend, &a);
    void *scratch = scratch_bytes ? rl_alloc(be, scratch_bytes) : NULL;
    a.out = out, a.q = q, a.k = k, a.v = val, a.scratch = scratch, a.stream = rl_stream(be);
    job j = {{backend == KERNEL_CUDA ? v->cuda : v->cpu, a}};
    rl_check c = rl_validate_f32(be, launch, &j, out, nq, want, attention_atol(v, backend, false), ATTENTION_RTOL);

    rl_free(be, q), rl_free(be, k), rl_free(be, val), rl_free(be, out), rl_free(be, scratch);
    rl_host_free(hq), rl_host_free(hk), rl_host_free(hv), rl_host_free(want);
    return c;
}

static void check_shape(rl_backend *be, const attention_variant *v, const shape *s, uint64_t seed)
{
    attention_args a = args_for(v->phase, s);
    rl_check c = run_variant(be, v, a, a.ctx, seed);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(c.ok, "%s %s (B %d, %d/%d heads, d %d, ctx %d): %s", rl_backend_name(rl_kind(be)),
              v->name, s->batch, s->heads_q, s->heads_kv, s->dim, s->ctx, msg);
}

static void check_table(rl_backend *be, const int *prefill_n, size_t n_prefill)
{
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU, checked = 0;
    uint64_t seed = 700;
    for (const attention_variant *v = attention_variants; v->name; v++) {
        if (!attention_family.has(v, backend))
            continue;
        if (v->phase == ATTN_DECODE)
            for (size_t i = 0; i < sizeof DECODE_SHAPES / sizeof DECODE_SHAPES[0]; i++, checked++)
                check_shape(be, v, &DECODE_SHAPES[i], seed += 3);
        else
            for (size_t i = 0; i < n_prefill; i++)
                for (int dim = 64; dim <= 128; dim *= 2, checked++)
                    check_shape(be, v, &(shape){2, 1, 1, dim, prefill_n[i]}, seed += 3);
    }
    cr_assert_gt(checked, 30, "the table was walked");
}

Test(attention_cpu, every_variant_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_table(be, PREFILL_N_CPU, sizeof PREFILL_N_CPU / sizeof PREFILL_N_CPU[0]);
    rl_backend_close(be);
}

/* ATTENTION_ATOL says it fails a kernel that drops one key (an error of
 * ~0.5 / ctx): each decode variant over ctx - 1 keys, against the
 * reference over ctx, must fail, at the longest cache the experiment runs. */
Test(attention_cpu, a_kernel_that_drops_the_last_key_fails_validation)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    int checked = 0;
    for (const attention_variant *v = attention_variants; v->name; v++) {
        if (v->phase != ATTN_DECODE)
            continue;
        /* one sequence, one KV head: the first ctx - 1 rows of K and V are
         * the kernel's whole cache, the reference's but the last key */
        attention_args a = args_for(ATTN_DECODE, &(shape){1, 8, 1, 128, 8192});
        int ref_ctx = a.ctx;
        a.ctx--;
        rl_check c = run_variant(be, v, a, ref_ctx, 41);
        cr_assert_not(c.ok, "%s over %d keys passed against %d", v->name, a.ctx, ref_ctx);
        checked++;
    }
    cr_assert_eq(checked, 2);
    rl_backend_close(be);
}

/* Bad shapes are refused with the reason, not computed wrong. */
Test(attention_cpu, unsupported_groups_are_refused)
{
    char cmd[1024], out[4096], err[4096];
    snprintf(cmd, sizeof cmd, "%s/exp-07 --backend cpu --shape 1,24,8,128,64", RL_BUILD_DIR);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), RL_EXIT_USAGE, "%s", err);
    cr_assert(strstr(err, "HQ / HKV of 1, 2, 4 or 8"), "%s", err);
}

/* The count: KV bytes = B x L x h_kv x d x 2 tensors x 2 B; q in,
 * out FP32; the materialized path adds its scores (16 B each on the CPU,
 * 12 B on the GPU); prefill's n x n scores dwarf Q, K, V and O. */
Test(attention_cpu, bytes_are_the_counted_formula)
{
    attention_args a = {.batch = 4, .heads_q = 32, .heads_kv = 8, .ctx = 2048, .dim = 128};
    double kv = 4.0 * 2048 * 8 * 128 * 2 * 2, io = 4.0 * 32 * 128 * (2 + 4), scores = 4.0 * 32 * 2048;
    cr_assert_float_eq(attention_kv_bytes(ATTN_DECODE, &a), kv, 1e-6);
    cr_assert_float_eq(attention_bytes(ATTN_DECODE, true, KERNEL_CPU, &a), kv + io, 1e-6);
    cr_assert_float_eq(attention_bytes(ATTN_DECODE, false, KERNEL_CPU, &a), kv + io + 16 * scores, 1e-6);
    cr_assert_float_eq(attention_bytes(ATTN_DECODE, false, KERNEL_CUDA, &a), kv + io + 12 * scores, 1e-6);
    cr_assert_float_eq(attention_flops(ATTN_DECODE, &a), 4.0 * 4 * 32 * 2048 * 128, 1e-6);
    /* the arithmetic intensity is G FLOP/B, whatever the batch */
    for (int b = 1; b <= 64; b *= 4) {
        a.batch = b;
        double ai = attention_flops(ATTN_DECODE, &a) / attention_bytes(ATTN_DECODE, true, KERNEL_CPU, &a);
        cr_assert(ai > 3.9 && ai < 4.0, "B = %d: AI %g", b, ai);
    }
    attention_args p = {.batch = 1, .heads_q = 1, .heads_kv = 1, .ctx = 4096, .dim = 128};
    double ratio = attention_bytes(ATTN_PREFILL, false, KERNEL_CPU, &p) /
                   attention_bytes(ATTN_PREFILL, true, KERNEL_CPU, &p);
    cr_assert(ratio > 50 && ratio < 55, "n = 4096: %g", ratio);
}

/* ---- the split-K decode's launch plan (host-only: no GPU needed) ---------- */

/* The plan's promises for any arguments: 1 to ATTN_MAX_SPLITS pieces of
 * chunk keys (the last at least one key: none empty) that cover the cache;
 * pieces of at least ATTN_SPLIT_MIN_KEYS once there are two; and a grid of
 * at least one wave of resident blocks unless the floor or the cap stopped
 * it. */
static int check_plan(int ctx, int pairs, int sms, int per_sm)
{
    int s = attention_decode_splits(ctx, pairs, sms, per_sm), chunk = attention_decode_chunk(ctx, s);
    cr_assert(s >= 1 && s <= ATTN_MAX_SPLITS, "ctx %d pairs %d: %d splits", ctx, pairs, s);
    cr_assert((long long)(s - 1) * chunk < ctx && (long long)s * chunk >= ctx,
              "ctx %d in %d pieces of %d: one empty or keys left over", ctx, s, chunk);
    cr_assert(s == 1 || chunk >= ATTN_SPLIT_MIN_KEYS, "ctx %d: pieces of %d keys", ctx, chunk);
    long long wave = (long long)(sms < 1 ? 1 : sms) * (per_sm < 1 ? 1 : per_sm);
    int most = ctx / ATTN_SPLIT_MIN_KEYS < ATTN_MAX_SPLITS ? ctx / ATTN_SPLIT_MIN_KEYS : ATTN_MAX_SPLITS;
    cr_assert((long long)pairs * s >= wave || s == (most < 1 ? 1 : most),
              "ctx %d pairs %d: %d blocks, under a wave of %lld with room for more", ctx, pairs,
              pairs * s, wave);
    return s;
}

Test(attention_plan, edge_cases_of_the_split_k_decode)
{
    /* one key, a cache under the floor, one floor's worth: one piece */
    cr_assert_eq(check_plan(1, 1, 132, 4), 1);
    cr_assert_eq(check_plan(ATTN_SPLIT_MIN_KEYS - 1, 1, 132, 4), 1);
    cr_assert_eq(check_plan(ATTN_SPLIT_MIN_KEYS, 1, 132, 4), 1);
    cr_assert_eq(check_plan(2 * ATTN_SPLIT_MIN_KEYS, 1, 132, 4), 2);
    /* a batch that fills the GPU by itself is not split */
    cr_assert_eq(check_plan(8192, 64 * 32, 132, 4), 1);
    cr_assert_eq(check_plan(1 << 20, 1 << 16, 132, 4), 1);
    /* a long cache alone stops at the cap */
    cr_assert_eq(check_plan(1 << 20, 1, 132, 4), ATTN_MAX_SPLITS);
    /* exp-07's GQA-8 (4 KV heads) at L = 8192 on 132 SMs x 4 blocks: B = 4
     * fills the wave of 528 (33 pieces of 249 keys); B = 1 stops at the cap
     * (64 x 4 blocks), where the floor of 128 keys gave 64 pieces too but
     * 2048 keys only 16 (64 blocks) */
    cr_assert_eq(check_plan(8192, 16, 132, 4), 33);
    cr_assert_eq(attention_decode_chunk(8192, 33), 249);
    cr_assert_eq(check_plan(8192, 4, 132, 4), ATTN_MAX_SPLITS);
    cr_assert_eq(check_plan(2048, 4, 132, 4), 2048 / ATTN_SPLIT_MIN_KEYS);
    /* arguments under 1 count as 1: no division by zero, one piece */
    cr_assert_eq(check_plan(4096, 1, 0, 0), 1);
    cr_assert_eq(attention_decode_splits(0, 0, 132, 4), 1);
    cr_assert_eq(attention_decode_chunk(0, 0), 1);
    /* sm_count x blocks_per_sm beyond an int */
    cr_assert_eq(check_plan(1 << 20, 1, 1 << 20, 1 << 12), ATTN_MAX_SPLITS);
}

Test(attention_plan, every_plan_keeps_its_promises)
{
    static const int pairs[] = {1, 2, 3, 4, 7, 16, 96, 256, 4096};
    static const int sms[][2] = {{1, 1}, {40, 1}, {108, 4}, {132, 4}, {132, 16}};
    for (int ctx = 1; ctx <= 20000; ctx += ctx < 300 ? 1 : 97)
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
            for (size_t m = 0; m < sizeof sms / sizeof sms[0]; m++)
                check_plan(ctx, pairs[p], sms[m][0], sms[m][1]);
}

Test(cuda_attention, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    check_table(be, PREFILL_N_CUDA, sizeof PREFILL_N_CUDA / sizeof PREFILL_N_CUDA[0]);
    rl_backend_close(be);
}

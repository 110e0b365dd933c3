/*
 * attention.cpp -- experiment 07's fused kernels on the emulator:
 * decode_split then merge_splits (attention_decode.cuh), planned and
 * launched as attention_decode_split_cuda does, and flash_prefill
 * (attention_prefill.cuh) with one stage and with two (the launcher picks
 * by occupancy: both run on some GPU), against attention_reference at the
 * CUDA suite's tolerance of the fused variants (ATTENTION_ATOL, _RTOL).
 *
 * Shapes: the suite's (test_attention.c), then what it leaves out: every
 * pair of dim and group size, the split cap (64 pieces of 65 keys: four
 * steps and one key each), one split over a long cache, and "rising" keys
 * (the second half of each cache 32 times larger: late maxima, so the
 * rescale paths run past their first step, the prefill's past its 2^8
 * slack). The plans: 132 SMs x 3 blocks (an H100, the kernel's launch
 * bound) and 1 x 1 (one split).
 */
#include "cuda_shim.h"
#include "emu.h"

#include "attention.h"
#include "warp.cuh"

namespace {
/* The kernels' extern __shared__ arrays (thread_local: one per worker);
 * the largest launches: attention_decode_smem_bytes(128, 8) and
 * attention_prefill_smem_bytes(128, 2). */
alignas(128) thread_local float dec_smem[20736 / sizeof(float)];
alignas(128) thread_local unsigned char smem[69632];
#include "attention_decode.cuh"
#include "attention_prefill.cuh"

rl_emu::arena decode_arena(void) { return {dec_smem, sizeof dec_smem}; }
rl_emu::arena prefill_arena(void) { return {smem, sizeof smem}; }
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

const float LOG2E = 1.4426950408889634f; /* attention.cu's scale: scores in base 2 */

struct decode_case {
    int batch, heads_q, heads_kv, dim, ctx;
    int sms, blocks_per_sm; /* the plan's device */
    bool rising;
};

/* Keys from the middle of each cache on, 32 times larger (exact in FP16). */
void raise_late_keys(uint16_t *k, int caches, int ctx, int dim)
{
    for (int c = 0; c < caches; c++)
        for (int key = ctx / 2; key < ctx; key++)
            for (int d = 0; d < dim; d++) {
                uint16_t *h = &k[((size_t)c * ctx + key) * dim + d];
                *h = float_to_fp16(fp16_to_float(*h) * 32.0f);
            }
}

/* decode_split over the splits, then merge_splits: attention.cu's launch_split. */
template <int DIM, int G>
bool decode_launch(const attention_args &a, int splits, int chunk, float *part, std::string &why)
{
    const int pairs = a.batch * a.heads_kv;
    const uint4 *q = reinterpret_cast<const uint4 *>(a.q), *k = reinterpret_cast<const uint4 *>(a.k),
                *v = reinterpret_cast<const uint4 *>(a.v);
    const int ctx = a.ctx;
    const float c = LOG2E / sqrtf((float)DIM);
    const rl_emu::launch_shape split = {dim3((unsigned)splits, (unsigned)pairs), dim3(DEC_THREADS),
                                        decode_smem_bytes(DIM, G), decode_arena};
    if (!rl_emu::launch(split, [&] { decode_split<DIM, G>(part, q, k, v, ctx, chunk, c); }, why))
        return false;
    float *out = a.out;
    const rl_emu::launch_shape merge = {dim3((unsigned)(a.batch * a.heads_q)), dim3((unsigned)a.dim), 0, nullptr};
    return rl_emu::launch(merge, [&] { merge_splits(out, part, splits, DIM); }, why);
}

template <int DIM>
bool decode_group(int G, const attention_args &a, int splits, int chunk, float *part, std::string &why)
{
    switch (G) {
    case 1: return decode_launch<DIM, 1>(a, splits, chunk, part, why);
    case 2: return decode_launch<DIM, 2>(a, splits, chunk, part, why);
    case 4: return decode_launch<DIM, 4>(a, splits, chunk, part, why);
    default: return decode_launch<DIM, 8>(a, splits, chunk, part, why);
    }
}

/* One decode case; ref_ctx > ctx: the reference reads ref_ctx keys of the
 * same rows (a kernel given one key too few must fail the check). */
void decode(const decode_case &dc, int ref_ctx, uint64_t seed)
{
    const int G = dc.heads_q / dc.heads_kv, pairs = dc.batch * dc.heads_kv;
    const size_t nq = (size_t)dc.batch * dc.heads_q * dc.dim, nkv = (size_t)pairs * ref_ctx * dc.dim;
    owned<uint16_t> q = rl_emu::random_halves(nq, -1, 1, seed), k = rl_emu::random_halves(nkv, -1, 1, seed + 1),
                    v = rl_emu::random_halves(nkv, -1, 1, seed + 2);
    if (dc.rising)
        raise_late_keys(k.get(), pairs, ref_ctx, dc.dim);
    attention_args a = {};
    a.batch = dc.batch, a.heads_q = dc.heads_q, a.heads_kv = dc.heads_kv, a.ctx = ref_ctx, a.dim = dc.dim;
    a.q = q.get(), a.k = k.get(), a.v = v.get();
    owned<double> want = rl_emu::alloc<double>(nq);
    attention_reference(want.get(), &a, ATTN_DECODE, 0, nq / dc.dim);

    /* the kernel's own ctx keys per cache, read from rows of ref_ctx: as
     * test_attention.c's run_variant, one sequence and KV head when they differ */
    a.ctx = dc.ctx;
    const int splits = attention_decode_splits(dc.ctx, pairs, dc.sms, dc.blocks_per_sm);
    const int chunk = attention_decode_chunk(dc.ctx, splits);
    owned<float> part = rl_emu::alloc_output((size_t)pairs * G * splits * (dc.dim + 2));
    owned<float> out = rl_emu::alloc_output(nq);
    a.out = out.get();
    const std::string kernel = format("decode_split<%d,%d>+merge", dc.dim, G);
    const std::string shape = format("B %d HQ %2d HKV %d ctx %4d%s: %2d splits of %4d%s", dc.batch, dc.heads_q,
                                     dc.heads_kv, dc.ctx, ref_ctx != dc.ctx ? format(" (ref %d)", ref_ctx).c_str() : "",
                                     splits, chunk, dc.rising ? ", rising" : "");
    std::string why;
    const bool ran = dc.dim == 64 ? decode_group<64>(G, a, splits, chunk, part.get(), why)
                                  : decode_group<128>(G, a, splits, chunk, part.get(), why);
    if (!ran)
        rl_emu::fault(kernel.c_str(), shape, why);
    else if (ref_ctx != dc.ctx)
        rl_emu::check_fails(kernel.c_str(), shape, out.get(), want.get(), nq, ATTENTION_ATOL, ATTENTION_RTOL);
    else
        rl_emu::check_f32(kernel.c_str(), shape, out.get(), want.get(), nq, ATTENTION_ATOL, ATTENTION_RTOL);
}

/* flash_prefill: attention.cu's launch_flash_stages. */
template <int DIM, int STAGES> bool prefill_launch(const attention_args &a, std::string &why)
{
    const __half *q = reinterpret_cast<const __half *>(a.q), *k = reinterpret_cast<const __half *>(a.k),
                 *v = reinterpret_cast<const __half *>(a.v);
    float *out = a.out;
    const int n = a.ctx;
    const float c = LOG2E / sqrtf((float)DIM);
    const rl_emu::launch_shape s = {dim3((unsigned)(a.ctx / BR), (unsigned)a.batch), dim3(FA_THREADS),
                                    flash_smem_bytes<DIM, STAGES>(), prefill_arena};
    return rl_emu::launch(s, [&] { flash_prefill<DIM, STAGES>(out, q, k, v, n, c); }, why);
}

void prefill(int heads, int dim, int n, int stages, bool rising, uint64_t seed)
{
    const size_t ne = (size_t)heads * n * dim;
    owned<uint16_t> q = rl_emu::random_halves(ne, -1, 1, seed), k = rl_emu::random_halves(ne, -1, 1, seed + 1),
                    v = rl_emu::random_halves(ne, -1, 1, seed + 2);
    if (rising)
        raise_late_keys(k.get(), heads, n, dim);
    attention_args a = {};
    a.batch = heads, a.heads_q = 1, a.heads_kv = 1, a.ctx = n, a.dim = dim;
    a.q = q.get(), a.k = k.get(), a.v = v.get();
    owned<double> want = rl_emu::alloc<double>(ne);
    attention_reference(want.get(), &a, ATTN_PREFILL, 0, ne / dim);
    owned<float> out = rl_emu::alloc_output(ne);
    a.out = out.get();
    const std::string kernel = format("flash_prefill<%d,%d>", dim, stages);
    const std::string shape = format("heads %d n %3d%s", heads, n, rising ? ", rising" : "");
    std::string why;
    bool ran;
    if (dim == 64)
        ran = stages == 2 ? prefill_launch<64, 2>(a, why) : prefill_launch<64, 1>(a, why);
    else
        ran = stages == 2 ? prefill_launch<128, 2>(a, why) : prefill_launch<128, 1>(a, why);
    if (ran)
        rl_emu::check_f32(kernel.c_str(), shape, out.get(), want.get(), ne, ATTENTION_ATOL, ATTENTION_RTOL);
    else
        rl_emu::fault(kernel.c_str(), shape, why);
}

const decode_case DECODE[] = {
    /* test_attention.c's DECODE_SHAPES */
    {1, 8, 8, 128, 1, 132, 3, false},
    {3, 8, 8, 128, 33, 132, 3, false},
    {2, 4, 2, 64, 31, 132, 3, false},
    {1, 8, 2, 128, 100, 132, 3, false},
    {2, 16, 2, 64, 257, 132, 3, false},
    {1, 32, 8, 128, 64, 132, 3, false},
    {1, 8, 1, 128, 2047, 132, 3, false},
    {4, 4, 4, 64, 95, 132, 3, false},
    /* beyond them: G 2 at dim 128, G 4 at dim 64, the cap, one split, late maxima */
    {2, 16, 8, 128, 300, 132, 3, false},
    {1, 8, 2, 64, 500, 132, 3, false},
    {1, 8, 1, 128, 4100, 132, 3, false},
    {1, 8, 1, 128, 2047, 1, 1, false},
    {1, 8, 1, 128, 1000, 132, 3, true},
    {2, 8, 2, 64, 700, 1, 1, true},
};

} // namespace

void emu_attention(void)
{
    uint64_t seed = 700;
    for (const decode_case &dc : DECODE)
        decode(dc, dc.ctx, seed += 3);
    /* test_attention.c's a_kernel_that_drops_the_last_key_fails_validation */
    decode({1, 8, 1, 128, 8191, 132, 3, false}, 8192, 41);
    for (int n : {64, 128, 320})
        for (int dim = 64; dim <= 128; dim *= 2) {
            seed += 3;
            for (int stages = 1; stages <= 2; stages++)
                prefill(2, dim, n, stages, false, seed);
        }
    for (int stages = 1; stages <= 2; stages++)
        prefill(1, 128, 320, stages, true, seed += 3);
}

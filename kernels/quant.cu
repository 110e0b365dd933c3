/*
 * quant.cu -- CUDA kernels for the block formats of quant.h (the table is
 * quant.c: launchers only here).
 *
 * Decode (variant 1): a warp per 1-2 rows; for each block of the row,
 * lane l decodes weights 8l..8l+7 in registers with quant.h's decode
 * function (one or two naturally aligned loads per lane: a warp reads the
 * block's bytes contiguously), multiplies them with eight x values loaded
 * as one 16-byte word, and accumulates in FP32. The F16 format runs
 * experiment 02's gemv_fp16.
 *
 * Decode (variant 3): x is quantized to 8 bits in shared memory by each
 * thread block (cpu/quant_dot.h's arithmetic: a scale per 32 values), each
 * lane's words ready for its dots, and lane l computes its share of each
 * block with dp4a (quant_dp4a.h). The first blocks' weights are loaded
 * before x is quantized, so that work hides under them; then two groups of
 * four blocks alternate, one group's dots running while the other's loads
 * are in flight (the lane structs hold raw words, used only by the dots).
 * In the SASS for sm_90 (cuobjdump) the loop costs, per weight and lane,
 * q8 1.3, q4 1.8, q5 2.8, q6 4.3, q2 4.5 instructions (before: 2.9, 3.8,
 * 5.1, 6.9, 6.9, the loop stalling on each next group's loads).
 *
 * Prefill (variant 2): a kernel dequantizes the whole matrix to FP16 (one
 * thread per eight weights, one 16-byte store each), then cuBLAS runs the
 * FP16 GEMM: llama.cpp's fallback (GGML_CUDA_FORCE_CUBLAS, or a type its
 * quantized matrix multiply lacks); where the GPU has int8 tensor cores it
 * runs pp512 through that multiply (MMQ), on the blocks as stored. The FP16
 * matrix is written to memory and read back: that pass is the price of the
 * format at prefill, a third of an H200's pp512 (exp-03's
 * dequant_share_model), and the experiment reports its share.
 */
#include "check.h"
#include "quant.h"
#include "quant_dp4a.h"
#include "warp.cuh"

enum { BLOCK = 256, WARPS = BLOCK / 32 };

/* One name for the decoders, chosen by the block type. */
__device__ __forceinline__ void decode8(const q8_block *b, int l, float w[8]) { q8_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q6_block *b, int l, float w[8]) { q6_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q5_block *b, int l, float w[8]) { q5_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q4_block *b, int l, float w[8]) { q4_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q2_block *b, int l, float w[8]) { q2_decode8(b, l, w); }

/* ---- variant 1: dequantize in registers ------------------------------------- */

template <typename Block, int R>
__global__ void __launch_bounds__(BLOCK)
gemv_dequant(float *__restrict__ y, const Block *__restrict__ w, const uint4 *__restrict__ x,
             int rows, int blocks_per_row)
{
    int warp = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    int row0 = warp * R;
    if (row0 >= rows)
        return; /* whole warps leave together */
    const Block *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++) /* a missing last row reads the previous one, unused */
        wr[r] = w + (size_t)min(row0 + r, rows - 1) * blocks_per_row;
    float acc[R] = {};
#pragma unroll 2
    for (int b = 0; b < blocks_per_row; b++) {
        float xf[8];
        unpack8(__ldg(x + (size_t)b * 32 + lane), xf); /* x[256 b + 8 lane ..] */
#pragma unroll
        for (int r = 0; r < R; r++) {
            float wv[8];
            decode8(wr[r] + b, lane, wv);
#pragma unroll
            for (int i = 0; i < 8; i++)
                acc[r] = fmaf(wv[i], xf[i], acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        float s = warp_sum(acc[r]);
        if (lane == 0 && row0 + r < rows)
            y[row0 + r] = s;
    }
}

/* Thread blocks for this many threads (at least one). */
static unsigned grid_for_threads(long long threads)
{
    long long b = (threads + BLOCK - 1) / BLOCK;
    return (unsigned)(b ? b : 1);
}

/* Calls launch(tag) with a null pointer of the block type of quantized
 * format f (not F16): the one switch from formats to block types. */
template <typename Launch> static void with_block_type(quant_format f, Launch launch)
{
    switch (f) {
    case QF_Q8: launch(static_cast<const q8_block *>(nullptr)); break;
    case QF_Q6: launch(static_cast<const q6_block *>(nullptr)); break;
    case QF_Q5: launch(static_cast<const q5_block *>(nullptr)); break;
    case QF_Q4: launch(static_cast<const q4_block *>(nullptr)); break;
    default: launch(static_cast<const q2_block *>(nullptr)); break;
    }
}

/* A decode in F16 is experiment 02's gemv_fp16, whatever the variant. */
static void decode_f16(const quant_args *a)
{
    gemv_args g = {a->y, static_cast<const fp16 *>(a->w), a->x, a->rows, a->k, 1, NULL, a->stream};
    gemv_fp16_cuda(&g);
}

/* Rows per warp of both decodes: two share each x load from 8192 rows
 * up; with fewer rows, one each, so that there are more warps. */
static bool two_rows_per_warp(const quant_args *a) { return a->rows >= 8192; }

template <typename Block> static void decode_as(const quant_args *a, const Block *)
{
    const Block *w = static_cast<const Block *>(a->w);
    const uint4 *x = reinterpret_cast<const uint4 *>(a->x);
    int blocks = a->k / QUANT_BLOCK;
    if (two_rows_per_warp(a))
        gemv_dequant<Block, 2><<<grid_for_threads(32LL * ((a->rows + 1) / 2)), BLOCK, 0, a->stream>>>(
            a->y, w, x, a->rows, blocks);
    else
        gemv_dequant<Block, 1><<<grid_for_threads(32LL * a->rows), BLOCK, 0, a->stream>>>(
            a->y, w, x, a->rows, blocks);
    RL_CUDA_CHECK_LAUNCH();
}

void quant_decode_dequant_cuda(const quant_args *a)
{
    if (a->format == QF_F16)
        decode_f16(a);
    else
        with_block_type(a->format, [a](auto block) { decode_as(a, block); });
}

/* ---- variant 3: x in 8 bits, dp4a ---------------------------------------------- */

/* One name per format for quant_dp4a.h's lane functions. */
__device__ __forceinline__ q8_lane lane_load(const q8_block *b, int l) { return q8_lane_load(b, l); }
__device__ __forceinline__ q6_lane lane_load(const q6_block *b, int l) { return q6_lane_load(b, l); }
__device__ __forceinline__ q5_lane lane_load(const q5_block *b, int l) { return q5_lane_load(b, l); }
__device__ __forceinline__ q4_lane lane_load(const q4_block *b, int l) { return q4_lane_load(b, l); }
__device__ __forceinline__ q2_lane lane_load(const q2_block *b, int l) { return q2_lane_load(b, l); }
__device__ __forceinline__ float lane_dot(q8_lane w, const quant_x_lane *x) { return q8_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q6_lane w, const quant_x_lane *x) { return q6_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q5_lane w, const quant_x_lane *x) { return q5_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q4_lane w, const quant_x_lane *x) { return q4_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q2_lane w, const quant_x_lane *x) { return q2_lane_dot(w, x); }

enum { DP4A_UNROLL = 4 }; /* blocks of each row whose loads are in flight together */

/* Every thread block quantizes the whole of x before its rows' dots: in
 * the SASS that is 91 instructions per lane and 256 values (107 with the
 * clamp), as many as eight rows' q4 dots. Up to sixteen warps per thread
 * block share it (quant_dp4a_warps_per_block: fewer for a short matrix). */
enum { DP4A_BLOCK = QUANT_DP4A_MAX_WARPS * 32 };

/* The threads an SM holds, for the arch being compiled (1024 on sm_75, 1536
 * on sm_86, sm_87, sm_89 and sm_120, 2048 on sm_80, sm_90 and sm_100); the
 * host's pass, which ignores launch bounds, takes 2048. */
__host__ __device__ constexpr int sm_threads()
{
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 750 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || \
                               __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
    return __CUDA_ARCH__ == 750 ? 1024 : 1536;
#else
    return 2048;
#endif
}

/* Whether ptxas keeps the kernels outside the three-block set within 64
 * registers unasked (two blocks of 512 per SM): on sm_90 it does (q6 58,
 * q2 51, q8 and q4 at two rows 64 and 58), and asked for two blocks it
 * spread into all 64, spilled a register and grew q6's and two-row q8's
 * loops by 6-7 %; on sm_80 to sm_89, unasked, it gives them 84 to 128
 * registers: one block per SM. (ptxas of CUDA 13.0; a minimum of 1 made
 * it take 84-128 on sm_90 too, 0 is no minimum, as none is given.) */
__host__ __device__ constexpr bool two_unasked()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
    return true;
#else
    return false;
#endif
}

/* The blocks of 512 per SM a kernel is built for, its launch bound's
 * minimum: what a memory-bound GEMV needs is warps enough to keep its
 * loads in flight, and 64 registers a thread (two blocks, 32 warps) is
 * what these loops hold without a spill in them. One row of q8, q5 or q4
 * fits 40 (three blocks, 48 warps: asked, ptxas keeps them there, 39-40 on
 * sm_90), where the SM holds three; four blocks would need 32 registers,
 * fewer than the eight blocks' loads in flight take. The registers and
 * blocks per SM of every kernel, per built SM, are in the build's
 * kernel-resources.txt (make), and a test holds the dp4a kernels to two
 * blocks or more. */
__host__ __device__ constexpr bool three_fit(const q8_block *) { return true; }
__host__ __device__ constexpr bool three_fit(const q5_block *) { return true; }
__host__ __device__ constexpr bool three_fit(const q4_block *) { return true; }
template <typename Block> __host__ __device__ constexpr bool three_fit(const Block *) { return false; }
template <typename Block> __host__ __device__ constexpr int dp4a_min_blocks(const Block *b, int rows_per_warp)
{
    return rows_per_warp == 1 && three_fit(b) && sm_threads() >= 3 * DP4A_BLOCK ? 3
           : two_unasked() ? 0 : 2;
}

/* q8 keeps x's bytes in natural order; the nibble formats split them into
 * even and odd weights. */
__device__ constexpr bool natural_order(const q8_block *) { return true; }
template <typename Block> __device__ constexpr bool natural_order(const Block *) { return false; }

/* x (nb blocks of 256 halves) to 8-bit integers in shared memory, each
 * lane's words ready for its dots (quant_x_words: one 16-byte load per
 * block and row), one scale per 32 values: warp w of W takes blocks w,
 * w + W, ...; the four lanes of a group of 32 agree on its scale through
 * two shuffles. The arithmetic is quant_x8_scale's and quant_x8_group's,
 * rounding for rounding, so the CPU's error bound holds for these
 * integers too. */
template <bool NATURAL>
__device__ __forceinline__ void quantize_x_shared(const uint4 *__restrict__ x, int nb, uint4 *xs)
{
    int lane = threadIdx.x % 32, warps = blockDim.x / 32;
    for (int b = threadIdx.x / 32; b < nb; b += warps) {
        float v[8], amax = 0.0f;
        unpack8(__ldg(x + (size_t)b * 32 + lane), v);
#pragma unroll
        for (int i = 0; i < 8; i++)
            amax = fmaxf(amax, fabsf(v[i]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
        float d = __fdiv_rn(amax, 127.0f), id = d != 0.0f ? __frcp_rn(d) : 0.0f;
        /* No clamp to +-127 (the CPU's is a no-op): |v| <= amax, so |v id|
         * <= 127 (1 + 3 2^-24) < 127.5 after the three roundings of d, id
         * and the product, and rounds to at most 127. Two instructions per
         * value fewer in the SASS. */
        uint32_t word[2] = {0, 0};
#pragma unroll
        for (int i = 0; i < 8; i++) {
            int q = __float2int_rn(__fmul_rn(v[i], id));
            word[i / 4] |= ((uint32_t)q & 0xffu) << (8 * (i % 4));
        }
        quant_x_lane xl = quant_x_lane_make(word[0], word[1], d);
        quant_x_words xw = quant_x_words_pack(&xl, NATURAL);
        xs[(size_t)b * 32 + lane] = make_uint4(xw.a, xw.b, xw.sum, xw.d);
    }
}

/* Block b + u, or with TAIL (nb not a multiple of two groups) the last
 * one again past the row's end: read twice (cached), counted once. */
template <bool TAIL> __device__ __forceinline__ int block_at(int b, int u, int nb)
{
    return TAIL ? min(b + u, nb - 1) : b + u;
}

/* Loads lane's words of blocks b .. b + DP4A_UNROLL - 1 of each row: only
 * loads (nothing here uses a loaded value, so the warp goes on to the
 * blocks before them while these are in flight). */
template <bool TAIL, typename Block, typename Lane, int R>
__device__ __forceinline__ void load_lanes(Lane (&to)[R][DP4A_UNROLL], const Block *const (&wr)[R], int b, int nb,
                                           int lane)
{
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int u = 0; u < DP4A_UNROLL; u++)
            to[r][u] = lane_load(wr[r] + block_at<TAIL>(b, u, nb), lane);
}

/* Adds the lane's share of blocks b .. b + DP4A_UNROLL - 1 of each row
 * (with TAIL, those past the row's end count zero). */
template <bool TAIL, bool NATURAL, typename Lane, int R>
__device__ __forceinline__ void dot_lanes(float (&acc)[R], const Lane (&cur)[R][DP4A_UNROLL], const uint4 *xs, int b,
                                          int nb, int lane)
{
#pragma unroll
    for (int u = 0; u < DP4A_UNROLL; u++) {
        uint4 v = xs[block_at<TAIL>(b, u, nb) * 32 + lane];
        quant_x_words xw = {v.x, v.y, v.z, v.w};
        quant_x_lane xl = quant_x_words_lane(xw, NATURAL);
#pragma unroll
        for (int r = 0; r < R; r++) {
            float part = lane_dot(cur[r][u], &xl);
            acc[r] += TAIL && b + u >= nb ? 0.0f : part;
        }
    }
}

/* Two groups of blocks per iteration, in turn: while one group's dots run,
 * the other group's loads are in flight (no copy between the buffers).
 * Launched with blockDim.x / 32 warps, a warp per R rows. */
template <typename Block, int R, bool TAIL>
__global__ void __launch_bounds__(DP4A_BLOCK, dp4a_min_blocks(static_cast<const Block *>(nullptr), R))
gemv_dp4a(float *__restrict__ y, const Block *__restrict__ w, const uint4 *__restrict__ x, int rows, int nb)
{
    extern __shared__ uint4 xs[]; /* nb * 32 lanes' words */
    constexpr bool NATURAL = natural_order(static_cast<const Block *>(nullptr));
    typedef decltype(lane_load(w, 0)) Lane;
    int lane = threadIdx.x % 32, row0 = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * R;
    bool active = row0 < rows;
    const Block *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++) /* a missing last row reads the previous one, unused */
        wr[r] = w + (size_t)min(row0 + r, rows - 1) * nb;
    Lane one[R][DP4A_UNROLL], two[R][DP4A_UNROLL];
    load_lanes<TAIL>(one, wr, 0, nb, lane); /* on their way while x is quantized */
    quantize_x_shared<NATURAL>(x, nb, xs);
    __syncthreads();
    if (!active)
        return;
    float acc[R] = {};
    for (int b = 0; b < nb; b += 2 * DP4A_UNROLL) {
        load_lanes<TAIL>(two, wr, b + DP4A_UNROLL, nb, lane);
        dot_lanes<TAIL, NATURAL>(acc, one, xs, b, nb, lane);
        if (TAIL || b + 2 * DP4A_UNROLL < nb) /* no loads past the row otherwise */
            load_lanes<TAIL>(one, wr, b + 2 * DP4A_UNROLL, nb, lane);
        dot_lanes<TAIL, NATURAL>(acc, two, xs, b + DP4A_UNROLL, nb, lane);
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        float s = warp_sum(acc[r]);
        if (lane == 0 && row0 + r < rows)
            y[row0 + r] = s;
    }
}

/* The SMs of the current device, asked again only when the device changes. */
static int device_sms(void)
{
    static int device = -1, sms = 0;
    int now;
    RL_CUDA_CHECK(cudaGetDevice(&now));
    if (now != device) {
        RL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, now));
        device = now;
    }
    return sms;
}

template <typename Block, int R, bool TAIL> static void launch_dp4a(const quant_args *a)
{
    int nb = a->k / QUANT_BLOCK;
    size_t smem = (size_t)nb * 32 * sizeof(uint4);
    if (smem > 48 * 1024) /* past the default limit of dynamic shared memory: ask (k > 24,576) */
        RL_CUDA_CHECK(cudaFuncSetAttribute(gemv_dp4a<Block, R, TAIL>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    long long warps = (a->rows + R - 1) / R;
    int per_block = quant_dp4a_warps_per_block(a->rows, R, device_sms());
    unsigned grid = (unsigned)((warps + per_block - 1) / per_block);
    gemv_dp4a<Block, R, TAIL><<<grid, 32 * per_block, smem, a->stream>>>(
        a->y, static_cast<const Block *>(a->w), reinterpret_cast<const uint4 *>(a->x), a->rows, nb);
    RL_CUDA_CHECK_LAUNCH();
}

/* Rows of whole pairs of groups (k a multiple of 2048: every matrix of
 * the model) take the loop without a tail's index clamps and masks. */
template <typename Block, int R> static void launch_dp4a(const quant_args *a)
{
    if ((a->k / QUANT_BLOCK) % (2 * DP4A_UNROLL) == 0)
        launch_dp4a<Block, R, false>(a);
    else
        launch_dp4a<Block, R, true>(a);
}

/* Two rows per warp double the registers a warp's loads in flight take:
 * only for the formats whose lanes are one or two words (q8, q4: 64 and
 * 58 registers at two rows on sm_90, within the 64 of two blocks per SM);
 * q6, q5 and q2 stay at one row (at two, ptxas gave them 64 to 127
 * registers without a bound: one block of 512 per SM), and their two-row
 * kernels are not built. */
constexpr bool pairs_rows(const q8_block *) { return true; }
constexpr bool pairs_rows(const q4_block *) { return true; }
template <typename Block> constexpr bool pairs_rows(const Block *) { return false; }

template <typename Block> static void dp4a_as(const quant_args *a, const Block *)
{
    if constexpr (pairs_rows(static_cast<const Block *>(nullptr)))
        if (two_rows_per_warp(a)) {
            launch_dp4a<Block, 2>(a);
            return;
        }
    launch_dp4a<Block, 1>(a);
}

void quant_decode_dp4a_cuda(const quant_args *a)
{
    if (a->format == QF_F16)
        decode_f16(a);
    else
        with_block_type(a->format, [a](auto block) { dp4a_as(a, block); });
}

/* ---- variant 2: dequantize to FP16, then cuBLAS ------------------------------- */

/* Thread g decodes weights 8 (g % 32).. of block g / 32 of the matrix
 * (blocks run row after row, so block g / 32 covers FP16 elements
 * 256 (g / 32) ..) and writes them with one 16-byte store. */
template <typename Block>
__global__ void __launch_bounds__(BLOCK)
dequant_fp16(uint4 *__restrict__ out, const Block *__restrict__ w, long long blocks)
{
    long long g = blockIdx.x * (long long)BLOCK + threadIdx.x;
    if (g >= 32 * blocks)
        return;
    float v[8];
    decode8(w + g / 32, (int)(g % 32), v);
    uint32_t p[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        p[i] = (uint32_t)float_to_fp16(v[2 * i]) | ((uint32_t)float_to_fp16(v[2 * i + 1]) << 16);
    out[g] = make_uint4(p[0], p[1], p[2], p[3]);
}

template <typename Block> static void dequant_as(const quant_args *a, uint4 *out, const Block *)
{
    long long blocks = (long long)a->rows * (a->k / QUANT_BLOCK);
    dequant_fp16<Block><<<grid_for_threads(32 * blocks), BLOCK, 0, a->stream>>>(
        out, static_cast<const Block *>(a->w), blocks);
    RL_CUDA_CHECK_LAUNCH();
}

size_t quant_prefill_cuda_scratch(int rows, int k, int n)
{
    (void)n;
    return sizeof(fp16) * (size_t)rows * k;
}

void quant_prefill_cuda(const quant_args *a)
{
    const fp16 *w16 = static_cast<const fp16 *>(a->w); /* F16: straight to the GEMM */
    if (a->format != QF_F16) {
        uint4 *out = static_cast<uint4 *>(a->scratch);
        with_block_type(a->format, [a, out](auto block) { dequant_as(a, out, block); });
        w16 = static_cast<const fp16 *>(a->scratch);
    }
    gemv_args g = {a->y, w16, a->x, a->rows, a->k, a->n, NULL, a->stream};
    gemv_library_cuda(&g);
}

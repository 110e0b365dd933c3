/*
 * ptx.cpp -- the emulator's models of the PTX the kernels wrap (warp.cuh,
 * gemv_tile.cuh), written from the PTX ISA's description of each
 * instruction ("Matrix Fragments for mma.m16n8k16 / mma.m16n8k8 with
 * floating point type", "ldmatrix", "cp.async", "ex2"), not from the
 * kernels' comments: the kernels are checked against this reading. Were
 * the reading wrong, kernel and model would share the mistake; only a GPU
 * settles that.
 */
#include "machine.h"

#include <vector>

namespace {

using rl_emu::warp_slot;

/* Every half's value, computed once (_Float16: exact). */
__attribute__((no_sanitize("address", "undefined"))) float half_value(uint16_t h)
{
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (uint32_t i = 0; i < 65536; i++)
            t[i] = __half2float(__ushort_as_half((unsigned short)i));
        return t;
    }();
    return table[h];
}

/* Element i of an .f16x2 operand's registers: a_0 and a_1 are the low and
 * high halves of the first register, a_2 and a_3 of the second, ... */
__attribute__((no_sanitize("address", "undefined"))) float element(const uint32_t *regs, int i)
{
    return half_value((uint16_t)(regs[i / 2] >> (16 * (i & 1))));
}

uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* mma.sync.aligned.m16n8kK.row.col.f32.f16.f16.f32, K = 16 or 8, as PTX
 * lays its fragments out, with groupID = lane >> 2 and threadID_in_group
 * = lane % 4:
 *   A (16 x K, .f16): a_i (K / 2 of them, K / 4 registers)
 *     K = 16: row = groupID for i < 2 and 4 <= i < 6, else groupID + 8;
 *             col = threadID_in_group * 2 + (i & 1), + 8 for i >= 4;
 *     K = 8:  row = groupID for i < 2, else groupID + 8;
 *             col = threadID_in_group * 2 + (i & 1);
 *   B (K x 8, .f16): b_i (K / 4 of them): row = threadID_in_group * 2 +
 *     (i & 1), + 8 for i >= 2; col = groupID;
 *   C and D (16 x 8, .f32): c_i, i < 4: row = groupID for i < 2, else
 *     groupID + 8; col = threadID_in_group * 2 + (i & 1).
 * Each lane's in[] holds its A registers, then B's, then C. D = A B + C:
 * FP16 products are exact in FP32; they are added to C in FP32, k in
 * order (the hardware's order of addition is not specified). Not
 * sanitized: the emulator's own arithmetic, most of its time otherwise. */
template <int K> __attribute__((no_sanitize("address", "undefined"))) void mma_once(warp_slot &s)
{
    enum { A_REGS = K / 4, B_REGS = K / 8 };
    float A[16][K], B[K][8], C[16][8];
    for (int lane = 0; lane < 32; lane++) {
        const int group = lane >> 2, tig = lane % 4;
        const uint32_t *in = s.in[lane];
        for (int i = 0; i < 2 * A_REGS; i++) {
            const bool upper = K == 16 ? !(i < 2 || (i >= 4 && i < 6)) : i >= 2;
            A[upper ? group + 8 : group][tig * 2 + (i & 1) + (i >= 4 ? 8 : 0)] = element(in, i);
        }
        for (int i = 0; i < 2 * B_REGS; i++)
            B[tig * 2 + (i & 1) + (i >= 2 ? 8 : 0)][group] = element(in + A_REGS, i);
        for (int i = 0; i < 4; i++)
            C[i < 2 ? group : group + 8][tig * 2 + (i & 1)] = float_of(in[A_REGS + B_REGS + i]);
    }
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++)
            for (int k = 0; k < K; k++)
                C[r][c] += A[r][k] * B[k][c];
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 4; i++)
            s.out[lane][i] = bits_of(C[i < 2 ? lane / 4 : lane / 4 + 8][lane % 4 * 2 + (i & 1)]);
}

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: threads 8 m .. 8 m + 7
 * give the addresses of rows 0..7 of matrix m (16 bytes each, 16-byte
 * aligned); register m of a thread gets, of matrix m, row groupID and
 * elements 2 threadID_in_group and + 1 (the lower in the low half); .trans
 * delivers the transposed matrix the same way: rows 2 threadID_in_group
 * and + 1 of column groupID. */
template <bool TRANS> void ldmatrix_once(warp_slot &s)
{
    const char *op = TRANS ? "ldmatrix.x4.trans" : "ldmatrix.x4";
    uint16_t M[4][8][8];
    for (int m = 0; m < 4; m++)
        for (int row = 0; row < 8; row++)
            memcpy(M[m][row], rl_emu::shared_at(s.in[8 * m + row][0], 16, 16, op), 16);
    for (int lane = 0; lane < 32; lane++) {
        const int group = lane >> 2, tig = lane % 4;
        for (int m = 0; m < 4; m++) {
            const uint16_t lo = TRANS ? M[m][2 * tig][group] : M[m][group][2 * tig];
            const uint16_t hi = TRANS ? M[m][2 * tig + 1][group] : M[m][group][2 * tig + 1];
            s.out[lane][m] = lo | (uint32_t)hi << 16;
        }
    }
}

} // namespace

void rl_emu_mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    uint32_t in[10] = {a[0], a[1], a[2], a[3], b[0], b[1], bits_of(d[0]), bits_of(d[1]), bits_of(d[2]), bits_of(d[3])};
    const warp_slot &s = rl_emu::exchange_once("mma.m16n8k16", in, 10, mma_once<16>);
    for (int i = 0; i < 4; i++)
        d[i] = float_of(s.out[rl_emu::lane_id()][i]);
}

void rl_emu_mma_1688(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b)
{
    uint32_t in[7] = {a0, a1, b, bits_of(d[0]), bits_of(d[1]), bits_of(d[2]), bits_of(d[3])};
    const warp_slot &s = rl_emu::exchange_once("mma.m16n8k8", in, 7, mma_once<8>);
    for (int i = 0; i < 4; i++)
        d[i] = float_of(s.out[rl_emu::lane_id()][i]);
}

void rl_emu_ldmatrix_x4(uint32_t r[4], uint32_t addr, bool trans)
{
    const warp_slot &s = trans ? rl_emu::exchange_once("ldmatrix.x4.trans", &addr, 1, ldmatrix_once<true>)
                               : rl_emu::exchange_once("ldmatrix.x4", &addr, 1, ldmatrix_once<false>);
    memcpy(r, s.out[rl_emu::lane_id()], 4 * sizeof(uint32_t));
}

/* cp.async.cg.shared.global, 16 bytes: the copy lands when its group is
 * waited for (cp.async.wait_group 0), the latest the PTX allows, or, in
 * blocks the machine picks, when issued (as sm_75's synchronous copy
 * does), the earliest: a kernel must be right both ways. A copy not yet
 * committed to a group is not waited for. */
void rl_emu_cp_async16(uint32_t dst, const void *src)
{
    unsigned char *to = rl_emu::shared_at(dst, 16, 16, "cp.async");
    if ((uintptr_t)src % 16)
        rl_emu::fail("cp.async from %p: a 16-byte copy's source is 16-byte aligned", src);
    if (rl_emu::copies_land_at_once())
        memcpy(to, src, 16);
    else
        rl_emu::open_copies().push_back({dst, src});
}

void rl_emu_cp_async_commit(void)
{
    std::vector<rl_emu::pending_copy> &open = rl_emu::open_copies(), &done = rl_emu::committed_copies();
    done.insert(done.end(), open.begin(), open.end());
    open.clear();
}

void rl_emu_cp_async_wait_all(void)
{
    for (const rl_emu::pending_copy &c : rl_emu::committed_copies())
        memcpy(rl_emu::shared_at(c.dst, 16, 16, "cp.async"), c.src, 16);
    rl_emu::committed_copies().clear();
}

uint4 rl_emu_lds128(uint32_t addr)
{
    uint4 r;
    memcpy(&r, rl_emu::shared_at(addr, 16, 16, "ld.shared.v4.u32"), sizeof r);
    return r;
}

/* ex2.approx.ftz.f32: 2^x, approximate; -inf gives +0; subnormal inputs
 * and results are flushed to zero. Modelled as exp2f with a relative error
 * of 2^-22 added (its sign from the input's lowest bit), of the order of
 * the hardware's approximation, so that a kernel that needs 2^x exactly
 * fails here; exact where x is an integer. */
float rl_emu_ex2_approx(float x)
{
    if (fabsf(x) < 1.17549435e-38f) /* FLT_MIN: a subnormal input counts as 0 */
        x = 0.0f;
    float y = exp2f(x);
    if (y != 0.0f && fabsf(y) < 1.17549435e-38f)
        y = 0.0f;
    if (isfinite(x) && x != nearbyintf(x))
        y *= 1.0f + ((bits_of(x) & 1) ? 2.384185791015625e-07f : -2.384185791015625e-07f);
    return y;
}

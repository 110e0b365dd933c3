/*
 * cuda_shim.h -- what g++ needs to compile the kernels' device code, the
 * same .cuh text nvcc compiles, for the CPU emulator of tests/emu/: CUDA's
 * qualifiers, vector and half types, built-in variables and intrinsics,
 * and the models of the inline PTX that warp.cuh's RL_EMULATOR branches
 * call (ptx.cpp). Every driver includes it first (C++17, g++ only).
 *
 * A CUDA thread is a fiber, a block's fibers take turns on one OS thread
 * (machine.cpp); so __shared__ is thread_local, one copy per block running
 * (g++ needs -fno-extern-tls-init for a kernel's `extern __shared__`
 * array). Warp-wide operations meet at a per-warp barrier and exchange
 * their operands there; __syncthreads is a barrier of the block.
 *
 * __CUDA_ARCH__ is 900: every #if of the kernels takes its device side, as
 * nvcc's sm_90 pass does (half.h's conversions, quant_dp4a.h's dp4a and
 * prmt are then these intrinsics, not the host loops beside them).
 */
#ifndef TESTS_EMU_CUDA_SHIM_H
#define TESTS_EMU_CUDA_SHIM_H

#ifndef RL_EMULATOR
#error "tests/emu/cuda_shim.h is the CPU emulator's: compile with -DRL_EMULATOR (make test-emu)"
#endif
#ifdef __CUDACC__
#error "tests/emu/cuda_shim.h stands in for CUDA: not for nvcc"
#endif

#define __CUDA_ARCH__ 900

/* what the kernels include, before any of them: their #includes then find
 * these guarded (the drivers include the kernels in an anonymous namespace) */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

/* ---- qualifiers ---------------------------------------------------------------- */

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ thread_local
/* __restrict__ is g++'s own keyword */

/* ---- vector types ---------------------------------------------------------------- */

struct __align__(8) uint2 { uint32_t x, y; };
struct __align__(16) uint4 { uint32_t x, y, z, w; };
struct __align__(8) float2 { float x, y; };
struct __align__(16) float4 { float x, y, z, w; };
struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

static inline uint2 make_uint2(uint32_t x, uint32_t y) { return {x, y}; }
static inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) { return {x, y, z, w}; }
static inline float2 make_float2(float x, float y) { return {x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

/* ---- built-in variables: the running fiber's (machine.cpp sets them) ------------- */

extern thread_local uint3 threadIdx, blockIdx;
extern thread_local dim3 blockDim, gridDim;

/* ---- the machine's entry points (machine.cpp) -------------------------------------- */

namespace rl_emu {
enum { SLOT_WORDS = 12 }; /* operand words a lane brings to one warp-wide operation */
typedef uint32_t lane_words[SLOT_WORDS];

/* The calling thread's lane (threadIdx.x % 32: blocks are 1-D here). */
unsigned lane_id(void);
/* One warp-wide operation: the calling lane gives n words, and once all 32
 * lanes of its warp have made the same call (op), gets every lane's. A
 * lane that does not come (it exited, or it is at another operation) is a
 * fault: CUDA leaves that undefined. */
const lane_words *exchange(const char *op, const uint32_t *mine, int n);
/* __syncthreads: every thread of the block, none exited. */
void block_barrier(void);
/* A fault of the kernel (misaligned, out of bounds, divergent, ...): the
 * block stops there and the launch fails with the message. */
[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The warp-wide operations take full-warp masks only (every kernel here
 * passes 0xffffffff); a partial mask is not modelled. */
inline void full_mask(unsigned mask, const char *op)
{
    if (mask != 0xffffffffu)
        fail("%s with mask %#x: the emulator models full-warp masks only", op, mask);
}

/* v as lane `from` of the warp had it (a shuffle). */
template <class T> T take_from(const char *op, T v, unsigned from)
{
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "a shuffle moves 4 or 8 bytes");
    uint32_t w[2] = {0, 0};
    memcpy(w, &v, sizeof v);
    const lane_words *all = exchange(op, w, 2);
    T r;
    memcpy(&r, all[from], sizeof r);
    return r;
}

inline unsigned segment_lane(int src, int width, const char *op)
{
    if (width < 1 || width > 32 || (width & (width - 1)))
        fail("%s: width %d is not a power of 2 up to 32", op, width);
    return (lane_id() & ~(unsigned)(width - 1)) | ((unsigned)src & (unsigned)(width - 1));
}
} // namespace rl_emu

/* ---- warp-wide operations ----------------------------------------------------------- */

template <class T> T __shfl_sync(unsigned mask, T var, int src, int width = 32)
{
    rl_emu::full_mask(mask, "__shfl_sync");
    return rl_emu::take_from("__shfl_sync", var, rl_emu::segment_lane(src, width, "__shfl_sync"));
}

template <class T> T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32)
{
    rl_emu::full_mask(mask, "__shfl_xor_sync");
    unsigned from = rl_emu::lane_id() ^ (unsigned)lane_mask;
    /* CUDA: a lane whose partner lies beyond its segment keeps its own value */
    if ((from & ~(unsigned)(width - 1)) != (rl_emu::lane_id() & ~(unsigned)(width - 1)))
        from = rl_emu::lane_id();
    return rl_emu::take_from("__shfl_xor_sync", var, rl_emu::segment_lane((int)from, width, "__shfl_xor_sync"));
}

static inline unsigned __ballot_sync(unsigned mask, int pred)
{
    rl_emu::full_mask(mask, "__ballot_sync");
    uint32_t mine = pred != 0;
    const rl_emu::lane_words *all = rl_emu::exchange("__ballot_sync", &mine, 1);
    unsigned bits = 0;
    for (unsigned l = 0; l < 32; l++)
        bits |= all[l][0] << l;
    return bits;
}

/* Separate names from __ballot_sync: lanes at __any_sync and __all_sync
 * at once are at different operations. */
static inline int __any_sync(unsigned mask, int pred)
{
    rl_emu::full_mask(mask, "__any_sync");
    uint32_t mine = pred != 0;
    const rl_emu::lane_words *all = rl_emu::exchange("__any_sync", &mine, 1);
    for (unsigned l = 0; l < 32; l++)
        if (all[l][0])
            return 1;
    return 0;
}

static inline int __all_sync(unsigned mask, int pred)
{
    rl_emu::full_mask(mask, "__all_sync");
    uint32_t mine = pred != 0;
    const rl_emu::lane_words *all = rl_emu::exchange("__all_sync", &mine, 1);
    for (unsigned l = 0; l < 32; l++)
        if (!all[l][0])
            return 0;
    return 1;
}

static inline void __syncwarp(unsigned mask = 0xffffffffu)
{
    rl_emu::full_mask(mask, "__syncwarp");
    rl_emu::exchange("__syncwarp", nullptr, 0);
}

static inline void __syncthreads(void) { rl_emu::block_barrier(); }

/* ---- loads with cache hints: plain loads --------------------------------------------- */

template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }

/* ---- halves: IEEE binary16, converted by g++'s _Float16 (round to nearest even) ------- */

struct __half { unsigned short x; };
struct __align__(4) __half2 { __half x, y; };

static inline float __half2float(__half h)
{
    _Float16 f;
    memcpy(&f, &h, sizeof f);
    return (float)f;
}
static inline __half __float2half_rn(float f)
{
    _Float16 v = (_Float16)f;
    __half h;
    memcpy(&h, &v, sizeof h);
    return h;
}
static inline __half __ushort_as_half(unsigned short u) { return __half{u}; }
static inline unsigned short __half_as_ushort(__half h) { return h.x; }
static inline float2 __half22float2(__half2 h) { return {__half2float(h.x), __half2float(h.y)}; }
static inline __half2 __floats2half2_rn(float lo, float hi) { return {__float2half_rn(lo), __float2half_rn(hi)}; }
/* Half arithmetic, each lane rounded once to nearest even: a product of
 * two halves is exact in float (22 bits), and so is a difference of two
 * halves within a factor of 2^13 of each other (the kernels' only use:
 * 1024 + q - 1032); the one rounding is then the conversion's. */
static inline __half2 __hmul2(__half2 a, __half2 b)
{
    return __floats2half2_rn(__half2float(a.x) * __half2float(b.x), __half2float(a.y) * __half2float(b.y));
}
static inline __half2 __hsub2(__half2 a, __half2 b)
{
    return __floats2half2_rn(__half2float(a.x) - __half2float(b.x), __half2float(a.y) - __half2float(b.y));
}

/* ---- bits, rounding, integers ----------------------------------------------------------- */

static inline float __uint_as_float(unsigned u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline unsigned __float_as_uint(float f)
{
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}
/* g++ on x86-64 and AArch64 computes float in IEEE single, rounding to
 * nearest even (no -ffast-math here): the _rn intrinsics' own rounding. */
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline int __float2int_rn(float a) { return (int)nearbyintf(a); }

static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }

/* CUDA's __dp4a(int, int, int): the four products of the signed bytes of a
 * and b, added to c. */
static inline int __dp4a(int a, int b, int c)
{
    for (int i = 0; i < 4; i++)
        c += (int)(int8_t)((uint32_t)a >> (8 * i)) * (int)(int8_t)((uint32_t)b >> (8 * i));
    return c;
}

/* CUDA's __byte_perm(x, y, s): byte n of the result is byte s[n] (the low
 * three bits of nibble n) of the eight bytes y:x, x's being 0 to 3. */
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    const uint64_t v = (uint64_t)y << 32 | x;
    unsigned r = 0;
    for (int n = 0; n < 4; n++)
        r |= (unsigned)(v >> (8 * ((s >> (4 * n)) & 7u)) & 0xffu) << (8 * n);
    return r;
}

/* ---- the shared window: offsets into the running kernel's dynamic shared memory ----- */

size_t __cvta_generic_to_shared(const void *p);
void *__cvta_shared_to_generic(size_t a);

/* ---- the PTX warp.cuh, gemv_tile.cuh and quant_dp4a.cuh wrap (ptx.cpp) ----------------- */

void rl_emu_mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2]);
void rl_emu_mma_1688(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b);
void rl_emu_ldmatrix_x4(uint32_t r[4], uint32_t addr, bool trans);
void rl_emu_cp_async16(uint32_t dst, const void *src);
void rl_emu_cp_async_commit(void);
void rl_emu_cp_async_wait_all(void);
uint4 rl_emu_lds128(uint32_t addr);
float rl_emu_ex2_approx(float x);

#endif

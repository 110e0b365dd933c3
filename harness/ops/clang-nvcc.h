/*
 * clang-nvcc.h -- what CUDA's headers give a .cu file under nvcc and
 * clang's CUDA mode leaves out; harness/ops/clang-nvcc.sh (the stand-in
 * for nvcc of the CUDA 12 build check) includes it before every .cu file
 * (-include). No build by nvcc sees it.
 *
 *  - min and max on the host: crt/math_functions.hpp declares them
 *    __host__ __device__, but clang's CUDA wrapper takes the device side
 *    only (its own __clang_cuda_math.h), so a launcher's min(a, b) fails.
 *  - the cache-hint loads __ldcs, __ldcg, __ldca, __ldlu, __ldcv: CUDA's
 *    sm_32_intrinsics.hpp defines them in inline PTX; clang leaves that
 *    file out (it has its own __ldg) and has no others.
 *
 * Each is declared with the overloads CUDA 12's headers give (the same
 * argument types) and the same PTX (ld.global.cs, ...), so that the check
 * neither refuses a call nvcc would accept nor accepts one it would refuse.
 * A .cu file that needs another of nvcc's own (the __st* stores, say)
 * fails the check with "no matching function": add it here, likewise.
 */
#ifndef ROOFLAB_CLANG_NVCC_H
#define ROOFLAB_CLANG_NVCC_H

#if defined(__clang__) && defined(__CUDA__)

/* ---- min and max on the host, crt/math_functions.hpp's overloads ---- */
#define CLANG_NVCC_MINMAX(R, A, B)                                                 \
    static inline __host__ R min(const A a, const B b) { return (R)a < (R)b ? (R)a : (R)b; } \
    static inline __host__ R max(const A a, const B b) { return (R)a > (R)b ? (R)a : (R)b; }
CLANG_NVCC_MINMAX(int, int, int)
CLANG_NVCC_MINMAX(unsigned int, unsigned int, unsigned int)
CLANG_NVCC_MINMAX(unsigned int, int, unsigned int)
CLANG_NVCC_MINMAX(unsigned int, unsigned int, int)
CLANG_NVCC_MINMAX(long int, long int, long int)
CLANG_NVCC_MINMAX(unsigned long int, unsigned long int, unsigned long int)
CLANG_NVCC_MINMAX(unsigned long int, long int, unsigned long int)
CLANG_NVCC_MINMAX(unsigned long int, unsigned long int, long int)
CLANG_NVCC_MINMAX(long long int, long long int, long long int)
CLANG_NVCC_MINMAX(unsigned long long int, unsigned long long int, unsigned long long int)
CLANG_NVCC_MINMAX(unsigned long long int, long long int, unsigned long long int)
CLANG_NVCC_MINMAX(unsigned long long int, unsigned long long int, long long int)
CLANG_NVCC_MINMAX(float, float, float)
CLANG_NVCC_MINMAX(double, double, double)
CLANG_NVCC_MINMAX(double, float, double)
CLANG_NVCC_MINMAX(double, double, float)
#undef CLANG_NVCC_MINMAX

/* ---- the cache-hint loads, sm_32_intrinsics.hpp's PTX ----------------
 * One load of the value's 1, 2, 4, 8 or 16 bytes with the hint (cs:
 * streaming, cg: L2 only, ca: all levels, lu: last use, cv: volatile). */
#define CLANG_NVCC_LOAD(NAME, HINT)                                                               \
    template <typename T> static __device__ __forceinline__ T clang_nvcc_##NAME(const T *p)       \
    {                                                                                             \
        static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 ||     \
                          sizeof(T) == 16,                                                        \
                      "a load of 1, 2, 4, 8 or 16 bytes");                                        \
        T r;                                                                                      \
        if constexpr (sizeof(T) == 16) {                                                          \
            unsigned int v[4];                                                                    \
            asm("ld.global." HINT ".v4.u32 {%0,%1,%2,%3}, [%4];"                                  \
                : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])                                  \
                : "l"(p));                                                                        \
            __builtin_memcpy(&r, v, 16);                                                          \
        } else if constexpr (sizeof(T) == 8) {                                                    \
            unsigned long long v;                                                                 \
            asm("ld.global." HINT ".u64 %0, [%1];" : "=l"(v) : "l"(p));                           \
            __builtin_memcpy(&r, &v, 8);                                                          \
        } else {                                                                                  \
            unsigned int v;                                                                       \
            if constexpr (sizeof(T) == 4)                                                         \
                asm("ld.global." HINT ".u32 %0, [%1];" : "=r"(v) : "l"(p));                       \
            else if constexpr (sizeof(T) == 2)                                                    \
                asm("ld.global." HINT ".u16 %0, [%1];" : "=r"(v) : "l"(p));                       \
            else                                                                                  \
                asm("ld.global." HINT ".u8 %0, [%1];" : "=r"(v) : "l"(p));                        \
            __builtin_memcpy(&r, &v, sizeof(T)); /* the low bytes: little-endian */               \
        }                                                                                         \
        return r;                                                                                 \
    }

/* The types sm_32_intrinsics.h declares each load for. */
#define CLANG_NVCC_LOAD_TYPES(NAME)                                                               \
    CLANG_NVCC_LOAD_AS(NAME, long) CLANG_NVCC_LOAD_AS(NAME, unsigned long)                        \
    CLANG_NVCC_LOAD_AS(NAME, char) CLANG_NVCC_LOAD_AS(NAME, signed char)                          \
    CLANG_NVCC_LOAD_AS(NAME, short) CLANG_NVCC_LOAD_AS(NAME, int)                                 \
    CLANG_NVCC_LOAD_AS(NAME, long long) CLANG_NVCC_LOAD_AS(NAME, char2)                           \
    CLANG_NVCC_LOAD_AS(NAME, char4) CLANG_NVCC_LOAD_AS(NAME, short2)                              \
    CLANG_NVCC_LOAD_AS(NAME, short4) CLANG_NVCC_LOAD_AS(NAME, int2)                               \
    CLANG_NVCC_LOAD_AS(NAME, int4) CLANG_NVCC_LOAD_AS(NAME, longlong2)                            \
    CLANG_NVCC_LOAD_AS(NAME, unsigned char) CLANG_NVCC_LOAD_AS(NAME, unsigned short)              \
    CLANG_NVCC_LOAD_AS(NAME, unsigned int) CLANG_NVCC_LOAD_AS(NAME, unsigned long long)           \
    CLANG_NVCC_LOAD_AS(NAME, uchar2) CLANG_NVCC_LOAD_AS(NAME, uchar4)                             \
    CLANG_NVCC_LOAD_AS(NAME, ushort2) CLANG_NVCC_LOAD_AS(NAME, ushort4)                           \
    CLANG_NVCC_LOAD_AS(NAME, uint2) CLANG_NVCC_LOAD_AS(NAME, uint4)                               \
    CLANG_NVCC_LOAD_AS(NAME, ulonglong2) CLANG_NVCC_LOAD_AS(NAME, float)                          \
    CLANG_NVCC_LOAD_AS(NAME, double) CLANG_NVCC_LOAD_AS(NAME, float2)                             \
    CLANG_NVCC_LOAD_AS(NAME, float4) CLANG_NVCC_LOAD_AS(NAME, double2)
#define CLANG_NVCC_LOAD_AS(NAME, T)                                                               \
    static __device__ __forceinline__ T __##NAME(const T *p) { return clang_nvcc_##NAME(p); }

CLANG_NVCC_LOAD(ldcs, "cs")
CLANG_NVCC_LOAD(ldcg, "cg")
CLANG_NVCC_LOAD(ldca, "ca")
CLANG_NVCC_LOAD(ldlu, "lu")
CLANG_NVCC_LOAD(ldcv, "cv")
CLANG_NVCC_LOAD_TYPES(ldcs)
CLANG_NVCC_LOAD_TYPES(ldcg)
CLANG_NVCC_LOAD_TYPES(ldca)
CLANG_NVCC_LOAD_TYPES(ldlu)
CLANG_NVCC_LOAD_TYPES(ldcv)
#undef CLANG_NVCC_LOAD_AS
#undef CLANG_NVCC_LOAD_TYPES
#undef CLANG_NVCC_LOAD

#endif /* __clang__ && __CUDA__ */
#endif

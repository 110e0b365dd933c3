/*
 * cuda_fp16.h -- the emulator's stand-in for CUDA's header of that name,
 * which warp.cuh includes: the half types and conversions are in
 * cuda_shim.h (make test-emu puts tests/emu/ on g++'s include path).
 */
#include "cuda_shim.h"

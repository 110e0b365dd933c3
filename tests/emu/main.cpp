/*
 * main.cpp -- rooflab-emu: the CUDA kernels' device code, compiled by g++
 * against cuda_shim.h, run on the CPU emulator (machine.cpp, ptx.cpp) and
 * checked against the CPU references with the CUDA suites' tolerances.
 * `make test-emu` builds and runs it; tests/README.md says what it models
 * and what it cannot.
 *
 *   rooflab-emu [FAMILY...]     the families named (default: all)
 *   RL_EMU_THREADS=N            worker threads (default 2)
 *
 * Exit 0 when every case passed, 1 when one failed, 2 on a usage error.
 */
#include "emu.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <omp.h>

namespace {

const struct family {
    const char *name, *kernels;
    void (*run)(void);
} FAMILIES[] = {
    {"attention", "decode_split + merge_splits, flash_prefill (attention_*.cuh)", emu_attention},
    {"gemv", "gemv_tile (gemv_tile.cuh)", emu_gemv},
    {"dp4a", "gemv_dp4a (quant_dp4a.cuh)", emu_dp4a},
    {"mma", "gemm_mma + mma_sum_splits (quant_mma.cuh)", emu_mma},
    {"moe", "moe_plan_kernel (moe_plan.cuh)", emu_moe},
    {"spill", "spill_zero_copy (spill_zero_copy.cuh)", emu_spill},
    {"layer", "layer_elementwise, layer_rows, layer_rope_kernel, layer_flash (layer_kernels.cuh, layer_flash.cuh)", emu_layer},
    {"layer_backward", "layer_gelu_backward_kernel, layer_bw_rows, layer_colsums + layer_colsum_final, layer_concat_kernel (layer_backward_kernels.cuh)", emu_layer_backward},
};

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool chosen(const family &f, int argc, char **argv)
{
    if (argc < 2)
        return true;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], f.name))
            return true;
    return false;
}

} // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        bool known = false;
        for (const family &f : FAMILIES)
            known |= !strcmp(argv[i], f.name);
        if (!known) {
            fprintf(stderr, "usage: rooflab-emu [FAMILY...]; the families:\n");
            for (const family &f : FAMILIES)
                fprintf(stderr, "  %-10s %s\n", f.name, f.kernels);
            return 2;
        }
    }
    /* The references (OpenMP) are small here; a team of threads left
     * spinning after each took the cores from the emulator's workers. */
    omp_set_num_threads(1);
    const auto t0 = std::chrono::steady_clock::now();
    for (const family &f : FAMILIES) {
        if (!chosen(f, argc, argv))
            continue;
        const auto t = std::chrono::steady_clock::now();
        printf("%s: %s\n", f.name, f.kernels);
        f.run();
        printf("  (%.1f s)\n", seconds_since(t));
    }
    printf("rooflab-emu: %d cases, %d failed, %.1f s (%d worker threads)\n", rl_emu::cases(), rl_emu::failures(),
           seconds_since(t0), rl_emu::workers());
    return rl_emu::failures() ? 1 : 0;
}

/*
 * test_models.c -- every number in the "Shared arithmetic" section of the
 * claims register, reproduced by the harness's models to its stated
 * rounding; and the datasheet table's lookups.
 */
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>

/* The stated figure is what the model gives, rounded as the text rounds. */
static void assert_rounds_to(double model, double stated, double unit, const char *what)
{
    double rounded = round(model / unit) * unit;
    cr_assert_float_eq(rounded, stated, unit * 1e-6, "%s: model %.6g rounds to %.6g, claims say %.6g",
                       what, model, rounded, stated);
}

Test(models, ridge_points_of_the_claims)
{
    assert_rounds_to(rl_ridge_point(989.5e12, 3.35e12), 295, 1, "H100 SXM ridge");
    assert_rounds_to(rl_ridge_point(312e12, 2.039e12), 153, 1, "A100 80 GB ridge");
    assert_rounds_to(rl_ridge_point(312e12, 1.555e12), 201, 1, "A100 40 GB ridge");
    assert_rounds_to(rl_ridge_point(989e12, 4.8e12), 206, 1, "H200 ridge");
    assert_rounds_to(rl_ridge_point(125e12, 0.9e12), 138.9, 0.1, "V100 ridge (NVIDIA's guide)");
    /* "~165": approximate in the text; the model is within 1 % of it. */
    double ridge_4090 = rl_ridge_point(165e12, 1.008e12);
    cr_assert(fabs(ridge_4090 - 165) / 165 < 0.01, "RTX 4090 ridge %.1f", ridge_4090);
}

Test(models, intensity_one_is_a_third_of_a_percent_of_h100_peak)
{
    double peak = 989.5e12, bw = 3.35e12;
    double fraction = rl_attainable(1.0, peak, bw) / peak;
    assert_rounds_to(fraction * 100, 0.34, 0.01, "AI 1 on H100, % of peak");
    cr_assert_float_eq(rl_attainable(1000, peak, bw), peak, 1, "above the ridge: the roof");
}

Test(models, decode_intensity)
{
    /* batch 1, FP16: 2 FLOPs per weight, 2 bytes per weight */
    cr_assert_float_eq(rl_arith_intensity(2.0, 2.0), 1.0, 1e-12);
    /* ~4.85 bits per weight, dequantized before use: about 3 */
    assert_rounds_to(rl_arith_intensity(2.0, 4.85 / 8), 3, 1, "AI at 4.85 bpw");
}

Test(models, tokens_per_second_ceilings)
{
    assert_rounds_to(rl_tokens_per_s_ceiling(3.35e12, 4.8e9), 698, 1, "4.8 GB at 3.35 TB/s");
    assert_rounds_to(rl_tokens_per_s_ceiling(900e9, 4.8e9), 188, 1, "4.8 GB at 900 GB/s");
    assert_rounds_to(rl_tokens_per_s_ceiling(360e9, 4.8e9), 75, 1, "4.8 GB at 360 GB/s");
    assert_rounds_to(rl_tokens_per_s_ceiling(50e9, 4.8e9), 10, 1, "4.8 GB at 50 GB/s");
    /* Llama 3.1 8B Q4_K_M, 4.58 GiB = 4.92e9 B; 70B Q4_K_M, 40.2 GiB = 43.2e9 B */
    double gib = 1073741824.0;
    assert_rounds_to(4.58 * gib / 1e9, 4.92, 0.01, "4.58 GiB in GB");
    assert_rounds_to(40.2 * gib / 1e9, 43.2, 0.1, "40.2 GiB in GB");
    assert_rounds_to(rl_tokens_per_s_ceiling(1008e9, 4.92e9), 205, 1, "8B Q4_K_M at 1008 GB/s");
    assert_rounds_to(rl_tokens_per_s_ceiling(360e9, 4.92e9), 73, 1, "8B Q4_K_M at 360 GB/s");
    assert_rounds_to(rl_tokens_per_s_ceiling(1008e9, 43.2e9), 23, 1, "70B Q4_K_M at 1008 GB/s");
}

Test(models, waves_of_nvidias_example)
{
    /* M = 2304, K = 4096, 256 x 128 tiles, one block per SM on 108 SMs */
    cr_assert_eq(rl_tiles(2304, 1536, 256, 128), 108);
    cr_assert_eq(rl_waves(108, 108, 1), 1);
    for (long long n = 1537; n <= 1664; n++) {
        cr_assert_eq(rl_tiles(2304, n, 256, 128), 117, "N = %lld", n);
        cr_assert_eq(rl_waves(rl_tiles(2304, n, 256, 128), 108, 1), 2, "N = %lld", n);
    }
    cr_assert_eq(rl_waves(132, 132, 1), 1);
    cr_assert_eq(rl_waves(143, 132, 1), 2);
    cr_assert_eq(rl_waves(264, 132, 1), 2);
    cr_assert_eq(rl_waves(265, 132, 2), 2, "two resident blocks per SM double a wave");
}

Test(models, gemm_intensities_of_nvidias_guide)
{
    /* FP16 operands: 2 bytes per element, every operand moved once */
    double ai = rl_arith_intensity(rl_gemm_flops(512, 1024, 4096), rl_gemm_bytes(512, 1024, 4096, 2));
    assert_rounds_to(ai, 315, 1, "4096 x 1024 layer at batch 512");
    double gemv = rl_arith_intensity(rl_gemm_flops(1, 1024, 4096), rl_gemm_bytes(1, 1024, 4096, 2));
    cr_assert(gemv < 1.0 && gemv > 0.99, "a GEMV is just below 1 FLOP/B: %.4f", gemv);
    ai = rl_arith_intensity(rl_gemm_flops(8192, 128, 8192), rl_gemm_bytes(8192, 128, 8192, 2));
    assert_rounds_to(ai, 124, 1, "8192 x 128 x 8192");
    ai = rl_arith_intensity(rl_gemm_flops(8192, 8192, 8192), rl_gemm_bytes(8192, 8192, 8192, 2));
    cr_assert_float_eq(floor(ai), 2730, 1e-9, "8192^3: the guide truncates 2730.7 to 2730 (%g)", ai);
}

Test(datasheet, devices_are_found_by_their_cuda_names)
{
    struct { const char *cuda_name, *slug; } cases[] = {
        {"NVIDIA H100 80GB HBM3", "h100-sxm"}, {"NVIDIA H100 PCIe", "h100-pcie"},
        {"NVIDIA H200", "h200"},               {"NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"},
        {"NVIDIA A100-SXM4-40GB", "a100-40gb"}, {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
        {"NVIDIA GeForce RTX 4090", "rtx-4090"}, {"Tesla T4", "t4"}, {"NVIDIA L4", "l4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rl_datasheet *d = rl_datasheet_find(cases[i].cuda_name);
        cr_assert_not_null(d, "%s not found", cases[i].cuda_name);
        cr_assert_str_eq(d->slug, cases[i].slug, "%s", cases[i].cuda_name);
    }
}

Test(datasheet, other_products_are_not_mistaken_for_table_rows)
{
    cr_assert_null(rl_datasheet_find("NVIDIA L40S"), "L40S is not an L4");
    cr_assert_null(rl_datasheet_find("NVIDIA H100 NVL"), "NVL parts differ");
    cr_assert_null(rl_datasheet_find("NVIDIA GeForce RTX 3090"));
}

Test(datasheet, figures_match_the_claims_register)
{
    const rl_datasheet *h100 = rl_datasheet_by_slug("h100-sxm"), *a100 = rl_datasheet_by_slug("a100-40gb");
    cr_assert_eq(h100->sm_count, 132);
    cr_assert_float_eq(h100->mem_gbps, 3350, 1e-9);
    cr_assert_eq(a100->sm_count, 108);
    cr_assert_float_eq(a100->fp16_tflops, 312, 1e-9);
    cr_assert_float_eq(rl_datasheet_by_slug("h200")->mem_gbps, 4800, 1e-9);
    cr_assert_float_eq(rl_datasheet_by_slug("t4")->mem_gbps, 320, 1e-9);
}

/* Experiment 08's models, to the claims register's figures. */
Test(models, spill_slowdown_of_the_claims)
{
    assert_rounds_to(rl_spill_slowdown_sequential(0.1, 10), 1.9, 0.1, "10 % of the weights 10x slower");
    cr_assert_float_eq(rl_spill_slowdown_sequential(0, 10), 1.0, 1e-12, "nothing spilled");
    cr_assert_float_eq(rl_spill_slowdown_sequential(1, 10), 10.0, 1e-12, "everything on the slow tier");
    /* overlapped: the slower of the two tiers' shares sets the time */
    cr_assert_float_eq(rl_spill_slowdown_overlapped(0.1, 10), 1.0, 1e-12, "0.9 vs 1.0");
    cr_assert_float_eq(rl_spill_slowdown_overlapped(0.05, 10), 0.95, 1e-12, "the fast tier's 0.95");
    cr_assert_float_eq(rl_spill_slowdown_overlapped(0.5, 10), 5.0, 1e-12, "the slow tier's 5");
    for (double f = 0; f <= 1; f += 0.125)
        cr_assert_leq(rl_spill_slowdown_overlapped(f, 10), rl_spill_slowdown_sequential(f, 10) + 1e-12,
                      "overlap never costs more than one tier after the other (f = %g)", f);
}

Test(models, moe_experts_touched_of_the_claims)
{
    /* Qwen3-30B-A3B's shape: 128 experts, top-8 */
    static const int batch[] = {1, 4, 16, 32, 64}, stated[] = {8, 29, 82, 112, 126};
    for (int i = 0; i < 5; i++)
        assert_rounds_to(rl_moe_experts_touched(128, 8, batch[i]), stated[i], 1, "experts touched");
    cr_assert_float_eq(rl_moe_experts_touched(64, 64, 1), 64, 1e-9, "top-E touches every expert");
    cr_assert(isnan(rl_moe_experts_touched(8, 9, 1)), "top-k beyond E is no routing");
    cr_assert(rl_moe_experts_touched(128, 8, 1e6) <= 128, "never more than E");
}

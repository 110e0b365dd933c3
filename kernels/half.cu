/*
 * half.cu -- the device side of half.h's conversions, run over whole
 * arrays so that tests/test_half.c can compare them with the C ones.
 */
#include "check.h"
#include "half.h"

__global__ void halves_to_floats(float *out)
{
    int h = blockIdx.x * blockDim.x + threadIdx.x;
    if (h < 65536)
        out[h] = fp16_to_float((fp16)h);
}

__global__ void floats_to_halves(fp16 *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = float_to_fp16(in[i]);
}

extern "C" void fp16_convert_on_device(const float *floats, int n, fp16 *halves, float *all_halves)
{
    float *d_all, *d_in;
    fp16 *d_out;
    RL_CUDA_CHECK(cudaMalloc(&d_all, 65536 * sizeof(float)));
    RL_CUDA_CHECK(cudaMalloc(&d_in, (size_t)n * sizeof(float) + 4));
    RL_CUDA_CHECK(cudaMalloc(&d_out, (size_t)n * sizeof(fp16) + 2));
    RL_CUDA_CHECK(cudaMemcpy(d_in, floats, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    halves_to_floats<<<65536 / 256, 256>>>(d_all);
    RL_CUDA_CHECK_LAUNCH();
    floats_to_halves<<<(n + 255) / 256 + 1, 256>>>(d_out, d_in, n);
    RL_CUDA_CHECK_LAUNCH();
    RL_CUDA_CHECK(cudaMemcpy(all_halves, d_all, 65536 * sizeof(float), cudaMemcpyDeviceToHost));
    RL_CUDA_CHECK(cudaMemcpy(halves, d_out, (size_t)n * sizeof(fp16), cudaMemcpyDeviceToHost));
    RL_CUDA_CHECK(cudaFree(d_all));
    RL_CUDA_CHECK(cudaFree(d_in));
    RL_CUDA_CHECK(cudaFree(d_out));
}

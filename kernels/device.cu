/*
 * device.cu -- the current CUDA device's SMs (device.cuh), asked once per
 * device: a launcher's plan reads them on every call.
 */
#include "check.h"
#include "device.cuh"

int rl_device_sms(void)
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

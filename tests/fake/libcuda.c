/*
 * libcuda.c -- a stand-in for the driver's libcuda.so.1, for testing
 * build/cuda-probe without a GPU: the answers come from the environment.
 *
 *   FAKE_CUDA_VERSION  cuDriverGetVersion's answer (default 13000)
 *   FAKE_CU_INIT       cuInit's CUresult (default 0), e.g. 802 or 803
 *   FAKE_CU_COUNT      devices (default 1)
 *   FAKE_CU_RETAIN     cuDevicePrimaryCtxRetain's CUresult (default 0), e.g. 46
 *
 * Built by tests/test_probe.c with cc -shared; never linked into rooflab.
 */
#include <stdio.h>
#include <stdlib.h>

static int env(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

int cuInit(unsigned flags) { (void)flags; return env("FAKE_CU_INIT", 0); }
int cuDriverGetVersion(int *v) { *v = env("FAKE_CUDA_VERSION", 13000); return 0; }
int cuDeviceGetCount(int *n) { *n = env("FAKE_CU_COUNT", 1); return 0; }
int cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return 0; }

int cuDeviceGetName(char *name, int len, int dev)
{
    snprintf(name, (size_t)len, "Fake GPU %d", dev);
    return 0;
}

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    (void)dev;
    *ctx = (void *)ctx;
    return env("FAKE_CU_RETAIN", 0);
}

int cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }

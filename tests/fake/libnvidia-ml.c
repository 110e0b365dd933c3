/*
 * libnvidia-ml.c -- a stand-in for NVML (libnvidia-ml.so.1), for testing
 * what harness/gpu_facts.c gathers without a GPU; answers from the
 * environment:
 *
 *   FAKE_NVML_INIT  nvmlInit_v2's nvmlReturn_t (default 0; 18: version mismatch)
 *   FAKE_NVML_GPUS  GPUs listed (default 1)
 *   FAKE_NVML_MIG   1: MIG enabled on each (default 0)
 *   FAKE_NVML_MODE  compute mode (default 0; 3: exclusive process)
 *
 * Built by tests/test_probe.c with cc -shared; never linked into rooflab.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int ret;
static int env(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

ret nvmlInit_v2(void) { return env("FAKE_NVML_INIT", 0); }
ret nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(ret r) { return r == 18 ? "Driver/library version mismatch" : "fake error"; }
ret nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
    snprintf(buf, len, "999.1.2");
    return 0;
}
ret nvmlDeviceGetCount_v2(unsigned *n) { *n = (unsigned)env("FAKE_NVML_GPUS", 1); return 0; }
ret nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev) { *dev = (void *)(size_t)(i + 1); return 0; }
ret nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev) { (void)bus; *dev = (void *)1; return 0; }
ret nvmlDeviceGetMigMode(void *dev, unsigned *current, unsigned *pending)
{
    (void)dev;
    *current = *pending = (unsigned)env("FAKE_NVML_MIG", 0);
    return 0;
}
ret nvmlDeviceGetComputeMode(void *dev, int *mode) { (void)dev; *mode = env("FAKE_NVML_MODE", 0); return 0; }

/* Present because rl_nvml_load requires them; the probe does not call them. */
ret nvmlDeviceGetName(void *dev, char *buf, unsigned len) { (void)dev; snprintf(buf, len, "Fake GPU"); return 0; }
ret nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz) { (void)dev, (void)type; *mhz = 1; return 0; }
ret nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz) { (void)dev, (void)type; *mhz = 1; return 0; }
ret nvmlDeviceGetUtilizationRates(void *dev, void *u) { (void)dev; memset(u, 0, 8); return 0; }
ret nvmlDeviceGetMemoryInfo(void *dev, void *m) { (void)dev; memset(m, 0, 24); return 0; }
ret nvmlDeviceGetSamples(void *dev, int type, unsigned long long since, int *vtype, unsigned *n, void *s)
{
    (void)dev, (void)type, (void)since, (void)vtype, (void)s;
    *n = 0;
    return 3;
}

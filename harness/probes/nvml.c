/*
 * nvml.c -- NVML, loaded at run time with dlopen().
 *
 * The toolkit ships no nvml.h, and a binary must start on machines with
 * no driver at all, so nothing links against libnvidia-ml. The prototypes
 * used are declared in nvml_abi.h from NVML's documented ABI. Every call
 * is checked; a failure is reported in words, never a crash. The sampler
 * behind experiment 01 (nvml_sampler.c) shares this loader.
 */
#include "internal.h"
#include "rl_probes.h"
#include "rl_sensors.h"
#include "nvml_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

rl_nvml_api rl_nv;

#define NVML_SONAME "libnvidia-ml.so.1"

bool rl_nvml_load(const char *soname, char *why, size_t len)
{
    if (rl_nv.lib)
        return true;
    if (!soname)
        soname = NVML_SONAME;
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, len, "NVML not available (%s: %s)", soname, dlerror());
        return false;
    }
    rl_nvml_api api = {.lib = lib};
    struct { void **slot; const char *symbol; bool required; } syms[] = {
        {(void **)&api.init, "nvmlInit_v2", true},
        {(void **)&api.shutdown, "nvmlShutdown", true},
        {(void **)&api.error_string, "nvmlErrorString", true},
        {(void **)&api.by_pci, "nvmlDeviceGetHandleByPciBusId_v2", true},
        {(void **)&api.name, "nvmlDeviceGetName", true},
        {(void **)&api.driver, "nvmlSystemGetDriverVersion", true},
        {(void **)&api.clock, "nvmlDeviceGetClockInfo", true},
        {(void **)&api.max_clock, "nvmlDeviceGetMaxClockInfo", true},
        {(void **)&api.utilization, "nvmlDeviceGetUtilizationRates", true},
        {(void **)&api.memory, "nvmlDeviceGetMemoryInfo", true},
        {(void **)&api.samples, "nvmlDeviceGetSamples", true},
        {(void **)&api.gpm_query_support, "nvmlGpmQueryDeviceSupport", false},
        {(void **)&api.gpm_sample_alloc, "nvmlGpmSampleAlloc", false},
        {(void **)&api.gpm_sample_free, "nvmlGpmSampleFree", false},
        {(void **)&api.gpm_sample_get, "nvmlGpmSampleGet", false},
        {(void **)&api.gpm_metrics_get, "nvmlGpmMetricsGet", false},
        {(void **)&api.device_count, "nvmlDeviceGetCount_v2", false},
        {(void **)&api.by_index, "nvmlDeviceGetHandleByIndex_v2", false},
        {(void **)&api.mig_mode, "nvmlDeviceGetMigMode", false},
        {(void **)&api.compute_mode, "nvmlDeviceGetComputeMode", false},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        *syms[i].slot = dlsym(lib, syms[i].symbol);
        if (!*syms[i].slot && syms[i].required) {
            snprintf(why, len, "NVML too old: no %s in %s", syms[i].symbol, soname);
            dlclose(lib);
            return false;
        }
    }
    /* GPM is all or nothing. */
    if (!api.gpm_query_support || !api.gpm_sample_alloc || !api.gpm_sample_free ||
        !api.gpm_sample_get || !api.gpm_metrics_get)
        api.gpm_query_support = NULL;
    rl_nv = api;
    return true;
}

/* Checks one NVML call; on failure writes "<call> failed: <reason>". */
#define NVML_TRY(call, buf, len)                                                          \
    do {                                                                                  \
        nvmlReturn_t rc_ = (call);                                                        \
        if (rc_ != NVML_SUCCESS) {                                                        \
            snprintf(buf, len, "NVML: %s failed: %s", #call, rl_nv.error_string(rc_));    \
            goto out;                                                                     \
        }                                                                                 \
    } while (0)

void rl_nvml_describe(const char *pci_bus_id, char *buf, size_t len)
{
    if (!rl_nvml_load(NULL, buf, len))
        return;
    if (rl_nv.init() != NVML_SUCCESS) {
        snprintf(buf, len, "NVML: nvmlInit_v2 failed");
        return;
    }
    nvmlDevice_t dev;
    char name[96], driver[80];
    unsigned sm = 0, sm_max = 0, mem = 0;
    NVML_TRY(rl_nv.by_pci(pci_bus_id, &dev), buf, len);
    NVML_TRY(rl_nv.name(dev, name, sizeof name), buf, len);
    NVML_TRY(rl_nv.driver(driver, sizeof driver), buf, len);
    NVML_TRY(rl_nv.clock(dev, NVML_CLOCK_SM, &sm), buf, len);
    NVML_TRY(rl_nv.max_clock(dev, NVML_CLOCK_SM, &sm_max), buf, len);
    NVML_TRY(rl_nv.clock(dev, NVML_CLOCK_MEM, &mem), buf, len);
    snprintf(buf, len, "%s, driver %s, SM clock %u MHz now (max %u), memory clock %u MHz", name,
             driver, sm, sm_max, mem);
out:
    rl_nv.shutdown();
}

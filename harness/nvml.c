/*
 * nvml.c -- NVML, loaded at run time with dlopen().
 *
 * The toolkit ships no nvml.h, and a binary must start on machines with
 * no driver at all, so nothing links against libnvidia-ml. The few
 * prototypes used are declared here from NVML's documented ABI. Every call
 * is checked; a failure is reported in words, never a crash.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t; /* NVML_SUCCESS == 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static struct {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*driver)(char *, unsigned);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned *);
} nv;

/* Loads the library and resolves every symbol, or says why not. */
static bool nvml_load(char *why, size_t len)
{
    if (nv.lib)
        return true;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, len, "NVML not available (libnvidia-ml.so.1: %s)", dlerror());
        return false;
    }
    struct { void **slot; const char *symbol; } syms[] = {
        {(void **)&nv.init, "nvmlInit_v2"},
        {(void **)&nv.shutdown, "nvmlShutdown"},
        {(void **)&nv.error_string, "nvmlErrorString"},
        {(void **)&nv.by_pci, "nvmlDeviceGetHandleByPciBusId_v2"},
        {(void **)&nv.name, "nvmlDeviceGetName"},
        {(void **)&nv.driver, "nvmlSystemGetDriverVersion"},
        {(void **)&nv.clock, "nvmlDeviceGetClockInfo"},
        {(void **)&nv.max_clock, "nvmlDeviceGetMaxClockInfo"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        *syms[i].slot = dlsym(lib, syms[i].symbol);
        if (!*syms[i].slot) {
            snprintf(why, len, "NVML too old: no %s", syms[i].symbol);
            dlclose(lib);
            return false;
        }
    }
    nv.lib = lib;
    return true;
}

/* Checks one NVML call; on failure writes "<call> failed: <reason>". */
#define NVML_TRY(call, buf, len)                                                          \
    do {                                                                                  \
        nvmlReturn_t rc_ = (call);                                                        \
        if (rc_ != 0) {                                                                   \
            snprintf(buf, len, "NVML: %s failed: %s", #call, nv.error_string(rc_));       \
            goto out;                                                                     \
        }                                                                                 \
    } while (0)

void rl_nvml_describe(const char *pci_bus_id, char *buf, size_t len)
{
    if (!nvml_load(buf, len))
        return;
    if (nv.init() != 0) {
        snprintf(buf, len, "NVML: nvmlInit_v2 failed");
        return;
    }
    nvmlDevice_t dev;
    char name[96], driver[80];
    unsigned sm = 0, sm_max = 0, mem = 0;
    NVML_TRY(nv.by_pci(pci_bus_id, &dev), buf, len);
    NVML_TRY(nv.name(dev, name, sizeof name), buf, len);
    NVML_TRY(nv.driver(driver, sizeof driver), buf, len);
    NVML_TRY(nv.clock(dev, NVML_CLOCK_SM, &sm), buf, len);
    NVML_TRY(nv.max_clock(dev, NVML_CLOCK_SM, &sm_max), buf, len);
    NVML_TRY(nv.clock(dev, NVML_CLOCK_MEM, &mem), buf, len);
    snprintf(buf, len, "%s, driver %s, SM clock %u MHz now (max %u), memory clock %u MHz", name,
             driver, sm, sm_max, mem);
out:
    nv.shutdown();
}

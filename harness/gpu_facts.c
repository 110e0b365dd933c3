/*
 * gpu_facts.c -- what the machine says about its NVIDIA driver when CUDA
 * will not open a device: NVML (what nvidia-smi reads), the loaded kernel
 * module's version, CUDA_VISIBLE_DEVICES. The diagnosis (diagnose.c) turns
 * these facts into words; this file only gathers them, and never fails.
 */
#include "internal.h"
#include "probes/rl_probes.h"
#include "probes/rl_sensors.h"
#include "probes/nvml_abi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The version in the first line of /proc/driver/nvidia/version:
 * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..."
 * or "... Open Kernel Module for x86_64  570.86.15  Release Build ...":
 * the first word after "Module" that starts with a digit and has a dot. */
bool rl_parse_nvrm_version(const char *line, char *out, size_t len)
{
    const char *p = line ? strstr(line, "Module") : NULL;
    if (!p || len == 0)
        return false;
    for (p += strlen("Module"); *p; p++) {
        if (!isdigit((unsigned char)*p) || !isspace((unsigned char)p[-1]))
            continue;
        size_t n = strspn(p, "0123456789.");
        if (memchr(p, '.', n) && n < len) {
            memcpy(out, p, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

static void module_version(char *out, size_t len)
{
    char line[256];
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return;
    if (fgets(line, sizeof line, f))
        rl_parse_nvrm_version(line, out, len);
    fclose(f);
}

/* The device asked for, in NVML's order: NVML numbers GPUs by PCI bus,
 * as CUDA does under CUDA_DEVICE_ORDER=PCI_BUS_ID (the scripts set it). */
static void nvml_facts(rl_cuda_facts *f, int device)
{
    char why[160];
    if (!rl_nvml_load(NULL, why, sizeof why)) {
        snprintf(f->nvml_error, sizeof f->nvml_error, "%s", why);
        return;
    }
    nvmlReturn_t rc = rl_nv.init();
    if (rc != NVML_SUCCESS) {
        snprintf(f->nvml_error, sizeof f->nvml_error, "nvmlInit_v2: %s", rl_nv.error_string(rc));
        /* Only a loaded driver can disagree with its library. */
        f->driver_found |= rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH;
        return;
    }
    unsigned count = 0;
    if (rl_nv.device_count && rl_nv.device_count(&count) == NVML_SUCCESS)
        f->nvml_gpus = (int)count;
    rl_nv.driver(f->driver_version, sizeof f->driver_version);
    for (unsigned i = 0; rl_nv.by_index && i < count; i++) {
        nvmlDevice_t dev;
        unsigned current = 0, pending = 0;
        nvmlComputeMode_t mode;
        if (rl_nv.by_index(i, &dev) != NVML_SUCCESS)
            continue;
        if (rl_nv.mig_mode && rl_nv.mig_mode(dev, &current, &pending) == NVML_SUCCESS &&
            current == NVML_DEVICE_MIG_ENABLE)
            f->mig_enabled = true;
        if ((int)i == device && rl_nv.compute_mode && rl_nv.compute_mode(dev, &mode) == NVML_SUCCESS)
            f->compute_mode = mode;
    }
    rl_nv.shutdown();
}

void rl_cuda_facts_gather(rl_cuda_facts *f, int device)
{
    f->nvml_gpus = -1;
    f->compute_mode = -1;
    f->nvml_error[0] = f->driver_version[0] = f->module_version[0] = f->visible[0] = '\0';
    module_version(f->module_version, sizeof f->module_version);
    nvml_facts(f, device);
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible)
        snprintf(f->visible, sizeof f->visible, "%s", visible[0] ? visible : "(empty)");
    f->driver_found |= f->nvml_gpus > 0 || f->module_version[0] != '\0';
}

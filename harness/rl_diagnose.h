/*
 * rl_diagnose.h -- why CUDA cannot run here: the facts gathered and
 * their diagnosis (diagnose.c, gpu_facts.c). The harness's own: internal.h
 * includes it; experiments do not.
 */
#ifndef ROOFLAB_RL_DIAGNOSE_H
#define ROOFLAB_RL_DIAGNOSE_H

#include "rooflab.h"
#include "rl_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- why CUDA cannot run here (diagnose.c, gpu_facts.c) ---------------
 * The CUDA errors the diagnosis tells apart, numbered as cudaError_t and
 * as the driver API's CUresult (they agree on these). backend_cuda.cu
 * checks the numbers against the toolkit's headers at compile time. */
enum {
    RL_CUERR_INITIALIZATION = 3,
    RL_CUERR_STUB_LIBRARY = 34,
    RL_CUERR_INSUFFICIENT_DRIVER = 35,
    RL_CUERR_CALL_REQUIRES_NEWER_DRIVER = 36,
    RL_CUERR_DEVICES_UNAVAILABLE = 46,
    RL_CUERR_NO_DEVICE = 100,
    RL_CUERR_INVALID_DEVICE = 101,
    RL_CUERR_UNSUPPORTED_PTX_VERSION = 222,
    RL_CUERR_SYSTEM_NOT_READY = 802,
    RL_CUERR_SYSTEM_DRIVER_MISMATCH = 803,
    RL_CUERR_COMPAT_NOT_SUPPORTED = 804,
    RL_CUERR_UNKNOWN = 999,
};

/* NVML's compute modes (nvmlComputeMode_t); -1: not known. */
enum { RL_COMPUTE_DEFAULT = 0, RL_COMPUTE_PROHIBITED = 2, RL_COMPUTE_EXCLUSIVE_PROCESS = 3 };

/* What is known about CUDA on this machine when a device did not open. */
typedef struct rl_cuda_facts {
    int error;              /* the failing call's cudaError_t or CUresult; 0: it succeeded */
    const char *call;       /* the failing call in words, e.g. "cudaGetDeviceCount" */
    int device;             /* the device asked for */
    int device_count;       /* devices CUDA reported, when the call succeeded */
    int driver_cuda;        /* the driver's CUDA version, 12040 = 12.4; 0: no libcuda.so.1 */
    int runtime_cuda;       /* this build's CUDA runtime (or nvcc's) version, 13000 = 13.0 */
    /* From NVML (what nvidia-smi reads) and the kernel module: */
    bool driver_found;      /* NVML lists a GPU, or the NVIDIA kernel module is loaded */
    int nvml_gpus;          /* GPUs NVML lists; -1 when NVML did not answer */
    char nvml_error[160];   /* why NVML did not answer, or "" */
    char driver_version[32];/* the driver's version as NVML reports it ("550.54.15"), or "" */
    char module_version[32];/* the loaded kernel module's version, or "" */
    bool mig_enabled;       /* MIG mode is on for a GPU NVML lists */
    int compute_mode;       /* RL_COMPUTE_..., of the device asked for; -1 unknown */
    char visible[64];       /* CUDA_VISIBLE_DEVICES, or "" when unset */
} rl_cuda_facts;

/* The diagnosis of facts: RL_ABSENT when there is no NVIDIA driver at
 * all (a CPU machine), RL_UNUSABLE when a GPU is here and this build cannot
 * use it; buf gets the paragraph (what is wrong, the numbers, the
 * remedies). Pure: no I/O, no CUDA. RL_OPENED only when the facts show no
 * problem (the probe's case: driver new enough, a device, no error). */
rl_open_status rl_cuda_diagnose(const rl_cuda_facts *f, char *buf, size_t len);
/* "12.4" from 12040. */
void rl_cuda_version_string(int version, char *buf, size_t len);

/* Fills what NVML, /proc/driver/nvidia and the environment say about the
 * GPUs and the driver; leaves the CUDA fields (error, call, versions,
 * device_count) to the caller. */
void rl_cuda_facts_gather(rl_cuda_facts *f, int device);
/* The kernel module's version from the first line of /proc/driver/nvidia/version. */
bool rl_parse_nvrm_version(const char *line, char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif

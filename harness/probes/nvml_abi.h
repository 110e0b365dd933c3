/*
 * nvml_abi.h -- the part of NVML's C interface the harness uses, declared
 * here because the CUDA toolkit ships no nvml.h, and the library loaded at
 * run time with dlopen() (nvml.c), so that a binary starts on machines
 * with no driver at all. Internal to the harness.
 *
 * Every type, value and layout below is copied by hand from NVIDIA's
 * nvml.h as published in github.com/NVIDIA/go-nvml, pkg/nvml/nvml.h
 * (NVML_API_VERSION 13, commit 2f9e261f, 2026), and checked against the
 * API 11 header of 2023 (commit c892d99) where noted: the ABI of these
 * calls has not changed between them.
 */
#ifndef ROOFLAB_NVML_ABI_H
#define ROOFLAB_NVML_ABI_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvmlReturn_t; /* an enum in nvml.h; int-sized */
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6, /* nvmlDeviceGetSamples: no sample newer than asked */
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18, /* kernel module and library differ */
};

/* nvmlDeviceGetMigMode's modes, and nvmlComputeMode_t (an int-sized enum). */
enum { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };
typedef int nvmlComputeMode_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvmlClockType_t */
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

/* nvmlUtilization_t: percent of the past sample period (1/6 s to 1 s, by
 * product) during which one or more kernels was executing, and during
 * which device memory was being read or written. */
typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

/* nvmlMemory_t (version 1, as nvmlDeviceGetMemoryInfo takes it), bytes. */
typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

/* nvmlSamplingType_t, for nvmlDeviceGetSamples. */
typedef enum nvmlSamplingType_enum {
    NVML_TOTAL_POWER_SAMPLES = 0,
    NVML_GPU_UTILIZATION_SAMPLES = 1,
    NVML_MEMORY_UTILIZATION_SAMPLES = 2,
    NVML_PROCESSOR_CLK_SAMPLES = 5,
} nvmlSamplingType_t;

/* nvmlValueType_t: which member of nvmlValue_t a sample fills. */
typedef enum nvmlValueType_enum {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
    NVML_VALUE_TYPE_SIGNED_INT = 5,
    NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
} nvmlValueType_t;

typedef union nvmlValue_st {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
} nvmlValue_t;

/* One sample: "CPU timestamp in microseconds" and its value. */
typedef struct nvmlSample_st {
    unsigned long long timeStamp;
    nvmlValue_t sampleValue;
} nvmlSample_t;

/* ---- GPM (GPU performance monitoring): Hopper and later ------------------
 * Counters read twice (at least 100 ms apart) and turned into metrics over
 * the interval by nvmlGpmMetricsGet. Metric ids from nvmlGpmMetricId_t,
 * unchanged from API 11 to 13. */
enum {
    NVML_GPM_METRIC_GRAPHICS_UTIL = 1,  /* % of time any compute/graphics app was active */
    NVML_GPM_METRIC_SM_UTIL = 2,        /* % of SMs that were busy */
    NVML_GPM_METRIC_SM_OCCUPANCY = 3,   /* % of warps active vs the theoretical maximum */
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,/* % of time the SMs did any tensor operation */
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10,  /* % of DRAM bandwidth used vs the maximum */
};

/* The metrics array's length grew from 98 (API 11-12) to 210 and then 333
 * (API 13) with NVML_GPM_METRICS_GET_VERSION still 1: the library reads
 * numMetrics entries. Declaring the largest length is safe on all of them. */
enum { NVML_GPM_METRIC_MAX = 333, NVML_GPM_METRICS_GET_VERSION = 1, NVML_GPM_SUPPORT_VERSION = 1 };

typedef struct {
    struct nvmlGpmSample_st *handle;
} nvmlGpmSample_t;

typedef struct {
    char *shortName;
    char *longName;
    char *unit;
} nvmlGpmMetricMetricInfo_t;

typedef struct {
    unsigned int metricId;   /* in */
    nvmlReturn_t nvmlReturn; /* out: nonzero when value is not valid */
    double value;            /* out */
    nvmlGpmMetricMetricInfo_t metricInfo;
} nvmlGpmMetric_t;

typedef struct {
    unsigned int version;    /* NVML_GPM_METRICS_GET_VERSION */
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
    unsigned int version;           /* NVML_GPM_SUPPORT_VERSION */
    unsigned int isSupportedDevice; /* out */
} nvmlGpmSupport_t;

/* The sizes and offsets NVML's nvml.h gives these on x86-64 Linux: a wrong
 * layout here would corrupt memory in the driver's hands, so the build
 * refuses one. */
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t layout");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t layout");
_Static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t layout");
_Static_assert(sizeof(nvmlSample_t) == 16, "nvmlSample_t layout");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t layout");
_Static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24, "nvmlGpmMetricsGet_t layout");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t layout");

/* ---- the loaded library ---------------------------------------------- */

/* Entry points resolved by rl_nvml_load(). The first group is required
 * (present in every driver this century); the GPM group is NULL on drivers
 * older than GPM (R520), and callers must check. */
typedef struct rl_nvml_api {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*driver)(char *, unsigned);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*samples)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long,
                            nvmlValueType_t *, unsigned int *, nvmlSample_t *);
    /* optional */
    nvmlReturn_t (*gpm_query_support)(nvmlDevice_t, nvmlGpmSupport_t *);
    nvmlReturn_t (*gpm_sample_alloc)(nvmlGpmSample_t *);
    nvmlReturn_t (*gpm_sample_free)(nvmlGpmSample_t);
    nvmlReturn_t (*gpm_sample_get)(nvmlDevice_t, nvmlGpmSample_t);
    nvmlReturn_t (*gpm_metrics_get)(nvmlGpmMetricsGet_t *);
    /* optional, for the diagnosis of a GPU CUDA cannot use (gpu_facts.c) */
    nvmlReturn_t (*device_count)(unsigned int *);
    nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned int *current, unsigned int *pending);
    nvmlReturn_t (*compute_mode)(nvmlDevice_t, nvmlComputeMode_t *);
} rl_nvml_api;

/* The library, once rl_nvml_load() has succeeded. */
extern rl_nvml_api rl_nv;

#ifdef __cplusplus
}
#endif
#endif

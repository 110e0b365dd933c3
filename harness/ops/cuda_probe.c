/*
 * cuda_probe.c -- build/cuda-probe: can this machine's driver run what
 * nvcc builds? check-gpu and gpu-day run it before building, so that a
 * driver older than the toolkit, a fabric manager that is not running or
 * a GPU held by another process is said in a second, not after minutes
 * of compiling.
 *
 * Plain C, no CUDA headers: the driver API (libcuda.so.1) and NVML are
 * loaded with dlopen, and the words are harness/diagnose.c's, the same an
 * experiment prints.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: cuda-probe --runtime X.Y [--device N]\n\n"
    "Whether the NVIDIA driver here can run a build of CUDA X.Y (nvcc's version) on\n"
    "device N (default 0): loads libcuda.so.1, initializes it, opens the device's\n"
    "context, and says what is wrong and how to fix it when it cannot. It names the\n"
    "oldest driver that runs a CUDA X.Y build when the driver can, or is too old.\n\n"
    "exit codes: 0 it can, 1 a GPU is here but cannot run such a build (the\n"
    "diagnosis is printed), 77 no GPU or no NVIDIA driver here, 2 bad usage.\n";

/* The driver API entry points used, as cuda.h declares them (CUresult is
 * an int-sized enum, CUdevice an int, CUcontext a pointer). */
typedef struct driver_api {
    int (*init)(unsigned);
    int (*version)(int *);
    int (*count)(int *);
    int (*get)(int *, int);
    int (*name)(char *, int, int);
    int (*retain)(void **, int);
    int (*release)(int);
} driver_api;

static bool load_driver(driver_api *d)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
    *(void **)&d->init = dlsym(lib, "cuInit");
    *(void **)&d->version = dlsym(lib, "cuDriverGetVersion");
    *(void **)&d->count = dlsym(lib, "cuDeviceGetCount");
    *(void **)&d->get = dlsym(lib, "cuDeviceGet");
    *(void **)&d->name = dlsym(lib, "cuDeviceGetName");
    *(void **)&d->retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&d->release = dlsym(lib, "cuDevicePrimaryCtxRelease_v2");
    return d->init && d->version && d->count && d->get && d->name && d->retain && d->release;
}

/* Fills the CUDA facts the way backend_cuda.cu would see them, through
 * the driver API: initialization, device count, the device's context. */
static void probe(rl_cuda_facts *f, char *name, size_t len)
{
    driver_api d = {0};
    if (!load_driver(&d)) {
        f->error = RL_CUERR_INSUFFICIENT_DRIVER; /* what the runtime says then */
        f->call = "dlopen(libcuda.so.1)";
        return;
    }
    if (d.version(&f->driver_cuda) != 0)
        f->driver_cuda = 0;
    int dev = 0;
    void *ctx = NULL;
    if ((f->error = d.init(0)) != 0) {
        f->call = "cuInit";
    } else if ((f->error = d.count(&f->device_count)) != 0) {
        f->call = "cuDeviceGetCount";
    } else if (f->device >= 0 && f->device < f->device_count) {
        if ((f->error = d.get(&dev, f->device)) != 0)
            f->call = "cuDeviceGet";
        else if ((f->error = d.retain(&ctx, dev)) != 0)
            f->call = "cuDevicePrimaryCtxRetain";
        else
            d.release(dev);
        if (d.name(name, (int)len, dev) != 0)
            snprintf(name, len, "CUDA device %d", f->device);
    }
}

/* "13.0" as 13000, or -1. */
static int parse_version(const char *s)
{
    int major = 0, minor = 0;
    char extra;
    if (!s || sscanf(s, "%d.%d%c", &major, &minor, &extra) != 2 || major <= 0 || minor < 0 ||
        minor > 99)
        return -1;
    return major * 1000 + minor * 10;
}

int main(int argc, char **argv)
{
    rl_cuda_facts f = {0};
    f.runtime_cuda = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--runtime") && i + 1 < argc) {
            f.runtime_cuda = parse_version(argv[++i]);
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            f.device = atoi(argv[++i]);
        } else {
            fprintf(stderr, "cuda-probe: unknown argument '%s'\n%s", argv[i], USAGE);
            return 2;
        }
    }
    if (f.runtime_cuda < 0) {
        fprintf(stderr, "cuda-probe: --runtime X.Y (nvcc's CUDA version) is required\n%s", USAGE);
        return 2;
    }
    char name[256] = "", msg[4096], drv[16], rt[16];
    probe(&f, name, sizeof name);
    rl_cuda_facts_gather(&f, f.device);
    rl_open_status st = rl_cuda_diagnose(&f, msg, sizeof msg);
    rl_cuda_version_string(f.driver_cuda, drv, sizeof drv);
    rl_cuda_version_string(f.runtime_cuda, rt, sizeof rt);
    switch (st) {
    case RL_OPENED: /* msg: the driver this build's CUDA needs */
        printf("cuda-probe: %s: the driver%s%s supports CUDA %s; this build's CUDA is %s: ok\n"
               "cuda-probe: %s\n",
               name, f.driver_version[0] ? " " : "", f.driver_version, drv, rt, msg);
        return 0;
    case RL_ABSENT:
        printf("cuda-probe: %s\n", msg);
        return 77;
    default:
        printf("cuda-probe: %s\n", msg);
        return 1;
    }
}

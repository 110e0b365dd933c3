/*
 * diagnose.c -- why CUDA cannot run here, in words, with the remedies.
 *
 * Pure: facts in (the CUDA error, the driver's and the runtime's CUDA
 * versions, what NVML and the kernel module said), one paragraph out; when
 * nothing is wrong, the one sentence of the driver the build's CUDA needs.
 * backend_cuda.cu calls it when a device does not open; the probe that
 * check-gpu runs before building calls it with nvcc's version; the tests
 * call it with made-up facts. A GPU that is here but cannot be used must
 * say so, never turn into a silent run on the CPU.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Here, not in util.c: the probe (cuda-probe) links this file alone. */
void rl_appendf(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

void rl_list_ints(char *buf, size_t len, const int *v)
{
    if (len)
        buf[0] = 0;
    for (int i = 0; v[i]; i++)
        rl_appendf(buf, len, "%s%d", i ? " " : "", v[i]);
}

void rl_cuda_version_string(int version, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", version / 1000, version % 1000 / 10);
}

static const char *error_name(int e)
{
    switch (e) {
    case RL_CUERR_INITIALIZATION: return "cudaErrorInitializationError";
    case RL_CUERR_STUB_LIBRARY: return "cudaErrorStubLibrary";
    case RL_CUERR_INSUFFICIENT_DRIVER: return "cudaErrorInsufficientDriver";
    case RL_CUERR_CALL_REQUIRES_NEWER_DRIVER: return "cudaErrorCallRequiresNewerDriver";
    case RL_CUERR_DEVICES_UNAVAILABLE: return "cudaErrorDevicesUnavailable";
    case RL_CUERR_NO_DEVICE: return "cudaErrorNoDevice";
    case RL_CUERR_INVALID_DEVICE: return "cudaErrorInvalidDevice";
    case RL_CUERR_UNSUPPORTED_PTX_VERSION: return "cudaErrorUnsupportedPtxVersion";
    case RL_CUERR_SYSTEM_NOT_READY: return "cudaErrorSystemNotReady";
    case RL_CUERR_SYSTEM_DRIVER_MISMATCH: return "cudaErrorSystemDriverMismatch";
    case RL_CUERR_COMPAT_NOT_SUPPORTED: return "cudaErrorCompatNotSupportedOnDevice";
    case RL_CUERR_UNKNOWN: return "cudaErrorUnknown";
    default: return "CUDA error";
    }
}

/* " (cudaGetDeviceCount: cudaErrorSystemNotReady, 802)", or "" without an error. */
static void add_error(char *buf, size_t len, const rl_cuda_facts *f)
{
    if (f->error)
        rl_appendf(buf, len, " (%s: %s, %d)", f->call ? f->call : "CUDA", error_name(f->error),
                   f->error);
}

/* The Linux x86-64 NVIDIA drivers CUDA needs, from NVIDIA's CUDA Toolkit
 * Release Notes (docs.nvidia.com/cuda/cuda-toolkit-release-notes/, the
 * tables "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor
 * Version Compatibility" and "CUDA Toolkit and Corresponding Driver
 * Versions"; docs.nvidia.com/deploy/cuda-compatibility/ for the first):
 *
 *  - the oldest driver that runs a build of any toolkit of a major version
 *    (minor-version compatibility: a CUDA 12.9 build runs on 525.60.13,
 *    without the features newer than that driver, and without JIT-compiling
 *    PTX newer than it, which a GPU whose SM is in SMS never needs: the
 *    build holds its SASS);
 *  - each toolkit's own driver (its GA release's), which has all of its
 *    features.
 *
 * A minor version missing here is named by its major's minimum alone, a
 * major version missing here by the CUDA version. */
static const struct { int major; const char *driver; } MAJOR_DRIVERS[] = {
    {11, "450.80.02"}, {12, "525.60.13"}, {13, "580.65.06"},
};
static const struct { int cuda; const char *driver; } TOOLKIT_DRIVERS[] = {
    {12000, "525.60.13"}, {12010, "530.30.02"}, {12020, "535.54.03"}, {12030, "545.23.06"},
    {12040, "550.54.14"}, {12050, "555.42.02"}, {12060, "560.28.03"}, {12080, "570.26"},
    {12090, "575.51.03"}, {13000, "580.65.06"},
};

/* The oldest driver that runs a build of CUDA major.x, or NULL when not known. */
static const char *major_min_driver(int cuda_major)
{
    for (size_t i = 0; i < sizeof MAJOR_DRIVERS / sizeof MAJOR_DRIVERS[0]; i++)
        if (MAJOR_DRIVERS[i].major == cuda_major)
            return MAJOR_DRIVERS[i].driver;
    return NULL;
}

/* CUDA X.Y's own driver (12040: "550.54.14"), or NULL when not known. */
static const char *toolkit_driver(int cuda)
{
    for (size_t i = 0; i < sizeof TOOLKIT_DRIVERS / sizeof TOOLKIT_DRIVERS[0]; i++)
        if (TOOLKIT_DRIVERS[i].cuda == cuda / 10 * 10)
            return TOOLKIT_DRIVERS[i].driver;
    return NULL;
}

/* "a CUDA 12.4 build needs the NVIDIA driver 525.60.13 or newer (by CUDA's
 * minor-version compatibility; CUDA 12.4's own driver, 550.54.14 or newer,
 * has all of its features)": what the driver check says of the toolkit in use. */
static void add_needed_driver(char *buf, size_t len, int runtime_cuda)
{
    char rt[16];
    rl_cuda_version_string(runtime_cuda, rt, sizeof rt);
    const char *min = major_min_driver(runtime_cuda / 1000), *own = toolkit_driver(runtime_cuda);
    if (!min) {
        rl_appendf(buf, len, "a CUDA %s build needs a driver that supports CUDA %s", rt, rt);
        return;
    }
    rl_appendf(buf, len, "a CUDA %s build needs the NVIDIA driver %s or newer", rt, min);
    if (own && strcmp(own, min))
        rl_appendf(buf, len, " (by CUDA's minor-version compatibility; CUDA %s's own driver, %s or "
                   "newer, has all of its features)", rt, own);
}

/* "the NVIDIA driver 550.54.15", or "the NVIDIA driver" when NVML gave no version. */
static void add_driver(char *buf, size_t len, const rl_cuda_facts *f)
{
    const char *v = f->driver_version[0] ? f->driver_version : f->module_version;
    rl_appendf(buf, len, "the NVIDIA driver%s%s", v[0] ? " " : "", v);
}

static bool driver_too_old(const rl_cuda_facts *f)
{
    if (f->driver_cuda <= 0 || f->runtime_cuda <= 0)
        return false;
    /* Within one major version, minor-version compatibility runs a newer
     * runtime on an older driver; across majors it does not. */
    if (f->driver_cuda / 1000 < f->runtime_cuda / 1000)
        return true;
    bool says_so = f->error == RL_CUERR_INSUFFICIENT_DRIVER ||
                   f->error == RL_CUERR_CALL_REQUIRES_NEWER_DRIVER ||
                   f->error == RL_CUERR_UNSUPPORTED_PTX_VERSION;
    return says_so && f->driver_cuda < f->runtime_cuda;
}

static void too_old(char *buf, size_t len, const rl_cuda_facts *f)
{
    char drv[16], rt[16];
    rl_cuda_version_string(f->driver_cuda, drv, sizeof drv);
    rl_cuda_version_string(f->runtime_cuda, rt, sizeof rt);
    int dmaj = f->driver_cuda / 1000, rmaj = f->runtime_cuda / 1000;
    add_driver(buf, len, f);
    rl_appendf(buf, len, " supports CUDA %s, older than this build's CUDA runtime %s", drv, rt);
    add_error(buf, len, f);
    rl_appendf(buf, len, ". Any one of these fixes it:\n");
    if (dmaj >= 12)
        rl_appendf(buf, len,
            "  - build with a CUDA %d.x toolkit, %s or older: make NVCC=/usr/local/cuda-%s/bin/nvcc\n",
            dmaj, drv, drv);
    else
        rl_appendf(buf, len, "  - (rooflab needs CUDA 12 or newer, which needs the driver %s or "
                   "newer: no toolkit rooflab builds with runs on CUDA %s)\n",
                   major_min_driver(12), drv);
    rl_appendf(buf, len,
        "  - on a data-centre GPU, CUDA's forward-compatibility package for %s (cuda-compat-%d-%d), "
        "its libcuda first: LD_LIBRARY_PATH=/usr/local/cuda-%s/compat\n",
        rt, rmaj, f->runtime_cuda % 1000 / 10, rt);
    rl_appendf(buf, len, "  - a newer driver: ");
    add_needed_driver(buf, len, f->runtime_cuda);
    rl_appendf(buf, len, "\n");
}

static void no_libcuda(char *buf, size_t len, const rl_cuda_facts *f)
{
    if (f->module_version[0])
        rl_appendf(buf, len, "the NVIDIA kernel module %s is loaded", f->module_version);
    else
        rl_appendf(buf, len, "NVML lists %d GPU(s)", f->nvml_gpus);
    rl_appendf(buf, len, ", but the driver's CUDA library libcuda.so.1 could not be loaded");
    add_error(buf, len, f);
    rl_appendf(buf, len, ".\n"
               "  - in a container: start it with the NVIDIA container toolkit (docker run "
               "--gpus all), which mounts the driver's libraries\n"
               "  - on the host: install the driver's user-space libraries (libcuda), of the "
               "kernel module's version\n");
}

static void not_ready(char *buf, size_t len, const rl_cuda_facts *f)
{
    rl_appendf(buf, len, "the GPU system is not ready");
    add_error(buf, len, f);
    rl_appendf(buf, len, ": on HGX/DGX boards with NVSwitch, NVIDIA's fabric manager must be "
               "running, at the driver's version%s%s.\n", f->driver_version[0] ? " " : "",
               f->driver_version);
    rl_appendf(buf, len, "  - start it: systemctl start nvidia-fabricmanager (and enable it at "
               "boot); nvidia-smi -q then shows the fabric state Completed\n"
               "  - on a cloud or cluster node: tell its administrators that the node is not "
               "ready for CUDA\n");
}

static void mismatch(char *buf, size_t len, const rl_cuda_facts *f)
{
    rl_appendf(buf, len, "the NVIDIA kernel module%s%s and the driver's user-space library%s%s "
               "differ", f->module_version[0] ? " " : "", f->module_version,
               f->driver_version[0] ? " " : "", f->driver_version);
    add_error(buf, len, f);
    rl_appendf(buf, len, ": the driver was upgraded and the machine not rebooted (nvidia-smi says "
               "\"Driver/library version mismatch\").\n"
               "  - reboot; or, with no GPU process running, reload the module: rmmod "
               "nvidia_uvm nvidia_drm nvidia_modeset nvidia && modprobe nvidia\n");
}

static void mig(char *buf, size_t len, const rl_cuda_facts *f)
{
    rl_appendf(buf, len, "MIG is enabled on the GPU and no MIG device is visible to this process");
    add_error(buf, len, f);
    rl_appendf(buf, len, ".\n"
               "  - its administrator creates a GPU instance and a compute instance "
               "(nvidia-smi mig -cgi <profile> -C); choose it with "
               "CUDA_VISIBLE_DEVICES=MIG-<uuid> (nvidia-smi -L lists them)\n"
               "  - or use a GPU with MIG disabled: rooflab measures whole GPUs, and a MIG "
               "slice has a fraction of the SMs, the bandwidth and the L2\n");
}

static void busy(char *buf, size_t len, const rl_cuda_facts *f)
{
    if (f->compute_mode == RL_COMPUTE_PROHIBITED) {
        rl_appendf(buf, len, "the GPU's compute mode is Prohibited: no process may use it for "
                   "CUDA");
        add_error(buf, len, f);
        rl_appendf(buf, len, ".\n  - use another GPU (--device N), or ask its administrator\n");
        return;
    }
    rl_appendf(buf, len, "the GPU is %s and another process holds it",
        f->compute_mode == RL_COMPUTE_EXCLUSIVE_PROCESS ? "in exclusive-process compute mode"
                                                          : "busy or unavailable");
    add_error(buf, len, f);
    rl_appendf(buf, len, ".\n"
               "  - wait until that process ends (nvidia-smi lists it), then run again\n"
               "  - or use another GPU: --device N, or CUDA_VISIBLE_DEVICES=N\n");
}

static void hidden(char *buf, size_t len, const rl_cuda_facts *f)
{
    rl_appendf(buf, len, "NVML lists %d GPU(s) but CUDA sees none", f->nvml_gpus);
    add_error(buf, len, f);
    if (f->visible[0])
        rl_appendf(buf, len, ": CUDA_VISIBLE_DEVICES=%s hides them.\n  - unset it, or name a GPU "
                      "that nvidia-smi -L lists\n", f->visible);
    else
        rl_appendf(buf, len, ".\n  - nvidia-smi, and dmesg | grep -i nvrm, may say why\n");
}

static void other(char *buf, size_t len, const rl_cuda_facts *f)
{
    add_driver(buf, len, f);
    rl_appendf(buf, len, " is here but CUDA failed");
    add_error(buf, len, f);
    rl_appendf(buf, len, ".\n  - nvidia-smi, and dmesg | grep -i nvrm, may say why; in a "
               "container, check that it was started with the GPU (docker run --gpus all)\n");
}

/* Which case the facts are, as a function writing its paragraph; NULL: none. */
typedef void (*explain_fn)(char *, size_t, const rl_cuda_facts *);

static explain_fn unusable_case(const rl_cuda_facts *f)
{
    bool no_device = f->error == RL_CUERR_NO_DEVICE || (!f->error && f->device_count == 0);
    if (f->error == RL_CUERR_SYSTEM_DRIVER_MISMATCH)
        return mismatch;
    if (f->error == RL_CUERR_SYSTEM_NOT_READY)
        return not_ready;
    if (f->driver_cuda == 0 && (f->error == RL_CUERR_INSUFFICIENT_DRIVER || f->error == RL_CUERR_STUB_LIBRARY ||
                                f->error == RL_CUERR_INITIALIZATION))
        return no_libcuda;
    if (driver_too_old(f))
        return too_old;
    if (f->mig_enabled && no_device)
        return mig;
    if (f->error == RL_CUERR_DEVICES_UNAVAILABLE || f->compute_mode == RL_COMPUTE_PROHIBITED)
        return busy;
    if (no_device)
        return hidden;
    if (f->error)
        return other;
    return NULL;
}

static const char *CPU_ON_PURPOSE = "  BACKEND=cpu (--backend cpu) runs on the CPU on purpose.";

rl_open_status rl_cuda_diagnose(const rl_cuda_facts *f, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!f->driver_found && (f->error || f->device_count == 0)) {
        /* No kernel module, NVML lists no GPU, CUDA finds none: a machine
         * without an NVIDIA GPU, where BACKEND=auto means the CPU. */
        if (f->driver_cuda == 0)
            rl_appendf(buf, len, "no NVIDIA driver (no libcuda.so.1, no NVIDIA kernel module, "
                       "no GPU in NVML)");
        else if (f->error && f->error != RL_CUERR_NO_DEVICE)
            rl_appendf(buf, len, "no NVIDIA GPU found (CUDA: %s, %d)", error_name(f->error),
                       f->error);
        else
            rl_appendf(buf, len, "no CUDA-capable device");
        return RL_ABSENT;
    }
    if (!f->error && f->device_count > 0 && (f->device < 0 || f->device >= f->device_count)) {
        rl_appendf(buf, len, "no CUDA device %d: this machine has %d (--device 0 to %d)\n%s",
                   f->device, f->device_count, f->device_count - 1, CPU_ON_PURPOSE);
        return RL_UNUSABLE;
    }
    explain_fn explain = unusable_case(f);
    if (!explain) {
        /* Nothing wrong: what the build's CUDA needs, for the probe to say. */
        if (f->runtime_cuda > 0)
            add_needed_driver(buf, len, f->runtime_cuda);
        return RL_OPENED;
    }
    rl_appendf(buf, len, "a GPU is here but CUDA cannot use it: ");
    explain(buf, len, f);
    rl_appendf(buf, len, "%s", CPU_ON_PURPOSE);
    return RL_UNUSABLE;
}

/*
 * test_diagnose.c -- the words a user gets when CUDA cannot run: made-up
 * facts in, the diagnosis and its remedies out (diagnose.c is pure). Also
 * the kernel module's version parser, and that an experiment on this
 * machine without a driver still falls back to the CPU under auto.
 */
#include "helpers.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <string.h>

static char msg[4096];

/* An H100 host: NVML lists one GPU, the module is loaded, default mode. */
static rl_cuda_facts gpu_host(int error, const char *call, int driver_cuda)
{
    rl_cuda_facts f = {
        .error = error, .call = call, .driver_cuda = driver_cuda, .runtime_cuda = 13000,
        .driver_found = true, .nvml_gpus = 1, .compute_mode = RL_COMPUTE_DEFAULT,
    };
    strcpy(f.driver_version, "550.54.15");
    strcpy(f.module_version, "550.54.15");
    return f;
}

static rl_open_status diagnose(const rl_cuda_facts *f)
{
    msg[0] = '\0';
    return rl_cuda_diagnose(f, msg, sizeof msg);
}

#define assert_says(text) cr_assert(strstr(msg, text), "no \"%s\" in:\n%s", text, msg)

Test(diagnose, driver_older_than_the_runtime_names_both_versions_and_three_remedies)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_INSUFFICIENT_DRIVER, "cudaGetDeviceCount", 12040);
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("a GPU is here but CUDA cannot use it");
    assert_says("550.54.15 supports CUDA 12.4, older than this build's CUDA runtime 13.0");
    assert_says("cudaGetDeviceCount: cudaErrorInsufficientDriver, 35");
    assert_says("make NVCC=/usr/local/cuda-12.4/bin/nvcc");
    assert_says("forward-compatibility package for 13.0 (cuda-compat-13-0)");
    assert_says("a newer driver: a CUDA 13.0 build needs the NVIDIA driver 580.65.06 or newer\n");
    assert_says("BACKEND=cpu (--backend cpu) runs on the CPU on purpose");
}

Test(diagnose, the_probe_sees_an_old_driver_from_the_versions_alone)
{
    /* Before building, cuInit succeeds: only the versions tell. */
    rl_cuda_facts f = gpu_host(0, "cuInit", 12080);
    f.device_count = 1;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("supports CUDA 12.8, older than this build's CUDA runtime 13.0");
    f.driver_cuda = 13000;
    cr_assert_eq(diagnose(&f), RL_OPENED, "%s", msg);
    f.driver_cuda = 13020; /* newer than the runtime: fine */
    cr_assert_eq(diagnose(&f), RL_OPENED, "%s", msg);
}

Test(diagnose, a_driver_older_than_cuda_12_has_no_toolkit_remedy)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_INSUFFICIENT_DRIVER, "cudaGetDeviceCount", 11040);
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("rooflab needs CUDA 12 or newer, which needs the driver 525.60.13 or newer");
    cr_assert_null(strstr(msg, "make NVCC="), "%s", msg);
}

/* The driver the toolkit in use needs, by NVIDIA's release notes: a major
 * version's minimum under minor-version compatibility, and the toolkit's
 * own driver beside it where that is newer. */
Test(diagnose, the_driver_check_names_the_minimum_for_the_toolkit_in_use)
{
    /* A CUDA 13 build on an R550 driver (CUDA 12.4): R580 is the minimum. */
    rl_cuda_facts f = gpu_host(RL_CUERR_INSUFFICIENT_DRIVER, "cudaGetDeviceCount", 12040);
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("a CUDA 13.0 build needs the NVIDIA driver 580.65.06 or newer");
    /* A CUDA 12.8 build reported on a CUDA 12.4 driver with the error that
     * says so: minor-version compatibility starts at 525.60.13, and 12.8's
     * own driver has all of its features. */
    f.runtime_cuda = 12080;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("a CUDA 12.8 build needs the NVIDIA driver 525.60.13 or newer (by CUDA's minor-version "
                "compatibility; CUDA 12.8's own driver, 570.26 or newer, has all of its features)");
    /* Nothing wrong: the same sentence, for the probe to print. */
    f = gpu_host(0, "cuInit", 12040);
    f.device_count = 1;
    f.runtime_cuda = 12040;
    cr_assert_eq(diagnose(&f), RL_OPENED, "%s", msg);
    cr_assert_str_eq(msg, "a CUDA 12.4 build needs the NVIDIA driver 525.60.13 or newer (by CUDA's "
                          "minor-version compatibility; CUDA 12.4's own driver, 550.54.14 or newer, has "
                          "all of its features)");
    f.runtime_cuda = 12000; /* 12.0's own driver is the minimum itself */
    cr_assert_eq(diagnose(&f), RL_OPENED);
    cr_assert_str_eq(msg, "a CUDA 12.0 build needs the NVIDIA driver 525.60.13 or newer");
    f.driver_cuda = 13010;
    f.runtime_cuda = 13010; /* a minor version the table lacks: its major's minimum */
    cr_assert_eq(diagnose(&f), RL_OPENED);
    cr_assert_str_eq(msg, "a CUDA 13.1 build needs the NVIDIA driver 580.65.06 or newer");
    f.driver_cuda = 14000;
    f.runtime_cuda = 14000; /* a major version the table lacks */
    cr_assert_eq(diagnose(&f), RL_OPENED);
    cr_assert_str_eq(msg, "a CUDA 14.0 build needs a driver that supports CUDA 14.0");
}

Test(diagnose, error_802_is_the_fabric_manager)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_SYSTEM_NOT_READY, "cudaGetDeviceCount", 13000);
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("cudaErrorSystemNotReady, 802");
    assert_says("fabric manager");
    assert_says("systemctl start nvidia-fabricmanager");
}

Test(diagnose, error_803_is_a_module_library_mismatch_and_a_reboot)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_SYSTEM_DRIVER_MISMATCH, "cudaGetDeviceCount", 12040);
    strcpy(f.module_version, "550.54.14");
    strcpy(f.driver_version, "550.90.07");
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("kernel module 550.54.14 and the driver's user-space library 550.90.07 differ");
    assert_says("cudaErrorSystemDriverMismatch, 803");
    assert_says("reboot");
    cr_assert_null(strstr(msg, "older than"), "a mismatch is not an old driver: %s", msg);
}

Test(diagnose, no_driver_at_all_is_absent_so_auto_may_use_the_cpu)
{
    rl_cuda_facts f = {.error = RL_CUERR_INSUFFICIENT_DRIVER, .call = "cudaGetDeviceCount",
                       .runtime_cuda = 13000, .nvml_gpus = -1, .compute_mode = -1};
    cr_assert_eq(diagnose(&f), RL_ABSENT);
    assert_says("no NVIDIA driver");
    cr_assert_null(strstr(msg, "cannot use"), "%s", msg);
    f.driver_cuda = 12040; /* a libcuda without a GPU or module: still no GPU */
    f.error = RL_CUERR_NO_DEVICE;
    cr_assert_eq(diagnose(&f), RL_ABSENT);
    assert_says("no CUDA-capable device");
}

Test(diagnose, a_module_without_libcuda_is_a_container_started_without_the_gpu)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_INSUFFICIENT_DRIVER, "cudaGetDeviceCount", 0);
    strcpy(f.driver_version, "");
    f.nvml_gpus = -1;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("kernel module 550.54.15 is loaded");
    assert_says("libcuda.so.1 could not be loaded");
    assert_says("--gpus all");
}

Test(diagnose, mig_enabled_without_an_instance)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_NO_DEVICE, "cudaGetDeviceCount", 13000);
    f.mig_enabled = true;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("MIG is enabled");
    assert_says("CUDA_VISIBLE_DEVICES=MIG-<uuid>");
    f.error = 0; /* CUDA may also answer success with no device */
    f.device_count = 0;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("MIG is enabled");
}

Test(diagnose, an_exclusive_process_gpu_in_use)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_DEVICES_UNAVAILABLE, "cudaSetDevice", 13000);
    f.device_count = 1;
    f.compute_mode = RL_COMPUTE_EXCLUSIVE_PROCESS;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("exclusive-process compute mode and another process holds it");
    assert_says("cudaSetDevice: cudaErrorDevicesUnavailable, 46");
    assert_says("--device N");
    f.compute_mode = RL_COMPUTE_PROHIBITED;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("compute mode is Prohibited");
}

Test(diagnose, gpus_hidden_by_cuda_visible_devices)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_NO_DEVICE, "cudaGetDeviceCount", 13000);
    strcpy(f.visible, "7");
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("NVML lists 1 GPU(s) but CUDA sees none");
    assert_says("CUDA_VISIBLE_DEVICES=7 hides them");
}

Test(diagnose, a_device_index_past_the_last_gpu)
{
    rl_cuda_facts f = gpu_host(0, "cudaGetDeviceCount", 13000);
    f.device_count = 2;
    f.device = 2;
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("no CUDA device 2: this machine has 2 (--device 0 to 1)");
}

Test(diagnose, any_other_error_with_a_driver_is_still_unusable)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_UNKNOWN, "cudaGetDeviceCount", 13000);
    cr_assert_eq(diagnose(&f), RL_UNUSABLE);
    assert_says("is here but CUDA failed (cudaGetDeviceCount: cudaErrorUnknown, 999)");
}

Test(diagnose, a_short_buffer_is_cut_not_overrun)
{
    rl_cuda_facts f = gpu_host(RL_CUERR_INSUFFICIENT_DRIVER, "cudaGetDeviceCount", 12040);
    char small[40];
    memset(small, 'x', sizeof small);
    cr_assert_eq(rl_cuda_diagnose(&f, small, 32), RL_UNUSABLE);
    cr_assert_eq(strlen(small), 31);
    cr_assert_eq(small[33], 'x', "nothing written past the length given");
}

Test(diagnose, kernel_module_versions)
{
    char v[32];
    cr_assert(rl_parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  "
                                    "Tue Mar  5 22:23:56 UTC 2024\n", v, sizeof v));
    cr_assert_str_eq(v, "550.54.15");
    cr_assert(rl_parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                    "580.159.03  Release Build  (dvs-builder@U16-I3-B03-4-3)", v, sizeof v));
    cr_assert_str_eq(v, "580.159.03");
    cr_assert_not(rl_parse_nvrm_version("GCC version:  gcc version 12.2.0", v, sizeof v));
    cr_assert_not(rl_parse_nvrm_version(NULL, v, sizeof v));
}

/* This machine with no driver: auto still runs on the CPU, and says why. */
Test(diagnose, without_a_driver_auto_falls_back_to_the_cpu)
{
    skip_if_a_gpu_is_present();
    char dir[512], out[1 << 14], err[1 << 14];
    make_temp_dir(dir, sizeof dir);
    int rc = run_experiment(RL_BUILD_DIR "/exp-05", dir, "--quick --print-label", out, sizeof out,
                            err, sizeof err);
    rm_tree(dir);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(!strncmp(out, "cpu-", 4), "the CPU's label under auto: %s", out);
}

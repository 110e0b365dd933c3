/*
 * test_probe.c -- build/cuda-probe, the check check-gpu runs before
 * building, against stand-ins for the driver's libcuda.so.1 and NVML
 * (tests/fake/, built here with cc -shared): each broken driver gets its
 * diagnosis and exit code 1, a working one exit 0, none at all 77. This
 * runs the probe's driver-API path and gpu_facts.c's NVML path, which
 * otherwise only a GPU machine would.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE RL_BUILD_DIR "/cuda-probe"

static char dir[512];
static char out[1 << 14], err[1 << 14];

static void build_fakes(void)
{
    make_temp_dir(dir, sizeof dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cc -shared -fPIC -o '%s/libcuda.so.1' '%s/tests/fake/libcuda.c' && "
             "cc -shared -fPIC -o '%s/libnvidia-ml.so.1' '%s/tests/fake/libnvidia-ml.c'",
             dir, RL_SOURCE_ROOT, dir, RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
}

static void remove_fakes(void) { rm_tree(dir); }

TestSuite(probe, .init = build_fakes, .fini = remove_fakes);

/* Runs the probe for a CUDA 13.0 build with the fakes first on the
 * library path, and env (FAKE_...=...) set. */
static int probe(const char *env)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "env LD_LIBRARY_PATH='%s' %s %s --runtime 13.0", dir, env, PROBE);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

#define assert_says(text) cr_assert(strstr(out, text), "no \"%s\" in:\n%s%s", text, out, err)

Test(probe, a_working_driver_is_ok)
{
    cr_assert_eq(probe("FAKE_CUDA_VERSION=13000"), 0, "%s%s", out, err);
    assert_says("Fake GPU 0: the driver 999.1.2 supports CUDA 13.0; this build's CUDA is 13.0: ok\n"
                "cuda-probe: a CUDA 13.0 build needs the NVIDIA driver 580.65.06 or newer\n");
}

/* A CUDA 12 toolkit (a lab machine's) on an R550 driver: fine, by CUDA's
 * minor-version compatibility, and the minimum is named. */
Test(probe, a_cuda_12_build_names_its_minimum_driver)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "env LD_LIBRARY_PATH='%s' FAKE_CUDA_VERSION=12040 %s --runtime 12.8", dir, PROBE);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    assert_says("supports CUDA 12.4; this build's CUDA is 12.8: ok\n"
                "cuda-probe: a CUDA 12.8 build needs the NVIDIA driver 525.60.13 or newer (by CUDA's "
                "minor-version compatibility; CUDA 12.8's own driver, 570.26 or newer, has all of its "
                "features)\n");
}

Test(probe, a_driver_older_than_nvcc_fails_before_any_build)
{
    cr_assert_eq(probe("FAKE_CUDA_VERSION=12040"), 1);
    assert_says("a GPU is here but CUDA cannot use it");
    assert_says("supports CUDA 12.4, older than this build's CUDA runtime 13.0");
    assert_says("make NVCC=/usr/local/cuda-12.4/bin/nvcc");
}

Test(probe, the_fabric_manager_and_a_module_mismatch)
{
    cr_assert_eq(probe("FAKE_CU_INIT=802"), 1);
    assert_says("cuInit: cudaErrorSystemNotReady, 802");
    assert_says("fabric manager");
    cr_assert_eq(probe("FAKE_CU_INIT=803 FAKE_NVML_INIT=18"), 1);
    assert_says("cudaErrorSystemDriverMismatch, 803");
    assert_says("reboot");
}

Test(probe, mig_and_a_busy_exclusive_gpu_come_from_nvml)
{
    cr_assert_eq(probe("FAKE_CU_COUNT=0 FAKE_NVML_MIG=1"), 1);
    assert_says("MIG is enabled on the GPU");
    cr_assert_eq(probe("FAKE_CU_RETAIN=46 FAKE_NVML_MODE=3"), 1);
    assert_says("cuDevicePrimaryCtxRetain: cudaErrorDevicesUnavailable, 46");
    assert_says("exclusive-process compute mode");
}

Test(probe, bad_usage_is_2)
{
    cr_assert_eq(run_capture(PROBE, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "--runtime X.Y"), "%s", err);
    cr_assert_eq(run_capture(PROBE " --runtime thirteen", out, sizeof out, err, sizeof err), 2);
}

/* This machine's real driver, or its absence: no driver is 77, at once. */
Test(probe, no_driver_at_all_is_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_capture(PROBE " --runtime 13.0", out, sizeof out, err, sizeof err), 77);
    assert_says("no NVIDIA driver");
}

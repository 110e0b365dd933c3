/*
 * test_nvml.c -- NVML's loader without the library: a clean "not
 * available", never a crash, whatever the machine has. (The sampler on a
 * real GPU is checked in test_busy.c's cuda suite.)
 */
#include "internal.h"
#include "probes/rl_probes.h"
#include "probes/rl_sensors.h"

#include <criterion/criterion.h>
#include <string.h>

Test(nvml, an_absent_library_is_not_available)
{
    char why[256] = "";
    cr_assert_not(rl_nvml_load("libnvidia-ml-absent.so.1", why, sizeof why));
    cr_assert(strstr(why, "NVML not available") && strstr(why, "libnvidia-ml-absent.so.1"), "%s", why);
}

Test(nvml, a_library_without_nvml_is_too_old)
{
    char why[256] = "";
    cr_assert_not(rl_nvml_load("libm.so.6", why, sizeof why));
    cr_assert(strstr(why, "NVML too old: no nvmlInit_v2"), "%s", why);
}

/* Here (no driver) the library is absent; on a GPU machine it is present
 * but bus 0000:00:00.0 is no GPU. Either way: NULL and a reason. */
Test(nvml, the_sampler_says_why_it_cannot_start)
{
    char why[256] = "";
    rl_nvml_sampler *s = rl_nvml_sampler_start("0000:00:00.0", 0.05, why, sizeof why);
    cr_assert_null(s);
    cr_assert(!strncmp(why, "NVML", 4), "%s", why);
    rl_nvml_sampler_stop(NULL); /* a no-op, not a crash */
}

Test(nvml, describe_reports_in_words)
{
    char buf[256] = "";
    rl_nvml_describe("0000:00:00.0", buf, sizeof buf);
    cr_assert(!strncmp(buf, "NVML", 4), "%s", buf);
}

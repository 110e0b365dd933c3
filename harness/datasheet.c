/*
 * datasheet.c -- published figures of the GPUs the suite knows by name.
 *
 * These are leads, not measurements: the harness measures its own ceilings
 * and reports MBU/MFU against both. Dense rates only (the "with sparsity"
 * figures on NVIDIA's sheets are twice these). SM counts come from the
 * architecture whitepapers; the device reports its own at run time.
 *
 * Sources (the figures are the table's below; a comment does not repeat
 * them, so that they have one place to be corrected):
 *   V100: NVIDIA Tesla V100 datasheet (SXM2: tensor, memory bandwidth,
 *         FP32); Volta whitepaper (80 SMs, 6 MB L2).
 *   A100: NVIDIA A100 Tensor Core GPU datasheet (FP16 tensor, FP32; the
 *         bandwidth of 40 GB, 80 GB SXM and 80 GB PCIe);
 *         Ampere GA100 whitepaper (108 SMs, 40 MB L2).
 *   H100: NVIDIA H100 Tensor Core GPU datasheet (SXM and PCIe: FP16 with
 *         sparsity, halved, FP32, bandwidth);
 *         Hopper whitepaper (132 SMs SXM, 114 PCIe, 50 MB L2).
 *   H200: NVIDIA H200 Tensor Core GPU datasheet (SXM: FP16 with sparsity,
 *         halved, FP32, bandwidth, 141 GB); 132 SMs; L2 60 MB as read off
 *         one device.
 *   RTX 4090: NVIDIA Ada Lovelace architecture whitepaper (FP16 tensor
 *         with FP32 accumulate, FP32, bandwidth, 128 SMs, 72 MB L2).
 *   T4:   NVIDIA T4 datasheet (mixed precision, FP32, bandwidth);
 *         Turing whitepaper (40 SMs, 4 MB L2).
 *   L4:   NVIDIA L4 datasheet (FP16 with sparsity, halved, FP32,
 *         bandwidth); 58 SMs, 48 MB L2.
 */
#include "rooflab.h"
#include "rl_process.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const rl_datasheet rl_datasheets[] = {
    /* slug             name                 match              SMs   GB/s   FP16   FP32  L2 MB  source */
    {"v100-sxm",       "V100 SXM2",         "V100",              80,   900,  125.0,  15.7,   6, "V100 datasheet"},
    {"a100-sxm-80gb",  "A100 80GB SXM",     "A100-SXM4-80GB",   108,  2039,  312.0,  19.5,  40, "A100 datasheet"},
    {"a100-pcie-80gb", "A100 80GB PCIe",    "A100 80GB PCIe",   108,  1935,  312.0,  19.5,  40, "A100 datasheet"},
    {"a100-40gb",      "A100 40GB",         "A100",             108,  1555,  312.0,  19.5,  40, "A100 datasheet"},
    {"h100-pcie",      "H100 PCIe",         "H100 PCIe",        114,  2000,  756.5,  51.0,  50, "H100 datasheet"},
    {"h100-sxm",       "H100 SXM",          "H100",             132,  3350,  989.5,  67.0,  50, "H100 datasheet"},
    {"h200",           "H200 SXM",          "H200",             132,  4800,  989.5,  67.0,  60, "H200 datasheet"},
    {"rtx-4090",       "GeForce RTX 4090",  "RTX 4090",         128,  1008,  165.2,  82.6,  72, "Ada whitepaper"},
    {"t4",             "T4",                "T4",                40,   320,   65.0,   8.1,   4, "T4 datasheet"},
    {"l4",             "L4",                "L4",                58,   300,  121.0,  30.3,  48, "L4 datasheet"},
    {0},
};

/* A whole-word substring match, so that "L4" does not match "L40S". */
static bool has_word(const char *hay, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = strstr(hay, word); p; p = strstr(p + 1, word)) {
        bool start_ok = p == hay || !isalnum((unsigned char)p[-1]);
        bool end_ok = !isalnum((unsigned char)p[len]);
        if (start_ok && end_ok)
            return true;
    }
    return false;
}

const rl_datasheet *rl_datasheet_find(const char *device_name)
{
    /* NVL parts are different products (other clocks and memory). */
    if (!device_name || strstr(device_name, "NVL"))
        return NULL;
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++)
        if (has_word(device_name, d->match))
            return d;
    return NULL;
}

void rl_device_slug(rl_backend_kind kind, const char *name, char *slug, size_t len)
{
    char made[56];
    rl_slugify(name, made, sizeof made);
    if (kind == RL_CPU) {
        snprintf(slug, len, "cpu-%s", made);
        return;
    }
    const rl_datasheet *sheet = rl_datasheet_find(name);
    snprintf(slug, len, "%s", sheet ? sheet->slug : made);
}

const rl_datasheet *rl_datasheet_by_slug(const char *slug)
{
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++)
        if (strcmp(d->slug, slug) == 0)
            return d;
    return NULL;
}

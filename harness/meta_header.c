/*
 * meta_header.c -- the standard lines of every run's metadata header
 * (experiment, claim, device, host, commit, date, command line, mode) and
 * the story the console prints before anything is measured: rl_begin's
 * (context.c), once the backend is open.
 */
#include "internal.h"
#include "rl_budget.h"
#include "rl_ctx_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void describe_device(const rl_device_info *d, char *buf, size_t len)
{
    char a[32], b[32], c[32];
    if (d->kind == RL_CUDA) {
        rl_format_bytes(d->mem_bytes, a, sizeof a);
        rl_format_bytes(d->llc_bytes, b, sizeof b);
        snprintf(buf, len, "%s, %d SMs, compute capability %d.%d, %s, L2 %s", d->name,
                 d->sm_count, d->cc_major, d->cc_minor, a, b);
    } else {
        rl_format_bytes(d->l1d_bytes, a, sizeof a);
        rl_format_bytes(d->l2_bytes, b, sizeof b);
        rl_format_bytes(d->l3_bytes, c, sizeof c);
        char id[64] = "";
        if (rl_cpu_model_known(d))
            snprintf(id, sizeof id, " (family %d, model %d)", d->cpu_family, d->cpu_model);
        snprintf(buf, len, "%s%s, %d cores, %d threads, L1d %s, L2 %s, L3 %s", d->name, id,
                 d->cores, d->threads, a, b, c);
    }
}

void rl_write_standard_meta(rl_ctx *ctx, int argc, char **argv)
{
    const rl_experiment *e = ctx->exp;
    const rl_device_info *d = ctx->dev;
    char buf[2048];
    rl_meta(ctx, "experiment", "%s", e->slug);
    rl_meta(ctx, "title", "%s", e->title);
    rl_meta(ctx, "claim", "%s", e->claim);
    rl_meta(ctx, "source", "%s", e->source);
    rl_claims_prediction(e, buf, sizeof buf);
    rl_meta(ctx, "prediction", "%s", buf);
    rl_meta(ctx, "backend", "%s", rl_backend_name(ctx->kind));
    if (ctx->priv->fallback_note[0])
        rl_meta(ctx, "backend_note", "%s", ctx->priv->fallback_note);
    rl_meta(ctx, "device", "%s", d->name);
    describe_device(d, buf, sizeof buf);
    rl_meta(ctx, "device_detail", "%s", buf);
    rl_meta(ctx, "llc_bytes", "%.0f", d->llc_bytes);
    if (getenv("ROOFLAB_LLC") && *getenv("ROOFLAB_LLC"))
        rl_meta(ctx, "llc_pretend", "ROOFLAB_LLC=%s: the caches' sizes are pretended, the times "
                "are this machine's", getenv("ROOFLAB_LLC"));
    if (d->kind == RL_CUDA) {
        rl_meta(ctx, "sm_count", "%d", d->sm_count);
        rl_meta(ctx, "compute_capability", "%d.%d", d->cc_major, d->cc_minor);
        rl_meta(ctx, "sm_clock_mhz", "%.0f", d->sm_clock_mhz);
        rl_meta(ctx, "mem_clock_mhz", "%.0f", d->mem_clock_mhz);
        rl_meta(ctx, "mem_bus_bits", "%d", d->mem_bus_bits);
        rl_meta(ctx, "theoretical_gbps", "%.0f", d->theoretical_gbps);
        rl_meta(ctx, "mem_bytes", "%.0f", d->mem_bytes);
        rl_meta(ctx, "driver", "%s", d->driver);
        rl_meta(ctx, "runtime", "%s", d->runtime);
        rl_meta(ctx, "nvml", "%s", d->nvml);
        rl_meta(ctx, "datasheet", "%s", d->datasheet ? d->datasheet->name : "not in the table");
    }
    rl_device_info host = {0};
    rl_cpu_describe(&host);
    describe_device(&host, buf, sizeof buf);
    rl_meta(ctx, "host_cpu", "%s", buf);
    const char *dirty;
    rl_git_describe(buf, sizeof buf, &dirty);
    rl_meta(ctx, "git_commit", "%s", buf);
    rl_meta(ctx, "git_dirty", "%s", dirty); /* git_commit's "(dirty)" as data */
    rl_utc_now(buf, sizeof buf);
    rl_meta(ctx, "date_utc", "%s", buf);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used < sizeof buf; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", i ? " " : "", argv[i]);
    rl_meta(ctx, "argv", "%s", buf);
    rl_meta(ctx, "label", "%s", ctx->label);
    rl_meta(ctx, "quick", "%s", ctx->args.quick ? "yes" : "no");
    rl_meta(ctx, "mode", "%s", rl_mode_name(ctx->args.mode));
    char cap[32];
    rl_format_bytes(rl_max_bytes(ctx), cap, sizeof cap);
    rl_meta(ctx, "max_bytes", "%.0f (%s%s)", rl_max_bytes(ctx), cap,
            ctx->args.max_bytes > 0 ? ", --max-bytes" : ", the mode's default");
    rl_meta(ctx, "seed", "%llu", (unsigned long long)ctx->args.seed);
    rl_meta(ctx, "stop_rule",
            "at least %d samples and %.2f s measured; stop at %.1f %% relative stddev, or "
            "when the mean's relative standard error reaches it, or after %g s per point%s",
            ctx->rule.min_samples, ctx->rule.min_time_s, ctx->rule.max_noise * 100,
            ctx->rule.timeout_s, ctx->args.timeout_s > 0 ? " (--timeout)" : "");
    rl_meta(ctx, "cache_mode", "%s", ctx->args.cache == RL_COLD ? "cold" : "hot");
    rl_meta(ctx, "rates", "bandwidth and FLOP rates are computed from the median time");
    if (e->compare_keys)
        rl_meta(ctx, "compare_keys", "%s", e->compare_keys);
    if (e->compare_value)
        rl_meta(ctx, "compare_value", "%s", e->compare_value);
    if (e->probes)
        rl_meta(ctx, "roofs", "%s", ctx->args.start_roofs
                ? "start: MBU and MFU against the ladder measured at the run's start (--roofs start)"
                : "group: MBU and MFU against probes timed with each group (group_roof_* columns); "
                  "the ladder (roof_* lines, ceiling_gbps) is the run's start");
    rl_families_meta(ctx);
    rl_kernel_resources_meta(ctx, rl_kernel_resources);
    const char *blas = getenv("OPENBLAS_THREAD_TIMEOUT");
    rl_meta(ctx, "openblas_thread_timeout", "%s", blas ? blas : "unset: OpenBLAS's idle workers spin");
    char core[256];
    rl_cpu_blas_note(core, sizeof core);
    rl_meta(ctx, "openblas_core", "%s", core);
}

void rl_print_story(const rl_ctx *ctx)
{
    const rl_experiment *e = ctx->exp;
    char dev[512];
    describe_device(ctx->dev, dev, sizeof dev);
    printf("== rooflab %s: %s ==\n", e->id, e->title);
    printf("claim       %s\n", e->claim);
    printf("source      %s\n", e->source);
    char prediction[2048];
    rl_claims_prediction(e, prediction, sizeof prediction);
    printf("prediction  %s\n", prediction);
    printf("backend     %s%s%s\n", rl_backend_name(ctx->kind), ctx->priv->fallback_note[0] ? ": " : "",
           ctx->priv->fallback_note);
    printf("device      %s\n", dev);
    if (ctx->kind == RL_CPU) {
        char core[256];
        rl_cpu_blas_note(core, sizeof core);
        printf("library     %s\n", core);
    }
    printf("label       %s (%s)\n", ctx->label, ctx->csv_path);
    char cap[32];
    rl_format_bytes(rl_max_bytes(ctx), cap, sizeof cap);
    printf("run         %s, %s samples, working sets up to %s, seed %llu\n",
           rl_mode_name(ctx->args.mode), ctx->args.cache == RL_COLD ? "cold" : "hot", cap,
           (unsigned long long)ctx->args.seed);
    fflush(stdout);
}


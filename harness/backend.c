/*
 * backend.c -- the one interface over the CPU and CUDA backends.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

const char *rl_backend_name(rl_backend_kind k) { return k == RL_CUDA ? "cuda" : "cpu"; }

static const rl_backend_ops *ops_of(rl_backend_kind kind)
{
    return kind == RL_CUDA ? &rl_cuda_ops : &rl_cpu_ops;
}

rl_backend *rl_backend_open_status(rl_backend_kind kind, int device, rl_open_status *status,
                                   char *why, size_t whylen)
{
    rl_backend *be = calloc(1, sizeof *be);
    if (!be)
        rl_die(RL_EXIT_FAILED, "out of memory");
    be->ops = ops_of(kind);
    be->info.kind = kind;
    *status = be->ops->open(device, &be->info, why, whylen);
    if (*status != RL_OPENED) {
        free(be);
        return NULL;
    }
    be->info.datasheet = kind == RL_CUDA ? rl_datasheet_find(be->info.name) : NULL;
    rl_device_slug(kind, be->info.name, be->info.slug, sizeof be->info.slug);
    return be;
}

rl_backend *rl_backend_open(rl_backend_kind kind, int device, char *why, size_t whylen)
{
    rl_open_status status;
    return rl_backend_open_status(kind, device, &status, why, whylen);
}

void rl_backend_close(rl_backend *be)
{
    if (!be)
        return;
    be->ops->close();
    free(be);
}

const rl_device_info *rl_device(const rl_backend *be) { return &be->info; }
rl_backend_kind rl_kind(const rl_backend *be) { return be->info.kind; }
void *rl_alloc(rl_backend *be, size_t bytes) { return be->ops->alloc(bytes); }
void rl_free(rl_backend *be, void *p) { if (p) be->ops->free(p); }
void rl_sync(rl_backend *be) { be->ops->sync(); }
struct CUstream_st *rl_stream(rl_backend *be) { return be->ops->stream(); }

void rl_range_push(rl_backend *be, const char *name)
{
    be->ranges++;
    if (be->ops->range_push) /* backend_nocuda.c's table has none */
        be->ops->range_push(name ? name : "");
}

void rl_range_pop(rl_backend *be)
{
    if (be->ranges == 0)
        return;
    be->ranges--;
    if (be->ops->range_pop)
        be->ops->range_pop();
}

void rl_upload(rl_backend *be, void *dst, const void *src, size_t bytes)
{
    be->ops->upload(dst, src, bytes);
}

void *rl_alloc_copy(rl_backend *be, const void *host, size_t bytes)
{
    void *p = rl_alloc(be, bytes);
    rl_upload(be, p, host, bytes);
    return p;
}

void rl_download(rl_backend *be, void *dst, const void *src, size_t bytes)
{
    be->ops->download(dst, src, bytes);
}

void *rl_download_copy(rl_backend *be, const void *dev, size_t bytes)
{
    void *p = rl_host_alloc(bytes);
    rl_download(be, p, dev, bytes);
    return p;
}

void rl_poison(rl_backend *be, void *p, size_t bytes) { be->ops->poison(p, bytes); }

/*
 * rl_backend.h -- opening and closing a backend, and what only the harness
 * asks of one. rl_main opens the run's backend and an experiment reaches
 * it as ctx->be, with the memory calls of rl_library.h; context.c, the
 * ceilings, the tools and the tests open their own through this room.
 */
#ifndef RL_BACKEND_H
#define RL_BACKEND_H

#include "rl_library.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *rl_backend_name(rl_backend_kind k);

/* Opens a backend on a device. Returns NULL and a reason when it is not
 * available (built without nvcc, no driver, no device, bad index). */
rl_backend *rl_backend_open(rl_backend_kind kind, int device, char *why, size_t whylen);

/* RL_ABSENT: no such device (no NVIDIA driver at all, a build without
 * CUDA): auto may use the CPU. RL_UNUSABLE: a GPU is here that this build
 * cannot use (old driver, fabric manager, MIG, busy...): why holds the
 * diagnosis (diagnose.c), which a CPU run would hide. */
typedef enum rl_open_status { RL_OPENED, RL_ABSENT, RL_UNUSABLE } rl_open_status;
rl_backend *rl_backend_open_status(rl_backend_kind kind, int device, rl_open_status *status,
                                   char *why, size_t whylen);
void rl_backend_close(rl_backend *be);

const rl_device_info *rl_device(const rl_backend *be);
rl_backend_kind rl_kind(const rl_backend *be);

/* Device memory back to the host (an experiment uses rl_download_copy). */
void rl_download(rl_backend *be, void *dst, const void *src, size_t bytes);

#ifdef RL_HAVE_CUDA
/* cuBLAS and cuBLASLt are opened at their first call (cublas_loader.cu),
 * not linked: whether every function the code calls is found in the
 * libraries of the toolkit built against; 0 and why where not. */
int rl_cublas_resolve_all(char *why, size_t len);
#endif

#ifdef __cplusplus
}
#endif
#endif /* RL_BACKEND_H */

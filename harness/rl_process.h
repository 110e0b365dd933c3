/*
 * rl_process.h -- the command line and the life of the process: parsing
 * the arguments (cli.c), temporary files removed if the process dies, and
 * SIGTERM as a request to stop (util.c). rl_main does all of it for an
 * experiment (it reads ctx->args); run.c, context.c, the tools and the
 * tests of the command line include it.
 */
#ifndef RL_PROCESS_H
#define RL_PROCESS_H

#include "rl_library.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *rl_mode_name(rl_mode m); /* "lab", "quick", "full" */

/* Parses argv into args. Returns 0, or RL_EXIT_USAGE after printing a
 * one-line error naming the program and the bad argument to stderr. */
int rl_parse_args(int argc, char **argv, const rl_option *extra, rl_args *args);
void rl_print_usage(const char *prog, const char *title, const rl_option *extra);
/* Parses a size such as "4096", "64Ki", "1Mi", "2^20". Returns false on junk. */
bool rl_parse_size(const char *s, size_t *out);

/* ---- The process (util.c) ---- */
void rl_slugify(const char *in, char *out, size_t len);
/* Registers a file to remove if the process dies (temporary outputs). */
void rl_cleanup_register(const char *path);
void rl_cleanup_unregister(const char *path);
/* From now on SIGTERM only asks the run to stop (util.c says why); one
 * that has not ended ROOFLAB_STOP_GRACE_S (4) later dies by it, its
 * temporary files removed. */
void rl_stop_on_sigterm(void);
/* The signal that asked the run to stop (SIGTERM), or 0. */
int rl_stop_requested(void);

#ifdef __cplusplus
}
#endif
#endif /* RL_PROCESS_H */

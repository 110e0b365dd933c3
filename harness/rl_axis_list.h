/*
 * rl_axis_list.h -- an axis's values in this run as words, "1 4 64", the
 * way the metadata of experiments 02 and 07 lists them (axis_list.c);
 * rl_axis_text's "1, 4, 64" is the harness's own. Included by the
 * experiments directly, not by rooflab.h.
 */
#ifndef RL_AXIS_LIST_H
#define RL_AXIS_LIST_H

#include "rooflab.h"

#ifdef __cplusplus
extern "C" {
#endif

void rl_axis_list(const rl_ctx *ctx, const rl_axis *a, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* RL_AXIS_LIST_H */

/*
 * cpu/decode_tune.h -- the CPU decode kernels' shapes, chosen on this
 * machine (decode_tune.c, through harness/tuning.c).
 */
#ifndef CPU_DECODE_TUNE_H
#define CPU_DECODE_TUNE_H

#include <stdbool.h>

struct rl_ctx;

/* On the CPU backend: the FP16 GEMV's rows per step (key tuning_f16), and
 * with integer_formats each integer format's rows and prefetch distance
 * (tuning_q8 ... tuning_q2): cached in the label's tuning.csv, timed on
 * this machine in a lab or full run when not (or with --retune), the
 * defaults under --quick and --budget. Nothing on the GPU. */
void decode_tune_cpu(struct rl_ctx *ctx, bool integer_formats);

/* The same, timed on one hot rows x k matrix instead (exp-03 --matrix
 * --cache hot, and a cache-sized model): a matrix that fits a cache may
 * want another shape than one read from DRAM, so its choice is cached
 * under its own keys
 * (tuning_f16_4096x14336_hot ...). rows = 0: decode_tune_cpu. */
void decode_tune_cpu_at(struct rl_ctx *ctx, bool integer_formats, int rows, int k);

#endif

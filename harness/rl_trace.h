/*
 * rl_trace.h -- a timeline in the Chrome trace format (trace.c): the JSON
 * object form of the Trace Event Format that PyTorch's profiler writes
 * and that Perfetto (ui.perfetto.dev) and chrome://tracing open,
 *
 *   {"traceEvents":[
 *   {"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"..."}},
 *   {"name":"qkv","cat":"contraction","ph":"X","ts":0.000,"dur":12.500,
 *    "pid":1,"tid":1,"args":{"bytes":1048576}},
 *   ...
 *   ],"displayTimeUnit":"ms"}
 *
 * one event a line. Complete events ("ph":"X") only, on one process (pid
 * 1), a track per thread id; times in microseconds, as the format wants.
 * The file is written beside its path under a temporary name and renamed
 * into place by rl_trace_close: a run that fails or dies half way leaves
 * no file (and any earlier one untouched). Strings are JSON-escaped (a
 * byte that is not UTF-8 becomes U+FFFD); a number that is not finite is
 * written as null in args, and an event whose ts or dur is not finite, or
 * whose dur is negative, is not written at all (rl_trace_complete says
 * so). Plain C11, usable from .c and .cu files.
 */
#ifndef RL_TRACE_H
#define RL_TRACE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_trace rl_trace;

/* Opens a temporary file beside path (".NAME.tmp.XXXXXX", registered for
 * removal if the process dies) and writes the process_name metadata
 * (process NULL: none). Returns NULL with errno set when the file cannot
 * be made (a folder that does not exist is not created: ENOENT). */
rl_trace *rl_trace_open(const char *path, const char *process);

/* One complete event: name and category (NULL: ""), start and duration
 * in microseconds, its track (thread id), and n arguments, keys[i] =
 * values[i] (keys and values may be NULL when n is 0). Returns 0 when
 * written; -1 when not: ts or dur not finite, dur negative, or the trace
 * already failed to write (rl_trace_close will then fail too). */
int rl_trace_complete(rl_trace *t, const char *name, const char *cat, double ts_us, double dur_us,
                      int tid, const char *const *keys, const double *values, int n);

/* Names a track (thread_name metadata) and keeps the tracks in the order
 * of their ids (thread_sort_index). */
void rl_trace_thread_name(rl_trace *t, int tid, const char *name);

/* Ends the JSON, syncs the file and renames it to path; frees t. Returns
 * 0 on success; -1 with errno set on any failed write since the open
 * (then path is untouched and the temporary file removed). */
int rl_trace_close(rl_trace *t);

/* Abandons the trace: removes the temporary file, frees t (NULL: nothing). */
void rl_trace_abort(rl_trace *t);

#ifdef __cplusplus
}
#endif
#endif /* RL_TRACE_H */

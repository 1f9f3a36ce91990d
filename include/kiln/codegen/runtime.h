/* The small runtime that generated code calls through C symbols. One C11
 * implementation (lib/codegen/runtime.c) is both what the JIT links by
 * address and what `kiln export` bundles with exported kernels, so this
 * header is C: it is included by C++ and by the C the export writes. */
#ifndef KILN_CODEGEN_RUNTIME_H
#define KILN_CODEGEN_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** 64-byte aligned heap memory for an intermediate stage; never returns null
 * (aborts with a message when memory is exhausted). */
void* kiln_rt_alloc(int64_t bytes);
void kiln_rt_free(void* ptr);

/** One iteration of a parallel loop: `index` in [0, n), `closure` the
 * variables and buffers the loop body uses. */
typedef void (*kiln_task_fn)(int64_t index, void* closure);

/** Runs fn(i, closure) for every i in [0, n) on the runtime's persistent
 * thread pool: the iterations are cut into one contiguous chunk per thread,
 * and the calling thread runs one of them. A call made from inside a
 * parallel loop runs serially (nested parallelism is serialised). */
void kiln_rt_parallel_for(int64_t n, kiln_task_fn fn, void* closure);

/** The most threads a parallel loop uses; kiln_rt_set_num_threads caps a
 * larger request to it. */
#define KILN_RT_MAX_THREADS 1024

/** Threads used by parallel loops (default: every core); n < 1 means the
 * default. Must not be called while a parallel loop runs. */
void kiln_rt_set_num_threads(int n);
int kiln_rt_num_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CODEGEN_RUNTIME_H */

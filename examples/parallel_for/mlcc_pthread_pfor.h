// SPDX-License-Identifier: Apache-2.0
// A small pthread implementation of the parallel-for callback taken by the
// NAME_run_parallel entry points that mlcc generates (docs/generated-api.md):
//
//   mlcc_pthread_pool_t* pool = mlcc_pthread_pool_create(2);
//   model_run_parallel(in, out, ws, mlcc_pthread_pfor, pool);
//   mlcc_pthread_pool_destroy(pool);
//
// The pool keeps |n_threads|-1 worker threads; the calling thread is the
// last worker. Tasks of one call are handed out dynamically (a CAS'd ticket
// tagged with the call, so a preempted worker never runs a stale task): the
// caller takes them from the front of [0, n), the workers from the back, so
// on 2 threads the caller runs a prefix and the worker the rest. Consecutive
// kernels split the same way (pixel tiles, rows) then find most of their
// input in their own core's cache (measured on the Intel Xeon, BENCHMARKS.md
// "Session 12"). More than 2^20 - 1 tasks run as several rounds. Workers spin (a pause loop of up to 200 microseconds) between calls, then
// sleep on a condition variable; the caller yields while waiting.
// One pool serves one caller at a time (not reentrant across threads).
#ifndef MLCC_PTHREAD_PFOR_H_
#define MLCC_PTHREAD_PFOR_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_pthread_pool_t mlcc_pthread_pool_t;

// Creates a pool running tasks on |n_threads| threads in total (>= 1).
// Returns NULL on failure (bad count, out of memory, thread creation).
mlcc_pthread_pool_t* mlcc_pthread_pool_create(int n_threads);

// Stops and joins the workers and frees |pool| (NULL is a no-op).
void mlcc_pthread_pool_destroy(mlcc_pthread_pool_t* pool);

// The callback: runs fn(arg, i) for every i in [0, n) on the pool |ctx| and
// returns when all have finished.
void mlcc_pthread_pfor(void* ctx, int64_t n, void (*fn)(void* arg, int64_t i), void* arg);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_PTHREAD_PFOR_H_

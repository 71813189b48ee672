// SPDX-License-Identifier: Apache-2.0
// Per-kernel profile of an mlcc library built with --profile. Built by
// bench/profile_kernels.py with -include <NAME>.h -DMLCC_NAME=<NAME> and
// examples/parallel_for/mlcc_pthread_pfor.c linked in.
// Usage: profile_main RUNS THREADS IN_0.bin ... IN_n.bin
// Runs 3 warm-up runs, resets the table, runs RUNS timed runs (THREADS > 1:
// NAME_run_parallel_v on a pthread pool of THREADS threads), then prints
//   run <min_ms> <median_ms>
// and one line per kernel (tab-separated):
//   k <index> <calls> <total_ns> <min_ns> <flops> <units> <ops> <name>
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_buffers.h"
#include "mlcc_pthread_pfor.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define INFO CAT(MLCC_NAME, _info)
#define RUN_PARALLEL_V CAT(MLCC_NAME, _run_parallel_v)
#define PROFILE CAT(MLCC_NAME, _profile)
#define PROFILE_RESET CAT(MLCC_NAME, _profile_reset)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const mlcc_model_info_t* info = &INFO;
  if (argc != 3 + info->num_inputs) return 2;
  int runs = atoi(argv[1]), threads = atoi(argv[2]);
  if (runs < 1 || runs > 100000 || threads < 1 || threads > 256) return 2;
  const void* inputs[64];
  void* outputs[64];
  int ws_ok = 0;
  void* ws = bench_alloc_workspace(info, &ws_ok);
  if (!bench_read_inputs(info, argv + 3, inputs) || !bench_alloc_outputs(info, outputs) || !ws_ok) {
    return 2;
  }
  mlcc_pthread_pool_t* pool = threads > 1 ? mlcc_pthread_pool_create(threads) : NULL;
  if (threads > 1 && pool == NULL) return 2;
  for (int r = 0; r < 3; ++r) {
    if (RUN_PARALLEL_V(inputs, outputs, ws, pool ? mlcc_pthread_pfor : NULL, pool) != 0) return 3;
  }
  PROFILE_RESET();
  double* t = malloc(sizeof(double) * (size_t)runs);
  if (!t) return 2;
  for (int r = 0; r < runs; ++r) {
    double t0 = now_ms();
    if (RUN_PARALLEL_V(inputs, outputs, ws, pool ? mlcc_pthread_pfor : NULL, pool) != 0) return 3;
    t[r] = now_ms() - t0;
  }
  qsort(t, (size_t)runs, sizeof(double), cmp_double);
  printf("run\t%.4f\t%.4f\n", t[0], t[runs / 2]);
  const mlcc_profile_entry_t* rows = NULL;
  int32_t n = PROFILE(&rows);
  for (int32_t k = 0; k < n; ++k) {
    printf("k\t%d\t%lld\t%lld\t%lld\t%lld\t%lld\t%s\t%s\n", (int)k, (long long)rows[k].calls,
           (long long)rows[k].ns, (long long)rows[k].min_ns, (long long)rows[k].flops,
           (long long)rows[k].units, rows[k].ops, rows[k].name);
  }
  mlcc_pthread_pool_destroy(pool);
  return 0;
}

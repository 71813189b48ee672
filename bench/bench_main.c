// SPDX-License-Identifier: Apache-2.0
// Latency benchmark for an mlcc-generated library. Built by bench/run.py with
// -include <NAME>.h -DMLCC_INFO=<NAME>_info.
// Usage: bench_main RUNS IN_0.bin ... IN_n.bin
// With -DMLCC_RUN_PARALLEL_V=<NAME>_run_parallel_v (and
// examples/parallel_for/mlcc_pthread_pfor.c linked in), MLCC_BENCH_THREADS=N
// runs the parallel entry point on a pool of N threads.
// Prints "median_ms min_ms" after 3 warm-up runs and RUNS timed runs; with
// MLCC_BENCH_OUT set, writes output 0 of the last run there.
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_buffers.h"

#ifdef MLCC_RUN_PARALLEL_V
#include "mlcc_pthread_pfor.h"
int MLCC_RUN_PARALLEL_V(const void* const* inputs, void* const* outputs, void* workspace,
                        void (*pfor)(void*, int64_t, void (*)(void*, int64_t), void*),
                        void* pfor_ctx);
static mlcc_pthread_pool_t* g_pool;
#define RUN(i, o, w) \
  (g_pool ? MLCC_RUN_PARALLEL_V((i), (o), (w), mlcc_pthread_pfor, g_pool) : info->run((i), (o), (w)))
#else
#define RUN(i, o, w) info->run((i), (o), (w))
#endif

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
  const mlcc_model_info_t* info = &MLCC_INFO;
  if (argc != 2 + info->num_inputs) return 2;
  int runs = atoi(argv[1]);
  if (runs < 1 || runs > 100000) return 2;
  const void* inputs[64];
  void* outputs[64];
  int ws_ok = 0;
  void* ws = bench_alloc_workspace(info, &ws_ok);
  if (!bench_read_inputs(info, argv + 2, inputs) || !bench_alloc_outputs(info, outputs) || !ws_ok) {
    return 2;
  }
#ifdef MLCC_RUN_PARALLEL_V
  const char* th = getenv("MLCC_BENCH_THREADS");
  if (th && atoi(th) > 1) {
    g_pool = mlcc_pthread_pool_create(atoi(th));
    if (!g_pool) return 2;
  }
#endif
  for (int r = 0; r < 3; ++r) RUN(inputs, outputs, ws);
  double* t = malloc(sizeof(double) * (size_t)runs);
  if (!t) return 2;
  for (int r = 0; r < runs; ++r) {
    double t0 = now_ms();
    if (RUN(inputs, outputs, ws) != 0) return 3;
    t[r] = now_ms() - t0;
  }
  const char* out_path = getenv("MLCC_BENCH_OUT");
  if (out_path && info->num_outputs > 0) {
    FILE* f = fopen(out_path, "wb");
    if (!f) return 2;
    fwrite(outputs[0], 1, (size_t)info->outputs[0].size_bytes, f);
    fclose(f);
  }
  qsort(t, (size_t)runs, sizeof(double), cmp_double);
  printf("%.4f %.4f\n", t[runs / 2], t[0]);
  return 0;
}

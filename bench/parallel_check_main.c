// SPDX-License-Identifier: Apache-2.0
// Checks that NAME_run_parallel_v gives bit-identical outputs to NAME_run_v
// (docs/generated-api.md) on pthread pools of 2, 3 and 4 threads. Built by
// bench/parallel_check.py with -include <NAME>.h -DMLCC_NAME=<NAME>.
// Usage: parallel_check_main IN_0.bin ... IN_n.bin; exit 0 when identical,
// 1 (naming the output and thread count) otherwise, 2 on setup errors.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_buffers.h"
#include "mlcc_pthread_pfor.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define INFO CAT(MLCC_NAME, _info)
#define RUN_PARALLEL_V CAT(MLCC_NAME, _run_parallel_v)

int main(int argc, char** argv) {
  const mlcc_model_info_t* info = &INFO;
  if (argc != 1 + info->num_inputs || info->num_outputs > 64 || info->num_inputs > 64) return 2;
  const void* inputs[64];
  void* ref[64];
  void* out[64];
  int ws_ok = 0;
  void* ws = bench_alloc_workspace(info, &ws_ok);
  if (!bench_read_inputs(info, argv + 1, inputs) || !bench_alloc_outputs(info, ref) ||
      !bench_alloc_outputs(info, out) || !ws_ok) {
    return 2;
  }
  if (info->run(inputs, ref, ws) != 0) return 2;
  int bad = 0;
  for (int nt = 2; nt <= 4; ++nt) {
    mlcc_pthread_pool_t* pool = mlcc_pthread_pool_create(nt);
    if (pool == NULL) return 2;
    for (int rep = 0; rep < 5; ++rep) {
      for (int i = 0; i < info->num_outputs; ++i) memset(out[i], 0xA5, (size_t)info->outputs[i].size_bytes);
      if (RUN_PARALLEL_V(inputs, out, ws, mlcc_pthread_pfor, pool) != 0) return 2;
      for (int i = 0; i < info->num_outputs; ++i) {
        if (memcmp(ref[i], out[i], (size_t)info->outputs[i].size_bytes) != 0) {
          fprintf(stderr, "output %d (%s) differs with %d threads (run %d)\n", i,
                  info->outputs[i].name, nt, rep);
          bad = 1;
        }
      }
    }
    mlcc_pthread_pool_destroy(pool);
  }
  return bad;
}

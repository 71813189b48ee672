// SPDX-License-Identifier: Apache-2.0
// Buffers for the bench harnesses (bench_main.c, profile_main.c,
// parallel_check_main.c): inputs read from raw files, outputs and the
// workspace allocated at the sizes mlcc_model_info_t gives. Include after the
// generated model header (it defines mlcc_model_info_t). Header-only.
#ifndef MLCC_BENCH_BENCH_BUFFERS_H_
#define MLCC_BENCH_BENCH_BUFFERS_H_

#include <stdio.h>
#include <stdlib.h>

// Reads input i of |info| from |paths[i]| (exactly size_bytes raw bytes each)
// into a malloc'ed buffer. False on a missing/short file or out of memory.
static inline int bench_read_inputs(const mlcc_model_info_t* info, char** paths,
                                    const void** inputs) {
  for (int i = 0; i < info->num_inputs; ++i) {
    size_t n = (size_t)info->inputs[i].size_bytes;
    void* buf = malloc(n ? n : 1);
    FILE* f = fopen(paths[i], "rb");
    int ok = buf != NULL && f != NULL && fread(buf, 1, n, f) == n;
    if (f != NULL) fclose(f);
    if (!ok) return 0;
    inputs[i] = buf;
  }
  return 1;
}

// One malloc'ed buffer per output (size_bytes + 1, never 0 bytes).
static inline int bench_alloc_outputs(const mlcc_model_info_t* info, void** outputs) {
  for (int i = 0; i < info->num_outputs; ++i) {
    outputs[i] = malloc((size_t)info->outputs[i].size_bytes + 1);
    if (outputs[i] == NULL) return 0;
  }
  return 1;
}

// The workspace, aligned as the model asks; NULL with *ok set when the model
// needs none.
static inline void* bench_alloc_workspace(const mlcc_model_info_t* info, int* ok) {
  size_t align = (size_t)info->workspace_align;
  size_t size = ((size_t)info->workspace_size + align - 1) / align * align;
  void* ws = size ? aligned_alloc(align, size) : NULL;
  *ok = size == 0 || ws != NULL;
  return ws;
}

#endif  // MLCC_BENCH_BENCH_BUFFERS_H_

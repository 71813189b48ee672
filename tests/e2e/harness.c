// SPDX-License-Identifier: Apache-2.0
// Generic test harness for any mlcc-generated library. Built by
// tests/e2e/run_case.py with -include <NAME>.h -DMLCC_INFO=<NAME>_info.
// Usage: harness IN_0.bin ... IN_n.bin OUT_0.bin ... OUT_m.bin
// Each .bin holds a tensor's raw little-endian elements; sizes are checked
// against the model's info. After the run every output's dims come from
// NAME_output_shape (info->output_shape): static outputs must report their
// info dims; an output with data-dependent dims (info->output_bound_dims) is
// written with its actual size, and one line per output goes to stdout:
//   mlcc-output <i> bound=<mask> dims=<d0>,<d1>,...
// Only libc is used, so it runs under qemu-user. Including files may define
// MLCC_HARNESS_RUN to wrap the run (tests/e2e/stack_harness.c).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MLCC_INFO
#error "define MLCC_INFO to the model's <name>_info symbol"
#endif

static void* read_file(const char* path, int64_t want) {
  FILE* f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "harness: cannot open %s\n", path); return NULL; }
  void* buf = malloc(want > 0 ? (size_t)want : 1);
  size_t got = buf ? fread(buf, 1, (size_t)want, f) : 0;
  int extra = fgetc(f);
  fclose(f);
  if (!buf || (int64_t)got != want || extra != EOF) {
    fprintf(stderr, "harness: %s: expected %lld bytes\n", path, (long long)want);
    free(buf);
    return NULL;
  }
  return buf;
}

int main(int argc, char** argv) {
  const mlcc_model_info_t* info = &MLCC_INFO;
  if (argc != 1 + info->num_inputs + info->num_outputs) {
    fprintf(stderr, "harness: %s takes %d inputs and %d outputs\n", info->name,
            info->num_inputs, info->num_outputs);
    return 2;
  }
  const void* inputs[64];
  void* outputs[64];
  if (info->num_inputs > 64 || info->num_outputs > 64) return 2;
  for (int i = 0; i < info->num_inputs; ++i) {
    inputs[i] = read_file(argv[1 + i], info->inputs[i].size_bytes);
    if (!inputs[i]) return 2;
  }
  for (int i = 0; i < info->num_outputs; ++i) {
    // Poison outputs so a kernel that skips elements is caught.
    size_t n = (size_t)info->outputs[i].size_bytes;
    outputs[i] = malloc(n ? n : 1);
    if (!outputs[i]) return 2;
    memset(outputs[i], 0xA5, n);
  }
  size_t ws_size = (size_t)info->workspace_size;
  size_t align = (size_t)info->workspace_align;
  void* ws = NULL;
  if (ws_size) {
    ws = aligned_alloc(align, (ws_size + align - 1) / align * align);
    if (!ws) return 2;
    memset(ws, 0x5A, ws_size);
  }
  // MLCC_HARNESS_RUN(info, inputs, outputs, ws): a wrapper that runs the
  // model some other way (tests/e2e/stack_harness.c: on a measured stack).
#ifdef MLCC_HARNESS_RUN
  int rc = MLCC_HARNESS_RUN(info, inputs, outputs, ws);
#else
  int rc = info->run(inputs, outputs, ws);
#endif
  if (rc != 0) {
    fprintf(stderr, "harness: %s_run returned %d\n", info->name, rc);
    return 3;
  }
  for (int i = 0; i < info->num_outputs; ++i) {
    const mlcc_tensor_info_t* t = &info->outputs[i];
    uint32_t bound = info->output_bound_dims ? info->output_bound_dims[i] : 0;
    int64_t dims[8] = {0};
    if (t->rank > 8 || info->output_shape(ws, i, dims) != 0) {
      fprintf(stderr, "harness: %s_output_shape(%d) failed\n", info->name, i);
      return 3;
    }
    int64_t numel = 1, bound_numel = 1;
    printf("mlcc-output %d bound=%u dims=", i, (unsigned)bound);
    for (int d = 0; d < t->rank; ++d) {
      printf("%s%lld", d ? "," : "", (long long)dims[d]);
      if (!((bound >> d) & 1u) && dims[d] != t->dims[d]) {
        fprintf(stderr, "harness: output %d dim %d is %lld, info says %lld\n", i, d,
                (long long)dims[d], (long long)t->dims[d]);
        return 3;
      }
      if (dims[d] < 0 || dims[d] > t->dims[d]) {
        fprintf(stderr, "harness: output %d dim %d is %lld, outside [0, %lld]\n", i, d,
                (long long)dims[d], (long long)t->dims[d]);
        return 3;
      }
      numel *= dims[d];
      bound_numel *= t->dims[d];
    }
    printf("\n");
    size_t bytes = (size_t)t->size_bytes;
    if (bound != 0) bytes = bound_numel > 0 ? bytes / (size_t)bound_numel * (size_t)numel : 0;
    const char* path = argv[1 + info->num_inputs + i];
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(outputs[i], 1, bytes, f) != bytes) {
      fprintf(stderr, "harness: cannot write %s\n", path);
      return 2;
    }
    fclose(f);
  }
  return 0;
}

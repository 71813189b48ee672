// SPDX-License-Identifier: Apache-2.0
// The semihosting test harness for a model compiled by mlcc for a
// microcontroller target (tests/mcu/README.md). Built per model with
//   -include NAME.h -DHARNESS_INFO=NAME_info
// it reads input_<i>.bin (raw little-endian tensor bytes, exactly
// NAME_info.inputs[i].size_bytes) through semihosting, calls the model once
// (NAME_info.run, i.e. NAME_run_v), writes output_<i>.bin (in the actual
// shape NAME_output_shape gives for data-dependent outputs), compares each
// float32 output with ref_<i>.bin when present (|got - ref| <= atol + rtol *
// |ref|, rtol 1e-4, atol 1e-5: the project's float32 rule), prints the
// largest errors and the stack the run used (high-water mark of a painted
// stack), and exits through semihosting: 0 all outputs match, 1 a
// mismatch, 2 a missing or wrongly sized file, 3 the run returned non-zero,
// 4 the buffers do not fit the arena.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "semihost.h"

#ifndef HARNESS_INFO
#error "define HARNESS_INFO as the model's NAME_info and -include its NAME.h"
#endif
#ifndef HARNESS_ARENA_BYTES
#define HARNESS_ARENA_BYTES (1536 * 1024)
#endif

extern const mlcc_model_info_t HARNESS_INFO;

// Inputs, outputs and the workspace, carved in that order.
static uint8_t arena[HARNESS_ARENA_BYTES] __attribute__((aligned(64)));
static size_t arena_used;

// From the linker script: the stack is [__stack_bottom, __stack_top).
extern uint32_t __stack_bottom[], __stack_top[];
#define STACK_PAINT 0x5AC3E1F0u

// Instructions retired (RISC-V minstret; with qemu's -icount shift=0 it
// counts guest instructions), or 0 where there is no such counter.
static uint64_t instructions_retired(void) {
#if defined(__riscv) && __riscv_xlen == 32
  uint32_t hi, lo, hi2;
  do {
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, minstreth\n"
                     "csrr %1, minstret\ncsrr %2, minstreth\n.option pop"
                     : "=r"(hi), "=r"(lo), "=r"(hi2));
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
#else
  return 0;
#endif
}

// The current stack pointer. Nothing below it belongs to a live frame (the
// Arm AAPCS and the RISC-V psABI have no red zone), so the stack can be
// painted right up to it.
static inline uintptr_t stack_pointer(void) {
  uintptr_t sp;
#if defined(__riscv)
  __asm__ volatile("mv %0, sp" : "=r"(sp));
#elif defined(__arm__)
  __asm__ volatile("mov %0, sp" : "=r"(sp));
#else
  volatile uint32_t here = 0;
  sp = (uintptr_t)&here - 512;  // unknown core: keep clear of this frame
#endif
  return sp;
}

static void* carve(int64_t size, int64_t align) {
  if (align < 1) align = 1;
  size_t at = (arena_used + (size_t)align - 1) & ~((size_t)align - 1);
  if (size < 0 || at + (size_t)size > sizeof(arena)) return NULL;
  arena_used = at + (size_t)size;
  return arena + at;
}

static void put(const char* s) { semihost_write0(s); }

static void put_u(unsigned long v) {
  char buf[16];
  int n = 0;
  do {
    buf[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char out[16];
  for (int i = 0; i < n; ++i) out[i] = buf[n - 1 - i];
  out[n] = '\0';
  put(out);
}

// |x| in the form d.ddde[+-]xx (float arithmetic only).
static void put_e(float x) {
  if (x != x) {
    put("nan");
    return;
  }
  if (x < 0) {
    put("-");
    x = -x;
  }
  if (x > 3.4e38f) {
    put("inf");
    return;
  }
  int e = 0;
  if (x != 0) {
    while (x >= 10.0f) { x /= 10.0f; ++e; }
    while (x < 1.0f) { x *= 10.0f; --e; }
  }
  unsigned long m = (unsigned long)(x * 1000.0f + 0.5f);
  if (m >= 10000) { m /= 10; ++e; }
  char s[16];
  s[0] = (char)('0' + m / 1000);
  s[1] = '.';
  s[2] = (char)('0' + (m / 100) % 10);
  s[3] = (char)('0' + (m / 10) % 10);
  s[4] = (char)('0' + m % 10);
  s[5] = 'e';
  s[6] = e < 0 ? '-' : '+';
  int ae = e < 0 ? -e : e;
  s[7] = (char)('0' + ae / 10);
  s[8] = (char)('0' + ae % 10);
  s[9] = '\0';
  put(s);
}

static void file_name(char* buf, const char* stem, int index) {
  size_t n = strlen(stem);
  memcpy(buf, stem, n);
  buf[n++] = '_';
  if (index >= 10) buf[n++] = (char)('0' + index / 10);
  buf[n++] = (char)('0' + index % 10);
  memcpy(buf + n, ".bin", 5);
}

// Reads the whole file |name| of exactly |size| bytes into |data|; -1 if it
// is missing, -2 if its size differs, 0 on success.
static int read_exact(const char* name, void* data, int64_t size) {
  int h = semihost_open(name, "rb");
  if (h < 0) return -1;
  long len = semihost_flen(h);
  int rc = 0;
  if (len != (long)size) {
    rc = -2;
  } else if (semihost_read(h, data, (size_t)size) != 0) {
    rc = -2;
  }
  semihost_close(h);
  return rc;
}

int main(void) {
  const mlcc_model_info_t* info = &HARNESS_INFO;
  enum { kMaxTensors = 64 };  // quant probe runs add up to 60 outputs
  const void* inputs[kMaxTensors];
  void* outputs[kMaxTensors];
  if (info->num_inputs > kMaxTensors || info->num_outputs > kMaxTensors) {
    put("harness: too many inputs or outputs\n");
    semihost_exit(4);
  }
  char name[32];
  for (int i = 0; i < info->num_inputs; ++i) {
    void* p = carve(info->inputs[i].size_bytes, 16);
    if (p == NULL) {
      put("harness: input does not fit the arena\n");
      semihost_exit(4);
    }
    file_name(name, "input", i);
    int rc = read_exact(name, p, info->inputs[i].size_bytes);
    if (rc != 0) {
      put("harness: ");
      put(name);
      put(rc == -1 ? ": cannot open\n" : ": wrong size\n");
      semihost_exit(2);
    }
    inputs[i] = p;
  }
  for (int i = 0; i < info->num_outputs; ++i) {
    void* p = carve(info->outputs[i].size_bytes, 16);
    if (p == NULL) {
      put("harness: output does not fit the arena\n");
      semihost_exit(4);
    }
    memset(p, 0xFF, (size_t)info->outputs[i].size_bytes);  // NaN if never written
    outputs[i] = p;
  }
  void* workspace = info->workspace_size > 0
                        ? carve(info->workspace_size, info->workspace_align)
                        : NULL;
  if (info->workspace_size > 0 && workspace == NULL) {
    put("harness: workspace does not fit the arena\n");
    semihost_exit(4);
  }

  // Paint the stack below this frame's stack pointer, run, and find the
  // deepest word touched: the bytes the run's call took, to the word.
  uintptr_t sp = stack_pointer();
  volatile uint32_t* limit = (volatile uint32_t*)(sp & ~(uintptr_t)3);
  for (volatile uint32_t* w = __stack_bottom; w < limit; ++w) *w = STACK_PAINT;
  uint64_t insn0 = instructions_retired();
  int run_rc = info->run(inputs, outputs, workspace);
  uint64_t insns = instructions_retired() - insn0;
  volatile uint32_t* w = __stack_bottom;
  while (w < limit && *w == STACK_PAINT) ++w;
  unsigned long stack_used = (unsigned long)((uintptr_t)limit - (uintptr_t)w);

  put("harness: ");
  put(info->name);
  put(" run returned ");
  put_u((unsigned long)run_rc);
  put(", stack used by the run ~");
  put_u(stack_used);
  put(" bytes (NAME_STACK_SIZE ");
  put_u((unsigned long)info->stack_size);
  put("), workspace ");
  put_u((unsigned long)info->workspace_size);
  if (insns != 0) {
    put(", minstret delta ");
    put_u((unsigned long)(insns / 1000));
    put(" k");
  }
  put("\n");
  if (run_rc != 0) semihost_exit(3);

  int status = 0;
  for (int i = 0; i < info->num_outputs; ++i) {
    // An output with data-dependent dims holds its actual shape's elements
    // at the front of the bound-sized buffer (docs/generated-api.md).
    int64_t bytes = info->outputs[i].size_bytes;
    if (info->output_bound_dims != NULL && info->output_bound_dims[i] != 0) {
      int64_t dims[8], bound = 1, actual = 1;
      int rank = info->outputs[i].rank;
      if (rank > 8 || info->output_shape(workspace, i, dims) != 0) {
        put("harness: output_shape failed\n");
        semihost_exit(3);
      }
      for (int d = 0; d < rank; ++d) {
        bound *= info->outputs[i].dims[d];
        actual *= dims[d];
      }
      bytes = bound > 0 ? bytes / bound * actual : 0;
    }
    file_name(name, "output", i);
    int h = semihost_open(name, "wb");
    if (h < 0 || (bytes > 0 && semihost_write(h, outputs[i], (size_t)bytes) != 0)) {
      put("harness: cannot write ");
      put(name);
      put("\n");
      status = 2;
    }
    if (h >= 0) semihost_close(h);
    if (info->outputs[i].dtype != 1) continue;  // float32 only
    int64_t n = bytes / 4;
    float* ref = carve(bytes, 16);
    file_name(name, "ref", i);
    int rc = ref == NULL ? -1 : read_exact(name, ref, bytes);
    if (rc == -1) continue;  // no reference given
    if (rc != 0) {
      put("harness: ");
      put(name);
      put(": wrong size\n");
      status = 2;
      continue;
    }
    const float* got = outputs[i];
    float max_abs = 0, max_rel = 0;
    long bad = 0;
    for (int64_t k = 0; k < n; ++k) {
      float r = ref[k], g = got[k];
      float d = g > r ? g - r : r - g;
      float ar = r < 0 ? -r : r;
      if (!(d <= 1e-5f + 1e-4f * ar)) ++bad;  // NaN counts as bad
      if (!(d <= max_abs)) max_abs = d;
      if (ar > 0 && d / ar > max_rel) max_rel = d / ar;
    }
    put("harness: output ");
    put_u((unsigned long)i);
    put(" \"");
    put(info->outputs[i].name);
    put("\": ");
    put_u((unsigned long)n);
    put(" values, max abs err ");
    put_e(max_abs);
    put(", max rel err ");
    put_e(max_rel);
    put(", ");
    put_u((unsigned long)bad);
    put(" outside rtol 1e-4 atol 1e-5\n");
    if (bad != 0 && status == 0) status = 1;
  }
  put(status == 0 ? "harness: PASS\n" : "harness: FAIL\n");
  semihost_exit(status);
}

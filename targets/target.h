// SPDX-License-Identifier: Apache-2.0
// Code-generation targets: triple, CPU and features, plus per-arch tuning
// queried by target-neutral emitters. Thread-safe after resolution.
#ifndef MLCC_TARGETS_TARGET_H_
#define MLCC_TARGETS_TARGET_H_

#include <stdint.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mlcc_arch_e {
#define MLCC_TARGET(id, alias, triple, cpu, features, vec_bytes) MLCC_ARCH_##id,
#include "targets/targets.def"
#undef MLCC_TARGET
  MLCC_ARCH_COUNT
} mlcc_arch_t;

// A resolved target. Strings are owned by the struct (fixed buffers) so it
// can be copied by value.
typedef struct mlcc_target_t {
  mlcc_arch_t arch;
  char alias[16];          // "x86", "aarch64", "riscv"
  char triple[64];         // "x86_64-linux-gnu"
  char cpu[64];            // LLVM CPU name, e.g. "x86-64-v3"
  char features[512];      // LLVM feature string, e.g. "+neon" (may be "")
  int32_t vector_bytes;    // preferred SIMD register width in bytes (16, 32, 64)
} mlcc_target_t;

// Resolves |name| (an alias from targets.def, a full triple whose arch we
// support, or NULL/"" for the host) and applies |cpu|/|features| overrides
// (NULL keeps the default; cpu "native" uses the host CPU name and
// LLVMGetHostCPUFeatures). Returns NOT_FOUND with the list of aliases for an
// unknown target.
mlcc_status_t mlcc_target_resolve(const char* name, const char* cpu,
                                  const char* features, mlcc_target_t* out_target);

// Writes "alias  triple  cpu  features" lines for --print-targets to |out|
// (a FILE*, typed void* to keep stdio out of this header).
void mlcc_target_print_all(void* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_TARGET_H_

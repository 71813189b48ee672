// SPDX-License-Identifier: Apache-2.0
// Code-generation targets: triple, CPU and features, plus per-arch tuning
// queried by target-neutral emitters. Thread-safe after resolution.
#ifndef MLCC_TARGETS_TARGET_H_
#define MLCC_TARGETS_TARGET_H_

#include <stdbool.h>
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
  char alias[16];          // "x86", "aarch64", "riscv", "cortex-m4", "rv32", ...
  char triple[64];         // "x86_64-linux-gnu"
  char cpu[64];            // LLVM CPU name, e.g. "x86-64-v3"
  char features[512];      // LLVM feature string, e.g. "+neon" (may be "")
  int32_t vector_bytes;    // preferred SIMD register width in bytes (16, 32, 64;
                           // 4 on microcontrollers without float SIMD)
} mlcc_target_t;

// Resolves |name| (an alias from targets.def, a full triple whose arch we
// support, or NULL/"" for the host) and applies |cpu|/|features| overrides
// (NULL keeps the default; cpu "native" uses the host CPU name and
// LLVMGetHostCPUFeatures). Returns NOT_FOUND with the list of aliases for an
// unknown target.
mlcc_status_t mlcc_target_resolve(const char* name, const char* cpu,
                                  const char* features, mlcc_target_t* out_target);

// Floating-point hardware of a target: none (soft float: libgcc's
// __addsf3 and friends), single precision only (Cortex-M4F's fpv4-sp-d16,
// RISC-V F), or double precision too (every Linux target; Cortex-M55's
// fp-armv8d16, RISC-V D).
typedef enum mlcc_fpu_e {
  MLCC_FPU_NONE = 0,
  MLCC_FPU_SINGLE,
  MLCC_FPU_DOUBLE,
  MLCC_FPU_COUNT
} mlcc_fpu_t;

// True for the microcontroller targets (cortex-m4, cortex-m55, rv32, rv32f
// and triples of their architectures): no OS, so the generated code uses no
// threads, no TLS and no libm (docs/mcu.md), NAME_run_parallel runs every
// kernel whole, and the weights go to --weights-section for the linker
// script to place in flash.
bool mlcc_target_is_bare_metal(const mlcc_target_t* target);

// The FPU of |target|: from its features when they enable one ("+f"/"+d" on
// RISC-V; "+vfp4d16sp", "+fp-armv8d16", "+fp64", ... on Arm: the most
// capable), else from the Arm CPU (cortex-m4/m33/m35p: single;
// cortex-m7/m55/m85: double; others none); on Arm "-fpregs" or
// "+soft-float" then means none and "-fp64" at most single. Linux: double.
mlcc_fpu_t mlcc_target_fpu(const mlcc_target_t* target);

// True if emitters may add float32 partial sums in double (the accurate
// long sums of targets/kernels/norm.c, targets/kernels/pool.c, targets/kernels/reduce.c): the FPU has double
// precision. Elsewhere they use a float-only compensated sum
// (mlcc_emit_fsum_*, emit.h), so the generated code has no double math.
bool mlcc_target_wide_sums(const mlcc_target_t* target);

// Writes "alias  triple  cpu  features" lines for --print-targets to |out|
// (a FILE*, typed void* to keep stdio out of this header).
void mlcc_target_print_all(void* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_TARGET_H_

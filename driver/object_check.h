// SPDX-License-Identifier: Apache-2.0
// What an object from the kernel cache (local or remote) must look like
// before mlcc links it (issue 14, docs/cache.md "Trust model").
//
// A kernel is a pure function of its arguments, so its object has a narrow
// shape, and anything outside it is foreign code:
//   - a little-endian relocatable (ET_REL) for the target's e_machine and
//     e_flags, ELF64 on the Linux targets, ELF32 on the microcontrollers
//     (RISC-V: the float ABI of mlcc_elf_machine_for_target, or +f for rv32f;
//     the RVC bit may differ; Arm: EABI version 5, the float-ABI bits may
//     differ), OS ABI SYSV or GNU, no program headers;
//   - a kernel defines exactly its symbol (and, for a kernel split in
//     ranges, "<symbol>_r"), as functions; an entry object defines only
//     "<name>_*" symbols;
//   - every undefined symbol is on the allowlist (mlcc_object_symbol_allowed:
//     memcpy/memset/memmove, the C99 libm functions, libgcc/compiler-rt
//     arithmetic helpers); an entry may also reference kernels
//     ("mlcc_k_<24 hex>[_r]"), "<name>_weights" and clock_gettime (profiling);
//   - no constructors or destructors (.init_array, .fini_array,
//     .preinit_array, .ctors, .dtors, .init, .fini), no TLS (SHF_TLS
//     sections, STT_TLS symbols), no IFUNC or GNU_UNIQUE symbols, no
//     common or absolute globals, no dynamic sections, no linker directives
//     (.deplibs, .linker-options), no writable+executable section, and a
//     .note.GNU-stack that is not executable;
//   - section flags only from W, A, X, MERGE, STRINGS and INFO_LINK (no
//     COMDAT groups, which could discard another object's sections);
//     section types only the ones LLVM writes for these targets.
// The check parses with bounds checks only: any input, however malformed,
// gives OK or INVALID_MODEL, never a crash. It does not look at the machine
// code itself (a forged kernel may still do anything with inline system
// calls): signing (remote_sign.h) is what keeps writers out.
#ifndef MLCC_DRIVER_OBJECT_CHECK_H_
#define MLCC_DRIVER_OBJECT_CHECK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mlcc_object_kind_e {
  MLCC_OBJECT_KERNEL = 0,  // one kernel: mlcc_codegen_kernel
  MLCC_OBJECT_ENTRY,       // the model's entry points: mlcc_codegen_entry
} mlcc_object_kind_t;

// What the object must be. Strings are borrowed.
typedef struct mlcc_object_expect_t {
  mlcc_object_kind_t kind;
  uint16_t machine;    // e_machine (MLCC_ELF_EM_*)
  uint32_t flags;      // e_flags; on EM_RISCV the RVC bit (0x1) is ignored,
                       // on EM_ARM the float-ABI bits (0x600)
  uint8_t elf_class;   // 2: ELF64 (x86-64, aarch64, riscv64); 1: ELF32 (the MCUs)
  const char* symbol;  // KERNEL: "mlcc_k_<24 hex>"; ENTRY: the model name
} mlcc_object_expect_t;

// Fills |out| for |target| (machine and flags from
// mlcc_elf_machine_for_target; for the 32-bit microcontroller targets, EM_ARM
// with EABI 5 or EM_RISCV with the float ABI of the features). NOT_FOUND
// for a target without an ELF mapping.
mlcc_status_t mlcc_object_expect_for_target(const mlcc_target_t* target,
                                            mlcc_object_kind_t kind, const char* symbol,
                                            mlcc_object_expect_t* out);

// Checks |size| bytes at |data| against |expect| (rules in the file
// comment). OK, or INVALID_MODEL whose message says in one line what is
// wrong ("calls 'system', which is not on the allowlist", "has a
// constructor section '.init_array'", ...). Never reads outside |data|.
mlcc_status_t mlcc_object_check(const uint8_t* data, size_t size,
                                const mlcc_object_expect_t* expect);

// True if a kernel may call the external |name|: memcpy, memset, memmove,
// the C99 libm functions (double and float versions, plus GNU sincos and
// exp10), and the libgcc/compiler-rt helpers for half/bfloat16 conversion,
// 128-bit integers, binary128 floats, powi, and on 32-bit targets 64-bit
// integer arithmetic, software float32/float64 (__addsf3, ...) and the Arm
// run-time ABI helpers (__aeabi_*).
bool mlcc_object_symbol_allowed(const char* name);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_OBJECT_CHECK_H_

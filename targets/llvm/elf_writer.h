// SPDX-License-Identifier: Apache-2.0
// A minimal ELF64 little-endian relocatable-object writer for one block of
// read-only data and one symbol naming it: what the weights object needs,
// written without LLVM (building a 46 MB constant through LLVM's IR and MC
// layers costs more than the rest of a warm build).
//
// Written from the System V gABI ("ELF-64 Object File Format" and the
// generic ABI's "Object Files" chapter) and the psABI supplements for the
// e_machine/e_flags values. The object it writes is, in file order:
//
//   offset 0    ELF header (64 bytes), ET_REL, no program headers
//   64          the data section (aligned to its sh_addralign, at most 4096)
//               e.g. ".rodata.mlcc_weights", SHT_PROGBITS, SHF_ALLOC
//   ...         .note.GNU-stack (empty, flags 0: "no executable stack")
//   8-aligned   .symtab: [0] null, [1] the data section's STT_SECTION symbol
//               (STB_LOCAL), [2] the data symbol (STB_GLOBAL, STT_OBJECT,
//               STV_HIDDEN, value 0, size = the data's size)
//   ...         .strtab ("\0" symbol "\0"), .shstrtab (section names)
//   8-aligned   the section header table: NULL, data, .note.GNU-stack,
//               .symtab, .strtab, .shstrtab (e_shstrndx = 5)
//
// No relocations: the data holds no addresses. The output depends only on
// the inputs (no timestamps or paths), so it is byte-identical across runs.
// Thread-compatible: no shared state.
#ifndef MLCC_TARGETS_LLVM_ELF_WRITER_H_
#define MLCC_TARGETS_LLVM_ELF_WRITER_H_

#include <stddef.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// e_machine values (gABI) for the targets mlcc supports.
#define MLCC_ELF_EM_X86_64 62
#define MLCC_ELF_EM_AARCH64 183
#define MLCC_ELF_EM_RISCV 243

// RISC-V e_flags (RISC-V ELF psABI, "File Header").
#define MLCC_ELF_EF_RISCV_RVC 0x1u
#define MLCC_ELF_EF_RISCV_FLOAT_ABI_SINGLE 0x2u
#define MLCC_ELF_EF_RISCV_FLOAT_ABI_DOUBLE 0x4u

// One piece of the data: |size| bytes from |data| placed at |offset| in the
// section. Bytes not covered by any chunk are zero.
typedef struct mlcc_elf_chunk_t {
  const void* data;  // borrowed; may be NULL only if size is 0
  uint64_t offset;
  uint64_t size;
} mlcc_elf_chunk_t;

// Everything the object holds. All pointers are borrowed for the call.
typedef struct mlcc_elf_data_object_t {
  uint16_t machine;          // e_machine, e.g. MLCC_ELF_EM_X86_64
  uint32_t flags;            // e_flags (0 except on RISC-V)
  const char* section_name;  // e.g. ".rodata.mlcc_weights"
  uint64_t align;            // sh_addralign: a power of two, 1..4096
  const char* symbol;        // e.g. "detector_weights"; non-empty
  uint64_t size;             // the section's (and the symbol's) size in bytes
  const mlcc_elf_chunk_t* chunks;  // sorted by offset, non-overlapping,
  uint32_t n_chunks;               //   each inside [0, size)
} mlcc_elf_data_object_t;

// e_machine and e_flags matching what LLVM writes for |target|'s kernels:
// RISC-V gets the float ABI that targets/llvm/llvm_ctx.c selects for the
// module ("+d" in the features: lp64d, else "+f": lp64f, else lp64) and RVC
// when the features have "+c"; the others get flags 0. NOT_FOUND for an
// architecture without an ELF mapping.
mlcc_status_t mlcc_elf_machine_for_target(const mlcc_target_t* target,
                                          uint16_t* out_machine, uint32_t* out_flags);

// Size in bytes of the object mlcc_elf_write_* produce for |object|.
// INVALID_ARGUMENT if |object| breaks the rules above (unsorted or
// overlapping chunks, a bad alignment, an empty name); RESOURCE_EXHAUSTED
// if the sizes overflow.
mlcc_status_t mlcc_elf_object_size(const mlcc_elf_data_object_t* object, uint64_t* out_size);

// Writes |object| to the file |path| (created or truncated, 0666 less the
// umask) through buffered I/O, writing the chunks in place (no copy of the
// data). On failure returns IO naming |path| (or the validation error of
// mlcc_elf_object_size) and removes the partial file (only if it is
// a regular file).
mlcc_status_t mlcc_elf_write_file(const mlcc_elf_data_object_t* object, const char* path);

// Writes |object| into a malloc'ed buffer (*out_data, *out_size); the caller
// frees *out_data. Errors as mlcc_elf_object_size, or RESOURCE_EXHAUSTED.
mlcc_status_t mlcc_elf_write_buffer(const mlcc_elf_data_object_t* object, uint8_t** out_data,
                                    size_t* out_size);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_LLVM_ELF_WRITER_H_

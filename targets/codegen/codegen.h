// SPDX-License-Identifier: Apache-2.0
// Code generation entry points used by the driver: kernels, the entry
// function, the weights blob, and the host JIT used for constant folding.
// Thread-safe: each call builds in its own LLVMContext, so distinct kernels
// may be compiled concurrently.
#ifndef MLCC_TARGETS_CODEGEN_CODEGEN_H_
#define MLCC_TARGETS_CODEGEN_CODEGEN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// A malloc'ed byte buffer; free with mlcc_buffer_deinit.
typedef struct mlcc_buffer_t {
  uint8_t* data;
  size_t size;
} mlcc_buffer_t;
void mlcc_buffer_deinit(mlcc_buffer_t* buffer);

typedef enum mlcc_output_kind_e {
  MLCC_OUTPUT_OBJECT = 0,  // ELF relocatable object for the target
  MLCC_OUTPUT_ASM,         // target assembly text
  MLCC_OUTPUT_LL,          // LLVM IR text (after optimization)
} mlcc_output_kind_t;

// An object cache the code generator may consult for whole-module outputs
// (today: the entry object, which is compiled on every build otherwise). The
// key is a SHA-256 (64 hex chars) over the format version, mlcc and LLVM
// versions, target, opt level, output kind and the module's unoptimized IR
// text, so it changes whenever the object would. lookup returns true and
// fills |out| (malloc'ed; the code generator takes ownership) on a hit; store
// is called after a miss was compiled (failures are the callee's business).
typedef struct mlcc_object_cache_t {
  void* ctx;
  bool (*lookup)(void* ctx, const char key_hex[65], mlcc_buffer_t* out);
  void (*store)(void* ctx, const char key_hex[65], const mlcc_buffer_t* object);
} mlcc_object_cache_t;

typedef struct mlcc_codegen_options_t {
  const mlcc_target_t* target;
  int opt_level;           // 0..3; >= 2 runs default<O3> with vectorizers
  const char* name;        // C symbol prefix of the model, e.g. "detector"
  bool profile;            // --profile: the entry times every kernel call
                           // (entry_profile.h); not part of any kernel key
  const mlcc_object_cache_t* entry_cache;  // NULL: the entry is always compiled
  const char* weights_section;  // ELF section of NAME_weights (--weights-section);
                                // NULL or "": MLCC_WEIGHTS_SECTION_DEFAULT
} mlcc_codegen_options_t;

// The section the weights blob goes to unless --weights-section names another.
#define MLCC_WEIGHTS_SECTION_DEFAULT ".rodata.mlcc_weights"

// Cache identity of kernel |kernel_index|: SHA-256 (hex, 64 chars + NUL) over
// a canonical serialization of everything that changes the kernel's code
// (format version, mlcc and LLVM versions, triple, CPU, features, opt level,
// ops, opsets, attributes, dtypes, shapes, fused structure, shape-input
// values, emit versions, and the anchor's schedule when it is not the
// default), never weights or names.
mlcc_status_t mlcc_codegen_kernel_key(const mlcc_graph_t* graph, uint32_t kernel_index,
                                      const mlcc_codegen_options_t* options,
                                      char out_key_hex[65]);

// Tuning record key of kernel |kernel_index| (docs/tuning.md, driver/tune.h):
// SHA-256 hex like mlcc_codegen_kernel_key, over the same kernel structure
// but with the search-space version of the anchor's emitter instead of the
// mlcc, LLVM and emit versions, and without the schedule, so that records
// survive an mlcc upgrade that leaves the space unchanged. |with_cpu|: the
// exact-CPU key; false: the key of the triple and features alone.
mlcc_status_t mlcc_codegen_tune_key(const mlcc_graph_t* graph, uint32_t kernel_index,
                                    const mlcc_codegen_options_t* options, bool with_cpu,
                                    char out_key_hex[65]);

// Symbol of a kernel: "mlcc_k_<first 24 hex of key>". Kernels are emitted
// weak_odr + hidden so two models sharing a kernel link safely.
void mlcc_codegen_kernel_symbol(const char key_hex[65], char out_symbol[40]);

// Compiles kernel |kernel_index| alone into |out| (object, asm or ll).
mlcc_status_t mlcc_codegen_kernel(const mlcc_graph_t* graph, uint32_t kernel_index,
                                  const mlcc_codegen_options_t* options,
                                  mlcc_output_kind_t kind, mlcc_buffer_t* out);

// Compiles the entry function "<name>_run" and the "<name>_info" data into
// |out|. Requires graph->kernels and the memory plan. Kernel symbols are
// derived from mlcc_codegen_kernel_key.
mlcc_status_t mlcc_codegen_entry(const mlcc_graph_t* graph,
                                 const mlcc_codegen_options_t* options,
                                 mlcc_output_kind_t kind, mlcc_buffer_t* out);

// Lays out every constant a kernel reads into one 64-byte aligned blob
// "<name>_weights" (sets value->weight_offset; a mutation of the graph's
// bookkeeping only) and emits it as read-only data into |out|, in section
// options->weights_section (default .rodata.mlcc_weights): an object from
// mlcc's ELF writer (ELF64 targets) or LLVM (the 32-bit microcontroller
// targets, whose objects also carry the Arm/RISC-V ABI attributes), ll/asm
// via LLVM.
mlcc_status_t mlcc_codegen_weights(mlcc_graph_t* graph,
                                   const mlcc_codegen_options_t* options,
                                   mlcc_output_kind_t kind, mlcc_buffer_t* out);

// Bytes of the weights blob mlcc_codegen_weights lays out for |graph| (after
// passes; packed layouts make it target-dependent): NAME_WEIGHTS_SIZE.
// RESOURCE_EXHAUSTED on allocation failure or a blob over 4 GiB.
mlcc_status_t mlcc_codegen_weights_size(const mlcc_graph_t* graph, size_t* out_size);

// As mlcc_codegen_weights with an object output, written straight to the
// file |path| (created or truncated) by mlcc's own ELF writer
// (targets/llvm/elf_writer.h) from the constants' data, without an in-memory copy of the
// blob. IO naming |path| on a write failure (the partial file is removed).
mlcc_status_t mlcc_codegen_weights_write_object(mlcc_graph_t* graph,
                                                const mlcc_codegen_options_t* options,
                                                const char* path);

// Everything (weights, kernels, entry) in one module, optimized together:
// -c when no ld.lld is found to join the kernel objects (mlcc_codegen_join_text
// and the kernel cache serve -S and --emit=ll|asm).
mlcc_status_t mlcc_codegen_whole(mlcc_graph_t* graph, const mlcc_codegen_options_t* options,
                                 mlcc_output_kind_t kind, mlcc_buffer_t* out);

// Joins the separately emitted parts of one model into one -S / --emit=ll|asm
// output of |kind| (MLCC_OUTPUT_LL or MLCC_OUTPUT_ASM), in |parts| order
// (mlcc's driver passes entry, weights, then each distinct kernel, as
// mlcc_codegen_entry/_weights/_kernel emitted them with that kind):
//   - LL: every part is parsed into one context and linked (LLVMLinkModules2)
//     into the first, then verified and printed. No optimization runs: each
//     part already is the optimized module of its own object.
//   - ASM: the texts are concatenated; each part's assembler-local labels
//     (".L" names, outside string literals) get the prefix ".Lm<part>_" so
//     that per-module numbering cannot collide; parts after the first drop
//     their ".file" line and RISC-V ".attribute" lines (GNU as wants
//     those before the first instruction; every part has the same ones). The result assembles with the target's GNU as or
//     clang into the same code the library holds.
// |out| is malloc'ed (mlcc_buffer_deinit). INVALID_ARGUMENT for no parts or
// another kind; INVALID_MODEL if an IR part does not parse; INTERNAL if the
// link or verification fails; RESOURCE_EXHAUSTED on allocation failure.
mlcc_status_t mlcc_codegen_join_text(mlcc_output_kind_t kind, const mlcc_buffer_t* parts,
                                     uint32_t n_parts, mlcc_buffer_t* out);

// Checks a kernel's LLVM IR or assembly text from a cache (untrusted, like
// a cached object: driver/object_check.h) before it is joined. It must
// define |symbol| ("mlcc_k_<24 hex>", or also "<symbol>_r") and nothing else
// outside local labels / private constants:
//   - LL: parses; no module asm, no aliases, no global that is not a private
//     or internal constant, no other non-local function, and every declared
//     function an LLVM intrinsic or |allowed(name)| (the driver's allowlist,
//     mlcc_object_symbol_allowed).
//   - ASM: printable ASCII only; only the directives LLVM writes for the
//     supported targets (no .incbin, .include, .macro, ...); .globl/.weak/
//     .hidden name only the kernel's symbols; sections only .text*, .rodata*,
//     .srodata*, .note.GNU-stack, .ARM.exidx*/.ARM.extab*; no symbol
//     assignments. Instruction operands are not parsed, so calls to foreign
//     symbols are not caught in assembly text; signed remote entries
//     (remote_sign.h) are what keeps writers out.
// OK or INVALID_MODEL with a one-line reason; never reads past |size|.
mlcc_status_t mlcc_codegen_check_kernel_text(mlcc_output_kind_t kind, const uint8_t* data,
                                             size_t size, const char* symbol,
                                             bool (*allowed)(const char* name));

// Constant folding: evaluates |node| (all inputs CONSTANT, outputs inferred)
// by JIT-compiling its kernel for the host and running it. On success each
// present output becomes a CONSTANT (data in graph->arena, producer NULL) and
// the node is marked dead. UNIMPLEMENTED if the op cannot be emitted.
mlcc_status_t mlcc_codegen_eval_node(mlcc_graph_t* graph, mlcc_node_t* node);

// mlcc_codegen_eval_node with the kernel planned for |vector_bytes| (16, 32
// or 64) instead of the host target's width, so tests run a wider target's
// kernels (x86 AVX-512's channel-vector Conv: 64) on any x86 host; the code
// is still compiled for the baseline CPU (LLVM splits the wider vectors).
// On x86 hosts only the plan changes; INVALID_ARGUMENT for another width.
// Same ownership and errors as mlcc_codegen_eval_node; thread-safe.
mlcc_status_t mlcc_codegen_eval_node_planned(mlcc_graph_t* graph, mlcc_node_t* node,
                                             int32_t vector_bytes);

// "16.0.6"
const char* mlcc_codegen_llvm_version(void);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_CODEGEN_CODEGEN_H_

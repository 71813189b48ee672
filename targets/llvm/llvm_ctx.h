// SPDX-License-Identifier: Apache-2.0
// Internal to targets/: one-time LLVM initialization, target machines, LLVM
// error text, and the shared kernel/module builders used by codegen.c,
// entry.c, weights.c and eval.c. Not a public API.
#ifndef MLCC_TARGETS_LLVM_LLVM_CTX_H_
#define MLCC_TARGETS_LLVM_LLVM_CTX_H_

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/codegen/codegen.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// Initializes the X86, AArch64 and RISCV targets (info, MC, asm printer and
// parser) once per process. Thread-safe.
void mlcc_llvm_init(void);

// Creates a target machine for |target| (PIC, default code model) at
// |opt_level| 0..3. Caller disposes. NOT_FOUND if LLVM lacks the triple.
mlcc_status_t mlcc_llvm_target_machine(const mlcc_target_t* target, int opt_level,
                                       LLVMTargetMachineRef* out_tm);

// Checks that LLVM knows |target|'s CPU and every feature by compiling an
// empty function for it and watching LLVM's diagnostics ("'x' is not a
// recognized processor/feature for this target"), which LLVM-C cannot query
// directly. INVALID_ARGUMENT quoting LLVM's complaint. Redirects stderr for
// the duration: call only from single-threaded setup (option resolution).
mlcc_status_t mlcc_llvm_check_cpu_features(const mlcc_target_t* target);

// Sets |module|'s triple and data layout from |tm|.
void mlcc_llvm_set_module_target(LLVMModuleRef module, LLVMTargetMachineRef tm);

// Turns an LLVM-owned message (LLVMDisposeMessage) into a status of |code|
// prefixed by |what|; disposes |message|.
mlcc_status_t mlcc_llvm_message_status(mlcc_status_code_t code, const char* what,
                                       char* message);

// For the microcontroller targets (docs/mcu.md), run on each module before
// verification: replaces every call of llvm.maxnum/llvm.minnum (scalar or
// vector) with compares and a select of the same NaN semantics (Cortex-M4's
// FPv4 and soft-float rv32 would call fmaxf/fminf), float32 floor, ceil,
// trunc, round, roundeven, rint and nearbyint with inline code (floorf, ...),
// with no FPU (|fpu| MLCC_FPU_NONE) float32 llvm.sqrt with an inline Newton
// iteration within 2 ulp (sqrtf), and the libm intrinsics (exp, exp2, log,
// log2, log10, pow, sin, cos) and frem with explicit libm calls (per lane
// for vectors), and where |fpu| has no double precision the double sqrt and
// rounding intrinsics with explicit calls too. With |arm_hard_float| (an "eabihf" triple) every external C
// function with float parameters or result, and every call of it, gets the
// VFP calling convention: LLVM-C's target machines would pass those floats
// in core registers, which the hard-float C library does not expect.
// With |soft_half| (RISC-V without Zfh/Zfhmin) float32<->float16 fpext and
// fptrunc become inline bit manipulation (exact widening; narrowing rounds to
// nearest even, with subnormals, inf and NaN).
void mlcc_llvm_lower_libm(LLVMModuleRef module, mlcc_fpu_t fpu, bool arm_hard_float,
                          bool soft_half);

// Verifies |module|; INTERNAL with LLVM's text on failure.
mlcc_status_t mlcc_llvm_verify(LLVMModuleRef module, const char* what);

// Runs the new-PM pipeline for |opt_level| (default<O3> for >= 2, with loop
// and SLP vectorization) using |tm|'s cost model.
mlcc_status_t mlcc_llvm_optimize(LLVMModuleRef module, LLVMTargetMachineRef tm,
                                 int opt_level);

// Emits |module| as |kind| into |out| (malloc'ed copy). Object/asm emission
// mutates the module, so the module must not be emitted twice.
mlcc_status_t mlcc_llvm_emit(LLVMModuleRef module, LLVMTargetMachineRef tm,
                             mlcc_output_kind_t kind, mlcc_buffer_t* out);

// Builds kernel |kernel| as function |symbol| into |module| (in |llctx|):
// void symbol(ptr noalias ...), nounwind, running the anchor's emitter and
// the fused epilogue. An in-place kernel (kernel->inplace_input, set by
// plan-memory) stores its output through that input's pointer; the output's
// own, unused argument then carries no noalias. The function's linkage is left external: callers set it.
// Returns the emitter's status (annotated with the anchor node) or INTERNAL.
mlcc_status_t mlcc_codegen_build_kernel_fn(LLVMContextRef llctx, LLVMModuleRef module,
                                           const mlcc_target_t* target,
                                           const mlcc_kernel_t* kernel, const char* symbol,
                                           LLVMValueRef* out_fn);

// Collects the distinct CONSTANT values that kernel arguments refer to, in
// first-use order over graph->kernels. |*out_values| is malloc'ed (caller
// frees); |*out_count| may be 0 with a NULL array.
mlcc_status_t mlcc_codegen_collect_weights(const mlcc_graph_t* graph,
                                           const mlcc_value_t*** out_values,
                                           uint32_t* out_count);

// The blob layout: the collected constants and their 64-byte aligned byte
// offsets (both malloc'ed, caller frees), and the blob's total size.
// Deterministic for a graph, so the entry can recompute it.
mlcc_status_t mlcc_codegen_weights_layout(const mlcc_graph_t* graph,
                                          const mlcc_value_t*** out_values,
                                          int64_t** out_offsets, uint32_t* out_count,
                                          size_t* out_total);

// Builds the weights global "<name>_weights" into |module| (also assigns
// weight_offset on the graph's constants).
mlcc_status_t mlcc_codegen_build_weights(mlcc_graph_t* graph, const char* name,
                                         LLVMContextRef llctx, LLVMModuleRef module);

// options->weights_section, or MLCC_WEIGHTS_SECTION_DEFAULT. Borrowed.
const char* mlcc_codegen_weights_section_name(const mlcc_codegen_options_t* options);

// Puts the global "<options->name>_weights" of |module| (if present) into
// mlcc_codegen_weights_section_name(options).
void mlcc_codegen_set_weights_section(LLVMModuleRef module,
                                      const mlcc_codegen_options_t* options);

// Builds NAME_run, NAME_run_v and NAME_info into |module|, declaring the
// weights and the kernels |symbols[k]| (one per graph->kernels entry) as
// external hidden unless already defined in |module|.
mlcc_status_t mlcc_codegen_build_entry(const mlcc_graph_t* graph, const char* name,
                                       char (*symbols)[40], LLVMContextRef llctx,
                                       LLVMModuleRef module);

// mlcc_codegen_build_entry plus NAME_run_parallel: with |target| non-NULL the
// parallel entry splits every kernel with mlcc_emit_parallel_units(kernel,
// target) > 0 into tasks (its "<symbol>_r" range variant); with NULL it runs
// every kernel whole.
mlcc_status_t mlcc_codegen_build_entry_ex(const mlcc_graph_t* graph, const char* name,
                                          char (*symbols)[40], const mlcc_target_t* target,
                                          LLVMContextRef llctx, LLVMModuleRef module);

// mlcc_codegen_build_entry_ex; with |profile| every kernel call (serial and
// parallel entries) is timed into the NAME_profile table (entry_profile.h).
mlcc_status_t mlcc_codegen_build_entry_profiled(const mlcc_graph_t* graph, const char* name,
                                                char (*symbols)[40],
                                                const mlcc_target_t* target, bool profile,
                                                LLVMContextRef llctx, LLVMModuleRef module);

// Computes every kernel's symbol; |*out_symbols| is malloc'ed (n_kernels).
mlcc_status_t mlcc_codegen_kernel_symbols(const mlcc_graph_t* graph,
                                          const mlcc_codegen_options_t* options,
                                          char (**out_symbols)[40]);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_LLVM_LLVM_CTX_H_

// SPDX-License-Identifier: Apache-2.0
// Per-kernel profiling of the generated entry points (mlcc --profile;
// docs/generated-api.md, "Profile builds"). The entry builder brackets every
// kernel call with two reads of the C library's clock_gettime(CLOCK_MONOTONIC)
// and adds the difference to the kernel's row of a mutable table that
// NAME_profile returns. Kernels themselves are untouched (their cache keys do
// not change): only the entry object differs from a normal build.
//
// The table row, as C (LP64: 56 bytes):
//   typedef struct mlcc_profile_entry_t {
//     const char *name;   /* first node's ONNX name ("" if none) */
//     const char *ops;    /* the kernel's op types, "Conv+Relu" */
//     int64_t flops;      /* floating-point ops of one call (2*MACs), -1 unknown */
//     int64_t units;      /* parallel units in NAME_run_parallel (0: runs whole) */
//     int64_t calls;      /* calls since the last reset */
//     int64_t ns;         /* total wall time of those calls, nanoseconds */
//     int64_t min_ns;     /* fastest call (INT64_MAX before the first) */
//   } mlcc_profile_entry_t;
#ifndef MLCC_TARGETS_CODEGEN_ENTRY_PROFILE_H_
#define MLCC_TARGETS_CODEGEN_ENTRY_PROFILE_H_

#include <llvm-c/Core.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// Floating-point operations of one call of |kernel| (2*MACs for Conv,
// ConvTranspose, Gemm and MatMul; one per output element and node for
// elementwise nodes and pooling windows; -1 when unknown).
int64_t mlcc_profile_kernel_flops(const mlcc_kernel_t* kernel);

// Adds to |module| the table global (one row per kernel of |graph|, rows in
// kernel order; units from mlcc_emit_parallel_units(kernel, |target|), 0 for
// a NULL target) and the functions
//   int32_t NAME_profile(const mlcc_profile_entry_t **out_rows)  (returns the row count)
//   void NAME_profile_reset(void)
// Returns the table global in |*out_table|. RESOURCE_EXHAUSTED on allocation failure.
mlcc_status_t mlcc_profile_build_table(LLVMContextRef llctx, LLVMModuleRef module,
                                       const mlcc_graph_t* graph, const mlcc_target_t* target,
                                       const char* name, LLVMValueRef* out_table);

// Emits at |b|'s position a read of the monotonic clock (i64 nanoseconds),
// with its timespec slot allocated in the entry block of the current function.
LLVMValueRef mlcc_profile_emit_now(LLVMBuilderRef b, LLVMModuleRef module);

// Emits: row[k].calls += 1; row[k].ns += t1 - t0; row[k].min_ns = min(...).
void mlcc_profile_emit_add(LLVMBuilderRef b, LLVMModuleRef module, LLVMValueRef table,
                           uint32_t k, LLVMValueRef t0, LLVMValueRef t1);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_CODEGEN_ENTRY_PROFILE_H_

// SPDX-License-Identifier: Apache-2.0
// Short spellings of LLVM-C builder calls for emitters that build scalar or
// vector float and integer arithmetic at the emit context's insertion point.
// Operands are LLVM values of one type (scalars or vectors); results are
// unnamed. Header-only (static inline); include after emit.h.
#ifndef MLCC_TARGETS_EMIT_EMIT_BUILDER_H_
#define MLCC_TARGETS_EMIT_EMIT_BUILDER_H_

#include "targets/emit/emit.h"

static inline LLVMValueRef fp_add(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFAdd(ctx->b, a, b, "");
}
static inline LLVMValueRef fp_sub(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFSub(ctx->b, a, b, "");
}
static inline LLVMValueRef fp_mul(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFMul(ctx->b, a, b, "");
}
static inline LLVMValueRef fp_div(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFDiv(ctx->b, a, b, "");
}
static inline LLVMValueRef fcmp(mlcc_emit_ctx_t* ctx, LLVMRealPredicate p, LLVMValueRef a,
                                LLVMValueRef b) {
  return LLVMBuildFCmp(ctx->b, p, a, b, "");
}
static inline LLVMValueRef icmp(mlcc_emit_ctx_t* ctx, LLVMIntPredicate p, LLVMValueRef a,
                                LLVMValueRef b) {
  return LLVMBuildICmp(ctx->b, p, a, b, "");
}
static inline LLVMValueRef sel(mlcc_emit_ctx_t* ctx, LLVMValueRef c, LLVMValueRef a,
                               LLVMValueRef b) {
  return LLVMBuildSelect(ctx->b, c, a, b, "");
}

#endif  // MLCC_TARGETS_EMIT_EMIT_BUILDER_H_

// SPDX-License-Identifier: Apache-2.0
// Short i64 index-arithmetic helpers for op emitters (emit_*.c): constants,
// and no-signed-wrap add/multiply that fold the trivial cases (x*1, x*0,
// x+0) at emission time. Index values never overflow int64 because shapes
// are checked at inference (checked_math.h), hence NSW. Internal to
// targets/codegen; thread-compatible like mlcc_emit_ctx_t.
#ifndef MLCC_TARGETS_EMIT_EMIT_INDEX_H_
#define MLCC_TARGETS_EMIT_EMIT_INDEX_H_

#include "targets/emit/emit.h"

// The i64 constant |v|.
static inline LLVMValueRef c64(mlcc_emit_ctx_t* ctx, int64_t v) { return mlcc_emit_i64(ctx, v); }

// a + b.
static inline LLVMValueRef iadd(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildNSWAdd(ctx->b, a, b, "");
}

// a + c for a constant c (a itself when c == 0).
static inline LLVMValueRef iaddc(mlcc_emit_ctx_t* ctx, LLVMValueRef a, int64_t c) {
  return c == 0 ? a : LLVMBuildNSWAdd(ctx->b, a, c64(ctx, c), "");
}

// a * c for a constant c (a when c == 1, 0 when c == 0).
static inline LLVMValueRef imulc(mlcc_emit_ctx_t* ctx, LLVMValueRef a, int64_t c) {
  if (c == 1) return a;
  if (c == 0) return c64(ctx, 0);
  return LLVMBuildNSWMul(ctx->b, a, c64(ctx, c), "");
}

// a * m + b: the usual row-major index step.
static inline LLVMValueRef imad(mlcc_emit_ctx_t* ctx, LLVMValueRef a, int64_t m,
                                LLVMValueRef b) {
  return iadd(ctx, imulc(ctx, a, m), b);
}

#endif  // MLCC_TARGETS_EMIT_EMIT_INDEX_H_

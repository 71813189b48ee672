// SPDX-License-Identifier: Apache-2.0
// The emitter toolkit's short spellings, for the kernel files
// (targets/kernels/*.c), header-only (static inline), at the emit context's
// insertion point, results unnamed:
// * i64 index arithmetic: constants, and no-signed-wrap add/multiply that
//   fold the trivial cases (x*1, x*0, x+0) at emission time. Index values
//   never overflow int64 because shapes are checked at inference
//   (checked_math.h), hence NSW.
// * The same arithmetic without NSW and without folding (w*): the spelling
//   of the kernels written with it (a different flag or one instruction less
//   changes the optimized code, so the two are not interchangeable).
// * LLVM-C builder calls for scalar or vector float and integer arithmetic
//   (operands are LLVM values of one type).
// * Checks shared by emitters (mlcc_emit_check_types is in emit.h).
// Internal to targets/; thread-compatible like mlcc_emit_ctx_t.
#ifndef MLCC_TARGETS_EMIT_EMIT_HELPERS_H_
#define MLCC_TARGETS_EMIT_EMIT_HELPERS_H_

#include <stdio.h>

#include "targets/emit/emit.h"

// The i64 constant |v|.
static inline LLVMValueRef c64(mlcc_emit_ctx_t* ctx, int64_t v) { return mlcc_emit_i64(ctx, v); }

// a + b.
static inline LLVMValueRef iadd(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildNSWAdd(ctx->b, a, b, "");
}

// a - b.
static inline LLVMValueRef isub(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildNSWSub(ctx->b, a, b, "");
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

// Wrapping (no NSW, no folding) i64 arithmetic.
// a + b.
static inline LLVMValueRef wadd(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(ctx->b, a, b, "");
}
// a - b.
static inline LLVMValueRef wsub(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSub(ctx->b, a, b, "");
}
// a * b, always one multiply.
static inline LLVMValueRef wmul(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildMul(ctx->b, a, b, "");
}
// a * c for a constant c, always one multiply.
static inline LLVMValueRef wmulc(mlcc_emit_ctx_t* ctx, LLVMValueRef a, int64_t c) {
  return LLVMBuildMul(ctx->b, a, c64(ctx, c), "");
}
// a * m + b, always a multiply and an add.
static inline LLVMValueRef wmad(mlcc_emit_ctx_t* ctx, LLVMValueRef a, int64_t m,
                                LLVMValueRef b) {
  return wadd(ctx, wmulc(ctx, a, m), b);
}
// a / c and a % c for a constant c (signed).
static inline LLVMValueRef wdivc(mlcc_emit_ctx_t* ctx, LLVMValueRef a, int64_t c) {
  return LLVMBuildSDiv(ctx->b, a, c64(ctx, c), "");
}
static inline LLVMValueRef wremc(mlcc_emit_ctx_t* ctx, LLVMValueRef a, int64_t c) {
  return LLVMBuildSRem(ctx->b, a, c64(ctx, c), "");
}

// Loads the scalar of type |t| in the alloca |var| (an mlcc_emit_var).
static inline LLVMValueRef load_var(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef var) {
  return LLVMBuildLoad2(ctx->b, t, var, "");
}
// Element |idx| of integer |value| widened to i64 (signed).
static inline LLVMValueRef load_i64(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value,
                                    LLVMValueRef idx) {
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, value, idx), value->dtype, MLCC_DTYPE_I64);
}
// Row-major strides (in elements) of |s| into |st| (s->rank entries).
static inline void strides_of(const mlcc_shape_t* s, int64_t* st) {
  int64_t acc = 1;
  for (int32_t d = s->rank - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= s->dims[d];
  }
}

// Normalizes a possibly negative index against |dim|: i < 0 ? i + dim : i.
static inline LLVMValueRef wrap_index(mlcc_emit_ctx_t* ctx, LLVMValueRef i, int64_t dim) {
  LLVMValueRef neg = LLVMBuildICmp(ctx->b, LLVMIntSLT, i, c64(ctx, 0), "");
  return LLVMBuildSelect(ctx->b, neg, wadd(ctx, i, c64(ctx, dim)), i, "");
}
// Clamps an index into [0, dim) so a bad index never reads out of bounds.
static inline LLVMValueRef clamp_index(mlcc_emit_ctx_t* ctx, LLVMValueRef i, int64_t dim) {
  LLVMValueRef lo = LLVMBuildICmp(ctx->b, LLVMIntSLT, i, c64(ctx, 0), "");
  i = LLVMBuildSelect(ctx->b, lo, c64(ctx, 0), i, "");
  LLVMValueRef hi = LLVMBuildICmp(ctx->b, LLVMIntSGE, i, c64(ctx, dim), "");
  return LLVMBuildSelect(ctx->b, hi, c64(ctx, dim > 0 ? dim - 1 : 0), i, "");
}
// The libm function |base| for float dtype |dt|: "sin" for F64, else "sinf"
// (F32, and F16/BF16 computed as float).
static inline LLVMValueRef libm_dt(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, const char* base,
                                   LLVMValueRef x) {
  char name[32];
  snprintf(name, sizeof(name), "%s%s", base, dt == MLCC_DTYPE_F64 ? "" : "f");
  return mlcc_emit_libm(ctx, name, x);
}

// Float and integer builder calls.
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

#endif  // MLCC_TARGETS_EMIT_EMIT_HELPERS_H_

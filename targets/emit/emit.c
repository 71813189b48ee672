// SPDX-License-Identifier: Apache-2.0
// The emitter toolkit (emit.h): argument lookup, typed loads/stores, loops,
// branches, index arithmetic and math helpers over the LLVM-C API.
#include "targets/emit/emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"

//===----------------------------------------------------------------------===//
// Kernel arguments
//===----------------------------------------------------------------------===//

// True if |v| is output 0 of a chain node other than the last one: it is
// carried in registers and never materialized.
static bool is_chain_internal(const mlcc_kernel_t* kernel, const mlcc_value_t* v) {
  for (uint32_t i = 0; i + 1 < kernel->n_nodes; ++i) {
    const mlcc_node_t* n = kernel->nodes[i];
    for (uint32_t o = 0; o < n->n_outputs; ++o) {
      if (n->outputs[o] == v) return true;
    }
  }
  return false;
}

static bool args_contain(const mlcc_value_t** args, uint32_t count, uint32_t cap,
                         const mlcc_value_t* v) {
  (void)cap;
  for (uint32_t i = 0; i < count; ++i) {
    if (args[i] == v) return true;
  }
  return false;
}

// The argument count alone, without allocating (so that a count-only call
// cannot fail): a candidate (the last node's outputs, then every node's
// inputs, in ABI order) counts unless an earlier candidate is the same value.
static uint32_t count_kernel_args(const mlcc_kernel_t* kernel) {
  if (kernel->n_nodes == 0) return 0;
  const mlcc_node_t* last = kernel->nodes[kernel->n_nodes - 1];
  uint32_t count = 0;
  for (uint32_t o = 0; o < last->n_outputs; ++o) {
    const mlcc_value_t* v = last->outputs[o];
    bool dup = v == NULL;
    for (uint32_t p = 0; p < o && !dup; ++p) dup = last->outputs[p] == v;
    if (!dup) count++;
  }
  for (uint32_t i = 0; i < kernel->n_nodes; ++i) {
    const mlcc_node_t* n = kernel->nodes[i];
    for (uint32_t s = 0; s < n->n_inputs; ++s) {
      const mlcc_value_t* v = n->inputs[s];
      if (v == NULL || is_chain_internal(kernel, v)) continue;
      bool dup = false;
      for (uint32_t o = 0; o < last->n_outputs && !dup; ++o) dup = last->outputs[o] == v;
      for (uint32_t j = 0; j <= i && !dup; ++j) {
        const mlcc_node_t* m = kernel->nodes[j];
        uint32_t end = j < i ? m->n_inputs : s;
        for (uint32_t t = 0; t < end && !dup; ++t) dup = m->inputs[t] == v;
      }
      if (!dup) count++;
    }
  }
  return count;
}

uint32_t mlcc_kernel_args(const mlcc_kernel_t* kernel, const mlcc_value_t** out_args,
                          uint32_t cap) {
  if (out_args == NULL || cap == 0) return count_kernel_args(kernel);
  // Duplicates are detected by scanning what was collected so far; when the
  // caller's array is too small we collect into a private one.
  uint32_t total = 0;
  for (uint32_t i = 0; i < kernel->n_nodes; ++i) {
    total += kernel->nodes[i]->n_inputs + kernel->nodes[i]->n_outputs;
  }
  const mlcc_value_t** tmp = out_args;
  const mlcc_value_t** heap = NULL;
  if (cap < total) {
    heap = calloc(total ? total : 1, sizeof(*heap));
    if (heap == NULL) return 0;
    tmp = heap;
  }
  uint32_t count = 0;
  if (kernel->n_nodes > 0) {
    const mlcc_node_t* last = kernel->nodes[kernel->n_nodes - 1];
    for (uint32_t o = 0; o < last->n_outputs; ++o) {
      const mlcc_value_t* v = last->outputs[o];
      if (v == NULL || args_contain(tmp, count, total, v)) continue;
      tmp[count++] = v;
    }
  }
  for (uint32_t i = 0; i < kernel->n_nodes; ++i) {
    const mlcc_node_t* n = kernel->nodes[i];
    for (uint32_t s = 0; s < n->n_inputs; ++s) {
      const mlcc_value_t* v = n->inputs[s];
      if (v == NULL || is_chain_internal(kernel, v)) continue;
      if (args_contain(tmp, count, total, v)) continue;
      tmp[count++] = v;
    }
  }
  if (heap != NULL) {
    if (cap > 0) memcpy(out_args, heap, (size_t)cap * sizeof(*heap));
    free(heap);
  }
  return count;
}

mlcc_status_t mlcc_emit_check_types(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  for (uint32_t i = 0; i < node->n_inputs + node->n_outputs; ++i) {
    const mlcc_value_t* v = i < node->n_inputs ? node->inputs[i]
                                               : node->outputs[i - node->n_inputs];
    if (v != NULL && mlcc_emit_type(ctx, v->dtype) == NULL) {
      return mlcc_emit_unsupported_dtype(node, v->dtype);
    }
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_emit_unsupported_dtype(const mlcc_node_t* node, mlcc_dtype_t dtype) {
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s (opset %d) does not support dtype %s",
                          mlcc_op_name(node->op), node->opset, mlcc_dtype_name(dtype));
}

LLVMValueRef mlcc_emit_ptr(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value) {
  for (uint32_t i = 0; i < ctx->n_args; ++i) {
    if (ctx->arg_values[i] == value) return ctx->arg_ptrs[i];
  }
  return NULL;
}

void mlcc_emit_fail(mlcc_emit_ctx_t* ctx, mlcc_status_t status) {
  if (status == NULL) return;
  if (ctx->deferred_status == NULL) {
    ctx->deferred_status = status;
  } else {
    mlcc_status_free(status);
  }
}

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

LLVMTypeRef mlcc_emit_type(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype) {
  switch (dtype) {
    case MLCC_DTYPE_F32: return ctx->t_f32;
    case MLCC_DTYPE_F16: return ctx->t_f32;  // computed as float
    case MLCC_DTYPE_BF16: return ctx->t_f32;  // computed as float
    case MLCC_DTYPE_F64: return ctx->t_f64;
    case MLCC_DTYPE_BOOL: return ctx->t_i1;
    case MLCC_DTYPE_U8: case MLCC_DTYPE_I8: return ctx->t_i8;
    case MLCC_DTYPE_U4: case MLCC_DTYPE_I4: return ctx->t_i8;  // one per byte (dtypes.def)
    case MLCC_DTYPE_U2: case MLCC_DTYPE_I2: return ctx->t_i8;
    case MLCC_DTYPE_F8E4M3FN: case MLCC_DTYPE_F8E4M3FNUZ: case MLCC_DTYPE_F8E5M2:
    case MLCC_DTYPE_F8E5M2FNUZ: case MLCC_DTYPE_F8E8M0: case MLCC_DTYPE_F4E2M1:
      return ctx->t_i8;  // the bits (targets/emit/float8.c)
    case MLCC_DTYPE_U16: case MLCC_DTYPE_I16: return ctx->t_i16;
    case MLCC_DTYPE_U32: case MLCC_DTYPE_I32: return ctx->t_i32;
    case MLCC_DTYPE_U64: case MLCC_DTYPE_I64: return ctx->t_i64;
    default: return NULL;
  }
}

LLVMTypeRef mlcc_emit_storage_type(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype) {
  if (dtype == MLCC_DTYPE_BOOL) return ctx->t_i8;
  if (dtype == MLCC_DTYPE_F16) return LLVMHalfTypeInContext(ctx->llctx);
  if (dtype == MLCC_DTYPE_BF16) return ctx->t_i16;  // the bits (bf16_bits_to_float)
  return mlcc_emit_type(ctx, dtype);
}

LLVMValueRef mlcc_emit_i64(mlcc_emit_ctx_t* ctx, int64_t v) {
  return LLVMConstInt(ctx->t_i64, (unsigned long long)v, 1);
}

LLVMValueRef mlcc_emit_f32(mlcc_emit_ctx_t* ctx, float v) {
  return LLVMConstReal(ctx->t_f32, (double)v);
}

LLVMValueRef mlcc_emit_const(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, double v) {
  LLVMTypeRef t = mlcc_emit_type(ctx, dtype);
  if (t == NULL) return NULL;
  if (mlcc_dtype_is_float(dtype)) {
    if (dtype != MLCC_DTYPE_F64) v = (double)(float)v;
    return LLVMConstReal(t, v);
  }
  if (dtype == MLCC_DTYPE_BOOL) return LLVMConstInt(t, v != 0.0, 0);
  unsigned long long bits;
  if (v != v) {
    bits = 0;
  } else if (mlcc_dtype_is_unsigned(dtype) && v >= 9223372036854775808.0) {
    bits = v >= 18446744073709551615.0 ? ~0ull : (unsigned long long)v;
  } else if (v >= 9223372036854775807.0) {
    bits = (unsigned long long)INT64_MAX;
  } else if (v <= -9223372036854775808.0) {
    bits = (unsigned long long)INT64_MIN;
  } else {
    bits = (unsigned long long)(int64_t)v;
  }
  return LLVMConstInt(t, bits, !mlcc_dtype_is_unsigned(dtype));
}

static LLVMValueRef round_narrow(mlcc_emit_ctx_t* ctx, LLVMValueRef f, mlcc_dtype_t to);

LLVMValueRef mlcc_emit_wrap4(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t dtype) {
  LLVMTypeRef t = LLVMTypeOf(v);
  unsigned bits = mlcc_dtype_bits(dtype);  // 4 or 2
  if (mlcc_dtype_is_unsigned(dtype) || mlcc_dtype_is_float8(dtype)) {  // float4e2m1: the code
    return LLVMBuildAnd(ctx->b, v, LLVMConstInt(t, (1u << bits) - 1, 0), "un");
  }
  LLVMValueRef sh = LLVMConstInt(t, LLVMGetIntTypeWidth(t) - bits, 0);
  return LLVMBuildAShr(ctx->b, LLVMBuildShl(ctx->b, v, sh, ""), sh, "in");
}

LLVMValueRef mlcc_emit_convert(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t from,
                               mlcc_dtype_t to) {
  return mlcc_emit_convert_f8(ctx, v, from, to, MLCC_EMIT_F8_SATURATE);
}

LLVMValueRef mlcc_emit_convert_f8(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t from,
                                  mlcc_dtype_t to, uint32_t f8_flags) {
  LLVMTypeRef tt = mlcc_emit_type(ctx, to);
  if (tt == NULL || mlcc_emit_type(ctx, from) == NULL) {
    mlcc_emit_fail(ctx, mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                         "cannot convert %s to %s", mlcc_dtype_name(from),
                                         mlcc_dtype_name(to)));
    return tt ? LLVMGetUndef(tt) : v;
  }
  if (mlcc_dtype_is_float8(from) || mlcc_dtype_is_float8(to)) {
    if (from == to) return v;
    if (mlcc_dtype_is_float8(from)) {
      v = mlcc_emit_float8_to_float(ctx, v, from);
      from = MLCC_DTYPE_F32;
      if (!mlcc_dtype_is_float8(to)) return mlcc_emit_convert_f8(ctx, v, from, to, 0);
    }
    // float8 |to|: float through float exactly (F16/BF16 are computed as
    // float, bool and integers up to 2^24 are exact; larger ones overflow
    // every float8 type either way), double through round-to-odd.
    if (to == MLCC_DTYPE_F8E8M0 && !mlcc_dtype_is_float(from)) {
      // e8m0's directed roundings need every bit of a large integer: through
      // double (exact up to 2^53), then as a double.
      v = mlcc_emit_convert_f8(ctx, v, from, MLCC_DTYPE_F64, 0);
      from = MLCC_DTYPE_F64;
    }
    if (from == MLCC_DTYPE_F64) {
      v = mlcc_emit_double_to_float_odd(ctx, v);
    } else if (from != MLCC_DTYPE_F32) {
      v = mlcc_emit_convert_f8(ctx, v, from, MLCC_DTYPE_F32, 0);
    }
    return mlcc_emit_float_to_float8(ctx, v, to, f8_flags);
  }
  bool ff = mlcc_dtype_is_float(from), tf = mlcc_dtype_is_float(to);
  bool fb = mlcc_dtype_is_bool(from), tb = mlcc_dtype_is_bool(to);
  LLVMTypeRef ft = LLVMTypeOf(v);
  if (tb) {
    if (fb) return v;
    if (ff) return LLVMBuildFCmp(ctx->b, LLVMRealUNE, v, LLVMConstReal(ft, 0.0), "tobool");
    return LLVMBuildICmp(ctx->b, LLVMIntNE, v, LLVMConstInt(ft, 0, 0), "tobool");
  }
  if (tf) {
    LLVMValueRef r;
    if (ff) {
      r = ft == tt ? v : LLVMBuildFPCast(ctx->b, v, tt, "fpcast");
    } else if (fb || mlcc_dtype_is_unsigned(from)) {
      r = LLVMBuildUIToFP(ctx->b, v, tt, "uitofp");
    } else {
      r = LLVMBuildSIToFP(ctx->b, v, tt, "sitofp");
    }
    // float16 and bfloat16 compute as float: round here, so that a value
    // that is never stored (a fused Cast chain) is the narrow type's too.
    if ((to == MLCC_DTYPE_F16 || to == MLCC_DTYPE_BF16) && from != to) r = round_narrow(ctx, r, to);
    return r;
  }
  // int4/uint4 (int2/uint2) target: ONNX Cast keeps the low 4 (2) bits of an integer (two's
  // complement, "discard higher bits and reinterpret"); a float is rounded
  // half away from zero first (out of range the spec leaves it undefined;
  // this is what onnxruntime 1.30 does, NaN gives 0).
  if (mlcc_dtype_is_subbyte(to)) {
    LLVMValueRef i;
    if (ff) {
      // No libm (microcontrollers): NaN -> 0, clamp to +-2^30 (floats that
      // large are integers), truncate, then step away from zero when the
      // dropped fraction (exact in float) is at least one half.
      LLVMBuilderRef b = ctx->b;
      LLVMValueRef zero = LLVMConstReal(ft, 0.0), lim = LLVMConstReal(ft, 1073741824.0);
      LLVMValueRef nlim = LLVMConstReal(ft, -1073741824.0);
      LLVMValueRef x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), zero, v, "");
      x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, lim, ""), lim, x, "");
      x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, nlim, ""), nlim, x, "");
      LLVMValueRef t = LLVMBuildFPToSI(b, x, ctx->t_i32, "");
      LLVMValueRef frac = LLVMBuildFSub(b, x, LLVMBuildSIToFP(b, t, ft, ""), "");
      LLVMValueRef up = LLVMBuildZExt(
          b, LLVMBuildFCmp(b, LLVMRealOGE, frac, LLVMConstReal(ft, 0.5), ""), ctx->t_i32, "");
      LLVMValueRef dn = LLVMBuildZExt(
          b, LLVMBuildFCmp(b, LLVMRealOLE, frac, LLVMConstReal(ft, -0.5), ""), ctx->t_i32, "");
      t = LLVMBuildSub(b, LLVMBuildAdd(b, t, up, ""), dn, "");
      i = LLVMBuildTrunc(b, t, ctx->t_i8, "");
    } else {
      i = ft == tt ? v : LLVMBuildIntCast2(ctx->b, v, tt, !(fb || mlcc_dtype_is_unsigned(from)), "");
    }
    return mlcc_emit_wrap4(ctx, i, to);
  }
  // Integer target.
  if (ff) {
    if (mlcc_dtype_is_unsigned(to)) return LLVMBuildFPToUI(ctx->b, v, tt, "fptoui");
    return LLVMBuildFPToSI(ctx->b, v, tt, "fptosi");
  }
  if (ft == tt) return v;
  bool is_signed = !(fb || mlcc_dtype_is_unsigned(from));
  return LLVMBuildIntCast2(ctx->b, v, tt, is_signed, "icast");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

LLVMValueRef mlcc_emit_element_ptr(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value,
                                   LLVMValueRef idx, LLVMTypeRef* out_storage) {
  *out_storage = mlcc_emit_storage_type(ctx, value->dtype);
  LLVMValueRef base = mlcc_emit_ptr(ctx, value);
  if (base == NULL || *out_storage == NULL) {
    mlcc_emit_fail(ctx, mlcc_make_status(
                            MLCC_STATUS_INTERNAL,
                            "value '%s' (%s) is not an argument of the kernel being emitted",
                            value->name ? value->name : "?", mlcc_dtype_name(value->dtype)));
    return NULL;
  }
  return LLVMBuildInBoundsGEP2(ctx->b, *out_storage, base, &idx, 1, "ep");
}

// float16 <-> float32 by integer bit manipulation (round to nearest even),
// for targets whose runtime lacks the soft-float helpers LLVM would call
// (riscv64: GCC 12's libgcc has no __extendhfsf2/__truncsfhf2).
static bool soft_half(const mlcc_emit_ctx_t* ctx) {
  return ctx->target != NULL && ctx->target->arch == MLCC_ARCH_RISCV64;
}

static LLVMValueRef k32(mlcc_emit_ctx_t* ctx, uint32_t v) {
  return LLVMConstInt(ctx->t_i32, v, 0);
}

// |h| is an i16 holding IEEE binary16 bits; returns the float value.
static LLVMValueRef half_bits_to_float(mlcc_emit_ctx_t* ctx, LLVMValueRef h) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef x = LLVMBuildZExt(b, h, ctx->t_i32, "");
  LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, x, k32(ctx, 0x8000), ""), k32(ctx, 16), "");
  LLVMValueRef ex = LLVMBuildAnd(b, LLVMBuildLShr(b, x, k32(ctx, 10), ""), k32(ctx, 0x1f), "");
  LLVMValueRef man = LLVMBuildAnd(b, x, k32(ctx, 0x3ff), "");
  LLVMValueRef man13 = LLVMBuildShl(b, man, k32(ctx, 13), "");
  LLVMValueRef normal = LLVMBuildOr(
      b, LLVMBuildShl(b, LLVMBuildAdd(b, ex, k32(ctx, 112), ""), k32(ctx, 23), ""), man13, "");
  LLVMValueRef infnan = LLVMBuildOr(b, k32(ctx, 0x7f800000), man13, "");
  // Zero and subnormals: man * 2^-24 is exact in float.
  LLVMValueRef sub = LLVMBuildFMul(b, LLVMBuildUIToFP(b, man, ctx->t_f32, ""),
                                   LLVMConstReal(ctx->t_f32, 5.9604644775390625e-8), "");
  sub = LLVMBuildBitCast(b, sub, ctx->t_i32, "");
  LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, ex, k32(ctx, 31), ""), infnan,
                                   normal, "");
  r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, ex, k32(ctx, 0), ""), sub, r, "");
  return LLVMBuildBitCast(b, LLVMBuildOr(b, r, sign, ""), ctx->t_f32, "h2f");
}

// Returns the i16 binary16 bits of float |f| (round to nearest even).
static LLVMValueRef float_to_half_bits(mlcc_emit_ctx_t* ctx, LLVMValueRef f) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef x = LLVMBuildBitCast(b, f, ctx->t_i32, "");
  LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildLShr(b, x, k32(ctx, 16), ""), k32(ctx, 0x8000), "");
  LLVMValueRef ax = LLVMBuildAnd(b, x, k32(ctx, 0x7fffffff), "");
  // Normal range: rebias the exponent, round the 13 dropped bits to even.
  LLVMValueRef m = LLVMBuildSub(b, ax, k32(ctx, 0x38000000), "");
  LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, m, k32(ctx, 13), ""), k32(ctx, 1), "");
  LLVMValueRef normal = LLVMBuildLShr(
      b, LLVMBuildAdd(b, LLVMBuildAdd(b, m, k32(ctx, 0xfff), ""), odd, ""), k32(ctx, 13), "");
  // Subnormal range: |f| * 2^24 rounded to an integer (exact scaling).
  LLVMValueRef af = LLVMBuildBitCast(b, ax, ctx->t_f32, "");
  LLVMValueRef sc = LLVMBuildFMul(b, af, LLVMConstReal(ctx->t_f32, 16777216.0), "");
  LLVMValueRef rn = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &sc, 1);
  LLVMValueRef sub = LLVMBuildFPToUI(b, rn, ctx->t_i32, "");
  LLVMValueRef nan = LLVMBuildOr(
      b, k32(ctx, 0x7e00), LLVMBuildAnd(b, LLVMBuildLShr(b, ax, k32(ctx, 13), ""), k32(ctx, 0x3ff), ""), "");
  LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGE, ax, k32(ctx, 0x38800000), ""),
                                   normal, sub, "");
  r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGE, ax, k32(ctx, 0x477ff000), ""),
                      k32(ctx, 0x7c00), r, "");
  r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, ax, k32(ctx, 0x7f800000), ""), nan, r, "");
  return LLVMBuildTrunc(b, LLVMBuildOr(b, r, sign, ""), ctx->t_i16, "f2h");
}

// bfloat16 (ONNX TensorProto BFLOAT16: the upper 16 bits of a binary32)
// <-> float. |h| is the i16 bits; widening is exact.
static LLVMValueRef bf16_bits_to_float(mlcc_emit_ctx_t* ctx, LLVMValueRef h) {
  LLVMValueRef x = LLVMBuildShl(ctx->b, LLVMBuildZExt(ctx->b, h, ctx->t_i32, ""),
                                k32(ctx, 16), "");
  return LLVMBuildBitCast(ctx->b, x, ctx->t_f32, "bf2f");
}

// Returns the i16 bfloat16 bits of float |f|: round to nearest, ties to
// even (as onnx.helper.float32_to_bfloat16); overflow rounds to +-inf;
// NaN keeps its sign and becomes the quiet NaN 0x7fc0 / 0xffc0 (a payload
// only in the dropped bits must not turn into infinity).
static LLVMValueRef float_to_bf16_bits(mlcc_emit_ctx_t* ctx, LLVMValueRef f) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef x = LLVMBuildBitCast(b, f, ctx->t_i32, "");
  LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, x, k32(ctx, 16), ""), k32(ctx, 1), "");
  LLVMValueRef rounded = LLVMBuildLShr(
      b, LLVMBuildAdd(b, LLVMBuildAdd(b, x, k32(ctx, 0x7fff), ""), odd, ""), k32(ctx, 16), "");
  LLVMValueRef nan = LLVMBuildOr(b, LLVMBuildAnd(b, LLVMBuildLShr(b, x, k32(ctx, 16), ""),
                                                 k32(ctx, 0x8000), ""),
                                 k32(ctx, 0x7fc0), "");
  LLVMValueRef is_nan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
  LLVMValueRef r = LLVMBuildSelect(b, is_nan, nan, rounded, "");
  return LLVMBuildTrunc(b, r, ctx->t_i16, "f2bf");
}

// Float |f| rounded to the nearest float16 (|to| F16) or bfloat16 value
// (round to nearest even), as a float.
static LLVMValueRef round_narrow(mlcc_emit_ctx_t* ctx, LLVMValueRef f, mlcc_dtype_t to) {
  if (to == MLCC_DTYPE_BF16) return bf16_bits_to_float(ctx, float_to_bf16_bits(ctx, f));
  if (soft_half(ctx)) return half_bits_to_float(ctx, float_to_half_bits(ctx, f));
  LLVMValueRef h = LLVMBuildFPTrunc(ctx->b, f, LLVMHalfTypeInContext(ctx->llctx), "f2h");
  return LLVMBuildFPExt(ctx->b, h, ctx->t_f32, "h2f");
}

LLVMValueRef mlcc_emit_load(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value,
                            LLVMValueRef idx) {
  LLVMTypeRef st;
  LLVMValueRef p = mlcc_emit_element_ptr(ctx, value, idx, &st);
  LLVMTypeRef ct = mlcc_emit_type(ctx, value->dtype);
  if (p == NULL) return LLVMGetUndef(ct ? ct : ctx->t_f32);
  return mlcc_emit_load_elem(ctx, value->dtype, p);
}

LLVMValueRef mlcc_emit_load_elem(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, LLVMValueRef p) {
  if (dtype == MLCC_DTYPE_F16 && soft_half(ctx)) {
    LLVMValueRef h = LLVMBuildLoad2(ctx->b, ctx->t_i16, p, "ldh");
    LLVMSetAlignment(h, 2);
    return half_bits_to_float(ctx, h);
  }
  LLVMValueRef v = LLVMBuildLoad2(ctx->b, mlcc_emit_storage_type(ctx, dtype), p, "ld");
  LLVMSetAlignment(v, (unsigned)mlcc_dtype_size(dtype));
  if (dtype == MLCC_DTYPE_BF16) {
    v = bf16_bits_to_float(ctx, v);
  } else if (dtype == MLCC_DTYPE_BOOL) {
    v = LLVMBuildICmp(ctx->b, LLVMIntNE, v, LLVMConstInt(ctx->t_i8, 0, 0), "b");
  } else if (dtype == MLCC_DTYPE_F16) {
    v = LLVMBuildFPExt(ctx->b, v, ctx->t_f32, "h2f");
  } else if (mlcc_dtype_is_subbyte(dtype)) {
    v = mlcc_emit_wrap4(ctx, v, dtype);  // a caller's byte outside the range: its low 4 bits
  }
  return v;
}

void mlcc_emit_store(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value, LLVMValueRef idx,
                     LLVMValueRef v) {
  LLVMTypeRef st;
  LLVMValueRef p = mlcc_emit_element_ptr(ctx, value, idx, &st);
  if (p == NULL) return;
  if (value->dtype == MLCC_DTYPE_F16 && soft_half(ctx)) {
    LLVMValueRef h = LLVMBuildStore(ctx->b, float_to_half_bits(ctx, v), p);
    LLVMSetAlignment(h, 2);
    return;
  }
  if (value->dtype == MLCC_DTYPE_BOOL) {
    v = LLVMBuildZExt(ctx->b, v, ctx->t_i8, "b2i8");
  } else if (value->dtype == MLCC_DTYPE_BF16) {
    v = float_to_bf16_bits(ctx, v);
  } else if (value->dtype == MLCC_DTYPE_F16) {
    v = LLVMBuildFPTrunc(ctx->b, v, st, "f2h");
  }
  LLVMValueRef s = LLVMBuildStore(ctx->b, v, p);
  LLVMSetAlignment(s, (unsigned)mlcc_dtype_size(value->dtype));
}

// An alloca of |type| named |name| at the end of the entry block; the
// builder returns to where it was.
static LLVMValueRef entry_alloca(mlcc_emit_ctx_t* ctx, LLVMTypeRef type, const char* name) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(ctx->b);
  // The entry block holds only allocas until the codegen terminates it with a
  // branch to the body, so appending keeps them together.
  LLVMValueRef term = LLVMGetBasicBlockTerminator(ctx->entry_bb);
  if (term != NULL) {
    LLVMPositionBuilderBefore(ctx->b, term);
  } else {
    LLVMPositionBuilderAtEnd(ctx->b, ctx->entry_bb);
  }
  LLVMValueRef a = LLVMBuildAlloca(ctx->b, type, name);
  LLVMPositionBuilderAtEnd(ctx->b, cur);
  return a;
}

LLVMValueRef mlcc_emit_var(mlcc_emit_ctx_t* ctx, LLVMTypeRef type, LLVMValueRef init) {
  LLVMValueRef a = entry_alloca(ctx, type, "var");
  if (init != NULL) LLVMBuildStore(ctx->b, init, a);
  return a;
}

LLVMValueRef mlcc_emit_entry_array(mlcc_emit_ctx_t* ctx, LLVMTypeRef type, int64_t n,
                                   unsigned align, const char* name) {
  LLVMValueRef a = entry_alloca(ctx, LLVMArrayType(type, (unsigned)n), name);
  LLVMSetAlignment(a, align);
  return a;
}

mlcc_fsum_t mlcc_emit_fsum_begin(mlcc_emit_ctx_t* ctx) {
  mlcc_fsum_t s;
  memset(&s, 0, sizeof(s));
  s.wide = ctx->target == NULL || mlcc_target_wide_sums(ctx->target);
  s.type = s.wide ? ctx->t_f64 : ctx->t_f32;
  s.sum = mlcc_emit_var(ctx, s.type, LLVMConstReal(s.type, 0.0));
  if (!s.wide) s.comp = mlcc_emit_var(ctx, ctx->t_f32, LLVMConstReal(ctx->t_f32, 0.0));
  return s;
}

void mlcc_emit_fsum_add(mlcc_emit_ctx_t* ctx, const mlcc_fsum_t* s, LLVMValueRef x) {
  LLVMBuilderRef b = ctx->b;
  if (s->wide) {
    LLVMValueRef xd = LLVMBuildFPExt(b, x, ctx->t_f64, "");
    LLVMValueRef cur = LLVMBuildLoad2(b, ctx->t_f64, s->sum, "");
    LLVMBuildStore(b, LLVMBuildFAdd(b, cur, xd, ""), s->sum);
    return;
  }
  // Neumaier: t = sum + x; the rounding error of that addition is
  // (big - t) + small exactly, where big is the operand of larger magnitude.
  LLVMValueRef sum = LLVMBuildLoad2(b, ctx->t_f32, s->sum, "");
  LLVMValueRef t = LLVMBuildFAdd(b, sum, x, "ks.t");
  LLVMValueRef abs_sum = mlcc_emit_intrinsic(ctx, "llvm.fabs", &sum, 1);
  LLVMValueRef abs_x = mlcc_emit_intrinsic(ctx, "llvm.fabs", &x, 1);
  LLVMValueRef sum_big = LLVMBuildFCmp(b, LLVMRealOGE, abs_sum, abs_x, "");
  LLVMValueRef big = LLVMBuildSelect(b, sum_big, sum, x, "");
  LLVMValueRef small = LLVMBuildSelect(b, sum_big, x, sum, "");
  LLVMValueRef err = LLVMBuildFAdd(b, LLVMBuildFSub(b, big, t, ""), small, "ks.err");
  LLVMValueRef comp = LLVMBuildLoad2(b, ctx->t_f32, s->comp, "");
  LLVMBuildStore(b, LLVMBuildFAdd(b, comp, err, ""), s->comp);
  LLVMBuildStore(b, t, s->sum);
}

LLVMValueRef mlcc_emit_fsum_value(mlcc_emit_ctx_t* ctx, const mlcc_fsum_t* s) {
  LLVMValueRef sum = LLVMBuildLoad2(ctx->b, s->type, s->sum, "");
  if (s->wide) return sum;
  return LLVMBuildFAdd(ctx->b, sum, LLVMBuildLoad2(ctx->b, ctx->t_f32, s->comp, ""), "ks");
}

LLVMValueRef mlcc_emit_fsum_round(mlcc_emit_ctx_t* ctx, const mlcc_fsum_t* s, LLVMValueRef v) {
  return s->wide ? LLVMBuildFPTrunc(ctx->b, v, ctx->t_f32, "") : v;
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

static LLVMBasicBlockRef new_block(mlcc_emit_ctx_t* ctx, const char* base,
                                   const char* suffix) {
  char name[64];
  snprintf(name, sizeof(name), "%s.%s", base ? base : "l", suffix);
  return LLVMAppendBasicBlockInContext(ctx->llctx, ctx->fn, name);
}

mlcc_loop_t mlcc_emit_loop_begin(mlcc_emit_ctx_t* ctx, LLVMValueRef start, LLVMValueRef end,
                                 int64_t step, const char* name) {
  mlcc_loop_t loop;
  memset(&loop, 0, sizeof(loop));
  if (step <= 0) step = 1;
  loop.end = end;
  loop.step = step;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(ctx->b);
  loop.header = new_block(ctx, name, "header");
  loop.body = new_block(ctx, name, "body");
  loop.latch = new_block(ctx, name, "latch");
  loop.exit = new_block(ctx, name, "exit");
  LLVMBuildBr(ctx->b, loop.header);
  LLVMPositionBuilderAtEnd(ctx->b, loop.header);
  loop.iv = LLVMBuildPhi(ctx->b, ctx->t_i64, name ? name : "iv");
  LLVMAddIncoming(loop.iv, &start, &pre, 1);
  LLVMValueRef cond = LLVMBuildICmp(ctx->b, LLVMIntSLT, loop.iv, end, "cond");
  LLVMBuildCondBr(ctx->b, cond, loop.body, loop.exit);
  LLVMPositionBuilderAtEnd(ctx->b, loop.body);
  return loop;
}

mlcc_loop_t mlcc_emit_for(mlcc_emit_ctx_t* ctx, int64_t start, int64_t end,
                          const char* name) {
  return mlcc_emit_loop_begin(ctx, mlcc_emit_i64(ctx, start), mlcc_emit_i64(ctx, end), 1,
                              name);
}

void mlcc_emit_loop_end(mlcc_emit_ctx_t* ctx, mlcc_loop_t* loop) {
  if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(ctx->b)) == NULL) {
    LLVMBuildBr(ctx->b, loop->latch);
  }
  LLVMPositionBuilderAtEnd(ctx->b, loop->latch);
  LLVMValueRef next =
      LLVMBuildNSWAdd(ctx->b, loop->iv, mlcc_emit_i64(ctx, loop->step), "next");
  LLVMBuildBr(ctx->b, loop->header);
  LLVMAddIncoming(loop->iv, &next, &loop->latch, 1);
  LLVMPositionBuilderAtEnd(ctx->b, loop->exit);
}

mlcc_if_t mlcc_emit_if_begin(mlcc_emit_ctx_t* ctx, LLVMValueRef cond) {
  mlcc_if_t br;
  br.then_bb = new_block(ctx, "if", "then");
  br.else_bb = new_block(ctx, "if", "else");
  br.merge_bb = new_block(ctx, "if", "end");
  LLVMBuildCondBr(ctx->b, cond, br.then_bb, br.else_bb);
  LLVMPositionBuilderAtEnd(ctx->b, br.then_bb);
  return br;
}

void mlcc_emit_if_else(mlcc_emit_ctx_t* ctx, mlcc_if_t* branch) {
  if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(ctx->b)) == NULL) {
    LLVMBuildBr(ctx->b, branch->merge_bb);
  }
  LLVMPositionBuilderAtEnd(ctx->b, branch->else_bb);
}

void mlcc_emit_if_end(mlcc_emit_ctx_t* ctx, mlcc_if_t* branch) {
  if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(ctx->b)) == NULL) {
    LLVMBuildBr(ctx->b, branch->merge_bb);
  }
  if (LLVMGetBasicBlockTerminator(branch->else_bb) == NULL) {
    // No else branch was emitted (or it ended in the else block itself).
    LLVMPositionBuilderAtEnd(ctx->b, branch->else_bb);
    LLVMBuildBr(ctx->b, branch->merge_bb);
  }
  LLVMPositionBuilderAtEnd(ctx->b, branch->merge_bb);
}

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

// Row-major strides of |shape| into |strides|.
static void shape_strides(const mlcc_shape_t* shape, int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = shape->rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape->dims[i] > 0 ? shape->dims[i] : 1;
  }
}

void mlcc_emit_unravel(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* shape, LLVMValueRef idx,
                       LLVMValueRef* out_idx) {
  int64_t strides[MLCC_MAX_RANK];
  shape_strides(shape, strides);
  // Leading dims of size 1 do not bound the quotient; the first dim > 1 does
  // not need the remainder since idx < numel.
  bool outer = true;
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (shape->dims[i] <= 1) {
      out_idx[i] = mlcc_emit_i64(ctx, 0);
      continue;
    }
    LLVMValueRef q = idx;
    if (strides[i] != 1) q = LLVMBuildUDiv(ctx->b, idx, mlcc_emit_i64(ctx, strides[i]), "q");
    if (!outer) q = LLVMBuildURem(ctx->b, q, mlcc_emit_i64(ctx, shape->dims[i]), "r");
    outer = false;
    out_idx[i] = q;
  }
}

LLVMValueRef mlcc_emit_ravel(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* shape,
                             const LLVMValueRef* idx) {
  int64_t strides[MLCC_MAX_RANK];
  shape_strides(shape, strides);
  LLVMValueRef acc = NULL;
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (shape->dims[i] == 1) continue;
    LLVMValueRef t = idx[i];
    if (strides[i] != 1) t = LLVMBuildNSWMul(ctx->b, t, mlcc_emit_i64(ctx, strides[i]), "s");
    acc = acc ? LLVMBuildNSWAdd(ctx->b, acc, t, "lin") : t;
  }
  return acc ? acc : mlcc_emit_i64(ctx, 0);
}

LLVMValueRef mlcc_emit_broadcast_index(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* out_shape,
                                       LLVMValueRef out_idx, const mlcc_shape_t* in_shape) {
  int64_t in_numel = mlcc_shape_numel_unchecked(in_shape);
  if (in_numel <= 1) return mlcc_emit_i64(ctx, 0);
  if (mlcc_shape_numel_unchecked(out_shape) == in_numel) return out_idx;
  int32_t r = out_shape->rank;
  int32_t off = r - in_shape->rank;
  int64_t in_dims[MLCC_MAX_RANK], out_strides[MLCC_MAX_RANK], in_strides_al[MLCC_MAX_RANK];
  int64_t in_strides[MLCC_MAX_RANK];
  shape_strides(out_shape, out_strides);
  shape_strides(in_shape, in_strides);
  for (int32_t j = 0; j < r; ++j) {
    int32_t k = j - off;
    in_dims[j] = k >= 0 ? in_shape->dims[k] : 1;
    in_strides_al[j] = k >= 0 ? in_strides[k] : 0;
  }
  // Walk from the innermost dim, merging consecutive non-broadcast dims into
  // runs: a run contributes ((idx / out_stride) % extent) * in_stride.
  LLVMValueRef acc = NULL;
  int32_t j = r - 1;
  while (j >= 0) {
    if (out_shape->dims[j] == 1 || in_dims[j] == 1) {
      --j;
      continue;
    }
    int32_t inner = j;
    int64_t extent = 1;
    while (j >= 0 && (out_shape->dims[j] == 1 || in_dims[j] != 1)) {
      extent *= out_shape->dims[j];
      --j;
    }
    // Dims 0..j that remain all have out dim 1 (or are broadcast): if none of
    // them is > 1 in the output, the quotient is already < extent.
    bool bounded = true;
    for (int32_t t = 0; t <= j; ++t) {
      if (out_shape->dims[t] > 1) bounded = false;
    }
    LLVMValueRef q = out_idx;
    if (out_strides[inner] != 1) {
      q = LLVMBuildUDiv(ctx->b, q, mlcc_emit_i64(ctx, out_strides[inner]), "bq");
    }
    if (!bounded) q = LLVMBuildURem(ctx->b, q, mlcc_emit_i64(ctx, extent), "br");
    if (in_strides_al[inner] != 1) {
      q = LLVMBuildNSWMul(ctx->b, q, mlcc_emit_i64(ctx, in_strides_al[inner]), "bs");
    }
    acc = acc ? LLVMBuildNSWAdd(ctx->b, acc, q, "bi") : q;
  }
  return acc ? acc : mlcc_emit_i64(ctx, 0);
}

//===----------------------------------------------------------------------===//
// Math
//===----------------------------------------------------------------------===//

LLVMValueRef mlcc_emit_intrinsic(mlcc_emit_ctx_t* ctx, const char* name,
                                 const LLVMValueRef* args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (id == 0 || n == 0) {
    mlcc_emit_fail(ctx, mlcc_make_status(MLCC_STATUS_INTERNAL, "unknown intrinsic %s", name));
    return n ? LLVMGetUndef(LLVMTypeOf(args[0])) : NULL;
  }
  LLVMTypeRef ov = LLVMTypeOf(args[0]);
  size_t n_ov = LLVMIntrinsicIsOverloaded(id) ? 1 : 0;
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, &ov, n_ov);
  LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, &ov, n_ov);
  return LLVMBuildCall2(ctx->b, fty, fn, (LLVMValueRef*)args, n, "");
}

LLVMValueRef mlcc_emit_fmuladd(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b,
                               LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  return mlcc_emit_intrinsic(ctx, "llvm.fmuladd", args, 3);
}

static LLVMValueRef libm_call(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef* args,
                              unsigned n) {
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  LLVMTypeRef params[2] = {t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(ctx->module, name);
  if (fn == NULL) {
    fn = LLVMAddFunction(ctx->module, name, fty);
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(ctx->llctx, kind, 0));
  }
  return LLVMBuildCall2(ctx->b, fty, fn, args, n, "");
}

LLVMValueRef mlcc_emit_libm(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x) {
  return libm_call(ctx, name, &x, 1);
}

LLVMValueRef mlcc_emit_libm2(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x,
                             LLVMValueRef y) {
  LLVMValueRef args[2] = {x, y};
  return libm_call(ctx, name, args, 2);
}

LLVMValueRef mlcc_emit_select(mlcc_emit_ctx_t* ctx, LLVMValueRef cond, LLVMValueRef a,
                              LLVMValueRef b) {
  return LLVMBuildSelect(ctx->b, cond, a, b, "sel");
}

static LLVMValueRef minmax(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, LLVMValueRef a,
                           LLVMValueRef b, bool is_max) {
  LLVMValueRef args[2] = {a, b};
  const char* name;
  if (mlcc_dtype_is_float(dtype)) {
    name = is_max ? "llvm.maxnum" : "llvm.minnum";
  } else if (mlcc_dtype_is_unsigned(dtype) || mlcc_dtype_is_bool(dtype)) {
    name = is_max ? "llvm.umax" : "llvm.umin";
  } else {
    name = is_max ? "llvm.smax" : "llvm.smin";
  }
  return mlcc_emit_intrinsic(ctx, name, args, 2);
}

LLVMValueRef mlcc_emit_min(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, LLVMValueRef a,
                           LLVMValueRef b) {
  return minmax(ctx, dtype, a, b, false);
}

LLVMValueRef mlcc_emit_max(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, LLVMValueRef a,
                           LLVMValueRef b) {
  return minmax(ctx, dtype, a, b, true);
}

LLVMValueRef mlcc_emit_cmp(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, mlcc_cmp_t cmp,
                           LLVMValueRef a, LLVMValueRef b) {
  if (mlcc_dtype_is_float(dtype)) {
    static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                           LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    return LLVMBuildFCmp(ctx->b, fp[cmp], a, b, "fcmp");
  }
  bool u = mlcc_dtype_is_unsigned(dtype) || mlcc_dtype_is_bool(dtype);
  static const LLVMIntPredicate sp[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntSLT,
                                        LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate up[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntULT,
                                        LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  return LLVMBuildICmp(ctx->b, u ? up[cmp] : sp[cmp], a, b, "icmp");
}

// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the pointwise ops outside the fusable elementwise family
// (elementwise.c): trig/hyperbolic functions, IsNaN, IsInf, Shrink, BitShift
// and BitCast (ops.def "Conformance ops"). Scalar loops through the emit.h
// toolkit, one output element per input element.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/misc.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

//===----------------------------------------------------------------------===//
// Unary: trig/hyperbolic, IsNaN, IsInf, Shrink
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_misc_unary(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = x->dtype;
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  float lambd = 0.5f, bias = 0.0f;
  int64_t pos = 1, neg = 1;
  if (node->op == MLCC_OP_SHRINK) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "lambd", 0.5f, &lambd));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "bias", 0.0f, &bias));
  }
  if (node->op == MLCC_OP_IS_INF) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "detect_positive", 1, &pos));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "detect_negative", 1, &neg));
  }
  if (n == 0) return mlcc_ok_status();
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "u");
  LLVMValueRef v = mlcc_emit_load(ctx, x, l.iv), r = NULL;
  LLVMBuilderRef b = ctx->b;
  switch (node->op) {
    case MLCC_OP_TAN: r = libm_dt(ctx, dt, "tan", v); break;
    case MLCC_OP_ASIN: r = libm_dt(ctx, dt, "asin", v); break;
    case MLCC_OP_ACOS: r = libm_dt(ctx, dt, "acos", v); break;
    case MLCC_OP_ATAN: r = libm_dt(ctx, dt, "atan", v); break;
    case MLCC_OP_SINH: r = libm_dt(ctx, dt, "sinh", v); break;
    case MLCC_OP_COSH: r = libm_dt(ctx, dt, "cosh", v); break;
    case MLCC_OP_ASINH: r = libm_dt(ctx, dt, "asinh", v); break;
    case MLCC_OP_ACOSH: r = libm_dt(ctx, dt, "acosh", v); break;
    case MLCC_OP_ATANH: r = libm_dt(ctx, dt, "atanh", v); break;
    case MLCC_OP_IS_NAN: r = LLVMBuildFCmp(b, LLVMRealUNO, v, v, "isnan"); break;
    case MLCC_OP_IS_INF: {
      LLVMValueRef inf = mlcc_emit_const(ctx, dt, INFINITY);
      LLVMValueRef p = LLVMBuildFCmp(b, LLVMRealOEQ, v, inf, "");
      LLVMValueRef m = LLVMBuildFCmp(b, LLVMRealOEQ, v, LLVMBuildFNeg(b, inf, ""), "");
      LLVMValueRef f = LLVMConstInt(ctx->t_i1, 0, 0);
      r = LLVMBuildOr(b, pos ? p : f, neg ? m : f, "isinf");
      break;
    }
    case MLCC_OP_SHRINK: {
      LLVMValueRef lo = mlcc_emit_const(ctx, dt, -lambd), hi = mlcc_emit_const(ctx, dt, lambd);
      LLVMValueRef bb = mlcc_emit_const(ctx, dt, bias), z = mlcc_emit_const(ctx, dt, 0);
      LLVMValueRef below = mlcc_emit_cmp(ctx, dt, MLCC_CMP_LT, v, lo);
      LLVMValueRef above = mlcc_emit_cmp(ctx, dt, MLCC_CMP_GT, v, hi);
      LLVMValueRef plus = mlcc_dtype_is_float(dt) ? LLVMBuildFAdd(b, v, bb, "") : LLVMBuildAdd(b, v, bb, "");
      LLVMValueRef minus = mlcc_dtype_is_float(dt) ? LLVMBuildFSub(b, v, bb, "") : LLVMBuildSub(b, v, bb, "");
      r = LLVMBuildSelect(b, below, plus, LLVMBuildSelect(b, above, minus, z, ""), "");
      break;
    }
    default:
      mlcc_emit_loop_end(ctx, &l);
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s is not a misc unary op",
                              mlcc_op_name(node->op));
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, r);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

static mlcc_status_t emit_misc_bitshift(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* s = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const char* dir = "LEFT";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "direction", "LEFT", &dir));
  bool left = strcmp(dir, "LEFT") == 0;
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  int64_t bits = (int64_t)mlcc_dtype_size(x->dtype) * 8;
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef a = mlcc_emit_load(ctx, x, mlcc_emit_broadcast_index(ctx, &y->shape, l.iv, &x->shape));
  LLVMValueRef c = mlcc_emit_load(ctx, s, mlcc_emit_broadcast_index(ctx, &y->shape, l.iv, &s->shape));
  LLVMTypeRef t = mlcc_emit_type(ctx, x->dtype);
  LLVMValueRef big = LLVMBuildICmp(ctx->b, LLVMIntUGE, c, LLVMConstInt(t, (unsigned long long)bits, 0), "");
  LLVMValueRef safe = LLVMBuildSelect(ctx->b, big, LLVMConstInt(t, 0, 0), c, "");
  LLVMValueRef r = left ? LLVMBuildShl(ctx->b, a, safe, "") : LLVMBuildLShr(ctx->b, a, safe, "");
  r = LLVMBuildSelect(ctx->b, big, LLVMConstInt(t, 0, 0), r, "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, r);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// BitCast (26)
//===----------------------------------------------------------------------===//

// y[i] = the bits of x[i] as the output type (same width; checked by infer).
static mlcc_status_t emit_misc_bitcast(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t n = mlcc_shape_numel_unchecked(&x->shape);
  if (n == 0) return mlcc_ok_status();
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "bc");
  LLVMValueRef v = LLVMBuildBitCast(ctx->b, mlcc_emit_load(ctx, x, l.iv),
                                    mlcc_emit_type(ctx, y->dtype), "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_misc_unary = {.emit = emit_misc_unary};
const mlcc_emitter_t mlcc_emit_misc_bitshift = {.emit = emit_misc_bitshift};
const mlcc_emitter_t mlcc_emit_misc_bitcast = {.emit = emit_misc_bitcast};

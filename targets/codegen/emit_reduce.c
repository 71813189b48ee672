// SPDX-License-Identifier: Apache-2.0
// Kernel emitters for the Reduce* family and ArgMax/ArgMin. A loop nest over
// the kept dims (outside) and the reduced dims (inside) accumulates into an
// mlcc_emit_var; each output element is stored once.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/emit.h"
#include "targets/codegen/emit_index.h"

static LLVMValueRef call1(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x) {
  return mlcc_emit_intrinsic(ctx, name, &x, 1);
}

// Extreme value of |dt| (lowest if |low|, else highest).
static LLVMValueRef extreme(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, bool low) {
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  if (mlcc_dtype_is_float(dt)) return LLVMConstReal(t, low ? -__builtin_inf() : __builtin_inf());
  unsigned bits = LLVMGetIntTypeWidth(t);
  unsigned long long all = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  if (mlcc_dtype_is_unsigned(dt)) return LLVMConstInt(t, low ? 0 : all, 0);
  unsigned long long smax = all >> 1;
  return LLVMConstInt(t, low ? (smax + 1) : smax, 0);
}

// a > b (or a < b when |less|) in |dt|'s order; NaN in |a| wins.
static LLVMValueRef cmp(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef a, LLVMValueRef b,
                        bool less, bool or_equal) {
  if (mlcc_dtype_is_float(dt)) {
    LLVMRealPredicate p = less ? (or_equal ? LLVMRealULE : LLVMRealULT)
                               : (or_equal ? LLVMRealUGE : LLVMRealUGT);
    return LLVMBuildFCmp(ctx->b, p, a, b, "");
  }
  bool u = mlcc_dtype_is_unsigned(dt);
  LLVMIntPredicate p;
  if (less) p = or_equal ? (u ? LLVMIntULE : LLVMIntSLE) : (u ? LLVMIntULT : LLVMIntSLT);
  else p = or_equal ? (u ? LLVMIntUGE : LLVMIntSGE) : (u ? LLVMIntUGT : LLVMIntSGT);
  return LLVMBuildICmp(ctx->b, p, a, b, "");
}

static bool is_int(mlcc_dtype_t dt) { return mlcc_dtype_is_int(dt); }
static bool is_f(mlcc_dtype_t dt) { return dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64; }

//===----------------------------------------------------------------------===//
// Reduce*
//===----------------------------------------------------------------------===//

// Reads the axes of |node| into |red| (true = reduced). UNIMPLEMENTED for a
// non-constant axes input; INVALID_MODEL for out-of-range or repeated axes.
static mlcc_status_t reduce_axes(const mlcc_node_t* node, int rank, bool* red) {
  const char* op = mlcc_op_name(node->op);
  int64_t noop = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "noop_with_empty_axes", 0, &noop));
  int64_t axes[MLCC_MAX_RANK];
  uint32_t n = 0;
  const mlcc_value_t* ax = mlcc_node_input(node, 1);
  if (ax) {
    if (ax->kind != MLCC_VALUE_CONSTANT || !ax->data) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: axes input must be constant", op);
    }
    int64_t cnt = mlcc_shape_numel_unchecked(&ax->shape);
    if (cnt > MLCC_MAX_RANK) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: too many axes (%lld)", op,
                              (long long)cnt);
    }
    for (int64_t i = 0; i < cnt; ++i) axes[n++] = mlcc_value_const_i64(ax, i);
  } else {
    const int64_t* v = NULL;
    uint32_t cnt = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &v, &cnt));
    if (cnt > MLCC_MAX_RANK) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: too many axes (%u)", op,
                              (unsigned)cnt);
    }
    for (uint32_t i = 0; i < cnt; ++i) axes[n++] = v[i];
  }
  for (int i = 0; i < rank; ++i) red[i] = n == 0 && !noop;
  for (uint32_t i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: axis %lld out of range for rank %d",
                              op, (long long)axes[i], rank);
    }
    red[a] = true;
  }
  return mlcc_ok_status();
}

// ReduceMean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare/Sum (ONNX 1-17;
// ReduceSum 13+ reads axes from constant input 1).
mlcc_status_t mlcc_emit_reduce(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_op_t op = node->op;
  mlcc_dtype_t dt = x->dtype;
  bool int_ok = op == MLCC_OP_REDUCE_SUM || op == MLCC_OP_REDUCE_MEAN || op == MLCC_OP_REDUCE_MAX ||
                op == MLCC_OP_REDUCE_MIN || op == MLCC_OP_REDUCE_PROD ||
                op == MLCC_OP_REDUCE_SUM_SQUARE || op == MLCC_OP_REDUCE_L1;
  if (!(is_f(dt) || (int_ok && is_int(dt))) || y->dtype != dt) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: unsupported dtype %s",
                            mlcc_op_name(op), mlcc_dtype_name(dt));
  }
  int rank = x->shape.rank;
  bool red[MLCC_MAX_RANK];
  MLCC_RETURN_IF_ERROR(reduce_axes(node, rank, red));
  int64_t stride[MLCC_MAX_RANK], ostride[MLCC_MAX_RANK];
  int64_t s = 1, os = 1, count = 1, out_numel = 1;
  for (int i = rank - 1; i >= 0; --i) {
    stride[i] = s;
    s *= x->shape.dims[i];
    ostride[i] = red[i] ? 0 : os;
    if (red[i]) count *= x->shape.dims[i];
    else { os *= x->shape.dims[i]; }
  }
  out_numel = os;
  if (mlcc_shape_numel_unchecked(&y->shape) != out_numel) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: output has %lld elements, want %lld",
                            mlcc_op_name(op), (long long)mlcc_shape_numel_unchecked(&y->shape),
                            (long long)out_numel);
  }
  bool fl = mlcc_dtype_is_float(dt);
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_loop_t kept[MLCC_MAX_RANK], rl[MLCC_MAX_RANK];
  int nk = 0, nr = 0;
  LLVMValueRef in_off = c64(ctx, 0), out_off = c64(ctx, 0);
  for (int i = 0; i < rank; ++i) {
    if (red[i]) continue;
    kept[nk] = mlcc_emit_for(ctx, 0, x->shape.dims[i], "d");
    in_off = imad(ctx, kept[nk].iv, stride[i], in_off);
    out_off = imad(ctx, kept[nk].iv, ostride[i], out_off);
    ++nk;
  }
  LLVMValueRef init;
  switch (op) {
    case MLCC_OP_REDUCE_MAX: init = extreme(ctx, dt, true); break;
    case MLCC_OP_REDUCE_MIN: init = extreme(ctx, dt, false); break;
    case MLCC_OP_REDUCE_PROD: init = mlcc_emit_const(ctx, dt, 1.0); break;
    default: init = mlcc_emit_const(ctx, dt, 0.0); break;
  }
  LLVMValueRef acc = mlcc_emit_var(ctx, t, init);
  LLVMValueRef off = in_off;
  for (int i = 0; i < rank; ++i) {
    if (!red[i]) continue;
    rl[nr] = mlcc_emit_for(ctx, 0, x->shape.dims[i], "r");
    off = imad(ctx, rl[nr].iv, stride[i], off);
    ++nr;
  }
  LLVMValueRef v = mlcc_emit_load(ctx, x, off);
  LLVMValueRef a = LLVMBuildLoad2(ctx->b, t, acc, "");
  LLVMValueRef nv;
  switch (op) {
    case MLCC_OP_REDUCE_MAX:
    case MLCC_OP_REDUCE_MIN:
      nv = LLVMBuildSelect(ctx->b, cmp(ctx, dt, v, a, op == MLCC_OP_REDUCE_MIN, false), v, a, "");
      break;
    case MLCC_OP_REDUCE_PROD:
      nv = fl ? LLVMBuildFMul(ctx->b, a, v, "") : LLVMBuildMul(ctx->b, a, v, "");
      break;
    case MLCC_OP_REDUCE_L1: {
      LLVMValueRef av;
      if (fl) av = call1(ctx, "llvm.fabs", v);
      else if (mlcc_dtype_is_unsigned(dt)) av = v;
      else av = LLVMBuildSelect(ctx->b, LLVMBuildICmp(ctx->b, LLVMIntSLT, v, LLVMConstInt(t, 0, 0), ""),
                                LLVMBuildNeg(ctx->b, v, ""), v, "");
      nv = fl ? LLVMBuildFAdd(ctx->b, a, av, "") : LLVMBuildAdd(ctx->b, a, av, "");
      break;
    }
    case MLCC_OP_REDUCE_L2:
    case MLCC_OP_REDUCE_SUM_SQUARE:
      nv = fl ? mlcc_emit_fmuladd(ctx, v, v, a)
              : LLVMBuildAdd(ctx->b, a, LLVMBuildMul(ctx->b, v, v, ""), "");
      break;
    case MLCC_OP_REDUCE_LOG_SUM_EXP:
      nv = LLVMBuildFAdd(ctx->b, a, mlcc_emit_fast_exp(ctx, v), "");
      break;
    default:  // Sum, Mean, LogSum
      nv = fl ? LLVMBuildFAdd(ctx->b, a, v, "") : LLVMBuildAdd(ctx->b, a, v, "");
      break;
  }
  LLVMBuildStore(ctx->b, nv, acc);
  for (int i = nr - 1; i >= 0; --i) mlcc_emit_loop_end(ctx, &rl[i]);
  LLVMValueRef r = LLVMBuildLoad2(ctx->b, t, acc, "");
  switch (op) {
    case MLCC_OP_REDUCE_MEAN:
      if (fl) r = LLVMBuildFDiv(ctx->b, r, mlcc_emit_const(ctx, dt, (double)count), "");
      else if (count > 0)
        r = mlcc_dtype_is_unsigned(dt) ? LLVMBuildUDiv(ctx->b, r, LLVMConstInt(t, (unsigned long long)count, 0), "")
                                       : LLVMBuildSDiv(ctx->b, r, LLVMConstInt(t, (unsigned long long)count, 0), "");
      break;
    case MLCC_OP_REDUCE_L2: r = call1(ctx, "llvm.sqrt", r); break;
    case MLCC_OP_REDUCE_LOG_SUM:
    case MLCC_OP_REDUCE_LOG_SUM_EXP: r = call1(ctx, "llvm.log", r); break;
    default: break;
  }
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, out_off, r));
  for (int i = nk - 1; i >= 0; --i) mlcc_emit_loop_end(ctx, &kept[i]);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

// ArgMax/ArgMin (ONNX 1-17): int64 index along |axis| (default 0) of the
// first (or, with select_last_index, last) extreme element.
mlcc_status_t mlcc_emit_argminmax(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = x->dtype;
  if (!(is_f(dt) || is_int(dt)) || y->dtype != MLCC_DTYPE_I64) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: unsupported dtype %s",
                            mlcc_op_name(node->op), mlcc_dtype_name(dt));
  }
  int64_t axis = 0, last = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "select_last_index", 0, &last));
  int rank = x->shape.rank;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: axis out of range for rank %d",
                            mlcc_op_name(node->op), rank);
  }
  int64_t outer = 1, len = x->shape.dims[axis], inner = 1;
  for (int i = 0; i < rank; ++i) {
    if (i < axis) outer *= x->shape.dims[i];
    else if (i > axis) inner *= x->shape.dims[i];
  }
  if (len == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: reduced axis has size 0",
                            mlcc_op_name(node->op));
  }
  bool is_min = node->op == MLCC_OP_ARG_MIN;
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_loop_t l_o = mlcc_emit_for(ctx, 0, outer, "o");
  mlcc_loop_t l_i = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef base = imad(ctx, l_o.iv, len * inner, l_i.iv);
  LLVMValueRef bv = mlcc_emit_var(ctx, t, mlcc_emit_load(ctx, x, base));
  LLVMValueRef bi = mlcc_emit_var(ctx, ctx->t_i64, c64(ctx, 0));
  mlcc_loop_t l_a = mlcc_emit_for(ctx, 1, len, "a");
  LLVMValueRef v = mlcc_emit_load(ctx, x, imad(ctx, l_a.iv, inner, base));
  LLVMValueRef cur = LLVMBuildLoad2(ctx->b, t, bv, "");
  LLVMValueRef better;
  if (mlcc_dtype_is_float(dt)) {
    // Ordered compares: NaN never replaces the current best.
    LLVMRealPredicate p = is_min ? (last ? LLVMRealOLE : LLVMRealOLT)
                                 : (last ? LLVMRealOGE : LLVMRealOGT);
    better = LLVMBuildFCmp(ctx->b, p, v, cur, "");
  } else {
    better = cmp(ctx, dt, v, cur, is_min, last != 0);
  }
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, better, v, cur, ""), bv);
  LLVMValueRef ci = LLVMBuildLoad2(ctx->b, ctx->t_i64, bi, "");
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, better, l_a.iv, ci, ""), bi);
  mlcc_emit_loop_end(ctx, &l_a);
  LLVMValueRef out = imad(ctx, l_o.iv, inner, l_i.iv);
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, out,
                                              LLVMBuildLoad2(ctx->b, ctx->t_i64, bi, "")));
  mlcc_emit_loop_end(ctx, &l_i);
  mlcc_emit_loop_end(ctx, &l_o);
  return mlcc_ok_status();
}

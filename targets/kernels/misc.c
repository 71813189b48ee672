// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the conformance ops (ops.def "Conformance ops"). Scalar
// loop nests through the emit.h toolkit; every output element is written
// once through mlcc_emit_store_output (scatters and TopK are written in
// gather form so that holds without scratch memory).
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
// Helpers
//===----------------------------------------------------------------------===//

// Normalizes a possibly negative index against |dim|: i < 0 ? i + dim : i.
static LLVMValueRef wrap_index(mlcc_emit_ctx_t* ctx, LLVMValueRef i, int64_t dim) {
  LLVMValueRef neg = icmp(ctx, LLVMIntSLT, i, c64(ctx, 0));
  return LLVMBuildSelect(ctx->b, neg, wadd(ctx, i, c64(ctx, dim)), i, "");
}
// Clamps an index into [0, dim) so a bad index never reads out of bounds.
static LLVMValueRef clamp_index(mlcc_emit_ctx_t* ctx, LLVMValueRef i, int64_t dim) {
  LLVMValueRef lo = icmp(ctx, LLVMIntSLT, i, c64(ctx, 0));
  i = LLVMBuildSelect(ctx->b, lo, c64(ctx, 0), i, "");
  LLVMValueRef hi = icmp(ctx, LLVMIntSGE, i, c64(ctx, dim));
  return LLVMBuildSelect(ctx->b, hi, c64(ctx, dim > 0 ? dim - 1 : 0), i, "");
}
static bool is_fp(mlcc_dtype_t dt) { return mlcc_dtype_is_float(dt); }

// Row-major strides of |s|.
static LLVMValueRef fconst(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, double v) {
  return mlcc_emit_const(ctx, dt, v);
}
static LLVMValueRef libm1(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, const char* base,
                          LLVMValueRef x) {
  char name[32];
  snprintf(name, sizeof(name), "%s%s", base, dt == MLCC_DTYPE_F64 ? "" : "f");
  return mlcc_emit_libm(ctx, name, x);
}

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
    case MLCC_OP_TAN: r = libm1(ctx, dt, "tan", v); break;
    case MLCC_OP_ASIN: r = libm1(ctx, dt, "asin", v); break;
    case MLCC_OP_ACOS: r = libm1(ctx, dt, "acos", v); break;
    case MLCC_OP_ATAN: r = libm1(ctx, dt, "atan", v); break;
    case MLCC_OP_SINH: r = libm1(ctx, dt, "sinh", v); break;
    case MLCC_OP_COSH: r = libm1(ctx, dt, "cosh", v); break;
    case MLCC_OP_ASINH: r = libm1(ctx, dt, "asinh", v); break;
    case MLCC_OP_ACOSH: r = libm1(ctx, dt, "acosh", v); break;
    case MLCC_OP_ATANH: r = libm1(ctx, dt, "atanh", v); break;
    case MLCC_OP_IS_NAN: r = LLVMBuildFCmp(b, LLVMRealUNO, v, v, "isnan"); break;
    case MLCC_OP_IS_INF: {
      LLVMValueRef inf = fconst(ctx, dt, INFINITY);
      LLVMValueRef p = LLVMBuildFCmp(b, LLVMRealOEQ, v, inf, "");
      LLVMValueRef m = LLVMBuildFCmp(b, LLVMRealOEQ, v, LLVMBuildFNeg(b, inf, ""), "");
      LLVMValueRef f = LLVMConstInt(ctx->t_i1, 0, 0);
      r = LLVMBuildOr(b, pos ? p : f, neg ? m : f, "isinf");
      break;
    }
    case MLCC_OP_SHRINK: {
      LLVMValueRef lo = fconst(ctx, dt, -lambd), hi = fconst(ctx, dt, lambd);
      LLVMValueRef bb = fconst(ctx, dt, bias), z = fconst(ctx, dt, 0);
      LLVMValueRef below = mlcc_emit_cmp(ctx, dt, MLCC_CMP_LT, v, lo);
      LLVMValueRef above = mlcc_emit_cmp(ctx, dt, MLCC_CMP_GT, v, hi);
      LLVMValueRef plus = is_fp(dt) ? LLVMBuildFAdd(b, v, bb, "") : LLVMBuildAdd(b, v, bb, "");
      LLVMValueRef minus = is_fp(dt) ? LLVMBuildFSub(b, v, bb, "") : LLVMBuildSub(b, v, bb, "");
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
// Trilu, CumSum, Hardmax
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_misc_trilu(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* kv = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t upper = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "upper", 1, &upper));
  int32_t r = x->shape.rank;
  int64_t rows = x->shape.dims[r - 2], cols = x->shape.dims[r - 1];
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  LLVMValueRef k = c64(ctx, 0);
  if (kv != NULL) k = load_i64(ctx, kv, c64(ctx, 0));
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef j = wremc(ctx, l.iv, cols);
  LLVMValueRef i = wremc(ctx, wdivc(ctx, l.iv, cols), rows);
  LLVMValueRef diff = wsub(ctx, j, i);  // j - i compared with k
  LLVMValueRef keep = upper ? icmp(ctx, LLVMIntSGE, diff, k) : icmp(ctx, LLVMIntSLE, diff, k);
  LLVMValueRef v = mlcc_emit_load(ctx, x, l.iv);
  v = LLVMBuildSelect(ctx->b, keep, v, mlcc_emit_const(ctx, x->dtype, 0), "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

// One CumSum (or CumProd: start at 1, multiply) loop nest along |axis|.
static mlcc_status_t cumsum_axis(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node, int32_t axis,
                                 bool exclusive, bool reverse) {
  const bool prod = node->op == MLCC_OP_CUM_PROD;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  int64_t outer = 1, len = x->shape.dims[axis], inner = 1;
  for (int32_t d = 0; d < x->shape.rank; ++d) {
    if (d < axis) outer *= x->shape.dims[d];
    else if (d > axis) inner *= x->shape.dims[d];
  }
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, outer, "o");
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef acc = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, dt, prod ? 1 : 0));
  LLVMBuildStore(ctx->b, mlcc_emit_const(ctx, dt, prod ? 1 : 0), acc);
  mlcc_loop_t la = mlcc_emit_for(ctx, 0, len, "a");
  LLVMValueRef a = reverse ? wsub(ctx, c64(ctx, len - 1), la.iv) : la.iv;
  LLVMValueRef idx = wmad(ctx, wmad(ctx, lo.iv, len, a), inner, li.iv);
  LLVMValueRef v = mlcc_emit_load(ctx, x, idx);
  LLVMValueRef cur = load_var(ctx, t, acc);
  LLVMValueRef nxt = prod ? (is_fp(dt) ? LLVMBuildFMul(ctx->b, cur, v, "")
                                     : LLVMBuildMul(ctx->b, cur, v, ""))
                          : (is_fp(dt) ? LLVMBuildFAdd(ctx->b, cur, v, "")
                                       : LLVMBuildAdd(ctx->b, cur, v, ""));
  LLVMBuildStore(ctx->b, nxt, acc);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, idx, exclusive ? cur : nxt);
  mlcc_emit_loop_end(ctx, &la);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lo);
  return st;
}

static mlcc_status_t emit_misc_cumsum(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* av = mlcc_node_input(node, 1);
  int64_t excl = 0, rev = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "exclusive", 0, &excl));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "reverse", 0, &rev));
  int32_t rank = x->shape.rank;
  if (mlcc_shape_numel_unchecked(&x->shape) == 0) return mlcc_ok_status();
  if (av->kind == MLCC_VALUE_CONSTANT && av->data != NULL && mlcc_emit_ptr(ctx, av) == NULL) {
    int64_t a = mlcc_value_const_i64(av, 0);
    if (a < 0) a += rank;
    return cumsum_axis(ctx, node, (int32_t)a, excl != 0, rev != 0);
  }
  // Axis fed at run time: one guarded loop nest per possible axis; an
  // out-of-range axis leaves the output as zeros... written once below.
  LLVMValueRef a = load_i64(ctx, av, c64(ctx, 0));
  a = wrap_index(ctx, a, rank);
  LLVMValueRef valid = LLVMBuildAnd(ctx->b, icmp(ctx, LLVMIntSGE, a, c64(ctx, 0)),
                                    icmp(ctx, LLVMIntSLT, a, c64(ctx, rank)), "");
  a = LLVMBuildSelect(ctx->b, valid, a, c64(ctx, 0), "");
  mlcc_status_t st = mlcc_ok_status();
  for (int32_t d = 0; d < rank && mlcc_status_is_ok(st); ++d) {
    mlcc_if_t br = mlcc_emit_if_begin(ctx, icmp(ctx, LLVMIntEQ, a, c64(ctx, d)));
    st = cumsum_axis(ctx, node, d, excl != 0, rev != 0);
    mlcc_emit_if_end(ctx, &br);
  }
  return st;
}

static mlcc_status_t emit_misc_hardmax(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  int32_t rank = x->shape.rank;
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", node->opset >= 13 ? -1 : 1, &axis));
  if (axis < 0) axis += rank;
  int64_t outer = 1, len = 1, inner = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (node->opset < 13) {
      if (d < axis) outer *= x->shape.dims[d];
      else len *= x->shape.dims[d];
    } else if (d < axis) {
      outer *= x->shape.dims[d];
    } else if (d == axis) {
      len = x->shape.dims[d];
    } else {
      inner *= x->shape.dims[d];
    }
  }
  if (outer * len * inner == 0) return mlcc_ok_status();
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, outer, "o");
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef base = wmad(ctx, lo.iv, len * inner, li.iv);
  LLVMValueRef bv = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, dt, 0));
  LLVMBuildStore(ctx->b, mlcc_emit_load(ctx, x, base), bv);
  LLVMValueRef bi = mlcc_emit_var(ctx, ctx->t_i64, c64(ctx, 0));
  LLVMBuildStore(ctx->b, c64(ctx, 0), bi);
  mlcc_loop_t la = mlcc_emit_for(ctx, 1, len, "a");
  LLVMValueRef v = mlcc_emit_load(ctx, x, wmad(ctx, la.iv, inner, base));
  LLVMValueRef cur = load_var(ctx, t, bv);
  LLVMValueRef better = LLVMBuildFCmp(ctx->b, LLVMRealOGT, v, cur, "");
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, better, v, cur, ""), bv);
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, better, la.iv, load_var(ctx, ctx->t_i64, bi), ""), bi);
  mlcc_emit_loop_end(ctx, &la);
  LLVMValueRef best = load_var(ctx, ctx->t_i64, bi);
  mlcc_loop_t lw = mlcc_emit_for(ctx, 0, len, "w");
  LLVMValueRef hit = icmp(ctx, LLVMIntEQ, lw.iv, best);
  LLVMValueRef one = LLVMBuildSelect(ctx->b, hit, fconst(ctx, dt, 1), fconst(ctx, dt, 0), "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, wmad(ctx, lw.iv, inner, base), one);
  mlcc_emit_loop_end(ctx, &lw);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lo);
  return st;
}

//===----------------------------------------------------------------------===//
// DepthToSpace / SpaceToDepth, EyeLike, CastLike
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_misc_depth_space(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t bs = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "blocksize", 1, &bs));
  const char* mode = "DCR";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "DCR", &mode));
  bool crd = strcmp(mode, "CRD") == 0;
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef o[4], in[4];
  mlcc_emit_unravel(ctx, &y->shape, l.iv, o);
  in[0] = o[0];
  if (node->op == MLCC_OP_DEPTH_TO_SPACE) {
    int64_t cy = y->shape.dims[1];
    LLVMValueRef bh = wremc(ctx, o[2], bs), bw = wremc(ctx, o[3], bs);
    LLVMValueRef blk = wmad(ctx, bh, bs, bw);
    in[1] = crd ? wmad(ctx, o[1], bs * bs, blk) : wmad(ctx, blk, cy, o[1]);
    in[2] = wdivc(ctx, o[2], bs);
    in[3] = wdivc(ctx, o[3], bs);
  } else {
    int64_t cx = x->shape.dims[1];
    LLVMValueRef c = wremc(ctx, o[1], cx), blk = wdivc(ctx, o[1], cx);
    in[1] = c;
    in[2] = wmad(ctx, o[2], bs, wdivc(ctx, blk, bs));
    in[3] = wmad(ctx, o[3], bs, wremc(ctx, blk, bs));
  }
  LLVMValueRef v = mlcc_emit_load(ctx, x, mlcc_emit_ravel(ctx, &x->shape, in));
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

static mlcc_status_t emit_misc_eyelike(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t k = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "k", 0, &k));
  int64_t cols = y->shape.dims[1];
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef i = wdivc(ctx, l.iv, cols), j = wremc(ctx, l.iv, cols);
  LLVMValueRef hit = icmp(ctx, LLVMIntEQ, wsub(ctx, j, i), c64(ctx, k));
  LLVMValueRef v = LLVMBuildSelect(ctx->b, hit, mlcc_emit_const(ctx, y->dtype, 1),
                                   mlcc_emit_const(ctx, y->dtype, 0), "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

static mlcc_status_t emit_misc_castlike(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef v = mlcc_emit_convert(ctx, mlcc_emit_load(ctx, x, l.iv), x->dtype, y->dtype);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_misc_loss(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* t = mlcc_node_input(node, 1);
  const mlcc_value_t* w = mlcc_node_input(node, 2);
  const mlcc_value_t* lp_out = mlcc_node_output(node, 1);
  bool sce = node->op == MLCC_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
  mlcc_dtype_t dt = x->dtype;
  const char* red = "mean";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "reduction", "mean", &red));
  bool none = strcmp(red, "none") == 0, mean = strcmp(red, "mean") == 0;
  const mlcc_attr_t* ii_attr = mlcc_node_attr(node, "ignore_index");
  bool has_ii = ii_attr != NULL && ii_attr->kind == MLCC_ATTR_INT;
  int64_t ii = has_ii ? ii_attr->i : 0;
  int64_t N = x->shape.dims[0], C = x->shape.dims[1], D = 1;
  for (int32_t d = 2; d < x->shape.rank; ++d) D *= x->shape.dims[d];
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  // Accumulate in double for the reductions (stable and target-independent).
  LLVMValueRef acc = mlcc_emit_var(ctx, ctx->t_f64, LLVMConstReal(ctx->t_f64, 0));
  LLVMValueRef wacc = mlcc_emit_var(ctx, ctx->t_f64, LLVMConstReal(ctx->t_f64, 0));
  LLVMBuildStore(ctx->b, LLVMConstReal(ctx->t_f64, 0), acc);
  LLVMBuildStore(ctx->b, LLVMConstReal(ctx->t_f64, 0), wacc);
  mlcc_status_t st = mlcc_ok_status();
  if (N * D > 0 && C > 0) {
    mlcc_loop_t ln = mlcc_emit_for(ctx, 0, N, "n");
    mlcc_loop_t ld = mlcc_emit_for(ctx, 0, D, "d");
    LLVMValueRef row = wmulc(ctx, ln.iv, C * D);  // x[n, 0, d] = row + d
    LLVMValueRef base = wadd(ctx, row, ld.iv);
    LLVMValueRef lse = NULL;
    if (sce) {
      LLVMValueRef mx = mlcc_emit_var(ctx, ft, fconst(ctx, dt, -INFINITY));
      LLVMBuildStore(ctx->b, fconst(ctx, dt, -INFINITY), mx);
      mlcc_loop_t lc = mlcc_emit_for(ctx, 0, C, "c");
      LLVMValueRef v = mlcc_emit_load(ctx, x, wmad(ctx, lc.iv, D, base));
      LLVMBuildStore(ctx->b, mlcc_emit_max(ctx, dt, load_var(ctx, ft, mx), v), mx);
      mlcc_emit_loop_end(ctx, &lc);
      LLVMValueRef m = load_var(ctx, ft, mx);
      LLVMValueRef se = mlcc_emit_var(ctx, ft, fconst(ctx, dt, 0));
      LLVMBuildStore(ctx->b, fconst(ctx, dt, 0), se);
      mlcc_loop_t lc2 = mlcc_emit_for(ctx, 0, C, "c");
      LLVMValueRef v2 = mlcc_emit_load(ctx, x, wmad(ctx, lc2.iv, D, base));
      LLVMValueRef e = mlcc_emit_intrinsic(ctx, "llvm.exp", (LLVMValueRef[]){LLVMBuildFSub(ctx->b, v2, m, "")}, 1);
      LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, load_var(ctx, ft, se), e, ""), se);
      mlcc_emit_loop_end(ctx, &lc2);
      LLVMValueRef ls = mlcc_emit_intrinsic(ctx, "llvm.log", (LLVMValueRef[]){load_var(ctx, ft, se)}, 1);
      lse = LLVMBuildFAdd(ctx->b, m, ls, "lse");
      if (lp_out != NULL) {
        mlcc_loop_t lc3 = mlcc_emit_for(ctx, 0, C, "c");
        LLVMValueRef i3 = wmad(ctx, lc3.iv, D, base);
        LLVMValueRef v3 = LLVMBuildFSub(ctx->b, mlcc_emit_load(ctx, x, i3), lse, "");
        st = mlcc_emit_store_output(ctx, node, 1, i3, v3);
        mlcc_emit_loop_end(ctx, &lc3);
      }
    }
    LLVMValueRef tgt = load_i64(ctx, t, wmad(ctx, ln.iv, D, ld.iv));
    LLVMValueRef valid = has_ii ? icmp(ctx, LLVMIntNE, tgt, c64(ctx, ii))
                                : LLVMConstInt(ctx->t_i1, 1, 0);
    LLVMValueRef tc = clamp_index(ctx, tgt, C);
    LLVMValueRef xv = mlcc_emit_load(ctx, x, wmad(ctx, tc, D, base));
    if (sce) xv = LLVMBuildFSub(ctx->b, xv, lse, "");
    LLVMValueRef wv = w != NULL ? mlcc_emit_load(ctx, w, tc) : fconst(ctx, dt, 1);
    wv = LLVMBuildSelect(ctx->b, valid, wv, fconst(ctx, dt, 0), "");
    LLVMValueRef loss = LLVMBuildFNeg(ctx->b, LLVMBuildFMul(ctx->b, xv, wv, ""), "");
    loss = LLVMBuildSelect(ctx->b, valid, loss, fconst(ctx, dt, 0), "");
    if (none) {
      mlcc_status_t s2 = mlcc_emit_store_output(ctx, node, 0, wmad(ctx, ln.iv, D, ld.iv), loss);
      st = mlcc_status_join(st, s2);
    } else {
      LLVMValueRef ld64 = dt == MLCC_DTYPE_F64 ? loss : LLVMBuildFPExt(ctx->b, loss, ctx->t_f64, "");
      LLVMValueRef wd64 = dt == MLCC_DTYPE_F64 ? wv : LLVMBuildFPExt(ctx->b, wv, ctx->t_f64, "");
      LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, load_var(ctx, ctx->t_f64, acc), ld64, ""), acc);
      LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, load_var(ctx, ctx->t_f64, wacc), wd64, ""), wacc);
    }
    mlcc_emit_loop_end(ctx, &ld);
    mlcc_emit_loop_end(ctx, &ln);
  }
  if (!none && mlcc_status_is_ok(st)) {
    LLVMValueRef r = load_var(ctx, ctx->t_f64, acc);
    if (mean) r = LLVMBuildFDiv(ctx->b, r, load_var(ctx, ctx->t_f64, wacc), "");
    if (dt != MLCC_DTYPE_F64) r = LLVMBuildFPTrunc(ctx->b, r, ft, "");
    st = mlcc_emit_store_output(ctx, node, 0, c64(ctx, 0), r);
  }
  return st;
}

//===----------------------------------------------------------------------===//
// GatherND, ScatterElements/Scatter, ScatterND
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_misc_gathernd(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* ix = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t b = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "batch_dims", 0, &b));
  int32_t q = ix->shape.rank, r = x->shape.rank;
  int64_t k = ix->shape.dims[q - 1];
  int64_t inner = 1, per_batch_idx = 1, batch_stride = 1;
  for (int64_t d = b + k; d < r; ++d) inner *= x->shape.dims[d];
  for (int64_t d = b; d < q - 1; ++d) per_batch_idx *= ix->shape.dims[d];
  for (int64_t d = b; d < r; ++d) batch_stride *= x->shape.dims[d];
  int64_t xs[MLCC_MAX_RANK];
  strides_of(&x->shape, xs);
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef u = wdivc(ctx, l.iv, inner), rr = wremc(ctx, l.iv, inner);
  LLVMValueRef off = wmad(ctx, wdivc(ctx, u, per_batch_idx), batch_stride, rr);
  for (int64_t i = 0; i < k; ++i) {
    LLVMValueRef iv = load_i64(ctx, ix, wmad(ctx, u, k, c64(ctx, i)));
    int64_t dim = x->shape.dims[b + i];
    iv = clamp_index(ctx, wrap_index(ctx, iv, dim), dim);
    off = wmad(ctx, iv, xs[b + i], off);
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, mlcc_emit_load(ctx, x, off));
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

// Combines |cur| with |upd| per the 'reduction' attribute.
static LLVMValueRef combine(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, const char* red,
                            LLVMValueRef cur, LLVMValueRef upd) {
  bool fp = is_fp(dt);
  if (strcmp(red, "add") == 0) {
    return fp ? LLVMBuildFAdd(ctx->b, cur, upd, "") : LLVMBuildAdd(ctx->b, cur, upd, "");
  }
  if (strcmp(red, "mul") == 0) {
    return fp ? LLVMBuildFMul(ctx->b, cur, upd, "") : LLVMBuildMul(ctx->b, cur, upd, "");
  }
  if (strcmp(red, "max") == 0) return mlcc_emit_max(ctx, dt, cur, upd);
  if (strcmp(red, "min") == 0) return mlcc_emit_min(ctx, dt, cur, upd);
  return upd;
}

// Gather form: out[o] = data[o] combined, in update order, with every update
// whose target is o. O(numel(out) * numel(updates)).
static mlcc_status_t emit_misc_scatter_elements(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* ix = mlcc_node_input(node, 1);
  const mlcc_value_t* up = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis));
  int32_t r = x->shape.rank;
  if (axis < 0) axis += r;
  const char* red = "none";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "reduction", "none", &red));
  int64_t xs[MLCC_MAX_RANK];
  strides_of(&x->shape, xs);
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  int64_t m = mlcc_shape_numel_unchecked(&ix->shape);
  if (n == 0) return mlcc_ok_status();
  LLVMTypeRef t = mlcc_emit_type(ctx, x->dtype);
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "o");
  LLVMValueRef acc = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, x->dtype, 0));
  LLVMBuildStore(ctx->b, mlcc_emit_load(ctx, x, l.iv), acc);
  if (m > 0) {
    mlcc_loop_t lu = mlcc_emit_for(ctx, 0, m, "u");
    LLVMValueRef ji[MLCC_MAX_RANK];
    mlcc_emit_unravel(ctx, &ix->shape, lu.iv, ji);
    LLVMValueRef iv = wrap_index(ctx, load_i64(ctx, ix, lu.iv), x->shape.dims[axis]);
    LLVMValueRef target = c64(ctx, 0);
    for (int32_t d = 0; d < r; ++d) target = wmad(ctx, d == axis ? iv : ji[d], xs[d], target);
    LLVMValueRef hit = icmp(ctx, LLVMIntEQ, target, l.iv);
    LLVMValueRef cur = load_var(ctx, t, acc);
    LLVMValueRef nv = combine(ctx, x->dtype, red, cur, mlcc_emit_load(ctx, up, lu.iv));
    LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, hit, nv, cur, ""), acc);
    mlcc_emit_loop_end(ctx, &lu);
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, load_var(ctx, t, acc));
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

static mlcc_status_t emit_misc_scatternd(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* ix = mlcc_node_input(node, 1);
  const mlcc_value_t* up = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const char* red = "none";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "reduction", "none", &red));
  int32_t q = ix->shape.rank, r = x->shape.rank;
  int64_t k = ix->shape.dims[q - 1];
  int64_t slice = 1, rows = 1;
  for (int64_t d = k; d < r; ++d) slice *= x->shape.dims[d];
  for (int32_t d = 0; d < q - 1; ++d) rows *= ix->shape.dims[d];
  int64_t xs[MLCC_MAX_RANK];
  strides_of(&x->shape, xs);
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  LLVMTypeRef t = mlcc_emit_type(ctx, x->dtype);
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "o");
  LLVMValueRef acc = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, x->dtype, 0));
  LLVMBuildStore(ctx->b, mlcc_emit_load(ctx, x, l.iv), acc);
  if (rows > 0 && slice > 0) {
    mlcc_loop_t lu = mlcc_emit_for(ctx, 0, rows, "u");
    LLVMValueRef base = c64(ctx, 0);
    for (int64_t i = 0; i < k; ++i) {
      LLVMValueRef iv = load_i64(ctx, ix, wmad(ctx, lu.iv, k, c64(ctx, i)));
      base = wmad(ctx, wrap_index(ctx, iv, x->shape.dims[i]), xs[i], base);
    }
    LLVMValueRef rel = wsub(ctx, l.iv, base);
    LLVMValueRef hit = LLVMBuildAnd(ctx->b, icmp(ctx, LLVMIntSGE, rel, c64(ctx, 0)),
                                    icmp(ctx, LLVMIntSLT, rel, c64(ctx, slice)), "");
    LLVMValueRef safe = LLVMBuildSelect(ctx->b, hit, rel, c64(ctx, 0), "");
    LLVMValueRef cur = load_var(ctx, t, acc);
    LLVMValueRef nv = combine(ctx, x->dtype, red, cur,
                              mlcc_emit_load(ctx, up, wmad(ctx, lu.iv, slice, safe)));
    LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, hit, nv, cur, ""), acc);
    mlcc_emit_loop_end(ctx, &lu);
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, load_var(ctx, t, acc));
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// OneHot, TopK
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_misc_onehot(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* ix = mlcc_node_input(node, 0);
  const mlcc_value_t* vals = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t axis = -1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis));
  if (axis < 0) axis += y->shape.rank;
  int64_t depth = y->shape.dims[axis], inner = 1;
  for (int32_t d = (int32_t)axis + 1; d < y->shape.rank; ++d) inner *= y->shape.dims[d];
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  LLVMValueRef off = mlcc_emit_load(ctx, vals, c64(ctx, 0));
  LLVMValueRef on = mlcc_emit_load(ctx, vals, c64(ctx, 1));
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef outer = wdivc(ctx, l.iv, depth * inner);
  LLVMValueRef d = wremc(ctx, wdivc(ctx, l.iv, inner), depth);
  LLVMValueRef in = wremc(ctx, l.iv, inner);
  LLVMValueRef iv = mlcc_emit_convert(ctx, mlcc_emit_load(ctx, ix, wmad(ctx, outer, inner, in)),
                                      ix->dtype, MLCC_DTYPE_I64);
  iv = wrap_index(ctx, iv, depth);
  LLVMValueRef hit = icmp(ctx, LLVMIntEQ, iv, d);
  mlcc_status_t st =
      mlcc_emit_store_output(ctx, node, 0, l.iv, LLVMBuildSelect(ctx->b, hit, on, off, ""));
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

// Rank form: element i of a row goes to position rank(i) = the number of
// elements ordered before it (ties: lower index first) when rank(i) < K.
static mlcc_status_t emit_misc_topk(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = x->dtype;
  int64_t axis = -1, largest = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "largest", 1, &largest));
  int32_t rank = x->shape.rank;
  if (axis < 0) axis += rank;
  int64_t outer = 1, len = x->shape.dims[axis], inner = 1, k = y->shape.dims[axis];
  for (int32_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x->shape.dims[d];
    else if (d > axis) inner *= x->shape.dims[d];
  }
  if (outer * inner * k == 0) return mlcc_ok_status();
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, outer, "o");
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef base = wmad(ctx, lo.iv, len * inner, li.iv);
  LLVMValueRef obase = wmad(ctx, lo.iv, k * inner, li.iv);
  mlcc_loop_t la = mlcc_emit_for(ctx, 0, len, "a");
  LLVMValueRef va = mlcc_emit_load(ctx, x, wmad(ctx, la.iv, inner, base));
  LLVMValueRef cnt = mlcc_emit_var(ctx, ctx->t_i64, c64(ctx, 0));
  LLVMBuildStore(ctx->b, c64(ctx, 0), cnt);
  mlcc_loop_t lb = mlcc_emit_for(ctx, 0, len, "b");
  LLVMValueRef vb = mlcc_emit_load(ctx, x, wmad(ctx, lb.iv, inner, base));
  LLVMValueRef strictly = mlcc_emit_cmp(ctx, dt, largest ? MLCC_CMP_GT : MLCC_CMP_LT, vb, va);
  LLVMValueRef tie = LLVMBuildAnd(ctx->b, mlcc_emit_cmp(ctx, dt, MLCC_CMP_EQ, vb, va),
                                  icmp(ctx, LLVMIntSLT, lb.iv, la.iv), "");
  LLVMValueRef before = LLVMBuildOr(ctx->b, strictly, tie, "");
  LLVMValueRef c = load_var(ctx, ctx->t_i64, cnt);
  LLVMBuildStore(ctx->b, wadd(ctx, c, LLVMBuildZExt(ctx->b, before, ctx->t_i64, "")), cnt);
  mlcc_emit_loop_end(ctx, &lb);
  LLVMValueRef pos = load_var(ctx, ctx->t_i64, cnt);
  mlcc_if_t br = mlcc_emit_if_begin(ctx, icmp(ctx, LLVMIntSLT, pos, c64(ctx, k)));
  LLVMValueRef oi = wmad(ctx, pos, inner, obase);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, oi, va);
  if (mlcc_status_is_ok(st)) st = mlcc_emit_store_output(ctx, node, 1, oi, la.iv);
  mlcc_emit_if_end(ctx, &br);
  mlcc_emit_loop_end(ctx, &la);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lo);
  return st;
}

//===----------------------------------------------------------------------===//
// LRN, MeanVarianceNormalization
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_misc_lrn(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
  int64_t size = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1e-4f, &alpha));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "beta", 0.75f, &beta));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "bias", 1.0f, &bias));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "size", 1, &size));
  int64_t C = x->shape.dims[1], inner = 1;
  for (int32_t d = 2; d < x->shape.rank; ++d) inner *= x->shape.dims[d];
  int64_t n = mlcc_shape_numel_unchecked(&x->shape);
  if (n == 0) return mlcc_ok_status();
  int64_t lo_off = (size - 1) / 2, hi_off = size - 1 - lo_off;
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef c = wremc(ctx, wdivc(ctx, l.iv, inner), C);
  LLVMValueRef sq = mlcc_emit_var(ctx, t, fconst(ctx, dt, 0));
  LLVMBuildStore(ctx->b, fconst(ctx, dt, 0), sq);
  mlcc_loop_t lw = mlcc_emit_for(ctx, -lo_off, hi_off + 1, "w");
  LLVMValueRef cc = wadd(ctx, c, lw.iv);
  LLVMValueRef ok = LLVMBuildAnd(ctx->b, icmp(ctx, LLVMIntSGE, cc, c64(ctx, 0)),
                                 icmp(ctx, LLVMIntSLT, cc, c64(ctx, C)), "");
  mlcc_if_t br = mlcc_emit_if_begin(ctx, ok);
  LLVMValueRef v = mlcc_emit_load(ctx, x, wmad(ctx, lw.iv, inner, l.iv));
  LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, v, v, load_var(ctx, t, sq)), sq);
  mlcc_emit_if_end(ctx, &br);
  mlcc_emit_loop_end(ctx, &lw);
  LLVMValueRef den = mlcc_emit_fmuladd(ctx, fconst(ctx, dt, (double)alpha / (double)size),
                                       load_var(ctx, t, sq), fconst(ctx, dt, bias));
  LLVMValueRef pw = mlcc_emit_intrinsic(ctx, "llvm.pow", (LLVMValueRef[]){den, fconst(ctx, dt, beta)}, 2);
  LLVMValueRef r = LLVMBuildFDiv(ctx->b, mlcc_emit_load(ctx, x, l.iv), pw, "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, r);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

// y = (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over 'axes'. Two passes:
// statistics per kept-coordinate group, then the normalized values.
static mlcc_status_t emit_misc_mvn(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  const int64_t* axes = NULL;
  uint32_t na = 0;
  static const int64_t kDefault[3] = {0, 2, 3};
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &axes, &na));
  if (axes == NULL) {
    axes = kDefault;
    na = 3;
  }
  int32_t r = x->shape.rank;
  bool red[MLCC_MAX_RANK] = {false};
  for (uint32_t i = 0; i < na; ++i) red[axes[i] < 0 ? axes[i] + r : axes[i]] = true;
  // Kept shape (reduced dims set to 1) and reduced shape (kept dims to 1).
  mlcc_shape_t keep = x->shape, rs = x->shape;
  for (int32_t d = 0; d < r; ++d) {
    if (red[d]) keep.dims[d] = 1;
    else rs.dims[d] = 1;
  }
  int64_t nk = mlcc_shape_numel_unchecked(&keep), nr = mlcc_shape_numel_unchecked(&rs);
  if (nk * nr == 0) return mlcc_ok_status();
  int64_t xs[MLCC_MAX_RANK];
  strides_of(&x->shape, xs);
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_status_t st = mlcc_ok_status();
  mlcc_loop_t lk = mlcc_emit_for(ctx, 0, nk, "k");
  LLVMValueRef ki[MLCC_MAX_RANK];
  mlcc_emit_unravel(ctx, &keep, lk.iv, ki);
  LLVMValueRef kbase = c64(ctx, 0);
  for (int32_t d = 0; d < r; ++d) kbase = wmad(ctx, ki[d], xs[d], kbase);
  // Statistics of float32/float16/bfloat16 (computed as float) accumulate
  // and combine in double: sums over long axes keep ~eps accuracy, and
  // E[x^2] - E[x]^2 does not cancel away the variance of a large mean.
  bool wide = t == ctx->t_f32;
  LLVMTypeRef at = wide ? ctx->t_f64 : t;  // statistics type
  LLVMValueRef s1 = mlcc_emit_var(ctx, at, LLVMConstReal(at, 0.0));
  LLVMValueRef s2 = mlcc_emit_var(ctx, at, LLVMConstReal(at, 0.0));
  LLVMBuildStore(ctx->b, LLVMConstReal(at, 0.0), s1);
  LLVMBuildStore(ctx->b, LLVMConstReal(at, 0.0), s2);
  for (int pass = 0; pass < 2; ++pass) {
    LLVMValueRef mean = NULL, den = NULL;
    if (pass == 1) {
      LLVMValueRef inv = LLVMConstReal(at, 1.0 / (double)nr);
      mean = LLVMBuildFMul(ctx->b, load_var(ctx, at, s1), inv, "");
      LLVMValueRef ex2 = LLVMBuildFMul(ctx->b, load_var(ctx, at, s2), inv, "");
      LLVMValueRef var = LLVMBuildFSub(ctx->b, ex2, LLVMBuildFMul(ctx->b, mean, mean, ""), "");
      LLVMValueRef sd = mlcc_emit_intrinsic(ctx, "llvm.sqrt", &var, 1);
      den = LLVMBuildFAdd(ctx->b, sd, LLVMConstReal(at, 1e-9), "");
      if (wide) {
        mean = LLVMBuildFPTrunc(ctx->b, mean, t, "");
        den = LLVMBuildFPTrunc(ctx->b, den, t, "");
      }
    }
    mlcc_loop_t lr = mlcc_emit_for(ctx, 0, nr, "r");
    LLVMValueRef ri[MLCC_MAX_RANK];
    mlcc_emit_unravel(ctx, &rs, lr.iv, ri);
    LLVMValueRef idx = kbase;
    for (int32_t d = 0; d < r; ++d) idx = wmad(ctx, ri[d], xs[d], idx);
    LLVMValueRef v = mlcc_emit_load(ctx, x, idx);
    if (pass == 0) {
      LLVMValueRef w = wide ? LLVMBuildFPExt(ctx->b, v, at, "") : v;
      LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, load_var(ctx, at, s1), w, ""), s1);
      LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, w, w, load_var(ctx, at, s2)), s2);
    } else {
      LLVMValueRef yv = LLVMBuildFDiv(ctx->b, LLVMBuildFSub(ctx->b, v, mean, ""), den, "");
      st = mlcc_emit_store_output(ctx, node, 0, idx, yv);
    }
    mlcc_emit_loop_end(ctx, &lr);
  }
  mlcc_emit_loop_end(ctx, &lk);
  return st;
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

// One loop over the output; nested loops over the summed labels; the product
// of the operands (size-1 ellipsis dims broadcast) accumulated in a variable.
static mlcc_status_t emit_misc_einsum(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = y->dtype;
  mlcc_einsum_t e;
  MLCC_RETURN_IF_ERROR(mlcc_einsum_parse(node, &e));
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  LLVMValueRef lv[MLCC_EINSUM_MAX_LABELS] = {0};
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef oi[MLCC_MAX_RANK];
  if (y->shape.rank > 0) mlcc_emit_unravel(ctx, &y->shape, l.iv, oi);
  for (int32_t d = 0; d < e.out_rank; ++d) lv[e.out_labels[d]] = oi[d];
  LLVMValueRef acc = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, dt, 0));
  LLVMBuildStore(ctx->b, mlcc_emit_const(ctx, dt, 0), acc);
  mlcc_loop_t sl[MLCC_EINSUM_MAX_LABELS];
  bool empty = false;
  for (int32_t s = 0; s < e.n_sum; ++s) empty |= e.label_dim[e.sum_labels[s]] == 0;
  if (!empty) {
    for (int32_t s = 0; s < e.n_sum; ++s) {
      sl[s] = mlcc_emit_for(ctx, 0, e.label_dim[e.sum_labels[s]], "s");
      lv[e.sum_labels[s]] = sl[s].iv;
    }
    LLVMValueRef prod = NULL;
    for (uint32_t i = 0; i < e.n_inputs; ++i) {
      const mlcc_value_t* in = node->inputs[i];
      int64_t st_[MLCC_MAX_RANK];
      strides_of(&in->shape, st_);
      LLVMValueRef idx = c64(ctx, 0);
      for (int32_t d = 0; d < e.in_rank[i]; ++d) {
        if (in->shape.dims[d] == 1) continue;  // broadcast or size-1 dim
        idx = wmad(ctx, lv[e.in_labels[i][d]], st_[d], idx);
      }
      LLVMValueRef v = mlcc_emit_load(ctx, in, idx);
      if (prod == NULL) prod = v;
      else prod = is_fp(dt) ? LLVMBuildFMul(ctx->b, prod, v, "") : LLVMBuildMul(ctx->b, prod, v, "");
    }
    LLVMValueRef cur = load_var(ctx, t, acc);
    LLVMBuildStore(ctx->b, is_fp(dt) ? LLVMBuildFAdd(ctx->b, cur, prod, "")
                                     : LLVMBuildAdd(ctx->b, cur, prod, ""), acc);
    for (int32_t s = e.n_sum - 1; s >= 0; --s) mlcc_emit_loop_end(ctx, &sl[s]);
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, load_var(ctx, t, acc));
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding (23)
//===----------------------------------------------------------------------===//

// Per (b, s): the cache row (position_ids[b, s], clamped into the cache so a
// bad id never reads out of bounds, or b*S + s); per head the rot/2 pairs
// rotate by (cos, sin) of that row and the rest of the head is copied.
static mlcc_status_t emit_misc_rotary(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  mlcc_rotary_t r;
  MLCC_RETURN_IF_ERROR(mlcc_rotary_resolve(node, &r));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* cv = mlcc_node_input(node, 1);
  const mlcc_value_t* sv = mlcc_node_input(node, 2);
  const mlcc_value_t* pv = r.has_pos ? mlcc_node_input(node, 3) : NULL;
  const int64_t half = r.rot / 2;
  if (r.batch * r.seq * r.heads * r.head_size == 0) return mlcc_ok_status();
  LLVMBuilderRef b = ctx->b;
  mlcc_loop_t lb = mlcc_emit_for(ctx, 0, r.batch, "rb");
  mlcc_loop_t ls = mlcc_emit_for(ctx, 0, r.seq, "rs");
  LLVMValueRef bs = wmad(ctx, lb.iv, r.seq, ls.iv);
  LLVMValueRef row = pv != NULL ? clamp_index(ctx, load_i64(ctx, pv, bs), r.positions) : bs;
  LLVMValueRef crow = wmulc(ctx, row, half);
  LLVMValueRef xbs = wadd(ctx, wmulc(ctx, lb.iv, r.x_b), wmulc(ctx, ls.iv, r.x_s));
  mlcc_loop_t lh = mlcc_emit_for(ctx, 0, r.heads, "rh");
  LLVMValueRef base = wadd(ctx, xbs, wmulc(ctx, lh.iv, r.x_h));
  mlcc_status_t st = mlcc_ok_status();
  if (half > 0) {
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, half, "rj");
    LLVMValueRef i1 = r.interleaved ? wmulc(ctx, lj.iv, 2) : lj.iv;
    LLVMValueRef i2 = r.interleaved ? wadd(ctx, i1, c64(ctx, 1)) : wadd(ctx, lj.iv, c64(ctx, half));
    LLVMValueRef a1 = wadd(ctx, base, i1), a2 = wadd(ctx, base, i2);
    LLVMValueRef x1 = mlcc_emit_load(ctx, x, a1), x2 = mlcc_emit_load(ctx, x, a2);
    LLVMValueRef c = mlcc_emit_load(ctx, cv, wadd(ctx, crow, lj.iv));
    LLVMValueRef sn = mlcc_emit_load(ctx, sv, wadd(ctx, crow, lj.iv));
    LLVMValueRef re = LLVMBuildFSub(b, LLVMBuildFMul(b, c, x1, ""), LLVMBuildFMul(b, sn, x2, ""), "");
    LLVMValueRef im = LLVMBuildFAdd(b, LLVMBuildFMul(b, sn, x1, ""), LLVMBuildFMul(b, c, x2, ""), "");
    st = mlcc_emit_store_output(ctx, node, 0, a1, re);
    if (mlcc_status_is_ok(st)) st = mlcc_emit_store_output(ctx, node, 0, a2, im);
    mlcc_emit_loop_end(ctx, &lj);
  }
  if (mlcc_status_is_ok(st) && r.rot < r.head_size) {
    mlcc_loop_t ld = mlcc_emit_for(ctx, r.rot, r.head_size, "rd");
    LLVMValueRef a = wadd(ctx, base, ld.iv);
    st = mlcc_emit_store_output(ctx, node, 0, a, mlcc_emit_load(ctx, x, a));
    mlcc_emit_loop_end(ctx, &ld);
  }
  mlcc_emit_loop_end(ctx, &lh);
  mlcc_emit_loop_end(ctx, &ls);
  mlcc_emit_loop_end(ctx, &lb);
  return st;
}

//===----------------------------------------------------------------------===//
// Attention (23)
//===----------------------------------------------------------------------===//

// The parts of one Attention kernel that the key loops share.
typedef struct att_emit_t {
  const mlcc_attention_t* a;
  const mlcc_value_t *q, *k, *v, *mask, *pk, *pv;
  mlcc_dtype_t dt;
  LLVMTypeRef t;
  LLVMValueRef b, h, hk, i;  // loop ivs: batch, query head, its kv head, query row
  LLVMValueRef qbase;        // Q index of (b, h, i, 0)
} att_emit_t;

// Score of query row |e->i| against key |jt| (0..total): the scaled dot
// product (key vector at |kv|[kbase..]), softcapped, masked (-inf where a
// bool mask is false or causality forbids) or with the float mask added.
static LLVMValueRef att_score(mlcc_emit_ctx_t* ctx, const att_emit_t* e, const mlcc_value_t* kv,
                              LLVMValueRef kbase, LLVMValueRef jt) {
  const mlcc_attention_t* a = e->a;
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef acc = mlcc_emit_var(ctx, e->t, fconst(ctx, e->dt, 0));
  LLVMBuildStore(b, fconst(ctx, e->dt, 0), acc);
  mlcc_loop_t ld = mlcc_emit_for(ctx, 0, a->head, "ad");
  LLVMValueRef qv = mlcc_emit_load(ctx, e->q, wadd(ctx, e->qbase, ld.iv));
  LLVMValueRef kvv = mlcc_emit_load(ctx, kv, wadd(ctx, kbase, ld.iv));
  LLVMBuildStore(b, mlcc_emit_fmuladd(ctx, qv, kvv, load_var(ctx, e->t, acc)), acc);
  mlcc_emit_loop_end(ctx, &ld);
  LLVMValueRef s = LLVMBuildFMul(b, load_var(ctx, e->t, acc), fconst(ctx, e->dt, a->scale), "");
  if (a->softcap > 0) {
    LLVMValueRef u = LLVMBuildFDiv(b, s, fconst(ctx, e->dt, a->softcap), "");
    s = LLVMBuildFMul(b, fconst(ctx, e->dt, a->softcap), mlcc_emit_fast_tanh(ctx, u), "");
  }
  LLVMValueRef ninf = fconst(ctx, e->dt, -INFINITY);
  if (a->mask_kind != 0) {
    LLVMValueRef mi = wadd(ctx, wadd(ctx, wmulc(ctx, e->b, a->m_stride[0]),
                                     wmulc(ctx, e->h, a->m_stride[1])),
                           wadd(ctx, wmulc(ctx, e->i, a->m_stride[2]), wmulc(ctx, jt, a->m_stride[3])));
    LLVMValueRef mv = mlcc_emit_load(ctx, e->mask, mi);
    s = a->mask_kind == 1 ? LLVMBuildSelect(b, mv, s, ninf, "") : LLVMBuildFAdd(b, s, mv, "");
  }
  if (a->causal) {
    LLVMValueRef lim = wadd(ctx, e->i, c64(ctx, a->past));
    s = LLVMBuildSelect(b, icmp(ctx, LLVMIntSGT, jt, lim), ninf, s, "");
  }
  return s;
}

// Key |j| of a segment: the past cache (|past|) or the current K/V.
static LLVMValueRef att_kbase(mlcc_emit_ctx_t* ctx, const att_emit_t* e, bool past, bool value,
                              LLVMValueRef j) {
  const mlcc_attention_t* a = e->a;
  int64_t d = value ? a->v_head : a->head;
  if (past) {
    return wmulc(ctx, wmad(ctx, wmad(ctx, e->b, a->kv_heads, e->hk), a->past, j), d);
  }
  if (value) {
    return wadd(ctx, wadd(ctx, wmulc(ctx, e->b, a->v_b), wmulc(ctx, e->hk, a->v_h)),
                wmulc(ctx, j, a->v_s));
  }
  return wadd(ctx, wadd(ctx, wmulc(ctx, e->b, a->k_b), wmulc(ctx, e->hk, a->k_h)),
              wmulc(ctx, j, a->k_s));
}

// Scaled dot-product attention per (b, query head, query row): a first pass
// over the keys (past, then current) keeps the running max and the sum of
// exponentials (online softmax, no scratch); a second pass per output
// element accumulates exp(score - max) * value, divided by the sum. A row
// whose keys are all masked is 0. Scores are recomputed in the second pass
// (a scalar reference kernel, not yet the fused one of issue 15 part 3).
static mlcc_status_t emit_misc_attention(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  mlcc_attention_t a;
  MLCC_RETURN_IF_ERROR(mlcc_attention_resolve(node, &a, NULL));
  att_emit_t e = {.a = &a};
  e.q = mlcc_node_input(node, 0), e.k = mlcc_node_input(node, 1), e.v = mlcc_node_input(node, 2);
  e.mask = node->n_inputs > 3 ? mlcc_node_input(node, 3) : NULL;
  e.pk = node->n_inputs > 4 ? mlcc_node_input(node, 4) : NULL;
  e.pv = node->n_inputs > 5 ? mlcc_node_input(node, 5) : NULL;
  e.dt = e.q->dtype;
  e.t = mlcc_emit_type(ctx, e.dt);
  LLVMBuilderRef b = ctx->b;
  mlcc_status_t st = mlcc_ok_status();
  const int64_t group = a.q_heads / a.kv_heads;
  if (mlcc_node_output(node, 0) != NULL && a.batch * a.q_heads * a.q_seq * a.v_head > 0) {
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, a.batch, "ab");
    mlcc_loop_t lh = mlcc_emit_for(ctx, 0, a.q_heads, "ah");
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, a.q_seq, "ai");
    e.b = lb.iv, e.h = lh.iv, e.i = li.iv;
    e.hk = wdivc(ctx, lh.iv, group);
    e.qbase = wadd(ctx, wadd(ctx, wmulc(ctx, lb.iv, a.q_b), wmulc(ctx, lh.iv, a.q_h)),
                   wmulc(ctx, li.iv, a.q_s));
    LLVMValueRef ninf = fconst(ctx, e.dt, -INFINITY);
    LLVMValueRef mvar = mlcc_emit_var(ctx, e.t, ninf);
    LLVMValueRef lvar = mlcc_emit_var(ctx, e.t, fconst(ctx, e.dt, 0));
    LLVMBuildStore(b, ninf, mvar);
    LLVMBuildStore(b, fconst(ctx, e.dt, 0), lvar);
    for (int seg = 0; seg < 2; ++seg) {  // pass 1: max and sum
      int64_t n = seg == 0 ? a.past : a.kv_seq;
      if (n == 0) continue;
      mlcc_loop_t lj = mlcc_emit_for(ctx, 0, n, "aj");
      LLVMValueRef jt = seg == 0 ? lj.iv : wadd(ctx, lj.iv, c64(ctx, a.past));
      LLVMValueRef s = att_score(ctx, &e, seg == 0 ? e.pk : e.k,
                                 att_kbase(ctx, &e, seg == 0, false, lj.iv), jt);
      LLVMValueRef m = load_var(ctx, e.t, mvar), l = load_var(ctx, e.t, lvar);
      LLVMValueRef valid = LLVMBuildFCmp(b, LLVMRealOGT, s, ninf, "");
      LLVMValueRef nm = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, s, m, ""), s, m, "");
      LLVMValueRef nl = LLVMBuildFAdd(
          b, LLVMBuildFMul(b, l, mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, m, nm, "")), ""),
          mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, s, nm, "")), "");
      LLVMBuildStore(b, LLVMBuildSelect(b, valid, nm, m, ""), mvar);
      LLVMBuildStore(b, LLVMBuildSelect(b, valid, nl, l, ""), lvar);
      mlcc_emit_loop_end(ctx, &lj);
    }
    LLVMValueRef m = load_var(ctx, e.t, mvar), l = load_var(ctx, e.t, lvar);
    LLVMValueRef ybase = wadd(ctx, wadd(ctx, wmulc(ctx, lb.iv, a.y_b), wmulc(ctx, lh.iv, a.y_h)),
                              wmulc(ctx, li.iv, a.y_s));
    mlcc_loop_t lv = mlcc_emit_for(ctx, 0, a.v_head, "av");
    LLVMValueRef acc = mlcc_emit_var(ctx, e.t, fconst(ctx, e.dt, 0));
    LLVMBuildStore(b, fconst(ctx, e.dt, 0), acc);
    for (int seg = 0; seg < 2; ++seg) {  // pass 2: weighted sum of values
      int64_t n = seg == 0 ? a.past : a.kv_seq;
      if (n == 0) continue;
      mlcc_loop_t lj = mlcc_emit_for(ctx, 0, n, "aj");
      LLVMValueRef jt = seg == 0 ? lj.iv : wadd(ctx, lj.iv, c64(ctx, a.past));
      LLVMValueRef s = att_score(ctx, &e, seg == 0 ? e.pk : e.k,
                                 att_kbase(ctx, &e, seg == 0, false, lj.iv), jt);
      LLVMValueRef valid = LLVMBuildFCmp(b, LLVMRealOGT, s, ninf, "");
      LLVMValueRef p = LLVMBuildSelect(
          b, valid, mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, s, m, "")), fconst(ctx, e.dt, 0), "");
      LLVMValueRef vv = mlcc_emit_load(ctx, seg == 0 ? e.pv : e.v,
                                       wadd(ctx, att_kbase(ctx, &e, seg == 0, true, lj.iv), lv.iv));
      LLVMBuildStore(b, mlcc_emit_fmuladd(ctx, p, vv, load_var(ctx, e.t, acc)), acc);
      mlcc_emit_loop_end(ctx, &lj);
    }
    LLVMValueRef any = LLVMBuildFCmp(b, LLVMRealOGT, l, fconst(ctx, e.dt, 0), "");
    LLVMValueRef y = LLVMBuildSelect(b, any, LLVMBuildFDiv(b, load_var(ctx, e.t, acc), l, ""),
                                     fconst(ctx, e.dt, 0), "");
    st = mlcc_emit_store_output(ctx, node, 0, wadd(ctx, ybase, lv.iv), y);
    mlcc_emit_loop_end(ctx, &lv);
    mlcc_emit_loop_end(ctx, &li);
    mlcc_emit_loop_end(ctx, &lh);
    mlcc_emit_loop_end(ctx, &lb);
  }
  // present_key / present_value: the past cache followed by the new keys.
  for (uint32_t o = 1; o < 3 && mlcc_status_is_ok(st); ++o) {
    if (node->n_outputs <= o || node->outputs[o] == NULL) continue;
    bool value = o == 2;
    int64_t d = value ? a.v_head : a.head;
    if (a.batch * a.kv_heads * a.total * d == 0) continue;
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, a.batch, "pb");
    mlcc_loop_t lh = mlcc_emit_for(ctx, 0, a.kv_heads, "ph");
    e.b = lb.iv, e.hk = lh.iv;
    for (int seg = 0; seg < 2 && mlcc_status_is_ok(st); ++seg) {
      int64_t n = seg == 0 ? a.past : a.kv_seq;
      if (n == 0) continue;
      mlcc_loop_t lj = mlcc_emit_for(ctx, 0, n, "pj");
      mlcc_loop_t ld = mlcc_emit_for(ctx, 0, d, "pd");
      LLVMValueRef jt = seg == 0 ? lj.iv : wadd(ctx, lj.iv, c64(ctx, a.past));
      const mlcc_value_t* src = seg == 0 ? (value ? e.pv : e.pk) : (value ? e.v : e.k);
      LLVMValueRef from = wadd(ctx, att_kbase(ctx, &e, seg == 0, value, lj.iv), ld.iv);
      LLVMValueRef to = wmad(ctx, wmad(ctx, wmad(ctx, lb.iv, a.kv_heads, lh.iv), a.total, jt), d,
                             ld.iv);
      st = mlcc_emit_store_output(ctx, node, o, to, mlcc_emit_load(ctx, src, from));
      mlcc_emit_loop_end(ctx, &ld);
      mlcc_emit_loop_end(ctx, &lj);
    }
    mlcc_emit_loop_end(ctx, &lh);
    mlcc_emit_loop_end(ctx, &lb);
  }
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
// AffineGrid (20)
//===----------------------------------------------------------------------===//

// Normalized coordinate of index |i| along a dim of |len| points: -1 + 2i/(len-1)
// with align_corners (-1 for a single point), else -1 + (2i+1)/len.
static LLVMValueRef affine_coord(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef i,
                                 int64_t len, bool align) {
  LLVMValueRef f = LLVMBuildSIToFP(ctx->b, i, mlcc_emit_type(ctx, dt), "");
  if (align) {
    if (len <= 1) return fconst(ctx, dt, -1.0);
    return LLVMBuildFAdd(ctx->b, fconst(ctx, dt, -1.0),
                         LLVMBuildFMul(ctx->b, f, fconst(ctx, dt, 2.0 / (double)(len - 1)), ""),
                         "");
  }
  LLVMValueRef t = LLVMBuildFAdd(ctx->b, LLVMBuildFMul(ctx->b, f, fconst(ctx, dt, 2.0), ""),
                                 fconst(ctx, dt, 1.0), "");
  return LLVMBuildFAdd(ctx->b, fconst(ctx, dt, -1.0),
                       LLVMBuildFDiv(ctx->b, t, fconst(ctx, dt, (double)len), ""), "");
}

// grid[n, (d,) h, w, r] = sum_c theta[n, r, c] * [x_w, y_h, (z_d,) 1][c].
static mlcc_status_t emit_misc_affine_grid(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* th = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = th->dtype;
  int64_t align = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "align_corners", 0, &align));
  const int32_t r = y->shape.rank;  // 4 (2-D) or 5 (3-D)
  const int64_t k = r == 4 ? 2 : 3;  // coordinates per point
  if (mlcc_shape_numel_unchecked(&y->shape) == 0) return mlcc_ok_status();
  const int64_t N = y->shape.dims[0];
  const int64_t Dd = r == 5 ? y->shape.dims[1] : 1, H = y->shape.dims[r - 3],
                W = y->shape.dims[r - 2];
  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, N, "gn");
  mlcc_loop_t ld = mlcc_emit_for(ctx, 0, Dd, "gd");
  mlcc_loop_t lh = mlcc_emit_for(ctx, 0, H, "gh");
  mlcc_loop_t lw = mlcc_emit_for(ctx, 0, W, "gw");
  LLVMValueRef p[4];
  p[0] = affine_coord(ctx, dt, lw.iv, W, align != 0);
  p[1] = affine_coord(ctx, dt, lh.iv, H, align != 0);
  p[2] = r == 5 ? affine_coord(ctx, dt, ld.iv, Dd, align != 0) : NULL;
  LLVMValueRef pt = wmad(ctx, wmad(ctx, wmad(ctx, ln.iv, Dd, ld.iv), H, lh.iv), W, lw.iv);
  mlcc_status_t st = mlcc_ok_status();
  for (int64_t row = 0; row < k && mlcc_status_is_ok(st); ++row) {
    LLVMValueRef tb = wmad(ctx, ln.iv, k * (k + 1), c64(ctx, row * (k + 1)));
    LLVMValueRef acc = mlcc_emit_load(ctx, th, wadd(ctx, tb, c64(ctx, k)));  // translation
    for (int64_t c = 0; c < k; ++c) {
      LLVMValueRef tv = mlcc_emit_load(ctx, th, wadd(ctx, tb, c64(ctx, c)));
      acc = mlcc_emit_fmuladd(ctx, tv, p[c], acc);
    }
    st = mlcc_emit_store_output(ctx, node, 0, wmad(ctx, pt, k, c64(ctx, row)), acc);
  }
  mlcc_emit_loop_end(ctx, &lw);
  mlcc_emit_loop_end(ctx, &lh);
  mlcc_emit_loop_end(ctx, &ld);
  mlcc_emit_loop_end(ctx, &ln);
  return st;
}

//===----------------------------------------------------------------------===//
// LpNormalization (1, 22), GlobalLpPool (2, 22)
//===----------------------------------------------------------------------===//

// |v|^p for a small integer p (repeated multiplication).
static LLVMValueRef abs_pow(mlcc_emit_ctx_t* ctx, LLVMValueRef v, int64_t p) {
  LLVMValueRef a = mlcc_emit_intrinsic(ctx, "llvm.fabs", &v, 1);
  LLVMValueRef r = a;
  for (int64_t i = 1; i < p; ++i) r = LLVMBuildFMul(ctx->b, r, a, "");
  return r;
}

// Sum over |len| elements at |base| + j*|stride| of |x|^p.
static LLVMValueRef lp_sum(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, LLVMValueRef base,
                           int64_t len, int64_t stride, int64_t p) {
  mlcc_dtype_t dt = x->dtype;
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  LLVMValueRef acc = mlcc_emit_var(ctx, t, fconst(ctx, dt, 0));
  LLVMBuildStore(ctx->b, fconst(ctx, dt, 0), acc);
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, len, "lp");
  LLVMValueRef v = mlcc_emit_load(ctx, x, wmad(ctx, l.iv, stride, base));
  LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, load_var(ctx, t, acc), abs_pow(ctx, v, p), ""),
                 acc);
  mlcc_emit_loop_end(ctx, &l);
  return load_var(ctx, t, acc);
}

// y = x / ||x||_p along 'axis'; a zero norm gives 0.
static mlcc_status_t emit_misc_lp_norm(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  int64_t axis = -1, p = 2;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "p", 2, &p));
  int32_t r = x->shape.rank;
  if (axis < 0) axis += r;
  int64_t outer = 1, len = x->shape.dims[axis], inner = 1;
  for (int32_t d = 0; d < r; ++d) {
    if (d < axis) outer *= x->shape.dims[d];
    else if (d > axis) inner *= x->shape.dims[d];
  }
  if (outer * len * inner == 0) return mlcc_ok_status();
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, outer, "no");
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, inner, "ni");
  LLVMValueRef base = wmad(ctx, lo.iv, len * inner, li.iv);
  LLVMValueRef norm = lp_sum(ctx, x, base, len, inner, p);
  if (p == 2) norm = mlcc_emit_intrinsic(ctx, "llvm.sqrt", &norm, 1);
  LLVMValueRef zero = LLVMBuildFCmp(ctx->b, LLVMRealOEQ, norm, fconst(ctx, dt, 0), "");
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, len, "nl");
  LLVMValueRef idx = wmad(ctx, l.iv, inner, base);
  LLVMValueRef y = LLVMBuildSelect(ctx->b, zero, fconst(ctx, dt, 0),
                                   LLVMBuildFDiv(ctx->b, mlcc_emit_load(ctx, x, idx), norm, ""), "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, idx, y);
  mlcc_emit_loop_end(ctx, &l);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lo);
  return st;
}

// y[n, c] = (sum over the spatial dims of |x|^p)^(1/p).
static mlcc_status_t emit_misc_global_lp_pool(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  int64_t p = 2;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "p", 2, &p));
  int64_t nc = x->shape.dims[0] * x->shape.dims[1], sp = 1;
  for (int32_t d = 2; d < x->shape.rank; ++d) sp *= x->shape.dims[d];
  if (nc == 0) return mlcc_ok_status();
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, nc, "gp");
  LLVMValueRef sum = lp_sum(ctx, x, wmulc(ctx, l.iv, sp), sp, 1, p);
  LLVMValueRef y = sum;
  if (p == 2) {
    y = mlcc_emit_intrinsic(ctx, "llvm.sqrt", &sum, 1);
  } else if (p > 2) {  // exp(log(sum) / p); sum 0 gives 0
    y = libm1(ctx, dt, "exp", LLVMBuildFDiv(ctx->b, libm1(ctx, dt, "log", sum),
                                            fconst(ctx, dt, (double)p), ""));
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, y);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// TensorScatter (24)
//===----------------------------------------------------------------------===//

// Gather form: present[p, m, i] = update[p, s, i] where s = m - w[b] (linear)
// or (m - w[b]) mod M (circular) lies in [0, seq), else past[p, m, i]. A
// linear write past the end of the cache is dropped.
static mlcc_status_t emit_misc_tensor_scatter(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* past = mlcc_node_input(node, 0);
  const mlcc_value_t* up = mlcc_node_input(node, 1);
  const mlcc_value_t* wi = node->n_inputs > 2 ? mlcc_node_input(node, 2) : NULL;
  int64_t axis = -2;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -2, &axis));
  const char* mode = "linear";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "linear", &mode));
  const bool circular = strcmp(mode, "circular") == 0;
  int32_t r = past->shape.rank;
  if (axis < 0) axis += r;
  int64_t outer = 1, per_batch = 1, inner = 1;
  for (int32_t d = 0; d < r; ++d) {
    if (d < axis) outer *= past->shape.dims[d];
    if (d > 0 && d < axis) per_batch *= past->shape.dims[d];
    if (d > axis) inner *= past->shape.dims[d];
  }
  const int64_t M = past->shape.dims[axis], S = up->shape.dims[axis];
  if (outer * M * inner == 0) return mlcc_ok_status();
  LLVMBuilderRef b = ctx->b;
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, outer, "to");
  LLVMValueRef w = wi != NULL ? load_i64(ctx, wi, wdivc(ctx, lo.iv, per_batch)) : c64(ctx, 0);
  mlcc_loop_t lm = mlcc_emit_for(ctx, 0, M, "tm");
  LLVMValueRef sidx = wsub(ctx, lm.iv, w);
  if (circular) {  // ((m - w) mod M + M) mod M
    LLVMValueRef rem = LLVMBuildSRem(b, sidx, c64(ctx, M), "");
    sidx = LLVMBuildSelect(b, icmp(ctx, LLVMIntSLT, rem, c64(ctx, 0)), wadd(ctx, rem, c64(ctx, M)),
                           rem, "");
  }
  LLVMValueRef in_up = LLVMBuildAnd(b, icmp(ctx, LLVMIntSGE, sidx, c64(ctx, 0)),
                                    icmp(ctx, LLVMIntSLT, sidx, c64(ctx, S)), "");
  LLVMValueRef sc = clamp_index(ctx, sidx, S > 0 ? S : 1);
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, inner, "ti");
  LLVMValueRef pidx = wmad(ctx, wmad(ctx, lo.iv, M, lm.iv), inner, li.iv);
  LLVMValueRef v = mlcc_emit_load(ctx, past, pidx);
  if (S > 0) {
    LLVMValueRef uidx = wmad(ctx, wmad(ctx, lo.iv, S, sc), inner, li.iv);
    v = LLVMBuildSelect(b, in_up, mlcc_emit_load(ctx, up, uidx), v, "");
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, pidx, v);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lm);
  mlcc_emit_loop_end(ctx, &lo);
  return st;
}

//===----------------------------------------------------------------------===//
// Col2Im (18)
//===----------------------------------------------------------------------===//

// Gather form: out[n, c, y] = sum over block offsets b (flattened, decoded
// per dim at run time) of in[n, c*K + b, l] for every dim where
// t = y + pad_begin - b*dilation is a multiple of the stride and l = t/stride
// a valid block position.
static mlcc_status_t emit_misc_col2im(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  mlcc_col2im_t g;
  MLCC_RETURN_IF_ERROR(mlcc_col2im_resolve(node, &g));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  LLVMBuilderRef b = ctx->b;
  int64_t img = 1, K = 1, L = 1;
  for (int32_t i = 0; i < g.n; ++i) img *= g.img[i], K *= g.k[i], L *= g.blocks[i];
  if (g.batch * g.channels * img == 0) return mlcc_ok_status();
  mlcc_loop_t lnc = mlcc_emit_for(ctx, 0, g.batch * g.channels, "cn");
  mlcc_loop_t lp = mlcc_emit_for(ctx, 0, img, "cp");
  LLVMValueRef acc = mlcc_emit_var(ctx, t, fconst(ctx, dt, 0));
  LLVMBuildStore(b, fconst(ctx, dt, 0), acc);
  mlcc_loop_t lk = mlcc_emit_for(ctx, 0, K, "ck");
  LLVMValueRef ok = LLVMConstInt(ctx->t_i1, 1, 0);
  LLVMValueRef lflat = c64(ctx, 0);
  int64_t irest = img, krest = K;
  for (int32_t i = 0; i < g.n; ++i) {  // decode dim i of the pixel and of the block offset
    irest /= g.img[i];
    krest /= g.k[i];
    LLVMValueRef yi = wremc(ctx, wdivc(ctx, lp.iv, irest), g.img[i]);
    LLVMValueRef bi = wremc(ctx, wdivc(ctx, lk.iv, krest), g.k[i]);
    LLVMValueRef ti = wsub(ctx, wadd(ctx, yi, c64(ctx, g.pads[i])), wmulc(ctx, bi, g.dilations[i]));
    LLVMValueRef tc = LLVMBuildSelect(b, icmp(ctx, LLVMIntSLT, ti, c64(ctx, 0)), c64(ctx, 0), ti, "");
    LLVMValueRef li = wdivc(ctx, tc, g.strides[i]);
    ok = LLVMBuildAnd(b, ok, icmp(ctx, LLVMIntSGE, ti, c64(ctx, 0)), "");
    ok = LLVMBuildAnd(b, ok, icmp(ctx, LLVMIntEQ, wremc(ctx, tc, g.strides[i]), c64(ctx, 0)), "");
    ok = LLVMBuildAnd(b, ok, icmp(ctx, LLVMIntSLT, li, c64(ctx, g.blocks[i])), "");
    lflat = wmad(ctx, lflat, g.blocks[i], clamp_index(ctx, li, g.blocks[i]));
  }
  // input [n, c*K + k, l]: (nc*K + k)*L + l
  LLVMValueRef xi = wadd(ctx, wmulc(ctx, wmad(ctx, lnc.iv, K, lk.iv), L), lflat);
  LLVMValueRef v = LLVMBuildSelect(b, ok, mlcc_emit_load(ctx, x, xi), fconst(ctx, dt, 0), "");
  LLVMBuildStore(b, LLVMBuildFAdd(b, load_var(ctx, t, acc), v, ""), acc);
  mlcc_emit_loop_end(ctx, &lk);
  mlcc_status_t st =
      mlcc_emit_store_output(ctx, node, 0, wmad(ctx, lnc.iv, img, lp.iv), load_var(ctx, t, acc));
  mlcc_emit_loop_end(ctx, &lp);
  mlcc_emit_loop_end(ctx, &lnc);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_misc_unary = {.emit = emit_misc_unary};
const mlcc_emitter_t mlcc_emit_misc_bitshift = {.emit = emit_misc_bitshift};
const mlcc_emitter_t mlcc_emit_misc_trilu = {.emit = emit_misc_trilu};
const mlcc_emitter_t mlcc_emit_misc_cumsum = {.emit = emit_misc_cumsum};
const mlcc_emitter_t mlcc_emit_misc_hardmax = {.emit = emit_misc_hardmax};
const mlcc_emitter_t mlcc_emit_misc_depth_space = {.emit = emit_misc_depth_space};
const mlcc_emitter_t mlcc_emit_misc_eyelike = {.emit = emit_misc_eyelike};
const mlcc_emitter_t mlcc_emit_misc_castlike = {.emit = emit_misc_castlike};
const mlcc_emitter_t mlcc_emit_misc_loss = {.emit = emit_misc_loss};
const mlcc_emitter_t mlcc_emit_misc_gathernd = {.emit = emit_misc_gathernd};
const mlcc_emitter_t mlcc_emit_misc_scatter_elements = {.emit = emit_misc_scatter_elements};
const mlcc_emitter_t mlcc_emit_misc_scatternd = {.emit = emit_misc_scatternd};
const mlcc_emitter_t mlcc_emit_misc_onehot = {.emit = emit_misc_onehot};
const mlcc_emitter_t mlcc_emit_misc_topk = {.emit = emit_misc_topk};
const mlcc_emitter_t mlcc_emit_misc_lrn = {.emit = emit_misc_lrn};
const mlcc_emitter_t mlcc_emit_misc_mvn = {.emit = emit_misc_mvn};
const mlcc_emitter_t mlcc_emit_misc_einsum = {.emit = emit_misc_einsum};
const mlcc_emitter_t mlcc_emit_misc_rotary = {.emit = emit_misc_rotary};
const mlcc_emitter_t mlcc_emit_misc_attention = {.emit = emit_misc_attention};
const mlcc_emitter_t mlcc_emit_misc_bitcast = {.emit = emit_misc_bitcast};
const mlcc_emitter_t mlcc_emit_misc_affine_grid = {.emit = emit_misc_affine_grid};
const mlcc_emitter_t mlcc_emit_misc_lp_norm = {.emit = emit_misc_lp_norm};
const mlcc_emitter_t mlcc_emit_misc_global_lp_pool = {.emit = emit_misc_global_lp_pool};
const mlcc_emitter_t mlcc_emit_misc_tensor_scatter = {.emit = emit_misc_tensor_scatter};
const mlcc_emitter_t mlcc_emit_misc_col2im = {.emit = emit_misc_col2im};

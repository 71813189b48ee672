// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of LRN, MeanVarianceNormalization, LpNormalization and
// GlobalLpPool (ops.def "Conformance ops"; the batch, instance, group and
// layer normalizations and Softmax are in norm.c). Scalar loop nests through
// the emit.h toolkit.
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
  LLVMValueRef sq = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, dt, 0));
  LLVMBuildStore(ctx->b, mlcc_emit_const(ctx, dt, 0), sq);
  mlcc_loop_t lw = mlcc_emit_for(ctx, -lo_off, hi_off + 1, "w");
  LLVMValueRef cc = wadd(ctx, c, lw.iv);
  LLVMValueRef ok = LLVMBuildAnd(ctx->b, icmp(ctx, LLVMIntSGE, cc, c64(ctx, 0)),
                                 icmp(ctx, LLVMIntSLT, cc, c64(ctx, C)), "");
  mlcc_if_t br = mlcc_emit_if_begin(ctx, ok);
  LLVMValueRef v = mlcc_emit_load(ctx, x, wmad(ctx, lw.iv, inner, l.iv));
  LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, v, v, load_var(ctx, t, sq)), sq);
  mlcc_emit_if_end(ctx, &br);
  mlcc_emit_loop_end(ctx, &lw);
  LLVMValueRef den = mlcc_emit_fmuladd(ctx, mlcc_emit_const(ctx, dt, (double)alpha / (double)size),
                                       load_var(ctx, t, sq), mlcc_emit_const(ctx, dt, bias));
  LLVMValueRef pw = mlcc_emit_intrinsic(ctx, "llvm.pow", (LLVMValueRef[]){den, mlcc_emit_const(ctx, dt, beta)}, 2);
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
  LLVMValueRef acc = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, dt, 0));
  LLVMBuildStore(ctx->b, mlcc_emit_const(ctx, dt, 0), acc);
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
  LLVMValueRef zero = LLVMBuildFCmp(ctx->b, LLVMRealOEQ, norm, mlcc_emit_const(ctx, dt, 0), "");
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, len, "nl");
  LLVMValueRef idx = wmad(ctx, l.iv, inner, base);
  LLVMValueRef y = LLVMBuildSelect(ctx->b, zero, mlcc_emit_const(ctx, dt, 0),
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
    y = libm_dt(ctx, dt, "exp", LLVMBuildFDiv(ctx->b, libm_dt(ctx, dt, "log", sum),
                                            mlcc_emit_const(ctx, dt, (double)p), ""));
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, y);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_misc_lrn = {.emit = emit_misc_lrn};
const mlcc_emitter_t mlcc_emit_misc_mvn = {.emit = emit_misc_mvn};
const mlcc_emitter_t mlcc_emit_misc_lp_norm = {.emit = emit_misc_lp_norm};
const mlcc_emitter_t mlcc_emit_misc_global_lp_pool = {.emit = emit_misc_global_lp_pool};

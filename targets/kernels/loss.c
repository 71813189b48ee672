// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (ops.def "Conformance ops"): scalar loop nests through the emit.h toolkit,
// reductions accumulated in double.
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
      LLVMValueRef mx = mlcc_emit_var(ctx, ft, mlcc_emit_const(ctx, dt, -INFINITY));
      LLVMBuildStore(ctx->b, mlcc_emit_const(ctx, dt, -INFINITY), mx);
      mlcc_loop_t lc = mlcc_emit_for(ctx, 0, C, "c");
      LLVMValueRef v = mlcc_emit_load(ctx, x, wmad(ctx, lc.iv, D, base));
      LLVMBuildStore(ctx->b, mlcc_emit_max(ctx, dt, load_var(ctx, ft, mx), v), mx);
      mlcc_emit_loop_end(ctx, &lc);
      LLVMValueRef m = load_var(ctx, ft, mx);
      LLVMValueRef se = mlcc_emit_var(ctx, ft, mlcc_emit_const(ctx, dt, 0));
      LLVMBuildStore(ctx->b, mlcc_emit_const(ctx, dt, 0), se);
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
    LLVMValueRef wv = w != NULL ? mlcc_emit_load(ctx, w, tc) : mlcc_emit_const(ctx, dt, 1);
    wv = LLVMBuildSelect(ctx->b, valid, wv, mlcc_emit_const(ctx, dt, 0), "");
    LLVMValueRef loss = LLVMBuildFNeg(ctx->b, LLVMBuildFMul(ctx->b, xv, wv, ""), "");
    loss = LLVMBuildSelect(ctx->b, valid, loss, mlcc_emit_const(ctx, dt, 0), "");
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
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_misc_loss = {.emit = emit_misc_loss};

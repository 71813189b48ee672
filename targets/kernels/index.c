// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the ops that select, gather, scatter or lay out
// elements by index: Trilu, CumSum, Hardmax, DepthToSpace/SpaceToDepth,
// EyeLike, CastLike, GatherND, ScatterElements/Scatter, ScatterND, OneHot,
// TopK, TensorScatter, Col2Im (ops.def "Conformance ops"). Scalar loop nests
// through the emit.h toolkit; every output element is written once through
// mlcc_emit_store_output (scatters and TopK are written in gather form so that
// holds without scratch memory).
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
  LLVMValueRef nxt = prod ? (mlcc_dtype_is_float(dt) ? LLVMBuildFMul(ctx->b, cur, v, "")
                                     : LLVMBuildMul(ctx->b, cur, v, ""))
                          : (mlcc_dtype_is_float(dt) ? LLVMBuildFAdd(ctx->b, cur, v, "")
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
  LLVMValueRef one = LLVMBuildSelect(ctx->b, hit, mlcc_emit_const(ctx, dt, 1), mlcc_emit_const(ctx, dt, 0), "");
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
  LLVMValueRef v = mlcc_emit_convert_f8(ctx, mlcc_emit_load(ctx, x, l.iv), x->dtype, y->dtype,
                                        mlcc_emit_cast_f8_flags(node));
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
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
  bool fp = mlcc_dtype_is_float(dt);
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
  LLVMValueRef acc = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, dt, 0));
  LLVMBuildStore(b, mlcc_emit_const(ctx, dt, 0), acc);
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
  LLVMValueRef v = LLVMBuildSelect(b, ok, mlcc_emit_load(ctx, x, xi), mlcc_emit_const(ctx, dt, 0), "");
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

const mlcc_emitter_t mlcc_emit_misc_trilu = {.emit = emit_misc_trilu};
const mlcc_emitter_t mlcc_emit_misc_cumsum = {.emit = emit_misc_cumsum};
const mlcc_emitter_t mlcc_emit_misc_hardmax = {.emit = emit_misc_hardmax};
const mlcc_emitter_t mlcc_emit_misc_depth_space = {.emit = emit_misc_depth_space};
const mlcc_emitter_t mlcc_emit_misc_eyelike = {.emit = emit_misc_eyelike};
const mlcc_emitter_t mlcc_emit_misc_castlike = {.emit = emit_misc_castlike};
const mlcc_emitter_t mlcc_emit_misc_gathernd = {.emit = emit_misc_gathernd};
const mlcc_emitter_t mlcc_emit_misc_scatter_elements = {.emit = emit_misc_scatter_elements};
const mlcc_emitter_t mlcc_emit_misc_scatternd = {.emit = emit_misc_scatternd};
const mlcc_emitter_t mlcc_emit_misc_onehot = {.emit = emit_misc_onehot};
const mlcc_emitter_t mlcc_emit_misc_topk = {.emit = emit_misc_topk};
const mlcc_emitter_t mlcc_emit_misc_tensor_scatter = {.emit = emit_misc_tensor_scatter};
const mlcc_emitter_t mlcc_emit_misc_col2im = {.emit = emit_misc_col2im};

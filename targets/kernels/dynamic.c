// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the ops with data-dependent output shapes (ops.def
// "Data-dependent output shapes"; shapes in ir/ops/dynamic.c): NonZero,
// Compress, Unique, NonMaxSuppression.
//
// A bounded output (mlcc_value_t.bound_dims != 0) is allocated at its bound.
// The kernel first counts the actual extent, then writes the elements packed
// row-major in the ACTUAL shape at the front of the buffer (elements past
// the actual size are not written) and finally stores the actual dims, as
// int64, into the value's extent slot (an extra output of the node that
// plan-memory adds; docs/generated-api.md, NAME_output_shape). Outputs whose
// shape inference found the exact size (a constant condition, at most one
// slice) run the same code without the extent store.
//
// No scratch memory: Unique finds its groups by repeated scans (O(D^2 * S)
// for D slices of S elements) and NonMaxSuppression reads the indices it
// has already selected back from its output.
#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static LLVMValueRef ld64(mlcc_emit_ctx_t* ctx, LLVMValueRef var) {
  return LLVMBuildLoad2(ctx->b, ctx->t_i64, var, "");
}
// A fresh i64 variable set to |init| at the current position.
static LLVMValueRef var64(mlcc_emit_ctx_t* ctx, int64_t init) {
  return mlcc_emit_var(ctx, ctx->t_i64, c64(ctx, init));
}
static void inc64(mlcc_emit_ctx_t* ctx, LLVMValueRef var) {
  LLVMBuildStore(ctx->b, wadd(ctx, ld64(ctx, var), c64(ctx, 1)), var);
}

// Stores the actual dims |dims| (i64, rank entries) of output |out_index|
// into its extent slot. Nothing for outputs with a static shape; INTERNAL
// for a bounded graph output without a slot (plan-memory did not run).
static mlcc_status_t store_extent(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                  uint32_t out_index, const LLVMValueRef* dims) {
  const mlcc_value_t* v = mlcc_node_output(node, out_index);
  if (v == NULL || v->bound_dims == 0) return mlcc_ok_status();
  if (v->extent == NULL) {
    if (!v->is_output) return mlcc_ok_status();  // unread (e.g. constant folding)
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "%s output '%s' has a data-dependent shape but no extent slot "
                            "(run plan-memory before codegen)",
                            mlcc_op_name(node->op), v->name ? v->name : "");
  }
  if (mlcc_emit_ptr(ctx, v->extent) == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "%s: the extent slot of '%s' is not a kernel argument",
                            mlcc_op_name(node->op), v->name ? v->name : "");
  }
  for (int32_t d = 0; d < v->shape.rank; ++d) mlcc_emit_store(ctx, v->extent, c64(ctx, d), dims[d]);
  return mlcc_ok_status();
}

// The dims of |v| as i64 constants, with dim |dyn| replaced by |actual|.
static void actual_dims(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, int32_t dyn,
                        LLVMValueRef actual, LLVMValueRef* out) {
  for (int32_t d = 0; d < v->shape.rank; ++d) {
    out[d] = d == dyn ? actual : c64(ctx, v->shape.dims[d]);
  }
}

// i1: |v| (computational type of |dt|) is not zero; NaN counts as nonzero.
static LLVMValueRef is_nonzero(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef v) {
  return mlcc_emit_cmp(ctx, dt, MLCC_CMP_NE, v, mlcc_emit_const(ctx, dt, 0));
}

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

// Y[d, k] = index along dim d of the k-th nonzero element of X (row-major).
static mlcc_status_t emit_dynamic_nonzero(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = x->dtype;
  int64_t n = mlcc_shape_numel_unchecked(&x->shape);
  int32_t rank = x->shape.rank;
  // Pass 1: the count.
  LLVMValueRef count = var64(ctx, 0);
  if (n > 0) {
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "nz");
    LLVMValueRef nz = is_nonzero(ctx, dt, mlcc_emit_load(ctx, x, l.iv));
    LLVMBuildStore(ctx->b, wadd(ctx, ld64(ctx, count), LLVMBuildZExt(ctx->b, nz, ctx->t_i64, "")),
                   count);
    mlcc_emit_loop_end(ctx, &l);
  }
  LLVMValueRef total = ld64(ctx, count);
  // Pass 2: the coordinates, row d at d * total.
  mlcc_status_t st = mlcc_ok_status();
  if (n > 0) {
    LLVMValueRef k = var64(ctx, 0);
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "nz");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, is_nonzero(ctx, dt, mlcc_emit_load(ctx, x, l.iv)));
    LLVMValueRef idx[MLCC_MAX_RANK];
    if (rank > 0) {
      mlcc_emit_unravel(ctx, &x->shape, l.iv, idx);
    } else {
      idx[0] = c64(ctx, 0);  // a scalar is treated as a 1-element vector
    }
    LLVMValueRef kk = ld64(ctx, k);
    for (int32_t d = 0; d < (rank > 0 ? rank : 1) && mlcc_status_is_ok(st); ++d) {
      LLVMValueRef at = wadd(ctx, wmul(ctx, c64(ctx, d), total), kk);
      st = mlcc_emit_store_output(ctx, node, 0, at, idx[d]);
    }
    inc64(ctx, k);
    mlcc_emit_if_end(ctx, &br);
    mlcc_emit_loop_end(ctx, &l);
  }
  MLCC_RETURN_IF_ERROR(st);
  LLVMValueRef dims[2];
  actual_dims(ctx, y, 1, total, dims);
  return store_extent(ctx, node, 0, dims);
}

//===----------------------------------------------------------------------===//
// Compress
//===----------------------------------------------------------------------===//

// output[o, k, i] = input[o, j_k, i] for the k-th j with condition[j] true
// (o, i: the dims before/after 'axis'; without 'axis' the flattened input).
static mlcc_status_t emit_dynamic_compress(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* cond = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t outer = 1, inner = 1, extent = mlcc_shape_numel_unchecked(&x->shape);
  int32_t sel = 0;
  if (mlcc_node_attr(node, "axis") != NULL) {
    int64_t axis = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis));
    if (axis < 0) axis += x->shape.rank;
    sel = (int32_t)axis;
    extent = x->shape.dims[sel];
    for (int32_t d = 0; d < x->shape.rank; ++d) {
      if (d < sel) outer *= x->shape.dims[d];
      if (d > sel) inner *= x->shape.dims[d];
    }
  }
  int64_t len = cond->shape.dims[0];
  if (len > extent) len = extent;  // inference rejects longer conditions
  LLVMValueRef count = var64(ctx, 0);
  if (len > 0) {
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, len, "c");
    LLVMValueRef t = mlcc_emit_load(ctx, cond, l.iv);
    LLVMBuildStore(ctx->b, wadd(ctx, ld64(ctx, count), LLVMBuildZExt(ctx->b, t, ctx->t_i64, "")),
                   count);
    mlcc_emit_loop_end(ctx, &l);
  }
  LLVMValueRef total = ld64(ctx, count);
  mlcc_status_t st = mlcc_ok_status();
  if (len > 0 && outer * inner > 0) {
    LLVMValueRef k = var64(ctx, 0);
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, len, "j");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, mlcc_emit_load(ctx, cond, lj.iv));
    LLVMValueRef kk = ld64(ctx, k);
    mlcc_loop_t lo = mlcc_emit_for(ctx, 0, outer, "o");
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, inner, "i");
    LLVMValueRef src = wadd(ctx, wmul(ctx, wmad(ctx, lo.iv, extent, lj.iv), c64(ctx, inner)), li.iv);
    LLVMValueRef dst =
        wadd(ctx, wmul(ctx, wadd(ctx, wmul(ctx, lo.iv, total), kk), c64(ctx, inner)), li.iv);
    st = mlcc_emit_store_output(ctx, node, 0, dst, mlcc_emit_load(ctx, x, src));
    mlcc_emit_loop_end(ctx, &li);
    mlcc_emit_loop_end(ctx, &lo);
    inc64(ctx, k);
    mlcc_emit_if_end(ctx, &br);
    mlcc_emit_loop_end(ctx, &lj);
  }
  MLCC_RETURN_IF_ERROR(st);
  LLVMValueRef dims[MLCC_MAX_RANK];
  actual_dims(ctx, y, sel, total, dims);
  return store_extent(ctx, node, 0, dims);
}

//===----------------------------------------------------------------------===//
// Unique
//===----------------------------------------------------------------------===//

// The slices of X along the selected axis: slice j has elements
// X[(o * d + j) * inner + i] for o < outer, i < inner (no axis: d = numel).
typedef struct slices_t {
  const mlcc_value_t* x;
  int64_t outer, d, inner;
} slices_t;

// -1, 0 or 1 (i64) ordering scalars |a| and |b| of |dt|: floats in a total
// order with every NaN equal and above all numbers (numpy.unique's order).
static LLVMValueRef cmp3(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef lt = mlcc_emit_cmp(ctx, dt, MLCC_CMP_LT, a, b);
  LLVMValueRef gt = mlcc_emit_cmp(ctx, dt, MLCC_CMP_GT, a, b);
  if (mlcc_dtype_is_float(dt)) {
    LLVMValueRef an = LLVMBuildFCmp(ctx->b, LLVMRealUNO, a, a, "");
    LLVMValueRef bn = LLVMBuildFCmp(ctx->b, LLVMRealUNO, b, b, "");
    lt = LLVMBuildOr(ctx->b, lt, LLVMBuildAnd(ctx->b, LLVMBuildNot(ctx->b, an, ""), bn, ""), "");
    gt = LLVMBuildOr(ctx->b, gt, LLVMBuildAnd(ctx->b, an, LLVMBuildNot(ctx->b, bn, ""), ""), "");
  }
  return LLVMBuildSelect(ctx->b, lt, c64(ctx, -1),
                         LLVMBuildSelect(ctx->b, gt, c64(ctx, 1), c64(ctx, 0), ""), "");
}

// Lexicographic -1/0/1 (i64) of slices |i| and |j| in row-major element order.
static LLVMValueRef slice_cmp(mlcc_emit_ctx_t* ctx, const slices_t* s, LLVMValueRef i,
                              LLVMValueRef j) {
  mlcc_dtype_t dt = s->x->dtype;
  int64_t size = s->outer * s->inner;
  if (size == 1) return cmp3(ctx, dt, mlcc_emit_load(ctx, s->x, i), mlcc_emit_load(ctx, s->x, j));
  LLVMValueRef res = var64(ctx, 0);
  if (size == 0) return ld64(ctx, res);
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, s->outer, "so");
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, s->inner, "si");
  LLVMValueRef ai = wadd(ctx, wmul(ctx, wmad(ctx, lo.iv, s->d, i), c64(ctx, s->inner)), li.iv);
  LLVMValueRef bi = wadd(ctx, wmul(ctx, wmad(ctx, lo.iv, s->d, j), c64(ctx, s->inner)), li.iv);
  LLVMValueRef c = cmp3(ctx, dt, mlcc_emit_load(ctx, s->x, ai), mlcc_emit_load(ctx, s->x, bi));
  LLVMValueRef r = ld64(ctx, res);
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, icmp(ctx, LLVMIntEQ, r, c64(ctx, 0)), c, r, ""),
                 res);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lo);
  return ld64(ctx, res);
}

// i1: no slice before |j| equals slice |j|.
static LLVMValueRef first_occurrence(mlcc_emit_ctx_t* ctx, const slices_t* s, LLVMValueRef j) {
  LLVMValueRef first = mlcc_emit_var(ctx, ctx->t_i1, LLVMConstInt(ctx->t_i1, 1, 0));
  mlcc_loop_t l = mlcc_emit_loop_begin(ctx, c64(ctx, 0), j, 1, "fo");
  LLVMValueRef eq = icmp(ctx, LLVMIntEQ, slice_cmp(ctx, s, l.iv, j), c64(ctx, 0));
  LLVMValueRef f = LLVMBuildLoad2(ctx->b, ctx->t_i1, first, "");
  LLVMBuildStore(ctx->b, LLVMBuildAnd(ctx->b, f, LLVMBuildNot(ctx->b, eq, ""), ""), first);
  mlcc_emit_loop_end(ctx, &l);
  return LLVMBuildLoad2(ctx->b, ctx->t_i1, first, "");
}

// Writes unique group |k| (i64), whose first slice is |j|: Y's slice k,
// indices[k], counts[k] and inverse_indices of every member.
static mlcc_status_t emit_unique_group(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                       const slices_t* s, LLVMValueRef total, LLVMValueRef k,
                                       LLVMValueRef j) {
  mlcc_status_t st = mlcc_ok_status();
  if (s->outer * s->inner > 0) {
    mlcc_loop_t lo = mlcc_emit_for(ctx, 0, s->outer, "yo");
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, s->inner, "yi");
    LLVMValueRef src = wadd(ctx, wmul(ctx, wmad(ctx, lo.iv, s->d, j), c64(ctx, s->inner)), li.iv);
    LLVMValueRef dst =
        wadd(ctx, wmul(ctx, wadd(ctx, wmul(ctx, lo.iv, total), k), c64(ctx, s->inner)), li.iv);
    st = mlcc_emit_store_output(ctx, node, 0, dst, mlcc_emit_load(ctx, s->x, src));
    mlcc_emit_loop_end(ctx, &li);
    mlcc_emit_loop_end(ctx, &lo);
  }
  if (mlcc_status_is_ok(st) && mlcc_node_output(node, 1) != NULL) {
    st = mlcc_emit_store_output(ctx, node, 1, k, j);
  }
  bool inverse = mlcc_node_output(node, 2) != NULL;
  bool counts = mlcc_node_output(node, 3) != NULL;
  if (mlcc_status_is_ok(st) && (inverse || counts)) {
    LLVMValueRef cnt = var64(ctx, 0);
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, s->d, "m");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, icmp(ctx, LLVMIntEQ, slice_cmp(ctx, s, l.iv, j),
                                                c64(ctx, 0)));
    inc64(ctx, cnt);
    if (inverse) st = mlcc_emit_store_output(ctx, node, 2, l.iv, k);
    mlcc_emit_if_end(ctx, &br);
    mlcc_emit_loop_end(ctx, &l);
    if (mlcc_status_is_ok(st) && counts) st = mlcc_emit_store_output(ctx, node, 3, k, ld64(ctx, cnt));
  }
  return st;
}

// Unique: groups of equal slices, in ascending (sorted=1) or first-occurrence
// (sorted=0) order. The group count is found first because Y's packed layout
// depends on it.
static mlcc_status_t emit_dynamic_unique(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t sorted = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "sorted", 1, &sorted));
  slices_t s = {x, 1, mlcc_shape_numel_unchecked(&x->shape), 1};
  int32_t sel = 0;
  if (mlcc_node_attr(node, "axis") != NULL) {
    int64_t axis = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis));
    if (axis < 0) axis += x->shape.rank;
    sel = (int32_t)axis;
    s.d = x->shape.dims[sel];
    for (int32_t d = 0; d < x->shape.rank; ++d) {
      if (d < sel) s.outer *= x->shape.dims[d];
      if (d > sel) s.inner *= x->shape.dims[d];
    }
  }
  // Pass 1: the number of groups.
  LLVMValueRef count = var64(ctx, 0);
  if (s.d > 0) {
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, s.d, "u");
    LLVMValueRef f = first_occurrence(ctx, &s, l.iv);
    LLVMBuildStore(ctx->b, wadd(ctx, ld64(ctx, count), LLVMBuildZExt(ctx->b, f, ctx->t_i64, "")),
                   count);
    mlcc_emit_loop_end(ctx, &l);
  }
  LLVMValueRef total = ld64(ctx, count);
  mlcc_status_t st = mlcc_ok_status();
  if (s.d > 0 && sorted) {
    // Group k starts at the first slice of the smallest value above group
    // k-1's (a strict "less" keeps the first of equal slices).
    LLVMValueRef prev = var64(ctx, -1);
    mlcc_loop_t lk = mlcc_emit_loop_begin(ctx, c64(ctx, 0), total, 1, "k");
    LLVMValueRef best = var64(ctx, -1);
    LLVMValueRef p = ld64(ctx, prev);
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, s.d, "c");
    // above = p < 0 || slice[i] > slice[p] (p clamped to 0 when unset)
    LLVMValueRef none = icmp(ctx, LLVMIntSLT, p, c64(ctx, 0));
    LLVMValueRef pc = LLVMBuildSelect(ctx->b, none, c64(ctx, 0), p, "");
    mlcc_if_t above_br = mlcc_emit_if_begin(
        ctx, LLVMBuildOr(ctx->b, none,
                         icmp(ctx, LLVMIntSGT, slice_cmp(ctx, &s, l.iv, pc), c64(ctx, 0)), ""));
    LLVMValueRef bv = ld64(ctx, best);
    LLVMValueRef unset = icmp(ctx, LLVMIntSLT, bv, c64(ctx, 0));
    LLVMValueRef bc = LLVMBuildSelect(ctx->b, unset, c64(ctx, 0), bv, "");
    mlcc_if_t less_br = mlcc_emit_if_begin(
        ctx, LLVMBuildOr(ctx->b, unset,
                         icmp(ctx, LLVMIntSLT, slice_cmp(ctx, &s, l.iv, bc), c64(ctx, 0)), ""));
    LLVMBuildStore(ctx->b, l.iv, best);
    mlcc_emit_if_end(ctx, &less_br);
    mlcc_emit_if_end(ctx, &above_br);
    mlcc_emit_loop_end(ctx, &l);
    LLVMValueRef j = ld64(ctx, best);
    st = emit_unique_group(ctx, node, &s, total, lk.iv, j);
    LLVMBuildStore(ctx->b, j, prev);
    mlcc_emit_loop_end(ctx, &lk);
  } else if (s.d > 0) {
    LLVMValueRef k = var64(ctx, 0);
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, s.d, "j");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, first_occurrence(ctx, &s, l.iv));
    st = emit_unique_group(ctx, node, &s, total, ld64(ctx, k), l.iv);
    inc64(ctx, k);
    mlcc_emit_if_end(ctx, &br);
    mlcc_emit_loop_end(ctx, &l);
  }
  MLCC_RETURN_IF_ERROR(st);
  LLVMValueRef dims[MLCC_MAX_RANK];
  actual_dims(ctx, y, sel, total, dims);
  MLCC_RETURN_IF_ERROR(store_extent(ctx, node, 0, dims));
  MLCC_RETURN_IF_ERROR(store_extent(ctx, node, 1, &total));
  return store_extent(ctx, node, 3, &total);
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//

// Corners (ymin, xmin, ymax, xmax) of box |i| of batch |b| (f32 values).
static void box_corners(mlcc_emit_ctx_t* ctx, const mlcc_value_t* boxes, int64_t n,
                        bool center, LLVMValueRef b, LLVMValueRef i, LLVMValueRef* out) {
  LLVMValueRef base = wmad(ctx, wmad(ctx, b, n, i), 4, c64(ctx, 0));
  LLVMValueRef v[4];
  for (int q = 0; q < 4; ++q) v[q] = mlcc_emit_load(ctx, boxes, wadd(ctx, base, c64(ctx, q)));
  if (center) {
    // [x_center, y_center, width, height]
    LLVMValueRef half = mlcc_emit_f32(ctx, 0.5f);
    LLVMValueRef hw = LLVMBuildFMul(ctx->b, v[2], half, "");
    LLVMValueRef hh = LLVMBuildFMul(ctx->b, v[3], half, "");
    out[0] = LLVMBuildFSub(ctx->b, v[1], hh, "");
    out[1] = LLVMBuildFSub(ctx->b, v[0], hw, "");
    out[2] = LLVMBuildFAdd(ctx->b, v[1], hh, "");
    out[3] = LLVMBuildFAdd(ctx->b, v[0], hw, "");
  } else {
    // [y1, x1, y2, x2], any diagonal pair of corners
    out[0] = mlcc_emit_min(ctx, MLCC_DTYPE_F32, v[0], v[2]);
    out[1] = mlcc_emit_min(ctx, MLCC_DTYPE_F32, v[1], v[3]);
    out[2] = mlcc_emit_max(ctx, MLCC_DTYPE_F32, v[0], v[2]);
    out[3] = mlcc_emit_max(ctx, MLCC_DTYPE_F32, v[1], v[3]);
  }
}

static LLVMValueRef fgt(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(ctx->b, LLVMRealOGT, a, b, "");
}

// i1: IoU(box a, box b) > |thr|, false for empty boxes or no overlap.
static LLVMValueRef iou_above(mlcc_emit_ctx_t* ctx, const LLVMValueRef* a, const LLVMValueRef* b,
                              LLVMValueRef thr) {
  LLVMValueRef zero = mlcc_emit_f32(ctx, 0.0f);
  LLVMValueRef ih = LLVMBuildFSub(ctx->b, mlcc_emit_min(ctx, MLCC_DTYPE_F32, a[2], b[2]),
                                  mlcc_emit_max(ctx, MLCC_DTYPE_F32, a[0], b[0]), "");
  LLVMValueRef iw = LLVMBuildFSub(ctx->b, mlcc_emit_min(ctx, MLCC_DTYPE_F32, a[3], b[3]),
                                  mlcc_emit_max(ctx, MLCC_DTYPE_F32, a[1], b[1]), "");
  LLVMValueRef inter = LLVMBuildFMul(ctx->b, ih, iw, "");
  LLVMValueRef area_a = LLVMBuildFMul(ctx->b, LLVMBuildFSub(ctx->b, a[2], a[0], ""),
                                      LLVMBuildFSub(ctx->b, a[3], a[1], ""), "");
  LLVMValueRef area_b = LLVMBuildFMul(ctx->b, LLVMBuildFSub(ctx->b, b[2], b[0], ""),
                                      LLVMBuildFSub(ctx->b, b[3], b[1], ""), "");
  LLVMValueRef uni = LLVMBuildFSub(ctx->b, LLVMBuildFAdd(ctx->b, area_a, area_b, ""), inter, "");
  LLVMValueRef ok = LLVMBuildAnd(ctx->b, fgt(ctx, ih, zero), fgt(ctx, iw, zero), "");
  ok = LLVMBuildAnd(ctx->b, ok, fgt(ctx, area_a, zero), "");
  ok = LLVMBuildAnd(ctx->b, ok, fgt(ctx, area_b, zero), "");
  ok = LLVMBuildAnd(ctx->b, ok, fgt(ctx, uni, zero), "");
  LLVMValueRef over = fgt(ctx, LLVMBuildFDiv(ctx->b, inter, uni, ""), thr);
  return LLVMBuildAnd(ctx->b, ok, over, "");
}

// Loads element 0 of optional float input |i|, or |dflt| when absent.
static LLVMValueRef scalar_input(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node, uint32_t i,
                                 float dflt) {
  const mlcc_value_t* v = mlcc_node_input(node, i);
  if (v == NULL) return mlcc_emit_f32(ctx, dflt);
  return mlcc_emit_load(ctx, v, c64(ctx, 0));
}

// Greedy NMS per (batch, class): repeatedly select the highest-scoring box
// (lowest index on ties) whose score is above score_threshold (when given)
// and that is neither selected already nor overlaps a selected box with IoU
// above iou_threshold; at most max_output_boxes_per_class per class. Rows
// [batch, class, box] are appended in that order (onnxruntime's semantics).
static mlcc_status_t emit_dynamic_nms(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* boxes = mlcc_node_input(node, 0);
  const mlcc_value_t* scores = mlcc_node_input(node, 1);
  const mlcc_value_t* maxv = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  int64_t center = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "center_point_box", 0, &center));
  int64_t nb = scores->shape.dims[0], nc = scores->shape.dims[1], n = scores->shape.dims[2];
  int64_t per_class = 0;
  if (maxv != NULL && mlcc_shape_numel_unchecked(&maxv->shape) > 0) {
    if (maxv->kind != MLCC_VALUE_CONSTANT || maxv->data == NULL) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL,
                              "NonMaxSuppression: max_output_boxes_per_class is not constant");
    }
    per_class = mlcc_value_const_i64(maxv, 0);
  }
  if (per_class < 0) per_class = 0;
  if (per_class > n) per_class = n;
  LLVMValueRef rows = var64(ctx, 0);
  if (nb * nc * per_class > 0) {
    LLVMValueRef iou_thr = scalar_input(ctx, node, 3, 0.0f);
    const mlcc_value_t* score_v = mlcc_node_input(node, 4);
    LLVMValueRef score_thr = score_v != NULL ? scalar_input(ctx, node, 4, 0.0f) : NULL;
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, nb, "b");
    mlcc_loop_t lc = mlcc_emit_for(ctx, 0, nc, "c");
    LLVMValueRef start = ld64(ctx, rows);
    LLVMValueRef sbase = wmad(ctx, wmad(ctx, lb.iv, nc, lc.iv), n, c64(ctx, 0));
    mlcc_loop_t lt = mlcc_emit_for(ctx, 0, per_class, "t");
    LLVMValueRef best = var64(ctx, -1);
    LLVMValueRef best_score = mlcc_emit_var(ctx, ctx->t_f32, mlcc_emit_f32(ctx, 0.0f));
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, n, "i");
    LLVMValueRef sc = mlcc_emit_load(ctx, scores, wadd(ctx, sbase, li.iv));
    LLVMValueRef cand = LLVMBuildOr(ctx->b, icmp(ctx, LLVMIntSLT, ld64(ctx, best), c64(ctx, 0)),
                                    fgt(ctx, sc, LLVMBuildLoad2(ctx->b, ctx->t_f32, best_score, "")),
                                    "");
    if (score_thr != NULL) cand = LLVMBuildAnd(ctx->b, cand, fgt(ctx, sc, score_thr), "");
    mlcc_if_t cand_br = mlcc_emit_if_begin(ctx, cand);
    LLVMValueRef bi[4];
    box_corners(ctx, boxes, n, center != 0, lb.iv, li.iv, bi);
    LLVMValueRef dropped = mlcc_emit_var(ctx, ctx->t_i1, LLVMConstInt(ctx->t_i1, 0, 0));
    mlcc_loop_t lr = mlcc_emit_loop_begin(ctx, start, ld64(ctx, rows), 1, "r");
    LLVMValueRef j = mlcc_emit_load(ctx, y, wmad(ctx, lr.iv, 3, c64(ctx, 2)));
    LLVMValueRef bj[4];
    box_corners(ctx, boxes, n, center != 0, lb.iv, j, bj);
    LLVMValueRef hit = LLVMBuildOr(ctx->b, icmp(ctx, LLVMIntEQ, j, li.iv),
                                   iou_above(ctx, bi, bj, iou_thr), "");
    LLVMBuildStore(ctx->b,
                   LLVMBuildOr(ctx->b, LLVMBuildLoad2(ctx->b, ctx->t_i1, dropped, ""), hit, ""),
                   dropped);
    mlcc_emit_loop_end(ctx, &lr);
    mlcc_if_t keep_br = mlcc_emit_if_begin(
        ctx, LLVMBuildNot(ctx->b, LLVMBuildLoad2(ctx->b, ctx->t_i1, dropped, ""), ""));
    LLVMBuildStore(ctx->b, li.iv, best);
    LLVMBuildStore(ctx->b, sc, best_score);
    mlcc_emit_if_end(ctx, &keep_br);
    mlcc_emit_if_end(ctx, &cand_br);
    mlcc_emit_loop_end(ctx, &li);
    LLVMValueRef bv = ld64(ctx, best);
    mlcc_if_t found = mlcc_emit_if_begin(ctx, icmp(ctx, LLVMIntSGE, bv, c64(ctx, 0)));
    LLVMValueRef r = ld64(ctx, rows);
    mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, wmad(ctx, r, 3, c64(ctx, 0)), lb.iv);
    if (mlcc_status_is_ok(st)) {
      st = mlcc_emit_store_output(ctx, node, 0, wmad(ctx, r, 3, c64(ctx, 1)), lc.iv);
    }
    if (mlcc_status_is_ok(st)) {
      st = mlcc_emit_store_output(ctx, node, 0, wmad(ctx, r, 3, c64(ctx, 2)), bv);
    }
    inc64(ctx, rows);
    mlcc_emit_if_end(ctx, &found);
    mlcc_emit_loop_end(ctx, &lt);
    mlcc_emit_loop_end(ctx, &lc);
    mlcc_emit_loop_end(ctx, &lb);
    MLCC_RETURN_IF_ERROR(st);
  }
  LLVMValueRef dims[2];
  actual_dims(ctx, y, 0, ld64(ctx, rows), dims);
  return store_extent(ctx, node, 0, dims);
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_dynamic_nonzero = {.emit = emit_dynamic_nonzero};
const mlcc_emitter_t mlcc_emit_dynamic_compress = {.emit = emit_dynamic_compress};
const mlcc_emitter_t mlcc_emit_dynamic_unique = {.emit = emit_dynamic_unique};
const mlcc_emitter_t mlcc_emit_dynamic_nms = {.emit = emit_dynamic_nms};

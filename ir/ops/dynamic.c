// SPDX-License-Identifier: Apache-2.0
// Shape/type inference of the ops whose output shapes depend on input VALUES
// (ops.def "Data-dependent output shapes"): NonZero, Compress, Unique and
// NonMaxSuppression.
//
// mlcc compiles static shapes, so every data-dependent dim gets a static
// upper bound computed here (NonZero: numel(X); Compress: the length of
// 'condition' (at most the axis extent or numel); Unique: the extent along
// 'axis', or numel; NonMaxSuppression: batches * classes *
// min(max_output_boxes_per_class, boxes)). The output is laid out and
// allocated at its bound and flagged through mlcc_value_t.bound_dims; the
// kernel (targets/kernels/dynamic.c) packs the elements in the actual
// shape and writes the actual dims into the value's extent slot, which
// plan-memory creates. Such an output may only be a graph output: any node
// reading it is UNIMPLEMENTED. When the deciding input is a compile-time
// constant (NonZero's X, Compress's condition) the exact shape is inferred
// instead and the output is an ordinary static value.
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"

static mlcc_status_t bad(const mlcc_node_t* node, const char* what) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s %s", mlcc_infer_op(node), what);
}

// Sets output |i| to |dtype|/|shape| with the dims in |bound_mask| being
// upper bounds. A bounded output read by another node is UNIMPLEMENTED
// (n_uses counts the live readers recorded when the graph was built; graph
// outputs are not readers).
static mlcc_status_t set_bounded_output(mlcc_node_t* node, uint32_t i, mlcc_dtype_t dtype,
                                        const mlcc_shape_t* shape, uint32_t bound_mask) {
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, i, dtype, shape));
  mlcc_value_t* v = mlcc_node_output(node, i);
  if (v == NULL) return mlcc_ok_status();
  v->bound_dims = bound_mask;
  if (bound_mask != 0 && v->n_uses > 0) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "output of %s with a data-dependent shape must be a graph output; "
                            "value '%s' is read by another node (mlcc supports data-dependent "
                            "shapes only at the graph's boundary)",
                            mlcc_infer_op(node), v->name ? v->name : "");
  }
  return mlcc_ok_status();
}

// Number of nonzero elements among the first |n| of constant |v| (NaN counts
// as nonzero).
static int64_t count_nonzero(const mlcc_value_t* v, int64_t n) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += mlcc_value_const_f64(v, i) != 0.0;
  return count;
}

// True if |v| is a constant whose bytes are available.
static bool has_data(const mlcc_value_t* v) {
  return v->kind == MLCC_VALUE_CONSTANT &&
         (v->data != NULL || mlcc_shape_numel_unchecked(&v->shape) == 0);
}

// NonZero 9/13: Y int64 [rank(X), <=numel(X)] (numpy.nonzero stacked; a
// scalar X counts as rank 1).
mlcc_status_t mlcc_infer_dynamic_nonzero(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_ANY));
  int64_t n = mlcc_infer_numel(&x->shape);
  if (n < 0) return bad(node, "input 'X' has an invalid shape");
  mlcc_shape_t s = {.rank = 2};
  s.dims[0] = x->shape.rank > 0 ? x->shape.rank : 1;
  if (has_data(x)) {
    s.dims[1] = count_nonzero(x, n);
    return set_bounded_output(node, 0, MLCC_DTYPE_I64, &s, 0);
  }
  s.dims[1] = n;
  return set_bounded_output(node, 0, MLCC_DTYPE_I64, &s, n > 0 ? 1u << 1 : 0);
}

// Compress 9/11: the slices (or, without 'axis', the flattened elements) of
// 'input' whose 'condition' entry is true. 'condition' is bool [L] with L at
// most the selected extent; the output's selected dim is <= L.
mlcc_status_t mlcc_infer_dynamic_compress(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *cond = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "condition", true, &cond));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, cond, "condition", MLCC_INFER_DT_BOOL));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, cond, "condition", 1));
  if (x->shape.rank < 1) return bad(node, "input 'input' must have rank >= 1");
  const mlcc_attr_t* axis_attr = mlcc_node_attr(node, "axis");
  int32_t axis = -1;
  int64_t extent = mlcc_infer_numel(&x->shape);
  if (extent < 0) return bad(node, "input 'input' has an invalid shape");
  if (axis_attr != NULL) {
    int64_t a = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &a));
    MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", a, x->shape.rank, &axis));
    extent = x->shape.dims[axis];
  }
  int64_t len = cond->shape.dims[0];
  if (len > extent) {
    char msg[160];
    snprintf(msg, sizeof(msg),
             "input 'condition' has %lld entries, more than the %lld %s it selects from",
             (long long)len, (long long)extent, axis >= 0 ? "slices" : "elements");
    return bad(node, msg);
  }
  mlcc_shape_t s = {.rank = 1};
  int32_t sel = 0;
  if (axis >= 0) {
    s = x->shape;
    sel = axis;
  }
  if (has_data(cond)) {
    s.dims[sel] = count_nonzero(cond, len);
    return set_bounded_output(node, 0, x->dtype, &s, 0);
  }
  s.dims[sel] = len;
  return set_bounded_output(node, 0, x->dtype, &s, len > 0 ? 1u << sel : 0);
}

// Unique 11: Y (the unique elements, or slices along 'axis'), and the
// optional int64 indices [<=D], inverse_indices [D] and counts [<=D], with D
// the extent along 'axis' (numel without it). 'sorted' is 0 or 1.
mlcc_status_t mlcc_infer_dynamic_unique(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_ANY));
  int64_t sorted = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "sorted", 1, &sorted));
  if (sorted != 0 && sorted != 1) return bad(node, "attribute 'sorted' must be 0 or 1");
  int64_t extent = mlcc_infer_numel(&x->shape);
  if (extent < 0) return bad(node, "input 'X' has an invalid shape");
  mlcc_shape_t ys = {.rank = 1};
  int32_t sel = 0;
  if (mlcc_node_attr(node, "axis") != NULL) {
    int64_t a = 0;
    int32_t axis = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &a));
    MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", a, x->shape.rank, &axis));
    ys = x->shape;
    sel = axis;
    extent = x->shape.dims[axis];
  }
  ys.dims[sel] = extent;
  // With at most one element/slice the count is known: no bound.
  uint32_t dyn = extent > 1 ? 1u : 0u;
  mlcc_shape_t vs = {.rank = 1};
  vs.dims[0] = extent;
  MLCC_RETURN_IF_ERROR(set_bounded_output(node, 0, x->dtype, &ys, dyn << sel));
  MLCC_RETURN_IF_ERROR(set_bounded_output(node, 1, MLCC_DTYPE_I64, &vs, dyn));
  MLCC_RETURN_IF_ERROR(set_bounded_output(node, 2, MLCC_DTYPE_I64, &vs, 0));
  return set_bounded_output(node, 3, MLCC_DTYPE_I64, &vs, dyn);
}

// Reads a float threshold input |i| (absent is fine): float32 with one element.
static mlcc_status_t check_threshold(const mlcc_node_t* node, uint32_t i, const char* name) {
  mlcc_value_t* v = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, false, &v));
  if (v == NULL) return mlcc_ok_status();
  char msg[160];
  if (v->dtype != MLCC_DTYPE_F32 || mlcc_infer_numel(&v->shape) != 1 || v->shape.rank > 1) {
    snprintf(msg, sizeof(msg), "input '%s' must be a float32 scalar (or [1]); got %s of %lld "
             "elements", name, mlcc_dtype_name(v->dtype),
             (long long)mlcc_infer_numel(&v->shape));
    return bad(node, msg);
  }
  return mlcc_ok_status();
}

// NonMaxSuppression 10/11: boxes float32 [B,N,4], scores float32 [B,C,N],
// max_output_boxes_per_class (compile-time constant int64 scalar, default
// 0), iou_threshold and score_threshold (float32 scalars, may be fed at run
// time). selected_indices int64 [<=B*C*min(max, N), 3].
mlcc_status_t mlcc_infer_dynamic_nms(mlcc_node_t* node) {
  mlcc_value_t *boxes = NULL, *scores = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "boxes", true, &boxes));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "scores", true, &scores));
  if (boxes->dtype != MLCC_DTYPE_F32 || scores->dtype != MLCC_DTYPE_F32) {
    return bad(node, "inputs 'boxes' and 'scores' must be float32");
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, boxes, "boxes", 3));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, scores, "scores", 3));
  const int64_t* bd = boxes->shape.dims;
  const int64_t* sd = scores->shape.dims;
  if (bd[2] != 4 || bd[0] != sd[0] || bd[1] != sd[2]) {
    char sb[MLCC_INFER_SHAPE_BUF], ss[MLCC_INFER_SHAPE_BUF], msg[2 * MLCC_INFER_SHAPE_BUF + 96];
    snprintf(msg, sizeof(msg),
             "inputs 'boxes' %s and 'scores' %s must be [batches,boxes,4] and "
             "[batches,classes,boxes]",
             mlcc_infer_fmt_shape(&boxes->shape, sb), mlcc_infer_fmt_shape(&scores->shape, ss));
    return bad(node, msg);
  }
  int64_t center = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "center_point_box", 0, &center));
  if (center != 0 && center != 1) return bad(node, "attribute 'center_point_box' must be 0 or 1");
  int64_t max_boxes[1] = {0};
  uint32_t count = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 2, "max_output_boxes_per_class",
                                             "the bound of the output's size", false, true,
                                             max_boxes, 1, &count, &present));
  MLCC_RETURN_IF_ERROR(check_threshold(node, 3, "iou_threshold"));
  MLCC_RETURN_IF_ERROR(check_threshold(node, 4, "score_threshold"));
  int64_t per_class = count > 0 && max_boxes[0] > 0 ? max_boxes[0] : 0;
  if (per_class > bd[1]) per_class = bd[1];
  int64_t bound = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "the output bound", sd[0], sd[1], &bound));
  MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "the output bound", bound, per_class, &bound));
  mlcc_shape_t s = {.rank = 2, .dims = {bound, 3}};
  return set_bounded_output(node, 0, MLCC_DTYPE_I64, &s, bound > 0 ? 1u : 0u);
}

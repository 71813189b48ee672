// SPDX-License-Identifier: Apache-2.0
// Shape inference for reductions (Reduce*) and ArgMax/ArgMin.
#include <string.h>

#include "ir/ops/infer_impl.h"

// Reduce*: axes from the attribute (all Reduce* up to 17, ReduceSum < 13)
// or from the optional constant input 1 (ReduceSum 13+, every Reduce* 18+).
// Empty axes reduce every dim unless noop_with_empty_axes (with the axes
// input) is set, in which case the output is the input. keepdims (default 1) keeps reduced dims as 1.
mlcc_status_t mlcc_infer_reduce(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  uint32_t allowed = MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_INT32_64 | MLCC_INFER_DT_UINT;
  if (node->opset >= 20 && (node->op == MLCC_OP_REDUCE_MAX || node->op == MLCC_OP_REDUCE_MIN)) {
    allowed |= MLCC_INFER_DT_BOOL;  // ReduceMax/Min 20: false < true
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "data", allowed));
  int64_t keepdims = 1, noop = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "keepdims", 1, &keepdims));
  if (keepdims != 0 && keepdims != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'keepdims' must be 0 or 1; got %lld",
                            mlcc_infer_op(node), (long long)keepdims);
  }
  bool axes_input = node->opset >= 18 || (node->op == MLCC_OP_REDUCE_SUM && node->opset >= 13);
  int64_t axes[MLCC_INFER_MAX_LIST];
  uint32_t n_axes = 0;
  if (axes_input) {
    if (mlcc_node_attr(node, "axes") != NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s at opset %d takes axes as input 1, not as an "
                              "attribute",
                              mlcc_infer_op(node), (int)node->opset);
    }
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "noop_with_empty_axes", 0, &noop));
    bool present = false;
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "axes", "axes to reduce", false,
                                               false, axes, MLCC_INFER_MAX_LIST, &n_axes,
                                               &present));
  } else {
    if (node->n_inputs > 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s at opset %d takes axes as an attribute and has 1 input; "
                              "got %u inputs",
                              mlcc_infer_op(node), (int)node->opset, node->n_inputs);
    }
    const int64_t* a = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &a, &n_axes));
    if (n_axes > MLCC_INFER_MAX_LIST) n_axes = MLCC_INFER_MAX_LIST;  // rejected below
    if (n_axes > 0) memcpy(axes, a, n_axes * sizeof(int64_t));
  }
  if (n_axes > (uint32_t)(x->shape.rank > 0 ? x->shape.rank : 0) && n_axes > 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s lists %u axes for an input of rank %d", mlcc_infer_op(node),
                            n_axes, (int)x->shape.rank);
  }
  if (n_axes == 0 && noop) {
    return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
  }
  uint32_t mask = 0;
  if (n_axes == 0) {
    mask = x->shape.rank >= 32 ? ~0u : ((1u << x->shape.rank) - 1);
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "axes", axes, n_axes, x->shape.rank, &mask));
  }
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  for (int32_t d = 0; d < x->shape.rank; ++d) {
    if (!(mask & (1u << d))) {
      y.dims[y.rank++] = x->shape.dims[d];
    } else if (keepdims) {
      y.dims[y.rank++] = 1;
    }
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// ArgMax/ArgMin: int64 indices along 'axis' (default 0), keepdims default 1.
mlcc_status_t mlcc_infer_argminmax(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "data", MLCC_INFER_DT_NUMERIC));
  int64_t axis_attr = 0, keepdims = 1, last = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis_attr));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "keepdims", 1, &keepdims));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "select_last_index", 0, &last));
  if (keepdims != 0 && keepdims != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'keepdims' must be 0 or 1; got %lld",
                            mlcc_infer_op(node), (long long)keepdims);
  }
  if (last != 0 && node->opset < 12) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s has no 'select_last_index' before opset 12; the node has "
                            "opset %d",
                            mlcc_infer_op(node), (int)node->opset);
  }
  int32_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis_attr, x->shape.rank, &axis));
  if (x->shape.dims[axis] == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs a non-empty reduction dim; axis %d of the input has "
                            "size 0",
                            mlcc_infer_op(node), (int)axis);
  }
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  for (int32_t d = 0; d < x->shape.rank; ++d) {
    if (d != axis) y.dims[y.rank++] = x->shape.dims[d];
    else if (keepdims) y.dims[y.rank++] = 1;
  }
  return mlcc_infer_set_output(node, 0, MLCC_DTYPE_I64, &y);
}

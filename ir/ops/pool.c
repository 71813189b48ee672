// SPDX-License-Identifier: Apache-2.0
// Shape inference for pooling: MaxPool/AveragePool (window geometry from
// spatial.h) and GlobalAveragePool/GlobalMaxPool.
#include <string.h>

#include "ir/ops/infer_impl.h"
#include "ir/ops/spatial.h"

// MaxPool/AveragePool: Y[N, C, out...]; MaxPool's optional Indices is int64.
mlcc_status_t mlcc_infer_pool(mlcc_node_t* node) {
  mlcc_spatial_t g;
  MLCC_RETURN_IF_ERROR(mlcc_spatial_resolve(node, &g));
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_window_output(node, &g, 0, node->inputs[0]->dtype));
  if (node->op == MLCC_OP_MAX_POOL && node->n_outputs > 1) {
    if (node->opset < 8 && node->outputs[1] != NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "MaxPool has an Indices output only from opset 8; the node has "
                              "opset %d",
                              (int)node->opset);
    }
    MLCC_RETURN_IF_ERROR(mlcc_infer_set_window_output(node, &g, 1, MLCC_DTYPE_I64));
  }
  return mlcc_ok_status();
}

// GlobalAveragePool/GlobalMaxPool: X[N, C, D...] -> Y[N, C, 1, ...].
mlcc_status_t mlcc_infer_global_pool(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  if (x->shape.rank < 3) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs input X of rank >= 3 [N,C,D1,...]; got %s",
                            mlcc_infer_op(node), mlcc_infer_fmt_shape(&x->shape, sb));
  }
  mlcc_shape_t y = x->shape;
  for (int32_t d = 2; d < y.rank; ++d) y.dims[d] = 1;
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

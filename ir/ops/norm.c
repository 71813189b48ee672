// SPDX-License-Identifier: Apache-2.0
// Shape inference for normalizations: BatchNormalization (inference mode),
// LayerNormalization, and the validators of InstanceNormalization and
// Softmax/LogSoftmax (whose output is shaped like input 0).
#include <string.h>

#include "ir/ops/infer_impl.h"

// Checks that |v| is a 1-D tensor of |c| elements (per-channel parameter).
static mlcc_status_t check_per_channel(const mlcc_node_t* node, const mlcc_value_t* v,
                                       const char* name, int64_t c) {
  if (v->shape.rank == 1 && v->shape.dims[0] == c) return mlcc_ok_status();
  char sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s needs '%s' of shape [C=%lld] (one value per channel of X); got "
                          "%s",
                          mlcc_infer_op(node), name, (long long)c,
                          mlcc_infer_fmt_shape(&v->shape, sb));
}

// BatchNormalization in inference mode: Y = X's shape and dtype. The
// training-mode outputs (running mean/var, saved stats) are UNIMPLEMENTED.
mlcc_status_t mlcc_infer_batchnorm(mlcc_node_t* node) {
  static const char* const kNames[5] = {"X", "scale", "B", "input_mean", "input_var"};
  mlcc_value_t* in[5] = {0};
  for (uint32_t i = 0; i < 5; ++i) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, kNames[i], true, &in[i]));
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, in[i], kNames[i], MLCC_INFER_DT_FLOAT));
  }
  mlcc_value_t* x = in[0];
  if (x->shape.rank < 2) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "BatchNormalization needs X of rank >= 2 [N,C,...]; got %s",
                            mlcc_infer_fmt_shape(&x->shape, sb));
  }
  for (uint32_t i = 1; i < 5; ++i) {
    // Opset 15 lets scale/B (T1) and mean/var (T2) differ from X's type.
    if (node->opset < 15) {
      MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", in[i], kNames[i]));
    }
    MLCC_RETURN_IF_ERROR(check_per_channel(node, in[i], kNames[i], x->shape.dims[1]));
  }
  float f = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "epsilon", 1e-5f, &f));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "momentum", 0.9f, &f));
  int64_t training = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "training_mode", 0, &training));
  if (training != 0) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "BatchNormalization with training_mode=%lld is not supported "
                            "(mlcc compiles inference only)",
                            (long long)training);
  }
  for (uint32_t i = 1; i < node->n_outputs; ++i) {
    if (node->outputs[i] != NULL) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "BatchNormalization output %u (running/saved statistics) is "
                              "only produced in training mode, which mlcc does not support",
                              i);
    }
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// LayerNormalization (17): Y like X; Mean and InvStdDev have X's dims
// before |axis| followed by 1s, in float32 (stash_type 1).
mlcc_status_t mlcc_infer_layernorm(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *scale = NULL, *b = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "Scale", true, &scale));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "B", false, &b));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", scale, "Scale"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", b, "B"));
  int64_t axis_attr = -1, stash = 1;
  float eps = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis_attr));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "stash_type", 1, &stash));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "epsilon", 1e-5f, &eps));
  if (stash != 1) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s stash_type=%lld is not supported (only 1, float32)",
                            mlcc_infer_op(node), (long long)stash);
  }
  int32_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis_attr, x->shape.rank, &axis));
  mlcc_shape_t norm;
  memset(&norm, 0, sizeof(norm));
  norm.rank = x->shape.rank - axis;
  for (int32_t d = 0; d < norm.rank; ++d) norm.dims[d] = x->shape.dims[axis + d];
  MLCC_RETURN_IF_ERROR(
      mlcc_infer_unidirectional(node, &norm, "X[axis:]", &scale->shape, "Scale"));
  if (b != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_unidirectional(node, &norm, "X[axis:]", &b->shape, "B"));
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 0, x->dtype, &x->shape));
  mlcc_shape_t stat = x->shape;
  for (int32_t d = axis; d < stat.rank; ++d) stat.dims[d] = 1;
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 1, MLCC_DTYPE_F32, &stat));
  return mlcc_infer_set_output(node, 2, MLCC_DTYPE_F32, &stat);
}

mlcc_status_t mlcc_infer_check_instancenorm(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *scale = NULL, *b = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "scale", true, &scale));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "B", true, &b));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "input", scale, "scale"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "input", b, "B"));
  if (x->shape.rank < 3) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "InstanceNormalization needs input of rank >= 3 [N,C,D1,...]; "
                            "got %s",
                            mlcc_infer_fmt_shape(&x->shape, sb));
  }
  MLCC_RETURN_IF_ERROR(check_per_channel(node, scale, "scale", x->shape.dims[1]));
  MLCC_RETURN_IF_ERROR(check_per_channel(node, b, "B", x->shape.dims[1]));
  float eps = 0;
  return mlcc_node_attr_float(node, "epsilon", 1e-5f, &eps);
}

// GroupNormalization: X [N, C, D...] (rank >= 3), attribute num_groups G
// (required, divides C), epsilon (1e-5). scale and bias are [G] at opset 18
// (one value per group) and [C] at opset 21 (per channel). Opset 21's
// stash_type (default 1: the statistics in float32) may be 1 or 11 (float64).
mlcc_status_t mlcc_infer_groupnorm(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *scale = NULL, *b = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "scale", true, &scale));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "bias", true, &b));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", scale, "scale"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", b, "bias"));
  if (x->shape.rank < 3) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GroupNormalization needs X of rank >= 3 [N,C,D1,...]; got %s",
                            mlcc_infer_fmt_shape(&x->shape, sb));
  }
  if (mlcc_node_attr(node, "num_groups") == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GroupNormalization needs the attribute 'num_groups'; it is missing");
  }
  int64_t groups = 0, c = x->shape.dims[1];
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "num_groups", 0, &groups));
  if (groups < 1 || c % groups != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GroupNormalization needs num_groups >= 1 dividing the channels; "
                            "got num_groups=%lld for C=%lld",
                            (long long)groups, (long long)c);
  }
  int64_t per = node->opset >= 21 ? c : groups;
  const char* what = node->opset >= 21 ? "C" : "num_groups";
  const mlcc_value_t* ps[2] = {scale, b};
  static const char* const kNames[2] = {"scale", "bias"};
  for (int i = 0; i < 2; ++i) {
    if (ps[i]->shape.rank != 1 || ps[i]->shape.dims[0] != per) {
      char sb[MLCC_INFER_SHAPE_BUF];
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "GroupNormalization at opset %d needs '%s' of shape [%s=%lld]; "
                              "got %s",
                              (int)node->opset, kNames[i], what, (long long)per,
                              mlcc_infer_fmt_shape(&ps[i]->shape, sb));
    }
  }
  if (node->opset >= 21) {
    int64_t stash = 1;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "stash_type", 1, &stash));
    // stash_type is the TensorProto type of the statistics: float (1) and
    // double (11) are implemented; float16 (10) and bfloat16 (16) are not;
    // anything else is no float type.
    if (stash == 10 || stash == 16) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "GroupNormalization with stash_type=%lld (%s statistics) is not "
                              "supported (only 1, float32, and 11, float64)",
                              (long long)stash, stash == 10 ? "float16" : "bfloat16");
    }
    if (stash != 1 && stash != 11) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "GroupNormalization stash_type must name a float type (1 float, "
                              "10 float16, 11 double, 16 bfloat16); got %lld",
                              (long long)stash);
    }
  }
  float eps = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "epsilon", 1e-5f, &eps));
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// Softmax/LogSoftmax: 'axis' defaults to 1 before opset 13 (2-D coercion)
// and -1 from 13 (per-axis); either way it must name a dim of the input.
mlcc_status_t mlcc_infer_check_softmax(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", node->opset >= 13 ? -1 : 1, &axis));
  // Before 13 the input is coerced to 2-D [prod(d[:axis]), prod(d[axis:])],
  // which is also defined for axis == rank (e.g. the default 1 on a 1-D input).
  int32_t a = 0;
  if (node->opset < 13 && axis == x->shape.rank) return mlcc_ok_status();
  return mlcc_infer_axis(node, "attribute 'axis'", axis, x->shape.rank, &a);
}

// SPDX-License-Identifier: Apache-2.0
// Shape/type inference for the conformance ops (ops.def "Conformance ops"):
// the remaining unary math and classification ops, BitShift, Trilu, CumSum,
// Hardmax, DepthToSpace/SpaceToDepth, EyeLike, CastLike, the loss ops
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), GatherND, the
// scatters, OneHot, TopK, LRN, MeanVarianceNormalization and Einsum.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"
#include "ir/ops/misc.h"

static mlcc_status_t bad(const mlcc_node_t* node, const char* what) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s %s", mlcc_infer_op(node), what);
}

// Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh: float in, same out.
mlcc_status_t mlcc_infer_misc_unary_float(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_FLOAT));
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// Shrink: any numeric type, same shape.
mlcc_status_t mlcc_infer_misc_same_numeric(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_NUMERIC));
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// IsNaN, IsInf: float in, bool out of the same shape.
mlcc_status_t mlcc_infer_misc_isclass(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  return mlcc_infer_set_output(node, 0, MLCC_DTYPE_BOOL, &x->shape);
}

// BitShift: unsigned X and Y of one dtype, broadcast; 'direction' LEFT|RIGHT.
mlcc_status_t mlcc_infer_misc_bitshift(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *y = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "Y", true, &y));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_UINT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", y, "Y"));
  const char* dir = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "direction", NULL, &dir));
  if (dir == NULL || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)) {
    return bad(node, "attribute 'direction' must be \"LEFT\" or \"RIGHT\"");
  }
  mlcc_shape_t s;
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &x->shape, "X", &y->shape, "Y", &s));
  return mlcc_infer_set_output(node, 0, x->dtype, &s);
}

// Trilu: rank >= 2 input; optional int64 scalar k (may be fed at run time).
mlcc_status_t mlcc_infer_misc_trilu(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *k = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "k", false, &k));
  if (x->shape.rank < 2) return bad(node, "input must have rank >= 2");
  if (k != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, k, "k", MLCC_INFER_DT_INT32_64));
    if (mlcc_infer_numel(&k->shape) != 1) return bad(node, "input 'k' must be a scalar");
  }
  int64_t upper = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "upper", 1, &upper));
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// CumSum: numeric x; axis is an int32/int64 scalar (may be fed at run time).
mlcc_status_t mlcc_infer_misc_cumsum(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *axis = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "x", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "x", MLCC_INFER_DT_NUMERIC));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "axis", true, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, axis, "axis", MLCC_INFER_DT_INT32_64));
  if (mlcc_infer_numel(&axis->shape) != 1 || axis->shape.rank > 1) {
    return bad(node, "input 'axis' must be a scalar");
  }
  if (x->shape.rank < 1) return bad(node, "input 'x' must have rank >= 1");
  if (axis->kind == MLCC_VALUE_CONSTANT && axis->data != NULL) {
    int32_t a = 0;
    MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "input 'axis'", mlcc_value_const_i64(axis, 0),
                                         x->shape.rank, &a));
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// Hardmax: float; 'axis' in range (opset < 13 coerces to 2-D at axis).
mlcc_status_t mlcc_infer_misc_hardmax(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_FLOAT));
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", node->opset >= 13 ? -1 : 1, &axis));
  int32_t a = 0;
  if (node->opset < 13) {
    // 1-12 allow axis == rank (everything in one row).
    if (axis < -(int64_t)x->shape.rank || axis > x->shape.rank) {
      return bad(node, "attribute 'axis' is out of range");
    }
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis, x->shape.rank, &a));
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// DepthToSpace / SpaceToDepth on [N, C, H, W] with 'blocksize'.
mlcc_status_t mlcc_infer_misc_depth_space(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, x, "input", 4));
  int64_t b = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "blocksize", 0, &b));
  if (b <= 0 || b > (1 << 20)) return bad(node, "attribute 'blocksize' must be positive");
  const char* mode = "DCR";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "DCR", &mode));
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0) {
    return bad(node, "attribute 'mode' must be \"DCR\" or \"CRD\"");
  }
  mlcc_shape_t y = x->shape;
  if (node->op == MLCC_OP_DEPTH_TO_SPACE) {
    if (x->shape.dims[1] % (b * b) != 0) {
      return bad(node, "input channels must be a multiple of blocksize^2");
    }
    y.dims[1] = x->shape.dims[1] / (b * b);
    MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "output height", x->shape.dims[2], b, &y.dims[2]));
    MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "output width", x->shape.dims[3], b, &y.dims[3]));
  } else {
    if (x->shape.dims[2] % b != 0 || x->shape.dims[3] % b != 0) {
      return bad(node, "input height and width must be multiples of blocksize");
    }
    MLCC_RETURN_IF_ERROR(
        mlcc_infer_mul(node, "output channels", x->shape.dims[1], b * b, &y.dims[1]));
    y.dims[2] = x->shape.dims[2] / b;
    y.dims[3] = x->shape.dims[3] / b;
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// EyeLike: 2-D input; output dtype 'dtype' (default: the input's).
mlcc_status_t mlcc_infer_misc_eyelike(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, x, "input", 2));
  int64_t dt = x->dtype, k = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "dtype", x->dtype, &dt));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "k", 0, &k));
  if (dt < 0 || dt > 64 || !mlcc_dtype_is_valid((mlcc_dtype_t)dt)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "EyeLike to ONNX data type %lld is not "
                            "supported", (long long)dt);
  }
  return mlcc_infer_set_output(node, 0, (mlcc_dtype_t)dt, &x->shape);
}

// CastLike: input's shape, target_type's dtype.
mlcc_status_t mlcc_infer_misc_castlike(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *like = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "target_type", true, &like));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, like, "target_type", MLCC_INFER_DT_ANY));
  int64_t saturate = 1;  // 19+: an int, read by float8 targets (Cast's tables)
  if (node->opset >= 19) MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "saturate", 1, &saturate));
  if (node->opset >= 24) MLCC_RETURN_IF_ERROR(mlcc_infer_round_mode(node));
  return mlcc_infer_set_output(node, 0, like->dtype, &x->shape);
}

// Shared by the losses: scores [N, C, d...], labels [N, d...] (int32/64),
// weights [C]; reduction none|sum|mean; output [N, d...] or a scalar.
static mlcc_status_t infer_loss(mlcc_node_t* node, const char* x_name, const char* t_name) {
  mlcc_value_t *x = NULL, *t = NULL, *w = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, x_name, true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, t_name, true, &t));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "weights", false, &w));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, x_name, MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, t, t_name, MLCC_INFER_DT_INT32_64));
  if (x->shape.rank < 2 || t->shape.rank != x->shape.rank - 1) {
    return bad(node, "needs scores of rank >= 2 and labels of rank one less");
  }
  if (t->shape.dims[0] != x->shape.dims[0]) return bad(node, "batch dims disagree");
  for (int32_t d = 2; d < x->shape.rank; ++d) {
    if (t->shape.dims[d - 1] != x->shape.dims[d]) return bad(node, "spatial dims disagree");
  }
  if (w != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, x_name, w, "weights"));
    if (w->shape.rank != 1 || w->shape.dims[0] != x->shape.dims[1]) {
      return bad(node, "input 'weights' must be 1-D of size C");
    }
  }
  const char* red = "mean";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "reduction", "mean", &red));
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  if (strcmp(red, "none") == 0) {
    y = t->shape;
  } else if (strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0) {
    return bad(node, "attribute 'reduction' must be none, sum or mean");
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 0, x->dtype, &y));
  if (node->op == MLCC_OP_SOFTMAX_CROSS_ENTROPY_LOSS) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 1, x->dtype, &x->shape));
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_misc_loss(mlcc_node_t* node) {
  if (node->op == MLCC_OP_SOFTMAX_CROSS_ENTROPY_LOSS) return infer_loss(node, "scores", "labels");
  return infer_loss(node, "input", "target");
}

// GatherND: out = indices.shape[:-1] + data.shape[batch_dims + k:].
mlcc_status_t mlcc_infer_misc_gathernd(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *idx = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "indices", true, &idx));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "data", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, idx, "indices", MLCC_INFER_DT_INT32_64));
  int64_t b = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "batch_dims", 0, &b));
  int32_t q = idx->shape.rank, r = x->shape.rank;
  if (q < 1 || r < 1 || b < 0 || b >= q || b >= r) return bad(node, "has bad ranks/batch_dims");
  int64_t k = idx->shape.dims[q - 1];
  if (k < 1 || b + k > r) return bad(node, "indices' last dim exceeds the data rank");
  for (int64_t d = 0; d < b; ++d) {
    if (idx->shape.dims[d] != x->shape.dims[d]) return bad(node, "batch dims disagree");
  }
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  for (int32_t d = 0; d < q - 1; ++d) y.dims[y.rank++] = idx->shape.dims[d];
  for (int64_t d = b + k; d < r; ++d) {
    if (y.rank >= MLCC_MAX_RANK) return bad(node, "output rank is too large");
    y.dims[y.rank++] = x->shape.dims[d];
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// ScatterElements/ScatterND 'reduction': none (11+), add and mul (16+), max
// and min (18+).
static mlcc_status_t check_reduction(const mlcc_node_t* node) {
  const char* red = "none";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "reduction", "none", &red));
  bool ok = strcmp(red, "none") == 0;
  if (node->opset >= 16) ok = ok || strcmp(red, "add") == 0 || strcmp(red, "mul") == 0;
  if (node->opset >= 18) ok = ok || strcmp(red, "max") == 0 || strcmp(red, "min") == 0;
  if (!ok) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'reduction' must be %s at opset %d; got '%s'",
                            mlcc_infer_op(node),
                            node->opset >= 18   ? "none, add, mul, max or min"
                            : node->opset >= 16 ? "none, add or mul"
                                                : "none",
                            (int)node->opset, red);
  }
  return mlcc_ok_status();
}

// ScatterElements / Scatter: out = data; indices and updates share a shape.
mlcc_status_t mlcc_infer_misc_scatter_elements(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *idx = NULL, *upd = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "indices", true, &idx));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "updates", true, &upd));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "data", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, idx, "indices", MLCC_INFER_DT_INT32_64));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "data", upd, "updates"));
  if (!mlcc_shape_equal(&idx->shape, &upd->shape) || idx->shape.rank != x->shape.rank) {
    return bad(node, "needs indices and updates of one shape and the data's rank");
  }
  int64_t axis = 0;
  int32_t a = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis, x->shape.rank, &a));
  MLCC_RETURN_IF_ERROR(check_reduction(node));
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// ScatterND: updates.shape = indices.shape[:-1] + data.shape[k:].
mlcc_status_t mlcc_infer_misc_scatternd(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *idx = NULL, *upd = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "indices", true, &idx));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "updates", true, &upd));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "data", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, idx, "indices", MLCC_INFER_DT_INT32_64));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "data", upd, "updates"));
  int32_t q = idx->shape.rank, r = x->shape.rank;
  if (q < 1) return bad(node, "indices must have rank >= 1");
  int64_t k = idx->shape.dims[q - 1];
  if (k < 1 || k > r) return bad(node, "indices' last dim exceeds the data rank");
  if (upd->shape.rank != q - 1 + r - k) return bad(node, "updates has the wrong rank");
  for (int32_t d = 0; d < q - 1; ++d) {
    if (upd->shape.dims[d] != idx->shape.dims[d]) return bad(node, "updates' dims disagree");
  }
  for (int64_t d = k; d < r; ++d) {
    if (upd->shape.dims[q - 1 + d - k] != x->shape.dims[d]) {
      return bad(node, "updates' dims disagree");
    }
  }
  MLCC_RETURN_IF_ERROR(check_reduction(node));
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// OneHot: depth must be constant (it is the size of the new axis).
mlcc_status_t mlcc_infer_misc_onehot(mlcc_node_t* node) {
  mlcc_value_t *idx = NULL, *vals = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "indices", true, &idx));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, idx, "indices", MLCC_INFER_DT_NUMERIC));
  mlcc_value_t* dv = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_input(node, 1, "depth", "size of the one-hot axis",
                                              true, &dv));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, dv, "depth", MLCC_INFER_DT_NUMERIC));
  if (mlcc_infer_numel(&dv->shape) != 1 || dv->shape.rank > 1) {
    return bad(node, "input 'depth' must hold one value");
  }
  double depth = mlcc_value_const_f64(dv, 0);
  if (!(depth >= 1) || depth > 1e9) return bad(node, "input 'depth' must be >= 1");
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "values", true, &vals));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, vals, "values", MLCC_INFER_DT_ANY));
  if (mlcc_infer_numel(&vals->shape) != 2) return bad(node, "input 'values' must have 2 elements");
  int64_t axis = -1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis));
  int32_t a = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis, idx->shape.rank + 1, &a));
  if (idx->shape.rank + 1 > MLCC_MAX_RANK) return bad(node, "output rank is too large");
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = idx->shape.rank + 1;
  for (int32_t d = 0, s = 0; d < y.rank; ++d) {
    y.dims[d] = d == a ? (int64_t)depth : idx->shape.dims[s++];
  }
  return mlcc_infer_set_output(node, 0, vals->dtype, &y);
}

// TopK: K must be constant (it is the size of the outputs' axis).
mlcc_status_t mlcc_infer_misc_topk(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_NUMERIC));
  int64_t k = 0;
  if (node->opset < 10) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "k", -1, &k));
  } else {
    uint32_t n = 0;
    bool present = false;
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "K", "number of results", true, true,
                                               &k, 1, &n, &present));
    if (n != 1) return bad(node, "input 'K' must hold one value");
  }
  int64_t axis = -1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis));
  int32_t a = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis, x->shape.rank, &a));
  if (k < 0 || k > x->shape.dims[a]) return bad(node, "K is out of range for the axis");
  mlcc_shape_t y = x->shape;
  y.dims[a] = k;
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 0, x->dtype, &y));
  return mlcc_infer_set_output(node, 1, MLCC_DTYPE_I64, &y);
}

// LRN: float [N, C, ...]; 'size' required.
mlcc_status_t mlcc_infer_misc_lrn(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  if (x->shape.rank < 2) return bad(node, "input must have rank >= 2");
  int64_t size = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "size", 0, &size));
  if (size < 1) return bad(node, "attribute 'size' must be >= 1");
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// MeanVarianceNormalization: float; 'axes' (default [0, 2, 3]).
mlcc_status_t mlcc_infer_misc_mvn(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  const int64_t* axes = NULL;
  uint32_t n = 0, mask = 0;
  static const int64_t kDefault[3] = {0, 2, 3};
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &axes, &n));
  if (axes == NULL) {
    axes = kDefault;
    n = 3;
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "attribute 'axes'", axes, n, x->shape.rank,
                                            &mask));
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

static int label_of(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// Parses one term ("ij", "...ii", "b...") of |len| chars into labels;
// |rank| is the operand's rank (-1 for the output: ellipsis dims |ell|).
static mlcc_status_t parse_term(const mlcc_node_t* node, const char* s, size_t len,
                                int32_t rank, int32_t* ell, int32_t* labels,
                                int32_t* out_rank) {
  int32_t n_letters = 0;
  bool has_ell = false;
  for (size_t i = 0; i < len; ++i) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      if (has_ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') {
        return bad(node, "has a malformed ellipsis in 'equation'");
      }
      has_ell = true;
      i += 2;
      continue;
    }
    if (label_of(s[i]) < 0) return bad(node, "has a bad character in 'equation'");
    ++n_letters;
  }
  int32_t n_ell = 0;
  if (rank >= 0) {
    n_ell = rank - n_letters;
    if (n_ell < 0 || (!has_ell && n_ell != 0)) {
      return bad(node, "equation term does not match its operand's rank");
    }
    if (has_ell && n_ell > *ell) *ell = n_ell;
  } else {
    n_ell = has_ell ? *ell : 0;
  }
  int32_t r = 0;
  for (size_t i = 0; i < len; ++i) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      for (int32_t e = n_ell - 1; e >= 0; --e) {
        if (r >= MLCC_MAX_RANK) return bad(node, "equation term has too many dims");
        labels[r++] = 52 + e;
      }
      i += 2;
      continue;
    }
    if (r >= MLCC_MAX_RANK) return bad(node, "equation term has too many dims");
    labels[r++] = label_of(s[i]);
  }
  *out_rank = r;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_einsum_parse(const mlcc_node_t* node, mlcc_einsum_t* e) {
  memset(e, 0, sizeof(*e));
  const char* eq = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "equation", NULL, &eq));
  if (eq == NULL) return bad(node, "needs attribute 'equation'");
  if (node->n_inputs == 0 || node->n_inputs > MLCC_EINSUM_MAX_INPUTS) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "Einsum with %u inputs (1..%d supported)",
                            node->n_inputs, MLCC_EINSUM_MAX_INPUTS);
  }
  e->n_inputs = node->n_inputs;
  for (int32_t l = 0; l < MLCC_EINSUM_MAX_LABELS; ++l) e->label_dim[l] = -1;
  const char* arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
  int32_t ell = 0;
  const char* p = eq;
  int32_t count[MLCC_EINSUM_MAX_LABELS] = {0};
  for (uint32_t i = 0; i < e->n_inputs; ++i) {
    const char* end = memchr(p, ',', (size_t)(eq + lhs_len - p));
    if (i + 1 < e->n_inputs && end == NULL) return bad(node, "'equation' has too few terms");
    if (i + 1 == e->n_inputs) {
      if (end != NULL) return bad(node, "'equation' has too many terms");
      end = eq + lhs_len;
    }
    const mlcc_value_t* v = node->inputs[i];
    if (v == NULL || !v->shape_known) return bad(node, "has a missing input");
    MLCC_RETURN_IF_ERROR(parse_term(node, p, (size_t)(end - p), v->shape.rank, &ell,
                                    e->in_labels[i], &e->in_rank[i]));
    for (int32_t d = 0; d < e->in_rank[i]; ++d) {
      int32_t l = e->in_labels[i][d];
      int64_t dim = v->shape.dims[d];
      ++count[l];
      if (e->label_dim[l] < 0 || (l >= 52 && e->label_dim[l] == 1)) {
        e->label_dim[l] = dim;
      } else if (dim != e->label_dim[l] && !(l >= 52 && dim == 1)) {
        return bad(node, "operand dims disagree for one 'equation' label");
      }
    }
    p = end + 1;
  }
  if (arrow != NULL) {
    MLCC_RETURN_IF_ERROR(parse_term(node, arrow + 2, strlen(arrow + 2), -1, &ell,
                                    e->out_labels, &e->out_rank));
    for (int32_t d = 0; d < e->out_rank; ++d) {
      int32_t l = e->out_labels[d];
      if (e->label_dim[l] < 0) return bad(node, "output label does not occur in the inputs");
      for (int32_t d2 = 0; d2 < d; ++d2) {
        if (e->out_labels[d2] == l) return bad(node, "repeats an output label");
      }
    }
  } else {
    // Implicit: ellipsis dims first, then labels seen once, alphabetically.
    for (int32_t x = ell - 1; x >= 0; --x) e->out_labels[e->out_rank++] = 52 + x;
    static const int32_t kOrder[52] = {
        26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
        44, 45, 46, 47, 48, 49, 50, 51, 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
        10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25};
    for (int32_t j = 0; j < 52; ++j) {
      if (count[kOrder[j]] == 1) {
        if (e->out_rank >= MLCC_MAX_RANK) return bad(node, "output rank is too large");
        e->out_labels[e->out_rank++] = kOrder[j];
      }
    }
  }
  for (int32_t l = 0; l < MLCC_EINSUM_MAX_LABELS; ++l) {
    if (e->label_dim[l] < 0) continue;
    bool in_out = false;
    for (int32_t d = 0; d < e->out_rank; ++d) in_out |= e->out_labels[d] == l;
    if (!in_out) e->sum_labels[e->n_sum++] = l;
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_misc_einsum(mlcc_node_t* node) {
  mlcc_value_t* first = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "Inputs", true, &first));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, first, "Inputs", MLCC_INFER_DT_NUMERIC));
  for (uint32_t i = 1; i < node->n_inputs; ++i) {
    mlcc_value_t* v = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, "Inputs", true, &v));
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, first, "Inputs[0]", v, "Inputs[i]"));
  }
  mlcc_einsum_t e;
  MLCC_RETURN_IF_ERROR(mlcc_einsum_parse(node, &e));
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = e.out_rank;
  for (int32_t d = 0; d < e.out_rank; ++d) y.dims[d] = e.label_dim[e.out_labels[d]];
  return mlcc_infer_set_output(node, 0, first->dtype, &y);
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding (23)
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_rotary_resolve(const mlcc_node_t* node, mlcc_rotary_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_value_t *x = NULL, *cos = NULL, *sin = NULL, *pos = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "cos_cache", true, &cos));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "sin_cache", true, &sin));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "position_ids", false, &pos));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", cos, "cos_cache"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", sin, "sin_cache"));
  int64_t heads = 0, rot = 0, inter = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "num_heads", 0, &heads));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "rotary_embedding_dim", 0, &rot));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "interleaved", 0, &inter));
  const int64_t* d = x->shape.dims;
  char sb[MLCC_INFER_SHAPE_BUF];
  if (x->shape.rank == 4) {
    out->batch = d[0], out->heads = d[1], out->seq = d[2], out->head_size = d[3];
    out->x_h = d[2] * d[3], out->x_s = d[3], out->x_b = d[1] * d[2] * d[3];
    if (heads != 0 && heads != d[1]) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "RotaryEmbedding num_heads=%lld disagrees with X%s [B,H,S,D]",
                              (long long)heads, mlcc_infer_fmt_shape(&x->shape, sb));
    }
  } else if (x->shape.rank == 3) {
    if (heads <= 0 || d[2] % heads != 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "RotaryEmbedding with a 3-D X%s needs num_heads >= 1 dividing "
                              "the hidden size; got num_heads=%lld",
                              mlcc_infer_fmt_shape(&x->shape, sb), (long long)heads);
    }
    out->batch = d[0], out->seq = d[1], out->heads = heads, out->head_size = d[2] / heads;
    out->x_b = d[1] * d[2], out->x_s = d[2], out->x_h = out->head_size;
  } else {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "RotaryEmbedding needs X of rank 3 [B,S,H*D] or 4 [B,H,S,D]; got %s",
                            mlcc_infer_fmt_shape(&x->shape, sb));
  }
  out->rot = rot == 0 ? out->head_size : rot;
  if (out->rot < 0 || out->rot > out->head_size || out->rot % 2 != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "RotaryEmbedding rotary_embedding_dim must be even and <= the head "
                            "size %lld; got %lld",
                            (long long)out->head_size, (long long)out->rot);
  }
  out->interleaved = inter != 0;
  out->has_pos = pos != NULL;
  const int64_t half = out->rot / 2;
  const mlcc_value_t* caches[2] = {cos, sin};
  for (int i = 0; i < 2; ++i) {
    const mlcc_shape_t* c = &caches[i]->shape;
    bool ok = pos != NULL ? c->rank == 2 && c->dims[1] == half
                          : c->rank == 3 && c->dims[0] == out->batch &&
                                c->dims[1] == out->seq && c->dims[2] == half;
    if (!ok) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "RotaryEmbedding needs %s of shape %s with rot/2 = %lld; got %s",
                              i == 0 ? "cos_cache" : "sin_cache",
                              pos != NULL ? "[max_position+1, rot/2] (position_ids given)"
                                          : "[B, S, rot/2] (no position_ids)",
                              (long long)half, mlcc_infer_fmt_shape(c, sb));
    }
  }
  if (!mlcc_shape_equal(&cos->shape, &sin->shape)) {
    return bad(node, "needs cos_cache and sin_cache of the same shape");
  }
  if (pos != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, pos, "position_ids",
                                                MLCC_INFER_DT_INT32_64));
    if (pos->dtype != MLCC_DTYPE_I64 || pos->shape.rank != 2 ||
        pos->shape.dims[0] != out->batch || pos->shape.dims[1] != out->seq) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "RotaryEmbedding needs int64 position_ids of shape [B=%lld, "
                              "S=%lld]; got %s %s",
                              (long long)out->batch, (long long)out->seq,
                              mlcc_dtype_name(pos->dtype), mlcc_infer_fmt_shape(&pos->shape, sb));
    }
    out->positions = cos->shape.dims[0];
  }
  return mlcc_ok_status();
}

// RotaryEmbedding: Y like X.
mlcc_status_t mlcc_infer_misc_rotary(mlcc_node_t* node) {
  mlcc_rotary_t r;
  MLCC_RETURN_IF_ERROR(mlcc_rotary_resolve(node, &r));
  return mlcc_infer_set_output(node, 0, node->inputs[0]->dtype, &node->inputs[0]->shape);
}

//===----------------------------------------------------------------------===//
// Attention (23-25)
//===----------------------------------------------------------------------===//

// Strides (b, h, s) of a [B, H, S, D] (|four|) or [B, S, H*D] tensor.
static void attention_strides(bool four, int64_t h, int64_t s, int64_t d, int64_t* sb,
                              int64_t* sh, int64_t* ss) {
  if (four) {
    *sb = h * s * d, *sh = s * d, *ss = d;
  } else {
    *sb = s * h * d, *sh = d, *ss = h * d;
  }
}

mlcc_status_t mlcc_attention_resolve(const mlcc_node_t* node, mlcc_attention_t* out,
                                     mlcc_shape_t* out_y) {
  memset(out, 0, sizeof(*out));
  static const char* const kNames[7] = {"Q",        "K",          "V",
                                        "attn_mask", "past_key",  "past_value",
                                        "nonpad_kv_seqlen"};
  mlcc_value_t* in[7] = {0};
  for (uint32_t i = 0; i < 7; ++i) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, kNames[i], i < 3, &in[i]));
  }
  mlcc_value_t *q = in[0], *k = in[1], *v = in[2], *mask = in[3], *pk = in[4], *pv = in[5];
  mlcc_value_t* nonpad = in[6];
  if (nonpad != NULL && node->opset < 24) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Attention-%d has 6 inputs; nonpad_kv_seqlen (input 6) is "
                            "Attention-24",
                            node->opset);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, q, "Q", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, q, "Q", k, "K"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, q, "Q", v, "V"));
  out->qk_mode = -1;
  int64_t mode = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "qk_matmul_output_mode", 0, &mode));
  if (mode < 0 || mode > 3) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Attention qk_matmul_output_mode must be 0, 1, 2 or 3; got %lld",
                            (long long)mode);
  }
  if (node->n_outputs > 3 && node->outputs[3] != NULL) out->qk_mode = (int)mode;
  if ((pk == NULL) != (pv == NULL)) {
    return bad(node, "needs both past_key and past_value, or neither");
  }
  char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF], sc[MLCC_INFER_SHAPE_BUF];
  int32_t r = q->shape.rank;
  if ((r != 3 && r != 4) || k->shape.rank != r || v->shape.rank != r) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Attention needs Q, K and V all 4-D [B,H,S,D] or all 3-D "
                            "[B,S,H*D]; got Q%s K%s V%s",
                            mlcc_infer_fmt_shape(&q->shape, sa),
                            mlcc_infer_fmt_shape(&k->shape, sb),
                            mlcc_infer_fmt_shape(&v->shape, sc));
  }
  const int64_t *qd = q->shape.dims, *kd = k->shape.dims, *vd = v->shape.dims;
  const bool four = r == 4;
  if (four) {
    out->batch = qd[0], out->q_heads = qd[1], out->q_seq = qd[2], out->head = qd[3];
    out->kv_heads = kd[1], out->kv_seq = kd[2], out->v_head = vd[3];
    if (kd[3] != out->head || vd[1] != kd[1] || vd[2] != kd[2]) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Attention needs K [B,Hkv,Skv,D] and V [B,Hkv,Skv,Dv] matching "
                              "Q%s; got K%s V%s",
                              mlcc_infer_fmt_shape(&q->shape, sa),
                              mlcc_infer_fmt_shape(&k->shape, sb),
                              mlcc_infer_fmt_shape(&v->shape, sc));
    }
  } else {
    int64_t hq = 0, hkv = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "q_num_heads", 0, &hq));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "kv_num_heads", 0, &hkv));
    if (hq <= 0 || hkv <= 0 || qd[2] % hq != 0 || kd[2] % hkv != 0 || vd[2] % hkv != 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Attention with 3-D inputs needs q_num_heads and kv_num_heads "
                              "dividing the hidden sizes; got q_num_heads=%lld, "
                              "kv_num_heads=%lld for Q%s K%s V%s",
                              (long long)hq, (long long)hkv,
                              mlcc_infer_fmt_shape(&q->shape, sa),
                              mlcc_infer_fmt_shape(&k->shape, sb),
                              mlcc_infer_fmt_shape(&v->shape, sc));
    }
    out->batch = qd[0], out->q_seq = qd[1], out->q_heads = hq, out->head = qd[2] / hq;
    out->kv_seq = kd[1], out->kv_heads = hkv, out->v_head = vd[2] / hkv;
    if (kd[2] / hkv != out->head || vd[1] != kd[1]) {
      return bad(node, "needs K's head size equal to Q's and V's sequence length equal to K's");
    }
  }
  if (kd[0] != out->batch || vd[0] != out->batch) return bad(node, "needs one batch size");
  if (out->kv_heads <= 0 || out->q_heads % out->kv_heads != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Attention needs q_num_heads (%lld) to be a multiple of "
                            "kv_num_heads (%lld)",
                            (long long)out->q_heads, (long long)out->kv_heads);
  }
  if (pk != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, q, "Q", pk, "past_key"));
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, q, "Q", pv, "past_value"));
    const int64_t *a = pk->shape.dims, *b = pv->shape.dims;
    if (pk->shape.rank != 4 || pv->shape.rank != 4 || a[0] != out->batch ||
        a[1] != out->kv_heads || a[3] != out->head || b[0] != out->batch ||
        b[1] != out->kv_heads || b[2] != a[2] || b[3] != out->v_head) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Attention needs past_key [B,Hkv,P,D] and past_value [B,Hkv,P,Dv]; "
                              "got %s and %s",
                              mlcc_infer_fmt_shape(&pk->shape, sa),
                              mlcc_infer_fmt_shape(&pv->shape, sb));
    }
    out->past = a[2];
  }
  out->total = out->past + out->kv_seq;
  attention_strides(four, out->q_heads, out->q_seq, out->head, &out->q_b, &out->q_h, &out->q_s);
  attention_strides(four, out->kv_heads, out->kv_seq, out->head, &out->k_b, &out->k_h,
                    &out->k_s);
  attention_strides(four, out->kv_heads, out->kv_seq, out->v_head, &out->v_b, &out->v_h,
                    &out->v_s);
  attention_strides(four, out->q_heads, out->q_seq, out->v_head, &out->y_b, &out->y_h,
                    &out->y_s);
  int64_t causal = 0;
  float scale = 0, softcap = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "is_causal", 0, &causal));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "softcap", 0.f, &softcap));
  if (causal != 0 && causal != 1) {  // the spec's attribute is 0 or 1
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Attention is_causal must be 0 or 1; got %lld",
                            (long long)causal);
  }
  out->causal = causal != 0;
  out->softcap = softcap;
  static const char* const kWin[2] = {"left_window_size", "right_window_size"};
  int64_t win[2] = {-1, -1};
  for (int w = 0; w < 2; ++w) {
    if (mlcc_node_attr(node, kWin[w]) == NULL) continue;
    if (node->opset < 25) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Attention-%d has no attribute %s (it is Attention-25)",
                              node->opset, kWin[w]);
    }
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, kWin[w], -1, &win[w]));
    if (win[w] < -1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Attention %s must be -1 (unbounded) or >= 0; got %lld", kWin[w],
                              (long long)win[w]);
    }
  }
  out->left_window = win[0];
  out->right_window = win[1];
  if (mlcc_node_attr(node, "scale") != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "scale", 0.f, &scale));
    out->scale = scale;
  } else {
    out->scale = out->head > 0 ? 1.0 / sqrt((double)out->head) : 1.0;
  }
  out->softmax_dt = q->dtype;
  if (mlcc_node_attr(node, "softmax_precision") != NULL) {
    int64_t prec = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "softmax_precision", 0, &prec));
    if (prec != MLCC_DTYPE_F32 && prec != MLCC_DTYPE_F16 && prec != MLCC_DTYPE_F64 &&
        prec != MLCC_DTYPE_BF16) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Attention softmax_precision must be 1 (float), 10 (float16), 11 "
                              "(double) or 16 (bfloat16); got %lld",
                              (long long)prec);
    }
    out->softmax_dt = (mlcc_dtype_t)prec;
  }
  if (nonpad != NULL) {
    if (nonpad->dtype != MLCC_DTYPE_I64 || nonpad->shape.rank != 1 ||
        nonpad->shape.dims[0] != out->batch) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Attention nonpad_kv_seqlen must be int64 [batch_size=%lld]; got "
                              "%s %s",
                              (long long)out->batch, mlcc_dtype_name(nonpad->dtype),
                              mlcc_infer_fmt_shape(&nonpad->shape, sa));
    }
    out->nonpad = true;
  }
  out->m_len = out->total;
  if (mask != NULL) {
    // bool: true attends; any other numeric type is an additive bias (the
    // function body casts it to T1 and adds it).
    out->mask_kind = mask->dtype == MLCC_DTYPE_BOOL ? 1 : 2;
    const int64_t want[4] = {out->batch, out->q_heads, out->q_seq, out->total};
    int32_t mr = mask->shape.rank;
    if (mr < 1 || mr > 4) return bad(node, "attn_mask must have rank 1 to 4");
    int64_t stride = 1;
    for (int32_t kk = 3; kk >= 0; --kk) {
      int32_t md = kk - (4 - mr);
      if (md < 0) {
        out->m_stride[kk] = 0;
        continue;
      }
      int64_t dim = mask->shape.dims[md];
      // Attention-24 pads a shorter key axis of the mask to total with -inf
      // (false); Attention-23 broadcasts a key axis of 1.
      if (kk == 3 && node->opset >= 24 && dim < want[3]) out->m_len = dim;
      if (dim != 1 && dim != want[kk] && !(kk == 3 && out->m_len == dim)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Attention attn_mask %s does not broadcast to [B=%lld, "
                                "Hq=%lld, Sq=%lld, total=%lld]",
                                mlcc_infer_fmt_shape(&mask->shape, sa), (long long)want[0],
                                (long long)want[1], (long long)want[2], (long long)want[3]);
      }
      out->m_stride[kk] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
  }
  if (out_y != NULL) {
    *out_y = q->shape;
    if (four) out_y->dims[3] = out->v_head;
    else out_y->dims[2] = out->q_heads * out->v_head;
  }
  return mlcc_ok_status();
}

// Attention: Y [B,Hq,Sq,Dv] or [B,Sq,Hq*Dv]; present_key/present_value
// [B,Hkv,total,D|Dv]; qk_matmul_output [B,Hq,Sq,total], all of Q's type.
mlcc_status_t mlcc_infer_misc_attention(mlcc_node_t* node) {
  mlcc_attention_t a;
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_attention_resolve(node, &a, &y));
  mlcc_dtype_t dt = node->inputs[0]->dtype;
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 0, dt, &y));
  mlcc_shape_t pk = {.rank = 4, .dims = {a.batch, a.kv_heads, a.total, a.head}};
  mlcc_shape_t pv = {.rank = 4, .dims = {a.batch, a.kv_heads, a.total, a.v_head}};
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 1, dt, &pk));
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 2, dt, &pv));
  mlcc_shape_t qk = {.rank = 4, .dims = {a.batch, a.q_heads, a.q_seq, a.total}};
  return mlcc_infer_set_output(node, 3, dt, &qk);
}

//===----------------------------------------------------------------------===//
// BitCast (26)
//===----------------------------------------------------------------------===//

// BitCast: output of type 'to' (required), X's shape; the element sizes must
// match. bool (whose only valid bytes are 0 and 1) and the types mlcc cannot
// represent are UNIMPLEMENTED.
mlcc_status_t mlcc_infer_misc_bitcast(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  if (mlcc_node_attr(node, "to") == NULL) return bad(node, "needs the attribute 'to'");
  int64_t to = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "to", 0, &to));
  if (to < 1 || to > 26 || to == 8) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "BitCast attribute 'to' must be a non-string ONNX data type in "
                            "[1, 26]; got %lld",
                            (long long)to);
  }
  mlcc_dtype_t t = (mlcc_dtype_t)to;
  if (!mlcc_dtype_is_valid(t) || t == MLCC_DTYPE_BOOL || x->dtype == MLCC_DTYPE_BOOL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "BitCast from %s to %s is not supported",
                            mlcc_dtype_name(x->dtype), mlcc_dtype_name(t));
  }
  if (mlcc_dtype_size(t) != mlcc_dtype_size(x->dtype)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "BitCast needs types of the same bit width; got %s (%zu bits) to "
                            "%s (%zu bits)",
                            mlcc_dtype_name(x->dtype), 8 * mlcc_dtype_size(x->dtype),
                            mlcc_dtype_name(t), 8 * mlcc_dtype_size(t));
  }
  return mlcc_infer_set_output(node, 0, t, &x->shape);
}

//===----------------------------------------------------------------------===//
// AffineGrid (20)
//===----------------------------------------------------------------------===//

// AffineGrid: theta [N,2,3] (2-D) or [N,3,4] (3-D), constant int64 size
// [N,C,H,W] or [N,C,D,H,W] -> grid [N,H,W,2] or [N,D,H,W,3] of theta's type.
mlcc_status_t mlcc_infer_misc_affine_grid(mlcc_node_t* node) {
  mlcc_value_t* theta = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "theta", true, &theta));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, theta, "theta", MLCC_INFER_DT_FLOAT));
  int64_t size[5];
  uint32_t n = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "size", "output size", true, false, size,
                                             5, &n, &present));
  const int64_t* t = theta->shape.dims;
  char sa[MLCC_INFER_SHAPE_BUF];
  bool two = n == 4;
  if ((n != 4 && n != 5) || theta->shape.rank != 3 || t[0] != size[0] ||
      t[1] != (two ? 2 : 3) || t[2] != (two ? 3 : 4)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "AffineGrid needs theta [N,2,3] with size [N,C,H,W] or theta "
                            "[N,3,4] with size [N,C,D,H,W]; got theta %s and %u size values",
                            mlcc_infer_fmt_shape(&theta->shape, sa), n);
  }
  mlcc_shape_t y = {.rank = (int32_t)n};
  y.dims[0] = size[0];
  for (uint32_t i = 2; i < n; ++i) {
    if (size[i] < 0) return bad(node, "needs non-negative sizes");
    y.dims[i - 1] = size[i];
  }
  y.dims[n - 1] = two ? 2 : 3;
  int64_t align = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "align_corners", 0, &align));
  return mlcc_infer_set_output(node, 0, theta->dtype, &y);
}

//===----------------------------------------------------------------------===//
// LpNormalization (1, 22), GlobalLpPool (2, 22)
//===----------------------------------------------------------------------===//

// LpNormalization: float input, 'axis' (default -1) names a dim, p 1 or 2.
mlcc_status_t mlcc_infer_misc_lp_norm(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_FLOAT));
  int64_t axis = -1, p = 2;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "p", 2, &p));
  int32_t a = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis, x->shape.rank, &a));
  if (p != 1 && p != 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "LpNormalization attribute 'p' must be 1 or 2; got %lld",
                            (long long)p);
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// GlobalLpPool: X [N, C, D...] (rank >= 3) -> [N, C, 1...]; integer p >= 1.
mlcc_status_t mlcc_infer_misc_global_lp_pool(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  if (x->shape.rank < 3) return bad(node, "needs X of rank >= 3 [N,C,D1,...]");
  int64_t p = 2;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "p", 2, &p));
  if (p < 1 || p > 64) {
    return mlcc_make_status(p < 1 ? MLCC_STATUS_INVALID_MODEL : MLCC_STATUS_UNIMPLEMENTED,
                            "GlobalLpPool attribute 'p' must be in [1, 64] here; got %lld",
                            (long long)p);
  }
  mlcc_shape_t y = x->shape;
  for (int32_t d = 2; d < y.rank; ++d) y.dims[d] = 1;
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// TensorScatter (24)
//===----------------------------------------------------------------------===//

// TensorScatter: present_cache like past_cache; update has past_cache's
// shape but for a sequence dim ('axis', default -2, not 0) no longer than
// past's; optional int64 write_indices [B]; mode linear or circular.
mlcc_status_t mlcc_infer_misc_tensor_scatter(mlcc_node_t* node) {
  mlcc_value_t *past = NULL, *up = NULL, *wi = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "past_cache", true, &past));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "update", true, &up));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "write_indices", false, &wi));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, past, "past_cache", up, "update"));
  const char* mode = "linear";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "linear", &mode));
  if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TensorScatter attribute 'mode' must be linear or circular; got '%s'",
                            mode);
  }
  int64_t axis64 = -2;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -2, &axis64));
  int32_t r = past->shape.rank, axis = 0;
  if (r < 2) return bad(node, "needs past_cache of rank >= 2");
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis64, r, &axis));
  if (axis == 0) return bad(node, "attribute 'axis' cannot be 0 (the batch dim)");
  char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF];
  bool ok = up->shape.rank == r;
  for (int32_t d = 0; ok && d < r; ++d) {
    ok = d == axis ? up->shape.dims[d] <= past->shape.dims[d]
                   : up->shape.dims[d] == past->shape.dims[d];
  }
  if (!ok) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TensorScatter needs update of past_cache's shape except a sequence "
                            "dim (axis %d) no longer than past_cache's; got past_cache %s and "
                            "update %s",
                            (int)axis, mlcc_infer_fmt_shape(&past->shape, sa),
                            mlcc_infer_fmt_shape(&up->shape, sb));
  }
  if (wi != NULL && (wi->dtype != MLCC_DTYPE_I64 || wi->shape.rank != 1 ||
                     wi->shape.dims[0] != past->shape.dims[0])) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TensorScatter needs int64 write_indices of shape [B=%lld]; got %s %s",
                            (long long)past->shape.dims[0], mlcc_dtype_name(wi->dtype),
                            mlcc_infer_fmt_shape(&wi->shape, sa));
  }
  return mlcc_infer_set_output(node, 0, past->dtype, &past->shape);
}

//===----------------------------------------------------------------------===//
// Col2Im (18)
//===----------------------------------------------------------------------===//

// Reads an optional ints attribute of |n| values (default |dflt| each).
static mlcc_status_t col2im_ints(const mlcc_node_t* node, const char* name, int32_t n,
                                 int64_t dflt, int64_t* out) {
  const int64_t* v = NULL;
  uint32_t cnt = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, name, &v, &cnt));
  for (int32_t i = 0; i < n; ++i) out[i] = dflt;
  if (v == NULL) return mlcc_ok_status();
  if (cnt != (uint32_t)n) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Col2Im attribute '%s' needs %d values; got %u", name, (int)n, cnt);
  }
  memcpy(out, v, (size_t)n * sizeof(int64_t));
  return mlcc_ok_status();
}

mlcc_status_t mlcc_col2im_resolve(const mlcc_node_t* node, mlcc_col2im_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_FLOAT));
  int64_t img[MLCC_COL2IM_MAX_DIMS + 1], blk[MLCC_COL2IM_MAX_DIMS + 1];
  uint32_t ni = 0, nb = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "image_shape", "image size", true, false,
                                             img, MLCC_COL2IM_MAX_DIMS + 1, &ni, &present));
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 2, "block_shape", "block size", true, false,
                                             blk, MLCC_COL2IM_MAX_DIMS + 1, &nb, &present));
  if (ni != nb || ni < 1 || ni > MLCC_COL2IM_MAX_DIMS) {
    return mlcc_make_status(ni > MLCC_COL2IM_MAX_DIMS ? MLCC_STATUS_UNIMPLEMENTED
                                                      : MLCC_STATUS_INVALID_MODEL,
                            "Col2Im needs image_shape and block_shape of one length in [1, %d]; "
                            "got %u and %u values",
                            MLCC_COL2IM_MAX_DIMS, ni, nb);
  }
  int32_t n = (int32_t)ni;
  out->n = n;
  MLCC_RETURN_IF_ERROR(col2im_ints(node, "strides", n, 1, out->strides));
  MLCC_RETURN_IF_ERROR(col2im_ints(node, "dilations", n, 1, out->dilations));
  MLCC_RETURN_IF_ERROR(col2im_ints(node, "pads", 2 * n, 0, out->pads));
  char sa[MLCC_INFER_SHAPE_BUF];
  if (x->shape.rank != 3) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Col2Im needs a 3-D input [N, C*prod(block), L]; got %s",
                            mlcc_infer_fmt_shape(&x->shape, sa));
  }
  int64_t kprod = 1, lprod = 1;
  for (int32_t i = 0; i < n; ++i) {
    out->img[i] = img[i], out->k[i] = blk[i];
    int64_t s = out->strides[i], d = out->dilations[i];
    if (img[i] < 0 || blk[i] < 1 || s < 1 || d < 1 || out->pads[i] < 0 || out->pads[n + i] < 0) {
      return bad(node, "needs image/block sizes, strides and dilations >= 1 and pads >= 0");
    }
    int64_t span = img[i] + out->pads[i] + out->pads[n + i] - d * (blk[i] - 1) - 1;
    if (span < 0 || span > ((int64_t)1 << 40)) {
      return bad(node, "has a dilated block larger than the padded image");
    }
    out->blocks[i] = span / s + 1;
    kprod *= blk[i];
    lprod *= out->blocks[i];
  }
  if (kprod == 0 || x->shape.dims[1] % kprod != 0 || x->shape.dims[2] != lprod) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Col2Im input %s does not match block product %lld and %lld blocks",
                            mlcc_infer_fmt_shape(&x->shape, sa), (long long)kprod,
                            (long long)lprod);
  }
  out->batch = x->shape.dims[0];
  out->channels = x->shape.dims[1] / kprod;
  return mlcc_ok_status();
}

// Col2Im: [N, C, image_shape...].
mlcc_status_t mlcc_infer_misc_col2im(mlcc_node_t* node) {
  mlcc_col2im_t g;
  MLCC_RETURN_IF_ERROR(mlcc_col2im_resolve(node, &g));
  mlcc_shape_t y = {.rank = 2 + g.n};
  y.dims[0] = g.batch;
  y.dims[1] = g.channels;
  for (int32_t i = 0; i < g.n; ++i) y.dims[2 + i] = g.img[i];
  return mlcc_infer_set_output(node, 0, node->inputs[0]->dtype, &y);
}

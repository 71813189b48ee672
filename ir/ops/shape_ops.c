// SPDX-License-Identifier: Apache-2.0
// Shape inference for data-movement and shape ops: Concat, Split, Slice,
// Gather, GatherElements, Transpose, Reshape, Flatten, Squeeze, Unsqueeze,
// Expand, Tile, Pad, Resize, Shape, Size, Constant, ConstantOfShape, Range.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"
#include "ir/ops/resize.h"

static mlcc_shape_t shape_of_rank(int32_t rank) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  return s;
}

//===----------------------------------------------------------------------===//
// Concat, Split
//===----------------------------------------------------------------------===//

// Concat: all inputs share dtype and rank and agree on every dim but 'axis'.
mlcc_status_t mlcc_infer_concat(mlcc_node_t* node) {
  mlcc_value_t* first = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "inputs[0]", true, &first));
  const mlcc_attr_t* axis_attr = mlcc_node_attr(node, "axis");
  if (axis_attr == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Concat needs the attribute 'axis'; it is missing");
  }
  int64_t axis64 = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis64));
  int32_t axis = 0;
  MLCC_RETURN_IF_ERROR(
      mlcc_infer_axis(node, "attribute 'axis'", axis64, first->shape.rank, &axis));
  mlcc_shape_t y = first->shape;
  for (uint32_t i = 1; i < node->n_inputs; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "inputs[%u]", i);
    mlcc_value_t* in = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, true, &in));
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, first, "inputs[0]", in, name));
    MLCC_RETURN_IF_ERROR(mlcc_infer_concat_compatible("Concat", first, in, name, axis));
    MLCC_RETURN_IF_ERROR(
        mlcc_infer_add(node, "concatenated dim", y.dims[axis], in->shape.dims[axis], &y.dims[axis]));
  }
  return mlcc_infer_set_output(node, 0, first->dtype, &y);
}

// Split: sizes from the 'split' attribute (< 13), constant input 1 (13+) or
// the 'num_outputs' attribute (18+: parts of ceil(dim/n), the last smaller);
// none of them means an equal split into n_outputs parts (dim must divide
// evenly).
mlcc_status_t mlcc_infer_split(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  int64_t axis64 = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis64));
  int32_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis64, x->shape.rank, &axis));
  const bool has_num_outputs = mlcc_node_attr(node, "num_outputs") != NULL;
  if (has_num_outputs && node->opset < 18) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Split attribute 'num_outputs' exists only from opset 18; the node "
                            "has opset %d",
                            (int)node->opset);
  }
  int64_t split[MLCC_INFER_MAX_LIST];
  uint32_t n_split = 0;
  bool present = false;
  if (has_num_outputs) {
    // Split-18 'num_outputs': parts of ceil(dim / n), the last one smaller.
    int64_t n = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "num_outputs", 0, &n));
    if (node->n_inputs > 1 && mlcc_node_input(node, 1) != NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split takes either input 'split' or attribute 'num_outputs', "
                              "not both");
    }
    if (n < 1 || n != (int64_t)node->n_outputs) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split attribute 'num_outputs' must equal the number of outputs; "
                              "got num_outputs=%lld for %u outputs",
                              (long long)n, node->n_outputs);
    }
    if (n > MLCC_INFER_MAX_LIST) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Split with %lld outputs is not supported (at most %d)",
                              (long long)n, MLCC_INFER_MAX_LIST);
    }
    int64_t dim = x->shape.dims[axis];
    int64_t chunk = dim / n + (dim % n != 0);
    int64_t last = dim - chunk * (n - 1);  // chunk * (n - 1) < dim + n: no overflow
    if (last < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split with num_outputs=%lld cannot split axis %d of size %lld "
                              "into parts of ceil(%lld/%lld)=%lld with a smaller last part",
                              (long long)n, (int)axis, (long long)dim, (long long)dim,
                              (long long)n, (long long)chunk);
    }
    n_split = (uint32_t)n;
    for (uint32_t i = 0; i < n_split; ++i) split[i] = i + 1 < n_split ? chunk : last;
    present = true;
  } else if (node->opset >= 13) {
    if (mlcc_node_attr(node, "split") != NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split at opset %d takes 'split' as input 1, not as an attribute",
                              (int)node->opset);
    }
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "split", "output sizes", false, false,
                                               split, MLCC_INFER_MAX_LIST, &n_split,
                                               &present));
    present = present && n_split > 0;
  } else {
    if (node->n_inputs > 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split at opset %d takes 'split' as an attribute and has 1 "
                              "input; got %u inputs",
                              (int)node->opset, node->n_inputs);
    }
    const int64_t* a = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "split", &a, &n_split));
    if (n_split > MLCC_INFER_MAX_LIST) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Split with %u outputs is not supported (at most %d)", n_split,
                              MLCC_INFER_MAX_LIST);
    }
    if (n_split > 0) memcpy(split, a, n_split * sizeof(int64_t));
    present = n_split > 0;
  }
  int64_t dim = x->shape.dims[axis];
  uint32_t n_out = node->n_outputs;
  if (n_out == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Split needs at least one output");
  }
  if (present) {
    if (n_split != n_out) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split needs one 'split' entry per output; got %u entries for "
                              "%u outputs",
                              n_split, n_out);
    }
    int64_t total = 0;
    for (uint32_t i = 0; i < n_split; ++i) {
      if (split[i] < 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Split sizes must be >= 0; got split[%u]=%lld", i,
                                (long long)split[i]);
      }
      MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "sum of 'split'", total, split[i], &total));
    }
    if (total != dim) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split sizes must sum to the split dim; 'split' sums to %lld but "
                              "axis %d has size %lld",
                              (long long)total, (int)axis, (long long)dim);
    }
  } else {
    if (dim % (int64_t)n_out != 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Split without 'split' needs the dim to divide evenly by the "
                              "number of outputs; axis %d has size %lld and there are %u "
                              "outputs",
                              (int)axis, (long long)dim, n_out);
    }
    n_split = n_out;
    for (uint32_t i = 0; i < n_out; ++i) split[i] = dim / (int64_t)n_out;
  }
  for (uint32_t i = 0; i < n_out; ++i) {
    mlcc_shape_t y = x->shape;
    y.dims[axis] = split[i];
    MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, i, x->dtype, &y));
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_infer_slice(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  int32_t rank = x->shape.rank;
  int64_t starts[MLCC_MAX_RANK], ends[MLCC_MAX_RANK], axes[MLCC_MAX_RANK],
      steps[MLCC_MAX_RANK];
  uint32_t n_starts = 0, n_ends = 0, n_axes = 0, n_steps = 0;
  bool have_axes = false, have_steps = false, present = false;
  if (node->opset < 10) {
    if (node->n_inputs > 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice at opset %d takes starts/ends/axes as attributes and has "
                              "1 input; got %u inputs",
                              (int)node->opset, node->n_inputs);
    }
    const int64_t *s = NULL, *e = NULL, *a = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "starts", &s, &n_starts));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "ends", &e, &n_ends));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &a, &n_axes));
    if (s == NULL || e == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice at opset %d needs the attributes 'starts' and 'ends'",
                              (int)node->opset);
    }
    if (n_starts > (uint32_t)rank || n_ends > (uint32_t)rank || n_axes > (uint32_t)rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice has more starts/ends/axes (%u/%u/%u) than input dims (%d)",
                              n_starts, n_ends, n_axes, (int)rank);
    }
    memcpy(starts, s, n_starts * sizeof(int64_t));
    memcpy(ends, e, n_ends * sizeof(int64_t));
    if (a != NULL && n_axes > 0) {
      memcpy(axes, a, n_axes * sizeof(int64_t));
      have_axes = true;
    }
  } else {
    static const char* const kRole = "slice bounds";
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "starts", kRole, true, false, starts,
                                               MLCC_MAX_RANK, &n_starts, &present));
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 2, "ends", kRole, true, false, ends,
                                               MLCC_MAX_RANK, &n_ends, &present));
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 3, "axes", "sliced axes", false, false,
                                               axes, MLCC_MAX_RANK, &n_axes, &have_axes));
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 4, "steps", "slice steps", false, false,
                                               steps, MLCC_MAX_RANK, &n_steps, &have_steps));
  }
  if (n_starts != n_ends || (have_axes && n_axes != n_starts) ||
      (have_steps && n_steps != n_starts)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Slice needs starts, ends (and axes, steps when given) of equal "
                            "length; got %u, %u, %u, %u",
                            n_starts, n_ends, have_axes ? n_axes : n_starts,
                            have_steps ? n_steps : n_starts);
  }
  if (!have_axes) {
    if (n_starts > (uint32_t)rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice has %u starts for an input of rank %d", n_starts,
                              (int)rank);
    }
    for (uint32_t i = 0; i < n_starts; ++i) axes[i] = (int64_t)i;
  }
  if (!have_steps) {
    for (uint32_t i = 0; i < n_starts; ++i) steps[i] = 1;
  }
  uint32_t mask = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "axes", axes, n_starts, rank, &mask));
  mlcc_shape_t y = x->shape;
  for (uint32_t i = 0; i < n_starts; ++i) {
    int32_t a = (int32_t)(axes[i] < 0 ? axes[i] + rank : axes[i]);
    if (steps[i] == 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice steps must be non-zero; got steps[%u]=0 (axis %d)", i,
                              (int)a);
    }
    int64_t first = 0;
    if (!mlcc_slice_axis(x->shape.dims[a], starts[i], ends[i], steps[i], &first, &y.dims[a])) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice axis %d of length %lld has no valid length for starts[%u]=%lld "
                              "ends[%u]=%lld steps[%u]=%lld",
                              (int)a, (long long)x->shape.dims[a], i, (long long)starts[i], i,
                              (long long)ends[i], i, (long long)steps[i]);
    }
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// Gather, GatherElements, Transpose
//===----------------------------------------------------------------------===//

// Checks constant |indices| lie in [-dim, dim-1] (negative counts back).
static mlcc_status_t check_const_indices(const mlcc_node_t* node, const mlcc_value_t* idx,
                                         int64_t dim, int32_t axis) {
  if (idx->kind != MLCC_VALUE_CONSTANT || idx->data == NULL) return mlcc_ok_status();
  int64_t n = mlcc_infer_numel(&idx->shape);
  for (int64_t k = 0; k < n; ++k) {
    int64_t v = mlcc_value_const_i64(idx, k);
    if (v < -dim || v >= dim) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s indices must be in [%lld, %lld] for axis %d of size %lld; "
                              "got %lld at flat position %lld",
                              mlcc_infer_op(node), (long long)-dim, (long long)dim - 1,
                              (int)axis, (long long)dim, (long long)v, (long long)k);
    }
  }
  return mlcc_ok_status();
}

// Gather: data[:axis] + indices.shape + data[axis+1:].
mlcc_status_t mlcc_infer_gather(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *idx = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "indices", true, &idx));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, idx, "indices", MLCC_INFER_DT_INT32_64));
  if (x->shape.rank < 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Gather needs data of rank >= 1; got a scalar");
  }
  int64_t axis64 = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis64));
  int32_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis64, x->shape.rank, &axis));
  int32_t out_rank = x->shape.rank - 1 + idx->shape.rank;
  if (out_rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Gather output would have rank %d; mlcc supports rank <= %d",
                            (int)out_rank, MLCC_MAX_RANK);
  }
  MLCC_RETURN_IF_ERROR(check_const_indices(node, idx, x->shape.dims[axis], axis));
  mlcc_shape_t y = shape_of_rank(0);
  for (int32_t d = 0; d < axis; ++d) y.dims[y.rank++] = x->shape.dims[d];
  for (int32_t d = 0; d < idx->shape.rank; ++d) y.dims[y.rank++] = idx->shape.dims[d];
  for (int32_t d = axis + 1; d < x->shape.rank; ++d) y.dims[y.rank++] = x->shape.dims[d];
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// GatherElements: output has indices' shape; ranks must match.
mlcc_status_t mlcc_infer_gather_elements(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *idx = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "indices", true, &idx));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, idx, "indices", MLCC_INFER_DT_INT32_64));
  if (x->shape.rank < 1 || idx->shape.rank != x->shape.rank) {
    char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GatherElements needs data of rank >= 1 and indices of the same "
                            "rank; got data%s and indices%s",
                            mlcc_infer_fmt_shape(&x->shape, sa),
                            mlcc_infer_fmt_shape(&idx->shape, sb));
  }
  int64_t axis64 = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis64));
  int32_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis64, x->shape.rank, &axis));
  for (int32_t d = 0; d < x->shape.rank; ++d) {
    if (d != axis && idx->shape.dims[d] > x->shape.dims[d]) {
      char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF];
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "GatherElements needs indices dims <= data dims off the axis; "
                              "got data%s and indices%s at dim %d",
                              mlcc_infer_fmt_shape(&x->shape, sa),
                              mlcc_infer_fmt_shape(&idx->shape, sb), (int)d);
    }
  }
  MLCC_RETURN_IF_ERROR(check_const_indices(node, idx, x->shape.dims[axis], axis));
  return mlcc_infer_set_output(node, 0, x->dtype, &idx->shape);
}

// Transpose: perm defaults to reversing the dims; must be a permutation.
mlcc_status_t mlcc_infer_transpose(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  const int64_t* perm = NULL;
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "perm", &perm, &n));
  int32_t rank = x->shape.rank;
  mlcc_shape_t y = shape_of_rank(rank);
  if (perm == NULL || n == 0) {
    for (int32_t d = 0; d < rank; ++d) y.dims[d] = x->shape.dims[rank - 1 - d];
    return mlcc_infer_set_output(node, 0, x->dtype, &y);
  }
  if (n != (uint32_t)rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Transpose attribute 'perm' must have one entry per input dim; got "
                            "%u entries for rank %d",
                            n, (int)rank);
  }
  uint32_t seen = 0;
  for (uint32_t d = 0; d < n; ++d) {
    if (perm[d] < 0 || perm[d] >= rank || (seen & (1u << perm[d]))) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Transpose attribute 'perm' must be a permutation of 0..%d; got "
                              "%lld at index %u (repeated or out of range)",
                              (int)rank - 1, (long long)perm[d], d);
    }
    seen |= 1u << perm[d];
    y.dims[d] = x->shape.dims[perm[d]];
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze
//===----------------------------------------------------------------------===//

// Reshape: constant int64 'shape'; 0 copies the input dim (unless allowzero,
// 14+), one -1 is inferred from the element count.
mlcc_status_t mlcc_infer_reshape(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  int64_t dims[MLCC_MAX_RANK];
  uint32_t n = 0;
  bool present = false;
  mlcc_value_t* sv = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "shape", true, &sv));
  if (sv->shape.rank == 1 && sv->shape.dims[0] > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Reshape to rank %lld is not supported (mlcc supports rank <= %d)",
                            (long long)sv->shape.dims[0], MLCC_MAX_RANK);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "shape", "target shape", true, false,
                                             dims, MLCC_MAX_RANK, &n, &present));
  int64_t allowzero = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "allowzero", 0, &allowzero));
  if (allowzero != 0 && node->opset < 14) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Reshape has no 'allowzero' before opset 14; the node has opset %d",
                            (int)node->opset);
  }
  int64_t in_numel = mlcc_infer_numel(&x->shape);
  if (in_numel < 0) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Reshape input %s has an element count that overflows int64",
                            mlcc_infer_fmt_shape(&x->shape, sb));
  }
  mlcc_shape_t y = shape_of_rank((int32_t)n);
  int32_t infer_at = -1;
  bool has_zero = false;
  int64_t known = 1;
  char sx[MLCC_INFER_SHAPE_BUF];
  for (uint32_t d = 0; d < n; ++d) {
    int64_t v = dims[d];
    if (v == -1) {
      if (infer_at >= 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Reshape 'shape' may contain at most one -1; got -1 at "
                                "positions %d and %u",
                                (int)infer_at, d);
      }
      infer_at = (int32_t)d;
      continue;
    }
    if (v < -1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Reshape 'shape' entries must be >= -1; got %lld at position %u",
                              (long long)v, d);
    }
    if (v == 0 && !allowzero) {
      if (d >= (uint32_t)x->shape.rank) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Reshape 'shape' has 0 (copy input dim) at position %u but "
                                "the input %s has rank %d",
                                d, mlcc_infer_fmt_shape(&x->shape, sx), (int)x->shape.rank);
      }
      v = x->shape.dims[d];
    }
    if (v == 0) has_zero = true;
    y.dims[d] = v;
    MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "target element count", known, v, &known));
  }
  if (infer_at >= 0) {
    if (allowzero && has_zero) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Reshape with allowzero=1 cannot have both 0 and -1 in 'shape'");
    }
    if (known == 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Reshape cannot infer the -1 dim: the other target dims have "
                              "product 0 (input %s)",
                              mlcc_infer_fmt_shape(&x->shape, sx));
    }
    if (in_numel % known != 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Reshape cannot infer the -1 dim: input %s has %lld elements, "
                              "not a multiple of the other target dims' product %lld",
                              mlcc_infer_fmt_shape(&x->shape, sx), (long long)in_numel,
                              (long long)known);
    }
    y.dims[infer_at] = in_numel / known;
    known = in_numel;
  }
  if (known != in_numel) {
    char sy[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Reshape needs the same element count; input %s has %lld but "
                            "target %s has %lld",
                            mlcc_infer_fmt_shape(&x->shape, sx), (long long)in_numel,
                            mlcc_infer_fmt_shape(&y, sy), (long long)known);
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// Flatten: [prod(d[:axis]), prod(d[axis:])]; axis in [0, r] (negative from 11).
mlcc_status_t mlcc_infer_flatten(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  int64_t axis = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 1, &axis));
  int32_t rank = x->shape.rank;
  int64_t lo = node->opset >= 11 ? -(int64_t)rank : 0;
  if (axis < lo || axis > rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Flatten attribute 'axis' must be in [%lld, %d] at opset %d for "
                            "an input of rank %d; got %lld",
                            (long long)lo, (int)rank, (int)node->opset, (int)rank,
                            (long long)axis);
  }
  if (axis < 0) axis += rank;
  mlcc_shape_t y = shape_of_rank(2);
  y.dims[0] = y.dims[1] = 1;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t* p = d < axis ? &y.dims[0] : &y.dims[1];
    MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "flattened dim", *p, x->shape.dims[d], p));
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// Reads Squeeze/Unsqueeze axes: attribute before 13, constant input 1 from 13.
static mlcc_status_t read_sq_axes(const mlcc_node_t* node, int64_t* axes, uint32_t* out_n,
                                  bool* out_present) {
  *out_n = 0;
  *out_present = false;
  if (node->opset >= 13) {
    if (mlcc_node_attr(node, "axes") != NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s at opset %d takes axes as input 1, not as an attribute",
                              mlcc_infer_op(node), (int)node->opset);
    }
    return mlcc_infer_const_ints(node, 1, "axes", "axes", false, false, axes, MLCC_MAX_RANK,
                                 out_n, out_present);
  }
  if (node->n_inputs > 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s at opset %d takes axes as an attribute and has 1 input; got "
                            "%u inputs",
                            mlcc_infer_op(node), (int)node->opset, node->n_inputs);
  }
  const int64_t* a = NULL;
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &a, &n));
  if (a == NULL) return mlcc_ok_status();
  if (n > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'axes' has %u entries; at most %d are possible",
                            mlcc_infer_op(node), n, MLCC_MAX_RANK);
  }
  memcpy(axes, a, n * sizeof(int64_t));
  *out_n = n;
  *out_present = true;
  return mlcc_ok_status();
}

// Squeeze: removes the listed dims (each must be 1), or every 1 if none.
mlcc_status_t mlcc_infer_squeeze(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  int64_t axes[MLCC_MAX_RANK];
  uint32_t n = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(read_sq_axes(node, axes, &n, &present));
  uint32_t mask = 0;
  if (n == 0) {
    for (int32_t d = 0; d < x->shape.rank; ++d) {
      if (x->shape.dims[d] == 1) mask |= 1u << d;
    }
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "axes", axes, n, x->shape.rank, &mask));
    for (int32_t d = 0; d < x->shape.rank; ++d) {
      if ((mask & (1u << d)) && x->shape.dims[d] != 1) {
        char sb[MLCC_INFER_SHAPE_BUF];
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Squeeze can only remove dims of size 1; axis %d of input %s "
                                "has size %lld",
                                (int)d, mlcc_infer_fmt_shape(&x->shape, sb),
                                (long long)x->shape.dims[d]);
      }
    }
  }
  mlcc_shape_t y = shape_of_rank(0);
  for (int32_t d = 0; d < x->shape.rank; ++d) {
    if (!(mask & (1u << d))) y.dims[y.rank++] = x->shape.dims[d];
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// Unsqueeze: inserts 1s at the listed positions of the output (required).
mlcc_status_t mlcc_infer_unsqueeze(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  int64_t axes[MLCC_MAX_RANK];
  uint32_t n = 0;
  bool present = false;
  if (node->opset >= 13 && mlcc_node_input(node, 1) == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Unsqueeze at opset %d needs input 1 'axes'; it is missing",
                            (int)node->opset);
  }
  mlcc_value_t* av = mlcc_node_input(node, 1);
  if (av != NULL && av->shape.rank == 1 && av->shape.dims[0] > MLCC_MAX_RANK - x->shape.rank) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Unsqueeze with %lld axes on rank %d would exceed rank %d",
                            (long long)av->shape.dims[0], (int)x->shape.rank, MLCC_MAX_RANK);
  }
  MLCC_RETURN_IF_ERROR(read_sq_axes(node, axes, &n, &present));
  if (!present || n == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Unsqueeze needs a non-empty 'axes'; it is missing or empty");
  }
  int32_t out_rank = x->shape.rank + (int32_t)n;
  if (out_rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Unsqueeze output would have rank %d; mlcc supports rank <= %d",
                            (int)out_rank, MLCC_MAX_RANK);
  }
  uint32_t mask = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "axes", axes, n, out_rank, &mask));
  mlcc_shape_t y = shape_of_rank(out_rank);
  int32_t src = 0;
  for (int32_t d = 0; d < out_rank; ++d) {
    y.dims[d] = (mask & (1u << d)) ? 1 : x->shape.dims[src++];
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// Expand, Tile, Pad
//===----------------------------------------------------------------------===//

// Expand: bidirectional broadcast of the input with the constant 'shape'.
mlcc_status_t mlcc_infer_expand(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  int64_t dims[MLCC_MAX_RANK];
  uint32_t n = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "shape", "target shape", true, false,
                                             dims, MLCC_MAX_RANK, &n, &present));
  mlcc_shape_t s = shape_of_rank((int32_t)n);
  for (uint32_t d = 0; d < n; ++d) {
    if (dims[d] < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Expand 'shape' entries must be >= 0; got %lld at position %u",
                              (long long)dims[d], d);
    }
    s.dims[d] = dims[d];
  }
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &x->shape, "input", &s, "shape", &y));
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// Tile: dims multiplied by the constant 'repeats' (one per dim, >= 0).
mlcc_status_t mlcc_infer_tile(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  int64_t reps[MLCC_MAX_RANK];
  uint32_t n = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "repeats", "repeat counts", true, false,
                                             reps, MLCC_MAX_RANK, &n, &present));
  if (n != (uint32_t)x->shape.rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Tile needs one 'repeats' entry per input dim; got %u for rank %d",
                            n, (int)x->shape.rank);
  }
  mlcc_shape_t y = x->shape;
  for (uint32_t d = 0; d < n; ++d) {
    if (reps[d] < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Tile 'repeats' must be >= 0; got %lld at position %u",
                              (long long)reps[d], d);
    }
    MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "tiled dim", y.dims[d], reps[d], &y.dims[d]));
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// Pad: pads (2*rank: all begins then all ends, may be negative) from the
// attribute (< 11) or constant input 1 (11+); modes constant/reflect/edge.
mlcc_status_t mlcc_infer_pad(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  int32_t rank = x->shape.rank;
  const char* mode = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "constant", &mode));
  bool reflect = strcmp(mode, "reflect") == 0, edge = strcmp(mode, "edge") == 0;
  bool wrap = node->opset >= 19 && strcmp(mode, "wrap") == 0;
  if (!reflect && !edge && !wrap && strcmp(mode, "constant") != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Pad attribute 'mode' must be constant, reflect, edge%s at opset "
                            "%d; got '%s'",
                            node->opset >= 19 ? " or wrap" : "", (int)node->opset, mode);
  }
  int64_t pads[2 * MLCC_MAX_RANK];
  uint32_t n = 0;
  if (node->opset < 11) {
    if (node->n_inputs > 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad at opset %d takes pads/value as attributes and has 1 input; "
                              "got %u inputs",
                              (int)node->opset, node->n_inputs);
    }
    const int64_t* a = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "pads", &a, &n));
    if (a == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad at opset %d needs the attribute 'pads'; it is missing",
                              (int)node->opset);
    }
    if (n != 2u * (uint32_t)rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad 'pads' must have 2*rank = %d values; got %u", 2 * (int)rank,
                              n);
    }
    memcpy(pads, a, n * sizeof(int64_t));
    float value = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "value", 0.f, &value));
  } else {
    bool present = false;
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "pads", "pad amounts", true, false,
                                               pads, 2 * MLCC_MAX_RANK, &n, &present));
    if (node->n_inputs > 3 && mlcc_node_input(node, 3) != NULL) {
      // Pad-18 'axes': pads holds [begin per listed axis..., end per listed
      // axis...]; unlisted axes get no padding.
      if (node->opset < 18) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Pad has the input 'axes' only from opset 18; the node has "
                                "opset %d",
                                (int)node->opset);
      }
      int64_t axes[MLCC_MAX_RANK];
      uint32_t n_axes = 0;
      bool have_axes = false;
      MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 3, "axes", "padded axes", true, false,
                                                 axes, MLCC_MAX_RANK, &n_axes, &have_axes));
      if (n != 2u * n_axes) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Pad 'pads' must have 2 values per entry of 'axes' (%u); got %u",
                                n_axes, n);
      }
      uint32_t mask = 0;
      MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "axes", axes, n_axes, rank, &mask));
      int64_t full[2 * MLCC_MAX_RANK] = {0};
      for (uint32_t i = 0; i < n_axes; ++i) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        full[a] = pads[i];
        full[a + rank] = pads[i + n_axes];
      }
      memcpy(pads, full, sizeof(full));
      n = 2u * (uint32_t)rank;
    }
    if (n != 2u * (uint32_t)rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad 'pads' must have 2*rank = %d values; got %u", 2 * (int)rank,
                              n);
    }
    mlcc_value_t* cv = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_input(node, 2, "constant_value", "pad value", false,
                                                &cv));
    if (cv != NULL) {
      MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "data", cv, "constant_value"));
      if (mlcc_infer_numel(&cv->shape) != 1) {
        char sb[MLCC_INFER_SHAPE_BUF];
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Pad input 'constant_value' must be a scalar; got shape %s",
                                mlcc_infer_fmt_shape(&cv->shape, sb));
      }
    }
  }
  mlcc_shape_t y = x->shape;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t b = pads[d], e = pads[d + rank], in = x->shape.dims[d];
    if (reflect && (b >= in || e >= in) && (b > 0 || e > 0)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad mode 'reflect' needs pads smaller than the dim; axis %d has "
                              "size %lld and pads %lld/%lld",
                              (int)d, (long long)in, (long long)b, (long long)e);
    }
    // Wrap with negative pads crops first and wraps the cropped extent
    // (targets/kernels/shape.c), which must then not be empty.
    if (wrap && (b > 0 || e > 0) &&
        in - (b < 0 ? -b : 0) - (e < 0 ? -e : 0) <= 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad mode 'wrap' cannot pad axis %d: size %lld, cropped by pads "
                              "%lld/%lld, leaves nothing to wrap",
                              (int)d, (long long)in, (long long)b, (long long)e);
    }
    if (edge && in == 0 && (b > 0 || e > 0)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad mode 'edge' cannot pad axis %d of size 0", (int)d);
    }
    int64_t out = 0;
    MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "padded dim", in, b, &out));
    MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "padded dim", out, e, &out));
    if (out < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad would make axis %d negative: size %lld with pads %lld/%lld",
                              (int)d, (long long)in, (long long)b, (long long)e);
    }
    y.dims[d] = out;
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// CenterCropPad (18): 'shape' (constant int32/int64, one value per entry of
// 'axes', default every dim) sets the listed output dims; each is a centered
// crop or zero pad of the input dim.
mlcc_status_t mlcc_infer_center_crop_pad(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input_data", true, &x));
  int32_t rank = x->shape.rank;
  int64_t shape[MLCC_MAX_RANK];
  uint32_t n = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 1, "shape", "crop/pad dims", true, false,
                                             shape, MLCC_MAX_RANK, &n, &present));
  const int64_t* axes_attr = NULL;
  uint32_t n_axes = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &axes_attr, &n_axes));
  int64_t axes[MLCC_MAX_RANK];
  if (axes_attr == NULL) {
    n_axes = (uint32_t)rank;
    for (int32_t d = 0; d < rank; ++d) axes[d] = d;
  } else {
    if (n_axes > (uint32_t)rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "CenterCropPad lists %u axes for an input of rank %d", n_axes,
                              (int)rank);
    }
    memcpy(axes, axes_attr, n_axes * sizeof(int64_t));
  }
  if (n != n_axes) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "CenterCropPad needs one 'shape' value per axis; got %u values for "
                            "%u axes",
                            n, n_axes);
  }
  uint32_t mask = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "axes", axes, n_axes, rank, &mask));
  mlcc_shape_t y = x->shape;
  for (uint32_t i = 0; i < n; ++i) {
    if (shape[i] < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "CenterCropPad 'shape' must be >= 0; got %lld at position %u",
                              (long long)shape[i], i);
    }
    y.dims[axes[i] < 0 ? axes[i] + rank : axes[i]] = shape[i];
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

// Resize-18 added 'antialias' (0 or 1), 'axes' and
// 'keep_aspect_ratio_policy' (mlcc_resize_geometry), Resize-19 the
// 'half_pixel_symmetric' coordinate transformation.
static mlcc_status_t check_resize18(const mlcc_node_t* node, const char* ctm) {
  if (node->opset < 18) {
    static const char* const kNew[] = {"antialias", "axes", "keep_aspect_ratio_policy"};
    for (int i = 0; i < 3; ++i) {
      if (mlcc_node_attr(node, kNew[i]) != NULL) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Resize has attribute '%s' only from opset 18; the node has "
                                "opset %d",
                                kNew[i], (int)node->opset);
      }
    }
  }
  int64_t antialias = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "antialias", 0, &antialias));
  if (antialias != 0 && antialias != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize attribute 'antialias' must be 0 or 1; got %lld",
                            (long long)antialias);
  }
  if (node->opset < 19 && strcmp(ctm, "half_pixel_symmetric") == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize coordinate_transformation_mode 'half_pixel_symmetric' "
                            "exists only from opset 19; the node has opset %d",
                            (int)node->opset);
  }
  return mlcc_ok_status();
}

// The dims |axes[0..n)| of 'axes' (opset 18+, default every dim in order)
// normalized into |dims|; INVALID_MODEL for out-of-range or repeated axes.
static mlcc_status_t resize_axes(const mlcc_node_t* node, int32_t rank, int32_t* dims,
                                 uint32_t* out_n) {
  const int64_t* axes = NULL;
  uint32_t n = 0;
  if (node->opset >= 18) MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &axes, &n));
  if (axes == NULL) {
    for (int32_t d = 0; d < rank; ++d) dims[d] = d;
    *out_n = (uint32_t)rank;
    return mlcc_ok_status();
  }
  uint32_t mask = 0;
  if (n > (uint32_t)rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize 'axes' has %u values for an input of rank %d", n, (int)rank);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_axes_mask(node, "axes", axes, n, rank, &mask));
  for (uint32_t k = 0; k < n; ++k) dims[k] = (int32_t)(axes[k] < 0 ? axes[k] + rank : axes[k]);
  *out_n = n;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_resize_geometry(const mlcc_node_t* node, mlcc_resize_geom_t* g) {
  memset(g, 0, sizeof(*g));
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  const int32_t rank = x->shape.rank;
  g->rank = rank;
  const char* ctm = "half_pixel";
  if (node->opset >= 11) {
    MLCC_RETURN_IF_ERROR(
        mlcc_node_attr_string(node, "coordinate_transformation_mode", "half_pixel", &ctm));
  }
  g->crop = node->opset >= 11 && strcmp(ctm, "tf_crop_and_resize") == 0;
  int32_t dims[MLCC_MAX_RANK];
  uint32_t n_axes = 0;
  MLCC_RETURN_IF_ERROR(resize_axes(node, rank, dims, &n_axes));
  double scales[MLCC_MAX_RANK], roi[2 * MLCC_MAX_RANK];
  int64_t sizes[MLCC_MAX_RANK];
  uint32_t n_scales = 0, n_sizes = 0, n_roi = 0;
  bool have_scales = false, have_sizes = false, have_roi = false;
  if (node->opset < 11) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_floats(node, 1, "scales", "scale factors", true,
                                                 scales, MLCC_MAX_RANK, &n_scales,
                                                 &have_scales));
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_floats(node, 1, "roi", "region of interest", false,
                                                 roi, 2 * MLCC_MAX_RANK, &n_roi, &have_roi));
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_floats(node, 2, "scales", "scale factors", false,
                                                 scales, MLCC_MAX_RANK, &n_scales,
                                                 &have_scales));
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 3, "sizes", "output sizes", false, false,
                                               sizes, MLCC_MAX_RANK, &n_sizes, &have_sizes));
  }
  // An empty tensor stands for "not given" (the usual way to skip scales).
  have_scales = have_scales && n_scales > 0;
  have_sizes = have_sizes && n_sizes > 0;
  if (have_scales == have_sizes) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize needs exactly one of 'scales' and 'sizes'; got %s",
                            have_scales ? "both" : "neither");
  }
  uint32_t n = have_scales ? n_scales : n_sizes;
  if (n != n_axes) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize '%s' must have one value per %s (%u); got %u",
                            have_scales ? "scales" : "sizes",
                            n_axes == (uint32_t)rank ? "input dim" : "entry of 'axes'", n_axes,
                            n);
  }
  if (g->crop && (!have_roi || n_roi != 2u * n_axes)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize with tf_crop_and_resize needs 'roi' of 2 * %u values; got %u",
                            n_axes, have_roi ? n_roi : 0);
  }
  const char* policy = "stretch";
  if (node->opset >= 18) {
    MLCC_RETURN_IF_ERROR(
        mlcc_node_attr_string(node, "keep_aspect_ratio_policy", "stretch", &policy));
  }
  const bool stretch = strcmp(policy, "stretch") == 0;
  if (!stretch && strcmp(policy, "not_larger") != 0 && strcmp(policy, "not_smaller") != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize attribute 'keep_aspect_ratio_policy' must be stretch, "
                            "not_larger or not_smaller; got '%s'",
                            policy);
  }
  for (int32_t d = 0; d < rank; ++d) {
    g->out[d] = x->shape.dims[d];
    g->scale[d] = 1.0;
    g->roi_start[d] = 0.0;
    g->roi_end[d] = 1.0;
  }
  if (have_sizes) {
    for (uint32_t k = 0; k < n_axes; ++k) {
      if (sizes[k] < 0 || sizes[k] > MLCC_INFER_MAX_NUMEL) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Resize 'sizes' must be in 0..2^40; got %lld at position %u",
                                (long long)sizes[k], k);
      }
    }
    // keep_aspect_ratio_policy: one scale for every axis (only with sizes).
    double common = 0;
    for (uint32_t k = 0; !stretch && k < n_axes; ++k) {
      int64_t in = x->shape.dims[dims[k]];
      double s = in > 0 ? (double)sizes[k] / (double)in : 1.0;
      bool better = strcmp(policy, "not_larger") == 0 ? s < common : s > common;
      if (k == 0 || better) common = s;
    }
    for (uint32_t k = 0; k < n_axes; ++k) {
      int32_t d = dims[k];
      int64_t in = x->shape.dims[d];
      if (stretch) {
        g->out[d] = sizes[k];
        g->scale[d] = in > 0 ? (double)sizes[k] / (double)in : 1.0;
      } else {
        g->scale[d] = common;
        g->out[d] = (int64_t)floor(common * (double)in + 0.5);
      }
    }
  } else {
    for (uint32_t k = 0; k < n_axes; ++k) {
      int32_t d = dims[k];
      double s = scales[k];
      if (!(s > 0) || isinf(s)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Resize 'scales' must be finite and > 0; got %g at position %u",
                                s, k);
      }
      double extent = g->crop ? roi[n_axes + k] - roi[k] : 1.0;
      double o = floor((double)x->shape.dims[d] * extent * s);
      if (!(o >= 0) || o > (double)MLCC_INFER_MAX_NUMEL) {
        return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                "Resize output dim %d would be %g (input %lld * scale %g); mlcc "
                                "supports 0..2^40",
                                (int)d, o, (long long)x->shape.dims[d], s);
      }
      g->scale[d] = s;
      g->out[d] = (int64_t)o;
    }
  }
  if (g->crop) {
    for (uint32_t k = 0; k < n_axes; ++k) {
      g->roi_start[dims[k]] = roi[k];
      g->roi_end[dims[k]] = roi[n_axes + k];
    }
  }
  return mlcc_ok_status();
}

// Resize 10: (X, scales). 11+: (X, roi, scales, sizes), exactly one of
// scales/sizes non-empty; output dims from mlcc_resize_geometry.
mlcc_status_t mlcc_infer_resize(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  const char* mode = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "nearest", &mode));
  bool cubic_ok = node->opset >= 11;
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 &&
      !(cubic_ok && strcmp(mode, "cubic") == 0)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Resize attribute 'mode' must be nearest, linear%s at opset %d; "
                            "got '%s'",
                            cubic_ok ? " or cubic" : "", (int)node->opset, mode);
  }
  const char* ctm = NULL;
  MLCC_RETURN_IF_ERROR(
      mlcc_node_attr_string(node, "coordinate_transformation_mode", "half_pixel", &ctm));
  MLCC_RETURN_IF_ERROR(check_resize18(node, ctm));
  mlcc_resize_geom_t g;
  MLCC_RETURN_IF_ERROR(mlcc_resize_geometry(node, &g));
  mlcc_shape_t y = x->shape;
  for (int32_t d = 0; d < g.rank; ++d) y.dims[d] = g.out[d];
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// Shape, Size, Constant, ConstantOfShape, Range
//===----------------------------------------------------------------------===//

// Shape: int64 [end - start] with start/end (15+) clamped to [0, rank].
mlcc_status_t mlcc_infer_shape(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  int64_t r = x->shape.rank, start = 0, end = r;
  if (node->opset >= 15) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "start", 0, &start));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "end", r, &end));
  } else if (mlcc_node_attr(node, "start") || mlcc_node_attr(node, "end")) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Shape has start/end attributes only from opset 15; the node has "
                            "opset %d",
                            (int)node->opset);
  }
  if (start < 0) start = start < -r ? 0 : start + r;
  if (end < 0) end = end < -r ? 0 : end + r;
  if (start > r) start = r;
  if (end > r) end = r;
  mlcc_shape_t y = shape_of_rank(1);
  y.dims[0] = end > start ? end - start : 0;
  return mlcc_infer_set_output(node, 0, MLCC_DTYPE_I64, &y);
}

// Size: int64 scalar.
mlcc_status_t mlcc_infer_size(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  mlcc_shape_t y = shape_of_rank(0);
  return mlcc_infer_set_output(node, 0, MLCC_DTYPE_I64, &y);
}

// Constant: dtype and shape from exactly one of value / value_float(s) /
// value_int(s). Strings and sparse tensors are UNIMPLEMENTED.
mlcc_status_t mlcc_infer_constant(mlcc_node_t* node) {
  static const char* const kUnsupported[] = {"sparse_value", "value_string", "value_strings"};
  for (size_t i = 0; i < sizeof(kUnsupported) / sizeof(kUnsupported[0]); ++i) {
    if (mlcc_node_attr(node, kUnsupported[i]) != NULL) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Constant with attribute '%s' is not supported", kUnsupported[i]);
    }
  }
  const mlcc_attr_t* found = NULL;
  uint32_t n_found = 0;
  static const char* const kNames[] = {"value", "value_float", "value_floats", "value_int",
                                       "value_ints"};
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    const mlcc_attr_t* a = mlcc_node_attr(node, kNames[i]);
    if (a != NULL) {
      found = a;
      ++n_found;
    }
  }
  if (n_found != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Constant needs exactly one value attribute (value, value_float, "
                            "value_floats, value_int, value_ints); got %u",
                            n_found);
  }
  mlcc_shape_t y = shape_of_rank(0);
  mlcc_dtype_t dt = MLCC_DTYPE_F32;
  mlcc_attr_kind_t want;
  if (strcmp(found->name, "value") == 0) {
    want = MLCC_ATTR_TENSOR;
    y = found->t_shape;
    dt = found->t_dtype;
  } else if (strcmp(found->name, "value_float") == 0) {
    want = MLCC_ATTR_FLOAT;
  } else if (strcmp(found->name, "value_floats") == 0) {
    want = MLCC_ATTR_FLOATS;
    y = shape_of_rank(1);
    y.dims[0] = found->count;
  } else if (strcmp(found->name, "value_int") == 0) {
    want = MLCC_ATTR_INT;
    dt = MLCC_DTYPE_I64;
  } else {
    want = MLCC_ATTR_INTS;
    dt = MLCC_DTYPE_I64;
    y = shape_of_rank(1);
    y.dims[0] = found->count;
  }
  if (found->kind != want) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Constant attribute '%s' has the wrong attribute kind (%d)",
                            found->name, (int)found->kind);
  }
  if (!mlcc_dtype_is_valid(dt)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Constant of element type %s is not supported",
                            mlcc_dtype_name(dt));
  }
  return mlcc_infer_set_output(node, 0, dt, &y);
}

// ConstantOfShape: dims from the constant int64 input; dtype from the
// one-element 'value' tensor attribute (default float32 0).
mlcc_status_t mlcc_infer_constant_of_shape(mlcc_node_t* node) {
  int64_t dims[MLCC_MAX_RANK];
  uint32_t n = 0;
  bool present = false;
  mlcc_value_t* sv = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &sv));
  if (sv->shape.rank == 1 && sv->shape.dims[0] > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "ConstantOfShape of rank %lld is not supported (rank <= %d)",
                            (long long)sv->shape.dims[0], MLCC_MAX_RANK);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 0, "input", "output shape", true, false,
                                             dims, MLCC_MAX_RANK, &n, &present));
  mlcc_shape_t y = shape_of_rank((int32_t)n);
  for (uint32_t d = 0; d < n; ++d) {
    if (dims[d] < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "ConstantOfShape dims must be >= 0; got %lld at position %u",
                              (long long)dims[d], d);
    }
    y.dims[d] = dims[d];
  }
  mlcc_dtype_t dt = MLCC_DTYPE_F32;
  const mlcc_attr_t* v = mlcc_node_attr(node, "value");
  if (v != NULL) {
    if (v->kind != MLCC_ATTR_TENSOR || mlcc_infer_numel(&v->t_shape) != 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "ConstantOfShape attribute 'value' must be a one-element tensor");
    }
    dt = v->t_dtype;
    if (!mlcc_dtype_is_valid(dt)) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "ConstantOfShape of element type %s is not supported",
                              mlcc_dtype_name(dt));
    }
  }
  return mlcc_infer_set_output(node, 0, dt, &y);
}

// Range: [max(ceil((limit - start) / delta), 0)] from scalar constants.
mlcc_status_t mlcc_infer_range(mlcc_node_t* node) {
  static const char* const kNames[3] = {"start", "limit", "delta"};
  mlcc_value_t* in[3] = {0};
  for (uint32_t i = 0; i < 3; ++i) {
    MLCC_RETURN_IF_ERROR(
        mlcc_infer_const_input(node, i, kNames[i], "range bound", true, &in[i]));
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(
        node, in[i], kNames[i], MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_SINT));
    if (i > 0) MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, in[0], "start", in[i], kNames[i]));
    if (mlcc_infer_numel(&in[i]->shape) != 1 || in[i]->shape.rank > 1) {
      char sb[MLCC_INFER_SHAPE_BUF];
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Range input '%s' must be a scalar; got shape %s", kNames[i],
                              mlcc_infer_fmt_shape(&in[i]->shape, sb));
    }
  }
  if (in[0]->dtype == MLCC_DTYPE_I8 || in[0]->dtype == MLCC_DTYPE_F16) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Range inputs must be float, double, int16, int32 or int64; got %s",
                            mlcc_dtype_name(in[0]->dtype));
  }
  int64_t count = 0;
  if (mlcc_dtype_is_float(in[0]->dtype)) {
    double s = mlcc_value_const_f64(in[0], 0), l = mlcc_value_const_f64(in[1], 0),
           d = mlcc_value_const_f64(in[2], 0);
    if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Range needs finite bounds and a non-zero delta; got start=%g "
                              "limit=%g delta=%g",
                              s, l, d);
    }
    // Like onnxruntime, subtract in the tensor's own precision first.
    double diff = in[0]->dtype == MLCC_DTYPE_F32 ? (double)((float)l - (float)s) : l - s;
    double c = ceil(diff / d);
    if (c > (double)MLCC_INFER_MAX_NUMEL) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Range would produce %g elements; mlcc supports at most 2^40", c);
    }
    count = c > 0 ? (int64_t)c : 0;
  } else {
    int64_t s = mlcc_value_const_i64(in[0], 0), l = mlcc_value_const_i64(in[1], 0),
            d = mlcc_value_const_i64(in[2], 0);
    if (d == 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Range needs a non-zero delta; got 0");
    }
    // Exact for extreme int64 bounds (checked_math.h); false: over 2^63.
    if (!mlcc_checked_stride_count(s, l, d, &count) || count > MLCC_INFER_MAX_NUMEL) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Range from %lld to %lld by %lld has more than 2^40 elements",
                              (long long)s, (long long)l, (long long)d);
    }
  }
  mlcc_shape_t y = shape_of_rank(1);
  y.dims[0] = count;
  return mlcc_infer_set_output(node, 0, in[0]->dtype, &y);
}

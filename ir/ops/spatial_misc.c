// SPDX-License-Identifier: Apache-2.0
// Shape/type inference for the sampling and misc spatial ops (ops.def
// "Sampling and misc spatial"): GridSample 16, RoiAlign 10/16, MaxUnpool
// 9/11, Upsample 7/9, ReverseSequence 10, Det 11 and DeformConv 19/22.
// Kernels are emitted by targets/kernels/spatial_misc.c (DeformConv by
// targets/kernels/deform_conv.c), which rely on the checks made here
// (ranks, dtypes, attribute values). Thread-compatible (one node at a time).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"
#include "ir/ops/spatial_misc.h"

static mlcc_status_t bad(const mlcc_node_t* node, const char* what) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s (opset %d) %s", mlcc_infer_op(node),
                          (int)node->opset, what);
}

// INVALID_MODEL unless string attribute |name| (default |def|) is one of
// |allowed[0..n)|.
static mlcc_status_t check_enum(const mlcc_node_t* node, const char* name, const char* def,
                                const char* const* allowed, int n) {
  const char* s = def;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, name, def, &s));
  for (int i = 0; i < n; ++i) {
    if (strcmp(s, allowed[i]) == 0) return mlcc_ok_status();
  }
  char list[128] = "";
  for (int i = 0; i < n; ++i) {
    size_t len = strlen(list);
    snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", allowed[i]);
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s (opset %d) attribute '%s' must be one of %s; got '%s'",
                          mlcc_infer_op(node), (int)node->opset, name, list, s);
}

//===----------------------------------------------------------------------===//
// GridSample 16: X [N,C,H,W], grid [N,Ho,Wo,2] -> [N,C,Ho,Wo]; 20: also
// X [N,C,D,H,W], grid [N,Do,Ho,Wo,3] -> [N,C,Do,Ho,Wo]
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_infer_grid_sample(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *grid = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "grid", true, &grid));
  if (!mlcc_dtype_is_float(x->dtype)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "GridSample (opset %d) supports float16/float/double X; got %s",
                            (int)node->opset, mlcc_dtype_name(x->dtype));
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, grid, "grid", MLCC_INFER_DT_FLOAT));
  const int32_t rank = x->shape.rank;
  if (node->opset < 20 && rank != 4) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GridSample-%d takes 4-D X [N,C,H,W] (N-d inputs from opset 20); "
                            "got rank %d",
                            (int)node->opset, (int)rank);
  }
  if (rank != 4 && rank != 5) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "GridSample (opset %d) supports 4-D X [N,C,H,W] and 5-D X "
                            "[N,C,D,H,W] (as onnxruntime does); got rank %d",
                            (int)node->opset, (int)rank);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, grid, "grid", rank));
  const int32_t sp = rank - 2;
  const int64_t* xd = x->shape.dims;
  const int64_t* gd = grid->shape.dims;
  if (gd[0] != xd[0] || gd[rank - 1] != sp) {
    char a[MLCC_INFER_SHAPE_BUF], b[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GridSample needs grid [N, out spatial dims..., %d] for X %s; got "
                            "grid %s",
                            (int)sp, mlcc_infer_fmt_shape(&x->shape, a),
                            mlcc_infer_fmt_shape(&grid->shape, b));
  }
  // GridSample-20 renamed the modes (bilinear -> linear, bicubic -> cubic,
  // default linear) and allows N-d inputs (4-D and 5-D here).
  static const char* const kModes[] = {"bilinear", "nearest", "bicubic"};
  static const char* const kModes20[] = {"linear", "nearest", "cubic"};
  static const char* const kPads[] = {"zeros", "border", "reflection"};
  if (node->opset >= 20) {
    MLCC_RETURN_IF_ERROR(check_enum(node, "mode", "linear", kModes20, 3));
  } else {
    MLCC_RETURN_IF_ERROR(check_enum(node, "mode", "bilinear", kModes, 3));
  }
  MLCC_RETURN_IF_ERROR(check_enum(node, "padding_mode", "zeros", kPads, 3));
  if (rank == 5) {
    const char* mode = "linear";
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "linear", &mode));
    if (strcmp(mode, "cubic") == 0) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "GridSample mode 'cubic' on 5-D X is not supported (bicubic is "
                              "4-D; onnxruntime refuses it too)");
    }
  }
  int64_t align = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "align_corners", 0, &align));
  mlcc_shape_t y = x->shape;
  bool empty = false;
  for (int32_t d = 2; d < rank; ++d) {
    y.dims[d] = gd[d - 1];
    empty = empty || xd[d] == 0;
  }
  if (empty && mlcc_infer_numel(&y) > 0) {
    char a[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "GridSample cannot sample an empty image (X %s)",
                            mlcc_infer_fmt_shape(&x->shape, a));
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// RoiAlign 10/16: X [N,C,H,W], rois [R,4], batch_indices [R] -> [R,C,oh,ow]
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_infer_roi_align(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *rois = NULL, *bi = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "rois", true, &rois));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "batch_indices", true, &bi));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", rois, "rois"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, bi, "batch_indices", MLCC_INFER_DT_INT32_64));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, x, "X", 4));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, rois, "rois", 2));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, bi, "batch_indices", 1));
  int64_t n_rois = rois->shape.dims[0];
  if (rois->shape.dims[1] != 4 || bi->shape.dims[0] != n_rois) {
    char a[MLCC_INFER_SHAPE_BUF], b[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "RoiAlign needs rois [R,4] and batch_indices [R]; got rois %s and "
                            "batch_indices %s",
                            mlcc_infer_fmt_shape(&rois->shape, a),
                            mlcc_infer_fmt_shape(&bi->shape, b));
  }
  static const char* const kModes[] = {"avg", "max"};
  MLCC_RETURN_IF_ERROR(check_enum(node, "mode", "avg", kModes, 2));
  if (node->opset >= 16) {
    static const char* const kCtm[] = {"half_pixel", "output_half_pixel"};
    MLCC_RETURN_IF_ERROR(
        check_enum(node, "coordinate_transformation_mode", "half_pixel", kCtm, 2));
  } else if (mlcc_node_attr(node, "coordinate_transformation_mode") != NULL) {
    return bad(node, "has attribute 'coordinate_transformation_mode' only from opset 16");
  }
  int64_t oh = 1, ow = 1, sr = 0;
  float scale = 1.0f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "output_height", 1, &oh));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "output_width", 1, &ow));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "sampling_ratio", 0, &sr));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "spatial_scale", 1.0f, &scale));
  if (oh < 1 || ow < 1 || oh > MLCC_INFER_MAX_NUMEL || ow > MLCC_INFER_MAX_NUMEL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "RoiAlign output_height/output_width must be >= 1; got %lld/%lld",
                            (long long)oh, (long long)ow);
  }
  if (sr < 0 || sr > (1 << 16)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "RoiAlign sampling_ratio must be in 0..65536; got %lld",
                            (long long)sr);
  }
  if (!isfinite(scale)) return bad(node, "attribute 'spatial_scale' must be finite");
  const int64_t* xd = x->shape.dims;
  if (n_rois > 0 && (xd[0] == 0 || xd[2] == 0 || xd[3] == 0)) {
    char a[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "RoiAlign needs a non-empty X [N,C,H,W] to pool %lld rois; got %s",
                            (long long)n_rois, mlcc_infer_fmt_shape(&x->shape, a));
  }
  mlcc_shape_t y = x->shape;
  y.dims[0] = n_rois;
  y.dims[2] = oh;
  y.dims[3] = ow;
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// MaxRoiPool 1/22
//===----------------------------------------------------------------------===//

// MaxRoiPool: Y [R, C, ph, pw] from X [N,C,H,W] float and rois [R,5] of X's
// type; pooled_shape (2 ints >= 1) required, spatial_scale finite.
mlcc_status_t mlcc_infer_max_roi_pool(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *rois = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "rois", true, &rois));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", rois, "rois"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, x, "X", 4));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, rois, "rois", 2));
  if (rois->shape.dims[1] != 5) return bad(node, "needs rois of shape [R, 5]");
  const int64_t* ps = NULL;
  uint32_t n_ps = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "pooled_shape", &ps, &n_ps));
  if (n_ps != 2 || ps[0] < 1 || ps[1] < 1 || ps[0] > 65536 || ps[1] > 65536) {
    return bad(node, "needs attribute 'pooled_shape' of 2 values in 1..65536");
  }
  float scale = 1.0f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "spatial_scale", 1.0f, &scale));
  if (!isfinite(scale)) return bad(node, "attribute 'spatial_scale' must be finite");
  if (rois->shape.dims[0] > 0 && (x->shape.dims[0] == 0 || x->shape.dims[2] == 0 ||
                                  x->shape.dims[3] == 0)) {
    return bad(node, "needs a non-empty X [N,C,H,W] to pool rois");
  }
  mlcc_shape_t y = x->shape;
  y.dims[0] = rois->shape.dims[0];
  y.dims[2] = ps[0];
  y.dims[3] = ps[1];
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// MaxUnpool 9/11
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_max_unpool_shape(const mlcc_node_t* node, const mlcc_shape_t* x,
                                    mlcc_shape_t* out_shape) {
  *out_shape = *x;
  int32_t rank = x->rank;
  if (rank < 3) return bad(node, "needs X of rank >= 3 ([N,C,D1,...])");
  uint32_t ns = (uint32_t)rank - 2, n_k = 0, n_s = 0, n_p = 0;
  const int64_t *k = NULL, *s = NULL, *p = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "kernel_shape", &k, &n_k));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "strides", &s, &n_s));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "pads", &p, &n_p));
  if (k == NULL || n_k != ns || (s != NULL && n_s != ns) || (p != NULL && n_p != 2 * ns)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MaxUnpool needs kernel_shape (and strides if given) with %u values "
                            "and pads with %u; got %u, %u, %u",
                            ns, 2 * ns, n_k, s ? n_s : ns, p ? n_p : 2 * ns);
  }
  for (uint32_t d = 0; d < ns; ++d) {
    int64_t kk = k[d], ss = s ? s[d] : 1, pb = p ? p[d] : 0, pe = p ? p[d + ns] : 0;
    if (kk < 1 || ss < 1 || pb < 0 || pe < 0 || kk > MLCC_INFER_MAX_NUMEL ||
        pb > MLCC_INFER_MAX_NUMEL || pe > MLCC_INFER_MAX_NUMEL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "MaxUnpool needs kernel_shape and strides >= 1 and pads >= 0; "
                              "axis %u has %lld, %lld, %lld/%lld",
                              d, (long long)kk, (long long)ss, (long long)pb, (long long)pe);
    }
    int64_t in = x->dims[d + 2], out = 0;
    if (in == 0) {
      out_shape->dims[d + 2] = 0;
      continue;
    }
    MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "unpooled dim", in - 1, ss, &out));
    MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "unpooled dim", out, kk, &out));
    out -= pb;
    out -= pe;
    if (out < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "MaxUnpool output axis %u would be %lld (pads exceed the window)",
                              d + 2, (long long)out);
    }
    out_shape->dims[d + 2] = out;
  }
  return mlcc_ok_status();
}

// X [N,C,D1..Dk] float, I int64 of X's shape; output of the inferred shape
// (mlcc_max_unpool_shape) or of the constant output_shape (input 2) when
// given, which must not be smaller.
mlcc_status_t mlcc_infer_max_unpool(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *ix = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "I", true, &ix));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, ix, "I", MLCC_INFER_DT_INT32_64));
  int32_t rank = x->shape.rank;
  if (!mlcc_shape_equal(&x->shape, &ix->shape)) {
    char a[MLCC_INFER_SHAPE_BUF], b[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MaxUnpool needs I of X's shape; got X %s and I %s",
                            mlcc_infer_fmt_shape(&x->shape, a),
                            mlcc_infer_fmt_shape(&ix->shape, b));
  }
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_max_unpool_shape(node, &x->shape, &y));
  int64_t shape[MLCC_MAX_RANK];
  uint32_t n_shape = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_ints(node, 2, "output_shape", "output shape", false,
                                             false, shape, MLCC_MAX_RANK, &n_shape, &present));
  if (present) {
    if (n_shape != (uint32_t)rank || shape[0] != y.dims[0] || shape[1] != y.dims[1]) {
      char a[MLCC_INFER_SHAPE_BUF];
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "MaxUnpool output_shape must have %d values starting with N, C "
                              "of X %s; got %u values",
                              (int)rank, mlcc_infer_fmt_shape(&x->shape, a), n_shape);
    }
    // The unpooled tensor of the inferred shape sits at the origin of the
    // requested one (ONNX reference), which must therefore not be smaller.
    for (int32_t d = 2; d < rank; ++d) {
      if (shape[d] < y.dims[d]) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "MaxUnpool output_shape must not be smaller than the inferred "
                                "shape; axis %d is %lld < %lld",
                                (int)d, (long long)shape[d], (long long)y.dims[d]);
      }
      y.dims[d] = shape[d];
    }
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// Upsample 7-9
//===----------------------------------------------------------------------===//

// Reads Upsample's per-dim scales: the 'scales' attribute at opset 7-8, the
// constant float input 1 at opset 9 (the emitter reads them the same way).
// |out_scales| has MLCC_MAX_RANK entries.
static mlcc_status_t upsample_scales(mlcc_node_t* node, int32_t rank, double* out_scales) {
  memset(out_scales, 0, MLCC_MAX_RANK * sizeof(double));
  uint32_t n = 0;
  if (node->opset < 9) {
    if (node->n_inputs > 1) {
      return bad(node, "takes 'scales' as an attribute and has 1 input");
    }
    const float* f = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_floats(node, "scales", &f, &n));
    if (f == NULL) return bad(node, "needs the attribute 'scales'");
    if (n == (uint32_t)rank) {
      for (uint32_t i = 0; i < n; ++i) out_scales[i] = f[i];
    }
  } else {
    if (mlcc_node_attr(node, "scales") != NULL) {
      return bad(node, "takes 'scales' as input 1, not as an attribute");
    }
    bool present = false;
    MLCC_RETURN_IF_ERROR(mlcc_infer_const_floats(node, 1, "scales", "scale factors", true,
                                                 out_scales, MLCC_MAX_RANK, &n, &present));
  }
  if (n != (uint32_t)rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Upsample (opset %d) 'scales' must have one value per input dim "
                            "(%d); got %u",
                            (int)node->opset, (int)rank, n);
  }
  return mlcc_ok_status();
}

// Output dim = floor(input dim * scale); mode nearest (any dtype) or linear
// (float dtypes).
mlcc_status_t mlcc_infer_upsample(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_ANY));
  static const char* const kModes[] = {"nearest", "linear"};
  MLCC_RETURN_IF_ERROR(check_enum(node, "mode", "nearest", kModes, 2));
  const char* mode = "nearest";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "nearest", &mode));
  if (strcmp(mode, "linear") == 0 && !mlcc_dtype_is_float(x->dtype)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Upsample mode 'linear' supports float dtypes; got %s",
                            mlcc_dtype_name(x->dtype));
  }
  int32_t rank = x->shape.rank;
  double scales[MLCC_MAX_RANK];
  MLCC_RETURN_IF_ERROR(upsample_scales(node, rank, scales));
  mlcc_shape_t y = x->shape;
  for (int32_t d = 0; d < rank; ++d) {
    double s = scales[d];
    if (!(s > 0) || isinf(s)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Upsample 'scales' must be finite and > 0; got %g at position %d",
                              s, (int)d);
    }
    double out = floor((double)x->shape.dims[d] * s);
    if (!(out >= 0) || out > (double)MLCC_INFER_MAX_NUMEL) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Upsample output dim %d would be %g (input %lld * scale %g); mlcc "
                              "supports 0..2^40",
                              (int)d, out, (long long)x->shape.dims[d], s);
    }
    y.dims[d] = (int64_t)out;
    if (y.dims[d] > 0 && x->shape.dims[d] == 0) {
      return bad(node, "cannot upsample an empty dim to a non-empty one");
    }
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// ReverseSequence 10, Det 11
//===----------------------------------------------------------------------===//

// input rank >= 2; batch_axis/time_axis are 0 and 1 in either order;
// sequence_lens int64 [batch].
mlcc_status_t mlcc_infer_reverse_sequence(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *lens = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "sequence_lens", true, &lens));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", MLCC_INFER_DT_ANY));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, lens, "sequence_lens",
                                              MLCC_INFER_DT_INT32_64));
  if (x->shape.rank < 2) return bad(node, "needs input of rank >= 2");
  int64_t ba = 1, ta = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "batch_axis", 1, &ba));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "time_axis", 0, &ta));
  if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "ReverseSequence needs batch_axis and time_axis to be 0 and 1 in "
                            "some order; got %lld and %lld",
                            (long long)ba, (long long)ta);
  }
  if (lens->shape.rank != 1 || lens->shape.dims[0] != x->shape.dims[ba]) {
    char a[MLCC_INFER_SHAPE_BUF], b[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "ReverseSequence needs sequence_lens [batch] with batch = input dim "
                            "%lld; got input %s and sequence_lens %s",
                            (long long)ba, mlcc_infer_fmt_shape(&x->shape, a),
                            mlcc_infer_fmt_shape(&lens->shape, b));
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

// X [*, M, M] float -> [*].
mlcc_status_t mlcc_infer_det(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  int32_t r = x->shape.rank;
  if (r < 2 || x->shape.dims[r - 1] != x->shape.dims[r - 2]) {
    char a[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Det needs square matrices [*, M, M]; got %s",
                            mlcc_infer_fmt_shape(&x->shape, a));
  }
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = r - 2;
  for (int32_t d = 0; d < r - 2; ++d) y.dims[d] = x->shape.dims[d];
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

//===----------------------------------------------------------------------===//
// DeformConv 19/22: X [N,C,H,W], W [oC,C/group,kH,kW], offset, [B], [mask]
//===----------------------------------------------------------------------===//

// Reads INTS attribute |name| of exactly |n| values (|def| each when absent)
// into |out|; each value must be >= |min|. INVALID_MODEL otherwise.
static mlcc_status_t dc_ints(const mlcc_node_t* node, const char* name, uint32_t n,
                             int64_t def, int64_t min, int64_t* out) {
  const int64_t* v = NULL;
  uint32_t count = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, name, &v, &count));
  if (v != NULL && count != n) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "DeformConv (opset %d) attribute '%s' needs %u values for a 2-D "
                            "input; got %u",
                            (int)node->opset, name, n, count);
  }
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = v != NULL ? v[i] : def;
    // 2^20 bounds every product of the geometry far below int64 overflow.
    if (out[i] < min || out[i] > ((int64_t)1 << 20)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "DeformConv (opset %d) attribute '%s' values must be in "
                              "%lld..%lld; got %lld",
                              (int)node->opset, name, (long long)min,
                              (long long)((int64_t)1 << 20), (long long)out[i]);
    }
  }
  return mlcc_ok_status();
}

// INVALID_MODEL unless |v| has rank |rank| and dims |want| (|form| names them).
static mlcc_status_t dc_shape(const mlcc_node_t* node, const mlcc_value_t* v,
                              const char* name, const char* form, int32_t rank,
                              const int64_t* want) {
  bool ok = v->shape.rank == rank;
  for (int32_t i = 0; ok && i < rank; ++i) ok = v->shape.dims[i] == want[i];
  if (ok) return mlcc_ok_status();
  char got[MLCC_INFER_SHAPE_BUF], exp[MLCC_INFER_SHAPE_BUF];
  mlcc_shape_t ws;
  memset(&ws, 0, sizeof(ws));
  ws.rank = rank;
  for (int32_t i = 0; i < rank; ++i) ws.dims[i] = want[i];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "DeformConv (opset %d) input '%s' must be %s = %s; got %s",
                          (int)node->opset, name, form, mlcc_infer_fmt_shape(&ws, exp),
                          mlcc_infer_fmt_shape(&v->shape, got));
}

mlcc_status_t mlcc_deform_conv_resolve(const mlcc_node_t* node, mlcc_deform_conv_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_value_t *x = NULL, *w = NULL, *off = NULL, *b = NULL, *mask = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "W", true, &w));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "offset", true, &off));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "B", false, &b));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 4, "mask", false, &mask));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", w, "W"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", off, "offset"));
  if (b != NULL) MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", b, "B"));
  if (mask != NULL) MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", mask, "mask"));
  if (x->shape.rank < 3) {
    return bad(node, "needs X [N,C,D1,...] of rank >= 3");
  }
  if (x->shape.rank != 4) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "DeformConv (opset %d) supports 2-D inputs (X [N,C,H,W]) only; got "
                            "rank %d (the 1-D and 3-D forms are not implemented)",
                            (int)node->opset, (int)x->shape.rank);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, w, "W", 4));
  out->n = x->shape.dims[0];
  out->c = x->shape.dims[1];
  out->h = x->shape.dims[2];
  out->w = x->shape.dims[3];
  out->oc = w->shape.dims[0];
  out->kh = w->shape.dims[2];
  out->kw = w->shape.dims[3];
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "group", 1, &out->group));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "offset_group", 1, &out->offset_group));
  if (out->group < 1 || out->offset_group < 1) {
    return bad(node, "attributes 'group' and 'offset_group' must be >= 1");
  }
  if (out->c % out->group != 0 || out->oc % out->group != 0 ||
      w->shape.dims[1] * out->group != out->c) {
    char a[MLCC_INFER_SHAPE_BUF], c[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "DeformConv (opset %d) needs C and oC divisible by group %lld and W "
                            "[oC, C/group, kH, kW]; got X %s and W %s",
                            (int)node->opset, (long long)out->group,
                            mlcc_infer_fmt_shape(&x->shape, a), mlcc_infer_fmt_shape(&w->shape, c));
  }
  if (out->c % out->offset_group != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "DeformConv (opset %d) needs C (%lld) divisible by offset_group %lld",
                            (int)node->opset, (long long)out->c, (long long)out->offset_group);
  }
  int64_t ks[2] = {out->kh, out->kw};
  const int64_t* kattr = NULL;
  uint32_t kn = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "kernel_shape", &kattr, &kn));
  if (kattr != NULL && (kn != 2 || kattr[0] != ks[0] || kattr[1] != ks[1])) {
    return bad(node, "attribute 'kernel_shape' must equal W's spatial dims [kH, kW]");
  }
  if (ks[0] < 1 || ks[1] < 1) return bad(node, "needs a kernel of at least 1x1");
  int64_t pads[4];
  MLCC_RETURN_IF_ERROR(dc_ints(node, "strides", 2, 1, 1, out->stride));
  MLCC_RETURN_IF_ERROR(dc_ints(node, "dilations", 2, 1, 1, out->dilation));
  MLCC_RETURN_IF_ERROR(dc_ints(node, "pads", 4, 0, 0, pads));
  int64_t in[2] = {out->h, out->w}, res[2];
  for (int a = 0; a < 2; ++a) {
    out->pad_begin[a] = pads[a];
    out->pad_end[a] = pads[a + 2];
    int64_t span = (ks[a] - 1) * out->dilation[a] + 1;
    int64_t padded = in[a] + pads[a] + pads[a + 2];
    if (ks[a] > ((int64_t)1 << 20) || padded < span) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "DeformConv (opset %d) kernel span %lld (dilated) exceeds the "
                              "padded input %lld along spatial axis %d",
                              (int)node->opset, (long long)span, (long long)padded, a);
    }
    res[a] = (padded - span) / out->stride[a] + 1;
  }
  out->oh = res[0];
  out->ow = res[1];
  int64_t taps = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "offset_group*kH*kW", out->offset_group,
                                      ks[0] * ks[1], &taps));
  const int64_t off_want[4] = {out->n, 2 * taps, out->oh, out->ow};
  MLCC_RETURN_IF_ERROR(dc_shape(node, off, "offset", "[N, offset_group*2*kH*kW, oH, oW]", 4,
                                off_want));
  if (b != NULL) {
    const int64_t b_want[1] = {out->oc};
    MLCC_RETURN_IF_ERROR(dc_shape(node, b, "B", "[oC]", 1, b_want));
  }
  if (mask != NULL) {
    const int64_t m_want[4] = {out->n, taps, out->oh, out->ow};
    MLCC_RETURN_IF_ERROR(dc_shape(node, mask, "mask", "[N, offset_group*kH*kW, oH, oW]", 4,
                                  m_want));
  }
  out->has_bias = b != NULL;
  out->has_mask = mask != NULL;
  return mlcc_ok_status();
}

// X [N,C,H,W] -> Y [N,oC,oH,oW] (2-D only; see mlcc_deform_conv_resolve).
mlcc_status_t mlcc_infer_deform_conv(mlcc_node_t* node) {
  mlcc_deform_conv_t g;
  MLCC_RETURN_IF_ERROR(mlcc_deform_conv_resolve(node, &g));
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = 4;
  y.dims[0] = g.n;
  y.dims[1] = g.oc;
  y.dims[2] = g.oh;
  y.dims[3] = g.ow;
  return mlcc_infer_set_output(node, 0, mlcc_node_input(node, 0)->dtype, &y);
}

// SPDX-License-Identifier: Apache-2.0
// Shape/type inference for onnxruntime's int8 contrib ops (domain
// com.microsoft, opset 1; ops.def "Quantized contrib ops"): QLinearAdd,
// QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool and
// QLinearConcat. QOperator models use them and quant-fuse
// (passes/quant_fuse.c) writes them for the QDQ forms. Every scale and zero
// point is per tensor (one element; onnxruntime requires the same), may be
// computed at run time, and a zero point may be omitted (0) except
// QLinearConcat's. targets/kernels/qelementwise.c emits them.
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"
#include "ir/ops/quant.h"
#include "ir/ops/spatial.h"

// INVALID_MODEL unless |v| is int8 or uint8 (and, with |like| present, of
// |like|'s dtype).
static mlcc_status_t check_q8(const mlcc_node_t* node, const mlcc_value_t* v, const char* name,
                              const mlcc_value_t* like, const char* like_name) {
  if (v == NULL) return mlcc_ok_status();
  if (v->dtype != MLCC_DTYPE_U8 && v->dtype != MLCC_DTYPE_I8) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' must be int8 or uint8; got %s", mlcc_infer_op(node),
                            name, mlcc_dtype_name(v->dtype));
  }
  if (like != NULL) return mlcc_infer_same_dtype(node, like, like_name, v, name);
  return mlcc_ok_status();
}

// Input |i| (|name|) as a per-tensor float32 scale: present, float32, one
// element. INVALID_MODEL otherwise; a per-axis scale is UNIMPLEMENTED.
static mlcc_status_t check_scale(const mlcc_node_t* node, uint32_t i, const char* name) {
  mlcc_value_t* s = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, true, &s));
  if (s->dtype != MLCC_DTYPE_F32) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s input '%s' must be float32; got %s",
                            mlcc_infer_op(node), name, mlcc_dtype_name(s->dtype));
  }
  if (mlcc_infer_numel(&s->shape) != 1) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s input '%s' has shape %s; only per-tensor quantization (one "
                            "element) is supported",
                            mlcc_infer_op(node), name, mlcc_infer_fmt_shape(&s->shape, sb));
  }
  return mlcc_ok_status();
}

// Input |i| (|name|) as a zero point of |data|'s dtype with one element;
// absent is fine unless |required|.
static mlcc_status_t check_zp(const mlcc_node_t* node, uint32_t i, const char* name, bool required,
                              const mlcc_value_t* data, const char* data_name) {
  mlcc_value_t* z = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, required, &z));
  if (z == NULL) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(check_q8(node, z, name, data, data_name));
  if (mlcc_infer_numel(&z->shape) != 1) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s input '%s' has shape %s; only per-tensor quantization (one "
                            "element) is supported",
                            mlcc_infer_op(node), name, mlcc_infer_fmt_shape(&z->shape, sb));
  }
  return mlcc_ok_status();
}

// QLinearAdd / QLinearMul: (A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale,
// C_zp?) -> C of A's dtype, numpy broadcast of A and B.
mlcc_status_t mlcc_infer_qlinear_binary(mlcc_node_t* node) {
  mlcc_value_t *a = NULL, *b = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "A", true, &a));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "B", true, &b));
  MLCC_RETURN_IF_ERROR(check_q8(node, a, "A", NULL, NULL));
  MLCC_RETURN_IF_ERROR(check_q8(node, b, "B", a, "A"));
  MLCC_RETURN_IF_ERROR(check_scale(node, 1, "A_scale"));
  MLCC_RETURN_IF_ERROR(check_scale(node, 4, "B_scale"));
  MLCC_RETURN_IF_ERROR(check_scale(node, 6, "C_scale"));
  MLCC_RETURN_IF_ERROR(check_zp(node, 2, "A_zero_point", false, a, "A"));
  MLCC_RETURN_IF_ERROR(check_zp(node, 5, "B_zero_point", false, a, "A"));
  MLCC_RETURN_IF_ERROR(check_zp(node, 7, "C_zero_point", false, a, "A"));
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &a->shape, "A", &b->shape, "B", &y));
  return mlcc_infer_set_output(node, 0, a->dtype, &y);
}

// The channels_last attribute (0 or 1, default 0) of a QLinear pool.
static mlcc_status_t channels_last(const mlcc_node_t* node, bool* out) {
  int64_t cl = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "channels_last", 0, &cl));
  if (cl != 0 && cl != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'channels_last' must be 0 or 1; got %lld",
                            mlcc_infer_op(node), (long long)cl);
  }
  *out = cl != 0;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_qlinear_pool_resolve(const mlcc_node_t* node, mlcc_spatial_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  bool cl = false;
  MLCC_RETURN_IF_ERROR(channels_last(node, &cl));
  if (x->shape.rank < 3) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs X of rank >= 3; got %s",
                            mlcc_infer_op(node), mlcc_infer_fmt_shape(&x->shape, sb));
  }
  if (node->op == MLCC_OP_QLINEAR_GLOBAL_AVERAGE_POOL) {
    // The window is the whole spatial extent.
    out->n_spatial = x->shape.rank - 2;
    for (int32_t d = 0; d < out->n_spatial; ++d) {
      out->in[d] = x->shape.dims[cl ? 1 + d : 2 + d];
      out->kernel[d] = out->in[d];
      out->strides[d] = out->dilations[d] = out->out[d] = 1;
    }
    out->group = 1;
    out->out_channels = x->shape.dims[cl ? x->shape.rank - 1 : 1];
    out->count_include_pad = true;
    return mlcc_ok_status();
  }
  if (cl) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "QLinearAveragePool with channels_last=1 is not supported (only "
                            "NCHW)");
  }
  if (mlcc_node_attr(node, "dilations") != NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "QLinearAveragePool has no attribute 'dilations'");
  }
  // AveragePool-11's rules (auto_pad, ceil_mode, count_include_pad) on a
  // float stand-in of X.
  mlcc_status_t st = mlcc_spatial_resolve_as(node, MLCC_OP_AVERAGE_POOL, 11, x, NULL, out);
  if (!mlcc_status_is_ok(st)) {
    return mlcc_status_annotate(st, "in the window of %s (checked by AveragePool-11's rules)",
                                mlcc_infer_op(node));
  }
  return mlcc_ok_status();
}

// QLinearGlobalAveragePool / QLinearAveragePool: (X, x_scale, x_zp?,
// y_scale, y_zp?) -> Y of X's dtype; [N, C, 1...] or, channels_last,
// [N, 1..., C] for the global pool; the AveragePool window for the other.
mlcc_status_t mlcc_infer_qlinear_pool(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(check_q8(node, x, "X", NULL, NULL));
  MLCC_RETURN_IF_ERROR(check_scale(node, 1, "x_scale"));
  MLCC_RETURN_IF_ERROR(check_scale(node, 3, "y_scale"));
  MLCC_RETURN_IF_ERROR(check_zp(node, 2, "x_zero_point", false, x, "X"));
  MLCC_RETURN_IF_ERROR(check_zp(node, 4, "y_zero_point", false, x, "X"));
  mlcc_spatial_t g;
  MLCC_RETURN_IF_ERROR(mlcc_qlinear_pool_resolve(node, &g));
  if (node->op == MLCC_OP_QLINEAR_AVERAGE_POOL) {
    // With count_include_pad, a ceil_mode window that reaches past the
    // padded extent is divided by its part inside that extent in ONNX
    // AveragePool (and mlcc's float kernel), by the whole kernel in
    // onnxruntime's QLinearAveragePool: refused rather than guessed.
    for (int32_t d = 0; g.count_include_pad && d < g.n_spatial; ++d) {
      int64_t last = (g.out[d] - 1) * g.strides[d] - g.pad_begin[d] + g.kernel[d] - 1;
      if (last >= g.in[d] + g.pad_end[d]) {
        return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                "QLinearAveragePool with count_include_pad=1 and a ceil_mode "
                                "window past the padded input (spatial dim %d) is not "
                                "supported: its divisor differs between ONNX AveragePool and "
                                "onnxruntime's kernel",
                                (int)d);
      }
    }
    return mlcc_infer_set_window_output(node, &g, 0, x->dtype);
  }
  bool cl = false;
  MLCC_RETURN_IF_ERROR(channels_last(node, &cl));
  mlcc_shape_t y = x->shape;
  for (int32_t d = 0; d < g.n_spatial; ++d) y.dims[cl ? 1 + d : 2 + d] = 1;
  return mlcc_infer_set_output(node, 0, x->dtype, &y);
}

// QLinearConcat: (Y_scale, Y_zp, (X_i, X_scale_i, X_zp_i)...) -> Y of
// Y_zp's dtype, concatenated on 'axis' (required) like Concat.
mlcc_status_t mlcc_infer_qlinear_concat(mlcc_node_t* node) {
  if (node->n_inputs < 5 || (node->n_inputs - 2) % 3 != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "QLinearConcat needs Y_scale, Y_zero_point and (X, X_scale, "
                            "X_zero_point) triples; got %u inputs",
                            node->n_inputs);
  }
  mlcc_value_t* yz = NULL;
  MLCC_RETURN_IF_ERROR(check_scale(node, 0, "Y_scale"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "Y_zero_point", true, &yz));
  MLCC_RETURN_IF_ERROR(check_zp(node, 1, "Y_zero_point", true, NULL, NULL));
  if (mlcc_node_attr(node, "axis") == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "QLinearConcat needs the attribute 'axis'; it is missing");
  }
  int64_t axis64 = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis64));
  mlcc_value_t* first = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "inputs[0]", true, &first));
  int32_t axis = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis64, first->shape.rank, &axis));
  mlcc_shape_t y = first->shape;
  y.dims[axis] = 0;
  for (uint32_t t = 0; 2 + 3 * t < node->n_inputs; ++t) {
    char name[32], sname[40], zname[40];
    snprintf(name, sizeof(name), "inputs[%u]", t);
    snprintf(sname, sizeof(sname), "X_scale[%u]", t);
    snprintf(zname, sizeof(zname), "X_zero_point[%u]", t);
    mlcc_value_t* in = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2 + 3 * t, name, true, &in));
    MLCC_RETURN_IF_ERROR(check_q8(node, in, name, yz, "Y_zero_point"));
    MLCC_RETURN_IF_ERROR(check_scale(node, 3 + 3 * t, sname));
    MLCC_RETURN_IF_ERROR(check_zp(node, 4 + 3 * t, zname, true, yz, "Y_zero_point"));
    MLCC_RETURN_IF_ERROR(mlcc_infer_concat_compatible("QLinearConcat", first, in, name, axis));
    MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "concatenated dim", y.dims[axis],
                                        in->shape.dims[axis], &y.dims[axis]));
  }
  return mlcc_infer_set_output(node, 0, yz->dtype, &y);
}

// QLookup (mlcc-internal, ops.def): X int8/uint8 of any shape, Table a
// [256] int8/uint8 tensor; Y has X's shape and Table's dtype.
mlcc_status_t mlcc_infer_qlookup(mlcc_node_t* node) {
  mlcc_value_t *x = NULL, *t = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "Table", true, &t));
  MLCC_RETURN_IF_ERROR(check_q8(node, x, "X", NULL, NULL));
  MLCC_RETURN_IF_ERROR(check_q8(node, t, "Table", NULL, NULL));
  if (t->shape.rank != 1 || t->shape.dims[0] != 256) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input 'Table' must have shape [256]; got %s", mlcc_infer_op(node),
                            mlcc_infer_fmt_shape(&t->shape, sb));
  }
  return mlcc_infer_set_output(node, 0, t->dtype, &x->shape);
}

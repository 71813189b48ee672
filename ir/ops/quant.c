// SPDX-License-Identifier: Apache-2.0
// Shape/type inference for the quantization ops (ops.def "Quantization"):
// QuantizeLinear, DequantizeLinear (opsets 10-26: per-tensor, and per-axis
// from 13; 21+: block_size, int16/uint16, int4/uint4; the other additions of
// 19-25 are refused), DynamicQuantizeLinear 11, QLinearConv 10, ConvInteger 10,
// QLinearMatMul 10 and MatMulInteger 10; plus the layout resolvers of
// quant.h that the emitters share. Scales and zero points may be computed at
// run time: only their dtypes and shapes are checked here.
#include <string.h>

#include "ir/ops/infer_impl.h"
#include "ir/ops/quant.h"
#include "ir/ops/spatial.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// INVALID_MODEL "<Op> input '<name>' must be int8 or uint8; got <dtype>".
static mlcc_status_t check_8bit(const mlcc_node_t* node, const mlcc_value_t* v,
                                const char* name) {
  if (v == NULL || v->dtype == MLCC_DTYPE_U8 || v->dtype == MLCC_DTYPE_I8) {
    return mlcc_ok_status();
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s (opset %d) input '%s' must be int8 or uint8; got %s",
                          mlcc_infer_op(node), (int)node->opset, name,
                          mlcc_dtype_name(v->dtype));
}

// INVALID_MODEL unless |v| (if present) is float32; UNIMPLEMENTED for the
// float16/bfloat16 scales that QLinearMatMul 21+ allows.
static mlcc_status_t check_f32(const mlcc_node_t* node, const mlcc_value_t* v,
                               const char* name) {
  if (v == NULL || v->dtype == MLCC_DTYPE_F32) return mlcc_ok_status();
  if (node->op == MLCC_OP_QLINEAR_MATMUL && node->opset >= 21 &&
      (v->dtype == MLCC_DTYPE_F16 || v->dtype == MLCC_DTYPE_BF16)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s with a %s '%s' (opset 21+) is not supported; only float32",
                            mlcc_infer_op(node), mlcc_dtype_name(v->dtype), name);
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s (opset %d) input '%s' must be float32; got %s",
                          mlcc_infer_op(node), (int)node->opset, name,
                          mlcc_dtype_name(v->dtype));
}

// INVALID_MODEL unless |v| (if present) holds exactly one element (a scalar
// or a [1]-shaped tensor: per-tensor quantization).
static mlcc_status_t check_one(const mlcc_node_t* node, const mlcc_value_t* v,
                               const char* name) {
  if (v == NULL || mlcc_infer_numel(&v->shape) == 1) return mlcc_ok_status();
  char sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s input '%s' must be a scalar (per-tensor quantization); got "
                          "shape %s",
                          mlcc_infer_op(node), name, mlcc_infer_fmt_shape(&v->shape, sb));
}

// INVALID_MODEL unless |a| and |b| (both present) have the same shape, where
// a scalar and a one-element tensor count as the same.
static mlcc_status_t check_same_shape(const mlcc_node_t* node, const mlcc_value_t* a,
                                      const char* a_name, const mlcc_value_t* b,
                                      const char* b_name) {
  if (a == NULL || b == NULL) return mlcc_ok_status();
  int64_t na = mlcc_infer_numel(&a->shape), nb = mlcc_infer_numel(&b->shape);
  if (mlcc_shape_equal(&a->shape, &b->shape) || (na == 1 && nb == 1)) {
    return mlcc_ok_status();
  }
  char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s needs '%s' and '%s' of the same shape; got %s and %s",
                          mlcc_infer_op(node), a_name, b_name,
                          mlcc_infer_fmt_shape(&a->shape, sa),
                          mlcc_infer_fmt_shape(&b->shape, sb));
}

//===----------------------------------------------------------------------===//
// QuantizeLinear, DequantizeLinear
//===----------------------------------------------------------------------===//

// [outer, len, inner] of |x| around axis |ax|, not blocked.
static void set_axis_layout(const mlcc_value_t* x, int32_t ax, mlcc_quant_linear_t* out) {
  out->axis = ax;
  out->outer = 1;
  out->len = x->shape.dims[ax];
  out->inner = 1;
  for (int32_t d = 0; d < x->shape.rank; ++d) {
    if (d < ax) out->outer *= x->shape.dims[d];
    else if (d > ax) out->inner *= x->shape.dims[d];
  }
  out->block = 0;
  out->n_blocks = out->len;
}

// Blocked quantization (opset 21): |s| has x's rank, dim axis
// ceil(x.shape[axis] / block), the other dims x's.
static mlcc_status_t resolve_blocked(const mlcc_node_t* node, const mlcc_value_t* x,
                                     const mlcc_value_t* s, const char* s_name, int64_t block,
                                     mlcc_quant_linear_t* out) {
  int64_t axis = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 1, &axis));
  int32_t ax = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis, x->shape.rank, &ax));
  int64_t nb = (x->shape.dims[ax] + block - 1) / block;
  bool ok = s->shape.rank == x->shape.rank;
  for (int32_t d = 0; ok && d < x->shape.rank; ++d) {
    ok = s->shape.dims[d] == (d == ax ? nb : x->shape.dims[d]);
  }
  if (!ok) {
    char sx[MLCC_INFER_SHAPE_BUF], ss[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s with block_size=%lld needs '%s' of x's shape with dim axis=%d "
                            "= ceil(%lld / %lld) = %lld; got x%s and %s%s",
                            mlcc_infer_op(node), (long long)block, s_name, (int)ax,
                            (long long)x->shape.dims[ax], (long long)block, (long long)nb,
                            mlcc_infer_fmt_shape(&x->shape, sx), s_name,
                            mlcc_infer_fmt_shape(&s->shape, ss));
  }
  set_axis_layout(x, ax, out);
  out->block = block;
  out->n_blocks = nb;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_quant_linear_resolve(const mlcc_node_t* node, mlcc_quant_linear_t* out) {
  memset(out, 0, sizeof(*out));
  bool quant = node->op == MLCC_OP_QUANTIZE_LINEAR;
  mlcc_value_t *x = NULL, *s = NULL, *zp = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "x", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, quant ? "y_scale" : "x_scale", true, &s));
  MLCC_RETURN_IF_ERROR(
      mlcc_infer_input(node, 2, quant ? "y_zero_point" : "x_zero_point", false, &zp));
  const char* s_name = quant ? "y_scale" : "x_scale";
  const char* zp_name = quant ? "y_zero_point" : "x_zero_point";
  MLCC_RETURN_IF_ERROR(check_same_shape(node, s, s_name, zp, zp_name));
  int64_t numel = mlcc_infer_numel(&x->shape), ns = mlcc_infer_numel(&s->shape);
  char sx[MLCC_INFER_SHAPE_BUF], ss[MLCC_INFER_SHAPE_BUF];
  int64_t block = 0;
  if (node->opset >= 21) MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "block_size", 0, &block));
  if (block < 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s block_size must be >= 0; got %lld",
                            mlcc_infer_op(node), (long long)block);
  }
  if (block > 0) return resolve_blocked(node, x, s, s_name, block, out);
  if (ns == 1) {
    out->axis = -1;
    out->outer = 1;
    out->len = 1;
    out->inner = numel;
    out->n_blocks = 1;
    return mlcc_ok_status();
  }
  if (node->opset < 13) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s opset %d takes a scalar '%s' (per-tensor); per-axis "
                            "quantization needs opset 13; got %s",
                            mlcc_infer_op(node), (int)node->opset, s_name,
                            mlcc_infer_fmt_shape(&s->shape, ss));
  }
  int64_t axis = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 1, &axis));
  int32_t ax = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, "attribute 'axis'", axis, x->shape.rank, &ax));
  if (s->shape.rank != 1 || s->shape.dims[0] != x->shape.dims[ax]) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs '%s' to be a scalar or a 1-D tensor of x.shape[axis=%d] "
                            "= %lld elements; got x%s and %s%s",
                            mlcc_infer_op(node), s_name, (int)ax,
                            (long long)x->shape.dims[ax], mlcc_infer_fmt_shape(&x->shape, sx),
                            s_name, mlcc_infer_fmt_shape(&s->shape, ss));
  }
  set_axis_layout(x, ax, out);
  return mlcc_ok_status();
}

// True if |dt| is a quantized type of QuantizeLinear / DequantizeLinear at
// |node|'s opset: int8, uint8; 21+ also int16, uint16, int4, uint4; 25+ int2,
// uint2.
static bool quant_type_ok(const mlcc_node_t* node, mlcc_dtype_t dt) {
  // 19+: the float8 types (y = float8(x / scale + zero point), Cast's tables)
  if (dt == MLCC_DTYPE_F8E8M0) return false;  // a scale type (T2), not a quantized one
  if (dt == MLCC_DTYPE_F4E2M1) return node->opset >= 23;  // Cast's float4 rule
  if (mlcc_dtype_is_float8(dt)) return node->opset >= 19;
  if (dt == MLCC_DTYPE_U8 || dt == MLCC_DTYPE_I8) return true;
  if (node->opset >= 25 && (dt == MLCC_DTYPE_I2 || dt == MLCC_DTYPE_U2)) return true;
  return node->opset >= 21 && (dt == MLCC_DTYPE_I16 || dt == MLCC_DTYPE_U16 ||
                               dt == MLCC_DTYPE_I4 || dt == MLCC_DTYPE_U4);
}

// The attributes and types that opsets 19-25 add to QuantizeLinear and
// DequantizeLinear, where they would change the opset-13 semantics mlcc
// implements: float16/bfloat16 scales (19), 'output_dtype' (Q 21, DQ 23)
// other than the type mlcc produces anyway, and 'precision' (Q 23) other
// than float32. Each is UNIMPLEMENTED (16-bit and 4-bit integer types and
// 'block_size' (21) are implemented; so are the float8 types of 19, see
// quant_type_ok, and float4e2m1 and the 2-bit integers from 23 and 25).
// 'saturate' (19) only concerns float8 outputs.
static mlcc_status_t check_quant_opset19(const mlcc_node_t* node, const mlcc_value_t* x,
                                         const mlcc_value_t* s, const mlcc_value_t* zp,
                                         const char* s_name, mlcc_dtype_t* inout_y) {
  bool quant = node->op == MLCC_OP_QUANTIZE_LINEAR;
  if (node->opset < 19) return mlcc_ok_status();
  if (s->dtype == MLCC_DTYPE_F16 || s->dtype == MLCC_DTYPE_BF16) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s with a %s '%s' (opset 19+) is not supported; only float32",
                            mlcc_infer_op(node), mlcc_dtype_name(s->dtype), s_name);
  }
  if (node->opset < 21) return mlcc_ok_status();
  int64_t out_dt = 0;
  if (quant || node->opset >= 23) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "output_dtype", 0, &out_dt));
  }
  if (quant && out_dt != 0) {
    if (zp != NULL && out_dt != (int64_t)zp->dtype) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "QuantizeLinear output_dtype %lld must match y_zero_point's type "
                              "%s",
                              (long long)out_dt, mlcc_dtype_name(zp->dtype));
    }
    if (out_dt < 0 || out_dt > 255 || !quant_type_ok(node, (mlcc_dtype_t)out_dt)) {
      // outside the spec's T2 of this opset (quant_type_ok is that list)
      return mlcc_make_status(
          MLCC_STATUS_INVALID_MODEL,
          "QuantizeLinear output_dtype %lld (%s) is not a y type of QuantizeLinear-%d; it "
          "takes int8, uint8%s%s%s%s",
          (long long)out_dt,
          out_dt >= 0 && out_dt <= 255 && mlcc_dtype_is_valid((mlcc_dtype_t)out_dt)
              ? mlcc_dtype_name((mlcc_dtype_t)out_dt)
              : "not an ONNX tensor type mlcc knows",
          node->opset,
          node->opset >= 19 ? ", float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz" : "",
          node->opset >= 21 ? ", int16, uint16, int4, uint4" : "",
          node->opset >= 23 ? ", float4e2m1" : "", node->opset >= 25 ? ", int2, uint2" : "");
    }
    *inout_y = (mlcc_dtype_t)out_dt;
  }
  if (!quant && out_dt != 0 && out_dt != MLCC_DTYPE_F32) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "DequantizeLinear to output_dtype %lld (%s) is not supported; only "
                            "float32",
                            (long long)out_dt, mlcc_dtype_name((mlcc_dtype_t)out_dt));
  }
  if (quant && node->opset >= 23) {
    int64_t precision = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "precision", 0, &precision));
    if (precision != 0 && precision != MLCC_DTYPE_F32) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "QuantizeLinear with precision %lld (%s) is not supported; only "
                              "float32",
                              (long long)precision, mlcc_dtype_name((mlcc_dtype_t)precision));
    }
  }
  return mlcc_ok_status();
}

// QuantizeLinear: x float32/int32 -> y of y_zero_point's type (uint8 when
// absent; 21+: or output_dtype), x's shape. DequantizeLinear: x
// int8/uint8/int32 (21+: int16/uint16/int4/uint4) -> float32. Opset 21 adds blocked
// quantization (block_size; mlcc_quant_linear_resolve); float16/bfloat16
// scales and the other 19-25 additions are checked by check_quant_opset19.
mlcc_status_t mlcc_infer_quant_linear(mlcc_node_t* node) {
  bool quant = node->op == MLCC_OP_QUANTIZE_LINEAR;
  mlcc_value_t *x = NULL, *s = NULL, *zp = NULL;
  const char* s_name = quant ? "y_scale" : "x_scale";
  const char* zp_name = quant ? "y_zero_point" : "x_zero_point";
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "x", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, s_name, true, &s));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, zp_name, false, &zp));
  mlcc_dtype_t out_dtype = MLCC_DTYPE_COUNT;  // set by output_dtype (21+)
  MLCC_RETURN_IF_ERROR(check_quant_opset19(node, x, s, zp, s_name, &out_dtype));
  MLCC_RETURN_IF_ERROR(check_f32(node, s, s_name));
  mlcc_dtype_t y_dtype = MLCC_DTYPE_F32;
  if (quant) {
    if (x->dtype != MLCC_DTYPE_F32 && x->dtype != MLCC_DTYPE_I32) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "QuantizeLinear (opset %d) input 'x' must be float32 or int32; "
                              "got %s",
                              (int)node->opset, mlcc_dtype_name(x->dtype));
    }
    if (zp != NULL && !quant_type_ok(node, zp->dtype)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "QuantizeLinear (opset %d) input '%s' must be int8 or uint8%s; "
                              "got %s",
                              (int)node->opset, zp_name,
                              node->opset >= 21 ? node->opset >= 25 ? " (21+: or int16, uint16, int4, uint4; 25+: int2, uint2)" : " (21+: or int16, uint16, int4, uint4)" : "",
                              mlcc_dtype_name(zp->dtype));
    }
    y_dtype = zp != NULL ? zp->dtype : out_dtype != MLCC_DTYPE_COUNT ? out_dtype : MLCC_DTYPE_U8;
  } else {
    if (!quant_type_ok(node, x->dtype) && x->dtype != MLCC_DTYPE_I32) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "DequantizeLinear (opset %d) input 'x' must be int8, uint8%s or "
                              "int32; got %s",
                              (int)node->opset, node->opset >= 25 ? ", int16, uint16, int4, uint4, int2, uint2" : node->opset >= 21 ? ", int16, uint16, int4, uint4" : "",
                              mlcc_dtype_name(x->dtype));
    }
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "x", zp, zp_name));
  }
  if (quant && node->opset >= 19) {
    int64_t saturate = 1;  // an int; only float8 outputs read it (Cast's tables)
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "saturate", 1, &saturate));
  }
  mlcc_quant_linear_t q;
  MLCC_RETURN_IF_ERROR(mlcc_quant_linear_resolve(node, &q));
  return mlcc_infer_set_output(node, 0, y_dtype, &x->shape);
}

// DynamicQuantizeLinear: x float32 -> y uint8 (x's shape), y_scale float32
// scalar, y_zero_point uint8 scalar.
mlcc_status_t mlcc_infer_quant_dynamic(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "x", true, &x));
  MLCC_RETURN_IF_ERROR(check_f32(node, x, "x"));
  mlcc_shape_t scalar;
  memset(&scalar, 0, sizeof(scalar));
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 0, MLCC_DTYPE_U8, &x->shape));
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 1, MLCC_DTYPE_F32, &scalar));
  return mlcc_infer_set_output(node, 2, MLCC_DTYPE_U8, &scalar);
}

//===----------------------------------------------------------------------===//
// QLinearConv, ConvInteger
//===----------------------------------------------------------------------===//

void mlcc_quant_conv_operands(const mlcc_node_t* node, mlcc_quant_conv_operands_t* out) {
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV || node->op == MLCC_OP_QLINEAR_MATMUL;
  out->x = mlcc_node_input(node, 0);
  out->w = mlcc_node_input(node, qlinear ? 3 : 1);
  out->x_zero = mlcc_node_input(node, 2);
  out->w_zero = mlcc_node_input(node, qlinear ? 5 : 3);
  out->x_scale = qlinear ? mlcc_node_input(node, 1) : NULL;
  out->w_scale = qlinear ? mlcc_node_input(node, 4) : NULL;
  out->y_scale = qlinear ? mlcc_node_input(node, 6) : NULL;
  out->y_zero = qlinear ? mlcc_node_input(node, 7) : NULL;
  out->bias = qlinear ? mlcc_node_input(node, 8) : NULL;
  out->y = mlcc_node_output(node, 0);
}

mlcc_status_t mlcc_quant_conv_resolve(const mlcc_node_t* node, mlcc_spatial_t* out) {
  memset(out, 0, sizeof(*out));
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  mlcc_value_t *x = NULL, *w = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "x", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, qlinear ? 3 : 1, "w", true, &w));
  // Conv's rules on float stand-ins of x and w: same attributes, same shapes.
  mlcc_status_t st = mlcc_spatial_resolve_as(node, MLCC_OP_CONV, 0, x, w, out);
  if (!mlcc_status_is_ok(st)) {
    return mlcc_status_annotate(st, "in the convolution window of %s (checked by Conv's rules)",
                                mlcc_infer_op(node));
  }
  return mlcc_ok_status();
}

// INVALID_MODEL unless |v| (if present) is one element or a [m] vector
// (per output channel).
static mlcc_status_t check_per_channel(const mlcc_node_t* node, const mlcc_value_t* v,
                                       const char* name, int64_t m) {
  if (v == NULL || mlcc_infer_numel(&v->shape) == 1) return mlcc_ok_status();
  if (v->shape.rank == 1 && v->shape.dims[0] == m) return mlcc_ok_status();
  char sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s input '%s' must be a scalar or a 1-D tensor of M=%lld elements "
                          "(one per output channel); got %s",
                          mlcc_infer_op(node), name, (long long)m,
                          mlcc_infer_fmt_shape(&v->shape, sb));
}

// QLinearConv: Y[N, M, out...] of y_zero_point's type. ConvInteger: int32.
mlcc_status_t mlcc_infer_quant_conv(mlcc_node_t* node) {
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  mlcc_value_t *x = NULL, *w = NULL, *xs = NULL, *xz = NULL, *ws = NULL, *wz = NULL;
  mlcc_value_t *ys = NULL, *yz = NULL, *bias = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "x", true, &x));
  if (qlinear) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "x_scale", true, &xs));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "x_zero_point", true, &xz));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "w", true, &w));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 4, "w_scale", true, &ws));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 5, "w_zero_point", true, &wz));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 6, "y_scale", true, &ys));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 7, "y_zero_point", true, &yz));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 8, "B", false, &bias));
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "w", true, &w));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "x_zero_point", false, &xz));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "w_zero_point", false, &wz));
  }
  MLCC_RETURN_IF_ERROR(check_8bit(node, x, "x"));
  MLCC_RETURN_IF_ERROR(check_8bit(node, w, "w"));
  MLCC_RETURN_IF_ERROR(check_8bit(node, yz, "y_zero_point"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "x", xz, "x_zero_point"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, w, "w", wz, "w_zero_point"));
  MLCC_RETURN_IF_ERROR(check_f32(node, xs, "x_scale"));
  MLCC_RETURN_IF_ERROR(check_f32(node, ws, "w_scale"));
  MLCC_RETURN_IF_ERROR(check_f32(node, ys, "y_scale"));
  MLCC_RETURN_IF_ERROR(check_one(node, xs, "x_scale"));
  MLCC_RETURN_IF_ERROR(check_one(node, xz, "x_zero_point"));
  MLCC_RETURN_IF_ERROR(check_one(node, ys, "y_scale"));
  MLCC_RETURN_IF_ERROR(check_one(node, yz, "y_zero_point"));
  mlcc_spatial_t g;
  MLCC_RETURN_IF_ERROR(mlcc_quant_conv_resolve(node, &g));
  MLCC_RETURN_IF_ERROR(check_per_channel(node, ws, "w_scale", g.out_channels));
  MLCC_RETURN_IF_ERROR(check_per_channel(node, wz, "w_zero_point", g.out_channels));
  MLCC_RETURN_IF_ERROR(check_same_shape(node, ws, "w_scale", wz, "w_zero_point"));
  if (bias != NULL) {
    char sb[MLCC_INFER_SHAPE_BUF];
    if (bias->dtype != MLCC_DTYPE_I32 || bias->shape.rank != 1 ||
        bias->shape.dims[0] != g.out_channels) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "QLinearConv needs bias B of int32 [M=%lld]; got %s %s",
                              (long long)g.out_channels, mlcc_dtype_name(bias->dtype),
                              mlcc_infer_fmt_shape(&bias->shape, sb));
    }
  }
  return mlcc_infer_set_window_output(node, &g, 0, qlinear ? yz->dtype : MLCC_DTYPE_I32);
}

//===----------------------------------------------------------------------===//
// QLinearMatMul, MatMulInteger
//===----------------------------------------------------------------------===//

// View of the quantization parameter |p| of operand |opnd| (A when |is_a|)
// in output coordinates (quant.h). |rows_cols| is M for A, N for B.
static mlcc_status_t param_view(const mlcc_node_t* node, const mlcc_value_t* p,
                                const char* name, const mlcc_value_t* opnd, bool is_a,
                                int64_t rows_cols, mlcc_shape_t* view) {
  memset(view, 0, sizeof(*view));
  if (p == NULL || mlcc_infer_numel(&p->shape) == 1) return mlcc_ok_status();
  const mlcc_shape_t* ps = &p->shape;
  const mlcc_shape_t* os = &opnd->shape;
  if (ps->rank == 1 && os->rank == 2 && ps->dims[0] == rows_cols) {
    view->rank = 2;
    view->dims[0] = is_a ? rows_cols : 1;
    view->dims[1] = is_a ? 1 : rows_cols;
    return mlcc_ok_status();
  }
  bool ok = ps->rank == os->rank && os->rank >= 2;
  for (int32_t d = 0; ok && d < ps->rank; ++d) {
    int64_t want = os->dims[d];
    if (d == ps->rank - 1) want = is_a ? 1 : rows_cols;
    if (d == ps->rank - 2) want = is_a ? rows_cols : 1;
    ok = ps->dims[d] == 1 || ps->dims[d] == want;
  }
  if (!ok) {
    char sp[MLCC_INFER_SHAPE_BUF], so[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' must be a scalar, a 1-D tensor of %s=%lld (for a "
                            "2-D %s) or %s's shape with dim %d set to 1; got %s for %s%s",
                            mlcc_infer_op(node), name, is_a ? "M" : "N",
                            (long long)rows_cols, is_a ? "A" : "B", is_a ? "A" : "B",
                            is_a ? -1 : -2, mlcc_infer_fmt_shape(ps, sp), is_a ? "A" : "B",
                            mlcc_infer_fmt_shape(os, so));
  }
  *view = *ps;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_quant_matmul_resolve(const mlcc_node_t* node, mlcc_quant_matmul_t* out) {
  memset(out, 0, sizeof(*out));
  bool qlinear = node->op == MLCC_OP_QLINEAR_MATMUL;
  mlcc_value_t *a = NULL, *b = NULL, *as = NULL, *az = NULL, *bs = NULL, *bz = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, qlinear ? "a" : "A", true, &a));
  if (qlinear) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "a_scale", true, &as));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "a_zero_point", true, &az));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "b", true, &b));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 4, "b_scale", true, &bs));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 5, "b_zero_point", true, &bz));
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "B", true, &b));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "a_zero_point", false, &az));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "b_zero_point", false, &bz));
  }
  if (a->shape.rank < 1 || b->shape.rank < 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs inputs of rank >= 1; got A of rank %d and B of rank %d",
                            mlcc_infer_op(node), (int)a->shape.rank, (int)b->shape.rank);
  }
  mlcc_shape_t sa, sb;
  mlcc_infer_matmul_promote(&a->shape, &b->shape, &sa, &sb);
  out->m = sa.dims[sa.rank - 2];
  out->k = sa.dims[sa.rank - 1];
  out->n = sb.dims[sb.rank - 1];
  if (sb.dims[sb.rank - 2] != out->k) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs equal reduction dims; got A[...,K=%lld] and "
                            "B[K=%lld,...]",
                            mlcc_infer_op(node), (long long)out->k,
                            (long long)sb.dims[sb.rank - 2]);
  }
  out->a_batch = sa;
  out->a_batch.rank -= 2;
  out->b_batch = sb;
  out->b_batch.rank -= 2;
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &out->a_batch, "A's batch dims",
                                             &out->b_batch, "B's batch dims", &out->batch));
  out->out = out->batch;
  if (a->shape.rank != 1) out->out.dims[out->out.rank++] = out->m;
  if (b->shape.rank != 1) out->out.dims[out->out.rank++] = out->n;
  if (out->out.rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s output rank %d exceeds %d",
                            mlcc_infer_op(node), (int)out->out.rank, MLCC_MAX_RANK);
  }
  MLCC_RETURN_IF_ERROR(check_same_shape(node, as, "a_scale", az, "a_zero_point"));
  MLCC_RETURN_IF_ERROR(check_same_shape(node, bs, "b_scale", bz, "b_zero_point"));
  const mlcc_value_t* ap = az != NULL ? az : as;
  const mlcc_value_t* bp = bz != NULL ? bz : bs;
  MLCC_RETURN_IF_ERROR(param_view(node, ap, az != NULL ? "a_zero_point" : "a_scale", a, true,
                                  out->m, &out->a_param));
  MLCC_RETURN_IF_ERROR(param_view(node, bp, bz != NULL ? "b_zero_point" : "b_scale", b, false,
                                  out->n, &out->b_param));
  return mlcc_ok_status();
}

// The 9th input of an mlcc-internal QLinearMatMul (MLCC_QMATMUL_BIAS_ATTR):
// int32 with N elements, and only with the attribute.
static mlcc_status_t check_matmul_bias(const mlcc_node_t* node, const mlcc_quant_matmul_t* q) {
  const mlcc_value_t* bias = node->inputs[8];
  const mlcc_attr_t* flag = mlcc_node_attr(node, MLCC_QMATMUL_BIAS_ATTR);
  if (flag == NULL || flag->kind != MLCC_ATTR_INT || flag->i != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s (opset %d) has 8 inputs; got %u",
                            mlcc_infer_op(node), (int)node->opset, (unsigned)node->n_inputs);
  }
  if (bias == NULL || bias->dtype != MLCC_DTYPE_I32 ||
      mlcc_infer_numel(&bias->shape) != q->n) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s: the bias (input 8) must be int32 with N = %lld elements",
                            mlcc_infer_op(node), (long long)q->n);
  }
  return mlcc_ok_status();
}

// QLinearMatMul: y of y_zero_point's type; MatMulInteger: int32. Shapes as
// numpy.matmul.
mlcc_status_t mlcc_infer_quant_matmul(mlcc_node_t* node) {
  bool qlinear = node->op == MLCC_OP_QLINEAR_MATMUL;
  mlcc_quant_matmul_t q;
  MLCC_RETURN_IF_ERROR(mlcc_quant_matmul_resolve(node, &q));
  const mlcc_value_t* a = node->inputs[0];
  const mlcc_value_t* b = node->inputs[qlinear ? 3 : 1];
  const mlcc_value_t* az = mlcc_node_input(node, 2);
  const mlcc_value_t* bz = mlcc_node_input(node, qlinear ? 5 : 3);
  MLCC_RETURN_IF_ERROR(check_8bit(node, a, qlinear ? "a" : "A"));
  MLCC_RETURN_IF_ERROR(check_8bit(node, b, qlinear ? "b" : "B"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, a, qlinear ? "a" : "A", az, "a_zero_point"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, b, qlinear ? "b" : "B", bz, "b_zero_point"));
  mlcc_dtype_t y_dtype = MLCC_DTYPE_I32;
  if (qlinear) {
    mlcc_value_t *as = NULL, *bs = NULL, *ys = NULL, *yz = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "a_scale", true, &as));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 4, "b_scale", true, &bs));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 6, "y_scale", true, &ys));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 7, "y_zero_point", true, &yz));
    MLCC_RETURN_IF_ERROR(check_f32(node, as, "a_scale"));
    MLCC_RETURN_IF_ERROR(check_f32(node, bs, "b_scale"));
    MLCC_RETURN_IF_ERROR(check_f32(node, ys, "y_scale"));
    MLCC_RETURN_IF_ERROR(check_8bit(node, yz, "y_zero_point"));
    MLCC_RETURN_IF_ERROR(check_one(node, ys, "y_scale"));
    MLCC_RETURN_IF_ERROR(check_one(node, yz, "y_zero_point"));
    y_dtype = yz->dtype;
    if (node->n_inputs > 8) MLCC_RETURN_IF_ERROR(check_matmul_bias(node, &q));
  }
  return mlcc_infer_set_output(node, 0, y_dtype, &q.out);
}

int32_t mlcc_quant_moved_data_inputs(const mlcc_node_t* node) {
  switch (node->op) {
    case MLCC_OP_MAX_POOL:
      return node->n_outputs == 1 || node->outputs[1] == NULL ? 1 : 0;
    case MLCC_OP_RESHAPE:
    case MLCC_OP_FLATTEN:
    case MLCC_OP_TRANSPOSE:
    case MLCC_OP_SQUEEZE:
    case MLCC_OP_UNSQUEEZE:
    case MLCC_OP_IDENTITY:
    case MLCC_OP_DEPTH_TO_SPACE:
    case MLCC_OP_SPACE_TO_DEPTH:
      return 1;
    case MLCC_OP_CONCAT:
      return -1;
    default:
      return 0;
  }
}

//===----------------------------------------------------------------------===//
// WQMatMul (mlcc-internal: weight-only quantized MatMul, quant.h)
//===----------------------------------------------------------------------===//

void mlcc_wq_layout(int64_t k, int64_t n, int64_t bits, int64_t block, mlcc_wq_layout_t* out) {
  memset(out, 0, sizeof(*out));
  out->k = k;
  out->n = n;
  out->bits = bits;
  out->block = block;
  out->n_blocks = block > 0 ? (k + block - 1) / block : 0;
  out->n_pad = (n + MLCC_WQ_PANEL - 1) / MLCC_WQ_PANEL * MLCC_WQ_PANEL;
  out->panels = out->n_pad / MLCC_WQ_PANEL;
  if (bits == 4) {
    int64_t full = block > 0 ? k / block : 0, tail = block > 0 ? k % block : 0;
    out->block_rows = (block + 1) / 2;
    out->panel_rows = full * out->block_rows + (tail + 1) / 2;
  } else {
    out->block_rows = block;
    out->panel_rows = k;
  }
  out->bytes = out->panels * out->panel_rows * MLCC_WQ_PANEL;
}

// INT attribute |name| of |node| into |*out|, INVALID_MODEL unless present
// and within [lo, hi].
static mlcc_status_t wq_attr(const mlcc_node_t* node, const char* name, int64_t lo, int64_t hi,
                             int64_t* out) {
  const mlcc_attr_t* a = mlcc_node_attr(node, name);
  if (a == NULL || a->kind != MLCC_ATTR_INT || a->i < lo || a->i > hi) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs INT attribute '%s' in [%lld, %lld]", mlcc_infer_op(node),
                            name, (long long)lo, (long long)hi);
  }
  *out = a->i;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_wq_resolve(const mlcc_node_t* node, mlcc_wq_layout_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_value_t* a = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "A", true, &a));
  if (a->shape.rank < 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs A of rank >= 1; got a scalar",
                            mlcc_infer_op(node));
  }
  int64_t k = a->shape.dims[a->shape.rank - 1], bits = 0, n = 0, block = 0, offset = 0;
  MLCC_RETURN_IF_ERROR(wq_attr(node, MLCC_WQ_BITS_ATTR, 4, 8, &bits));
  MLCC_RETURN_IF_ERROR(wq_attr(node, MLCC_WQ_N_ATTR, 1, (int64_t)1 << 31, &n));
  MLCC_RETURN_IF_ERROR(wq_attr(node, MLCC_WQ_BLOCK_ATTR, 1, k > 0 ? k : 1, &block));
  MLCC_RETURN_IF_ERROR(wq_attr(node, MLCC_WQ_OFFSET_ATTR, 0, bits == 4 ? 15 : 255, &offset));
  if ((bits != 4 && bits != 8) || k < 1 || k > ((int64_t)1 << 31)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs 4 or 8 bits and 1 <= K < 2^31; got %lld bits, K=%lld",
                            mlcc_infer_op(node), (long long)bits, (long long)k);
  }
  mlcc_wq_layout(k, n, bits, block, out);
  return mlcc_ok_status();
}

// WQMatMul: A float32 [..., K] (2-D when it replaces a Gemm), Wp uint8
// [bytes], S float32 [n_blocks, n_pad], Z uint8 [n_blocks, n_pad] or
// absent -> Y float32 [..., N] (a 1-D A gives [N], as numpy.matmul).
mlcc_status_t mlcc_infer_wq_matmul(mlcc_node_t* node) {
  mlcc_wq_layout_t l;
  MLCC_RETURN_IF_ERROR(mlcc_wq_resolve(node, &l));
  mlcc_value_t *a = NULL, *w = NULL, *s = NULL, *z = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "A", true, &a));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "Wp", true, &w));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "S", true, &s));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 3, "Z", false, &z));
  const mlcc_attr_t* gemm = mlcc_node_attr(node, MLCC_WQ_GEMM_ATTR);
  const char* from = gemm != NULL ? "Gemm" : "MatMul";
  if (a->dtype != MLCC_DTYPE_F32) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s (a %s of a DequantizeLinear weight) needs float32 A, the "
                            "DequantizeLinear's output type; got %s",
                            mlcc_infer_op(node), from, mlcc_dtype_name(a->dtype));
  }
  if (gemm != NULL && a->shape.rank != 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Gemm needs a 2-D A; got rank %d",
                            (int)a->shape.rank);
  }
  bool ok = w->dtype == MLCC_DTYPE_U8 && w->shape.rank == 1 && w->shape.dims[0] == l.bytes &&
            s->dtype == MLCC_DTYPE_F32 && s->shape.rank == 2 && s->shape.dims[0] == l.n_blocks &&
            s->shape.dims[1] == l.n_pad;
  if (ok && z != NULL) ok = z->dtype == MLCC_DTYPE_U8 && mlcc_shape_equal(&z->shape, &s->shape);
  if (!ok) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs Wp uint8 [%lld], S float32 [%lld, %lld] and Z absent or "
                            "uint8 of S's shape (K=%lld, N=%lld, %lld bits, block %lld)",
                            mlcc_infer_op(node), (long long)l.bytes, (long long)l.n_blocks,
                            (long long)l.n_pad, (long long)l.k, (long long)l.n,
                            (long long)l.bits, (long long)l.block);
  }
  mlcc_shape_t y = a->shape;
  y.dims[y.rank - 1] = l.n;
  return mlcc_infer_set_output(node, 0, MLCC_DTYPE_F32, &y);
}

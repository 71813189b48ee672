// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the shape-inference families (see infer_impl.h).
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"

char* mlcc_infer_fmt_shape(const mlcc_shape_t* shape, char* buf) {
  size_t cap = MLCC_INFER_SHAPE_BUF, n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, cap - n, "[");
  int32_t rank = shape->rank;
  if (rank < 0) rank = 0;
  if (rank > MLCC_MAX_RANK) rank = MLCC_MAX_RANK;
  for (int32_t d = 0; d < rank && n < cap; ++d) {
    n += (size_t)snprintf(buf + n, cap - n, d ? ",%lld" : "%lld",
                          (long long)shape->dims[d]);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

// The ops whose ONNX type constraints list int4/uint4 (all from opset 21,
// TensorScatter from 24; onnx/defs, IR 10) and int2/uint2 (the same ops
// from opset 25 but TensorScatter; IR 11). BitCast-26 also lists them but
// mlcc does not implement it on sub-byte types.
static bool subbyte_allowed(const mlcc_node_t* node, mlcc_dtype_t dtype) {
  if (node->pass_helper) return true;  // lowered control flow moving the values
  bool two = mlcc_dtype_bits(dtype) == 2;
  if (node->opset < (two ? 25 : 21)) return false;
  if (two && node->op == MLCC_OP_TENSOR_SCATTER) return false;
  switch (node->op) {
    case MLCC_OP_CAST: case MLCC_OP_CAST_LIKE: case MLCC_OP_CONSTANT:
    case MLCC_OP_CONSTANT_OF_SHAPE: case MLCC_OP_QUANTIZE_LINEAR:
    case MLCC_OP_DEQUANTIZE_LINEAR: case MLCC_OP_FLATTEN: case MLCC_OP_IDENTITY:
    case MLCC_OP_IF: case MLCC_OP_LOOP: case MLCC_OP_SCAN: case MLCC_OP_PAD:
    case MLCC_OP_RESHAPE: case MLCC_OP_SHAPE: case MLCC_OP_SIZE: case MLCC_OP_SQUEEZE:
    case MLCC_OP_UNSQUEEZE: case MLCC_OP_TRANSPOSE:
      return true;
    case MLCC_OP_TENSOR_SCATTER:
      return node->opset >= 24;
    default:
      return false;
  }
}

mlcc_status_t mlcc_infer_check_subbyte(const mlcc_node_t* node, const char* what,
                                       const char* name, mlcc_dtype_t dtype) {
  if (!mlcc_dtype_is_subbyte(dtype) || subbyte_allowed(node, dtype)) return mlcc_ok_status();
  // float4e2m1 (23+): the float8 rules decide (check_float8; ONNX lists it in
  // the ops that list the float8 types, from opset 23)
  if (mlcc_dtype_is_float8(dtype)) return mlcc_ok_status();
  if (node->op == MLCC_OP_BIT_CAST) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s %s '%s' has element type %s; mlcc does not implement BitCast "
                            "on 4-bit and 2-bit types",
                            mlcc_infer_op(node), what, name, mlcc_dtype_name(dtype));
  }
  bool two = mlcc_dtype_bits(dtype) == 2;
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s %s '%s' has element type %s, which %s-%d does not allow (ONNX "
                          "allows %s from opset %d only in Cast, CastLike, Constant, "
                          "ConstantOfShape, QuantizeLinear, DequantizeLinear, Identity, "
                          "Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Pad, Shape, Size, "
                          "If, Loop, Scan%s)",
                          mlcc_infer_op(node), what, name, mlcc_dtype_name(dtype),
                          mlcc_infer_op(node), (int)node->opset,
                          two ? "int2/uint2" : "int4/uint4", two ? 25 : 21,
                          two ? "" : ", and TensorScatter from 24");
}

// The first opset at which |op|'s ONNX type constraints name the float8
// types (onnx/defs, docs/Changelog.md: Cast-19, Reshape-19, Transpose-21,
// ...), or 0 if no version does; |*out_mlcc| says whether mlcc reads them
// there (the rest are refused as UNIMPLEMENTED).
static int float8_opset(mlcc_op_t op, bool* out_mlcc) {
  *out_mlcc = true;
  switch (op) {
    case MLCC_OP_CAST: case MLCC_OP_CAST_LIKE: case MLCC_OP_IDENTITY: case MLCC_OP_RESHAPE:
    case MLCC_OP_SHAPE: case MLCC_OP_SIZE: case MLCC_OP_QUANTIZE_LINEAR:
    case MLCC_OP_DEQUANTIZE_LINEAR:
      return 19;
    case MLCC_OP_TRANSPOSE: case MLCC_OP_FLATTEN: case MLCC_OP_SQUEEZE:
    case MLCC_OP_UNSQUEEZE:
      return 21;
    default: break;
  }
  *out_mlcc = false;
  switch (op) {
    case MLCC_OP_IF: case MLCC_OP_LOOP: case MLCC_OP_SCAN:
      return 19;
    case MLCC_OP_IS_NAN: case MLCC_OP_IS_INF: case MLCC_OP_CONSTANT_OF_SHAPE:
      return 20;
    case MLCC_OP_PAD: case MLCC_OP_QLINEAR_MATMUL:
      return 21;
    case MLCC_OP_DROPOUT: return 22;
    case MLCC_OP_TENSOR_SCATTER: return 24;
    case MLCC_OP_BIT_CAST: return 26;
    default: return 0;
  }
}

// A float8 input |name| of |node|: INVALID_MODEL where the op's type
// constraint at its opset does not allow it, UNIMPLEMENTED where it does
// but mlcc does not read float8 there.
static mlcc_status_t check_float8(const mlcc_node_t* node, const char* what, const char* name,
                                  mlcc_dtype_t dt) {
  bool mlcc = false;
  int from = float8_opset(node->op, &mlcc);
  if (from != 0 && from < mlcc_dtype_opset_min(dt)) from = mlcc_dtype_opset_min(dt);
  // float8e8m0 is a scale type of QuantizeLinear/DequantizeLinear-24 (T2),
  // which mlcc reads only as float32
  if (dt == MLCC_DTYPE_F8E8M0 &&
      (node->op == MLCC_OP_QUANTIZE_LINEAR || node->op == MLCC_OP_DEQUANTIZE_LINEAR)) {
    mlcc = false;
  }
  if (from == 0 || node->opset < from) {
    char since[48] = "";
    if (from != 0) snprintf(since, sizeof(since), " (it does from opset %d)", from);
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s %s '%s' has element type %s, which %s's type constraint "
                            "at opset %d does not allow%s",
                            mlcc_infer_op(node), what, name, mlcc_dtype_name(dt), mlcc_infer_op(node),
                            (int)node->opset, since);
  }
  if (!mlcc) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s %s '%s' has element type %s; mlcc does not support the "
                            "%s in %s",
                            mlcc_infer_op(node), what, name, mlcc_dtype_name(dt),
                            dt == MLCC_DTYPE_F4E2M1 ? "float4e2m1 type" : "float8 types",
                            mlcc_infer_op(node));
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_input(const mlcc_node_t* node, uint32_t i, const char* name,
                               bool required, mlcc_value_t** out_value) {
  *out_value = NULL;
  mlcc_value_t* v = mlcc_node_input(node, i);
  if (v == NULL) {
    if (!required) return mlcc_ok_status();
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs input %u '%s'; the node has %u input(s) and it is "
                            "missing",
                            mlcc_infer_op(node), i, name, node->n_inputs);
  }
  if (!v->shape_known) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "%s input %u '%s' (value '%s') was not inferred before its "
                            "consumer",
                            mlcc_infer_op(node), i, name, v->name ? v->name : "");
  }
  if (!mlcc_dtype_is_valid(v->dtype)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s input '%s' has unsupported element type %s",
                            mlcc_infer_op(node), name, mlcc_dtype_name(v->dtype));
  }
  // bfloat16 is a storage type that only the conversions read (dtypes.def).
  if (v->dtype == MLCC_DTYPE_BF16 && node->op != MLCC_OP_CAST &&
      node->op != MLCC_OP_CAST_LIKE) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s input '%s' has element type bfloat16; mlcc supports bfloat16 "
                            "only in Cast and CastLike",
                            mlcc_infer_op(node), name);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_subbyte(node, "input", name, v->dtype));
  if (mlcc_dtype_is_float8(v->dtype)) {
    MLCC_RETURN_IF_ERROR(check_float8(node, "input", name, v->dtype));
  }
  if (v->shape.rank < 0 || v->shape.rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s input '%s' has rank %d",
                            mlcc_infer_op(node), name, (int)v->shape.rank);
  }
  *out_value = v;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_const_input(const mlcc_node_t* node, uint32_t i, const char* name,
                                     const char* role, bool required,
                                     mlcc_value_t** out_value) {
  *out_value = NULL;
  mlcc_value_t* v = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, required, &v));
  if (v == NULL) return mlcc_ok_status();
  if (v->kind != MLCC_VALUE_CONSTANT) {
    const char* vname = v->name ? v->name : "";
    if (v->kind == MLCC_VALUE_INPUT) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "%s input '%s' (%s) must be a compile-time constant; value "
                              "'%s' is computed at run time (a graph input: bake its value in "
                              "with --input-value=%s=...)",
                              mlcc_infer_op(node), name, role, vname, vname);
    }
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s input '%s' (%s) must be a compile-time constant; value "
                            "'%s' is computed at run time",
                            mlcc_infer_op(node), name, role, vname);
  }
  int64_t numel = 0;
  mlcc_status_t st = mlcc_shape_numel(&v->shape, &numel);
  bool bad = !mlcc_status_is_ok(st);
  mlcc_status_free(st);
  if (bad || (v->data == NULL && numel > 0)) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "%s input '%s' (%s) is a constant without data",
                            mlcc_infer_op(node), name, role);
  }
  *out_value = v;
  return mlcc_ok_status();
}

// Shared part of const_ints/const_floats: checks rank, counts elements.
static mlcc_status_t const_list(const mlcc_node_t* node, const mlcc_value_t* v,
                                const char* name, const char* role, bool allow_scalar,
                                uint32_t cap, uint32_t* out_count) {
  *out_count = 0;
  if (v->shape.rank > 1 || (v->shape.rank == 0 && !allow_scalar)) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' (%s) must be a 1-D tensor; got shape %s",
                            mlcc_infer_op(node), name, role,
                            mlcc_infer_fmt_shape(&v->shape, sb));
  }
  int64_t n = v->shape.rank == 0 ? 1 : v->shape.dims[0];
  if (n < 0 || n > (int64_t)cap) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s input '%s' (%s) has %lld values; at most %u are supported",
                            mlcc_infer_op(node), name, role, (long long)n, cap);
  }
  *out_count = (uint32_t)n;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_const_ints(const mlcc_node_t* node, uint32_t i, const char* name,
                                    const char* role, bool required, bool allow_scalar,
                                    int64_t* buf, uint32_t cap, uint32_t* out_count,
                                    bool* out_present) {
  *out_count = 0;
  *out_present = false;
  mlcc_value_t* v = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_input(node, i, name, role, required, &v));
  if (v == NULL) return mlcc_ok_status();
  if (!mlcc_dtype_is_int(v->dtype)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' (%s) must be an integer tensor; got %s",
                            mlcc_infer_op(node), name, role, mlcc_dtype_name(v->dtype));
  }
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(const_list(node, v, name, role, allow_scalar, cap, &n));
  for (uint32_t k = 0; k < n; ++k) buf[k] = mlcc_value_const_i64(v, k);
  *out_count = n;
  *out_present = true;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_const_floats(const mlcc_node_t* node, uint32_t i, const char* name,
                                      const char* role, bool required, double* buf,
                                      uint32_t cap, uint32_t* out_count, bool* out_present) {
  *out_count = 0;
  *out_present = false;
  mlcc_value_t* v = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_const_input(node, i, name, role, required, &v));
  if (v == NULL) return mlcc_ok_status();
  if (mlcc_dtype_is_bool(v->dtype)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' (%s) must be numeric; got %s", mlcc_infer_op(node),
                            name, role, mlcc_dtype_name(v->dtype));
  }
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(const_list(node, v, name, role, false, cap, &n));
  for (uint32_t k = 0; k < n; ++k) buf[k] = mlcc_value_const_f64(v, k);
  *out_count = n;
  *out_present = true;
  return mlcc_ok_status();
}

static bool dtype_in(mlcc_dtype_t dt, uint32_t allowed) {
  if (mlcc_dtype_is_float8(dt)) return (allowed & MLCC_INFER_DT_FLOAT8) != 0;
  if ((allowed & MLCC_INFER_DT_FLOAT) && mlcc_dtype_is_float(dt)) return true;
  if ((allowed & MLCC_INFER_DT_BOOL) && mlcc_dtype_is_bool(dt)) return true;
  if (mlcc_dtype_is_int(dt)) {
    bool u = mlcc_dtype_is_unsigned(dt);
    if ((allowed & MLCC_INFER_DT_SINT) && !u) return true;
    if ((allowed & MLCC_INFER_DT_UINT) && u) return true;
    if ((allowed & MLCC_INFER_DT_INT32_64) &&
        (dt == MLCC_DTYPE_I32 || dt == MLCC_DTYPE_I64)) {
      return true;
    }
  }
  return false;
}

static const char* dtype_kinds(uint32_t allowed) {
  switch (allowed) {
    case MLCC_INFER_DT_FLOAT: return "a float type";
    case MLCC_INFER_DT_BOOL: return "bool";
    case MLCC_INFER_DT_INT32_64: return "int32 or int64";
    case MLCC_INFER_DT_NUMERIC: return "numeric (not bool)";
    case MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_SINT: return "a float or signed integer type";
    case MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_INT32_64: return "a float type, int32 or int64";
    case MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_INT32_64 | MLCC_INFER_DT_UINT:
      return "a float type, int32, int64 or an unsigned integer type";
    case MLCC_INFER_DT_BOOL | MLCC_INFER_DT_INT32_64: return "bool, int32 or int64";
    case MLCC_INFER_DT_ANY: return "numeric or bool";
    default: return "one of the types the operator's spec allows";
  }
}

mlcc_status_t mlcc_infer_check_dtype(const mlcc_node_t* node, const mlcc_value_t* value,
                                     const char* name, uint32_t allowed) {
  if (value == NULL || dtype_in(value->dtype, allowed)) return mlcc_ok_status();
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s (opset %d) input '%s' must be %s; got %s", mlcc_infer_op(node),
                          (int)node->opset, name, dtype_kinds(allowed),
                          mlcc_dtype_name(value->dtype));
}

mlcc_status_t mlcc_infer_same_dtype(const mlcc_node_t* node, const mlcc_value_t* a,
                                    const char* a_name, const mlcc_value_t* b,
                                    const char* b_name) {
  if (a == NULL || b == NULL || a->dtype == b->dtype) return mlcc_ok_status();
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s needs inputs '%s' and '%s' of the same element type; got %s "
                          "and %s",
                          mlcc_infer_op(node), a_name, b_name, mlcc_dtype_name(a->dtype),
                          mlcc_dtype_name(b->dtype));
}

mlcc_status_t mlcc_infer_check_rank(const mlcc_node_t* node, const mlcc_value_t* value,
                                    const char* name, int32_t rank) {
  if (value == NULL || value->shape.rank == rank) return mlcc_ok_status();
  char sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s input '%s' must have rank %d; got shape %s",
                          mlcc_infer_op(node), name, (int)rank,
                          mlcc_infer_fmt_shape(&value->shape, sb));
}

mlcc_status_t mlcc_infer_concat_compatible(const char* op, const mlcc_value_t* first,
                                           const mlcc_value_t* in, const char* name,
                                           int32_t axis) {
  bool ok = in->shape.rank == first->shape.rank;
  for (int32_t d = 0; ok && d < first->shape.rank; ++d) {
    if (d != axis && in->shape.dims[d] != first->shape.dims[d]) ok = false;
  }
  if (ok) return mlcc_ok_status();
  char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s needs inputs of equal rank and equal dims except on axis %d; got "
                          "inputs[0]%s and %s%s",
                          op, (int)axis, mlcc_infer_fmt_shape(&first->shape, sa), name,
                          mlcc_infer_fmt_shape(&in->shape, sb));
}

void mlcc_infer_matmul_promote(const mlcc_shape_t* a, const mlcc_shape_t* b, mlcc_shape_t* sa,
                               mlcc_shape_t* sb) {
  *sa = *a;
  *sb = *b;
  if (sa->rank == 1) {  // [K] -> [1,K]
    sa->rank = 2;
    sa->dims[1] = sa->dims[0];
    sa->dims[0] = 1;
  }
  if (sb->rank == 1) {  // [K] -> [K,1]
    sb->rank = 2;
    sb->dims[1] = 1;
  }
}

mlcc_status_t mlcc_infer_broadcast2(const mlcc_node_t* node, const mlcc_shape_t* a,
                                    const char* a_name, const mlcc_shape_t* b,
                                    const char* b_name, mlcc_shape_t* out_shape) {
  // |out_shape| may alias |a| or |b|: build the result in |r| first.
  mlcc_shape_t r;
  memset(&r, 0, sizeof(r));
  r.rank = a->rank > b->rank ? a->rank : b->rank;
  for (int32_t k = 0; k < r.rank; ++k) {
    int32_t ia = a->rank - r.rank + k, ib = b->rank - r.rank + k;
    int64_t da = ia >= 0 ? a->dims[ia] : 1;
    int64_t db = ib >= 0 ? b->dims[ib] : 1;
    if (da == db || db == 1) {
      r.dims[k] = da;
    } else if (da == 1) {
      r.dims[k] = db;
    } else {
      char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF];
      mlcc_status_t st = mlcc_make_status(
          MLCC_STATUS_INVALID_MODEL,
          "%s needs broadcastable inputs (each dim equal or 1, aligned from the right); "
          "got %s%s and %s%s, which clash at output dim %d (%lld vs %lld)",
          mlcc_infer_op(node), a_name, mlcc_infer_fmt_shape(a, sa), b_name,
          mlcc_infer_fmt_shape(b, sb), (int)k, (long long)da, (long long)db);
      memset(out_shape, 0, sizeof(*out_shape));
      return st;
    }
  }
  *out_shape = r;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_unidirectional(const mlcc_node_t* node, const mlcc_shape_t* to,
                                        const char* to_name, const mlcc_shape_t* from,
                                        const char* from_name) {
  bool ok = from->rank <= to->rank;
  for (int32_t k = 0; ok && k < from->rank; ++k) {
    int64_t df = from->dims[from->rank - 1 - k];
    int64_t dt = to->dims[to->rank - 1 - k];
    if (df != dt && df != 1) ok = false;
  }
  if (ok) return mlcc_ok_status();
  char sa[MLCC_INFER_SHAPE_BUF], sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s needs '%s' to broadcast unidirectionally to '%s' (rank not "
                          "larger, each dim equal or 1); got %s%s and %s%s",
                          mlcc_infer_op(node), from_name, to_name, from_name,
                          mlcc_infer_fmt_shape(from, sa), to_name,
                          mlcc_infer_fmt_shape(to, sb));
}

mlcc_status_t mlcc_infer_axis(const mlcc_node_t* node, const char* what, int64_t axis,
                              int32_t rank, int32_t* out_axis) {
  *out_axis = 0;
  if (axis < -(int64_t)rank || axis >= (int64_t)rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s %s must be in [%d, %d] for an input of rank %d; got %lld",
                            mlcc_infer_op(node), what, -(int)rank, (int)rank - 1, (int)rank,
                            (long long)axis);
  }
  *out_axis = (int32_t)(axis < 0 ? axis + rank : axis);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_axes_mask(const mlcc_node_t* node, const char* what,
                                   const int64_t* axes, uint32_t n_axes, int32_t rank,
                                   uint32_t* out_mask) {
  *out_mask = 0;
  uint32_t mask = 0;
  for (uint32_t k = 0; k < n_axes; ++k) {
    int32_t a = 0;
    MLCC_RETURN_IF_ERROR(mlcc_infer_axis(node, what, axes[k], rank, &a));
    if (mask & (1u << a)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s %s must not repeat an axis; axis %d appears twice",
                              mlcc_infer_op(node), what, (int)a);
    }
    mask |= 1u << a;
  }
  *out_mask = mask;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_set_output(mlcc_node_t* node, uint32_t i, mlcc_dtype_t dtype,
                                    const mlcc_shape_t* shape) {
  mlcc_value_t* v = mlcc_node_output(node, i);
  if (v == NULL) return mlcc_ok_status();
  if (!mlcc_dtype_is_valid(dtype)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s output %u would have unsupported element type %s",
                            mlcc_infer_op(node), i, mlcc_dtype_name(dtype));
  }
  if (mlcc_dtype_is_subbyte(dtype)) {
    char oname[16];
    snprintf(oname, sizeof(oname), "%u", i);
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_subbyte(node, "output", v->name ? v->name : oname,
                                                  dtype));
  }
  if (mlcc_dtype_is_float8(dtype)) {
    char oname[16];
    snprintf(oname, sizeof(oname), "%u", i);
    MLCC_RETURN_IF_ERROR(check_float8(node, "output", v->name ? v->name : oname, dtype));
  }
  if (shape->rank < 0 || shape->rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s output %u would have rank %d; mlcc supports rank <= %d",
                            mlcc_infer_op(node), i, (int)shape->rank, MLCC_MAX_RANK);
  }
  char sb[MLCC_INFER_SHAPE_BUF];
  int64_t numel = 1;
  bool overflow = false;
  for (int32_t d = 0; d < shape->rank; ++d) {
    if (shape->dims[d] < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s output %u would have a negative dim: %s",
                              mlcc_infer_op(node), i, mlcc_infer_fmt_shape(shape, sb));
    }
    if (!overflow && !mlcc_checked_mul_i64(numel, shape->dims[d], &numel)) overflow = true;
  }
  // A zero dim anywhere makes the product 0 even if a partial product
  // overflowed; recheck so [0, 2^62, 4] is accepted as empty.
  for (int32_t d = 0; d < shape->rank; ++d) {
    if (shape->dims[d] == 0) {
      overflow = false;
      numel = 0;
    }
  }
  if (overflow || numel > MLCC_INFER_MAX_NUMEL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s output %u would have shape %s, more than the 2^40 elements "
                            "mlcc supports",
                            mlcc_infer_op(node), i, mlcc_infer_fmt_shape(shape, sb));
  }
  v->dtype = dtype;
  v->shape = *shape;
  for (int32_t d = shape->rank; d < MLCC_MAX_RANK; ++d) v->shape.dims[d] = 0;
  v->shape_known = true;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_mul(const mlcc_node_t* node, const char* what, int64_t a,
                             int64_t b, int64_t* out) {
  if (mlcc_checked_mul_i64(a, b, out)) return mlcc_ok_status();
  *out = 0;
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s %s overflows int64 (%lld * %lld)", mlcc_infer_op(node), what,
                          (long long)a, (long long)b);
}

mlcc_status_t mlcc_infer_add(const mlcc_node_t* node, const char* what, int64_t a,
                             int64_t b, int64_t* out) {
  if (mlcc_checked_add_i64(a, b, out)) return mlcc_ok_status();
  *out = 0;
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s %s overflows int64 (%lld + %lld)", mlcc_infer_op(node), what,
                          (long long)a, (long long)b);
}

int64_t mlcc_infer_numel(const mlcc_shape_t* shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int32_t d = 0; d < shape->rank && d < MLCC_MAX_RANK; ++d) {
    if (shape->dims[d] < 0) return -1;
    if (shape->dims[d] == 0) return 0;
    if (!overflow && !mlcc_checked_mul_i64(n, shape->dims[d], &n)) overflow = true;
  }
  return overflow ? -1 : n;
}

mlcc_status_t mlcc_infer_round_mode(const mlcc_node_t* node) {
  const char* mode = "up";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "round_mode", "up", &mode));
  if (strcmp(mode, "up") == 0 || strcmp(mode, "down") == 0 || strcmp(mode, "nearest") == 0) {
    return mlcc_ok_status();
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s attribute 'round_mode' must be up, down or nearest; got '%s'",
                          mlcc_infer_op(node), mode);
}

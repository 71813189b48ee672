// SPDX-License-Identifier: Apache-2.0
// ONNX import of graph inputs: dtype and shape (with --input-shape pins),
// the checks on option names and sizes, and --input-value bindings (graph
// inputs bound to compile-time constants).
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/onnx/import_ctx.h"
#include "ir/base/checked_math.h"

static const mlcc_input_shape_t* find_pin(const mlcc_onnx_import_options_t* o,
                                          const char* name) {
  if (o == NULL || o->input_shapes == NULL) return NULL;
  for (uint32_t i = 0; i < o->n_input_shapes; ++i) {
    if (o->input_shapes[i].name != NULL && strcmp(o->input_shapes[i].name, name) == 0) {
      return &o->input_shapes[i];
    }
  }
  return NULL;
}

mlcc_status_t mlcc_onnx_input_type(import_ctx_t* ctx, const MlccOnnx__ValueInfoProto* vi,
                                   const MlccOnnx__TensorProto* init, mlcc_dtype_t* out_dtype,
                                   mlcc_shape_t* out_shape) {
  const char* name = vi->name;
  const MlccOnnx__TypeProto__Tensor* tt = NULL;
  if (vi->type != NULL &&
      vi->type->value_case == MLCC_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    tt = vi->type->tensor_type;
  } else if (vi->type != NULL && init == NULL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "graph input '%s' is not a tensor (sequence, map and optional "
                            "inputs are not supported)", name);
  }
  // dtype
  int32_t et = (tt != NULL && tt->has_elem_type) ? tt->elem_type : 0;
  if (et == 0 && init != NULL && init->has_data_type) et = init->data_type;
  if (et == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph input '%s' has no element type",
                            name);
  }
  if (!mlcc_dtype_is_valid((mlcc_dtype_t)et)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "graph input '%s' has element type %s (TensorProto data type "
                            "%" PRId32 "), which mlcc does not support",
                            name, mlcc_onnx_elem_type_name(et), et);
  }
  *out_dtype = (mlcc_dtype_t)et;

  // shape: the pin wins, then the declared type, then the initializer's dims
  const MlccOnnx__TensorShapeProto* sp = tt != NULL ? tt->shape : NULL;
  const mlcc_input_shape_t* pin = find_pin(ctx->options, name);
  if (sp != NULL && sp->n_dim > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "graph input '%s' has rank %zu; mlcc supports at most %d", name,
                            sp->n_dim, MLCC_MAX_RANK);
  }
  if (pin != NULL) {
    const mlcc_shape_t* ps = &pin->shape;
    if (ps->rank < 0 || ps->rank > MLCC_MAX_RANK) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "--input-shape for '%s' has invalid rank %d", name, ps->rank);
    }
    if (sp != NULL && (size_t)ps->rank != sp->n_dim) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "--input-shape for '%s' has rank %d but the model declares "
                              "rank %zu", name, ps->rank, sp->n_dim);
    }
    for (int32_t d = 0; d < ps->rank; ++d) {
      if (ps->dims[d] < 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                                "--input-shape for '%s': dim %d is negative", name, d);
      }
      if (sp != NULL && sp->dim[d]->value_case ==
                            MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
          sp->dim[d]->dim_value != ps->dims[d]) {
        return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                                "--input-shape for '%s': dim %d is %" PRId64
                                " but the model fixes it to %" PRId64, name, d, ps->dims[d],
                                sp->dim[d]->dim_value);
      }
    }
    *out_shape = *ps;
    return mlcc_ok_status();
  }
  if (sp == NULL) {
    if (init != NULL) return mlcc_onnx_tensor_shape(init, out_shape);
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "graph input '%s' has no shape; pin it with "
                            "--input-shape=%s=<d0>x<d1>...", name, name);
  }
  memset(out_shape, 0, sizeof(*out_shape));
  out_shape->rank = (int32_t)sp->n_dim;
  for (size_t d = 0; d < sp->n_dim; ++d) {
    const MlccOnnx__TensorShapeProto__Dimension* dim = sp->dim[d];
    if (dim->value_case == MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (dim->dim_value < 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "graph input '%s': dim %zu is negative (%" PRId64 ")", name, d,
                                dim->dim_value);
      }
      out_shape->dims[d] = dim->dim_value;
      continue;
    }
    if (init != NULL) return mlcc_onnx_tensor_shape(init, out_shape);
    if (dim->value_case == MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "graph input '%s': dim %zu is symbolic ('%s'); pin it with "
                              "--input-shape=%s=<d0>x<d1>...", name, d,
                              str_or_empty(dim->dim_param), name);
    }
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "graph input '%s': dim %zu is unknown; pin it with "
                            "--input-shape=%s=<d0>x<d1>...", name, d, name);
  }
  return mlcc_ok_status();
}

// Downstream code sizes buffers from input shapes: bound them here, like
// tensors (at most 2^32 elements, no overflow).
mlcc_status_t mlcc_onnx_check_input_size(const char* name, const mlcc_shape_t* shape) {
  int64_t numel = 1;
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (!mlcc_checked_mul_i64(numel, shape->dims[i], &numel)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "graph input '%s': the element count overflows", name);
    }
  }
  if ((uint64_t)numel > MLCC_ONNX_MAX_ELEMENTS) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "graph input '%s' has %" PRId64 " elements; mlcc supports at "
                            "most 2^32", name, numel);
  }
  return mlcc_ok_status();
}

static bool is_graph_input(const MlccOnnx__GraphProto* g, const char* name) {
  for (size_t k = 0; name != NULL && k < g->n_input; ++k) {
    if (g->input[k]->name != NULL && strcmp(g->input[k]->name, name) == 0) return true;
  }
  return false;
}

// Every pin and every --input-value must name a graph input: a typo must not
// be silently ignored. Checked first, so that the typo is reported rather
// than the symbolic dim it failed to pin.
mlcc_status_t mlcc_onnx_check_option_names(import_ctx_t* ctx) {
  const mlcc_onnx_import_options_t* o = ctx->options;
  if (o == NULL) return mlcc_ok_status();
  for (uint32_t i = 0; o->input_shapes != NULL && i < o->n_input_shapes; ++i) {
    if (!is_graph_input(ctx->onnx_graph, o->input_shapes[i].name)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "--input-shape names '%s', which is not a graph input",
                              str_or_empty(o->input_shapes[i].name));
    }
  }
  for (uint32_t i = 0; o->input_values != NULL && i < o->n_input_values; ++i) {
    if (!is_graph_input(ctx->onnx_graph, o->input_values[i].name)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "--input-value names '%s', which is not a graph input",
                              str_or_empty(o->input_values[i].name));
    }
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// --input-value: graph inputs bound to compile-time constants
//===----------------------------------------------------------------------===//

const mlcc_input_value_t* mlcc_onnx_find_binding(const mlcc_onnx_import_options_t* o,
                                                 const char* name) {
  if (o == NULL || o->input_values == NULL) return NULL;
  for (uint32_t i = 0; i < o->n_input_values; ++i) {
    if (o->input_values[i].name != NULL && strcmp(o->input_values[i].name, name) == 0) {
      return &o->input_values[i];
    }
  }
  return NULL;
}

static mlcc_status_t bind_error(const mlcc_input_value_t* bv, const char* fmt, ...)
    MLCC_PRINTF(2, 3);
static mlcc_status_t bind_error(const mlcc_input_value_t* bv, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "--input-value=%s: %s",
                          str_or_empty(bv->origin), msg);
}

// Stores number |i| of |bv| as one |dtype| element at |dst|.
static mlcc_status_t store_number(const mlcc_input_value_t* bv, uint32_t i, mlcc_dtype_t dtype,
                                  void* dst) {
  double r = bv->reals[i];
  if (mlcc_dtype_is_float(dtype)) {
    if (dtype == MLCC_DTYPE_F32) {
      float f = (float)r;
      memcpy(dst, &f, sizeof(f));
    } else if (dtype == MLCC_DTYPE_F64) {
      memcpy(dst, &r, sizeof(r));
    } else {
      return bind_error(bv, "numbers for a %s input are not supported; pass @FILE (an ONNX "
                        "TensorProto)", mlcc_dtype_name(dtype));
    }
    return mlcc_ok_status();
  }
  if (!bv->is_int[i]) {
    return bind_error(bv, "item %u (%g) is not an integer, but the input is %s", i, r,
                      mlcc_dtype_name(dtype));
  }
  int64_t v = bv->ints[i];
  if (bv->above_int64 != NULL && bv->above_int64[i]) {
    if (dtype != MLCC_DTYPE_U64) {
      return bind_error(bv, "item %u does not fit in %s", i, mlcc_dtype_name(dtype));
    }
    memcpy(dst, &v, sizeof(v));  // the uint64 bits
    return mlcc_ok_status();
  }
  int64_t lo = 0, hi = 0;
  switch (dtype) {
    case MLCC_DTYPE_BOOL: lo = 0; hi = 1; break;
    case MLCC_DTYPE_U8: lo = 0; hi = UINT8_MAX; break;
    case MLCC_DTYPE_I8: lo = INT8_MIN; hi = INT8_MAX; break;
    case MLCC_DTYPE_U4: lo = 0; hi = 15; break;  // held one per byte (dtypes.def)
    case MLCC_DTYPE_I4: lo = -8; hi = 7; break;
    case MLCC_DTYPE_U2: lo = 0; hi = 3; break;
    case MLCC_DTYPE_I2: lo = -2; hi = 1; break;
    case MLCC_DTYPE_U16: lo = 0; hi = UINT16_MAX; break;
    case MLCC_DTYPE_I16: lo = INT16_MIN; hi = INT16_MAX; break;
    case MLCC_DTYPE_U32: lo = 0; hi = UINT32_MAX; break;
    case MLCC_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case MLCC_DTYPE_U64: lo = 0; hi = INT64_MAX; break;
    case MLCC_DTYPE_I64: lo = INT64_MIN; hi = INT64_MAX; break;
    default:
      return bind_error(bv, "numbers for a %s input are not supported; pass @FILE",
                        mlcc_dtype_name(dtype));
  }
  if (v < lo || v > hi) {
    return bind_error(bv, "%" PRId64 " does not fit in %s", v, mlcc_dtype_name(dtype));
  }
  size_t size = mlcc_dtype_size(dtype);
  uint64_t bits = (uint64_t)v;  // two's complement; little-endian hosts only (as the weights)
  memcpy(dst, &bits, size);
  return mlcc_ok_status();
}

// True if |shape| agrees with |declared|: same rank, and every static
// declared dim equal (symbolic and unknown dims take any size).
static bool agrees_with_declared(const mlcc_shape_t* shape, const MlccOnnx__TensorShapeProto* sp,
                                 const mlcc_input_shape_t* pin) {
  if (pin != NULL) {
    if (pin->shape.rank != shape->rank) return false;
    for (int32_t d = 0; d < shape->rank; ++d) {
      if (pin->shape.dims[d] != shape->dims[d]) return false;
    }
  }
  if (sp == NULL) return true;
  if (sp->n_dim != (size_t)shape->rank) return false;
  for (size_t d = 0; d < sp->n_dim; ++d) {
    if (sp->dim[d]->value_case == MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
        sp->dim[d]->dim_value != shape->dims[d]) {
      return false;
    }
  }
  return true;
}

// "[1,N,?]": static dims, symbolic names, '?' for unknown; "(none declared)".
static void declared_text(const MlccOnnx__TensorShapeProto* sp, char* buf, size_t cap) {
  if (sp == NULL) {
    snprintf(buf, cap, "(none declared)");
    return;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < sp->n_dim && n < cap; ++d) {
    const MlccOnnx__TensorShapeProto__Dimension* dim = sp->dim[d];
    if (d) n += (size_t)snprintf(buf + n, cap - n, ",");
    if (n >= cap) break;
    if (dim->value_case == MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      n += (size_t)snprintf(buf + n, cap - n, "%" PRId64, dim->dim_value);
    } else if (dim->value_case == MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
      n += (size_t)snprintf(buf + n, cap - n, "%s", str_or_empty(dim->dim_param));
    } else {
      n += (size_t)snprintf(buf + n, cap - n, "?");
    }
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

mlcc_status_t mlcc_onnx_add_bound_input(import_ctx_t* ctx, const MlccOnnx__ValueInfoProto* vi,
                                        const mlcc_input_value_t* bv) {
  const MlccOnnx__TypeProto__Tensor* tt =
      (vi->type != NULL && vi->type->value_case == MLCC_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
          ? vi->type->tensor_type
          : NULL;
  if (vi->type != NULL && tt == NULL) {
    return bind_error(bv, "graph input '%s' is not a tensor", vi->name);
  }
  const MlccOnnx__TensorShapeProto* sp = tt != NULL ? tt->shape : NULL;
  const mlcc_input_shape_t* pin = find_pin(ctx->options, vi->name);
  mlcc_dtype_t declared = (tt != NULL && tt->has_elem_type) ? (mlcc_dtype_t)tt->elem_type
                                                            : MLCC_DTYPE_UNDEFINED;
  if (declared != MLCC_DTYPE_UNDEFINED && !mlcc_dtype_is_valid(declared)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "graph input '%s' has element type %s (TensorProto data type %d), "
                            "which mlcc does not support",
                            vi->name, mlcc_onnx_elem_type_name((int)declared), (int)declared);
  }
  mlcc_shape_t shape;
  memset(&shape, 0, sizeof(shape));
  char have[96], want[96];
  if (bv->dtype != MLCC_DTYPE_UNDEFINED) {  // a decoded tensor
    if (declared != MLCC_DTYPE_UNDEFINED && declared != bv->dtype) {
      return bind_error(bv, "the tensor is %s but graph input '%s' is %s",
                        mlcc_dtype_name(bv->dtype), vi->name, mlcc_dtype_name(declared));
    }
    if (!agrees_with_declared(&bv->shape, sp, pin)) {
      mlcc_shape_format(&bv->shape, have, sizeof(have));
      if (pin != NULL) {
        mlcc_shape_format(&pin->shape, want, sizeof(want));
      } else {
        declared_text(sp, want, sizeof(want));
      }
      return bind_error(bv, "the tensor has shape %s but graph input '%s' has shape %s", have,
                        vi->name, want);
    }
    MLCC_RETURN_IF_ERROR(mlcc_onnx_check_input_size(vi->name, &bv->shape));
    int64_t numel = mlcc_shape_numel_unchecked(&bv->shape);
    if ((uint64_t)numel * mlcc_dtype_size(bv->dtype) != bv->size) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "--input-value=%s: %zu bytes for %" PRId64
                              " elements", str_or_empty(bv->origin), bv->size, numel);
    }
    mlcc_value_t* cv = NULL;
    return mlcc_graph_add_constant(ctx->graph, vi->name, bv->dtype, &bv->shape, bv->data, true,
                                   &cv);
  }
  if (declared == MLCC_DTYPE_UNDEFINED) {
    return bind_error(bv, "graph input '%s' declares no element type; pass @FILE", vi->name);
  }
  // Numbers: the declared (or pinned) shape when it is static and holds
  // them all, else [n] for rank 1 or no shape, else a scalar for rank 0.
  uint32_t n = bv->n_numbers;
  bool have_static = false;
  if (pin != NULL) {
    shape = pin->shape;
    have_static = true;
  } else if (sp != NULL) {
    have_static = true;
    shape.rank = (int32_t)sp->n_dim;
    for (size_t d = 0; d < sp->n_dim && d < MLCC_MAX_RANK; ++d) {
      if (sp->dim[d]->value_case != MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        have_static = false;
        break;
      }
      shape.dims[d] = sp->dim[d]->dim_value;
    }
    if (sp->n_dim > MLCC_MAX_RANK) have_static = false;
  }
  bool fits = have_static && mlcc_shape_numel_unchecked(&shape) == (int64_t)n;
  if (!fits) {
    int32_t rank = pin != NULL ? pin->shape.rank : sp != NULL ? (int32_t)sp->n_dim : 1;
    memset(&shape, 0, sizeof(shape));
    if (rank == 1) {
      shape.rank = 1;
      shape.dims[0] = n;
      fits = agrees_with_declared(&shape, sp, pin);
    } else if (rank == 0 && n == 1) {
      fits = true;
    }
    if (!fits) {
      if (pin != NULL) {
        mlcc_shape_format(&pin->shape, want, sizeof(want));
      } else {
        declared_text(sp, want, sizeof(want));
      }
      return bind_error(bv, "%u number(s) do not fit graph input '%s', shape %s", n, vi->name,
                        want);
    }
  }
  size_t esize = mlcc_dtype_size(declared);
  uint8_t* data = (uint8_t*)malloc(n ? (size_t)n * esize : 1);
  if (data == NULL) return oom("an --input-value");
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t i = 0; i < n && s == NULL; ++i) s = store_number(bv, i, declared, data + i * esize);
  mlcc_value_t* cv = NULL;
  if (s == NULL) s = mlcc_graph_add_constant(ctx->graph, vi->name, declared, &shape, data, true, &cv);
  free(data);
  return s;
}


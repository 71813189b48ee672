// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the data-movement family: copies (Reshape & co.),
// Concat, Split, Slice, Gather(Elements), Transpose, Expand, Tile, Pad,
// Resize, Shape/Size, Constant(OfShape), Range. Each iterates over output
// elements and writes each exactly once with mlcc_emit_store_output.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/checked_math.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/resize.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

#define MAX_ITER_RANK (2 * MLCC_MAX_RANK)

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static int64_t numel_of(const mlcc_shape_t* s) { return mlcc_shape_numel_unchecked(s); }

static mlcc_status_t need_value(const mlcc_node_t* node, const mlcc_value_t* v, const char* what) {
  if (v == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs %s", mlcc_op_name(node->op),
                            what);
  }
  return mlcc_ok_status();
}

static mlcc_status_t need_const(const mlcc_node_t* node, const mlcc_value_t* v, const char* what) {
  if (v != NULL && (v->kind != MLCC_VALUE_CONSTANT || v->data == NULL)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s needs a constant %s ('%s' is computed at run time)",
                            mlcc_op_name(node->op), what, v->name ? v->name : "?");
  }
  return mlcc_ok_status();
}

static mlcc_status_t check_type(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node, mlcc_dtype_t dt) {
  if (mlcc_emit_type(ctx, dt) == NULL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s does not support dtype %s",
                            mlcc_op_name(node->op), mlcc_dtype_name(dt));
  }
  return mlcc_ok_status();
}

static mlcc_status_t shape_mismatch(const mlcc_node_t* node, const char* what,
                                    const mlcc_shape_t* want, const mlcc_shape_t* got) {
  char a[128], b[128];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: %s should be %s, got %s",
                          mlcc_op_name(node->op), what, mlcc_shape_format(want, a, sizeof(a)),
                          mlcc_shape_format(got, b, sizeof(b)));
}

static mlcc_status_t norm_axis(const mlcc_node_t* node, int64_t axis, int32_t rank,
                               int32_t* out_axis) {
  *out_axis = 0;
  if (axis < -(int64_t)rank || axis >= rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s axis must be in [%d, %d]; got %lld", mlcc_op_name(node->op),
                            -rank, rank - 1, (long long)axis);
  }
  *out_axis = (int32_t)(axis < 0 ? axis + rank : axis);
  return mlcc_ok_status();
}

static LLVMValueRef i64c(mlcc_emit_ctx_t* ctx, int64_t v) { return mlcc_emit_i64(ctx, v); }

// base + sum_d iv[d] * coef[d] (i64).
static LLVMValueRef affine(mlcc_emit_ctx_t* ctx, int64_t base, const int64_t* coef,
                           const LLVMValueRef* iv, int n) {
  LLVMValueRef acc = NULL;
  for (int d = 0; d < n; ++d) {
    if (coef[d] == 0) continue;
    LLVMValueRef t = coef[d] == 1 ? iv[d] : LLVMBuildMul(ctx->b, iv[d], i64c(ctx, coef[d]), "t");
    acc = acc ? LLVMBuildAdd(ctx->b, acc, t, "a") : t;
  }
  if (acc == NULL) return i64c(ctx, base);
  if (base != 0) acc = LLVMBuildAdd(ctx->b, acc, i64c(ctx, base), "a");
  return acc;
}

// A nest of constant-bound loops over dims[0..n) (outermost first).
typedef struct nest_t {
  int n;
  mlcc_loop_t loops[MAX_ITER_RANK];
  LLVMValueRef iv[MAX_ITER_RANK];
} nest_t;

static void nest_open(mlcc_emit_ctx_t* ctx, nest_t* nest, const int64_t* dims, int n) {
  nest->n = n;
  for (int d = 0; d < n; ++d) {
    nest->loops[d] = mlcc_emit_for(ctx, 0, dims[d], "d");
    nest->iv[d] = nest->loops[d].iv;
  }
}

static void nest_close(mlcc_emit_ctx_t* ctx, nest_t* nest) {
  for (int d = nest->n - 1; d >= 0; --d) mlcc_emit_loop_end(ctx, &nest->loops[d]);
}

// out[out_base + sum iv*out_coef] = in[in_base + sum iv*in_coef] for iv in
// dims[0..n). Size-1 dims are dropped and contiguous dims merged so plain
// copies become one vectorizable loop.
static mlcc_status_t affine_copy(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                 uint32_t out_index, const mlcc_value_t* in, int n,
                                 const int64_t* dims_in, int64_t in_base,
                                 const int64_t* in_coef_in, int64_t out_base,
                                 const int64_t* out_coef_in) {
  int64_t dims[MAX_ITER_RANK], ic[MAX_ITER_RANK], oc[MAX_ITER_RANK];
  int m = 0;
  for (int d = 0; d < n; ++d) {
    if (dims_in[d] == 0) return mlcc_ok_status();
    if (dims_in[d] == 1) continue;
    if (m > 0 && ic[m - 1] == in_coef_in[d] * dims_in[d] &&
        oc[m - 1] == out_coef_in[d] * dims_in[d]) {
      dims[m - 1] *= dims_in[d];
      ic[m - 1] = in_coef_in[d];
      oc[m - 1] = out_coef_in[d];
      continue;
    }
    dims[m] = dims_in[d];
    ic[m] = in_coef_in[d];
    oc[m] = out_coef_in[d];
    ++m;
  }
  nest_t nest;
  nest_open(ctx, &nest, dims, m);
  LLVMValueRef v = mlcc_emit_load(ctx, in, affine(ctx, in_base, ic, nest.iv, m));
  mlcc_status_t st =
      mlcc_emit_store_output(ctx, node, out_index, affine(ctx, out_base, oc, nest.iv, m), v);
  nest_close(ctx, &nest);
  return st;
}

// Clamps i64 |v| into [lo, hi].
static LLVMValueRef clamp_i64(mlcc_emit_ctx_t* ctx, LLVMValueRef v, int64_t lo, int64_t hi) {
  LLVMBuilderRef b = ctx->b;
  v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, i64c(ctx, lo), "lt"), i64c(ctx, lo), v,
                      "cl");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, v, i64c(ctx, hi), "gt"), i64c(ctx, hi),
                         v, "ch");
}

// An index loaded from an int32/int64 tensor, wrapped if negative and
// clamped into [0, dim) so that no input can read out of bounds.
static LLVMValueRef safe_index(mlcc_emit_ctx_t* ctx, LLVMValueRef raw, mlcc_dtype_t dt,
                               int64_t dim) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef i = mlcc_emit_convert(ctx, raw, dt, MLCC_DTYPE_I64);
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, i, i64c(ctx, 0), "neg");
  i = LLVMBuildSelect(b, neg, LLVMBuildAdd(b, i, i64c(ctx, dim), "wrap"), i, "w");
  return clamp_i64(ctx, i, 0, dim - 1);
}

// A private constant global array (for tables derived from shape inputs and
// Constant payloads). Returns the global.
static LLVMValueRef const_global(mlcc_emit_ctx_t* ctx, LLVMTypeRef elem_ty, LLVMValueRef* elems,
                                 unsigned n, const char* name) {
  LLVMTypeRef aty = LLVMArrayType(elem_ty, n);
  LLVMValueRef g = LLVMAddGlobal(ctx->module, aty, name);
  LLVMSetInitializer(g, LLVMConstArray(elem_ty, elems, n));
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddr(g, 1);
  LLVMSetAlignment(g, 16);
  return g;
}

static LLVMValueRef table_load(mlcc_emit_ctx_t* ctx, LLVMValueRef g, LLVMTypeRef elem_ty,
                               LLVMValueRef idx) {
  LLVMValueRef p = LLVMBuildInBoundsGEP2(ctx->b, elem_ty, g, &idx, 1, "tp");
  return LLVMBuildLoad2(ctx->b, elem_ty, p, "tv");
}

static bool is_float_dt(mlcc_dtype_t dt) {
  return dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64 || dt == MLCC_DTYPE_F16;
}

// A constant of |dt|'s computational type from the first element of raw
// little-endian bytes |data| of dtype |src_dt| (exact for 64-bit ints).
static LLVMValueRef scalar_from_bytes(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt,
                                      mlcc_dtype_t src_dt, const void* data) {
  double f = 0;
  int64_t i = 0;
  bool isf = false;
  switch (src_dt) {
    case MLCC_DTYPE_F32: { float v; memcpy(&v, data, 4); f = v; isf = true; break; }
    case MLCC_DTYPE_F64: { memcpy(&f, data, 8); isf = true; break; }
    case MLCC_DTYPE_F16: {
      uint16_t h;
      memcpy(&h, data, 2);
      int ex = (h >> 10) & 31, man = h & 1023;
      double v = ex == 0 ? ldexp(man, -24) : ex == 31 ? (man ? NAN : INFINITY)
                                                      : ldexp(man + 1024, ex - 25);
      f = (h & 0x8000) ? -v : v;
      isf = true;
      break;
    }
    case MLCC_DTYPE_BOOL: case MLCC_DTYPE_U8: i = *(const uint8_t*)data; break;
    case MLCC_DTYPE_I8: case MLCC_DTYPE_I4: case MLCC_DTYPE_I2: i = *(const int8_t*)data; break;
    case MLCC_DTYPE_U4: case MLCC_DTYPE_U2: i = *(const uint8_t*)data; break;
    case MLCC_DTYPE_U16: { uint16_t v; memcpy(&v, data, 2); i = v; break; }
    case MLCC_DTYPE_I16: { int16_t v; memcpy(&v, data, 2); i = v; break; }
    case MLCC_DTYPE_U32: { uint32_t v; memcpy(&v, data, 4); i = v; break; }
    case MLCC_DTYPE_I32: { int32_t v; memcpy(&v, data, 4); i = v; break; }
    case MLCC_DTYPE_U64: case MLCC_DTYPE_I64: memcpy(&i, data, 8); break;
    default: break;
  }
  if (isf || is_float_dt(dt)) return mlcc_emit_const(ctx, dt, isf ? f : (double)i);
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  if (dt == MLCC_DTYPE_BOOL) return LLVMConstInt(t, i != 0, 0);
  return LLVMConstInt(t, (unsigned long long)i, 1);
}

//===----------------------------------------------------------------------===//
// Copies: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout
//===----------------------------------------------------------------------===//

static mlcc_status_t copy_all(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  int64_t n = numel_of(&out->shape);
  if (n != numel_of(&in->shape) || in->dtype != out->dtype) {
    return shape_mismatch(node, "output element count", &in->shape, &out->shape);
  }
  int64_t one = 1;
  return affine_copy(ctx, node, 0, in, 1, &n, 0, &one, 0, &one);
}

// Reshape/Flatten/Squeeze/Unsqueeze/Identity: a linear element copy.
static mlcc_status_t emit_copy(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  return copy_all(ctx, node);
}

// Dropout in inference: output 0 is a copy, the optional mask is all true.
static mlcc_status_t emit_dropout(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(copy_all(ctx, node));
  const mlcc_value_t* mask = mlcc_node_output(node, 1);
  if (mask == NULL) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, mask->dtype));
  int64_t n = numel_of(&mask->shape);
  if (n == 0) return mlcc_ok_status();
  mlcc_loop_t loop = mlcc_emit_for(ctx, 0, n, "mask");
  mlcc_status_t st =
      mlcc_emit_store_output(ctx, node, 1, loop.iv, mlcc_emit_const(ctx, mask->dtype, 1.0));
  mlcc_emit_loop_end(ctx, &loop);
  return st;
}

//===----------------------------------------------------------------------===//
// Concat, Split
//===----------------------------------------------------------------------===//

// Concat: each input is copied into its slab of the output along |axis|.
// INVALID_MODEL if the shapes do not tile the output.
static mlcc_status_t emit_concat(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, out->dtype));
  int64_t axis_attr = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis_attr));
  int32_t axis;
  MLCC_RETURN_IF_ERROR(norm_axis(node, axis_attr, out->shape.rank, &axis));
  int64_t os[MLCC_MAX_RANK];
  strides_of(&out->shape, os);
  int64_t offset = 0;
  // Slabs are contiguous and the kernel writes the Concat's own output.
  bool in_place = ctx->kernel != NULL && ctx->kernel->n_nodes == 1 &&
                  mlcc_emit_ptr(ctx, out) != NULL;
  for (int d = 0; d < axis; ++d) in_place &= out->shape.dims[d] == 1;
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    const mlcc_value_t* in = node->inputs[i];
    if (in == NULL) continue;
    if (in->shape.rank != out->shape.rank || in->dtype != out->dtype) {
      return shape_mismatch(node, "input rank/dtype", &out->shape, &in->shape);
    }
    for (int d = 0; d < in->shape.rank; ++d) {
      if (d != axis && in->shape.dims[d] != out->shape.dims[d]) {
        return shape_mismatch(node, "input dims off the axis", &out->shape, &in->shape);
      }
    }
    if (offset + in->shape.dims[axis] > out->shape.dims[axis]) {
      return shape_mismatch(node, "sum of input dims along the axis", &out->shape, &in->shape);
    }
    int64_t is[MLCC_MAX_RANK];
    strides_of(&in->shape, is);
    // plan-memory may have placed the input in its slab of the output
    // already (Concat in place): then the copy is skipped at run time.
    mlcc_if_t br;
    bool check = in_place && mlcc_emit_ptr(ctx, in) != NULL;
    if (check) {
      LLVMValueRef o = mlcc_emit_ptr(ctx, out);
      LLVMValueRef byte_off = mlcc_emit_i64(ctx, offset * os[axis] * (int64_t)mlcc_dtype_size(out->dtype));
      LLVMValueRef dst = LLVMBuildGEP2(ctx->b, ctx->t_i8, o, &byte_off, 1, "slab");
      LLVMValueRef a = LLVMBuildPtrToInt(ctx->b, mlcc_emit_ptr(ctx, in), ctx->t_i64, "");
      LLVMValueRef c = LLVMBuildPtrToInt(ctx->b, dst, ctx->t_i64, "");
      br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntNE, a, c, "copy"));
    }
    MLCC_RETURN_IF_ERROR(affine_copy(ctx, node, 0, in, in->shape.rank, in->shape.dims, 0, is,
                                     offset * os[axis], os));
    if (check) mlcc_emit_if_end(ctx, &br);
    offset += in->shape.dims[axis];
  }
  if (offset != out->shape.dims[axis]) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Concat inputs cover %lld of %lld along axis %d",
                            (long long)offset, (long long)out->shape.dims[axis], axis);
  }
  return mlcc_ok_status();
}

// Split: each present output k gets its slab of the input along |axis|
// (sizes from the 'split' input/attribute, else the output shapes).
static mlcc_status_t emit_split(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  int64_t axis_attr = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis_attr));
  int32_t axis;
  MLCC_RETURN_IF_ERROR(norm_axis(node, axis_attr, in->shape.rank, &axis));
  const uint32_t n_out = node->n_outputs;
  if (n_out == 0) return mlcc_ok_status();
  // Split sizes: 'split' input (13+) or attribute, else from the output
  // shapes, else equal parts.
  int64_t* sizes = calloc(n_out, sizeof(int64_t));
  if (sizes == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  mlcc_status_t st = mlcc_ok_status();
  const int64_t dim = in->shape.dims[axis];
  const mlcc_value_t* split_in = mlcc_node_input(node, 1);
  const int64_t* split_attr = NULL;
  uint32_t split_count = 0;
  if (node->opset < 13) st = mlcc_node_attr_ints(node, "split", &split_attr, &split_count);
  if (st == NULL && split_in != NULL) {
    st = need_const(node, split_in, "'split' input");
    if (st == NULL && numel_of(&split_in->shape) != n_out) {
      st = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Split has %lld sizes for %u outputs",
                            (long long)numel_of(&split_in->shape), n_out);
    }
    for (uint32_t k = 0; st == NULL && k < n_out; ++k) sizes[k] = mlcc_value_const_i64(split_in, k);
  } else if (st == NULL && split_count > 0) {
    if (split_count != n_out) {
      st = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Split has %u sizes for %u outputs",
                            split_count, n_out);
    }
    for (uint32_t k = 0; st == NULL && k < n_out; ++k) sizes[k] = split_attr[k];
  } else if (st == NULL) {
    for (uint32_t k = 0; k < n_out; ++k) {
      const mlcc_value_t* o = node->outputs[k];
      sizes[k] = o != NULL && o->shape.rank == in->shape.rank ? o->shape.dims[axis]
                                                                : dim / (int64_t)n_out;
    }
  }
  int64_t total = 0;
  for (uint32_t k = 0; st == NULL && k < n_out; ++k) {
    if (sizes[k] < 0 || !mlcc_checked_add_i64(total, sizes[k], &total)) {
      st = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Split size %lld is invalid",
                            (long long)sizes[k]);
    }
  }
  if (st == NULL && total != dim) {
    st = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "Split sizes sum to %lld but the axis %d has %lld elements",
                          (long long)total, axis, (long long)dim);
  }
  int64_t is[MLCC_MAX_RANK];
  strides_of(&in->shape, is);
  int64_t offset = 0;
  for (uint32_t k = 0; st == NULL && k < n_out; ++k) {
    const mlcc_value_t* o = node->outputs[k];
    if (o != NULL) {
      mlcc_shape_t want = in->shape;
      want.dims[axis] = sizes[k];
      if (!mlcc_shape_equal(&want, &o->shape) || o->dtype != in->dtype) {
        st = shape_mismatch(node, "output shape", &want, &o->shape);
        break;
      }
      int64_t os[MLCC_MAX_RANK];
      strides_of(&o->shape, os);
      st = affine_copy(ctx, node, k, in, o->shape.rank, o->shape.dims, offset * is[axis], is,
                       0, os);
    }
    offset += sizes[k];
  }
  free(sizes);
  return st;
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

// Slice (opset < 10: attributes; 10+: constant inputs incl. negative steps),
// clamped per the spec; iterates over the output. UNIMPLEMENTED if a bound
// is not constant.
static mlcc_status_t emit_slice(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  const int32_t rank = in->shape.rank;
  int64_t start[MLCC_MAX_RANK], step[MLCC_MAX_RANK], count[MLCC_MAX_RANK];
  bool seen[MLCC_MAX_RANK] = {false};
  for (int d = 0; d < rank; ++d) {
    start[d] = 0;
    step[d] = 1;
    count[d] = in->shape.dims[d];
  }
  // Gather (starts, ends, axes, steps) as int64 arrays.
  int64_t n = 0;
  const int64_t *a_starts = NULL, *a_ends = NULL, *a_axes = NULL;
  const mlcc_value_t *v_starts = NULL, *v_ends = NULL, *v_axes = NULL, *v_steps = NULL;
  if (node->opset < 10) {
    uint32_t ns = 0, ne = 0, na = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "starts", &a_starts, &ns));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "ends", &a_ends, &ne));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &a_axes, &na));
    if (ns != ne || (a_axes != NULL && na != ns)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice starts/ends/axes lengths differ: %u/%u/%u", ns, ne, na);
    }
    n = ns;
  } else {
    v_starts = mlcc_node_input(node, 1);
    v_ends = mlcc_node_input(node, 2);
    v_axes = mlcc_node_input(node, 3);
    v_steps = mlcc_node_input(node, 4);
    MLCC_RETURN_IF_ERROR(need_value(node, v_starts, "'starts'"));
    MLCC_RETURN_IF_ERROR(need_value(node, v_ends, "'ends'"));
    MLCC_RETURN_IF_ERROR(need_const(node, v_starts, "'starts'"));
    MLCC_RETURN_IF_ERROR(need_const(node, v_ends, "'ends'"));
    MLCC_RETURN_IF_ERROR(need_const(node, v_axes, "'axes'"));
    MLCC_RETURN_IF_ERROR(need_const(node, v_steps, "'steps'"));
    n = numel_of(&v_starts->shape);
    if (numel_of(&v_ends->shape) != n || (v_axes && numel_of(&v_axes->shape) != n) ||
        (v_steps && numel_of(&v_steps->shape) != n)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Slice starts/ends/axes/steps lengths differ");
    }
  }
  if (n > rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Slice has %lld axes for rank %d",
                            (long long)n, rank);
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = a_starts ? a_starts[i] : mlcc_value_const_i64(v_starts, i);
    int64_t e = a_ends ? a_ends[i] : mlcc_value_const_i64(v_ends, i);
    int64_t ax = a_axes ? a_axes[i] : v_axes ? mlcc_value_const_i64(v_axes, i) : i;
    int64_t st = v_steps ? mlcc_value_const_i64(v_steps, i) : 1;
    int32_t axis;
    MLCC_RETURN_IF_ERROR(norm_axis(node, ax, rank, &axis));
    if (seen[axis]) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Slice repeats axis %d", axis);
    }
    seen[axis] = true;
    if (st == 0) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Slice step is 0");
    int64_t c = 0;
    if (!mlcc_slice_axis(in->shape.dims[axis], s, e, st, &s, &c)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Slice axis %d has no valid length",
                              axis);
    }
    start[axis] = s;
    step[axis] = c == 1 ? 1 : st;  // one element: a huge step must not scale a stride
    count[axis] = c;
  }
  mlcc_shape_t want = {.rank = rank};
  for (int d = 0; d < rank; ++d) want.dims[d] = count[d];
  if (!mlcc_shape_equal(&want, &out->shape) || in->dtype != out->dtype) {
    return shape_mismatch(node, "output shape", &want, &out->shape);
  }
  int64_t is[MLCC_MAX_RANK], os[MLCC_MAX_RANK], ic[MLCC_MAX_RANK];
  strides_of(&in->shape, is);
  strides_of(&out->shape, os);
  int64_t base = 0;
  for (int d = 0; d < rank; ++d) {
    if (count[d] == 0) return mlcc_ok_status();
    base += start[d] * is[d];
    ic[d] = step[d] * is[d];
  }
  return affine_copy(ctx, node, 0, in, rank, out->shape.dims, base, ic, 0, os);
}

//===----------------------------------------------------------------------===//
// Gather, GatherElements
//===----------------------------------------------------------------------===//

// Gather along any axis; negative indices wrap, out-of-range ones clamp
// (never read out of bounds).
static mlcc_status_t emit_gather(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* data = mlcc_node_input(node, 0);
  const mlcc_value_t* ind = mlcc_node_input(node, 1);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, data, "input 'data'"));
  MLCC_RETURN_IF_ERROR(need_value(node, ind, "input 'indices'"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, data->dtype));
  if (ind->dtype != MLCC_DTYPE_I32 && ind->dtype != MLCC_DTYPE_I64) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Gather indices must be int32/int64, got %s",
                            mlcc_dtype_name(ind->dtype));
  }
  int64_t axis_attr = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis_attr));
  int32_t axis;
  MLCC_RETURN_IF_ERROR(norm_axis(node, axis_attr, data->shape.rank, &axis));
  const int32_t ri = ind->shape.rank, rd = data->shape.rank;
  mlcc_shape_t want = {.rank = rd - 1 + ri};
  if (want.rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "Gather output rank %d exceeds %d",
                            want.rank, MLCC_MAX_RANK);
  }
  for (int d = 0; d < axis; ++d) want.dims[d] = data->shape.dims[d];
  for (int d = 0; d < ri; ++d) want.dims[axis + d] = ind->shape.dims[d];
  for (int d = axis + 1; d < rd; ++d) want.dims[ri + d - 1] = data->shape.dims[d];
  if (!mlcc_shape_equal(&want, &out->shape) || out->dtype != data->dtype) {
    return shape_mismatch(node, "output shape", &want, &out->shape);
  }
  if (numel_of(&out->shape) == 0) return mlcc_ok_status();
  const int64_t dim = data->shape.dims[axis];
  if (dim == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Gather from an empty axis %d", axis);
  }
  int64_t ds[MLCC_MAX_RANK], is[MLCC_MAX_RANK], os[MLCC_MAX_RANK];
  strides_of(&data->shape, ds);
  strides_of(&ind->shape, is);
  strides_of(&out->shape, os);
  int64_t dcoef[MLCC_MAX_RANK] = {0}, icoef[MLCC_MAX_RANK] = {0};
  for (int d = 0; d < axis; ++d) dcoef[d] = ds[d];
  for (int d = 0; d < ri; ++d) icoef[axis + d] = is[d];
  for (int d = axis + 1; d < rd; ++d) dcoef[ri + d - 1] = ds[d];
  nest_t nest;
  nest_open(ctx, &nest, out->shape.dims, want.rank);
  LLVMValueRef raw = mlcc_emit_load(ctx, ind, affine(ctx, 0, icoef, nest.iv, want.rank));
  LLVMValueRef idx = safe_index(ctx, raw, ind->dtype, dim);
  LLVMValueRef dl = affine(ctx, 0, dcoef, nest.iv, want.rank);
  dl = LLVMBuildAdd(ctx->b, dl, LLVMBuildMul(ctx->b, idx, i64c(ctx, ds[axis]), "o"), "dl");
  LLVMValueRef v = mlcc_emit_load(ctx, data, dl);
  mlcc_status_t st =
      mlcc_emit_store_output(ctx, node, 0, affine(ctx, 0, os, nest.iv, want.rank), v);
  nest_close(ctx, &nest);
  return st;
}

// GatherElements: out[i] = data[i with i[axis] = indices[i]], indices as Gather.
static mlcc_status_t emit_gather_elements(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* data = mlcc_node_input(node, 0);
  const mlcc_value_t* ind = mlcc_node_input(node, 1);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, data, "input 'data'"));
  MLCC_RETURN_IF_ERROR(need_value(node, ind, "input 'indices'"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, data->dtype));
  if (ind->dtype != MLCC_DTYPE_I32 && ind->dtype != MLCC_DTYPE_I64) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GatherElements indices must be int32/int64, got %s",
                            mlcc_dtype_name(ind->dtype));
  }
  int64_t axis_attr = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis_attr));
  int32_t axis;
  const int32_t r = data->shape.rank;
  MLCC_RETURN_IF_ERROR(norm_axis(node, axis_attr, r, &axis));
  if (ind->shape.rank != r || !mlcc_shape_equal(&ind->shape, &out->shape)) {
    return shape_mismatch(node, "indices/output shape", &ind->shape, &out->shape);
  }
  for (int d = 0; d < r; ++d) {
    if (d != axis && ind->shape.dims[d] > data->shape.dims[d]) {
      return shape_mismatch(node, "indices dims (at most the data's)", &data->shape,
                            &ind->shape);
    }
  }
  if (numel_of(&out->shape) == 0) return mlcc_ok_status();
  const int64_t dim = data->shape.dims[axis];
  if (dim == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "GatherElements from an empty axis");
  }
  int64_t ds[MLCC_MAX_RANK], os[MLCC_MAX_RANK], dcoef[MLCC_MAX_RANK];
  strides_of(&data->shape, ds);
  strides_of(&out->shape, os);
  for (int d = 0; d < r; ++d) dcoef[d] = d == axis ? 0 : ds[d];
  nest_t nest;
  nest_open(ctx, &nest, out->shape.dims, r);
  LLVMValueRef ol = affine(ctx, 0, os, nest.iv, r);
  LLVMValueRef idx = safe_index(ctx, mlcc_emit_load(ctx, ind, ol), ind->dtype, dim);
  LLVMValueRef dl = affine(ctx, 0, dcoef, nest.iv, r);
  dl = LLVMBuildAdd(ctx->b, dl, LLVMBuildMul(ctx->b, idx, i64c(ctx, ds[axis]), "o"), "dl");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, ol, mlcc_emit_load(ctx, data, dl));
  nest_close(ctx, &nest);
  return st;
}

//===----------------------------------------------------------------------===//
// Transpose, Expand, Tile
//===----------------------------------------------------------------------===//

// Transpose by 'perm' (default: reversed). INVALID_MODEL for a bad perm.
static mlcc_status_t emit_transpose(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  const int32_t r = in->shape.rank;
  const int64_t* perm_attr = NULL;
  uint32_t np = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "perm", &perm_attr, &np));
  int64_t perm[MLCC_MAX_RANK];
  bool used[MLCC_MAX_RANK] = {false};
  if (perm_attr != NULL && np != (uint32_t)r) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Transpose perm has %u entries for rank %d",
                            np, r);
  }
  mlcc_shape_t want = {.rank = r};
  for (int d = 0; d < r; ++d) {
    perm[d] = perm_attr ? perm_attr[d] : r - 1 - d;
    if (perm[d] < 0 || perm[d] >= r || used[perm[d]]) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Transpose perm is not a permutation");
    }
    used[perm[d]] = true;
    want.dims[d] = in->shape.dims[perm[d]];
  }
  if (!mlcc_shape_equal(&want, &out->shape)) {
    return shape_mismatch(node, "output shape", &want, &out->shape);
  }
  int64_t is[MLCC_MAX_RANK], os[MLCC_MAX_RANK], ic[MLCC_MAX_RANK];
  strides_of(&in->shape, is);
  strides_of(&out->shape, os);
  for (int d = 0; d < r; ++d) ic[d] = is[perm[d]];
  return affine_copy(ctx, node, 0, in, r, out->shape.dims, 0, ic, 0, os);
}

// Expand: numpy broadcast of the input to the (inferred) output shape.
static mlcc_status_t emit_expand(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  const int32_t ro = out->shape.rank, ri = in->shape.rank;
  if (ri > ro) return shape_mismatch(node, "output (rank >= input)", &in->shape, &out->shape);
  int64_t is[MLCC_MAX_RANK], os[MLCC_MAX_RANK], ic[MLCC_MAX_RANK];
  strides_of(&in->shape, is);
  strides_of(&out->shape, os);
  for (int d = 0; d < ro; ++d) {
    int j = d - (ro - ri);
    ic[d] = 0;
    if (j < 0) continue;
    if (in->shape.dims[j] != 1) {
      if (in->shape.dims[j] != out->shape.dims[d]) {
        return shape_mismatch(node, "output (broadcast of input)", &in->shape, &out->shape);
      }
      ic[d] = is[j];
    }
  }
  return affine_copy(ctx, node, 0, in, ro, out->shape.dims, 0, ic, 0, os);
}

// Tile: out[i] = in[i mod in_dims], iterated as (repeat, index) pairs.
static mlcc_status_t emit_tile(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  const int32_t r = in->shape.rank;
  if (out->shape.rank != r) return shape_mismatch(node, "output rank", &in->shape, &out->shape);
  // Iterate (rep_0, in_0, rep_1, in_1, ...): out index r*in_d + j, input j.
  int64_t is[MLCC_MAX_RANK], os[MLCC_MAX_RANK];
  strides_of(&in->shape, is);
  strides_of(&out->shape, os);
  int64_t dims[MAX_ITER_RANK], ic[MAX_ITER_RANK], oc[MAX_ITER_RANK];
  for (int d = 0; d < r; ++d) {
    int64_t n = in->shape.dims[d];
    if (n == 0) {
      if (out->shape.dims[d] != 0) return shape_mismatch(node, "output", &in->shape, &out->shape);
      return mlcc_ok_status();
    }
    if (out->shape.dims[d] % n != 0) {
      return shape_mismatch(node, "output (multiple of input)", &in->shape, &out->shape);
    }
    dims[2 * d] = out->shape.dims[d] / n;
    dims[2 * d + 1] = n;
    ic[2 * d] = 0;
    ic[2 * d + 1] = is[d];
    oc[2 * d] = n * os[d];
    oc[2 * d + 1] = os[d];
  }
  return affine_copy(ctx, node, 0, in, 2 * r, dims, 0, ic, 0, oc);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

enum pad_mode_e { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

static mlcc_status_t pad_kernel(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                const mlcc_value_t* in, const mlcc_value_t* out,
                                const int64_t* pads, enum pad_mode_e m, const char* mode,
                                LLVMValueRef value);

// Pad modes constant/reflect/edge, wrap (19+) (opset < 11: attributes
// pads/value; 11+: constant inputs; 18+: optional constant 'axes' input 3).
// Negative pads crop.
static mlcc_status_t emit_pad(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  const int32_t r = in->shape.rank;
  const char* mode = "constant";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "constant", &mode));
  enum pad_mode_e m;
  if (strcmp(mode, "constant") == 0) m = PAD_CONSTANT;
  else if (strcmp(mode, "reflect") == 0) m = PAD_REFLECT;
  else if (strcmp(mode, "edge") == 0) m = PAD_EDGE;
  else if (strcmp(mode, "wrap") == 0 && node->opset >= 19) m = PAD_WRAP;
  else {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "Pad mode '%s' (supported: constant, "
                            "reflect, edge, and wrap from opset 19)", mode);
  }
  int64_t pads[2 * MLCC_MAX_RANK];
  LLVMValueRef value = mlcc_emit_const(ctx, in->dtype, 0.0);
  if (node->opset < 11) {
    const int64_t* p = NULL;
    uint32_t np = 0;
    float fv = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "pads", &p, &np));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "value", 0.0f, &fv));
    if (np != (uint32_t)(2 * r)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Pad pads has %u values for rank %d",
                              np, r);
    }
    memcpy(pads, p, sizeof(int64_t) * 2 * r);
    value = mlcc_emit_const(ctx, in->dtype, fv);
  } else {
    const mlcc_value_t* vp = mlcc_node_input(node, 1);
    const mlcc_value_t* vc = mlcc_node_input(node, 2);
    MLCC_RETURN_IF_ERROR(need_value(node, vp, "'pads'"));
    MLCC_RETURN_IF_ERROR(need_const(node, vp, "'pads'"));
    MLCC_RETURN_IF_ERROR(need_const(node, vc, "'constant_value'"));
    const mlcc_value_t* va = node->n_inputs > 3 ? mlcc_node_input(node, 3) : NULL;
    if (va != NULL) {
      // Pad-18 'axes' (checked by infer): pads lists begin/end per listed axis.
      MLCC_RETURN_IF_ERROR(need_const(node, va, "'axes'"));
      const int64_t na = numel_of(&va->shape);
      if (na > r || numel_of(&vp->shape) != 2 * na) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Pad pads has %lld values for %lld axes",
                                (long long)numel_of(&vp->shape), (long long)na);
      }
      for (int i = 0; i < 2 * r; ++i) pads[i] = 0;
      for (int64_t i = 0; i < na; ++i) {
        int64_t a = mlcc_value_const_i64(va, i);
        if (a < 0) a += r;
        if (a < 0 || a >= r) {
          return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Pad axis %lld out of range",
                                  (long long)mlcc_value_const_i64(va, i));
        }
        pads[a] = mlcc_value_const_i64(vp, i);
        pads[a + r] = mlcc_value_const_i64(vp, i + na);
      }
    } else {
      if (numel_of(&vp->shape) != 2 * r) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Pad pads has %lld values for rank %d",
                                (long long)numel_of(&vp->shape), r);
      }
      for (int i = 0; i < 2 * r; ++i) pads[i] = mlcc_value_const_i64(vp, i);
    }
    if (vc != NULL && numel_of(&vc->shape) > 0) {
      value = scalar_from_bytes(ctx, in->dtype, vc->dtype, vc->data);
    }
  }
  return pad_kernel(ctx, node, in, out, pads, m, mode, value);
}

// The Pad loop nest: |pads| holds begin then end per dim of |in| (negative
// crops), |m| the mode, |value| the constant-mode fill. Shared with
// CenterCropPad (constant mode, zero fill).
static mlcc_status_t pad_kernel(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                const mlcc_value_t* in, const mlcc_value_t* out,
                                const int64_t* pads, enum pad_mode_e m, const char* mode,
                                LLVMValueRef value) {
  const int32_t r = in->shape.rank;
  mlcc_shape_t want = {.rank = r};
  for (int d = 0; d < r; ++d) {
    int64_t o = 0;
    if (pads[d] < -in->shape.dims[d] || pads[r + d] < -in->shape.dims[d] ||
        !mlcc_checked_add_i64(in->shape.dims[d], pads[d], &o) ||
        !mlcc_checked_add_i64(o, pads[r + d], &o) || o < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Pad pads %lld,%lld invalid for dim %lld",
                              (long long)pads[d], (long long)pads[r + d],
                              (long long)in->shape.dims[d]);
    }
    want.dims[d] = o;
    const int64_t kept = in->shape.dims[d] + (pads[d] < 0 ? pads[d] : 0) +
                         (pads[r + d] < 0 ? pads[r + d] : 0);
    if (m == PAD_WRAP && (pads[d] > 0 || pads[r + d] > 0) && kept <= 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Pad mode 'wrap' has nothing to wrap on axis %d (pads %lld,%lld)",
                              d, (long long)pads[d], (long long)pads[r + d]);
    }
  }
  if (!mlcc_shape_equal(&want, &out->shape)) {
    return shape_mismatch(node, "output shape", &want, &out->shape);
  }
  if (numel_of(&out->shape) == 0) return mlcc_ok_status();
  const bool empty_in = numel_of(&in->shape) == 0;
  if (empty_in && m != PAD_CONSTANT) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Pad mode '%s' of an empty tensor", mode);
  }
  int64_t is[MLCC_MAX_RANK], os[MLCC_MAX_RANK];
  strides_of(&in->shape, is);
  strides_of(&out->shape, os);
  nest_t nest;
  nest_open(ctx, &nest, out->shape.dims, r);
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef v;
  if (empty_in) {
    v = value;
  } else {
    LLVMValueRef inb = NULL, lin = i64c(ctx, 0);
    for (int d = 0; d < r; ++d) {
      const int64_t n = in->shape.dims[d];
      LLVMValueRef i = nest.iv[d];
      if (pads[d] != 0) i = LLVMBuildSub(b, i, i64c(ctx, pads[d]), "i");
      bool may_leave = pads[d] > 0 || pads[r + d] > 0;
      if (may_leave) {
        if (m == PAD_CONSTANT) {
          LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntULT, i, i64c(ctx, n), "inb");
          inb = inb ? LLVMBuildAnd(b, inb, ok, "inb") : ok;
        } else if (m == PAD_REFLECT) {
          LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, i, i64c(ctx, 0), "neg");
          i = LLVMBuildSelect(b, neg, LLVMBuildNeg(b, i, "ri"), i, "r0");
          LLVMValueRef hi = LLVMBuildICmp(b, LLVMIntSGE, i, i64c(ctx, n), "hi");
          i = LLVMBuildSelect(b, hi, LLVMBuildSub(b, i64c(ctx, 2 * (n - 1)), i, "rh"), i, "r1");
        } else if (m == PAD_WRAP) {
          // Negative pads crop first (cb at the start, ce at the end) and the
          // torus is the cropped extent nc (onnxruntime's order; numpy.pad, the
          // ONNX reference, has no negative widths): cb + ((i - cb) mod nc).
          const int64_t cb = pads[d] < 0 ? -pads[d] : 0, ce = pads[r + d] < 0 ? -pads[r + d] : 0;
          const int64_t nc = n - cb - ce;
          if (cb != 0) i = LLVMBuildSub(b, i, i64c(ctx, cb), "wc");
          LLVMValueRef rem = LLVMBuildSRem(b, i, i64c(ctx, nc), "wr");
          LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, rem, i64c(ctx, 0), "wneg");
          i = LLVMBuildSelect(b, neg, LLVMBuildAdd(b, rem, i64c(ctx, nc), "wp"), rem, "w");
          if (cb != 0) i = LLVMBuildAdd(b, i, i64c(ctx, cb), "wu");
        }
        i = clamp_i64(ctx, i, 0, n - 1);
      }
      if (is[d] != 0 && n > 1) lin = LLVMBuildAdd(b, lin, LLVMBuildMul(b, i, i64c(ctx, is[d]), "m"), "l");
    }
    v = mlcc_emit_load(ctx, in, lin);
    if (inb != NULL) v = LLVMBuildSelect(b, inb, v, value, "pv");
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, affine(ctx, 0, os, nest.iv, r), v);
  nest_close(ctx, &nest);
  return st;
}

// CenterCropPad (ONNX 18): per listed axis, a centered crop (start rounded
// down) or a centered zero pad (the odd pixel on the right), as Pad with
// begin/end pads of -crop or +pad. 'shape' must be constant.
static mlcc_status_t emit_center_crop_pad(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* sh = mlcc_node_input(node, 1);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, sh, "'shape'"));
  MLCC_RETURN_IF_ERROR(need_const(node, sh, "'shape'"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  const int32_t r = in->shape.rank;
  const int64_t* axes = NULL;
  uint32_t na = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &axes, &na));
  const int64_t n = numel_of(&sh->shape);
  if ((axes != NULL && (int64_t)na != n) || (axes == NULL && n != r)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "CenterCropPad 'shape' has %lld values for %d axes", (long long)n,
                            axes != NULL ? (int)na : (int)r);
  }
  int64_t pads[2 * MLCC_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = axes != NULL ? axes[i] : i;
    if (a < 0) a += r;
    if (a < 0 || a >= r) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "CenterCropPad axis out of range");
    }
    int64_t dim = in->shape.dims[a], want = mlcc_value_const_i64(sh, i);
    int64_t diff = want - dim;  // > 0 pad, < 0 crop
    int64_t begin = diff >= 0 ? diff / 2 : -((-diff) / 2);
    pads[a] = begin;
    pads[a + r] = diff - begin;
  }
  return pad_kernel(ctx, node, in, out, pads, PAD_CONSTANT, "constant",
                    mlcc_emit_const(ctx, in->dtype, 0.0));
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

// Per-dim interpolation tables: for output coordinate o and tap t, the input
// offset (index * input stride) and weight; |valid| marks coordinates inside
// the crop box (tf_crop_and_resize only).
typedef struct resize_dim_t {
  int n_taps;           // 1 (nearest or exact), 2 (linear), 4 (cubic), more with antialias
  int64_t* offs;        // [out * n_taps]
  double* w;            // [out * n_taps]
  bool* valid;          // [out] or NULL
} resize_dim_t;

enum { COORD_HALF_PIXEL, COORD_ASYMMETRIC, COORD_ALIGN_CORNERS, COORD_PYTORCH_HALF_PIXEL,
       COORD_TF_HALF_PIXEL_NN, COORD_TF_CROP, COORD_HALF_PIXEL_SYMMETRIC };
enum { NEAREST_ROUND_PREFER_FLOOR, NEAREST_ROUND_PREFER_CEIL, NEAREST_FLOOR, NEAREST_CEIL,
       NEAREST_SIMPLE };

// Taps of one output element along a dim: at most this many (an antialiased
// downscale by 1/s needs about 2/s linear or 4/s cubic taps).
#define RESIZE_MAX_DIM_TAPS 256

// The cubic convolution kernel (Keys, coefficient |a|) at distance |x|.
static double resize_cubic_kernel(double a, double x) {
  x = fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// Fills |rd| for one dim: |mode| 0 nearest, 1 linear, 2 cubic; |antialias|
// (Resize-18) widens the linear/cubic filter by 1/scale when downscaling
// (scale < 1): taps start+0 .. start+n-1 around the base pixel with
// start = floor(-support/scale) + 1 (support 1 linear, 2 cubic), n = 2 - 2*start,
// weights kernel(scale * distance) normalized to sum 1 (the ONNX reference).
static mlcc_status_t resize_build_dim(resize_dim_t* rd, int mode, int coord, int nearest,
                                      double cubic_a, bool exclude_outside, bool antialias,
                                      int64_t in_len, int64_t out_len, double scale,
                                      double roi_s, double roi_e, int64_t stride) {
  int n = mode == 0 ? 1 : mode == 1 ? 2 : 4;
  int start = 1 - n / 2;  // first tap relative to the base pixel
  const bool widen = antialias && mode != 0 && scale < 1;
  if (widen) {
    double st = floor((mode == 1 ? -1.0 : -2.0) / scale) + 1;
    if (!(st > -(double)(RESIZE_MAX_DIM_TAPS / 2))) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Resize antialias with scale %g needs more than %d taps per dim",
                              scale, RESIZE_MAX_DIM_TAPS);
    }
    start = (int)st;
    n = 2 - 2 * start;
  }
  rd->n_taps = n;
  if (out_len > (1 << 20) || out_len * n > (1 << 22)) {  // the tables become LLVM constants
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Resize output dim of %lld elements with %d taps (at most 2^20 "
                            "elements)",
                            (long long)out_len, n);
  }
  rd->offs = calloc((size_t)out_len * n, sizeof(int64_t));
  rd->w = calloc((size_t)out_len * n, sizeof(double));
  rd->valid = coord == COORD_TF_CROP ? calloc((size_t)out_len, sizeof(bool)) : NULL;
  if (rd->offs == NULL || rd->w == NULL || (coord == COORD_TF_CROP && rd->valid == NULL)) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  const double out_w = scale * (double)in_len;  // as the ONNX reference computes it
  for (int64_t o = 0; o < out_len; ++o) {
    const double x = (double)o;
    double xo;
    switch (coord) {
      case COORD_ASYMMETRIC: xo = x / scale; break;
      case COORD_ALIGN_CORNERS:
        xo = out_w == 1 ? 0.0 : x * (double)(in_len - 1) / (out_w - 1);
        break;
      case COORD_PYTORCH_HALF_PIXEL: xo = out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
      case COORD_TF_HALF_PIXEL_NN: xo = (x + 0.5) / scale; break;
      case COORD_TF_CROP:
        xo = out_w == 1 ? (roi_e - roi_s) * (double)(in_len - 1) / 2
                        : x * (roi_e - roi_s) * (double)(in_len - 1) / (out_w - 1);
        xo += roi_s * (double)(in_len - 1);
        rd->valid[o] = !(xo < 0 || xo > (double)(in_len - 1));
        break;
      case COORD_HALF_PIXEL_SYMMETRIC: {
        // Resize-19: half_pixel about the centre of the input, shifted by
        // the rounding of the output length.
        const double adjustment = (double)out_len / out_w;
        xo = (double)in_len / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
        break;
      }
      default: xo = (x + 0.5) / scale - 0.5; break;
    }
    if (!isfinite(xo)) xo = 0;
    if (xo > 1e15) xo = 1e15;
    if (xo < -1e15) xo = -1e15;
    int64_t* offs = rd->offs + o * n;
    double* w = rd->w + o * n;
    if (mode == 0) {
      double fl = floor(xo);
      double frac = xo - fl;
      double pick;
      switch (nearest) {
        case NEAREST_ROUND_PREFER_CEIL: pick = frac >= 0.5 ? fl + 1 : fl; break;
        case NEAREST_FLOOR: pick = fl; break;
        case NEAREST_CEIL: pick = ceil(xo); break;
        case NEAREST_SIMPLE: pick = scale < 1 ? ceil(xo) : trunc(xo); break;
        default: pick = frac > 0.5 ? fl + 1 : fl; break;
      }
      int64_t i = (int64_t)pick;
      offs[0] = clamp64(i, 0, in_len - 1) * stride;
      w[0] = 1;
      continue;
    }
    // Reference semantics: ratio in (0, 1], taps at base+start .. base+start+n-1.
    double fl = floor(xo);
    double ratio = xo - fl;
    int64_t base = (int64_t)fl;
    if (ratio == 0) {
      ratio = 1;
      base -= 1;
    }
    double sum = 0;
    for (int t = 0; t < n; ++t) {
      double c;
      if (widen) {
        double arg = scale * ((double)(start + t) - ratio);
        c = mode == 1 ? fmax(0.0, 1 - fabs(arg)) : resize_cubic_kernel(cubic_a, arg);
      } else if (mode == 1) {
        c = t == 0 ? 1 - ratio : ratio;
      } else {
        // Distances to taps base-1 .. base+2, spelled as before antialias
        // existed so the weights stay bit-identical.
        const double q = 1 - ratio, dist[4] = {ratio + 1, ratio, q, q + 1};
        c = resize_cubic_kernel(cubic_a, dist[t]);
      }
      w[t] = c;
      sum += c;
    }
    if (widen && sum != 0) {
      for (int t = 0; t < n; ++t) w[t] /= sum;
    }
    sum = 0;
    for (int t = 0; t < n; ++t) {
      int64_t i = base + start + t;
      if (exclude_outside && (i < 0 || i >= in_len)) w[t] = 0;
      sum += w[t];
      offs[t] = clamp64(i, 0, in_len - 1) * stride;
    }
    if (exclude_outside && sum != 0) {
      for (int t = 0; t < n; ++t) w[t] /= sum;
    }
  }
  // Collapse to one tap when every output picks exactly one input.
  if (n > 1) {
    bool single = true;
    for (int64_t o = 0; o < out_len && single; ++o) {
      int ones = 0, zeros = 0;
      for (int t = 0; t < n; ++t) {
        if (rd->w[o * n + t] == 1) ones++;
        else if (rd->w[o * n + t] == 0) zeros++;
      }
      single = ones == 1 && zeros == n - 1;
    }
    if (single) {
      for (int64_t o = 0; o < out_len; ++o) {
        for (int t = 0; t < n; ++t) {
          if (rd->w[o * n + t] == 1) {
            rd->offs[o] = rd->offs[o * n + t];
            break;
          }
        }
        rd->w[o] = 1;
      }
      rd->n_taps = 1;
    }
  }
  return mlcc_ok_status();
}

static int parse_enum(const char* s, const char* const* names, int n) {
  for (int i = 0; i < n; ++i) {
    if (strcmp(s, names[i]) == 0) return i;
  }
  return -1;
}

// Unrolled tap combinations up to this many per element; more (antialiased
// downscales) run as loops over each dim's taps.
#define RESIZE_UNROLL_TAPS 64

static mlcc_status_t resize_emit(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                 const mlcc_value_t* in, const mlcc_value_t* out,
                                 resize_dim_t* rd, LLVMValueRef extrap) {
  const int r = out->shape.rank;
  LLVMBuilderRef b = ctx->b;
  const bool fp = is_float_dt(in->dtype);
  LLVMTypeRef wt = fp ? mlcc_emit_type(ctx, in->dtype) : NULL;
  int64_t total_taps = 1;
  for (int d = 0; d < r; ++d) {
    total_taps *= rd[d].n_taps;
    if (total_taps > (1 << 20)) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Resize interpolating more than 2^20 taps per element");
    }
  }
  if (!fp && total_taps > 1) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Resize interpolation of dtype %s (only nearest)",
                            mlcc_dtype_name(in->dtype));
  }
  // Tables as private constant globals.
  LLVMValueRef g_off[MLCC_MAX_RANK] = {0}, g_w[MLCC_MAX_RANK] = {0}, g_v[MLCC_MAX_RANK] = {0};
  for (int d = 0; d < r; ++d) {
    const int64_t len = out->shape.dims[d] * rd[d].n_taps;
    // Each table is an LLVM constant array of |len| entries; 2^20 keeps the
    // compile time of one kernel to seconds (2^24 took over 30 s and GBs).
    if (len > (1 << 20)) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Resize output dim %d of %lld elements with %d taps (at most 2^20 "
                              "table entries per dim)",
                              d, (long long)out->shape.dims[d], rd[d].n_taps);
    }
    LLVMValueRef* el = calloc((size_t)len, sizeof(LLVMValueRef));
    if (el == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t i = 0; i < len; ++i) el[i] = i64c(ctx, rd[d].offs[i]);
    g_off[d] = const_global(ctx, ctx->t_i64, el, (unsigned)len, "mlcc.resize.off");
    if (rd[d].n_taps > 1) {
      for (int64_t i = 0; i < len; ++i) el[i] = LLVMConstReal(wt, rd[d].w[i]);
      g_w[d] = const_global(ctx, wt, el, (unsigned)len, "mlcc.resize.w");
    }
    if (rd[d].valid != NULL) {
      for (int64_t i = 0; i < out->shape.dims[d]; ++i) {
        el[i] = LLVMConstInt(ctx->t_i1, rd[d].valid[i], 0);
      }
      g_v[d] = const_global(ctx, ctx->t_i1, el, (unsigned)out->shape.dims[d], "mlcc.resize.v");
    }
    free(el);
  }
  int64_t os[MLCC_MAX_RANK];
  strides_of(&out->shape, os);
  nest_t nest;
  nest_open(ctx, &nest, out->shape.dims, r);
  LLVMValueRef valid = NULL, row[MLCC_MAX_RANK];
  for (int d = 0; d < r; ++d) {
    const int n = rd[d].n_taps;
    row[d] = n == 1 ? nest.iv[d] : LLVMBuildMul(b, nest.iv[d], i64c(ctx, n), "row");
    if (g_v[d] != NULL) {
      LLVMValueRef vd = table_load(ctx, g_v[d], ctx->t_i1, nest.iv[d]);
      valid = valid ? LLVMBuildAnd(b, valid, vd, "valid") : vd;
    }
  }
  LLVMValueRef acc = NULL;
  if (total_taps <= RESIZE_UNROLL_TAPS) {
    // Per dim: tap offsets and weights for this output coordinate.
    LLVMValueRef toff[MLCC_MAX_RANK][RESIZE_UNROLL_TAPS], tw[MLCC_MAX_RANK][RESIZE_UNROLL_TAPS];
    for (int d = 0; d < r; ++d) {
      const int n = rd[d].n_taps;
      for (int t = 0; t < n; ++t) {
        LLVMValueRef j = t == 0 ? row[d] : LLVMBuildAdd(b, row[d], i64c(ctx, t), "j");
        toff[d][t] = table_load(ctx, g_off[d], ctx->t_i64, j);
        tw[d][t] = n > 1 ? table_load(ctx, g_w[d], wt, j) : NULL;
      }
    }
    for (int c = 0; c < (int)total_taps; ++c) {
      int rem = c;
      LLVMValueRef off = NULL, w = NULL;
      for (int d = r - 1; d >= 0; --d) {
        const int n = rd[d].n_taps;
        const int t = rem % n;
        rem /= n;
        off = off ? LLVMBuildAdd(b, off, toff[d][t], "off") : toff[d][t];
        if (tw[d][t] != NULL) w = w ? LLVMBuildFMul(b, w, tw[d][t], "w") : tw[d][t];
      }
      if (off == NULL) off = i64c(ctx, 0);
      LLVMValueRef v = mlcc_emit_load(ctx, in, off);
      if (w == NULL) {
        acc = v;
      } else {
        acc = acc ? mlcc_emit_fmuladd(ctx, w, v, acc) : LLVMBuildFMul(b, w, v, "wv");
      }
    }
  } else {
    // Loops over the taps of every interpolated dim (float only: more than
    // one tap), accumulating weight products in dim order.
    LLVMValueRef var = mlcc_emit_var(ctx, wt, LLVMConstReal(wt, 0));
    mlcc_loop_t lt[MLCC_MAX_RANK];
    LLVMValueRef off = i64c(ctx, 0), w = NULL;
    for (int d = 0; d < r; ++d) {
      const int n = rd[d].n_taps;
      LLVMValueRef j = row[d];
      if (n > 1) {
        lt[d] = mlcc_emit_for(ctx, 0, n, "tap");
        j = LLVMBuildAdd(b, row[d], lt[d].iv, "j");
        LLVMValueRef wd = table_load(ctx, g_w[d], wt, j);
        w = w ? LLVMBuildFMul(b, w, wd, "w") : wd;
      }
      off = LLVMBuildAdd(b, off, table_load(ctx, g_off[d], ctx->t_i64, j), "off");
    }
    LLVMValueRef v = mlcc_emit_load(ctx, in, off);
    LLVMBuildStore(b, mlcc_emit_fmuladd(ctx, w, v, LLVMBuildLoad2(b, wt, var, "")), var);
    for (int d = r - 1; d >= 0; --d) {
      if (rd[d].n_taps > 1) mlcc_emit_loop_end(ctx, &lt[d]);
    }
    acc = LLVMBuildLoad2(b, wt, var, "acc");
  }
  if (valid != NULL) acc = LLVMBuildSelect(b, valid, acc, extrap, "ex");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, affine(ctx, 0, os, nest.iv, r), acc);
  nest_close(ctx, &nest);
  return st;
}

// Resize nearest/linear/cubic over every dim with all coordinate modes of
// opsets 10-19 (half_pixel_symmetric from 19), antialias (18) and the axes /
// keep_aspect_ratio_policy of mlcc_resize_geometry (18); per-dim tap tables
// are computed at compile time from the constant scales/sizes/roi (the ONNX
// reference's 1-D interpolation rules).
static mlcc_status_t emit_resize(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 'X'"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, in->dtype));
  const int32_t r = in->shape.rank;
  if (out->shape.rank != r || out->dtype != in->dtype) {
    return shape_mismatch(node, "output rank", &in->shape, &out->shape);
  }
  const char* s_mode = "nearest";
  const char* s_coord = "half_pixel";
  const char* s_nearest = "round_prefer_floor";
  float cubic_a = -0.75f, extrap_f = 0.0f;
  int64_t exclude = 0, antialias = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "nearest", &s_mode));
  static const char* const modes[] = {"nearest", "linear", "cubic"};
  int mode = parse_enum(s_mode, modes, 3);
  if (mode < 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Resize mode '%s' is not one of "
                            "nearest, linear, cubic", s_mode);
  }
  int coord = COORD_ASYMMETRIC, nearest = NEAREST_SIMPLE;
  if (node->opset >= 11) {
    MLCC_RETURN_IF_ERROR(
        mlcc_node_attr_string(node, "coordinate_transformation_mode", "half_pixel", &s_coord));
    MLCC_RETURN_IF_ERROR(
        mlcc_node_attr_string(node, "nearest_mode", "round_prefer_floor", &s_nearest));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "cubic_coeff_a", -0.75f, &cubic_a));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "exclude_outside", 0, &exclude));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "extrapolation_value", 0.0f, &extrap_f));
    static const char* const coords[] = {"half_pixel", "asymmetric", "align_corners",
                                         "pytorch_half_pixel", "tf_half_pixel_for_nearest",
                                         "tf_crop_and_resize", "tf_half_pixel_for_nn",
                                         "half_pixel_symmetric"};
    static const char* const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};
    coord = parse_enum(s_coord, coords, node->opset >= 19 ? 8 : 7);
    if (coord == 6) coord = COORD_TF_HALF_PIXEL_NN;  // the spelling ONNX uses
    if (coord == 7) coord = COORD_HALF_PIXEL_SYMMETRIC;
    nearest = parse_enum(s_nearest, nearests, 4);
    if (coord < 0 || nearest < 0) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Resize coordinate_transformation_mode '%s' / nearest_mode '%s'",
                              s_coord, s_nearest);
    }
  }
  if (node->opset >= 18) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "antialias", 0, &antialias));
  }
  mlcc_resize_geom_t geom;
  MLCC_RETURN_IF_ERROR(mlcc_resize_geometry(node, &geom));
  if (geom.rank != r) return mlcc_make_status(MLCC_STATUS_INTERNAL, "Resize geometry rank");
  for (int d = 0; d < r; ++d) {
    if (geom.out[d] != out->shape.dims[d]) {
      return shape_mismatch(node, "output", &in->shape, &out->shape);
    }
  }
  const double* scale = geom.scale;
  if (numel_of(&out->shape) == 0) return mlcc_ok_status();
  if (numel_of(&in->shape) == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Resize of an empty tensor");
  }
  int64_t is[MLCC_MAX_RANK];
  strides_of(&in->shape, is);
  resize_dim_t rd[MLCC_MAX_RANK];
  memset(rd, 0, sizeof(rd));
  mlcc_status_t st = mlcc_ok_status();
  for (int d = 0; d < r && st == NULL; ++d) {
    double rs = geom.roi_start[d], re = geom.roi_end[d];
    // A dim that is not resized is an identity (no taps), whatever the mode.
    bool ident = in->shape.dims[d] == out->shape.dims[d] && scale[d] == 1.0 &&
                 coord != COORD_TF_CROP;
    st = resize_build_dim(&rd[d], ident ? 0 : mode, ident ? COORD_ASYMMETRIC : coord,
                          ident ? NEAREST_FLOOR : nearest, cubic_a, exclude != 0,
                          antialias != 0, in->shape.dims[d], out->shape.dims[d], scale[d], rs,
                          re, is[d]);
  }
  if (st == NULL) {
    st = resize_emit(ctx, node, in, out, rd, mlcc_emit_const(ctx, in->dtype, extrap_f));
  }
  for (int d = 0; d < r; ++d) {
    free(rd[d].offs);
    free(rd[d].w);
    free(rd[d].valid);
  }
  return st;
}

//===----------------------------------------------------------------------===//
// Shape, Size, Constant, ConstantOfShape, Range
//===----------------------------------------------------------------------===//

// Shape (with opset-15 start/end) and Size: stores compile-time dims.
static mlcc_status_t emit_shape(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, in, "input 0"));
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, out->dtype));
  if (node->op == MLCC_OP_SIZE) {
    return mlcc_emit_store_output(ctx, node, 0, i64c(ctx, 0),
                                  mlcc_emit_const(ctx, out->dtype, (double)numel_of(&in->shape)));
  }
  const int32_t r = in->shape.rank;
  int64_t start = 0, end = r;
  if (node->opset >= 15) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "start", 0, &start));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "end", r, &end));
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = clamp64(start, 0, r);
    end = clamp64(end, 0, r);
  }
  int64_t n = end > start ? end - start : 0;
  if (numel_of(&out->shape) != n) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Shape output has %lld elements, "
                            "expected %lld", (long long)numel_of(&out->shape), (long long)n);
  }
  LLVMTypeRef t = mlcc_emit_type(ctx, out->dtype);
  for (int64_t i = 0; i < n; ++i) {
    LLVMValueRef v = LLVMConstInt(t, (unsigned long long)in->shape.dims[start + i], 1);
    MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, i64c(ctx, i), v));
  }
  return mlcc_ok_status();
}

// Fills output 0 from raw bytes |data| of |dtype| (|n_data| elements; 1
// element is broadcast to the whole output).
static mlcc_status_t fill_from_bytes(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                     const mlcc_value_t* out, mlcc_dtype_t dtype,
                                     const void* data, int64_t n_data) {
  const int64_t n = numel_of(&out->shape);
  if (n == 0) return mlcc_ok_status();
  if (n_data == 1 || dtype != out->dtype) {
    if (n_data != 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s value is %s but output is %s",
                              mlcc_op_name(node->op), mlcc_dtype_name(dtype),
                              mlcc_dtype_name(out->dtype));
    }
    LLVMValueRef v = scalar_from_bytes(ctx, out->dtype, dtype, data);
    mlcc_loop_t loop = mlcc_emit_for(ctx, 0, n, "fill");
    mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, loop.iv, v);
    mlcc_emit_loop_end(ctx, &loop);
    return st;
  }
  if (n_data != n) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s value has %lld elements, output %lld",
                            mlcc_op_name(node->op), (long long)n_data, (long long)n);
  }
  size_t bytes = 0;
  if (!mlcc_checked_mul_size((size_t)n, mlcc_dtype_size(dtype), &bytes) || bytes > (1u << 30)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s value too large",
                            mlcc_op_name(node->op));
  }
  LLVMValueRef init = LLVMConstStringInContext(ctx->llctx, data, (unsigned)bytes, 1);
  LLVMValueRef g = LLVMAddGlobal(ctx->module, LLVMTypeOf(init), "mlcc.const");
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddr(g, 1);
  LLVMSetAlignment(g, 16);
  LLVMTypeRef st_ty = mlcc_emit_storage_type(ctx, dtype);
  mlcc_loop_t loop = mlcc_emit_for(ctx, 0, n, "const");
  LLVMValueRef iv = loop.iv;
  LLVMValueRef v = mlcc_emit_load_elem(
      ctx, dtype, LLVMBuildInBoundsGEP2(ctx->b, st_ty, g, &iv, 1, "tp"));
  mlcc_status_t s = mlcc_emit_store_output(ctx, node, 0, loop.iv, v);
  mlcc_emit_loop_end(ctx, &loop);
  return s;
}

// Constant (value tensor or value_float(s)/value_int(s)) and ConstantOfShape
// (value attribute, default float 0). Payloads become private constant data.
static mlcc_status_t emit_constant(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, out->dtype));
  if (node->op == MLCC_OP_CONSTANT_OF_SHAPE) {
    const mlcc_attr_t* a = mlcc_node_attr(node, "value");
    if (a == NULL) {
      float zero = 0.0f;
      return fill_from_bytes(ctx, node, out, MLCC_DTYPE_F32, &zero, 1);
    }
    if (a->kind != MLCC_ATTR_TENSOR || a->t_data == NULL || numel_of(&a->t_shape) != 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "ConstantOfShape 'value' must be a one-element tensor");
    }
    return fill_from_bytes(ctx, node, out, a->t_dtype, a->t_data, 1);
  }
  // Constant: value (tensor), value_float(s), value_int(s).
  for (uint32_t i = 0; i < node->n_attrs; ++i) {
    const mlcc_attr_t* a = &node->attrs[i];
    if (strcmp(a->name, "value") == 0 && a->kind == MLCC_ATTR_TENSOR) {
      if (a->t_data == NULL && numel_of(&a->t_shape) != 0) break;
      return fill_from_bytes(ctx, node, out, a->t_dtype, a->t_data, numel_of(&a->t_shape));
    }
    if (strcmp(a->name, "value_float") == 0 && a->kind == MLCC_ATTR_FLOAT) {
      return fill_from_bytes(ctx, node, out, MLCC_DTYPE_F32, &a->f, 1);
    }
    if (strcmp(a->name, "value_int") == 0 && a->kind == MLCC_ATTR_INT) {
      return fill_from_bytes(ctx, node, out, MLCC_DTYPE_I64, &a->i, 1);
    }
    if (strcmp(a->name, "value_floats") == 0 && a->kind == MLCC_ATTR_FLOATS) {
      return fill_from_bytes(ctx, node, out, MLCC_DTYPE_F32, a->floats, a->count);
    }
    if (strcmp(a->name, "value_ints") == 0 && a->kind == MLCC_ATTR_INTS) {
      return fill_from_bytes(ctx, node, out, MLCC_DTYPE_I64, a->ints, a->count);
    }
  }
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                          "Constant needs a 'value' tensor or value_float(s)/value_int(s)");
}

// Range: out[i] = start + i*delta with constant start/delta.
static mlcc_status_t emit_range(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  MLCC_RETURN_IF_ERROR(need_value(node, out, "output 0"));
  MLCC_RETURN_IF_ERROR(check_type(ctx, node, out->dtype));
  const mlcc_value_t* vs = mlcc_node_input(node, 0);
  const mlcc_value_t* vd = mlcc_node_input(node, 2);
  MLCC_RETURN_IF_ERROR(need_value(node, vs, "'start'"));
  MLCC_RETURN_IF_ERROR(need_value(node, vd, "'delta'"));
  MLCC_RETURN_IF_ERROR(need_const(node, vs, "'start'"));
  MLCC_RETURN_IF_ERROR(need_const(node, vd, "'delta'"));
  if (numel_of(&vs->shape) != 1 || numel_of(&vd->shape) != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Range start/delta must be scalars");
  }
  const int64_t n = numel_of(&out->shape);
  if (n == 0) return mlcc_ok_status();
  const mlcc_dtype_t dt = out->dtype;
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef start = scalar_from_bytes(ctx, dt, vs->dtype, vs->data);
  LLVMValueRef delta = scalar_from_bytes(ctx, dt, vd->dtype, vd->data);
  mlcc_loop_t loop = mlcc_emit_for(ctx, 0, n, "range");
  LLVMValueRef v;
  if (is_float_dt(dt)) {
    LLVMValueRef fi = mlcc_emit_convert(ctx, loop.iv, MLCC_DTYPE_I64, dt);
    v = LLVMBuildFAdd(b, start, LLVMBuildFMul(b, fi, delta, "m"), "v");
  } else if (mlcc_dtype_is_int(dt)) {
    LLVMValueRef ii = mlcc_emit_convert(ctx, loop.iv, MLCC_DTYPE_I64, dt);
    v = LLVMBuildAdd(b, start, LLVMBuildMul(b, ii, delta, "m"), "v");
  } else {
    mlcc_emit_loop_end(ctx, &loop);
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "Range of dtype %s", mlcc_dtype_name(dt));
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, loop.iv, v);
  mlcc_emit_loop_end(ctx, &loop);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_copy = {.emit = emit_copy};
const mlcc_emitter_t mlcc_emit_dropout = {.emit = emit_dropout};
const mlcc_emitter_t mlcc_emit_concat = {.emit = emit_concat};
const mlcc_emitter_t mlcc_emit_split = {.emit = emit_split};
const mlcc_emitter_t mlcc_emit_slice = {.emit = emit_slice};
const mlcc_emitter_t mlcc_emit_gather = {.emit = emit_gather};
const mlcc_emitter_t mlcc_emit_gather_elements = {.emit = emit_gather_elements};
const mlcc_emitter_t mlcc_emit_transpose = {.emit = emit_transpose};
const mlcc_emitter_t mlcc_emit_expand = {.emit = emit_expand};
const mlcc_emitter_t mlcc_emit_tile = {.emit = emit_tile};
const mlcc_emitter_t mlcc_emit_pad = {.emit = emit_pad};
const mlcc_emitter_t mlcc_emit_center_crop_pad = {.emit = emit_center_crop_pad};
const mlcc_emitter_t mlcc_emit_resize = {.emit = emit_resize};
const mlcc_emitter_t mlcc_emit_shape = {.emit = emit_shape};
const mlcc_emitter_t mlcc_emit_constant = {.emit = emit_constant};
const mlcc_emitter_t mlcc_emit_range = {.emit = emit_range};

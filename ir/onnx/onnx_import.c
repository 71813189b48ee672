// SPDX-License-Identifier: Apache-2.0
// ONNX model import: decodes a ModelProto with protobuf-c (our own schema in
// onnx.proto) and builds an mlcc_graph_t. Tensor decoding and external data
// live in onnx_tensor.c (shared with mlcc_onnx_read_tensor_file).
#include "ir/onnx/onnx_import.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ir/base/checked_math.h"
#include "ir/onnx/onnx.pb-c.h"
#include "ir/onnx/functions.h"
#include "ir/onnx/onnx_import_impl.h"
#include "ir/onnx/legacy.h"
#include "ir/subgraph.h"

// The unsupported-op list stops after this many entries ("... and N more"):
// a model of ten thousand custom ops must not give a megabyte message.
#define MLCC_ONNX_MAX_LISTED_OPS 64

//===----------------------------------------------------------------------===//
// Opset imports
//===----------------------------------------------------------------------===//

typedef struct onnx_opset_t {
  const char* domain;  // "" for the default domain (ai.onnx folded in)
  int32_t version;
} onnx_opset_t;

typedef struct import_ctx_t {
  mlcc_onnx_tensor_ctx_t tensor;  // file/dir/arena/limits for tensor decoding
  const mlcc_onnx_import_options_t* options;
  const MlccOnnx__ModelProto* model;
  const MlccOnnx__GraphProto* onnx_graph;
  mlcc_graph_t* graph;
  onnx_opset_t* opsets;  // malloc'ed
  size_t n_opsets;
  // Per node of onnx_graph, the opset its function body binds it to (0 or
  // NULL: the model's opset_import); set when local functions were inlined.
  const int32_t* node_opsets;
  const MlccOnnx__TensorProto** inits_sorted;  // malloc'ed, by name
  // Subgraph conversion: the scope whose nodes' attributes are being
  // converted (NULL: the main graph) and the current nesting depth.
  struct sg_scope_t* scope;
  int depth;
} import_ctx_t;

static const char* canonical_domain(const char* domain) {
  if (domain == NULL || strcmp(domain, "ai.onnx") == 0) return "";
  return domain;
}

static const char* str_or_empty(const char* s) { return s ? s : ""; }

static mlcc_status_t oom(const char* what) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory %s", what);
}

// Builds ctx->opsets from model->opset_import. Two imports of one domain with
// different versions are INVALID_MODEL (which would the nodes use?).
static mlcc_status_t read_opsets(import_ctx_t* ctx) {
  const MlccOnnx__ModelProto* m = ctx->model;
  if (m->n_opset_import == 0) return mlcc_ok_status();
  ctx->opsets = (onnx_opset_t*)calloc(m->n_opset_import, sizeof(onnx_opset_t));
  if (ctx->opsets == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory reading opsets");
  }
  for (size_t i = 0; i < m->n_opset_import; ++i) {
    const MlccOnnx__OperatorSetIdProto* op = m->opset_import[i];
    const char* domain = canonical_domain(op->domain);
    if (!op->has_version || op->version <= 0 || op->version > INT32_MAX) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "opset_import #%zu (domain '%s') has invalid version %" PRId64,
                              i, domain, op->has_version ? op->version : (int64_t)0);
    }
    bool dup = false;
    for (size_t j = 0; j < ctx->n_opsets; ++j) {
      if (strcmp(ctx->opsets[j].domain, domain) != 0) continue;
      if (ctx->opsets[j].version != (int32_t)op->version) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "opset_import lists domain '%s' twice, with versions %d and "
                                "%" PRId64, domain, ctx->opsets[j].version, op->version);
      }
      dup = true;
    }
    if (dup) continue;
    ctx->opsets[ctx->n_opsets].domain = domain;
    ctx->opsets[ctx->n_opsets].version = (int32_t)op->version;
    ctx->n_opsets++;
  }
  return mlcc_ok_status();
}

// Opset of |domain| or 0 when the model imports none.
static int32_t opset_of(const import_ctx_t* ctx, const char* domain) {
  domain = canonical_domain(domain);
  for (size_t i = 0; i < ctx->n_opsets; ++i) {
    if (strcmp(ctx->opsets[i].domain, domain) == 0) return ctx->opsets[i].version;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Growable message buffer (for the one UNIMPLEMENTED status listing all ops)
//===----------------------------------------------------------------------===//

typedef struct strbuf_t {
  char* data;
  size_t len, cap;
  bool oom;
} strbuf_t;

static void strbuf_printf(strbuf_t* sb, const char* fmt, ...) MLCC_PRINTF(2, 3);
static void strbuf_printf(strbuf_t* sb, const char* fmt, ...) {
  if (sb->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t need = sb->len + (size_t)n + 1;
  if (need > sb->cap) {
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < need) cap *= 2;
    char* p = (char*)realloc(sb->data, cap);
    if (p == NULL) {
      sb->oom = true;
      return;
    }
    sb->data = p;
    sb->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

//===----------------------------------------------------------------------===//
// Node pre-scan: every unsupported op in one status
//===----------------------------------------------------------------------===//

static mlcc_status_t node_error(size_t index, const MlccOnnx__NodeProto* n, int32_t opset,
                                mlcc_status_t status) {
  return mlcc_status_annotate(status, "node #%zu '%s' (%s, opset %d)", index,
                              str_or_empty(n->name), str_or_empty(n->op_type), opset);
}

static bool is_constant_node(const MlccOnnx__NodeProto* n) {
  return canonical_domain(n->domain)[0] == '\0' && n->op_type != NULL &&
         strcmp(n->op_type, "Constant") == 0;
}

// Resolves every node's op. Fills |ops| (one per node). Structural errors
// (no op_type, no opset for the domain) are INVALID_MODEL for the first such
// node; unsupported ops are collected into one UNIMPLEMENTED status.
static mlcc_status_t prescan_nodes(import_ctx_t* ctx, mlcc_op_t* ops, int32_t* opsets) {
  const MlccOnnx__GraphProto* g = ctx->onnx_graph;
  strbuf_t sb = {0};
  size_t n_bad = 0;
  for (size_t i = 0; i < g->n_node; ++i) {
    const MlccOnnx__NodeProto* n = g->node[i];
    const char* domain = canonical_domain(n->domain);
    if (n->op_type == NULL || n->op_type[0] == '\0') {
      free(sb.data);
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "node #%zu '%s' has no op_type", i,
                              str_or_empty(n->name));
    }
    int32_t opset = ctx->node_opsets && ctx->node_opsets[i] ? ctx->node_opsets[i]
                                                            : opset_of(ctx, domain);
    if (opset == 0) {
      free(sb.data);
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "node #%zu '%s' (%s): the model has no opset_import for "
                              "domain '%s'", i, str_or_empty(n->name), n->op_type,
                              domain[0] ? domain : "ai.onnx");
    }
    opsets[i] = opset;
    mlcc_op_t op = MLCC_OP_COUNT;
    mlcc_op_lookup_t r = mlcc_op_lookup(domain, n->op_type, opset, &op);
    ops[i] = op;
    if (r == MLCC_OP_LOOKUP_OK) continue;
    if (n_bad < MLCC_ONNX_MAX_LISTED_OPS) {
      strbuf_printf(&sb, "%s'%s' (node #%zu '%s', ", n_bad ? ", " : "", n->op_type, i,
                    str_or_empty(n->name));
      if (domain[0] != '\0') strbuf_printf(&sb, "domain '%s', ", domain);
      strbuf_printf(&sb, "opset %d", opset);
      if (r == MLCC_OP_LOOKUP_BAD_OPSET && op < MLCC_OP_COUNT) {
        const mlcc_op_desc_t* d = mlcc_op_desc(op);
        strbuf_printf(&sb, ", supported opsets %d-%d", d->opset_min, d->opset_max);
      }
      strbuf_printf(&sb, ")");
    }
    n_bad++;
  }
  if (n_bad == 0) {
    free(sb.data);
    return mlcc_ok_status();
  }
  if (n_bad > MLCC_ONNX_MAX_LISTED_OPS) {
    strbuf_printf(&sb, ", and %zu more", n_bad - MLCC_ONNX_MAX_LISTED_OPS);
  }
  mlcc_status_t s;
  if (sb.oom || sb.data == NULL) {
    s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "the model uses %zu unsupported operator%s",
                         n_bad, n_bad == 1 ? "" : "s");
  } else {
    s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "the model uses %zu unsupported operator%s: %s",
                         n_bad, n_bad == 1 ? "" : "s", sb.data);
  }
  free(sb.data);
  return s;
}

//===----------------------------------------------------------------------===//
// Graph inputs
//===----------------------------------------------------------------------===//

static int cmp_init_name(const void* a, const void* b) {
  const MlccOnnx__TensorProto* x = *(const MlccOnnx__TensorProto* const*)a;
  const MlccOnnx__TensorProto* y = *(const MlccOnnx__TensorProto* const*)b;
  int c = strcmp(str_or_empty(x->name), str_or_empty(y->name));
  if (c != 0) return c;
  return x < y ? -1 : x > y;  // deterministic: first in file order first
}

// Sorts the initializers by name so inputs can find theirs in O(log n)
// (IR 3 models list every weight as an input).
static mlcc_status_t index_initializers(import_ctx_t* ctx) {
  const MlccOnnx__GraphProto* g = ctx->onnx_graph;
  if (g->n_initializer == 0) return mlcc_ok_status();
  ctx->inits_sorted = (const MlccOnnx__TensorProto**)malloc(
      g->n_initializer * sizeof(MlccOnnx__TensorProto*));
  if (ctx->inits_sorted == NULL) return oom("indexing initializers");
  // The proto's array is in file order, so pointer order is file order.
  memcpy(ctx->inits_sorted, g->initializer, g->n_initializer * sizeof(MlccOnnx__TensorProto*));
  qsort(ctx->inits_sorted, g->n_initializer, sizeof(MlccOnnx__TensorProto*), cmp_init_name);
  return mlcc_ok_status();
}

// The first initializer named |name| in file order, or NULL.
static const MlccOnnx__TensorProto* find_initializer(const import_ctx_t* ctx,
                                                     const char* name) {
  size_t lo = 0, hi = ctx->inits_sorted ? ctx->onnx_graph->n_initializer : 0;
  while (lo < hi) {  // lower bound
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(str_or_empty(ctx->inits_sorted[mid]->name), name) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < (ctx->inits_sorted ? ctx->onnx_graph->n_initializer : 0) &&
      strcmp(str_or_empty(ctx->inits_sorted[lo]->name), name) == 0) {
    return ctx->inits_sorted[lo];
  }
  return NULL;
}

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

// Dtype and shape of graph input |vi|. |init| is its initializer or NULL.
static mlcc_status_t input_type(import_ctx_t* ctx, const MlccOnnx__ValueInfoProto* vi,
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
                            "graph input '%s' has element type %s, which mlcc does not support",
                            name, mlcc_onnx_elem_type_name(et));
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
static mlcc_status_t check_input_size(const char* name, const mlcc_shape_t* shape) {
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
static mlcc_status_t check_option_names(import_ctx_t* ctx) {
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

static const mlcc_input_value_t* find_binding(const mlcc_onnx_import_options_t* o,
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

// Adds graph input |vi| bound by |bv| as a CONSTANT (see mlcc_input_value_t).
static mlcc_status_t add_bound_input(import_ctx_t* ctx, const MlccOnnx__ValueInfoProto* vi,
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
                            "graph input '%s' has element type %s, which mlcc does not support",
                            vi->name, mlcc_onnx_elem_type_name((int)declared));
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
    MLCC_RETURN_IF_ERROR(check_input_size(vi->name, &bv->shape));
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

// Adds graph inputs, then initializers that are not inputs (as CONSTANTs).
// From IR version 4 on, an initializer that is also a graph input is only a
// default: the fed value wins, so the value stays an INPUT. Before IR 4 every
// initializer had to be listed among the inputs, so there a listed
// initializer is a CONSTANT (and not an input of the compiled function).
static mlcc_status_t add_inputs_and_initializers(import_ctx_t* ctx) {
  const MlccOnnx__GraphProto* g = ctx->onnx_graph;
  mlcc_graph_t* graph = ctx->graph;
  bool legacy = ctx->model->has_ir_version && ctx->model->ir_version < 4;
  graph->inputs = (mlcc_value_t**)mlcc_arena_alloc(
      &graph->arena, (g->n_input ? g->n_input : 1) * sizeof(mlcc_value_t*),
      _Alignof(mlcc_value_t*));
  if (graph->inputs == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory adding inputs");
  }
  graph->n_inputs = 0;
  MLCC_RETURN_IF_ERROR(check_option_names(ctx));
  for (size_t i = 0; i < g->n_input; ++i) {
    const MlccOnnx__ValueInfoProto* vi = g->input[i];
    if (vi->name == NULL || vi->name[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph input #%zu has no name", i);
    }
    const mlcc_input_value_t* bv = find_binding(ctx->options, vi->name);
    if (bv != NULL) {
      if (mlcc_graph_find_value(graph, vi->name) != NULL) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph input '%s' is listed twice",
                                vi->name);
      }
      MLCC_RETURN_IF_ERROR(add_bound_input(ctx, vi, bv));
      continue;
    }
    const MlccOnnx__TensorProto* init = find_initializer(ctx, vi->name);
    if (init != NULL && legacy) continue;  // added below as a CONSTANT
    mlcc_dtype_t dtype = MLCC_DTYPE_UNDEFINED;
    mlcc_shape_t shape;
    memset(&shape, 0, sizeof(shape));
    MLCC_RETURN_IF_ERROR(input_type(ctx, vi, init, &dtype, &shape));
    MLCC_RETURN_IF_ERROR(check_input_size(vi->name, &shape));
    if (mlcc_graph_find_value(graph, vi->name) != NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph input '%s' is listed twice",
                              vi->name);
    }
    mlcc_value_t* v = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_graph_add_value(graph, vi->name, MLCC_VALUE_INPUT, &v));
    v->dtype = dtype;
    v->shape = shape;
    v->shape_known = true;
    graph->inputs[graph->n_inputs++] = v;
  }
  for (size_t i = 0; i < g->n_initializer; ++i) {
    const MlccOnnx__TensorProto* t = g->initializer[i];
    if (t->name == NULL || t->name[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "initializer #%zu has no name", i);
    }
    mlcc_value_t* existing = mlcc_graph_find_value(graph, t->name);
    if (existing != NULL) {
      bool default_of_input = existing->kind == MLCC_VALUE_INPUT ||
                              (existing->kind == MLCC_VALUE_CONSTANT &&
                               find_binding(ctx->options, t->name) != NULL);
      if (default_of_input && find_initializer(ctx, t->name) == t) {
        // A fed input with this default. Still validate the default's data
        // so a broken file is reported, not silently accepted.
        mlcc_onnx_tensor_t dec;
        MLCC_RETURN_IF_ERROR(mlcc_onnx_decode_tensor(&ctx->tensor, t, "initializer", &dec));
        continue;
      }
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "initializer '%s' is defined twice",
                              t->name);
    }
    mlcc_onnx_tensor_t dec;
    MLCC_RETURN_IF_ERROR(mlcc_onnx_decode_tensor(&ctx->tensor, t, "initializer", &dec));
    mlcc_value_t* cv = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_graph_add_constant(graph, t->name, dec.dtype, &dec.shape,
                                                 dec.data, false, &cv));
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Attributes and Constant nodes
//===----------------------------------------------------------------------===//

static const char* attr_type_name(int t) {
  switch (t) {
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "FLOAT";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "INT";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "STRING";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "FLOATS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "INTS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

// The attribute's declared type; very old files omit |type|, so it is then
// inferred from which field is set.
static int attr_type(const MlccOnnx__AttributeProto* a) {
  if (a->has_type && a->type != MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
    return a->type;
  }
  if (a->n_floats) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  if (a->n_strings) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  if (a->t) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->has_g) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  if (a->has_s) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  if (a->has_f) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static mlcc_status_t convert_graph_attr(import_ctx_t* ctx, const MlccOnnx__AttributeProto* a,
                                        const mlcc_subgraph_t** out_sg);

// Converts one attribute into |out| with arena-owned arrays. A GRAPH
// attribute becomes a subgraph template resolved against ctx->scope.
static mlcc_status_t convert_attr(import_ctx_t* ctx, const MlccOnnx__AttributeProto* a,
                                  mlcc_attr_t* out) {
  mlcc_arena_t* arena = &ctx->graph->arena;
  memset(out, 0, sizeof(*out));
  if (a->name == NULL || a->name[0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "an attribute has no name");
  }
  out->name = mlcc_arena_strdup(arena, a->name);
  if (out->name == NULL) return oom("copying an attribute name");
  if (a->ref_attr_name != NULL && a->ref_attr_name[0] != '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "attribute '%s' refers to function attribute '%s' outside a "
                            "function body", a->name, a->ref_attr_name);
  }
  int t = attr_type(a);
  switch (t) {
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
      out->kind = MLCC_ATTR_FLOAT;
      out->f = a->f;
      return mlcc_ok_status();
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
      out->kind = MLCC_ATTR_INT;
      out->i = a->i;
      return mlcc_ok_status();
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
      out->kind = MLCC_ATTR_STRING;
      out->s = mlcc_arena_strndup(arena, (const char*)a->s.data, a->s.len);
      out->s_len = a->s.len;
      if (out->s == NULL) return oom("copying a string attribute");
      return mlcc_ok_status();
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
      if (a->n_floats > UINT32_MAX) break;
      out->kind = MLCC_ATTR_FLOATS;
      out->count = (uint32_t)a->n_floats;
      float* f = (float*)mlcc_arena_alloc(arena, a->n_floats * sizeof(float), _Alignof(float));
      if (f == NULL) return oom("copying a FLOATS attribute");
      if (a->n_floats) memcpy(f, a->floats, a->n_floats * sizeof(float));
      out->floats = f;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: {
      if (a->n_ints > UINT32_MAX) break;
      out->kind = MLCC_ATTR_INTS;
      out->count = (uint32_t)a->n_ints;
      int64_t* v =
          (int64_t*)mlcc_arena_alloc(arena, a->n_ints * sizeof(int64_t), _Alignof(int64_t));
      if (v == NULL) return oom("copying an INTS attribute");
      if (a->n_ints) memcpy(v, a->ints, a->n_ints * sizeof(int64_t));
      out->ints = v;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
      if (a->n_strings > UINT32_MAX) break;
      out->kind = MLCC_ATTR_STRINGS;
      out->count = (uint32_t)a->n_strings;
      const char** v = (const char**)mlcc_arena_alloc(
          arena, a->n_strings * sizeof(char*), _Alignof(char*));
      if (v == NULL) return oom("copying a STRINGS attribute");
      for (size_t i = 0; i < a->n_strings; ++i) {
        v[i] = mlcc_arena_strndup(arena, (const char*)a->strings[i].data, a->strings[i].len);
        if (v[i] == NULL) return oom("copying a STRINGS attribute");
      }
      out->strings = v;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
      if (a->t == NULL) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "attribute '%s' is a TENSOR but has no tensor", a->name);
      }
      mlcc_onnx_tensor_t dec;
      mlcc_status_t s = mlcc_onnx_decode_tensor(&ctx->tensor, a->t, "tensor", &dec);
      if (!mlcc_status_is_ok(s)) return mlcc_status_annotate(s, "attribute '%s'", a->name);
      out->kind = MLCC_ATTR_TENSOR;
      out->t_dtype = dec.dtype;
      out->t_shape = dec.shape;
      out->t_data = dec.data;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: {
      const mlcc_subgraph_t* sg = NULL;
      mlcc_status_t s = convert_graph_attr(ctx, a, &sg);
      if (!mlcc_status_is_ok(s)) return mlcc_status_annotate(s, "attribute '%s'", a->name);
      out->kind = MLCC_ATTR_GRAPH;
      out->g = sg;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED:
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "attribute '%s' has no type or value",
                              a->name);
    default:
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "attribute '%s' has type %s, which mlcc does not support%s",
                              a->name, attr_type_name(t),
                              t == MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS
                                  ? " (lists of subgraphs)"
                                  : "");
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "attribute '%s' has too many values",
                          a->name);
}

// Decodes a Constant node's one attribute into a tensor whose bytes are
// arena-owned or borrowed from the model (both live as long as the graph).
// INVALID_MODEL for a malformed node, UNIMPLEMENTED for string and sparse
// constants.
static mlcc_status_t decode_constant_node(import_ctx_t* ctx, const MlccOnnx__NodeProto* n,
                                          mlcc_onnx_tensor_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_arena_t* arena = &ctx->graph->arena;
  if (n->n_output != 1 || n->output[0] == NULL || n->output[0][0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "a Constant node must have exactly one named output");
  }
  size_t n_inputs = 0;
  for (size_t i = 0; i < n->n_input; ++i) n_inputs += str_or_empty(n->input[i])[0] != '\0';
  if (n_inputs != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "a Constant node takes no inputs");
  }
  if (n->n_attribute != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "a Constant node must have exactly one attribute (it has %zu)",
                            n->n_attribute);
  }
  const MlccOnnx__AttributeProto* a = n->attribute[0];
  const char* an = str_or_empty(a->name);
  int t = attr_type(a);
  int expect_type = 0;
  if (strcmp(an, "value") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (t != expect_type || a->t == NULL) goto wrong_type;
    mlcc_status_t s = mlcc_onnx_decode_tensor(&ctx->tensor, a->t, "tensor", out);
    if (!mlcc_status_is_ok(s)) return mlcc_status_annotate(s, "attribute 'value'");
    return mlcc_ok_status();
  }
  size_t count = 1, elem = 0;
  const void* src = NULL;
  out->shape.rank = 0;
  if (strcmp(an, "value_float") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (t != expect_type) goto wrong_type;
    out->dtype = MLCC_DTYPE_F32;
    elem = sizeof(float);
    src = &a->f;
  } else if (strcmp(an, "value_int") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (t != expect_type) goto wrong_type;
    out->dtype = MLCC_DTYPE_I64;
    elem = sizeof(int64_t);
    src = &a->i;
  } else if (strcmp(an, "value_floats") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (t != expect_type && !(a->n_floats == 0 && !a->has_type)) goto wrong_type;
    out->dtype = MLCC_DTYPE_F32;
    out->shape.rank = 1;
    out->shape.dims[0] = (int64_t)a->n_floats;
    count = a->n_floats;
    elem = sizeof(float);
    src = a->floats;
  } else if (strcmp(an, "value_ints") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (t != expect_type && !(a->n_ints == 0 && !a->has_type)) goto wrong_type;
    out->dtype = MLCC_DTYPE_I64;
    out->shape.rank = 1;
    out->shape.dims[0] = (int64_t)a->n_ints;
    count = a->n_ints;
    elem = sizeof(int64_t);
    src = a->ints;
  } else if (strcmp(an, "value_string") == 0 || strcmp(an, "value_strings") == 0 ||
             strcmp(an, "sparse_value") == 0) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Constant attribute '%s' is not supported (string and sparse "
                            "constants)", an);
  } else {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Constant has unknown attribute '%s'",
                            an);
  }
  // protobuf-c caps repeated fields far below SIZE_MAX / 8; the arena checks too.
  void* data = mlcc_arena_alloc(arena, count * elem, 64);
  if (data == NULL) return oom("copying a Constant");
  if (count != 0) memcpy(data, src, count * elem);
  out->data = data;
  out->size = count * elem;
  return mlcc_ok_status();
wrong_type:
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "Constant attribute '%s' has type %s, expected %s", an,
                          attr_type_name(t), attr_type_name(expect_type));
}

// A Constant node becomes a CONSTANT value named by its output.
static mlcc_status_t add_constant_node(import_ctx_t* ctx, const MlccOnnx__NodeProto* n) {
  mlcc_onnx_tensor_t dec;
  MLCC_RETURN_IF_ERROR(decode_constant_node(ctx, n, &dec));
  const char* out_name = n->output[0];
  if (mlcc_graph_find_value(ctx->graph, out_name) != NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "output '%s' is already defined",
                            out_name);
  }
  mlcc_value_t* cv = NULL;  // out param of mlcc_graph_add_constant (unused)
  return mlcc_graph_add_constant(ctx->graph, out_name, dec.dtype, &dec.shape, dec.data, false,
                                 &cv);
}

//===----------------------------------------------------------------------===//
// Subgraphs (GRAPH attributes: the bodies of If, Loop and Scan)
//===----------------------------------------------------------------------===//

// Most values (formal inputs + constants + node outputs) one subgraph may
// define; slots are int32 and a bigger body is not a real model.
#define MLCC_ONNX_MAX_SUBGRAPH_VALUES (1u << 24)

typedef struct sg_name_t {
  const char* name;
  int32_t slot;
} sg_name_t;

// One subgraph being converted: the names it defines and the values of
// enclosing scopes it reads (captures). |parent| NULL: the enclosing scope
// is the main graph.
typedef struct sg_scope_t {
  struct sg_scope_t* parent;
  sg_name_t* local;            // malloc'ed, sorted by name
  size_t n_local;
  uint32_t first_capture;      // slot of capture 0
  const char** cap_names;      // malloc'ed; arena-owned strings
  int32_t* cap_parent_slots;   // malloc'ed; parent != NULL
  mlcc_value_t** cap_values;   // malloc'ed; parent == NULL
  uint32_t n_caps, caps_cap;
  uint32_t* cap_hash;          // open addressing: capture index + 1, 0 = empty
  uint32_t hash_cap;           // 0 or a power of two > 2 * n_caps
} sg_scope_t;

static void sg_scope_deinit(sg_scope_t* sc) {
  free(sc->local);
  free(sc->cap_names);
  free(sc->cap_parent_slots);
  free(sc->cap_values);
  free(sc->cap_hash);
}

static uint32_t sg_hash(const char* s) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (; *s; ++s) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static int cmp_sg_name(const void* a, const void* b) {
  return strcmp(((const sg_name_t*)a)->name, ((const sg_name_t*)b)->name);
}

static int32_t sg_find_local(const sg_scope_t* sc, const char* name) {
  size_t lo = 0, hi = sc->n_local;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(sc->local[mid].name, name);
    if (c == 0) return sc->local[mid].slot;
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

static int32_t sg_find_capture(const sg_scope_t* sc, const char* name) {
  if (sc->hash_cap == 0) return -1;
  for (uint32_t h = sg_hash(name) & (sc->hash_cap - 1);; h = (h + 1) & (sc->hash_cap - 1)) {
    uint32_t e = sc->cap_hash[h];
    if (e == 0) return -1;
    if (strcmp(sc->cap_names[e - 1], name) == 0) return (int32_t)(sc->first_capture + e - 1);
  }
}

static void sg_hash_insert(sg_scope_t* sc, uint32_t index) {
  uint32_t h = sg_hash(sc->cap_names[index]) & (sc->hash_cap - 1);
  while (sc->cap_hash[h] != 0) h = (h + 1) & (sc->hash_cap - 1);
  sc->cap_hash[h] = index + 1;
}

// Appends capture |name| (bound to the parent's |parent_slot| or to main
// graph value |value|) and returns its slot.
static mlcc_status_t sg_add_capture(import_ctx_t* ctx, sg_scope_t* sc, const char* name,
                                    int32_t parent_slot, mlcc_value_t* value,
                                    int32_t* out_slot) {
  *out_slot = -1;
  if (sc->first_capture + sc->n_caps >= MLCC_ONNX_MAX_SUBGRAPH_VALUES * 2u) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "the subgraph reads too many outer-scope values");
  }
  if (sc->n_caps == sc->caps_cap) {
    uint32_t cap = sc->caps_cap ? sc->caps_cap * 2 : 8;
    const char** names = (const char**)realloc(sc->cap_names, cap * sizeof(char*));
    if (names == NULL) return oom("capturing an outer-scope value");
    sc->cap_names = names;
    int32_t* slots = (int32_t*)realloc(sc->cap_parent_slots, cap * sizeof(int32_t));
    if (slots == NULL) return oom("capturing an outer-scope value");
    sc->cap_parent_slots = slots;
    mlcc_value_t** values = (mlcc_value_t**)realloc(sc->cap_values, cap * sizeof(void*));
    if (values == NULL) return oom("capturing an outer-scope value");
    sc->cap_values = values;
    sc->caps_cap = cap;
  }
  if (2 * (sc->n_caps + 1) >= sc->hash_cap) {
    uint32_t hcap = sc->hash_cap ? sc->hash_cap * 2 : 32;
    uint32_t* table = (uint32_t*)calloc(hcap, sizeof(uint32_t));
    if (table == NULL) return oom("capturing an outer-scope value");
    free(sc->cap_hash);
    sc->cap_hash = table;
    sc->hash_cap = hcap;
    for (uint32_t i = 0; i < sc->n_caps; ++i) sg_hash_insert(sc, i);
  }
  const char* copy = mlcc_arena_strdup(&ctx->graph->arena, name);
  if (copy == NULL) return oom("capturing an outer-scope value");
  uint32_t k = sc->n_caps++;
  sc->cap_names[k] = copy;
  sc->cap_parent_slots[k] = parent_slot;
  sc->cap_values[k] = value;
  sg_hash_insert(sc, k);
  *out_slot = (int32_t)(sc->first_capture + k);
  return mlcc_ok_status();
}

// Resolves |name| as seen from |sc|: one of its own slots, an existing
// capture, or a new capture of a value some enclosing scope defines (every
// scope in between captures it too). |*out_slot| is -1 if no scope has it.
static mlcc_status_t sg_resolve(import_ctx_t* ctx, sg_scope_t* sc, const char* name,
                                int32_t* out_slot) {
  *out_slot = sg_find_local(sc, name);
  if (*out_slot >= 0) return mlcc_ok_status();
  *out_slot = sg_find_capture(sc, name);
  if (*out_slot >= 0) return mlcc_ok_status();
  int32_t parent_slot = -1;
  mlcc_value_t* value = NULL;
  if (sc->parent != NULL) {
    MLCC_RETURN_IF_ERROR(sg_resolve(ctx, sc->parent, name, &parent_slot));
    if (parent_slot < 0) return mlcc_ok_status();
  } else {
    value = mlcc_graph_find_value(ctx->graph, name);
    if (value == NULL) return mlcc_ok_status();
  }
  return sg_add_capture(ctx, sc, name, parent_slot, value, out_slot);
}

// A formal input/output's declared type. Types are optional in subgraphs
// (the operator's actual inputs decide), so a missing or non-tensor
// TypeProto leaves the dtype undefined.
static mlcc_status_t sg_value_info(import_ctx_t* ctx, const MlccOnnx__ValueInfoProto* vi,
                                   const char* what, size_t index,
                                   mlcc_subgraph_value_info_t* out) {
  memset(out, 0, sizeof(*out));
  if (vi->name == NULL || vi->name[0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "subgraph %s #%zu has no name", what,
                            index);
  }
  out->name = mlcc_arena_strdup(&ctx->graph->arena, vi->name);
  if (out->name == NULL) return oom("copying a subgraph name");
  out->dtype = MLCC_DTYPE_UNDEFINED;
  if (vi->type == NULL || vi->type->value_case != MLCC_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    return mlcc_ok_status();
  }
  const MlccOnnx__TypeProto__Tensor* tt = vi->type->tensor_type;
  if (tt->has_elem_type && tt->elem_type != 0) {
    if (!mlcc_dtype_is_valid((mlcc_dtype_t)tt->elem_type)) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "subgraph %s '%s' has element type %s, which mlcc does not "
                              "support", what, vi->name,
                              mlcc_onnx_elem_type_name(tt->elem_type));
    }
    out->dtype = (mlcc_dtype_t)tt->elem_type;
  }
  const MlccOnnx__TensorShapeProto* sp = tt->shape;
  if (sp == NULL || sp->n_dim > MLCC_MAX_RANK) return mlcc_ok_status();
  out->shape.rank = (int32_t)sp->n_dim;
  for (size_t d = 0; d < sp->n_dim; ++d) {
    if (sp->dim[d]->value_case != MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
        sp->dim[d]->dim_value < 0) {
      return mlcc_ok_status();
    }
    out->shape.dims[d] = sp->dim[d]->dim_value;
  }
  out->shape_static = true;
  return mlcc_ok_status();
}

// Copies |dec| (possibly borrowed from the subgraph's proto, which is freed
// after conversion) into an arena-owned constant.
static mlcc_status_t sg_add_const(import_ctx_t* ctx, const char* name,
                                  const mlcc_onnx_tensor_t* dec, mlcc_subgraph_const_t* out) {
  mlcc_arena_t* arena = &ctx->graph->arena;
  out->name = mlcc_arena_strdup(arena, name);
  void* data = mlcc_arena_alloc(arena, dec->size, 64);
  if (out->name == NULL || data == NULL) return oom("copying a subgraph constant");
  if (dec->size != 0) memcpy(data, dec->data, dec->size);
  out->dtype = dec->dtype;
  out->shape = dec->shape;
  out->data = data;
  return mlcc_ok_status();
}

// Orders |nodes| so that every node follows the producers of its inputs and
// of the values its own subgraphs capture from this one. INVALID_MODEL on a
// cycle. |first_node_slot|..|first_capture| are the node-output slots.
static mlcc_status_t sg_toposort(mlcc_subgraph_node_t* nodes, uint32_t n_nodes,
                                 uint32_t first_node_slot, uint32_t first_capture) {
  if (n_nodes == 0) return mlcc_ok_status();
  uint32_t n_outs = first_capture - first_node_slot;
  uint32_t* producer = (uint32_t*)malloc((n_outs ? n_outs : 1) * sizeof(uint32_t));
  uint32_t* indeg = (uint32_t*)calloc(n_nodes, sizeof(uint32_t));
  uint32_t* order = (uint32_t*)malloc(n_nodes * sizeof(uint32_t));
  mlcc_subgraph_node_t* sorted =
      (mlcc_subgraph_node_t*)malloc(n_nodes * sizeof(mlcc_subgraph_node_t));
  uint32_t* consumers = NULL;
  uint32_t* start = (uint32_t*)calloc((size_t)n_nodes + 1, sizeof(uint32_t));
  mlcc_status_t s = mlcc_ok_status();
  if (!producer || !indeg || !order || !sorted || !start) {
    s = oom("ordering a subgraph");
    goto done;
  }
  for (uint32_t j = 0; j < n_nodes; ++j) {
    for (uint32_t k = 0; k < nodes[j].n_outputs; ++k) {
      int32_t slot = nodes[j].outputs[k];
      if (slot >= 0) producer[(uint32_t)slot - first_node_slot] = j;
    }
  }
  // Two passes over every dependency edge (producer -> j): count, then fill.
  uint64_t n_edges = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t j = 0; j < n_nodes; ++j) {
      const mlcc_subgraph_node_t* n = &nodes[j];
      for (uint32_t a = 0; a <= n->n_attrs; ++a) {
        const int32_t* deps = n->inputs;
        uint32_t n_deps = n->n_inputs;
        if (a < n->n_attrs) {  // captures of a nested subgraph are dependencies too
          const mlcc_subgraph_t* g = n->attrs[a].kind == MLCC_ATTR_GRAPH ? n->attrs[a].g : NULL;
          if (g == NULL || g->parent_slots == NULL) continue;
          deps = g->parent_slots;
          n_deps = g->n_captures;
        }
        for (uint32_t k = 0; k < n_deps; ++k) {
          int32_t slot = deps[k];
          if (slot < (int32_t)first_node_slot || slot >= (int32_t)first_capture) continue;
          uint32_t p = producer[(uint32_t)slot - first_node_slot];
          if (pass == 0) {
            start[p + 1]++;
            indeg[j]++;
            n_edges++;
          } else {
            consumers[start[p]++] = j;
          }
        }
      }
    }
    if (pass == 0) {
      for (uint32_t j = 0; j < n_nodes; ++j) start[j + 1] += start[j];
      consumers = (uint32_t*)malloc((n_edges ? n_edges : 1) * sizeof(uint32_t));
      if (consumers == NULL) {
        s = oom("ordering a subgraph");
        goto done;
      }
    }
  }
  // After the fill pass start[p] is the end of p's list; the start is start[p - 1].
  uint32_t head = 0, tail = 0;
  for (uint32_t j = 0; j < n_nodes; ++j) {
    if (indeg[j] == 0) order[tail++] = j;
  }
  while (head < tail) {
    uint32_t p = order[head++];
    for (uint32_t e = p ? start[p - 1] : 0; e < start[p]; ++e) {
      if (--indeg[consumers[e]] == 0) order[tail++] = consumers[e];
    }
  }
  if (tail != n_nodes) {
    uint32_t j = 0;
    while (indeg[j] == 0) ++j;
    s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                         "the subgraph's nodes form a cycle through node '%s' (%s)",
                         nodes[j].name, mlcc_op_name(nodes[j].op));
    goto done;
  }
  for (uint32_t i = 0; i < n_nodes; ++i) sorted[i] = nodes[order[i]];
  memcpy(nodes, sorted, n_nodes * sizeof(mlcc_subgraph_node_t));
done:
  free(producer);
  free(indeg);
  free(order);
  free(sorted);
  free(consumers);
  free(start);
  return s;
}

// Converts the nodes of |gp| (all but Constant nodes) into |sg->nodes|,
// resolving every input through |sc| (ctx->scope is |sc| meanwhile, so
// nested subgraphs resolve against this one).
static mlcc_status_t sg_convert_nodes(import_ctx_t* ctx, const MlccOnnx__GraphProto* gp,
                                      sg_scope_t* sc, mlcc_subgraph_node_t* nodes,
                                      uint32_t first_node_slot) {
  mlcc_arena_t* arena = &ctx->graph->arena;
  uint32_t next_slot = first_node_slot, j = 0;
  for (size_t i = 0; i < gp->n_node; ++i) {
    const MlccOnnx__NodeProto* n = gp->node[i];
    if (is_constant_node(n)) continue;
    mlcc_subgraph_node_t* out = &nodes[j++];
    const char* domain = canonical_domain(n->domain);
    out->name = mlcc_arena_strdup(arena, str_or_empty(n->name));
    if (out->name == NULL) return oom("copying a subgraph node");
    int32_t opset = opset_of(ctx, domain);
    if (opset == 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "node #%zu '%s' (%s): the model has no opset_import for "
                              "domain '%s'", i, out->name, n->op_type,
                              domain[0] ? domain : "ai.onnx");
    }
    mlcc_op_lookup_t r = mlcc_op_lookup(domain, n->op_type, opset, &out->op);
    if (r != MLCC_OP_LOOKUP_OK) {
      if (r == MLCC_OP_LOOKUP_BAD_OPSET && out->op < MLCC_OP_COUNT) {
        const mlcc_op_desc_t* d = mlcc_op_desc(out->op);
        return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                "the model uses unsupported operator '%s' (node #%zu '%s', "
                                "opset %d, supported opsets %d-%d)", n->op_type, i,
                                out->name, opset, d->opset_min, d->opset_max);
      }
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "the model uses unsupported operator '%s' (node #%zu '%s', "
                              "%s%s%sopset %d)", n->op_type, i, out->name,
                              domain[0] ? "domain '" : "", domain, domain[0] ? "', " : "",
                              opset);
    }
    out->opset = opset;
    if (n->n_input > UINT32_MAX || n->n_output > UINT32_MAX || n->n_attribute > UINT32_MAX) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "node #%zu has too many inputs/outputs/attributes", i);
    }
    out->n_inputs = (uint32_t)n->n_input;
    out->n_outputs = (uint32_t)n->n_output;
    out->n_attrs = (uint32_t)n->n_attribute;
    int32_t* ins = (int32_t*)mlcc_arena_alloc(arena, n->n_input * sizeof(int32_t), 4);
    int32_t* outs = (int32_t*)mlcc_arena_alloc(arena, n->n_output * sizeof(int32_t), 4);
    mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
        arena, n->n_attribute * sizeof(mlcc_attr_t), _Alignof(mlcc_attr_t));
    if (ins == NULL || outs == NULL || attrs == NULL) return oom("copying a subgraph node");
    for (size_t k = 0; k < n->n_input; ++k) {
      const char* in = str_or_empty(n->input[k]);
      ins[k] = -1;
      if (in[0] == '\0') continue;  // omitted optional input
      MLCC_RETURN_IF_ERROR(sg_resolve(ctx, sc, in, &ins[k]));
      if (ins[k] < 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "node #%zu '%s' (%s): input '%s' is not defined in the "
                                "subgraph or an enclosing scope", i, out->name, n->op_type,
                                in);
      }
    }
    for (size_t k = 0; k < n->n_output; ++k) {
      outs[k] = str_or_empty(n->output[k])[0] != '\0' ? (int32_t)next_slot++ : -1;
    }
    for (size_t k = 0; k < n->n_attribute; ++k) {
      mlcc_status_t s = convert_attr(ctx, n->attribute[k], &attrs[k]);
      for (size_t q = 0; s == NULL && q < k; ++q) {
        if (strcmp(attrs[q].name, attrs[k].name) == 0) {
          s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "attribute '%s' is given twice",
                               attrs[k].name);
        }
      }
      if (s != NULL) {
        return mlcc_status_annotate(s, "node #%zu '%s' (%s, opset %d)", i, out->name,
                                    n->op_type, opset);
      }
    }
    out->inputs = ins;
    out->outputs = outs;
    out->attrs = attrs;
  }
  return mlcc_ok_status();
}

// Builds the template of |gp| into |*out_sg|; |sc| is its (empty) scope.
static mlcc_status_t sg_build(import_ctx_t* ctx, const MlccOnnx__GraphProto* gp, sg_scope_t* sc,
                              const mlcc_subgraph_t** out_sg) {
  mlcc_arena_t* arena = &ctx->graph->arena;
  mlcc_subgraph_t* sg =
      (mlcc_subgraph_t*)mlcc_arena_alloc(arena, sizeof(*sg), _Alignof(mlcc_subgraph_t));
  if (sg == NULL) return oom("a subgraph");
  sg->name = mlcc_arena_strdup(arena, str_or_empty(gp->name));
  if (sg->name == NULL) return oom("a subgraph");
  // Count what the subgraph defines.
  size_t n_const_nodes = 0, n_node_outs = 0;
  for (size_t i = 0; i < gp->n_node; ++i) {
    const MlccOnnx__NodeProto* n = gp->node[i];
    if (n->op_type == NULL || n->op_type[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "node #%zu '%s' has no op_type", i,
                              str_or_empty(n->name));
    }
    if (is_constant_node(n)) {
      n_const_nodes++;
      continue;
    }
    for (size_t k = 0; k < n->n_output; ++k) n_node_outs += str_or_empty(n->output[k])[0] != 0;
  }
  size_t n_in = gp->n_input, n_consts = gp->n_initializer + n_const_nodes;
  size_t n_nodes = gp->n_node - n_const_nodes;
  if (n_in + n_consts + n_node_outs > MLCC_ONNX_MAX_SUBGRAPH_VALUES || gp->n_output > UINT32_MAX) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "the subgraph defines more than %u values",
                            MLCC_ONNX_MAX_SUBGRAPH_VALUES);
  }
  sg->n_inputs = (uint32_t)n_in;
  sg->n_consts = (uint32_t)n_consts;
  sg->n_nodes = (uint32_t)n_nodes;
  sg->n_outputs = (uint32_t)gp->n_output;
  sg->first_node_slot = (uint32_t)(n_in + n_consts);
  sg->first_capture = sg->first_node_slot + (uint32_t)n_node_outs;
  sc->first_capture = sg->first_capture;

  mlcc_subgraph_value_info_t* inputs = (mlcc_subgraph_value_info_t*)mlcc_arena_alloc(
      arena, n_in * sizeof(*inputs), _Alignof(mlcc_subgraph_value_info_t));
  mlcc_subgraph_value_info_t* outputs = (mlcc_subgraph_value_info_t*)mlcc_arena_alloc(
      arena, gp->n_output * sizeof(*outputs), _Alignof(mlcc_subgraph_value_info_t));
  int32_t* output_slots =
      (int32_t*)mlcc_arena_alloc(arena, gp->n_output * sizeof(int32_t), 4);
  mlcc_subgraph_const_t* consts = (mlcc_subgraph_const_t*)mlcc_arena_alloc(
      arena, n_consts * sizeof(*consts), _Alignof(mlcc_subgraph_const_t));
  mlcc_subgraph_node_t* nodes = (mlcc_subgraph_node_t*)mlcc_arena_alloc(
      arena, n_nodes * sizeof(*nodes), _Alignof(mlcc_subgraph_node_t));
  sc->local = (sg_name_t*)malloc((sg->first_capture ? sg->first_capture : 1) * sizeof(sg_name_t));
  if (!inputs || !outputs || !output_slots || !consts || !nodes || !sc->local) {
    return oom("a subgraph");
  }
  // Formal inputs, initializers, Constant nodes, node outputs: one namespace.
  size_t nl = 0;
  for (size_t i = 0; i < n_in; ++i) {
    MLCC_RETURN_IF_ERROR(sg_value_info(ctx, gp->input[i], "input", i, &inputs[i]));
    sc->local[nl++] = (sg_name_t){inputs[i].name, (int32_t)i};
  }
  size_t c = 0;
  for (size_t i = 0; i < gp->n_initializer; ++i, ++c) {
    const MlccOnnx__TensorProto* t = gp->initializer[i];
    if (t->name == NULL || t->name[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "initializer #%zu has no name", i);
    }
    mlcc_onnx_tensor_t dec;
    MLCC_RETURN_IF_ERROR(mlcc_onnx_decode_tensor(&ctx->tensor, t, "initializer", &dec));
    MLCC_RETURN_IF_ERROR(sg_add_const(ctx, t->name, &dec, &consts[c]));
    sc->local[nl++] = (sg_name_t){consts[c].name, (int32_t)(n_in + c)};
  }
  for (size_t i = 0; i < gp->n_node; ++i) {
    const MlccOnnx__NodeProto* n = gp->node[i];
    if (!is_constant_node(n)) continue;
    mlcc_onnx_tensor_t dec;
    mlcc_status_t s = decode_constant_node(ctx, n, &dec);
    if (s == NULL) s = sg_add_const(ctx, n->output[0], &dec, &consts[c]);
    if (s != NULL) return mlcc_status_annotate(s, "node #%zu '%s' (Constant)", i, str_or_empty(n->name));
    sc->local[nl++] = (sg_name_t){consts[c].name, (int32_t)(n_in + c)};
    c++;
  }
  {
    uint32_t slot = sg->first_node_slot;
    for (size_t i = 0; i < gp->n_node; ++i) {
      const MlccOnnx__NodeProto* n = gp->node[i];
      if (is_constant_node(n)) continue;
      for (size_t k = 0; k < n->n_output; ++k) {
        const char* o = str_or_empty(n->output[k]);
        if (o[0] == '\0') continue;
        const char* copy = mlcc_arena_strdup(arena, o);
        if (copy == NULL) return oom("copying a subgraph name");
        sc->local[nl++] = (sg_name_t){copy, (int32_t)slot++};
      }
    }
  }
  sc->n_local = nl;
  qsort(sc->local, nl, sizeof(sg_name_t), cmp_sg_name);
  for (size_t i = 1; i < nl; ++i) {
    if (strcmp(sc->local[i - 1].name, sc->local[i].name) == 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "value '%s' is defined twice (by formal inputs, initializers "
                              "or node outputs)", sc->local[i].name);
    }
  }
  // Nodes (their attributes may hold nested subgraphs, which capture through |sc|).
  struct sg_scope_t* saved = ctx->scope;
  ctx->scope = sc;
  mlcc_status_t s = sg_convert_nodes(ctx, gp, sc, nodes, sg->first_node_slot);
  ctx->scope = saved;
  MLCC_RETURN_IF_ERROR(s);
  for (size_t i = 0; i < gp->n_output; ++i) {
    MLCC_RETURN_IF_ERROR(sg_value_info(ctx, gp->output[i], "output", i, &outputs[i]));
    MLCC_RETURN_IF_ERROR(sg_resolve(ctx, sc, outputs[i].name, &output_slots[i]));
    if (output_slots[i] < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "subgraph output '%s' is not defined in the subgraph or an "
                              "enclosing scope", outputs[i].name);
    }
  }
  MLCC_RETURN_IF_ERROR(sg_toposort(nodes, sg->n_nodes, sg->first_node_slot, sg->first_capture));
  // Captures and slot names (all captures are known now).
  sg->n_captures = sc->n_caps;
  sg->n_slots = sg->first_capture + sc->n_caps;
  const char** names = (const char**)mlcc_arena_alloc(arena, sg->n_slots * sizeof(char*),
                                                      _Alignof(char*));
  if (names == NULL) return oom("a subgraph");
  for (size_t i = 0; i < nl; ++i) names[sc->local[i].slot] = sc->local[i].name;
  for (uint32_t k = 0; k < sc->n_caps; ++k) names[sg->first_capture + k] = sc->cap_names[k];
  if (sc->n_caps != 0 && sc->parent != NULL) {
    int32_t* ps = (int32_t*)mlcc_arena_alloc(arena, sc->n_caps * sizeof(int32_t), 4);
    if (ps == NULL) return oom("a subgraph");
    memcpy(ps, sc->cap_parent_slots, sc->n_caps * sizeof(int32_t));
    sg->parent_slots = ps;
  } else if (sc->n_caps != 0) {
    mlcc_value_t** vs = (mlcc_value_t**)mlcc_arena_alloc(arena, sc->n_caps * sizeof(void*),
                                                         _Alignof(void*));
    if (vs == NULL) return oom("a subgraph");
    memcpy(vs, sc->cap_values, sc->n_caps * sizeof(void*));
    sg->captured = vs;
  }
  sg->inputs = inputs;
  sg->outputs = outputs;
  sg->output_slots = output_slots;
  sg->consts = consts;
  sg->nodes = nodes;
  sg->slot_names = names;
  *out_sg = sg;
  return mlcc_ok_status();
}

// Decodes attribute |a|'s serialized GraphProto (one level: nested graphs
// stay serialized until their own attribute is converted) and builds its
// template in the scope ctx->scope.
static mlcc_status_t convert_graph_attr(import_ctx_t* ctx, const MlccOnnx__AttributeProto* a,
                                        const mlcc_subgraph_t** out_sg) {
  *out_sg = NULL;
  if (!a->has_g) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "the GRAPH attribute has no graph");
  }
  if (ctx->depth >= MLCC_SUBGRAPH_MAX_DEPTH) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "subgraphs are nested more than %d deep",
                            MLCC_SUBGRAPH_MAX_DEPTH);
  }
  mlcc_onnx_alloc_state_t st;
  ProtobufCAllocator alloc = mlcc_onnx_counting_allocator(&st);
  MlccOnnx__GraphProto* gp = mlcc_onnx__graph_proto__unpack(&alloc, a->g.len, a->g.data);
  if (gp == NULL) {
    if (st.failed) return oom("decoding a subgraph");
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "the subgraph fails to decode (%zu bytes)", a->g.len);
  }
  sg_scope_t sc;
  memset(&sc, 0, sizeof(sc));
  sc.parent = ctx->scope;
  ctx->depth++;
  mlcc_status_t s = sg_build(ctx, gp, &sc, out_sg);
  ctx->depth--;
  if (s != NULL) {
    *out_sg = NULL;
    s = mlcc_status_annotate(s, "subgraph '%s'", str_or_empty(gp->name));
  }
  sg_scope_deinit(&sc);
  mlcc_onnx__graph_proto__free_unpacked(gp, mlcc_onnx_protobuf_allocator());
  return s;
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

// Pass 1: defines every node output (Constant nodes as CONSTANTs), so that
// pass 2 can resolve inputs in any order (toposort fixes the order).
static mlcc_status_t define_node_outputs(import_ctx_t* ctx, const int32_t* opsets) {
  const MlccOnnx__GraphProto* g = ctx->onnx_graph;
  for (size_t i = 0; i < g->n_node; ++i) {
    const MlccOnnx__NodeProto* n = g->node[i];
    mlcc_status_t s = mlcc_ok_status();
    if (is_constant_node(n)) {
      s = add_constant_node(ctx, n);
    } else {
      for (size_t k = 0; k < n->n_output && s == NULL; ++k) {
        const char* out = str_or_empty(n->output[k]);
        if (out[0] == '\0') continue;  // omitted optional output
        if (mlcc_graph_find_value(ctx->graph, out) != NULL) {
          s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                               "output '%s' is already defined by another node, an "
                               "initializer or a graph input", out);
          break;
        }
        mlcc_value_t* v = NULL;
        s = mlcc_graph_add_value(ctx->graph, out, MLCC_VALUE_INTERMEDIATE, &v);
      }
    }
    if (!mlcc_status_is_ok(s)) return node_error(i, n, opsets[i], s);
  }
  return mlcc_ok_status();
}

static mlcc_status_t add_one_node(import_ctx_t* ctx, const MlccOnnx__NodeProto* n,
                                  mlcc_op_t op, int32_t opset, mlcc_value_t** scratch,
                                  mlcc_attr_t* attrs) {
  mlcc_graph_t* graph = ctx->graph;
  if (n->n_input > UINT32_MAX || n->n_output > UINT32_MAX || n->n_attribute > UINT32_MAX) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "too many inputs/outputs/attributes");
  }
  mlcc_node_t* node = NULL;
  mlcc_value_t** ins = scratch;
  mlcc_value_t** outs = scratch + n->n_input;
  for (size_t k = 0; k < n->n_input; ++k) {
    const char* in = str_or_empty(n->input[k]);
    if (in[0] == '\0') {
      ins[k] = NULL;  // omitted optional input
      continue;
    }
    ins[k] = mlcc_graph_find_value(graph, in);
    if (ins[k] == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "input '%s' is not defined by any node, initializer or graph "
                              "input", in);
    }
  }
  for (size_t k = 0; k < n->n_output; ++k) {
    const char* out = str_or_empty(n->output[k]);
    outs[k] = out[0] == '\0' ? NULL : mlcc_graph_find_value(graph, out);
  }
  for (size_t k = 0; k < n->n_attribute; ++k) {
    MLCC_RETURN_IF_ERROR(convert_attr(ctx, n->attribute[k], &attrs[k]));
    for (size_t j = 0; j < k; ++j) {
      if (strcmp(attrs[j].name, attrs[k].name) == 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "attribute '%s' is given twice",
                                attrs[k].name);
      }
    }
  }
  return mlcc_graph_add_node(graph, op, opset, str_or_empty(n->name), ins,
                             (uint32_t)n->n_input, outs, (uint32_t)n->n_output, attrs,
                             (uint32_t)n->n_attribute, &node);
}

// Pass 2: one mlcc node per non-Constant ONNX node, in file order.
static mlcc_status_t add_nodes(import_ctx_t* ctx, const mlcc_op_t* ops, const int32_t* opsets) {
  const MlccOnnx__GraphProto* g = ctx->onnx_graph;
  size_t max_io = 1, max_attrs = 1;
  for (size_t i = 0; i < g->n_node; ++i) {
    size_t io;
    if (!mlcc_checked_add_size(g->node[i]->n_input, g->node[i]->n_output, &io)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "node #%zu has too many inputs", i);
    }
    if (io > max_io) max_io = io;
    if (g->node[i]->n_attribute > max_attrs) max_attrs = g->node[i]->n_attribute;
  }
  mlcc_value_t** scratch = (mlcc_value_t**)calloc(max_io, sizeof(mlcc_value_t*));
  mlcc_attr_t* attrs = (mlcc_attr_t*)calloc(max_attrs, sizeof(mlcc_attr_t));
  mlcc_status_t s = mlcc_ok_status();
  if (scratch == NULL || attrs == NULL) s = oom("adding nodes");
  for (size_t i = 0; i < g->n_node && s == NULL; ++i) {
    const MlccOnnx__NodeProto* n = g->node[i];
    if (is_constant_node(n)) continue;
    s = add_one_node(ctx, n, ops[i], opsets[i], scratch, attrs);
    if (!mlcc_status_is_ok(s)) s = node_error(i, n, opsets[i], s);
  }
  free(scratch);
  free(attrs);
  return s;
}

// A graph output's declared tensor type (elem_type 0 and rank -1 when the
// output declares no tensor type or no shape), checked by infer-shapes.
static void output_decl(const MlccOnnx__ValueInfoProto* vi, mlcc_output_decl_t* out) {
  memset(out, 0, sizeof(*out));
  out->rank = -1;
  if (vi->type == NULL || vi->type->value_case != MLCC_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    return;
  }
  const MlccOnnx__TypeProto__Tensor* tt = vi->type->tensor_type;
  if (tt->has_elem_type) out->elem_type = tt->elem_type;
  const MlccOnnx__TensorShapeProto* sp = tt->shape;
  if (sp == NULL) return;
  out->rank = sp->n_dim > INT32_MAX ? INT32_MAX : (int32_t)sp->n_dim;
  for (size_t d = 0; d < sp->n_dim && d < MLCC_MAX_RANK; ++d) {
    bool fixed = sp->dim[d]->value_case ==
                     MLCC_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                 sp->dim[d]->dim_value >= 0;
    out->dims[d] = fixed ? sp->dim[d]->dim_value : -1;
  }
}

static mlcc_status_t mark_outputs(import_ctx_t* ctx) {
  const MlccOnnx__GraphProto* g = ctx->onnx_graph;
  mlcc_graph_t* graph = ctx->graph;
  if (g->n_output == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "the graph has no outputs");
  }
  graph->outputs = (mlcc_value_t**)mlcc_arena_alloc(
      &graph->arena, g->n_output * sizeof(mlcc_value_t*), _Alignof(mlcc_value_t*));
  if (graph->outputs == NULL) return oom("adding outputs");
  mlcc_output_decl_t* decls = (mlcc_output_decl_t*)mlcc_arena_alloc(
      &graph->arena, g->n_output * sizeof(mlcc_output_decl_t), _Alignof(mlcc_output_decl_t));
  if (decls == NULL) return oom("adding outputs");
  graph->n_outputs = 0;
  for (size_t i = 0; i < g->n_output; ++i) {
    const char* name = g->output[i]->name;
    if (name == NULL || name[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph output #%zu has no name", i);
    }
    mlcc_value_t* v = mlcc_graph_find_value(graph, name);
    if (v == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "graph output '%s' is not defined by any node, initializer or "
                              "graph input", name);
    }
    if (v->is_output) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph output '%s' is listed twice",
                              name);
    }
    v->is_output = true;
    output_decl(g->output[i], &decls[graph->n_outputs]);
    graph->outputs[graph->n_outputs++] = v;
  }
  graph->output_decls = decls;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

static void free_model_backing(void* backing) {
  mlcc_onnx__model_proto__free_unpacked((MlccOnnx__ModelProto*)backing,
                                        mlcc_onnx_protobuf_allocator());
}

static mlcc_status_t build_graph(import_ctx_t* ctx) {
  MLCC_RETURN_IF_ERROR(read_opsets(ctx));
  // Model-local functions are inlined first (functions.h): every later step
  // sees only ONNX operators.
  MLCC_RETURN_IF_ERROR(mlcc_onnx_inline_functions(ctx->model, &ctx->graph->arena,
                                                  &ctx->onnx_graph, &ctx->node_opsets));
  const MlccOnnx__GraphProto* g = ctx->onnx_graph;
  mlcc_op_t* ops = (mlcc_op_t*)calloc(g->n_node ? g->n_node : 1, sizeof(mlcc_op_t));
  int32_t* opsets = (int32_t*)calloc(g->n_node ? g->n_node : 1, sizeof(int32_t));
  mlcc_status_t s = mlcc_ok_status();
  if (ops == NULL || opsets == NULL) s = oom("scanning nodes");
  if (s == NULL) s = prescan_nodes(ctx, ops, opsets);
  if (s == NULL) {
    ctx->graph->name = mlcc_arena_strdup(&ctx->graph->arena, str_or_empty(g->name));
    if (ctx->graph->name == NULL) s = oom("copying the graph name");
  }
  if (s == NULL) s = index_initializers(ctx);
  if (s == NULL) s = add_inputs_and_initializers(ctx);
  if (s == NULL) s = define_node_outputs(ctx, opsets);
  if (s == NULL) s = add_nodes(ctx, ops, opsets);
  if (s == NULL) s = mlcc_graph_toposort(ctx->graph);
  if (s == NULL) s = mlcc_onnx_upgrade_legacy(ctx->graph);  // opsets 1-8 (legacy.h)
  if (s == NULL) s = mark_outputs(ctx);
  free(ops);
  free(opsets);
  return s;
}

// The model file's SHA-256 (for the generated header), taken on a second
// thread while the same bytes are decoded: a large model's digest then costs
// no wall time. The thread only reads |bytes|.
typedef struct digest_job_t {
  const uint8_t* bytes;
  size_t size;
  unsigned char digest[EVP_MAX_MD_SIZE];
  bool ok;
} digest_job_t;

static void* digest_thread(void* arg) {
  digest_job_t* j = (digest_job_t*)arg;
  unsigned int dlen = 0;
  j->ok = EVP_Digest(j->bytes, j->size, j->digest, &dlen, EVP_sha256(), NULL) == 1 && dlen == 32;
  return NULL;
}

mlcc_status_t mlcc_onnx_import_file(const char* path, const mlcc_onnx_import_options_t* options,
                                    mlcc_graph_t** out_graph) {
  if (out_graph == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "out_graph is NULL");
  }
  *out_graph = NULL;
  if (options != NULL && options->out_n_deps != NULL) *options->out_n_deps = 0;
  if (path == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "no model path");
  }
  uint64_t limit = (options && options->max_file_bytes) ? options->max_file_bytes
                                                         : MLCC_ONNX_DEFAULT_MAX_FILE_BYTES;
  uint8_t* bytes = NULL;
  size_t size = 0;
  bool want_digest = options != NULL && options->out_sha256_hex != NULL;
  if (want_digest) options->out_sha256_hex[0] = '\0';
  bool mapped = false;
  MLCC_RETURN_IF_ERROR(mlcc_onnx_load_file(path, limit, &bytes, &size, &mapped));
  digest_job_t job = {bytes, size, {0}, false};
  pthread_t thread;
  // Small files (or no thread available): digest inline.
  bool threaded = want_digest && size >= MLCC_LARGE_ALLOC_MIN &&
                  pthread_create(&thread, NULL, digest_thread, &job) == 0;
  if (want_digest && !threaded) digest_thread(&job);
  mlcc_status_t s = mlcc_onnx_import_bytes(path, bytes, size, options, out_graph);
  if (threaded) pthread_join(thread, NULL);
  mlcc_onnx_release_file(bytes, size, mapped);
  if (want_digest && s == NULL) {
    if (!job.ok) {
      mlcc_graph_destroy(*out_graph);
      *out_graph = NULL;
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "SHA-256 of %s failed", path);
    }
    for (unsigned int i = 0; i < 32; ++i) {
      snprintf(options->out_sha256_hex + 2 * i, 3, "%02x", job.digest[i]);
    }
  }
  return s;
}

mlcc_status_t mlcc_onnx_import_bytes(const char* path, const uint8_t* bytes, size_t size,
                                     const mlcc_onnx_import_options_t* options,
                                     mlcc_graph_t** out_graph) {
  *out_graph = NULL;
  if (options != NULL && options->out_n_deps != NULL) *options->out_n_deps = 0;
  uint64_t limit = (options && options->max_file_bytes) ? options->max_file_bytes
                                                         : MLCC_ONNX_DEFAULT_MAX_FILE_BYTES;
  if ((uint64_t)size > limit) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "%s is %zu bytes, over the limit of %" PRIu64 " bytes", path, size,
                            limit);
  }
  mlcc_onnx_alloc_state_t alloc_state;
  ProtobufCAllocator alloc = mlcc_onnx_counting_allocator(&alloc_state);
  MlccOnnx__ModelProto* model = mlcc_onnx__model_proto__unpack(&alloc, size, bytes);
  if (model == NULL) {
    if (alloc_state.failed) {
      return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory decoding %s (%zu bytes)", path, size);
    }
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s is not a valid ONNX model (failed to decode %zu bytes)", path,
                            size);
  }
  mlcc_graph_t* graph = NULL;
  mlcc_status_t s = mlcc_graph_create(&graph);
  if (!mlcc_status_is_ok(s)) {
    free_model_backing(model);
    return s;
  }
  graph->backing = model;
  graph->backing_free = free_model_backing;
  if (model->graph == NULL) {
    mlcc_graph_destroy(graph);
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s has no graph", path);
  }
  // IR versions 3..11 are the ones whose fields this reader knows (ONNX
  // IR.md); a newer file may carry semantics we would silently ignore. IR 11
  // adds float4e2m1 (refused by name as a dtype) and multi-device
  // configuration (ModelProto.configuration, NodeProto.device_configurations:
  // placement hints, ignored on one CPU); IR 10 adds overloads and
  // metadata_props (read or ignored); IR 8 adds local functions (inlined).
  if (model->has_ir_version && (model->ir_version < 3 || model->ir_version > 11)) {
    int64_t v = model->ir_version;
    mlcc_graph_destroy(graph);
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s has ONNX IR version %lld; mlcc reads IR versions 3 to 11",
                            path, (long long)v);
  }

  import_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.options = options;
  ctx.model = model;
  ctx.onnx_graph = model->graph;
  ctx.graph = graph;
  s = mlcc_onnx_tensor_ctx_init(&ctx.tensor, path, limit, &graph->arena);
  if (s == NULL) {
    if (options != NULL) {
      ctx.tensor.deps = options->out_deps;
      ctx.tensor.deps_cap = options->out_deps ? options->deps_cap : 0;
      ctx.tensor.n_deps = options->out_n_deps;
    }
    s = build_graph(&ctx);
  }
  mlcc_onnx_tensor_ctx_deinit(&ctx.tensor);
  free(ctx.opsets);
  free(ctx.inits_sorted);
  if (!mlcc_status_is_ok(s)) {
    if (options != NULL && options->out_n_deps != NULL) *options->out_n_deps = 0;
    mlcc_graph_destroy(graph);
    return s;
  }
  *out_graph = graph;
  return mlcc_ok_status();
}

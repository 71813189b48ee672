// SPDX-License-Identifier: Apache-2.0
// ONNX model import: decodes a ModelProto with protobuf-c (our own schema in
// onnx.proto) and builds an mlcc_graph_t. This file holds the core (opsets,
// node pre-scan, initializers, nodes, outputs, entry points); graph inputs
// (pins, --input-value) are in onnx_inputs.c, attributes and Constant nodes
// in onnx_attrs.c, subgraphs in onnx_subgraph.c (import_ctx.h joins them).
// Tensor decoding and external data live in onnx_tensor.c (shared with
// mlcc_onnx_read_tensor_file).
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
#include "ir/onnx/import_ctx.h"
#include "ir/onnx/onnx_import_impl.h"
#include "ir/onnx/legacy.h"
#include "ir/subgraph.h"

// The unsupported-op list stops after this many entries ("... and N more"):
// a model of ten thousand custom ops must not give a megabyte message.
#define MLCC_ONNX_MAX_LISTED_OPS 64

//===----------------------------------------------------------------------===//
// Opset imports
//===----------------------------------------------------------------------===//

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

int32_t mlcc_onnx_opset_of(const import_ctx_t* ctx, const char* domain) {
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
                                                            : mlcc_onnx_opset_of(ctx, domain);
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
  MLCC_RETURN_IF_ERROR(mlcc_onnx_check_option_names(ctx));
  for (size_t i = 0; i < g->n_input; ++i) {
    const MlccOnnx__ValueInfoProto* vi = g->input[i];
    if (vi->name == NULL || vi->name[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph input #%zu has no name", i);
    }
    const mlcc_input_value_t* bv = mlcc_onnx_find_binding(ctx->options, vi->name);
    if (bv != NULL) {
      if (mlcc_graph_find_value(graph, vi->name) != NULL) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "graph input '%s' is listed twice",
                                vi->name);
      }
      MLCC_RETURN_IF_ERROR(mlcc_onnx_add_bound_input(ctx, vi, bv));
      continue;
    }
    const MlccOnnx__TensorProto* init = find_initializer(ctx, vi->name);
    if (init != NULL && legacy) continue;  // added below as a CONSTANT
    mlcc_dtype_t dtype = MLCC_DTYPE_UNDEFINED;
    mlcc_shape_t shape;
    memset(&shape, 0, sizeof(shape));
    MLCC_RETURN_IF_ERROR(mlcc_onnx_input_type(ctx, vi, init, &dtype, &shape));
    MLCC_RETURN_IF_ERROR(mlcc_onnx_check_input_size(vi->name, &shape));
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
                               mlcc_onnx_find_binding(ctx->options, t->name) != NULL);
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
      s = mlcc_onnx_add_constant_node(ctx, n);
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
    MLCC_RETURN_IF_ERROR(mlcc_onnx_convert_attr(ctx, n->attribute[k], &attrs[k]));
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
  // adds float4e2m1 (a dtype, ir/dtypes.def) and multi-device
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

// SPDX-License-Identifier: Apache-2.0
// ONNX import of GRAPH attributes (the bodies of If, Loop and Scan) into
// mlcc_subgraph_t templates (ir/subgraph.h): scopes, captures of enclosing
// values, constants and a topological order of the body's nodes.
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/onnx/import_ctx.h"

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
    int32_t opset = mlcc_onnx_opset_of(ctx, domain);
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
      mlcc_status_t s = mlcc_onnx_convert_attr(ctx, n->attribute[k], &attrs[k]);
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
    mlcc_status_t s = mlcc_onnx_decode_constant_node(ctx, n, &dec);
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

mlcc_status_t mlcc_onnx_convert_graph_attr(import_ctx_t* ctx, const MlccOnnx__AttributeProto* a,
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


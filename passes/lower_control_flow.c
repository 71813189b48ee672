// SPDX-License-Identifier: Apache-2.0
// Control-flow lowering: unrolls If, Loop and Scan into plain dataflow nodes
// when the infer-shapes pass reaches them (ONNX If 1-17, Loop 1-17, Scan
// 8-17). mlcc compiles static shapes ahead of time, so:
//
//  * If with a constant condition becomes a copy of the chosen branch; with a
//    run-time condition both branches are inlined and each output is
//    Where(cond, then, else), which needs equal dtypes and shapes.
//  * Loop needs a compile-time trip count and/or condition (the condition
//    the body computes must fold to a constant after each iteration it
//    decides): each iteration's body is inlined with the iteration number as a
//    constant, loop-carried values threaded, scan outputs stacked (Unsqueeze +
//    Concat) on axis 0.
//  * Scan inlines one body per sequence step (per batch item and step for
//    Scan-8, whose axis 0 is the batch), slicing scan inputs with Gather and
//    stacking scan outputs on their axes in their directions.
//
// Inlined nodes are inferred (and folded, when allowed) as they are created,
// so a condition or trip count computed by the model is known when needed
// and nested control flow inside a body is unrolled recursively. The new
// nodes are created in a topological order and spliced in right after the
// control node, which dies; its outputs are written by the last new nodes.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/onnx/legacy.h"
#include "ir/subgraph.h"
#include "passes/pass_impl.h"

// Most iterations one Loop or Scan (Scan-8: batch * sequence) may unroll.
#define MLCC_LOWER_MAX_ITERATIONS 4096
// Most nodes the unrolling of one top-level control-flow node may create.
#define MLCC_LOWER_MAX_NODES (1u << 18)
// Opset of the helper nodes the lowering adds (Gather, Unsqueeze, Concat,
// Identity, Reshape: axes as inputs) and of Where.
#define MLCC_LOWER_OPSET 13
#define MLCC_LOWER_WHERE_OPSET 16

typedef struct lower_ctx_t {
  mlcc_graph_t* graph;
  bool allow_eval;       // fold through the host JIT (the pass context's choice)
  uint32_t n_created;    // nodes created so far (MLCC_LOWER_MAX_NODES)
  bool adding_helper;    // add_node is making a helper (mlcc_node_t.pass_helper)
  uint32_t next_const;   // suffix of the next constant's name
} lower_ctx_t;

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory while unrolling control flow");
}

static mlcc_status_t lower_node(lower_ctx_t* lc, mlcc_node_t* node);

bool mlcc_pass_is_control_flow(mlcc_op_t op) {
  return op == MLCC_OP_IF || op == MLCC_OP_LOOP || op == MLCC_OP_SCAN;
}

//===----------------------------------------------------------------------===//
// Creating nodes and values
//===----------------------------------------------------------------------===//

// Infers |node| and folds it when possible, or unrolls it if it is control
// flow itself; errors carry the node's description.
static mlcc_status_t process_node(lower_ctx_t* lc, mlcc_node_t* node) {
  if (node->dead) return mlcc_ok_status();
  if (mlcc_pass_is_control_flow(node->op)) return lower_node(lc, node);
  const mlcc_op_desc_t* desc = mlcc_op_desc(node->op);
  if (desc == NULL || desc->infer == NULL) {
    return mlcc_node_annotate(
        node, mlcc_make_status(MLCC_STATUS_INTERNAL, "op has no infer function"));
  }
  mlcc_status_t s = desc->infer(node);
  if (s != NULL) return mlcc_node_annotate(node, s);
  for (uint32_t j = 0; j < node->n_outputs; ++j) {
    const mlcc_value_t* out = node->outputs[j];
    if (out != NULL && (!out->shape_known || out->dtype == MLCC_DTYPE_UNDEFINED)) {
      return mlcc_node_annotate(
          node, mlcc_make_status(MLCC_STATUS_INTERNAL,
                                 "shape inference left output '%s' without %s", out->name,
                                 out->shape_known ? "a dtype" : "a shape"));
    }
  }
  bool folded = false;
  return mlcc_pass_try_fold_node(lc->graph, node, lc->allow_eval, &folded);
}

// Appends a node and processes it at once (so creation order is a
// topological order: every input exists, inferred, before its reader).
static mlcc_status_t add_node(lower_ctx_t* lc, mlcc_op_t op, int32_t opset, const char* name,
                              mlcc_value_t* const* ins, uint32_t n_ins,
                              mlcc_value_t* const* outs, uint32_t n_outs,
                              const mlcc_attr_t* attrs, uint32_t n_attrs) {
  if (lc->n_created >= MLCC_LOWER_MAX_NODES) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "unrolling the control flow would create more than %u nodes",
                            MLCC_LOWER_MAX_NODES);
  }
  mlcc_node_t* node = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_graph_add_node(lc->graph, op, opset, name, ins, n_ins, outs,
                                           n_outs, attrs, n_attrs, &node));
  node->pass_helper = lc->adding_helper;
  lc->n_created++;
  // A body's legacy-opset nodes get the importer's rewrites of the main
  // graph (ir/onnx/legacy.h); an Unsqueeze it adds comes before |node|.
  mlcc_node_t* pre = NULL;
  MLCC_RETURN_IF_ERROR(
      mlcc_node_annotate(node, mlcc_onnx_upgrade_legacy_node(lc->graph, node, &pre)));
  if (pre != NULL) {
    lc->n_created++;
    MLCC_RETURN_IF_ERROR(process_node(lc, pre));
  }
  return process_node(lc, node);
}

// A helper node with one output: |dst| if given, else a new value named
// after |base|, returned in |*out|.
static mlcc_status_t add_helper(lower_ctx_t* lc, mlcc_op_t op, const mlcc_node_t* owner,
                                mlcc_value_t* const* ins, uint32_t n_ins,
                                const mlcc_attr_t* attrs, uint32_t n_attrs,
                                const char* base, mlcc_value_t* dst, mlcc_value_t** out) {
  if (out != NULL) *out = NULL;
  if (dst == NULL) MLCC_RETURN_IF_ERROR(mlcc_graph_add_temp_value(lc->graph, base, &dst));
  int32_t opset = op == MLCC_OP_WHERE ? MLCC_LOWER_WHERE_OPSET : MLCC_LOWER_OPSET;
  lc->adding_helper = true;
  mlcc_status_t s = add_node(lc, op, opset, owner->name, ins, n_ins, &dst, 1, attrs, n_attrs);
  lc->adding_helper = false;
  MLCC_RETURN_IF_ERROR(s);
  if (out != NULL) *out = dst;
  return mlcc_ok_status();
}

// A new CONSTANT named after |base| (|data| copied if |copy|, else borrowed
// for the graph's lifetime).
static mlcc_status_t add_const(lower_ctx_t* lc, const char* base, mlcc_dtype_t dtype,
                               const mlcc_shape_t* shape, const void* data, bool copy,
                               mlcc_value_t** out) {
  char name[192];
  do {
    snprintf(name, sizeof(name), "%.160s_c%u", base, lc->next_const++);
  } while (mlcc_graph_find_value(lc->graph, name) != NULL);
  return mlcc_graph_add_constant(lc->graph, name, dtype, shape, data, copy, out);
}

static mlcc_status_t const_i64(lower_ctx_t* lc, const char* base, int64_t v, int32_t rank,
                               mlcc_value_t** out) {
  mlcc_shape_t shape;
  memset(&shape, 0, sizeof(shape));
  shape.rank = rank;  // 0: scalar, 1: [1]
  shape.dims[0] = 1;
  return add_const(lc, base, MLCC_DTYPE_I64, &shape, &v, true, out);
}

// |dst| = Identity(|src|): a control node's output written from a value of
// the unrolled body. Nothing for an omitted output.
static mlcc_status_t bind_output(lower_ctx_t* lc, const mlcc_node_t* owner, mlcc_value_t* src,
                                 mlcc_value_t* dst) {
  if (dst == NULL) return mlcc_ok_status();
  return add_helper(lc, MLCC_OP_IDENTITY, owner, &src, 1, NULL, 0, NULL, dst, NULL);
}

// Gather(|x|, scalar |index|, axis=|axis|): the slice at |index| without the axis.
static mlcc_status_t select_slice(lower_ctx_t* lc, const mlcc_node_t* owner, mlcc_value_t* x,
                                  int64_t index, int64_t axis, mlcc_value_t** out) {
  mlcc_value_t* ins[2] = {x, NULL};
  MLCC_RETURN_IF_ERROR(const_i64(lc, "index", index, 0, &ins[1]));
  mlcc_attr_t a = {.name = "axis", .kind = MLCC_ATTR_INT, .i = axis};
  return add_helper(lc, MLCC_OP_GATHER, owner, ins, 2, &a, 1, x->name, NULL, out);
}

// Concat of |n| values on |axis| into |dst| (or a new value), in groups that
// respect Concat's input limit.
static mlcc_status_t concat_values(lower_ctx_t* lc, const mlcc_node_t* owner,
                                   mlcc_value_t** vals, uint32_t n, int64_t axis,
                                   mlcc_value_t* dst, mlcc_value_t** out) {
  uint32_t max_in = mlcc_op_desc(MLCC_OP_CONCAT)->in_max;
  mlcc_attr_t a = {.name = "axis", .kind = MLCC_ATTR_INT, .i = axis};
  if (n <= max_in) {
    return add_helper(lc, MLCC_OP_CONCAT, owner, vals, n, &a, 1, "stacked", dst, out);
  }
  uint32_t n_groups = (n + max_in - 1) / max_in;
  mlcc_value_t** parts = (mlcc_value_t**)calloc(n_groups, sizeof(*parts));
  if (parts == NULL) return oom();
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t g = 0; g < n_groups && s == NULL; ++g) {
    uint32_t first = g * max_in, count = n - first < max_in ? n - first : max_in;
    s = add_helper(lc, MLCC_OP_CONCAT, owner, vals + first, count, &a, 1, "stacked", NULL,
                   &parts[g]);
  }
  if (s == NULL) s = concat_values(lc, owner, parts, n_groups, axis, dst, out);
  free(parts);
  return s;
}

// Stacks |n| >= 1 values of one shape on a new axis |axis| (of the result's
// rank) into |dst| (or a new value): Unsqueeze each, then Concat.
static mlcc_status_t stack_values(lower_ctx_t* lc, const mlcc_node_t* owner,
                                  mlcc_value_t* const* vals, uint32_t n, int64_t axis,
                                  mlcc_value_t* dst, mlcc_value_t** out) {
  if (out != NULL) *out = NULL;
  mlcc_value_t* axes = NULL;
  MLCC_RETURN_IF_ERROR(const_i64(lc, "axes", axis, 1, &axes));
  mlcc_value_t** unsq = (mlcc_value_t**)calloc(n, sizeof(*unsq));
  if (unsq == NULL) return oom();
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t i = 0; i < n && s == NULL; ++i) {
    mlcc_value_t* ins[2] = {vals[i], axes};
    s = add_helper(lc, MLCC_OP_UNSQUEEZE, owner, ins, 2, NULL, 0, vals[i]->name,
                   n == 1 ? dst : NULL, &unsq[i]);
  }
  if (s == NULL && n == 1 && out != NULL) *out = unsq[0];
  if (s == NULL && n > 1) s = concat_values(lc, owner, unsq, n, axis, dst, out);
  free(unsq);
  return s;
}

// An empty scan output: a constant of shape [0] + the element shape the body
// declares for output |info| (with |axis| the stacking axis), or
// UNIMPLEMENTED when it declares none.
static mlcc_status_t empty_scan_output(lower_ctx_t* lc, const mlcc_node_t* owner,
                                       const mlcc_subgraph_value_info_t* info, int64_t axis,
                                       mlcc_value_t* dst) {
  if (dst == NULL) return mlcc_ok_status();
  if (info->dtype == MLCC_DTYPE_UNDEFINED || !info->shape_static ||
      info->shape.rank >= MLCC_MAX_RANK || axis < 0 || axis > info->shape.rank) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s runs no iteration and its body does not declare a static "
                            "type for scan output '%s', so the output's shape is unknown",
                            mlcc_op_name(owner->op), info->name);
  }
  mlcc_shape_t shape;
  memset(&shape, 0, sizeof(shape));
  shape.rank = info->shape.rank + 1;
  for (int32_t d = 0, k = 0; d < shape.rank; ++d) {
    shape.dims[d] = d == axis ? 0 : info->shape.dims[k++];
  }
  static const uint8_t kNoBytes[1] = {0};
  mlcc_value_t* c = NULL;
  MLCC_RETURN_IF_ERROR(add_const(lc, info->name, info->dtype, &shape, kNoBytes, false, &c));
  return bind_output(lc, owner, c, dst);
}

//===----------------------------------------------------------------------===//
// Checks and messages
//===----------------------------------------------------------------------===//

static const mlcc_subgraph_t* graph_attr(const mlcc_node_t* node, const char* name) {
  const mlcc_attr_t* a = mlcc_node_attr(node, name);
  return a != NULL && a->kind == MLCC_ATTR_GRAPH ? a->g : NULL;
}

static mlcc_status_t require_graph(const mlcc_node_t* node, const char* name,
                                   const mlcc_subgraph_t** out) {
  *out = graph_attr(node, name);
  if (*out != NULL) return mlcc_ok_status();
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs attribute '%s' (a graph)%s",
                          mlcc_op_name(node->op), name,
                          mlcc_node_attr(node, name) != NULL ? "; it has another type" : "");
}

static mlcc_status_t check_arity(const mlcc_node_t* node, const char* attr,
                                 const mlcc_subgraph_t* g, uint32_t n_in, uint32_t n_out,
                                 const char* layout) {
  if (g->n_inputs == n_in && g->n_outputs == n_out) return mlcc_ok_status();
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s attribute '%s' (subgraph '%s') must have %u inputs and %u "
                          "outputs (%s); it has %u and %u",
                          mlcc_op_name(node->op), attr, g->name, n_in, n_out, layout,
                          g->n_inputs, g->n_outputs);
}

static int64_t numel_of(const mlcc_value_t* v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v->shape.rank; ++d) n *= v->shape.dims[d];
  return n;
}

static bool same_type(const mlcc_value_t* a, const mlcc_value_t* b) {
  return a->dtype == b->dtype && mlcc_shape_equal(&a->shape, &b->shape);
}

static char* type_str(const mlcc_value_t* v, char* buf, size_t size) {
  char sb[160];
  snprintf(buf, size, "%s%s", mlcc_dtype_name(v->dtype),
           mlcc_shape_format(&v->shape, sb, sizeof(sb)));
  return buf;
}

// The first graph input |v| is computed from (depth-first over producers,
// inputs in order), or NULL. Binding that input makes |v| foldable when the
// rest of its cone is constant.
static mlcc_value_t* runtime_root(mlcc_graph_t* graph, mlcc_value_t* v) {
  if (v->kind == MLCC_VALUE_INPUT) return v;
  bool* seen = (bool*)calloc(graph->n_values ? graph->n_values : 1, sizeof(bool));
  mlcc_value_t** stack = (mlcc_value_t**)malloc(
      (graph->n_values ? graph->n_values : 1) * sizeof(*stack));
  mlcc_value_t* found = NULL;
  if (seen == NULL || stack == NULL) goto done;
  uint32_t top = 0;
  stack[top++] = v;
  seen[v->id] = true;
  while (top > 0 && found == NULL) {
    mlcc_value_t* x = stack[--top];
    if (x->kind == MLCC_VALUE_INPUT) {
      found = x;
      break;
    }
    const mlcc_node_t* p = x->kind == MLCC_VALUE_INTERMEDIATE ? x->producer : NULL;
    if (p == NULL) continue;
    for (uint32_t i = p->n_inputs; i-- > 0;) {  // reversed: input 0 is popped first
      mlcc_value_t* in = p->inputs[i];
      if (in != NULL && in->id < graph->n_values && !seen[in->id]) {
        seen[in->id] = true;
        stack[top++] = in;
      }
    }
  }
done:
  free(seen);
  free(stack);
  return found;
}

// UNIMPLEMENTED for a value that must be known at compile time. The message
// names the graph input it comes from, in the form tests/onnx/run_suite.py
// --bind-shape-inputs recognizes ("must be a compile-time constant; value
// '<input>' is computed at run time").
static mlcc_status_t runtime_error(lower_ctx_t* lc, const mlcc_node_t* node, const char* what,
                                   const char* role, mlcc_value_t* v) {
  mlcc_value_t* root = runtime_root(lc->graph, v);
  const char* op = mlcc_op_name(node->op);
  if (root != NULL && root != v) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s %s (%s, value '%s') must be a compile-time constant; value "
                            "'%s' is computed at run time (mlcc unrolls %s at compile time; "
                            "'%s' is a graph input: bake its value in with --input-value=%s=...)",
                            op, what, role, v->name, root->name, op, root->name, root->name);
  }
  if (root != NULL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s %s (%s) must be a compile-time constant; value '%s' is computed "
                            "at run time (mlcc unrolls %s at compile time; a graph input: bake "
                            "its value in with --input-value=%s=...)",
                            op, what, role, v->name, op, v->name);
  }
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                          "%s %s (%s) must be a compile-time constant; value '%s' is computed "
                          "at run time (mlcc unrolls %s at compile time)",
                          op, what, role, v->name, op);
}

// INVALID_MODEL unless |v| is a one-element tensor of an allowed dtype kind.
static mlcc_status_t check_scalar(const mlcc_node_t* node, const char* what, mlcc_value_t* v,
                                  bool want_bool) {
  bool ok = want_bool ? mlcc_dtype_is_bool(v->dtype) : mlcc_dtype_is_int(v->dtype);
  if (ok && numel_of(v) == 1) return mlcc_ok_status();
  char tb[200];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s %s must be a one-element %s tensor; "
                          "got %s", mlcc_op_name(node->op), what,
                          want_bool ? "bool" : "integer", type_str(v, tb, sizeof(tb)));
}

static bool const_bool(const mlcc_value_t* v) {
  return v->data != NULL && ((const uint8_t*)v->data)[0] != 0;
}

//===----------------------------------------------------------------------===//
// Inlining one subgraph
//===----------------------------------------------------------------------===//

// Inlines one copy of |sg| whose formal inputs are |in| (sg->n_inputs
// values) and sets |out| (sg->n_outputs values). Nested subgraphs in
// attributes become closures over this copy's values. |owner| names the
// helper nodes.
static mlcc_status_t inline_subgraph(lower_ctx_t* lc, const mlcc_node_t* owner,
                                     const mlcc_subgraph_t* sg, mlcc_value_t* const* in,
                                     mlcc_value_t** out) {
  mlcc_graph_t* graph = lc->graph;
  uint32_t max_io = 1;
  for (uint32_t j = 0; j < sg->n_nodes; ++j) {
    uint32_t io = sg->nodes[j].n_inputs + sg->nodes[j].n_outputs;
    if (io > max_io) max_io = io;
  }
  mlcc_value_t** vals = (mlcc_value_t**)calloc(sg->n_slots ? sg->n_slots : 1, sizeof(*vals));
  mlcc_value_t** io = (mlcc_value_t**)calloc(max_io, sizeof(*io));
  if (vals == NULL || io == NULL) {
    free(vals);
    free(io);
    return oom();
  }
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t i = 0; i < sg->n_inputs && s == NULL; ++i) {
    vals[i] = in[i];
    mlcc_dtype_t want = sg->inputs[i].dtype;
    if (want != MLCC_DTYPE_UNDEFINED && in[i]->dtype != want) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "formal input '%s' of subgraph '%s' is declared %s but receives "
                           "%s", sg->inputs[i].name, sg->name, mlcc_dtype_name(want),
                           mlcc_dtype_name(in[i]->dtype));
    }
  }
  for (uint32_t k = 0; k < sg->n_consts && s == NULL; ++k) {
    const mlcc_subgraph_const_t* c = &sg->consts[k];
    s = add_const(lc, c->name, c->dtype, &c->shape, c->data, false, &vals[sg->n_inputs + k]);
  }
  for (uint32_t k = 0; k < sg->n_captures && s == NULL; ++k) {
    mlcc_value_t* v = sg->captured != NULL ? sg->captured[k] : NULL;
    const char* name = sg->slot_names[sg->first_capture + k];
    if (v == NULL) {
      s = mlcc_make_status(MLCC_STATUS_INTERNAL, "outer-scope value '%s' of subgraph '%s' is "
                           "not bound", name, sg->name);
    } else if (!v->shape_known) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "subgraph '%s' reads '%s', which is computed after the node that "
                           "holds the subgraph (the model's nodes are not in topological "
                           "order)", sg->name, name);
    } else if (v->bound_dims != 0) {
      // A capture is not a use the producer saw (n_uses), so its own check
      // could not refuse this reader.
      s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                           "subgraph '%s' reads '%s', whose shape is data-dependent (mlcc "
                           "supports data-dependent shapes only at the graph's boundary)",
                           sg->name, name);
    }
    vals[sg->first_capture + k] = v;
  }
  for (uint32_t j = 0; j < sg->n_nodes && s == NULL; ++j) {
    const mlcc_subgraph_node_t* tn = &sg->nodes[j];
    // The operator table's arity, as the verifier checks it for the main
    // graph: shape inference relies on it (an extra output would be left
    // without a shape).
    const mlcc_op_desc_t* d = mlcc_op_desc(tn->op);
    if (d == NULL || tn->n_inputs < d->in_min || tn->n_inputs > d->in_max ||
        tn->n_outputs < d->out_min || tn->n_outputs > d->out_max) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "subgraph '%s': node #%u '%s' (%s, opset %d) has %u inputs and %u "
                           "outputs; %s takes %u to %u inputs and produces %u to %u outputs",
                           sg->name, j, tn->name ? tn->name : "", d ? d->name : "?", tn->opset,
                           tn->n_inputs, tn->n_outputs, d ? d->name : "?", d ? d->in_min : 0,
                           d ? d->in_max : 0, d ? d->out_min : 0, d ? d->out_max : 0);
      break;
    }
    for (uint32_t k = 0; k < d->in_min && k < tn->n_inputs && s == NULL; ++k) {
      if (tn->inputs[k] < 0) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "subgraph '%s': node #%u '%s' (%s, opset %d): required input %u "
                             "is missing", sg->name, j, tn->name ? tn->name : "", d->name,
                             tn->opset, k);
      }
    }
    for (uint32_t k = 0; k < d->out_min && k < tn->n_outputs && s == NULL; ++k) {
      if (tn->outputs[k] < 0) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "subgraph '%s': node #%u '%s' (%s, opset %d): required output %u "
                             "is missing", sg->name, j, tn->name ? tn->name : "", d->name,
                             tn->opset, k);
      }
    }
    if (s != NULL) break;
    mlcc_value_t** ins = io;
    mlcc_value_t** outs = io + tn->n_inputs;
    for (uint32_t k = 0; k < tn->n_inputs; ++k) {
      ins[k] = tn->inputs[k] >= 0 ? vals[tn->inputs[k]] : NULL;
      if (tn->inputs[k] >= 0 && ins[k] == NULL && s == NULL) {
        s = mlcc_make_status(MLCC_STATUS_INTERNAL, "subgraph '%s': '%s' is read before it is "
                             "computed", sg->name, sg->slot_names[tn->inputs[k]]);
      }
    }
    for (uint32_t k = 0; k < tn->n_outputs && s == NULL; ++k) {
      outs[k] = NULL;
      if (tn->outputs[k] < 0) continue;
      s = mlcc_graph_add_temp_value(graph, sg->slot_names[tn->outputs[k]], &outs[k]);
      vals[tn->outputs[k]] = outs[k];
    }
    // Nested subgraphs: bind their captures to this copy's values.
    const mlcc_attr_t* attrs = tn->attrs;
    for (uint32_t a = 0; a < tn->n_attrs && s == NULL; ++a) {
      const mlcc_subgraph_t* g = tn->attrs[a].kind == MLCC_ATTR_GRAPH ? tn->attrs[a].g : NULL;
      if (g == NULL || g->parent_slots == NULL) continue;
      if (attrs == tn->attrs) {
        mlcc_attr_t* copy = (mlcc_attr_t*)mlcc_arena_alloc(
            &graph->arena, tn->n_attrs * sizeof(mlcc_attr_t), _Alignof(mlcc_attr_t));
        if (copy == NULL) {
          s = oom();
          break;
        }
        memcpy(copy, tn->attrs, tn->n_attrs * sizeof(mlcc_attr_t));
        attrs = copy;
      }
      mlcc_subgraph_t* closure = (mlcc_subgraph_t*)mlcc_arena_alloc(
          &graph->arena, sizeof(*closure), _Alignof(mlcc_subgraph_t));
      mlcc_value_t** bound = (mlcc_value_t**)mlcc_arena_alloc(
          &graph->arena, g->n_captures * sizeof(*bound), _Alignof(mlcc_value_t*));
      if (closure == NULL || bound == NULL) {
        s = oom();
        break;
      }
      *closure = *g;
      for (uint32_t k = 0; k < g->n_captures; ++k) bound[k] = vals[g->parent_slots[k]];
      closure->captured = bound;
      closure->parent_slots = NULL;
      ((mlcc_attr_t*)attrs)[a].g = closure;
    }
    if (s == NULL) {
      s = add_node(lc, tn->op, tn->opset, tn->name, ins, tn->n_inputs, outs, tn->n_outputs,
                   attrs, tn->n_attrs);
    }
  }
  for (uint32_t k = 0; k < sg->n_outputs && s == NULL; ++k) {
    out[k] = vals[sg->output_slots[k]];
    mlcc_dtype_t want = sg->outputs[k].dtype;
    if (out[k] == NULL) {
      s = mlcc_make_status(MLCC_STATUS_INTERNAL, "subgraph '%s': output '%s' is not computed",
                           sg->name, sg->outputs[k].name);
    } else if (want != MLCC_DTYPE_UNDEFINED && out[k]->dtype != want) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "output '%s' of subgraph '%s' is declared %s but computed as %s",
                           sg->outputs[k].name, sg->name, mlcc_dtype_name(want),
                           mlcc_dtype_name(out[k]->dtype));
    }
  }
  free(vals);
  free(io);
  return s;
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

static mlcc_status_t lower_if(lower_ctx_t* lc, mlcc_node_t* node) {
  const mlcc_subgraph_t* br[2] = {NULL, NULL};
  static const char* const kNames[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    MLCC_RETURN_IF_ERROR(require_graph(node, kNames[b], &br[b]));
    MLCC_RETURN_IF_ERROR(check_arity(node, kNames[b], br[b], 0, node->n_outputs,
                                     "one output per output of the If"));
  }
  mlcc_value_t* cond = mlcc_node_input(node, 0);
  if (cond == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "If needs input 0 'cond'");
  }
  MLCC_RETURN_IF_ERROR(check_scalar(node, "input 'cond'", cond, true));
  uint32_t n = node->n_outputs;
  mlcc_value_t** vals = (mlcc_value_t**)calloc(2 * (size_t)n, sizeof(*vals));
  if (vals == NULL) return oom();
  mlcc_status_t s = mlcc_ok_status();
  if (cond->kind == MLCC_VALUE_CONSTANT) {
    int b = const_bool(cond) ? 0 : 1;
    s = inline_subgraph(lc, node, br[b], NULL, vals);
    if (s != NULL) s = mlcc_status_annotate(s, "%s (subgraph '%s')", kNames[b], br[b]->name);
    for (uint32_t j = 0; j < n && s == NULL; ++j) {
      s = bind_output(lc, node, vals[j], node->outputs[j]);
    }
    free(vals);
    return s;
  }
  // Run-time condition: both branches, then one Where per output.
  for (int b = 0; b < 2 && s == NULL; ++b) {
    s = inline_subgraph(lc, node, br[b], NULL, vals + (size_t)b * n);
    if (s != NULL) s = mlcc_status_annotate(s, "%s (subgraph '%s')", kNames[b], br[b]->name);
  }
  for (uint32_t j = 0; j < n && s == NULL; ++j) {
    if (node->outputs[j] != NULL && !same_type(vals[j], vals[n + j])) {
      char tb[200], eb[200];
      mlcc_status_t r = runtime_error(lc, node, "input 'cond'", "condition", cond);
      s = mlcc_status_annotate(r, "output %u is %s in then_branch and %s in else_branch; "
                               "selecting at run time needs equal types and shapes", j,
                               type_str(vals[j], tb, sizeof(tb)),
                               type_str(vals[n + j], eb, sizeof(eb)));
    }
  }
  mlcc_value_t* c = cond;
  if (s == NULL && cond->shape.rank != 0) {  // a one-element [1] etc.: make it a scalar
    mlcc_shape_t empty;
    memset(&empty, 0, sizeof(empty));
    empty.rank = 1;
    mlcc_value_t* shape = NULL;
    static const int64_t kNoDims[1] = {0};
    s = add_const(lc, "scalar_shape", MLCC_DTYPE_I64, &empty, kNoDims, false, &shape);
    mlcc_value_t* ins[2] = {cond, shape};
    if (s == NULL) {
      s = add_helper(lc, MLCC_OP_RESHAPE, node, ins, 2, NULL, 0, cond->name, NULL, &c);
    }
  }
  for (uint32_t j = 0; j < n && s == NULL; ++j) {
    if (node->outputs[j] == NULL) continue;
    mlcc_value_t* ins[3] = {c, vals[j], vals[n + j]};
    s = add_helper(lc, MLCC_OP_WHERE, node, ins, 3, NULL, 0, NULL, node->outputs[j], NULL);
  }
  free(vals);
  return s;
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

static mlcc_status_t lower_loop(lower_ctx_t* lc, mlcc_node_t* node) {
  const mlcc_subgraph_t* body = NULL;
  MLCC_RETURN_IF_ERROR(require_graph(node, "body", &body));
  if (node->n_inputs < 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Loop needs inputs 'M' and 'cond' (each may be empty); it has %u "
                            "input(s)", node->n_inputs);
  }
  uint32_t n_carried = node->n_inputs - 2;
  if (node->n_outputs < n_carried) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Loop has %u loop-carried inputs but only %u outputs",
                            n_carried, node->n_outputs);
  }
  uint32_t n_scan = node->n_outputs - n_carried;
  MLCC_RETURN_IF_ERROR(check_arity(node, "body", body, 2 + n_carried, 1 + n_carried + n_scan,
                                   "iteration number, condition and the loop-carried values "
                                   "in; condition, loop-carried values and scan outputs out"));
  for (uint32_t j = 0; j < n_carried; ++j) {
    if (node->inputs[2 + j] == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Loop input %u (initial value of loop-carried value %u) is "
                              "missing", 2 + j, j);
    }
  }
  mlcc_value_t* trip = mlcc_node_input(node, 0);
  mlcc_value_t* cond = mlcc_node_input(node, 1);
  int64_t max_trip = INT64_MAX;
  bool keep_going = true;
  if (trip != NULL) {
    MLCC_RETURN_IF_ERROR(check_scalar(node, "input 'M' (trip count)", trip, false));
    if (trip->kind != MLCC_VALUE_CONSTANT) {
      return runtime_error(lc, node, "input 'M'", "trip count", trip);
    }
    max_trip = mlcc_value_const_i64(trip, 0);
  }
  if (cond != NULL) {
    MLCC_RETURN_IF_ERROR(check_scalar(node, "input 'cond'", cond, true));
    if (cond->kind != MLCC_VALUE_CONSTANT) {
      return runtime_error(lc, node, "input 'cond'", "loop condition", cond);
    }
    keep_going = const_bool(cond);
  }
  if (cond == NULL && max_trip > MLCC_LOWER_MAX_ITERATIONS) {  // fail before unrolling
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Loop runs %" PRId64 " iterations; mlcc unrolls loops at compile "
                            "time and stops at %d", max_trip, MLCC_LOWER_MAX_ITERATIONS);
  }
  if (trip == NULL && cond == NULL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Loop has neither a trip count nor a condition, so it never "
                            "ends");
  }
  uint32_t n_body_out = 1 + n_carried + n_scan;
  mlcc_value_t** bound = (mlcc_value_t**)calloc(2 + (size_t)n_carried, sizeof(*bound));
  mlcc_value_t** outs = (mlcc_value_t**)calloc(n_body_out, sizeof(*outs));
  mlcc_value_t** scans = NULL;  // [iteration][n_scan]
  size_t scans_cap = 0;
  if (bound == NULL || outs == NULL) {
    free(bound);
    free(outs);
    return oom();
  }
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t j = 0; j < n_carried; ++j) bound[2 + j] = node->inputs[2 + j];
  mlcc_value_t* cond_in = cond;
  if (cond_in == NULL) {  // the body still takes a condition: true
    mlcc_shape_t scalar;
    memset(&scalar, 0, sizeof(scalar));
    static const uint8_t kTrue[1] = {1};
    s = add_const(lc, "cond", MLCC_DTYPE_BOOL, &scalar, kTrue, false, &cond_in);
  }
  uint32_t it = 0;
  for (; s == NULL; ++it) {
    if ((int64_t)it >= max_trip || !keep_going) break;
    if (it >= MLCC_LOWER_MAX_ITERATIONS) {
      s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                           "Loop runs more than %d iterations; mlcc unrolls loops at compile "
                           "time and stops there", MLCC_LOWER_MAX_ITERATIONS);
      break;
    }
    s = const_i64(lc, "iteration", it, 0, &bound[0]);
    bound[1] = cond_in;
    if (s == NULL) s = inline_subgraph(lc, node, body, bound, outs);
    if (s != NULL) {
      s = mlcc_status_annotate(s, "iteration %u of the body (subgraph '%s')", it, body->name);
      break;
    }
    cond_in = outs[0];
    // The body's condition decides whether another iteration runs (unless
    // the trip count ends the loop anyway, or there is no condition input).
    if (cond != NULL && (int64_t)it + 1 < max_trip) {
      s = check_scalar(node, "body output 0 (condition)", outs[0], true);
      if (s == NULL && outs[0]->kind != MLCC_VALUE_CONSTANT) {
        s = runtime_error(lc, node, "body output 0", "the condition after an iteration",
                          outs[0]);
      }
      if (s != NULL) {
        s = mlcc_status_annotate(s, "iteration %u of the body (subgraph '%s')", it,
                                 body->name);
        break;
      }
      keep_going = const_bool(outs[0]);
    }
    for (uint32_t j = 0; j < n_carried && s == NULL; ++j) {
      if (outs[1 + j]->dtype != node->inputs[2 + j]->dtype) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "Loop-carried value %u is %s initially but the body computes "
                             "it as %s in iteration %u", j,
                             mlcc_dtype_name(node->inputs[2 + j]->dtype),
                             mlcc_dtype_name(outs[1 + j]->dtype), it);
      }
      bound[2 + j] = outs[1 + j];
    }
    if (s == NULL && n_scan > 0) {
      if ((size_t)(it + 1) * n_scan > scans_cap) {
        size_t cap = scans_cap ? scans_cap * 2 : (size_t)n_scan * 8;
        mlcc_value_t** grown = (mlcc_value_t**)realloc(scans, cap * sizeof(*scans));
        if (grown == NULL) {
          s = oom();
          break;
        }
        scans = grown;
        scans_cap = cap;
      }
      memcpy(scans + (size_t)it * n_scan, outs + 1 + n_carried, n_scan * sizeof(*scans));
    }
  }
  uint32_t n_iter = it;
  for (uint32_t j = 0; j < n_carried && s == NULL; ++j) {
    s = bind_output(lc, node, bound[2 + j], node->outputs[j]);
  }
  mlcc_value_t** column = (mlcc_value_t**)calloc(n_iter ? n_iter : 1, sizeof(*column));
  if (s == NULL && column == NULL) s = oom();
  for (uint32_t k = 0; k < n_scan && s == NULL; ++k) {
    mlcc_value_t* dst = node->outputs[n_carried + k];
    if (dst == NULL) continue;
    if (n_iter == 0) {
      s = empty_scan_output(lc, node, &body->outputs[1 + n_carried + k], 0, dst);
      continue;
    }
    for (uint32_t t = 0; t < n_iter && s == NULL; ++t) {
      column[t] = scans[(size_t)t * n_scan + k];
      if (!same_type(column[t], column[0])) {
        char ab[200], bb[200];
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "Loop scan output %u is %s in iteration 0 but %s in iteration "
                             "%u; scan outputs must keep their type and shape", k,
                             type_str(column[0], ab, sizeof(ab)),
                             type_str(column[t], bb, sizeof(bb)), t);
      }
    }
    if (s == NULL) s = stack_values(lc, node, column, n_iter, 0, dst, NULL);
  }
  free(column);
  free(scans);
  free(bound);
  free(outs);
  return s;
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

// Reads INTS attribute |name| of |count| values (all |def| when absent) into
// |out|; INVALID_MODEL for another count.
static mlcc_status_t scan_ints(const mlcc_node_t* node, const char* name, uint32_t count,
                               int64_t def, int64_t* out) {
  const int64_t* v = NULL;
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, name, &v, &n));
  if (v != NULL && n != count) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Scan attribute '%s' must have %u values (one per %s); got %u",
                            name, count, strstr(name, "output") ? "scan output" : "scan input",
                            n);
  }
  for (uint32_t i = 0; i < count; ++i) out[i] = v != NULL ? v[i] : def;
  return mlcc_ok_status();
}

static mlcc_status_t check_directions(const char* name, const int64_t* d, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    if (d[i] != 0 && d[i] != 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Scan attribute '%s' values must be 0 (forward) or 1 (reverse); "
                              "got %" PRId64 " at index %u", name, d[i], i);
    }
  }
  return mlcc_ok_status();
}

// Normalizes |axis| of attribute |name| against |rank|: [0, rank-1], and
// also [-rank, -1] from opset 11.
static mlcc_status_t scan_axis(const mlcc_node_t* node, const char* name, uint32_t index,
                               int64_t axis, int32_t rank, int64_t* out) {
  int64_t lo = node->opset >= 11 ? -(int64_t)rank : 0;
  if (axis < lo || axis >= rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Scan attribute '%s'[%u] must be in [%" PRId64 ", %d] for rank "
                            "%d; got %" PRId64, name, index, lo, (int)rank - 1, (int)rank,
                            axis);
  }
  *out = axis < 0 ? axis + rank : axis;
  return mlcc_ok_status();
}

typedef struct scan_plan_t {
  uint32_t n_state, n_in, n_out;  // N, M, K
  int64_t* in_dirs;               // [M]
  int64_t* in_axes;               // [M] (after removing the batch axis for Scan-8)
  int64_t* out_dirs;              // [K]
  int64_t* out_axes;              // [K] raw attribute values (normalized per output)
  int64_t steps;                  // sequence length T
} scan_plan_t;

// Runs the sequence once: |states| (N values, updated in place) and the
// scan inputs |xs| (M values); writes scan output k stacked into |dst[k]|
// (NULL: a new value, returned in |dst[k]| too; an omitted output stays NULL
// when |skip[k]|).
static mlcc_status_t scan_sequence(lower_ctx_t* lc, mlcc_node_t* node,
                                   const mlcc_subgraph_t* body, const scan_plan_t* p,
                                   mlcc_value_t** states, mlcc_value_t* const* xs,
                                   mlcc_value_t** dst, const bool* skip) {
  uint32_t N = p->n_state, M = p->n_in, K = p->n_out;
  mlcc_value_t** bound = (mlcc_value_t**)calloc((size_t)N + M + 1, sizeof(*bound));
  mlcc_value_t** outs = (mlcc_value_t**)calloc((size_t)N + K + 1, sizeof(*outs));
  mlcc_value_t** per_step = (mlcc_value_t**)calloc(
      (size_t)(p->steps ? p->steps : 1) * (K ? K : 1), sizeof(*per_step));
  mlcc_value_t** column = (mlcc_value_t**)calloc(p->steps ? p->steps : 1, sizeof(*column));
  mlcc_status_t s = mlcc_ok_status();
  if (!bound || !outs || !per_step || !column) s = oom();
  for (int64_t t = 0; t < p->steps && s == NULL; ++t) {
    for (uint32_t j = 0; j < N; ++j) bound[j] = states[j];
    for (uint32_t i = 0; i < M && s == NULL; ++i) {
      int64_t at = p->in_dirs[i] ? p->steps - 1 - t : t;
      s = select_slice(lc, node, xs[i], at, p->in_axes[i], &bound[N + i]);
    }
    if (s == NULL) s = inline_subgraph(lc, node, body, bound, outs);
    for (uint32_t j = 0; j < N && s == NULL; ++j) {
      if (!same_type(outs[j], states[j])) {
        char ab[200], bb[200];
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "Scan state %u is %s before the step but the body computes %s; "
                             "states must keep their type and shape", j,
                             type_str(states[j], ab, sizeof(ab)),
                             type_str(outs[j], bb, sizeof(bb)));
      }
    }
    if (s != NULL) {
      s = mlcc_status_annotate(s, "step %" PRId64 " of the body (subgraph '%s')", t,
                               body->name);
      break;
    }
    for (uint32_t j = 0; j < N; ++j) states[j] = outs[j];
    for (uint32_t k = 0; k < K; ++k) per_step[(size_t)t * K + k] = outs[N + k];
  }
  for (uint32_t k = 0; k < K && s == NULL; ++k) {
    if (skip[k]) continue;
    const mlcc_subgraph_value_info_t* info = &body->outputs[N + k];
    if (p->steps == 0) {
      // Scan-8 stacks per batch item: there the empty output needs a value.
      int64_t axis = p->out_axes[k] < 0 ? p->out_axes[k] + info->shape.rank + 1
                                        : p->out_axes[k];
      if (dst[k] == NULL) {
        s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                             "Scan with an empty sequence and a batch is not supported");
      } else {
        s = empty_scan_output(lc, node, info, axis, dst[k]);
      }
      continue;
    }
    int64_t axis = 0;
    int32_t rank = per_step[k]->shape.rank + 1;
    s = scan_axis(node, "scan_output_axes", k, p->out_axes[k], rank, &axis);
    for (int64_t t = 0; t < p->steps && s == NULL; ++t) {
      int64_t from = p->out_dirs[k] ? p->steps - 1 - t : t;
      column[t] = per_step[(size_t)from * K + k];
      if (!same_type(column[t], per_step[k])) {
        char ab[200], bb[200];
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "Scan output %u is %s in step 0 but %s in step %" PRId64
                             "; scan outputs must keep their type and shape", k,
                             type_str(per_step[k], ab, sizeof(ab)),
                             type_str(column[t], bb, sizeof(bb)), from);
      }
    }
    if (s == NULL) {
      s = stack_values(lc, node, column, (uint32_t)p->steps, axis, dst[k], &dst[k]);
    }
  }
  free(bound);
  free(outs);
  free(per_step);
  free(column);
  return s;
}

// The directions and axes attributes of Scan into |p| (Scan-8 has only
// 'directions'; its axes are fixed).
static mlcc_status_t scan_attrs(const mlcc_node_t* node, bool batched, scan_plan_t* p) {
  uint32_t M = p->n_in, K = p->n_out;
  mlcc_status_t s = mlcc_ok_status();
  if (batched) {
    s = scan_ints(node, "directions", M, 0, p->in_dirs);
    if (s == NULL) s = check_directions("directions", p->in_dirs, M);
  } else {
    s = scan_ints(node, "scan_input_directions", M, 0, p->in_dirs);
    if (s == NULL) s = check_directions("scan_input_directions", p->in_dirs, M);
    if (s == NULL) s = scan_ints(node, "scan_output_directions", K, 0, p->out_dirs);
    if (s == NULL) s = check_directions("scan_output_directions", p->out_dirs, K);
    if (s == NULL) s = scan_ints(node, "scan_input_axes", M, 0, p->in_axes);
    if (s == NULL) s = scan_ints(node, "scan_output_axes", K, 0, p->out_axes);
  }
  return s;
}

// The sequence length p->steps of the scan inputs rest[N..N+M) (one for
// all), and for Scan-8 (|batched|) the batch *|batch| that every input
// shares on axis 0 (else 1) and the check of 'sequence_lens' (constant,
// full length).
static mlcc_status_t scan_lengths(lower_ctx_t* lc, mlcc_node_t* node, mlcc_value_t* const* rest,
                                  uint32_t n_rest, uint32_t first, bool batched, scan_plan_t* p,
                                  int64_t* batch) {
  uint32_t N = p->n_state, M = p->n_in;
  *batch = 1;
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t i = 0; i < M && s == NULL; ++i) {
    const mlcc_value_t* x = rest[N + i];
    int64_t axis = 1;
    if (batched) {
      if (x->shape.rank < 2) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "Scan-8 scan input %u must have rank >= 2 (batch, sequence, "
                             "...); got rank %d", i, (int)x->shape.rank);
        break;
      }
      p->in_axes[i] = 0;  // the sequence axis once the batch item is selected
    } else {
      s = scan_axis(node, "scan_input_axes", i, p->in_axes[i], x->shape.rank, &p->in_axes[i]);
      if (s != NULL) break;
      axis = p->in_axes[i];
    }
    int64_t len = x->shape.dims[axis];
    if (i == 0) p->steps = len;
    if (len != p->steps) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "Scan inputs must have one sequence length; scan input 0 has %"
                           PRId64 " and scan input %u has %" PRId64, p->steps, i, len);
    }
  }
  if (s == NULL && batched) {
    for (uint32_t i = 0; i < n_rest && s == NULL; ++i) {
      int64_t b = rest[i]->shape.rank >= 1 ? rest[i]->shape.dims[0] : -1;
      if (i == 0) *batch = b;
      if (b < 0 || b != *batch) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "Scan-8 inputs must share batch dim 0; input %u has shape of "
                             "rank %d%s", first + i, (int)rest[i]->shape.rank,
                             b < 0 ? "" : " and another batch size");
      }
    }
    mlcc_value_t* lens = node->inputs[0];
    if (s == NULL && lens != NULL) {
      if (!mlcc_dtype_is_int(lens->dtype) || lens->shape.rank != 1 ||
          lens->shape.dims[0] != *batch) {
        char tb[200];
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "Scan input 'sequence_lens' must be an integer [%" PRId64 "] "
                             "tensor; got %s", *batch, type_str(lens, tb, sizeof(tb)));
      } else if (lens->kind != MLCC_VALUE_CONSTANT) {
        s = runtime_error(lc, node, "input 'sequence_lens'", "sequence lengths", lens);
      }
      for (int64_t b = 0; b < *batch && s == NULL; ++b) {
        int64_t len = mlcc_value_const_i64(lens, b);
        if (len != p->steps) {
          s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                               "Scan 'sequence_lens'[%" PRId64 "] is %" PRId64 " but the "
                               "sequence has %" PRId64 " steps; only full-length sequences "
                               "are supported", b, len, p->steps);
        }
      }
    }
  }
  return s;
}

// Scan-8: one sequence per batch item (rest[] sliced at item b on axis 0;
// |item_xs| [M] holds one item's scan inputs), then every output stacks the
// items on axis 0.
static mlcc_status_t scan_batched(lower_ctx_t* lc, mlcc_node_t* node,
                                  const mlcc_subgraph_t* body, const scan_plan_t* p,
                                  mlcc_value_t* const* rest, int64_t batch,
                                  mlcc_value_t** item_xs, const bool* skip) {
  uint32_t N = p->n_state, M = p->n_in, K = p->n_out;
  mlcc_status_t s = mlcc_ok_status();
  if (batch == 0 || batch > MLCC_LOWER_MAX_ITERATIONS) {
    s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                         "Scan-8 with batch size %" PRId64 " is not supported", batch);
  }
  size_t per_item = (size_t)N + K;
  mlcc_value_t** items = NULL;  // [batch][N + K]
  if (s == NULL) {
    items = (mlcc_value_t**)calloc((size_t)batch * per_item + 1, sizeof(*items));
    if (items == NULL) s = oom();
  }
  for (int64_t b = 0; b < batch && s == NULL; ++b) {
    mlcc_value_t** item = items + (size_t)b * per_item;
    for (uint32_t j = 0; j < N && s == NULL; ++j) {
      s = select_slice(lc, node, rest[j], b, 0, &item[j]);
    }
    for (uint32_t i = 0; i < M && s == NULL; ++i) {
      s = select_slice(lc, node, rest[N + i], b, 0, &item_xs[i]);
    }
    if (s == NULL) {
      s = scan_sequence(lc, node, body, p, item, item_xs, item + N, skip);
    }
    if (s != NULL) s = mlcc_status_annotate(s, "batch item %" PRId64, b);
  }
  mlcc_value_t** column = NULL;
  if (s == NULL) {
    column = (mlcc_value_t**)calloc((size_t)batch, sizeof(*column));
    if (column == NULL) s = oom();
  }
  for (size_t k = 0; k < per_item && s == NULL; ++k) {
    mlcc_value_t* out = node->outputs[k];
    if (out == NULL) continue;
    for (int64_t b = 0; b < batch; ++b) column[b] = items[(size_t)b * per_item + k];
    s = stack_values(lc, node, column, (uint32_t)batch, 0, out, NULL);
  }
  free(column);
  free(items);
  return s;
}

static mlcc_status_t lower_scan(lower_ctx_t* lc, mlcc_node_t* node) {
  const mlcc_subgraph_t* body = NULL;
  MLCC_RETURN_IF_ERROR(require_graph(node, "body", &body));
  bool batched = node->opset < 9;  // Scan-8: axis 0 is the batch, axis 1 the sequence
  uint32_t first = batched ? 1 : 0;
  if (node->n_inputs <= first) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Scan needs %s at least one state or scan input; it has %u "
                            "input(s)", batched ? "input 'sequence_lens' (may be empty) and"
                                                : "", node->n_inputs);
  }
  int64_t m = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "num_scan_inputs", -1, &m));
  if (mlcc_node_attr(node, "num_scan_inputs") == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Scan needs attribute 'num_scan_inputs'");
  }
  uint32_t n_rest = node->n_inputs - first;
  if (m < 1 || m > (int64_t)n_rest) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Scan attribute 'num_scan_inputs' must be in [1, %u] (the number "
                            "of state and scan inputs); got %" PRId64, n_rest, m);
  }
  scan_plan_t p;
  memset(&p, 0, sizeof(p));
  p.n_in = (uint32_t)m;
  p.n_state = n_rest - p.n_in;
  if (node->n_outputs < p.n_state) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Scan has %u state inputs but only %u outputs", p.n_state,
                            node->n_outputs);
  }
  p.n_out = node->n_outputs - p.n_state;
  uint32_t N = p.n_state, M = p.n_in, K = p.n_out;
  MLCC_RETURN_IF_ERROR(check_arity(node, "body", body, N + M, N + K,
                                   "states and scan-input elements in; states and "
                                   "scan-output elements out"));
  mlcc_value_t* const* rest = node->inputs + first;
  for (uint32_t i = 0; i < n_rest; ++i) {
    if (rest[i] == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Scan input %u is missing",
                              first + i);
    }
  }
  int64_t* ints = (int64_t*)calloc(2 * ((size_t)M + K) + 1, sizeof(int64_t));
  mlcc_value_t** vals = (mlcc_value_t**)calloc(2 * ((size_t)N + M + K) + 1, sizeof(*vals));
  bool* skip = (bool*)calloc((size_t)K + 1, sizeof(bool));
  if (ints == NULL || vals == NULL || skip == NULL) {
    free(ints);
    free(vals);
    free(skip);
    return oom();
  }
  p.in_dirs = ints;
  p.in_axes = ints + M;
  p.out_dirs = ints + 2 * M;
  p.out_axes = ints + 2 * M + K;
  mlcc_value_t** states = vals;            // [N]
  mlcc_value_t** xs = vals + N;            // [M]
  mlcc_value_t** dst = vals + N + M;       // [K]
  mlcc_value_t** item_xs = vals + N + M + K;  // Scan-8: one batch item's scan inputs [M]
  mlcc_status_t s = scan_attrs(node, batched, &p);
  // The sequence length (and the batch for Scan-8).
  int64_t batch = 1;
  if (s == NULL) s = scan_lengths(lc, node, rest, n_rest, first, batched, &p, &batch);
  if (s == NULL && (p.steps > MLCC_LOWER_MAX_ITERATIONS ||
                    batch * p.steps > MLCC_LOWER_MAX_ITERATIONS)) {
    s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                         "Scan runs %" PRId64 " body steps; mlcc unrolls at most %d",
                         batch * p.steps, MLCC_LOWER_MAX_ITERATIONS);
  }
  for (uint32_t k = 0; k < K; ++k) skip[k] = node->outputs[N + k] == NULL;
  if (s == NULL && !batched) {
    for (uint32_t j = 0; j < N; ++j) states[j] = rest[j];
    for (uint32_t i = 0; i < M; ++i) xs[i] = rest[N + i];
    for (uint32_t k = 0; k < K; ++k) dst[k] = node->outputs[N + k];
    s = scan_sequence(lc, node, body, &p, states, xs, dst, skip);
    for (uint32_t j = 0; j < N && s == NULL; ++j) {
      s = bind_output(lc, node, states[j], node->outputs[j]);
    }
  } else if (s == NULL) {
    // Scan-8: one sequence per batch item, then stack the items on axis 0.
    s = scan_batched(lc, node, body, &p, rest, batch, item_xs, skip);
  }
  free(ints);
  free(vals);
  free(skip);
  return s;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

// Unrolls |node| (If/Loop/Scan) and marks it dead; its outputs are then
// written by the new nodes. Errors are annotated with the node.
static mlcc_status_t lower_node(lower_ctx_t* lc, mlcc_node_t* node) {
  mlcc_status_t s;
  switch (node->op) {
    case MLCC_OP_IF: s = lower_if(lc, node); break;
    case MLCC_OP_LOOP: s = lower_loop(lc, node); break;
    case MLCC_OP_SCAN: s = lower_scan(lc, node); break;
    default:
      s = mlcc_make_status(MLCC_STATUS_INTERNAL, "%s is not a control-flow op",
                           mlcc_op_name(node->op));
  }
  if (s != NULL) return mlcc_node_annotate(node, s);
  node->dead = true;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_pass_lower_control_flow(mlcc_graph_t* graph, uint32_t index,
                                           bool allow_eval) {
  if (index >= graph->n_nodes || !mlcc_pass_is_control_flow(graph->nodes[index]->op)) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "lower_control_flow: node %u is not a control-flow node", index);
  }
  mlcc_node_t* node = graph->nodes[index];
  uint32_t n_before = graph->n_nodes;
  lower_ctx_t lc = {.graph = graph, .allow_eval = allow_eval, .next_const = graph->n_values};
  mlcc_status_t s = lower_node(&lc, node);
  uint32_t n_new = graph->n_nodes - n_before;
  if (s != NULL) {
    // Undo: the new nodes die and the node writes its outputs again.
    for (uint32_t i = n_before; i < graph->n_nodes; ++i) graph->nodes[i]->dead = true;
    node->dead = false;
    for (uint32_t j = 0; j < node->n_outputs; ++j) {
      if (node->outputs[j] != NULL) node->outputs[j]->producer = node;
    }
  }
  if (n_new == 0) return s;
  // Move the new nodes (created in topological order) right after |index|.
  mlcc_node_t** moved = (mlcc_node_t**)malloc(n_new * sizeof(*moved));
  if (moved == NULL) return mlcc_status_join(s, oom());
  memcpy(moved, graph->nodes + n_before, n_new * sizeof(*moved));
  memmove(graph->nodes + index + 1 + n_new, graph->nodes + index + 1,
          (n_before - index - 1) * sizeof(*moved));
  memcpy(graph->nodes + index + 1, moved, n_new * sizeof(*moved));
  free(moved);
  return s;
}

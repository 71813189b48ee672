// SPDX-License-Identifier: Apache-2.0
// infer-shapes: dtype/shape inference in graph order, folding constant
// subgraphs on the way so that shape inputs (Reshape's shape, Slice's
// starts, ...) computed by the model are constants when their reader is
// inferred. Control flow (If, Loop, Scan) is unrolled into plain nodes where
// it stands (passes/lower_control_flow.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass.h"
#include "passes/pass_impl.h"

// "[2,?,5]" for a declared shape (-1 dims print as '?'); always terminated.
static char* format_decl_shape(const mlcc_output_decl_t* decl, char* buf, size_t size) {
  if (decl->rank > MLCC_MAX_RANK) {
    snprintf(buf, size, "rank %d", (int)decl->rank);
    return buf;
  }
  size_t used = 0;
  buf[0] = '\0';
  for (int32_t d = 0; d < decl->rank && used < size; ++d) {
    int n = decl->dims[d] < 0
                ? snprintf(buf + used, size - used, "%s?", d ? "," : "[")
                : snprintf(buf + used, size - used, "%s%lld", d ? "," : "[",
                           (long long)decl->dims[d]);
    if (n < 0) break;
    used += (size_t)n;
  }
  if (used < size) snprintf(buf + used, size - used, "%s", decl->rank == 0 ? "[]" : "]");
  return buf;
}

// Holds graph output |index| (inferred) against the type the model declares
// for it, as ONNX Runtime does when it resolves a graph: a declared elem_type
// other than the inferred dtype is INVALID_MODEL (ORT: "Type Error: Type (..)
// of output arg (..) of node (..) does not match expected type (..)"); a
// declared rank or static dim other than the inferred one only warns on
// stderr and the inferred shape is kept (ORT's "Error merging shape info for
// output ... Falling back to lenient merge"). Symbolic/unknown declared dims,
// and dims whose inferred size is only a data-dependent bound, match anything.
// |producer| (NULL for graph inputs and constants) names the writer in
// the warning; the caller annotates an error with it.
static mlcc_status_t check_output_decl(const mlcc_graph_t* graph, uint32_t index,
                                       const mlcc_node_t* producer) {
  const mlcc_output_decl_t* decl = &graph->output_decls[index];
  const mlcc_value_t* v = graph->outputs[index];
  const char* what = v->kind == MLCC_VALUE_INPUT      ? " (a graph input)"
                     : v->kind == MLCC_VALUE_CONSTANT ? " (a constant)"
                                                      : "";
  if (decl->elem_type != 0 && decl->elem_type != (int32_t)v->dtype) {
    const char* op = producer != NULL ? mlcc_op_name(producer->op) : NULL;
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "graph output '%s'%s is declared %s but %s%s %s",
                            v->name, what, mlcc_dtype_name((mlcc_dtype_t)decl->elem_type),
                            op != NULL ? op : "it", op != NULL ? " infers" : " is",
                            mlcc_dtype_name(v->dtype));
  }
  if (decl->rank < 0 || !v->shape_known) return mlcc_ok_status();
  bool clash = decl->rank != v->shape.rank;
  for (int32_t d = 0; !clash && d < decl->rank; ++d) {
    if (decl->dims[d] < 0 || (v->bound_dims >> d) & 1u) continue;
    clash = decl->dims[d] != v->shape.dims[d];
  }
  if (clash) {
    char node_desc[256], declared[160], inferred[160];
    if (producer != NULL) {
      mlcc_node_describe(producer, node_desc, sizeof(node_desc));
    } else {
      snprintf(node_desc, sizeof(node_desc), "%s", graph->name ? graph->name : "");
    }
    fprintf(stderr,
            "mlcc: warning: %s%sgraph output '%s'%s is declared with shape %s but inferred "
            "as %s; using the inferred shape\n",
            node_desc, node_desc[0] ? ": " : "", v->name, what,
            format_decl_shape(decl, declared, sizeof(declared)),
            mlcc_shape_format(&v->shape, inferred, sizeof(inferred)));
  }
  return mlcc_ok_status();
}

// Checks the graph outputs |node| writes that |checked| has not seen yet.
static mlcc_status_t check_node_outputs(const mlcc_graph_t* graph, const mlcc_node_t* node,
                                        uint8_t* checked) {
  for (uint32_t j = 0; j < node->n_outputs; ++j) {
    const mlcc_value_t* out = node->outputs[j];
    if (out == NULL || !out->is_output) continue;
    for (uint32_t i = 0; i < graph->n_outputs; ++i) {
      if (graph->outputs[i] != out || checked[i]) continue;
      checked[i] = 1;
      MLCC_RETURN_IF_ERROR(check_output_decl(graph, i, node));
    }
  }
  return mlcc_ok_status();
}

// Runs each live node's infer function (idempotent: re-running a node that
// is already inferred recomputes the same result). Constant, Shape and Size
// nodes fold right away; with ctx->fold_constants every node whose inputs
// are all constant is evaluated through the host JIT. Errors carry the
// node's description; an infer function returning OK without setting every
// present output is INTERNAL. The first run also checks graph->output_decls
// (check_output_decl) as each output's producer is inferred, then clears it.
mlcc_status_t mlcc_pass_infer_shapes(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                     bool* out_changed) {
  *out_changed = false;
  mlcc_status_t status = mlcc_ok_status();
  uint8_t* checked = NULL;  // checked[i]: graph output i was held against its decl
  if (graph->output_decls != NULL) {
    checked = (uint8_t*)calloc(graph->n_outputs ? graph->n_outputs : 1, 1);
    if (checked == NULL) {
      return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory checking the graph outputs");
    }
  }
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* node = graph->nodes[i];
    if (node->dead) continue;
    if (mlcc_pass_is_control_flow(node->op)) {
      // If/Loop/Scan are unrolled in place (passes/lower_control_flow.c); the
      // new nodes follow at i + 1, already inferred, and are visited next.
      status = mlcc_pass_lower_control_flow(graph, i, ctx->fold_constants);
      if (status != NULL) break;
      *out_changed = true;
      continue;
    }
    const mlcc_op_desc_t* desc = mlcc_op_desc(node->op);
    if (desc == NULL || desc->infer == NULL) {
      status = mlcc_node_annotate(
          node, mlcc_make_status(MLCC_STATUS_INTERNAL, "op has no infer function"));
      break;
    }
    status = desc->infer(node);
    if (status != NULL) {
      status = mlcc_node_annotate(node, status);
      break;
    }
    for (uint32_t j = 0; j < node->n_outputs; ++j) {
      mlcc_value_t* out = node->outputs[j];
      if (out == NULL) continue;
      if (!out->shape_known || out->dtype == MLCC_DTYPE_UNDEFINED) {
        status = mlcc_node_annotate(
            node, mlcc_make_status(MLCC_STATUS_INTERNAL,
                                   "shape inference left output '%s' without %s",
                                   out->name, out->shape_known ? "a dtype" : "a shape"));
        break;
      }
    }
    if (status != NULL) break;
    if (checked != NULL) {
      status = mlcc_node_annotate(node, check_node_outputs(graph, node, checked));
      if (status != NULL) break;
    }
    bool folded = false;
    status = mlcc_pass_try_fold_node(graph, node, ctx->fold_constants, &folded);
    if (status != NULL) break;
    if (folded) *out_changed = true;
  }
  // Outputs no node writes (graph inputs, initializers, or values a lowered
  // subgraph passed through) are checked last.
  for (uint32_t i = 0; checked != NULL && status == NULL && i < graph->n_outputs; ++i) {
    if (checked[i]) continue;
    const mlcc_value_t* out = graph->outputs[i];
    const mlcc_node_t* producer = out->producer != NULL && !out->producer->dead ? out->producer
                                                                               : NULL;
    status = check_output_decl(graph, i, producer);
    if (producer != NULL) status = mlcc_node_annotate(producer, status);
  }
  if (checked != NULL && status == NULL) graph->output_decls = NULL;
  free(checked);
  if (*out_changed) mlcc_graph_compact(graph);
  return status;
}

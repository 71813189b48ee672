// SPDX-License-Identifier: Apache-2.0
// infer-shapes: dtype/shape inference in graph order, folding constant
// subgraphs on the way so that shape inputs (Reshape's shape, Slice's
// starts, ...) computed by the model are constants when their reader is
// inferred. Control flow (If, Loop, Scan) is unrolled into plain nodes where
// it stands (passes/lower_control_flow.c).
#include "passes/pass.h"
#include "passes/pass_impl.h"

// Runs each live node's infer function (idempotent: re-running a node that
// is already inferred recomputes the same result). Constant, Shape and Size
// nodes fold right away; with ctx->fold_constants every node whose inputs
// are all constant is evaluated through the host JIT. Errors carry the
// node's description; an infer function returning OK without setting every
// present output is INTERNAL.
mlcc_status_t mlcc_pass_infer_shapes(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                     bool* out_changed) {
  *out_changed = false;
  mlcc_status_t status = mlcc_ok_status();
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
    bool folded = false;
    status = mlcc_pass_try_fold_node(graph, node, ctx->fold_constants, &folded);
    if (status != NULL) break;
    if (folded) *out_changed = true;
  }
  if (*out_changed) mlcc_graph_compact(graph);
  return status;
}

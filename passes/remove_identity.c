// SPDX-License-Identifier: Apache-2.0
// remove-identity: bypasses nodes that copy their input unchanged.
#include "passes/pass.h"

// True if |v| is a one-element constant with data.
static bool const_scalar(const mlcc_value_t* v) {
  return v != NULL && v->kind == MLCC_VALUE_CONSTANT && v->shape_known && v->data != NULL &&
         mlcc_shape_numel_unchecked(&v->shape) == 1;
}

// True if |node| computes output 0 = input 0 (same dtype and shape) and has
// no other observable output.
static bool is_identity(const mlcc_node_t* node) {
  mlcc_value_t* in = mlcc_node_input(node, 0);
  mlcc_value_t* out = mlcc_node_output(node, 0);
  if (in == NULL || out == NULL) return false;
  switch (node->op) {
    /* Identity(x) -> x */
    case MLCC_OP_IDENTITY:
      break;
    /* Dropout(x) -> x   (mask unused; training_mode absent/false, or true
       with a constant ratio 0: no element is dropped) */
    case MLCC_OP_DROPOUT: {
      mlcc_value_t* mask = mlcc_node_output(node, 1);
      if (mask != NULL && (mask->n_uses > 0 || mask->is_output)) return false;
      mlcc_value_t* training = mlcc_node_input(node, 2);
      if (training != NULL) {
        if (!const_scalar(training)) return false;
        if (mlcc_value_const_i64(training, 0) != 0) {
          mlcc_value_t* ratio = mlcc_node_input(node, 1);
          if (!const_scalar(ratio) || mlcc_value_const_f64(ratio, 0) != 0.0) return false;
        }
      }
      for (uint32_t i = 2; i < node->n_outputs; ++i) {
        if (node->outputs[i] != NULL) return false;
      }
      break;
    }
    /* Reshape/Flatten/Squeeze/Unsqueeze(x) with out shape == x shape -> x */
    case MLCC_OP_RESHAPE:
    case MLCC_OP_FLATTEN:
    case MLCC_OP_SQUEEZE:
    case MLCC_OP_UNSQUEEZE:
      if (!in->shape_known || !out->shape_known) return false;
      if (!mlcc_shape_equal(&in->shape, &out->shape)) return false;
      break;
    default:
      return false;
  }
  // Types must agree whenever they are known (Identity before inference).
  if (in->dtype != MLCC_DTYPE_UNDEFINED && out->dtype != MLCC_DTYPE_UNDEFINED &&
      in->dtype != out->dtype) {
    return false;
  }
  return true;
}

// Redirects every reader of an identity node's output to its input and
// marks the node dead. A node whose output is a graph output is kept (values
// cannot be renamed, and the entry function writes outputs).
mlcc_status_t mlcc_pass_remove_identity(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                        bool* out_changed) {
  *out_changed = false;
  mlcc_graph_recount_uses(graph);
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* node = graph->nodes[i];
    if (node->dead || !is_identity(node)) continue;
    mlcc_value_t* out = node->outputs[0];
    if (out->is_output) continue;
    mlcc_graph_replace_uses(graph, out, node->inputs[0]);
    node->dead = true;
    *out_changed = true;
  }
  if (*out_changed) mlcc_graph_compact(graph);
  return mlcc_ok_status();
}

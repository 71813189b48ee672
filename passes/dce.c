// SPDX-License-Identifier: Apache-2.0
// dce: removes nodes whose results nothing needs.
#include "passes/pass.h"

// True if some present output of |node| is read by a live node or is a
// graph output.
static bool is_needed(const mlcc_node_t* node) {
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    const mlcc_value_t* out = node->outputs[i];
    if (out != NULL && (out->n_uses > 0 || out->is_output)) return true;
  }
  return false;
}

// Marks unneeded nodes dead until nothing changes, then compacts (which
// recounts uses). Constants that lose their last reader stay in
// graph->values but are no longer referenced, so nothing emits them.
mlcc_status_t mlcc_pass_dce(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph, bool* out_changed) {
  *out_changed = false;
  mlcc_graph_recount_uses(graph);
  bool changed = true;
  while (changed) {
    changed = false;
    // Reverse order visits readers before producers, so one sweep usually
    // reaches the fixpoint; the loop guards against any order.
    for (uint32_t i = graph->n_nodes; i-- > 0;) {
      mlcc_node_t* node = graph->nodes[i];
      if (node->dead || is_needed(node)) continue;
      node->dead = true;
      for (uint32_t j = 0; j < node->n_inputs; ++j) {
        mlcc_value_t* in = node->inputs[j];
        if (in != NULL && in->n_uses > 0) in->n_uses--;
      }
      changed = true;
      *out_changed = true;
    }
  }
  if (*out_changed) mlcc_graph_compact(graph);
  return mlcc_ok_status();
}

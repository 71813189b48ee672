// SPDX-License-Identifier: Apache-2.0
// fuse: partitions the live nodes into kernels, each an anchor node followed
// by a chain of elementwise epilogue nodes (see mlcc_kernel_t).
#include <stdlib.h>
#include <string.h>

#include "passes/pass.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory in fusion");
}

// The only present output of |node|, or NULL if it has zero or several.
static mlcc_value_t* single_output(const mlcc_node_t* node) {
  mlcc_value_t* found = NULL;
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    if (node->outputs[i] == NULL) continue;
    if (found != NULL) return NULL;
    found = node->outputs[i];
  }
  return found;
}

typedef struct fuse_state_t {
  const mlcc_graph_t* graph;
  int64_t* pos_of_id;       // node id -> position in graph->nodes, -1 if dead
  int64_t* consumer;        // value id -> position of its first live reader
  bool* assigned;           // position -> already in a kernel
} fuse_state_t;

// True if value |v| is available before the node at position |anchor_pos|
// runs: a graph input, a constant, or the output of an earlier live node.
static bool ready_before(const fuse_state_t* st, const mlcc_value_t* v, int64_t anchor_pos) {
  if (v->kind != MLCC_VALUE_INTERMEDIATE) return true;
  if (v->producer == NULL || v->producer->id >= st->graph->next_node_id) return false;
  int64_t p = st->pos_of_id[v->producer->id];
  return p >= 0 && p < anchor_pos;
}

// Index in |chain[0..n)| of the node whose single output is |v|, or -1.
static int64_t chain_index_of(const fuse_state_t* st, const int64_t* chain, uint32_t n,
                              const mlcc_value_t* v) {
  for (uint32_t i = 0; i < n; ++i) {
    if (single_output(st->graph->nodes[chain[i]]) == v) return i;
  }
  return -1;
}

// True if every use of the outputs of chain[0..len-1) is a read by
// chain[1..len) and none of them is a graph output: then only the last
// node's output needs to be materialized.
static bool chain_closed(const fuse_state_t* st, const int64_t* chain, uint32_t len) {
  const mlcc_graph_t* g = st->graph;
  for (uint32_t i = 0; i + 1 < len; ++i) {
    const mlcc_value_t* v = single_output(g->nodes[chain[i]]);
    if (v == NULL || v->is_output) return false;
    uint32_t reads = 0;
    for (uint32_t j = i + 1; j < len; ++j) {
      const mlcc_node_t* n = g->nodes[chain[j]];
      for (uint32_t s = 0; s < n->n_inputs; ++s) reads += n->inputs[s] == v;
    }
    if (reads != v->n_uses) return false;
  }
  return true;
}

// Extends the chain that starts at |anchor_pos| (already in |chain|) with
// elementwise readers. Returns the new chain length. Rules:
/*   A -> N1 -> N2 ...  where the next candidate is the earliest unassigned
     live reader of any chain value; A grows a chain only when its one
     present output is output 0 (mlcc_emit_store_output applies the epilogue
     to output 0 only: LSTM's ['', Y_h] stays unfused); a node joins while: it
     is ELEMENTWISE with one present output, output 0, of A's output shape;
     each input is either the output of an earlier chain node (any number of
     slots, e.g. SiLU's Mul(x, Sigmoid(x))) or exists before A (kernels run
     at their last node's position). The chain is then cut to the longest
     prefix whose internal values are read only inside the chain and are not
     graph outputs. */
static uint32_t grow_chain(fuse_state_t* st, int64_t anchor_pos, int64_t* chain,
                           uint32_t* carried) {
  const mlcc_graph_t* g = st->graph;
  uint32_t n = 1;
  const mlcc_node_t* anchor = g->nodes[anchor_pos];
  const mlcc_value_t* anchor_out = single_output(anchor);
  if (anchor_out == NULL || anchor->outputs[0] != anchor_out || !anchor_out->shape_known) {
    return n;
  }
  while (n < MLCC_KERNEL_MAX_NODES) {
    // Earliest unassigned live reader of a chain value.
    int64_t c = -1;
    for (uint32_t i = 0; i < n; ++i) {
      const mlcc_value_t* v = single_output(g->nodes[chain[i]]);
      if (v == NULL || v->is_output) continue;
      int64_t first = st->consumer[v->id];
      if (first < 0) continue;
      uint32_t seen = 0;
      for (int64_t p = first; p < (int64_t)g->n_nodes && seen < v->n_uses; ++p) {
        if (c >= 0 && p >= c) break;
        const mlcc_node_t* r = g->nodes[p];
        if (r->dead) continue;
        uint32_t reads = 0;
        for (uint32_t s = 0; s < r->n_inputs; ++s) reads += r->inputs[s] == v;
        seen += reads;
        if (reads > 0 && !st->assigned[p]) {
          c = p;
          break;
        }
      }
    }
    if (c < 0) break;
    const mlcc_node_t* next = g->nodes[c];
    const mlcc_op_desc_t* desc = mlcc_op_desc(next->op);
    if (desc == NULL || !(desc->flags & MLCC_OPF_ELEMENTWISE)) break;
    const mlcc_value_t* out = single_output(next);
    if (out == NULL || next->outputs[0] != out || !out->shape_known ||
        !mlcc_shape_equal(&out->shape, &anchor_out->shape)) {
      break;
    }
    int64_t slot = -1;
    bool ok = true;
    for (uint32_t j = 0; j < next->n_inputs && ok; ++j) {
      const mlcc_value_t* in = next->inputs[j];
      if (in == NULL) continue;
      if (chain_index_of(st, chain, n, in) >= 0) {
        if (slot < 0) slot = j;
      } else if (!ready_before(st, in, anchor_pos)) {
        ok = false;
      }
    }
    if (!ok || slot < 0) break;
    chain[n] = c;
    carried[n] = (uint32_t)slot;
    st->assigned[c] = true;
    ++n;
  }
  while (n > 1 && !chain_closed(st, chain, n)) {
    --n;
    st->assigned[chain[n]] = false;
  }
  return n;
}

// True if |node| only reinterprets its input's bytes with a new shape
// (Reshape family, same dtype and element count) and its output is an
// intermediate that is not a graph output: it can alias its input.
static bool is_alias_node(const mlcc_node_t* node) {
  const mlcc_op_desc_t* desc = mlcc_op_desc(node->op);
  if (desc == NULL || !(desc->flags & MLCC_OPF_RESHAPE)) return false;
  const mlcc_value_t* in = mlcc_node_input(node, 0);
  const mlcc_value_t* out = single_output(node);
  if (in == NULL || out == NULL || node->outputs[0] != out) return false;
  if (out->is_output || out->kind != MLCC_VALUE_INTERMEDIATE) return false;
  if (!in->shape_known || !out->shape_known || in->dtype != out->dtype ||
      in->dtype == MLCC_DTYPE_UNDEFINED) {
    return false;
  }
  int64_t a = 0, b = 0;
  mlcc_status_t sa = mlcc_shape_numel(&in->shape, &a);
  mlcc_status_t sb = mlcc_shape_numel(&out->shape, &b);
  bool ok = sa == NULL && sb == NULL && a == b;
  mlcc_status_free(sa);
  mlcc_status_free(sb);
  return ok;
}

typedef struct kernel_tmp_t {
  uint32_t first;      // index into the flat chain arrays
  uint32_t n_nodes;
  int64_t last_pos;    // position of the last node (execution order key)
} kernel_tmp_t;

static int cmp_kernel_tmp(const void* a, const void* b) {
  int64_t x = ((const kernel_tmp_t*)a)->last_pos, y = ((const kernel_tmp_t*)b)->last_pos;
  return x < y ? -1 : x > y;
}

// Builds graph->kernels (arena-owned) and sets node->kernel. At -O0 every
// live node is its own kernel; otherwise greedy chains from each unassigned
// node in graph order. Kernels are ordered by their last node's position,
// which is a valid execution order (see grow_chain). Sets |*out_changed|
// when any node was fused with another.
mlcc_status_t mlcc_pass_fuse(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph, bool* out_changed) {
  *out_changed = false;
  mlcc_graph_recount_uses(graph);
  uint32_t n = graph->n_nodes;
  size_t n_ids = graph->next_node_id ? graph->next_node_id : 1;
  size_t n_vals = graph->n_values ? graph->n_values : 1;
  fuse_state_t st = {graph, NULL, NULL, NULL};
  st.pos_of_id = (int64_t*)malloc(n_ids * sizeof(int64_t));
  st.consumer = (int64_t*)malloc(n_vals * sizeof(int64_t));
  st.assigned = (bool*)calloc(n ? n : 1, sizeof(bool));
  int64_t* chain = (int64_t*)malloc((n ? n : 1) * sizeof(int64_t));
  uint32_t* carried = (uint32_t*)calloc(n ? n : 1, sizeof(uint32_t));
  kernel_tmp_t* ks = (kernel_tmp_t*)malloc((n ? n : 1) * sizeof(kernel_tmp_t));
  mlcc_status_t status = mlcc_ok_status();
  if (!st.pos_of_id || !st.consumer || !st.assigned || !chain || !carried || !ks) {
    status = oom();
    goto done;
  }
  // Reshape-family nodes alias their input (no kernel, no copy) above -O0.
  for (uint32_t i = 0; i < graph->n_values; ++i) graph->values[i]->alias_of = NULL;
  for (size_t i = 0; i < n_ids; ++i) st.pos_of_id[i] = -1;
  for (size_t i = 0; i < n_vals; ++i) st.consumer[i] = -1;
  for (uint32_t i = 0; i < n; ++i) {
    mlcc_node_t* node = graph->nodes[i];
    node->kernel = -1;
    if (node->dead) continue;
    if (node->id < n_ids) st.pos_of_id[node->id] = i;
    for (uint32_t j = 0; j < node->n_inputs; ++j) {
      mlcc_value_t* in = node->inputs[j];
      if (in != NULL && in->id < n_vals && st.consumer[in->id] < 0) st.consumer[in->id] = i;
    }
  }

  if (ctx->opt_level > 0) {
    for (uint32_t i = 0; i < n; ++i) {
      mlcc_node_t* node = graph->nodes[i];
      if (node->dead || !is_alias_node(node)) continue;
      mlcc_value_t* in = node->inputs[0];
      node->outputs[0]->alias_of = in->alias_of != NULL ? in->alias_of : in;
      st.assigned[i] = true;
      *out_changed = true;
    }
  }

  uint32_t n_kernels = 0, n_flat = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (graph->nodes[i]->dead || st.assigned[i]) continue;
    st.assigned[i] = true;
    chain[n_flat] = i;
    carried[n_flat] = 0;
    uint32_t len = 1;
    if (ctx->opt_level > 0) len = grow_chain(&st, i, chain + n_flat, carried + n_flat);
    if (len > 1) *out_changed = true;
    ks[n_kernels].first = n_flat;
    ks[n_kernels].n_nodes = len;
    ks[n_kernels].last_pos = chain[n_flat + len - 1];
    ++n_kernels;
    n_flat += len;
  }
  qsort(ks, n_kernels, sizeof(*ks), cmp_kernel_tmp);

  // Copy into the arena, then publish (nothing fails after the allocations).
  mlcc_arena_t* a = &graph->arena;
  mlcc_kernel_t* kernels = (mlcc_kernel_t*)mlcc_arena_alloc(
      a, (n_kernels ? n_kernels : 1) * sizeof(mlcc_kernel_t), _Alignof(mlcc_kernel_t));
  mlcc_node_t** nodes = (mlcc_node_t**)mlcc_arena_alloc(
      a, (n_flat ? n_flat : 1) * sizeof(mlcc_node_t*), _Alignof(mlcc_node_t*));
  uint32_t* carried_out =
      (uint32_t*)mlcc_arena_alloc(a, (n_flat ? n_flat : 1) * sizeof(uint32_t), 4);
  if (!kernels || !nodes || !carried_out) {
    status = oom();
    goto done;
  }
  uint32_t w = 0;
  for (uint32_t k = 0; k < n_kernels; ++k) {
    kernels[k].n_nodes = ks[k].n_nodes;
    kernels[k].nodes = nodes + w;
    kernels[k].carried_input = carried_out + w;
    for (uint32_t j = 0; j < ks[k].n_nodes; ++j) {
      mlcc_node_t* node = graph->nodes[chain[ks[k].first + j]];
      nodes[w] = node;
      carried_out[w] = j == 0 ? 0 : carried[ks[k].first + j];
      node->kernel = (int32_t)k;
      ++w;
    }
  }
  graph->kernels = kernels;
  graph->n_kernels = n_kernels;

done:
  free(st.pos_of_id);
  free(st.consumer);
  free(st.assigned);
  free(chain);
  free(carried);
  free(ks);
  return status;
}

// SPDX-License-Identifier: Apache-2.0
// plan-memory: assigns every materialized intermediate value a 64-byte
// aligned slot in one workspace, reusing memory of values that are dead,
// and, for kernels that read each element of a dying input before writing
// the same output element, the input's own slot (in place, choose_inplace).
// Values with data-dependent dims first get their extent slots (see
// add_extent_slots), which stay live until the end of NAME_run.
#include "passes/plan_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/checked_math.h"
#include "passes/pass.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory in plan-memory");
}

// A value that needs a workspace slot and its live range in kernel indices:
// written by kernel |def|, last read by kernel |last| (== def if unread).
typedef struct slot_t {
  mlcc_value_t* value;
  int64_t size;    // bytes rounded up to MLCC_WORKSPACE_ALIGN (>= one unit)
  uint32_t def, last;
  int64_t offset;
  // Concat in place: >= 0 if this value lives inside slot |host| (a Concat
  // output) at byte |host_off| and gets no memory of its own.
  int64_t host;
  int64_t host_off;
  bool hosts;  // some value lives inside this slot
  bool pinned;  // an extent slot, read after the last kernel
  // In place (choose_inplace): >= 0 if this output takes over the bytes of
  // slot |inplace_of|, an input of the same kernel that dies there.
  int64_t inplace_of;
} slot_t;

typedef struct liveness_t {
  slot_t* slots;     // in order of |def| (kernel order), then output index
  uint32_t n_slots;
  int64_t* slot_of;  // value id -> slot index or -1
} liveness_t;

static void liveness_free(liveness_t* lv) {
  free(lv->slots);
  free(lv->slot_of);
  memset(lv, 0, sizeof(*lv));
}

static mlcc_status_t slot_size(const mlcc_value_t* v, int64_t* out_size) {
  *out_size = 0;
  int64_t numel = 0, bytes = 0, elem = (int64_t)mlcc_dtype_size(v->dtype);
  if (!v->shape_known || elem == 0) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "value '%s' has no inferred shape/dtype (run infer-shapes first)",
                            v->name);
  }
  MLCC_RETURN_IF_ERROR(mlcc_shape_numel(&v->shape, &numel));
  const int64_t a = MLCC_WORKSPACE_ALIGN;
  if (!mlcc_checked_mul_i64(numel, elem, &bytes) || !mlcc_checked_add_i64(bytes, a - 1, &bytes)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "value '%s' is too large", v->name);
  }
  bytes = bytes / a * a;
  *out_size = bytes > 0 ? bytes : a;  // distinct addresses even for empty tensors
  return mlcc_ok_status();
}

// Data-dependent shapes (mlcc_value_t.bound_dims, ir/ops/dynamic.c): gives
// every bounded output of a kernel's last node its extent slot, an INT64
// [rank] intermediate appended to that node's outputs, so it is a kernel
// argument (after the ONNX outputs) and gets a workspace slot like any other
// output; the kernel writes the actual dims there and NAME_output_shape reads
// them after NAME_run, so compute_liveness keeps it live to the last kernel.
// Idempotent (values that have a slot keep it).
static mlcc_status_t add_extent_slots(mlcc_graph_t* graph) {
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &graph->kernels[k];
    if (kern->n_nodes == 0) continue;
    mlcc_node_t* node = kern->nodes[kern->n_nodes - 1];
    uint32_t n_onnx = node->n_outputs;
    for (uint32_t i = 0; i < n_onnx; ++i) {
      mlcc_value_t* v = node->outputs[i];
      if (v == NULL || v->bound_dims == 0 || v->extent != NULL) continue;
      char base[96];
      snprintf(base, sizeof(base), "%.80s_extent", v->name ? v->name : "");
      mlcc_value_t* e = NULL;
      MLCC_RETURN_IF_ERROR(mlcc_graph_add_temp_value(graph, base, &e));
      mlcc_value_t** outs = (mlcc_value_t**)mlcc_arena_alloc(
          &graph->arena, (node->n_outputs + 1) * sizeof(*outs), _Alignof(mlcc_value_t*));
      if (outs == NULL) return oom();
      memcpy(outs, node->outputs, node->n_outputs * sizeof(*outs));
      outs[node->n_outputs] = e;
      e->dtype = MLCC_DTYPE_I64;
      e->shape.rank = 1;
      e->shape.dims[0] = v->shape.rank;
      e->shape_known = true;
      e->producer = node;
      node->outputs = outs;
      node->n_outputs++;
      v->extent = e;
    }
  }
  return mlcc_ok_status();
}

// True if |v| is the extent slot of another output of |node|.
static bool is_extent_slot(const mlcc_node_t* node, const mlcc_value_t* v) {
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    if (node->outputs[i] != NULL && node->outputs[i]->extent == v) return true;
  }
  return false;
}

// Concat in place: when a Concat kernel (unfused) writes an intermediate
// whose slabs along |axis| are contiguous (all dims before the axis are 1),
// each input that is an intermediate with its own slot (not a graph output,
// not written by another Concat, read once by this Concat) is placed inside
// the Concat output's slot at its slab, so its producer writes the final
// bytes and the Concat kernel skips the copy (it compares pointers, see
// mlcc_emit_concat). The host slot lives from its first hosted input's
// producer to the last read of any of them.
static void host_concat_inputs(const mlcc_graph_t* graph, liveness_t* lv) {
  size_t n_vals = graph->n_values ? graph->n_values : 1;
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &graph->kernels[k];
    if (kern->n_nodes != 1 || kern->nodes[0]->op != MLCC_OP_CONCAT) continue;
    const mlcc_node_t* node = kern->nodes[0];
    const mlcc_value_t* out = mlcc_node_output(node, 0);
    if (out == NULL || out->id >= n_vals || lv->slot_of[out->id] < 0) continue;
    int64_t hs = lv->slot_of[out->id];
    if (lv->slots[hs].host >= 0) continue;
    int64_t axis = 0;
    mlcc_status_t st = mlcc_node_attr_int(node, "axis", 0, &axis);
    if (st != NULL) {
      mlcc_status_free(st);
      continue;
    }
    int32_t rank = out->shape.rank;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    bool contiguous = true;
    for (int32_t d = 0; d < axis; ++d) contiguous &= out->shape.dims[d] == 1;
    if (!contiguous) continue;
    int64_t elem = (int64_t)mlcc_dtype_size(out->dtype), off = 0;
    for (uint32_t i = 0; i < node->n_inputs; ++i) {
      mlcc_value_t* in = node->inputs[i];
      if (in == NULL) continue;
      int64_t bytes = mlcc_shape_numel_unchecked(&in->shape) * elem;
      int64_t at = off;
      off += bytes;
      if (in->kind != MLCC_VALUE_INTERMEDIATE || in->is_output || in->alias_of != NULL ||
          in->dtype != out->dtype || in->n_uses != 1 || in->id >= n_vals ||
          lv->slot_of[in->id] < 0 || in->producer == NULL ||
          in->producer->op == MLCC_OP_CONCAT || at % MLCC_WORKSPACE_ALIGN != 0) {
        continue;
      }
      bool twice = false;
      for (uint32_t j = 0; j < node->n_inputs; ++j) twice |= j != i && node->inputs[j] == in;
      // Values read through a Reshape alias have more readers than n_uses.
      for (uint32_t v = 0; v < graph->n_values && !twice; ++v) {
        twice = graph->values[v]->alias_of == in;
      }
      slot_t* s = &lv->slots[lv->slot_of[in->id]];
      if (twice || s->host >= 0 || s->hosts) continue;
      s->host = hs;
      s->host_off = at;
      slot_t* h = &lv->slots[hs];
      h->hosts = true;
      if (s->def < h->def) h->def = s->def;
      if (s->last > h->last) h->last = s->last;
    }
  }
}

// Collects the slots of |graph| and their live ranges from graph->kernels.
static mlcc_status_t compute_liveness(const mlcc_graph_t* graph, liveness_t* lv) {
  memset(lv, 0, sizeof(*lv));
  uint32_t live_nodes = 0;
  for (uint32_t i = 0; i < graph->n_nodes; ++i) live_nodes += !graph->nodes[i]->dead;
  if (graph->n_kernels == 0 && live_nodes > 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "plan-memory needs kernels: run the 'fuse' pass before it");
  }
  size_t n_vals = graph->n_values ? graph->n_values : 1;
  uint32_t cap = 0;
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &graph->kernels[k];
    if (kern->n_nodes > 0) cap += kern->nodes[kern->n_nodes - 1]->n_outputs;
  }
  lv->slot_of = (int64_t*)malloc(n_vals * sizeof(int64_t));
  lv->slots = (slot_t*)calloc(cap ? cap : 1, sizeof(slot_t));
  if (lv->slot_of == NULL || lv->slots == NULL) {
    liveness_free(lv);
    return oom();
  }
  for (size_t i = 0; i < n_vals; ++i) lv->slot_of[i] = -1;
  mlcc_status_t status = mlcc_ok_status();
  for (uint32_t k = 0; k < graph->n_kernels && status == NULL; ++k) {
    const mlcc_kernel_t* kern = &graph->kernels[k];
    if (kern->n_nodes == 0) continue;
    // Inputs first: a kernel never reads a value it writes. A read of an
    // alias (Reshape without a kernel) is a read of its source.
    for (uint32_t j = 0; j < kern->n_nodes; ++j) {
      const mlcc_node_t* node = kern->nodes[j];
      for (uint32_t i = 0; i < node->n_inputs; ++i) {
        const mlcc_value_t* in = node->inputs[i];
        if (in != NULL && in->alias_of != NULL) in = in->alias_of;
        if (in == NULL || in->id >= n_vals || lv->slot_of[in->id] < 0) continue;
        lv->slots[lv->slot_of[in->id]].last = k;
      }
    }
    const mlcc_node_t* last = kern->nodes[kern->n_nodes - 1];
    for (uint32_t i = 0; i < last->n_outputs && status == NULL; ++i) {
      mlcc_value_t* out = last->outputs[i];
      if (out == NULL || out->kind != MLCC_VALUE_INTERMEDIATE || out->is_output) continue;
      if (out->id >= n_vals || lv->slot_of[out->id] >= 0) {
        status = mlcc_make_status(MLCC_STATUS_INTERNAL, "value '%s' is written by two kernels",
                                  out->name);
        break;
      }
      slot_t* s = &lv->slots[lv->n_slots];
      status = slot_size(out, &s->size);
      if (status != NULL) break;
      s->value = out;
      s->def = s->last = k;
      // Read by NAME_output_shape after the last kernel: never released.
      if (is_extent_slot(last, out)) {
        s->last = graph->n_kernels - 1;
        s->pinned = true;
      }
      s->offset = -1;
      s->host = -1;
      s->inplace_of = -1;
      lv->slot_of[out->id] = lv->n_slots++;
    }
  }
  // A read at or before the write means the kernel order is not topological
  // (the loop above would have missed that use): report it, never misplan.
  for (uint32_t k = 0; k < graph->n_kernels && status == NULL; ++k) {
    const mlcc_kernel_t* kern = &graph->kernels[k];
    for (uint32_t j = 0; j < kern->n_nodes && status == NULL; ++j) {
      const mlcc_node_t* node = kern->nodes[j];
      for (uint32_t i = 0; i < node->n_inputs; ++i) {
        const mlcc_value_t* in = node->inputs[i];
        if (in != NULL && in->alias_of != NULL) in = in->alias_of;
        if (in == NULL || in->id >= n_vals || lv->slot_of[in->id] < 0) continue;
        if (lv->slots[lv->slot_of[in->id]].def >= k) {
          status = mlcc_make_status(MLCC_STATUS_INTERNAL,
                                    "kernel %u reads '%s' before kernel %u writes it", k,
                                    in->name, lv->slots[lv->slot_of[in->id]].def);
          break;
        }
      }
    }
  }
  if (status == NULL) host_concat_inputs(graph, lv);
  if (status != NULL) liveness_free(lv);
  return status;
}

// True if every read of slot |si| by a node of |kern| is a read of |v|,
// and (|epilogue_only|) none is by the anchor nodes[0].
static bool sole_reader_value(const mlcc_graph_t* graph, const liveness_t* lv,
                              const mlcc_kernel_t* kern, int64_t si, const mlcc_value_t* v,
                              bool epilogue_only) {
  size_t n_vals = graph->n_values ? graph->n_values : 1;
  for (uint32_t j = 0; j < kern->n_nodes; ++j) {
    const mlcc_node_t* node = kern->nodes[j];
    for (uint32_t i = 0; i < node->n_inputs; ++i) {
      const mlcc_value_t* in = node->inputs[i];
      if (in == NULL) continue;
      const mlcc_value_t* src = in->alias_of != NULL ? in->alias_of : in;
      if (src->id >= n_vals || lv->slot_of[src->id] != si) continue;
      if (in != v || (epilogue_only && j == 0)) return false;
    }
  }
  return true;
}

// In place: the slot of an input of kernel |k| that the output of its last
// node may overwrite, or -1; |*out_value| is the kernel's input value (an
// argument) reading that slot. Sharing is correct when the kernel reads each
// element of that input before it stores the output element of the same
// index, and never reads it after that store:
// * an elementwise anchor (MLCC_OPF_ELEMENTWISE rows, mlcc_emit_elementwise)
//   evaluates its whole chain per output element (or vector of lanes): every
//   external input is loaded at its broadcast index, which for an input of
//   the output's shape is the element being stored;
// * a MatMul or Gemm anchor stores each output element once, through
//   mlcc_emit_store_output(_vec), which evaluates the fused epilogue first: an
//   input read only by epilogue nodes is loaded at the same index (the same
//   lanes) right before the store. The anchor's own inputs are read across
//   rows and columns: never candidates.
// Other anchors never qualify: Softmax, LayerNormalization, pooling and
// reductions read neighbours, and Conv's vector paths may store an element
// twice (the depthwise kernel's partial row tile spills into the next row,
// which is stored again later), so a residual read by the second store
// would already be overwritten.
// The input must be an intermediate with a slot of its own (not a graph input
// or output, not a constant, not inside a Concat's slot, not an extent slot)
// whose last reader is kernel k; the kernel reads that slot through exactly
// one value (itself or one Reshape alias of it) with the output's dtype and
// shape (no broadcast), and with a MatMul/Gemm anchor only in the epilogue.
// The output must have a slot of its own (not a graph output, not placed in
// a Concat's slot). Candidates are tried in order of node and input slot.
static int64_t choose_inplace(const mlcc_graph_t* graph, const liveness_t* lv, uint32_t k,
                              mlcc_value_t** out_value) {
  *out_value = NULL;
  const mlcc_kernel_t* kern = &graph->kernels[k];
  if (kern->n_nodes == 0) return -1;
  const mlcc_node_t* anchor = kern->nodes[0];
  const mlcc_op_desc_t* desc = mlcc_op_desc(anchor->op);
  bool elementwise = desc != NULL && (desc->flags & MLCC_OPF_ELEMENTWISE) != 0;
  bool matmul = anchor->op == MLCC_OP_MATMUL || anchor->op == MLCC_OP_GEMM;
  if (!elementwise && !(matmul && kern->n_nodes > 1)) return -1;
  const mlcc_node_t* last = kern->nodes[kern->n_nodes - 1];
  if (last->n_outputs != 1 || last->outputs[0] == NULL) return -1;
  const mlcc_value_t* out = last->outputs[0];
  size_t n_vals = graph->n_values ? graph->n_values : 1;
  if (out->id >= n_vals || lv->slot_of[out->id] < 0) return -1;
  const slot_t* os = &lv->slots[lv->slot_of[out->id]];
  if (os->host >= 0 || os->hosts || os->pinned) return -1;
  for (uint32_t j = matmul ? 1 : 0; j < kern->n_nodes; ++j) {
    const mlcc_node_t* node = kern->nodes[j];
    for (uint32_t i = 0; i < node->n_inputs; ++i) {
      mlcc_value_t* v = node->inputs[i];
      if (v == NULL) continue;
      const mlcc_value_t* src = v->alias_of != NULL ? v->alias_of : v;
      if (src->id >= n_vals || lv->slot_of[src->id] < 0) continue;
      int64_t si = lv->slot_of[src->id];
      const slot_t* s = &lv->slots[si];
      if (src->kind != MLCC_VALUE_INTERMEDIATE || src->is_output || src->bound_dims != 0 ||
          s->last != k || s->host >= 0 || s->pinned || s->size != os->size) {
        continue;
      }
      if (v->dtype != out->dtype || !mlcc_shape_equal(&v->shape, &out->shape)) continue;
      if (!sole_reader_value(graph, lv, kern, si, v, matmul)) continue;
      *out_value = v;
      return si;
    }
  }
  return -1;
}

// Decides in-place outputs for every kernel (choose_inplace): sets
// kernels[k].inplace_input and the output slot's |inplace_of|.
static void plan_inplace(mlcc_graph_t* graph, liveness_t* lv) {
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    mlcc_kernel_t* kern = &graph->kernels[k];
    kern->inplace_input = NULL;
    mlcc_value_t* v = NULL;
    int64_t si = choose_inplace(graph, lv, k, &v);
    if (si < 0) continue;
    const mlcc_value_t* out = kern->nodes[kern->n_nodes - 1]->outputs[0];
    lv->slots[lv->slot_of[out->id]].inplace_of = si;
    kern->inplace_input = v;
  }
}

// A live block of the workspace, kept sorted by offset.
typedef struct block_t {
  int64_t offset, size;
  uint32_t slot;
} block_t;

// Best fit: the smallest gap between live blocks that holds |size| (lowest
// offset on ties), else the end of the last live block.
static int64_t best_fit(const block_t* live, uint32_t n_live, int64_t size) {
  int64_t best = -1, best_gap = 0, prev_end = 0;
  for (uint32_t i = 0; i < n_live; ++i) {
    int64_t gap = live[i].offset - prev_end;
    if (gap >= size && (best < 0 || gap < best_gap)) {
      best = prev_end;
      best_gap = gap;
    }
    int64_t end = live[i].offset + live[i].size;
    if (end > prev_end) prev_end = end;
  }
  return best >= 0 ? best : prev_end;
}

// A placed group for plan_by_size: the slots chained by in-place reuse share
// one block, live from the first one's |def| to the last one's |last|.
typedef struct group_t {
  uint32_t root;  // slot index of the chain's first slot
  int64_t size;
  uint32_t def, last;
  int64_t offset;
} group_t;

static int compare_group_size(const void* a, const void* b) {
  const group_t* x = *(const group_t* const*)a;
  const group_t* y = *(const group_t* const*)b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->def != y->def) return x->def < y->def ? -1 : 1;
  return x->root < y->root ? -1 : (x->root > y->root);
}

static int compare_group_offset(const void* a, const void* b) {
  const group_t* x = *(const group_t* const*)a;
  const group_t* y = *(const group_t* const*)b;
  return x->offset < y->offset ? -1 : (x->offset > y->offset);
}

// The offline "greedy by size" placement (every lifetime is known): groups
// from the largest down, each at the lowest offset where it overlaps no
// already placed group whose live range meets its own (ranges [def, last]
// that share a kernel conflict, so a kernel's outputs never overlap its
// inputs; an in-place chain is one group). It reaches the live-set bound
// where the kernel-order best fit cannot: in vww_mobilenet a 16x48x48
// pointwise output lands after its live 8x48x48 input, whose predecessor's
// dead block it could have shared (294,912 B against a 221,184 B bound).
// On success sets |*out_peak| and the slots' offsets in |out_offsets| (one
// per slot; hosted slots untouched); false on allocation failure (the caller
// fails with RESOURCE_EXHAUSTED).
static bool plan_by_size(const liveness_t* lv, int64_t* out_offsets, int64_t* out_peak) {
  uint32_t n = lv->n_slots;
  *out_peak = 0;
  if (n == 0) return true;
  group_t* groups = (group_t*)calloc(n, sizeof(group_t));
  int64_t* group_of = (int64_t*)malloc(n * sizeof(int64_t));
  group_t** by_size = (group_t**)malloc(n * sizeof(group_t*));
  group_t** conflicts = (group_t**)malloc(n * sizeof(group_t*));
  bool ok = groups != NULL && group_of != NULL && by_size != NULL && conflicts != NULL;
  uint32_t n_groups = 0;
  for (uint32_t i = 0; ok && i < n; ++i) {
    const slot_t* s = &lv->slots[i];
    group_of[i] = -1;
    if (s->host >= 0) continue;
    if (s->inplace_of >= 0 && group_of[s->inplace_of] >= 0) {
      group_t* g = &groups[group_of[s->inplace_of]];
      group_of[i] = group_of[s->inplace_of];
      if (s->size > g->size) g->size = s->size;
      if (s->def < g->def) g->def = s->def;
      if (s->last > g->last) g->last = s->last;
      continue;
    }
    group_of[i] = n_groups;
    groups[n_groups++] = (group_t){i, s->size, s->def, s->last, 0};
  }
  // In-place sources come before their outputs (kernel order), so every
  // chain is complete here; a source defined later would be an mlcc bug and
  // is caught by the caller's fallback (ok stays true, groups stay apart).
  int64_t peak = 0;
  for (uint32_t i = 0; ok && i < n_groups; ++i) by_size[i] = &groups[i];
  if (ok) qsort(by_size, n_groups, sizeof(by_size[0]), compare_group_size);
  for (uint32_t i = 0; ok && i < n_groups; ++i) {
    group_t* g = by_size[i];
    uint32_t n_conf = 0;
    for (uint32_t j = 0; j < i; ++j) {
      const group_t* p = by_size[j];
      if (p->def <= g->last && g->def <= p->last) conflicts[n_conf++] = (group_t*)p;
    }
    qsort(conflicts, n_conf, sizeof(conflicts[0]), compare_group_offset);
    int64_t off = 0;
    for (uint32_t j = 0; j < n_conf; ++j) {
      if (conflicts[j]->offset >= off + g->size) break;  // the gap before it fits
      int64_t end = conflicts[j]->offset + conflicts[j]->size;
      if (end > off) off = end;
    }
    g->offset = off;
    if (off + g->size > peak) peak = off + g->size;
  }
  for (uint32_t i = 0; ok && i < n; ++i) {
    if (group_of[i] >= 0) out_offsets[i] = groups[group_of[i]].offset;
  }
  free(groups);
  free(group_of);
  free(by_size);
  free(conflicts);
  *out_peak = peak;
  return ok;
}

// Assigns ws_offset to the outputs of each kernel's last node that are
// intermediate and not graph outputs (values inside a fused chain get -1).
// Outputs of kernel k are placed while k's inputs are still live, so a
// kernel's outputs never overlap its inputs, except an in-place output
// (choose_inplace, kernels[k].inplace_input), which takes over the block of
// the input it reuses. Sets graph->workspace_size (a multiple of 64) and
// workspace_align (64). A greedy-by-size placement over the same live ranges
// replaces that plan when it needs fewer bytes (plan_by_size).
// Bounded (data-dependent) outputs first get their extent slots
// (add_extent_slots), which live until the end.
// INVALID_ARGUMENT without kernels; INTERNAL for uninferred values.
mlcc_status_t mlcc_pass_plan_memory(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                    bool* out_changed) {
  *out_changed = false;
  MLCC_RETURN_IF_ERROR(add_extent_slots(graph));
  liveness_t lv;
  MLCC_RETURN_IF_ERROR(compute_liveness(graph, &lv));
  plan_inplace(graph, &lv);
  block_t* live = (block_t*)malloc((lv.n_slots ? lv.n_slots : 1) * sizeof(block_t));
  if (live == NULL) {
    liveness_free(&lv);
    return oom();
  }
  // Slots in order of |def| (a Concat host may start before its own kernel).
  uint32_t* order = (uint32_t*)malloc((lv.n_slots ? lv.n_slots : 1) * sizeof(uint32_t));
  if (order == NULL) {
    free(live);
    liveness_free(&lv);
    return oom();
  }
  uint32_t n_order = 0;
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    for (uint32_t i = 0; i < lv.n_slots; ++i) {
      if (lv.slots[i].def == k && lv.slots[i].host < 0) order[n_order++] = i;
    }
  }
  uint32_t n_live = 0, next = 0;
  int64_t peak = 0;
  mlcc_status_t status = mlcc_ok_status();
  for (uint32_t k = 0; k < graph->n_kernels && status == NULL; ++k) {
    // 1. Allocate kernel k's outputs (its inputs are still in |live|).
    for (; next < n_order && lv.slots[order[next]].def == k; ++next) {
      slot_t* s = &lv.slots[order[next]];
      if (s->inplace_of >= 0) {
        // Take over the input's block: it is released at k, this slot is not.
        uint32_t at = 0;
        while (at < n_live && live[at].slot != (uint32_t)s->inplace_of) ++at;
        if (at == n_live) {
          status = mlcc_make_status(MLCC_STATUS_INTERNAL,
                                    "in-place output '%s' reuses a slot that is not live",
                                    s->value->name);
          break;
        }
        s->offset = live[at].offset;
        live[at].slot = order[next];
        continue;
      }
      int64_t off = best_fit(live, n_live, s->size), end = 0;
      if (!mlcc_checked_add_i64(off, s->size, &end)) {
        status = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "workspace size overflows");
        break;
      }
      s->offset = off;
      if (end > peak) peak = end;
      uint32_t at = 0;
      while (at < n_live && live[at].offset <= off) ++at;
      memmove(live + at + 1, live + at, (n_live - at) * sizeof(block_t));
      live[at] = (block_t){off, s->size, order[next]};
      ++n_live;
    }
    // 2. Release every slot whose last reader is k (and unread outputs of k).
    uint32_t w = 0;
    for (uint32_t i = 0; i < n_live; ++i) {
      if (lv.slots[live[i].slot].last != k) live[w++] = live[i];
    }
    n_live = w;
  }
  free(live);
  free(order);
  if (status == NULL && lv.n_slots > 0) {
    // Keep the kernel-order best fit unless the greedy-by-size plan is
    // smaller (plan_by_size).
    int64_t* offsets = (int64_t*)malloc(lv.n_slots * sizeof(int64_t));
    int64_t by_size_peak = 0;
    if (offsets == NULL || !plan_by_size(&lv, offsets, &by_size_peak)) {
      status = oom();
    } else if (by_size_peak < peak) {
      for (uint32_t i = 0; i < lv.n_slots; ++i) {
        if (lv.slots[i].host < 0) lv.slots[i].offset = offsets[i];
      }
      peak = by_size_peak;
    }
    free(offsets);
  }
  if (status == NULL) {
    for (uint32_t i = 0; i < graph->n_values; ++i) graph->values[i]->ws_offset = -1;
    for (uint32_t i = 0; i < lv.n_slots; ++i) {
      const slot_t* s = &lv.slots[i];
      s->value->ws_offset = s->host >= 0 ? lv.slots[s->host].offset + s->host_off : s->offset;
    }
    // Aliases share their source's bytes (-1 if the source has no slot).
    for (uint32_t i = 0; i < graph->n_values; ++i) {
      mlcc_value_t* v = graph->values[i];
      if (v->alias_of != NULL) v->ws_offset = v->alias_of->ws_offset;
    }
    graph->workspace_size = peak;
    graph->workspace_align = MLCC_WORKSPACE_ALIGN;
    *out_changed = lv.n_slots > 0;
  } else {
    for (uint32_t k = 0; k < graph->n_kernels; ++k) graph->kernels[k].inplace_input = NULL;
  }
  liveness_free(&lv);
  return status;
}

mlcc_status_t mlcc_pass_plan_memory_stats(const mlcc_graph_t* graph,
                                          int64_t* out_naive_bytes,
                                          int64_t* out_peak_live_bytes) {
  *out_naive_bytes = 0;
  *out_peak_live_bytes = 0;
  liveness_t lv;
  MLCC_RETURN_IF_ERROR(compute_liveness(graph, &lv));
  uint32_t nk = graph->n_kernels;
  int64_t* delta = (int64_t*)calloc((size_t)nk + 1, sizeof(int64_t));
  if (delta == NULL) {
    liveness_free(&lv);
    return oom();
  }
  int64_t naive = 0;
  for (uint32_t i = 0; i < lv.n_slots; ++i) {
    naive += lv.slots[i].size;
    const slot_t* s = &lv.slots[i];
    if (s->host >= 0) continue;  // inside its Concat's slot
    // An in-place output shares its input's bytes at its own kernel.
    const mlcc_kernel_t* kern = &graph->kernels[s->def];
    uint32_t from = s->def;
    if (kern->inplace_input != NULL && kern->n_nodes > 0 &&
        mlcc_node_output(kern->nodes[kern->n_nodes - 1], 0) == s->value) {
      from = s->def + 1;
    }
    if (from > s->last) continue;
    delta[from] += s->size;
    delta[s->last + 1] -= s->size;
  }
  int64_t cur = 0, peak = 0;
  for (uint32_t k = 0; k < nk; ++k) {
    cur += delta[k];
    if (cur > peak) peak = cur;
  }
  free(delta);
  liveness_free(&lv);
  *out_naive_bytes = naive;
  *out_peak_live_bytes = peak;
  return mlcc_ok_status();
}

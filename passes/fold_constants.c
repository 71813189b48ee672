// SPDX-License-Identifier: Apache-2.0
// fold-constants: replaces nodes whose inputs are all constant by their
// values (Constant, Shape and Size directly; the rest through the host JIT).
#include <stdlib.h>
#include <string.h>

#include "ir/base/checked_math.h"
#include "passes/pass.h"
#include "passes/pass_impl.h"
#include "targets/codegen/codegen.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory while folding a constant");
}

// Turns |value| (an output of a node about to die) into a CONSTANT holding
// a copy of |data|. Fails only before touching |value|.
static mlcc_status_t make_value_constant(mlcc_graph_t* graph, mlcc_value_t* value,
                                         mlcc_dtype_t dtype, const mlcc_shape_t* shape,
                                         const void* data) {
  int64_t numel = 0;
  MLCC_RETURN_IF_ERROR(mlcc_shape_numel(shape, &numel));
  size_t bytes = 0;
  if (!mlcc_checked_mul_size((size_t)numel, mlcc_dtype_size(dtype), &bytes)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "constant '%s' is too large",
                            value->name);
  }
  void* copy = mlcc_arena_alloc(&graph->arena, bytes ? bytes : 1, 64);
  if (copy == NULL) return oom();
  if (bytes) memcpy(copy, data, bytes);
  value->kind = MLCC_VALUE_CONSTANT;
  value->dtype = dtype;
  value->shape = *shape;
  value->shape_known = true;
  value->data = copy;
  value->producer = NULL;
  value->ws_offset = -1;
  return mlcc_ok_status();
}

/* Constant{value|value_float(s)|value_int(s)} -> constant value */
static mlcc_status_t fold_constant_node(mlcc_graph_t* graph, mlcc_node_t* node,
                                        bool* out_folded) {
  mlcc_value_t* out = mlcc_node_output(node, 0);
  if (out == NULL) return mlcc_ok_status();
  mlcc_shape_t shape = {0};
  const mlcc_attr_t* a = NULL;
  mlcc_dtype_t dtype = MLCC_DTYPE_UNDEFINED;
  const void* data = NULL;
  float f = 0;
  int64_t i = 0;
  if ((a = mlcc_node_attr(node, "value")) != NULL && a->kind == MLCC_ATTR_TENSOR) {
    dtype = a->t_dtype;
    shape = a->t_shape;
    data = a->t_data;
  } else if ((a = mlcc_node_attr(node, "value_float")) != NULL &&
             a->kind == MLCC_ATTR_FLOAT) {
    dtype = MLCC_DTYPE_F32;
    f = a->f;
    data = &f;
  } else if ((a = mlcc_node_attr(node, "value_int")) != NULL && a->kind == MLCC_ATTR_INT) {
    dtype = MLCC_DTYPE_I64;
    i = a->i;
    data = &i;
  } else if ((a = mlcc_node_attr(node, "value_floats")) != NULL &&
             a->kind == MLCC_ATTR_FLOATS) {
    dtype = MLCC_DTYPE_F32;
    shape.rank = 1;
    shape.dims[0] = a->count;
    data = a->floats;
  } else if ((a = mlcc_node_attr(node, "value_ints")) != NULL && a->kind == MLCC_ATTR_INTS) {
    dtype = MLCC_DTYPE_I64;
    shape.rank = 1;
    shape.dims[0] = a->count;
    data = a->ints;
  } else {
    return mlcc_ok_status();  // strings etc.: leave it to the kernel (or its error)
  }
  if (mlcc_dtype_size(dtype) == 0 || shape.rank < 0 || shape.rank > MLCC_MAX_RANK) {
    return mlcc_ok_status();
  }
  int64_t numel = 0;
  mlcc_status_t s = mlcc_shape_numel(&shape, &numel);
  if (s != NULL) return mlcc_node_annotate(node, s);
  if (numel > 0 && data == NULL) return mlcc_ok_status();
  s = make_value_constant(graph, out, dtype, &shape, data);
  if (s != NULL) return mlcc_node_annotate(node, s);
  node->dead = true;
  *out_folded = true;
  return mlcc_ok_status();
}

/* Shape(x: static [d0..dn-1]) -> const int64[end-start] {d_start..d_end-1}
   Size(x) -> const int64 scalar numel(x) */
static mlcc_status_t fold_shape_node(mlcc_graph_t* graph, mlcc_node_t* node,
                                     bool* out_folded) {
  mlcc_value_t* in = mlcc_node_input(node, 0);
  mlcc_value_t* out = mlcc_node_output(node, 0);
  if (in == NULL || out == NULL || !in->shape_known) return mlcc_ok_status();
  int64_t vals[MLCC_MAX_RANK] = {0};
  mlcc_shape_t shape = {0};
  if (node->op == MLCC_OP_SIZE) {
    mlcc_status_t s = mlcc_shape_numel(&in->shape, &vals[0]);
    if (s != NULL) return mlcc_node_annotate(node, s);
    shape.rank = 0;
  } else {
    int64_t rank = in->shape.rank, start = 0, end = rank;
    mlcc_status_t s = mlcc_node_attr_int(node, "start", 0, &start);
    if (s == NULL) s = mlcc_node_attr_int(node, "end", rank, &end);
    if (s != NULL) return mlcc_node_annotate(node, s);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    if (start < 0) start = 0;
    if (start > rank) start = rank;
    if (end < 0) end = 0;
    if (end > rank) end = rank;
    shape.rank = 1;
    shape.dims[0] = end > start ? end - start : 0;
    for (int64_t d = start; d < end; ++d) vals[d - start] = in->shape.dims[d];
  }
  mlcc_status_t s = make_value_constant(graph, out, MLCC_DTYPE_I64, &shape, vals);
  if (s != NULL) return mlcc_node_annotate(node, s);
  node->dead = true;
  *out_folded = true;
  return mlcc_ok_status();
}

/* Identity/Reshape/Flatten/Squeeze/Unsqueeze(Const c) -> c's bytes, new shape
   (no copy and no JIT: the output aliases the input's data, which lives as
   long as the graph) */
static bool fold_view_node(mlcc_node_t* node) {
  switch (node->op) {
    case MLCC_OP_IDENTITY:
    case MLCC_OP_RESHAPE:
    case MLCC_OP_FLATTEN:
    case MLCC_OP_SQUEEZE:
    case MLCC_OP_UNSQUEEZE:
      break;
    default:
      return false;
  }
  mlcc_value_t* in = mlcc_node_input(node, 0);
  mlcc_value_t* out = mlcc_node_output(node, 0);
  if (in == NULL || out == NULL || node->n_outputs != 1) return false;
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    if (node->inputs[i] != NULL && node->inputs[i]->kind != MLCC_VALUE_CONSTANT) return false;
  }
  if (!in->shape_known || !out->shape_known || in->dtype != out->dtype) return false;
  int64_t n_in = 0, n_out = 0;
  mlcc_status_t s = mlcc_shape_numel(&in->shape, &n_in);
  if (s == NULL) s = mlcc_shape_numel(&out->shape, &n_out);
  if (s != NULL) {
    mlcc_status_free(s);
    return false;
  }
  if (n_in != n_out || (in->data == NULL && n_in > 0)) return false;
  out->kind = MLCC_VALUE_CONSTANT;
  out->data = in->data;
  out->producer = NULL;
  out->ws_offset = -1;
  node->dead = true;
  return true;
}

mlcc_status_t mlcc_pass_try_fold_node(mlcc_graph_t* graph, mlcc_node_t* node,
                                      bool allow_eval, bool* out_folded) {
  *out_folded = false;
  if (node->dead) return mlcc_ok_status();
  bool any_output = false;
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    mlcc_value_t* out = node->outputs[i];
    if (out == NULL) continue;
    any_output = true;
    // The entry function must write graph outputs; keep their producers.
    if (out->is_output) return mlcc_ok_status();
  }
  if (!any_output) return mlcc_ok_status();
  if (node->op == MLCC_OP_CONSTANT) return fold_constant_node(graph, node, out_folded);
  if (node->op == MLCC_OP_SHAPE || node->op == MLCC_OP_SIZE) {
    return fold_shape_node(graph, node, out_folded);
  }
  if (fold_view_node(node)) {
    *out_folded = true;
    return mlcc_ok_status();
  }
  if (!allow_eval || node->n_inputs == 0) return mlcc_ok_status();
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    mlcc_value_t* in = node->inputs[i];
    if (in != NULL && in->kind != MLCC_VALUE_CONSTANT) return mlcc_ok_status();
  }
  int64_t total = 0;
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    mlcc_value_t* out = node->outputs[i];
    if (out == NULL) continue;
    if (!out->shape_known || mlcc_dtype_size(out->dtype) == 0) return mlcc_ok_status();
    int64_t numel = 0;
    mlcc_status_t s = mlcc_shape_numel(&out->shape, &numel);
    if (s != NULL) {
      mlcc_status_free(s);
      return mlcc_ok_status();
    }
    int64_t bytes = 0;
    if (!mlcc_checked_mul_i64(numel, (int64_t)mlcc_dtype_size(out->dtype), &bytes) ||
        !mlcc_checked_add_i64(total, bytes, &total) || total > MLCC_FOLD_MAX_BYTES) {
      return mlcc_ok_status();  // too big to bake in: compute it at run time
    }
  }
  // The direct DFT costs (output elements) x (signal length): a constant
  // 2^20-point transform would keep the compiler busy for hours. Such a node
  // is computed at run time instead (the signal length is at most the
  // input's largest dim).
  if ((node->op == MLCC_OP_DFT || node->op == MLCC_OP_STFT) && node->inputs[0] != NULL &&
      node->outputs[0] != NULL) {
    int64_t longest = 1, out_numel = mlcc_shape_numel_unchecked(&node->outputs[0]->shape);
    const mlcc_shape_t* in = &node->inputs[0]->shape;
    for (int32_t d = 0; d < in->rank; ++d) longest = in->dims[d] > longest ? in->dims[d] : longest;
    int64_t work = 0;
    if (!mlcc_checked_mul_i64(out_numel, longest, &work) || work > MLCC_FOLD_MAX_WORK) {
      return mlcc_ok_status();
    }
  }
  if (graph->folded_bytes > MLCC_FOLD_MAX_TOTAL_BYTES - total) {
    return mlcc_ok_status();  // the compilation's folding budget is spent
  }
  graph->folded_bytes += total;
  mlcc_status_t s = mlcc_codegen_eval_node(graph, node);
  if (s != NULL) {
    if (mlcc_status_code(s) == MLCC_STATUS_UNIMPLEMENTED) {
      mlcc_status_free(s);
      return mlcc_ok_status();
    }
    return mlcc_node_annotate(node, mlcc_status_annotate(s, "constant folding"));
  }
  // eval_node's contract: outputs are CONSTANT and the node is dead.
  node->dead = true;
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    mlcc_value_t* out = node->outputs[i];
    if (out == NULL) continue;
    if (out->kind != MLCC_VALUE_CONSTANT || (out->data == NULL && total > 0)) {
      return mlcc_node_annotate(
          node, mlcc_make_status(MLCC_STATUS_INTERNAL,
                                 "constant folding left output '%s' without data",
                                 out->name));
    }
    out->producer = NULL;
  }
  *out_folded = true;
  return mlcc_ok_status();
}

// Folds every live node whose present inputs are all constant, in graph
// order (so chains of constant nodes fold in one run). Always allows the
// host JIT: this pass exists to evaluate. Compacts the graph if anything
// was folded.
mlcc_status_t mlcc_pass_fold_constants(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                       bool* out_changed) {
  *out_changed = false;
  mlcc_status_t status = mlcc_ok_status();
  for (uint32_t i = 0; i < graph->n_nodes && status == NULL; ++i) {
    bool folded = false;
    status = mlcc_pass_try_fold_node(graph, graph->nodes[i], true, &folded);
    if (folded) *out_changed = true;
  }
  if (*out_changed) mlcc_graph_compact(graph);
  return status;
}

// SPDX-License-Identifier: Apache-2.0
// fold-batchnorm: folds an inference BatchNormalization into the Conv that
// feeds it by rescaling the Conv's weights and bias at compile time.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory while folding a BatchNormalization");
}

// Element |i| of float32 constant bytes (which may be unaligned when they
// are borrowed from the model file).
static double ld(const void* data, int64_t i) {
  float f;
  memcpy(&f, (const char*)data + i * (int64_t)sizeof(float), sizeof(float));
  return (double)f;
}

static bool is_f32_const(const mlcc_value_t* v) {
  return v != NULL && v->kind == MLCC_VALUE_CONSTANT && v->dtype == MLCC_DTYPE_F32 &&
         v->shape_known && (v->data != NULL || mlcc_shape_numel_unchecked(&v->shape) == 0);
}

// A [m] float32 constant (rank 1, or any rank with exactly m elements).
static bool is_vec(const mlcc_value_t* v, int64_t m) {
  return is_f32_const(v) && v->shape.rank >= 1 && mlcc_shape_numel_unchecked(&v->shape) == m;
}

// Adds a float32 constant named after |base| with a suffix that is unused.
static mlcc_status_t add_f32_constant(mlcc_graph_t* graph, const char* base,
                                      const mlcc_shape_t* shape, const float* data,
                                      mlcc_value_t** out_value) {
  size_t len = strlen(base) + 32;
  char* name = (char*)malloc(len);
  if (name == NULL) return oom();
  for (uint32_t n = 0;; ++n) {
    snprintf(name, len, "%s_bnfold_%u", base, n);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_status_t s =
      mlcc_graph_add_constant(graph, name, MLCC_DTYPE_F32, shape, data, true, out_value);
  free(name);
  return s;
}

// Checks the pattern around |bn| and returns the Conv to fold into, or NULL.
static mlcc_node_t* match(const mlcc_node_t* bn) {
  if (bn->n_inputs < 5) return NULL;
  for (uint32_t i = 1; i < bn->n_outputs; ++i) {
    // Running mean/var outputs only exist in training mode.
    if (bn->outputs[i] != NULL && (bn->outputs[i]->n_uses > 0 || bn->outputs[i]->is_output)) {
      return NULL;
    }
  }
  const mlcc_attr_t* training = mlcc_node_attr(bn, "training_mode");
  if (training != NULL && (training->kind != MLCC_ATTR_INT || training->i != 0)) return NULL;
  mlcc_value_t* x = bn->inputs[0];
  mlcc_value_t* y = mlcc_node_output(bn, 0);
  if (x == NULL || y == NULL || x->n_uses != 1 || x->is_output) return NULL;
  mlcc_node_t* conv = x->producer;
  if (conv == NULL || conv->dead || conv->op != MLCC_OP_CONV || conv->n_outputs != 1 ||
      conv->outputs[0] != x) {
    return NULL;
  }
  if (x->dtype != MLCC_DTYPE_F32 || !x->shape_known || x->shape.rank < 2) return NULL;
  if (!y->shape_known || !mlcc_shape_equal(&x->shape, &y->shape) || y->dtype != x->dtype) {
    return NULL;
  }
  mlcc_value_t* w = mlcc_node_input(conv, 1);
  if (!is_f32_const(w) || w->shape.rank < 1) return NULL;
  int64_t m = w->shape.dims[0];
  if (m != x->shape.dims[1]) return NULL;
  mlcc_value_t* b = mlcc_node_input(conv, 2);
  if (b != NULL && !is_vec(b, m)) return NULL;
  for (uint32_t i = 1; i < 5; ++i) {
    if (!is_vec(bn->inputs[i], m)) return NULL;
  }
  return conv;
}

/* BatchNormalization(Conv(x, W, b?), scale, B, mean, var)
     -> Conv(x, W * s[oc], (b - mean) * s + B)   with s = scale / sqrt(var + eps) */
static mlcc_status_t fold_one(mlcc_graph_t* graph, mlcc_node_t* bn, mlcc_node_t* conv,
                              bool* out_folded) {
  *out_folded = false;
  float eps = 1e-5f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(bn, "epsilon", 1e-5f, &eps));
  mlcc_value_t* w = conv->inputs[1];
  mlcc_value_t* b = mlcc_node_input(conv, 2);
  const void* scale = bn->inputs[1]->data;
  const void* shift = bn->inputs[2]->data;
  const void* mean = bn->inputs[3]->data;
  const void* var = bn->inputs[4]->data;
  int64_t m = w->shape.dims[0];
  int64_t w_numel = mlcc_shape_numel_unchecked(&w->shape);
  int64_t per_oc = m > 0 ? w_numel / m : 0;

  // Build the replacement data first; the graph is untouched until splicing.
  float* new_w = (float*)malloc((size_t)(w_numel > 0 ? w_numel : 1) * sizeof(float));
  float* new_b = (float*)malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
  if (new_w == NULL || new_b == NULL) {
    free(new_w);
    free(new_b);
    return oom();
  }
  for (int64_t oc = 0; oc < m; ++oc) {
    double s = ld(scale, oc) / sqrt(ld(var, oc) + (double)eps);
    for (int64_t k = 0; k < per_oc; ++k) {
      new_w[oc * per_oc + k] = (float)(ld(w->data, oc * per_oc + k) * s);
    }
    double bias = b != NULL ? ld(b->data, oc) : 0.0;
    new_b[oc] = (float)((bias - ld(mean, oc)) * s + ld(shift, oc));
  }
  mlcc_shape_t b_shape = {.rank = 1, .dims = {m}};
  mlcc_value_t* w2 = NULL;
  mlcc_value_t* b2 = NULL;
  mlcc_status_t s = add_f32_constant(graph, w->name, &w->shape, new_w, &w2);
  if (s == NULL) {
    s = add_f32_constant(graph, b != NULL ? b->name : w->name, &b_shape, new_b, &b2);
  }
  free(new_w);
  free(new_b);
  MLCC_RETURN_IF_ERROR(s);  // unused constants left behind are harmless
  mlcc_value_t** inputs = conv->inputs;
  if (conv->n_inputs < 3) {
    inputs = (mlcc_value_t**)mlcc_arena_alloc(&graph->arena, 3 * sizeof(*inputs),
                                              _Alignof(mlcc_value_t*));
    if (inputs == NULL) return oom();
    inputs[0] = conv->inputs[0];
  }

  // Splice: nothing below can fail.
  inputs[1] = w2;
  inputs[2] = b2;
  conv->inputs = inputs;
  conv->n_inputs = 3;
  // The Conv now writes the BatchNormalization's output value directly; this
  // also covers a BN output that is a graph output (values keep their names).
  mlcc_value_t* x = conv->outputs[0];
  mlcc_value_t* y = bn->outputs[0];
  conv->outputs[0] = y;
  y->producer = conv;
  x->producer = NULL;
  bn->dead = true;
  *out_folded = true;
  return mlcc_ok_status();
}

// Folds every eligible BatchNormalization: its Conv's output is read by the
// BN alone, and W, b, scale, B, mean, var are float32 constants of matching
// channel count. Conv weights shared with other nodes are not modified (the
// folded weights are new constants).
mlcc_status_t mlcc_pass_fold_batchnorm(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                       bool* out_changed) {
  *out_changed = false;
  mlcc_graph_recount_uses(graph);
  mlcc_status_t status = mlcc_ok_status();
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* bn = graph->nodes[i];
    if (bn->dead || bn->op != MLCC_OP_BATCH_NORMALIZATION) continue;
    mlcc_node_t* conv = match(bn);
    if (conv == NULL) continue;
    bool folded = false;
    status = fold_one(graph, bn, conv, &folded);
    if (status != NULL) {
      status = mlcc_node_annotate(bn, status);
      break;
    }
    if (folded) *out_changed = true;
  }
  if (*out_changed) mlcc_graph_compact(graph);
  return status;
}

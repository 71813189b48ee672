// SPDX-License-Identifier: Apache-2.0
// canonicalize: rewrites exporter idioms into the single operators the
// emitters have fast kernels for. Today: the decomposed LayerNorm that
// PyTorch exports before opset 17,
//
//   m = ReduceMean(x, axes=[-1]); d = Sub(x, m); p = Pow(d, 2) | Mul(d, d)
//   v = ReduceMean(p, axes=[-1]); s = Sqrt(Add(v, eps)); n = Div(d, s)
//   [n = Mul(n, gamma)] [n = Add(n, beta)]          (either operand order)
//
// becomes LayerNormalization(x, gamma or ones, [beta], axis=-1,
// epsilon=eps) (opset 17) writing the pattern's final value; and the
// decomposed RMSNorm of Llama-style exports (Hugging Face's LlamaRMSNorm:
// x * rsqrt(mean(x^2) + eps) * weight), matched after the LayerNorms,
//
//   p = Pow(x, 2) | Mul(x, x); v = ReduceMean(p, axes=[-1]); s = Sqrt(Add(v, eps))
//   n = Div(x, s) | Mul(x, Reciprocal(s))            (either operand order)
//   [n = Mul(n, gamma)]
//
// becomes RMSNormalization(x, gamma or ones, axis=-1, epsilon=eps) (opset 23).
// The same formula with float math: mean over the last axis of x^2, plus
// eps, square root, divide (stash_type 1 computes in float, as the pattern
// does for float32 x). Last, a remaining Pow(x, 2) with a constant float32
// exponent becomes Mul(x, x) (the correctly rounded square, ONNX Pow / Mul).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass.h"

// The only live reader of |v|, or NULL if it has none, several, or is a
// graph output (the pattern's internal values must die inside it).
static mlcc_node_t* sole_reader(mlcc_node_t* const* readers, const mlcc_value_t* v) {
  if (v == NULL || v->is_output || v->n_uses != 1) return NULL;
  return readers[v->id];
}

// True if |v| is a constant F32 scalar-like (one element) equal to |want|
// (NaN |want| accepts any value and stores it in |*out|).
static bool const_scalar(const mlcc_value_t* v, double* out) {
  if (v == NULL || v->kind != MLCC_VALUE_CONSTANT || !v->shape_known || v->data == NULL) {
    return false;
  }
  if (v->dtype != MLCC_DTYPE_F32 || mlcc_shape_numel_unchecked(&v->shape) != 1) return false;
  *out = mlcc_value_const_f64(v, 0);
  return true;
}

// True if ReduceMean |node| reduces only the last axis of its rank-|rank|
// input and keeps dims.
static bool mean_last_axis(const mlcc_node_t* node, int32_t rank) {
  if (node->op != MLCC_OP_REDUCE_MEAN || node->n_outputs < 1) return false;
  int64_t keep = 1;
  mlcc_status_t s = mlcc_node_attr_int(node, "keepdims", 1, &keep);
  if (s != NULL) {
    mlcc_status_free(s);
    return false;
  }
  if (keep != 1) return false;
  int64_t axis;
  const mlcc_attr_t* a = mlcc_node_attr(node, "axes");
  const mlcc_value_t* ax = mlcc_node_input(node, 1);
  if (a != NULL) {
    if (a->kind != MLCC_ATTR_INTS || a->count != 1 || ax != NULL) return false;
    axis = a->ints[0];
  } else if (ax != NULL) {
    if (ax->kind != MLCC_VALUE_CONSTANT || !ax->shape_known || ax->data == NULL ||
        ax->dtype != MLCC_DTYPE_I64 || mlcc_shape_numel_unchecked(&ax->shape) != 1) {
      return false;
    }
    axis = mlcc_value_const_i64(ax, 0);
  } else {
    return false;
  }
  if (axis < 0) axis += rank;
  return rank >= 1 && axis == rank - 1;
}

// The operand of binary |node| that is not |v| (NULL if both or neither are).
static mlcc_value_t* other_operand(const mlcc_node_t* node, const mlcc_value_t* v) {
  if (node->n_inputs != 2 || node->n_outputs < 1) return NULL;
  if (node->inputs[0] == v && node->inputs[1] != v) return node->inputs[1];
  if (node->inputs[1] == v && node->inputs[0] != v) return node->inputs[0];
  return NULL;
}

// True if |p| (gamma or beta) broadcasts along the last axis only: shape
// [..1.., D] with D the normalized length, and exists before the pattern.
static bool is_param(const mlcc_value_t* p, int64_t len) {
  if (p == NULL || !p->shape_known || p->dtype != MLCC_DTYPE_F32) return false;
  if (p->kind == MLCC_VALUE_INTERMEDIATE) return false;  // keep the rewrite order-safe
  if (p->shape.rank < 1 || p->shape.dims[p->shape.rank - 1] != len) return false;
  return mlcc_shape_numel_unchecked(&p->shape) == len;
}

typedef struct ln_match_t {
  mlcc_node_t* nodes[9];
  uint32_t n_nodes;
  mlcc_value_t *x, *gamma, *beta, *y;
  double eps;
} ln_match_t;

// Matches the pattern rooted at ReduceMean |m0|.
static bool match_layernorm(mlcc_node_t* m0, mlcc_node_t* const* readers, ln_match_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_value_t* x = mlcc_node_input(m0, 0);
  if (x == NULL || !x->shape_known || x->dtype != MLCC_DTYPE_F32 || x->shape.rank < 1) {
    return false;
  }
  int32_t rank = x->shape.rank;
  int64_t len = x->shape.dims[rank - 1];
  if (len <= 0 || !mean_last_axis(m0, rank)) return false;
  mlcc_value_t* mean = mlcc_node_output(m0, 0);
  mlcc_node_t* sub = sole_reader(readers, mean);
  if (sub == NULL || sub->op != MLCC_OP_SUB || sub->n_inputs != 2 || sub->inputs[0] != x ||
      sub->inputs[1] != mean) {
    return false;
  }
  mlcc_value_t* d = mlcc_node_output(sub, 0);
  if (d == NULL || d->is_output || !d->shape_known || !mlcc_shape_equal(&d->shape, &x->shape)) {
    return false;
  }
  out->nodes[out->n_nodes++] = m0;
  out->nodes[out->n_nodes++] = sub;
  out->x = x;
  return true;  // continued in match_tail
}

// Continues the match from d = Sub(x, mean): scans the live nodes for d's
// readers (|readers| keeps one per value).
static bool match_tail(mlcc_graph_t* g, mlcc_node_t* const* readers, ln_match_t* mt) {
  mlcc_value_t* x = mt->x;
  int32_t rank = x->shape.rank;
  int64_t len = x->shape.dims[rank - 1];
  mlcc_value_t* d = mlcc_node_output(mt->nodes[1], 0);
  mlcc_node_t *sq = NULL, *div = NULL;
  for (uint32_t i = 0; i < g->n_nodes; ++i) {
    mlcc_node_t* n = g->nodes[i];
    if (n->dead) continue;
    bool reads = false;
    for (uint32_t s = 0; s < n->n_inputs; ++s) reads |= n->inputs[s] == d;
    if (!reads) continue;
    if (n->op == MLCC_OP_DIV && n->n_inputs == 2 && n->inputs[0] == d && n->inputs[1] != d) {
      if (div != NULL) return false;
      div = n;
    } else if (n->op == MLCC_OP_POW && n->n_inputs == 2 && n->inputs[0] == d &&
               n->inputs[1] != d) {
      double e;
      if (sq != NULL || !const_scalar(n->inputs[1], &e) || e != 2.0) return false;
      sq = n;
    } else if (n->op == MLCC_OP_MUL && n->n_inputs == 2 && n->inputs[0] == d &&
               n->inputs[1] == d) {
      if (sq != NULL) return false;
      sq = n;
    } else {
      return false;
    }
  }
  if (sq == NULL || div == NULL) return false;
  mlcc_node_t* m1 = sole_reader(readers, mlcc_node_output(sq, 0));
  if (m1 == NULL || !mean_last_axis(m1, rank)) return false;
  mlcc_node_t* add = sole_reader(readers, mlcc_node_output(m1, 0));
  if (add == NULL || add->op != MLCC_OP_ADD) return false;
  mlcc_value_t* epsv = other_operand(add, mlcc_node_output(m1, 0));
  if (!const_scalar(epsv, &mt->eps) || !(mt->eps >= 0)) return false;
  mlcc_node_t* sqrt = sole_reader(readers, mlcc_node_output(add, 0));
  if (sqrt == NULL || sqrt->op != MLCC_OP_SQRT) return false;
  mlcc_node_t* div2 = sole_reader(readers, mlcc_node_output(sqrt, 0));
  if (div2 != div || div->inputs[1] != mlcc_node_output(sqrt, 0)) return false;
  mt->nodes[mt->n_nodes++] = sq;
  mt->nodes[mt->n_nodes++] = m1;
  mt->nodes[mt->n_nodes++] = add;
  mt->nodes[mt->n_nodes++] = sqrt;
  mt->nodes[mt->n_nodes++] = div;
  mlcc_value_t* y = mlcc_node_output(div, 0);
  // Optional affine tail.
  mlcc_node_t* mul = sole_reader(readers, y);
  if (mul != NULL && mul->op == MLCC_OP_MUL) {
    mlcc_value_t* gm = other_operand(mul, y);
    mlcc_value_t* o = mlcc_node_output(mul, 0);
    if (is_param(gm, len) && o != NULL && mlcc_shape_equal(&o->shape, &x->shape)) {
      mt->gamma = gm;
      mt->nodes[mt->n_nodes++] = mul;
      y = o;
    }
  }
  mlcc_node_t* badd = sole_reader(readers, y);
  if (badd != NULL && badd->op == MLCC_OP_ADD) {
    mlcc_value_t* bt = other_operand(badd, y);
    mlcc_value_t* o = mlcc_node_output(badd, 0);
    if (is_param(bt, len) && o != NULL && mlcc_shape_equal(&o->shape, &x->shape)) {
      mt->beta = bt;
      mt->nodes[mt->n_nodes++] = badd;
      y = o;
    }
  }
  if (y->dtype != MLCC_DTYPE_F32 || !mlcc_shape_equal(&y->shape, &x->shape)) return false;
  for (uint32_t i = 0; i < mt->n_nodes; ++i) {
    if (mt->nodes[i]->n_outputs != 1) return false;
  }
  mt->y = y;
  return true;
}

// Matches a decomposed RMSNorm rooted at the square |sq| into |mt| (beta
// stays NULL).
static bool match_rmsnorm(mlcc_node_t* sq, mlcc_node_t* const* readers, ln_match_t* mt) {
  memset(mt, 0, sizeof(*mt));
  if (sq->n_inputs != 2 || sq->n_outputs != 1) return false;
  mlcc_value_t* x = sq->inputs[0];
  if (x == NULL || !x->shape_known || x->dtype != MLCC_DTYPE_F32 || x->shape.rank < 1) {
    return false;
  }
  int32_t rank = x->shape.rank;
  int64_t len = x->shape.dims[rank - 1];
  if (len <= 0) return false;
  double e;
  if (sq->op == MLCC_OP_POW) {
    if (!const_scalar(sq->inputs[1], &e) || e != 2.0) return false;
  } else if (sq->op != MLCC_OP_MUL || sq->inputs[1] != x) {
    return false;
  }
  mlcc_node_t* m = sole_reader(readers, mlcc_node_output(sq, 0));
  if (m == NULL || !mean_last_axis(m, rank)) return false;
  mlcc_node_t* add = sole_reader(readers, mlcc_node_output(m, 0));
  if (add == NULL || add->op != MLCC_OP_ADD) return false;
  if (!const_scalar(other_operand(add, mlcc_node_output(m, 0)), &mt->eps) || !(mt->eps >= 0)) {
    return false;
  }
  mlcc_node_t* sqrt = sole_reader(readers, mlcc_node_output(add, 0));
  if (sqrt == NULL || sqrt->op != MLCC_OP_SQRT) return false;
  mlcc_value_t* s = mlcc_node_output(sqrt, 0);
  mlcc_node_t* r = sole_reader(readers, s);
  if (r == NULL) return false;
  mt->nodes[mt->n_nodes++] = sq;
  mt->nodes[mt->n_nodes++] = m;
  mt->nodes[mt->n_nodes++] = add;
  mt->nodes[mt->n_nodes++] = sqrt;
  mlcc_value_t* y = NULL;
  if (r->op == MLCC_OP_DIV && r->n_inputs == 2 && r->inputs[0] == x && r->inputs[1] == s) {
    mt->nodes[mt->n_nodes++] = r;
    y = mlcc_node_output(r, 0);
  } else if (r->op == MLCC_OP_RECIPROCAL) {
    mlcc_node_t* mul = sole_reader(readers, mlcc_node_output(r, 0));
    if (mul == NULL || mul->op != MLCC_OP_MUL ||
        other_operand(mul, mlcc_node_output(r, 0)) != x) {
      return false;
    }
    mt->nodes[mt->n_nodes++] = r;
    mt->nodes[mt->n_nodes++] = mul;
    y = mlcc_node_output(mul, 0);
  } else {
    return false;
  }
  if (y == NULL || !y->shape_known || !mlcc_shape_equal(&y->shape, &x->shape)) return false;
  mlcc_node_t* g = sole_reader(readers, y);
  if (g != NULL && g->op == MLCC_OP_MUL) {
    mlcc_value_t* gm = other_operand(g, y);
    mlcc_value_t* o = mlcc_node_output(g, 0);
    if (is_param(gm, len) && o != NULL && o->shape_known && mlcc_shape_equal(&o->shape, &x->shape)) {
      mt->gamma = gm;
      mt->nodes[mt->n_nodes++] = g;
      y = o;
    }
  }
  if (y->dtype != MLCC_DTYPE_F32) return false;
  for (uint32_t i = 0; i < mt->n_nodes; ++i) {
    if (mt->nodes[i]->n_outputs != 1) return false;
  }
  mt->x = x;
  mt->y = y;
  return true;
}

// Replaces the matched nodes with one LayerNormalization (or, for |rms|,
// RMSNormalization) node.
static mlcc_status_t rewrite_norm(mlcc_graph_t* g, ln_match_t* mt, bool rms) {
  int64_t len = mt->x->shape.dims[mt->x->shape.rank - 1];
  mlcc_value_t* gamma = mt->gamma;
  if (gamma == NULL) {
    float* ones = (float*)mlcc_arena_alloc(&g->arena, (size_t)len * sizeof(float), 4);
    if (ones == NULL) {
      return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory in canonicalize");
    }
    for (int64_t i = 0; i < len; ++i) ones[i] = 1.0f;
    mlcc_shape_t sh = {.rank = 1, .dims = {len}};
    char name[128];
    for (unsigned k = 0;; ++k) {
      snprintf(name, sizeof(name), "%.96s__%s_ones%u", mt->y->name ? mt->y->name : "norm",
               rms ? "rms" : "ln", k);
      if (mlcc_graph_find_value(g, name) == NULL) break;
    }
    MLCC_RETURN_IF_ERROR(
        mlcc_graph_add_constant(g, name, MLCC_DTYPE_F32, &sh, ones, false, &gamma));
  }
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(&g->arena, 2 * sizeof(mlcc_attr_t),
                                                       _Alignof(mlcc_attr_t));
  if (attrs == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory in canonicalize");
  }
  memset(attrs, 0, 2 * sizeof(*attrs));
  attrs[0].name = "axis";
  attrs[0].kind = MLCC_ATTR_INT;
  attrs[0].i = -1;
  attrs[1].name = "epsilon";
  attrs[1].kind = MLCC_ATTR_FLOAT;
  attrs[1].f = (float)mt->eps;
  mlcc_value_t* ins[3] = {mt->x, gamma, mt->beta};
  mlcc_value_t* y = mt->y;
  const char* name = mt->nodes[0]->name;
  // Kill first so |y|'s producer becomes the new node.
  for (uint32_t i = 0; i < mt->n_nodes; ++i) mt->nodes[i]->dead = true;
  mlcc_node_t* ln = NULL;
  mlcc_status_t s = mlcc_graph_add_node(g, rms ? MLCC_OP_RMS_NORMALIZATION
                                            : MLCC_OP_LAYER_NORMALIZATION,
                                        rms ? 23 : 17, name, ins, mt->beta ? 3 : 2, &y, 1,
                                        attrs, 2, &ln);
  if (s != NULL) {
    for (uint32_t i = 0; i < mt->n_nodes; ++i) mt->nodes[i]->dead = false;
    return s;
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_pass_canonicalize(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                     bool* out_changed) {
  (void)ctx;
  *out_changed = false;
  mlcc_graph_recount_uses(graph);
  size_t nv = graph->n_values ? graph->n_values : 1;
  mlcc_node_t** readers = (mlcc_node_t**)calloc(nv, sizeof(*readers));
  if (readers == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory in canonicalize");
  }
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead) continue;
    for (uint32_t s = 0; s < n->n_inputs; ++s) {
      mlcc_value_t* v = n->inputs[s];
      if (v != NULL && v->id < nv) readers[v->id] = n;
    }
  }
  mlcc_status_t st = mlcc_ok_status();
  uint32_t n0 = graph->n_nodes;
  for (uint32_t i = 0; i < n0 && st == NULL; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead || n->op != MLCC_OP_REDUCE_MEAN) continue;
    ln_match_t mt;
    if (!match_layernorm(n, readers, &mt) || !match_tail(graph, readers, &mt)) continue;
    bool ok = true;
    for (uint32_t j = 0; j < mt.n_nodes; ++j) ok &= !mt.nodes[j]->dead;
    if (!ok) continue;
    st = rewrite_norm(graph, &mt, false);
    if (st == NULL) *out_changed = true;
  }
  // RMSNorms after the LayerNorms: a LayerNorm's Pow(d, 2) tail would
  // otherwise match as an RMSNorm of d.
  for (uint32_t i = 0; i < n0 && st == NULL; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead || (n->op != MLCC_OP_POW && n->op != MLCC_OP_MUL)) continue;
    ln_match_t mt;
    if (!match_rmsnorm(n, readers, &mt)) continue;
    bool ok = true;
    for (uint32_t j = 0; j < mt.n_nodes; ++j) ok &= !mt.nodes[j]->dead;
    if (!ok) continue;
    st = rewrite_norm(graph, &mt, true);
    if (st == NULL) *out_changed = true;
  }
  // A square left over (no norm around it, e.g. when QuantizeLinear /
  // DequantizeLinear pairs sit between the pattern's ops): Pow(x, 2) with a
  // constant float32 2 becomes Mul(x, x), the correctly rounded x^2 the
  // norms above compute too, without a powf call per element.
  for (uint32_t i = 0; i < n0 && st == NULL; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead || n->op != MLCC_OP_POW || n->n_inputs != 2 || n->n_outputs != 1) continue;
    mlcc_value_t* x = n->inputs[0];
    mlcc_value_t* y = mlcc_node_output(n, 0);
    double e;
    if (x == NULL || y == NULL || x->dtype != MLCC_DTYPE_F32 || !x->shape_known ||
        !y->shape_known || !mlcc_shape_equal(&x->shape, &y->shape) ||
        !const_scalar(n->inputs[1], &e) || e != 2.0) {
      continue;
    }
    // In place (the node keeps its id, name and position): op, opset
    // (Mul 14 takes every float type Pow does) and the exponent slot.
    n->op = MLCC_OP_MUL;
    n->opset = 14;
    n->inputs[1] = x;
    *out_changed = true;
  }
  free(readers);
  if (st == NULL && *out_changed) {
    mlcc_graph_compact(graph);
    st = mlcc_graph_toposort(graph);
  }
  return st;
}

// SPDX-License-Identifier: Apache-2.0
// quant-fuse and quant-pack (issue 16): integer kernels for quantized
// models.
//
// quant-fuse runs first in the pipeline, before shape inference folds the
// weights' DequantizeLinear into float constants. It recognises the QDQ
// form of a quantized convolution (what onnxruntime's quantize_static
// writes) and rewrites it into one QLinearConv, whose kernel
// (targets/kernels/qgemm.c) accumulates in int32 and requantizes once:
//
//   QuantizeLinear(act(Conv(DequantizeLinear(xq, xs, xz),
//                           DequantizeLinear(wq, ws, wz), bias?)), ys, yz)
//     -> QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, bias_int32?)
//
// with act one of: none, Relu, Clip (constant bounds), recorded as the
// MLCC_QACT_* attributes (targets/kernels/pack.h; qgemm.h: the clamp in the
// quantized domain is exact because quantization is monotone). Conditions: x, y per-tensor
// (constant scale and zero point of one element, int8/uint8); wq an
// int8/uint8 constant, per-tensor or per-channel along axis 0; every
// intermediate value read only by the chain. The bias becomes int32:
// a DequantizeLinear of an int32 constant with zero point 0 and scale
// float32(xs * ws[m]) (what quantizers write) is used as is, exactly; any
// other constant bias b is rounded, round_half_even(b / (xs * ws[m])),
// saturated to int32 (an error of at most half an accumulator step, far
// below one output step). The DequantizeLinear of x stays when other nodes
// read it; dce removes it otherwise. Numerics: the unfused graph computes
// the same sums in float32 and quantizes; the fused kernel is exact in int32,
// so the two agree within one quantization step (a float32 accumulation
// error that crosses a rounding boundary), which tests/e2e/qdq_check.py
// checks.
//
// quant-pack runs after shape inference: it reorders the constant weights
// of every QLinearConv / ConvInteger that the fast kernel takes into its
// layout, still int8/uint8: on x86 with AVX2 the blocked kernel's channel
// blocks of k pairs (MLCC_QBLOCK_ATTR, 1x1 kernels too), elsewhere the row
// kernel's [M][KW][KH][C/group] order (MLCC_QPACKED_ATTR; 1x1 kernels stay).
// On x86 with AVX2 it also packs the constant 2-D B of QLinearMatMul /
// MatMulInteger for the same blocked kernel (mlcc_qgemm_matmul_block).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ops/quant.h"
#include "passes/pass.h"
#include "targets/kernels/pack.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory while fusing quantized operators");
}

static bool is_const(const mlcc_value_t* v) {
  return v != NULL && v->kind == MLCC_VALUE_CONSTANT && v->shape_known &&
         (v->data != NULL || mlcc_shape_numel_unchecked(&v->shape) == 0);
}

static bool is_q8(mlcc_dtype_t d) { return d == MLCC_DTYPE_U8 || d == MLCC_DTYPE_I8; }

static int64_t numel(const mlcc_value_t* v) { return mlcc_shape_numel_unchecked(&v->shape); }

// The live producer of |v| if it has op |op| and |v| is read by one node
// and is not a graph output (so the chain can be removed), else NULL.
static mlcc_node_t* sole_producer(const mlcc_value_t* v, mlcc_op_t op) {
  if (v == NULL || v->kind != MLCC_VALUE_INTERMEDIATE || v->is_output || v->n_uses != 1) {
    return NULL;
  }
  mlcc_node_t* p = v->producer;
  return p != NULL && !p->dead && p->op == op ? p : NULL;
}

// The live DequantizeLinear producing |v| (any number of readers) with
// constant per-tensor or 1-D parameters (the zero point may be omitted), or
// NULL.
static mlcc_node_t* dq_of(const mlcc_value_t* v) {
  if (v == NULL || v->kind != MLCC_VALUE_INTERMEDIATE) return NULL;
  mlcc_node_t* p = v->producer;
  if (p == NULL || p->dead || p->op != MLCC_OP_DEQUANTIZE_LINEAR || p->n_inputs < 2) return NULL;
  const mlcc_value_t* s = p->inputs[1];
  const mlcc_value_t* z = mlcc_node_input(p, 2);
  if (!is_const(s) || s->dtype != MLCC_DTYPE_F32 || s->shape.rank > 1) return NULL;
  if (z != NULL && (!is_const(z) || numel(s) != numel(z))) return NULL;
  const mlcc_attr_t* blk = mlcc_node_attr(p, "block_size");
  if (blk != NULL && (blk->kind != MLCC_ATTR_INT || blk->i != 0)) return NULL;
  return p;
}

// A per-tensor int8/uint8 (scale, zero point) pair of a DQ/Q node.
static bool per_tensor_q8(const mlcc_node_t* n) {
  const mlcc_value_t* s = n->inputs[1];
  const mlcc_value_t* z = n->n_inputs > 2 ? n->inputs[2] : NULL;
  return is_const(s) && is_const(z) && s->dtype == MLCC_DTYPE_F32 && numel(s) == 1 &&
         numel(z) == 1 && is_q8(z->dtype) && mlcc_value_const_f64(s, 0) > 0;
}

typedef struct qconv_match_t {
  mlcc_node_t* q;      // QuantizeLinear (root)
  mlcc_node_t* act;    // Relu / Clip or NULL
  mlcc_node_t* conv;
  mlcc_node_t* dq_x;
  mlcc_node_t* dq_w;
  int64_t act_kind;    // 0 none, 1 Relu, 2 Clip
  float act_lo, act_hi;
} qconv_match_t;

// Bounds of a Clip node into |m| (constant inputs for opset >= 11,
// attributes before). False if a bound is not a known constant.
static bool clip_bounds(const mlcc_node_t* clip, qconv_match_t* m) {
  float lo = -INFINITY, hi = INFINITY;
  if (clip->opset >= 11) {
    const mlcc_value_t* a = mlcc_node_input(clip, 1);
    const mlcc_value_t* b = mlcc_node_input(clip, 2);
    if (a != NULL) {
      if (!is_const(a) || a->dtype != MLCC_DTYPE_F32 || numel(a) != 1) return false;
      lo = (float)mlcc_value_const_f64(a, 0);
    }
    if (b != NULL) {
      if (!is_const(b) || b->dtype != MLCC_DTYPE_F32 || numel(b) != 1) return false;
      hi = (float)mlcc_value_const_f64(b, 0);
    }
  } else {
    if (mlcc_node_attr_float(clip, "min", -INFINITY, &lo) != NULL) return false;
    if (mlcc_node_attr_float(clip, "max", INFINITY, &hi) != NULL) return false;
  }
  if (isnan(lo) || isnan(hi) || lo > hi) return false;
  m->act_kind = 2;
  m->act_lo = lo;
  m->act_hi = hi;
  return true;
}

// Records in |m| a fusable Relu or Clip producing |v| (the QuantizeLinear's
// input) and returns the activation's input, or |v| when there is none; NULL
// for a Clip whose bounds cannot be fused.
static mlcc_value_t* match_act(mlcc_value_t* v, qconv_match_t* m) {
  mlcc_node_t* p = sole_producer(v, MLCC_OP_RELU);
  if (p != NULL) {
    m->act = p;
    m->act_kind = 1;
  } else if ((p = sole_producer(v, MLCC_OP_CLIP)) != NULL) {
    if (!clip_bounds(p, m)) return NULL;
    m->act = p;
  }
  return m->act != NULL ? m->act->inputs[0] : v;
}

static bool match_qconv(mlcc_node_t* q, qconv_match_t* m) {
  memset(m, 0, sizeof(*m));
  if (q->n_inputs < 3 || q->n_outputs != 1 || q->outputs[0] == NULL) return false;
  if (!per_tensor_q8(q)) return false;
  const mlcc_attr_t* blk = mlcc_node_attr(q, "block_size");
  if (blk != NULL && (blk->kind != MLCC_ATTR_INT || blk->i != 0)) return false;
  m->q = q;
  mlcc_value_t* v = match_act(q->inputs[0], m);
  if (v == NULL) return false;
  mlcc_node_t* conv = sole_producer(v, MLCC_OP_CONV);
  if (conv == NULL || conv->n_outputs != 1 || conv->n_inputs < 2) return false;
  m->conv = conv;
  m->dq_x = dq_of(conv->inputs[0]);
  m->dq_w = dq_of(conv->inputs[1]);
  if (m->dq_x == NULL || m->dq_w == NULL || !per_tensor_q8(m->dq_x)) return false;
  const mlcc_value_t* wq = m->dq_w->inputs[0];
  if (!is_const(wq) || !is_q8(wq->dtype) || wq->shape.rank < 3 || wq->shape.rank > 4) {
    return false;
  }
  const mlcc_value_t* wz = mlcc_node_input(m->dq_w, 2);
  if (wz == NULL || wz->dtype != wq->dtype) return false;
  int64_t ns = numel(m->dq_w->inputs[1]);
  if (ns != 1) {
    int64_t axis = 1;
    if (mlcc_node_attr_int(m->dq_w, "axis", 1, &axis) != NULL) return false;
    if (axis < 0) axis += wq->shape.rank;
    if (axis != 0 || ns != wq->shape.dims[0]) return false;
  }
  return true;
}

// The int32 bias of the fused node in |*out_bias| (NULL when the Conv has
// none); false when the bias is not a form this pass folds.
// |mo| is the output channel count (a MatMul / Gemm: N).
static mlcc_status_t fold_bias(mlcc_graph_t* graph, const qconv_match_t* m, int64_t mo,
                               bool* out_ok, mlcc_value_t** out_bias) {
  *out_ok = false;
  *out_bias = NULL;
  mlcc_value_t* b = mlcc_node_input(m->conv, 2);
  if (b == NULL) {
    *out_ok = true;
    return mlcc_ok_status();
  }
  const mlcc_value_t* ws = m->dq_w->inputs[1];
  float xs = (float)mlcc_value_const_f64(m->dq_x->inputs[1], 0);
  const mlcc_node_t* dq_b = dq_of(b);
  const mlcc_value_t* raw = dq_b != NULL ? dq_b->inputs[0] : b;
  const mlcc_value_t* bz = dq_b != NULL ? mlcc_node_input(dq_b, 2) : NULL;
  if (!is_const(raw) || numel(raw) != mo) return mlcc_ok_status();
  if (dq_b == NULL && raw->dtype != MLCC_DTYPE_F32) return mlcc_ok_status();
  if (dq_b != NULL && !is_q8(raw->dtype) && raw->dtype != MLCC_DTYPE_I32) return mlcc_ok_status();
  if (dq_b != NULL && (numel(dq_b->inputs[1]) != 1 && numel(dq_b->inputs[1]) != mo)) {
    return mlcc_ok_status();
  }
  // Exact reuse: int32 data, zero point 0, scale xs * ws[m] in float32.
  if (dq_b != NULL && raw->dtype == MLCC_DTYPE_I32) {
    bool exact = true;
    for (int64_t o = 0; o < mo && exact; ++o) {
      int64_t si = numel(dq_b->inputs[1]) == 1 ? 0 : o;
      float want = xs * (float)mlcc_value_const_f64(ws, numel(ws) == 1 ? 0 : o);
      exact = (float)mlcc_value_const_f64(dq_b->inputs[1], si) == want &&
              (bz == NULL || mlcc_value_const_i64(bz, si) == 0);
    }
    if (exact) {
      *out_ok = true;
      *out_bias = (mlcc_value_t*)raw;
      return mlcc_ok_status();
    }
  }
  int32_t* q = (int32_t*)mlcc_arena_alloc(&graph->arena, (size_t)mo * sizeof(int32_t), 4);
  if (q == NULL) return oom();
  for (int64_t o = 0; o < mo; ++o) {
    double f;
    if (dq_b != NULL) {
      int64_t si = numel(dq_b->inputs[1]) == 1 ? 0 : o;
      int64_t z = bz != NULL ? mlcc_value_const_i64(bz, si) : 0;
      f = (double)(mlcc_value_const_i64(raw, o) - z) * mlcc_value_const_f64(dq_b->inputs[1], si);
    } else {
      f = mlcc_value_const_f64(raw, o);
    }
    double step = (double)(xs * (float)mlcc_value_const_f64(ws, numel(ws) == 1 ? 0 : o));
    double r = nearbyint(f / step);  // default rounding mode: half to even
    if (!(r == r)) return mlcc_ok_status();
    if (r > 2147483647.0) r = 2147483647.0;
    if (r < -2147483648.0) r = -2147483648.0;
    q[o] = (int32_t)r;
  }
  const char* base = b->name ? b->name : "bias";
  size_t len = strlen(base) + 32;
  char* name = (char*)malloc(len);
  if (name == NULL) return oom();
  for (uint32_t n = 0;; ++n) {
    snprintf(name, len, "%s_qbias_%u", base, n);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_shape_t shape = {.rank = 1, .dims = {mo}};
  mlcc_status_t s = mlcc_graph_add_constant(graph, name, MLCC_DTYPE_I32, &shape, q, false,
                                            out_bias);
  free(name);
  MLCC_RETURN_IF_ERROR(s);
  *out_ok = true;
  return mlcc_ok_status();
}

// Replaces the matched chain (|m|'s anchor, activation and QuantizeLinear) by
// one |op| node (opset 10) with inputs |ins| and attributes |attrs| that
// writes the QuantizeLinear's output; on failure the chain is left as it was.
static mlcc_status_t replace_chain(mlcc_graph_t* graph, const qconv_match_t* m, mlcc_op_t op,
                                   int32_t opset, mlcc_value_t** ins, uint32_t n_ins,
                                   const mlcc_attr_t* attrs, uint32_t n_attrs, bool* out_done) {
  mlcc_value_t* y = m->q->outputs[0];
  // Kill first so |y|'s producer becomes the new node.
  m->q->dead = true;
  m->conv->dead = true;
  if (m->act != NULL) m->act->dead = true;
  mlcc_node_t* fused = NULL;
  mlcc_status_t s =
      mlcc_graph_add_node(graph, op, opset, m->conv->name, ins, n_ins, &y, 1, attrs, n_attrs,
                          &fused);
  if (s != NULL) {
    m->q->dead = false;
    m->conv->dead = false;
    if (m->act != NULL) m->act->dead = false;
    y->producer = m->q;
    return s;
  }
  *out_done = true;
  return mlcc_ok_status();
}

static mlcc_status_t rewrite_qconv(mlcc_graph_t* graph, const qconv_match_t* m,
                                   bool* out_done) {
  *out_done = false;
  bool ok = false;
  mlcc_value_t* bias = NULL;
  MLCC_RETURN_IF_ERROR(fold_bias(graph, m, m->dq_w->inputs[0]->shape.dims[0], &ok, &bias));
  if (!ok) return mlcc_ok_status();
  uint32_t n_extra = m->act_kind == 0 ? 0 : m->act_kind == 1 ? 1 : 3;
  uint32_t n_attrs = m->conv->n_attrs + n_extra;
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
      &graph->arena, (n_attrs ? n_attrs : 1) * sizeof(mlcc_attr_t), _Alignof(mlcc_attr_t));
  if (attrs == NULL) return oom();
  memset(attrs, 0, (n_attrs ? n_attrs : 1) * sizeof(mlcc_attr_t));
  if (m->conv->n_attrs > 0) memcpy(attrs, m->conv->attrs, m->conv->n_attrs * sizeof(*attrs));
  mlcc_attr_t* a = attrs + m->conv->n_attrs;
  if (n_extra > 0) {
    a[0].name = MLCC_QACT_ATTR;
    a[0].kind = MLCC_ATTR_INT;
    a[0].i = m->act_kind;
  }
  if (n_extra == 3) {
    a[1].name = MLCC_QACT_LO_ATTR;
    a[1].kind = MLCC_ATTR_FLOAT;
    a[1].f = m->act_lo;
    a[2].name = MLCC_QACT_HI_ATTR;
    a[2].kind = MLCC_ATTR_FLOAT;
    a[2].f = m->act_hi;
  }
  mlcc_value_t* ins[9] = {m->dq_x->inputs[0], m->dq_x->inputs[1], m->dq_x->inputs[2],
                          m->dq_w->inputs[0], m->dq_w->inputs[1], m->dq_w->inputs[2],
                          m->q->inputs[1],    m->q->inputs[2],    bias};
  return replace_chain(graph, m, MLCC_OP_QLINEAR_CONV, 10, ins, bias != NULL ? 9 : 8, attrs,
                       n_attrs, out_done);
}

//===----------------------------------------------------------------------===//
// QDQ MatMul / Gemm (issue 16 item 1)
//===----------------------------------------------------------------------===//
static bool plain_q(const mlcc_node_t* q);
//
//   QuantizeLinear(act(MatMul|Gemm(DequantizeLinear(aq, as, az),
//                                  DequantizeLinear(bq, bs, bz), bias?)), ys, yz)
//     -> QLinearMatMul(aq, as, az, bq', bs, bz, ys, yz, bias_int32?)
//
// with act none / Relu / Clip (MLCC_QACT_* attributes, as for QLinearConv)
// and the int32 bias as a 9th input flagged by MLCC_QMATMUL_BIAS_ATTR (ONNX
// QLinearMatMul has 8 inputs; ir/ops/quant.c accepts the 9th only with the
// flag). The kernel (targets/kernels/quant.c) computes
// y = saturate(round_half_even(float32(acc + bias) * M) + yz),
// M = float32(as * bs[n]) / ys, acc the exact int32 sum of
// (a - az) * (b - bz[n]). Conditions: a, y per tensor; b per tensor (any
// shape; MatMul's B need not be constant) or per column: a constant 2-D B
// with axis 1 (MatMul, Gemm transB = 0) or axis 0 (Gemm transB = 1, whose
// constant B is transposed to [K, N] here); Gemm with transA = 0, alpha =
// beta = 1 and a bias of shape [N] or [1, N] (Gemm's C) folded to int32 like
// QLinearConv's (fold_bias); every intermediate read only by the chain.
// Anything else stays float, as the graph says.

// Fills |m| (m->conv is the MatMul / Gemm) when |q| roots a fusable chain;
// |*out_n| is N when known (-1 for a per-tensor non-constant B).
static bool match_qmatmul(mlcc_node_t* q, qconv_match_t* m, int64_t* out_n) {
  memset(m, 0, sizeof(*m));
  *out_n = -1;
  if (!plain_q(q)) return false;
  m->q = q;
  mlcc_value_t* v = match_act(q->inputs[0], m);
  if (v == NULL) return false;
  mlcc_node_t* mm = sole_producer(v, MLCC_OP_MATMUL);
  if (mm == NULL) mm = sole_producer(v, MLCC_OP_GEMM);
  if (mm == NULL || mm->n_outputs != 1 || mm->n_inputs < 2) return false;
  bool gemm = mm->op == MLCC_OP_GEMM;
  int64_t trans_a = 0, trans_b = 0;
  float alpha = 1.f, beta = 1.f;
  if (gemm && (mlcc_node_attr_int(mm, "transA", 0, &trans_a) != NULL ||
               mlcc_node_attr_int(mm, "transB", 0, &trans_b) != NULL ||
               mlcc_node_attr_float(mm, "alpha", 1.f, &alpha) != NULL ||
               mlcc_node_attr_float(mm, "beta", 1.f, &beta) != NULL)) {
    return false;
  }
  if (trans_a != 0 || alpha != 1.f || beta != 1.f) return false;
  m->conv = mm;
  m->dq_x = dq_of(mm->inputs[0]);
  m->dq_w = dq_of(mm->inputs[1]);
  if (m->dq_x == NULL || m->dq_w == NULL || !per_tensor_q8(m->dq_x)) return false;
  const mlcc_value_t* bq = m->dq_w->inputs[0];
  const mlcc_value_t* bz = mlcc_node_input(m->dq_w, 2);
  if (bz == NULL || !is_const(bz) || !is_q8(bz->dtype)) return false;
  bool b_const = is_const(bq) && bq->data != NULL;
  if (b_const && (!is_q8(bq->dtype) || bq->dtype != bz->dtype)) return false;
  if (b_const && bq->shape.rank == 2) *out_n = bq->shape.dims[trans_b ? 0 : 1];
  if (gemm && (!b_const || bq->shape.rank != 2)) return false;
  int64_t ns = numel(m->dq_w->inputs[1]);
  if (ns != 1) {
    int64_t axis = 1;
    if (!b_const || bq->shape.rank != 2) return false;
    if (mlcc_node_attr_int(m->dq_w, "axis", 1, &axis) != NULL) return false;
    if (axis < 0) axis += 2;
    if (axis != (trans_b ? 0 : 1) || ns != *out_n) return false;
  }
  mlcc_value_t* c = mlcc_node_input(mm, 2);
  if (c != NULL) {
    // Gemm's C broadcasts along rows only when it is [N] or [1, N].
    const mlcc_node_t* dq_c = dq_of(c);
    const mlcc_value_t* raw = dq_c != NULL ? dq_c->inputs[0] : c;
    if (*out_n < 0 || !is_const(raw) || numel(raw) != *out_n) return false;
    if (raw->shape.rank > 2 || (raw->shape.rank == 2 && raw->shape.dims[0] != 1)) return false;
  }
  return true;
}

// |bq| [N, K] transposed into a new [K, N] constant in |*out|.
static mlcc_status_t transpose_const(mlcc_graph_t* graph, const mlcc_value_t* bq,
                                     mlcc_value_t** out) {
  int64_t n = bq->shape.dims[0], k = bq->shape.dims[1];
  uint8_t* dst = (uint8_t*)mlcc_arena_alloc(&graph->arena, (size_t)(n * k > 0 ? n * k : 1), 64);
  if (dst == NULL) return oom();
  const uint8_t* src = (const uint8_t*)bq->data;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[i * k + j];
  }
  const char* base = bq->name ? bq->name : "b";
  size_t len = strlen(base) + 32;
  char* name = (char*)malloc(len);
  if (name == NULL) return oom();
  for (uint32_t u = 0;; ++u) {
    snprintf(name, len, "%s_qT_%u", base, u);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_shape_t shape = {.rank = 2, .dims = {k, n}};
  mlcc_status_t s = mlcc_graph_add_constant(graph, name, bq->dtype, &shape, dst, false, out);
  free(name);
  return s;
}

static mlcc_status_t rewrite_qmatmul(mlcc_graph_t* graph, const qconv_match_t* m, int64_t n,
                                     bool* out_done) {
  *out_done = false;
  bool ok = true;
  mlcc_value_t* bias = NULL;
  if (mlcc_node_input(m->conv, 2) != NULL) {
    MLCC_RETURN_IF_ERROR(fold_bias(graph, m, n, &ok, &bias));
  }
  if (!ok) return mlcc_ok_status();
  mlcc_value_t* b = m->dq_w->inputs[0];
  int64_t trans_b = 0;
  if (m->conv->op == MLCC_OP_GEMM) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(m->conv, "transB", 0, &trans_b));
  }
  if (trans_b != 0) MLCC_RETURN_IF_ERROR(transpose_const(graph, m->dq_w->inputs[0], &b));
  uint32_t n_attrs = (m->act_kind == 0 ? 0 : m->act_kind == 1 ? 1 : 3) + (bias != NULL);
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
      &graph->arena, (n_attrs ? n_attrs : 1) * sizeof(mlcc_attr_t), _Alignof(mlcc_attr_t));
  if (attrs == NULL) return oom();
  memset(attrs, 0, (n_attrs ? n_attrs : 1) * sizeof(mlcc_attr_t));
  uint32_t na = 0;
  if (m->act_kind != 0) {
    attrs[na].name = MLCC_QACT_ATTR;
    attrs[na].kind = MLCC_ATTR_INT;
    attrs[na++].i = m->act_kind;
  }
  if (m->act_kind == 2) {
    attrs[na].name = MLCC_QACT_LO_ATTR;
    attrs[na].kind = MLCC_ATTR_FLOAT;
    attrs[na++].f = m->act_lo;
    attrs[na].name = MLCC_QACT_HI_ATTR;
    attrs[na].kind = MLCC_ATTR_FLOAT;
    attrs[na++].f = m->act_hi;
  }
  if (bias != NULL) {
    attrs[na].name = MLCC_QMATMUL_BIAS_ATTR;
    attrs[na].kind = MLCC_ATTR_INT;
    attrs[na++].i = 1;
  }
  mlcc_value_t* ins[9] = {m->dq_x->inputs[0], m->dq_x->inputs[1], m->dq_x->inputs[2],
                          b,                  m->dq_w->inputs[1], m->dq_w->inputs[2],
                          m->q->inputs[1],    m->q->inputs[2],    bias};
  return replace_chain(graph, m, MLCC_OP_QLINEAR_MATMUL, 10, ins, bias != NULL ? 9 : 8, attrs, na,
                       out_done);
}

//===----------------------------------------------------------------------===//
// int8 data movement (issue 16 item 1)
//===----------------------------------------------------------------------===//
//
//   QuantizeLinear(op(DequantizeLinear(xq, s, z), rest...), s, z) -> op(xq, rest...)
//
// for op one of MaxPool (no Indices output), Reshape, Flatten, Transpose,
// Squeeze, Unsqueeze, Identity, DepthToSpace, SpaceToDepth and Concat (every
// data input a DequantizeLinear), when every DequantizeLinear and the
// QuantizeLinear have the same per-tensor parameters (the scale's float32
// bits, the zero point's dtype and value). Exact, per the ONNX specs: these
// ops only move or select elements, MaxPool's max commutes with
// DequantizeLinear (x -> (x - z) * s is non-decreasing for s > 0), and
// Q(DQ(q)) = q for equal parameters: float32((q - z) * s) / s is within
// 2^-15 of the integer q - z (|q - z| <= 255), so round_half_even returns it
// and the result lies in the dtype's range. The same identity removes a
// QuantizeLinear of a DequantizeLinear with equal parameters (its readers
// read xq), unless its output is a graph output. The DequantizeLinear stays
// while other nodes read it (dce removes it otherwise).

// True when DQ/Q nodes |a| and |b| have equal per-tensor int8/uint8 params.
static bool same_qparams(const mlcc_node_t* a, const mlcc_node_t* b) {
  if (!per_tensor_q8(a) || !per_tensor_q8(b)) return false;
  const mlcc_value_t *az = a->inputs[2], *bz = b->inputs[2];
  if (az->dtype != bz->dtype || mlcc_value_const_i64(az, 0) != mlcc_value_const_i64(bz, 0)) {
    return false;
  }
  float as = (float)mlcc_value_const_f64(a->inputs[1], 0);
  float bs = (float)mlcc_value_const_f64(b->inputs[1], 0);
  return memcmp(&as, &bs, sizeof(as)) == 0;
}

// A QuantizeLinear that yields exactly its zero point's dtype from a float32
// input (no block quantization, no output_dtype other than the zero point's,
// saturate default).
static bool plain_q(const mlcc_node_t* q) {
  if (q->n_inputs < 3 || q->n_outputs != 1 || q->outputs[0] == NULL || !per_tensor_q8(q)) {
    return false;
  }
  const mlcc_attr_t* blk = mlcc_node_attr(q, "block_size");
  if (blk != NULL && (blk->kind != MLCC_ATTR_INT || blk->i != 0)) return false;
  const mlcc_attr_t* odt = mlcc_node_attr(q, "output_dtype");
  if (odt != NULL && (odt->kind != MLCC_ATTR_INT || odt->i != 0)) {
    int32_t want = q->inputs[2]->dtype == MLCC_DTYPE_U8 ? 2 : 3;  // TensorProto UINT8 / INT8
    if (odt->i != want) return false;
  }
  return true;
}

// Rewrites QuantizeLinear |q| over a data-movement op when the chain
// qualifies (see above); *out_done says whether it did.
static mlcc_status_t rewrite_qmove(mlcc_graph_t* graph, mlcc_node_t* q, bool* out_done) {
  *out_done = false;
  if (!plain_q(q)) return mlcc_ok_status();
  mlcc_value_t* v = q->inputs[0];
  if (v == NULL || v->kind != MLCC_VALUE_INTERMEDIATE || v->is_output || v->n_uses != 1) {
    return mlcc_ok_status();
  }
  mlcc_node_t* op = v->producer;
  if (op == NULL || op->dead || op->n_outputs < 1 || op->outputs[0] != v) return mlcc_ok_status();
  int32_t nd = mlcc_quant_moved_data_inputs(op);
  if (nd == 0 || op->n_inputs == 0) return mlcc_ok_status();
  uint32_t n_data = nd < 0 ? op->n_inputs : (uint32_t)nd;
  mlcc_value_t** ins = (mlcc_value_t**)malloc(op->n_inputs * sizeof(*ins));
  if (ins == NULL) return oom();
  for (uint32_t i = 0; i < op->n_inputs; ++i) {
    ins[i] = op->inputs[i];
    if (i >= n_data) continue;
    mlcc_node_t* dq = dq_of(op->inputs[i]);
    if (dq == NULL || !same_qparams(dq, q)) {
      free(ins);
      return mlcc_ok_status();
    }
    ins[i] = dq->inputs[0];
  }
  mlcc_value_t* y = q->outputs[0];
  q->dead = true;
  op->dead = true;
  mlcc_node_t* moved = NULL;
  mlcc_status_t s = mlcc_graph_add_node(graph, op->op, op->opset, op->name, ins, op->n_inputs,
                                        &y, 1, op->attrs, op->n_attrs, &moved);
  free(ins);
  if (s != NULL) {
    q->dead = false;
    op->dead = false;
    y->producer = q;
    return s;
  }
  *out_done = true;
  return mlcc_ok_status();
}

// QuantizeLinear(DequantizeLinear(xq)) with equal parameters: readers of the
// QuantizeLinear's output read xq. *out_done says whether it did.
static void rewrite_q_of_dq(mlcc_graph_t* graph, mlcc_node_t* q, bool* out_done) {
  *out_done = false;
  if (!plain_q(q) || q->outputs[0]->is_output) return;
  mlcc_node_t* dq = dq_of(q->inputs[0]);
  if (dq == NULL || !same_qparams(dq, q)) return;
  mlcc_graph_replace_uses(graph, q->outputs[0], dq->inputs[0]);
  q->dead = true;
  *out_done = true;
}

//===----------------------------------------------------------------------===//
// int8 Add / Mul, average pools, Concat of other parameters (issues 16, 17)
//===----------------------------------------------------------------------===//
//
//   QuantizeLinear([Relu](Add|Mul(DequantizeLinear(aq, as, az),
//                                 DequantizeLinear(bq, bs, bz))), cs, cz)
//     -> QLinearAdd|QLinearMul(aq, as, az, bq, bs, bz, cs, cz)   (+ mlcc.qact = 1)
//   QuantizeLinear(GlobalAveragePool|AveragePool(DequantizeLinear(xq, xs, xz)), ys, yz)
//     -> QLinearGlobalAveragePool|QLinearAveragePool(xq, xs, xz, ys, yz)
//   QuantizeLinear(Concat(DequantizeLinear(xq_i, xs_i, xz_i)...), ys, yz)
//     -> QLinearConcat(ys, yz, xq_0, xs_0, xz_0, ...)
//
// (com.microsoft opset 1, targets/kernels/qelementwise.c). Conditions: every
// DequantizeLinear and the QuantizeLinear per tensor with constant
// parameters, all of one int8/uint8 dtype; the float intermediates (the op's
// output, the Relu's) read only by the chain. A DequantizeLinear stays while
// other nodes read it. Numerics: QLinearAdd / QLinearMul and QLinearConcat
// compute DQ -> op -> Q operation for operation in float32, so the rewrite
// gives the float graph's bits; the Relu is a clamp at cz, exact because Q
// is monotone and Q(0) = cz. The pools sum the integers exactly and
// requantize once (M = xs / (ys * n)), within one step of the float graph's
// sum of rounded products. Concat with equal parameters is data movement
// (above) and never reaches this rule.

// The DequantizeLinear of |v| when it is per tensor with constant
// parameters of dtype |qdt| (the QuantizeLinear's), else NULL.
static mlcc_node_t* dq_q8_of(const mlcc_value_t* v, mlcc_dtype_t qdt) {
  mlcc_node_t* dq = dq_of(v);
  if (dq == NULL || !per_tensor_q8(dq) || dq->inputs[2]->dtype != qdt) return NULL;
  return dq;
}

// One new attribute array of |n| (>= 1) zeroed entries in |graph|'s arena.
static mlcc_attr_t* new_attrs(mlcc_graph_t* graph, uint32_t n) {
  mlcc_attr_t* a = (mlcc_attr_t*)mlcc_arena_alloc(&graph->arena, (n ? n : 1) * sizeof(*a),
                                                  _Alignof(mlcc_attr_t));
  if (a != NULL) memset(a, 0, (n ? n : 1) * sizeof(*a));
  return a;
}

static mlcc_status_t rewrite_qbinary(mlcc_graph_t* graph, mlcc_node_t* q, bool* out_done) {
  *out_done = false;
  if (!plain_q(q)) return mlcc_ok_status();
  mlcc_dtype_t qdt = q->inputs[2]->dtype;
  qconv_match_t m;
  memset(&m, 0, sizeof(m));
  m.q = q;
  mlcc_value_t* v = q->inputs[0];
  mlcc_node_t* relu = sole_producer(v, MLCC_OP_RELU);
  if (relu != NULL && relu->n_inputs == 1) {
    m.act = relu;
    v = relu->inputs[0];
  }
  mlcc_node_t* op = sole_producer(v, MLCC_OP_ADD);
  if (op == NULL) op = sole_producer(v, MLCC_OP_MUL);
  if (op == NULL || op->n_inputs != 2 || op->n_outputs != 1) return mlcc_ok_status();
  mlcc_node_t* da = dq_q8_of(op->inputs[0], qdt);
  mlcc_node_t* db = dq_q8_of(op->inputs[1], qdt);
  if (da == NULL || db == NULL) return mlcc_ok_status();
  m.conv = op;
  mlcc_attr_t* attrs = NULL;
  uint32_t n_attrs = 0;
  if (m.act != NULL) {
    attrs = new_attrs(graph, 1);
    if (attrs == NULL) return oom();
    attrs[0].name = MLCC_QACT_ATTR;
    attrs[0].kind = MLCC_ATTR_INT;
    attrs[0].i = 1;
    n_attrs = 1;
  }
  mlcc_value_t* ins[8] = {da->inputs[0], da->inputs[1], da->inputs[2], db->inputs[0],
                          db->inputs[1], db->inputs[2], q->inputs[1],  q->inputs[2]};
  mlcc_op_t qop = op->op == MLCC_OP_ADD ? MLCC_OP_QLINEAR_ADD : MLCC_OP_QLINEAR_MUL;
  return replace_chain(graph, &m, qop, 1, ins, 8, attrs, n_attrs, out_done);
}

static mlcc_status_t rewrite_qpool(mlcc_graph_t* graph, mlcc_node_t* q, bool* out_done) {
  *out_done = false;
  if (!plain_q(q)) return mlcc_ok_status();
  mlcc_node_t* op = sole_producer(q->inputs[0], MLCC_OP_GLOBAL_AVERAGE_POOL);
  if (op == NULL) op = sole_producer(q->inputs[0], MLCC_OP_AVERAGE_POOL);
  if (op == NULL || op->n_inputs != 1 || op->n_outputs != 1) return mlcc_ok_status();
  mlcc_node_t* dq = dq_q8_of(op->inputs[0], q->inputs[2]->dtype);
  if (dq == NULL) return mlcc_ok_status();
  bool avg = op->op == MLCC_OP_AVERAGE_POOL;
  if (avg) {
    // QLinearAveragePool has AveragePool-11's attributes; dilations
    // (AveragePool-19) only when all 1. count_include_pad with ceil_mode
    // stays float: QLinearAveragePool refuses windows past the padded
    // input, and the shapes are not known yet.
    int64_t cip = 0, ceil = 0;
    if (mlcc_node_attr_int(op, "count_include_pad", 0, &cip) != NULL ||
        mlcc_node_attr_int(op, "ceil_mode", 0, &ceil) != NULL || (cip != 0 && ceil != 0)) {
      return mlcc_ok_status();
    }
    for (uint32_t i = 0; i < op->n_attrs; ++i) {
      const mlcc_attr_t* a = &op->attrs[i];
      if (strcmp(a->name, "dilations") != 0) continue;
      if (a->kind != MLCC_ATTR_INTS) return mlcc_ok_status();
      for (uint32_t j = 0; j < a->count; ++j) {
        if (a->ints[j] != 1) return mlcc_ok_status();
      }
    }
  }
  uint32_t n_attrs = 0;
  mlcc_attr_t* attrs = avg ? new_attrs(graph, op->n_attrs) : NULL;
  if (avg && attrs == NULL) return oom();
  for (uint32_t i = 0; avg && i < op->n_attrs; ++i) {
    if (strcmp(op->attrs[i].name, "dilations") != 0) attrs[n_attrs++] = op->attrs[i];
  }
  qconv_match_t m;
  memset(&m, 0, sizeof(m));
  m.q = q;
  m.conv = op;
  mlcc_value_t* ins[5] = {dq->inputs[0], dq->inputs[1], dq->inputs[2], q->inputs[1],
                          q->inputs[2]};
  mlcc_op_t qop = avg ? MLCC_OP_QLINEAR_AVERAGE_POOL : MLCC_OP_QLINEAR_GLOBAL_AVERAGE_POOL;
  return replace_chain(graph, &m, qop, 1, ins, 5, attrs, n_attrs, out_done);
}

static mlcc_status_t rewrite_qconcat(mlcc_graph_t* graph, mlcc_node_t* q, bool* out_done) {
  *out_done = false;
  if (!plain_q(q)) return mlcc_ok_status();
  mlcc_node_t* op = sole_producer(q->inputs[0], MLCC_OP_CONCAT);
  if (op == NULL || op->n_inputs == 0 || op->n_outputs != 1) return mlcc_ok_status();
  if (2 + 3 * (size_t)op->n_inputs > 1024) return mlcc_ok_status();  // QLinearConcat's arity
  uint32_t n_ins = 2 + 3 * op->n_inputs;
  mlcc_value_t** ins = (mlcc_value_t**)malloc(n_ins * sizeof(*ins));
  if (ins == NULL) return oom();
  ins[0] = q->inputs[1];
  ins[1] = q->inputs[2];
  for (uint32_t i = 0; i < op->n_inputs; ++i) {
    mlcc_node_t* dq = dq_q8_of(op->inputs[i], q->inputs[2]->dtype);
    if (dq == NULL) {
      free(ins);
      return mlcc_ok_status();
    }
    ins[2 + 3 * i] = dq->inputs[0];
    ins[3 + 3 * i] = dq->inputs[1];
    ins[4 + 3 * i] = dq->inputs[2];
  }
  qconv_match_t m;
  memset(&m, 0, sizeof(m));
  m.q = q;
  m.conv = op;
  mlcc_status_t s = replace_chain(graph, &m, MLCC_OP_QLINEAR_CONCAT, 1, ins, n_ins, op->attrs,
                                  op->n_attrs, out_done);
  free(ins);
  return s;
}

//===----------------------------------------------------------------------===//
// int8 Sigmoid as a table (issue 16)
//===----------------------------------------------------------------------===//
//
//   QuantizeLinear(Sigmoid(DequantizeLinear(xq, xs, xz)), ys, yz)
//     -> QLookup(xq, table)                          (mlcc domain, ops.def)
//
// with every parameter per tensor and constant, xq and the zero points
// int8/uint8, the Sigmoid's input and output read only by the chain. The
// table holds, for each of the 256 values q of xq (at index q & 255), the
// float graph's result computed here in the specs' float32 steps:
//   v = float32(float32(q - xz) * xs)                (DequantizeLinear)
//   s = float32(1 / (1 + exp(-v)))                   (Sigmoid, in double, rounded once)
//   y = saturate(round_half_even(float32(s / ys)) + yz)   (QuantizeLinear)
// so the rewrite is exact with respect to that formula (the float kernel's
// fast sigmoid may round differently by an ulp, which can move a value
// that lies on a rounding boundary by one step).

static mlcc_status_t rewrite_qsigmoid(mlcc_graph_t* graph, mlcc_node_t* q, bool* out_done) {
  *out_done = false;
  if (!plain_q(q)) return mlcc_ok_status();
  mlcc_node_t* op = sole_producer(q->inputs[0], MLCC_OP_SIGMOID);
  if (op == NULL || op->n_inputs != 1 || op->n_outputs != 1) return mlcc_ok_status();
  mlcc_node_t* dq = dq_of(op->inputs[0]);
  // (x's dtype is its zero point's: intermediate dtypes are not inferred yet.)
  if (dq == NULL || !per_tensor_q8(dq)) return mlcc_ok_status();
  mlcc_dtype_t xdt = dq->inputs[2]->dtype, ydt = q->inputs[2]->dtype;
  float xs = (float)mlcc_value_const_f64(dq->inputs[1], 0);
  int32_t xz = (int32_t)mlcc_value_const_i64(dq->inputs[2], 0);
  float ys = (float)mlcc_value_const_f64(q->inputs[1], 0);
  int32_t yz = (int32_t)mlcc_value_const_i64(q->inputs[2], 0);
  float lo = ydt == MLCC_DTYPE_I8 ? -128.f : 0.f, hi = ydt == MLCC_DTYPE_I8 ? 127.f : 255.f;
  uint8_t* table = (uint8_t*)mlcc_arena_alloc(&graph->arena, 256, 1);
  if (table == NULL) return oom();
  for (int i = 0; i < 256; ++i) {
    int32_t qv = xdt == MLCC_DTYPE_I8 ? (int32_t)(int8_t)(uint8_t)i : i;
    volatile float v = (float)(qv - xz) * xs;  // float32, no contraction
    float sig = (float)(1.0 / (1.0 + exp(-(double)v)));
    volatile float r = sig / ys;
    float y = nearbyintf(r) + (float)yz;  // round half to even (default mode)
    y = y < lo ? lo : y > hi ? hi : y;
    table[i] = (uint8_t)(int32_t)y;
  }
  char name[160];
  for (unsigned k = 0;; ++k) {
    snprintf(name, sizeof(name), "%.120s__qsigmoid%u", q->outputs[0]->name ? q->outputs[0]->name : "y",
             k);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_shape_t sh = {.rank = 1, .dims = {256}};
  mlcc_value_t* tv = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_graph_add_constant(graph, name, ydt, &sh, table, false, &tv));
  qconv_match_t m;
  memset(&m, 0, sizeof(m));
  m.q = q;
  m.conv = op;
  mlcc_value_t* ins[2] = {dq->inputs[0], tv};
  return replace_chain(graph, &m, MLCC_OP_QLOOKUP, 1, ins, 2, NULL, 0, out_done);
}

//===----------------------------------------------------------------------===//
// Weight-only quantized MatMul / Gemm (int4 / int8 weights, float activations)
//===----------------------------------------------------------------------===//
//
//   MatMul(A, DequantizeLinear(wq, ws, wz?))            -> WQMatMul(A, Wp, S, Z?)
//   Gemm(A, DequantizeLinear(wq, ws, wz?), C?)          -> WQMatMul(A, Wp, S, Z?) [+ Add(., C)]
//
// (WQMatMul: mlcc domain, ir/ops/quant.h; the kernel keeps the weight packed
// and dequantizes it on the fly, targets/kernels/wq_matmul.c.) Runs after
// the QDQ rules above, so a MatMul whose output is quantized again took the
// integer kernel already. Conditions: wq a 2-D int4/uint4/int8/uint8
// constant, ws a float32 constant, wz absent or a constant of wq's dtype;
// the weight is [K, N] (MatMul; Gemm transB = 0) or [N, K] (Gemm transB =
// 1); the scale per tensor, per column (per axis along N) or blocked along K
// (block_size, opset 21+); Gemm with transA = 0, alpha = 1 and beta = 1 and
// C absent or a constant of N elements ([N], [1, N]) or one element; and the
// packed form (codes, scales, offsets) smaller than the float32 weight it
// replaces (so a block_size of 1 along K stays float). Anything else stays
// DequantizeLinear -> float MatMul, as the graph says. The DequantizeLinear
// stays while other nodes read it (dce removes it otherwise). Numerics: the
// float graph's, up to the summation order (the kernel's header). Gemm's C
// becomes an Add after the product, fused into the kernel's store: alpha =
// beta = 1, so Y = A*B + C in float32 either way.

// The (scale, zero point) layout of |dq| on a [K, N] view of its 2-D input
// (|trans|: the input is [N, K]) as a block size along K in |*out_block|:
// K for per-tensor and per-column, the block_size for blocks along K; false
// for any other form.
static bool wq_param_layout(const mlcc_node_t* dq, bool trans, int64_t k, int64_t n,
                            int64_t* out_block) {
  const mlcc_value_t* x = dq->inputs[0];
  const mlcc_value_t* s = dq->inputs[1];
  int64_t block = 0, axis = 1;
  if (dq->opset >= 21 && mlcc_node_attr_int(dq, "block_size", 0, &block) != NULL) return false;
  if (mlcc_node_attr_int(dq, "axis", 1, &axis) != NULL) return false;
  if (axis < 0) axis += 2;
  int32_t kaxis = trans ? 1 : 0, naxis = 1 - kaxis;
  int64_t ns = numel(s);
  if (block > 0) {
    int64_t nb = (k + block - 1) / block;
    if (axis != kaxis || s->shape.rank != 2) return false;
    if (s->shape.dims[kaxis] != nb || s->shape.dims[naxis] != n) return false;
    *out_block = block;
    return true;
  }
  if (block < 0) return false;
  if (ns == 1) {
    *out_block = k;
    return true;
  }
  if (dq->opset >= 13 && axis == naxis && s->shape.rank == 1 && s->shape.dims[0] == n &&
      x->shape.dims[naxis] == n) {
    *out_block = k;
    return true;
  }
  return false;
}

// Element (kb, n) of the per-block parameter |v| (scale or zero point) of
// the layout wq_param_layout found: one element, [N], [nb, N] or [N, nb].
static int64_t wq_param_index(const mlcc_value_t* v, bool trans, int64_t kb, int64_t n,
                              int64_t nb) {
  int64_t ne = numel(v);
  if (ne == 1) return 0;
  if (v->shape.rank == 1) return n;
  return trans ? n * nb + kb : kb * v->shape.dims[1] + n;
}

// A fresh constant name "<base><suffix><u>".
static char* wq_name(mlcc_graph_t* graph, const char* base, const char* suffix) {
  size_t len = strlen(base) + strlen(suffix) + 16;
  char* name = (char*)malloc(len);
  if (name == NULL) return NULL;
  for (uint32_t u = 0;; ++u) {
    snprintf(name, len, "%s%s%u", base, suffix, u);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  return name;
}

static mlcc_status_t wq_add_const(mlcc_graph_t* graph, const char* base, const char* suffix,
                                  mlcc_dtype_t dt, const mlcc_shape_t* shape, void* data,
                                  mlcc_value_t** out) {
  char* name = wq_name(graph, base, suffix);
  if (name == NULL) return oom();
  mlcc_status_t s = mlcc_graph_add_constant(graph, name, dt, shape, data, false, out);
  free(name);
  return s;
}

static mlcc_status_t rewrite_wq_matmul(mlcc_graph_t* graph, mlcc_node_t* mm, bool* out_done) {
  *out_done = false;
  bool gemm = mm->op == MLCC_OP_GEMM;
  if (mm->n_inputs < 2 || mm->n_outputs != 1 || mm->outputs[0] == NULL) return mlcc_ok_status();
  mlcc_value_t* bv = mm->inputs[1];
  if (bv == NULL || bv->kind != MLCC_VALUE_INTERMEDIATE) return mlcc_ok_status();
  mlcc_node_t* dq = bv->producer;
  if (dq == NULL || dq->dead || dq->op != MLCC_OP_DEQUANTIZE_LINEAR || dq->n_inputs < 2) {
    return mlcc_ok_status();
  }
  const mlcc_value_t* wq = dq->inputs[0];
  const mlcc_value_t* ws = dq->inputs[1];
  const mlcc_value_t* wz = mlcc_node_input(dq, 2);
  mlcc_dtype_t wdt = wq != NULL ? wq->dtype : MLCC_DTYPE_COUNT;
  bool four = wdt == MLCC_DTYPE_I4 || wdt == MLCC_DTYPE_U4;
  if (!four && !is_q8(wdt)) return mlcc_ok_status();
  if (!is_const(wq) || wq->data == NULL || wq->shape.rank != 2) return mlcc_ok_status();
  if (!is_const(ws) || ws->data == NULL || ws->dtype != MLCC_DTYPE_F32) return mlcc_ok_status();
  if (wz != NULL && (!is_const(wz) || wz->data == NULL || wz->dtype != wdt ||
                     numel(wz) != numel(ws))) {
    return mlcc_ok_status();
  }
  int64_t out_dt = 0;
  if (dq->opset >= 23 && mlcc_node_attr_int(dq, "output_dtype", 0, &out_dt) != NULL) {
    return mlcc_ok_status();
  }
  if (out_dt != 0 && out_dt != MLCC_DTYPE_F32) return mlcc_ok_status();
  int64_t trans_b = 0;
  mlcc_value_t* c = NULL;
  if (gemm) {
    int64_t trans_a = 0;
    float alpha = 1.f, beta = 1.f;
    if (mlcc_node_attr_int(mm, "transA", 0, &trans_a) != NULL ||
        mlcc_node_attr_int(mm, "transB", 0, &trans_b) != NULL ||
        mlcc_node_attr_float(mm, "alpha", 1.f, &alpha) != NULL ||
        mlcc_node_attr_float(mm, "beta", 1.f, &beta) != NULL) {
      return mlcc_ok_status();
    }
    c = mlcc_node_input(mm, 2);
    if (trans_a != 0 || alpha != 1.f || (c != NULL && beta != 1.f)) return mlcc_ok_status();
  }
  bool trans = trans_b != 0;
  int64_t k = wq->shape.dims[trans ? 1 : 0], n = wq->shape.dims[trans ? 0 : 1];
  if (k < 1 || n < 1 || k > ((int64_t)1 << 30) || n > ((int64_t)1 << 30)) return mlcc_ok_status();
  if (c != NULL) {
    int64_t nc = is_const(c) && c->dtype == MLCC_DTYPE_F32 ? numel(c) : -1;
    bool row = c->shape.rank == 1 || (c->shape.rank == 2 && c->shape.dims[0] == 1);
    if (!(nc == 1 || (nc == n && row))) return mlcc_ok_status();
  }
  int64_t block = 0;
  if (!wq_param_layout(dq, trans, k, n, &block)) return mlcc_ok_status();
  int64_t bits = four ? 4 : 8;
  mlcc_wq_layout_t l;
  mlcc_wq_layout(k, n, bits, block, &l);
  // Zero points as offsets o = z - qmin; one value for all -> an attribute.
  bool sgn = wdt == MLCC_DTYPE_I4 || wdt == MLCC_DTYPE_I8;
  int64_t bias = sgn ? (four ? 8 : 128) : 0;
  int64_t zcommon = wz == NULL ? bias : mlcc_value_const_i64(wz, 0) + bias;
  bool zsame = true;
  for (int64_t i = 1; wz != NULL && i < numel(wz) && zsame; ++i) {
    zsame = mlcc_value_const_i64(wz, i) + bias == zcommon;
  }
  int64_t sbytes = l.n_blocks * l.n_pad * 4, zbytes = zsame ? 0 : l.n_blocks * l.n_pad;
  if (l.bytes + sbytes + zbytes >= k * n * 4) return mlcc_ok_status();
  uint8_t* wp = (uint8_t*)mlcc_arena_alloc(&graph->arena, (size_t)l.bytes, 64);
  float* sp = (float*)mlcc_arena_alloc(&graph->arena, (size_t)sbytes, 64);
  uint8_t* zp = zsame ? NULL : (uint8_t*)mlcc_arena_alloc(&graph->arena, (size_t)zbytes, 64);
  if (wp == NULL || sp == NULL || (!zsame && zp == NULL)) return oom();
  memset(wp, 0, (size_t)l.bytes);
  memset(sp, 0, (size_t)sbytes);
  if (zp != NULL) memset(zp, 0, (size_t)zbytes);
  const float* sv = (const float*)ws->data;
  for (int64_t kb = 0; kb < l.n_blocks; ++kb) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t pi = wq_param_index(ws, trans, kb, j, l.n_blocks);
      sp[kb * l.n_pad + j] = sv[pi];
      if (zp != NULL) zp[kb * l.n_pad + j] = (uint8_t)(mlcc_value_const_i64(wz, pi) + bias);
    }
  }
  // Codes u = q - qmin; the IR holds int4/uint4 one per byte (dtypes.def).
  const uint8_t* src = (const uint8_t*)wq->data;
  for (int64_t r = 0; r < k; ++r) {
    int64_t kb = r / block, in = r % block;
    int64_t brow = bits == 4 ? kb * l.block_rows + in / 2 : r;
    int shift = bits == 4 ? (int)(in % 2) * 4 : 0;
    for (int64_t j = 0; j < n; ++j) {
      uint8_t raw = src[trans ? j * k + r : r * n + j];
      int64_t u = sgn ? (int64_t)(int8_t)raw + bias : (int64_t)raw;
      if (four) u &= 15;
      int64_t pnl = j / MLCC_WQ_PANEL, col = j % MLCC_WQ_PANEL;
      wp[(pnl * l.panel_rows + brow) * MLCC_WQ_PANEL + col] |= (uint8_t)(u << shift);
    }
  }
  const char* base = wq->name ? wq->name : "w";
  mlcc_value_t *wv = NULL, *svv = NULL, *zv = NULL;
  mlcc_shape_t wsh = {.rank = 1, .dims = {l.bytes}};
  mlcc_shape_t ssh = {.rank = 2, .dims = {l.n_blocks, l.n_pad}};
  MLCC_RETURN_IF_ERROR(wq_add_const(graph, base, "_wq", MLCC_DTYPE_U8, &wsh, wp, &wv));
  MLCC_RETURN_IF_ERROR(wq_add_const(graph, base, "_wqs", MLCC_DTYPE_F32, &ssh, sp, &svv));
  if (zp != NULL) {
    MLCC_RETURN_IF_ERROR(wq_add_const(graph, base, "_wqz", MLCC_DTYPE_U8, &ssh, zp, &zv));
  }
  mlcc_attr_t* attrs = new_attrs(graph, 5);
  if (attrs == NULL) return oom();
  const char* names[5] = {MLCC_WQ_BITS_ATTR, MLCC_WQ_N_ATTR, MLCC_WQ_BLOCK_ATTR,
                          MLCC_WQ_OFFSET_ATTR, MLCC_WQ_GEMM_ATTR};
  int64_t vals[5] = {bits, n, block, zsame ? zcommon : 0, 1};
  uint32_t na = gemm ? 5 : 4;
  for (uint32_t i = 0; i < na; ++i) {
    attrs[i].name = names[i];
    attrs[i].kind = MLCC_ATTR_INT;
    attrs[i].i = vals[i];
  }
  mlcc_value_t* y = mm->outputs[0];
  mlcc_value_t* prod = y;
  if (c != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_graph_add_temp_value(graph, y->name ? y->name : "wq", &prod));
  }
  mlcc_value_t* ins[4] = {mm->inputs[0], wv, svv, zv};
  mm->dead = true;  // first, so |y|'s producer becomes the new node
  mlcc_node_t* node = NULL;
  mlcc_status_t st = mlcc_graph_add_node(graph, MLCC_OP_WQ_MATMUL, 1, mm->name, ins,
                                         zv != NULL ? 4 : 3, &prod, 1, attrs, na, &node);
  if (st == NULL && c != NULL) {
    mlcc_value_t* add_in[2] = {prod, c};
    st = mlcc_graph_add_node(graph, MLCC_OP_ADD, 14, mm->name, add_in, 2, &y, 1, NULL, 0, &node);
  }
  if (st != NULL) {
    // (a WQMatMul added before a failed Add writes only |prod|, read by nobody)
    mm->dead = false;
    y->producer = mm;
    return st;
  }
  *out_done = true;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_pass_quant_fuse(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                   bool* out_changed) {
  (void)ctx;
  *out_changed = false;
  mlcc_graph_recount_uses(graph);
  mlcc_status_t st = mlcc_ok_status();
  uint32_t n0 = graph->n_nodes;
  for (uint32_t i = 0; i < n0 && st == NULL; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead || n->op != MLCC_OP_QUANTIZE_LINEAR) continue;
    bool done = false;
    qconv_match_t m;
    int64_t mm_n = -1;
    if (match_qconv(n, &m)) {
      st = rewrite_qconv(graph, &m, &done);
    } else if (match_qmatmul(n, &m, &mm_n)) {
      st = rewrite_qmatmul(graph, &m, mm_n, &done);
    } else {
      rewrite_q_of_dq(graph, n, &done);
      if (!done) st = rewrite_qmove(graph, n, &done);
      if (st == NULL && !done) st = rewrite_qbinary(graph, n, &done);
      if (st == NULL && !done) st = rewrite_qpool(graph, n, &done);
      if (st == NULL && !done) st = rewrite_qconcat(graph, n, &done);
      if (st == NULL && !done) st = rewrite_qsigmoid(graph, n, &done);
    }
    if (st != NULL) st = mlcc_node_annotate(n, st);
    if (done) *out_changed = true;
  }
  // Weight-only quantized products, after the QDQ rules (their MatMuls are dead).
  uint32_t n1 = graph->n_nodes;
  for (uint32_t i = 0; i < n1 && st == NULL; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead || (n->op != MLCC_OP_MATMUL && n->op != MLCC_OP_GEMM)) continue;
    bool done = false;
    st = rewrite_wq_matmul(graph, n, &done);
    if (st != NULL) st = mlcc_node_annotate(n, st);
    if (done) *out_changed = true;
  }
  if (st == NULL && *out_changed) {
    mlcc_graph_compact(graph);
    st = mlcc_graph_toposort(graph);
  }
  return st;
}

//===----------------------------------------------------------------------===//
// quant-pack
//===----------------------------------------------------------------------===//

// Packs |node|'s constant weights: the blocked layout when |nb| > 0
// (MLCC_QBLOCK_ATTR = nb, |segments| window segments, k in groups of |kg|:
// MLCC_QBLOCK_K_ATTR = 4 for quads, 8 for octets), else the row
// kernel's [M][KW][KH][C/group] order (MLCC_QPACKED_ATTR = 1).
static mlcc_status_t pack_one(mlcc_graph_t* graph, mlcc_node_t* node, int64_t nb,
                              int64_t segments, int64_t kg) {
  uint32_t wi = node->op == MLCC_OP_QLINEAR_CONV ? 3 : 1;
  mlcc_value_t* w = node->inputs[wi];
  int64_t mo = w->shape.dims[0], cg = w->shape.dims[1];
  int64_t kh = w->shape.rank == 4 ? w->shape.dims[2] : 1;
  int64_t kw = w->shape.dims[w->shape.rank - 1];
  const mlcc_attr_t* ga = mlcc_node_attr(node, "group");
  int64_t group = ga != NULL && ga->kind == MLCC_ATTR_INT && ga->i > 0 ? ga->i : 1;
  size_t bytes = (size_t)(mo * cg * kh * kw);
  uint8_t* dst = (uint8_t*)mlcc_arena_alloc(&graph->arena, bytes ? bytes : 1, 64);
  uint32_t n_new = kg != 2 ? 2 : 1;  // the layout (+ MLCC_QBLOCK_K_ATTR for quads, octets)
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
      &graph->arena, (node->n_attrs + n_new) * sizeof(*attrs), _Alignof(mlcc_attr_t));
  if (dst == NULL || attrs == NULL) return oom();
  if (nb > 0) {
    mlcc_qgemm_pack_conv_blocked((const uint8_t*)w->data, mo, group, cg, kh, kw, segments, nb,
                                 kg, dst);
  } else {
    mlcc_qgemm_pack_conv_weights((const uint8_t*)w->data, mo, cg, kh, kw, dst);
  }
  const char* base = w->name ? w->name : "w";
  size_t len = strlen(base) + 32;
  char* name = (char*)malloc(len);
  if (name == NULL) return oom();
  for (uint32_t n = 0;; ++n) {
    snprintf(name, len, nb > 0 ? "%s_qblock_%u" : "%s_qpacked_%u", base, n);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_value_t* packed = NULL;
  mlcc_status_t s = mlcc_graph_add_constant(graph, name, w->dtype, &w->shape, dst, false,
                                            &packed);
  free(name);
  MLCC_RETURN_IF_ERROR(s);
  if (node->n_attrs > 0) memcpy(attrs, node->attrs, node->n_attrs * sizeof(*attrs));
  mlcc_attr_t* a = &attrs[node->n_attrs];
  memset(a, 0, sizeof(*a));
  a->name = nb > 0 ? MLCC_QBLOCK_ATTR : MLCC_QPACKED_ATTR;
  a->kind = MLCC_ATTR_INT;
  a->i = nb > 0 ? nb : 1;
  if (n_new == 2) {
    memset(a + 1, 0, sizeof(*a));
    a[1].name = MLCC_QBLOCK_K_ATTR;
    a[1].kind = MLCC_ATTR_INT;
    a[1].i = kg;
  }
  // Splice: nothing below can fail.
  node->attrs = attrs;
  node->n_attrs += n_new;
  node->inputs[wi] = packed;
  return mlcc_ok_status();
}

// Packs the constant 2-D B [K, N] of QLinearMatMul / MatMulInteger |node|
// in the blocked layout (MLCC_QBLOCK_ATTR = nb, k groups of |kg|: 4 or 8 add
// MLCC_QBLOCK_K_ATTR): B^T [N][K] packed like conv weights of N output
// channels.
static mlcc_status_t pack_matmul(mlcc_graph_t* graph, mlcc_node_t* node, int64_t nb,
                                 int64_t kg) {
  uint32_t bi = node->op == MLCC_OP_QLINEAR_MATMUL ? 3 : 1;
  mlcc_value_t* bm = node->inputs[bi];
  int64_t k = bm->shape.dims[0], n = bm->shape.dims[1];
  size_t bytes = (size_t)(k * n);
  uint8_t* dst = (uint8_t*)mlcc_arena_alloc(&graph->arena, bytes ? bytes : 1, 64);
  uint8_t* bt = (uint8_t*)malloc(bytes ? bytes : 1);
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
      &graph->arena, (node->n_attrs + (kg != 2 ? 2 : 1)) * sizeof(*attrs),
      _Alignof(mlcc_attr_t));
  if (dst == NULL || bt == NULL || attrs == NULL) {
    free(bt);
    return oom();
  }
  const uint8_t* src = (const uint8_t*)bm->data;
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t c = 0; c < n; ++c) bt[c * k + r] = src[r * n + c];
  }
  mlcc_qgemm_pack_conv_blocked(bt, n, 1, k, 1, 1, 1, nb, kg, dst);
  free(bt);
  const char* base = bm->name ? bm->name : "b";
  size_t len = strlen(base) + 32;
  char* name = (char*)malloc(len);
  if (name == NULL) return oom();
  for (uint32_t i = 0;; ++i) {
    snprintf(name, len, "%s_qblock_%u", base, i);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_value_t* packed = NULL;
  mlcc_status_t s = mlcc_graph_add_constant(graph, name, bm->dtype, &bm->shape, dst, false,
                                            &packed);
  free(name);
  MLCC_RETURN_IF_ERROR(s);
  if (node->n_attrs > 0) memcpy(attrs, node->attrs, node->n_attrs * sizeof(*attrs));
  mlcc_attr_t* a = &attrs[node->n_attrs];
  memset(a, 0, sizeof(*a));
  a->name = MLCC_QBLOCK_ATTR;
  a->kind = MLCC_ATTR_INT;
  a->i = nb;
  if (kg != 2) {
    memset(a + 1, 0, sizeof(*a));
    a[1].name = MLCC_QBLOCK_K_ATTR;
    a[1].kind = MLCC_ATTR_INT;
    a[1].i = kg;
  }
  // Splice: nothing below can fail.
  node->attrs = attrs;
  node->n_attrs += kg != 2 ? 2 : 1;
  node->inputs[bi] = packed;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_pass_quant_pack(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                   bool* out_changed) {
  *out_changed = false;
  const mlcc_target_t* target = ctx != NULL ? ctx->target : NULL;
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead || mlcc_node_attr(n, MLCC_QBLOCK_ATTR) != NULL) continue;
    if (n->op == MLCC_OP_QLINEAR_MATMUL || n->op == MLCC_OP_MATMUL_INTEGER) {
      mlcc_value_t* bm = mlcc_node_input(n, n->op == MLCC_OP_QLINEAR_MATMUL ? 3 : 1);
      if (!is_const(bm) || !is_q8(bm->dtype) || bm->shape.rank != 2 || bm->data == NULL) continue;
      int64_t kg = 2;
      int64_t nb = mlcc_qgemm_matmul_block(n, target, &kg);
      if (nb == 0) continue;
      mlcc_status_t s = pack_matmul(graph, n, nb, kg);
      if (s != NULL) return mlcc_node_annotate(n, s);
      *out_changed = true;
      continue;
    }
    if (n->op != MLCC_OP_QLINEAR_CONV && n->op != MLCC_OP_CONV_INTEGER) continue;
    if (mlcc_node_attr(n, MLCC_QPACKED_ATTR) != NULL) continue;
    mlcc_value_t* w = mlcc_node_input(n, n->op == MLCC_OP_QLINEAR_CONV ? 3 : 1);
    if (!is_const(w) || !is_q8(w->dtype) || w->shape.rank < 3 || w->data == NULL) continue;
    int64_t khw = 1;
    for (int32_t d = 2; d < w->shape.rank; ++d) khw *= w->shape.dims[d];
    int64_t segments = 1;
    int64_t kg = 2;
    int64_t nb = mlcc_qgemm_conv_block(n, target, &segments, &kg);
    // The row kernel reads 1x1 weights in ONNX order.
    if (nb == 0 && (khw == 1 || !mlcc_qgemm_conv_takes(n))) continue;
    mlcc_status_t s = pack_one(graph, n, nb, segments, kg);
    if (s != NULL) return mlcc_node_annotate(n, s);
    *out_changed = true;
  }
  return mlcc_ok_status();
}

// SPDX-License-Identifier: Apache-2.0
// expand-attention: float32 Attention-23/24/25 (ONNX; Q/K/V 3-D or 4-D, GQA/MQA,
// is_causal, scale, softcap, softmax_precision, past_key/past_value, the
// present outputs and qk_matmul_output) becomes the ops of its definition,
// which have fast kernels (batched MatMul with fused epilogues, Softmax):
//
//   Q, K, V as [B, H, S, D] (3-D inputs: Reshape + Transpose)
//   K' = Concat(past_key, K, axis 2)           V' likewise (= present_key/value)
//   K' and V' repeated to the query heads      (Reshape, Expand, Reshape; GQA)
//   s = MatMul(Q, Transpose(K')) * scale       (qk_matmul_output mode 0)
//   s = softcap * Tanh(s / softcap)            (softcap > 0; mode 1)
//   bias = M + C                               (M: the additive attn_mask cast
//                                              to float, or 0 / -inf for a
//                                              bool mask's true / false; a
//                                              shorter Attention-24 mask is
//                                              -inf past its end; C[i][j] =
//                                              -inf where j > i + past under
//                                              is_causal or outside the
//                                              Attention-25 window, else 0)
//   s = s + bias                               (mode 2)
//   s = Cast(s, softmax_precision)             (double: Softmax in double;
//                                              float16/bfloat16: rounded
//                                              through that type, then the
//                                              probabilities too)
//   P = Softmax(s, axis -1), cast back to float
//   P = Where(ReduceMax(bias, -1) > -inf, P, 0)  (fully masked rows; a
//                                              constant for a constant mask;
//                                              mode 3)
//   Y = MatMul(P, V')                           (3-D: Transpose + Reshape)
//
// the order of att_score in the reference kernel (targets/kernels/attention.c),
// which the opset-23 cases check against onnxruntime-node. A query row whose
// combined bias is -inf for every key is 0 in Y (ONNX Attention-23, the
// fully-masked-row errata; Softmax alone would give NaN); the guard is left
// out when the mask is a constant without such a row. A constant mask is
// folded into one constant bias here (fold-constants has run already).
// Left to the reference kernel: non-float32 inputs, nonpad_kv_seqlen
// (Attention-24; a run-time key count per batch), a shorter run-time mask,
// and bare-metal targets, where the [B, H, Sq, T] score tensor would cost
// SRAM that the streaming kernel does not need.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ops/misc.h"
#include "passes/pass.h"

typedef struct xa_t {
  mlcc_graph_t* g;
  const mlcc_node_t* att;  // the node being expanded
  unsigned n_names;
} xa_t;

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory in expand-attention");
}

// A fresh value name "<Attention node or output name>__xa<k>".
static void fresh_name(xa_t* x, char* buf, size_t cap) {
  const char* base = x->att->name && x->att->name[0] ? x->att->name : x->att->outputs[0]->name;
  do {
    snprintf(buf, cap, "%.96s__xa%u", base ? base : "attention", x->n_names++);
  } while (mlcc_graph_find_value(x->g, buf) != NULL);
}

static mlcc_status_t const_i64(xa_t* x, const int64_t* v, int32_t n, mlcc_value_t** out) {
  char name[128];
  fresh_name(x, name, sizeof(name));
  mlcc_shape_t sh = {.rank = 1, .dims = {n}};
  return mlcc_graph_add_constant(x->g, name, MLCC_DTYPE_I64, &sh, v, true, out);
}

static mlcc_status_t const_f32(xa_t* x, const float* v, const mlcc_shape_t* sh,
                               mlcc_value_t** out) {
  char name[128];
  fresh_name(x, name, sizeof(name));
  return mlcc_graph_add_constant(x->g, name, MLCC_DTYPE_F32, sh, v, true, out);
}

// Appends |op| and infers it at once. |fixed| is the output value to write
// (one of the Attention node's outputs), or NULL for a new intermediate.
static mlcc_status_t add(xa_t* x, mlcc_op_t op, int32_t opset, mlcc_value_t* const* ins,
                         uint32_t n_ins, const mlcc_attr_t* attrs, uint32_t n_attrs,
                         mlcc_value_t* fixed, mlcc_value_t** out) {
  mlcc_value_t* y = fixed;
  if (y == NULL) {
    char name[128];
    fresh_name(x, name, sizeof(name));
    MLCC_RETURN_IF_ERROR(mlcc_graph_add_value(x->g, name, MLCC_VALUE_INTERMEDIATE, &y));
  }
  mlcc_node_t* n = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_graph_add_node(x->g, op, opset, x->att->name, ins, n_ins, &y, 1,
                                           attrs, n_attrs, &n));
  const mlcc_op_desc_t* d = mlcc_op_desc(op);
  MLCC_RETURN_IF_ERROR(mlcc_node_annotate(n, d->infer(n)));
  if (!y->shape_known) {
    return mlcc_node_annotate(n, mlcc_make_status(MLCC_STATUS_INTERNAL,
                                                  "expand-attention left '%s' without a shape",
                                                  y->name));
  }
  *out = y;
  return mlcc_ok_status();
}

static mlcc_status_t ints_attr(xa_t* x, const char* name, const int64_t* v, uint32_t n,
                               mlcc_attr_t* out) {
  int64_t* a = (int64_t*)mlcc_arena_alloc(&x->g->arena, n * sizeof(int64_t), _Alignof(int64_t));
  if (a == NULL) return oom();
  memcpy(a, v, n * sizeof(int64_t));
  memset(out, 0, sizeof(*out));
  out->name = name;
  out->kind = MLCC_ATTR_INTS;
  out->ints = a;
  out->count = n;
  return mlcc_ok_status();
}

static mlcc_status_t int_attr(const char* name, int64_t v, mlcc_attr_t* out) {
  memset(out, 0, sizeof(*out));
  out->name = name;
  out->kind = MLCC_ATTR_INT;
  out->i = v;
  return mlcc_ok_status();
}

static mlcc_status_t reshape(xa_t* x, mlcc_value_t* in, const int64_t* dims, int32_t n,
                             mlcc_value_t* fixed, mlcc_value_t** out) {
  mlcc_value_t* shape = NULL;
  MLCC_RETURN_IF_ERROR(const_i64(x, dims, n, &shape));
  mlcc_value_t* ins[2] = {in, shape};
  return add(x, MLCC_OP_RESHAPE, 14, ins, 2, NULL, 0, fixed, out);
}

static mlcc_status_t transpose(xa_t* x, mlcc_value_t* in, const int64_t* perm, uint32_t n,
                               mlcc_value_t* fixed, mlcc_value_t** out) {
  mlcc_attr_t a;
  MLCC_RETURN_IF_ERROR(ints_attr(x, "perm", perm, n, &a));
  return add(x, MLCC_OP_TRANSPOSE, 13, &in, 1, &a, 1, fixed, out);
}

static mlcc_status_t binary(xa_t* x, mlcc_op_t op, mlcc_value_t* a, mlcc_value_t* b,
                            mlcc_value_t* fixed, mlcc_value_t** out) {
  mlcc_value_t* ins[2] = {a, b};
  return add(x, op, 14, ins, 2, NULL, 0, fixed, out);
}

static mlcc_status_t scalar_f32(xa_t* x, float v, mlcc_value_t** out) {
  mlcc_shape_t sh = {.rank = 0};
  return const_f32(x, &v, &sh, out);
}

// [B, S, H*D] (3-D) to [B, H, S, D]; a 4-D input is returned as it is.
static mlcc_status_t to_heads(xa_t* x, mlcc_value_t* in, int64_t heads, mlcc_value_t** out) {
  if (in->shape.rank == 4) {
    *out = in;
    return mlcc_ok_status();
  }
  int64_t b = in->shape.dims[0], s = in->shape.dims[1], d = in->shape.dims[2] / heads;
  const int64_t dims[4] = {b, s, heads, d};
  const int64_t perm[4] = {0, 2, 1, 3};
  mlcc_value_t* r = NULL;
  MLCC_RETURN_IF_ERROR(reshape(x, in, dims, 4, NULL, &r));
  return transpose(x, r, perm, 4, NULL, out);
}

// K or V over all keys (past, then current), written to |present| when the
// model reads it.
static mlcc_status_t all_keys(xa_t* x, mlcc_value_t* past, mlcc_value_t* cur,
                              mlcc_value_t* present, mlcc_value_t** out) {
  if (past != NULL) {
    mlcc_attr_t axis;
    int_attr("axis", 2, &axis);
    mlcc_value_t* ins[2] = {past, cur};
    return add(x, MLCC_OP_CONCAT, 13, ins, 2, &axis, 1, present, out);
  }
  if (present != NULL) return add(x, MLCC_OP_IDENTITY, 16, &cur, 1, NULL, 0, present, out);
  *out = cur;
  return mlcc_ok_status();
}

// [B, Hkv, T, D] repeated to [B, Hq, T, D] (query head h reads kv head h / g).
static mlcc_status_t repeat_heads(xa_t* x, mlcc_value_t* in, int64_t hq, mlcc_value_t** out) {
  const mlcc_shape_t* s = &in->shape;
  int64_t b = s->dims[0], hkv = s->dims[1], t = s->dims[2], d = s->dims[3];
  if (hkv == hq) {
    *out = in;
    return mlcc_ok_status();
  }
  const int64_t d5[5] = {b, hkv, 1, t, d};
  const int64_t e5[5] = {b, hkv, hq / hkv, t, d};
  const int64_t d4[4] = {b, hq, t, d};
  mlcc_value_t *r = NULL, *shape = NULL, *e = NULL;
  MLCC_RETURN_IF_ERROR(reshape(x, in, d5, 5, NULL, &r));
  MLCC_RETURN_IF_ERROR(const_i64(x, e5, 5, &shape));
  mlcc_value_t* ins[2] = {r, shape};
  MLCC_RETURN_IF_ERROR(add(x, MLCC_OP_EXPAND, 13, ins, 2, NULL, 0, NULL, &e));
  return reshape(x, e, d4, 4, NULL, out);
}

// The frontier bias [Sq, T]: -inf where key j is after query row i + past
// (is_causal) or outside Attention-25's sliding window around it.
static mlcc_status_t causal_bias(xa_t* x, const mlcc_attention_t* a, mlcc_value_t** out) {
  size_t n = (size_t)a->q_seq * (size_t)a->total;
  float* c = (float*)malloc(n ? n * sizeof(float) : 1);
  if (c == NULL) return oom();
  for (int64_t i = 0; i < a->q_seq; ++i) {
    for (int64_t j = 0; j < a->total; ++j) {
      c[i * a->total + j] = mlcc_attention_visible(a, a->past, i, j) ? 0 : -INFINITY;
    }
  }
  mlcc_shape_t sh = {.rank = 2, .dims = {a->q_seq, a->total}};
  mlcc_status_t s = const_f32(x, c, &sh, out);
  free(c);
  return s;
}

// Element |i| of constant |m| (bool, float32, float64 or an integer type;
// see foldable_mask) as a double.
static double elem_f64(const mlcc_value_t* m, int64_t i) {
  const void* d = m->data;
  switch (m->dtype) {
    case MLCC_DTYPE_BOOL:
    case MLCC_DTYPE_U8: return ((const uint8_t*)d)[i];
    case MLCC_DTYPE_I8: return ((const int8_t*)d)[i];
    case MLCC_DTYPE_U16: return ((const uint16_t*)d)[i];
    case MLCC_DTYPE_I16: return ((const int16_t*)d)[i];
    case MLCC_DTYPE_U32: return ((const uint32_t*)d)[i];
    case MLCC_DTYPE_I32: return ((const int32_t*)d)[i];
    case MLCC_DTYPE_U64: return (double)((const uint64_t*)d)[i];
    case MLCC_DTYPE_I64: return (double)((const int64_t*)d)[i];
    case MLCC_DTYPE_F64: return ((const double*)d)[i];
    default: return ((const float*)d)[i];
  }
}

// True if |m| is a constant mask that constant_bias folds (float16 masks are
// cast at run time instead).
static bool foldable_mask(const mlcc_value_t* m) {
  return m != NULL && m->kind == MLCC_VALUE_CONSTANT && m->data != NULL &&
         m->dtype != MLCC_DTYPE_F16;
}

// The additive bias of a constant attn_mask (or none: |m| NULL) and the
// causal frontier and sliding window as a
// constant [mb, mh, Sq, T] (mb, mh: B, Hq where the mask has those axes,
// else 1). When some query row is -inf at every key, |*open| is the bool
// constant [mb, mh, Sq, 1] that is false on those rows (the zero-row guard),
// else NULL.
static mlcc_status_t constant_bias(xa_t* x, const mlcc_attention_t* a, const mlcc_value_t* m,
                                   mlcc_value_t** out, mlcc_value_t** open) {
  int64_t mb = a->m_stride[0] ? a->batch : 1, mh = a->m_stride[1] ? a->q_heads : 1;
  size_t n = (size_t)(mb * mh * a->q_seq * a->total), rows = (size_t)(mb * mh * a->q_seq);
  float* c = (float*)malloc(n ? n * sizeof(float) : 1);
  uint8_t* row_ok = (uint8_t*)malloc(rows ? rows : 1);
  if (c == NULL || row_ok == NULL) {
    free(c);
    free(row_ok);
    return oom();
  }
  bool any_row_masked = false;
  size_t o = 0, r = 0;
  for (int64_t b = 0; b < mb; ++b) {
    for (int64_t h = 0; h < mh; ++h) {
      for (int64_t i = 0; i < a->q_seq; ++i) {
        bool row_open = false;
        for (int64_t j = 0; j < a->total; ++j, ++o) {
          int64_t mi = b * a->m_stride[0] + h * a->m_stride[1] + i * a->m_stride[2] +
                       j * a->m_stride[3];
          // Keys past a shorter (Attention-24) mask are masked.
          float v = j >= a->m_len       ? -INFINITY
                    : m == NULL         ? 0.f
                    : a->mask_kind == 1 ? (elem_f64(m, mi) != 0 ? 0.f : -INFINITY)
                                        : (float)elem_f64(m, mi);
          if (!mlcc_attention_visible(a, a->past, i, j)) v = -INFINITY;
          c[o] = v;
          row_open = row_open || v != -INFINITY;
        }
        row_ok[r++] = row_open;
        any_row_masked = any_row_masked || !row_open;
      }
    }
  }
  mlcc_shape_t sh = {.rank = 4, .dims = {mb, mh, a->q_seq, a->total}};
  mlcc_status_t s = const_f32(x, c, &sh, out);
  *open = NULL;
  if (s == NULL && any_row_masked) {
    char name[128];
    fresh_name(x, name, sizeof(name));
    mlcc_shape_t rs = {.rank = 4, .dims = {mb, mh, a->q_seq, 1}};
    s = mlcc_graph_add_constant(x->g, name, MLCC_DTYPE_BOOL, &rs, row_ok, true, open);
  }
  free(c);
  free(row_ok);
  return s;
}

// The additive bias of Attention's attn_mask and is_causal (NULL when it
// has neither) and, when the fully-masked-row guard is needed, the bool
// tensor [.., Sq, 1] that is false on the rows to zero (NULL otherwise).
static mlcc_status_t attention_bias(xa_t* x, const mlcc_attention_t* a, mlcc_value_t* m,
                                    mlcc_value_t** out, mlcc_value_t** open) {
  *out = NULL;
  *open = NULL;
  // A window without a mask is a constant bias too; unlike causality alone it
  // can close a whole row (a query past the keys), so the guard is computed.
  if (foldable_mask(m) || (m == NULL && mlcc_attention_windowed(a))) {
    return constant_bias(x, a, m, out, open);
  }
  mlcc_value_t* bias = NULL;
  if (m != NULL && a->mask_kind == 1) {
    mlcc_value_t *zero = NULL, *ninf = NULL;
    MLCC_RETURN_IF_ERROR(scalar_f32(x, 0.f, &zero));
    MLCC_RETURN_IF_ERROR(scalar_f32(x, -INFINITY, &ninf));
    mlcc_value_t* ins[3] = {m, zero, ninf};
    MLCC_RETURN_IF_ERROR(add(x, MLCC_OP_WHERE, 16, ins, 3, NULL, 0, NULL, &bias));
  } else if (m != NULL && m->dtype != MLCC_DTYPE_F32) {
    mlcc_attr_t to;
    int_attr("to", MLCC_DTYPE_F32, &to);
    MLCC_RETURN_IF_ERROR(add(x, MLCC_OP_CAST, 13, &m, 1, &to, 1, NULL, &bias));
  } else if (m != NULL) {
    bias = m;
  }
  if (a->causal || mlcc_attention_windowed(a)) {
    mlcc_value_t* c = NULL;
    MLCC_RETURN_IF_ERROR(causal_bias(x, a, &c));
    if (bias == NULL) bias = c;
    else MLCC_RETURN_IF_ERROR(binary(x, MLCC_OP_ADD, bias, c, NULL, &bias));
  }
  *out = bias;
  // Causality alone leaves key 0 open to every row; a run-time mask may not:
  // open = ReduceMax(bias, -1) > -inf.
  if (m == NULL) return mlcc_ok_status();
  const int64_t last = -1;
  mlcc_attr_t attrs[2];
  MLCC_RETURN_IF_ERROR(ints_attr(x, "axes", &last, 1, &attrs[0]));
  int_attr("keepdims", 1, &attrs[1]);
  mlcc_value_t *rmax = NULL, *ninf = NULL;
  MLCC_RETURN_IF_ERROR(add(x, MLCC_OP_REDUCE_MAX, 13, &bias, 1, attrs, 2, NULL, &rmax));
  MLCC_RETURN_IF_ERROR(scalar_f32(x, -INFINITY, &ninf));
  return binary(x, MLCC_OP_GREATER, rmax, ninf, NULL, open);
}

// P with the rows where |open| is false set to 0.
static mlcc_status_t zero_masked_rows(xa_t* x, mlcc_value_t* open, mlcc_value_t* p,
                                      mlcc_value_t** out) {
  mlcc_value_t* zero = NULL;
  MLCC_RETURN_IF_ERROR(scalar_f32(x, 0.f, &zero));
  mlcc_value_t* ins[3] = {open, p, zero};
  return add(x, MLCC_OP_WHERE, 16, ins, 3, NULL, 0, NULL, out);
}

// qk_matmul_output = Identity(|v|) when the node's mode is |mode|.
static mlcc_status_t qk_output(xa_t* x, const mlcc_attention_t* a, int mode, mlcc_value_t* v) {
  if (a->qk_mode != mode) return mlcc_ok_status();
  mlcc_value_t* out = NULL;
  return add(x, MLCC_OP_IDENTITY, 16, &v, 1, NULL, 0, x->att->outputs[3], &out);
}

static mlcc_status_t cast(xa_t* x, mlcc_value_t* v, mlcc_dtype_t to, mlcc_value_t** out) {
  mlcc_attr_t a;
  int_attr("to", (int64_t)to, &a);
  return add(x, MLCC_OP_CAST, 13, &v, 1, &a, 1, NULL, out);
}

// The float32 scores |s| for a Softmax in |dt| (softmax_precision): double
// casts to double; float16 and bfloat16 round through that type (mlcc
// computes both as float, and only Cast reads bfloat16).
static mlcc_status_t to_softmax_type(xa_t* x, mlcc_dtype_t dt, mlcc_value_t* s,
                                     mlcc_value_t** out) {
  *out = s;
  if (dt == MLCC_DTYPE_F32) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(cast(x, s, dt, out));
  if (dt == MLCC_DTYPE_F64) return mlcc_ok_status();
  return cast(x, *out, MLCC_DTYPE_F32, out);
}

// The Softmax output |p| back in float32 (through |dt| for float16 and
// bfloat16, as the spec's Cast to T1 of a softmax computed in |dt|).
static mlcc_status_t from_softmax_type(xa_t* x, mlcc_dtype_t dt, mlcc_value_t* p,
                                       mlcc_value_t** out) {
  *out = p;
  if (dt == MLCC_DTYPE_F32) return mlcc_ok_status();
  if (dt != MLCC_DTYPE_F64) MLCC_RETURN_IF_ERROR(cast(x, p, dt, &p));
  return cast(x, p, MLCC_DTYPE_F32, out);
}

// True if |node| is an Attention this pass expands.
static bool expandable(const mlcc_node_t* node, mlcc_attention_t* a) {
  if (node->op != MLCC_OP_ATTENTION) return false;
  if (node->outputs[0] == NULL || node->outputs[0]->dtype != MLCC_DTYPE_F32) return false;
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    if (node->inputs[i] != NULL && !node->inputs[i]->shape_known) return false;
  }
  mlcc_status_t s = mlcc_attention_resolve(node, a, NULL);
  if (s != NULL) {
    mlcc_status_free(s);
    return false;
  }
  if (a->nonpad) return false;
  if (a->m_len < a->total && !foldable_mask(node->inputs[3])) return false;
  // Score tensors of 2^28 elements or more stay with the streaming kernel.
  double scores = (double)a->batch * (double)a->q_heads * (double)a->q_seq * (double)a->total;
  return scores < (double)(1 << 28) && a->q_heads % a->kv_heads == 0;
}

static mlcc_status_t expand(mlcc_graph_t* g, mlcc_node_t* node, const mlcc_attention_t* a) {
  xa_t x = {.g = g, .att = node};
  mlcc_value_t* in[6] = {0};
  for (uint32_t i = 0; i < node->n_inputs && i < 6; ++i) in[i] = node->inputs[i];
  mlcc_value_t* y = node->outputs[0];
  mlcc_value_t* present_k = node->n_outputs > 1 ? node->outputs[1] : NULL;
  mlcc_value_t* present_v = node->n_outputs > 2 ? node->outputs[2] : NULL;
  bool three_d = in[0]->shape.rank == 3;
  // Kill first so the outputs' producers become the new nodes.
  node->dead = true;
  mlcc_value_t *q = NULL, *k = NULL, *v = NULL, *kt = NULL, *vt = NULL;
  MLCC_RETURN_IF_ERROR(to_heads(&x, in[0], a->q_heads, &q));
  MLCC_RETURN_IF_ERROR(to_heads(&x, in[1], a->kv_heads, &k));
  MLCC_RETURN_IF_ERROR(to_heads(&x, in[2], a->kv_heads, &v));
  MLCC_RETURN_IF_ERROR(all_keys(&x, in[4], k, present_k, &kt));
  MLCC_RETURN_IF_ERROR(all_keys(&x, in[5], v, present_v, &vt));
  mlcc_value_t *ke = NULL, *ve = NULL, *ktr = NULL, *s = NULL, *sc = NULL;
  MLCC_RETURN_IF_ERROR(repeat_heads(&x, kt, a->q_heads, &ke));
  MLCC_RETURN_IF_ERROR(repeat_heads(&x, vt, a->q_heads, &ve));
  const int64_t swap[4] = {0, 1, 3, 2};
  MLCC_RETURN_IF_ERROR(transpose(&x, ke, swap, 4, NULL, &ktr));
  mlcc_value_t* qk[2] = {q, ktr};
  MLCC_RETURN_IF_ERROR(add(&x, MLCC_OP_MATMUL, 13, qk, 2, NULL, 0, NULL, &s));
  MLCC_RETURN_IF_ERROR(scalar_f32(&x, (float)a->scale, &sc));
  MLCC_RETURN_IF_ERROR(binary(&x, MLCC_OP_MUL, s, sc, NULL, &s));
  MLCC_RETURN_IF_ERROR(qk_output(&x, a, 0, s));
  if (a->softcap > 0) {
    mlcc_value_t *cap = NULL, *t = NULL;
    MLCC_RETURN_IF_ERROR(scalar_f32(&x, (float)a->softcap, &cap));
    MLCC_RETURN_IF_ERROR(binary(&x, MLCC_OP_DIV, s, cap, NULL, &t));
    MLCC_RETURN_IF_ERROR(add(&x, MLCC_OP_TANH, 13, &t, 1, NULL, 0, NULL, &t));
    MLCC_RETURN_IF_ERROR(binary(&x, MLCC_OP_MUL, t, cap, NULL, &s));
  }
  MLCC_RETURN_IF_ERROR(qk_output(&x, a, 1, s));
  mlcc_value_t *bias = NULL, *open = NULL;
  MLCC_RETURN_IF_ERROR(attention_bias(&x, a, in[3], &bias, &open));
  if (bias != NULL) MLCC_RETURN_IF_ERROR(binary(&x, MLCC_OP_ADD, s, bias, NULL, &s));
  MLCC_RETURN_IF_ERROR(qk_output(&x, a, 2, s));
  mlcc_attr_t axis;
  int_attr("axis", -1, &axis);
  mlcc_value_t* p = NULL;
  MLCC_RETURN_IF_ERROR(to_softmax_type(&x, a->softmax_dt, s, &s));
  MLCC_RETURN_IF_ERROR(add(&x, MLCC_OP_SOFTMAX, 13, &s, 1, &axis, 1, NULL, &p));
  MLCC_RETURN_IF_ERROR(from_softmax_type(&x, a->softmax_dt, p, &p));
  if (open != NULL) MLCC_RETURN_IF_ERROR(zero_masked_rows(&x, open, p, &p));
  MLCC_RETURN_IF_ERROR(qk_output(&x, a, 3, p));
  mlcc_value_t* pv[2] = {p, ve};
  if (!three_d) return add(&x, MLCC_OP_MATMUL, 13, pv, 2, NULL, 0, y, &y);
  mlcc_value_t *o = NULL, *ot = NULL;
  MLCC_RETURN_IF_ERROR(add(&x, MLCC_OP_MATMUL, 13, pv, 2, NULL, 0, NULL, &o));
  const int64_t perm[4] = {0, 2, 1, 3};
  MLCC_RETURN_IF_ERROR(transpose(&x, o, perm, 4, NULL, &ot));
  const int64_t dims[3] = {a->batch, a->q_seq, a->q_heads * a->v_head};
  return reshape(&x, ot, dims, 3, y, &y);
}

mlcc_status_t mlcc_pass_expand_attention(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                         bool* out_changed) {
  *out_changed = false;
  if (ctx->target != NULL && mlcc_target_is_bare_metal(ctx->target)) return mlcc_ok_status();
  uint32_t n0 = graph->n_nodes;
  for (uint32_t i = 0; i < n0; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    mlcc_attention_t a;
    if (n->dead || !expandable(n, &a)) continue;
    MLCC_RETURN_IF_ERROR(expand(graph, n, &a));
    *out_changed = true;
  }
  if (!*out_changed) return mlcc_ok_status();
  mlcc_graph_compact(graph);
  mlcc_graph_recount_uses(graph);
  return mlcc_graph_toposort(graph);
}

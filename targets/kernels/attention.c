// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of Einsum, RotaryEmbedding 23 and Attention 23-24 (ops.def
// "Conformance ops"): scalar loop nests through the emit.h toolkit over the
// parsed forms of ir/ops/misc.h.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/misc.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

// One loop over the output; nested loops over the summed labels; the product
// of the operands (size-1 ellipsis dims broadcast) accumulated in a variable.
static mlcc_status_t emit_misc_einsum(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = y->dtype;
  mlcc_einsum_t e;
  MLCC_RETURN_IF_ERROR(mlcc_einsum_parse(node, &e));
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  LLVMValueRef lv[MLCC_EINSUM_MAX_LABELS] = {0};
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "e");
  LLVMValueRef oi[MLCC_MAX_RANK];
  if (y->shape.rank > 0) mlcc_emit_unravel(ctx, &y->shape, l.iv, oi);
  for (int32_t d = 0; d < e.out_rank; ++d) lv[e.out_labels[d]] = oi[d];
  LLVMValueRef acc = mlcc_emit_var(ctx, t, mlcc_emit_const(ctx, dt, 0));
  LLVMBuildStore(ctx->b, mlcc_emit_const(ctx, dt, 0), acc);
  mlcc_loop_t sl[MLCC_EINSUM_MAX_LABELS];
  bool empty = false;
  for (int32_t s = 0; s < e.n_sum; ++s) empty |= e.label_dim[e.sum_labels[s]] == 0;
  if (!empty) {
    for (int32_t s = 0; s < e.n_sum; ++s) {
      sl[s] = mlcc_emit_for(ctx, 0, e.label_dim[e.sum_labels[s]], "s");
      lv[e.sum_labels[s]] = sl[s].iv;
    }
    LLVMValueRef prod = NULL;
    for (uint32_t i = 0; i < e.n_inputs; ++i) {
      const mlcc_value_t* in = node->inputs[i];
      int64_t st_[MLCC_MAX_RANK];
      strides_of(&in->shape, st_);
      LLVMValueRef idx = c64(ctx, 0);
      for (int32_t d = 0; d < e.in_rank[i]; ++d) {
        if (in->shape.dims[d] == 1) continue;  // broadcast or size-1 dim
        idx = wmad(ctx, lv[e.in_labels[i][d]], st_[d], idx);
      }
      LLVMValueRef v = mlcc_emit_load(ctx, in, idx);
      if (prod == NULL) prod = v;
      else prod = mlcc_dtype_is_float(dt) ? LLVMBuildFMul(ctx->b, prod, v, "") : LLVMBuildMul(ctx->b, prod, v, "");
    }
    LLVMValueRef cur = load_var(ctx, t, acc);
    LLVMBuildStore(ctx->b, mlcc_dtype_is_float(dt) ? LLVMBuildFAdd(ctx->b, cur, prod, "")
                                     : LLVMBuildAdd(ctx->b, cur, prod, ""), acc);
    for (int32_t s = e.n_sum - 1; s >= 0; --s) mlcc_emit_loop_end(ctx, &sl[s]);
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, load_var(ctx, t, acc));
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding (23)
//===----------------------------------------------------------------------===//

// Per (b, s): the cache row (position_ids[b, s], clamped into the cache so a
// bad id never reads out of bounds, or b*S + s); per head the rot/2 pairs
// rotate by (cos, sin) of that row and the rest of the head is copied.
static mlcc_status_t emit_misc_rotary(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  mlcc_rotary_t r;
  MLCC_RETURN_IF_ERROR(mlcc_rotary_resolve(node, &r));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* cv = mlcc_node_input(node, 1);
  const mlcc_value_t* sv = mlcc_node_input(node, 2);
  const mlcc_value_t* pv = r.has_pos ? mlcc_node_input(node, 3) : NULL;
  const int64_t half = r.rot / 2;
  if (r.batch * r.seq * r.heads * r.head_size == 0) return mlcc_ok_status();
  LLVMBuilderRef b = ctx->b;
  mlcc_loop_t lb = mlcc_emit_for(ctx, 0, r.batch, "rb");
  mlcc_loop_t ls = mlcc_emit_for(ctx, 0, r.seq, "rs");
  LLVMValueRef bs = wmad(ctx, lb.iv, r.seq, ls.iv);
  LLVMValueRef row = pv != NULL ? clamp_index(ctx, load_i64(ctx, pv, bs), r.positions) : bs;
  LLVMValueRef crow = wmulc(ctx, row, half);
  LLVMValueRef xbs = wadd(ctx, wmulc(ctx, lb.iv, r.x_b), wmulc(ctx, ls.iv, r.x_s));
  mlcc_loop_t lh = mlcc_emit_for(ctx, 0, r.heads, "rh");
  LLVMValueRef base = wadd(ctx, xbs, wmulc(ctx, lh.iv, r.x_h));
  mlcc_status_t st = mlcc_ok_status();
  if (half > 0) {
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, half, "rj");
    LLVMValueRef i1 = r.interleaved ? wmulc(ctx, lj.iv, 2) : lj.iv;
    LLVMValueRef i2 = r.interleaved ? wadd(ctx, i1, c64(ctx, 1)) : wadd(ctx, lj.iv, c64(ctx, half));
    LLVMValueRef a1 = wadd(ctx, base, i1), a2 = wadd(ctx, base, i2);
    LLVMValueRef x1 = mlcc_emit_load(ctx, x, a1), x2 = mlcc_emit_load(ctx, x, a2);
    LLVMValueRef c = mlcc_emit_load(ctx, cv, wadd(ctx, crow, lj.iv));
    LLVMValueRef sn = mlcc_emit_load(ctx, sv, wadd(ctx, crow, lj.iv));
    LLVMValueRef re = LLVMBuildFSub(b, LLVMBuildFMul(b, c, x1, ""), LLVMBuildFMul(b, sn, x2, ""), "");
    LLVMValueRef im = LLVMBuildFAdd(b, LLVMBuildFMul(b, sn, x1, ""), LLVMBuildFMul(b, c, x2, ""), "");
    st = mlcc_emit_store_output(ctx, node, 0, a1, re);
    if (mlcc_status_is_ok(st)) st = mlcc_emit_store_output(ctx, node, 0, a2, im);
    mlcc_emit_loop_end(ctx, &lj);
  }
  if (mlcc_status_is_ok(st) && r.rot < r.head_size) {
    mlcc_loop_t ld = mlcc_emit_for(ctx, r.rot, r.head_size, "rd");
    LLVMValueRef a = wadd(ctx, base, ld.iv);
    st = mlcc_emit_store_output(ctx, node, 0, a, mlcc_emit_load(ctx, x, a));
    mlcc_emit_loop_end(ctx, &ld);
  }
  mlcc_emit_loop_end(ctx, &lh);
  mlcc_emit_loop_end(ctx, &ls);
  mlcc_emit_loop_end(ctx, &lb);
  return st;
}

//===----------------------------------------------------------------------===//
// Attention (23)
//===----------------------------------------------------------------------===//

// The parts of one Attention kernel that the key loops share.
typedef struct att_emit_t {
  const mlcc_attention_t* a;
  const mlcc_value_t *q, *k, *v, *mask, *pk, *pv, *nonpad;
  mlcc_dtype_t dt, sdt;      // Q's type; softmax_precision
  bool narrow;               // sdt is float16 or bfloat16 (computed as float,
                             // scores and probabilities rounded to it)
  LLVMTypeRef t, st;
  LLVMValueRef b, h, hk, i;  // loop ivs: batch, query head, its kv head, query row
  LLVMValueRef qbase;        // Q index of (b, h, i, 0)
  LLVMValueRef n_valid;      // nonpad_kv_seqlen[b] (i64), or NULL
} att_emit_t;

// Score of query row |e->i| against key |jt| (0..total): the scaled dot
// product (key vector at |kv|[kbase..]), softcapped, then masked (-inf where
// a bool mask is false, past a shorter mask, at or after nonpad_kv_seqlen[b]
// or where causality forbids) or with the additive mask added. The stages
// (scaled, softcapped, with the bias) go to |stage| when it is not NULL
// (qk_matmul_output modes 0-2).
static LLVMValueRef att_score(mlcc_emit_ctx_t* ctx, const att_emit_t* e, const mlcc_value_t* kv,
                              LLVMValueRef kbase, LLVMValueRef jt, LLVMValueRef* stage) {
  const mlcc_attention_t* a = e->a;
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef acc = mlcc_emit_var(ctx, e->t, mlcc_emit_const(ctx, e->dt, 0));
  LLVMBuildStore(b, mlcc_emit_const(ctx, e->dt, 0), acc);
  mlcc_loop_t ld = mlcc_emit_for(ctx, 0, a->head, "ad");
  LLVMValueRef qv = mlcc_emit_load(ctx, e->q, wadd(ctx, e->qbase, ld.iv));
  LLVMValueRef kvv = mlcc_emit_load(ctx, kv, wadd(ctx, kbase, ld.iv));
  LLVMBuildStore(b, mlcc_emit_fmuladd(ctx, qv, kvv, load_var(ctx, e->t, acc)), acc);
  mlcc_emit_loop_end(ctx, &ld);
  LLVMValueRef s = LLVMBuildFMul(b, load_var(ctx, e->t, acc), mlcc_emit_const(ctx, e->dt, a->scale), "");
  if (stage != NULL) stage[0] = s;
  if (a->softcap > 0) {
    LLVMValueRef u = LLVMBuildFDiv(b, s, mlcc_emit_const(ctx, e->dt, a->softcap), "");
    s = LLVMBuildFMul(b, mlcc_emit_const(ctx, e->dt, a->softcap), mlcc_emit_fast_tanh(ctx, u), "");
  }
  if (stage != NULL) stage[1] = s;
  LLVMValueRef ninf = mlcc_emit_const(ctx, e->dt, -INFINITY);
  if (a->mask_kind != 0) {
    // Keys past a shorter (Attention-24) mask read key 0's entry and are masked.
    LLVMValueRef in_mask = NULL, mj = jt;
    if (a->m_len < a->total) {
      in_mask = icmp(ctx, LLVMIntSLT, jt, c64(ctx, a->m_len));
      mj = LLVMBuildSelect(b, in_mask, jt, c64(ctx, 0), "");
    }
    LLVMValueRef mi = wadd(ctx, wadd(ctx, wmulc(ctx, e->b, a->m_stride[0]),
                                     wmulc(ctx, e->h, a->m_stride[1])),
                           wadd(ctx, wmulc(ctx, e->i, a->m_stride[2]), wmulc(ctx, mj, a->m_stride[3])));
    LLVMValueRef mv = a->m_len > 0 ? mlcc_emit_load(ctx, e->mask, mi) : NULL;
    if (mv == NULL) {
      s = ninf;
    } else if (a->mask_kind == 1) {
      s = LLVMBuildSelect(b, mv, s, ninf, "");
    } else {
      if (e->mask->dtype != e->dt) mv = mlcc_emit_convert(ctx, mv, e->mask->dtype, e->dt);
      s = LLVMBuildFAdd(b, s, mv, "");
    }
    if (in_mask != NULL) s = LLVMBuildSelect(b, in_mask, s, ninf, "");
  }
  if (e->n_valid != NULL) {
    s = LLVMBuildSelect(b, icmp(ctx, LLVMIntSLT, jt, e->n_valid), s, ninf, "");
  }
  if (a->causal || mlcc_attention_windowed(a)) {
    // The query's absolute position p = i + offset, offset = past, or
    // (external cache: nonpad_kv_seqlen without past_key) nonpad_kv_seqlen[b]
    // - Sq. Causal (bottom-right frontier): j <= p; Attention-25's window:
    // p - left_window <= j <= p + right_window (mlcc_attention_visible).
    LLVMValueRef off = e->n_valid != NULL && e->pk == NULL
                           ? LLVMBuildSub(b, e->n_valid, c64(ctx, a->q_seq), "")
                           : c64(ctx, a->past);
    LLVMValueRef p = wadd(ctx, e->i, off);
    if (a->causal) s = LLVMBuildSelect(b, icmp(ctx, LLVMIntSGT, jt, p), ninf, s, "");
    if (a->left_window >= 0) {
      LLVMValueRef lo = LLVMBuildSub(b, p, c64(ctx, a->left_window), "");
      s = LLVMBuildSelect(b, icmp(ctx, LLVMIntSLT, jt, lo), ninf, s, "");
    }
    if (a->right_window >= 0) {
      LLVMValueRef hi = wadd(ctx, p, c64(ctx, a->right_window));
      s = LLVMBuildSelect(b, icmp(ctx, LLVMIntSGT, jt, hi), ninf, s, "");
    }
  }
  if (stage != NULL) stage[2] = s;
  return s;
}

// Key |j| of a segment: the past cache (|past|) or the current K/V.
static LLVMValueRef att_kbase(mlcc_emit_ctx_t* ctx, const att_emit_t* e, bool past, bool value,
                              LLVMValueRef j) {
  const mlcc_attention_t* a = e->a;
  int64_t d = value ? a->v_head : a->head;
  if (past) {
    return wmulc(ctx, wmad(ctx, wmad(ctx, e->b, a->kv_heads, e->hk), a->past, j), d);
  }
  if (value) {
    return wadd(ctx, wadd(ctx, wmulc(ctx, e->b, a->v_b), wmulc(ctx, e->hk, a->v_h)),
                wmulc(ctx, j, a->v_s));
  }
  return wadd(ctx, wadd(ctx, wmulc(ctx, e->b, a->k_b), wmulc(ctx, e->hk, a->k_h)),
              wmulc(ctx, j, a->k_s));
}

// One loop over the keys of query row |e->i| per segment (the past cache,
// then the current K/V): calls |body| with the segment (|past|), the index
// |j| in it, the key index |jt| (0..total) and the score; the stages of
// att_score go to |stage| when it is not NULL.
typedef void (*att_key_fn)(mlcc_emit_ctx_t* ctx, const att_emit_t* e, bool past, LLVMValueRef j,
                           LLVMValueRef jt, LLVMValueRef s, LLVMValueRef* stage, void* user);

static void att_keys(mlcc_emit_ctx_t* ctx, const att_emit_t* e, bool stages, att_key_fn body,
                     void* user) {
  const mlcc_attention_t* a = e->a;
  for (int seg = 0; seg < 2; ++seg) {
    int64_t n = seg == 0 ? a->past : a->kv_seq;
    if (n == 0) continue;
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, n, "aj");
    LLVMValueRef jt = seg == 0 ? lj.iv : wadd(ctx, lj.iv, c64(ctx, a->past));
    LLVMValueRef stage[3];
    LLVMValueRef s = att_score(ctx, e, seg == 0 ? e->pk : e->k,
                               att_kbase(ctx, e, seg == 0, false, lj.iv), jt,
                               stages ? stage : NULL);
    body(ctx, e, seg == 0, lj.iv, jt, s, stages ? stage : NULL, user);
    mlcc_emit_loop_end(ctx, &lj);
  }
}

// The running max and sum of exponentials of one query row (in the softmax
// type), and where qk_matmul_output modes 0-2 are written.
typedef struct att_row_t {
  LLVMValueRef mvar, lvar;
  LLVMValueRef qkbase;  // qk_matmul_output index of (b, h, i, 0)
  const mlcc_node_t* node;
  mlcc_status_t st;
} att_row_t;

// Pass 1 (online softmax): max and sum; qk_matmul_output modes 0-2.
static void att_pass_max_sum(mlcc_emit_ctx_t* ctx, const att_emit_t* e, bool past,
                             LLVMValueRef j, LLVMValueRef jt,
                             LLVMValueRef s, LLVMValueRef* stage, void* user) {
  (void)past, (void)j;
  att_row_t* r = (att_row_t*)user;
  LLVMBuilderRef b = ctx->b;
  if (stage != NULL && mlcc_status_is_ok(r->st)) {
    r->st = mlcc_emit_store_output(ctx, r->node, 3, wadd(ctx, r->qkbase, jt),
                                   stage[e->a->qk_mode]);
  }
  LLVMValueRef ninf = mlcc_emit_const(ctx, e->sdt, -INFINITY);
  s = mlcc_emit_convert(ctx, s, e->dt, e->sdt);
  LLVMValueRef m = load_var(ctx, e->st, r->mvar), l = load_var(ctx, e->st, r->lvar);
  LLVMValueRef valid = LLVMBuildFCmp(b, LLVMRealOGT, s, ninf, "");
  LLVMValueRef nm = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, s, m, ""), s, m, "");
  LLVMValueRef nl = LLVMBuildFAdd(
      b, LLVMBuildFMul(b, l, mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, m, nm, "")), ""),
      mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, s, nm, "")), "");
  LLVMBuildStore(b, LLVMBuildSelect(b, valid, nm, m, ""), r->mvar);
  LLVMBuildStore(b, LLVMBuildSelect(b, valid, nl, l, ""), r->lvar);
}

// exp(s - max) of one key in the softmax type (0 for a masked key).
static LLVMValueRef att_weight(mlcc_emit_ctx_t* ctx, const att_emit_t* e, LLVMValueRef s,
                               LLVMValueRef m) {
  LLVMBuilderRef b = ctx->b;
  s = mlcc_emit_convert(ctx, s, e->dt, e->sdt);
  LLVMValueRef valid = LLVMBuildFCmp(b, LLVMRealOGT, s, mlcc_emit_const(ctx, e->sdt, -INFINITY), "");
  return LLVMBuildSelect(b, valid, mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, s, m, "")),
                         mlcc_emit_const(ctx, e->sdt, 0), "");
}

// qk_matmul_output mode 3: the softmax probabilities (0 on a fully masked row).
static void att_pass_probs(mlcc_emit_ctx_t* ctx, const att_emit_t* e, bool past,
                             LLVMValueRef j, LLVMValueRef jt,
                           LLVMValueRef s, LLVMValueRef* stage, void* user) {
  (void)past, (void)j, (void)stage;
  att_row_t* r = (att_row_t*)user;
  if (!mlcc_status_is_ok(r->st)) return;
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef m = load_var(ctx, e->st, r->mvar), l = load_var(ctx, e->st, r->lvar);
  LLVMValueRef zero = mlcc_emit_const(ctx, e->sdt, 0);
  LLVMValueRef any = LLVMBuildFCmp(b, LLVMRealOGT, l, zero, "");
  LLVMValueRef p = LLVMBuildSelect(b, any, LLVMBuildFDiv(b, att_weight(ctx, e, s, m), l, ""),
                                   zero, "");
  if (e->narrow) p = mlcc_emit_convert(ctx, p, MLCC_DTYPE_F32, e->sdt);
  r->st = mlcc_emit_store_output(ctx, r->node, 3, wadd(ctx, r->qkbase, jt),
                                 mlcc_emit_convert(ctx, p, e->sdt, e->dt));
}

// Pass 2: the weighted sum of value element |lv| over the keys.
typedef struct att_acc_t {
  const att_row_t* row;
  LLVMValueRef acc, lv;
} att_acc_t;

static void att_pass_values(mlcc_emit_ctx_t* ctx, const att_emit_t* e, bool past,
                             LLVMValueRef j, LLVMValueRef jt,
                            LLVMValueRef s, LLVMValueRef* stage, void* user) {
  (void)jt, (void)stage;
  att_acc_t* x = (att_acc_t*)user;
  LLVMValueRef p = att_weight(ctx, e, s, load_var(ctx, e->st, x->row->mvar));
  if (e->narrow) {
    // The normalized probability rounded to softmax_precision (Y = P V).
    p = LLVMBuildFDiv(ctx->b, p, load_var(ctx, e->st, x->row->lvar), "");
    p = mlcc_emit_convert(ctx, p, MLCC_DTYPE_F32, e->sdt);
  }
  p = mlcc_emit_convert(ctx, p, e->sdt, e->dt);
  LLVMValueRef vv = mlcc_emit_load(ctx, past ? e->pv : e->v,
                                   wadd(ctx, att_kbase(ctx, e, past, true, j), x->lv));
  LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, p, vv, load_var(ctx, e->t, x->acc)), x->acc);
}

// Scaled dot-product attention per (b, query head, query row): a first pass
// over the keys (past, then current) keeps the running max and the sum of
// exponentials (online softmax, no scratch) in the softmax_precision type
// (float16 and bfloat16 compute as float, the scores rounded to that type);
// a second pass per output element accumulates exp(score - max) * value,
// divided by the sum (float16/bfloat16: each normalized probability rounded
// to that type, as the spec's Cast of the softmax output). A row whose keys are all
// masked is 0. Scores are recomputed in the second pass (a scalar reference
// kernel; float32 Attention on hosted targets is expanded onto the MatMul and
// Softmax kernels by passes/expand_attention.c). qk_matmul_output modes 0-2
// are written in the first pass, mode 3 in a pass of its own.
static mlcc_status_t emit_misc_attention(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  mlcc_attention_t a;
  MLCC_RETURN_IF_ERROR(mlcc_attention_resolve(node, &a, NULL));
  att_emit_t e = {.a = &a};
  e.q = mlcc_node_input(node, 0), e.k = mlcc_node_input(node, 1), e.v = mlcc_node_input(node, 2);
  e.mask = node->n_inputs > 3 ? mlcc_node_input(node, 3) : NULL;
  e.pk = node->n_inputs > 4 ? mlcc_node_input(node, 4) : NULL;
  e.pv = node->n_inputs > 5 ? mlcc_node_input(node, 5) : NULL;
  e.nonpad = node->n_inputs > 6 ? mlcc_node_input(node, 6) : NULL;
  e.dt = e.q->dtype;
  e.t = mlcc_emit_type(ctx, e.dt);
  e.sdt = a.softmax_dt;
  e.narrow = e.sdt == MLCC_DTYPE_F16 || e.sdt == MLCC_DTYPE_BF16;
  e.st = mlcc_emit_type(ctx, e.sdt);
  LLVMBuilderRef b = ctx->b;
  mlcc_status_t st = mlcc_ok_status();
  const int64_t group = a.q_heads / a.kv_heads;
  if (a.batch * a.q_heads * a.q_seq > 0) {
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, a.batch, "ab");
    e.n_valid = e.nonpad != NULL ? load_i64(ctx, e.nonpad, lb.iv) : NULL;
    mlcc_loop_t lh = mlcc_emit_for(ctx, 0, a.q_heads, "ah");
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, a.q_seq, "ai");
    e.b = lb.iv, e.h = lh.iv, e.i = li.iv;
    e.hk = wdivc(ctx, lh.iv, group);
    e.qbase = wadd(ctx, wadd(ctx, wmulc(ctx, lb.iv, a.q_b), wmulc(ctx, lh.iv, a.q_h)),
                   wmulc(ctx, li.iv, a.q_s));
    att_row_t row = {.node = node, .st = mlcc_ok_status()};
    row.qkbase = wmulc(ctx, wmad(ctx, wmad(ctx, lb.iv, a.q_heads, lh.iv), a.q_seq, li.iv), a.total);
    LLVMValueRef ninf = mlcc_emit_const(ctx, e.sdt, -INFINITY);
    row.mvar = mlcc_emit_var(ctx, e.st, ninf);
    row.lvar = mlcc_emit_var(ctx, e.st, mlcc_emit_const(ctx, e.sdt, 0));
    LLVMBuildStore(b, ninf, row.mvar);
    LLVMBuildStore(b, mlcc_emit_const(ctx, e.sdt, 0), row.lvar);
    att_keys(ctx, &e, a.qk_mode >= 0 && a.qk_mode <= 2, att_pass_max_sum, &row);
    if (a.qk_mode == 3) att_keys(ctx, &e, false, att_pass_probs, &row);
    st = row.st;
    LLVMValueRef l = load_var(ctx, e.st, row.lvar);
    LLVMValueRef ybase = wadd(ctx, wadd(ctx, wmulc(ctx, lb.iv, a.y_b), wmulc(ctx, lh.iv, a.y_h)),
                              wmulc(ctx, li.iv, a.y_s));
    if (mlcc_status_is_ok(st) && a.v_head > 0) {
      mlcc_loop_t lv = mlcc_emit_for(ctx, 0, a.v_head, "av");
      att_acc_t x = {.row = &row, .lv = lv.iv};
      x.acc = mlcc_emit_var(ctx, e.t, mlcc_emit_const(ctx, e.dt, 0));
      LLVMBuildStore(b, mlcc_emit_const(ctx, e.dt, 0), x.acc);
      att_keys(ctx, &e, false, att_pass_values, &x);
      LLVMValueRef any = LLVMBuildFCmp(b, LLVMRealOGT, l, mlcc_emit_const(ctx, e.sdt, 0), "");
      LLVMValueRef sum = load_var(ctx, e.t, x.acc);
      if (!e.narrow) sum = LLVMBuildFDiv(b, sum, mlcc_emit_convert(ctx, l, e.sdt, e.dt), "");
      LLVMValueRef y = LLVMBuildSelect(b, any, sum, mlcc_emit_const(ctx, e.dt, 0), "");
      st = mlcc_emit_store_output(ctx, node, 0, wadd(ctx, ybase, lv.iv), y);
      mlcc_emit_loop_end(ctx, &lv);
    }
    mlcc_emit_loop_end(ctx, &li);
    mlcc_emit_loop_end(ctx, &lh);
    mlcc_emit_loop_end(ctx, &lb);
  }
  // present_key / present_value: the past cache followed by the new keys.
  for (uint32_t o = 1; o < 3 && mlcc_status_is_ok(st); ++o) {
    if (node->n_outputs <= o || node->outputs[o] == NULL) continue;
    bool value = o == 2;
    int64_t d = value ? a.v_head : a.head;
    if (a.batch * a.kv_heads * a.total * d == 0) continue;
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, a.batch, "pb");
    mlcc_loop_t lh = mlcc_emit_for(ctx, 0, a.kv_heads, "ph");
    e.b = lb.iv, e.hk = lh.iv;
    for (int seg = 0; seg < 2 && mlcc_status_is_ok(st); ++seg) {
      int64_t n = seg == 0 ? a.past : a.kv_seq;
      if (n == 0) continue;
      mlcc_loop_t lj = mlcc_emit_for(ctx, 0, n, "pj");
      mlcc_loop_t ld = mlcc_emit_for(ctx, 0, d, "pd");
      LLVMValueRef jt = seg == 0 ? lj.iv : wadd(ctx, lj.iv, c64(ctx, a.past));
      const mlcc_value_t* src = seg == 0 ? (value ? e.pv : e.pk) : (value ? e.v : e.k);
      LLVMValueRef from = wadd(ctx, att_kbase(ctx, &e, seg == 0, value, lj.iv), ld.iv);
      LLVMValueRef to = wmad(ctx, wmad(ctx, wmad(ctx, lb.iv, a.kv_heads, lh.iv), a.total, jt), d,
                             ld.iv);
      st = mlcc_emit_store_output(ctx, node, o, to, mlcc_emit_load(ctx, src, from));
      mlcc_emit_loop_end(ctx, &ld);
      mlcc_emit_loop_end(ctx, &lj);
    }
    mlcc_emit_loop_end(ctx, &lh);
    mlcc_emit_loop_end(ctx, &lb);
  }
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_misc_einsum = {.emit = emit_misc_einsum};
const mlcc_emitter_t mlcc_emit_misc_rotary = {.emit = emit_misc_rotary};
const mlcc_emitter_t mlcc_emit_misc_attention = {.emit = emit_misc_attention};

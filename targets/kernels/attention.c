// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of Einsum, RotaryEmbedding 23 and Attention 23 (ops.def
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
  const mlcc_value_t *q, *k, *v, *mask, *pk, *pv;
  mlcc_dtype_t dt;
  LLVMTypeRef t;
  LLVMValueRef b, h, hk, i;  // loop ivs: batch, query head, its kv head, query row
  LLVMValueRef qbase;        // Q index of (b, h, i, 0)
} att_emit_t;

// Score of query row |e->i| against key |jt| (0..total): the scaled dot
// product (key vector at |kv|[kbase..]), softcapped, masked (-inf where a
// bool mask is false or causality forbids) or with the float mask added.
static LLVMValueRef att_score(mlcc_emit_ctx_t* ctx, const att_emit_t* e, const mlcc_value_t* kv,
                              LLVMValueRef kbase, LLVMValueRef jt) {
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
  if (a->softcap > 0) {
    LLVMValueRef u = LLVMBuildFDiv(b, s, mlcc_emit_const(ctx, e->dt, a->softcap), "");
    s = LLVMBuildFMul(b, mlcc_emit_const(ctx, e->dt, a->softcap), mlcc_emit_fast_tanh(ctx, u), "");
  }
  LLVMValueRef ninf = mlcc_emit_const(ctx, e->dt, -INFINITY);
  if (a->mask_kind != 0) {
    LLVMValueRef mi = wadd(ctx, wadd(ctx, wmulc(ctx, e->b, a->m_stride[0]),
                                     wmulc(ctx, e->h, a->m_stride[1])),
                           wadd(ctx, wmulc(ctx, e->i, a->m_stride[2]), wmulc(ctx, jt, a->m_stride[3])));
    LLVMValueRef mv = mlcc_emit_load(ctx, e->mask, mi);
    s = a->mask_kind == 1 ? LLVMBuildSelect(b, mv, s, ninf, "") : LLVMBuildFAdd(b, s, mv, "");
  }
  if (a->causal) {
    LLVMValueRef lim = wadd(ctx, e->i, c64(ctx, a->past));
    s = LLVMBuildSelect(b, icmp(ctx, LLVMIntSGT, jt, lim), ninf, s, "");
  }
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

// Scaled dot-product attention per (b, query head, query row): a first pass
// over the keys (past, then current) keeps the running max and the sum of
// exponentials (online softmax, no scratch); a second pass per output
// element accumulates exp(score - max) * value, divided by the sum. A row
// whose keys are all masked is 0. Scores are recomputed in the second pass
// (a scalar reference kernel, not yet the fused one of issue 15 part 3).
static mlcc_status_t emit_misc_attention(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  mlcc_attention_t a;
  MLCC_RETURN_IF_ERROR(mlcc_attention_resolve(node, &a, NULL));
  att_emit_t e = {.a = &a};
  e.q = mlcc_node_input(node, 0), e.k = mlcc_node_input(node, 1), e.v = mlcc_node_input(node, 2);
  e.mask = node->n_inputs > 3 ? mlcc_node_input(node, 3) : NULL;
  e.pk = node->n_inputs > 4 ? mlcc_node_input(node, 4) : NULL;
  e.pv = node->n_inputs > 5 ? mlcc_node_input(node, 5) : NULL;
  e.dt = e.q->dtype;
  e.t = mlcc_emit_type(ctx, e.dt);
  LLVMBuilderRef b = ctx->b;
  mlcc_status_t st = mlcc_ok_status();
  const int64_t group = a.q_heads / a.kv_heads;
  if (mlcc_node_output(node, 0) != NULL && a.batch * a.q_heads * a.q_seq * a.v_head > 0) {
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, a.batch, "ab");
    mlcc_loop_t lh = mlcc_emit_for(ctx, 0, a.q_heads, "ah");
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, a.q_seq, "ai");
    e.b = lb.iv, e.h = lh.iv, e.i = li.iv;
    e.hk = wdivc(ctx, lh.iv, group);
    e.qbase = wadd(ctx, wadd(ctx, wmulc(ctx, lb.iv, a.q_b), wmulc(ctx, lh.iv, a.q_h)),
                   wmulc(ctx, li.iv, a.q_s));
    LLVMValueRef ninf = mlcc_emit_const(ctx, e.dt, -INFINITY);
    LLVMValueRef mvar = mlcc_emit_var(ctx, e.t, ninf);
    LLVMValueRef lvar = mlcc_emit_var(ctx, e.t, mlcc_emit_const(ctx, e.dt, 0));
    LLVMBuildStore(b, ninf, mvar);
    LLVMBuildStore(b, mlcc_emit_const(ctx, e.dt, 0), lvar);
    for (int seg = 0; seg < 2; ++seg) {  // pass 1: max and sum
      int64_t n = seg == 0 ? a.past : a.kv_seq;
      if (n == 0) continue;
      mlcc_loop_t lj = mlcc_emit_for(ctx, 0, n, "aj");
      LLVMValueRef jt = seg == 0 ? lj.iv : wadd(ctx, lj.iv, c64(ctx, a.past));
      LLVMValueRef s = att_score(ctx, &e, seg == 0 ? e.pk : e.k,
                                 att_kbase(ctx, &e, seg == 0, false, lj.iv), jt);
      LLVMValueRef m = load_var(ctx, e.t, mvar), l = load_var(ctx, e.t, lvar);
      LLVMValueRef valid = LLVMBuildFCmp(b, LLVMRealOGT, s, ninf, "");
      LLVMValueRef nm = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, s, m, ""), s, m, "");
      LLVMValueRef nl = LLVMBuildFAdd(
          b, LLVMBuildFMul(b, l, mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, m, nm, "")), ""),
          mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, s, nm, "")), "");
      LLVMBuildStore(b, LLVMBuildSelect(b, valid, nm, m, ""), mvar);
      LLVMBuildStore(b, LLVMBuildSelect(b, valid, nl, l, ""), lvar);
      mlcc_emit_loop_end(ctx, &lj);
    }
    LLVMValueRef m = load_var(ctx, e.t, mvar), l = load_var(ctx, e.t, lvar);
    LLVMValueRef ybase = wadd(ctx, wadd(ctx, wmulc(ctx, lb.iv, a.y_b), wmulc(ctx, lh.iv, a.y_h)),
                              wmulc(ctx, li.iv, a.y_s));
    mlcc_loop_t lv = mlcc_emit_for(ctx, 0, a.v_head, "av");
    LLVMValueRef acc = mlcc_emit_var(ctx, e.t, mlcc_emit_const(ctx, e.dt, 0));
    LLVMBuildStore(b, mlcc_emit_const(ctx, e.dt, 0), acc);
    for (int seg = 0; seg < 2; ++seg) {  // pass 2: weighted sum of values
      int64_t n = seg == 0 ? a.past : a.kv_seq;
      if (n == 0) continue;
      mlcc_loop_t lj = mlcc_emit_for(ctx, 0, n, "aj");
      LLVMValueRef jt = seg == 0 ? lj.iv : wadd(ctx, lj.iv, c64(ctx, a.past));
      LLVMValueRef s = att_score(ctx, &e, seg == 0 ? e.pk : e.k,
                                 att_kbase(ctx, &e, seg == 0, false, lj.iv), jt);
      LLVMValueRef valid = LLVMBuildFCmp(b, LLVMRealOGT, s, ninf, "");
      LLVMValueRef p = LLVMBuildSelect(
          b, valid, mlcc_emit_fast_exp(ctx, LLVMBuildFSub(b, s, m, "")), mlcc_emit_const(ctx, e.dt, 0), "");
      LLVMValueRef vv = mlcc_emit_load(ctx, seg == 0 ? e.pv : e.v,
                                       wadd(ctx, att_kbase(ctx, &e, seg == 0, true, lj.iv), lv.iv));
      LLVMBuildStore(b, mlcc_emit_fmuladd(ctx, p, vv, load_var(ctx, e.t, acc)), acc);
      mlcc_emit_loop_end(ctx, &lj);
    }
    LLVMValueRef any = LLVMBuildFCmp(b, LLVMRealOGT, l, mlcc_emit_const(ctx, e.dt, 0), "");
    LLVMValueRef y = LLVMBuildSelect(b, any, LLVMBuildFDiv(b, load_var(ctx, e.t, acc), l, ""),
                                     mlcc_emit_const(ctx, e.dt, 0), "");
    st = mlcc_emit_store_output(ctx, node, 0, wadd(ctx, ybase, lv.iv), y);
    mlcc_emit_loop_end(ctx, &lv);
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

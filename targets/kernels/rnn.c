// SPDX-License-Identifier: Apache-2.0
// Kernel emitter for the recurrent ops RNN, GRU and LSTM (ONNX opsets 7-14 of
// the ops, 'layout' from 14). One kernel runs the whole node:
//
//   for each direction d (unrolled):
//     for each batch row b:                    (rows are independent)
//       h = initial_h[d,b] or 0; c = initial_c[d,b] or 0   (scratch rows)
//       len = clamp(sequence_lens[b], 0, S) or S           (read at run time)
//       for s in [0, S):
//         if s < len:  t = reverse ? len-1-s : s; one cell step on X[t,b]
//                      writes Y[t,d,b,:] and the new h (and c)
//         else:        Y[s,d,b,:] = 0
//       Y_h[d,b] = len > 0 ? h : 0;  Y_c likewise
//
// so each output element is stored exactly once. Reverse directions run
// over the first |len| steps backwards (the valid part of the sequence); a
// zero-length sequence gives zero Y_h/Y_c (onnxruntime's behaviour).
// The gate pre-activations are dot products of X[t,b,:] and h with rows of
// W and R (both contiguous along k): float32 uses vector accumulators (one
// per gate, sharing the X/h loads) reduced once per row; other dtypes (F16
// computed as float, F64) use scalar loops. Scratch (h, c, the new h and
// GRU's r (.) h) is four stack rows of hidden_size elements.
//
// Gate equations (ONNX spec; f, g, h are the direction's activations,
// clip() applies to every activation input when 'clip' is set):
//   RNN:  H = f(x.Wi + h.Ri + Wbi + Rbi)
//   GRU:  z = f(x.Wz + h.Rz + Wbz + Rbz), r = f(x.Wr + h.Rr + Wbr + Rbr)
//         hh = g(x.Wh + (r*h).Rh + Rbh + Wbh)       linear_before_reset = 0
//         hh = g(x.Wh + r*(h.Rh + Rbh) + Wbh)       linear_before_reset != 0
//         H = (1-z)*hh + z*h
//   LSTM: i = f(x.Wi + h.Ri + Pi*c + Wbi + Rbi), f likewise with Pf
//         (or f = 1-i with input_forget), cc = g(x.Wc + h.Rc + Wbc + Rbc),
//         C = f*c + i*cc, o = f(x.Wo + h.Ro + Po*C + Wbo + Rbo), H = o*h(C)
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/rnn.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

// Largest hidden_size whose scratch rows we put on the stack (at most 4 rows
// of 8-byte elements: 512 KiB).
#define RNN_MAX_HIDDEN 16384

typedef struct rnn_emit_t {
  mlcc_emit_ctx_t* ctx;
  const mlcc_node_t* node;
  mlcc_rnn_t r;
  mlcc_dtype_t dt;           // storage dtype of X, W, R, ... and the outputs
  mlcc_dtype_t cdt;          // dtype of the computational type (F32 or F64)
  LLVMTypeRef t;             // computational float type
  const mlcc_value_t *x, *w, *rw, *bias, *seq_lens, *init_h, *init_c, *p;
  const mlcc_value_t *y, *y_h, *y_c;
  LLVMValueRef h, c, hnew, rh;  // scratch rows (allocas of t[H])
  mlcc_status_t status;         // first error of a store
} rnn_emit_t;

// A vector operand of a dot product: element k is |ptr|[base + k] in the
// storage layout of |dt|.
typedef struct rnn_vec_t {
  LLVMValueRef ptr;
  LLVMValueRef base;
  mlcc_dtype_t dt;
} rnn_vec_t;

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

static LLVMValueRef fconst(rnn_emit_t* e, double v) { return mlcc_emit_const(e->ctx, e->cdt, v); }
static LLVMValueRef fadd(rnn_emit_t* e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFAdd(e->ctx->b, a, b, "");
}
static LLVMValueRef fsub(rnn_emit_t* e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFSub(e->ctx->b, a, b, "");
}
static LLVMValueRef fmul(rnn_emit_t* e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFMul(e->ctx->b, a, b, "");
}
static LLVMValueRef rnn_fcmp(rnn_emit_t* e, mlcc_cmp_t cmp, LLVMValueRef a, LLVMValueRef b) {
  return mlcc_emit_cmp(e->ctx, e->cdt, cmp, a, b);
}

// Element |idx| of |v| (an argument of the kernel) in computational type;
// zero for an absent optional input.
static LLVMValueRef load_or_zero(rnn_emit_t* e, const mlcc_value_t* v, LLVMValueRef idx) {
  if (v == NULL) return fconst(e, 0.0);
  return mlcc_emit_convert(e->ctx, mlcc_emit_load(e->ctx, v, idx),
                           v->dtype == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32, e->cdt);
}

// Pointer to element |idx| of the scratch row |row|.
static LLVMValueRef row_ptr(rnn_emit_t* e, LLVMValueRef row, LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(e->ctx->b, e->t, row, &idx, 1, "");
}
static LLVMValueRef row_load(rnn_emit_t* e, LLVMValueRef row, LLVMValueRef idx) {
  return LLVMBuildLoad2(e->ctx->b, e->t, row_ptr(e, row, idx), "");
}
static void row_store(rnn_emit_t* e, LLVMValueRef row, LLVMValueRef idx, LLVMValueRef v) {
  LLVMBuildStore(e->ctx->b, v, row_ptr(e, row, idx));
}

static void keep_status(rnn_emit_t* e, mlcc_status_t st) {
  if (mlcc_status_is_ok(st)) return;
  if (mlcc_status_is_ok(e->status)) {
    e->status = st;
  } else {
    mlcc_status_free(st);
  }
}

// clip(x) = min(max(x, -clip), clip) when the node has 'clip', with NaN
// kept as NaN (numpy's clip, onnxruntime's compare-and-replace): ordered
// compares are false for NaN, so a NaN pre-activation passes through
// (llvm.maxnum/minnum would turn it into -clip).
static LLVMValueRef clipv(rnn_emit_t* e, LLVMValueRef x) {
  if (!e->r.has_clip) return x;
  LLVMValueRef lo = fconst(e, -(double)e->r.clip), hi = fconst(e, (double)e->r.clip);
  x = mlcc_emit_select(e->ctx, rnn_fcmp(e, MLCC_CMP_LT, x, lo), lo, x);
  return mlcc_emit_select(e->ctx, rnn_fcmp(e, MLCC_CMP_GT, x, hi), hi, x);
}

static LLVMValueRef libm(rnn_emit_t* e, const char* base, LLVMValueRef x) {
  char name[32];
  snprintf(name, sizeof(name), "%s%s", base, e->cdt == MLCC_DTYPE_F64 ? "" : "f");
  return mlcc_emit_libm(e->ctx, name, x);
}

// The activation |a| of |x| (already clipped).
static LLVMValueRef activate(rnn_emit_t* e, const mlcc_rnn_activation_t* a, LLVMValueRef x) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMValueRef zero = fconst(e, 0.0), one = fconst(e, 1.0);
  LLVMValueRef alpha = fconst(e, (double)a->alpha), beta = fconst(e, (double)a->beta);
  switch (a->kind) {
    case MLCC_RNN_ACT_RELU:
      return mlcc_emit_select(ctx, rnn_fcmp(e, MLCC_CMP_GT, x, zero), x, zero);
    case MLCC_RNN_ACT_TANH: return mlcc_emit_fast_tanh(ctx, x);
    case MLCC_RNN_ACT_SIGMOID: return mlcc_emit_fast_sigmoid(ctx, x);
    case MLCC_RNN_ACT_AFFINE: return mlcc_emit_fmuladd(ctx, alpha, x, beta);
    case MLCC_RNN_ACT_LEAKY_RELU:
      return mlcc_emit_select(ctx, rnn_fcmp(e, MLCC_CMP_GE, x, zero), x, fmul(e, alpha, x));
    case MLCC_RNN_ACT_THRESHOLDED_RELU:
      return mlcc_emit_select(ctx, rnn_fcmp(e, MLCC_CMP_GE, x, alpha), x, zero);
    case MLCC_RNN_ACT_SCALED_TANH: return fmul(e, alpha, mlcc_emit_fast_tanh(ctx, fmul(e, beta, x)));
    case MLCC_RNN_ACT_HARD_SIGMOID: {
      LLVMValueRef v = mlcc_emit_fmuladd(ctx, alpha, x, beta);
      v = mlcc_emit_max(ctx, e->cdt, v, zero);
      return mlcc_emit_min(ctx, e->cdt, v, one);
    }
    case MLCC_RNN_ACT_ELU: {
      LLVMValueRef em1 = fsub(e, mlcc_emit_fast_exp(ctx, x), one);
      return mlcc_emit_select(ctx, rnn_fcmp(e, MLCC_CMP_GE, x, zero), x, fmul(e, alpha, em1));
    }
    case MLCC_RNN_ACT_SOFTSIGN: {
      LLVMValueRef ax = mlcc_emit_intrinsic(ctx, "llvm.fabs", &x, 1);
      return LLVMBuildFDiv(ctx->b, x, fadd(e, one, ax), "");
    }
    case MLCC_RNN_ACT_SOFTPLUS: {
      // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x.
      LLVMValueRef ax = mlcc_emit_intrinsic(ctx, "llvm.fabs", &x, 1);
      LLVMValueRef l = libm(e, "log1p", mlcc_emit_fast_exp(ctx, LLVMBuildFNeg(ctx->b, ax, "")));
      return fadd(e, mlcc_emit_max(ctx, e->cdt, x, zero), l);
    }
    case MLCC_RNN_ACT_COUNT: break;
  }
  return x;
}

// act(clip(x)) for activation |k| (0 = f, 1 = g, 2 = h) of direction |d|.
static LLVMValueRef act(rnn_emit_t* e, int d, int k, LLVMValueRef x) {
  return activate(e, &e->r.act[d][k], clipv(e, x));
}

//===----------------------------------------------------------------------===//
// Dot products
//===----------------------------------------------------------------------===//

// Lanes of the float32 vector dot product for |n_k| terms, or 0 for the
// scalar loop (other dtypes, short rows, targets without SIMD).
static int dot_lanes(const rnn_emit_t* e, int64_t n_k) {
  const mlcc_target_t* tg = e->ctx->target;
  if (e->dt != MLCC_DTYPE_F32 || tg == NULL) return 0;
  int lanes = tg->vector_bytes / 4;
  if (lanes > 16) lanes = 16;
  while (lanes > 4 && lanes > n_k) lanes /= 2;
  return lanes >= 4 && lanes <= n_k ? lanes : 0;
}

// Horizontal sum of the float vector |v| of |lanes| lanes (pairwise tree).
static LLVMValueRef reduce_sum(rnn_emit_t* e, LLVMValueRef v, int lanes) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  for (int w = lanes / 2; w >= 1; w /= 2) {
    LLVMValueRef lo[16], hi[16];
    for (int q = 0; q < w; ++q) {
      lo[q] = LLVMConstInt(ctx->t_i32, (unsigned long long)q, 0);
      hi[q] = LLVMConstInt(ctx->t_i32, (unsigned long long)(q + w), 0);
    }
    LLVMValueRef undef = LLVMGetUndef(LLVMTypeOf(v));
    LLVMValueRef a = LLVMBuildShuffleVector(ctx->b, v, undef, LLVMConstVector(lo, (unsigned)w), "");
    LLVMValueRef b = LLVMBuildShuffleVector(ctx->b, v, undef, LLVMConstVector(hi, (unsigned)w), "");
    v = LLVMBuildFAdd(ctx->b, a, b, "");
  }
  return LLVMBuildExtractElement(ctx->b, v, LLVMConstInt(ctx->t_i32, 0, 0), "");
}

static LLVMValueRef vec_elem_ptr(rnn_emit_t* e, const rnn_vec_t* v, LLVMValueRef k) {
  LLVMValueRef idx = iadd(e->ctx, v->base, k);
  return LLVMBuildInBoundsGEP2(e->ctx->b, mlcc_emit_storage_type(e->ctx, v->dt), v->ptr, &idx, 1,
                               "");
}

// Scalar term k of |v| in computational type.
static LLVMValueRef vec_elem(rnn_emit_t* e, const rnn_vec_t* v, LLVMValueRef k) {
  LLVMValueRef x = mlcc_emit_load_elem(e->ctx, v->dt, vec_elem_ptr(e, v, k));
  mlcc_dtype_t cd = v->dt == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32;
  return mlcc_emit_convert(e->ctx, x, cd, e->cdt);
}

// out[g] = sum_k a[k] * rows[g][k] for g < n, k < n_k. The rows are |n_k|
// contiguous elements of matrix |m| from linear index rows_base[g].
static void emit_dots(rnn_emit_t* e, const rnn_vec_t* a, const mlcc_value_t* m,
                      const LLVMValueRef* rows_base, int n, int64_t n_k, LLVMValueRef* out) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  rnn_vec_t rows[4];
  LLVMValueRef mp = mlcc_emit_ptr(ctx, m);
  for (int g = 0; g < n; ++g) rows[g] = (rnn_vec_t){mp, rows_base[g], m->dtype};
  LLVMValueRef acc[4];
  for (int g = 0; g < n; ++g) acc[g] = mlcc_emit_var(ctx, e->t, fconst(e, 0.0));
  int lanes = dot_lanes(e, n_k);
  int64_t k_vec = 0;
  if (lanes > 0) {
    LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, (unsigned)lanes);
    LLVMValueRef vacc[4];
    for (int g = 0; g < n; ++g) vacc[g] = mlcc_emit_var(ctx, vt, LLVMConstNull(vt));
    int64_t n_vec = n_k / lanes;
    mlcc_loop_t lk = mlcc_emit_for(ctx, 0, n_vec, "rnn.kv");
    LLVMValueRef k0 = imulc(ctx, lk.iv, lanes);
    LLVMValueRef av = LLVMBuildLoad2(ctx->b, vt, vec_elem_ptr(e, a, k0), "");
    LLVMSetAlignment(av, 4);
    for (int g = 0; g < n; ++g) {
      LLVMValueRef bv = LLVMBuildLoad2(ctx->b, vt, vec_elem_ptr(e, &rows[g], k0), "");
      LLVMSetAlignment(bv, 4);
      LLVMValueRef cur = LLVMBuildLoad2(ctx->b, vt, vacc[g], "");
      LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, av, bv, cur), vacc[g]);
    }
    mlcc_emit_loop_end(ctx, &lk);
    for (int g = 0; g < n; ++g) {
      LLVMBuildStore(ctx->b, reduce_sum(e, LLVMBuildLoad2(ctx->b, vt, vacc[g], ""), lanes),
                     acc[g]);
    }
    k_vec = n_vec * lanes;
  }
  if (k_vec < n_k) {
    mlcc_loop_t lk = mlcc_emit_for(ctx, k_vec, n_k, "rnn.k");
    LLVMValueRef av = vec_elem(e, a, lk.iv);
    for (int g = 0; g < n; ++g) {
      LLVMValueRef cur = LLVMBuildLoad2(ctx->b, e->t, acc[g], "");
      LLVMValueRef bv = vec_elem(e, &rows[g], lk.iv);
      LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, av, bv, cur), acc[g]);
    }
    mlcc_emit_loop_end(ctx, &lk);
  }
  for (int g = 0; g < n; ++g) out[g] = LLVMBuildLoad2(ctx->b, e->t, acc[g], "");
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

// Linear index of X[t, b, 0] (layout 0: [S,B,I]; 1: [B,S,I]).
static LLVMValueRef x_base(rnn_emit_t* e, LLVMValueRef t, LLVMValueRef b) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMValueRef row = e->r.layout == 0 ? imad(ctx, t, e->r.batch_size, b)
                                      : imad(ctx, b, e->r.seq_length, t);
  return imulc(ctx, row, e->r.input_size);
}

// Linear index of Y[t, d, b, j] (layout 0: [S,D,B,H]; 1: [B,S,D,H]).
static LLVMValueRef y_index(rnn_emit_t* e, LLVMValueRef t, int d, LLVMValueRef b,
                            LLVMValueRef j) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  int64_t nd = e->r.n_dirs;
  LLVMValueRef row;
  if (e->r.layout == 0) {
    row = imad(ctx, iaddc(ctx, imulc(ctx, t, nd), d), e->r.batch_size, b);
  } else {
    row = iaddc(ctx, imulc(ctx, imad(ctx, b, e->r.seq_length, t), nd), d);
  }
  return imad(ctx, row, e->r.hidden_size, j);
}

// Linear index of a state tensor (initial_h/c, Y_h/c) at [d, b, j] (layout
// 0: [D,B,H]; 1: [B,D,H]).
static LLVMValueRef state_index(rnn_emit_t* e, int d, LLVMValueRef b, LLVMValueRef j) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMValueRef row = e->r.layout == 0 ? iaddc(ctx, b, (int64_t)d * e->r.batch_size)
                                      : iaddc(ctx, imulc(ctx, b, e->r.n_dirs), d);
  return imad(ctx, row, e->r.hidden_size, j);
}

// Linear index of element j of gate |g|'s rows block (W/R row g*H + j of
// direction d), times the row length |n_k|.
static LLVMValueRef w_row(rnn_emit_t* e, int d, int g, LLVMValueRef j, int64_t n_k) {
  int64_t h = e->r.hidden_size;
  int64_t first = ((int64_t)d * e->r.n_gates + g) * h;
  return imulc(e->ctx, iaddc(e->ctx, j, first), n_k);
}

// Bias B[d, which*G*H + g*H + j] (which 0: Wb, 1: Rb); 0 without B.
static LLVMValueRef bias(rnn_emit_t* e, int d, int which, int g, LLVMValueRef j) {
  if (e->bias == NULL) return fconst(e, 0.0);
  int64_t gh = (int64_t)e->r.n_gates * e->r.hidden_size;
  int64_t off = (int64_t)d * 2 * gh + which * gh + (int64_t)g * e->r.hidden_size;
  return load_or_zero(e, e->bias, iaddc(e->ctx, j, off));
}

//===----------------------------------------------------------------------===//
// Cell steps
//===----------------------------------------------------------------------===//

// The gate pre-activations x.W[g] + h.R[g] + Wb[g] + Rb[g] for the |n| gates
// in |gates| at hidden unit |j|; |hsrc| is the recurrent operand.
static void gate_sums(rnn_emit_t* e, int d, const int* gates, int n, const rnn_vec_t* xv,
                      const rnn_vec_t* hv, LLVMValueRef j, bool add_rb, LLVMValueRef* out) {
  LLVMValueRef wrows[4], rrows[4], xd[4], hd[4];
  for (int i = 0; i < n; ++i) {
    wrows[i] = w_row(e, d, gates[i], j, e->r.input_size);
    rrows[i] = w_row(e, d, gates[i], j, e->r.hidden_size);
  }
  emit_dots(e, xv, e->w, wrows, n, e->r.input_size, xd);
  if (hv != NULL) emit_dots(e, hv, e->rw, rrows, n, e->r.hidden_size, hd);
  for (int i = 0; i < n; ++i) {
    LLVMValueRef s = fadd(e, xd[i], bias(e, d, 0, gates[i], j));
    if (add_rb) s = fadd(e, s, bias(e, d, 1, gates[i], j));
    out[i] = hv != NULL ? fadd(e, s, hd[i]) : s;
  }
}

// Stores |v| as Y[t, d, b, j] when Y is present.
static void store_y(rnn_emit_t* e, LLVMValueRef t, int d, LLVMValueRef b, LLVMValueRef j,
                    LLVMValueRef v) {
  if (e->y == NULL) return;
  LLVMValueRef out = mlcc_emit_convert(e->ctx, v, e->cdt, e->dt == MLCC_DTYPE_F64
                                                               ? MLCC_DTYPE_F64
                                                               : MLCC_DTYPE_F32);
  keep_status(e, mlcc_emit_store_output(e->ctx, e->node, 0, y_index(e, t, d, b, j), out));
}

// One time step of batch row |b| at time |t| of direction |d|: reads h (and
// c), writes Y[t] and hnew, updates c in place, then copies hnew into h.
static void emit_step(rnn_emit_t* e, int d, LLVMValueRef t, LLVMValueRef b) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  int64_t hs = e->r.hidden_size;
  LLVMValueRef zero = c64(ctx, 0);
  rnn_vec_t xv = {mlcc_emit_ptr(ctx, e->x), x_base(e, t, b), e->x->dtype};
  rnn_vec_t hv = {e->h, zero, e->cdt};
  LLVMValueRef one = fconst(e, 1.0);

  if (e->node->op == MLCC_OP_GRU && !e->r.linear_before_reset) {
    // rh = r (.) h for the whole row first: every hidden unit's candidate
    // reads all of it.
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, hs, "rnn.rj");
    static const int kR[1] = {1};
    LLVMValueRef a;
    gate_sums(e, d, kR, 1, &xv, &hv, lj.iv, true, &a);
    LLVMValueRef rg = act(e, d, 0, a);
    row_store(e, e->rh, lj.iv, fmul(e, rg, row_load(e, e->h, lj.iv)));
    mlcc_emit_loop_end(ctx, &lj);
  }

  mlcc_loop_t lj = mlcc_emit_for(ctx, 0, hs, "rnn.j");
  LLVMValueRef j = lj.iv;
  LLVMValueRef hn = NULL;
  if (e->node->op == MLCC_OP_RNN) {
    static const int kI[1] = {0};
    LLVMValueRef a;
    gate_sums(e, d, kI, 1, &xv, &hv, j, true, &a);
    hn = act(e, d, 0, a);
  } else if (e->node->op == MLCC_OP_GRU) {
    LLVMValueRef hp = row_load(e, e->h, j);
    LLVMValueRef z, hh;
    if (e->r.linear_before_reset) {
      // z and r in full; the candidate keeps x.Wh + Wbh and h.Rh + Rbh apart.
      static const int kZR[2] = {0, 1};
      LLVMValueRef zr[2];
      gate_sums(e, d, kZR, 2, &xv, &hv, j, true, zr);
      z = act(e, d, 0, zr[0]);
      LLVMValueRef rg = act(e, d, 0, zr[1]);
      static const int kH[1] = {2};
      LLVMValueRef xh, hh_lin;
      gate_sums(e, d, kH, 1, &xv, NULL, j, false, &xh);
      LLVMValueRef rrow = w_row(e, d, 2, j, hs);
      emit_dots(e, &hv, e->rw, &rrow, 1, hs, &hh_lin);
      hh_lin = fadd(e, hh_lin, bias(e, d, 1, 2, j));
      hh = act(e, d, 1, fadd(e, xh, fmul(e, rg, hh_lin)));
    } else {
      static const int kZ[1] = {0};
      gate_sums(e, d, kZ, 1, &xv, &hv, j, true, &z);
      z = act(e, d, 0, z);
      static const int kH[1] = {2};
      rnn_vec_t rhv = {e->rh, zero, e->cdt};
      gate_sums(e, d, kH, 1, &xv, &rhv, j, true, &hh);
      hh = act(e, d, 1, hh);
    }
    // H = (1 - z) * hh + z * h
    hn = mlcc_emit_fmuladd(ctx, z, hp, fmul(e, fsub(e, one, z), hh));
  } else {
    // LSTM, gates i o f c at rows 0..3 (f skipped with input_forget).
    LLVMValueRef sums[4];
    if (e->r.input_forget) {
      static const int kIOC[3] = {0, 1, 3};
      LLVMValueRef s3[3];
      gate_sums(e, d, kIOC, 3, &xv, &hv, j, true, s3);
      sums[0] = s3[0], sums[1] = s3[1], sums[2] = NULL, sums[3] = s3[2];
    } else {
      static const int kIOFC[4] = {0, 1, 2, 3};
      gate_sums(e, d, kIOFC, 4, &xv, &hv, j, true, sums);
    }
    LLVMValueRef cp = row_load(e, e->c, j);
    int64_t pbase = (int64_t)d * 3 * hs;
    LLVMValueRef ig = sums[0];
    if (e->p != NULL) ig = mlcc_emit_fmuladd(ctx, load_or_zero(e, e->p, iaddc(ctx, j, pbase)), cp, ig);
    ig = act(e, d, 0, ig);
    LLVMValueRef fg;
    if (e->r.input_forget) {
      fg = fsub(e, one, ig);
    } else {
      fg = sums[2];
      if (e->p != NULL) {
        fg = mlcc_emit_fmuladd(ctx, load_or_zero(e, e->p, iaddc(ctx, j, pbase + 2 * hs)), cp, fg);
      }
      fg = act(e, d, 0, fg);
    }
    LLVMValueRef cc = act(e, d, 1, sums[3]);
    LLVMValueRef cn = mlcc_emit_fmuladd(ctx, fg, cp, fmul(e, ig, cc));
    row_store(e, e->c, j, cn);
    LLVMValueRef og = sums[1];
    if (e->p != NULL) og = mlcc_emit_fmuladd(ctx, load_or_zero(e, e->p, iaddc(ctx, j, pbase + hs)), cn, og);
    og = act(e, d, 0, og);
    // h(C) is not clipped (clip bounds the gate inputs; onnxruntime agrees).
    hn = fmul(e, og, activate(e, &e->r.act[d][2], cn));
  }
  row_store(e, e->hnew, j, hn);
  store_y(e, t, d, b, j, hn);
  mlcc_emit_loop_end(ctx, &lj);

  mlcc_loop_t lc = mlcc_emit_for(ctx, 0, hs, "rnn.copy");
  row_store(e, e->h, lc.iv, row_load(e, e->hnew, lc.iv));
  mlcc_emit_loop_end(ctx, &lc);
}

// The whole sequence of batch row |b| (runtime) in direction |d|.
static void emit_row(rnn_emit_t* e, int d, LLVMValueRef b) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  int64_t hs = e->r.hidden_size, sl = e->r.seq_length;
  bool lstm = e->node->op == MLCC_OP_LSTM;

  // Initial state.
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, hs, "rnn.init");
  LLVMValueRef si = state_index(e, d, b, li.iv);
  row_store(e, e->h, li.iv, load_or_zero(e, e->init_h, si));
  if (lstm) row_store(e, e->c, li.iv, load_or_zero(e, e->init_c, si));
  mlcc_emit_loop_end(ctx, &li);

  // Valid length, clamped into [0, S] so bad lengths never index outside X.
  LLVMValueRef len = c64(ctx, sl);
  if (e->seq_lens != NULL) {
    LLVMValueRef v = mlcc_emit_load(ctx, e->seq_lens, b);
    v = mlcc_emit_convert(ctx, v, e->seq_lens->dtype, MLCC_DTYPE_I64);
    v = mlcc_emit_select(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, v, c64(ctx, 0), ""), c64(ctx, 0), v);
    len = mlcc_emit_select(ctx, LLVMBuildICmp(ctx->b, LLVMIntSGT, v, len, ""), len, v);
  }
  bool reverse = e->r.reverse || d == 1;

  mlcc_loop_t ls = mlcc_emit_for(ctx, 0, sl, "rnn.s");
  LLVMValueRef valid = LLVMBuildICmp(ctx->b, LLVMIntSLT, ls.iv, len, "");
  mlcc_if_t br = mlcc_emit_if_begin(ctx, valid);
  LLVMValueRef t = ls.iv;
  if (reverse) t = LLVMBuildNSWSub(ctx->b, iaddc(ctx, len, -1), ls.iv, "");
  emit_step(e, d, t, b);
  if (e->y != NULL) {
    mlcc_emit_if_else(ctx, &br);
    mlcc_loop_t lz = mlcc_emit_for(ctx, 0, hs, "rnn.pad");
    store_y(e, ls.iv, d, b, lz.iv, fconst(e, 0.0));
    mlcc_emit_loop_end(ctx, &lz);
  }
  mlcc_emit_if_end(ctx, &br);
  mlcc_emit_loop_end(ctx, &ls);

  // Final state; zero for an empty sequence.
  if (e->y_h == NULL && e->y_c == NULL) return;
  LLVMValueRef empty = LLVMBuildICmp(ctx->b, LLVMIntEQ, len, c64(ctx, 0), "");
  mlcc_loop_t lf = mlcc_emit_for(ctx, 0, hs, "rnn.final");
  LLVMValueRef so = state_index(e, d, b, lf.iv);
  mlcc_dtype_t sdt = e->dt == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32;
  if (e->y_h != NULL) {
    LLVMValueRef v = mlcc_emit_select(ctx, empty, fconst(e, 0.0), row_load(e, e->h, lf.iv));
    v = mlcc_emit_convert(ctx, v, e->cdt, sdt);
    keep_status(e, mlcc_emit_store_output(ctx, e->node, 1, so, v));
  }
  if (e->y_c != NULL) {
    LLVMValueRef v = mlcc_emit_select(ctx, empty, fconst(e, 0.0), row_load(e, e->c, lf.iv));
    v = mlcc_emit_convert(ctx, v, e->cdt, sdt);
    keep_status(e, mlcc_emit_store_output(ctx, e->node, 2, so, v));
  }
  mlcc_emit_loop_end(ctx, &lf);
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

// RNN, GRU, LSTM (ops.def "Recurrent"). UNIMPLEMENTED for dtypes other than
// F16/F32/F64 and for hidden_size above RNN_MAX_HIDDEN (stack scratch).
static mlcc_status_t emit_rnn(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  rnn_emit_t e;
  memset(&e, 0, sizeof(e));
  e.ctx = ctx;
  e.node = node;
  MLCC_RETURN_IF_ERROR(mlcc_rnn_parse(node, &e.r));
  e.x = mlcc_node_input(node, MLCC_RNN_IN_X);
  e.w = mlcc_node_input(node, MLCC_RNN_IN_W);
  e.rw = mlcc_node_input(node, MLCC_RNN_IN_R);
  e.bias = mlcc_node_input(node, MLCC_RNN_IN_B);
  e.seq_lens = mlcc_node_input(node, MLCC_RNN_IN_SEQ_LENS);
  e.init_h = mlcc_node_input(node, MLCC_RNN_IN_INITIAL_H);
  bool lstm = node->op == MLCC_OP_LSTM;
  if (lstm) {
    e.init_c = mlcc_node_input(node, MLCC_RNN_IN_INITIAL_C);
    e.p = mlcc_node_input(node, MLCC_RNN_IN_P);
  }
  e.y = mlcc_node_output(node, 0);
  e.y_h = mlcc_node_output(node, 1);
  e.y_c = lstm ? mlcc_node_output(node, 2) : NULL;
  e.dt = e.x->dtype;
  if (e.dt != MLCC_DTYPE_F32 && e.dt != MLCC_DTYPE_F64 && e.dt != MLCC_DTYPE_F16) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s (opset %d) does not support dtype %s",
                            mlcc_op_name(node->op), node->opset, mlcc_dtype_name(e.dt));
  }
  if (e.r.hidden_size > RNN_MAX_HIDDEN) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s hidden_size %lld exceeds mlcc's limit of %d (state rows live "
                            "on the stack)",
                            mlcc_op_name(node->op), (long long)e.r.hidden_size, RNN_MAX_HIDDEN);
  }
  const mlcc_value_t* args[] = {e.x, e.w, e.rw, e.bias, e.seq_lens, e.init_h, e.init_c, e.p};
  for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); ++i) {
    if (args[i] != NULL && mlcc_emit_ptr(ctx, args[i]) == NULL) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s input '%s' is not a kernel argument",
                              mlcc_op_name(node->op), args[i]->name);
    }
  }
  e.cdt = e.dt == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32;
  e.t = mlcc_emit_type(ctx, e.cdt);
  LLVMTypeRef row_t = LLVMArrayType(e.t, (unsigned)e.r.hidden_size);
  e.h = mlcc_emit_var(ctx, row_t, NULL);
  e.hnew = mlcc_emit_var(ctx, row_t, NULL);
  if (lstm) e.c = mlcc_emit_var(ctx, row_t, NULL);
  if (node->op == MLCC_OP_GRU && !e.r.linear_before_reset) e.rh = mlcc_emit_var(ctx, row_t, NULL);
  for (int d = 0; d < e.r.n_dirs; ++d) {
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, e.r.batch_size, "rnn.b");
    emit_row(&e, d, lb.iv);
    mlcc_emit_loop_end(ctx, &lb);
  }
  return e.status;
}

// Stack bytes (kernels.h): h, h_new, and for LSTM c, for GRU without linear_before_reset
// r (.) h: at most four rows of hidden_size elements (float64 for float64
// models, else float32).
static int64_t rnn_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* only) {
  const mlcc_value_t* r = mlcc_node_input(node, 2);
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (r == NULL || !r->shape_known || r->shape.rank != 3 || r->shape.dims[2] <= 0) return 0;
  int64_t elem = x != NULL && x->dtype == MLCC_DTYPE_F64 ? 8 : 4;
  return 4 * r->shape.dims[2] * elem;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_rnn = {.emit = emit_rnn, .stack_bytes = rnn_stack_bytes};

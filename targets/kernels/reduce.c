// SPDX-License-Identifier: Apache-2.0
// Kernel emitters for the Reduce* family and ArgMax/ArgMin. A loop nest over
// the kept dims (outside) and the reduced dims (inside) accumulates into an
// mlcc_emit_var (long float32 sums in blocks whose sums are added in double);
// each output element is stored once.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

static LLVMValueRef call1(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x) {
  return mlcc_emit_intrinsic(ctx, name, &x, 1);
}

// Extreme value of |dt| (lowest if |low|, else highest).
static LLVMValueRef extreme(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, bool low) {
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  if (mlcc_dtype_is_float(dt)) return LLVMConstReal(t, low ? -__builtin_inf() : __builtin_inf());
  unsigned bits = LLVMGetIntTypeWidth(t);
  unsigned long long all = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  // bool (i1) orders false < true, like an unsigned integer (ReduceMax/Min 20)
  if (mlcc_dtype_is_unsigned(dt) || mlcc_dtype_is_bool(dt)) {
    return LLVMConstInt(t, low ? 0 : all, 0);
  }
  unsigned long long smax = all >> 1;
  return LLVMConstInt(t, low ? (smax + 1) : smax, 0);
}

// a > b (or a < b when |less|) in |dt|'s order; NaN in |a| wins.
static LLVMValueRef cmp(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef a, LLVMValueRef b,
                        bool less, bool or_equal) {
  if (mlcc_dtype_is_float(dt)) {
    LLVMRealPredicate p = less ? (or_equal ? LLVMRealULE : LLVMRealULT)
                               : (or_equal ? LLVMRealUGE : LLVMRealUGT);
    return LLVMBuildFCmp(ctx->b, p, a, b, "");
  }
  bool u = mlcc_dtype_is_unsigned(dt) || mlcc_dtype_is_bool(dt);
  LLVMIntPredicate p;
  if (less) p = or_equal ? (u ? LLVMIntULE : LLVMIntSLE) : (u ? LLVMIntULT : LLVMIntSLT);
  else p = or_equal ? (u ? LLVMIntUGE : LLVMIntSGE) : (u ? LLVMIntUGT : LLVMIntSGT);
  return LLVMBuildICmp(ctx->b, p, a, b, "");
}

static bool is_int(mlcc_dtype_t dt) { return mlcc_dtype_is_int(dt); }
static bool is_f(mlcc_dtype_t dt) { return dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64; }

// Longest float32 sum mlcc_emit_reduce adds up as one serial float chain
// (error at most ~kReduceBlock * eps); longer ones are blocked.
enum { kReduceBlock = 256 };

//===----------------------------------------------------------------------===//
// Reduce*
//===----------------------------------------------------------------------===//

// Reads the axes of |node| into |red| (true = reduced). UNIMPLEMENTED for a
// non-constant axes input; INVALID_MODEL for out-of-range or repeated axes.
static mlcc_status_t reduce_axes(const mlcc_node_t* node, int rank, bool* red) {
  const char* op = mlcc_op_name(node->op);
  int64_t noop = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "noop_with_empty_axes", 0, &noop));
  int64_t axes[MLCC_MAX_RANK];
  uint32_t n = 0;
  const mlcc_value_t* ax = mlcc_node_input(node, 1);
  if (ax) {
    if (ax->kind != MLCC_VALUE_CONSTANT || !ax->data) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: axes input must be constant", op);
    }
    int64_t cnt = mlcc_shape_numel_unchecked(&ax->shape);
    if (cnt > MLCC_MAX_RANK) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: too many axes (%lld)", op,
                              (long long)cnt);
    }
    for (int64_t i = 0; i < cnt; ++i) axes[n++] = mlcc_value_const_i64(ax, i);
  } else {
    const int64_t* v = NULL;
    uint32_t cnt = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "axes", &v, &cnt));
    if (cnt > MLCC_MAX_RANK) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: too many axes (%u)", op,
                              (unsigned)cnt);
    }
    for (uint32_t i = 0; i < cnt; ++i) axes[n++] = v[i];
  }
  for (int i = 0; i < rank; ++i) red[i] = n == 0 && !noop;
  for (uint32_t i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: axis %lld out of range for rank %d",
                              op, (long long)axes[i], rank);
    }
    red[a] = true;
  }
  return mlcc_ok_status();
}

// The reduced loops of one output element: lengths and input strides,
// outermost first, and what they accumulate.
typedef struct red_nest_t {
  const mlcc_value_t* x;
  mlcc_op_t op;
  mlcc_dtype_t dt;
  LLVMTypeRef t;  // computational type of dt
  int nr;
  int64_t len[MLCC_MAX_RANK], stride[MLCC_MAX_RANK];
} red_nest_t;

// Emits reduced loops |from|..nr-1 of |n| around the combine of one element
// (at input index |off| plus the loops' offsets) into accumulator |acc|.
static void reduce_nest(mlcc_emit_ctx_t* ctx, const red_nest_t* n, int from, LLVMValueRef off,
                        LLVMValueRef acc) {
  mlcc_loop_t rl[MLCC_MAX_RANK];
  for (int i = from; i < n->nr; ++i) {
    rl[i] = mlcc_emit_for(ctx, 0, n->len[i], "r");
    off = imad(ctx, rl[i].iv, n->stride[i], off);
  }
  mlcc_dtype_t dt = n->dt;
  LLVMTypeRef t = n->t;
  bool fl = mlcc_dtype_is_float(dt);
  LLVMValueRef v = mlcc_emit_load(ctx, n->x, off);
  LLVMValueRef a = LLVMBuildLoad2(ctx->b, t, acc, "");
  LLVMValueRef nv;
  switch (n->op) {
    case MLCC_OP_REDUCE_MAX:
    case MLCC_OP_REDUCE_MIN:
      nv = LLVMBuildSelect(ctx->b, cmp(ctx, dt, v, a, n->op == MLCC_OP_REDUCE_MIN, false), v, a,
                           "");
      break;
    case MLCC_OP_REDUCE_PROD:
      nv = fl ? LLVMBuildFMul(ctx->b, a, v, "") : LLVMBuildMul(ctx->b, a, v, "");
      break;
    case MLCC_OP_REDUCE_L1: {
      LLVMValueRef av;
      if (fl) av = call1(ctx, "llvm.fabs", v);
      else if (mlcc_dtype_is_unsigned(dt)) av = v;
      else av = LLVMBuildSelect(ctx->b, LLVMBuildICmp(ctx->b, LLVMIntSLT, v, LLVMConstInt(t, 0, 0), ""),
                                LLVMBuildNeg(ctx->b, v, ""), v, "");
      nv = fl ? LLVMBuildFAdd(ctx->b, a, av, "") : LLVMBuildAdd(ctx->b, a, av, "");
      break;
    }
    case MLCC_OP_REDUCE_L2:
    case MLCC_OP_REDUCE_SUM_SQUARE:
      nv = fl ? mlcc_emit_fmuladd(ctx, v, v, a)
              : LLVMBuildAdd(ctx->b, a, LLVMBuildMul(ctx->b, v, v, ""), "");
      break;
    case MLCC_OP_REDUCE_LOG_SUM_EXP:
      nv = LLVMBuildFAdd(ctx->b, a, mlcc_emit_fast_exp(ctx, v), "");
      break;
    default:  // Sum, Mean, LogSum
      nv = fl ? LLVMBuildFAdd(ctx->b, a, v, "") : LLVMBuildAdd(ctx->b, a, v, "");
      break;
  }
  LLVMBuildStore(ctx->b, nv, acc);
  for (int i = n->nr - 1; i >= from; --i) mlcc_emit_loop_end(ctx, &rl[i]);
}

// ReduceMean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare/Sum (ONNX 1-26;
// axes from constant input 1 for ReduceSum 13+ and every Reduce* 18+).
static mlcc_status_t emit_reduce(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_op_t op = node->op;
  mlcc_dtype_t dt = x->dtype;
  bool int_ok = op == MLCC_OP_REDUCE_SUM || op == MLCC_OP_REDUCE_MEAN || op == MLCC_OP_REDUCE_MAX ||
                op == MLCC_OP_REDUCE_MIN || op == MLCC_OP_REDUCE_PROD ||
                op == MLCC_OP_REDUCE_SUM_SQUARE || op == MLCC_OP_REDUCE_L1;
  bool bool_ok = (op == MLCC_OP_REDUCE_MAX || op == MLCC_OP_REDUCE_MIN) && node->opset >= 20 &&
                 dt == MLCC_DTYPE_BOOL;
  if (!(is_f(dt) || (int_ok && is_int(dt)) || bool_ok) || y->dtype != dt) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: unsupported dtype %s",
                            mlcc_op_name(op), mlcc_dtype_name(dt));
  }
  int rank = x->shape.rank;
  bool red[MLCC_MAX_RANK];
  MLCC_RETURN_IF_ERROR(reduce_axes(node, rank, red));
  int64_t stride[MLCC_MAX_RANK], ostride[MLCC_MAX_RANK];
  int64_t s = 1, os = 1, count = 1, out_numel = 1;
  for (int i = rank - 1; i >= 0; --i) {
    stride[i] = s;
    s *= x->shape.dims[i];
    ostride[i] = red[i] ? 0 : os;
    if (red[i]) count *= x->shape.dims[i];
    else { os *= x->shape.dims[i]; }
  }
  out_numel = os;
  if (mlcc_shape_numel_unchecked(&y->shape) != out_numel) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: output has %lld elements, want %lld",
                            mlcc_op_name(op), (long long)mlcc_shape_numel_unchecked(&y->shape),
                            (long long)out_numel);
  }
  bool fl = mlcc_dtype_is_float(dt);
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_loop_t kept[MLCC_MAX_RANK];
  int nk = 0;
  LLVMValueRef in_off = c64(ctx, 0), out_off = c64(ctx, 0);
  for (int i = 0; i < rank; ++i) {
    if (red[i]) continue;
    kept[nk] = mlcc_emit_for(ctx, 0, x->shape.dims[i], "d");
    in_off = imad(ctx, kept[nk].iv, stride[i], in_off);
    out_off = imad(ctx, kept[nk].iv, ostride[i], out_off);
    ++nk;
  }
  red_nest_t n = {.x = x, .op = op, .dt = dt, .t = t, .nr = 0};
  for (int i = 0; i < rank; ++i) {
    if (!red[i]) continue;
    n.len[n.nr] = x->shape.dims[i];
    n.stride[n.nr] = stride[i];
    ++n.nr;
  }
  // A float32 sum (Sum, Mean, SumSquare, L1, L2, LogSum, LogSumExp) of more
  // than kReduceBlock elements is blocked: blocks of at most kReduceBlock
  // elements are summed serially in a fresh float accumulator and the block
  // sums are added in double, so the error stays ~kReduceBlock * eps instead
  // of growing like count * eps (2^23 similar values summed one by one in
  // float32 are off by several percent). One reduced loop is split into
  // chunks: the innermost one whose loops inside it (with it) hold more than
  // a block. (A double accumulator per element was measured ~1.8x slower on
  // x86: the float add chain is faster than convert + double add.) Shorter
  // sums, Max/Min/Prod and other dtypes accumulate in |dt|'s computational
  // type as one serial chain.
  bool sum_like = op != MLCC_OP_REDUCE_MAX && op != MLCC_OP_REDUCE_MIN && op != MLCC_OP_REDUCE_PROD;
  bool blocked = sum_like && dt == MLCC_DTYPE_F32 && count > kReduceBlock;
  LLVMValueRef r;
  if (!blocked) {
    LLVMValueRef init;
    switch (op) {
      case MLCC_OP_REDUCE_MAX: init = extreme(ctx, dt, true); break;
      case MLCC_OP_REDUCE_MIN: init = extreme(ctx, dt, false); break;
      case MLCC_OP_REDUCE_PROD: init = mlcc_emit_const(ctx, dt, 1.0); break;
      default: init = mlcc_emit_const(ctx, dt, 0.0); break;
    }
    LLVMValueRef acc = mlcc_emit_var(ctx, t, init);
    reduce_nest(ctx, &n, 0, in_off, acc);
    r = LLVMBuildLoad2(ctx->b, t, acc, "");
  } else {
    // Split loop j: the innermost reduced loop with more than a block inside
    // it (itself included); chunks of c of its iterations form a block.
    int64_t inner = 1;  // product of the reduced lengths inside loop j
    int j = n.nr - 1;
    while (inner * n.len[j] <= kReduceBlock) inner *= n.len[j--];
    int64_t c = kReduceBlock / inner;  // >= 1, and < n.len[j]
    mlcc_fsum_t tot = mlcc_emit_fsum_begin(ctx);  // double, or compensated float
    LLVMValueRef bacc = mlcc_emit_var(ctx, t, NULL);
    mlcc_loop_t outer[MLCC_MAX_RANK];
    LLVMValueRef off = in_off;
    for (int i = 0; i < j; ++i) {
      outer[i] = mlcc_emit_for(ctx, 0, n.len[i], "r");
      off = imad(ctx, outer[i].iv, n.stride[i], off);
    }
    int64_t full = n.len[j] / c, rem = n.len[j] % c;
    for (int part = 0; part < 2; ++part) {
      if ((part == 0 && full == 0) || (part == 1 && rem == 0)) continue;
      mlcc_loop_t lc;
      LLVMValueRef first = c64(ctx, full * c);  // first iteration of the chunk
      if (part == 0) {
        lc = mlcc_emit_for(ctx, 0, full, "rc");
        first = imulc(ctx, lc.iv, c);
      }
      LLVMBuildStore(ctx->b, LLVMConstReal(t, 0.0), bacc);
      mlcc_loop_t li = mlcc_emit_for(ctx, 0, part == 0 ? c : rem, "ri");
      LLVMValueRef oj = imad(ctx, iadd(ctx, first, li.iv), n.stride[j], off);
      reduce_nest(ctx, &n, j + 1, oj, bacc);
      mlcc_emit_loop_end(ctx, &li);
      mlcc_emit_fsum_add(ctx, &tot, LLVMBuildLoad2(ctx->b, t, bacc, ""));
      if (part == 0) mlcc_emit_loop_end(ctx, &lc);
    }
    for (int i = j - 1; i >= 0; --i) mlcc_emit_loop_end(ctx, &outer[i]);
    // Mean and L2 finish in double, rounded once; the logs take the float sum.
    r = mlcc_emit_fsum_value(ctx, &tot);
    if (op == MLCC_OP_REDUCE_MEAN) {
      r = LLVMBuildFDiv(ctx->b, r, LLVMConstReal(tot.type, (double)count), "");
    }
    if (op == MLCC_OP_REDUCE_L2) r = call1(ctx, "llvm.sqrt", r);
    r = mlcc_emit_fsum_round(ctx, &tot, r);
  }
  switch (op) {
    case MLCC_OP_REDUCE_MEAN:
      if (blocked) break;
      if (fl) r = LLVMBuildFDiv(ctx->b, r, mlcc_emit_const(ctx, dt, (double)count), "");
      else if (count > 0)
        r = mlcc_dtype_is_unsigned(dt) ? LLVMBuildUDiv(ctx->b, r, LLVMConstInt(t, (unsigned long long)count, 0), "")
                                       : LLVMBuildSDiv(ctx->b, r, LLVMConstInt(t, (unsigned long long)count, 0), "");
      break;
    case MLCC_OP_REDUCE_L2:
      if (!blocked) r = call1(ctx, "llvm.sqrt", r);
      break;
    case MLCC_OP_REDUCE_LOG_SUM:
    case MLCC_OP_REDUCE_LOG_SUM_EXP: r = call1(ctx, "llvm.log", r); break;
    default: break;
  }
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, out_off, r));
  for (int i = nk - 1; i >= 0; --i) mlcc_emit_loop_end(ctx, &kept[i]);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

// ArgMax/ArgMin (ONNX 1-17): int64 index along |axis| (default 0) of the
// first (or, with select_last_index, last) extreme element.
static mlcc_status_t emit_argminmax(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = x->dtype;
  if (!(is_f(dt) || is_int(dt)) || y->dtype != MLCC_DTYPE_I64) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: unsupported dtype %s",
                            mlcc_op_name(node->op), mlcc_dtype_name(dt));
  }
  int64_t axis = 0, last = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "select_last_index", 0, &last));
  int rank = x->shape.rank;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: axis out of range for rank %d",
                            mlcc_op_name(node->op), rank);
  }
  int64_t outer = 1, len = x->shape.dims[axis], inner = 1;
  for (int i = 0; i < rank; ++i) {
    if (i < axis) outer *= x->shape.dims[i];
    else if (i > axis) inner *= x->shape.dims[i];
  }
  if (len == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: reduced axis has size 0",
                            mlcc_op_name(node->op));
  }
  bool is_min = node->op == MLCC_OP_ARG_MIN;
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  mlcc_loop_t l_o = mlcc_emit_for(ctx, 0, outer, "o");
  mlcc_loop_t l_i = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef base = imad(ctx, l_o.iv, len * inner, l_i.iv);
  LLVMValueRef bv = mlcc_emit_var(ctx, t, mlcc_emit_load(ctx, x, base));
  LLVMValueRef bi = mlcc_emit_var(ctx, ctx->t_i64, c64(ctx, 0));
  mlcc_loop_t l_a = mlcc_emit_for(ctx, 1, len, "a");
  LLVMValueRef v = mlcc_emit_load(ctx, x, imad(ctx, l_a.iv, inner, base));
  LLVMValueRef cur = LLVMBuildLoad2(ctx->b, t, bv, "");
  LLVMValueRef better;
  if (mlcc_dtype_is_float(dt)) {
    // Ordered compares: NaN never replaces the current best.
    LLVMRealPredicate p = is_min ? (last ? LLVMRealOLE : LLVMRealOLT)
                                 : (last ? LLVMRealOGE : LLVMRealOGT);
    better = LLVMBuildFCmp(ctx->b, p, v, cur, "");
  } else {
    better = cmp(ctx, dt, v, cur, is_min, last != 0);
  }
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, better, v, cur, ""), bv);
  LLVMValueRef ci = LLVMBuildLoad2(ctx->b, ctx->t_i64, bi, "");
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, better, l_a.iv, ci, ""), bi);
  mlcc_emit_loop_end(ctx, &l_a);
  LLVMValueRef out = imad(ctx, l_o.iv, inner, l_i.iv);
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, out,
                                              LLVMBuildLoad2(ctx->b, ctx->t_i64, bi, "")));
  mlcc_emit_loop_end(ctx, &l_i);
  mlcc_emit_loop_end(ctx, &l_o);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_reduce = {.emit = emit_reduce};
const mlcc_emitter_t mlcc_emit_argminmax = {.emit = emit_argminmax};

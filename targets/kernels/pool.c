// SPDX-License-Identifier: Apache-2.0
// Kernel emitters for MaxPool, AveragePool, LpPool, GlobalAveragePool and
// GlobalMaxPool (1-D to 3-D spatial). Windows are walked per output element
// with per-row bounds checks; each output element is stored once. Float 2-D
// pools compute their interior (windows wholly inside the input) on vectors
// of output columns; strided windows load a contiguous span per tap and
// pick every s-th lane with a shuffle. Parallel units (the parallel entry)
// are the (n, c) planes.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/base/checked_math.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/spatial.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

static LLVMValueRef in_range(mlcc_emit_ctx_t* ctx, LLVMValueRef v, int64_t lo, int64_t hi) {
  LLVMValueRef ge = LLVMBuildICmp(ctx->b, LLVMIntSGE, v, c64(ctx, lo), "");
  LLVMValueRef lt = LLVMBuildICmp(ctx->b, LLVMIntSLT, v, c64(ctx, hi), "");
  return LLVMBuildAnd(ctx->b, ge, lt, "");
}

// Lowest / highest representable value of |dt| (max-pool identity).
static LLVMValueRef lowest(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt) {
  LLVMTypeRef t = mlcc_emit_type(ctx, dt);
  if (mlcc_dtype_is_float(dt)) return LLVMConstReal(t, -__builtin_inf());
  unsigned bits = LLVMGetIntTypeWidth(t);
  if (mlcc_dtype_is_unsigned(dt)) return LLVMConstInt(t, 0, 0);
  return LLVMConstInt(t, bits == 64 ? (1ull << 63) : (unsigned long long)(-(1ll << (bits - 1))), 1);
}

// x > y in |dt|'s order; NaN in |x| wins so it propagates.
static LLVMValueRef greater(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef x, LLVMValueRef y) {
  if (mlcc_dtype_is_float(dt)) return LLVMBuildFCmp(ctx->b, LLVMRealUGT, x, y, "");
  return LLVMBuildICmp(ctx->b, mlcc_dtype_is_unsigned(dt) ? LLVMIntUGT : LLVMIntSGT, x, y, "");
}

typedef struct pool_geom_t {
  int nsp;
  int64_t n, c;
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} pool_geom_t;

// Fills |g| for a MaxPool, AveragePool or LpPool |node| from its window
// (mlcc_spatial_resolve, ir/ops/spatial.h: the rules shape inference
// applied) and its inferred output Y, which must agree with the window.
static mlcc_status_t pool_geom(const mlcc_node_t* node, pool_geom_t* g) {
  memset(g, 0, sizeof(*g));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const char* op = mlcc_op_name(node->op);
  int rank = x->shape.rank, nsp = rank - 2;
  if (nsp < 1 || nsp > 3 || y->shape.rank != rank) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s supports 1 to 3 spatial dims; got X rank %d, Y rank %d", op,
                            rank, (int)y->shape.rank);
  }
  g->nsp = nsp;
  g->n = x->shape.dims[0];
  g->c = x->shape.dims[1];
  if (y->shape.dims[0] != g->n || y->shape.dims[1] != g->c) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: Y's batch/channel dims differ from X",
                            op);
  }
  mlcc_spatial_t sp;
  MLCC_RETURN_IF_ERROR(mlcc_spatial_resolve(node, &sp));
  for (int i = 0; i < nsp; ++i) {
    if (y->shape.dims[2 + i] != sp.out[i]) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s: Y's spatial dim %d is %lld; the window gives %lld", op, i,
                              (long long)y->shape.dims[2 + i], (long long)sp.out[i]);
    }
  }
  mlcc_spatial_to3(&sp, g->in, g->out, g->k, g->s, g->d, g->pb, g->pe);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Parallel units and vector helpers
//===----------------------------------------------------------------------===//

// Below this many input bytes a pool runs whole on the calling thread: the
// parallel-for hand-off would cost about what the second thread saves.
enum { kPoolMinParallelBytes = 128 * 1024 };
// Float32 sums: vectors per block of a blocked GlobalAveragePool plane, and
// the longest sum a scalar (serial) loop accumulates in float before it
// switches to a double accumulator (see mlcc_emit_global_pool).
enum { kPoolSumBlockVecs = 256, kPoolScalarSumMax = 256 };

// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: one unit per (n, c) plane, when
// the input is large enough to pay for a split.
static int64_t pool_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target) {
  if (node == NULL || target == NULL || node->n_inputs < 1 || node->n_outputs < 1) return 0;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (x == NULL || y == NULL || !x->shape_known || x->shape.rank < 3) return 0;
  int64_t bytes = mlcc_shape_numel_unchecked(&x->shape) * (int64_t)mlcc_dtype_size(x->dtype);
  int64_t units = x->shape.dims[0] * x->shape.dims[1];
  return units >= 2 && bytes >= kPoolMinParallelBytes ? units : 0;
}

// The kernel's (n, c) plane range: the caller's [begin, end) clamped to
// [0, units), or all of it when the kernel is not split.
static void plane_range(mlcc_emit_ctx_t* ctx, int64_t units, LLVMValueRef* rb, LLVMValueRef* re) {
  LLVMValueRef zero = c64(ctx, 0), all = c64(ctx, units);
  *rb = zero;
  *re = all;
  if (ctx->range_begin == NULL) return;
  *rb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, ctx->range_begin, all), zero);
  *re = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, ctx->range_end, all), zero);
}

// Lanes of the vector paths for |dt| (0: scalar only).
static int pool_lanes(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt) {
  bool q8 = dt == MLCC_DTYPE_I8 || dt == MLCC_DTYPE_U8;  // int8 MaxPool (quant-fuse)
  if ((dt != MLCC_DTYPE_F32 && dt != MLCC_DTYPE_F64 && !q8) || ctx->target == NULL) return 0;
  int lanes = ctx->target->vector_bytes / (int)mlcc_dtype_size(dt);
  return lanes >= 2 ? lanes : 0;
}

static LLVMValueRef splat(mlcc_emit_ctx_t* ctx, LLVMValueRef s, int w) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), (unsigned)w);
  LLVMValueRef ins = LLVMBuildInsertElement(ctx->b, LLVMGetUndef(vt), s, LLVMConstInt(ctx->t_i32, 0, 0), "");
  LLVMValueRef zeros[64];
  for (int i = 0; i < w; ++i) zeros[i] = LLVMConstInt(ctx->t_i32, 0, 0);
  return LLVMBuildShuffleVector(ctx->b, ins, LLVMGetUndef(vt), LLVMConstVector(zeros, (unsigned)w), "");
}

// max (select on "greater", NaN in |v| wins, as the scalar code) or sum.
static LLVMValueRef combine(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, bool is_max, LLVMValueRef r,
                            LLVMValueRef v) {
  if (is_max) return LLVMBuildSelect(ctx->b, greater(ctx, dt, v, r), v, r, "");
  return LLVMBuildFAdd(ctx->b, r, v, "");
}

// Loads |w| elements of |x| at linear index |idx| with stride |s| (s > 1:
// one load of w*s contiguous elements and a shuffle picking every s-th).
static LLVMValueRef load_strided(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, LLVMTypeRef ft,
                                 LLVMValueRef idx, int w, int64_t s) {
  LLVMValueRef p = LLVMBuildInBoundsGEP2(ctx->b, ft, mlcc_emit_ptr(ctx, x), &idx, 1, "");
  unsigned elem = (unsigned)mlcc_dtype_size(x->dtype);
  LLVMValueRef v = LLVMBuildLoad2(ctx->b, LLVMVectorType(ft, (unsigned)(w * s)), p, "");
  LLVMSetAlignment(v, elem);
  if (s == 1) return v;
  LLVMValueRef mask[64];
  for (int i = 0; i < w; ++i) mask[i] = LLVMConstInt(ctx->t_i32, (unsigned long long)(i * s), 0);
  return LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(mask, (unsigned)w), "");
}

// Horizontal max/sum of vector |v| (|w| lanes, a power of two) by halving.
static LLVMValueRef reduce_vec(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, bool is_max, LLVMValueRef v,
                               int w) {
  while (w > 1) {
    int h = w / 2;
    LLVMValueRef lo[32], hi[32];
    for (int i = 0; i < h; ++i) {
      lo[i] = LLVMConstInt(ctx->t_i32, (unsigned long long)i, 0);
      hi[i] = LLVMConstInt(ctx->t_i32, (unsigned long long)(i + h), 0);
    }
    LLVMValueRef a = LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(lo, (unsigned)h), "");
    LLVMValueRef b = LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(hi, (unsigned)h), "");
    v = combine(ctx, dt, is_max, a, b);
    w = h;
  }
  return LLVMBuildExtractElement(ctx->b, v, LLVMConstInt(ctx->t_i32, 0, 0), "");
}

// One vector of |w| interior output columns from |ow0| of the output row
// whose window starts at input row index |rowb| (X index of [n, c, h0, 0]);
// stores it at Y index |yi|.
static mlcc_status_t pool_vec_tile(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                   const pool_geom_t* g, bool is_max, LLVMValueRef rowb,
                                   LLVMValueRef ow0, int w, LLVMValueRef yi) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_dtype_t dt = x->dtype;
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  LLVMValueRef col0 = iaddc(ctx, imulc(ctx, ow0, g->s[2]), -g->pb[2]);
  LLVMValueRef r = NULL;
  for (int64_t kh = 0; kh < g->k[1]; ++kh) {
    for (int64_t kw = 0; kw < g->k[2]; ++kw) {
      LLVMValueRef idx = iadd(ctx, rowb, iaddc(ctx, col0, kh * g->d[1] * g->in[2] + kw * g->d[2]));
      LLVMValueRef v = load_strided(ctx, x, ft, idx, w, g->s[2]);
      r = r == NULL ? v : combine(ctx, dt, is_max, r, v);
    }
  }
  if (!is_max) {
    r = LLVMBuildFDiv(ctx->b, r, splat(ctx, mlcc_emit_const(ctx, dt, (double)(g->k[1] * g->k[2])), w), "");
  }
  return mlcc_emit_store_output_vec(ctx, node, 0, yi, r);
}

// MaxPool (optional int64 Indices over the flattened NCHW input, storage_order
// 0) and AveragePool (count_include_pad, ceil_mode via the inferred output
// shape) for ONNX opsets 1-17, and LpPool 2-26 ((sum of |x|^p)^(1/p) over
// the in-bounds positions of the window, the generic nest only).
static mlcc_status_t emit_pool(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  pool_geom_t g;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const mlcc_value_t* ind = mlcc_node_output(node, 1);
  if (!x || !y) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "pool needs X and Y");
  MLCC_RETURN_IF_ERROR(pool_geom(node, &g));
  bool is_max = node->op == MLCC_OP_MAX_POOL, is_lp = node->op == MLCC_OP_LP_POOL;
  int64_t p = 2;
  if (is_lp) MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "p", 2, &p));
  mlcc_dtype_t dt = y->dtype;
  bool ok_dtype = dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64 ||
                  (is_max && (dt == MLCC_DTYPE_I8 || dt == MLCC_DTYPE_U8));
  if (!ok_dtype || x->dtype != dt) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: unsupported dtype %s",
                            mlcc_op_name(node->op), mlcc_dtype_name(x->dtype));
  }
  int64_t storage_order = 0, count_include_pad = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "storage_order", 0, &storage_order));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "count_include_pad", 0, &count_include_pad));
  if (is_lp) count_include_pad = 0;  // LpPool has no such attribute: padding adds 0
  if (storage_order != 0 && storage_order != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MaxPool: storage_order must be 0 or 1; got %lld",
                            (long long)storage_order);
  }
  if (ind && ind->dtype != MLCC_DTYPE_I64) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "MaxPool: Indices must be int64");
  }
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  // Interior fast path (1-D/2-D float pools without Indices): output
  // positions whose whole window is inside the input run without bounds
  // checks, the window unrolled; the generic nest below skips them.
  int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  bool interior = !ind && !is_lp && g.out[0] == 1 && g.in[0] == 1 && g.k[0] == 1 &&
                  (dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64 ||
                   (is_max && (dt == MLCC_DTYPE_I8 || dt == MLCC_DTYPE_U8))) &&
                  g.k[1] * g.k[2] <= 64;
  for (int j = 1; j < 3 && interior; ++j) {
    lo[j] = mlcc_ceil_div_nonneg(g.pb[j], g.s[j]);
    int64_t num = g.in[j] - 1 - (g.k[j] - 1) * g.d[j] + g.pb[j];
    hi[j] = num < 0 ? 0 : num / g.s[j] + 1;
    if (hi[j] > g.out[j]) hi[j] = g.out[j];
    interior = hi[j] > lo[j];
  }
  LLVMValueRef rb, re;
  plane_range(ctx, g.n * g.c, &rb, &re);
  if (interior) {
    // Vector tiles of w columns, widest first; a strided tile reads w*s
    // elements per tap, so it may not run past the input row's end.
    int lanes = g.s[2] <= 4 ? pool_lanes(ctx, dt) : 0;  // wide loads of lanes*s
    int64_t span = (g.k[2] - 1) * g.d[2] - g.pb[2] + g.s[2] - 1;
    int64_t nfull = 0, ow_v = lo[2];
    int tiles_w[8], n_tiles = 0;
    if (lanes >= 2) {
      while (ow_v + lanes <= hi[2] && (ow_v + lanes - 1) * g.s[2] + span < g.in[2]) {
        ow_v += lanes;
        ++nfull;
      }
      for (int w = lanes / 2; w >= (lanes >= 8 ? 4 : 2) && n_tiles < 8; w /= 2) {
        if (ow_v + w <= hi[2] && (ow_v + w - 1) * g.s[2] + span < g.in[2]) {
          tiles_w[n_tiles++] = w;
          ow_v += w;
        }
      }
    }
    mlcc_loop_t f_nc = mlcc_emit_loop_begin(ctx, rb, re, 1, "fnc");
    mlcc_loop_t f_oh = mlcc_emit_for(ctx, lo[1], hi[1], "foh");
    LLVMValueRef base = imulc(ctx, f_nc.iv, g.in[1] * g.in[2]);
    LLVMValueRef h0 = iaddc(ctx, imulc(ctx, f_oh.iv, g.s[1]), -g.pb[1]);
    LLVMValueRef rowb = iadd(ctx, base, imulc(ctx, h0, g.in[2]));
    LLVMValueRef yrow = imulc(ctx, imad(ctx, f_nc.iv, g.out[1], f_oh.iv), g.out[2]);
    if (nfull > 0) {
      mlcc_loop_t f_t = mlcc_emit_for(ctx, 0, nfull, "fvt");
      LLVMValueRef ow0 = iaddc(ctx, imulc(ctx, f_t.iv, lanes), lo[2]);
      MLCC_RETURN_IF_ERROR(pool_vec_tile(ctx, node, &g, is_max, rowb, ow0, lanes, iadd(ctx, yrow, ow0)));
      mlcc_emit_loop_end(ctx, &f_t);
    }
    int64_t ow_t = lo[2] + nfull * lanes;
    for (int t = 0; t < n_tiles; ++t) {
      LLVMValueRef ow0 = c64(ctx, ow_t);
      MLCC_RETURN_IF_ERROR(pool_vec_tile(ctx, node, &g, is_max, rowb, ow0, tiles_w[t], iaddc(ctx, yrow, ow_t)));
      ow_t += tiles_w[t];
    }
    if (ow_v < hi[2]) {
      mlcc_loop_t f_ow = mlcc_emit_for(ctx, ow_v, hi[2], "fow");
      LLVMValueRef w0 = iaddc(ctx, imulc(ctx, f_ow.iv, g.s[2]), -g.pb[2]);
      LLVMValueRef row0 = iadd(ctx, rowb, w0);
      LLVMValueRef r = NULL;
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          LLVMValueRef v = mlcc_emit_load(ctx, x, iaddc(ctx, row0, kh * g.d[1] * g.in[2] + kw * g.d[2]));
          r = r == NULL ? v : combine(ctx, dt, is_max, r, v);
        }
      }
      if (!is_max) r = LLVMBuildFDiv(ctx->b, r, mlcc_emit_const(ctx, dt, (double)(g.k[1] * g.k[2])), "");
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, iadd(ctx, yrow, f_ow.iv), r));
      mlcc_emit_loop_end(ctx, &f_ow);
    }
    mlcc_emit_loop_end(ctx, &f_oh);
    mlcc_emit_loop_end(ctx, &f_nc);
  }
  mlcc_loop_t l_nc = mlcc_emit_loop_begin(ctx, rb, re, 1, "nc");
  mlcc_loop_t l_od = mlcc_emit_for(ctx, 0, g.out[0], "od");
  mlcc_loop_t l_oh = mlcc_emit_for(ctx, 0, g.out[1], "oh");
  mlcc_loop_t l_ow = mlcc_emit_for(ctx, 0, g.out[2], "ow");
  LLVMValueRef o[3] = {l_od.iv, l_oh.iv, l_ow.iv};
  mlcc_if_t border;
  if (interior) {
    LLVMValueRef in_h = in_range(ctx, l_oh.iv, lo[1], hi[1]);
    LLVMValueRef in_w = in_range(ctx, l_ow.iv, lo[2], hi[2]);
    border = mlcc_emit_if_begin(ctx, LLVMBuildNot(ctx->b, LLVMBuildAnd(ctx->b, in_h, in_w, ""), ""));
  }
  // A float32 average over a window longer than kPoolScalarSumMax sums in
  // double (a serial chain either way); shorter windows in float.
  // Without double-precision hardware (mlcc_target_wide_sums) such a window
  // sums in compensated float instead (mlcc_fsum_t).
  bool long_sum = !is_max && !is_lp && dt == MLCC_DTYPE_F32 &&
                  g.k[0] * g.k[1] * g.k[2] > kPoolScalarSumMax;
  bool wide = long_sum && mlcc_target_wide_sums(ctx->target);
  bool kahan = long_sum && !wide;
  LLVMTypeRef at = wide ? ctx->t_f64 : ft;
  mlcc_fsum_t ksum = {0};
  if (kahan) ksum = mlcc_emit_fsum_begin(ctx);
  LLVMValueRef acc = kahan ? ksum.sum
                           : mlcc_emit_var(ctx, at, is_max ? lowest(ctx, dt) : LLVMConstReal(at, 0.0));
  LLVMValueRef best = ind ? mlcc_emit_var(ctx, ctx->t_i64, c64(ctx, 0)) : NULL;
  LLVMValueRef count = mlcc_emit_var(ctx, ctx->t_i64, c64(ctx, 0));
  mlcc_loop_t lk[3];
  mlcc_if_t ifs[3];
  bool has_if[3] = {false, false, false};
  LLVMValueRef xi = l_nc.iv;
  for (int j = 0; j < 3; ++j) {
    lk[j] = mlcc_emit_for(ctx, 0, g.k[j], "k");
    LLVMValueRef pos = iadd(ctx, iaddc(ctx, imulc(ctx, o[j], g.s[j]), -g.pb[j]),
                            imulc(ctx, lk[j].iv, g.d[j]));
    int64_t maxpos = (g.out[j] - 1) * g.s[j] - g.pb[j] + (g.k[j] - 1) * g.d[j];
    if (!is_max && count_include_pad) {
      // Positions in the padded extent [-pb, in + pe) count; ceil_mode
      // windows may reach past it.
      if (maxpos >= g.in[j] + g.pe[j]) {
        ifs[j] = mlcc_emit_if_begin(ctx, in_range(ctx, pos, -g.pb[j], g.in[j] + g.pe[j]));
        has_if[j] = true;
      }
    } else if (g.pb[j] > 0 || maxpos >= g.in[j]) {
      ifs[j] = mlcc_emit_if_begin(ctx, in_range(ctx, pos, 0, g.in[j]));
      has_if[j] = true;
    }
    xi = imad(ctx, xi, g.in[j], pos);
  }
  if (is_max) {
    LLVMValueRef v = mlcc_emit_load(ctx, x, xi);
    LLVMValueRef cur = LLVMBuildLoad2(ctx->b, ft, acc, "");
    LLVMValueRef gt = greater(ctx, dt, v, cur);
    LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, gt, v, cur, ""), acc);
    if (best) {
      LLVMValueRef cb = LLVMBuildLoad2(ctx->b, ctx->t_i64, best, "");
      // storage_order 1: the spatial part of the index is column-major.
      LLVMValueRef flat = xi;
      if (storage_order == 1) {
        LLVMValueRef sp = c64(ctx, 0);
        for (int j = 2; j >= 0; --j) {
          LLVMValueRef pos = iadd(ctx, iaddc(ctx, imulc(ctx, o[j], g.s[j]), -g.pb[j]),
                                  imulc(ctx, lk[j].iv, g.d[j]));
          sp = imad(ctx, sp, g.in[j], pos);
        }
        flat = imad(ctx, l_nc.iv, g.in[0] * g.in[1] * g.in[2], sp);
      }
      LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, gt, flat, cb, ""), best);
    }
  } else if (count_include_pad) {
    // Count every position in the padded extent; add only in-bounds values.
    LLVMValueRef cn = LLVMBuildLoad2(ctx->b, ctx->t_i64, count, "");
    LLVMBuildStore(ctx->b, iaddc(ctx, cn, 1), count);
    // Recompute the in-bounds condition for the value (positions may be in
    // the padding).
    LLVMValueRef inb = LLVMConstInt(ctx->t_i1, 1, 0);
    LLVMValueRef xr = l_nc.iv;
    for (int j = 0; j < 3; ++j) {
      LLVMValueRef pos = iadd(ctx, iaddc(ctx, imulc(ctx, o[j], g.s[j]), -g.pb[j]),
                              imulc(ctx, lk[j].iv, g.d[j]));
      inb = LLVMBuildAnd(ctx->b, inb, in_range(ctx, pos, 0, g.in[j]), "");
      xr = imad(ctx, xr, g.in[j], pos);
    }
    mlcc_if_t in_if = mlcc_emit_if_begin(ctx, inb);
    LLVMValueRef v = mlcc_emit_load(ctx, x, xr);
    if (kahan) {
      mlcc_emit_fsum_add(ctx, &ksum, v);
    } else {
      LLVMValueRef cur = LLVMBuildLoad2(ctx->b, at, acc, "");
      if (wide) v = LLVMBuildFPExt(ctx->b, v, at, "");
      LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, cur, v, ""), acc);
    }
    mlcc_emit_if_end(ctx, &in_if);
  } else {
    LLVMValueRef cn = LLVMBuildLoad2(ctx->b, ctx->t_i64, count, "");
    LLVMBuildStore(ctx->b, iaddc(ctx, cn, 1), count);
    LLVMValueRef v = mlcc_emit_load(ctx, x, xi);
    if (is_lp) {  // |x|^p by repeated multiplication (p <= 64, checked at inference)
      LLVMValueRef a = mlcc_emit_intrinsic(ctx, "llvm.fabs", &v, 1);
      v = a;
      for (int64_t i = 1; i < p; ++i) v = LLVMBuildFMul(ctx->b, v, a, "");
    }
    if (kahan) {
      mlcc_emit_fsum_add(ctx, &ksum, v);
    } else {
      LLVMValueRef cur = LLVMBuildLoad2(ctx->b, at, acc, "");
      if (wide) v = LLVMBuildFPExt(ctx->b, v, at, "");
      LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, cur, v, ""), acc);
    }
  }
  for (int j = 2; j >= 0; --j) {
    if (has_if[j]) mlcc_emit_if_end(ctx, &ifs[j]);
    mlcc_emit_loop_end(ctx, &lk[j]);
  }
  LLVMValueRef yi = imad(ctx, l_nc.iv, g.out[0], l_od.iv);
  yi = imad(ctx, yi, g.out[1], l_oh.iv);
  yi = imad(ctx, yi, g.out[2], l_ow.iv);
  LLVMValueRef result = kahan ? mlcc_emit_fsum_value(ctx, &ksum) : LLVMBuildLoad2(ctx->b, at, acc, "");
  if (is_lp) {
    // The p-th root: sqrt for 2, exp(log(sum) / p) above (a zero sum gives 0).
    if (p == 2) {
      result = mlcc_emit_intrinsic(ctx, "llvm.sqrt", &result, 1);
    } else if (p > 2) {
      result = libm_dt(ctx, dt, "exp", LLVMBuildFDiv(ctx->b, libm_dt(ctx, dt, "log", result),
                                                     mlcc_emit_const(ctx, dt, (double)p), ""));
    }
  } else if (!is_max) {
    LLVMValueRef cn = LLVMBuildLoad2(ctx->b, ctx->t_i64, count, "");
    // An empty window (possible only with ceil_mode) yields 0/1 -> 0 rather
    // than NaN... ONNX leaves it undefined; avoid dividing by zero.
    LLVMValueRef is0 = LLVMBuildICmp(ctx->b, LLVMIntEQ, cn, c64(ctx, 0), "");
    cn = LLVMBuildSelect(ctx->b, is0, c64(ctx, 1), cn, "");
    result = LLVMBuildFDiv(ctx->b, result, LLVMBuildSIToFP(ctx->b, cn, at, ""), "");
    if (wide) result = LLVMBuildFPTrunc(ctx->b, result, ft, "");
  }
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, yi, result));
  if (ind) {
    MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 1, yi,
                                                LLVMBuildLoad2(ctx->b, ctx->t_i64, best, "")));
  }
  if (interior) mlcc_emit_if_end(ctx, &border);
  mlcc_emit_loop_end(ctx, &l_ow);
  mlcc_emit_loop_end(ctx, &l_oh);
  mlcc_emit_loop_end(ctx, &l_od);
  mlcc_emit_loop_end(ctx, &l_nc);
  return mlcc_ok_status();
}

// GlobalAveragePool / GlobalMaxPool: reduce every spatial dim to 1 (ONNX 1-17).
static mlcc_status_t emit_global_pool(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (!x || !y || x->shape.rank < 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs X of rank >= 2",
                            mlcc_op_name(node->op));
  }
  mlcc_dtype_t dt = y->dtype;
  if ((dt != MLCC_DTYPE_F32 && dt != MLCC_DTYPE_F64) || x->dtype != dt) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: unsupported dtype %s",
                            mlcc_op_name(node->op), mlcc_dtype_name(x->dtype));
  }
  bool is_max = node->op == MLCC_OP_GLOBAL_MAX_POOL;
  int64_t nc = x->shape.dims[0] * x->shape.dims[1];
  int64_t sp = 1;
  for (int i = 2; i < x->shape.rank; ++i) sp *= x->shape.dims[i];
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  LLVMValueRef rb, re;
  plane_range(ctx, nc, &rb, &re);
  LLVMValueRef ident = is_max ? lowest(ctx, dt) : mlcc_emit_const(ctx, dt, 0);
  int lanes = pool_lanes(ctx, dt);
  int64_t nvec = lanes >= 2 ? sp / lanes : 0;
  // A long float32 average is blocked: blocks of kPoolSumBlockVecs vectors
  // are summed in fresh float vectors, reduced and added up in double; a long
  // scalar remainder (no vector unit, e.g. when folding) accumulates in
  // double. Short planes emit the plain float code.
  bool sum32 = !is_max && dt == MLCC_DTYPE_F32;
  int64_t nblk = sum32 && nvec > kPoolSumBlockVecs ? nvec / kPoolSumBlockVecs : 0;
  int64_t v0 = nblk * kPoolSumBlockVecs;  // first vector after the blocks
  bool wide_tail = sum32 && sp - nvec * lanes > kPoolScalarSumMax;
  LLVMTypeRef vt = lanes >= 2 ? LLVMVectorType(ft, (unsigned)lanes) : NULL;
  mlcc_loop_t l_nc = mlcc_emit_loop_begin(ctx, rb, re, 1, "nc");
  LLVMValueRef base = imulc(ctx, l_nc.iv, sp);
  LLVMValueRef acc = mlcc_emit_var(ctx, ft, ident);
  // |tot| adds in double, or in compensated float without double-precision
  // hardware (mlcc_fsum_t).
  mlcc_fsum_t tot = {0};
  bool have_tot = nblk > 0 || wide_tail;
  if (have_tot) tot = mlcc_emit_fsum_begin(ctx);
  if (nblk > 0) {
    mlcc_loop_t l_b = mlcc_emit_for(ctx, 0, nblk, "blk");
    LLVMValueRef bacc = mlcc_emit_var(ctx, vt, splat(ctx, ident, lanes));
    LLVMValueRef bbase = iadd(ctx, base, imulc(ctx, l_b.iv, kPoolSumBlockVecs * lanes));
    mlcc_loop_t l_v = mlcc_emit_for(ctx, 0, kPoolSumBlockVecs, "bv");
    LLVMValueRef vi = iadd(ctx, bbase, imulc(ctx, l_v.iv, lanes));
    LLVMValueRef v = load_strided(ctx, x, ft, vi, lanes, 1);
    LLVMBuildStore(ctx->b, combine(ctx, dt, false, LLVMBuildLoad2(ctx->b, vt, bacc, ""), v), bacc);
    mlcc_emit_loop_end(ctx, &l_v);
    LLVMValueRef bs = reduce_vec(ctx, dt, false, LLVMBuildLoad2(ctx->b, vt, bacc, ""), lanes);
    mlcc_emit_fsum_add(ctx, &tot, bs);
    mlcc_emit_loop_end(ctx, &l_b);
  }
  if (nvec > v0) {
    // Lane-wise partial results over whole vectors, then a halving reduction.
    LLVMValueRef vacc = mlcc_emit_var(ctx, vt, splat(ctx, ident, lanes));
    mlcc_loop_t l_v = mlcc_emit_for(ctx, v0, nvec, "v");
    LLVMValueRef v = load_strided(ctx, x, ft, iadd(ctx, base, imulc(ctx, l_v.iv, lanes)), lanes, 1);
    LLVMBuildStore(ctx->b, combine(ctx, dt, is_max, LLVMBuildLoad2(ctx->b, vt, vacc, ""), v), vacc);
    mlcc_emit_loop_end(ctx, &l_v);
    LLVMBuildStore(ctx->b, reduce_vec(ctx, dt, is_max, LLVMBuildLoad2(ctx->b, vt, vacc, ""), lanes), acc);
  }
  if (nvec * lanes < sp && wide_tail) {
    mlcc_loop_t l_s = mlcc_emit_for(ctx, nvec * lanes, sp, "s");
    LLVMValueRef v = mlcc_emit_load(ctx, x, iadd(ctx, base, l_s.iv));
    mlcc_emit_fsum_add(ctx, &tot, v);
    mlcc_emit_loop_end(ctx, &l_s);
  } else if (nvec * lanes < sp) {
    mlcc_loop_t l_s = mlcc_emit_for(ctx, nvec * lanes, sp, "s");
    LLVMValueRef v = mlcc_emit_load(ctx, x, iadd(ctx, base, l_s.iv));
    LLVMValueRef cur = LLVMBuildLoad2(ctx->b, ft, acc, "");
    LLVMBuildStore(ctx->b, combine(ctx, dt, is_max, cur, v), acc);
    mlcc_emit_loop_end(ctx, &l_s);
  }
  LLVMValueRef r = LLVMBuildLoad2(ctx->b, ft, acc, "");
  if (have_tot) {
    // Average in double (or compensated float), rounded once.
    mlcc_emit_fsum_add(ctx, &tot, r);
    LLVMValueRef t = mlcc_emit_fsum_value(ctx, &tot);
    t = LLVMBuildFDiv(ctx->b, t, LLVMConstReal(tot.type, (double)sp), "");
    r = mlcc_emit_fsum_round(ctx, &tot, t);
  } else if (!is_max) {
    r = LLVMBuildFDiv(ctx->b, r, mlcc_emit_const(ctx, dt, (double)(sp ? sp : 1)), "");
  }
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, l_nc.iv, r));
  mlcc_emit_loop_end(ctx, &l_nc);
  return mlcc_ok_status();
}

// FLOPs (kernels.h): one operation per window element of every output.
static int64_t pool_flops(const mlcc_node_t* n) {
  const int64_t* ks = NULL;
  uint32_t nks = 0;
  mlcc_status_t s = mlcc_node_attr_ints(n, "kernel_shape", &ks, &nks);
  if (s != NULL) {
    mlcc_status_free(s);
    return -1;
  }
  int64_t k = 1;
  for (uint32_t i = 0; i < nks; ++i) k *= ks[i];
  return mlcc_kernels_numel(mlcc_node_output(n, 0)) * k;
}

// One operation per input element.
static int64_t global_pool_flops(const mlcc_node_t* n) {
  return mlcc_kernels_numel(mlcc_node_input(n, 0));
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_pool = {
    .emit = emit_pool,
    .parallel_units = pool_parallel_units,
    .flops = pool_flops,
};
const mlcc_emitter_t mlcc_emit_global_pool = {
    .emit = emit_global_pool,
    .parallel_units = pool_parallel_units,
    .flops = global_pool_flops,
};

// SPDX-License-Identifier: Apache-2.0
// The kernel of WQMatMul (mlcc-internal, ir/ops/quant.h): a MatMul whose
// constant B is a weight-only quantized matrix kept packed in the weights
// blob (int4/uint4: two codes per byte; int8/uint8: one), so a 1024x1024
// int4 weight is 512 KiB of codes plus its scales instead of 4 MiB of
// float32. Written by quant-fuse for DequantizeLinear(W) -> MatMul/Gemm
// (ONNX DequantizeLinear 10-26 with block_size from 21, MatMul 1-26, Gemm
// 1-26 with transA 0, alpha 1, beta 1).
//
// Numerics: each weight is dequantized in registers exactly as
// DequantizeLinear specifies, w = float32((q - z) * s) (q - z = u - o is
// an exact small integer, converted exactly, then one float32 multiply), and
// the products are accumulated in float32 with multiply-adds, so the result
// is the float graph's DequantizeLinear then MatMul up to the summation
// order (as any MatMul kernel).
//
// Schedule: the output is cut into tiles of mt rows x one panel of
// MLCC_WQ_PANEL (16) columns; a tile keeps mt accumulators of 16 float32
// lanes (<16 x float>: one AVX-512 register, two AVX2 ones, four NEON ones,
// LMUL 2 on RVV at VLEN 256; scalarized on microcontrollers without float
// SIMD), loads a block's 16 scales (and offsets) once, then per byte row of
// the panel 16 bytes of codes (two k rows for 4 bits), widens, converts,
// subtracts the offsets, scales and multiply-adds them against the
// broadcast A elements of its rows. A decode step (M = 1..8 rows) reads
// each code once, so the weight bytes, not the arithmetic, set its speed.
// Parallel units: (row tile, panel) pairs.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/quant.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

enum { kPanel = MLCC_WQ_PANEL, kMaxTileRows = 8 };

// A product of fewer multiply-adds does not pay for a parallel-for call
// (the streamed-B threshold of targets/kernels/matmul.c).
static const int64_t kMinParallelMacs = (int64_t)1 << 18;

// Rows of a tile on |target|: 8 with 32 vector registers of 16 lanes
// (AVX-512), 4 with 16+ registers of 4-8 lanes (AVX2, NEON, RVV), 1 without
// float SIMD (vector_bytes 4: the 16 accumulators are scalar registers).
static int tile_rows(const mlcc_target_t* target, int64_t rows) {
  int vb = target != NULL ? target->vector_bytes : 16;
  int mt = vb >= 64 ? 8 : vb >= 16 ? 4 : 1;
  if (rows < mt) mt = rows > 0 ? (int)rows : 1;
  return mt;
}

typedef struct wq_plan_t {
  mlcc_wq_layout_t l;
  int64_t rows;       // numel(A) / K
  int mt;             // tile rows
  int64_t mtiles, units;
  bool parallel;
} wq_plan_t;

static mlcc_status_t wq_make_plan(const mlcc_node_t* node, const mlcc_target_t* target,
                                  wq_plan_t* p) {
  memset(p, 0, sizeof(*p));
  MLCC_RETURN_IF_ERROR(mlcc_wq_resolve(node, &p->l));
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  p->rows = mlcc_shape_numel_unchecked(&a->shape) / p->l.k;
  p->mt = tile_rows(target, p->rows);
  p->mtiles = (p->rows + p->mt - 1) / p->mt;
  p->units = p->mtiles * p->l.panels;
  p->parallel = p->units > 1 && p->rows * p->l.k * p->l.n >= kMinParallelMacs;
  return mlcc_ok_status();
}

typedef struct wq_t {
  mlcc_emit_ctx_t* ctx;
  const mlcc_node_t* node;
  const wq_plan_t* p;
  LLVMValueRef ap, wp, sp, zp;   // base pointers (zp NULL without Z)
  LLVMTypeRef vf, vi, vb;        // <16 x float>, <16 x i32>, <16 x i8>
  int64_t offset;                // o when there is no Z
} wq_t;

static LLVMValueRef vload(wq_t* q, LLVMTypeRef vt, LLVMTypeRef et, LLVMValueRef base,
                          LLVMValueRef idx, unsigned align) {
  mlcc_emit_ctx_t* ctx = q->ctx;
  LLVMValueRef v = LLVMBuildLoad2(ctx->b, vt, LLVMBuildInBoundsGEP2(ctx->b, et, base, &idx, 1, ""), "");
  LLVMSetAlignment(v, align);
  return v;
}

static LLVMValueRef splat(wq_t* q, LLVMValueRef s) {
  mlcc_emit_ctx_t* ctx = q->ctx;
  LLVMValueRef ins = LLVMBuildInsertElement(ctx->b, LLVMGetUndef(q->vf), s, LLVMConstInt(ctx->t_i32, 0, 0), "");
  return LLVMBuildShuffleVector(ctx->b, ins, LLVMGetUndef(q->vf), LLVMConstNull(q->vi), "");
}

// <16 x i32> of |v| in every lane.
static LLVMValueRef vint(wq_t* q, int v) {
  LLVMValueRef c[kPanel];
  for (int i = 0; i < kPanel; ++i) c[i] = LLVMConstInt(q->ctx->t_i32, (unsigned long long)v, 0);
  return LLVMConstVector(c, kPanel);
}

// acc[x] += A[i0 + x][kk] * w for the r rows of the tile.
static void fma_rows(wq_t* q, LLVMValueRef* acc, int r, LLVMValueRef i0, LLVMValueRef kk,
                     LLVMValueRef w) {
  mlcc_emit_ctx_t* ctx = q->ctx;
  for (int x = 0; x < r; ++x) {
    LLVMValueRef ai = iadd(ctx, imulc(ctx, iaddc(ctx, i0, x), q->p->l.k), kk);
    LLVMValueRef av = vload(q, ctx->t_f32, ctx->t_f32, q->ap, ai, 4);
    LLVMValueRef cur = LLVMBuildLoad2(ctx->b, q->vf, acc[x], "");
    LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, splat(q, av), w, cur), acc[x]);
  }
}

// float32((u - o) * s) of the 16 codes |u| (<16 x i32>, 0..255).
static LLVMValueRef dequant(wq_t* q, LLVMValueRef u, LLVMValueRef o, LLVMValueRef s) {
  mlcc_emit_ctx_t* ctx = q->ctx;
  LLVMValueRef f = LLVMBuildSIToFP(ctx->b, u, q->vf, "");
  return LLVMBuildFMul(ctx->b, LLVMBuildFSub(ctx->b, f, o, ""), s, "");
}

// The |len| rows of block |kb| (rows k0 = kb * block ...) of panel |p| for
// the r rows of the tile at i0.
static void block_rows(wq_t* q, LLVMValueRef* acc, int r, LLVMValueRef i0, LLVMValueRef p,
                       LLVMValueRef kb, int64_t len) {
  mlcc_emit_ctx_t* ctx = q->ctx;
  const mlcc_wq_layout_t* l = &q->p->l;
  LLVMValueRef pi = iadd(ctx, imulc(ctx, kb, l->n_pad), imulc(ctx, p, kPanel));
  LLVMValueRef s = vload(q, q->vf, ctx->t_f32, q->sp, pi, 4);
  LLVMValueRef o;
  if (q->zp != NULL) {
    LLVMValueRef zb = vload(q, q->vb, ctx->t_i8, q->zp, pi, 1);
    o = LLVMBuildSIToFP(ctx->b, LLVMBuildZExt(ctx->b, zb, q->vi, ""), q->vf, "");
  } else {
    o = splat(q, LLVMConstReal(ctx->t_f32, (double)q->offset));
  }
  LLVMValueRef k0 = imulc(ctx, kb, l->block);
  // Byte row 0 of this block in the panel.
  LLVMValueRef row0 = iadd(ctx, imulc(ctx, p, l->panel_rows), imulc(ctx, kb, l->block_rows));
  int64_t steps = l->bits == 4 ? len / 2 : len;
  if (steps > 0) {
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, steps, "wj");
    LLVMValueRef bi = imulc(ctx, iadd(ctx, row0, lj.iv), kPanel);
    LLVMValueRef u = LLVMBuildZExt(ctx->b, vload(q, q->vb, ctx->t_i8, q->wp, bi, 1), q->vi, "");
    if (l->bits == 4) {
      LLVMValueRef kk = iadd(ctx, k0, imulc(ctx, lj.iv, 2));
      LLVMValueRef w0 = dequant(q, LLVMBuildAnd(ctx->b, u, vint(q, 15), ""), o, s);
      LLVMValueRef w1 = dequant(q, LLVMBuildLShr(ctx->b, u, vint(q, 4), ""), o, s);
      fma_rows(q, acc, r, i0, kk, w0);
      fma_rows(q, acc, r, i0, iaddc(ctx, kk, 1), w1);
    } else {
      fma_rows(q, acc, r, i0, iadd(ctx, k0, lj.iv), dequant(q, u, o, s));
    }
    mlcc_emit_loop_end(ctx, &lj);
  }
  if (l->bits == 4 && len % 2 != 0) {
    // The block's last row alone in the low nibble of its byte row.
    LLVMValueRef bi = imulc(ctx, iaddc(ctx, row0, len / 2), kPanel);
    LLVMValueRef u = LLVMBuildZExt(ctx->b, vload(q, q->vb, ctx->t_i8, q->wp, bi, 1), q->vi, "");
    LLVMValueRef w0 = dequant(q, LLVMBuildAnd(ctx->b, u, vint(q, 15), ""), o, s);
    fma_rows(q, acc, r, i0, iaddc(ctx, k0, len - 1), w0);
  }
}

// One tile: r rows from i0, panel p (a full panel when p < N / 16, else the
// padded last one, stored lane by lane).
static mlcc_status_t tile(wq_t* q, LLVMValueRef i0, int r, LLVMValueRef p) {
  mlcc_emit_ctx_t* ctx = q->ctx;
  const mlcc_wq_layout_t* l = &q->p->l;
  LLVMValueRef acc[kMaxTileRows];
  for (int x = 0; x < r; ++x) acc[x] = mlcc_emit_var(ctx, q->vf, LLVMConstNull(q->vf));
  int64_t full = l->k / l->block, tail = l->k % l->block;
  if (full > 0) {
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, full, "wkb");
    block_rows(q, acc, r, i0, p, lb.iv, l->block);
    mlcc_emit_loop_end(ctx, &lb);
  }
  if (tail > 0) block_rows(q, acc, r, i0, p, c64(ctx, full), tail);
  int64_t pfull = l->n / kPanel, rem = l->n % kPanel;
  mlcc_if_t br;
  if (rem != 0) {
    br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, p, c64(ctx, pfull), ""));
  }
  if (pfull > 0) {
    for (int x = 0; x < r; ++x) {
      LLVMValueRef idx = iadd(ctx, imulc(ctx, iaddc(ctx, i0, x), l->n), imulc(ctx, p, kPanel));
      LLVMValueRef v = LLVMBuildLoad2(ctx->b, q->vf, acc[x], "");
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output_vec(ctx, q->node, 0, idx, v));
    }
  }
  if (rem != 0) {
    mlcc_emit_if_else(ctx, &br);
    for (int x = 0; x < r; ++x) {
      LLVMValueRef base = iaddc(ctx, imulc(ctx, iaddc(ctx, i0, x), l->n), pfull * kPanel);
      LLVMValueRef v = LLVMBuildLoad2(ctx->b, q->vf, acc[x], "");
      for (int c = 0; c < rem; ++c) {
        LLVMValueRef lane = LLVMBuildExtractElement(ctx->b, v, LLVMConstInt(ctx->t_i32, (unsigned)c, 0), "");
        MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, q->node, 0, iaddc(ctx, base, c), lane));
      }
    }
    mlcc_emit_if_end(ctx, &br);
  }
  return mlcc_ok_status();
}

static mlcc_status_t emit_wq_matmul(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  wq_plan_t p;
  MLCC_RETURN_IF_ERROR(wq_make_plan(node, ctx->target, &p));
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  const mlcc_value_t* z = mlcc_node_input(node, 3);
  wq_t q = {.ctx = ctx, .node = node, .p = &p};
  q.ap = mlcc_emit_ptr(ctx, a);
  q.wp = mlcc_emit_ptr(ctx, mlcc_node_input(node, 1));
  q.sp = mlcc_emit_ptr(ctx, mlcc_node_input(node, 2));
  q.zp = z != NULL ? mlcc_emit_ptr(ctx, z) : NULL;
  if (q.ap == NULL || q.wp == NULL || q.sp == NULL || (z != NULL && q.zp == NULL)) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "WQMatMul operands are not kernel arguments");
  }
  const mlcc_attr_t* off = mlcc_node_attr(node, MLCC_WQ_OFFSET_ATTR);
  q.offset = off != NULL ? off->i : 0;
  q.vf = LLVMVectorType(ctx->t_f32, kPanel);
  q.vi = LLVMVectorType(ctx->t_i32, kPanel);
  q.vb = LLVMVectorType(ctx->t_i8, kPanel);
  if (p.units == 0) return mlcc_ok_status();
  LLVMValueRef zero = c64(ctx, 0), units = c64(ctx, p.units);
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : zero;
  LLVMValueRef re = ctx->range_end ? ctx->range_end : units;
  rb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, rb, units), zero);
  re = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, re, units), zero);
  // Unit u = tile t, panel pn (panels innermost: consecutive units share A's rows).
  mlcc_loop_t lu = mlcc_emit_loop_begin(ctx, rb, re, 1, "wu");
  LLVMValueRef t = LLVMBuildSDiv(ctx->b, lu.iv, c64(ctx, p.l.panels), "");
  LLVMValueRef pn = LLVMBuildSRem(ctx->b, lu.iv, c64(ctx, p.l.panels), "");
  int64_t mfull = p.rows / p.mt, mrem = p.rows % p.mt;
  LLVMValueRef i0 = imulc(ctx, t, p.mt);
  if (mrem == 0) {
    MLCC_RETURN_IF_ERROR(tile(&q, i0, p.mt, pn));
  } else if (mfull == 0) {
    MLCC_RETURN_IF_ERROR(tile(&q, zero, (int)mrem, pn));
  } else {
    mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, t, c64(ctx, mfull), ""));
    MLCC_RETURN_IF_ERROR(tile(&q, i0, p.mt, pn));
    mlcc_emit_if_else(ctx, &br);
    MLCC_RETURN_IF_ERROR(tile(&q, c64(ctx, mfull * p.mt), (int)mrem, pn));
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_loop_end(ctx, &lu);
  return mlcc_ok_status();
}

static int64_t wq_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target) {
  wq_plan_t p;
  mlcc_status_t s = wq_make_plan(node, target, &p);
  if (s != NULL) {
    mlcc_status_free(s);
    return 0;
  }
  return p.parallel ? p.units : 0;
}

// FLOPs (kernels.h): 2*K per output element.
static int64_t wq_flops(const mlcc_node_t* n) {
  const mlcc_value_t* a = mlcc_node_input(n, 0);
  if (a == NULL || !a->shape_known || a->shape.rank < 1) return -1;
  return 2 * mlcc_kernels_numel(mlcc_node_output(n, 0)) * a->shape.dims[a->shape.rank - 1];
}

const mlcc_emitter_t mlcc_emit_wq_matmul = {
    .emit = emit_wq_matmul,
    .parallel_units = wq_parallel_units,
    .flops = wq_flops,
};

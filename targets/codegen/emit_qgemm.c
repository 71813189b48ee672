// SPDX-License-Identifier: Apache-2.0
// Integer micro-kernels of QLinearConv / ConvInteger: packed int16 tiles,
// exact int32 dot products, float requantization (emit_qgemm.h describes the
// form and the numerics).
#include "targets/codegen/emit_qgemm.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/quant.h"
#include "ir/ops/spatial.h"
#include "targets/codegen/emit_index.h"

// Tile geometry. Kept independent of the target so the stack bound
// (mlcc_qgemm_conv_stack_bytes) is one number for every target.
enum {
  KPAD = 32,           // K is padded to a multiple of this many int16 lanes
  TILE_BUDGET = 32768, // bytes of packed int16 rows per tile (about L1)
  TILE_MAX_BYTES = 98304,
  PT_STEP = 6,         // pixels per tile: a multiple of every NR below
  PT_MAX = 96,
  MR = 4,              // output channels per register block
};

typedef struct qconv_geom_t {
  int64_t batch, c, h, w, m, group, cg, mg, kh, kw, sh, sw, dh, dw, ph, pw, oh, ow;
  int64_t k, kp, p, pt;
} qconv_geom_t;

static bool is_q8(mlcc_dtype_t d) { return d == MLCC_DTYPE_U8 || d == MLCC_DTYPE_I8; }

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static int64_t numel_or(const mlcc_value_t* v, int64_t dflt) {
  return v == NULL ? dflt : mlcc_shape_numel_unchecked(&v->shape);
}

// Fills |g| and returns true when the fast path takes |node|.
static bool plan(const mlcc_node_t* node, qconv_geom_t* q) {
  memset(q, 0, sizeof(*q));
  if (node->op != MLCC_OP_QLINEAR_CONV && node->op != MLCC_OP_CONV_INTEGER) return false;
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, qlinear ? 3 : 1);
  const mlcc_value_t* xz = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (x == NULL || w == NULL || y == NULL || !x->shape_known || !w->shape_known ||
      !y->shape_known) {
    return false;
  }
  if (!is_q8(x->dtype) || !is_q8(w->dtype)) return false;
  if (qlinear ? !is_q8(y->dtype) : y->dtype != MLCC_DTYPE_I32) return false;
  if (numel_or(xz, 1) != 1) return false;  // per-tensor x zero point only
  if (qlinear && numel_or(mlcc_node_input(node, 1), 1) != 1) return false;
  mlcc_spatial_t g;
  mlcc_status_t st = mlcc_quant_conv_resolve(node, &g);
  if (st != NULL) {
    mlcc_status_free(st);
    return false;
  }
  if (g.n_spatial < 1 || g.n_spatial > 2 || x->shape.rank != g.n_spatial + 2) return false;
  bool two = g.n_spatial == 2;
  q->batch = x->shape.dims[0];
  q->c = x->shape.dims[1];
  q->h = two ? g.in[0] : 1;
  q->w = g.in[two ? 1 : 0];
  q->m = g.out_channels;
  q->group = g.group;
  if (q->group <= 0 || q->c % q->group != 0 || q->m % q->group != 0) return false;
  q->cg = q->c / q->group;
  q->mg = q->m / q->group;
  q->kh = two ? g.kernel[0] : 1;
  q->kw = g.kernel[two ? 1 : 0];
  q->sh = two ? g.strides[0] : 1;
  q->sw = g.strides[two ? 1 : 0];
  q->dh = two ? g.dilations[0] : 1;
  q->dw = g.dilations[two ? 1 : 0];
  q->ph = two ? g.pad_begin[0] : 0;
  q->pw = g.pad_begin[two ? 1 : 0];
  q->oh = two ? g.out[0] : 1;
  q->ow = g.out[two ? 1 : 0];
  if (w->shape.dims[1] != q->cg) return false;
  q->k = q->cg * q->kh * q->kw;
  q->p = q->oh * q->ow;
  if (q->k <= 0 || q->p <= 0 || q->mg <= 0 || q->batch <= 0) return false;
  // Depthwise convolutions (one input channel per group) keep the
  // reference loop nest: a dot product over a 3x3 window is mostly tail.
  if (q->cg == 1 && q->group > 1) return false;
  q->kp = round_up(q->k, KPAD);
  int64_t pt = TILE_BUDGET / (2 * q->kp) / PT_STEP * PT_STEP;
  if (pt < PT_STEP) pt = PT_STEP;
  if (pt > PT_MAX) pt = PT_MAX;
  if (pt > round_up(q->p, PT_STEP)) pt = round_up(q->p, PT_STEP);
  q->pt = pt;
  if (2 * q->kp * q->pt > TILE_MAX_BYTES) return false;
  return true;
}

int64_t mlcc_qgemm_conv_stack_bytes(const mlcc_node_t* node) {
  qconv_geom_t q;
  if (node == NULL || !plan(node, &q)) return 0;
  // int16 tile + int32 per-pixel sums + the alloca'd accumulators' slack.
  return 2 * q.kp * q.pt + 4 * q.pt + 64;
}

// An |n|-element array of |t| on the stack, allocated in the entry block.
static LLVMValueRef entry_array(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, int64_t n) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(ctx->b);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(ctx->entry_bb);
  if (term != NULL) {
    LLVMPositionBuilderBefore(ctx->b, term);
  } else {
    LLVMPositionBuilderAtEnd(ctx->b, ctx->entry_bb);
  }
  LLVMValueRef a = LLVMBuildAlloca(ctx->b, LLVMArrayType(t, (unsigned)n), "qtile");
  LLVMSetAlignment(a, 64);
  LLVMPositionBuilderAtEnd(ctx->b, cur);
  return a;
}

static LLVMValueRef gep(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef base,
                        LLVMValueRef idx) {
  return LLVMBuildGEP2(ctx->b, t, base, &idx, 1, "");
}

// A vector load of |lanes| elements of |t| at element |idx| of |base|.
static LLVMValueRef vload(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, unsigned lanes,
                          LLVMValueRef base, LLVMValueRef idx, unsigned align) {
  LLVMTypeRef vt = LLVMVectorType(t, lanes);
  LLVMValueRef l = LLVMBuildLoad2(ctx->b, vt, gep(ctx, t, base, idx), "");
  LLVMSetAlignment(l, align);
  return l;
}

static LLVMValueRef ext(mlcc_emit_ctx_t* ctx, LLVMValueRef v, bool is_unsigned,
                        LLVMTypeRef to) {
  return is_unsigned ? LLVMBuildZExt(ctx->b, v, to, "") : LLVMBuildSExt(ctx->b, v, to, "");
}

// True if the x86 |target| has |feat| ("avx2", "avx512bw"): an explicit
// "+feat"/"-feat" in its features wins (the last mention; -mcpu=native lists
// every host feature), else its CPU's family does. Unknown CPUs say no, so
// the kernel falls back to SSE2, which every x86-64 CPU has.
static bool x86_has(const mlcc_target_t* t, const char* feat) {
  bool on = false, seen = false;
  size_t n = strlen(feat);
  for (const char* p = t->features; p != NULL && *p;) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n + 1 && strncmp(p + 1, feat, n) == 0) {
      on = p[0] == '+';
      seen = true;
    }
    p = comma ? comma + 1 : NULL;
  }
  if (seen) return on;
  static const char* const bw[] = {
      "skylake-avx512", "cascadelake",   "cooperlake", "cannonlake",  "icelake-client",
      "icelake-server", "tigerlake",     "sapphirerapids", "rocketlake", "znver4",
      "x86-64-v4",      "graniterapids", "emeraldrapids"};
  static const char* const avx2[] = {
      "x86-64-v3", "haswell",   "broadwell", "skylake",  "alderlake", "raptorlake",
      "meteorlake", "gracemont", "znver1",   "znver2",   "znver3",    "bdver4",
      "core-avx2", "arrowlake", "lunarlake", "sierraforest", "grandridge"};
  for (size_t i = 0; i < sizeof(bw) / sizeof(bw[0]); ++i) {
    if (strcmp(t->cpu, bw[i]) == 0) return true;
  }
  if (strcmp(feat, "avx2") != 0) return false;
  for (size_t i = 0; i < sizeof(avx2) / sizeof(avx2[0]); ++i) {
    if (strcmp(t->cpu, avx2[i]) == 0) return true;
  }
  return false;
}

// acc + a*b for int16 vectors |a|, |b| of |lanes| lanes. x86: |acc| has
// lanes/2 lanes and the products are added in adjacent pairs by pmaddwd
// (exact: |a|, |b| < 2^9 in magnitude, so no pair reaches 2^31; the
// intrinsic because LLVM's reassociation of the accumulation hides the
// generic pattern from instruction selection). Elsewhere |acc| has |lanes|
// lanes: the widening multiply-accumulate (smlal, vwmacc) LLVM selects from
// sext-mul-add.
static LLVMValueRef madd(mlcc_emit_ctx_t* ctx, bool pairwise, unsigned lanes,
                         LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b) {
  if (pairwise) {
    const char* name = lanes == 32   ? "llvm.x86.avx512.pmaddw.d.512"
                       : lanes == 16 ? "llvm.x86.avx2.pmadd.wd"
                                     : "llvm.x86.sse2.pmadd.wd";
    LLVMValueRef args[2] = {a, b};
    return LLVMBuildAdd(ctx->b, acc, mlcc_emit_intrinsic(ctx, name, args, 2), "");
  }
  LLVMTypeRef wide = LLVMVectorType(ctx->t_i32, lanes);
  LLVMValueRef p = LLVMBuildMul(ctx->b, LLVMBuildSExt(ctx->b, a, wide, ""),
                                LLVMBuildSExt(ctx->b, b, wide, ""), "");
  return LLVMBuildAdd(ctx->b, acc, p, "");
}

static LLVMValueRef hsum(mlcc_emit_ctx_t* ctx, LLVMValueRef v) {
  return mlcc_emit_intrinsic(ctx, "llvm.vector.reduce.add", &v, 1);
}

// Element |idx| of integer |v| widened to i32, or 0 when |v| is NULL.
static LLVMValueRef ld_i32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx) {
  if (v == NULL) return LLVMConstInt(ctx->t_i32, 0, 0);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, idx), v->dtype, MLCC_DTYPE_I32);
}

static LLVMValueRef ld_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx,
                           float dflt) {
  if (v == NULL) return mlcc_emit_f32(ctx, dflt);
  return mlcc_emit_load(ctx, v, idx);
}

static LLVMValueRef zp_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v) {
  if (v == NULL) return mlcc_emit_f32(ctx, 0.f);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, c64(ctx, 0)), v->dtype, MLCC_DTYPE_F32);
}

// saturate(round_half_even(|v| / |ys|) + |yzf|) in float, clamped to [lo, hi].
static LLVMValueRef quantize_bound(mlcc_emit_ctx_t* ctx, float v, LLVMValueRef ys,
                                   LLVMValueRef yzf, float lo, float hi) {
  LLVMValueRef f = LLVMBuildFDiv(ctx->b, mlcc_emit_f32(ctx, v), ys, "");
  f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
  f = LLVMBuildFAdd(ctx->b, f, yzf, "");
  f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, mlcc_emit_f32(ctx, lo));
  return mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, mlcc_emit_f32(ctx, hi));
}

void mlcc_qgemm_act_bounds(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node, mlcc_dtype_t qdt,
                           LLVMValueRef ys, LLVMValueRef yzf, LLVMValueRef* out_lo,
                           LLVMValueRef* out_hi) {
  float lo = qdt == MLCC_DTYPE_I8 ? -128.f : 0.f;
  float hi = qdt == MLCC_DTYPE_I8 ? 127.f : 255.f;
  *out_lo = mlcc_emit_f32(ctx, lo);
  *out_hi = mlcc_emit_f32(ctx, hi);
  const mlcc_attr_t* a = mlcc_node_attr(node, MLCC_QACT_ATTR);
  if (a == NULL || a->kind != MLCC_ATTR_INT || a->i == 0) return;
  float alo = 0.f, ahi = INFINITY;
  if (a->i == 2) {
    const mlcc_attr_t* l = mlcc_node_attr(node, MLCC_QACT_LO_ATTR);
    const mlcc_attr_t* h = mlcc_node_attr(node, MLCC_QACT_HI_ATTR);
    alo = l != NULL && l->kind == MLCC_ATTR_FLOAT ? l->f : -INFINITY;
    ahi = h != NULL && h->kind == MLCC_ATTR_FLOAT ? h->f : INFINITY;
  }
  if (alo > -INFINITY) *out_lo = quantize_bound(ctx, alo, ys, yzf, lo, hi);
  if (ahi < INFINITY) *out_hi = quantize_bound(ctx, ahi, ys, yzf, lo, hi);
}

mlcc_status_t mlcc_emit_qgemm_conv(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                   bool* out_done) {
  *out_done = false;
  qconv_geom_t q;
  if (!plan(node, &q)) return mlcc_ok_status();
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, qlinear ? 3 : 1);
  const mlcc_value_t* xz = mlcc_node_input(node, 2);
  const mlcc_value_t* wz = mlcc_node_input(node, qlinear ? 5 : 3);
  const mlcc_value_t* xs = qlinear ? mlcc_node_input(node, 1) : NULL;
  const mlcc_value_t* ws = qlinear ? mlcc_node_input(node, 4) : NULL;
  const mlcc_value_t* ys = qlinear ? mlcc_node_input(node, 6) : NULL;
  const mlcc_value_t* yz = qlinear ? mlcc_node_input(node, 7) : NULL;
  const mlcc_value_t* bias = qlinear ? mlcc_node_input(node, 8) : NULL;
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  LLVMValueRef xp = mlcc_emit_ptr(ctx, x), wp = mlcc_emit_ptr(ctx, w);
  if (xp == NULL || wp == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: data or weights are not kernel arguments",
                            mlcc_op_name(node->op));
  }
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i16 = ctx->t_i16, i32 = ctx->t_i32, i8 = ctx->t_i8;
  bool x_u8 = x->dtype == MLCC_DTYPE_U8, w_u8 = w->dtype == MLCC_DTYPE_U8;
  bool pairwise = ctx->target != NULL && ctx->target->arch == MLCC_ARCH_X86_64;
  int64_t vb = ctx->target != NULL && ctx->target->vector_bytes > 0 ? ctx->target->vector_bytes
                                                                     : 16;
  unsigned lanes = (unsigned)(vb / 2);  // int16 lanes per block
  if (lanes < 8) lanes = 8;
  if (lanes > 32) lanes = 32;
  if (pairwise) {
    // The widest pmaddwd the CPU has.
    if (lanes == 32 && !x86_has(ctx->target, "avx512bw")) lanes = 16;
    if (lanes == 16 && !x86_has(ctx->target, "avx2")) lanes = 8;
  }
  unsigned acc_lanes = pairwise ? lanes / 2 : lanes;
  int nr = pairwise ? 3 : 2;
  LLVMTypeRef acc_t = LLVMVectorType(i32, acc_lanes);
  LLVMTypeRef v16 = LLVMVectorType(i16, lanes);
  int64_t kfull = q.k / lanes * lanes;
  bool w_per_channel = numel_or(wz, 1) != 1;
  bool ws_per_channel = numel_or(ws, 1) != 1;

  LLVMValueRef tile = entry_array(ctx, i16, q.kp * q.pt);
  LLVMValueRef tsum = entry_array(ctx, i32, q.pt);
  LLVMValueRef zero32 = LLVMConstInt(i32, 0, 0);
  LLVMValueRef xzv = ld_i32(ctx, xz, c64(ctx, 0));
  LLVMValueRef xsv = NULL, ysv = NULL, yzf = NULL, qlo = NULL, qhi = NULL;
  if (qlinear) {
    xsv = ld_f32(ctx, xs, c64(ctx, 0), 1.f);
    ysv = ld_f32(ctx, ys, c64(ctx, 0), 1.f);
    yzf = zp_f32(ctx, yz);
    mlcc_qgemm_act_bounds(ctx, node, y->dtype, ysv, yzf, &qlo, &qhi);
  }
  LLVMValueRef acc[MR][3];
  LLVMValueRef tacc[MR][3];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < nr; ++j) {
      acc[i][j] = mlcc_emit_var(ctx, acc_t, NULL);
      tacc[i][j] = mlcc_emit_var(ctx, i32, NULL);
    }
  }

  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, q.batch, "qgn");
  mlcc_loop_t lg = mlcc_emit_for(ctx, 0, q.group, "qgg");
  LLVMValueRef x_img = imulc(ctx, imad(ctx, ln.iv, q.c, imulc(ctx, lg.iv, q.cg)), q.h * q.w);
  mlcc_loop_t lp = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.p), q.pt, "qgp");

  //--- Pack the tile: row t holds x(pixel p0 + t) - x_zero_point, K-major.
  mlcc_loop_t lt = mlcc_emit_for(ctx, 0, q.pt, "qgt");
  LLVMValueRef pix = iadd(ctx, lp.iv, lt.iv);
  LLVMValueRef pix_ok = LLVMBuildICmp(b, LLVMIntSLT, pix, c64(ctx, q.p), "");
  LLVMValueRef pixc = LLVMBuildSelect(b, pix_ok, pix, c64(ctx, 0), "");
  LLVMValueRef oh = LLVMBuildUDiv(b, pixc, c64(ctx, q.ow), "");
  LLVMValueRef ow = LLVMBuildURem(b, pixc, c64(ctx, q.ow), "");
  LLVMValueRef row = imulc(ctx, lt.iv, q.kp);
  LLVMValueRef sum = mlcc_emit_var(ctx, i32, zero32);
  mlcc_loop_t lc = mlcc_emit_for(ctx, 0, q.cg, "qgc");
  mlcc_loop_t lkh = mlcc_emit_for(ctx, 0, q.kh, "qgkh");
  LLVMValueRef ih = iadd(ctx, imulc(ctx, oh, q.sh), iaddc(ctx, imulc(ctx, lkh.iv, q.dh), -q.ph));
  LLVMValueRef ih_ok = LLVMBuildAnd(b, pix_ok, LLVMBuildICmp(b, LLVMIntULT, ih, c64(ctx, q.h), ""),
                                    "");
  LLVMValueRef ihc = LLVMBuildSelect(b, ih_ok, ih, c64(ctx, 0), "");
  LLVMValueRef x_row = iadd(ctx, x_img, imulc(ctx, imad(ctx, lc.iv, q.h, ihc), q.w));
  LLVMValueRef k_row = imulc(ctx, imad(ctx, lc.iv, q.kh, lkh.iv), q.kw);
  mlcc_loop_t lkw = mlcc_emit_for(ctx, 0, q.kw, "qgkw");
  LLVMValueRef iw = iadd(ctx, imulc(ctx, ow, q.sw), iaddc(ctx, imulc(ctx, lkw.iv, q.dw), -q.pw));
  LLVMValueRef ok = LLVMBuildAnd(b, ih_ok, LLVMBuildICmp(b, LLVMIntULT, iw, c64(ctx, q.w), ""), "");
  LLVMValueRef iwc = LLVMBuildSelect(b, ok, iw, c64(ctx, 0), "");
  LLVMValueRef xv = LLVMBuildSub(b, ld_i32(ctx, x, iadd(ctx, x_row, iwc)), xzv, "");
  xv = LLVMBuildSelect(b, ok, xv, zero32, "");
  LLVMValueRef st = LLVMBuildStore(
      b, LLVMBuildTrunc(b, xv, i16, ""), gep(ctx, i16, tile, iadd(ctx, row, iadd(ctx, k_row, lkw.iv))));
  LLVMSetAlignment(st, 2);
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, sum, ""), xv, ""), sum);
  mlcc_emit_loop_end(ctx, &lkw);
  mlcc_emit_loop_end(ctx, &lkh);
  mlcc_emit_loop_end(ctx, &lc);
  if (q.kp > q.k) {
    mlcc_loop_t lz = mlcc_emit_for(ctx, q.k, q.kp, "qgz");
    LLVMBuildStore(b, LLVMConstInt(i16, 0, 0), gep(ctx, i16, tile, iadd(ctx, row, lz.iv)));
    mlcc_emit_loop_end(ctx, &lz);
  }
  LLVMBuildStore(b, LLVMBuildLoad2(b, i32, sum, ""), gep(ctx, i32, tsum, lt.iv));
  mlcc_emit_loop_end(ctx, &lt);

  //--- Compute: MR output channels x NR pixels per register block.
  LLVMValueRef left = LLVMBuildSub(b, c64(ctx, q.p), lp.iv, "");
  LLVMValueRef t_end = mlcc_emit_min(ctx, MLCC_DTYPE_I64, left, c64(ctx, q.pt));
  mlcc_loop_t lm = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.mg), MR, "qgm");
  LLVMValueRef mrow[MR], mvalid[MR];
  for (int i = 0; i < MR; ++i) {
    LLVMValueRef mi = iaddc(ctx, lm.iv, i);
    mvalid[i] = LLVMBuildICmp(b, LLVMIntSLT, mi, c64(ctx, q.mg), "");
    mi = LLVMBuildSelect(b, mvalid[i], mi, c64(ctx, q.mg - 1), "");
    mrow[i] = iadd(ctx, imulc(ctx, lg.iv, q.mg), mi);  // output channel
  }
  mlcc_loop_t lj = mlcc_emit_loop_begin(ctx, c64(ctx, 0), t_end, nr, "qgj");
  LLVMValueRef acc_zero = LLVMConstNull(acc_t);
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < nr; ++j) {
      LLVMBuildStore(b, acc_zero, acc[i][j]);
      LLVMBuildStore(b, zero32, tacc[i][j]);
    }
  }
  LLVMValueRef trow[3];
  for (int j = 0; j < nr; ++j) trow[j] = imulc(ctx, iaddc(ctx, lj.iv, j), q.kp);
  LLVMValueRef wrow[MR];
  for (int i = 0; i < MR; ++i) wrow[i] = imulc(ctx, mrow[i], q.k);
  if (kfull > 0) {
    mlcc_loop_t lk = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, kfull), lanes, "qgk");
    LLVMValueRef xvv[3], wv[MR];
    for (int j = 0; j < nr; ++j) xvv[j] = vload(ctx, i16, lanes, tile, iadd(ctx, trow[j], lk.iv), 2);
    for (int i = 0; i < MR; ++i) {
      wv[i] = ext(ctx, vload(ctx, i8, lanes, wp, iadd(ctx, wrow[i], lk.iv), 1), w_u8, v16);
    }
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < nr; ++j) {
        LLVMValueRef a = LLVMBuildLoad2(b, acc_t, acc[i][j], "");
        LLVMBuildStore(b, madd(ctx, pairwise, lanes, a, xvv[j], wv[i]), acc[i][j]);
      }
    }
    mlcc_emit_loop_end(ctx, &lk);
  }
  if (kfull < q.k) {
    mlcc_loop_t lk = mlcc_emit_for(ctx, kfull, q.k, "qgkt");
    LLVMValueRef xs1[3];
    for (int j = 0; j < nr; ++j) {
      LLVMValueRef l = LLVMBuildLoad2(b, i16, gep(ctx, i16, tile, iadd(ctx, trow[j], lk.iv)), "");
      xs1[j] = LLVMBuildSExt(b, l, i32, "");
    }
    for (int i = 0; i < MR; ++i) {
      LLVMValueRef wl = LLVMBuildLoad2(b, i8, gep(ctx, i8, wp, iadd(ctx, wrow[i], lk.iv)), "");
      LLVMValueRef wi = ext(ctx, wl, w_u8, i32);
      for (int j = 0; j < nr; ++j) {
        LLVMValueRef t = LLVMBuildLoad2(b, i32, tacc[i][j], "");
        LLVMBuildStore(b, LLVMBuildAdd(b, t, LLVMBuildMul(b, xs1[j], wi, ""), ""), tacc[i][j]);
      }
    }
    mlcc_emit_loop_end(ctx, &lk);
  }
  (void)x_u8;
  //--- Epilogue: zero-point correction, bias, requantization, store.
  mlcc_status_t status = mlcc_ok_status();
  for (int i = 0; i < MR && status == NULL; ++i) {
    LLVMValueRef m = mrow[i];
    LLVMValueRef wzm = ld_i32(ctx, wz, w_per_channel ? m : c64(ctx, 0));
    LLVMValueRef bm = bias != NULL ? ld_i32(ctx, bias, m) : zero32;
    LLVMValueRef mult = NULL;
    if (qlinear) {
      LLVMValueRef wsm = ld_f32(ctx, ws, ws_per_channel ? m : c64(ctx, 0), 1.f);
      mult = LLVMBuildFDiv(b, LLVMBuildFMul(b, xsv, wsm, ""), ysv, "mult");
    }
    for (int j = 0; j < nr && status == NULL; ++j) {
      LLVMValueRef t = iaddc(ctx, lj.iv, j);
      LLVMValueRef ok2 = LLVMBuildAnd(b, mvalid[i], LLVMBuildICmp(b, LLVMIntSLT, t, t_end, ""), "");
      mlcc_if_t br = mlcc_emit_if_begin(ctx, ok2);
      LLVMValueRef r = LLVMBuildAdd(b, hsum(ctx, LLVMBuildLoad2(b, acc_t, acc[i][j], "")),
                                    LLVMBuildLoad2(b, i32, tacc[i][j], ""), "");
      LLVMValueRef s = LLVMBuildLoad2(b, i32, gep(ctx, i32, tsum, t), "");
      r = LLVMBuildSub(b, r, LLVMBuildMul(b, wzm, s, ""), "");
      r = LLVMBuildAdd(b, r, bm, "");
      if (qlinear) {
        LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, r, ctx->t_f32, ""), mult, "");
        f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
        f = LLVMBuildFAdd(b, f, yzf, "");
        f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, qlo);
        f = mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, qhi);
        // f is integral and in [-128, 255]: through i32 then truncate (an
        // f32 -> i8 conversion vectorizes to RVV's narrowing vfncvt at
        // fractional LMUL, which qemu 7.2's translator asserts on).
        r = LLVMBuildTrunc(b, LLVMBuildFPToSI(b, f, i32, ""), i8, "");
      }
      LLVMValueRef yi = imad(ctx, imad(ctx, ln.iv, q.m, m), q.p, iadd(ctx, lp.iv, t));
      status = mlcc_emit_store_output(ctx, node, 0, yi, r);
      mlcc_emit_if_end(ctx, &br);
    }
  }
  mlcc_emit_loop_end(ctx, &lj);
  mlcc_emit_loop_end(ctx, &lm);
  mlcc_emit_loop_end(ctx, &lp);
  mlcc_emit_loop_end(ctx, &lg);
  mlcc_emit_loop_end(ctx, &ln);
  return status;
}

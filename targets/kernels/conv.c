// SPDX-License-Identifier: Apache-2.0
// Kernel emitters for Conv and ConvTranspose (1-D, 2-D and 3-D spatial).
//
// Conv is a direct convolution specialized on the constant shapes. Per output
// row (n, oc-tile, od, oh) the width is split at compile time into borders
// (bounds-checked scalar code) and an interior where every kernel tap is in
// range; the interior is computed in register tiles of OCT output channels x
// T output columns whose accumulators are mlcc_emit_var()s that SROA turns
// into registers and the SLP vectorizer packs into vectors. Every output
// element is stored once, through mlcc_emit_store_output (fused epilogues).
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
#include "targets/kernels/conv.h"
#include "targets/kernels/conv_winograd.h"
#include "targets/kernels/kernels.h"
#include "targets/kernels/pack.h"

//===----------------------------------------------------------------------===//
// Small IR helpers
//===----------------------------------------------------------------------===//

// 0 <= v < hi as i1.
static LLVMValueRef in_range(mlcc_emit_ctx_t* ctx, LLVMValueRef v, int64_t hi) {
  LLVMValueRef ge = LLVMBuildICmp(ctx->b, LLVMIntSGE, v, c64(ctx, 0), "");
  LLVMValueRef lt = LLVMBuildICmp(ctx->b, LLVMIntSLT, v, c64(ctx, hi), "");
  return LLVMBuildAnd(ctx->b, ge, lt, "");
}

//===----------------------------------------------------------------------===//
// Geometry
//===----------------------------------------------------------------------===//

// Spatial parameters padded to 3 dims (D, H, W): a 2-D conv has D = 1 with
// kernel 1, stride 1, dilation 1, pad 0; a 1-D conv also has H = 1.
typedef struct conv_geom_t {
  int nsp;                    // spatial rank 1..3
  int64_t n, c, m, group;     // batch, input channels, output channels, groups
  int64_t cg, mg;             // channels per group (input, output)
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3];
} conv_geom_t;

// Fills |g| for a Conv or ConvTranspose |node| from its window
// (mlcc_spatial_resolve, ir/ops/spatial.h: the rules shape inference
// applied) and its inferred output Y, which must agree with the window.
// INVALID_MODEL/UNIMPLEMENTED on bad input.
static mlcc_status_t conv_geom(const mlcc_node_t* node, conv_geom_t* g) {
  memset(g, 0, sizeof(*g));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const char* op = mlcc_op_name(node->op);
  if (!x || !w || !y) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs inputs X, W and output Y", op);
  }
  int rank = x->shape.rank;
  int nsp = rank - 2;
  if (nsp < 1 || nsp > 3 || w->shape.rank != rank || y->shape.rank != rank) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s supports 1 to 3 spatial dims with X, W, Y of equal rank; got "
                            "ranks X %d, W %d, Y %d",
                            op, rank, (int)w->shape.rank, (int)y->shape.rank);
  }
  mlcc_spatial_t sp;
  MLCC_RETURN_IF_ERROR(mlcc_spatial_resolve(node, &sp));
  g->nsp = nsp;
  g->n = x->shape.dims[0];
  g->c = x->shape.dims[1];
  g->m = y->shape.dims[1];
  g->group = sp.group;
  bool same = g->m == sp.out_channels;
  for (int i = 0; i < nsp; ++i) same = same && y->shape.dims[2 + i] == sp.out[i];
  if (!same) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s: output Y's channel or spatial dims disagree with the window "
                            "(%lld output channels)",
                            op, (long long)sp.out_channels);
  }
  g->cg = g->c / g->group;
  g->mg = g->m / g->group;
  mlcc_spatial_to3(&sp, g->in, g->out, g->k, g->s, g->d, g->pb, NULL);
  return mlcc_ok_status();
}

static mlcc_status_t check_float(const mlcc_node_t* node, mlcc_dtype_t dt) {
  if (dt != MLCC_DTYPE_F32 && dt != MLCC_DTYPE_F64) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s supports float32/float64; got %s",
                            mlcc_op_name(node->op), mlcc_dtype_name(dt));
  }
  return mlcc_ok_status();
}

// Block size of pre-packed weights (attribute MLCC_CONV_PACKED_ATTR), 0 if W
// is in its ONNX layout.
static int64_t conv_packed_mr(const mlcc_node_t* node) {
  const mlcc_attr_t* a = mlcc_node_attr(node, MLCC_CONV_PACKED_ATTR);
  if (a == NULL || a->kind != MLCC_ATTR_INT || a->i <= 0) return 0;
  return a->i;
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

enum { kMaxOct = 4, kMaxT = 16 };

// Parallel units a vector conv aims for when its natural units (pixel tiles,
// channel blocks) are few: enough for the entry's tasks (up to 8) to balance
// over a few threads.
enum { kConvTargetUnits = 16 };

typedef struct conv_emit_t {
  mlcc_emit_ctx_t* ctx;
  const mlcc_node_t* node;
  const conv_geom_t* g;
  const mlcc_value_t *x, *w, *bias;
  mlcc_dtype_t dt;
  LLVMTypeRef ft;
  int oct;              // output channels per tile
  int64_t pack_mr;      // > 0: W is pre-packed (see mlcc_conv_pack_weights)
  bool check_d, check_h;  // rows of the kernel may fall outside the input
  // Per-row loop state.
  LLVMValueRef n, grp, oc0, od, oh;
} conv_emit_t;

// Linear index into W of output channel |oc| (absolute) and |klin|, the
// index of (ic, kd, kh, kw) within one output channel's cg*K weights. Plain
// ONNX layout: oc*cg*K + klin; pre-packed (pack_mr = mr): blocks of mr
// channels per group, each [cg*K][bs] with bs = min(mr, mg - block start).
static LLVMValueRef w_index(conv_emit_t* e, LLVMValueRef oc, LLVMValueRef klin) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  int64_t per_oc = g->cg * g->k[0] * g->k[1] * g->k[2];
  if (e->pack_mr <= 0) return iadd(ctx, imulc(ctx, oc, per_oc), klin);
  int64_t mr = e->pack_mr;
  LLVMValueRef grp = LLVMBuildSDiv(ctx->b, oc, c64(ctx, g->mg), "");
  LLVMValueRef ocg = LLVMBuildSub(ctx->b, oc, imulc(ctx, grp, g->mg), "");
  LLVMValueRef blk = LLVMBuildSDiv(ctx->b, ocg, c64(ctx, mr), "");
  LLVMValueRef r = LLVMBuildSub(ctx->b, ocg, imulc(ctx, blk, mr), "");
  LLVMValueRef start = iadd(ctx, imulc(ctx, grp, g->mg), imulc(ctx, blk, mr));
  LLVMValueRef left = LLVMBuildSub(ctx->b, c64(ctx, g->mg), imulc(ctx, blk, mr), "");
  LLVMValueRef bs = mlcc_emit_min(ctx, MLCC_DTYPE_I64, left, c64(ctx, mr));
  LLVMValueRef idx = imulc(ctx, start, per_oc);
  idx = iadd(ctx, idx, LLVMBuildNSWMul(ctx->b, klin, bs, ""));
  return iadd(ctx, idx, r);
}

static LLVMValueRef bias_init(conv_emit_t* e, LLVMValueRef oc) {
  if (!e->bias) return mlcc_emit_const(e->ctx, e->dt, 0.0);
  return mlcc_emit_load(e->ctx, e->bias, oc);
}

// Opens the ic / kd / kh loops (with row bounds checks where needed) and
// returns the index of X[n, g*cg+ic, id, ih, 0] and W[oc0, ic, kd, kh, 0] / (oc
// stride applied by the caller). |loops|/|ifs| are closed by close_rows.
typedef struct rows_t {
  mlcc_loop_t l_ic, l_kd, l_kh;
  mlcc_if_t if_d, if_h;
  bool has_if_d, has_if_h;
  LLVMValueRef x_row;   // linear index of X[n, ic_abs, id, ih, 0]
  LLVMValueRef w_row;   // linear index of W[0, ic, kd, kh, 0] (add oc*cg*K)
} rows_t;

static void open_rows(conv_emit_t* e, rows_t* r) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  memset(r, 0, sizeof(*r));
  r->l_ic = mlcc_emit_for(ctx, 0, g->cg, "ic");
  LLVMValueRef ic_abs = imad(ctx, e->grp, g->cg, r->l_ic.iv);
  r->l_kd = mlcc_emit_for(ctx, 0, g->k[0], "kd");
  LLVMValueRef id = iadd(ctx, iaddc(ctx, imulc(ctx, e->od, g->s[0]), -g->pb[0]),
                         imulc(ctx, r->l_kd.iv, g->d[0]));
  if (e->check_d) {
    r->if_d = mlcc_emit_if_begin(ctx, in_range(ctx, id, g->in[0]));
    r->has_if_d = true;
  }
  r->l_kh = mlcc_emit_for(ctx, 0, g->k[1], "kh");
  LLVMValueRef ih = iadd(ctx, iaddc(ctx, imulc(ctx, e->oh, g->s[1]), -g->pb[1]),
                         imulc(ctx, r->l_kh.iv, g->d[1]));
  if (e->check_h) {
    r->if_h = mlcc_emit_if_begin(ctx, in_range(ctx, ih, g->in[1]));
    r->has_if_h = true;
  }
  LLVMValueRef xr = imad(ctx, e->n, g->c, ic_abs);
  xr = imad(ctx, xr, g->in[0], id);
  xr = imad(ctx, xr, g->in[1], ih);
  r->x_row = imulc(ctx, xr, g->in[2]);
  LLVMValueRef wr = imad(ctx, r->l_ic.iv, g->k[0], r->l_kd.iv);
  wr = imad(ctx, wr, g->k[1], r->l_kh.iv);
  r->w_row = imulc(ctx, wr, g->k[2]);
}

static void close_rows(conv_emit_t* e, rows_t* r) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  if (r->has_if_h) mlcc_emit_if_end(ctx, &r->if_h);
  mlcc_emit_loop_end(ctx, &r->l_kh);
  if (r->has_if_d) mlcc_emit_if_end(ctx, &r->if_d);
  mlcc_emit_loop_end(ctx, &r->l_kd);
  mlcc_emit_loop_end(ctx, &r->l_ic);
}

static LLVMValueRef out_index(conv_emit_t* e, LLVMValueRef oc, LLVMValueRef ow) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  LLVMValueRef idx = imad(ctx, e->n, g->m, oc);
  idx = imad(ctx, idx, g->out[0], e->od);
  idx = imad(ctx, idx, g->out[1], e->oh);
  return imad(ctx, idx, g->out[2], ow);
}

// Interior tile: e->oct output channels x |tw| columns from |ow0|; every kw
// tap is in range for these columns (no width checks).
static mlcc_status_t emit_tile(conv_emit_t* e, LLVMValueRef ow0, int tw) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  LLVMValueRef acc[kMaxOct * kMaxT];
  for (int o = 0; o < e->oct; ++o) {
    LLVMValueRef b = bias_init(e, iaddc(ctx, e->oc0, o));
    for (int t = 0; t < tw; ++t) acc[o * tw + t] = mlcc_emit_var(ctx, e->ft, b);
  }
  rows_t r;
  open_rows(e, &r);
  mlcc_loop_t l_kw = mlcc_emit_for(ctx, 0, g->k[2], "kw");
  LLVMValueRef iw0 = iadd(ctx, iaddc(ctx, imulc(ctx, ow0, g->s[2]), -g->pb[2]),
                          imulc(ctx, l_kw.iv, g->d[2]));
  LLVMValueRef xbase = iadd(ctx, r.x_row, iw0);
  LLVMValueRef xs[kMaxT];
  for (int t = 0; t < tw; ++t) xs[t] = mlcc_emit_load(ctx, e->x, iaddc(ctx, xbase, t * g->s[2]));
  LLVMValueRef klin = iadd(ctx, r.w_row, l_kw.iv);
  for (int o = 0; o < e->oct; ++o) {
    LLVMValueRef wv = mlcc_emit_load(ctx, e->w, w_index(e, iaddc(ctx, e->oc0, o), klin));
    for (int t = 0; t < tw; ++t) {
      LLVMValueRef a = load_var(ctx, e->ft, acc[o * tw + t]);
      LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, xs[t], wv, a), acc[o * tw + t]);
    }
  }
  mlcc_emit_loop_end(ctx, &l_kw);
  close_rows(e, &r);
  for (int o = 0; o < e->oct; ++o) {
    LLVMValueRef base = out_index(e, iaddc(ctx, e->oc0, o), ow0);
    for (int t = 0; t < tw; ++t) {
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, e->node, 0, iaddc(ctx, base, t),
                                                  load_var(ctx, e->ft, acc[o * tw + t])));
    }
  }
  return mlcc_ok_status();
}

// Bounds-checked scalar columns [ow_begin, ow_end) for the tile's channels.
static mlcc_status_t emit_checked(conv_emit_t* e, int64_t ow_begin, int64_t ow_end) {
  if (ow_begin >= ow_end) return mlcc_ok_status();
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  mlcc_loop_t l_ow = mlcc_emit_for(ctx, ow_begin, ow_end, "ow");
  mlcc_loop_t l_o = mlcc_emit_for(ctx, 0, e->oct, "o");
  LLVMValueRef oc = iadd(ctx, e->oc0, l_o.iv);
  LLVMValueRef acc = mlcc_emit_var(ctx, e->ft, bias_init(e, oc));
  rows_t r;
  open_rows(e, &r);
  mlcc_loop_t l_kw = mlcc_emit_for(ctx, 0, g->k[2], "kw");
  LLVMValueRef iw = iadd(ctx, iaddc(ctx, imulc(ctx, l_ow.iv, g->s[2]), -g->pb[2]),
                         imulc(ctx, l_kw.iv, g->d[2]));
  mlcc_if_t if_w = mlcc_emit_if_begin(ctx, in_range(ctx, iw, g->in[2]));
  LLVMValueRef xv = mlcc_emit_load(ctx, e->x, iadd(ctx, r.x_row, iw));
  LLVMValueRef wv = mlcc_emit_load(ctx, e->w, w_index(e, oc, iadd(ctx, r.w_row, l_kw.iv)));
  LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, xv, wv, load_var(ctx, e->ft, acc)), acc);
  mlcc_emit_if_end(ctx, &if_w);
  mlcc_emit_loop_end(ctx, &l_kw);
  close_rows(e, &r);
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, e->node, 0, out_index(e, oc, l_ow.iv),
                                              load_var(ctx, e->ft, acc)));
  mlcc_emit_loop_end(ctx, &l_o);
  mlcc_emit_loop_end(ctx, &l_ow);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Conv, vector micro-kernel (float32, 1-D/2-D)
//===----------------------------------------------------------------------===//
//
// Conv as per-group GEMM: Y[oc, p] = sum_{ic, tap} W[oc, ic, tap] * X[ic, in(p, tap)]
// with p the flattened output pixel (oh*OW + ow). The micro-kernel keeps MR
// output channels x NV vectors of L pixels (L = target vector lanes) in
// registers; per (ic, tap) it loads NV pixel vectors of X (a plain load when
// the tap is in range for every pixel, a masked load when X is contiguous in p
// for the tap (stride 1, OW == W), a masked gather otherwise) and broadcasts MR
// weights. The tap masks/offsets depend only on the pixel tile and are
// computed once per tile, outside the group, channel-block and ic loops.

enum { kVecMaxMr = 16, kVecMaxNv = 4, kVecMaxTaps = 64, kVecPanelBytes = 192 * 1024 };

typedef struct cvec_t {
  mlcc_emit_ctx_t* ctx;
  const mlcc_node_t* node;
  const conv_geom_t* g;
  const mlcc_value_t *x, *w, *bias;
  int L;                       // lanes
  int64_t pack_mr;             // > 0: W pre-packed in blocks of pack_mr channels
  bool pack_other;             // packed blocks differ from the plan's mr (a schedule)
  int plan_mr;                 // the plan's channels per block (a remainder block has fewer)
  int64_t npix, ntaps, hw_in;  // OH*OW, KH*KW, H*W
  bool contiguous;             // stride 1 in H and W and OW == W: X index is p + const
  bool x_i32;                  // every X index fits in i32 (gathers use i32 offsets)
  LLVMTypeRef vt, vi, vb;      // <L x float>, <L x i32>, <L x i1>
  // Per-tile state.
  LLVMValueRef n, p0;
  int nv;
  LLVMValueRef mask[kVecMaxTaps][kVecMaxNv];  // NULL = all lanes valid
  LLVMValueRef off[kVecMaxTaps][kVecMaxNv];   // gather offsets (non-contiguous)
  int64_t tap_shift[kVecMaxTaps];             // contiguous: X index = p + shift
  // Gathered tile panel (non-contiguous X): [cg][ntaps][nv][L] floats of the
  // current group, filled once per (tile, group); NULL = gather per block.
  LLVMValueRef panel;
  // The one stack buffer every tile's panel uses (created on first use,
  // panel_cap floats: cvec_panel_elems), so the full and the remainder
  // tiles do not each take a stack slot.
  LLVMValueRef panel_buf;
  int64_t panel_cap;
} cvec_t;

static LLVMValueRef vsplat_i32(cvec_t* e, int64_t v) {
  LLVMValueRef c = LLVMConstInt(e->ctx->t_i32, (unsigned long long)v, 1);
  LLVMValueRef lanes[64];
  for (int i = 0; i < e->L; ++i) lanes[i] = c;
  return LLVMConstVector(lanes, (unsigned)e->L);
}

static LLVMValueRef vsplat(cvec_t* e, LLVMValueRef s, LLVMTypeRef vt) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMValueRef undef = LLVMGetUndef(vt);
  LLVMValueRef ins = LLVMBuildInsertElement(ctx->b, undef, s, LLVMConstInt(ctx->t_i32, 0, 0), "");
  LLVMValueRef zeros[64];
  for (int i = 0; i < e->L; ++i) zeros[i] = LLVMConstInt(ctx->t_i32, 0, 0);
  return LLVMBuildShuffleVector(ctx->b, ins, undef, LLVMConstVector(zeros, (unsigned)e->L), "");
}

static LLVMValueRef vand(cvec_t* e, LLVMValueRef a, LLVMValueRef b) {
  if (a == NULL) return b;
  return LLVMBuildAnd(e->ctx->b, a, b, "");
}

static LLVMValueRef call_overloaded(mlcc_emit_ctx_t* ctx, const char* name, LLVMTypeRef* ov,
                                    size_t n_ov, LLVMValueRef* args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, ov, n_ov);
  LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, ov, n_ov);
  return LLVMBuildCall2(ctx->b, fty, fn, args, n, "");
}

// <w x float> of scalar |s| in every lane.
static LLVMValueRef vsplat_w(mlcc_emit_ctx_t* ctx, LLVMValueRef s, int w) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), (unsigned)w);
  LLVMValueRef ins = LLVMBuildInsertElement(ctx->b, LLVMGetUndef(vt), s, LLVMConstInt(ctx->t_i32, 0, 0), "");
  LLVMValueRef zeros[64];
  for (int i = 0; i < w; ++i) zeros[i] = LLVMConstInt(ctx->t_i32, 0, 0);
  return LLVMBuildShuffleVector(ctx->b, ins, LLVMGetUndef(vt), LLVMConstVector(zeros, (unsigned)w), "");
}

// Computes the per-tap masks/offsets of the tile at e->p0 with e->nv vectors;
// |valid| lanes of the tile hold pixels (< npix), known at compile time.
static void cvec_tile_setup(cvec_t* e, int64_t valid) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  LLVMValueRef iota[64];
  LLVMValueRef p0 = LLVMBuildTrunc(ctx->b, e->p0, ctx->t_i32, "");
  LLVMValueRef pv[kVecMaxNv], oh[kVecMaxNv], ow[kVecMaxNv], pvalid[kVecMaxNv];
  for (int j = 0; j < e->nv; ++j) {
    for (int i = 0; i < e->L; ++i) iota[i] = LLVMConstInt(ctx->t_i32, (unsigned long long)(j * e->L + i), 0);
    pv[j] = LLVMBuildAdd(ctx->b, vsplat(e, p0, e->vi), LLVMConstVector(iota, (unsigned)e->L), "");
    oh[j] = LLVMBuildUDiv(ctx->b, pv[j], vsplat_i32(e, g->out[2]), "");
    ow[j] = LLVMBuildSub(ctx->b, pv[j], LLVMBuildMul(ctx->b, oh[j], vsplat_i32(e, g->out[2]), ""), "");
    pvalid[j] = NULL;
    if (valid < (int64_t)(j + 1) * e->L) {
      pvalid[j] = LLVMBuildICmp(ctx->b, LLVMIntSLT, pv[j], vsplat_i32(e, e->npix), "");
    }
  }
  for (int64_t kh = 0; kh < g->k[1]; ++kh) {
    for (int64_t kw = 0; kw < g->k[2]; ++kw) {
      int t = (int)(kh * g->k[2] + kw);
      int64_t sh = kh * g->d[1] - g->pb[1], sw = kw * g->d[2] - g->pb[2];
      bool h_ok = sh >= 0 && (g->out[1] - 1) * g->s[1] + sh < g->in[1];
      bool w_ok = sw >= 0 && (g->out[2] - 1) * g->s[2] + sw < g->in[2];
      e->tap_shift[t] = sh * g->in[2] + sw;
      for (int j = 0; j < e->nv; ++j) {
        LLVMValueRef ih = LLVMBuildAdd(ctx->b, LLVMBuildMul(ctx->b, oh[j], vsplat_i32(e, g->s[1]), ""),
                                       vsplat_i32(e, sh), "");
        LLVMValueRef iw = LLVMBuildAdd(ctx->b, LLVMBuildMul(ctx->b, ow[j], vsplat_i32(e, g->s[2]), ""),
                                       vsplat_i32(e, sw), "");
        LLVMValueRef m = pvalid[j];
        if (!h_ok) {
          m = vand(e, m, LLVMBuildICmp(ctx->b, LLVMIntSGE, ih, vsplat_i32(e, 0), ""));
          m = vand(e, m, LLVMBuildICmp(ctx->b, LLVMIntSLT, ih, vsplat_i32(e, g->in[1]), ""));
        }
        if (!w_ok) {
          m = vand(e, m, LLVMBuildICmp(ctx->b, LLVMIntSGE, iw, vsplat_i32(e, 0), ""));
          m = vand(e, m, LLVMBuildICmp(ctx->b, LLVMIntSLT, iw, vsplat_i32(e, g->in[2]), ""));
        }
        e->mask[t][j] = m;
        e->off[t][j] = NULL;
        if (!e->contiguous) {
          e->off[t][j] = LLVMBuildAdd(ctx->b, LLVMBuildMul(ctx->b, ih, vsplat_i32(e, g->in[2]), ""),
                                      iw, "");
        }
      }
    }
  }
}

// Loads pixel vector j of tap t for the input channel plane at |plane| (ptr
// to X[n, c, 0, 0]).
static LLVMValueRef cvec_load_x(cvec_t* e, LLVMValueRef plane, LLVMValueRef pidx, int t, int j) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMValueRef zero = LLVMConstNull(e->vt);
  LLVMValueRef align = LLVMConstInt(ctx->t_i32, 4, 0);
  if (e->contiguous) {
    LLVMValueRef idx = iaddc(ctx, e->p0, j * e->L + e->tap_shift[t]);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, plane, &idx, 1, "");
    if (e->mask[t][j] == NULL) {
      LLVMValueRef v = LLVMBuildLoad2(ctx->b, e->vt, p, "");
      LLVMSetAlignment(v, 4);
      return v;
    }
    LLVMTypeRef ov[2] = {e->vt, ctx->t_ptr};
    LLVMValueRef args[4] = {p, align, e->mask[t][j], zero};
    return call_overloaded(ctx, "llvm.masked.load", ov, 2, args, 4);
  }
  LLVMValueRef off = e->off[t][j];
  LLVMValueRef base = plane;
  if (e->x_i32) {
    // One GEP from the argument with i32 offsets (plane offset folded in):
    // the x86 backend then gathers with 32-bit indices (vgatherdps), one
    // instruction per vector instead of two.
    LLVMValueRef p32 = LLVMBuildTrunc(ctx->b, pidx, ctx->t_i32, "");
    off = LLVMBuildAdd(ctx->b, off, vsplat(e, p32, e->vi), "");
    base = mlcc_emit_ptr(ctx, e->x);
  }
  LLVMValueRef ptrs = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, base, &off, 1, "");
  LLVMValueRef m = e->mask[t][j];
  if (m == NULL) {
    LLVMValueRef ones[64];
    for (int i = 0; i < e->L; ++i) ones[i] = LLVMConstInt(ctx->t_i1, 1, 0);
    m = LLVMConstVector(ones, (unsigned)e->L);
  }
  LLVMTypeRef ov[2] = {e->vt, LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {ptrs, align, m, zero};
  return call_overloaded(ctx, "llvm.masked.gather", ov, 2, args, 4);
}

// One register block: |mr| output channels from |oc0| (absolute) in group
// |grp| x the current tile (e->nv vectors, |valid| valid lanes).
static mlcc_status_t cvec_block(cvec_t* e, LLVMValueRef grp, LLVMValueRef oc0, int mr,
                                int64_t valid) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  LLVMValueRef acc[kVecMaxMr][kVecMaxNv];
  for (int r = 0; r < mr; ++r) {
    LLVMValueRef b0 = e->bias ? mlcc_emit_load(ctx, e->bias, iaddc(ctx, oc0, r))
                              : LLVMConstReal(ctx->t_f32, 0.0);
    LLVMValueRef bv = vsplat(e, b0, e->vt);
    for (int j = 0; j < e->nv; ++j) acc[r][j] = mlcc_emit_var(ctx, e->vt, bv);
  }
  LLVMValueRef xptr = mlcc_emit_ptr(ctx, e->x), wptr = mlcc_emit_ptr(ctx, e->w);
  mlcc_loop_t l_ic = mlcc_emit_for(ctx, 0, g->cg, "ic");
  LLVMValueRef c_abs = iadd(ctx, imad(ctx, e->n, g->c, imulc(ctx, grp, g->cg)), l_ic.iv);
  LLVMValueRef pidx = imulc(ctx, c_abs, e->hw_in);
  LLVMValueRef plane = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, xptr, &pidx, 1, "");
  // ONNX layout: W[oc, ic, tap] at (oc*cg + ic)*ntaps + tap. Pre-packed
  // (pack_mr == the plan's mr, so |oc0| starts a block of |mr| channels):
  // oc0*cg*ntaps + (ic*ntaps + tap)*mr + r, one contiguous stream.
  LLVMValueRef wrow;
  int64_t wstride, tstride;
  // A schedule's block of mr channels over blocks of P = pack_mr: channel
  // oc0 + r (group-relative ocg) sits in block ocg / P, which starts at
  // (grp*mg + blk*P)*cg*ntaps and holds [cg*ntaps][bs] with bs = min(P,
  // mg - blk*P). When P is a multiple of the plan's mr, a block's channels
  // share one packed block (a remainder block too: it starts at a multiple
  // of mr, and no multiple of mr lies inside it) and are adjacent in it; else each channel has its own base
  // and stride, computed once per block outside the ic loop.
  LLVMValueRef pbase[kVecMaxMr], pstride[kVecMaxMr];
  bool shared = false;
  if (e->pack_other) {
    int64_t P = e->pack_mr, per_oc = g->cg * e->ntaps;
    shared = P % e->plan_mr == 0 || mr == 1;
    for (int r = 0; r < (shared ? 1 : mr); ++r) {
      LLVMValueRef ocg = LLVMBuildSub(ctx->b, iaddc(ctx, oc0, r), imulc(ctx, grp, g->mg), "");
      LLVMValueRef blk = LLVMBuildSDiv(ctx->b, ocg, c64(ctx, P), "");
      LLVMValueRef rr = LLVMBuildSub(ctx->b, ocg, imulc(ctx, blk, P), "");
      LLVMValueRef start = iadd(ctx, imulc(ctx, grp, g->mg), imulc(ctx, blk, P));
      pbase[r] = iadd(ctx, imulc(ctx, start, per_oc), rr);
      if (g->mg % P == 0) {
        pstride[r] = c64(ctx, P);
      } else {
        LLVMValueRef left = LLVMBuildSub(ctx->b, c64(ctx, g->mg), imulc(ctx, blk, P), "");
        pstride[r] = mlcc_emit_min(ctx, MLCC_DTYPE_I64, left, c64(ctx, P));
      }
    }
  }
  if (e->pack_other) {
    wrow = NULL;  // per channel below
    wstride = tstride = 0;
  } else if (e->pack_mr > 0) {
    wrow = iadd(ctx, imulc(ctx, oc0, g->cg * e->ntaps), imulc(ctx, l_ic.iv, e->ntaps * mr));
    wstride = 1;
    tstride = mr;
  } else {
    wrow = imulc(ctx, iadd(ctx, imulc(ctx, oc0, g->cg), l_ic.iv), e->ntaps);
    wstride = g->cg * e->ntaps;
    tstride = 1;
  }
  for (int t = 0; t < e->ntaps; ++t) {
    LLVMValueRef xv[kVecMaxNv];
    for (int j = 0; j < e->nv; ++j) {
      if (e->panel != NULL) {
        LLVMValueRef pi = imulc(ctx, iaddc(ctx, imulc(ctx, l_ic.iv, e->ntaps * e->nv), t * e->nv + j), e->L);
        LLVMValueRef pp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, e->panel, &pi, 1, "");
        xv[j] = LLVMBuildLoad2(ctx->b, e->vt, pp, "");
        LLVMSetAlignment(xv[j], 64);
      } else {
        xv[j] = cvec_load_x(e, plane, pidx, t, j);
      }
    }
    for (int r = 0; r < mr; ++r) {
      LLVMValueRef wi;
      if (e->pack_other) {
        // W[base + (ic*ntaps + t)*bs (+ r when the channels share a block)].
        int q = shared ? 0 : r;
        LLVMValueRef klin = iaddc(ctx, imulc(ctx, l_ic.iv, e->ntaps), t);
        wi = iadd(ctx, pbase[q], LLVMBuildNSWMul(ctx->b, klin, pstride[q], ""));
        if (shared) wi = iaddc(ctx, wi, r);
      } else {
        wi = iaddc(ctx, wrow, r * wstride + t * tstride);
      }
      LLVMValueRef wp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, wptr, &wi, 1, "");
      LLVMValueRef ws = LLVMBuildLoad2(ctx->b, ctx->t_f32, wp, "");
      LLVMSetAlignment(ws, 4);
      LLVMValueRef wv = vsplat(e, ws, e->vt);
      for (int j = 0; j < e->nv; ++j) {
        LLVMValueRef a = LLVMBuildLoad2(ctx->b, e->vt, acc[r][j], "");
        LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, wv, xv[j], a), acc[r][j]);
      }
    }
  }
  mlcc_emit_loop_end(ctx, &l_ic);
  for (int r = 0; r < mr; ++r) {
    LLVMValueRef ybase = imulc(ctx, imad(ctx, e->n, g->m, iaddc(ctx, oc0, r)), e->npix);
    for (int j = 0; j < e->nv; ++j) {
      LLVMValueRef v = LLVMBuildLoad2(ctx->b, e->vt, acc[r][j], "");
      LLVMValueRef yi = iadd(ctx, ybase, iaddc(ctx, e->p0, j * e->L));
      int64_t lanes = valid - (int64_t)j * e->L;
      if (lanes >= e->L) {
        MLCC_RETURN_IF_ERROR(mlcc_emit_store_output_vec(ctx, e->node, 0, yi, v));
      } else {
        for (int64_t l = 0; l < lanes; ++l) {
          LLVMValueRef s = LLVMBuildExtractElement(ctx->b, v, LLVMConstInt(ctx->t_i32, (unsigned long long)l, 0), "");
          MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, e->node, 0, iaddc(ctx, yi, l), s));
        }
      }
    }
  }
  return mlcc_ok_status();
}

// Fills the tile's input panel of group |grp| (see cvec_t.panel) if it pays.
static void cvec_panel(cvec_t* e, LLVMValueRef grp, int mr) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  e->panel = NULL;
  int64_t panel_elems = g->cg * e->ntaps * e->nv * e->L;
  if (g->mg <= mr || panel_elems * 4 > kVecPanelBytes || panel_elems > e->panel_cap) return;
  // Gather the tile's input panel once; every channel block reuses it.
  if (e->panel_buf == NULL) {
    LLVMTypeRef at = LLVMArrayType(ctx->t_f32, (unsigned)e->panel_cap);
    e->panel_buf = mlcc_emit_var(ctx, at, NULL);
    LLVMSetAlignment(e->panel_buf, 64);
  }
  LLVMValueRef buf = e->panel_buf;
  LLVMValueRef xptr = mlcc_emit_ptr(ctx, e->x);
  mlcc_loop_t l_ic = mlcc_emit_for(ctx, 0, g->cg, "pic");
  LLVMValueRef c_abs = iadd(ctx, imad(ctx, e->n, g->c, imulc(ctx, grp, g->cg)), l_ic.iv);
  LLVMValueRef pidx = imulc(ctx, c_abs, e->hw_in);
  LLVMValueRef plane = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, xptr, &pidx, 1, "");
  for (int t = 0; t < e->ntaps; ++t) {
    for (int j = 0; j < e->nv; ++j) {
      LLVMValueRef v = cvec_load_x(e, plane, pidx, t, j);
      LLVMValueRef pi = imulc(ctx, iaddc(ctx, imulc(ctx, l_ic.iv, e->ntaps * e->nv), t * e->nv + j), e->L);
      LLVMValueRef pp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, buf, &pi, 1, "");
      LLVMValueRef st = LLVMBuildStore(ctx->b, v, pp);
      LLVMSetAlignment(st, 64);
    }
  }
  mlcc_emit_loop_end(ctx, &l_ic);
  e->panel = buf;
}

// Tiling plan of the vector conv, shared by the emitter and the parallel
// unit count the entry function uses (they must agree).
typedef struct cvec_plan_t {
  int L, nv, mr;
  int64_t tile, nfull, rem;  // pixel tiles: nfull full tiles + a remainder of rem pixels
  int64_t ntiles;            // nfull + (rem > 0)
  bool split_tiles;          // parallel units are (n, tile, channel chunk), else channel units
  int64_t chan_units;        // group == 1: channel blocks; else groups
  int64_t cchunk, nchunks;   // split_tiles: channel units per chunk, chunks per tile
  int64_t units;             // parallel units of the whole conv
} cvec_plan_t;

// Schedule parameters of the pixel-vector kernel (mlcc_emit_conv_space,
// after the depthwise kernel's two): 0 = the heuristic's choice.
enum { kCvSchedVectors = 2, kCvSchedBlock = 3 };

// Vector registers the pixel-vector kernel plans with: 32 on
// AVX-512/NEON/RVV, 16 on AVX2 and SSE.
static int cvec_regs(const mlcc_target_t* target, int L) {
  return (target->arch == MLCC_ARCH_X86_64 && L < 16) ? 16 : 32;
}

// False if the vector conv does not apply (dtype, rank, sizes, target).
// node->sched[kCvSchedVectors] (1..kVecMaxNv) overrides the pixel vectors
// per tile and node->sched[kCvSchedBlock] (1..kVecMaxMr) the output
// channels per register block; either may then differ from the block size
// W was packed with (cvec_block reads any packed block size).
static bool cvec_make_plan(const mlcc_node_t* node, const conv_geom_t* g,
                           const mlcc_target_t* target, cvec_plan_t* p) {
  memset(p, 0, sizeof(*p));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (x == NULL || x->dtype != MLCC_DTYPE_F32 || g->nsp > 2 || target == NULL) return false;
  int L = target->vector_bytes / 4;
  if (L < 4 || L > 16) return false;
  int64_t ntaps = g->k[1] * g->k[2];
  if (ntaps > kVecMaxTaps) return false;
  // i32 lane arithmetic: everything indexed per plane must fit.
  int64_t hw_in = g->in[1] * g->in[2], npix = g->out[1] * g->out[2];
  if (hw_in >= ((int64_t)1 << 30) || npix >= ((int64_t)1 << 30) || npix <= 0) return false;
  bool contiguous = g->s[1] == 1 && g->s[2] == 1 && g->out[2] == g->in[2];
  // Register budget: 32 vector registers on AVX-512/NEON/RVV, 16 on AVX2.
  int nregs = cvec_regs(target, L);
  int64_t nvec = (npix + L - 1) / L;
  int32_t s_nv = node->sched[kCvSchedVectors], s_mr = node->sched[kCvSchedBlock];
  int nv = g->mg == 1 ? 4 : (nregs == 16 ? 2 : 3);
  if (s_nv > 0) {
    nv = s_nv > kVecMaxNv ? kVecMaxNv : (int)s_nv;
    if (nv > nvec) nv = (int)nvec;
  } else {
    if (nvec <= kVecMaxNv && nvec > nv) nv = (int)nvec;  // one tile covers all pixels
    if (nv > nvec) nv = (int)nvec;
    while (!contiguous && nv > 1 && g->cg * ntaps * nv * L * 4 > kVecPanelBytes) --nv;
  }
  int mr = s_mr > 0 ? (int)s_mr : (nregs - nv - 2) / nv;
  if (mr > kVecMaxMr) mr = kVecMaxMr;
  if (mr > g->mg) mr = (int)g->mg;
  if (mr < 1) mr = 1;
  // Prefer a block size that divides the channels (no narrow remainder
  // block, whose broadcasts are not amortized) if it loses at most 2 rows.
  if (s_mr <= 0 && g->mg % mr != 0) {
    for (int cand = mr - 1; cand * 5 >= mr * 4 && cand >= 2; --cand) {
      if (g->mg % cand == 0) {
        mr = cand;
        break;
      }
    }
  }
  int64_t packed = conv_packed_mr(node);
  if (packed > 0 && s_nv <= 0 && s_mr <= 0) {
    // The weights were packed for this block size (same plan at compile
    // time); any other target shape falls back to the scalar kernel. A
    // tuned schedule reads the packed blocks whatever their size.
    if (packed != mr) return false;
  }
  p->L = L;
  p->nv = nv;
  p->mr = mr;
  p->tile = (int64_t)nv * L;
  p->nfull = npix / p->tile;
  p->rem = npix % p->tile;
  p->ntiles = p->nfull + (p->rem > 0);
  p->chan_units = g->group == 1 ? (g->mg + mr - 1) / mr : g->group;
  // Units: (n, tile) pairs when there are enough; else channel units when
  // there are enough of them and few tiles (each unit streams its weights
  // once over all tiles); else (n, tile, chunk of channel units) triples
  // with enough chunks to reach kConvTargetUnits.
  int64_t nt = g->n * p->ntiles, want = kConvTargetUnits;
  // An empty output (a zero batch, zero pixels or zero channels) has nothing
  // to vectorize: the scalar kernel runs its zero iterations.
  if (nt <= 0 || p->chan_units <= 0) return false;
  p->split_tiles = !(nt < want / 2 && p->chan_units >= want);
  p->nchunks = nt >= want ? 1 : (want + nt - 1) / nt;
  if (p->nchunks > p->chan_units) p->nchunks = p->chan_units;
  p->cchunk = (p->chan_units + p->nchunks - 1) / p->nchunks;
  p->nchunks = (p->chan_units + p->cchunk - 1) / p->cchunk;
  p->units = p->split_tiles ? nt * p->nchunks : p->chan_units;
  return true;
}

// Floats of the stack buffer the vector conv's tile panels share: the
// largest panel a tile of plan |p| fills (cvec_panel: more than one channel
// block, at most kVecPanelBytes), 0 if no tile fills one.
static int64_t cvec_panel_elems(const conv_geom_t* g, const cvec_plan_t* p) {
  if (g->mg <= p->mr) return 0;
  int64_t per_vec = g->cg * g->k[1] * g->k[2] * p->L, best = 0;
  int64_t nvs[2] = {p->nfull > 0 ? p->nv : 0, (p->rem + p->L - 1) / p->L};
  for (int i = 0; i < 2; ++i) {
    int64_t elems = per_vec * nvs[i];
    if (elems * 4 <= kVecPanelBytes && elems > best) best = elems;
  }
  return best;
}

// Channel units [ub, ue) of the current tile (groups, or channel blocks of
// the single group).
static mlcc_status_t cvec_tile(cvec_t* e, const cvec_plan_t* p, int64_t valid, LLVMValueRef ub,
                               LLVMValueRef ue) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  int mr = p->mr;
  cvec_tile_setup(e, valid);
  int64_t nfull = g->mg / mr, rem = g->mg % mr;
  if (g->group == 1) {
    cvec_panel(e, c64(ctx, 0), mr);
    mlcc_loop_t l_u = mlcc_emit_loop_begin(ctx, ub, ue, 1, "ocb");
    if (rem == 0) {
      MLCC_RETURN_IF_ERROR(cvec_block(e, c64(ctx, 0), imulc(ctx, l_u.iv, mr), mr, valid));
    } else {
      mlcc_if_t br = mlcc_emit_if_begin(
          ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, l_u.iv, c64(ctx, nfull), ""));
      MLCC_RETURN_IF_ERROR(cvec_block(e, c64(ctx, 0), imulc(ctx, l_u.iv, mr), mr, valid));
      mlcc_emit_if_else(ctx, &br);
      MLCC_RETURN_IF_ERROR(cvec_block(e, c64(ctx, 0), c64(ctx, nfull * mr), (int)rem, valid));
      mlcc_emit_if_end(ctx, &br);
    }
    mlcc_emit_loop_end(ctx, &l_u);
    return mlcc_ok_status();
  }
  mlcc_loop_t l_g = mlcc_emit_loop_begin(ctx, ub, ue, 1, "g");
  LLVMValueRef gbase = imulc(ctx, l_g.iv, g->mg);
  cvec_panel(e, l_g.iv, mr);
  if (nfull > 0) {
    mlcc_loop_t l_b = mlcc_emit_for(ctx, 0, nfull, "ocb");
    MLCC_RETURN_IF_ERROR(cvec_block(e, l_g.iv, iadd(ctx, gbase, imulc(ctx, l_b.iv, mr)), mr, valid));
    mlcc_emit_loop_end(ctx, &l_b);
  }
  if (rem > 0) {
    MLCC_RETURN_IF_ERROR(cvec_block(e, l_g.iv, iaddc(ctx, gbase, nfull * mr), (int)rem, valid));
  }
  mlcc_emit_loop_end(ctx, &l_g);
  return mlcc_ok_status();
}

// Emits the conv with the vector micro-kernel if it applies; sets *handled.
// With ctx->range_begin/end set, computes only parallel units [begin, end).
static mlcc_status_t emit_conv_vec(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                   const conv_geom_t* g, bool* handled) {
  *handled = false;
  cvec_plan_t p;
  if (!cvec_make_plan(node, g, ctx->target, &p)) return mlcc_ok_status();
  int L = p.L;
  cvec_t e;
  memset(&e, 0, sizeof(e));
  e.ctx = ctx;
  e.node = node;
  e.g = g;
  e.x = mlcc_node_input(node, 0);
  e.w = mlcc_node_input(node, 1);
  e.bias = mlcc_node_input(node, 2);
  e.L = L;
  e.pack_mr = conv_packed_mr(node);
  e.pack_other = e.pack_mr > 0 && e.pack_mr != p.mr;
  e.plan_mr = p.mr;
  e.x_i32 = mlcc_shape_numel_unchecked(&e.x->shape) < ((int64_t)1 << 31) - g->in[1] * g->in[2];
  e.npix = g->out[1] * g->out[2];
  e.ntaps = g->k[1] * g->k[2];
  e.hw_in = g->in[1] * g->in[2];
  e.contiguous = g->s[1] == 1 && g->s[2] == 1 && g->out[2] == g->in[2];
  e.vt = LLVMVectorType(ctx->t_f32, (unsigned)L);
  e.vi = LLVMVectorType(ctx->t_i32, (unsigned)L);
  e.vb = LLVMVectorType(ctx->t_i1, (unsigned)L);
  e.panel_cap = cvec_panel_elems(g, &p);
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : c64(ctx, 0);
  LLVMValueRef re = ctx->range_end ? ctx->range_end : c64(ctx, p.units);
  // Clamp the caller's range to [0, units).
  LLVMValueRef units = c64(ctx, p.units), zero = c64(ctx, 0);
  rb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, rb, units), zero);
  re = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, re, units), zero);
  int rem_nv = (int)((p.rem + L - 1) / L);
  if (p.split_tiles) {
    mlcc_loop_t l_u = mlcc_emit_loop_begin(ctx, rb, re, 1, "pu");
    LLVMValueRef nt = LLVMBuildSDiv(ctx->b, l_u.iv, c64(ctx, p.nchunks), "");
    LLVMValueRef ck = LLVMBuildSRem(ctx->b, l_u.iv, c64(ctx, p.nchunks), "");
    e.n = LLVMBuildSDiv(ctx->b, nt, c64(ctx, p.ntiles), "");
    LLVMValueRef t = LLVMBuildSRem(ctx->b, nt, c64(ctx, p.ntiles), "");
    LLVMValueRef cb = imulc(ctx, ck, p.cchunk);
    LLVMValueRef cu = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, cb, p.cchunk), c64(ctx, p.chan_units));
    if (p.rem == 0) {
      e.nv = p.nv;
      e.p0 = imulc(ctx, t, p.tile);
      MLCC_RETURN_IF_ERROR(cvec_tile(&e, &p, p.tile, cb, cu));
    } else if (p.nfull == 0) {
      e.nv = rem_nv;
      e.p0 = zero;
      MLCC_RETURN_IF_ERROR(cvec_tile(&e, &p, p.rem, cb, cu));
    } else {
      mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, t, c64(ctx, p.nfull), ""));
      e.nv = p.nv;
      e.p0 = imulc(ctx, t, p.tile);
      MLCC_RETURN_IF_ERROR(cvec_tile(&e, &p, p.tile, cb, cu));
      mlcc_emit_if_else(ctx, &br);
      e.nv = rem_nv;
      e.p0 = c64(ctx, p.nfull * p.tile);
      MLCC_RETURN_IF_ERROR(cvec_tile(&e, &p, p.rem, cb, cu));
      mlcc_emit_if_end(ctx, &br);
    }
    mlcc_emit_loop_end(ctx, &l_u);
  } else {
    mlcc_loop_t l_n = mlcc_emit_for(ctx, 0, g->n, "n");
    e.n = l_n.iv;
    if (p.nfull > 0) {
      mlcc_loop_t l_t = mlcc_emit_for(ctx, 0, p.nfull, "pt");
      e.nv = p.nv;
      e.p0 = imulc(ctx, l_t.iv, p.tile);
      MLCC_RETURN_IF_ERROR(cvec_tile(&e, &p, p.tile, rb, re));
      mlcc_emit_loop_end(ctx, &l_t);
    }
    if (p.rem > 0) {
      e.nv = rem_nv;
      e.p0 = c64(ctx, p.nfull * p.tile);
      MLCC_RETURN_IF_ERROR(cvec_tile(&e, &p, p.rem, rb, re));
    }
    mlcc_emit_loop_end(ctx, &l_n);
  }
  *handled = true;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Conv, channel-vector micro-kernel for narrow outputs (float32, 2-D)
//===----------------------------------------------------------------------===//
//
// Pixel vectors waste lanes when the pixel count is not a multiple of the
// vector (resnet's 7x7 layer4 uses 49 of 64) and need masked loads or
// gathers for padded or strided taps. This kernel (x86 AVX-512, group 1)
// vectorizes along output channels instead: a tile is a segment of at most
// kOcvMaxOw columns of one output row (columns known at compile time) x NV
// vectors of L channels, with weights pre-packed in blocks of NV*L channels
// ([cg*K][NV*L], the packed_mr layout with mr = NV*L) so each (ic, tap) loads
// NV weight vectors and broadcasts one X scalar per column. Column padding is
// resolved at compile time, row padding by one branch per kernel row outside
// the ic loop. Used for spatial kernels on rows of up to kOcvMaxSeg segments
// (kOcvMaxSegStrided for column-strided kernels of at most 9 taps) and for
// 1x1 kernels with a partial last pixel vector (measured faster on
// resnet18 and mobilenet_v2); parallel units are (n, channel block) pairs.

enum { kOcvMaxOw = 8, kOcvMaxNv = 4, kOcvMaxSeg = 8, kOcvMaxSegStrided = 20 };
// Blocks of at least this many weight bytes prefetch the next block's
// weights (ocv_make_plan).
static const int64_t kOcvPrefetchBlockBytes = 128 * 1024;

// Bytes of one block's weights: [cg*K][ocb] floats.
static int64_t per_oc_bytes(const conv_geom_t* g, int64_t ocb) {
  return g->cg * g->k[1] * g->k[2] * ocb * 4;
}

typedef struct ocv_plan_t {
  int L, nv;
  int nseg, segw;  // a row is nseg segments of at most segw columns
  int64_t ocb;     // channels per block (nv * L)
  int64_t blocks;  // m / ocb
  int64_t rchunks; // output rows split into this many chunks of rows rows
  int64_t rows;
  int64_t units;   // parallel units: n * blocks * rchunks
  bool prefetch;   // prefetch the next block's weights into L2 (see below)
} ocv_plan_t;

// Schedule parameters of the channel-vector kernel (mlcc_emit_conv_space):
// 0 = the heuristic's choice.
enum { kOcvSchedWidth = 0, kOcvSchedVectors = 2 };

// False if the channel-vector conv does not apply.
// node->sched[kOcvSchedWidth] (1..kOcvMaxOw) overrides the columns per
// segment and node->sched[kOcvSchedVectors] (1..kOcvMaxNv) the channel
// vectors per block; with packed W a tuned block must divide the packed
// block (emit_conv_ocv reads it inside the packed one).
static bool ocv_make_plan(const mlcc_node_t* node, const conv_geom_t* g,
                          const mlcc_target_t* target, ocv_plan_t* p) {
  memset(p, 0, sizeof(*p));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (x == NULL || x->dtype != MLCC_DTYPE_F32 || g->nsp != 2 || target == NULL) return false;
  if (target->arch != MLCC_ARCH_X86_64 || target->vector_bytes != 64) return false;
  int L = 16;
  if (g->group != 1 || g->out[2] < 1 || g->out[1] < 1) return false;
  int64_t ntaps = g->k[1] * g->k[2];
  if (ntaps > kVecMaxTaps) return false;
  // Where it wins over pixel vectors (measured on resnet18/mobilenet_v2):
  // spatial kernels on rows of up to kOcvMaxSeg segments, and 1x1 kernels
  // whose few pixels leave a partial last pixel vector. Column-strided
  // kernels of at most 3x3 taps also on rows of up to kOcvMaxSegStrided
  // segments, where pixel vectors gather every tap (the detector's 3->16
  // stem and 16->32 stage1.0, 160/80 columns, and mobilenet_v2's first conv:
  // 20-30% faster measured in the whole detector, BENCHMARKS.md).
  int64_t npix = g->out[1] * g->out[2];
  int64_t max_seg = kOcvMaxSeg;
  if (g->s[2] > 1 && ntaps <= 9) max_seg = kOcvMaxSegStrided;
  bool spatial = ntaps > 1 && g->out[2] <= max_seg * kOcvMaxOw;
  bool narrow = npix % L != 0 && npix <= 4 * L;
  if (!spatial && !narrow) return false;
  // A row is computed in segments of at most kOcvMaxOw columns.
  int64_t nseg = (g->out[2] + kOcvMaxOw - 1) / kOcvMaxOw;
  int64_t segw = (g->out[2] + nseg - 1) / nseg;
  int32_t s_w = node->sched[kOcvSchedWidth], s_nv = node->sched[kOcvSchedVectors];
  bool tuned = s_w > 0 || s_nv > 0;
  if (s_w > 0) {
    segw = s_w > kOcvMaxOw ? kOcvMaxOw : s_w;
    if (segw > g->out[2]) segw = g->out[2];
    nseg = (g->out[2] + segw - 1) / segw;
  }
  int64_t hw_in = g->in[1] * g->in[2];
  if (hw_in >= ((int64_t)1 << 30) || g->cg * g->k[1] * g->k[2] >= ((int64_t)1 << 30)) return false;
  int64_t packed = conv_packed_mr(node);
  // Registers: OW*nv accumulators + nv weight vectors (broadcasts fold into
  // the FMA's memory operand) within 32 zmm with a little slack.
  int nv = 0;
  for (int cand = kOcvMaxNv; cand >= 1; --cand) {
    if (s_nv > 0 && cand != s_nv) continue;
    if (tuned && packed > 0 && packed % ((int64_t)cand * L) != 0) continue;
    if (segw * cand + cand <= 30 && g->m % ((int64_t)cand * L) == 0) {
      nv = cand;
      break;
    }
  }
  if (nv == 0) return false;
  if (packed > 0 && !tuned && packed != (int64_t)nv * L) return false;
  p->L = L;
  p->nv = nv;
  p->nseg = (int)nseg;
  p->segw = (int)segw;
  p->ocb = (int64_t)nv * L;
  p->blocks = g->m / p->ocb;
  // Few channel blocks: also split the output rows, so that a few threads
  // get balanced work (units of one block stay adjacent: weights are reused).
  int64_t want = kConvTargetUnits, nb = g->n * p->blocks;
  p->rchunks = nb >= want ? 1 : (want + nb - 1) / nb;
  if (p->rchunks > g->out[1]) p->rchunks = g->out[1];
  p->rows = (g->out[1] + p->rchunks - 1) / p->rchunks;
  p->rchunks = (g->out[1] + p->rows - 1) / p->rows;
  p->units = nb * p->rchunks;
  // A block whose weights are large ([cg*K][ocb] floats, 295-590 KB on
  // resnet18's layer3/4) streams them from memory on its first output row
  // (cold in a whole model: each weight is read once per run) and from L2 on
  // the others, so the first row waits on DRAM while the later ones compute
  // from L2. Prefetching the next block's weights (prefetcht1) alongside
  // each weight load overlaps that stream with the current block's rows.
  // Only for the default packed layout with several rows per unit.
  p->prefetch = packed > 0 && !tuned && p->rows >= 2 &&
                per_oc_bytes(g, p->ocb) >= kOcvPrefetchBlockBytes;
  return true;
}

// Emits the channel-vector conv if it applies; sets *handled. With
// ctx->range_begin/end set, computes only parallel units [begin, end).
static mlcc_status_t emit_conv_ocv(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                   const conv_geom_t* g, bool* handled) {
  *handled = false;
  ocv_plan_t p;
  if (!ocv_make_plan(node, g, ctx->target, &p)) return mlcc_ok_status();
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  const mlcc_value_t* bias = mlcc_node_input(node, 2);
  int64_t pack_block = conv_packed_mr(node);
  bool packed = pack_block > 0;
  int L = p.L, nv = p.nv;
  int ow_n = (int)g->out[2];
  int64_t ntaps = g->k[1] * g->k[2], per_oc = g->cg * ntaps;
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, (unsigned)L);
  LLVMValueRef zero = c64(ctx, 0), units = c64(ctx, p.units);
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : zero;
  LLVMValueRef re = ctx->range_end ? ctx->range_end : units;
  rb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, rb, units), zero);
  re = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, re, units), zero);
  LLVMValueRef xptr = mlcc_emit_ptr(ctx, x), wptr = mlcc_emit_ptr(ctx, w);
  LLVMValueRef i0 = LLVMConstInt(ctx->t_i32, 0, 0);
  LLVMValueRef zeros[16];
  for (int i = 0; i < L; ++i) zeros[i] = i0;
  LLVMValueRef bshuf = LLVMConstVector(zeros, (unsigned)L);

  mlcc_loop_t l_u = mlcc_emit_loop_begin(ctx, rb, re, 1, "ou");
  LLVMValueRef nb = LLVMBuildSDiv(ctx->b, l_u.iv, c64(ctx, p.rchunks), "");
  LLVMValueRef rc = LLVMBuildSRem(ctx->b, l_u.iv, c64(ctx, p.rchunks), "");
  LLVMValueRef n = LLVMBuildSDiv(ctx->b, nb, c64(ctx, p.blocks), "");
  LLVMValueRef blk = LLVMBuildSRem(ctx->b, nb, c64(ctx, p.blocks), "");
  LLVMValueRef oh0 = imulc(ctx, rc, p.rows);
  LLVMValueRef oh1 = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, oh0, p.rows), c64(ctx, g->out[1]));
  LLVMValueRef oc0 = imulc(ctx, blk, p.ocb);
  // W's block base: oc0*per_oc, or with a tuned block inside a larger packed
  // block (pack_block a multiple of ocb) that block's base plus the offset
  // of oc0 in it; the packed row stride is pack_block.
  LLVMValueRef wblk = NULL;
  int64_t wrow_stride = p.ocb;
  if (packed && pack_block != p.ocb) {
    LLVMValueRef pstart = imulc(ctx, LLVMBuildSDiv(ctx->b, oc0, c64(ctx, pack_block), ""),
                                pack_block);
    wblk = iadd(ctx, imulc(ctx, pstart, per_oc), LLVMBuildSub(ctx->b, oc0, pstart, ""));
    wrow_stride = pack_block;
  }
  // Bias vectors of the block (oc-contiguous, loaded once per block).
  LLVMValueRef bv[kOcvMaxNv];
  for (int j = 0; j < nv; ++j) {
    if (bias != NULL) {
      LLVMValueRef bi = iaddc(ctx, oc0, (int64_t)j * L);
      LLVMValueRef bp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, mlcc_emit_ptr(ctx, bias), &bi, 1, "");
      bv[j] = LLVMBuildLoad2(ctx->b, vt, bp, "");
      LLVMSetAlignment(bv[j], 4);
    } else {
      bv[j] = LLVMConstNull(vt);
    }
  }
  // One transpose slot [segw][ocb] for every segment (see below).
  LLVMValueRef tslot =
      mlcc_emit_var(ctx, LLVMArrayType(ctx->t_f32, (unsigned)(p.segw * p.ocb)), NULL);
  mlcc_loop_t l_oh = mlcc_emit_loop_begin(ctx, oh0, oh1, 1, "oh");
  for (int seg = 0; seg < p.nseg; ++seg) {
  int q0 = seg * p.segw;
  int q1 = q0 + p.segw < ow_n ? q0 + p.segw : ow_n;
  LLVMValueRef acc[kOcvMaxOw][kOcvMaxNv];
  for (int q = q0; q < q1; ++q) {
    for (int j = 0; j < nv; ++j) acc[q - q0][j] = mlcc_emit_var(ctx, vt, bv[j]);
  }
  LLVMValueRef xn = imulc(ctx, n, g->c * g->in[1] * g->in[2]);
  for (int64_t kh = 0; kh < g->k[1]; ++kh) {
    int64_t sh = kh * g->d[1] - g->pb[1];
    LLVMValueRef ih = iaddc(ctx, imulc(ctx, l_oh.iv, g->s[1]), sh);
    bool h_ok = sh >= 0 && (g->out[1] - 1) * g->s[1] + sh < g->in[1];
    mlcc_if_t br;
    if (!h_ok) br = mlcc_emit_if_begin(ctx, in_range(ctx, ih, g->in[1]));
    LLVMValueRef xrow = iadd(ctx, xn, imulc(ctx, ih, g->in[2]));
    mlcc_loop_t l_ic = mlcc_emit_for(ctx, 0, g->cg, "ic");
    LLVMValueRef xplane = iadd(ctx, xrow, imulc(ctx, l_ic.iv, g->in[1] * g->in[2]));
    for (int64_t kw = 0; kw < g->k[2]; ++kw) {
      int64_t t = kh * g->k[2] + kw;
      int64_t klin_off = t;  // klin = ic*ntaps + t
      LLVMValueRef wv[kOcvMaxNv];
      for (int j = 0; j < nv; ++j) {
        LLVMValueRef wi;
        if (packed) {
          // Block at oc0*per_oc, element (klin)*ocb + j*L.
          if (wblk != NULL) {
            wi = iadd(ctx, wblk,
                      iaddc(ctx, imulc(ctx, l_ic.iv, ntaps * wrow_stride),
                            klin_off * wrow_stride + (int64_t)j * L));
          } else {
            wi = iadd(ctx, imulc(ctx, oc0, per_oc),
                      iaddc(ctx, imulc(ctx, l_ic.iv, ntaps * p.ocb), klin_off * p.ocb + (int64_t)j * L));
          }
          LLVMValueRef wp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, wptr, &wi, 1, "");
          wv[j] = LLVMBuildLoad2(ctx->b, vt, wp, "");
          LLVMSetAlignment(wv[j], 4);
          if (p.prefetch) {
            // The same vector of the next block (one 64-byte line; past the
            // last block the address is unused: prefetches do not fault).
            LLVMValueRef ni = iaddc(ctx, wi, p.ocb * per_oc);
            LLVMValueRef np = LLVMBuildGEP2(ctx->b, ctx->t_f32, wptr, &ni, 1, "");
            LLVMTypeRef ov[1] = {ctx->t_ptr};
            LLVMValueRef args[4] = {np, LLVMConstInt(ctx->t_i32, 0, 0),
                                    LLVMConstInt(ctx->t_i32, 2, 0), LLVMConstInt(ctx->t_i32, 1, 0)};
            call_overloaded(ctx, "llvm.prefetch", ov, 1, args, 4);
          }
        } else {
          // ONNX layout: gather-free but strided; build the vector lane by lane.
          LLVMValueRef v = LLVMGetUndef(vt);
          for (int l = 0; l < L; ++l) {
            wi = iadd(ctx, imulc(ctx, iaddc(ctx, oc0, (int64_t)j * L + l), per_oc),
                      iaddc(ctx, imulc(ctx, l_ic.iv, ntaps), klin_off));
            LLVMValueRef wp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, wptr, &wi, 1, "");
            LLVMValueRef sv = LLVMBuildLoad2(ctx->b, ctx->t_f32, wp, "");
            v = LLVMBuildInsertElement(ctx->b, v, sv, LLVMConstInt(ctx->t_i32, (unsigned)l, 0), "");
          }
          wv[j] = v;
        }
      }
      int64_t sw = kw * g->d[2] - g->pb[2];
      for (int q = q0; q < q1; ++q) {
        int64_t iw = q * g->s[2] + sw;
        if (iw < 0 || iw >= g->in[2]) continue;  // column padding: compile time
        LLVMValueRef xi = iaddc(ctx, xplane, iw);
        LLVMValueRef xp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, xptr, &xi, 1, "");
        LLVMValueRef xs = LLVMBuildLoad2(ctx->b, ctx->t_f32, xp, "");
        LLVMValueRef ins = LLVMBuildInsertElement(ctx->b, LLVMGetUndef(vt), xs, i0, "");
        LLVMValueRef xv = LLVMBuildShuffleVector(ctx->b, ins, LLVMGetUndef(vt), bshuf, "");
        for (int j = 0; j < nv; ++j) {
          LLVMValueRef a = LLVMBuildLoad2(ctx->b, vt, acc[q - q0][j], "");
          LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, wv[j], xv, a), acc[q - q0][j]);
        }
      }
    }
    mlcc_emit_loop_end(ctx, &l_ic);
    if (!h_ok) mlcc_emit_if_end(ctx, &br);
  }
  // Y[n, oc, oh, q0..q1) is contiguous per channel: transpose the tile
  // through a stack slot [q][ocb] and store one vector of columns per
  // channel in a runtime loop (one copy of any fused epilogue, vectorized).
  int segn = q1 - q0;
  int64_t npix = g->out[1] * g->out[2];
  for (int q = q0; q < q1; ++q) {
    for (int j = 0; j < nv; ++j) {
      LLVMValueRef v = LLVMBuildLoad2(ctx->b, vt, acc[q - q0][j], "");
      LLVMValueRef ti = c64(ctx, (int64_t)(q - q0) * p.ocb + (int64_t)j * L);
      LLVMValueRef tp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, tslot, &ti, 1, "");
      LLVMValueRef st = LLVMBuildStore(ctx->b, v, tp);
      LLVMSetAlignment(st, 4);
    }
  }
  mlcc_loop_t l_c = mlcc_emit_for(ctx, 0, p.ocb, "occ");
  LLVMValueRef oc = iadd(ctx, oc0, l_c.iv);
  LLVMValueRef yi = iadd(ctx, imulc(ctx, imad(ctx, n, g->m, oc), npix),
                         iaddc(ctx, imulc(ctx, l_oh.iv, g->out[2]), q0));
  LLVMTypeRef st_t = LLVMVectorType(ctx->t_f32, (unsigned)segn);
  LLVMValueRef ov = LLVMGetUndef(st_t);
  for (int q = 0; q < segn; ++q) {
    LLVMValueRef ti = iaddc(ctx, l_c.iv, (int64_t)q * p.ocb);
    LLVMValueRef tp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, tslot, &ti, 1, "");
    LLVMValueRef sv = LLVMBuildLoad2(ctx->b, ctx->t_f32, tp, "");
    if (segn == 1) {
      ov = sv;
    } else {
      ov = LLVMBuildInsertElement(ctx->b, ov, sv, LLVMConstInt(ctx->t_i32, (unsigned)q, 0), "");
    }
  }
  mlcc_status_t sst = segn == 1 ? mlcc_emit_store_output(ctx, node, 0, yi, ov)
                                : mlcc_emit_store_output_vec(ctx, node, 0, yi, ov);
  mlcc_emit_loop_end(ctx, &l_c);
  MLCC_RETURN_IF_ERROR(sst);
  }
  mlcc_emit_loop_end(ctx, &l_oh);
  mlcc_emit_loop_end(ctx, &l_u);
  *handled = true;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Conv, depthwise (float32, 1-D/2-D, group == C == M)
//===----------------------------------------------------------------------===//
//
// Each output channel reads one input channel, so the GEMM view has one row
// and the micro-kernels above waste their register blocks. This kernel
// vectorizes along output columns: per (channel, output row) a row is cut at
// compile time into tiles of up to L columns; per tap a tile loads its input
// columns (stride s > 1: w*s contiguous elements and a shuffle picking
// every s-th) and does one FMA with the tap's broadcast weight, which is
// loaded once per channel. Tiles whose taps all fall inside the row run in a
// loop with plain loads; edge tiles (padding, partial last tile) are
// unrolled with compile-time masked loads (masked-off lanes read as the zero
// padding). Kernel rows outside the input are skipped by one branch per
// row. Parallel units are the (n, c) planes. Vector loads of the middle
// tiles stay within the row, so inputs need no extra room.

enum { kDwMaxTaps = 64, kDwMaxTiles = 64, kDwMaxStride = 4, kDwMaxRows = 4 };

typedef struct dw_tile_t {
  int64_t ow0;   // first output column
  int w;         // vector width (power of two)
  int valid;     // columns of the tile that exist (<= w)
  bool clean;    // every tap's load is inside the row, all w lanes valid
} dw_tile_t;

typedef struct dw_plan_t {
  int L;
  int n_tiles;
  dw_tile_t tiles[kDwMaxTiles];
  int64_t units;  // n * c
} dw_plan_t;

// Is every lane of tap-loads of tile [ow0, ow0 + w) inside the input row
// (the strided wide load of w*s elements included)?
static bool dw_tile_clean(const conv_geom_t* g, int64_t ow0, int w) {
  int64_t first = ow0 * g->s[2] - g->pb[2];
  int64_t last = (ow0 + w) * g->s[2] - 1 - g->pb[2] + (g->k[2] - 1) * g->d[2];
  return first >= 0 && last < g->in[2];
}

// Schedule parameters of the depthwise kernel (mlcc_emit_conv_space): 0 =
// the heuristic's choice.
enum { kDwSchedWidth = 0, kDwSchedRows = 1 };

// False if the depthwise kernel does not apply. The tile width is the
// target's lanes L, or node->sched[kDwSchedWidth] when that is a power of
// two from 4 to L.
static bool dw_make_plan(const mlcc_node_t* node, const conv_geom_t* g,
                         const mlcc_target_t* target, dw_plan_t* p) {
  memset(p, 0, sizeof(*p));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (x == NULL || x->dtype != MLCC_DTYPE_F32 || g->nsp > 2 || target == NULL) return false;
  if (g->group != g->c || g->group != g->m || g->cg != 1 || g->mg != 1 || g->group < 2) return false;
  if (conv_packed_mr(node) > 0) return false;
  int L = target->vector_bytes / 4;
  if (L < 4 || L > 16) return false;
  if (g->k[1] * g->k[2] > kDwMaxTaps || g->s[2] > kDwMaxStride) return false;
  if (g->in[1] * g->in[2] >= ((int64_t)1 << 40)) return false;
  int32_t sw = node->sched[kDwSchedWidth];
  if (sw >= 4 && sw < L && (sw & (sw - 1)) == 0) L = sw;
  // Tiles: full-width L, then the row's tail in halving widths (at least 4),
  // the last one partial.
  int64_t ow = 0, ow_n = g->out[2];
  int n = 0;
  while (ow < ow_n && n < kDwMaxTiles) {
    int64_t left = ow_n - ow;
    int w = L;
    while (w > 4 && w / 2 >= left) w /= 2;
    int valid = left < w ? (int)left : w;
    p->tiles[n].ow0 = ow;
    p->tiles[n].w = w;
    p->tiles[n].valid = valid;
    p->tiles[n].clean = valid == w && dw_tile_clean(g, ow, w);
    ow += valid;
    ++n;
  }
  if (ow < ow_n) return false;  // wider than kDwMaxTiles tiles of L
  p->L = L;
  p->n_tiles = n;
  p->units = g->n * g->c;
  return true;
}

typedef struct dw_emit_t {
  mlcc_emit_ctx_t* ctx;
  const mlcc_node_t* node;
  const conv_geom_t* g;
  const mlcc_value_t* x;
  LLVMValueRef xplane;  // X index of [n, c, 0, 0]
  LLVMValueRef yrow;    // Y index of [n, c, oh, 0]
  LLVMValueRef oh;
  LLVMValueRef wv[kDwMaxTaps];  // the channel's tap weights (scalars)
  LLVMValueRef bias;            // scalar
} dw_emit_t;

// Loads tap column |kw| of the tile at |ow0| from the input row at X index
// |xrow| (see dw_tile); NULL when every lane is padding.
static LLVMValueRef dw_load(dw_emit_t* e, LLVMValueRef xrow, LLVMValueRef col0, int64_t ow0_c,
                            int w, int valid, bool clean, int64_t kw) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  int64_t s = g->s[2];
  int ww = (int)(w * s);
  LLVMTypeRef wt = LLVMVectorType(ctx->t_f32, (unsigned)ww);
  LLVMValueRef xptr = mlcc_emit_ptr(ctx, e->x);
  LLVMValueRef xi = iadd(ctx, xrow, iaddc(ctx, col0, kw * g->d[2]));
  LLVMValueRef xv;
  if (clean) {
    LLVMValueRef xp = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, xptr, &xi, 1, "");
    xv = LLVMBuildLoad2(ctx->b, wt, xp, "");
    LLVMSetAlignment(xv, 4);
  } else {
    // Lane j reads column c0 + j: inside [0, W) it loads; the rest (the
    // padding, or columns past the tile) read as 0.
    int64_t c0 = ow0_c * s - g->pb[2] + kw * g->d[2];
    LLVMValueRef m[64];
    int any = 0;
    for (int j = 0; j < ww; ++j) {
      bool on = c0 + j >= 0 && c0 + j < g->in[2] && j / s < valid;
      any |= on;
      m[j] = LLVMConstInt(ctx->t_i1, on ? 1 : 0, 0);
    }
    if (!any) return NULL;  // the tap only meets padding
    // Not inbounds: the first lanes may precede the buffer (masked off).
    LLVMValueRef xp = LLVMBuildGEP2(ctx->b, ctx->t_f32, xptr, &xi, 1, "");
    LLVMTypeRef ov[2] = {wt, ctx->t_ptr};
    LLVMValueRef args[4] = {xp, LLVMConstInt(ctx->t_i32, 4, 0), LLVMConstVector(m, (unsigned)ww),
                            LLVMConstNull(wt)};
    xv = call_overloaded(ctx, "llvm.masked.load", ov, 2, args, 4);
  }
  if (s > 1) {
    LLVMValueRef pick[64];
    for (int i = 0; i < w; ++i) pick[i] = LLVMConstInt(ctx->t_i32, (unsigned long long)(i * s), 0);
    xv = LLVMBuildShuffleVector(ctx->b, xv, LLVMGetUndef(wt), LLVMConstVector(pick, (unsigned)w), "");
  }
  return xv;
}

// One tile at |ow0| (i64 value; |ow0_c| its compile-time value for masks,
// or -1 for a clean tile) of width |w| with |valid| columns, for |nr|
// output rows from e->oh (nr > 1 only for rows whose kernel rows are all
// inside the input, which share input row loads; |checked|: one row whose
// kernel rows may fall outside, each guarded by a branch).
static mlcc_status_t dw_tile(dw_emit_t* e, LLVMValueRef ow0, int64_t ow0_c, int w, int valid,
                             bool clean, int nr, bool checked) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const conv_geom_t* g = e->g;
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, (unsigned)w);
  LLVMValueRef acc[kDwMaxRows];
  for (int r = 0; r < nr; ++r) {
    acc[r] = mlcc_emit_var(ctx, vt, LLVMConstNull(vt));
    LLVMBuildStore(ctx->b, vsplat_w(ctx, e->bias, w), acc[r]);
  }
  LLVMValueRef col0 = iaddc(ctx, imulc(ctx, ow0, g->s[2]), -g->pb[2]);
  LLVMValueRef ih0 = iaddc(ctx, imulc(ctx, e->oh, g->s[1]), -g->pb[1]);
  // Input rows ih0 + ir; output row r uses kernel row kh where
  // ir == r*s + kh*d.
  int64_t nir = (nr - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
  for (int64_t ir = 0; ir < nir; ++ir) {
    bool used = false;
    for (int r = 0; r < nr; ++r) {
      int64_t q = ir - r * g->s[1];
      used |= q >= 0 && q % g->d[1] == 0 && q / g->d[1] < g->k[1];
    }
    if (!used) continue;
    LLVMValueRef ih = iaddc(ctx, ih0, ir);
    mlcc_if_t br;
    if (checked) br = mlcc_emit_if_begin(ctx, in_range(ctx, ih, g->in[1]));
    LLVMValueRef xrow = iadd(ctx, e->xplane, imulc(ctx, ih, g->in[2]));
    for (int64_t kw = 0; kw < g->k[2]; ++kw) {
      LLVMValueRef xv = dw_load(e, xrow, col0, ow0_c, w, valid, clean, kw);
      if (xv == NULL) continue;
      for (int r = 0; r < nr; ++r) {
        int64_t q = ir - r * g->s[1];
        if (q < 0 || q % g->d[1] != 0 || q / g->d[1] >= g->k[1]) continue;
        int t = (int)((q / g->d[1]) * g->k[2] + kw);
        LLVMValueRef a = LLVMBuildLoad2(ctx->b, vt, acc[r], "");
        LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, xv, vsplat_w(ctx, e->wv[t], w), a), acc[r]);
      }
    }
    if (checked) mlcc_emit_if_end(ctx, &br);
  }
  for (int r = 0; r < nr; ++r) {
    LLVMValueRef v = LLVMBuildLoad2(ctx->b, vt, acc[r], "");
    LLVMValueRef yi = iadd(ctx, iaddc(ctx, e->yrow, (int64_t)r * g->out[2]), ow0);
    if (valid == w) {
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output_vec(ctx, e->node, 0, yi, v));
      continue;
    }
    // A partial last tile: its w - valid extra lanes land on the first
    // columns of the next |need| rows, which this same unit writes
    // afterwards (rows go in order; a block of rows emits its tiles
    // last-first), so while those rows are in the plane one vector store
    // (and one vector epilogue) does. The plane's last rows store lane by
    // lane.
    int64_t need = (w - valid + g->out[2] - 1) / g->out[2];
    LLVMValueRef oh = iaddc(ctx, e->oh, r);
    mlcc_if_t br = mlcc_emit_if_begin(
        ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, oh, c64(ctx, g->out[1] - need), ""));
    MLCC_RETURN_IF_ERROR(mlcc_emit_store_output_vec(ctx, e->node, 0, yi, v));
    mlcc_emit_if_else(ctx, &br);
    for (int l = 0; l < valid; ++l) {
      LLVMValueRef sv = LLVMBuildExtractElement(ctx->b, v, LLVMConstInt(ctx->t_i32, (unsigned)l, 0), "");
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, e->node, 0, iaddc(ctx, yi, l), sv));
    }
    mlcc_emit_if_end(ctx, &br);
  }
  return mlcc_ok_status();
}

// The tiles of |nr| output rows from e->oh: runs of clean full tiles as
// loops, edge tiles unrolled; with nr > 1 in reverse order (see dw_tile).
static mlcc_status_t dw_rows(dw_emit_t* e, const dw_plan_t* p, int nr, bool checked) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  int i = nr > 1 ? p->n_tiles - 1 : 0;
  int step = nr > 1 ? -1 : 1;
  while (i >= 0 && i < p->n_tiles) {
    const dw_tile_t* t = &p->tiles[i];
    if (t->clean && t->w == p->L) {
      // A run of clean full tiles (any order within): one runtime loop.
      int j = i;
      while (j >= 0 && j < p->n_tiles && p->tiles[j].clean && p->tiles[j].w == p->L) j += step;
      int first = step > 0 ? i : j + 1;
      int count = step > 0 ? j - i : i - j;
      mlcc_loop_t l_t = mlcc_emit_for(ctx, 0, count, "dwt");
      LLVMValueRef ow0 = iaddc(ctx, imulc(ctx, l_t.iv, p->L), p->tiles[first].ow0);
      MLCC_RETURN_IF_ERROR(dw_tile(e, ow0, -1, p->L, p->L, true, nr, checked));
      mlcc_emit_loop_end(ctx, &l_t);
      i = j;
      continue;
    }
    MLCC_RETURN_IF_ERROR(dw_tile(e, c64(ctx, t->ow0), t->ow0, t->w, t->valid, t->clean, nr, checked));
    i += step;
  }
  return mlcc_ok_status();
}

// Emits the depthwise conv if it applies; sets *handled. With
// ctx->range_begin/end set, computes only units [begin, end).
static mlcc_status_t emit_conv_dw(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                  const conv_geom_t* g, bool* handled) {
  *handled = false;
  dw_plan_t p;
  if (!dw_make_plan(node, g, ctx->target, &p)) return mlcc_ok_status();
  dw_emit_t e;
  memset(&e, 0, sizeof(e));
  e.ctx = ctx;
  e.node = node;
  e.g = g;
  e.x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  const mlcc_value_t* bias = mlcc_node_input(node, 2);
  int64_t ntaps = g->k[1] * g->k[2];
  LLVMValueRef zero = c64(ctx, 0), units = c64(ctx, p.units);
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : zero;
  LLVMValueRef re = ctx->range_end ? ctx->range_end : units;
  rb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, rb, units), zero);
  re = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, re, units), zero);
  mlcc_loop_t l_u = mlcc_emit_loop_begin(ctx, rb, re, 1, "dwu");
  LLVMValueRef ch = LLVMBuildSRem(ctx->b, l_u.iv, c64(ctx, g->c), "");
  for (int64_t t = 0; t < ntaps; ++t) e.wv[t] = mlcc_emit_load(ctx, w, imad(ctx, ch, ntaps, c64(ctx, t)));
  e.bias = bias ? mlcc_emit_load(ctx, bias, ch) : LLVMConstReal(ctx->t_f32, 0.0);
  e.xplane = imulc(ctx, l_u.iv, g->in[1] * g->in[2]);
  // Output rows: the first and last ones whose kernel rows may leave the
  // input one at a time with checks; the rows between in blocks of nr
  // sharing input rows (kDwMaxRows with stride 1, 2 otherwise; leftover rows
  // one at a time).
  int64_t oh_lo = mlcc_ceil_div_nonneg(g->pb[1], g->s[1]);
  int64_t lim = g->in[1] - 1 + g->pb[1] - (g->k[1] - 1) * g->d[1];
  int64_t oh_hi = lim < 0 ? 0 : lim / g->s[1] + 1;
  if (oh_hi > g->out[1]) oh_hi = g->out[1];
  if (oh_lo > oh_hi) oh_lo = oh_hi;
  int nr = g->s[1] == 1 ? kDwMaxRows : 2;
  if (node->sched[kDwSchedRows] > 0 && node->sched[kDwSchedRows] < nr) {
    nr = node->sched[kDwSchedRows];
  }
  int64_t nblk = (oh_hi - oh_lo) / nr;
  struct {
    int64_t from, count, step;
    int nr;
    bool checked;
  } parts[4] = {{0, oh_lo, 1, 1, true},
                {oh_lo, nblk, nr, nr, false},
                {oh_lo + nblk * nr, oh_hi - oh_lo - nblk * nr, 1, 1, false},
                {oh_hi, g->out[1] - oh_hi, 1, 1, true}};
  for (int pi = 0; pi < 4; ++pi) {
    if (parts[pi].count <= 0) continue;
    mlcc_loop_t l_r = mlcc_emit_for(ctx, 0, parts[pi].count, "dwoh");
    e.oh = iaddc(ctx, imulc(ctx, l_r.iv, parts[pi].step), parts[pi].from);
    e.yrow = imulc(ctx, imad(ctx, l_u.iv, g->out[1], e.oh), g->out[2]);
    MLCC_RETURN_IF_ERROR(dw_rows(&e, &p, parts[pi].nr, parts[pi].checked));
    mlcc_emit_loop_end(ctx, &l_r);
  }
  mlcc_emit_loop_end(ctx, &l_u);
  *handled = true;
  return mlcc_ok_status();
}

// The direct kernel family mlcc_emit_conv picks for |node| (the same order:
// depthwise, output-channel vector, channel vector), with its plan in |*p|.
// CONV_PLAN_NONE when the geometry is invalid or only the scalar kernel fits.
typedef enum conv_plan_kind_e {
  CONV_PLAN_NONE,
  CONV_PLAN_DW,
  CONV_PLAN_OCV,
  CONV_PLAN_CVEC,
} conv_plan_kind_t;

typedef struct conv_plans_t {
  conv_geom_t g;
  dw_plan_t dw;
  ocv_plan_t ocv;
  cvec_plan_t cvec;
} conv_plans_t;

static conv_plan_kind_t conv_pick_plan(const mlcc_node_t* node, const mlcc_target_t* target,
                                       conv_plans_t* p) {
  mlcc_status_t s = conv_geom(node, &p->g);
  if (!mlcc_status_is_ok(s)) {
    mlcc_status_free(s);
    return CONV_PLAN_NONE;
  }
  if (dw_make_plan(node, &p->g, target, &p->dw)) return CONV_PLAN_DW;
  if (ocv_make_plan(node, &p->g, target, &p->ocv)) return CONV_PLAN_OCV;
  if (cvec_make_plan(node, &p->g, target, &p->cvec)) return CONV_PLAN_CVEC;
  return CONV_PLAN_NONE;
}

int64_t mlcc_conv_pack_mr(const mlcc_node_t* node, const mlcc_target_t* target) {
  if (node == NULL || node->op != MLCC_OP_CONV || conv_packed_mr(node) > 0) return 0;
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  if (w == NULL || w->dtype != MLCC_DTYPE_F32) return 0;
  // The layout is the default schedule's (schedules come after the passes;
  // a tuned kernel reads these blocks whatever its own block size).
  mlcc_node_t probe = *node;
  memset(probe.sched, 0, sizeof(probe.sched));
  conv_plans_t p;
  switch (conv_pick_plan(&probe, target, &p)) {
    case CONV_PLAN_OCV: return p.ocv.ocb;
    // One output channel per block is already one weight stream.
    case CONV_PLAN_CVEC: return p.cvec.mr > 1 ? p.cvec.mr : 0;
    default: return 0;  // depthwise keeps the ONNX layout: one row per channel
  }
}

void mlcc_conv_pack_weights(const float* w, int64_t m, int64_t group, int64_t per_oc, int64_t mr,
                            float* out) {
  int64_t mg = m / group;
  for (int64_t gi = 0; gi < group; ++gi) {
    for (int64_t b0 = 0; b0 < mg; b0 += mr) {
      int64_t bs = mg - b0 < mr ? mg - b0 : mr;
      int64_t start = gi * mg + b0;
      float* dst = out + start * per_oc;
      for (int64_t k = 0; k < per_oc; ++k) {
        for (int64_t r = 0; r < bs; ++r) dst[k * bs + r] = w[(start + r) * per_oc + k];
      }
    }
  }
}

static int64_t conv_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target) {
  if (mlcc_conv_is_winograd(node)) return mlcc_emit_conv_winograd_parallel_units(node, target);
  conv_plans_t p;
  int64_t units = 0;
  switch (conv_pick_plan(node, target, &p)) {
    case CONV_PLAN_DW: units = p.dw.units; break;
    case CONV_PLAN_OCV: units = p.ocv.units; break;
    case CONV_PLAN_CVEC: units = p.cvec.units; break;
    case CONV_PLAN_NONE: break;
  }
  return units > 1 ? units : 0;
}

int64_t mlcc_conv_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* target) {
  if (node == NULL || node->op != MLCC_OP_CONV || target == NULL) return 0;
  // Depthwise and scalar kernels keep only scalars and vectors on the stack.
  conv_plans_t p;
  switch (conv_pick_plan(node, target, &p)) {
    case CONV_PLAN_OCV: return (int64_t)p.ocv.segw * p.ocv.ocb * 4;
    case CONV_PLAN_CVEC: return cvec_panel_elems(&p.g, &p.cvec) * 4;
    default: return 0;
  }
}

// Y = conv(X, W) + B as specified by ONNX Conv (opsets 1-17). float32/64.
static mlcc_status_t emit_conv(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  // W in the Winograd layout (pack.h): only the Winograd kernel reads it.
  if (mlcc_conv_is_winograd(node)) return mlcc_emit_conv_winograd(ctx, node);
  conv_geom_t g;
  MLCC_RETURN_IF_ERROR(conv_geom(node, &g));
  conv_emit_t e;
  memset(&e, 0, sizeof(e));
  e.ctx = ctx;
  e.node = node;
  e.g = &g;
  e.x = mlcc_node_input(node, 0);
  e.w = mlcc_node_input(node, 1);
  e.bias = mlcc_node_input(node, 2);
  e.dt = node->outputs[0]->dtype;
  e.pack_mr = conv_packed_mr(node);
  MLCC_RETURN_IF_ERROR(check_float(node, e.dt));
  if (e.x->dtype != e.dt || e.w->dtype != e.dt || (e.bias && e.bias->dtype != e.dt)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Conv: X, W, B and Y dtypes differ");
  }
  if (e.bias && mlcc_shape_numel_unchecked(&e.bias->shape) != g.m) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Conv: B must have %lld elements",
                            (long long)g.m);
  }
  bool handled = false;
  MLCC_RETURN_IF_ERROR(emit_conv_dw(ctx, node, &g, &handled));
  if (handled) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(emit_conv_ocv(ctx, node, &g, &handled));
  if (handled) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(emit_conv_vec(ctx, node, &g, &handled));
  if (handled) return mlcc_ok_status();
  e.ft = mlcc_emit_type(ctx, e.dt);
  e.oct = g.mg % 4 == 0 ? 4 : g.mg % 2 == 0 ? 2 : 1;
  // Do kernel rows ever fall outside the input? (compile-time)
  for (int j = 0; j < 2; ++j) {
    int64_t lo = -g.pb[j];
    int64_t hi = (g.out[j] - 1) * g.s[j] - g.pb[j] + (g.k[j] - 1) * g.d[j];
    bool check = lo < 0 || hi >= g.in[j];
    if (j == 0) e.check_d = check; else e.check_h = check;
  }
  // Interior columns [ow_lo, ow_hi): all kw taps in range.
  int64_t sw = g.s[2], pw = g.pb[2];
  int64_t span = (g.k[2] - 1) * g.d[2];
  int64_t ow_lo = mlcc_ceil_div_nonneg(pw, sw);
  int64_t lim = g.in[2] - 1 + pw - span;  // ow*sw <= lim
  int64_t ow_hi = lim < 0 ? 0 : lim / sw + 1;
  if (ow_hi > g.out[2]) ow_hi = g.out[2];
  if (ow_lo > g.out[2]) ow_lo = g.out[2];
  if (ow_hi < ow_lo) ow_hi = ow_lo;
  int64_t elem = (int64_t)mlcc_dtype_size(e.dt);
  int64_t vb = ctx->target && ctx->target->vector_bytes > 0 ? ctx->target->vector_bytes : 16;
  int64_t tmax = 2 * vb / elem;
  if (tmax > kMaxT) tmax = kMaxT;
  if (tmax < 4) tmax = 4;
  int64_t interior = ow_hi - ow_lo;
  int64_t ntile = interior / tmax, rem = interior % tmax;

  mlcc_loop_t l_n = mlcc_emit_for(ctx, 0, g.n, "n");
  mlcc_loop_t l_g = mlcc_emit_for(ctx, 0, g.group, "g");
  mlcc_loop_t l_oc = mlcc_emit_for(ctx, 0, g.mg / e.oct, "oct");
  mlcc_loop_t l_od = mlcc_emit_for(ctx, 0, g.out[0], "od");
  mlcc_loop_t l_oh = mlcc_emit_for(ctx, 0, g.out[1], "oh");
  e.n = l_n.iv;
  e.grp = l_g.iv;
  e.oc0 = iadd(ctx, imulc(ctx, l_g.iv, g.mg), imulc(ctx, l_oc.iv, e.oct));
  e.od = l_od.iv;
  e.oh = l_oh.iv;
  MLCC_RETURN_IF_ERROR(emit_checked(&e, 0, ow_lo));
  if (ntile > 0) {
    mlcc_loop_t l_t = mlcc_emit_for(ctx, 0, ntile, "owt");
    LLVMValueRef ow0 = iaddc(ctx, imulc(ctx, l_t.iv, tmax), ow_lo);
    MLCC_RETURN_IF_ERROR(emit_tile(&e, ow0, (int)tmax));
    mlcc_emit_loop_end(ctx, &l_t);
  }
  if (rem > 0) MLCC_RETURN_IF_ERROR(emit_tile(&e, c64(ctx, ow_lo + ntile * tmax), (int)rem));
  MLCC_RETURN_IF_ERROR(emit_checked(&e, ow_hi, g.out[2]));
  mlcc_emit_loop_end(ctx, &l_oh);
  mlcc_emit_loop_end(ctx, &l_od);
  mlcc_emit_loop_end(ctx, &l_oc);
  mlcc_emit_loop_end(ctx, &l_g);
  mlcc_emit_loop_end(ctx, &l_n);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

// Input coordinate that output coordinate |o| reads through tap |k| in
// spatial dim |j|: t = o + pb - k*d must be a multiple of s in [0, in*s).
// Opens an if on validity and returns the coordinate in |*out_i|.
static mlcc_if_t tap_begin(mlcc_emit_ctx_t* ctx, const conv_geom_t* g, int j, LLVMValueRef o,
                           LLVMValueRef k, LLVMValueRef* out_i) {
  LLVMValueRef t = iadd(ctx, iaddc(ctx, o, g->pb[j]), imulc(ctx, k, -g->d[j]));
  LLVMValueRef ok = in_range(ctx, t, g->in[j] * g->s[j]);
  if (g->s[j] > 1) {
    LLVMValueRef rem = LLVMBuildSRem(ctx->b, t, c64(ctx, g->s[j]), "");
    ok = LLVMBuildAnd(ctx->b, ok, LLVMBuildICmp(ctx->b, LLVMIntEQ, rem, c64(ctx, 0), ""), "");
  }
  mlcc_if_t br = mlcc_emit_if_begin(ctx, ok);
  *out_i = g->s[j] > 1 ? LLVMBuildSDiv(ctx->b, t, c64(ctx, g->s[j]), "") : t;
  return br;
}

// Y = ConvTranspose(X, W) + B (ONNX ConvTranspose 1-17), gathered per output
// element so each is stored once. float32/64.
static mlcc_status_t emit_conv_transpose(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  conv_geom_t g;
  MLCC_RETURN_IF_ERROR(conv_geom(node, &g));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  const mlcc_value_t* bias = mlcc_node_input(node, 2);
  mlcc_dtype_t dt = node->outputs[0]->dtype;
  MLCC_RETURN_IF_ERROR(check_float(node, dt));
  if (x->dtype != dt || w->dtype != dt || (bias && bias->dtype != dt)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "ConvTranspose: X, W, B and Y dtypes differ");
  }
  if (bias && mlcc_shape_numel_unchecked(&bias->shape) != g.m) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "ConvTranspose: B must have %lld elements", (long long)g.m);
  }
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  mlcc_loop_t l_n = mlcc_emit_for(ctx, 0, g.n, "n");
  mlcc_loop_t l_g = mlcc_emit_for(ctx, 0, g.group, "g");
  mlcc_loop_t l_m = mlcc_emit_for(ctx, 0, g.mg, "ocg");
  mlcc_loop_t l_od = mlcc_emit_for(ctx, 0, g.out[0], "od");
  mlcc_loop_t l_oh = mlcc_emit_for(ctx, 0, g.out[1], "oh");
  mlcc_loop_t l_ow = mlcc_emit_for(ctx, 0, g.out[2], "ow");
  LLVMValueRef oc = imad(ctx, l_g.iv, g.mg, l_m.iv);
  LLVMValueRef init = bias ? mlcc_emit_load(ctx, bias, oc) : mlcc_emit_const(ctx, dt, 0.0);
  LLVMValueRef acc = mlcc_emit_var(ctx, ft, init);
  mlcc_loop_t l_ic = mlcc_emit_for(ctx, 0, g.cg, "ic");
  LLVMValueRef ic_abs = imad(ctx, l_g.iv, g.cg, l_ic.iv);
  mlcc_loop_t l_kd = mlcc_emit_for(ctx, 0, g.k[0], "kd");
  LLVMValueRef id, ih, iw;
  mlcc_if_t if_d = tap_begin(ctx, &g, 0, l_od.iv, l_kd.iv, &id);
  mlcc_loop_t l_kh = mlcc_emit_for(ctx, 0, g.k[1], "kh");
  mlcc_if_t if_h = tap_begin(ctx, &g, 1, l_oh.iv, l_kh.iv, &ih);
  mlcc_loop_t l_kw = mlcc_emit_for(ctx, 0, g.k[2], "kw");
  mlcc_if_t if_w = tap_begin(ctx, &g, 2, l_ow.iv, l_kw.iv, &iw);
  LLVMValueRef xi = imad(ctx, l_n.iv, g.c, ic_abs);
  xi = imad(ctx, xi, g.in[0], id);
  xi = imad(ctx, xi, g.in[1], ih);
  xi = imad(ctx, xi, g.in[2], iw);
  LLVMValueRef wi = imad(ctx, ic_abs, g.mg, l_m.iv);
  wi = imad(ctx, wi, g.k[0], l_kd.iv);
  wi = imad(ctx, wi, g.k[1], l_kh.iv);
  wi = imad(ctx, wi, g.k[2], l_kw.iv);
  LLVMValueRef prod = mlcc_emit_fmuladd(ctx, mlcc_emit_load(ctx, x, xi),
                                        mlcc_emit_load(ctx, w, wi), load_var(ctx, ft, acc));
  LLVMBuildStore(ctx->b, prod, acc);
  mlcc_emit_if_end(ctx, &if_w);
  mlcc_emit_loop_end(ctx, &l_kw);
  mlcc_emit_if_end(ctx, &if_h);
  mlcc_emit_loop_end(ctx, &l_kh);
  mlcc_emit_if_end(ctx, &if_d);
  mlcc_emit_loop_end(ctx, &l_kd);
  mlcc_emit_loop_end(ctx, &l_ic);
  LLVMValueRef yi = imad(ctx, l_n.iv, g.m, oc);
  yi = imad(ctx, yi, g.out[0], l_od.iv);
  yi = imad(ctx, yi, g.out[1], l_oh.iv);
  yi = imad(ctx, yi, g.out[2], l_ow.iv);
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, yi, load_var(ctx, ft, acc)));
  mlcc_emit_loop_end(ctx, &l_ow);
  mlcc_emit_loop_end(ctx, &l_oh);
  mlcc_emit_loop_end(ctx, &l_od);
  mlcc_emit_loop_end(ctx, &l_m);
  mlcc_emit_loop_end(ctx, &l_g);
  mlcc_emit_loop_end(ctx, &l_n);
  return mlcc_ok_status();
}

// FLOPs (kernels.h) of Conv and ConvTranspose: W may be in a packed layout
// (e.g. Winograd tiles): the logical kernel is kernel_shape when given, else
// W's spatial dims. Conv: every output element sums C/group*K products.
// ConvTranspose: every input element scatters into M/group*K outputs.
static int64_t conv_flops(const mlcc_node_t* n) {
  const mlcc_value_t* a = mlcc_node_input(n, 0);
  const mlcc_value_t* w = mlcc_node_input(n, 1);
  if (w == NULL || !w->shape_known || w->shape.rank < 2) return -1;
  const int64_t* ks = NULL;
  uint32_t nks = 0;
  mlcc_status_t st = mlcc_node_attr_ints(n, "kernel_shape", &ks, &nks);
  if (st != NULL) {
    mlcc_status_free(st);
    nks = 0;
  }
  if (nks != 0 && nks != (uint32_t)(w->shape.rank - 2)) return -1;
  int64_t k = w->shape.dims[1];
  for (int32_t d = 2; d < w->shape.rank; ++d) k *= nks ? ks[d - 2] : w->shape.dims[d];
  if (n->op == MLCC_OP_CONV) return 2 * k * mlcc_kernels_numel(mlcc_node_output(n, 0));
  return 2 * k * mlcc_kernels_numel(a);
}

// Every (architecture, vector width) the emitters plan for: x86-64 with AVX2
// (the default x86-64-v3) and with AVX-512, aarch64 (NEON), riscv64 without
// and with V (targets/target.c, vector_bytes_for) for NAME_STACK_SIZE. The plans read only these
// two fields of a target.
static const struct {
  mlcc_arch_t arch;
  int32_t vector_bytes;
} kTargets[] = {
    {MLCC_ARCH_X86_64, 32}, {MLCC_ARCH_X86_64, 64},  {MLCC_ARCH_AARCH64, 16},
    {MLCC_ARCH_RISCV64, 16}, {MLCC_ARCH_RISCV64, 32},
};

enum { kViewMaxAttrs = 32 };

// A Conv as the importer produced it: the pack-weights pass rewrote W (and
// added a layout attribute) for the compiling target only; every other
// target would have packed the ONNX W for itself.
typedef struct conv_view_t {
  mlcc_node_t node;
  mlcc_value_t* inputs[3];
  mlcc_value_t w;
  mlcc_attr_t attrs[kViewMaxAttrs];
} conv_view_t;

static const mlcc_node_t* conv_onnx_view(const mlcc_node_t* node, conv_view_t* v) {
  if (node->n_inputs < 2 || node->n_inputs > 3 || node->n_attrs > kViewMaxAttrs ||
      node->inputs[1] == NULL) {
    return node;
  }
  memset(v, 0, sizeof(*v));
  v->node = *node;
  memcpy(v->inputs, node->inputs, node->n_inputs * sizeof(node->inputs[0]));
  v->node.inputs = v->inputs;
  v->node.attrs = v->attrs;
  v->node.n_attrs = 0;
  bool winograd = false;
  for (uint32_t i = 0; i < node->n_attrs; ++i) {
    const char* name = node->attrs[i].name != NULL ? node->attrs[i].name : "";
    if (strcmp(name, MLCC_CONV_WINOGRAD_ATTR) == 0) {
      winograd = true;
    } else if (strcmp(name, MLCC_CONV_PACKED_ATTR) != 0) {
      v->attrs[v->node.n_attrs++] = node->attrs[i];
    }
  }
  if (winograd) {
    // pack.h: the layout only exists for 2-D 3x3 group-1 convs; W was
    // [M, C, 3, 3].
    const mlcc_value_t* x = mlcc_node_input(node, 0);
    const mlcc_value_t* y = mlcc_node_output(node, 0);
    if (x == NULL || y == NULL || x->shape.rank != 4 || y->shape.rank != 4) return node;
    v->w = *node->inputs[1];
    v->w.shape.rank = 4;
    v->w.shape.dims[0] = y->shape.dims[1];
    v->w.shape.dims[1] = x->shape.dims[1];
    v->w.shape.dims[2] = 3;
    v->w.shape.dims[3] = 3;
    v->inputs[1] = &v->w;
  }
  return &v->node;
}

static bool has_attr(const mlcc_node_t* node, const char* name) {
  for (uint32_t i = 0; i < node->n_attrs; ++i) {
    if (node->attrs[i].name != NULL && strcmp(node->attrs[i].name, name) == 0) return true;
  }
  return false;
}

// Stack bytes (kernels.h) of a Conv, W in the ONNX layout. |only|: the one
// target to plan for (a bare-metal target's own bound), or NULL for every
// target of kTargets.
static int64_t conv_stack_bytes_any(const mlcc_node_t* node, const mlcc_target_t* only) {
  conv_view_t view;
  const mlcc_node_t* onnx = conv_onnx_view(node, &view);
  int64_t best = 0;
  size_t n = only != NULL ? 1 : sizeof(kTargets) / sizeof(kTargets[0]);
  for (size_t i = 0; i < n; ++i) {
    mlcc_target_t t;
    memset(&t, 0, sizeof(t));
    t.arch = only != NULL ? only->arch : kTargets[i].arch;
    t.vector_bytes = only != NULL ? only->vector_bytes : kTargets[i].vector_bytes;
    // Either kernel may run: -fno-winograd keeps the direct one. For one
    // target the graph says which (pack-weights marked the Winograd convs).
    int64_t w = only == NULL || has_attr(node, MLCC_CONV_WINOGRAD_ATTR)
                    ? mlcc_conv_winograd_stack_bytes(onnx, &t)
                    : 0;
    int64_t d = mlcc_conv_stack_bytes(onnx, &t);
    if (w > best) best = w;
    if (d > best) best = d;
  }
  return best;
}

// The schedule space (kernels.h, docs/tuning.md), version 2. Depthwise
// kernel: "width" of its column tiles (powers of two from 4 to the target's
// lanes, those whose row still fits kDwMaxTiles tiles) and "rows" of output
// rows sharing input rows (1..4 with vertical stride 1, 1..2 otherwise).
// Channel-vector kernel (x86 AVX-512): "width", columns per row segment
// (1..min(kOcvMaxOw, output columns)), and "vectors" of L channels per
// block (1..kOcvMaxNv; the channels a multiple of the block, the packed
// block a multiple of it, within the registers: width*vectors + vectors <=
// 30). Pixel-vector kernel (dense and grouped direct convs): "vectors" of L
// pixels per tile (1..min(kVecMaxNv, the output's vectors)) and "block"
// output channels per register block (1..min(kVecMaxMr, channels per
// group)), jointly within the vector registers: block*vectors + vectors + 1
// <= 16 on AVX2/SSE, 32 elsewhere (cvec_regs), the heuristic's block for
// the point's vectors when "block" is 0. Winograd kernel (conv_winograd.h):
// "rows" of tiles per block (within the stack budget) and "vectors" of
// tiles per GEMM chunk. No point changes the weights' layout or which
// kernel runs (Winograd or direct is the pack-weights pass's choice); the
// pixel-vector and Winograd points change the parallel units and the stack
// (both follow the node's schedule), the channel-vector points its
// transpose slot. The scalar kernel has no parameter: only its default is
// valid.
static bool conv_sched_plan(const mlcc_node_t* node, const mlcc_target_t* target,
                            mlcc_node_t* probe, conv_plans_t* p, conv_plan_kind_t* kind) {
  if (node == NULL || node->op != MLCC_OP_CONV || target == NULL ||
      mlcc_conv_is_winograd(node)) {
    return false;
  }
  *probe = *node;
  memset(probe->sched, 0, sizeof(probe->sched));
  *kind = conv_pick_plan(probe, target, p);
  return *kind != CONV_PLAN_NONE;
}

static uint32_t conv_sched_values(const mlcc_node_t* node, const mlcc_target_t* target,
                                  uint32_t param, int32_t* out, uint32_t cap) {
  if (node != NULL && node->op == MLCC_OP_CONV && mlcc_conv_is_winograd(node)) {
    return mlcc_conv_winograd_sched_values(node, target, param, out, cap);
  }
  mlcc_node_t probe;
  conv_plans_t pl;
  conv_plan_kind_t kind;
  if (!conv_sched_plan(node, target, &probe, &pl, &kind)) return 0;
  const conv_geom_t* g = &pl.g;
  uint32_t count = 0;
  if (kind == CONV_PLAN_DW && param == kDwSchedWidth) {
    for (int32_t w = 4; w <= pl.dw.L; w *= 2) {
      probe.sched[kDwSchedWidth] = w;
      dw_plan_t q;
      if (!dw_make_plan(&probe, g, target, &q)) continue;
      if (count < cap) out[count] = w;
      ++count;
    }
  } else if (kind == CONV_PLAN_DW && param == kDwSchedRows) {
    int hi = g->s[1] == 1 ? kDwMaxRows : 2;
    for (int32_t r = 1; r <= hi; ++r) {
      if (count < cap) out[count] = r;
      ++count;
    }
  } else if (kind == CONV_PLAN_OCV && param == kOcvSchedWidth) {
    for (int32_t w = 1; w <= kOcvMaxOw && w <= g->out[2]; ++w) {
      if (count < cap) out[count] = w;
      ++count;
    }
  } else if (kind == CONV_PLAN_OCV && param == kOcvSchedVectors) {
    for (int32_t v = 1; v <= kOcvMaxNv; ++v) {
      if (count < cap) out[count] = v;
      ++count;
    }
  } else if (kind == CONV_PLAN_CVEC && param == kCvSchedVectors) {
    int64_t nvec = (g->out[1] * g->out[2] + pl.cvec.L - 1) / pl.cvec.L;
    for (int32_t v = 1; v <= kVecMaxNv && v <= nvec; ++v) {
      if (count < cap) out[count] = v;
      ++count;
    }
  } else if (kind == CONV_PLAN_CVEC && param == kCvSchedBlock) {
    for (int32_t r = 1; r <= kVecMaxMr && r <= g->mg; ++r) {
      if (count < cap) out[count] = r;
      ++count;
    }
  }
  return count;
}

// Joint constraint: the pixel-vector point's plan exists and its
// accumulators, X vectors and one broadcast fit the vector registers.
static bool conv_sched_valid(const mlcc_node_t* node, const mlcc_target_t* target,
                             const int32_t sched[MLCC_SCHED_MAX_PARAMS]) {
  // Winograd: its two parameters are independent (each value is checked).
  if (node != NULL && node->op == MLCC_OP_CONV && mlcc_conv_is_winograd(node)) return true;
  mlcc_node_t probe;
  conv_plans_t pl;
  conv_plan_kind_t kind;
  if (!conv_sched_plan(node, target, &probe, &pl, &kind)) return false;
  if (kind == CONV_PLAN_DW) return true;  // the depthwise values need no joint check
  memcpy(probe.sched, sched, sizeof(probe.sched));
  if (kind == CONV_PLAN_OCV) {
    // The point's plan must exist and honour both values (a block that the
    // registers, the channels or the packed block do not allow is no point).
    ocv_plan_t o;
    if (!ocv_make_plan(&probe, &pl.g, target, &o)) return false;
    int64_t want_w = sched[kOcvSchedWidth] < pl.g.out[2] ? sched[kOcvSchedWidth] : pl.g.out[2];
    return (sched[kOcvSchedWidth] == 0 || o.segw == want_w) &&
           (sched[kOcvSchedVectors] == 0 || o.nv == sched[kOcvSchedVectors]);
  }
  cvec_plan_t q;
  if (!cvec_make_plan(&probe, &pl.g, target, &q)) return false;
  return q.mr * q.nv + q.nv + 1 <= cvec_regs(target, q.L);
}

static const mlcc_sched_space_t mlcc_emit_conv_space = {
    .version = 2,
    .n_params = 4,
    .names = {"width", "rows", "vectors", "block"},
    .values = conv_sched_values,
    .valid = conv_sched_valid,
};

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_conv = {
    .emit = emit_conv,
    .parallel_units = conv_parallel_units,
    .stack_bytes = conv_stack_bytes_any,
    .flops = conv_flops,
    .sched_space = &mlcc_emit_conv_space,
};
const mlcc_emitter_t mlcc_emit_conv_transpose = {.emit = emit_conv_transpose, .flops = conv_flops};

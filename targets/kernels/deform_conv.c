// SPDX-License-Identifier: Apache-2.0
// Kernel emitter of DeformConv 19/22 (ops.def "Sampling and misc spatial"),
// 2-D: a convolution whose every kernel tap reads X at its own displaced,
// bilinearly interpolated position (zero outside the image), scaled by the
// optional mask. Geometry and shapes come from mlcc_deform_conv_resolve
// (ir/ops/spatial_misc.c), so inference and the kernel agree. Its own
// kernel: it shares no code with targets/kernels/conv.c. Offsets are data
// read at run time and sanitized before they address memory, so NaN or huge
// offsets never read out of bounds (they sample 0).
#include <stdint.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/spatial_misc.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

// Column buffers up to this many elements (C/group * kH * kW) live on the
// stack and are filled once per output position; larger kernels resample
// per output channel instead, so the stack stays bounded.
#define DC_MAX_COLUMN 1024

static mlcc_dtype_t dc_compute_dtype(const mlcc_value_t* x) {
  return x->dtype == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32;
}

static LLVMValueRef dc_load(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx,
                            mlcc_dtype_t ct) {
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, idx), v->dtype, ct);
}

// The loop indices of one sample: batch |n|, absolute input channel |c|,
// kernel tap (|i|, |j|) and output position (|oh|, |ow|).
typedef struct dc_at_t {
  LLVMValueRef n, c, i, j, oh, ow;
} dc_at_t;

// mask * bilinear(X[n, c], h, w) with h = oh*sH - padH + i*dH + offset_h and
// w likewise (the ONNX DeformConv reference): a point with h <= -1, h >= H,
// w <= -1 or w >= W (or NaN) samples 0; of the four taps around it, those
// outside the image weigh 0.
static LLVMValueRef dc_sample(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                              const mlcc_deform_conv_t* g, const dc_at_t* at, mlcc_dtype_t ct_dt) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* off = mlcc_node_input(node, 2);
  const mlcc_value_t* mask = g->has_mask ? mlcc_node_input(node, 4) : NULL;
  LLVMTypeRef ct = mlcc_emit_type(ctx, ct_dt);
  const int64_t taps = g->kh * g->kw, plane = g->oh * g->ow;
  LLVMValueRef og = LLVMBuildSDiv(ctx->b, at->c, c64(ctx, g->c / g->offset_group), "og");
  LLVMValueRef tap = imad(ctx, at->i, g->kw, at->j);
  LLVMValueRef pos = imad(ctx, at->oh, g->ow, at->ow);
  // offset [N, og, kH, kW, 2, oH, oW]; mask [N, og, kH, kW, oH, oW].
  LLVMValueRef otap = imad(ctx, imad(ctx, at->n, g->offset_group, og), taps, tap);
  LLVMValueRef oidx = imad(ctx, imulc(ctx, otap, 2), plane, pos);
  LLVMValueRef dh = dc_load(ctx, off, oidx, ct_dt);
  LLVMValueRef dw = dc_load(ctx, off, iaddc(ctx, oidx, plane), ct_dt);
  LLVMValueRef base_h =
      iaddc(ctx, iadd(ctx, imulc(ctx, at->oh, g->stride[0]), imulc(ctx, at->i, g->dilation[0])),
            -g->pad_begin[0]);
  LLVMValueRef base_w =
      iaddc(ctx, iadd(ctx, imulc(ctx, at->ow, g->stride[1]), imulc(ctx, at->j, g->dilation[1])),
            -g->pad_begin[1]);
  LLVMValueRef ph = fp_add(ctx, LLVMBuildSIToFP(ctx->b, base_h, ct, ""), dh);
  LLVMValueRef pw = fp_add(ctx, LLVMBuildSIToFP(ctx->b, base_w, ct, ""), dw);
  LLVMValueRef zero = LLVMConstReal(ct, 0), one = LLVMConstReal(ct, 1);
  if (g->h == 0 || g->w == 0) return zero;  // an empty image samples 0 everywhere
  LLVMValueRef in =
      LLVMBuildAnd(ctx->b,
                   LLVMBuildAnd(ctx->b, fcmp(ctx, LLVMRealOGT, ph, LLVMConstReal(ct, -1)),
                                fcmp(ctx, LLVMRealOLT, ph, LLVMConstReal(ct, (double)g->h)), ""),
                   LLVMBuildAnd(ctx->b, fcmp(ctx, LLVMRealOGT, pw, LLVMConstReal(ct, -1)),
                                fcmp(ctx, LLVMRealOLT, pw, LLVMConstReal(ct, (double)g->w)), ""),
                   "in");
  // Inside, floor(p) is in [-1, L-1], so the conversions below are defined.
  LLVMValueRef p[2] = {sel(ctx, in, ph, zero), sel(ctx, in, pw, zero)};
  const int64_t len[2] = {g->h, g->w};
  LLVMValueRef idx[2][2], wt[2][2];
  for (int a = 0; a < 2; ++a) {
    LLVMValueRef fl = mlcc_emit_intrinsic(ctx, "llvm.floor", &p[a], 1);
    LLVMValueRef frac = fp_sub(ctx, p[a], fl);
    LLVMValueRef lo = LLVMBuildFPToSI(ctx->b, fl, ctx->t_i64, "");
    for (int k = 0; k < 2; ++k) {
      LLVMValueRef t = iaddc(ctx, lo, k);
      LLVMValueRef valid = LLVMBuildAnd(ctx->b, icmp(ctx, LLVMIntSGE, t, c64(ctx, 0)),
                                        icmp(ctx, LLVMIntSLT, t, c64(ctx, len[a])), "");
      idx[a][k] = clamp_index(ctx, t, len[a]);
      wt[a][k] = sel(ctx, valid, k == 0 ? fp_sub(ctx, one, frac) : frac, zero);
    }
  }
  LLVMValueRef plane_base = imulc(ctx, imad(ctx, at->n, g->c, at->c), g->h * g->w);
  LLVMValueRef acc = NULL;
  for (int a = 0; a < 2; ++a) {
    LLVMValueRef row = NULL;
    for (int b = 0; b < 2; ++b) {
      LLVMValueRef v =
          dc_load(ctx, x, iadd(ctx, plane_base, imad(ctx, idx[0][a], g->w, idx[1][b])), ct_dt);
      v = fp_mul(ctx, wt[1][b], v);
      row = row ? fp_add(ctx, row, v) : v;
    }
    row = fp_mul(ctx, wt[0][a], row);
    acc = acc ? fp_add(ctx, acc, row) : row;
  }
  acc = sel(ctx, in, acc, zero);
  if (mask != NULL) {
    LLVMValueRef midx = imad(ctx, otap, plane, pos);
    acc = fp_mul(ctx, acc, dc_load(ctx, mask, midx, ct_dt));
  }
  return acc;
}

static bool dc_uses_column(const mlcc_deform_conv_t* g) {
  return (g->c / g->group) * g->kh * g->kw <= DC_MAX_COLUMN;
}

// X [N,C,H,W], W [oC,C/group,kH,kW], offset, [B], [mask] -> Y [N,oC,oH,oW]
// (ONNX DeformConv 19/22; 2-D only, refused earlier otherwise). Y[n,o,:,:] =
// B[o] + sum over the group's channels c and taps (i, j) of W[o,c,i,j] *
// sample(n, c, i, j). With a column of at most DC_MAX_COLUMN samples the
// samples of one output position are computed once into a stack column and
// every output channel of the group reads them; otherwise each output
// channel resamples. Computed in float (double for double inputs).
static mlcc_status_t emit_deform_conv(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  mlcc_deform_conv_t g;
  MLCC_RETURN_IF_ERROR(mlcc_deform_conv_resolve(node, &g));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  const mlcc_value_t* bias = g.has_bias ? mlcc_node_input(node, 3) : NULL;
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (mlcc_shape_numel_unchecked(&y->shape) == 0) return mlcc_ok_status();
  const mlcc_dtype_t ct_dt = dc_compute_dtype(x);
  LLVMTypeRef ct = mlcc_emit_type(ctx, ct_dt);
  const int64_t cg = g.c / g.group, ocg = g.oc / g.group, col = cg * g.kh * g.kw;
  mlcc_status_t st = mlcc_ok_status();
  dc_at_t at;
  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, g.n, "n");
  at.n = ln.iv;
  if (dc_uses_column(&g)) {
    LLVMValueRef cols = mlcc_emit_entry_array(ctx, ct, col, 16, "dc_col");
    mlcc_loop_t lg = mlcc_emit_for(ctx, 0, g.group, "g");
    mlcc_loop_t lh = mlcc_emit_for(ctx, 0, g.oh, "oh");
    mlcc_loop_t lw = mlcc_emit_for(ctx, 0, g.ow, "ow");
    at.oh = lh.iv;
    at.ow = lw.iv;
    {
      mlcc_loop_t lc = mlcc_emit_for(ctx, 0, cg, "c");
      mlcc_loop_t li = mlcc_emit_for(ctx, 0, g.kh, "i");
      mlcc_loop_t lj = mlcc_emit_for(ctx, 0, g.kw, "j");
      at.c = imad(ctx, lg.iv, cg, lc.iv);
      at.i = li.iv;
      at.j = lj.iv;
      LLVMValueRef v = dc_sample(ctx, node, &g, &at, ct_dt);
      LLVMValueRef k = imad(ctx, imad(ctx, lc.iv, g.kh, li.iv), g.kw, lj.iv);
      LLVMBuildStore(ctx->b, v, LLVMBuildInBoundsGEP2(ctx->b, ct, cols, &k, 1, ""));
      mlcc_emit_loop_end(ctx, &lj);
      mlcc_emit_loop_end(ctx, &li);
      mlcc_emit_loop_end(ctx, &lc);
    }
    mlcc_loop_t lo = mlcc_emit_for(ctx, 0, ocg, "o");
    LLVMValueRef o = imad(ctx, lg.iv, ocg, lo.iv);
    LLVMValueRef init = bias ? dc_load(ctx, bias, o, ct_dt) : LLVMConstReal(ct, 0);
    LLVMValueRef acc = mlcc_emit_var(ctx, ct, init);
    mlcc_loop_t lk = mlcc_emit_for(ctx, 0, col, "k");
    LLVMValueRef wv = dc_load(ctx, w, imad(ctx, o, col, lk.iv), ct_dt);
    LLVMValueRef cv =
        LLVMBuildLoad2(ctx->b, ct, LLVMBuildInBoundsGEP2(ctx->b, ct, cols, &lk.iv, 1, ""), "");
    LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, wv, cv, load_var(ctx, ct, acc)), acc);
    mlcc_emit_loop_end(ctx, &lk);
    LLVMValueRef yidx = imad(ctx, imad(ctx, imad(ctx, ln.iv, g.oc, o), g.oh, lh.iv), g.ow, lw.iv);
    st = mlcc_emit_store_output(ctx, node, 0, yidx,
                                mlcc_emit_convert(ctx, load_var(ctx, ct, acc), ct_dt, y->dtype));
    mlcc_emit_loop_end(ctx, &lo);
    mlcc_emit_loop_end(ctx, &lw);
    mlcc_emit_loop_end(ctx, &lh);
    mlcc_emit_loop_end(ctx, &lg);
  } else {
    mlcc_loop_t lo = mlcc_emit_for(ctx, 0, g.oc, "o");
    mlcc_loop_t lh = mlcc_emit_for(ctx, 0, g.oh, "oh");
    mlcc_loop_t lw = mlcc_emit_for(ctx, 0, g.ow, "ow");
    at.oh = lh.iv;
    at.ow = lw.iv;
    LLVMValueRef grp = LLVMBuildSDiv(ctx->b, lo.iv, c64(ctx, ocg), "grp");
    LLVMValueRef init = bias ? dc_load(ctx, bias, lo.iv, ct_dt) : LLVMConstReal(ct, 0);
    LLVMValueRef acc = mlcc_emit_var(ctx, ct, init);
    mlcc_loop_t lc = mlcc_emit_for(ctx, 0, cg, "c");
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, g.kh, "i");
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, g.kw, "j");
    at.c = imad(ctx, grp, cg, lc.iv);
    at.i = li.iv;
    at.j = lj.iv;
    LLVMValueRef v = dc_sample(ctx, node, &g, &at, ct_dt);
    LLVMValueRef k = imad(ctx, imad(ctx, lc.iv, g.kh, li.iv), g.kw, lj.iv);
    LLVMValueRef wv = dc_load(ctx, w, imad(ctx, lo.iv, col, k), ct_dt);
    LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, wv, v, load_var(ctx, ct, acc)), acc);
    mlcc_emit_loop_end(ctx, &lj);
    mlcc_emit_loop_end(ctx, &li);
    mlcc_emit_loop_end(ctx, &lc);
    LLVMValueRef yidx =
        imad(ctx, imad(ctx, imad(ctx, ln.iv, g.oc, lo.iv), g.oh, lh.iv), g.ow, lw.iv);
    st = mlcc_emit_store_output(ctx, node, 0, yidx,
                                mlcc_emit_convert(ctx, load_var(ctx, ct, acc), ct_dt, y->dtype));
    mlcc_emit_loop_end(ctx, &lw);
    mlcc_emit_loop_end(ctx, &lh);
    mlcc_emit_loop_end(ctx, &lo);
  }
  mlcc_emit_loop_end(ctx, &ln);
  return st;
}

// Stack bytes (kernels.h): the column buffer when it is used.
static int64_t deform_conv_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* only) {
  (void)only;
  mlcc_deform_conv_t g;
  mlcc_status_t s = mlcc_deform_conv_resolve(node, &g);
  if (s != NULL) {
    mlcc_status_free(s);
    return 0;
  }
  if (!dc_uses_column(&g)) return 0;
  int64_t elem = dc_compute_dtype(mlcc_node_input(node, 0)) == MLCC_DTYPE_F64 ? 8 : 4;
  return (g.c / g.group) * g.kh * g.kw * elem + 16;
}

// FLOPs (--profile): a multiply-add per weight tap and output element, and
// about 12 for each bilinear sample (4 taps, weights, mask).
static int64_t deform_conv_flops(const mlcc_node_t* node) {
  mlcc_deform_conv_t g;
  mlcc_status_t s = mlcc_deform_conv_resolve(node, &g);
  if (s != NULL) {
    mlcc_status_free(s);
    return -1;
  }
  int64_t col = (g.c / g.group) * g.kh * g.kw, pos = g.n * g.oh * g.ow;
  int64_t samples = dc_uses_column(&g) ? pos * g.group * col : pos * g.oc * col;
  return 2 * pos * g.oc * col + 12 * samples;
}

const mlcc_emitter_t mlcc_emit_deform_conv = {
    .emit = emit_deform_conv,
    .stack_bytes = deform_conv_stack_bytes,
    .flops = deform_conv_flops,
};

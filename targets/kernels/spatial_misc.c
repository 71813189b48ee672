// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the sampling and misc spatial ops (ops.def "Sampling
// and misc spatial"): GridSample 16, RoiAlign 10/16, MaxUnpool 9/11,
// Upsample 7-9, ReverseSequence 10, Det 11 and AffineGrid 20. Scalar loop nests through the
// emit.h toolkit; shapes and attributes were validated by
// ir/ops/spatial_misc.c. Data-dependent coordinates and indices are
// sanitized before they address memory, so NaN/huge grid values, rois or
// out-of-range indices never read or write out of bounds.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/spatial_misc.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static int64_t numel(const mlcc_shape_t* s) { return mlcc_shape_numel_unchecked(s); }

static LLVMValueRef fc(LLVMTypeRef t, double v) { return LLVMConstReal(t, v); }
static LLVMValueRef intr1(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x) {
  return mlcc_emit_intrinsic(ctx, name, &x, 1);
}
static LLVMValueRef intr2(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x,
                          LLVMValueRef y) {
  LLVMValueRef a[2] = {x, y};
  return mlcc_emit_intrinsic(ctx, name, a, 2);
}
// minnum/maxnum return the non-NaN operand, so a NaN |x| becomes |lo|.
static LLVMValueRef fclamp(mlcc_emit_ctx_t* ctx, LLVMValueRef x, double lo, double hi) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return intr2(ctx, "llvm.minnum", intr2(ctx, "llvm.maxnum", x, fc(t, lo)), fc(t, hi));
}
static LLVMValueRef iclamp(mlcc_emit_ctx_t* ctx, LLVMValueRef i, int64_t lo, int64_t hi) {
  i = sel(ctx, icmp(ctx, LLVMIntSLT, i, c64(ctx, lo)), c64(ctx, lo), i);
  return sel(ctx, icmp(ctx, LLVMIntSGT, i, c64(ctx, hi)), c64(ctx, hi), i);
}
static LLVMValueRef to_i64(mlcc_emit_ctx_t* ctx, LLVMValueRef f) {
  return LLVMBuildFPToSI(ctx->b, f, ctx->t_i64, "");
}
static LLVMValueRef to_fp(mlcc_emit_ctx_t* ctx, LLVMValueRef i, LLVMTypeRef t) {
  return LLVMBuildSIToFP(ctx->b, i, t, "");
}
// Element |idx| of |value| converted to float dtype |ct|'s computational type.
static LLVMValueRef load_as(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value, LLVMValueRef idx,
                            mlcc_dtype_t ct) {
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, value, idx), value->dtype, ct);
}
// A private constant global array of |n| elements of |t|.
static LLVMValueRef const_table(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef* elems,
                                unsigned n, const char* name) {
  LLVMValueRef g = LLVMAddGlobal(ctx->module, LLVMArrayType(t, n), name);
  LLVMSetInitializer(g, LLVMConstArray(t, elems, n));
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddr(g, 1);
  return g;
}
// Element |idx| of array |base| (a table or scratch) of element type |t|.
static LLVMValueRef elem_ptr(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef base,
                             LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(ctx->b, t, base, &idx, 1, "");
}
static LLVMValueRef elem_load(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef base,
                              LLVMValueRef idx) {
  return LLVMBuildLoad2(ctx->b, t, elem_ptr(ctx, t, base, idx), "");
}
// An |n|-element array of |t| on the stack, allocated in the entry block.
static LLVMValueRef entry_array(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, unsigned n) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(ctx->b);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(ctx->entry_bb);
  if (term != NULL) {
    LLVMPositionBuilderBefore(ctx->b, term);
  } else {
    LLVMPositionBuilderAtEnd(ctx->b, ctx->entry_bb);
  }
  LLVMValueRef a = LLVMBuildAlloca(ctx->b, LLVMArrayType(t, n), "scratch");
  LLVMPositionBuilderAtEnd(ctx->b, cur);
  return a;
}
static int find_name(const char* s, const char* const* names, int n) {
  for (int i = 0; i < n; ++i) {
    if (strcmp(s, names[i]) == 0) return i;
  }
  return -1;
}
static mlcc_status_t bad_attr(const mlcc_node_t* node, const char* attr, const char* value) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s (opset %d) attribute '%s' = '%s' is "
                          "not supported", mlcc_op_name(node->op), node->opset, attr, value);
}

//===----------------------------------------------------------------------===//
// GridSample 16
//===----------------------------------------------------------------------===//

enum { GS_BILINEAR = 0, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS = 0, GS_BORDER, GS_REFLECTION };

// Reflects |x| into [lo, hi] by repeated mirroring at the borders (identity
// inside): the ONNX/ORT GridSample reflection rule.
static LLVMValueRef gs_reflect(mlcc_emit_ctx_t* ctx, LLVMValueRef x, double lo, double hi) {
  LLVMTypeRef t = LLVMTypeOf(x);
  double range = hi - lo;
  if (!(range > 0)) return fc(t, lo);
  LLVMValueRef below = fcmp(ctx, LLVMRealOLT, x, fc(t, lo));
  LLVMValueRef above = fcmp(ctx, LLVMRealOGT, x, fc(t, hi));
  LLVMValueRef d = sel(ctx, below, fp_sub(ctx, fc(t, lo), x), fp_sub(ctx, x, fc(t, hi)));
  LLVMValueRef nf = intr1(ctx, "llvm.floor", fp_div(ctx, d, fc(t, range)));
  LLVMValueRef r = fp_sub(ctx, d, fp_mul(ctx, nf, fc(t, range)));
  LLVMValueRef half = intr1(ctx, "llvm.floor", fp_mul(ctx, nf, fc(t, 0.5)));
  LLVMValueRef even = fcmp(ctx, LLVMRealOEQ, fp_sub(ctx, nf, fp_mul(ctx, half, fc(t, 2))), fc(t, 0));
  LLVMValueRef lo_r = fp_add(ctx, fc(t, lo), r), hi_r = fp_sub(ctx, fc(t, hi), r);
  LLVMValueRef from_below = sel(ctx, even, lo_r, hi_r);
  LLVMValueRef from_above = sel(ctx, even, hi_r, lo_r);
  return sel(ctx, below, from_below, sel(ctx, above, from_above, x));
}

// Bicubic weights (A = -0.75, the ONNX/PyTorch GridSample kernel) of the
// four taps floor(x)-1 .. floor(x)+2 for fraction |t| in [0, 1).
static void gs_cubic_coeffs(mlcc_emit_ctx_t* ctx, LLVMValueRef t, LLVMValueRef* c) {
  LLVMTypeRef ty = LLVMTypeOf(t);
  const double A = -0.75;
  LLVMValueRef one = fc(ty, 1), two = fc(ty, 2);
  LLVMValueRef t1 = fp_add(ctx, t, one), u = fp_sub(ctx, one, t), u1 = fp_sub(ctx, two, t);
  // Outer taps: ((A*s - 5A)*s + 8A)*s - 4A for s = t+1 and 2-t.
  LLVMValueRef s_outer[2] = {t1, u1};
  for (int i = 0; i < 2; ++i) {
    LLVMValueRef s = s_outer[i];
    LLVMValueRef v = fp_sub(ctx, fp_mul(ctx, fc(ty, A), s), fc(ty, 5 * A));
    v = fp_add(ctx, fp_mul(ctx, v, s), fc(ty, 8 * A));
    c[i == 0 ? 0 : 3] = fp_sub(ctx, fp_mul(ctx, v, s), fc(ty, 4 * A));
  }
  // Inner taps: ((A+2)*s - (A+3))*s*s + 1 for s = t and 1-t.
  LLVMValueRef s_inner[2] = {t, u};
  for (int i = 0; i < 2; ++i) {
    LLVMValueRef s = s_inner[i];
    LLVMValueRef v = fp_sub(ctx, fp_mul(ctx, fc(ty, A + 2), s), fc(ty, A + 3));
    c[i == 0 ? 1 : 2] = fp_add(ctx, fp_mul(ctx, fp_mul(ctx, v, s), s), one);
  }
}

// Per-axis taps of one sample: |n| indices (clamped into [0, len)), their
// validity (zeros padding) and weights (NULL for nearest).
typedef struct gs_axis_t {
  int n;
  LLVMValueRef idx[4], valid[4], w[4];
} gs_axis_t;

// Taps along one axis of length |len| for sanitized coordinate |x|.
static void gs_axis_taps(mlcc_emit_ctx_t* ctx, int mode, int pad, LLVMValueRef x, int64_t len,
                         double lo, double hi, gs_axis_t* ax) {
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef first = NULL;
  if (mode == GS_NEAREST) {
    ax->n = 1;
    first = to_i64(ctx, x);
    ax->w[0] = NULL;
  } else {
    LLVMValueRef fl = intr1(ctx, "llvm.floor", x);
    LLVMValueRef frac = fp_sub(ctx, x, fl);
    first = to_i64(ctx, fl);
    if (mode == GS_BILINEAR) {
      ax->n = 2;
      ax->w[0] = fp_sub(ctx, fc(t, 1), frac);
      ax->w[1] = frac;
    } else {
      ax->n = 4;
      first = iaddc(ctx, first, -1);
      gs_cubic_coeffs(ctx, frac, ax->w);
    }
  }
  for (int k = 0; k < ax->n; ++k) {
    LLVMValueRef i = iaddc(ctx, first, k);
    ax->valid[k] = NULL;
    if (pad == GS_ZEROS) {
      ax->valid[k] = LLVMBuildAnd(ctx->b, icmp(ctx, LLVMIntSGE, i, c64(ctx, 0)),
                                  icmp(ctx, LLVMIntSLT, i, c64(ctx, len)), "");
    } else if (pad == GS_REFLECTION) {
      i = to_i64(ctx, gs_reflect(ctx, to_fp(ctx, i, t), lo, hi));
    }
    ax->idx[k] = iclamp(ctx, i, 0, len - 1);
  }
}

// Sum over the taps of axes k-1 .. 0 (grid components: 0 = the innermost
// axis W) of w * X at |base| + the taps' offsets: for axis k the weighted
// sum of the inner sums, innermost first (the 2-D order of GridSample-16:
// sum_i wy_i * sum_j wx_j * x_ij).
static LLVMValueRef gs_accumulate(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, mlcc_dtype_t ct_dt,
                                  LLVMValueRef base, const gs_axis_t* ax, const int64_t* stride,
                                  int k, LLVMValueRef off, LLVMValueRef valid, bool zeros) {
  LLVMValueRef acc = NULL;
  for (int t = 0; t < ax[k].n; ++t) {
    LLVMValueRef o = imulc(ctx, ax[k].idx[t], stride[k]);
    o = off != NULL ? iadd(ctx, off, o) : o;
    LLVMValueRef va = !zeros ? NULL
                      : valid != NULL ? LLVMBuildAnd(ctx->b, valid, ax[k].valid[t], "")
                                      : ax[k].valid[t];
    LLVMValueRef v;
    if (k == 0) {
      v = load_as(ctx, x, iadd(ctx, base, o), ct_dt);
      if (va != NULL) v = sel(ctx, va, v, fc(mlcc_emit_type(ctx, ct_dt), 0));
    } else {
      v = gs_accumulate(ctx, x, ct_dt, base, ax, stride, k - 1, o, va, zeros);
    }
    if (ax[k].w[t] != NULL) v = fp_mul(ctx, ax[k].w[t], v);
    acc = acc ? fp_add(ctx, acc, v) : v;
  }
  return acc;
}

// X [N,C,H,W] with grid [N,Ho,Wo,2] (x, y in [-1, 1]) -> Y [N,C,Ho,Wo], or
// (opset 20) X [N,C,D,H,W] with grid [N,Do,Ho,Wo,3] (x, y, z) -> Y
// [N,C,Do,Ho,Wo]. Follows the ONNX GridSample reference (= onnxruntime):
// denormalize per align_corners, round half to even for nearest, then for a
// sample outside the box [min, max] of any axis clamp (border) or reflect
// (reflection) every coordinate; taps outside the image read 0 (zeros), the
// clamped border pixel (border) or the reflected pixel (reflection).
// Computed in float (double if X or grid is double).
static mlcc_status_t emit_grid_sample(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* grid = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const bool v20 = node->opset >= 20;  // modes renamed: linear, nearest, cubic
  const char *s_mode = v20 ? "linear" : "bilinear", *s_pad = "zeros";
  int64_t align = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", s_mode, &s_mode));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "padding_mode", "zeros", &s_pad));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "align_corners", 0, &align));
  static const char* const kModes[] = {"bilinear", "nearest", "bicubic"};
  static const char* const kModes20[] = {"linear", "nearest", "cubic"};
  static const char* const kPads[] = {"zeros", "border", "reflection"};
  int mode = find_name(s_mode, v20 ? kModes20 : kModes, 3), pad = find_name(s_pad, kPads, 3);
  if (mode < 0) return bad_attr(node, "mode", s_mode);
  if (pad < 0) return bad_attr(node, "padding_mode", s_pad);
  const int rank = x->shape.rank, sp = rank - 2;
  if ((sp != 2 && sp != 3) || (sp == 3 && mode == GS_BICUBIC)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "GridSample kernel: rank %d with mode '%s'", rank, s_mode);
  }
  if (numel(&y->shape) == 0) return mlcc_ok_status();
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1];
  // Axis k of the grid's components: k = 0 is W (the innermost), 1 H, 2 D.
  int64_t len[3], stride[3], out_len[3], plane = 1, out_plane = 1;
  for (int k = 0; k < sp; ++k) {
    len[k] = x->shape.dims[rank - 1 - k];
    out_len[k] = y->shape.dims[rank - 1 - k];
    stride[k] = plane;
    plane *= len[k];
    out_plane *= out_len[k];
  }
  mlcc_dtype_t ct_dt =
      x->dtype == MLCC_DTYPE_F64 || grid->dtype == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64
                                                                  : MLCC_DTYPE_F32;
  LLVMTypeRef ct = mlcc_emit_type(ctx, ct_dt);
  double lo[3], hi[3];
  for (int k = 0; k < sp; ++k) {
    lo[k] = align ? 0 : -0.5;
    hi[k] = align ? (double)len[k] - 1 : (double)len[k] - 0.5;
  }
  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, N, "n");
  mlcc_loop_t lo_[3];
  static const char* const kNames[3] = {"w", "h", "d"};
  for (int k = sp - 1; k >= 0; --k) lo_[k] = mlcc_emit_for(ctx, 0, out_len[k], kNames[k]);
  LLVMValueRef pos = ln.iv;  // n, then the output spatial position (outermost first)
  for (int k = sp - 1; k >= 0; --k) pos = imad(ctx, pos, out_len[k], lo_[k].iv);
  LLVMValueRef g = imulc(ctx, pos, sp);
  LLVMValueRef one = fc(ct, 1), half = fc(ct, 0.5), p[3];
  for (int k = 0; k < sp; ++k) {
    LLVMValueRef gk = load_as(ctx, grid, k == 0 ? g : iaddc(ctx, g, k), ct_dt);
    // Denormalize: align_corners ? (g+1)/2*(L-1) : ((g+1)*L-1)/2.
    if (align) {
      p[k] = fp_mul(ctx, fp_mul(ctx, fp_add(ctx, gk, one), half), fc(ct, (double)len[k] - 1));
    } else {
      p[k] = fp_mul(ctx, fp_sub(ctx, fp_mul(ctx, fp_add(ctx, gk, one), fc(ct, (double)len[k])),
                                one),
                    half);
    }
    if (mode == GS_NEAREST) p[k] = intr1(ctx, "llvm.rint", p[k]);  // half to even
  }
  if (pad == GS_BORDER) {
    LLVMValueRef oob = NULL;
    for (int k = 0; k < sp; ++k) {
      LLVMValueRef o = LLVMBuildOr(ctx->b, fcmp(ctx, LLVMRealOLT, p[k], fc(ct, lo[k])),
                                   fcmp(ctx, LLVMRealOGT, p[k], fc(ct, hi[k])), "");
      oob = oob ? LLVMBuildOr(ctx->b, oob, o, "oob") : o;
    }
    for (int k = 0; k < sp; ++k) {
      p[k] = sel(ctx, oob, fclamp(ctx, p[k], 0, (double)len[k] - 1), p[k]);
    }
  } else if (pad == GS_REFLECTION) {
    for (int k = 0; k < sp; ++k) p[k] = gs_reflect(ctx, p[k], lo[k], hi[k]);
  }
  // Keep far-away (and NaN) coordinates a few pixels outside the image so the
  // float-to-int conversions below are defined; taps stay outside as before.
  gs_axis_t ax[3];
  for (int k = 0; k < sp; ++k) {
    p[k] = fclamp(ctx, p[k], -4, (double)len[k] + 3);
    gs_axis_taps(ctx, mode, pad, p[k], len[k], lo[k], hi[k], &ax[k]);
  }
  mlcc_loop_t lc = mlcc_emit_for(ctx, 0, C, "c");
  LLVMValueRef base = imulc(ctx, imad(ctx, ln.iv, C, lc.iv), plane);
  LLVMValueRef acc =
      gs_accumulate(ctx, x, ct_dt, base, ax, stride, sp - 1, NULL, NULL, pad == GS_ZEROS);
  LLVMValueRef opos = imad(ctx, ln.iv, C, lc.iv);
  for (int k = sp - 1; k >= 0; --k) opos = imad(ctx, opos, out_len[k], lo_[k].iv);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, opos,
                                            mlcc_emit_convert(ctx, acc, ct_dt, y->dtype));
  mlcc_emit_loop_end(ctx, &lc);
  for (int k = 0; k < sp; ++k) mlcc_emit_loop_end(ctx, &lo_[k]);
  mlcc_emit_loop_end(ctx, &ln);
  (void)out_plane;
  return st;
}

//===----------------------------------------------------------------------===//
// RoiAlign 10/16
//===----------------------------------------------------------------------===//

// Bilinear sample of the H x W plane at |plane| for point (|yy|, |xx|), the
// Caffe2/onnxruntime RoiAlign rule: points beyond [-1, H] x [-1, W] weigh 0,
// coordinates are clamped at 0 and at the last row/column. Avg mode returns
// the weighted sum, max mode the largest weighted tap.
static LLVMValueRef roi_sample(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, mlcc_dtype_t ct_dt,
                               LLVMValueRef plane, LLVMValueRef yy, LLVMValueRef xx, int64_t H,
                               int64_t W, bool max_mode) {
  LLVMTypeRef t = LLVMTypeOf(yy);
  LLVMValueRef zero = fc(t, 0), one = fc(t, 1);
  LLVMValueRef in = LLVMBuildAnd(
      ctx->b,
      LLVMBuildAnd(ctx->b, fcmp(ctx, LLVMRealOGE, yy, fc(t, -1)),
                   fcmp(ctx, LLVMRealOLE, yy, fc(t, (double)H)), ""),
      LLVMBuildAnd(ctx->b, fcmp(ctx, LLVMRealOGE, xx, fc(t, -1)),
                   fcmp(ctx, LLVMRealOLE, xx, fc(t, (double)W)), ""),
      "in");
  LLVMValueRef coord[2] = {yy, xx}, lo[2], hi[2], l[2], h[2];
  const int64_t len[2] = {H, W};
  for (int a = 0; a < 2; ++a) {
    LLVMValueRef c = sel(ctx, in, coord[a], zero);  // NaN and far points: 0
    c = sel(ctx, fcmp(ctx, LLVMRealOLE, c, zero), zero, c);
    LLVMValueRef low = to_i64(ctx, c);
    LLVMValueRef last = icmp(ctx, LLVMIntSGE, low, c64(ctx, len[a] - 1));
    lo[a] = sel(ctx, last, c64(ctx, len[a] - 1), low);
    hi[a] = sel(ctx, last, c64(ctx, len[a] - 1), iaddc(ctx, low, 1));
    c = sel(ctx, last, to_fp(ctx, lo[a], t), c);
    l[a] = fp_sub(ctx, c, to_fp(ctx, lo[a], t));
    h[a] = fp_sub(ctx, one, l[a]);
  }
  LLVMValueRef mask = sel(ctx, in, one, zero);
  LLVMValueRef w[4] = {fp_mul(ctx, h[0], h[1]), fp_mul(ctx, h[0], l[1]), fp_mul(ctx, l[0], h[1]),
                       fp_mul(ctx, l[0], l[1])};
  LLVMValueRef pos[4] = {imad(ctx, lo[0], W, lo[1]), imad(ctx, lo[0], W, hi[1]),
                         imad(ctx, hi[0], W, lo[1]), imad(ctx, hi[0], W, hi[1])};
  LLVMValueRef r = NULL;
  for (int k = 0; k < 4; ++k) {
    LLVMValueRef v = fp_mul(ctx, fp_mul(ctx, w[k], mask), load_as(ctx, x, iadd(ctx, plane, pos[k]), ct_dt));
    if (r == NULL) {
      r = v;
    } else {
      r = max_mode ? intr2(ctx, "llvm.maxnum", r, v) : fp_add(ctx, r, v);
    }
  }
  return r;
}

// Number of samples along one bin side: |sr| if > 0, else ceil(extent /
// bins) kept in [0, 2^30] (NaN -> 0) so it is a defined count.
static LLVMValueRef roi_grid(mlcc_emit_ctx_t* ctx, int64_t sr, LLVMValueRef extent,
                             int64_t bins) {
  if (sr > 0) return c64(ctx, sr);
  LLVMTypeRef t = LLVMTypeOf(extent);
  LLVMValueRef g = intr1(ctx, "llvm.ceil", fp_div(ctx, extent, fc(t, (double)bins)));
  return to_i64(ctx, fclamp(ctx, g, 0, (double)(1 << 30)));
}

// The samples i in [0, n) of one bin side, at |start| + (i + 0.5) * |step|,
// that can fall inside [-1, |len|] (the others weigh 0): [*out_lo, *out_hi),
// widened by a sample or two against rounding, so loops are bounded by the
// image size however large a roi is. A zero |step| keeps all samples.
static void roi_sample_range(mlcc_emit_ctx_t* ctx, LLVMValueRef start, LLVMValueRef step,
                             LLVMValueRef n, int64_t len, LLVMValueRef* out_lo,
                             LLVMValueRef* out_hi) {
  LLVMTypeRef t = LLVMTypeOf(start);
  LLVMValueRef nf = to_fp(ctx, n, t);
  LLVMValueRef a = fp_sub(ctx, fp_div(ctx, fp_sub(ctx, fc(t, -1), start), step), fc(t, 0.5));
  LLVMValueRef b = fp_sub(ctx, fp_div(ctx, fp_sub(ctx, fc(t, (double)len), start), step),
                          fc(t, 0.5));
  LLVMValueRef lo = fp_sub(ctx, intr1(ctx, "llvm.floor", intr2(ctx, "llvm.minnum", a, b)),
                           fc(t, 1));
  LLVMValueRef hi = fp_add(ctx, intr1(ctx, "llvm.ceil", intr2(ctx, "llvm.maxnum", a, b)),
                           fc(t, 2));
  lo = intr2(ctx, "llvm.minnum", intr2(ctx, "llvm.maxnum", lo, fc(t, 0)), nf);
  hi = intr2(ctx, "llvm.minnum", intr2(ctx, "llvm.maxnum", hi, fc(t, 0)), nf);
  LLVMValueRef flat = fcmp(ctx, LLVMRealUEQ, step, fc(t, 0));
  *out_lo = sel(ctx, flat, c64(ctx, 0), to_i64(ctx, lo));
  *out_hi = sel(ctx, flat, n, to_i64(ctx, hi));
}

// X [N,C,H,W], rois [R,4] (x1,y1,x2,y2), batch_indices [R] -> [R,C,oh,ow]:
// the ONNX RoiAlign-10/16 rule as implemented by onnxruntime (avg: mean of
// the bilinear samples; max: max over samples of the largest weighted tap).
// Batch indices are clamped into [0, N).
static mlcc_status_t emit_roi_align(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* rois = mlcc_node_input(node, 1);
  const mlcc_value_t* bi = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const char *s_mode = "avg", *s_ctm = "output_half_pixel";
  int64_t sr = 0;
  float scale = 1.0f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "avg", &s_mode));
  if (node->opset >= 16) {
    MLCC_RETURN_IF_ERROR(
        mlcc_node_attr_string(node, "coordinate_transformation_mode", "half_pixel", &s_ctm));
  }
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "sampling_ratio", 0, &sr));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "spatial_scale", 1.0f, &scale));
  static const char* const kModes[] = {"avg", "max"};
  static const char* const kCtm[] = {"output_half_pixel", "half_pixel"};
  int mode = find_name(s_mode, kModes, 2), ctm = find_name(s_ctm, kCtm, 2);
  if (mode < 0) return bad_attr(node, "mode", s_mode);
  if (ctm < 0) return bad_attr(node, "coordinate_transformation_mode", s_ctm);
  const bool max_mode = mode == 1, half_pixel = ctm == 1;
  if (numel(&y->shape) == 0) return mlcc_ok_status();
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], H = x->shape.dims[2],
                W = x->shape.dims[3], R = y->shape.dims[0], OH = y->shape.dims[2],
                OW = y->shape.dims[3];
  mlcc_dtype_t ct_dt = x->dtype == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32;
  LLVMTypeRef t = mlcc_emit_type(ctx, ct_dt);

  mlcc_loop_t lr = mlcc_emit_for(ctx, 0, R, "roi");
  LLVMValueRef b = iclamp(ctx, load_i64(ctx, bi, lr.iv), 0, N - 1);
  LLVMValueRef c4[4];
  for (int k = 0; k < 4; ++k) {
    LLVMValueRef v = load_as(ctx, rois, imad(ctx, lr.iv, 4, c64(ctx, k)), ct_dt);
    v = fp_mul(ctx, v, fc(t, scale));
    c4[k] = half_pixel ? fp_sub(ctx, v, fc(t, 0.5)) : v;
  }
  LLVMValueRef start_w = c4[0], start_h = c4[1];
  LLVMValueRef roi_w = fp_sub(ctx, c4[2], start_w), roi_h = fp_sub(ctx, c4[3], start_h);
  if (!half_pixel) {
    roi_w = intr2(ctx, "llvm.maxnum", roi_w, fc(t, 1));
    roi_h = intr2(ctx, "llvm.maxnum", roi_h, fc(t, 1));
  }
  LLVMValueRef bin_h = fp_div(ctx, roi_h, fc(t, (double)OH));
  LLVMValueRef bin_w = fp_div(ctx, roi_w, fc(t, (double)OW));
  LLVMValueRef gh = roi_grid(ctx, sr, roi_h, OH), gw = roi_grid(ctx, sr, roi_w, OW);
  LLVMValueRef n_samples = LLVMBuildNSWMul(ctx->b, gh, gw, "");
  LLVMValueRef gh_f = to_fp(ctx, gh, t), gw_f = to_fp(ctx, gw, t);
  LLVMValueRef count = to_fp(ctx, sel(ctx, icmp(ctx, LLVMIntSGT, n_samples, c64(ctx, 1)),
                                      n_samples, c64(ctx, 1)), t);

  mlcc_loop_t lc = mlcc_emit_for(ctx, 0, C, "c");
  LLVMValueRef plane = imulc(ctx, imad(ctx, b, C, lc.iv), H * W);
  mlcc_loop_t lph = mlcc_emit_for(ctx, 0, OH, "ph");
  mlcc_loop_t lpw = mlcc_emit_for(ctx, 0, OW, "pw");
  LLVMValueRef y0 = fp_add(ctx, start_h, fp_mul(ctx, to_fp(ctx, lph.iv, t), bin_h));
  LLVMValueRef x0 = fp_add(ctx, start_w, fp_mul(ctx, to_fp(ctx, lpw.iv, t), bin_w));
  LLVMValueRef acc = mlcc_emit_var(ctx, t, fc(t, max_mode ? -INFINITY : 0));
  LLVMBuildStore(ctx->b, fc(t, max_mode ? -INFINITY : 0), acc);
  LLVMValueRef iy_lo, iy_hi, ix_lo, ix_hi;
  roi_sample_range(ctx, y0, fp_div(ctx, bin_h, gh_f), gh, H, &iy_lo, &iy_hi);
  roi_sample_range(ctx, x0, fp_div(ctx, bin_w, gw_f), gw, W, &ix_lo, &ix_hi);
  mlcc_loop_t liy = mlcc_emit_loop_begin(ctx, iy_lo, iy_hi, 1, "iy");
  LLVMValueRef yy = fp_add(ctx, y0, fp_div(ctx, fp_mul(ctx, fp_add(ctx, to_fp(ctx, liy.iv, t),
                                                           fc(t, 0.5)), bin_h), gh_f));
  mlcc_loop_t lix = mlcc_emit_loop_begin(ctx, ix_lo, ix_hi, 1, "ix");
  LLVMValueRef xx = fp_add(ctx, x0, fp_div(ctx, fp_mul(ctx, fp_add(ctx, to_fp(ctx, lix.iv, t),
                                                           fc(t, 0.5)), bin_w), gw_f));
  LLVMValueRef v = roi_sample(ctx, x, ct_dt, plane, yy, xx, H, W, max_mode);
  LLVMValueRef cur = load_var(ctx, t, acc);
  LLVMBuildStore(ctx->b, max_mode ? intr2(ctx, "llvm.maxnum", cur, v) : fp_add(ctx, cur, v), acc);
  mlcc_emit_loop_end(ctx, &lix);
  mlcc_emit_loop_end(ctx, &liy);
  LLVMValueRef res = load_var(ctx, t, acc);
  if (max_mode) {
    // Skipped samples lie outside the image and weigh 0: they join the max.
    LLVMValueRef kept =
        LLVMBuildNSWMul(ctx->b, isub(ctx, iy_hi, iy_lo), isub(ctx, ix_hi, ix_lo), "");
    LLVMValueRef skipped = icmp(ctx, LLVMIntSLT, kept, n_samples);
    res = sel(ctx, skipped, intr2(ctx, "llvm.maxnum", res, fc(t, 0)), res);
    res = sel(ctx, icmp(ctx, LLVMIntSGT, n_samples, c64(ctx, 0)), res, fc(t, 0));
  } else {
    res = fp_div(ctx, res, count);
  }
  LLVMValueRef oidx = imad(ctx, imad(ctx, imad(ctx, lr.iv, C, lc.iv), OH, lph.iv), OW, lpw.iv);
  mlcc_status_t st =
      mlcc_emit_store_output(ctx, node, 0, oidx, mlcc_emit_convert(ctx, res, ct_dt, y->dtype));
  mlcc_emit_loop_end(ctx, &lpw);
  mlcc_emit_loop_end(ctx, &lph);
  mlcc_emit_loop_end(ctx, &lc);
  mlcc_emit_loop_end(ctx, &lr);
  return st;
}

//===----------------------------------------------------------------------===//
// MaxRoiPool 1/22
//===----------------------------------------------------------------------===//

// X [N,C,H,W], rois [R,5] -> [R,C,ph,pw], the Caffe/onnxruntime rule: roi
// corners round(v * spatial_scale), extent max(end - start + 1, 1), bin
// [floor(i * ext / ph), ceil((i + 1) * ext / ph)) + start clipped to the
// image; the max of the bin, 0 for an empty bin. Batch ids are clamped into
// [0, N), coordinates into +-2^30 (NaN -> -2^30).
static mlcc_status_t emit_max_roi_pool(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* rois = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  float scale = 1.0f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "spatial_scale", 1.0f, &scale));
  if (numel(&y->shape) == 0) return mlcc_ok_status();
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], H = x->shape.dims[2],
                W = x->shape.dims[3], R = y->shape.dims[0], PH = y->shape.dims[2],
                PW = y->shape.dims[3];
  mlcc_dtype_t ct_dt = x->dtype == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32;
  LLVMTypeRef t = mlcc_emit_type(ctx, ct_dt);
  mlcc_loop_t lr = mlcc_emit_for(ctx, 0, R, "roi");
  LLVMValueRef bf = load_as(ctx, rois, imulc(ctx, lr.iv, 5), ct_dt);
  LLVMValueRef b = iclamp(ctx, to_i64(ctx, fclamp(ctx, bf, 0, (double)(N - 1))), 0, N - 1);
  LLVMValueRef c4[4];
  for (int k = 0; k < 4; ++k) {
    LLVMValueRef v = load_as(ctx, rois, imad(ctx, lr.iv, 5, c64(ctx, k + 1)), ct_dt);
    v = intr1(ctx, "llvm.round", fp_mul(ctx, v, fc(t, scale)));
    c4[k] = to_i64(ctx, fclamp(ctx, v, -(double)(1 << 30), (double)(1 << 30)));
  }
  LLVMValueRef sw = c4[0], sh = c4[1];
  LLVMValueRef rw = iaddc(ctx, isub(ctx, c4[2], sw), 1), rh = iaddc(ctx, isub(ctx, c4[3], sh), 1);
  rw = sel(ctx, icmp(ctx, LLVMIntSLT, rw, c64(ctx, 1)), c64(ctx, 1), rw);
  rh = sel(ctx, icmp(ctx, LLVMIntSLT, rh, c64(ctx, 1)), c64(ctx, 1), rh);
  LLVMValueRef bin_h = fp_div(ctx, to_fp(ctx, rh, t), fc(t, (double)PH));
  LLVMValueRef bin_w = fp_div(ctx, to_fp(ctx, rw, t), fc(t, (double)PW));
  mlcc_loop_t lc = mlcc_emit_for(ctx, 0, C, "c");
  LLVMValueRef plane = imulc(ctx, imad(ctx, b, C, lc.iv), H * W);
  mlcc_loop_t lph = mlcc_emit_for(ctx, 0, PH, "ph");
  mlcc_loop_t lpw = mlcc_emit_for(ctx, 0, PW, "pw");
  LLVMValueRef fh = to_fp(ctx, lph.iv, t), fw = to_fp(ctx, lpw.iv, t);
  LLVMValueRef hs = to_i64(ctx, intr1(ctx, "llvm.floor", fp_mul(ctx, fh, bin_h)));
  LLVMValueRef he = to_i64(ctx, intr1(ctx, "llvm.ceil", fp_mul(ctx, fp_add(ctx, fh, fc(t, 1)), bin_h)));
  LLVMValueRef ws = to_i64(ctx, intr1(ctx, "llvm.floor", fp_mul(ctx, fw, bin_w)));
  LLVMValueRef we = to_i64(ctx, intr1(ctx, "llvm.ceil", fp_mul(ctx, fp_add(ctx, fw, fc(t, 1)), bin_w)));
  hs = iclamp(ctx, iadd(ctx, hs, sh), 0, H);
  he = iclamp(ctx, iadd(ctx, he, sh), 0, H);
  ws = iclamp(ctx, iadd(ctx, ws, sw), 0, W);
  we = iclamp(ctx, iadd(ctx, we, sw), 0, W);
  LLVMValueRef acc = mlcc_emit_var(ctx, t, fc(t, -INFINITY));
  LLVMBuildStore(ctx->b, fc(t, -INFINITY), acc);
  mlcc_loop_t lh = mlcc_emit_loop_begin(ctx, hs, he, 1, "h");
  mlcc_loop_t lw = mlcc_emit_loop_begin(ctx, ws, we, 1, "w");
  LLVMValueRef v = load_as(ctx, x, iadd(ctx, plane, imad(ctx, lh.iv, W, lw.iv)), ct_dt);
  LLVMValueRef cur = load_var(ctx, t, acc);
  LLVMBuildStore(ctx->b, sel(ctx, fcmp(ctx, LLVMRealOGT, v, cur), v, cur), acc);
  mlcc_emit_loop_end(ctx, &lw);
  mlcc_emit_loop_end(ctx, &lh);
  LLVMValueRef empty = LLVMBuildOr(ctx->b, icmp(ctx, LLVMIntSLE, he, hs),
                                   icmp(ctx, LLVMIntSLE, we, ws), "");
  LLVMValueRef res = sel(ctx, empty, fc(t, 0), load_var(ctx, t, acc));
  LLVMValueRef oidx = imad(ctx, imad(ctx, imad(ctx, lr.iv, C, lc.iv), PH, lph.iv), PW, lpw.iv);
  mlcc_status_t st =
      mlcc_emit_store_output(ctx, node, 0, oidx, mlcc_emit_convert(ctx, res, ct_dt, y->dtype));
  mlcc_emit_loop_end(ctx, &lpw);
  mlcc_emit_loop_end(ctx, &lph);
  mlcc_emit_loop_end(ctx, &lc);
  mlcc_emit_loop_end(ctx, &lr);
  return st;
}

//===----------------------------------------------------------------------===//
// MaxUnpool 9/11
//===----------------------------------------------------------------------===//

// Y = zeros with U.flat[I[i]] = X[i] (later i win; indices outside U are
// skipped), where U, of the inferred unpooled shape (mlcc_max_unpool_shape),
// sits at the origin of Y (= U unless output_shape is larger): the ONNX
// reference. A kernel of this node alone zero-fills and scatters
// (O(|X| + |Y|)); as the anchor of a fused epilogue, where each output
// element must go through the epilogue once, it gathers (O(|X| * |Y|)).
static mlcc_status_t emit_max_unpool(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* ix = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_shape_t u;
  MLCC_RETURN_IF_ERROR(mlcc_max_unpool_shape(node, &x->shape, &u));
  const int32_t rank = y->shape.rank;
  bool same = mlcc_shape_equal(&u, &y->shape);
  for (int32_t d = 0; d < rank && u.rank == rank; ++d) {
    if (u.dims[d] > y->shape.dims[d]) u.rank = -1;
  }
  if (u.rank != rank) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "MaxUnpool output shape was not validated");
  }
  const int64_t n_in = numel(&x->shape), n_out = numel(&y->shape), n_u = numel(&u);
  if (n_out == 0) return mlcc_ok_status();
  LLVMTypeRef t = mlcc_emit_type(ctx, y->dtype);
  LLVMValueRef zero = mlcc_emit_const(ctx, y->dtype, 0);
  const mlcc_kernel_t* k = ctx->kernel;
  bool fused = k != NULL && k->n_nodes > 1 && k->nodes[0] == node;
  if (!fused) {
    mlcc_loop_t lz = mlcc_emit_for(ctx, 0, n_out, "z");
    mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, lz.iv, zero);
    mlcc_emit_loop_end(ctx, &lz);
    MLCC_RETURN_IF_ERROR(st);
    if (n_in == 0) return mlcc_ok_status();
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, n_in, "i");
    LLVMValueRef target = load_i64(ctx, ix, li.iv);
    LLVMValueRef ok = LLVMBuildAnd(ctx->b, icmp(ctx, LLVMIntSGE, target, c64(ctx, 0)),
                                   icmp(ctx, LLVMIntSLT, target, c64(ctx, n_u)), "");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, ok);
    if (!same) {
      LLVMValueRef coord[MLCC_MAX_RANK];
      mlcc_emit_unravel(ctx, &u, target, coord);
      target = mlcc_emit_ravel(ctx, &y->shape, coord);
    }
    mlcc_emit_store(ctx, y, target, mlcc_emit_load(ctx, x, li.iv));
    mlcc_emit_if_end(ctx, &br);
    mlcc_emit_loop_end(ctx, &li);
    return mlcc_ok_status();
  }
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, n_out, "o");
  LLVMValueRef acc = mlcc_emit_var(ctx, t, zero);
  LLVMBuildStore(ctx->b, zero, acc);
  if (n_in > 0) {
    // |want|: the index into U of this output element, or -1 outside U.
    LLVMValueRef want = lo.iv;
    if (!same) {
      LLVMValueRef coord[MLCC_MAX_RANK];
      mlcc_emit_unravel(ctx, &y->shape, lo.iv, coord);
      LLVMValueRef inside = LLVMConstInt(ctx->t_i1, 1, 0);
      for (int32_t d = 0; d < rank; ++d) {
        inside = LLVMBuildAnd(ctx->b, inside,
                              icmp(ctx, LLVMIntSLT, coord[d], c64(ctx, u.dims[d])), "");
        coord[d] = sel(ctx, inside, coord[d], c64(ctx, 0));
      }
      want = sel(ctx, inside, mlcc_emit_ravel(ctx, &u, coord), c64(ctx, -1));
    }
    mlcc_loop_t li = mlcc_emit_for(ctx, 0, n_in, "i");
    LLVMValueRef hit = icmp(ctx, LLVMIntEQ, load_i64(ctx, ix, li.iv), want);
    LLVMValueRef v = sel(ctx, hit, mlcc_emit_load(ctx, x, li.iv), load_var(ctx, t, acc));
    LLVMBuildStore(ctx->b, v, acc);
    mlcc_emit_loop_end(ctx, &li);
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, lo.iv, load_var(ctx, t, acc));
  mlcc_emit_loop_end(ctx, &lo);
  return st;
}

//===----------------------------------------------------------------------===//
// Upsample 7-9
//===----------------------------------------------------------------------===//

// Upsample = Resize-10: asymmetric coordinates x_in = x_out / scale; nearest
// picks trunc(x_in) (ceil(x_in) when scale < 1), linear blends floor(x_in)
// and floor(x_in)+1 (clamped to the last element). Per-dim tap offsets and
// weights are compile-time tables (scales are constant).
static mlcc_status_t emit_upsample(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const char* s_mode = "nearest";
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", "nearest", &s_mode));
  static const char* const kModes[] = {"nearest", "linear"};
  int mode = find_name(s_mode, kModes, 2);
  if (mode < 0) return bad_attr(node, "mode", s_mode);
  const bool linear = mode == 1;
  const int32_t r = x->shape.rank;
  double scale[MLCC_MAX_RANK];
  if (node->opset < 9) {
    const float* f = NULL;
    uint32_t n = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_floats(node, "scales", &f, &n));
    if (f == NULL || n != (uint32_t)r) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "Upsample scales were not validated");
    }
    for (int32_t d = 0; d < r; ++d) scale[d] = f[d];
  } else {
    const mlcc_value_t* s = mlcc_node_input(node, 1);
    if (s == NULL || s->kind != MLCC_VALUE_CONSTANT || s->data == NULL ||
        numel(&s->shape) != r) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "Upsample scales were not validated");
    }
    for (int32_t d = 0; d < r; ++d) scale[d] = mlcc_value_const_f64(s, d);
  }
  if (linear && !mlcc_dtype_is_float(x->dtype)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Upsample mode 'linear' supports float dtypes; got %s",
                            mlcc_dtype_name(x->dtype));
  }
  if (numel(&y->shape) == 0) return mlcc_ok_status();
  int64_t is[MLCC_MAX_RANK], os[MLCC_MAX_RANK];
  strides_of(&x->shape, is);
  strides_of(&y->shape, os);
  LLVMTypeRef wt = linear ? mlcc_emit_type(ctx, x->dtype) : NULL;
  // Per dim: NULL tables = identity (not resized); else offsets of tap 0
  // (and tap 1 and tap 1's weight for linear).
  LLVMValueRef g_off0[MLCC_MAX_RANK] = {0}, g_off1[MLCC_MAX_RANK] = {0},
               g_w1[MLCC_MAX_RANK] = {0};
  int n_resized = 0;
  for (int32_t d = 0; d < r; ++d) {
    const int64_t in = x->shape.dims[d], out = y->shape.dims[d];
    if (in == out && scale[d] == 1.0) continue;
    if (out > (1 << 20)) {  // constant tables of |out| entries: see Resize
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "Upsample output dim %d of %lld elements (at most 2^20)", (int)d,
                              (long long)out);
    }
    ++n_resized;
    LLVMValueRef* e0 = calloc((size_t)out, sizeof(LLVMValueRef));
    LLVMValueRef* e1 = calloc((size_t)out, sizeof(LLVMValueRef));
    LLVMValueRef* ew = calloc((size_t)out, sizeof(LLVMValueRef));
    if (e0 == NULL || e1 == NULL || ew == NULL) {
      free(e0);
      free(e1);
      free(ew);
      return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory in Upsample");
    }
    for (int64_t o = 0; o < out; ++o) {
      double xi = (double)o / scale[d];
      if (!linear) {
        double pick = scale[d] < 1 ? ceil(xi) : trunc(xi);
        int64_t i = pick < 0 ? 0 : pick > (double)(in - 1) ? in - 1 : (int64_t)pick;
        e0[o] = c64(ctx, i * is[d]);
        continue;
      }
      double fl = floor(xi);
      int64_t i0 = (int64_t)fl, i1 = i0 + 1;
      double w1 = xi - fl;
      if (i0 > in - 1) i0 = in - 1;
      if (i1 > in - 1) i1 = in - 1;
      e0[o] = c64(ctx, i0 * is[d]);
      e1[o] = c64(ctx, i1 * is[d]);
      ew[o] = fc(wt, w1);
    }
    g_off0[d] = const_table(ctx, ctx->t_i64, e0, (unsigned)out, "mlcc.upsample.off0");
    if (linear) {
      g_off1[d] = const_table(ctx, ctx->t_i64, e1, (unsigned)out, "mlcc.upsample.off1");
      g_w1[d] = const_table(ctx, wt, ew, (unsigned)out, "mlcc.upsample.w1");
    }
    free(e0);
    free(e1);
    free(ew);
  }
  mlcc_loop_t loops[MLCC_MAX_RANK];
  LLVMValueRef off0[MLCC_MAX_RANK], off1[MLCC_MAX_RANK], w1[MLCC_MAX_RANK];
  LLVMValueRef oidx = c64(ctx, 0);
  for (int32_t d = 0; d < r; ++d) {
    loops[d] = mlcc_emit_for(ctx, 0, y->shape.dims[d], "u");
    LLVMValueRef o = loops[d].iv;
    oidx = imad(ctx, o, os[d], oidx);
    if (g_off0[d] == NULL) {
      off0[d] = off1[d] = imulc(ctx, o, is[d]);
      w1[d] = NULL;
      continue;
    }
    off0[d] = elem_load(ctx, ctx->t_i64, g_off0[d], o);
    off1[d] = linear ? elem_load(ctx, ctx->t_i64, g_off1[d], o) : off0[d];
    w1[d] = linear ? elem_load(ctx, wt, g_w1[d], o) : NULL;
  }
  LLVMValueRef v = NULL;
  if (!linear) {
    LLVMValueRef src = c64(ctx, 0);
    for (int32_t d = 0; d < r; ++d) src = iadd(ctx, src, off0[d]);
    v = mlcc_emit_load(ctx, x, src);
  } else {
    // Sum over the 2^n_resized corners of prod(weights) * x[corner].
    for (int64_t corner = 0; corner < ((int64_t)1 << n_resized); ++corner) {
      LLVMValueRef src = c64(ctx, 0), w = NULL;
      int bit = 0;
      for (int32_t d = 0; d < r; ++d) {
        if (w1[d] == NULL) {
          src = iadd(ctx, src, off0[d]);
          continue;
        }
        bool hi = (corner >> bit++) & 1;
        src = iadd(ctx, src, hi ? off1[d] : off0[d]);
        LLVMValueRef wd = hi ? w1[d] : fp_sub(ctx, fc(wt, 1), w1[d]);
        w = w ? fp_mul(ctx, w, wd) : wd;
      }
      LLVMValueRef term = mlcc_emit_load(ctx, x, src);
      if (w != NULL) term = fp_mul(ctx, w, term);
      v = v ? fp_add(ctx, v, term) : term;
    }
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, oidx, v);
  for (int32_t d = r - 1; d >= 0; --d) mlcc_emit_loop_end(ctx, &loops[d]);
  return st;
}

//===----------------------------------------------------------------------===//
// ReverseSequence 10
//===----------------------------------------------------------------------===//

// y[b, t, ...] = x[b, len_b - 1 - t, ...] for t < len_b (len_b clamped to
// [0, T]), else x[b, t, ...]; batch/time are axes 0/1 in either order.
static mlcc_status_t emit_reverse_sequence(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* lens = mlcc_node_input(node, 1);
  int64_t ba = 1, ta = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "batch_axis", 1, &ba));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "time_axis", 0, &ta));
  if (numel(&x->shape) == 0) return mlcc_ok_status();
  const int64_t d0 = x->shape.dims[0], d1 = x->shape.dims[1];
  const int64_t inner = numel(&x->shape) / (d0 * d1);
  const int64_t T = ta == 0 ? d0 : d1;
  mlcc_loop_t l0 = mlcc_emit_for(ctx, 0, d0, "a0");
  mlcc_loop_t l1 = mlcc_emit_for(ctx, 0, d1, "a1");
  LLVMValueRef b = ba == 0 ? l0.iv : l1.iv, t = ta == 0 ? l0.iv : l1.iv;
  LLVMValueRef len = iclamp(ctx, load_i64(ctx, lens, b), 0, T);
  LLVMValueRef rev = icmp(ctx, LLVMIntSLT, t, len);
  LLVMValueRef src_t = sel(ctx, rev, isub(ctx, iaddc(ctx, len, -1), t), t);
  LLVMValueRef src_row = ta == 0 ? imad(ctx, src_t, d1, l1.iv) : imad(ctx, l0.iv, d1, src_t);
  LLVMValueRef dst_row = imad(ctx, l0.iv, d1, l1.iv);
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, inner, "in");
  LLVMValueRef v = mlcc_emit_load(ctx, x, imad(ctx, src_row, inner, li.iv));
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, imad(ctx, dst_row, inner, li.iv), v);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &l1);
  mlcc_emit_loop_end(ctx, &l0);
  return st;
}

//===----------------------------------------------------------------------===//
// Det 11
//===----------------------------------------------------------------------===//

// Largest matrix side Det handles: the LU works on a stack copy of one
// matrix in double (64*64*8 = 32 KiB).
#define DET_MAX_M 64

// X [*, M, M] -> [*]: per matrix, LU decomposition with partial pivoting in
// double on a stack copy; det = sign(row swaps) * prod(pivots). A zero pivot
// column is skipped (its elimination factors are 0), giving det 0.
static mlcc_status_t emit_det(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const int64_t M = x->shape.dims[x->shape.rank - 1];
  const int64_t batch = numel(&y->shape);
  if (M > DET_MAX_M) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Det (opset %d) supports matrices up to %dx%d; got %lldx%lld",
                            node->opset, DET_MAX_M, DET_MAX_M, (long long)M, (long long)M);
  }
  if (batch == 0) return mlcc_ok_status();
  LLVMTypeRef t = ctx->t_f64;
  if (M == 0) {  // the empty product
    mlcc_loop_t lb = mlcc_emit_for(ctx, 0, batch, "b");
    mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, lb.iv,
                                              mlcc_emit_const(ctx, y->dtype, 1));
    mlcc_emit_loop_end(ctx, &lb);
    return st;
  }
  LLVMValueRef a = entry_array(ctx, t, (unsigned)(M * M));
  LLVMValueRef det = mlcc_emit_var(ctx, t, NULL);
  LLVMValueRef piv_row = mlcc_emit_var(ctx, ctx->t_i64, NULL);
  LLVMValueRef piv_abs = mlcc_emit_var(ctx, t, NULL);
  mlcc_loop_t lb = mlcc_emit_for(ctx, 0, batch, "b");
  {
    mlcc_loop_t lc = mlcc_emit_for(ctx, 0, M * M, "cp");
    LLVMValueRef v = load_as(ctx, x, imad(ctx, lb.iv, M * M, lc.iv), MLCC_DTYPE_F64);
    LLVMBuildStore(ctx->b, v, elem_ptr(ctx, t, a, lc.iv));
    mlcc_emit_loop_end(ctx, &lc);
  }
  LLVMBuildStore(ctx->b, fc(t, 1), det);
  mlcc_loop_t lk = mlcc_emit_for(ctx, 0, M, "k");
  LLVMValueRef k = lk.iv, k1 = iaddc(ctx, k, 1), end = c64(ctx, M);
  LLVMValueRef kk = imad(ctx, k, M, k);
  // Pivot: the row i >= k with the largest |a[i][k]| (first one on ties).
  LLVMBuildStore(ctx->b, k, piv_row);
  LLVMBuildStore(ctx->b, intr1(ctx, "llvm.fabs", elem_load(ctx, t, a, kk)), piv_abs);
  {
    mlcc_loop_t li = mlcc_emit_loop_begin(ctx, k1, end, 1, "pi");
    LLVMValueRef v = intr1(ctx, "llvm.fabs", elem_load(ctx, t, a, imad(ctx, li.iv, M, k)));
    LLVMValueRef better = fcmp(ctx, LLVMRealOGT, v, load_var(ctx, t, piv_abs));
    LLVMBuildStore(ctx->b, sel(ctx, better, v, load_var(ctx, t, piv_abs)), piv_abs);
    LLVMBuildStore(ctx->b, sel(ctx, better, li.iv, load_var(ctx, ctx->t_i64, piv_row)), piv_row);
    mlcc_emit_loop_end(ctx, &li);
  }
  LLVMValueRef p = load_var(ctx, ctx->t_i64, piv_row);
  {
    // Swap rows k and p over columns k..M-1 (a no-op when p == k).
    mlcc_loop_t lj = mlcc_emit_loop_begin(ctx, k, end, 1, "sw");
    LLVMValueRef pk = elem_ptr(ctx, t, a, imad(ctx, k, M, lj.iv));
    LLVMValueRef pp = elem_ptr(ctx, t, a, imad(ctx, p, M, lj.iv));
    LLVMValueRef vk = LLVMBuildLoad2(ctx->b, t, pk, ""), vp = LLVMBuildLoad2(ctx->b, t, pp, "");
    LLVMBuildStore(ctx->b, vk, pp);
    LLVMBuildStore(ctx->b, vp, pk);
    mlcc_emit_loop_end(ctx, &lj);
  }
  LLVMValueRef d = load_var(ctx, t, det);
  d = sel(ctx, icmp(ctx, LLVMIntNE, p, k), LLVMBuildFNeg(ctx->b, d, ""), d);
  LLVMValueRef piv = elem_load(ctx, t, a, kk);
  LLVMBuildStore(ctx->b, fp_mul(ctx, d, piv), det);
  LLVMValueRef nonzero = fcmp(ctx, LLVMRealONE, piv, fc(t, 0));
  {
    mlcc_loop_t li = mlcc_emit_loop_begin(ctx, k1, end, 1, "el");
    LLVMValueRef row = imulc(ctx, li.iv, M);
    LLVMValueRef f = sel(ctx, nonzero, fp_div(ctx, elem_load(ctx, t, a, iadd(ctx, row, k)), piv),
                         fc(t, 0));
    mlcc_loop_t lj = mlcc_emit_loop_begin(ctx, k1, end, 1, "ej");
    LLVMValueRef pij = elem_ptr(ctx, t, a, iadd(ctx, row, lj.iv));
    LLVMValueRef akj = elem_load(ctx, t, a, imad(ctx, k, M, lj.iv));
    LLVMValueRef nv = fp_sub(ctx, LLVMBuildLoad2(ctx->b, t, pij, ""), fp_mul(ctx, f, akj));
    LLVMBuildStore(ctx->b, nv, pij);
    mlcc_emit_loop_end(ctx, &lj);
    mlcc_emit_loop_end(ctx, &li);
  }
  mlcc_emit_loop_end(ctx, &lk);
  mlcc_status_t st = mlcc_emit_store_output(
      ctx, node, 0, lb.iv, mlcc_emit_convert(ctx, load_var(ctx, t, det), MLCC_DTYPE_F64, y->dtype));
  mlcc_emit_loop_end(ctx, &lb);
  return st;
}

// Stack bytes (kernels.h): Det copies each M x M matrix into a float64 array.
static int64_t det_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* only) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (x == NULL || !x->shape_known || x->shape.rank < 2) return 0;
  int64_t m = x->shape.dims[x->shape.rank - 1];
  return m > 0 ? m * m * 8 : 0;
}

//===----------------------------------------------------------------------===//
// AffineGrid (20)
//===----------------------------------------------------------------------===//

// Normalized coordinate of index |i| along a dim of |len| points: -1 + 2i/(len-1)
// with align_corners (-1 for a single point), else -1 + (2i+1)/len.
static LLVMValueRef affine_coord(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef i,
                                 int64_t len, bool align) {
  LLVMValueRef f = LLVMBuildSIToFP(ctx->b, i, mlcc_emit_type(ctx, dt), "");
  if (align) {
    if (len <= 1) return mlcc_emit_const(ctx, dt, -1.0);
    return LLVMBuildFAdd(ctx->b, mlcc_emit_const(ctx, dt, -1.0),
                         LLVMBuildFMul(ctx->b, f, mlcc_emit_const(ctx, dt, 2.0 / (double)(len - 1)), ""),
                         "");
  }
  LLVMValueRef t = LLVMBuildFAdd(ctx->b, LLVMBuildFMul(ctx->b, f, mlcc_emit_const(ctx, dt, 2.0), ""),
                                 mlcc_emit_const(ctx, dt, 1.0), "");
  return LLVMBuildFAdd(ctx->b, mlcc_emit_const(ctx, dt, -1.0),
                       LLVMBuildFDiv(ctx->b, t, mlcc_emit_const(ctx, dt, (double)len), ""), "");
}

// grid[n, (d,) h, w, r] = sum_c theta[n, r, c] * [x_w, y_h, (z_d,) 1][c].
static mlcc_status_t emit_misc_affine_grid(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* th = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_dtype_t dt = th->dtype;
  int64_t align = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "align_corners", 0, &align));
  const int32_t r = y->shape.rank;  // 4 (2-D) or 5 (3-D)
  const int64_t k = r == 4 ? 2 : 3;  // coordinates per point
  if (mlcc_shape_numel_unchecked(&y->shape) == 0) return mlcc_ok_status();
  const int64_t N = y->shape.dims[0];
  const int64_t Dd = r == 5 ? y->shape.dims[1] : 1, H = y->shape.dims[r - 3],
                W = y->shape.dims[r - 2];
  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, N, "gn");
  mlcc_loop_t ld = mlcc_emit_for(ctx, 0, Dd, "gd");
  mlcc_loop_t lh = mlcc_emit_for(ctx, 0, H, "gh");
  mlcc_loop_t lw = mlcc_emit_for(ctx, 0, W, "gw");
  LLVMValueRef p[4];
  p[0] = affine_coord(ctx, dt, lw.iv, W, align != 0);
  p[1] = affine_coord(ctx, dt, lh.iv, H, align != 0);
  p[2] = r == 5 ? affine_coord(ctx, dt, ld.iv, Dd, align != 0) : NULL;
  LLVMValueRef pt = wmad(ctx, wmad(ctx, wmad(ctx, ln.iv, Dd, ld.iv), H, lh.iv), W, lw.iv);
  mlcc_status_t st = mlcc_ok_status();
  for (int64_t row = 0; row < k && mlcc_status_is_ok(st); ++row) {
    LLVMValueRef tb = wmad(ctx, ln.iv, k * (k + 1), c64(ctx, row * (k + 1)));
    LLVMValueRef acc = mlcc_emit_load(ctx, th, wadd(ctx, tb, c64(ctx, k)));  // translation
    for (int64_t c = 0; c < k; ++c) {
      LLVMValueRef tv = mlcc_emit_load(ctx, th, wadd(ctx, tb, c64(ctx, c)));
      acc = mlcc_emit_fmuladd(ctx, tv, p[c], acc);
    }
    st = mlcc_emit_store_output(ctx, node, 0, wmad(ctx, pt, k, c64(ctx, row)), acc);
  }
  mlcc_emit_loop_end(ctx, &lw);
  mlcc_emit_loop_end(ctx, &lh);
  mlcc_emit_loop_end(ctx, &ld);
  mlcc_emit_loop_end(ctx, &ln);
  return st;
}


//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_grid_sample = {.emit = emit_grid_sample};
const mlcc_emitter_t mlcc_emit_roi_align = {.emit = emit_roi_align};
const mlcc_emitter_t mlcc_emit_max_roi_pool = {.emit = emit_max_roi_pool};
const mlcc_emitter_t mlcc_emit_max_unpool = {.emit = emit_max_unpool};
const mlcc_emitter_t mlcc_emit_upsample = {.emit = emit_upsample};
const mlcc_emitter_t mlcc_emit_reverse_sequence = {.emit = emit_reverse_sequence};
const mlcc_emitter_t mlcc_emit_det = {.emit = emit_det, .stack_bytes = det_stack_bytes};
const mlcc_emitter_t mlcc_emit_misc_affine_grid = {.emit = emit_misc_affine_grid};

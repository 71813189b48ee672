// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the quantization ops (ops.def "Quantization"):
// QuantizeLinear / DequantizeLinear (per-tensor and per-axis, opsets 10-26;
// 21+: blocked quantization, int16/uint16 and int4/uint4),
// DynamicQuantizeLinear 11, QLinearConv / ConvInteger 10 and QLinearMatMul /
// MatMulInteger 10. Scalar loop nests through the emit.h toolkit; scales and
// zero points are read at run time (they are ordinary kernel arguments).
// QLinearConv / ConvInteger first try the integer micro-kernels of
// targets/kernels/qgemm.c (bit-identical results); these loops cover the rest.
//
// Arithmetic (ONNX specs; matches onnxruntime's reference kernels):
// * Quantize: y = saturate(round_half_even(x / scale) + zero_point), in
//   float32; saturation to [0,255] (uint8), [-128,127] (int8), [0,65535]
//   (uint16), [-32768,32767] (int16), [0,15] (uint4) or [-8,7] (int4, both
//   opset 21+, held one per byte); NaN gives the lower bound.
// * Dequantize: y = float(x - zero_point) * scale.
// * float8 (19+): Quantize y = float8(x / scale + zero_point) rounded by
//   Cast's tables under 'saturate' (targets/emit/float8.c; no integer
//   rounding or clamp); Dequantize y = (float(x) - float(zero_point)) *
//   scale, both decoded exactly.
// * Integer contractions subtract the zero points from int8/uint8 operands
//   and accumulate in int32 (wrapping, as the specs allow). QLinear* ops then
//   requantize: y = saturate(round_half_even(float(acc) * M) + y_zero_point)
//   with M = (a_scale * b_scale) / y_scale in float32 (QLinearConv adds the
//   int32 bias to acc first).
// * DynamicQuantizeLinear: the range [min(x), max(x)] is widened to include
//   0; scale = (max - min) / 255, or 1 when max == min (as onnxruntime; the
//   ONNX function body would divide 0 by 0); zero_point =
//   round_half_even(saturate(0 - min / scale)); y as Quantize.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/quant.h"
#include "ir/ops/spatial.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"
#include "targets/kernels/qgemm.h"
#include "targets/kernels/qgemm_mcu.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Element |idx| of integer |v| widened to i32 (zero-extended for unsigned),
// or i32 0 when |v| is NULL (an omitted zero point).
static LLVMValueRef load_i32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx) {
  if (v == NULL) return LLVMConstInt(ctx->t_i32, 0, 0);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, idx), v->dtype, MLCC_DTYPE_I32);
}

// Element |idx| of float32 |v|, or |dflt| when |v| is NULL.
static LLVMValueRef load_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx,
                             float dflt) {
  if (v == NULL) return mlcc_emit_f32(ctx, dflt);
  return mlcc_emit_load(ctx, v, idx);
}

// Element |idx| of zero point |v| (any integer dtype) as float32; 0 if NULL.
static LLVMValueRef load_zp_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx) {
  if (v == NULL) return mlcc_emit_f32(ctx, 0.f);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, idx), v->dtype, MLCC_DTYPE_F32);
}

// The saturation range of quantized type |qdt|: int8, uint8 and (Q/DQ 21)
// int16, uint16, int4, uint4 and (25) int2, uint2.
static void qrange(mlcc_dtype_t qdt, float* lo, float* hi) {
  switch (qdt) {
    case MLCC_DTYPE_I8: *lo = -128.f, *hi = 127.f; break;
    case MLCC_DTYPE_I4: *lo = -8.f, *hi = 7.f; break;
    case MLCC_DTYPE_U4: *lo = 0.f, *hi = 15.f; break;
    case MLCC_DTYPE_I2: *lo = -2.f, *hi = 1.f; break;
    case MLCC_DTYPE_U2: *lo = 0.f, *hi = 3.f; break;
    case MLCC_DTYPE_I16: *lo = -32768.f, *hi = 32767.f; break;
    case MLCC_DTYPE_U16: *lo = 0.f, *hi = 65535.f; break;
    default: *lo = 0.f, *hi = 255.f; break;
  }
}

// round_half_even(|f|) + |zp_f| clamped to the float bounds [|lo|, |hi|]
// (the dtype's range, narrowed by a fused activation) converted to |qdt|.
static LLVMValueRef requantize_in(mlcc_emit_ctx_t* ctx, LLVMValueRef f, LLVMValueRef zp_f,
                                  LLVMValueRef lo, LLVMValueRef hi, mlcc_dtype_t qdt) {
  LLVMValueRef r = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
  r = LLVMBuildFAdd(ctx->b, r, zp_f, "");
  r = mlcc_emit_max(ctx, MLCC_DTYPE_F32, r, lo);
  r = mlcc_emit_min(ctx, MLCC_DTYPE_F32, r, hi);
  // r is integral and inside qdt's range: through i32, then truncate. (A
  // direct f32 -> i8 conversion vectorizes to RVV's narrowing vfncvt at a
  // fractional LMUL, on which qemu 7.2's translator asserts.)
  LLVMValueRef i = LLVMBuildFPToSI(ctx->b, r, ctx->t_i32, "");
  return LLVMBuildTrunc(ctx->b, i, mlcc_emit_type(ctx, qdt), "");
}

// saturate(round_half_even(|f|) + |zp_f|) converted to |qdt| (int8/uint8).
static LLVMValueRef requantize(mlcc_emit_ctx_t* ctx, LLVMValueRef f, LLVMValueRef zp_f,
                               mlcc_dtype_t qdt) {
  float lo = 0, hi = 0;
  qrange(qdt, &lo, &hi);
  return requantize_in(ctx, f, zp_f, mlcc_emit_f32(ctx, lo), mlcc_emit_f32(ctx, hi), qdt);
}

// Linear offset in a row-major tensor of shape |view| of the element that
// output coordinates |coord[0..n_coord)| broadcast to: dims are aligned on
// the right and a dim of 1 reads index 0. Requires view->rank <= n_coord.
static LLVMValueRef bcast_offset(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* view,
                                 const LLVMValueRef* coord, int32_t n_coord) {
  LLVMValueRef off = c64(ctx, 0);
  int64_t stride = 1;
  for (int32_t d = view->rank - 1; d >= 0; --d) {
    if (view->dims[d] != 1) {
      off = iadd(ctx, off, imulc(ctx, coord[n_coord - view->rank + d], stride));
    }
    stride *= view->dims[d];
  }
  return off;
}

//===----------------------------------------------------------------------===//
// QuantizeLinear, DequantizeLinear
//===----------------------------------------------------------------------===//

// int8, uint8, int16, uint16 (whole-byte integers of at most 16 bits).
static bool narrow_int(mlcc_dtype_t dt) {
  return dt == MLCC_DTYPE_I8 || dt == MLCC_DTYPE_U8 || dt == MLCC_DTYPE_I16 ||
         dt == MLCC_DTYPE_U16;
}

static mlcc_status_t emit_quant_linear(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  bool quant = node->op == MLCC_OP_QUANTIZE_LINEAR;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* s = mlcc_node_input(node, 1);
  const mlcc_value_t* zp = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_quant_linear_t q;
  MLCC_RETURN_IF_ERROR(mlcc_quant_linear_resolve(node, &q));
  if (q.outer * q.len * q.inner == 0) return mlcc_ok_status();
  LLVMBuilderRef b = ctx->b;
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, q.outer, "qo");
  mlcc_loop_t lc = mlcc_emit_for(ctx, 0, q.len, "qc");
  // Per-tensor / per-axis: the parameters of channel lc; blocked: of
  // (lo, lc / block, li), read in the inner loop.
  LLVMValueRef pidx = lc.iv;
  LLVMValueRef sv = q.block > 0 ? NULL : load_f32(ctx, s, lc.iv, 1.f);
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, q.inner, "qi");
  if (q.block > 0) {
    pidx = imad(ctx, imad(ctx, lo.iv, q.n_blocks, LLVMBuildSDiv(b, lc.iv, c64(ctx, q.block), "")),
                q.inner, li.iv);
    sv = load_f32(ctx, s, pidx, 1.f);
  }
  LLVMValueRef idx = imad(ctx, imad(ctx, lo.iv, q.len, lc.iv), q.inner, li.iv);
  LLVMValueRef r = NULL;
  if (quant) {
    LLVMValueRef xf = mlcc_emit_convert(ctx, mlcc_emit_load(ctx, x, idx), x->dtype,
                                        MLCC_DTYPE_F32);
    if (mlcc_dtype_is_float8(y->dtype)) {
      // float8 (19+): x / scale + zero point rounded to the float8 type by
      // Cast's tables under 'saturate' (no integer rounding, no clamp).
      LLVMValueRef v = LLVMBuildFDiv(b, xf, sv, "");
      if (zp != NULL) v = LLVMBuildFAdd(b, v, load_zp_f32(ctx, zp, pidx), "");
      r = mlcc_emit_float_to_float8(ctx, v, y->dtype, mlcc_emit_cast_f8_flags(node));
    } else {
      r = requantize(ctx, LLVMBuildFDiv(b, xf, sv, ""), load_zp_f32(ctx, zp, pidx), y->dtype);
    }
  } else if (mlcc_dtype_is_float8(x->dtype)) {
    // float8 (19+): (x - zero point) * scale with x and the zero point decoded
    // exactly to float32.
    LLVMValueRef d = mlcc_emit_convert(ctx, mlcc_emit_load(ctx, x, idx), x->dtype,
                                       MLCC_DTYPE_F32);
    if (zp != NULL) d = LLVMBuildFSub(b, d, load_zp_f32(ctx, zp, pidx), "");
    r = LLVMBuildFMul(b, d, sv, "");
  } else if (narrow_int(x->dtype) && (zp == NULL || narrow_int(zp->dtype))) {
    // 8- and 16-bit x and zero point: x - zp is exact in i32 (|x - zp| <
    // 2^17) and exactly representable in float32, so the i32 path gives the
    // i64 path's bits; i32 -> f32 vectorizes where i64 -> f32 does not
    // (AVX2, NEON without a 64-bit lane conversion).
    LLVMValueRef xi = mlcc_emit_convert(ctx, mlcc_emit_load(ctx, x, idx), x->dtype,
                                        MLCC_DTYPE_I32);
    LLVMValueRef zi = zp == NULL ? LLVMConstInt(ctx->t_i32, 0, 0)
                                 : mlcc_emit_convert(ctx, mlcc_emit_load(ctx, zp, pidx),
                                                     zp->dtype, MLCC_DTYPE_I32);
    LLVMValueRef d = mlcc_emit_convert(ctx, LLVMBuildSub(b, xi, zi, ""), MLCC_DTYPE_I32,
                                       MLCC_DTYPE_F32);
    r = LLVMBuildFMul(b, d, sv, "");
  } else {
    // int32 inputs may have zero points far from 0: subtract in i64.
    LLVMValueRef xi = mlcc_emit_convert(ctx, mlcc_emit_load(ctx, x, idx), x->dtype,
                                        MLCC_DTYPE_I64);
    LLVMValueRef zi = zp == NULL ? c64(ctx, 0)
                                 : mlcc_emit_convert(ctx, mlcc_emit_load(ctx, zp, pidx),
                                                     zp->dtype, MLCC_DTYPE_I64);
    LLVMValueRef d = mlcc_emit_convert(ctx, LLVMBuildSub(b, xi, zi, ""), MLCC_DTYPE_I64,
                                       MLCC_DTYPE_F32);
    r = LLVMBuildFMul(b, d, sv, "");
  }
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, idx, r);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lc);
  mlcc_emit_loop_end(ctx, &lo);
  return st;
}

//===----------------------------------------------------------------------===//
// DynamicQuantizeLinear
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_quant_dynamic(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  int64_t n = mlcc_shape_numel_unchecked(&x->shape);
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef tf = ctx->t_f32;
  LLVMValueRef zero = mlcc_emit_f32(ctx, 0.f);
  // Range of x widened to include 0.
  LLVMValueRef vmin = mlcc_emit_var(ctx, tf, zero), vmax = mlcc_emit_var(ctx, tf, zero);
  if (n > 0) {
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "dmm");
    LLVMValueRef v = mlcc_emit_load(ctx, x, l.iv);
    LLVMBuildStore(b, mlcc_emit_min(ctx, MLCC_DTYPE_F32, LLVMBuildLoad2(b, tf, vmin, ""), v),
                   vmin);
    LLVMBuildStore(b, mlcc_emit_max(ctx, MLCC_DTYPE_F32, LLVMBuildLoad2(b, tf, vmax, ""), v),
                   vmax);
    mlcc_emit_loop_end(ctx, &l);
  }
  LLVMValueRef mn = LLVMBuildLoad2(b, tf, vmin, "min"), mx = LLVMBuildLoad2(b, tf, vmax, "max");
  LLVMValueRef range = LLVMBuildFSub(b, mx, mn, "");
  LLVMValueRef flat = LLVMBuildFCmp(b, LLVMRealOEQ, mx, mn, "");
  LLVMValueRef scale = LLVMBuildSelect(
      b, flat, mlcc_emit_f32(ctx, 1.f), LLVMBuildFDiv(b, range, mlcc_emit_f32(ctx, 255.f), ""),
      "scale");
  LLVMValueRef zpf = LLVMBuildFSub(b, zero, LLVMBuildFDiv(b, mn, scale, ""), "");
  zpf = mlcc_emit_max(ctx, MLCC_DTYPE_F32, zpf, zero);
  zpf = mlcc_emit_min(ctx, MLCC_DTYPE_F32, zpf, mlcc_emit_f32(ctx, 255.f));
  zpf = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &zpf, 1);
  mlcc_status_t st = mlcc_ok_status();
  if (mlcc_node_output(node, 1) != NULL) {
    st = mlcc_emit_store_output(ctx, node, 1, c64(ctx, 0), scale);
  }
  if (mlcc_status_is_ok(st) && mlcc_node_output(node, 2) != NULL) {
    st = mlcc_emit_store_output(ctx, node, 2, c64(ctx, 0),
                                mlcc_emit_convert(ctx, zpf, MLCC_DTYPE_F32, MLCC_DTYPE_U8));
  }
  if (!mlcc_status_is_ok(st) || n == 0 || mlcc_node_output(node, 0) == NULL) return st;
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "dq");
  LLVMValueRef v = LLVMBuildFDiv(b, mlcc_emit_load(ctx, x, l.iv), scale, "");
  st = mlcc_emit_store_output(ctx, node, 0, l.iv, requantize(ctx, v, zpf, MLCC_DTYPE_U8));
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// QLinearConv, ConvInteger
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_quant_conv(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  bool done = false;
  MLCC_RETURN_IF_ERROR(mlcc_emit_qgemm_conv(ctx, node, &done));
  if (done) return mlcc_ok_status();
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  mlcc_spatial_t g;
  MLCC_RETURN_IF_ERROR(mlcc_quant_conv_resolve(node, &g));
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *x = ops.x, *w = ops.w, *xz = ops.x_zero, *wz = ops.w_zero;
  const mlcc_value_t *xs = ops.x_scale, *ws = ops.w_scale, *ys = ops.y_scale, *yz = ops.y_zero;
  const mlcc_value_t *bias = ops.bias, *y = ops.y;
  int32_t ns = g.n_spatial;
  int64_t batch = x->shape.dims[0], c_in = x->shape.dims[1], m_out = g.out_channels;
  int64_t cg = w->shape.dims[1], mg = m_out / g.group;
  int64_t in_numel = 1, out_numel = 1, k_numel = 1;
  for (int32_t d = 0; d < ns; ++d) {
    in_numel *= g.in[d];
    out_numel *= g.out[d];
    k_numel *= g.kernel[d];
  }
  if (mlcc_shape_numel_unchecked(&y->shape) == 0) return mlcc_ok_status();
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef zero = LLVMConstInt(ctx->t_i32, 0, 0);
  bool w_per_channel = wz != NULL && mlcc_shape_numel_unchecked(&wz->shape) != 1;
  bool ws_per_channel = ws != NULL && mlcc_shape_numel_unchecked(&ws->shape) != 1;
  // Per-tensor parameters, read once.
  LLVMValueRef xzv = load_i32(ctx, xz, c64(ctx, 0));
  LLVMValueRef wzv = w_per_channel ? NULL : load_i32(ctx, wz, c64(ctx, 0));
  LLVMValueRef xsv = NULL, wsv = NULL, ysv = NULL, yzf = NULL;
  if (qlinear) {
    xsv = load_f32(ctx, xs, c64(ctx, 0), 1.f);
    wsv = ws_per_channel ? NULL : load_f32(ctx, ws, c64(ctx, 0), 1.f);
    ysv = load_f32(ctx, ys, c64(ctx, 0), 1.f);
    yzf = load_zp_f32(ctx, yz, c64(ctx, 0));
  }
  LLVMValueRef qlo = NULL, qhi = NULL;
  if (qlinear) mlcc_qgemm_act_bounds(ctx, node, y->dtype, ysv, yzf, &qlo, &qhi);

  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, batch, "qcn");
  mlcc_loop_t lm = mlcc_emit_for(ctx, 0, m_out, "qcm");
  LLVMValueRef grp = LLVMBuildUDiv(b, lm.iv, c64(ctx, mg), "");
  LLVMValueRef wz_m = w_per_channel ? load_i32(ctx, wz, lm.iv) : wzv;
  LLVMValueRef acc0 = bias != NULL ? load_i32(ctx, bias, lm.iv) : zero;
  LLVMValueRef mult = NULL;
  if (qlinear) {
    LLVMValueRef ws_m = ws_per_channel ? load_f32(ctx, ws, lm.iv, 1.f) : wsv;
    mult = LLVMBuildFDiv(b, LLVMBuildFMul(b, xsv, ws_m, ""), ysv, "mult");
  }
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, out_numel, "qco");
  LLVMValueRef o[MLCC_MAX_SPATIAL];
  mlcc_shape_t out_sp;
  memset(&out_sp, 0, sizeof(out_sp));
  out_sp.rank = ns;
  for (int32_t d = 0; d < ns; ++d) out_sp.dims[d] = g.out[d];
  mlcc_emit_unravel(ctx, &out_sp, lo.iv, o);
  LLVMValueRef acc = mlcc_emit_var(ctx, ctx->t_i32, NULL);
  LLVMBuildStore(b, acc0, acc);
  mlcc_loop_t lc = mlcc_emit_for(ctx, 0, cg, "qcc");
  LLVMValueRef c = iadd(ctx, imulc(ctx, grp, cg), lc.iv);
  LLVMValueRef x_base = imulc(ctx, imad(ctx, ln.iv, c_in, c), in_numel);
  LLVMValueRef w_base = imulc(ctx, imad(ctx, lm.iv, cg, lc.iv), k_numel);
  mlcc_loop_t lk[MLCC_MAX_SPATIAL];
  for (int32_t d = 0; d < ns; ++d) lk[d] = mlcc_emit_for(ctx, 0, g.kernel[d], "qck");
  LLVMValueRef valid = LLVMConstInt(ctx->t_i1, 1, 0);
  LLVMValueRef x_off = c64(ctx, 0), w_off = c64(ctx, 0);
  for (int32_t d = 0; d < ns; ++d) {
    // pos = o*stride - pad_begin + k*dilation; inside iff 0 <= pos < in.
    LLVMValueRef pos = iadd(ctx, imulc(ctx, o[d], g.strides[d]),
                            iaddc(ctx, imulc(ctx, lk[d].iv, g.dilations[d]), -g.pad_begin[d]));
    LLVMValueRef in_d = LLVMBuildICmp(b, LLVMIntULT, pos, c64(ctx, g.in[d]), "");
    valid = LLVMBuildAnd(b, valid, in_d, "");
    pos = LLVMBuildSelect(b, in_d, pos, c64(ctx, 0), "");
    x_off = imad(ctx, x_off, g.in[d], pos);
    w_off = imad(ctx, w_off, g.kernel[d], lk[d].iv);
  }
  LLVMValueRef xv = LLVMBuildSub(b, load_i32(ctx, x, iadd(ctx, x_base, x_off)), xzv, "");
  xv = LLVMBuildSelect(b, valid, xv, zero, "");  // padding holds x_zero_point
  LLVMValueRef wv = LLVMBuildSub(b, load_i32(ctx, w, iadd(ctx, w_base, w_off)), wz_m, "");
  LLVMValueRef sum = LLVMBuildAdd(b, LLVMBuildLoad2(b, ctx->t_i32, acc, ""),
                                  LLVMBuildMul(b, xv, wv, ""), "");
  LLVMBuildStore(b, sum, acc);
  for (int32_t d = ns - 1; d >= 0; --d) mlcc_emit_loop_end(ctx, &lk[d]);
  mlcc_emit_loop_end(ctx, &lc);
  LLVMValueRef r = LLVMBuildLoad2(b, ctx->t_i32, acc, "acc");
  if (qlinear) {
    LLVMValueRef f = LLVMBuildFMul(b, mlcc_emit_convert(ctx, r, MLCC_DTYPE_I32, MLCC_DTYPE_F32),
                                   mult, "");
    r = requantize_in(ctx, f, yzf, qlo, qhi, y->dtype);
  }
  LLVMValueRef y_idx = imad(ctx, imad(ctx, ln.iv, m_out, lm.iv), out_numel, lo.iv);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, y_idx, r);
  mlcc_emit_loop_end(ctx, &lo);
  mlcc_emit_loop_end(ctx, &lm);
  mlcc_emit_loop_end(ctx, &ln);
  return st;
}

// NAME_STACK_SIZE share of QLinearConv / ConvInteger: the fast path's packed
// rows or plane (qgemm.h; the x86 depthwise plane only when |only| is x86 or
// NULL).
static int64_t quant_conv_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* only) {
  return mlcc_qgemm_conv_stack_bytes(node, only);
}

//===----------------------------------------------------------------------===//
// QLinearMatMul, MatMulInteger
//===----------------------------------------------------------------------===//

// The row form of the reference loops (any QLinearMatMul / MatMulInteger the
// integer micro-kernels decline on a Linux target, e.g. attention's
// activation x activation products): per output row an int32 row of N
// accumulators on the stack, k outer and n inner, so the n loop runs on
// contiguous B elements and LLVM vectorizes it. B's zero point must be one
// element (or absent); then
//   sum_k (a - a_zp)(b - b_zp) = sum_k (a - a_zp) b - b_zp * sum_k (a - a_zp)
// in wrapping int32, the same value as the element loop below, and the
// requantization is the same formula, so the results are bit-identical.
// Returns N (the row's elements) when the form applies, else 0.
#define QMM_ROW_MAX_N 4096
static int64_t quant_matmul_row_n(const mlcc_node_t* node, const mlcc_target_t* target) {
  if (target != NULL && mlcc_qgemm_mcu_kind(target) != MLCC_QMCU_NONE) return 0;
  if (mlcc_qgemm_matmul_stack_bytes(node) > 0) return 0;  // the blocked kernel takes it
  mlcc_quant_matmul_t q;
  mlcc_status_t st = mlcc_quant_matmul_resolve(node, &q);
  if (!mlcc_status_is_ok(st)) {
    mlcc_status_free(st);
    return 0;
  }
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  if (ops.w_zero != NULL && (!ops.w_zero->shape_known ||
                             mlcc_shape_numel_unchecked(&ops.w_zero->shape) != 1)) {
    return 0;
  }
  if (q.n < 2 || q.n > QMM_ROW_MAX_N || q.k < 1) return 0;
  return q.n;
}

static mlcc_status_t emit_quant_matmul_rows(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                            const mlcc_quant_matmul_t* q) {
  bool qlinear = node->op == MLCC_OP_QLINEAR_MATMUL;
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *a = ops.x, *bm = ops.w, *az = ops.x_zero, *bz = ops.w_zero;
  const mlcc_value_t *as = ops.x_scale, *bs = ops.w_scale, *ys = ops.y_scale, *yz = ops.y_zero;
  const mlcc_value_t *bias = ops.bias, *y = ops.y;
  int64_t nb = mlcc_shape_numel_unchecked(&q->batch);
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i32 = ctx->t_i32;
  unsigned lanes = ctx->target != NULL && ctx->target->vector_bytes >= 64   ? 16
                   : ctx->target != NULL && ctx->target->vector_bytes >= 32 ? 8
                                                                            : 4;
  LLVMValueRef b_ptr = mlcc_emit_ptr(ctx, bm);
  LLVMValueRef row = mlcc_emit_entry_array(ctx, i32, q->n, 64, "qmrow");
  LLVMValueRef ysv = NULL, yzf = NULL, qlo = NULL, qhi = NULL;
  if (qlinear) {
    ysv = load_f32(ctx, ys, c64(ctx, 0), 1.f);
    yzf = load_zp_f32(ctx, yz, c64(ctx, 0));
    mlcc_qgemm_act_bounds(ctx, node, y->dtype, ysv, yzf, &qlo, &qhi);
  }
  LLVMValueRef bzv = load_i32(ctx, bz, c64(ctx, 0));
  int32_t nc = q->batch.rank + 2;
  LLVMValueRef coord[MLCC_MAX_RANK + 2];
  mlcc_loop_t lb = mlcc_emit_for(ctx, 0, nb, "qmb");
  mlcc_emit_unravel(ctx, &q->batch, lb.iv, coord);
  LLVMValueRef a_base = imulc(ctx, bcast_offset(ctx, &q->a_batch, coord, q->batch.rank), q->m * q->k);
  LLVMValueRef b_base = imulc(ctx, bcast_offset(ctx, &q->b_batch, coord, q->batch.rank), q->k * q->n);
  mlcc_loop_t lm = mlcc_emit_for(ctx, 0, q->m, "qmm");
  coord[nc - 2] = lm.iv;
  coord[nc - 1] = c64(ctx, 0);
  LLVMValueRef ap = bcast_offset(ctx, &q->a_param, coord, nc);
  LLVMValueRef azv = load_i32(ctx, az, ap);
  LLVMValueRef asv = qlinear ? load_f32(ctx, as, ap, 1.f) : NULL;
  // row[n] = bias[n] (or 0)
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, q->n, "qmi");
  LLVMValueRef init = bias != NULL ? load_i32(ctx, bias, li.iv) : LLVMConstInt(i32, 0, 0);
  LLVMBuildStore(b, init, LLVMBuildGEP2(b, i32, row, &li.iv, 1, ""));
  mlcc_emit_loop_end(ctx, &li);
  LLVMValueRef asum = mlcc_emit_var(ctx, i32, LLVMConstInt(i32, 0, 0));
  LLVMValueRef a_row = iadd(ctx, a_base, imulc(ctx, lm.iv, q->k));
  mlcc_loop_t lk = mlcc_emit_for(ctx, 0, q->k, "qmk");
  LLVMValueRef av = LLVMBuildSub(b, load_i32(ctx, a, iadd(ctx, a_row, lk.iv)), azv, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, asum, ""), av, ""), asum);
  LLVMValueRef b_row = iadd(ctx, b_base, imulc(ctx, lk.iv, q->n));
  // Whole vectors of |lanes| accumulators (explicit vector IR, so LLVM keeps
  // n innermost instead of unrolling it and vectorizing k with gathers),
  // then a scalar tail.
  int64_t n_vec = b_ptr != NULL ? q->n / lanes * lanes : 0;
  LLVMTypeRef vi32 = LLVMVectorType(i32, lanes);
  LLVMValueRef av_v = LLVMBuildInsertElement(b, LLVMGetUndef(vi32), av, LLVMConstInt(i32, 0, 0), "");
  av_v = LLVMBuildShuffleVector(b, av_v, LLVMGetUndef(vi32), LLVMConstNull(vi32), "");
  if (n_vec > 0) {
    mlcc_loop_t lv = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, n_vec), lanes, "qmv");
    LLVMValueRef slot = LLVMBuildGEP2(b, i32, row, &lv.iv, 1, "");
    LLVMValueRef bi = iadd(ctx, b_row, lv.iv);
    LLVMValueRef bp = LLVMBuildInBoundsGEP2(b, ctx->t_i8, b_ptr, &bi, 1, "");
    LLVMValueRef bx = LLVMBuildLoad2(b, LLVMVectorType(ctx->t_i8, lanes), bp, "");
    LLVMSetAlignment(bx, 1);
    LLVMValueRef bv = bm->dtype == MLCC_DTYPE_U8 ? LLVMBuildZExt(b, bx, vi32, "")
                                                 : LLVMBuildSExt(b, bx, vi32, "");
    LLVMValueRef acc = LLVMBuildLoad2(b, vi32, slot, "");
    LLVMSetAlignment(acc, 4);
    LLVMValueRef st = LLVMBuildStore(b, LLVMBuildAdd(b, acc, LLVMBuildMul(b, av_v, bv, ""), ""),
                                     slot);
    LLVMSetAlignment(st, 4);
    mlcc_emit_loop_end(ctx, &lv);
  }
  if (n_vec < q->n) {
    mlcc_loop_t ln = mlcc_emit_for(ctx, n_vec, q->n, "qmn");
    LLVMValueRef slot = LLVMBuildGEP2(b, i32, row, &ln.iv, 1, "");
    LLVMValueRef bv = load_i32(ctx, bm, iadd(ctx, b_row, ln.iv));
    LLVMBuildStore(
        b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, slot, ""), LLVMBuildMul(b, av, bv, ""), ""),
        slot);
    mlcc_emit_loop_end(ctx, &ln);
  }
  mlcc_emit_loop_end(ctx, &lk);
  LLVMValueRef corr = LLVMBuildMul(b, bzv, LLVMBuildLoad2(b, i32, asum, ""), "");
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, q->n, "qmo");
  coord[nc - 2] = c64(ctx, 0);
  coord[nc - 1] = lo.iv;
  LLVMValueRef r = LLVMBuildSub(
      b, LLVMBuildLoad2(b, i32, LLVMBuildGEP2(b, i32, row, &lo.iv, 1, ""), ""), corr, "acc");
  if (qlinear) {
    LLVMValueRef bsv = load_f32(ctx, bs, bcast_offset(ctx, &q->b_param, coord, nc), 1.f);
    LLVMValueRef mult = LLVMBuildFDiv(b, LLVMBuildFMul(b, asv, bsv, ""), ysv, "mult");
    LLVMValueRef f =
        LLVMBuildFMul(b, mlcc_emit_convert(ctx, r, MLCC_DTYPE_I32, MLCC_DTYPE_F32), mult, "");
    r = requantize_in(ctx, f, yzf, qlo, qhi, y->dtype);
  }
  LLVMValueRef y_idx = imad(ctx, imad(ctx, lb.iv, q->m, lm.iv), q->n, lo.iv);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, y_idx, r);
  mlcc_emit_loop_end(ctx, &lo);
  mlcc_emit_loop_end(ctx, &lm);
  mlcc_emit_loop_end(ctx, &lb);
  return st;
}

static mlcc_status_t emit_quant_matmul(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  bool done = false;
  MLCC_RETURN_IF_ERROR(mlcc_emit_qgemm_matmul(ctx, node, &done));
  if (done) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(mlcc_emit_qgemm_matmul_mcu(ctx, node, &done));
  if (done) return mlcc_ok_status();
  bool qlinear = node->op == MLCC_OP_QLINEAR_MATMUL;
  mlcc_quant_matmul_t q;
  MLCC_RETURN_IF_ERROR(mlcc_quant_matmul_resolve(node, &q));
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *a = ops.x, *bm = ops.w, *az = ops.x_zero, *bz = ops.w_zero;
  const mlcc_value_t *as = ops.x_scale, *bs = ops.w_scale, *ys = ops.y_scale, *yz = ops.y_zero;
  const mlcc_value_t *bias = ops.bias, *y = ops.y;
  int64_t nb = mlcc_shape_numel_unchecked(&q.batch);
  if (nb * q.m * q.n == 0) return mlcc_ok_status();
  if (quant_matmul_row_n(node, ctx->target) > 0) return emit_quant_matmul_rows(ctx, node, &q);
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef ysv = NULL, yzf = NULL;
  if (qlinear) {
    ysv = load_f32(ctx, ys, c64(ctx, 0), 1.f);
    yzf = load_zp_f32(ctx, yz, c64(ctx, 0));
  }
  LLVMValueRef qlo = NULL, qhi = NULL;
  if (qlinear) mlcc_qgemm_act_bounds(ctx, node, y->dtype, ysv, yzf, &qlo, &qhi);
  int32_t nc = q.batch.rank + 2;
  LLVMValueRef coord[MLCC_MAX_RANK + 2];
  mlcc_loop_t lb = mlcc_emit_for(ctx, 0, nb, "qmb");
  mlcc_emit_unravel(ctx, &q.batch, lb.iv, coord);
  LLVMValueRef a_base = imulc(ctx, bcast_offset(ctx, &q.a_batch, coord, q.batch.rank), q.m * q.k);
  LLVMValueRef b_base = imulc(ctx, bcast_offset(ctx, &q.b_batch, coord, q.batch.rank), q.k * q.n);
  mlcc_loop_t lm = mlcc_emit_for(ctx, 0, q.m, "qmm");
  coord[nc - 2] = lm.iv;
  coord[nc - 1] = c64(ctx, 0);
  LLVMValueRef ap = bcast_offset(ctx, &q.a_param, coord, nc);
  LLVMValueRef azv = load_i32(ctx, az, ap);
  LLVMValueRef asv = qlinear ? load_f32(ctx, as, ap, 1.f) : NULL;
  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, q.n, "qmn");
  coord[nc - 2] = c64(ctx, 0);
  coord[nc - 1] = ln.iv;
  LLVMValueRef bp = bcast_offset(ctx, &q.b_param, coord, nc);
  LLVMValueRef bzv = load_i32(ctx, bz, bp);
  LLVMValueRef acc = mlcc_emit_var(ctx, ctx->t_i32, NULL);
  LLVMBuildStore(b, bias != NULL ? load_i32(ctx, bias, ln.iv) : LLVMConstInt(ctx->t_i32, 0, 0),
                 acc);
  LLVMValueRef a_row = iadd(ctx, a_base, imulc(ctx, lm.iv, q.k));
  LLVMValueRef b_col = iadd(ctx, b_base, ln.iv);
  mlcc_loop_t lk = mlcc_emit_for(ctx, 0, q.k, "qmk");
  LLVMValueRef av = LLVMBuildSub(b, load_i32(ctx, a, iadd(ctx, a_row, lk.iv)), azv, "");
  LLVMValueRef bv =
      LLVMBuildSub(b, load_i32(ctx, bm, iadd(ctx, b_col, imulc(ctx, lk.iv, q.n))), bzv, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, ctx->t_i32, acc, ""),
                                 LLVMBuildMul(b, av, bv, ""), ""),
                 acc);
  mlcc_emit_loop_end(ctx, &lk);
  LLVMValueRef r = LLVMBuildLoad2(b, ctx->t_i32, acc, "acc");
  if (qlinear) {
    LLVMValueRef bsv = load_f32(ctx, bs, bp, 1.f);
    LLVMValueRef mult = LLVMBuildFDiv(b, LLVMBuildFMul(b, asv, bsv, ""), ysv, "mult");
    LLVMValueRef f = LLVMBuildFMul(b, mlcc_emit_convert(ctx, r, MLCC_DTYPE_I32, MLCC_DTYPE_F32),
                                   mult, "");
    r = requantize_in(ctx, f, yzf, qlo, qhi, y->dtype);
  }
  LLVMValueRef y_idx = imad(ctx, imad(ctx, lb.iv, q.m, lm.iv), q.n, ln.iv);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, y_idx, r);
  mlcc_emit_loop_end(ctx, &ln);
  mlcc_emit_loop_end(ctx, &lm);
  mlcc_emit_loop_end(ctx, &lb);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_quant_linear = {.emit = emit_quant_linear};
const mlcc_emitter_t mlcc_emit_quant_dynamic = {.emit = emit_quant_dynamic};
const mlcc_emitter_t mlcc_emit_quant_conv = {
    .emit = emit_quant_conv,
    .parallel_units = mlcc_qgemm_conv_parallel_units,
    .stack_bytes = quant_conv_stack_bytes,
};
static int64_t quant_matmul_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* only) {
  int64_t row_n = quant_matmul_row_n(node, only);
  if (row_n > 0) return 4 * row_n;
  return mlcc_qgemm_matmul_stack_bytes(node);
}

const mlcc_emitter_t mlcc_emit_quant_matmul = {
    .emit = emit_quant_matmul,
    .parallel_units = mlcc_qgemm_matmul_parallel_units,
    .stack_bytes = quant_matmul_stack_bytes,
};

// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the signal-processing ops (ops.def "Signal processing"):
// DFT and STFT as a direct O(N^2) transform, the cosine windows and
// MelWeightMatrix. Geometry and parameters come from the resolvers in
// ir/ops/signal.h, shared with shape inference.
//
// Numerics: everything is computed in double and rounded once on store.
// DFT twiddles: per output bin k, exp(sign*i*2*pi*k/N) comes from libm
// cos/sin; the per-term twiddle exp(sign*i*2*pi*k*n/N) is the running
// product of that step (complex multiply in double), whose rounding drift
// grows like n * 2^-52: far below float32 resolution for any N a kernel can
// hold. No scratch memory and no table, so any N works.
#include <math.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/signal.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

static const double kTwoPi = 6.283185307179586476925286766559;

static LLVMValueRef dconst(mlcc_emit_ctx_t* ctx, double v) {
  return LLVMConstReal(ctx->t_f64, v);
}
// i64 -> double.
static LLVMValueRef itod(mlcc_emit_ctx_t* ctx, LLVMValueRef i) {
  return LLVMBuildSIToFP(ctx->b, i, ctx->t_f64, "");
}
static LLVMValueRef load_f64_var(mlcc_emit_ctx_t* ctx, LLVMValueRef var) {
  return LLVMBuildLoad2(ctx->b, ctx->t_f64, var, "");
}
// Element |idx| of |value| (any dtype) as double.
static LLVMValueRef load_f64(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value, LLVMValueRef idx) {
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, value, idx), value->dtype, MLCC_DTYPE_F64);
}
// Stores double |v| to element |idx| of output 0, rounded to its dtype.
static mlcc_status_t store_f64(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node, LLVMValueRef idx,
                              LLVMValueRef v) {
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  return mlcc_emit_store_output(ctx, node, 0, idx,
                                mlcc_emit_convert(ctx, v, MLCC_DTYPE_F64, y->dtype));
}

static mlcc_status_t check_types(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    const mlcc_value_t* v = node->inputs[i];
    if (v != NULL && mlcc_emit_type(ctx, v->dtype) == NULL) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s (opset %d) does not support dtype %s",
                              mlcc_op_name(node->op), node->opset, mlcc_dtype_name(v->dtype));
    }
  }
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (y == NULL || mlcc_emit_type(ctx, y->dtype) == NULL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s (opset %d) does not support output "
                            "dtype %s", mlcc_op_name(node->op), node->opset,
                            y ? mlcc_dtype_name(y->dtype) : "(none)");
  }
  return mlcc_ok_status();
}

// INTERNAL unless output 0 has |want|'s shape (inference and emission agree).
static mlcc_status_t check_output(const mlcc_node_t* node, const mlcc_shape_t* want) {
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (y == NULL || !mlcc_shape_equal(&y->shape, want)) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s output shape disagrees with its inputs",
                            mlcc_op_name(node->op));
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// DFT, STFT
//===----------------------------------------------------------------------===//

// Emits the transforms of |p| reading |x| (and window |w| when p->windowed).
static mlcc_status_t emit_transform(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                    const mlcc_dft_plan_t* p, const mlcc_value_t* x,
                                    const mlcc_value_t* w) {
  int64_t n_out = p->n_o1 * p->n_o2 * p->n_bins * p->n_inner;
  if (n_out == 0) return mlcc_ok_status();
  double sign = p->inverse ? 1.0 : -1.0;
  double scale = p->inverse ? 1.0 / (double)p->n_fft : 1.0;
  LLVMValueRef zero = dconst(ctx, 0.0);
  LLVMValueRef acc_re = mlcc_emit_var(ctx, ctx->t_f64, zero);
  LLVMValueRef acc_im = mlcc_emit_var(ctx, ctx->t_f64, zero);
  LLVMValueRef tw_re = mlcc_emit_var(ctx, ctx->t_f64, zero);
  LLVMValueRef tw_im = mlcc_emit_var(ctx, ctx->t_f64, zero);
  mlcc_status_t st = mlcc_ok_status();

  mlcc_loop_t l1 = mlcc_emit_for(ctx, 0, p->n_o1, "o1");
  mlcc_loop_t l2 = mlcc_emit_for(ctx, 0, p->n_o2, "o2");
  LLVMValueRef x_o = iadd(ctx, imulc(ctx, l1.iv, p->x_s1), imulc(ctx, l2.iv, p->x_s2));
  LLVMValueRef y_o = imad(ctx, l1.iv, p->n_o2, l2.iv);
  mlcc_loop_t lk = mlcc_emit_for(ctx, 0, p->n_bins, "k");
  // Twiddle step for bin k: exp(sign * i * 2*pi*k/N).
  LLVMValueRef theta = fp_mul(ctx, itod(ctx, lk.iv), dconst(ctx, kTwoPi / (double)p->n_fft));
  LLVMValueRef step_re = mlcc_emit_libm(ctx, "cos", theta);
  LLVMValueRef step_im = fp_mul(ctx, mlcc_emit_libm(ctx, "sin", theta), dconst(ctx, sign));
  LLVMValueRef y_k = imad(ctx, y_o, p->n_bins, lk.iv);
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, p->n_inner, "in");
  LLVMValueRef x_i = iadd(ctx, x_o, imulc(ctx, li.iv, p->x_sin));
  LLVMBuildStore(ctx->b, zero, acc_re);
  LLVMBuildStore(ctx->b, zero, acc_im);
  LLVMBuildStore(ctx->b, dconst(ctx, 1.0), tw_re);
  LLVMBuildStore(ctx->b, zero, tw_im);
  mlcc_loop_t ln = mlcc_emit_for(ctx, 0, p->n_terms, "n");
  {
    LLVMValueRef e = imulc(ctx, iadd(ctx, x_i, imulc(ctx, ln.iv, p->x_sn)), p->in_complex);
    LLVMValueRef xr = load_f64(ctx, x, e);
    LLVMValueRef xi = p->in_complex == 2 ? load_f64(ctx, x, iaddc(ctx, e, 1)) : NULL;
    if (p->windowed) {
      LLVMValueRef wn = load_f64(ctx, w, ln.iv);
      xr = fp_mul(ctx, xr, wn);
      if (xi != NULL) xi = fp_mul(ctx, xi, wn);
    }
    LLVMValueRef wr = load_f64_var(ctx, tw_re), wi = load_f64_var(ctx, tw_im);
    // acc += x * tw (complex).
    LLVMValueRef re = mlcc_emit_fmuladd(ctx, xr, wr, load_f64_var(ctx, acc_re));
    LLVMValueRef im = mlcc_emit_fmuladd(ctx, xr, wi, load_f64_var(ctx, acc_im));
    if (xi != NULL) {
      re = fp_sub(ctx, re, fp_mul(ctx, xi, wi));
      im = mlcc_emit_fmuladd(ctx, xi, wr, im);
    }
    LLVMBuildStore(ctx->b, re, acc_re);
    LLVMBuildStore(ctx->b, im, acc_im);
    // tw *= step (complex).
    LLVMValueRef nr = fp_sub(ctx, fp_mul(ctx, wr, step_re), fp_mul(ctx, wi, step_im));
    LLVMValueRef ni = fp_add(ctx, fp_mul(ctx, wr, step_im), fp_mul(ctx, wi, step_re));
    LLVMBuildStore(ctx->b, nr, tw_re);
    LLVMBuildStore(ctx->b, ni, tw_im);
  }
  mlcc_emit_loop_end(ctx, &ln);
  LLVMValueRef re = load_f64_var(ctx, acc_re), im = load_f64_var(ctx, acc_im);
  if (p->inverse) {
    re = fp_mul(ctx, re, dconst(ctx, scale));
    im = fp_mul(ctx, im, dconst(ctx, scale));
  }
  LLVMValueRef yi = imulc(ctx, imad(ctx, y_k, p->n_inner, li.iv), 2);
  st = store_f64(ctx, node, yi, re);
  if (mlcc_status_is_ok(st)) st = store_f64(ctx, node, iaddc(ctx, yi, 1), im);
  mlcc_emit_loop_end(ctx, &li);
  mlcc_emit_loop_end(ctx, &lk);
  mlcc_emit_loop_end(ctx, &l2);
  mlcc_emit_loop_end(ctx, &l1);
  return st;
}

static mlcc_status_t emit_dft(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(check_types(ctx, node));
  mlcc_dft_plan_t p;
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_dft_resolve(node, &p, &y));
  MLCC_RETURN_IF_ERROR(check_output(node, &y));
  return emit_transform(ctx, node, &p, mlcc_node_input(node, 0), NULL);
}

static mlcc_status_t emit_stft(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(check_types(ctx, node));
  mlcc_dft_plan_t p;
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_stft_resolve(node, &p, &y));
  MLCC_RETURN_IF_ERROR(check_output(node, &y));
  return emit_transform(ctx, node, &p, mlcc_node_input(node, 0),
                        p.windowed ? mlcc_node_input(node, 2) : NULL);
}

//===----------------------------------------------------------------------===//
// Windows
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_window(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(check_types(ctx, node));
  mlcc_window_params_t p;
  MLCC_RETURN_IF_ERROR(mlcc_window_resolve(node, &p));
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = 1;
  y.dims[0] = p.size;
  MLCC_RETURN_IF_ERROR(check_output(node, &y));
  if (p.size == 0) return mlcc_ok_status();
  int64_t n = p.periodic ? p.size : p.size - 1;
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, p.size, "w");
  LLVMValueRef v;
  if (n == 0) {
    // Symmetric window of length 1: the formula divides by N = size - 1 = 0,
    // so cos(0 * 2*pi/0) is NaN (the ONNX reference, its function body and
    // onnxruntime all give NaN). NaN has no integer value: integer outputs
    // get 0 rather than a poison conversion.
    v = dconst(ctx, mlcc_dtype_is_float(mlcc_node_output(node, 0)->dtype) ? (double)NAN : 0.0);
  } else {
    LLVMValueRef t = fp_mul(ctx, itod(ctx, l.iv), dconst(ctx, kTwoPi / (double)n));
    v = fp_sub(ctx, dconst(ctx, p.a0), fp_mul(ctx, dconst(ctx, p.a1), mlcc_emit_libm(ctx, "cos", t)));
    if (p.a2 != 0.0) {
      LLVMValueRef c2 = mlcc_emit_libm(ctx, "cos", fp_mul(ctx, t, dconst(ctx, 2.0)));
      v = mlcc_emit_fmuladd(ctx, dconst(ctx, p.a2), c2, v);
    }
  }
  mlcc_status_t st = store_f64(ctx, node, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

//===----------------------------------------------------------------------===//
// MelWeightMatrix
//===----------------------------------------------------------------------===//

// hz -> mel: 2595 * log10(1 + hz/700) (the formula of the ONNX spec).
static LLVMValueRef hz_to_mel(mlcc_emit_ctx_t* ctx, LLVMValueRef hz) {
  LLVMValueRef r = fp_add(ctx, dconst(ctx, 1.0), fp_div(ctx, hz, dconst(ctx, 700.0)));
  return fp_mul(ctx, dconst(ctx, 2595.0), mlcc_emit_libm(ctx, "log10", r));
}

// Spectrogram row of band edge |idx| (i64): floor((dft_length + 1) *
// hz(mel_lo + idx*mel_step) / sample_rate), clamped to +-2^62 so a zero or
// absurd sample rate cannot make the i64 conversion poison.
static LLVMValueRef mel_edge(mlcc_emit_ctx_t* ctx, LLVMValueRef idx, LLVMValueRef mel_lo,
                             LLVMValueRef mel_step, LLVMValueRef sr, int64_t dft_length) {
  LLVMValueRef mel = mlcc_emit_fmuladd(ctx, itod(ctx, idx), mel_step, mel_lo);
  LLVMValueRef p10 = mlcc_emit_libm2(ctx, "pow", dconst(ctx, 10.0),
                                     fp_div(ctx, mel, dconst(ctx, 2595.0)));
  LLVMValueRef hz = fp_mul(ctx, dconst(ctx, 700.0), fp_sub(ctx, p10, dconst(ctx, 1.0)));
  LLVMValueRef b = fp_div(ctx, fp_mul(ctx, dconst(ctx, (double)(dft_length + 1)), hz), sr);
  b = mlcc_emit_intrinsic(ctx, "llvm.floor", &b, 1);
  b = mlcc_emit_max(ctx, MLCC_DTYPE_F64, b, dconst(ctx, -4611686018427387904.0));
  b = mlcc_emit_min(ctx, MLCC_DTYPE_F64, b, dconst(ctx, 4611686018427387904.0));
  return LLVMBuildFPToSI(ctx->b, b, ctx->t_i64, "");
}

// Band i spans rows l = edge(i), c = edge(i+1), h = edge(i+2): rising
// (j-l)/(c-l) on [l, c] (just row c = 1 when l == c), then falling
// (h-j)/(h-c) on [c, h) when h > c, which overrides the rising value. This
// is the ONNX reference construction (including its mel step of
// (mel_hi - mel_lo) / (num_mel_bins + 2)); rows outside the matrix are
// simply not produced.
static mlcc_status_t emit_mel_weight_matrix(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(check_types(ctx, node));
  mlcc_mel_params_t p;
  MLCC_RETURN_IF_ERROR(mlcc_mel_resolve(node, &p));
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = 2;
  y.dims[0] = p.n_spectrogram_bins;
  y.dims[1] = p.n_mel_bins;
  MLCC_RETURN_IF_ERROR(check_output(node, &y));
  if (p.n_mel_bins == 0) return mlcc_ok_status();
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef i0 = c64(ctx, 0);
  LLVMValueRef sr = load_f64(ctx, mlcc_node_input(node, 2), i0);
  LLVMValueRef mel_lo = hz_to_mel(ctx, load_f64(ctx, mlcc_node_input(node, 3), i0));
  LLVMValueRef mel_hi = hz_to_mel(ctx, load_f64(ctx, mlcc_node_input(node, 4), i0));
  LLVMValueRef mel_step =
      fp_div(ctx, fp_sub(ctx, mel_hi, mel_lo), dconst(ctx, (double)(p.n_mel_bins + 2)));
  mlcc_status_t st = mlcc_ok_status();
  mlcc_loop_t li = mlcc_emit_for(ctx, 0, p.n_mel_bins, "band");
  LLVMValueRef l = mel_edge(ctx, li.iv, mel_lo, mel_step, sr, p.dft_length);
  LLVMValueRef c = mel_edge(ctx, iaddc(ctx, li.iv, 1), mel_lo, mel_step, sr, p.dft_length);
  LLVMValueRef h = mel_edge(ctx, iaddc(ctx, li.iv, 2), mel_lo, mel_step, sr, p.dft_length);
  LLVMValueRef lf = itod(ctx, l), cf = itod(ctx, c), hf = itod(ctx, h);
  mlcc_loop_t lj = mlcc_emit_for(ctx, 0, p.n_spectrogram_bins, "row");
  {
    LLVMValueRef j = lj.iv, jf = itod(ctx, j);
    LLVMValueRef zero = dconst(ctx, 0.0), one = dconst(ctx, 1.0);
    LLVMValueRef is_c = LLVMBuildICmp(b, LLVMIntEQ, j, c, "");
    LLVMValueRef flat_lc = LLVMBuildICmp(b, LLVMIntEQ, l, c, "");
    LLVMValueRef in_rise = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLE, l, j, ""),
                                        LLVMBuildICmp(b, LLVMIntSLE, j, c, ""), "");
    LLVMValueRef rise = LLVMBuildSelect(
        b, in_rise, fp_div(ctx, fp_sub(ctx, jf, lf), fp_sub(ctx, cf, lf)), zero, "");
    LLVMValueRef v = LLVMBuildSelect(b, flat_lc, LLVMBuildSelect(b, is_c, one, zero, ""),
                                     rise, "");
    LLVMValueRef in_fall = LLVMBuildAnd(
        b, LLVMBuildICmp(b, LLVMIntSGT, h, c, ""),
        LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLE, c, j, ""),
                     LLVMBuildICmp(b, LLVMIntSLT, j, h, ""), ""), "");
    LLVMValueRef fall = fp_div(ctx, fp_sub(ctx, hf, jf), fp_sub(ctx, hf, cf));
    v = LLVMBuildSelect(b, in_fall, fall, v, "");
    st = store_f64(ctx, node, imad(ctx, j, p.n_mel_bins, li.iv), v);
  }
  mlcc_emit_loop_end(ctx, &lj);
  mlcc_emit_loop_end(ctx, &li);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_dft = {.emit = emit_dft};
const mlcc_emitter_t mlcc_emit_stft = {.emit = emit_stft};
const mlcc_emitter_t mlcc_emit_window = {.emit = emit_window};
const mlcc_emitter_t mlcc_emit_mel_weight_matrix = {.emit = emit_mel_weight_matrix};

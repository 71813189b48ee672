// SPDX-License-Identifier: Apache-2.0
// Shape/type inference for the signal-processing ops (ops.def "Signal
// processing"): DFT, STFT, HannWindow, HammingWindow, BlackmanWindow and
// MelWeightMatrix, all ONNX opset 17. The resolvers in signal.h are shared
// with targets/kernels/signal.c.
#include "ir/ops/signal.h"

#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"

static mlcc_status_t bad(const mlcc_node_t* node, const char* what) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s (opset %d) %s",
                          mlcc_infer_op(node), node->opset, what);
}

// A 0/1 attribute (|def| when absent).
static mlcc_status_t attr_bool(const mlcc_node_t* node, const char* name, int64_t def,
                               bool* out) {
  *out = false;
  int64_t v = def;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, name, def, &v));
  if (v != 0 && v != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute '%s' must be 0 or 1; got %lld", mlcc_infer_op(node),
                            name, (long long)v);
  }
  *out = v == 1;
  return mlcc_ok_status();
}

// Reads constant integer scalar input |i| (|name|, |role|): int32/int64,
// rank 0 or [1]. |*out_present| false for an absent optional input.
static mlcc_status_t const_scalar(const mlcc_node_t* node, uint32_t i, const char* name,
                                  const char* role, bool required, int64_t* out,
                                  bool* out_present) {
  *out = 0;
  *out_present = false;
  mlcc_value_t* v = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, required, &v));
  if (v == NULL) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, v, name, MLCC_INFER_DT_INT32_64));
  if (v->shape.rank > 1 || mlcc_infer_numel(&v->shape) != 1) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' must be a scalar; got shape %s",
                            mlcc_infer_op(node), name, mlcc_infer_fmt_shape(&v->shape, sb));
  }
  int64_t buf[1] = {0};
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(
      mlcc_infer_const_ints(node, i, name, role, required, true, buf, 1, &n, out_present));
  *out = buf[0];
  return mlcc_ok_status();
}

// Checks a signal input: float dtype, rank >= |min_rank| (exactly when
// |exact|), last dim 1 (real) or 2 (complex).
static mlcc_status_t check_signal(const mlcc_node_t* node, const mlcc_value_t* x,
                                  const char* name, int32_t min_rank, bool exact) {
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, name, MLCC_INFER_DT_FLOAT));
  int32_t r = x->shape.rank;
  char sb[MLCC_INFER_SHAPE_BUF];
  if (r < min_rank || (exact && r != min_rank)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' must have rank %s%d ([batch, signal..., 1|2]); "
                            "got shape %s",
                            mlcc_infer_op(node), name, exact ? "" : ">= ", (int)min_rank,
                            mlcc_infer_fmt_shape(&x->shape, sb));
  }
  int64_t c = x->shape.dims[r - 1];
  if (c != 1 && c != 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' must end in a dim of 1 (real) or 2 (complex); "
                            "got shape %s",
                            mlcc_infer_op(node), name, mlcc_infer_fmt_shape(&x->shape, sb));
  }
  return mlcc_ok_status();
}

// Output dtype attribute 'output_datatype' (ONNX TensorProto enum; numeric).
static mlcc_status_t out_dtype_attr(const mlcc_node_t* node, mlcc_dtype_t* out) {
  *out = MLCC_DTYPE_F32;
  int64_t dt = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "output_datatype", 1, &dt));
  if (dt == 16) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s output_datatype bfloat16 is not supported", mlcc_infer_op(node));
  }
  if (dt <= 0 || dt > 64 || !mlcc_dtype_is_valid((mlcc_dtype_t)dt) ||
      mlcc_dtype_is_bool((mlcc_dtype_t)dt)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'output_datatype' must be a numeric ONNX data type; "
                            "got %lld",
                            mlcc_infer_op(node), (long long)dt);
  }
  *out = (mlcc_dtype_t)dt;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// DFT, STFT
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_dft_resolve(const mlcc_node_t* node, mlcc_dft_plan_t* out_plan,
                               mlcc_shape_t* out_shape) {
  memset(out_plan, 0, sizeof(*out_plan));
  memset(out_shape, 0, sizeof(*out_shape));
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  // DFT-17: attribute 'axis' (default 1) in [1, r-2] after a batch dim.
  // DFT-20: optional constant input 2 'axis' (default -2, the last signal
  // dim) in [0, r-2]: there is no batch dim, so rank 2 is enough.
  const bool v20 = node->opset >= 20;
  MLCC_RETURN_IF_ERROR(check_signal(node, x, "input", v20 ? 2 : 3, false));
  int32_t r = x->shape.rank;
  int64_t axis = 1;
  if (v20) {
    if (mlcc_node_attr(node, "axis") != NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "DFT at opset %d takes 'axis' as input 2, not as an attribute",
                              node->opset);
    }
    bool has_axis = false;
    MLCC_RETURN_IF_ERROR(const_scalar(node, 2, "axis", "transform axis", false, &axis,
                                      &has_axis));
    if (!has_axis) axis = -2;
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 1, &axis));
  }
  int64_t a = axis < 0 ? axis + r : axis;
  const int64_t lo = v20 ? 0 : 1;
  if (a < lo || a > r - 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "DFT (opset %d) %s 'axis' must name a signal dim, in [%d, %d] "
                            "(or [%d, -2]) for input rank %d; got %lld",
                            node->opset, v20 ? "input" : "attribute", (int)lo, (int)(r - 2),
                            (int)(lo - r), (int)r, (long long)axis);
  }
  bool inverse = false, onesided = false;
  MLCC_RETURN_IF_ERROR(attr_bool(node, "inverse", 0, &inverse));
  MLCC_RETURN_IF_ERROR(attr_bool(node, "onesided", 0, &onesided));
  int64_t len = 0;
  bool has_len = false;
  MLCC_RETURN_IF_ERROR(
      const_scalar(node, 1, "dft_length", "transform length", false, &len, &has_len));
  int64_t avail = x->shape.dims[a];
  int64_t n = has_len ? len : avail;
  if (n < 1 || n > ((int64_t)1 << 40)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "DFT (opset %d) transform length must be positive; got %lld%s",
                            node->opset, (long long)n, has_len ? " (dft_length)" : "");
  }
  int64_t c = x->shape.dims[r - 1];
  if (onesided && c == 2) return bad(node, "cannot be onesided for complex input");
  mlcc_dft_plan_t p;
  memset(&p, 0, sizeof(p));
  p.n_o1 = 1;
  for (int32_t d = 0; d < a; ++d) p.n_o1 *= x->shape.dims[d];  // <= numel, inferred
  p.n_o2 = 1;
  p.n_inner = 1;
  for (int32_t d = (int32_t)a + 1; d < r - 1; ++d) p.n_inner *= x->shape.dims[d];
  p.x_sn = p.n_inner;
  p.x_s1 = avail * p.n_inner;
  p.x_s2 = 0;
  p.x_sin = 1;
  p.in_complex = c;
  p.n_fft = n;
  p.n_terms = n < avail ? n : avail;
  p.n_bins = onesided ? n / 2 + 1 : n;
  p.inverse = inverse;
  p.windowed = false;
  mlcc_shape_t y = x->shape;
  y.dims[a] = p.n_bins;
  y.dims[r - 1] = 2;
  *out_plan = p;
  *out_shape = y;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_stft_resolve(const mlcc_node_t* node, mlcc_dft_plan_t* out_plan,
                                mlcc_shape_t* out_shape) {
  memset(out_plan, 0, sizeof(*out_plan));
  memset(out_shape, 0, sizeof(*out_shape));
  mlcc_value_t *x = NULL, *w = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "signal", true, &x));
  MLCC_RETURN_IF_ERROR(check_signal(node, x, "signal", 3, true));
  int64_t step = 0, flen = 0;
  bool has_step = false, has_flen = false;
  MLCC_RETURN_IF_ERROR(
      const_scalar(node, 1, "frame_step", "frame hop", true, &step, &has_step));
  if (step < 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "STFT (opset %d) input 'frame_step' must be positive; got %lld",
                            node->opset, (long long)step);
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "window", false, &w));
  MLCC_RETURN_IF_ERROR(
      const_scalar(node, 3, "frame_length", "frame size", false, &flen, &has_flen));
  if (w != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "signal", w, "window"));
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, w, "window", 1));
    if (has_flen && flen != w->shape.dims[0]) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "STFT (opset %d) needs frame_length equal to the window length; "
                              "got frame_length %lld and window [%lld]",
                              node->opset, (long long)flen, (long long)w->shape.dims[0]);
    }
    flen = w->shape.dims[0];
  } else if (!has_flen) {
    return bad(node, "needs a window or a frame_length input to know the frame size");
  }
  int64_t len = x->shape.dims[1];
  if (flen < 1 || flen > len) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "STFT (opset %d) frame length must be in [1, signal length %lld]; "
                            "got %lld",
                            node->opset, (long long)len, (long long)flen);
  }
  bool onesided = true;
  MLCC_RETURN_IF_ERROR(attr_bool(node, "onesided", 1, &onesided));
  int64_t c = x->shape.dims[2];
  if (onesided && c == 2) return bad(node, "cannot be onesided for a complex signal");
  mlcc_dft_plan_t p;
  memset(&p, 0, sizeof(p));
  p.n_o1 = x->shape.dims[0];
  p.n_o2 = (len - flen) / step + 1;
  p.n_inner = 1;
  p.x_s1 = len;
  p.x_s2 = step;
  p.x_sin = 0;
  p.x_sn = 1;
  p.in_complex = c;
  p.n_fft = flen;
  p.n_terms = flen;
  p.n_bins = onesided ? flen / 2 + 1 : flen;
  p.inverse = false;
  p.windowed = w != NULL;
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = 4;
  y.dims[0] = p.n_o1;
  y.dims[1] = p.n_o2;
  y.dims[2] = p.n_bins;
  y.dims[3] = 2;
  *out_plan = p;
  *out_shape = y;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_dft(mlcc_node_t* node) {
  mlcc_dft_plan_t p;
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_dft_resolve(node, &p, &y));
  return mlcc_infer_set_output(node, 0, node->inputs[0]->dtype, &y);
}

mlcc_status_t mlcc_infer_stft(mlcc_node_t* node) {
  mlcc_dft_plan_t p;
  mlcc_shape_t y;
  MLCC_RETURN_IF_ERROR(mlcc_stft_resolve(node, &p, &y));
  return mlcc_infer_set_output(node, 0, node->inputs[0]->dtype, &y);
}

//===----------------------------------------------------------------------===//
// Windows, MelWeightMatrix
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_window_resolve(const mlcc_node_t* node, mlcc_window_params_t* out) {
  memset(out, 0, sizeof(*out));
  int64_t size = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(const_scalar(node, 0, "size", "window length", true, &size, &present));
  if (size < 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s (opset %d) input 'size' must be >= 0; got %lld",
                            mlcc_infer_op(node), node->opset, (long long)size);
  }
  bool periodic = true;
  MLCC_RETURN_IF_ERROR(attr_bool(node, "periodic", 1, &periodic));
  mlcc_window_params_t p;
  memset(&p, 0, sizeof(p));
  MLCC_RETURN_IF_ERROR(out_dtype_attr(node, &p.out_dtype));
  p.size = size;
  p.periodic = periodic;
  // Generalized cosine coefficients (Harris 1978, the paper the ONNX spec
  // cites); Hamming uses the exact a0 = 25/46, as the ONNX test data does.
  switch (node->op) {
    case MLCC_OP_HANN_WINDOW: p.a0 = 0.5; p.a1 = 0.5; p.a2 = 0.0; break;
    case MLCC_OP_HAMMING_WINDOW: p.a0 = 25.0 / 46.0; p.a1 = 21.0 / 46.0; p.a2 = 0.0; break;
    case MLCC_OP_BLACKMAN_WINDOW: p.a0 = 0.42; p.a1 = 0.5; p.a2 = 0.08; break;
    default:
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s is not a window op",
                              mlcc_infer_op(node));
  }
  *out = p;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_window(mlcc_node_t* node) {
  mlcc_window_params_t p;
  MLCC_RETURN_IF_ERROR(mlcc_window_resolve(node, &p));
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = 1;
  y.dims[0] = p.size;
  return mlcc_infer_set_output(node, 0, p.out_dtype, &y);
}

// A scalar input that may be fed at run time: |allowed| dtypes, one element.
static mlcc_status_t runtime_scalar(const mlcc_node_t* node, uint32_t i, const char* name,
                                    uint32_t allowed, mlcc_value_t** out) {
  *out = NULL;
  mlcc_value_t* v = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, true, &v));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, v, name, allowed));
  if (v->shape.rank > 1 || mlcc_infer_numel(&v->shape) != 1) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s input '%s' must be a scalar; got shape %s",
                            mlcc_infer_op(node), name, mlcc_infer_fmt_shape(&v->shape, sb));
  }
  *out = v;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_mel_resolve(const mlcc_node_t* node, mlcc_mel_params_t* out) {
  memset(out, 0, sizeof(*out));
  int64_t bins = 0, dft = 0;
  bool present = false;
  MLCC_RETURN_IF_ERROR(
      const_scalar(node, 0, "num_mel_bins", "mel band count", true, &bins, &present));
  MLCC_RETURN_IF_ERROR(
      const_scalar(node, 1, "dft_length", "DFT size", true, &dft, &present));
  if (bins < 0 || dft < 1 || dft > ((int64_t)1 << 40)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MelWeightMatrix (opset %d) needs num_mel_bins >= 0 and "
                            "dft_length >= 1; got %lld and %lld",
                            node->opset, (long long)bins, (long long)dft);
  }
  mlcc_value_t *sr = NULL, *lo = NULL, *hi = NULL;
  MLCC_RETURN_IF_ERROR(runtime_scalar(node, 2, "sample_rate", MLCC_INFER_DT_INT32_64, &sr));
  MLCC_RETURN_IF_ERROR(runtime_scalar(node, 3, "lower_edge_hertz", MLCC_INFER_DT_FLOAT, &lo));
  MLCC_RETURN_IF_ERROR(runtime_scalar(node, 4, "upper_edge_hertz", MLCC_INFER_DT_FLOAT, &hi));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, lo, "lower_edge_hertz", hi,
                                             "upper_edge_hertz"));
  if (sr->kind == MLCC_VALUE_CONSTANT && sr->data != NULL &&
      mlcc_value_const_i64(sr, 0) <= 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MelWeightMatrix (opset %d) input 'sample_rate' must be positive; "
                            "got %lld",
                            node->opset, (long long)mlcc_value_const_i64(sr, 0));
  }
  mlcc_mel_params_t p;
  memset(&p, 0, sizeof(p));
  MLCC_RETURN_IF_ERROR(out_dtype_attr(node, &p.out_dtype));
  p.n_mel_bins = bins;
  p.dft_length = dft;
  p.n_spectrogram_bins = dft / 2 + 1;
  *out = p;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_infer_mel_weight_matrix(mlcc_node_t* node) {
  mlcc_mel_params_t p;
  MLCC_RETURN_IF_ERROR(mlcc_mel_resolve(node, &p));
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = 2;
  y.dims[0] = p.n_spectrogram_bins;
  y.dims[1] = p.n_mel_bins;
  return mlcc_infer_set_output(node, 0, p.out_dtype, &y);
}

// SPDX-License-Identifier: Apache-2.0
// Shared between the signal-processing ops' shape inference (ir/ops/signal.c)
// and their emitters (targets/kernels/signal.c): the resolved geometry
// of a DFT / STFT node and the parameters of the window and mel ops, so both
// sides read attributes and constant inputs the same way. Thread-compatible
// (plain data; the resolvers only read the node).
#ifndef MLCC_IR_OPS_SIGNAL_H_
#define MLCC_IR_OPS_SIGNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/dtype.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// One batch of 1-D transforms y[k] = scale * sum_n x[n] * win[n] *
// exp(sign * 2*pi*i * k*n / n_fft), k in [0, n_bins), n in [0, n_terms)
// (terms past the input are zero padding), sign -1 forward / +1 inverse,
// scale 1 forward / 1/n_fft inverse. The transforms are indexed by
// (o1, o2, in) in [0,n_o1) x [0,n_o2) x [0,n_inner); element n of transform
// (o1, o2, in) is complex element (o1*x_s1 + o2*x_s2 + in*x_sin + n*x_sn) of
// the input (each complex element is |in_complex| scalars: 1 real, 2 re/im);
// output bin k is complex element ((o1*n_o2 + o2)*n_bins + k)*n_inner + in
// (always 2 scalars, re/im).
typedef struct mlcc_dft_plan_t {
  int64_t n_o1, n_o2, n_inner;
  int64_t x_s1, x_s2, x_sin, x_sn;
  int64_t in_complex;  // 1 (real input) or 2 (complex)
  int64_t n_fft;       // transform length N (>= 1)
  int64_t n_terms;     // min(N, available input samples)
  int64_t n_bins;      // N, or N/2+1 when onesided
  bool inverse;
  bool windowed;       // STFT with a window input (input 2)
} mlcc_dft_plan_t;

// Resolves a DFT node (ONNX DFT, opset 17): input [batch, signal dims...,
// 1|2], attributes axis (default 1; negative counts from the back; must
// name a signal dim), inverse, onesided; optional constant dft_length
// (input 1). Sets |*out_shape| to the output shape [.., n_bins at axis, ..,
// 2]. Errors: INVALID_MODEL for shapes/attributes that break the spec
// (including onesided with complex input), UNIMPLEMENTED when dft_length is
// not a compile-time constant.
mlcc_status_t mlcc_dft_resolve(const mlcc_node_t* node, mlcc_dft_plan_t* out_plan,
                               mlcc_shape_t* out_shape);

// Resolves an STFT node (ONNX STFT, opset 17): signal [batch, length, 1|2],
// constant frame_step (input 1), optional window [frame_length] (input 2,
// may be fed at run time), optional constant frame_length (input 3); at
// least one of window and frame_length; attribute onesided (default 1).
// Output [batch, frames, n_bins, 2] with frames = (length - N) / step + 1.
// Errors as mlcc_dft_resolve; INVALID_MODEL when the signal is shorter than
// one frame.
mlcc_status_t mlcc_stft_resolve(const mlcc_node_t* node, mlcc_dft_plan_t* out_plan,
                                mlcc_shape_t* out_shape);

// HannWindow / HammingWindow / BlackmanWindow (opset 17): generalized cosine
// window w[k] = a0 - a1*cos(2*pi*k/N) + a2*cos(4*pi*k/N), k in [0, size),
// N = size (periodic) or size - 1 (symmetric; size 1 divides by 0 and gives
// [NaN] as in the ONNX reference and onnxruntime, [0] for integer outputs).
typedef struct mlcc_window_params_t {
  int64_t size;
  bool periodic;
  double a0, a1, a2;
  mlcc_dtype_t out_dtype;  // attribute output_datatype (default FLOAT)
} mlcc_window_params_t;

// Reads |node|'s constant size (input 0, int32/int64 scalar, >= 0) and
// attributes. Errors: UNIMPLEMENTED for a run-time size or an output dtype
// mlcc lacks (bfloat16), INVALID_MODEL otherwise.
mlcc_status_t mlcc_window_resolve(const mlcc_node_t* node, mlcc_window_params_t* out);

// MelWeightMatrix (opset 17): constant num_mel_bins and dft_length (inputs
// 0, 1); sample_rate, lower_edge_hertz, upper_edge_hertz (inputs 2-4) may be
// fed at run time. Output [dft_length/2 + 1, num_mel_bins].
typedef struct mlcc_mel_params_t {
  int64_t n_mel_bins;
  int64_t dft_length;
  int64_t n_spectrogram_bins;  // dft_length / 2 + 1
  mlcc_dtype_t out_dtype;
} mlcc_mel_params_t;

// Reads and validates |node|'s inputs and attributes (errors as
// mlcc_window_resolve).
mlcc_status_t mlcc_mel_resolve(const mlcc_node_t* node, mlcc_mel_params_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_SIGNAL_H_

// SPDX-License-Identifier: Apache-2.0
// Tests of the signal-processing emitters (targets/kernels/signal.c) and their shape
// inference (ir/ops/signal.c): one-node graphs with constant inputs,
// evaluated through the host JIT (mlcc_codegen_eval_node). DFT/STFT results
// are checked against a naive double-precision DFT written here (exact
// twiddles from (k*n mod N)); windows against the textbook formulas; the
// mel matrix against the ONNX backend test's expected output.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "test.h"

#include "targets/emit/emit_test_util.h"

static const double kPi = 3.14159265358979323846;

// Reference transform of |n_terms| complex samples x (re/im interleaved,
// stride |xs| complex elements) into |n_bins| bins of an N-point DFT.
static void ref_dft(const double* x, int64_t xs, int64_t n_terms, int64_t n, int64_t n_bins,
                    bool inverse, double* out /* n_bins*2, stride 1 */) {
  for (int64_t k = 0; k < n_bins; ++k) {
    double re = 0, im = 0;
    for (int64_t t = 0; t < n_terms; ++t) {
      double a = 2 * kPi * (double)((k * t) % n) / (double)n * (inverse ? 1 : -1);
      double xr = x[2 * t * xs], xi = x[2 * t * xs + 1];
      re += xr * cos(a) - xi * sin(a);
      im += xr * sin(a) + xi * cos(a);
    }
    out[2 * k] = inverse ? re / (double)n : re;
    out[2 * k + 1] = inverse ? im / (double)n : im;
  }
}

static void expect_near(const mlcc_value_t* v, const double* want, int64_t n, double tol,
                        int line) {
  if (!is_const(v)) {
    CHECK(false);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    double y = v->dtype == MLCC_DTYPE_F64 ? ((const double*)v->data)[i]
                                          : (double)((const float*)v->data)[i];
    if (!(fabs(y - want[i]) <= tol * (1 + fabs(want[i])))) {
      fprintf(stderr, "line %d: element %lld = %.9g, want %.9g\n", line, (long long)i, y,
              want[i]);
      CHECK(false);
      return;
    }
  }
}

// Adds a node and runs only its inference; returns the status.
static mlcc_status_t infer_only(mlcc_op_t op, mlcc_value_t** ins, uint32_t n_in,
                                const mlcc_attr_t* attrs, uint32_t n_attrs) {
  mlcc_value_t* y = O(MLCC_DTYPE_F32, S(1));
  mlcc_node_t* node = NULL;
  MLCC_RETURN_IF_ERROR(
      mlcc_graph_add_node(G, op, 17, "n", ins, n_in, &y, 1, attrs, n_attrs, &node));
  y->shape_known = false;
  return mlcc_op_desc(op)->infer(node);
}

//===----------------------------------------------------------------------===//
// DFT
//===----------------------------------------------------------------------===//

// Real input [2, 7, 1] along axis 1, with dft_length absent / 10 (padding) /
// 4 (truncation), two-sided and onesided.
static void test_dft_real(void) {
  float xf[14];
  double xd[28];
  for (int i = 0; i < 14; ++i) {
    xf[i] = (float)sin(0.7 * i) + 0.25f * (float)i;
    xd[2 * i] = xf[i];
    xd[2 * i + 1] = 0;
  }
  const int64_t lens[3] = {0, 10, 4};
  for (int li = 0; li < 3; ++li) {
    for (int onesided = 0; onesided <= 1; ++onesided) {
      begin();
      int64_t n = lens[li] ? lens[li] : 7;
      int64_t bins = onesided ? n / 2 + 1 : n;
      mlcc_value_t* ins[2] = {C(MLCC_DTYPE_F32, S(2, 7, 1), xf), NULL};
      if (lens[li]) ins[1] = C(MLCC_DTYPE_I64, S0, &lens[li]);
      mlcc_value_t* y = O(MLCC_DTYPE_F32, S(2, bins, 2));
      mlcc_attr_t at[2] = {A_int("axis", 1), A_int("onesided", onesided)};
      CHECK_OK(run(MLCC_OP_DFT, 17, ins, lens[li] ? 2 : 1, &y, 1, at, 2));
      double want[2 * 10 * 2];
      for (int b = 0; b < 2; ++b) {
        ref_dft(xd + b * 14, 1, n < 7 ? n : 7, n, bins, false, want + b * bins * 2);
      }
      expect_near(y, want, 2 * bins * 2, 1e-5, __LINE__);
      end();
    }
  }
}

// Complex [2, 3, 4, 2] inverse along axis 2 (inner stride 1) and forward
// along axis -3 (== 1, inner stride 4), f64.
static void test_dft_complex_axes(void) {
  double x[48];
  for (int i = 0; i < 48; ++i) x[i] = cos(0.3 * i * i) + 0.1 * i;
  for (int which = 0; which < 2; ++which) {
    begin();
    mlcc_value_t* in = C(MLCC_DTYPE_F64, S(2, 3, 4, 2), x);
    mlcc_value_t* y = O(MLCC_DTYPE_F64, S(2, 3, 4, 2));
    mlcc_attr_t at[2] = {A_int("axis", which == 0 ? 2 : -3), A_int("inverse", which == 0)};
    CHECK_OK(run(MLCC_OP_DFT, 17, &in, 1, &y, 1, at, 2));
    double want[48], col[8];
    if (which == 0) {  // transform each row of 4 along axis 2
      for (int r = 0; r < 6; ++r) ref_dft(x + r * 8, 1, 4, 4, 4, true, want + r * 8);
    } else {  // transform along axis 1 (length 3), stride 4 complex elements
      for (int b = 0; b < 2; ++b) {
        for (int j = 0; j < 4; ++j) {
          ref_dft(x + b * 24 + j * 2, 4, 3, 3, 3, false, col);
          for (int k = 0; k < 3; ++k) {
            want[b * 24 + k * 8 + j * 2] = col[2 * k];
            want[b * 24 + k * 8 + j * 2 + 1] = col[2 * k + 1];
          }
        }
      }
    }
    expect_near(y, want, 48, 1e-12, __LINE__);
    end();
  }
}

// A larger transform keeps float32 accuracy (twiddle recurrence drift).
static void test_dft_long(void) {
  enum { N = 1000 };
  static float xf[N];
  static double xd[2 * N], want[2 * N];
  for (int i = 0; i < N; ++i) {
    xf[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    xd[2 * i] = xf[i];
    xd[2 * i + 1] = 0;
  }
  begin();
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(1, N, 1), xf);
  mlcc_value_t* y = O(MLCC_DTYPE_F32, S(1, N, 2));
  CHECK_OK(run(MLCC_OP_DFT, 17, &in, 1, &y, 1, NULL, 0));
  ref_dft(xd, 1, N, N, N, false, want);
  expect_near(y, want, 2 * N, 1e-5, __LINE__);
  end();
}

static void test_dft_errors(void) {
  begin();
  float x[12] = {0};
  mlcc_value_t* real = C(MLCC_DTYPE_F32, S(1, 6, 2), x);
  mlcc_attr_t bad_axis = A_int("axis", 2);
  CHECK_STATUS(infer_only(MLCC_OP_DFT, &real, 1, &bad_axis, 1), MLCC_STATUS_INVALID_MODEL);
  mlcc_attr_t onesided = A_int("onesided", 1);
  CHECK_STATUS(infer_only(MLCC_OP_DFT, &real, 1, &onesided, 1), MLCC_STATUS_INVALID_MODEL);
  int64_t zero = 0;
  mlcc_value_t* ins[2] = {real, C(MLCC_DTYPE_I64, S0, &zero)};
  CHECK_STATUS(infer_only(MLCC_OP_DFT, ins, 2, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  mlcc_value_t* fed = NULL;
  CHECK_OK(mlcc_graph_add_value(G, "len", MLCC_VALUE_INPUT, &fed));
  fed->dtype = MLCC_DTYPE_I64;
  fed->shape = S0;
  fed->shape_known = true;
  ins[1] = fed;
  CHECK_STATUS(infer_only(MLCC_OP_DFT, ins, 2, NULL, 0), MLCC_STATUS_UNIMPLEMENTED);
  float x3[6] = {0};
  mlcc_value_t* bad_last = C(MLCC_DTYPE_F32, S(1, 2, 3), x3);
  CHECK_STATUS(infer_only(MLCC_OP_DFT, &bad_last, 1, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  end();
}

//===----------------------------------------------------------------------===//
// STFT
//===----------------------------------------------------------------------===//

// Real signal [2, 20, 1], step 3, frame 8: with a window (onesided
// default) and with frame_length only (two-sided).
static void test_stft(void) {
  float sig[40], win[8];
  for (int i = 0; i < 40; ++i) sig[i] = (float)cos(0.45 * i) * (1.0f + 0.05f * (float)i);
  for (int i = 0; i < 8; ++i) win[i] = 0.5f - 0.5f * (float)cos(2 * kPi * i / 8);
  const int64_t step = 3, flen = 8, frames = (20 - 8) / 3 + 1;
  for (int windowed = 0; windowed <= 1; ++windowed) {
    begin();
    int64_t bins = windowed ? 5 : 8;
    mlcc_value_t* ins[4] = {C(MLCC_DTYPE_F32, S(2, 20, 1), sig),
                            C(MLCC_DTYPE_I64, S0, &step),
                            windowed ? C(MLCC_DTYPE_F32, S(8), win) : NULL,
                            windowed ? NULL : C(MLCC_DTYPE_I64, S0, &flen)};
    mlcc_value_t* y = O(MLCC_DTYPE_F32, S(2, frames, bins, 2));
    mlcc_attr_t at = A_int("onesided", windowed ? 1 : 0);
    CHECK_OK(run(MLCC_OP_STFT, 17, ins, 4, &y, 1, &at, 1));
    double want[2 * 5 * 8 * 2], frame[16];
    for (int b = 0; b < 2; ++b) {
      for (int f = 0; f < frames; ++f) {
        for (int t = 0; t < 8; ++t) {
          frame[2 * t] = sig[b * 20 + f * step + t] * (windowed ? win[t] : 1.0);
          frame[2 * t + 1] = 0;
        }
        ref_dft(frame, 1, 8, 8, bins, false, want + (b * frames + f) * bins * 2);
      }
    }
    expect_near(y, want, 2 * frames * bins * 2, 1e-5, __LINE__);
    end();
  }
}

static void test_stft_errors(void) {
  begin();
  float sig[10] = {0}, win[4] = {0};
  int64_t step = 2, flen = 5, big = 11;
  mlcc_value_t* ins[4] = {C(MLCC_DTYPE_F32, S(1, 10, 1), sig), C(MLCC_DTYPE_I64, S0, &step),
                          NULL, NULL};
  // Neither window nor frame_length.
  CHECK_STATUS(infer_only(MLCC_OP_STFT, ins, 4, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  // Window length and frame_length disagree.
  ins[2] = C(MLCC_DTYPE_F32, S(4), win);
  ins[3] = C(MLCC_DTYPE_I64, S0, &flen);
  CHECK_STATUS(infer_only(MLCC_OP_STFT, ins, 4, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  // Frame longer than the signal.
  ins[2] = NULL;
  ins[3] = C(MLCC_DTYPE_I64, S0, &big);
  CHECK_STATUS(infer_only(MLCC_OP_STFT, ins, 4, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  end();
}

//===----------------------------------------------------------------------===//
// Windows, MelWeightMatrix
//===----------------------------------------------------------------------===//

static void test_windows(void) {
  const mlcc_op_t ops[3] = {MLCC_OP_HANN_WINDOW, MLCC_OP_HAMMING_WINDOW,
                            MLCC_OP_BLACKMAN_WINDOW};
  const double co[3][3] = {{0.5, 0.5, 0}, {25.0 / 46, 21.0 / 46, 0}, {0.42, 0.5, 0.08}};
  for (int o = 0; o < 3; ++o) {
    for (int periodic = 0; periodic <= 1; ++periodic) {
      begin();
      int32_t size = 7;
      mlcc_value_t* in = C(MLCC_DTYPE_I32, S0, &size);
      mlcc_value_t* y = O(MLCC_DTYPE_F64, S(7));
      mlcc_attr_t at[2] = {A_int("periodic", periodic), A_int("output_datatype", 11)};
      CHECK_OK(run(ops[o], 17, &in, 1, &y, 1, at, 2));
      double want[7], n = periodic ? 7 : 6;
      for (int k = 0; k < 7; ++k) {
        want[k] = co[o][0] - co[o][1] * cos(2 * kPi * k / n) + co[o][2] * cos(4 * kPi * k / n);
      }
      expect_near(y, want, 7, 1e-14, __LINE__);
      end();
    }
  }
  // Symmetric length 1 divides by N - 1 = 0: NaN, as the ONNX reference
  // (np.arange(1) / 0) and onnxruntime (cos(0 * tau/0)) give; 0 for an
  // integer output. Periodic length 1 is a0 - a1 + a2 (cos(0) = 1).
  begin();
  int64_t one = 1, four = 4, none = 0;
  for (int o = 0; o < 3; ++o) {
    mlcc_value_t* in1 = C(MLCC_DTYPE_I64, S0, &one);
    mlcc_value_t* y32 = O(MLCC_DTYPE_F32, S(1));
    mlcc_value_t* y64 = O(MLCC_DTYPE_F64, S(1));
    mlcc_value_t* yi = O(MLCC_DTYPE_I64, S(1));
    mlcc_value_t* yp = O(MLCC_DTYPE_F64, S(1));
    mlcc_attr_t sym32 = A_int("periodic", 0);
    mlcc_attr_t sym64[2] = {A_int("periodic", 0), A_int("output_datatype", 11)};
    mlcc_attr_t symi[2] = {A_int("periodic", 0), A_int("output_datatype", 7)};
    mlcc_attr_t per64 = A_int("output_datatype", 11);
    CHECK_OK(run(ops[o], 17, &in1, 1, &y32, 1, &sym32, 1));
    CHECK_OK(run(ops[o], 17, &in1, 1, &y64, 1, sym64, 2));
    CHECK_OK(run(ops[o], 17, &in1, 1, &yi, 1, symi, 2));
    CHECK_OK(run(ops[o], 17, &in1, 1, &yp, 1, &per64, 1));
    CHECK(y32->data != NULL && isnan(((const float*)y32->data)[0]));
    CHECK(y64->data != NULL && isnan(((const double*)y64->data)[0]));
    EXPECT_INTS(yi, 0);
    double want_p = co[o][0] - co[o][1] + co[o][2];
    expect_near(yp, &want_p, 1, 1e-15, __LINE__);
  }
  // Integer output truncates; size 0 is empty.
  mlcc_value_t* in = C(MLCC_DTYPE_I64, S0, &four);
  mlcc_value_t* y = O(MLCC_DTYPE_I32, S(4));
  mlcc_attr_t i32 = A_int("output_datatype", 6);
  CHECK_OK(run(MLCC_OP_HANN_WINDOW, 17, &in, 1, &y, 1, &i32, 1));
  EXPECT_INTS(y, 0, 0, 1, 0);
  in = C(MLCC_DTYPE_I64, S0, &none);
  y = O(MLCC_DTYPE_F32, S(0));
  CHECK_OK(run(MLCC_OP_BLACKMAN_WINDOW, 17, &in, 1, &y, 1, NULL, 0));
  end();
}

static void test_window_errors(void) {
  begin();
  int64_t neg = -1, five = 5;
  mlcc_value_t* in = C(MLCC_DTYPE_I64, S0, &neg);
  CHECK_STATUS(infer_only(MLCC_OP_HANN_WINDOW, &in, 1, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  in = C(MLCC_DTYPE_I64, S0, &five);
  mlcc_attr_t b = A_int("output_datatype", 9);  // bool
  CHECK_STATUS(infer_only(MLCC_OP_HAMMING_WINDOW, &in, 1, &b, 1), MLCC_STATUS_INVALID_MODEL);
  mlcc_attr_t p = A_int("periodic", 2);
  CHECK_STATUS(infer_only(MLCC_OP_HAMMING_WINDOW, &in, 1, &p, 1), MLCC_STATUS_INVALID_MODEL);
  float f = 5;
  in = C(MLCC_DTYPE_F32, S0, &f);
  CHECK_STATUS(infer_only(MLCC_OP_BLACKMAN_WINDOW, &in, 1, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  end();
}

// The ONNX backend test case (test_melweightmatrix): 8 bands, DFT 16,
// 8192 Hz, 0..4096 Hz; expected output copied from its output_0.pb.
static void test_mel(void) {
  begin();
  int32_t bins = 8, dft = 16, sr = 8192;
  float lo = 0, hi = 4096;
  mlcc_value_t* ins[5] = {C(MLCC_DTYPE_I32, S0, &bins), C(MLCC_DTYPE_I32, S0, &dft),
                          C(MLCC_DTYPE_I32, S0, &sr), C(MLCC_DTYPE_F32, S0, &lo),
                          C(MLCC_DTYPE_F32, S0, &hi)};
  mlcc_value_t* y = O(MLCC_DTYPE_F32, S(9, 8));
  CHECK_OK(run(MLCC_OP_MEL_WEIGHT_MATRIX, 17, ins, 5, &y, 1, NULL, 0));
  double want[72] = {0};
  // Rows of ones: (0,0) (0,1) (1,2) (1,3) (2,4) (3,5) (4,6) (5,7).
  const int ones[8][2] = {{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}};
  for (int i = 0; i < 8; ++i) want[ones[i][0] * 8 + ones[i][1]] = 1;
  expect_near(y, want, 72, 0, __LINE__);
  end();
  // Wider bands with fractional slopes (dft 64, 16 kHz, 100..6000 Hz, f64):
  // reference values from the same construction in double.
  begin();
  int64_t bins2 = 4, dft2 = 64, sr2 = 16000;
  double lo2 = 100, hi2 = 6000;
  mlcc_value_t* ins2[5] = {C(MLCC_DTYPE_I64, S0, &bins2), C(MLCC_DTYPE_I64, S0, &dft2),
                           C(MLCC_DTYPE_I64, S0, &sr2), C(MLCC_DTYPE_F64, S0, &lo2),
                           C(MLCC_DTYPE_F64, S0, &hi2)};
  mlcc_value_t* y2 = O(MLCC_DTYPE_F64, S(33, 4));
  mlcc_attr_t f64 = A_int("output_datatype", 11);
  CHECK_OK(run(MLCC_OP_MEL_WEIGHT_MATRIX, 17, ins2, 5, &y2, 1, &f64, 1));
  double ml = 2595 * log10(1 + lo2 / 700), mh = 2595 * log10(1 + hi2 / 700);
  double step = (mh - ml) / 6;
  int64_t e[6];
  for (int i = 0; i < 6; ++i) {
    e[i] = (int64_t)floor(65.0 * 700 * (pow(10, (ml + i * step) / 2595) - 1) / 16000);
  }
  double want2[33 * 4] = {0};
  for (int i = 0; i < 4; ++i) {
    int64_t l = e[i], c = e[i + 1], h = e[i + 2];
    CHECK(l < c && c < h);  // the case exercises both slopes
    for (int64_t j = l; j <= c; ++j) want2[j * 4 + i] = (double)(j - l) / (double)(c - l);
    for (int64_t j = c; j < h; ++j) want2[j * 4 + i] = (double)(h - j) / (double)(h - c);
  }
  expect_near(y2, want2, 33 * 4, 1e-15, __LINE__);
  end();
}

int main(void) {
  RUN(test_dft_real);
  RUN(test_dft_complex_axes);
  RUN(test_dft_long);
  RUN(test_dft_errors);
  RUN(test_stft);
  RUN(test_stft_errors);
  RUN(test_windows);
  RUN(test_window_errors);
  RUN(test_mel);
  return TEST_EXIT();
}

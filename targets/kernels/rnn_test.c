// SPDX-License-Identifier: Apache-2.0
// Tests of the recurrent emitter (targets/kernels/rnn.c) and inference (ir/ops/rnn.c):
// one-node GRU/LSTM graphs with constant inputs evaluated through the host
// JIT (mlcc_codegen_eval_node). Expected values come from the float64 numpy
// reference of tests/e2e/make_rnn_cases.py on the same inputs (fill()).
// The wider conformance cases are the ONNX node tests and the generated
// cases of make_rnn_cases.py.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "test.h"

#include "targets/emit/emit_test_util.h"

// p[i] = 0.5*sin(0.37*i + seed), the inputs the numpy reference used.
static const float* fill(int64_t n, double seed) {
  float* p = mlcc_arena_alloc(&G->arena, sizeof(float) * (size_t)n, 8);
  if (p == NULL) return NULL;
  for (int64_t i = 0; i < n; ++i) p[i] = (float)(0.5 * sin(0.37 * (double)i + seed));
  return p;
}

static mlcc_attr_t A_strs(const char* n, const char* const* v, uint32_t count) {
  mlcc_attr_t a = {.name = n, .kind = MLCC_ATTR_STRINGS, .strings = v, .count = count};
  return a;
}

#define EXPECT_NEAR_F32(v, ...)                                                            \
  expect_f32((v), (const float[]){__VA_ARGS__},                                             \
             (int)(sizeof((const float[]){__VA_ARGS__}) / sizeof(float)), 1e-5, 2e-6, __LINE__)

// GRU, bidirectional, layout 1, linear_before_reset, sequence_lens {3, 1},
// B and initial_h: the reverse direction of row 1 runs only step 0 and Y is
// zero past each row's length.
static void test_gru_bidirectional_layout1(void) {
  begin();
  const int64_t S_ = 3, B_ = 2, I_ = 2, H_ = 2, D_ = 2;
  int32_t seq[2] = {3, 1};
  mlcc_value_t* in[6] = {
      C(MLCC_DTYPE_F32, S(B_, S_, I_), fill(B_ * S_ * I_, 0.1)),
      C(MLCC_DTYPE_F32, S(D_, 3 * H_, I_), fill(D_ * 3 * H_ * I_, 0.2)),
      C(MLCC_DTYPE_F32, S(D_, 3 * H_, H_), fill(D_ * 3 * H_ * H_, 0.3)),
      C(MLCC_DTYPE_F32, S(D_, 6 * H_), fill(D_ * 6 * H_, 0.4)),
      C(MLCC_DTYPE_I32, S(B_), seq),
      C(MLCC_DTYPE_F32, S(B_, D_, H_), fill(B_ * D_ * H_, 0.5)),
  };
  mlcc_value_t* out[2] = {O(MLCC_DTYPE_F32, S(B_, S_, D_, H_)), O(MLCC_DTYPE_F32, S(B_, D_, H_))};
  mlcc_attr_t attrs[4] = {A_int("hidden_size", H_), A_int("layout", 1),
                          A_int("linear_before_reset", 1), A_str("direction", "bidirectional")};
  CHECK_OK(run(MLCC_OP_GRU, 14, in, 6, out, 2, attrs, 4));
  EXPECT_NEAR_F32(out[0], 0.18697618f, 0.21322468f, 0.68546754f, 0.71320063f, 0.14092056f,
                  0.061468828f, 0.75137568f, 0.74420023f, 0.1191086f, -0.049753979f,
                  0.68082833f, 0.66727924f, 0.32526773f, 0.17380884f, 0.40371796f,
                  0.33352607f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f);
  EXPECT_NEAR_F32(out[1], 0.1191086f, -0.049753979f, 0.68546754f, 0.71320063f, 0.32526773f,
                  0.17380884f, 0.40371796f, 0.33352607f);
  end();
}

// LSTM, reverse, input_forget, peepholes, clip, HardSigmoid/Tanh/Softsign
// with alpha/beta, sequence_lens {2, 0}: the empty row gives zero Y, Y_h, Y_c.
static void test_lstm_reverse_options(void) {
  begin();
  const int64_t S_ = 2, B_ = 2, I_ = 3, H_ = 2;
  int32_t seq[2] = {2, 0};
  mlcc_value_t* in[8] = {
      C(MLCC_DTYPE_F32, S(S_, B_, I_), fill(S_ * B_ * I_, 0.6)),
      C(MLCC_DTYPE_F32, S(1, 4 * H_, I_), fill(4 * H_ * I_, 0.7)),
      C(MLCC_DTYPE_F32, S(1, 4 * H_, H_), fill(4 * H_ * H_, 0.8)),
      C(MLCC_DTYPE_F32, S(1, 8 * H_), fill(8 * H_, 0.9)),
      C(MLCC_DTYPE_I32, S(B_), seq),
      C(MLCC_DTYPE_F32, S(1, B_, H_), fill(B_ * H_, 1.0)),
      C(MLCC_DTYPE_F32, S(1, B_, H_), fill(B_ * H_, 1.1)),
      C(MLCC_DTYPE_F32, S(1, 3 * H_), fill(3 * H_, 1.2)),
  };
  mlcc_value_t* out[3] = {O(MLCC_DTYPE_F32, S(S_, 1, B_, H_)), O(MLCC_DTYPE_F32, S(1, B_, H_)),
                          O(MLCC_DTYPE_F32, S(1, B_, H_))};
  static const char* const kActs[3] = {"HardSigmoid", "Tanh", "Softsign"};
  static const float kAlpha[1] = {0.3f}, kBeta[1] = {0.4f};
  mlcc_attr_t attrs[7] = {A_int("hidden_size", H_),   A_str("direction", "reverse"),
                          A_int("input_forget", 1),   A_float("clip", 0.9f),
                          A_strs("activations", kActs, 3),
                          A_floats("activation_alpha", kAlpha, 1),
                          A_floats("activation_beta", kBeta, 1)};
  CHECK_OK(run(MLCC_OP_LSTM, 14, in, 8, out, 3, attrs, 7));
  EXPECT_NEAR_F32(out[0], 0.072288945f, 0.034634642f, 0.f, 0.f, -0.028612224f, 0.04659652f,
                  0.f, 0.f);
  EXPECT_NEAR_F32(out[1], 0.072288945f, 0.034634642f, 0.f, 0.f);
  EXPECT_NEAR_F32(out[2], 0.22340627f, 0.16675547f, 0.f, 0.f);
  end();
}

// Runs only inference and returns its status code (MLCC_STATUS_OK = 0).
static int infer_code(mlcc_op_t op, int opset, mlcc_value_t** ins, uint32_t n_in,
                      const mlcc_attr_t* attrs, uint32_t n_attrs) {
  mlcc_value_t* outs[2] = {O(MLCC_DTYPE_F32, S0), O(MLCC_DTYPE_F32, S0)};
  mlcc_node_t* node = NULL;
  CHECK_OK(mlcc_graph_add_node(G, op, opset, "n", ins, n_in, outs, 2, attrs, n_attrs, &node));
  if (node == NULL) return -1;
  mlcc_status_t s = mlcc_op_desc(op)->infer(node);
  int code = (int)mlcc_status_code(s);
  mlcc_status_free(s);
  return code;
}

static void test_bad_models_are_statuses(void) {
  begin();
  const float* z = fill(64, 0.0);
  mlcc_value_t* x = C(MLCC_DTYPE_F32, S(2, 1, 3), z);
  mlcc_value_t* w = C(MLCC_DTYPE_F32, S(1, 4, 3), z);
  mlcc_value_t* r = C(MLCC_DTYPE_F32, S(1, 4, 4), z);
  mlcc_value_t* ok[3] = {x, w, r};
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, ok, 3, NULL, 0), MLCC_STATUS_OK);
  // W has 5 rows, not gates*hidden_size = 4.
  mlcc_value_t* bad_w[3] = {x, C(MLCC_DTYPE_F32, S(1, 5, 3), z), r};
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, bad_w, 3, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  // GRU needs 3 gates: W [1, 12, 3] with hidden_size 4.
  CHECK_EQ_INT(infer_code(MLCC_OP_GRU, 14, ok, 3, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  static const char* const kOne[1] = {"Gelu"};
  mlcc_attr_t unknown = A_strs("activations", kOne, 1);
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, ok, 3, &unknown, 1), MLCC_STATUS_UNIMPLEMENTED);
  static const char* const kTwo[2] = {"Tanh", "Tanh"};
  mlcc_attr_t two = A_strs("activations", kTwo, 2);
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, ok, 3, &two, 1), MLCC_STATUS_INVALID_MODEL);
  mlcc_attr_t layout = A_int("layout", 1);
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 7, ok, 3, &layout, 1), MLCC_STATUS_INVALID_MODEL);
  mlcc_attr_t dir = A_str("direction", "sideways");
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, ok, 3, &dir, 1), MLCC_STATUS_INVALID_MODEL);
  mlcc_attr_t clip = A_float("clip", -1.f);
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, ok, 3, &clip, 1), MLCC_STATUS_INVALID_MODEL);
  // sequence_lens must be [batch_size] integers.
  int32_t lens[2] = {1, 1};
  mlcc_value_t* bad_lens[5] = {x, w, r, NULL, C(MLCC_DTYPE_I32, S(2), lens)};
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, bad_lens, 5, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  int32_t xints[6] = {0};
  mlcc_value_t* xi = C(MLCC_DTYPE_I32, S(2, 1, 3), xints);
  mlcc_value_t* int_x[3] = {xi, w, r};
  CHECK_EQ_INT(infer_code(MLCC_OP_RNN, 14, int_x, 3, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  end();
}

int main(void) {
  RUN(test_gru_bidirectional_layout1);
  RUN(test_lstm_reverse_options);
  RUN(test_bad_models_are_statuses);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Shared between the recurrent ops' shape inference (ir/ops/rnn.c) and their
// emitter (targets/kernels/rnn.c): the parsed, validated form of an
// ONNX RNN, GRU or LSTM node (opsets 7-14 of the ops; the layout attribute
// from 14). Thread-compatible (plain data).
#ifndef MLCC_IR_OPS_RNN_H_
#define MLCC_IR_OPS_RNN_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Activation functions of the recurrent ops (ONNX RNN "Activation functions").
typedef enum mlcc_rnn_act_e {
  MLCC_RNN_ACT_RELU = 0,          // max(0, x)
  MLCC_RNN_ACT_TANH,              // tanh(x)
  MLCC_RNN_ACT_SIGMOID,           // 1 / (1 + e^-x)
  MLCC_RNN_ACT_AFFINE,            // alpha*x + beta
  MLCC_RNN_ACT_LEAKY_RELU,        // x >= 0 ? x : alpha*x
  MLCC_RNN_ACT_THRESHOLDED_RELU,  // x > alpha ? x : 0
  MLCC_RNN_ACT_SCALED_TANH,       // alpha * tanh(beta*x)
  MLCC_RNN_ACT_HARD_SIGMOID,      // min(max(alpha*x + beta, 0), 1)
  MLCC_RNN_ACT_ELU,               // x >= 0 ? x : alpha*(e^x - 1)
  MLCC_RNN_ACT_SOFTSIGN,          // x / (1 + |x|)
  MLCC_RNN_ACT_SOFTPLUS,          // log(1 + e^x)
  MLCC_RNN_ACT_COUNT
} mlcc_rnn_act_t;

typedef struct mlcc_rnn_activation_t {
  mlcc_rnn_act_t kind;
  float alpha, beta;  // resolved: attribute value or the ONNX default
} mlcc_rnn_activation_t;

// Input slots (ONNX order). LSTM alone has initial_c and P.
enum {
  MLCC_RNN_IN_X = 0,
  MLCC_RNN_IN_W = 1,
  MLCC_RNN_IN_R = 2,
  MLCC_RNN_IN_B = 3,
  MLCC_RNN_IN_SEQ_LENS = 4,
  MLCC_RNN_IN_INITIAL_H = 5,
  MLCC_RNN_IN_INITIAL_C = 6,
  MLCC_RNN_IN_P = 7,
};

typedef struct mlcc_rnn_t {
  int32_t n_gates;      // RNN 1 (i), GRU 3 (z, r, h), LSTM 4 (i, o, f, c)
  int32_t n_acts;       // activations per direction: RNN 1, GRU 2, LSTM 3
  int32_t n_dirs;       // 2 for "bidirectional", else 1
  bool reverse;         // direction "reverse" (then n_dirs == 1)
  int32_t layout;       // 0: X [S,B,I], Y [S,D,B,H]; 1: X [B,S,I], Y [B,S,D,H]
  int64_t seq_length, batch_size, input_size, hidden_size;
  bool has_clip;
  float clip;           // > 0 when has_clip: gate inputs clamp to [-clip, clip]
  bool linear_before_reset;  // GRU
  bool input_forget;         // LSTM: f = 1 - i
  // act[d][k]: activation k (RNN f; GRU f, g; LSTM f, g, h) of direction d.
  mlcc_rnn_activation_t act[2][3];
} mlcc_rnn_t;

// Parses and validates |node| (an RNN, GRU or LSTM whose inputs are inferred)
// into |*out|: shapes of X, W, R and the optional B, sequence_lens,
// initial_h, initial_c, P; attributes direction, hidden_size, layout,
// activations (+alpha/beta, consumed in order by the functions that take
// them, defaults as the ONNX ops), clip, linear_before_reset, input_forget.
// Errors: INVALID_MODEL for inputs or attributes that break the spec (named
// with both sides), UNIMPLEMENTED for unknown activation names and
// non-float dtypes.
mlcc_status_t mlcc_rnn_parse(const mlcc_node_t* node, mlcc_rnn_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_RNN_H_

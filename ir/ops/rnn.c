// SPDX-License-Identifier: Apache-2.0
// Shape inference for the recurrent ops RNN, GRU and LSTM (ONNX opsets 7-14
// of the ops; 'layout' from 14): mlcc_rnn_parse validates a node into an
// mlcc_rnn_t, shared with targets/kernels/rnn.c.
#include "ir/ops/rnn.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"

static mlcc_status_t bad_shape(const mlcc_node_t* node, const char* name, const char* want,
                               const mlcc_value_t* v) {
  char sb[MLCC_INFER_SHAPE_BUF];
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs '%s' of shape %s; got %s",
                          mlcc_infer_op(node), name, want, mlcc_infer_fmt_shape(&v->shape, sb));
}

// Checks that |v| has rank |rank| and dims |d[0..rank)|; |want| formats them.
static mlcc_status_t check_shape(const mlcc_node_t* node, const mlcc_value_t* v,
                                 const char* name, int32_t rank, const int64_t* d,
                                 const char* labels) {
  bool ok = v->shape.rank == rank;
  for (int32_t i = 0; ok && i < rank; ++i) ok = v->shape.dims[i] == d[i];
  if (ok) return mlcc_ok_status();
  char want[160];
  int n = snprintf(want, sizeof(want), "[");
  for (int32_t i = 0; i < rank && n > 0 && (size_t)n < sizeof(want); ++i) {
    // |labels| is a space-separated list of dim names, one per dim.
    const char* l = labels;
    for (int32_t k = 0; k < i && l != NULL; ++k) {
      l = strchr(l, ' ');
      if (l != NULL) ++l;
    }
    size_t len = l == NULL ? 0 : (strchr(l, ' ') ? (size_t)(strchr(l, ' ') - l) : strlen(l));
    n += snprintf(want + n, sizeof(want) - (size_t)n, "%s%.*s=%lld", i ? "," : "", (int)len,
                  l ? l : "", (long long)d[i]);
  }
  if (n > 0 && (size_t)n < sizeof(want)) snprintf(want + n, sizeof(want) - (size_t)n, "]");
  return bad_shape(node, name, want, v);
}

typedef struct act_info_t {
  const char* name;   // ONNX spelling (matched case-insensitively)
  bool uses_alpha, uses_beta;
  float alpha, beta;  // defaults of the corresponding ONNX operators
} act_info_t;

static const act_info_t kActs[MLCC_RNN_ACT_COUNT] = {
    [MLCC_RNN_ACT_RELU] = {"Relu", false, false, 0.f, 0.f},
    [MLCC_RNN_ACT_TANH] = {"Tanh", false, false, 0.f, 0.f},
    [MLCC_RNN_ACT_SIGMOID] = {"Sigmoid", false, false, 0.f, 0.f},
    [MLCC_RNN_ACT_AFFINE] = {"Affine", true, true, 1.f, 0.f},
    [MLCC_RNN_ACT_LEAKY_RELU] = {"LeakyRelu", true, false, 0.01f, 0.f},
    [MLCC_RNN_ACT_THRESHOLDED_RELU] = {"ThresholdedRelu", true, false, 1.f, 0.f},
    [MLCC_RNN_ACT_SCALED_TANH] = {"ScaledTanh", true, true, 1.f, 1.f},
    [MLCC_RNN_ACT_HARD_SIGMOID] = {"HardSigmoid", true, true, 0.2f, 0.5f},
    [MLCC_RNN_ACT_ELU] = {"Elu", true, false, 1.f, 0.f},
    [MLCC_RNN_ACT_SOFTSIGN] = {"Softsign", false, false, 0.f, 0.f},
    [MLCC_RNN_ACT_SOFTPLUS] = {"Softplus", false, false, 0.f, 0.f},
};

static bool name_equal_nocase(const char* a, const char* b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
  }
  return *a == *b;
}

// Default activations per op: RNN Tanh; GRU Sigmoid, Tanh; LSTM Sigmoid,
// Tanh, Tanh (the same list for each direction).
static const mlcc_rnn_act_t kDefaultActs[3] = {MLCC_RNN_ACT_SIGMOID, MLCC_RNN_ACT_TANH,
                                               MLCC_RNN_ACT_TANH};

static mlcc_status_t parse_activations(const mlcc_node_t* node, mlcc_rnn_t* r) {
  const mlcc_attr_t* names = mlcc_node_attr(node, "activations");
  const float *alphas = NULL, *betas = NULL;
  uint32_t n_alpha = 0, n_beta = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_floats(node, "activation_alpha", &alphas, &n_alpha));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_floats(node, "activation_beta", &betas, &n_beta));
  uint32_t total = (uint32_t)(r->n_acts * r->n_dirs);
  if (names != NULL) {
    if (names->kind != MLCC_ATTR_STRINGS) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s attribute 'activations' must be a list of strings",
                              mlcc_infer_op(node));
    }
    if (names->count != total) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s needs %u activation names (%d per direction x %d "
                              "directions); attribute 'activations' has %u",
                              mlcc_infer_op(node), total, r->n_acts, r->n_dirs, names->count);
    }
  }
  uint32_t next_alpha = 0, next_beta = 0;
  for (uint32_t k = 0; k < total; ++k) {
    mlcc_rnn_act_t kind = r->n_gates == 1 ? MLCC_RNN_ACT_TANH : kDefaultActs[k % r->n_acts];
    if (names != NULL) {
      const char* s = names->strings != NULL ? names->strings[k] : NULL;
      int found = -1;
      for (int a = 0; s != NULL && a < MLCC_RNN_ACT_COUNT; ++a) {
        if (name_equal_nocase(s, kActs[a].name)) found = a;
      }
      if (found < 0) {
        return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                "%s activation '%s' is not supported (one of Relu, Tanh, "
                                "Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                                "HardSigmoid, Elu, Softsign, Softplus)",
                                mlcc_infer_op(node), s ? s : "");
      }
      kind = (mlcc_rnn_act_t)found;
    }
    // Alpha/beta values are consumed in order by the functions that take them.
    mlcc_rnn_activation_t* a = &r->act[k / r->n_acts][k % r->n_acts];
    a->kind = kind;
    a->alpha = kActs[kind].alpha;
    a->beta = kActs[kind].beta;
    if (kActs[kind].uses_alpha && next_alpha < n_alpha) a->alpha = alphas[next_alpha++];
    if (kActs[kind].uses_beta && next_beta < n_beta) a->beta = betas[next_beta++];
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_rnn_parse(const mlcc_node_t* node, mlcc_rnn_t* out) {
  memset(out, 0, sizeof(*out));
  const char* op = mlcc_infer_op(node);
  switch (node->op) {
    case MLCC_OP_RNN: out->n_gates = 1, out->n_acts = 1; break;
    case MLCC_OP_GRU: out->n_gates = 3, out->n_acts = 2; break;
    case MLCC_OP_LSTM: out->n_gates = 4, out->n_acts = 3; break;
    default:
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "mlcc_rnn_parse called for %s", op);
  }
  bool lstm = node->op == MLCC_OP_LSTM;

  // Attributes.
  const char* dir = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "direction", "forward", &dir));
  if (strcmp(dir, "forward") == 0) {
    out->n_dirs = 1;
  } else if (strcmp(dir, "reverse") == 0) {
    out->n_dirs = 1;
    out->reverse = true;
  } else if (strcmp(dir, "bidirectional") == 0) {
    out->n_dirs = 2;
  } else {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'direction' must be \"forward\", \"reverse\" or "
                            "\"bidirectional\"; got \"%s\"",
                            op, dir);
  }
  int64_t layout = 0, hidden_attr = -1, lbr = 0, input_forget = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "layout", 0, &layout));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "hidden_size", -1, &hidden_attr));
  if (layout != 0 && layout != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'layout' must be 0 or 1; got %lld", op,
                            (long long)layout);
  }
  if (layout != 0 && node->opset < 14) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'layout' exists from opset 14; the model uses "
                            "opset %d",
                            op, node->opset);
  }
  out->layout = (int32_t)layout;
  if (node->op == MLCC_OP_GRU) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "linear_before_reset", 0, &lbr));
    out->linear_before_reset = lbr != 0;
  }
  if (lstm) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "input_forget", 0, &input_forget));
    out->input_forget = input_forget != 0;
  }
  if (mlcc_node_attr(node, "clip") != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "clip", 0.f, &out->clip));
    if (!(out->clip > 0.f)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s attribute 'clip' (a threshold) must be > 0; got %g", op,
                              (double)out->clip);
    }
    out->has_clip = true;
  }

  // Inputs.
  static const char* const kNames[8] = {"X",         "W",         "R",         "B",
                                        "sequence_lens", "initial_h", "initial_c", "P"};
  mlcc_value_t* in[8] = {0};
  uint32_t n_in = lstm ? 8 : 6;
  for (uint32_t i = 0; i < n_in; ++i) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, kNames[i], i < 3, &in[i]));
  }
  if (node->n_inputs > n_in) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s takes at most %u inputs; got %u", op,
                            n_in, node->n_inputs);
  }
  mlcc_value_t* x = in[MLCC_RNN_IN_X];
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
  for (uint32_t i = 1; i < n_in; ++i) {
    if (in[i] == NULL || i == MLCC_RNN_IN_SEQ_LENS) continue;
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", in[i], kNames[i]));
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, x, "X", 3));
  out->seq_length = x->shape.dims[layout == 0 ? 0 : 1];
  out->batch_size = x->shape.dims[layout == 0 ? 1 : 0];
  out->input_size = x->shape.dims[2];
  mlcc_value_t* w = in[MLCC_RNN_IN_W];
  mlcc_value_t* r = in[MLCC_RNN_IN_R];
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, r, "R", 3));
  // hidden_size defaults to R's last dim (the spec gives no default).
  int64_t hidden = hidden_attr != -1 ? hidden_attr : r->shape.dims[2];
  if (hidden <= 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs hidden_size > 0 (attribute 'hidden_size' or R's last "
                            "dim); got %lld",
                            op, (long long)hidden);
  }
  out->hidden_size = hidden;
  int64_t d = out->n_dirs, gh = 0, b = out->batch_size;
  MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "gates*hidden_size", out->n_gates, hidden, &gh));
  int64_t dims[3] = {d, gh, out->input_size};
  MLCC_RETURN_IF_ERROR(check_shape(node, w, "W", 3, dims,
                                   "num_directions gates*hidden_size input_size"));
  dims[2] = hidden;
  MLCC_RETURN_IF_ERROR(check_shape(node, r, "R", 3, dims,
                                   "num_directions gates*hidden_size hidden_size"));
  if (in[MLCC_RNN_IN_B] != NULL) {
    int64_t bd[2] = {d, 2 * gh};
    MLCC_RETURN_IF_ERROR(check_shape(node, in[MLCC_RNN_IN_B], "B", 2, bd,
                                     "num_directions 2*gates*hidden_size"));
  }
  if (in[MLCC_RNN_IN_SEQ_LENS] != NULL) {
    mlcc_value_t* sl = in[MLCC_RNN_IN_SEQ_LENS];
    MLCC_RETURN_IF_ERROR(
        mlcc_infer_check_dtype(node, sl, "sequence_lens", MLCC_INFER_DT_INT32_64));
    MLCC_RETURN_IF_ERROR(check_shape(node, sl, "sequence_lens", 1, &b, "batch_size"));
  }
  int64_t state[3] = {d, b, hidden};
  const char* state_labels = "num_directions batch_size hidden_size";
  if (layout == 1) {
    state[0] = b, state[1] = d;
    state_labels = "batch_size num_directions hidden_size";
  }
  if (in[MLCC_RNN_IN_INITIAL_H] != NULL) {
    MLCC_RETURN_IF_ERROR(
        check_shape(node, in[MLCC_RNN_IN_INITIAL_H], "initial_h", 3, state, state_labels));
  }
  if (lstm && in[MLCC_RNN_IN_INITIAL_C] != NULL) {
    MLCC_RETURN_IF_ERROR(
        check_shape(node, in[MLCC_RNN_IN_INITIAL_C], "initial_c", 3, state, state_labels));
  }
  if (lstm && in[MLCC_RNN_IN_P] != NULL) {
    int64_t pd[2] = {d, 3 * hidden};
    MLCC_RETURN_IF_ERROR(
        check_shape(node, in[MLCC_RNN_IN_P], "P", 2, pd, "num_directions 3*hidden_size"));
  }
  return parse_activations(node, out);
}

// RNN, GRU, LSTM: Y [S,D,B,H] (layout 1: [B,S,D,H]), Y_h and (LSTM) Y_c
// [D,B,H] (layout 1: [B,D,H]), all of X's dtype and all optional.
mlcc_status_t mlcc_infer_rnn(mlcc_node_t* node) {
  mlcc_rnn_t r;
  MLCC_RETURN_IF_ERROR(mlcc_rnn_parse(node, &r));
  uint32_t n_out = node->op == MLCC_OP_LSTM ? 3 : 2;
  if (node->n_outputs > n_out) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s has at most %u outputs; got %u",
                            mlcc_infer_op(node), n_out, node->n_outputs);
  }
  mlcc_dtype_t dt = node->inputs[MLCC_RNN_IN_X]->dtype;
  mlcc_shape_t y, st;
  memset(&y, 0, sizeof(y));
  memset(&st, 0, sizeof(st));
  y.rank = 4;
  st.rank = 3;
  if (r.layout == 0) {
    y.dims[0] = r.seq_length, y.dims[1] = r.n_dirs, y.dims[2] = r.batch_size;
    st.dims[0] = r.n_dirs, st.dims[1] = r.batch_size;
  } else {
    y.dims[0] = r.batch_size, y.dims[1] = r.seq_length, y.dims[2] = r.n_dirs;
    st.dims[0] = r.batch_size, st.dims[1] = r.n_dirs;
  }
  y.dims[3] = r.hidden_size;
  st.dims[2] = r.hidden_size;
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 0, dt, &y));
  for (uint32_t i = 1; i < n_out; ++i) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, i, dt, &st));
  }
  return mlcc_ok_status();
}

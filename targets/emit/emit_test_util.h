// SPDX-License-Identifier: Apache-2.0
// One-node graph helpers shared by the emitter tests (emit_*_test.c): build a
// tiny graph with constant inputs, evaluate a node through the host JIT
// (mlcc_codegen_eval_node) and compare the output with expected values.
// Header-only: each test executable includes it once (static functions).
#ifndef MLCC_TARGETS_EMIT_EMIT_TEST_UTIL_H_
#define MLCC_TARGETS_EMIT_EMIT_TEST_UTIL_H_

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "test.h"

static mlcc_graph_t* G;
static int name_counter;

static mlcc_shape_t mkshape(int rank, const int64_t* d) {
  mlcc_shape_t s = {.rank = rank};
  for (int i = 0; i < rank; ++i) s.dims[i] = d[i];
  return s;
}
#define S(...) mkshape((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
#define S0 mkshape(0, NULL)

static void begin(void) {
  G = NULL;
  CHECK_OK(mlcc_graph_create(&G));
}
static void end(void) {
  mlcc_graph_destroy(G);
  G = NULL;
}

// A constant input with a copy of |data|.
static mlcc_value_t* C(mlcc_dtype_t dt, mlcc_shape_t s, const void* data) {
  char name[32];
  snprintf(name, sizeof(name), "c%d", name_counter++);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(G, name, dt, &s, data, true, &v));
  return v;
}
// An output value whose dtype/shape we set by hand (cross-checked with the
// op's own inference when that is available).
static mlcc_value_t* O(mlcc_dtype_t dt, mlcc_shape_t s) {
  char name[32];
  snprintf(name, sizeof(name), "o%d", name_counter++);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(G, name, MLCC_VALUE_INTERMEDIATE, &v));
  if (v == NULL) return NULL;
  v->dtype = dt;
  v->shape = s;
  v->shape_known = true;
  return v;
}

static mlcc_attr_t A_int(const char* n, int64_t v) {
  mlcc_attr_t a = {.name = n, .kind = MLCC_ATTR_INT, .i = v};
  return a;
}
static mlcc_attr_t A_float(const char* n, float v) {
  mlcc_attr_t a = {.name = n, .kind = MLCC_ATTR_FLOAT, .f = v};
  return a;
}
// Attributes of lists and strings; the name, the values and the string are
// borrowed, not copied (they must outlive the node's use).
static inline mlcc_attr_t A_ints(const char* n, const int64_t* v, uint32_t count) {
  mlcc_attr_t a = {.name = n, .kind = MLCC_ATTR_INTS, .ints = v, .count = count};
  return a;
}
static inline mlcc_attr_t A_floats(const char* n, const float* v, uint32_t count) {
  mlcc_attr_t a = {.name = n, .kind = MLCC_ATTR_FLOATS, .floats = v, .count = count};
  return a;
}
static inline mlcc_attr_t A_str(const char* n, const char* s) {
  mlcc_attr_t a = {.name = n, .kind = MLCC_ATTR_STRING, .s = s, .s_len = strlen(s)};
  return a;
}

// Adds the node, checks the op's inference agrees with the hand-set output
// shapes (if it runs), evaluates it through the JIT. Returns the status.
static mlcc_status_t run(mlcc_op_t op, int opset, mlcc_value_t** ins, uint32_t n_in,
                         mlcc_value_t** outs, uint32_t n_out, const mlcc_attr_t* attrs,
                         uint32_t n_attrs) {
  mlcc_node_t* node = NULL;
  MLCC_RETURN_IF_ERROR(
      mlcc_graph_add_node(G, op, opset, "n", ins, n_in, outs, n_out, attrs, n_attrs, &node));
  mlcc_shape_t hand[8];
  mlcc_dtype_t hand_dt[8];
  for (uint32_t i = 0; i < n_out && i < 8; ++i) {
    if (outs[i] == NULL) continue;
    hand[i] = outs[i]->shape;
    hand_dt[i] = outs[i]->dtype;
  }
  mlcc_status_t inf = mlcc_op_desc(op)->infer(node);
  for (uint32_t i = 0; i < n_out && i < 8; ++i) {
    if (outs[i] == NULL) continue;
    if (inf == NULL && (!mlcc_shape_equal(&hand[i], &outs[i]->shape) ||
                        hand_dt[i] != outs[i]->dtype)) {
      char a[96], b[96];
      fprintf(stderr, "note: %s inference gives %s %s, test expects %s %s\n", mlcc_op_name(op),
              mlcc_dtype_name(outs[i]->dtype), mlcc_shape_format(&outs[i]->shape, a, 96),
              mlcc_dtype_name(hand_dt[i]), mlcc_shape_format(&hand[i], b, 96));
    }
    outs[i]->shape = hand[i];
    outs[i]->dtype = hand_dt[i];
    outs[i]->shape_known = true;
  }
  mlcc_status_free(inf);
  return mlcc_codegen_eval_node(G, node);
}

static bool is_const(const mlcc_value_t* v) {
  bool ok = v != NULL && v->kind == MLCC_VALUE_CONSTANT && v->data != NULL;
  if (!ok) fprintf(stderr, "output is not a constant after eval\n");
  return ok;
}

// max|y-ref| <= atol + rtol*|ref|; NaN matches NaN.
static void expect_f32(const mlcc_value_t* v, const float* want, int n, double rtol,
                       double atol, int line) {
  if (!is_const(v)) {
    CHECK(false);
    return;
  }
  const float* y = v->data;
  for (int i = 0; i < n; ++i) {
    bool ok = (isnan(want[i]) && isnan(y[i])) || y[i] == want[i] ||
              fabs((double)y[i] - (double)want[i]) <= atol + rtol * fabs((double)want[i]);
    if (!ok) {
      fprintf(stderr, "line %d: element %d = %.9g, want %.9g\n", line, i, y[i], want[i]);
      CHECK(false);
      return;
    }
  }
}
#define EXPECT_F32(v, ...)                                                                 \
  expect_f32((v), (const float[]){__VA_ARGS__},                                             \
             (int)(sizeof((const float[]){__VA_ARGS__}) / sizeof(float)), 1e-6, 1e-6, __LINE__)

static void expect_i64s(const mlcc_value_t* v, const int64_t* want, int n, int line) {
  if (!is_const(v)) {
    CHECK(false);
    return;
  }
  for (int i = 0; i < n; ++i) {
    int64_t y = 0;
    switch (v->dtype) {
      case MLCC_DTYPE_I64: y = ((const int64_t*)v->data)[i]; break;
      case MLCC_DTYPE_I32: y = ((const int32_t*)v->data)[i]; break;
      case MLCC_DTYPE_I16: y = ((const int16_t*)v->data)[i]; break;
      case MLCC_DTYPE_I8: y = ((const int8_t*)v->data)[i]; break;
      case MLCC_DTYPE_U8: case MLCC_DTYPE_BOOL: y = ((const uint8_t*)v->data)[i]; break;
      case MLCC_DTYPE_U32: y = ((const uint32_t*)v->data)[i]; break;
      default: CHECK(false); return;
    }
    if (y != want[i]) {
      fprintf(stderr, "line %d: element %d = %lld, want %lld\n", line, i, (long long)y,
              (long long)want[i]);
      CHECK(false);
      return;
    }
  }
}
#define EXPECT_INTS(v, ...)                                                                \
  expect_i64s((v), (const int64_t[]){__VA_ARGS__},                                          \
              (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), __LINE__)

#endif  // MLCC_TARGETS_EMIT_EMIT_TEST_UTIL_H_

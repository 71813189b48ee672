// SPDX-License-Identifier: Apache-2.0
// Tests of the emit toolkit's bfloat16 conversions (targets/emit/emit.c: load widens the
// bits, store rounds to nearest even) through Cast and CastLike evaluated by
// the host JIT, and of the bfloat16 gate (other ops refuse it). Expected
// bits are worked out by hand from the binary32 encodings.
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

static float f32_of(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static void expect_u16(const mlcc_value_t* v, const uint16_t* want, int n) {
  if (!is_const(v)) {
    CHECK(false);
    return;
  }
  for (int i = 0; i < n; ++i) {
    uint16_t y = ((const uint16_t*)v->data)[i];
    if (y != want[i]) {
      fprintf(stderr, "element %d = 0x%04x, want 0x%04x\n", i, y, want[i]);
      CHECK(false);
    }
  }
}

static void test_float_to_bf16_rounding(void) {
  begin();
  enum { N = 12 };
  const uint32_t bits[N] = {
      0x3f808000u,  // 1.00390625: tie, even neighbour 0x3f80 (down)
      0x3f818000u,  // tie, even neighbour 0x3f82 (up)
      0x3f808001u,  // just above the tie: up
      0x3f807fffu,  // just below the tie: down
      0x7f7fffffu,  // FLT_MAX rounds up to +inf
      0xff800000u,  // -inf stays
      0x80000000u,  // -0
      0x00000001u,  // smallest subnormal rounds to +0
      0x7fc00000u,  // quiet NaN
      0xffc00001u,  // negative NaN keeps its sign
      0x7f800001u,  // NaN whose payload is only in the dropped bits
      0x3ef5f000u,  // 0.48033667f-like value: rounds up (ONNX 1.12 data truncates)
  };
  const uint16_t want[N] = {0x3f80, 0x3f82, 0x3f81, 0x3f80, 0x7f80, 0xff80,
                            0x8000, 0x0000, 0x7fc0, 0xffc0, 0x7fc0, 0x3ef6};
  float x[N];
  for (int i = 0; i < N; ++i) x[i] = f32_of(bits[i]);
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(N), x);
  mlcc_value_t* out = O(MLCC_DTYPE_BF16, S(N));
  mlcc_attr_t to = A_int("to", 16);
  CHECK_OK(run(MLCC_OP_CAST, 13, &in, 1, &out, 1, &to, 1));
  expect_u16(out, want, N);
  // CastLike reads only the dtype of its second input.
  uint16_t like_bits = 0;
  mlcc_value_t* ins[2] = {C(MLCC_DTYPE_F32, S(N), x), C(MLCC_DTYPE_BF16, S(1), &like_bits)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_BF16, S(N));
  CHECK_OK(run(MLCC_OP_CAST_LIKE, 15, ins, 2, &out2, 1, NULL, 0));
  expect_u16(out2, want, N);
  end();
}

static void test_bf16_to_other_types(void) {
  begin();
  const uint16_t x[6] = {0x3f80, 0xc0a0, 0x7f80, 0x0001, 0x7fc0, 0x4b80};
  // Widening is exact: 1, -5, inf, the smallest bf16 subnormal 2^-133, NaN, 2^24.
  mlcc_value_t* in = C(MLCC_DTYPE_BF16, S(6), x);
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(6));
  mlcc_attr_t to = A_int("to", 1);
  CHECK_OK(run(MLCC_OP_CAST, 13, &in, 1, &out, 1, &to, 1));
  if (is_const(out)) {
    const float* y = out->data;
    CHECK(y[0] == 1.0f && y[1] == -5.0f && isinf(y[2]) && y[2] > 0);
    CHECK(y[3] == ldexpf(1.0f, -133) && isnan(y[4]) && y[5] == 16777216.0f);
  }
  // bfloat16 -> int32 truncates toward zero, -> double is exact.
  const uint16_t z[3] = {0x4049 /* 3.140625 */, 0xc0f0 /* -7.5 */, 0x4680 /* 16384 */};
  mlcc_value_t* zin = C(MLCC_DTYPE_BF16, S(3), z);
  mlcc_value_t* zout = O(MLCC_DTYPE_I32, S(3));
  mlcc_attr_t to_i = A_int("to", 6);
  CHECK_OK(run(MLCC_OP_CAST, 13, &zin, 1, &zout, 1, &to_i, 1));
  EXPECT_INTS(zout, 3, -7, 16384);
  mlcc_value_t* zin2 = C(MLCC_DTYPE_BF16, S(3), z);
  mlcc_value_t* dout = O(MLCC_DTYPE_F64, S(3));
  mlcc_attr_t to_d = A_int("to", 11);
  CHECK_OK(run(MLCC_OP_CAST, 13, &zin2, 1, &dout, 1, &to_d, 1));
  if (is_const(dout)) {
    const double* d = dout->data;
    CHECK(d[0] == 3.140625 && d[1] == -7.5 && d[2] == 16384.0);
  }
  // int64 -> bfloat16 rounds the float value: 257 -> 256 (tie to even), 259 -> 260.
  const int64_t w[2] = {257, 259};
  mlcc_value_t* win = C(MLCC_DTYPE_I64, S(2), w);
  mlcc_value_t* wout = O(MLCC_DTYPE_BF16, S(2));
  mlcc_attr_t to_b = A_int("to", 16);
  CHECK_OK(run(MLCC_OP_CAST, 13, &win, 1, &wout, 1, &to_b, 1));
  expect_u16(wout, (const uint16_t[]){0x4380, 0x4382}, 2);
  end();
}

// Every op but Cast/CastLike refuses bfloat16 inputs at inference.
static void test_other_ops_refuse_bf16(void) {
  begin();
  const uint16_t x[2] = {0x3f80, 0x4000};
  mlcc_value_t* in = C(MLCC_DTYPE_BF16, S(2), x);
  mlcc_value_t* out = O(MLCC_DTYPE_BF16, S(2));
  mlcc_node_t* node = NULL;
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_RELU, 14, "r", &in, 1, &out, 1, NULL, 0, &node));
  mlcc_status_t s = mlcc_op_desc(MLCC_OP_RELU)->infer(node);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_UNIMPLEMENTED);
  char* m = mlcc_status_to_string(s);
  CHECK(m != NULL && strstr(m, "bfloat16 only in Cast and CastLike") != NULL);
  free(m);
  mlcc_status_free(s);
  end();
}

int main(void) {
  RUN(test_float_to_bf16_rounding);
  RUN(test_bf16_to_other_types);
  RUN(test_other_ops_refuse_bf16);
  return TEST_EXIT();
}

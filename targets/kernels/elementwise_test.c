// SPDX-License-Identifier: Apache-2.0
// Tests of the elementwise emitter: tiny one-node graphs with constant
// inputs, evaluated through the host JIT (mlcc_codegen_eval_node), compared
// with values computed by hand or by libm.
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

#include "targets/emit/emit_test_util.h"

// Runs a unary float op on |x| (n elements) into a new output; returns it.
static mlcc_value_t* unary_f32(mlcc_op_t op, int opset, const float* x, int n,
                               const mlcc_attr_t* attrs, uint32_t n_attrs) {
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(n), x);
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(n));
  CHECK_OK(run(op, opset, &in, 1, &out, 1, attrs, n_attrs));
  return out;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static void test_add_broadcast(void) {
  begin();
  float a[6] = {1, 2, 3, 4, 5, 6};
  float b[3] = {10, 20, 30};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_F32, S(2, 3), a), C(MLCC_DTYPE_F32, S(3), b)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(2, 3));
  CHECK_OK(run(MLCC_OP_ADD, 14, in, 2, &out, 1, NULL, 0));
  EXPECT_F32(out, 11, 22, 33, 14, 25, 36);
  // Both sides broadcast: [2,1] * [1,3] in int32.
  int32_t c[2] = {2, -3}, d[3] = {1, 10, 100};
  mlcc_value_t* in2[2] = {C(MLCC_DTYPE_I32, S(2, 1), c), C(MLCC_DTYPE_I32, S(1, 3), d)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_I32, S(2, 3));
  CHECK_OK(run(MLCC_OP_MUL, 14, in2, 2, &out2, 1, NULL, 0));
  EXPECT_INTS(out2, 2, 20, 200, -3, -30, -300);
  // Scalar (rank 0) minus tensor, float64.
  double e = 1.5, f[2] = {0.25, -1};
  mlcc_value_t* in3[2] = {C(MLCC_DTYPE_F64, S0, &e), C(MLCC_DTYPE_F64, S(2), f)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_F64, S(2));
  CHECK_OK(run(MLCC_OP_SUB, 14, in3, 2, &out3, 1, NULL, 0));
  if (is_const(out3)) {
    CHECK(((const double*)out3->data)[0] == 1.25);
    CHECK(((const double*)out3->data)[1] == 2.5);
  }
  end();
}

static void test_int_div_mod(void) {
  begin();
  int32_t a[6] = {7, -7, 7, -7, 5, INT32_MIN};
  int32_t b[6] = {2, 2, -2, -2, 0, -1};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_I32, S(6), a), C(MLCC_DTYPE_I32, S(6), b)};
  mlcc_value_t* out = O(MLCC_DTYPE_I32, S(6));
  CHECK_OK(run(MLCC_OP_DIV, 14, in, 2, &out, 1, NULL, 0));
  EXPECT_INTS(out, 3, -3, -3, 3, 0, INT32_MIN);  // truncation; x/0 -> 0
  // Mod fmod=0: sign of the divisor (numpy.mod).
  int64_t x[5] = {5, -5, 5, -5, 9}, y[5] = {3, 3, -3, -3, 0};
  mlcc_value_t* in2[2] = {C(MLCC_DTYPE_I64, S(5), x), C(MLCC_DTYPE_I64, S(5), y)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_I64, S(5));
  CHECK_OK(run(MLCC_OP_MOD, 13, in2, 2, &out2, 1, NULL, 0));
  EXPECT_INTS(out2, 2, 1, -1, -2, 0);
  // fmod=1: sign of the dividend (C fmod).
  mlcc_value_t* out3 = O(MLCC_DTYPE_I64, S(5));
  mlcc_attr_t fm = A_int("fmod", 1);
  CHECK_OK(run(MLCC_OP_MOD, 13, in2, 2, &out3, 1, &fm, 1));
  EXPECT_INTS(out3, 2, -2, 2, -2, 0);
  float fx[3] = {5.5f, -5.5f, 4.0f}, fy[3] = {2, 2, -3};
  mlcc_value_t* in4[2] = {C(MLCC_DTYPE_F32, S(3), fx), C(MLCC_DTYPE_F32, S(3), fy)};
  mlcc_value_t* out4 = O(MLCC_DTYPE_F32, S(3));
  CHECK_OK(run(MLCC_OP_MOD, 13, in4, 2, &out4, 1, &fm, 1));
  EXPECT_F32(out4, 1.5f, -1.5f, 1.0f);
  // Unsigned division.
  uint8_t u[3] = {200, 7, 9}, v[3] = {3, 0, 2};
  mlcc_value_t* in5[2] = {C(MLCC_DTYPE_U8, S(3), u), C(MLCC_DTYPE_U8, S(3), v)};
  mlcc_value_t* out5 = O(MLCC_DTYPE_U8, S(3));
  CHECK_OK(run(MLCC_OP_DIV, 14, in5, 2, &out5, 1, NULL, 0));
  EXPECT_INTS(out5, 66, 0, 4);
  end();
}

static void test_max_min_nan_variadic(void) {
  begin();
  float a[3] = {NAN, 1, 2}, b[3] = {0, NAN, 3}, c[1] = {2.5f};
  mlcc_value_t* in[3] = {C(MLCC_DTYPE_F32, S(3), a), C(MLCC_DTYPE_F32, S(3), b),
                         C(MLCC_DTYPE_F32, S(1), c)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(3));
  CHECK_OK(run(MLCC_OP_MAX, 13, in, 3, &out, 1, NULL, 0));
  EXPECT_F32(out, NAN, NAN, 3);
  mlcc_value_t* out2 = O(MLCC_DTYPE_F32, S(3));
  CHECK_OK(run(MLCC_OP_MIN, 13, in, 3, &out2, 1, NULL, 0));
  EXPECT_F32(out2, NAN, NAN, 2);
  mlcc_value_t* out3 = O(MLCC_DTYPE_F32, S(3));
  CHECK_OK(run(MLCC_OP_MEAN, 13, in + 1, 2, &out3, 1, NULL, 0));
  EXPECT_F32(out3, 1.25f, NAN, 2.75f);
  int32_t i[3] = {-5, 7, 0}, j[3] = {3, -9, 0};
  mlcc_value_t* in4[2] = {C(MLCC_DTYPE_I32, S(3), i), C(MLCC_DTYPE_I32, S(3), j)};
  mlcc_value_t* out4 = O(MLCC_DTYPE_I32, S(3));
  CHECK_OK(run(MLCC_OP_MAX, 13, in4, 2, &out4, 1, NULL, 0));
  EXPECT_INTS(out4, 3, 7, 0);
  end();
}

static void test_compare_logic_where(void) {
  begin();
  float a[4] = {1, 2, 3, NAN}, b[1] = {2};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_F32, S(4), a), C(MLCC_DTYPE_F32, S(1), b)};
  mlcc_value_t* lt = O(MLCC_DTYPE_BOOL, S(4));
  CHECK_OK(run(MLCC_OP_LESS, 13, in, 2, &lt, 1, NULL, 0));
  EXPECT_INTS(lt, 1, 0, 0, 0);
  mlcc_value_t* ge = O(MLCC_DTYPE_BOOL, S(4));
  CHECK_OK(run(MLCC_OP_GREATER_EQUAL, 16, in, 2, &ge, 1, NULL, 0));
  EXPECT_INTS(ge, 0, 1, 1, 0);
  int64_t x[3] = {-1, 5, 7}, y[3] = {-1, 4, 8};
  mlcc_value_t* in2[2] = {C(MLCC_DTYPE_I64, S(3), x), C(MLCC_DTYPE_I64, S(3), y)};
  mlcc_value_t* eq = O(MLCC_DTYPE_BOOL, S(3));
  CHECK_OK(run(MLCC_OP_EQUAL, 13, in2, 2, &eq, 1, NULL, 0));
  EXPECT_INTS(eq, 1, 0, 0);
  uint8_t p[4] = {0, 0, 1, 1}, q[4] = {0, 1, 0, 1};
  mlcc_value_t* in3[2] = {C(MLCC_DTYPE_BOOL, S(4), p), C(MLCC_DTYPE_BOOL, S(4), q)};
  mlcc_value_t *o_and = O(MLCC_DTYPE_BOOL, S(4)), *o_or = O(MLCC_DTYPE_BOOL, S(4)),
               *o_xor = O(MLCC_DTYPE_BOOL, S(4)), *o_not = O(MLCC_DTYPE_BOOL, S(4));
  CHECK_OK(run(MLCC_OP_AND, 7, in3, 2, &o_and, 1, NULL, 0));
  CHECK_OK(run(MLCC_OP_OR, 7, in3, 2, &o_or, 1, NULL, 0));
  CHECK_OK(run(MLCC_OP_XOR, 7, in3, 2, &o_xor, 1, NULL, 0));
  CHECK_OK(run(MLCC_OP_NOT, 1, in3, 1, &o_not, 1, NULL, 0));
  EXPECT_INTS(o_and, 0, 0, 0, 1);
  EXPECT_INTS(o_or, 0, 1, 1, 1);
  EXPECT_INTS(o_xor, 0, 1, 1, 0);
  EXPECT_INTS(o_not, 1, 1, 0, 0);
  // Where with a broadcast condition [2,1] and a scalar y.
  uint8_t cond[2] = {1, 0};
  float wx[4] = {1, 2, 3, 4}, wy = -1;
  mlcc_value_t* in4[3] = {C(MLCC_DTYPE_BOOL, S(2, 1), cond), C(MLCC_DTYPE_F32, S(2, 2), wx),
                          C(MLCC_DTYPE_F32, S0, &wy)};
  mlcc_value_t* w = O(MLCC_DTYPE_F32, S(2, 2));
  CHECK_OK(run(MLCC_OP_WHERE, 16, in4, 3, &w, 1, NULL, 0));
  EXPECT_F32(w, 1, 2, -1, -1);
  // Bool Equal and int Where.
  mlcc_value_t* beq = O(MLCC_DTYPE_BOOL, S(4));
  CHECK_OK(run(MLCC_OP_EQUAL, 13, in3, 2, &beq, 1, NULL, 0));
  EXPECT_INTS(beq, 1, 0, 0, 1);
  int64_t ia[4] = {1, 2, 3, 4}, ib[4] = {-1, -2, -3, -4};
  mlcc_value_t* in5[3] = {C(MLCC_DTYPE_BOOL, S(4), q), C(MLCC_DTYPE_I64, S(4), ia),
                          C(MLCC_DTYPE_I64, S(4), ib)};
  mlcc_value_t* w2 = O(MLCC_DTYPE_I64, S(4));
  CHECK_OK(run(MLCC_OP_WHERE, 16, in5, 3, &w2, 1, NULL, 0));
  EXPECT_INTS(w2, -1, 2, -3, 4);
  end();
}

static void test_cast(void) {
  begin();
  float a[5] = {1.7f, -1.7f, 2.5f, 0.0f, -0.5f};
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(5), a);
  mlcc_value_t* o_i32 = O(MLCC_DTYPE_I32, S(5));
  mlcc_attr_t to_i32 = A_int("to", MLCC_DTYPE_I32);
  CHECK_OK(run(MLCC_OP_CAST, 13, &in, 1, &o_i32, 1, &to_i32, 1));
  EXPECT_INTS(o_i32, 1, -1, 2, 0, 0);
  mlcc_value_t* o_b = O(MLCC_DTYPE_BOOL, S(5));
  mlcc_attr_t to_b = A_int("to", MLCC_DTYPE_BOOL);
  CHECK_OK(run(MLCC_OP_CAST, 13, &in, 1, &o_b, 1, &to_b, 1));
  EXPECT_INTS(o_b, 1, 1, 1, 0, 1);
  int64_t big[3] = {(int64_t)1 << 40, -3, 0};
  mlcc_value_t* in2 = C(MLCC_DTYPE_I64, S(3), big);
  mlcc_value_t* o_f = O(MLCC_DTYPE_F64, S(3));
  mlcc_attr_t to_f64 = A_int("to", MLCC_DTYPE_F64);
  CHECK_OK(run(MLCC_OP_CAST, 13, &in2, 1, &o_f, 1, &to_f64, 1));
  if (is_const(o_f)) {
    const double* d = o_f->data;
    CHECK(d[0] == 1099511627776.0 && d[1] == -3.0 && d[2] == 0.0);
  }
  uint8_t bb[2] = {1, 0};
  mlcc_value_t* in3 = C(MLCC_DTYPE_BOOL, S(2), bb);
  mlcc_value_t* o_bf = O(MLCC_DTYPE_F32, S(2));
  mlcc_attr_t to_f32 = A_int("to", MLCC_DTYPE_F32);
  CHECK_OK(run(MLCC_OP_CAST, 13, &in3, 1, &o_bf, 1, &to_f32, 1));
  EXPECT_F32(o_bf, 1, 0);
  int32_t neg[2] = {-1, 300};
  mlcc_value_t* in4 = C(MLCC_DTYPE_I32, S(2), neg);
  mlcc_value_t* o_u8 = O(MLCC_DTYPE_U8, S(2));
  mlcc_attr_t to_u8 = A_int("to", MLCC_DTYPE_U8);
  CHECK_OK(run(MLCC_OP_CAST, 13, &in4, 1, &o_u8, 1, &to_u8, 1));
  EXPECT_INTS(o_u8, 255, 44);  // wraps like numpy astype
  end();
}

static void test_clip(void) {
  begin();
  float x[5] = {-3, -0.5f, 0.5f, 3, NAN};
  // Opset 6: attributes.
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(5), x);
  mlcc_value_t* o1 = O(MLCC_DTYPE_F32, S(5));
  mlcc_attr_t at[2] = {A_float("min", -1), A_float("max", 1)};
  CHECK_OK(run(MLCC_OP_CLIP, 6, &in, 1, &o1, 1, at, 2));
  EXPECT_F32(o1, -1, -0.5f, 0.5f, 1, NAN);
  // Opset 6, only max.
  mlcc_value_t* o2 = O(MLCC_DTYPE_F32, S(5));
  CHECK_OK(run(MLCC_OP_CLIP, 6, &in, 1, &o2, 1, at + 1, 1));
  EXPECT_F32(o2, -3, -0.5f, 0.5f, 1, NAN);
  // Opset 13: min input only (max omitted).
  float lo = 0;
  mlcc_value_t* in3[3] = {in, C(MLCC_DTYPE_F32, S0, &lo), NULL};
  mlcc_value_t* o3 = O(MLCC_DTYPE_F32, S(5));
  CHECK_OK(run(MLCC_OP_CLIP, 13, in3, 3, &o3, 1, NULL, 0));
  EXPECT_F32(o3, 0, 0, 0.5f, 3, NAN);
  // Opset 13, int32, max only.
  int32_t xi[4] = {-7, 0, 5, 100}, hi = 6;
  mlcc_value_t* in4[3] = {C(MLCC_DTYPE_I32, S(4), xi), NULL, C(MLCC_DTYPE_I32, S0, &hi)};
  mlcc_value_t* o4 = O(MLCC_DTYPE_I32, S(4));
  CHECK_OK(run(MLCC_OP_CLIP, 13, in4, 3, &o4, 1, NULL, 0));
  EXPECT_INTS(o4, -7, 0, 5, 6);
  // No bounds at all: identity.
  mlcc_value_t* o5 = O(MLCC_DTYPE_F32, S(5));
  CHECK_OK(run(MLCC_OP_CLIP, 13, &in, 1, &o5, 1, NULL, 0));
  EXPECT_F32(o5, -3, -0.5f, 0.5f, 3, NAN);
  end();
}

static void test_transcendental_accuracy(void) {
  begin();
  enum { N = 81 };
  float x[N];
  for (int i = 0; i < N; ++i) x[i] = -20.0f + 0.5f * (float)i;
  mlcc_value_t* sg = unary_f32(MLCC_OP_SIGMOID, 13, x, N, NULL, 0);
  mlcc_value_t* er = unary_f32(MLCC_OP_ERF, 13, x, N, NULL, 0);
  mlcc_value_t* th = unary_f32(MLCC_OP_TANH, 13, x, N, NULL, 0);
  mlcc_value_t* sp = unary_f32(MLCC_OP_SOFTPLUS, 1, x, N, NULL, 0);
  if (is_const(sg) && is_const(er) && is_const(th) && is_const(sp)) {
    const float *ys = sg->data, *ye = er->data, *yt = th->data, *yp = sp->data;
    for (int i = 0; i < N; ++i) {
      double xd = x[i];
      double rs = 1.0 / (1.0 + exp(-xd)), re = erf(xd), rt = tanh(xd), rp = log1p(exp(xd));
      CHECK_NEAR(ys[i], rs, 1e-5 * fabs(rs) + 1e-30);
      CHECK_NEAR(ye[i], re, 1e-5 * fabs(re) + 1e-30);
      CHECK_NEAR(yt[i], rt, 1e-5 * fabs(rt) + 1e-30);
      CHECK_NEAR(yp[i], rp, 1e-5 * fabs(rp) + 1e-30);
    }
  }
  // Extremes: no NaN from overflow.
  float big[4] = {-1000, 1000, -INFINITY, INFINITY};
  mlcc_value_t* sgb = unary_f32(MLCC_OP_SIGMOID, 13, big, 4, NULL, 0);
  EXPECT_F32(sgb, 0, 1, 0, 1);
  mlcc_value_t* spb = unary_f32(MLCC_OP_SOFTPLUS, 1, big, 4, NULL, 0);
  EXPECT_F32(spb, 0, 1000, 0, INFINITY);
  end();
}

static void test_unary_family(void) {
  begin();
  float x[6] = {-2, -0.5f, 0, 0.5f, 2.5f, 3.5f};
  EXPECT_F32(unary_f32(MLCC_OP_RELU, 14, x, 6, NULL, 0), 0, 0, 0, 0.5f, 2.5f, 3.5f);
  EXPECT_F32(unary_f32(MLCC_OP_LEAKY_RELU, 16, x, 6, NULL, 0), -0.02f, -0.005f, 0, 0.5f, 2.5f,
             3.5f);
  mlcc_attr_t alpha = A_float("alpha", 2.0f);
  EXPECT_F32(unary_f32(MLCC_OP_ELU, 6, x, 6, &alpha, 1), 2 * (expf(-2) - 1),
             2 * (expf(-0.5f) - 1), 0, 0.5f, 2.5f, 3.5f);
  const float sa = 1.67326319217681884765625f, sgm = 1.05070102214813232421875f;
  EXPECT_F32(unary_f32(MLCC_OP_SELU, 6, x, 6, NULL, 0), sgm * sa * (expf(-2) - 1),
             sgm * sa * (expf(-0.5f) - 1), 0, sgm * 0.5f, sgm * 2.5f, sgm * 3.5f);
  EXPECT_F32(unary_f32(MLCC_OP_CELU, 12, x, 6, NULL, 0), expf(-2) - 1, expf(-0.5f) - 1, 0,
             0.5f, 2.5f, 3.5f);
  EXPECT_F32(unary_f32(MLCC_OP_HARD_SIGMOID, 6, x, 6, NULL, 0), 0.1f, 0.4f, 0.5f, 0.6f, 1, 1);
  EXPECT_F32(unary_f32(MLCC_OP_HARD_SWISH, 14, x, 6, NULL, 0), -2 * (0.5f - 2.0f / 6),
             -0.5f * (0.5f - 0.5f / 6), 0, 0.5f * (0.5f + 0.5f / 6), 2.5f * (0.5f + 2.5f / 6),
             3.5f);
  EXPECT_F32(unary_f32(MLCC_OP_ROUND, 11, x, 6, NULL, 0), -2, -0.0f, 0, 0, 2, 4);
  EXPECT_F32(unary_f32(MLCC_OP_FLOOR, 13, x, 6, NULL, 0), -2, -1, 0, 0, 2, 3);
  EXPECT_F32(unary_f32(MLCC_OP_CEIL, 13, x, 6, NULL, 0), -2, -0.0f, 0, 1, 3, 4);
  EXPECT_F32(unary_f32(MLCC_OP_SIGN, 13, x, 6, NULL, 0), -1, -1, 0, 1, 1, 1);
  EXPECT_F32(unary_f32(MLCC_OP_ABS, 13, x, 6, NULL, 0), 2, 0.5f, 0, 0.5f, 2.5f, 3.5f);
  EXPECT_F32(unary_f32(MLCC_OP_NEG, 13, x, 6, NULL, 0), 2, 0.5f, 0, -0.5f, -2.5f, -3.5f);
  EXPECT_F32(unary_f32(MLCC_OP_SOFTSIGN, 1, x, 6, NULL, 0), -2.0f / 3, -0.5f / 1.5f, 0,
             0.5f / 1.5f, 2.5f / 3.5f, 3.5f / 4.5f);
  EXPECT_F32(unary_f32(MLCC_OP_THRESHOLDED_RELU, 10, x, 6, NULL, 0), 0, 0, 0, 0, 2.5f, 3.5f);
  EXPECT_F32(unary_f32(MLCC_OP_RECIPROCAL, 13, x, 6, NULL, 0), -0.5f, -2, INFINITY, 2, 0.4f,
             1 / 3.5f);
  float p[4] = {0.25f, 1, 4, 9};
  EXPECT_F32(unary_f32(MLCC_OP_SQRT, 13, p, 4, NULL, 0), 0.5f, 1, 2, 3);
  EXPECT_F32(unary_f32(MLCC_OP_LOG, 13, p, 4, NULL, 0), logf(0.25f), 0, logf(4), logf(9));
  EXPECT_F32(unary_f32(MLCC_OP_EXP, 13, p, 4, NULL, 0), expf(0.25f), expf(1), expf(4), expf(9));
  EXPECT_F32(unary_f32(MLCC_OP_SIN, 7, p, 4, NULL, 0), sinf(0.25f), sinf(1), sinf(4), sinf(9));
  EXPECT_F32(unary_f32(MLCC_OP_COS, 7, p, 4, NULL, 0), cosf(0.25f), cosf(1), cosf(4), cosf(9));
  // PRelu with a broadcast slope.
  float slope[1] = {0.25f};
  mlcc_value_t* pin[2] = {C(MLCC_DTYPE_F32, S(6), x), C(MLCC_DTYPE_F32, S(1), slope)};
  mlcc_value_t* pout = O(MLCC_DTYPE_F32, S(6));
  CHECK_OK(run(MLCC_OP_PRELU, 16, pin, 2, &pout, 1, NULL, 0));
  EXPECT_F32(pout, -0.5f, -0.125f, 0, 0.5f, 2.5f, 3.5f);
  // Pow: float base with int64 exponent, and an int base.
  float base[3] = {2, -3, 0.5f};
  int64_t ex[3] = {3, 2, -1};
  mlcc_value_t* pw[2] = {C(MLCC_DTYPE_F32, S(3), base), C(MLCC_DTYPE_I64, S(3), ex)};
  mlcc_value_t* pwo = O(MLCC_DTYPE_F32, S(3));
  CHECK_OK(run(MLCC_OP_POW, 15, pw, 2, &pwo, 1, NULL, 0));
  EXPECT_F32(pwo, 8, 9, 2);
  int32_t ib[3] = {2, -3, 7}, ie[3] = {10, 3, 0};
  mlcc_value_t* pwi[2] = {C(MLCC_DTYPE_I32, S(3), ib), C(MLCC_DTYPE_I32, S(3), ie)};
  mlcc_value_t* pwio = O(MLCC_DTYPE_I32, S(3));
  CHECK_OK(run(MLCC_OP_POW, 15, pwi, 2, &pwio, 1, NULL, 0));
  EXPECT_INTS(pwio, 1024, -27, 1);
  // Integer unary ops.
  int8_t xi[4] = {-128, -5, 0, 7};
  mlcc_value_t* ii = C(MLCC_DTYPE_I8, S(4), xi);
  mlcc_value_t *oa = O(MLCC_DTYPE_I8, S(4)), *on = O(MLCC_DTYPE_I8, S(4)),
               *os = O(MLCC_DTYPE_I8, S(4)), *orl = O(MLCC_DTYPE_I8, S(4));
  CHECK_OK(run(MLCC_OP_ABS, 13, &ii, 1, &oa, 1, NULL, 0));
  CHECK_OK(run(MLCC_OP_NEG, 13, &ii, 1, &on, 1, NULL, 0));
  CHECK_OK(run(MLCC_OP_SIGN, 13, &ii, 1, &os, 1, NULL, 0));
  CHECK_OK(run(MLCC_OP_RELU, 14, &ii, 1, &orl, 1, NULL, 0));
  EXPECT_INTS(oa, -128, 5, 0, 7);
  EXPECT_INTS(on, -128, 5, 0, -7);
  EXPECT_INTS(os, -1, -1, 0, 1);
  EXPECT_INTS(orl, 0, 0, 0, 7);
  end();
}

static void test_unsupported_dtype(void) {
  begin();
  int32_t xi[2] = {1, 2};
  mlcc_value_t* in = C(MLCC_DTYPE_I32, S(2), xi);
  mlcc_value_t* out = O(MLCC_DTYPE_I32, S(2));
  mlcc_node_t* node = NULL;
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_SIGMOID, 13, "n", &in, 1, &out, 1, NULL, 0, &node));
  if (node != NULL) {
    mlcc_status_t st = mlcc_codegen_eval_node(G, node);
    CHECK(mlcc_status_code(st) == MLCC_STATUS_UNIMPLEMENTED);
    const char* msg = mlcc_status_message(st);
    CHECK(msg != NULL && strstr(msg, "Sigmoid") != NULL && strstr(msg, "int32") != NULL);
    mlcc_status_free(st);
  }
  end();
}

static void test_float64(void) {
  begin();
  double x[3] = {-1, 0.5, 3};
  mlcc_value_t* in = C(MLCC_DTYPE_F64, S(3), x);
  mlcc_value_t* o = O(MLCC_DTYPE_F64, S(3));
  CHECK_OK(run(MLCC_OP_TANH, 13, &in, 1, &o, 1, NULL, 0));
  if (is_const(o)) {
    for (int i = 0; i < 3; ++i) CHECK_NEAR(((const double*)o->data)[i], tanh(x[i]), 1e-15);
  }
  mlcc_value_t* o2 = O(MLCC_DTYPE_F64, S(3));
  CHECK_OK(run(MLCC_OP_ERF, 13, &in, 1, &o2, 1, NULL, 0));
  if (is_const(o2)) {
    for (int i = 0; i < 3; ++i) CHECK_NEAR(((const double*)o2->data)[i], erf(x[i]), 1e-15);
  }
  end();
}

int main(void) {
  RUN(test_add_broadcast);
  RUN(test_int_div_mod);
  RUN(test_max_min_nan_variadic);
  RUN(test_compare_logic_where);
  RUN(test_cast);
  RUN(test_clip);
  RUN(test_transcendental_accuracy);
  RUN(test_unary_family);
  RUN(test_unsupported_dtype);
  RUN(test_float64);
  return TEST_EXIT();
}

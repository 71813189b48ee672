// SPDX-License-Identifier: Apache-2.0
// Tests of the com.microsoft int8 emitters (targets/kernels/qelementwise.c)
// and their inference (ir/ops/qelementwise.c): one-node graphs with constant
// inputs evaluated through the host JIT (mlcc_codegen_eval_node). Expected
// values computed with numpy in float32 the way the kernels' comments state:
// Add / Mul / Concat as DequantizeLinear -> op -> QuantizeLinear
// ((q - z).astype(f32) * s, the op, np.rint(x / s) + z clipped), the pools as
// np.rint(f32(acc) * f32(xs / f32(ys * n))) + yz clipped, acc the int64 sum
// of x - xz over the window.
#include <stdint.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "targets/kernels/kernels.h"
#include "targets/kernels/pack.h"
#include "test.h"

#include "targets/emit/emit_test_util.h"


#define U8 MLCC_DTYPE_U8
#define I8 MLCC_DTYPE_I8
#define F32 MLCC_DTYPE_F32

static void test_qlinear_add(void) {
  begin();
  // uint8 A [2,9] + B [1,9] (rows broadcast): one 8-lane vector and a
  // scalar tail per row on AVX2.
  uint8_t a[18] = {189, 216, 27, 41,  117, 142, 194, 94, 9,
                   55,  116, 98, 234, 109, 163, 156, 23, 188};
  uint8_t b[9] = {12, 3, 149, 65, 93, 154, 40, 21, 179};
  float as = 0.02f, bs = 0.03f, cs = 0.04f;
  uint8_t az = 128, bz = 90, cz = 100;
  mlcc_value_t* in[8] = {C(U8, S(2, 9), a), C(F32, S0, &as), C(U8, S0, &az),  C(U8, S(1, 9), b),
                         C(F32, S0, &bs),   C(U8, S0, &bz),  C(F32, S0, &cs), C(U8, S0, &cz)};
  mlcc_value_t* out = O(U8, S(2, 9));
  CHECK_OK(run(MLCC_OP_QLINEAR_ADD, 1, in, 8, &out, 1, NULL, 0));
  EXPECT_INTS(out, 72, 79, 94, 38, 97, 155, 95, 31, 107, 5, 29, 129, 134, 93, 166, 76, 0, 197);
  // The fused Relu of quant-fuse: a clamp at the output zero point.
  mlcc_attr_t relu = A_int(MLCC_QACT_ATTR, 1);
  mlcc_value_t* out2 = O(U8, S(2, 9));
  CHECK_OK(run(MLCC_OP_QLINEAR_ADD, 1, in, 8, &out2, 1, &relu, 1));
  EXPECT_INTS(out2, 100, 100, 100, 100, 100, 155, 100, 100, 107, 100, 100, 129, 134, 100, 166, 100,
              100, 197);
  // A per-axis scale is refused by name.
  float s2[2] = {0.1f, 0.2f};
  mlcc_value_t* bad[8] = {C(U8, S(2, 9), a), C(F32, S(2), s2), C(U8, S0, &az),  C(U8, S(1, 9), b),
                          C(F32, S0, &bs),   C(U8, S0, &bz),   C(F32, S0, &cs), C(U8, S0, &cz)};
  mlcc_value_t* out3 = O(U8, S(2, 9));
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_QLINEAR_ADD, 1, "bad", bad, 8, &out3, 1, NULL, 0, &n));
  if (n != NULL)
    CHECK_STATUS(mlcc_op_desc(MLCC_OP_QLINEAR_ADD)->infer(n), MLCC_STATUS_UNIMPLEMENTED);
  end();
}

static void test_qlinear_mul(void) {
  begin();
  // int8 A [3,1] * B [1,4] -> [3,4], saturating at -128.
  int8_t a[3] = {127, 46, 85}, b[4] = {-22, -119, 38, 17};
  float as = 0.05f, bs = 0.04f, cs = 0.06f;
  int8_t az = -3, bz = 7, cz = -10;
  mlcc_value_t* in[8] = {C(I8, S(3, 1), a), C(F32, S0, &as), C(I8, S0, &az),  C(I8, S(1, 4), b),
                         C(F32, S0, &bs),   C(I8, S0, &bz),  C(F32, S0, &cs), C(I8, S0, &cz)};
  mlcc_value_t* out = O(I8, S(3, 4));
  CHECK_OK(run(MLCC_OP_QLINEAR_MUL, 1, in, 8, &out, 1, NULL, 0));
  EXPECT_INTS(out, -128, -128, 124, 33, -57, -128, 41, 6, -95, -128, 81, 19);
  end();
}

static void test_qlinear_global_average_pool(void) {
  begin();
  uint8_t x[12] = {191, 155, 124, 1, 178, 45, 122, 42, 147, 118, 104, 145};
  float xs = 0.03f, ys = 0.011f;
  uint8_t xz = 120, yz = 128;
  // NCHW [1,2,2,3]: sums -26 and -42 over 6 elements.
  mlcc_value_t* in[5] = {C(U8, S(1, 2, 2, 3), x), C(F32, S0, &xs), C(U8, S0, &xz), C(F32, S0, &ys),
                         C(U8, S0, &yz)};
  mlcc_value_t* out = O(U8, S(1, 2, 1, 1));
  CHECK_OK(run(MLCC_OP_QLINEAR_GLOBAL_AVERAGE_POOL, 1, in, 5, &out, 1, NULL, 0));
  EXPECT_INTS(out, 116, 109);
  // channels_last: the same bytes as NHWC [1,2,3,2], sums 146 and -214.
  mlcc_value_t* in2[5] = {C(U8, S(1, 2, 3, 2), x), C(F32, S0, &xs), C(U8, S0, &xz), C(F32, S0, &ys),
                          C(U8, S0, &yz)};
  mlcc_attr_t cl = A_int("channels_last", 1);
  mlcc_value_t* out2 = O(U8, S(1, 1, 1, 2));
  CHECK_OK(run(MLCC_OP_QLINEAR_GLOBAL_AVERAGE_POOL, 1, in2, 5, &out2, 1, &cl, 1));
  EXPECT_INTS(out2, 194, 31);
  end();
}

static void test_qlinear_average_pool(void) {
  begin();
  // int8 [1,1,3,3], 2x2 window, stride 1, pads 1: the border windows divide
  // by their in-bounds count (count_include_pad 0).
  int8_t x[9] = {-92, -13, 56, 107, -72, 80, -41, -26, 78};
  float xs = 0.02f, ys = 0.013f;
  int8_t xz = -5, yz = 3;
  mlcc_value_t* in[5] = {C(I8, S(1, 1, 3, 3), x), C(F32, S0, &xs), C(I8, S0, &xz), C(F32, S0, &ys),
                         C(I8, S0, &yz)};
  static const int64_t k[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
  mlcc_attr_t attrs[2] = {A_ints("kernel_shape", k, 2), A_ints("pads", pads, 4)};
  mlcc_value_t* out = O(I8, S(1, 1, 4, 4));
  CHECK_OK(run(MLCC_OP_QLINEAR_AVERAGE_POOL, 1, in, 5, &out, 1, attrs, 2));
  EXPECT_INTS(out, -128, -70, 44, 97, 22, -16, 30, 115, 61, -2, 34, 127, -52, -41, 51, 127);
  // count_include_pad with a ceil_mode window past the padded input: the
  // divisor differs between ONNX AveragePool and onnxruntime, so refused.
  static const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1};
  mlcc_attr_t at2[5] = {A_ints("kernel_shape", k3, 2), A_ints("strides", s2, 2),
                        A_ints("pads", p1, 4), A_int("ceil_mode", 1),
                        A_int("count_include_pad", 1)};
  int8_t x2[16] = {0};
  mlcc_value_t* in2[5] = {C(I8, S(1, 1, 4, 4), x2), C(F32, S0, &xs), C(I8, S0, &xz),
                          C(F32, S0, &ys), C(I8, S0, &yz)};
  mlcc_value_t* out2 = O(I8, S(1, 1, 3, 3));
  mlcc_node_t* n = NULL;
  CHECK_OK(
      mlcc_graph_add_node(G, MLCC_OP_QLINEAR_AVERAGE_POOL, 1, "p", in2, 5, &out2, 1, at2, 5, &n));
  if (n != NULL) {
    CHECK_STATUS(mlcc_op_desc(MLCC_OP_QLINEAR_AVERAGE_POOL)->infer(n), MLCC_STATUS_UNIMPLEMENTED);
  }
  end();
}

static void test_qlinear_concat(void) {
  begin();
  uint8_t x0[2] = {52, 62}, x1[3] = {91, 165, 220};
  float ys = 0.03f, s0 = 0.05f, s1 = 0.02f;
  uint8_t yz = 128, z0 = 10, z1 = 200;
  mlcc_value_t* in[8] = {C(F32, S0, &ys), C(U8, S0, &yz),     C(U8, S(1, 2), x0), C(F32, S0, &s0),
                         C(U8, S0, &z0),  C(U8, S(1, 3), x1), C(F32, S0, &s1),    C(U8, S0, &z1)};
  mlcc_attr_t axis = A_int("axis", 1);
  mlcc_value_t* out = O(U8, S(1, 5));
  CHECK_OK(run(MLCC_OP_QLINEAR_CONCAT, 1, in, 8, &out, 1, &axis, 1));
  EXPECT_INTS(out, 198, 215, 55, 105, 141);
  // Not a whole number of (X, X_scale, X_zero_point) triples.
  mlcc_value_t* out2 = O(U8, S(1, 5));
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_QLINEAR_CONCAT, 1, "c", in, 7, &out2, 1, &axis, 1, &n));
  if (n != NULL)
    CHECK_STATUS(mlcc_op_desc(MLCC_OP_QLINEAR_CONCAT)->infer(n), MLCC_STATUS_INVALID_MODEL);
  end();
}

int main(void) {
  RUN(test_qlinear_add);
  RUN(test_qlinear_mul);
  RUN(test_qlinear_global_average_pool);
  RUN(test_qlinear_average_pool);
  RUN(test_qlinear_concat);
  return TEST_EXIT();
}

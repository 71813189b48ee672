// SPDX-License-Identifier: Apache-2.0
// Tests of the quantization emitters (targets/kernels/quant.c) and their inference
// (ir/ops/quant.c): one-node graphs with constant inputs evaluated through
// the host JIT (mlcc_codegen_eval_node). Expected values are worked by hand
// (round half to even, saturation) or computed with numpy (integer
// contractions: np.matmul of zero-point-shifted int64 operands; convolutions:
// a direct loop over an x_zero_point-padded input; requantization in float32
// as np.clip(np.rint(acc * ((s_a * s_b) / s_y)) + zp, lo, hi)); the
// DynamicQuantizeLinear case is test_dynamicquantizelinear of the ONNX
// backend node tests.
#include <stdint.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "targets/codegen/stack.h"
#include "targets/kernels/kernels.h"
#include "test.h"

#include "targets/emit/emit_test_util.h"


static void test_quantize_linear(void) {
  begin();
  // Per-tensor int8: ties go to even, then +zp, then saturate.
  float x[8] = {0.25f, 0.75f, 1.25f, -0.25f, -0.75f, 150.f, -150.f, 1.f};
  float s = 0.5f;
  int8_t z = 1;
  mlcc_value_t* in[3] = {C(MLCC_DTYPE_F32, S(8), x), C(MLCC_DTYPE_F32, S0, &s),
                         C(MLCC_DTYPE_I8, S0, &z)};
  mlcc_value_t* out = O(MLCC_DTYPE_I8, S(8));
  CHECK_OK(run(MLCC_OP_QUANTIZE_LINEAR, 13, in, 3, &out, 1, NULL, 0));
  EXPECT_INTS(out, 1, 3, 3, 1, -1, 127, -128, 3);

  // Per-axis uint8 along axis 1 of [2,2,2].
  float x2[8] = {1, 2, 3, 4, 5, 6, -100, 20};
  float s2[2] = {1, 2};
  uint8_t z2[2] = {10, 250};
  mlcc_value_t* in2[3] = {C(MLCC_DTYPE_F32, S(2, 2, 2), x2), C(MLCC_DTYPE_F32, S(2), s2),
                          C(MLCC_DTYPE_U8, S(2), z2)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_U8, S(2, 2, 2));
  mlcc_attr_t ax = A_int("axis", 1);
  CHECK_OK(run(MLCC_OP_QUANTIZE_LINEAR, 13, in2, 3, &out2, 1, &ax, 1));
  EXPECT_INTS(out2, 11, 12, 252, 252, 15, 16, 200, 255);

  // int32 input, no zero point: uint8 output.
  int32_t x3[3] = {-5, 7, 1000};
  float s3 = 2.f;
  mlcc_value_t* in3[2] = {C(MLCC_DTYPE_I32, S(3), x3), C(MLCC_DTYPE_F32, S(1), &s3)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_U8, S(3));
  CHECK_OK(run(MLCC_OP_QUANTIZE_LINEAR, 10, in3, 2, &out3, 1, NULL, 0));
  EXPECT_INTS(out3, 0, 4, 255);

  // Opset 10 has no per-axis form.
  mlcc_value_t* out4 = O(MLCC_DTYPE_U8, S(2, 2, 2));
  CHECK_STATUS(run(MLCC_OP_QUANTIZE_LINEAR, 10, in2, 3, &out4, 1, NULL, 0),
               MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_dequantize_linear(void) {
  begin();
  int8_t x[6] = {-128, 0, 127, 5, -5, 10};
  float s[3] = {0.5f, 1.f, 2.f};
  int8_t z[3] = {-128, 0, 1};
  mlcc_value_t* in[3] = {C(MLCC_DTYPE_I8, S(2, 3), x), C(MLCC_DTYPE_F32, S(3), s),
                         C(MLCC_DTYPE_I8, S(3), z)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(2, 3));
  mlcc_attr_t ax = A_int("axis", -1);
  CHECK_OK(run(MLCC_OP_DEQUANTIZE_LINEAR, 13, in, 3, &out, 1, &ax, 1));
  EXPECT_F32(out, 0.f, 0.f, 252.f, 66.5f, -5.f, 18.f);

  int32_t x2[2] = {100000, -3};
  float s2 = 0.25f;
  mlcc_value_t* in2[2] = {C(MLCC_DTYPE_I32, S(2), x2), C(MLCC_DTYPE_F32, S0, &s2)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_F32, S(2));
  CHECK_OK(run(MLCC_OP_DEQUANTIZE_LINEAR, 10, in2, 2, &out2, 1, NULL, 0));
  EXPECT_F32(out2, 25000.f, -0.75f);

  // Scale and zero point of different lengths.
  uint8_t x3[4] = {1, 2, 3, 4};
  float s3[2] = {1, 1};
  uint8_t z3[1] = {0};
  mlcc_value_t* in3[3] = {C(MLCC_DTYPE_U8, S(2, 2), x3), C(MLCC_DTYPE_F32, S(2), s3),
                          C(MLCC_DTYPE_U8, S(1), z3)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_F32, S(2, 2));
  CHECK_STATUS(run(MLCC_OP_DEQUANTIZE_LINEAR, 13, in3, 3, &out3, 1, NULL, 0),
               MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_dynamic_quantize_linear(void) {
  begin();
  float x[6] = {0.f, 2.f, -3.f, -2.5f, 1.34f, 0.5f};
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(6), x);
  mlcc_value_t* outs[3] = {O(MLCC_DTYPE_U8, S(6)), O(MLCC_DTYPE_F32, S0), O(MLCC_DTYPE_U8, S0)};
  CHECK_OK(run(MLCC_OP_DYNAMIC_QUANTIZE_LINEAR, 11, &in, 1, outs, 3, NULL, 0));
  EXPECT_INTS(outs[0], 153, 255, 0, 26, 221, 179);
  EXPECT_F32(outs[1], 0.019607843831181526f);
  EXPECT_INTS(outs[2], 153);

  // All zeros: scale 1 (not 0/0), zero point 0.
  float z[3] = {0, 0, 0};
  mlcc_value_t* in2 = C(MLCC_DTYPE_F32, S(3), z);
  mlcc_value_t* outs2[3] = {O(MLCC_DTYPE_U8, S(3)), O(MLCC_DTYPE_F32, S0),
                            O(MLCC_DTYPE_U8, S0)};
  CHECK_OK(run(MLCC_OP_DYNAMIC_QUANTIZE_LINEAR, 11, &in2, 1, outs2, 3, NULL, 0));
  EXPECT_INTS(outs2[0], 0, 0, 0);
  EXPECT_F32(outs2[1], 1.f);
  EXPECT_INTS(outs2[2], 0);
  end();
}

static void test_matmul_integer(void) {
  begin();
  // A int8 [2,3,4] with per-row zero points [2,3,1]; B uint8 [4,3] with
  // per-column zero points [3]; batch broadcast of B.
  int8_t a[24] = {43, 78, -123, 78, -8, 3, 33, -55, 122, -115, -57, -30,
                  18, -24, -95, -117, -128, -116, -90, 127, -80, 39, 64, -68};
  uint8_t b[12] = {72, 111, 67, 249, 45, 229, 204, 216, 29, 100, 160, 126};
  int8_t az[6] = {42, 45, 41, -113, 117, 14};
  uint8_t bz[3] = {231, 69, 92};
  mlcc_value_t* in[4] = {C(MLCC_DTYPE_I8, S(2, 3, 4), a), C(MLCC_DTYPE_U8, S(4, 3), b),
                         C(MLCC_DTYPE_I8, S(2, 3, 1), az), C(MLCC_DTYPE_U8, S(3), bz)};
  mlcc_value_t* out = O(MLCC_DTYPE_I32, S(2, 3, 3));
  CHECK_OK(run(MLCC_OP_MATMUL_INTEGER, 10, in, 4, &out, 1, NULL, 0));
  EXPECT_INTS(out, 228, -21801, 16526, 21095, -12082, -7073, -3740, -13721, -19637, -19189,
              5648, 7648, 39040, -34217, -12415, 24788, -4660, -163);

  // A per-column zero point on A is not a valid layout.
  uint8_t bad[4] = {0, 0, 0, 0};
  mlcc_value_t* in2[3] = {C(MLCC_DTYPE_I8, S(2, 3, 4), a), C(MLCC_DTYPE_U8, S(4, 3), b),
                          C(MLCC_DTYPE_I8, S(4), bad)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_I32, S(2, 3, 3));
  CHECK_STATUS(run(MLCC_OP_MATMUL_INTEGER, 10, in2, 3, &out2, 1, NULL, 0),
               MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_qlinear_matmul(void) {
  begin();
  // a uint8 [2,2,3] per-tensor; b int8 [3,2] per-column; y int8.
  uint8_t a[12] = {225, 47, 16, 95, 173, 31, 222, 87, 58, 139, 229, 226};
  int8_t b[6] = {95, -50, -124, 71, 53, 69};
  float as = 0.02f, bs[2] = {0.01f, 0.03f}, ys = 0.5f;
  uint8_t az = 100;
  int8_t bz[2] = {-3, 5}, yz = -10;
  mlcc_value_t* in[8] = {C(MLCC_DTYPE_U8, S(2, 2, 3), a), C(MLCC_DTYPE_F32, S0, &as),
                         C(MLCC_DTYPE_U8, S0, &az),       C(MLCC_DTYPE_I8, S(3, 2), b),
                         C(MLCC_DTYPE_F32, S(2), bs),     C(MLCC_DTYPE_I8, S(2), bz),
                         C(MLCC_DTYPE_F32, S0, &ys),      C(MLCC_DTYPE_I8, S0, &yz)};
  mlcc_value_t* out = O(MLCC_DTYPE_I8, S(2, 2, 2));
  CHECK_OK(run(MLCC_OP_QLINEAR_MATMUL, 10, in, 8, &out, 1, NULL, 0));
  EXPECT_INTS(out, -4, -29, -15, -9, -6, -22, -12, 7);
  end();
}

static void test_conv_integer(void) {
  begin();
  // x uint8 [1,2,3,3], w int8 [2,1,2,2], group 2, pads 1, x_zp 3, w_zp per
  // output channel.
  uint8_t x[18] = {0, 9, 128, 85, 111, 238, 52, 135, 83, 75, 206, 39, 81, 30, 38, 71, 178, 148};
  int8_t w[8] = {-14, -85, 76, 76, -68, -113, -47, -91};
  uint8_t xz = 3;
  int8_t wz[2] = {1, -1};
  int64_t pads[4] = {1, 1, 1, 1};
  mlcc_attr_t attrs[2] = {A_int("group", 2), A_ints("pads", pads, 4)};
  mlcc_value_t* in[4] = {C(MLCC_DTYPE_U8, S(1, 2, 3, 3), x), C(MLCC_DTYPE_I8, S(2, 1, 2, 2), w),
                         C(MLCC_DTYPE_U8, S0, &xz), C(MLCC_DTYPE_I8, S(2), wz)};
  mlcc_value_t* out = O(MLCC_DTYPE_I32, S(1, 2, 4, 4));
  CHECK_OK(run(MLCC_OP_CONV_INTEGER, 10, in, 4, &out, 1, attrs, 2));
  EXPECT_INTS(out, -225, 225, 9825, 9375, 6408, 13779, 14885, 15750, -3377, 3057, -5930, 2475,
              -4214, -12087, -8860, -1200, -6480, -21582, -12578, -1656, -15084, -33578,
              -22025, -4022, -14856, -27128, -26829, -9015, -7616, -24156, -27965, -9715);
  end();
}

static void test_qlinear_conv(void) {
  begin();
  // x uint8 [1,1,4,4], w int8 [2,1,3,3] with per-channel scales, int32 bias,
  // strides 2, pads 1; y uint8.
  uint8_t x[16] = {204, 133, 129, 74, 129, 247, 60, 196, 3, 80, 238, 223, 21, 215, 216, 116};
  int8_t w[18] = {-34, 122, 115, 45, -26, -75, 111, -60, 14,
                  44,  -67, -48, 61, -78, 44,  113, 47,  37};
  float xs = 0.05f, ws[2] = {0.002f, 0.004f}, ys = 0.1f;
  uint8_t xz = 128, yz = 120;
  int8_t wz[2] = {0, 0};
  int32_t bias[2] = {1000, -2000};
  int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
  mlcc_attr_t attrs[2] = {A_ints("pads", pads, 4), A_ints("strides", strides, 2)};
  mlcc_value_t* in[9] = {C(MLCC_DTYPE_U8, S(1, 1, 4, 4), x), C(MLCC_DTYPE_F32, S0, &xs),
                         C(MLCC_DTYPE_U8, S0, &xz),          C(MLCC_DTYPE_I8, S(2, 1, 3, 3), w),
                         C(MLCC_DTYPE_F32, S(2), ws),        C(MLCC_DTYPE_I8, S(2), wz),
                         C(MLCC_DTYPE_F32, S0, &ys),         C(MLCC_DTYPE_U8, S0, &yz),
                         C(MLCC_DTYPE_I32, S(2), bias)};
  mlcc_value_t* out = O(MLCC_DTYPE_U8, S(1, 2, 2, 2));
  CHECK_OK(run(MLCC_OP_QLINEAR_CONV, 10, in, 9, &out, 1, attrs, 2));
  EXPECT_INTS(out, 120, 143, 149, 109, 113, 137, 116, 141);

  // Bias of the wrong length.
  mlcc_node_t* node = NULL;
  mlcc_value_t* in2[9];
  memcpy(in2, in, sizeof(in));
  in2[8] = C(MLCC_DTYPE_I32, S(1), bias);
  mlcc_value_t* out2 = O(MLCC_DTYPE_U8, S(1, 2, 2, 2));
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_QLINEAR_CONV, 10, "q", in2, 9, &out2, 1, attrs, 2,
                               &node));
  if (node != NULL) CHECK_STATUS(mlcc_op_desc(node->op)->infer(node), MLCC_STATUS_INVALID_MODEL);
  end();
}

// The integer kernels' parallel units and stack share reach the parallel
// entry and NAME_STACK_SIZE through the quant family's descriptor (kernels.h;
// codegen.c and stack.c do not name ops). Expected values from the shapes
// (targets/kernels/qgemm.h): packed rows 2*KH*Wp*C/group bytes (int16) plus
// int32 sums of 4*KH*Wp and 4*OW bytes plus 64, Wp = (OW-1)*stride + KW;
// one unit per (image, group, output row) from 2^20 MACs on.
static void test_conv_integer_descriptor(void) {
  begin();
  static uint8_t x[16 * 64 * 64];
  static int8_t w1[32 * 16], w3[32 * 16 * 9];
  const mlcc_emitter_t* e = mlcc_emitter(MLCC_OP_CONV_INTEGER);
  CHECK(e != NULL && e->parallel_units != NULL && e->stack_bytes != NULL);
  CHECK(e == mlcc_emitter(MLCC_OP_QLINEAR_CONV));
  mlcc_target_t t;
  memset(&t, 0, sizeof(t));
  t.arch = MLCC_ARCH_X86_64;
  t.vector_bytes = 32;
  // 1x1, 32x16 channels on 64x64: 2^21 MACs, no packing needed.
  mlcc_value_t* in1[2] = {C(MLCC_DTYPE_U8, S(1, 16, 64, 64), x),
                          C(MLCC_DTYPE_I8, S(32, 16, 1, 1), w1)};
  mlcc_value_t* out1 = O(MLCC_DTYPE_I32, S(1, 32, 64, 64));
  mlcc_node_t* n1 = NULL;
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_CONV_INTEGER, 10, "c1", in1, 2, &out1, 1, NULL, 0, &n1));
  if (n1 != NULL && e != NULL && e->parallel_units != NULL) {
    CHECK_EQ_INT(e->parallel_units(n1, &t), 64);
    CHECK_EQ_INT(mlcc_stack_node_bytes(n1), 2 * 1 * 64 * 16 + 4 * 1 * 64 + 4 * 64 + 64);
  }
  // 3x3 without the quant-pack layout: the reference loops run it unsplit,
  // but the stack bound still covers the fast path (OW 62, Wp 64).
  mlcc_value_t* in3[2] = {C(MLCC_DTYPE_U8, S(1, 16, 64, 64), x),
                          C(MLCC_DTYPE_I8, S(32, 16, 3, 3), w3)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_I32, S(1, 32, 62, 62));
  mlcc_node_t* n3 = NULL;
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_CONV_INTEGER, 10, "c3", in3, 2, &out3, 1, NULL, 0, &n3));
  if (n3 != NULL && e != NULL && e->parallel_units != NULL) {
    CHECK_EQ_INT(e->parallel_units(n3, &t), 0);
    CHECK_EQ_INT(mlcc_stack_node_bytes(n3), 2 * 3 * 64 * 16 + 4 * 3 * 64 + 4 * 62 + 64);
  }
  end();
}

int main(void) {
  RUN(test_quantize_linear);
  RUN(test_dequantize_linear);
  RUN(test_dynamic_quantize_linear);
  RUN(test_matmul_integer);
  RUN(test_qlinear_matmul);
  RUN(test_conv_integer);
  RUN(test_qlinear_conv);
  RUN(test_conv_integer_descriptor);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Tests of the data-movement emitters (targets/kernels/shape.c): tiny one-node
// graphs with constant inputs, evaluated through the host JIT
// (mlcc_codegen_eval_node); expected values by hand or pasted from numpy and
// the ONNX reference resize implementation.
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


//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static const int64_t IOTA[24] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
static const float FIOTA[24] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};

static void test_copy_and_dropout(void) {
  begin();
  int64_t shp[2] = {3, 2};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_I64, S(2, 3), IOTA), C(MLCC_DTYPE_I64, S(2), shp)};
  mlcc_value_t* out = O(MLCC_DTYPE_I64, S(3, 2));
  CHECK_OK(run(MLCC_OP_RESHAPE, 14, in, 2, &out, 1, NULL, 0));
  EXPECT_INTS(out, 0, 1, 2, 3, 4, 5);
  uint8_t bits[3] = {1, 0, 1};
  mlcc_value_t* bin = C(MLCC_DTYPE_BOOL, S(3), bits);
  mlcc_value_t* bout = O(MLCC_DTYPE_BOOL, S(3));
  CHECK_OK(run(MLCC_OP_IDENTITY, 14, &bin, 1, &bout, 1, NULL, 0));
  EXPECT_INTS(bout, 1, 0, 1);
  mlcc_value_t* din = C(MLCC_DTYPE_F32, S(2, 2), FIOTA);
  mlcc_value_t* douts[2] = {O(MLCC_DTYPE_F32, S(2, 2)), O(MLCC_DTYPE_BOOL, S(2, 2))};
  CHECK_OK(run(MLCC_OP_DROPOUT, 13, &din, 1, douts, 2, NULL, 0));
  EXPECT_F32(douts[0], 0, 1, 2, 3);
  EXPECT_INTS(douts[1], 1, 1, 1, 1);
  end();
}

static void test_concat_split(void) {
  begin();
  float a[2] = {1, 2}, b[4] = {3, 4, 5, 6};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_F32, S(2, 1), a), C(MLCC_DTYPE_F32, S(2, 2), b)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(2, 3));
  mlcc_attr_t ax = A_int("axis", -1);
  CHECK_OK(run(MLCC_OP_CONCAT, 13, in, 2, &out, 1, &ax, 1));
  EXPECT_F32(out, 1, 3, 4, 2, 5, 6);
  // Split 13 with a 'split' input [1,2] along axis 1 of [2,3].
  int64_t sizes[2] = {1, 2};
  mlcc_value_t* sin[2] = {C(MLCC_DTYPE_I64, S(2, 3), IOTA), C(MLCC_DTYPE_I64, S(2), sizes)};
  mlcc_value_t* souts[2] = {O(MLCC_DTYPE_I64, S(2, 1)), O(MLCC_DTYPE_I64, S(2, 2))};
  mlcc_attr_t ax1 = A_int("axis", 1);
  CHECK_OK(run(MLCC_OP_SPLIT, 13, sin, 2, souts, 2, &ax1, 1));
  EXPECT_INTS(souts[0], 0, 3);
  EXPECT_INTS(souts[1], 1, 2, 4, 5);
  // Split 11, equal parts along axis 0 of [6].
  mlcc_value_t* e_in = C(MLCC_DTYPE_I64, S(6), IOTA);
  mlcc_value_t* e_outs[3] = {O(MLCC_DTYPE_I64, S(2)), O(MLCC_DTYPE_I64, S(2)),
                             O(MLCC_DTYPE_I64, S(2))};
  CHECK_OK(run(MLCC_OP_SPLIT, 11, &e_in, 1, e_outs, 3, NULL, 0));
  EXPECT_INTS(e_outs[0], 0, 1);
  EXPECT_INTS(e_outs[1], 2, 3);
  EXPECT_INTS(e_outs[2], 4, 5);
  end();
}

static void test_slice(void) {
  begin();
  // a = arange(12).reshape(3,4); a[::-1, 3:0:-2] (numpy: [11,9,7,5,3,1]).
  int64_t starts[2] = {-1, 3}, ends[2] = {INT64_MIN, 0}, axes[2] = {0, 1}, steps[2] = {-1, -2};
  mlcc_value_t* in[5] = {C(MLCC_DTYPE_I64, S(3, 4), IOTA), C(MLCC_DTYPE_I64, S(2), starts),
                         C(MLCC_DTYPE_I64, S(2), ends), C(MLCC_DTYPE_I64, S(2), axes),
                         C(MLCC_DTYPE_I64, S(2), steps)};
  mlcc_value_t* out = O(MLCC_DTYPE_I64, S(3, 2));
  CHECK_OK(run(MLCC_OP_SLICE, 13, in, 5, &out, 1, NULL, 0));
  EXPECT_INTS(out, 11, 9, 7, 5, 3, 1);
  // Opset 1 attributes: a[1:1000, -3:-1] -> [[5,6],[9,10]]; axes omitted.
  int64_t s1[2] = {1, -3}, e1[2] = {1000, -1};
  mlcc_attr_t at[2] = {A_ints("starts", s1, 2), A_ints("ends", e1, 2)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_I64, S(2, 2));
  CHECK_OK(run(MLCC_OP_SLICE, 1, in, 1, &out2, 1, at, 2));
  EXPECT_INTS(out2, 5, 6, 9, 10);
  // Empty result: start beyond end with a positive step.
  int64_t s3[1] = {3}, e3[1] = {1};
  mlcc_value_t* in3[3] = {in[0], C(MLCC_DTYPE_I64, S(1), s3), C(MLCC_DTYPE_I64, S(1), e3)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_I64, S(0, 4));
  CHECK_OK(run(MLCC_OP_SLICE, 13, in3, 3, &out3, 1, NULL, 0));
  end();
}

static void test_gather(void) {
  begin();
  // data [2,4] = [[0,1,2,3],[4,5,6,7]], axis 1, indices [[-1,0],[5,1]]:
  // -1 wraps to 3, 5 is out of range and is clamped to 3 (never read OOB).
  int32_t idx[4] = {-1, 0, 5, 1};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_I64, S(2, 4), IOTA), C(MLCC_DTYPE_I32, S(2, 2), idx)};
  mlcc_value_t* out = O(MLCC_DTYPE_I64, S(2, 2, 2));
  mlcc_attr_t ax = A_int("axis", 1);
  CHECK_OK(run(MLCC_OP_GATHER, 13, in, 2, &out, 1, &ax, 1));
  EXPECT_INTS(out, 3, 0, 3, 1, 7, 4, 7, 5);
  // Scalar index on axis 0 of [3,2] floats.
  int64_t one = -2;
  mlcc_value_t* in2[2] = {C(MLCC_DTYPE_F32, S(3, 2), FIOTA), C(MLCC_DTYPE_I64, S0, &one)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_F32, S(2));
  CHECK_OK(run(MLCC_OP_GATHER, 13, in2, 2, &out2, 1, NULL, 0));
  EXPECT_F32(out2, 2, 3);
  // GatherElements axis 1: [[1,2],[3,4]], [[0,0],[1,0]] -> [[1,1],[4,3]].
  float d[4] = {1, 2, 3, 4};
  int64_t gi[4] = {0, 0, 1, -2};
  mlcc_value_t* in3[2] = {C(MLCC_DTYPE_F32, S(2, 2), d), C(MLCC_DTYPE_I64, S(2, 2), gi)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_F32, S(2, 2));
  CHECK_OK(run(MLCC_OP_GATHER_ELEMENTS, 13, in3, 2, &out3, 1, &ax, 1));
  EXPECT_F32(out3, 1, 1, 4, 3);
  end();
}

static void test_transpose_expand_tile(void) {
  begin();
  // [2,3,2] perm [1,0,2] -> [3,2,2].
  int64_t perm[3] = {1, 0, 2};
  mlcc_attr_t p = A_ints("perm", perm, 3);
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(2, 3, 2), FIOTA);
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(3, 2, 2));
  CHECK_OK(run(MLCC_OP_TRANSPOSE, 13, &in, 1, &out, 1, &p, 1));
  EXPECT_F32(out, 0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11);
  // Default perm reverses: [2,3] -> [3,2].
  mlcc_value_t* in2 = C(MLCC_DTYPE_I64, S(2, 3), IOTA);
  mlcc_value_t* out2 = O(MLCC_DTYPE_I64, S(3, 2));
  CHECK_OK(run(MLCC_OP_TRANSPOSE, 13, &in2, 1, &out2, 1, NULL, 0));
  EXPECT_INTS(out2, 0, 3, 1, 4, 2, 5);
  // Expand [3,1] -> [2,3,2].
  int64_t shape[3] = {2, 1, 2};
  mlcc_value_t* in3[2] = {C(MLCC_DTYPE_I64, S(3, 1), IOTA), C(MLCC_DTYPE_I64, S(3), shape)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_I64, S(2, 3, 2));
  CHECK_OK(run(MLCC_OP_EXPAND, 13, in3, 2, &out3, 1, NULL, 0));
  EXPECT_INTS(out3, 0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2);
  // Tile [[1,2],[3,4]] by (2,3) (numpy.tile).
  int64_t t[4] = {1, 2, 3, 4}, reps[2] = {2, 3};
  mlcc_value_t* in4[2] = {C(MLCC_DTYPE_I64, S(2, 2), t), C(MLCC_DTYPE_I64, S(2), reps)};
  mlcc_value_t* out4 = O(MLCC_DTYPE_I64, S(4, 6));
  CHECK_OK(run(MLCC_OP_TILE, 13, in4, 2, &out4, 1, NULL, 0));
  EXPECT_INTS(out4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4);
  end();
}

static void test_pad(void) {
  begin();
  mlcc_value_t* a = C(MLCC_DTYPE_I64, S(3, 4), IOTA);
  // numpy.pad(a, ((1,2),(2,1)), 'reflect').
  int64_t pads[4] = {1, 2, 2, 1};
  mlcc_value_t* in[2] = {a, C(MLCC_DTYPE_I64, S(4), pads)};
  mlcc_attr_t reflect = A_str("mode", "reflect");
  mlcc_value_t* out = O(MLCC_DTYPE_I64, S(6, 7));
  CHECK_OK(run(MLCC_OP_PAD, 13, in, 2, &out, 1, &reflect, 1));
  EXPECT_INTS(out, 6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2, 6, 5, 4, 5, 6, 7, 6, 10, 9, 8, 9,
              10, 11, 10, 6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2);
  // numpy.pad(a, ((1,0),(0,2)), 'edge').
  int64_t pads2[4] = {1, 0, 0, 2};
  mlcc_value_t* in2[2] = {a, C(MLCC_DTYPE_I64, S(4), pads2)};
  mlcc_attr_t edge = A_str("mode", "edge");
  mlcc_value_t* out2 = O(MLCC_DTYPE_I64, S(4, 6));
  CHECK_OK(run(MLCC_OP_PAD, 13, in2, 2, &out2, 1, &edge, 1));
  EXPECT_INTS(out2, 0, 1, 2, 3, 3, 3, 0, 1, 2, 3, 3, 3, 4, 5, 6, 7, 7, 7, 8, 9, 10, 11, 11, 11);
  // Constant with a value input and a negative (cropping) pad.
  int64_t pads3[4] = {0, -1, 1, 0};
  int64_t cv = -7;
  mlcc_value_t* in3[3] = {a, C(MLCC_DTYPE_I64, S(4), pads3), C(MLCC_DTYPE_I64, S0, &cv)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_I64, S(4, 3));
  CHECK_OK(run(MLCC_OP_PAD, 13, in3, 3, &out3, 1, NULL, 0));
  EXPECT_INTS(out3, 1, 2, 3, 5, 6, 7, 9, 10, 11, -7, -7, -7);
  // Opset 2 attributes on floats.
  int64_t pads4[2] = {1, 2};
  mlcc_attr_t at[2] = {A_ints("pads", pads4, 2), A_float("value", 0.5f)};
  mlcc_value_t* fin = C(MLCC_DTYPE_F32, S(2), FIOTA);
  mlcc_value_t* out4 = O(MLCC_DTYPE_F32, S(5));
  CHECK_OK(run(MLCC_OP_PAD, 2, &fin, 1, &out4, 1, at, 2));
  EXPECT_F32(out4, 0.5f, 0, 1, 0.5f, 0.5f);
  end();
}

static void test_resize(void) {
  begin();
  float x[4] = {1, 2, 3, 4};
  float roi[8] = {0, 0, 0, 0, 1, 1, 1, 1};
  // Nearest, asymmetric, scales [1,1,2,3] (values from the ONNX reference).
  float sc[4] = {1, 1, 2, 3};
  mlcc_attr_t at[2] = {A_str("mode", "nearest"),
                       A_str("coordinate_transformation_mode", "asymmetric")};
  mlcc_value_t* in[3] = {C(MLCC_DTYPE_F32, S(1, 1, 2, 2), x), C(MLCC_DTYPE_F32, S(8), roi),
                         C(MLCC_DTYPE_F32, S(4), sc)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(1, 1, 4, 6));
  CHECK_OK(run(MLCC_OP_RESIZE, 13, in, 3, &out, 1, at, 2));
  EXPECT_F32(out, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 4, 4);
  // Linear, half_pixel (default), scales [1,1,2,1.5] on [[1,2,3],[4,5,6]].
  float x2[6] = {1, 2, 3, 4, 5, 6};
  float sc2[4] = {1, 1, 2, 1.5f};
  mlcc_attr_t lin = A_str("mode", "linear");
  mlcc_value_t* in2[3] = {C(MLCC_DTYPE_F32, S(1, 1, 2, 3), x2), NULL,
                          C(MLCC_DTYPE_F32, S(4), sc2)};
  mlcc_value_t* out2 = O(MLCC_DTYPE_F32, S(1, 1, 4, 4));
  CHECK_OK(run(MLCC_OP_RESIZE, 13, in2, 3, &out2, 1, &lin, 1));
  EXPECT_F32(out2, 1.0f, 1.5f, 2.1666667461395264f, 2.8333332538604736f, 1.75f, 2.25f,
             2.9166667461395264f, 3.5833332538604736f, 3.25f, 3.75f, 4.416666507720947f,
             5.083333492279053f, 4.0f, 4.5f, 5.166666507720947f, 5.833333492279053f);
  // Cubic (A=-0.75), half_pixel, sizes [1,1,4,6].
  int64_t sizes[4] = {1, 1, 4, 6};
  mlcc_attr_t cub = A_str("mode", "cubic");
  mlcc_value_t* in3[4] = {in2[0], NULL, NULL, C(MLCC_DTYPE_I64, S(4), sizes)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_F32, S(1, 1, 4, 6));
  CHECK_OK(run(MLCC_OP_RESIZE, 13, in3, 4, &out3, 1, &cub, 1));
  expect_f32(out3,
             (const float[]){0.578125f, 0.875f, 1.351562f, 2.015625f, 2.492188f, 2.789062f,
                             1.574219f, 1.871094f, 2.347656f, 3.011719f, 3.488281f, 3.785156f,
                             3.214844f, 3.511719f, 3.988281f, 4.652344f, 5.128906f, 5.425781f,
                             4.210938f, 4.507812f, 4.984375f, 5.648438f, 6.125f, 6.421875f},
             24, 1e-5, 1e-5, __LINE__);
  // Nearest on int64 data (pure gather path).
  int64_t xi[2] = {7, 9};
  float sc4[1] = {2};
  mlcc_value_t* in4[3] = {C(MLCC_DTYPE_I64, S(2), xi), NULL, C(MLCC_DTYPE_F32, S(1), sc4)};
  mlcc_value_t* out4 = O(MLCC_DTYPE_I64, S(4));
  CHECK_OK(run(MLCC_OP_RESIZE, 13, in4, 3, &out4, 1, NULL, 0));
  EXPECT_INTS(out4, 7, 7, 9, 9);
  end();
}

static void test_shape_constant_range(void) {
  begin();
  mlcc_value_t* x = C(MLCC_DTYPE_F32, S(2, 3, 4), FIOTA);
  mlcc_value_t* sh = O(MLCC_DTYPE_I64, S(3));
  CHECK_OK(run(MLCC_OP_SHAPE, 13, &x, 1, &sh, 1, NULL, 0));
  EXPECT_INTS(sh, 2, 3, 4);
  mlcc_attr_t st = A_int("start", -2);
  mlcc_value_t* sh2 = O(MLCC_DTYPE_I64, S(2));
  CHECK_OK(run(MLCC_OP_SHAPE, 15, &x, 1, &sh2, 1, &st, 1));
  EXPECT_INTS(sh2, 3, 4);
  mlcc_value_t* sz = O(MLCC_DTYPE_I64, S0);
  CHECK_OK(run(MLCC_OP_SIZE, 13, &x, 1, &sz, 1, NULL, 0));
  EXPECT_INTS(sz, 24);
  // ConstantOfShape with an int32 value, and with the default float 0.
  int64_t dims[2] = {2, 2};
  int32_t val = 42;
  mlcc_attr_t v = {.name = "value", .kind = MLCC_ATTR_TENSOR, .t_dtype = MLCC_DTYPE_I32,
                   .t_shape = S(1), .t_data = &val};
  mlcc_value_t* d = C(MLCC_DTYPE_I64, S(2), dims);
  mlcc_value_t* cs = O(MLCC_DTYPE_I32, S(2, 2));
  CHECK_OK(run(MLCC_OP_CONSTANT_OF_SHAPE, 9, &d, 1, &cs, 1, &v, 1));
  EXPECT_INTS(cs, 42, 42, 42, 42);
  mlcc_value_t* cz = O(MLCC_DTYPE_F32, S(2, 2));
  CHECK_OK(run(MLCC_OP_CONSTANT_OF_SHAPE, 9, &d, 1, &cz, 1, NULL, 0));
  EXPECT_F32(cz, 0, 0, 0, 0);
  // Constant from a tensor attribute.
  float payload[3] = {1.5f, -2, 3};
  mlcc_attr_t cv = {.name = "value", .kind = MLCC_ATTR_TENSOR, .t_dtype = MLCC_DTYPE_F32,
                    .t_shape = S(3), .t_data = payload};
  mlcc_value_t* co = O(MLCC_DTYPE_F32, S(3));
  CHECK_OK(run(MLCC_OP_CONSTANT, 13, NULL, 0, &co, 1, &cv, 1));
  EXPECT_F32(co, 1.5f, -2, 3);
  // Range(1, 10, 3) int32 and Range(1, 0, -0.25) float.
  int32_t r0 = 1, r1 = 10, r2 = 3;
  mlcc_value_t* ri[3] = {C(MLCC_DTYPE_I32, S0, &r0), C(MLCC_DTYPE_I32, S0, &r1),
                         C(MLCC_DTYPE_I32, S0, &r2)};
  mlcc_value_t* ro = O(MLCC_DTYPE_I32, S(3));
  CHECK_OK(run(MLCC_OP_RANGE, 11, ri, 3, &ro, 1, NULL, 0));
  EXPECT_INTS(ro, 1, 4, 7);
  float f0 = 1, f1 = 0, f2 = -0.25f;
  mlcc_value_t* rf[3] = {C(MLCC_DTYPE_F32, S0, &f0), C(MLCC_DTYPE_F32, S0, &f1),
                         C(MLCC_DTYPE_F32, S0, &f2)};
  mlcc_value_t* rfo = O(MLCC_DTYPE_F32, S(4));
  CHECK_OK(run(MLCC_OP_RANGE, 11, rf, 3, &rfo, 1, NULL, 0));
  EXPECT_F32(rfo, 1, 0.75f, 0.5f, 0.25f);
  end();
}

static void test_bad_inputs_are_statuses(void) {
  begin();
  // Slice whose 'starts' is not a constant is UNIMPLEMENTED, not a crash.
  mlcc_value_t* x = C(MLCC_DTYPE_F32, S(4), FIOTA);
  mlcc_value_t* runtime = O(MLCC_DTYPE_I64, S(1));
  int64_t e[1] = {2};
  mlcc_value_t* in[3] = {x, runtime, C(MLCC_DTYPE_I64, S(1), e)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(2));
  mlcc_node_t* node = NULL;
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_SLICE, 13, "s", in, 3, &out, 1, NULL, 0, &node));
  if (node != NULL) {
    mlcc_status_t st = mlcc_codegen_eval_node(G, node);
    CHECK(st != NULL);
    mlcc_status_free(st);
  }
  // Transpose with a bad perm.
  int64_t perm[2] = {0, 0};
  mlcc_attr_t p = A_ints("perm", perm, 2);
  mlcc_value_t* y = C(MLCC_DTYPE_F32, S(2, 2), FIOTA);
  mlcc_value_t* yo = O(MLCC_DTYPE_F32, S(2, 2));
  CHECK_OK(mlcc_graph_add_node(G, MLCC_OP_TRANSPOSE, 13, "t", &y, 1, &yo, 1, &p, 1, &node));
  if (node != NULL) CHECK_STATUS(mlcc_codegen_eval_node(G, node), MLCC_STATUS_INVALID_MODEL);
  end();
}

int main(void) {
  RUN(test_copy_and_dropout);
  RUN(test_concat_split);
  RUN(test_slice);
  RUN(test_gather);
  RUN(test_transpose_expand_tile);
  RUN(test_pad);
  RUN(test_resize);
  RUN(test_shape_constant_range);
  RUN(test_bad_inputs_are_statuses);
  return TEST_EXIT();
}

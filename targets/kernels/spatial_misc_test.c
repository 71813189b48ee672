// SPDX-License-Identifier: Apache-2.0
// Tests of the sampling/misc spatial ops (ir/ops/spatial_misc.c inference,
// targets/kernels/spatial_misc.c emitters): tiny one-node graphs with
// constant inputs evaluated through the host JIT. Expected values by hand,
// from numpy.linalg.det, or from a numpy transcription of the ONNX/ORT
// GridSample and RoiAlign rules (cases the ONNX node suite does not cover:
// bicubic+border, reflection, RoiAlign max and opset 10, ...).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "test.h"

#include "targets/emit/emit_test_util.h"


// Adds a node and runs only its shape inference; returns the status.
static mlcc_status_t infer_only(mlcc_op_t op, int opset, mlcc_value_t** ins, uint32_t n_in,
                                const mlcc_attr_t* attrs, uint32_t n_attrs) {
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(1));
  mlcc_node_t* node = NULL;
  MLCC_RETURN_IF_ERROR(
      mlcc_graph_add_node(G, op, opset, "n", ins, n_in, &out, 1, attrs, n_attrs, &node));
  return mlcc_op_desc(op)->infer(node);
}

static const float X23[6] = {0, 1, 2, 3, 4, 5};  // [1,1,2,3]
// Grid points (x, y): a corner, inside, right of the image, far outside.
static const float GRID4[8] = {-1, -1, 0.3f, -0.7f, 1.4f, 0.2f, -2.6f, 1.9f};

static mlcc_value_t* grid_sample(const char* mode, const char* pad, int64_t align) {
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_F32, S(1, 1, 2, 3), X23),
                         C(MLCC_DTYPE_F32, S(1, 1, 4, 2), GRID4)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(1, 1, 1, 4));
  mlcc_attr_t a[3] = {A_str("mode", mode), A_str("padding_mode", pad),
                      A_int("align_corners", align)};
  CHECK_OK(run(MLCC_OP_GRID_SAMPLE, 16, in, 2, &out, 1, a, 3));
  return out;
}

static void test_grid_sample(void) {
  begin();
  EXPECT_F32(grid_sample("bicubic", "border", 0), -0.375f, 1.25790632f, 4.16300011f, 3.0f);
  EXPECT_F32(grid_sample("nearest", "reflection", 1), 0, 1, 5, 5);
  EXPECT_F32(grid_sample("bilinear", "zeros", 0), 0, 1.16000009f, 0, 0);
  EXPECT_F32(grid_sample("bilinear", "reflection", 0), 0, 1.45000005f, 4, 3.69999981f);
  // NaN / infinite grid values never address memory outside X; with zeros
  // padding they read 0.
  const float bad[6] = {NAN, 0, 0, INFINITY, -INFINITY, 1e30f};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_F32, S(1, 1, 2, 3), X23),
                         C(MLCC_DTYPE_F32, S(1, 1, 3, 2), bad)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(1, 1, 1, 3));
  mlcc_attr_t a = A_str("mode", "bicubic");
  CHECK_OK(run(MLCC_OP_GRID_SAMPLE, 16, in, 2, &out, 1, &a, 1));
  EXPECT_F32(out, 0, 0, 0);
  // Inference: grid must be [N, Ho, Wo, 2]; mode must be known.
  mlcc_value_t* g3[2] = {C(MLCC_DTYPE_F32, S(1, 1, 2, 3), X23),
                         C(MLCC_DTYPE_F32, S(1, 1, 2, 3), X23)};
  CHECK_STATUS(infer_only(MLCC_OP_GRID_SAMPLE, 16, g3, 2, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  mlcc_value_t* g2[2] = {C(MLCC_DTYPE_F32, S(1, 1, 2, 3), X23),
                         C(MLCC_DTYPE_F32, S(1, 1, 3, 2), X23)};
  mlcc_attr_t m = A_str("mode", "cubic");
  CHECK_STATUS(infer_only(MLCC_OP_GRID_SAMPLE, 16, g2, 2, &m, 1), MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_roi_align(void) {
  begin();
  float x[24];
  for (int i = 0; i < 24; ++i) x[i] = 0.5f * (float)i;  // [1,1,4,6]
  const float rois[8] = {0.5f, 0.5f, 4.2f, 3.1f, -2, 1, 3, 5};
  const int64_t bi[2] = {0, 0};
  // Opset 10 (no half-pixel shift), max mode, adaptive sampling.
  mlcc_value_t* in[3] = {C(MLCC_DTYPE_F32, S(1, 1, 4, 6), x), C(MLCC_DTYPE_F32, S(2, 4), rois),
                         C(MLCC_DTYPE_I64, S(2), bi)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(2, 1, 2, 2));
  mlcc_attr_t a[3] = {A_int("output_height", 2), A_int("output_width", 2), A_str("mode", "max")};
  CHECK_OK(run(MLCC_OP_ROI_ALIGN, 10, in, 3, &out, 1, a, 3));
  EXPECT_F32(out, 2.97171855f, 3.04218674f, 7.08640528f, 6.61171722f, 4.5f, 4.35416651f, 9.0f,
             8.70833302f);
  // Opset 16 half_pixel (default), avg, spatial_scale 0.5.
  mlcc_value_t* out2 = O(MLCC_DTYPE_F32, S(2, 1, 2, 2));
  mlcc_attr_t b[3] = {A_int("output_height", 2), A_int("output_width", 2),
                      A_float("spatial_scale", 0.5f)};
  CHECK_OK(run(MLCC_OP_ROI_ALIGN, 16, in, 3, &out2, 1, b, 3));
  EXPECT_F32(out2, 0.33124995f, 0.79374993f, 2.28125f, 2.74374986f, 0.75f, 1.6875f, 2.25f,
             4.6875f);
  // coordinate_transformation_mode exists only from opset 16.
  mlcc_attr_t c = A_str("coordinate_transformation_mode", "half_pixel");
  CHECK_STATUS(infer_only(MLCC_OP_ROI_ALIGN, 10, in, 3, &c, 1), MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_max_unpool(void) {
  begin();
  const float x[4] = {5, 6, 7, 8};
  const int64_t idx[4] = {5, 7, 100, 15};  // 100 is outside: skipped
  const int64_t k[2] = {2, 2};
  mlcc_attr_t a[2] = {A_ints("kernel_shape", k, 2), A_ints("strides", k, 2)};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_F32, S(1, 1, 2, 2), x), C(MLCC_DTYPE_I64, S(1, 1, 2, 2), idx)};
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(1, 1, 4, 4));
  CHECK_OK(run(MLCC_OP_MAX_UNPOOL, 11, in, 2, &out, 1, a, 2));
  EXPECT_F32(out, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 8);
  // A larger output_shape holds the 4x4 result at its origin.
  const int64_t shp[4] = {1, 1, 4, 5};
  mlcc_value_t* in3[3] = {in[0], in[1], C(MLCC_DTYPE_I64, S(4), shp)};
  mlcc_value_t* out3 = O(MLCC_DTYPE_F32, S(1, 1, 4, 5));
  CHECK_OK(run(MLCC_OP_MAX_UNPOOL, 11, in3, 3, &out3, 1, a, 2));
  EXPECT_F32(out3, 0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0);
  // A smaller output_shape is invalid.
  const int64_t small[4] = {1, 1, 3, 4};
  mlcc_value_t* ins[3] = {in[0], in[1], C(MLCC_DTYPE_I64, S(4), small)};
  CHECK_STATUS(infer_only(MLCC_OP_MAX_UNPOOL, 11, ins, 3, a, 2), MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_upsample(void) {
  begin();
  const float x[4] = {1, 2, 3, 4};  // [1,1,2,2]
  // Opset 7, linear, scales attribute: asymmetric coordinates x/2.
  const float sc[4] = {1, 1, 2, 2};
  mlcc_attr_t a[2] = {A_str("mode", "linear"), A_floats("scales", sc, 4)};
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(1, 1, 2, 2), x);
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(1, 1, 4, 4));
  CHECK_OK(run(MLCC_OP_UPSAMPLE, 7, &in, 1, &out, 1, a, 2));
  EXPECT_F32(out, 1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4);
  // Opset 9, nearest, constant scales input; int32 data, non-integer scale.
  const int32_t xi[3] = {10, 20, 30};
  const float s9[2] = {1, 1.5f};
  mlcc_value_t* in9[2] = {C(MLCC_DTYPE_I32, S(1, 3), xi), C(MLCC_DTYPE_F32, S(2), s9)};
  mlcc_value_t* out9 = O(MLCC_DTYPE_I32, S(1, 4));
  CHECK_OK(run(MLCC_OP_UPSAMPLE, 9, in9, 2, &out9, 1, NULL, 0));
  EXPECT_INTS(out9, 10, 10, 20, 30);  // trunc(o / 1.5) = 0, 0, 1, 2
  // Opset 7 needs the scales attribute.
  CHECK_STATUS(infer_only(MLCC_OP_UPSAMPLE, 7, &in, 1, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_reverse_sequence(void) {
  begin();
  // [T=3, B=2, 2], time_axis 0 (default), batch_axis 1; lens 3 and 2.
  const int64_t x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const int64_t lens[2] = {3, 2};
  mlcc_value_t* in[2] = {C(MLCC_DTYPE_I64, S(3, 2, 2), x), C(MLCC_DTYPE_I64, S(2), lens)};
  mlcc_value_t* out = O(MLCC_DTYPE_I64, S(3, 2, 2));
  CHECK_OK(run(MLCC_OP_REVERSE_SEQUENCE, 10, in, 2, &out, 1, NULL, 0));
  EXPECT_INTS(out, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1, 10, 11);
  mlcc_attr_t same[2] = {A_int("batch_axis", 0), A_int("time_axis", 0)};
  CHECK_STATUS(infer_only(MLCC_OP_REVERSE_SEQUENCE, 10, in, 2, same, 2),
               MLCC_STATUS_INVALID_MODEL);
  end();
}

static void test_det(void) {
  begin();
  // Zero leading pivot (needs a row swap), a singular matrix, the identity.
  const float a[27] = {0, 2, 1, 1, 1, 1, 2, 0, 3,  //
                       1, 2, 3, 2, 4, 6, 7, 8, 9,  //
                       1, 0, 0, 0, 1, 0, 0, 0, 1};
  mlcc_value_t* in = C(MLCC_DTYPE_F32, S(3, 3, 3), a);
  mlcc_value_t* out = O(MLCC_DTYPE_F32, S(3));
  CHECK_OK(run(MLCC_OP_DET, 11, &in, 1, &out, 1, NULL, 0));
  EXPECT_F32(out, -4, 0, 1);
  const double d2[4] = {1.5, 2, 3, 4};
  mlcc_value_t* in2 = C(MLCC_DTYPE_F64, S(2, 2), d2);
  mlcc_value_t* out2 = O(MLCC_DTYPE_F64, S0);
  CHECK_OK(run(MLCC_OP_DET, 11, &in2, 1, &out2, 1, NULL, 0));
  if (is_const(out2)) CHECK_NEAR(((const double*)out2->data)[0], 0.0, 1e-12);
  mlcc_value_t* bad = C(MLCC_DTYPE_F32, S(3, 9), a);
  CHECK_STATUS(infer_only(MLCC_OP_DET, 11, &bad, 1, NULL, 0), MLCC_STATUS_INVALID_MODEL);
  end();
}

int main(void) {
  RUN(test_grid_sample);
  RUN(test_roi_align);
  RUN(test_max_unpool);
  RUN(test_upsample);
  RUN(test_reverse_sequence);
  RUN(test_det);
  return TEST_EXIT();
}

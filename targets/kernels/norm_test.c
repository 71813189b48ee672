// SPDX-License-Identifier: Apache-2.0
// Tests for the normalization and Softmax kernels (targets/kernels/norm.c): tiny graphs with
// constant inputs evaluated by the host JIT (mlcc_codegen_eval_node) and compared with plain C
// reference loops or literals computed with numpy (kernel_test_util.h).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "targets/kernels/kernel_test_util.h"

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

static void test_batchnorm(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  float x[2 * 3 * 4];
  fill(x, 24);
  float s[3] = {1.0f, 1.5f, -2.0f}, b[3] = {0.0f, 1.0f, 0.5f}, m[3] = {0.1f, -0.2f, 0.3f},
        v[3] = {1.0f, 0.5f, 2.0f};
  int64_t xd[4] = {2, 3, 2, 2}, cd[1] = {3};
  mlcc_attr_t at[1] = {a_float("epsilon", 1e-3f)};
  mlcc_value_t* ins[5] = {cstf(g, 4, xd, x), cstf(g, 1, cd, s), cstf(g, 1, cd, b),
                          cstf(g, 1, cd, m), cstf(g, 1, cd, v)};
  const float* y = run1(g, MLCC_OP_BATCH_NORMALIZATION, 15, ins, 5, at, 1, 4, xd);
  float ref[24];
  for (int i = 0; i < 24; ++i) {
    int c = (i / 4) % 3;
    ref[i] = s[c] * (x[i] - m[c]) / sqrtf(v[c] + 1e-3f) + b[c];
  }
  CHECK_CLOSE(y, ref, 24);
  mlcc_graph_destroy(g);
}

static void test_layernorm(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  enum { R = 3, L = 10 };
  float x[R * L], s[L], b[L];
  fill(x, R * L);
  fill(s, L);
  fill(b, L);
  int64_t xd[2] = {R, L}, pd[1] = {L}, md[2] = {R, 1};
  mlcc_value_t* ins[3] = {cstf(g, 2, xd, x), cstf(g, 1, pd, s), cstf(g, 1, pd, b)};
  mlcc_attr_t at[2] = {a_int("axis", -1), a_float("epsilon", 1e-5f)};
  mlcc_shape_t want[3] = {shp(2, xd), shp(2, md), shp(2, md)};
  mlcc_dtype_t wdt[3] = {MLCC_DTYPE_F32, MLCC_DTYPE_F32, MLCC_DTYPE_F32};
  mlcc_value_t* outs[3];
  float ref[R * L], refm[R], refi[R];
  for (int r = 0; r < R; ++r) {
    double mean = 0, var = 0;
    for (int i = 0; i < L; ++i) mean += x[r * L + i];
    mean /= L;
    for (int i = 0; i < L; ++i) var += (x[r * L + i] - mean) * (x[r * L + i] - mean);
    var /= L;
    double inv = 1.0 / sqrt(var + 1e-5);
    refm[r] = (float)mean;
    refi[r] = (float)inv;
    for (int i = 0; i < L; ++i) ref[r * L + i] = (float)((x[r * L + i] - mean) * inv * s[i] + b[i]);
  }
  if (run(g, MLCC_OP_LAYER_NORMALIZATION, 17, ins, 3, at, 2, 3, want, wdt, outs)) {
    CHECK_CLOSE((const float*)outs[0]->data, ref, R * L);
    CHECK_CLOSE((const float*)outs[1]->data, refm, R);
    CHECK_CLOSE((const float*)outs[2]->data, refi, R);
  }
  mlcc_graph_destroy(g);
}

static void test_instancenorm(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  float x[2 * 2 * 3];
  fill(x, 12);
  float s[2] = {0.5f, 2.0f}, b[2] = {1.0f, -1.0f};
  int64_t xd[3] = {2, 2, 3}, cd[1] = {2};
  mlcc_value_t* ins[3] = {cstf(g, 3, xd, x), cstf(g, 1, cd, s), cstf(g, 1, cd, b)};
  const float* y = run1(g, MLCC_OP_INSTANCE_NORMALIZATION, 6, ins, 3, NULL, 0, 3, xd);
  float ref[12];
  for (int nc = 0; nc < 4; ++nc) {
    double mean = 0, var = 0;
    for (int i = 0; i < 3; ++i) mean += x[nc * 3 + i];
    mean /= 3;
    for (int i = 0; i < 3; ++i) var += (x[nc * 3 + i] - mean) * (x[nc * 3 + i] - mean);
    var /= 3;
    for (int i = 0; i < 3; ++i)
      ref[nc * 3 + i] = (float)(s[nc % 2] * (x[nc * 3 + i] - mean) / sqrt(var + 1e-5) + b[nc % 2]);
  }
  CHECK_CLOSE(y, ref, 12);
  mlcc_graph_destroy(g);
}

static void test_softmax_opsets(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  float x[2 * 3 * 4];
  for (int i = 0; i < 24; ++i) x[i] = (float)(i % 5) * 0.5f - (float)(i / 7);
  int64_t xd[3] = {2, 3, 4};
  mlcc_value_t* ins[1] = {cstf(g, 3, xd, x)};
  mlcc_attr_t at[1] = {a_int("axis", 1)};
  // opset 11, axis 1: softmax over the flattened 12-element block per batch.
  const float* y11 = run1(g, MLCC_OP_SOFTMAX, 11, ins, 1, at, 1, 3, xd);
  // opset 13, axis 1: softmax over the 3 elements along dim 1.
  const float* y13 = run1(g, MLCC_OP_SOFTMAX, 13, ins, 1, at, 1, 3, xd);
  const float* l13 = run1(g, MLCC_OP_LOG_SOFTMAX, 13, ins, 1, at, 1, 3, xd);
  float r11[24], r13[24], rl13[24];
  for (int n = 0; n < 2; ++n) {
    double mx = -INFINITY, sum = 0;
    for (int i = 0; i < 12; ++i) mx = fmax(mx, x[n * 12 + i]);
    for (int i = 0; i < 12; ++i) sum += exp(x[n * 12 + i] - mx);
    for (int i = 0; i < 12; ++i) r11[n * 12 + i] = (float)(exp(x[n * 12 + i] - mx) / sum);
    for (int k = 0; k < 4; ++k) {
      double m2 = -INFINITY, s2 = 0;
      for (int c = 0; c < 3; ++c) m2 = fmax(m2, x[n * 12 + c * 4 + k]);
      for (int c = 0; c < 3; ++c) s2 += exp(x[n * 12 + c * 4 + k] - m2);
      for (int c = 0; c < 3; ++c) {
        int i = n * 12 + c * 4 + k;
        r13[i] = (float)(exp(x[i] - m2) / s2);
        rl13[i] = (float)(x[i] - m2 - log(s2));
      }
    }
  }
  CHECK_CLOSE(y11, r11, 24);
  CHECK_CLOSE(y13, r13, 24);
  CHECK_CLOSE(l13, rl13, 24);
  if (y11 && y13) CHECK(fabsf(y11[0] - y13[0]) > 1e-3f);  // really different
  // Default axis: opset 11 -> 1 (same as above), opset 13 -> -1.
  const float* yd = run1(g, MLCC_OP_SOFTMAX, 13, ins, 1, NULL, 0, 3, xd);
  float rd[24];
  for (int r = 0; r < 6; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int i = 0; i < 4; ++i) mx = fmax(mx, x[r * 4 + i]);
    for (int i = 0; i < 4; ++i) sum += exp(x[r * 4 + i] - mx);
    for (int i = 0; i < 4; ++i) rd[r * 4 + i] = (float)(exp(x[r * 4 + i] - mx) / sum);
  }
  CHECK_CLOSE(yd, rd, 24);
  // No output is a float32 subnormal (flush_tiny: below FLT_MIN is +0): logits
  // 0, -95, -100, -60 in rows of 4 and of 24 (the scalar and the vector paths;
  // a row of 24 divides the clamped exp of -95 by 6, below FLT_MIN).
  float t[24];
  for (int i = 0; i < 24; ++i) t[i] = (i % 4 == 0) ? 0.0f : (i % 4 == 1) ? -95.0f
                                    : (i % 4 == 2) ? -100.0f : -60.0f;
  int64_t td4[2] = {6, 4}, td24[2] = {1, 24};
  mlcc_value_t* tin4[1] = {cstf(g, 2, td4, t)};
  mlcc_value_t* tin24[1] = {cstf(g, 2, td24, t)};
  const float* ty4 = run1(g, MLCC_OP_SOFTMAX, 13, tin4, 1, NULL, 0, 2, td4);
  const float* ty24 = run1(g, MLCC_OP_SOFTMAX, 13, tin24, 1, NULL, 0, 2, td24);
  for (int i = 0; ty4 && ty24 && i < 24; ++i) {
    CHECK(fpclassify(ty4[i]) != FP_SUBNORMAL && !signbit(ty4[i]));
    CHECK(fpclassify(ty24[i]) != FP_SUBNORMAL && !signbit(ty24[i]));
    if (i % 4 == 3) CHECK(ty4[i] > 1e-27f && ty24[i] > 1e-28f);  // exp(-60) = 8.8e-27 stays
  }
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_batchnorm);
  RUN(test_layernorm);
  RUN(test_instancenorm);
  RUN(test_softmax_opsets);
  return TEST_EXIT();
}

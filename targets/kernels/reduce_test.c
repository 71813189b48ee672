// SPDX-License-Identifier: Apache-2.0
// Tests for the reduction and ArgMax/ArgMin kernels (targets/kernels/reduce.c): tiny graphs with
// constant inputs evaluated by the host JIT (mlcc_codegen_eval_node) and compared with plain C
// reference loops or literals computed with numpy (kernel_test_util.h).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "targets/kernels/kernel_test_util.h"

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static void test_reduce(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  float x[2 * 3 * 4];
  for (int i = 0; i < 24; ++i) x[i] = (float)((i * 5) % 11) - 3.0f;
  int64_t xd[3] = {2, 3, 4};
  mlcc_value_t* ins[1] = {cstf(g, 3, xd, x)};
  // ReduceMean axes [1] keepdims 1 -> [2,1,4]
  int64_t ax1[1] = {1}, yd[3] = {2, 1, 4};
  mlcc_attr_t at[2] = {a_ints(g, "axes", 1, ax1), a_int("keepdims", 1)};
  const float* y = run1(g, MLCC_OP_REDUCE_MEAN, 13, ins, 1, at, 2, 3, yd);
  float ref[8];
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int c = 0; c < 3; ++c) s += x[n * 12 + c * 4 + k];
      ref[n * 4 + k] = (float)(s / 3);
    }
  CHECK_CLOSE(y, ref, 8);
  // ReduceMax axes [0, 2] keepdims 0 -> [3]
  int64_t ax02[2] = {0, -1}, y2d[1] = {3};
  mlcc_attr_t at2[2] = {a_ints(g, "axes", 2, ax02), a_int("keepdims", 0)};
  const float* y2 = run1(g, MLCC_OP_REDUCE_MAX, 13, ins, 1, at2, 2, 1, y2d);
  float ref2[3];
  for (int c = 0; c < 3; ++c) {
    float m = -INFINITY;
    for (int n = 0; n < 2; ++n)
      for (int k = 0; k < 4; ++k) m = fmaxf(m, x[n * 12 + c * 4 + k]);
    ref2[c] = m;
  }
  CHECK_CLOSE(y2, ref2, 3);
  // ReduceSum opset 13 with axes as a constant input: axes [2] keepdims 0.
  int64_t axv[1] = {2}, axd[1] = {1}, y3d[2] = {2, 3};
  mlcc_value_t* ins3[2] = {ins[0], cst(g, MLCC_DTYPE_I64, 1, axd, axv)};
  mlcc_attr_t at3[1] = {a_int("keepdims", 0)};
  const float* y3 = run1(g, MLCC_OP_REDUCE_SUM, 13, ins3, 2, at3, 1, 2, y3d);
  float ref3[6];
  for (int r = 0; r < 6; ++r) {
    double s = 0;
    for (int k = 0; k < 4; ++k) s += x[r * 4 + k];
    ref3[r] = (float)s;
  }
  CHECK_CLOSE(y3, ref3, 6);
  // ReduceL2 / ReduceLogSumExp over all axes, keepdims 1 -> [1,1,1].
  int64_t y4d[3] = {1, 1, 1};
  const float* y4 = run1(g, MLCC_OP_REDUCE_L2, 13, ins, 1, NULL, 0, 3, y4d);
  const float* y5 = run1(g, MLCC_OP_REDUCE_LOG_SUM_EXP, 13, ins, 1, NULL, 0, 3, y4d);
  double ss = 0, se = 0;
  for (int i = 0; i < 24; ++i) {
    ss += x[i] * x[i];
    se += exp(x[i]);
  }
  float r4[1] = {(float)sqrt(ss)}, r5[1] = {(float)log(se)};
  CHECK_CLOSE(y4, r4, 1);
  CHECK_CLOSE(y5, r5, 1);
  mlcc_graph_destroy(g);
}

static void test_argmax(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  // numpy: x = [[[1,5,5],[7,2,7]],[[0,0,3],[9,9,1]]] (2,2,3)
  float x[12] = {1, 5, 5, 7, 2, 7, 0, 0, 3, 9, 9, 1};
  int64_t xd[3] = {2, 2, 3}, yd[2] = {2, 2};
  mlcc_value_t* ins[1] = {cstf(g, 3, xd, x)};
  mlcc_shape_t want = shp(2, yd);
  mlcc_dtype_t wdt = MLCC_DTYPE_I64;
  mlcc_value_t* out = NULL;
  mlcc_attr_t at[2] = {a_int("axis", -1), a_int("keepdims", 0)};
  if (run(g, MLCC_OP_ARG_MAX, 13, ins, 1, at, 2, 1, &want, &wdt, &out)) {
    const int64_t* y = out->data;
    int64_t ref[4] = {1, 0, 2, 0};  // np.argmax(x, -1)
    for (int i = 0; i < 4; ++i) CHECK_EQ_INT(y[i], ref[i]);
  }
  mlcc_attr_t at2[3] = {a_int("axis", -1), a_int("keepdims", 0), a_int("select_last_index", 1)};
  if (run(g, MLCC_OP_ARG_MAX, 13, ins, 1, at2, 3, 1, &want, &wdt, &out)) {
    const int64_t* y = out->data;
    int64_t ref[4] = {2, 2, 2, 1};
    for (int i = 0; i < 4; ++i) CHECK_EQ_INT(y[i], ref[i]);
  }
  // ArgMin axis 1 keepdims 1 -> [2,1,3]
  int64_t y3d[3] = {2, 1, 3};
  mlcc_shape_t want3 = shp(3, y3d);
  mlcc_attr_t at3[1] = {a_int("axis", 1)};
  if (run(g, MLCC_OP_ARG_MIN, 13, ins, 1, at3, 1, 1, &want3, &wdt, &out)) {
    const int64_t* y = out->data;
    int64_t ref[6] = {0, 1, 0, 0, 0, 1};
    for (int i = 0; i < 6; ++i) CHECK_EQ_INT(y[i], ref[i]);
  }
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_reduce);
  RUN(test_argmax);
  return TEST_EXIT();
}

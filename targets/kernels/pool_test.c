// SPDX-License-Identifier: Apache-2.0
// Tests for the pooling kernels (targets/kernels/pool.c): tiny graphs with constant inputs
// evaluated by the host JIT (mlcc_codegen_eval_node) and compared with plain C reference loops or
// literals computed with numpy (kernel_test_util.h).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "targets/kernels/kernel_test_util.h"

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static void test_maxpool_ceil_indices(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  // x = arange(25) reshaped [1,1,5,5] with a few permutations; k 2, s 2, ceil.
  float x[25];
  for (int i = 0; i < 25; ++i) x[i] = (float)((i * 7) % 25);
  int64_t xd[4] = {1, 1, 5, 5}, yd[4] = {1, 1, 3, 3}, ks[2] = {2, 2}, st[2] = {2, 2};
  mlcc_attr_t at[3] = {a_ints(g, "kernel_shape", 2, ks), a_ints(g, "strides", 2, st),
                       a_int("ceil_mode", 1)};
  mlcc_value_t* ins[1] = {cstf(g, 4, xd, x)};
  mlcc_shape_t want[2] = {shp(4, yd), shp(4, yd)};
  mlcc_dtype_t wdt[2] = {MLCC_DTYPE_F32, MLCC_DTYPE_I64};
  mlcc_value_t* outs[2];
  float ref[9];
  int64_t refi[9];
  for (int oh = 0; oh < 3; ++oh)
    for (int ow = 0; ow < 3; ++ow) {
      float best = -INFINITY;
      int64_t bi = 0;
      for (int kh = 0; kh < 2; ++kh)
        for (int kw = 0; kw < 2; ++kw) {
          int ih = oh * 2 + kh, iw = ow * 2 + kw;
          if (ih >= 5 || iw >= 5) continue;
          if (x[ih * 5 + iw] > best) {
            best = x[ih * 5 + iw];
            bi = ih * 5 + iw;
          }
        }
      ref[oh * 3 + ow] = best;
      refi[oh * 3 + ow] = bi;
    }
  if (run(g, MLCC_OP_MAX_POOL, 12, ins, 1, at, 3, 2, want, wdt, outs)) {
    CHECK_CLOSE((const float*)outs[0]->data, ref, 9);
    const int64_t* yi = outs[1]->data;
    for (int i = 0; i < 9; ++i) CHECK_EQ_INT(yi[i], refi[i]);
  }
  mlcc_graph_destroy(g);
}

static void test_avgpool_count_include_pad(void) {
  // numpy: x = arange(16).reshape(1,1,4,4); k 3, s 2, pads 1 -> 2x2 output.
  // count_include_pad=0: [[2.5, 4.5], [10.5, 12.5]]
  // count_include_pad=1: sums/9 = [[15/9, 36/9], [99/9, 153/9]]... computed:
  //   window (0,0): rows -1..1, cols -1..1 -> 0+1+4+5 = 10
  //   window (0,1): rows -1..1, cols 1..3 -> 1+2+3+5+6+7 = 24
  //   window (1,0): rows 1..3, cols -1..1 -> 4+5+8+9+12+13 = 51
  //   window (1,1): rows 1..3, cols 1..3 -> 5+6+7+9+10+11+13+14+15 = 90
  for (int cip = 0; cip <= 1; ++cip) {
    mlcc_graph_t* g = NULL;
    CHECK_OK(mlcc_graph_create(&g));
    if (!g) return;
    float x[16];
    for (int i = 0; i < 16; ++i) x[i] = (float)i;
    int64_t xd[4] = {1, 1, 4, 4}, yd[4] = {1, 1, 2, 2}, ks[2] = {3, 3}, st[2] = {2, 2};
    int64_t pads[4] = {1, 1, 1, 1};
    mlcc_attr_t at[4] = {a_ints(g, "kernel_shape", 2, ks), a_ints(g, "strides", 2, st),
                         a_ints(g, "pads", 4, pads), a_int("count_include_pad", cip)};
    mlcc_value_t* ins[1] = {cstf(g, 4, xd, x)};
    const float* y = run1(g, MLCC_OP_AVERAGE_POOL, 11, ins, 1, at, 4, 4, yd);
    float ref0[4] = {10.0f / 4, 24.0f / 6, 51.0f / 6, 90.0f / 9};
    float ref1[4] = {10.0f / 9, 24.0f / 9, 51.0f / 9, 90.0f / 9};
    CHECK_CLOSE(y, cip ? ref1 : ref0, 4);
    mlcc_graph_destroy(g);
  }
}

static void test_global_average_pool(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  float x[2 * 3 * 5];
  for (int i = 0; i < 30; ++i) x[i] = (float)i;
  int64_t xd[4] = {1, 2, 3, 5}, yd[4] = {1, 2, 1, 1};
  mlcc_value_t* ins[1] = {cstf(g, 4, xd, x)};
  const float* y = run1(g, MLCC_OP_GLOBAL_AVERAGE_POOL, 1, ins, 1, NULL, 0, 4, yd);
  float ref[2] = {7.0f, 22.0f};
  CHECK_CLOSE(y, ref, 2);
  const float* ym = run1(g, MLCC_OP_GLOBAL_MAX_POOL, 1, ins, 1, NULL, 0, 4, yd);
  float refm[2] = {14.0f, 29.0f};
  CHECK_CLOSE(ym, refm, 2);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_maxpool_ceil_indices);
  RUN(test_avgpool_count_include_pad);
  RUN(test_global_average_pool);
  return TEST_EXIT();
}

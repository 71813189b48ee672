// SPDX-License-Identifier: Apache-2.0
// Tests for the pooling kernels (targets/kernels/pool.c): tiny graphs with constant inputs
// evaluated by the host JIT (mlcc_codegen_eval_node) and compared with plain C reference loops or
// literals computed with numpy (kernel_test_util.h).
#include <math.h>
#include <stdbool.h>
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

// A 2-D MaxPool / AveragePool reference for one [N, C, H, W] input: window
// (kh, kw), strides, dilations, pads (top, left; the output size is given),
// count_include_pad for the average (padded positions count, positions past
// the padded input never do). Max also returns the flat argmax index.
typedef struct pool_ref_t {
  int64_t n, c, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow;
} pool_ref_t;

static void pool2d_ref(const pool_ref_t* p, const float* x, bool is_max, bool cip, float* y,
                       int64_t* idx) {
  for (int64_t nc = 0; nc < p->n * p->c; ++nc)
    for (int64_t oh = 0; oh < p->oh; ++oh)
      for (int64_t ow = 0; ow < p->ow; ++ow) {
        double acc = is_max ? -INFINITY : 0.0;
        int64_t count = 0, best = -1;
        for (int64_t kh = 0; kh < p->kh; ++kh)
          for (int64_t kw = 0; kw < p->kw; ++kw) {
            int64_t ih = oh * p->sh - p->pt + kh * p->dh;
            int64_t iw = ow * p->sw - p->pl + kw * p->dw;
            bool inside = ih >= 0 && ih < p->h && iw >= 0 && iw < p->w;
            bool in_padded = ih >= -p->pt && ih < p->h + p->pb && iw >= -p->pl &&
                             iw < p->w + p->pr;
            if (!inside) {
              if (cip && in_padded) ++count;
              continue;
            }
            double v = x[(nc * p->h + ih) * p->w + iw];
            ++count;
            if (is_max) {
              if (v > acc) {
                acc = v;
                best = (nc * p->h + ih) * p->w + iw;
              }
            } else {
              acc += v;
            }
          }
        int64_t o = (nc * p->oh + oh) * p->ow + ow;
        y[o] = (float)(is_max ? acc : acc / (double)count);
        if (idx) idx[o] = best;
      }
}

// MaxPool-12 with dilations, strides and uneven pads, values and indices;
// AveragePool-19 (dilations) with and without count_include_pad. Output
// sizes: H (7 + 1 + 2 - 2*(3-1) - 1) / 1 + 1 = 6, W (9 + 0 + 1 - 1*(2-1) - 1) / 2 + 1 = 5.
static void test_pool_dilated_uneven_pads(void) {
  pool_ref_t p = {.n = 2, .c = 3, .h = 7, .w = 9, .kh = 3, .kw = 2, .sh = 1, .sw = 2,
                  .dh = 2, .dw = 1, .pt = 1, .pl = 0, .pb = 2, .pr = 1, .oh = 6, .ow = 5};
  enum { XN = 2 * 3 * 7 * 9, YN = 2 * 3 * 6 * 5 };
  float x[XN], ref[YN];
  int64_t refi[YN];
  fill(x, XN);
  int64_t xd[4] = {2, 3, 7, 9}, yd[4] = {2, 3, 6, 5}, ks[2] = {3, 2}, st[2] = {1, 2},
          dl[2] = {2, 1}, pads[4] = {1, 0, 2, 1};
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  mlcc_value_t* ins[1] = {cstf(g, 4, xd, x)};
  mlcc_attr_t at[5] = {a_ints(g, "kernel_shape", 2, ks), a_ints(g, "strides", 2, st),
                       a_ints(g, "dilations", 2, dl), a_ints(g, "pads", 4, pads),
                       a_int("count_include_pad", 0)};
  mlcc_shape_t want[2] = {shp(4, yd), shp(4, yd)};
  mlcc_dtype_t wdt[2] = {MLCC_DTYPE_F32, MLCC_DTYPE_I64};
  mlcc_value_t* outs[2];
  pool2d_ref(&p, x, true, false, ref, refi);
  if (run(g, MLCC_OP_MAX_POOL, 12, ins, 1, at, 4, 2, want, wdt, outs)) {
    CHECK_CLOSE((const float*)outs[0]->data, ref, YN);
    const int64_t* yi = outs[1]->data;
    int bad = 0;
    for (int i = 0; i < YN; ++i) bad += yi[i] != refi[i];
    CHECK_EQ_INT(bad, 0);
  }
  for (int cip = 0; cip <= 1; ++cip) {
    at[4] = a_int("count_include_pad", cip);
    pool2d_ref(&p, x, false, cip, ref, NULL);
    const float* y = run1(g, MLCC_OP_AVERAGE_POOL, 19, ins, 1, at, 5, 4, yd);
    CHECK_CLOSE(y, ref, YN);
  }
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_maxpool_ceil_indices);
  RUN(test_avgpool_count_include_pad);
  RUN(test_global_average_pool);
  RUN(test_pool_dilated_uneven_pads);
  return TEST_EXIT();
}

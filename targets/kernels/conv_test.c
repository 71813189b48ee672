// SPDX-License-Identifier: Apache-2.0
// Tests for the Conv and ConvTranspose kernels (targets/kernels/conv.c): tiny graphs with constant
// inputs evaluated by the host JIT (mlcc_codegen_eval_node) and compared with plain C reference
// loops or literals computed with numpy (kernel_test_util.h).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "targets/kernels/kernel_test_util.h"

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

typedef struct conv_ref_t {
  int64_t n, c, h, w, m, kh, kw, group;
  int64_t sh, sw, dh, dw, pt, pl;  // strides, dilations, pads (top, left)
  int64_t oh, ow;
} conv_ref_t;

static void conv2d_ref(const conv_ref_t* p, const float* x, const float* w, const float* b,
                       float* y) {
  int64_t cg = p->c / p->group, mg = p->m / p->group;
  for (int64_t n = 0; n < p->n; ++n)
    for (int64_t oc = 0; oc < p->m; ++oc)
      for (int64_t oh = 0; oh < p->oh; ++oh)
        for (int64_t ow = 0; ow < p->ow; ++ow) {
          double acc = b ? b[oc] : 0.0;
          int64_t gi = oc / mg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t kh = 0; kh < p->kh; ++kh)
              for (int64_t kw = 0; kw < p->kw; ++kw) {
                int64_t ih = oh * p->sh - p->pt + kh * p->dh;
                int64_t iw = ow * p->sw - p->pl + kw * p->dw;
                if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
                acc += (double)x[((n * p->c + gi * cg + ic) * p->h + ih) * p->w + iw] *
                       w[((oc * cg + ic) * p->kh + kh) * p->kw + kw];
              }
          y[((n * p->m + oc) * p->oh + oh) * p->ow + ow] = (float)acc;
        }
}

// Runs a 2-D Conv with explicit attributes and compares with conv2d_ref.
static void conv_case(conv_ref_t p, int64_t pb, int64_t pr, bool bias, const char* auto_pad) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  int64_t xd[4] = {p.n, p.c, p.h, p.w}, wd[4] = {p.m, p.c / p.group, p.kh, p.kw}, bd[1] = {p.m};
  int64_t xn = p.n * p.c * p.h * p.w, wn = wd[0] * wd[1] * p.kh * p.kw;
  float* x = malloc(sizeof(float) * xn);
  float* w = malloc(sizeof(float) * wn);
  float* b = malloc(sizeof(float) * p.m);
  fill(x, xn);
  fill(w, wn);
  fill(b, p.m);
  mlcc_value_t* ins[3] = {cstf(g, 4, xd, x), cstf(g, 4, wd, w), bias ? cstf(g, 1, bd, b) : NULL};
  mlcc_attr_t at[6];
  uint32_t na = 0;
  int64_t ks[2] = {p.kh, p.kw}, st[2] = {p.sh, p.sw}, dl[2] = {p.dh, p.dw};
  int64_t pads[4] = {p.pt, p.pl, pb, pr};
  at[na++] = a_ints(g, "kernel_shape", 2, ks);
  at[na++] = a_ints(g, "strides", 2, st);
  at[na++] = a_ints(g, "dilations", 2, dl);
  at[na++] = a_int("group", p.group);
  if (auto_pad) at[na++] = a_str("auto_pad", auto_pad);
  else at[na++] = a_ints(g, "pads", 4, pads);
  int64_t yd[4] = {p.n, p.m, p.oh, p.ow};
  int64_t yn = p.n * p.m * p.oh * p.ow;
  float* ref = malloc(sizeof(float) * yn);
  conv2d_ref(&p, x, w, bias ? b : NULL, ref);
  const float* y = run1(g, MLCC_OP_CONV, 13, ins, bias ? 3 : 2, at, na, 4, yd);
  CHECK_CLOSE(y, ref, yn);
  free(x);
  free(w);
  free(b);
  free(ref);
  mlcc_graph_destroy(g);
}

static void test_conv_pads_stride_dilation_group(void) {
  // H: (7 + 1 + 2 - ((3-1)*1+1)) / 2 + 1 = 4; W: (9 + 0 + 1 - ((2-1)*2+1)) / 1 + 1 = 8
  conv_ref_t p = {.n = 2, .c = 4, .h = 7, .w = 9, .m = 6, .kh = 3, .kw = 2, .group = 2,
                  .sh = 2, .sw = 1, .dh = 1, .dw = 2, .pt = 1, .pl = 0, .oh = 4, .ow = 8};
  conv_case(p, 2, 1, true, NULL);
}

static void test_conv_3x3_wide(void) {
  // Wide rows exercise the interior tiles (full and remainder) and borders.
  conv_ref_t p = {.n = 1, .c = 3, .h = 6, .w = 41, .m = 8, .kh = 3, .kw = 3, .group = 1,
                  .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .oh = 6, .ow = 41};
  conv_case(p, 1, 1, false, NULL);
  // 1x1 pointwise, odd channel counts.
  conv_ref_t q = {.n = 1, .c = 5, .h = 3, .w = 19, .m = 6, .kh = 1, .kw = 1, .group = 1,
                  .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 0, .pl = 0, .oh = 3, .ow = 19};
  conv_case(q, 0, 0, true, NULL);
  // Stride 2 with a 7x7 kernel (resnet stem shape, scaled down).
  conv_ref_t r = {.n = 1, .c = 3, .h = 20, .w = 20, .m = 4, .kh = 7, .kw = 7, .group = 1,
                  .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 3, .pl = 3, .oh = 10, .ow = 10};
  conv_case(r, 3, 3, true, NULL);
}

static void test_conv_depthwise(void) {
  conv_ref_t p = {.n = 1, .c = 5, .h = 9, .w = 20, .m = 5, .kh = 3, .kw = 3, .group = 5,
                  .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .oh = 9, .ow = 20};
  conv_case(p, 1, 1, true, NULL);
  conv_ref_t q = p;
  q.sh = q.sw = 2;
  q.oh = 5;
  q.ow = 10;
  conv_case(q, 1, 1, true, NULL);
}

static void test_conv_auto_pad(void) {
  // SAME_UPPER, stride 2, W = 7 -> out 4; total pad = (4-1)*2+3-7 = 2 -> 1/1.
  conv_ref_t p = {.n = 1, .c = 2, .h = 7, .w = 7, .m = 3, .kh = 3, .kw = 3, .group = 1,
                  .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .oh = 4, .ow = 4};
  conv_case(p, 1, 1, true, "SAME_UPPER");
  // SAME_LOWER with an even kernel: total pad 1 goes to the beginning.
  conv_ref_t q = {.n = 1, .c = 2, .h = 5, .w = 6, .m = 2, .kh = 2, .kw = 2, .group = 1,
                  .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .oh = 5, .ow = 6};
  conv_case(q, 0, 0, false, "SAME_LOWER");
}

static void test_conv_1d_3d(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  // 1-D: x [1,2,6], w [3,2,3], pads 1/1 -> y [1,3,6]; reference via 2-D with H=1.
  float x[12], w[18];
  fill(x, 12);
  fill(w, 18);
  int64_t xd[3] = {1, 2, 6}, wd[3] = {3, 2, 3}, yd[3] = {1, 3, 6};
  int64_t pads[2] = {1, 1};
  mlcc_attr_t at[1] = {a_ints(g, "pads", 2, pads)};
  mlcc_value_t* ins[2] = {cstf(g, 3, xd, x), cstf(g, 3, wd, w)};
  const float* y = run1(g, MLCC_OP_CONV, 11, ins, 2, at, 1, 3, yd);
  conv_ref_t p = {.n = 1, .c = 2, .h = 1, .w = 6, .m = 3, .kh = 1, .kw = 3, .group = 1,
                  .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 0, .pl = 1, .oh = 1, .ow = 6};
  float ref[18];
  conv2d_ref(&p, x, w, NULL, ref);
  CHECK_CLOSE(y, ref, 18);
  // 3-D: x [1,1,3,3,3] all ones, w [1,1,2,2,2] all ones, no pads -> 8 everywhere.
  float x3[27], w3[8];
  for (int i = 0; i < 27; ++i) x3[i] = 1.0f;
  for (int i = 0; i < 8; ++i) w3[i] = 1.0f;
  int64_t x3d[5] = {1, 1, 3, 3, 3}, w3d[5] = {1, 1, 2, 2, 2}, y3d[5] = {1, 1, 2, 2, 2};
  mlcc_value_t* ins3[2] = {cstf(g, 5, x3d, x3), cstf(g, 5, w3d, w3)};
  const float* y3 = run1(g, MLCC_OP_CONV, 11, ins3, 2, NULL, 0, 5, y3d);
  float ref3[8] = {8, 8, 8, 8, 8, 8, 8, 8};
  CHECK_CLOSE(y3, ref3, 8);
  mlcc_graph_destroy(g);
}

static void test_conv_transpose_stride2(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  // x [1,2,3,4], w [2,3,3,3] (C, M/group, kh, kw), strides 2, pads 1,1,0,0,
  // output_padding 1,1 -> H = 2*2+1+3-1 = 7, W = 2*3+1+3-1 = 9; bias.
  enum { C = 2, M = 3, H = 3, W = 4, K = 3, OH = 7, OW = 9 };
  float x[C * H * W], w[C * M * K * K], b[M];
  fill(x, C * H * W);
  fill(w, C * M * K * K);
  fill(b, M);
  int64_t xd[4] = {1, C, H, W}, wd[4] = {C, M, K, K}, bd[1] = {M}, yd[4] = {1, M, OH, OW};
  int64_t st[2] = {2, 2}, pads[4] = {1, 1, 0, 0}, op[2] = {1, 1};
  mlcc_attr_t at[3] = {a_ints(g, "strides", 2, st), a_ints(g, "pads", 4, pads),
                       a_ints(g, "output_padding", 2, op)};
  mlcc_value_t* ins[3] = {cstf(g, 4, xd, x), cstf(g, 4, wd, w), cstf(g, 1, bd, b)};
  const float* y = run1(g, MLCC_OP_CONV_TRANSPOSE, 11, ins, 3, at, 3, 4, yd);
  // Scatter-style reference.
  float ref[M * OH * OW];
  for (int oc = 0; oc < M; ++oc)
    for (int i = 0; i < OH * OW; ++i) ref[oc * OH * OW + i] = b[oc];
  for (int ic = 0; ic < C; ++ic)
    for (int ih = 0; ih < H; ++ih)
      for (int iw = 0; iw < W; ++iw)
        for (int oc = 0; oc < M; ++oc)
          for (int kh = 0; kh < K; ++kh)
            for (int kw = 0; kw < K; ++kw) {
              int oh = ih * 2 - 1 + kh, ow = iw * 2 - 1 + kw;
              if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
              ref[(oc * OH + oh) * OW + ow] +=
                  x[(ic * H + ih) * W + iw] * w[((ic * M + oc) * K + kh) * K + kw];
            }
  CHECK_CLOSE(y, ref, M * OH * OW);
  mlcc_graph_destroy(g);
}

// Grouped Conv (4 groups of 3 input and 2 output channels) with dilation 2
// and stride 2 on a wide row, and batch 3 with uneven pads and no bias:
// H (9 + 2 + 1 - 2*(3-1) - 1) / 2 + 1 = 4, W (45 + 1 + 2 - 2*(3-1) - 1) / 2 + 1 = 22.
static void test_conv_grouped_dilated(void) {
  conv_ref_t p = {.n = 3, .c = 12, .h = 9, .w = 45, .m = 8, .kh = 3, .kw = 3, .group = 4,
                  .sh = 2, .sw = 2, .dh = 2, .dw = 2, .pt = 2, .pl = 1, .oh = 4, .ow = 22};
  conv_case(p, 1, 2, false, NULL);
  conv_case(p, 1, 2, true, NULL);
}

// Stride-2 3x3 on wide rows: on x86 AVX-512 the channel-vector kernel takes
// rows of up to 160 output columns (20 segments), beyond that pixel vectors.
// C = 3 and 16 (the detector's stem and stage1.0), M = 16 and 32; W 199 ->
// 100 columns (pads 1/1), 319 -> 160, 321 -> 161 (the fallback), 200 -> 100
// with right pad 0.
static void test_conv_stride2_wide(void) {
  conv_ref_t p = {.n = 1, .c = 3, .h = 7, .w = 199, .m = 16, .kh = 3, .kw = 3, .group = 1,
                  .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .oh = 4, .ow = 100};
  conv_case(p, 1, 1, true, NULL);
  p.w = 319;
  p.ow = 160;
  conv_case(p, 1, 1, true, NULL);
  p.w = 321;
  p.ow = 161;
  conv_case(p, 1, 1, false, NULL);
  conv_ref_t q = {.n = 2, .c = 16, .h = 6, .w = 200, .m = 32, .kh = 3, .kw = 3, .group = 1,
                  .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .oh = 3, .ow = 100};
  conv_case(q, 0, 0, true, NULL);
}

int main(void) {
  RUN(test_conv_pads_stride_dilation_group);
  RUN(test_conv_stride2_wide);
  RUN(test_conv_3x3_wide);
  RUN(test_conv_depthwise);
  RUN(test_conv_auto_pad);
  RUN(test_conv_1d_3d);
  RUN(test_conv_transpose_stride2);
  RUN(test_conv_grouped_dilated);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Tests for the compute emitters (targets/kernels/conv.c, targets/kernels/matmul.c, targets/kernels/pool.c,
// targets/kernels/norm.c, targets/kernels/reduce.c): tiny graphs with constant inputs are evaluated
// by the host JIT (mlcc_codegen_eval_node) and compared with plain C
// reference loops or literals computed with numpy.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "test.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static uint32_t rng_state = 12345;
static float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static void fill(float* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = frand();
}

static mlcc_shape_t shp(int rank, const int64_t* dims) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  for (int i = 0; i < rank; ++i) s.dims[i] = dims[i];
  return s;
}

static int name_counter = 0;
static mlcc_value_t* cst(mlcc_graph_t* g, mlcc_dtype_t dt, int rank, const int64_t* dims,
                         const void* data) {
  char name[32];
  snprintf(name, sizeof(name), "c%d", name_counter++);
  mlcc_shape_t s = shp(rank, dims);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, name, dt, &s, data, true, &v));
  return v;
}
static mlcc_value_t* cstf(mlcc_graph_t* g, int rank, const int64_t* dims, const float* data) {
  return cst(g, MLCC_DTYPE_F32, rank, dims, data);
}

static mlcc_attr_t a_int(const char* name, int64_t v) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = name;
  a.kind = MLCC_ATTR_INT;
  a.i = v;
  return a;
}
static mlcc_attr_t a_float(const char* name, float v) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = name;
  a.kind = MLCC_ATTR_FLOAT;
  a.f = v;
  return a;
}
static mlcc_attr_t a_str(const char* name, const char* v) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = name;
  a.kind = MLCC_ATTR_STRING;
  a.s = v;
  a.s_len = strlen(v);
  return a;
}
static mlcc_attr_t a_ints(mlcc_graph_t* g, const char* name, uint32_t n, const int64_t* v) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = name;
  a.kind = MLCC_ATTR_INTS;
  int64_t* p = mlcc_arena_alloc(&g->arena, sizeof(int64_t) * (n ? n : 1), 8);
  if (p) memcpy(p, v, sizeof(int64_t) * n);
  a.count = n;
  a.ints = p;
  return a;
}

// Adds node |op| over |ins|, infers (or, if inference is missing, uses
// |want| shapes/dtypes), evaluates it with the JIT and returns the outputs.
// |want[i]| with rank -1 means "omitted output". Returns false on failure.
static bool run(mlcc_graph_t* g, mlcc_op_t op, int opset, mlcc_value_t** ins, uint32_t nin,
                const mlcc_attr_t* attrs, uint32_t nattr, uint32_t nout,
                const mlcc_shape_t* want, const mlcc_dtype_t* want_dt, mlcc_value_t** outs) {
  for (uint32_t i = 0; i < nout; ++i) {
    outs[i] = NULL;
    if (want[i].rank < 0) continue;
    char name[32];
    snprintf(name, sizeof(name), "o%d", name_counter++);
    CHECK_OK(mlcc_graph_add_value(g, name, MLCC_VALUE_INTERMEDIATE, &outs[i]));
    if (!outs[i]) return false;
  }
  mlcc_node_t* node = NULL;
  CHECK_OK(mlcc_graph_add_node(g, op, opset, "n", ins, nin, outs, nout, attrs, nattr, &node));
  if (!node) return false;
  mlcc_status_t s = mlcc_op_desc(op)->infer(node);
  if (s != NULL) {
    char* m = mlcc_status_to_string(s);
    fprintf(stderr, "note: infer for %s failed (%s); using expected shapes\n", mlcc_op_name(op),
            m ? m : "?");
    free(m);
    mlcc_status_free(s);
    for (uint32_t i = 0; i < nout; ++i) {
      if (!outs[i]) continue;
      outs[i]->shape = want[i];
      outs[i]->dtype = want_dt[i];
      outs[i]->shape_known = true;
    }
  }
  for (uint32_t i = 0; i < nout; ++i) {
    if (!outs[i]) continue;
    CHECK(mlcc_shape_equal(&outs[i]->shape, &want[i]));
    CHECK_EQ_INT(outs[i]->dtype, want_dt[i]);
    if (!mlcc_shape_equal(&outs[i]->shape, &want[i])) return false;
  }
  mlcc_status_t es = mlcc_codegen_eval_node(g, node);
  bool ok = es == NULL;
  CHECK_OK(es);
  return ok;
}

// Single float32 output convenience.
static const float* run1(mlcc_graph_t* g, mlcc_op_t op, int opset, mlcc_value_t** ins,
                         uint32_t nin, const mlcc_attr_t* attrs, uint32_t nattr, int rank,
                         const int64_t* dims) {
  mlcc_shape_t want = shp(rank, dims);
  mlcc_dtype_t dt = MLCC_DTYPE_F32;
  mlcc_value_t* out = NULL;
  if (!run(g, op, opset, ins, nin, attrs, nattr, 1, &want, &dt, &out)) return NULL;
  return out->data;
}

static int close_all(const float* got, const float* ref, int64_t n, double atol, double rtol) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = fabs((double)got[i] - (double)ref[i]);
    if (!(d <= atol + rtol * fabs((double)ref[i]))) {
      if (bad < 5) fprintf(stderr, "  mismatch at %lld: got %.7g want %.7g\n", (long long)i,
                           got[i], ref[i]);
      ++bad;
    }
  }
  return bad;
}
#define CHECK_CLOSE(got, ref, n) CHECK(got != NULL && close_all(got, ref, n, 1e-5, 1e-4) == 0)

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

//===----------------------------------------------------------------------===//
// Gemm / MatMul
//===----------------------------------------------------------------------===//

static void test_gemm_transb_bias(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  enum { M = 5, K = 7, N = 19 };
  float a[M * K], b[N * K], c[N];
  fill(a, M * K);
  fill(b, N * K);
  fill(c, N);
  int64_t ad[2] = {M, K}, bd[2] = {N, K}, cd[1] = {N}, yd[2] = {M, N};
  mlcc_attr_t at[3] = {a_int("transB", 1), a_float("alpha", 0.5f), a_float("beta", 2.0f)};
  mlcc_value_t* ins[3] = {cstf(g, 2, ad, a), cstf(g, 2, bd, b), cstf(g, 1, cd, c)};
  const float* y = run1(g, MLCC_OP_GEMM, 13, ins, 3, at, 3, 2, yd);
  float ref[M * N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += (double)a[i * K + k] * b[j * K + k];
      ref[i * N + j] = (float)(0.5 * acc + 2.0 * c[j]);
    }
  CHECK_CLOSE(y, ref, M * N);
  // transA with C of shape [M, 1].
  float at_[K * M], c2[M];
  fill(at_, K * M);
  fill(c2, M);
  float b2[K * N];
  fill(b2, K * N);
  int64_t atd[2] = {K, M}, b2d[2] = {K, N}, c2d[2] = {M, 1};
  mlcc_attr_t at2[1] = {a_int("transA", 1)};
  mlcc_value_t* ins2[3] = {cstf(g, 2, atd, at_), cstf(g, 2, b2d, b2), cstf(g, 2, c2d, c2)};
  const float* y2 = run1(g, MLCC_OP_GEMM, 13, ins2, 3, at2, 1, 2, yd);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += (double)at_[k * M + i] * b2[k * N + j];
      ref[i * N + j] = (float)(acc + c2[i]);
    }
  CHECK_CLOSE(y2, ref, M * N);
  mlcc_graph_destroy(g);
}

static void test_matmul_batched_broadcast(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (!g) return;
  // A [2,1,3,4] @ B [3,4,5] -> [2,3,3,5]
  float a[2 * 3 * 4], b[3 * 4 * 5];
  fill(a, 24);
  fill(b, 60);
  int64_t ad[4] = {2, 1, 3, 4}, bd[3] = {3, 4, 5}, yd[4] = {2, 3, 3, 5};
  mlcc_value_t* ins[2] = {cstf(g, 4, ad, a), cstf(g, 3, bd, b)};
  const float* y = run1(g, MLCC_OP_MATMUL, 13, ins, 2, NULL, 0, 4, yd);
  float ref[2 * 3 * 3 * 5];
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
          double acc = 0;
          for (int k = 0; k < 4; ++k) acc += (double)a[(p * 3 + i) * 4 + k] * b[(q * 4 + k) * 5 + j];
          ref[((p * 3 + q) * 3 + i) * 5 + j] = (float)acc;
        }
  CHECK_CLOSE(y, ref, 90);
  // 1-D @ 3-D: [4] @ [3,4,5] -> [3,5]
  int64_t vd[1] = {4}, y1d[2] = {3, 5};
  float v[4] = {1, 2, 3, 4};
  mlcc_value_t* ins1[2] = {cstf(g, 1, vd, v), cstf(g, 3, bd, b)};
  const float* y1 = run1(g, MLCC_OP_MATMUL, 13, ins1, 2, NULL, 0, 2, y1d);
  float ref1[15];
  for (int q = 0; q < 3; ++q)
    for (int j = 0; j < 5; ++j) {
      double acc = 0;
      for (int k = 0; k < 4; ++k) acc += v[k] * (double)b[(q * 4 + k) * 5 + j];
      ref1[q * 5 + j] = (float)acc;
    }
  CHECK_CLOSE(y1, ref1, 15);
  // 3-D @ 1-D: [2,1,3,4] @ [4] -> [2,1,3]
  int64_t y2d[3] = {2, 1, 3};
  mlcc_value_t* ins2[2] = {cstf(g, 4, ad, a), cstf(g, 1, vd, v)};
  int64_t y2d4[3] = {2, 1, 3};
  (void)y2d4;
  const float* y2 = run1(g, MLCC_OP_MATMUL, 13, ins2, 2, NULL, 0, 3, y2d);
  float ref2[6];
  for (int r = 0; r < 6; ++r) {
    double acc = 0;
    for (int k = 0; k < 4; ++k) acc += (double)a[r * 4 + k] * v[k];
    ref2[r] = (float)acc;
  }
  CHECK_CLOSE(y2, ref2, 6);
  // int64 matmul [2,3] @ [3,2]
  int64_t ia[6] = {1, 2, 3, 4, 5, 6}, ib[6] = {7, 8, 9, 10, 11, 12};
  int64_t iad[2] = {2, 3}, ibd[2] = {3, 2}, iyd[2] = {2, 2};
  mlcc_value_t* ins3[2] = {cst(g, MLCC_DTYPE_I64, 2, iad, ia), cst(g, MLCC_DTYPE_I64, 2, ibd, ib)};
  mlcc_shape_t want = shp(2, iyd);
  mlcc_dtype_t wdt = MLCC_DTYPE_I64;
  mlcc_value_t* out = NULL;
  if (run(g, MLCC_OP_MATMUL, 13, ins3, 2, NULL, 0, 1, &want, &wdt, &out)) {
    const int64_t* iy = out->data;
    CHECK_EQ_INT(iy[0], 58);
    CHECK_EQ_INT(iy[1], 64);
    CHECK_EQ_INT(iy[2], 139);
    CHECK_EQ_INT(iy[3], 154);
  }
  mlcc_graph_destroy(g);
}

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
  mlcc_graph_destroy(g);
}

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
  RUN(test_conv_pads_stride_dilation_group);
  RUN(test_conv_3x3_wide);
  RUN(test_conv_depthwise);
  RUN(test_conv_auto_pad);
  RUN(test_conv_1d_3d);
  RUN(test_conv_transpose_stride2);
  RUN(test_gemm_transb_bias);
  RUN(test_matmul_batched_broadcast);
  RUN(test_maxpool_ceil_indices);
  RUN(test_avgpool_count_include_pad);
  RUN(test_global_average_pool);
  RUN(test_batchnorm);
  RUN(test_layernorm);
  RUN(test_instancenorm);
  RUN(test_softmax_opsets);
  RUN(test_reduce);
  RUN(test_argmax);
  return TEST_EXIT();
}

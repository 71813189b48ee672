// SPDX-License-Identifier: Apache-2.0
// Tests for the Gemm and MatMul kernels (targets/kernels/matmul.c): tiny graphs with constant
// inputs evaluated by the host JIT (mlcc_codegen_eval_node) and compared with plain C reference
// loops or literals computed with numpy (kernel_test_util.h).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "targets/kernels/kernel_test_util.h"

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

// Gemm over sizes around the vector widths and tile edges (1, 3, 8, 17, 33,
// 65), each transA/transB combination, alpha 1.5, beta 0.25, a [N] bias;
// double-accumulated reference.
static void test_gemm_sizes_and_transposes(void) {
  static const int sizes[][3] = {{1, 1, 1}, {3, 17, 8}, {8, 33, 65}, {17, 8, 3}, {65, 3, 33}};
  for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); ++si) {
    int M = sizes[si][0], K = sizes[si][1], N = sizes[si][2];
    for (int ta = 0; ta <= 1; ++ta)
      for (int tb = 0; tb <= 1; ++tb) {
        mlcc_graph_t* g = NULL;
        CHECK_OK(mlcc_graph_create(&g));
        if (!g) return;
        float* a = malloc(sizeof(float) * M * K);
        float* b = malloc(sizeof(float) * K * N);
        float* c = malloc(sizeof(float) * N);
        float* ref = malloc(sizeof(float) * M * N);
        fill(a, (int64_t)M * K);
        fill(b, (int64_t)K * N);
        fill(c, N);
        int64_t ad[2] = {ta ? K : M, ta ? M : K}, bd[2] = {tb ? N : K, tb ? K : N};
        int64_t cd[1] = {N}, yd[2] = {M, N};
        mlcc_attr_t at[4] = {a_int("transA", ta), a_int("transB", tb), a_float("alpha", 1.5f),
                             a_float("beta", 0.25f)};
        mlcc_value_t* ins[3] = {cstf(g, 2, ad, a), cstf(g, 2, bd, b), cstf(g, 1, cd, c)};
        const float* y = run1(g, MLCC_OP_GEMM, 13, ins, 3, at, 4, 2, yd);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            double acc = 0;
            for (int k = 0; k < K; ++k) {
              double av = ta ? a[k * M + i] : a[i * K + k];
              double bv = tb ? b[j * K + k] : b[k * N + j];
              acc += av * bv;
            }
            ref[i * N + j] = (float)(1.5 * acc + 0.25 * c[j]);
          }
        CHECK_CLOSE(y, ref, (int64_t)M * N);
        free(a);
        free(b);
        free(c);
        free(ref);
        mlcc_graph_destroy(g);
      }
  }
}

int main(void) {
  RUN(test_gemm_transb_bias);
  RUN(test_matmul_batched_broadcast);
  RUN(test_gemm_sizes_and_transposes);
  return TEST_EXIT();
}

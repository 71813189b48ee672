// SPDX-License-Identifier: Apache-2.0
// Helpers of the kernel tests that evaluate one node through the host JIT
// (conv_test.c, matmul_test.c, pool_test.c, norm_test.c, reduce_test.c):
// tiny graphs with constant inputs are evaluated by mlcc_codegen_eval_node and
// the float32 outputs compared with plain C reference loops (CHECK_CLOSE:
// |got - ref| <= 1e-5 + 1e-4 |ref|) or literals computed with numpy.
// Header-only: each test executable includes it once. Shapes are row-major
// int64 dims; the graph owns every value the helpers create.
#ifndef MLCC_TARGETS_KERNELS_KERNEL_TEST_UTIL_H_
#define MLCC_TARGETS_KERNELS_KERNEL_TEST_UTIL_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "test.h"

static uint32_t rng_state = 12345;
static inline float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static inline void fill(float* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = frand();
}

static inline mlcc_shape_t shp(int rank, const int64_t* dims) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  for (int i = 0; i < rank; ++i) s.dims[i] = dims[i];
  return s;
}

static int name_counter = 0;
static inline mlcc_value_t* cst(mlcc_graph_t* g, mlcc_dtype_t dt, int rank, const int64_t* dims,
                         const void* data) {
  char name[32];
  snprintf(name, sizeof(name), "c%d", name_counter++);
  mlcc_shape_t s = shp(rank, dims);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, name, dt, &s, data, true, &v));
  return v;
}
static inline mlcc_value_t* cstf(mlcc_graph_t* g, int rank, const int64_t* dims, const float* data) {
  return cst(g, MLCC_DTYPE_F32, rank, dims, data);
}

// Attributes by kind (the name and string are borrowed, not copied).
static inline mlcc_attr_t a_int(const char* name, int64_t v) {
  return (mlcc_attr_t){.name = name, .kind = MLCC_ATTR_INT, .i = v};
}
static inline mlcc_attr_t a_float(const char* name, float v) {
  return (mlcc_attr_t){.name = name, .kind = MLCC_ATTR_FLOAT, .f = v};
}
static inline mlcc_attr_t a_str(const char* name, const char* v) {
  return (mlcc_attr_t){.name = name, .kind = MLCC_ATTR_STRING, .s = v, .s_len = strlen(v)};
}
static inline mlcc_attr_t a_ints(mlcc_graph_t* g, const char* name, uint32_t n, const int64_t* v) {
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
static inline bool run(mlcc_graph_t* g, mlcc_op_t op, int opset, mlcc_value_t** ins, uint32_t nin,
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
static inline const float* run1(mlcc_graph_t* g, mlcc_op_t op, int opset, mlcc_value_t** ins,
                         uint32_t nin, const mlcc_attr_t* attrs, uint32_t nattr, int rank,
                         const int64_t* dims) {
  mlcc_shape_t want = shp(rank, dims);
  mlcc_dtype_t dt = MLCC_DTYPE_F32;
  mlcc_value_t* out = NULL;
  if (!run(g, op, opset, ins, nin, attrs, nattr, 1, &want, &dt, &out)) return NULL;
  return out->data;
}

static inline int close_all(const float* got, const float* ref, int64_t n, double atol, double rtol) {
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

#endif  // MLCC_TARGETS_KERNELS_KERNEL_TEST_UTIL_H_

// SPDX-License-Identifier: Apache-2.0
// Tests for the schedule spaces (targets/kernels/sched.c, the MatMul/Gemm
// space of targets/kernels/matmul.c): enumeration, validity, the kernel key
// (unchanged for the default schedule, different for any other, the tuning
// key independent of the schedule), and that every point of the space
// computes what the default schedule computes (host JIT,
// mlcc_codegen_eval_node) and what a plain C reference computes; for the
// Conv space both the depthwise and the pixel-vector (dense, grouped)
// kernels, with W in the ONNX layout and packed by pack-weights.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "targets/codegen/codegen.h"
#include "targets/kernels/conv_winograd.h"
#include "targets/kernels/kernels.h"
#include "test.h"

static uint32_t rng_state = 777;
static float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

// One product: MatMul [batch..., m, k] x [k, n], or Gemm with transB.
typedef struct mm_case_t {
  mlcc_op_t op;
  int64_t batch, m, k, n;
  int64_t trans_b;  // Gemm only
} mm_case_t;

typedef struct built_t {
  mlcc_graph_t* g;
  mlcc_node_t* node;
  mlcc_value_t* y;
  mlcc_kernel_t kernel;
  mlcc_node_t* nodes[1];
  uint32_t carried[1];
} built_t;

// Builds the case's node with constant inputs |a| and |b| (inferred).
static bool build(const mm_case_t* c, const float* a, const float* b, built_t* out) {
  memset(out, 0, sizeof(*out));
  CHECK_OK(mlcc_graph_create(&out->g));
  if (out->g == NULL) return false;
  mlcc_shape_t as = {0}, bs = {0};
  if (c->op == MLCC_OP_MATMUL) {
    as.rank = c->batch > 1 ? 3 : 2;
    int r = 0;
    if (c->batch > 1) as.dims[r++] = c->batch;
    as.dims[r++] = c->m;
    as.dims[r++] = c->k;
    bs.rank = 2;
    bs.dims[0] = c->k;
    bs.dims[1] = c->n;
  } else {
    as.rank = 2;
    as.dims[0] = c->m;
    as.dims[1] = c->k;
    bs.rank = 2;
    bs.dims[0] = c->trans_b ? c->n : c->k;
    bs.dims[1] = c->trans_b ? c->k : c->n;
  }
  mlcc_value_t* ins[2] = {NULL, NULL};
  CHECK_OK(mlcc_graph_add_constant(out->g, "a", MLCC_DTYPE_F32, &as, a, true, &ins[0]));
  CHECK_OK(mlcc_graph_add_constant(out->g, "b", MLCC_DTYPE_F32, &bs, b, true, &ins[1]));
  CHECK_OK(mlcc_graph_add_value(out->g, "y", MLCC_VALUE_INTERMEDIATE, &out->y));
  if (ins[0] == NULL || ins[1] == NULL || out->y == NULL) return false;
  mlcc_attr_t attr;
  memset(&attr, 0, sizeof(attr));
  attr.name = "transB";
  attr.kind = MLCC_ATTR_INT;
  attr.i = c->trans_b;
  bool gemm = c->op == MLCC_OP_GEMM;
  CHECK_OK(mlcc_graph_add_node(out->g, c->op, 13, "mm", ins, 2, &out->y, 1, gemm ? &attr : NULL,
                               gemm ? 1 : 0, &out->node));
  if (out->node == NULL) return false;
  mlcc_status_t s = mlcc_op_desc(c->op)->infer(out->node);
  CHECK_OK(s);
  if (s != NULL) return false;
  out->nodes[0] = out->node;
  out->kernel.n_nodes = 1;
  out->kernel.nodes = out->nodes;
  out->kernel.carried_input = out->carried;
  out->g->kernels = &out->kernel;
  out->g->n_kernels = 1;
  return true;
}

static void destroy(built_t* b) {
  if (b->g == NULL) return;
  b->g->kernels = NULL;
  b->g->n_kernels = 0;
  mlcc_graph_destroy(b->g);
}

// Y of the case under |sched| through the host JIT; malloc'ed, NULL on failure.
static float* eval(const mm_case_t* c, const float* a, const float* b,
                   const int32_t sched[MLCC_SCHED_MAX_PARAMS]) {
  built_t bt;
  if (!build(c, a, b, &bt)) {
    destroy(&bt);
    return NULL;
  }
  memcpy(bt.node->sched, sched, sizeof(bt.node->sched));
  bt.g->kernels = NULL;
  bt.g->n_kernels = 0;
  mlcc_status_t s = mlcc_codegen_eval_node(bt.g, bt.node);
  CHECK_OK(s);
  float* y = NULL;
  size_t n = (size_t)(c->batch * c->m * c->n);
  if (s == NULL && bt.y->data != NULL) {
    y = malloc(n * sizeof(float));
    if (y != NULL) memcpy(y, bt.y->data, n * sizeof(float));
  }
  destroy(&bt);
  return y;
}

static void reference(const mm_case_t* c, const float* a, const float* b, float* y) {
  for (int64_t t = 0; t < c->batch; ++t)
    for (int64_t i = 0; i < c->m; ++i)
      for (int64_t j = 0; j < c->n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < c->k; ++q) {
          double bv = c->trans_b ? b[j * c->k + q] : b[q * c->n + j];
          acc += (double)a[(t * c->m + i) * c->k + q] * bv;
        }
        y[(t * c->m + i) * c->n + j] = (float)acc;
      }
}

// Elements outside |d| <= 1e-4 + 1e-3 |want| (the tuner's own criterion,
// docs/tuning.md): Winograd's transforms round differently from a direct sum.
static int mismatches_loose(const float* got, const float* want, int64_t n) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = fabs((double)got[i] - (double)want[i]);
    if (!(d <= 1e-4 + 1e-3 * fabs((double)want[i]))) ++bad;
  }
  return bad;
}

static int mismatches(const float* got, const float* want, int64_t n) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = fabs((double)got[i] - (double)want[i]);
    if (!(d <= 1e-5 + 1e-4 * fabs((double)want[i]))) ++bad;
  }
  return bad;
}

// The JIT's target (a baseline x86-64 or the host's default) for the space.
static mlcc_target_t jit_target(void) {
  mlcc_target_t t;
  memset(&t, 0, sizeof(t));
#if defined(__x86_64__)
  mlcc_status_t s = mlcc_target_resolve(NULL, "x86-64", NULL, &t);
#else
  mlcc_status_t s = mlcc_target_resolve(NULL, NULL, NULL, &t);
#endif
  CHECK_OK(s);
  return t;
}

enum { kMaxPoints = 512 };

// Enumerates the case's space on the JIT's target; every point is valid,
// the first is the default, and every point (every |stride|-th, so the test
// stays short) gives the default's output and the reference's.
static void space_case(mm_case_t c, uint32_t stride, uint32_t min_points) {
  int64_t an = c.batch * c.m * c.k, bn = c.k * c.n, yn = c.batch * c.m * c.n;
  float* a = malloc(sizeof(float) * an);
  float* b = malloc(sizeof(float) * bn);
  float* ref = malloc(sizeof(float) * yn);
  int32_t(*pts)[MLCC_SCHED_MAX_PARAMS] = calloc(kMaxPoints, sizeof(*pts));
  if (!a || !b || !ref || !pts) {
    CHECK(false);
    free(a), free(b), free(ref), free(pts);
    return;
  }
  for (int64_t i = 0; i < an; ++i) a[i] = frand();
  for (int64_t i = 0; i < bn; ++i) b[i] = frand();
  reference(&c, a, b, ref);
  mlcc_target_t t = jit_target();
  built_t bt;
  if (build(&c, a, b, &bt)) {
    uint32_t n = mlcc_sched_enumerate(bt.node, &t, pts, kMaxPoints);
    CHECK(n >= min_points);
    CHECK(n <= kMaxPoints);
    if (n > kMaxPoints) n = kMaxPoints;
    CHECK(mlcc_sched_is_default(pts[0]));
    for (uint32_t i = 0; i < n; ++i) CHECK(mlcc_sched_valid(bt.node, &t, pts[i]));
    int32_t bad[MLCC_SCHED_MAX_PARAMS] = {99, 0, 0, 0};
    CHECK(!mlcc_sched_valid(bt.node, &t, bad));
    int32_t bad_param[MLCC_SCHED_MAX_PARAMS] = {0, 0, 0, 1};  // no fourth parameter
    CHECK(!mlcc_sched_valid(bt.node, &t, bad_param));
    float* def = eval(&c, a, b, pts[0]);
    CHECK(def != NULL && mismatches(def, ref, yn) == 0);
    uint32_t tried = 0;
    for (uint32_t i = 1; def != NULL && i < n; i += stride) {
      float* y = eval(&c, a, b, pts[i]);
      char desc[96];
      mlcc_sched_format(bt.node, pts[i], desc, sizeof(desc));
      int bad_ref = y ? mismatches(y, ref, yn) : -1;
      int bad_def = y ? mismatches(y, def, yn) : -1;
      if (bad_ref != 0 || bad_def != 0) {
        fprintf(stderr, "  %s [%lld,%lld,%lld] %s: %d vs reference, %d vs default\n",
                mlcc_op_name(c.op), (long long)c.m, (long long)c.k, (long long)c.n, desc,
                bad_ref, bad_def);
      }
      CHECK(bad_ref == 0 && bad_def == 0);
      free(y);
      ++tried;
    }
    CHECK(tried > 0);
    free(def);
  }
  destroy(&bt);
  free(a), free(b), free(ref), free(pts);
}

static void test_matmul_space_vector_path(void) {
  mm_case_t c = {MLCC_OP_MATMUL, 1, 13, 37, 45, 0};
  space_case(c, 3, 8);
}

static void test_matmul_space_batched(void) {
  mm_case_t c = {MLCC_OP_MATMUL, 3, 5, 16, 24, 0};
  space_case(c, 4, 4);
}

static void test_gemm_space_transposed_b(void) {
  mm_case_t c = {MLCC_OP_GEMM, 1, 7, 33, 20, 1};
  space_case(c, 1, 4);
}

static void test_gemm_space_plain(void) {
  mm_case_t c = {MLCC_OP_GEMM, 1, 9, 21, 40, 0};
  space_case(c, 3, 4);
}


// Depthwise Conv [1, C, H, W] with 3x3 kernels, pads 1, stride |s|: every
// point of the Conv space gives the default's output and a C reference's.
static float* eval_dw(int64_t c, int64_t h, int64_t w, int64_t st, const float* x,
                      const float* wt, const float* b, const int32_t* sched, int64_t* out_n,
                      uint32_t* out_points, int32_t (*pts)[MLCC_SCHED_MAX_PARAMS]) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return NULL;
  mlcc_shape_t xs = {.rank = 4, .dims = {1, c, h, w}}, ws = {.rank = 4, .dims = {c, 1, 3, 3}},
               bs = {.rank = 1, .dims = {c}};
  mlcc_value_t* ins[3] = {NULL, NULL, NULL};
  mlcc_value_t* y = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "x", MLCC_DTYPE_F32, &xs, x, true, &ins[0]));
  CHECK_OK(mlcc_graph_add_constant(g, "w", MLCC_DTYPE_F32, &ws, wt, true, &ins[1]));
  CHECK_OK(mlcc_graph_add_constant(g, "b", MLCC_DTYPE_F32, &bs, b, true, &ins[2]));
  CHECK_OK(mlcc_graph_add_value(g, "y", MLCC_VALUE_INTERMEDIATE, &y));
  static const int64_t k33[2] = {3, 3}, pads[4] = {1, 1, 1, 1};
  int64_t strides[2] = {st, st};
  mlcc_attr_t attrs[4];
  memset(attrs, 0, sizeof(attrs));
  attrs[0].name = "group";
  attrs[0].kind = MLCC_ATTR_INT;
  attrs[0].i = c;
  attrs[1].name = "kernel_shape";
  attrs[1].kind = MLCC_ATTR_INTS;
  attrs[1].count = 2;
  attrs[1].ints = k33;
  attrs[2].name = "pads";
  attrs[2].kind = MLCC_ATTR_INTS;
  attrs[2].count = 4;
  attrs[2].ints = pads;
  attrs[3].name = "strides";
  attrs[3].kind = MLCC_ATTR_INTS;
  attrs[3].count = 2;
  attrs[3].ints = strides;
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONV, 11, "dw", ins, 3, &y, 1, attrs, 4, &n));
  float* out = NULL;
  if (n != NULL && ins[0] && ins[1] && ins[2]) {
    CHECK_OK(mlcc_op_desc(MLCC_OP_CONV)->infer(n));
    if (out_points != NULL) {
      mlcc_target_t t = jit_target();
      *out_points = mlcc_sched_enumerate(n, &t, pts, kMaxPoints);
      for (uint32_t i = 0; i < *out_points && i < kMaxPoints; ++i) {
        CHECK(mlcc_sched_valid(n, &t, pts[i]));
      }
    }
    memcpy(n->sched, sched, sizeof(n->sched));
    mlcc_status_t es = mlcc_codegen_eval_node(g, n);
    CHECK_OK(es);
    *out_n = mlcc_shape_numel_unchecked(&y->shape);
    if (es == NULL && y->data != NULL) {
      out = malloc((size_t)*out_n * sizeof(float));
      if (out != NULL) memcpy(out, y->data, (size_t)*out_n * sizeof(float));
    }
  }
  mlcc_graph_destroy(g);
  return out;
}

static void dw_case(int64_t c, int64_t h, int64_t w, int64_t st, uint32_t min_points) {
  float* x = malloc(sizeof(float) * c * h * w);
  float* wt = malloc(sizeof(float) * c * 9);
  float* b = malloc(sizeof(float) * c);
  int32_t(*pts)[MLCC_SCHED_MAX_PARAMS] = calloc(kMaxPoints, sizeof(*pts));
  if (!x || !wt || !b || !pts) {
    CHECK(false);
    free(x), free(wt), free(b), free(pts);
    return;
  }
  for (int64_t i = 0; i < c * h * w; ++i) x[i] = frand();
  for (int64_t i = 0; i < c * 9; ++i) wt[i] = frand();
  for (int64_t i = 0; i < c; ++i) b[i] = frand();
  int64_t oh = (h + 2 - 3) / st + 1, ow = (w + 2 - 3) / st + 1;
  float* ref = malloc(sizeof(float) * c * oh * ow);
  for (int64_t ch = 0; ch < c && ref; ++ch)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double acc = b[ch];
        for (int64_t ki = 0; ki < 3; ++ki)
          for (int64_t kj = 0; kj < 3; ++kj) {
            int64_t ii = i * st - 1 + ki, jj = j * st - 1 + kj;
            if (ii < 0 || ii >= h || jj < 0 || jj >= w) continue;
            acc += (double)x[(ch * h + ii) * w + jj] * wt[ch * 9 + ki * 3 + kj];
          }
        ref[(ch * oh + i) * ow + j] = (float)acc;
      }
  int32_t zero[MLCC_SCHED_MAX_PARAMS] = {0};
  int64_t n = 0;
  uint32_t npts = 0;
  float* def = eval_dw(c, h, w, st, x, wt, b, zero, &n, &npts, pts);
  CHECK(npts >= min_points);
  CHECK(def != NULL && ref != NULL && n == c * oh * ow && mismatches(def, ref, n) == 0);
  for (uint32_t i = 1; def != NULL && i < npts && i < kMaxPoints; ++i) {
    int64_t n2 = 0;
    float* y = eval_dw(c, h, w, st, x, wt, b, pts[i], &n2, NULL, NULL);
    int bad = y && n2 == n ? mismatches(y, def, n) + mismatches(y, ref, n) : -1;
    if (bad != 0) {
      fprintf(stderr, "  depthwise point width=%d rows=%d: %d mismatches\n", (int)pts[i][0],
              (int)pts[i][1], bad);
    }
    CHECK(bad == 0);
    free(y);
  }
  free(def), free(ref), free(x), free(wt), free(b), free(pts);
}

static void test_conv_depthwise_space(void) {
  dw_case(6, 11, 37, 1, 5);  // widths 4, 8 on the x86-64 JIT (SSE lanes: 4 only) x rows 1..4
  dw_case(5, 12, 30, 2, 3);
}

// Dense or grouped 2-D Conv [1, C, H, W] x [M, C/group, K, K] (pads |pad|,
// stride |st|) with a bias, for the pixel-vector kernel's points.
typedef struct dc_case_t {
  int64_t c, m, group, h, w, k, st, pad;
  bool pack;      // run pack-weights (the packed_mr layout of the default plan)
  bool winograd;  // let pack-weights pick the Winograd layout (and check it did)
  bool wide;      // plan for 64-byte vectors (x86 AVX-512: the channel-vector kernel)
} dc_case_t;

static int64_t dc_out(const dc_case_t* d, int64_t in) {
  return (in + 2 * d->pad - d->k) / d->st + 1;
}

// Evaluates the case's Conv with schedule |sched| (host JIT); with
// |out_points| also enumerates its space (checking every point is valid and
// that a point outside the registers is not). Returns the output (malloc'ed)
// or NULL.
static float* eval_dc(const dc_case_t* d, const float* x, const float* wt, const float* b,
                      const int32_t* sched, uint32_t* out_points,
                      int32_t (*pts)[MLCC_SCHED_MAX_PARAMS]) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return NULL;
  int64_t cg = d->c / d->group;
  mlcc_shape_t xs = {.rank = 4, .dims = {1, d->c, d->h, d->w}},
               ws = {.rank = 4, .dims = {d->m, cg, d->k, d->k}}, bs = {.rank = 1, .dims = {d->m}};
  mlcc_value_t* ins[3] = {NULL, NULL, NULL};
  mlcc_value_t* y = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "x", MLCC_DTYPE_F32, &xs, x, true, &ins[0]));
  CHECK_OK(mlcc_graph_add_constant(g, "w", MLCC_DTYPE_F32, &ws, wt, true, &ins[1]));
  CHECK_OK(mlcc_graph_add_constant(g, "b", MLCC_DTYPE_F32, &bs, b, true, &ins[2]));
  CHECK_OK(mlcc_graph_add_value(g, "y", MLCC_VALUE_INTERMEDIATE, &y));
  int64_t ks[2] = {d->k, d->k}, pads[4] = {d->pad, d->pad, d->pad, d->pad},
          strides[2] = {d->st, d->st};
  mlcc_attr_t attrs[4];
  memset(attrs, 0, sizeof(attrs));
  attrs[0].name = "group";
  attrs[0].kind = MLCC_ATTR_INT;
  attrs[0].i = d->group;
  attrs[1].name = "kernel_shape";
  attrs[1].kind = MLCC_ATTR_INTS;
  attrs[1].count = 2;
  attrs[1].ints = ks;
  attrs[2].name = "pads";
  attrs[2].kind = MLCC_ATTR_INTS;
  attrs[2].count = 4;
  attrs[2].ints = pads;
  attrs[3].name = "strides";
  attrs[3].kind = MLCC_ATTR_INTS;
  attrs[3].count = 2;
  attrs[3].ints = strides;
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONV, 11, "conv", ins, 3, &y, 1, attrs, 4, &n));
  float* out = NULL;
  if (n != NULL && ins[0] && ins[1] && ins[2]) {
    CHECK_OK(mlcc_op_desc(MLCC_OP_CONV)->infer(n));
    mlcc_target_t t = jit_target();
    if (d->wide) t.vector_bytes = 64;
    if (d->pack) {
      mlcc_pass_ctx_t pctx;
      memset(&pctx, 0, sizeof(pctx));
      pctx.target = &t;
      pctx.no_winograd = !d->winograd;
      bool changed = false;
      CHECK_OK(mlcc_pass_pack_weights(&pctx, g, &changed));
      CHECK(changed);
      CHECK(mlcc_conv_is_winograd(n) == d->winograd);
    }
    if (out_points != NULL) {
      *out_points = mlcc_sched_enumerate(n, &t, pts, kMaxPoints);
      for (uint32_t i = 0; i < *out_points && i < kMaxPoints; ++i) {
        CHECK(mlcc_sched_valid(n, &t, pts[i]));
        // Winograd: rows and vectors; channel vectors: width and vectors;
        // pixel vectors: vectors and block.
        if (d->winograd) {
          CHECK(pts[i][0] == 0 && pts[i][3] == 0);
        } else if (d->wide) {
          CHECK(pts[i][1] == 0 && pts[i][3] == 0);
        } else {
          CHECK(pts[i][0] == 0 && pts[i][1] == 0);
        }
      }
      int32_t spill[MLCC_SCHED_MAX_PARAMS] = {0, 0, 4, 4};  // 16 + 4 + 1 > 16 registers
      CHECK(!mlcc_sched_valid(n, &t, spill));
      int32_t width_only[MLCC_SCHED_MAX_PARAMS] = {4, 0, 0, 0};
      CHECK(mlcc_sched_valid(n, &t, width_only) == d->wide);
    }
    memcpy(n->sched, sched, sizeof(n->sched));
    mlcc_status_t es = mlcc_codegen_eval_node_planned(g, n, t.vector_bytes);
    CHECK_OK(es);
    int64_t yn = mlcc_shape_numel_unchecked(&y->shape);
    if (es == NULL && y->data != NULL) {
      out = malloc((size_t)yn * sizeof(float));
      if (out != NULL) memcpy(out, y->data, (size_t)yn * sizeof(float));
    }
  }
  mlcc_graph_destroy(g);
  return out;
}

// Every |stride|-th point is evaluated (the test stays short).
static void dc_case(dc_case_t d, uint32_t min_points, uint32_t stride) {
  int64_t cg = d.c / d.group, mg = d.m / d.group;
  int64_t oh = dc_out(&d, d.h), ow = dc_out(&d, d.w);
  int64_t xn = d.c * d.h * d.w, wn = d.m * cg * d.k * d.k, yn = d.m * oh * ow;
  float* x = malloc(sizeof(float) * xn);
  float* wt = malloc(sizeof(float) * wn);
  float* b = malloc(sizeof(float) * d.m);
  float* ref = malloc(sizeof(float) * yn);
  int32_t(*pts)[MLCC_SCHED_MAX_PARAMS] = calloc(kMaxPoints, sizeof(*pts));
  if (!x || !wt || !b || !ref || !pts) {
    CHECK(false);
    free(x), free(wt), free(b), free(ref), free(pts);
    return;
  }
  for (int64_t i = 0; i < xn; ++i) x[i] = frand();
  for (int64_t i = 0; i < wn; ++i) wt[i] = frand();
  for (int64_t i = 0; i < d.m; ++i) b[i] = frand();
  for (int64_t oc = 0; oc < d.m; ++oc) {
    int64_t gi = oc / mg;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double acc = b[oc];
        for (int64_t ic = 0; ic < cg; ++ic)
          for (int64_t ki = 0; ki < d.k; ++ki)
            for (int64_t kj = 0; kj < d.k; ++kj) {
              int64_t ii = i * d.st - d.pad + ki, jj = j * d.st - d.pad + kj;
              if (ii < 0 || ii >= d.h || jj < 0 || jj >= d.w) continue;
              acc += (double)x[((gi * cg + ic) * d.h + ii) * d.w + jj] *
                     wt[((oc * cg + ic) * d.k + ki) * d.k + kj];
            }
        ref[(oc * oh + i) * ow + j] = (float)acc;
      }
  }
  int32_t zero[MLCC_SCHED_MAX_PARAMS] = {0};
  uint32_t npts = 0;
  float* def = eval_dc(&d, x, wt, b, zero, &npts, pts);
  if (npts < min_points) {
    fprintf(stderr, "  conv C=%lld M=%lld: %u points, want %u\n", (long long)d.c,
            (long long)d.m, npts, min_points);
  }
  CHECK(npts >= min_points);
  int (*vs_ref)(const float*, const float*, int64_t) = d.winograd ? mismatches_loose : mismatches;
  CHECK(def != NULL && vs_ref(def, ref, yn) == 0);
  for (uint32_t i = 1; def != NULL && i < npts && i < kMaxPoints; i += stride) {
    float* y = eval_dc(&d, x, wt, b, pts[i], NULL, NULL);
    int bad = y ? mismatches(y, def, yn) + vs_ref(y, ref, yn) : -1;
    if (bad != 0) {
      fprintf(stderr, "  conv C=%lld M=%lld group=%lld k=%lld s=%lld%s rows=%d vectors=%d "
              "block=%d: %d mismatches\n", (long long)d.c, (long long)d.m,
              (long long)d.group, (long long)d.k, (long long)d.st,
              d.winograd ? " winograd" : d.pack ? " packed" : "", (int)pts[i][1],
              (int)pts[i][2], (int)pts[i][3], bad);
    }
    CHECK(bad == 0);
    free(y);
  }
  free(def), free(ref), free(x), free(wt), free(b), free(pts);
}

// On the JIT's x86-64 target (8 lanes, 16 registers): vectors 1..4 x block
// 1..16 within the registers. Packed layouts: 1x1 with M = 40 (the default
// block, 5, divides M; blocks of 1 and 5 share a packed block, 2..4 and 6+
// straddle them), 3x3 stride 2 with M = 14 (default block 6, a last packed
// block of 2: run-time block widths) and grouped (6 channels per group);
// the ONNX layout through a 5x5 without pack-weights.
static void test_conv_dense_space(void) {
  dc_case((dc_case_t){.c = 24, .m = 40, .group = 1, .h = 10, .w = 10, .k = 1, .st = 1,
                      .pad = 0, .pack = true}, 20, 3);
  dc_case((dc_case_t){.c = 8, .m = 14, .group = 1, .h = 13, .w = 13, .k = 3, .st = 2,
                      .pad = 1, .pack = true}, 20, 3);
  dc_case((dc_case_t){.c = 8, .m = 12, .group = 2, .h = 9, .w = 9, .k = 3, .st = 1,
                      .pad = 1, .pack = true}, 8, 2);
  dc_case((dc_case_t){.c = 6, .m = 9, .group = 1, .h = 11, .w = 12, .k = 5, .st = 1,
                      .pad = 2, .pack = false}, 10, 3);
}

// The Winograd kernel's rows (tile rows per block) and vectors (per GEMM
// chunk), W in the Winograd layout from pack-weights.
static void test_conv_winograd_space(void) {
  dc_case((dc_case_t){.c = 32, .m = 24, .group = 1, .h = 20, .w = 20, .k = 3, .st = 1,
                      .pad = 1, .pack = true, .winograd = true}, 6, 1);
}

// The channel-vector kernel (planned for 64-byte vectors, as on AVX-512):
// width (columns per segment) and vectors (channel vectors per block, a
// divisor of the packed block): a 7x7 3x3 layer with blocks of 32 packed,
// a narrow 1x1 (25 pixels), and a strided 3x3 in the ONNX layout (blocks of
// 48 channels: vectors 1 and 3).
static void test_conv_channel_vector_space(void) {
#if defined(__x86_64__)
  dc_case((dc_case_t){.c = 16, .m = 64, .group = 1, .h = 7, .w = 7, .k = 3, .st = 1,
                      .pad = 1, .pack = true, .wide = true}, 15, 2);
  dc_case((dc_case_t){.c = 32, .m = 32, .group = 1, .h = 5, .w = 5, .k = 1, .st = 1,
                      .pad = 0, .pack = true, .wide = true}, 10, 2);
  dc_case((dc_case_t){.c = 8, .m = 48, .group = 1, .h = 14, .w = 14, .k = 3, .st = 2,
                      .pad = 1, .pack = false, .wide = true}, 15, 2);
#endif
}

// The default schedule leaves the kernel key as it is; any other changes it
// and comes back when reset; the tuning keys ignore the schedule and the
// exact-CPU key differs from the features-only key.
static void test_key_default_unchanged(void) {
  mm_case_t c = {MLCC_OP_MATMUL, 1, 8, 16, 32, 0};
  float a[8 * 16] = {0}, b[16 * 32] = {0};
  built_t bt;
  if (!build(&c, a, b, &bt)) {
    destroy(&bt);
    return;
  }
  mlcc_target_t t = jit_target();
  mlcc_codegen_options_t o = {.target = &t, .opt_level = 2, .name = "m"};
  char k0[65], k1[65], k2[65], tk0[65], tk1[65], tf0[65];
  CHECK_OK(mlcc_codegen_kernel_key(bt.g, 0, &o, k0));
  CHECK_OK(mlcc_codegen_tune_key(bt.g, 0, &o, true, tk0));
  CHECK_OK(mlcc_codegen_tune_key(bt.g, 0, &o, false, tf0));
  CHECK(strcmp(tk0, tf0) != 0);
  CHECK(strcmp(k0, tk0) != 0);
  bt.node->sched[0] = 2;
  bt.node->sched[1] = 1;
  CHECK(mlcc_sched_valid(bt.node, &t, bt.node->sched));
  CHECK_OK(mlcc_codegen_kernel_key(bt.g, 0, &o, k1));
  CHECK_OK(mlcc_codegen_tune_key(bt.g, 0, &o, true, tk1));
  CHECK(strcmp(k0, k1) != 0);
  CHECK_STREQ(tk0, tk1);
  char desc[64];
  CHECK_STREQ(mlcc_sched_format(bt.node, bt.node->sched, desc, sizeof(desc)),
              "rows=2,vectors=1");
  memset(bt.node->sched, 0, sizeof(bt.node->sched));
  CHECK_OK(mlcc_codegen_kernel_key(bt.g, 0, &o, k2));
  CHECK_STREQ(k0, k2);
  CHECK_STREQ(mlcc_sched_format(bt.node, bt.node->sched, desc, sizeof(desc)), "default");
  destroy(&bt);
}

// An op without a space has exactly one point, and only the default is valid.
static void test_untunable_op(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  float x[4] = {1, -1, 2, -2};
  mlcc_shape_t s = {.rank = 1, .dims = {4}};
  mlcc_value_t *in = NULL, *out = NULL;
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "x", MLCC_DTYPE_F32, &s, x, true, &in));
  CHECK_OK(mlcc_graph_add_value(g, "y", MLCC_VALUE_INTERMEDIATE, &out));
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_RELU, 14, "r", &in, 1, &out, 1, NULL, 0, &n));
  if (n != NULL) {
    mlcc_target_t t = jit_target();
    CHECK(mlcc_sched_space(n) == NULL);
    CHECK_EQ_INT(mlcc_sched_enumerate(n, &t, NULL, 0), 1);
    int32_t one[MLCC_SCHED_MAX_PARAMS] = {1, 0, 0, 0};
    CHECK(!mlcc_sched_valid(n, &t, one));
    CHECK(mlcc_sched_valid(n, &t, n->sched));
  }
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_matmul_space_vector_path);
  RUN(test_matmul_space_batched);
  RUN(test_gemm_space_transposed_b);
  RUN(test_gemm_space_plain);
  RUN(test_conv_depthwise_space);
  RUN(test_conv_dense_space);
  RUN(test_conv_winograd_space);
  RUN(test_conv_channel_vector_space);
  RUN(test_key_default_unchanged);
  RUN(test_untunable_op);
  return TEST_EXIT();
}

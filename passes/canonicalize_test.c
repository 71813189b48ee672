// SPDX-License-Identifier: Apache-2.0
// Unit tests for the canonicalize pass (decomposed LayerNorm) and for
// plan-memory's Concat in place, on hand-built graphs with shapes set by hand.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/verify.h"
#include "passes/pass.h"
#include "passes/pass_test_util.h"

static mlcc_node_t* node_a(mlcc_graph_t* g, mlcc_op_t op, const char* name,
                           mlcc_value_t* const* ins, uint32_t n_in, mlcc_value_t* out,
                           const mlcc_attr_t* attrs, uint32_t n_attrs) {
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, op, 13, name, ins, n_in, &out, 1, attrs, n_attrs, &n));
  return n;
}

static mlcc_node_t* bin(mlcc_graph_t* g, mlcc_op_t op, const char* name, mlcc_value_t* a,
                        mlcc_value_t* b, mlcc_value_t* out) {
  mlcc_value_t* ins[2] = {a, b};
  return node_a(g, op, name, ins, 2, out, NULL, 0);
}

static const int64_t kLastAxis[1] = {-1};
static const int64_t kAxis0[1] = {0};

static mlcc_node_t* mean(mlcc_graph_t* g, const char* name, mlcc_value_t* x, mlcc_value_t* out,
                         const int64_t* axes) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = "axes";
  a.kind = MLCC_ATTR_INTS;
  a.count = 1;
  a.ints = axes;
  return node_a(g, MLCC_OP_REDUCE_MEAN, name, &x, 1, out, &a, 1);
}

static uint32_t count_live(const mlcc_graph_t* g, mlcc_op_t op) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->n_nodes; ++i) n += !g->nodes[i]->dead && g->nodes[i]->op == op;
  return n;
}

// Builds x -> decomposed LayerNorm over the last axis (-> gamma, beta when
// asked) -> Relu -> output. |square_by_mul| uses Mul(d, d) instead of Pow.
static mlcc_graph_t* build_ln(bool gamma, bool beta, bool square_by_mul, const int64_t* axes,
                              bool d_is_output) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  mlcc_shape_t s = shp(3, 2, 4, 8, 0), r = shp(3, 2, 4, 1, 0), p = shp(1, 8, 0, 0, 0);
  if (axes == kAxis0) r = shp(3, 1, 4, 8, 0);
  static const float two = 2.0f, eps = 1e-5f;
  static const float gv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, bv[8] = {0};
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* m = val(g, "m", r);
  mean(g, "mean0", x, m, axes);
  mlcc_value_t* d = val(g, "d", s);
  bin(g, MLCC_OP_SUB, "sub", x, m, d);
  mlcc_value_t* sq = val(g, "sq", s);
  if (square_by_mul) {
    bin(g, MLCC_OP_MUL, "sq", d, d, sq);
  } else {
    bin(g, MLCC_OP_POW, "pow", d, cst(g, "two", shp(0, 0, 0, 0, 0), &two), sq);
  }
  mlcc_value_t* v = val(g, "v", r);
  mean(g, "mean1", sq, v, axes);
  mlcc_value_t* ve = val(g, "ve", r);
  bin(g, MLCC_OP_ADD, "addeps", v, cst(g, "eps", shp(0, 0, 0, 0, 0), &eps), ve);
  mlcc_value_t* sd = val(g, "sd", r);
  node_a(g, MLCC_OP_SQRT, "sqrt", &ve, 1, sd, NULL, 0);
  mlcc_value_t* y = val(g, "n", s);
  bin(g, MLCC_OP_DIV, "div", d, sd, y);
  if (gamma) {
    mlcc_value_t* y2 = val(g, "g_out", s);
    bin(g, MLCC_OP_MUL, "mul", cst(g, "gamma", p, gv), y, y2);  // gamma first
    y = y2;
  }
  if (beta) {
    mlcc_value_t* y3 = val(g, "b_out", s);
    bin(g, MLCC_OP_ADD, "add", y, cst(g, "beta", p, bv), y3);
    y = y3;
  }
  mlcc_value_t* out = val(g, "out", s);
  node_a(g, MLCC_OP_RELU, "relu", &y, 1, out, NULL, 0);
  mark_output(g, out);
  if (d_is_output) mark_output(g, d);
  return g;
}

static mlcc_status_t run_canon(mlcc_graph_t* g, bool* changed) {
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opt_level = 2;
  MLCC_RETURN_IF_ERROR(mlcc_pass_canonicalize(&ctx, g, changed));
  return mlcc_graph_verify(g, true);
}

static void test_layernorm_rewritten(void) {
  for (int variant = 0; variant < 4; ++variant) {
    bool gamma = variant != 1, beta = variant != 2, by_mul = variant == 3;
    mlcc_graph_t* g = build_ln(gamma, beta, by_mul, kLastAxis, false);
    bool changed = false;
    CHECK_OK(run_canon(g, &changed));
    CHECK(changed);
    CHECK_EQ_INT(count_live(g, MLCC_OP_LAYER_NORMALIZATION), 1);
    CHECK_EQ_INT(count_live(g, MLCC_OP_REDUCE_MEAN), 0);
    CHECK_EQ_INT(g->n_nodes, 2);  // LayerNormalization, Relu
    const mlcc_node_t* ln = g->nodes[0];
    CHECK_EQ_INT(ln->op, MLCC_OP_LAYER_NORMALIZATION);
    CHECK_EQ_INT(ln->opset, 17);
    CHECK_EQ_INT(ln->n_inputs, beta ? 3 : 2);
    CHECK_STREQ(ln->inputs[0]->name, "x");
    // Without gamma the scale is a constant of ones.
    const float* sc = (const float*)ln->inputs[1]->data;
    CHECK(sc != NULL);
    if (sc != NULL) CHECK(sc[1] == (gamma ? 2.0f : 1.0f));
    float eps = 0;
    CHECK_OK(mlcc_node_attr_float(ln, "epsilon", 0, &eps));
    CHECK(eps == 1e-5f);
    // The LayerNorm writes the value the Relu reads.
    CHECK(g->nodes[1]->inputs[0] == ln->outputs[0]);
    CHECK(ln->outputs[0]->producer == ln);
    mlcc_graph_destroy(g);
  }
}

static void test_layernorm_near_misses_kept(void) {
  // Reducing another axis, or an internal value that is a graph output.
  // (Only its Pow(d, 2) becomes Mul(d, d).)
  mlcc_graph_t* g = build_ln(true, true, false, kAxis0, false);
  bool changed = false;
  CHECK_OK(run_canon(g, &changed));
  CHECK(changed);
  CHECK_EQ_INT(count_live(g, MLCC_OP_REDUCE_MEAN), 2);
  CHECK_EQ_INT(count_live(g, MLCC_OP_LAYER_NORMALIZATION), 0);
  CHECK_EQ_INT(count_live(g, MLCC_OP_POW), 0);
  mlcc_graph_destroy(g);
  g = build_ln(true, true, false, kLastAxis, true);
  changed = false;
  CHECK_OK(run_canon(g, &changed));
  CHECK_EQ_INT(count_live(g, MLCC_OP_LAYER_NORMALIZATION), 0);
  // With the centered d kept as an output, d / sqrt(mean(d^2) + eps) is still an RMSNorm
  // of d: that tail becomes RMSNormalization, the centering (Sub) stays.
  CHECK(changed);
  CHECK_EQ_INT(count_live(g, MLCC_OP_RMS_NORMALIZATION), 1);
  CHECK_EQ_INT(count_live(g, MLCC_OP_SUB), 1);
  mlcc_graph_destroy(g);
}

// x -> Pow(x, e) -> output: e = 2 (a constant float32) becomes Mul(x, x);
// e = 3 and a run-time exponent stay Pow.
static void test_pow_square(void) {
  static const float two = 2.0f, three = 3.0f;
  for (int variant = 0; variant < 3; ++variant) {
    mlcc_graph_t* g = NULL;
    CHECK_OK(mlcc_graph_create(&g));
    mlcc_shape_t s = shp(3, 2, 4, 8, 0);
    mlcc_value_t* x = input(g, "x", s);
    mlcc_value_t* e = variant == 0   ? cst(g, "two", shp(0, 0, 0, 0, 0), &two)
                      : variant == 1 ? cst(g, "three", shp(1, 1, 0, 0, 0), &three)
                                     : input(g, "e", shp(0, 0, 0, 0, 0));
    mlcc_value_t* y = val(g, "y", s);
    bin(g, MLCC_OP_POW, "pow", x, e, y);
    mark_output(g, y);
    bool changed = false;
    CHECK_OK(run_canon(g, &changed));
    CHECK(changed == (variant == 0));
    CHECK_EQ_INT(count_live(g, MLCC_OP_POW), variant == 0 ? 0 : 1);
    CHECK_EQ_INT(count_live(g, MLCC_OP_MUL), variant == 0 ? 1 : 0);
    if (variant == 0) {
      const mlcc_node_t* m = g->nodes[0];
      CHECK(m->inputs[0] == x && m->inputs[1] == x);
      CHECK(m->outputs[0] == y && y->producer == m);
      CHECK_STREQ(m->name, "pow");
    }
    mlcc_graph_destroy(g);
  }
}

// x -> Relu a, Sigmoid b -> Concat(a, b, axis 1) -> Softmax: a and b live in
// the Concat's slot at their slabs.
static void test_concat_in_place(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  mlcc_shape_t s = shp(4, 1, 3, 4, 4), c = shp(4, 1, 6, 4, 4);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  node_a(g, MLCC_OP_RELU, "ra", &x, 1, a, NULL, 0);
  node_a(g, MLCC_OP_SIGMOID, "rb", &x, 1, b, NULL, 0);
  mlcc_value_t* cat = val(g, "cat", c);
  mlcc_attr_t ax;
  memset(&ax, 0, sizeof(ax));
  ax.name = "axis";
  ax.kind = MLCC_ATTR_INT;
  ax.i = 1;
  mlcc_value_t* ins[2] = {a, b};
  node_a(g, MLCC_OP_CONCAT, "cat", ins, 2, cat, &ax, 1);
  mlcc_value_t* out = val(g, "out", c);
  node_a(g, MLCC_OP_SOFTMAX, "sm", &cat, 1, out, NULL, 0);  // not fusable
  mark_output(g, out);
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opt_level = 2;
  mlcc_pass_id_t ids[2] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK(cat->ws_offset >= 0);
  CHECK_EQ_INT(a->ws_offset, cat->ws_offset);
  CHECK_EQ_INT(b->ws_offset, cat->ws_offset + 3 * 16 * 4);
  CHECK(g->workspace_size >= 6 * 16 * 4);
  CHECK(g->workspace_size < 2 * 6 * 16 * 4);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_layernorm_rewritten);
  RUN(test_layernorm_near_misses_kept);
  RUN(test_pow_square);
  RUN(test_concat_in_place);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Unit tests for the fuse pass (passes/fuse.c): which nodes form one kernel
// (anchor plus epilogue chain), the carried inputs, Reshape aliases, -O0.
#include <stdio.h>
#include <stdlib.h>

#include "passes/pass_test_util.h"

//===----------------------------------------------------------------------===//
// fuse
//===----------------------------------------------------------------------===//

// Conv -> Add(residual) -> Relu -> y, plus a conv whose output has 2 users.
static void test_fuse_conv_add_relu(void) {
  mlcc_graph_t* g = new_graph();
  float w[4] = {1, 2, 3, 4};
  mlcc_shape_t s = shp(4, 1, 2, 4, 4);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* res = input(g, "res", s);
  mlcc_value_t* wv = cst(g, "W", shp(4, 2, 2, 1, 1), w);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* y = val(g, "y", s);
  mlcc_value_t* c2 = val(g, "c2", s);
  mlcc_value_t* r2 = val(g, "r2", s);
  mlcc_value_t* z = val(g, "z", s);
  mlcc_value_t* cins[2] = {x, wv};
  mlcc_node_t* conv = node(g, MLCC_OP_CONV, "conv", cins, 2, c);
  mlcc_node_t* add = binary(g, MLCC_OP_ADD, "add", res, c, a);  // carried at slot 1
  mlcc_node_t* relu = unary(g, MLCC_OP_RELU, "relu", a, y);
  mlcc_value_t* cins2[2] = {y, wv};
  mlcc_node_t* conv2 = node(g, MLCC_OP_CONV, "conv2", cins2, 2, c2);
  mlcc_node_t* relu2 = unary(g, MLCC_OP_RELU, "relu2", c2, r2);
  mlcc_node_t* add2 = binary(g, MLCC_OP_ADD, "add2", r2, c2, z);  // c2 has 2 users
  mark_output(g, z);

  CHECK_OK(run1(g, MLCC_PASS_FUSE, 2));
  CHECK_EQ_INT(g->n_kernels, 2);
  const mlcc_kernel_t* k0 = &g->kernels[0];
  CHECK_EQ_INT(k0->n_nodes, 3);
  if (k0->n_nodes == 3) {
    CHECK(k0->nodes[0] == conv && k0->nodes[1] == add && k0->nodes[2] == relu);
    CHECK_EQ_INT(k0->carried_input[1], 1);
    CHECK_EQ_INT(k0->carried_input[2], 0);
  }
  // conv2 -> relu2 -> add2(r2, c2): both c2 users are in the chain (SiLU shape).
  CHECK_EQ_INT(g->kernels[1].n_nodes, 3);
  if (g->kernels[1].n_nodes == 3) {
    CHECK(g->kernels[1].nodes[0] == conv2 && g->kernels[1].nodes[1] == relu2 &&
          g->kernels[1].nodes[2] == add2);
    CHECK_EQ_INT(g->kernels[1].carried_input[2], 0);
  }
  CHECK_EQ_INT(conv->kernel, 0);
  CHECK_EQ_INT(relu->kernel, 0);
  CHECK_EQ_INT(add2->kernel, 1);

  // -O0: one kernel per node, in graph order.
  CHECK_OK(run1(g, MLCC_PASS_FUSE, 0));
  CHECK_EQ_INT(g->n_kernels, 6);
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    CHECK_EQ_INT(g->kernels[k].n_nodes, 1);
    CHECK(g->kernels[k].nodes[0] == g->nodes[k]);
  }
  mlcc_graph_destroy(g);
}

// SiLU: Mul(x, Sigmoid(x)) fuses with Sigmoid as the anchor. An epilogue
// input produced after the anchor blocks fusion; the order stays valid.
static void test_fuse_silu_and_late_inputs(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 4, 8, 0, 0);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* x2 = input(g, "x2", s);
  mlcc_value_t* sg = val(g, "sg", s);
  mlcc_value_t* silu = val(g, "silu", s);
  mlcc_value_t* e = val(g, "e", s);
  mlcc_value_t* n2 = val(g, "n2", s);
  mlcc_value_t* y = val(g, "y", s);
  mlcc_value_t* cast_out = val(g, "cast_out", s);
  cast_out->dtype = MLCC_DTYPE_F64;
  mlcc_node_t* sig = unary(g, MLCC_OP_SIGMOID, "sig", x, sg);
  mlcc_node_t* mul = binary(g, MLCC_OP_MUL, "mul", x, sg, silu);
  mlcc_node_t* exp = unary(g, MLCC_OP_EXP, "exp", silu, e);     // joins sig's chain
  mlcc_node_t* neg = unary(g, MLCC_OP_NEG, "neg", x2, n2);      // after the anchor
  mlcc_node_t* add = binary(g, MLCC_OP_ADD, "add", e, n2, y);   // n2 is late: joins neg
  mlcc_node_t* cast = unary(g, MLCC_OP_CAST, "cast", y, cast_out);  // dtype may differ
  mark_output(g, cast_out);
  CHECK_OK(run1(g, MLCC_PASS_FUSE, 2));
  CHECK_EQ_INT(g->n_kernels, 2);
  CHECK_EQ_INT(g->kernels[0].n_nodes, 3);
  CHECK(g->kernels[0].nodes[0] == sig && g->kernels[0].nodes[1] == mul &&
        g->kernels[0].nodes[2] == exp);
  CHECK_EQ_INT(g->kernels[0].carried_input[1], 1);
  CHECK_EQ_INT(g->kernels[1].n_nodes, 3);
  CHECK(g->kernels[1].nodes[0] == neg && g->kernels[1].nodes[1] == add &&
        g->kernels[1].nodes[2] == cast);
  CHECK_EQ_INT(g->kernels[1].carried_input[1], 1);
  mlcc_graph_destroy(g);
}

// SiLU-shaped chains fuse only while every chain-internal value stays inside
// the chain; a Reshape of an intermediate aliases its input (no kernel) and
// plan-memory keeps the source live while the alias is read.
static void test_fuse_closure_and_alias(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 2, 8, 0, 0);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* sg = val(g, "sg", s);
  mlcc_value_t* m = val(g, "m", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* r = val(g, "r", shp(1, 16, 0, 0, 0));
  mlcc_value_t* o = val(g, "o", shp(1, 16, 0, 0, 0));
  int64_t dims[1] = {16};
  mlcc_shape_t s1 = shp(1, 1, 0, 0, 0);
  mlcc_value_t* shape = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "shape", MLCC_DTYPE_I64, &s1, dims, true, &shape));
  mlcc_node_t* relu = unary(g, MLCC_OP_RELU, "relu", x, c);
  mlcc_node_t* sig = unary(g, MLCC_OP_SIGMOID, "sig", c, sg);
  mlcc_node_t* mul = binary(g, MLCC_OP_MUL, "mul", c, sg, m);
  mlcc_node_t* abs_ = unary(g, MLCC_OP_ABS, "abs", c, a);  // c escapes relu's chain
  mlcc_node_t* reshape = binary(g, MLCC_OP_RESHAPE, "reshape", m, shape, r);
  mlcc_node_t* neg = unary(g, MLCC_OP_NEG, "neg", r, o);
  mark_output(g, a);
  mark_output(g, o);
  mlcc_pass_ctx_t ctx = ctx_at(2);
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  if (g->n_kernels == 4) {
    CHECK(g->kernels[0].n_nodes == 1 && g->kernels[0].nodes[0] == relu);
    CHECK(g->kernels[1].n_nodes == 2 && g->kernels[1].nodes[0] == sig &&
          g->kernels[1].nodes[1] == mul);
    CHECK_EQ_INT(g->kernels[1].carried_input[1], 1);
    CHECK(g->kernels[2].nodes[0] == abs_);
    CHECK(g->kernels[3].nodes[0] == neg);
  }
  CHECK(r->alias_of == m);
  CHECK_EQ_INT(reshape->kernel, -1);
  CHECK(m->ws_offset >= 0);
  CHECK_EQ_INT(r->ws_offset, m->ws_offset);
  // c (read by kernels 1 and 2) and m (written by 1, read through r by 3)
  // are live together: distinct slots.
  CHECK(c->ws_offset >= 0 && c->ws_offset != m->ws_offset);
  CHECK_EQ_INT(g->workspace_size, 128);
  // -O0: no aliasing, every node is a kernel.
  CHECK_OK(run1(g, MLCC_PASS_FUSE, 0));
  CHECK(r->alias_of == NULL);
  CHECK_EQ_INT(g->n_kernels, 6);
  mlcc_graph_destroy(g);
}

// A chain longer than a kernel holds (MLCC_KERNEL_MAX_NODES, ir/graph.h)
// splits there; a chain value that is also a graph output must be
// materialized, so the chain ends at it (mlcc_kernel_t: every use of an
// intermediate chain output is inside the chain).
static void test_fuse_chain_limits(void) {
  enum { N = MLCC_KERNEL_MAX_NODES + 6 };
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 3, 5, 0, 0);
  mlcc_value_t* prev = input(g, "x", s);
  mlcc_node_t* nodes[N];
  for (int i = 0; i < N; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "r%d", i);
    mlcc_value_t* out = val(g, name, s);
    nodes[i] = unary(g, i % 2 ? MLCC_OP_NEG : MLCC_OP_RELU, name, prev, out);
    prev = out;
  }
  mark_output(g, prev);
  CHECK_OK(run1(g, MLCC_PASS_FUSE, 2));
  CHECK_EQ_INT(g->n_kernels, 2);
  if (g->n_kernels == 2) {
    CHECK_EQ_INT(g->kernels[0].n_nodes, MLCC_KERNEL_MAX_NODES);
    CHECK_EQ_INT(g->kernels[1].n_nodes, N - MLCC_KERNEL_MAX_NODES);
    CHECK(g->kernels[1].nodes[0] == nodes[MLCC_KERNEL_MAX_NODES]);
  }
  for (int i = 0; i < N; ++i) CHECK_EQ_INT(nodes[i]->kernel, i < MLCC_KERNEL_MAX_NODES ? 0 : 1);
  mlcc_graph_destroy(g);

  // x -> relu -> neg (also a graph output) -> abs -> exp: [relu, neg], [abs, exp].
  g = new_graph();
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* d = val(g, "d", s);
  mlcc_node_t* relu = unary(g, MLCC_OP_RELU, "relu", x, a);
  mlcc_node_t* neg = unary(g, MLCC_OP_NEG, "neg", a, b);
  mlcc_node_t* abs_ = unary(g, MLCC_OP_ABS, "abs", b, c);
  mlcc_node_t* exp_ = unary(g, MLCC_OP_EXP, "exp", c, d);
  mark_output(g, b);
  mark_output(g, d);
  CHECK_OK(run1(g, MLCC_PASS_FUSE, 2));
  CHECK_EQ_INT(g->n_kernels, 2);
  if (g->n_kernels == 2) {
    CHECK(g->kernels[0].n_nodes == 2 && g->kernels[0].nodes[0] == relu &&
          g->kernels[0].nodes[1] == neg);
    CHECK(g->kernels[1].n_nodes == 2 && g->kernels[1].nodes[0] == abs_ &&
          g->kernels[1].nodes[1] == exp_);
  }
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_fuse_conv_add_relu);
  RUN(test_fuse_closure_and_alias);
  RUN(test_fuse_chain_limits);
  RUN(test_fuse_silu_and_late_inputs);
  return TEST_EXIT();
}

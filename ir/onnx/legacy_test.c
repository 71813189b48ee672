// SPDX-License-Identifier: Apache-2.0
// Tests of the legacy-opset upgrade (legacy.c) on hand-built graphs: the
// inserted Unsqueeze nodes, removed attributes, the reset of scratch shapes,
// and the errors. End-to-end values are covered by the ONNX pytorch-operator
// and pytorch-converted suites (opset 6 models).
#include "ir/onnx/legacy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "test.h"

static mlcc_graph_t* G;
static float kData[256];

static mlcc_shape_t shape_of(int rank, const int64_t* d) {
  mlcc_shape_t s = {.rank = rank};
  for (int i = 0; i < rank; ++i) s.dims[i] = d[i];
  return s;
}
#define SH(...) \
  shape_of((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static mlcc_value_t* input(const char* name, mlcc_shape_t s) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(G, name, MLCC_VALUE_INPUT, &v));
  v->dtype = MLCC_DTYPE_F32;
  v->shape = s;
  v->shape_known = true;
  return v;
}
static mlcc_value_t* constant(const char* name, mlcc_shape_t s) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(G, name, MLCC_DTYPE_F32, &s, kData, false, &v));
  return v;
}
static mlcc_value_t* temp(const char* name) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(G, name, MLCC_VALUE_INTERMEDIATE, &v));
  return v;
}
static mlcc_node_t* node(mlcc_op_t op, int opset, mlcc_value_t** ins, uint32_t n_in,
                         mlcc_value_t* out, const mlcc_attr_t* attrs, uint32_t n_attrs) {
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(G, op, opset, "n", ins, n_in, &out, 1, attrs, n_attrs, &n));
  return n;
}
static mlcc_attr_t ai(const char* name, int64_t v) {
  mlcc_attr_t a = {.name = name, .kind = MLCC_ATTR_INT, .i = v};
  return a;
}

// Infers every node in order (as infer-shapes would), checking success.
static void infer_all(void) {
  for (uint32_t i = 0; i < G->n_nodes; ++i) {
    CHECK_OK(mlcc_op_desc(G->nodes[i]->op)->infer(G->nodes[i]));
  }
}

// Add(Relu(x), b, broadcast=1, axis=1) with x [2,3,4,5], b [3,4]: b goes
// through Unsqueeze(axes=[2]) -> [3,4,1]; the Relu output (needed for the
// rank) is inferred on a scratch basis and reset afterwards.
static void test_binary_axis(void) {
  CHECK_OK(mlcc_graph_create(&G));
  mlcc_value_t* x = input("x", SH(2, 3, 4, 5));
  mlcc_value_t* b = input("b", SH(3, 4));
  mlcc_value_t* r = temp("r");
  mlcc_value_t* y = temp("y");
  node(MLCC_OP_RELU, 6, &x, 1, r, NULL, 0);
  mlcc_attr_t attrs[3] = {ai("broadcast", 1), ai("axis", 1), ai("consumed_inputs", 0)};
  mlcc_value_t* ab[2] = {r, b};
  mlcc_node_t* add = node(MLCC_OP_ADD, 6, ab, 2, y, attrs, 3);
  CHECK_OK(mlcc_onnx_upgrade_legacy(G));
  CHECK_EQ_INT(G->n_nodes, 3);
  CHECK_EQ_INT(add->n_attrs, 0);
  CHECK_EQ_INT(add->opset, 6);
  CHECK(!r->shape_known && r->dtype == MLCC_DTYPE_UNDEFINED);
  mlcc_node_t* u = add->inputs[1]->producer;
  CHECK(u != NULL && u->op == MLCC_OP_UNSQUEEZE && u->inputs[0] == b);
  if (u != NULL) {
    const mlcc_attr_t* axes = mlcc_node_attr(u, "axes");
    CHECK(axes != NULL && axes->count == 1 && axes->ints[0] == 2);
  }
  CHECK(G->nodes[2] == add);  // toposorted after its new producer
  infer_all();
  CHECK(y->shape_known && y->shape.rank == 4 && y->shape.dims[3] == 5);
  CHECK(add->inputs[1]->shape.rank == 3 && add->inputs[1]->shape.dims[2] == 1);
  mlcc_graph_destroy(G);
}

// No rewrite without 'axis' (suffix matching = numpy) or for 1-element B;
// opset 7 nodes are left alone.
static void test_binary_no_rewrite(void) {
  CHECK_OK(mlcc_graph_create(&G));
  mlcc_value_t* x = input("x", SH(2, 3, 4));
  mlcc_value_t* b4 = constant("b4", SH(4));
  mlcc_value_t* one = constant("one", SH(1, 1));
  mlcc_value_t *y0 = temp("y0"), *y1 = temp("y1"), *y2 = temp("y2");
  mlcc_attr_t suffix[1] = {ai("broadcast", 1)};
  mlcc_attr_t scalar[2] = {ai("broadcast", 1), ai("axis", 0)};
  mlcc_attr_t modern[1] = {ai("axis", 0)};
  mlcc_value_t* i0[2] = {x, b4};
  mlcc_value_t* i1[2] = {x, one};
  mlcc_value_t* i2[2] = {x, x};
  mlcc_node_t* n0 = node(MLCC_OP_MUL, 6, i0, 2, y0, suffix, 1);
  mlcc_node_t* n1 = node(MLCC_OP_SUB, 1, i1, 2, y1, scalar, 2);
  mlcc_node_t* n2 = node(MLCC_OP_ADD, 7, i2, 2, y2, modern, 1);
  CHECK_OK(mlcc_onnx_upgrade_legacy(G));
  CHECK_EQ_INT(G->n_nodes, 3);
  CHECK(n0->inputs[1] == b4 && n0->n_attrs == 0);
  CHECK(n1->inputs[1] == one && n1->n_attrs == 0);
  CHECK_EQ_INT(n2->n_attrs, 1);
  mlcc_graph_destroy(G);
}

// PRelu-6: a slope of X's channel count is per channel.
static void test_prelu_channel(void) {
  CHECK_OK(mlcc_graph_create(&G));
  mlcc_value_t* x = input("x", SH(2, 3, 4, 5));
  mlcc_value_t* slope = constant("slope", SH(3));
  mlcc_value_t* y = temp("y");
  mlcc_value_t* in[2] = {x, slope};
  mlcc_node_t* p = node(MLCC_OP_PRELU, 6, in, 2, y, NULL, 0);
  CHECK_OK(mlcc_onnx_upgrade_legacy(G));
  mlcc_node_t* u = p->inputs[1]->producer;
  CHECK(u != NULL && u->op == MLCC_OP_UNSQUEEZE);
  if (u != NULL) {
    const mlcc_attr_t* axes = mlcc_node_attr(u, "axes");
    CHECK(axes != NULL && axes->count == 2 && axes->ints[0] == 1 && axes->ints[1] == 2);
  }
  infer_all();
  CHECK(y->shape_known && y->shape.rank == 4);
  mlcc_graph_destroy(G);
}

static void expect_upgrade_error(mlcc_status_code_t code, const char* needle) {
  mlcc_status_t s = mlcc_onnx_upgrade_legacy(G);
  CHECK_EQ_INT(mlcc_status_code(s), code);
  char* m = mlcc_status_to_string(s);
  if (m == NULL || strstr(m, needle) == NULL) {
    fprintf(stderr, "  '%s' not in '%s'\n", needle, m ? m : "(null)");
    CHECK(false);
  }
  free(m);
  mlcc_status_free(s);
}

static void test_errors(void) {
  // axis past rank(A) - rank(B).
  CHECK_OK(mlcc_graph_create(&G));
  mlcc_value_t* x = input("x", SH(2, 3, 4, 5));
  mlcc_value_t* b = constant("b", SH(3, 4));
  mlcc_attr_t bad_axis[2] = {ai("broadcast", 1), ai("axis", 3)};
  mlcc_value_t* in[2] = {x, b};
  node(MLCC_OP_DIV, 6, in, 2, temp("y"), bad_axis, 2);
  expect_upgrade_error(MLCC_STATUS_INVALID_MODEL, "must be in [0, rank(A) - rank(B)]");
  mlcc_graph_destroy(G);
  // B's dims must match A's from |axis| on.
  CHECK_OK(mlcc_graph_create(&G));
  x = input("x", SH(2, 3, 4, 5));
  b = constant("b", SH(4));
  mlcc_attr_t mismatch[2] = {ai("broadcast", 1), ai("axis", 1)};
  mlcc_value_t* in2[2] = {x, b};
  node(MLCC_OP_ADD, 6, in2, 2, temp("y"), mismatch, 2);
  expect_upgrade_error(MLCC_STATUS_INVALID_MODEL, "dim 0 of B is 4, A has 3");
  mlcc_graph_destroy(G);
  // BatchNormalization-6 in training mode, and non-spatial.
  for (int k = 0; k < 2; ++k) {
    CHECK_OK(mlcc_graph_create(&G));
    mlcc_value_t* bn_in[5] = {input("x", SH(2, 3, 4)), constant("s", SH(3)),
                              constant("b", SH(3)), constant("m", SH(3)), constant("v", SH(3))};
    mlcc_attr_t a[2] = {ai("is_test", k), ai("spatial", 0)};
    node(MLCC_OP_BATCH_NORMALIZATION, 6, bn_in, 5, temp("y"), a, 2);
    expect_upgrade_error(MLCC_STATUS_UNIMPLEMENTED, k == 0 ? "is_test=0" : "spatial=0");
    mlcc_graph_destroy(G);
  }
  // The rank of A is unknowable at import: a Reshape fed a run-time shape.
  CHECK_OK(mlcc_graph_create(&G));
  x = input("x", SH(2, 3, 4, 5));
  mlcc_value_t* shp = input("shape", SH(4));
  shp->dtype = MLCC_DTYPE_I64;
  mlcc_value_t* r = temp("r");
  mlcc_value_t* rin[2] = {x, shp};
  node(MLCC_OP_RESHAPE, 6, rin, 2, r, NULL, 0);
  mlcc_value_t* ain[2] = {r, constant("b", SH(3))};
  mlcc_attr_t ax[2] = {ai("broadcast", 1), ai("axis", 1)};
  node(MLCC_OP_ADD, 6, ain, 2, temp("y"), ax, 2);
  expect_upgrade_error(MLCC_STATUS_UNIMPLEMENTED, "needs the ranks of A");
  mlcc_graph_destroy(G);
}

// BatchNormalization-6 with is_test=1 becomes the opset 9 form.
static void test_batchnorm_inference(void) {
  CHECK_OK(mlcc_graph_create(&G));
  mlcc_value_t* bn_in[5] = {input("x", SH(2, 3, 4)), constant("s", SH(3)),
                            constant("b", SH(3)), constant("m", SH(3)), constant("v", SH(3))};
  mlcc_attr_t a[4] = {ai("is_test", 1), ai("spatial", 1), ai("consumed_inputs", 0),
                      {.name = "epsilon", .kind = MLCC_ATTR_FLOAT, .f = 1e-3f}};
  mlcc_node_t* bn = node(MLCC_OP_BATCH_NORMALIZATION, 6, bn_in, 5, temp("y"), a, 4);
  CHECK_OK(mlcc_onnx_upgrade_legacy(G));
  CHECK_EQ_INT(bn->n_attrs, 1);
  CHECK_STREQ(bn->attrs[0].name, "epsilon");
  infer_all();
  mlcc_graph_destroy(G);
}

// One node at a time (subgraph bodies as the lowering instantiates them):
// Sub(x, b, broadcast=1, axis=1) with x [2,3,4] inferred and the Sub just
// appended after a Relu; the Unsqueeze lands between them, inferred. A
// modern node and a legacy node needing no Unsqueeze insert nothing.
static void test_upgrade_node(void) {
  CHECK_OK(mlcc_graph_create(&G));
  mlcc_value_t* x = input("x", SH(2, 3, 4));
  mlcc_value_t* b = input("b", SH(3));
  mlcc_value_t *r = temp("r"), *y = temp("y"), *z = temp("z");
  mlcc_node_t* relu = node(MLCC_OP_RELU, 6, &x, 1, r, NULL, 0);
  infer_all();
  mlcc_attr_t attrs[2] = {ai("broadcast", 1), ai("axis", 1)};
  mlcc_value_t* rb[2] = {r, b};
  mlcc_node_t* sub = node(MLCC_OP_SUB, 6, rb, 2, y, attrs, 2);
  mlcc_node_t* pre = NULL;
  CHECK_OK(mlcc_onnx_upgrade_legacy_node(G, sub, &pre));
  CHECK(pre != NULL && pre->op == MLCC_OP_UNSQUEEZE && pre->inputs[0] == b);
  CHECK_EQ_INT(G->n_nodes, 3);
  CHECK(G->nodes[0] == relu && G->nodes[1] == pre && G->nodes[2] == sub);
  CHECK(sub->inputs[1] == mlcc_node_output(pre, 0));
  CHECK(sub->inputs[1]->shape_known && sub->inputs[1]->shape.rank == 2 &&
        sub->inputs[1]->shape.dims[0] == 3 && sub->inputs[1]->shape.dims[1] == 1);
  CHECK_EQ_INT(sub->n_attrs, 0);
  CHECK_OK(mlcc_op_desc(sub->op)->infer(sub));
  CHECK(y->shape_known && y->shape.rank == 3 && y->shape.dims[1] == 3);
  mlcc_attr_t consumed = ai("consumed_inputs", 0);
  mlcc_value_t* yy[2] = {y, y};
  mlcc_node_t* mx = node(MLCC_OP_MAX, 6, yy, 2, z, &consumed, 1);
  CHECK_OK(mlcc_onnx_upgrade_legacy_node(G, mx, &pre));
  CHECK(pre == NULL && mx->n_attrs == 0 && G->n_nodes == 4);
  CHECK_OK(mlcc_onnx_upgrade_legacy_node(G, relu, &pre));
  CHECK(pre == NULL && G->n_nodes == 4);
  mlcc_graph_destroy(G);
}

int main(void) {
  for (int i = 0; i < 256; ++i) kData[i] = (float)i;
  RUN(test_binary_axis);
  RUN(test_binary_no_rewrite);
  RUN(test_prelu_channel);
  RUN(test_errors);
  RUN(test_batchnorm_inference);
  RUN(test_upgrade_node);
  return TEST_EXIT();
}

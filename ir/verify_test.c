// SPDX-License-Identifier: Apache-2.0
// Unit tests for mlcc_graph_verify.
#include "ir/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

// x:f32[1,4] -> Conv-free chain: a = Relu(x); y = Add(a, w); output y.
typedef struct fixture_t {
  mlcc_graph_t* g;
  mlcc_value_t *x, *w, *a, *y;
  mlcc_node_t *relu, *add;
  mlcc_value_t* ins[1];
  mlcc_value_t* outs[1];
} fixture_t;

static void set_shape(mlcc_value_t* v) {
  v->dtype = MLCC_DTYPE_F32;
  v->shape_known = true;
  v->shape.rank = 2;
  v->shape.dims[0] = 1;
  v->shape.dims[1] = 4;
}

static void build(fixture_t* f) {
  memset(f, 0, sizeof(*f));
  CHECK_OK(mlcc_graph_create(&f->g));
  CHECK_OK(mlcc_graph_add_value(f->g, "x", MLCC_VALUE_INPUT, &f->x));
  static const float w[4] = {1, 2, 3, 4};
  mlcc_shape_t s = {.rank = 1, .dims = {4}};
  CHECK_OK(mlcc_graph_add_constant(f->g, "w", MLCC_DTYPE_F32, &s, w, false, &f->w));
  CHECK_OK(mlcc_graph_add_value(f->g, "a", MLCC_VALUE_INTERMEDIATE, &f->a));
  CHECK_OK(mlcc_graph_add_value(f->g, "y", MLCC_VALUE_INTERMEDIATE, &f->y));
  CHECK_OK(mlcc_graph_add_node(f->g, MLCC_OP_RELU, 14, "relu", &f->x, 1, &f->a, 1, NULL, 0,
                               &f->relu));
  mlcc_value_t* ins[2] = {f->a, f->w};
  CHECK_OK(
      mlcc_graph_add_node(f->g, MLCC_OP_ADD, 14, "add", ins, 2, &f->y, 1, NULL, 0, &f->add));
  f->ins[0] = f->x;
  f->outs[0] = f->y;
  f->g->inputs = f->ins;
  f->g->n_inputs = 1;
  f->g->outputs = f->outs;
  f->g->n_outputs = 1;
  f->y->is_output = true;
}

// Checks |s| is INVALID_MODEL whose message contains |needle|; frees it.
static void check_problem(mlcc_status_t s, const char* needle) {
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_MODEL);
  const char* msg = mlcc_status_message(s);
  if (s == NULL || strstr(msg, needle) == NULL) {
    fprintf(stderr, "  expected a problem containing \"%s\" in:\n%s\n", needle,
            s ? msg : "(OK)");
    CHECK(0);
  }
  mlcc_status_free(s);
}

static void test_valid_graph(void) {
  fixture_t f;
  build(&f);
  CHECK_OK(mlcc_graph_verify(f.g, false));
  // Shapes required but missing.
  mlcc_status_t s = mlcc_graph_verify(f.g, true);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_MODEL);
  CHECK(strstr(mlcc_status_message(s), "value 'x' has no inferred shape") != NULL);
  mlcc_status_free(s);
  set_shape(f.x);
  set_shape(f.a);
  set_shape(f.y);
  CHECK_OK(mlcc_graph_verify(f.g, true));
  mlcc_graph_destroy(f.g);
}

static void test_use_before_def(void) {
  fixture_t f;
  build(&f);
  f.g->nodes[0] = f.add;
  f.g->nodes[1] = f.relu;
  mlcc_status_t s = mlcc_graph_verify(f.g, false);
  char* text = mlcc_status_to_string(s);
  CHECK_STREQ(text,
              "error: node #1 'add' (Add, opset 14): input 0 'a' is used before it is "
              "defined [INVALID_MODEL]");
  free(text);
  mlcc_status_free(s);
  mlcc_graph_destroy(f.g);
}

static void test_two_producers_and_arity(void) {
  fixture_t f;
  build(&f);
  mlcc_node_t* n = NULL;
  // A second node writing 'a'; Neg with two inputs breaks its arity too.
  mlcc_value_t* ins[2] = {f.x, f.x};
  CHECK_OK(mlcc_graph_add_node(f.g, MLCC_OP_NEG, 13, "neg", ins, 2, &f.a, 1, NULL, 0, &n));
  mlcc_status_t s = mlcc_graph_verify(f.g, false);
  const char* msg = mlcc_status_message(s);
  // The first problem leads; the count of the others follows it.
  CHECK(strstr(msg, "(and 2 more problems):") != NULL);
  CHECK(strstr(msg, "node #2 'neg' (Neg, opset 13) has 2 inputs; Neg takes 1 to 1") != NULL);
  CHECK(strstr(msg, "value 'a' has more than one producer") != NULL);
  // The first Relu is no longer the recorded producer of 'a'.
  CHECK(strstr(msg, "node #0 'relu' (Relu, opset 14): output 'a' names another node") !=
        NULL);
  mlcc_status_free(s);
  mlcc_graph_destroy(f.g);
}

static void test_outputs_and_missing_inputs(void) {
  fixture_t f;
  build(&f);
  f.add->dead = true;  // output y now has no live producer
  check_problem(mlcc_graph_verify(f.g, false),
                "graph output 'y' is not produced by any live node");
  f.add->dead = false;
  f.add->inputs[1] = NULL;  // required input of Add
  check_problem(mlcc_graph_verify(f.g, false),
                "node #1 'add' (Add, opset 14): required input 1 is missing");
  f.add->inputs[1] = f.w;
  f.y->is_output = false;
  check_problem(mlcc_graph_verify(f.g, false),
                "value 'y' is a graph output but not flagged is_output");
  f.y->is_output = true;
  f.relu->opset = 3;
  check_problem(mlcc_graph_verify(f.g, false),
                "node #0 'relu' (Relu, opset 3): opset outside the supported range 6..26");
  mlcc_graph_destroy(f.g);
}

static void test_kernels(void) {
  fixture_t f;
  build(&f);
  set_shape(f.x);
  set_shape(f.a);
  set_shape(f.y);
  mlcc_node_t* chain[2] = {f.relu, f.add};
  uint32_t carried[2] = {0, 0};
  mlcc_kernel_t k = {2, chain, carried};
  f.g->kernels = &k;
  f.g->n_kernels = 1;
  f.relu->kernel = 0;
  f.add->kernel = 0;
  CHECK_OK(mlcc_graph_verify(f.g, true));

  carried[1] = 1;  // Add's input 1 is w, not the carried 'a'
  check_problem(mlcc_graph_verify(f.g, true),
                "kernel 0: node #1 'add' (Add, opset 14) does not read 'a' at its carried "
                "input");
  carried[1] = 0;

  // 'a' also used by another node: it would have to be materialized.
  mlcc_value_t* z = NULL;
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_value(f.g, "z", MLCC_VALUE_INTERMEDIATE, &z));
  set_shape(z);
  CHECK_OK(mlcc_graph_add_node(f.g, MLCC_OP_NEG, 13, "neg", &f.a, 1, &z, 1, NULL, 0, &n));
  mlcc_status_t s = mlcc_graph_verify(f.g, true);
  const char* msg = mlcc_status_message(s);
  CHECK(strstr(msg, "intermediate 'a' of the chain must be read only by later nodes") != NULL);
  CHECK(strstr(msg, "node #2 'neg' (Neg, opset 13) is live but in no kernel") != NULL);
  mlcc_status_free(s);
  mlcc_graph_destroy(f.g);
}

static void test_problem_limit(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  mlcc_value_t* x = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "x", MLCC_VALUE_INTERMEDIATE, &x));  // never produced
  char name[16];
  for (int i = 0; i < 30; ++i) {
    mlcc_value_t* y = NULL;
    mlcc_node_t* n = NULL;
    snprintf(name, sizeof(name), "y%d", i);
    CHECK_OK(mlcc_graph_add_value(g, name, MLCC_VALUE_INTERMEDIATE, &y));
    CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_RELU, 14, name, &x, 1, &y, 1, NULL, 0, &n));
  }
  mlcc_status_t s = mlcc_graph_verify(g, false);
  const char* msg = mlcc_status_message(s);
  CHECK(strstr(msg, "(and 29 more problems, first ones shown):") != NULL);
  // The first problem is on the first line, 19 more follow (20 in all).
  int lines = 0;
  for (const char* p = msg; *p; ++p) lines += *p == '\n';
  CHECK_EQ_INT(lines, 19);
  CHECK(strstr(msg, "(it has no producer)") != NULL);
  mlcc_status_free(s);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_valid_graph);
  RUN(test_use_before_def);
  RUN(test_two_producers_and_arity);
  RUN(test_outputs_and_missing_inputs);
  RUN(test_kernels);
  RUN(test_problem_limit);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Unit tests for infer-shapes' check of the declared graph output types
// (graph->output_decls; ONNX Runtime's rules: a different elem_type is an
// error, a different static dim or rank a warning that keeps the inferred
// shape, symbolic dims match anything).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/graph.h"
#include "passes/pass.h"
#include "test.h"

// x: float32 [2,3] -> Relu 'relu' (opset 14) -> y, a graph output whose
// declared type is |elem_type| and |rank| dims |dims| (rank -1: no shape).
static mlcc_graph_t* relu_graph(int32_t elem_type, int32_t rank, const int64_t* dims) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  mlcc_value_t *x = NULL, *y = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "x", MLCC_VALUE_INPUT, &x));
  CHECK_OK(mlcc_graph_add_value(g, "y", MLCC_VALUE_INTERMEDIATE, &y));
  x->dtype = MLCC_DTYPE_F32;
  x->shape.rank = 2;
  x->shape.dims[0] = 2;
  x->shape.dims[1] = 3;
  x->shape_known = true;
  g->inputs = (mlcc_value_t**)mlcc_arena_alloc(&g->arena, sizeof(mlcc_value_t*),
                                               _Alignof(mlcc_value_t*));
  g->inputs[0] = x;
  g->n_inputs = 1;
  mlcc_node_t* relu = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_RELU, 14, "relu", &x, 1, &y, 1, NULL, 0, &relu));
  g->outputs = (mlcc_value_t**)mlcc_arena_alloc(&g->arena, sizeof(mlcc_value_t*),
                                                _Alignof(mlcc_value_t*));
  g->outputs[0] = y;
  g->n_outputs = 1;
  y->is_output = true;
  g->output_decls = (mlcc_output_decl_t*)mlcc_arena_alloc(
      &g->arena, sizeof(mlcc_output_decl_t), _Alignof(mlcc_output_decl_t));
  memset(g->output_decls, 0, sizeof(mlcc_output_decl_t));
  g->output_decls[0].elem_type = elem_type;
  g->output_decls[0].rank = rank;
  for (int32_t d = 0; d < rank; ++d) g->output_decls[0].dims[d] = dims[d];
  return g;
}

// Runs infer-shapes on |g| with standard error captured into |err| (up to
// |err_size| - 1 bytes, terminated); returns the pass's status.
static mlcc_status_t infer_capturing(mlcc_graph_t* g, char* err, size_t err_size) {
  err[0] = '\0';
  fflush(stderr);
  FILE* tmp = tmpfile();
  int saved = dup(2);
  if (tmp == NULL || saved < 0) return mlcc_make_status(MLCC_STATUS_IO, "cannot capture");
  dup2(fileno(tmp), 2);
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  mlcc_pass_id_t id = MLCC_PASS_INFER_SHAPES;
  mlcc_status_t s = mlcc_pass_run_pipeline(&ctx, g, &id, 1);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(err, 1, err_size - 1, tmp);
  err[n] = '\0';
  fclose(tmp);
  return s;
}

static void test_declared_dtype_mismatch_is_an_error(void) {
  int64_t dims[2] = {2, 3};
  mlcc_graph_t* g = relu_graph(MLCC_DTYPE_I64, 2, dims);
  char err[1024];
  mlcc_status_t s = infer_capturing(g, err, sizeof(err));
  CHECK(s != NULL);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_MODEL);
  char* text = mlcc_status_to_string(s);
  CHECK_STREQ(text,
              "pass 'infer-shapes': node #0 'relu' (Relu, opset 14): error: graph output 'y' "
              "is declared int64 but Relu infers float32 [INVALID_MODEL]");
  free(text);
  mlcc_status_free(s);
  mlcc_graph_destroy(g);
}

static void test_declared_dim_mismatch_warns_and_keeps_inferred(void) {
  int64_t dims[2] = {2, 4};
  mlcc_graph_t* g = relu_graph(MLCC_DTYPE_F32, 2, dims);
  char err[1024];
  CHECK_OK(infer_capturing(g, err, sizeof(err)));
  CHECK_STREQ(err,
              "mlcc: warning: node #0 'relu' (Relu, opset 14): graph output 'y' is declared "
              "with shape [2,4] but inferred as [2,3]; using the inferred shape\n");
  CHECK_EQ_INT(g->outputs[0]->shape.dims[1], 3);
  CHECK(g->output_decls == NULL);  // checked once
  // A second run does not warn again.
  CHECK_OK(infer_capturing(g, err, sizeof(err)));
  CHECK_STREQ(err, "");
  mlcc_graph_destroy(g);
}

static void test_declared_rank_mismatch_warns(void) {
  int64_t dims[1] = {6};
  mlcc_graph_t* g = relu_graph(MLCC_DTYPE_F32, 1, dims);
  char err[1024];
  CHECK_OK(infer_capturing(g, err, sizeof(err)));
  CHECK_STREQ(err,
              "mlcc: warning: node #0 'relu' (Relu, opset 14): graph output 'y' is declared "
              "with shape [6] but inferred as [2,3]; using the inferred shape\n");
  mlcc_graph_destroy(g);
}

static void test_symbolic_or_missing_declarations_are_silent(void) {
  int64_t dims[2] = {-1, 3};
  mlcc_graph_t* g = relu_graph(MLCC_DTYPE_F32, 2, dims);
  char err[1024];
  CHECK_OK(infer_capturing(g, err, sizeof(err)));
  CHECK_STREQ(err, "");
  mlcc_graph_destroy(g);
  g = relu_graph(0, -1, NULL);  // no elem_type, no shape
  CHECK_OK(infer_capturing(g, err, sizeof(err)));
  CHECK_STREQ(err, "");
  mlcc_graph_destroy(g);
}

static void test_graph_input_as_output(void) {
  // y = Relu(x) plus x itself as a second output declared int32.
  int64_t dims[2] = {2, 3};
  mlcc_graph_t* g = relu_graph(MLCC_DTYPE_F32, 2, dims);
  mlcc_value_t** outs = (mlcc_value_t**)mlcc_arena_alloc(&g->arena, 2 * sizeof(mlcc_value_t*),
                                                         _Alignof(mlcc_value_t*));
  mlcc_output_decl_t* decls = (mlcc_output_decl_t*)mlcc_arena_alloc(
      &g->arena, 2 * sizeof(mlcc_output_decl_t), _Alignof(mlcc_output_decl_t));
  outs[0] = g->outputs[0];
  outs[1] = g->inputs[0];
  decls[0] = g->output_decls[0];
  memset(&decls[1], 0, sizeof(decls[1]));
  decls[1].elem_type = MLCC_DTYPE_I32;
  decls[1].rank = -1;
  g->outputs = outs;
  g->output_decls = decls;
  g->n_outputs = 2;
  g->inputs[0]->is_output = true;
  char err[1024];
  mlcc_status_t s = infer_capturing(g, err, sizeof(err));
  CHECK(s != NULL);
  char* text = mlcc_status_to_string(s);
  CHECK_STREQ(text,
              "pass 'infer-shapes': error: graph output 'x' (a graph input) is declared int32 "
              "but it is float32 [INVALID_MODEL]");
  free(text);
  mlcc_status_free(s);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_declared_dtype_mismatch_is_an_error);
  RUN(test_declared_dim_mismatch_warns_and_keeps_inferred);
  RUN(test_declared_rank_mismatch_warns);
  RUN(test_symbolic_or_missing_declarations_are_silent);
  RUN(test_graph_input_as_output);
  return TEST_EXIT();
}

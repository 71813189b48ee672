// SPDX-License-Identifier: Apache-2.0
// Graph-building helpers of the pass unit tests (pass_test.c, fuse_test.c,
// plan_memory_test.c, canonicalize_test.c): hand-built graphs whose dtypes and
// shapes are set by hand, as the importer and infer-shapes would set them (no
// dependence on op inference or the JIT). Values are float32 unless a test
// changes them; the graph owns everything the helpers create; a failed graph
// call is reported through CHECK_OK and returns NULL.
// Header-only: each test executable includes it once.
#ifndef MLCC_PASSES_PASS_TEST_UTIL_H_
#define MLCC_PASSES_PASS_TEST_UTIL_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "passes/pass.h"
#include "test.h"

static inline mlcc_shape_t shp(int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  int64_t d[4] = {d0, d1, d2, d3};
  for (int32_t i = 0; i < rank && i < 4; ++i) s.dims[i] = d[i];
  return s;
}

static inline mlcc_graph_t* new_graph(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  return g;
}

// An intermediate value with dtype/shape set (as infer-shapes would).
static inline mlcc_value_t* val(mlcc_graph_t* g, const char* name, mlcc_shape_t s) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g, name, MLCC_VALUE_INTERMEDIATE, &v));
  if (v == NULL) return NULL;
  v->dtype = MLCC_DTYPE_F32;
  v->shape = s;
  v->shape_known = true;
  return v;
}

// A graph input with dtype/shape set (as the importer would), appended to
// graph->inputs.
static inline mlcc_value_t* input(mlcc_graph_t* g, const char* name, mlcc_shape_t s) {
  mlcc_value_t* v = val(g, name, s);
  if (v == NULL) return NULL;
  v->kind = MLCC_VALUE_INPUT;
  mlcc_value_t** ins = (mlcc_value_t**)mlcc_arena_alloc(
      &g->arena, (g->n_inputs + 1) * sizeof(*ins), _Alignof(mlcc_value_t*));
  if (g->n_inputs) memcpy(ins, g->inputs, g->n_inputs * sizeof(*ins));
  ins[g->n_inputs++] = v;
  g->inputs = ins;
  return v;
}

static inline mlcc_value_t* cst(mlcc_graph_t* g, const char* name, mlcc_shape_t s, const float* d) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, name, MLCC_DTYPE_F32, &s, d, true, &v));
  return v;
}

static inline void mark_output(mlcc_graph_t* g, mlcc_value_t* v) {
  mlcc_value_t** outs = (mlcc_value_t**)mlcc_arena_alloc(
      &g->arena, (g->n_outputs + 1) * sizeof(*outs), _Alignof(mlcc_value_t*));
  if (g->n_outputs) memcpy(outs, g->outputs, g->n_outputs * sizeof(*outs));
  outs[g->n_outputs++] = v;
  g->outputs = outs;
  v->is_output = true;
}

static inline mlcc_node_t* node(mlcc_graph_t* g, mlcc_op_t op, const char* name,
                         mlcc_value_t* const* ins, uint32_t n_in, mlcc_value_t* out) {
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, op, 13, name, ins, n_in, &out, 1, NULL, 0, &n));
  return n;
}
static inline mlcc_node_t* unary(mlcc_graph_t* g, mlcc_op_t op, const char* name, mlcc_value_t* x,
                          mlcc_value_t* out) {
  return node(g, op, name, &x, 1, out);
}
static inline mlcc_node_t* binary(mlcc_graph_t* g, mlcc_op_t op, const char* name, mlcc_value_t* a,
                           mlcc_value_t* b, mlcc_value_t* out) {
  mlcc_value_t* ins[2] = {a, b};
  return node(g, op, name, ins, 2, out);
}

static inline mlcc_pass_ctx_t ctx_at(int opt_level) {
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opt_level = opt_level;
  ctx.verify_each = true;
  return ctx;
}

static inline mlcc_status_t run1(mlcc_graph_t* g, mlcc_pass_id_t id, int opt_level) {
  mlcc_pass_ctx_t ctx = ctx_at(opt_level);
  return mlcc_pass_run_pipeline(&ctx, g, &id, 1);
}

static inline bool contains(const char* hay, const char* needle) {
  return hay != NULL && strstr(hay, needle) != NULL;
}

// Renders and frees |s|; returns a malloc'ed string (or NULL for OK).
static inline char* render(mlcc_status_t s) {
  char* m = mlcc_status_to_string(s);
  mlcc_status_free(s);
  return m;
}

#endif  // MLCC_PASSES_PASS_TEST_UTIL_H_

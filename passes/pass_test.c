// SPDX-License-Identifier: Apache-2.0
// Unit tests for the pass manager and the graph passes, on hand-built graphs
// whose shapes are set by hand (no dependence on op inference or the JIT).
#include "passes/pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/verify.h"
#include "passes/plan_memory.h"
#include "test.h"

//===----------------------------------------------------------------------===//
// Graph building helpers
//===----------------------------------------------------------------------===//

static mlcc_shape_t shp(int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  int64_t d[4] = {d0, d1, d2, d3};
  for (int32_t i = 0; i < rank && i < 4; ++i) s.dims[i] = d[i];
  return s;
}

static mlcc_graph_t* new_graph(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  return g;
}

// An input value with dtype/shape set (as the importer would).
static mlcc_value_t* input(mlcc_graph_t* g, const char* name, mlcc_shape_t s) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g, name, MLCC_VALUE_INPUT, &v));
  if (v == NULL) return NULL;
  v->dtype = MLCC_DTYPE_F32;
  v->shape = s;
  v->shape_known = true;
  mlcc_value_t** ins = (mlcc_value_t**)mlcc_arena_alloc(
      &g->arena, (g->n_inputs + 1) * sizeof(*ins), _Alignof(mlcc_value_t*));
  if (g->n_inputs) memcpy(ins, g->inputs, g->n_inputs * sizeof(*ins));
  ins[g->n_inputs++] = v;
  g->inputs = ins;
  return v;
}

// An intermediate value with dtype/shape set (as infer-shapes would).
static mlcc_value_t* val(mlcc_graph_t* g, const char* name, mlcc_shape_t s) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g, name, MLCC_VALUE_INTERMEDIATE, &v));
  if (v == NULL) return NULL;
  v->dtype = MLCC_DTYPE_F32;
  v->shape = s;
  v->shape_known = true;
  return v;
}

static mlcc_value_t* cst(mlcc_graph_t* g, const char* name, mlcc_shape_t s, const float* d) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, name, MLCC_DTYPE_F32, &s, d, true, &v));
  return v;
}

static void mark_output(mlcc_graph_t* g, mlcc_value_t* v) {
  mlcc_value_t** outs = (mlcc_value_t**)mlcc_arena_alloc(
      &g->arena, (g->n_outputs + 1) * sizeof(*outs), _Alignof(mlcc_value_t*));
  if (g->n_outputs) memcpy(outs, g->outputs, g->n_outputs * sizeof(*outs));
  outs[g->n_outputs++] = v;
  g->outputs = outs;
  v->is_output = true;
}

static mlcc_node_t* node(mlcc_graph_t* g, mlcc_op_t op, const char* name,
                         mlcc_value_t* const* ins, uint32_t n_in, mlcc_value_t* out) {
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, op, 13, name, ins, n_in, &out, 1, NULL, 0, &n));
  return n;
}
static mlcc_node_t* unary(mlcc_graph_t* g, mlcc_op_t op, const char* name, mlcc_value_t* x,
                          mlcc_value_t* out) {
  return node(g, op, name, &x, 1, out);
}
static mlcc_node_t* binary(mlcc_graph_t* g, mlcc_op_t op, const char* name, mlcc_value_t* a,
                           mlcc_value_t* b, mlcc_value_t* out) {
  mlcc_value_t* ins[2] = {a, b};
  return node(g, op, name, ins, 2, out);
}

static mlcc_pass_ctx_t ctx_at(int opt_level) {
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opt_level = opt_level;
  ctx.verify_each = true;
  return ctx;
}

static mlcc_status_t run1(mlcc_graph_t* g, mlcc_pass_id_t id, int opt_level) {
  mlcc_pass_ctx_t ctx = ctx_at(opt_level);
  return mlcc_pass_run_pipeline(&ctx, g, &id, 1);
}

static bool contains(const char* hay, const char* needle) {
  return hay != NULL && strstr(hay, needle) != NULL;
}

// Renders and frees |s|; returns a malloc'ed string (or NULL for OK).
static char* render(mlcc_status_t s) {
  char* m = mlcc_status_to_string(s);
  mlcc_status_free(s);
  return m;
}

//===----------------------------------------------------------------------===//
// Pass manager
//===----------------------------------------------------------------------===//

static void test_lookup_and_names(void) {
  mlcc_pass_id_t id;
  CHECK(mlcc_pass_lookup("dce", &id));
  CHECK_EQ_INT(id, MLCC_PASS_DCE);
  CHECK(mlcc_pass_lookup("fold-batchnorm", &id));
  CHECK_EQ_INT(id, MLCC_PASS_FOLD_BATCHNORM);
  CHECK(!mlcc_pass_lookup("DCE", &id));
  CHECK(!mlcc_pass_lookup("", &id));
  for (int i = 0; i < MLCC_PASS_COUNT; ++i) {
    CHECK(mlcc_pass_lookup(mlcc_pass_name((mlcc_pass_id_t)i), &id));
    CHECK_EQ_INT(id, i);
  }
  CHECK_STREQ(mlcc_pass_name(MLCC_PASS_PLAN_MEMORY), "plan-memory");
}

static void test_default_pipelines(void) {
  mlcc_pass_id_t ids[MLCC_PASS_COUNT * 2];
  uint32_t n = mlcc_pass_default_pipeline(0, ids);
  CHECK_EQ_INT(n, 3);
  CHECK_EQ_INT(ids[0], MLCC_PASS_INFER_SHAPES);
  CHECK_EQ_INT(ids[1], MLCC_PASS_FUSE);
  CHECK_EQ_INT(ids[2], MLCC_PASS_PLAN_MEMORY);
  // quant-fuse runs before infer-shapes folds DequantizeLinear of weights.
  const mlcc_pass_id_t want[] = {
      MLCC_PASS_QUANT_FUSE,
      MLCC_PASS_INFER_SHAPES,   MLCC_PASS_REMOVE_IDENTITY, MLCC_PASS_FOLD_CONSTANTS,
      MLCC_PASS_FOLD_BATCHNORM, MLCC_PASS_FOLD_CONSTANTS,  MLCC_PASS_CANONICALIZE,
      MLCC_PASS_EXPAND_ATTENTION, MLCC_PASS_DCE,          MLCC_PASS_QUANT_PACK,
      MLCC_PASS_FUSE,           MLCC_PASS_PLAN_MEMORY};
  n = mlcc_pass_default_pipeline(1, ids);
  CHECK_EQ_INT(n, 12);
  for (uint32_t i = 0; i < n && i < 12; ++i) CHECK_EQ_INT(ids[i], want[i]);
  // -O2 and -O3 also pre-pack weights, right before fusion.
  const mlcc_pass_id_t want2[] = {
      MLCC_PASS_QUANT_FUSE,
      MLCC_PASS_INFER_SHAPES,   MLCC_PASS_REMOVE_IDENTITY, MLCC_PASS_FOLD_CONSTANTS,
      MLCC_PASS_FOLD_BATCHNORM, MLCC_PASS_FOLD_CONSTANTS,  MLCC_PASS_CANONICALIZE,
      MLCC_PASS_EXPAND_ATTENTION, MLCC_PASS_DCE,          MLCC_PASS_QUANT_PACK,
      MLCC_PASS_PACK_WEIGHTS,   MLCC_PASS_FUSE,            MLCC_PASS_PLAN_MEMORY};
  for (int level = 2; level <= 3; ++level) {
    n = mlcc_pass_default_pipeline(level, ids);
    CHECK_EQ_INT(n, 13);
    for (uint32_t i = 0; i < n && i < 13; ++i) CHECK_EQ_INT(ids[i], want2[i]);
  }
}

static void test_parse_pipeline(void) {
  mlcc_pass_id_t ids[8];
  uint32_t n = 99;
  CHECK_OK(mlcc_pass_parse_pipeline("infer-shapes,dce, fuse", ids, 8, &n));
  CHECK_EQ_INT(n, 3);
  CHECK_EQ_INT(ids[0], MLCC_PASS_INFER_SHAPES);
  CHECK_EQ_INT(ids[1], MLCC_PASS_DCE);
  CHECK_EQ_INT(ids[2], MLCC_PASS_FUSE);
  CHECK_OK(mlcc_pass_parse_pipeline("", ids, 8, &n));
  CHECK_EQ_INT(n, 0);

  mlcc_status_t s = mlcc_pass_parse_pipeline("dce,constfold", ids, 8, &n);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(n, 0);
  char* m = render(s);
  CHECK(contains(m, "unknown pass 'constfold'"));
  CHECK(contains(m, "quant-fuse, infer-shapes, remove-identity, fold-constants, fold-batchnorm, "
                    "canonicalize, expand-attention, dce, quant-pack, pack-weights, fuse, "
                    "plan-memory"));
  free(m);
  CHECK_STATUS(mlcc_pass_parse_pipeline("dce,,fuse", ids, 8, &n),
               MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_pass_parse_pipeline("dce,", ids, 8, &n), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_pass_parse_pipeline("dce,dce,dce", ids, 2, &n),
               MLCC_STATUS_INVALID_ARGUMENT);
  char longname[300];
  memset(longname, 'x', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  CHECK_STATUS(mlcc_pass_parse_pipeline(longname, ids, 8, &n), MLCC_STATUS_INVALID_ARGUMENT);
}

// x -> Relu -> Exp -> y; run fuse+plan-memory with verification and dumps.
static void test_run_pipeline_prints_and_annotates(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 1, 16, 0, 0);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", x, a);
  unary(g, MLCC_OP_EXP, "exp", a, y);
  mark_output(g, y);

  // plan-memory without kernels fails, annotated with the pass name.
  char* m = render(run1(g, MLCC_PASS_PLAN_MEMORY, 2));
  CHECK(contains(m, "pass 'plan-memory'"));
  CHECK(contains(m, "fuse"));
  free(m);

  char* buf = NULL;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  CHECK(out != NULL);
  mlcc_pass_ctx_t ctx = ctx_at(2);
  ctx.print_after_all = out;
  mlcc_pass_id_t ids[] = {MLCC_PASS_DCE, MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 3));
  fclose(out);
  CHECK(contains(buf, "// -----// IR after dce //----- //\n"));
  CHECK(contains(buf, "// -----// IR after fuse //----- //\n"));
  CHECK(contains(buf, "// -----// IR after plan-memory //----- //\n"));
  CHECK(strstr(buf, "after dce") < strstr(buf, "after fuse"));
  free(buf);
  CHECK_EQ_INT(g->n_kernels, 1);  // Relu+Exp fused
  CHECK_EQ_INT(g->workspace_size, 0);
  CHECK_EQ_INT(g->workspace_align, 64);
  mlcc_graph_destroy(g);
}

// A corrupted graph after a pass is reported as INTERNAL naming the pass.
static void test_verify_failure_is_internal(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(1, 4, 0, 0, 0);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", x, y);
  mark_output(g, y);
  y->is_output = false;  // breaks a verifier invariant (output not flagged)
  mlcc_pass_ctx_t ctx = ctx_at(1);
  mlcc_pass_id_t id = MLCC_PASS_FUSE;
  mlcc_status_t st = mlcc_pass_run_pipeline(&ctx, g, &id, 1);
  CHECK_EQ_INT(mlcc_status_code(st), MLCC_STATUS_INTERNAL);
  char* m = render(st);
  CHECK(contains(m, "after pass 'fuse'"));
  free(m);
  mlcc_graph_destroy(g);
}

// infer-shapes annotates a failing node with its description.
static void test_infer_shapes_annotates(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_value_t* a = input(g, "a", shp(2, 2, 3, 0, 0));
  a->dtype = MLCC_DTYPE_UNDEFINED;  // no op accepts an untyped input
  mlcc_value_t* y = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "y", MLCC_VALUE_INTERMEDIATE, &y));
  unary(g, MLCC_OP_RELU, "bad_relu", a, y);
  mark_output(g, y);
  mlcc_pass_ctx_t ctx = ctx_at(1);
  ctx.verify_each = false;
  mlcc_pass_id_t id = MLCC_PASS_INFER_SHAPES;
  mlcc_status_t st = mlcc_pass_run_pipeline(&ctx, g, &id, 1);
  CHECK(st != NULL);
  char* m = render(st);
  CHECK(contains(m, "pass 'infer-shapes'"));
  CHECK(contains(m, "'bad_relu' (Relu, opset 13)"));
  free(m);
  mlcc_graph_destroy(g);
}

//===----------------------------------------------------------------------===//
// dce, remove-identity, fold-constants (Shape/Size/Constant)
//===----------------------------------------------------------------------===//

static void test_dce_removes_unused_branch(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 2, 8, 0, 0);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* y = val(g, "y", s);
  mlcc_value_t* t = val(g, "t", s);
  mlcc_value_t* u = val(g, "u", s);
  mlcc_value_t* w = val(g, "w", s);
  unary(g, MLCC_OP_SIGMOID, "dead1", x, t);
  unary(g, MLCC_OP_RELU, "live", x, y);
  unary(g, MLCC_OP_EXP, "dead2", t, u);
  binary(g, MLCC_OP_ADD, "dead3", u, y, w);  // reads a live value; still dead
  mark_output(g, y);
  CHECK_OK(run1(g, MLCC_PASS_DCE, 1));
  CHECK_EQ_INT(g->n_nodes, 1);
  CHECK_STREQ(g->nodes[0]->name, "live");
  CHECK_EQ_INT(x->n_uses, 1);
  CHECK_EQ_INT(y->n_uses, 0);
  bool changed = true;
  mlcc_pass_ctx_t ctx = ctx_at(1);
  CHECK_OK(mlcc_pass_dce(&ctx, g, &changed));
  CHECK(!changed);
  CHECK_OK(mlcc_graph_verify(g, true));
  mlcc_graph_destroy(g);
}

static void test_remove_identity(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 2, 8, 0, 0);
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* d = val(g, "d", s);
  mlcc_value_t* y = val(g, "y", s);
  mlcc_value_t* z = val(g, "z", s);
  mlcc_value_t* mask = val(g, "mask", s);
  mask->dtype = MLCC_DTYPE_BOOL;
  mlcc_value_t* dm = val(g, "dm", s);
  mlcc_value_t* dm_mask = val(g, "dm_mask", s);
  dm_mask->dtype = MLCC_DTYPE_BOOL;
  mlcc_value_t* q = val(g, "q", s);
  mlcc_value_t* shape_c = NULL;
  int64_t dims[2] = {2, 8};
  mlcc_shape_t s1 = shp(1, 2, 0, 0, 0);
  CHECK_OK(mlcc_graph_add_constant(g, "shape", MLCC_DTYPE_I64, &s1, dims, true, &shape_c));

  unary(g, MLCC_OP_RELU, "relu", x, a);
  unary(g, MLCC_OP_IDENTITY, "id1", a, b);                  // removed
  mlcc_node_t* drop = NULL;                                 // removed (mask unused)
  mlcc_value_t* douts[2] = {c, mask};
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_DROPOUT, 13, "drop", &b, 1, douts, 2, NULL, 0, &drop));
  binary(g, MLCC_OP_RESHAPE, "reshape", c, shape_c, d);     // same shape: removed
  mlcc_node_t* drop2 = NULL;                                // kept: mask is read
  mlcc_value_t* douts2[2] = {dm, dm_mask};
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_DROPOUT, 13, "drop2", &d, 1, douts2, 2, NULL, 0, &drop2));
  binary(g, MLCC_OP_ADD, "use", dm, d, q);
  mlcc_value_t* wins[3] = {dm_mask, q, d};
  mlcc_value_t* q2 = val(g, "q2", s);
  node(g, MLCC_OP_WHERE, "where", wins, 3, q2);
  unary(g, MLCC_OP_EXP, "exp", q2, y);
  unary(g, MLCC_OP_IDENTITY, "id_out", y, z);                // kept: graph output
  mark_output(g, z);

  CHECK_OK(run1(g, MLCC_PASS_REMOVE_IDENTITY, 1));
  // relu, drop2, use, where, exp, id_out remain.
  CHECK_EQ_INT(g->n_nodes, 6);
  const char* want[] = {"relu", "drop2", "use", "where", "exp", "id_out"};
  for (uint32_t i = 0; i < g->n_nodes && i < 6; ++i) CHECK_STREQ(g->nodes[i]->name, want[i]);
  CHECK(drop2->inputs[0] == a);  // Identity -> Dropout -> Reshape chain bypassed
  CHECK(g->nodes[2]->inputs[1] == a);
  CHECK(g->outputs[0] == z);
  CHECK_EQ_INT(a->n_uses, 3);
  CHECK_OK(mlcc_graph_verify(g, true));
  mlcc_graph_destroy(g);
}

// Reshape/Identity of constants alias the bytes (no JIT needed).
static void test_fold_views_of_constants(void) {
  mlcc_graph_t* g = new_graph();
  float wd[6] = {1, 2, 3, 4, 5, 6};
  mlcc_value_t* w = cst(g, "w", shp(2, 2, 3, 0, 0), wd);
  int64_t dims[2] = {3, 2};
  mlcc_shape_t s1 = shp(1, 2, 0, 0, 0);
  mlcc_value_t* shape_c = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "shape", MLCC_DTYPE_I64, &s1, dims, true, &shape_c));
  mlcc_value_t* r = val(g, "r", shp(2, 3, 2, 0, 0));
  mlcc_value_t* i = val(g, "i", shp(2, 3, 2, 0, 0));
  mlcc_value_t* x = input(g, "x", shp(2, 3, 2, 0, 0));
  mlcc_value_t* y = val(g, "y", shp(2, 3, 2, 0, 0));
  binary(g, MLCC_OP_RESHAPE, "reshape", w, shape_c, r);
  unary(g, MLCC_OP_IDENTITY, "identity", r, i);
  binary(g, MLCC_OP_ADD, "add", x, i, y);
  mark_output(g, y);
  CHECK_OK(run1(g, MLCC_PASS_FOLD_CONSTANTS, 1));
  CHECK_EQ_INT(g->n_nodes, 1);
  CHECK_EQ_INT(i->kind, MLCC_VALUE_CONSTANT);
  CHECK(i->data == w->data);
  CHECK_EQ_INT(i->shape.dims[0], 3);
  CHECK_NEAR(mlcc_value_const_f64(i, 5), 6.0, 0);
  CHECK(g->nodes[0]->inputs[1] == i);
  mlcc_graph_destroy(g);
}

static void test_fold_shape_size_constant(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_value_t* x = input(g, "x", shp(3, 2, 3, 4, 0));
  mlcc_value_t* sh = NULL;
  mlcc_value_t* sh_tail = NULL;
  mlcc_value_t* sz = NULL;
  mlcc_value_t* k = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "sh", MLCC_VALUE_INTERMEDIATE, &sh));
  CHECK_OK(mlcc_graph_add_value(g, "sh_tail", MLCC_VALUE_INTERMEDIATE, &sh_tail));
  CHECK_OK(mlcc_graph_add_value(g, "sz", MLCC_VALUE_INTERMEDIATE, &sz));
  CHECK_OK(mlcc_graph_add_value(g, "k", MLCC_VALUE_INTERMEDIATE, &k));
  unary(g, MLCC_OP_SHAPE, "shape", x, sh);
  mlcc_attr_t start = {.name = "start", .kind = MLCC_ATTR_INT, .i = -2};
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_SHAPE, 15, "shape_tail", &x, 1, &sh_tail, 1, &start,
                               1, &n));
  unary(g, MLCC_OP_SIZE, "size", x, sz);
  static const int64_t kv[3] = {7, 8, 9};
  mlcc_attr_t value_ints = {.name = "value_ints", .kind = MLCC_ATTR_INTS, .count = 3,
                            .ints = kv};
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONSTANT, 13, "const", NULL, 0, &k, 1, &value_ints,
                               1, &n));
  // Readers so that nothing is a graph output.
  mlcc_value_t* ins[4] = {sh, sh_tail, sz, k};
  mlcc_value_t* cat = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "cat", MLCC_VALUE_INTERMEDIATE, &cat));
  node(g, MLCC_OP_CONCAT, "concat", ins, 4, cat);
  mark_output(g, cat);
  bool changed = false;
  mlcc_pass_ctx_t ctx = ctx_at(1);
  CHECK_OK(mlcc_pass_fold_constants(&ctx, g, &changed));
  CHECK(changed);
  CHECK_EQ_INT(g->n_nodes, 1);
  CHECK_EQ_INT(sh->kind, MLCC_VALUE_CONSTANT);
  CHECK_EQ_INT(sh->dtype, MLCC_DTYPE_I64);
  CHECK_EQ_INT(sh->shape.rank, 1);
  CHECK_EQ_INT(sh->shape.dims[0], 3);
  CHECK(sh->producer == NULL);
  CHECK_EQ_INT(mlcc_value_const_i64(sh, 0), 2);
  CHECK_EQ_INT(mlcc_value_const_i64(sh, 1), 3);
  CHECK_EQ_INT(mlcc_value_const_i64(sh, 2), 4);
  CHECK_EQ_INT(sh_tail->shape.dims[0], 2);
  CHECK_EQ_INT(mlcc_value_const_i64(sh_tail, 0), 3);
  CHECK_EQ_INT(mlcc_value_const_i64(sh_tail, 1), 4);
  CHECK_EQ_INT(sz->shape.rank, 0);
  CHECK_EQ_INT(mlcc_value_const_i64(sz, 0), 24);
  CHECK_EQ_INT(k->kind, MLCC_VALUE_CONSTANT);
  CHECK_EQ_INT(k->shape.dims[0], 3);
  CHECK_EQ_INT(mlcc_value_const_i64(k, 2), 9);
  mlcc_graph_destroy(g);
}

//===----------------------------------------------------------------------===//
// fold-batchnorm
//===----------------------------------------------------------------------===//

// Conv(x[1,2,3,3], W[3,2,1,1], b?) -> BN -> y; checks folded W' and b'.
static void check_batchnorm_fold(bool with_bias, bool bn_is_output) {
  mlcc_graph_t* g = new_graph();
  float w[6] = {1.0f, -2.0f, 0.5f, 3.0f, -1.5f, 0.25f};
  float b[3] = {0.1f, -0.2f, 0.3f};
  float scale[3] = {2.0f, 0.5f, -1.0f};
  float shift[3] = {0.01f, 0.02f, 0.03f};
  float mean[3] = {0.5f, -0.5f, 1.0f};
  float var[3] = {4.0f, 0.25f, 1.0f};
  const float eps = 1e-3f;
  mlcc_value_t* x = input(g, "x", shp(4, 1, 2, 3, 3));
  mlcc_value_t* wv = cst(g, "W", shp(4, 3, 2, 1, 1), w);
  mlcc_value_t* bv = cst(g, "B_conv", shp(1, 3, 0, 0, 0), b);
  mlcc_value_t* sv = cst(g, "scale", shp(1, 3, 0, 0, 0), scale);
  mlcc_value_t* hv = cst(g, "shift", shp(1, 3, 0, 0, 0), shift);
  mlcc_value_t* mv = cst(g, "mean", shp(1, 3, 0, 0, 0), mean);
  mlcc_value_t* vv = cst(g, "var", shp(1, 3, 0, 0, 0), var);
  mlcc_shape_t os = shp(4, 1, 3, 3, 3);
  mlcc_value_t* c = val(g, "c", os);
  mlcc_value_t* y = val(g, "y", os);
  mlcc_value_t* r = val(g, "r", os);
  mlcc_value_t* cins[3] = {x, wv, bv};
  mlcc_node_t* conv = node(g, MLCC_OP_CONV, "conv", cins, with_bias ? 3 : 2, c);
  mlcc_value_t* bins[5] = {c, sv, hv, mv, vv};
  mlcc_attr_t eps_attr = {.name = "epsilon", .kind = MLCC_ATTR_FLOAT, .f = eps};
  mlcc_node_t* bn = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_BATCH_NORMALIZATION, 15, "bn", bins, 5, &y, 1,
                               &eps_attr, 1, &bn));
  if (bn_is_output) {
    mark_output(g, y);
  } else {
    unary(g, MLCC_OP_RELU, "relu", y, r);
    mark_output(g, r);
  }
  CHECK_OK(run1(g, MLCC_PASS_FOLD_BATCHNORM, 1));
  CHECK_EQ_INT(g->n_nodes, bn_is_output ? 1 : 2);
  CHECK(g->nodes[0] == conv);
  CHECK(bn->dead);
  CHECK_EQ_INT(conv->n_inputs, 3);
  CHECK(conv->inputs[0] == x);
  CHECK(conv->outputs[0] == y);
  CHECK(y->producer == conv);
  if (!bn_is_output) CHECK(g->nodes[1]->inputs[0] == y);
  CHECK(g->outputs[0] == (bn_is_output ? y : r));
  mlcc_value_t* w2 = conv->inputs[1];
  mlcc_value_t* b2 = conv->inputs[2];
  CHECK(w2 != wv && w2->kind == MLCC_VALUE_CONSTANT);
  CHECK(b2 != bv && b2->kind == MLCC_VALUE_CONSTANT);
  CHECK(mlcc_shape_equal(&w2->shape, &wv->shape));
  CHECK_EQ_INT(b2->shape.rank, 1);
  CHECK_EQ_INT(b2->shape.dims[0], 3);
  // Original weights are untouched (they may be shared).
  CHECK_EQ_INT(((const float*)wv->data)[1] == -2.0f, 1);
  for (int oc = 0; oc < 3; ++oc) {
    double s = scale[oc] / sqrt((double)var[oc] + eps);
    for (int ic = 0; ic < 2; ++ic) {
      double want = w[oc * 2 + ic] * s;
      CHECK_NEAR(((const float*)w2->data)[oc * 2 + ic], want, 1e-6 * fabs(want) + 1e-7);
    }
    double want_b = ((with_bias ? b[oc] : 0.0) - mean[oc]) * s + shift[oc];
    CHECK_NEAR(((const float*)b2->data)[oc], want_b, 1e-6 * fabs(want_b) + 1e-7);
  }
  // Numerical spot check of the whole rewrite at one point: conv output
  // channel 0 for input pixel values (p0, p1).
  double p0 = 0.7, p1 = -1.3;
  for (int oc = 0; oc < 3; ++oc) {
    double conv_out = w[oc * 2] * p0 + w[oc * 2 + 1] * p1 + (with_bias ? b[oc] : 0.0);
    double ref = (conv_out - mean[oc]) / sqrt((double)var[oc] + eps) * scale[oc] + shift[oc];
    const float* nw = (const float*)w2->data;
    double got = nw[oc * 2] * p0 + nw[oc * 2 + 1] * p1 + ((const float*)b2->data)[oc];
    CHECK_NEAR(got, ref, 1e-5);
  }
  CHECK_OK(mlcc_graph_verify(g, true));
  mlcc_graph_destroy(g);
}

static void test_fold_batchnorm(void) {
  check_batchnorm_fold(true, false);
  check_batchnorm_fold(false, false);
  check_batchnorm_fold(true, true);
}

// The Conv output has a second reader: folding would change it; no fold.
static void test_fold_batchnorm_skips_shared_conv_output(void) {
  mlcc_graph_t* g = new_graph();
  float w[2] = {1, 2}, one[1] = {1}, zero[1] = {0};
  mlcc_value_t* x = input(g, "x", shp(4, 1, 2, 2, 2));
  mlcc_value_t* wv = cst(g, "W", shp(4, 1, 2, 1, 1), w);
  mlcc_value_t* sv = cst(g, "s", shp(1, 1, 0, 0, 0), one);
  mlcc_value_t* hv = cst(g, "h", shp(1, 1, 0, 0, 0), zero);
  mlcc_value_t* mv = cst(g, "m", shp(1, 1, 0, 0, 0), zero);
  mlcc_value_t* vv = cst(g, "v", shp(1, 1, 0, 0, 0), one);
  mlcc_shape_t os = shp(4, 1, 1, 2, 2);
  mlcc_value_t* c = val(g, "c", os);
  mlcc_value_t* y = val(g, "y", os);
  mlcc_value_t* z = val(g, "z", os);
  mlcc_value_t* cins[2] = {x, wv};
  node(g, MLCC_OP_CONV, "conv", cins, 2, c);
  mlcc_value_t* bins[5] = {c, sv, hv, mv, vv};
  node(g, MLCC_OP_BATCH_NORMALIZATION, "bn", bins, 5, y);
  binary(g, MLCC_OP_ADD, "add", y, c, z);
  mark_output(g, z);
  bool changed = true;
  mlcc_pass_ctx_t ctx = ctx_at(1);
  CHECK_OK(mlcc_pass_fold_batchnorm(&ctx, g, &changed));
  CHECK(!changed);
  CHECK_EQ_INT(g->n_nodes, 3);
  mlcc_graph_destroy(g);
}

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

//===----------------------------------------------------------------------===//
// plan-memory
//===----------------------------------------------------------------------===//

// True if |out| is the in-place output of a kernel reusing |in|'s bytes
// (mlcc_kernel_t.inplace_input; |in| may be read through a Reshape alias).
static bool inplace_pair(const mlcc_graph_t* g, const mlcc_value_t* in, const mlcc_value_t* out) {
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &g->kernels[k];
    const mlcc_value_t* v = kern->inplace_input;
    if (v == NULL || mlcc_node_output(kern->nodes[kern->n_nodes - 1], 0) != out) continue;
    if (v == in || v->alias_of == in) return true;
  }
  return false;
}

// Independent liveness: for each slot value, [def, last] in kernel indices.
// Checks: alignment, in-bounds, no overlap between simultaneously live
// values, and no overlap between any kernel's outputs and its inputs, except
// an in-place output and the input it reuses, which must then share offset
// and size, and the input must die at that kernel.
static void check_plan(const mlcc_graph_t* g) {
  CHECK_EQ_INT(g->workspace_align, 64);
  CHECK_EQ_INT(g->workspace_size % 64, 0);
  uint32_t n = g->n_values;
  int64_t* def = (int64_t*)malloc(n * sizeof(int64_t));
  int64_t* last = (int64_t*)malloc(n * sizeof(int64_t));
  for (uint32_t i = 0; i < n; ++i) def[i] = last[i] = -1;
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &g->kernels[k];
    for (uint32_t j = 0; j < kern->n_nodes; ++j) {
      const mlcc_node_t* nd = kern->nodes[j];
      for (uint32_t i = 0; i < nd->n_inputs; ++i) {
        const mlcc_value_t* iv = nd->inputs[i];
        if (iv == NULL || iv->ws_offset < 0) continue;
        last[iv->id] = k;
        if (iv->alias_of != NULL) last[iv->alias_of->id] = k;  // a Reshape view
      }
      for (uint32_t i = 0; i < nd->n_outputs; ++i) {
        const mlcc_value_t* o = nd->outputs[i];
        if (o == NULL) continue;
        bool chain_internal = j + 1 < kern->n_nodes;
        if (chain_internal) CHECK_EQ_INT(o->ws_offset, -1);
        if (o->kind == MLCC_VALUE_INTERMEDIATE && !o->is_output && !chain_internal) {
          CHECK(o->ws_offset >= 0);
        }
        if (o->is_output) CHECK_EQ_INT(o->ws_offset, -1);
        if (o->ws_offset >= 0) {
          def[o->id] = k;
          if (last[o->id] < 0) last[o->id] = k;
        }
      }
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_value_t* a = g->values[i];
    if (a->alias_of != NULL) {  // the source's bytes
      CHECK_EQ_INT(a->ws_offset, a->alias_of->ws_offset);
      continue;
    }
    if (a->ws_offset < 0) continue;
    int64_t sa = (int64_t)mlcc_value_byte_size(a);
    CHECK_EQ_INT(a->ws_offset % 64, 0);
    CHECK(a->ws_offset + sa <= g->workspace_size);
    for (uint32_t j = i + 1; j < n; ++j) {
      const mlcc_value_t* b = g->values[j];
      if (b->ws_offset < 0 || b->alias_of != NULL) continue;
      int64_t sb = (int64_t)mlcc_value_byte_size(b);
      bool live_together = def[i] <= last[j] && def[j] <= last[i];
      bool overlap = a->ws_offset < b->ws_offset + (sb ? sb : 1) &&
                     b->ws_offset < a->ws_offset + (sa ? sa : 1);
      if (inplace_pair(g, a, b) || inplace_pair(g, b, a)) {
        const mlcc_value_t* in = inplace_pair(g, a, b) ? a : b;
        const mlcc_value_t* out = in == a ? b : a;
        CHECK_EQ_INT(in->ws_offset, out->ws_offset);
        CHECK_EQ_INT(sa, sb);
        CHECK(last[in->id] <= def[out->id]);
        continue;
      }
      if (live_together && overlap) {
        fprintf(stderr, "overlap: '%s' [%lld,+%lld) k%lld..%lld and '%s' [%lld,+%lld) k%lld..%lld\n",
                a->name, (long long)a->ws_offset, (long long)sa, (long long)def[i],
                (long long)last[i], b->name, (long long)b->ws_offset, (long long)sb,
                (long long)def[j], (long long)last[j]);
      }
      CHECK(!(live_together && overlap));
    }
  }
  // Outputs of a kernel vs its inputs, all pairs.
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &g->kernels[k];
    const mlcc_node_t* lastn = kern->nodes[kern->n_nodes - 1];
    for (uint32_t o = 0; o < lastn->n_outputs; ++o) {
      const mlcc_value_t* ov = lastn->outputs[o];
      if (ov == NULL || ov->ws_offset < 0) continue;
      int64_t so = (int64_t)mlcc_value_byte_size(ov);
      for (uint32_t j = 0; j < kern->n_nodes; ++j) {
        const mlcc_node_t* nd = kern->nodes[j];
        for (uint32_t i = 0; i < nd->n_inputs; ++i) {
          const mlcc_value_t* iv = nd->inputs[i];
          if (iv == NULL || iv->ws_offset < 0 || iv == kern->inplace_input) continue;
          int64_t si = (int64_t)mlcc_value_byte_size(iv);
          CHECK(ov->ws_offset + so <= iv->ws_offset || iv->ws_offset + si <= ov->ws_offset);
        }
      }
    }
  }
  free(def);
  free(last);
}

// x -> a -> b -> c -> d(out): each value dies when the next is written, so
// b and c are written in place over a.
static void test_plan_memory_chain_reuses(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 1, 256, 0, 0);  // 1 KiB
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* d = val(g, "d", s);
  unary(g, MLCC_OP_RELU, "n0", x, a);
  unary(g, MLCC_OP_EXP, "n1", a, b);
  unary(g, MLCC_OP_NEG, "n2", b, c);
  unary(g, MLCC_OP_ABS, "n3", c, d);
  mark_output(g, d);
  mlcc_pass_ctx_t ctx = ctx_at(0);
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  CHECK_EQ_INT(a->ws_offset, 0);
  CHECK_EQ_INT(b->ws_offset, 0);  // in place over a
  CHECK_EQ_INT(c->ws_offset, 0);  // in place over b
  CHECK_EQ_INT(d->ws_offset, -1);  // graph output: the caller's buffer
  CHECK_EQ_INT(x->ws_offset, -1);
  CHECK(g->kernels[0].inplace_input == NULL);  // x is a graph input
  CHECK(g->kernels[1].inplace_input == a);
  CHECK(g->kernels[2].inplace_input == b);
  CHECK(g->kernels[3].inplace_input == NULL);  // d is a graph output
  CHECK_EQ_INT(g->workspace_size, 1024);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 3072);
  CHECK_EQ_INT(peak, 1024);
  CHECK(g->workspace_size < naive);
  check_plan(g);
  mlcc_graph_destroy(g);
}

// A value read much later stays live; odd sizes round to 64; fused chains
// get no slots inside; a multi-output node with an unread output.
static void test_plan_memory_liveness(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 1, 10, 0, 0);     // 40 bytes -> 64
  mlcc_shape_t big = shp(2, 3, 100, 0, 0);  // 1200 bytes -> 1216
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* v1 = val(g, "v1", s);
  mlcc_value_t* v2 = val(g, "v2", big);
  mlcc_value_t* v3 = val(g, "v3", big);
  mlcc_value_t* v4 = val(g, "v4", s);
  mlcc_value_t* v5 = val(g, "v5", s);
  mlcc_value_t* idx = val(g, "idx", s);
  idx->dtype = MLCC_DTYPE_I64;
  mlcc_value_t* v6 = val(g, "v6", s);
  mlcc_value_t* y = val(g, "y", s);
  mlcc_value_t* w = NULL;
  float wd[300];
  for (int i = 0; i < 300; ++i) wd[i] = (float)i;
  w = cst(g, "w", big, wd);
  unary(g, MLCC_OP_RELU, "relu", x, v1);                 // v1 lives until "add"
  binary(g, MLCC_OP_ADD, "bcast", w, v1, v2);            // [3,100]? (shapes by hand)
  unary(g, MLCC_OP_EXP, "exp", v2, v3);
  mlcc_value_t* rin[1] = {v3};
  node(g, MLCC_OP_REDUCE_MEAN, "mean", rin, 1, v4);
  binary(g, MLCC_OP_ADD, "add", v4, v1, v5);             // reads v1 again
  mlcc_node_t* mp = NULL;
  mlcc_value_t* mouts[2] = {v6, idx};
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_MAX_POOL, 12, "pool", &v5, 1, mouts, 2, NULL, 0, &mp));
  unary(g, MLCC_OP_SIGMOID, "sig", v6, y);
  mark_output(g, y);
  mlcc_pass_ctx_t ctx = ctx_at(2);
  ctx.verify_each = false;  // the by-hand shapes above are not all consistent
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  // relu | bcast+exp ([3,100]) | mean+add (v1 is older than mean) | pool | sig
  CHECK_EQ_INT(g->n_kernels, 5);
  CHECK_EQ_INT(v2->ws_offset, -1);  // inside a fused chain
  CHECK_EQ_INT(v4->ws_offset, -1);
  CHECK(v1->ws_offset >= 0 && v3->ws_offset >= 0);
  CHECK(v5->ws_offset >= 0 && v6->ws_offset >= 0);
  CHECK(idx->ws_offset >= 0);  // never read, still written by the pool
  CHECK(w->ws_offset == -1);
  check_plan(g);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 64 + 1216 + 64 + 64 + 128);  // v1 v3 v5 v6 idx(80 -> 128)
  CHECK(peak <= g->workspace_size);
  CHECK(g->workspace_size < naive);
  // Deterministic: planning again gives the same offsets.
  int64_t before[16];
  for (uint32_t i = 0; i < g->n_values && i < 16; ++i) before[i] = g->values[i]->ws_offset;
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  for (uint32_t i = 0; i < g->n_values && i < 16; ++i) {
    CHECK_EQ_INT(g->values[i]->ws_offset, before[i]);
  }
  mlcc_graph_destroy(g);
}

// Many random DAGs: the plan is always consistent.
static void test_plan_memory_random(void) {
  uint32_t seed = 12345;
  for (int iter = 0; iter < 200; ++iter) {
    mlcc_graph_t* g = new_graph();
    mlcc_value_t* vals[40];
    uint32_t nv = 0;
    vals[nv++] = input(g, "x", shp(1, 64, 0, 0, 0));
    int n_nodes = 5 + iter % 30;
    for (int i = 0; i < n_nodes; ++i) {
      seed = seed * 1103515245u + 12345u;
      mlcc_value_t* a = vals[(seed >> 8) % nv];
      seed = seed * 1103515245u + 12345u;
      mlcc_value_t* b = vals[(seed >> 8) % nv];
      char name[16];
      snprintf(name, sizeof(name), "v%d", i);
      int64_t sz = 16 * (1 + (int64_t)((seed >> 4) % 7));
      mlcc_value_t* o = val(g, name, shp(1, sz, 0, 0, 0));
      if ((seed >> 12) % 2) {
        unary(g, MLCC_OP_RELU, name, a, o);
      } else {
        binary(g, MLCC_OP_ADD, name, a, b, o);
      }
      vals[nv++] = o;
    }
    mark_output(g, vals[nv - 1]);
    mlcc_pass_ctx_t ctx = ctx_at(iter % 3);
    ctx.verify_each = false;  // random sizes do not broadcast
    mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
    CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
    check_plan(g);
    int64_t naive = 0, peak = 0;
    CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
    CHECK(peak <= g->workspace_size);
    CHECK(g->workspace_size <= naive);
    mlcc_graph_destroy(g);
  }
}

// In place: the planner's decision (choose_inplace) on small graphs at -O0
// (one kernel per node) and -O2 (fused).
static void test_plan_memory_inplace_elementwise(void) {
  mlcc_shape_t s = shp(2, 4, 16, 0, 0);  // 256 bytes
  // Input read later: a is read by Exp and by Add, so Exp does not overwrite
  // it; Add is the last reader of both a and b and takes the first (b).
  mlcc_graph_t* g = new_graph();
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", x, a);
  unary(g, MLCC_OP_EXP, "exp", a, b);
  binary(g, MLCC_OP_ADD, "add", b, a, c);
  unary(g, MLCC_OP_SOFTMAX, "softmax", c, y);
  mark_output(g, y);
  mlcc_pass_ctx_t ctx = ctx_at(0);
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  CHECK(g->kernels[0].inplace_input == NULL);  // graph input
  CHECK(g->kernels[1].inplace_input == NULL);  // a is read again by add
  CHECK(g->kernels[2].inplace_input == b);
  CHECK(g->kernels[3].inplace_input == NULL);  // graph output
  CHECK(b->ws_offset != a->ws_offset);
  CHECK_EQ_INT(c->ws_offset, b->ws_offset);
  CHECK_EQ_INT(g->workspace_size, 512);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 768);
  CHECK_EQ_INT(peak, 512);
  check_plan(g);
  mlcc_graph_destroy(g);

  // Broadcast input: a [1,16] broadcasts to Add's [4,16] output; z is a graph
  // input. Neither may be overwritten.
  g = new_graph();
  mlcc_value_t* xs = input(g, "xs", shp(2, 1, 16, 0, 0));
  mlcc_value_t* z = input(g, "z", s);
  a = val(g, "a", shp(2, 1, 16, 0, 0));
  b = val(g, "b", s);
  y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", xs, a);
  binary(g, MLCC_OP_ADD, "add", a, z, b);
  unary(g, MLCC_OP_SOFTMAX, "softmax", b, y);
  mark_output(g, y);
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 3);
  for (uint32_t k = 0; k < g->n_kernels; ++k) CHECK(g->kernels[k].inplace_input == NULL);
  CHECK(a->ws_offset >= 0 && b->ws_offset >= 0 && a->ws_offset != b->ws_offset);
  check_plan(g);
  mlcc_graph_destroy(g);

  // A Softmax anchor reads a whole row: never in place, even though a dies.
  g = new_graph();
  x = input(g, "x", s);
  a = val(g, "a", s);
  b = val(g, "b", s);
  y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", x, a);
  unary(g, MLCC_OP_SOFTMAX, "softmax", a, b);
  unary(g, MLCC_OP_SOFTMAX, "softmax2", b, y);
  mark_output(g, y);
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK(g->kernels[1].inplace_input == NULL);
  CHECK(a->ws_offset != b->ws_offset);
  CHECK_EQ_INT(g->workspace_size, 512);
  check_plan(g);
  mlcc_graph_destroy(g);
}

// In place through a Reshape alias; an alias read later keeps its source.
static void test_plan_memory_inplace_alias(void) {
  mlcc_shape_t s = shp(2, 2, 8, 0, 0);
  mlcc_shape_t flat = shp(1, 16, 0, 0, 0);
  int64_t dims[1] = {16};
  mlcc_shape_t s1 = shp(1, 1, 0, 0, 0);
  for (int late = 0; late < 2; ++late) {
    mlcc_graph_t* g = new_graph();
    mlcc_value_t* x = input(g, "x", s);
    mlcc_value_t* a = val(g, "a", s);
    mlcc_value_t* r = val(g, "r", flat);
    mlcc_value_t* b = val(g, "b", flat);
    mlcc_value_t* y = val(g, "y", flat);
    mlcc_value_t* shape = NULL;
    CHECK_OK(mlcc_graph_add_constant(g, "shape", MLCC_DTYPE_I64, &s1, dims, true, &shape));
    unary(g, MLCC_OP_RELU, "relu", x, a);
    binary(g, MLCC_OP_RESHAPE, "reshape", a, shape, r);
    unary(g, MLCC_OP_NEG, "neg", r, b);
    unary(g, MLCC_OP_SOFTMAX, "softmax", b, y);
    mark_output(g, y);
    mlcc_value_t* y2 = NULL;
    if (late) {  // r is read again after neg
      y2 = val(g, "y2", flat);
      unary(g, MLCC_OP_SOFTMAX, "softmax2", r, y2);
      mark_output(g, y2);
    }
    mlcc_pass_ctx_t ctx = ctx_at(2);
    mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
    CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
    CHECK(r->alias_of == a);
    CHECK_EQ_INT(g->n_kernels, late ? 4 : 3);
    if (g->n_kernels < 2) {
      mlcc_graph_destroy(g);
      continue;
    }
    CHECK(g->kernels[1].nodes[0]->op == MLCC_OP_NEG);
    if (late) {
      CHECK(g->kernels[1].inplace_input == NULL);
      CHECK(b->ws_offset != a->ws_offset);
    } else {
      CHECK(g->kernels[1].inplace_input == r);
      CHECK_EQ_INT(b->ws_offset, a->ws_offset);
      CHECK_EQ_INT(g->workspace_size, 64);
    }
    check_plan(g);
    mlcc_graph_destroy(g);
  }
}

// MatMul + residual Add: the residual, read only by the epilogue, is
// overwritten; an input the MatMul anchor itself reads never is.
static void test_plan_memory_inplace_matmul(void) {
  mlcc_shape_t s = shp(2, 8, 8, 0, 0);  // 256 bytes
  float wd[64];
  for (int i = 0; i < 64; ++i) wd[i] = (float)(i % 7) - 3.0f;
  for (int anchor_reads = 0; anchor_reads < 2; ++anchor_reads) {
    mlcc_graph_t* g = new_graph();
    mlcc_value_t* x = input(g, "x", s);
    mlcc_value_t* w = cst(g, "w", s, wd);
    mlcc_value_t* r = val(g, "r", s);
    mlcc_value_t* m = val(g, "m", s);
    mlcc_value_t* t = val(g, "t", s);
    mlcc_value_t* y = val(g, "y", s);
    unary(g, MLCC_OP_RELU, "relu", x, r);
    binary(g, MLCC_OP_MATMUL, "matmul", anchor_reads ? r : x, w, m);
    binary(g, MLCC_OP_ADD, "residual", m, r, t);
    unary(g, MLCC_OP_SOFTMAX, "softmax", t, y);
    mark_output(g, y);
    mlcc_pass_ctx_t ctx = ctx_at(2);
    mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
    CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
    CHECK_EQ_INT(g->n_kernels, 3);
    if (g->n_kernels != 3) {
      mlcc_graph_destroy(g);
      continue;
    }
    CHECK_EQ_INT(g->kernels[1].n_nodes, 2);
    if (anchor_reads) {
      CHECK(g->kernels[1].inplace_input == NULL);
      CHECK(t->ws_offset != r->ws_offset);
      CHECK_EQ_INT(g->workspace_size, 512);
    } else {
      CHECK(g->kernels[1].inplace_input == r);
      CHECK_EQ_INT(t->ws_offset, r->ws_offset);
      CHECK_EQ_INT(g->workspace_size, 256);
      int64_t naive = 0, peak = 0;
      CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
      CHECK_EQ_INT(naive, 512);
      CHECK_EQ_INT(peak, 256);
    }
    check_plan(g);
    mlcc_graph_destroy(g);
  }
}

int main(void) {
  RUN(test_lookup_and_names);
  RUN(test_default_pipelines);
  RUN(test_parse_pipeline);
  RUN(test_run_pipeline_prints_and_annotates);
  RUN(test_verify_failure_is_internal);
  RUN(test_infer_shapes_annotates);
  RUN(test_dce_removes_unused_branch);
  RUN(test_remove_identity);
  RUN(test_fold_shape_size_constant);
  RUN(test_fold_views_of_constants);
  RUN(test_fold_batchnorm);
  RUN(test_fold_batchnorm_skips_shared_conv_output);
  RUN(test_fuse_conv_add_relu);
  RUN(test_fuse_closure_and_alias);
  RUN(test_fuse_silu_and_late_inputs);
  RUN(test_plan_memory_chain_reuses);
  RUN(test_plan_memory_liveness);
  RUN(test_plan_memory_random);
  RUN(test_plan_memory_inplace_elementwise);
  RUN(test_plan_memory_inplace_alias);
  RUN(test_plan_memory_inplace_matmul);
  return TEST_EXIT();
}

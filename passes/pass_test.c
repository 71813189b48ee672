// SPDX-License-Identifier: Apache-2.0
// Unit tests for the pass manager and the graph passes, on hand-built graphs
// whose shapes are set by hand (no dependence on op inference or the JIT).
// fuse and plan-memory have their own: fuse_test.c, plan_memory_test.c.
#include "passes/pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/verify.h"
#include "passes/pass_test_util.h"

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
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Unit tests for the ONNX importer. Fixtures are tiny .onnx files written by
// tests/data/onnx_import/make_fixtures.py (checked in beside it).
#include "ir/onnx/onnx_import.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/onnx/onnx_import_impl.h"
#include "ir/subgraph.h"
#include "test.h"

static char g_fixture_dir[4096];

// Finds tests/data/onnx_import from this file's path (CMake compiles with
// absolute source paths), or from the current directory as a fallback.
static void init_fixture_dir(void) {
  const char* self = __FILE__;
  const char* tail = strstr(self, "ir/onnx/onnx_import_test.c");
  if (tail != NULL && self[0] == '/') {
    snprintf(g_fixture_dir, sizeof(g_fixture_dir), "%.*stests/data/onnx_import/",
             (int)(tail - self), self);
  } else {
    snprintf(g_fixture_dir, sizeof(g_fixture_dir), "tests/data/onnx_import/");
  }
}

static const char* fx(const char* name) {
  static char buf[8][4096];
  static int next = 0;
  char* b = buf[next++ % 8];
  snprintf(b, 4096, "%s%s", g_fixture_dir, name);
  return b;
}

static mlcc_status_t import(const char* name, const mlcc_onnx_import_options_t* o,
                            mlcc_graph_t** g) {
  return mlcc_onnx_import_file(fx(name), o, g);
}

// Imports |name| expecting |code|; returns the rendered message (malloc'ed).
static char* import_err(const char* name, const mlcc_onnx_import_options_t* o,
                        mlcc_status_code_t code) {
  mlcc_graph_t* g = NULL;
  mlcc_status_t s = import(name, o, &g);
  CHECK(g == NULL);
  if (g) mlcc_graph_destroy(g);
  char* msg = mlcc_status_to_string(s);
  if (mlcc_status_code(s) != code) {
    fprintf(stderr, "  %s: want %s, got %s\n", name, mlcc_status_code_name(code),
            msg ? msg : "OK");
    CHECK(mlcc_status_code(s) == code);
  }
  mlcc_status_free(s);
  return msg ? msg : strdup("");
}

#define CHECK_CONTAINS(hay, needle)                                                   \
  do {                                                                                \
    const char* h_ = (hay);                                                           \
    if (h_ == NULL || strstr(h_, (needle)) == NULL) {                                 \
      fprintf(stderr, "%s:%d: '%s' not in '%s'\n", __FILE__, __LINE__, (needle),     \
              h_ ? h_ : "(null)");                                                   \
      test_current_failed_ = 1;                                                       \
      test_failures_++;                                                               \
    }                                                                                 \
  } while (0)

static void expect_err(const char* name, mlcc_status_code_t code, const char* needle) {
  char* m = import_err(name, NULL, code);
  if (needle) CHECK_CONTAINS(m, needle);
  free(m);
}

static mlcc_value_t* val(mlcc_graph_t* g, const char* name) {
  mlcc_value_t* v = mlcc_graph_find_value(g, name);
  if (v == NULL) fprintf(stderr, "  value '%s' missing\n", name);
  return v;
}

static void check_shape(const mlcc_value_t* v, int rank, const int64_t* dims) {
  CHECK(v != NULL);
  if (!v) return;
  CHECK_EQ_INT(v->shape.rank, rank);
  for (int i = 0; i < rank && i < v->shape.rank; ++i) CHECK_EQ_INT(v->shape.dims[i], dims[i]);
}

//===----------------------------------------------------------------------===//

static void test_real_mlp(void) {
  const char* path = "/work/shared/models/mlp/model.onnx";
  if (access(path, R_OK) != 0) {
    printf("SKIP test_real_mlp: %s not present\n", path);
    return;
  }
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_onnx_import_file(path, NULL, &g));
  if (!g) return;
  CHECK_EQ_INT(g->n_inputs, 1);
  CHECK_STREQ(g->inputs[0]->name, "input");
  CHECK_EQ_INT(g->inputs[0]->dtype, MLCC_DTYPE_F32);
  check_shape(g->inputs[0], 2, (const int64_t[]){1, 784});
  CHECK_EQ_INT(g->n_outputs, 1);
  CHECK_STREQ(g->outputs[0]->name, "output");
  CHECK(g->outputs[0]->is_output);
  CHECK_EQ_INT(g->n_nodes, 4);
  if (g->n_nodes == 4) {
    CHECK_EQ_INT(g->nodes[0]->op, MLCC_OP_GEMM);
    CHECK_EQ_INT(g->nodes[1]->op, MLCC_OP_RELU);
    CHECK_EQ_INT(g->nodes[2]->op, MLCC_OP_GEMM);
    CHECK_EQ_INT(g->nodes[3]->op, MLCC_OP_SOFTMAX);
    CHECK_EQ_INT(g->nodes[0]->opset, 13);
    CHECK(g->nodes[3]->outputs[0] == g->outputs[0]);
  }
  mlcc_value_t* w = val(g, "fc1.weight");
  CHECK(w && w->kind == MLCC_VALUE_CONSTANT && w->data != NULL);
  check_shape(w, 2, (const int64_t[]){256, 784});
  mlcc_graph_destroy(g);
}

static void test_raw_and_typed_tensors(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("tensors.onnx", NULL, &g));
  if (!g) return;
  CHECK_EQ_INT(g->n_nodes, 2);
  CHECK_EQ_INT(g->n_inputs, 1);
  mlcc_value_t* v = val(g, "w_raw");
  CHECK(v && v->kind == MLCC_VALUE_CONSTANT && v->dtype == MLCC_DTYPE_F32);
  check_shape(v, 2, (const int64_t[]){2, 2});
  if (v) {
    const float* f = (const float*)v->data;
    CHECK(f[0] == 1 && f[1] == 2 && f[2] == 3 && f[3] == 4);
  }
  v = val(g, "w_typed");
  if (v) {
    const float* f = (const float*)v->data;
    CHECK(f[0] == 10 && f[1] == 20 && f[2] == 30 && f[3] == 40);
  }
  v = val(g, "i64");
  if (v) {
    const int64_t* p = (const int64_t*)v->data;
    CHECK(v->dtype == MLCC_DTYPE_I64 && p[0] == -1 && p[1] == 0 && p[2] == (int64_t)1 << 40);
  }
  v = val(g, "i8");
  if (v) {
    const int8_t* p = (const int8_t*)v->data;
    CHECK(v->dtype == MLCC_DTYPE_I8 && p[0] == -128 && p[1] == 5 && p[2] == 127);
  }
  v = val(g, "u8");
  if (v) CHECK(((const uint8_t*)v->data)[1] == 255);
  v = val(g, "i16");
  if (v) CHECK(((const int16_t*)v->data)[0] == -300 && ((const int16_t*)v->data)[1] == 300);
  v = val(g, "b");
  if (v) {
    const uint8_t* p = (const uint8_t*)v->data;
    CHECK(v->dtype == MLCC_DTYPE_BOOL && p[0] == 1 && p[1] == 0 && p[2] == 1);
  }
  v = val(g, "f64");
  if (v) CHECK(((const double*)v->data)[0] == 0.5 && ((const double*)v->data)[1] == -2.25);
  v = val(g, "u32");
  if (v) CHECK(((const uint32_t*)v->data)[1] == 4000000000u);
  v = val(g, "u64");
  if (v) CHECK(((const uint64_t*)v->data)[0] == (uint64_t)1 << 63);
  v = val(g, "i32");
  if (v) CHECK(((const int32_t*)v->data)[0] == -7 && ((const int32_t*)v->data)[1] == 70000);
  v = val(g, "f16");
  if (v) {
    CHECK(v->dtype == MLCC_DTYPE_F16);
    CHECK(((const uint16_t*)v->data)[0] == 0x3c00 && ((const uint16_t*)v->data)[1] == 0xc000);
  }
  v = val(g, "scalar");
  if (v) {
    CHECK_EQ_INT(v->shape.rank, 0);
    CHECK(((const float*)v->data)[0] == 3.5f);
  }
  v = val(g, "empty");
  check_shape(v, 2, (const int64_t[]){0, 4});
  mlcc_graph_destroy(g);
}

static void test_constant_nodes(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("constants.onnx", NULL, &g));
  if (!g) return;
  CHECK_EQ_INT(g->n_nodes, 1);  // only Mul: Constants are values
  mlcc_value_t* v = val(g, "c_tensor");
  if (v) {
    CHECK(v->kind == MLCC_VALUE_CONSTANT && v->dtype == MLCC_DTYPE_I64);
    check_shape(v, 1, (const int64_t[]){2});
    CHECK(((const int64_t*)v->data)[0] == 4 && ((const int64_t*)v->data)[1] == 2);
  }
  v = val(g, "c_float");
  if (v) {
    CHECK(v->dtype == MLCC_DTYPE_F32 && v->shape.rank == 0);
    CHECK(((const float*)v->data)[0] == 1.5f);
  }
  v = val(g, "c_floats");
  if (v) {
    check_shape(v, 1, (const int64_t[]){3});
    CHECK(((const float*)v->data)[2] == 3.0f);
  }
  v = val(g, "c_int");
  if (v) CHECK(v->dtype == MLCC_DTYPE_I64 && ((const int64_t*)v->data)[0] == -9);
  v = val(g, "c_ints");
  if (v) {
    check_shape(v, 1, (const int64_t[]){2});
    CHECK(((const int64_t*)v->data)[1] == 6);
    CHECK(v->is_output);  // an output that is a constant is allowed
  }
  CHECK_EQ_INT(g->n_outputs, 2);
  if (g->n_nodes == 1) CHECK(g->nodes[0]->inputs[1] == val(g, "c_float"));
  mlcc_graph_destroy(g);
  expect_err("constant_string.onnx", MLCC_STATUS_UNIMPLEMENTED, "value_string");
}

static void test_initializer_as_input(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("init_as_input.onnx", NULL, &g));
  if (g) {
    CHECK_EQ_INT(g->n_inputs, 3);
    mlcc_value_t* v = val(g, "bias");
    CHECK(v && v->kind == MLCC_VALUE_INPUT);
    check_shape(v, 1, (const int64_t[]){3});
    v = val(g, "noshape");  // shape from the initializer's dims
    CHECK(v && v->kind == MLCC_VALUE_INPUT && v->dtype == MLCC_DTYPE_F32);
    check_shape(v, 2, (const int64_t[]){2, 3});
    v = val(g, "weight");
    CHECK(v && v->kind == MLCC_VALUE_CONSTANT && ((const float*)v->data)[0] == 9.0f);
    mlcc_graph_destroy(g);
  }
  // IR 3: initializers listed as inputs are weights, not inputs.
  g = NULL;
  CHECK_OK(import("init_as_input_ir3.onnx", NULL, &g));
  if (g) {
    CHECK_EQ_INT(g->n_inputs, 1);
    CHECK_STREQ(g->inputs[0]->name, "x");
    mlcc_value_t* v = val(g, "bias");
    CHECK(v && v->kind == MLCC_VALUE_CONSTANT && ((const float*)v->data)[2] == 3.0f);
    mlcc_graph_destroy(g);
  }
}

static void test_symbolic_dims_and_pins(void) {
  char* m = import_err("symbolic.onnx", NULL, MLCC_STATUS_INVALID_MODEL);
  CHECK_CONTAINS(m, "graph input 'x': dim 0 is symbolic ('N')");
  free(m);
  mlcc_input_shape_t pin = {"x", {2, {5, 3}}};
  mlcc_onnx_import_options_t o = {0};
  o.input_shapes = &pin;
  o.n_input_shapes = 1;
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("symbolic.onnx", &o, &g));
  if (g) {
    check_shape(g->inputs[0], 2, (const int64_t[]){5, 3});
    mlcc_graph_destroy(g);
  }
  mlcc_input_shape_t bad_rank = {"x", {3, {5, 3, 1}}};
  o.input_shapes = &bad_rank;
  m = import_err("symbolic.onnx", &o, MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_CONTAINS(m, "rank 3");
  free(m);
  mlcc_input_shape_t conflict = {"x", {2, {5, 4}}};
  o.input_shapes = &conflict;
  free(import_err("symbolic.onnx", &o, MLCC_STATUS_INVALID_ARGUMENT));
  mlcc_input_shape_t typo = {"xx", {2, {5, 3}}};
  o.input_shapes = &typo;
  m = import_err("symbolic.onnx", &o, MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_CONTAINS(m, "'xx'");
  free(m);
  // No shape at all: an error unless pinned (any rank).
  m = import_err("noshape.onnx", NULL, MLCC_STATUS_INVALID_MODEL);
  CHECK_CONTAINS(m, "graph input 'x' has no shape");
  free(m);
  mlcc_input_shape_t any = {"x", {3, {1, 2, 3}}};
  o.input_shapes = &any;
  g = NULL;
  CHECK_OK(import("noshape.onnx", &o, &g));
  if (g) {
    check_shape(g->inputs[0], 3, (const int64_t[]){1, 2, 3});
    mlcc_graph_destroy(g);
  }
  // Input sizes are bounded like tensors.
  mlcc_input_shape_t big = {"x", {2, {(int64_t)1 << 20, (int64_t)1 << 20}}};
  o.input_shapes = &big;
  m = import_err("noshape.onnx", &o, MLCC_STATUS_RESOURCE_EXHAUSTED);
  CHECK_CONTAINS(m, "at most 2^32");
  free(m);
  mlcc_input_shape_t ovf = {"x", {3, {(int64_t)1 << 40, (int64_t)1 << 40, 1 << 20}}};
  o.input_shapes = &ovf;
  free(import_err("noshape.onnx", &o, MLCC_STATUS_INVALID_MODEL));
}

static void test_unsupported_ops_listed_together(void) {
  char* m = import_err("unsupported.onnx", NULL, MLCC_STATUS_UNIMPLEMENTED);
  CHECK_CONTAINS(m, "3 unsupported operators");
  CHECK_CONTAINS(m, "'FancyOp' (node #1 'fancy', opset 13)");
  CHECK_CONTAINS(m, "'FusedGemm' (node #2 'fused', domain 'com.microsoft', opset 1)");
  CHECK_CONTAINS(m, "'HardSwish' (node #3 'hs', opset 13, supported opsets 14-26)");
  CHECK(strstr(m, "'Relu'") == NULL);
  free(m);
  expect_err("no_opset.onnx", MLCC_STATUS_INVALID_MODEL, "no opset_import for domain 'my.domain'");
}

static void test_malformed_files(void) {
  struct stat st;
  CHECK(stat(fx("truncated.onnx"), &st) == 0);
  char want[256];
  snprintf(want, sizeof(want),
           "truncated.onnx is not a valid ONNX model (failed to decode %lld bytes)",
           (long long)st.st_size);
  char* m = import_err("truncated.onnx", NULL, MLCC_STATUS_INVALID_MODEL);
  CHECK_CONTAINS(m, want);
  free(m);
  expect_err("garbage.onnx", MLCC_STATUS_INVALID_MODEL, "failed to decode 10 bytes");
  expect_err("does_not_exist.onnx", MLCC_STATUS_NOT_FOUND, "does_not_exist.onnx");
  expect_err("", MLCC_STATUS_IO, "not a regular file");  // the fixture directory
  mlcc_onnx_import_options_t o = {0};
  o.max_file_bytes = 100;
  m = import_err("tensors.onnx", &o, MLCC_STATUS_RESOURCE_EXHAUSTED);
  CHECK_CONTAINS(m, "over the limit of 100 bytes");
  free(m);
}

static void test_graph_errors(void) {
  expect_err("dangling.onnx", MLCC_STATUS_INVALID_MODEL,
             "node #1 'add1' (Add, opset 13): error: input 'nope' is not defined by any "
             "node, initializer or graph input");
  expect_err("dup_output.onnx", MLCC_STATUS_INVALID_MODEL, "node #1 'r1'");
  expect_err("cycle.onnx", MLCC_STATUS_INVALID_MODEL, NULL);
  expect_err("bad_output.onnx", MLCC_STATUS_INVALID_MODEL, "graph output 'zzz'");
}

// Subgraph templates (ir/subgraph.h): slots, captures through two levels,
// body nodes reordered topologically, structural errors.
static void test_subgraphs(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("graph_attr.onnx", NULL, &g));  // a GRAPH attribute Relu ignores
  if (g) {
    const mlcc_attr_t* a = mlcc_node_attr(g->nodes[0], "body");
    CHECK(a && a->kind == MLCC_ATTR_GRAPH && a->g && a->g->n_nodes == 0);
    mlcc_graph_destroy(g);
  }
  g = NULL;
  CHECK_OK(import("subgraph_loop.onnx", NULL, &g));
  if (!g) return;
  CHECK_EQ_INT(g->n_nodes, 1);
  const mlcc_attr_t* a = mlcc_node_attr(g->nodes[0], "body");
  CHECK(a && a->kind == MLCC_ATTR_GRAPH && a->g != NULL);
  const mlcc_subgraph_t* b = a ? a->g : NULL;
  if (b != NULL) {
    CHECK_STREQ(b->name, "loop_body");
    CHECK_EQ_INT(b->n_inputs, 3);
    CHECK_EQ_INT(b->inputs[0].dtype, MLCC_DTYPE_I64);
    CHECK_EQ_INT(b->inputs[2].dtype, MLCC_DTYPE_UNDEFINED);  // untyped formal input
    CHECK_EQ_INT(b->n_outputs, 2);
    CHECK_EQ_INT(b->n_consts, 2);  // initializer 'k' and Constant 'kc'
    CHECK_STREQ(b->consts[0].name, "k");
    CHECK(((const float*)b->consts[1].data)[0] == 3.0f);
    CHECK_EQ_INT(b->n_nodes, 4);
    CHECK_EQ_INT(b->first_node_slot, 5);
    // 'mul1' (producer of 't') now precedes 'add2'; 'nested' follows 'mul1'
    // because its then_branch captures 't'.
    int pos_mul = -1, pos_add = -1, pos_if = -1;
    for (uint32_t j = 0; j < b->n_nodes; ++j) {
      if (strcmp(b->nodes[j].name, "mul1") == 0) pos_mul = (int)j;
      if (strcmp(b->nodes[j].name, "add2") == 0) pos_add = (int)j;
      if (strcmp(b->nodes[j].name, "nested") == 0) pos_if = (int)j;
    }
    CHECK(pos_mul >= 0 && pos_mul < pos_add && pos_mul < pos_if);
    // The body captures graph input 'a' for its nested If.
    CHECK_EQ_INT(b->n_captures, 1);
    CHECK(b->captured != NULL && b->parent_slots == NULL);
    if (b->captured != NULL) CHECK(b->captured[0] == mlcc_graph_find_value(g, "a"));
    CHECK_STREQ(b->slot_names[b->first_capture], "a");
    if (pos_if >= 0) {
      const mlcc_subgraph_node_t* n = &b->nodes[pos_if];
      const mlcc_attr_t* ta = NULL;
      for (uint32_t k = 0; k < n->n_attrs; ++k) {
        if (strcmp(n->attrs[k].name, "then_branch") == 0) ta = &n->attrs[k];
      }
      const mlcc_subgraph_t* t = ta ? ta->g : NULL;
      CHECK(t != NULL);
      if (t != NULL) {
        CHECK_EQ_INT(t->n_captures, 2);  // 't' (a body node output) and 'a' (via the body)
        CHECK(t->captured == NULL && t->parent_slots != NULL);
        if (t->parent_slots != NULL && t->n_captures == 2) {
          CHECK_STREQ(b->slot_names[t->parent_slots[0]], "t");
          CHECK(t->parent_slots[0] >= (int32_t)b->first_node_slot &&
                t->parent_slots[0] < (int32_t)b->first_capture);
          CHECK_EQ_INT(t->parent_slots[1], b->first_capture);
        }
      }
    }
    CHECK_STREQ(b->slot_names[b->output_slots[1]], "x_out");
  }
  mlcc_graph_destroy(g);
  expect_err("subgraph_bad_name.onnx", MLCC_STATUS_INVALID_MODEL,
             "input 'nowhere' is not defined in the subgraph or an enclosing scope");
  expect_err("subgraph_cycle.onnx", MLCC_STATUS_INVALID_MODEL, "form a cycle");
  expect_err("subgraph_dup.onnx", MLCC_STATUS_INVALID_MODEL, "'c_in' is defined twice");
  expect_err("subgraph_bad_op.onnx", MLCC_STATUS_UNIMPLEMENTED,
             "unsupported operator 'NotAnOp'");
}

static void test_order_optional_and_attrs(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("order_attrs.onnx", NULL, &g));
  if (!g) return;
  CHECK_EQ_INT(g->n_nodes, 8);
  // Topological order: clip (file #1) before late (file #0).
  int pos_clip = -1, pos_late = -1;
  for (uint32_t i = 0; i < g->n_nodes; ++i) {
    if (strcmp(g->nodes[i]->name, "clip") == 0) pos_clip = (int)i;
    if (strcmp(g->nodes[i]->name, "late") == 0) pos_late = (int)i;
  }
  CHECK(pos_clip >= 0 && pos_late > pos_clip);
  for (uint32_t i = 0; i < g->n_nodes; ++i) {
    const mlcc_node_t* n = g->nodes[i];
    if (n->op == MLCC_OP_CLIP) {
      CHECK_EQ_INT(n->n_inputs, 3);
      CHECK(n->inputs[1] == NULL);
      CHECK(n->inputs[2] == val(g, "hi"));
    } else if (n->op == MLCC_OP_DROPOUT) {
      CHECK_EQ_INT(n->n_outputs, 2);
      CHECK(n->outputs[1] == NULL && n->outputs[0] == val(g, "d"));
    } else if (n->op == MLCC_OP_SOFTMAX) {
      int64_t axis = 0;
      CHECK_OK(mlcc_node_attr_int(n, "axis", 0, &axis));
      CHECK_EQ_INT(axis, -1);
    } else if (n->op == MLCC_OP_TRANSPOSE) {
      const mlcc_attr_t* a = mlcc_node_attr(n, "perm");
      CHECK(a && a->kind == MLCC_ATTR_INTS && a->count == 2 && a->ints[0] == 1 &&
            a->ints[1] == 0);
    } else if (n->op == MLCC_OP_RESIZE) {
      const mlcc_attr_t* a = mlcc_node_attr(n, "mode");
      CHECK(a && a->kind == MLCC_ATTR_STRING && a->s_len == 7);
      if (a) CHECK_STREQ(a->s, "nearest");
    } else if (n->op == MLCC_OP_CONSTANT_OF_SHAPE) {
      const mlcc_attr_t* a = mlcc_node_attr(n, "value");
      CHECK(a && a->kind == MLCC_ATTR_TENSOR && a->t_dtype == MLCC_DTYPE_F32 &&
            a->t_shape.rank == 1 && a->t_shape.dims[0] == 1);
      if (a && a->t_data) CHECK(((const float*)a->t_data)[0] == 0.25f);
    }
  }
  CHECK(val(g, "y") && val(g, "y")->is_output && val(g, "d")->is_output);
  CHECK(!val(g, "s")->is_output);
  mlcc_graph_destroy(g);
}

static void test_bad_tensors(void) {
  expect_err("bad_raw_size.onnx", MLCC_STATUS_INVALID_MODEL,
             "initializer 'short': raw_data has 12 bytes, expected 16");
  expect_err("bad_neg_dim.onnx", MLCC_STATUS_INVALID_MODEL, "'neg' has negative dim 0");
  expect_err("bad_huge.onnx", MLCC_STATUS_RESOURCE_EXHAUSTED, "at most 2^32");
  expect_err("bad_overflow.onnx", MLCC_STATUS_INVALID_MODEL, "overflows");
  expect_err("bad_typed_count.onnx", MLCC_STATUS_INVALID_MODEL,
             "float_data has 2 elements, expected 3");
  expect_err("bad_string.onnx", MLCC_STATUS_UNIMPLEMENTED, "'str' has data type string");
  // bfloat16 tensors import (only Cast/CastLike read them; see dtypes.def).
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("bad_bf16.onnx", NULL, &g));
  mlcc_value_t* bf = g ? val(g, "bf") : NULL;
  CHECK(bf != NULL && bf->dtype == MLCC_DTYPE_BF16);
  if (g) mlcc_graph_destroy(g);
}

static void test_external_data(void) {
  const char* deps[4] = {0};
  uint32_t n_deps = 99;
  mlcc_onnx_import_options_t o = {0};
  o.out_deps = deps;
  o.deps_cap = 4;
  o.out_n_deps = &n_deps;
  mlcc_graph_t* g = NULL;
  CHECK_OK(import("ext_good.onnx", &o, &g));
  if (g) {
    mlcc_value_t* w = val(g, "w");
    CHECK(w && w->kind == MLCC_VALUE_CONSTANT);
    if (w) {
      const float* f = (const float*)w->data;
      CHECK(f[0] == 0 && f[1] == 1 && f[2] == 2 && f[3] == 3);
    }
    CHECK_EQ_INT(n_deps, 1);
    if (n_deps == 1) CHECK_STREQ(deps[0], fx("ext_data.bin"));
    mlcc_graph_destroy(g);
  }
  expect_err("ext_missing.onnx", MLCC_STATUS_NOT_FOUND, "missing.bin");
  expect_err("ext_escape.onnx", MLCC_STATUS_INVALID_MODEL, "'../x' escapes the model's folder");
  expect_err("ext_absolute.onnx", MLCC_STATUS_INVALID_MODEL, "absolute path");
  expect_err("ext_symlink.onnx", MLCC_STATUS_INVALID_MODEL, "resolves outside");
  expect_err("ext_past_end.onnx", MLCC_STATUS_INVALID_MODEL, "past the end");
  expect_err("ext_bad_length.onnx", MLCC_STATUS_INVALID_MODEL, "has 12 bytes, expected 16");
}

// External data (and the model itself) that is a FIFO is refused at once:
// open() must not wait for a writer (alarm() turns a hang into a failure).
static void test_fifo_inputs(void) {
  char dir[] = "/tmp/mlcc-import-fifo-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char model[4200], data[4200], fifo_model[4200];
  snprintf(model, sizeof(model), "%s/ext_good.onnx", dir);
  snprintf(data, sizeof(data), "%s/ext_data.bin", dir);
  snprintf(fifo_model, sizeof(fifo_model), "%s/fifo.onnx", dir);
  FILE* in = fopen(fx("ext_good.onnx"), "rb");
  FILE* out = fopen(model, "wb");
  CHECK(in != NULL && out != NULL);
  if (in && out) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0) CHECK(fwrite(buf, 1, n, out) == n);
  }
  if (in) fclose(in);
  if (out) fclose(out);
  CHECK(mkfifo(data, 0600) == 0);
  CHECK(mkfifo(fifo_model, 0600) == 0);
  alarm(20);
  mlcc_graph_t* g = NULL;
  mlcc_status_t s = mlcc_onnx_import_file(model, NULL, &g);
  CHECK(g == NULL && mlcc_status_code(s) == MLCC_STATUS_INVALID_MODEL);
  CHECK_CONTAINS(mlcc_status_message(s), "is not a regular file");
  mlcc_status_free(s);
  s = mlcc_onnx_import_file(fifo_model, NULL, &g);
  CHECK(g == NULL && mlcc_status_code(s) == MLCC_STATUS_IO);
  CHECK_CONTAINS(mlcc_status_message(s), "not a regular file");
  mlcc_status_free(s);
  alarm(0);
  unlink(model);
  unlink(data);
  unlink(fifo_model);
  rmdir(dir);
}

static void test_read_tensor_file(void) {
  mlcc_dtype_t dt;
  mlcc_shape_t shape;
  void* data = NULL;
  size_t size = 0;
  CHECK_OK(mlcc_onnx_read_tensor_file(fx("tensor.pb"), &dt, &shape, &data, &size, NULL));
  CHECK_EQ_INT(dt, MLCC_DTYPE_F32);
  CHECK_EQ_INT(shape.rank, 2);
  CHECK_EQ_INT(size, 16);
  if (data) {
    const float* f = (const float*)data;
    CHECK(f[0] == 1.5f && f[1] == -2.0f && f[2] == 0.0f && f[3] == 8.0f);
  }
  free(data);
  data = NULL;
  CHECK_OK(mlcc_onnx_read_tensor_file(fx("tensor_i64.pb"), &dt, &shape, &data, &size, NULL));
  CHECK_EQ_INT(dt, MLCC_DTYPE_I64);
  CHECK_EQ_INT(size, 24);
  if (data) CHECK(((int64_t*)data)[1] == -8);
  free(data);
  CHECK_STATUS(mlcc_onnx_read_tensor_file(fx("nope.pb"), &dt, &shape, &data, &size, NULL),
               MLCC_STATUS_NOT_FOUND);
  CHECK(data == NULL);
  CHECK_STATUS(mlcc_onnx_read_tensor_file(fx("garbage.onnx"), &dt, &shape, &data, &size, NULL),
               MLCC_STATUS_INVALID_MODEL);
}

// The decoder's allocator can fail anywhere: each failure is reported as
// RESOURCE_EXHAUSTED (the state says so), never a crash or a leak.
static void test_allocator_failures(void) {
  uint8_t* bytes = NULL;
  size_t size = 0;
  CHECK_OK(mlcc_onnx_read_file(fx("order_attrs.onnx"), 1 << 20, &bytes, &size));
  if (!bytes) return;
  int failures = 0;
  for (uint64_t n = 1; n < 10000; ++n) {
    mlcc_onnx_alloc_state_t st;
    ProtobufCAllocator a = mlcc_onnx_counting_allocator(&st);
    st.fail_at = n;
    MlccOnnx__ModelProto* m = mlcc_onnx__model_proto__unpack(&a, size, bytes);
    if (m != NULL) {
      CHECK(!st.failed);
      mlcc_onnx__model_proto__free_unpacked(m, mlcc_onnx_protobuf_allocator());
      break;
    }
    CHECK(st.failed);
    failures++;
  }
  CHECK(failures > 10);
  free(bytes);
}

// Every prefix and many single-byte corruptions of real fixtures import or
// fail cleanly (run under ASan/valgrind to see leaks).
static void test_corrupted_inputs(void) {
  const char* names[] = {"order_attrs.onnx", "tensors.onnx", "constants.onnx",
                         "init_as_input.onnx", "ext_good.onnx"};
  uint32_t rng = 12345;
  int ok = 0, failed = 0;
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); ++k) {
    uint8_t* bytes = NULL;
    size_t size = 0;
    CHECK_OK(mlcc_onnx_read_file(fx(names[k]), 1 << 20, &bytes, &size));
    if (!bytes) continue;
    uint8_t* copy = (uint8_t*)malloc(size);
    for (size_t len = 0; len <= size; ++len) {
      mlcc_graph_t* g = NULL;
      mlcc_status_t s = mlcc_onnx_import_bytes(fx(names[k]), bytes, len, NULL, &g);
      if (s == NULL) ok++; else failed++;
      CHECK((s == NULL) == (g != NULL));
      mlcc_status_free(s);
      mlcc_graph_destroy(g);
    }
    for (int iter = 0; iter < 2000; ++iter) {
      memcpy(copy, bytes, size);
      for (int j = 0; j < 1 + iter % 3; ++j) {
        rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
        copy[rng % size] ^= (uint8_t)(1u << ((rng >> 8) % 8));
      }
      mlcc_graph_t* g = NULL;
      mlcc_status_t s = mlcc_onnx_import_bytes(fx(names[k]), copy, size, NULL, &g);
      if (s == NULL) ok++; else failed++;
      CHECK((s == NULL) == (g != NULL));
      mlcc_status_free(s);
      mlcc_graph_destroy(g);
    }
    free(copy);
    free(bytes);
  }
  printf("corrupted inputs: %d imported, %d rejected\n", ok, failed);
  CHECK(failed > 0);
}

int main(void) {
  init_fixture_dir();
  RUN(test_real_mlp);
  RUN(test_raw_and_typed_tensors);
  RUN(test_constant_nodes);
  RUN(test_initializer_as_input);
  RUN(test_symbolic_dims_and_pins);
  RUN(test_unsupported_ops_listed_together);
  RUN(test_malformed_files);
  RUN(test_graph_errors);
  RUN(test_subgraphs);
  RUN(test_order_optional_and_attrs);
  RUN(test_bad_tensors);
  RUN(test_external_data);
  RUN(test_fifo_inputs);
  RUN(test_read_tensor_file);
  RUN(test_allocator_failures);
  RUN(test_corrupted_inputs);
  return TEST_EXIT();
}

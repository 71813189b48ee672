// SPDX-License-Identifier: Apache-2.0
// Unit tests for the graph IR, shapes, dtypes and the op table.
#include "ir/graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/ops.h"
#include "test.h"

static mlcc_shape_t shape_of(int32_t rank, const int64_t* dims) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  for (int32_t i = 0; i < rank; ++i) s.dims[i] = dims[i];
  return s;
}

// Status message rendered (caller frees status).
static void check_message(mlcc_status_t s, mlcc_status_code_t code, const char* want) {
  CHECK_EQ_INT(mlcc_status_code(s), code);
  CHECK_STREQ(mlcc_status_message(s), want);
  mlcc_status_free(s);
}

static void test_dtype_traits(void) {
  CHECK_EQ_INT(mlcc_dtype_size(MLCC_DTYPE_F32), 4);
  CHECK_EQ_INT(mlcc_dtype_size(MLCC_DTYPE_I64), 8);
  CHECK_EQ_INT(mlcc_dtype_size(MLCC_DTYPE_BOOL), 1);
  CHECK_EQ_INT(mlcc_dtype_size(MLCC_DTYPE_F16), 2);
  CHECK_EQ_INT(mlcc_dtype_size(MLCC_DTYPE_UNDEFINED), 0);
  CHECK_EQ_INT(mlcc_dtype_size((mlcc_dtype_t)8), 0);  // string
  CHECK_EQ_INT(mlcc_dtype_size((mlcc_dtype_t)999), 0);
  CHECK_EQ_INT(mlcc_dtype_size((mlcc_dtype_t)-3), 0);
  CHECK_STREQ(mlcc_dtype_name(MLCC_DTYPE_F32), "float32");
  CHECK_STREQ(mlcc_dtype_name(MLCC_DTYPE_UNDEFINED), "undefined");
  CHECK_STREQ(mlcc_dtype_name((mlcc_dtype_t)8), "string");
  CHECK_STREQ(mlcc_dtype_name((mlcc_dtype_t)999), "unsupported");
  CHECK_STREQ(mlcc_dtype_c_type(MLCC_DTYPE_I64), "int64_t");
  CHECK(mlcc_dtype_is_float(MLCC_DTYPE_F16));
  CHECK(!mlcc_dtype_is_float(MLCC_DTYPE_I32));
  CHECK(mlcc_dtype_is_int(MLCC_DTYPE_U8));
  CHECK(mlcc_dtype_is_unsigned(MLCC_DTYPE_U8));
  CHECK(!mlcc_dtype_is_unsigned(MLCC_DTYPE_I8));
  CHECK(mlcc_dtype_is_bool(MLCC_DTYPE_BOOL));
  CHECK(!mlcc_dtype_is_int(MLCC_DTYPE_BOOL));
  CHECK(mlcc_dtype_is_valid(MLCC_DTYPE_U64));
  CHECK(!mlcc_dtype_is_valid((mlcc_dtype_t)8));  // string: no row
  CHECK(mlcc_dtype_is_valid(MLCC_DTYPE_BF16));
  CHECK_EQ_INT((int)mlcc_dtype_size(MLCC_DTYPE_BF16), 2);
  CHECK_STREQ(mlcc_dtype_name(MLCC_DTYPE_BF16), "bfloat16");
}

static void test_op_lookup(void) {
  mlcc_op_t op;
  CHECK_EQ_INT(mlcc_op_lookup("", "Conv", 13, &op), MLCC_OP_LOOKUP_OK);
  CHECK_EQ_INT(op, MLCC_OP_CONV);
  CHECK_EQ_INT(mlcc_op_lookup("ai.onnx", "Relu", 14, &op), MLCC_OP_LOOKUP_OK);
  CHECK_EQ_INT(op, MLCC_OP_RELU);
  CHECK_EQ_INT(mlcc_op_lookup("", "relu", 14, &op), MLCC_OP_LOOKUP_UNKNOWN_OP);
  CHECK_EQ_INT(mlcc_op_lookup("com.microsoft", "Conv", 13, &op), MLCC_OP_LOOKUP_UNKNOWN_OP);
  CHECK_EQ_INT(mlcc_op_lookup("", "HardSwish", 13, &op), MLCC_OP_LOOKUP_BAD_OPSET);
  CHECK_EQ_INT(op, MLCC_OP_HARD_SWISH);  // still set for the range message
  CHECK_EQ_INT(mlcc_op_lookup("", "Add", 99, &op), MLCC_OP_LOOKUP_BAD_OPSET);
  CHECK_STREQ(mlcc_op_name(MLCC_OP_GEMM), "Gemm");
  const mlcc_op_desc_t* d = mlcc_op_desc(MLCC_OP_RESHAPE);
  CHECK(d != NULL);
  CHECK_EQ_INT(d->in_min, 2);
  CHECK_EQ_INT(d->shape_inputs, 0x2);
  CHECK(mlcc_op_desc(MLCC_OP_COUNT) == NULL);
  CHECK(mlcc_op_desc(MLCC_OP_ADD)->flags & MLCC_OPF_ELEMENTWISE);
  // Every row round-trips through lookup at its own opset range.
  for (int i = 0; i < MLCC_OP_COUNT; ++i) {
    const mlcc_op_desc_t* r = mlcc_op_desc((mlcc_op_t)i);
    CHECK(r->opset_min <= r->opset_max);
    CHECK_EQ_INT(mlcc_op_lookup(r->domain, r->name, r->opset_max, &op), MLCC_OP_LOOKUP_OK);
    CHECK_EQ_INT(op, i);
  }
}

static void test_shapes(void) {
  int64_t d1[] = {1, 3, 224, 224};
  mlcc_shape_t s = shape_of(4, d1);
  char buf[64];
  CHECK_STREQ(mlcc_shape_format(&s, buf, sizeof(buf)), "[1,3,224,224]");
  mlcc_shape_t scalar = shape_of(0, NULL);
  CHECK_STREQ(mlcc_shape_format(&scalar, buf, sizeof(buf)), "[]");
  char tiny[6];
  CHECK_STREQ(mlcc_shape_format(&s, tiny, sizeof(tiny)), "[1,3,");  // truncated, terminated
  int64_t n = 0;
  CHECK_OK(mlcc_shape_numel(&s, &n));
  CHECK_EQ_INT(n, 150528);
  CHECK_OK(mlcc_shape_numel(&scalar, &n));
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(mlcc_shape_numel_unchecked(&s), 150528);
  int64_t huge[] = {INT64_MAX / 2, 3};
  mlcc_shape_t h = shape_of(2, huge);
  CHECK_STATUS(mlcc_shape_numel(&h, &n), MLCC_STATUS_INVALID_MODEL);
  CHECK_EQ_INT(n, 0);
  int64_t neg[] = {2, -1};
  mlcc_shape_t ng = shape_of(2, neg);
  check_message(mlcc_shape_numel(&ng, &n), MLCC_STATUS_INVALID_MODEL,
                "shape [2,-1] has a negative dim -1 at axis 1");

  int64_t a[] = {8, 1, 6, 1}, b[] = {7, 1, 5};
  mlcc_shape_t sa = shape_of(4, a), sb = shape_of(3, b), out;
  CHECK_OK(mlcc_shape_broadcast(&sa, &sb, &out));
  CHECK_STREQ(mlcc_shape_format(&out, buf, sizeof(buf)), "[8,7,6,5]");
  CHECK_OK(mlcc_shape_broadcast(&scalar, &sb, &out));
  CHECK(mlcc_shape_equal(&out, &sb));
  int64_t c[] = {2, 3}, e[] = {4};
  mlcc_shape_t sc = shape_of(2, c), se = shape_of(1, e);
  check_message(mlcc_shape_broadcast(&sc, &se, &out), MLCC_STATUS_INVALID_MODEL,
                "shapes [2,3] and [4] do not broadcast: output axis 1 has 3 vs 4");
  CHECK(!mlcc_shape_equal(&sc, &se));
  int64_t z[] = {0, 3}, one[] = {1, 3};
  mlcc_shape_t sz = shape_of(2, z), so = shape_of(2, one);
  CHECK_OK(mlcc_shape_broadcast(&sz, &so, &out));
  CHECK_STREQ(mlcc_shape_format(&out, buf, sizeof(buf)), "[0,3]");
}

static void test_values_and_names(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  mlcc_value_t* x = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "x", MLCC_VALUE_INPUT, &x));
  CHECK(x != NULL);
  CHECK_EQ_INT(x->id, 0);
  CHECK_EQ_INT(x->ws_offset, -1);
  CHECK_EQ_INT(x->weight_offset, -1);
  CHECK(mlcc_graph_find_value(g, "x") == x);
  CHECK(mlcc_graph_find_value(g, "y") == NULL);
  mlcc_value_t* dup = (mlcc_value_t*)1;
  check_message(mlcc_graph_add_value(g, "x", MLCC_VALUE_INTERMEDIATE, &dup),
                MLCC_STATUS_INVALID_MODEL, "value name 'x' is defined twice");
  CHECK(dup == NULL);
  // Enough values to force several map and array growths.
  char name[32];
  for (int i = 0; i < 5000; ++i) {
    snprintf(name, sizeof(name), "v%d", i);
    mlcc_value_t* v = NULL;
    CHECK_OK(mlcc_graph_add_value(g, name, MLCC_VALUE_INTERMEDIATE, &v));
  }
  CHECK_EQ_INT(g->n_values, 5001);
  int found = 0;
  for (int i = 0; i < 5000; ++i) {
    snprintf(name, sizeof(name), "v%d", i);
    mlcc_value_t* v = mlcc_graph_find_value(g, name);
    found += v != NULL && v->id == (uint32_t)i + 1 && strcmp(v->name, name) == 0;
  }
  CHECK_EQ_INT(found, 5000);
  CHECK(mlcc_graph_find_value(g, "x") == x);
  // Temp names skip names the model already uses.
  mlcc_value_t *t0 = NULL, *t1 = NULL, *taken = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "t_0", MLCC_VALUE_INTERMEDIATE, &taken));
  CHECK_OK(mlcc_graph_add_temp_value(g, "t", &t0));
  CHECK_OK(mlcc_graph_add_temp_value(g, "t", &t1));
  CHECK(t0 != NULL && t1 != NULL && t0 != t1);
  CHECK_STREQ(t0->name, "t_1");
  CHECK_STREQ(t1->name, "t_2");
  CHECK_EQ_INT(t0->kind, MLCC_VALUE_INTERMEDIATE);
  mlcc_graph_destroy(g);
}

static int backing_freed = 0;
static void free_backing(void* p) { backing_freed += p == (void*)&backing_freed; }

static void test_constants_and_readers(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  g->backing = &backing_freed;
  g->backing_free = free_backing;
  int32_t ints[] = {3, -4, 5, 7};
  int64_t d[] = {2, 2};
  mlcc_shape_t s = shape_of(2, d);
  mlcc_value_t* c = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "c", MLCC_DTYPE_I32, &s, ints, true, &c));
  ints[0] = 100;  // copied: unaffected
  CHECK_EQ_INT(c->kind, MLCC_VALUE_CONSTANT);
  CHECK(c->shape_known);
  CHECK_EQ_INT(mlcc_value_const_i64(c, 0), 3);
  CHECK_EQ_INT(mlcc_value_const_i64(c, 1), -4);
  CHECK_NEAR(mlcc_value_const_f64(c, 3), 7.0, 0);
  CHECK_EQ_INT(mlcc_value_byte_size(c), 16);

  // Borrowed float16: 1.0, -2.0, 0.5, 65504, smallest subnormal.
  static const uint16_t halves[] = {0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001};
  int64_t hd[] = {5};
  mlcc_shape_t hs = shape_of(1, hd);
  mlcc_value_t* h = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "h", MLCC_DTYPE_F16, &hs, halves, false, &h));
  CHECK(h->data == halves);
  CHECK_NEAR(mlcc_value_const_f64(h, 0), 1.0, 0);
  CHECK_NEAR(mlcc_value_const_f64(h, 1), -2.0, 0);
  CHECK_NEAR(mlcc_value_const_f64(h, 2), 0.5, 0);
  CHECK_NEAR(mlcc_value_const_f64(h, 3), 65504.0, 0);
  CHECK_NEAR(mlcc_value_const_f64(h, 4), 5.960464477539063e-08, 1e-20);
  CHECK_EQ_INT(mlcc_value_const_i64(h, 1), -2);

  // Small float codes, one per byte (bfloat16 two bytes), decoded exactly:
  // the values of ONNX's float8 / float8e8m0 / float4e2m1 tables.
  static const struct {
    mlcc_dtype_t dtype;
    uint8_t code;
    double want;  // NAN: the code is NaN
  } small[] = {
      {MLCC_DTYPE_F8E4M3FN, 0x38, 1.0},       {MLCC_DTYPE_F8E4M3FN, 0x7e, 448.0},
      {MLCC_DTYPE_F8E4M3FN, 0x01, 0x1p-9},    {MLCC_DTYPE_F8E4M3FN, 0xff, NAN},
      {MLCC_DTYPE_F8E4M3FN, 0xc0, -2.0},      {MLCC_DTYPE_F8E4M3FNUZ, 0x40, 1.0},
      {MLCC_DTYPE_F8E4M3FNUZ, 0x7f, 240.0},   {MLCC_DTYPE_F8E4M3FNUZ, 0x80, NAN},
      {MLCC_DTYPE_F8E5M2, 0x3c, 1.0},         {MLCC_DTYPE_F8E5M2, 0x7b, 57344.0},
      {MLCC_DTYPE_F8E5M2, 0x7c, INFINITY},    {MLCC_DTYPE_F8E5M2, 0xfc, -INFINITY},
      {MLCC_DTYPE_F8E5M2, 0x7d, NAN},         {MLCC_DTYPE_F8E5M2, 0x01, 0x1p-16},
      {MLCC_DTYPE_F8E5M2FNUZ, 0x40, 1.0},     {MLCC_DTYPE_F8E5M2FNUZ, 0x7f, 57344.0},
      {MLCC_DTYPE_F8E5M2FNUZ, 0x80, NAN},     {MLCC_DTYPE_F8E8M0, 0x7f, 1.0},
      {MLCC_DTYPE_F8E8M0, 0x00, 0x1p-127},    {MLCC_DTYPE_F8E8M0, 0xff, NAN},
      {MLCC_DTYPE_F4E2M1, 0x2, 1.0},          {MLCC_DTYPE_F4E2M1, 0x7, 6.0},
      {MLCC_DTYPE_F4E2M1, 0x1, 0.5},          {MLCC_DTYPE_F4E2M1, 0xd, -3.0},
  };
  int64_t one[] = {1};
  mlcc_shape_t s1 = shape_of(1, one);
  for (size_t k = 0; k < sizeof small / sizeof small[0]; ++k) {
    char name[16];
    snprintf(name, sizeof name, "q%zu", k);
    mlcc_value_t* q = NULL;
    CHECK_OK(mlcc_graph_add_constant(g, name, small[k].dtype, &s1, &small[k].code, false, &q));
    double got = mlcc_value_const_f64(q, 0);
    if (isnan(small[k].want)) {
      CHECK(isnan(got));
    } else if (isinf(small[k].want)) {
      CHECK(got == small[k].want);
    } else {
      CHECK_NEAR(got, small[k].want, 0);
    }
  }
  static const uint16_t bf[] = {0x3f80, 0xc040};  // 1.0, -3.0
  int64_t two[] = {2};
  mlcc_shape_t s2 = shape_of(1, two);
  mlcc_value_t* bfv = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "bf", MLCC_DTYPE_BF16, &s2, bf, false, &bfv));
  CHECK_NEAR(mlcc_value_const_f64(bfv, 0), 1.0, 0);
  CHECK_NEAR(mlcc_value_const_f64(bfv, 1), -3.0, 0);

  static const float fl[] = {1.5f, -2.25f};
  int64_t fd[] = {2};
  mlcc_shape_t fs = shape_of(1, fd);
  mlcc_value_t* f = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "f", MLCC_DTYPE_F32, &fs, fl, false, &f));
  CHECK_NEAR(mlcc_value_const_f64(f, 1), -2.25, 0);
  CHECK_EQ_INT(mlcc_value_const_i64(f, 0), 1);
  static const uint8_t bools[] = {0, 1};
  mlcc_value_t* bv = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, "b", MLCC_DTYPE_BOOL, &fs, bools, false, &bv));
  CHECK_EQ_INT(mlcc_value_const_i64(bv, 1), 1);

  CHECK_STATUS(mlcc_graph_add_constant(g, "c", MLCC_DTYPE_I32, &s, ints, true, &c),
               MLCC_STATUS_INVALID_MODEL);
  CHECK_STATUS(mlcc_graph_add_constant(g, "s", (mlcc_dtype_t)8, &s, ints, true, &c),
               MLCC_STATUS_UNIMPLEMENTED);
  mlcc_graph_destroy(g);
  CHECK_EQ_INT(backing_freed, 1);
}

// Builds x -> Relu -> a -> Add(a, w) -> y.
typedef struct chain_t {
  mlcc_graph_t* g;
  mlcc_value_t *x, *w, *a, *y;
  mlcc_node_t *relu, *add;
} chain_t;

static void build_chain(chain_t* c) {
  memset(c, 0, sizeof(*c));
  CHECK_OK(mlcc_graph_create(&c->g));
  CHECK_OK(mlcc_graph_add_value(c->g, "x", MLCC_VALUE_INPUT, &c->x));
  float wdata[4] = {1, 2, 3, 4};
  int64_t d[] = {4};
  mlcc_shape_t s = shape_of(1, d);
  CHECK_OK(mlcc_graph_add_constant(c->g, "w", MLCC_DTYPE_F32, &s, wdata, true, &c->w));
  CHECK_OK(mlcc_graph_add_value(c->g, "a", MLCC_VALUE_INTERMEDIATE, &c->a));
  CHECK_OK(mlcc_graph_add_value(c->g, "y", MLCC_VALUE_INTERMEDIATE, &c->y));
  CHECK_OK(mlcc_graph_add_node(c->g, MLCC_OP_RELU, 14, "relu", &c->x, 1, &c->a, 1, NULL, 0,
                               &c->relu));
  mlcc_value_t* ins[2] = {c->a, c->w};
  CHECK_OK(mlcc_graph_add_node(c->g, MLCC_OP_ADD, 14, "add", ins, 2, &c->y, 1, NULL, 0,
                               &c->add));
}

static void test_nodes_uses_compact(void) {
  chain_t c;
  build_chain(&c);
  CHECK_EQ_INT(c.relu->id, 0);
  CHECK_EQ_INT(c.add->id, 1);
  CHECK_EQ_INT(c.g->next_node_id, 2);
  CHECK(c.a->producer == c.relu);
  CHECK(c.y->producer == c.add);
  CHECK_EQ_INT(c.relu->kernel, -1);
  CHECK_EQ_INT(c.a->n_uses, 1);
  CHECK_EQ_INT(c.x->n_uses, 1);
  CHECK(mlcc_node_input(c.add, 1) == c.w);
  CHECK(mlcc_node_input(c.add, 2) == NULL);
  CHECK(mlcc_node_output(c.add, 0) == c.y);

  // Bypass the Relu: Add reads x directly.
  mlcc_graph_replace_uses(c.g, c.a, c.x);
  CHECK(c.add->inputs[0] == c.x);
  CHECK_EQ_INT(c.a->n_uses, 0);
  CHECK_EQ_INT(c.x->n_uses, 2);
  c.relu->dead = true;
  mlcc_graph_compact(c.g);
  CHECK_EQ_INT(c.g->n_nodes, 1);
  CHECK(c.g->nodes[0] == c.add);
  CHECK(c.a->producer == NULL);
  CHECK_EQ_INT(c.x->n_uses, 1);  // recounted: dead Relu no longer counts
  CHECK_EQ_INT(c.g->n_kernels, 0);
  CHECK(c.g->kernels == NULL);
  mlcc_graph_destroy(c.g);
}

static void test_replace_uses_of_output(void) {
  chain_t c;
  build_chain(&c);
  mlcc_value_t* outs[1] = {c.y};
  c.g->outputs = outs;
  c.g->n_outputs = 1;
  c.y->is_output = true;
  mlcc_graph_replace_uses(c.g, c.y, c.a);
  CHECK(c.g->outputs[0] == c.a);
  CHECK(c.a->is_output);
  CHECK(!c.y->is_output);
  mlcc_graph_destroy(c.g);
}

static void test_toposort(void) {
  chain_t c;
  build_chain(&c);
  // Reverse the order; toposort restores Relu before Add.
  c.g->nodes[0] = c.add;
  c.g->nodes[1] = c.relu;
  CHECK_OK(mlcc_graph_toposort(c.g));
  CHECK(c.g->nodes[0] == c.relu);
  CHECK(c.g->nodes[1] == c.add);
  // Independent nodes keep their relative order (stable).
  mlcc_value_t *z = NULL, *q = NULL;
  mlcc_node_t *n1 = NULL, *n2 = NULL;
  CHECK_OK(mlcc_graph_add_value(c.g, "z", MLCC_VALUE_INTERMEDIATE, &z));
  CHECK_OK(mlcc_graph_add_value(c.g, "q", MLCC_VALUE_INTERMEDIATE, &q));
  CHECK_OK(mlcc_graph_add_node(c.g, MLCC_OP_NEG, 13, "neg", &c.x, 1, &z, 1, NULL, 0, &n1));
  CHECK_OK(mlcc_graph_add_node(c.g, MLCC_OP_ABS, 13, "abs", &c.x, 1, &q, 1, NULL, 0, &n2));
  CHECK_OK(mlcc_graph_toposort(c.g));
  CHECK(c.g->nodes[0] == c.relu && c.g->nodes[1] == c.add && c.g->nodes[2] == n1 &&
        c.g->nodes[3] == n2);
  // Make a cycle: Relu reads y (Add's output), Add reads a (Relu's output).
  c.relu->inputs[0] = c.y;
  mlcc_status_t s = mlcc_graph_toposort(c.g);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_MODEL);
  const char* msg = mlcc_status_message(s);
  CHECK(strstr(msg, "cycle") != NULL);
  CHECK(strstr(msg, "node #0 'relu' (Relu, opset 14)") != NULL ||
        strstr(msg, "node #1 'add' (Add, opset 14)") != NULL);
  CHECK(strstr(msg, "2 of 4 nodes") != NULL);
  mlcc_status_free(s);
  mlcc_graph_destroy(c.g);
}

static void test_attrs(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  mlcc_value_t *x = NULL, *y = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "x", MLCC_VALUE_INPUT, &x));
  CHECK_OK(mlcc_graph_add_value(g, "y", MLCC_VALUE_INTERMEDIATE, &y));
  static const int64_t strides[] = {2, 2};
  static const float scales[] = {0.5f};
  mlcc_attr_t attrs[4];
  memset(attrs, 0, sizeof(attrs));
  attrs[0].name = "group";
  attrs[0].kind = MLCC_ATTR_INT;
  attrs[0].i = 4;
  attrs[1].name = "strides";
  attrs[1].kind = MLCC_ATTR_INTS;
  attrs[1].ints = strides;
  attrs[1].count = 2;
  attrs[2].name = "auto_pad";
  attrs[2].kind = MLCC_ATTR_STRING;
  attrs[2].s = "SAME_UPPER";
  attrs[2].s_len = 10;
  attrs[3].name = "alpha";
  attrs[3].kind = MLCC_ATTR_FLOATS;
  attrs[3].floats = scales;
  attrs[3].count = 1;
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONV, 13, "conv_3", &x, 1, &y, 1, attrs, 4, &n));
  int64_t iv = 0;
  CHECK_OK(mlcc_node_attr_int(n, "group", 1, &iv));
  CHECK_EQ_INT(iv, 4);
  CHECK_OK(mlcc_node_attr_int(n, "missing", 7, &iv));
  CHECK_EQ_INT(iv, 7);
  const int64_t* ints = NULL;
  uint32_t count = 9;
  CHECK_OK(mlcc_node_attr_ints(n, "strides", &ints, &count));
  CHECK_EQ_INT(count, 2);
  CHECK(ints != NULL && ints[1] == 2);
  CHECK_OK(mlcc_node_attr_ints(n, "pads", &ints, &count));
  CHECK_EQ_INT(count, 0);
  CHECK(ints == NULL);
  const char* str = NULL;
  CHECK_OK(mlcc_node_attr_string(n, "auto_pad", "NOTSET", &str));
  CHECK_STREQ(str, "SAME_UPPER");
  CHECK_OK(mlcc_node_attr_string(n, "mode", "NOTSET", &str));
  CHECK_STREQ(str, "NOTSET");
  const float* fl = NULL;
  CHECK_OK(mlcc_node_attr_floats(n, "alpha", &fl, &count));
  CHECK_EQ_INT(count, 1);
  float f = 0;
  check_message(mlcc_node_attr_float(n, "alpha", 1.0f, &f), MLCC_STATUS_INVALID_MODEL,
                "Conv attribute 'alpha' must be float but is floats");
  check_message(mlcc_node_attr_int(n, "strides", 1, &iv), MLCC_STATUS_INVALID_MODEL,
                "Conv attribute 'strides' must be int but is ints");
  CHECK(mlcc_node_attr(n, "group") != NULL);
  CHECK(mlcc_node_attr(n, "Group") == NULL);

  char buf[128];
  CHECK_STREQ(mlcc_node_describe(n, buf, sizeof(buf)), "node #0 'conv_3' (Conv, opset 13)");
  mlcc_status_t s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "kernel_shape has 3 values");
  s = mlcc_node_annotate(n, s);
  char* text = mlcc_status_to_string(s);
  CHECK_STREQ(text,
              "node #0 'conv_3' (Conv, opset 13): error: kernel_shape has 3 values "
              "[INVALID_MODEL]");
  free(text);
  mlcc_status_free(s);
  CHECK(mlcc_node_annotate(n, NULL) == NULL);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_dtype_traits);
  RUN(test_op_lookup);
  RUN(test_shapes);
  RUN(test_values_and_names);
  RUN(test_constants_and_readers);
  RUN(test_nodes_uses_compact);
  RUN(test_replace_uses_of_output);
  RUN(test_toposort);
  RUN(test_attrs);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Unit tests of the shape-inference families (ir/ops/*.c): small graphs built
// by hand, inferred through the ops.def table, output shapes checked.
#include <stdint.h>
#include <string.h>

#include "ir/base/checked_math.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/spatial.h"
#include "test.h"

#define F32 MLCC_DTYPE_F32
#define I64 MLCC_DTYPE_I64

// DIMS(1,3,224,224) expands to a pointer and a count.
#define DIMS(...) \
  (const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define NODIMS NULL, 0

static mlcc_graph_t* g_graph;
static int g_counter;

static void begin(void) {
  g_graph = NULL;
  CHECK_OK(mlcc_graph_create(&g_graph));
}
static void end(void) {
  mlcc_graph_destroy(g_graph);
  g_graph = NULL;
}

static mlcc_shape_t mk_shape(const int64_t* dims, int rank) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  for (int i = 0; i < rank; ++i) s.dims[i] = dims[i];
  return s;
}

// A graph input with a known shape.
static mlcc_value_t* inp(mlcc_dtype_t dt, const int64_t* dims, int rank) {
  char name[32];
  snprintf(name, sizeof(name), "in%d", g_counter++);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g_graph, name, MLCC_VALUE_INPUT, &v));
  if (v == NULL) return NULL;
  v->dtype = dt;
  v->shape = mk_shape(dims, rank);
  v->shape_known = true;
  return v;
}

// A 1-D int64 constant holding |vals|.
static mlcc_value_t* ci64(const int64_t* vals, int n) {
  char name[32];
  snprintf(name, sizeof(name), "c%d", g_counter++);
  int64_t d = n;
  mlcc_shape_t s = mk_shape(&d, 1);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g_graph, name, I64, &s, vals, true, &v));
  return v;
}

// A float32 constant of shape [n] (or a scalar when |scalar|).
static mlcc_value_t* cf32(const float* vals, int n, bool scalar) {
  char name[32];
  snprintf(name, sizeof(name), "c%d", g_counter++);
  int64_t d = n;
  mlcc_shape_t s = mk_shape(&d, scalar ? 0 : 1);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g_graph, name, F32, &s, vals, true, &v));
  return v;
}

static mlcc_value_t* scalar_i64(int64_t x) {
  char name[32];
  snprintf(name, sizeof(name), "s%d", g_counter++);
  mlcc_shape_t s = mk_shape(NULL, 0);
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g_graph, name, I64, &s, &x, true, &v));
  return v;
}

static mlcc_attr_t a_int(const char* n, int64_t v) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = n;
  a.kind = MLCC_ATTR_INT;
  a.i = v;
  return a;
}
static mlcc_attr_t a_ints(const char* n, const int64_t* v, int count) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = n;
  a.kind = MLCC_ATTR_INTS;
  a.ints = v;
  a.count = (uint32_t)count;
  return a;
}
static mlcc_attr_t a_str(const char* n, const char* s) {
  mlcc_attr_t a;
  memset(&a, 0, sizeof(a));
  a.name = n;
  a.kind = MLCC_ATTR_STRING;
  a.s = s;
  a.s_len = strlen(s);
  return a;
}

// Adds a node with |n_out| fresh outputs and runs its infer function from
// the ops.def table. Returns the status; the node in |*out_node|.
static mlcc_status_t run(mlcc_op_t op, int opset, mlcc_value_t* const* ins, int n_in,
                         int n_out, const mlcc_attr_t* attrs, int n_attrs,
                         mlcc_node_t** out_node) {
  mlcc_value_t* outs[8] = {0};
  for (int i = 0; i < n_out && i < 8; ++i) {
    mlcc_status_t s = mlcc_graph_add_temp_value(g_graph, "out", &outs[i]);
    if (s != NULL) return s;
  }
  mlcc_node_t* node = NULL;
  mlcc_status_t s = mlcc_graph_add_node(g_graph, op, opset, "n", ins, (uint32_t)n_in, outs,
                                        (uint32_t)n_out, attrs, (uint32_t)n_attrs, &node);
  if (s != NULL) return s;
  *out_node = node;
  return mlcc_op_desc(op)->infer(node);
}

// Checks output |i| of |node| has |dt| and the given dims.
static void expect_out(const mlcc_node_t* node, int i, mlcc_dtype_t dt, const int64_t* dims,
                       int rank, int line) {
  if (node == NULL || (uint32_t)i >= node->n_outputs || node->outputs[i] == NULL) {
    fprintf(stderr, "line %d: no output %d\n", line, i);
    CHECK(false);
    return;
  }
  const mlcc_value_t* v = node->outputs[i];
  mlcc_shape_t want = mk_shape(dims, rank);
  char a[128], b[128];
  if (!v->shape_known || v->dtype != dt || !mlcc_shape_equal(&v->shape, &want)) {
    fprintf(stderr, "line %d: output %d is %s %s (known=%d), want %s %s\n", line, i,
            mlcc_dtype_name(v->dtype), mlcc_shape_format(&v->shape, a, sizeof(a)),
            (int)v->shape_known, mlcc_dtype_name(dt), mlcc_shape_format(&want, b, sizeof(b)));
    CHECK(false);
  }
}
#define EXPECT_OUT(node, i, dt, ...) expect_out(node, i, dt, __VA_ARGS__, __LINE__)

// Checks |expr| fails with |code| and that its message contains |needle|.
static void expect_error(mlcc_status_t s, mlcc_status_code_t code, const char* needle,
                         int line) {
  if (mlcc_status_code(s) != code ||
      (needle && (s == NULL || strstr(mlcc_status_message(s), needle) == NULL))) {
    fprintf(stderr, "line %d: want %s containing '%s', got %s: %s\n", line,
            mlcc_status_code_name(code), needle ? needle : "",
            mlcc_status_code_name(mlcc_status_code(s)), s ? mlcc_status_message(s) : "OK");
    CHECK(false);
  }
  mlcc_status_free(s);
}
#define EXPECT_ERR(expr, code, needle) expect_error((expr), (code), (needle), __LINE__)

//===----------------------------------------------------------------------===//
// Contractions and windows
//===----------------------------------------------------------------------===//

static void test_conv(void) {
  begin();
  mlcc_node_t* n = NULL;
  // pads 1, strides 2, dilations 2, group 2: dk = 5, (10+2-5)/2+1 = 4.
  mlcc_value_t* ins[3] = {inp(F32, DIMS(1, 4, 10, 10)), inp(F32, DIMS(8, 2, 3, 3)),
                          inp(F32, DIMS(8))};
  mlcc_attr_t at[4] = {a_ints("pads", DIMS(1, 1, 1, 1)), a_ints("strides", DIMS(2, 2)),
                       a_ints("dilations", DIMS(2, 2)), a_int("group", 2)};
  CHECK_OK(run(MLCC_OP_CONV, 11, ins, 3, 1, at, 4, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 8, 4, 4));
  // Asymmetric pads and a 1-D conv with kernel_shape given explicitly.
  mlcc_value_t* ins1[2] = {inp(F32, DIMS(2, 3, 17)), inp(F32, DIMS(5, 3, 4))};
  mlcc_attr_t at1[3] = {a_ints("pads", DIMS(0, 3)), a_ints("strides", DIMS(3)),
                        a_ints("kernel_shape", DIMS(4))};
  CHECK_OK(run(MLCC_OP_CONV, 11, ins1, 2, 1, at1, 3, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 5, 6));  // (17+3-4)/3+1 = 6
  // group mismatch: C=4 but group*W[1] = 2*3.
  mlcc_value_t* bad[2] = {inp(F32, DIMS(1, 4, 10, 10)), inp(F32, DIMS(8, 3, 3, 3))};
  mlcc_attr_t g2 = a_int("group", 2);
  EXPECT_ERR(run(MLCC_OP_CONV, 11, bad, 2, 1, &g2, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "C == group * W.shape[1]");
  // kernel_shape disagreeing with W.
  mlcc_attr_t ks[2] = {a_int("group", 2), a_ints("kernel_shape", DIMS(5, 5))};
  EXPECT_ERR(run(MLCC_OP_CONV, 11, ins, 2, 1, ks, 2, &n), MLCC_STATUS_INVALID_MODEL,
             "kernel_shape");
  // Kernel larger than the padded input.
  mlcc_value_t* tiny[2] = {inp(F32, DIMS(1, 1, 2, 2)), inp(F32, DIMS(1, 1, 3, 3))};
  EXPECT_ERR(run(MLCC_OP_CONV, 11, tiny, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "cover the dilated kernel");
  // Bias of the wrong length.
  mlcc_value_t* badb[3] = {inp(F32, DIMS(1, 4, 10, 10)), inp(F32, DIMS(8, 4, 3, 3)),
                           inp(F32, DIMS(4))};
  EXPECT_ERR(run(MLCC_OP_CONV, 11, badb, 3, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "bias B of shape [8]");
  end();
}

static void test_conv_auto_pad(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* ins[2] = {inp(F32, DIMS(1, 3, 8, 7)), inp(F32, DIMS(4, 3, 3, 3))};
  mlcc_attr_t at[2] = {a_str("auto_pad", "SAME_UPPER"), a_ints("strides", DIMS(2, 2))};
  CHECK_OK(run(MLCC_OP_CONV, 11, ins, 2, 1, at, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 4, 4, 4));  // ceil(8/2), ceil(7/2)
  mlcc_spatial_t sp;
  CHECK_OK(mlcc_spatial_resolve(n, &sp));
  // H: total = (4-1)*2+3-8 = 1 -> SAME_UPPER puts the extra pad at the end.
  CHECK_EQ_INT(sp.pad_begin[0], 0);
  CHECK_EQ_INT(sp.pad_end[0], 1);
  // W: total = (4-1)*2+3-7 = 2 -> 1/1.
  CHECK_EQ_INT(sp.pad_begin[1], 1);
  CHECK_EQ_INT(sp.pad_end[1], 1);
  at[0] = a_str("auto_pad", "SAME_LOWER");
  CHECK_OK(run(MLCC_OP_CONV, 11, ins, 2, 1, at, 2, &n));
  CHECK_OK(mlcc_spatial_resolve(n, &sp));
  CHECK_EQ_INT(sp.pad_begin[0], 1);
  CHECK_EQ_INT(sp.pad_end[0], 0);
  at[0] = a_str("auto_pad", "VALID");
  CHECK_OK(run(MLCC_OP_CONV, 11, ins, 2, 1, at, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 4, 3, 3));  // (8-3)/2+1, (7-3)/2+1
  at[0] = a_str("auto_pad", "SAME");
  EXPECT_ERR(run(MLCC_OP_CONV, 11, ins, 2, 1, at, 2, &n), MLCC_STATUS_INVALID_MODEL,
             "auto_pad");
  // The same attributes on int8 stand-ins read as Conv (mlcc_spatial_resolve_as):
  // SAME_UPPER, strides 2 gives the pads above; W [4, 3, 5, 5] gives a 5x5 window.
  at[0] = a_str("auto_pad", "SAME_UPPER");
  CHECK_OK(run(MLCC_OP_CONV, 11, ins, 2, 1, at, 2, &n));
  mlcc_value_t* qx = inp(MLCC_DTYPE_I8, DIMS(1, 3, 8, 7));
  mlcc_value_t* qw = inp(MLCC_DTYPE_I8, DIMS(4, 3, 5, 5));
  CHECK_OK(mlcc_spatial_resolve_as(n, MLCC_OP_CONV, 0, qx, qw, &sp));
  CHECK_EQ_INT(sp.kernel[0], 5);
  CHECK_EQ_INT(sp.out[0], 4);
  CHECK_EQ_INT(sp.out[1], 4);
  CHECK_EQ_INT(sp.pad_begin[0], 1);  // total = 3*2+5-8 = 3 -> 1/2
  CHECK_EQ_INT(sp.pad_end[0], 2);
  CHECK_EQ_INT(sp.pad_begin[1], 2);  // total = 3*2+5-7 = 4 -> 2/2
  CHECK_EQ_INT(sp.out_channels, 4);
  // In 3 dims (mlcc_spatial_to3): D padded (extent 1, kernel 1), then H and W.
  int64_t in3[3], out3[3], k3[3], s3[3], d3[3], pb3[3], pe3[3];
  mlcc_spatial_to3(&sp, in3, out3, k3, s3, d3, pb3, pe3);
  CHECK_EQ_INT(in3[0], 1);
  CHECK_EQ_INT(k3[0], 1);
  CHECK_EQ_INT(pe3[0], 0);
  CHECK_EQ_INT(in3[1], 8);
  CHECK_EQ_INT(in3[2], 7);
  CHECK_EQ_INT(k3[2], 5);
  CHECK_EQ_INT(s3[2], 2);
  CHECK_EQ_INT(d3[2], 1);
  CHECK_EQ_INT(out3[1], 4);
  CHECK_EQ_INT(pb3[1], 1);
  CHECK_EQ_INT(pe3[1], 2);
  // Read as AveragePool-11 without W: kernel_shape is required.
  EXPECT_ERR(mlcc_spatial_resolve_as(n, MLCC_OP_AVERAGE_POOL, 11, qx, NULL, &sp),
             MLCC_STATUS_INVALID_MODEL, "kernel_shape");
  end();
}

static void test_conv_transpose(void) {
  begin();
  mlcc_node_t* n = NULL;
  // out = 3*(3-1) + 1 + 3 - 0 - 0 = 10 (test_convtranspose_1d style).
  mlcc_value_t* ins[2] = {inp(F32, DIMS(1, 1, 3, 3)), inp(F32, DIMS(1, 2, 3, 3))};
  mlcc_attr_t at[2] = {a_ints("strides", DIMS(3, 2)), a_ints("output_padding", DIMS(1, 1))};
  CHECK_OK(run(MLCC_OP_CONV_TRANSPOSE, 11, ins, 2, 1, at, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 2, 10, 8));
  // output_shape given: pads are derived, shape is taken as-is.
  mlcc_attr_t at2[2] = {a_ints("strides", DIMS(3, 2)), a_ints("output_shape", DIMS(10, 8))};
  CHECK_OK(run(MLCC_OP_CONV_TRANSPOSE, 11, ins, 2, 1, at2, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 2, 10, 8));
  // group 2: output channels W[1]*group.
  mlcc_value_t* gins[2] = {inp(F32, DIMS(1, 4, 5, 5)), inp(F32, DIMS(4, 3, 2, 2))};
  mlcc_attr_t ga[2] = {a_int("group", 2), a_str("auto_pad", "SAME_UPPER")};
  CHECK_OK(run(MLCC_OP_CONV_TRANSPOSE, 11, gins, 2, 1, ga, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 6, 5, 5));
  end();
}

static void test_pool(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(1, 1, 4, 4));
  mlcc_attr_t at[3] = {a_ints("kernel_shape", DIMS(3, 3)), a_ints("strides", DIMS(2, 2)),
                       a_int("ceil_mode", 1)};
  CHECK_OK(run(MLCC_OP_MAX_POOL, 12, &x, 1, 2, at, 3, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 1, 2, 2));  // ceil((4-3)/2)+1
  EXPECT_OUT(n, 1, I64, DIMS(1, 1, 2, 2));  // Indices
  CHECK_OK(run(MLCC_OP_MAX_POOL, 12, &x, 1, 1, at, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 1, 1, 1));  // floor
  // ceil_mode drops a window that would start in the right padding:
  // in 3, k 1, s 2, pads [0,1]: ceil(3/2)+1 = 3, but (3-1)*2 >= 3 -> 2.
  mlcc_value_t* x1 = inp(F32, DIMS(1, 1, 3));
  mlcc_attr_t at1[4] = {a_ints("kernel_shape", DIMS(1)), a_ints("strides", DIMS(2)),
                        a_int("ceil_mode", 1), a_ints("pads", DIMS(0, 1))};
  CHECK_OK(run(MLCC_OP_AVERAGE_POOL, 11, &x1, 1, 1, at1, 4, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 1, 2));
  // ceil_mode needs opset 10.
  EXPECT_ERR(run(MLCC_OP_MAX_POOL, 8, &x, 1, 1, at, 3, &n), MLCC_STATUS_INVALID_MODEL,
             "ceil_mode");
  // MaxPool dilations (10+): dk = 3 -> (4-3)/1+1 = 2.
  mlcc_attr_t ad[2] = {a_ints("kernel_shape", DIMS(2, 2)), a_ints("dilations", DIMS(2, 2))};
  CHECK_OK(run(MLCC_OP_MAX_POOL, 12, &x, 1, 1, ad, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 1, 2, 2));
  // kernel_shape is required for pools.
  EXPECT_ERR(run(MLCC_OP_AVERAGE_POOL, 11, &x, 1, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "kernel_shape");
  CHECK_OK(run(MLCC_OP_GLOBAL_AVERAGE_POOL, 11, &x, 1, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 1, 1, 1));
  end();
}

static void test_gemm(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* ins[3] = {inp(F32, DIMS(4, 5)), inp(F32, DIMS(3, 5)), inp(F32, DIMS(3))};
  mlcc_attr_t tb = a_int("transB", 1);
  CHECK_OK(run(MLCC_OP_GEMM, 11, ins, 3, 1, &tb, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(4, 3));
  CHECK_OK(run(MLCC_OP_GEMM, 11, ins, 2, 1, &tb, 1, &n));  // C optional from 11
  EXPECT_OUT(n, 0, F32, DIMS(4, 3));
  EXPECT_ERR(run(MLCC_OP_GEMM, 9, ins, 2, 1, &tb, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "'C'");  // required before 11
  EXPECT_ERR(run(MLCC_OP_GEMM, 11, ins, 3, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "equal reduction dims");
  mlcc_value_t* badc[3] = {ins[0], ins[1], inp(F32, DIMS(4))};
  EXPECT_ERR(run(MLCC_OP_GEMM, 11, badc, 3, 1, &tb, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "unidirectionally");
  end();
}

static void test_matmul(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* a[2] = {inp(F32, DIMS(2, 1, 4, 5)), inp(F32, DIMS(3, 5, 6))};
  CHECK_OK(run(MLCC_OP_MATMUL, 13, a, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3, 4, 6));
  mlcc_value_t* b[2] = {inp(F32, DIMS(5)), inp(F32, DIMS(5, 6))};
  CHECK_OK(run(MLCC_OP_MATMUL, 13, b, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(6));
  mlcc_value_t* c[2] = {inp(F32, DIMS(2, 3, 5)), inp(F32, DIMS(5))};
  CHECK_OK(run(MLCC_OP_MATMUL, 13, c, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3));
  mlcc_value_t* d[2] = {inp(F32, DIMS(5)), inp(F32, DIMS(5))};
  CHECK_OK(run(MLCC_OP_MATMUL, 13, d, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, NODIMS);
  mlcc_value_t* e[2] = {inp(F32, DIMS(7, 64)), inp(F32, DIMS(48, 3))};
  EXPECT_ERR(run(MLCC_OP_MATMUL, 13, e, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "A[...,K=64] and B[K=48,...]");
  mlcc_value_t* f[2] = {inp(F32, DIMS(2, 4, 5)), inp(F32, DIMS(3, 5, 6))};
  EXPECT_ERR(run(MLCC_OP_MATMUL, 13, f, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "broadcastable");
  mlcc_value_t* g[2] = {inp(F32, DIMS(2, 5)), inp(I64, DIMS(5, 2))};
  EXPECT_ERR(run(MLCC_OP_MATMUL, 13, g, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "same element type");
  end();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static void test_broadcast(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* ok[2] = {inp(F32, DIMS(2, 1, 3)), inp(F32, DIMS(4, 1))};
  CHECK_OK(run(MLCC_OP_ADD, 14, ok, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 4, 3));
  mlcc_value_t* bad[2] = {inp(F32, DIMS(2, 3)), inp(F32, DIMS(4))};
  EXPECT_ERR(run(MLCC_OP_MUL, 14, bad, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "[2,3] and B[4]");
  mlcc_value_t* mixed[2] = {inp(F32, DIMS(2, 3)), inp(I64, DIMS(3))};
  EXPECT_ERR(run(MLCC_OP_SUB, 14, mixed, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "same element type");
  // Pow 12+: exponent may differ; output takes the base's dtype.
  CHECK_OK(run(MLCC_OP_POW, 13, mixed, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3));
  // Variadic Max over three inputs.
  mlcc_value_t* three[3] = {inp(F32, DIMS(3, 1)), inp(F32, DIMS(1, 4)), inp(F32, DIMS(2, 1, 1))};
  CHECK_OK(run(MLCC_OP_MAX, 13, three, 3, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3, 4));
  mlcc_value_t* three_bad[3] = {three[0], three[1], inp(F32, DIMS(5, 1))};
  EXPECT_ERR(run(MLCC_OP_SUM, 13, three_bad, 3, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "broadcastable");
  // PRelu: slope broadcasts to X only unidirectionally.
  mlcc_value_t* pr[2] = {inp(F32, DIMS(1, 8, 4, 4)), inp(F32, DIMS(8, 1, 1))};
  CHECK_OK(run(MLCC_OP_PRELU, 9, pr, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 8, 4, 4));
  mlcc_value_t* prb[2] = {inp(F32, DIMS(1, 8)), inp(F32, DIMS(2, 1, 8))};
  EXPECT_ERR(run(MLCC_OP_PRELU, 9, prb, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "unidirectionally");
  // Compare -> BOOL; Where broadcasts three inputs.
  CHECK_OK(run(MLCC_OP_LESS, 13, ok, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, MLCC_DTYPE_BOOL, DIMS(2, 4, 3));
  mlcc_value_t* w[3] = {inp(MLCC_DTYPE_BOOL, DIMS(4, 1)), inp(F32, DIMS(3)),
                        inp(F32, DIMS(2, 1, 1))};
  CHECK_OK(run(MLCC_OP_WHERE, 16, w, 3, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 4, 3));
  mlcc_value_t* wbad[3] = {inp(F32, DIMS(4, 1)), w[1], w[2]};
  EXPECT_ERR(run(MLCC_OP_WHERE, 16, wbad, 3, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "bool");
  // Cast 'to' is an ONNX dtype number.
  mlcc_attr_t to = a_int("to", 7);
  CHECK_OK(run(MLCC_OP_CAST, 13, ok, 1, 1, &to, 1, &n));
  EXPECT_OUT(n, 0, I64, DIMS(2, 1, 3));
  to = a_int("to", 8);
  EXPECT_ERR(run(MLCC_OP_CAST, 13, ok, 1, 1, &to, 1, &n), MLCC_STATUS_UNIMPLEMENTED, "string");
  to = a_int("to", 99);
  EXPECT_ERR(run(MLCC_OP_CAST, 13, ok, 1, 1, &to, 1, &n), MLCC_STATUS_INVALID_MODEL, "'to'");
  // Unary ops validate dtypes; Dropout's mask is BOOL.
  mlcc_value_t* iv = inp(I64, DIMS(3));
  EXPECT_ERR(run(MLCC_OP_SIGMOID, 13, &iv, 1, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "float");
  CHECK_OK(run(MLCC_OP_DROPOUT, 13, ok, 1, 2, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 1, 3));
  EXPECT_OUT(n, 1, MLCC_DTYPE_BOOL, DIMS(2, 1, 3));
  end();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

static void test_reshape(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(2, 3, 4));
  mlcc_value_t* ins[2] = {x, ci64(DIMS(0, -1))};
  CHECK_OK(run(MLCC_OP_RESHAPE, 13, ins, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 12));
  ins[1] = ci64(DIMS(-1, 3, 0));  // 0 copies input dim 2 (=4)
  CHECK_OK(run(MLCC_OP_RESHAPE, 13, ins, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3, 4));
  ins[1] = ci64(DIMS(5, -1));
  EXPECT_ERR(run(MLCC_OP_RESHAPE, 13, ins, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "multiple");
  ins[1] = ci64(DIMS(-1, -1));
  EXPECT_ERR(run(MLCC_OP_RESHAPE, 13, ins, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "at most one -1");
  // allowzero=1 keeps a literal 0 (empty output needs an empty input).
  mlcc_value_t* e = inp(F32, DIMS(0, 3));
  mlcc_value_t* eins[2] = {e, ci64(DIMS(3, 0))};
  mlcc_attr_t az = a_int("allowzero", 1);
  CHECK_OK(run(MLCC_OP_RESHAPE, 14, eins, 2, 1, &az, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(3, 0));
  // The target shape computed at run time is unsupported.
  mlcc_value_t* rt[2] = {x, inp(I64, DIMS(2))};
  EXPECT_ERR(run(MLCC_OP_RESHAPE, 13, rt, 2, 1, NULL, 0, &n), MLCC_STATUS_UNIMPLEMENTED,
             "Reshape input 'shape' (target shape) must be a compile-time constant");
  // Flatten (negative axis from 11).
  mlcc_attr_t ax = a_int("axis", -1);
  CHECK_OK(run(MLCC_OP_FLATTEN, 13, &x, 1, 1, &ax, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(6, 4));
  EXPECT_ERR(run(MLCC_OP_FLATTEN, 9, &x, 1, 1, &ax, 1, &n), MLCC_STATUS_INVALID_MODEL, "axis");
  ax = a_int("axis", 0);
  CHECK_OK(run(MLCC_OP_FLATTEN, 9, &x, 1, 1, &ax, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 24));
  end();
}

static void test_slice(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(5, 6));
  // x[:, -1:-100:-2] -> indices 5,3,1.
  mlcc_value_t* ins[5] = {x, ci64(DIMS(-1)), ci64(DIMS(-100)), ci64(DIMS(1)), ci64(DIMS(-2))};
  CHECK_OK(run(MLCC_OP_SLICE, 13, ins, 5, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(5, 3));
  // x[10:0:-1] on axis 0 (size 5) -> 4,3,2,1.
  mlcc_value_t* ins2[5] = {x, ci64(DIMS(10)), ci64(DIMS(0)), ci64(DIMS(0)), ci64(DIMS(-1))};
  CHECK_OK(run(MLCC_OP_SLICE, 13, ins2, 5, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(4, 6));
  // Default axes/steps, INT64_MAX end, empty result.
  mlcc_value_t* ins3[3] = {x, ci64(DIMS(1, 4)), ci64(DIMS(INT64_MAX, 2))};
  CHECK_OK(run(MLCC_OP_SLICE, 10, ins3, 3, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(4, 0));
  // Opset 1: attributes.
  mlcc_attr_t at[3] = {a_ints("starts", DIMS(0, 1)), a_ints("ends", DIMS(-1, 1000)),
                       a_ints("axes", DIMS(0, 1))};
  CHECK_OK(run(MLCC_OP_SLICE, 1, &x, 1, 1, at, 3, &n));
  EXPECT_OUT(n, 0, F32, DIMS(4, 5));
  mlcc_value_t* zs[5] = {x, ci64(DIMS(0)), ci64(DIMS(3)), ci64(DIMS(0)), ci64(DIMS(0))};
  EXPECT_ERR(run(MLCC_OP_SLICE, 13, zs, 5, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "non-zero");
  mlcc_value_t* rt[3] = {x, inp(I64, DIMS(1)), ci64(DIMS(3))};
  EXPECT_ERR(run(MLCC_OP_SLICE, 13, rt, 3, 1, NULL, 0, &n), MLCC_STATUS_UNIMPLEMENTED,
             "compile-time constant");
  end();
}

// The shared length helpers (ir/base/checked_math.h) at the int64 limits,
// against the counts numpy's x[s:e:st] gives for len(x) == 10.
static void test_stride_count_limits(void) {
  int64_t c = -1, s = -1;
  CHECK(mlcc_checked_stride_count(0, 10, INT64_MAX - 4, &c) && c == 1);
  CHECK(mlcc_checked_stride_count(INT64_MIN, INT64_MAX, INT64_MAX, &c) && c == 3);
  CHECK(mlcc_checked_stride_count(INT64_MAX, INT64_MIN, INT64_MIN, &c) && c == 2);
  CHECK(mlcc_checked_stride_count(5, 5, 1, &c) && c == 0);
  CHECK(mlcc_checked_stride_count(5, 6, -1, &c) && c == 0);
  CHECK(!mlcc_checked_stride_count(INT64_MIN, INT64_MAX, 1, &c));  // 2^64 - 1 terms
  CHECK(!mlcc_checked_stride_count(0, 1, 0, &c));
  CHECK(mlcc_slice_axis(10, 0, 10, INT64_MAX, &s, &c) && s == 0 && c == 1);
  CHECK(mlcc_slice_axis(10, 9, -11, INT64_MIN, &s, &c) && s == 9 && c == 1);
  CHECK(mlcc_slice_axis(10, INT64_MAX, INT64_MIN, INT64_MIN, &s, &c) && s == 9 && c == 1);
  CHECK(mlcc_slice_axis(10, INT64_MIN, INT64_MAX, 3, &s, &c) && s == 0 && c == 4);
  CHECK(mlcc_slice_axis(10, -1, -11, -2, &s, &c) && s == 9 && c == 5);
  CHECK(mlcc_slice_axis(0, -5, INT64_MIN, -1, &s, &c) && c == 0);  // numpy: empty
  CHECK(!mlcc_slice_axis(10, 0, 10, 0, &s, &c));
  CHECK(mlcc_ceil_div_nonneg(INT64_MAX, INT64_MAX) == 1 && mlcc_ceil_div_nonneg(2, INT64_MAX) == 1 &&
        mlcc_ceil_div_nonneg(0, 7) == 0 && mlcc_ceil_div_nonneg(15, 7) == 3);
  // Through shape inference: x[0:10:2^63-5] has one element.
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(10));
  mlcc_value_t* ins[5] = {x, ci64(DIMS(0)), ci64(DIMS(10)), ci64(DIMS(0)),
                          ci64(DIMS(INT64_MAX - 4))};
  CHECK_OK(run(MLCC_OP_SLICE, 13, ins, 5, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1));
  end();
}

static void test_resize(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(1, 3, 10, 10));
  static const float kScales[4] = {1, 1, 2.5f, 0.5f};
  mlcc_value_t* ins[3] = {x, NULL, cf32(kScales, 4, false)};
  CHECK_OK(run(MLCC_OP_RESIZE, 13, ins, 3, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 3, 25, 5));
  mlcc_value_t* ins4[4] = {x, NULL, cf32(NULL, 0, false), ci64(DIMS(1, 3, 7, 33))};
  CHECK_OK(run(MLCC_OP_RESIZE, 11, ins4, 4, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 3, 7, 33));
  // Opset 10: (X, scales); floor(10 * 0.75) = 7.
  static const float kScales10[4] = {1, 1, 0.75f, 1.5f};
  mlcc_value_t* ins10[2] = {x, cf32(kScales10, 4, false)};
  CHECK_OK(run(MLCC_OP_RESIZE, 10, ins10, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 3, 7, 15));
  mlcc_value_t* both[4] = {x, NULL, cf32(kScales, 4, false), ci64(DIMS(1, 3, 7, 33))};
  EXPECT_ERR(run(MLCC_OP_RESIZE, 13, both, 4, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "exactly one");
  mlcc_attr_t cubic = a_str("mode", "cubic");
  CHECK_OK(run(MLCC_OP_RESIZE, 13, ins, 3, 1, &cubic, 1, &n));
  EXPECT_ERR(run(MLCC_OP_RESIZE, 10, ins10, 2, 1, &cubic, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "mode");
  end();
}

static void test_concat_split(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* ins[3] = {inp(F32, DIMS(2, 3)), inp(F32, DIMS(2, 5)), inp(F32, DIMS(2, 1))};
  mlcc_attr_t ax = a_int("axis", -1);
  CHECK_OK(run(MLCC_OP_CONCAT, 13, ins, 3, 1, &ax, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 9));
  ax = a_int("axis", 0);
  EXPECT_ERR(run(MLCC_OP_CONCAT, 13, ins, 3, 1, &ax, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "except on axis 0");
  EXPECT_ERR(run(MLCC_OP_CONCAT, 13, ins, 3, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "'axis'");

  mlcc_value_t* x = inp(F32, DIMS(6, 4));
  // Opset 11: 'split' attribute.
  mlcc_attr_t sp[2] = {a_int("axis", 0), a_ints("split", DIMS(2, 4))};
  CHECK_OK(run(MLCC_OP_SPLIT, 11, &x, 1, 2, sp, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 4));
  EXPECT_OUT(n, 1, F32, DIMS(4, 4));
  // Opset 13: 'split' input.
  mlcc_value_t* ins13[2] = {x, ci64(DIMS(1, 3))};
  mlcc_attr_t ax1 = a_int("axis", -1);
  CHECK_OK(run(MLCC_OP_SPLIT, 13, ins13, 2, 2, &ax1, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(6, 1));
  EXPECT_OUT(n, 1, F32, DIMS(6, 3));
  // Equal split when absent.
  CHECK_OK(run(MLCC_OP_SPLIT, 13, &x, 1, 3, NULL, 0, &n));
  EXPECT_OUT(n, 2, F32, DIMS(2, 4));
  EXPECT_ERR(run(MLCC_OP_SPLIT, 13, &x, 1, 4, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "divide evenly");
  mlcc_value_t* badsum[2] = {x, ci64(DIMS(1, 2))};
  EXPECT_ERR(run(MLCC_OP_SPLIT, 13, badsum, 2, 2, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "sums to 3");
  EXPECT_ERR(run(MLCC_OP_SPLIT, 13, &x, 1, 2, sp, 2, &n), MLCC_STATUS_INVALID_MODEL,
             "not as an attribute");
  end();
}

static void test_squeeze_unsqueeze(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(1, 3, 1, 4));
  // Opset 11: attribute axes.
  mlcc_attr_t axes = a_ints("axes", DIMS(0, -2));
  CHECK_OK(run(MLCC_OP_SQUEEZE, 11, &x, 1, 1, &axes, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(3, 4));
  CHECK_OK(run(MLCC_OP_SQUEEZE, 11, &x, 1, 1, NULL, 0, &n));  // all 1s
  EXPECT_OUT(n, 0, F32, DIMS(3, 4));
  mlcc_attr_t bad = a_ints("axes", DIMS(1));
  EXPECT_ERR(run(MLCC_OP_SQUEEZE, 11, &x, 1, 1, &bad, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "size 1");
  // Opset 13: axes input.
  mlcc_value_t* ins[2] = {x, ci64(DIMS(2))};
  CHECK_OK(run(MLCC_OP_SQUEEZE, 13, ins, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 3, 4));
  EXPECT_ERR(run(MLCC_OP_SQUEEZE, 13, &x, 1, 1, &axes, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "not as an attribute");

  mlcc_value_t* y = inp(F32, DIMS(3, 4));
  mlcc_attr_t ua = a_ints("axes", DIMS(0, -1));  // output rank 4: positions 0 and 3
  CHECK_OK(run(MLCC_OP_UNSQUEEZE, 11, &y, 1, 1, &ua, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(1, 3, 4, 1));
  mlcc_value_t* uins[2] = {y, ci64(DIMS(1, 3))};
  CHECK_OK(run(MLCC_OP_UNSQUEEZE, 13, uins, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(3, 1, 4, 1));
  mlcc_value_t* dup[2] = {y, ci64(DIMS(1, -3))};
  EXPECT_ERR(run(MLCC_OP_UNSQUEEZE, 13, dup, 2, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "appears twice");
  EXPECT_ERR(run(MLCC_OP_UNSQUEEZE, 13, &y, 1, 1, NULL, 0, &n), MLCC_STATUS_INVALID_MODEL,
             "axes");
  end();
}

static void test_transpose_gather(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(2, 3, 4));
  CHECK_OK(run(MLCC_OP_TRANSPOSE, 13, &x, 1, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(4, 3, 2));
  mlcc_attr_t perm = a_ints("perm", DIMS(0, 2, 1));
  CHECK_OK(run(MLCC_OP_TRANSPOSE, 13, &x, 1, 1, &perm, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 4, 3));
  mlcc_attr_t bad = a_ints("perm", DIMS(0, 0, 1));
  EXPECT_ERR(run(MLCC_OP_TRANSPOSE, 13, &x, 1, 1, &bad, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "permutation");
  // Gather along axis 1 with 2-D indices; negative indices allowed.
  mlcc_value_t* gi[2] = {x, inp(I64, DIMS(5, 6))};
  mlcc_attr_t ax = a_int("axis", 1);
  CHECK_OK(run(MLCC_OP_GATHER, 13, gi, 2, 1, &ax, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 5, 6, 4));
  mlcc_value_t* gc[2] = {x, ci64(DIMS(-3, 2))};
  CHECK_OK(run(MLCC_OP_GATHER, 13, gc, 2, 1, &ax, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 2, 4));
  mlcc_value_t* go[2] = {x, ci64(DIMS(3))};
  EXPECT_ERR(run(MLCC_OP_GATHER, 13, go, 2, 1, &ax, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "indices must be in [-3, 2]");
  mlcc_value_t* gs[2] = {x, scalar_i64(0)};
  CHECK_OK(run(MLCC_OP_GATHER, 13, gs, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(3, 4));
  end();
}

static void test_reduce(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(2, 3, 4));
  mlcc_attr_t at[2] = {a_ints("axes", DIMS(1)), a_int("keepdims", 1)};
  CHECK_OK(run(MLCC_OP_REDUCE_MEAN, 13, &x, 1, 1, at, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 1, 4));
  at[1] = a_int("keepdims", 0);
  CHECK_OK(run(MLCC_OP_REDUCE_MEAN, 13, &x, 1, 1, at, 2, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 4));
  CHECK_OK(run(MLCC_OP_REDUCE_MAX, 13, &x, 1, 1, NULL, 0, &n));  // all axes, keepdims 1
  EXPECT_OUT(n, 0, F32, DIMS(1, 1, 1));
  CHECK_OK(run(MLCC_OP_REDUCE_MAX, 13, &x, 1, 1, &at[1], 1, &n));  // all axes, keepdims 0
  EXPECT_OUT(n, 0, F32, NODIMS);
  // ReduceSum 13: axes input, noop_with_empty_axes.
  mlcc_value_t* ins[2] = {x, ci64(DIMS(-1, 0))};
  CHECK_OK(run(MLCC_OP_REDUCE_SUM, 13, ins, 2, 1, &at[1], 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(3));
  mlcc_attr_t noop = a_int("noop_with_empty_axes", 1);
  CHECK_OK(run(MLCC_OP_REDUCE_SUM, 13, &x, 1, 1, &noop, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3, 4));
  CHECK_OK(run(MLCC_OP_REDUCE_SUM, 11, &x, 1, 1, at, 1, &n));  // attribute axes before 13
  EXPECT_OUT(n, 0, F32, DIMS(2, 1, 4));
  mlcc_attr_t dup = a_ints("axes", DIMS(1, -2));
  EXPECT_ERR(run(MLCC_OP_REDUCE_L2, 13, &x, 1, 1, &dup, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "appears twice");
  mlcc_attr_t oob = a_ints("axes", DIMS(3));
  EXPECT_ERR(run(MLCC_OP_REDUCE_L2, 13, &x, 1, 1, &oob, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "[-3, 2]");
  mlcc_attr_t am[2] = {a_int("axis", -1), a_int("keepdims", 0)};
  CHECK_OK(run(MLCC_OP_ARG_MAX, 13, &x, 1, 1, am, 2, &n));
  EXPECT_OUT(n, 0, I64, DIMS(2, 3));
  end();
}

static void test_misc_shape_ops(void) {
  begin();
  mlcc_node_t* n = NULL;
  mlcc_value_t* x = inp(F32, DIMS(2, 3, 4));
  // Shape with start/end (15+), Size.
  mlcc_attr_t se[2] = {a_int("start", -2), a_int("end", 100)};
  CHECK_OK(run(MLCC_OP_SHAPE, 15, &x, 1, 1, se, 2, &n));
  EXPECT_OUT(n, 0, I64, DIMS(2));
  CHECK_OK(run(MLCC_OP_SHAPE, 13, &x, 1, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, I64, DIMS(3));
  CHECK_OK(run(MLCC_OP_SIZE, 13, &x, 1, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, I64, NODIMS);
  // Expand (bidirectional), Tile.
  mlcc_value_t* ex[2] = {inp(F32, DIMS(3, 1)), ci64(DIMS(2, 1, 6))};
  CHECK_OK(run(MLCC_OP_EXPAND, 13, ex, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3, 6));
  mlcc_value_t* tl[2] = {x, ci64(DIMS(1, 2, 3))};
  CHECK_OK(run(MLCC_OP_TILE, 13, tl, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 6, 12));
  // Outputs above 2^40 elements are rejected.
  mlcc_value_t* huge[2] = {inp(F32, DIMS(1, 1)), ci64(DIMS(1 << 21, 1 << 21))};
  EXPECT_ERR(run(MLCC_OP_EXPAND, 13, huge, 2, 1, NULL, 0, &n), MLCC_STATUS_UNIMPLEMENTED,
             "2^40");
  // Pad: attributes (< 11) and inputs (11+), negative pads crop.
  mlcc_attr_t pa = a_ints("pads", DIMS(0, 1, 2, 0, 1, -1));
  CHECK_OK(run(MLCC_OP_PAD, 2, &x, 1, 1, &pa, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 5, 5));
  mlcc_value_t* pi[2] = {x, ci64(DIMS(0, 1, 2, 0, 1, -1))};
  CHECK_OK(run(MLCC_OP_PAD, 13, pi, 2, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 5, 5));
  mlcc_attr_t refl = a_str("mode", "reflect");
  mlcc_value_t* pr[2] = {x, ci64(DIMS(0, 0, 4, 0, 0, 0))};
  EXPECT_ERR(run(MLCC_OP_PAD, 13, pr, 2, 1, &refl, 1, &n), MLCC_STATUS_INVALID_MODEL,
             "reflect");
  // ConstantOfShape, Range.
  mlcc_value_t* cs = ci64(DIMS(4, 0, 2));
  CHECK_OK(run(MLCC_OP_CONSTANT_OF_SHAPE, 13, &cs, 1, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(4, 0, 2));
  mlcc_value_t* rg[3] = {scalar_i64(10), scalar_i64(-3), scalar_i64(-4)};
  CHECK_OK(run(MLCC_OP_RANGE, 13, rg, 3, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, I64, DIMS(4));  // 10, 6, 2, -2
  static const float kR[3] = {1.0f, 2.0f, 0.3f};
  mlcc_value_t* rf[3] = {cf32(&kR[0], 1, true), cf32(&kR[1], 1, true), cf32(&kR[2], 1, true)};
  CHECK_OK(run(MLCC_OP_RANGE, 13, rf, 3, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(4));  // ceil(1/0.3) = 4
  // Norms.
  mlcc_value_t* bn[5] = {inp(F32, DIMS(2, 3, 4, 4)), inp(F32, DIMS(3)), inp(F32, DIMS(3)),
                         inp(F32, DIMS(3)), inp(F32, DIMS(3))};
  CHECK_OK(run(MLCC_OP_BATCH_NORMALIZATION, 15, bn, 5, 1, NULL, 0, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3, 4, 4));
  bn[4] = inp(F32, DIMS(4));
  EXPECT_ERR(run(MLCC_OP_BATCH_NORMALIZATION, 15, bn, 5, 1, NULL, 0, &n),
             MLCC_STATUS_INVALID_MODEL, "[C=3]");
  mlcc_value_t* ln[3] = {x, inp(F32, DIMS(3, 4)), inp(F32, DIMS(4))};
  mlcc_attr_t lax = a_int("axis", 1);
  CHECK_OK(run(MLCC_OP_LAYER_NORMALIZATION, 17, ln, 3, 3, &lax, 1, &n));
  EXPECT_OUT(n, 0, F32, DIMS(2, 3, 4));
  EXPECT_OUT(n, 1, F32, DIMS(2, 1, 1));
  EXPECT_OUT(n, 2, F32, DIMS(2, 1, 1));
  end();
}

int main(void) {
  RUN(test_conv);
  RUN(test_conv_auto_pad);
  RUN(test_conv_transpose);
  RUN(test_pool);
  RUN(test_gemm);
  RUN(test_matmul);
  RUN(test_broadcast);
  RUN(test_reshape);
  RUN(test_slice);
  RUN(test_stride_count_limits);
  RUN(test_resize);
  RUN(test_concat_split);
  RUN(test_squeeze_unsqueeze);
  RUN(test_transpose_gather);
  RUN(test_reduce);
  RUN(test_misc_shape_ops);
  return TEST_EXIT();
}

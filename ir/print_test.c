// SPDX-License-Identifier: Apache-2.0
// Unit tests for the text IR and Graphviz printers (exact output).
#include "ir/print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef struct fixture_t {
  mlcc_graph_t* g;
  mlcc_value_t *x, *w, *b, *y, *r;
  mlcc_node_t *conv, *relu;
  mlcc_value_t* ins[1];
  mlcc_value_t* outs[1];
} fixture_t;

static void set(mlcc_value_t* v, mlcc_dtype_t dt, int32_t rank, const int64_t* dims) {
  v->dtype = dt;
  v->shape_known = true;
  v->shape.rank = rank;
  for (int32_t i = 0; i < rank; ++i) v->shape.dims[i] = dims[i];
}

static void build(fixture_t* f) {
  memset(f, 0, sizeof(*f));
  static float wdata[4 * 3 * 3 * 3];
  static float bdata[4];
  CHECK_OK(mlcc_graph_create(&f->g));
  f->g->name = "tiny";
  CHECK_OK(mlcc_graph_add_value(f->g, "x", MLCC_VALUE_INPUT, &f->x));
  int64_t xd[] = {1, 3, 8, 8}, wd[] = {4, 3, 3, 3}, bd[] = {4}, yd[] = {1, 4, 8, 8};
  set(f->x, MLCC_DTYPE_F32, 4, xd);
  mlcc_shape_t ws = {.rank = 4, .dims = {4, 3, 3, 3}}, bs = {.rank = 1, .dims = {4}};
  (void)wd;
  (void)bd;
  CHECK_OK(mlcc_graph_add_constant(f->g, "conv.weight", MLCC_DTYPE_F32, &ws, wdata, false,
                                   &f->w));
  CHECK_OK(mlcc_graph_add_constant(f->g, "onnx::Conv_2", MLCC_DTYPE_F32, &bs, bdata, false,
                                   &f->b));
  CHECK_OK(mlcc_graph_add_value(f->g, "y", MLCC_VALUE_INTERMEDIATE, &f->y));
  CHECK_OK(mlcc_graph_add_value(f->g, "r", MLCC_VALUE_INTERMEDIATE, &f->r));
  set(f->y, MLCC_DTYPE_F32, 4, yd);
  set(f->r, MLCC_DTYPE_F32, 4, yd);
  static const int64_t ks[] = {3, 3}, pads[] = {1, 1, 1, 1}, strides[] = {1, 1};
  mlcc_attr_t attrs[4];
  memset(attrs, 0, sizeof(attrs));
  attrs[0] = (mlcc_attr_t){.name = "strides", .kind = MLCC_ATTR_INTS, .ints = strides, .count = 2};
  attrs[1] = (mlcc_attr_t){.name = "kernel_shape", .kind = MLCC_ATTR_INTS, .ints = ks, .count = 2};
  attrs[2] = (mlcc_attr_t){.name = "pads", .kind = MLCC_ATTR_INTS, .ints = pads, .count = 4};
  attrs[3] = (mlcc_attr_t){.name = "auto_pad", .kind = MLCC_ATTR_STRING, .s = "NOTSET", .s_len = 6};
  mlcc_value_t* ins[3] = {f->x, f->w, f->b};
  CHECK_OK(mlcc_graph_add_node(f->g, MLCC_OP_CONV, 13, "conv_0", ins, 3, &f->y, 1, attrs, 4,
                               &f->conv));
  mlcc_attr_t alpha = {.name = "alpha", .kind = MLCC_ATTR_FLOAT, .f = 0.25f};
  CHECK_OK(mlcc_graph_add_node(f->g, MLCC_OP_LEAKY_RELU, 6, "", &f->y, 1, &f->r, 1, &alpha, 1,
                               &f->relu));
  f->ins[0] = f->x;
  f->outs[0] = f->r;
  f->g->inputs = f->ins;
  f->g->n_inputs = 1;
  f->g->outputs = f->outs;
  f->g->n_outputs = 1;
  f->r->is_output = true;
}

// Runs |fn| on |g| into a string the caller frees.
static char* capture(void (*fn)(const mlcc_graph_t*, FILE*), const mlcc_graph_t* g) {
  char* buf = NULL;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  if (out == NULL) return NULL;
  fn(g, out);
  fclose(out);
  return buf;
}

static void test_print_text(void) {
  fixture_t f;
  build(&f);
  char* text = capture(mlcc_graph_print, f.g);
  CHECK_STREQ(text,
              "graph \"tiny\" {\n"
              "  input %x:f32[1,3,8,8]\n"
              "  const %conv.weight:f32[4,3,3,3]\n"
              "  const %\"onnx::Conv_2\":f32[4]\n"
              "  %y:f32[1,4,8,8] = Conv(%x, %conv.weight, %\"onnx::Conv_2\") "
              "{auto_pad=\"NOTSET\", kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}"
              "  // #0 \"conv_0\" opset 13\n"
              "  %r:f32[1,4,8,8] = LeakyRelu(%y) {alpha=0.25}  // #1 \"\" opset 6\n"
              "  output %r:f32[1,4,8,8]\n"
              "}\n");
  free(text);
  mlcc_graph_destroy(f.g);
}

static void test_print_kernels_and_workspace(void) {
  fixture_t f;
  build(&f);
  mlcc_node_t* chain[2] = {f.conv, f.relu};
  uint32_t carried[2] = {0, 0};
  mlcc_kernel_t k = {2, chain, carried};
  f.g->kernels = &k;
  f.g->n_kernels = 1;
  f.conv->kernel = 0;
  f.relu->kernel = 0;
  f.y->ws_offset = 0;
  f.w->weight_offset = 64;
  f.g->workspace_size = 1024;
  f.y->dtype = MLCC_DTYPE_UNDEFINED;
  f.y->shape_known = false;
  char* text = capture(mlcc_graph_print, f.g);
  CHECK_STREQ(text,
              "graph \"tiny\" {\n"
              "  input %x:f32[1,3,8,8]\n"
              "  const %conv.weight:f32[4,3,3,3]@weights+64\n"
              "  const %\"onnx::Conv_2\":f32[4]\n"
              "  %y:?[?]@ws+0 = Conv(%x, %conv.weight, %\"onnx::Conv_2\") "
              "{auto_pad=\"NOTSET\", kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}"
              "  // #0 \"conv_0\" opset 13 kernel 0\n"
              "  %r:f32[1,4,8,8] = LeakyRelu(%y) {alpha=0.25}  // #1 \"\" opset 6 kernel 0\n"
              "  kernel 0 = [#0 Conv, #1 LeakyRelu@0]\n"
              "  workspace size=1024 align=64\n"
              "  output %r:f32[1,4,8,8]\n"
              "}\n");
  free(text);

  char* dot = capture(mlcc_graph_print_dot, f.g);
  CHECK(dot != NULL);
  if (dot) {
    CHECK(strstr(dot, "digraph \"tiny\" {\n") == dot);
    CHECK(strstr(dot, "  subgraph cluster_k0 {\n    label=\"kernel 0\";\n    style=dashed;\n"
                      "    n0;\n    n1;\n  }\n") != NULL);
    CHECK(strstr(dot, "  v0 [shape=ellipse, label=\"x\\nf32[1,3,8,8]\"];\n") != NULL);
    CHECK(strstr(dot, "  v2 [shape=note, label=\"onnx::Conv_2\\nf32[4]\"];\n") != NULL);
    CHECK(strstr(dot, "  n0 [label=\"Conv\\nconv_0\"];\n") != NULL);
    CHECK(strstr(dot, "  n1 [label=\"LeakyRelu\"];\n") != NULL);
    CHECK(strstr(dot, "  v1 -> n0;\n") != NULL);
    CHECK(strstr(dot, "  n0 -> n1 [label=\"y\\n?[?]\"];\n") != NULL);
    CHECK(strstr(dot, "  n1 -> out0;\n") != NULL);
    CHECK(strcmp(dot + strlen(dot) - 2, "}\n") == 0);
  }
  free(dot);
  // Grouped (--emit=dot's default): constants in the reader's label.
  mlcc_dot_options_t grouped = {.all_constants = false};
  char* gdot = NULL;
  size_t gsize = 0;
  FILE* gf = open_memstream(&gdot, &gsize);
  CHECK(gf != NULL);
  if (gf) {
    mlcc_graph_print_dot_with(f.g, gf, &grouped);
    fclose(gf);
    CHECK(strstr(gdot, "  n0 [label=\"Conv\\nconv_0\\nconst f32[4,3,3,3] f32[4]\"];\n") != NULL);
    CHECK(strstr(gdot, "shape=note") == NULL);
    CHECK(strstr(gdot, "  v1 -> n0;\n") == NULL);
    CHECK(strstr(gdot, "  v0 -> n0;\n") != NULL);
    CHECK(strstr(gdot, "  n0 -> n1 [label=\"?[?]\"];\n") != NULL);
  }
  free(gdot);
  // A single-node kernel gets no cluster.
  k.n_nodes = 1;
  f.relu->kernel = -1;
  dot = capture(mlcc_graph_print_dot, f.g);
  CHECK(dot != NULL && strstr(dot, "cluster") == NULL);
  free(dot);
  mlcc_graph_destroy(f.g);
}

static void test_print_attr_kinds(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  mlcc_value_t *s = NULL, *y = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "shape", MLCC_VALUE_INPUT, &s));
  CHECK_OK(mlcc_graph_add_value(g, "out put", MLCC_VALUE_INTERMEDIATE, &y));
  static const float fill[] = {1.0f};
  static const float fs[] = {1.0f, -0.5f, 3e-8f};
  static const char* const strs[] = {"a\"b", "c"};
  mlcc_attr_t attrs[3];
  memset(attrs, 0, sizeof(attrs));
  attrs[0] = (mlcc_attr_t){.name = "value", .kind = MLCC_ATTR_TENSOR, .t_dtype = MLCC_DTYPE_F32,
                           .t_shape = {.rank = 1, .dims = {1}}, .t_data = fill};
  attrs[1] = (mlcc_attr_t){.name = "floats", .kind = MLCC_ATTR_FLOATS, .floats = fs, .count = 3};
  attrs[2] = (mlcc_attr_t){.name = "names", .kind = MLCC_ATTR_STRINGS, .strings = strs, .count = 2};
  mlcc_value_t* outs[2] = {y, NULL};
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONSTANT_OF_SHAPE, 9, "cos", &s, 1, outs, 2, attrs, 3,
                               &n));
  n->dead = true;
  char* text = capture(mlcc_graph_print, g);
  CHECK_STREQ(text,
              "graph \"\" {\n"
              "  dead %\"out put\":?[?], _ = ConstantOfShape(%shape) "
              "{floats=[1.0,-0.5,3e-08], names=[\"a\\\"b\",\"c\"], "
              "value=tensor<f32[1]>{1.0}}  // #0 \"cos\" opset 9\n"
              "}\n");
  free(text);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_print_text);
  RUN(test_print_kernels_and_workspace);
  RUN(test_print_attr_kinds);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Tests for driver/describe.c: the exact --describe text for a hand-made
// graph (docs/bundle.md, format 2), JSON escaping, and the missing-shape error.
#include "driver/describe.h"

#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "targets/codegen/stack.h"
#include "test.h"

static mlcc_value_t* add_io(mlcc_graph_t* g, const char* name, mlcc_dtype_t dtype, int32_t rank,
                            const int64_t* dims) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g, name, MLCC_VALUE_INPUT, &v));
  if (v == NULL) return NULL;
  v->dtype = dtype;
  v->shape_known = true;
  v->shape.rank = rank;
  for (int32_t i = 0; i < rank; ++i) v->shape.dims[i] = dims[i];
  return v;
}

static const char kSha[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static mlcc_graph_t* make_graph(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  static const int64_t img[] = {1, 3, 8, 8};
  static const int64_t idx[] = {2, 12};
  mlcc_value_t* in = add_io(g, "in\"put", MLCC_DTYPE_F32, 4, img);
  mlcc_value_t* out = add_io(g, "idx", MLCC_DTYPE_I64, 2, idx);
  out->bound_dims = 2;  // dim 1 is an upper bound
  g->inputs = (mlcc_value_t**)mlcc_arena_alloc(&g->arena, sizeof(in), 8);
  g->inputs[0] = in;
  g->n_inputs = 1;
  g->outputs = (mlcc_value_t**)mlcc_arena_alloc(&g->arena, sizeof(out), 8);
  g->outputs[0] = out;
  g->n_outputs = 1;
  g->workspace_size = 4096;
  g->workspace_align = 64;
  return g;
}

static void test_render(void) {
  mlcc_graph_t* g = make_graph();
  mlcc_target_t t;
  memset(&t, 0, sizeof(t));
  strcpy(t.alias, "riscv");
  strcpy(t.triple, "riscv64-linux-gnu");
  strcpy(t.cpu, "generic-rv64");
  strcpy(t.features, "+m,+a,+f,+d,+c,+v");
  const char* opts[] = {"--input-shape=in=1x3x8x8", "-fno-winograd"};
  mlcc_describe_info_t info = {
      .name = "det", .model_file = "m\tx.onnx", .model_sha256 = kSha, .model_size = 1234,
      .target = &t, .opt_level = 3, .options = opts, .n_options = 2,
      .library_sha256 = kSha, .header_sha256 = kSha, .weights_size = 300,
      .code_size = 5000, .ram_size = 4096 + 17408, .flash_size = 5320};
  char* text = NULL;
  CHECK_OK(mlcc_describe_render(g, &info, &text));
  char want[4096];
  snprintf(want, sizeof(want),
           "{\n"
           "  \"format\": 2,\n"
           "  \"model\": {\"name\": \"det\", \"file\": \"m\\u0009x.onnx\", \"sha256\": \"%s\", "
           "\"size\": 1234},\n"
           "  \"target\": {\n"
           "    \"alias\": \"riscv\",\n"
           "    \"triple\": \"riscv64-linux-gnu\",\n"
           "    \"cpu\": \"generic-rv64\",\n"
           "    \"features\": \"+m,+a,+f,+d,+c,+v\",\n"
           "    \"opt_level\": 3,\n"
           "    \"options\": [\"--input-shape=in=1x3x8x8\", \"-fno-winograd\"],\n"
           "    \"entry_abi\": 3,\n"
           "    \"workspace_size\": 4096,\n"
           "    \"workspace_align\": 64,\n"
           "    \"stack_size\": %lld,\n"
           "    \"weights_size\": 300,\n"
           "    \"code_size\": 5000,\n"
           "    \"ram_size\": 21504,\n"
           "    \"flash_size\": 5320,\n"
           "    \"inputs\": [{\"name\": \"in\\\"put\", \"dtype\": \"float32\", "
           "\"shape\": [1, 3, 8, 8], \"bounded\": []}],\n"
           "    \"outputs\": [{\"name\": \"idx\", \"dtype\": \"int64\", \"shape\": [2, 12], "
           "\"bounded\": [1]}],\n"
           "    \"library\": \"riscv64-linux-gnu/lib/libdet.a\",\n"
           "    \"library_sha256\": \"%s\",\n"
           "    \"header\": \"riscv64-linux-gnu/include/det.h\",\n"
           "    \"header_sha256\": \"%s\"\n"
           "  }\n"
           "}\n",
           kSha, (long long)mlcc_stack_size(g), kSha, kSha);
  CHECK_STREQ(text, want);
  free(text);

  // An output without an inferred shape is an internal error, nothing rendered.
  g->outputs[0]->shape_known = false;
  text = NULL;
  CHECK_STATUS(mlcc_describe_render(g, &info, &text), MLCC_STATUS_INTERNAL);
  CHECK(text == NULL);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_render);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Tests for profile builds (entry_profile.h): the NAME_profile table of a
// JIT-compiled two-kernel model (rows, op names, call counts, times, reset),
// FLOP counts, and that --profile leaves kernel cache keys unchanged.
#include "targets/codegen/entry_profile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include "targets/codegen/codegen.h"
#include "targets/llvm/llvm_ctx.h"
#include "test.h"

// The row layout documented in entry_profile.h / docs/generated-api.md.
typedef struct prof_row_t {
  const char* name;
  const char* ops;
  int64_t flops;
  int64_t units;
  int64_t calls;
  int64_t ns;
  int64_t min_ns;
} prof_row_t;

static mlcc_value_t* add_tensor(mlcc_graph_t* g, const char* name, mlcc_value_kind_t kind,
                                int64_t rows, int64_t cols) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g, name, kind, &v));
  if (v == NULL) return NULL;
  v->dtype = MLCC_DTYPE_F32;
  v->shape.rank = 2;
  v->shape.dims[0] = rows;
  v->shape.dims[1] = cols;
  v->shape_known = true;
  return v;
}

// y = Relu(x + x) as two kernels [Add] [Relu], through the workspace; or
// y = MatMul(x, w) when |matmul| (x [2,3], w [3,4]).
static mlcc_graph_t* make_graph(bool matmul) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return NULL;
  mlcc_value_t* x = add_tensor(g, "x", MLCC_VALUE_INPUT, 2, 3);
  mlcc_value_t* y = add_tensor(g, "y", MLCC_VALUE_INTERMEDIATE, 2, matmul ? 4 : 3);
  mlcc_node_t* nodes[2] = {NULL, NULL};
  uint32_t n_kernels = 1;
  if (matmul) {
    mlcc_value_t* w = add_tensor(g, "w", MLCC_VALUE_INPUT, 3, 4);
    mlcc_value_t* ins[2] = {x, w};
    CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_MATMUL, 13, "mm", ins, 2, &y, 1, NULL, 0, &nodes[0]));
  } else {
    mlcc_value_t* t = add_tensor(g, "t", MLCC_VALUE_INTERMEDIATE, 2, 3);
    t->ws_offset = 0;
    mlcc_value_t* ins[2] = {x, x};
    CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_ADD, 14, "add0", ins, 2, &t, 1, NULL, 0, &nodes[0]));
    CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_RELU, 14, "relu0", &t, 1, &y, 1, NULL, 0, &nodes[1]));
    n_kernels = 2;
    g->workspace_size = 64;
  }
  g->workspace_align = 64;
  g->inputs = mlcc_arena_alloc(&g->arena, sizeof(*g->inputs), 8);
  g->outputs = mlcc_arena_alloc(&g->arena, sizeof(*g->outputs), 8);
  g->inputs[0] = x;
  g->n_inputs = 1;
  g->outputs[0] = y;
  g->n_outputs = 1;
  y->is_output = true;
  g->kernels = mlcc_arena_alloc(&g->arena, sizeof(mlcc_kernel_t) * n_kernels, 8);
  g->n_kernels = n_kernels;
  for (uint32_t k = 0; k < n_kernels; ++k) {
    g->kernels[k].n_nodes = 1;
    g->kernels[k].nodes = mlcc_arena_alloc(&g->arena, sizeof(mlcc_node_t*), 8);
    g->kernels[k].carried_input = mlcc_arena_alloc(&g->arena, sizeof(uint32_t), 8);
    g->kernels[k].nodes[0] = nodes[k];
    g->kernels[k].carried_input[0] = 0;
    nodes[k]->kernel = (int32_t)k;
  }
  return g;
}

static void test_profile_table(void) {
  mlcc_graph_t* g = make_graph(false);
  if (g == NULL) return;
  LLVMLinkInMCJIT();
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve(NULL, "x86-64", NULL, &t));
  mlcc_codegen_options_t opts = {&t, 2, "pm", true};
  char(*symbols)[40] = NULL;
  CHECK_OK(mlcc_codegen_kernel_symbols(g, &opts, &symbols));
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("pm", c);
  CHECK_OK(mlcc_codegen_build_weights(g, "pm", c, m));
  for (uint32_t k = 0; symbols != NULL && k < g->n_kernels; ++k) {
    LLVMValueRef fn = NULL;
    CHECK_OK(mlcc_codegen_build_kernel_fn(c, m, &t, &g->kernels[k], symbols[k], &fn));
  }
  if (symbols != NULL) {
    CHECK_OK(mlcc_codegen_build_entry_profiled(g, "pm", symbols, &t, true, c, m));
  }
  free(symbols);
  CHECK_OK(mlcc_llvm_verify(m, "pm"));
  LLVMExecutionEngineRef ee = NULL;
  char* err = NULL;
  struct LLVMMCJITCompilerOptions o;
  LLVMInitializeMCJITCompilerOptions(&o, sizeof(o));
  if (LLVMCreateMCJITCompilerForModule(&ee, m, &o, sizeof(o), &err)) {
    fprintf(stderr, "JIT: %s\n", err);
    LLVMDisposeMessage(err);
    CHECK(0 && "jit failed");
    LLVMContextDispose(c);
    mlcc_graph_destroy(g);
    return;
  }
  int (*run_v)(const void* const*, void* const*, void*) =
      (int (*)(const void* const*, void* const*, void*))(uintptr_t)LLVMGetFunctionAddress(ee, "pm_run_v");
  int32_t (*profile)(const prof_row_t**) =
      (int32_t(*)(const prof_row_t**))(uintptr_t)LLVMGetFunctionAddress(ee, "pm_profile");
  void (*reset)(void) = (void (*)(void))(uintptr_t)LLVMGetFunctionAddress(ee, "pm_profile_reset");
  CHECK(run_v != NULL && profile != NULL && reset != NULL);
  if (run_v != NULL && profile != NULL && reset != NULL) {
    const prof_row_t* rows = NULL;
    CHECK_EQ_INT(profile(NULL), 2);  // NULL: only the count
    CHECK_EQ_INT(profile(&rows), 2);
    CHECK_STREQ(rows[0].name, "add0");
    CHECK_STREQ(rows[0].ops, "Add");
    CHECK_STREQ(rows[1].name, "relu0");
    CHECK_STREQ(rows[1].ops, "Relu");
    CHECK_EQ_INT(rows[0].flops, 6);  // one per output element
    CHECK_EQ_INT(rows[0].units, 0);  // elementwise kernels run whole
    CHECK_EQ_INT(rows[0].calls, 0);
    CHECK(rows[0].min_ns == INT64_MAX);
    float xin[6] = {1, -2, 3, -4, 5, -6}, yout[6] = {0};
    _Alignas(64) uint8_t ws[64];
    const void* ins[1] = {xin};
    void* outs[1] = {yout};
    for (int r = 0; r < 3; ++r) CHECK_EQ_INT(run_v(ins, outs, ws), 0);
    for (int i = 0; i < 6; ++i) CHECK_NEAR(yout[i], xin[i] > 0 ? 2 * xin[i] : 0, 0);
    for (int k = 0; k < 2; ++k) {
      CHECK_EQ_INT(rows[k].calls, 3);
      CHECK(rows[k].ns >= 0 && rows[k].min_ns >= 0 && rows[k].min_ns <= rows[k].ns);
    }
    reset();
    CHECK_EQ_INT(rows[1].calls, 0);
    CHECK_EQ_INT(rows[1].ns, 0);
    CHECK(rows[1].min_ns == INT64_MAX);
    CHECK_EQ_INT(run_v(ins, outs, ws), 0);
    CHECK_EQ_INT(rows[1].calls, 1);
  }
  LLVMDisposeExecutionEngine(ee);
  LLVMContextDispose(c);
  mlcc_graph_destroy(g);
}

static void test_flops_and_keys(void) {
  mlcc_graph_t* g = make_graph(true);
  if (g == NULL) return;
  CHECK_EQ_INT(mlcc_profile_kernel_flops(&g->kernels[0]), 2 * 2 * 4 * 3);
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve(NULL, "x86-64", NULL, &t));
  mlcc_codegen_options_t plain = {&t, 2, "k", false};
  mlcc_codegen_options_t prof = {&t, 2, "k", true};
  char a[65] = "", b[65] = "";
  CHECK_OK(mlcc_codegen_kernel_key(g, 0, &plain, a));
  CHECK_OK(mlcc_codegen_kernel_key(g, 0, &prof, b));
  CHECK_STREQ(a, b);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_profile_table);
  RUN(test_flops_and_keys);
  return TEST_EXIT();
}

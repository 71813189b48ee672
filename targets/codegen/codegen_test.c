// SPDX-License-Identifier: Apache-2.0
// Tests for the code generator: constant folding through the JIT, the fused
// epilogue, the entry ABI (run through MCJIT), per-target objects and cache
// keys.
#include "targets/codegen/codegen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include "passes/pass.h"
#include "targets/emit/emit.h"
#include "targets/llvm/llvm_ctx.h"
#include "test.h"

//===----------------------------------------------------------------------===//
// Graph-building helpers
//===----------------------------------------------------------------------===//

static mlcc_shape_t shape2(int64_t a, int64_t b) {
  mlcc_shape_t s = {2, {a, b}};
  return s;
}
static mlcc_shape_t shape1(int64_t a) {
  mlcc_shape_t s = {1, {a}};
  return s;
}

static mlcc_value_t* add_tensor(mlcc_graph_t* g, const char* name, mlcc_value_kind_t kind,
                                mlcc_shape_t shape) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g, name, kind, &v));
  if (v == NULL) return NULL;
  v->dtype = MLCC_DTYPE_F32;
  v->shape = shape;
  v->shape_known = true;
  return v;
}

static mlcc_value_t* add_const(mlcc_graph_t* g, const char* name, mlcc_shape_t shape,
                               const float* data) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, name, MLCC_DTYPE_F32, &shape, data, true, &v));
  return v;
}

static mlcc_node_t* add_node(mlcc_graph_t* g, mlcc_op_t op, mlcc_value_t* a, mlcc_value_t* b,
                             mlcc_value_t* out) {
  mlcc_value_t* ins[2] = {a, b};
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, op, 14, "", ins, b ? 2 : 1, &out, 1, NULL, 0, &n));
  return n;
}

static void set_io(mlcc_graph_t* g, mlcc_value_t** ins, uint32_t n_in, mlcc_value_t** outs,
                   uint32_t n_out) {
  g->inputs = mlcc_arena_alloc(&g->arena, sizeof(*g->inputs) * (n_in + 1), 8);
  g->outputs = mlcc_arena_alloc(&g->arena, sizeof(*g->outputs) * (n_out + 1), 8);
  memcpy(g->inputs, ins, sizeof(*ins) * n_in);
  memcpy(g->outputs, outs, sizeof(*outs) * n_out);
  g->n_inputs = n_in;
  g->n_outputs = n_out;
  for (uint32_t i = 0; i < n_out; ++i) outs[i]->is_output = true;
}

// Sets graph->kernels from groups of node pointers (NULL-separated).
static void set_kernels(mlcc_graph_t* g, mlcc_node_t** groups, uint32_t n_kernels) {
  g->kernels = mlcc_arena_alloc(&g->arena, sizeof(mlcc_kernel_t) * n_kernels, 8);
  g->n_kernels = n_kernels;
  uint32_t pos = 0;
  for (uint32_t k = 0; k < n_kernels; ++k) {
    uint32_t n = 0;
    while (groups[pos + n] != NULL) ++n;
    mlcc_kernel_t* kk = &g->kernels[k];
    kk->n_nodes = n;
    kk->nodes = mlcc_arena_alloc(&g->arena, sizeof(mlcc_node_t*) * n, 8);
    kk->carried_input = mlcc_arena_alloc(&g->arena, sizeof(uint32_t) * n, 8);
    for (uint32_t i = 0; i < n; ++i) {
      kk->nodes[i] = groups[pos + i];
      kk->nodes[i]->kernel = (int32_t)k;
      kk->carried_input[i] = 0;
    }
    pos += n + 1;
  }
}

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

static void test_eval_add_broadcast(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  float a[6] = {1, 2, 3, 4, 5, 6};
  float b[3] = {10, 20, 30};
  mlcc_value_t* va = add_const(g, "a", shape2(2, 3), a);
  mlcc_value_t* vb = add_const(g, "b", shape1(3), b);
  mlcc_value_t* vc = add_tensor(g, "c", MLCC_VALUE_INTERMEDIATE, shape2(2, 3));
  mlcc_node_t* n = add_node(g, MLCC_OP_ADD, va, vb, vc);
  CHECK_OK(mlcc_codegen_eval_node(g, n));
  CHECK(n->dead);
  CHECK_EQ_INT(vc->kind, MLCC_VALUE_CONSTANT);
  CHECK(vc->producer == NULL);
  CHECK(vc->data != NULL && ((uintptr_t)vc->data % 64) == 0);
  if (vc->data) {
    const float* c = vc->data;
    for (int i = 0; i < 6; ++i) CHECK_NEAR(c[i], a[i] + b[i % 3], 0);
  }
  mlcc_graph_destroy(g);
}

static void test_eval_scalar_broadcast_and_sub(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  float a[6] = {1, 2, 3, 4, 5, 6};
  float b[2] = {100, 200};
  mlcc_value_t* va = add_const(g, "a", shape2(1, 3), a);
  mlcc_value_t* vb = add_const(g, "b", shape2(2, 1), b);
  mlcc_value_t* vc = add_tensor(g, "c", MLCC_VALUE_INTERMEDIATE, shape2(2, 3));
  mlcc_node_t* n = add_node(g, MLCC_OP_SUB, vb, va, vc);
  CHECK_OK(mlcc_codegen_eval_node(g, n));
  if (vc->data) {
    const float* c = vc->data;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) CHECK_NEAR(c[i * 3 + j], b[i] - a[j], 0);
    }
  }
  mlcc_graph_destroy(g);
}

// float16 goes through half<->float conversions in the JIT.
static void test_eval_cast_f16(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  float a[3] = {1.0f, 0.5f, -2.0f};
  mlcc_value_t* va = add_const(g, "a", shape1(3), a);
  mlcc_value_t* vh = add_tensor(g, "h", MLCC_VALUE_INTERMEDIATE, shape1(3));
  vh->dtype = MLCC_DTYPE_F16;
  mlcc_attr_t to = {0};
  to.name = "to";
  to.kind = MLCC_ATTR_INT;
  to.i = MLCC_DTYPE_F16;
  mlcc_node_t* n = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CAST, 13, "", &va, 1, &vh, 1, &to, 1, &n));
  if (n == NULL) return;
  CHECK_OK(mlcc_codegen_eval_node(g, n));
  if (vh->data) {
    const uint16_t* h = vh->data;
    CHECK_EQ_INT(h[0], 0x3C00);
    CHECK_EQ_INT(h[1], 0x3800);
    CHECK_EQ_INT(h[2], 0xC000);
  }
  mlcc_graph_destroy(g);
}

//===----------------------------------------------------------------------===//
// Whole model through the JIT: fused epilogue, workspace, output copies
//===----------------------------------------------------------------------===//

typedef struct jit_model_t {
  LLVMContextRef c;
  LLVMExecutionEngineRef ee;
  int (*run_v)(const void* const*, void* const*, void*);
  const void* info;
} jit_model_t;

static void jit_init(void) {
  static int done = 0;
  if (done) return;
  done = 1;
  mlcc_llvm_init();
  LLVMLinkInMCJIT();
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
}

// Builds weights + kernels + entry into one module for the host and JITs it.
static int jit_model(mlcc_graph_t* g, const char* name, jit_model_t* out) {
  memset(out, 0, sizeof(*out));
  jit_init();
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve(NULL, "x86-64", NULL, &t));
  mlcc_codegen_options_t opts = {&t, 2, name};
  char(*symbols)[40] = NULL;
  mlcc_status_t s = mlcc_codegen_kernel_symbols(g, &opts, &symbols);
  CHECK_OK(s);
  if (symbols == NULL) return 0;
  out->c = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext(name, out->c);
  CHECK_OK(mlcc_codegen_build_weights(g, name, out->c, m));
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    if (LLVMGetNamedFunction(m, symbols[k])) continue;
    LLVMValueRef fn = NULL;
    CHECK_OK(mlcc_codegen_build_kernel_fn(out->c, m, &t, &g->kernels[k], symbols[k], &fn));
  }
  CHECK_OK(mlcc_codegen_build_entry(g, name, symbols, out->c, m));
  free(symbols);
  CHECK_OK(mlcc_llvm_verify(m, name));
  char* err = NULL;
  struct LLVMMCJITCompilerOptions o;
  LLVMInitializeMCJITCompilerOptions(&o, sizeof(o));
  o.OptLevel = 2;
  if (LLVMCreateMCJITCompilerForModule(&out->ee, m, &o, sizeof(o), &err)) {
    fprintf(stderr, "JIT: %s\n", err);
    LLVMDisposeMessage(err);
    return 0;
  }
  char sym[128];
  snprintf(sym, sizeof(sym), "%s_run_v", name);
  out->run_v = (int (*)(const void* const*, void* const*, void*))(uintptr_t)
      LLVMGetFunctionAddress(out->ee, sym);
  snprintf(sym, sizeof(sym), "%s_info", name);
  out->info = (const void*)(uintptr_t)LLVMGetGlobalValueAddress(out->ee, sym);
  return out->run_v != NULL && out->info != NULL;
}

static void jit_free(jit_model_t* j) {
  if (j->ee) LLVMDisposeExecutionEngine(j->ee);
  if (j->c) LLVMContextDispose(j->c);
}

// The header's structs, as in docs/generated-api.md.
typedef struct tinfo_t {
  const char* name;
  int32_t dtype;
  int32_t rank;
  const int64_t* dims;
  int64_t size_bytes;
} tinfo_t;
typedef struct minfo_t {
  const char* name;
  int32_t num_inputs;
  int32_t num_outputs;
  const tinfo_t* inputs;
  const tinfo_t* outputs;
  int64_t workspace_size;
  int64_t workspace_align;
  int (*run)(const void* const*, void* const*, void*);
} minfo_t;

// y = Relu(x + w) in one fused kernel.
static void test_fused_epilogue_entry(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  float w[3] = {1, -2, 0.5f};
  mlcc_value_t* x = add_tensor(g, "x", MLCC_VALUE_INPUT, shape2(2, 3));
  mlcc_value_t* vw = add_const(g, "w", shape1(3), w);
  mlcc_value_t* t = add_tensor(g, "t", MLCC_VALUE_INTERMEDIATE, shape2(2, 3));
  mlcc_value_t* y = add_tensor(g, "y", MLCC_VALUE_INTERMEDIATE, shape2(2, 3));
  mlcc_node_t* n0 = add_node(g, MLCC_OP_ADD, x, vw, t);
  mlcc_node_t* n1 = add_node(g, MLCC_OP_RELU, t, NULL, y);
  set_io(g, &x, 1, &y, 1);
  mlcc_node_t* groups[] = {n0, n1, NULL};
  set_kernels(g, groups, 1);
  g->workspace_size = 0;
  g->workspace_align = 64;

  jit_model_t j;
  if (jit_model(g, "fused", &j)) {
    float xin[6] = {0, 1, 2, -3, 4, -5};
    float yout[6] = {0};
    const void* ins[1] = {xin};
    void* outs[1] = {yout};
    CHECK_EQ_INT(j.run_v(ins, outs, NULL), 0);
    for (int i = 0; i < 6; ++i) {
      float ref = xin[i] + w[i % 3];
      CHECK_NEAR(yout[i], ref > 0 ? ref : 0, 0);
    }
    const minfo_t* info = j.info;
    CHECK_STREQ(info->name, "fused");
    CHECK_EQ_INT(info->num_inputs, 1);
    CHECK_EQ_INT(info->num_outputs, 1);
    CHECK_STREQ(info->inputs[0].name, "x");
    CHECK_EQ_INT(info->inputs[0].dtype, 1);
    CHECK_EQ_INT(info->inputs[0].rank, 2);
    CHECK_EQ_INT(info->inputs[0].dims[1], 3);
    CHECK_EQ_INT(info->outputs[0].size_bytes, 24);
    CHECK_EQ_INT(info->workspace_size, 0);
    CHECK_EQ_INT(info->workspace_align, 64);
    CHECK(info->run == j.run_v);
  } else {
    CHECK(0 && "jit failed");
  }
  jit_free(&j);
  mlcc_graph_destroy(g);
}

// Two kernels through the workspace, plus outputs no kernel writes: an
// input, a constant and a duplicate.
static void test_workspace_and_output_copies(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  float w[3] = {1, 2, 3};
  mlcc_value_t* x = add_tensor(g, "x", MLCC_VALUE_INPUT, shape2(2, 3));
  mlcc_value_t* vw = add_const(g, "w", shape1(3), w);
  mlcc_value_t* t = add_tensor(g, "t", MLCC_VALUE_INTERMEDIATE, shape2(2, 3));
  mlcc_value_t* y = add_tensor(g, "y", MLCC_VALUE_INTERMEDIATE, shape2(2, 3));
  mlcc_node_t* n0 = add_node(g, MLCC_OP_MUL, x, vw, t);
  mlcc_node_t* n1 = add_node(g, MLCC_OP_NEG, t, NULL, y);
  mlcc_value_t* ins[1] = {x};
  mlcc_value_t* outs[4] = {y, x, vw, y};
  set_io(g, ins, 1, outs, 4);
  mlcc_node_t* groups[] = {n0, NULL, n1, NULL};
  set_kernels(g, groups, 2);
  t->ws_offset = 64;
  g->workspace_size = 128;
  g->workspace_align = 64;

  jit_model_t j;
  if (jit_model(g, "two", &j)) {
    float xin[6] = {1, 2, 3, 4, 5, 6};
    float o0[6] = {0}, o1[6] = {0}, o2[3] = {0}, o3[6] = {0};
    const void* in_arr[1] = {xin};
    void* out_arr[4] = {o0, o1, o2, o3};
    _Alignas(64) uint8_t ws[256];
    CHECK_EQ_INT(j.run_v(in_arr, out_arr, NULL), 1);
    CHECK_EQ_INT(j.run_v(in_arr, out_arr, ws + 4), 1);
    CHECK_EQ_INT(o0[0], 0);  // nothing ran
    CHECK_EQ_INT(j.run_v(in_arr, out_arr, ws), 0);
    for (int i = 0; i < 6; ++i) {
      CHECK_NEAR(o0[i], -xin[i] * w[i % 3], 0);
      CHECK_NEAR(o3[i], o0[i], 0);
      CHECK_NEAR(o1[i], xin[i], 0);
    }
    for (int i = 0; i < 3; ++i) CHECK_NEAR(o2[i], w[i], 0);
    const minfo_t* info = j.info;
    CHECK_EQ_INT(info->workspace_size, 128);
    CHECK_EQ_INT(info->num_outputs, 4);
    CHECK_STREQ(info->outputs[2].name, "w");
  } else {
    CHECK(0 && "jit failed");
  }
  CHECK_EQ_INT(vw->weight_offset, 0);
  jit_free(&j);
  mlcc_graph_destroy(g);
}

// True if parameter |i| of |fn| has the enum attribute |name|.
static bool param_has(LLVMValueRef fn, unsigned i, const char* name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  return LLVMGetEnumAttributeAtIndex(fn, i + 1, kind) != NULL;
}

// In place (plan-memory, mlcc_kernel_t.inplace_input): kernels writing their
// output over a dying input compute what separate buffers would give.
// -O0 (one kernel per node): a = Relu(x); b = Neg(a) over a; c = Add(b, w)
// over b (w broadcast); y = Transpose(c).
static void test_inplace_elementwise_entry(void) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  float w[16];
  for (int i = 0; i < 16; ++i) w[i] = 0.25f * (float)i - 1.0f;
  mlcc_value_t* x = add_tensor(g, "x", MLCC_VALUE_INPUT, shape2(4, 16));
  mlcc_value_t* vw = add_const(g, "w", shape1(16), w);
  mlcc_value_t* a = add_tensor(g, "a", MLCC_VALUE_INTERMEDIATE, shape2(4, 16));
  mlcc_value_t* b = add_tensor(g, "b", MLCC_VALUE_INTERMEDIATE, shape2(4, 16));
  mlcc_value_t* c = add_tensor(g, "c", MLCC_VALUE_INTERMEDIATE, shape2(4, 16));
  mlcc_value_t* y = add_tensor(g, "y", MLCC_VALUE_INTERMEDIATE, shape2(16, 4));
  add_node(g, MLCC_OP_RELU, x, NULL, a);
  add_node(g, MLCC_OP_NEG, a, NULL, b);
  add_node(g, MLCC_OP_ADD, b, vw, c);
  add_node(g, MLCC_OP_TRANSPOSE, c, NULL, y);
  set_io(g, &x, 1, &y, 1);
  mlcc_pass_ctx_t pctx;
  memset(&pctx, 0, sizeof(pctx));
  pctx.opt_level = 0;
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&pctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  if (g->n_kernels != 4) {
    mlcc_graph_destroy(g);
    return;
  }
  CHECK(g->kernels[1].inplace_input == a);
  CHECK(g->kernels[2].inplace_input == b);
  CHECK(a->ws_offset == b->ws_offset && b->ws_offset == c->ws_offset);
  // The output (argument 0) is reached through the input's noalias pointer;
  // its own parameter is not noalias.
  jit_init();
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve(NULL, "x86-64", NULL, &t));
  LLVMContextRef lc = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("k", lc);
  LLVMValueRef fn = NULL;
  CHECK_OK(mlcc_codegen_build_kernel_fn(lc, m, &t, &g->kernels[1], "k_neg", &fn));
  if (fn != NULL) {
    CHECK(!param_has(fn, 0, "noalias"));
    CHECK(param_has(fn, 1, "noalias"));
  }
  LLVMDisposeModule(m);
  LLVMContextDispose(lc);

  jit_model_t j;
  if (jit_model(g, "inplace_ew", &j)) {
    float xin[64], yout[64] = {0};
    for (int i = 0; i < 64; ++i) xin[i] = (float)((i * 37) % 23) - 11.0f;
    const void* ins[1] = {xin};
    void* outs[1] = {yout};
    _Alignas(64) uint8_t ws[1024];
    CHECK(g->workspace_size <= (int64_t)sizeof(ws));
    CHECK_EQ_INT(j.run_v(ins, outs, ws), 0);
    for (int r = 0; r < 4; ++r) {
      for (int col = 0; col < 16; ++col) {
        float v = xin[r * 16 + col];
        float ref = -(v > 0 ? v : 0) + w[col];
        CHECK_NEAR(yout[col * 4 + r], ref, 0);
      }
    }
  } else {
    CHECK(0 && "jit failed");
  }
  jit_free(&j);
  mlcc_graph_destroy(g);
}

// -O2: r = Relu(x2); t = MatMul(x, W) + r, the residual overwritten by the
// output (18 columns: vector tiles plus a scalar tail); y = Transpose(t).
static void test_inplace_matmul_residual_entry(void) {
  enum { M = 8, K = 16, N = 18 };
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  static float wd[K * N];
  for (int i = 0; i < K * N; ++i) wd[i] = (float)((i * 13) % 9) * 0.125f - 0.5f;
  mlcc_value_t* x = add_tensor(g, "x", MLCC_VALUE_INPUT, shape2(M, K));
  mlcc_value_t* x2 = add_tensor(g, "x2", MLCC_VALUE_INPUT, shape2(M, N));
  mlcc_value_t* vw = add_const(g, "w", shape2(K, N), wd);
  mlcc_value_t* r = add_tensor(g, "r", MLCC_VALUE_INTERMEDIATE, shape2(M, N));
  mlcc_value_t* mm = add_tensor(g, "mm", MLCC_VALUE_INTERMEDIATE, shape2(M, N));
  mlcc_value_t* t = add_tensor(g, "t", MLCC_VALUE_INTERMEDIATE, shape2(M, N));
  mlcc_value_t* y = add_tensor(g, "y", MLCC_VALUE_INTERMEDIATE, shape2(N, M));
  add_node(g, MLCC_OP_RELU, x2, NULL, r);
  add_node(g, MLCC_OP_MATMUL, x, vw, mm);
  add_node(g, MLCC_OP_ADD, mm, r, t);
  add_node(g, MLCC_OP_TRANSPOSE, t, NULL, y);
  mlcc_value_t* ins[2] = {x, x2};
  set_io(g, ins, 2, &y, 1);
  mlcc_pass_ctx_t pctx;
  memset(&pctx, 0, sizeof(pctx));
  pctx.opt_level = 2;
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&pctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 3);
  if (g->n_kernels != 3) {
    mlcc_graph_destroy(g);
    return;
  }
  CHECK_EQ_INT(g->kernels[1].n_nodes, 2);
  CHECK(g->kernels[1].inplace_input == r);
  CHECK_EQ_INT(t->ws_offset, r->ws_offset);
  jit_model_t j;
  if (jit_model(g, "inplace_mm", &j)) {
    static float xin[M * K], x2in[M * N], yout[N * M];
    for (int i = 0; i < M * K; ++i) xin[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
    for (int i = 0; i < M * N; ++i) x2in[i] = (float)((i * 5) % 13) - 6.0f;
    const void* in_arr[2] = {xin, x2in};
    void* out_arr[1] = {yout};
    _Alignas(64) static uint8_t ws[2048];
    CHECK(g->workspace_size <= (int64_t)sizeof(ws));
    CHECK_EQ_INT(j.run_v(in_arr, out_arr, ws), 0);
    for (int i = 0; i < M; ++i) {
      for (int n = 0; n < N; ++n) {
        double acc = 0;
        for (int k = 0; k < K; ++k) acc += (double)xin[i * K + k] * wd[k * N + n];
        float rv = x2in[i * N + n] > 0 ? x2in[i * N + n] : 0;
        CHECK_NEAR(yout[n * M + i], acc + rv, 1e-4);
      }
    }
  } else {
    CHECK(0 && "jit failed");
  }
  jit_free(&j);
  mlcc_graph_destroy(g);
}

//===----------------------------------------------------------------------===//
// Objects per target, cache keys
//===----------------------------------------------------------------------===//

// Builds y = x + w (x [rows,3] input, w [3] constant) as one kernel.
static mlcc_graph_t* add_graph(int64_t rows, const float* w) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return NULL;
  mlcc_value_t* x = add_tensor(g, "x", MLCC_VALUE_INPUT, shape2(rows, 3));
  mlcc_value_t* vw = add_const(g, "w", shape1(3), w);
  mlcc_value_t* y = add_tensor(g, "y", MLCC_VALUE_INTERMEDIATE, shape2(rows, 3));
  mlcc_node_t* n = add_node(g, MLCC_OP_ADD, x, vw, y);
  set_io(g, &x, 1, &y, 1);
  mlcc_node_t* groups[] = {n, NULL};
  set_kernels(g, groups, 1);
  g->workspace_align = 64;
  return g;
}

static unsigned elf_machine(const mlcc_buffer_t* b) {
  if (b->size < 64 || memcmp(b->data, "\x7f" "ELF", 4) != 0) return 0;
  return b->data[18] | (b->data[19] << 8);
}

static void test_objects_per_target(void) {
  static const char* const aliases[3] = {"x86", "aarch64", "riscv"};
  static const unsigned machines[3] = {62, 183, 243};
  float w[3] = {1, 2, 3};
  mlcc_graph_t* g = add_graph(4, w);
  if (g == NULL) return;
  for (int i = 0; i < 3; ++i) {
    mlcc_target_t t;
    CHECK_OK(mlcc_target_resolve(aliases[i], NULL, NULL, &t));
    mlcc_codegen_options_t opts = {&t, 2, "m"};
    mlcc_buffer_t obj = {0};
    CHECK_OK(mlcc_codegen_kernel(g, 0, &opts, MLCC_OUTPUT_OBJECT, &obj));
    CHECK_EQ_INT(elf_machine(&obj), machines[i]);
    if (i == 2 && obj.size >= 64) {
      // e_flags: double-float ABI (lp64d) to link with Debian's riscv64 libs.
      uint32_t flags = obj.data[48] | (obj.data[49] << 8);
      CHECK_EQ_INT(flags & 0x6, 0x4);
    }
    mlcc_buffer_deinit(&obj);
    mlcc_buffer_t wobj = {0}, eobj = {0}, whole = {0};
    CHECK_OK(mlcc_codegen_weights(g, &opts, MLCC_OUTPUT_OBJECT, &wobj));
    CHECK_EQ_INT(elf_machine(&wobj), machines[i]);
    CHECK_OK(mlcc_codegen_entry(g, &opts, MLCC_OUTPUT_OBJECT, &eobj));
    CHECK_EQ_INT(elf_machine(&eobj), machines[i]);
    CHECK_OK(mlcc_codegen_whole(g, &opts, MLCC_OUTPUT_OBJECT, &whole));
    CHECK_EQ_INT(elf_machine(&whole), machines[i]);
    mlcc_buffer_deinit(&wobj);
    mlcc_buffer_deinit(&eobj);
    mlcc_buffer_deinit(&whole);
  }
  // LL text names the kernel with weak_odr + hidden.
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve("x86", NULL, NULL, &t));
  mlcc_codegen_options_t opts = {&t, 2, "m"};
  char key[65], sym[40];
  CHECK_OK(mlcc_codegen_kernel_key(g, 0, &opts, key));
  mlcc_codegen_kernel_symbol(key, sym);
  CHECK_EQ_INT(strlen(sym), 7 + 24);
  CHECK(strncmp(sym, "mlcc_k_", 7) == 0);
  mlcc_buffer_t ll = {0};
  CHECK_OK(mlcc_codegen_kernel(g, 0, &opts, MLCC_OUTPUT_LL, &ll));
  char* text = calloc(ll.size + 1, 1);
  if (text) {
    memcpy(text, ll.data, ll.size);
    char want[80];
    snprintf(want, sizeof(want), "define weak_odr hidden void @%s(", sym);
    CHECK(strstr(text, want) != NULL);
    CHECK(strstr(text, "noalias") != NULL);
  }
  free(text);
  mlcc_buffer_deinit(&ll);
  // Every opt level compiles.
  for (int lvl = 0; lvl <= 3; ++lvl) {
    mlcc_codegen_options_t ol = {&t, lvl, "m"};
    mlcc_buffer_t o = {0};
    CHECK_OK(mlcc_codegen_whole(g, &ol, MLCC_OUTPUT_OBJECT, &o));
    CHECK_EQ_INT(elf_machine(&o), 62);
    // Reproducible: the same bytes again.
    mlcc_buffer_t o2 = {0};
    CHECK_OK(mlcc_codegen_whole(g, &ol, MLCC_OUTPUT_OBJECT, &o2));
    CHECK(o.size == o2.size && o.size > 0 && memcmp(o.data, o2.data, o.size) == 0);
    mlcc_buffer_deinit(&o2);
    mlcc_buffer_deinit(&o);
  }
  mlcc_codegen_options_t bad = {&t, 7, "m"};
  mlcc_buffer_t o = {0};
  CHECK_STATUS(mlcc_codegen_kernel(g, 0, &bad, MLCC_OUTPUT_OBJECT, &o),
               MLCC_STATUS_INVALID_ARGUMENT);
  mlcc_buffer_t asm_ = {0};
  CHECK_OK(mlcc_codegen_kernel(g, 0, &opts, MLCC_OUTPUT_ASM, &asm_));
  CHECK(asm_.size > 0);
  mlcc_buffer_deinit(&asm_);
  mlcc_graph_destroy(g);
}

static void test_kernel_keys(void) {
  float w1[3] = {1, 2, 3}, w2[3] = {7, 8, 9};
  mlcc_graph_t* a = add_graph(4, w1);
  mlcc_graph_t* b = add_graph(4, w2);  // retrained: same shapes, new weights
  mlcc_graph_t* c = add_graph(5, w1);  // a shape changed
  if (!a || !b || !c) return;
  mlcc_target_t t, t2;
  CHECK_OK(mlcc_target_resolve("x86", NULL, NULL, &t));
  CHECK_OK(mlcc_target_resolve("aarch64", NULL, NULL, &t2));
  mlcc_codegen_options_t opts = {&t, 2, "m"};
  char ka[65], kb[65], kc[65], kd[65], ke[65];
  CHECK_OK(mlcc_codegen_kernel_key(a, 0, &opts, ka));
  CHECK_OK(mlcc_codegen_kernel_key(b, 0, &opts, kb));
  CHECK_OK(mlcc_codegen_kernel_key(c, 0, &opts, kc));
  CHECK_EQ_INT(strlen(ka), 64);
  CHECK_STREQ(ka, kb);
  CHECK(strcmp(ka, kc) != 0);
  mlcc_codegen_options_t o2 = {&t2, 2, "m"};
  CHECK_OK(mlcc_codegen_kernel_key(a, 0, &o2, kd));
  CHECK(strcmp(ka, kd) != 0);
  mlcc_codegen_options_t o3 = {&t, 0, "m"};
  CHECK_OK(mlcc_codegen_kernel_key(a, 0, &o3, ke));
  CHECK(strcmp(ka, ke) != 0);
  // An in-place kernel (output over its input x) is other code.
  a->kernels[0].inplace_input = a->kernels[0].nodes[0]->inputs[0];
  CHECK_OK(mlcc_codegen_kernel_key(a, 0, &opts, ke));
  CHECK(strcmp(ka, ke) != 0);
  a->kernels[0].inplace_input = NULL;
  // Add(x, x) differs from Add(x, w) with w the same shape as x.
  mlcc_graph_t* g1 = NULL;
  mlcc_graph_t* g2 = NULL;
  CHECK_OK(mlcc_graph_create(&g1));
  CHECK_OK(mlcc_graph_create(&g2));
  if (g1 && g2) {
    mlcc_value_t* x1 = add_tensor(g1, "x", MLCC_VALUE_INPUT, shape1(3));
    mlcc_value_t* y1 = add_tensor(g1, "y", MLCC_VALUE_INTERMEDIATE, shape1(3));
    mlcc_node_t* n1 = add_node(g1, MLCC_OP_ADD, x1, x1, y1);
    mlcc_node_t* gr1[] = {n1, NULL};
    set_kernels(g1, gr1, 1);
    mlcc_value_t* x2 = add_tensor(g2, "x", MLCC_VALUE_INPUT, shape1(3));
    mlcc_value_t* z2 = add_tensor(g2, "z", MLCC_VALUE_INPUT, shape1(3));
    mlcc_value_t* y2 = add_tensor(g2, "y", MLCC_VALUE_INTERMEDIATE, shape1(3));
    mlcc_node_t* n2 = add_node(g2, MLCC_OP_ADD, x2, z2, y2);
    mlcc_node_t* gr2[] = {n2, NULL};
    set_kernels(g2, gr2, 1);
    char k1[65], k2[65];
    CHECK_OK(mlcc_codegen_kernel_key(g1, 0, &opts, k1));
    CHECK_OK(mlcc_codegen_kernel_key(g2, 0, &opts, k2));
    CHECK(strcmp(k1, k2) != 0);
  }
  mlcc_graph_destroy(g1);
  mlcc_graph_destroy(g2);
  CHECK_STATUS(mlcc_codegen_kernel_key(a, 3, &opts, ka), MLCC_STATUS_INVALID_ARGUMENT);
  mlcc_graph_destroy(a);
  mlcc_graph_destroy(b);
  mlcc_graph_destroy(c);
}

static void test_kernel_args_order(void) {
  float w[3] = {1, 2, 3};
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  if (g == NULL) return;
  mlcc_value_t* x = add_tensor(g, "x", MLCC_VALUE_INPUT, shape1(3));
  mlcc_value_t* vw = add_const(g, "w", shape1(3), w);
  mlcc_value_t* t = add_tensor(g, "t", MLCC_VALUE_INTERMEDIATE, shape1(3));
  mlcc_value_t* u = add_tensor(g, "u", MLCC_VALUE_INTERMEDIATE, shape1(3));
  mlcc_value_t* y = add_tensor(g, "y", MLCC_VALUE_INTERMEDIATE, shape1(3));
  mlcc_node_t* n0 = add_node(g, MLCC_OP_ADD, x, vw, t);
  mlcc_node_t* n1 = add_node(g, MLCC_OP_MUL, x, t, u);  // carried is slot 1
  mlcc_node_t* n2 = add_node(g, MLCC_OP_RELU, u, NULL, y);
  mlcc_node_t* groups[] = {n0, n1, n2, NULL};
  set_kernels(g, groups, 1);
  g->kernels[0].carried_input[1] = 1;
  const mlcc_value_t* args[8] = {0};
  uint32_t n = mlcc_kernel_args(&g->kernels[0], args, 8);
  CHECK_EQ_INT(n, 3);
  CHECK(args[0] == y);
  CHECK(args[1] == x);
  CHECK(args[2] == vw);
  // Too small an array: the count is still right.
  const mlcc_value_t* one[1] = {0};
  CHECK_EQ_INT(mlcc_kernel_args(&g->kernels[0], one, 1), 3);
  CHECK(one[0] == y);
  // Count only (no array; never allocates): x is counted once, t and u are
  // chain-internal.
  CHECK_EQ_INT(mlcc_kernel_args(&g->kernels[0], NULL, 0), 3);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_kernel_args_order);
  RUN(test_eval_add_broadcast);
  RUN(test_eval_scalar_broadcast_and_sub);
  RUN(test_eval_cast_f16);
  RUN(test_fused_epilogue_entry);
  RUN(test_workspace_and_output_copies);
  RUN(test_inplace_elementwise_entry);
  RUN(test_inplace_matmul_residual_entry);
  RUN(test_objects_per_target);
  RUN(test_kernel_keys);
  return TEST_EXIT();
}

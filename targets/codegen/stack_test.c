// SPDX-License-Identifier: Apache-2.0
// Tests for the stack bound (stack.c): every emitter's stack buffers are
// reported. Conv nodes of several shapes are packed by the pack-weights pass
// for every target the bound covers, their kernels are built (LLVM IR, not
// optimized), and the array allocas each builds are summed: on every target
// at most mlcc_stack_node_bytes, on the largest exactly it, and the report
// is the same before and after packing for any target (the header is
// target-independent).
#include "targets/codegen/stack.h"
#include "targets/kernels/conv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "targets/llvm/llvm_ctx.h"
#include "targets/kernels/pack.h"
#include "test.h"

// The targets of stack.c's kTargets, as the driver resolves them.
static const struct {
  const char* name;
  const char* features;
} kTargets[] = {
    {"x86", NULL}, {"x86", "+avx512f"}, {"aarch64", NULL}, {"riscv", NULL}, {"riscv", "+v"},
};
enum { kNumTargets = sizeof(kTargets) / sizeof(kTargets[0]) };

static int64_t type_bytes(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
    case LLVMArrayTypeKind:
      return (int64_t)LLVMGetArrayLength(t) * type_bytes(LLVMGetElementType(t));
    case LLVMVectorTypeKind:
      return (int64_t)LLVMGetVectorSize(t) * type_bytes(LLVMGetElementType(t));
    case LLVMFloatTypeKind: return 4;
    case LLVMDoubleTypeKind: return 8;
    case LLVMIntegerTypeKind: return (LLVMGetIntTypeWidth(t) + 7) / 8;
    case LLVMPointerTypeKind: return 8;
    default: return 8;
  }
}

// Bytes of the array allocas of every function in |m| larger than 128 bytes
// (stack buffers; smaller arrays are the epilogues' lane slots, in the
// kernel margin).
static int64_t buffer_bytes(LLVMModuleRef m) {
  int64_t total = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f != NULL; f = LLVMGetNextFunction(f)) {
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b != NULL; b = LLVMGetNextBasicBlock(b)) {
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i != NULL; i = LLVMGetNextInstruction(i)) {
        if (!LLVMIsAAllocaInst(i)) continue;
        LLVMTypeRef t = LLVMGetAllocatedType(i);
        int64_t n = type_bytes(t);
        if (LLVMGetTypeKind(t) == LLVMArrayTypeKind && n > 128) total += n;
      }
    }
  }
  return total;
}

typedef struct conv_case_t {
  const char* what;
  int64_t c, h, w, m, k, stride, pad, group;
  bool want_buffer;  // some target allocates a stack buffer
} conv_case_t;

static uint32_t rng = 12345;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xFFFF) / 65536.0f - 0.5f;
}

// Builds y = Conv(x, W, B) in a new graph with one kernel.
static mlcc_graph_t* conv_graph(const conv_case_t* t, mlcc_node_t** out_node) {
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  *out_node = NULL;
  if (g == NULL) return NULL;
  int64_t oh = (t->h + 2 * t->pad - t->k) / t->stride + 1;
  int64_t ow = (t->w + 2 * t->pad - t->k) / t->stride + 1;
  mlcc_value_t *x = NULL, *y = NULL, *w = NULL, *b = NULL;
  CHECK_OK(mlcc_graph_add_value(g, "x", MLCC_VALUE_INPUT, &x));
  CHECK_OK(mlcc_graph_add_value(g, "y", MLCC_VALUE_INTERMEDIATE, &y));
  mlcc_shape_t xs = {4, {1, t->c, t->h, t->w}}, ys = {4, {1, t->m, oh, ow}};
  mlcc_shape_t ws = {4, {t->m, t->c / t->group, t->k, t->k}}, bs = {1, {t->m}};
  x->dtype = y->dtype = MLCC_DTYPE_F32;
  x->shape = xs;
  y->shape = ys;
  x->shape_known = y->shape_known = true;
  int64_t wn = ws.dims[0] * ws.dims[1] * ws.dims[2] * ws.dims[3];
  float* wd = malloc((size_t)wn * sizeof(float));
  float* bd = malloc((size_t)t->m * sizeof(float));
  for (int64_t i = 0; wd && i < wn; ++i) wd[i] = frand();
  for (int64_t i = 0; bd && i < t->m; ++i) bd[i] = frand();
  CHECK_OK(mlcc_graph_add_constant(g, "w", MLCC_DTYPE_F32, &ws, wd, true, &w));
  CHECK_OK(mlcc_graph_add_constant(g, "b", MLCC_DTYPE_F32, &bs, bd, true, &b));
  free(wd);
  free(bd);
  int64_t* ks = mlcc_arena_alloc(&g->arena, 2 * sizeof(int64_t), 8);
  int64_t* pads = mlcc_arena_alloc(&g->arena, 4 * sizeof(int64_t), 8);
  int64_t* st = mlcc_arena_alloc(&g->arena, 2 * sizeof(int64_t), 8);
  ks[0] = ks[1] = t->k;
  pads[0] = pads[1] = pads[2] = pads[3] = t->pad;
  st[0] = st[1] = t->stride;
  mlcc_attr_t attrs[4] = {
      {.name = "kernel_shape", .kind = MLCC_ATTR_INTS, .count = 2, .ints = ks},
      {.name = "pads", .kind = MLCC_ATTR_INTS, .count = 4, .ints = pads},
      {.name = "strides", .kind = MLCC_ATTR_INTS, .count = 2, .ints = st},
      {.name = "group", .kind = MLCC_ATTR_INT, .i = t->group},
  };
  mlcc_value_t* ins[3] = {x, w, b};
  mlcc_node_t* conv = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONV, 13, "conv", ins, 3, &y, 1, attrs, 4, &conv));
  g->inputs = mlcc_arena_alloc(&g->arena, sizeof(mlcc_value_t*), 8);
  g->outputs = mlcc_arena_alloc(&g->arena, sizeof(mlcc_value_t*), 8);
  g->inputs[0] = x;
  g->outputs[0] = y;
  g->n_inputs = g->n_outputs = 1;
  y->is_output = true;
  g->kernels = mlcc_arena_alloc(&g->arena, sizeof(mlcc_kernel_t), 8);
  g->n_kernels = 1;
  memset(g->kernels, 0, sizeof(mlcc_kernel_t));
  g->kernels[0].n_nodes = 1;
  g->kernels[0].nodes = mlcc_arena_alloc(&g->arena, sizeof(mlcc_node_t*), 8);
  g->kernels[0].nodes[0] = conv;
  g->kernels[0].carried_input = mlcc_arena_alloc(&g->arena, sizeof(uint32_t), 8);
  g->kernels[0].carried_input[0] = 0;
  if (conv != NULL) conv->kernel = 0;
  *out_node = conv;
  return g;
}

// The stack buffers |t|'s kernel allocates on target |ti| (after packing),
// and the node's report before and after packing.
static int64_t built_buffers(const conv_case_t* t, int ti, int64_t* report_onnx,
                             int64_t* report_packed) {
  mlcc_node_t* conv = NULL;
  mlcc_graph_t* g = conv_graph(t, &conv);
  if (g == NULL || conv == NULL) return -1;
  mlcc_target_t target;
  CHECK_OK(mlcc_target_resolve(kTargets[ti].name, NULL, kTargets[ti].features, &target));
  *report_onnx = mlcc_stack_node_bytes(conv);
  mlcc_pass_ctx_t pctx;
  memset(&pctx, 0, sizeof(pctx));
  pctx.opt_level = 2;
  pctx.target = &target;
  bool changed = false;
  CHECK_OK(mlcc_pass_pack_weights(&pctx, g, &changed));
  *report_packed = mlcc_stack_node_bytes(conv);
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("stack", c);
  LLVMValueRef fn = NULL;
  CHECK_OK(mlcc_codegen_build_kernel_fn(c, m, &target, &g->kernels[0], "k", &fn));
  int64_t bytes = buffer_bytes(m);
  LLVMDisposeModule(m);
  LLVMContextDispose(c);
  mlcc_graph_destroy(g);
  return bytes;
}

static void check_conv(const conv_case_t* t) {
  int64_t largest = 0, report = -1;
  for (int ti = 0; ti < kNumTargets; ++ti) {
    int64_t onnx = 0, packed = 0;
    int64_t built = built_buffers(t, ti, &onnx, &packed);
    if (report < 0) report = onnx;
    if (built > largest) largest = built;
    if (onnx != report || packed != report || built > report) {
      fprintf(stderr, "  %s on %s%s: built %lld bytes, report %lld (packed %lld, first %lld)\n",
              t->what, kTargets[ti].name, kTargets[ti].features ? kTargets[ti].features : "",
              (long long)built, (long long)onnx, (long long)packed, (long long)report);
    }
    CHECK_EQ_INT(onnx, report);
    CHECK_EQ_INT(packed, report);
    CHECK(built <= report);
  }
  CHECK_EQ_INT(largest, report);
  CHECK(t->want_buffer ? report > 0 : report == 0);
}

static void test_conv_reports(void) {
  static const conv_case_t cases[] = {
      // Winograd on every target (resnet18 layer2: its largest panels).
      {"wino 128x28x28", 128, 28, 28, 128, 3, 1, 1, 1, true},
      // Winograd with a small U (squeezenet's expand3x3).
      {"wino 16x55x55", 16, 55, 55, 64, 3, 1, 1, 1, true},
      // Stride 2: the pixel-vector kernel's gathered tile panel.
      {"panel 64x28x28 s2", 64, 28, 28, 64, 3, 2, 1, 1, true},
      // resnet18's 7x7 stem.
      {"stem 3x56x56 7x7 s2", 3, 56, 56, 64, 7, 2, 3, 1, true},
      // Depthwise: vectors only.
      {"depthwise 32x14x14", 32, 14, 14, 32, 3, 1, 1, 32, false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) check_conv(&cases[i]);
}

// The whole-model bound: entry margin, the widest argument block and the
// largest kernel, in KiB.
static void test_model_bound(void) {
  conv_case_t t = {"wino", 128, 28, 28, 128, 3, 1, 1, 1, true};
  mlcc_node_t* conv = NULL;
  mlcc_graph_t* g = conv_graph(&t, &conv);
  if (g == NULL || conv == NULL) return;
  int64_t node = mlcc_stack_node_bytes(conv);
  int64_t kernel = mlcc_stack_kernel_bytes(&g->kernels[0]);
  CHECK_EQ_INT(kernel, node + MLCC_STACK_KERNEL_MARGIN);
  int64_t total = mlcc_stack_size(g);
  // 4 kernel arguments: x, w, b, y.
  CHECK_EQ_INT(total, (MLCC_STACK_ENTRY_MARGIN + 4 * 8 + kernel + 1023) / 1024 * 1024);
  CHECK(total % 1024 == 0);
  mlcc_graph_destroy(g);
  // No kernels: the entry alone.
  CHECK_OK(mlcc_graph_create(&g));
  CHECK_EQ_INT(mlcc_stack_size(g), (MLCC_STACK_ENTRY_MARGIN + 1023) / 1024 * 1024);
  mlcc_graph_destroy(g);
}

// A microcontroller's own bound: scalar kernels (cortex-m4, rv32) have no
// panels, so the direct stride-2 conv's bound is the margins alone; a Linux
// target gets the target-independent bound; graph->stack_size overrides.
static void test_mcu_bound(void) {
  conv_case_t t = {"panel 64x28x28 s2", 64, 28, 28, 64, 3, 2, 1, 1, true};
  mlcc_node_t* conv = NULL;
  mlcc_graph_t* g = conv_graph(&t, &conv);
  if (g == NULL || conv == NULL) return;
  int64_t any = mlcc_stack_size(g);
  mlcc_target_t m4, x86;
  CHECK_OK(mlcc_target_resolve("cortex-m4", NULL, NULL, &m4));
  CHECK_OK(mlcc_target_resolve("x86", NULL, NULL, &x86));
  CHECK_EQ_INT(mlcc_stack_size_for_target(g, &x86), any);
  CHECK_EQ_INT(mlcc_conv_stack_bytes(conv, &m4), 0);
  int64_t mcu = mlcc_stack_size_for_target(g, &m4);
  CHECK_EQ_INT(mcu, (MLCC_STACK_MCU_ENTRY_MARGIN + 4 * 4 + MLCC_STACK_MCU_KERNEL_MARGIN + 255) /
                        256 * 256);
  CHECK(mcu < any);
  g->stack_size = mcu;
  CHECK_EQ_INT(mlcc_stack_size(g), mcu);
  mlcc_graph_destroy(g);
}

int main(void) {
  mlcc_llvm_init();
  RUN(test_conv_reports);
  RUN(test_model_bound);
  RUN(test_mcu_bound);
  return TEST_EXIT();
}

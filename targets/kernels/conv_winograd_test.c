// SPDX-License-Identifier: Apache-2.0
// Tests for the Winograd Conv kernel (targets/kernels/conv_winograd.c) and its weight layout
// (pack.h, passes/pack_weights.c): Conv kernels (with fused Relu / residual
// Add epilogues) are built for targets with 4, 8 and 16 float lanes,
// JIT-compiled for the host, run over their parallel units in several range
// splits, and compared with a direct convolution in double on random data.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "targets/codegen/codegen.h"
#include "targets/emit/emit.h"
#include "targets/kernels/conv_winograd.h"
#include "targets/llvm/llvm_ctx.h"
#include "targets/kernels/pack.h"
#include "test.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static uint32_t rng_state = 2024;
static float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

enum { kPostNone = 0, kPostRelu, kPostAdd, kPostAddRelu };

typedef struct wcase_t {
  int64_t n, c, h, w, m;
  int64_t pads[4];  // top, left, bottom, right
  bool bias;
  int post;
  int tile;          // Winograd m: 2 or 4
  int vector_bytes;  // target lanes * 4
} wcase_t;

static int64_t out_h(const wcase_t* t) { return t->h + t->pads[0] + t->pads[2] - 2; }
static int64_t out_w(const wcase_t* t) { return t->w + t->pads[1] + t->pads[3] - 2; }

// Direct 3x3 stride-1 convolution in double plus bias and epilogue.
static void reference(const wcase_t* t, const float* x, const float* w, const float* b,
                      const float* r, double* y) {
  int64_t oh = out_h(t), ow = out_w(t);
  for (int64_t n = 0; n < t->n; ++n) {
    for (int64_t oc = 0; oc < t->m; ++oc) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double acc = t->bias ? b[oc] : 0.0;
          for (int64_t ic = 0; ic < t->c; ++ic) {
            for (int kh = 0; kh < 3; ++kh) {
              int64_t ih = i - t->pads[0] + kh;
              if (ih < 0 || ih >= t->h) continue;
              for (int kw = 0; kw < 3; ++kw) {
                int64_t iw = j - t->pads[1] + kw;
                if (iw < 0 || iw >= t->w) continue;
                acc += (double)x[((n * t->c + ic) * t->h + ih) * t->w + iw] *
                       (double)w[((oc * t->c + ic) * 3 + kh) * 3 + kw];
              }
            }
          }
          int64_t yi = ((n * t->m + oc) * oh + i) * ow + j;
          if (t->post == kPostAdd || t->post == kPostAddRelu) acc += r[yi];
          if ((t->post == kPostRelu || t->post == kPostAddRelu) && acc < 0) acc = 0;
          y[yi] = acc;
        }
      }
    }
  }
}

static mlcc_value_t* value(mlcc_graph_t* g, const char* name, mlcc_value_kind_t kind, int rank,
                           const int64_t* dims) {
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_value(g, name, kind, &v));
  if (v == NULL) return NULL;
  v->dtype = MLCC_DTYPE_F32;
  v->shape.rank = rank;
  for (int i = 0; i < rank; ++i) v->shape.dims[i] = dims[i];
  v->shape_known = true;
  return v;
}

static mlcc_value_t* constant(mlcc_graph_t* g, const char* name, int rank, const int64_t* dims,
                              const float* data) {
  mlcc_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = rank;
  for (int i = 0; i < rank; ++i) s.dims[i] = dims[i];
  mlcc_value_t* v = NULL;
  CHECK_OK(mlcc_graph_add_constant(g, name, MLCC_DTYPE_F32, &s, data, true, &v));
  return v;
}

static void jit_init(void) {
  static bool done = false;
  if (done) return;
  done = true;
  mlcc_llvm_init();
  LLVMLinkInMCJIT();
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
}

// A host-runnable target whose vector width is |vector_bytes| (the kernel's
// plan follows it; LLVM legalizes the wider vectors on a baseline CPU).
static mlcc_target_t host_target(int vector_bytes) {
  mlcc_target_t t;
  memset(&t, 0, sizeof(t));
  CHECK_OK(mlcc_target_resolve(NULL, NULL, NULL, &t));
  char* def = LLVMGetDefaultTargetTriple();
  char* norm = LLVMNormalizeTargetTriple(def);
  snprintf(t.triple, sizeof(t.triple), "%s", norm);
  LLVMDisposeMessage(def);
  LLVMDisposeMessage(norm);
  if (t.arch == MLCC_ARCH_X86_64) {
    snprintf(t.cpu, sizeof(t.cpu), "x86-64");
    t.features[0] = '\0';
  }
  t.vector_bytes = vector_bytes;
  return t;
}

// JIT-compiles |kernel| for |target| and runs it on |bufs| (one pointer per
// kernel argument) over its parallel units in |nsplit| ranges, last range
// first. Returns the unit count (0: not parallel, run whole).
static int64_t run_kernel(const mlcc_kernel_t* kernel, const mlcc_target_t* target, void** bufs,
                          int nsplit) {
  jit_init();
  int64_t units = mlcc_emit_parallel_units(kernel, target);
  uint32_t n_args = mlcc_kernel_args(kernel, NULL, 0);
  LLVMTargetMachineRef tm = NULL;
  CHECK_OK(mlcc_llvm_target_machine(target, 2, &tm));
  if (tm == NULL) return -1;
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("wino_test", c);
  mlcc_llvm_set_module_target(mod, tm);
  LLVMValueRef fn = NULL;
  mlcc_status_t s = mlcc_codegen_build_kernel_fn(c, mod, target, kernel, "wk", &fn);
  CHECK_OK(s);
  if (fn == NULL) {
    LLVMDisposeModule(mod);
    LLVMContextDispose(c);
    LLVMDisposeTargetMachine(tm);
    return -1;
  }
  // void wrapper(ptr args, i64 begin, i64 end): calls wk_r (or wk).
  LLVMTypeRef t_ptr = LLVMPointerTypeInContext(c, 0), t_i64 = LLVMInt64TypeInContext(c);
  LLVMTypeRef wparams[3] = {t_ptr, t_i64, t_i64};
  LLVMValueRef wrap =
      LLVMAddFunction(mod, "wrap", LLVMFunctionType(LLVMVoidTypeInContext(c), wparams, 3, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, wrap, "entry"));
  LLVMValueRef cargs[16];
  LLVMTypeRef ctys[16];
  for (uint32_t i = 0; i < n_args; ++i) {
    LLVMValueRef idx = LLVMConstInt(t_i64, i, 0);
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t_ptr, LLVMGetParam(wrap, 0), &idx, 1, "");
    cargs[i] = LLVMBuildLoad2(b, t_ptr, slot, "");
    ctys[i] = t_ptr;
  }
  uint32_t nc = n_args;
  LLVMValueRef callee = fn;
  if (units > 0) {
    callee = LLVMGetNamedFunction(mod, "wk_r");
    cargs[nc] = LLVMGetParam(wrap, 1);
    ctys[nc++] = t_i64;
    cargs[nc] = LLVMGetParam(wrap, 2);
    ctys[nc++] = t_i64;
    LLVMSetLinkage(callee, LLVMExternalLinkage);
    LLVMSetVisibility(callee, LLVMDefaultVisibility);
  }
  LLVMBuildCall2(b, LLVMFunctionType(LLVMVoidTypeInContext(c), ctys, nc, 0), callee, cargs, nc,
                 "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  CHECK_OK(mlcc_llvm_verify(mod, "winograd test"));
  CHECK_OK(mlcc_llvm_optimize(mod, tm, 2));
  LLVMDisposeTargetMachine(tm);
  struct LLVMMCJITCompilerOptions opts;
  LLVMInitializeMCJITCompilerOptions(&opts, sizeof(opts));
  opts.OptLevel = 2;
  LLVMExecutionEngineRef ee = NULL;
  char* err = NULL;
  if (LLVMCreateMCJITCompilerForModule(&ee, mod, &opts, sizeof(opts), &err)) {
    fprintf(stderr, "JIT: %s\n", err ? err : "?");
    LLVMDisposeMessage(err);
    CHECK(false);
    LLVMDisposeModule(mod);
    LLVMContextDispose(c);
    return -1;
  }
  void (*w)(void**, int64_t, int64_t) =
      (void (*)(void**, int64_t, int64_t))(uintptr_t)LLVMGetFunctionAddress(ee, "wrap");
  CHECK(w != NULL);
  if (w != NULL) {
    if (units <= 0) {
      w(bufs, 0, 0);
    } else {
      for (int k = nsplit - 1; k >= 0; --k) w(bufs, units * k / nsplit, units * (k + 1) / nsplit);
    }
  }
  LLVMDisposeExecutionEngine(ee);
  LLVMContextDispose(c);
  return units;
}

// Builds the case's Conv (+ epilogue) with W either packed here in the
// Winograd layout (|via_pass| false) or by the pack-weights pass, runs it
// and compares with the reference. |rtol| is relative to max|ref|.
static void run_case(const wcase_t* t, bool via_pass, int nsplit, double rtol) {
  int64_t oh = out_h(t), ow = out_w(t);
  int64_t nx = t->n * t->c * t->h * t->w, nw = t->m * t->c * 9, ny = t->n * t->m * oh * ow;
  float* x = malloc((size_t)nx * sizeof(float));
  float* w = malloc((size_t)nw * sizeof(float));
  float* bias = malloc((size_t)t->m * sizeof(float));
  float* r = malloc((size_t)ny * sizeof(float));
  float* y = malloc((size_t)ny * sizeof(float));
  double* ref = malloc((size_t)ny * sizeof(double));
  CHECK(x && w && bias && r && y && ref);
  if (!x || !w || !bias || !r || !y || !ref) return;
  for (int64_t i = 0; i < nx; ++i) x[i] = frand();
  for (int64_t i = 0; i < nw; ++i) w[i] = frand() / sqrtf((float)(9 * t->c));
  for (int64_t i = 0; i < t->m; ++i) bias[i] = frand();
  for (int64_t i = 0; i < ny; ++i) r[i] = frand();
  for (int64_t i = 0; i < ny; ++i) y[i] = NAN;
  reference(t, x, w, bias, r, ref);

  mlcc_target_t target = host_target(t->vector_bytes);
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  int64_t xd[4] = {t->n, t->c, t->h, t->w}, yd[4] = {t->n, t->m, oh, ow};
  int64_t wd[4] = {t->m, t->c, 3, 3}, bd[1] = {t->m};
  mlcc_value_t* xv = value(g, "x", MLCC_VALUE_INPUT, 4, xd);
  mlcc_value_t* cv = value(g, "c", MLCC_VALUE_INTERMEDIATE, 4, yd);
  int64_t mr = 0, tile = t->tile;
  mlcc_value_t* wv = NULL;
  if (via_pass) {
    wv = constant(g, "w", 4, wd, w);
  } else {
    // The layout the pass would record, for the requested tile size.
    mr = tile == 4 ? 9 : 13;
    if (t->m < mr) mr = t->m;
    int64_t a = tile + 2, pd[4] = {t->m, t->c, a, a};
    float* u = malloc((size_t)(a * a * t->m * t->c) * sizeof(float));
    CHECK(u != NULL);
    if (u == NULL) return;
    mlcc_conv_winograd_pack_weights(w, t->m, t->c, tile, mr, u);
    wv = constant(g, "w", 4, pd, u);
    free(u);
  }
  mlcc_value_t* ins[3] = {xv, wv, t->bias ? constant(g, "b", 1, bd, bias) : NULL};
  int64_t ks[2] = {3, 3}, st[2] = {1, 1}, lay[2] = {tile, mr};
  mlcc_attr_t attrs[4] = {
      {.name = "kernel_shape", .kind = MLCC_ATTR_INTS, .count = 2, .ints = ks},
      {.name = "pads", .kind = MLCC_ATTR_INTS, .count = 4, .ints = t->pads},
      {.name = "strides", .kind = MLCC_ATTR_INTS, .count = 2, .ints = st},
      {.name = MLCC_CONV_WINOGRAD_ATTR, .kind = MLCC_ATTR_INTS, .count = 2, .ints = lay},
  };
  mlcc_node_t* conv = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONV, 13, "conv", ins, t->bias ? 3 : 2, &cv, 1, attrs,
                               via_pass ? 3 : 4, &conv));
  if (conv == NULL) return;
  if (via_pass) {
    mlcc_pass_ctx_t pctx;
    memset(&pctx, 0, sizeof(pctx));
    pctx.opt_level = 2;
    pctx.target = &target;
    bool changed = false;
    CHECK_OK(mlcc_pass_pack_weights(&pctx, g, &changed));
    CHECK(changed);
    CHECK(mlcc_conv_is_winograd(conv));
    const mlcc_value_t* pw = mlcc_node_input(conv, 1);
    CHECK(pw != wv && pw->shape.rank == 4 && pw->shape.dims[2] == pw->shape.dims[3] &&
          (pw->shape.dims[2] == 4 || pw->shape.dims[2] == 6));
  }
  mlcc_node_t* nodes[3] = {conv, NULL, NULL};
  uint32_t carried[3] = {0, 0, 0};
  uint32_t nn = 1;
  mlcc_value_t* last = cv;
  if (t->post == kPostAdd || t->post == kPostAddRelu) {
    mlcc_value_t* sv = value(g, "s", MLCC_VALUE_INTERMEDIATE, 4, yd);
    mlcc_value_t* add_in[2] = {last, constant(g, "r", 4, yd, r)};
    CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_ADD, 14, "add", add_in, 2, &sv, 1, NULL, 0,
                                 &nodes[nn]));
    ++nn;
    last = sv;
  }
  if (t->post == kPostRelu || t->post == kPostAddRelu) {
    mlcc_value_t* rv = value(g, "y", MLCC_VALUE_INTERMEDIATE, 4, yd);
    CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_RELU, 14, "relu", &last, 1, &rv, 1, NULL, 0,
                                 &nodes[nn]));
    ++nn;
    last = rv;
  }
  mlcc_kernel_t kernel = {nn, nodes, carried};
  const mlcc_value_t* args[8];
  uint32_t n_args = mlcc_kernel_args(&kernel, args, 8);
  CHECK(n_args <= 8);
  void* bufs[8];
  for (uint32_t i = 0; i < n_args && i < 8; ++i) {
    if (args[i] == last) bufs[i] = y;
    else if (args[i] == xv) bufs[i] = x;
    else bufs[i] = (void*)args[i]->data;
  }
  int64_t units = run_kernel(&kernel, &target, bufs, nsplit);
  CHECK(units != -1);
  double scale = 0.0;
  for (int64_t i = 0; i < ny; ++i) scale = fmax(scale, fabs(ref[i]));
  double worst = 0.0;
  int64_t at = 0;
  for (int64_t i = 0; i < ny; ++i) {
    double e = isnan(y[i]) ? INFINITY : fabs((double)y[i] - ref[i]);
    if (e > worst) {
      worst = e;
      at = i;
    }
  }
  if (!(worst <= rtol * scale)) {
    fprintf(stderr,
            "F(%d) N%lld C%lld %lldx%lld M%lld pads %lld,%lld,%lld,%lld post %d lanes %d: "
            "max err %g at %lld (got %g, want %g), scale %g\n",
            t->tile, (long long)t->n, (long long)t->c, (long long)t->h, (long long)t->w,
            (long long)t->m, (long long)t->pads[0], (long long)t->pads[1],
            (long long)t->pads[2], (long long)t->pads[3], t->post, t->vector_bytes / 4, worst,
            (long long)at, y[at], ref[at], scale);
    CHECK(false);
  }
  mlcc_graph_destroy(g);
  free(x);
  free(w);
  free(bias);
  free(r);
  free(y);
  free(ref);
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

// Max error relative to max|ref| (inputs in [-1, 1), fan-in-scaled
// weights): F(2x2) rounds like a direct conv; F(4x4)'s transforms (factors up
// to 8 and 1/24) lose about one more digit.
static const double kTol2 = 2e-6, kTol4 = 2e-5;

static void test_shapes_f2(void) {
  static const wcase_t cases[] = {
      {1, 16, 8, 8, 16, {1, 1, 1, 1}, true, kPostNone, 2, 64},
      {1, 8, 9, 13, 20, {0, 0, 0, 0}, false, kPostRelu, 2, 64},
      {2, 12, 11, 7, 33, {2, 1, 0, 3}, true, kPostAdd, 2, 64},
      {1, 8, 5, 40, 12, {1, 1, 1, 1}, true, kPostAddRelu, 2, 64},
      {1, 20, 3, 3, 17, {1, 1, 1, 1}, true, kPostNone, 2, 64},
      {1, 16, 4, 37, 16, {3, 3, 3, 3}, false, kPostRelu, 2, 64},
      {1, 10, 14, 14, 24, {1, 1, 1, 1}, true, kPostRelu, 2, 32},
      {1, 9, 7, 23, 11, {0, 2, 1, 0}, true, kPostAdd, 2, 32},
      {1, 8, 10, 6, 9, {1, 1, 1, 1}, true, kPostAddRelu, 2, 16},
      {3, 5, 6, 6, 7, {1, 0, 1, 0}, false, kPostNone, 2, 16},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) run_case(&cases[i], false, 3, kTol2);
}

static void test_shapes_f4(void) {
  static const wcase_t cases[] = {
      {1, 16, 12, 12, 16, {1, 1, 1, 1}, true, kPostRelu, 4, 64},
      {1, 8, 9, 13, 20, {0, 0, 0, 0}, false, kPostNone, 4, 64},
      {2, 12, 11, 7, 33, {2, 1, 0, 3}, true, kPostAdd, 4, 64},
      {1, 8, 6, 70, 12, {1, 1, 1, 1}, true, kPostAddRelu, 4, 64},
      {1, 20, 3, 3, 17, {1, 1, 1, 1}, true, kPostNone, 4, 64},
      {1, 10, 13, 13, 24, {1, 1, 1, 1}, true, kPostRelu, 4, 32},
      {1, 9, 7, 23, 11, {0, 2, 1, 0}, true, kPostAdd, 4, 32},
      {1, 8, 10, 6, 9, {1, 1, 1, 1}, true, kPostAddRelu, 4, 16},
      {2, 5, 17, 5, 7, {2, 2, 2, 2}, false, kPostNone, 4, 16},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) run_case(&cases[i], false, 3, kTol4);
}

// Range splits: every split of the units computes the same output.
static void test_range_splits(void) {
  wcase_t t = {2, 16, 20, 20, 40, {1, 1, 1, 1}, true, kPostRelu, 2, 64};
  for (int nsplit = 1; nsplit <= 7; nsplit += 3) run_case(&t, false, nsplit, kTol2);
  t.tile = 4;
  for (int nsplit = 2; nsplit <= 8; nsplit += 3) run_case(&t, false, nsplit, kTol4);
}

// The pack-weights pass picks the Winograd layout for a large 3x3 conv and
// the kernel it feeds computes the conv.
static void test_pass_chooses_winograd(void) {
  wcase_t t = {1, 64, 28, 28, 64, {1, 1, 1, 1}, true, kPostAddRelu, 0, 64};
  run_case(&t, true, 2, kTol4);
}

// The heuristic leaves small or unsuitable convs to the direct kernels.
static void test_choose_rejects(void) {
  mlcc_target_t target = host_target(64);
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  struct {
    int64_t c, h, m, stride;
  } cases[] = {{4, 56, 64, 1}, {64, 2, 64, 1}, {64, 56, 64, 2}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    int64_t c = cases[i].c, h = cases[i].h, m = cases[i].m, s = cases[i].stride;
    int64_t oh = (h + 2 - 3) / s + 1;
    int64_t xd[4] = {1, c, h, h}, yd[4] = {1, m, oh, oh}, wd[4] = {m, c, 3, 3};
    float* w = calloc((size_t)(m * c * 9), sizeof(float));
    char name[16];
    snprintf(name, sizeof(name), "x%zu", i);
    mlcc_value_t* xv = value(g, name, MLCC_VALUE_INPUT, 4, xd);
    snprintf(name, sizeof(name), "y%zu", i);
    mlcc_value_t* yv = value(g, name, MLCC_VALUE_INTERMEDIATE, 4, yd);
    snprintf(name, sizeof(name), "w%zu", i);
    mlcc_value_t* ins[2] = {xv, constant(g, name, 4, wd, w)};
    free(w);
    int64_t pads[4] = {1, 1, 1, 1}, st[2] = {s, s};
    mlcc_attr_t attrs[2] = {{.name = "pads", .kind = MLCC_ATTR_INTS, .count = 4, .ints = pads},
                            {.name = "strides", .kind = MLCC_ATTR_INTS, .count = 2, .ints = st}};
    mlcc_node_t* conv = NULL;
    CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONV, 13, "conv", ins, 2, &yv, 1, attrs, 2, &conv));
    int64_t tm = 0, mr = 0;
    CHECK(!mlcc_conv_winograd_choose(conv, &target, &tm, &mr));
    CHECK_EQ_INT(tm, 0);
  }
  mlcc_graph_destroy(g);
}

// A layout that does not match the node is an error, not a crash.
static void test_bad_layout(void) {
  jit_init();
  mlcc_graph_t* g = NULL;
  CHECK_OK(mlcc_graph_create(&g));
  int64_t xd[4] = {1, 8, 6, 6}, yd[4] = {1, 8, 6, 6}, wd[4] = {8, 8, 3, 3};
  float w[8 * 8 * 9] = {0};
  mlcc_value_t* xv = value(g, "x", MLCC_VALUE_INPUT, 4, xd);
  mlcc_value_t* yv = value(g, "y", MLCC_VALUE_INTERMEDIATE, 4, yd);
  mlcc_value_t* ins[2] = {xv, constant(g, "w", 4, wd, w)};  // ONNX layout, not U
  int64_t pads[4] = {1, 1, 1, 1}, lay[2] = {2, 8};
  mlcc_attr_t attrs[2] = {{.name = "pads", .kind = MLCC_ATTR_INTS, .count = 4, .ints = pads},
                          {.name = MLCC_CONV_WINOGRAD_ATTR, .kind = MLCC_ATTR_INTS, .count = 2,
                           .ints = lay}};
  mlcc_node_t* conv = NULL;
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_CONV, 13, "conv", ins, 2, &yv, 1, attrs, 2, &conv));
  mlcc_target_t target = host_target(32);
  mlcc_node_t* nodes[1] = {conv};
  uint32_t carried[1] = {0};
  mlcc_kernel_t kernel = {1, nodes, carried};
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("bad", c);
  LLVMValueRef fn = NULL;
  mlcc_status_t s = mlcc_codegen_build_kernel_fn(c, mod, &target, &kernel, "bad", &fn);
  CHECK(s != NULL && mlcc_status_code(s) == MLCC_STATUS_INVALID_MODEL);
  mlcc_status_free(s);
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_shapes_f2);
  RUN(test_shapes_f4);
  RUN(test_range_splits);
  RUN(test_pass_chooses_winograd);
  RUN(test_choose_rejects);
  RUN(test_bad_layout);
  return TEST_EXIT();
}

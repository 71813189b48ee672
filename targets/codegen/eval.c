// SPDX-License-Identifier: Apache-2.0
// Constant folding through the kernel emitters: a one-node kernel is
// JIT-compiled for the host with MCJIT and run on the constant inputs, so
// folding and generated code share one implementation of every op.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include "ir/dtype.h"
#include "targets/codegen/codegen.h"
#include "targets/emit/emit.h"
#include "targets/llvm/llvm_ctx.h"

static pthread_mutex_t eval_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t jit_once = PTHREAD_ONCE_INIT;

static void jit_init_once(void) {
  mlcc_llvm_init();
  LLVMLinkInMCJIT();
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
}

// The host target with a baseline CPU so the JIT never uses instructions the
// machine lacks.
static mlcc_status_t host_target(mlcc_target_t* out) {
  MLCC_RETURN_IF_ERROR(mlcc_target_resolve(NULL, NULL, NULL, out));
  char* def = LLVMGetDefaultTargetTriple();
  char* norm = LLVMNormalizeTargetTriple(def);
  snprintf(out->triple, sizeof(out->triple), "%s", norm);
  LLVMDisposeMessage(def);
  LLVMDisposeMessage(norm);
  switch (out->arch) {
    case MLCC_ARCH_X86_64: {
      snprintf(out->cpu, sizeof(out->cpu), "x86-64");
      // F16C keeps half<->float conversions inline: without it they become
      // libgcc calls that MCJIT may fail to resolve (a fatal error). It does
      // not change arithmetic results, so folding stays machine-independent.
      char* host = LLVMGetHostCPUFeatures();
      snprintf(out->features, sizeof(out->features), "%s",
               strstr(host, "+f16c") ? "+f16c" : "");
      LLVMDisposeMessage(host);
      break;
    }
    case MLCC_ARCH_AARCH64: snprintf(out->cpu, sizeof(out->cpu), "generic"); break;
    case MLCC_ARCH_RISCV64: snprintf(out->cpu, sizeof(out->cpu), "generic-rv64"); break;
    default: break;
  }
  return mlcc_ok_status();
}

// void mlcc_eval_wrapper(ptr args): calls |kernel_fn| with args[0..n).
static LLVMValueRef build_wrapper(LLVMContextRef c, LLVMModuleRef m, LLVMValueRef kernel_fn,
                                  uint32_t n) {
  LLVMTypeRef t_ptr = LLVMPointerTypeInContext(c, 0);
  LLVMTypeRef t_i64 = LLVMInt64TypeInContext(c);
  LLVMTypeRef wty = LLVMFunctionType(LLVMVoidTypeInContext(c), &t_ptr, 1, 0);
  LLVMValueRef w = LLVMAddFunction(m, "mlcc_eval_wrapper", wty);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, w, "entry"));
  LLVMValueRef* args = calloc(n ? n : 1, sizeof(*args));
  LLVMTypeRef* params = calloc(n ? n : 1, sizeof(*params));
  if (args == NULL || params == NULL) {
    free(args);
    free(params);
    LLVMDisposeBuilder(b);
    return NULL;
  }
  for (uint32_t i = 0; i < n; ++i) {
    LLVMValueRef idx = LLVMConstInt(t_i64, i, 0);
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t_ptr, LLVMGetParam(w, 0), &idx, 1, "slot");
    args[i] = LLVMBuildLoad2(b, t_ptr, slot, "arg");
    params[i] = t_ptr;
  }
  LLVMTypeRef kty = LLVMFunctionType(LLVMVoidTypeInContext(c), params, n, 0);
  LLVMBuildCall2(b, kty, kernel_fn, args, n, "");
  LLVMBuildRetVoid(b);
  free(args);
  free(params);
  LLVMDisposeBuilder(b);
  return w;
}

static mlcc_status_t check_node(const mlcc_node_t* node) {
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    const mlcc_value_t* v = node->inputs[i];
    if (v == NULL) continue;
    if (v->kind != MLCC_VALUE_CONSTANT || (v->data == NULL && mlcc_value_byte_size(v) != 0)) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "input %u ('%s') is not a constant", i,
                              v->name ? v->name : "?");
    }
  }
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    const mlcc_value_t* v = node->outputs[i];
    if (v != NULL && (!v->shape_known || !mlcc_dtype_is_valid(v->dtype))) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "output %u ('%s') is not inferred", i,
                              v->name ? v->name : "?");
    }
  }
  return mlcc_ok_status();
}

static mlcc_status_t eval_locked(mlcc_graph_t* graph, mlcc_node_t* node,
                                 int32_t vector_bytes) {
  MLCC_RETURN_IF_ERROR(check_node(node));
  mlcc_target_t target;
  MLCC_RETURN_IF_ERROR(host_target(&target));
  if (vector_bytes > 0) target.vector_bytes = vector_bytes;
  mlcc_node_t* nodes[1] = {node};
  uint32_t carried[1] = {0};
  mlcc_kernel_t kernel = {1, nodes, carried};

  uint32_t n_args = mlcc_kernel_args(&kernel, NULL, 0);
  const mlcc_value_t** arg_values = calloc(n_args ? n_args : 1, sizeof(*arg_values));
  void** arg_data = calloc(n_args ? n_args : 1, sizeof(*arg_data));
  void** out_data = calloc(node->n_outputs ? node->n_outputs : 1, sizeof(*out_data));
  if (arg_values == NULL || arg_data == NULL || out_data == NULL) {
    free(arg_values);
    free(arg_data);
    free(out_data);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  mlcc_kernel_args(&kernel, arg_values, n_args);
  static uint64_t dummy[8];
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t a = 0; a < n_args && s == NULL; ++a) {
    const mlcc_value_t* v = arg_values[a];
    if (v->kind == MLCC_VALUE_CONSTANT) {
      arg_data[a] = v->data ? (void*)v->data : (void*)dummy;
      continue;
    }
    // An output: fresh, 64-byte aligned, arena-owned.
    size_t size = mlcc_value_byte_size(v);
    void* p = mlcc_arena_alloc(&graph->arena, size ? size : 1, 64);
    if (p == NULL) {
      s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                           "out of memory folding '%s' (%zu bytes)", v->name, size);
      break;
    }
    arg_data[a] = p;
    for (uint32_t o = 0; o < node->n_outputs; ++o) {
      if (node->outputs[o] == v) out_data[o] = p;
    }
  }

  LLVMContextRef llctx = NULL;
  LLVMModuleRef module = NULL;
  LLVMTargetMachineRef tm = NULL;
  LLVMExecutionEngineRef ee = NULL;
  if (s == NULL) s = mlcc_llvm_target_machine(&target, 1, &tm);
  if (s == NULL) {
    llctx = LLVMContextCreate();
    module = LLVMModuleCreateWithNameInContext("mlcc_eval", llctx);
    mlcc_llvm_set_module_target(module, tm);
    LLVMValueRef fn = NULL;
    s = mlcc_codegen_build_kernel_fn(llctx, module, &target, &kernel, "mlcc_eval_kernel", &fn);
    if (s == NULL) {
      LLVMSetLinkage(fn, LLVMInternalLinkage);
      if (build_wrapper(llctx, module, fn, n_args) == NULL) {
        s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
      }
    }
    if (s == NULL) s = mlcc_llvm_verify(module, "constant folding kernel");
    if (s == NULL) s = mlcc_llvm_optimize(module, tm, 1);
  }
  if (s == NULL) {
    struct LLVMMCJITCompilerOptions opts;
    LLVMInitializeMCJITCompilerOptions(&opts, sizeof(opts));
    opts.OptLevel = 1;
    char* err = NULL;
    if (LLVMCreateMCJITCompilerForModule(&ee, module, &opts, sizeof(opts), &err)) {
      s = mlcc_llvm_message_status(MLCC_STATUS_INTERNAL, "cannot create the JIT", err);
      ee = NULL;
    } else {
      module = NULL;  // owned by the engine now
      uint64_t addr = LLVMGetFunctionAddress(ee, "mlcc_eval_wrapper");
      if (addr == 0) {
        s = mlcc_make_status(MLCC_STATUS_INTERNAL, "JIT: mlcc_eval_wrapper not found");
      } else {
        void (*wrapper)(void**) = (void (*)(void**))(uintptr_t)addr;
        wrapper(arg_data);
      }
    }
  }
  if (ee != NULL) LLVMDisposeExecutionEngine(ee);
  if (module != NULL) LLVMDisposeModule(module);
  if (llctx != NULL) LLVMContextDispose(llctx);
  if (tm != NULL) LLVMDisposeTargetMachine(tm);
  if (s == NULL) {
    for (uint32_t o = 0; o < node->n_outputs; ++o) {
      mlcc_value_t* v = node->outputs[o];
      if (v == NULL) continue;
      v->kind = MLCC_VALUE_CONSTANT;
      v->data = out_data[o];
      v->producer = NULL;
    }
    node->dead = true;
  }
  free(arg_values);
  free(arg_data);
  free(out_data);
  return s;
}

mlcc_status_t mlcc_codegen_eval_node(mlcc_graph_t* graph, mlcc_node_t* node) {
  if (graph == NULL || node == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "eval_node needs a graph and a node");
  }
  pthread_once(&jit_once, jit_init_once);
  pthread_mutex_lock(&eval_mutex);
  mlcc_status_t s = eval_locked(graph, node, 0);
  pthread_mutex_unlock(&eval_mutex);
  return s;
}

mlcc_status_t mlcc_codegen_eval_node_planned(mlcc_graph_t* graph, mlcc_node_t* node,
                                             int32_t vector_bytes) {
  if (graph == NULL || node == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "eval_node needs a graph and a node");
  }
  if (vector_bytes != 16 && vector_bytes != 32 && vector_bytes != 64) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "eval_node plans for 16, 32 or 64-byte vectors; got %d",
                            (int)vector_bytes);
  }
  pthread_once(&jit_once, jit_init_once);
  pthread_mutex_lock(&eval_mutex);
  mlcc_status_t s = eval_locked(graph, node, vector_bytes);
  pthread_mutex_unlock(&eval_mutex);
  return s;
}

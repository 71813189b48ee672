// SPDX-License-Identifier: Apache-2.0
// Kernel construction (one fused kernel -> one LLVM function) and per-kernel
// object emission. Each call owns its LLVMContext, so kernels compile in
// parallel.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "targets/codegen/codegen.h"
#include "targets/emit/emit.h"
#include "targets/kernels/kernels.h"
#include "targets/llvm/llvm_ctx.h"

static void add_fn_attr(LLVMContextRef c, LLVMValueRef fn, unsigned index, const char* name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(c, kind, 0));
}

// Checks that every value the kernel touches is inferred with a supported
// dtype, so emitters can trust shapes and types.
static mlcc_status_t check_kernel_values(const mlcc_kernel_t* kernel) {
  for (uint32_t i = 0; i < kernel->n_nodes; ++i) {
    const mlcc_node_t* n = kernel->nodes[i];
    for (uint32_t pass = 0; pass < 2; ++pass) {
      uint32_t count = pass ? n->n_outputs : n->n_inputs;
      for (uint32_t s = 0; s < count; ++s) {
        const mlcc_value_t* v = pass ? n->outputs[s] : n->inputs[s];
        if (v == NULL) continue;
        if (!v->shape_known || !mlcc_dtype_is_valid(v->dtype) || v->shape.rank < 0 ||
            v->shape.rank > MLCC_MAX_RANK) {
          return mlcc_node_annotate(
              n, mlcc_make_status(MLCC_STATUS_INTERNAL,
                                  "value '%s' has no inferred dtype/shape at codegen",
                                  v->name ? v->name : "?"));
        }
      }
    }
  }
  return mlcc_ok_status();
}

// The LLVM types of |ctx| in |llctx|.
static void set_types(mlcc_emit_ctx_t* ctx, LLVMContextRef llctx) {
  ctx->t_void = LLVMVoidTypeInContext(llctx);
  ctx->t_i1 = LLVMInt1TypeInContext(llctx);
  ctx->t_i8 = LLVMInt8TypeInContext(llctx);
  ctx->t_i16 = LLVMInt16TypeInContext(llctx);
  ctx->t_i32 = LLVMInt32TypeInContext(llctx);
  ctx->t_i64 = LLVMInt64TypeInContext(llctx);
  ctx->t_f32 = LLVMFloatTypeInContext(llctx);
  ctx->t_f64 = LLVMDoubleTypeInContext(llctx);
  ctx->t_ptr = LLVMPointerTypeInContext(llctx, 0);
}

// For an in-place kernel (plan-memory), the argument indices of the last
// node's output (*|out_output|) and of kernel->inplace_input (*|out_input|);
// -1 when absent (and always for other kernels).
static void find_inplace_args(const mlcc_kernel_t* kernel, const mlcc_value_t** arg_values,
                              uint32_t n_args, int64_t* out_output, int64_t* out_input) {
  *out_output = -1;
  *out_input = -1;
  if (kernel->inplace_input == NULL) return;
  const mlcc_node_t* last = kernel->nodes[kernel->n_nodes - 1];
  for (uint32_t i = 0; i < n_args; ++i) {
    if (arg_values[i] == mlcc_node_output(last, 0)) *out_output = i;
    if (arg_values[i] == kernel->inplace_input) *out_input = i;
  }
}

// Runs |emitter| on |anchor| into ctx->fn (the builder at the start of
// |body|), then closes the function: a return where the emitter left the
// block open, and the entry block (allocas) branching to |body|. The
// emitter's error, else the ctx's deferred one (mlcc_emit_fail).
static mlcc_status_t emit_body(mlcc_emit_ctx_t* ctx, const mlcc_emitter_t* emitter,
                               const mlcc_node_t* anchor, LLVMBasicBlockRef body) {
  mlcc_status_t s = emitter->emit(ctx, anchor);
  if (mlcc_status_is_ok(s) && ctx->deferred_status != NULL) {
    s = ctx->deferred_status;
    ctx->deferred_status = NULL;
  }
  mlcc_status_free(ctx->deferred_status);
  ctx->deferred_status = NULL;
  if (mlcc_status_is_ok(s)) {
    if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(ctx->b)) == NULL) {
      LLVMBuildRetVoid(ctx->b);
    }
    LLVMPositionBuilderAtEnd(ctx->b, ctx->entry_bb);
    LLVMBuildBr(ctx->b, body);
  }
  return s;
}

// The body of a parallel kernel's "<symbol>"(args...): hides the range
// variant |fn| (weak_odr, hidden) and calls it over units [0, |units|).
static mlcc_status_t build_wrapper(LLVMContextRef llctx, LLVMValueRef wrapper, LLVMValueRef fn,
                                   LLVMTypeRef rfty, uint32_t n_args, int64_t units) {
  LLVMSetLinkage(fn, LLVMWeakODRLinkage);
  LLVMSetVisibility(fn, LLVMHiddenVisibility);
  add_fn_attr(llctx, wrapper, LLVMAttributeFunctionIndex, "nounwind");
  LLVMTypeRef t_i64 = LLVMInt64TypeInContext(llctx);
  LLVMBuilderRef wb = LLVMCreateBuilderInContext(llctx);
  LLVMPositionBuilderAtEnd(wb, LLVMAppendBasicBlockInContext(llctx, wrapper, "entry"));
  mlcc_status_t s = mlcc_ok_status();
  LLVMValueRef* cargs = calloc(n_args + 2, sizeof(*cargs));
  if (cargs == NULL) {
    s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    for (uint32_t i = 0; i < n_args; ++i) cargs[i] = LLVMGetParam(wrapper, i);
    cargs[n_args] = LLVMConstInt(t_i64, 0, 0);
    cargs[n_args + 1] = LLVMConstInt(t_i64, (unsigned long long)units, 0);
    LLVMBuildCall2(wb, rfty, fn, cargs, n_args + 2, "");
    LLVMBuildRetVoid(wb);
    free(cargs);
  }
  LLVMDisposeBuilder(wb);
  return s;
}

// The kernel's function types: "<symbol>"(ptr x |n_args|) in *|out_fty|
// and its range variant's (ptr x |n_args|, i64 begin, i64 end) in
// *|out_rfty|. RESOURCE_EXHAUSTED on OOM.
static mlcc_status_t kernel_fn_types(const mlcc_emit_ctx_t* ctx, uint32_t n_args,
                                     LLVMTypeRef* out_fty, LLVMTypeRef* out_rfty) {
  LLVMTypeRef* params = calloc((size_t)n_args + 2, sizeof(*params));
  if (params == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n_args; ++i) params[i] = ctx->t_ptr;
  params[n_args] = ctx->t_i64;
  params[n_args + 1] = ctx->t_i64;
  *out_fty = LLVMFunctionType(ctx->t_void, params, n_args, 0);
  *out_rfty = LLVMFunctionType(ctx->t_void, params, n_args + 2, 0);
  free(params);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_build_kernel_fn(LLVMContextRef llctx, LLVMModuleRef module,
                                           const mlcc_target_t* target,
                                           const mlcc_kernel_t* kernel, const char* symbol,
                                           LLVMValueRef* out_fn) {
  *out_fn = NULL;
  if (kernel == NULL || kernel->n_nodes == 0) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "empty kernel");
  }
  MLCC_RETURN_IF_ERROR(check_kernel_values(kernel));
  const mlcc_node_t* anchor = kernel->nodes[0];
  const mlcc_emitter_t* emitter = mlcc_emitter(anchor->op);
  if (emitter == NULL || emitter->emit == NULL) {
    return mlcc_node_annotate(anchor, mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                                       "no kernel emitter"));
  }
  uint32_t n_args = mlcc_kernel_args(kernel, NULL, 0);
  const mlcc_value_t** arg_values = calloc(n_args ? n_args : 1, sizeof(*arg_values));
  LLVMValueRef* arg_ptrs = calloc(n_args ? n_args : 1, sizeof(*arg_ptrs));
  if (arg_values == NULL || arg_ptrs == NULL) {
    free(arg_values);
    free(arg_ptrs);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  mlcc_kernel_args(kernel, arg_values, n_args);

  mlcc_emit_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.llctx = llctx;
  ctx.module = module;
  ctx.target = target;
  ctx.kernel = kernel;
  set_types(&ctx, llctx);
  // A parallel kernel is built as "<symbol>_r"(args..., i64 begin, i64 end)
  // computing units [begin, end), and "<symbol>"(args...) calls it with the
  // whole range (kernel-abi-v1 unchanged).
  int64_t units = mlcc_emit_parallel_units(kernel, target);
  LLVMTypeRef fty = NULL, rfty = NULL;
  mlcc_status_t ts = kernel_fn_types(&ctx, n_args, &fty, &rfty);
  if (ts != NULL) {
    free(arg_values);
    free(arg_ptrs);
    return ts;
  }
  char rsym[64];
  snprintf(rsym, sizeof(rsym), "%s_r", symbol);
  LLVMValueRef wrapper = NULL;
  LLVMValueRef fn = NULL;
  if (units > 0) {
    wrapper = LLVMAddFunction(module, symbol, fty);
    fn = LLVMAddFunction(module, rsym, rfty);
    ctx.range_begin = LLVMGetParam(fn, n_args);
    ctx.range_end = LLVMGetParam(fn, n_args + 1);
  } else {
    fn = LLVMAddFunction(module, symbol, fty);
  }
  add_fn_attr(llctx, fn, LLVMAttributeFunctionIndex, "nounwind");
  // In place (plan-memory): the caller passes the same buffer for the output
  // and kernel->inplace_input. Every access to it goes through the input's
  // parameter, which stays noalias (no other pointer reaches that buffer);
  // the output's parameter is unused and not noalias. Loads and stores of one
  // element then share a base, so LLVM sees their distance is 0.
  int64_t inplace_out = -1, inplace_in = -1;
  find_inplace_args(kernel, arg_values, n_args, &inplace_out, &inplace_in);
  if (kernel->inplace_input != NULL && (inplace_out < 0 || inplace_in < 0)) {
    free(arg_values);
    free(arg_ptrs);
    if (wrapper != NULL) LLVMDeleteFunction(wrapper);
    LLVMDeleteFunction(fn);
    return mlcc_node_annotate(
        anchor, mlcc_make_status(MLCC_STATUS_INTERNAL,
                                 "in-place input '%s' or the output is not a kernel argument",
                                 kernel->inplace_input->name ? kernel->inplace_input->name
                                                             : "?"));
  }
  for (uint32_t i = 0; i < n_args; ++i) {
    arg_ptrs[i] = LLVMGetParam(fn, i);
    if ((int64_t)i != inplace_out) add_fn_attr(llctx, fn, i + 1, "noalias");
    add_fn_attr(llctx, fn, i + 1, "nocapture");
  }
  if (inplace_out >= 0) arg_ptrs[inplace_out] = arg_ptrs[inplace_in];
  ctx.fn = fn;
  ctx.n_args = n_args;
  ctx.arg_values = arg_values;
  ctx.arg_ptrs = arg_ptrs;
  ctx.b = LLVMCreateBuilderInContext(llctx);
  ctx.entry_bb = LLVMAppendBasicBlockInContext(llctx, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(llctx, fn, "body");
  LLVMPositionBuilderAtEnd(ctx.b, body);

  mlcc_status_t s = emit_body(&ctx, emitter, anchor, body);
  LLVMDisposeBuilder(ctx.b);
  free(arg_values);
  free(arg_ptrs);
  if (mlcc_status_is_ok(s) && wrapper != NULL) {
    s = build_wrapper(llctx, wrapper, fn, rfty, n_args, units);
  }
  if (!mlcc_status_is_ok(s)) {
    if (wrapper != NULL) LLVMDeleteFunction(wrapper);
    LLVMDeleteFunction(fn);
    // Emitters usually annotate with the node already; annotate only bare
    // statuses from the anchor.
    return mlcc_node_annotate(anchor, s);
  }
  *out_fn = wrapper != NULL ? wrapper : fn;
  return mlcc_ok_status();
}

int64_t mlcc_emit_parallel_units(const mlcc_kernel_t* kernel, const mlcc_target_t* target) {
  if (kernel == NULL || kernel->n_nodes == 0 || target == NULL) return 0;
  // No threads on a microcontroller: NAME_run_parallel runs kernels whole
  // and no kernel gets a range variant (docs/mcu.md).
  if (mlcc_target_is_bare_metal(target)) return 0;
  const mlcc_node_t* anchor = kernel->nodes[0];
  const mlcc_emitter_t* emitter = mlcc_emitter(anchor->op);
  if (emitter == NULL || emitter->parallel_units == NULL) return 0;
  return emitter->parallel_units(anchor, target);
}

// mlcc_llvm_lower_libm with the target's FPU and float ABI.
static void lower_for_mcu(LLVMModuleRef module, const mlcc_target_t* target) {
  bool arm_hf = (strncmp(target->triple, "thumb", 5) == 0 ||
                 strncmp(target->triple, "arm", 3) == 0) &&
                strstr(target->triple, "eabihf") != NULL;
  bool rv = strncmp(target->triple, "riscv", 5) == 0;
  bool half = strstr(target->features, "+zfh") != NULL;  // +zfh or +zfhmin
  mlcc_llvm_lower_libm(module, mlcc_target_fpu(target), arm_hf, rv && !half);
}

// Gives |fn| the linkage of a shareable kernel: weak_odr + hidden.
static void set_kernel_linkage(LLVMValueRef fn) {
  LLVMSetLinkage(fn, LLVMWeakODRLinkage);
  LLVMSetVisibility(fn, LLVMHiddenVisibility);
}

static mlcc_status_t check_options(const mlcc_codegen_options_t* options) {
  if (options == NULL || options->target == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "codegen options need a target");
  }
  if (options->opt_level < 0 || options->opt_level > 3) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "opt level %d is not 0..3",
                            options->opt_level);
  }
  if (options->profile && mlcc_target_is_bare_metal(options->target)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "--profile times kernels with clock_gettime, which the "
                            "bare-metal target %s does not have", options->target->triple);
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_kernel(const mlcc_graph_t* graph, uint32_t kernel_index,
                                  const mlcc_codegen_options_t* options,
                                  mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  MLCC_RETURN_IF_ERROR(check_options(options));
  char key[65], symbol[40];
  MLCC_RETURN_IF_ERROR(mlcc_codegen_kernel_key(graph, kernel_index, options, key));
  mlcc_codegen_kernel_symbol(key, symbol);

  LLVMTargetMachineRef tm = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_llvm_target_machine(options->target, options->opt_level, &tm));
  LLVMContextRef llctx = LLVMContextCreate();
  LLVMModuleRef module = LLVMModuleCreateWithNameInContext(symbol, llctx);
  mlcc_llvm_set_module_target(module, tm);
  LLVMValueRef fn = NULL;
  mlcc_status_t s = mlcc_codegen_build_kernel_fn(llctx, module, options->target,
                                                 &graph->kernels[kernel_index], symbol, &fn);
  if (mlcc_status_is_ok(s)) {
    set_kernel_linkage(fn);
    if (mlcc_target_is_bare_metal(options->target)) {
      lower_for_mcu(module, options->target);
    }
    s = mlcc_llvm_verify(module, symbol);
  }
  if (mlcc_status_is_ok(s)) s = mlcc_llvm_optimize(module, tm, options->opt_level);
  if (mlcc_status_is_ok(s)) s = mlcc_llvm_emit(module, tm, kind, out);
  LLVMDisposeModule(module);
  LLVMContextDispose(llctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}

mlcc_status_t mlcc_codegen_whole(mlcc_graph_t* graph, const mlcc_codegen_options_t* options,
                                 mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  MLCC_RETURN_IF_ERROR(check_options(options));
  if (options->name == NULL || options->name[0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "codegen needs a model name");
  }
  char(*symbols)[40] = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_codegen_kernel_symbols(graph, options, &symbols));
  LLVMTargetMachineRef tm = NULL;
  mlcc_status_t s = mlcc_llvm_target_machine(options->target, options->opt_level, &tm);
  if (!mlcc_status_is_ok(s)) {
    free(symbols);
    return s;
  }
  LLVMContextRef llctx = LLVMContextCreate();
  LLVMModuleRef module = LLVMModuleCreateWithNameInContext(options->name, llctx);
  mlcc_llvm_set_module_target(module, tm);
  s = mlcc_codegen_build_weights(graph, options->name, llctx, module);
  if (mlcc_status_is_ok(s)) mlcc_codegen_set_weights_section(module, options);
  for (uint32_t k = 0; k < graph->n_kernels && mlcc_status_is_ok(s); ++k) {
    if (LLVMGetNamedFunction(module, symbols[k]) != NULL) continue;  // shared kernel
    LLVMValueRef fn = NULL;
    s = mlcc_codegen_build_kernel_fn(llctx, module, options->target, &graph->kernels[k],
                                     symbols[k], &fn);
    if (mlcc_status_is_ok(s)) set_kernel_linkage(fn);
  }
  if (mlcc_status_is_ok(s)) s = mlcc_codegen_build_entry_profiled(graph, options->name, symbols, options->target, options->profile, llctx, module);
  if (mlcc_status_is_ok(s) && mlcc_target_is_bare_metal(options->target)) {
    lower_for_mcu(module, options->target);
  }
  if (mlcc_status_is_ok(s)) s = mlcc_llvm_verify(module, options->name);
  if (mlcc_status_is_ok(s)) s = mlcc_llvm_optimize(module, tm, options->opt_level);
  if (mlcc_status_is_ok(s)) s = mlcc_llvm_emit(module, tm, kind, out);
  LLVMDisposeModule(module);
  LLVMContextDispose(llctx);
  LLVMDisposeTargetMachine(tm);
  free(symbols);
  return s;
}

// SPDX-License-Identifier: Apache-2.0
// The generated entry points (LINKED: entry-abi-v3, docs/generated-api.md):
// NAME_run calls the kernels in order with pointers into the caller's
// buffers, the weights blob and the workspace; NAME_run_v unpacks arrays;
// NAME_output_shape reads the actual dims of outputs with data-dependent
// shapes back from the workspace; NAME_info describes the model as data
// (with stack_size = NAME_STACK_SIZE, targets/codegen/stack.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ir/dtype.h"
#include "targets/codegen/codegen.h"
#include "targets/emit/emit.h"
#include "targets/codegen/entry_profile.h"
#include "targets/llvm/llvm_ctx.h"
#include "targets/codegen/stack.h"

typedef struct entry_t {
  const mlcc_graph_t* graph;
  LLVMContextRef c;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMTypeRef t_ptr, t_i8, t_i32, t_i64;
  LLVMValueRef run;       // NAME_run
  LLVMValueRef weights;   // NAME_weights
  LLVMValueRef ws;        // workspace param
  const mlcc_value_t** wvalues;
  int64_t* woffsets;
  uint32_t n_weights;
  const mlcc_target_t* target;  // NULL: no kernel is called in parallel
  LLVMValueRef pfor, pfor_ctx;  // NAME_run_parallel's callback, else NULL
  LLVMValueRef args_block;      // NAME_run_parallel: the tasks' argument array
  const char* name;
  LLVMValueRef prof_table;      // --profile: NAME_profile's rows, else NULL
} entry_t;

// Tasks a parallel kernel is split into (each a contiguous range of its
// units): enough for a few threads to balance, few enough that per-task
// set-up (tile masks, input panels) stays small.
enum { kEntryMaxTasks = 8 };

static int64_t index_of(mlcc_value_t* const* list, uint32_t n, const mlcc_value_t* v) {
  for (uint32_t i = 0; i < n; ++i) {
    if (list[i] == v) return i;
  }
  return -1;
}

static LLVMValueRef byte_offset(entry_t* e, LLVMValueRef base, int64_t off) {
  if (off == 0) return base;
  LLVMValueRef idx = LLVMConstInt(e->t_i64, (unsigned long long)off, 1);
  return LLVMBuildInBoundsGEP2(e->b, e->t_i8, base, &idx, 1, "p");
}

// The pointer through which NAME_run reaches |v|.
static mlcc_status_t value_pointer(entry_t* e, const mlcc_value_t* v, LLVMValueRef* out) {
  const mlcc_graph_t* g = e->graph;
  if (v->alias_of != NULL) v = v->alias_of;  // a Reshape that runs no kernel
  int64_t i = index_of(g->inputs, g->n_inputs, v);
  if (i >= 0) {
    *out = LLVMGetParam(e->run, (unsigned)i);
    return mlcc_ok_status();
  }
  if (v->kind == MLCC_VALUE_CONSTANT) {
    for (uint32_t w = 0; w < e->n_weights; ++w) {
      if (e->wvalues[w] == v) {
        *out = byte_offset(e, e->weights, e->woffsets[w]);
        return mlcc_ok_status();
      }
    }
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "constant '%s' is not in the weights blob",
                            v->name);
  }
  int64_t o = index_of(g->outputs, g->n_outputs, v);
  if (o >= 0) {
    *out = LLVMGetParam(e->run, g->n_inputs + (unsigned)o);
    return mlcc_ok_status();
  }
  if (v->kind == MLCC_VALUE_INPUT) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "input '%s' is not a graph input", v->name);
  }
  if (v->ws_offset < 0) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "intermediate '%s' has no workspace slot (run plan-memory)",
                            v->name);
  }
  if (g->workspace_size < 0 ||
      v->ws_offset + (int64_t)mlcc_value_byte_size(v) > g->workspace_size) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL,
                            "intermediate '%s' at workspace offset %lld overflows the "
                            "workspace (%lld bytes)",
                            v->name, (long long)v->ws_offset, (long long)g->workspace_size);
  }
  *out = byte_offset(e, e->ws, v->ws_offset);
  return mlcc_ok_status();
}

// Calls parallel kernel |symbol| through the caller's parallel-for:
//   pfor(pfor_ctx, ntasks, NAME_task<k>, args) with args the kernel's
// pointers in an on-stack array; task i runs "<symbol>_r"(args...,
// i*units/ntasks, (i+1)*units/ntasks).
static mlcc_status_t emit_parallel_call(entry_t* e, const char* symbol, uint32_t k,
                                        LLVMValueRef* ptrs, uint32_t n, int64_t units) {
  LLVMTypeRef t_void = LLVMVoidTypeInContext(e->c);
  LLVMTypeRef* rparams = calloc(n + 2, sizeof(*rparams));
  LLVMValueRef* cargs = calloc(n + 2, sizeof(*cargs));
  if (rparams == NULL || cargs == NULL) {
    free(rparams);
    free(cargs);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (uint32_t i = 0; i < n; ++i) rparams[i] = e->t_ptr;
  rparams[n] = e->t_i64;
  rparams[n + 1] = e->t_i64;
  LLVMTypeRef rfty = LLVMFunctionType(t_void, rparams, n + 2, 0);
  char rsym[64];
  snprintf(rsym, sizeof(rsym), "%s_r", symbol);
  LLVMValueRef rfn = LLVMGetNamedFunction(e->m, rsym);
  if (rfn == NULL) {
    rfn = LLVMAddFunction(e->m, rsym, rfty);
    LLVMSetLinkage(rfn, LLVMExternalLinkage);
    LLVMSetVisibility(rfn, LLVMHiddenVisibility);
  }
  int64_t ntasks = units < kEntryMaxTasks ? units : kEntryMaxTasks;
  // The task trampoline: void NAME_task<k>(ptr args, i64 i).
  LLVMTypeRef tparams[2] = {e->t_ptr, e->t_i64};
  LLVMTypeRef tfty = LLVMFunctionType(t_void, tparams, 2, 0);
  char tsym[600];
  snprintf(tsym, sizeof(tsym), "%s_task%u", e->name, (unsigned)k);
  LLVMValueRef tfn = LLVMAddFunction(e->m, tsym, tfty);
  LLVMSetLinkage(tfn, LLVMInternalLinkage);
  LLVMBasicBlockRef saved = LLVMGetInsertBlock(e->b);
  LLVMPositionBuilderAtEnd(e->b, LLVMAppendBasicBlockInContext(e->c, tfn, "entry"));
  LLVMValueRef targ = LLVMGetParam(tfn, 0), ti = LLVMGetParam(tfn, 1);
  for (uint32_t a = 0; a < n; ++a) {
    LLVMValueRef idx = LLVMConstInt(e->t_i64, a, 0);
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(e->b, e->t_ptr, targ, &idx, 1, "");
    cargs[a] = LLVMBuildLoad2(e->b, e->t_ptr, slot, "");
  }
  LLVMValueRef cu = LLVMConstInt(e->t_i64, (unsigned long long)units, 0);
  LLVMValueRef ct = LLVMConstInt(e->t_i64, (unsigned long long)ntasks, 0);
  LLVMValueRef one = LLVMConstInt(e->t_i64, 1, 0);
  cargs[n] = LLVMBuildSDiv(e->b, LLVMBuildMul(e->b, ti, cu, ""), ct, "begin");
  cargs[n + 1] = LLVMBuildSDiv(e->b, LLVMBuildMul(e->b, LLVMBuildAdd(e->b, ti, one, ""), cu, ""),
                               ct, "end");
  LLVMBuildCall2(e->b, rfty, rfn, cargs, n + 2, "");
  LLVMBuildRetVoid(e->b);
  LLVMPositionBuilderAtEnd(e->b, saved);
  // The argument block (one static slot for every kernel: pfor returns
  // before the next kernel fills it) and the pfor call.
  LLVMValueRef block = e->args_block;
  for (uint32_t a = 0; a < n; ++a) {
    LLVMValueRef idx = LLVMConstInt(e->t_i64, a, 0);
    LLVMBuildStore(e->b, ptrs[a], LLVMBuildInBoundsGEP2(e->b, e->t_ptr, block, &idx, 1, ""));
  }
  LLVMTypeRef pparams[4] = {e->t_ptr, e->t_i64, e->t_ptr, e->t_ptr};
  LLVMTypeRef pfty = LLVMFunctionType(t_void, pparams, 4, 0);
  LLVMValueRef pargs[4] = {e->pfor_ctx, ct, tfn, block};
  LLVMBuildCall2(e->b, pfty, e->pfor, pargs, 4, "");
  free(rparams);
  free(cargs);
  return mlcc_ok_status();
}

static mlcc_status_t emit_kernel_calls(entry_t* e, char (*symbols)[40]) {
  const mlcc_graph_t* g = e->graph;
  const mlcc_value_t** args = NULL;
  LLVMValueRef* ptrs = NULL;
  LLVMTypeRef* params = NULL;
  uint32_t cap = 0;
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t k = 0; k < g->n_kernels && s == NULL; ++k) {
    const mlcc_kernel_t* kernel = &g->kernels[k];
    uint32_t n = mlcc_kernel_args(kernel, args, cap);
    if (n > cap) {
      free(args);
      free(ptrs);
      free(params);
      cap = n;
      args = calloc(cap, sizeof(*args));
      ptrs = calloc(cap, sizeof(*ptrs));
      params = calloc(cap, sizeof(*params));
      if (!args || !ptrs || !params) {
        s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        break;
      }
      mlcc_kernel_args(kernel, args, cap);
    }
    for (uint32_t a = 0; a < n && s == NULL; ++a) {
      s = value_pointer(e, args[a], &ptrs[a]);
      params[a] = e->t_ptr;
    }
    if (s != NULL) {
      s = mlcc_node_annotate(kernel->nodes[0], s);
      break;
    }
    int64_t units = e->pfor != NULL ? mlcc_emit_parallel_units(kernel, e->target) : 0;
    LLVMValueRef t0 = e->prof_table != NULL ? mlcc_profile_emit_now(e->b, e->m) : NULL;
    if (units > 0) {
      s = emit_parallel_call(e, symbols[k], k, ptrs, n, units);
      if (t0 != NULL) mlcc_profile_emit_add(e->b, e->m, e->prof_table, k, t0, mlcc_profile_emit_now(e->b, e->m));
      continue;
    }
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(e->c), params, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(e->m, symbols[k]);
    if (fn == NULL) {
      fn = LLVMAddFunction(e->m, symbols[k], fty);
      LLVMSetLinkage(fn, LLVMExternalLinkage);
      LLVMSetVisibility(fn, LLVMHiddenVisibility);
    }
    LLVMBuildCall2(e->b, fty, fn, ptrs, n, "");
    if (t0 != NULL) mlcc_profile_emit_add(e->b, e->m, e->prof_table, k, t0, mlcc_profile_emit_now(e->b, e->m));
  }
  free(args);
  free(ptrs);
  free(params);
  return s;
}

// True if some kernel's final node writes |v|.
static bool written_by_kernel(const mlcc_graph_t* g, const mlcc_value_t* v) {
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kernel = &g->kernels[k];
    const mlcc_node_t* last = kernel->nodes[kernel->n_nodes - 1];
    for (uint32_t o = 0; o < last->n_outputs; ++o) {
      if (last->outputs[o] == v) return true;
    }
  }
  return false;
}

// Copies graph outputs no kernel writes: inputs, constants, duplicates.
static mlcc_status_t emit_output_copies(entry_t* e) {
  const mlcc_graph_t* g = e->graph;
  for (uint32_t o = 0; o < g->n_outputs; ++o) {
    const mlcc_value_t* v = g->outputs[o];
    LLVMValueRef dst = LLVMGetParam(e->run, g->n_inputs + o);
    LLVMValueRef src = NULL;
    int64_t first = index_of(g->outputs, g->n_outputs, v);
    bool is_input = index_of(g->inputs, g->n_inputs, v) >= 0;
    if (!is_input && first == (int64_t)o && v->kind != MLCC_VALUE_CONSTANT) {
      if (!written_by_kernel(g, v)) {
        return mlcc_make_status(MLCC_STATUS_INTERNAL,
                                "graph output '%s' is not written by any kernel", v->name);
      }
      continue;
    }
    if (is_input || v->kind == MLCC_VALUE_CONSTANT) {
      MLCC_RETURN_IF_ERROR(value_pointer(e, v, &src));
    } else {
      src = LLVMGetParam(e->run, g->n_inputs + (unsigned)first);
    }
    size_t size = mlcc_value_byte_size(v);
    if (size == 0) continue;
    size_t align = mlcc_dtype_size(v->dtype);
    LLVMBuildMemCpy(e->b, dst, (unsigned)align, src, (unsigned)align,
                    LLVMConstInt(e->t_i64, size, 0));
  }
  return mlcc_ok_status();
}

static LLVMValueRef private_string(entry_t* e, const char* s, const char* name) {
  LLVMValueRef init = LLVMConstStringInContext(e->c, s, (unsigned)strlen(s), 0);
  LLVMValueRef g = LLVMAddGlobal(e->m, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return g;
}

static LLVMValueRef private_array(entry_t* e, LLVMTypeRef elem, LLVMValueRef* vals,
                                  unsigned n, const char* name, unsigned align) {
  if (n == 0) return LLVMConstNull(e->t_ptr);
  LLVMValueRef init = LLVMConstArray(elem, vals, n);
  LLVMValueRef g = LLVMAddGlobal(e->m, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetAlignment(g, align);
  return g;
}

// mlcc_tensor_info_t: {ptr name, i32 dtype, i32 rank, ptr dims, i64 size_bytes}
static mlcc_status_t tensor_infos(entry_t* e, LLVMTypeRef t_info, mlcc_value_t* const* values,
                                  uint32_t n, const char* kind, LLVMValueRef* out) {
  LLVMValueRef* infos = calloc(n ? n : 1, sizeof(*infos));
  if (infos == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_value_t* v = values[i];
    char gname[64];
    snprintf(gname, sizeof(gname), ".%s.name.%u", kind, i);
    LLVMValueRef name = private_string(e, v->name ? v->name : "", gname);
    LLVMValueRef dims[MLCC_MAX_RANK];
    for (int32_t d = 0; d < v->shape.rank; ++d) {
      dims[d] = LLVMConstInt(e->t_i64, (unsigned long long)v->shape.dims[d], 1);
    }
    snprintf(gname, sizeof(gname), ".%s.dims.%u", kind, i);
    LLVMValueRef dims_g = private_array(e, e->t_i64, dims, (unsigned)v->shape.rank, gname, 8);
    LLVMValueRef fields[5] = {
        name, LLVMConstInt(e->t_i32, (unsigned long long)v->dtype, 0),
        LLVMConstInt(e->t_i32, (unsigned long long)v->shape.rank, 0), dims_g,
        LLVMConstInt(e->t_i64, mlcc_value_byte_size(v), 0)};
    infos[i] = LLVMConstNamedStruct(t_info, fields, 5);
  }
  char gname[64];
  snprintf(gname, sizeof(gname), ".%s.info", kind);
  *out = private_array(e, t_info, infos, n, gname, 8);
  free(infos);
  return mlcc_ok_status();
}

static void add_attr(LLVMContextRef c, LLVMValueRef fn, unsigned index, const char* name);

// int NAME_output_shape(const void *workspace, int output_index, int64_t *dims)
// (docs/generated-api.md): writes the dims of graph output |output_index|:
// constants for static dims, and for the dims in |bound_dims| the int64 the
// kernel stored in the value's extent slot (workspace + ws_offset + 8*d)
// during the last NAME_run with that workspace. Returns 0, or 1 for an index
// out of range, a NULL |dims| (rank > 0) or a NULL |workspace| (outputs with
// data-dependent dims). No global state. INTERNAL if a bounded output has no
// planned extent slot.
static mlcc_status_t build_output_shape(entry_t* e, const char* name, LLVMValueRef* out_fn) {
  const mlcc_graph_t* g = e->graph;
  for (uint32_t o = 0; o < g->n_outputs; ++o) {
    const mlcc_value_t* v = g->outputs[o];
    if (v->bound_dims == 0) continue;
    if (v->extent == NULL || v->extent->ws_offset < 0 ||
        v->extent->ws_offset + 8 * (int64_t)v->shape.rank > g->workspace_size) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL,
                              "graph output '%s' has a data-dependent shape but no extent "
                              "slot in the workspace (run plan-memory)",
                              v->name);
    }
  }
  LLVMTypeRef params[3] = {e->t_ptr, e->t_i32, e->t_ptr};
  LLVMTypeRef ty = LLVMFunctionType(e->t_i32, params, 3, 0);
  char sym[512];
  snprintf(sym, sizeof(sym), "%s_output_shape", name);
  LLVMValueRef fn = LLVMAddFunction(e->m, sym, ty);
  add_attr(e->c, fn, LLVMAttributeFunctionIndex, "nounwind");
  LLVMValueRef ws = LLVMGetParam(fn, 0), dims = LLVMGetParam(fn, 2);
  LLVMBasicBlockRef entry_bb = LLVMAppendBasicBlockInContext(e->c, fn, "entry");
  LLVMBasicBlockRef bad_bb = LLVMAppendBasicBlockInContext(e->c, fn, "bad");
  LLVMPositionBuilderAtEnd(e->b, bad_bb);
  LLVMBuildRet(e->b, LLVMConstInt(e->t_i32, 1, 0));
  LLVMPositionBuilderAtEnd(e->b, entry_bb);
  LLVMValueRef sw = LLVMBuildSwitch(e->b, LLVMGetParam(fn, 1), bad_bb, g->n_outputs);
  for (uint32_t o = 0; o < g->n_outputs; ++o) {
    const mlcc_value_t* v = g->outputs[o];
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(e->c, fn, "output");
    LLVMAddCase(sw, LLVMConstInt(e->t_i32, o, 0), bb);
    LLVMPositionBuilderAtEnd(e->b, bb);
    if (v->shape.rank > 0) {
      LLVMValueRef bad = LLVMBuildIsNull(e->b, dims, "no_dims");
      if (v->bound_dims != 0) bad = LLVMBuildOr(e->b, bad, LLVMBuildIsNull(e->b, ws, ""), "");
      LLVMBasicBlockRef ok_bb = LLVMAppendBasicBlockInContext(e->c, fn, "write");
      LLVMBuildCondBr(e->b, bad, bad_bb, ok_bb);
      LLVMPositionBuilderAtEnd(e->b, ok_bb);
    }
    for (int32_t d = 0; d < v->shape.rank; ++d) {
      LLVMValueRef val;
      if ((v->bound_dims >> d) & 1u) {
        LLVMValueRef p = byte_offset(e, ws, v->extent->ws_offset + 8 * (int64_t)d);
        val = LLVMBuildLoad2(e->b, e->t_i64, p, "dim");
        LLVMSetAlignment(val, 8);
      } else {
        val = LLVMConstInt(e->t_i64, (unsigned long long)v->shape.dims[d], 1);
      }
      LLVMValueRef idx = LLVMConstInt(e->t_i64, (unsigned long long)d, 0);
      LLVMValueRef st =
          LLVMBuildStore(e->b, val, LLVMBuildInBoundsGEP2(e->b, e->t_i64, dims, &idx, 1, ""));
      LLVMSetAlignment(st, 8);
    }
    LLVMBuildRet(e->b, LLVMConstInt(e->t_i32, 0, 0));
  }
  *out_fn = fn;
  return mlcc_ok_status();
}

static mlcc_status_t build_info(entry_t* e, const char* name, LLVMValueRef run_v,
                                LLVMValueRef output_shape) {
  const mlcc_graph_t* g = e->graph;
  LLVMTypeRef t_info = LLVMStructCreateNamed(e->c, "mlcc_tensor_info_t");
  LLVMTypeRef info_fields[5] = {e->t_ptr, e->t_i32, e->t_i32, e->t_ptr, e->t_i64};
  LLVMStructSetBody(t_info, info_fields, 5, 0);
  LLVMTypeRef t_model = LLVMStructCreateNamed(e->c, "mlcc_model_info_t");
  LLVMTypeRef model_fields[11] = {e->t_ptr, e->t_i32, e->t_i32, e->t_ptr, e->t_ptr, e->t_i64,
                                  e->t_i64, e->t_ptr, e->t_ptr, e->t_ptr, e->t_i64};
  LLVMStructSetBody(t_model, model_fields, 11, 0);
  LLVMValueRef ins, outs;
  MLCC_RETURN_IF_ERROR(tensor_infos(e, t_info, g->inputs, g->n_inputs, "in", &ins));
  MLCC_RETURN_IF_ERROR(tensor_infos(e, t_info, g->outputs, g->n_outputs, "out", &outs));
  // output_bound_dims: bit d of entry i set = dim d of output i is a bound.
  LLVMValueRef* bounds = calloc(g->n_outputs ? g->n_outputs : 1, sizeof(*bounds));
  if (bounds == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t o = 0; o < g->n_outputs; ++o) {
    bounds[o] = LLVMConstInt(e->t_i32, g->outputs[o]->bound_dims, 0);
  }
  LLVMValueRef bounds_g = private_array(e, e->t_i32, bounds, g->n_outputs, ".out.bounds", 4);
  free(bounds);
  int64_t align = g->workspace_align > 0 ? g->workspace_align : 64;
  LLVMValueRef fields[11] = {
      private_string(e, name, ".model.name"),
      LLVMConstInt(e->t_i32, g->n_inputs, 0),
      LLVMConstInt(e->t_i32, g->n_outputs, 0),
      ins,
      outs,
      LLVMConstInt(e->t_i64, (unsigned long long)(g->workspace_size > 0 ? g->workspace_size : 0), 0),
      LLVMConstInt(e->t_i64, (unsigned long long)align, 0),
      run_v,
      output_shape,
      bounds_g,
      LLVMConstInt(e->t_i64, (unsigned long long)mlcc_stack_size(g), 0)};
  char sym[512];
  snprintf(sym, sizeof(sym), "%s_info", name);
  LLVMValueRef gv = LLVMAddGlobal(e->m, t_model, sym);
  LLVMSetInitializer(gv, LLVMConstNamedStruct(t_model, fields, 11));
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetAlignment(gv, 8);
  return mlcc_ok_status();
}

static void add_attr(LLVMContextRef c, LLVMValueRef fn, unsigned index, const char* name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(c, kind, 0));
}

mlcc_status_t mlcc_codegen_build_entry(const mlcc_graph_t* graph, const char* name,
                                       char (*symbols)[40], LLVMContextRef llctx,
                                       LLVMModuleRef module) {
  return mlcc_codegen_build_entry_ex(graph, name, symbols, NULL, llctx, module);
}

// Builds int NAME_run_parallel(ptr in..., ptr out..., ptr ws, ptr pfor, ptr ctx):
// NAME_run when |pfor| is NULL; else the same kernel sequence with every
// parallel kernel split into tasks run through pfor (docs/generated-api.md).
static mlcc_status_t build_run_parallel(entry_t* e, const char* name, char (*symbols)[40],
                                        LLVMTypeRef run_ty) {
  const mlcc_graph_t* graph = e->graph;
  uint32_t n_params = graph->n_inputs + graph->n_outputs + 3;
  LLVMTypeRef* params = calloc(n_params, sizeof(*params));
  LLVMValueRef* args = calloc(n_params, sizeof(*args));
  if (params == NULL || args == NULL) {
    free(params);
    free(args);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (uint32_t i = 0; i < n_params; ++i) params[i] = e->t_ptr;
  LLVMTypeRef ty = LLVMFunctionType(e->t_i32, params, n_params, 0);
  char sym[512];
  snprintf(sym, sizeof(sym), "%s_run_parallel", name);
  LLVMValueRef fn = LLVMAddFunction(e->m, sym, ty);
  add_attr(e->c, fn, LLVMAttributeFunctionIndex, "nounwind");
  LLVMValueRef serial_run = e->run;
  LLVMBasicBlockRef entry_bb = LLVMAppendBasicBlockInContext(e->c, fn, "entry");
  LLVMBasicBlockRef serial_bb = LLVMAppendBasicBlockInContext(e->c, fn, "serial");
  LLVMBasicBlockRef check_bb = LLVMAppendBasicBlockInContext(e->c, fn, "check");
  LLVMBasicBlockRef bad_bb = LLVMAppendBasicBlockInContext(e->c, fn, "bad_workspace");
  LLVMBasicBlockRef ok_bb = LLVMAppendBasicBlockInContext(e->c, fn, "run");
  LLVMPositionBuilderAtEnd(e->b, entry_bb);
  // The parallel calls' argument block, sized for the widest kernel, in the
  // entry block so that its bytes are in the fixed frame (counted by
  // mlcc_stack_size) instead of growing the stack at every call.
  uint32_t max_args = 1;
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    uint32_t na = mlcc_kernel_args(&graph->kernels[k], NULL, 0);
    if (na > max_args) max_args = na;
  }
  e->args_block = LLVMBuildAlloca(e->b, LLVMArrayType(e->t_ptr, max_args), "args");
  LLVMValueRef pfor = LLVMGetParam(fn, n_params - 2);
  LLVMBuildCondBr(e->b, LLVMBuildIsNull(e->b, pfor, "no_pfor"), serial_bb, check_bb);
  LLVMPositionBuilderAtEnd(e->b, serial_bb);
  for (uint32_t i = 0; i + 2 < n_params; ++i) args[i] = LLVMGetParam(fn, i);
  LLVMBuildRet(e->b, LLVMBuildCall2(e->b, run_ty, serial_run, args, n_params - 2, "r"));
  LLVMPositionBuilderAtEnd(e->b, check_bb);
  LLVMValueRef ws = LLVMGetParam(fn, n_params - 3);
  int64_t align = graph->workspace_align > 0 ? graph->workspace_align : 64;
  if (graph->workspace_size > 0) {
    LLVMValueRef is_null = LLVMBuildIsNull(e->b, ws, "ws_null");
    LLVMValueRef addr = LLVMBuildPtrToInt(e->b, ws, e->t_i64, "ws_addr");
    LLVMValueRef low = LLVMBuildAnd(e->b, addr, LLVMConstInt(e->t_i64, (unsigned long long)(align - 1), 0), "");
    LLVMValueRef bad = LLVMBuildOr(e->b, is_null, LLVMBuildICmp(e->b, LLVMIntNE, low, LLVMConstInt(e->t_i64, 0, 0), ""), "");
    LLVMBuildCondBr(e->b, bad, bad_bb, ok_bb);
  } else {
    LLVMBuildBr(e->b, ok_bb);
  }
  LLVMPositionBuilderAtEnd(e->b, bad_bb);
  LLVMBuildRet(e->b, LLVMConstInt(e->t_i32, 1, 0));
  LLVMPositionBuilderAtEnd(e->b, ok_bb);
  e->run = fn;
  e->ws = ws;
  e->pfor = pfor;
  e->pfor_ctx = LLVMGetParam(fn, n_params - 1);
  e->name = name;
  mlcc_status_t s = emit_kernel_calls(e, symbols);
  if (s == NULL) s = emit_output_copies(e);
  if (s == NULL) LLVMBuildRet(e->b, LLVMConstInt(e->t_i32, 0, 0));
  e->run = serial_run;
  e->pfor = e->pfor_ctx = e->args_block = NULL;
  // int NAME_run_parallel_v(ptr inputs, ptr outputs, ptr ws, ptr pfor, ptr ctx)
  if (s == NULL) {
    LLVMTypeRef vparams[5] = {e->t_ptr, e->t_ptr, e->t_ptr, e->t_ptr, e->t_ptr};
    snprintf(sym, sizeof(sym), "%s_run_parallel_v", name);
    LLVMTypeRef vty = LLVMFunctionType(e->t_i32, vparams, 5, 0);
    LLVMValueRef vfn = LLVMAddFunction(e->m, sym, vty);
    add_attr(e->c, vfn, LLVMAttributeFunctionIndex, "nounwind");
    LLVMPositionBuilderAtEnd(e->b, LLVMAppendBasicBlockInContext(e->c, vfn, "entry"));
    for (uint32_t i = 0; i < graph->n_inputs + graph->n_outputs; ++i) {
      bool is_in = i < graph->n_inputs;
      uint32_t j = is_in ? i : i - graph->n_inputs;
      LLVMValueRef idx = LLVMConstInt(e->t_i64, j, 0);
      LLVMValueRef slot = LLVMBuildInBoundsGEP2(e->b, e->t_ptr, LLVMGetParam(vfn, is_in ? 0 : 1),
                                                &idx, 1, "slot");
      LLVMValueRef p = LLVMBuildLoad2(e->b, e->t_ptr, slot, is_in ? "in" : "out");
      LLVMSetAlignment(p, 8);
      args[i] = p;
    }
    for (uint32_t i = 0; i < 3; ++i) args[n_params - 3 + i] = LLVMGetParam(vfn, 2 + i);
    LLVMBuildRet(e->b, LLVMBuildCall2(e->b, ty, fn, args, n_params, "r"));
  }
  free(params);
  free(args);
  return s;
}

mlcc_status_t mlcc_codegen_build_entry_ex(const mlcc_graph_t* graph, const char* name,
                                          char (*symbols)[40], const mlcc_target_t* target,
                                          LLVMContextRef llctx, LLVMModuleRef module) {
  return mlcc_codegen_build_entry_profiled(graph, name, symbols, target, false, llctx, module);
}

mlcc_status_t mlcc_codegen_build_entry_profiled(const mlcc_graph_t* graph, const char* name,
                                                char (*symbols)[40],
                                                const mlcc_target_t* target, bool profile,
                                                LLVMContextRef llctx, LLVMModuleRef module) {
  entry_t e;
  memset(&e, 0, sizeof(e));
  e.target = target;
  e.graph = graph;
  e.c = llctx;
  e.m = module;
  e.t_ptr = LLVMPointerTypeInContext(llctx, 0);
  e.t_i8 = LLVMInt8TypeInContext(llctx);
  e.t_i32 = LLVMInt32TypeInContext(llctx);
  e.t_i64 = LLVMInt64TypeInContext(llctx);
  size_t total = 0;
  if (profile) MLCC_RETURN_IF_ERROR(mlcc_profile_build_table(llctx, module, graph, target, name, &e.prof_table));
  MLCC_RETURN_IF_ERROR(
      mlcc_codegen_weights_layout(graph, &e.wvalues, &e.woffsets, &e.n_weights, &total));

  char sym[512];
  snprintf(sym, sizeof(sym), "%s_weights", name);
  e.weights = LLVMGetNamedGlobal(module, sym);
  if (e.weights == NULL) {
    e.weights = LLVMAddGlobal(module, LLVMArrayType(e.t_i8, (unsigned)total), sym);
    LLVMSetLinkage(e.weights, LLVMExternalLinkage);
    LLVMSetVisibility(e.weights, LLVMHiddenVisibility);
    LLVMSetGlobalConstant(e.weights, 1);
    LLVMSetAlignment(e.weights, 64);
  }

  // int NAME_run(ptr in..., ptr out..., ptr ws)
  uint32_t n_params = graph->n_inputs + graph->n_outputs + 1;
  LLVMTypeRef* params = calloc(n_params, sizeof(*params));
  if (params == NULL) {
    free(e.wvalues);
    free(e.woffsets);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (uint32_t i = 0; i < n_params; ++i) params[i] = e.t_ptr;
  LLVMTypeRef run_ty = LLVMFunctionType(e.t_i32, params, n_params, 0);
  free(params);
  snprintf(sym, sizeof(sym), "%s_run", name);
  e.run = LLVMAddFunction(module, sym, run_ty);
  add_attr(llctx, e.run, LLVMAttributeFunctionIndex, "nounwind");
  e.ws = LLVMGetParam(e.run, n_params - 1);
  e.b = LLVMCreateBuilderInContext(llctx);
  LLVMBasicBlockRef entry_bb = LLVMAppendBasicBlockInContext(llctx, e.run, "entry");
  LLVMBasicBlockRef bad_bb = LLVMAppendBasicBlockInContext(llctx, e.run, "bad_workspace");
  LLVMBasicBlockRef ok_bb = LLVMAppendBasicBlockInContext(llctx, e.run, "run");
  LLVMPositionBuilderAtEnd(e.b, entry_bb);
  int64_t align = graph->workspace_align > 0 ? graph->workspace_align : 64;
  if (graph->workspace_size > 0) {
    LLVMValueRef is_null = LLVMBuildIsNull(e.b, e.ws, "ws_null");
    LLVMValueRef addr = LLVMBuildPtrToInt(e.b, e.ws, e.t_i64, "ws_addr");
    LLVMValueRef low = LLVMBuildAnd(e.b, addr, LLVMConstInt(e.t_i64, (unsigned long long)(align - 1), 0), "ws_low");
    LLVMValueRef misaligned = LLVMBuildICmp(e.b, LLVMIntNE, low, LLVMConstInt(e.t_i64, 0, 0), "ws_misaligned");
    LLVMValueRef bad = LLVMBuildOr(e.b, is_null, misaligned, "ws_bad");
    LLVMBuildCondBr(e.b, bad, bad_bb, ok_bb);
  } else {
    LLVMBuildBr(e.b, ok_bb);
  }
  LLVMPositionBuilderAtEnd(e.b, bad_bb);
  LLVMBuildRet(e.b, LLVMConstInt(e.t_i32, 1, 0));
  LLVMPositionBuilderAtEnd(e.b, ok_bb);
  mlcc_status_t s = emit_kernel_calls(&e, symbols);
  if (s == NULL) s = emit_output_copies(&e);
  if (s == NULL) LLVMBuildRet(e.b, LLVMConstInt(e.t_i32, 0, 0));

  // int NAME_run_v(ptr inputs, ptr outputs, ptr ws)
  LLVMValueRef run_v = NULL;
  if (s == NULL) {
    LLVMTypeRef vparams[3] = {e.t_ptr, e.t_ptr, e.t_ptr};
    LLVMTypeRef run_v_ty = LLVMFunctionType(e.t_i32, vparams, 3, 0);
    snprintf(sym, sizeof(sym), "%s_run_v", name);
    run_v = LLVMAddFunction(module, sym, run_v_ty);
    add_attr(llctx, run_v, LLVMAttributeFunctionIndex, "nounwind");
    LLVMPositionBuilderAtEnd(e.b, LLVMAppendBasicBlockInContext(llctx, run_v, "entry"));
    LLVMValueRef* args = calloc(n_params, sizeof(*args));
    if (args == NULL) {
      s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      for (uint32_t i = 0; i < graph->n_inputs + graph->n_outputs; ++i) {
        bool is_in = i < graph->n_inputs;
        uint32_t j = is_in ? i : i - graph->n_inputs;
        LLVMValueRef idx = LLVMConstInt(e.t_i64, j, 0);
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(e.b, e.t_ptr, LLVMGetParam(run_v, is_in ? 0 : 1),
                                                  &idx, 1, "slot");
        LLVMValueRef p = LLVMBuildLoad2(e.b, e.t_ptr, slot, is_in ? "in" : "out");
        LLVMSetAlignment(p, 8);
        args[i] = p;
      }
      args[n_params - 1] = LLVMGetParam(run_v, 2);
      LLVMValueRef r = LLVMBuildCall2(e.b, run_ty, e.run, args, n_params, "r");
      LLVMBuildRet(e.b, r);
      free(args);
    }
  }
  if (s == NULL) s = build_run_parallel(&e, name, symbols, run_ty);
  LLVMValueRef output_shape = NULL;
  if (s == NULL) s = build_output_shape(&e, name, &output_shape);
  if (s == NULL) s = build_info(&e, name, run_v, output_shape);
  LLVMDisposeBuilder(e.b);
  free(e.wvalues);
  free(e.woffsets);
  return s;
}

// The entry object's cache key (mlcc_object_cache_t): SHA-256 over the
// format, versions, target, opt level, output kind and the unoptimized
// module text (which names every kernel symbol, buffer offset and weight
// offset the entry uses). False when the text cannot be produced.
static bool entry_object_key(LLVMModuleRef module, const mlcc_codegen_options_t* options,
                             mlcc_output_kind_t kind, char out_hex[65]) {
  char* text = LLVMPrintModuleToString(module);
  if (text == NULL) return false;
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
  const mlcc_target_t* t = options->target;
  char head[128];
  int n = snprintf(head, sizeof(head), "mlcc-entry-key-v1\n%d\n%d\n%d\n", options->opt_level,
                   (int)kind, options->profile ? 1 : 0);
  ok = ok && n > 0 && (size_t)n < sizeof(head) && EVP_DigestUpdate(md, head, (size_t)n) == 1;
  const char* parts[] = {MLCC_VERSION, mlcc_codegen_llvm_version(), t->triple, t->cpu,
                         t->features, text};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && ok; ++i) {
    // Each part with its terminating NUL: no two part lists hash alike.
    ok = EVP_DigestUpdate(md, parts[i], strlen(parts[i]) + 1) == 1;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int dlen = 0;
  ok = ok && EVP_DigestFinal_ex(md, digest, &dlen) == 1 && dlen == 32;
  EVP_MD_CTX_free(md);
  LLVMDisposeMessage(text);
  if (!ok) return false;
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < 32; ++i) {
    out_hex[2 * i] = hex[digest[i] >> 4];
    out_hex[2 * i + 1] = hex[digest[i] & 15];
  }
  out_hex[64] = '\0';
  return true;
}

mlcc_status_t mlcc_codegen_entry(const mlcc_graph_t* graph,
                                 const mlcc_codegen_options_t* options,
                                 mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  if (options == NULL || options->target == NULL || options->name == NULL ||
      options->name[0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "entry codegen needs a target and a name");
  }
  char(*symbols)[40] = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_codegen_kernel_symbols(graph, options, &symbols));
  LLVMTargetMachineRef tm = NULL;
  mlcc_status_t s = mlcc_llvm_target_machine(options->target, options->opt_level, &tm);
  if (s != NULL) {
    free(symbols);
    return s;
  }
  LLVMContextRef llctx = LLVMContextCreate();
  LLVMModuleRef module = LLVMModuleCreateWithNameInContext(options->name, llctx);
  mlcc_llvm_set_module_target(module, tm);
  s = mlcc_codegen_build_entry_profiled(graph, options->name, symbols, options->target,
                                        options->profile, llctx, module);
  if (s == NULL) s = mlcc_llvm_verify(module, options->name);
  char key[65] = {0};
  const mlcc_object_cache_t* cache = kind == MLCC_OUTPUT_OBJECT ? options->entry_cache : NULL;
  bool hit = false;
  if (s == NULL && cache != NULL && entry_object_key(module, options, kind, key)) {
    hit = cache->lookup(cache->ctx, key, out);
  }
  if (s == NULL && !hit) {
    s = mlcc_llvm_optimize(module, tm, options->opt_level);
    if (s == NULL) s = mlcc_llvm_emit(module, tm, kind, out);
    if (s == NULL && cache != NULL && key[0] != '\0') cache->store(cache->ctx, key, out);
  }
  LLVMDisposeModule(module);
  LLVMContextDispose(llctx);
  LLVMDisposeTargetMachine(tm);
  free(symbols);
  return s;
}

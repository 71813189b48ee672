// SPDX-License-Identifier: Apache-2.0
// See entry_profile.h.
#include "targets/codegen/entry_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ops.h"
#include "targets/emit/emit.h"
#include "targets/kernels/kernels.h"

// Linux's CLOCK_MONOTONIC on x86-64, aarch64 and riscv64.
enum { kClockMonotonic = 1, kRowFields = 7, kRowCalls = 4, kRowNs = 5, kRowMinNs = 6 };

// The emitter's flops (targets/kernels/kernels.h); without one, an
// elementwise op costs one operation per output element.
static int64_t node_flops(const mlcc_node_t* n) {
  const mlcc_value_t* y = n->n_outputs > 0 ? n->outputs[0] : NULL;
  int64_t out = mlcc_kernels_numel(y);
  if (out < 0) return -1;
  const mlcc_emitter_t* e = mlcc_emitter(n->op);
  if (e != NULL && e->flops != NULL) return e->flops(n);
  const mlcc_op_desc_t* desc = mlcc_op_desc(n->op);
  if (desc != NULL && (desc->flags & MLCC_OPF_ELEMENTWISE)) return out;
  return -1;
}

int64_t mlcc_profile_kernel_flops(const mlcc_kernel_t* kernel) {
  int64_t total = 0;
  for (uint32_t i = 0; i < kernel->n_nodes; ++i) {
    int64_t f = node_flops(kernel->nodes[i]);
    if (f < 0) return i == 0 ? -1 : total;  // an unknown epilogue node: the anchor's count
    total += f;
  }
  return total;
}

static LLVMValueRef private_cstring(LLVMContextRef c, LLVMModuleRef m, const char* s,
                                    const char* gname) {
  LLVMValueRef init = LLVMConstStringInContext(c, s, (unsigned)strlen(s), 0);
  LLVMValueRef g = LLVMAddGlobal(m, LLVMTypeOf(init), gname);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return g;
}

static LLVMTypeRef row_type(LLVMContextRef c) {
  LLVMTypeRef p = LLVMPointerTypeInContext(c, 0), i64 = LLVMInt64TypeInContext(c);
  LLVMTypeRef f[kRowFields] = {p, p, i64, i64, i64, i64, i64};
  return LLVMStructTypeInContext(c, f, kRowFields, 0);
}

mlcc_status_t mlcc_profile_build_table(LLVMContextRef llctx, LLVMModuleRef module,
                                       const mlcc_graph_t* graph, const mlcc_target_t* target,
                                       const char* name, LLVMValueRef* out_table) {
  LLVMTypeRef t_row = row_type(llctx);
  LLVMTypeRef t_i64 = LLVMInt64TypeInContext(llctx), t_i32 = LLVMInt32TypeInContext(llctx);
  LLVMTypeRef t_ptr = LLVMPointerTypeInContext(llctx, 0);
  uint32_t n = graph->n_kernels;
  LLVMValueRef* rows = calloc(n ? n : 1, sizeof(*rows));
  if (rows == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  LLVMValueRef max64 = LLVMConstInt(t_i64, (unsigned long long)INT64_MAX, 0);
  for (uint32_t k = 0; k < n; ++k) {
    const mlcc_kernel_t* kernel = &graph->kernels[k];
    char ops[512] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < kernel->n_nodes && len + 1 < sizeof(ops); ++i) {
      int w = snprintf(ops + len, sizeof(ops) - len, "%s%s", i ? "+" : "",
                       mlcc_op_name(kernel->nodes[i]->op));
      if (w < 0) break;
      len += (size_t)w;
    }
    if (len >= sizeof(ops)) len = sizeof(ops) - 1;
    ops[len] = '\0';
    char gname[64];
    snprintf(gname, sizeof(gname), ".prof.name.%u", k);
    const char* node_name = kernel->nodes[0]->name ? kernel->nodes[0]->name : "";
    LLVMValueRef nm = private_cstring(llctx, module, node_name, gname);
    snprintf(gname, sizeof(gname), ".prof.ops.%u", k);
    LLVMValueRef op = private_cstring(llctx, module, ops, gname);
    LLVMValueRef f[kRowFields] = {
        nm, op, LLVMConstInt(t_i64, (unsigned long long)mlcc_profile_kernel_flops(kernel), 1),
        LLVMConstInt(t_i64, (unsigned long long)mlcc_emit_parallel_units(kernel, target), 0),
        LLVMConstInt(t_i64, 0, 0), LLVMConstInt(t_i64, 0, 0), max64};
    rows[k] = LLVMConstStructInContext(llctx, f, kRowFields, 0);
  }
  char sym[600];
  snprintf(sym, sizeof(sym), "%s_profile_rows", name);
  LLVMValueRef init = LLVMConstArray(t_row, rows, n);
  LLVMValueRef table = LLVMAddGlobal(module, LLVMTypeOf(init), sym);
  LLVMSetInitializer(table, init);
  LLVMSetLinkage(table, LLVMInternalLinkage);
  LLVMSetAlignment(table, 8);
  free(rows);

  LLVMBuilderRef b = LLVMCreateBuilderInContext(llctx);
  // int32_t NAME_profile(const mlcc_profile_entry_t **out_rows)
  snprintf(sym, sizeof(sym), "%s_profile", name);
  LLVMTypeRef fty = LLVMFunctionType(t_i32, &t_ptr, 1, 0);
  LLVMValueRef fn = LLVMAddFunction(module, sym, fty);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(llctx, fn, "entry"));
  LLVMBasicBlockRef set_bb = LLVMAppendBasicBlockInContext(llctx, fn, "set");
  LLVMBasicBlockRef ret_bb = LLVMAppendBasicBlockInContext(llctx, fn, "ret");
  LLVMValueRef out = LLVMGetParam(fn, 0);
  LLVMBuildCondBr(b, LLVMBuildIsNull(b, out, ""), ret_bb, set_bb);
  LLVMPositionBuilderAtEnd(b, set_bb);
  LLVMBuildStore(b, table, out);
  LLVMBuildBr(b, ret_bb);
  LLVMPositionBuilderAtEnd(b, ret_bb);
  LLVMBuildRet(b, LLVMConstInt(t_i32, n, 0));
  // void NAME_profile_reset(void)
  snprintf(sym, sizeof(sym), "%s_profile_reset", name);
  LLVMValueRef rfn = LLVMAddFunction(module, sym, LLVMFunctionType(LLVMVoidTypeInContext(llctx), NULL, 0, 0));
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(llctx, rfn, "entry"));
  for (uint32_t k = 0; k < n; ++k) {
    for (unsigned f = kRowCalls; f < kRowFields; ++f) {
      LLVMValueRef idx3[3] = {LLVMConstInt(t_i32, 0, 0), LLVMConstInt(t_i32, k, 0),
                              LLVMConstInt(t_i32, f, 0)};
      LLVMValueRef p = LLVMBuildInBoundsGEP2(b, LLVMGlobalGetValueType(table), table, idx3, 3, "");
      LLVMBuildStore(b, f == kRowMinNs ? max64 : LLVMConstInt(t_i64, 0, 0), p);
    }
  }
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  *out_table = table;
  return mlcc_ok_status();
}

LLVMValueRef mlcc_profile_emit_now(LLVMBuilderRef b, LLVMModuleRef module) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
  LLVMValueRef fn = LLVMGetBasicBlockParent(cur);
  LLVMContextRef c = LLVMGetModuleContext(module);
  LLVMTypeRef t_i64 = LLVMInt64TypeInContext(c), t_i32 = LLVMInt32TypeInContext(c);
  LLVMTypeRef t_ptr = LLVMPointerTypeInContext(c, 0);
  LLVMTypeRef f2[2] = {t_i64, t_i64};
  LLVMTypeRef t_ts = LLVMStructTypeInContext(c, f2, 2, 0);  // struct timespec (LP64)
  // One slot per function, first in its entry block, shared by every clock
  // read (a slot per read would grow the entry's frame with the kernel
  // count; NAME_STACK_SIZE counts one).
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  LLVMValueRef ts = NULL;
  for (LLVMValueRef i = first; i != NULL && ts == NULL; i = LLVMGetNextInstruction(i)) {
    size_t len = 0;
    const char* name = LLVMGetValueName2(i, &len);
    if (LLVMIsAAllocaInst(i) && LLVMGetAllocatedType(i) == t_ts && len == 2 &&
        memcmp(name, "ts", 2) == 0) {
      ts = i;
    }
  }
  if (ts == NULL) {
    LLVMBuilderRef ab = LLVMCreateBuilderInContext(c);
    if (first != NULL) {
      LLVMPositionBuilderBefore(ab, first);
    } else {
      LLVMPositionBuilderAtEnd(ab, entry);
    }
    ts = LLVMBuildAlloca(ab, t_ts, "ts");
    LLVMDisposeBuilder(ab);
  }
  LLVMTypeRef params[2] = {t_i32, t_ptr};
  LLVMTypeRef fty = LLVMFunctionType(t_i32, params, 2, 0);
  LLVMValueRef cg = LLVMGetNamedFunction(module, "clock_gettime");
  if (cg == NULL) cg = LLVMAddFunction(module, "clock_gettime", fty);
  LLVMValueRef args[2] = {LLVMConstInt(t_i32, kClockMonotonic, 0), ts};
  LLVMBuildCall2(b, fty, cg, args, 2, "");
  LLVMValueRef sec = LLVMBuildLoad2(b, t_i64, LLVMBuildStructGEP2(b, t_ts, ts, 0, ""), "sec");
  LLVMValueRef nsec = LLVMBuildLoad2(b, t_i64, LLVMBuildStructGEP2(b, t_ts, ts, 1, ""), "nsec");
  return LLVMBuildAdd(b, LLVMBuildMul(b, sec, LLVMConstInt(t_i64, 1000000000, 0), ""), nsec,
                      "now");
}

void mlcc_profile_emit_add(LLVMBuilderRef b, LLVMModuleRef module, LLVMValueRef table,
                           uint32_t k, LLVMValueRef t0, LLVMValueRef t1) {
  LLVMContextRef c = LLVMGetModuleContext(module);
  LLVMTypeRef t_i64 = LLVMInt64TypeInContext(c), t_i32 = LLVMInt32TypeInContext(c);
  LLVMTypeRef t_tab = LLVMGlobalGetValueType(table);
  LLVMValueRef dt = LLVMBuildSub(b, t1, t0, "dt");
  LLVMValueRef slot[kRowFields];
  for (unsigned f = kRowCalls; f < kRowFields; ++f) {
    LLVMValueRef idx[3] = {LLVMConstInt(t_i32, 0, 0), LLVMConstInt(t_i32, k, 0),
                           LLVMConstInt(t_i32, f, 0)};
    slot[f] = LLVMBuildInBoundsGEP2(b, t_tab, table, idx, 3, "");
  }
  LLVMValueRef calls = LLVMBuildLoad2(b, t_i64, slot[kRowCalls], "");
  LLVMBuildStore(b, LLVMBuildAdd(b, calls, LLVMConstInt(t_i64, 1, 0), ""), slot[kRowCalls]);
  LLVMValueRef ns = LLVMBuildLoad2(b, t_i64, slot[kRowNs], "");
  LLVMBuildStore(b, LLVMBuildAdd(b, ns, dt, ""), slot[kRowNs]);
  LLVMValueRef mn = LLVMBuildLoad2(b, t_i64, slot[kRowMinNs], "");
  LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, dt, mn, "");
  LLVMBuildStore(b, LLVMBuildSelect(b, lt, dt, mn, ""), slot[kRowMinNs]);
}

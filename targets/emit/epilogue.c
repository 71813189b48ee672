// SPDX-License-Identifier: Apache-2.0
// The fused epilogue (emit.h: mlcc_emit_store_output, mlcc_emit_store_output_vec):
// an anchor kernel's output element, or a vector of them, is run through the
// kernel's chain of elementwise nodes (the scalar formulas of
// targets/kernels/elementwise.c) before it is stored, so the chain's
// intermediates never reach memory. mlcc_emit_chain_value is the chain
// operand lookup every evaluator of a chain uses (here and the elementwise
// kernel).
#include <stdlib.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/emit/emit.h"

LLVMValueRef mlcc_emit_chain_value(const mlcc_node_t* const* chain, uint32_t c,
                                   const LLVMValueRef* vals, const mlcc_value_t* in) {
  for (uint32_t j = c; j-- > 0;) {
    if (mlcc_node_output(chain[j], 0) == in) return vals[j];
  }
  return NULL;
}

mlcc_status_t mlcc_emit_store_output(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                     uint32_t out_index, LLVMValueRef idx,
                                     LLVMValueRef v) {
  const mlcc_kernel_t* k = ctx->kernel;
  if (out_index >= node->n_outputs || node->outputs[out_index] == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: store to absent output %u",
                            mlcc_op_name(node->op), out_index);
  }
  bool fused = k != NULL && k->n_nodes > 1 && k->nodes[0] == node && out_index == 0;
  if (!fused) {
    mlcc_emit_store(ctx, node->outputs[out_index], idx, v);
    return mlcc_ok_status();
  }
  const mlcc_shape_t* anchor_shape = &node->outputs[0]->shape;
  // vals[j]: the (unmaterialized) value of chain node j at this element.
  LLVMValueRef vals_small[16];
  LLVMValueRef* vals = vals_small;
  if (k->n_nodes > 16) {
    vals = calloc(k->n_nodes, sizeof(*vals));
    if (vals == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  vals[0] = v;
  mlcc_status_t st = mlcc_ok_status();
  for (uint32_t i = 1; i < k->n_nodes && st == NULL; ++i) {
    const mlcc_node_t* n = k->nodes[i];
    const mlcc_value_t* out = mlcc_node_output(n, 0);
    if (out == NULL || !mlcc_shape_equal(&out->shape, anchor_shape)) {
      char a[96], b[96];
      st = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "epilogue %s output shape %s differs from the anchor's %s",
                            mlcc_op_name(n->op),
                            out ? mlcc_shape_format(&out->shape, a, sizeof(a)) : "?",
                            mlcc_shape_format(anchor_shape, b, sizeof(b)));
      break;
    }
    LLVMValueRef ops_small[8];
    LLVMValueRef* ops = ops_small;
    if (n->n_inputs > 8) {
      ops = calloc(n->n_inputs, sizeof(*ops));
      if (ops == NULL) {
        st = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        break;
      }
    }
    for (uint32_t s = 0; s < n->n_inputs; ++s) {
      const mlcc_value_t* in = n->inputs[s];
      ops[s] = NULL;
      if (in == NULL) continue;
      // A slot reading an earlier chain node's output takes its value.
      ops[s] = mlcc_emit_chain_value((const mlcc_node_t* const*)k->nodes, i, vals, in);
      if (ops[s] == NULL) {
        LLVMValueRef jdx = mlcc_emit_broadcast_index(ctx, &out->shape, idx, &in->shape);
        ops[s] = mlcc_emit_load(ctx, in, jdx);
      }
    }
    LLVMValueRef r = NULL;
    st = mlcc_emit_elementwise_scalar(ctx, n, ops, &r);
    if (ops != ops_small) free(ops);
    if (!mlcc_status_is_ok(st)) {
      st = mlcc_node_annotate(n, st);
    } else if (r == NULL) {
      st = mlcc_make_status(MLCC_STATUS_INTERNAL, "epilogue %s produced no value",
                            mlcc_op_name(n->op));
    }
    vals[i] = r;
  }
  if (st == NULL) {
    const mlcc_node_t* last = k->nodes[k->n_nodes - 1];
    mlcc_emit_store(ctx, last->outputs[0], idx, vals[k->n_nodes - 1]);
  }
  if (vals != vals_small) free(vals);
  return st;
}

// |s| (scalar) in every lane of a |lanes|-wide vector.
static LLVMValueRef vec_splat(mlcc_emit_ctx_t* ctx, LLVMValueRef s, unsigned lanes) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), lanes);
  LLVMValueRef v = LLVMBuildInsertElement(ctx->b, LLVMGetUndef(vt), s,
                                          LLVMConstInt(ctx->t_i32, 0, 0), "");
  return LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(vt),
                                LLVMConstNull(LLVMVectorType(ctx->t_i32, lanes)), "splat");
}

// Lanes idx..idx+lanes-1 of F32 |value| as one (element-aligned) vector load.
static LLVMValueRef vec_load_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value,
                                 LLVMValueRef idx, unsigned lanes) {
  LLVMTypeRef st;
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, lanes);
  LLVMValueRef p = mlcc_emit_element_ptr(ctx, value, idx, &st);
  if (p == NULL) return LLVMGetUndef(vt);
  LLVMValueRef v = LLVMBuildLoad2(ctx->b, vt, p, "vld");
  LLVMSetAlignment(v, 4);
  return v;
}

// Epilogue operand |in| (F32, broadcasting to |out_shape|) for output
// elements idx..idx+lanes-1: a vector load when its index runs contiguously
// along the lanes, a splat when it is constant along them (per-channel
// bias), decided at run time from idx's position in the innermost block;
// lane-by-lane loads otherwise.
static LLVMValueRef vec_operand(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* out_shape,
                                const mlcc_value_t* in, LLVMValueRef idx, unsigned lanes) {
  int64_t n_in = mlcc_shape_numel_unchecked(&in->shape);
  if (n_in <= 1) return vec_splat(ctx, mlcc_emit_load(ctx, in, mlcc_emit_i64(ctx, 0)), lanes);
  if (n_in == mlcc_shape_numel_unchecked(out_shape)) return vec_load_f32(ctx, in, idx, lanes);
  // Innermost block: trailing output dims along which |in| is broadcast
  // (splat inside a block), else trailing dims it spans fully (contiguous).
  int32_t r = out_shape->rank, off = r - in->shape.rank;
  int64_t block = 1;
  bool bcast = false;
  for (int32_t d = r - 1; d >= 0; --d) {
    int64_t od = out_shape->dims[d];
    int64_t id = d - off >= 0 ? in->shape.dims[d - off] : 1;
    if (od == 1) continue;
    bool is_b = id == 1;
    if (block == 1) bcast = is_b;
    if (is_b != bcast) break;
    block *= od;
  }
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, lanes);
  LLVMValueRef fast = NULL, slow = NULL;
  mlcc_if_t br = {NULL, NULL, NULL};
  LLVMBasicBlockRef fast_bb = NULL, slow_bb = NULL;
  bool branch = block >= (int64_t)lanes;
  if (branch) {
    LLVMValueRef pos = LLVMBuildURem(b, idx, mlcc_emit_i64(ctx, block), "vpos");
    LLVMValueRef fits =
        LLVMBuildICmp(b, LLVMIntSLE, pos, mlcc_emit_i64(ctx, block - (int64_t)lanes), "vfits");
    br = mlcc_emit_if_begin(ctx, fits);
    LLVMValueRef j0 = mlcc_emit_broadcast_index(ctx, out_shape, idx, &in->shape);
    fast = bcast ? vec_splat(ctx, mlcc_emit_load(ctx, in, j0), lanes)
                 : vec_load_f32(ctx, in, j0, lanes);
    fast_bb = LLVMGetInsertBlock(b);
    mlcc_emit_if_else(ctx, &br);
  }
  slow = LLVMGetUndef(vt);
  for (unsigned l = 0; l < lanes; ++l) {
    LLVMValueRef li = LLVMBuildNSWAdd(b, idx, mlcc_emit_i64(ctx, l), "");
    LLVMValueRef j = mlcc_emit_broadcast_index(ctx, out_shape, li, &in->shape);
    slow = LLVMBuildInsertElement(b, slow, mlcc_emit_load(ctx, in, j),
                                  LLVMConstInt(ctx->t_i32, l, 0), "");
  }
  if (!branch) return slow;
  slow_bb = LLVMGetInsertBlock(b);
  mlcc_emit_if_end(ctx, &br);
  LLVMValueRef phi = LLVMBuildPhi(b, vt, "vop");
  LLVMValueRef vals[2] = {fast, slow};
  LLVMBasicBlockRef bbs[2] = {fast_bb, slow_bb};
  LLVMAddIncoming(phi, vals, bbs, 2);
  return phi;
}

// The fused epilogue of kernel |k| applied to whole vectors (F32 chains of
// vectorizable formulas, see mlcc_emit_elementwise_vector_ok); false if the
// chain does not qualify (nothing emitted).
static bool vec_epilogue_ok(const mlcc_kernel_t* k, unsigned lanes) {
  if (lanes == 0 || lanes > 64) return false;
  const mlcc_value_t* a = k->nodes[0]->outputs[0];
  if (a->dtype != MLCC_DTYPE_F32) return false;
  for (uint32_t i = 1; i < k->n_nodes; ++i) {
    const mlcc_node_t* n = k->nodes[i];
    const mlcc_value_t* o = mlcc_node_output(n, 0);
    if (o == NULL || !mlcc_shape_equal(&o->shape, &a->shape)) return false;
    if (n->n_inputs > 8 || !mlcc_emit_elementwise_vector_ok(n)) return false;
  }
  return true;
}

static mlcc_status_t vec_epilogue(mlcc_emit_ctx_t* ctx, const mlcc_kernel_t* k,
                                  LLVMValueRef idx, LLVMValueRef v, unsigned lanes) {
  const mlcc_shape_t* shape = &k->nodes[0]->outputs[0]->shape;
  LLVMValueRef vals_small[16];
  LLVMValueRef* vals = vals_small;
  if (k->n_nodes > 16) {
    vals = calloc(k->n_nodes, sizeof(*vals));
    if (vals == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  vals[0] = v;
  mlcc_status_t st = mlcc_ok_status();
  for (uint32_t i = 1; i < k->n_nodes && st == NULL; ++i) {
    const mlcc_node_t* n = k->nodes[i];
    LLVMValueRef ops[8];
    for (uint32_t s = 0; s < n->n_inputs; ++s) {
      const mlcc_value_t* in = n->inputs[s];
      ops[s] = NULL;
      if (in == NULL) continue;
      ops[s] = mlcc_emit_chain_value((const mlcc_node_t* const*)k->nodes, i, vals, in);
      // Operands read twice in one node are loaded once.
      for (uint32_t t = 0; t < s && ops[s] == NULL; ++t) {
        if (n->inputs[t] == in) ops[s] = ops[t];
      }
      if (ops[s] == NULL) ops[s] = vec_operand(ctx, shape, in, idx, lanes);
    }
    LLVMValueRef r = NULL;
    st = mlcc_emit_elementwise_scalar(ctx, n, ops, &r);
    if (!mlcc_status_is_ok(st)) {
      st = mlcc_node_annotate(n, st);
    } else if (r == NULL) {
      st = mlcc_make_status(MLCC_STATUS_INTERNAL, "epilogue %s produced no value",
                            mlcc_op_name(n->op));
    }
    vals[i] = r;
  }
  if (st == NULL) {
    const mlcc_value_t* out = k->nodes[k->n_nodes - 1]->outputs[0];
    LLVMTypeRef sty;
    LLVMValueRef p = mlcc_emit_element_ptr(ctx, out, idx, &sty);
    if (p != NULL) {
      LLVMValueRef s = LLVMBuildStore(ctx->b, vals[k->n_nodes - 1], p);
      LLVMSetAlignment(s, 4);
    }
  }
  if (vals != vals_small) free(vals);
  return st;
}

mlcc_status_t mlcc_emit_store_output_vec(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                         uint32_t out_index, LLVMValueRef idx,
                                         LLVMValueRef v) {
  const mlcc_kernel_t* k = ctx->kernel;
  if (out_index >= node->n_outputs || node->outputs[out_index] == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: store to absent output %u",
                            mlcc_op_name(node->op), out_index);
  }
  LLVMTypeRef vt = LLVMTypeOf(v);
  unsigned lanes = LLVMGetVectorSize(vt);
  bool fused = k != NULL && k->n_nodes > 1 && k->nodes[0] == node && out_index == 0;
  const mlcc_value_t* out = node->outputs[out_index];
  if (!fused && (out->dtype == MLCC_DTYPE_F32 || out->dtype == MLCC_DTYPE_F64)) {
    LLVMTypeRef st;
    LLVMValueRef p = mlcc_emit_element_ptr(ctx, out, idx, &st);
    if (p == NULL) return mlcc_ok_status();
    LLVMValueRef s = LLVMBuildStore(ctx->b, v, p);
    LLVMSetAlignment(s, (unsigned)mlcc_dtype_size(out->dtype));
    return mlcc_ok_status();
  }
  // RVV: LLVM assumes only VLEN >= 128, so vectors wider than 128 bits use
  // register groups (LMUL 2) and the epilogue's extra pressure makes the
  // kernel spill them with vl2r.v/vs2r.v, which qemu 7.2 cannot translate;
  // there the wide-vector epilogue keeps the lane loop.
  bool rvv_wide = ctx->target != NULL && ctx->target->arch == MLCC_ARCH_RISCV64 && lanes > 4;
  if (fused && !rvv_wide && LLVMGetElementType(vt) == ctx->t_f32 && vec_epilogue_ok(k, lanes)) {
    return vec_epilogue(ctx, k, idx, v, lanes);
  }
  // Other epilogues: spill the lanes to a stack slot and run the scalar
  // epilogue in a loop over them (one copy of the epilogue code per call
  // site) instead of unrolling it per lane.
  LLVMTypeRef et = LLVMGetElementType(vt);
  LLVMValueRef slot = mlcc_emit_var(ctx, LLVMArrayType(et, lanes), NULL);
  LLVMBuildStore(ctx->b, v, slot);
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, (int64_t)lanes, "lane");
  LLVMValueRef lp = LLVMBuildInBoundsGEP2(ctx->b, et, slot, &l.iv, 1, "");
  LLVMValueRef lane = LLVMBuildLoad2(ctx->b, et, lp, "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, out_index,
                                            LLVMBuildNSWAdd(ctx->b, idx, l.iv, ""), lane);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

// SPDX-License-Identifier: Apache-2.0
// Kernel emitter of the elementwise op family (every row flagged
// MLCC_OPF_ELEMENTWISE in ir/ops.def): loop nests, vectorization, the
// variadic ops' many-input path. The scalar formulas are the toolkit's
// (mlcc_emit_elementwise_scalar, targets/emit/elementwise_scalar.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/emit/emit.h"
#include "targets/kernels/kernels.h"

#define MAX_EW_INPUTS 64

//===----------------------------------------------------------------------===//
// mlcc_emit_elementwise
//===----------------------------------------------------------------------===//

// The loop nest of an elementwise kernel: the output's dims with size-1 dims
// dropped and adjacent dims merged when every array (output and external
// inputs) is contiguous or broadcast across them alike. Array 0 is the
// output; stride 0 means "broadcast along this dim".
#define EW_MAX_ARRAYS 72
typedef struct ew_nest_t {
  int n_dims;                                  // merged loop dims, outermost first
  int64_t extent[MLCC_MAX_RANK];
  int64_t stride[EW_MAX_ARRAYS][MLCC_MAX_RANK];
  uint32_t n_arrays;
  const mlcc_value_t* arrays[EW_MAX_ARRAYS];
} ew_nest_t;

// Adds external input |v| (broadcasting to |out|) to |nest| unless present.
static bool nest_add(ew_nest_t* nest, const mlcc_value_t* v, const mlcc_shape_t* out) {
  for (uint32_t a = 0; a < nest->n_arrays; ++a) {
    if (nest->arrays[a] == v) return true;
  }
  if (nest->n_arrays >= EW_MAX_ARRAYS || v->shape.rank > out->rank) return false;
  nest->arrays[nest->n_arrays++] = v;
  return true;
}

// Computes the merged loop nest over |out| for the arrays in |nest|.
static void nest_plan(ew_nest_t* nest, const mlcc_shape_t* out) {
  int64_t st[EW_MAX_ARRAYS][MLCC_MAX_RANK];
  for (uint32_t a = 0; a < nest->n_arrays; ++a) {
    const mlcc_shape_t* sh = a == 0 ? out : &nest->arrays[a]->shape;
    int off = out->rank - sh->rank;
    int64_t s = 1;
    for (int d = out->rank - 1; d >= 0; --d) {
      int k = d - off;
      int64_t dim = k >= 0 ? sh->dims[k] : 1;
      st[a][d] = dim == 1 ? 0 : s;
      s *= dim > 0 ? dim : 1;
    }
  }
  // Merge from the innermost dim outwards.
  int64_t ext[MLCC_MAX_RANK], gst[EW_MAX_ARRAYS][MLCC_MAX_RANK];
  int n = 0;
  for (int d = out->rank - 1; d >= 0; --d) {
    if (out->dims[d] == 1) continue;
    bool merge = n > 0;
    for (uint32_t a = 0; a < nest->n_arrays && merge; ++a) {
      merge = st[a][d] == gst[a][n - 1] * ext[n - 1];
    }
    if (merge) {
      ext[n - 1] *= out->dims[d];
    } else {
      ext[n] = out->dims[d];
      for (uint32_t a = 0; a < nest->n_arrays; ++a) gst[a][n] = st[a][d];
      ++n;
    }
  }
  nest->n_dims = n;
  for (int g = 0; g < n; ++g) {  // reverse: outermost first
    nest->extent[g] = ext[n - 1 - g];
    for (uint32_t a = 0; a < nest->n_arrays; ++a) nest->stride[a][g] = gst[a][n - 1 - g];
  }
}

// Max/Min/Sum/Mean: ONNX variadic, 1 to 2^31-1 inputs.
static bool is_variadic(mlcc_op_t op) {
  return op == MLCC_OP_MAX || op == MLCC_OP_MIN || op == MLCC_OP_SUM || op == MLCC_OP_MEAN;
}

// A variadic node folded with run-time loops ("many" path; ONNX Max/Min/Sum/
// Mean, opsets 1-17): used when it has more than MAX_EW_INPUTS inputs or its
// inputs do not fit the kernel's loop nest. The present inputs outside the
// chain, except the first present slot, are grouped by shape; each group's
// base pointers are stored once per call into a stack array [count x ptr],
// and per output element a loop over that array folds the group's elements
// (all read at one broadcast index), so the code does not grow with the
// arity. Arrays are malloc-owned by the struct (many_free).
typedef struct ew_many_t {
  uint32_t first;              // first present slot (folded first)
  uint32_t n_groups;
  const mlcc_shape_t** shape;  // [n_groups] the group's input shape
  int64_t* count;              // [n_groups]
  LLVMValueRef* ptrs;          // [n_groups] alloca [count x ptr]
} ew_many_t;

static void many_free(ew_many_t* m) {
  free(m->shape);
  free(m->count);
  free(m->ptrs);
  memset(m, 0, sizeof(*m));
}

static bool chain_internal(const mlcc_node_t* const* chain, uint32_t c, const mlcc_value_t* in) {
  for (uint32_t j = 0; j < c; ++j) {
    if (mlcc_node_output(chain[j], 0) == in) return true;
  }
  return false;
}

// Builds |m| for chain node |c| and stores the groups' pointers at the
// builder's position (before the loop nest). Errors: RESOURCE_EXHAUSTED,
// INTERNAL when an input is not a kernel argument.
static mlcc_status_t many_prepare(mlcc_emit_ctx_t* ctx, const mlcc_node_t* const* chain,
                                  uint32_t c, ew_many_t* m) {
  const mlcc_node_t* n = chain[c];
  memset(m, 0, sizeof(*m));
  uint32_t cap = n->n_inputs ? n->n_inputs : 1;
  uint32_t* gid = (uint32_t*)malloc(cap * sizeof(uint32_t));
  int64_t* fill = (int64_t*)calloc(cap, sizeof(int64_t));
  m->shape = (const mlcc_shape_t**)malloc(cap * sizeof(*m->shape));
  m->count = (int64_t*)calloc(cap, sizeof(int64_t));
  m->ptrs = (LLVMValueRef*)calloc(cap, sizeof(LLVMValueRef));
  mlcc_status_t st = mlcc_ok_status();
  if (gid == NULL || fill == NULL || m->shape == NULL || m->count == NULL || m->ptrs == NULL) {
    st = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s",
                          mlcc_op_name(n->op));
    goto done;
  }
  m->first = n->n_inputs;
  for (uint32_t s = 0; s < n->n_inputs; ++s) {
    const mlcc_value_t* in = n->inputs[s];
    gid[s] = UINT32_MAX;
    if (in == NULL) continue;
    if (m->first == n->n_inputs) {
      m->first = s;
      continue;
    }
    if (chain_internal(chain, c, in)) continue;
    uint32_t g = 0;
    while (g < m->n_groups && !mlcc_shape_equal(m->shape[g], &in->shape)) ++g;
    if (g == m->n_groups) m->shape[m->n_groups++] = &in->shape;
    gid[s] = g;
    ++m->count[g];
  }
  for (uint32_t g = 0; g < m->n_groups; ++g) {
    m->ptrs[g] = mlcc_emit_var(ctx, LLVMArrayType(ctx->t_ptr, (unsigned)m->count[g]), NULL);
  }
  for (uint32_t s = 0; s < n->n_inputs; ++s) {
    if (gid[s] == UINT32_MAX) continue;
    LLVMValueRef base = mlcc_emit_ptr(ctx, n->inputs[s]);
    if (base == NULL) {
      st = mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: input %u is not a kernel argument",
                            mlcc_op_name(n->op), s);
      goto done;
    }
    uint32_t g = gid[s];
    LLVMValueRef at[2] = {mlcc_emit_i64(ctx, 0), mlcc_emit_i64(ctx, fill[g]++)};
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(
        ctx->b, LLVMArrayType(ctx->t_ptr, (unsigned)m->count[g]), m->ptrs[g], at, 2, "vin.slot");
    LLVMBuildStore(ctx->b, base, slot);
  }
done:
  free(gid);
  free(fill);
  return st;
}

// The value of chain node |c| (see ew_many_t) at output element |flat| (the
// row-major index into |out_shape|); |vals| holds chain nodes 0..c-1.
static mlcc_status_t many_fold(mlcc_emit_ctx_t* ctx, const mlcc_node_t* const* chain,
                               uint32_t c, const LLVMValueRef* vals, const ew_many_t* m,
                               const mlcc_shape_t* out_shape, LLVMValueRef flat,
                               LLVMValueRef* out_value) {
  const mlcc_node_t* n = chain[c];
  *out_value = NULL;
  if (m->first >= n->n_inputs) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s has no input",
                            mlcc_op_name(n->op));
  }
  const mlcc_value_t* in0 = n->inputs[m->first];
  mlcc_dtype_t dt = in0->dtype;
  LLVMTypeRef ct = mlcc_emit_type(ctx, dt);
  if (ct == NULL) return mlcc_emit_unsupported_dtype(n, dt);
  mlcc_emit_fold_t f;
  MLCC_RETURN_IF_ERROR(mlcc_emit_fold_init(&f, ctx, n, dt, 0));
  LLVMValueRef r = mlcc_emit_chain_value(chain, c, vals, in0);
  if (r == NULL) {
    LLVMValueRef j = mlcc_shape_equal(&in0->shape, out_shape)
                         ? flat
                         : mlcc_emit_broadcast_index(ctx, out_shape, flat, &in0->shape);
    r = mlcc_emit_load(ctx, in0, j);
  }
  int64_t count = 1;
  for (uint32_t s = m->first + 1; s < n->n_inputs; ++s) {
    if (n->inputs[s] == NULL) continue;
    LLVMValueRef v = mlcc_emit_chain_value(chain, c, vals, n->inputs[s]);
    if (v == NULL) continue;  // in a group
    r = mlcc_emit_fold_step(&f, r, v);
    ++count;
  }
  LLVMValueRef acc = mlcc_emit_var(ctx, ct, r);
  LLVMTypeRef st = mlcc_emit_storage_type(ctx, dt);
  for (uint32_t g = 0; g < m->n_groups; ++g) {
    LLVMValueRef off = mlcc_shape_equal(m->shape[g], out_shape)
                           ? flat
                           : mlcc_emit_broadcast_index(ctx, out_shape, flat, m->shape[g]);
    mlcc_loop_t l = mlcc_emit_for(ctx, 0, m->count[g], "vin");
    LLVMValueRef at[2] = {mlcc_emit_i64(ctx, 0), l.iv};
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(
        ctx->b, LLVMArrayType(ctx->t_ptr, (unsigned)m->count[g]), m->ptrs[g], at, 2, "vin.slot");
    LLVMValueRef base = LLVMBuildLoad2(ctx->b, ctx->t_ptr, slot, "vin.base");
    LLVMValueRef ep = LLVMBuildInBoundsGEP2(ctx->b, st, base, &off, 1, "vin.elem");
    LLVMValueRef x = mlcc_emit_load_elem(ctx, dt, ep);
    LLVMValueRef a = LLVMBuildLoad2(ctx->b, ct, acc, "vin.acc");
    LLVMBuildStore(ctx->b, mlcc_emit_fold_step(&f, a, x), acc);
    mlcc_emit_loop_end(ctx, &l);
    count += m->count[g];
  }
  r = LLVMBuildLoad2(ctx->b, ct, acc, "vin.acc");
  r = mlcc_emit_fold_finish(&f, r, count);
  *out_value = r;
  return mlcc_ok_status();
}

// Nested loops over the output (no per-element division for broadcasting);
// the kernel's whole epilogue chain is evaluated here, each external input
// loaded once per element at its own strides, and only the last node's
// output is stored.
static mlcc_status_t emit_elementwise(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  if (out == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s has no output",
                            mlcc_op_name(node->op));
  }
  if (node->n_inputs > MAX_EW_INPUTS && !is_variadic(node->op)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s with %u inputs (at most %d)",
                            mlcc_op_name(node->op), node->n_inputs, MAX_EW_INPUTS);
  }
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    const mlcc_value_t* in = node->inputs[i];
    if (in != NULL && mlcc_emit_type(ctx, in->dtype) == NULL) {
      return mlcc_emit_unsupported_dtype(node, in->dtype);
    }
  }
  int64_t numel = 0;
  MLCC_RETURN_IF_ERROR(mlcc_shape_numel(&out->shape, &numel));
  if (numel == 0) return mlcc_ok_status();
  const mlcc_kernel_t* k = ctx->kernel;
  bool fused = k != NULL && k->n_nodes > 1 && k->nodes[0] == node;
  uint32_t n_chain = fused ? k->n_nodes : 1;
  const mlcc_node_t* const* chain = fused ? (const mlcc_node_t* const*)k->nodes : &node;
  if (n_chain > MLCC_KERNEL_MAX_NODES) {  // the fuse pass never builds one
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "epilogue chain of %u nodes (at most %d)",
                            n_chain, MLCC_KERNEL_MAX_NODES);
  }

  // many[c]: chain node c is a variadic node folded with run-time loops
  // (ew_many_t); its inputs are not arrays of the nest. Tried first for
  // nodes above MAX_EW_INPUTS, then for every variadic node with more than
  // two inputs when the nest cannot hold all arrays.
  bool many[MLCC_KERNEL_MAX_NODES];
  ew_nest_t nest;
  bool ok = false;
  for (int attempt = 0; attempt < 2 && !ok; ++attempt) {
    memset(&nest, 0, sizeof(nest));
    nest.arrays[nest.n_arrays++] = out;
    ok = true;
    for (uint32_t c = 0; c < n_chain && ok; ++c) {
      const mlcc_node_t* n = chain[c];
      const mlcc_value_t* o = mlcc_node_output(n, 0);
      if ((n->n_inputs > MAX_EW_INPUTS && !is_variadic(n->op)) || o == NULL ||
          !mlcc_shape_equal(&o->shape, &out->shape)) {
        return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                "epilogue %s does not match the anchor's shape",
                                mlcc_op_name(n->op));
      }
      many[c] = is_variadic(n->op) &&
                (n->n_inputs > MAX_EW_INPUTS || (attempt > 0 && n->n_inputs > 2));
      for (uint32_t s2 = 0; s2 < n->n_inputs && ok; ++s2) {
        const mlcc_value_t* in = n->inputs[s2];
        if (in == NULL || chain_internal(chain, c, in)) continue;
        // A many node reads only its first present input through the nest's
        // index (its other inputs through ew_many_t's pointer arrays).
        if (!many[c]) ok = nest_add(&nest, in, &out->shape);
      }
    }
  }
  if (!ok) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s: too many distinct inputs",
                            mlcc_op_name(node->op));
  }
  nest_plan(&nest, &out->shape);
  ew_many_t many_st[MLCC_KERNEL_MAX_NODES];
  memset(many_st, 0, sizeof(many_st));
  mlcc_status_t st = mlcc_ok_status();
  for (uint32_t c = 0; c < n_chain && st == NULL; ++c) {
    if (many[c]) st = many_prepare(ctx, chain, c, &many_st[c]);
  }
  if (st != NULL) {
    for (uint32_t c = 0; c < n_chain; ++c) many_free(&many_st[c]);
    return st;
  }

  mlcc_loop_t loops[MLCC_MAX_RANK];
  LLVMValueRef idx[EW_MAX_ARRAYS];
  for (uint32_t a = 0; a < nest.n_arrays; ++a) idx[a] = mlcc_emit_i64(ctx, 0);
  for (int g = 0; g < nest.n_dims; ++g) {
    loops[g] = mlcc_emit_for(ctx, 0, nest.extent[g], "ew");
    for (uint32_t a = 0; a < nest.n_arrays; ++a) {
      int64_t sd = nest.stride[a][g];
      if (sd == 0) continue;
      LLVMValueRef t = loops[g].iv;
      if (sd != 1) t = LLVMBuildNSWMul(ctx->b, t, mlcc_emit_i64(ctx, sd), "es");
      idx[a] = LLVMBuildNSWAdd(ctx->b, idx[a], t, "ei");
    }
  }
  // Each external input is loaded once per element.
  LLVMValueRef loaded[EW_MAX_ARRAYS] = {0};
  LLVMValueRef vals[MLCC_KERNEL_MAX_NODES];
  for (uint32_t c = 0; c < n_chain && st == NULL; ++c) {
    const mlcc_node_t* n = chain[c];
    if (many[c]) {
      st = many_fold(ctx, chain, c, vals, &many_st[c], &out->shape, idx[0], &vals[c]);
      if (st != NULL && c > 0) st = mlcc_node_annotate(n, st);
      continue;
    }
    LLVMValueRef ops[MAX_EW_INPUTS];
    for (uint32_t s2 = 0; s2 < n->n_inputs; ++s2) {
      const mlcc_value_t* in = n->inputs[s2];
      ops[s2] = NULL;
      if (in == NULL) continue;
      ops[s2] = mlcc_emit_chain_value(chain, c, vals, in);
      if (ops[s2] != NULL) continue;
      for (uint32_t a = 1; a < nest.n_arrays; ++a) {
        if (nest.arrays[a] != in) continue;
        if (loaded[a] == NULL) loaded[a] = mlcc_emit_load(ctx, in, idx[a]);
        ops[s2] = loaded[a];
        break;
      }
    }
    st = mlcc_emit_elementwise_scalar(ctx, n, ops, &vals[c]);
    if (st != NULL && c > 0) st = mlcc_node_annotate(n, st);
  }
  if (st == NULL) {
    mlcc_emit_store(ctx, mlcc_node_output(chain[n_chain - 1], 0), idx[0], vals[n_chain - 1]);
  }
  for (int g = nest.n_dims - 1; g >= 0; --g) mlcc_emit_loop_end(ctx, &loops[g]);
  for (uint32_t c = 0; c < n_chain; ++c) many_free(&many_st[c]);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_elementwise = {.emit = emit_elementwise};

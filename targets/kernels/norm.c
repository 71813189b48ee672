// SPDX-License-Identifier: Apache-2.0
// Kernel emitters for BatchNormalization (inference), InstanceNormalization,
// LayerNormalization, Softmax and LogSoftmax. Statistics are computed in a
// first pass over each normalized block, then every output element is stored
// exactly once (so a fused epilogue can apply).
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

static LLVMValueRef ld(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef var) {
  return LLVMBuildLoad2(ctx->b, t, var, "");
}

static LLVMValueRef call1(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x) {
  return mlcc_emit_intrinsic(ctx, name, &x, 1);
}

// Loads element |idx| of |v| converted to computational type of |to|.
static LLVMValueRef load_as(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx,
                            mlcc_dtype_t to) {
  LLVMValueRef x = mlcc_emit_load(ctx, v, idx);
  return v->dtype == to ? x : mlcc_emit_convert(ctx, x, v->dtype, to);
}

static bool is_f(mlcc_dtype_t dt) { return dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64; }

static mlcc_status_t need_float(const mlcc_node_t* node, const mlcc_value_t* v) {
  if (!v || !is_f(v->dtype)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s supports float32/float64; got %s",
                            mlcc_op_name(node->op), v ? mlcc_dtype_name(v->dtype) : "nothing");
  }
  return mlcc_ok_status();
}

static mlcc_status_t need_numel(const mlcc_node_t* node, const mlcc_value_t* v, const char* what,
                                int64_t want) {
  if (!v || mlcc_shape_numel_unchecked(&v->shape) != want) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: %s must have %lld elements",
                            mlcc_op_name(node->op), what, (long long)want);
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// BatchNormalization
//===----------------------------------------------------------------------===//

// Inference BatchNormalization (ONNX 9-17): y = scale*(x-mean)/sqrt(var+eps)+B
// per channel (dim 1). training_mode=1 is UNIMPLEMENTED.
static mlcc_status_t emit_batchnorm(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t *scale = mlcc_node_input(node, 1), *bias = mlcc_node_input(node, 2);
  const mlcc_value_t *mean = mlcc_node_input(node, 3), *var = mlcc_node_input(node, 4);
  mlcc_dtype_t dt = node->outputs[0]->dtype;
  MLCC_RETURN_IF_ERROR(need_float(node, x));
  int64_t training = 0;
  float eps = 1e-5f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "training_mode", 0, &training));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "epsilon", 1e-5f, &eps));
  if (training) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "BatchNormalization: training_mode=1 is not supported");
  }
  if (x->shape.rank < 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "BatchNormalization needs X of rank >= 1");
  }
  int64_t n = x->shape.dims[0];
  int64_t c = x->shape.rank >= 2 ? x->shape.dims[1] : 1;
  int64_t inner = 1;
  for (int i = 2; i < x->shape.rank; ++i) inner *= x->shape.dims[i];
  const mlcc_value_t* params[4] = {scale, bias, mean, var};
  const char* names[4] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 0; i < 4; ++i) {
    MLCC_RETURN_IF_ERROR(need_numel(node, params[i], names[i], c));
    MLCC_RETURN_IF_ERROR(need_float(node, params[i]));
  }
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  mlcc_loop_t l_n = mlcc_emit_for(ctx, 0, n, "n");
  mlcc_loop_t l_c = mlcc_emit_for(ctx, 0, c, "c");
  LLVMValueRef s = load_as(ctx, scale, l_c.iv, dt);
  LLVMValueRef b = load_as(ctx, bias, l_c.iv, dt);
  LLVMValueRef m = load_as(ctx, mean, l_c.iv, dt);
  LLVMValueRef v = load_as(ctx, var, l_c.iv, dt);
  LLVMValueRef den = call1(ctx, "llvm.sqrt",
                           LLVMBuildFAdd(ctx->b, v, mlcc_emit_const(ctx, dt, eps), ""));
  LLVMValueRef a = LLVMBuildFDiv(ctx->b, s, den, "");
  LLVMValueRef base = imulc(ctx, imad(ctx, l_n.iv, c, l_c.iv), inner);
  mlcc_loop_t l_i = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef idx = iadd(ctx, base, l_i.iv);
  LLVMValueRef xv = mlcc_emit_load(ctx, x, idx);
  LLVMValueRef y = mlcc_emit_fmuladd(ctx, LLVMBuildFSub(ctx->b, xv, m, ""), a, b);
  (void)ft;
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, idx, y));
  mlcc_emit_loop_end(ctx, &l_i);
  mlcc_emit_loop_end(ctx, &l_c);
  mlcc_emit_loop_end(ctx, &l_n);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Vectorized reductions over a contiguous F32 block
//===----------------------------------------------------------------------===//

// F32 lanes per vector for the target (at least 4).
static unsigned vlanes(mlcc_emit_ctx_t* ctx) {
  int32_t vb = ctx->target != NULL ? ctx->target->vector_bytes : 32;
  // RVV: LLVM only assumes VLEN >= 128, so wider vectors use register
  // groups (LMUL 2) whose whole-register spills (vl2r.v) qemu 7.2 cannot
  // translate; 128-bit vectors stay at LMUL 1.
  if (ctx->target != NULL && ctx->target->arch == MLCC_ARCH_RISCV64) vb = 16;
  unsigned n = vb >= 16 ? (unsigned)vb / 4 : 4;
  return n > 16 ? 16 : n;
}

static LLVMValueRef vsplat_f(mlcc_emit_ctx_t* ctx, LLVMValueRef s, unsigned lanes) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), lanes);
  LLVMValueRef v = LLVMBuildInsertElement(ctx->b, LLVMGetUndef(vt), s,
                                          LLVMConstInt(ctx->t_i32, 0, 0), "");
  return LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(vt),
                                LLVMConstNull(LLVMVectorType(ctx->t_i32, lanes)), "");
}

// Vector load of F32 |v| at elements idx..idx+lanes-1 (element-aligned).
static LLVMValueRef vload_f(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx,
                            unsigned lanes) {
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, lanes);
  LLVMValueRef base = mlcc_emit_ptr(ctx, v);
  if (base == NULL) return mlcc_emit_load(ctx, v, idx);  // records the error
  LLVMValueRef p = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, base, &idx, 1, "");
  LLVMValueRef r = LLVMBuildLoad2(ctx->b, vt, p, "");
  LLVMSetAlignment(r, 4);
  return r;
}

typedef enum red_kind_e { RED_SUM, RED_MAX } red_kind_t;

// Per-element transform applied before reducing (scalar or vector |v|).
typedef enum red_fn_e { FN_ID, FN_SQDIFF, FN_EXPDIFF } red_fn_t;

static LLVMValueRef red_apply(mlcc_emit_ctx_t* ctx, red_fn_t fn, LLVMValueRef v,
                              LLVMValueRef c) {
  if (fn == FN_ID) return v;
  LLVMValueRef d = LLVMBuildFSub(ctx->b, v, c, "");
  if (fn == FN_SQDIFF) return LLVMBuildFMul(ctx->b, d, d, "");
  return mlcc_emit_fast_exp(ctx, d);
}

static LLVMValueRef red_op(mlcc_emit_ctx_t* ctx, red_kind_t k, LLVMValueRef a, LLVMValueRef b) {
  if (k == RED_SUM) return LLVMBuildFAdd(ctx->b, a, b, "");
  // max that propagates NaN from |b| (the new element), like the scalar loop.
  LLVMValueRef gt = LLVMBuildFCmp(ctx->b, LLVMRealUGT, b, a, "");
  return LLVMBuildSelect(ctx->b, gt, b, a, "");
}

// Reduces fn(x[base + i]) for i in [0, len) of F32 |x| with |k|, |acc|
// vectors of |lanes| lanes (two accumulators to hide latency), then a
// horizontal reduce, then a scalar tail. |c| is fn's constant (splatted).
static LLVMValueRef reduce_span(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, LLVMValueRef base,
                                int64_t len, red_kind_t k, red_fn_t fn, LLVMValueRef c) {
  unsigned W = vlanes(ctx);
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, W);
  LLVMValueRef init = LLVMConstReal(ctx->t_f32, k == RED_SUM ? 0.0 : -__builtin_inf());
  LLVMValueRef cv = c != NULL ? vsplat_f(ctx, c, W) : NULL;
  int64_t nv = len / (int64_t)W;
  LLVMValueRef r = init;
  if (nv > 0) {
    int64_t n2 = nv / 2;
    LLVMValueRef a0 = mlcc_emit_var(ctx, vt, vsplat_f(ctx, init, W));
    LLVMValueRef a1 = mlcc_emit_var(ctx, vt, vsplat_f(ctx, init, W));
    if (n2 > 0) {
      mlcc_loop_t l = mlcc_emit_for(ctx, 0, n2, "vr");
      LLVMValueRef i0 = iadd(ctx, base, imulc(ctx, l.iv, 2 * (int64_t)W));
      LLVMValueRef i1 = iadd(ctx, i0, c64(ctx, W));
      LLVMValueRef v0 = red_apply(ctx, fn, vload_f(ctx, x, i0, W), cv);
      LLVMValueRef v1 = red_apply(ctx, fn, vload_f(ctx, x, i1, W), cv);
      LLVMBuildStore(ctx->b, red_op(ctx, k, ld(ctx, vt, a0), v0), a0);
      LLVMBuildStore(ctx->b, red_op(ctx, k, ld(ctx, vt, a1), v1), a1);
      mlcc_emit_loop_end(ctx, &l);
    }
    if (nv % 2) {
      LLVMValueRef i0 = iadd(ctx, base, c64(ctx, (nv - 1) * (int64_t)W));
      LLVMValueRef v0 = red_apply(ctx, fn, vload_f(ctx, x, i0, W), cv);
      LLVMBuildStore(ctx->b, red_op(ctx, k, ld(ctx, vt, a0), v0), a0);
    }
    LLVMValueRef acc = red_op(ctx, k, ld(ctx, vt, a0), ld(ctx, vt, a1));
    // Horizontal: halve the vector until one lane is left.
    for (unsigned w = W / 2; w >= 1; w /= 2) {
      LLVMValueRef lo_m[16], hi_m[16];
      for (unsigned i = 0; i < w; ++i) {
        lo_m[i] = LLVMConstInt(ctx->t_i32, i, 0);
        hi_m[i] = LLVMConstInt(ctx->t_i32, i + w, 0);
      }
      LLVMValueRef lo = LLVMBuildShuffleVector(ctx->b, acc, acc, LLVMConstVector(lo_m, w), "");
      LLVMValueRef hi = LLVMBuildShuffleVector(ctx->b, acc, acc, LLVMConstVector(hi_m, w), "");
      acc = red_op(ctx, k, lo, hi);
    }
    r = LLVMBuildExtractElement(ctx->b, acc, LLVMConstInt(ctx->t_i32, 0, 0), "");
  }
  for (int64_t i = nv * (int64_t)W; i < len; ++i) {
    LLVMValueRef v = mlcc_emit_load(ctx, x, iadd(ctx, base, c64(ctx, i)));
    r = red_op(ctx, k, r, red_apply(ctx, fn, v, c));
  }
  return r;
}

// Iterations of reduce_span's two-accumulator loop per block of a long sum.
enum { kSumBlockIters = 128 };
// Longest float32 sum a scalar (serial) loop adds up as one float chain;
// longer ones are blocked like block_reduce's (error ~kScalarBlock * eps).
enum { kScalarBlock = 256 };

// reduce_span over x[base, base + len). A sum longer than one block (2 *
// lanes * kSumBlockIters elements) is blocked: each block is summed by
// reduce_span into fresh float accumulators, and the block sums are added in
// double (compensated float on microcontrollers, mlcc_fsum_t), so the rounding error grows like (block + log2(lanes)) * eps
// instead of len / (2 * lanes) * eps (a float32 lane that has summed 2^19
// elements of similar size is already off by ~1e-4). Shorter sums (and max)
// emit exactly the unblocked code.
static LLVMValueRef block_reduce(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, LLVMValueRef base,
                                 int64_t len, red_kind_t k, red_fn_t fn, LLVMValueRef c) {
  int64_t blk = 2 * (int64_t)vlanes(ctx) * kSumBlockIters;
  if (k != RED_SUM || len <= blk) return reduce_span(ctx, x, base, len, k, fn, c);
  int64_t nb = len / blk;
  // Block sums add in double, or compensated float on targets without
  // double-precision hardware (mlcc_fsum_t).
  mlcc_fsum_t tot = mlcc_emit_fsum_begin(ctx);
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, nb, "blk");
  LLVMValueRef s = reduce_span(ctx, x, iadd(ctx, base, imulc(ctx, l.iv, blk)), blk, k, fn, c);
  mlcc_emit_fsum_add(ctx, &tot, s);
  mlcc_emit_loop_end(ctx, &l);
  if (nb * blk < len) {
    LLVMValueRef rest = reduce_span(ctx, x, iaddc(ctx, base, nb * blk), len - nb * blk, k, fn, c);
    mlcc_emit_fsum_add(ctx, &tot, rest);
  }
  return mlcc_emit_fsum_round(ctx, &tot, mlcc_emit_fsum_value(ctx, &tot));
}

//===----------------------------------------------------------------------===//
// Mean / variance over a contiguous block
//===----------------------------------------------------------------------===//

// Emits mean and 1/sqrt(var+eps) of |x|[base, base+len) (two passes, in the
// computational type of |dt|).
static void block_stats_ex(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, mlcc_dtype_t dt,
                           LLVMValueRef base, int64_t len, double eps, bool centered,
                           LLVMValueRef* out_mean, LLVMValueRef* out_inv_std);

static void block_stats(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, mlcc_dtype_t dt,
                        LLVMValueRef base, int64_t len, double eps, LLVMValueRef* out_mean,
                        LLVMValueRef* out_inv_std) {
  block_stats_ex(ctx, x, dt, base, len, eps, true, out_mean, out_inv_std);
}

// block_stats with |centered| false (RMSNormalization): the mean is taken as
// 0, so the "variance" is the mean of the squares.
static void block_stats_ex(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, mlcc_dtype_t dt,
                           LLVMValueRef base, int64_t len, double eps, bool centered,
                           LLVMValueRef* out_mean, LLVMValueRef* out_inv_std) {
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  if (dt == MLCC_DTYPE_F32 && x->dtype == MLCC_DTYPE_F32) {
    LLVMValueRef cnt = mlcc_emit_const(ctx, dt, (double)(len > 0 ? len : 1));
    LLVMValueRef mean =
        centered
            ? LLVMBuildFDiv(ctx->b, block_reduce(ctx, x, base, len, RED_SUM, FN_ID, NULL), cnt, "")
            : mlcc_emit_const(ctx, dt, 0.0);
    LLVMValueRef var = LLVMBuildFDiv(
        ctx->b, block_reduce(ctx, x, base, len, RED_SUM, FN_SQDIFF, mean), cnt, "");
    LLVMValueRef sd = call1(ctx, "llvm.sqrt",
                            LLVMBuildFAdd(ctx->b, var, mlcc_emit_const(ctx, dt, eps), ""));
    *out_mean = mean;
    *out_inv_std = LLVMBuildFDiv(ctx->b, mlcc_emit_const(ctx, dt, 1.0), sd, "");
    return;
  }
  LLVMValueRef cnt = mlcc_emit_const(ctx, dt, (double)(len > 0 ? len : 1));
  LLVMValueRef mean = mlcc_emit_const(ctx, dt, 0.0);
  if (centered) {
    LLVMValueRef sum = mlcc_emit_var(ctx, ft, mlcc_emit_const(ctx, dt, 0));
    mlcc_loop_t l1 = mlcc_emit_for(ctx, 0, len, "s1");
    LLVMValueRef xv = load_as(ctx, x, iadd(ctx, base, l1.iv), dt);
    LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, ld(ctx, ft, sum), xv, ""), sum);
    mlcc_emit_loop_end(ctx, &l1);
    mean = LLVMBuildFDiv(ctx->b, ld(ctx, ft, sum), cnt, "");
  }
  LLVMValueRef ss = mlcc_emit_var(ctx, ft, mlcc_emit_const(ctx, dt, 0));
  mlcc_loop_t l2 = mlcc_emit_for(ctx, 0, len, "s2");
  LLVMValueRef d = LLVMBuildFSub(ctx->b, load_as(ctx, x, iadd(ctx, base, l2.iv), dt), mean, "");
  LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, d, d, ld(ctx, ft, ss)), ss);
  mlcc_emit_loop_end(ctx, &l2);
  LLVMValueRef var = LLVMBuildFDiv(ctx->b, ld(ctx, ft, ss), cnt, "");
  LLVMValueRef sd = call1(ctx, "llvm.sqrt",
                          LLVMBuildFAdd(ctx->b, var, mlcc_emit_const(ctx, dt, eps), ""));
  *out_mean = mean;
  *out_inv_std = LLVMBuildFDiv(ctx->b, mlcc_emit_const(ctx, dt, 1.0), sd, "");
}

//===----------------------------------------------------------------------===//
// InstanceNormalization
//===----------------------------------------------------------------------===//

// InstanceNormalization (ONNX 6-17): per (n, c) over the spatial dims.
static mlcc_status_t emit_instancenorm(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t *scale = mlcc_node_input(node, 1), *bias = mlcc_node_input(node, 2);
  MLCC_RETURN_IF_ERROR(need_float(node, x));
  mlcc_dtype_t dt = node->outputs[0]->dtype;
  if (x->shape.rank < 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "InstanceNormalization needs X of rank >= 2");
  }
  float eps = 1e-5f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "epsilon", 1e-5f, &eps));
  int64_t n = x->shape.dims[0], c = x->shape.dims[1], inner = 1;
  for (int i = 2; i < x->shape.rank; ++i) inner *= x->shape.dims[i];
  MLCC_RETURN_IF_ERROR(need_numel(node, scale, "scale", c));
  MLCC_RETURN_IF_ERROR(need_numel(node, bias, "B", c));
  mlcc_loop_t l_n = mlcc_emit_for(ctx, 0, n, "n");
  mlcc_loop_t l_c = mlcc_emit_for(ctx, 0, c, "c");
  LLVMValueRef base = imulc(ctx, imad(ctx, l_n.iv, c, l_c.iv), inner);
  LLVMValueRef mean, inv;
  block_stats(ctx, x, dt, base, inner, eps, &mean, &inv);
  LLVMValueRef a = LLVMBuildFMul(ctx->b, load_as(ctx, scale, l_c.iv, dt), inv, "");
  LLVMValueRef b = load_as(ctx, bias, l_c.iv, dt);
  mlcc_loop_t l_i = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef idx = iadd(ctx, base, l_i.iv);
  LLVMValueRef d = LLVMBuildFSub(ctx->b, mlcc_emit_load(ctx, x, idx), mean, "");
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, idx, mlcc_emit_fmuladd(ctx, d, a, b)));
  mlcc_emit_loop_end(ctx, &l_i);
  mlcc_emit_loop_end(ctx, &l_c);
  mlcc_emit_loop_end(ctx, &l_n);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// GroupNormalization
//===----------------------------------------------------------------------===//

// GroupNormalization (ONNX 18, 21): per (n, group) over the group's channels
// and the spatial dims (one contiguous block), then per channel
// y = (x - mean) * inv_std * scale + bias with scale/bias indexed by the
// group (18) or the channel (21).
static mlcc_status_t emit_groupnorm(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t *scale = mlcc_node_input(node, 1), *bias = mlcc_node_input(node, 2);
  MLCC_RETURN_IF_ERROR(need_float(node, x));
  mlcc_dtype_t dt = node->outputs[0]->dtype;
  if (x->shape.rank < 3) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "GroupNormalization needs X of rank >= 3");
  }
  float eps = 1e-5f;
  int64_t groups = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "epsilon", 1e-5f, &eps));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "num_groups", 1, &groups));
  int64_t n = x->shape.dims[0], c = x->shape.dims[1], inner = 1;
  for (int i = 2; i < x->shape.rank; ++i) inner *= x->shape.dims[i];
  if (groups < 1 || c % groups != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "GroupNormalization: num_groups %lld does not divide C=%lld",
                            (long long)groups, (long long)c);
  }
  const bool per_channel = node->opset >= 21;
  MLCC_RETURN_IF_ERROR(need_numel(node, scale, "scale", per_channel ? c : groups));
  MLCC_RETURN_IF_ERROR(need_numel(node, bias, "bias", per_channel ? c : groups));
  const int64_t cpg = c / groups;
  // The statistics' type: stash_type (21: 1 float, 11 double; 18: float).
  int64_t stash = 1;
  if (node->opset >= 21) MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "stash_type", 1, &stash));
  if (stash != 1 && stash != 11) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "GroupNormalization stash_type %lld",
                            (long long)stash);
  }
  const mlcc_dtype_t st = stash == 11 ? MLCC_DTYPE_F64 : MLCC_DTYPE_F32;
  mlcc_loop_t l_n = mlcc_emit_for(ctx, 0, n, "n");
  mlcc_loop_t l_g = mlcc_emit_for(ctx, 0, groups, "g");
  LLVMValueRef base = imulc(ctx, imad(ctx, l_n.iv, groups, l_g.iv), cpg * inner);
  LLVMValueRef mean, inv;
  block_stats(ctx, x, st == dt ? dt : st, base, cpg * inner, eps, &mean, &inv);
  mlcc_loop_t l_c = mlcc_emit_for(ctx, 0, cpg, "c");
  LLVMValueRef p = per_channel ? imad(ctx, l_g.iv, cpg, l_c.iv) : l_g.iv;
  LLVMValueRef cbase = iadd(ctx, base, imulc(ctx, l_c.iv, inner));
  LLVMValueRef a = NULL, b = load_as(ctx, bias, p, dt), s = NULL;
  if (st == dt) {
    a = LLVMBuildFMul(ctx->b, load_as(ctx, scale, p, dt), inv, "");
  } else {
    s = load_as(ctx, scale, p, dt);
  }
  mlcc_loop_t l_i = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef idx = iadd(ctx, cbase, l_i.iv), y;
  if (st == dt) {
    LLVMValueRef d = LLVMBuildFSub(ctx->b, mlcc_emit_load(ctx, x, idx), mean, "");
    y = mlcc_emit_fmuladd(ctx, d, a, b);
  } else {
    // The function body of GroupNormalization-21: normalize in the stash
    // type, cast back to X's type, then scale and bias.
    LLVMValueRef d = LLVMBuildFSub(ctx->b, load_as(ctx, x, idx, st), mean, "");
    LLVMValueRef xn = mlcc_emit_convert(ctx, LLVMBuildFMul(ctx->b, d, inv, ""), st, dt);
    y = mlcc_emit_fmuladd(ctx, xn, s, b);
  }
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, idx, y));
  mlcc_emit_loop_end(ctx, &l_i);
  mlcc_emit_loop_end(ctx, &l_c);
  mlcc_emit_loop_end(ctx, &l_g);
  mlcc_emit_loop_end(ctx, &l_n);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// LayerNormalization
//===----------------------------------------------------------------------===//

// Element of |param| (broadcastable to the normalized shape |norm|) for
// position |j| of the normalized block.
static LLVMValueRef param_at(mlcc_emit_ctx_t* ctx, const mlcc_value_t* p, const mlcc_shape_t* norm,
                             LLVMValueRef j, mlcc_dtype_t dt) {
  int64_t pn = mlcc_shape_numel_unchecked(&p->shape);
  LLVMValueRef idx;
  if (pn == 1) idx = c64(ctx, 0);
  else if (pn == mlcc_shape_numel_unchecked(norm)) idx = j;
  else idx = mlcc_emit_broadcast_index(ctx, norm, j, &p->shape);
  return load_as(ctx, p, idx, dt);
}

// |param| (F32) for positions j..j+lanes-1 of the normalized block.
static LLVMValueRef param_vec(mlcc_emit_ctx_t* ctx, const mlcc_value_t* p,
                              const mlcc_shape_t* norm, LLVMValueRef j, unsigned lanes) {
  int64_t pn = mlcc_shape_numel_unchecked(&p->shape);
  if (pn == 1) return vsplat_f(ctx, mlcc_emit_load(ctx, p, c64(ctx, 0)), lanes);
  if (pn == mlcc_shape_numel_unchecked(norm)) return vload_f(ctx, p, j, lanes);
  LLVMValueRef r = LLVMGetUndef(LLVMVectorType(ctx->t_f32, lanes));
  for (unsigned l = 0; l < lanes; ++l) {
    LLVMValueRef v = param_at(ctx, p, norm, iadd(ctx, j, c64(ctx, l)), MLCC_DTYPE_F32);
    r = LLVMBuildInsertElement(ctx->b, r, v, LLVMConstInt(ctx->t_i32, l, 0), "");
  }
  return r;
}

// LayerNormalization (ONNX 17): normalizes over dims [axis, rank); optional
// outputs Mean and InvStdDev have shape [d0..d(axis-1), 1, ...].
// RMSNormalization (ONNX 23) is the same without centering and bias:
// y = x / sqrt(mean(x^2) + epsilon) * scale.
static mlcc_status_t emit_layernorm(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t *scale = mlcc_node_input(node, 1), *bias = mlcc_node_input(node, 2);
  MLCC_RETURN_IF_ERROR(need_float(node, x));
  mlcc_dtype_t dt = node->outputs[0]->dtype;
  int64_t axis = -1;
  float eps = 1e-5f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", -1, &axis));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "epsilon", 1e-5f, &eps));
  int rank = x->shape.rank;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "LayerNormalization: axis out of range for rank %d", rank);
  }
  mlcc_shape_t norm = {0};
  norm.rank = rank - (int)axis;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < rank; ++i) {
    if (i < axis) outer *= x->shape.dims[i];
    else inner *= (norm.dims[i - axis] = x->shape.dims[i]);
  }
  if (!scale) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "LayerNormalization needs Scale");
  mlcc_dtype_t sdt = dt;
  const mlcc_value_t* mo = mlcc_node_output(node, 1);
  const mlcc_value_t* io = mlcc_node_output(node, 2);
  // Statistics are computed in the stash type (float32 by default, or the
  // wider of float32 and X's type).
  mlcc_dtype_t stat_dt = dt == MLCC_DTYPE_F64 ? MLCC_DTYPE_F64 : sdt;
  mlcc_loop_t l_o = mlcc_emit_for(ctx, 0, outer, "o");
  LLVMValueRef base = imulc(ctx, l_o.iv, inner);
  LLVMValueRef mean, inv;
  const bool rms = node->op == MLCC_OP_RMS_NORMALIZATION;
  block_stats_ex(ctx, x, stat_dt, base, inner, eps, !rms, &mean, &inv);
  if (mo) {
    LLVMValueRef v = mo->dtype == stat_dt ? mean : mlcc_emit_convert(ctx, mean, stat_dt, mo->dtype);
    MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 1, l_o.iv, v));
  }
  if (io) {
    LLVMValueRef v = io->dtype == stat_dt ? inv : mlcc_emit_convert(ctx, inv, stat_dt, io->dtype);
    MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 2, l_o.iv, v));
  }
  int64_t vec_end = 0;
  if (stat_dt == MLCC_DTYPE_F32 && x->dtype == MLCC_DTYPE_F32 && dt == MLCC_DTYPE_F32 &&
      scale->dtype == MLCC_DTYPE_F32 && (bias == NULL || bias->dtype == MLCC_DTYPE_F32)) {
    unsigned W = vlanes(ctx);
    vec_end = inner / (int64_t)W * (int64_t)W;
    if (vec_end > 0) {
      LLVMValueRef mv = vsplat_f(ctx, mean, W), iv = vsplat_f(ctx, inv, W);
      mlcc_loop_t l_v = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, vec_end), W, "iv");
      LLVMValueRef vidx = iadd(ctx, base, l_v.iv);
      LLVMValueRef d = LLVMBuildFSub(ctx->b, vload_f(ctx, x, vidx, W), mv, "");
      LLVMValueRef y = LLVMBuildFMul(ctx->b, LLVMBuildFMul(ctx->b, d, iv, ""),
                                     param_vec(ctx, scale, &norm, l_v.iv, W), "");
      if (bias) y = LLVMBuildFAdd(ctx->b, y, param_vec(ctx, bias, &norm, l_v.iv, W), "");
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output_vec(ctx, node, 0, vidx, y));
      mlcc_emit_loop_end(ctx, &l_v);
    }
  }
  mlcc_loop_t l_i = mlcc_emit_for(ctx, vec_end, inner, "i");
  LLVMValueRef idx = iadd(ctx, base, l_i.iv);
  LLVMValueRef d = LLVMBuildFSub(ctx->b, load_as(ctx, x, idx, stat_dt), mean, "");
  LLVMValueRef nv = LLVMBuildFMul(ctx->b, d, inv, "");
  LLVMValueRef y = LLVMBuildFMul(ctx->b, nv, param_at(ctx, scale, &norm, l_i.iv, stat_dt), "");
  if (bias) y = LLVMBuildFAdd(ctx->b, y, param_at(ctx, bias, &norm, l_i.iv, stat_dt), "");
  if (stat_dt != dt) y = mlcc_emit_convert(ctx, y, stat_dt, dt);
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, idx, y));
  mlcc_emit_loop_end(ctx, &l_i);
  mlcc_emit_loop_end(ctx, &l_o);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Softmax / LogSoftmax
//===----------------------------------------------------------------------===//

// Softmax's y below FLT_MIN (2^-126) as +0: exp(d) of a logit more than ~87
// below its row's max is a float32 subnormal, and Intel CPUs take a microcode
// assist for each subnormal operand of every kernel that reads it (the
// attention MatMul after a causal Softmax ran 80x slower on one). The
// change is below 1.2e-38 absolute. Float32 only; other types unchanged.
static LLVMValueRef flush_tiny(mlcc_emit_ctx_t* ctx, LLVMValueRef y) {
  LLVMTypeRef t = LLVMTypeOf(y);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMTypeRef et = vec ? LLVMGetElementType(t) : t;
  unsigned n = vec ? LLVMGetVectorSize(t) : 1;
  if (LLVMGetTypeKind(et) != LLVMFloatTypeKind || n > 64) return y;
  LLVMValueRef lane[64];
  for (unsigned i = 0; i < n; ++i) lane[i] = LLVMConstReal(et, 0x1p-126);
  LLVMValueRef lim = vec ? LLVMConstVector(lane, n) : lane[0];
  LLVMValueRef tiny = LLVMBuildFCmp(ctx->b, LLVMRealOLT, y, lim, "");
  return LLVMBuildSelect(ctx->b, tiny, LLVMConstNull(t), y, "");
}

// Softmax and LogSoftmax. Opsets < 13 coerce X to 2-D at |axis| (default 1)
// and normalize over the flattened trailing block; opsets >= 13 normalize
// along |axis| only (default -1). The max is subtracted for stability.
static mlcc_status_t emit_softmax(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  MLCC_RETURN_IF_ERROR(need_float(node, x));
  mlcc_dtype_t dt = node->outputs[0]->dtype;
  bool is_log = node->op == MLCC_OP_LOG_SOFTMAX;
  bool legacy = node->opset < 13;
  int64_t axis = legacy ? 1 : -1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", axis, &axis));
  int rank = x->shape.rank;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: axis out of range for rank %d",
                            mlcc_op_name(node->op), rank);
  }
  // outer x len x inner, the normalized dim is |len| with stride |inner|.
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = x->shape.dims[i];
    if (i < axis) outer *= d;
    else if (legacy || i == axis) len *= d;
    else inner *= d;
  }
  LLVMTypeRef ft = mlcc_emit_type(ctx, dt);
  if (inner == 1 && dt == MLCC_DTYPE_F32 && x->dtype == MLCC_DTYPE_F32) {
    // Contiguous rows: vector max, vector sum of exp, vector stores.
    unsigned W = vlanes(ctx);
    mlcc_loop_t l_o = mlcc_emit_for(ctx, 0, outer, "o");
    LLVMValueRef base = imulc(ctx, l_o.iv, len);
    LLVMValueRef m = block_reduce(ctx, x, base, len, RED_MAX, FN_ID, NULL);
    LLVMValueRef s = block_reduce(ctx, x, base, len, RED_SUM, FN_EXPDIFF, m);
    LLVMValueRef k = is_log ? call1(ctx, "llvm.log", s)
                            : LLVMBuildFDiv(ctx->b, mlcc_emit_const(ctx, dt, 1.0), s, "");
    int64_t vec_end = len / (int64_t)W * (int64_t)W;
    if (vec_end > 0) {
      LLVMValueRef mv = vsplat_f(ctx, m, W), kv = vsplat_f(ctx, k, W);
      mlcc_loop_t l_v = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, vec_end), W, "sv");
      LLVMValueRef vidx = iadd(ctx, base, l_v.iv);
      LLVMValueRef d = LLVMBuildFSub(ctx->b, vload_f(ctx, x, vidx, W), mv, "");
      LLVMValueRef y = is_log ? LLVMBuildFSub(ctx->b, d, kv, "")
                              : flush_tiny(ctx, LLVMBuildFMul(ctx->b, mlcc_emit_fast_exp(ctx, d), kv, ""));
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output_vec(ctx, node, 0, vidx, y));
      mlcc_emit_loop_end(ctx, &l_v);
    }
    if (vec_end < len) {
      mlcc_loop_t l3 = mlcc_emit_for(ctx, vec_end, len, "st");
      LLVMValueRef idx = iadd(ctx, base, l3.iv);
      LLVMValueRef d = LLVMBuildFSub(ctx->b, mlcc_emit_load(ctx, x, idx), m, "");
      LLVMValueRef y = is_log ? LLVMBuildFSub(ctx->b, d, k, "")
                              : flush_tiny(ctx, LLVMBuildFMul(ctx->b, mlcc_emit_fast_exp(ctx, d), k, ""));
      MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, idx, y));
      mlcc_emit_loop_end(ctx, &l3);
    }
    mlcc_emit_loop_end(ctx, &l_o);
    return mlcc_ok_status();
  }
  mlcc_loop_t l_o = mlcc_emit_for(ctx, 0, outer, "o");
  mlcc_loop_t l_i = mlcc_emit_for(ctx, 0, inner, "i");
  LLVMValueRef base = imad(ctx, l_o.iv, len * inner, l_i.iv);
  LLVMValueRef mx = mlcc_emit_var(ctx, ft, LLVMConstReal(ft, -__builtin_inf()));
  mlcc_loop_t l1 = mlcc_emit_for(ctx, 0, len, "l1");
  LLVMValueRef v1 = mlcc_emit_load(ctx, x, imad(ctx, l1.iv, inner, base));
  LLVMValueRef cur = ld(ctx, ft, mx);
  LLVMValueRef gt = LLVMBuildFCmp(ctx->b, LLVMRealUGT, v1, cur, "");
  LLVMBuildStore(ctx->b, LLVMBuildSelect(ctx->b, gt, v1, cur, ""), mx);
  mlcc_emit_loop_end(ctx, &l1);
  LLVMValueRef m = ld(ctx, ft, mx);
  // The sum of exp: one serial chain in |ft|, or for a float32 axis longer
  // than kScalarBlock, float chains of kScalarBlock elements whose sums are
  // added in double (see block_reduce).
  LLVMValueRef s;
  if (dt == MLCC_DTYPE_F32 && len > kScalarBlock) {
    mlcc_fsum_t tot = mlcc_emit_fsum_begin(ctx);
    LLVMValueRef bsum = mlcc_emit_var(ctx, ft, NULL);
    int64_t full = len / kScalarBlock, rem = len % kScalarBlock;
    for (int part = 0; part < 2; ++part) {
      if ((part == 0 && full == 0) || (part == 1 && rem == 0)) continue;
      mlcc_loop_t lc;
      LLVMValueRef first = c64(ctx, full * kScalarBlock);
      if (part == 0) {
        lc = mlcc_emit_for(ctx, 0, full, "l2c");
        first = imulc(ctx, lc.iv, kScalarBlock);
      }
      LLVMBuildStore(ctx->b, LLVMConstReal(ft, 0.0), bsum);
      mlcc_loop_t l2 = mlcc_emit_for(ctx, 0, part == 0 ? kScalarBlock : rem, "l2");
      LLVMValueRef v2 = mlcc_emit_load(ctx, x, imad(ctx, iadd(ctx, first, l2.iv), inner, base));
      LLVMValueRef e2 = mlcc_emit_fast_exp(ctx, LLVMBuildFSub(ctx->b, v2, m, ""));
      LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, ld(ctx, ft, bsum), e2, ""), bsum);
      mlcc_emit_loop_end(ctx, &l2);
      mlcc_emit_fsum_add(ctx, &tot, ld(ctx, ft, bsum));
      if (part == 0) mlcc_emit_loop_end(ctx, &lc);
    }
    s = mlcc_emit_fsum_round(ctx, &tot, mlcc_emit_fsum_value(ctx, &tot));
  } else {
    LLVMValueRef sum = mlcc_emit_var(ctx, ft, mlcc_emit_const(ctx, dt, 0));
    mlcc_loop_t l2 = mlcc_emit_for(ctx, 0, len, "l2");
    LLVMValueRef v2 = mlcc_emit_load(ctx, x, imad(ctx, l2.iv, inner, base));
    LLVMValueRef e2 = mlcc_emit_fast_exp(ctx, LLVMBuildFSub(ctx->b, v2, m, ""));
    LLVMBuildStore(ctx->b, LLVMBuildFAdd(ctx->b, ld(ctx, ft, sum), e2, ""), sum);
    mlcc_emit_loop_end(ctx, &l2);
    s = ld(ctx, ft, sum);
  }
  LLVMValueRef k = is_log ? call1(ctx, "llvm.log", s)
                          : LLVMBuildFDiv(ctx->b, mlcc_emit_const(ctx, dt, 1.0), s, "");
  mlcc_loop_t l3 = mlcc_emit_for(ctx, 0, len, "l3");
  LLVMValueRef idx = imad(ctx, l3.iv, inner, base);
  LLVMValueRef d = LLVMBuildFSub(ctx->b, mlcc_emit_load(ctx, x, idx), m, "");
  LLVMValueRef y = is_log ? LLVMBuildFSub(ctx->b, d, k, "")
                          : flush_tiny(ctx, LLVMBuildFMul(ctx->b, mlcc_emit_fast_exp(ctx, d), k, ""));
  MLCC_RETURN_IF_ERROR(mlcc_emit_store_output(ctx, node, 0, idx, y));
  mlcc_emit_loop_end(ctx, &l3);
  mlcc_emit_loop_end(ctx, &l_i);
  mlcc_emit_loop_end(ctx, &l_o);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_batchnorm = {.emit = emit_batchnorm};
const mlcc_emitter_t mlcc_emit_instancenorm = {.emit = emit_instancenorm};
const mlcc_emitter_t mlcc_emit_groupnorm = {.emit = emit_groupnorm};
const mlcc_emitter_t mlcc_emit_layernorm = {.emit = emit_layernorm};
const mlcc_emitter_t mlcc_emit_softmax = {.emit = emit_softmax};

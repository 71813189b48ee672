// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of onnxruntime's int8 contrib ops (com.microsoft opset 1,
// ops.def "Quantized contrib ops"; ir/ops/qelementwise.c infers them):
// QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool and
// QLinearConcat. Every scale and zero point is per tensor and read at run
// time (kernel arguments, so a re-quantized model reuses the kernels).
//
// Arithmetic, in float32, chosen so that quant-fuse's rewrites of the QDQ
// forms compute what the float graph computes:
// * QLinearAdd / QLinearMul: a' = float(a - a_zp) * a_scale, b' likewise
//   (DequantizeLinear), c' = a' + b' (or a' * b'), y = saturate(
//   round_half_even(c' / c_scale) + c_zp) (QuantizeLinear: a division, not
//   a multiply by the reciprocal). This is DequantizeLinear -> Add|Mul ->
//   QuantizeLinear operation for operation, so the rewrite is bit-identical
//   to the float graph. A fused Relu (attribute mlcc.qact = 1) raises the
//   lower bound to c_zp: Q(max(c', 0)) = max(Q(c'), c_zp) because Q is
//   monotone and Q(0) = c_zp. Vectorized: int8 lanes widen to float32 lanes
//   (target vector width / 4), a scalar loop takes the tail. onnxruntime's
//   kernels multiply by a_scale / c_scale and b_scale / c_scale instead and
//   may differ by one step on a few elements.
// * QLinearGlobalAveragePool / QLinearAveragePool: acc = the exact int32 sum
//   of (x - x_zp) over the window (pads excluded), n its divisor (the window
//   size, or the in-bounds count when count_include_pad = 0), y = saturate(
//   round_half_even(float(acc) * M) + y_zp), M = x_scale / (y_scale *
//   float(n)) in float32 (onnxruntime's formula). The float graph DQ ->
//   pool -> Q sums the rounded float32 products and divides twice; the two
//   agree within one step (tests/e2e/make_quant_graph_cases.py).
// * QLinearConcat: each input element y = saturate(round_half_even(
//   float32(float(x - x_zp) * x_scale) / y_scale) + y_zp), which is DQ -> Q
//   exactly (the float graph of a QDQ Concat); inputs whose parameters are
//   the output's give y = x, as the formula does.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/quant.h"
#include "ir/ops/spatial.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"
#include "targets/kernels/pack.h"

//===----------------------------------------------------------------------===//
// Helpers (scalar or vector: |lanes| 0 is a scalar)
//===----------------------------------------------------------------------===//

static LLVMValueRef splat(mlcc_emit_ctx_t* ctx, LLVMValueRef s, unsigned lanes) {
  if (lanes == 0) return s;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), lanes);
  LLVMValueRef v =
      LLVMBuildInsertElement(ctx->b, LLVMGetUndef(vt), s, LLVMConstInt(ctx->t_i32, 0, 0), "");
  LLVMValueRef zeros[64];
  for (unsigned i = 0; i < lanes; ++i) zeros[i] = LLVMConstInt(ctx->t_i32, 0, 0);
  return LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(vt), LLVMConstVector(zeros, lanes), "");
}

static LLVMTypeRef lanes_type(LLVMTypeRef t, unsigned lanes) {
  return lanes == 0 ? t : LLVMVectorType(t, lanes);
}

// Element 0 of the float32 scale |s| (present).
static LLVMValueRef load_scale(mlcc_emit_ctx_t* ctx, const mlcc_value_t* s) {
  return mlcc_emit_load(ctx, s, c64(ctx, 0));
}

// Element 0 of zero point |z| as float32 (0 when omitted).
static LLVMValueRef load_zp(mlcc_emit_ctx_t* ctx, const mlcc_value_t* z) {
  if (z == NULL) return mlcc_emit_f32(ctx, 0.f);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, z, c64(ctx, 0)), z->dtype, MLCC_DTYPE_F32);
}

// Element 0 of zero point |z| as i32 (0 when omitted).
static LLVMValueRef load_zp_i32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* z) {
  if (z == NULL) return LLVMConstInt(ctx->t_i32, 0, 0);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, z, c64(ctx, 0)), z->dtype, MLCC_DTYPE_I32);
}

// |lanes| elements (a scalar for 0) of int8/uint8 |v| from linear index
// |idx|, as float32.
static LLVMValueRef load_q8_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx,
                                unsigned lanes) {
  LLVMTypeRef ft = lanes_type(ctx->t_f32, lanes);
  LLVMValueRef x;
  if (lanes == 0) {
    x = mlcc_emit_load(ctx, v, idx);
  } else {
    LLVMValueRef p = LLVMBuildInBoundsGEP2(ctx->b, ctx->t_i8, mlcc_emit_ptr(ctx, v), &idx, 1, "");
    x = LLVMBuildLoad2(ctx->b, LLVMVectorType(ctx->t_i8, lanes), p, "");
    LLVMSetAlignment(x, 1);
  }
  return v->dtype == MLCC_DTYPE_U8 ? LLVMBuildUIToFP(ctx->b, x, ft, "")
                                   : LLVMBuildSIToFP(ctx->b, x, ft, "");
}

// saturate(round_half_even(|f|) + |zp|) to [|lo|, |hi|] (float bounds inside
// |qdt|'s range), converted to |qdt| lanes.
static LLVMValueRef requant(mlcc_emit_ctx_t* ctx, LLVMValueRef f, LLVMValueRef zp, LLVMValueRef lo,
                            LLVMValueRef hi, mlcc_dtype_t qdt, unsigned lanes) {
  LLVMValueRef r = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
  r = LLVMBuildFAdd(ctx->b, r, zp, "");
  r = mlcc_emit_max(ctx, MLCC_DTYPE_F32, r, lo);
  r = mlcc_emit_min(ctx, MLCC_DTYPE_F32, r, hi);
  // Integral and inside qdt's range: through i32, then truncate (a direct
  // f32 -> i8 conversion vectorizes to RVV's fractional-LMUL vfncvt, on
  // which qemu 7.2 asserts; targets/kernels/quant.c does the same).
  LLVMValueRef i = LLVMBuildFPToSI(ctx->b, r, lanes_type(ctx->t_i32, lanes), "");
  return LLVMBuildTrunc(ctx->b, i, lanes_type(ctx->t_i8, lanes), "");
}

static void qrange(mlcc_dtype_t qdt, float* lo, float* hi) {
  *lo = qdt == MLCC_DTYPE_I8 ? -128.f : 0.f;
  *hi = qdt == MLCC_DTYPE_I8 ? 127.f : 255.f;
}

// float32 lanes of the vector paths on the kernel's target (0: scalar).
static unsigned f32_lanes(mlcc_emit_ctx_t* ctx) {
  if (ctx->target == NULL) return 0;
  int l = ctx->target->vector_bytes / 4;
  return l >= 2 && l <= 16 ? (unsigned)l : 0;
}

//===----------------------------------------------------------------------===//
// QLinearAdd, QLinearMul
//===----------------------------------------------------------------------===//

typedef struct qbin_t {
  const mlcc_value_t *a, *b;
  LLVMValueRef as, az, bs, bz, cs, cz, lo, hi;  // float32 scalars
  bool is_mul;
  mlcc_dtype_t qdt;
} qbin_t;

// One element (|lanes| 0) or vector of the result: A from |ai| and B from
// |bi| (|a_splat| / |b_splat|: one element repeated over the lanes).
static LLVMValueRef qbin_compute(mlcc_emit_ctx_t* ctx, const qbin_t* q, LLVMValueRef ai,
                                 bool a_splat, LLVMValueRef bi, bool b_splat, unsigned lanes) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef av = load_q8_f32(ctx, q->a, ai, a_splat ? 0 : lanes);
  LLVMValueRef bv = load_q8_f32(ctx, q->b, bi, b_splat ? 0 : lanes);
  if (a_splat) av = splat(ctx, av, lanes);
  if (b_splat) bv = splat(ctx, bv, lanes);
  LLVMValueRef fa = LLVMBuildFMul(b, LLVMBuildFSub(b, av, splat(ctx, q->az, lanes), ""),
                                  splat(ctx, q->as, lanes), "");
  LLVMValueRef fb = LLVMBuildFMul(b, LLVMBuildFSub(b, bv, splat(ctx, q->bz, lanes), ""),
                                  splat(ctx, q->bs, lanes), "");
  LLVMValueRef c = q->is_mul ? LLVMBuildFMul(b, fa, fb, "") : LLVMBuildFAdd(b, fa, fb, "");
  c = LLVMBuildFDiv(b, c, splat(ctx, q->cs, lanes), "");
  return requant(ctx, c, splat(ctx, q->cz, lanes), splat(ctx, q->lo, lanes),
                 splat(ctx, q->hi, lanes), q->qdt, lanes);
}

// |v|'s dims right-aligned to rank |rank| (leading 1s).
static void align_shape(const mlcc_shape_t* v, int32_t rank, mlcc_shape_t* out) {
  memset(out, 0, sizeof(*out));
  out->rank = rank;
  for (int32_t d = 0; d < rank; ++d) {
    int32_t s = d - (rank - v->rank);
    out->dims[d] = s >= 0 ? v->dims[s] : 1;
  }
}

// True when |v|'s dims from |k| on all equal |y|'s (*full) or are all 1.
static bool suffix_ok(const mlcc_shape_t* v, const mlcc_shape_t* y, int32_t k, bool* full) {
  bool eq = true, ones = true;
  for (int32_t d = k; d < y->rank; ++d) {
    eq = eq && v->dims[d] == y->dims[d];
    ones = ones && v->dims[d] == 1;
  }
  *full = eq;
  return eq || ones;
}

static mlcc_status_t emit_qlinear_binary(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  qbin_t q = {.a = mlcc_node_input(node, 0), .b = mlcc_node_input(node, 3)};
  q.is_mul = node->op == MLCC_OP_QLINEAR_MUL;
  q.qdt = y->dtype;
  int64_t n = mlcc_shape_numel_unchecked(&y->shape);
  if (n == 0) return mlcc_ok_status();
  q.as = load_scale(ctx, mlcc_node_input(node, 1));
  q.bs = load_scale(ctx, mlcc_node_input(node, 4));
  q.cs = load_scale(ctx, mlcc_node_input(node, 6));
  q.az = load_zp(ctx, mlcc_node_input(node, 2));
  q.bz = load_zp(ctx, mlcc_node_input(node, 5));
  q.cz = load_zp(ctx, mlcc_node_input(node, 7));
  float lo = 0, hi = 0;
  qrange(q.qdt, &lo, &hi);
  q.lo = mlcc_emit_f32(ctx, lo);
  q.hi = mlcc_emit_f32(ctx, hi);
  int64_t act = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, MLCC_QACT_ATTR, 0, &act));
  if (act == 1) {
    q.lo = mlcc_emit_max(ctx, MLCC_DTYPE_F32, q.lo, q.cz);
  } else if (act != 0) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s with fused activation %lld (only Relu, 1)", mlcc_op_name(node->op),
                            (long long)act);
  }
  // Split the output into an outer part, walked with broadcast indices,
  // and the longest inner suffix on which A and B each are contiguous
  // (their dims equal the output's) or one element repeated (all 1).
  mlcc_shape_t as, bs;
  align_shape(&q.a->shape, y->shape.rank, &as);
  align_shape(&q.b->shape, y->shape.rank, &bs);
  int32_t k = y->shape.rank;
  bool a_full = true, b_full = true;
  for (int32_t t = y->shape.rank; t >= 0; --t) {
    bool af, bf;
    if (!suffix_ok(&as, &y->shape, t, &af) || !suffix_ok(&bs, &y->shape, t, &bf)) break;
    k = t;
    a_full = af;
    b_full = bf;
  }
  int64_t inner = 1;
  for (int32_t d = k; d < y->shape.rank; ++d) inner *= y->shape.dims[d];
  mlcc_shape_t outer = {.rank = k}, ao = {.rank = k}, bo = {.rank = k};
  for (int32_t d = 0; d < k; ++d) {
    outer.dims[d] = y->shape.dims[d];
    ao.dims[d] = as.dims[d];
    bo.dims[d] = bs.dims[d];
  }
  int64_t n_outer = n / inner;
  mlcc_loop_t lo_loop = mlcc_emit_for(ctx, 0, n_outer, "qbo");
  LLVMValueRef abase = c64(ctx, 0), bbase = c64(ctx, 0);
  if (k > 0) {
    abase = mlcc_emit_broadcast_index(ctx, &outer, lo_loop.iv, &ao);
    bbase = mlcc_emit_broadcast_index(ctx, &outer, lo_loop.iv, &bo);
  }
  if (a_full) abase = imulc(ctx, abase, inner);
  if (b_full) bbase = imulc(ctx, bbase, inner);
  LLVMValueRef ybase = imulc(ctx, lo_loop.iv, inner);
  unsigned lanes = f32_lanes(ctx);
  int64_t n_vec = lanes >= 2 ? inner / lanes : 0;
  mlcc_status_t st = mlcc_ok_status();
  if (n_vec > 0) {
    mlcc_loop_t lv = mlcc_emit_for(ctx, 0, n_vec, "qbv");
    LLVMValueRef off = imulc(ctx, lv.iv, lanes);
    LLVMValueRef ai = a_full ? iadd(ctx, abase, off) : abase;
    LLVMValueRef bi = b_full ? iadd(ctx, bbase, off) : bbase;
    LLVMValueRef r = qbin_compute(ctx, &q, ai, !a_full, bi, !b_full, lanes);
    st = mlcc_emit_store_output_vec(ctx, node, 0, iadd(ctx, ybase, off), r);
    mlcc_emit_loop_end(ctx, &lv);
  }
  int64_t done = n_vec * (int64_t)lanes;
  if (st == NULL && done < inner) {
    mlcc_loop_t ls = mlcc_emit_for(ctx, done, inner, "qbs");
    LLVMValueRef ai = a_full ? iadd(ctx, abase, ls.iv) : abase;
    LLVMValueRef bi = b_full ? iadd(ctx, bbase, ls.iv) : bbase;
    LLVMValueRef r = qbin_compute(ctx, &q, ai, false, bi, false, 0);
    st = mlcc_emit_store_output(ctx, node, 0, iadd(ctx, ybase, ls.iv), r);
    mlcc_emit_loop_end(ctx, &ls);
  }
  mlcc_emit_loop_end(ctx, &lo_loop);
  return st;
}

//===----------------------------------------------------------------------===//
// QLinearGlobalAveragePool, QLinearAveragePool
//===----------------------------------------------------------------------===//

// y = saturate(round_half_even(float(acc) * x_s / (y_s * float(count))) + y_zp).
static LLVMValueRef pool_requant(mlcc_emit_ctx_t* ctx, LLVMValueRef acc, LLVMValueRef count,
                                 LLVMValueRef xs, LLVMValueRef ys, LLVMValueRef yz,
                                 mlcc_dtype_t qdt) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef cf = LLVMBuildSIToFP(b, count, ctx->t_f32, "");
  LLVMValueRef m = LLVMBuildFDiv(b, xs, LLVMBuildFMul(b, ys, cf, ""), "");
  LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, acc, ctx->t_f32, ""), m, "");
  float lo = 0, hi = 0;
  qrange(qdt, &lo, &hi);
  return requant(ctx, f, yz, mlcc_emit_f32(ctx, lo), mlcc_emit_f32(ctx, hi), qdt, 0);
}

// x[idx] - x_zp in i32.
static LLVMValueRef load_centered(mlcc_emit_ctx_t* ctx, const mlcc_value_t* x, LLVMValueRef idx,
                                  LLVMValueRef xz) {
  LLVMValueRef v = mlcc_emit_convert(ctx, mlcc_emit_load(ctx, x, idx), x->dtype, MLCC_DTYPE_I32);
  return LLVMBuildSub(ctx->b, v, xz, "");
}

static LLVMValueRef in_range(mlcc_emit_ctx_t* ctx, LLVMValueRef pos, int64_t lo, int64_t hi) {
  LLVMValueRef a = LLVMBuildICmp(ctx->b, LLVMIntSGE, pos, c64(ctx, lo), "");
  LLVMValueRef b = LLVMBuildICmp(ctx->b, LLVMIntSLT, pos, c64(ctx, hi), "");
  return LLVMBuildAnd(ctx->b, a, b, "");
}

static mlcc_status_t emit_qlinear_pool(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  mlcc_spatial_t g;
  MLCC_RETURN_IF_ERROR(mlcc_qlinear_pool_resolve(node, &g));
  if (mlcc_shape_numel_unchecked(&y->shape) == 0) return mlcc_ok_status();
  if (g.n_spatial > 3) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s with %d spatial dims (at most 3)",
                            mlcc_op_name(node->op), (int)g.n_spatial);
  }
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef xs = load_scale(ctx, mlcc_node_input(node, 1));
  LLVMValueRef ys = load_scale(ctx, mlcc_node_input(node, 3));
  LLVMValueRef xz = load_zp_i32(ctx, mlcc_node_input(node, 2));
  LLVMValueRef yz = load_zp(ctx, mlcc_node_input(node, 4));
  int64_t nb = x->shape.dims[0], c = g.out_channels;
  int64_t hw = 1;
  for (int32_t d = 0; d < g.n_spatial; ++d) hw *= g.in[d];
  LLVMValueRef acc = mlcc_emit_var(ctx, ctx->t_i32, LLVMConstInt(ctx->t_i32, 0, 0));
  if (node->op == MLCC_OP_QLINEAR_GLOBAL_AVERAGE_POOL) {
    int64_t cl = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "channels_last", 0, &cl));
    // The exact int32 sum over the plane (|x - x_zp| <= 255: no overflow
    // below 2^23 elements, far above any image); LLVM vectorizes the
    // contiguous NCHW reduction.
    if (hw > ((int64_t)1 << 23)) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "%s over %lld elements per channel (at most 2^23)",
                              mlcc_op_name(node->op), (long long)hw);
    }
    mlcc_loop_t ln = mlcc_emit_for(ctx, 0, nb, "gpn");
    mlcc_loop_t lc = mlcc_emit_for(ctx, 0, c, "gpc");
    LLVMBuildStore(b, LLVMConstInt(ctx->t_i32, 0, 0), acc);
    mlcc_loop_t ls = mlcc_emit_for(ctx, 0, hw, "gps");
    LLVMValueRef xi = cl ? iadd(ctx, imulc(ctx, iadd(ctx, imulc(ctx, ln.iv, hw), ls.iv), c), lc.iv)
                         : iadd(ctx, imulc(ctx, imad(ctx, ln.iv, c, lc.iv), hw), ls.iv);
    LLVMValueRef cur = LLVMBuildLoad2(b, ctx->t_i32, acc, "");
    LLVMBuildStore(b, LLVMBuildAdd(b, cur, load_centered(ctx, x, xi, xz), ""), acc);
    mlcc_emit_loop_end(ctx, &ls);
    LLVMValueRef r =
        pool_requant(ctx, LLVMBuildLoad2(b, ctx->t_i32, acc, ""),
                     LLVMConstInt(ctx->t_i32, (unsigned long long)hw, 0), xs, ys, yz, y->dtype);
    // [N, C, 1...] and [N, 1..., C] both store at n * C + c.
    mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, imad(ctx, ln.iv, c, lc.iv), r);
    mlcc_emit_loop_end(ctx, &lc);
    mlcc_emit_loop_end(ctx, &ln);
    return st;
  }
  // QLinearAveragePool, NCHW, up to 3 spatial dims padded to 3 (leading 1s).
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  int32_t off = 3 - g.n_spatial;
  int64_t win = 1;
  for (int32_t d = 0; d < g.n_spatial; ++d) {
    in[off + d] = g.in[d];
    out[off + d] = g.out[d];
    k[off + d] = g.kernel[d];
    s[off + d] = g.strides[d];
    pb[off + d] = g.pad_begin[d];
    pe[off + d] = g.pad_end[d];
    win *= g.kernel[d];
  }
  if (win > ((int64_t)1 << 23)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "QLinearAveragePool window of %lld "
                            "elements (at most 2^23)",
                            (long long)win);
  }
  LLVMValueRef count = mlcc_emit_var(ctx, ctx->t_i32, LLVMConstInt(ctx->t_i32, 0, 0));
  mlcc_loop_t lnc = mlcc_emit_for(ctx, 0, nb * c, "apc");
  mlcc_loop_t lo[3], lk[3];
  for (int j = 0; j < 3; ++j) lo[j] = mlcc_emit_for(ctx, 0, out[j], "apo");
  LLVMBuildStore(b, LLVMConstInt(ctx->t_i32, 0, 0), acc);
  LLVMBuildStore(b, LLVMConstInt(ctx->t_i32, 0, 0), count);
  LLVMValueRef inb = LLVMConstInt(ctx->t_i1, 1, 0), inpad = LLVMConstInt(ctx->t_i1, 1, 0);
  LLVMValueRef xi = lnc.iv;
  for (int j = 0; j < 3; ++j) {
    lk[j] = mlcc_emit_for(ctx, 0, k[j], "apk");
    LLVMValueRef pos = iadd(ctx, iaddc(ctx, imulc(ctx, lo[j].iv, s[j]), -pb[j]), lk[j].iv);
    inb = LLVMBuildAnd(b, inb, in_range(ctx, pos, 0, in[j]), "");
    inpad = LLVMBuildAnd(b, inpad, in_range(ctx, pos, -pb[j], in[j] + pe[j]), "");
    xi = imad(ctx, xi, in[j], pos);
  }
  int64_t cip = g.count_include_pad ? 1 : 0;
  // Positions of the padded extent [-pb, in + pe) count with
  // count_include_pad (ceil_mode windows may reach past it); otherwise only
  // in-bounds ones. Only in-bounds values are added.
  LLVMValueRef counted = cip ? inpad : inb;
  LLVMValueRef cn = LLVMBuildLoad2(b, ctx->t_i32, count, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, cn, LLVMBuildZExt(b, counted, ctx->t_i32, ""), ""), count);
  mlcc_if_t in_if = mlcc_emit_if_begin(ctx, inb);
  LLVMValueRef cur = LLVMBuildLoad2(b, ctx->t_i32, acc, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, cur, load_centered(ctx, x, xi, xz), ""), acc);
  mlcc_emit_if_end(ctx, &in_if);
  for (int j = 2; j >= 0; --j) mlcc_emit_loop_end(ctx, &lk[j]);
  // A window with nothing counted (only possible in padding) averages 0.
  LLVMValueRef cnt = LLVMBuildLoad2(b, ctx->t_i32, count, "");
  LLVMValueRef zero_cnt = LLVMBuildICmp(b, LLVMIntEQ, cnt, LLVMConstInt(ctx->t_i32, 0, 0), "");
  cnt = LLVMBuildSelect(b, zero_cnt, LLVMConstInt(ctx->t_i32, 1, 0), cnt, "");
  LLVMValueRef r =
      pool_requant(ctx, LLVMBuildLoad2(b, ctx->t_i32, acc, ""), cnt, xs, ys, yz, y->dtype);
  LLVMValueRef yi = lnc.iv;
  for (int j = 0; j < 3; ++j) yi = imad(ctx, yi, out[j], lo[j].iv);
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, yi, r);
  for (int j = 2; j >= 0; --j) mlcc_emit_loop_end(ctx, &lo[j]);
  mlcc_emit_loop_end(ctx, &lnc);
  return st;
}

//===----------------------------------------------------------------------===//
// QLinearConcat
//===----------------------------------------------------------------------===//

static mlcc_status_t emit_qlinear_concat(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (mlcc_shape_numel_unchecked(&y->shape) == 0) return mlcc_ok_status();
  int64_t axis64 = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "axis", 0, &axis64));
  int32_t rank = y->shape.rank;
  int32_t axis = (int32_t)(axis64 < 0 ? axis64 + rank : axis64);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= y->shape.dims[d];
  for (int32_t d = axis + 1; d < rank; ++d) inner *= y->shape.dims[d];
  int64_t y_row = y->shape.dims[axis] * inner;
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef ys = load_scale(ctx, mlcc_node_input(node, 0));
  LLVMValueRef yz = load_zp(ctx, mlcc_node_input(node, 1));
  float lo = 0, hi = 0;
  qrange(y->dtype, &lo, &hi);
  LLVMValueRef flo = mlcc_emit_f32(ctx, lo), fhi = mlcc_emit_f32(ctx, hi);
  int64_t at = 0;  // the input's first row element in Y's row
  mlcc_status_t st = mlcc_ok_status();
  for (uint32_t i = 2; i + 2 < node->n_inputs && st == NULL; i += 3) {
    const mlcc_value_t* x = mlcc_node_input(node, i);
    int64_t x_row = x->shape.dims[axis] * inner;
    if (x_row == 0 || outer == 0) continue;
    LLVMValueRef xs = load_scale(ctx, mlcc_node_input(node, i + 1));
    LLVMValueRef xz = load_zp(ctx, mlcc_node_input(node, i + 2));
    mlcc_loop_t lo_o = mlcc_emit_for(ctx, 0, outer, "qco");
    mlcc_loop_t lj = mlcc_emit_for(ctx, 0, x_row, "qcj");
    LLVMValueRef xv = load_q8_f32(ctx, x, imad(ctx, lo_o.iv, x_row, lj.iv), 0);
    LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildFSub(b, xv, xz, ""), xs, "");
    f = LLVMBuildFDiv(b, f, ys, "");
    LLVMValueRef r = requant(ctx, f, yz, flo, fhi, y->dtype, 0);
    st = mlcc_emit_store_output(ctx, node, 0,
                                iadd(ctx, imulc(ctx, lo_o.iv, y_row), iaddc(ctx, lj.iv, at)), r);
    mlcc_emit_loop_end(ctx, &lj);
    mlcc_emit_loop_end(ctx, &lo_o);
    at += x_row;
  }
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

static int64_t qbin_flops(const mlcc_node_t* node) {
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  return y != NULL && y->shape_known ? mlcc_shape_numel_unchecked(&y->shape) : -1;
}

//===----------------------------------------------------------------------===//
// QLookup (mlcc-internal; quant-fuse's int8 Sigmoid)
//===----------------------------------------------------------------------===//

// y[i] = table[byte of x[i]]: the byte zero-extended to an index into the
// 256-entry table (int8 x = -1 reads entry 255).
static mlcc_status_t emit_qlookup(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  MLCC_RETURN_IF_ERROR(mlcc_emit_check_types(ctx, node));
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* t = mlcc_node_input(node, 1);
  int64_t n = mlcc_shape_numel_unchecked(&x->shape);
  if (n == 0) return mlcc_ok_status();
  LLVMValueRef xp = mlcc_emit_ptr(ctx, x), tp = mlcc_emit_ptr(ctx, t);
  if (xp == NULL || tp == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "QLookup: X or Table is not a kernel argument");
  }
  LLVMBuilderRef b = ctx->b;
  mlcc_loop_t l = mlcc_emit_for(ctx, 0, n, "qlu");
  LLVMValueRef xe = LLVMBuildLoad2(b, ctx->t_i8, LLVMBuildInBoundsGEP2(b, ctx->t_i8, xp, &l.iv, 1, ""),
                                   "");
  LLVMValueRef ti = LLVMBuildZExt(b, xe, ctx->t_i64, "");
  LLVMValueRef v =
      LLVMBuildLoad2(b, ctx->t_i8, LLVMBuildInBoundsGEP2(b, ctx->t_i8, tp, &ti, 1, ""), "");
  mlcc_status_t st = mlcc_emit_store_output(ctx, node, 0, l.iv, v);
  mlcc_emit_loop_end(ctx, &l);
  return st;
}

const mlcc_emitter_t mlcc_emit_qlinear_binary = {.emit = emit_qlinear_binary, .flops = qbin_flops};
const mlcc_emitter_t mlcc_emit_qlinear_pool = {.emit = emit_qlinear_pool};
const mlcc_emitter_t mlcc_emit_qlinear_concat = {.emit = emit_qlinear_concat};
const mlcc_emitter_t mlcc_emit_qlookup = {.emit = emit_qlookup};

// SPDX-License-Identifier: Apache-2.0
// The emitter toolkit's scalar formulas: mlcc_emit_elementwise_scalar (the
// formula of every MLCC_OPF_ELEMENTWISE op, on scalars or vectors), the
// variadic fold (mlcc_emit_fold_*) and the vectorizable exp, sigmoid, tanh
// and erf (mlcc_emit_fast_*). Used by the elementwise kernel family
// (targets/kernels/elementwise.c), by fused epilogues (epilogue.c) and by
// the kernels that need a transcendental (reduce, rnn, normalize ...).
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/emit/emit.h"

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

// Context of one scalar formula: the builder and the dtype of the operand
// that decides the arithmetic (signedness, float vs int).
typedef struct ew_t {
  mlcc_emit_ctx_t* ctx;
  LLVMBuilderRef b;
  mlcc_dtype_t dt;
  bool fp, sint, uint, boolean;
  unsigned lanes;  // 0: scalar operands; else the operands' vector width
} ew_t;

// |c| (a scalar constant) as a constant of |lanes| lanes (itself if 0).
static LLVMValueRef splat_const(unsigned lanes, LLVMValueRef c) {
  if (lanes == 0) return c;
  LLVMValueRef elems[64];
  if (lanes > 64) return LLVMConstNull(LLVMVectorType(LLVMTypeOf(c), lanes));  // unreachable
  for (unsigned i = 0; i < lanes; ++i) elems[i] = c;
  return LLVMConstVector(elems, lanes);
}

// Vector width of |x|'s type, 0 for scalars.
static unsigned lanes_of(LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 0;
}

// |t| widened to |lanes| lanes (itself if 0).
static LLVMTypeRef vec_type(LLVMTypeRef t, unsigned lanes) {
  return lanes ? LLVMVectorType(t, lanes) : t;
}

static void ew_init(ew_t* e, mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt) {
  e->ctx = ctx;
  e->b = ctx->b;
  e->dt = dt;
  // F16 is computed as float by the toolkit (mlcc_emit_type).
  e->fp = dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64 || dt == MLCC_DTYPE_F16;
  e->uint = mlcc_dtype_is_int(dt) && mlcc_dtype_is_unsigned(dt);
  e->sint = mlcc_dtype_is_int(dt) && !e->uint;
  e->boolean = dt == MLCC_DTYPE_BOOL;
  e->lanes = 0;
}

static LLVMValueRef k(ew_t* e, double v) {
  return splat_const(e->lanes, mlcc_emit_const(e->ctx, e->dt, v));
}

static LLVMValueRef cmp(ew_t* e, LLVMRealPredicate fp, LLVMIntPredicate sp,
                        LLVMIntPredicate up, LLVMValueRef a, LLVMValueRef b) {
  if (e->fp) return LLVMBuildFCmp(e->b, fp, a, b, "fc");
  return LLVMBuildICmp(e->b, e->sint ? sp : up, a, b, "ic");
}
static LLVMValueRef lt(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  return cmp(e, LLVMRealOLT, LLVMIntSLT, LLVMIntULT, a, b);
}
static LLVMValueRef gt(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  return cmp(e, LLVMRealOGT, LLVMIntSGT, LLVMIntUGT, a, b);
}
static LLVMValueRef sel(ew_t* e, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(e->b, c, a, b, "sel");
}
static LLVMValueRef add(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  return e->fp ? LLVMBuildFAdd(e->b, a, b, "add") : LLVMBuildAdd(e->b, a, b, "add");
}
static LLVMValueRef sub(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  return e->fp ? LLVMBuildFSub(e->b, a, b, "sub") : LLVMBuildSub(e->b, a, b, "sub");
}
static LLVMValueRef mul(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  return e->fp ? LLVMBuildFMul(e->b, a, b, "mul") : LLVMBuildMul(e->b, a, b, "mul");
}
static LLVMValueRef fdiv(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFDiv(e->b, a, b, "div");
}

// max/min propagating NaN like numpy: the result is NaN if either is NaN.
static LLVMValueRef max2(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef c = gt(e, a, b);
  if (e->fp) c = LLVMBuildOr(e->b, c, LLVMBuildFCmp(e->b, LLVMRealUNO, a, a, "nan"), "c");
  return sel(e, c, a, b);
}
static LLVMValueRef min2(ew_t* e, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef c = lt(e, a, b);
  if (e->fp) c = LLVMBuildOr(e->b, c, LLVMBuildFCmp(e->b, LLVMRealUNO, a, a, "nan"), "c");
  return sel(e, c, a, b);
}

static LLVMValueRef intr1(ew_t* e, const char* name, LLVMValueRef x) {
  return mlcc_emit_intrinsic(e->ctx, name, &x, 1);
}
// libm function |base| in the float or double flavour of |e->dt|.
static LLVMValueRef libm1(ew_t* e, const char* base, LLVMValueRef x) {
  char name[32];
  snprintf(name, sizeof(name), "%s%s", base, e->dt == MLCC_DTYPE_F64 ? "" : "f");
  return mlcc_emit_libm(e->ctx, name, x);
}
static LLVMValueRef fexp(ew_t* e, LLVMValueRef x) { return mlcc_emit_fast_exp(e->ctx, x); }
// e^x - 1 for x <= 0 (ELU family): the absolute error stays below 1e-7.
static LLVMValueRef fexpm1(ew_t* e, LLVMValueRef x) {
  if (e->dt == MLCC_DTYPE_F64) return libm1(e, "expm1", x);
  return LLVMBuildFSub(e->b, fexp(e, x), k(e, 1), "expm1");
}

// Integer division/remainder without UB: x/0 -> 0, x%0 -> 0, INT_MIN/-1 wraps.
// |floor_mod| gives the result the sign of the divisor (Python/numpy mod).
static LLVMValueRef int_divrem(ew_t* e, LLVMValueRef a, LLVMValueRef b, bool rem,
                               bool floor_mod) {
  LLVMValueRef zero = k(e, 0), one = k(e, 1);
  LLVMValueRef bz = LLVMBuildICmp(e->b, LLVMIntEQ, b, zero, "bz");
  LLVMValueRef bad = bz, bm1 = NULL;
  if (e->sint) {
    bm1 = LLVMBuildICmp(e->b, LLVMIntEQ, b, k(e, -1), "bm1");
    bad = LLVMBuildOr(e->b, bz, bm1, "bad");
  }
  LLVMValueRef safe = sel(e, bad, one, b);
  LLVMValueRef r;
  if (rem) {
    r = e->sint ? LLVMBuildSRem(e->b, a, safe, "rem") : LLVMBuildURem(e->b, a, safe, "rem");
    if (floor_mod && e->sint) {
      LLVMValueRef nz = LLVMBuildICmp(e->b, LLVMIntNE, r, zero, "nz");
      LLVMValueRef sr = LLVMBuildICmp(e->b, LLVMIntSLT, r, zero, "sr");
      LLVMValueRef sb = LLVMBuildICmp(e->b, LLVMIntSLT, b, zero, "sb");
      LLVMValueRef adj = LLVMBuildAnd(e->b, nz, LLVMBuildXor(e->b, sr, sb, "x"), "adj");
      r = sel(e, adj, LLVMBuildAdd(e->b, r, b, "radj"), r);
    }
  } else {
    r = e->sint ? LLVMBuildSDiv(e->b, a, safe, "div") : LLVMBuildUDiv(e->b, a, safe, "div");
    if (bm1 != NULL) r = sel(e, bm1, LLVMBuildNeg(e->b, a, "neg"), r);
  }
  return sel(e, bz, zero, r);
}

static mlcc_status_t unsupported(const mlcc_node_t* node, mlcc_dtype_t dt) {
  return mlcc_emit_unsupported_dtype(node, dt);
}

static mlcc_status_t need_operands(const mlcc_node_t* node, const LLVMValueRef* ops,
                                   uint32_t n) {
  if (node->n_inputs < n) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs %u inputs, got %u",
                            mlcc_op_name(node->op), n, node->n_inputs);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (ops[i] == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s input %u is missing",
                              mlcc_op_name(node->op), i);
    }
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Fast vectorizable transcendental functions (float)
//===----------------------------------------------------------------------===//

// Float constant |v| of |x|'s (scalar or vector) float type.
static LLVMValueRef fk(LLVMValueRef x, double v) {
  LLVMTypeRef t = LLVMTypeOf(x);
  unsigned n = lanes_of(x);
  return splat_const(n, LLVMConstReal(n ? LLVMGetElementType(t) : t, v));
}
static LLVMValueRef fmad(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  return mlcc_emit_fmuladd(ctx, a, b, c);
}
static LLVMValueRef fintr2(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef a,
                           LLVMValueRef b) {
  LLVMValueRef args[2] = {a, b};
  return mlcc_emit_intrinsic(ctx, name, args, 2);
}
static bool is_f32_type(mlcc_emit_ctx_t* ctx, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
  return t == ctx->t_f32;
}
// Horner evaluation of c[0]*x^(n-1) + ... + c[n-1].
static LLVMValueRef horner(mlcc_emit_ctx_t* ctx, LLVMValueRef x, const double* c, int n) {
  LLVMValueRef p = fk(x, c[0]);
  for (int i = 1; i < n; ++i) p = fmad(ctx, p, x, fk(x, c[i]));
  return p;
}

// Cephes expf: x = n*ln2 + r, |r| <= ln2/2, e^r by a degree-7 polynomial,
// 2^n assembled in the exponent field as 2^(n-1) * 2 so n = 128 stays finite.
static LLVMValueRef fast_exp_f32(mlcc_emit_ctx_t* ctx, LLVMValueRef x) {
  LLVMBuilderRef b = ctx->b;
  const double hi = 88.72283935546875, lo = -86.5;
  LLVMValueRef xc = fintr2(ctx, "llvm.minnum", fintr2(ctx, "llvm.maxnum", x, fk(x, lo)),
                           fk(x, hi));
  // Round x*log2(e) to an integer with the 1.5*2^23 trick (no libm rounding).
  LLVMValueRef magic = fk(x, 12582912.0);
  LLVMValueRef t = fmad(ctx, xc, fk(x, 1.44269504088896341), magic);
  LLVMValueRef nf = LLVMBuildFSub(b, t, magic, "nf");
  LLVMValueRef r = fmad(ctx, nf, fk(x, -0.693359375), xc);
  r = fmad(ctx, nf, fk(x, 2.12194440e-4), r);
  static const double c[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                             4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
  LLVMValueRef p = horner(ctx, r, c, 6);
  LLVMValueRef r2 = LLVMBuildFMul(b, r, r, "r2");
  LLVMValueRef y = LLVMBuildFAdd(b, fmad(ctx, p, r2, r), fk(x, 1.0), "er");
  unsigned n = lanes_of(x);
  // n as an integer straight from t's bits: t = 1.5*2^23 + n is a float in
  // [2^23, 2^24) whose mantissa holds 2^22 + n, so bits(t) = 0x4B400000 + n.
  // (No float->int conversion: cheaper, and qemu 7.2's RVV decoder asserts on
  // vfcvt.rtz.x.f.v, which the conversion becomes with +v.)
  LLVMValueRef ni = LLVMBuildSub(
      b, LLVMBuildBitCast(b, t, vec_type(ctx->t_i32, n), "tbits"),
      splat_const(n, LLVMConstInt(ctx->t_i32, 0x4B400000, 0)), "ni");
  LLVMValueRef bits = LLVMBuildShl(
      b, LLVMBuildAdd(b, ni, splat_const(n, LLVMConstInt(ctx->t_i32, 126, 0)), "e"),
      splat_const(n, LLVMConstInt(ctx->t_i32, 23, 0)), "bits");
  LLVMValueRef scale = LLVMBuildBitCast(b, bits, LLVMTypeOf(x), "scale");
  y = LLVMBuildFMul(b, LLVMBuildFMul(b, y, scale, "ys"), fk(x, 2.0), "exp");
  LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, x, fk(x, hi), "big");
  y = LLVMBuildSelect(b, big, fk(x, __builtin_inf()), y, "exp_inf");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "nan");
  return LLVMBuildSelect(b, nan, x, y, "exp_nan");
}

LLVMValueRef mlcc_emit_fast_exp(mlcc_emit_ctx_t* ctx, LLVMValueRef x) {
  if (!is_f32_type(ctx, x)) return mlcc_emit_intrinsic(ctx, "llvm.exp", &x, 1);
  return fast_exp_f32(ctx, x);
}

LLVMValueRef mlcc_emit_fast_sigmoid(mlcc_emit_ctx_t* ctx, LLVMValueRef x) {
  LLVMBuilderRef b = ctx->b;
  if (!is_f32_type(ctx, x)) {
    // x >= 0: 1/(1+e^-x); x < 0: e^x/(1+e^x). Never overflows to NaN.
    LLVMValueRef one = fk(x, 1.0), zero = fk(x, 0);
    LLVMValueRef ax = mlcc_emit_intrinsic(ctx, "llvm.fabs", &x, 1);
    LLVMValueRef nax = LLVMBuildFNeg(b, ax, "nabs");
    LLVMValueRef ex = mlcc_emit_intrinsic(ctx, "llvm.exp", &nax, 1);
    LLVMValueRef den = LLVMBuildFAdd(b, one, ex, "den");
    LLVMValueRef pos = LLVMBuildFDiv(b, one, den, "pos");
    LLVMValueRef neg = LLVMBuildFDiv(b, ex, den, "neg");
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, zero, "lt"), neg, pos, "sig");
  }
  // 1/(1+e^-x): e^-x saturates to inf (-> 0) or ~0 (-> 1); NaN propagates.
  LLVMValueRef e = fast_exp_f32(ctx, LLVMBuildFNeg(b, x, "nx"));
  return LLVMBuildFDiv(b, fk(x, 1.0), LLVMBuildFAdd(b, fk(x, 1.0), e, "den"), "sig");
}

LLVMValueRef mlcc_emit_fast_tanh(mlcc_emit_ctx_t* ctx, LLVMValueRef x) {
  LLVMBuilderRef b = ctx->b;
  if (!is_f32_type(ctx, x)) return mlcc_emit_libm(ctx, "tanh", x);
  LLVMValueRef ax = mlcc_emit_intrinsic(ctx, "llvm.fabs", &x, 1);
  // |x| < 0.625: Cephes tanhf odd polynomial.
  static const double c[] = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                             1.33314422036E-1, -3.33332819422E-1};
  LLVMValueRef z = LLVMBuildFMul(b, x, x, "z");
  LLVMValueRef p = horner(ctx, z, c, 5);
  LLVMValueRef small = fmad(ctx, LLVMBuildFMul(b, p, z, "pz"), x, x);
  // Else 1 - 2/(e^(2|x|) + 1), with the sign of x.
  LLVMValueRef e = fast_exp_f32(ctx, LLVMBuildFMul(b, ax, fk(x, 2.0), "2ax"));
  LLVMValueRef q = LLVMBuildFDiv(b, fk(x, 2.0), LLVMBuildFAdd(b, e, fk(x, 1.0), "e1"), "q");
  LLVMValueRef big = LLVMBuildFSub(b, fk(x, 1.0), q, "big");
  big = fintr2(ctx, "llvm.copysign", big, x);
  LLVMValueRef is_small = LLVMBuildFCmp(b, LLVMRealOLT, ax, fk(x, 0.625), "is_small");
  return LLVMBuildSelect(b, is_small, small, big, "tanh");
}

LLVMValueRef mlcc_emit_fast_erf(mlcc_emit_ctx_t* ctx, LLVMValueRef x) {
  LLVMBuilderRef b = ctx->b;
  if (!is_f32_type(ctx, x)) return mlcc_emit_libm(ctx, "erf", x);
  LLVMValueRef ax = mlcc_emit_intrinsic(ctx, "llvm.fabs", &x, 1);
  LLVMValueRef z = LLVMBuildFMul(b, x, x, "z");
  // |x| < 0.5: Maclaurin series 2/sqrt(pi) * x * (1 - z/3 + z^2/10 - ...).
  static const double ts[] = {-1.0 / 1320, 1.0 / 216, -1.0 / 42, 1.0 / 10, -1.0 / 3, 1.0};
  LLVMValueRef small = LLVMBuildFMul(
      b, LLVMBuildFMul(b, horner(ctx, z, ts, 6), x, "sx"), fk(x, 1.1283791670955126), "es");
  // Else Abramowitz-Stegun 7.1.26: 1 - t*P(t)*e^(-x^2), t = 1/(1+p|x|).
  LLVMValueRef t = LLVMBuildFDiv(b, fk(x, 1.0), fmad(ctx, ax, fk(x, 0.3275911), fk(x, 1.0)),
                                 "t");
  static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736,
                             0.254829592};
  LLVMValueRef pt = LLVMBuildFMul(b, horner(ctx, t, a, 5), t, "pt");
  LLVMValueRef e = fast_exp_f32(ctx, LLVMBuildFNeg(b, z, "nz"));
  LLVMValueRef big = LLVMBuildFSub(b, fk(x, 1.0), LLVMBuildFMul(b, pt, e, "pte"), "eb");
  big = fintr2(ctx, "llvm.copysign", big, x);
  LLVMValueRef is_small = LLVMBuildFCmp(b, LLVMRealOLT, ax, fk(x, 0.5), "is_small");
  LLVMValueRef r = LLVMBuildSelect(b, is_small, small, big, "erf");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "nan");
  return LLVMBuildSelect(b, nan, x, r, "erf_nan");
}

//===----------------------------------------------------------------------===//
// The variadic fold (Max, Min, Sum, Mean)
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_emit_fold_init(mlcc_emit_fold_t* f, mlcc_emit_ctx_t* ctx,
                                  const mlcc_node_t* node, mlcc_dtype_t dtype, unsigned lanes) {
  memset(f, 0, sizeof(*f));
  ew_t e;
  ew_init(&e, ctx, dtype);
  bool num = e.fp || e.sint || e.uint;
  bool variadic = node->op == MLCC_OP_MAX || node->op == MLCC_OP_MIN ||
                  node->op == MLCC_OP_SUM || node->op == MLCC_OP_MEAN;
  if (!variadic || mlcc_emit_type(ctx, dtype) == NULL || !num ||
      (node->op == MLCC_OP_MEAN && !e.fp)) {
    return unsupported(node, dtype);
  }
  f->ctx = ctx;
  f->op = node->op;
  f->dtype = dtype;
  f->lanes = lanes;
  return mlcc_ok_status();
}

LLVMValueRef mlcc_emit_fold_step(const mlcc_emit_fold_t* f, LLVMValueRef acc, LLVMValueRef x) {
  ew_t E, *e = &E;
  ew_init(e, f->ctx, f->dtype);
  e->lanes = f->lanes;
  if (f->op == MLCC_OP_MAX) return max2(e, acc, x);
  if (f->op == MLCC_OP_MIN) return min2(e, acc, x);
  return add(e, acc, x);
}

LLVMValueRef mlcc_emit_fold_finish(const mlcc_emit_fold_t* f, LLVMValueRef acc, int64_t count) {
  if (f->op != MLCC_OP_MEAN || count <= 1) return acc;
  ew_t E, *e = &E;
  ew_init(e, f->ctx, f->dtype);
  e->lanes = f->lanes;
  return fdiv(e, acc, k(e, (double)count));
}

//===----------------------------------------------------------------------===//
// mlcc_emit_elementwise_scalar
//===----------------------------------------------------------------------===//

bool mlcc_emit_elementwise_vector_ok(const mlcc_node_t* node) {
  switch (node->op) {
    case MLCC_OP_ADD: case MLCC_OP_SUB: case MLCC_OP_MUL: case MLCC_OP_DIV:
    case MLCC_OP_POW: case MLCC_OP_MAX: case MLCC_OP_MIN: case MLCC_OP_SUM:
    case MLCC_OP_MEAN: case MLCC_OP_PRELU: case MLCC_OP_CLIP: case MLCC_OP_RELU:
    case MLCC_OP_ABS: case MLCC_OP_NEG: case MLCC_OP_SIGN: case MLCC_OP_LEAKY_RELU:
    case MLCC_OP_ELU: case MLCC_OP_SELU: case MLCC_OP_CELU: case MLCC_OP_SIGMOID:
    case MLCC_OP_HARD_SIGMOID: case MLCC_OP_HARD_SWISH: case MLCC_OP_TANH:
    case MLCC_OP_ERF: case MLCC_OP_EXP: case MLCC_OP_LOG: case MLCC_OP_SQRT:
    case MLCC_OP_RECIPROCAL: case MLCC_OP_FLOOR: case MLCC_OP_CEIL: case MLCC_OP_ROUND:
    case MLCC_OP_SOFTSIGN: case MLCC_OP_THRESHOLDED_RELU: case MLCC_OP_GELU:
    case MLCC_OP_SWISH:
      break;
    default:
      return false;
  }
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    if (node->inputs[i] != NULL && node->inputs[i]->dtype != MLCC_DTYPE_F32) return false;
  }
  for (uint32_t i = 0; i < node->n_outputs; ++i) {
    if (node->outputs[i] != NULL && node->outputs[i]->dtype != MLCC_DTYPE_F32) return false;
  }
  return node->n_inputs > 0 && node->inputs[0] != NULL;
}

// Pow (ONNX Pow-1..15) of operands |x| and |y|: float bases in their own
// type (the exponent converted to it), integer bases in double, truncated
// back. The caller has checked both operands.
static mlcc_status_t pow_op(ew_t* e, const mlcc_node_t* node, LLVMValueRef x, LLVMValueRef y,
                            LLVMValueRef* out) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const mlcc_dtype_t dt = e->dt;
  const bool num = e->fp || e->sint || e->uint;
  if (!num || node->inputs[1] == NULL) return unsupported(node, dt);
  mlcc_dtype_t edt = node->inputs[1]->dtype;
  if (mlcc_emit_type(ctx, edt) == NULL || edt == MLCC_DTYPE_BOOL) {
    return unsupported(node, edt);
  }
  if (e->fp) {
    LLVMValueRef args[2] = {x, edt == dt ? y : mlcc_emit_convert(ctx, y, edt, dt)};
    *out = mlcc_emit_intrinsic(ctx, "llvm.pow", args, 2);
  } else {
    // Integer base: compute in double, truncate back (numpy int power
    // is exact for results below 2^53).
    LLVMValueRef args[2] = {mlcc_emit_convert(ctx, x, dt, MLCC_DTYPE_F64),
                            mlcc_emit_convert(ctx, y, edt, MLCC_DTYPE_F64)};
    LLVMValueRef p = mlcc_emit_intrinsic(ctx, "llvm.pow", args, 2);
    *out = mlcc_emit_convert(ctx, p, MLCC_DTYPE_F64, dt);
  }
  return mlcc_ok_status();
}

// Mod (ONNX Mod-10..13) of |x| by |y|: fmod=1 is C fmod (sign of the
// dividend); fmod=0 gives the result the sign of the divisor (numpy mod).
// The caller has checked both operands.
static mlcc_status_t mod_op(ew_t* e, const mlcc_node_t* node, LLVMValueRef x, LLVMValueRef y,
                            LLVMValueRef* out) {
  LLVMBuilderRef b = e->b;
  const bool num = e->fp || e->sint || e->uint;
  if (!num) return unsupported(node, e->dt);
  int64_t fmod_attr = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "fmod", 0, &fmod_attr));
  LLVMValueRef r;
  if (e->fp) {
    r = LLVMBuildFRem(b, x, y, "frem");  // C fmod: sign of the dividend
    if (fmod_attr == 0) {
      LLVMValueRef zero = k(e, 0);
      LLVMValueRef nz = LLVMBuildFCmp(b, LLVMRealONE, r, zero, "nz");
      LLVMValueRef sr = LLVMBuildFCmp(b, LLVMRealOLT, r, zero, "sr");
      LLVMValueRef sy = LLVMBuildFCmp(b, LLVMRealOLT, y, zero, "sy");
      LLVMValueRef adj = LLVMBuildAnd(b, nz, LLVMBuildXor(b, sr, sy, "x"), "adj");
      r = sel(e, adj, add(e, r, y), r);
    }
  } else {
    r = int_divrem(e, x, y, true, fmod_attr == 0);
  }
  *out = r;
  return mlcc_ok_status();
}

// Clip of operands[0]: bounds from the min/max attributes before opset 11,
// from the optional inputs 1 and 2 after (ONNX Clip-1..13).
static mlcc_status_t clip_op(ew_t* e, const mlcc_node_t* node, const LLVMValueRef* operands,
                             LLVMValueRef* out) {
  const bool num = e->fp || e->sint || e->uint;
  if (!num) return unsupported(node, e->dt);
  LLVMValueRef lo = NULL, hi = NULL;
  if (node->opset < 11) {
    float fmin, fmax;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "min", -FLT_MAX, &fmin));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "max", FLT_MAX, &fmax));
    if (mlcc_node_attr(node, "min") != NULL) lo = k(e, fmin);
    if (mlcc_node_attr(node, "max") != NULL) hi = k(e, fmax);
  } else {
    lo = node->n_inputs > 1 ? operands[1] : NULL;
    hi = node->n_inputs > 2 ? operands[2] : NULL;
  }
  // Select-based so a NaN input stays NaN (numpy.clip).
  LLVMValueRef r = operands[0];
  if (lo != NULL) r = sel(e, lt(e, r, lo), lo, r);
  if (hi != NULL) r = sel(e, gt(e, r, hi), hi, r);
  *out = r;
  return mlcc_ok_status();
}

// The float-only unary family (LeakyRelu ... ThresholdedRelu) on |x|: the
// value goes to |*out|. UNIMPLEMENTED for an op outside the family.
static mlcc_status_t float_unary(ew_t* e, const mlcc_node_t* node, LLVMValueRef x,
                                 LLVMValueRef* out) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMBuilderRef b = e->b;
  const mlcc_op_t op = node->op;
  switch (op) {
    case MLCC_OP_LEAKY_RELU: {
      float alpha;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 0.01f, &alpha));
      *out = sel(e, lt(e, x, k(e, 0)), mul(e, x, k(e, alpha)), x);
      break;
    }
    case MLCC_OP_ELU: {
      float alpha;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
      *out = sel(e, lt(e, x, k(e, 0)), mul(e, k(e, alpha), fexpm1(e, x)), x);
      break;
    }
    case MLCC_OP_SELU: {
      float alpha, gamma;
      MLCC_RETURN_IF_ERROR(
          mlcc_node_attr_float(node, "alpha", 1.67326319217681884765625f, &alpha));
      MLCC_RETURN_IF_ERROR(
          mlcc_node_attr_float(node, "gamma", 1.05070102214813232421875f, &gamma));
      LLVMValueRef neg = mul(e, k(e, alpha), fexpm1(e, x));
      *out = mul(e, k(e, gamma), sel(e, gt(e, x, k(e, 0)), x, neg));
      break;
    }
    case MLCC_OP_CELU: {
      float alpha;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
      LLVMValueRef neg = mul(e, k(e, alpha), fexpm1(e, fdiv(e, x, k(e, alpha))));
      *out = sel(e, gt(e, x, k(e, 0)), x, neg);
      break;
    }
    case MLCC_OP_SIGMOID:
      *out = mlcc_emit_fast_sigmoid(ctx, x);
      break;
    case MLCC_OP_HARD_SIGMOID: {
      float alpha, beta;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 0.2f, &alpha));
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "beta", 0.5f, &beta));
      LLVMValueRef v = add(e, mul(e, x, k(e, alpha)), k(e, beta));
      *out = max2(e, k(e, 0), min2(e, k(e, 1), v));
      break;
    }
    case MLCC_OP_HARD_SWISH: {
      LLVMValueRef v = add(e, fdiv(e, x, k(e, 6)), k(e, 0.5));
      *out = mul(e, x, max2(e, k(e, 0), min2(e, k(e, 1), v)));
      break;
    }
    case MLCC_OP_TANH: *out = mlcc_emit_fast_tanh(ctx, x); break;
    case MLCC_OP_ERF: *out = mlcc_emit_fast_erf(ctx, x); break;
    case MLCC_OP_EXP: *out = fexp(e, x); break;
    case MLCC_OP_LOG: *out = intr1(e, "llvm.log", x); break;
    case MLCC_OP_SQRT: *out = intr1(e, "llvm.sqrt", x); break;
    case MLCC_OP_RECIPROCAL: *out = fdiv(e, k(e, 1), x); break;
    case MLCC_OP_FLOOR: *out = intr1(e, "llvm.floor", x); break;
    case MLCC_OP_CEIL: *out = intr1(e, "llvm.ceil", x); break;
    case MLCC_OP_ROUND: *out = intr1(e, "llvm.roundeven", x); break;
    case MLCC_OP_SOFTPLUS: {
      // x > 0: x + log1p(e^-x); else log1p(e^x).
      LLVMValueRef t = libm1(e, "log1p", fexp(e, LLVMBuildFNeg(b, intr1(e, "llvm.fabs", x), "na")));
      *out = add(e, max2(e, x, k(e, 0)), t);
      break;
    }
    case MLCC_OP_SOFTSIGN:
      *out = fdiv(e, x, add(e, k(e, 1), intr1(e, "llvm.fabs", x)));
      break;
    case MLCC_OP_MISH: {
      // x * tanh(softplus(x)), softplus as in Softplus above.
      LLVMValueRef t = libm1(e, "log1p", fexp(e, LLVMBuildFNeg(b, intr1(e, "llvm.fabs", x), "na")));
      *out = mul(e, x, mlcc_emit_fast_tanh(ctx, add(e, max2(e, x, k(e, 0)), t)));
      break;
    }
    case MLCC_OP_GELU: {
      const char* approx = NULL;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "approximate", "none", &approx));
      LLVMValueRef inner;
      if (strcmp(approx, "tanh") == 0) {
        // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        LLVMValueRef x3 = mul(e, mul(e, x, x), x);
        LLVMValueRef u = mul(e, k(e, 0.7978845608028654), add(e, x, mul(e, k(e, 0.044715), x3)));
        inner = mlcc_emit_fast_tanh(ctx, u);
      } else {
        // 0.5 x (1 + erf(x / sqrt(2)))
        inner = mlcc_emit_fast_erf(ctx, mul(e, x, k(e, 0.7071067811865476)));
      }
      *out = mul(e, mul(e, k(e, 0.5), x), add(e, k(e, 1), inner));
      break;
    }
    case MLCC_OP_SWISH: {
      float alpha;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
      *out = mul(e, x, mlcc_emit_fast_sigmoid(ctx, mul(e, x, k(e, alpha))));
      break;
    }
    case MLCC_OP_SIN: *out = intr1(e, "llvm.sin", x); break;
    case MLCC_OP_COS: *out = intr1(e, "llvm.cos", x); break;
    case MLCC_OP_THRESHOLDED_RELU: {
      float alpha;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
      *out = sel(e, gt(e, x, k(e, alpha)), x, k(e, 0));
      break;
    }
    default:
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "%s is not an elementwise op known to the emitter",
                              mlcc_op_name(op));
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_emit_elementwise_scalar(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                           const LLVMValueRef* operands,
                                           LLVMValueRef* out_value) {
  *out_value = NULL;
  const mlcc_op_t op = node->op;
  if (node->n_inputs == 0 || node->inputs[0] == NULL || operands[0] == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s has no input 0",
                            mlcc_op_name(op));
  }
  // The dtype deciding the arithmetic: input 0, except Where (input 1).
  mlcc_dtype_t dt = node->inputs[0]->dtype;
  if (op == MLCC_OP_WHERE) {
    MLCC_RETURN_IF_ERROR(need_operands(node, operands, 3));
    if (node->inputs[1] == NULL) return need_operands(node, operands, 4);
    dt = node->inputs[1]->dtype;
  }
  if (mlcc_emit_type(ctx, dt) == NULL) return unsupported(node, dt);
  ew_t E, *e = &E;
  ew_init(e, ctx, dt);
  e->lanes = lanes_of(operands[op == MLCC_OP_WHERE ? 1 : 0]);
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef x = operands[0];
  LLVMValueRef y = node->n_inputs > 1 ? operands[1] : NULL;
  LLVMValueRef r = NULL;
  const bool num = e->fp || e->sint || e->uint;  // numeric (not bool)

  switch (op) {
    case MLCC_OP_ADD:
    case MLCC_OP_SUB:
    case MLCC_OP_MUL:
    case MLCC_OP_DIV:
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      if (!num) return unsupported(node, dt);
      if (op == MLCC_OP_ADD) r = add(e, x, y);
      else if (op == MLCC_OP_SUB) r = sub(e, x, y);
      else if (op == MLCC_OP_MUL) r = mul(e, x, y);
      else r = e->fp ? fdiv(e, x, y) : int_divrem(e, x, y, false, false);
      break;

    case MLCC_OP_POW:
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      MLCC_RETURN_IF_ERROR(pow_op(e, node, x, y, &r));
      break;

    case MLCC_OP_MOD:
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      MLCC_RETURN_IF_ERROR(mod_op(e, node, x, y, &r));
      break;

    case MLCC_OP_MAX:
    case MLCC_OP_MIN:
    case MLCC_OP_SUM:
    case MLCC_OP_MEAN: {
      mlcc_emit_fold_t f;
      MLCC_RETURN_IF_ERROR(mlcc_emit_fold_init(&f, ctx, node, dt, e->lanes));
      int64_t n = 0;
      for (uint32_t i = 0; i < node->n_inputs; ++i) {
        if (operands[i] == NULL) continue;
        r = r == NULL ? operands[i] : mlcc_emit_fold_step(&f, r, operands[i]);
        ++n;
      }
      r = mlcc_emit_fold_finish(&f, r, n);
      break;
    }

    case MLCC_OP_PRELU:
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      if (!num) return unsupported(node, dt);
      r = e->uint ? x : sel(e, lt(e, x, k(e, 0)), mul(e, x, y), x);
      break;

    case MLCC_OP_EQUAL:
    case MLCC_OP_LESS:
    case MLCC_OP_GREATER:
    case MLCC_OP_LESS_EQUAL:
    case MLCC_OP_GREATER_EQUAL: {
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      LLVMRealPredicate fp;
      LLVMIntPredicate sp, up;
      switch (op) {
        case MLCC_OP_EQUAL: fp = LLVMRealOEQ; sp = up = LLVMIntEQ; break;
        case MLCC_OP_LESS: fp = LLVMRealOLT; sp = LLVMIntSLT; up = LLVMIntULT; break;
        case MLCC_OP_GREATER: fp = LLVMRealOGT; sp = LLVMIntSGT; up = LLVMIntUGT; break;
        case MLCC_OP_LESS_EQUAL: fp = LLVMRealOLE; sp = LLVMIntSLE; up = LLVMIntULE; break;
        default: fp = LLVMRealOGE; sp = LLVMIntSGE; up = LLVMIntUGE; break;
      }
      r = cmp(e, fp, sp, up, x, y);
      break;
    }

    case MLCC_OP_AND:
    case MLCC_OP_OR:
    case MLCC_OP_XOR:
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      if (!e->boolean) return unsupported(node, dt);
      r = op == MLCC_OP_AND  ? LLVMBuildAnd(b, x, y, "and")
          : op == MLCC_OP_OR ? LLVMBuildOr(b, x, y, "or")
                             : LLVMBuildXor(b, x, y, "xor");
      break;

    case MLCC_OP_NOT:
      if (!e->boolean) return unsupported(node, dt);
      r = LLVMBuildNot(b, x, "not");
      break;

    case MLCC_OP_BITWISE_AND:
    case MLCC_OP_BITWISE_OR:
    case MLCC_OP_BITWISE_XOR:
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      if (!(e->sint || e->uint)) return unsupported(node, dt);
      r = op == MLCC_OP_BITWISE_AND  ? LLVMBuildAnd(b, x, y, "band")
          : op == MLCC_OP_BITWISE_OR ? LLVMBuildOr(b, x, y, "bor")
                                     : LLVMBuildXor(b, x, y, "bxor");
      break;

    case MLCC_OP_BITWISE_NOT:
      if (!(e->sint || e->uint)) return unsupported(node, dt);
      r = LLVMBuildNot(b, x, "bnot");
      break;

    case MLCC_OP_WHERE:
      // operands[0] is the i1 condition.
      if (node->inputs[0]->dtype != MLCC_DTYPE_BOOL) return unsupported(node, node->inputs[0]->dtype);
      r = LLVMBuildSelect(b, operands[0], operands[1], operands[2], "where");
      break;

    case MLCC_OP_CAST: {
      const mlcc_value_t* out = mlcc_node_output(node, 0);
      if (out == NULL) return unsupported(node, dt);
      if (mlcc_emit_type(ctx, out->dtype) == NULL) return unsupported(node, out->dtype);
      r = mlcc_emit_convert_f8(ctx, x, dt, out->dtype, mlcc_emit_cast_f8_flags(node));
      break;
    }

    case MLCC_OP_CLIP:
      MLCC_RETURN_IF_ERROR(clip_op(e, node, operands, &r));
      break;

    case MLCC_OP_RELU:
      if (!num) return unsupported(node, dt);
      r = e->uint ? x : sel(e, lt(e, x, k(e, 0)), k(e, 0), x);
      break;

    case MLCC_OP_ABS:
      if (!num) return unsupported(node, dt);
      if (e->fp) r = intr1(e, "llvm.fabs", x);
      else if (e->uint) r = x;
      else r = sel(e, lt(e, x, k(e, 0)), LLVMBuildNeg(b, x, "neg"), x);
      break;

    case MLCC_OP_NEG:
      if (!num) return unsupported(node, dt);
      r = e->fp ? LLVMBuildFNeg(b, x, "neg") : LLVMBuildNeg(b, x, "neg");
      break;

    case MLCC_OP_SIGN:
      if (!num) return unsupported(node, dt);
      if (e->uint) {
        r = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, x, k(e, 0), "nz"),
                          vec_type(mlcc_emit_type(ctx, dt), e->lanes), "sign");
      } else {
        // +-0 and NaN map to themselves.
        LLVMValueRef z = e->fp ? x : k(e, 0);
        r = sel(e, gt(e, x, k(e, 0)), k(e, 1), sel(e, lt(e, x, k(e, 0)), k(e, -1), z));
      }
      break;

    default:
      // The float-only unary family.
      if (!e->fp) return unsupported(node, dt);
      MLCC_RETURN_IF_ERROR(float_unary(e, node, x, &r));
      break;
  }
  if (r == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s (%s): no scalar value emitted",
                            mlcc_op_name(op), mlcc_dtype_name(dt));
  }
  *out_value = r;
  return mlcc_ok_status();
}


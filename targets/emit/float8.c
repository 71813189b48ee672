// SPDX-License-Identifier: Apache-2.0
// The float8 conversions of ONNX Cast-19..25 (and of QuantizeLinear /
// DequantizeLinear-19+): float8 bits <-> float32 by integer bit
// manipulation in the emitted code, no library calls. Thread-compatible.
//
// The four types (ONNX TensorProto 17-20), S = sign, E exponent bits with
// bias B, M mantissa bits:
//   float8e4m3fn    E4 M3 B7   no inf; NaN S.1111.111 (0x7f/0xff); max 448
//   float8e4m3fnuz  E4 M3 B8   no inf, no -0; NaN only 0x80; max 240
//   float8e5m2      E5 M2 B15  inf S.11111.00, NaN S.11111.{01,10,11}; max 57344
//   float8e5m2fnuz  E5 M2 B16  no inf, no -0; NaN only 0x80; max 57344
// Encoding rounds to nearest, ties to even, with an unbounded exponent, and
// then applies the tables of the Cast spec: a rounded magnitude above the
// largest finite value (e4m3fn: above 464; e4m3fnuz: 248 and above; the e5m2
// types: 61440 and above) is the largest finite value with 'saturate' (the
// default), else NaN (e4m3fn keeps the sign: 0x7f/0xff; fnuz: 0x80) or, in
// e5m2, +-inf. +-inf: with saturate +-max, except in the fnuz types before
// Cast-24 (NaN; Cast-24 made it +-max); without saturate NaN (e4m3fn keeps
// the sign), e5m2 +-inf. NaN: e4m3fn and e5m2 S.1111111 (sign kept), fnuz
// 0x80. A zero (or a value that rounds to zero) keeps its sign, except in the
// fnuz types, which have no -0 (0x00). Decoding is exact; NaN decodes to the
// quiet NaN 0x7fc00000 with the code's sign (fnuz: positive). float8e8m0
// (Cast-24) has its own pair below (float_to_e8m0), and so has float4e2m1
// (ONNX 23+, f4_to_float / float_to_f4).
#include <string.h>

#include "targets/emit/emit.h"

typedef struct f8_format_t {
  uint32_t man_bits, bias, max_mag;  // max_mag: code of the largest finite value, sign clear
  bool fnuz, has_inf;                // has_inf: e5m2
} f8_format_t;

static bool f8_format(mlcc_dtype_t dt, f8_format_t* out) {
  switch (dt) {
    case MLCC_DTYPE_F8E4M3FN: *out = (f8_format_t){3, 7, 0x7e, false, false}; return true;
    case MLCC_DTYPE_F8E4M3FNUZ: *out = (f8_format_t){3, 8, 0x7f, true, false}; return true;
    case MLCC_DTYPE_F8E5M2: *out = (f8_format_t){2, 15, 0x7b, false, true}; return true;
    case MLCC_DTYPE_F8E5M2FNUZ: *out = (f8_format_t){2, 16, 0x7f, true, false}; return true;
    default: return false;
  }
}

static LLVMValueRef k32(mlcc_emit_ctx_t* ctx, uint32_t v) {
  return LLVMConstInt(ctx->t_i32, v, 0);
}

static LLVMValueRef sel(mlcc_emit_ctx_t* ctx, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(ctx->b, c, a, b, "");
}

static LLVMValueRef ucmp(mlcc_emit_ctx_t* ctx, LLVMIntPredicate p, LLVMValueRef a, uint32_t v) {
  return LLVMBuildICmp(ctx->b, p, a, k32(ctx, v), "");
}

static LLVMValueRef unsupported(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMTypeRef t) {
  mlcc_emit_fail(ctx, mlcc_make_status(MLCC_STATUS_INTERNAL, "%s is not a float8 type",
                                       mlcc_dtype_name(dt)));
  return LLVMGetUndef(t);
}

// float8e8m0 (Cast-24): code c is 2^(c - 127) (c = 0: the float32
// subnormal 2^-127), 0xff NaN.
static LLVMValueRef e8m0_to_float(mlcc_emit_ctx_t* ctx, LLVMValueRef bits) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef c = LLVMBuildZExt(b, bits, ctx->t_i32, "");
  LLVMValueRef r = LLVMBuildShl(b, c, k32(ctx, 23), "");
  r = sel(ctx, ucmp(ctx, LLVMIntEQ, c, 0), k32(ctx, 0x00400000), r);
  r = sel(ctx, ucmp(ctx, LLVMIntEQ, c, 0xff), k32(ctx, 0x7fc00000), r);
  return LLVMBuildBitCast(b, r, ctx->t_f32, "e8m0tof");
}

// The e8m0 code of float |v| under Cast-24's 'round_mode' (|flags|: up, the
// default, = away from zero; down; nearest, ties up; the midpoint of 2^k and
// 2^(k+1) is 1.5 * 2^k) and its table: NaN -> NaN; with saturate +-inf and
// |v| > 2^127 -> 0xfe (E8M0_MAX), |v| < 2^-127 (0 included) -> 0x00
// (E8M0_MIN); without, all of these -> NaN (0xff). The sign is ignored (the
// spec leaves negative inputs unspecified).
static LLVMValueRef float_to_e8m0(mlcc_emit_ctx_t* ctx, LLVMValueRef v, uint32_t flags) {
  LLVMBuilderRef b = ctx->b;
  bool saturate = (flags & MLCC_EMIT_F8_SATURATE) != 0;
  LLVMValueRef ax = LLVMBuildAnd(b, LLVMBuildBitCast(b, v, ctx->t_i32, ""),
                                 k32(ctx, 0x7fffffff), "");
  LLVMValueRef e = LLVMBuildLShr(b, ax, k32(ctx, 23), "");
  LLVMValueRef m = LLVMBuildAnd(b, ax, k32(ctx, 0x7fffff), "");
  LLVMValueRef up;  // i1: one code above e (normal) / code 1 rather than 0 (e = 0)
  LLVMValueRef up0;
  if (flags & MLCC_EMIT_F8_ROUND_DOWN) {
    up = up0 = LLVMConstInt(ctx->t_i1, 0, 0);
  } else if (flags & MLCC_EMIT_F8_ROUND_NEAREST) {
    up = ucmp(ctx, LLVMIntUGE, m, 0x400000);
    up0 = ucmp(ctx, LLVMIntUGE, ax, 0x600000);
  } else {
    up = ucmp(ctx, LLVMIntNE, m, 0);
    up0 = ucmp(ctx, LLVMIntNE, ax, 0x400000);
  }
  LLVMValueRef normal = LLVMBuildAdd(b, e, LLVMBuildZExt(b, up, ctx->t_i32, ""), "");
  LLVMValueRef sub = LLVMBuildZExt(b, up0, ctx->t_i32, "");
  LLVMValueRef r = sel(ctx, ucmp(ctx, LLVMIntEQ, e, 0), sub, normal);
  r = sel(ctx, ucmp(ctx, LLVMIntULT, ax, 0x00400000), k32(ctx, saturate ? 0x00 : 0xff), r);
  r = sel(ctx, ucmp(ctx, LLVMIntUGT, ax, 0x7f000000), k32(ctx, saturate ? 0xfe : 0xff), r);
  r = sel(ctx, ucmp(ctx, LLVMIntUGT, ax, 0x7f800000), k32(ctx, 0xff), r);
  return LLVMBuildTrunc(b, r, ctx->t_i8, "ftoe8m0");
}

// float4e2m1 (ONNX TensorProto 23, docs/docsgen/source/technical/float4.md):
// code S.EE.M, bias 1; E != 0: (-1)^S 2^(E-1) (1 + M/2), E = 0: (-1)^S M/2.
// Decoding is exact: the binary32 exponent is E - 1 + 127 and the mantissa
// bit moves to bit 22; the subnormal 0.5 is 0x3f000000.
static LLVMValueRef f4_to_float(mlcc_emit_ctx_t* ctx, LLVMValueRef bits) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef c = LLVMBuildAnd(b, LLVMBuildZExt(b, bits, ctx->t_i32, ""), k32(ctx, 0xf), "");
  LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, c, k32(ctx, 0x8), ""), k32(ctx, 28), "");
  LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, c, k32(ctx, 1), ""), k32(ctx, 3), "");
  LLVMValueRef m = LLVMBuildAnd(b, c, k32(ctx, 1), "");
  LLVMValueRef normal = LLVMBuildOr(
      b, LLVMBuildShl(b, LLVMBuildAdd(b, e, k32(ctx, 126), ""), k32(ctx, 23), ""),
      LLVMBuildShl(b, m, k32(ctx, 22), ""), "");
  LLVMValueRef sub = sel(ctx, ucmp(ctx, LLVMIntEQ, m, 0), k32(ctx, 0), k32(ctx, 0x3f000000));
  LLVMValueRef r = sel(ctx, ucmp(ctx, LLVMIntEQ, e, 0), sub, normal);
  return LLVMBuildBitCast(b, LLVMBuildOr(b, r, sign, ""), ctx->t_f32, "f4tof");
}

// The float4e2m1 code of float |v| by the ONNX float4 Cast table: round to
// nearest, ties to even, within [-6, 6]; beyond, and +-inf, +-6 (always
// saturating; Cast's 'saturate' applies to the float8 types only); NaN 6
// (positive); a zero (or a value that rounds to it) keeps its sign. The
// magnitude code is the number of rounding boundaries |v| reaches: the
// midpoints 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5 of neighbouring values, a
// midpoint itself going to the even code (0.25 -> 0, 0.75 -> 1.0, 1.25 ->
// 1.0, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4). The comparisons are on the
// binary32 bits of |v| (monotonic for non-negative floats); NaN bits lie
// above every boundary and give 7.
static LLVMValueRef float_to_f4(mlcc_emit_ctx_t* ctx, LLVMValueRef v) {
  LLVMBuilderRef b = ctx->b;
  static const struct { uint32_t bits; bool tie_up; } bound[7] = {
      {0x3e800000u, false},  // 0.25: 0 | 0.5
      {0x3f400000u, true},   // 0.75: 0.5 | 1
      {0x3fa00000u, false},  // 1.25: 1 | 1.5
      {0x3fe00000u, true},   // 1.75: 1.5 | 2
      {0x40200000u, false},  // 2.5: 2 | 3
      {0x40600000u, true},   // 3.5: 3 | 4
      {0x40a00000u, false},  // 5: 4 | 6
  };
  LLVMValueRef x = LLVMBuildBitCast(b, v, ctx->t_i32, "");
  LLVMValueRef ax = LLVMBuildAnd(b, x, k32(ctx, 0x7fffffff), "");
  LLVMValueRef mag = k32(ctx, 0);
  for (int i = 0; i < 7; ++i) {
    LLVMValueRef past = ucmp(ctx, bound[i].tie_up ? LLVMIntUGE : LLVMIntUGT, ax, bound[i].bits);
    mag = LLVMBuildAdd(b, mag, LLVMBuildZExt(b, past, ctx->t_i32, ""), "");
  }
  LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildLShr(b, x, k32(ctx, 28), ""), k32(ctx, 0x8), "");
  sign = sel(ctx, ucmp(ctx, LLVMIntUGT, ax, 0x7f800000), k32(ctx, 0), sign);  // NaN -> +6
  return LLVMBuildTrunc(b, LLVMBuildOr(b, mag, sign, ""), ctx->t_i8, "ftof4");
}

LLVMValueRef mlcc_emit_float8_to_float(mlcc_emit_ctx_t* ctx, LLVMValueRef bits,
                                       mlcc_dtype_t dt) {
  if (dt == MLCC_DTYPE_F8E8M0) return e8m0_to_float(ctx, bits);
  if (dt == MLCC_DTYPE_F4E2M1) return f4_to_float(ctx, bits);
  f8_format_t f;
  if (!f8_format(dt, &f)) return unsupported(ctx, dt, ctx->t_f32);
  LLVMBuilderRef b = ctx->b;
  uint32_t m_bits = f.man_bits, e_mask = (1u << (7 - m_bits)) - 1;
  LLVMValueRef c = LLVMBuildZExt(b, bits, ctx->t_i32, "");
  LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, c, k32(ctx, 0x80), ""), k32(ctx, 24), "");
  LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, c, k32(ctx, m_bits), ""), k32(ctx, e_mask), "");
  LLVMValueRef m = LLVMBuildAnd(b, c, k32(ctx, (1u << m_bits) - 1), "");
  // Normal: rebias the exponent to binary32, widen the mantissa.
  LLVMValueRef normal = LLVMBuildOr(
      b, LLVMBuildShl(b, LLVMBuildAdd(b, e, k32(ctx, 127 - f.bias), ""), k32(ctx, 23), ""),
      LLVMBuildShl(b, m, k32(ctx, 23 - m_bits), ""), "");
  // Zero and subnormals: m * 2^(1 - bias - M), exact in float.
  double unit = 1.0;
  for (uint32_t i = 0; i < f.bias - 1 + m_bits; ++i) unit *= 0.5;
  LLVMValueRef sub = LLVMBuildFMul(b, LLVMBuildUIToFP(b, m, ctx->t_f32, ""),
                                   LLVMConstReal(ctx->t_f32, unit), "");
  sub = LLVMBuildBitCast(b, sub, ctx->t_i32, "");
  LLVMValueRef r = sel(ctx, ucmp(ctx, LLVMIntEQ, e, 0), sub, normal);
  r = LLVMBuildOr(b, r, sign, "");
  LLVMValueRef qnan = LLVMBuildOr(b, sign, k32(ctx, 0x7fc00000), "");
  if (f.fnuz) {
    r = sel(ctx, ucmp(ctx, LLVMIntEQ, c, 0x80), k32(ctx, 0x7fc00000), r);
  } else if (f.has_inf) {
    LLVMValueRef top = ucmp(ctx, LLVMIntEQ, e, e_mask);
    LLVMValueRef inf = LLVMBuildOr(b, sign, k32(ctx, 0x7f800000), "");
    r = sel(ctx, top, sel(ctx, ucmp(ctx, LLVMIntEQ, m, 0), inf, qnan), r);
  } else {
    r = sel(ctx, ucmp(ctx, LLVMIntEQ, LLVMBuildAnd(b, c, k32(ctx, 0x7f), ""), 0x7f), qnan, r);
  }
  return LLVMBuildBitCast(b, r, ctx->t_f32, "f8tof");
}

LLVMValueRef mlcc_emit_float_to_float8(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t dt,
                                       uint32_t flags) {
  if (dt == MLCC_DTYPE_F8E8M0) return float_to_e8m0(ctx, v, flags);
  if (dt == MLCC_DTYPE_F4E2M1) return float_to_f4(ctx, v);
  f8_format_t f;
  if (!f8_format(dt, &f)) return unsupported(ctx, dt, ctx->t_i8);
  LLVMBuilderRef b = ctx->b;
  bool saturate = (flags & MLCC_EMIT_F8_SATURATE) != 0;
  LLVMValueRef x = LLVMBuildBitCast(b, v, ctx->t_i32, "");
  LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildLShr(b, x, k32(ctx, 24), ""), k32(ctx, 0x80), "");
  LLVMValueRef ax = LLVMBuildAnd(b, x, k32(ctx, 0x7fffffff), "");
  uint32_t shift = 23 - f.man_bits;
  // Normal range (|v| >= 2^(1 - bias)): rebias, round the dropped bits to
  // even; a carry moves into the exponent.
  LLVMValueRef m = LLVMBuildSub(b, ax, k32(ctx, (127 - f.bias) << 23), "");
  LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, m, k32(ctx, shift), ""), k32(ctx, 1), "");
  LLVMValueRef normal = LLVMBuildLShr(
      b, LLVMBuildAdd(b, LLVMBuildAdd(b, m, k32(ctx, (1u << (shift - 1)) - 1), ""), odd, ""),
      k32(ctx, shift), "");
  // Subnormal range: |v| * 2^(bias - 1 + M) rounded to an integer (exact
  // scaling; 2^M is the smallest normal's code).
  double scale = 1.0;
  for (uint32_t i = 0; i < f.bias - 1 + f.man_bits; ++i) scale *= 2.0;
  LLVMValueRef af = LLVMBuildBitCast(b, ax, ctx->t_f32, "");
  LLVMValueRef sc = LLVMBuildFMul(b, af, LLVMConstReal(ctx->t_f32, scale), "");
  LLVMValueRef sub = LLVMBuildFPToUI(b, mlcc_emit_intrinsic(ctx, "llvm.roundeven", &sc, 1),
                                     ctx->t_i32, "");
  LLVMValueRef mag = sel(ctx, ucmp(ctx, LLVMIntUGE, ax, (128 - f.bias) << 23), normal, sub);
  // Overflow of the rounded magnitude.
  uint32_t ovf_nosat = f.fnuz ? 0x80 : f.has_inf ? 0x7c : 0x7f;
  LLVMValueRef with_sign_max = LLVMBuildOr(b, sign, k32(ctx, f.max_mag), "");
  LLVMValueRef ovf = saturate ? with_sign_max
                     : f.fnuz ? k32(ctx, 0x80)
                              : LLVMBuildOr(b, sign, k32(ctx, ovf_nosat), "");
  LLVMValueRef r = LLVMBuildOr(b, sign, mag, "");
  if (f.fnuz) r = sel(ctx, ucmp(ctx, LLVMIntEQ, mag, 0), k32(ctx, 0), r);  // no -0
  r = sel(ctx, ucmp(ctx, LLVMIntUGT, mag, f.max_mag), ovf, r);
  // +-inf and NaN.
  LLVMValueRef inf;
  if (f.fnuz) {
    inf = saturate && (flags & MLCC_EMIT_F8_FNUZ_INF_SATURATES) ? with_sign_max : k32(ctx, 0x80);
  } else if (f.has_inf) {
    inf = saturate ? with_sign_max : LLVMBuildOr(b, sign, k32(ctx, 0x7c), "");
  } else {
    inf = saturate ? with_sign_max : LLVMBuildOr(b, sign, k32(ctx, 0x7f), "");
  }
  LLVMValueRef nan = f.fnuz ? k32(ctx, 0x80) : LLVMBuildOr(b, sign, k32(ctx, 0x7f), "");
  r = sel(ctx, ucmp(ctx, LLVMIntEQ, ax, 0x7f800000), inf, r);
  r = sel(ctx, ucmp(ctx, LLVMIntUGT, ax, 0x7f800000), nan, r);
  return LLVMBuildTrunc(b, r, ctx->t_i8, "ftof8");
}

LLVMValueRef mlcc_emit_double_to_float_odd(mlcc_emit_ctx_t* ctx, LLVMValueRef d) {
  // Round to odd: the float nearest |d| (RNE), moved one step toward |d|
  // when inexact and its last bit is even, so that a second rounding to a
  // format of at most 22 mantissa bits is the correct one (no double
  // rounding). NaN stays NaN; a |d| beyond FLT_MAX becomes +-FLT_MAX.
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef t = LLVMBuildFPTrunc(b, d, ctx->t_f32, "");
  LLVMValueRef back = LLVMBuildFPExt(b, t, ctx->t_f64, "");
  LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealONE, back, d, "");
  LLVMValueRef tb = LLVMBuildBitCast(b, t, ctx->t_i32, "");
  LLVMValueRef even = ucmp(ctx, LLVMIntEQ, LLVMBuildAnd(b, tb, k32(ctx, 1), ""), 0);
  LLVMValueRef abs_back = mlcc_emit_intrinsic(ctx, "llvm.fabs", &back, 1);
  LLVMValueRef abs_d = mlcc_emit_intrinsic(ctx, "llvm.fabs", &d, 1);
  LLVMValueRef above = LLVMBuildFCmp(b, LLVMRealOGT, abs_back, abs_d, "");
  LLVMValueRef step = sel(ctx, above, k32(ctx, 0xffffffffu), k32(ctx, 1));
  LLVMValueRef adj = LLVMBuildAdd(b, tb, step, "");
  LLVMValueRef r = sel(ctx, LLVMBuildAnd(b, inexact, even, ""), adj, tb);
  return LLVMBuildBitCast(b, r, ctx->t_f32, "f64tof32odd");
}

uint32_t mlcc_emit_cast_f8_flags(const mlcc_node_t* node) {
  int64_t saturate = 1;
  mlcc_status_t st = mlcc_node_attr_int(node, "saturate", 1, &saturate);
  if (!mlcc_status_is_ok(st)) saturate = 1;
  mlcc_status_free(st);
  uint32_t flags = saturate != 0 ? MLCC_EMIT_F8_SATURATE : 0;
  if (node->opset >= 24) {
    flags |= MLCC_EMIT_F8_FNUZ_INF_SATURATES;
    const char* mode = "up";
    st = mlcc_node_attr_string(node, "round_mode", "up", &mode);
    if (mlcc_status_is_ok(st) && strcmp(mode, "down") == 0) flags |= MLCC_EMIT_F8_ROUND_DOWN;
    if (mlcc_status_is_ok(st) && strcmp(mode, "nearest") == 0) {
      flags |= MLCC_EMIT_F8_ROUND_NEAREST;
    }
    mlcc_status_free(st);
  }
  return flags;
}

// SPDX-License-Identifier: Apache-2.0
// Kernel emitter and scalar formulas of the elementwise op family (every row
// flagged MLCC_OPF_ELEMENTWISE in ir/ops.def).
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/emit.h"

#define MAX_EW_INPUTS 64

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
} ew_t;

static void ew_init(ew_t* e, mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt) {
  e->ctx = ctx;
  e->b = ctx->b;
  e->dt = dt;
  // F16 is computed as float by the toolkit (mlcc_emit_type).
  e->fp = dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64 || dt == MLCC_DTYPE_F16;
  e->uint = mlcc_dtype_is_int(dt) && mlcc_dtype_is_unsigned(dt);
  e->sint = mlcc_dtype_is_int(dt) && !e->uint;
  e->boolean = dt == MLCC_DTYPE_BOOL;
}

static LLVMValueRef k(ew_t* e, double v) { return mlcc_emit_const(e->ctx, e->dt, v); }

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
static LLVMValueRef fexp(ew_t* e, LLVMValueRef x) { return intr1(e, "llvm.exp", x); }

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
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s (opset %d) does not support dtype %s",
                          mlcc_op_name(node->op), node->opset, mlcc_dtype_name(dt));
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
// mlcc_emit_elementwise_scalar
//===----------------------------------------------------------------------===//

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

    case MLCC_OP_POW: {
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      if (!num || node->inputs[1] == NULL) return unsupported(node, dt);
      mlcc_dtype_t edt = node->inputs[1]->dtype;
      if (mlcc_emit_type(ctx, edt) == NULL || edt == MLCC_DTYPE_BOOL) {
        return unsupported(node, edt);
      }
      if (e->fp) {
        LLVMValueRef args[2] = {x, mlcc_emit_convert(ctx, y, edt, dt)};
        r = mlcc_emit_intrinsic(ctx, "llvm.pow", args, 2);
      } else {
        // Integer base: compute in double, truncate back (numpy int power
        // is exact for results below 2^53).
        LLVMValueRef args[2] = {mlcc_emit_convert(ctx, x, dt, MLCC_DTYPE_F64),
                                mlcc_emit_convert(ctx, y, edt, MLCC_DTYPE_F64)};
        LLVMValueRef p = mlcc_emit_intrinsic(ctx, "llvm.pow", args, 2);
        r = mlcc_emit_convert(ctx, p, MLCC_DTYPE_F64, dt);
      }
      break;
    }

    case MLCC_OP_MOD: {
      MLCC_RETURN_IF_ERROR(need_operands(node, operands, 2));
      if (!num) return unsupported(node, dt);
      int64_t fmod_attr = 0;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "fmod", 0, &fmod_attr));
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
      break;
    }

    case MLCC_OP_MAX:
    case MLCC_OP_MIN:
    case MLCC_OP_SUM:
    case MLCC_OP_MEAN: {
      if (!num || (op == MLCC_OP_MEAN && !e->fp)) return unsupported(node, dt);
      uint32_t n = 0;
      for (uint32_t i = 0; i < node->n_inputs; ++i) {
        if (operands[i] == NULL) continue;
        if (r == NULL) {
          r = operands[i];
        } else if (op == MLCC_OP_MAX) {
          r = max2(e, r, operands[i]);
        } else if (op == MLCC_OP_MIN) {
          r = min2(e, r, operands[i]);
        } else {
          r = add(e, r, operands[i]);
        }
        ++n;
      }
      if (op == MLCC_OP_MEAN && n > 1) r = fdiv(e, r, k(e, (double)n));
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

    case MLCC_OP_WHERE:
      // operands[0] is the i1 condition.
      if (node->inputs[0]->dtype != MLCC_DTYPE_BOOL) return unsupported(node, node->inputs[0]->dtype);
      r = LLVMBuildSelect(b, operands[0], operands[1], operands[2], "where");
      break;

    case MLCC_OP_CAST: {
      const mlcc_value_t* out = mlcc_node_output(node, 0);
      if (out == NULL) return unsupported(node, dt);
      if (mlcc_emit_type(ctx, out->dtype) == NULL) return unsupported(node, out->dtype);
      r = mlcc_emit_convert(ctx, x, dt, out->dtype);
      break;
    }

    case MLCC_OP_CLIP: {
      if (!num) return unsupported(node, dt);
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
      r = x;
      if (lo != NULL) r = sel(e, lt(e, r, lo), lo, r);
      if (hi != NULL) r = sel(e, gt(e, r, hi), hi, r);
      break;
    }

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
                          mlcc_emit_type(ctx, dt), "sign");
      } else {
        // +-0 and NaN map to themselves.
        LLVMValueRef z = e->fp ? x : k(e, 0);
        r = sel(e, gt(e, x, k(e, 0)), k(e, 1), sel(e, lt(e, x, k(e, 0)), k(e, -1), z));
      }
      break;

    default:
      // The float-only unary family.
      if (!e->fp) return unsupported(node, dt);
      switch (op) {
        case MLCC_OP_LEAKY_RELU: {
          float alpha;
          MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 0.01f, &alpha));
          r = sel(e, lt(e, x, k(e, 0)), mul(e, x, k(e, alpha)), x);
          break;
        }
        case MLCC_OP_ELU: {
          float alpha;
          MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
          r = sel(e, lt(e, x, k(e, 0)), mul(e, k(e, alpha), libm1(e, "expm1", x)), x);
          break;
        }
        case MLCC_OP_SELU: {
          float alpha, gamma;
          MLCC_RETURN_IF_ERROR(
              mlcc_node_attr_float(node, "alpha", 1.67326319217681884765625f, &alpha));
          MLCC_RETURN_IF_ERROR(
              mlcc_node_attr_float(node, "gamma", 1.05070102214813232421875f, &gamma));
          LLVMValueRef neg = mul(e, k(e, alpha), libm1(e, "expm1", x));
          r = mul(e, k(e, gamma), sel(e, gt(e, x, k(e, 0)), x, neg));
          break;
        }
        case MLCC_OP_CELU: {
          float alpha;
          MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
          LLVMValueRef neg = mul(e, k(e, alpha), libm1(e, "expm1", fdiv(e, x, k(e, alpha))));
          r = sel(e, gt(e, x, k(e, 0)), x, neg);
          break;
        }
        case MLCC_OP_SIGMOID: {
          // x >= 0: 1/(1+e^-x); x < 0: e^x/(1+e^x). Never overflows to NaN.
          LLVMValueRef ex = fexp(e, LLVMBuildFNeg(b, intr1(e, "llvm.fabs", x), "nabs"));
          LLVMValueRef den = add(e, k(e, 1), ex);
          LLVMValueRef pos = fdiv(e, k(e, 1), den);
          LLVMValueRef negv = fdiv(e, ex, den);
          r = sel(e, lt(e, x, k(e, 0)), negv, pos);
          break;
        }
        case MLCC_OP_HARD_SIGMOID: {
          float alpha, beta;
          MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 0.2f, &alpha));
          MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "beta", 0.5f, &beta));
          LLVMValueRef v = add(e, mul(e, x, k(e, alpha)), k(e, beta));
          r = max2(e, k(e, 0), min2(e, k(e, 1), v));
          break;
        }
        case MLCC_OP_HARD_SWISH: {
          LLVMValueRef v = add(e, fdiv(e, x, k(e, 6)), k(e, 0.5));
          r = mul(e, x, max2(e, k(e, 0), min2(e, k(e, 1), v)));
          break;
        }
        case MLCC_OP_TANH: r = libm1(e, "tanh", x); break;
        case MLCC_OP_ERF: r = libm1(e, "erf", x); break;
        case MLCC_OP_EXP: r = fexp(e, x); break;
        case MLCC_OP_LOG: r = intr1(e, "llvm.log", x); break;
        case MLCC_OP_SQRT: r = intr1(e, "llvm.sqrt", x); break;
        case MLCC_OP_RECIPROCAL: r = fdiv(e, k(e, 1), x); break;
        case MLCC_OP_FLOOR: r = intr1(e, "llvm.floor", x); break;
        case MLCC_OP_CEIL: r = intr1(e, "llvm.ceil", x); break;
        case MLCC_OP_ROUND: r = intr1(e, "llvm.roundeven", x); break;
        case MLCC_OP_SOFTPLUS: {
          // x > 0: x + log1p(e^-x); else log1p(e^x).
          LLVMValueRef t = libm1(e, "log1p", fexp(e, LLVMBuildFNeg(b, intr1(e, "llvm.fabs", x), "na")));
          r = add(e, max2(e, x, k(e, 0)), t);
          break;
        }
        case MLCC_OP_SOFTSIGN:
          r = fdiv(e, x, add(e, k(e, 1), intr1(e, "llvm.fabs", x)));
          break;
        case MLCC_OP_SIN: r = intr1(e, "llvm.sin", x); break;
        case MLCC_OP_COS: r = intr1(e, "llvm.cos", x); break;
        case MLCC_OP_THRESHOLDED_RELU: {
          float alpha;
          MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
          r = sel(e, gt(e, x, k(e, alpha)), x, k(e, 0));
          break;
        }
        default:
          return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                  "%s is not an elementwise op known to the emitter",
                                  mlcc_op_name(op));
      }
      break;
  }
  if (r == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s (%s): no scalar value emitted",
                            mlcc_op_name(op), mlcc_dtype_name(dt));
  }
  *out_value = r;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// mlcc_emit_elementwise
//===----------------------------------------------------------------------===//

// One loop over the output's linear index; each present input is loaded at
// its broadcast index and the scalar formula is stored through the epilogue.
mlcc_status_t mlcc_emit_elementwise(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* out = mlcc_node_output(node, 0);
  if (out == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s has no output",
                            mlcc_op_name(node->op));
  }
  if (node->n_inputs > MAX_EW_INPUTS) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s with %u inputs (at most %d)",
                            mlcc_op_name(node->op), node->n_inputs, MAX_EW_INPUTS);
  }
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    const mlcc_value_t* in = node->inputs[i];
    if (in != NULL && mlcc_emit_type(ctx, in->dtype) == NULL) {
      return unsupported(node, in->dtype);
    }
  }
  int64_t numel = 0;
  MLCC_RETURN_IF_ERROR(mlcc_shape_numel(&out->shape, &numel));
  if (numel == 0) return mlcc_ok_status();
  mlcc_loop_t loop = mlcc_emit_for(ctx, 0, numel, "ew");
  LLVMValueRef ops[MAX_EW_INPUTS];
  for (uint32_t i = 0; i < node->n_inputs; ++i) {
    const mlcc_value_t* in = node->inputs[i];
    if (in == NULL) {
      ops[i] = NULL;
      continue;
    }
    LLVMValueRef j = mlcc_emit_broadcast_index(ctx, &out->shape, loop.iv, &in->shape);
    ops[i] = mlcc_emit_load(ctx, in, j);
  }
  LLVMValueRef v = NULL;
  mlcc_status_t st = mlcc_emit_elementwise_scalar(ctx, node, ops, &v);
  if (mlcc_status_is_ok(st)) st = mlcc_emit_store_output(ctx, node, 0, loop.iv, v);
  mlcc_emit_loop_end(ctx, &loop);
  return st;
}

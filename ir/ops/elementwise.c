// SPDX-License-Identifier: Apache-2.0
// Shape/type inference for the elementwise family (ops.def "Elementwise"):
// broadcasting binary/variadic ops, comparisons, Where, Cast, unary ops that
// keep their input's shape, and Dropout.
#include <stdio.h>
#include <string.h>

#include "ir/ops/infer_impl.h"

//===----------------------------------------------------------------------===//
// Broadcasting arithmetic: Add Sub Mul Div Pow Mod Max Min Sum Mean PRelu
//===----------------------------------------------------------------------===//

// Input dtypes the arithmetic ops accept at |node|'s opset (ONNX type
// constraints, coarsened to the dtypes mlcc knows).
static uint32_t arith_dtypes(const mlcc_node_t* node) {
  switch (node->op) {
    case MLCC_OP_ADD:
    case MLCC_OP_SUB:
    case MLCC_OP_MUL:
    case MLCC_OP_DIV:
      // 7..13: float, (u)int32, (u)int64; 14 adds the 8/16-bit integers
      // (checked separately by check_small_ints).
      return MLCC_INFER_DT_NUMERIC;
    case MLCC_OP_MAX:
    case MLCC_OP_MIN:
      return node->opset >= 12 ? MLCC_INFER_DT_NUMERIC : MLCC_INFER_DT_FLOAT;
    case MLCC_OP_SUM:
    case MLCC_OP_MEAN:
      return MLCC_INFER_DT_FLOAT;
    case MLCC_OP_PRELU:
      return node->opset >= 16 ? MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_INT32_64 |
                                     MLCC_INFER_DT_UINT
                               : MLCC_INFER_DT_FLOAT;
    case MLCC_OP_POW:
      return node->opset >= 12 ? MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_INT32_64
                               : MLCC_INFER_DT_FLOAT;
    case MLCC_OP_BITWISE_AND:
    case MLCC_OP_BITWISE_OR:
    case MLCC_OP_BITWISE_XOR:
      return MLCC_INFER_DT_SINT | MLCC_INFER_DT_UINT;
    default:
      return MLCC_INFER_DT_NUMERIC;
  }
}

// Opsets 7..13 of Add/Sub/Mul/Div do not allow 8/16-bit integers.
static mlcc_status_t check_small_ints(const mlcc_node_t* node, const mlcc_value_t* v,
                                      const char* name) {
  bool arith = node->op == MLCC_OP_ADD || node->op == MLCC_OP_SUB ||
               node->op == MLCC_OP_MUL || node->op == MLCC_OP_DIV;
  if (!arith || node->opset >= 14 || mlcc_dtype_size(v->dtype) > 2 ||
      !mlcc_dtype_is_int(v->dtype)) {
    return mlcc_ok_status();
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s input '%s' of type %s needs opset >= 14; the node has opset %d",
                          mlcc_infer_op(node), name, mlcc_dtype_name(v->dtype),
                          (int)node->opset);
}

// Element types: all inputs share one dtype (except Pow 12+, whose exponent
// may differ). Shapes: multidirectional broadcast (PRelu: slope broadcasts
// unidirectionally to X). Output: X's (input 0's) dtype. Max/Min/Sum/Mean
// with more than MLCC_VARIADIC_MAX_INPUTS inputs are UNIMPLEMENTED.
#define MLCC_VARIADIC_MAX_INPUTS 4096
mlcc_status_t mlcc_infer_broadcast(mlcc_node_t* node) {
  if (node->n_inputs == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s needs at least one input; got 0",
                            mlcc_infer_op(node));
  }
  if (node->n_inputs > MLCC_VARIADIC_MAX_INPUTS) {
    // Max/Min/Sum/Mean (ONNX: up to 2^31-1 inputs): every input is a kernel
    // argument, and LLVM's instruction selection of calls with that many
    // arguments grows faster than linearly (a 4096-input Sum took 8 s to
    // compile, 37 s when every input is a graph input; 16000: minutes, GBs).
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s has %u inputs; mlcc compiles at most %d inputs per node",
                            mlcc_infer_op(node), node->n_inputs, MLCC_VARIADIC_MAX_INPUTS);
  }
  uint32_t allowed = arith_dtypes(node);
  mlcc_value_t* first = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "A", true, &first));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, first, "A", allowed));
  MLCC_RETURN_IF_ERROR(check_small_ints(node, first, "A"));
  mlcc_shape_t shape = first->shape;

  if (node->op == MLCC_OP_PRELU) {
    mlcc_value_t* slope = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "slope", true, &slope));
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, first, "X", slope, "slope"));
    MLCC_RETURN_IF_ERROR(
        mlcc_infer_unidirectional(node, &first->shape, "X", &slope->shape, "slope"));
    return mlcc_infer_set_output(node, 0, first->dtype, &first->shape);
  }
  if (node->op == MLCC_OP_MOD) {
    int64_t fmod = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "fmod", 0, &fmod));
    if (fmod != 0 && fmod != 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Mod attribute 'fmod' must be 0 or 1; got %lld",
                              (long long)fmod);
    }
    if (fmod == 0 && mlcc_dtype_is_float(first->dtype)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Mod on floating-point inputs needs fmod=1; got fmod=0 with %s",
                              mlcc_dtype_name(first->dtype));
    }
  }

  for (uint32_t i = 1; i < node->n_inputs; ++i) {
    char name[24];
    snprintf(name, sizeof(name), i == 1 ? "B" : "input %u", i);
    if (node->op != MLCC_OP_MAX && node->op != MLCC_OP_MIN && node->op != MLCC_OP_SUM &&
        node->op != MLCC_OP_MEAN) {
      if (i > 1) break;  // binary ops: extra inputs are rejected by arity checks
    }
    mlcc_value_t* in = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, name, true, &in));
    if (node->op == MLCC_OP_POW && node->opset >= 12) {
      // Pow 12+: exponent has its own type constraint T1 (any numeric).
      MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, in, "Y", MLCC_INFER_DT_NUMERIC));
    } else {
      MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, first, "A", in, name));
    }
    char an[32];
    snprintf(an, sizeof(an), i == 1 ? "A" : "inputs 0..%u", i - 1);
    MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &shape, an, &in->shape, name, &shape));
  }
  return mlcc_infer_set_output(node, 0, first->dtype, &shape);
}

//===----------------------------------------------------------------------===//
// Comparisons and logic: Equal Less Greater LessOrEqual GreaterOrEqual And Or Xor
//===----------------------------------------------------------------------===//

// Output: BOOL with the broadcast shape. Inputs share a dtype.
mlcc_status_t mlcc_infer_compare(mlcc_node_t* node) {
  mlcc_value_t *a = NULL, *b = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "A", true, &a));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "B", true, &b));
  uint32_t allowed;
  switch (node->op) {
    case MLCC_OP_AND:
    case MLCC_OP_OR:
    case MLCC_OP_XOR:
      allowed = MLCC_INFER_DT_BOOL;
      break;
    case MLCC_OP_EQUAL:
      allowed = node->opset >= 11 ? MLCC_INFER_DT_ANY
                                  : MLCC_INFER_DT_BOOL | MLCC_INFER_DT_INT32_64;
      break;
    case MLCC_OP_LESS:
    case MLCC_OP_GREATER:
      allowed = node->opset >= 9 ? MLCC_INFER_DT_NUMERIC : MLCC_INFER_DT_FLOAT;
      break;
    default:
      allowed = MLCC_INFER_DT_NUMERIC;
      break;
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, a, "A", allowed));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, a, "A", b, "B"));
  mlcc_shape_t shape;
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &a->shape, "A", &b->shape, "B", &shape));
  return mlcc_infer_set_output(node, 0, MLCC_DTYPE_BOOL, &shape);
}

// Where(condition: BOOL, X, Y): X and Y share a dtype; output is the
// broadcast of all three with X's dtype.
mlcc_status_t mlcc_infer_where(mlcc_node_t* node) {
  mlcc_value_t *c = NULL, *x = NULL, *y = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "condition", true, &c));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "Y", true, &y));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, c, "condition", MLCC_INFER_DT_BOOL));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", y, "Y"));
  mlcc_shape_t s;
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &c->shape, "condition", &x->shape, "X", &s));
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &s, "broadcast(condition, X)", &y->shape,
                                             "Y", &s));
  return mlcc_infer_set_output(node, 0, x->dtype, &s);
}

// Cast: attribute 'to' (required) is the ONNX TensorProto.DataType number.
mlcc_status_t mlcc_infer_cast(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  const mlcc_attr_t* to_attr = mlcc_node_attr(node, "to");
  if (to_attr == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Cast needs the attribute 'to' (target element type); it is "
                            "missing");
  }
  int64_t to = 0, saturate = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "to", 0, &to));
  // 'saturate' (19+, an int; only float8 targets read it)
  if (node->opset >= 19) MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "saturate", 1, &saturate));
  if (node->opset >= 24) MLCC_RETURN_IF_ERROR(mlcc_infer_round_mode(node));
  if (to >= 1 && to < MLCC_DTYPE_COUNT && mlcc_dtype_is_valid((mlcc_dtype_t)to) &&
      node->opset >= mlcc_dtype_opset_min((mlcc_dtype_t)to)) {
    return mlcc_infer_set_output(node, 0, (mlcc_dtype_t)to, &x->shape);
  }
  // 8 string, 14/15 complex, and the types of later opsets that mlcc cannot
  // represent, or a type before the opset that adds it (float8 at 19,
  // int4/uint4 at 21, float4e2m1 at 23, float8e8m0 at 24, int2/uint2 at 25).
  int32_t max_type = node->opset >= 25 ? 26 : node->opset >= 24 ? 24 : node->opset >= 23 ? 23
                     : node->opset >= 21 ? 22 : node->opset >= 19 ? 20 : 16;
  if (to >= 1 && to <= max_type) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Cast to ONNX data type %lld (%s) is not supported",
                            (long long)to, mlcc_dtype_name((mlcc_dtype_t)to));
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "Cast attribute 'to' must be an ONNX TensorProto.DataType in "
                          "[1, %d] at opset %d; got %lld",
                          (int)max_type, (int)node->opset, (long long)to);
}

//===----------------------------------------------------------------------===//
// Unary ops that keep input 0's dtype and shape
//===----------------------------------------------------------------------===//

// Validates Clip's bounds: attributes min/max (opset < 11) or optional
// scalar inputs of X's dtype (11+).
static mlcc_status_t check_clip(mlcc_node_t* node, const mlcc_value_t* x) {
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(
      node, x, "input", node->opset >= 12 ? MLCC_INFER_DT_NUMERIC : MLCC_INFER_DT_FLOAT));
  if (node->opset < 11) {
    if (node->n_inputs > 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Clip at opset %d takes min/max as attributes and has 1 "
                              "input; got %u inputs",
                              (int)node->opset, node->n_inputs);
    }
    float f = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "min", 0.f, &f));
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "max", 0.f, &f));
    return mlcc_ok_status();
  }
  static const char* const kNames[3] = {"input", "min", "max"};
  for (uint32_t i = 1; i < 3; ++i) {
    mlcc_value_t* b = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, i, kNames[i], false, &b));
    if (b == NULL) continue;
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "input", b, kNames[i]));
    // The spec says scalar; exporters also emit shape [1], which every
    // runtime accepts, so any single-element tensor is allowed.
    int64_t n = mlcc_infer_numel(&b->shape);
    if (n != 1) {
      char sb[MLCC_INFER_SHAPE_BUF];
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Clip input '%s' must be a scalar; got shape %s", kNames[i],
                              mlcc_infer_fmt_shape(&b->shape, sb));
    }
  }
  return mlcc_ok_status();
}

// Float attributes each activation reads; validated for kind only.
static const char* const* unary_float_attrs(mlcc_op_t op) {
  static const char* const kAlpha[] = {"alpha", NULL};
  static const char* const kAlphaBeta[] = {"alpha", "beta", NULL};
  static const char* const kSelu[] = {"alpha", "gamma", NULL};
  static const char* const kNone[] = {NULL};
  switch (op) {
    case MLCC_OP_ELU:
    case MLCC_OP_CELU:
    case MLCC_OP_LEAKY_RELU:
    case MLCC_OP_THRESHOLDED_RELU:
    case MLCC_OP_SWISH:
      return kAlpha;
    case MLCC_OP_HARD_SIGMOID:
      return kAlphaBeta;
    case MLCC_OP_SELU:
      return kSelu;
    default:
      return kNone;
  }
}

// Output 0 = input 0 (dtype and shape). Validates per-op dtypes and
// attributes for the ops sharing this function (see ops.def).
mlcc_status_t mlcc_infer_same_as_input0(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "input", true, &x));
  uint32_t allowed = MLCC_INFER_DT_FLOAT;
  switch (node->op) {
    case MLCC_OP_CLIP:
      MLCC_RETURN_IF_ERROR(check_clip(node, x));
      allowed = MLCC_INFER_DT_ANY;
      break;
    case MLCC_OP_RELU:
      allowed = node->opset >= 14 ? MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_SINT
                                  : MLCC_INFER_DT_FLOAT;
      break;
    case MLCC_OP_NEG:
      allowed = MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_SINT;
      break;
    case MLCC_OP_ABS:
    case MLCC_OP_SIGN:
      allowed = MLCC_INFER_DT_NUMERIC;
      break;
    case MLCC_OP_ERF:
      allowed = MLCC_INFER_DT_NUMERIC;
      break;
    case MLCC_OP_NOT:
      allowed = MLCC_INFER_DT_BOOL;
      break;
    case MLCC_OP_BITWISE_NOT:
      allowed = MLCC_INFER_DT_SINT | MLCC_INFER_DT_UINT;
      break;
    case MLCC_OP_GELU: {
      const char* approx = NULL;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "approximate", "none", &approx));
      if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Gelu attribute 'approximate' must be \"none\" or \"tanh\"; "
                                "got \"%s\"",
                                approx);
      }
      break;
    }
    case MLCC_OP_IDENTITY:
      allowed = MLCC_INFER_DT_ANY;
      break;
    case MLCC_OP_SOFTMAX:
    case MLCC_OP_LOG_SOFTMAX:
      MLCC_RETURN_IF_ERROR(mlcc_infer_check_softmax(node));
      break;
    case MLCC_OP_INSTANCE_NORMALIZATION:
      MLCC_RETURN_IF_ERROR(mlcc_infer_check_instancenorm(node));
      break;
    default:
      break;
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "input", allowed));
  for (const char* const* a = unary_float_attrs(node->op); *a != NULL; ++a) {
    float f = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, *a, 0.f, &f));
  }
  return mlcc_infer_set_output(node, 0, x->dtype, &x->shape);
}

//===----------------------------------------------------------------------===//
// Dropout (inference, or training with ratio 0)
//===----------------------------------------------------------------------===//

// Output 0 = data; optional mask has data's shape and dtype BOOL (opset 10+)
// or data's dtype (7..9). Opset 12+ training_mode must be a constant; when
// it is true, ratio must be a constant 0 (output = data, mask all true, as
// in inference): any other ratio drops elements at random (UNIMPLEMENTED).
mlcc_status_t mlcc_infer_dropout(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "data", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "data", MLCC_INFER_DT_FLOAT));
  if (node->opset < 12) {
    if (node->n_inputs > 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Dropout at opset %d has 1 input (ratio is an attribute); got "
                              "%u",
                              (int)node->opset, node->n_inputs);
    }
    float ratio = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "ratio", 0.5f, &ratio));
  } else {
    mlcc_value_t *ratio = NULL, *training = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "ratio", false, &ratio));
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, ratio, "ratio", MLCC_INFER_DT_FLOAT));
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "training_mode", false, &training));
    if (training != NULL) {
      MLCC_RETURN_IF_ERROR(
          mlcc_infer_check_dtype(node, training, "training_mode", MLCC_INFER_DT_BOOL));
      MLCC_RETURN_IF_ERROR(mlcc_infer_const_input(node, 2, "training_mode",
                                                  "inference vs training switch", false,
                                                  &training));
      if (mlcc_infer_numel(&training->shape) != 1) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Dropout input 'training_mode' must be a scalar");
      }
      if (mlcc_value_const_i64(training, 0) != 0) {
        if (ratio == NULL) {
          return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                  "Dropout with training_mode=true and the default ratio 0.5 "
                                  "drops elements at random, which mlcc does not support "
                                  "(only ratio 0)");
        }
        MLCC_RETURN_IF_ERROR(mlcc_infer_const_input(node, 1, "ratio",
                                                    "dropout ratio in training mode", false,
                                                    &ratio));
        if (mlcc_infer_numel(&ratio->shape) != 1) {
          return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                  "Dropout input 'ratio' must be a scalar");
        }
        double r = mlcc_value_const_f64(ratio, 0);
        if (r != 0.0) {
          return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                                  "Dropout with training_mode=true and ratio %g drops elements "
                                  "at random, which mlcc does not support (only ratio 0)",
                                  r);
        }
      }
    }
  }
  MLCC_RETURN_IF_ERROR(mlcc_infer_set_output(node, 0, x->dtype, &x->shape));
  mlcc_dtype_t mask = node->opset >= 10 ? MLCC_DTYPE_BOOL : x->dtype;
  return mlcc_infer_set_output(node, 1, mask, &x->shape);
}

// SPDX-License-Identifier: Apache-2.0
// Cross-file internals of the shape-inference families in ir/ops/*.c:
// input/attribute readers that produce uniform error messages, broadcasting,
// and the output setter that enforces the element-count limit. Not part of
// the public IR API. Thread-compatible (operates on one node at a time).
#ifndef MLCC_IR_OPS_INFER_IMPL_H_
#define MLCC_IR_OPS_INFER_IMPL_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/checked_math.h"
#include "ir/base/status.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

// Outputs above this many elements are rejected (UNIMPLEMENTED): no target
// we build for can address them, and the limit keeps every later byte-size
// product far from int64/size_t overflow.
#define MLCC_INFER_MAX_NUMEL ((int64_t)1 << 40)

// Size of a buffer that holds any mlcc_infer_fmt_shape() result.
#define MLCC_INFER_SHAPE_BUF 192

// Upper bound on lengths of constant int lists we read (split sizes, etc.).
#define MLCC_INFER_MAX_LIST 1024

// Checks Cast/CastLike-24's 'round_mode' (a string: up, down or nearest;
// default up). INVALID_MODEL otherwise.
mlcc_status_t mlcc_infer_round_mode(const mlcc_node_t* node);

// Bit masks for mlcc_infer_check_dtype().
enum {
  MLCC_INFER_DT_FLOAT = 1u << 0,     // f16, f32, f64
  MLCC_INFER_DT_SINT = 1u << 1,      // i8..i64
  MLCC_INFER_DT_UINT = 1u << 2,      // u8..u64
  MLCC_INFER_DT_BOOL = 1u << 3,
  MLCC_INFER_DT_INT32_64 = 1u << 4,  // only i32 / i64 (indices, shapes)
  // the float8 types; mlcc_infer_input admits them only in the ops that read
  // them, so ANY (the data-movement ops) may include them
  MLCC_INFER_DT_FLOAT8 = 1u << 5,
  MLCC_INFER_DT_NUMERIC = MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_SINT | MLCC_INFER_DT_UINT,
  MLCC_INFER_DT_ANY = MLCC_INFER_DT_NUMERIC | MLCC_INFER_DT_BOOL | MLCC_INFER_DT_FLOAT8,
};

// The node's op name ("Conv").
static inline const char* mlcc_infer_op(const mlcc_node_t* node) {
  return mlcc_op_name(node->op);
}

// Formats "[1,3,224,224]" (or "[]" for scalars) into |buf| of
// MLCC_INFER_SHAPE_BUF bytes; returns |buf|.
char* mlcc_infer_fmt_shape(const mlcc_shape_t* shape, char* buf);

// Fetches input |i| (ONNX parameter |name|) into |*out_value|. Absent
// optional inputs give NULL. Returns INVALID_MODEL if a |required| input is
// missing, INTERNAL if a present input has not been inferred, UNIMPLEMENTED
// if its dtype is not one mlcc supports (bfloat16 outside Cast/CastLike),
// INVALID_MODEL for int4/uint4 where ONNX does not allow them.
mlcc_status_t mlcc_infer_input(const mlcc_node_t* node, uint32_t i, const char* name,
                               bool required, mlcc_value_t** out_value);

// INVALID_MODEL when |dtype| is int4/uint4 and |node|'s op at its opset does
// not list it in its ONNX type constraints (UNIMPLEMENTED for BitCast, which
// does but mlcc does not); OK otherwise. |what| is "input" or "output" and
// |name| its ONNX name, for the message. mlcc_infer_input and
// mlcc_infer_set_output call it.
mlcc_status_t mlcc_infer_check_subbyte(const mlcc_node_t* node, const char* what,
                                       const char* name, mlcc_dtype_t dtype);

// Like mlcc_infer_input, and additionally requires a present input to be a
// CONSTANT with data; otherwise UNIMPLEMENTED "<Op> input '<name>' (<role>)
// must be a compile-time constant". Used for inputs in the row's
// shape_inputs mask.
mlcc_status_t mlcc_infer_const_input(const mlcc_node_t* node, uint32_t i, const char* name,
                                     const char* role, bool required,
                                     mlcc_value_t** out_value);

// Reads constant input |i| as a list of integers into |buf| (capacity
// |cap|). The input must be an integer tensor of rank 1 (or rank 0 when
// |allow_scalar|). |*out_present| is false (count 0) for an absent optional
// input. Errors: as mlcc_infer_const_input, INVALID_MODEL for a wrong
// dtype/rank, UNIMPLEMENTED for more than |cap| values.
mlcc_status_t mlcc_infer_const_ints(const mlcc_node_t* node, uint32_t i, const char* name,
                                    const char* role, bool required, bool allow_scalar,
                                    int64_t* buf, uint32_t cap, uint32_t* out_count,
                                    bool* out_present);

// Same for float (or integer) constant inputs, converted to double.
mlcc_status_t mlcc_infer_const_floats(const mlcc_node_t* node, uint32_t i, const char* name,
                                      const char* role, bool required, double* buf,
                                      uint32_t cap, uint32_t* out_count, bool* out_present);

// Returns INVALID_MODEL "<Op> input '<name>' must be <kinds>; got <dtype>"
// unless |value|'s dtype is in |allowed| (MLCC_INFER_DT_* mask).
mlcc_status_t mlcc_infer_check_dtype(const mlcc_node_t* node, const mlcc_value_t* value,
                                     const char* name, uint32_t allowed);

// INVALID_MODEL unless |a| and |b| have the same dtype; names both.
mlcc_status_t mlcc_infer_same_dtype(const mlcc_node_t* node, const mlcc_value_t* a,
                                    const char* a_name, const mlcc_value_t* b,
                                    const char* b_name);

// INVALID_MODEL unless |value| has rank |rank|.
mlcc_status_t mlcc_infer_check_rank(const mlcc_node_t* node, const mlcc_value_t* value,
                                    const char* name, int32_t rank);

// Concat's rule (ONNX Concat, opset 1-26; QLinearConcat): input |in|, named
// |name|, has |first|'s rank and dims except on |axis|. INVALID_MODEL naming
// |op| (the op as the message spells it), both shapes and the axis otherwise.
mlcc_status_t mlcc_infer_concat_compatible(const char* op, const mlcc_value_t* first,
                                           const mlcc_value_t* in, const char* name,
                                           int32_t axis);

// numpy.matmul's promotion of 1-D operands (ONNX MatMul, opset 1-26;
// QLinearMatMul, MatMulInteger): a [K] A becomes [1, K], a [K] B [K, 1];
// other shapes are copied. |a| and |b| must have rank >= 1.
void mlcc_infer_matmul_promote(const mlcc_shape_t* a, const mlcc_shape_t* b, mlcc_shape_t* sa,
                               mlcc_shape_t* sb);

// Multidirectional (numpy) broadcast of |a| and |b| into |*out_shape|.
// INVALID_MODEL naming both operands and the first clashing dims.
mlcc_status_t mlcc_infer_broadcast2(const mlcc_node_t* node, const mlcc_shape_t* a,
                                    const char* a_name, const mlcc_shape_t* b,
                                    const char* b_name, mlcc_shape_t* out_shape);

// Unidirectional broadcast: INVALID_MODEL unless |from| broadcasts to
// |to| without changing |to| (ONNX Broadcasting.md, e.g. Gemm's C).
mlcc_status_t mlcc_infer_unidirectional(const mlcc_node_t* node, const mlcc_shape_t* to,
                                        const char* to_name, const mlcc_shape_t* from,
                                        const char* from_name);

// Normalizes |axis| (attribute or list entry named |what|) against |rank|:
// valid values are [-rank, rank-1]. INVALID_MODEL otherwise.
mlcc_status_t mlcc_infer_axis(const mlcc_node_t* node, const char* what, int64_t axis,
                              int32_t rank, int32_t* out_axis);

// Normalizes a list of axes into a bitmask |*out_mask| of dims in [0,rank).
// INVALID_MODEL for out-of-range or repeated axes.
mlcc_status_t mlcc_infer_axes_mask(const mlcc_node_t* node, const char* what,
                                   const int64_t* axes, uint32_t n_axes, int32_t rank,
                                   uint32_t* out_mask);

// Sets output |i| (if present) to |dtype| and |shape| and marks it inferred.
// INVALID_MODEL for negative dims or a rank above MLCC_MAX_RANK (reported as
// UNIMPLEMENTED), UNIMPLEMENTED above MLCC_INFER_MAX_NUMEL elements.
mlcc_status_t mlcc_infer_set_output(mlcc_node_t* node, uint32_t i, mlcc_dtype_t dtype,
                                    const mlcc_shape_t* shape);

// Element count of |shape|, or -1 if it has a negative dim or the product
// overflows int64 (input shapes are not trusted to be in range).
int64_t mlcc_infer_numel(const mlcc_shape_t* shape);

// Checked dim arithmetic with an INVALID_MODEL naming |what| on overflow.
mlcc_status_t mlcc_infer_mul(const mlcc_node_t* node, const char* what, int64_t a,
                             int64_t b, int64_t* out);
mlcc_status_t mlcc_infer_add(const mlcc_node_t* node, const char* what, int64_t a,
                             int64_t b, int64_t* out);

// Sets output |out_index| of a window op (Conv, ConvTranspose, pools) to
// [N, g->out_channels, g->out...] with |dtype|. |g| is a
// struct mlcc_spatial_t from mlcc_spatial_resolve (ir/ops/spatial.h).
struct mlcc_spatial_t;
mlcc_status_t mlcc_infer_set_window_output(mlcc_node_t* node,
                                           const struct mlcc_spatial_t* g,
                                           uint32_t out_index, mlcc_dtype_t dtype);

// Validators for ops that share mlcc_infer_same_as_input0 (norm.c).
mlcc_status_t mlcc_infer_check_instancenorm(mlcc_node_t* node);
mlcc_status_t mlcc_infer_check_softmax(mlcc_node_t* node);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_INFER_IMPL_H_

// SPDX-License-Identifier: Apache-2.0
// The emitter toolkit: what op emitters (emit_*.c) use to build a kernel's
// LLVM IR through the LLVM-C API. Thread-compatible: one ctx per thread.
//
// Kernel ABI (LINKED: kernel-abi-v1)
// ----------------------------------
//   void <symbol>(ptr arg0, ptr arg1, ...)
// One pointer per value the kernel touches, in mlcc_kernel_args() order:
// first the outputs of the kernel's last node (present ones, in order), then
// every distinct input value of the kernel's nodes in order of first
// appearance (omitted optional inputs and chain-internal values excluded).
// Pointers are 64-byte aligned (workspace plan, weights blob and, by contract,
// the caller's buffers only 4-byte: emitters must not assume more than the
// element alignment). Arguments never alias each other (noalias), except in
// an in-place kernel (mlcc_kernel_t.inplace_input, set by plan-memory): its
// output is the input's buffer, and the codegen maps the output to the
// input's parameter (mlcc_emit_ptr returns that pointer for both).
// Elements are stored densely, row-major, at their dtype's size; BOOL is one
// byte 0/1. Weights are arguments: a kernel never embeds constant tensor data
// except values of the row's |shape_inputs|.
//
// Emitter conventions
// -------------------
// * Write scalar loop nests with mlcc_emit_for()/mlcc_emit_loop_end(); LLVM's
//   loop and SLP vectorizers do the rest. Indices are i64.
// * Loop-carried scalars (accumulators) are mlcc_emit_var() allocas; SROA
//   promotes them to registers.
// * "Computational" types: F32->float, F64->double, integers->iN, BOOL->i1.
//   mlcc_emit_load()/mlcc_emit_store*() convert BOOL i8<->i1. F16 is stored
//   as half and computed as float (load extends, store rounds). BF16 is
//   stored as its i16 bits and computed as float (load shifts the bits into
//   the upper half; store rounds to nearest even, NaN stays a quiet NaN).
//   The float8 types are stored and computed as their i8 bits: loads and
//   stores copy them (the data-movement ops are bit-exact) and only
//   mlcc_emit_convert*() interpret them (targets/emit/float8.c).
// * Every output element is written exactly once with mlcc_emit_store_output.
#ifndef MLCC_TARGETS_EMIT_EMIT_H_
#define MLCC_TARGETS_EMIT_EMIT_H_

#include <llvm-c/Core.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// The kernel being built, passed to every emitter (targets/kernels/kernels.h).
typedef struct mlcc_emit_ctx_t mlcc_emit_ctx_t;
struct mlcc_emit_ctx_t {
  LLVMContextRef llctx;
  LLVMModuleRef module;
  LLVMBuilderRef b;
  LLVMValueRef fn;               // the kernel function being built
  LLVMBasicBlockRef entry_bb;    // allocas go here
  const mlcc_target_t* target;
  const mlcc_kernel_t* kernel;   // the kernel being emitted
  // Cached types.
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f32, t_f64, t_ptr;
  // Arguments: arg_values[i] is passed as LLVM parameter i (arg_ptrs[i]).
  uint32_t n_args;
  const mlcc_value_t** arg_values;
  LLVMValueRef* arg_ptrs;
  // First error raised by a toolkit function that cannot return a status
  // (e.g. mlcc_emit_load of a value that is not an argument). The codegen
  // returns it after the emitter; see mlcc_emit_fail(). Owned by the ctx.
  mlcc_status_t deferred_status;
  // Parallel range (LINKED: entry-abi parallel): when the kernel has parallel
  // units (mlcc_emit_parallel_units > 0) these are its i64 begin/end
  // parameters and the emitter computes only units [begin, end); else NULL.
  LLVMValueRef range_begin, range_end;
};

// Number of independent work units kernel |kernel| splits into for the
// parallel entry (0 = not parallel). A pure function of the kernel's shapes,
// attributes and |target|: the kernel emitter and the entry function agree on
// it without seeing each other. 0 on a bare-metal target; else the anchor's
// emitter's parallel_units (targets/kernels/kernels.h), 0 when it has none.
int64_t mlcc_emit_parallel_units(const mlcc_kernel_t* kernel, const mlcc_target_t* target);

//===----------------------------------------------------------------------===//
// Kernel arguments
//===----------------------------------------------------------------------===//

// Fills |out_args| (capacity |cap|) with the kernel's argument values in ABI
// order and returns their count (which may exceed |cap|: call again). With
// |cap| 0 (|out_args| may be NULL) it only counts, without allocating.
uint32_t mlcc_kernel_args(const mlcc_kernel_t* kernel, const mlcc_value_t** out_args,
                          uint32_t cap);

// OK when every present input and output of |node| has a dtype this target's
// emitters compute in (mlcc_emit_type non-NULL); else UNIMPLEMENTED naming
// the op, its opset and the first unsupported dtype (inputs first).
mlcc_status_t mlcc_emit_check_types(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node);

// Pointer to element |idx| (i64) of |value| and, in |*out_storage_type|, the
// LLVM type it is stored as; NULL (an error deferred through mlcc_emit_fail)
// if |value| is not a kernel argument. For the toolkit's own files.
LLVMValueRef mlcc_emit_element_ptr(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value,
                                   LLVMValueRef idx, LLVMTypeRef* out_storage_type);

// The value vals[j] of the last chain node j < |c| whose output 0 is |in|, or
// NULL when |in| is not produced inside chain[0..c) (the operand is then
// loaded from memory). targets/emit/epilogue.c.
LLVMValueRef mlcc_emit_chain_value(const mlcc_node_t* const* chain, uint32_t c,
                                   const LLVMValueRef* vals, const mlcc_value_t* in);

// Base pointer of |value| in the kernel, or NULL if it is not an argument.
LLVMValueRef mlcc_emit_ptr(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value);

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

// Computational LLVM type for |dtype| (BOOL -> i1), or NULL if unsupported.
LLVMTypeRef mlcc_emit_type(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype);
// Storage LLVM type (BOOL -> i8).
LLVMTypeRef mlcc_emit_storage_type(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype);
LLVMValueRef mlcc_emit_i64(mlcc_emit_ctx_t* ctx, int64_t v);
LLVMValueRef mlcc_emit_f32(mlcc_emit_ctx_t* ctx, float v);
// A constant of |dtype|'s computational type holding |v| (rounded/truncated).
LLVMValueRef mlcc_emit_const(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, double v);
// Converts |v| of computational type |from| to |to| (ONNX Cast semantics:
// float->int truncates toward zero, ->bool is != 0; ->int4/uint4 keeps the
// low 4 bits of the integer, a float rounded half away from zero first, as
// onnxruntime does; int2/uint2 likewise with 2 bits).
// A float8 |to| gets Cast-19's default (saturate, fnuz +-inf -> NaN): see
// mlcc_emit_convert_f8 for the other forms.
LLVMValueRef mlcc_emit_convert(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t from,
                               mlcc_dtype_t to);
// The low 4 bits of integer |v| (any width), sign-extended for |dtype| int4,
// zero-extended for uint4 (the low 2 bits for int2/uint2): the canonical
// one-per-byte form (dtypes.def). Loads of these types apply it, so a
// caller's out-of-range byte reads as its low 4 (2) bits.
LLVMValueRef mlcc_emit_wrap4(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t dtype);

// Flags of the conversions to float8 (ONNX Cast-19..25 tables).
enum {
  MLCC_EMIT_F8_SATURATE = 1u << 0,  // 'saturate' = 1: out of range -> +-max
  // Cast-24+: with saturate, +-inf -> +-max in the fnuz types too (NaN before)
  MLCC_EMIT_F8_FNUZ_INF_SATURATES = 1u << 1,
  // float8e8m0 (Cast-24 'round_mode'): toward zero / to nearest, ties up;
  // neither is 'up' (away from zero, the default)
  MLCC_EMIT_F8_ROUND_DOWN = 1u << 2,
  MLCC_EMIT_F8_ROUND_NEAREST = 1u << 3,
};
// mlcc_emit_convert with the float8 flags |f8_flags| for a float8 |to|
// (ignored otherwise). A double source is rounded once (through
// round-to-odd float), every other source goes through float exactly or with
// a rounding that cannot change the float8 result.
LLVMValueRef mlcc_emit_convert_f8(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t from,
                                  mlcc_dtype_t to, uint32_t f8_flags);
// targets/emit/float8.c. The float value (f32) of i8 float8 bits |bits| of
// |dt| (exact; NaN codes give a quiet NaN). float4e2m1 (ONNX 23+) is one
// of them here: its code 0..15 in the low 4 bits of the i8.
LLVMValueRef mlcc_emit_float8_to_float(mlcc_emit_ctx_t* ctx, LLVMValueRef bits,
                                       mlcc_dtype_t dt);
// The i8 bits of float (f32) |v| as float8 |dt|: round to nearest even, then
// the Cast tables for out-of-range values, inf and NaN under |flags|
// (float4e2m1: always saturating, NaN -> +6, flags ignored).
LLVMValueRef mlcc_emit_float_to_float8(mlcc_emit_ctx_t* ctx, LLVMValueRef v, mlcc_dtype_t dt,
                                       uint32_t flags);
// The float8 flags of Cast/CastLike node |node|: its 'saturate' attribute
// (opset 19+, default 1; nonzero is true) and, from opset 24, the fnuz rule
// for +-inf. A malformed attribute reads as the default (infer checked it).
uint32_t mlcc_emit_cast_f8_flags(const mlcc_node_t* node);
// Double |d| rounded to float with round-to-odd (for a second rounding to a
// narrower format without double-rounding errors).
LLVMValueRef mlcc_emit_double_to_float_odd(mlcc_emit_ctx_t* ctx, LLVMValueRef d);

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// Loads element |idx| (i64 linear index) of |value| in computational type.
// Constants not passed as arguments are an INTERNAL bug: |value| must be an arg.
LLVMValueRef mlcc_emit_load(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value,
                            LLVMValueRef idx);
// Loads the element of |dtype| stored at |ptr| (storage layout: BOOL one
// byte, F16 binary16) in computational type. The one conversion used by
// mlcc_emit_load and by emitters reading their own constant tables.
LLVMValueRef mlcc_emit_load_elem(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, LLVMValueRef ptr);

// Stores |v| to element |idx| of |value| bypassing any epilogue (scratch use).
void mlcc_emit_store(mlcc_emit_ctx_t* ctx, const mlcc_value_t* value, LLVMValueRef idx,
                     LLVMValueRef v);
// Stores |v| (computational type of output |out_index| of |node|) to element
// |idx|. If |node| is the anchor of a fused kernel and |out_index| is 0, the
// epilogue chain is applied first and the result goes to the kernel's final
// output. Returns UNIMPLEMENTED/INTERNAL if the epilogue cannot be emitted.
mlcc_status_t mlcc_emit_store_output(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                     uint32_t out_index, LLVMValueRef idx,
                                     LLVMValueRef v);

// Vector variant of mlcc_emit_store_output: stores the LLVMVectorType value
// |v| (lanes of the output's computational type) to elements idx, idx+1, ...
// idx+lanes-1 of output |out_index| of |node|. Every lane must be a valid
// element. Unfused outputs get one vector store; a fused F32 epilogue of
// vectorizable formulas (mlcc_emit_elementwise_vector_ok) runs on whole
// vectors (other operands loaded as vectors, splatted or gathered per lane);
// other epilogues run lane by lane through the scalar formulas. Same errors
// as mlcc_emit_store_output.
mlcc_status_t mlcc_emit_store_output_vec(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                         uint32_t out_index, LLVMValueRef idx,
                                         LLVMValueRef v);

// A mutable scalar: an alloca in the entry block initialized with |init|
// at the current position. Use LLVMBuildLoad2/LLVMBuildStore on it.
LLVMValueRef mlcc_emit_var(mlcc_emit_ctx_t* ctx, LLVMTypeRef type, LLVMValueRef init);

// A stack array of |n| elements of |type| (n >= 1), an alloca named |name| in
// the entry block with alignment |align| bytes; the builder stays where it was.
// The array's bytes count toward the kernel's stack (stack.c's bound).
LLVMValueRef mlcc_emit_entry_array(mlcc_emit_ctx_t* ctx, LLVMTypeRef type, int64_t n,
                                   unsigned align, const char* name);

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

typedef struct mlcc_loop_t {
  LLVMValueRef iv;               // i64 induction variable, valid in the body
  LLVMValueRef end;
  int64_t step;
  LLVMBasicBlockRef header, body, latch, exit;
} mlcc_loop_t;

// for (iv = start; iv < end; iv += step) { ...body... }; |step| > 0.
// Positions the builder in the body. Close with mlcc_emit_loop_end().
mlcc_loop_t mlcc_emit_loop_begin(mlcc_emit_ctx_t* ctx, LLVMValueRef start, LLVMValueRef end,
                                 int64_t step, const char* name);
// Constant-bound convenience: for (iv = start; iv < end; ++iv).
mlcc_loop_t mlcc_emit_for(mlcc_emit_ctx_t* ctx, int64_t start, int64_t end,
                          const char* name);
// Closes the loop and positions the builder after it.
void mlcc_emit_loop_end(mlcc_emit_ctx_t* ctx, mlcc_loop_t* loop);

typedef struct mlcc_if_t {
  LLVMBasicBlockRef then_bb, else_bb, merge_bb;
} mlcc_if_t;

// if (cond) { ... } [else { ... }]; |cond| is i1. Builder goes to "then".
mlcc_if_t mlcc_emit_if_begin(mlcc_emit_ctx_t* ctx, LLVMValueRef cond);
// Switches the builder to the else branch (optional).
void mlcc_emit_if_else(mlcc_emit_ctx_t* ctx, mlcc_if_t* branch);
// Closes the if and positions the builder at the merge block.
void mlcc_emit_if_end(mlcc_emit_ctx_t* ctx, mlcc_if_t* branch);

//===----------------------------------------------------------------------===//
// Index arithmetic (all i64)
//===----------------------------------------------------------------------===//

// Splits linear |idx| over |shape| into |out_idx[0..rank)|.
void mlcc_emit_unravel(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* shape, LLVMValueRef idx,
                       LLVMValueRef* out_idx);
// Linear index of |idx[0..rank)| over |shape|.
LLVMValueRef mlcc_emit_ravel(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* shape,
                             const LLVMValueRef* idx);
// Linear index into |in_shape| of the element that numpy-broadcasts to linear
// index |out_idx| of |out_shape| (right-aligned; size-1 dims repeat).
LLVMValueRef mlcc_emit_broadcast_index(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* out_shape,
                                       LLVMValueRef out_idx, const mlcc_shape_t* in_shape);

//===----------------------------------------------------------------------===//
// Math
//===----------------------------------------------------------------------===//

// Calls overloaded intrinsic |name| ("llvm.exp", "llvm.fabs", "llvm.maxnum",
// "llvm.fmuladd", ...) on |n| arguments of |x[0]|'s type.
LLVMValueRef mlcc_emit_intrinsic(mlcc_emit_ctx_t* ctx, const char* name,
                                 const LLVMValueRef* args, unsigned n);
// a*b+c with contraction allowed (llvm.fmuladd).
LLVMValueRef mlcc_emit_fmuladd(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b,
                               LLVMValueRef c);
// Calls libm function |name| (e.g. "erff", "tanhf") taking/returning
// |x|'s float type. Generated libraries may depend on libm only.
LLVMValueRef mlcc_emit_libm(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x);

// select(cond, a, b); |cond| is i1.
LLVMValueRef mlcc_emit_select(mlcc_emit_ctx_t* ctx, LLVMValueRef cond, LLVMValueRef a,
                              LLVMValueRef b);
// min/max of two values of |dtype|'s computational type: floats use
// llvm.minnum/maxnum, signed ints smin/smax, unsigned ints and bool umin/umax.
LLVMValueRef mlcc_emit_min(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, LLVMValueRef a,
                           LLVMValueRef b);
LLVMValueRef mlcc_emit_max(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, LLVMValueRef a,
                           LLVMValueRef b);

typedef enum mlcc_cmp_e {
  MLCC_CMP_EQ = 0,
  MLCC_CMP_NE,
  MLCC_CMP_LT,
  MLCC_CMP_LE,
  MLCC_CMP_GT,
  MLCC_CMP_GE,
} mlcc_cmp_t;
// Compares two values of |dtype|'s computational type; returns i1. Floats:
// ordered compares (false on NaN) except NE (true on NaN); integers signed
// or unsigned per |dtype|; bool unsigned.
LLVMValueRef mlcc_emit_cmp(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dtype, mlcc_cmp_t cmp,
                           LLVMValueRef a, LLVMValueRef b);

// Two-argument libm function (e.g. "powf", "fmodf", "atan2f") on |x|'s type.
LLVMValueRef mlcc_emit_libm2(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef x,
                             LLVMValueRef y);

// Records |status| as the ctx's deferred error (the first one wins; later
// ones are freed). Emission continues; the codegen fails the kernel with it.
void mlcc_emit_fail(mlcc_emit_ctx_t* ctx, mlcc_status_t status);

// Vectorizable exp, sigmoid, tanh and erf of |x| (computational float type
// of F32/F16 or double): for float, inline range reduction + polynomial code
// (no libm call, so loops vectorize) accurate within DESIGN section 4's
// tolerance (exp, sigmoid, tanh: a few ulp relative; erf: 1.5e-7 absolute);
// exp flushes results below ~2.7e-38 to that value's neighbourhood (|err| <
// 3e-38); NaN propagates, exp(+inf) = inf. For double: llvm.exp/libm.
// Implemented in targets/emit/elementwise_scalar.c.
LLVMValueRef mlcc_emit_fast_exp(mlcc_emit_ctx_t* ctx, LLVMValueRef x);
LLVMValueRef mlcc_emit_fast_sigmoid(mlcc_emit_ctx_t* ctx, LLVMValueRef x);
LLVMValueRef mlcc_emit_fast_tanh(mlcc_emit_ctx_t* ctx, LLVMValueRef x);
LLVMValueRef mlcc_emit_fast_erf(mlcc_emit_ctx_t* ctx, LLVMValueRef x);

// A long float32 sum's accumulator for partial (block) sums. On targets
// with double-precision hardware (mlcc_target_wide_sums) it is a double:
// the float block sums are widened and added, and the caller finishes
// (divides) in double and rounds once. Elsewhere (Cortex-M4F, rv32, rv32f)
// it is a float sum with a float compensation term (Neumaier's variant of
// Kahan summation), so the generated code has no double arithmetic. For m
// partial sums p_i the compensated result S' satisfies
//   |S' - sum p_i| <= eps * |sum p_i| + 2 * eps^2 * m * sum |p_i|,
// eps = 2^-24 (Higham, "Accuracy and Stability of Numerical Algorithms",
// 2nd ed., section 4.3): the result is the exactly rounded sum of the p_i
// until m reaches ~2^23, the same as adding them in double and rounding.
// The error inside each block is the block's own float sum, as on every
// target.
typedef struct mlcc_fsum_t {
  bool wide;          // double accumulator (no compensation)
  LLVMTypeRef type;   // double if wide, else float: the type of _value
  LLVMValueRef sum;   // alloca of |type|
  LLVMValueRef comp;  // alloca float, the running compensation (NULL if wide)
} mlcc_fsum_t;

// An accumulator for ctx->target holding 0 (stored at the current position).
mlcc_fsum_t mlcc_emit_fsum_begin(mlcc_emit_ctx_t* ctx);
// Adds the float32 scalar |x| to |s|.
void mlcc_emit_fsum_add(mlcc_emit_ctx_t* ctx, const mlcc_fsum_t* s, LLVMValueRef x);
// The sum so far in s->type (a compensated sum is sum + compensation).
LLVMValueRef mlcc_emit_fsum_value(mlcc_emit_ctx_t* ctx, const mlcc_fsum_t* s);
// s->type's value |v| rounded to float32 (no-op when not wide).
LLVMValueRef mlcc_emit_fsum_round(mlcc_emit_ctx_t* ctx, const mlcc_fsum_t* s, LLVMValueRef v);

// The scalar formula of elementwise |node| (MLCC_OPF_ELEMENTWISE) on
// |operands| (computational types, one per input slot; NULL for omitted
// optional inputs; vectors of one width when
// mlcc_emit_elementwise_vector_ok(node)). Used by mlcc_emit_elementwise and by epilogues.
// Implemented in targets/emit/elementwise_scalar.c. UNIMPLEMENTED for unsupported dtypes,
// INVALID_MODEL for missing operands.
mlcc_status_t mlcc_emit_elementwise_scalar(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                           const LLVMValueRef* operands,
                                           LLVMValueRef* out_value);

// True if mlcc_emit_elementwise_scalar accepts LLVM vector operands (all of
// one width; results lane-wise) for |node|: F32 inputs and outputs and an op
// whose formula uses no libm call. Implemented in targets/emit/elementwise_scalar.c.
bool mlcc_emit_elementwise_vector_ok(const mlcc_node_t* node);

// The fold of the variadic Max, Min, Sum and Mean (ONNX Max-1..13, Min-1..13,
// Sum-1..13, Mean-1..13) in the arithmetic of one dtype, as
// mlcc_emit_elementwise_scalar applies it: acc = max(acc, x) / min / acc + x
// (Max and Min propagate NaN like numpy), and Mean divides by the count at
// the end. For the elementwise kernel's run-time loop over many inputs.
// Implemented in targets/emit/elementwise_scalar.c.
typedef struct mlcc_emit_fold_t {
  mlcc_emit_ctx_t* ctx;  // borrowed
  mlcc_op_t op;
  mlcc_dtype_t dtype;
  unsigned lanes;        // 0: scalar operands; else their vector width
} mlcc_emit_fold_t;

// Sets up |f| for |node|'s op over operands of |dtype| (computational
// types, |lanes| wide). UNIMPLEMENTED ("OP (opset N) does not support dtype
// D") unless the op is variadic and |dtype| is a number (a float for Mean).
mlcc_status_t mlcc_emit_fold_init(mlcc_emit_fold_t* f, mlcc_emit_ctx_t* ctx,
                                  const mlcc_node_t* node, mlcc_dtype_t dtype, unsigned lanes);
// |acc| folded with |x| (both of the fold's type).
LLVMValueRef mlcc_emit_fold_step(const mlcc_emit_fold_t* f, LLVMValueRef acc, LLVMValueRef x);
// The result after |count| operands were folded into |acc|: |acc| / count
// for Mean with count > 1, else |acc|.
LLVMValueRef mlcc_emit_fold_finish(const mlcc_emit_fold_t* f, LLVMValueRef acc, int64_t count);

// UNIMPLEMENTED "OP (opset N) does not support dtype D" for |node|.
mlcc_status_t mlcc_emit_unsupported_dtype(const mlcc_node_t* node, mlcc_dtype_t dtype);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_EMIT_EMIT_H_

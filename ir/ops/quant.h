// SPDX-License-Identifier: Apache-2.0
// Shared between the quantization ops' shape inference (ir/ops/quant.c) and
// their emitters (targets/kernels/quant.c): the resolved layout of the
// scale / zero-point parameters and of the contraction, so both sides read
// the same facts from a node. All functions are pure functions of an
// inferred node (thread-safe); they validate and return INVALID_MODEL /
// UNIMPLEMENTED statuses naming the op, so the emitters can call them again.
//
// Specs followed: ONNX QuantizeLinear / DequantizeLinear opsets 10 and 13
// (13-17 share 13's semantics), DynamicQuantizeLinear 11, QLinearConv 10,
// ConvInteger 10, QLinearMatMul 10, MatMulInteger 10.
#ifndef MLCC_IR_OPS_QUANT_H_
#define MLCC_IR_OPS_QUANT_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "ir/ops/spatial.h"

#ifdef __cplusplus
extern "C" {
#endif

// Element layout of QuantizeLinear / DequantizeLinear: input 0 viewed as
// [outer, len, inner] around the quantization axis. Per-tensor (a scale of
// one element) has axis -1, outer = 1, len = 1 and inner = numel. Blocked
// quantization (opset 21 block_size > 0) has |block| = block_size and a
// scale [outer, n_blocks, inner] (x's shape with dim axis ceil(len /
// block)): element (o, c, i) of x uses scale (o, c / block, i). Per-axis and
// per-tensor have block 0 and n_blocks = len.
typedef struct mlcc_quant_linear_t {
  int32_t axis;        // normalized axis, or -1 for per-tensor
  int64_t outer, len, inner;
  int64_t block, n_blocks;
} mlcc_quant_linear_t;

// Resolves the layout of a QuantizeLinear / DequantizeLinear |node| whose
// inputs are inferred. Scale and zero point must have the same shape;
// one element (any rank) is per-tensor; opset >= 13 also allows a 1-D tensor
// of x.shape[axis] elements (per-axis); opset >= 21 with block_size > 0 a
// tensor of x's rank whose dim axis is ceil(x.shape[axis] / block_size) and
// other dims are x's (blocked). INVALID_MODEL otherwise.
mlcc_status_t mlcc_quant_linear_resolve(const mlcc_node_t* node, mlcc_quant_linear_t* out);

// The operands of a QLinearConv (x, x_scale, x_zero_point, w, w_scale,
// w_zero_point, y_scale, y_zero_point, B) or ConvInteger (x, w,
// x_zero_point, w_zero_point) |node| by role, borrowed; NULL where absent
// (ConvInteger has no scales, output quantization or bias). QLinearMatMul
// and MatMulInteger have the same positions (x = A, w = B; bias = quant-fuse's
// 9th input, MLCC_QMATMUL_BIAS_ATTR).
typedef struct mlcc_quant_conv_operands_t {
  const mlcc_value_t *x, *w, *x_zero, *w_zero, *x_scale, *w_scale, *y_scale, *y_zero, *bias;
  const mlcc_value_t* y;
} mlcc_quant_conv_operands_t;
void mlcc_quant_conv_operands(const mlcc_node_t* node, mlcc_quant_conv_operands_t* out);

// Window geometry of a QLinearConv or ConvInteger |node|, computed by Conv's
// rules (mlcc_spatial_resolve on a proxy Conv node with x and w's shapes);
// errors are annotated with the real op name.
mlcc_status_t mlcc_quant_conv_resolve(const mlcc_node_t* node, mlcc_spatial_t* out);

// Contraction layout of QLinearMatMul / MatMulInteger (numpy.matmul: a 1-D
// A is [1,K], a 1-D B is [K,1]; batch dims broadcast).
typedef struct mlcc_quant_matmul_t {
  int64_t m, k, n;
  mlcc_shape_t batch;            // broadcast batch dims of the output
  mlcc_shape_t a_batch, b_batch; // batch dims of A and B after 1-D promotion
  mlcc_shape_t out;              // output shape (promoted 1-D dims removed)
  // Parameter views in output coordinates [batch..., M, N] (right-aligned; a
  // dim of 1 repeats): A's scale/zero point vary at most along batch and M,
  // B's along batch and N. Rank 0 means per-tensor.
  mlcc_shape_t a_param, b_param;
} mlcc_quant_matmul_t;

// An mlcc-internal QLinearMatMul (written by passes/quant_fuse.c) has a 9th
// input, an int32 bias of N elements added to the int32 accumulator before
// requantization (like QLinearConv's B), and this INT attribute set to 1.
// An ONNX QLinearMatMul has 8 inputs: shape inference refuses a 9th input
// without the attribute.
#define MLCC_QMATMUL_BIAS_ATTR "mlcc.qbias"

// Resolves |node| (QLinearMatMul or MatMulInteger). A's parameters may be
// one element, an [M] vector (A of rank 2) or A's shape with the last dim 1;
// B's one element, an [N] vector (B of rank 2) or B's shape with dim -2 of 1.
// A scale and its zero point must have the same shape. INVALID_MODEL
// otherwise, naming the parameter and both shapes.
mlcc_status_t mlcc_quant_matmul_resolve(const mlcc_node_t* node, mlcc_quant_matmul_t* out);

// Ops whose output 0 only holds elements of their data inputs, moved or
// selected, never computed: Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
// Identity, DepthToSpace, SpaceToDepth, MaxPool without its Indices output
// (max commutes with DequantizeLinear's non-decreasing (q - z) * s), and
// Concat. So a per-tensor quantization of the data inputs (all equal) holds
// for the output (ONNX QuantizeLinear/DequantizeLinear, opset 10-26). Returns
// the number of leading data inputs, -1 for all of them (Concat), 0 when
// |node| is not such an op. Used by quant-fuse's int8 data movement and the
// header's quantization comments.
int32_t mlcc_quant_moved_data_inputs(const mlcc_node_t* node);

// The window of QLinearGlobalAveragePool (the whole spatial extent, in the
// layout its channels_last attribute names) or QLinearAveragePool (AveragePool-11's
// rules: kernel_shape, strides, pads / auto_pad, ceil_mode, count_include_pad;
// NCHW only) (com.microsoft opset 1) into |*out|; |out->out_channels| is C.
// INVALID_MODEL for attributes the contrib spec refuses, UNIMPLEMENTED for
// QLinearAveragePool with channels_last=1. Pure (ir/ops/qelementwise.c).
mlcc_status_t mlcc_qlinear_pool_resolve(const mlcc_node_t* node, mlcc_spatial_t* out);


// WQMatMul (mlcc-internal, domain "mlcc", written by passes/quant_fuse.c):
// a MatMul whose B is a constant weight-only quantized matrix, kept packed
// (int4/uint4 two codes per byte, int8/uint8 one) and dequantized by the
// kernel (targets/kernels/wq_matmul.c) on the fly, per element by the ONNX
// DequantizeLinear formula, w = float32((q - z) * s):
//   Y[..., N] = A[..., K] (float32, rank >= 1) @ W[K, N]
// Inputs: A; Wp, the uint8 codes in the layout below; S, float32 scales
// [n_blocks, n_pad]; Z (optional), uint8 offsets [n_blocks, n_pad]. Every
// weight is stored as a biased code u = q - qmin (0..15 for 4 bits, 0..255
// for 8: int4 q + 8, int8 q + 128, unsigned q) and its zero point as
// o = z - qmin the same way, so q - z = u - o (an exact small integer).
// Without Z every o is the INT attribute MLCC_WQ_OFFSET_ATTR (the model's
// single zero point, or -qmin when it has none). Row k of W belongs to
// block k / block (block = K for per-column and per-tensor scales), and
// column n's scale and offset of block b are S[b][n], Z[b][n] (columns
// n >= N padded with scale 0, offset 0).
// Wp layout: panels of MLCC_WQ_PANEL columns (the last one padded with
// code 0); panel p holds |panel_rows| byte rows of MLCC_WQ_PANEL bytes
// (byte c of a row is column p * MLCC_WQ_PANEL + c), at p * panel_rows *
// MLCC_WQ_PANEL. 8 bits: byte row k is W's row k. 4 bits: block b (rows
// k0 = b * block .. k0 + len - 1) starts at byte row b * ceil(block / 2)
// and holds ceil(len / 2) byte rows; byte row j of the block has row
// k0 + 2j in its low nibble and row k0 + 2j + 1 in its high nibble (0 when
// len is odd and j is the last).
// Attributes (INT): MLCC_WQ_BITS_ATTR (4 or 8), MLCC_WQ_N_ATTR (N),
// MLCC_WQ_BLOCK_ATTR (block, 1..K), MLCC_WQ_OFFSET_ATTR, and
// MLCC_WQ_GEMM_ATTR = 1 when the node replaces a Gemm (A must be 2-D).
#define MLCC_WQ_PANEL 16
#define MLCC_WQ_BITS_ATTR "mlcc.wq_bits"
#define MLCC_WQ_N_ATTR "mlcc.wq_n"
#define MLCC_WQ_BLOCK_ATTR "mlcc.wq_block"
#define MLCC_WQ_OFFSET_ATTR "mlcc.wq_offset"
#define MLCC_WQ_GEMM_ATTR "mlcc.wq_gemm"

// Sizes of the WQMatMul layout for K rows, N columns, |bits| 4 or 8 and
// |block| (1..K). Pure arithmetic; callers keep K, N below 2^31.
typedef struct mlcc_wq_layout_t {
  int64_t k, n, bits, block;
  int64_t n_blocks;    // ceil(K / block)
  int64_t n_pad;       // N rounded up to MLCC_WQ_PANEL
  int64_t panels;      // n_pad / MLCC_WQ_PANEL
  int64_t block_rows;  // byte rows of a full block (4 bits: ceil(block / 2); 8: block)
  int64_t panel_rows;  // byte rows of a panel
  int64_t bytes;       // numel of Wp: panels * panel_rows * MLCC_WQ_PANEL
} mlcc_wq_layout_t;
void mlcc_wq_layout(int64_t k, int64_t n, int64_t bits, int64_t block, mlcc_wq_layout_t* out);

// The layout of WQMatMul |node| from its attributes and A's last dim;
// INVALID_MODEL when the attributes are missing or out of range.
mlcc_status_t mlcc_wq_resolve(const mlcc_node_t* node, mlcc_wq_layout_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_QUANT_H_

// SPDX-License-Identifier: Apache-2.0
// Integer micro-kernels of the quantized contractions (issue 16): the fast
// path of QLinearConv and ConvInteger (targets/kernels/quant.c calls it
// first and keeps its scalar loop nest for the shapes this path declines;
// its descriptor mlcc_emit_quant_conv reports the parallel units and stack
// bytes below). Internal to targets/kernels; thread-safe (no state).
//
// Form (the same on every target; only the vector width and the multiply
// idiom change):
// * For each output row, the KH input rows it reads are packed on the stack
//   as columns ([padded W][KH][C/group] int16) with the input zero point
//   already subtracted, so padding contributes exactly 0 (the spec's padding
//   holds x_zero_point). An output pixel's window is then ONE contiguous run
//   of KW * KH * C/group values (KW runs of KH * C/group with a width
//   dilation), read in place: no im2col copy per pixel, one long K loop.
// * Each output is the dot product of that run with a weight row,
//   pre-packed at compile time to the same [KW][KH][C/group] order
//   (MLCC_QPACKED_ATTR in pack.h; 1x1 kernels need no packing) and kept
//   int8/uint8 in the library: the layout is part of the kernel key, the
//   data is not. Products of two int16 values below 2^9 in magnitude are exact
//   in int32, and so is a pair of them: x86 gets (v)pmaddwd (SSE2, AVX2 or
//   AVX-512BW by the CPU's features); aarch64 with +dotprod and int8 weights
//   packs int8 rows (x - 128 for uint8 x) and uses sdot, with the zero points
//   applied as int32 corrections; other targets the widening
//   multiply-accumulate (aarch64 smlal/smlal2, RVV vwmacc; scalar code on
//   targets without SIMD). No 16-bit saturating sum exists anywhere, so a
//   result never depends on the CPU.
// * The weight zero point is applied afterwards: acc -= w_zero_point[m] *
//   sum_k(x - x_zero_point), all int32 and wrapping, so the result is
//   bit-identical to the scalar reference loops of quant.c.
// * Requantization is the ONNX QLinearConv float formula (quant.c's
//   header): y = saturate(round_half_even(float(acc + bias) * M) + y_zp) with
//   M = (x_scale * w_scale[m]) / y_scale in float32. onnxruntime's
//   fixed-point requantization can round the other way in rare ties; mlcc
//   follows the spec.
// * x86 with AVX2: the blocked kernel instead (weights in the
//   MLCC_QBLOCK_ATTR layout of pack.h, written by quant-pack, 1x1 kernels
//   too): the same packed rows, then register tiles of 16 output channels x
//   6 output pixels as an outer product per pair of k: two weight vectors
//   (8 channels x (w[k], w[k+1]) int8 pairs, vpmovsxbw/vpmovzxbw) times each
//   pixel's (x[k], x[k+1]) int16 pair broadcast (vpbroadcastd), vpmaddwd
//   into 12 int32 accumulators (LLVM fuses multiply and add into AVX-512
//   VNNI's vpdpwssd where the CPU has it; both exact). With AVX-512 VNNI and
//   int8 weights (MLCC_QBLOCK_K_ATTR = 4) the rows hold uint8 bytes
//   x' = x (uint8 x) or x + 128 (int8 x), padding x_zero_point' alike, and
//   each step is vpdpbusd of a broadcast quad of x' with [8 channels][4]
//   int8 weights (exact, non-saturating, 32 MACs per ymm instruction); the
//   epilogue subtracts x_zero_point' * sum_k w (per block, by vpdpbusd with
//   1 1 1 1) and w_zero_point * sum_k (x - x_zero_point), all int32 and
//   wrapping: bit-identical to the other forms. The VNNI conv tile takes
//   6..12 pixels, chosen per layer for the fewest idle slots (AVX-512's 32
//   registers). No horizontal reduction; the epilogue works on channel
//   lanes, and a full conv tile is byte-transposed to one store of its
//   pixels per channel. The input rows are packed by vector byte
//   transposes (16 columns x 16 or 8 channels). QLinearMatMul /
//   MatMulInteger with a constant 2-D B run through the same tiles
//   (mlcc_emit_qgemm_matmul).
// * x86 with AMX-TILE and AMX-INT8 (the target's features, e.g.
//   -mcpu=native on Sapphire Rapids; never on other CPUs) and the VNNI
//   layout: full 16-channel blocks run tdpbusd on AMX tiles (the quad layout
//   is the B tile layout; the packed uint8 rows are A tiles of 16 pixels x 64
//   k), each C tile through the VNNI epilogue: bit-identical. Each such
//   kernel first asks Linux for the tile permission, arch_prctl(0x1023, 18)
//   by a raw syscall (process-wide, idempotent, no global state), and runs
//   the VNNI form it also contains when that fails; it loads its tile
//   configuration itself and ends with tilerelease, so the caller needs
//   nothing extra (docs/quantization.md, "Kernels per target").
// * Depthwise convolutions (C/group = 1, any channel multiplier, width
//   stride <= 4) have their own kernel: packed zero-point-subtracted int16
//   rows, 8 output pixels per vector, each tap an int32 multiply-add with
//   (w - w_zero_point) splatted; weights in ONNX order (no packing). On
//   x86-64 (when the padded plane fits the stack limit) the plane form
//   instead: the whole input plane copied raw into a plane padded with
//   x_zero_point, 16 output pixels per vector, sum x * (w - w_zp) minus
//   x_zp * sum (w - w_zp) in int32, full-vector (masked for the row tail)
//   stores.
// * A fused activation (attributes MLCC_QACT_ATTR and friends in pack.h, set
//   by the quant-fuse pass) clamps the quantized result to [Q(lo), Q(hi)] where
//   Q(v) = saturate(round_half_even(v / y_scale) + y_zp): quantization is
//   monotone, so this equals quantizing the activated float value (Relu is
//   lo = 0, hi = +inf; Clip gives both).
#ifndef MLCC_TARGETS_KERNELS_QGEMM_H_
#define MLCC_TARGETS_KERNELS_QGEMM_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/emit/emit.h"
#include "targets/kernels/pack.h"

#ifdef __cplusplus
extern "C" {
#endif

// Stack bytes the fast path of a QLinearConv / ConvInteger |node| allocates
// (packed tile plus per-pixel sums; for a depthwise node on x86-64 the
// padded input plane): for target |only|, or with |only| NULL the bound over
// every target (kernels.h's stack_bytes contract); 0 when the path declines
// the node. Pure.
int64_t mlcc_qgemm_conv_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* only);

// Parallel units of the fast kernel of QLinearConv / ConvInteger |node|
// (kernels.h's parallel_units contract): one per (image, group, output row),
// for a depthwise node on x86-64 one per (image, group), when the node takes
// a fast path and has at least about 2^20 MACs, else 0 (the reference loops
// are not split). Pure.
int64_t mlcc_qgemm_conv_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target);

// Emits the fast kernel of QLinearConv / ConvInteger |node| and sets
// |*out_done|, or leaves |*out_done| false (emitting nothing) when the path
// does not take the node: 3-D+ windows, dtypes other than int8/uint8 data
// with int8/uint8 weights (int32 output for ConvInteger), packed rows above
// 96 KiB of stack, a KxK (K > 1) dense kernel without MLCC_QPACKED_ATTR, or
// an x parameter that is not per-tensor. Spec: ONNX QLinearConv-10 /
// ConvInteger-10 (docs/quantization.md). Errors: those of mlcc_quant_conv_resolve
// and the output store (UNIMPLEMENTED / INTERNAL).
mlcc_status_t mlcc_emit_qgemm_conv(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                   bool* out_done);

// QLinearMatMul / MatMulInteger |node| through the blocked kernel: sets
// |*out_done| and emits it when B carries MLCC_QBLOCK_ATTR (quant-pack wrote
// it: x86 with AVX2, a constant 2-D B), else leaves |*out_done| false and
// emits nothing (the reference loops of quant.c run). Per unit (batch item,
// run of rows of A) the rows are packed as int16 with a_zero_point
// subtracted, then the conv blocked kernel runs with B's columns as the
// channels (16 per block) and A's rows as the pixels (6 per tile); the
// b_zero_point correction, bias-free, and the requantization are the conv
// kernel's (float formula, M = a_scale * b_scale[n] / y_scale). Spec: ONNX
// QLinearMatMul-10/21, MatMulInteger-10. Errors: INTERNAL when a node with
// the layout is not one the kernel takes; those of the output store.
mlcc_status_t mlcc_emit_qgemm_matmul(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                     bool* out_done);

// Stack bytes and parallel units (kernels.h's contracts) of the blocked
// QLinearMatMul / MatMulInteger |node|: 0 unless it carries MLCC_QBLOCK_ATTR.
// Pure.
int64_t mlcc_qgemm_matmul_stack_bytes(const mlcc_node_t* node);
int64_t mlcc_qgemm_matmul_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target);

// Integer bounds [*out_lo, *out_hi] (as float) a quantized output of |qdt|
// is clamped to, with a fused activation of |node| folded in: emits Q(lo) /
// Q(hi) from the run-time y_scale |ys| and zero point |yzf| (float32
// values). Used by both the fast path and quant.c's reference loops.
void mlcc_qgemm_act_bounds(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node, mlcc_dtype_t qdt,
                           LLVMValueRef ys, LLVMValueRef yzf, LLVMValueRef* out_lo,
                           LLVMValueRef* out_hi);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_KERNELS_QGEMM_H_

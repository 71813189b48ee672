// SPDX-License-Identifier: Apache-2.0
// Compile-time weight layouts (DESIGN section 1: pre-packing is done on the
// data at compile time; the layout, recorded as a node attribute, is part of
// the kernel's identity; kernels still take the weights as arguments).
//
// QLinearConv / ConvInteger (layout "qpacked", targets/kernels/qgemm.c):
// attribute MLCC_QPACKED_ATTR, described at its definition below.
//
// Conv (layout "packed_mr"): attribute MLCC_CONV_PACKED_ATTR = mr (INT > 0)
// on a Conv node means its W constant holds, for every group and every block
// of mr output channels of that group (the last block of a group may be
// shorter: bs = min(mr, mg - block start)), the block's weights as
// [cg*K][bs] (K = product of the kernel dims) at the block's usual offset
// start_oc*cg*K. Same shape, dtype and element count as the ONNX layout.
// Written by the pack-weights pass, read by the Conv emitter (every path).
//
// Conv (layout "winograd", targets/kernels/conv_winograd.c): attribute
// MLCC_CONV_WINOGRAD_ATTR = INTS {m, mr} (m = 2 or 4: output tiles of
// F(m x m, 3 x 3); mr > 0: channel block) on a Conv with a 3x3 kernel,
// strides 1, dilations 1 and group 1 means its W constant holds, for every
// (oc, ic), U = G g G^T (alpha x alpha, alpha = m + 2; g = W[oc, ic] and G
// the transform of Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2016) in blocks of mr output channels (the last block of M may
// be shorter: bs = min(mr, M - oc0)), each block [alpha^2][C][bs] at the
// block's usual offset oc0*C*alpha^2: element (xi, oc, ic), with transform
// element xi = i*alpha + j, at oc0*C*alpha^2 + (xi*C + ic)*bs + (oc - oc0).
// W's shape becomes [M, C, alpha, alpha] (the element count, not a kernel
// shape).
#ifndef MLCC_TARGETS_KERNELS_PACK_H_
#define MLCC_TARGETS_KERNELS_PACK_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_CONV_PACKED_ATTR "mlcc.packed_mr"
#define MLCC_CONV_WINOGRAD_ATTR "mlcc.winograd"

// Block size mr the Conv emitter's vector micro-kernel would use for |node|
// on |target| (channel-vector kernel: mr = NV*L channels per block, read as
// NV vectors per (ic, tap); pixel-vector kernel: mr broadcast rows), or 0 when packing does not apply (not a float32 Conv, the
// scalar path, one channel per block, or already packed). Pure; no errors.
int64_t mlcc_conv_pack_mr(const mlcc_node_t* node, const mlcc_target_t* target);

// Writes W (float32, ONNX layout [m, per_oc] with per_oc = cg*K, |group|
// dividing |m|) in the packed layout for |mr| > 0 into |out| (m*per_oc
// floats, must not alias |w|). Both are float-aligned host arrays.
void mlcc_conv_pack_weights(const float* w, int64_t m, int64_t group, int64_t per_oc, int64_t mr,
                            float* out);

// Whether |node| (a Conv with a constant float32 W in its ONNX layout) runs
// faster through the Winograd kernel on |target| than through the direct
// kernels (measured per layer shape, targets/kernels/conv_winograd.c), and if so the layout
// to pack for: *out_m (2 or 4) and *out_mr. False for anything else
// (including a W that is already packed). Pure; no errors.
bool mlcc_conv_winograd_choose(const mlcc_node_t* node, const mlcc_target_t* target,
                               int64_t* out_m, int64_t* out_mr);

// Writes W (float32, ONNX layout [mo, c, 3, 3]) in the Winograd layout for
// tile size |m| (2 or 4) and block |mr| > 0 into |out| ((m+2)^2*mo*c floats,
// must not alias |w|). The transform runs in double and rounds once.
void mlcc_conv_winograd_pack_weights(const float* w, int64_t mo, int64_t c, int64_t m,
                                     int64_t mr, float* out);

// Gemm (ONNX Gemm 7-26, float32): true when |node| has transB = 1 and its
// product (Y [M, N], M >= 4) would run faster on |target| with B stored as
// [K, N] and transB = 0 (the vector micro-kernel instead of scalar tiles
// over strided B columns, targets/kernels/matmul.c). The pack-weights pass
// then writes B transposed into a new constant and sets transB = 0: an ONNX
// layout, so no layout attribute. Pure; false for anything it cannot read.
bool mlcc_gemm_transpose_b_wins(const mlcc_node_t* node, const mlcc_target_t* target);

//===----------------------------------------------------------------------===//
// QLinearConv / ConvInteger (integer kernels, targets/kernels/qgemm.h)
//===----------------------------------------------------------------------===//

// What the quant-fuse / quant-pack passes (passes/quant_fuse.c) need from the
// integer kernels: the node attributes they write and the weight layout.

// Attribute names of a fused activation on QLinearConv / QLinearMatMul
// (written by passes/quant_fuse.c, read by targets/kernels/qgemm.c and quant.c).
// MLCC_QACT_ATTR: INT 0 none, 1 Relu, 2 Clip; Clip's bounds are FLOAT
// attributes MLCC_QACT_LO_ATTR / MLCC_QACT_HI_ATTR (float values of the
// model's Clip, part of the kernel key like every attribute).
#define MLCC_QACT_ATTR "mlcc.qact"
#define MLCC_QACT_LO_ATTR "mlcc.qact_lo"
#define MLCC_QACT_HI_ATTR "mlcc.qact_hi"

// Layout attribute of pre-packed QLinearConv / ConvInteger weights (INT 1):
// the weight constant's bytes are in [M][KW][KH][C/group] order (channel
// innermost, the order the kernel reads) under ONNX's [M, C/group, KH, KW]
// shape. Written by passes/quant_fuse.c only on nodes the fast path takes
// (mlcc_qgemm_conv_takes), so the reference loops never see packed weights.
#define MLCC_QPACKED_ATTR "mlcc.qpacked"

// Layout attribute of blocked QLinearConv / ConvInteger weights (INT nb, the
// channel block; 16 today), written by passes/quant_fuse.c's quant-pack on
// x86 targets with AVX2 and aarch64 targets with +dotprod or +i8mm (int8
// weights) for every node mlcc_qgemm_conv_block takes (1x1 kernels too) and read by the blocked kernel (qgemm.c, emit_blocked). With
// K = C/group * KH * KW in the window order [KW][KH][C/group], split into S
// equal segments of L = K/S values (S = 1 when the width dilation is 1, else
// S = KW), the weight constant's bytes hold, for each group g and each block
// of nb output channels of the group starting at mb (bs = min(nb, M/group -
// mb) channels), at the block's usual offset (g * M/group + mb) * K: for each
// segment s, at + s * L * bs, first [L/2][bs][2] int8/uint8 pairs (element
// (p, c, t) is w[mb + c][s * L + 2p + t]), then, when L is odd, [bs] bytes of
// k = s * L + L - 1. Shape, dtype and element count stay ONNX's.
// With MLCC_QBLOCK_K_ATTR = 4 (x86 with AVX-512 VNNI and int8 weights: the
// vpdpbusd form) the groups are quads instead of pairs: per segment
// [L/4][bs][4] (element (p, c, t) is w[mb + c][s * L + 4p + t]), then
// [L % 4][bs] (the remaining k, each bs bytes). aarch64 with +dotprod and
// int8 weights uses the same quads (sdot). With MLCC_QBLOCK_K_ATTR = 8
// (aarch64 with +i8mm and int8 weights: the usmmla form) the groups are
// octets: per segment [L/8][bs][8], then [L % 8][bs].
#define MLCC_QBLOCK_ATTR "mlcc.qblock"
#define MLCC_QBLOCK_K_ATTR "mlcc.qblock_k"

// Channel block nb (> 0) of the blocked layout for QLinearConv / ConvInteger
// |node| on |target|, the window's segment count S (|out_segments|, may be
// NULL) and the k group (|out_kg|, may be NULL: 4 for the VNNI and sdot
// forms, 8 for usmmla, else 2), or 0 when the blocked kernel does not take
// the node (neither x86 with AVX2 nor aarch64 with +dotprod or +i8mm and int8
// weights, or a node the dense fast path declines: mlcc_qgemm_conv_takes).
// Pure.
int64_t mlcc_qgemm_conv_block(const mlcc_node_t* node, const mlcc_target_t* target,
                              int64_t* out_segments, int64_t* out_kg);

// Writes ONNX-order weights |src| ([m][cg][kh][kw] int8/uint8, |group|
// dividing |m|) in the blocked layout (MLCC_QBLOCK_ATTR) for block |nb|,
// |segments| window segments (dividing cg * kh * kw) and k group |kg| (2,
// 4 or 8) into |dst| (the same byte count, not overlapping).
void mlcc_qgemm_pack_conv_blocked(const uint8_t* src, int64_t m, int64_t group, int64_t cg,
                                  int64_t kh, int64_t kw, int64_t segments, int64_t nb,
                                  int64_t kg, uint8_t* dst);

// Channel block nb (> 0) of the blocked layout for the B constant of
// QLinearMatMul / MatMulInteger |node| on |target| (B [K, N] is packed like
// conv weights of N output channels with K = C/group, one segment: the
// blocks are of N), or 0 when the blocked matmul does not take the node
// (neither x86 with AVX2 nor aarch64 with +dotprod or +i8mm, B not 2-D, A's
// parameters not per-tensor, B's neither per-tensor nor per-column, dtypes;
// a uint8 B on aarch64). |out_kg| (may be NULL): the k group, 4 (VNNI or
// sdot quads, int8 B), 8 (usmmla octets) or 2, as for mlcc_qgemm_conv_block.
// Pure.
int64_t mlcc_qgemm_matmul_block(const mlcc_node_t* node, const mlcc_target_t* target,
                                int64_t* out_kg);

// True when the fast path can take QLinearConv / ConvInteger |node| (shapes,
// dtypes, per-tensor x parameters, stack limit), whatever its weight layout;
// it then needs MLCC_QPACKED_ATTR unless the kernel is 1x1. Pure.
bool mlcc_qgemm_conv_takes(const mlcc_node_t* node);

// Reorders [m][cg][kh][kw] int8/uint8 weights |src| (ONNX order) into the
// packed order [m][kw][kh][cg] at |dst| (m * cg * kh * kw bytes, not
// overlapping).
void mlcc_qgemm_pack_conv_weights(const uint8_t* src, int64_t m, int64_t cg, int64_t kh,
                                  int64_t kw, uint8_t* dst);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_KERNELS_PACK_H_

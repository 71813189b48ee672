// SPDX-License-Identifier: Apache-2.0
// Winograd convolution F(m x m, 3 x 3), m = 2 or 4 (targets/kernels/conv_winograd.c), for
// ONNX Conv (opsets 1-17) with a 3x3 kernel, strides 1, dilations 1, group 1,
// any pads, float32, 2 spatial dims, and a constant W that the pack-weights
// pass transformed at compile time (layout MLCC_CONV_WINOGRAD_ATTR,
// targets/kernels/pack.h). The Conv emitter (targets/kernels/conv.c) dispatches here
// whenever a node carries that layout.
//
// Stack use: the kernel keeps its transformed input tiles and one channel
// block's transformed outputs on the stack, at most kWinoStackBytes (768 KiB,
// targets/kernels/conv_winograd.c) per call; mlcc_conv_winograd_stack_bytes reports the
// exact bytes for NAME_STACK_SIZE (targets/codegen/stack.h).
#ifndef MLCC_TARGETS_KERNELS_CONV_WINOGRAD_H_
#define MLCC_TARGETS_KERNELS_CONV_WINOGRAD_H_

#include "ir/graph.h"
#include "targets/emit/emit.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// True if |node| is a Conv whose W is in the Winograd layout (its
// MLCC_CONV_WINOGRAD_ATTR attribute is present). Pure.
bool mlcc_conv_is_winograd(const mlcc_node_t* node);

// Emits Y = Conv(X, W') + B for a node in the Winograd layout through
// mlcc_emit_store_output_vec (fused epilogues apply). With ctx->range_begin/
// end set, computes only parallel units [begin, end) (see below).
// INVALID_MODEL for a layout that does not match the node's shapes or
// attributes, UNIMPLEMENTED for dtypes other than float32.
mlcc_status_t mlcc_emit_conv_winograd(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node);

// Parallel units of the Winograd kernel of |node| on |target|: (image, block
// of tile rows, chunk of output-channel blocks) triples, or 0 when the
// kernel is not split (one unit, or |node| is not in the Winograd layout).
// A pure function of the node's shapes, attributes and the target.
int64_t mlcc_emit_conv_winograd_parallel_units(const mlcc_node_t* node,
                                               const mlcc_target_t* target);

// Bytes of the stack buffers (input panel and GEMM output) of the Winograd
// kernel for |node| on |target| when the pack-weights pass picks it there
// (mlcc_conv_winograd_choose on the node's geometry; W must be a float32
// constant, in the ONNX or any packed layout), else 0. Target-specific;
// stack.c takes the maximum over targets. Pure.
int64_t mlcc_conv_winograd_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* target);

// The Winograd kernel's part of the Conv schedule space (conv.c, version 2;
// docs/tuning.md) for a node in the Winograd layout on |target|: parameter
// 1 ("rows", tile rows per block: 1 up to the tile rows, while the block's
// input panel stays within the stack budget) and parameter 2 ("vectors",
// GEMM vectors of tiles per chunk: 1..4 with rows*vectors + vectors + 1 <=
// the vector registers for the layout's channel block, the heuristic's own
// value included). Writes at most |cap| values (ascending) to |out| and
// returns how many there are; 0 for other parameters or nodes. Neither
// changes the weights' layout; both change the parallel units and the
// stack (mlcc_emit_conv_winograd_parallel_units and
// mlcc_conv_winograd_stack_bytes follow node->sched). Pure.
uint32_t mlcc_conv_winograd_sched_values(const mlcc_node_t* node, const mlcc_target_t* target,
                                         uint32_t param, int32_t* out, uint32_t cap);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_KERNELS_CONV_WINOGRAD_H_

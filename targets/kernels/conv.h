// SPDX-License-Identifier: Apache-2.0
// The direct Conv and ConvTranspose kernels (conv.c): what they export
// beyond their emitters (kernels.h) and the packing layout (pack.h).
// Pure functions; thread-safe.
#ifndef MLCC_TARGETS_KERNELS_CONV_H_
#define MLCC_TARGETS_KERNELS_CONV_H_

#include <stdint.h>

#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// Per-target stack buffers of one Conv's direct kernels: the channel-vector
// kernel's transpose slot or the pixel-vector kernel's tile panel that the
// Conv emitter allocates for |node| on |target|, in bytes; 0 for the
// depthwise and scalar kernels. |node| must have W in the ONNX layout (no
// packed layout attribute; the Conv emitter's stack_bytes passes such a
// view). Pure.
int64_t mlcc_conv_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* target);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_KERNELS_CONV_H_

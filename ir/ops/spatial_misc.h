// SPDX-License-Identifier: Apache-2.0
// Shared between the sampling/misc spatial ops' shape inference
// (ir/ops/spatial_misc.c) and their emitters
// (targets/kernels/spatial_misc.c). Thread-safe (pure functions).
#ifndef MLCC_IR_OPS_SPATIAL_MISC_H_
#define MLCC_IR_OPS_SPATIAL_MISC_H_

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// The unpooled shape of MaxUnpool (ONNX MaxUnpool 9/11) |node| for X of shape
// |x| ([N,C,D1..Dk], k >= 1): [N, C, (Di-1)*strides[i] + kernel_shape[i] -
// pads[i] - pads[i+k]...], ignoring output_shape. Indices I address this
// shape; a larger output_shape holds it at its origin. INVALID_MODEL for
// missing/ill-sized kernel_shape, strides, pads, non-positive kernel or
// stride, negative pads or a negative result.
mlcc_status_t mlcc_max_unpool_shape(const mlcc_node_t* node, const mlcc_shape_t* x,
                                    mlcc_shape_t* out_shape);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_SPATIAL_MISC_H_

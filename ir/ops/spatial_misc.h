// SPDX-License-Identifier: Apache-2.0
// Shared between the sampling/misc spatial ops' shape inference
// (ir/ops/spatial_misc.c) and their emitters
// (targets/kernels/spatial_misc.c). Thread-safe (pure functions).
#ifndef MLCC_IR_OPS_SPATIAL_MISC_H_
#define MLCC_IR_OPS_SPATIAL_MISC_H_

#include <stdbool.h>
#include <stdint.h>

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

// Resolved geometry of DeformConv 19/22 (2-D): X [N,C,H,W], W [oC,C/group,kH,kW],
// offset [N, offset_group*2*kH*kW, oH, oW] (per offset group and kernel tap
// the (h, w) displacement), optional B [oC] and mask
// [N, offset_group*kH*kW, oH, oW]. Filled by mlcc_deform_conv_resolve.
typedef struct mlcc_deform_conv_t {
  int64_t n, c, h, w;          // X
  int64_t oc, kh, kw;          // W
  int64_t oh, ow;              // output spatial dims
  int64_t stride[2], dilation[2];
  int64_t pad_begin[2], pad_end[2];
  int64_t group, offset_group;
  bool has_bias, has_mask;
} mlcc_deform_conv_t;

// Validates DeformConv |node| (ONNX DeformConv 19/22; inputs inferred) and
// fills |*out|. X, W, offset, B and mask must share one float dtype
// (float16/float/double). Returns INVALID_MODEL naming the attribute or
// input for what breaks the spec (attribute lengths, non-positive strides,
// dilations or groups, negative pads, channels not divisible by group or
// offset_group, a kernel larger than the padded input, offset/mask/B shapes
// that disagree with the output), UNIMPLEMENTED for inputs other than 4-D
// (the N-d forms the spec allows: mlcc implements 2-D only).
mlcc_status_t mlcc_deform_conv_resolve(const mlcc_node_t* node, mlcc_deform_conv_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_SPATIAL_MISC_H_

// SPDX-License-Identifier: Apache-2.0
// The resolved geometry of Resize 10-19 (output dims, per-dim scales and
// crop box), shared by shape inference (ir/ops/shape_ops.c) and the kernel
// (targets/kernels/shape.c), so the two never disagree on the output size
// or the coordinate scale. Thread-safe (pure function of a node).
#ifndef MLCC_IR_OPS_RESIZE_H_
#define MLCC_IR_OPS_RESIZE_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_resize_geom_t {
  int32_t rank;
  int64_t out[MLCC_MAX_RANK];         // output dims
  double scale[MLCC_MAX_RANK];        // the coordinate transform's scale (1: dim not resized)
  double roi_start[MLCC_MAX_RANK];    // crop box (tf_crop_and_resize), else 0
  double roi_end[MLCC_MAX_RANK];      // else 1
  bool crop;                          // coordinate_transformation_mode tf_crop_and_resize
} mlcc_resize_geom_t;

// Resolves Resize |node| (ONNX Resize 10-19; input X inferred, scales/sizes/
// roi constant) into |*out|. Per the spec: scales or sizes (exactly one)
// give one value per dim, or (opset 18+) one per entry of 'axes' (any order,
// negative allowed; other dims keep their size and scale 1, and roi lists
// starts then ends of the axes). With sizes, keep_aspect_ratio_policy
// (18+) 'not_larger'/'not_smaller' uses one scale, the min/max of
// sizes[i]/X[i] over the axes, for all of them, and output dims
// floor(scale*X[i] + 0.5); 'stretch' takes sizes as given with scale
// sizes[i]/X[i]. With scales, the output dim is floor(X[i] * scale[i])
// (times the roi extent for tf_crop_and_resize). Returns INVALID_MODEL for
// both or neither of scales/sizes, wrong value counts, repeated or
// out-of-range axes, non-positive or non-finite scales, negative sizes, a
// missing roi for tf_crop_and_resize, an unknown policy; UNIMPLEMENTED when
// a constant input is not constant or an output dim exceeds 2^40.
mlcc_status_t mlcc_resize_geometry(const mlcc_node_t* node, mlcc_resize_geom_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_RESIZE_H_

// SPDX-License-Identifier: Apache-2.0
// Resolved window geometry of Conv, ConvTranspose, MaxPool and AveragePool:
// kernel, strides, dilations, explicit begin/end pads (auto_pad applied) and
// output spatial dims. Shape inference and the kernel emitters both use it,
// so they never disagree on padding. Thread-safe (pure function of a node).
#ifndef MLCC_IR_OPS_SPATIAL_H_
#define MLCC_IR_OPS_SPATIAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_MAX_SPATIAL (MLCC_MAX_RANK - 2)

typedef struct mlcc_spatial_t {
  int32_t n_spatial;                          // input rank - 2
  int64_t kernel[MLCC_MAX_SPATIAL];           // kernel_shape (Conv: W's dims)
  int64_t strides[MLCC_MAX_SPATIAL];
  int64_t dilations[MLCC_MAX_SPATIAL];
  int64_t pad_begin[MLCC_MAX_SPATIAL];        // resolved, auto_pad applied
  int64_t pad_end[MLCC_MAX_SPATIAL];
  int64_t output_padding[MLCC_MAX_SPATIAL];   // ConvTranspose only, else 0
  int64_t in[MLCC_MAX_SPATIAL];               // input spatial dims
  int64_t out[MLCC_MAX_SPATIAL];              // output spatial dims
  int64_t group;                              // Conv/ConvTranspose, else 1
  int64_t out_channels;                       // Conv: M; ConvTranspose: W[1]*group; pools: C
  bool ceil_mode;                             // pools only
  bool count_include_pad;                     // AveragePool only
} mlcc_spatial_t;

// Validates the window attributes of |node| (Conv, ConvTranspose, MaxPool,
// AveragePool) against its inferred inputs and fills |*out|. Returns
// INVALID_MODEL naming the attribute and the values found when the spec is
// violated (wrong lengths, non-positive strides, channel/group mismatch, a
// window larger than the padded input), UNIMPLEMENTED for unsupported cases,
// INVALID_ARGUMENT for other ops.
mlcc_status_t mlcc_spatial_resolve(const mlcc_node_t* node, mlcc_spatial_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_SPATIAL_H_

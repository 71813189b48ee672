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

// mlcc_spatial_resolve on a stand-in of |node|: its attributes read as op
// |op| (MLCC_OP_CONV, MLCC_OP_CONV_TRANSPOSE or a pool) at opset |opset| (0:
// the node's own), with inputs X = |x| and, for Conv and ConvTranspose,
// W = |w|, both as float32 of their shapes (no bias, no outputs). For
// QLinearConv / ConvInteger (Conv's rules on x and w), QLinearAveragePool
// (AveragePool-11's) and a Conv whose W is in a packed layout (the caller
// passes W with its ONNX shape). |x| and |w| are read, not kept. Errors as
// mlcc_spatial_resolve's, naming |op|.
mlcc_status_t mlcc_spatial_resolve_as(const mlcc_node_t* node, mlcc_op_t op, int32_t opset,
                                      const mlcc_value_t* x, const mlcc_value_t* w,
                                      mlcc_spatial_t* out);

// |g|'s window in 3 spatial dims (D, H, W), for kernels that walk 1-D to 3-D
// windows alike: g's n_spatial (1 to 3) dims last, the leading ones of
// extent 1 (input and output 1, kernel 1, stride 1, dilation 1, pads 0).
// Writes 3 entries to each array; |pad_end| may be NULL.
void mlcc_spatial_to3(const mlcc_spatial_t* g, int64_t in[3], int64_t out[3], int64_t kernel[3],
                      int64_t strides[3], int64_t dilations[3], int64_t pad_begin[3],
                      int64_t pad_end[3]);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_SPATIAL_H_

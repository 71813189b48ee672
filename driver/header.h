// SPDX-License-Identifier: Apache-2.0
// The generated NAME.h (LINKED: entry-abi-v3, docs/generated-api.md) and the
// C-identifier rules the driver applies to model and tensor names.
// Thread-safe (no shared state).
//
// The header is a pure function of (graph after passes, NAME, model file
// name[, model sha256]): no timestamps, no absolute paths, no target, so it is
// byte-identical for every run. Across targets only NAME_WEIGHTS_SIZE can
// differ (the pack-weights pass lays weights out for the target's vectors).
#ifndef MLCC_DRIVER_HEADER_H_
#define MLCC_DRIVER_HEADER_H_

#include <stdbool.h>
#include <stddef.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Sanitizes |text| into a C identifier in |buf|: every byte that is not an
// ASCII letter, digit or '_' becomes '_', a leading digit gets a '_' prefix,
// "" becomes "_". Truncates to |buf_size|-1 bytes. Returns |buf|.
char* mlcc_header_sanitize_identifier(const char* text, char* buf, size_t buf_size);

// True if |word| is a C or C++ keyword (a header parameter must not be one).
bool mlcc_header_is_keyword(const char* word);

// The default --name for |model_path|: the file name without its last
// extension, sanitized ("models/2-tiny.net.onnx" -> "_2_tiny_net"). Returns |buf|.
char* mlcc_header_default_name(const char* model_path, char* buf, size_t buf_size);

// INVALID_ARGUMENT unless |name| is a C identifier (and not a keyword) short
// enough for the generated symbols (at most 200 bytes).
mlcc_status_t mlcc_header_check_name(const char* name);

// How an integer graph input or output is quantized (ONNX
// QuantizeLinear/DequantizeLinear: real = (q - zero_point) * scale).
typedef struct mlcc_header_quant_t {
  double scale;         // the scale (the first one when per axis)
  int64_t zero_point;   // the zero point (the first one when per axis); 0 when omitted
  int64_t n_scales;     // 1 per tensor, else the length of the axis
  int64_t axis;         // -1 per tensor, else the quantized axis (0..rank-1)
} mlcc_header_quant_t;

// Finds the quantization of |v|, a graph input (|is_input|) or output of
// |graph| after passes, with an integer dtype: for an input, the first live
// DequantizeLinear or QLinear* op (QLinearConv, QLinearMatMul, and the
// com.microsoft QLinearAdd, QLinearMul, QLinear pools, QLinearConcat; in node
// order) that reads it; for an output, its producer when that is a
// QuantizeLinear or one of those QLinear* ops. Ops that only move elements (Reshape, Flatten, Transpose,
// Squeeze, Unsqueeze, Identity, DepthToSpace, SpaceToDepth, MaxPool,
// GlobalMaxPool; Concat of inputs with equal parameters), as quant-fuse's int8
// data movement leaves them, are followed when the quantization is per tensor.
// The scale and zero point must be constants. Returns false
// (|*out_quant| zeroed) for a float value or when no such node exists.
bool mlcc_header_io_quant(const mlcc_graph_t* graph, const mlcc_value_t* v, bool is_input,
                          mlcc_header_quant_t* out_quant);

// Renders the header for |graph| (inputs/outputs with inferred dtypes and
// shapes, workspace_size/align from plan-memory, NAME_STACK_SIZE from
// mlcc_stack_size) into a malloc'ed string
// |*out_text| the caller frees. |model_file_name| is the model's file name
// (no directory); |model_sha256_hex| 64 hex digits, or NULL to leave the
// hash out (the driver does: then a weights-only change to the model leaves
// the header's bytes, and so every C file that includes it, untouched; the
// hash is in the --describe JSON and the bundle manifest). An integer input or
// output that a Q/DQ node (de)quantizes gets its scale and zero point in its
// comment line (mlcc_header_io_quant, docs/quantization.md). INTERNAL if an input or
// output has no inferred shape, UNIMPLEMENTED for a dtype without a C type.
mlcc_status_t mlcc_header_render(const mlcc_graph_t* graph, const char* name,
                                 const char* model_file_name, const char* model_sha256_hex,
                                 char** out_text);

// Adds to a header rendered by mlcc_header_render the declarations of a
// --profile build (docs/generated-api.md, "Profile builds"): the row type
// mlcc_profile_entry_t, NAME_profile and NAME_profile_reset, before the
// closing C++ guard. |*text| is replaced by a new malloc'ed string (the old
// one is freed). RESOURCE_EXHAUSTED on allocation failure, INTERNAL if
// |*text| does not end like a rendered header.
mlcc_status_t mlcc_header_add_profile(const char* name, char** text);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_HEADER_H_

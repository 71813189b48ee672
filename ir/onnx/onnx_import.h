// SPDX-License-Identifier: Apache-2.0
// ONNX model import (protobuf-c over our own proto2 schema, onnx.proto in
// this folder) into an mlcc_graph_t. Follows the ONNX IR spec (IR versions
// 3-9). Thread-safe: no shared state.
#ifndef MLCC_IR_ONNX_ONNX_IMPORT_H_
#define MLCC_IR_ONNX_ONNX_IMPORT_H_

#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// One --input-shape=NAME=1x3x224x224 pin.
typedef struct mlcc_input_shape_t {
  const char* name;
  mlcc_shape_t shape;
} mlcc_input_shape_t;

// One --input-value binding: graph input |name| becomes a compile-time
// constant, baked into the library like an initializer, and is no longer a
// parameter of NAME_run. Shape-determining inputs (Reshape's shape, TopK's K,
// Resize's scales, ...) must be known at compile time in mlcc's
// shape-specialized design; this is how a model that feeds one is compiled.
// The value is either
// * a decoded tensor (|dtype| != UNDEFINED; |shape|; |data| holds |size|
//   bytes of little-endian elements, borrowed), e.g. a TensorProto file, or
// * |n_numbers| numbers from the command line (|dtype| UNDEFINED): converted
//   to the input's declared element type (integers must be written as
//   integers and fit the type; bool takes 0/1; float16/bfloat16 need a file)
//   and shaped by the declared (or --input-shape) shape when its element
//   count matches, else [n_numbers] for a rank-1 or undeclared input, or a
//   scalar for a rank-0 input given one number.
// A tensor's dtype must equal the declared one and its shape must agree with
// the declared static dims. Errors are INVALID_ARGUMENT naming |origin|.
typedef struct mlcc_input_value_t {
  const char* name;
  const char* origin;       // the argument as written, for messages
  const char* file;         // NAME=@FILE: the TensorProto file (the driver decodes it)
  mlcc_dtype_t dtype;
  mlcc_shape_t shape;
  const void* data;
  size_t size;
  const int64_t* ints;      // [n_numbers]; valid where is_int[i]
  const double* reals;      // [n_numbers]
  const bool* is_int;       // [n_numbers]: written as an integer
  const bool* above_int64;  // [n_numbers]: an integer in (INT64_MAX, UINT64_MAX], whose
                            // uint64 bits are in ints[i] (only uint64 inputs take it)
  uint32_t n_numbers;
} mlcc_input_value_t;

typedef struct mlcc_onnx_import_options_t {
  const mlcc_input_shape_t* input_shapes;  // may be NULL
  uint32_t n_input_shapes;
  const mlcc_input_value_t* input_values;  // may be NULL
  uint32_t n_input_values;
  uint64_t max_file_bytes;                 // 0 = default limit (4 GiB)
  // Files read besides the model (external data), for the depfile. The
  // importer appends arena-owned absolute-or-relative paths as given.
  const char** out_deps;                   // optional array of capacity deps_cap
  uint32_t deps_cap;
  uint32_t* out_n_deps;
  // Optional: if non-NULL, receives the SHA-256 of the model file's bytes as
  // read for the import (64 lowercase hex digits + NUL; "" if the file could
  // not be read), so a caller that reports the model's digest (the generated
  // header) need not read and hash the file a second time.
  char* out_sha256_hex;                    // capacity 65
} mlcc_onnx_import_options_t;

// Reads |path| and builds a graph: values for inputs (initializers that are
// also inputs stay INPUTs: a fed value wins), initializers and Constant nodes
// as CONSTANTs, one node per ONNX node (ops resolved through ops.def at the
// model's opset for the node's domain), graph outputs flagged, nodes
// topologically sorted. Shapes of graph inputs come from the model or the
// pins; a symbolic or unknown input dim without a pin is INVALID_MODEL naming
// the input and dim. Every unsupported (domain, op, opset) in the model is
// reported in ONE UNIMPLEMENTED status. Malformed files: INVALID_MODEL naming
// the file and what is wrong; missing files NOT_FOUND; external data outside
// the model's folder INVALID_MODEL. Caller owns |*out_graph|.
mlcc_status_t mlcc_onnx_import_file(const char* path,
                                    const mlcc_onnx_import_options_t* options,
                                    mlcc_graph_t** out_graph);

// Decodes a serialized TensorProto (the .pb files of ONNX test data) into a
// malloc'ed buffer of raw little-endian element bytes. Caller frees |*out_data|.
// External data (data_location EXTERNAL) is read from the .pb's folder, never
// outside it; if |out_data_file| is non-NULL it receives that file's path
// (malloc'ed, for a depfile; caller frees) or NULL when the data is inline.
mlcc_status_t mlcc_onnx_read_tensor_file(const char* path, mlcc_dtype_t* out_dtype,
                                         mlcc_shape_t* out_shape, void** out_data,
                                         size_t* out_size, char** out_data_file);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_ONNX_ONNX_IMPORT_H_

// SPDX-License-Identifier: Apache-2.0
// Internals shared by the ONNX importer's files (onnx_import.c, onnx_tensor.c)
// and its unit test. Not part of the public API.
#ifndef MLCC_IR_ONNX_ONNX_IMPORT_IMPL_H_
#define MLCC_IR_ONNX_ONNX_IMPORT_IMPL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/base/large_alloc.h"
#include "ir/base/arena.h"
#include "ir/base/status.h"
#include "ir/graph.h"
#include "ir/onnx/onnx.pb-c.h"
#include "ir/onnx/onnx_import.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_ONNX_DEFAULT_MAX_FILE_BYTES (UINT64_C(4) << 30)  // 4 GiB
#define MLCC_ONNX_MAX_ELEMENTS (UINT64_C(1) << 32)           // per tensor

//===----------------------------------------------------------------------===//
// Import from memory
//===----------------------------------------------------------------------===//

// mlcc_onnx_import_file over |size| bytes already in memory (borrowed; may be
// freed on return). |path| names the model in messages and locates external
// data. For the unit test and the fuzzer.
mlcc_status_t mlcc_onnx_import_bytes(const char* path, const uint8_t* bytes, size_t size,
                                     const mlcc_onnx_import_options_t* options,
                                     mlcc_graph_t** out_graph);

//===----------------------------------------------------------------------===//
// protobuf-c allocator
//===----------------------------------------------------------------------===//

// State of an allocator that forwards to malloc/free. |fail_at| > 0 makes the
// fail_at-th allocation (1-based) and every later one fail (fault injection);
// 0 never fails. |failed| records that an allocation failed, so a NULL from
// unpack can be told apart (RESOURCE_EXHAUSTED vs INVALID_MODEL).
typedef struct mlcc_onnx_alloc_state_t {
  uint64_t n_allocs;
  uint64_t fail_at;
  bool failed;
} mlcc_onnx_alloc_state_t;

// An allocator bound to |state| (zeroed here: never fails).
ProtobufCAllocator mlcc_onnx_counting_allocator(mlcc_onnx_alloc_state_t* state);
// A stateless malloc/free allocator for free_unpacked of anything decoded
// with the counting allocator.
ProtobufCAllocator* mlcc_onnx_protobuf_allocator(void);

//===----------------------------------------------------------------------===//
// Files and tensors
//===----------------------------------------------------------------------===//

// Reads all of |path| into a malloc'ed buffer the caller frees. NOT_FOUND if
// missing, IO on read errors or a directory, RESOURCE_EXHAUSTED if larger
// than |limit| bytes (checked before allocating) or on OOM.
mlcc_status_t mlcc_onnx_read_file(const char* path, uint64_t limit, uint8_t** out_bytes,
                                  size_t* out_size);

// Like mlcc_onnx_read_file, but a file of at least MLCC_LARGE_ALLOC_MIN bytes
// is mapped read-only (MAP_PRIVATE, pre-faulted) instead of copied: a large
// model is then never copied into anonymous memory before it is decoded. Like
// every mmap-based reader (clang's MemoryBuffer included), a file truncated by
// another process while it is mapped is outside the contract. *out_mapped says
// how to release the bytes: mlcc_onnx_release_file.
mlcc_status_t mlcc_onnx_load_file(const char* path, uint64_t limit, uint8_t** out_bytes,
                                  size_t* out_size, bool* out_mapped);
void mlcc_onnx_release_file(uint8_t* bytes, size_t size, bool mapped);

// Where tensor bytes go and where external data is looked up.
typedef struct mlcc_onnx_tensor_ctx_t {
  char* dir_prefix;         // malloc'ed: the model path up to its last '/', or ""
  char* dir_real;           // malloc'ed realpath of the model folder, lazily set
  uint64_t max_file_bytes;  // limit for one tensor's bytes
  mlcc_arena_t* arena;      // owns copied/converted tensor bytes
  // Optional depfile list (see mlcc_onnx_import_options_t).
  const char** deps;
  uint32_t deps_cap;
  uint32_t* n_deps;
} mlcc_onnx_tensor_ctx_t;

mlcc_status_t mlcc_onnx_tensor_ctx_init(mlcc_onnx_tensor_ctx_t* ctx, const char* model_path,
                                        uint64_t max_file_bytes, mlcc_arena_t* arena);
void mlcc_onnx_tensor_ctx_deinit(mlcc_onnx_tensor_ctx_t* ctx);

// A decoded tensor. |data| holds |size| = numel*dtype_size little-endian
// bytes, aligned to the element size; it is borrowed from the TensorProto's
// raw_data (valid while the proto lives) or owned by ctx->arena.
typedef struct mlcc_onnx_tensor_t {
  mlcc_dtype_t dtype;
  mlcc_shape_t shape;
  const void* data;
  size_t size;
} mlcc_onnx_tensor_t;

// Decodes |t| (raw_data, typed fields or external data). |what| names the
// kind of tensor in messages ("initializer", "tensor"). INVALID_MODEL for
// negative/overflowing dims, byte-count mismatches and bad external data
// paths; UNIMPLEMENTED for unsupported dtypes or rank > MLCC_MAX_RANK;
// RESOURCE_EXHAUSTED over 2^32 elements or the byte limit (before
// allocating); NOT_FOUND for a missing external file.
mlcc_status_t mlcc_onnx_decode_tensor(mlcc_onnx_tensor_ctx_t* ctx,
                                      const MlccOnnx__TensorProto* t, const char* what,
                                      mlcc_onnx_tensor_t* out);

// Shape from |t|'s dims: INVALID_MODEL for negative dims, UNIMPLEMENTED for
// rank > MLCC_MAX_RANK.
mlcc_status_t mlcc_onnx_tensor_shape(const MlccOnnx__TensorProto* t, mlcc_shape_t* out_shape);

// Name of an ONNX TensorProto.DataType value, including the ones mlcc does not
// support ("string", "bfloat16", "complex64", "data type 42").
const char* mlcc_onnx_elem_type_name(int32_t elem_type);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_ONNX_ONNX_IMPORT_IMPL_H_

// SPDX-License-Identifier: Apache-2.0
// Element types of tensors (ONNX TensorProto.DataType numbering). Thread-safe.
#ifndef MLCC_IR_DTYPE_H_
#define MLCC_IR_DTYPE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  MLCC_DTF_FLOAT = 1u << 0,
  MLCC_DTF_INT = 1u << 1,
  MLCC_DTF_UNSIGNED = 1u << 2,
  MLCC_DTF_BOOL = 1u << 3,
  // ONNX stores two elements per byte (4 bits each, the first in the low
  // nibble); mlcc's memory holds one per byte (dtypes.def).
  MLCC_DTF_PACKED4 = 1u << 4,
  MLCC_DTF_FLOAT8 = 1u << 5,  // a float8 storage type (neither FLOAT nor INT)
  // ONNX stores four elements per byte (2 bits each, the first in bits 0-1);
  // mlcc's memory holds one per byte (dtypes.def).
  MLCC_DTF_PACKED2 = 1u << 6,
};

// Values equal ONNX TensorProto.DataType; 0 is UNDEFINED. Not dense, so the
// traits lookup goes through mlcc_dtype_size() etc., never array indexing.
typedef enum mlcc_dtype_e {
  MLCC_DTYPE_UNDEFINED = 0,
#define MLCC_DTYPE(id, onnx_id, name, size, ctype, flags) MLCC_DTYPE_##id = onnx_id,
#include "ir/dtypes.def"
#undef MLCC_DTYPE
  MLCC_DTYPE_COUNT = 27  // one past the largest ONNX id we could meet (int2=26, IR 11)
} mlcc_dtype_t;

// True if |dtype| is one of the rows of dtypes.def.
bool mlcc_dtype_is_valid(mlcc_dtype_t dtype);
// Element size in bytes; 0 for undefined/unsupported.
size_t mlcc_dtype_size(mlcc_dtype_t dtype);
// "float32"; "undefined" or "unsupported(<n>)" style names never return NULL.
const char* mlcc_dtype_name(mlcc_dtype_t dtype);
// C spelling for generated headers ("float", "int64_t", "bool").
const char* mlcc_dtype_c_type(mlcc_dtype_t dtype);
bool mlcc_dtype_is_float(mlcc_dtype_t dtype);
bool mlcc_dtype_is_int(mlcc_dtype_t dtype);       // signed or unsigned integers
bool mlcc_dtype_is_unsigned(mlcc_dtype_t dtype);
bool mlcc_dtype_is_bool(mlcc_dtype_t dtype);
// Bits per element in ONNX's serialized form (TensorProto raw_data,
// int32_data, external data): 4 for int4/uint4, 2 for int2/uint2, else
// 8 * mlcc_dtype_size(); 0 for undefined/unsupported.
uint32_t mlcc_dtype_bits(mlcc_dtype_t dtype);
// True for the types ONNX packs several to a byte (int4, uint4, int2, uint2).
bool mlcc_dtype_is_subbyte(mlcc_dtype_t dtype);
// Serialized bytes of |numel| elements: ceil(numel * bits / 8); 0 for an
// unsupported dtype. |numel| < 2^32 (the importer's limit), so no overflow.
uint64_t mlcc_dtype_packed_bytes(mlcc_dtype_t dtype, uint64_t numel);
// True for the four float8 types of opset 19 (float8e4m3fn, float8e4m3fnuz,
// float8e5m2, float8e5m2fnuz), float8e8m0 (24) and float4e2m1 (23, also a
// sub-byte type): storage types, see dtypes.def.
bool mlcc_dtype_is_float8(mlcc_dtype_t dtype);
// The first default-domain opset whose type constraints name |dtype| (19 for
// the float8 types, 24 for float8e8m0, 23 for float4e2m1; 1 for the types of every opset).
int mlcc_dtype_opset_min(mlcc_dtype_t dtype);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_DTYPE_H_

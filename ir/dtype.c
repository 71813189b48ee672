// SPDX-License-Identifier: Apache-2.0
// dtype traits generated from dtypes.def.
#include "ir/dtype.h"

#include <stdio.h>

typedef struct dtype_traits_t {
  const char* name;
  size_t size;
  const char* c_type;
  uint32_t flags;
  bool valid;
} dtype_traits_t;

// Indexed by ONNX id; ids without a row are zero (invalid).
static const dtype_traits_t dtype_traits[MLCC_DTYPE_COUNT] = {
#define MLCC_DTYPE(id, onnx_id, nm, sz, ctype, fl) [onnx_id] = {nm, sz, ctype, fl, true},
#include "ir/dtypes.def"
#undef MLCC_DTYPE
};

#define MLCC_DTYPE(id, onnx_id, nm, sz, ctype, fl) \
  _Static_assert(onnx_id > 0 && onnx_id < MLCC_DTYPE_COUNT, "dtype id out of range");
#include "ir/dtypes.def"
#undef MLCC_DTYPE

static const dtype_traits_t* traits(mlcc_dtype_t dtype) {
  if ((int)dtype <= 0 || (int)dtype >= MLCC_DTYPE_COUNT) return NULL;
  const dtype_traits_t* t = &dtype_traits[dtype];
  return t->valid ? t : NULL;
}

bool mlcc_dtype_is_valid(mlcc_dtype_t dtype) { return traits(dtype) != NULL; }

size_t mlcc_dtype_size(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t ? t->size : 0;
}

const char* mlcc_dtype_name(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  if (t) return t->name;
  if (dtype == MLCC_DTYPE_UNDEFINED) return "undefined";
  // ONNX ids we do not support: a fixed set of static names, never NULL.
  switch ((int)dtype) {
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    case 21: return "uint4";
    case 22: return "int4";
    case 25: return "uint2";
    case 26: return "int2";
    default: return "unsupported";
  }
}

const char* mlcc_dtype_c_type(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t ? t->c_type : "void";
}

bool mlcc_dtype_is_float(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t && (t->flags & MLCC_DTF_FLOAT);
}
bool mlcc_dtype_is_int(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t && (t->flags & MLCC_DTF_INT);
}
bool mlcc_dtype_is_unsigned(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t && (t->flags & MLCC_DTF_UNSIGNED);
}
bool mlcc_dtype_is_bool(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t && (t->flags & MLCC_DTF_BOOL);
}

uint32_t mlcc_dtype_bits(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  if (t == NULL) return 0;
  if (t->flags & MLCC_DTF_PACKED4) return 4;
  if (t->flags & MLCC_DTF_PACKED2) return 2;
  return (uint32_t)(t->size * 8);
}

bool mlcc_dtype_is_subbyte(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t && (t->flags & (MLCC_DTF_PACKED4 | MLCC_DTF_PACKED2));
}

uint64_t mlcc_dtype_packed_bytes(mlcc_dtype_t dtype, uint64_t numel) {
  return (numel * mlcc_dtype_bits(dtype) + 7) / 8;
}

bool mlcc_dtype_is_float8(mlcc_dtype_t dtype) {
  const dtype_traits_t* t = traits(dtype);
  return t && (t->flags & MLCC_DTF_FLOAT8);
}

int mlcc_dtype_opset_min(mlcc_dtype_t dtype) {
  if (dtype == MLCC_DTYPE_F8E8M0) return 24;
  if (dtype == MLCC_DTYPE_F4E2M1) return 23;
  return mlcc_dtype_is_float8(dtype) ? 19 : 1;
}

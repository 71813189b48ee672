// SPDX-License-Identifier: Apache-2.0
// ONNX TensorProto decoding for the importer: whole-file reads with a size
// limit, raw_data and typed fields to dense little-endian bytes, external
// data confined to the model's folder, and mlcc_onnx_read_tensor_file.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/base/checked_math.h"
#include "ir/base/large_alloc.h"
#include "ir/onnx/onnx_import.h"
#include "ir/onnx/onnx_import_impl.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mlcc's ONNX importer assumes a little-endian host (ONNX raw_data is little-endian)"
#endif

//===----------------------------------------------------------------------===//
// protobuf-c allocator
//===----------------------------------------------------------------------===//

static void* counting_alloc(void* data, size_t size) {
  mlcc_onnx_alloc_state_t* st = (mlcc_onnx_alloc_state_t*)data;
  st->n_allocs++;
  if (st->failed || (st->fail_at != 0 && st->n_allocs >= st->fail_at)) {
    st->failed = true;
    return NULL;
  }
  // Weight payloads (bytes fields) are the large ones: huge pages.
  void* p = mlcc_large_alloc(size, false);
  if (p == NULL) st->failed = true;
  return p;
}

static void plain_free(void* data, void* p) {
  (void)data;
  free(p);
}

static void* plain_alloc(void* data, size_t size) {
  (void)data;
  return malloc(size ? size : 1);
}

ProtobufCAllocator mlcc_onnx_counting_allocator(mlcc_onnx_alloc_state_t* state) {
  memset(state, 0, sizeof(*state));
  ProtobufCAllocator a = {counting_alloc, plain_free, state};
  return a;
}

ProtobufCAllocator* mlcc_onnx_protobuf_allocator(void) {
  static ProtobufCAllocator a = {plain_alloc, plain_free, NULL};
  return &a;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

static mlcc_status_t open_error(const char* what, const char* path, int err) {
  if (err == ENOENT || err == ENOTDIR) {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "%s%s not found", what, path);
  }
  return mlcc_make_status(MLCC_STATUS_IO, "cannot open %s%s: %s", what, path, strerror(err));
}

// Reads exactly |size| bytes at |offset| of |fd| into |buf|.
static bool pread_all(int fd, uint8_t* buf, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    size_t chunk = size - done;
    if (chunk > (size_t)1 << 30) chunk = (size_t)1 << 30;
    ssize_t n = pread(fd, buf + done, chunk, (off_t)(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += (size_t)n;
  }
  return true;
}

static mlcc_status_t read_or_map(const char* path, uint64_t limit, bool may_map,
                                 uint8_t** out_bytes, size_t* out_size, bool* out_mapped);

mlcc_status_t mlcc_onnx_read_file(const char* path, uint64_t limit, uint8_t** out_bytes,
                                  size_t* out_size) {
  return read_or_map(path, limit, false, out_bytes, out_size, NULL);
}

mlcc_status_t mlcc_onnx_load_file(const char* path, uint64_t limit, uint8_t** out_bytes,
                                  size_t* out_size, bool* out_mapped) {
  return read_or_map(path, limit, true, out_bytes, out_size, out_mapped);
}

void mlcc_onnx_release_file(uint8_t* bytes, size_t size, bool mapped) {
  if (mapped) {
    munmap(bytes, size);
  } else {
    free(bytes);
  }
}

static mlcc_status_t read_or_map(const char* path, uint64_t limit, bool may_map,
                                 uint8_t** out_bytes, size_t* out_size, bool* out_mapped) {
  *out_bytes = NULL;
  *out_size = 0;
  if (out_mapped != NULL) *out_mapped = false;
  // O_NONBLOCK: a FIFO must fail the regular-file check below, not block the
  // open until a writer appears (it has no effect on regular files).
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return open_error("", path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return mlcc_make_status(MLCC_STATUS_IO, "cannot stat %s: %s", path, strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return mlcc_make_status(MLCC_STATUS_IO, "%s is not a regular file", path);
  }
  uint64_t size = (uint64_t)st.st_size;
  if (size > limit || size > SIZE_MAX - 1) {
    close(fd);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "%s is %" PRIu64 " bytes, over the limit of %" PRIu64 " bytes",
                            path, size, limit);
  }
  if (may_map && size >= MLCC_LARGE_ALLOC_MIN) {
    void* m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED) {
      close(fd);
      *out_bytes = (uint8_t*)m;
      *out_size = (size_t)size;
      *out_mapped = true;
      return mlcc_ok_status();
    }
    // Not mappable (some file systems): read it instead.
  }
  uint8_t* buf = (uint8_t*)malloc(size ? (size_t)size : 1);
  if (buf == NULL) {
    close(fd);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory reading %s (%" PRIu64 " bytes)", path, size);
  }
  if (!pread_all(fd, buf, (size_t)size, 0)) {
    int err = errno;
    close(fd);
    free(buf);
    return mlcc_make_status(MLCC_STATUS_IO, "cannot read %s: %s", path,
                            err ? strerror(err) : "file shrank while reading");
  }
  close(fd);
  *out_bytes = buf;
  *out_size = (size_t)size;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Tensor context
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_onnx_tensor_ctx_init(mlcc_onnx_tensor_ctx_t* ctx, const char* model_path,
                                        uint64_t max_file_bytes, mlcc_arena_t* arena) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->max_file_bytes = max_file_bytes ? max_file_bytes : MLCC_ONNX_DEFAULT_MAX_FILE_BYTES;
  ctx->arena = arena;
  const char* slash = strrchr(model_path, '/');
  size_t len = slash ? (size_t)(slash - model_path) + 1 : 0;
  ctx->dir_prefix = (char*)malloc(len + 1);
  if (ctx->dir_prefix == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(ctx->dir_prefix, model_path, len);
  ctx->dir_prefix[len] = '\0';
  return mlcc_ok_status();
}

void mlcc_onnx_tensor_ctx_deinit(mlcc_onnx_tensor_ctx_t* ctx) {
  free(ctx->dir_prefix);
  free(ctx->dir_real);
  ctx->dir_prefix = NULL;
  ctx->dir_real = NULL;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

const char* mlcc_onnx_elem_type_name(int32_t elem_type) {
  switch (elem_type) {
    case 0: return "undefined";
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    case 17: case 18: case 19: case 20: case 21: case 22: case 23: case 24: case 25:
    case 26:
      return mlcc_dtype_name((mlcc_dtype_t)elem_type);  // float8*, [u]int4, float4, [u]int2
    default:
      if (mlcc_dtype_is_valid((mlcc_dtype_t)elem_type)) {
        return mlcc_dtype_name((mlcc_dtype_t)elem_type);
      }
      return "unknown";
  }
}

static const char* tname(const MlccOnnx__TensorProto* t) {
  return (t->name != NULL && t->name[0] != '\0') ? t->name : "(unnamed)";
}

mlcc_status_t mlcc_onnx_tensor_shape(const MlccOnnx__TensorProto* t, mlcc_shape_t* out_shape) {
  memset(out_shape, 0, sizeof(*out_shape));
  if (t->n_dims > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "tensor '%s' has rank %zu; mlcc supports at most %d", tname(t),
                            t->n_dims, MLCC_MAX_RANK);
  }
  out_shape->rank = (int32_t)t->n_dims;
  for (size_t i = 0; i < t->n_dims; ++i) {
    if (t->dims[i] < 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "tensor '%s' has negative dim %zu (%" PRId64 ")", tname(t), i,
                              t->dims[i]);
    }
    out_shape->dims[i] = t->dims[i];
  }
  return mlcc_ok_status();
}

// Strict non-negative decimal.
static bool parse_u64(const char* s, uint64_t* out) {
  if (s == NULL || *s == '\0') return false;
  uint64_t v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
    if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return true;
}

// Records |path| (copied into the arena) in the depfile list, once.
static mlcc_status_t record_dep(mlcc_onnx_tensor_ctx_t* ctx, const char* path) {
  if (ctx->deps == NULL || ctx->n_deps == NULL) return mlcc_ok_status();
  for (uint32_t i = 0; i < *ctx->n_deps; ++i) {
    if (strcmp(ctx->deps[i], path) == 0) return mlcc_ok_status();
  }
  if (*ctx->n_deps >= ctx->deps_cap) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "the model reads more than %u external data files", ctx->deps_cap);
  }
  char* copy = mlcc_arena_strdup(ctx->arena, path);
  if (copy == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  ctx->deps[(*ctx->n_deps)++] = copy;
  return mlcc_ok_status();
}

// Checks |location| and resolves it under the model folder. On success
// |*out_real| (malloc'ed) is the canonical path to open and |*out_path|
// (malloc'ed) the path as given relative to the model (for the depfile).
static mlcc_status_t resolve_external(mlcc_onnx_tensor_ctx_t* ctx, const char* tensor,
                                      const char* location, char** out_path,
                                      char** out_real) {
  *out_path = NULL;
  *out_real = NULL;
  if (location[0] == '/') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "tensor '%s': external data location '%s' is an absolute path; "
                            "it must be relative to the model's folder", tensor, location);
  }
  // No ".." component anywhere: "a/../b" could be fine, but no exporter
  // writes it, and refusing is simpler to reason about.
  for (const char* p = location; *p;) {
    const char* end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "tensor '%s': external data location '%s' escapes the model's "
                              "folder", tensor, location);
    }
    p += len;
    if (*p == '/') p++;
  }
  size_t plen = strlen(ctx->dir_prefix), llen = strlen(location);
  char* path = (char*)malloc(plen + llen + 1);
  if (path == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(path, ctx->dir_prefix, plen);
  memcpy(path + plen, location, llen + 1);
  struct stat st;
  if (stat(path, &st) != 0) {
    int err = errno;
    mlcc_status_t s =
        (err == ENOENT || err == ENOTDIR)
            ? mlcc_make_status(MLCC_STATUS_NOT_FOUND,
                               "tensor '%s': external data file '%s' not found", tensor, path)
            : mlcc_make_status(MLCC_STATUS_IO, "tensor '%s': cannot access '%s': %s", tensor,
                               path, strerror(err));
    free(path);
    return s;
  }
  if (ctx->dir_real == NULL) {
    ctx->dir_real = realpath(plen ? ctx->dir_prefix : ".", NULL);
    if (ctx->dir_real == NULL) {
      int err = errno;
      free(path);
      return mlcc_make_status(MLCC_STATUS_IO, "cannot resolve the model's folder: %s",
                              strerror(err));
    }
  }
  char* real = realpath(path, NULL);
  if (real == NULL) {
    int err = errno;
    free(path);
    return mlcc_make_status(MLCC_STATUS_IO, "tensor '%s': cannot resolve '%s': %s", tensor,
                            location, strerror(err));
  }
  size_t dlen = strlen(ctx->dir_real);
  // "/" as the model folder: every absolute path is under it.
  bool under = dlen == 1 ? real[0] == '/'
                         : (strncmp(real, ctx->dir_real, dlen) == 0 && real[dlen] == '/');
  if (!under) {
    free(path);
    free(real);
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "tensor '%s': external data location '%s' resolves outside the "
                            "model's folder", tensor, location);
  }
  *out_path = path;
  *out_real = real;
  return mlcc_ok_status();
}

// Reads |nbytes| of external data for |t| into the arena.
static mlcc_status_t read_external(mlcc_onnx_tensor_ctx_t* ctx, const MlccOnnx__TensorProto* t,
                                   size_t nbytes, const void** out_data) {
  const char* name = tname(t);
  const char* location = NULL;
  uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (size_t i = 0; i < t->n_external_data; ++i) {
    const MlccOnnx__StringStringEntryProto* e = t->external_data[i];
    const char* key = e->key ? e->key : "";
    const char* value = e->value ? e->value : "";
    if (strcmp(key, "location") == 0) {
      location = value;
    } else if (strcmp(key, "offset") == 0) {
      if (!parse_u64(value, &offset)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "tensor '%s': external data offset '%s' is not a number", name,
                                value);
      }
    } else if (strcmp(key, "length") == 0) {
      if (!parse_u64(value, &length)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "tensor '%s': external data length '%s' is not a number", name,
                                value);
      }
      has_length = true;
    }  // "checksum" and unknown keys are ignored
  }
  if (location == NULL || location[0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "tensor '%s' has external data but no location", name);
  }
  char* path = NULL;
  char* real = NULL;
  MLCC_RETURN_IF_ERROR(resolve_external(ctx, name, location, &path, &real));
  mlcc_status_t s = mlcc_ok_status();
  // O_NONBLOCK: external data that is a FIFO in the model's folder must be
  // refused below, not hang the build in open().
  int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0) {
    s = open_error("external data file ", path, errno);
  } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                         "tensor '%s': external data '%s' is not a regular file", name, location);
  } else {
    uint64_t fsize = (uint64_t)st.st_size;
    if (offset > fsize) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "tensor '%s': external data offset %" PRIu64 " is past the end of "
                           "'%s' (%" PRIu64 " bytes)", name, offset, location, fsize);
    } else {
      if (!has_length) length = fsize - offset;
      if (length > fsize - offset) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "tensor '%s': external data [%" PRIu64 ", +%" PRIu64
                             ") is past the end of '%s' (%" PRIu64 " bytes)", name, offset,
                             length, location, fsize);
      } else if (length != (uint64_t)nbytes) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "tensor '%s': external data has %" PRIu64 " bytes, expected %zu",
                             name, length, nbytes);
      }
    }
    if (s == NULL) {
      uint8_t* buf = (uint8_t*)mlcc_arena_alloc(ctx->arena, nbytes, 64);
      if (buf == NULL) {
        s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory reading %zu bytes of external data for '%s'", nbytes,
                             name);
      } else if (!pread_all(fd, buf, nbytes, offset)) {
        s = mlcc_make_status(MLCC_STATUS_IO, "tensor '%s': cannot read external data '%s'",
                             name, location);
      } else {
        *out_data = buf;
      }
    }
  }
  if (fd >= 0) close(fd);
  if (s == NULL) s = record_dep(ctx, path);
  free(path);
  free(real);
  return s;
}

static mlcc_status_t count_mismatch(const MlccOnnx__TensorProto* t, const char* field,
                                    size_t got, int64_t numel, mlcc_dtype_t dtype) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "tensor '%s': %s has %zu elements, expected %" PRId64 " (%s)",
                          tname(t), field, got, numel, mlcc_dtype_name(dtype));
}

// Converts the typed repeated field for |dtype| into dense bytes.
static mlcc_status_t decode_typed(mlcc_onnx_tensor_ctx_t* ctx, const MlccOnnx__TensorProto* t,
                                  mlcc_dtype_t dtype, int64_t numel, size_t nbytes,
                                  const void** out_data) {
  size_t n = (size_t)numel;
  const char* field;
  size_t got;
  switch (dtype) {
    case MLCC_DTYPE_F32: field = "float_data"; got = t->n_float_data; break;
    case MLCC_DTYPE_I64: field = "int64_data"; got = t->n_int64_data; break;
    case MLCC_DTYPE_F64: field = "double_data"; got = t->n_double_data; break;
    case MLCC_DTYPE_U32:
    case MLCC_DTYPE_U64: field = "uint64_data"; got = t->n_uint64_data; break;
    default: field = "int32_data"; got = t->n_int32_data; break;
  }
  if (got != n) return count_mismatch(t, field, got, numel, dtype);
  uint8_t* buf = (uint8_t*)mlcc_arena_alloc(ctx->arena, nbytes, 64);
  if (buf == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory decoding tensor '%s' (%zu bytes)", tname(t), nbytes);
  }
  *out_data = buf;
  if (n == 0) return mlcc_ok_status();  // the typed arrays may be NULL
  // The host is little-endian (checked above), so stores are the encoding.
  switch (dtype) {
    case MLCC_DTYPE_F32: memcpy(buf, t->float_data, nbytes); break;
    case MLCC_DTYPE_I64: memcpy(buf, t->int64_data, nbytes); break;
    case MLCC_DTYPE_F64: memcpy(buf, t->double_data, nbytes); break;
    case MLCC_DTYPE_U64: memcpy(buf, t->uint64_data, nbytes); break;
    case MLCC_DTYPE_U32:
      for (size_t i = 0; i < n; ++i) ((uint32_t*)buf)[i] = (uint32_t)t->uint64_data[i];
      break;
    case MLCC_DTYPE_I32: memcpy(buf, t->int32_data, nbytes); break;
    case MLCC_DTYPE_I16:
    case MLCC_DTYPE_U16:
    case MLCC_DTYPE_F16:  // the IEEE half bits in the low 16 bits
    case MLCC_DTYPE_BF16:  // likewise the bfloat16 bits
      for (size_t i = 0; i < n; ++i) ((uint16_t*)buf)[i] = (uint16_t)t->int32_data[i];
      break;
    case MLCC_DTYPE_I8:
    case MLCC_DTYPE_U8:
    case MLCC_DTYPE_F8E4M3FN:  // the float8 bits in the low 8 bits (onnx.proto)
    case MLCC_DTYPE_F8E4M3FNUZ:
    case MLCC_DTYPE_F8E5M2:
    case MLCC_DTYPE_F8E5M2FNUZ:
    case MLCC_DTYPE_F8E8M0:
      for (size_t i = 0; i < n; ++i) {
        // a float8 code is one byte: a wider value is not a code (onnxruntime
        // refuses it too), where int8/uint8 values wrap as onnxruntime's do
        int32_t v = t->int32_data[i];
        if (mlcc_dtype_is_float8(dtype) && (v < 0 || v > 255)) {
          return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                  "tensor '%s': int32_data[%zu] = %" PRId32
                                  " is not a %s code (0..255)", tname(t), i, v,
                                  mlcc_dtype_name(dtype));
        }
        buf[i] = (uint8_t)v;
      }
      break;
    case MLCC_DTYPE_BOOL:
      for (size_t i = 0; i < n; ++i) buf[i] = t->int32_data[i] != 0;
      break;
    default:
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "tensor '%s': no decoder for %s", tname(t),
                              mlcc_dtype_name(dtype));
  }
  *out_data = buf;
  return mlcc_ok_status();
}

// int4/uint4 (ONNX IR: two elements per byte, the first in the 4 least
// significant bits; raw_data and external data hold ceil(n/2) bytes, each
// int32_data value one such byte) and int2/uint2 (four per byte, the first
// in bits 0-1; ceil(n/4) bytes) -> one element per byte, the signed types
// sign-extended, the unsigned and float4e2m1 zero-extended (dtypes.def).
static mlcc_status_t decode_subbyte(mlcc_onnx_tensor_ctx_t* ctx, const MlccOnnx__TensorProto* t,
                                    const char* what, mlcc_dtype_t dtype, uint64_t numel,
                                    mlcc_onnx_tensor_t* out) {
  const char* name = tname(t);
  size_t n = (size_t)numel;
  size_t packed = (size_t)mlcc_dtype_packed_bytes(dtype, numel);
  uint32_t bits = mlcc_dtype_bits(dtype), per = 8 / bits, mask = (1u << bits) - 1;
  const uint8_t* src = NULL;
  if (t->has_data_location && t->data_location == MLCC_ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    const void* ext = NULL;
    MLCC_RETURN_IF_ERROR(read_external(ctx, t, packed, &ext));
    src = (const uint8_t*)ext;
  } else if (t->has_raw_data) {
    if (t->raw_data.len != packed) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s '%s': raw_data has %zu bytes, expected %zu (%" PRIu64
                              " elements of %s, %u per byte)", what, name, t->raw_data.len,
                              packed, numel, mlcc_dtype_name(dtype), per);
    }
    src = t->raw_data.data;
  } else if (t->n_int32_data != packed) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "tensor '%s': int32_data has %zu values, expected %zu (%" PRIu64
                            " elements of %s, %u per value)", name, t->n_int32_data, packed,
                            numel, mlcc_dtype_name(dtype), per);
  }
  for (size_t i = 0; src == NULL && i < packed; ++i) {
    if (t->int32_data[i] < 0 || t->int32_data[i] > 255) {  // each value is one packed byte
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s '%s': int32_data[%zu] = %" PRId32
                              " is not a byte of packed %s (0..255)", what, name, i,
                              t->int32_data[i], mlcc_dtype_name(dtype));
    }
  }
  uint8_t* buf = (uint8_t*)mlcc_arena_alloc(ctx->arena, n ? n : 1, 64);
  if (buf == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory decoding %s '%s' (%zu bytes)", what, name, n);
  }
  // float4e2m1 codes are bits (sign in bit 3), never sign-extended
  bool is_signed = !mlcc_dtype_is_unsigned(dtype) && !mlcc_dtype_is_float8(dtype);
  for (size_t i = 0; i < n; ++i) {
    uint32_t byte = src ? src[i / per] : (uint32_t)t->int32_data[i / per] & 0xffu;
    uint32_t v = (byte >> ((i % per) * bits)) & mask;
    // two's complement int8: subtract 2^bits from a value with the sign bit
    buf[i] = (uint8_t)(is_signed && (v >> (bits - 1)) ? v - (mask + 1) : v);
  }
  out->data = buf;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_onnx_decode_tensor(mlcc_onnx_tensor_ctx_t* ctx,
                                      const MlccOnnx__TensorProto* t, const char* what,
                                      mlcc_onnx_tensor_t* out) {
  memset(out, 0, sizeof(*out));
  const char* name = tname(t);
  if (!t->has_data_type || t->data_type == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s '%s' has no data type", what, name);
  }
  mlcc_dtype_t dtype = (mlcc_dtype_t)t->data_type;
  if (!mlcc_dtype_is_valid(dtype)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s '%s' has data type %s (%d), which mlcc does not support", what,
                            name, mlcc_onnx_elem_type_name(t->data_type), (int)t->data_type);
  }
  mlcc_shape_t shape;
  MLCC_RETURN_IF_ERROR(mlcc_onnx_tensor_shape(t, &shape));
  // numel and bytes with overflow checks, before anything is allocated
  uint64_t numel = 1;
  for (int32_t i = 0; i < shape.rank; ++i) {
    if (shape.dims[i] != 0 && numel > UINT64_MAX / (uint64_t)shape.dims[i]) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s '%s': the element count overflows", what, name);
    }
    numel *= (uint64_t)shape.dims[i];
  }
  size_t esize = mlcc_dtype_size(dtype);
  if (numel > MLCC_ONNX_MAX_ELEMENTS) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "%s '%s' has %" PRIu64 " elements; mlcc supports at most 2^32",
                            what, name, numel);
  }
  uint64_t nbytes64 = numel * esize;  // < 2^35, no overflow
  if (nbytes64 > ctx->max_file_bytes || nbytes64 > SIZE_MAX) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "%s '%s' has %" PRIu64 " bytes, over the limit of %" PRIu64, what,
                            name, nbytes64, ctx->max_file_bytes);
  }
  size_t nbytes = (size_t)nbytes64;
  out->dtype = dtype;
  out->shape = shape;
  out->size = nbytes;
  if (mlcc_dtype_is_subbyte(dtype)) return decode_subbyte(ctx, t, what, dtype, numel, out);
  if (t->has_data_location && t->data_location == MLCC_ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    return read_external(ctx, t, nbytes, &out->data);
  }
  if (t->has_raw_data) {
    if (t->raw_data.len != nbytes) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s '%s': raw_data has %zu bytes, expected %zu (%" PRIu64
                              " elements of %s)", what, name, t->raw_data.len, nbytes, numel,
                              mlcc_dtype_name(dtype));
    }
    if (nbytes > 0 && t->raw_data.data != NULL &&
        ((uintptr_t)t->raw_data.data % esize) == 0) {
      out->data = t->raw_data.data;  // borrowed from the decoded proto
      return mlcc_ok_status();
    }
    uint8_t* buf = (uint8_t*)mlcc_arena_alloc(ctx->arena, nbytes, 64);
    if (buf == NULL) {
      return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory copying %s '%s' (%zu bytes)", what, name, nbytes);
    }
    if (nbytes) memcpy(buf, t->raw_data.data, nbytes);
    out->data = buf;
    return mlcc_ok_status();
  }
  return decode_typed(ctx, t, dtype, (int64_t)numel, nbytes, &out->data);
}

//===----------------------------------------------------------------------===//
// mlcc_onnx_read_tensor_file
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_onnx_read_tensor_file(const char* path, mlcc_dtype_t* out_dtype,
                                         mlcc_shape_t* out_shape, void** out_data,
                                         size_t* out_size, char** out_data_file) {
  if (out_data_file) *out_data_file = NULL;
  if (out_dtype) *out_dtype = MLCC_DTYPE_UNDEFINED;
  if (out_shape) memset(out_shape, 0, sizeof(*out_shape));
  if (out_data) *out_data = NULL;
  if (out_size) *out_size = 0;
  if (path == NULL || out_dtype == NULL || out_shape == NULL || out_data == NULL ||
      out_size == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "NULL argument");
  }
  uint8_t* bytes = NULL;
  size_t size = 0;
  MLCC_RETURN_IF_ERROR(mlcc_onnx_read_file(path, MLCC_ONNX_DEFAULT_MAX_FILE_BYTES, &bytes,
                                           &size));
  mlcc_onnx_alloc_state_t st;
  ProtobufCAllocator alloc = mlcc_onnx_counting_allocator(&st);
  MlccOnnx__TensorProto* t = mlcc_onnx__tensor_proto__unpack(&alloc, size, bytes);
  free(bytes);
  if (t == NULL) {
    if (st.failed) {
      return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory decoding %s (%zu bytes)", path, size);
    }
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s is not a valid ONNX tensor (failed to decode %zu bytes)", path,
                            size);
  }
  mlcc_arena_t arena;
  mlcc_arena_init(&arena);
  mlcc_onnx_tensor_ctx_t ctx;
  mlcc_status_t s = mlcc_onnx_tensor_ctx_init(&ctx, path, 0, &arena);
  const char* data_files[1] = {NULL};  // a tensor has at most one external data file
  uint32_t n_data_files = 0;
  ctx.deps = data_files;
  ctx.deps_cap = 1;
  ctx.n_deps = &n_data_files;
  mlcc_onnx_tensor_t dec;
  if (s == NULL) s = mlcc_onnx_decode_tensor(&ctx, t, "tensor", &dec);
  if (s == NULL && out_data_file != NULL && n_data_files == 1) {
    *out_data_file = strdup(data_files[0]);
    if (*out_data_file == NULL) s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (s == NULL) {
    void* data = malloc(dec.size ? dec.size : 1);
    if (data == NULL) {
      s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory (%zu bytes)",
                           dec.size);
    } else {
      if (dec.size) memcpy(data, dec.data, dec.size);
      *out_dtype = dec.dtype;
      *out_shape = dec.shape;
      *out_data = data;
      *out_size = dec.size;
    }
  }
  if (s != NULL && out_data_file != NULL) {
    free(*out_data_file);
    *out_data_file = NULL;
  }
  mlcc_onnx_tensor_ctx_deinit(&ctx);
  mlcc_arena_deinit(&arena);
  mlcc_onnx__tensor_proto__free_unpacked(t, mlcc_onnx_protobuf_allocator());
  if (!mlcc_status_is_ok(s)) s = mlcc_status_annotate(s, "%s", path);
  return s;
}

// SPDX-License-Identifier: Apache-2.0
// Overflow-checked arithmetic for sizes and dims; ONNX dims are untrusted.
#ifndef MLCC_IR_BASE_CHECKED_MATH_H_
#define MLCC_IR_BASE_CHECKED_MATH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Each returns false on overflow (and leaves |*out| unspecified).
static inline bool mlcc_checked_mul_i64(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool mlcc_checked_add_i64(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline bool mlcc_checked_mul_size(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool mlcc_checked_add_size(size_t a, size_t b, size_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

#endif  // MLCC_IR_BASE_CHECKED_MATH_H_

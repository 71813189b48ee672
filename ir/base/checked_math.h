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

// The number of terms of start, start + step, start + 2*step, ... that lie
// strictly before |end| (step > 0) or strictly after it (step < 0):
// max(0, ceil((end - start) / step)). This is the output length that Slice,
// Range and the window ops (Conv, pools: ceil(pad / stride)) share. Exact for
// every int64 input, INT64_MIN and INT64_MAX included: the span is taken in
// uint64 and |step| is never negated in int64. False when |step| is 0 or the
// count exceeds INT64_MAX (a span over 2^63 with |step| 1).
static inline bool mlcc_checked_stride_count(int64_t start, int64_t end, int64_t step,
                                             int64_t* out) {
  if (step == 0) return false;
  bool up = step > 0;
  if (up ? end <= start : end >= start) {
    *out = 0;
    return true;
  }
  uint64_t span = up ? (uint64_t)end - (uint64_t)start : (uint64_t)start - (uint64_t)end;
  uint64_t mag = up ? (uint64_t)step : (uint64_t)(-(step + 1)) + 1u;
  uint64_t n = (span - 1u) / mag + 1u;
  if (n > (uint64_t)INT64_MAX) return false;
  *out = (int64_t)n;
  return true;
}

// ceil(a / b) for a >= 0, b > 0 without the overflow of (a + b - 1) / b.
static inline int64_t mlcc_ceil_div_nonneg(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}

// One axis of ONNX Slice, as the spec clamps it: a negative start or end
// adds |dim| (saturating); for step > 0 both clamp to [0, dim], for step < 0
// start clamps to [0, dim-1] and end to [-1, dim-1]. Sets the first index
// |*out_start| and the element count |*out_count| (0 for an empty slice).
// |dim| >= 0; |step| != 0 (false otherwise). Shared by shape inference
// (ir/ops/shape_ops.c) and the emitter (targets/kernels/shape.c).
static inline bool mlcc_slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step,
                                   int64_t* out_start, int64_t* out_count) {
  if (step == 0 || dim < 0) return false;
  if (dim == 0) {
    *out_start = 0;
    *out_count = 0;
    return true;
  }
  if (start < 0) start += dim;  // start >= INT64_MIN, dim >= 0: no overflow
  if (end < 0) end += dim;
  int64_t hi = step > 0 ? dim : dim - 1;  // start clamps to [0, hi]
  int64_t end_lo = step > 0 ? 0 : -1;     // end clamps to [end_lo, hi]
  start = start < 0 ? 0 : start > hi ? hi : start;
  end = end < end_lo ? end_lo : end > hi ? hi : end;
  *out_start = start;
  return mlcc_checked_stride_count(start, end, step, out_count);
}

#endif  // MLCC_IR_BASE_CHECKED_MATH_H_

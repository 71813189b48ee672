// SPDX-License-Identifier: Apache-2.0
// Large host allocations (decoded weights, pre-packed weights) backed by
// transparent huge pages where the kernel offers them (Linux THP in "madvise"
// mode): a 46 MB weight blob then costs about 23 page faults instead of about
// 11,000, which is most of a warm (all kernels cached) build's system time.
// Thread-safe (no state).
#ifndef MLCC_IR_BASE_LARGE_ALLOC_H_
#define MLCC_IR_BASE_LARGE_ALLOC_H_

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Requests of at least this many bytes get huge-page backing.
#define MLCC_LARGE_ALLOC_MIN ((size_t)4 << 20)

// Returns |size| bytes (at least 1) aligned to 64, zeroed when |zero|, or NULL
// when memory runs out. Requests below MLCC_LARGE_ALLOC_MIN are plain
// malloc/calloc. The caller owns the block and releases it with free(); the
// huge-page advice is a hint, never a failure.
void* mlcc_large_alloc(size_t size, bool zero);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_BASE_LARGE_ALLOC_H_

// SPDX-License-Identifier: Apache-2.0
#include "ir/base/large_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20)

void* mlcc_large_alloc(size_t size, bool zero) {
  if (size == 0) size = 1;
  if (size < MLCC_LARGE_ALLOC_MIN) return zero ? calloc(1, size) : malloc(size);
  void* p = NULL;
  // Huge-page aligned so that every full 2 MB stretch can be a huge page.
  if (posix_memalign(&p, HUGE_PAGE, size) != 0) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  size_t span = size & ~(HUGE_PAGE - 1);
  if (span != 0) (void)madvise(p, span, MADV_HUGEPAGE);  // advice only
#endif
  if (zero) memset(p, 0, size);
  return p;
}

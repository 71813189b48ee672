// SPDX-License-Identifier: Apache-2.0
// Bump arena: a singly linked list of malloc'ed blocks, newest first.
#include "ir/base/arena.h"

#include <stdlib.h>
#include <string.h>

#include "ir/base/checked_math.h"
#include "ir/base/large_alloc.h"

// Default payload size of a fresh block; larger requests get their own block.
#define MLCC_ARENA_BLOCK_SIZE ((size_t)64 * 1024)

struct mlcc_arena_block_t {
  mlcc_arena_block_t* next;  // older block
  size_t capacity;           // payload bytes after the header
  size_t used;               // payload bytes consumed (including padding)
  // Payload follows; the header is padded to keep it max-aligned.
};

static size_t header_size(void) {
  size_t h = sizeof(mlcc_arena_block_t);
  return (h + 63) & ~(size_t)63;
}

static unsigned char* block_payload(mlcc_arena_block_t* b) {
  return (unsigned char*)b + header_size();
}

void mlcc_arena_init(mlcc_arena_t* arena) {
  arena->head = NULL;
  arena->bytes_allocated = 0;
}

void mlcc_arena_deinit(mlcc_arena_t* arena) {
  mlcc_arena_block_t* b = arena->head;
  while (b != NULL) {
    mlcc_arena_block_t* next = b->next;
    free(b);
    b = next;
  }
  arena->head = NULL;
  arena->bytes_allocated = 0;
}

void* mlcc_arena_alloc(mlcc_arena_t* arena, size_t size, size_t align) {
  if (align == 0) align = 1;
  if ((align & (align - 1)) != 0 || align > 4096) return NULL;
  if (size == 0) size = 1;  // distinct non-NULL pointers for empty requests
  mlcc_arena_block_t* b = arena->head;
  if (b != NULL) {
    // Align the absolute address, not the offset (payload is 64-aligned only
    // if malloc returned a 64-aligned block; be exact).
    uintptr_t base = (uintptr_t)block_payload(b);
    uintptr_t cur = base + b->used;
    uintptr_t aligned = (cur + (align - 1)) & ~(uintptr_t)(align - 1);
    size_t offset = (size_t)(aligned - base);
    size_t end;
    if (mlcc_checked_add_size(offset, size, &end) && end <= b->capacity) {
      b->used = end;
      arena->bytes_allocated += size;
      void* p = (void*)aligned;
      memset(p, 0, size);
      return p;
    }
  }
  // New block: big enough for |size| plus worst-case alignment padding.
  size_t need;
  if (!mlcc_checked_add_size(size, align, &need)) return NULL;
  size_t capacity = need > MLCC_ARENA_BLOCK_SIZE ? need : MLCC_ARENA_BLOCK_SIZE;
  size_t total;
  if (!mlcc_checked_add_size(capacity, header_size(), &total)) return NULL;
  // Big blocks (packed weights of a large model) get huge pages.
  mlcc_arena_block_t* nb = (mlcc_arena_block_t*)mlcc_large_alloc(total, true);
  if (nb == NULL) return NULL;
  nb->capacity = capacity;
  nb->used = 0;
  // A dedicated big block goes behind the current head so the head's free
  // space stays usable for small requests.
  if (need > MLCC_ARENA_BLOCK_SIZE / 2 && arena->head != NULL) {
    nb->next = arena->head->next;
    arena->head->next = nb;
  } else {
    nb->next = arena->head;
    arena->head = nb;
  }
  uintptr_t base = (uintptr_t)block_payload(nb);
  uintptr_t aligned = (base + (align - 1)) & ~(uintptr_t)(align - 1);
  nb->used = (size_t)(aligned - base) + size;
  arena->bytes_allocated += size;
  return (void*)aligned;  // zeroed by mlcc_large_alloc
}

char* mlcc_arena_strndup(mlcc_arena_t* arena, const char* s, size_t len) {
  size_t total;
  if (!mlcc_checked_add_size(len, 1, &total)) return NULL;
  char* p = (char*)mlcc_arena_alloc(arena, total, 1);
  if (p == NULL) return NULL;
  if (len > 0 && s != NULL) memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

char* mlcc_arena_strdup(mlcc_arena_t* arena, const char* s) {
  if (s == NULL) s = "";
  return mlcc_arena_strndup(arena, s, strlen(s));
}

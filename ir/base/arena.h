// SPDX-License-Identifier: Apache-2.0
// Bump arena over a list of malloc'ed blocks; freed all at once.
// Thread-compatible.
#ifndef MLCC_IR_BASE_ARENA_H_
#define MLCC_IR_BASE_ARENA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_arena_block_t mlcc_arena_block_t;

typedef struct mlcc_arena_t {
  mlcc_arena_block_t* head;  // most recent block
  size_t bytes_allocated;    // total payload handed out (statistics)
} mlcc_arena_t;

void mlcc_arena_init(mlcc_arena_t* arena);
// Frees every block; the arena is empty and reusable afterwards.
void mlcc_arena_deinit(mlcc_arena_t* arena);

// Returns |size| bytes aligned to |align| (a power of two <= 4096), zeroed,
// or NULL when memory runs out or |size| overflows. Never frees individually.
void* mlcc_arena_alloc(mlcc_arena_t* arena, size_t size, size_t align);

// Copies |len| bytes of |s| plus a NUL terminator into the arena. NULL on OOM.
char* mlcc_arena_strndup(mlcc_arena_t* arena, const char* s, size_t len);
char* mlcc_arena_strdup(mlcc_arena_t* arena, const char* s);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_BASE_ARENA_H_

// SPDX-License-Identifier: Apache-2.0
// A growable, always NUL-terminated, malloc'ed string used by the driver to
// build text (headers, depfiles, quoted job lines). Thread-compatible.
//
// Appends never fail loudly: on OOM the buffer enters a sticky |oom| state
// and mlcc_strbuf_status() reports RESOURCE_EXHAUSTED once at the end, so
// callers check one place instead of every append (SQLite's StrAccum idea).
#ifndef MLCC_DRIVER_STRBUF_H_
#define MLCC_DRIVER_STRBUF_H_

#include <stdbool.h>
#include <stddef.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_strbuf_t {
  char* data;   // NUL-terminated when non-NULL; owned
  size_t len;   // bytes before the NUL
  size_t cap;   // allocated bytes
  bool oom;     // an append failed; contents are truncated
} mlcc_strbuf_t;

// Initializes an empty buffer (no allocation yet).
void mlcc_strbuf_init(mlcc_strbuf_t* sb);
// Frees the storage; the buffer is empty and reusable afterwards.
void mlcc_strbuf_deinit(mlcc_strbuf_t* sb);

void mlcc_strbuf_append(mlcc_strbuf_t* sb, const char* s);
void mlcc_strbuf_append_n(mlcc_strbuf_t* sb, const char* s, size_t n);
void mlcc_strbuf_append_char(mlcc_strbuf_t* sb, char c);
void mlcc_strbuf_appendf(mlcc_strbuf_t* sb, const char* fmt, ...) MLCC_PRINTF(2, 3);

// The contents (never NULL: "" when empty). Borrowed until the next append.
const char* mlcc_strbuf_cstr(const mlcc_strbuf_t* sb);

// Transfers the malloc'ed string to the caller (who frees it) and resets the
// buffer. Returns NULL if an append ran out of memory.
char* mlcc_strbuf_take(mlcc_strbuf_t* sb);

// RESOURCE_EXHAUSTED if any append failed, else OK.
mlcc_status_t mlcc_strbuf_status(const mlcc_strbuf_t* sb);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_STRBUF_H_

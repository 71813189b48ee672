// SPDX-License-Identifier: Apache-2.0
#include "driver/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/checked_math.h"

void mlcc_strbuf_init(mlcc_strbuf_t* sb) { memset(sb, 0, sizeof(*sb)); }

void mlcc_strbuf_deinit(mlcc_strbuf_t* sb) {
  free(sb->data);
  memset(sb, 0, sizeof(*sb));
}

// Makes room for |extra| more bytes plus the NUL.
static bool reserve(mlcc_strbuf_t* sb, size_t extra) {
  if (sb->oom) return false;
  size_t need;
  if (!mlcc_checked_add_size(sb->len, extra, &need) ||
      !mlcc_checked_add_size(need, 1, &need)) {
    sb->oom = true;
    return false;
  }
  if (need <= sb->cap) return true;
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < need) {
    if (!mlcc_checked_mul_size(cap, 2, &cap)) {
      sb->oom = true;
      return false;
    }
  }
  char* p = (char*)realloc(sb->data, cap);
  if (p == NULL) {
    sb->oom = true;
    return false;
  }
  sb->data = p;
  sb->cap = cap;
  return true;
}

void mlcc_strbuf_append_n(mlcc_strbuf_t* sb, const char* s, size_t n) {
  if (!reserve(sb, n)) return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void mlcc_strbuf_append(mlcc_strbuf_t* sb, const char* s) {
  mlcc_strbuf_append_n(sb, s, strlen(s));
}

void mlcc_strbuf_append_char(mlcc_strbuf_t* sb, char c) { mlcc_strbuf_append_n(sb, &c, 1); }

void mlcc_strbuf_appendf(mlcc_strbuf_t* sb, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    sb->oom = true;
  } else if (reserve(sb, (size_t)n)) {
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
    sb->len += (size_t)n;
  }
  va_end(ap2);
}

const char* mlcc_strbuf_cstr(const mlcc_strbuf_t* sb) { return sb->data ? sb->data : ""; }

char* mlcc_strbuf_take(mlcc_strbuf_t* sb) {
  char* out = NULL;
  if (!sb->oom) {
    out = sb->data ? sb->data : strdup("");
    sb->data = NULL;
  }
  mlcc_strbuf_deinit(sb);
  return out;
}

mlcc_status_t mlcc_strbuf_status(const mlcc_strbuf_t* sb) {
  if (!sb->oom) return mlcc_ok_status();
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory building text");
}

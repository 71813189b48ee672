// SPDX-License-Identifier: Apache-2.0
// mlcc_status_t implementation: heap-allocated code + message + annotation chain.
#include "ir/base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mlcc_status_annotation_t {
  struct mlcc_status_annotation_t* next;  // next inner annotation
  char text[];
} mlcc_status_annotation_t;

struct mlcc_status_s {
  mlcc_status_code_t code;
  const char* file;  // source file of the creation site (static string)
  int line;
  mlcc_status_annotation_t* annotations;  // outermost first
  char* message;                          // owned, or static for the OOM status
};

// Returned when memory runs out while making or annotating a status. Never
// freed, never annotated.
static struct mlcc_status_s oom_status = {
    MLCC_STATUS_RESOURCE_EXHAUSTED, __FILE__, __LINE__, NULL,
    (char*)"out of memory while reporting an error"};

// vsnprintf into a new malloc'ed string; NULL on OOM.
static char* vformat(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  char* buf = (char*)malloc((size_t)n + 1);
  if (buf == NULL) return NULL;
  if (n > 0) {
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
  } else {
    buf[0] = '\0';
  }
  return buf;
}

mlcc_status_t mlcc_status_make_at(const char* file, int line, mlcc_status_code_t code,
                                  const char* fmt, ...) {
  if (code == MLCC_STATUS_OK || code >= MLCC_STATUS_CODE_COUNT) {
    // API misuse: a failed status must have a failure code.
    code = MLCC_STATUS_INTERNAL;
  }
  mlcc_status_t s = (mlcc_status_t)calloc(1, sizeof(*s));
  if (s == NULL) return &oom_status;
  va_list ap;
  va_start(ap, fmt);
  s->message = vformat(fmt ? fmt : "", ap);
  va_end(ap);
  if (s->message == NULL) {
    free(s);
    return &oom_status;
  }
  s->code = code;
  s->file = file;
  s->line = line;
  return s;
}

mlcc_status_t mlcc_status_annotate(mlcc_status_t status, const char* fmt, ...) {
  if (status == NULL || status == &oom_status) return status;
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  mlcc_status_annotation_t* a =
      (mlcc_status_annotation_t*)malloc(sizeof(*a) + (size_t)n + 1);
  if (a == NULL) {
    va_end(ap);
    mlcc_status_free(status);
    return &oom_status;
  }
  vsnprintf(a->text, (size_t)n + 1, fmt, ap);
  va_end(ap);
  a->next = status->annotations;
  status->annotations = a;
  return status;
}

mlcc_status_t mlcc_status_join(mlcc_status_t primary, mlcc_status_t cleanup) {
  if (primary != NULL) {
    mlcc_status_free(cleanup);
    return primary;
  }
  return cleanup;
}

mlcc_status_code_t mlcc_status_code(mlcc_status_t status) {
  return status == NULL ? MLCC_STATUS_OK : status->code;
}

const char* mlcc_status_code_name(mlcc_status_code_t code) {
  switch (code) {
    case MLCC_STATUS_OK: return "OK";
    case MLCC_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case MLCC_STATUS_INVALID_MODEL: return "INVALID_MODEL";
    case MLCC_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case MLCC_STATUS_NOT_FOUND: return "NOT_FOUND";
    case MLCC_STATUS_IO: return "IO";
    case MLCC_STATUS_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case MLCC_STATUS_INTERNAL: return "INTERNAL";
    default: return "UNKNOWN";
  }
}

const char* mlcc_status_message(mlcc_status_t status) {
  return status == NULL ? "" : status->message;
}

char* mlcc_status_to_string(mlcc_status_t status) {
  if (status == NULL) return NULL;
  const char* code_name = mlcc_status_code_name(status->code);
  size_t len = 0;
  for (mlcc_status_annotation_t* a = status->annotations; a; a = a->next) {
    len += strlen(a->text) + 2;  // ": "
  }
  len += strlen("error: ") + strlen(status->message) + 2 + strlen(code_name) + 1 + 1;
  char* out = (char*)malloc(len);
  if (out == NULL) return NULL;
  char* p = out;
  for (mlcc_status_annotation_t* a = status->annotations; a; a = a->next) {
    size_t n = strlen(a->text);
    memcpy(p, a->text, n);
    p += n;
    *p++ = ':';
    *p++ = ' ';
  }
  snprintf(p, len - (size_t)(p - out), "error: %s [%s]", status->message, code_name);
  return out;
}

void mlcc_status_free(mlcc_status_t status) {
  if (status == NULL || status == &oom_status) return;
  mlcc_status_annotation_t* a = status->annotations;
  while (a != NULL) {
    mlcc_status_annotation_t* next = a->next;
    free(a);
    a = next;
  }
  free(status->message);
  free(status);
}

int mlcc_status_exit_code(mlcc_status_t status) {
  switch (mlcc_status_code(status)) {
    case MLCC_STATUS_OK: return 0;
    case MLCC_STATUS_INVALID_MODEL:
    case MLCC_STATUS_UNIMPLEMENTED:
    case MLCC_STATUS_NOT_FOUND:
    case MLCC_STATUS_IO:
    // A model too large for a limit (or for memory) is the input's problem,
    // not an mlcc bug: exit 1, never "please report".
    case MLCC_STATUS_RESOURCE_EXHAUSTED: return 1;
    case MLCC_STATUS_INVALID_ARGUMENT: return 2;
    default: return 70;
  }
}

// SPDX-License-Identifier: Apache-2.0
#include "driver/depfile.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

mlcc_status_t mlcc_depfile_escape(const char* path, mlcc_strbuf_t* sb) {
  if (strpbrk(path, "\n\r") != NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "cannot write a depfile: path '%s' contains a newline", path);
  }
  for (size_t i = 0; path[i] != '\0'; ++i) {
    char c = path[i];
    if (c == ' ' || c == '\t') {
      // Double the backslashes that precede the blank so they stay literal.
      for (size_t j = i; j > 0 && path[j - 1] == '\\'; --j) mlcc_strbuf_append_char(sb, '\\');
      mlcc_strbuf_append_char(sb, '\\');
      mlcc_strbuf_append_char(sb, c);
    } else if (c == '#') {
      mlcc_strbuf_append(sb, "\\#");
    } else if (c == '$') {
      mlcc_strbuf_append(sb, "$$");
    } else {
      mlcc_strbuf_append_char(sb, c);
    }
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_depfile_render(const char* target, const char* const* deps, size_t n_deps,
                                  char** out_text) {
  *out_text = NULL;
  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  mlcc_status_t s = mlcc_depfile_escape(target, &sb);
  mlcc_strbuf_append_char(&sb, ':');
  for (size_t i = 0; s == NULL && i < n_deps; ++i) {
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = strcmp(deps[i], deps[j]) == 0;
    if (seen) continue;
    mlcc_strbuf_append(&sb, i == 0 ? " " : " \\\n  ");
    s = mlcc_depfile_escape(deps[i], &sb);
  }
  mlcc_strbuf_append_char(&sb, '\n');
  if (s == NULL) s = mlcc_strbuf_status(&sb);
  if (s != NULL) {
    mlcc_strbuf_deinit(&sb);
    return s;
  }
  *out_text = mlcc_strbuf_take(&sb);
  return *out_text ? mlcc_ok_status()
                   : mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

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

mlcc_status_t mlcc_depfile_render_rule(const mlcc_depfile_target_t* targets, size_t n_targets,
                                       const char* const* deps, size_t n_deps, bool phony,
                                       char** out_text) {
  *out_text = NULL;
  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  // gcc's order: its driver passes every -MQ, then every -MT to cc1, and
  // cc1 (mkdeps.cc) puts each unquoted target in the place of the first
  // quoted one, which moves to the end.
  enum { kMaxTargets = 256 };
  size_t order[kMaxTargets];
  size_t n = 0, lwm = 0;
  for (int pass = 0; pass < 2; ++pass) {
    bool quoted = pass == 0;
    for (size_t i = 0; i < n_targets && n < kMaxTargets; ++i) {
      if (targets[i].quote != quoted) continue;
      if (!quoted && lwm != n) {
        order[n++] = order[lwm];
        order[lwm] = i;
      } else {
        order[n++] = i;
      }
      if (!quoted) lwm++;
    }
  }
  mlcc_status_t s = mlcc_ok_status();
  for (size_t k = 0; s == NULL && k < n; ++k) {
    size_t i = order[k];
    if (k > 0) mlcc_strbuf_append_char(&sb, ' ');
    if (targets[i].quote) {
      s = mlcc_depfile_escape(targets[i].text, &sb);
    } else if (strpbrk(targets[i].text, "\n\r") != NULL) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                           "cannot write a depfile: target '%s' contains a newline",
                           targets[i].text);
    } else {
      mlcc_strbuf_append(&sb, targets[i].text);
    }
  }
  mlcc_strbuf_append_char(&sb, ':');
  size_t n_listed = 0;
  for (size_t i = 0; s == NULL && i < n_deps; ++i) {
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = strcmp(deps[i], deps[j]) == 0;
    if (seen) continue;
    mlcc_strbuf_append(&sb, n_listed++ == 0 ? " " : " \\\n  ");
    s = mlcc_depfile_escape(deps[i], &sb);
  }
  mlcc_strbuf_append_char(&sb, '\n');
  for (size_t i = 1; phony && s == NULL && i < n_deps; ++i) {
    bool seen = strcmp(deps[i], deps[0]) == 0;
    for (size_t j = 1; j < i && !seen; ++j) seen = strcmp(deps[i], deps[j]) == 0;
    if (seen) continue;
    s = mlcc_depfile_escape(deps[i], &sb);
    mlcc_strbuf_append(&sb, ":\n");
  }
  if (s == NULL) s = mlcc_strbuf_status(&sb);
  if (s != NULL) {
    mlcc_strbuf_deinit(&sb);
    return s;
  }
  *out_text = mlcc_strbuf_take(&sb);
  return *out_text ? mlcc_ok_status()
                   : mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

mlcc_status_t mlcc_depfile_render(const char* target, const char* const* deps, size_t n_deps,
                                  char** out_text) {
  mlcc_depfile_target_t t = {target, true};
  return mlcc_depfile_render_rule(&t, 1, deps, n_deps, false, out_text);
}

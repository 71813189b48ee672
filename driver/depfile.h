// SPDX-License-Identifier: Apache-2.0
// Make-syntax dependency files (-MD -MF) for CMake's DEPFILE, Ninja and
// Bazel. Thread-safe (no shared state).
//
// Format (what gcc -MD writes, which Make and Ninja both read): the targets
// (-MT/-MQ, else the output) separated by spaces, a colon, then the deps
// separated by a backslash-newline and two spaces; with -MP, an empty rule
// "DEP:" for each dep but the first (the model), as gcc's -MP does for each
// header. Escaping follows gcc: a space or tab becomes "\ " (with
// backslashes right before it doubled), '#' becomes "\#", '$' becomes "$$".
// A newline cannot be expressed in Make syntax and is an error. -MT targets
// are written as given (gcc: the user quoted them); -MQ and default targets
// are escaped.
#ifndef MLCC_DRIVER_DEPFILE_H_
#define MLCC_DRIVER_DEPFILE_H_

#include <stdbool.h>
#include <stddef.h>

#include "driver/strbuf.h"
#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Appends |path| escaped for Make to |sb|. INVALID_ARGUMENT naming the path
// if it contains a newline or carriage return.
mlcc_status_t mlcc_depfile_escape(const char* path, mlcc_strbuf_t* sb);

// One target of the rule: |text| escaped when |quote| (-MQ, the default
// output), as given otherwise (-MT).
typedef struct mlcc_depfile_target_t {
  const char* text;
  bool quote;
} mlcc_depfile_target_t;

// Renders the depfile text for |targets[0..n_targets)| (n_targets >= 1, in
// command-line order; written in gcc's order: the -MQ targets in order,
// then each -MT target takes the place of the first -MQ one, which moves to
// the end; at most 256)
// depending on |deps[0..n_deps)| into a malloc'ed NUL-terminated string
// |*out_text| the caller frees. Duplicate deps are listed once, in
// first-seen order. |phony| adds "DEP:" for every dep after the first (-MP).
// INVALID_ARGUMENT naming a path with a newline.
mlcc_status_t mlcc_depfile_render_rule(const mlcc_depfile_target_t* targets, size_t n_targets,
                                       const char* const* deps, size_t n_deps, bool phony,
                                       char** out_text);

// mlcc_depfile_render_rule for the one quoted |target|, no phony rules.
mlcc_status_t mlcc_depfile_render(const char* target, const char* const* deps, size_t n_deps,
                                  char** out_text);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_DEPFILE_H_

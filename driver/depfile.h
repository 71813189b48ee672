// SPDX-License-Identifier: Apache-2.0
// Make-syntax dependency files (-MD -MF) for CMake's DEPFILE, Ninja and
// Bazel. Thread-safe (no shared state).
//
// Format (what gcc -MD writes, which Make and Ninja both read): the target,
// a colon, then the deps separated by a backslash-newline and two spaces.
// Escaping follows gcc: a space or tab becomes "\ " (with backslashes right
// before it doubled), '#' becomes "\#", '$' becomes "$$". A newline cannot
// be expressed in Make syntax and is an error.
#ifndef MLCC_DRIVER_DEPFILE_H_
#define MLCC_DRIVER_DEPFILE_H_

#include <stddef.h>

#include "driver/strbuf.h"
#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Appends |path| escaped for Make to |sb|. INVALID_ARGUMENT naming the path
// if it contains a newline or carriage return.
mlcc_status_t mlcc_depfile_escape(const char* path, mlcc_strbuf_t* sb);

// Renders the depfile text for |target| depending on |deps[0..n_deps)| into
// a malloc'ed NUL-terminated string |*out_text| the caller frees. Duplicate
// deps are listed once, in first-seen order.
mlcc_status_t mlcc_depfile_render(const char* target, const char* const* deps, size_t n_deps,
                                  char** out_text);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_DEPFILE_H_

// SPDX-License-Identifier: Apache-2.0
// The archiver step: which tool builds libNAME.a and its command line.
// Thread-safe (reads the environment only).
#ifndef MLCC_DRIVER_ARCHIVE_H_
#define MLCC_DRIVER_ARCHIVE_H_

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// The archiver to run: $MLCC_AR if set and non-empty (used as given), else
// the first of llvm-ar-16, llvm-ar found in $PATH (as a full path), else
// "llvm-ar-16" (running it will then report NOT_FOUND). Malloc'ed; NULL on OOM.
char* mlcc_archive_tool(void);

// The archiver's argv for |archive| from |members| (|n_members| object
// paths, in this order): `<tool> rcsD <archive> <members...>` where D makes
// the archive deterministic (zero timestamps, uids, modes). Returns a
// malloc'ed NULL-terminated array whose strings are borrowed from the
// arguments; NULL on OOM.
const char** mlcc_archive_argv(const char* tool, const char* archive,
                               const char* const* members, size_t n_members);

// The linker that joins the objects of `-c` into one relocatable object:
// $MLCC_LD if set and non-empty (used as given), else the first of
// ld.lld-16, ld.lld found in $PATH (as a full path; lld handles every mlcc
// target), else the bare name "ld.lld-16": the driver then compiles -c as one
// whole module without the kernel cache. Malloc'ed; NULL on OOM.
char* mlcc_archive_linker(void);

// The linker's argv for the relocatable |object| from |members| (in this
// order): `<tool> -r -o <object> <members...>`. lld's output depends only on
// its inputs. Malloc'ed NULL-terminated array of borrowed strings; NULL on OOM.
const char** mlcc_archive_link_argv(const char* tool, const char* object,
                                    const char* const* members, size_t n_members);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_ARCHIVE_H_

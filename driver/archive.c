// SPDX-License-Identifier: Apache-2.0
#include "driver/archive.h"

#include <stdlib.h>
#include <string.h>

#include "driver/jobs.h"

char* mlcc_archive_tool(void) {
  const char* env = getenv("MLCC_AR");
  if (env != NULL && env[0] != '\0') return strdup(env);
  static const char* const kCandidates[] = {"llvm-ar-16", "llvm-ar"};
  for (size_t i = 0; i < sizeof(kCandidates) / sizeof(kCandidates[0]); ++i) {
    char* found = mlcc_job_find_program(kCandidates[i]);
    if (found != NULL) return found;
  }
  return strdup("llvm-ar-16");
}

const char** mlcc_archive_argv(const char* tool, const char* archive,
                               const char* const* members, size_t n_members) {
  const char** argv = (const char**)calloc(n_members + 4, sizeof(char*));
  if (argv == NULL) return NULL;
  argv[0] = tool;
  argv[1] = "rcsD";
  argv[2] = archive;
  for (size_t i = 0; i < n_members; ++i) argv[3 + i] = members[i];
  argv[3 + n_members] = NULL;
  return argv;
}

char* mlcc_archive_linker(void) {
  const char* env = getenv("MLCC_LD");
  if (env != NULL && env[0] != '\0') return strdup(env);
  static const char* const kCandidates[] = {"ld.lld-16", "ld.lld"};
  for (size_t i = 0; i < sizeof(kCandidates) / sizeof(kCandidates[0]); ++i) {
    char* found = mlcc_job_find_program(kCandidates[i]);
    if (found != NULL) return found;
  }
  return strdup("ld.lld-16");
}

const char** mlcc_archive_link_argv(const char* tool, const char* object,
                                    const char* const* members, size_t n_members) {
  const char** argv = (const char**)calloc(n_members + 7, sizeof(char*));
  if (argv == NULL) return NULL;
  size_t n = 0;
  argv[n++] = tool;
  argv[n++] = "-r";
  argv[n++] = "-o";
  argv[n++] = object;
  for (size_t i = 0; i < n_members; ++i) argv[n++] = members[i];
  argv[n] = NULL;
  return argv;
}

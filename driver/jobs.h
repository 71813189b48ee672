// SPDX-License-Identifier: Apache-2.0
// Jobs: the steps of one compilation as command lines. External tools (the
// archiver) are real commands run with posix_spawn (never system()); the
// in-process steps (import, optimize, codegen, header, depfile) are shown as
// pseudo commands `"mlcc" "-cc1" "<step>" ...` so that -### and -v describe
// every step the way clang does. Thread-compatible.
#ifndef MLCC_DRIVER_JOBS_H_
#define MLCC_DRIVER_JOBS_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "driver/strbuf.h"
#include "ir/base/arena.h"
#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mlcc_job_kind_e {
  MLCC_JOB_IMPORT = 0,      // read the model into a graph, verify it
  MLCC_JOB_OPTIMIZE,        // run the pass pipeline
  MLCC_JOB_EMIT_GRAPH,      // --emit=ir / dot
  MLCC_JOB_CODEGEN_WHOLE,   // -c without a linker: one module
  MLCC_JOB_CODEGEN_WEIGHTS, // NAME_weights.o
  MLCC_JOB_CODEGEN_KERNELS, // one object per distinct kernel key
  MLCC_JOB_CODEGEN_ENTRY,   // NAME_entry.o
  MLCC_JOB_ARCHIVE,         // external: llvm-ar rcsD
  MLCC_JOB_JOIN,            // -S / --emit=ll|asm: the parts joined into one text
  MLCC_JOB_HEADER,          // NAME.h
  MLCC_JOB_DEPFILE,         // -MD
  MLCC_JOB_KIND_COUNT
} mlcc_job_kind_t;

// "import", "optimize", ... (the pseudo command's step word).
const char* mlcc_job_kind_name(mlcc_job_kind_t kind);

typedef struct mlcc_job_t {
  mlcc_job_kind_t kind;
  bool external;        // argv[0] is a program to spawn
  uint32_t argc;
  const char** argv;    // argc entries + NULL; arena-owned
} mlcc_job_t;

typedef struct mlcc_job_list_t {
  mlcc_arena_t* arena;  // borrowed; owns argv arrays and strings
  uint32_t n_jobs, cap;
  mlcc_job_t* jobs;     // arena-owned
} mlcc_job_list_t;

void mlcc_job_list_init(mlcc_job_list_t* list, mlcc_arena_t* arena);

// Appends a job whose argv is copied (strings too) into the arena from the
// NULL-terminated |argv|. RESOURCE_EXHAUSTED on OOM.
mlcc_status_t mlcc_job_list_add(mlcc_job_list_t* list, mlcc_job_kind_t kind, bool external,
                                const char* const* argv);

// Appends |arg| to |sb| in double quotes, escaping '"', '\\', '$' and '`'
// with a backslash (clang's -### quoting: paste-able into sh).
void mlcc_job_quote_arg(mlcc_strbuf_t* sb, const char* arg);

// Writes ` "arg0" "arg1" ...\n` to |out| (one job per line, like clang -###).
void mlcc_job_print_argv(FILE* out, const char* const* argv);

// Runs |argv| (argv[0] a path or a name searched in $PATH) with
// posix_spawn, inheriting stdio, and waits. NOT_FOUND if it cannot be
// started, IO naming the tool and its exit status if it fails.
mlcc_status_t mlcc_job_spawn(const char* const* argv);
// Same, with the child's working directory set to |dir| (NULL: inherited);
// argv[0] is resolved against $PATH and the current directory first.
mlcc_status_t mlcc_job_spawn_in(const char* const* argv, const char* dir);

// Finds |name| in $PATH (names with a '/' are returned as is if executable).
// Returns a malloc'ed path or NULL when not found.
char* mlcc_job_find_program(const char* name);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_JOBS_H_

// SPDX-License-Identifier: Apache-2.0
// One mlcc run over one model, clang style: the options are turned into a
// list of jobs (bind), which -### prints and a normal run executes in order
// (import -> optimize -> codegen -> package). The compilation owns the
// arena for jobs and strings, the graph, the private temporary directory
// and every staged output; destroying it removes whatever was not committed,
// so a failed run leaves nothing behind and existing outputs untouched.
// Thread-compatible (kernel codegen fans out to worker threads internally).
#ifndef MLCC_DRIVER_COMPILATION_H_
#define MLCC_DRIVER_COMPILATION_H_

#include <stdio.h>

#include "driver/options.h"
#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_compilation_t mlcc_compilation_t;

// Creates a compilation for |options| (borrowed; must outlive it) that
// reports progress (-v, -###) to |diag|. Resolves the name, target, output
// paths and pass pipeline: INVALID_ARGUMENT for bad combinations (no input,
// invalid --name, unknown --target or pass, ...). Writes nothing.
// Caller owns |*out_compilation| (also on failure when non-NULL).
mlcc_status_t mlcc_compilation_create(const mlcc_options_t* options, FILE* diag,
                                      mlcc_compilation_t** out_compilation);

// -###: prints the target and every job, one quoted command line each, to
// the diag stream. Runs and writes nothing.
mlcc_status_t mlcc_compilation_print_jobs(mlcc_compilation_t* compilation);

// Runs every job. Statuses about the model are annotated with the input
// path (outermost); packaging failures name the file. On failure no output
// is created or modified.
mlcc_status_t mlcc_compilation_execute(mlcc_compilation_t* compilation);

// Removes temporaries and uncommitted outputs, frees everything. NULL-safe.
void mlcc_compilation_destroy(mlcc_compilation_t* compilation);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_COMPILATION_H_

// SPDX-License-Identifier: Apache-2.0
// mlcc_driver_main: options -> compilation (bind jobs) -> -### or execute,
// and the mapping of statuses to messages and exit codes.
#include "driver/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/build_id.h"
#include "driver/cache.h"
#include "driver/cleanup.h"
#include "driver/compilation.h"
#include "driver/options.h"
#include "ir/base/status.h"
#include "targets/codegen/codegen.h"
#include "targets/target.h"

#ifndef MLCC_VERSION
#define MLCC_VERSION "0.1.0"
#endif

enum { kExitUsage = 2 };

// "mlcc: error: <message>" plus the --help hint; consumes |status|.
static int report_usage(mlcc_status_t status) {
  fprintf(stderr, "mlcc: error: %s\n", mlcc_status_message(status));
  fprintf(stderr, "Try 'mlcc --help' for more information.\n");
  mlcc_status_free(status);
  return kExitUsage;
}

// Prints a failed status the gcc way and returns its exit code; consumes it.
// Statuses annotated with the input path render as "model.onnx: ...: error:
// ..."; unannotated ones (files, tools) get the "mlcc: " prefix.
static int report(mlcc_status_t status) {
  if (mlcc_status_code(status) == MLCC_STATUS_INVALID_ARGUMENT) return report_usage(status);
  int code = mlcc_status_exit_code(status);
  char* text = mlcc_status_to_string(status);
  if (text == NULL) {
    fprintf(stderr, "mlcc: error: %s\n", mlcc_status_message(status));
  } else if (strncmp(text, "error: ", 7) == 0) {
    fprintf(stderr, "mlcc: %s\n", text);
  } else {
    fprintf(stderr, "%s\n", text);
  }
  free(text);
  if (code == 70) {
    fprintf(stderr,
            "mlcc: note: this is an internal compiler error; please report this bug with the "
            "model and the command line\n");
  }
  mlcc_status_free(status);
  return code;
}

static void print_version(FILE* out) {
  // The first four lines are a stable interface (release manifests parse them).
  fprintf(out, "mlcc version %s\n", MLCC_VERSION);
  fprintf(out, "commit: %s\n", mlcc_build_commit());
  fprintf(out, "codegen: %s\n", mlcc_build_codegen_hash());
  fprintf(out, "LLVM: %s\n", mlcc_codegen_llvm_version());
  mlcc_target_t host;
  mlcc_status_t s = mlcc_target_resolve(NULL, NULL, NULL, &host);
  if (s == NULL) fprintf(out, "Default target: %s\n", host.triple);
  mlcc_status_free(s);
  fprintf(out, "Registered targets:\n");
  mlcc_target_print_all(out);
  fprintf(out, "Codegen hash inputs: %s\n", mlcc_build_codegen_flags());
}

// --cache-clear (before compiling) or --cache-stats (after): the local
// kernel cache of --cache-dir / the environment (driver/cache.h).
static mlcc_status_t cache_command(const mlcc_options_t* o, bool clear) {
  uint64_t max_size = 0;
  MLCC_RETURN_IF_ERROR(mlcc_cache_resolve_max_size(o->cache_max_size, &max_size));
  char* dir = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_cache_resolve_dir(o->cache_dir, &dir));
  mlcc_status_t s;
  if (clear) {
    uint64_t removed = 0;
    s = mlcc_cache_clear(dir, &removed);
    if (s == NULL) {
      printf("Cleared the kernel cache %s (%llu entr%s removed)\n", dir,
             (unsigned long long)removed, removed == 1 ? "y" : "ies");
    }
  } else {
    s = mlcc_cache_print_stats(dir, max_size, stdout);
  }
  free(dir);
  if (fflush(stdout) != 0 && s == NULL) {
    s = mlcc_make_status(MLCC_STATUS_IO, "cannot write to standard output");
  }
  return s;
}

int mlcc_driver_main(int argc, char** argv) {
  mlcc_options_t options;
  mlcc_status_t s = mlcc_options_parse(argc, argv, &options);
  if (s != NULL) {
    mlcc_options_deinit(&options);
    return report_usage(s);
  }
  int code = 0;
  if (options.cache_clear && !options.print_jobs_only) {
    s = cache_command(&options, true);
    if (s != NULL) {
      mlcc_options_deinit(&options);
      return report(s);
    }
  }
  if (mlcc_options_info_only(&options)) {
    if (options.cache_stats) {
      s = cache_command(&options, false);
      if (s != NULL) code = report(s);
    }
    if (options.help) mlcc_options_print_help(stdout);
    if (options.version || (options.verbose && options.input == NULL)) print_version(stdout);
    if (options.print_targets) mlcc_target_print_all(stdout);
    mlcc_options_deinit(&options);
    return fflush(stdout) == 0 ? code : 1;
  }
  if (options.input == NULL) {
    mlcc_options_deinit(&options);
    return report_usage(mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "no input model"));
  }
  mlcc_cleanup_install();
  mlcc_compilation_t* compilation = NULL;
  s = mlcc_compilation_create(&options, stderr, &compilation);
  if (s == NULL) {
    s = options.print_jobs_only ? mlcc_compilation_print_jobs(compilation)
                                : mlcc_compilation_execute(compilation);
  }
  mlcc_compilation_destroy(compilation);
  if (s != NULL) code = report(s);
  if (s == NULL && options.cache_stats && !options.print_jobs_only) {
    s = cache_command(&options, false);
    if (s != NULL) code = report(s);
  }
  mlcc_options_deinit(&options);
  return code;
}

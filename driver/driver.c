// SPDX-License-Identifier: Apache-2.0
// mlcc_driver_main: options -> compilation (bind jobs) -> -### or execute,
// and the mapping of statuses to messages and exit codes.
#include "driver/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  fprintf(out, "mlcc version %s\n", MLCC_VERSION);
  fprintf(out, "LLVM %s\n", mlcc_codegen_llvm_version());
  mlcc_target_t host;
  mlcc_status_t s = mlcc_target_resolve(NULL, NULL, NULL, &host);
  if (s == NULL) fprintf(out, "Default target: %s\n", host.triple);
  mlcc_status_free(s);
  fprintf(out, "Registered targets:\n");
  mlcc_target_print_all(out);
}

// Notes for the cache flags, which are accepted until the cache lands.
static void note_cache_flags(const mlcc_options_t* o) {
  if (o->cache_stats) {
    fprintf(stderr, "mlcc: note: the kernel cache is not implemented yet; no statistics\n");
  }
  if (o->cache_clear) {
    fprintf(stderr, "mlcc: note: the kernel cache is not implemented yet; nothing to clear\n");
  }
  if (o->verbose && (o->cache_dir || o->no_cache || o->explain_cache)) {
    fprintf(stderr, "mlcc: note: the kernel cache is not implemented yet; cache options are "
                    "ignored\n");
  }
}

int mlcc_driver_main(int argc, char** argv) {
  mlcc_options_t options;
  mlcc_status_t s = mlcc_options_parse(argc, argv, &options);
  if (s != NULL) {
    mlcc_options_deinit(&options);
    return report_usage(s);
  }
  int code = 0;
  note_cache_flags(&options);
  if (mlcc_options_info_only(&options)) {
    if (options.help) mlcc_options_print_help(stdout);
    if (options.version || (options.verbose && options.input == NULL)) print_version(stdout);
    if (options.print_targets) mlcc_target_print_all(stdout);
    mlcc_options_deinit(&options);
    return fflush(stdout) == 0 ? 0 : 1;
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
  mlcc_options_deinit(&options);
  return code;
}

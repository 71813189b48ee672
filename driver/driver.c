// SPDX-License-Identifier: Apache-2.0
// mlcc_driver_main: options -> compilation (bind jobs) -> -### or execute,
// and the mapping of statuses to messages and exit codes.
#include "driver/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/build_id.h"
#include "driver/cache.h"
#include "driver/tune.h"
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

// The cache commands, in the order they run: --set-config, -z and
// --cache-clear before compiling; --cleanup, --show-config, --cache-stats
// and --print-stats after it. They act on the local kernel cache of
// --cache-dir / the environment (driver/cache.h).
typedef enum cache_phase_e { CACHE_BEFORE = 0, CACHE_AFTER } cache_phase_t;

static bool has_cache_command(const mlcc_options_t* o, cache_phase_t phase) {
  if (phase == CACHE_BEFORE) return o->n_set_config != 0 || o->zero_stats || o->cache_clear;
  return o->cache_cleanup || o->show_config || o->cache_stats || o->print_stats;
}

static mlcc_status_t cache_command(const mlcc_options_t* o, cache_phase_t phase) {
  if (!has_cache_command(o, phase)) return mlcc_ok_status();
  char* dir = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_cache_resolve_dir(o->cache_dir, &dir));
  mlcc_status_t s = mlcc_ok_status();
  if (phase == CACHE_BEFORE) {
    for (uint32_t i = 0; i < o->n_set_config && s == NULL; ++i) {
      s = mlcc_cache_config_set(dir, o->set_config[i], stdout);
    }
    if (s == NULL && o->zero_stats) {
      s = mlcc_cache_zero_stats(dir);
      if (s == NULL) printf("Statistics zeroed\n");
    }
    if (s == NULL && o->cache_clear) {
      uint64_t removed = 0;
      s = mlcc_cache_clear(dir, &removed);
      if (s == NULL) {
        printf("Cleared the kernel cache %s (%llu entr%s removed)\n", dir,
               (unsigned long long)removed, removed == 1 ? "y" : "ies");
        // Tuning records (driver/tune.h) are measurements, also cleared.
        uint64_t records = mlcc_tune_cache_clear(dir);
        if (records != 0) {
          printf("Cleared %llu tuning record file%s\n", (unsigned long long)records,
                 records == 1 ? "" : "s");
        }
      }
    }
  } else {
    mlcc_cache_config_t config;
    s = mlcc_cache_config_load(dir, o->cache_max_size, stderr, &config);
    if (s == NULL && o->cache_cleanup) {
      uint64_t evicted = 0, temporaries = 0;
      s = mlcc_cache_cleanup(dir, config.max_size, &evicted, &temporaries);
      mlcc_cache_usage_t u;
      if (s == NULL) s = mlcc_cache_scan(dir, &u);
      if (s == NULL) {
        char size[32], limit[32];
        mlcc_cache_format_size(u.bytes, size, sizeof(size));
        if (config.max_size != 0) {
          mlcc_cache_format_size(config.max_size, limit, sizeof(limit));
        } else {
          snprintf(limit, sizeof(limit), "unlimited");
        }
        printf("Cleaned up the kernel cache %s: %llu entr%s evicted, %llu temporar%s removed; "
               "%llu entr%s, %s / %s\n",
               dir, (unsigned long long)evicted, evicted == 1 ? "y" : "ies",
               (unsigned long long)temporaries, temporaries == 1 ? "y" : "ies",
               (unsigned long long)u.entries, u.entries == 1 ? "y" : "ies", size, limit);
      }
    }
    if (s == NULL && o->show_config) mlcc_cache_config_print(&config, dir, stdout);
    if (s == NULL && o->cache_stats) {
      s = mlcc_cache_print_stats(dir, config.max_size, stdout);
      uint64_t records = 0, bytes = 0;
      mlcc_tune_cache_count(dir, &records, &bytes);
      if (s == NULL && records != 0) {
        printf("Tuning records:     %llu files (%llu bytes)\n", (unsigned long long)records,
               (unsigned long long)bytes);
      }
    }
    if (s == NULL && o->print_stats) {
      s = mlcc_cache_print_stats_tsv(dir, config.max_size, stdout);
    }
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
  if (!options.print_jobs_only) {
    s = cache_command(&options, CACHE_BEFORE);
    if (s != NULL) {
      mlcc_options_deinit(&options);
      return report(s);
    }
  }
  if (mlcc_options_info_only(&options)) {
    s = cache_command(&options, CACHE_AFTER);
    if (s != NULL) code = report(s);
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
  if (s == NULL && !options.print_jobs_only) {
    s = cache_command(&options, CACHE_AFTER);
    if (s != NULL) code = report(s);
  }
  mlcc_options_deinit(&options);
  return code;
}

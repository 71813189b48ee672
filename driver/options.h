// SPDX-License-Identifier: Apache-2.0
// Command-line parsing for mlcc, driven by the one table in options.def.
// gcc/clang conventions: "-oFILE"/"-o FILE", "--name=X"/"--name X", last
// -c/-S/--emit wins, unknown flags are usage errors with a "did you mean".
// Thread-compatible.
#ifndef MLCC_DRIVER_OPTIONS_H_
#define MLCC_DRIVER_OPTIONS_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/base/arena.h"
#include "ir/base/status.h"
#include "ir/onnx/onnx_import.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mlcc_option_id_e {
#define MLCC_OPTION(id, spelling, kind, metavar, help) MLCC_OPT_##id,
#include "driver/options.def"
#undef MLCC_OPTION
  MLCC_OPT_COUNT
} mlcc_option_id_t;

// What the run produces (--emit=KIND, -c, -S).
typedef enum mlcc_emit_kind_e {
  MLCC_EMIT_LIB = 0,  // libNAME.a + NAME.h (default)
  MLCC_EMIT_OBJ,      // one relocatable object (-c)
  MLCC_EMIT_LL,       // LLVM IR text (-S)
  MLCC_EMIT_ASM,      // target assembly
  MLCC_EMIT_IR,       // the graph after passes, mlcc text IR
  MLCC_EMIT_DOT,      // the graph after passes, Graphviz
  MLCC_EMIT_HEADER,   // only NAME.h
  MLCC_EMIT_KIND_COUNT
} mlcc_emit_kind_t;

// "lib", "obj", ... (the --emit spelling).
const char* mlcc_emit_kind_name(mlcc_emit_kind_t kind);

#define MLCC_OPTIONS_MAX_SET_CONFIG 16
// One -MT or -MQ target of the depfile, in command-line order.
typedef struct mlcc_dep_target_t {
  const char* text;  // borrowed from argv
  bool quote;        // -MQ: escape for Make; -MT: written as given
} mlcc_dep_target_t;

typedef struct mlcc_options_t {
  mlcc_arena_t arena;             // owns input_shapes and their names
  const char* input;              // the model path (borrowed from argv); NULL if none
  const char* output;             // -o; NULL = the kind's default
  mlcc_emit_kind_t emit;
  const char* name;               // --name; NULL = derived from the input
  const char* target;             // --target; NULL = host
  const char* cpu;                // -mcpu=; NULL = target default
  const char* features;           // -mattr=; NULL = target default
  int opt_level;                  // 0..3, default 2
  mlcc_input_shape_t* input_shapes;  // arena-owned, n_input_shapes entries
  uint32_t n_input_shapes;
  mlcc_input_value_t* input_values;  // --input-value, arena-owned; files not yet read
  uint32_t n_input_values;
  bool write_depfile;             // -MD, -MMD (or -MF)
  const char* depfile;            // -MF; NULL = output with its suffix replaced by .d
  const char* describe;           // --describe; NULL = no description (driver/describe.h)
  mlcc_dep_target_t* dep_targets;  // -MT/-MQ, arena-owned; none = the output (quoted)
  uint32_t n_dep_targets;
  bool dep_phony;                 // -MP
  int jobs;                       // -j; default: online CPUs
  const char* passes;             // --passes; NULL = the -O pipeline
  bool print_after_all;
  bool verify_each;
  bool time_report;  // -ftime-report
  bool no_winograd;  // -fno-winograd (the last of -fwinograd/-fno-winograd wins)
  bool winograd_given;  // either flag was given (bare-metal targets default to -fno-winograd)
  bool profile;                   // --profile: per-kernel timing in the entry
  bool dot_all_constants;         // --dot-all-constants (--emit=dot)
  const char* weights_section;    // --weights-section; NULL = .rodata.mlcc_weights
  const char* cache_dir;          // --cache-dir; NULL = $MLCC_CACHE_DIR, ... (driver/cache.h)
  const char* cache_max_size;     // --cache-max-size text; NULL = $MLCC_CACHE_MAXSIZE or 5G
  const char* remote_cache;       // --remote-cache; NULL = $MLCC_REMOTE_CACHE
  bool remote_cache_readonly;     // --remote-cache-readonly
  const char* remote_cache_key;   // --remote-cache-key; NULL = $MLCC_REMOTE_CACHE_KEY
  bool no_cache, cache_stats, cache_clear, explain_cache;
  // Tuning (driver/tune.h, docs/tuning.md).
  bool tune;                      // --tune
  int tune_trials;                // --tune-trials; 0 = the default
  double tune_time;               // --tune-time seconds; 0 = the default
  const char* tune_runner;        // --tune-runner; NULL = run directly
  const char* tuning_records;     // --tuning-records FILE; NULL = the cache's records only
  bool no_tuning_records;         // --no-tuning-records
  bool remote_tuning_records;     // --remote-tuning-records
  // Cache administration (driver/cache.h): --print-stats, -z, --cleanup,
  // --show-config, and the --set-config assignments in command-line order.
  bool print_stats, zero_stats, cache_cleanup, show_config;
  const char* set_config[MLCC_OPTIONS_MAX_SET_CONFIG];
  uint32_t n_set_config;
  bool print_jobs_only;           // -###
  bool verbose;                   // -v
  bool version, help, print_targets;
} mlcc_options_t;

// Parses |argv[1..argc)| into |out_options| (initialized here; release with
// mlcc_options_deinit even on failure). Strings are borrowed from |argv|,
// which must outlive the options. Returns INVALID_ARGUMENT whose message
// names the offending argument (and suggests the nearest spelling for an
// unknown option); the caller prints "mlcc: error: <message>".
// Does not require an input: see mlcc_options_need_input.
mlcc_status_t mlcc_options_parse(int argc, char** argv, mlcc_options_t* out_options);

void mlcc_options_deinit(mlcc_options_t* options);

// True if the options ask for no compilation (--version, --help,
// --print-targets, cache commands such as --cache-stats alone), so a missing
// input is fine.
bool mlcc_options_info_only(const mlcc_options_t* options);

// Parses one --input-value argument, NAME=V1,V2,... or NAME=@FILE (split at
// the first "=@", else at the last '='; "NAME=" is an empty list). Numbers
// are decimal integers or C floating-point literals (nan, inf allowed), at
// most 1<<20 of them. Fills name/origin/file/numbers of |*out|, strings and
// arrays in |arena|; INVALID_ARGUMENT naming the bad item.
mlcc_status_t mlcc_options_parse_input_value(const char* text, mlcc_arena_t* arena,
                                             mlcc_input_value_t* out);

// Parses "NAME=1x3x224x224" into |out_pin| (name copied into |arena|).
// INVALID_ARGUMENT names the text and what is wrong.
mlcc_status_t mlcc_options_parse_input_shape(const char* text, mlcc_arena_t* arena,
                                             mlcc_input_shape_t* out_pin);

// The closest spelling for an unknown option |arg| ("--emitt=ll" ->
// "--emit=ll") into |buf|; false when nothing is close enough.
bool mlcc_options_suggest(const char* arg, char* buf, size_t buf_size);

// Writes the --help text (generated from options.def) to |out|.
void mlcc_options_print_help(FILE* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_OPTIONS_H_

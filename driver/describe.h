// SPDX-License-Identifier: Apache-2.0
// The variant description (`mlcc --describe=FILE`, docs/bundle.md): one JSON
// file per compiled library that states everything a release manifest
// records about it, so CMake's ml_model_bundle() and Bazel's ml_model_fleet
// copy these facts instead of parsing headers. Thread-safe (no shared state).
//
// The text is a pure function of its inputs (no timestamps, no absolute
// paths): byte-identical for the same model, options and outputs.
#ifndef MLCC_DRIVER_DESCRIBE_H_
#define MLCC_DRIVER_DESCRIBE_H_

#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// The `format` of the description and of the bundle manifest built from it
// (docs/bundle.md); bumped on any change of their keys or meaning. Format 2
// added the RAM and flash figures (weights_size, code_size, ram_size,
// flash_size).
#define MLCC_DESCRIBE_FORMAT 2

// The entry ABI of the generated code (LINKED: entry-abi-v3,
// docs/generated-api.md); the header guards on MLCC_MODEL_INFO_ABI_V3.
#define MLCC_ENTRY_ABI_VERSION 3

// What the description states besides the graph. Strings are borrowed.
typedef struct mlcc_describe_info_t {
  const char* name;              // the C symbol prefix (--name)
  const char* model_file;        // the model's file name, no directory
  const char* model_sha256;      // 64 hex digits
  uint64_t model_size;           // bytes of the model file
  const mlcc_target_t* target;   // resolved alias, triple, CPU, features
  int opt_level;                 // 0..3
  const char* const* options;    // the other options that change code, as
  uint32_t n_options;            //   given on the command line, in order
  const char* library_sha256;    // 64 hex digits of the library (or object)
  const char* header_sha256;     // 64 hex digits of NAME.h
  // The budgets `mlcc -v` prints (docs/mcu.md "Weights, RAM and flash"), in
  // bytes: NAME_WEIGHTS_SIZE; the code of the library's (or object's)
  // sections; RAM = workspace + NAME_STACK_SIZE + static data (.data and
  // .bss); flash = code + read-only data (weights included) + .data.
  uint64_t weights_size;
  uint64_t code_size;
  uint64_t ram_size;
  uint64_t flash_size;
  // SHA-256 of the tuning records the build applied (mlcc_tune_records_digest,
  // docs/tuning.md): a "tuning_records_sha256" key after "header_sha256";
  // NULL or "": no key (no record applied).
  const char* tuning_records_sha256;
} mlcc_describe_info_t;

// Renders the description of |graph| (after the passes: inputs/outputs with
// inferred dtypes and shapes, workspace size/alignment, stack size) and
// |info| (with the RAM and flash figures after stack_size) into a
// malloc'ed, NUL-terminated JSON text (*out_text; the caller frees it):
//
//   {
//     "format": 2,
//     "model": {"name": ..., "file": ..., "sha256": ..., "size": N},
//     "target": {
//       "alias": ..., "triple": ..., ... one key per line, 4 spaces ...
//     }
//   }
//
// The "target" object's lines sit between the line `  "target": {` and the
// line `  }`, so bundlers can copy them verbatim. INTERNAL if an input or
// output has no inferred shape; RESOURCE_EXHAUSTED on OOM.
mlcc_status_t mlcc_describe_render(const mlcc_graph_t* graph, const mlcc_describe_info_t* info,
                                   char** out_text);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_DESCRIBE_H_

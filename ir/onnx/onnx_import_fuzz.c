// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the ONNX importer (protobuf decoding, tensor decoding,
// external data resolution, op resolution, topological sort) and the IR
// verifier over arbitrary bytes. Built only with -DMLCC_FUZZ=ON and clang
// (CMakePresets.json preset `fuzz`); run by scripts/fuzz.sh.
//
// Contract checked: every input returns (no crash, no sanitizer report, no
// leak, no hang); neither the importer nor the verifier run after it (as in
// the driver) returns INTERNAL.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "ir/onnx/onnx_import.h"
#include "ir/onnx/onnx_import_impl.h"
#include "ir/verify.h"

// External data is resolved next to this (non-existent) path, so a fuzzed
// model can never read files of the machine running the fuzzer.
static const char kModelPath[] = "/nonexistent-mlcc-fuzz/model.onnx";

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mlcc_onnx_import_options_t opts = {0};
  opts.max_file_bytes = 1u << 20;
  mlcc_graph_t* graph = NULL;
  mlcc_status_t s = mlcc_onnx_import_bytes(kModelPath, data, size, &opts, &graph);
  if (s == NULL) {
    if (graph == NULL) {
      fprintf(stderr, "importer returned OK and no graph\n");
      abort();
    }
    // The driver verifies after import (arity is checked there, not by the
    // importer): a verifier error is a clean rejection, INTERNAL is a bug.
    s = mlcc_graph_verify(graph, false);
    if (s != NULL && mlcc_status_code(s) == MLCC_STATUS_INTERNAL) {
      char* text = mlcc_status_to_string(s);
      fprintf(stderr, "verifier returned INTERNAL: %s\n", text ? text : "?");
      abort();
    }
  } else {
    mlcc_status_code_t code = mlcc_status_code(s);
    if (code == MLCC_STATUS_INTERNAL) {
      char* text = mlcc_status_to_string(s);
      fprintf(stderr, "importer returned %s for a bad model: %s\n",
              mlcc_status_code_name(code), text ? text : "?");
      abort();
    }
    char* text = mlcc_status_to_string(s);  // exercises the renderer
    free(text);
  }
  if (s != NULL && getenv("MLCC_FUZZ_VERBOSE") != NULL) {  // for reproducing
    char* text = mlcc_status_to_string(s);
    fprintf(stderr, "%s\n", text ? text : "?");
    free(text);
  }
  mlcc_status_free(s);
  mlcc_graph_destroy(graph);
  return 0;
}

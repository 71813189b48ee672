// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the whole compile path of small models, in process:
// import -> verify -> passes (infer-shapes, remove-identity, fold-batchnorm,
// dce, fuse, plan-memory; JIT constant folding off: one LLVM JIT per input
// is far too slow to fuzz) -> verify with shapes -> kernel cache keys ->
// header -> LLVM IR of the first kernel and of the entry function at -O0
// (only for graphs with at most kMaxCodegenNodes nodes, since LLVM code
// generation per input is slow). Set MLCC_FUZZ_NO_CODEGEN=1 to stop after
// the header. Built only with -DMLCC_FUZZ=ON and clang; run by scripts/fuzz.sh.
//
// Contract checked: no crash, no sanitizer report, no leak, never INTERNAL.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/header.h"
#include "ir/base/status.h"
#include "ir/graph.h"
#include "ir/onnx/onnx_import.h"
#include "ir/onnx/onnx_import_impl.h"
#include "ir/verify.h"
#include "passes/pass.h"
#include "targets/codegen/codegen.h"
#include "targets/target.h"

static const char kModelPath[] = "/nonexistent-mlcc-fuzz/model.onnx";
enum { kMaxCodegenNodes = 4 };

static mlcc_target_t g_target;
static int g_codegen = 1;

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  mlcc_status_t s = mlcc_target_resolve("x86", NULL, NULL, &g_target);
  if (s != NULL) {
    char* text = mlcc_status_to_string(s);
    fprintf(stderr, "compile_fuzz: cannot resolve x86: %s\n", text ? text : "?");
    abort();
  }
  const char* env = getenv("MLCC_FUZZ_NO_CODEGEN");
  if (env != NULL && env[0] == '1') g_codegen = 0;
  return 0;
}

static void check(mlcc_status_t s, const char* stage) {
  if (s == NULL) return;
  if (mlcc_status_code(s) == MLCC_STATUS_INTERNAL) {
    char* text = mlcc_status_to_string(s);
    fprintf(stderr, "compile_fuzz: INTERNAL after %s: %s\n", stage, text ? text : "?");
    abort();
  }
}

static mlcc_status_t compile(mlcc_graph_t* graph) {
  static const mlcc_pass_id_t kPipeline[] = {
      MLCC_PASS_INFER_SHAPES, MLCC_PASS_REMOVE_IDENTITY, MLCC_PASS_FOLD_BATCHNORM,
      MLCC_PASS_DCE,          MLCC_PASS_FUSE,            MLCC_PASS_PLAN_MEMORY};
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opt_level = 2;
  ctx.target = &g_target;
  ctx.verify_each = true;
  ctx.fold_constants = false;
  MLCC_RETURN_IF_ERROR(mlcc_pass_run_pipeline(&ctx, graph, kPipeline,
                                              sizeof(kPipeline) / sizeof(kPipeline[0])));
  MLCC_RETURN_IF_ERROR(mlcc_graph_verify(graph, true));

  mlcc_codegen_options_t cg;
  memset(&cg, 0, sizeof(cg));
  cg.target = &g_target;
  cg.opt_level = 0;
  cg.name = "fuzz";
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    char key[65];
    MLCC_RETURN_IF_ERROR(mlcc_codegen_kernel_key(graph, k, &cg, key));
  }
  char* header = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_header_render(
      graph, "fuzz", "model.onnx",
      "0000000000000000000000000000000000000000000000000000000000000000", &header));
  free(header);
  if (!g_codegen || graph->n_nodes > kMaxCodegenNodes) return mlcc_ok_status();
  mlcc_buffer_t buf = {0};
  if (graph->n_kernels > 0) {
    mlcc_status_t s = mlcc_codegen_kernel(graph, 0, &cg, MLCC_OUTPUT_LL, &buf);
    mlcc_buffer_deinit(&buf);
    // An op the emitters cannot handle yet is UNIMPLEMENTED, fine here.
    MLCC_RETURN_IF_ERROR(s);
  }
  mlcc_buffer_t entry = {0};
  mlcc_status_t s = mlcc_codegen_entry(graph, &cg, MLCC_OUTPUT_LL, &entry);
  mlcc_buffer_deinit(&entry);
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mlcc_onnx_import_options_t opts = {0};
  opts.max_file_bytes = 1u << 20;
  mlcc_graph_t* graph = NULL;
  mlcc_status_t s = mlcc_onnx_import_bytes(kModelPath, data, size, &opts, &graph);
  check(s, "import");
  if (s == NULL) {
    s = mlcc_graph_verify(graph, false);
    check(s, "import verify");
  }
  if (s == NULL) {
    s = compile(graph);
    check(s, "compile");
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

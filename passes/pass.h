// SPDX-License-Identifier: Apache-2.0
// The pass manager and the pass signature. Thread-compatible.
#ifndef MLCC_PASSES_PASS_H_
#define MLCC_PASSES_PASS_H_

#include <stdbool.h>
#include <stdio.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  MLCC_PASSF_REWRITES = 1u << 0,     // may add/remove nodes
  MLCC_PASSF_NEEDS_TARGET = 1u << 1,
};

typedef enum mlcc_pass_id_e {
#define MLCC_PASS(id, cli, fn, flags, desc) MLCC_PASS_##id,
#include "passes/passes.def"
#undef MLCC_PASS
  MLCC_PASS_COUNT
} mlcc_pass_id_t;

typedef struct mlcc_pass_ctx_t {
  int opt_level;                 // 0..3 from -O
  const mlcc_target_t* target;   // NULL unless a pass has MLCC_PASSF_NEEDS_TARGET
  bool verify_each;              // run mlcc_graph_verify after each pass
  FILE* print_after_all;         // non-NULL: print the graph after each pass
  bool fold_constants;           // infer-shapes may fold (needs the host JIT)
  bool no_winograd;              // -fno-winograd: pack-weights never picks the
                                 // Winograd layout (smaller weights, direct kernels)
} mlcc_pass_ctx_t;

// Runs one pass over |graph| and sets |*out_changed| if anything was
// rewritten. On failure |graph| must still verify (build, then splice).
typedef mlcc_status_t (*mlcc_pass_fn_t)(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                        bool* out_changed);

#define MLCC_PASS(id, cli, fn, flags, desc) \
  mlcc_status_t fn(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph, bool* out_changed);
#include "passes/passes.def"
#undef MLCC_PASS

// Looks up a pass by its cli name; false if unknown.
bool mlcc_pass_lookup(const char* cli_name, mlcc_pass_id_t* out_id);
const char* mlcc_pass_name(mlcc_pass_id_t id);

// The default pipeline for -O|opt_level| into |out_ids| (capacity
// MLCC_PASS_COUNT*2); returns the count. infer-shapes, fuse and plan-memory
// are always present (the codegen needs them).
uint32_t mlcc_pass_default_pipeline(int opt_level, mlcc_pass_id_t* out_ids);

// Parses "a,b,c" (--passes=) into ids; INVALID_ARGUMENT naming an unknown
// pass. Required passes missing from the list are NOT added.
mlcc_status_t mlcc_pass_parse_pipeline(const char* text, mlcc_pass_id_t* out_ids,
                                       uint32_t cap, uint32_t* out_count);

// Runs |ids| in order; annotates failures with "pass '<name>'"; verifies after
// each pass when ctx->verify_each; prints after each when print_after_all.
mlcc_status_t mlcc_pass_run_pipeline(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                     const mlcc_pass_id_t* ids, uint32_t count);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_PASSES_PASS_H_

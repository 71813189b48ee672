// SPDX-License-Identifier: Apache-2.0
// Memory-plan statistics for reporting (the plan itself is the
// plan-memory pass in passes.def). Thread-compatible.
#ifndef MLCC_PASSES_PLAN_MEMORY_H_
#define MLCC_PASSES_PLAN_MEMORY_H_

#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Alignment of every workspace slot and of the workspace itself.
#define MLCC_WORKSPACE_ALIGN 64

// For a graph planned by plan-memory: |*out_naive_bytes| is the sum of the
// 64-byte rounded sizes of all values with a slot (what one buffer per value
// would need); |*out_peak_live_bytes| is the largest total size of slots live
// at one kernel, an in-place output (mlcc_kernel_t.inplace_input) counted
// from the kernel after its own since it shares its input's bytes (a lower
// bound for any plan with those in-place decisions; graph->workspace_size is
// the plan's actual size). Both are 0 for a graph without slots. Returns
// INVALID_ARGUMENT if the graph has no kernels but live nodes,
// RESOURCE_EXHAUSTED on OOM.
mlcc_status_t mlcc_pass_plan_memory_stats(const mlcc_graph_t* graph,
                                          int64_t* out_naive_bytes,
                                          int64_t* out_peak_live_bytes);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_PASSES_PLAN_MEMORY_H_

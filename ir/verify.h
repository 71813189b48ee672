// SPDX-License-Identifier: Apache-2.0
// Whole-graph verifier, run after import and after each pass. Thread-compatible.
#ifndef MLCC_IR_VERIFY_H_
#define MLCC_IR_VERIFY_H_

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Checks: nodes topologically ordered with every input defined earlier (an
// input, a constant, or an earlier node's output), one producer per value,
// arities within the op's range, inferred shapes/dtypes where
// |require_shapes|, outputs produced, kernels (if any) partition live nodes
// and respect the fused-chain rules. Collects up to 20 problems into one
// INVALID_MODEL (or INTERNAL after a pass) status.
mlcc_status_t mlcc_graph_verify(const mlcc_graph_t* graph, bool require_shapes);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_VERIFY_H_

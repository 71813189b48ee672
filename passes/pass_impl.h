// SPDX-License-Identifier: Apache-2.0
// Internals shared by the passes in passes/ (not a public API).
#ifndef MLCC_PASSES_PASS_IMPL_H_
#define MLCC_PASSES_PASS_IMPL_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Largest total output size (bytes) of a node that constant folding may
// materialize as new constant data.
#define MLCC_FOLD_MAX_BYTES ((int64_t)64 << 20)

// Tries to replace |node| by constants, in this order:
//  * Constant nodes: the value comes from the node's attribute;
//  * Shape / Size: computed from the input's static shape;
//  * Identity / Reshape / Flatten / Squeeze / Unsqueeze of a constant: the
//    output aliases the input's bytes (outputs must be inferred);
//  * otherwise, when |allow_eval| and every present input is CONSTANT and
//    the outputs total <= MLCC_FOLD_MAX_BYTES: mlcc_codegen_eval_node().
// Nodes writing a graph output are never folded (the entry function writes
// outputs). On success the outputs become CONSTANT values (producer NULL),
// |node| is marked dead and |*out_folded| is true. An UNIMPLEMENTED
// evaluation leaves the node untouched (not an error). Other failures are
// returned annotated with the node; the graph is unchanged in that case.
mlcc_status_t mlcc_pass_try_fold_node(mlcc_graph_t* graph, mlcc_node_t* node,
                                      bool allow_eval, bool* out_folded);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_PASSES_PASS_IMPL_H_

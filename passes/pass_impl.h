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
// Largest total of constant data folding may materialize over one
// compilation (a small model whose folded intermediates would fill memory is
// otherwise computed at run time, or refused if its shapes need the values).
#define MLCC_FOLD_MAX_TOTAL_BYTES ((int64_t)1 << 30)
// Largest estimated number of multiply-adds of one folded quadratic-cost node
// (DFT, STFT); bigger ones are computed at run time.
#define MLCC_FOLD_MAX_WORK ((int64_t)1 << 28)

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

// True for If, Loop and Scan: the ops that infer-shapes unrolls rather
// than infers (passes/lower_control_flow.c).
bool mlcc_pass_is_control_flow(mlcc_op_t op);

// Unrolls control-flow node graph->nodes[|index|] (ONNX If 1-17, Loop 1-17,
// Scan 8-17) into plain nodes, inferring them (and folding them, with the
// host JIT when |allow_eval|) as they are created, nested control flow
// included. The new nodes are placed right after |index| in topological
// order and the node is marked dead (its outputs are written by new nodes).
// Loop trip counts and conditions, Scan sequence lengths and the
// condition of an If whose branches differ in type must be compile-time
// constants: otherwise UNIMPLEMENTED naming the graph input they come from.
// Unrolling stops at 4096 iterations per Loop/Scan and 2^18 new nodes
// (UNIMPLEMENTED). On failure the new nodes are marked dead and the node is
// left as it was. Errors are annotated with the node's description.
mlcc_status_t mlcc_pass_lower_control_flow(mlcc_graph_t* graph, uint32_t index,
                                           bool allow_eval);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_PASSES_PASS_IMPL_H_

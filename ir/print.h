// SPDX-License-Identifier: Apache-2.0
// Stable textual IR (.mlccir) and Graphviz output. Thread-compatible.
#ifndef MLCC_IR_PRINT_H_
#define MLCC_IR_PRINT_H_

#include <stdio.h>

#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Prints |graph| as text: inputs, constants (name, dtype, shape; never data),
// nodes in order as `%out:f32[1,64,56,56] = Conv(%x, %w) {strides=[1,1]}`,
// kernels and workspace offsets when set, outputs. Deterministic.
void mlcc_graph_print(const mlcc_graph_t* graph, FILE* out);

// Prints a Graphviz digraph; each fused kernel with more than one node is a
// "cluster_k<N>" subgraph.
void mlcc_graph_print_dot(const mlcc_graph_t* graph, FILE* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_PRINT_H_

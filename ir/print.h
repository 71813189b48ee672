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

// How mlcc_graph_print_dot_with draws a graph.
typedef struct mlcc_dot_options_t {
  // true: every input and constant is a node of its own, edges carry the
  // value's name and type, node names are whole. false (--emit=dot's
  // default, readable for a 100-layer CNN): a node's constant inputs are one
  // "const f32[32,3,3,3] f32[32]" line of its label (at most 2 types, then
  // "+N"), only constants that are graph outputs are drawn, edges carry the
  // type only and node names longer than 40 bytes keep their last 37 after
  // "...".
  bool all_constants;
} mlcc_dot_options_t;

// Prints a Graphviz digraph; each fused kernel with more than one node is a
// "cluster_k<N>" subgraph. |options| NULL = all_constants.
void mlcc_graph_print_dot_with(const mlcc_graph_t* graph, FILE* out,
                               const mlcc_dot_options_t* options);
// mlcc_graph_print_dot_with with all_constants.
void mlcc_graph_print_dot(const mlcc_graph_t* graph, FILE* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_PRINT_H_

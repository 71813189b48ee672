// SPDX-License-Identifier: Apache-2.0
// Import-time upgrade of legacy-opset nodes (ONNX opsets 1-8 of the ops whose
// semantics changed later) into the modern form the shape inference and the
// emitters implement. Called by the ONNX importer once the graph is built.
// Thread-compatible (mutates one graph).
#ifndef MLCC_IR_ONNX_LEGACY_H_
#define MLCC_IR_ONNX_LEGACY_H_

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Rewrites, in place, every node of |graph| (topologically ordered, not yet
// inferred) whose opset carries legacy semantics, so that it computes the
// same result under the modern (numpy broadcasting) rules:
//
//  * Add, Sub, Mul, Div, Pow, Equal, Less, Greater, And, Or, Xor at opset
//    < 7 ("limited broadcast": B is matched against A's dims starting at
//    attribute |axis|, or as a suffix when |axis| is absent): when |axis|
//    leaves t > 0 trailing dims of A uncovered, B is routed through a new
//    Unsqueeze (opset 11) that appends t size-1 dims, so numpy's
//    right-aligned broadcast lines B up at |axis|. Attributes 'broadcast',
//    'axis' and 'consumed_inputs' are removed.
//  * PRelu at opset < 7: a 1-D slope of size C = X.dims[1] is per channel
//    (dim 1 of X), so it is unsqueezed to [C, 1, ...] for X of rank > 2.
//  * Gemm at opset < 7: 'broadcast' is removed (C broadcasts as in 7+).
//  * BatchNormalization at opset < 9: is_test must be nonzero (opsets 1, 6)
//    and spatial must be 1; both attributes (and consumed_inputs) are
//    removed, leaving the opset 9 inference form.
//  * Max, Min, Sum, Mean at opset < 8 require equal shapes, which numpy
//    broadcasting computes identically: only 'consumed_inputs' is removed.
//
// Nodes keep their model opset (messages name what the model says). The
// legacy rules need ranks of values the model computes; when a graph needs
// them, the nodes' own infer functions run once here on a scratch basis and
// every intermediate value is reset to "not inferred" afterwards, so the
// graph leaves this function in the same state as any freshly imported one.
//
// Errors (annotated with the node): INVALID_MODEL for an |axis| outside
// [0, rank(A) - rank(B)]; UNIMPLEMENTED for training-mode or non-spatial
// BatchNormalization, and when a rank the rewrite needs cannot be known at
// import (a value downstream of a shape computed at run time).
// RESOURCE_EXHAUSTED on OOM. On error the graph may be partly rewritten
// (the importer destroys it).
mlcc_status_t mlcc_onnx_upgrade_legacy(mlcc_graph_t* graph);

// The same rewrites for one node of a subgraph body (If branches, Loop and
// Scan bodies: ir/subgraph.h), which the importer keeps as templates and
// passes/lower_control_flow.c instantiates when the infer-shapes pass
// reaches the control-flow node. Call it on each instantiated |node| right
// after it is added to |graph| and before it is inferred; its inputs must
// already be inferred (they are: bodies are instantiated in topological
// order). A node without legacy semantics is left alone (*out_inserted
// NULL). When B or the slope must be unsqueezed, the new Unsqueeze node
// (already inferred) is placed just before |node| in graph->nodes and
// returned in |*out_inserted| so the caller can process it like its other
// new nodes. Errors as mlcc_onnx_upgrade_legacy, not annotated.
mlcc_status_t mlcc_onnx_upgrade_legacy_node(mlcc_graph_t* graph, mlcc_node_t* node,
                                            mlcc_node_t** out_inserted);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_ONNX_LEGACY_H_

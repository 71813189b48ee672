// SPDX-License-Identifier: Apache-2.0
// Subgraphs: the bodies of ONNX's control-flow operators (If's then_branch
// and else_branch, Loop's and Scan's body), held as read-only templates that
// the infer-shapes pass unrolls into the enclosing graph
// (passes/lower_control_flow.c). A subgraph reads its formal inputs, its own
// constants, its nodes' outputs and values of enclosing scopes ("outer-scope"
// references, ONNX IR.md "Names Within a Graph"); the importer resolves every
// name once, so a template refers to values by slot number:
//
//   [0, n_inputs)                      formal inputs, bound by the operator
//   [n_inputs, +n_consts)              initializers and Constant nodes
//   [first_node_slot, first_capture)   node outputs
//   [first_capture, +n_captures)       values read from enclosing scopes
//
// All arrays are owned by the graph's arena (they live as long as the graph).
// Thread-compatible: immutable once imported; lowering only reads templates.
#ifndef MLCC_IR_SUBGRAPH_H_
#define MLCC_IR_SUBGRAPH_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

// Deepest nesting of subgraphs the importer accepts (a Loop in an If in a
// Loop ... counts one level each); deeper models are UNIMPLEMENTED.
#define MLCC_SUBGRAPH_MAX_DEPTH 16

// A declared formal input or output (ValueInfoProto). Types are optional in
// subgraphs: the operator's actual inputs decide them.
typedef struct mlcc_subgraph_value_info_t {
  const char* name;
  mlcc_dtype_t dtype;   // declared element type, or MLCC_DTYPE_UNDEFINED
  bool shape_static;    // a shape is declared and every dim is a fixed number
  mlcc_shape_t shape;   // valid when |shape_static|
} mlcc_subgraph_value_info_t;

// An initializer or Constant node of the subgraph: |data| holds
// numel*dtype_size little-endian bytes (borrowed from the model's backing
// store or arena-owned; valid for the graph's lifetime).
typedef struct mlcc_subgraph_const_t {
  const char* name;
  mlcc_dtype_t dtype;
  mlcc_shape_t shape;
  const void* data;
} mlcc_subgraph_const_t;

// One non-Constant node. Slots are -1 for omitted optional inputs/outputs.
typedef struct mlcc_subgraph_node_t {
  const char* name;            // ONNX node name or ""
  mlcc_op_t op;
  int32_t opset;
  uint32_t n_inputs;
  const int32_t* inputs;       // slots
  uint32_t n_outputs;
  const int32_t* outputs;      // slots (each defined by this node only)
  uint32_t n_attrs;
  const mlcc_attr_t* attrs;    // GRAPH attributes hold nested subgraphs
} mlcc_subgraph_node_t;

typedef struct mlcc_subgraph_t {
  const char* name;                            // GraphProto name (messages)
  uint32_t n_inputs;
  const mlcc_subgraph_value_info_t* inputs;    // formal inputs, in order
  uint32_t n_outputs;
  const mlcc_subgraph_value_info_t* outputs;   // formal outputs, in order
  const int32_t* output_slots;                 // slot of each output
  uint32_t n_consts;
  const mlcc_subgraph_const_t* consts;
  uint32_t n_nodes;
  const mlcc_subgraph_node_t* nodes;           // topologically sorted
  const char* const* slot_names;               // name of every slot (n_slots)
  uint32_t first_node_slot;                    // == n_inputs + n_consts
  uint32_t first_capture;
  uint32_t n_captures;
  uint32_t n_slots;                            // first_capture + n_captures
  // How capture k is bound. A subgraph of a main-graph node, and a copy made
  // while unrolling an enclosing subgraph (a closure), has |captured|[k], a
  // value of the graph. A subgraph nested in another subgraph's template has
  // |parent_slots|[k] instead: a slot of the enclosing subgraph, bound when
  // that subgraph is unrolled. Exactly one of the two is non-NULL when
  // n_captures > 0.
  mlcc_value_t* const* captured;
  const int32_t* parent_slots;
} mlcc_subgraph_t;

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_SUBGRAPH_H_

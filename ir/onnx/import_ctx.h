// SPDX-License-Identifier: Apache-2.0
// The ONNX importer's state and the functions its files share: onnx_import.c
// (opsets, node pre-scan, initializers, nodes, outputs, entry points),
// onnx_inputs.c (graph inputs: --input-shape pins and --input-value
// bindings), onnx_attrs.c (attributes and Constant nodes) and
// onnx_subgraph.c (GRAPH attributes: the bodies of If, Loop and Scan).
// Internal to those files; not part of the public API (onnx_import.h) nor of
// the unit test's internals (onnx_import_impl.h).
#ifndef MLCC_IR_ONNX_IMPORT_CTX_H_
#define MLCC_IR_ONNX_IMPORT_CTX_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "ir/onnx/onnx.pb-c.h"
#include "ir/onnx/onnx_import.h"
#include "ir/onnx/onnx_import_impl.h"
#include "ir/subgraph.h"

typedef struct onnx_opset_t {
  const char* domain;  // "" for the default domain (ai.onnx folded in)
  int32_t version;
} onnx_opset_t;

// State of one import. Owned by mlcc_onnx_import_bytes (stack storage, torn
// down there); every pointer is borrowed from the decoded ModelProto or owned
// as noted.
typedef struct import_ctx_t {
  mlcc_onnx_tensor_ctx_t tensor;  // file/dir/arena/limits for tensor decoding
  const mlcc_onnx_import_options_t* options;
  const MlccOnnx__ModelProto* model;
  const MlccOnnx__GraphProto* onnx_graph;
  mlcc_graph_t* graph;
  onnx_opset_t* opsets;  // malloc'ed
  size_t n_opsets;
  // Per node of onnx_graph, the opset its function body binds it to (0 or
  // NULL: the model's opset_import); set when local functions were inlined.
  const int32_t* node_opsets;
  const MlccOnnx__TensorProto** inits_sorted;  // malloc'ed, by name
  // Subgraph conversion: the scope whose nodes' attributes are being
  // converted (NULL: the main graph) and the current nesting depth.
  struct sg_scope_t* scope;
  int depth;
} import_ctx_t;

// "" for the default domain (NULL and "ai.onnx" fold into it), else |domain|.
static inline const char* canonical_domain(const char* domain) {
  if (domain == NULL || strcmp(domain, "ai.onnx") == 0) return "";
  return domain;
}

static inline const char* str_or_empty(const char* s) { return s ? s : ""; }

// RESOURCE_EXHAUSTED "out of memory |what|".
static inline mlcc_status_t oom(const char* what) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory %s", what);
}

// True for a node of the default domain whose op_type is "Constant" (it
// becomes a CONSTANT value, not a node).
static inline bool is_constant_node(const MlccOnnx__NodeProto* n) {
  return canonical_domain(n->domain)[0] == '\0' && n->op_type != NULL &&
         strcmp(n->op_type, "Constant") == 0;
}

//===----------------------------------------------------------------------===//
// onnx_import.c
//===----------------------------------------------------------------------===//

// Opset version the model imports for |domain| (canonicalized), or 0 when it
// imports none.
int32_t mlcc_onnx_opset_of(const import_ctx_t* ctx, const char* domain);

//===----------------------------------------------------------------------===//
// onnx_inputs.c: graph inputs
//===----------------------------------------------------------------------===//

// Dtype and shape of graph input |vi| (|init|: its initializer or NULL). The
// --input-shape pin wins, then the declared type, then the initializer's dims.
// UNIMPLEMENTED for non-tensor inputs, unsupported dtypes and rank >
// MLCC_MAX_RANK; INVALID_MODEL for a missing type, negative or unpinned
// symbolic dims; INVALID_ARGUMENT for a pin that contradicts the model.
mlcc_status_t mlcc_onnx_input_type(import_ctx_t* ctx, const MlccOnnx__ValueInfoProto* vi,
                                   const MlccOnnx__TensorProto* init, mlcc_dtype_t* out_dtype,
                                   mlcc_shape_t* out_shape);

// INVALID_MODEL when |shape|'s element count overflows, RESOURCE_EXHAUSTED
// above 2^32 elements (downstream code sizes buffers from input shapes).
mlcc_status_t mlcc_onnx_check_input_size(const char* name, const mlcc_shape_t* shape);

// INVALID_ARGUMENT when an --input-shape or --input-value names no graph
// input of ctx->onnx_graph (a typo must not be ignored).
mlcc_status_t mlcc_onnx_check_option_names(import_ctx_t* ctx);

// The --input-value binding of graph input |name| in |o| (borrowed), or NULL.
const mlcc_input_value_t* mlcc_onnx_find_binding(const mlcc_onnx_import_options_t* o,
                                                 const char* name);

// Adds graph input |vi| bound by |bv| as a CONSTANT of ctx->graph (see
// mlcc_input_value_t): a decoded tensor must match the declared dtype and
// shape; numbers take the declared (or pinned) static shape, else [n] or a
// scalar. INVALID_ARGUMENT ("--input-value=...: ...") when they do not fit,
// UNIMPLEMENTED for an unsupported declared dtype.
mlcc_status_t mlcc_onnx_add_bound_input(import_ctx_t* ctx, const MlccOnnx__ValueInfoProto* vi,
                                        const mlcc_input_value_t* bv);

//===----------------------------------------------------------------------===//
// onnx_attrs.c: attributes and Constant nodes
//===----------------------------------------------------------------------===//

// Converts attribute |a| into |out| with arrays owned by ctx->graph's arena;
// a GRAPH attribute becomes a subgraph template resolved against ctx->scope.
// INVALID_MODEL for a nameless, untyped or function-referencing attribute;
// UNIMPLEMENTED for attribute types mlcc does not support (GRAPHS, sparse,
// type protos).
mlcc_status_t mlcc_onnx_convert_attr(import_ctx_t* ctx, const MlccOnnx__AttributeProto* a,
                                     mlcc_attr_t* out);

// Decodes a Constant node's one attribute into a tensor whose bytes are
// arena-owned or borrowed from the model (both live as long as the graph).
// INVALID_MODEL for a malformed node, UNIMPLEMENTED for string and sparse
// constants.
mlcc_status_t mlcc_onnx_decode_constant_node(import_ctx_t* ctx, const MlccOnnx__NodeProto* n,
                                             mlcc_onnx_tensor_t* out);

// A Constant node becomes a CONSTANT value of ctx->graph named by its output;
// INVALID_MODEL when that name is already defined.
mlcc_status_t mlcc_onnx_add_constant_node(import_ctx_t* ctx, const MlccOnnx__NodeProto* n);

//===----------------------------------------------------------------------===//
// onnx_subgraph.c: GRAPH attributes
//===----------------------------------------------------------------------===//

// Decodes attribute |a|'s serialized GraphProto (one level: nested graphs
// stay serialized until their own attribute is converted) and builds its
// template (arena-owned) in the scope ctx->scope into |*out_sg|.
// INVALID_MODEL for a missing or undecodable graph and for bad bodies,
// UNIMPLEMENTED beyond MLCC_SUBGRAPH_MAX_DEPTH nesting levels,
// RESOURCE_EXHAUSTED on OOM.
mlcc_status_t mlcc_onnx_convert_graph_attr(import_ctx_t* ctx, const MlccOnnx__AttributeProto* a,
                                           const mlcc_subgraph_t** out_sg);

#endif  // MLCC_IR_ONNX_IMPORT_CTX_H_

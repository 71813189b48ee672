// SPDX-License-Identifier: Apache-2.0
// Model-local functions (ONNX IR >= 8: ModelProto.functions, FunctionProto),
// inlined at import. Internal to the ONNX importer (ir/onnx/).
//
// A node of the main graph whose (domain, op_type, overload) names a
// FunctionProto of the model is replaced by the function's nodes, as the
// ONNX IR spec ("Functions") defines a call:
//   - the function's formal inputs and outputs become the call's actual
//     names, position by position; a formal input the call leaves out is an
//     absent optional input (""); a formal output the call leaves out gets a
//     private name;
//   - every other name of the body gets the private prefix
//     "mlcc.inline<k>/" (k counts the calls of the model), so two calls never
//     share a tensor;
//   - an attribute with ref_attr_name R takes the call's attribute R, else the
//     function's default for R (FunctionProto.attribute_proto); an attribute
//     the function declares without a default (FunctionProto.attribute) and
//     the call omits is left out, as if never written;
//   - body nodes bind against the function's opset_import for their domain,
//     else the model's;
//   - calls in a body are inlined the same way (at most 32 levels deep).
// Inlined nodes are named "<call name>/<body node name>".
#ifndef MLCC_IR_ONNX_FUNCTIONS_H_
#define MLCC_IR_ONNX_FUNCTIONS_H_

#include <stdint.h>

#include "ir/base/arena.h"
#include "ir/base/status.h"
#include "ir/onnx/onnx.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

// Sets *out_graph to |model|->graph when no node of it calls a local
// function (and *out_node_opsets to NULL); otherwise to a shallow copy of it,
// allocated in |arena| like everything this creates (the strings and tensors
// stay |model|'s), whose node list has every call inlined, with
// *out_node_opsets one opset version per node of the copy for the node's
// domain (0: the model's opset_import decides).
// Errors (INVALID_MODEL unless said otherwise), naming the function as
// "domain.name" and the node: two functions with one (domain, name,
// overload); a function without a name; a function that calls itself,
// directly or through others ("function 'f' calls itself: f -> g -> f");
// calls nested deeper than 32; a ref_attr_name the function does not
// declare; a body node with a graph attribute (UNIMPLEMENTED: subgraphs
// inside functions); RESOURCE_EXHAUSTED when |arena| runs out.
mlcc_status_t mlcc_onnx_inline_functions(const MlccOnnx__ModelProto* model, mlcc_arena_t* arena,
                                         const MlccOnnx__GraphProto** out_graph,
                                         const int32_t** out_node_opsets);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_ONNX_FUNCTIONS_H_

// SPDX-License-Identifier: Apache-2.0
// Shape inference entry of the control-flow operators If (opsets 1-26), Loop
// (1-26) and Scan (8-26). Their outputs depend on subgraphs, so they are not
// inferred node by node: the infer-shapes pass unrolls each one into plain
// nodes as soon as it reaches it (passes/lower_control_flow.c) and infers
// those instead. This function is therefore reached only when a caller runs
// an op's infer function directly on a node that was not unrolled.
#include "ir/ops/infer_impl.h"

// Always UNIMPLEMENTED, naming the op: control flow is unrolled by the
// infer-shapes pass, not inferred in place.
mlcc_status_t mlcc_infer_control_flow(mlcc_node_t* node) {
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                          "%s is unrolled into plain nodes by the infer-shapes pass and "
                          "cannot be inferred in place",
                          mlcc_infer_op(node));
}

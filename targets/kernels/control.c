// SPDX-License-Identifier: Apache-2.0
// Kernel emitter entry of the control-flow operators If, Loop and Scan. They
// never reach the codegen: the infer-shapes pass unrolls them into plain
// nodes (passes/lower_control_flow.c). The entry exists because every
// ops.def row names an emitter.
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/kernels/kernels.h"

// Always UNIMPLEMENTED: a control-flow node has no kernel of its own.
static mlcc_status_t emit_control_flow(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  (void)ctx;
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                          "%s has no kernel: it must be unrolled by the infer-shapes pass",
                          mlcc_op_name(node->op));
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_control_flow = {.emit = emit_control_flow};

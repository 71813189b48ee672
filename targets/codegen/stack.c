// SPDX-License-Identifier: Apache-2.0
// NAME_STACK_SIZE: the stack bound of the generated code (stack.h).
#include "targets/codegen/stack.h"

#include <string.h>

#include "ir/ops.h"
#include "targets/emit/emit.h"
#include "targets/kernels/kernels.h"

static int64_t node_bytes(const mlcc_node_t* node, const mlcc_target_t* only) {
  if (node == NULL) return 0;
  const mlcc_emitter_t* emitter = mlcc_emitter(node->op);
  if (emitter != NULL && emitter->stack_bytes != NULL) return emitter->stack_bytes(node, only);
  // targets/kernels/elementwise.c: a variadic node (Sum, Mean, Max, Min) keeps its
  // input pointers in stack arrays, one pointer per input.
  return node->n_inputs > 2 ? 8 * (int64_t)node->n_inputs : 0;
}

int64_t mlcc_stack_node_bytes(const mlcc_node_t* node) { return node_bytes(node, NULL); }

int64_t mlcc_stack_kernel_bytes(const mlcc_kernel_t* kernel) {
  int64_t bytes = MLCC_STACK_KERNEL_MARGIN;
  for (uint32_t i = 0; kernel != NULL && i < kernel->n_nodes; ++i) {
    bytes += mlcc_stack_node_bytes(kernel->nodes[i]);
  }
  return bytes;
}

// mlcc_stack_size's target-independent bound.
static int64_t any_target_stack_size(const mlcc_graph_t* graph) {
  int64_t kernel = 0, args = 0;
  for (uint32_t k = 0; graph != NULL && k < graph->n_kernels; ++k) {
    int64_t b = mlcc_stack_kernel_bytes(&graph->kernels[k]);
    if (b > kernel) kernel = b;
    // NAME_run_parallel's argument block: one pointer per kernel argument
    // (entry.c; the widest kernel, whether or not it is parallel there).
    int64_t n = (int64_t)mlcc_kernel_args(&graph->kernels[k], NULL, 0);
    if (n > args) args = n;
  }
  int64_t total = MLCC_STACK_ENTRY_MARGIN + 8 * args + kernel;
  return (total + 1023) / 1024 * 1024;
}

int64_t mlcc_stack_size(const mlcc_graph_t* graph) {
  if (graph != NULL && graph->stack_size > 0) return graph->stack_size;
  return any_target_stack_size(graph);
}

int64_t mlcc_stack_size_for_target(const mlcc_graph_t* graph, const mlcc_target_t* target) {
  if (target == NULL || !mlcc_target_is_bare_metal(target)) return any_target_stack_size(graph);
  int64_t kernel = 0, args = 0;
  for (uint32_t k = 0; graph != NULL && k < graph->n_kernels; ++k) {
    const mlcc_kernel_t* kn = &graph->kernels[k];
    int64_t b = MLCC_STACK_MCU_KERNEL_MARGIN;
    for (uint32_t i = 0; i < kn->n_nodes; ++i) b += node_bytes(kn->nodes[i], target);
    if (b > kernel) kernel = b;
    int64_t n = (int64_t)mlcc_kernel_args(kn, NULL, 0);
    if (n > args) args = n;
  }
  // 32-bit pointers in NAME_run_parallel's argument block.
  int64_t total = MLCC_STACK_MCU_ENTRY_MARGIN + 4 * args + kernel;
  return (total + 255) / 256 * 256;
}

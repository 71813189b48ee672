// SPDX-License-Identifier: Apache-2.0
// NAME_STACK_SIZE: the stack bound of the generated code (stack.h).
#include "targets/codegen/stack.h"
#include "targets/codegen/emit_qgemm.h"

#include <string.h>

#include "ir/ops.h"
#include "targets/codegen/emit.h"
#include "targets/codegen/emit_winograd.h"
#include "targets/codegen/pack.h"

// Every (architecture, vector width) the emitters plan for: x86-64 with AVX2
// (the default x86-64-v3) and with AVX-512, aarch64 (NEON), riscv64 without
// and with V (targets/target.c, vector_bytes_for). The plans read only these
// two fields of a target.
static const struct {
  mlcc_arch_t arch;
  int32_t vector_bytes;
} kTargets[] = {
    {MLCC_ARCH_X86_64, 32}, {MLCC_ARCH_X86_64, 64},  {MLCC_ARCH_AARCH64, 16},
    {MLCC_ARCH_RISCV64, 16}, {MLCC_ARCH_RISCV64, 32},
};

enum { kViewMaxAttrs = 32 };

// A Conv as the importer produced it: the pack-weights pass rewrote W (and
// added a layout attribute) for the compiling target only; every other
// target would have packed the ONNX W for itself.
typedef struct conv_view_t {
  mlcc_node_t node;
  mlcc_value_t* inputs[3];
  mlcc_value_t w;
  mlcc_attr_t attrs[kViewMaxAttrs];
} conv_view_t;

static const mlcc_node_t* conv_onnx_view(const mlcc_node_t* node, conv_view_t* v) {
  if (node->n_inputs < 2 || node->n_inputs > 3 || node->n_attrs > kViewMaxAttrs ||
      node->inputs[1] == NULL) {
    return node;
  }
  memset(v, 0, sizeof(*v));
  v->node = *node;
  memcpy(v->inputs, node->inputs, node->n_inputs * sizeof(node->inputs[0]));
  v->node.inputs = v->inputs;
  v->node.attrs = v->attrs;
  v->node.n_attrs = 0;
  bool winograd = false;
  for (uint32_t i = 0; i < node->n_attrs; ++i) {
    const char* name = node->attrs[i].name != NULL ? node->attrs[i].name : "";
    if (strcmp(name, MLCC_CONV_WINOGRAD_ATTR) == 0) {
      winograd = true;
    } else if (strcmp(name, MLCC_CONV_PACKED_ATTR) != 0) {
      v->attrs[v->node.n_attrs++] = node->attrs[i];
    }
  }
  if (winograd) {
    // pack.h: the layout only exists for 2-D 3x3 group-1 convs; W was
    // [M, C, 3, 3].
    const mlcc_value_t* x = mlcc_node_input(node, 0);
    const mlcc_value_t* y = mlcc_node_output(node, 0);
    if (x == NULL || y == NULL || x->shape.rank != 4 || y->shape.rank != 4) return node;
    v->w = *node->inputs[1];
    v->w.shape.rank = 4;
    v->w.shape.dims[0] = y->shape.dims[1];
    v->w.shape.dims[1] = x->shape.dims[1];
    v->w.shape.dims[2] = 3;
    v->w.shape.dims[3] = 3;
    v->inputs[1] = &v->w;
  }
  return &v->node;
}

static int64_t conv_bytes(const mlcc_node_t* node) {
  conv_view_t view;
  const mlcc_node_t* onnx = conv_onnx_view(node, &view);
  int64_t best = 0;
  for (size_t i = 0; i < sizeof(kTargets) / sizeof(kTargets[0]); ++i) {
    mlcc_target_t t;
    memset(&t, 0, sizeof(t));
    t.arch = kTargets[i].arch;
    t.vector_bytes = kTargets[i].vector_bytes;
    // Either kernel may run: -fno-winograd keeps the direct one.
    int64_t w = mlcc_conv_winograd_stack_bytes(onnx, &t);
    int64_t d = mlcc_conv_stack_bytes(onnx, &t);
    if (w > best) best = w;
    if (d > best) best = d;
  }
  return best;
}

// emit_rnn.c: h, h_new, and for LSTM c, for GRU without linear_before_reset
// r (.) h: at most four rows of hidden_size elements (float64 for float64
// models, else float32).
static int64_t rnn_bytes(const mlcc_node_t* node) {
  const mlcc_value_t* r = mlcc_node_input(node, 2);
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (r == NULL || !r->shape_known || r->shape.rank != 3 || r->shape.dims[2] <= 0) return 0;
  int64_t elem = x != NULL && x->dtype == MLCC_DTYPE_F64 ? 8 : 4;
  return 4 * r->shape.dims[2] * elem;
}

// emit_spatial_misc.c: Det copies each M x M matrix into a float64 array.
static int64_t det_bytes(const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (x == NULL || !x->shape_known || x->shape.rank < 2) return 0;
  int64_t m = x->shape.dims[x->shape.rank - 1];
  return m > 0 ? m * m * 8 : 0;
}

int64_t mlcc_stack_node_bytes(const mlcc_node_t* node) {
  if (node == NULL) return 0;
  switch (node->op) {
    case MLCC_OP_CONV: return conv_bytes(node);
    case MLCC_OP_RNN:
    case MLCC_OP_GRU:
    case MLCC_OP_LSTM: return rnn_bytes(node);
    case MLCC_OP_DET: return det_bytes(node);
    case MLCC_OP_QLINEAR_CONV:
    case MLCC_OP_CONV_INTEGER: return mlcc_qgemm_conv_stack_bytes(node);  // emit_qgemm.c
    default:
      // emit_elementwise.c: a variadic node (Sum, Mean, Max, Min) keeps its
      // input pointers in stack arrays, one pointer per input.
      return node->n_inputs > 2 ? 8 * (int64_t)node->n_inputs : 0;
  }
}

int64_t mlcc_stack_kernel_bytes(const mlcc_kernel_t* kernel) {
  int64_t bytes = MLCC_STACK_KERNEL_MARGIN;
  for (uint32_t i = 0; kernel != NULL && i < kernel->n_nodes; ++i) {
    bytes += mlcc_stack_node_bytes(kernel->nodes[i]);
  }
  return bytes;
}

int64_t mlcc_stack_size(const mlcc_graph_t* graph) {
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

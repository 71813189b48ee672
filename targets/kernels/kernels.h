// SPDX-License-Identifier: Apache-2.0
// The kernel emitters, one descriptor per ops.def emit column entry. The
// emit column of ir/ops.def names an mlcc_emitter_t defined by the op's
// family file under targets/kernels/ (conv.c, matmul.c, pool.c, ...);
// kernels.c expands ops.def into the op -> descriptor table. Everything the
// code generator knows about an op beyond its IR columns (how to emit it,
// how it splits for the parallel entry, what stack it needs, what it costs)
// is a field of its descriptor, so a new op is a row in ops.def plus code in
// its family's file. Read-only data: thread-safe.
#ifndef MLCC_TARGETS_KERNELS_KERNELS_H_
#define MLCC_TARGETS_KERNELS_KERNELS_H_

#include <stdint.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_emit_ctx_t mlcc_emit_ctx_t;  // targets/emit/emit.h

typedef struct mlcc_emitter_t {
  // Emits LLVM IR computing |node| into the kernel being built by |ctx|. The
  // node's shapes are verified. Every element of every present output is
  // written exactly once through mlcc_emit_store_output() (so fusion can
  // apply an epilogue). Returns UNIMPLEMENTED for unsupported dtypes or
  // attributes. Never NULL.
  mlcc_status_t (*emit)(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node);
  // Independent work units of a kernel anchored at |anchor| on |target| for
  // the parallel entry (docs/generated-api.md); NULL: 0 (not parallel). A
  // pure function of shapes, attributes and |target|: the emitter and the
  // entry agree on it without seeing each other. Never called for bare-metal
  // targets (mlcc_emit_parallel_units returns 0 there).
  int64_t (*parallel_units)(const mlcc_node_t* anchor, const mlcc_target_t* target);
  // Bytes of stack buffers the emitted code of |node| allocates beyond
  // scalars and vectors (NAME_STACK_SIZE, targets/codegen/stack.h): for the
  // one target |only| (a bare-metal target's own bound), or with |only| NULL
  // an upper bound over every Linux target; NULL: the default of
  // mlcc_stack_node_bytes (pointer arrays of a variadic node). Pure.
  int64_t (*stack_bytes)(const mlcc_node_t* node, const mlcc_target_t* only);
  // Floating-point operations (a multiply-add counts 2) of |node|, whose
  // output 0 has a known shape, or -1 when unknown (--profile,
  // targets/codegen/entry_profile.h); NULL: numel(output 0) for an
  // MLCC_OPF_ELEMENTWISE op, else -1. Pure.
  int64_t (*flops)(const mlcc_node_t* node);
} mlcc_emitter_t;

// Elements of |v|, or -1 when |v| is absent or its shape is not known (the
// flops functions' unknown).
static inline int64_t mlcc_kernels_numel(const mlcc_value_t* v) {
  return v != NULL && v->shape_known ? mlcc_shape_numel_unchecked(&v->shape) : -1;
}

// The descriptor of |op|, or NULL for an invalid op.
const mlcc_emitter_t* mlcc_emitter(mlcc_op_t op);

// One descriptor per distinct ops.def emit column entry (defined in the
// family files of targets/kernels/).
#define MLCC_OP(id, dom, nm, omin, omax, imin, imax, outmin, outmax, shp, inf, emt, ev, fl) \
  extern const mlcc_emitter_t emt;
#include "ir/ops.def"
#undef MLCC_OP

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_KERNELS_KERNELS_H_

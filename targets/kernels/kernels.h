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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_emit_ctx_t mlcc_emit_ctx_t;  // targets/emit/emit.h

// The schedule space of an emitter family (docs/tuning.md): a few integer
// parameters (tile rows, vector columns, ...) that change how a kernel is
// computed but never what it computes. Value 0 of every parameter is the
// heuristic's choice, so a node whose sched[] is all zero is compiled as
// without tuning. Read-only data.
typedef struct mlcc_sched_space_t {
  // Bump when the meaning or the range of a parameter changes: tuning
  // records name the version they were measured with and records of another
  // version are ignored (driver/tune.h).
  uint32_t version;
  uint32_t n_params;                          // <= MLCC_SCHED_MAX_PARAMS
  const char* names[MLCC_SCHED_MAX_PARAMS];   // "rows", "vectors", ...
  // Writes the non-zero values parameter |p| may take for the kernel
  // anchored at |node| on |target| to |out| (at most |cap|, ascending) and
  // returns how many there are (0: the parameter does not apply and only 0
  // is valid). The heuristic's own value is listed too. Pure.
  uint32_t (*values)(const mlcc_node_t* node, const mlcc_target_t* target, uint32_t p,
                     int32_t* out, uint32_t cap);
  // Joint constraint of a whole point (every sched[p] 0 or one of values()),
  // e.g. a register budget; NULL: every such point is valid. Pure.
  bool (*valid)(const mlcc_node_t* node, const mlcc_target_t* target, const int32_t* sched);
} mlcc_sched_space_t;

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
  // The schedule space of the kernels this emitter anchors; NULL: not
  // tunable (sched[] must stay zero). The emitter and parallel_units read
  // node->sched through it.
  const mlcc_sched_space_t* sched_space;
} mlcc_emitter_t;

// Elements of |v|, or -1 when |v| is absent or its shape is not known (the
// flops functions' unknown).
static inline int64_t mlcc_kernels_numel(const mlcc_value_t* v) {
  return v != NULL && v->shape_known ? mlcc_shape_numel_unchecked(&v->shape) : -1;
}

// The descriptor of |op|, or NULL for an invalid op.
const mlcc_emitter_t* mlcc_emitter(mlcc_op_t op);

//===----------------------------------------------------------------------===//
// Schedules (targets/kernels/sched.c)
//===----------------------------------------------------------------------===//

// The schedule space of the kernel anchored at |node|, or NULL if untunable.
const mlcc_sched_space_t* mlcc_sched_space(const mlcc_node_t* node);
// True when every parameter of |sched| is 0 (the heuristic's schedule).
bool mlcc_sched_is_default(const int32_t sched[MLCC_SCHED_MAX_PARAMS]);
// True when |sched| is a point of |node|'s space on |target|: each parameter
// 0 or one of its values, unused parameters 0, and the joint constraint
// holds. The all-zero schedule is always valid; any other is invalid for an
// untunable node.
bool mlcc_sched_valid(const mlcc_node_t* node, const mlcc_target_t* target,
                      const int32_t sched[MLCC_SCHED_MAX_PARAMS]);
// Enumerates the points of |node|'s space on |target| in a fixed order:
// the default (all zero) first, then every valid combination of explicit
// values (parameters in order, the last varying fastest). Writes at most
// |cap| points to |out| (may be NULL with cap 0) and returns the total
// number of points (1 for an untunable node).
uint32_t mlcc_sched_enumerate(const mlcc_node_t* node, const mlcc_target_t* target,
                              int32_t (*out)[MLCC_SCHED_MAX_PARAMS], uint32_t cap);
// "rows=4,vectors=2" (only the non-zero parameters; "default" when none)
// into |buf|; returns buf.
char* mlcc_sched_format(const mlcc_node_t* node, const int32_t sched[MLCC_SCHED_MAX_PARAMS],
                        char* buf, size_t buf_size);

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

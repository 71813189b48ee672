// SPDX-License-Identifier: Apache-2.0
// Operator descriptors generated from ops.def. Thread-safe (read-only data).
#ifndef MLCC_IR_OPS_H_
#define MLCC_IR_OPS_H_

#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_node_t mlcc_node_t;

enum {
  // Output 0 is the broadcast of the inputs and each output element depends
  // only on the same-index (broadcast) input elements: may be a fused epilogue.
  MLCC_OPF_ELEMENTWISE = 1u << 0,
  // Output 0 is input 0's bytes with another shape (Reshape family): above
  // -O0 the fuse pass lets it alias its input (no kernel, no copy).
  MLCC_OPF_RESHAPE = 1u << 1,
};

typedef enum mlcc_op_e {
#define MLCC_OP(id, dom, nm, omin, omax, imin, imax, outmin, outmax, shp, inf, emt, ev, fl) \
  MLCC_OP_##id,
#include "ir/ops.def"
#undef MLCC_OP
  MLCC_OP_COUNT
} mlcc_op_t;

// Computes the dtypes and static shapes of |node|'s outputs from its inputs
// (which are inferred, and constant where the row's shape_inputs says so)
// and validates attributes. Returns INVALID_MODEL for inputs that break the
// ONNX spec, UNIMPLEMENTED for valid but unsupported cases; never asserts.
typedef mlcc_status_t (*mlcc_infer_fn_t)(mlcc_node_t* node);

typedef struct mlcc_op_desc_t {
  const char* domain;       // "" is the default ONNX domain (ai.onnx)
  const char* name;         // ONNX op_type
  int16_t opset_min, opset_max;
  uint16_t in_min, in_max;  // input arity (counting omitted optional inputs)
  uint16_t out_min, out_max;
  uint32_t shape_inputs;    // bit i: input i is read at compile time
  uint16_t emit_version;    // bump when emitted code changes (cache key)
  uint32_t flags;           // MLCC_OPF_*
  mlcc_infer_fn_t infer;
  // The emit column is not here: ir/ does not know the code generator.
  // targets/kernels/kernels.h maps an op to its emitter (mlcc_emitter()).
} mlcc_op_desc_t;

// Descriptor for |op| (< MLCC_OP_COUNT). Never NULL for valid ops.
const mlcc_op_desc_t* mlcc_op_desc(mlcc_op_t op);
const char* mlcc_op_name(mlcc_op_t op);

typedef enum mlcc_op_lookup_e {
  MLCC_OP_LOOKUP_OK = 0,
  MLCC_OP_LOOKUP_UNKNOWN_OP,     // no row for (domain, name)
  MLCC_OP_LOOKUP_BAD_OPSET,      // row exists, opset outside its range
} mlcc_op_lookup_t;

// Looks up (|domain|, |name|) at |opset|. "ai.onnx" is treated as "". On
// BAD_OPSET, |*out_op| is still set so callers can print the supported range.
mlcc_op_lookup_t mlcc_op_lookup(const char* domain, const char* name, int32_t opset,
                                mlcc_op_t* out_op);

// Shape-inference functions (ir/ops/*.c), one per family; see ops.def.
#define MLCC_OP(id, dom, nm, omin, omax, imin, imax, outmin, outmax, shp, inf, emt, ev, fl) \
  mlcc_status_t inf(mlcc_node_t* node);
#include "ir/ops.def"
#undef MLCC_OP

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_H_

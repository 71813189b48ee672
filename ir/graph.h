// SPDX-License-Identifier: Apache-2.0
// The graph IR: values (tensors), nodes (ONNX operators), fused kernels.
// Thread-compatible: one thread mutates a graph at a time; concurrent
// read-only use (e.g. parallel codegen of distinct kernels) is allowed.
//
// Model of the IR
// ---------------
// * Every tensor is an mlcc_value_t with a dtype and, after shape inference, a
//   fully static shape (symbolic dims are pinned by --input-shape at import or
//   rejected). Scalars have rank 0.
// * A value is a graph input, a constant (initializer, Constant node or folded
//   result; |data| holds its bytes), or an intermediate produced by one node.
//   Graph outputs are flagged with |is_output| and listed in |outputs|.
// * |nodes| is kept in a topological order. Passes mark nodes |dead| and call
//   mlcc_graph_compact(); they never free individually (arena-owned).
// * After the fusion pass, |kernels| partitions the live nodes: kernel k is an
//   anchor node followed by elementwise epilogue nodes (see mlcc_kernel_t).
#ifndef MLCC_IR_GRAPH_H_
#define MLCC_IR_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/base/arena.h"
#include "ir/base/status.h"
#include "ir/dtype.h"
#include "ir/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_MAX_RANK 8

// Parameters of one kernel schedule (mlcc_node_t.sched; the meaning of each
// is its emitter's schedule space, targets/kernels/kernels.h).
#define MLCC_SCHED_MAX_PARAMS 4

//===----------------------------------------------------------------------===//
// Types and enums
//===----------------------------------------------------------------------===//

// A static shape. dims[i] >= 0 for i < rank.
typedef struct mlcc_shape_t {
  int32_t rank;
  int64_t dims[MLCC_MAX_RANK];
} mlcc_shape_t;

typedef enum mlcc_value_kind_e {
  MLCC_VALUE_INTERMEDIATE = 0,  // produced by a node
  MLCC_VALUE_INPUT,             // fed by the caller of <name>_run
  MLCC_VALUE_CONSTANT,          // |data| holds the bytes (weights, folded)
} mlcc_value_kind_t;

typedef struct mlcc_node_t mlcc_node_t;

typedef struct mlcc_value_t {
  uint32_t id;                // index in graph->values (stable for a graph)
  const char* name;           // ONNX name (arena); unique within the graph
  mlcc_dtype_t dtype;         // MLCC_DTYPE_UNDEFINED until inferred
  bool shape_known;           // false until inferred
  mlcc_shape_t shape;
  mlcc_value_kind_t kind;
  bool is_output;             // listed in graph->outputs
  // CONSTANT only: numel*dtype_size bytes, little-endian, row-major (NCHW
  // for images). Borrowed from the graph's backing store or arena-owned;
  // valid for the graph's lifetime.
  const void* data;
  mlcc_node_t* producer;      // INTERMEDIATE: the node writing it, else NULL
  uint32_t n_uses;            // live node inputs reading it (recounted by
                              // mlcc_graph_recount_uses); outputs not counted
  // Set by plan-memory: byte offset in the workspace for INTERMEDIATE values
  // that are not graph outputs; -1 when the value has no workspace slot.
  int64_t ws_offset;
  // Set by the codegen: byte offset of a CONSTANT in the weights blob; -1 if none.
  int64_t weight_offset;
  // Set by fuse (else NULL): this value is the output of a Reshape-family node
  // (Reshape, Flatten, Squeeze, Unsqueeze) that runs no kernel: its bytes are
  // those of |alias_of| (same dtype and element count; never itself an
  // alias), read with this value's shape. Plan-memory gives it the source's
  // slot and keeps the source live while the alias is read; the entry passes
  // the source's pointer. Never set on graph outputs.
  struct mlcc_value_t* alias_of;
  // Data-dependent shape (NonZero, Compress, Unique, NonMaxSuppression;
  // ir/ops/dynamic.c): bit d set means shape.dims[d] is only a static upper
  // bound. The value is laid out and allocated at |shape|; its producer packs
  // the elements row-major in the ACTUAL shape at the front of that buffer.
  // Such a value is read by no node (it may only be a graph output). 0 for
  // every other value.
  uint32_t bound_dims;
  // Set by plan-memory when |bound_dims| != 0: an INT64 [rank] value, an
  // extra output of the same node placed after its ONNX outputs, live until
  // NAME_run returns, into which the kernel writes the actual dims (read back
  // by NAME_output_shape). NULL otherwise.
  struct mlcc_value_t* extent;
} mlcc_value_t;

typedef enum mlcc_attr_kind_e {
  MLCC_ATTR_INT = 0,
  MLCC_ATTR_FLOAT,
  MLCC_ATTR_STRING,
  MLCC_ATTR_INTS,
  MLCC_ATTR_FLOATS,
  MLCC_ATTR_STRINGS,
  MLCC_ATTR_TENSOR,
  MLCC_ATTR_GRAPH,           // a subgraph (If/Loop/Scan bodies; ir/subgraph.h)
} mlcc_attr_kind_t;

struct mlcc_subgraph_t;  // ir/subgraph.h

// One ONNX attribute. Arrays and strings are arena-owned.
typedef struct mlcc_attr_t {
  const char* name;
  mlcc_attr_kind_t kind;
  int64_t i;                 // INT
  float f;                   // FLOAT
  const char* s;             // STRING (NUL-terminated copy; s_len bytes)
  size_t s_len;
  uint32_t count;            // INTS / FLOATS / STRINGS element count
  const int64_t* ints;
  const float* floats;
  const char* const* strings;
  // TENSOR: a constant tensor (e.g. ConstantOfShape's value).
  mlcc_dtype_t t_dtype;
  mlcc_shape_t t_shape;
  const void* t_data;
  // GRAPH: the subgraph template (arena-owned, read-only once imported).
  const struct mlcc_subgraph_t* g;
} mlcc_attr_t;

struct mlcc_node_t {
  uint32_t id;               // creation index (stable; used for names/order ties)
  const char* name;          // ONNX node name or "" (arena)
  mlcc_op_t op;
  int32_t opset;             // opset of the node's domain from the model
  uint32_t n_inputs;
  mlcc_value_t** inputs;     // entries may be NULL: omitted optional input
  uint32_t n_outputs;
  mlcc_value_t** outputs;    // entries may be NULL: omitted optional output
  uint32_t n_attrs;
  mlcc_attr_t* attrs;
  bool dead;                 // removed by a pass; dropped by compact
  // A helper a pass made to carry the model's values (lower-control-flow's
  // Where/Gather/Concat/...), not a node of the model: the ONNX type
  // constraints of its op at its opset do not bind it (it moves int4/uint4
  // values of an If/Loop/Scan, which ONNX allows there). Zero by default.
  bool pass_helper;
  int32_t kernel;            // index into graph->kernels after fusion, else -1
  // Schedule of the kernel this node anchors (docs/tuning.md): sched[p] is
  // parameter p of its emitter's schedule space (mlcc_sched_space_t), 0 the
  // heuristic's choice. All zero (the default, and what passes leave) keeps
  // the kernel key and the code as without tuning. Set by the driver from
  // tuning records (driver/tune.h) on anchors only.
  int32_t sched[MLCC_SCHED_MAX_PARAMS];
};

// A fused kernel: nodes[0] is the anchor (any op); nodes[1..] are
// elementwise ops (MLCC_OPF_ELEMENTWISE) of the anchor's output shape. Input
// |carried_input[i]| of node i is the single output of an earlier chain node;
// any other input slot of node i may also read the output of an earlier
// chain node (e.g. SiLU: Mul(x, Sigmoid(x)) with x the anchor's output; the
// slot reads that node's value, matched by value identity); the remaining
// inputs exist before the anchor and broadcast to the output shape. Every
// use of an intermediate output of the chain is inside the chain; those are
// not materialized; only the last node's outputs are.
// Most nodes one fused kernel holds (the anchor plus its epilogue chain);
// the fusion pass stops a chain there and the emitters rely on it.
#define MLCC_KERNEL_MAX_NODES 64

typedef struct mlcc_kernel_t {
  uint32_t n_nodes;
  mlcc_node_t** nodes;
  uint32_t* carried_input;   // carried_input[0] unused
  // Set by plan-memory (else NULL): an input of this kernel (one of its
  // argument values, possibly a Reshape alias) whose workspace bytes the
  // output of the last node reuses ("in place"): the kernel is its last
  // reader and reads each element before it stores the same element of the
  // output (see passes/plan_memory.c for the kernels that qualify). The
  // codegen then reaches the output through that input's pointer argument.
  mlcc_value_t* inplace_input;
} mlcc_kernel_t;

// The type a model declares for one graph output (its ONNX ValueInfoProto),
// kept so that infer-shapes can hold it against the inferred type.
typedef struct mlcc_output_decl_t {
  int32_t elem_type;             // ONNX elem_type (== mlcc_dtype_t where valid); 0 if none
  int32_t rank;                  // declared rank, -1 if no shape is declared
  int64_t dims[MLCC_MAX_RANK];   // dims[d] (d < min(rank, MLCC_MAX_RANK)); -1 for a
                                 // symbolic or unknown dim
} mlcc_output_decl_t;

typedef struct mlcc_graph_t {
  mlcc_arena_t arena;        // owns values, nodes, attrs, strings, folded data
  const char* name;          // ONNX graph name (informational)
  uint32_t n_values, values_cap;
  mlcc_value_t** values;
  uint32_t n_nodes, nodes_cap;
  mlcc_node_t** nodes;       // topological order
  uint32_t n_inputs;
  mlcc_value_t** inputs;     // graph inputs in ONNX order (initializers excluded)
  uint32_t n_outputs;
  mlcc_value_t** outputs;    // graph outputs in ONNX order
  uint32_t n_kernels;
  mlcc_kernel_t* kernels;    // set by fusion (or one per node); else 0
  int64_t workspace_size;    // bytes, set by plan-memory
  int64_t folded_bytes;      // constant data materialized by folding so far
  int64_t workspace_align;   // bytes, set by plan-memory (64)
  // NAME_STACK_SIZE when the driver set a target's own bound (bare-metal
  // targets: mlcc_stack_size_for_target, targets/codegen/stack.h); 0 means
  // the target-independent bound mlcc_stack_size computes.
  int64_t stack_size;
  // Opaque owner of borrowed constant bytes (the model file's buffer), freed
  // by mlcc_graph_destroy through |backing_free|.
  void* backing;
  void (*backing_free)(void* backing);
  uint32_t next_node_id;
  // Declared output types, parallel to |outputs| (arena-owned; set by the
  // ONNX importer, else NULL). infer-shapes checks them once (ONNX Runtime's
  // rules: a different elem_type is an error, a different static dim a
  // warning) and then sets this to NULL.
  mlcc_output_decl_t* output_decls;
} mlcc_graph_t;

//===----------------------------------------------------------------------===//
// mlcc_shape_t
//===----------------------------------------------------------------------===//

// Element count in |*out_numel|; INVALID_MODEL on overflow or negative dims.
mlcc_status_t mlcc_shape_numel(const mlcc_shape_t* shape, int64_t* out_numel);
// Element count without checks (for verified shapes).
int64_t mlcc_shape_numel_unchecked(const mlcc_shape_t* shape);
bool mlcc_shape_equal(const mlcc_shape_t* a, const mlcc_shape_t* b);
// Numpy-style multidirectional broadcast (ONNX Broadcasting.md). Returns
// INVALID_MODEL naming both shapes when they do not broadcast.
mlcc_status_t mlcc_shape_broadcast(const mlcc_shape_t* a, const mlcc_shape_t* b,
                                   mlcc_shape_t* out_shape);
// Formats "[1,3,224,224]" into |buf| (always NUL-terminated); returns buf.
char* mlcc_shape_format(const mlcc_shape_t* shape, char* buf, size_t buf_size);

//===----------------------------------------------------------------------===//
// mlcc_graph_t
//===----------------------------------------------------------------------===//

// Creates an empty graph. Caller owns it; release with mlcc_graph_destroy.
mlcc_status_t mlcc_graph_create(mlcc_graph_t** out_graph);
void mlcc_graph_destroy(mlcc_graph_t* graph);

// Adds a value named |name| (copied). Returns INVALID_MODEL if the name is
// already used, RESOURCE_EXHAUSTED on OOM. ws_offset/weight_offset start at -1.
mlcc_status_t mlcc_graph_add_value(mlcc_graph_t* graph, const char* name,
                                   mlcc_value_kind_t kind, mlcc_value_t** out_value);
// Finds a value by name (borrowed) or NULL. O(1) average.
mlcc_value_t* mlcc_graph_find_value(const mlcc_graph_t* graph, const char* name);
// Makes a fresh unique name "<base>_<n>" and adds an intermediate value.
mlcc_status_t mlcc_graph_add_temp_value(mlcc_graph_t* graph, const char* base,
                                        mlcc_value_t** out_value);
// Adds a constant value with |data| (borrowed if |copy| is false, else copied
// into the arena). Shape and dtype are set from the arguments.
mlcc_status_t mlcc_graph_add_constant(mlcc_graph_t* graph, const char* name,
                                      mlcc_dtype_t dtype, const mlcc_shape_t* shape,
                                      const void* data, bool copy,
                                      mlcc_value_t** out_value);

// Appends a node (topological position is the caller's responsibility).
// Arrays are copied into the arena; |attrs| entries are copied shallowly
// (their arrays must already be arena-owned). Sets producer of outputs.
mlcc_status_t mlcc_graph_add_node(mlcc_graph_t* graph, mlcc_op_t op, int32_t opset,
                                  const char* name, mlcc_value_t* const* inputs,
                                  uint32_t n_inputs, mlcc_value_t* const* outputs,
                                  uint32_t n_outputs, const mlcc_attr_t* attrs,
                                  uint32_t n_attrs, mlcc_node_t** out_node);

// Replaces every use of |from| (node inputs and graph outputs) with |to|.
// If |from| is a graph output, |to| becomes the output under |from|'s name is
// NOT done: callers that bypass an output node must keep the output value.
void mlcc_graph_replace_uses(mlcc_graph_t* graph, mlcc_value_t* from, mlcc_value_t* to);
// Recomputes n_uses from live nodes.
void mlcc_graph_recount_uses(mlcc_graph_t* graph);
// Drops dead nodes from |nodes|, preserving order. Resets kernels.
void mlcc_graph_compact(mlcc_graph_t* graph);
// Re-sorts |nodes| topologically (stable by current position). Returns
// INVALID_MODEL naming a node on the cycle if there is one.
mlcc_status_t mlcc_graph_toposort(mlcc_graph_t* graph);

// Attribute lookup on a node (borrowed) or NULL.
const mlcc_attr_t* mlcc_node_attr(const mlcc_node_t* node, const char* name);
// Typed getters with defaults. Return INVALID_MODEL if the attribute exists
// with another kind; the message names the attribute and both kinds.
mlcc_status_t mlcc_node_attr_int(const mlcc_node_t* node, const char* name,
                                 int64_t default_value, int64_t* out_value);
mlcc_status_t mlcc_node_attr_float(const mlcc_node_t* node, const char* name,
                                   float default_value, float* out_value);
// |*out_value| is borrowed; |default_value| is returned when absent.
mlcc_status_t mlcc_node_attr_string(const mlcc_node_t* node, const char* name,
                                    const char* default_value, const char** out_value);
// Returns count 0 / NULL when absent.
mlcc_status_t mlcc_node_attr_ints(const mlcc_node_t* node, const char* name,
                                  const int64_t** out_ints, uint32_t* out_count);
mlcc_status_t mlcc_node_attr_floats(const mlcc_node_t* node, const char* name,
                                    const float** out_floats, uint32_t* out_count);

// Input |i| of |node| or NULL when absent/omitted.
static inline mlcc_value_t* mlcc_node_input(const mlcc_node_t* node, uint32_t i) {
  return i < node->n_inputs ? node->inputs[i] : NULL;
}
static inline mlcc_value_t* mlcc_node_output(const mlcc_node_t* node, uint32_t i) {
  return i < node->n_outputs ? node->outputs[i] : NULL;
}

// Reads element |i| of a CONSTANT value of any integer dtype as int64
// (for shape inputs such as Reshape's shape). Caller checks bounds/kind.
int64_t mlcc_value_const_i64(const mlcc_value_t* value, int64_t i);
// Same for float dtypes (F32/F64/F16/BF16, the float8 types, float8e8m0 and
// float4e2m1: one code per byte, decoded exactly; NaN and inf where the type has
// them) and ints, converted to double. Other dtypes (and a NULL value or data) read 0.
double mlcc_value_const_f64(const mlcc_value_t* value, int64_t i);
// Byte size numel*dtype_size (values must be inferred).
size_t mlcc_value_byte_size(const mlcc_value_t* value);

// "node #17 'conv_3' (Conv, opset 13)" into |buf|; returns buf.
char* mlcc_node_describe(const mlcc_node_t* node, char* buf, size_t buf_size);
// Annotates |status| with mlcc_node_describe(node). No-op on OK.
mlcc_status_t mlcc_node_annotate(const mlcc_node_t* node, mlcc_status_t status);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_GRAPH_H_

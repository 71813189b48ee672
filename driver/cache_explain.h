// SPDX-License-Identifier: Apache-2.0
// -d explain-cache: why a kernel missed the cache, in terms of the key.
//
// A cache key is a digest: it says *that* something changed, not *what*. So
// whenever a kernel is compiled and stored, the driver also stores a small
// text record of the key's components under a name for the node the kernel
// is built around (mlcc_cache_record_put, <cache>/explain/). When a later
// lookup misses, the record for the same node is read back and compared
// with the components of the kernel now wanted, and the explanation names
// the parts that differ: shape, dtype, attribute, CPU, features, target,
// opt level, ops, or the codegen (the code generator's key format,
// emitters and LLVM) and the mlcc build (the store key's codegen identity).
//
// The node's name is SHA-256 over (the target triple, the model's C name
// --name, the anchor node's ONNX name, or "#<creation index>" when it has
// none). Records are per triple, so CPU and feature changes are compared
// within one target, and two targets built in turn do not mix.
//
// Record format, one component per line, "<tag>\t<fields...>":
//   node    <ONNX name or #id>         ops    <Conv+Relu>
//   triple  <triple>   cpu <cpu>   features <features>   opt <level>
//   slot    <label>\t<dtype>\t<shape>   one per input/output of each node
//                                       ("input 1", "node 2 input 0", "output 0")
//   attr    <label>\t<16 hex digest>     one per attribute ("alpha", "node 1 axis")
//   kernel_key <64 hex>   store_key <64 hex>
// Unknown tags are ignored, so the format can grow.
//
// Thread-safety: thread-compatible; distinct kernels may be described from
// several threads (the graph is only read).
#ifndef MLCC_DRIVER_CACHE_EXPLAIN_H_
#define MLCC_DRIVER_CACHE_EXPLAIN_H_

#include <stddef.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/codegen/codegen.h"

#ifdef __cplusplus
extern "C" {
#endif

// Describes kernel |kernel_index| of |graph| under |options| (target, opt
// level, name). |kernel_key| and |store_key| are its keys (64 hex each).
// On success |*out_text| is the malloc'ed record (caller frees), |out_id|
// the record's name (64 hex) and |out_label| (may be NULL, |label_size|
// bytes) "node 'NAME', Conv+Relu". RESOURCE_EXHAUSTED on OOM;
// INVALID_ARGUMENT for a kernel index out of range.
mlcc_status_t mlcc_cache_explain_describe(const mlcc_graph_t* graph, uint32_t kernel_index,
                                          const mlcc_codegen_options_t* options,
                                          const char* kernel_key, const char* store_key,
                                          char out_id[65], char** out_text, char* out_label,
                                          size_t label_size);

// Compares the record |previous| (NULL: none) with |current| and writes one
// line into |buf|: "no previous entry for this node", "previous entry for
// this node (mlcc_k_...): changed: shape (output 0 float32[1,8] ->
// float32[1,16]), CPU (x86-64-v3 -> skylake)", or, when every component
// and both keys are equal, that the entry itself is gone.
void mlcc_cache_explain_diff(const char* previous, const char* current, char* buf,
                             size_t buf_size);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_CACHE_EXPLAIN_H_

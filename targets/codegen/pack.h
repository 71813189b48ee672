// SPDX-License-Identifier: Apache-2.0
// Compile-time weight layouts (DESIGN section 1: pre-packing is done on the
// data at compile time; the layout, recorded as a node attribute, is part of
// the kernel's identity; kernels still take the weights as arguments).
//
// Conv (layout "packed_mr"): attribute MLCC_CONV_PACKED_ATTR = mr (INT > 0)
// on a Conv node means its W constant holds, for every group and every block
// of mr output channels of that group (the last block of a group may be
// shorter: bs = min(mr, mg - block start)), the block's weights as
// [cg*K][bs] (K = product of the kernel dims) at the block's usual offset
// start_oc*cg*K. Same shape, dtype and element count as the ONNX layout.
// Written by the pack-weights pass, read by the Conv emitter (every path).
#ifndef MLCC_TARGETS_CODEGEN_PACK_H_
#define MLCC_TARGETS_CODEGEN_PACK_H_

#include <stdint.h>

#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_CONV_PACKED_ATTR "mlcc.packed_mr"

// Block size mr the Conv emitter's vector micro-kernel would use for |node|
// on |target| (channel-vector kernel: mr = NV*L channels per block, read as
// NV vectors per (ic, tap); pixel-vector kernel: mr broadcast rows), or 0 when packing does not apply (not a float32 Conv, the
// scalar path, one channel per block, or already packed). Pure; no errors.
int64_t mlcc_conv_pack_mr(const mlcc_node_t* node, const mlcc_target_t* target);

// Writes W (float32, ONNX layout [m, per_oc] with per_oc = cg*K, |group|
// dividing |m|) in the packed layout for |mr| > 0 into |out| (m*per_oc
// floats, must not alias |w|). Both are float-aligned host arrays.
void mlcc_conv_pack_weights(const float* w, int64_t m, int64_t group, int64_t per_oc, int64_t mr,
                            float* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_CODEGEN_PACK_H_

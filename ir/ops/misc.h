// SPDX-License-Identifier: Apache-2.0
// Shared between the conformance ops' shape inference (ir/ops/misc.c) and
// their emitters (targets/codegen/emit_misc.c): the parsed form of an Einsum
// equation. Thread-compatible (plain data).
#ifndef MLCC_IR_OPS_MISC_H_
#define MLCC_IR_OPS_MISC_H_

#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_EINSUM_MAX_INPUTS 8
// Labels 0..51 are the letters a-z, A-Z; 52.. are the dims an ellipsis
// covers, counted from the right (52 = last ellipsis dim).
#define MLCC_EINSUM_MAX_LABELS (52 + MLCC_MAX_RANK)

typedef struct mlcc_einsum_t {
  uint32_t n_inputs;
  int32_t in_rank[MLCC_EINSUM_MAX_INPUTS];
  int32_t in_labels[MLCC_EINSUM_MAX_INPUTS][MLCC_MAX_RANK];
  int32_t out_rank;
  int32_t out_labels[MLCC_MAX_RANK];
  int32_t n_sum;                              // labels summed over
  int32_t sum_labels[MLCC_EINSUM_MAX_LABELS];
  int64_t label_dim[MLCC_EINSUM_MAX_LABELS];  // -1: label unused
} mlcc_einsum_t;

// Parses |node|'s 'equation' attribute against the shapes of its (inferred)
// inputs into |*out|. Explicit ("ij,jk->ik") and implicit ("ij,jk") forms,
// spaces, repeated labels (diagonals) and "..." (broadcast) are supported.
// Errors: INVALID_MODEL for malformed equations or dims that disagree,
// UNIMPLEMENTED beyond MLCC_EINSUM_MAX_INPUTS inputs.
mlcc_status_t mlcc_einsum_parse(const mlcc_node_t* node, mlcc_einsum_t* out);

// The geometry of a RotaryEmbedding-23 node. X is viewed as [B, S, H, D]
// with element (b, s, h, d) at b*x_b + s*x_s + h*x_h + d: X [B, H, S, D]
// (rank 4) or [B, S, H*D] (rank 3, H = num_heads). The first |rot| of the D
// values of each head rotate (pairs (j, j + rot/2), or (2j, 2j + 1) when
// |interleaved|); the rest pass through. The caches are [P, rot/2] indexed
// by position_ids [B, S] (|has_pos|), else [B, S, rot/2].
typedef struct mlcc_rotary_t {
  int64_t batch, seq, heads, head_size, rot;
  int64_t x_b, x_s, x_h;
  int64_t positions;  // P: rows of the caches with position_ids
  bool has_pos, interleaved;
} mlcc_rotary_t;

// Resolves |node| (RotaryEmbedding, inputs inferred) into |*out|.
// Errors: INVALID_MODEL for shapes or attributes the spec rejects.
mlcc_status_t mlcc_rotary_resolve(const mlcc_node_t* node, mlcc_rotary_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_MISC_H_

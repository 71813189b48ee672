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

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_MISC_H_

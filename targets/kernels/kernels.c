// SPDX-License-Identifier: Apache-2.0
// The op -> emitter table: the emit column of ir/ops.def (kernels.h).
#include "targets/kernels/kernels.h"

static const mlcc_emitter_t* const emitter_table[] = {
#define MLCC_OP(id, dom, nm, omin, omax, imin, imax, outmin, outmax, shp, inf, emt, ev, fl) \
  [MLCC_OP_##id] = &emt,
#include "ir/ops.def"
#undef MLCC_OP
};

_Static_assert(sizeof(emitter_table) / sizeof(emitter_table[0]) == MLCC_OP_COUNT,
               "ops.def emitter table size does not match MLCC_OP_COUNT");

const mlcc_emitter_t* mlcc_emitter(mlcc_op_t op) {
  if ((unsigned)op >= (unsigned)MLCC_OP_COUNT) return NULL;
  return emitter_table[op];
}

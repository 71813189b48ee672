// SPDX-License-Identifier: Apache-2.0
// Operator descriptor table and lookup, generated from ops.def.
#include "ir/ops.h"

#include <string.h>

static const mlcc_op_desc_t op_table[] = {
#define MLCC_OP(id, dom, nm, omin, omax, imin, imax, outmin, outmax, shp, inf, emt, ev, fl) \
  [MLCC_OP_##id] = {dom, nm, omin, omax, imin, imax, outmin, outmax, shp, ev, fl, inf},
#include "ir/ops.def"
#undef MLCC_OP
};

// One row per enum value: a row missing from the table (or an extra one)
// breaks the build here.
_Static_assert(sizeof(op_table) / sizeof(op_table[0]) == MLCC_OP_COUNT,
               "ops.def table size does not match MLCC_OP_COUNT");

const mlcc_op_desc_t* mlcc_op_desc(mlcc_op_t op) {
  if ((unsigned)op >= (unsigned)MLCC_OP_COUNT) return NULL;
  return &op_table[op];
}

const char* mlcc_op_name(mlcc_op_t op) {
  if ((unsigned)op >= (unsigned)MLCC_OP_COUNT) return "<invalid op>";
  return op_table[op].name;
}

// "ai.onnx" is the default domain spelled out.
static const char* canonical_domain(const char* domain) {
  if (domain == NULL || strcmp(domain, "ai.onnx") == 0) return "";
  return domain;
}

mlcc_op_lookup_t mlcc_op_lookup(const char* domain, const char* name, int32_t opset,
                                mlcc_op_t* out_op) {
  *out_op = MLCC_OP_COUNT;
  if (name == NULL) return MLCC_OP_LOOKUP_UNKNOWN_OP;
  const char* dom = canonical_domain(domain);
  bool found = false;
  for (int i = 0; i < MLCC_OP_COUNT; ++i) {
    const mlcc_op_desc_t* d = &op_table[i];
    if (strcmp(d->name, name) != 0) continue;
    if (strcmp(canonical_domain(d->domain), dom) != 0) continue;
    if (opset >= d->opset_min && opset <= d->opset_max) {
      *out_op = (mlcc_op_t)i;
      return MLCC_OP_LOOKUP_OK;
    }
    // Keep the first matching row for the range message; a later row may
    // still cover |opset|.
    if (!found) {
      *out_op = (mlcc_op_t)i;
      found = true;
    }
  }
  return found ? MLCC_OP_LOOKUP_BAD_OPSET : MLCC_OP_LOOKUP_UNKNOWN_OP;
}

// SPDX-License-Identifier: Apache-2.0
// Schedule spaces (targets/kernels/kernels.h): validity, enumeration and
// formatting of the sched[] parameters of a kernel's anchor node, generic
// over the spaces the emitter families declare.
#include <stdio.h>
#include <string.h>

#include "targets/kernels/kernels.h"

// Most values one parameter lists (matmul's rows: 1..8).
enum { kMaxValues = 16 };

const mlcc_sched_space_t* mlcc_sched_space(const mlcc_node_t* node) {
  if (node == NULL) return NULL;
  const mlcc_emitter_t* e = mlcc_emitter(node->op);
  return e != NULL ? e->sched_space : NULL;
}

bool mlcc_sched_is_default(const int32_t sched[MLCC_SCHED_MAX_PARAMS]) {
  for (int p = 0; p < MLCC_SCHED_MAX_PARAMS; ++p) {
    if (sched[p] != 0) return false;
  }
  return true;
}

bool mlcc_sched_valid(const mlcc_node_t* node, const mlcc_target_t* target,
                      const int32_t sched[MLCC_SCHED_MAX_PARAMS]) {
  if (mlcc_sched_is_default(sched)) return true;
  const mlcc_sched_space_t* sp = mlcc_sched_space(node);
  if (sp == NULL || sp->values == NULL || sp->n_params > MLCC_SCHED_MAX_PARAMS) return false;
  for (uint32_t p = 0; p < MLCC_SCHED_MAX_PARAMS; ++p) {
    if (sched[p] == 0) continue;
    if (p >= sp->n_params) return false;
    int32_t vals[kMaxValues];
    uint32_t n = sp->values(node, target, p, vals, kMaxValues);
    if (n > kMaxValues) n = kMaxValues;
    bool found = false;
    for (uint32_t i = 0; i < n; ++i) found = found || vals[i] == sched[p];
    if (!found) return false;
  }
  return sp->valid == NULL || sp->valid(node, target, sched);
}

uint32_t mlcc_sched_enumerate(const mlcc_node_t* node, const mlcc_target_t* target,
                              int32_t (*out)[MLCC_SCHED_MAX_PARAMS], uint32_t cap) {
  uint32_t total = 0;
  if (cap > 0) memset(out[0], 0, sizeof(out[0]));
  ++total;
  const mlcc_sched_space_t* sp = mlcc_sched_space(node);
  if (sp == NULL || sp->values == NULL || sp->n_params == 0 ||
      sp->n_params > MLCC_SCHED_MAX_PARAMS) {
    return total;
  }
  // Per parameter: its explicit values, or just 0 when it does not apply.
  int32_t vals[MLCC_SCHED_MAX_PARAMS][kMaxValues];
  uint32_t nv[MLCC_SCHED_MAX_PARAMS];
  bool any = false;
  for (uint32_t p = 0; p < sp->n_params; ++p) {
    nv[p] = sp->values(node, target, p, vals[p], kMaxValues);
    if (nv[p] > kMaxValues) nv[p] = kMaxValues;
    if (nv[p] == 0) {
      vals[p][0] = 0;
      nv[p] = 1;
    } else {
      any = true;
    }
  }
  if (!any) return total;
  uint32_t idx[MLCC_SCHED_MAX_PARAMS] = {0};
  for (;;) {
    int32_t pt[MLCC_SCHED_MAX_PARAMS] = {0};
    for (uint32_t p = 0; p < sp->n_params; ++p) pt[p] = vals[p][idx[p]];
    if (!mlcc_sched_is_default(pt) && (sp->valid == NULL || sp->valid(node, target, pt))) {
      if (total < cap) memcpy(out[total], pt, sizeof(pt));
      ++total;
    }
    uint32_t p = sp->n_params;
    while (p > 0) {
      --p;
      if (++idx[p] < nv[p]) break;
      idx[p] = 0;
      if (p == 0) return total;
    }
  }
}

char* mlcc_sched_format(const mlcc_node_t* node, const int32_t sched[MLCC_SCHED_MAX_PARAMS],
                        char* buf, size_t buf_size) {
  if (buf_size == 0) return buf;
  buf[0] = '\0';
  const mlcc_sched_space_t* sp = mlcc_sched_space(node);
  size_t used = 0;
  for (uint32_t p = 0; p < MLCC_SCHED_MAX_PARAMS; ++p) {
    if (sched[p] == 0) continue;
    const char* name = sp != NULL && p < sp->n_params ? sp->names[p] : "?";
    int w = snprintf(buf + used, buf_size - used, "%s%s=%d", used ? "," : "", name,
                     (int)sched[p]);
    if (w < 0 || (size_t)w >= buf_size - used) break;
    used += (size_t)w;
  }
  if (used == 0) snprintf(buf, buf_size, "default");
  return buf;
}

// SPDX-License-Identifier: Apache-2.0
// Kernel cache keys: SHA-256 over a canonical, versioned serialization of
// everything that changes a kernel's code. Never weights, never names.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ir/dtype.h"
#include "targets/codegen/codegen.h"
#include "targets/emit/emit.h"
#include "targets/kernels/kernels.h"
#include "targets/llvm/llvm_ctx.h"

// Bump whenever the serialization below or the kernel ABI changes.
#define KEY_FORMAT "mlcc-kernel-key-v4"

// Bump whenever the serialization of the tuning record keys changes.
#define TUNE_KEY_FORMAT "mlcc-tune-key-v1"

#ifndef MLCC_VERSION
#define MLCC_VERSION "0.0.0"
#endif

typedef struct key_buf_t {
  uint8_t* data;
  size_t size, cap;
  bool oom;
} key_buf_t;

static void put_bytes(key_buf_t* b, const void* p, size_t n) {
  if (b->oom) return;
  if (b->size + n > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->size + n) cap *= 2;
    uint8_t* nd = realloc(b->data, cap);
    if (nd == NULL) {
      b->oom = true;
      return;
    }
    b->data = nd;
    b->cap = cap;
  }
  if (n) memcpy(b->data + b->size, p, n);
  b->size += n;
}

// Little-endian fixed-width integers keep the encoding host-independent.
static void put_u64(key_buf_t* b, uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; ++i) le[i] = (uint8_t)(v >> (8 * i));
  put_bytes(b, le, 8);
}
static void put_i64(key_buf_t* b, int64_t v) { put_u64(b, (uint64_t)v); }
static void put_str(key_buf_t* b, const char* s) {
  size_t n = s ? strlen(s) : 0;
  put_u64(b, n);
  put_bytes(b, s, n);
}
static void put_blob(key_buf_t* b, const void* p, size_t n) {
  put_u64(b, n);
  put_bytes(b, p, n);
}
static void put_f32(key_buf_t* b, float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  put_u64(b, bits);
}

static void put_shape(key_buf_t* b, const mlcc_shape_t* s) {
  put_i64(b, s->rank);
  for (int32_t i = 0; i < s->rank; ++i) put_i64(b, s->dims[i]);
}

static int attr_cmp(const void* a, const void* b) {
  const mlcc_attr_t* x = *(const mlcc_attr_t* const*)a;
  const mlcc_attr_t* y = *(const mlcc_attr_t* const*)b;
  return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static void put_attr(key_buf_t* b, const mlcc_attr_t* a) {
  put_str(b, a->name);
  put_i64(b, a->kind);
  switch (a->kind) {
    case MLCC_ATTR_INT: put_i64(b, a->i); break;
    case MLCC_ATTR_FLOAT: put_f32(b, a->f); break;
    case MLCC_ATTR_STRING: put_blob(b, a->s, a->s ? a->s_len : 0); break;
    case MLCC_ATTR_INTS:
      put_u64(b, a->count);
      for (uint32_t i = 0; i < a->count; ++i) put_i64(b, a->ints[i]);
      break;
    case MLCC_ATTR_FLOATS:
      put_u64(b, a->count);
      for (uint32_t i = 0; i < a->count; ++i) put_f32(b, a->floats[i]);
      break;
    case MLCC_ATTR_STRINGS:
      put_u64(b, a->count);
      for (uint32_t i = 0; i < a->count; ++i) put_str(b, a->strings[i]);
      break;
    case MLCC_ATTR_TENSOR: {
      put_i64(b, a->t_dtype);
      put_shape(b, &a->t_shape);
      int64_t n = mlcc_shape_numel_unchecked(&a->t_shape);
      size_t bytes = a->t_data ? (size_t)n * mlcc_dtype_size(a->t_dtype) : 0;
      put_blob(b, a->t_data, bytes);
      break;
    }
    case MLCC_ATTR_GRAPH:  // control flow is unrolled before codegen; no kernel has one
      break;
  }
}

// Role of |v| in the kernel |k|: its argument index, -2 - j for the output
// of chain node j (chain-internal), -1 if absent.
static int64_t value_role(const mlcc_kernel_t* k, const mlcc_value_t* v,
                          const mlcc_value_t** args, uint32_t n_args) {
  if (v == NULL) return -1;
  for (uint32_t i = 0; i < n_args; ++i) {
    if (args[i] == v) return i;
  }
  for (uint32_t j = 0; j < k->n_nodes; ++j) {
    if (mlcc_node_output(k->nodes[j], 0) == v) return -2 - (int64_t)j;
  }
  return -2;
}

static void put_slot(key_buf_t* b, const mlcc_kernel_t* k, const mlcc_value_t* v,
                     const mlcc_value_t** args, uint32_t n_args) {
  put_i64(b, v != NULL);
  if (v == NULL) return;
  put_i64(b, v->dtype);
  put_shape(b, &v->shape);
  put_i64(b, value_role(k, v, args, n_args));
}

// What a serialization is for: the kernel key, or one of the two tuning
// record keys (mlcc_codegen_tune_key), which leave out mlcc's and LLVM's
// versions, the emit versions and the schedule, and the CPU for the
// features-only key.
typedef enum key_mode_e { KEY_KERNEL = 0, KEY_TUNE_CPU, KEY_TUNE_FEATURES } key_mode_t;

static mlcc_status_t serialize_kernel(const mlcc_kernel_t* k,
                                      const mlcc_codegen_options_t* options, key_mode_t mode,
                                      key_buf_t* b) {
  const mlcc_target_t* t = options->target;
  if (mode == KEY_KERNEL) {
    put_str(b, KEY_FORMAT);
    put_str(b, MLCC_VERSION);
    put_str(b, mlcc_codegen_llvm_version());
  } else {
    const mlcc_sched_space_t* sp = mlcc_sched_space(k->nodes[0]);
    put_str(b, TUNE_KEY_FORMAT);
    put_i64(b, sp ? sp->version : 0);
  }
  put_str(b, t->triple);
  put_str(b, mode == KEY_TUNE_FEATURES ? "" : t->cpu);
  put_str(b, t->features);
  put_i64(b, options->opt_level);
  uint32_t n_args = mlcc_kernel_args(k, NULL, 0);
  // A kernel always has an output argument: 0 means out of memory.
  if (n_args == 0 && k->n_nodes > 0) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  const mlcc_value_t** args = calloc(n_args ? n_args : 1, sizeof(*args));
  if (args == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (mlcc_kernel_args(k, args, n_args) != n_args) {  // out of memory
    free(args);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  put_u64(b, k->n_nodes);
  for (uint32_t i = 0; i < k->n_nodes; ++i) {
    const mlcc_node_t* n = k->nodes[i];
    const mlcc_op_desc_t* d = mlcc_op_desc(n->op);
    put_str(b, d ? d->name : "?");
    put_str(b, d ? d->domain : "?");
    put_i64(b, n->opset);
    put_i64(b, d && mode == KEY_KERNEL ? d->emit_version : 0);
    put_i64(b, i == 0 ? 0 : k->carried_input[i]);
    // Attributes sorted by name.
    const mlcc_attr_t* small[16];
    const mlcc_attr_t** sorted = small;
    if (n->n_attrs > 16) {
      sorted = calloc(n->n_attrs, sizeof(*sorted));
      if (sorted == NULL) {
        free(args);
        return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
      }
    }
    for (uint32_t a = 0; a < n->n_attrs; ++a) sorted[a] = &n->attrs[a];
    qsort(sorted, n->n_attrs, sizeof(*sorted), attr_cmp);
    put_u64(b, n->n_attrs);
    for (uint32_t a = 0; a < n->n_attrs; ++a) put_attr(b, sorted[a]);
    if (sorted != small) free(sorted);
    put_u64(b, n->n_inputs);
    for (uint32_t s = 0; s < n->n_inputs; ++s) {
      const mlcc_value_t* v = n->inputs[s];
      put_slot(b, k, v, args, n_args);
      if (v != NULL && d != NULL && s < 32 && (d->shape_inputs >> s) & 1u) {
        // The kernel is specialized on this constant's values.
        if (v->kind == MLCC_VALUE_CONSTANT && v->data != NULL) {
          put_i64(b, 1);
          put_blob(b, v->data, mlcc_value_byte_size(v));
        } else {
          put_i64(b, 0);
        }
      }
    }
    put_u64(b, n->n_outputs);
    for (uint32_t o = 0; o < n->n_outputs; ++o) put_slot(b, k, n->outputs[o], args, n_args);
  }
  // An in-place kernel writes its output through the input's pointer
  // (mlcc_kernel_t.inplace_input): other code. Its argument index, else -1.
  put_i64(b, k->inplace_input != NULL ? value_role(k, k->inplace_input, args, n_args) : -1);
  // The schedule, only when it is not the default: an untuned kernel keeps
  // the key it had before schedules existed (docs/tuning.md).
  const int32_t* sched = k->nodes[0]->sched;
  if (mode == KEY_KERNEL && !mlcc_sched_is_default(sched)) {
    put_str(b, "sched");
    for (int p = 0; p < MLCC_SCHED_MAX_PARAMS; ++p) put_i64(b, sched[p]);
  }
  free(args);
  if (b->oom) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  return mlcc_ok_status();
}

static mlcc_status_t digest_kernel(const mlcc_graph_t* graph, uint32_t kernel_index,
                                   const mlcc_codegen_options_t* options, key_mode_t mode,
                                   char out_key_hex[65]) {
  memset(out_key_hex, 0, 65);
  if (graph == NULL || options == NULL || options->target == NULL ||
      kernel_index >= graph->n_kernels) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "kernel %u out of range (%u kernels)",
                            kernel_index, graph ? graph->n_kernels : 0);
  }
  const mlcc_kernel_t* k = &graph->kernels[kernel_index];
  if (k->n_nodes == 0) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "kernel %u has no nodes", kernel_index);
  }
  key_buf_t b = {0};
  mlcc_status_t s = serialize_kernel(k, options, mode, &b);
  if (!mlcc_status_is_ok(s)) {
    free(b.data);
    return s;
  }
  uint8_t md[EVP_MAX_MD_SIZE];
  unsigned md_len = 0;
  int ok = EVP_Digest(b.data, b.size, md, &md_len, EVP_sha256(), NULL);
  free(b.data);
  if (!ok || md_len != 32) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "SHA-256 failed");
  }
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < 32; ++i) {
    out_key_hex[2 * i] = hex[md[i] >> 4];
    out_key_hex[2 * i + 1] = hex[md[i] & 15];
  }
  out_key_hex[64] = '\0';
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_kernel_key(const mlcc_graph_t* graph, uint32_t kernel_index,
                                      const mlcc_codegen_options_t* options,
                                      char out_key_hex[65]) {
  return digest_kernel(graph, kernel_index, options, KEY_KERNEL, out_key_hex);
}

mlcc_status_t mlcc_codegen_tune_key(const mlcc_graph_t* graph, uint32_t kernel_index,
                                    const mlcc_codegen_options_t* options, bool with_cpu,
                                    char out_key_hex[65]) {
  return digest_kernel(graph, kernel_index, options,
                       with_cpu ? KEY_TUNE_CPU : KEY_TUNE_FEATURES, out_key_hex);
}

void mlcc_codegen_kernel_symbol(const char key_hex[65], char out_symbol[40]) {
  snprintf(out_symbol, 40, "mlcc_k_%.24s", key_hex);
}

mlcc_status_t mlcc_codegen_kernel_symbols(const mlcc_graph_t* graph,
                                          const mlcc_codegen_options_t* options,
                                          char (**out_symbols)[40]) {
  *out_symbols = NULL;
  char (*syms)[40] = calloc(graph->n_kernels ? graph->n_kernels : 1, sizeof(*syms));
  if (syms == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    char key[65];
    mlcc_status_t s = mlcc_codegen_kernel_key(graph, k, options, key);
    if (!mlcc_status_is_ok(s)) {
      free(syms);
      return s;
    }
    mlcc_codegen_kernel_symbol(key, syms[k]);
  }
  *out_symbols = syms;
  return mlcc_ok_status();
}

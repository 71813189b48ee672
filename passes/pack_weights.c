// SPDX-License-Identifier: Apache-2.0
// pack-weights: rewrites the constant weights of Conv nodes into the layout
// their micro-kernel reads (targets/kernels/pack.h) and records the layout
// on the node as an attribute, so it is part of the kernel's identity (the
// kernel key serializes every attribute). The data transform runs here, at
// compile time; kernels still take the (packed) weights as arguments.
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "passes/pass.h"
#include "targets/kernels/pack.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory while packing weights");
}

// Adds |data| (arena memory of |graph|, borrowed) as a float32 constant of
// |shape| named after |like| with an unused suffix.
// Sets *src to |w|'s float32 data, read in place unless the borrowed bytes
// are misaligned for float: then to a malloc'ed copy of |bytes| that the
// caller frees (*copy). False when that copy cannot be allocated.
static bool float_data(const mlcc_value_t* w, size_t bytes, const float** src, float** copy) {
  *src = (const float*)w->data;
  *copy = NULL;
  if (((uintptr_t)w->data % _Alignof(float)) == 0) return true;
  *copy = (float*)malloc(bytes);
  if (*copy == NULL) return false;
  memcpy(*copy, w->data, bytes);
  *src = *copy;
  return true;
}

static mlcc_status_t add_packed_constant(mlcc_graph_t* graph, const mlcc_value_t* like,
                                         const mlcc_shape_t* shape, const float* data,
                                         mlcc_value_t** out_value) {
  const char* base = like->name ? like->name : "w";
  size_t len = strlen(base) + 32;
  char* name = (char*)malloc(len);
  if (name == NULL) return oom();
  for (uint32_t n = 0;; ++n) {
    snprintf(name, len, "%s_packed_%u", base, n);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_status_t s = mlcc_graph_add_constant(graph, name, MLCC_DTYPE_F32, shape, data,
                                            false, out_value);
  free(name);
  return s;
}

// Packs one Conv's weights for block size |mr|. The node is untouched on
// failure.
static mlcc_status_t pack_conv(mlcc_graph_t* graph, mlcc_node_t* conv, int64_t mr) {
  mlcc_value_t* w = conv->inputs[1];
  int64_t numel = mlcc_shape_numel_unchecked(&w->shape);
  int64_t m = w->shape.dims[0];
  int64_t group = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(conv, "group", 1, &group));
  if (m <= 0 || numel <= 0 || group <= 0 || m % group != 0 || numel % m != 0) {
    return mlcc_ok_status();  // nothing sensible to pack; the emitter reports bad models
  }
  size_t bytes = (size_t)numel * sizeof(float);
  // Pack straight into the graph's arena (one copy of the weights, not three:
  // this pass runs on every build, warm cache or not). The source is read in
  // place unless the borrowed bytes are misaligned for float.
  float* dst = (float*)mlcc_arena_alloc(&graph->arena, bytes, 64);
  if (dst == NULL) return oom();
  const float* src = NULL;
  float* copy = NULL;
  if (!float_data(w, bytes, &src, &copy)) return oom();
  mlcc_conv_pack_weights(src, m, group, numel / m, mr, dst);
  free(copy);
  mlcc_value_t* packed = NULL;
  MLCC_RETURN_IF_ERROR(add_packed_constant(graph, w, &w->shape, dst, &packed));
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
      &graph->arena, (conv->n_attrs + 1) * sizeof(*attrs), _Alignof(mlcc_attr_t));
  if (attrs == NULL) return oom();
  if (conv->n_attrs > 0) memcpy(attrs, conv->attrs, conv->n_attrs * sizeof(*attrs));
  mlcc_attr_t* a = &attrs[conv->n_attrs];
  memset(a, 0, sizeof(*a));
  a->name = MLCC_CONV_PACKED_ATTR;
  a->kind = MLCC_ATTR_INT;
  a->i = mr;
  // Splice: nothing below can fail.
  conv->attrs = attrs;
  conv->n_attrs++;
  conv->inputs[1] = packed;
  return mlcc_ok_status();
}

// Transforms one 3x3 Conv's weights into the Winograd layout {m, mr}
// (pack.h): the packed constant is [M, C, m+2, m+2] and the node gets the
// MLCC_CONV_WINOGRAD_ATTR attribute. The node is untouched on failure.
static mlcc_status_t pack_conv_winograd(mlcc_graph_t* graph, mlcc_node_t* conv, int64_t m,
                                        int64_t mr) {
  mlcc_value_t* w = conv->inputs[1];
  int64_t mo = w->shape.dims[0], c = w->shape.dims[1], alpha = m + 2;
  mlcc_shape_t shape = {.rank = 4, .dims = {mo, c, alpha, alpha}};
  size_t bytes = (size_t)(mo * c * alpha * alpha) * sizeof(float);
  float* dst = (float*)mlcc_arena_alloc(&graph->arena, bytes, 64);
  int64_t* ints = (int64_t*)mlcc_arena_alloc(&graph->arena, 2 * sizeof(int64_t),
                                             _Alignof(int64_t));
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
      &graph->arena, (conv->n_attrs + 1) * sizeof(*attrs), _Alignof(mlcc_attr_t));
  if (dst == NULL || ints == NULL || attrs == NULL) return oom();
  size_t wbytes = (size_t)(mo * c * 9) * sizeof(float);
  const float* src = NULL;
  float* copy = NULL;
  if (!float_data(w, wbytes, &src, &copy)) return oom();
  mlcc_conv_winograd_pack_weights(src, mo, c, m, mr, dst);
  free(copy);
  mlcc_value_t* packed = NULL;
  MLCC_RETURN_IF_ERROR(add_packed_constant(graph, w, &shape, dst, &packed));
  if (conv->n_attrs > 0) memcpy(attrs, conv->attrs, conv->n_attrs * sizeof(*attrs));
  mlcc_attr_t* a = &attrs[conv->n_attrs];
  memset(a, 0, sizeof(*a));
  ints[0] = m;
  ints[1] = mr;
  a->name = MLCC_CONV_WINOGRAD_ATTR;
  a->kind = MLCC_ATTR_INTS;
  a->count = 2;
  a->ints = ints;
  // Splice: nothing below can fail.
  conv->attrs = attrs;
  conv->n_attrs++;
  conv->inputs[1] = packed;
  return mlcc_ok_status();
}

// Stores a constant Gemm B [N, K] (transB = 1) as a new constant [K, N] and
// sets the node's transB to 0 (mlcc_gemm_transpose_b_wins). The node is
// untouched on failure; a B shared with other nodes is not modified.
static mlcc_status_t pack_gemm_transpose_b(mlcc_graph_t* graph, mlcc_node_t* gemm) {
  mlcc_value_t* w = gemm->inputs[1];
  int64_t n = w->shape.dims[0], k = w->shape.dims[1];
  size_t bytes = (size_t)(n * k) * sizeof(float);
  float* dst = (float*)mlcc_arena_alloc(&graph->arena, bytes, 64);
  mlcc_attr_t* attrs = (mlcc_attr_t*)mlcc_arena_alloc(
      &graph->arena, (gemm->n_attrs + 1) * sizeof(*attrs), _Alignof(mlcc_attr_t));
  if (dst == NULL || attrs == NULL) return oom();
  const float* src = NULL;
  float* copy = NULL;
  if (!float_data(w, bytes, &src, &copy)) return oom();
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) dst[kk * n + j] = src[j * k + kk];
  }
  free(copy);
  mlcc_shape_t shape = {.rank = 2, .dims = {k, n}};
  mlcc_value_t* packed = NULL;
  MLCC_RETURN_IF_ERROR(add_packed_constant(graph, w, &shape, dst, &packed));
  // transB = 0 is the default: drop the attribute (the printed IR and the
  // kernel key then read like a Gemm exported with B as [K, N]).
  uint32_t na = 0;
  for (uint32_t i = 0; i < gemm->n_attrs; ++i) {
    if (strcmp(gemm->attrs[i].name, "transB") != 0) attrs[na++] = gemm->attrs[i];
  }
  // Splice: nothing below can fail.
  gemm->attrs = attrs;
  gemm->n_attrs = na;
  gemm->inputs[1] = packed;
  return mlcc_ok_status();
}

// Stores the constant B of float32 Gemms with transB = 1 as [K, N] where the
// vector micro-kernel then takes them (mlcc_gemm_transpose_b_wins), and packs
// every float32 Conv whose W is a constant and whose kernel uses the
// vector micro-kernel on ctx->target: the Winograd layout for the 3x3 convs
// where the Winograd kernel wins (mlcc_conv_winograd_choose), else the
// direct kernels' packed_mr layout. Constants shared by several nodes are
// never modified (each Conv gets its own packed copy; orphans are not
// emitted). Needs the target (the block size depends on its vector unit).
mlcc_status_t mlcc_pass_pack_weights(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                     bool* out_changed) {
  *out_changed = false;
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* node = graph->nodes[i];
    if (node->dead || node->n_inputs < 2) continue;
    mlcc_value_t* w = node->inputs[1];
    if (node->op == MLCC_OP_GEMM) {
      if (w == NULL || w->kind != MLCC_VALUE_CONSTANT || w->data == NULL ||
          !mlcc_gemm_transpose_b_wins(node, ctx->target)) {
        continue;
      }
      mlcc_status_t s = pack_gemm_transpose_b(graph, node);
      if (s != NULL) return mlcc_node_annotate(node, s);
      *out_changed = true;
      continue;
    }
    if (node->op != MLCC_OP_CONV) continue;
    if (w == NULL || w->kind != MLCC_VALUE_CONSTANT || w->dtype != MLCC_DTYPE_F32 ||
        !w->shape_known || w->data == NULL || w->shape.rank < 3) {
      continue;
    }
    if (mlcc_node_attr(node, MLCC_CONV_WINOGRAD_ATTR) != NULL) continue;  // packed already
    int64_t wm = 0, wmr = 0;
    if (!ctx->no_winograd && mlcc_conv_winograd_choose(node, ctx->target, &wm, &wmr)) {
      mlcc_status_t s = pack_conv_winograd(graph, node, wm, wmr);
      if (s != NULL) return mlcc_node_annotate(node, s);
      *out_changed = true;
      continue;
    }
    int64_t mr = mlcc_conv_pack_mr(node, ctx->target);
    if (mr <= 0) continue;
    mlcc_status_t s = pack_conv(graph, node, mr);
    if (s != NULL) return mlcc_node_annotate(node, s);
    *out_changed = true;
  }
  if (*out_changed) mlcc_graph_recount_uses(graph);
  return mlcc_ok_status();
}

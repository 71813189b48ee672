// SPDX-License-Identifier: Apache-2.0
// Import-time upgrade of legacy-opset nodes; see legacy.h for the rules.
// Facts from the ONNX operator changelog (Add-1/6, PRelu-1/6,
// Gemm-1/6, BatchNormalization-1/6/7, Max-1/6 ...): before opset 7 the
// binary arithmetic, comparison and logic ops broadcast B onto A only
// ("limited broadcast", attribute 'broadcast' and optional 'axis'); opset 7
// switched them to numpy rules.
#include "ir/onnx/legacy.h"

#include <stdio.h>
#include <string.h>

#include "ir/ops.h"

typedef enum legacy_kind_e {
  LEGACY_NONE = 0,
  LEGACY_BINARY,    // limited broadcast of B onto A (opset < 7)
  LEGACY_PRELU,     // per-channel 1-D slope (opset < 7)
  LEGACY_GEMM,      // 'broadcast' attribute (opset < 7)
  LEGACY_BN,        // is_test / spatial (opset < 9)
  LEGACY_VARIADIC,  // Max/Min/Sum/Mean with equal shapes (opset < 8)
} legacy_kind_t;

static legacy_kind_t legacy_kind(const mlcc_node_t* node) {
  switch (node->op) {
    case MLCC_OP_ADD: case MLCC_OP_SUB: case MLCC_OP_MUL: case MLCC_OP_DIV:
    case MLCC_OP_POW: case MLCC_OP_EQUAL: case MLCC_OP_LESS: case MLCC_OP_GREATER:
    case MLCC_OP_AND: case MLCC_OP_OR: case MLCC_OP_XOR:
      return node->opset < 7 ? LEGACY_BINARY : LEGACY_NONE;
    case MLCC_OP_PRELU:
      return node->opset < 7 ? LEGACY_PRELU : LEGACY_NONE;
    case MLCC_OP_GEMM:
      return node->opset < 7 ? LEGACY_GEMM : LEGACY_NONE;
    case MLCC_OP_BATCH_NORMALIZATION:
      return node->opset < 9 ? LEGACY_BN : LEGACY_NONE;
    case MLCC_OP_MAX: case MLCC_OP_MIN: case MLCC_OP_SUM: case MLCC_OP_MEAN:
      return node->opset < 8 ? LEGACY_VARIADIC : LEGACY_NONE;
    default:
      return LEGACY_NONE;
  }
}

// True if upgrading |node| needs the ranks of values the model computes.
static bool needs_shapes(const mlcc_node_t* node, legacy_kind_t kind) {
  if (kind == LEGACY_PRELU) return true;
  if (kind != LEGACY_BINARY || mlcc_node_attr(node, "axis") == NULL) return false;
  const mlcc_attr_t* b = mlcc_node_attr(node, "broadcast");
  return b != NULL && b->kind == MLCC_ATTR_INT && b->i != 0;
}

// Drops attribute |name| from |node| if present (order of the rest kept).
static void remove_attr(mlcc_node_t* node, const char* name) {
  uint32_t w = 0;
  for (uint32_t r = 0; r < node->n_attrs; ++r) {
    if (strcmp(node->attrs[r].name, name) == 0) continue;
    node->attrs[w++] = node->attrs[r];
  }
  node->n_attrs = w;
}

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory upgrading a legacy-opset node");
}

// Routes input |slot| of |node| through a new Unsqueeze (opset 11, 'axes'
// attribute) that inserts |count| size-1 dims at positions |first| ..
// |first|+|count|-1 of its output. With |infer|, the new node is inferred
// right away (its input is known to be).
static mlcc_status_t insert_unsqueeze(mlcc_graph_t* graph, mlcc_node_t* node, uint32_t slot,
                                      int32_t first, int32_t count, bool infer) {
  mlcc_value_t* src = node->inputs[slot];
  int64_t* axes = (int64_t*)mlcc_arena_alloc(&graph->arena, (size_t)count * sizeof(int64_t),
                                             _Alignof(int64_t));
  mlcc_attr_t* attr =
      (mlcc_attr_t*)mlcc_arena_alloc(&graph->arena, sizeof(mlcc_attr_t), _Alignof(mlcc_attr_t));
  if (axes == NULL || attr == NULL) return oom();
  for (int32_t i = 0; i < count; ++i) axes[i] = first + i;
  memset(attr, 0, sizeof(*attr));
  attr->name = "axes";
  attr->kind = MLCC_ATTR_INTS;
  attr->count = (uint32_t)count;
  attr->ints = axes;
  char base[128];
  snprintf(base, sizeof(base), "%.96s__legacy_bcast", src->name ? src->name : "b");
  mlcc_value_t* out = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_graph_add_temp_value(graph, base, &out));
  mlcc_node_t* unsq = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_graph_add_node(graph, MLCC_OP_UNSQUEEZE, 11, node->name, &src, 1,
                                           &out, 1, attr, 1, &unsq));
  node->inputs[slot] = out;
  if (infer) mlcc_status_free(mlcc_op_desc(MLCC_OP_UNSQUEEZE)->infer(unsq));
  return mlcc_ok_status();
}

static int64_t numel_of(const mlcc_shape_t* s) { return mlcc_shape_numel_unchecked(s); }

// True if |node| has the arity its row allows, with every required input
// and output present: what mlcc_graph_verify checks before infer functions
// normally run (they may rely on it). The scratch inference runs before the
// verifier, so it skips nodes failing this (the verifier reports them).
static bool arity_ok(const mlcc_node_t* node) {
  const mlcc_op_desc_t* d = mlcc_op_desc(node->op);
  if (d == NULL || d->infer == NULL) return false;
  if (node->n_inputs < d->in_min || node->n_inputs > d->in_max) return false;
  if (node->n_outputs < d->out_min || node->n_outputs > d->out_max) return false;
  for (uint32_t j = 0; j < d->in_min; ++j) {
    if (node->inputs[j] == NULL) return false;
  }
  for (uint32_t j = 0; j < d->out_min; ++j) {
    if (node->outputs[j] == NULL) return false;
  }
  return true;
}

// Add/Sub/Mul/Div/Pow/Equal/Less/Greater/And/Or/Xor before opset 7.
static mlcc_status_t upgrade_binary(mlcc_graph_t* graph, mlcc_node_t* node, bool infer) {
  int64_t broadcast = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "broadcast", 0, &broadcast));
  const mlcc_attr_t* axis_attr = mlcc_node_attr(node, "axis");
  if (axis_attr != NULL && axis_attr->kind != MLCC_ATTR_INT) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "attribute 'axis' must be an int");
  }
  mlcc_value_t* a = mlcc_node_input(node, 0);
  mlcc_value_t* b = mlcc_node_input(node, 1);
  // Without 'axis' B is suffix-matched, which is what numpy broadcasting
  // does; with broadcast=0 the shapes are equal. Both need no rewrite.
  if (broadcast != 0 && axis_attr != NULL && a != NULL && b != NULL && node->n_inputs == 2) {
    if (!a->shape_known || !b->shape_known) {
      return mlcc_make_status(
          MLCC_STATUS_UNIMPLEMENTED,
          "legacy broadcast with 'axis' needs the ranks of A ('%s') and B ('%s') at import; "
          "one is computed from a shape known only at run time",
          a->name, b->name);
    }
    int32_t ra = a->shape.rank, rb = b->shape.rank;
    bool scalar_like = numel_of(&b->shape) == 1 && rb <= ra;
    if (!scalar_like) {
      int64_t axis = axis_attr->i;
      char sa[128], sb[128];
      if (axis < 0 || axis > (int64_t)ra - rb) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "legacy broadcast 'axis' must be in [0, rank(A) - rank(B)] = "
                                "[0, %d] for A %s and B %s; got %lld",
                                (int)(ra - rb), mlcc_shape_format(&a->shape, sa, sizeof(sa)),
                                mlcc_shape_format(&b->shape, sb, sizeof(sb)), (long long)axis);
      }
      for (int32_t i = 0; i < rb; ++i) {
        int64_t bd = b->shape.dims[i], ad = a->shape.dims[axis + i];
        if (bd != ad && bd != 1) {
          return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                  "legacy broadcast of B %s onto A %s at axis %lld: dim %d of "
                                  "B is %lld, A has %lld there",
                                  mlcc_shape_format(&b->shape, sb, sizeof(sb)),
                                  mlcc_shape_format(&a->shape, sa, sizeof(sa)),
                                  (long long)axis, (int)i, (long long)bd, (long long)ad);
        }
      }
      int32_t trailing = ra - (int32_t)axis - rb;
      if (trailing > 0) {
        MLCC_RETURN_IF_ERROR(insert_unsqueeze(graph, node, 1, rb, trailing, infer));
      }
    }
  }
  remove_attr(node, "broadcast");
  remove_attr(node, "axis");
  remove_attr(node, "consumed_inputs");
  return mlcc_ok_status();
}

// PRelu before opset 7: a 1-D slope of X's channel count applies per channel.
static mlcc_status_t upgrade_prelu(mlcc_graph_t* graph, mlcc_node_t* node, bool infer) {
  mlcc_value_t* x = mlcc_node_input(node, 0);
  mlcc_value_t* slope = mlcc_node_input(node, 1);
  remove_attr(node, "consumed_inputs");
  if (x == NULL || slope == NULL) return mlcc_ok_status();  // infer reports it
  if (slope->shape_known && numel_of(&slope->shape) == 1) return mlcc_ok_status();
  if (!x->shape_known || !slope->shape_known) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "legacy PRelu needs the shapes of X ('%s') and slope ('%s') at "
                            "import to tell a per-channel slope; one is computed from a shape "
                            "known only at run time",
                            x->name, slope->name);
  }
  int32_t rx = x->shape.rank;
  if (slope->shape.rank == 1 && rx > 2 && slope->shape.dims[0] == x->shape.dims[1]) {
    MLCC_RETURN_IF_ERROR(insert_unsqueeze(graph, node, 1, 1, rx - 2, infer));
  }
  return mlcc_ok_status();
}

// BatchNormalization before opset 9: only the inference form is supported.
static mlcc_status_t upgrade_bn(mlcc_node_t* node) {
  if (node->opset < 7) {
    int64_t is_test = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "is_test", 0, &is_test));
    if (is_test == 0) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "BatchNormalization at opset %d with is_test=0 is training mode "
                              "(batch statistics); mlcc compiles inference only",
                              (int)node->opset);
    }
  }
  int64_t spatial = 1;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "spatial", 1, &spatial));
  if (spatial != 1) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "BatchNormalization with spatial=%lld (per-activation statistics) "
                            "is not supported; only spatial=1",
                            (long long)spatial);
  }
  remove_attr(node, "is_test");
  remove_attr(node, "spatial");
  remove_attr(node, "consumed_inputs");
  return mlcc_ok_status();
}

static mlcc_status_t upgrade_node(mlcc_graph_t* graph, mlcc_node_t* node, legacy_kind_t kind,
                                  bool infer) {
  switch (kind) {
    case LEGACY_BINARY: return upgrade_binary(graph, node, infer);
    case LEGACY_PRELU: return upgrade_prelu(graph, node, infer);
    case LEGACY_GEMM:
      remove_attr(node, "broadcast");
      return mlcc_ok_status();
    case LEGACY_BN: return upgrade_bn(node);
    case LEGACY_VARIADIC:
      remove_attr(node, "consumed_inputs");
      return mlcc_ok_status();
    case LEGACY_NONE: break;
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_onnx_upgrade_legacy_node(mlcc_graph_t* graph, mlcc_node_t* node,
                                            mlcc_node_t** out_inserted) {
  *out_inserted = NULL;
  legacy_kind_t kind = legacy_kind(node);
  if (kind == LEGACY_NONE) return mlcc_ok_status();
  uint32_t n0 = graph->n_nodes;
  MLCC_RETURN_IF_ERROR(upgrade_node(graph, node, kind, true));
  if (graph->n_nodes == n0) return mlcc_ok_status();
  if (graph->n_nodes != n0 + 1) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "a legacy rewrite added %u nodes",
                            graph->n_nodes - n0);
  }
  // The Unsqueeze was appended; move it in front of |node| (the reader).
  mlcc_node_t* unsq = graph->nodes[n0];
  uint32_t pos = n0;
  while (pos > 0 && graph->nodes[pos - 1] != node) --pos;
  if (pos == 0) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "legacy rewrite: node not in the graph");
  }
  memmove(graph->nodes + pos, graph->nodes + pos - 1, (n0 - pos + 1) * sizeof(*graph->nodes));
  graph->nodes[pos - 1] = unsq;
  *out_inserted = unsq;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_onnx_upgrade_legacy(mlcc_graph_t* graph) {
  uint32_t n0 = graph->n_nodes;
  bool any = false, shapes = false;
  for (uint32_t i = 0; i < n0; ++i) {
    legacy_kind_t kind = legacy_kind(graph->nodes[i]);
    any |= kind != LEGACY_NONE;
    shapes |= kind != LEGACY_NONE && needs_shapes(graph->nodes[i], kind);
  }
  if (!any) return mlcc_ok_status();
  mlcc_status_t s = mlcc_ok_status();
  // |graph->nodes| may grow (and move) while new Unsqueeze nodes are added;
  // only the original nodes are visited, in topological order.
  for (uint32_t i = 0; i < n0 && s == NULL; ++i) {
    mlcc_node_t* node = graph->nodes[i];
    legacy_kind_t kind = legacy_kind(node);
    if (kind != LEGACY_NONE) {
      s = upgrade_node(graph, node, kind, shapes);
      if (s != NULL) s = mlcc_node_annotate(node, s);
    }
    // Scratch inference: failures only leave later shapes unknown.
    if (s == NULL && shapes && arity_ok(node)) {
      mlcc_status_free(mlcc_op_desc(node->op)->infer(node));
    }
  }
  if (shapes) {
    for (uint32_t v = 0; v < graph->n_values; ++v) {
      mlcc_value_t* val = graph->values[v];
      if (val->kind != MLCC_VALUE_INTERMEDIATE) continue;
      val->dtype = MLCC_DTYPE_UNDEFINED;
      val->shape_known = false;
      memset(&val->shape, 0, sizeof(val->shape));
    }
  }
  if (s == NULL && graph->n_nodes != n0) s = mlcc_graph_toposort(graph);
  return s;
}

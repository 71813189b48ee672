// SPDX-License-Identifier: Apache-2.0
// Graph IR: values with a name index, nodes, attributes, shapes, rewrites.
#include "ir/graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/checked_math.h"

// The public mlcc_graph_t plus private bookkeeping. mlcc_graph_create hands
// out &impl->graph; every graph comes from there, so the cast back is safe.
typedef struct graph_impl_t {
  mlcc_graph_t graph;  // must be first
  // Open-addressing (linear probing) map name -> value; capacity is a power
  // of two kept at most half full. Arena-owned; old tables are abandoned.
  mlcc_value_t** map;
  uint32_t map_cap;
  uint32_t map_count;
  uint32_t next_temp_id;  // suffix counter for mlcc_graph_add_temp_value
} graph_impl_t;

static graph_impl_t* impl_of(const mlcc_graph_t* graph) {
  return (graph_impl_t*)graph;
}

static mlcc_status_t oom(const char* what) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory allocating %s",
                          what);
}

//===----------------------------------------------------------------------===//
// mlcc_shape_t
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_shape_numel(const mlcc_shape_t* shape, int64_t* out_numel) {
  *out_numel = 0;
  if (shape->rank < 0 || shape->rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "rank %d is outside [0, %d]",
                            (int)shape->rank, MLCC_MAX_RANK);
  }
  int64_t n = 1;
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (shape->dims[i] < 0) {
      char buf[256];
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "shape %s has a negative dim %lld at axis %d",
                              mlcc_shape_format(shape, buf, sizeof(buf)),
                              (long long)shape->dims[i], (int)i);
    }
    if (!mlcc_checked_mul_i64(n, shape->dims[i], &n)) {
      char buf[256];
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "element count of shape %s overflows int64",
                              mlcc_shape_format(shape, buf, sizeof(buf)));
    }
  }
  *out_numel = n;
  return mlcc_ok_status();
}

int64_t mlcc_shape_numel_unchecked(const mlcc_shape_t* shape) {
  int64_t n = 1;
  for (int32_t i = 0; i < shape->rank && i < MLCC_MAX_RANK; ++i) n *= shape->dims[i];
  return n;
}

bool mlcc_shape_equal(const mlcc_shape_t* a, const mlcc_shape_t* b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank && i < MLCC_MAX_RANK; ++i) {
    if (a->dims[i] != b->dims[i]) return false;
  }
  return true;
}

mlcc_status_t mlcc_shape_broadcast(const mlcc_shape_t* a, const mlcc_shape_t* b,
                                   mlcc_shape_t* out_shape) {
  memset(out_shape, 0, sizeof(*out_shape));
  char abuf[256], bbuf[256];
  if (a->rank < 0 || a->rank > MLCC_MAX_RANK || b->rank < 0 || b->rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "cannot broadcast shapes of rank %d and %d (max rank %d)",
                            (int)a->rank, (int)b->rank, MLCC_MAX_RANK);
  }
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  mlcc_shape_t r;
  memset(&r, 0, sizeof(r));
  r.rank = rank;
  for (int32_t i = 0; i < rank; ++i) {
    // Align from the right.
    int32_t ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1;
    int64_t db = ib >= 0 ? b->dims[ib] : 1;
    if (da == db || db == 1) {
      r.dims[i] = da;
    } else if (da == 1) {
      r.dims[i] = db;
    } else {
      return mlcc_make_status(
          MLCC_STATUS_INVALID_MODEL,
          "shapes %s and %s do not broadcast: output axis %d has %lld vs %lld",
          mlcc_shape_format(a, abuf, sizeof(abuf)), mlcc_shape_format(b, bbuf, sizeof(bbuf)),
          (int)i, (long long)da, (long long)db);
    }
  }
  *out_shape = r;
  return mlcc_ok_status();
}

char* mlcc_shape_format(const mlcc_shape_t* shape, char* buf, size_t buf_size) {
  if (buf == NULL || buf_size == 0) return buf;
  size_t pos = 0;
  buf[0] = '\0';
#define APPEND(...)                                                        \
  do {                                                                     \
    if (pos < buf_size) {                                                  \
      int n_ = snprintf(buf + pos, buf_size - pos, __VA_ARGS__);           \
      if (n_ > 0) pos += (size_t)n_;                                       \
      if (pos >= buf_size) pos = buf_size - 1;                             \
    }                                                                      \
  } while (0)
  if (shape->rank < 0 || shape->rank > MLCC_MAX_RANK) {
    APPEND("[<rank %d>]", (int)shape->rank);
    return buf;
  }
  APPEND("[");
  for (int32_t i = 0; i < shape->rank; ++i) {
    APPEND(i ? ",%lld" : "%lld", (long long)shape->dims[i]);
  }
  APPEND("]");
#undef APPEND
  return buf;
}

//===----------------------------------------------------------------------===//
// Name map
//===----------------------------------------------------------------------===//

static uint32_t hash_name(const char* s) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (; *s; ++s) {
    h ^= (unsigned char)*s;
    h *= 16777619u;
  }
  return h;
}

// Inserts |v| (whose name is not in the map); grows when half full.
static bool map_insert(graph_impl_t* g, mlcc_value_t* v) {
  if ((g->map_count + 1) * 2 > g->map_cap) {
    uint32_t cap = g->map_cap ? g->map_cap * 2 : 64;
    if (cap < g->map_cap) return false;  // overflow
    size_t bytes;
    if (!mlcc_checked_mul_size(cap, sizeof(mlcc_value_t*), &bytes)) return false;
    mlcc_value_t** map =
        (mlcc_value_t**)mlcc_arena_alloc(&g->graph.arena, bytes, _Alignof(mlcc_value_t*));
    if (map == NULL) return false;
    for (uint32_t i = 0; i < g->map_cap; ++i) {
      mlcc_value_t* e = g->map[i];
      if (e == NULL) continue;
      uint32_t j = hash_name(e->name) & (cap - 1);
      while (map[j] != NULL) j = (j + 1) & (cap - 1);
      map[j] = e;
    }
    g->map = map;
    g->map_cap = cap;
  }
  uint32_t j = hash_name(v->name) & (g->map_cap - 1);
  while (g->map[j] != NULL) j = (j + 1) & (g->map_cap - 1);
  g->map[j] = v;
  g->map_count++;
  return true;
}

mlcc_value_t* mlcc_graph_find_value(const mlcc_graph_t* graph, const char* name) {
  const graph_impl_t* g = impl_of(graph);
  if (name == NULL || g->map_cap == 0) return NULL;
  uint32_t j = hash_name(name) & (g->map_cap - 1);
  while (g->map[j] != NULL) {
    if (strcmp(g->map[j]->name, name) == 0) return g->map[j];
    j = (j + 1) & (g->map_cap - 1);
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// mlcc_graph_t
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_graph_create(mlcc_graph_t** out_graph) {
  *out_graph = NULL;
  graph_impl_t* g = (graph_impl_t*)calloc(1, sizeof(*g));
  if (g == NULL) return oom("a graph");
  mlcc_arena_init(&g->graph.arena);
  g->graph.name = "";
  g->graph.workspace_align = 64;
  *out_graph = &g->graph;
  return mlcc_ok_status();
}

void mlcc_graph_destroy(mlcc_graph_t* graph) {
  if (graph == NULL) return;
  mlcc_arena_deinit(&graph->arena);
  if (graph->backing_free != NULL) graph->backing_free(graph->backing);
  free(impl_of(graph));
}

// Grows an arena-owned pointer array to hold at least |need| entries.
static bool grow_ptr_array(mlcc_arena_t* arena, void*** inout_items, uint32_t* inout_cap,
                           uint32_t need) {
  if (need <= *inout_cap) return true;
  uint32_t cap = *inout_cap ? *inout_cap : 16;
  while (cap < need) {
    if (cap > UINT32_MAX / 2) return false;
    cap *= 2;
  }
  size_t bytes;
  if (!mlcc_checked_mul_size(cap, sizeof(void*), &bytes)) return false;
  void** items = (void**)mlcc_arena_alloc(arena, bytes, _Alignof(void*));
  if (items == NULL) return false;
  if (*inout_cap) memcpy(items, *inout_items, (size_t)*inout_cap * sizeof(void*));
  *inout_items = items;
  *inout_cap = cap;
  return true;
}

mlcc_status_t mlcc_graph_add_value(mlcc_graph_t* graph, const char* name,
                                   mlcc_value_kind_t kind, mlcc_value_t** out_value) {
  *out_value = NULL;
  graph_impl_t* g = impl_of(graph);
  if (name == NULL) name = "";
  if (mlcc_graph_find_value(graph, name) != NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "value name '%s' is defined twice",
                            name);
  }
  if (graph->n_values == UINT32_MAX) return oom("a value (too many values)");
  void** items = (void**)graph->values;
  if (!grow_ptr_array(&graph->arena, &items, &graph->values_cap, graph->n_values + 1)) {
    return oom("the value list");
  }
  graph->values = (mlcc_value_t**)items;
  mlcc_value_t* v =
      (mlcc_value_t*)mlcc_arena_alloc(&graph->arena, sizeof(*v), _Alignof(mlcc_value_t));
  if (v == NULL) return oom("a value");
  v->name = mlcc_arena_strdup(&graph->arena, name);
  if (v->name == NULL) return oom("a value name");
  if (!map_insert(g, v)) return oom("the value name index");
  v->id = graph->n_values;
  v->dtype = MLCC_DTYPE_UNDEFINED;
  v->kind = kind;
  v->ws_offset = -1;
  v->weight_offset = -1;
  graph->values[graph->n_values++] = v;
  *out_value = v;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_graph_add_temp_value(mlcc_graph_t* graph, const char* base,
                                        mlcc_value_t** out_value) {
  *out_value = NULL;
  graph_impl_t* g = impl_of(graph);
  if (base == NULL || base[0] == '\0') base = "tmp";
  size_t len = strlen(base) + 16;
  char* name = (char*)malloc(len);
  if (name == NULL) return oom("a temporary name");
  // Skip suffixes already taken by model names (e.g. a model value "t_0").
  for (;;) {
    snprintf(name, len, "%s_%u", base, g->next_temp_id++);
    if (mlcc_graph_find_value(graph, name) == NULL) break;
  }
  mlcc_status_t s = mlcc_graph_add_value(graph, name, MLCC_VALUE_INTERMEDIATE, out_value);
  free(name);
  return s;
}

mlcc_status_t mlcc_graph_add_constant(mlcc_graph_t* graph, const char* name,
                                      mlcc_dtype_t dtype, const mlcc_shape_t* shape,
                                      const void* data, bool copy,
                                      mlcc_value_t** out_value) {
  *out_value = NULL;
  size_t elem = mlcc_dtype_size(dtype);
  if (elem == 0) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "constant '%s' has unsupported dtype %s", name ? name : "",
                            mlcc_dtype_name(dtype));
  }
  int64_t numel = 0;
  mlcc_status_t s = mlcc_shape_numel(shape, &numel);
  if (s != NULL) return mlcc_status_annotate(s, "constant '%s'", name ? name : "");
  size_t bytes;
  if ((uint64_t)numel > SIZE_MAX || !mlcc_checked_mul_size((size_t)numel, elem, &bytes)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "constant '%s' is too large",
                            name ? name : "");
  }
  if (data == NULL && bytes > 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "constant '%s' has no data",
                            name ? name : "");
  }
  const void* stored = data;
  if (copy) {
    void* p = mlcc_arena_alloc(&graph->arena, bytes ? bytes : 1, 64);
    if (p == NULL) return oom("constant data");
    if (bytes) memcpy(p, data, bytes);
    stored = p;
  }
  mlcc_value_t* v = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_graph_add_value(graph, name, MLCC_VALUE_CONSTANT, &v));
  v->dtype = dtype;
  v->shape = *shape;
  v->shape_known = true;
  v->data = stored;
  *out_value = v;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_graph_add_node(mlcc_graph_t* graph, mlcc_op_t op, int32_t opset,
                                  const char* name, mlcc_value_t* const* inputs,
                                  uint32_t n_inputs, mlcc_value_t* const* outputs,
                                  uint32_t n_outputs, const mlcc_attr_t* attrs,
                                  uint32_t n_attrs, mlcc_node_t** out_node) {
  *out_node = NULL;
  if ((unsigned)op >= (unsigned)MLCC_OP_COUNT) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "add_node: invalid op %d", (int)op);
  }
  void** items = (void**)graph->nodes;
  if (graph->n_nodes == UINT32_MAX ||
      !grow_ptr_array(&graph->arena, &items, &graph->nodes_cap, graph->n_nodes + 1)) {
    return oom("the node list");
  }
  graph->nodes = (mlcc_node_t**)items;
  mlcc_arena_t* a = &graph->arena;
  mlcc_node_t* n = (mlcc_node_t*)mlcc_arena_alloc(a, sizeof(*n), _Alignof(mlcc_node_t));
  if (n == NULL) return oom("a node");
  n->name = mlcc_arena_strdup(a, name ? name : "");
  if (n->name == NULL) return oom("a node name");
  if (n_inputs) {
    n->inputs = (mlcc_value_t**)mlcc_arena_alloc(a, (size_t)n_inputs * sizeof(void*),
                                                 _Alignof(void*));
    if (n->inputs == NULL) return oom("node inputs");
    if (inputs != NULL) memcpy(n->inputs, inputs, (size_t)n_inputs * sizeof(void*));
  }
  if (n_outputs) {
    n->outputs = (mlcc_value_t**)mlcc_arena_alloc(a, (size_t)n_outputs * sizeof(void*),
                                                  _Alignof(void*));
    if (n->outputs == NULL) return oom("node outputs");
    if (outputs != NULL) memcpy(n->outputs, outputs, (size_t)n_outputs * sizeof(void*));
  }
  if (n_attrs) {
    n->attrs = (mlcc_attr_t*)mlcc_arena_alloc(a, (size_t)n_attrs * sizeof(mlcc_attr_t),
                                              _Alignof(mlcc_attr_t));
    if (n->attrs == NULL) return oom("node attributes");
    if (attrs != NULL) memcpy(n->attrs, attrs, (size_t)n_attrs * sizeof(mlcc_attr_t));
  }
  n->n_inputs = n_inputs;
  n->n_outputs = n_outputs;
  n->n_attrs = n_attrs;
  n->op = op;
  n->opset = opset;
  n->kernel = -1;
  n->id = graph->next_node_id++;
  // Only now that nothing can fail: link the node into the graph.
  for (uint32_t i = 0; i < n_inputs; ++i) {
    if (n->inputs[i] != NULL) n->inputs[i]->n_uses++;
  }
  for (uint32_t i = 0; i < n_outputs; ++i) {
    if (n->outputs[i] != NULL) n->outputs[i]->producer = n;
  }
  graph->nodes[graph->n_nodes++] = n;
  *out_node = n;
  return mlcc_ok_status();
}

void mlcc_graph_replace_uses(mlcc_graph_t* graph, mlcc_value_t* from, mlcc_value_t* to) {
  if (from == to || from == NULL) return;
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    for (uint32_t j = 0; j < n->n_inputs; ++j) {
      if (n->inputs[j] != from) continue;
      n->inputs[j] = to;
      if (!n->dead) {
        if (from->n_uses) from->n_uses--;
        if (to) to->n_uses++;
      }
    }
  }
  bool replaced_output = false;
  for (uint32_t i = 0; i < graph->n_outputs; ++i) {
    if (graph->outputs[i] == from && to != NULL) {
      graph->outputs[i] = to;
      replaced_output = true;
    }
  }
  if (replaced_output) {
    from->is_output = false;
    to->is_output = true;
  }
}

void mlcc_graph_recount_uses(mlcc_graph_t* graph) {
  for (uint32_t i = 0; i < graph->n_values; ++i) graph->values[i]->n_uses = 0;
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead) continue;
    for (uint32_t j = 0; j < n->n_inputs; ++j) {
      if (n->inputs[j] != NULL) n->inputs[j]->n_uses++;
    }
  }
}

void mlcc_graph_compact(mlcc_graph_t* graph) {
  uint32_t w = 0;
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    mlcc_node_t* n = graph->nodes[i];
    if (n->dead) {
      // A dead node no longer produces anything.
      for (uint32_t j = 0; j < n->n_outputs; ++j) {
        if (n->outputs[j] != NULL && n->outputs[j]->producer == n) {
          n->outputs[j]->producer = NULL;
        }
      }
      continue;
    }
    n->kernel = -1;
    graph->nodes[w++] = n;
  }
  graph->n_nodes = w;
  graph->n_kernels = 0;
  graph->kernels = NULL;
  mlcc_graph_recount_uses(graph);
}

// Binary min-heap of node positions (stable Kahn order).
static void heap_push(uint32_t* heap, uint32_t* n, uint32_t x) {
  uint32_t i = (*n)++;
  heap[i] = x;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (heap[p] <= heap[i]) break;
    uint32_t t = heap[p];
    heap[p] = heap[i];
    heap[i] = t;
    i = p;
  }
}

static uint32_t heap_pop(uint32_t* heap, uint32_t* n) {
  uint32_t top = heap[0];
  heap[0] = heap[--(*n)];
  uint32_t i = 0;
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < *n && heap[l] < heap[m]) m = l;
    if (r < *n && heap[r] < heap[m]) m = r;
    if (m == i) break;
    uint32_t t = heap[m];
    heap[m] = heap[i];
    heap[i] = t;
    i = m;
  }
  return top;
}

mlcc_status_t mlcc_graph_toposort(mlcc_graph_t* graph) {
  uint32_t n = graph->n_nodes;
  if (n == 0) return mlcc_ok_status();
  uint32_t n_ids = graph->next_node_id;
  for (uint32_t i = 0; i < n; ++i) {
    if (graph->nodes[i]->id >= n_ids) n_ids = graph->nodes[i]->id + 1;
  }
  // pos_of_id: node id -> position + 1 (0: not in the list).
  uint32_t* pos_of_id = (uint32_t*)calloc(n_ids, sizeof(uint32_t));
  uint32_t* indeg = (uint32_t*)calloc(n, sizeof(uint32_t));
  uint32_t* edge_start = (uint32_t*)calloc((size_t)n + 1, sizeof(uint32_t));
  uint32_t* heap = (uint32_t*)malloc((size_t)n * sizeof(uint32_t));
  uint32_t* order = (uint32_t*)malloc((size_t)n * sizeof(uint32_t));
  uint32_t* edges = NULL;
  mlcc_status_t status = NULL;
  if (!pos_of_id || !indeg || !edge_start || !heap || !order) {
    status = oom("toposort scratch");
    goto done;
  }
  for (uint32_t i = 0; i < n; ++i) pos_of_id[graph->nodes[i]->id] = i + 1;

  // Producer position of input j of node i, or UINT32_MAX if none in the list.
#define PRODUCER_POS(node, j)                                                      \
  ((node)->inputs[j] != NULL && (node)->inputs[j]->producer != NULL &&             \
           (node)->inputs[j]->producer->id < n_ids &&                              \
           pos_of_id[(node)->inputs[j]->producer->id] != 0 &&                      \
           graph->nodes[pos_of_id[(node)->inputs[j]->producer->id] - 1] ==         \
               (node)->inputs[j]->producer                                         \
       ? pos_of_id[(node)->inputs[j]->producer->id] - 1                            \
       : UINT32_MAX)

  // Count edges producer -> consumer (with multiplicity).
  size_t n_edges = 0;
  for (uint32_t i = 0; i < n; ++i) {
    mlcc_node_t* node = graph->nodes[i];
    for (uint32_t j = 0; j < node->n_inputs; ++j) {
      uint32_t p = PRODUCER_POS(node, j);
      if (p == UINT32_MAX) continue;
      edge_start[p + 1]++;
      indeg[i]++;
      n_edges++;
    }
  }
  for (uint32_t i = 0; i < n; ++i) edge_start[i + 1] += edge_start[i];
  edges = (uint32_t*)malloc((n_edges ? n_edges : 1) * sizeof(uint32_t));
  uint32_t* fill = (uint32_t*)calloc(n, sizeof(uint32_t));
  if (edges == NULL || fill == NULL) {
    free(fill);
    status = oom("toposort scratch");
    goto done;
  }
  for (uint32_t i = 0; i < n; ++i) {
    mlcc_node_t* node = graph->nodes[i];
    for (uint32_t j = 0; j < node->n_inputs; ++j) {
      uint32_t p = PRODUCER_POS(node, j);
      if (p == UINT32_MAX) continue;
      edges[edge_start[p] + fill[p]++] = i;
    }
  }
  free(fill);
#undef PRODUCER_POS

  uint32_t heap_n = 0, n_order = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (indeg[i] == 0) heap_push(heap, &heap_n, i);
  }
  while (heap_n > 0) {
    uint32_t i = heap_pop(heap, &heap_n);
    order[n_order++] = i;
    for (uint32_t e = edge_start[i]; e < edge_start[i + 1]; ++e) {
      uint32_t c = edges[e];
      if (--indeg[c] == 0) heap_push(heap, &heap_n, c);
    }
  }
  if (n_order < n) {
    // Walk back along unsorted producers from an unsorted node: after n
    // steps we are on a cycle.
    uint32_t cur = UINT32_MAX;
    for (uint32_t i = 0; i < n; ++i) {
      if (indeg[i] != 0) {
        cur = i;
        break;
      }
    }
    for (uint32_t step = 0; step < n && cur != UINT32_MAX; ++step) {
      mlcc_node_t* node = graph->nodes[cur];
      uint32_t next = UINT32_MAX;
      for (uint32_t j = 0; j < node->n_inputs && next == UINT32_MAX; ++j) {
        mlcc_value_t* in = node->inputs[j];
        if (in == NULL || in->producer == NULL || in->producer->id >= n_ids) continue;
        uint32_t p1 = pos_of_id[in->producer->id];
        if (p1 != 0 && graph->nodes[p1 - 1] == in->producer && indeg[p1 - 1] != 0) {
          next = p1 - 1;
        }
      }
      if (next == UINT32_MAX) break;
      cur = next;
    }
    char desc[256];
    status = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "the graph has a cycle through %s (%u of %u nodes cannot be "
                              "ordered)",
                              mlcc_node_describe(graph->nodes[cur], desc, sizeof(desc)),
                              n - n_order, n);
    goto done;
  }
  // Apply the order.
  for (uint32_t i = 0; i < n; ++i) heap[i] = order[i];
  {
    mlcc_node_t** sorted = (mlcc_node_t**)malloc((size_t)n * sizeof(mlcc_node_t*));
    if (sorted == NULL) {
      status = oom("toposort scratch");
      goto done;
    }
    for (uint32_t i = 0; i < n; ++i) sorted[i] = graph->nodes[order[i]];
    memcpy(graph->nodes, sorted, (size_t)n * sizeof(mlcc_node_t*));
    free(sorted);
  }
done:
  free(pos_of_id);
  free(indeg);
  free(edge_start);
  free(heap);
  free(order);
  free(edges);
  return status;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

static const char* attr_kind_name(mlcc_attr_kind_t kind) {
  switch (kind) {
    case MLCC_ATTR_INT: return "int";
    case MLCC_ATTR_FLOAT: return "float";
    case MLCC_ATTR_STRING: return "string";
    case MLCC_ATTR_INTS: return "ints";
    case MLCC_ATTR_FLOATS: return "floats";
    case MLCC_ATTR_STRINGS: return "strings";
    case MLCC_ATTR_TENSOR: return "tensor";
    case MLCC_ATTR_GRAPH: return "graph";
  }
  return "unknown";
}

const mlcc_attr_t* mlcc_node_attr(const mlcc_node_t* node, const char* name) {
  for (uint32_t i = 0; i < node->n_attrs; ++i) {
    if (node->attrs[i].name != NULL && strcmp(node->attrs[i].name, name) == 0) {
      return &node->attrs[i];
    }
  }
  return NULL;
}

static mlcc_status_t wrong_kind(const mlcc_node_t* node, const mlcc_attr_t* a,
                                mlcc_attr_kind_t want) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "%s attribute '%s' must be %s but is %s", mlcc_op_name(node->op),
                          a->name, attr_kind_name(want), attr_kind_name(a->kind));
}

mlcc_status_t mlcc_node_attr_int(const mlcc_node_t* node, const char* name,
                                 int64_t default_value, int64_t* out_value) {
  *out_value = default_value;
  const mlcc_attr_t* a = mlcc_node_attr(node, name);
  if (a == NULL) return mlcc_ok_status();
  if (a->kind != MLCC_ATTR_INT) return wrong_kind(node, a, MLCC_ATTR_INT);
  *out_value = a->i;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_node_attr_float(const mlcc_node_t* node, const char* name,
                                   float default_value, float* out_value) {
  *out_value = default_value;
  const mlcc_attr_t* a = mlcc_node_attr(node, name);
  if (a == NULL) return mlcc_ok_status();
  if (a->kind != MLCC_ATTR_FLOAT) return wrong_kind(node, a, MLCC_ATTR_FLOAT);
  *out_value = a->f;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_node_attr_string(const mlcc_node_t* node, const char* name,
                                    const char* default_value, const char** out_value) {
  *out_value = default_value;
  const mlcc_attr_t* a = mlcc_node_attr(node, name);
  if (a == NULL) return mlcc_ok_status();
  if (a->kind != MLCC_ATTR_STRING) return wrong_kind(node, a, MLCC_ATTR_STRING);
  *out_value = a->s ? a->s : "";
  return mlcc_ok_status();
}

mlcc_status_t mlcc_node_attr_ints(const mlcc_node_t* node, const char* name,
                                  const int64_t** out_ints, uint32_t* out_count) {
  *out_ints = NULL;
  *out_count = 0;
  const mlcc_attr_t* a = mlcc_node_attr(node, name);
  if (a == NULL) return mlcc_ok_status();
  if (a->kind != MLCC_ATTR_INTS) return wrong_kind(node, a, MLCC_ATTR_INTS);
  *out_ints = a->ints;
  *out_count = a->ints ? a->count : 0;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_node_attr_floats(const mlcc_node_t* node, const char* name,
                                    const float** out_floats, uint32_t* out_count) {
  *out_floats = NULL;
  *out_count = 0;
  const mlcc_attr_t* a = mlcc_node_attr(node, name);
  if (a == NULL) return mlcc_ok_status();
  if (a->kind != MLCC_ATTR_FLOATS) return wrong_kind(node, a, MLCC_ATTR_FLOATS);
  *out_floats = a->floats;
  *out_count = a->floats ? a->count : 0;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Constant readers
//===----------------------------------------------------------------------===//

// IEEE half -> float.
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      // Subnormal: renormalize.
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      mant &= 0x3ff;
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

int64_t mlcc_value_const_i64(const mlcc_value_t* value, int64_t i) {
  if (value == NULL || value->data == NULL || i < 0) return 0;
  const unsigned char* p = (const unsigned char*)value->data;
  switch (value->dtype) {
#define READ(T)                                 \
  {                                             \
    T x;                                        \
    memcpy(&x, p + (size_t)i * sizeof(T), sizeof(T)); \
    return (int64_t)x;                          \
  }
    case MLCC_DTYPE_I64: READ(int64_t)
    case MLCC_DTYPE_I32: READ(int32_t)
    case MLCC_DTYPE_I16: READ(int16_t)
    case MLCC_DTYPE_I8: READ(int8_t)
    case MLCC_DTYPE_I4: READ(int8_t)   // one per byte (dtypes.def)
    case MLCC_DTYPE_U4: READ(uint8_t)
    case MLCC_DTYPE_I2: READ(int8_t)
    case MLCC_DTYPE_U2: READ(uint8_t)
    case MLCC_DTYPE_U8: READ(uint8_t)
    case MLCC_DTYPE_U16: READ(uint16_t)
    case MLCC_DTYPE_U32: READ(uint32_t)
    case MLCC_DTYPE_U64: READ(uint64_t)
    case MLCC_DTYPE_BOOL: return p[i] != 0;
#undef READ
    default: {
      double d = mlcc_value_const_f64(value, i);
      if (!(d >= -9.2e18 && d <= 9.2e18)) return 0;  // NaN or out of range
      return (int64_t)d;
    }
  }
}

// The value of one code of a small float storage type: bfloat16 (the upper half
// of a binary32), the float8 types of opset 19 (e4m3fn, e4m3fnuz, e5m2,
// e5m2fnuz: ONNX docs/technical/float8.md), float8e8m0 (opset 24: 2^(c - 127),
// 0xff NaN) and float4e2m1 (opset 23: no inf or NaN). Normal codes are
// (-1)^s 2^(e - bias) (1 + m / 2^mbits), exponent 0 the subnormals
// (-1)^s 2^(1 - bias) (m / 2^mbits).
static double small_float_value(mlcc_dtype_t dtype, uint32_t c) {
  int ebits = 4, mbits = 3, bias = 7;
  bool fnuz = false;
  switch (dtype) {
    case MLCC_DTYPE_BF16: {
      uint32_t bits = c << 16;
      float x;
      memcpy(&x, &bits, 4);
      return x;
    }
    case MLCC_DTYPE_F8E8M0:
      return c == 0xffu ? (double)NAN : ldexp(1.0, (int)c - 127);
    case MLCC_DTYPE_F8E4M3FN:
      if ((c & 0x7fu) == 0x7fu) return (double)NAN;
      break;
    case MLCC_DTYPE_F8E4M3FNUZ:
      bias = 8;
      fnuz = true;
      break;
    case MLCC_DTYPE_F8E5M2:
      ebits = 5, mbits = 2, bias = 15;
      if ((c & 0x7cu) == 0x7cu) return (c & 3u) ? (double)NAN : (c & 0x80u) ? -INFINITY : INFINITY;
      break;
    case MLCC_DTYPE_F8E5M2FNUZ:
      ebits = 5, mbits = 2, bias = 16;
      fnuz = true;
      break;
    case MLCC_DTYPE_F4E2M1:
      ebits = 2, mbits = 1, bias = 1;
      c &= 0xfu;
      break;
    default:
      return 0.0;
  }
  if (fnuz && c == 0x80u) return (double)NAN;
  uint32_t sign = c >> (ebits + mbits) & 1u;
  uint32_t e = c >> mbits & ((1u << ebits) - 1u), m = c & ((1u << mbits) - 1u);
  double mag = e == 0 ? ldexp((double)m, 1 - bias - mbits)
                      : ldexp((double)((1u << mbits) | m), (int)e - bias - mbits);
  return sign ? -mag : mag;
}

double mlcc_value_const_f64(const mlcc_value_t* value, int64_t i) {
  if (value == NULL || value->data == NULL || i < 0) return 0.0;
  const unsigned char* p = (const unsigned char*)value->data;
  switch (value->dtype) {
    case MLCC_DTYPE_F32: {
      float x;
      memcpy(&x, p + (size_t)i * 4, 4);
      return x;
    }
    case MLCC_DTYPE_F64: {
      double x;
      memcpy(&x, p + (size_t)i * 8, 8);
      return x;
    }
    case MLCC_DTYPE_F16: {
      uint16_t x;
      memcpy(&x, p + (size_t)i * 2, 2);
      return half_to_float(x);
    }
    case MLCC_DTYPE_U64: {
      uint64_t x;
      memcpy(&x, p + (size_t)i * 8, 8);
      return (double)x;
    }
    case MLCC_DTYPE_BF16: {
      uint16_t x;
      memcpy(&x, p + (size_t)i * 2, 2);
      return small_float_value(value->dtype, x);
    }
    default:
      if (mlcc_dtype_is_int(value->dtype) || mlcc_dtype_is_bool(value->dtype)) {
        return (double)mlcc_value_const_i64(value, i);
      }
      // float8 and float4e2m1 constants hold one code per byte (docs/generated-api.md)
      if (mlcc_dtype_is_float8(value->dtype)) return small_float_value(value->dtype, p[i]);
      return 0.0;
  }
}

size_t mlcc_value_byte_size(const mlcc_value_t* value) {
  int64_t numel = 0;
  mlcc_status_t s = mlcc_shape_numel(&value->shape, &numel);
  if (s != NULL) {
    mlcc_status_free(s);
    return 0;
  }
  size_t bytes;
  if ((uint64_t)numel > SIZE_MAX ||
      !mlcc_checked_mul_size((size_t)numel, mlcc_dtype_size(value->dtype), &bytes)) {
    return 0;
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

char* mlcc_node_describe(const mlcc_node_t* node, char* buf, size_t buf_size) {
  if (buf == NULL || buf_size == 0) return buf;
  snprintf(buf, buf_size, "node #%u '%s' (%s, opset %d)", node->id,
           node->name ? node->name : "", mlcc_op_name(node->op), (int)node->opset);
  return buf;
}

mlcc_status_t mlcc_node_annotate(const mlcc_node_t* node, mlcc_status_t status) {
  if (status == NULL) return status;
  return mlcc_status_annotate(status, "node #%u '%s' (%s, opset %d)", node->id,
                              node->name ? node->name : "", mlcc_op_name(node->op),
                              (int)node->opset);
}

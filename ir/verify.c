// SPDX-License-Identifier: Apache-2.0
// Whole-graph verifier: collects up to MAX_PROBLEMS problems into one status.
#include "ir/verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROBLEMS 20

typedef struct verifier_t {
  const mlcc_graph_t* graph;
  uint32_t n_problems;  // all problems found (only the first MAX_PROBLEMS kept)
  char* text;           // malloc'ed; one problem per line
  size_t len, cap;
  bool oom;
} verifier_t;

static void append(verifier_t* v, const char* s, size_t n) {
  if (v->oom) return;
  if (v->len + n + 1 > v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 1024;
    while (cap < v->len + n + 1) cap *= 2;
    char* t = (char*)realloc(v->text, cap);
    if (t == NULL) {
      v->oom = true;
      return;
    }
    v->text = t;
    v->cap = cap;
  }
  memcpy(v->text + v->len, s, n);
  v->len += n;
  v->text[v->len] = '\0';
}

static void problem(verifier_t* v, const char* fmt, ...) MLCC_PRINTF(2, 3);
static void problem(verifier_t* v, const char* fmt, ...) {
  if (v->n_problems++ >= MAX_PROBLEMS) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  append(v, "\n  ", 3);
  append(v, buf, strlen(buf));
}

// True if |value| is registered in |graph| (guards against foreign pointers).
static bool owned(const mlcc_graph_t* graph, const mlcc_value_t* value) {
  return value->id < graph->n_values && graph->values[value->id] == value;
}

static void check_typed(verifier_t* v, const char* where, const mlcc_value_t* val) {
  char sbuf[256];
  if (!mlcc_dtype_is_valid(val->dtype)) {
    problem(v, "%s: value '%s' has no valid dtype (%s)", where, val->name,
            mlcc_dtype_name(val->dtype));
  }
  if (!val->shape_known) {
    problem(v, "%s: value '%s' has no inferred shape", where, val->name);
    return;
  }
  int64_t numel;
  mlcc_status_t s = mlcc_shape_numel(&val->shape, &numel);
  if (s != NULL) {
    problem(v, "%s: value '%s' has an invalid shape %s: %s", where, val->name,
            mlcc_shape_format(&val->shape, sbuf, sizeof(sbuf)), mlcc_status_message(s));
    mlcc_status_free(s);
  }
}

// Kernel checks: partition of live nodes and the fused-chain rules.
static void check_kernels(verifier_t* v, const uint32_t* pos_of_node, uint32_t n_ids,
                          const uint32_t* uses, bool require_shapes) {
  const mlcc_graph_t* g = v->graph;
  if (g->n_kernels == 0) return;
  if (g->kernels == NULL) {
    problem(v, "graph has %u kernels but no kernel array", g->n_kernels);
    return;
  }
  uint8_t* seen = (uint8_t*)calloc(n_ids ? n_ids : 1, 1);
  if (seen == NULL) {
    v->oom = true;
    return;
  }
  char d0[256], d1[256], sa[256], sb[256];
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &g->kernels[k];
    if (kern->n_nodes == 0 || kern->nodes == NULL) {
      problem(v, "kernel %u has no nodes", k);
      continue;
    }
    uint32_t prev_pos = 0;
    for (uint32_t i = 0; i < kern->n_nodes; ++i) {
      const mlcc_node_t* n = kern->nodes[i];
      if (n == NULL) {
        problem(v, "kernel %u: node %u is NULL", k, i);
        break;
      }
      mlcc_node_describe(n, d0, sizeof(d0));
      if (n->id >= n_ids || pos_of_node[n->id] == 0 ||
          g->nodes[pos_of_node[n->id] - 1] != n) {
        problem(v, "kernel %u: %s is not in the graph's node list", k, d0);
        continue;
      }
      if (n->dead) problem(v, "kernel %u: %s is dead", k, d0);
      if (seen[n->id]) problem(v, "kernel %u: %s is already in another kernel", k, d0);
      seen[n->id] = 1;
      if (n->kernel != (int32_t)k) {
        problem(v, "kernel %u: %s says it is in kernel %d", k, d0, (int)n->kernel);
      }
      uint32_t pos = pos_of_node[n->id];
      if (i > 0 && pos <= prev_pos) {
        problem(v, "kernel %u: %s comes before the previous node of its chain", k, d0);
      }
      prev_pos = pos;
      if (i == 0) continue;
      // Epilogue rules.
      if (!(mlcc_op_desc(n->op)->flags & MLCC_OPF_ELEMENTWISE)) {
        problem(v, "kernel %u: epilogue %s is not an elementwise op", k, d0);
        continue;
      }
      // The carried slot reads the single output of an earlier chain node.
      mlcc_value_t* carried =
          kern->carried_input != NULL && kern->carried_input[i] < n->n_inputs
              ? n->inputs[kern->carried_input[i]]
              : NULL;
      const mlcc_node_t* from = NULL;
      for (uint32_t j = 0; j < i && carried != NULL; ++j) {
        if (kern->nodes[j] != NULL && mlcc_node_output(kern->nodes[j], 0) == carried) {
          from = kern->nodes[j];
        }
      }
      if (carried == NULL || from == NULL) {
        const mlcc_value_t* prev_out = mlcc_node_output(kern->nodes[i - 1], 0);
        problem(v,
                "kernel %u: %s does not read '%s' at its carried input (nor another "
                "earlier chain node's output)",
                k, d0, prev_out && prev_out->name ? prev_out->name : "?");
        continue;
      }
      mlcc_node_describe(from, d1, sizeof(d1));
      uint32_t present_outs = 0;
      for (uint32_t j = 0; j < from->n_outputs; ++j) present_outs += from->outputs[j] != NULL;
      if (present_outs != 1) {
        problem(v, "kernel %u: %s must have exactly one output to carry into %s", k, d1,
                d0);
        continue;
      }
      if (require_shapes && carried->shape_known) {
        for (uint32_t j = 0; j < n->n_inputs; ++j) {
          const mlcc_value_t* in = n->inputs[j];
          if (in == NULL || in == carried || !in->shape_known) continue;
          mlcc_shape_t b;
          mlcc_status_t s = mlcc_shape_broadcast(&in->shape, &carried->shape, &b);
          if (s != NULL || !mlcc_shape_equal(&b, &carried->shape)) {
            problem(v,
                    "kernel %u: %s input '%s' %s does not broadcast to the carried "
                    "shape %s",
                    k, d0, in->name, mlcc_shape_format(&in->shape, sa, sizeof(sa)),
                    mlcc_shape_format(&carried->shape, sb, sizeof(sb)));
          }
          mlcc_status_free(s);
        }
      }
    }
    // Intermediate chain values are read only inside the chain (by later
    // nodes) and are not graph outputs: they are never materialized.
    for (uint32_t i = 0; i + 1 < kern->n_nodes; ++i) {
      const mlcc_node_t* n = kern->nodes[i];
      if (n == NULL) break;
      mlcc_value_t* inner = mlcc_node_output(n, 0);
      if (inner == NULL) continue;
      uint32_t reads = 0;
      for (uint32_t j = i + 1; j < kern->n_nodes; ++j) {
        const mlcc_node_t* r = kern->nodes[j];
        if (r == NULL) break;
        for (uint32_t s = 0; s < r->n_inputs; ++s) reads += r->inputs[s] == inner;
      }
      if (reads == 0 || (owned(g, inner) && uses[inner->id] != reads) || inner->is_output) {
        problem(v,
                "kernel %u: intermediate '%s' of the chain must be read only by later "
                "nodes of the chain and not be a graph output",
                k, inner->name);
      }
    }
  }
  for (uint32_t i = 0; i < g->n_nodes; ++i) {
    const mlcc_node_t* n = g->nodes[i];
    if (n->dead) continue;
    const mlcc_value_t* out0 = mlcc_node_output(n, 0);
    if (out0 != NULL && out0->alias_of != NULL) continue;  // runs no kernel
    if (n->id < n_ids && !seen[n->id]) {
      problem(v, "%s is live but in no kernel", mlcc_node_describe(n, d0, sizeof(d0)));
    }
  }
  free(seen);
}

// The value table and the graph inputs; marks every constant and input
// as defined in |defined| (by value id).
static void check_values(verifier_t* v, uint8_t* defined, bool require_shapes) {
  const mlcc_graph_t* g = v->graph;
  for (uint32_t i = 0; i < g->n_values; ++i) {
    const mlcc_value_t* val = g->values[i];
    if (val == NULL || val->id != i) {
      problem(v, "value slot %u holds a value with id %u", i, val ? val->id : 0);
      continue;
    }
    if (val->kind == MLCC_VALUE_CONSTANT) {
      defined[i] = 1;
      if (val->producer != NULL) {
        problem(v, "constant '%s' has a producer", val->name);
      }
      if (!mlcc_dtype_is_valid(val->dtype) || !val->shape_known) {
        problem(v, "constant '%s' has no dtype or shape", val->name);
      } else if (val->data == NULL && mlcc_value_byte_size(val) != 0) {
        problem(v, "constant '%s' has no data", val->name);
      }
    } else if (val->kind == MLCC_VALUE_INPUT) {
      defined[i] = 1;
      if (val->producer != NULL) problem(v, "graph input '%s' has a producer", val->name);
    }
    bool listed = false;
    for (uint32_t j = 0; j < g->n_outputs; ++j) listed |= g->outputs[j] == val;
    if (val->is_output != listed) {
      problem(v, "value '%s' %s", val->name,
              val->is_output ? "is flagged as an output but not listed in the graph outputs"
                             : "is a graph output but not flagged is_output");
    }
  }
  for (uint32_t i = 0; i < g->n_inputs; ++i) {
    const mlcc_value_t* in = g->inputs[i];
    if (in == NULL || !owned(g, in)) {
      problem(v, "graph input %u is not a value of the graph", i);
    } else if (in->kind != MLCC_VALUE_INPUT) {
      problem(v, "graph input '%s' is not of kind INPUT", in->name);
    } else if (require_shapes) {
      check_typed(v, "graph input", in);
    }
  }
}

// One live node with a valid op: its op's opset and arity, the extent
// slots of bounded outputs, its inputs (defined before use; counted in
// |uses|) and outputs (one producer each; marked in |defined|).
static void check_node(verifier_t* v, const mlcc_node_t* n, uint8_t* defined, uint32_t* uses,
                       bool require_shapes) {
  const mlcc_graph_t* g = v->graph;
  char desc[256];
  mlcc_node_describe(n, desc, sizeof(desc));
  const mlcc_op_desc_t* d = mlcc_op_desc(n->op);
  if (n->opset < d->opset_min || n->opset > d->opset_max) {
    problem(v, "%s: opset outside the supported range %d..%d", desc, d->opset_min,
            d->opset_max);
  }
  if (n->n_inputs < d->in_min || n->n_inputs > d->in_max) {
    problem(v, "%s has %u inputs; %s takes %u to %u", desc, n->n_inputs, d->name,
            d->in_min, d->in_max);
  }
  // Extent slots of bounded outputs (plan-memory) follow the ONNX outputs.
  uint32_t n_extents = 0;
  for (uint32_t j = 0; j < n->n_outputs; ++j) {
    const mlcc_value_t* out = n->outputs[j];
    if (out == NULL || out->bound_dims == 0 || out->extent == NULL) continue;
    const mlcc_value_t* e = out->extent;
    bool found = false;
    for (uint32_t k = 0; k < n->n_outputs; ++k) found |= n->outputs[k] == e;
    if (!found || e->dtype != MLCC_DTYPE_I64 || e->shape.rank != 1 ||
        e->shape.dims[0] != out->shape.rank) {
      problem(v, "%s: the extent slot of '%s' must be an int64 [%d] output of the node",
              desc, out->name, (int)out->shape.rank);
    }
    n_extents += found;
  }
  uint32_t n_onnx_outputs = n->n_outputs - n_extents;
  if (n_onnx_outputs < d->out_min || n_onnx_outputs > d->out_max) {
    problem(v, "%s has %u outputs; %s produces %u to %u", desc, n_onnx_outputs, d->name,
            d->out_min, d->out_max);
  }
  for (uint32_t j = 0; j < n->n_inputs; ++j) {
    const mlcc_value_t* in = n->inputs[j];
    if (in == NULL) {
      if (j < d->in_min) problem(v, "%s: required input %u is missing", desc, j);
      continue;
    }
    if (!owned(g, in)) {
      problem(v, "%s: input %u is not a value of the graph", desc, j);
      continue;
    }
    uses[in->id]++;
    if (in->bound_dims != 0) {
      problem(v, "%s: input %u '%s' has a data-dependent shape (only graph outputs may)",
              desc, j, in->name);
    }
    if (!defined[in->id]) {
      problem(v, "%s: input %u '%s' is used before it is defined%s", desc, j, in->name,
              in->producer == NULL ? " (it has no producer)" : "");
    }
    if (require_shapes) check_typed(v, desc, in);
  }
  for (uint32_t j = 0; j < n->n_outputs; ++j) {
    const mlcc_value_t* out = n->outputs[j];
    if (out == NULL) {
      if (j < d->out_min) problem(v, "%s: required output %u is missing", desc, j);
      continue;
    }
    if (!owned(g, out)) {
      problem(v, "%s: output %u is not a value of the graph", desc, j);
      continue;
    }
    if (out->kind != MLCC_VALUE_INTERMEDIATE) {
      problem(v, "%s: output '%s' is a graph input or constant", desc, out->name);
    } else if (defined[out->id]) {
      problem(v, "%s: value '%s' has more than one producer", desc, out->name);
    } else if (out->producer != n) {
      problem(v, "%s: output '%s' names another node as its producer", desc,
              out->name);
    }
    defined[out->id] = 1;
    if (require_shapes) check_typed(v, desc, out);
  }
  if (g->n_kernels == 0 && n->kernel != -1) {
    problem(v, "%s is in kernel %d but the graph has no kernels", desc, (int)n->kernel);
  }
}

// The node list in program order: slots, duplicate ids (|pos_of_node|[id]
// = 1 + its position), then every live node (check_node).
static void check_nodes(verifier_t* v, uint32_t* pos_of_node, uint32_t n_ids, uint8_t* defined,
                        uint32_t* uses, bool require_shapes) {
  const mlcc_graph_t* g = v->graph;
  for (uint32_t i = 0; i < g->n_nodes; ++i) {
    const mlcc_node_t* n = g->nodes[i];
    if (n == NULL) {
      problem(v, "node slot %u is NULL", i);
      continue;
    }
    if (n->id < n_ids) {
      if (pos_of_node[n->id] != 0) {
        problem(v, "node id %u appears twice in the node list", n->id);
      }
      pos_of_node[n->id] = i + 1;
    }
    if (n->dead) continue;
    if ((unsigned)n->op >= (unsigned)MLCC_OP_COUNT) {
      problem(v, "node #%u '%s' has an invalid op %d", n->id, n->name, (int)n->op);
      continue;
    }
    check_node(v, n, defined, uses, require_shapes);
  }
}

// The graph outputs: values of the graph, produced by a live node.
static void check_outputs(verifier_t* v, const uint8_t* defined, bool require_shapes) {
  const mlcc_graph_t* g = v->graph;
  for (uint32_t i = 0; i < g->n_outputs; ++i) {
    const mlcc_value_t* out = g->outputs[i];
    if (out == NULL || !owned(g, out)) {
      problem(v, "graph output %u is not a value of the graph", i);
      continue;
    }
    if (!defined[out->id]) {
      problem(v, "graph output '%s' is not produced by any live node", out->name);
    }
    if (require_shapes) check_typed(v, "graph output", out);
  }
}

// The verdict: OK, or one INVALID_MODEL status listing the problems (the
// first on the first line); frees v->text.
static mlcc_status_t verdict(verifier_t* v) {
  if (v->oom) {
    free(v->text);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory verifying the graph");
  }
  if (v->n_problems == 0) {
    free(v->text);
    return mlcc_ok_status();
  }
  // The first problem goes on the first line, where drivers and users look;
  // the rest (up to MAX_PROBLEMS) follow one per line.
  const char* text = v->text ? v->text : "";
  const char* first = text[0] == '\n' ? text + 3 : text;  // skip "\n  "
  const char* rest = strchr(first, '\n');
  int first_len = rest ? (int)(rest - first) : (int)strlen(first);
  mlcc_status_t s;
  if (v->n_problems == 1) {
    s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%.*s", first_len, first);
  } else {
    s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                         "%.*s (and %u more problem%s%s):%s", first_len, first,
                         v->n_problems - 1, v->n_problems == 2 ? "" : "s",
                         v->n_problems > MAX_PROBLEMS ? ", first ones shown" : "",
                         rest ? rest : "");
  }
  free(v->text);
  return s;
}

mlcc_status_t mlcc_graph_verify(const mlcc_graph_t* graph, bool require_shapes) {
  verifier_t v;
  memset(&v, 0, sizeof(v));
  v.graph = graph;
  const mlcc_graph_t* g = graph;
  uint32_t n_ids = g->next_node_id;
  for (uint32_t i = 0; i < g->n_nodes; ++i) {
    if (g->nodes[i] != NULL && g->nodes[i]->id >= n_ids) n_ids = g->nodes[i]->id + 1;
  }
  // defined[value id]: 1 once the value is available in program order.
  uint8_t* defined = (uint8_t*)calloc(g->n_values ? g->n_values : 1, 1);
  uint32_t* uses = (uint32_t*)calloc(g->n_values ? g->n_values : 1, sizeof(uint32_t));
  uint32_t* pos_of_node = (uint32_t*)calloc(n_ids ? n_ids : 1, sizeof(uint32_t));
  if (defined == NULL || uses == NULL || pos_of_node == NULL) {
    free(defined);
    free(uses);
    free(pos_of_node);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory verifying the graph");
  }
  check_values(&v, defined, require_shapes);
  check_nodes(&v, pos_of_node, n_ids, defined, uses, require_shapes);
  check_outputs(&v, defined, require_shapes);
  check_kernels(&v, pos_of_node, n_ids, uses, require_shapes);
  free(defined);
  free(uses);
  free(pos_of_node);
  return verdict(&v);
}

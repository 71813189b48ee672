// SPDX-License-Identifier: Apache-2.0
// Inlining of model-local functions at import (functions.h).
#include "ir/onnx/functions.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

static const char* str_or_empty(const char* s) { return s ? s : ""; }

// "" and "ai.onnx" are one domain.
static const char* domain_of(const char* d) {
  return (d == NULL || strcmp(d, "ai.onnx") == 0) ? "" : d;
}

typedef struct out_list_t {
  MlccOnnx__NodeProto** nodes;  // malloc'ed
  int32_t* opsets;              // malloc'ed
  size_t n, cap;
} out_list_t;

typedef struct inline_ctx_t {
  const MlccOnnx__ModelProto* model;
  mlcc_arena_t* arena;
  out_list_t out;
  uint32_t n_calls;                              // k of "mlcc.inline<k>/"
  const MlccOnnx__FunctionProto* stack[MAX_DEPTH + 1];  // the calls being inlined
  int depth;
} inline_ctx_t;

// One inlining: how a body's names map to the caller's.
typedef struct frame_t {
  const MlccOnnx__FunctionProto* fn;
  const MlccOnnx__NodeProto* call;  // with the caller's names and resolved attributes
  char prefix[32];
} frame_t;

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory inlining functions");
}

static const MlccOnnx__FunctionProto* find_function(const MlccOnnx__ModelProto* m,
                                                    const MlccOnnx__NodeProto* n) {
  if (n->op_type == NULL) return NULL;
  const char* domain = domain_of(n->domain);
  const char* overload = str_or_empty(n->overload);
  for (size_t i = 0; i < m->n_functions; ++i) {
    const MlccOnnx__FunctionProto* f = m->functions[i];
    if (f->name != NULL && strcmp(f->name, n->op_type) == 0 &&
        strcmp(domain_of(f->domain), domain) == 0 &&
        strcmp(str_or_empty(f->overload), overload) == 0) {
      return f;
    }
  }
  return NULL;
}

static void fn_label(const MlccOnnx__FunctionProto* f, char* buf, size_t cap) {
  const char* d = domain_of(f->domain);
  snprintf(buf, cap, "%s%s%s%s%s", d, d[0] ? "." : "", str_or_empty(f->name),
           f->overload && f->overload[0] ? ":" : "", str_or_empty(f->overload));
}

static mlcc_status_t check_functions(const MlccOnnx__ModelProto* m) {
  for (size_t i = 0; i < m->n_functions; ++i) {
    const MlccOnnx__FunctionProto* f = m->functions[i];
    if (f->name == NULL || f->name[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "function #%zu has no name", i);
    }
    for (size_t j = 0; j < i; ++j) {
      const MlccOnnx__FunctionProto* g = m->functions[j];
      if (strcmp(f->name, str_or_empty(g->name)) == 0 &&
          strcmp(domain_of(f->domain), domain_of(g->domain)) == 0 &&
          strcmp(str_or_empty(f->overload), str_or_empty(g->overload)) == 0) {
        char label[256];
        fn_label(f, label, sizeof(label));
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "functions #%zu and #%zu are both '%s'", j, i, label);
      }
    }
  }
  return mlcc_ok_status();
}

static bool uses_functions(const MlccOnnx__ModelProto* m) {
  for (size_t i = 0; i < m->graph->n_node; ++i) {
    if (find_function(m, m->graph->node[i]) != NULL) return true;
  }
  return false;
}

static mlcc_status_t push(inline_ctx_t* c, MlccOnnx__NodeProto* n, int32_t opset) {
  if (c->out.n == c->out.cap) {
    size_t cap = c->out.cap ? c->out.cap * 2 : 64;
    MlccOnnx__NodeProto** nodes =
        (MlccOnnx__NodeProto**)realloc(c->out.nodes, cap * sizeof(*nodes));
    if (nodes == NULL) return oom();
    c->out.nodes = nodes;
    int32_t* opsets = (int32_t*)realloc(c->out.opsets, cap * sizeof(*opsets));
    if (opsets == NULL) return oom();
    c->out.opsets = opsets;
    c->out.cap = cap;
  }
  c->out.nodes[c->out.n] = n;
  c->out.opsets[c->out.n] = opset;
  c->out.n++;
  return mlcc_ok_status();
}

// A body name as the caller sees it (|fr| NULL: the main graph, unchanged).
static char* map_name(inline_ctx_t* c, const frame_t* fr, const char* name) {
  if (fr == NULL || name == NULL || name[0] == '\0') return (char*)str_or_empty(name);
  for (size_t i = 0; i < fr->fn->n_input; ++i) {
    if (strcmp(fr->fn->input[i], name) == 0) {
      return i < fr->call->n_input ? fr->call->input[i] : (char*)"";
    }
  }
  for (size_t i = 0; i < fr->fn->n_output; ++i) {
    if (strcmp(fr->fn->output[i], name) == 0 && i < fr->call->n_output &&
        fr->call->output[i][0] != '\0') {
      return fr->call->output[i];
    }
  }
  size_t lp = strlen(fr->prefix), ln = strlen(name);
  char* s = (char*)mlcc_arena_alloc(c->arena, lp + ln + 1, 1);
  if (s == NULL) return NULL;
  memcpy(s, fr->prefix, lp);
  memcpy(s + lp, name, ln + 1);
  return s;
}

static bool declares(const MlccOnnx__FunctionProto* f, const char* attr) {
  for (size_t i = 0; i < f->n_attribute; ++i) {
    if (strcmp(str_or_empty(f->attribute[i]), attr) == 0) return true;
  }
  return false;
}

static const MlccOnnx__AttributeProto* find_attr(MlccOnnx__AttributeProto* const* attrs,
                                                 size_t n, const char* name) {
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(str_or_empty(attrs[i]->name), name) == 0) return attrs[i];
  }
  return NULL;
}

static bool is_graph_attr(const MlccOnnx__AttributeProto* a) {
  return a->has_g ||
         (a->has_type && (a->type == MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
                          a->type == MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS));
}

// A copy of body node |n| in the caller's names, its attribute references
// resolved against |fr|'s call.
static mlcc_status_t instantiate(inline_ctx_t* c, const frame_t* fr, size_t index,
                                 const MlccOnnx__NodeProto* n, MlccOnnx__NodeProto** out) {
  char label[256];
  fn_label(fr->fn, label, sizeof(label));
  MlccOnnx__NodeProto* m =
      (MlccOnnx__NodeProto*)mlcc_arena_alloc(c->arena, sizeof(*m), _Alignof(MlccOnnx__NodeProto));
  if (m == NULL) return oom();
  *m = *n;
  m->input = (char**)mlcc_arena_alloc(c->arena, (n->n_input + 1) * sizeof(char*), _Alignof(char*));
  m->output =
      (char**)mlcc_arena_alloc(c->arena, (n->n_output + 1) * sizeof(char*), _Alignof(char*));
  m->attribute = (MlccOnnx__AttributeProto**)mlcc_arena_alloc(
      c->arena, (n->n_attribute + 1) * sizeof(*m->attribute), _Alignof(MlccOnnx__AttributeProto*));
  if (m->input == NULL || m->output == NULL || m->attribute == NULL) return oom();
  for (size_t i = 0; i < n->n_input; ++i) {
    if ((m->input[i] = map_name(c, fr, n->input[i])) == NULL) return oom();
  }
  for (size_t i = 0; i < n->n_output; ++i) {
    if ((m->output[i] = map_name(c, fr, n->output[i])) == NULL) return oom();
  }
  m->n_attribute = 0;
  for (size_t i = 0; i < n->n_attribute; ++i) {
    const MlccOnnx__AttributeProto* a = n->attribute[i];
    if (is_graph_attr(a)) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "function '%s': node #%zu '%s' (%s) has the graph attribute '%s' "
                              "(subgraphs inside functions are not supported)",
                              label, index, str_or_empty(n->name), str_or_empty(n->op_type),
                              str_or_empty(a->name));
    }
    const char* ref = a->ref_attr_name;
    if (ref == NULL || ref[0] == '\0') {
      m->attribute[m->n_attribute++] = (MlccOnnx__AttributeProto*)a;
      continue;
    }
    const MlccOnnx__AttributeProto* v =
        find_attr(fr->call->attribute, fr->call->n_attribute, ref);
    if (v == NULL) v = find_attr(fr->fn->attribute_proto, fr->fn->n_attribute_proto, ref);
    if (v == NULL) {
      if (declares(fr->fn, ref)) continue;  // declared, not given: left out
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "function '%s': node #%zu '%s' (%s): attribute '%s' refers to "
                              "'%s', which the function does not declare",
                              label, index, str_or_empty(n->name), str_or_empty(n->op_type),
                              str_or_empty(a->name), ref);
    }
    MlccOnnx__AttributeProto* copy = (MlccOnnx__AttributeProto*)mlcc_arena_alloc(
        c->arena, sizeof(*copy), _Alignof(MlccOnnx__AttributeProto));
    if (copy == NULL) return oom();
    *copy = *v;
    copy->name = a->name;
    copy->ref_attr_name = NULL;
    m->attribute[m->n_attribute++] = copy;
  }
  const char* call_name = str_or_empty(fr->call->name);
  const char* own = str_or_empty(n->name);
  size_t len = strlen(call_name) + 1 + strlen(own) + 1;
  m->name = (char*)mlcc_arena_alloc(c->arena, len, 1);
  if (m->name == NULL) return oom();
  snprintf(m->name, len, "%s/%s", call_name, own);
  *out = m;
  return mlcc_ok_status();
}

// The opset version body nodes of |fn| bind against for |domain| (0: none
// imported by the function).
static int32_t fn_opset(const MlccOnnx__FunctionProto* fn, const char* domain) {
  for (size_t i = 0; i < fn->n_opset_import; ++i) {
    const MlccOnnx__OperatorSetIdProto* o = fn->opset_import[i];
    if (strcmp(domain_of(o->domain), domain) == 0 && o->version > 0 && o->version < INT32_MAX) {
      return (int32_t)o->version;
    }
  }
  return 0;
}

static mlcc_status_t inline_call(inline_ctx_t* c, const MlccOnnx__FunctionProto* fn,
                                 const MlccOnnx__NodeProto* call);

// Emits |n| (already in the caller's names when it comes from a body):
// inlined when it calls a function, else as a node bound against |opset|.
static mlcc_status_t emit(inline_ctx_t* c, MlccOnnx__NodeProto* n, int32_t opset) {
  const MlccOnnx__FunctionProto* fn = find_function(c->model, n);
  if (fn == NULL) return push(c, n, opset);
  return inline_call(c, fn, n);
}

static mlcc_status_t inline_call(inline_ctx_t* c, const MlccOnnx__FunctionProto* fn,
                                 const MlccOnnx__NodeProto* call) {
  char label[256];
  fn_label(fn, label, sizeof(label));
  for (int i = 0; i < c->depth; ++i) {
    if (c->stack[i] != fn) continue;
    char chain[1024] = "";
    size_t used = 0;
    for (int j = i; j < c->depth && used < sizeof(chain); ++j) {
      char l[256];
      fn_label(c->stack[j], l, sizeof(l));
      used += (size_t)snprintf(chain + used, sizeof(chain) - used, "%s -> ", l);
    }
    if (used < sizeof(chain)) snprintf(chain + used, sizeof(chain) - used, "%s", label);
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "function '%s' calls itself: %s", label,
                            chain);
  }
  if (c->depth >= MAX_DEPTH) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "function calls nested deeper than %d (at '%s')", MAX_DEPTH, label);
  }
  if (call->n_input > fn->n_input || call->n_output > fn->n_output) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "node '%s' calls function '%s' with %zu inputs and %zu outputs; it "
                            "has %zu and %zu",
                            str_or_empty(call->name), label, call->n_input, call->n_output,
                            fn->n_input, fn->n_output);
  }
  frame_t fr;
  fr.fn = fn;
  fr.call = call;
  snprintf(fr.prefix, sizeof(fr.prefix), "mlcc.inline%u/", c->n_calls++);
  c->stack[c->depth++] = fn;
  mlcc_status_t s = mlcc_ok_status();
  for (size_t i = 0; i < fn->n_node && s == NULL; ++i) {
    MlccOnnx__NodeProto* m = NULL;
    s = instantiate(c, &fr, i, fn->node[i], &m);
    if (s == NULL) {
      // The innermost function importing the node's domain decides; else the model.
      int32_t opset = 0;
      for (int d = c->depth - 1; d >= 0 && opset == 0; --d) {
        opset = fn_opset(c->stack[d], domain_of(m->domain));
      }
      s = emit(c, m, opset);
    }
  }
  c->depth--;
  if (s != NULL) {
    s = mlcc_status_annotate(s, "in the call '%s' of function '%s'", str_or_empty(call->name),
                             label);
  }
  return s;
}

mlcc_status_t mlcc_onnx_inline_functions(const MlccOnnx__ModelProto* model, mlcc_arena_t* arena,
                                         const MlccOnnx__GraphProto** out_graph,
                                         const int32_t** out_node_opsets) {
  *out_graph = model->graph;
  *out_node_opsets = NULL;
  if (model->n_functions == 0 || model->graph == NULL) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(check_functions(model));
  if (!uses_functions(model)) return mlcc_ok_status();
  inline_ctx_t c;
  memset(&c, 0, sizeof(c));
  c.model = model;
  c.arena = arena;
  mlcc_status_t s = mlcc_ok_status();
  for (size_t i = 0; i < model->graph->n_node && s == NULL; ++i) {
    s = emit(&c, model->graph->node[i], 0);
  }
  MlccOnnx__GraphProto* g = NULL;
  if (s == NULL) {
    g = (MlccOnnx__GraphProto*)mlcc_arena_alloc(arena, sizeof(*g), _Alignof(MlccOnnx__GraphProto));
    MlccOnnx__NodeProto** nodes = (MlccOnnx__NodeProto**)mlcc_arena_alloc(
        arena, (c.out.n + 1) * sizeof(*nodes), _Alignof(MlccOnnx__NodeProto*));
    int32_t* opsets =
        (int32_t*)mlcc_arena_alloc(arena, (c.out.n + 1) * sizeof(int32_t), _Alignof(int32_t));
    if (g == NULL || nodes == NULL || opsets == NULL) {
      s = oom();
    } else {
      *g = *model->graph;
      if (c.out.n) memcpy(nodes, c.out.nodes, c.out.n * sizeof(*nodes));
      if (c.out.n) memcpy(opsets, c.out.opsets, c.out.n * sizeof(int32_t));
      g->node = nodes;
      g->n_node = c.out.n;
      *out_graph = g;
      *out_node_opsets = opsets;
    }
  }
  free(c.out.nodes);
  free(c.out.opsets);
  return s;
}

// SPDX-License-Identifier: Apache-2.0
// Textual IR (.mlccir) and Graphviz printers. Output depends only on the
// graph's contents and order, never on pointers or hash order.
#include "ir/print.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/subgraph.h"

// Short dtype spelling used in the text IR ("f32", "i64", "bool").
static const char* short_dtype(mlcc_dtype_t dtype) {
  switch (dtype) {
    case MLCC_DTYPE_F32: return "f32";
    case MLCC_DTYPE_F16: return "f16";
    case MLCC_DTYPE_BF16: return "bf16";
    case MLCC_DTYPE_F64: return "f64";
    case MLCC_DTYPE_I8: return "i8";
    case MLCC_DTYPE_I4: return "i4";
    case MLCC_DTYPE_U4: return "u4";
    case MLCC_DTYPE_I2: return "i2";
    case MLCC_DTYPE_U2: return "u2";
    case MLCC_DTYPE_I16: return "i16";
    case MLCC_DTYPE_I32: return "i32";
    case MLCC_DTYPE_I64: return "i64";
    case MLCC_DTYPE_U8: return "u8";
    case MLCC_DTYPE_U16: return "u16";
    case MLCC_DTYPE_U32: return "u32";
    case MLCC_DTYPE_U64: return "u64";
    case MLCC_DTYPE_BOOL: return "bool";
    case MLCC_DTYPE_F8E4M3FN: return "f8e4m3fn";
    case MLCC_DTYPE_F8E4M3FNUZ: return "f8e4m3fnuz";
    case MLCC_DTYPE_F8E5M2: return "f8e5m2";
    case MLCC_DTYPE_F8E5M2FNUZ: return "f8e5m2fnuz";
    case MLCC_DTYPE_F8E8M0: return "f8e8m0";
    case MLCC_DTYPE_F4E2M1: return "f4e2m1";
    default: return "?";
  }
}

// True if |name| can be printed bare after '%'.
static bool is_bare_name(const char* name) {
  if (name[0] == '\0') return false;
  for (const char* p = name; *p; ++p) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-' || c == '/';
    if (!ok) return false;
  }
  return true;
}

// Writes |s| as a double-quoted string with C escapes.
static void print_quoted(FILE* out, const char* s) {
  fputc('"', out);
  for (const unsigned char* p = (const unsigned char*)s; *p; ++p) {
    if (*p == '"' || *p == '\\') {
      fputc('\\', out);
      fputc(*p, out);
    } else if (*p == '\n') {
      fputs("\\n", out);
    } else if (*p < 0x20 || *p == 0x7f) {
      fprintf(out, "\\x%02x", *p);
    } else {
      fputc(*p, out);
    }
  }
  fputc('"', out);
}

static void print_value_ref(FILE* out, const mlcc_value_t* v) {
  if (v == NULL) {
    fputc('_', out);
    return;
  }
  fputc('%', out);
  if (is_bare_name(v->name)) {
    fputs(v->name, out);
  } else {
    print_quoted(out, v->name);
  }
}

static void print_type(FILE* out, const mlcc_value_t* v) {
  fprintf(out, ":%s", short_dtype(v->dtype));
  if (!v->shape_known) {
    fputs("[?]", out);
  } else {
    char buf[256];
    fputs(mlcc_shape_format(&v->shape, buf, sizeof(buf)), out);
  }
}

// Value reference with its type and workspace slot ("%y:f32[1,2]@ws+64").
static void print_value_def(FILE* out, const mlcc_value_t* v) {
  print_value_ref(out, v);
  if (v == NULL) return;
  print_type(out, v);
  if (v->ws_offset >= 0) fprintf(out, "@ws+%lld", (long long)v->ws_offset);
}

// Floats print with the fewest digits that read back to the same value
// (float32 or float64 as |is_f32| says) and always look like floats.
static void print_float(FILE* out, double f, bool is_f32) {
  if (isnan(f)) {
    fputs("nan", out);
    return;
  }
  if (isinf(f)) {
    fputs(f < 0 ? "-inf" : "inf", out);
    return;
  }
  char buf[64];
  for (int prec = is_f32 ? 6 : 15; prec <= (is_f32 ? 9 : 17); ++prec) {
    snprintf(buf, sizeof(buf), "%.*g", prec, f);
    if (is_f32 ? strtof(buf, NULL) == (float)f : strtod(buf, NULL) == f) break;
  }
  fputs(buf, out);
  if (strpbrk(buf, ".e") == NULL) fputs(".0", out);
}

static void print_attr_value(FILE* out, const mlcc_attr_t* a) {
  switch (a->kind) {
    case MLCC_ATTR_INT:
      fprintf(out, "%lld", (long long)a->i);
      break;
    case MLCC_ATTR_FLOAT:
      print_float(out, a->f, true);
      break;
    case MLCC_ATTR_STRING:
      print_quoted(out, a->s ? a->s : "");
      break;
    case MLCC_ATTR_INTS:
      fputc('[', out);
      for (uint32_t i = 0; a->ints && i < a->count; ++i) {
        fprintf(out, i ? ",%lld" : "%lld", (long long)a->ints[i]);
      }
      fputc(']', out);
      break;
    case MLCC_ATTR_FLOATS:
      fputc('[', out);
      for (uint32_t i = 0; a->floats && i < a->count; ++i) {
        if (i) fputc(',', out);
        print_float(out, a->floats[i], true);
      }
      fputc(']', out);
      break;
    case MLCC_ATTR_STRINGS:
      fputc('[', out);
      for (uint32_t i = 0; a->strings && i < a->count; ++i) {
        if (i) fputc(',', out);
        print_quoted(out, a->strings[i] ? a->strings[i] : "");
      }
      fputc(']', out);
      break;
    case MLCC_ATTR_TENSOR: {
      char buf[256];
      fprintf(out, "tensor<%s%s>", short_dtype(a->t_dtype),
              mlcc_shape_format(&a->t_shape, buf, sizeof(buf)));
      // Small tensors (ConstantOfShape's fill value) show their elements.
      int64_t numel = 0;
      mlcc_status_t s = mlcc_shape_numel(&a->t_shape, &numel);
      if (s == NULL && a->t_data != NULL && numel <= 8 && mlcc_dtype_is_valid(a->t_dtype)) {
        mlcc_value_t tmp;
        memset(&tmp, 0, sizeof(tmp));
        tmp.dtype = a->t_dtype;
        tmp.data = a->t_data;
        fputc('{', out);
        for (int64_t i = 0; i < numel; ++i) {
          if (i) fputc(',', out);
          if (mlcc_dtype_is_float(a->t_dtype)) {
            print_float(out, mlcc_value_const_f64(&tmp, i), a->t_dtype != MLCC_DTYPE_F64);
          } else {
            fprintf(out, "%lld", (long long)mlcc_value_const_i64(&tmp, i));
          }
        }
        fputc('}', out);
      }
      mlcc_status_free(s);
      break;
    }
    case MLCC_ATTR_GRAPH:  // If/Loop/Scan bodies, unrolled by infer-shapes
      fputs("graph<", out);
      print_quoted(out, a->g != NULL && a->g->name != NULL ? a->g->name : "");
      fprintf(out, ", %u nodes>", a->g != NULL ? a->g->n_nodes : 0u);
      break;
  }
}

static int compare_attr_ptrs(const void* a, const void* b) {
  const mlcc_attr_t* x = *(const mlcc_attr_t* const*)a;
  const mlcc_attr_t* y = *(const mlcc_attr_t* const*)b;
  return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

// Attributes sorted by name: " {a=1, b=[2,3]}", nothing when there are none.
static void print_attrs(FILE* out, const mlcc_node_t* n) {
  if (n->n_attrs == 0) return;
  const mlcc_attr_t* stack_sorted[32];
  const mlcc_attr_t** sorted = stack_sorted;
  if (n->n_attrs > 32) {
    sorted = (const mlcc_attr_t**)malloc(n->n_attrs * sizeof(*sorted));
  }
  if (sorted != NULL) {
    for (uint32_t i = 0; i < n->n_attrs; ++i) sorted[i] = &n->attrs[i];
    qsort(sorted, n->n_attrs, sizeof(*sorted), compare_attr_ptrs);
  }
  fputs(" {", out);
  for (uint32_t i = 0; i < n->n_attrs; ++i) {
    const mlcc_attr_t* a = sorted ? sorted[i] : &n->attrs[i];
    if (i) fputs(", ", out);
    fprintf(out, "%s=", a->name ? a->name : "");
    print_attr_value(out, a);
  }
  fputc('}', out);
  if (sorted != stack_sorted) free(sorted);
}

void mlcc_graph_print(const mlcc_graph_t* graph, FILE* out) {
  fputs("graph ", out);
  print_quoted(out, graph->name ? graph->name : "");
  fputs(" {\n", out);
  for (uint32_t i = 0; i < graph->n_inputs; ++i) {
    fputs("  input ", out);
    print_value_def(out, graph->inputs[i]);
    fputc('\n', out);
  }
  for (uint32_t i = 0; i < graph->n_values; ++i) {
    const mlcc_value_t* v = graph->values[i];
    if (v->kind != MLCC_VALUE_CONSTANT) continue;
    fputs("  const ", out);
    print_value_def(out, v);
    if (v->weight_offset >= 0) fprintf(out, "@weights+%lld", (long long)v->weight_offset);
    fputc('\n', out);
  }
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    const mlcc_node_t* n = graph->nodes[i];
    fputs("  ", out);
    if (n->dead) fputs("dead ", out);
    for (uint32_t j = 0; j < n->n_outputs; ++j) {
      if (j) fputs(", ", out);
      print_value_def(out, n->outputs[j]);
    }
    if (n->n_outputs == 0) fputs("()", out);
    fprintf(out, " = %s(", mlcc_op_name(n->op));
    for (uint32_t j = 0; j < n->n_inputs; ++j) {
      if (j) fputs(", ", out);
      print_value_ref(out, n->inputs[j]);
    }
    fputc(')', out);
    print_attrs(out, n);
    fprintf(out, "  // #%u ", n->id);
    print_quoted(out, n->name ? n->name : "");
    fprintf(out, " opset %d", (int)n->opset);
    if (n->kernel >= 0) fprintf(out, " kernel %d", (int)n->kernel);
    fputc('\n', out);
  }
  for (uint32_t k = 0; k < graph->n_kernels && graph->kernels; ++k) {
    const mlcc_kernel_t* kern = &graph->kernels[k];
    fprintf(out, "  kernel %u = [", k);
    for (uint32_t i = 0; i < kern->n_nodes; ++i) {
      const mlcc_node_t* n = kern->nodes[i];
      if (i) fputs(", ", out);
      fprintf(out, "#%u %s", n->id, mlcc_op_name(n->op));
      if (i > 0 && kern->carried_input) fprintf(out, "@%u", kern->carried_input[i]);
    }
    fputc(']', out);
    if (kern->inplace_input != NULL) {
      fputs(" inplace=", out);
      print_quoted(out, kern->inplace_input->name ? kern->inplace_input->name : "");
    }
    fputc('\n', out);
  }
  if (graph->workspace_size > 0) {
    fprintf(out, "  workspace size=%lld align=%lld\n", (long long)graph->workspace_size,
            (long long)graph->workspace_align);
  }
  for (uint32_t i = 0; i < graph->n_outputs; ++i) {
    fputs("  output ", out);
    print_value_def(out, graph->outputs[i]);
    fputc('\n', out);
  }
  fputs("}\n", out);
}

//===----------------------------------------------------------------------===//
// Graphviz
//===----------------------------------------------------------------------===//

// Writes |s| escaped for a DOT double-quoted string (without the quotes).
static void dot_escape(FILE* out, const char* s) {
  for (const unsigned char* p = (const unsigned char*)s; *p; ++p) {
    if (*p == '"' || *p == '\\') {
      fputc('\\', out);
      fputc(*p, out);
    } else if (*p == '\n') {
      fputs("\\n", out);
    } else if (*p >= 0x20 && *p != 0x7f) {
      fputc(*p, out);
    }
  }
}

static void dot_value_label(FILE* out, const mlcc_value_t* v) {
  char buf[256];
  dot_escape(out, v->name);
  fprintf(out, "\\n%s%s", short_dtype(v->dtype),
          v->shape_known ? mlcc_shape_format(&v->shape, buf, sizeof(buf)) : "[?]");
}

// |s| escaped, at most |max| bytes: a longer text keeps its end (the most
// specific part of "/features/features.1/conv/Conv") after "...".
static void dot_escape_elided(FILE* out, const char* s, size_t max) {
  size_t n = strlen(s);
  if (n > max && max > 3) {
    fputs("...", out);
    s += n - (max - 3);
  }
  dot_escape(out, s);
}

static void dot_type_label(FILE* out, const mlcc_value_t* v) {
  char buf[256];
  fprintf(out, "%s%s", short_dtype(v->dtype),
          v->shape_known ? mlcc_shape_format(&v->shape, buf, sizeof(buf)) : "[?]");
}

static bool is_graph_output(const mlcc_graph_t* graph, const mlcc_value_t* v) {
  for (uint32_t i = 0; i < graph->n_outputs; ++i) {
    if (graph->outputs[i] == v) return true;
  }
  return false;
}

enum { kDotMaxName = 40, kDotMaxConsts = 2 };

void mlcc_graph_print_dot_with(const mlcc_graph_t* graph, FILE* out,
                               const mlcc_dot_options_t* options) {
  const bool all = options == NULL || options->all_constants;
  fputs("digraph \"", out);
  dot_escape(out, graph->name ? graph->name : "");
  if (all) {
    fputs("\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n", out);
  } else {
    fputs("\" {\n  rankdir=TB;\n  ranksep=0.3;\n  nodesep=0.25;\n"
          "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
          "  edge [fontname=\"monospace\", fontsize=8];\n",
          out);
  }
  // Inputs and constants are ellipses / notes named v<id>. Grouped: only
  // the constants that are graph outputs get their own note.
  for (uint32_t i = 0; i < graph->n_values; ++i) {
    const mlcc_value_t* v = graph->values[i];
    if (v->kind == MLCC_VALUE_INTERMEDIATE) continue;
    if (!all && v->kind == MLCC_VALUE_CONSTANT && !is_graph_output(graph, v)) continue;
    fprintf(out, "  v%u [shape=%s, label=\"", v->id,
            v->kind == MLCC_VALUE_INPUT ? "ellipse" : "note");
    dot_value_label(out, v);
    fputs("\"];\n", out);
  }
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    const mlcc_node_t* n = graph->nodes[i];
    if (n->dead) continue;
    fprintf(out, "  n%u [label=\"%s", n->id, mlcc_op_name(n->op));
    if (n->name && n->name[0]) {
      fputs("\\n", out);
      if (all) {
        dot_escape(out, n->name);
      } else {
        dot_escape_elided(out, n->name, kDotMaxName);
      }
    }
    if (!all) {
      // The node's constant inputs (weights, shapes) as one line of types.
      uint32_t n_consts = 0;
      for (uint32_t j = 0; j < n->n_inputs; ++j) {
        const mlcc_value_t* v = n->inputs[j];
        if (v == NULL || v->kind != MLCC_VALUE_CONSTANT) continue;
        if (n_consts < kDotMaxConsts) {
          fputs(n_consts == 0 ? "\\nconst " : " ", out);
          dot_type_label(out, v);
        }
        n_consts++;
      }
      if (n_consts > kDotMaxConsts) fprintf(out, " +%u", n_consts - kDotMaxConsts);
    }
    fputs("\"];\n", out);
  }
  for (uint32_t k = 0; k < graph->n_kernels && graph->kernels; ++k) {
    const mlcc_kernel_t* kern = &graph->kernels[k];
    if (kern->n_nodes < 2) continue;
    fprintf(out, "  subgraph cluster_k%u {\n    label=\"kernel %u\";\n    style=dashed;\n", k,
            k);
    for (uint32_t i = 0; i < kern->n_nodes; ++i) fprintf(out, "    n%u;\n", kern->nodes[i]->id);
    fputs("  }\n", out);
  }
  // Edges: producer (node or input/constant) -> consumer, labeled by value
  // (grouped: by its type only; constants are in the consumer's label).
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    const mlcc_node_t* n = graph->nodes[i];
    if (n->dead) continue;
    for (uint32_t j = 0; j < n->n_inputs; ++j) {
      const mlcc_value_t* v = n->inputs[j];
      if (v == NULL) continue;
      if (v->kind != MLCC_VALUE_INTERMEDIATE) {
        if (all || v->kind == MLCC_VALUE_INPUT || is_graph_output(graph, v)) {
          fprintf(out, "  v%u -> n%u;\n", v->id, n->id);
        }
      } else if (v->producer != NULL) {
        fprintf(out, "  n%u -> n%u [label=\"", v->producer->id, n->id);
        if (all) {
          dot_value_label(out, v);
        } else {
          dot_type_label(out, v);
        }
        fputs("\"];\n", out);
      }
    }
  }
  // Graph outputs: a double octagon each.
  for (uint32_t i = 0; i < graph->n_outputs; ++i) {
    const mlcc_value_t* v = graph->outputs[i];
    if (v == NULL) continue;
    fprintf(out, "  out%u [shape=doubleoctagon, label=\"", i);
    dot_value_label(out, v);
    fputs("\"];\n", out);
    if (v->kind != MLCC_VALUE_INTERMEDIATE) {
      fprintf(out, "  v%u -> out%u;\n", v->id, i);
    } else if (v->producer != NULL) {
      fprintf(out, "  n%u -> out%u;\n", v->producer->id, i);
    }
  }
  fputs("}\n", out);
}

void mlcc_graph_print_dot(const mlcc_graph_t* graph, FILE* out) {
  mlcc_dot_options_t o = {.all_constants = true};
  mlcc_graph_print_dot_with(graph, out, &o);
}

// SPDX-License-Identifier: Apache-2.0
#include "driver/header.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/fsutil.h"
#include "driver/strbuf.h"
#include "ir/ops/quant.h"
#include "targets/codegen/codegen.h"
#include "targets/codegen/stack.h"

#ifndef MLCC_VERSION
#define MLCC_VERSION "0.1.0"
#endif

enum { kMaxNameLen = 200 };

static bool is_ident_char(unsigned char c) { return isalnum(c) || c == '_'; }

char* mlcc_header_sanitize_identifier(const char* text, char* buf, size_t buf_size) {
  if (buf == NULL || buf_size == 0) return buf;
  size_t pos = 0;
  const unsigned char* s = (const unsigned char*)text;
  if (s[0] >= '0' && s[0] <= '9' && pos + 1 < buf_size) buf[pos++] = '_';
  for (size_t i = 0; s[i] != '\0' && pos + 1 < buf_size; ++i) {
    // isalnum is locale-dependent for bytes >= 0x80: restrict to ASCII.
    buf[pos++] = (s[i] < 0x80 && is_ident_char(s[i])) ? (char)s[i] : '_';
  }
  if (pos == 0 && buf_size > 1) buf[pos++] = '_';
  buf[pos] = '\0';
  return buf;
}

// C11 and C++ keywords, plus names the header itself uses as parameters.
static const char* const kKeywords[] = {
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
    "_Noreturn", "_Static_assert", "_Thread_local", "alignas", "alignof", "and", "and_eq",
    "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char", "char16_t",
    "char32_t", "char8_t", "class", "co_await", "co_return", "co_yield", "compl", "concept",
    "const", "const_cast", "consteval", "constexpr", "constinit", "continue", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
    "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires",
    "restrict", "return", "short", "signed", "sizeof", "static", "static_assert",
    "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
    "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
    "volatile", "wchar_t", "while", "xor", "xor_eq",
};

bool mlcc_header_is_keyword(const char* word) {
  for (size_t i = 0; i < sizeof(kKeywords) / sizeof(kKeywords[0]); ++i) {
    if (strcmp(word, kKeywords[i]) == 0) return true;
  }
  return false;
}

char* mlcc_header_default_name(const char* model_path, char* buf, size_t buf_size) {
  const char* base = mlcc_fs_basename(model_path);
  const char* dot = strrchr(base, '.');
  size_t len = (dot != NULL && dot != base) ? (size_t)(dot - base) : strlen(base);
  char stem[256];
  if (len >= sizeof(stem)) len = sizeof(stem) - 1;
  memcpy(stem, base, len);
  stem[len] = '\0';
  return mlcc_header_sanitize_identifier(stem, buf, buf_size);
}

mlcc_status_t mlcc_header_check_name(const char* name) {
  size_t len = strlen(name);
  bool ok = len > 0 && len <= kMaxNameLen && !(name[0] >= '0' && name[0] <= '9');
  for (size_t i = 0; ok && i < len; ++i) {
    unsigned char c = (unsigned char)name[i];
    ok = c < 0x80 && is_ident_char(c);
  }
  if (!ok) {
    char suggestion[kMaxNameLen + 2];
    mlcc_header_sanitize_identifier(name, suggestion, sizeof(suggestion));
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "invalid --name '%s': expected a C identifier of at most %d "
                            "characters (letters, digits, '_'; not starting with a digit), "
                            "e.g. '%s'",
                            name, kMaxNameLen, suggestion);
  }
  if (mlcc_header_is_keyword(name)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "invalid --name '%s': it is a C/C++ keyword", name);
  }
  return mlcc_ok_status();
}

// Appends |text| so it is safe inside a "..." in a /* */ comment: quotes and
// backslashes escaped, control and non-ASCII bytes as \xNN, and "*/" broken.
static void append_comment_string(mlcc_strbuf_t* sb, const char* text) {
  const unsigned char* s = (const unsigned char*)text;
  for (size_t i = 0; s[i] != '\0'; ++i) {
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      mlcc_strbuf_append_char(sb, '\\');
      mlcc_strbuf_append_char(sb, (char)c);
    } else if (c < 0x20 || c >= 0x7f) {
      mlcc_strbuf_appendf(sb, "\\x%02x", c);
    } else if (c == '*' && s[i + 1] == '/') {
      mlcc_strbuf_append(sb, "*\\");
    } else if (c == '/' && s[i + 1] == '*') {
      mlcc_strbuf_append(sb, "/\\");
    } else {
      mlcc_strbuf_append_char(sb, (char)c);
    }
  }
}

static const char* header_c_type(mlcc_dtype_t dtype) {
  if (dtype == MLCC_DTYPE_BOOL) return "uint8_t";
  if (!mlcc_dtype_is_valid(dtype)) return NULL;
  return mlcc_dtype_c_type(dtype);
}

static bool is_live_const(const mlcc_value_t* v) {
  return v != NULL && v->kind == MLCC_VALUE_CONSTANT && v->data != NULL && v->shape_known;
}

// Reads the (scale, zero point) pair at inputs |si|, |si|+1 of |node| into
// |out|; false unless the scale is a constant float tensor and the zero point
// a constant or absent.
static bool read_quant(const mlcc_node_t* node, uint32_t si, bool has_axis,
                       const mlcc_value_t* v, mlcc_header_quant_t* out) {
  const mlcc_value_t* scale = mlcc_node_input(node, si);
  const mlcc_value_t* zp = mlcc_node_input(node, si + 1);
  if (!is_live_const(scale) || !mlcc_dtype_is_float(scale->dtype)) return false;
  if (zp != NULL && (!is_live_const(zp) || !mlcc_dtype_is_int(zp->dtype) ||
                     mlcc_shape_numel_unchecked(&zp->shape) < 1)) {
    return false;
  }
  int64_t n = mlcc_shape_numel_unchecked(&scale->shape);
  if (n < 1) return false;
  out->n_scales = n;
  out->scale = mlcc_value_const_f64(scale, 0);
  out->zero_point = zp != NULL ? mlcc_value_const_i64(zp, 0) : 0;
  out->axis = -1;
  if (n > 1) {
    int64_t axis = 1;
    if (!has_axis) return false;
    mlcc_status_t st = mlcc_node_attr_int(node, "axis", 1, &axis);
    if (st != NULL) {  // a malformed attribute: show no quantization
      mlcc_status_free(st);
      return false;
    }
    if (axis < 0) axis += v->shape.rank;
    out->axis = axis;
  }
  return true;
}

// A walk through value-moving ops longer than this shows no quantization.
enum { kMaxMoveDepth = 64 };

// The quantization of |v| from its producer: a QuantizeLinear or a QLinear*
// op (Conv, MatMul, and the com.microsoft Add, Mul, pools, Concat), or a
// value-moving op all of whose data inputs have the same
// per-tensor quantization (an axis would not survive a reshape or transpose).
static bool produced_quant(const mlcc_value_t* v, int depth, mlcc_header_quant_t* out) {
  const mlcc_node_t* p = v->producer;
  if (p == NULL || p->dead || mlcc_node_output(p, 0) != v) return false;
  if (p->op == MLCC_OP_QUANTIZE_LINEAR) return read_quant(p, 1, true, v, out);
  if (p->op == MLCC_OP_QLINEAR_CONV || p->op == MLCC_OP_QLINEAR_MATMUL ||
      p->op == MLCC_OP_QLINEAR_ADD || p->op == MLCC_OP_QLINEAR_MUL) {
    return read_quant(p, 6, false, v, out);
  }
  if (p->op == MLCC_OP_QLINEAR_GLOBAL_AVERAGE_POOL || p->op == MLCC_OP_QLINEAR_AVERAGE_POOL) {
    return read_quant(p, 3, false, v, out);
  }
  if (p->op == MLCC_OP_QLINEAR_CONCAT) return read_quant(p, 0, false, v, out);
  int32_t n_data = mlcc_quant_moved_data_inputs(p);
  uint32_t n = n_data < 0 ? p->n_inputs : (uint32_t)n_data;
  if (n == 0 || depth >= kMaxMoveDepth) return false;
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_value_t* in = mlcc_node_input(p, i);
    mlcc_header_quant_t q;
    if (in == NULL || in->dtype != v->dtype || !produced_quant(in, depth + 1, &q) ||
        q.axis >= 0 || (i > 0 && (q.scale != out->scale || q.zero_point != out->zero_point))) {
      memset(out, 0, sizeof(*out));
      return false;
    }
    *out = q;
  }
  return true;
}

// The quantization of |v| from its first live reader in node order: a
// DequantizeLinear or a QLinear* op (as above), or a one-input value-moving
// op whose output has one (per tensor).
static bool read_by_quant(const mlcc_graph_t* graph, const mlcc_value_t* v, int depth,
                          mlcc_header_quant_t* out) {
  for (uint32_t i = 0; i < graph->n_nodes; ++i) {
    const mlcc_node_t* n = graph->nodes[i];
    if (n->dead) continue;
    if (n->op == MLCC_OP_DEQUANTIZE_LINEAR && mlcc_node_input(n, 0) == v) {
      return read_quant(n, 1, true, v, out);
    }
    if (n->op == MLCC_OP_QLINEAR_CONV || n->op == MLCC_OP_QLINEAR_MATMUL ||
        n->op == MLCC_OP_QLINEAR_ADD || n->op == MLCC_OP_QLINEAR_MUL) {
      if (mlcc_node_input(n, 0) == v) return read_quant(n, 1, false, v, out);
      if (mlcc_node_input(n, 3) == v) return read_quant(n, 4, false, v, out);
    }
    if ((n->op == MLCC_OP_QLINEAR_GLOBAL_AVERAGE_POOL || n->op == MLCC_OP_QLINEAR_AVERAGE_POOL) &&
        mlcc_node_input(n, 0) == v) {
      return read_quant(n, 1, false, v, out);
    }
    for (uint32_t t = 2; n->op == MLCC_OP_QLINEAR_CONCAT && t + 2 < n->n_inputs; t += 3) {
      if (mlcc_node_input(n, t) == v) return read_quant(n, t + 1, false, v, out);
    }
    if (mlcc_quant_moved_data_inputs(n) == 1 && mlcc_node_input(n, 0) == v && depth < kMaxMoveDepth) {
      const mlcc_value_t* o = mlcc_node_output(n, 0);
      if (o == NULL || o->dtype != v->dtype) return false;
      if (!read_by_quant(graph, o, depth + 1, out) || out->axis >= 0) {
        memset(out, 0, sizeof(*out));
        return false;
      }
      return true;
    }
  }
  return false;
}

bool mlcc_header_io_quant(const mlcc_graph_t* graph, const mlcc_value_t* v, bool is_input,
                          mlcc_header_quant_t* out_quant) {
  memset(out_quant, 0, sizeof(*out_quant));
  if (v == NULL || !mlcc_dtype_is_int(v->dtype)) return false;
  return is_input ? read_by_quant(graph, v, 0, out_quant) : produced_quant(v, 0, out_quant);
}

// Checks an input/output value and appends its comment line.
static mlcc_status_t describe_value(mlcc_strbuf_t* sb, const mlcc_graph_t* graph,
                                    const char* role, uint32_t index, const mlcc_value_t* v) {
  if (!v->shape_known || v->shape.rank < 0 || v->shape.rank > MLCC_MAX_RANK) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s '%s' has no inferred shape", role,
                            v->name);
  }
  if (header_c_type(v->dtype) == NULL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "%s '%s' has dtype %s, which the generated API does not support",
                            role, v->name, mlcc_dtype_name(v->dtype));
  }
  mlcc_strbuf_appendf(sb, "/* %-6s %u \"", role, index);
  append_comment_string(sb, v->name);
  // "[2,<=12]": a data-dependent dim shows its upper bound after "<=".
  mlcc_strbuf_appendf(sb, "\": %s [", mlcc_dtype_name(v->dtype));
  for (int32_t d = 0; d < v->shape.rank; ++d) {
    mlcc_strbuf_appendf(sb, "%s%s%lld", d ? "," : "", (v->bound_dims >> d) & 1u ? "<=" : "",
                        (long long)v->shape.dims[d]);
  }
  mlcc_strbuf_append(sb, "]");
  if (v->dtype == MLCC_DTYPE_F4E2M1) {
    // ONNX packs float4e2m1 two per byte; the generated API does not.
    mlcc_strbuf_append(sb, ", one element per byte (uint8_t float4e2m1 code 0..15, bit 3 the "
                           "sign, not packed)");
  } else if (mlcc_dtype_is_subbyte(v->dtype)) {
    // ONNX packs int4/uint4 two per byte; the generated API does not.
    bool two = mlcc_dtype_bits(v->dtype) == 2;
    mlcc_strbuf_appendf(sb, ", one element per byte (%s %s, not packed)",
                        mlcc_dtype_c_type(v->dtype),
                        mlcc_dtype_is_unsigned(v->dtype) ? (two ? "0..3" : "0..15")
                                                         : (two ? "-2..1" : "-8..7"));
  }
  mlcc_header_quant_t q;
  if (mlcc_header_io_quant(graph, v, strcmp(role, "input") == 0, &q)) {
    // real = (q - zero_point) * scale, the ONNX QuantizeLinear/DequantizeLinear rule.
    if (q.axis < 0) {
      mlcc_strbuf_appendf(sb, ", quantized: real = (q - %lld) * %.9g", (long long)q.zero_point,
                          q.scale);
    } else {
      mlcc_strbuf_appendf(sb, ", quantized per axis %lld (%lld scales and zero points; "
                          "the first: real = (q - %lld) * %.9g)", (long long)q.axis,
                          (long long)q.n_scales, (long long)q.zero_point, q.scale);
    }
  }
  mlcc_strbuf_append(sb, " */\n");
  return mlcc_ok_status();
}

// Parameter names: sanitized ONNX names, unique, not keywords, not "workspace",
// "pfor", "pfor_ctx" or "mlcc_parallel_for_fn".
static mlcc_status_t make_param_names(const mlcc_graph_t* graph, char*** out_names) {
  *out_names = NULL;
  uint32_t n = graph->n_inputs + graph->n_outputs;
  char** names = (char**)calloc(n ? n : 1, sizeof(char*));
  if (names == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_value_t* v =
        i < graph->n_inputs ? graph->inputs[i] : graph->outputs[i - graph->n_inputs];
    char base[kMaxNameLen + 2];
    mlcc_header_sanitize_identifier(v->name ? v->name : "", base, sizeof(base));
    char candidate[kMaxNameLen + 32];
    snprintf(candidate, sizeof(candidate), "%s", base);
    for (uint32_t suffix = 1;; ++suffix) {
      // The entry points' own parameter and type names are taken too.
      bool clash = mlcc_header_is_keyword(candidate) || strcmp(candidate, "workspace") == 0 ||
                   strcmp(candidate, "pfor") == 0 || strcmp(candidate, "pfor_ctx") == 0 ||
                   strcmp(candidate, "mlcc_parallel_for_fn") == 0;
      for (uint32_t j = 0; j < i && !clash; ++j) clash = strcmp(names[j], candidate) == 0;
      if (!clash) break;
      snprintf(candidate, sizeof(candidate), "%s_%u", base, suffix);
    }
    names[i] = strdup(candidate);
    if (names[i] == NULL) {
      for (uint32_t j = 0; j < i; ++j) free(names[j]);
      free(names);
      return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  *out_names = names;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_header_render(const mlcc_graph_t* graph, const char* name,
                                 const char* model_file_name, const char* model_sha256_hex,
                                 char** out_text) {
  *out_text = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_header_check_name(name));
  size_t weights_size = 0;  // NAME_WEIGHTS_SIZE: the blob the target's passes packed
  MLCC_RETURN_IF_ERROR(mlcc_codegen_weights_size(graph, &weights_size));
  char upper[kMaxNameLen + 1];
  size_t nl = strlen(name);
  for (size_t i = 0; i <= nl; ++i) upper[i] = (char)toupper((unsigned char)name[i]);

  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  mlcc_strbuf_appendf(&sb, "/* %s.h, generated by mlcc %s from ", name, MLCC_VERSION);
  append_comment_string(&sb, model_file_name);
  if (model_sha256_hex != NULL) mlcc_strbuf_appendf(&sb, " (sha256 %s)", model_sha256_hex);
  mlcc_strbuf_append(&sb, "; do not edit. */\n");
  mlcc_strbuf_appendf(&sb, "#ifndef %s_H_\n#define %s_H_\n", upper, upper);
  mlcc_strbuf_append(&sb,
                     "#include <stdint.h>\n"
                     "#ifdef __cplusplus\n"
                     "extern \"C\" {\n"
                     "#endif\n");
  // The workspace and stack macros with their comments aligned in one
  // column. NAME_STACK_SIZE (targets/codegen/stack.h) is the same on every
  // Linux target; a microcontroller's header has that target's own bound.
  int64_t ws_align = graph->workspace_align > 0 ? graph->workspace_align : 64;
  int64_t ws_size = graph->workspace_size > 0 ? graph->workspace_size : 0;
  char size_line[kMaxNameLen + 64], align_line[kMaxNameLen + 64], stack_line[kMaxNameLen + 64];
  char weights_line[kMaxNameLen + 64];
  snprintf(weights_line, sizeof(weights_line), "#define %s_WEIGHTS_SIZE %zu", upper,
           weights_size);
  snprintf(size_line, sizeof(size_line), "#define %s_WORKSPACE_SIZE %lld", upper,
           (long long)ws_size);
  snprintf(align_line, sizeof(align_line), "#define %s_WORKSPACE_ALIGN %lld", upper,
           (long long)ws_align);
  snprintf(stack_line, sizeof(stack_line), "#define %s_STACK_SIZE %lld", upper,
           (long long)mlcc_stack_size(graph));
  size_t width = strlen(size_line);
  if (strlen(align_line) > width) width = strlen(align_line);
  if (strlen(stack_line) > width) width = strlen(stack_line);
  if (strlen(weights_line) > width) width = strlen(weights_line);
  width += 3;
  mlcc_strbuf_appendf(&sb, "%-*s/* bytes the caller provides */\n", (int)width, size_line);
  mlcc_strbuf_appendf(&sb, "%-*s/* alignment of the workspace, bytes */\n", (int)width,
                      align_line);
  mlcc_strbuf_appendf(&sb, "%-*s/* stack bytes a run call or parallel task needs */\n",
                      (int)width, stack_line);
  mlcc_strbuf_appendf(&sb, "%-*s/* bytes of read-only weights (flash on an MCU) */\n",
                      (int)width, weights_line);
  mlcc_strbuf_appendf(&sb, "#define %s_NUM_INPUTS %u\n", upper, graph->n_inputs);
  mlcc_strbuf_appendf(&sb, "#define %s_NUM_OUTPUTS %u\n", upper, graph->n_outputs);

  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t i = 0; s == NULL && i < graph->n_inputs; ++i) {
    s = describe_value(&sb, graph, "input", i, graph->inputs[i]);
  }
  for (uint32_t i = 0; s == NULL && i < graph->n_outputs; ++i) {
    s = describe_value(&sb, graph, "output", i, graph->outputs[i]);
  }
  char** params = NULL;
  if (s == NULL) s = make_param_names(graph, &params);
  if (s != NULL) {
    mlcc_strbuf_deinit(&sb);
    return s;
  }

  // The info types are shared by every model's header; a header of another
  // entry ABI (LINKED: entry-abi-v3) defined them differently: stop there
  // rather than read a library's NAME_info with the wrong layout.
  mlcc_strbuf_append(
      &sb,
      "#if defined(MLCC_MODEL_INFO_T_DEFINED) && !defined(MLCC_MODEL_INFO_ABI_V3)\n"
      "#error \"mlcc_model_info_t is defined by a header of another mlcc entry ABI: "
      "rebuild every model with one mlcc\"\n"
      "#endif\n"
      "#ifndef MLCC_MODEL_INFO_T_DEFINED\n"
      "#define MLCC_MODEL_INFO_T_DEFINED\n"
      "#define MLCC_MODEL_INFO_ABI_V3\n"
      "typedef struct mlcc_tensor_info_t {\n"
      "  const char *name;       /* ONNX value name */\n"
      "  int32_t dtype;          /* ONNX TensorProto.DataType: 1 float32, 7 int64, 9 bool, ... */\n"
      "  int32_t rank;\n"
      "  const int64_t *dims;    /* rank entries */\n"
      "  int64_t size_bytes;     /* numel * element size */\n"
      "} mlcc_tensor_info_t;\n"
      "typedef struct mlcc_model_info_t {\n"
      "  const char *name;       /* NAME */\n"
      "  int32_t num_inputs;\n"
      "  int32_t num_outputs;\n"
      "  const mlcc_tensor_info_t *inputs;\n"
      "  const mlcc_tensor_info_t *outputs;\n"
      "  int64_t workspace_size;\n"
      "  int64_t workspace_align;\n"
      "  int (*run)(const void *const *inputs, void *const *outputs, void *workspace);\n"
      "  int (*output_shape)(const void *workspace, int output_index, int64_t *dims);\n"
      "  const uint32_t *output_bound_dims; /* per output: bit d set = dims[d] is a bound */\n"
      "  int64_t stack_size;     /* NAME_STACK_SIZE */\n"
      "} mlcc_model_info_t;\n"
      "#endif\n");
  mlcc_strbuf_appendf(&sb, "extern const mlcc_model_info_t %s_info;\n", name);
  mlcc_strbuf_appendf(&sb,
                      "/* Actual dims of output i after %s_run with this workspace (\"<=\" dims\n"
                      "   vary with the input values); 0 on success. */\n"
                      "int %s_output_shape(const void *workspace, int output_index, "
                      "int64_t *dims);\n",
                      name, name);
  // NAME_run and NAME_run_parallel share the parameter list.
  uint32_t n = graph->n_inputs + graph->n_outputs;
  for (int variant = 0; variant < 2; ++variant) {
    if (variant == 1) {
      // The parallel-for callback type (docs/generated-api.md, parallel
      // section), guarded so headers of several models can be included.
      mlcc_strbuf_append(
          &sb,
          "#ifndef MLCC_PARALLEL_FOR_FN_DEFINED\n"
          "#define MLCC_PARALLEL_FOR_FN_DEFINED\n"
          "/* Runs fn(arg, i) for every i in [0, n), possibly in parallel, and returns\n"
          "   when all calls have finished. */\n"
          "typedef void (*mlcc_parallel_for_fn)(void *ctx, int64_t n,\n"
          "                                     void (*fn)(void *arg, int64_t i), void *arg);\n"
          "#endif\n");
    }
    mlcc_strbuf_appendf(&sb, "int %s_run%s(", name, variant ? "_parallel" : "");
    for (uint32_t i = 0; i < n; ++i) {
      bool is_input = i < graph->n_inputs;
      const mlcc_value_t* v = is_input ? graph->inputs[i] : graph->outputs[i - graph->n_inputs];
      mlcc_strbuf_appendf(&sb, "%s%s *%s, ", is_input ? "const " : "", header_c_type(v->dtype),
                          params[i]);
    }
    if (variant == 0) {
      mlcc_strbuf_append(&sb, "void *workspace);\n");
      mlcc_strbuf_appendf(
          &sb,
          "int %s_run_v(const void *const *inputs, void *const *outputs, void *workspace);\n",
          name);
    } else {
      mlcc_strbuf_append(&sb,
                         "void *workspace,\n"
                         "    mlcc_parallel_for_fn pfor, void *pfor_ctx);\n");
      mlcc_strbuf_appendf(&sb,
                          "int %s_run_parallel_v(const void *const *inputs, void *const *outputs, "
                          "void *workspace,\n"
                          "    mlcc_parallel_for_fn pfor, void *pfor_ctx);\n",
                          name);
    }
  }
  for (uint32_t i = 0; i < n; ++i) free(params[i]);
  free(params);
  mlcc_strbuf_append(&sb,
                     "#ifdef __cplusplus\n"
                     "}\n"
                     "#endif\n"
                     "#endif\n");
  s = mlcc_strbuf_status(&sb);
  if (s != NULL) {
    mlcc_strbuf_deinit(&sb);
    return s;
  }
  *out_text = mlcc_strbuf_take(&sb);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_header_add_profile(const char* name, char** text) {
  static const char kTail[] = "#ifdef __cplusplus\n}\n#endif\n#endif\n";
  size_t len = strlen(*text), tl = sizeof(kTail) - 1;
  if (len < tl || strcmp(*text + len - tl, kTail) != 0) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "header of '%s' has no closing guard", name);
  }
  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  mlcc_strbuf_append_n(&sb, *text, len - tl);
  mlcc_strbuf_append(
      &sb,
      "#ifndef MLCC_PROFILE_ENTRY_T_DEFINED\n"
      "#define MLCC_PROFILE_ENTRY_T_DEFINED\n"
      "/* One kernel (a node and its fused epilogue) of a --profile build. */\n"
      "typedef struct mlcc_profile_entry_t {\n"
      "  const char *name;       /* ONNX name of the kernel's first node */\n"
      "  const char *ops;        /* op types, e.g. \"Conv+Relu\" */\n"
      "  int64_t flops;          /* floating-point ops per call (2*MACs), -1 unknown */\n"
      "  int64_t units;          /* parallel units in NAME_run_parallel, 0: runs whole */\n"
      "  int64_t calls;          /* calls since the last reset */\n"
      "  int64_t ns;             /* total wall time of those calls, nanoseconds */\n"
      "  int64_t min_ns;         /* fastest call; INT64_MAX before the first */\n"
      "} mlcc_profile_entry_t;\n"
      "#endif\n");
  mlcc_strbuf_appendf(&sb,
                      "int32_t %s_profile(const mlcc_profile_entry_t **rows);\n"
                      "void %s_profile_reset(void);\n",
                      name, name);
  mlcc_strbuf_append(&sb, kTail);
  mlcc_status_t s = mlcc_strbuf_status(&sb);
  if (s != NULL) {
    mlcc_strbuf_deinit(&sb);
    return s;
  }
  free(*text);
  *text = mlcc_strbuf_take(&sb);
  return mlcc_ok_status();
}

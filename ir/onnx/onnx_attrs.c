// SPDX-License-Identifier: Apache-2.0
// ONNX import of attributes (AttributeProto -> mlcc_attr_t) and of Constant
// nodes (-> CONSTANT values); GRAPH attributes go on to onnx_subgraph.c.
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/onnx/import_ctx.h"

//===----------------------------------------------------------------------===//
// Attributes and Constant nodes
//===----------------------------------------------------------------------===//

static const char* attr_type_name(int t) {
  switch (t) {
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "FLOAT";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "INT";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "STRING";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "FLOATS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "INTS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

// The attribute's declared type; very old files omit |type|, so it is then
// inferred from which field is set.
static int attr_type(const MlccOnnx__AttributeProto* a) {
  if (a->has_type && a->type != MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
    return a->type;
  }
  if (a->n_floats) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  if (a->n_strings) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  if (a->t) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->has_g) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  if (a->has_s) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  if (a->has_f) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  return MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

mlcc_status_t mlcc_onnx_convert_attr(import_ctx_t* ctx, const MlccOnnx__AttributeProto* a,
                                     mlcc_attr_t* out) {
  mlcc_arena_t* arena = &ctx->graph->arena;
  memset(out, 0, sizeof(*out));
  if (a->name == NULL || a->name[0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "an attribute has no name");
  }
  out->name = mlcc_arena_strdup(arena, a->name);
  if (out->name == NULL) return oom("copying an attribute name");
  if (a->ref_attr_name != NULL && a->ref_attr_name[0] != '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "attribute '%s' refers to function attribute '%s' outside a "
                            "function body", a->name, a->ref_attr_name);
  }
  int t = attr_type(a);
  switch (t) {
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
      out->kind = MLCC_ATTR_FLOAT;
      out->f = a->f;
      return mlcc_ok_status();
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
      out->kind = MLCC_ATTR_INT;
      out->i = a->i;
      return mlcc_ok_status();
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
      out->kind = MLCC_ATTR_STRING;
      out->s = mlcc_arena_strndup(arena, (const char*)a->s.data, a->s.len);
      out->s_len = a->s.len;
      if (out->s == NULL) return oom("copying a string attribute");
      return mlcc_ok_status();
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
      if (a->n_floats > UINT32_MAX) break;
      out->kind = MLCC_ATTR_FLOATS;
      out->count = (uint32_t)a->n_floats;
      float* f = (float*)mlcc_arena_alloc(arena, a->n_floats * sizeof(float), _Alignof(float));
      if (f == NULL) return oom("copying a FLOATS attribute");
      if (a->n_floats) memcpy(f, a->floats, a->n_floats * sizeof(float));
      out->floats = f;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: {
      if (a->n_ints > UINT32_MAX) break;
      out->kind = MLCC_ATTR_INTS;
      out->count = (uint32_t)a->n_ints;
      int64_t* v =
          (int64_t*)mlcc_arena_alloc(arena, a->n_ints * sizeof(int64_t), _Alignof(int64_t));
      if (v == NULL) return oom("copying an INTS attribute");
      if (a->n_ints) memcpy(v, a->ints, a->n_ints * sizeof(int64_t));
      out->ints = v;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
      if (a->n_strings > UINT32_MAX) break;
      out->kind = MLCC_ATTR_STRINGS;
      out->count = (uint32_t)a->n_strings;
      const char** v = (const char**)mlcc_arena_alloc(
          arena, a->n_strings * sizeof(char*), _Alignof(char*));
      if (v == NULL) return oom("copying a STRINGS attribute");
      for (size_t i = 0; i < a->n_strings; ++i) {
        v[i] = mlcc_arena_strndup(arena, (const char*)a->strings[i].data, a->strings[i].len);
        if (v[i] == NULL) return oom("copying a STRINGS attribute");
      }
      out->strings = v;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
      if (a->t == NULL) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "attribute '%s' is a TENSOR but has no tensor", a->name);
      }
      mlcc_onnx_tensor_t dec;
      mlcc_status_t s = mlcc_onnx_decode_tensor(&ctx->tensor, a->t, "tensor", &dec);
      if (!mlcc_status_is_ok(s)) return mlcc_status_annotate(s, "attribute '%s'", a->name);
      out->kind = MLCC_ATTR_TENSOR;
      out->t_dtype = dec.dtype;
      out->t_shape = dec.shape;
      out->t_data = dec.data;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: {
      const mlcc_subgraph_t* sg = NULL;
      mlcc_status_t s = mlcc_onnx_convert_graph_attr(ctx, a, &sg);
      if (!mlcc_status_is_ok(s)) return mlcc_status_annotate(s, "attribute '%s'", a->name);
      out->kind = MLCC_ATTR_GRAPH;
      out->g = sg;
      return mlcc_ok_status();
    }
    case MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED:
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "attribute '%s' has no type or value",
                              a->name);
    default:
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "attribute '%s' has type %s, which mlcc does not support%s",
                              a->name, attr_type_name(t),
                              t == MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS
                                  ? " (lists of subgraphs)"
                                  : "");
  }
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "attribute '%s' has too many values",
                          a->name);
}

mlcc_status_t mlcc_onnx_decode_constant_node(import_ctx_t* ctx, const MlccOnnx__NodeProto* n,
                                             mlcc_onnx_tensor_t* out) {
  memset(out, 0, sizeof(*out));
  mlcc_arena_t* arena = &ctx->graph->arena;
  if (n->n_output != 1 || n->output[0] == NULL || n->output[0][0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "a Constant node must have exactly one named output");
  }
  size_t n_inputs = 0;
  for (size_t i = 0; i < n->n_input; ++i) n_inputs += str_or_empty(n->input[i])[0] != '\0';
  if (n_inputs != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "a Constant node takes no inputs");
  }
  if (n->n_attribute != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "a Constant node must have exactly one attribute (it has %zu)",
                            n->n_attribute);
  }
  const MlccOnnx__AttributeProto* a = n->attribute[0];
  const char* an = str_or_empty(a->name);
  int t = attr_type(a);
  int expect_type = 0;
  if (strcmp(an, "value") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (t != expect_type || a->t == NULL) goto wrong_type;
    mlcc_status_t s = mlcc_onnx_decode_tensor(&ctx->tensor, a->t, "tensor", out);
    if (!mlcc_status_is_ok(s)) return mlcc_status_annotate(s, "attribute 'value'");
    return mlcc_ok_status();
  }
  size_t count = 1, elem = 0;
  const void* src = NULL;
  out->shape.rank = 0;
  if (strcmp(an, "value_float") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (t != expect_type) goto wrong_type;
    out->dtype = MLCC_DTYPE_F32;
    elem = sizeof(float);
    src = &a->f;
  } else if (strcmp(an, "value_int") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (t != expect_type) goto wrong_type;
    out->dtype = MLCC_DTYPE_I64;
    elem = sizeof(int64_t);
    src = &a->i;
  } else if (strcmp(an, "value_floats") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (t != expect_type && !(a->n_floats == 0 && !a->has_type)) goto wrong_type;
    out->dtype = MLCC_DTYPE_F32;
    out->shape.rank = 1;
    out->shape.dims[0] = (int64_t)a->n_floats;
    count = a->n_floats;
    elem = sizeof(float);
    src = a->floats;
  } else if (strcmp(an, "value_ints") == 0) {
    expect_type = MLCC_ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (t != expect_type && !(a->n_ints == 0 && !a->has_type)) goto wrong_type;
    out->dtype = MLCC_DTYPE_I64;
    out->shape.rank = 1;
    out->shape.dims[0] = (int64_t)a->n_ints;
    count = a->n_ints;
    elem = sizeof(int64_t);
    src = a->ints;
  } else if (strcmp(an, "value_string") == 0 || strcmp(an, "value_strings") == 0 ||
             strcmp(an, "sparse_value") == 0) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Constant attribute '%s' is not supported (string and sparse "
                            "constants)", an);
  } else {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Constant has unknown attribute '%s'",
                            an);
  }
  // protobuf-c caps repeated fields far below SIZE_MAX / 8; the arena checks too.
  void* data = mlcc_arena_alloc(arena, count * elem, 64);
  if (data == NULL) return oom("copying a Constant");
  if (count != 0) memcpy(data, src, count * elem);
  out->data = data;
  out->size = count * elem;
  return mlcc_ok_status();
wrong_type:
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                          "Constant attribute '%s' has type %s, expected %s", an,
                          attr_type_name(t), attr_type_name(expect_type));
}

mlcc_status_t mlcc_onnx_add_constant_node(import_ctx_t* ctx, const MlccOnnx__NodeProto* n) {
  mlcc_onnx_tensor_t dec;
  MLCC_RETURN_IF_ERROR(mlcc_onnx_decode_constant_node(ctx, n, &dec));
  const char* out_name = n->output[0];
  if (mlcc_graph_find_value(ctx->graph, out_name) != NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "output '%s' is already defined",
                            out_name);
  }
  mlcc_value_t* cv = NULL;  // out param of mlcc_graph_add_constant (unused)
  return mlcc_graph_add_constant(ctx->graph, out_name, dec.dtype, &dec.shape, dec.data, false,
                                 &cv);
}


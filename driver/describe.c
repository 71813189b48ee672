// SPDX-License-Identifier: Apache-2.0
#include "driver/describe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/header.h"
#include "driver/strbuf.h"
#include "targets/codegen/stack.h"

// |s| as a JSON string literal (control bytes as \u00XX; other bytes as is).
static void append_json_string(mlcc_strbuf_t* sb, const char* s) {
  mlcc_strbuf_append_char(sb, '"');
  for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; ++p) {
    if (*p == '"' || *p == '\\') {
      mlcc_strbuf_append_char(sb, '\\');
      mlcc_strbuf_append_char(sb, (char)*p);
    } else if (*p < 0x20) {
      mlcc_strbuf_appendf(sb, "\\u%04x", *p);
    } else {
      mlcc_strbuf_append_char(sb, (char)*p);
    }
  }
  mlcc_strbuf_append_char(sb, '"');
}

static void append_key(mlcc_strbuf_t* sb, const char* key, const char* value, bool last) {
  mlcc_strbuf_appendf(sb, "    \"%s\": ", key);
  append_json_string(sb, value);
  mlcc_strbuf_append(sb, last ? "\n" : ",\n");
}

// `"inputs": [{"name": "x", "dtype": "float32", "shape": [2, 4], "bounded": []}, ...]`;
// "bounded" lists the dims whose value is an upper bound (data-dependent).
// int4/uint4 add `"layout": "one_element_per_byte"` (int8_t -8..7 / uint8_t
// 0..15 per element; ONNX packs them two per byte, the API does not). An
// integer tensor that Q/DQ (de)quantizes adds `"quantization": {"scale": S,
// "zero_point": Z}` (per axis also "axis" and "count"; S, Z are the first).
static mlcc_status_t append_values(mlcc_strbuf_t* sb, const mlcc_graph_t* graph, const char* key,
                                   mlcc_value_t* const* values, uint32_t n) {
  mlcc_strbuf_appendf(sb, "    \"%s\": [", key);
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_value_t* v = values[i];
    if (!v->shape_known || v->shape.rank < 0 || v->shape.rank > MLCC_MAX_RANK) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s '%s' has no inferred shape", key,
                              v->name);
    }
    mlcc_strbuf_append(sb, i ? ", {\"name\": " : "{\"name\": ");
    append_json_string(sb, v->name);
    mlcc_strbuf_appendf(sb, ", \"dtype\": \"%s\", \"shape\": [", mlcc_dtype_name(v->dtype));
    for (int32_t d = 0; d < v->shape.rank; ++d) {
      mlcc_strbuf_appendf(sb, d ? ", %lld" : "%lld", (long long)v->shape.dims[d]);
    }
    mlcc_strbuf_append(sb, "], \"bounded\": [");
    bool first = true;
    for (int32_t d = 0; d < v->shape.rank; ++d) {
      if (((v->bound_dims >> d) & 1u) == 0) continue;
      mlcc_strbuf_appendf(sb, first ? "%d" : ", %d", (int)d);
      first = false;
    }
    mlcc_strbuf_append(sb, "]");
    if (mlcc_dtype_is_subbyte(v->dtype)) {
      // int4/uint4: one element per byte in the API (ONNX packs two).
      mlcc_strbuf_append(sb, ", \"layout\": \"one_element_per_byte\"");
    }
    mlcc_header_quant_t q;
    if (mlcc_header_io_quant(graph, v, strcmp(key, "inputs") == 0, &q)) {
      mlcc_strbuf_appendf(sb, ", \"quantization\": {\"scale\": %.9g, \"zero_point\": %lld",
                          q.scale, (long long)q.zero_point);
      if (q.axis >= 0) {
        mlcc_strbuf_appendf(sb, ", \"axis\": %lld, \"count\": %lld", (long long)q.axis,
                            (long long)q.n_scales);
      }
      mlcc_strbuf_append(sb, "}");
    }
    mlcc_strbuf_append(sb, "}");
  }
  mlcc_strbuf_append(sb, "],\n");
  return mlcc_ok_status();
}

mlcc_status_t mlcc_describe_render(const mlcc_graph_t* graph, const mlcc_describe_info_t* info,
                                   char** out_text) {
  *out_text = NULL;
  const mlcc_target_t* t = info->target;
  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  mlcc_strbuf_appendf(&sb, "{\n  \"format\": %d,\n  \"model\": {\"name\": ", MLCC_DESCRIBE_FORMAT);
  append_json_string(&sb, info->name);
  mlcc_strbuf_append(&sb, ", \"file\": ");
  append_json_string(&sb, info->model_file);
  mlcc_strbuf_append(&sb, ", \"sha256\": ");
  append_json_string(&sb, info->model_sha256);
  mlcc_strbuf_appendf(&sb, ", \"size\": %llu},\n  \"target\": {\n",
                      (unsigned long long)info->model_size);
  append_key(&sb, "alias", t->alias, false);
  append_key(&sb, "triple", t->triple, false);
  append_key(&sb, "cpu", t->cpu, false);
  append_key(&sb, "features", t->features, false);
  mlcc_strbuf_appendf(&sb, "    \"opt_level\": %d,\n    \"options\": [", info->opt_level);
  for (uint32_t i = 0; i < info->n_options; ++i) {
    if (i) mlcc_strbuf_append(&sb, ", ");
    append_json_string(&sb, info->options[i]);
  }
  int64_t ws_align = graph->workspace_align > 0 ? graph->workspace_align : 64;
  int64_t ws_size = graph->workspace_size > 0 ? graph->workspace_size : 0;
  mlcc_strbuf_appendf(&sb,
                      "],\n"
                      "    \"entry_abi\": %d,\n"
                      "    \"workspace_size\": %lld,\n"
                      "    \"workspace_align\": %lld,\n"
                      "    \"stack_size\": %lld,\n"
                      "    \"weights_size\": %llu,\n"
                      "    \"code_size\": %llu,\n"
                      "    \"ram_size\": %llu,\n"
                      "    \"flash_size\": %llu,\n",
                      MLCC_ENTRY_ABI_VERSION, (long long)ws_size, (long long)ws_align,
                      (long long)mlcc_stack_size(graph), (unsigned long long)info->weights_size,
                      (unsigned long long)info->code_size, (unsigned long long)info->ram_size,
                      (unsigned long long)info->flash_size);
  mlcc_status_t s = append_values(&sb, graph, "inputs", graph->inputs, graph->n_inputs);
  if (s == NULL) s = append_values(&sb, graph, "outputs", graph->outputs, graph->n_outputs);
  if (s != NULL) {
    mlcc_strbuf_deinit(&sb);
    return s;
  }
  char path[512];
  snprintf(path, sizeof(path), "%s/lib/lib%s.a", t->triple, info->name);
  append_key(&sb, "library", path, false);
  append_key(&sb, "library_sha256", info->library_sha256, false);
  snprintf(path, sizeof(path), "%s/include/%s.h", t->triple, info->name);
  append_key(&sb, "header", path, false);
  bool tuned = info->tuning_records_sha256 != NULL && info->tuning_records_sha256[0] != '\0';
  append_key(&sb, "header_sha256", info->header_sha256, !tuned);
  if (tuned) append_key(&sb, "tuning_records_sha256", info->tuning_records_sha256, true);
  mlcc_strbuf_append(&sb, "  }\n}\n");
  s = mlcc_strbuf_status(&sb);
  if (s != NULL) {
    mlcc_strbuf_deinit(&sb);
    return s;
  }
  *out_text = mlcc_strbuf_take(&sb);
  return mlcc_ok_status();
}

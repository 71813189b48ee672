// SPDX-License-Identifier: Apache-2.0
// The pass manager: pass names, default pipelines, --passes= parsing and
// running a pipeline with verification and IR dumps.
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "ir/verify.h"

typedef struct pass_info_t {
  const char* name;
  mlcc_pass_fn_t fn;
  uint32_t flags;
} pass_info_t;

static const pass_info_t pass_table[MLCC_PASS_COUNT] = {
#define MLCC_PASS(id, cli, fn, fl, desc) [MLCC_PASS_##id] = {cli, fn, fl},
#include "passes/passes.def"
#undef MLCC_PASS
};

bool mlcc_pass_lookup(const char* cli_name, mlcc_pass_id_t* out_id) {
  *out_id = MLCC_PASS_COUNT;
  if (cli_name == NULL) return false;
  for (int i = 0; i < MLCC_PASS_COUNT; ++i) {
    if (strcmp(pass_table[i].name, cli_name) == 0) {
      *out_id = (mlcc_pass_id_t)i;
      return true;
    }
  }
  return false;
}

const char* mlcc_pass_name(mlcc_pass_id_t id) {
  if ((unsigned)id >= (unsigned)MLCC_PASS_COUNT) return "<invalid pass>";
  return pass_table[id].name;
}

// -O0 only does what the codegen needs; -O1 and up clean the graph first.
// fold-constants runs again after fold-batchnorm (nothing to do today, but
// cheap) and dce then drops what folding orphaned.
static const mlcc_pass_id_t pipeline_o0[] = {
    MLCC_PASS_INFER_SHAPES, MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
// -O1 and up: quant-fuse first, before infer-shapes folds the weights'
// DequantizeLinear into float constants.
static const mlcc_pass_id_t pipeline_o1[] = {
    MLCC_PASS_QUANT_FUSE,
    MLCC_PASS_INFER_SHAPES,   MLCC_PASS_REMOVE_IDENTITY, MLCC_PASS_FOLD_CONSTANTS,
    MLCC_PASS_FOLD_BATCHNORM, MLCC_PASS_FOLD_CONSTANTS,  MLCC_PASS_CANONICALIZE,
    MLCC_PASS_EXPAND_ATTENTION, MLCC_PASS_DCE,          MLCC_PASS_QUANT_PACK,
    MLCC_PASS_FUSE,           MLCC_PASS_PLAN_MEMORY};
// -O2 and up also pre-pack weights for the target's micro-kernels.
static const mlcc_pass_id_t pipeline_o2[] = {
    MLCC_PASS_QUANT_FUSE,
    MLCC_PASS_INFER_SHAPES,   MLCC_PASS_REMOVE_IDENTITY, MLCC_PASS_FOLD_CONSTANTS,
    MLCC_PASS_FOLD_BATCHNORM, MLCC_PASS_FOLD_CONSTANTS,  MLCC_PASS_CANONICALIZE,
    MLCC_PASS_EXPAND_ATTENTION, MLCC_PASS_DCE,          MLCC_PASS_QUANT_PACK,
    MLCC_PASS_PACK_WEIGHTS,   MLCC_PASS_FUSE,            MLCC_PASS_PLAN_MEMORY};
_Static_assert(sizeof(pipeline_o1) / sizeof(pipeline_o1[0]) <= MLCC_PASS_COUNT * 2,
               "default pipeline exceeds the documented capacity");
_Static_assert(sizeof(pipeline_o2) / sizeof(pipeline_o2[0]) <= MLCC_PASS_COUNT * 2,
               "default pipeline exceeds the documented capacity");

uint32_t mlcc_pass_default_pipeline(int opt_level, mlcc_pass_id_t* out_ids) {
  const mlcc_pass_id_t* src = opt_level <= 0 ? pipeline_o0
                              : opt_level == 1 ? pipeline_o1
                                               : pipeline_o2;
  uint32_t n = opt_level <= 0   ? (uint32_t)(sizeof(pipeline_o0) / sizeof(pipeline_o0[0]))
               : opt_level == 1 ? (uint32_t)(sizeof(pipeline_o1) / sizeof(pipeline_o1[0]))
                                : (uint32_t)(sizeof(pipeline_o2) / sizeof(pipeline_o2[0]));
  memcpy(out_ids, src, n * sizeof(*src));
  return n;
}

// "infer-shapes, remove-identity, ..." for error messages.
static void list_passes(char* buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < MLCC_PASS_COUNT && used < size; ++i) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", pass_table[i].name);
    if (n < 0) break;
    used += (size_t)n;
  }
}

mlcc_status_t mlcc_pass_parse_pipeline(const char* text, mlcc_pass_id_t* out_ids,
                                       uint32_t cap, uint32_t* out_count) {
  *out_count = 0;
  if (text == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "--passes needs a value");
  }
  uint32_t count = 0;
  const char* p = text;
  for (;;) {
    const char* end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    // Tolerate spaces around names ("a, b").
    while (len > 0 && (*p == ' ' || *p == '\t')) {
      ++p;
      --len;
    }
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) --len;
    char valid[512];
    if (len == 0) {
      // "" alone is an empty pipeline; an empty item inside a list is a typo.
      if (end == NULL && count == 0 && p[0] == '\0' && strchr(text, ',') == NULL) break;
      list_passes(valid, sizeof(valid));
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "empty pass name in --passes='%s' (valid passes: %s)", text,
                              valid);
    }
    char name[64];
    mlcc_pass_id_t id = MLCC_PASS_COUNT;
    bool found = len < sizeof(name);
    if (found) {
      memcpy(name, p, len);
      name[len] = '\0';
      found = mlcc_pass_lookup(name, &id);
    }
    if (!found) {
      list_passes(valid, sizeof(valid));
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "unknown pass '%.*s' in --passes (valid passes: %s)",
                              (int)(len > 200 ? 200 : len), p, valid);
    }
    if (count >= cap) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "--passes lists more than %u passes", cap);
    }
    out_ids[count++] = id;
    if (end == NULL) break;
    p = end + 1;
  }
  *out_count = count;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_pass_run_pipeline(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                     const mlcc_pass_id_t* ids, uint32_t count) {
  bool shapes_known = false;
  for (uint32_t i = 0; i < count; ++i) {
    if ((unsigned)ids[i] >= (unsigned)MLCC_PASS_COUNT) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "invalid pass id %d at %u",
                              (int)ids[i], i);
    }
    const pass_info_t* info = &pass_table[ids[i]];
    if ((info->flags & MLCC_PASSF_NEEDS_TARGET) && ctx->target == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "pass '%s' needs a target",
                              info->name);
    }
    bool changed = false;
    mlcc_status_t s = info->fn(ctx, graph, &changed);
    if (s != NULL) return mlcc_status_annotate(s, "pass '%s'", info->name);
    if (ids[i] == MLCC_PASS_INFER_SHAPES) shapes_known = true;
    if (ctx->verify_each) {
      s = mlcc_graph_verify(graph, shapes_known);
      if (s != NULL && mlcc_status_code(s) == MLCC_STATUS_RESOURCE_EXHAUSTED) {
        // Out of memory while verifying is not an mlcc bug.
        return mlcc_status_annotate(s, "verifying after pass '%s'", info->name);
      }
      if (s != NULL) {
        char* msg = mlcc_status_to_string(s);
        mlcc_status_free(s);
        mlcc_status_t internal = mlcc_make_status(
            MLCC_STATUS_INTERNAL, "the IR does not verify after pass '%s': %s", info->name,
            msg ? msg : "(out of memory rendering the verifier's message)");
        free(msg);
        return internal;
      }
    }
    if (ctx->print_after_all != NULL) {
      fprintf(ctx->print_after_all, "// -----// IR after %s //----- //\n", info->name);
      mlcc_graph_print(graph, ctx->print_after_all);
      fflush(ctx->print_after_all);
    }
  }
  return mlcc_ok_status();
}

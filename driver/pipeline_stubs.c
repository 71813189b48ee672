// SPDX-License-Identifier: Apache-2.0
// TEMPORARY scaffold (like ir/ops_stubs.c): weak definitions of the import,
// verify, print, pass, target and codegen entry points the driver calls, so
// mlcc links and its own behaviour is testable while those modules land.
// Each real (strong) definition overrides its stub at link time (mlcc_core
// is linked whole-archive). Stubs that cannot work return UNIMPLEMENTED;
// the target ones implement the documented behaviour from targets.def.
// Delete this file once every module has landed.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm/Config/llvm-config.h>

#include "ir/graph.h"
#include "ir/onnx/onnx_import.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "passes/pass.h"
#include "targets/codegen/codegen.h"
#include "targets/target.h"

#define WEAK __attribute__((weak))

static mlcc_status_t not_yet(const char* what) {
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "%s is not built yet", what);
}

WEAK mlcc_status_t mlcc_onnx_import_file(const char* path,
                                         const mlcc_onnx_import_options_t* options,
                                         mlcc_graph_t** out_graph) {
  *out_graph = NULL;
  return not_yet("the ONNX importer");
}

WEAK mlcc_status_t mlcc_graph_verify(const mlcc_graph_t* graph, bool require_shapes) {
  return mlcc_ok_status();
}

WEAK void mlcc_graph_print(const mlcc_graph_t* graph, FILE* out) {
  fprintf(out, "# graph printer not built yet\n");
}

WEAK void mlcc_graph_print_dot(const mlcc_graph_t* graph, FILE* out) {
  fprintf(out, "digraph mlcc {\n}\n");
}

static const char* const kPassNames[MLCC_PASS_COUNT] = {
#define MLCC_PASS(id, cli, fn, flags, desc) [MLCC_PASS_##id] = cli,
#include "passes/passes.def"
#undef MLCC_PASS
};

WEAK bool mlcc_pass_lookup(const char* cli_name, mlcc_pass_id_t* out_id) {
  for (int i = 0; i < MLCC_PASS_COUNT; ++i) {
    if (strcmp(cli_name, kPassNames[i]) == 0) {
      *out_id = (mlcc_pass_id_t)i;
      return true;
    }
  }
  return false;
}

WEAK const char* mlcc_pass_name(mlcc_pass_id_t id) {
  return (unsigned)id < MLCC_PASS_COUNT ? kPassNames[id] : "?";
}

WEAK uint32_t mlcc_pass_default_pipeline(int opt_level, mlcc_pass_id_t* out_ids) {
  uint32_t n = 0;
  for (int i = 0; i < MLCC_PASS_COUNT; ++i) out_ids[n++] = (mlcc_pass_id_t)i;
  return n;
}

WEAK mlcc_status_t mlcc_pass_parse_pipeline(const char* text, mlcc_pass_id_t* out_ids,
                                            uint32_t cap, uint32_t* out_count) {
  *out_count = 0;
  const char* p = text;
  while (*p) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char name[64];
    snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), p);
    mlcc_pass_id_t id;
    if (!mlcc_pass_lookup(name, &id)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "unknown pass '%s' in --passes",
                              name);
    }
    if (*out_count >= cap) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "too many passes in --passes");
    }
    out_ids[(*out_count)++] = id;
    if (comma == NULL) break;
    p = comma + 1;
  }
  return mlcc_ok_status();
}

WEAK mlcc_status_t mlcc_pass_run_pipeline(mlcc_pass_ctx_t* ctx, mlcc_graph_t* graph,
                                          const mlcc_pass_id_t* ids, uint32_t count) {
  return not_yet("the pass manager");
}

typedef struct target_row_t {
  mlcc_arch_t arch;
  const char *alias, *triple, *cpu, *features;
  int vec;
} target_row_t;

static const target_row_t kTargets[] = {
#define MLCC_TARGET(id, alias, triple, cpu, features, vec) \
  {MLCC_ARCH_##id, alias, triple, cpu, features, vec},
#include "targets/targets.def"
#undef MLCC_TARGET
};

WEAK mlcc_status_t mlcc_target_resolve(const char* name, const char* cpu,
                                       const char* features, mlcc_target_t* out_target) {
  memset(out_target, 0, sizeof(*out_target));
  const target_row_t* row = NULL;
  const size_t n = sizeof(kTargets) / sizeof(kTargets[0]);
  if (name == NULL || name[0] == '\0') {
#if defined(__aarch64__)
    name = "aarch64";
#elif defined(__riscv)
    name = "riscv";
#else
    name = "x86";
#endif
  }
  for (size_t i = 0; i < n && row == NULL; ++i) {
    size_t arch_len = strcspn(kTargets[i].triple, "-");
    if (strcmp(name, kTargets[i].alias) == 0 || strcmp(name, kTargets[i].triple) == 0 ||
        (strncmp(name, kTargets[i].triple, arch_len) == 0 && name[arch_len] == '-')) {
      row = &kTargets[i];
    }
  }
  if (row == NULL) {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND,
                            "unknown target '%s'; expected x86, aarch64, riscv or a triple of "
                            "those architectures", name);
  }
  out_target->arch = row->arch;
  snprintf(out_target->alias, sizeof(out_target->alias), "%s", row->alias);
  snprintf(out_target->triple, sizeof(out_target->triple), "%s",
           strcmp(name, row->alias) == 0 ? row->triple : name);
  snprintf(out_target->cpu, sizeof(out_target->cpu), "%s", cpu ? cpu : row->cpu);
  snprintf(out_target->features, sizeof(out_target->features), "%s",
           features ? features : row->features);
  out_target->vector_bytes = row->vec;
  return mlcc_ok_status();
}

WEAK void mlcc_target_print_all(void* out) {
  for (size_t i = 0; i < sizeof(kTargets) / sizeof(kTargets[0]); ++i) {
    fprintf((FILE*)out, "%-8s %-20s %-14s %s\n", kTargets[i].alias, kTargets[i].triple,
            kTargets[i].cpu, kTargets[i].features);
  }
}

WEAK void mlcc_buffer_deinit(mlcc_buffer_t* buffer) {
  free(buffer->data);
  buffer->data = NULL;
  buffer->size = 0;
}

WEAK mlcc_status_t mlcc_codegen_kernel_key(const mlcc_graph_t* graph, uint32_t kernel_index,
                                           const mlcc_codegen_options_t* options,
                                           char out_key_hex[65]) {
  out_key_hex[0] = '\0';
  return not_yet("the kernel code generator");
}

WEAK void mlcc_codegen_kernel_symbol(const char key_hex[65], char out_symbol[40]) {
  snprintf(out_symbol, 40, "mlcc_k_%.24s", key_hex);
}

WEAK mlcc_status_t mlcc_codegen_kernel(const mlcc_graph_t* graph, uint32_t kernel_index,
                                       const mlcc_codegen_options_t* options,
                                       mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  return not_yet("the kernel code generator");
}

WEAK mlcc_status_t mlcc_codegen_entry(const mlcc_graph_t* graph,
                                      const mlcc_codegen_options_t* options,
                                      mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  return not_yet("the entry code generator");
}

WEAK mlcc_status_t mlcc_codegen_weights(mlcc_graph_t* graph,
                                        const mlcc_codegen_options_t* options,
                                        mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  return not_yet("the weights code generator");
}

WEAK mlcc_status_t mlcc_codegen_whole(mlcc_graph_t* graph, const mlcc_codegen_options_t* options,
                                      mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  return not_yet("the code generator");
}

WEAK const char* mlcc_codegen_llvm_version(void) { return LLVM_VERSION_STRING; }

// SPDX-License-Identifier: Apache-2.0
// The weights blob: every constant a kernel reads (or a graph output that is
// a constant), 64-byte aligned, in first-use order, as one read-only global.
// Objects are written by targets/llvm/elf_writer.c (no LLVM: a 46 MB constant through
// LLVM's IR and MC layers dominated warm builds); ll/asm and the whole-model
// module (-c) build the global in LLVM IR.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/checked_math.h"
#include "targets/codegen/codegen.h"
#include "targets/llvm/elf_writer.h"
#include "targets/emit/emit.h"
#include "targets/llvm/llvm_ctx.h"

#define WEIGHT_ALIGN 64

static bool list_contains(const mlcc_value_t** list, uint32_t n, const mlcc_value_t* v) {
  for (uint32_t i = 0; i < n; ++i) {
    if (list[i] == v) return true;
  }
  return false;
}

mlcc_status_t mlcc_codegen_collect_weights(const mlcc_graph_t* graph,
                                           const mlcc_value_t*** out_values,
                                           uint32_t* out_count) {
  *out_values = NULL;
  *out_count = 0;
  uint32_t cap = 0, n = 0;
  const mlcc_value_t** list = NULL;
  const mlcc_value_t** args = NULL;
  uint32_t args_cap = 0;
  mlcc_status_t s = mlcc_ok_status();
  // Kernel arguments first (in kernel order), then constant graph outputs.
  for (uint32_t k = 0; k <= graph->n_kernels && s == NULL; ++k) {
    uint32_t na;
    if (k < graph->n_kernels) {
      // Room for every input and output of the kernel's nodes, so
      // mlcc_kernel_args collects straight into |args| (with less room it
      // would allocate a private array, and its failure would read as 0).
      const mlcc_kernel_t* kern = &graph->kernels[k];
      uint32_t room = 1;
      for (uint32_t i = 0; i < kern->n_nodes; ++i) {
        room += kern->nodes[i]->n_inputs + kern->nodes[i]->n_outputs;
      }
      if (room > args_cap) {
        const mlcc_value_t** grown = realloc(args, room * sizeof(*args));
        if (grown == NULL) {
          s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        args = grown;
        args_cap = room;
      }
      na = mlcc_kernel_args(kern, args, args_cap);
    } else {
      // Graph outputs that are constants are copied from the blob.
      if (graph->n_outputs > args_cap) {
        const mlcc_value_t** grown = realloc(args, graph->n_outputs * sizeof(*args));
        if (grown == NULL) {
          s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        args = grown;
        args_cap = graph->n_outputs;
      }
      na = graph->n_outputs;
      for (uint32_t i = 0; i < na; ++i) args[i] = graph->outputs[i];
    }
    for (uint32_t i = 0; i < na; ++i) {
      const mlcc_value_t* v = args[i];
      if (v == NULL || v->kind != MLCC_VALUE_CONSTANT || list_contains(list, n, v)) continue;
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        const mlcc_value_t** grown = realloc(list, cap * sizeof(*list));
        if (grown == NULL) {
          s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        list = grown;
      }
      list[n++] = v;
    }
  }
  free(args);
  if (s != NULL) {
    free(list);
    return s;
  }
  *out_values = list;
  *out_count = n;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_weights_layout(const mlcc_graph_t* graph,
                                          const mlcc_value_t*** out_values,
                                          int64_t** out_offsets, uint32_t* out_count,
                                          size_t* out_total) {
  *out_offsets = NULL;
  *out_total = 0;
  const mlcc_value_t** list = NULL;
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(mlcc_codegen_collect_weights(graph, &list, &n));
  int64_t* offsets = calloc(n ? n : 1, sizeof(*offsets));
  if (offsets == NULL) {
    free(list);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    size_t size = mlcc_value_byte_size(list[i]);
    size_t aligned = (total + WEIGHT_ALIGN - 1) & ~(size_t)(WEIGHT_ALIGN - 1);
    if (aligned < total || !mlcc_checked_add_size(aligned, size, &total) ||
        total > 0xFFFFFFF0u) {
      mlcc_status_t s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                                         "weights exceed 4 GiB (at constant '%s')",
                                         list[i]->name);
      free(list);
      free(offsets);
      return s;
    }
    offsets[i] = (int64_t)aligned;
  }
  *out_values = list;
  *out_offsets = offsets;
  *out_count = n;
  *out_total = total;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_weights_size(const mlcc_graph_t* graph, size_t* out_size) {
  *out_size = 0;
  const mlcc_value_t** list = NULL;
  int64_t* offsets = NULL;
  uint32_t n = 0;
  MLCC_RETURN_IF_ERROR(mlcc_codegen_weights_layout(graph, &list, &offsets, &n, out_size));
  free(list);
  free(offsets);
  return mlcc_ok_status();
}

// Lays out the blob and records each constant's weight_offset (-1 for
// constants outside it): the documented bookkeeping mutation of the graph.
// On success the caller frees |*out_values|.
static mlcc_status_t assign_layout(mlcc_graph_t* graph, const mlcc_value_t*** out_values,
                                   uint32_t* out_count, size_t* out_total) {
  *out_values = NULL;
  *out_count = 0;
  *out_total = 0;
  const mlcc_value_t** list = NULL;
  int64_t* offsets = NULL;
  uint32_t n = 0;
  size_t total = 0;
  MLCC_RETURN_IF_ERROR(mlcc_codegen_weights_layout(graph, &list, &offsets, &n, &total));
  for (uint32_t i = 0; i < graph->n_values; ++i) {
    if (graph->values[i]->kind == MLCC_VALUE_CONSTANT) graph->values[i]->weight_offset = -1;
  }
  // The list holds the graph's own values.
  for (uint32_t i = 0; i < n; ++i) ((mlcc_value_t*)list[i])->weight_offset = offsets[i];
  free(offsets);
  *out_values = list;
  *out_count = n;
  *out_total = total;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_build_weights(mlcc_graph_t* graph, const char* name,
                                         LLVMContextRef llctx, LLVMModuleRef module) {
  const mlcc_value_t** list = NULL;
  uint32_t n = 0;
  size_t total = 0;
  MLCC_RETURN_IF_ERROR(assign_layout(graph, &list, &n, &total));
  uint8_t* blob = calloc(total ? total : 1, 1);
  if (blob == NULL) {
    free(list);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory (%zu bytes)",
                            total);
  }
  for (uint32_t i = 0; i < n; ++i) {
    size_t size = mlcc_value_byte_size(list[i]);
    if (size && list[i]->data) memcpy(blob + list[i]->weight_offset, list[i]->data, size);
  }
  free(list);
  LLVMValueRef init = LLVMConstStringInContext(llctx, (const char*)blob, (unsigned)total, 1);
  free(blob);
  char sym[512];
  snprintf(sym, sizeof(sym), "%s_weights", name);
  LLVMValueRef g = LLVMGetNamedGlobal(module, sym);
  if (g != NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s defined twice", sym);
  }
  g = LLVMAddGlobal(module, LLVMTypeOf(init), sym);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetAlignment(g, WEIGHT_ALIGN);
  LLVMSetLinkage(g, LLVMExternalLinkage);
  LLVMSetVisibility(g, LLVMHiddenVisibility);
  return mlcc_ok_status();
}

// The weights object without LLVM: lays out the blob (setting
// weight_offset) and describes it for the ELF writer, one chunk per
// constant with bytes, pointing at the constants' own data (no copy).
// Then writes it to |path| if non-NULL, else into |out|.
static mlcc_status_t write_weights_elf(mlcc_graph_t* graph,
                                       const mlcc_codegen_options_t* options,
                                       const char* path, mlcc_buffer_t* out) {
  mlcc_elf_data_object_t obj;
  memset(&obj, 0, sizeof(obj));
  MLCC_RETURN_IF_ERROR(mlcc_elf_machine_for_target(options->target, &obj.machine, &obj.flags));
  const mlcc_value_t** list = NULL;
  uint32_t n = 0;
  size_t total = 0;
  MLCC_RETURN_IF_ERROR(assign_layout(graph, &list, &n, &total));
  mlcc_elf_chunk_t* chunks = calloc(n ? n : 1, sizeof(*chunks));
  size_t sym_len = strlen(options->name) + sizeof("_weights");
  char* sym = malloc(sym_len);
  if (chunks == NULL || sym == NULL) {
    free(list);
    free(chunks);
    free(sym);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  snprintf(sym, sym_len, "%s_weights", options->name);
  // The layout is in list order with increasing offsets, so the chunks come
  // out sorted and disjoint.
  uint32_t n_chunks = 0;
  for (uint32_t i = 0; i < n; ++i) {
    size_t size = mlcc_value_byte_size(list[i]);
    if (size == 0 || list[i]->data == NULL) continue;  // stays zero
    chunks[n_chunks].data = list[i]->data;
    chunks[n_chunks].offset = (uint64_t)list[i]->weight_offset;
    chunks[n_chunks].size = size;
    n_chunks++;
  }
  free(list);
  obj.section_name = mlcc_codegen_weights_section_name(options);
  obj.align = WEIGHT_ALIGN;
  obj.symbol = sym;
  obj.size = total;
  obj.chunks = chunks;
  obj.n_chunks = n_chunks;
  mlcc_status_t s;
  if (path != NULL) {
    s = mlcc_elf_write_file(&obj, path);
  } else {
    s = mlcc_elf_write_buffer(&obj, &out->data, &out->size);
  }
  free(chunks);
  free(sym);
  return s;
}

const char* mlcc_codegen_weights_section_name(const mlcc_codegen_options_t* options) {
  if (options == NULL || options->weights_section == NULL ||
      options->weights_section[0] == '\0') {
    return MLCC_WEIGHTS_SECTION_DEFAULT;
  }
  return options->weights_section;
}

void mlcc_codegen_set_weights_section(LLVMModuleRef module,
                                      const mlcc_codegen_options_t* options) {
  char sym[512];
  snprintf(sym, sizeof(sym), "%s_weights", options->name);
  LLVMValueRef g = LLVMGetNamedGlobal(module, sym);
  if (g != NULL) LLVMSetSection(g, mlcc_codegen_weights_section_name(options));
}

static mlcc_status_t check_options(const mlcc_codegen_options_t* options) {
  if (options == NULL || options->target == NULL || options->name == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "weights codegen needs a target and a name");
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_weights_write_object(mlcc_graph_t* graph,
                                                const mlcc_codegen_options_t* options,
                                                const char* path) {
  MLCC_RETURN_IF_ERROR(check_options(options));
  if (path == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "no path for the weights object");
  }
  if (mlcc_target_is_bare_metal(options->target)) {
    // ELF32 objects with the ABI attributes (.ARM.attributes, RISC-V float
    // ABI flags) GNU ld checks: LLVM writes them; the blobs are small.
    mlcc_buffer_t obj = {0};
    MLCC_RETURN_IF_ERROR(mlcc_codegen_weights(graph, options, MLCC_OUTPUT_OBJECT, &obj));
    FILE* f = fopen(path, "wb");
    bool ok = f != NULL && fwrite(obj.data, 1, obj.size, f) == obj.size;
    if (f != NULL && fclose(f) != 0) ok = false;
    mlcc_buffer_deinit(&obj);
    if (!ok) {
      remove(path);
      return mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s'", path);
    }
    return mlcc_ok_status();
  }
  return write_weights_elf(graph, options, path, NULL);
}

mlcc_status_t mlcc_codegen_weights(mlcc_graph_t* graph,
                                   const mlcc_codegen_options_t* options,
                                   mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  MLCC_RETURN_IF_ERROR(check_options(options));
  // Objects come from our ELF writer; text forms (ll, asm) still go
  // through LLVM, which prints them.
  if (kind == MLCC_OUTPUT_OBJECT && !mlcc_target_is_bare_metal(options->target)) {
    return write_weights_elf(graph, options, NULL, out);
  }
  LLVMTargetMachineRef tm = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_llvm_target_machine(options->target, options->opt_level, &tm));
  LLVMContextRef llctx = LLVMContextCreate();
  char modname[512];
  snprintf(modname, sizeof(modname), "%s_weights", options->name);
  LLVMModuleRef module = LLVMModuleCreateWithNameInContext(modname, llctx);
  mlcc_llvm_set_module_target(module, tm);
  mlcc_status_t s = mlcc_codegen_build_weights(graph, options->name, llctx, module);
  if (mlcc_status_is_ok(s)) mlcc_codegen_set_weights_section(module, options);
  if (mlcc_status_is_ok(s)) s = mlcc_llvm_verify(module, modname);
  if (mlcc_status_is_ok(s)) s = mlcc_llvm_emit(module, tm, kind, out);
  LLVMDisposeModule(module);
  LLVMContextDispose(llctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}

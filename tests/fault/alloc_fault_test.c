// SPDX-License-Identifier: Apache-2.0
// Allocation-failure sweep: imports a small model (from memory), verifies
// it and runs the pass pipeline (infer-shapes without JIT folding,
// remove-identity, fold-batchnorm, dce, fuse, plan-memory), then computes
// every kernel's cache key and renders the header, while the N-th heap
// allocation fails, for N = 1..total (total = allocations of a clean run);
// then again with allocation N and every later one failing.
// MLCC_FAULT_SHOW=N prints a backtrace of allocation N (for addr2line).
//
// Where the sweep stops: before LLVM. JIT constant folding, kernel, entry
// and weights code generation are not covered, because LLVM's C++
// allocations abort on failure (operator new throws / report_fatal_error)
// and cannot be made to fail cleanly. OpenSSL's and libc's internal
// allocations (SHA-256 contexts; realpath(NULL)) are not counted either.
//
// The allocation functions are interposed at link time (tests/fault/fault.cmake
// links this test with -Wl,--wrap=malloc,calloc,realloc,free,strdup,strndup),
// so every allocation made by mlcc's own code (and by protobuf-c through
// mlcc's allocator) is counted. Each run must:
//   * return a non-OK status once the failure was injected (never crash;
//     most codes are RESOURCE_EXHAUSTED, which is tallied);
//   * leave no live allocation after the graph and the status are freed
//     (leak check by counting, so it works without LeakSanitizer too).
// The model path is argv[1]. Prints "N passed, N failed".
#include <execinfo.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/header.h"
#include "ir/base/status.h"
#include "ir/graph.h"
#include "ir/onnx/onnx_import.h"
#include "ir/onnx/onnx_import_impl.h"
#include "ir/verify.h"
#include "passes/pass.h"
#include "targets/codegen/codegen.h"
#include "targets/target.h"

//===----------------------------------------------------------------------===//
// The interposer
//===----------------------------------------------------------------------===//

void* __real_malloc(size_t size);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t size);
void __real_free(void* p);
char* __real_strdup(const char* s);
char* __real_strndup(const char* s, size_t n);

static bool g_armed;          // count (and maybe fail) allocations
static uint64_t g_count;      // allocations seen while armed
static uint64_t g_fail_at;    // 1-based; 0 = never fail
static bool g_fail_after;     // also fail every allocation after g_fail_at
static bool g_injected;       // the failure happened in this run
static uint64_t g_show_at;    // MLCC_FAULT_SHOW=N: print a backtrace at allocation N

// Live set of pointers allocated while armed: open addressing, tombstones.
enum { kSlots = 1 << 20 };
#define TOMB ((void*)1)
static void** g_live;
static uint64_t g_n_live;
static bool g_table_full;

static size_t slot_of(void* p) { return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull) & (kSlots - 1); }

static void live_add(void* p) {
  size_t i = slot_of(p);
  for (size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) & (kSlots - 1)) {
    if (g_live[i] == NULL || g_live[i] == TOMB) {
      g_live[i] = p;
      g_n_live++;
      return;
    }
  }
  g_table_full = true;
}

static bool live_remove(void* p) {
  size_t i = slot_of(p);
  for (size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) & (kSlots - 1)) {
    if (g_live[i] == NULL) return false;
    if (g_live[i] == p) {
      g_live[i] = TOMB;
      g_n_live--;
      return true;
    }
  }
  return false;
}

// True if this allocation must fail.
static bool should_fail(void) {
  if (!g_armed) return false;
  g_count++;
  if (g_show_at != 0 && g_count == g_show_at && g_fail_at == g_show_at) {
    void* frames[32];
    int n = backtrace(frames, 32);
    fprintf(stderr, "allocation %llu:\n", (unsigned long long)g_count);
    backtrace_symbols_fd(frames, n, 2);  // addr2line -e <test> turns these into lines
  }
  if (g_fail_at != 0 && (g_count == g_fail_at || (g_fail_after && g_count > g_fail_at))) {
    g_injected = true;
    return true;
  }
  return false;
}

static void* track(void* p) {
  if (p != NULL && g_armed) live_add(p);
  return p;
}

void* __wrap_malloc(size_t size) {
  if (should_fail()) return NULL;
  return track(__real_malloc(size));
}

void* __wrap_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  return track(__real_calloc(n, size));
}

void* __wrap_realloc(void* p, size_t size) {
  if (should_fail()) return NULL;  // |p| stays valid and owned by the caller
  bool was_live = p != NULL && live_remove(p);
  void* q = __real_realloc(p, size);
  if (q == NULL) {
    if (was_live) live_add(p);
    return NULL;
  }
  if (was_live || g_armed) live_add(q);
  return q;
}

void __wrap_free(void* p) {
  if (p != NULL) live_remove(p);
  __real_free(p);
}

char* __wrap_strdup(const char* s) {
  if (should_fail()) return NULL;
  return (char*)track(__real_strdup(s));
}

char* __wrap_strndup(const char* s, size_t n) {
  if (should_fail()) return NULL;
  return (char*)track(__real_strndup(s, n));
}

//===----------------------------------------------------------------------===//
// One run
//===----------------------------------------------------------------------===//

static mlcc_target_t g_target;

static mlcc_status_t compile(const uint8_t* bytes, size_t size, mlcc_graph_t** graph) {
  mlcc_onnx_import_options_t opts;
  memset(&opts, 0, sizeof(opts));
  MLCC_RETURN_IF_ERROR(mlcc_onnx_import_bytes("small.onnx", bytes, size, &opts, graph));
  MLCC_RETURN_IF_ERROR(mlcc_graph_verify(*graph, false));
  static const mlcc_pass_id_t kPipeline[] = {
      MLCC_PASS_INFER_SHAPES, MLCC_PASS_REMOVE_IDENTITY, MLCC_PASS_FOLD_BATCHNORM,
      MLCC_PASS_DCE,          MLCC_PASS_FUSE,            MLCC_PASS_PLAN_MEMORY};
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opt_level = 2;
  ctx.target = &g_target;
  ctx.verify_each = true;
  MLCC_RETURN_IF_ERROR(
      mlcc_pass_run_pipeline(&ctx, *graph, kPipeline, sizeof(kPipeline) / sizeof(kPipeline[0])));
  MLCC_RETURN_IF_ERROR(mlcc_graph_verify(*graph, true));
  mlcc_codegen_options_t cg;
  memset(&cg, 0, sizeof(cg));
  cg.target = &g_target;
  cg.opt_level = 2;
  cg.name = "small";
  for (uint32_t k = 0; k < (*graph)->n_kernels; ++k) {
    char key[65];
    MLCC_RETURN_IF_ERROR(mlcc_codegen_kernel_key(*graph, k, &cg, key));
  }
  char* header = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_header_render(
      *graph, "small", "small.onnx",
      "0000000000000000000000000000000000000000000000000000000000000000", &header));
  free(header);
  return mlcc_ok_status();
}

typedef struct run_result_t {
  mlcc_status_code_t code;
  uint32_t n_kernels;
  uint64_t allocs;
  uint64_t leaked;
  bool injected;
  char message[200];
} run_result_t;

static run_result_t run_once(const uint8_t* bytes, size_t size, uint64_t fail_at) {
  run_result_t r;
  memset(&r, 0, sizeof(r));
  g_count = 0;
  g_fail_at = fail_at;
  g_injected = false;
  g_armed = true;
  mlcc_graph_t* graph = NULL;
  mlcc_status_t s = compile(bytes, size, &graph);
  char* text = mlcc_status_to_string(s);  // may itself fail: NULL is fine
  g_armed = false;
  r.code = mlcc_status_code(s);
  if (text != NULL) snprintf(r.message, sizeof(r.message), "%s", text);
  free(text);
  if (graph != NULL) r.n_kernels = graph->n_kernels;
  mlcc_status_free(s);
  mlcc_graph_destroy(graph);
  r.allocs = g_count;
  r.injected = g_injected;
  r.leaked = g_n_live;
  // Forget leaks of this run so they are not counted again.
  if (g_n_live != 0) {
    memset(g_live, 0, sizeof(void*) * kSlots);
    g_n_live = 0;
  }
  return r;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.onnx\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IONBF, 0);
  const char* show = getenv("MLCC_FAULT_SHOW");
  if (show != NULL) g_show_at = strtoull(show, NULL, 10);
  g_live = (void**)__real_calloc(kSlots, sizeof(void*));
  if (g_live == NULL) return 2;
  mlcc_status_t s = mlcc_target_resolve("x86", NULL, NULL, &g_target);
  uint8_t* bytes = NULL;
  size_t size = 0;
  if (s == NULL) s = mlcc_onnx_read_file(argv[1], 1u << 20, &bytes, &size);
  if (s != NULL) {
    char* text = mlcc_status_to_string(s);
    fprintf(stderr, "setup failed: %s\n", text ? text : "?");
    return 2;
  }

  int passed = 0, failed = 0;
  run_result_t clean = run_once(bytes, size, 0);
  if (clean.code != MLCC_STATUS_OK || clean.leaked != 0 || clean.n_kernels == 0) {
    fprintf(stderr, "FAIL clean run: status %s (%s), %llu leaked, %u kernels\n",
            mlcc_status_code_name(clean.code), clean.message,
            (unsigned long long)clean.leaked, clean.n_kernels);
    return 1;
  }
  printf("clean run: %llu allocations, %u kernels\n", (unsigned long long)clean.allocs,
         clean.n_kernels);
  uint64_t by_code[MLCC_STATUS_CODE_COUNT] = {0};
  // Pass 0: only allocation N fails. Pass 1: N and every later one fail
  // (the error paths themselves run out of memory).
  for (int pass = 0; pass < 2; ++pass)
  for (uint64_t n = 1; n <= clean.allocs; ++n) {
    g_fail_after = pass == 1;
    run_result_t r = run_once(bytes, size, n);
    bool ok = true;
    if (!r.injected) {
      fprintf(stderr, "FAIL fail_at=%llu: allocation %llu never happened (%llu made)\n",
              (unsigned long long)n, (unsigned long long)n, (unsigned long long)r.allocs);
      ok = false;
    } else if (r.code == MLCC_STATUS_OK) {
      fprintf(stderr, "FAIL fail_at=%llu%s: a failed allocation was ignored (status OK)\n",
              (unsigned long long)n, pass ? "+" : "");
      ok = false;
    }
    if (r.leaked != 0) {
      fprintf(stderr, "FAIL fail_at=%llu%s: %llu allocations leaked (status %s: %s)\n",
              (unsigned long long)n, pass ? "+" : "", (unsigned long long)r.leaked,
              mlcc_status_code_name(r.code), r.message);
      ok = false;
    }
    if (r.code == MLCC_STATUS_INTERNAL) {  // running out of memory is not an mlcc bug
      fprintf(stderr, "FAIL fail_at=%llu%s: INTERNAL: %s\n", (unsigned long long)n,
              pass ? "+" : "", r.message);
      ok = false;
    }
    by_code[r.code]++;
    if (ok) passed++; else failed++;
  }
  if (g_table_full) {
    fprintf(stderr, "FAIL: the live-allocation table overflowed\n");
    failed++;
  }
  printf("statuses:");
  for (int c = 0; c < MLCC_STATUS_CODE_COUNT; ++c) {
    if (by_code[c]) printf(" %s=%llu", mlcc_status_code_name((mlcc_status_code_t)c),
                           (unsigned long long)by_code[c]);
  }
  printf("\n%d passed, %d failed\n", passed, failed);
  free(bytes);
  __real_free(g_live);
  return failed ? 1 : 0;
}

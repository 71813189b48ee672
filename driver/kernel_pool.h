// SPDX-License-Identifier: Apache-2.0
// The kernel pool: builds a model's distinct kernels on -j threads, each one
// taken from the local kernel cache, then the remote one, else compiled (and
// then stored in both). Split out of the compilation (compilation.c), which
// gives the pool its settings and adds the files it writes to the output.
#ifndef MLCC_DRIVER_KERNEL_POOL_H_
#define MLCC_DRIVER_KERNEL_POOL_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "driver/cache.h"
#include "driver/remote_cache.h"
#include "driver/remote_sign.h"
#include "ir/base/arena.h"
#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/codegen/codegen.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// What one run of the pool builds and with which stores. Everything is
// borrowed for the call.
typedef struct mlcc_kernel_pool_options_t {
  const mlcc_graph_t* graph;      // lowered to kernels (graph->kernels)
  const mlcc_target_t* target;    // cached objects are checked against it
  mlcc_codegen_options_t codegen;
  mlcc_output_kind_t kind;        // objects, or the kernel texts of -S / --emit=ll|asm
  const char* dir;                // the kernel files go here (the run's temporary folder)
  uint32_t jobs;                  // threads, the calling one included (at most 64 are used)
  FILE* diag;                     // -v, -d explain-cache, warnings, the "[n/N]" status line
  bool verbose;
  bool explain_cache;
  // The local store, opened on first use (only when there is a kernel to
  // build): returns it, or NULL when it is off or unusable. It stays open
  // after the run (the entry object uses it too).
  mlcc_cache_t* (*local_cache)(void* ctx);
  void* local_cache_ctx;
  const char* remote_url;         // NULL: no remote store
  mlcc_remote_options_t remote;   // its settings
  mlcc_remote_key_t* remote_key;  // NULL: unsigned remote entries (remote_sign.h)
} mlcc_kernel_pool_options_t;

// What the pool built. |paths| (arena-owned) has one file per distinct
// kernel key, in the order of first appearance in graph->kernels.
typedef struct mlcc_kernel_pool_result_t {
  const char** paths;
  uint32_t n_distinct;     // distinct kernel keys (= entries of |paths|)
  uint32_t n_compiled;     // compiled by this run
  uint32_t n_cache_hits;   // from the local store
  uint32_t n_remote_hits;  // from the remote store
} mlcc_kernel_pool_result_t;

// Builds every distinct kernel of |o->graph| into a file under |o->dir|
// named after its symbol (.o, .ll or .s by |o->kind|). Kernels that share
// a key are built once. A cached object is used only after
// mlcc_object_check (a text after mlcc_codegen_check_kernel_text) accepts
// it; a cache never breaks a build (its failures are warnings on
// |o->diag|). On success, reports the kernels (-v, -d explain-cache,
// warnings, in kernel order) and records explain records for shared
// kernels. |*out| is zeroed first; its counts are set once the kernels ran,
// even when one failed. Errors: the failure of the lowest failing kernel
// index (deterministic under -j), IO writing a file, RESOURCE_EXHAUSTED on
// OOM, INTERNAL if the workers stopped early.
mlcc_status_t mlcc_kernel_pool_run(const mlcc_kernel_pool_options_t* o, mlcc_arena_t* arena,
                                   mlcc_kernel_pool_result_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_KERNEL_POOL_H_

// SPDX-License-Identifier: Apache-2.0
// `mlcc --tune` (docs/tuning.md): measures schedules of a model's tunable
// kernels on the target and returns the fastest as tuning records
// (driver/tune.h).
//
// How it measures. Every candidate is a whole library of the model, built by
// a child mlcc (this executable, /proc/self/exe) with --profile and a
// --tuning-records file that gives each tunable kernel one schedule, linked
// with a small harness (written here, compiled by the target's C compiler:
// $MLCC_TUNE_CC, else $CC or cc for the host triple, else <triple>-gcc) and
// run, through --tune-runner when given, on deterministic pseudo-random
// inputs. The harness runs the model a few times as warm-up, then repeatedly,
// and prints each kernel's median time per run (from NAME_profile) and
// writes the outputs. One candidate library varies every kernel at once, so
// a model of K tunable kernels needs about trials libraries, not K*trials.
//
// The search: the default schedules first (the reference); then, per batch,
// up to -j candidate libraries (compiled in parallel), each kernel taking an
// untried neighbour of its current best (one parameter changed, nearest
// values first), else the next untried point of its space. Measurement is
// serial: a batch's candidates are run interleaved with the current best
// (best, candidate 1, best, candidate 2, ...), three rounds, and compared
// per kernel on the median of their ratios to the adjacent best run, so that
// drift of the machine cancels; a candidate whose kernels are all more than
// 30% slower after the first round is dropped. A candidate wins a kernel
// only if it is at least 3% faster and its outputs match the default's
// (float: |y - ref| <= 1e-4 + 1e-3 |ref|; others exactly); a candidate whose
// outputs differ loses every kernel. After a batch with a winner, the
// reference is rebuilt from the new bests.
// Budgets: |trials| schedules per kernel (the default included) and
// |seconds| for the model (no new batch starts after it).
#ifndef MLCC_DRIVER_TUNE_RUN_H_
#define MLCC_DRIVER_TUNE_RUN_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "driver/tune.h"
#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/codegen/codegen.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_tune_config_t {
  const char* input;               // the model path, as given
  const char* const* build_args;   // options the child builds repeat (--input-*, --passes=, ...)
  uint32_t n_build_args;
  const char* cache_dir;           // the kernel cache for the children; NULL: --no-cache
  const char* runner;              // --tune-runner; NULL: run directly (host triple only)
  int trials;                      // > 0
  double seconds;                  // > 0
  int jobs;                        // candidate libraries compiled at once (>= 1)
  bool verbose;                    // -v: one line per batch and per measured candidate
  FILE* diag;
  const char* work_dir;            // an existing private folder for the candidates
} mlcc_tune_config_t;

// Tunes the kernels of |graph| (after the passes; the schedules of its
// anchors are left as they were) for |cg|'s target and opt level, and adds
// one record per distinct tunable kernel to |out_records| (the winner, or
// the default when nothing beat it). Prints a summary to cfg->diag.
// INVALID_ARGUMENT for a cross target without a runner; UNIMPLEMENTED when
// the harness cannot be compiled or the default library does not run (the
// message names the command and its output); RESOURCE_EXHAUSTED; IO.
mlcc_status_t mlcc_tune_search(const mlcc_graph_t* graph, const mlcc_codegen_options_t* cg,
                               const mlcc_tune_config_t* cfg, mlcc_tune_records_t* out_records);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_TUNE_RUN_H_

// SPDX-License-Identifier: Apache-2.0
// Tuning records (docs/tuning.md): what `mlcc --tune` measured, as data that
// ordinary builds look up. A record maps a kernel, keyed without its
// schedule (mlcc_codegen_tune_key: the kernel's structure, triple, CPU,
// features, opt level and the search-space version of its emitter) to the
// fastest schedule found, its time and the default schedule's time.
//
// Record set file (JSON; --tuning-records=FILE, and one file per record in
// <cache>/tune/):
//   {"format": "mlcc-tuning-records", "version": 1,
//    "records": [
//      {"key": "<64 hex>",       // features key (mlcc_codegen_tune_key, with_cpu false)
//       "cpu_key": "<64 hex>",   // exact-CPU key (with_cpu true)
//       "triple": "x86_64-linux-gnu", "cpu": "x86-64-v3", "features": "",
//       "op": "MatMul", "space_version": 1,
//       "sched": [6, 2, 0, 0],   // MLCC_SCHED_MAX_PARAMS integers, 0 = default
//       "schedule": "rows=6,vectors=2",   // informational
//       "time_ns": 1200, "default_time_ns": 1500}, ...]}
// Records are written sorted by cpu_key, one per line, so that a record set
// has one text and one digest (mlcc_tune_records_digest).
//
// Everything read here is untrusted (a shared cache, a checked-in file): a
// malformed file is an error the caller turns into a warning, never a crash;
// a record whose schedule is outside the current space, or of another space
// version, target or CPU, is skipped by the lookup (driver/compilation.c).
// Thread-compatible.
#ifndef MLCC_DRIVER_TUNE_H_
#define MLCC_DRIVER_TUNE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/codegen/codegen.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_TUNE_RECORDS_FORMAT "mlcc-tuning-records"
#define MLCC_TUNE_RECORDS_VERSION 1

typedef struct mlcc_tune_record_t {
  char key[65];          // features key, lowercase hex
  char cpu_key[65];      // exact-CPU key, lowercase hex
  char triple[64];
  char cpu[64];
  char features[512];
  char op[32];           // ONNX op type of the anchor (informational)
  uint32_t space_version;
  int32_t sched[MLCC_SCHED_MAX_PARAMS];
  int64_t time_ns;          // median per call of the winner
  int64_t default_time_ns;  // median per call of the default schedule
} mlcc_tune_record_t;

typedef struct mlcc_tune_records_t {
  mlcc_tune_record_t* items;  // malloc'ed
  uint32_t n, cap;
} mlcc_tune_records_t;

void mlcc_tune_records_deinit(mlcc_tune_records_t* records);

// Parses a record set file's |text| (|size| bytes, not NUL-terminated) and
// adds its records to |records|. INVALID_MODEL with a one-line reason (not
// JSON, another format or version, a field of the wrong type, a key that is
// not 64 hex digits, a string too long); on error |records| is unchanged.
// RESOURCE_EXHAUSTED on allocation failure.
mlcc_status_t mlcc_tune_records_parse(const char* text, size_t size,
                                      mlcc_tune_records_t* records);

// Adds |record|, replacing one with the same cpu_key. RESOURCE_EXHAUSTED.
mlcc_status_t mlcc_tune_records_add(mlcc_tune_records_t* records,
                                    const mlcc_tune_record_t* record);

// The record with |cpu_key|, else (when |features_fallback|) one with the
// features key |key| (the first by cpu_key order), else NULL. Borrowed.
const mlcc_tune_record_t* mlcc_tune_records_find(const mlcc_tune_records_t* records,
                                                 const char* cpu_key, const char* key,
                                                 bool features_fallback);

// The record set as its canonical JSON text (malloc'ed, NUL-terminated;
// records sorted by cpu_key). NULL on allocation failure.
char* mlcc_tune_records_format(const mlcc_tune_records_t* records);

// SHA-256 hex of mlcc_tune_records_format(records); "" for an empty set.
// RESOURCE_EXHAUSTED.
mlcc_status_t mlcc_tune_records_digest(const mlcc_tune_records_t* records, char out_hex[65]);

//===----------------------------------------------------------------------===//
// Lookup (ordinary builds; never measures anything)
//===----------------------------------------------------------------------===//

typedef struct mlcc_tune_lookup_t {
  const mlcc_tune_records_t* file;  // --tuning-records; NULL or empty: none
  const char* cache_dir;            // the local kernel cache; NULL: no <dir>/tune/
  FILE* diag;                       // warnings and -d explain-cache lines
  bool explain;                     // -d explain-cache: say what each lookup found
  // The remote cache, after the local one (NULL: none): fetches the record
  // file stored under |key_hex| (a record key; the callee maps it with
  // mlcc_tune_remote_key). True with a malloc'ed |*out_text| on a hit. A hit
  // that parses is also written to the local cache.
  bool (*remote_fetch)(void* ctx, const char* key_hex, char** out_text, size_t* out_size);
  void* remote_ctx;
} mlcc_tune_lookup_t;

// Sets the schedule of every tunable kernel anchor of |graph| (after the
// passes, with graph->kernels) from the records: for each kernel, the file's
// records first, then <cache_dir>/tune/; in each, the exact-CPU key, then
// (only when the build names its features, i.e. target->features is not
// empty) the features key; else the default. A record of another triple,
// features, CPU (for the exact key) or space version, or whose schedule is
// not a point of the kernel's current space, is skipped with a warning (an
// explain line with |explain|); a damaged cache record is skipped silently
// (explain says why). The records applied are added to |out_used| (may be
// NULL) and their count to |*out_applied|. RESOURCE_EXHAUSTED only.
mlcc_status_t mlcc_tune_apply(mlcc_graph_t* graph, const mlcc_codegen_options_t* cg,
                              const mlcc_tune_lookup_t* lookup, mlcc_tune_records_t* out_used,
                              uint32_t* out_applied);

// Path of the local record file of |key_hex| in |cache_dir|:
// <cache_dir>/tune/<2 hex>/<62 hex>.json (malloc'ed; NULL on OOM).
char* mlcc_tune_cache_path(const char* cache_dir, const char* key_hex);

// Writes |record| to the local cache (its exact-CPU key, and its features
// key when the record has features), atomically. Failures are returned
// (IO) for the caller to warn about; they never fail a build.
mlcc_status_t mlcc_tune_cache_store(const char* cache_dir, const mlcc_tune_record_t* record);

// The remote cache's /ac/ key of the record file with record key |key_hex|:
// SHA-256 of "mlcc-tuning-record-v1" and the key, so records have their own
// namespace beside the kernels' keys.
void mlcc_tune_remote_key(const char* key_hex, char out_hex[65]);

// Entries under <cache_dir>/tune/ (--cache-stats) and their bytes.
void mlcc_tune_cache_count(const char* cache_dir, uint64_t* out_entries, uint64_t* out_bytes);
// Removes every entry under <cache_dir>/tune/ (--cache-clear); returns how many.
uint64_t mlcc_tune_cache_clear(const char* cache_dir);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_TUNE_H_

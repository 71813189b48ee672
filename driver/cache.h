// SPDX-License-Identifier: Apache-2.0
// The local kernel cache (DESIGN.md section 5, STYLE.md 2.8): compiled kernel
// objects stored by their cache key (mlcc_codegen_kernel_key), like ccache
// does for C.
//
// Layout of a cache directory:
//   <dir>/CACHEDIR.TAG        marks the folder as a cache for backup tools
//   <dir>/stats               counters (read-modify-write under flock)
//   <dir>/mlcc.conf           persistent settings, "key = value" lines
//                             (mlcc --set-config=KEY=VALUE; see
//                             mlcc_cache_config_load)
//   <dir>/explain/ab/cdef...  -d explain-cache: per node, the key components
//                             of the kernel last stored for it (text, see
//                             driver/cache_explain.h); not entries, not counted
//   <dir>/ab/cdef...          one entry per key: ab = the key's first two hex
//                             digits, the file name = the other 62
//   <dir>/ab/.tmp-*           an entry being written (renamed when complete)
//
// Entry format (all integers little-endian):
//   0  8  magic "MLCCKOBJ"
//   8  4  format version (MLCC_CACHE_FORMAT_VERSION)
//   12 4  header size (56)
//   16 32 the key, binary
//   48 8  payload size N
//   56 N  payload: the kernel object, exactly as the code generator wrote it
//   56+N 32  SHA-256 of the payload
// A file that is shorter or longer, has another magic, version or key, or a
// wrong checksum is a miss (a "damaged" entry), never an error: it is
// rebuilt and replaced.
//
// Concurrency: entries are written to a temporary in the same folder and
// renamed into place, so readers see a whole entry or none, and concurrent
// writers of one key write identical bytes. No locks for entries; the stats
// file is updated under flock. A hit refreshes the entry's mtime, and the
// clean-up after a build evicts the least recently used entries until the
// cache is under 90% of its limit.
//
// Every file of the cache is opened with O_NOFOLLOW | O_NONBLOCK and used
// only if it is a regular file: a FIFO, device or symlink planted in the
// cache is a miss (or, for stats and mlcc.conf, absent), never a hang.
//
// A read-only cache (mlcc.conf read_only = true, $MLCC_CACHE_READONLY=1, or
// a folder this process cannot write, e.g. a read-only bind mount) is read
// and never written: no stores, no stats, no LRU refresh, no clean-up.
//
// Thread-safety: mlcc_cache_lookup, mlcc_cache_store and the mlcc_cache_count_*
// functions may be called from several threads on one cache; everything
// else is thread-compatible.
#ifndef MLCC_DRIVER_CACHE_H_
#define MLCC_DRIVER_CACHE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_CACHE_FORMAT_VERSION 1u
#define MLCC_CACHE_DEFAULT_MAX_SIZE (5ull << 30)  // 5 GiB
// Payloads above this are refused (store) or treated as damaged (lookup).
#define MLCC_CACHE_MAX_PAYLOAD (1ull << 30)

// Where the cache lives: |option_dir| (--cache-dir) if non-NULL, else
// $MLCC_CACHE_DIR, else $XDG_CACHE_HOME/mlcc, else $HOME/.cache/mlcc (empty
// variables count as unset). On success |*out_dir| is malloc'ed (caller
// frees). NOT_FOUND when none applies (no HOME); INVALID_ARGUMENT for an
// empty --cache-dir.
mlcc_status_t mlcc_cache_resolve_dir(const char* option_dir, char** out_dir);

// Parses a size: decimal digits with an optional binary suffix K, M, G or T
// (also "KiB", "KB", "k", ...); "0" means no limit. INVALID_ARGUMENT naming
// |text| on junk, overflow, or a value above 2^60.
mlcc_status_t mlcc_cache_parse_size(const char* text, uint64_t* out_bytes);

// The size limit: |option| (--cache-max-size) if non-NULL, else
// $MLCC_CACHE_MAXSIZE, else MLCC_CACHE_DEFAULT_MAX_SIZE. INVALID_ARGUMENT
// naming the option or the variable when it does not parse.
mlcc_status_t mlcc_cache_resolve_max_size(const char* option, uint64_t* out_bytes);

// "1.5 GiB", "12.0 MiB", "812 B" into |buf|.
void mlcc_cache_format_size(uint64_t bytes, char* buf, size_t buf_size);

// The key a kernel is stored under: SHA-256 (hex) over |kernel_key| (the
// code generator's key, mlcc_codegen_kernel_key) and the compiler identity
// (ccache's compiler_check), chosen once per process by
// $MLCC_CACHE_COMPILER_CHECK:
//   unset or "codegen"  the codegen hash (driver/build_id.h): a hash, fixed at
//                       build time, of every source that can change emitted
//                       code, LLVM's version and the codegen-relevant compiler
//                       settings. Two builds of one commit (two CI hosts, two
//                       build folders, CMake and Bazel with the same compiler
//                       settings) share entries; any emitter edit misses.
//   "content"           the SHA-256 of the running executable (/proc/self/exe):
//                       only the same binary shares (the strictest check).
//   "version"           only the mlcc and LLVM versions already in |kernel_key|.
// Other values mean "content". Never fails.
void mlcc_cache_store_key(const char kernel_key[65], char out_store_key[65]);

// True if |key| is 64 lowercase hex digits.
bool mlcc_cache_key_is_valid(const char* key);

//===----------------------------------------------------------------------===//
// Configuration (mlcc.conf)
//===----------------------------------------------------------------------===//

// The keys of mlcc.conf. Each also has an environment variable, which wins
// over the file; the command line (only --cache-max-size) wins over both.
typedef enum mlcc_cache_conf_key_e {
  MLCC_CACHE_CONF_MAX_SIZE = 0,      // size (mlcc_cache_parse_size); $MLCC_CACHE_MAXSIZE
  MLCC_CACHE_CONF_READ_ONLY,         // true|false; $MLCC_CACHE_READONLY
  MLCC_CACHE_CONF_REMOTE_BUDGET,     // seconds (decimal) of remote waiting per run; 0 = none;
                                     // $MLCC_REMOTE_BUDGET
  MLCC_CACHE_CONF_REMOTE_MAX_ERRORS, // errors in a row that switch the remote off (>= 1);
                                     // $MLCC_REMOTE_MAX_ERRORS
  MLCC_CACHE_CONF_REMOTE_TIMEOUT,    // seconds (decimal, > 0) per request, connect and
                                     // transfer; $MLCC_REMOTE_TIMEOUT
  MLCC_CACHE_CONF_COUNT
} mlcc_cache_conf_key_t;

// Where a setting came from (for --show-config).
typedef enum mlcc_cache_conf_origin_e {
  MLCC_CACHE_CONF_DEFAULT = 0,
  MLCC_CACHE_CONF_FILE,         // <dir>/mlcc.conf
  MLCC_CACHE_CONF_ENVIRONMENT,
  MLCC_CACHE_CONF_COMMAND_LINE,
} mlcc_cache_conf_origin_t;

typedef struct mlcc_cache_config_t {
  uint64_t max_size;            // bytes; 0 = no limit
  bool read_only;
  uint32_t remote_timeout_ms;   // per request (connect and whole transfer)
  uint32_t remote_budget_ms;    // total remote waiting per run; 0 = unlimited
  uint32_t remote_max_errors;   // consecutive failed requests before the remote is off
  // The value of each key as text, and its origin.
  char text[MLCC_CACHE_CONF_COUNT][64];
  mlcc_cache_conf_origin_t origin[MLCC_CACHE_CONF_COUNT];
} mlcc_cache_config_t;

// The name of |key| in mlcc.conf ("max_size", ...).
const char* mlcc_cache_conf_key_name(mlcc_cache_conf_key_t key);

// Resolves every setting: |max_size_option| (--cache-max-size, may be NULL),
// then the environment, then <|dir|>/mlcc.conf (|dir| NULL: no file), then
// the defaults (5G, false, 60 s, 3, 5 s). A bad value from the command line
// or the environment is INVALID_ARGUMENT naming the option or variable; an
// unknown key or bad value in mlcc.conf is a warning on |diag| (may be
// NULL) naming the file and line, and is ignored (a shared file must not
// break builds). A missing or non-regular mlcc.conf is no file.
mlcc_status_t mlcc_cache_config_load(const char* dir, const char* max_size_option, FILE* diag,
                                     mlcc_cache_config_t* out_config);

// --set-config=KEY=VALUE: validates |assignment| and rewrites <|dir|>/mlcc.conf
// atomically (creating |dir|) with KEY set to VALUE, or removed when VALUE is
// empty; other lines are kept. Prints "Set KEY = VALUE in FILE" (or "Unset
// KEY in FILE") to |out|. INVALID_ARGUMENT for "no '='", an unknown key or a
// bad value; IO when the file cannot be written.
mlcc_status_t mlcc_cache_config_set(const char* dir, const char* assignment, FILE* out);

// --show-config: one line per key, sorted, "(ORIGIN) KEY = VALUE", ORIGIN
// being "default", "environment", "command line" or the mlcc.conf path.
void mlcc_cache_config_print(const mlcc_cache_config_t* config, const char* dir, FILE* out);

//===----------------------------------------------------------------------===//
// The store
//===----------------------------------------------------------------------===//

typedef struct mlcc_cache_t mlcc_cache_t;

// Opens (creating with mkdir -p if needed) the cache at |dir| (copied).
// |max_size| 0 = unlimited. IO naming the folder when it cannot be created
// or written. Caller owns |*out_cache| (NULL on failure); close with
// mlcc_cache_close.
mlcc_status_t mlcc_cache_open(const char* dir, uint64_t max_size, mlcc_cache_t** out_cache);

// As mlcc_cache_open with |config|'s max_size and read_only. A read-only
// cache (by |config|, or because |dir| exists but is not writable: EACCES,
// EROFS, EPERM) is not created; NOT_FOUND when it does not exist.
mlcc_status_t mlcc_cache_open_with(const char* dir, const mlcc_cache_config_t* config,
                                   mlcc_cache_t** out_cache);

// The cache folder (borrowed).
const char* mlcc_cache_dir(const mlcc_cache_t* cache);

// True when the cache is only read (see the top of this file).
bool mlcc_cache_is_read_only(const mlcc_cache_t* cache);

typedef enum mlcc_cache_result_e {
  MLCC_CACHE_HIT = 0,
  MLCC_CACHE_MISS,      // no entry
  MLCC_CACHE_DAMAGED,   // an entry exists but is truncated, foreign or corrupt
} mlcc_cache_result_t;

// Looks up |key| (validated). On a HIT, |*out_data| (malloc'ed, caller
// frees) holds the payload, |*out_size| its size, the entry's mtime is
// refreshed (LRU) and the hit is counted. Otherwise *out_data is NULL and
// |why| (if non-NULL) says why in one line: "no entry ab/cdef...", or what
// is wrong with the entry. Never fails: an unreadable entry is a miss.
mlcc_cache_result_t mlcc_cache_lookup(mlcc_cache_t* cache, const char* key,
                                      uint8_t** out_data, size_t* out_size, char* why,
                                      size_t why_size);

// Stores |size| bytes under |key|: written to a temporary beside the entry
// and renamed over it. IO or INVALID_ARGUMENT (bad key, payload too big) on
// failure; nothing is left behind. Callers treat a failure as a warning. A
// no-op (OK) on a read-only cache.
mlcc_status_t mlcc_cache_store(mlcc_cache_t* cache, const char* key, const void* data,
                               size_t size);

// Counts a hit served by the remote store (stored locally by the caller),
// after a local lookup of the same key missed (that miss is uncounted).
void mlcc_cache_count_remote_hit(mlcc_cache_t* cache);

// Adds the remote store's troubles of this run to the statistics: failed
// requests (transport errors, timeouts, HTTP errors), downloads rejected by
// verification, and the milliseconds spent waiting for the remote.
void mlcc_cache_count_remote(mlcc_cache_t* cache, uint64_t errors, uint64_t rejected,
                             uint64_t wait_ms);

// -d explain-cache records (<dir>/explain/): |id| is 64 hex digits (a
// digest naming a node, driver/cache_explain.h). _get returns the record
// last put (malloc'ed NUL-terminated text, caller frees) or NULL when there
// is none or it is unreadable. _put replaces it atomically (best effort,
// a no-op on a read-only cache).
char* mlcc_cache_record_get(mlcc_cache_t* cache, const char* id);
void mlcc_cache_record_put(mlcc_cache_t* cache, const char* id, const char* text);

// Counts an object from the local (|local_hit|: the lookup's hit becomes a
// miss) or remote store that mlcc_object_check refused (driver/object_check.h).
// NULL-safe.
void mlcc_cache_count_rejected(mlcc_cache_t* cache, bool local_hit);

// Adds this process's counters to the stats file, then evicts least
// recently used entries while the cache is above its limit (down to 90% of
// it) and removes temporaries older than an hour (left by killed
// processes). Failures are ignored (the cache is best effort). Then frees
// the cache. NULL-safe.
void mlcc_cache_close(mlcc_cache_t* cache);

// Checks the entry file |path| against |key| (or only its self-consistency
// when |key| is NULL). OK, or an INVALID_MODEL status whose message says what is
// wrong (the same words a lookup reports as its miss reason).
mlcc_status_t mlcc_cache_verify_entry_file(const char* path, const char* key);

// Counters kept in <dir>/stats.
typedef struct mlcc_cache_counters_t {
  uint64_t hits;          // local hits
  uint64_t remote_hits;   // remote hits (also stored locally)
  uint64_t misses;        // kernels compiled although the cache was on
  uint64_t damaged;       // damaged entries found (and rebuilt)
  uint64_t stores;        // entries written
  uint64_t evictions;     // entries removed by the size limit
  uint64_t remote_errors;    // remote requests that failed or timed out
  uint64_t remote_rejected;  // remote downloads that failed verification
  uint64_t remote_wait_ms;   // time spent waiting for the remote store
  uint64_t rejected;         // cached objects refused by mlcc_object_check (rebuilt)
  uint64_t zeroed_time;      // Unix time of the last -z (0: never)
} mlcc_cache_counters_t;

// What is on disk now.
typedef struct mlcc_cache_usage_t {
  uint64_t entries;
  uint64_t bytes;         // sum of the entry files' sizes
  uint64_t temporaries;   // .tmp-* files (entries being written or abandoned)
} mlcc_cache_usage_t;

// Scans the fan-out folders of |dir|. A missing |dir| is an empty cache.
mlcc_status_t mlcc_cache_scan(const char* dir, mlcc_cache_usage_t* out_usage);

// Reads the counters (zeros when there is no stats file).
mlcc_status_t mlcc_cache_read_counters(const char* dir, mlcc_cache_counters_t* out_counters);

// Evicts least recently used entries (oldest mtime first, then by name)
// until the entries take at most |target_bytes|; |*out_evicted| counts them.
mlcc_status_t mlcc_cache_trim(const char* dir, uint64_t target_bytes, uint64_t* out_evicted);

// --cache-stats: prints the counters and the usage of |dir| against
// |max_size| to |out| in the style of `ccache -s`.
mlcc_status_t mlcc_cache_print_stats(const char* dir, uint64_t max_size, FILE* out);

// --print-stats: the same as tab-separated "key<TAB>value" lines, one key
// per line in a fixed order, every value an integer (bytes, ms, Unix time):
// stats_zeroed_timestamp local_hits remote_hits misses damaged stores
// evictions remote_errors remote_rejected remote_wait_ms entries
// cache_size_bytes max_size_bytes temporaries.
mlcc_status_t mlcc_cache_print_stats_tsv(const char* dir, uint64_t max_size, FILE* out);

// -z / --zero-stats: sets every counter to zero (entries stay) and records
// the time. Creates |dir| if needed. IO when the stats file cannot be written.
mlcc_status_t mlcc_cache_zero_stats(const char* dir);

// --cleanup / --cache-trim: removes temporaries older than an hour and, when
// |max_size| is not 0 and the entries exceed 90% of it, evicts the least
// recently used down to 90% (what a build does when it ends). Counts the
// evictions in the stats. |out_evicted|, |out_temporaries| may be NULL.
mlcc_status_t mlcc_cache_cleanup(const char* dir, uint64_t max_size, uint64_t* out_evicted,
                                 uint64_t* out_temporaries);

// --cache-clear: removes every entry, temporary and explain record and
// resets the counters (mlcc.conf stays).
// |*out_removed| (may be NULL) counts the entries removed. A missing |dir| is
// already clear.
mlcc_status_t mlcc_cache_clear(const char* dir, uint64_t* out_removed);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_CACHE_H_

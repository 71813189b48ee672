// SPDX-License-Identifier: Apache-2.0
// The remote kernel cache (DESIGN.md section 5): the HTTP protocol of
// bazel-remote and of Bazel's --remote_cache=http://..., so that an
// unmodified bazel-remote, or a plain nginx WebDAV location, can serve it.
//
//   GET/PUT <base>/cas/<sha256 of content>   the kernel object, raw bytes
//   GET/PUT <base>/ac/<kernel cache key>     an REv2 ActionResult (protobuf)
//                                            with one OutputFile "kernel.o"
//                                            whose digest names the CAS blob
//
// <base> is MLCC_REMOTE_CACHE (http://host:port[/instance]). Uploads write
// the CAS blob first, then the action result, so a reader that finds the
// action result finds its blob. A downloaded blob is used only if its size
// and SHA-256 match the digest, it is an ELF object, and it defines the
// kernel's symbol: anything else is rejected (a poisoned or damaged entry)
// and the kernel is rebuilt. (The symbol test here is a substring search;
// the driver then runs the full check of driver/object_check.h on every
// cached object, local or remote, and mlcc_remote_cache_set_key adds
// signatures: docs/cache.md "Trust model".) HTTP uses libcurl; without it (MLCC_HAVE_CURL
// unset) opening fails with UNIMPLEMENTED.
//
// Deadlines: every request has a connect and transfer timeout
// (mlcc_remote_options_t.timeout_ms, a few seconds by default) and all
// requests of a run share a budget of waiting time. The store is switched
// off for the rest of the run after the first timeout or connection
// failure, after max_errors HTTP errors in a row, or when the budget is
// spent; mlcc_remote_cache_disabled_reason then says why, in one line.
//
// Credentials: the userinfo of the URL (http://user:password@host/...),
// else $MLCC_REMOTE_CACHE_CREDENTIALS ("user:password"), else a netrc file
// ($MLCC_REMOTE_CACHE_NETRC, else libcurl's default ~/.netrc), sent as HTTP
// Basic authentication. No URL this module prints or returns contains the
// userinfo.
//
// Thread-safety: one mlcc_remote_cache_t is shared; each thread makes its own
// session (one libcurl handle, kept-alive connections).
#ifndef MLCC_DRIVER_REMOTE_CACHE_H_
#define MLCC_DRIVER_REMOTE_CACHE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_remote_cache_t mlcc_remote_cache_t;
typedef struct mlcc_remote_session_t mlcc_remote_session_t;

// The output file name recorded in action results.
#define MLCC_REMOTE_OUTPUT_PATH "kernel.o"

#define MLCC_REMOTE_DEFAULT_TIMEOUT_MS 5000u
#define MLCC_REMOTE_DEFAULT_BUDGET_MS 60000u
#define MLCC_REMOTE_DEFAULT_MAX_ERRORS 3u

typedef struct mlcc_remote_options_t {
  uint32_t timeout_ms;   // per request, connect and whole transfer; 0 = the default
  uint32_t budget_ms;    // total waiting per run (all threads); 0 = no budget
  uint32_t max_errors;   // HTTP errors in a row that switch the store off (0 = 1)
  bool read_only;        // never upload
} mlcc_remote_options_t;

// Copies |url| into |buf| without its userinfo ("http://u:p@h/x" ->
// "http://h/x"), for messages. Always NUL-terminates.
void mlcc_remote_redact_url(const char* url, char* buf, size_t buf_size);

// As mlcc_remote_cache_open with every option.
mlcc_status_t mlcc_remote_cache_open_with(const char* url, const mlcc_remote_options_t* options,
                                          mlcc_remote_cache_t** out);

// Opens the remote store at |url| ("http://host:port[/instance]" or https;
// a trailing '/' is dropped; userinfo becomes the credentials). |read_only|
// never uploads; the deadlines are the defaults. Call from one
// thread before any session exists (initializes libcurl). INVALID_ARGUMENT
// naming the URL for another scheme; UNIMPLEMENTED when built without
// libcurl. Caller owns |*out| (NULL on failure).
mlcc_status_t mlcc_remote_cache_open(const char* url, bool read_only,
                                     mlcc_remote_cache_t** out);
// Frees the store (all sessions must be destroyed first). NULL-safe.
void mlcc_remote_cache_close(mlcc_remote_cache_t* remote);

bool mlcc_remote_cache_read_only(const mlcc_remote_cache_t* remote);

// Issue 14: with |key| (borrowed; it must outlive |remote|; NULL = off),
// uploads carry a signature and downloads whose action result is not signed
// by |key| are REJECTED (driver/remote_sign.h). A verify-only key never
// uploads. Call before any session exists.
struct mlcc_remote_key_t;
void mlcc_remote_cache_set_key(mlcc_remote_cache_t* remote, const struct mlcc_remote_key_t* key);
// The base URL without userinfo (borrowed).
const char* mlcc_remote_cache_url(const mlcc_remote_cache_t* remote);

// A per-thread session; NULL on OOM. Destroy with mlcc_remote_session_destroy (NULL-safe).
mlcc_remote_session_t* mlcc_remote_session_create(mlcc_remote_cache_t* remote);
void mlcc_remote_session_destroy(mlcc_remote_session_t* session);

typedef enum mlcc_remote_result_e {
  MLCC_REMOTE_HIT = 0,
  MLCC_REMOTE_MISS,      // 404 for the action result or its blob
  MLCC_REMOTE_REJECTED,  // something came back but failed verification
  MLCC_REMOTE_ERROR,     // transport or server error, or the store is off
} mlcc_remote_result_t;

// Fetches the kernel object for |key| (64 hex). |symbol| (may be NULL) must
// occur in the object. On HIT |*out_data| is malloc'ed (caller frees).
// Otherwise |why| says what happened in one line.
mlcc_remote_result_t mlcc_remote_cache_get(mlcc_remote_session_t* session, const char* key,
                                           const char* symbol, uint8_t** out_data,
                                           size_t* out_size, char* why, size_t why_size);

// As mlcc_remote_cache_get for an entry that is not a kernel object (tuning
// records, driver/tune.h): the blob must match its digest (and the
// signature, with a key), but its content is the caller's to check.
mlcc_remote_result_t mlcc_remote_cache_get_blob(mlcc_remote_session_t* session, const char* key,
                                                uint8_t** out_data, size_t* out_size, char* why,
                                                size_t why_size);

// Uploads |data| under |key| (CAS blob, then action result). A no-op in
// read-only mode. IO naming the URL and HTTP status on failure.
mlcc_status_t mlcc_remote_cache_put(mlcc_remote_session_t* session, const char* key,
                                    const void* data, size_t size);

// True once the store is off for the rest of the run (see Deadlines).
bool mlcc_remote_cache_disabled(const mlcc_remote_cache_t* remote);
// Why it is off (borrowed, one line without credentials), or NULL.
const char* mlcc_remote_cache_disabled_reason(const mlcc_remote_cache_t* remote);

typedef struct mlcc_remote_stats_t {
  uint64_t requests;  // HTTP requests made
  uint64_t errors;    // requests that failed: transport, timeout or HTTP error status
  uint64_t rejected;  // downloads that failed verification
  uint64_t wait_ms;   // time spent in requests, summed over threads
} mlcc_remote_stats_t;

// This run's counters so far (thread-safe).
void mlcc_remote_cache_stats(const mlcc_remote_cache_t* remote, mlcc_remote_stats_t* out);

// The serialized ActionResult pointing at a blob (|hash| 64 hex, |size|).
// |*out| is malloc'ed. RESOURCE_EXHAUSTED on OOM.
mlcc_status_t mlcc_remote_encode_action_result(const char* hash, uint64_t size, uint8_t** out,
                                               size_t* out_size);
// The same with |stdout_raw| (|raw_size| bytes, borrowed; NULL = none) in the
// ActionResult's stdout_raw field: how signed entries carry their signature
// record (driver/remote_sign.h).
mlcc_status_t mlcc_remote_encode_action_result_raw(const char* hash, uint64_t size,
                                                   const void* stdout_raw, size_t raw_size,
                                                   uint8_t** out, size_t* out_size);
// Decodes an ActionResult and finds the "kernel.o" output's digest.
// INVALID_MODEL saying what is wrong (not a protobuf, no such output, bad
// digest).
mlcc_status_t mlcc_remote_decode_action_result(const uint8_t* data, size_t size,
                                               char out_hash[65], uint64_t* out_size);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_REMOTE_CACHE_H_

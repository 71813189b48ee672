// SPDX-License-Identifier: Apache-2.0
// Signed remote cache entries (issue 14 item 8, docs/cache.md "Trust
// model"): --remote-cache-key=FILE ($MLCC_REMOTE_CACHE_KEY).
//
// mlcc signs each ActionResult it uploads and, with a key, uses only remote
// entries whose signature verifies. The signature covers
//   "mlcc-remote-cache-v1\n" <store key> "\n" <blob sha256 hex> "\n" <size> "\n"
// so it binds the blob (by digest, which the download checks) to the one
// key it was uploaded under: a signed entry cannot be replayed for another
// kernel. It travels in the ActionResult's stdout_raw field as one line
//   "mlcc-signature-v1 <algorithm> <key id> <signature hex>\n"
// (a field REv2 servers such as bazel-remote store as they get it).
//
// The key file is one of:
//   - an Ed25519 private key (PEM, `openssl genpkey -algorithm ed25519`):
//     signs and verifies (the CI that writes the cache);
//   - an Ed25519 public key (PEM, `openssl pkey -pubout`): verifies only; a
//     build with it never uploads (developers who read a CI's cache);
//   - anything else: a shared HMAC-SHA256 secret, the file's bytes without
//     trailing newlines, at least 16 bytes (`openssl rand -hex 32`). Whoever
//     holds it may write.
// The key id is the first 16 hex digits of the SHA-256 of the secret (HMAC)
// or of the raw public key (Ed25519); it names the key in messages without
// revealing it.
//
// Thread-safety: a loaded key is immutable; sign and verify may be called
// from several threads.
#ifndef MLCC_DRIVER_REMOTE_SIGN_H_
#define MLCC_DRIVER_REMOTE_SIGN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlcc_remote_key_t mlcc_remote_key_t;

// Loads the key file |path| (formats above). INVALID_ARGUMENT naming |path|
// when it cannot be read, is empty or shorter than 16 bytes (HMAC), or is a
// PEM key of another algorithm. Caller owns |*out_key| (NULL on failure);
// free with mlcc_remote_key_destroy.
mlcc_status_t mlcc_remote_key_load(const char* path, mlcc_remote_key_t** out_key);
// NULL-safe; wipes the secret.
void mlcc_remote_key_destroy(mlcc_remote_key_t* key);

// False for an Ed25519 public key (verify only).
bool mlcc_remote_key_can_sign(const mlcc_remote_key_t* key);
// "hmac-sha256" or "ed25519" (static storage).
const char* mlcc_remote_key_algorithm(const mlcc_remote_key_t* key);
// The key id: 16 lowercase hex digits (borrowed).
const char* mlcc_remote_key_id(const mlcc_remote_key_t* key);

// The serialized ActionResult for blob |hash| (64 hex) of |size| bytes,
// uploaded under |store_key| (64 hex), with its signature in stdout_raw.
// |*out| is malloc'ed (caller frees). INVALID_ARGUMENT for a verify-only
// key; INTERNAL when libcrypto fails; RESOURCE_EXHAUSTED on OOM.
mlcc_status_t mlcc_remote_key_sign_action_result(const mlcc_remote_key_t* key,
                                                 const char* store_key, const char* hash,
                                                 uint64_t size, uint8_t** out, size_t* out_size);

// Checks that the ActionResult |data| (|size| bytes) fetched for |store_key|
// carries a valid signature by |key| over its "kernel.o" digest. OK, or
// INVALID_MODEL saying why in one line ("is not signed", "is signed with
// key 0123... (this build has abcd...)", "has a bad signature").
mlcc_status_t mlcc_remote_key_verify_action_result(const mlcc_remote_key_t* key,
                                                   const char* store_key, const uint8_t* data,
                                                   size_t size);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_REMOTE_SIGN_H_

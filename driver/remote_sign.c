// SPDX-License-Identifier: Apache-2.0
// Signed remote cache entries: see remote_sign.h.
#include "driver/remote_sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include "driver/cache.h"
#include "driver/remote_cache.h"
#include "driver/remote_cache.pb-c.h"

enum {
  kMaxKeyFile = 64 * 1024,
  kMinSecret = 16,
  kMaxSignature = 64,  // HMAC-SHA256: 32 bytes; Ed25519: 64
};

static const char kRecordPrefix[] = "mlcc-signature-v1 ";

struct mlcc_remote_key_t {
  bool hmac;
  bool can_sign;
  uint8_t* secret;  // HMAC
  size_t secret_size;
  EVP_PKEY* pkey;  // Ed25519
  char id[17];
};

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

static void hex(const uint8_t* data, size_t n, char* out) {
  static const char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  out[2 * n] = '\0';
}

static void key_id(const uint8_t* data, size_t n, char out[17]) {
  uint8_t d[32];
  unsigned int len = 0;
  memset(d, 0, sizeof(d));
  (void)EVP_Digest(data, n, d, &len, EVP_sha256(), NULL);
  hex(d, 8, out);
}

void mlcc_remote_key_destroy(mlcc_remote_key_t* key) {
  if (key == NULL) return;
  if (key->secret != NULL) {
    OPENSSL_cleanse(key->secret, key->secret_size);
    free(key->secret);
  }
  EVP_PKEY_free(key->pkey);
  free(key);
}

// Reads at most kMaxKeyFile bytes of |path|.
static mlcc_status_t read_key_file(const char* path, uint8_t** out, size_t* out_size) {
  *out = NULL;
  *out_size = 0;
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "cannot read the remote cache key '%s'",
                            path);
  }
  uint8_t* buf = (uint8_t*)malloc(kMaxKeyFile + 1);
  if (buf == NULL) {
    fclose(f);
    return oom();
  }
  size_t n = fread(buf, 1, kMaxKeyFile + 1, f);
  bool bad = ferror(f) != 0;
  fclose(f);
  if (bad || n > kMaxKeyFile) {
    OPENSSL_cleanse(buf, n);
    free(buf);
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "the remote cache key '%s' is unreadable or larger than %d bytes",
                            path, kMaxKeyFile);
  }
  *out = buf;
  *out_size = n;
  return mlcc_ok_status();
}

// PEM pass-phrase callback: encrypted keys are refused instead of prompting
// on the terminal (a build must never wait for input).
static int no_passphrase(char* buf, int size, int rwflag, void* userdata) {
  (void)buf;
  (void)size;
  (void)rwflag;
  (void)userdata;
  return -1;
}

mlcc_status_t mlcc_remote_key_load(const char* path, mlcc_remote_key_t** out_key) {
  *out_key = NULL;
  uint8_t* buf = NULL;
  size_t n = 0;
  MLCC_RETURN_IF_ERROR(read_key_file(path, &buf, &n));
  mlcc_remote_key_t* key = (mlcc_remote_key_t*)calloc(1, sizeof(*key));
  if (key == NULL) {
    OPENSSL_cleanse(buf, n);
    free(buf);
    return oom();
  }
  mlcc_status_t s = mlcc_ok_status();
  if (n >= 10 && memcmp(buf, "-----BEGIN", 10) == 0) {
    BIO* bio = BIO_new_mem_buf(buf, (int)n);
    EVP_PKEY* pkey = NULL;
    bool priv = strstr((const char*)buf, "PRIVATE KEY") != NULL && n < kMaxKeyFile;
    if (bio != NULL) {
      pkey = priv ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL)
                  : PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
      BIO_free(bio);
    }
    uint8_t raw[32];
    size_t raw_size = sizeof(raw);
    if (pkey == NULL || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_ED25519 ||
        EVP_PKEY_get_raw_public_key(pkey, raw, &raw_size) != 1) {
      EVP_PKEY_free(pkey);
      s = mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                           "the remote cache key '%s' is a PEM file but not an unencrypted "
                           "Ed25519 %s key",
                           path, priv ? "private" : "public");
    } else {
      key->pkey = pkey;
      key->can_sign = priv;
      key_id(raw, raw_size, key->id);
    }
  } else {
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) --n;
    if (n < kMinSecret) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                           "the remote cache key '%s' is shorter than %d bytes", path, kMinSecret);
    } else {
      key->hmac = true;
      key->can_sign = true;
      key->secret = buf;
      key->secret_size = n;
      buf = NULL;
      key_id(key->secret, key->secret_size, key->id);
    }
  }
  if (buf != NULL) {
    OPENSSL_cleanse(buf, n);
    free(buf);
  }
  if (s != NULL) {
    mlcc_remote_key_destroy(key);
    return s;
  }
  *out_key = key;
  return mlcc_ok_status();
}

bool mlcc_remote_key_can_sign(const mlcc_remote_key_t* key) { return key->can_sign; }
const char* mlcc_remote_key_algorithm(const mlcc_remote_key_t* key) {
  return key->hmac ? "hmac-sha256" : "ed25519";
}
const char* mlcc_remote_key_id(const mlcc_remote_key_t* key) { return key->id; }

// The signed message (remote_sign.h) into |buf| (>= 200 bytes); its length.
static size_t message(const char* store_key, const char* hash, uint64_t size, char* buf,
                      size_t cap) {
  int n = snprintf(buf, cap, "mlcc-remote-cache-v1\n%s\n%s\n%llu\n", store_key, hash,
                   (unsigned long long)size);
  return n < 0 ? 0 : (size_t)n;
}

// Signs |msg|; |sig| holds kMaxSignature bytes.
static mlcc_status_t sign(const mlcc_remote_key_t* key, const char* msg, size_t msg_size,
                          uint8_t* sig, size_t* out_sig_size) {
  *out_sig_size = 0;
  if (key->hmac) {
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), key->secret, (int)key->secret_size, (const unsigned char*)msg,
             msg_size, sig, &len) == NULL) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "HMAC-SHA256 failed");
    }
    *out_sig_size = len;
    return mlcc_ok_status();
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = kMaxSignature;
  bool ok = ctx != NULL && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key->pkey) == 1 &&
            EVP_DigestSign(ctx, sig, &len, (const unsigned char*)msg, msg_size) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) return mlcc_make_status(MLCC_STATUS_INTERNAL, "Ed25519 signing failed");
  *out_sig_size = len;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_remote_key_sign_action_result(const mlcc_remote_key_t* key,
                                                 const char* store_key, const char* hash,
                                                 uint64_t size, uint8_t** out, size_t* out_size) {
  *out = NULL;
  *out_size = 0;
  if (!key->can_sign) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "the remote cache key %s is a public key: it cannot sign", key->id);
  }
  char msg[256];
  size_t msg_size = message(store_key, hash, size, msg, sizeof(msg));
  uint8_t sig[kMaxSignature];
  size_t sig_size = 0;
  MLCC_RETURN_IF_ERROR(sign(key, msg, msg_size, sig, &sig_size));
  char record[sizeof(kRecordPrefix) + 16 + 2 * kMaxSignature + 40];
  char sig_hex[2 * kMaxSignature + 1];
  hex(sig, sig_size, sig_hex);
  int record_size = snprintf(record, sizeof(record), "%s%s %s %s\n", kRecordPrefix,
                             mlcc_remote_key_algorithm(key), key->id, sig_hex);
  return mlcc_remote_encode_action_result_raw(hash, size, record, (size_t)record_size, out,
                                              out_size);
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

mlcc_status_t mlcc_remote_key_verify_action_result(const mlcc_remote_key_t* key,
                                                   const char* store_key, const uint8_t* data,
                                                   size_t size) {
  char hash[65];
  uint64_t blob_size = 0;
  MLCC_RETURN_IF_ERROR(mlcc_remote_decode_action_result(data, size, hash, &blob_size));
  MlccRev2__ActionResult* r = mlcc_rev2__action_result__unpack(NULL, size, data);
  if (r == NULL) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "not an ActionResult");
  // Copy the record out as a C string (bounded).
  char record[256];
  size_t len = r->has_stdout_raw ? r->stdout_raw.len : 0;
  bool too_long = len >= sizeof(record);
  if (!too_long && len > 0) memcpy(record, r->stdout_raw.data, len);
  record[too_long ? 0 : len] = '\0';
  mlcc_rev2__action_result__free_unpacked(r, NULL);
  if (len == 0 || too_long || memchr(record, '\0', len) != NULL ||
      strncmp(record, kRecordPrefix, sizeof(kRecordPrefix) - 1) != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "is not signed");
  }
  // "<algorithm> <key id> <hex>\n"
  char alg[16], id[17], sig_hex[2 * kMaxSignature + 4];
  const char* p = record + sizeof(kRecordPrefix) - 1;
  if (sscanf(p, "%15s %16s %130s", alg, id, sig_hex) != 3) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed signature record");
  }
  if (strcmp(alg, mlcc_remote_key_algorithm(key)) != 0 || strcmp(id, key->id) != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "is signed with %s key %s (this build has %s key %s)", alg, id,
                            mlcc_remote_key_algorithm(key), key->id);
  }
  size_t hex_len = strlen(sig_hex);
  uint8_t sig[kMaxSignature];
  size_t sig_size = hex_len / 2;
  bool bad = hex_len % 2 != 0 || sig_size > kMaxSignature || sig_size == 0;
  for (size_t i = 0; !bad && i < sig_size; ++i) {
    int hi = hex_value(sig_hex[2 * i]), lo = hex_value(sig_hex[2 * i + 1]);
    if (hi < 0 || lo < 0) bad = true;
    sig[i] = (uint8_t)(hi << 4 | (lo & 15));
  }
  // Exactly the record mlcc writes: no other spacing, case or trailer.
  char canonical[sizeof(record)];
  snprintf(canonical, sizeof(canonical), "%s%s %s %s\n", kRecordPrefix, alg, id, sig_hex);
  if (bad || strcmp(canonical, record) != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed signature");
  }
  char msg[256];
  size_t msg_size = message(store_key, hash, blob_size, msg, sizeof(msg));
  bool ok;
  if (key->hmac) {
    uint8_t want[kMaxSignature];
    size_t want_size = 0;
    MLCC_RETURN_IF_ERROR(sign(key, msg, msg_size, want, &want_size));
    ok = sig_size == want_size && CRYPTO_memcmp(sig, want, want_size) == 0;
  } else {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ok = ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key->pkey) == 1 &&
         EVP_DigestVerify(ctx, sig, sig_size, (const unsigned char*)msg, msg_size) == 1;
    EVP_MD_CTX_free(ctx);
  }
  if (!ok) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a bad signature");
  return mlcc_ok_status();
}

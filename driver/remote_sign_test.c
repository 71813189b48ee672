// SPDX-License-Identifier: Apache-2.0
// Tests for driver/remote_sign.c: HMAC-SHA256 and Ed25519 keys, signed
// ActionResults that verify, and every way one must not (unsigned, another
// key, another store key, another blob, a flipped signature byte, garbage).
#include "driver/remote_sign.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "driver/remote_cache.h"
#include "test.h"

static char g_root[256];

static const char kStore[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static const char kOther[] = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
static const char kBlob[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

static void write_text(const char* name, const char* text, char* out_path, size_t n) {
  snprintf(out_path, n, "%s/%s", g_root, name);
  FILE* f = fopen(out_path, "wb");
  CHECK(f != NULL);
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

static mlcc_remote_key_t* load_text(const char* name, const char* text) {
  char path[512];
  write_text(name, text, path, sizeof(path));
  mlcc_remote_key_t* key = NULL;
  CHECK_OK(mlcc_remote_key_load(path, &key));
  return key;
}

static void expect_reject(const mlcc_remote_key_t* key, const char* store, const uint8_t* ar,
                          size_t n, const char* want) {
  mlcc_status_t s = mlcc_remote_key_verify_action_result(key, store, ar, n);
  CHECK(s != NULL);
  if (s == NULL) return;
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_MODEL);
  if (strstr(mlcc_status_message(s), want) == NULL) {
    fprintf(stderr, "'%s' lacks '%s'\n", mlcc_status_message(s), want);
    CHECK(false);
  }
  mlcc_status_free(s);
}

// Signs with |signer|, verifies with |verifier|, then every way it must fail.
static void roundtrip(const mlcc_remote_key_t* signer, const mlcc_remote_key_t* verifier,
                      const mlcc_remote_key_t* stranger) {
  uint8_t* ar = NULL;
  size_t n = 0;
  CHECK_OK(mlcc_remote_key_sign_action_result(signer, kStore, kBlob, 1234, &ar, &n));
  if (ar == NULL) return;
  // Still an ordinary ActionResult for servers and unsigned readers.
  char hash[65];
  uint64_t size = 0;
  CHECK_OK(mlcc_remote_decode_action_result(ar, n, hash, &size));
  CHECK_STREQ(hash, kBlob);
  CHECK(size == 1234);
  CHECK_OK(mlcc_remote_key_verify_action_result(verifier, kStore, ar, n));
  // Replayed under another kernel's key.
  expect_reject(verifier, kOther, ar, n, "bad signature");
  // Signed by another key.
  expect_reject(stranger, kStore, ar, n, "is signed with");
  // Every single-byte change is refused (or is not an ActionResult at all).
  uint8_t* copy = (uint8_t*)malloc(n);
  for (size_t i = 0; i < n; ++i) {
    memcpy(copy, ar, n);
    copy[i] ^= 0x01;
    mlcc_status_t s = mlcc_remote_key_verify_action_result(verifier, kStore, copy, n);
    CHECK(s != NULL);
    mlcc_status_free(s);
  }
  free(copy);
  free(ar);
  // Unsigned.
  CHECK_OK(mlcc_remote_encode_action_result(kBlob, 1234, &ar, &n));
  expect_reject(verifier, kStore, ar, n, "is not signed");
  free(ar);
  expect_reject(verifier, kStore, (const uint8_t*)"\xff\xff", 2, "ActionResult");
}

static void test_hmac(void) {
  mlcc_remote_key_t* a = load_text("a.key", "0123456789abcdef0123456789abcdef\n");
  mlcc_remote_key_t* a2 = load_text("a2.key", "0123456789abcdef0123456789abcdef");
  mlcc_remote_key_t* b = load_text("b.key", "another secret of enough length\n");
  if (a && a2 && b) {
    CHECK(mlcc_remote_key_can_sign(a));
    CHECK_STREQ(mlcc_remote_key_algorithm(a), "hmac-sha256");
    CHECK_STREQ(mlcc_remote_key_id(a), mlcc_remote_key_id(a2));  // trailing newline dropped
    CHECK(strcmp(mlcc_remote_key_id(a), mlcc_remote_key_id(b)) != 0);
    CHECK_EQ_INT(strlen(mlcc_remote_key_id(a)), 16);
    roundtrip(a, a2, b);
  }
  mlcc_remote_key_destroy(a);
  mlcc_remote_key_destroy(a2);
  mlcc_remote_key_destroy(b);
}

static void write_pkey(EVP_PKEY* k, const char* name, bool priv, char* path, size_t n) {
  snprintf(path, n, "%s/%s", g_root, name);
  FILE* f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f == NULL) return;
  CHECK((priv ? PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL)
              : PEM_write_PUBKEY(f, k)) == 1);
  fclose(f);
}

static void test_ed25519(void) {
  EVP_PKEY* k1 = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  EVP_PKEY* k2 = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  CHECK(k1 != NULL && k2 != NULL);
  if (k1 == NULL || k2 == NULL) return;
  char p1[512], p1pub[512], p2pub[512];
  write_pkey(k1, "ci.pem", true, p1, sizeof(p1));
  write_pkey(k1, "ci.pub", false, p1pub, sizeof(p1pub));
  write_pkey(k2, "other.pub", false, p2pub, sizeof(p2pub));
  mlcc_remote_key_t *priv = NULL, *pub = NULL, *other = NULL;
  CHECK_OK(mlcc_remote_key_load(p1, &priv));
  CHECK_OK(mlcc_remote_key_load(p1pub, &pub));
  CHECK_OK(mlcc_remote_key_load(p2pub, &other));
  if (priv && pub && other) {
    CHECK(mlcc_remote_key_can_sign(priv));
    CHECK(!mlcc_remote_key_can_sign(pub));
    CHECK_STREQ(mlcc_remote_key_algorithm(pub), "ed25519");
    CHECK_STREQ(mlcc_remote_key_id(priv), mlcc_remote_key_id(pub));
    roundtrip(priv, pub, other);
    uint8_t* ar = NULL;
    size_t n = 0;
    CHECK_STATUS(mlcc_remote_key_sign_action_result(pub, kStore, kBlob, 1, &ar, &n),
                 MLCC_STATUS_INVALID_ARGUMENT);
    CHECK(ar == NULL);
  }
  mlcc_remote_key_destroy(priv);
  mlcc_remote_key_destroy(pub);
  mlcc_remote_key_destroy(other);
  EVP_PKEY_free(k1);
  EVP_PKEY_free(k2);
}

static void test_bad_keys(void) {
  mlcc_remote_key_t* key = NULL;
  char path[512];
  snprintf(path, sizeof(path), "%s/missing.key", g_root);
  CHECK_STATUS(mlcc_remote_key_load(path, &key), MLCC_STATUS_INVALID_ARGUMENT);
  write_text("short.key", "tooshort\n", path, sizeof(path));
  CHECK_STATUS(mlcc_remote_key_load(path, &key), MLCC_STATUS_INVALID_ARGUMENT);
  write_text("empty.key", "", path, sizeof(path));
  CHECK_STATUS(mlcc_remote_key_load(path, &key), MLCC_STATUS_INVALID_ARGUMENT);
  write_text("bad.pem", "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n",
             path, sizeof(path));
  CHECK_STATUS(mlcc_remote_key_load(path, &key), MLCC_STATUS_INVALID_ARGUMENT);
  EVP_PKEY* ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  if (ec != NULL) {
    write_pkey(ec, "ec.pem", true, path, sizeof(path));
    mlcc_status_t s = mlcc_remote_key_load(path, &key);
    CHECK(s != NULL && strstr(mlcc_status_message(s), "not an unencrypted Ed25519") != NULL);
    mlcc_status_free(s);
    EVP_PKEY_free(ec);
  }
  // An encrypted private key is refused, never prompted for (stdin is a
  // terminal in interactive builds; the test would hang on a prompt).
  EVP_PKEY* ed = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  if (ed != NULL) {
    snprintf(path, sizeof(path), "%s/encrypted.pem", g_root);
    FILE* f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f != NULL) {
      CHECK(PEM_write_PrivateKey(f, ed, EVP_aes_256_cbc(), (unsigned char*)"pass phrase", 11,
                                 NULL, NULL) == 1);
      fclose(f);
      CHECK_STATUS(mlcc_remote_key_load(path, &key), MLCC_STATUS_INVALID_ARGUMENT);
    }
    EVP_PKEY_free(ed);
  }
  CHECK(key == NULL);
}

int main(void) {
  snprintf(g_root, sizeof(g_root), "/tmp/mlcc-remote-sign-test-XXXXXX");
  if (mkdtemp(g_root) == NULL) return 1;
  RUN(test_hmac);
  RUN(test_ed25519);
  RUN(test_bad_keys);
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g_root);
  return TEST_EXIT();
}

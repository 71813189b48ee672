// SPDX-License-Identifier: Apache-2.0
// Tests for driver/build_id.c and the default store key of driver/cache.c
// (MLCC_CACHE_COMPILER_CHECK unset: the codegen hash). The other checks and
// two separately built binaries are in tests/e2e/cache/fleet_test.py.
#include "driver/build_id.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "driver/build_id_gen.h"
#include "driver/cache.h"
#include "test.h"

static bool all_hex(const char* s, size_t n) {
  if (strlen(s) != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  }
  return true;
}

static void sha256_hex(const void* data, size_t size, char out[65]) {
  unsigned char md[32];
  unsigned int len = 0;
  EVP_Digest(data, size, md, &len, EVP_sha256(), NULL);
  for (int i = 0; i < 32; ++i) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void test_format(void) {
  const char* commit = mlcc_build_commit();
  CHECK(all_hex(commit, 40) || strcmp(commit, "unknown") == 0);
  CHECK(all_hex(mlcc_build_codegen_hash(), 64));
  CHECK(all_hex(MLCC_CODEGEN_SOURCES_SHA256, 64));
  CHECK(MLCC_CODEGEN_SOURCES_COUNT > 50);  // ir/, passes/, targets/ sources
  // Stable within a process, and not the sources hash alone.
  CHECK_STREQ(mlcc_build_codegen_hash(), mlcc_build_codegen_hash());
  CHECK(strcmp(mlcc_build_codegen_hash(), MLCC_CODEGEN_SOURCES_SHA256) != 0);
  CHECK(strstr(mlcc_build_codegen_flags(), "cc=") == mlcc_build_codegen_flags());
  CHECK(strstr(mlcc_build_codegen_flags(), " host=") != NULL);
}

// The default store key is SHA-256("mlcc-store-key-v1" || kernel key ||
// "codegen:" || codegen hash): the same for every build of one commit.
static void test_store_key(void) {
  static const char key[] =
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  char text[17 + 64 + 8 + 64 + 1];
  snprintf(text, sizeof(text), "mlcc-store-key-v1%scodegen:%s", key, mlcc_build_codegen_hash());
  char want[65];
  sha256_hex(text, strlen(text), want);
  char got[65];
  mlcc_cache_store_key(key, got);
  CHECK_STREQ(got, want);
  // Another kernel key, another store key.
  char other[65];
  mlcc_cache_store_key("fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210", other);
  CHECK(strcmp(other, got) != 0);
}

int main(void) {
  unsetenv("MLCC_CACHE_COMPILER_CHECK");
  RUN(test_format);
  RUN(test_store_key);
  return TEST_EXIT();
}

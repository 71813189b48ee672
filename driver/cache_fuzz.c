// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: everything the kernel cache and the remote cache parse
// (issue 14). Every input goes through
//   - mlcc_object_check, on the input and on the payload of the input read
//     as a cache entry (from byte 56), as a kernel and as an entry object for
//     each of the three targets (object_check.h);
//   - mlcc_remote_decode_action_result and
//     mlcc_remote_key_verify_action_result with a fixed HMAC key;
//   - the local cache: the input written as the entry file of a key (the
//     key the input's header names, if it is valid hex, else a fixed one)
//     in a private cache folder, then mlcc_cache_lookup and
//     mlcc_cache_verify_entry_file;
//   - when the input starts with "HTTP/": the remote client. The input is
//     split at the first "\n--mlcc--\n" into the raw HTTP response to the
//     action-result GET and the one to the blob GET; a loopback server
//     thread (the fake transport: 127.0.0.1, an ephemeral port) sends each
//     as it is and closes, and mlcc_remote_cache_get runs against it, signed
//     and unsigned.
// Built only with -DMLCC_FUZZ=ON and clang; run by scripts/fuzz.sh (seeds in
// $MLCC_FUZZ_OUT/seeds/cache: real kernels, entries and responses).
//
// Contract checked: no crash, no sanitizer report, no leak, no hang; a hit is
// only ever an object that passes mlcc_object_check's structural part (ELF).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/cache.h"
#include "driver/object_check.h"
#include "driver/remote_cache.h"
#include "driver/remote_sign.h"
#include "targets/target.h"

static const char kKey[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static const char kSym[] = "mlcc_k_0123456789abcdef01234567";
static const char kSplit[] = "\n--mlcc--\n";

static char g_dir[256];
static mlcc_cache_t* g_cache;
static mlcc_remote_key_t* g_key;
static mlcc_target_t g_targets[3];

// The fake transport.
static int g_listen = -1;
static int g_port;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static const uint8_t* g_ac;  // response to GET .../ac/...
static size_t g_ac_size;
static const uint8_t* g_cas;  // response to GET .../cas/...
static size_t g_cas_size;

static void* serve(void* arg) {
  (void)arg;
  for (;;) {
    int fd = accept(g_listen, NULL, NULL);
    if (fd < 0) continue;
    char req[4096];
    size_t n = 0;
    while (n < sizeof(req) - 1) {
      ssize_t r = read(fd, req + n, sizeof(req) - 1 - n);
      if (r <= 0) break;
      n += (size_t)r;
      req[n] = '\0';
      if (strstr(req, "\r\n\r\n") != NULL) break;
    }
    req[n] = '\0';
    pthread_mutex_lock(&g_mu);
    bool ac = strstr(req, "/ac/") != NULL;
    const uint8_t* body = ac ? g_ac : g_cas;
    size_t size = ac ? g_ac_size : g_cas_size;
    size_t off = 0;
    while (off < size) {
      ssize_t w = send(fd, body + off, size - off, MSG_NOSIGNAL);
      if (w <= 0) break;
      off += (size_t)w;
    }
    pthread_mutex_unlock(&g_mu);
    shutdown(fd, SHUT_RDWR);
    close(fd);
  }
  return NULL;
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  snprintf(g_dir, sizeof(g_dir), "/tmp/mlcc-cache-fuzz-XXXXXX");
  if (mkdtemp(g_dir) == NULL) abort();
  if (mlcc_cache_open(g_dir, 0, &g_cache) != NULL) abort();
  char key_path[300];
  snprintf(key_path, sizeof(key_path), "%s/hmac.key", g_dir);
  FILE* f = fopen(key_path, "w");
  if (f == NULL) abort();
  fputs("fuzzing secret, long enough\n", f);
  fclose(f);
  if (mlcc_remote_key_load(key_path, &g_key) != NULL) abort();
  const char* aliases[3] = {"x86", "aarch64", "riscv"};
  for (int i = 0; i < 3; ++i) {
    if (mlcc_target_resolve(aliases[i], NULL, NULL, &g_targets[i]) != NULL) abort();
  }
  g_listen = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (g_listen < 0 || bind(g_listen, (struct sockaddr*)&a, sizeof(a)) != 0 ||
      listen(g_listen, 16) != 0 || getsockname(g_listen, (struct sockaddr*)&a, &len) != 0) {
    abort();
  }
  g_port = ntohs(a.sin_port);
  pthread_t t;
  if (pthread_create(&t, NULL, serve, NULL) != 0) abort();
  pthread_detach(t);
  return 0;
}

// The first "mlcc_k_<24 hex>" in |data|, else kSym.
static void find_symbol(const uint8_t* data, size_t size, char out[40]) {
  snprintf(out, 40, "%s", kSym);
  for (size_t i = 0; i + 31 <= size; ++i) {
    if (memcmp(data + i, "mlcc_k_", 7) != 0) continue;
    memcpy(out, data + i, 31);
    out[31] = '\0';
    return;
  }
}

static void check_objects(const uint8_t* data, size_t size) {
  char sym[40];
  find_symbol(data, size, sym);
  for (int t = 0; t < 3; ++t) {
    mlcc_object_expect_t e;
    if (mlcc_object_expect_for_target(&g_targets[t], MLCC_OBJECT_KERNEL, sym, &e) != NULL) abort();
    mlcc_status_free(mlcc_object_check(data, size, &e));
    e.kind = MLCC_OBJECT_ENTRY;
    e.symbol = "m";
    mlcc_status_free(mlcc_object_check(data, size, &e));
  }
}

static void check_local(const uint8_t* data, size_t size) {
  char key[65];
  memcpy(key, kKey, sizeof(key));
  if (size >= 48) {  // the key the entry header names
    for (int i = 0; i < 32; ++i) snprintf(key + 2 * i, 3, "%02x", data[16 + i]);
  }
  char path[400];
  snprintf(path, sizeof(path), "%s/%.2s", g_dir, key);
  mkdir(path, 0700);
  snprintf(path, sizeof(path), "%s/%.2s/%s", g_dir, key, key + 2);
  FILE* f = fopen(path, "wb");
  if (f == NULL) return;
  if (size) fwrite(data, 1, size, f);
  fclose(f);
  uint8_t* out = NULL;
  size_t out_size = 0;
  char why[256];
  mlcc_cache_result_t r = mlcc_cache_lookup(g_cache, key, &out, &out_size, why, sizeof(why));
  if (r == MLCC_CACHE_HIT) check_objects(out, out_size);
  free(out);
  mlcc_status_free(mlcc_cache_verify_entry_file(path, key));
  mlcc_status_free(mlcc_cache_verify_entry_file(path, NULL));
  unlink(path);
}

static void check_action_result(const uint8_t* data, size_t size) {
  char hash[65];
  uint64_t n = 0;
  mlcc_status_free(mlcc_remote_decode_action_result(data, size, hash, &n));
  mlcc_status_free(mlcc_remote_key_verify_action_result(g_key, kKey, data, size));
}

static void check_remote(const uint8_t* data, size_t size) {
  const uint8_t* split = NULL;
  size_t m = sizeof(kSplit) - 1;
  for (size_t i = 0; i + m <= size && split == NULL; ++i) {
    if (memcmp(data + i, kSplit, m) == 0) split = data + i;
  }
  // The server may still be sending the previous responses after curl
  // stopped reading them: it owns copies, replaced under the lock.
  size_t ac_size = split ? (size_t)(split - data) : size;
  size_t cas_size = split ? size - (size_t)(split + m - data) : 0;
  uint8_t* ac = (uint8_t*)malloc(ac_size + 1);
  uint8_t* cas = (uint8_t*)malloc(cas_size + 1);
  if (ac == NULL || cas == NULL) abort();
  memcpy(ac, data, ac_size);
  if (cas_size) memcpy(cas, split + m, cas_size);
  pthread_mutex_lock(&g_mu);
  free((void*)g_ac);
  free((void*)g_cas);
  g_ac = ac;
  g_ac_size = ac_size;
  g_cas = cas;
  g_cas_size = cas_size;
  pthread_mutex_unlock(&g_mu);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/fuzz", g_port);
  for (int signed_run = 0; signed_run < 2; ++signed_run) {
    mlcc_remote_cache_t* remote = NULL;
    if (mlcc_remote_cache_open(url, true, &remote) != NULL) abort();
    if (signed_run) mlcc_remote_cache_set_key(remote, g_key);
    mlcc_remote_session_t* s = mlcc_remote_session_create(remote);
    if (s != NULL) {
      uint8_t* out = NULL;
      size_t out_size = 0;
      char why[512];
      mlcc_remote_result_t r =
          mlcc_remote_cache_get(s, kKey, kSym, &out, &out_size, why, sizeof(why));
      // A hit is an ELF object that defines the symbol (remote_cache.h).
      if (r == MLCC_REMOTE_HIT && (out_size < 4 || memcmp(out, "\x7f" "ELF", 4) != 0)) abort();
      if (r == MLCC_REMOTE_HIT) check_objects(out, out_size);
      free(out);
      mlcc_remote_session_destroy(s);
    }
    mlcc_remote_cache_close(remote);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_objects(data, size);
  if (size > 56) check_objects(data + 56, size - 56);
  check_action_result(data, size);
  check_local(data, size);
  if (size >= 5 && memcmp(data, "HTTP/", 5) == 0) check_remote(data, size);
  return 0;
}

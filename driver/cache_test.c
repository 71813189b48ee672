// SPDX-License-Identifier: Apache-2.0
// Tests for driver/cache.c and the ActionResult encoding of
// driver/remote_cache.c. Every cache lives in a private mkdtemp folder and
// the environment is pointed there: the user's ~/.cache is never touched.
#include "driver/cache.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver/remote_cache.h"
#include "test.h"

static char g_root[256];

static const char kKeyA[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static const char kKeyB[] = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

static void path_of(const char* dir, const char* key, char* out, size_t n) {
  snprintf(out, n, "%s/%.2s/%s", dir, key, key + 2);
}

static void make_dir(const char* name, char* out, size_t n) {
  snprintf(out, n, "%s/%s", g_root, name);
}

static void test_parse_size(void) {
  uint64_t v = 0;
  CHECK_OK(mlcc_cache_parse_size("0", &v));
  CHECK_EQ_INT(v, 0);
  CHECK_OK(mlcc_cache_parse_size("1234", &v));
  CHECK_EQ_INT(v, 1234);
  CHECK_OK(mlcc_cache_parse_size("5G", &v));
  CHECK(v == 5ull << 30);
  CHECK_OK(mlcc_cache_parse_size("500M", &v));
  CHECK(v == 500ull << 20);
  CHECK_OK(mlcc_cache_parse_size("64KiB", &v));
  CHECK_EQ_INT(v, 64 << 10);
  CHECK_OK(mlcc_cache_parse_size("2t", &v));
  CHECK(v == 2ull << 40);
  CHECK_STATUS(mlcc_cache_parse_size("", &v), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_parse_size("G", &v), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_parse_size("-1", &v), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_parse_size("5Q", &v), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_parse_size("99999999999999999999999", &v),
               MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_parse_size("2000000000T", &v), MLCC_STATUS_INVALID_ARGUMENT);
  char buf[32];
  mlcc_cache_format_size(812, buf, sizeof(buf));
  CHECK_STREQ(buf, "812 B");
  mlcc_cache_format_size(5ull << 30, buf, sizeof(buf));
  CHECK_STREQ(buf, "5.0 GiB");
}

static void test_resolve(void) {
  char* dir = NULL;
  setenv("MLCC_CACHE_DIR", "/x/env", 1);
  CHECK_OK(mlcc_cache_resolve_dir("/x/flag", &dir));
  CHECK_STREQ(dir, "/x/flag");
  free(dir);
  CHECK_OK(mlcc_cache_resolve_dir(NULL, &dir));
  CHECK_STREQ(dir, "/x/env");
  free(dir);
  setenv("MLCC_CACHE_DIR", "", 1);
  setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  CHECK_OK(mlcc_cache_resolve_dir(NULL, &dir));
  CHECK_STREQ(dir, "/x/xdg/mlcc");
  free(dir);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/x/home", 1);
  CHECK_OK(mlcc_cache_resolve_dir(NULL, &dir));
  CHECK_STREQ(dir, "/x/home/.cache/mlcc");
  free(dir);
  unsetenv("HOME");
  CHECK_STATUS(mlcc_cache_resolve_dir(NULL, &dir), MLCC_STATUS_NOT_FOUND);
  CHECK_STATUS(mlcc_cache_resolve_dir("", &dir), MLCC_STATUS_INVALID_ARGUMENT);
  uint64_t max = 0;
  setenv("MLCC_CACHE_MAXSIZE", "10M", 1);
  CHECK_OK(mlcc_cache_resolve_max_size(NULL, &max));
  CHECK(max == 10ull << 20);
  CHECK_OK(mlcc_cache_resolve_max_size("1K", &max));
  CHECK_EQ_INT(max, 1024);
  setenv("MLCC_CACHE_MAXSIZE", "junk", 1);
  CHECK_STATUS(mlcc_cache_resolve_max_size(NULL, &max), MLCC_STATUS_INVALID_ARGUMENT);
  unsetenv("MLCC_CACHE_MAXSIZE");
  CHECK_OK(mlcc_cache_resolve_max_size(NULL, &max));
  CHECK(max == MLCC_CACHE_DEFAULT_MAX_SIZE);
  // Keep the rest of the process pointed at the private root.
  setenv("HOME", g_root, 1);
  setenv("MLCC_CACHE_DIR", g_root, 1);
}

static void test_store_lookup(void) {
  char dir[300];
  make_dir("a/b/cache", dir, sizeof(dir));  // created with its parents
  mlcc_cache_t* c = NULL;
  CHECK_OK(mlcc_cache_open(dir, 0, &c));
  if (c == NULL) return;
  uint8_t* data = NULL;
  size_t size = 0;
  char why[256];
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyA, &data, &size, why, sizeof(why)), MLCC_CACHE_MISS);
  CHECK(strstr(why, "no entry 01/23456789") != NULL);
  const char payload[] = "\x7f" "ELF pretend object bytes";
  CHECK_OK(mlcc_cache_store(c, kKeyA, payload, sizeof(payload)));
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyA, &data, &size, why, sizeof(why)), MLCC_CACHE_HIT);
  CHECK_EQ_INT(size, sizeof(payload));
  CHECK(data != NULL && memcmp(data, payload, sizeof(payload)) == 0);
  free(data);
  // An empty payload is a valid entry too.
  CHECK_OK(mlcc_cache_store(c, kKeyB, "", 0));
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyB, &data, &size, NULL, 0), MLCC_CACHE_HIT);
  CHECK_EQ_INT(size, 0);
  free(data);
  CHECK_STATUS(mlcc_cache_store(c, "not-a-key", payload, 4), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(mlcc_cache_lookup(c, "ABC", &data, &size, why, sizeof(why)), MLCC_CACHE_MISS);
  char p[400];
  path_of(dir, kKeyA, p, sizeof(p));
  CHECK_OK(mlcc_cache_verify_entry_file(p, kKeyA));
  CHECK_STATUS(mlcc_cache_verify_entry_file(p, kKeyB), MLCC_STATUS_INVALID_MODEL);
  mlcc_cache_usage_t u;
  CHECK_OK(mlcc_cache_scan(dir, &u));
  CHECK_EQ_INT(u.entries, 2);
  CHECK_EQ_INT(u.temporaries, 0);
  CHECK_EQ_INT(u.bytes, (56 + 32) * 2 + sizeof(payload));
  mlcc_cache_close(c);
  mlcc_cache_counters_t n;
  CHECK_OK(mlcc_cache_read_counters(dir, &n));
  CHECK_EQ_INT(n.hits, 2);
  CHECK_EQ_INT(n.misses, 2);
  CHECK_EQ_INT(n.stores, 2);
}

// Writes |bytes| over the entry file of |key|.
static void overwrite(const char* dir, const char* key, const void* bytes, size_t n) {
  char p[400];
  path_of(dir, key, p, sizeof(p));
  FILE* f = fopen(p, "wb");
  CHECK(f != NULL);
  if (f == NULL) return;
  fwrite(bytes, 1, n, f);
  fclose(f);
}

static size_t read_entry(const char* dir, const char* key, uint8_t* buf, size_t cap) {
  char p[400];
  path_of(dir, key, p, sizeof(p));
  FILE* f = fopen(p, "rb");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  return n;
}

static void expect_damaged(mlcc_cache_t* c, const char* key, const char* words) {
  uint8_t* data = NULL;
  size_t size = 0;
  char why[400];
  CHECK_EQ_INT(mlcc_cache_lookup(c, key, &data, &size, why, sizeof(why)), MLCC_CACHE_DAMAGED);
  CHECK(data == NULL);
  if (strstr(why, words) == NULL) fprintf(stderr, "why: %s (want %s)\n", why, words);
  CHECK(strstr(why, words) != NULL);
}

static void test_damaged(void) {
  char dir[300];
  make_dir("damaged", dir, sizeof(dir));
  mlcc_cache_t* c = NULL;
  CHECK_OK(mlcc_cache_open(dir, 0, &c));
  if (c == NULL) return;
  uint8_t good[4096];
  char payload[1000];
  for (size_t i = 0; i < sizeof(payload); ++i) payload[i] = (char)(i * 7);
  CHECK_OK(mlcc_cache_store(c, kKeyA, payload, sizeof(payload)));
  size_t n = read_entry(dir, kKeyA, good, sizeof(good));
  CHECK_EQ_INT(n, 56 + sizeof(payload) + 32);
  uint8_t bad[4096];

  memcpy(bad, good, n);
  bad[56 + 500] ^= 1;
  overwrite(dir, kKeyA, bad, n);
  expect_damaged(c, kKeyA, "checksum mismatch");
  memcpy(bad, good, n);
  bad[n - 1] ^= 0x80;  // the checksum itself
  overwrite(dir, kKeyA, bad, n);
  expect_damaged(c, kKeyA, "checksum mismatch");
  overwrite(dir, kKeyA, good, n - 1);
  expect_damaged(c, kKeyA, "truncated");
  overwrite(dir, kKeyA, good, 20);
  expect_damaged(c, kKeyA, "truncated");
  overwrite(dir, kKeyA, good, 0);
  expect_damaged(c, kKeyA, "truncated");
  memcpy(bad, good, n);
  bad[n] = 0;
  overwrite(dir, kKeyA, bad, n + 1);
  expect_damaged(c, kKeyA, "padded");
  memcpy(bad, good, n);
  bad[0] = 'X';
  overwrite(dir, kKeyA, bad, n);
  expect_damaged(c, kKeyA, "bad magic");
  memcpy(bad, good, n);
  bad[8] = 2;
  overwrite(dir, kKeyA, bad, n);
  expect_damaged(c, kKeyA, "format version 2");
  memcpy(bad, good, n);
  bad[20] ^= 1;  // the key in the header
  overwrite(dir, kKeyA, bad, n);
  expect_damaged(c, kKeyA, "foreign entry");
  memcpy(bad, good, n);
  bad[48 + 7] = 0x7f;  // an absurd payload size
  overwrite(dir, kKeyA, bad, n);
  expect_damaged(c, kKeyA, "truncated or padded");
  // A directory where the entry should be: damaged, not a crash.
  char p[400];
  path_of(dir, kKeyA, p, sizeof(p));
  unlink(p);
  CHECK(mkdir(p, 0700) == 0);
  expect_damaged(c, kKeyA, "not a regular file");
  rmdir(p);
  // The store replaces whatever is there.
  CHECK_OK(mlcc_cache_store(c, kKeyA, payload, sizeof(payload)));
  uint8_t* data = NULL;
  size_t size = 0;
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyA, &data, &size, NULL, 0), MLCC_CACHE_HIT);
  free(data);
  mlcc_cache_close(c);
  mlcc_cache_counters_t k;
  CHECK_OK(mlcc_cache_read_counters(dir, &k));
  CHECK_EQ_INT(k.damaged, 11);
}

static void test_trim_and_clear(void) {
  char dir[300];
  make_dir("trim", dir, sizeof(dir));
  mlcc_cache_t* c = NULL;
  CHECK_OK(mlcc_cache_open(dir, 0, &c));
  if (c == NULL) return;
  char keys[6][65];
  char payload[912];  // 1000-byte entries
  memset(payload, 'x', sizeof(payload));
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 64; ++j) keys[i][j] = "0123456789abcdef"[(i * 5 + j) % 16];
    keys[i][64] = '\0';
    CHECK_OK(mlcc_cache_store(c, keys[i], payload, sizeof(payload)));
    // Ages: entry i is i minutes old, except entry 5 which is the oldest.
    char p[400];
    path_of(dir, keys[i], p, sizeof(p));
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= i == 5 ? 3600 : 60 * i;
    t[1] = t[0];
    CHECK(utimensat(AT_FDCWD, p, t, 0) == 0);
  }
  // A stale temporary (an hour and more old) and a fresh one.
  char stale[400], fresh[400];
  snprintf(stale, sizeof(stale), "%s/%.2s/.tmp-stale", dir, keys[0]);
  snprintf(fresh, sizeof(fresh), "%s/%.2s/.tmp-fresh", dir, keys[0]);
  FILE* f = fopen(stale, "wb");
  if (f) fclose(f);
  f = fopen(fresh, "wb");
  if (f) fclose(f);
  struct timespec old[2];
  clock_gettime(CLOCK_REALTIME, &old[0]);
  old[0].tv_sec -= 7200;
  old[1] = old[0];
  CHECK(utimensat(AT_FDCWD, stale, old, 0) == 0);
  mlcc_cache_usage_t u;
  CHECK_OK(mlcc_cache_scan(dir, &u));
  CHECK_EQ_INT(u.entries, 6);
  CHECK_EQ_INT(u.bytes, 6000);
  CHECK_EQ_INT(u.temporaries, 2);
  // A hit refreshes entry 4 (then the youngest); evict down to 3000 bytes.
  uint8_t* data = NULL;
  size_t size = 0;
  CHECK_EQ_INT(mlcc_cache_lookup(c, keys[4], &data, &size, NULL, 0), MLCC_CACHE_HIT);
  free(data);
  uint64_t evicted = 0;
  CHECK_OK(mlcc_cache_trim(dir, 3000, &evicted));
  CHECK_EQ_INT(evicted, 3);
  char p[400];
  bool present[6];
  for (int i = 0; i < 6; ++i) {
    path_of(dir, keys[i], p, sizeof(p));
    present[i] = access(p, F_OK) == 0;
  }
  // Oldest first: 5 (1 h), 3 (3 min), 2 (2 min) go; 4 was used just now.
  CHECK(!present[5] && !present[3] && !present[2]);
  CHECK(present[0] && present[1] && present[4]);
  CHECK(access(stale, F_OK) != 0);  // removed as abandoned
  CHECK(access(fresh, F_OK) == 0);  // maybe being written right now: kept
  // The limit at close: 0 = unlimited keeps everything; a small one trims to 90%.
  mlcc_cache_close(c);
  CHECK_OK(mlcc_cache_open(dir, 2000, &c));
  usleep(30000);  // file times tick coarsely: make this hit the newest use
  CHECK_EQ_INT(mlcc_cache_lookup(c, keys[0], &data, &size, NULL, 0), MLCC_CACHE_HIT);
  free(data);
  mlcc_cache_close(c);
  CHECK_OK(mlcc_cache_scan(dir, &u));
  CHECK_EQ_INT(u.entries, 1);  // 1800 bytes allowed: only the just-used entry stays
  path_of(dir, keys[0], p, sizeof(p));
  CHECK(access(p, F_OK) == 0);
  uint64_t removed = 0;
  CHECK_OK(mlcc_cache_clear(dir, &removed));
  CHECK_EQ_INT(removed, 1);
  CHECK_OK(mlcc_cache_scan(dir, &u));
  CHECK_EQ_INT(u.entries + u.temporaries, 0);
  mlcc_cache_counters_t k;
  CHECK_OK(mlcc_cache_read_counters(dir, &k));
  CHECK_EQ_INT(k.hits, 0);
  // Missing folders are empty caches.
  char none[300];
  make_dir("does-not-exist", none, sizeof(none));
  CHECK_OK(mlcc_cache_scan(none, &u));
  CHECK_EQ_INT(u.entries, 0);
  CHECK_OK(mlcc_cache_clear(none, &removed));
  FILE* out = tmpfile();
  CHECK_OK(mlcc_cache_print_stats(none, 1 << 20, out));
  if (out) fclose(out);
}

static void test_open_failure(void) {
  char file[300], dir[400];
  make_dir("plain-file", file, sizeof(file));
  FILE* f = fopen(file, "wb");
  if (f) fclose(f);
  snprintf(dir, sizeof(dir), "%s/cache", file);
  mlcc_cache_t* c = NULL;
  mlcc_status_t s = mlcc_cache_open(dir, 0, &c);
  CHECK(s != NULL && c == NULL);
  mlcc_status_free(s);
}

static void test_action_result(void) {
  const char* hash = kKeyB;
  uint8_t* buf = NULL;
  size_t n = 0;
  CHECK_OK(mlcc_remote_encode_action_result(hash, 4242, &buf, &n));
  // Field 2 (output_files), length-delimited, first: tag 0x12.
  CHECK(n > 70 && buf[0] == 0x12);
  char got[65];
  uint64_t size = 0;
  CHECK_OK(mlcc_remote_decode_action_result(buf, n, got, &size));
  CHECK_STREQ(got, hash);
  CHECK_EQ_INT(size, 4242);
  CHECK_STATUS(mlcc_remote_decode_action_result(buf, n - 3, got, &size),
               MLCC_STATUS_INVALID_MODEL);
  free(buf);
  // An ActionResult with no files, and one with a bad digest.
  const uint8_t empty[] = {0x20, 0x00};  // exit_code = 0
  CHECK_STATUS(mlcc_remote_decode_action_result(empty, sizeof(empty), got, &size),
               MLCC_STATUS_INVALID_MODEL);
  CHECK_OK(mlcc_remote_encode_action_result("zz", 1, &buf, &n));
  CHECK_STATUS(mlcc_remote_decode_action_result(buf, n, got, &size), MLCC_STATUS_INVALID_MODEL);
  free(buf);
  mlcc_remote_cache_t* r = NULL;
  CHECK_STATUS(mlcc_remote_cache_open("ftp://host/x", false, &r), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK(r == NULL);
}

int main(void) {
  snprintf(g_root, sizeof(g_root), "%s/mlcc-cache-test-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (mkdtemp(g_root) == NULL) {
    fprintf(stderr, "cannot create a temporary folder\n");
    return 1;
  }
  RUN(test_parse_size);
  RUN(test_resolve);
  RUN(test_store_lookup);
  RUN(test_damaged);
  RUN(test_trim_and_clear);
  RUN(test_open_failure);
  RUN(test_action_result);
  char cmd[400];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_root);
  return TEST_EXIT();
}

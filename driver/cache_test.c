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

#include "driver/cache_explain.h"
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

// Reads the whole of |f| (rewound) into |buf|.
static void slurp(FILE* f, char* buf, size_t n) {
  rewind(f);
  size_t got = fread(buf, 1, n - 1, f);
  buf[got] = '\0';
}

static void write_text(const char* path, const char* text) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

static void test_config(void) {
  char dir[300], conf[400], out[2048];
  make_dir("conf", dir, sizeof(dir));
  snprintf(conf, sizeof(conf), "%s/mlcc.conf", dir);
  unsetenv("MLCC_CACHE_MAXSIZE");
  mlcc_cache_config_t c;
  CHECK_OK(mlcc_cache_config_load(dir, NULL, NULL, &c));  // no folder, no file: defaults
  CHECK(c.max_size == MLCC_CACHE_DEFAULT_MAX_SIZE && !c.read_only);
  CHECK_EQ_INT(c.remote_timeout_ms, 5000);
  CHECK_EQ_INT(c.remote_budget_ms, 60000);
  CHECK_EQ_INT(c.remote_max_errors, 3);
  FILE* f = tmpfile();
  if (f == NULL) return;
  CHECK_OK(mlcc_cache_config_set(dir, "max_size=2M", f));
  CHECK_OK(mlcc_cache_config_set(dir, "remote_timeout=0.25", f));
  CHECK_OK(mlcc_cache_config_set(dir, "read_only=yes", f));
  CHECK_OK(mlcc_cache_config_set(dir, "read_only=", f));  // unset
  CHECK_OK(mlcc_cache_config_set(dir, "max_size=3M", f));  // replaced in place
  slurp(f, out, sizeof(out));
  char want[2048];
  snprintf(want, sizeof(want),
           "Set max_size = 2M in %s\nSet remote_timeout = 0.25 in %s\nSet read_only = yes in "
           "%s\nUnset read_only in %s\nSet max_size = 3M in %s\n",
           conf, conf, conf, conf, conf);
  CHECK_STREQ(out, want);
  fclose(f);
  FILE* cf = fopen(conf, "rb");
  if (cf != NULL) {
    slurp(cf, out, sizeof(out));
    fclose(cf);
  }
  CHECK_STREQ(out,
              "# mlcc kernel cache configuration (mlcc --set-config=KEY=VALUE)\n"
              "max_size = 3M\nremote_timeout = 0.25\n");
  CHECK_OK(mlcc_cache_config_load(dir, NULL, NULL, &c));
  CHECK(c.max_size == 3ull << 20);
  CHECK_EQ_INT(c.remote_timeout_ms, 250);
  CHECK_EQ_INT(c.origin[MLCC_CACHE_CONF_MAX_SIZE], MLCC_CACHE_CONF_FILE);
  // The environment wins over the file, the command line over both.
  setenv("MLCC_CACHE_MAXSIZE", "7M", 1);
  setenv("MLCC_REMOTE_BUDGET", "0", 1);
  CHECK_OK(mlcc_cache_config_load(dir, NULL, NULL, &c));
  CHECK(c.max_size == 7ull << 20);
  CHECK_EQ_INT(c.remote_budget_ms, 0);
  CHECK_EQ_INT(c.origin[MLCC_CACHE_CONF_MAX_SIZE], MLCC_CACHE_CONF_ENVIRONMENT);
  CHECK_OK(mlcc_cache_config_load(dir, "1K", NULL, &c));
  CHECK_EQ_INT(c.max_size, 1024);
  CHECK_EQ_INT(c.origin[MLCC_CACHE_CONF_MAX_SIZE], MLCC_CACHE_CONF_COMMAND_LINE);
  f = tmpfile();
  if (f != NULL) {
    mlcc_cache_config_print(&c, dir, f);
    slurp(f, out, sizeof(out));
    fclose(f);
    snprintf(want, sizeof(want),
             "(command line) max_size = 1K\n(default) read_only = false\n"
             "(environment) remote_budget = 0\n(default) remote_max_errors = 3\n"
             "(%s/mlcc.conf) remote_timeout = 0.25\n",
             dir);
    CHECK_STREQ(out, want);
  }
  setenv("MLCC_REMOTE_TIMEOUT", "soon", 1);
  CHECK_STATUS(mlcc_cache_config_load(dir, NULL, NULL, &c), MLCC_STATUS_INVALID_ARGUMENT);
  unsetenv("MLCC_REMOTE_TIMEOUT");
  unsetenv("MLCC_REMOTE_BUDGET");
  unsetenv("MLCC_CACHE_MAXSIZE");
  // Bad assignments are usage errors; a bad line in the file is ignored.
  f = tmpfile();
  if (f == NULL) return;
  CHECK_STATUS(mlcc_cache_config_set(dir, "max_size", f), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_config_set(dir, "nope=1", f), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_config_set(dir, "remote_timeout=0", f), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_config_set(dir, "remote_timeout=1.5s", f),
               MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_cache_config_set(dir, "remote_max_errors=0", f),
               MLCC_STATUS_INVALID_ARGUMENT);
  write_text(conf, "max_size = 4M\nwhat\nmax_size = huge\nremote_max_errors=9\n");
  CHECK_OK(mlcc_cache_config_load(dir, NULL, f, &c));
  CHECK(c.max_size == 4ull << 20);
  CHECK_EQ_INT(c.remote_max_errors, 9);
  slurp(f, out, sizeof(out));
  CHECK(strstr(out, "mlcc.conf:2: ignoring this line") != NULL);
  CHECK(strstr(out, "mlcc.conf:3: ignoring this line: invalid size 'huge'") != NULL);
  fclose(f);
}

static void test_special_files(void) {
  char dir[300], p[400], stats[400], target[400];
  make_dir("special", dir, sizeof(dir));
  mlcc_cache_t* c = NULL;
  CHECK_OK(mlcc_cache_open(dir, 0, &c));
  if (c == NULL) return;
  CHECK_OK(mlcc_cache_store(c, kKeyA, "\x7f" "ELF", 4));
  CHECK_OK(mlcc_cache_store(c, kKeyB, "\x7f" "ELF", 4));
  // A FIFO at an entry's path: a damaged entry at once, never a blocked open.
  path_of(dir, kKeyA, p, sizeof(p));
  unlink(p);
  CHECK(mkfifo(p, 0666) == 0);
  uint8_t* data = NULL;
  size_t size = 0;
  char why[256];
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyA, &data, &size, why, sizeof(why)), MLCC_CACHE_DAMAGED);
  CHECK(strstr(why, "not a regular file") != NULL);
  CHECK_OK(mlcc_cache_store(c, kKeyA, "\x7f" "ELF", 4));  // replaces the FIFO
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyA, &data, &size, why, sizeof(why)), MLCC_CACHE_HIT);
  free(data);
  // A symlink at an entry's path is not followed.
  path_of(dir, kKeyB, p, sizeof(p));
  snprintf(target, sizeof(target), "%s/elsewhere", dir);
  CHECK(rename(p, target) == 0);
  CHECK(symlink(target, p) == 0);
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyB, &data, &size, why, sizeof(why)), MLCC_CACHE_DAMAGED);
  CHECK(strstr(why, "symbolic link") != NULL);
  mlcc_cache_close(c);
  // A FIFO as the stats file: no counters, no hang.
  snprintf(stats, sizeof(stats), "%s/stats", dir);
  unlink(stats);
  CHECK(mkfifo(stats, 0666) == 0);
  mlcc_cache_counters_t n;
  CHECK_OK(mlcc_cache_read_counters(dir, &n));
  CHECK_EQ_INT(n.hits, 0);
  CHECK_OK(mlcc_cache_open(dir, 0, &c));
  if (c == NULL) return;
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyA, &data, &size, NULL, 0), MLCC_CACHE_HIT);
  free(data);
  mlcc_cache_close(c);  // the stats update fails quietly
  mlcc_status_t s = mlcc_cache_zero_stats(dir);
  CHECK(s != NULL);
  mlcc_status_free(s);
}

static void test_read_only(void) {
  char dir[300], p[400];
  make_dir("ro", dir, sizeof(dir));
  mlcc_cache_t* c = NULL;
  CHECK_OK(mlcc_cache_open(dir, 0, &c));
  if (c == NULL) return;
  CHECK_OK(mlcc_cache_store(c, kKeyA, "\x7f" "ELF", 4));
  mlcc_cache_close(c);
  path_of(dir, kKeyA, p, sizeof(p));
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  CHECK(utimensat(AT_FDCWD, p, old, 0) == 0);
  mlcc_cache_counters_t before, after;
  CHECK_OK(mlcc_cache_read_counters(dir, &before));
  mlcc_cache_config_t conf;
  CHECK_OK(mlcc_cache_config_load(NULL, NULL, NULL, &conf));
  conf.read_only = true;
  CHECK_OK(mlcc_cache_open_with(dir, &conf, &c));
  if (c == NULL) return;
  CHECK(mlcc_cache_is_read_only(c));
  uint8_t* data = NULL;
  size_t size = 0;
  CHECK_EQ_INT(mlcc_cache_lookup(c, kKeyA, &data, &size, NULL, 0), MLCC_CACHE_HIT);
  free(data);
  CHECK_OK(mlcc_cache_store(c, kKeyB, "\x7f" "ELF", 4));  // a no-op
  mlcc_cache_record_put(c, kKeyB, "node\tx\n");
  mlcc_cache_close(c);
  path_of(dir, kKeyB, p, sizeof(p));
  CHECK(access(p, F_OK) != 0);
  path_of(dir, kKeyA, p, sizeof(p));
  struct stat st;
  CHECK(stat(p, &st) == 0 && st.st_mtim.tv_sec == 1000);  // no LRU refresh
  CHECK_OK(mlcc_cache_read_counters(dir, &after));
  CHECK(memcmp(&before, &after, sizeof(before)) == 0);  // no stats written
  char rec[400];
  snprintf(rec, sizeof(rec), "%s/explain", dir);
  CHECK(access(rec, F_OK) != 0);
  // A read-only cache that does not exist is not created.
  char missing[300];
  make_dir("ro-missing", missing, sizeof(missing));
  CHECK_STATUS(mlcc_cache_open_with(missing, &conf, &c), MLCC_STATUS_NOT_FOUND);
  CHECK(access(missing, F_OK) != 0);
}

static void test_zero_cleanup_tsv(void) {
  char dir[300], tmp[400];
  make_dir("admin", dir, sizeof(dir));
  mlcc_cache_t* c = NULL;
  CHECK_OK(mlcc_cache_open(dir, 0, &c));
  if (c == NULL) return;
  char payload[1000];
  memset(payload, 'x', sizeof(payload));
  CHECK_OK(mlcc_cache_store(c, kKeyA, payload, sizeof(payload)));
  CHECK_OK(mlcc_cache_store(c, kKeyB, payload, sizeof(payload)));
  mlcc_cache_count_remote(c, 2, 1, 1500);
  mlcc_cache_close(c);
  mlcc_cache_counters_t n;
  CHECK_OK(mlcc_cache_read_counters(dir, &n));
  CHECK_EQ_INT(n.stores, 2);
  CHECK_EQ_INT(n.remote_errors, 2);
  CHECK_EQ_INT(n.remote_rejected, 1);
  CHECK_EQ_INT(n.remote_wait_ms, 1500);
  FILE* f = tmpfile();
  if (f == NULL) return;
  CHECK_OK(mlcc_cache_print_stats(dir, 0, f));
  char out[4096];
  slurp(f, out, sizeof(out));
  CHECK(strstr(out, "Remote errors:      2\n") != NULL);
  CHECK(strstr(out, "Remote rejected:    1\n") != NULL);
  CHECK(strstr(out, "Remote wait:        1.5 s\n") != NULL);
  fclose(f);
  CHECK_OK(mlcc_cache_zero_stats(dir));
  CHECK_OK(mlcc_cache_read_counters(dir, &n));
  CHECK(n.stores == 0 && n.remote_errors == 0 && n.remote_wait_ms == 0);
  CHECK(n.zeroed_time != 0 && (time_t)n.zeroed_time <= time(NULL));
  // A stale temporary goes; the limit evicts the older entry.
  snprintf(tmp, sizeof(tmp), "%s/01/.tmp-old", dir);
  write_text(tmp, "partial");
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  CHECK(utimensat(AT_FDCWD, tmp, old, 0) == 0);
  char pa[400];
  path_of(dir, kKeyA, pa, sizeof(pa));
  CHECK(utimensat(AT_FDCWD, pa, old, 0) == 0);
  uint64_t evicted = 0, temporaries = 0;
  CHECK_OK(mlcc_cache_cleanup(dir, 2000, &evicted, &temporaries));
  CHECK_EQ_INT(evicted, 1);
  CHECK_EQ_INT(temporaries, 1);
  CHECK(access(pa, F_OK) != 0 && access(tmp, F_OK) != 0);
  CHECK_OK(mlcc_cache_read_counters(dir, &n));
  CHECK_EQ_INT(n.evictions, 1);
  f = tmpfile();
  if (f == NULL) return;
  CHECK_OK(mlcc_cache_print_stats_tsv(dir, 2000, f));
  slurp(f, out, sizeof(out));
  fclose(f);
  char want[1024];
  snprintf(want, sizeof(want),
           "stats_zeroed_timestamp\t%llu\nlocal_hits\t0\nremote_hits\t0\nmisses\t0\n"
           "damaged\t0\nstores\t0\nevictions\t1\nremote_errors\t0\nremote_rejected\t0\n"
           "remote_wait_ms\t0\nrejected_objects\t0\nentries\t1\ncache_size_bytes\t%d\nmax_size_bytes\t2000\n"
           "temporaries\t0\n",
           (unsigned long long)n.zeroed_time, 56 + 32 + 1000);
  CHECK_STREQ(out, want);
}

static void test_redact_and_credentials(void) {
  char buf[200];
  mlcc_remote_redact_url("http://alice:s3cret@127.0.0.1:8080/inst", buf, sizeof(buf));
  CHECK_STREQ(buf, "http://127.0.0.1:8080/inst");
  mlcc_remote_redact_url("https://tok@h/a@b", buf, sizeof(buf));  // '@' in the path stays
  CHECK_STREQ(buf, "https://h/a@b");
  mlcc_remote_redact_url("http://h:1/x", buf, sizeof(buf));
  CHECK_STREQ(buf, "http://h:1/x");
  mlcc_remote_redact_url("ftp://u:p@x", buf, sizeof(buf));
  CHECK_STREQ(buf, "ftp://x");
  mlcc_remote_cache_t* r = NULL;
  mlcc_status_t s = mlcc_remote_cache_open("ftp://alice:s3cret@h/x", false, &r);
  CHECK(s != NULL && strstr(mlcc_status_message(s), "s3cret") == NULL);
  mlcc_status_free(s);
#ifdef MLCC_HAVE_CURL
  CHECK_OK(mlcc_remote_cache_open("http://al%40ice:p%3Aw@127.0.0.1:9/ci/", true, &r));
  if (r != NULL) {
    CHECK_STREQ(mlcc_remote_cache_url(r), "http://127.0.0.1:9/ci");
    CHECK(mlcc_remote_cache_read_only(r) && !mlcc_remote_cache_disabled(r));
    CHECK(mlcc_remote_cache_disabled_reason(r) == NULL);
    mlcc_remote_cache_close(r);
  }
#endif
}

static void test_explain_diff(void) {
  static const char base[] =
      "node\tconv_1\nops\tConv+Relu\ntriple\tx86_64-linux-gnu\ncpu\tx86-64-v3\nfeatures\t\n"
      "opt\t2\nslot\tinput 0\tfloat32\t[1,3,16,16]\nslot\tinput 1\tfloat32\t[8,3,3,3]\n"
      "slot\toutput 0\tfloat32\t[1,8,16,16]\nattr\tpads\t00aa\nattr\tnode 1 alpha\t11bb\n"
      "kernel_key\t" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
      "store_key\t" "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\n";
  char buf[1024];
  mlcc_cache_explain_diff(NULL, base, buf, sizeof(buf));
  CHECK_STREQ(buf, "no previous entry for this node");
  mlcc_cache_explain_diff(base, base, buf, sizeof(buf));
  CHECK_STREQ(buf, "previous entry for this node (mlcc_k_0123456789abcdef01234567) has the same "
                   "key: the entry was removed (evicted, cleared or damaged)");
  char cur[2048];
  snprintf(cur, sizeof(cur), "%s", base);
  char* p = strstr(cur, "[1,8,16,16]");
  memcpy(p, "[1,8,32,32]", 11);
  p = strstr(cur, "output 0\tfloat32");
  memcpy(p + 9, "float16", 7);
  p = strstr(cur, "x86-64-v3");
  memcpy(p, "skylake\n\n\n", 9);  // "skylake" + an empty line
  p = strstr(cur, "pads\t00aa");
  memcpy(p + 5, "00ab", 4);
  p = strstr(cur, "0123456789abcdef0123");  // kernel_key changes too (it always would)
  p[0] = '9';
  mlcc_cache_explain_diff(base, cur, buf, sizeof(buf));
  CHECK_STREQ(buf, "previous entry for this node (mlcc_k_0123456789abcdef01234567): changed: "
                   "shape (output 0 float32[1,8,16,16] -> float16[1,8,32,32]), dtype (output 0 "
                   "float32 -> float16), attribute (pads), CPU (x86-64-v3 -> skylake)");
  // Only the keys differ: codegen, then the codegen hash.
  snprintf(cur, sizeof(cur), "%s", base);
  p = strstr(cur, "kernel_key\t0");
  p[11] = '9';
  mlcc_cache_explain_diff(base, cur, buf, sizeof(buf));
  CHECK(strstr(buf, "changed: codegen (the code generator's key") != NULL);
  snprintf(cur, sizeof(cur), "%s", base);
  p = strstr(cur, "store_key\tf");
  p[10] = '0';
  mlcc_cache_explain_diff(base, cur, buf, sizeof(buf));
  CHECK(strstr(buf, "changed: codegen hash (another mlcc build") != NULL);
  // Attributes added and removed; another op list.
  snprintf(cur, sizeof(cur), "%s", base);
  p = strstr(cur, "attr\tnode 1 alpha");
  memcpy(p + 5, "node 1 gamma", 12);
  p = strstr(cur, "Conv+Relu");
  memcpy(p, "Conv+Tanh", 9);
  mlcc_cache_explain_diff(base, cur, buf, sizeof(buf));
  CHECK(strstr(buf, "changed: ops (Conv+Relu -> Conv+Tanh), attribute (node 1 gamma added, "
                    "node 1 alpha removed)") != NULL);
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
  RUN(test_config);
  RUN(test_special_files);
  RUN(test_read_only);
  RUN(test_zero_cleanup_tsv);
  RUN(test_redact_and_credentials);
  RUN(test_explain_diff);
  char cmd[400];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_root);
  return TEST_EXIT();
}

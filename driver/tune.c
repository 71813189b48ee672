// SPDX-License-Identifier: Apache-2.0
// Tuning record sets (driver/tune.h): a strict little JSON reader for the
// one schema, the canonical writer and the digest.
#include "driver/tune.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/fsutil.h"
#include "driver/strbuf.h"
#include "ir/ops.h"
#include "targets/kernels/kernels.h"

void mlcc_tune_records_deinit(mlcc_tune_records_t* records) {
  if (records == NULL) return;
  free(records->items);
  memset(records, 0, sizeof(*records));
}

mlcc_status_t mlcc_tune_records_add(mlcc_tune_records_t* records,
                                    const mlcc_tune_record_t* record) {
  for (uint32_t i = 0; i < records->n; ++i) {
    if (strcmp(records->items[i].cpu_key, record->cpu_key) == 0) {
      records->items[i] = *record;
      return mlcc_ok_status();
    }
  }
  if (records->n == records->cap) {
    uint32_t cap = records->cap ? records->cap * 2 : 16;
    mlcc_tune_record_t* grown = realloc(records->items, (size_t)cap * sizeof(*grown));
    if (grown == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    records->items = grown;
    records->cap = cap;
  }
  records->items[records->n++] = *record;
  return mlcc_ok_status();
}

const mlcc_tune_record_t* mlcc_tune_records_find(const mlcc_tune_records_t* records,
                                                 const char* cpu_key, const char* key,
                                                 bool features_fallback) {
  const mlcc_tune_record_t* by_features = NULL;
  for (uint32_t i = 0; i < records->n; ++i) {
    const mlcc_tune_record_t* r = &records->items[i];
    if (strcmp(r->cpu_key, cpu_key) == 0) return r;
    if (features_fallback && strcmp(r->key, key) == 0 &&
        (by_features == NULL || strcmp(r->cpu_key, by_features->cpu_key) < 0)) {
      by_features = r;
    }
  }
  return by_features;
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

typedef struct reader_t {
  const char* p;
  const char* end;
  const char* error;  // first error, static text
} reader_t;

enum { kMaxDepth = 32 };

static bool fail(reader_t* r, const char* why) {
  if (r->error == NULL) r->error = why;
  return false;
}

static void skip_ws(reader_t* r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
    ++r->p;
  }
}

static bool expect(reader_t* r, char c) {
  skip_ws(r);
  if (r->p >= r->end || *r->p != c) return fail(r, "malformed JSON");
  ++r->p;
  return true;
}

static bool peek(reader_t* r, char c) {
  skip_ws(r);
  return r->p < r->end && *r->p == c;
}

// A string into |buf| (NUL-terminated; |cap| 0 discards). Only ASCII
// escapes are accepted.
static bool read_string(reader_t* r, char* buf, size_t cap) {
  if (!expect(r, '"')) return false;
  size_t n = 0;
  while (r->p < r->end && *r->p != '"') {
    unsigned char ch = (unsigned char)*r->p++;
    if (ch < 0x20) return fail(r, "control character in a string");
    if (ch == '\\') {
      if (r->p >= r->end) return fail(r, "malformed JSON");
      char e = *r->p++;
      switch (e) {
        case '"': case '\\': case '/': ch = (unsigned char)e; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
          unsigned v = 0;
          for (int i = 0; i < 4; ++i) {
            if (r->p >= r->end) return fail(r, "malformed JSON");
            char h = *r->p++;
            v <<= 4;
            if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
            else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
            else return fail(r, "malformed \\u escape");
          }
          if (v == 0 || v >= 0x80) return fail(r, "non-ASCII \\u escape");
          ch = (unsigned char)v;
          break;
        }
        default: return fail(r, "malformed escape");
      }
    }
    if (cap > 0) {
      if (n + 1 >= cap) return fail(r, "string too long");
      buf[n] = (char)ch;
    }
    ++n;
  }
  if (r->p >= r->end) return fail(r, "unterminated string");
  ++r->p;
  if (cap > 0) buf[n] = '\0';
  return true;
}

static bool read_int(reader_t* r, int64_t min, int64_t max, int64_t* out) {
  skip_ws(r);
  const char* s = r->p;
  bool neg = false;
  if (s < r->end && *s == '-') {
    neg = true;
    ++s;
  }
  if (s >= r->end || *s < '0' || *s > '9') return fail(r, "expected an integer");
  uint64_t v = 0;
  while (s < r->end && *s >= '0' && *s <= '9') {
    if (v > (uint64_t)INT64_MAX / 10) return fail(r, "integer out of range");
    v = v * 10 + (uint64_t)(*s++ - '0');
    if (v > (uint64_t)INT64_MAX) return fail(r, "integer out of range");
  }
  if (s < r->end && (*s == '.' || *s == 'e' || *s == 'E')) return fail(r, "expected an integer");
  int64_t x = neg ? -(int64_t)v : (int64_t)v;
  if (x < min || x > max) return fail(r, "integer out of range");
  r->p = s;
  *out = x;
  return true;
}

static bool skip_value(reader_t* r, int depth) {
  if (depth > kMaxDepth) return fail(r, "nested too deeply");
  skip_ws(r);
  if (r->p >= r->end) return fail(r, "malformed JSON");
  char c = *r->p;
  if (c == '"') return read_string(r, NULL, 0);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    ++r->p;
    if (peek(r, close)) {
      ++r->p;
      return true;
    }
    for (;;) {
      if (c == '{') {
        if (!read_string(r, NULL, 0) || !expect(r, ':')) return false;
      }
      if (!skip_value(r, depth + 1)) return false;
      if (peek(r, ',')) {
        ++r->p;
        continue;
      }
      return expect(r, close);
    }
  }
  static const char* const words[] = {"true", "false", "null"};
  for (int i = 0; i < 3; ++i) {
    size_t n = strlen(words[i]);
    if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i], n) == 0) {
      r->p += n;
      return true;
    }
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    ++r->p;
    while (r->p < r->end && strchr("0123456789.eE+-", *r->p) != NULL) ++r->p;
    return true;
  }
  return fail(r, "malformed JSON");
}

static bool is_hex64(const char* s) {
  if (strlen(s) != 64) return false;
  for (int i = 0; i < 64; ++i) {
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  }
  return true;
}

static bool read_record(reader_t* r, mlcc_tune_record_t* rec) {
  memset(rec, 0, sizeof(*rec));
  if (!expect(r, '{')) return false;
  bool have_key = false, have_cpu_key = false, have_sched = false, have_version = false;
  if (peek(r, '}')) {
    ++r->p;
    return fail(r, "a record without its fields");
  }
  for (;;) {
    char name[32];
    if (!read_string(r, name, sizeof(name)) || !expect(r, ':')) return false;
    int64_t v = 0;
    if (strcmp(name, "key") == 0) {
      if (!read_string(r, rec->key, sizeof(rec->key))) return false;
      have_key = true;
    } else if (strcmp(name, "cpu_key") == 0) {
      if (!read_string(r, rec->cpu_key, sizeof(rec->cpu_key))) return false;
      have_cpu_key = true;
    } else if (strcmp(name, "triple") == 0) {
      if (!read_string(r, rec->triple, sizeof(rec->triple))) return false;
    } else if (strcmp(name, "cpu") == 0) {
      if (!read_string(r, rec->cpu, sizeof(rec->cpu))) return false;
    } else if (strcmp(name, "features") == 0) {
      if (!read_string(r, rec->features, sizeof(rec->features))) return false;
    } else if (strcmp(name, "op") == 0) {
      if (!read_string(r, rec->op, sizeof(rec->op))) return false;
    } else if (strcmp(name, "space_version") == 0) {
      if (!read_int(r, 0, UINT32_MAX, &v)) return false;
      rec->space_version = (uint32_t)v;
      have_version = true;
    } else if (strcmp(name, "time_ns") == 0) {
      if (!read_int(r, 0, INT64_MAX, &rec->time_ns)) return false;
    } else if (strcmp(name, "default_time_ns") == 0) {
      if (!read_int(r, 0, INT64_MAX, &rec->default_time_ns)) return false;
    } else if (strcmp(name, "sched") == 0) {
      if (!expect(r, '[')) return false;
      for (int p = 0; p < MLCC_SCHED_MAX_PARAMS; ++p) {
        if (p > 0 && !expect(r, ',')) return fail(r, "sched needs 4 integers");
        if (!read_int(r, 0, 1 << 20, &v)) return false;
        rec->sched[p] = (int32_t)v;
      }
      if (!expect(r, ']')) return fail(r, "sched needs 4 integers");
      have_sched = true;
    } else if (!skip_value(r, 2)) {
      return false;
    }
    if (peek(r, ',')) {
      ++r->p;
      continue;
    }
    if (!expect(r, '}')) return false;
    break;
  }
  if (!have_key || !have_cpu_key || !have_sched || !have_version) {
    return fail(r, "a record needs key, cpu_key, space_version and sched");
  }
  if (!is_hex64(rec->key) || !is_hex64(rec->cpu_key)) {
    return fail(r, "a record key is not 64 lowercase hex digits");
  }
  return true;
}

mlcc_status_t mlcc_tune_records_parse(const char* text, size_t size,
                                      mlcc_tune_records_t* records) {
  reader_t r = {text, text + size, NULL};
  mlcc_tune_records_t got = {0};
  mlcc_status_t st = mlcc_ok_status();
  bool format_ok = false, version_ok = false, ok = expect(&r, '{');
  while (ok) {
    char name[32];
    ok = read_string(&r, name, sizeof(name)) && expect(&r, ':');
    if (!ok) break;
    if (strcmp(name, "format") == 0) {
      char f[64];
      ok = read_string(&r, f, sizeof(f));
      if (ok && strcmp(f, MLCC_TUNE_RECORDS_FORMAT) != 0) ok = fail(&r, "another format");
      format_ok = ok;
    } else if (strcmp(name, "version") == 0) {
      int64_t v = 0;
      ok = read_int(&r, 0, INT32_MAX, &v);
      if (ok && v != MLCC_TUNE_RECORDS_VERSION) ok = fail(&r, "another version of the format");
      version_ok = ok;
    } else if (strcmp(name, "records") == 0) {
      ok = expect(&r, '[');
      if (ok && peek(&r, ']')) {
        ++r.p;
      } else {
        while (ok) {
          mlcc_tune_record_t rec;
          ok = read_record(&r, &rec);
          if (!ok) break;
          st = mlcc_tune_records_add(&got, &rec);
          if (!mlcc_status_is_ok(st)) {
            mlcc_tune_records_deinit(&got);
            return st;
          }
          if (peek(&r, ',')) {
            ++r.p;
            continue;
          }
          ok = expect(&r, ']');
          break;
        }
      }
    } else {
      ok = skip_value(&r, 1);
    }
    if (!ok) break;
    if (peek(&r, ',')) {
      ++r.p;
      continue;
    }
    ok = expect(&r, '}');
    break;
  }
  if (ok) {
    skip_ws(&r);
    if (r.p != r.end) ok = fail(&r, "text after the JSON document");
  }
  if (ok && (!format_ok || !version_ok)) {
    ok = fail(&r, "no \"format\": \"" MLCC_TUNE_RECORDS_FORMAT "\", \"version\": 1");
  }
  if (!ok) {
    mlcc_tune_records_deinit(&got);
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "not a tuning record set: %s at byte %zu",
                            r.error ? r.error : "malformed JSON", (size_t)(r.p - text));
  }
  for (uint32_t i = 0; i < got.n; ++i) {
    st = mlcc_tune_records_add(records, &got.items[i]);
    if (!mlcc_status_is_ok(st)) break;
  }
  mlcc_tune_records_deinit(&got);
  return st;
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

static void put_json_string(mlcc_strbuf_t* b, const char* s) {
  mlcc_strbuf_append(b, "\"");
  for (; *s; ++s) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      mlcc_strbuf_appendf(b, "\\%c", ch);
    } else if (ch < 0x20 || ch >= 0x7f) {
      mlcc_strbuf_appendf(b, "\\u%04x", ch >= 0x7f ? '?' : ch);
    } else {
      mlcc_strbuf_appendf(b, "%c", ch);
    }
  }
  mlcc_strbuf_append(b, "\"");
}

static int by_cpu_key(const void* a, const void* b) {
  return strcmp(((const mlcc_tune_record_t*)a)->cpu_key, ((const mlcc_tune_record_t*)b)->cpu_key);
}

char* mlcc_tune_records_format(const mlcc_tune_records_t* records) {
  mlcc_tune_record_t* sorted = calloc(records->n ? records->n : 1, sizeof(*sorted));
  if (sorted == NULL) return NULL;
  if (records->n) memcpy(sorted, records->items, records->n * sizeof(*sorted));
  qsort(sorted, records->n, sizeof(*sorted), by_cpu_key);
  mlcc_strbuf_t b;
  mlcc_strbuf_init(&b);
  mlcc_strbuf_appendf(&b, "{\"format\": \"%s\", \"version\": %d,\n \"records\": [",
                      MLCC_TUNE_RECORDS_FORMAT, MLCC_TUNE_RECORDS_VERSION);
  for (uint32_t i = 0; i < records->n; ++i) {
    const mlcc_tune_record_t* r = &sorted[i];
    mlcc_strbuf_append(&b, i ? ",\n  {" : "\n  {");
    mlcc_strbuf_appendf(&b, "\"key\": \"%s\", \"cpu_key\": \"%s\", \"triple\": ", r->key,
                        r->cpu_key);
    put_json_string(&b, r->triple);
    mlcc_strbuf_append(&b, ", \"cpu\": ");
    put_json_string(&b, r->cpu);
    mlcc_strbuf_append(&b, ", \"features\": ");
    put_json_string(&b, r->features);
    mlcc_strbuf_append(&b, ", \"op\": ");
    put_json_string(&b, r->op);
    mlcc_strbuf_appendf(&b, ", \"space_version\": %" PRIu32 ", \"sched\": [", r->space_version);
    for (int p = 0; p < MLCC_SCHED_MAX_PARAMS; ++p) {
      mlcc_strbuf_appendf(&b, "%s%" PRId32, p ? ", " : "", r->sched[p]);
    }
    mlcc_strbuf_appendf(&b, "], \"time_ns\": %" PRId64 ", \"default_time_ns\": %" PRId64 "}",
                        r->time_ns, r->default_time_ns);
  }
  mlcc_strbuf_append(&b, records->n ? "\n ]}\n" : "]}\n");
  free(sorted);
  return mlcc_strbuf_take(&b);
}

mlcc_status_t mlcc_tune_records_digest(const mlcc_tune_records_t* records, char out_hex[65]) {
  memset(out_hex, 0, 65);
  if (records->n == 0) return mlcc_ok_status();
  char* text = mlcc_tune_records_format(records);
  if (text == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  mlcc_status_t s = mlcc_fs_sha256_buffer(text, strlen(text), out_hex);
  free(text);
  return s;
}

//===----------------------------------------------------------------------===//
// Local cache records and lookup
//===----------------------------------------------------------------------===//

// A record file is small; anything bigger is not one of ours.
enum { kMaxRecordFile = 1 << 16, kMaxRecordSetFile = 64 << 20 };

char* mlcc_tune_cache_path(const char* cache_dir, const char* key_hex) {
  mlcc_strbuf_t b;
  mlcc_strbuf_init(&b);
  mlcc_strbuf_appendf(&b, "%s/tune/%.2s/%s.json", cache_dir, key_hex, key_hex + 2);
  return mlcc_strbuf_take(&b);
}

// Reads a regular file of at most |max| bytes without following a symbolic
// link or blocking on a FIFO. False (and |*why| set) otherwise.
static bool read_small(const char* path, size_t max, char** out, size_t* out_size,
                       const char** why) {
  *out = NULL;
  *out_size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    *why = errno == ENOENT ? "no record" : "unreadable";
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
    close(fd);
    *why = "not a regular file of a record's size";
    return false;
  }
  char* buf = malloc((size_t)st.st_size + 1);
  size_t got = 0;
  while (buf != NULL && got < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (buf == NULL || got != (size_t)st.st_size) {
    free(buf);
    *why = "short read";
    return false;
  }
  buf[got] = '\0';
  *out = buf;
  *out_size = got;
  return true;
}

void mlcc_tune_remote_key(const char* key_hex, char out_hex[65]) {
  char buf[128];
  int n = snprintf(buf, sizeof(buf), "mlcc-tuning-record-v1:%s", key_hex);
  mlcc_status_t s = mlcc_fs_sha256_buffer(buf, (size_t)n, out_hex);
  if (s != NULL) out_hex[0] = '\0';
  mlcc_status_free(s);
}

mlcc_status_t mlcc_tune_cache_store(const char* cache_dir, const mlcc_tune_record_t* record) {
  mlcc_tune_records_t one = {(mlcc_tune_record_t*)record, 1, 1};
  char* text = mlcc_tune_records_format(&one);
  if (text == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  mlcc_status_t s = mlcc_ok_status();
  for (int which = 0; which < 2 && s == NULL; ++which) {
    if (which == 1 && record->features[0] == '\0') break;
    char* path = mlcc_tune_cache_path(cache_dir, which == 0 ? record->cpu_key : record->key);
    char* dir = path ? mlcc_fs_dirname(path) : NULL;
    if (path == NULL || dir == NULL) {
      s = mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      uint32_t n_created = 0;
      s = mlcc_fs_mkdirs(dir, NULL, 0, &n_created);
      if (s == NULL) s = mlcc_fs_write_atomic(path, text, strlen(text));
    }
    free(dir);
    free(path);
  }
  free(text);
  return s;
}

// Calls |fn| on every regular file path under <cache_dir>/tune/<2 hex>/.
static void walk_tune(const char* cache_dir, void (*fn)(const char* path, void* user),
                      void* user) {
  char* root = mlcc_fs_join(cache_dir, "tune");
  if (root == NULL) return;
  DIR* d = opendir(root);
  if (d == NULL) {
    free(root);
    return;
  }
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strlen(e->d_name) != 2 || e->d_name[0] == '.') continue;
    char* sub = mlcc_fs_join(root, e->d_name);
    DIR* sd = sub ? opendir(sub) : NULL;
    struct dirent* f;
    while (sd != NULL && (f = readdir(sd)) != NULL) {
      if (f->d_name[0] == '.') continue;
      char* path = mlcc_fs_join(sub, f->d_name);
      if (path != NULL) fn(path, user);
      free(path);
    }
    if (sd != NULL) closedir(sd);
    free(sub);
  }
  closedir(d);
  free(root);
}

typedef struct count_t {
  uint64_t entries, bytes;
} count_t;

static void count_one(const char* path, void* user) {
  count_t* c = user;
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    c->entries++;
    c->bytes += (uint64_t)st.st_size;
  }
}

void mlcc_tune_cache_count(const char* cache_dir, uint64_t* out_entries, uint64_t* out_bytes) {
  count_t c = {0, 0};
  if (cache_dir != NULL) walk_tune(cache_dir, count_one, &c);
  *out_entries = c.entries;
  *out_bytes = c.bytes;
}

static void remove_one(const char* path, void* user) {
  if (unlink(path) == 0) ++*(uint64_t*)user;
}

uint64_t mlcc_tune_cache_clear(const char* cache_dir) {
  uint64_t n = 0;
  if (cache_dir != NULL) walk_tune(cache_dir, remove_one, &n);
  return n;
}

// Why |r| does not apply to the kernel (NULL: it does).
static const char* record_mismatch(const mlcc_tune_record_t* r, const mlcc_node_t* anchor,
                                   const mlcc_target_t* t, bool exact) {
  const mlcc_sched_space_t* sp = mlcc_sched_space(anchor);
  if (sp == NULL) return "the kernel is not tunable";
  if (r->space_version != sp->version) return "another search-space version";
  if (strcmp(r->triple, t->triple) != 0) return "another target triple";
  if (strcmp(r->features, t->features) != 0) return "other CPU features";
  if (exact && strcmp(r->cpu, t->cpu) != 0) return "another CPU";
  if (!mlcc_sched_valid(anchor, t, r->sched)) return "a schedule outside the current space";
  return NULL;
}

// One source of records (the file, or the cache) for kernel |k|: the
// exact-CPU key, then the features key. Returns the record to apply or NULL.
static bool lookup_in(const mlcc_tune_lookup_t* lk, const mlcc_node_t* anchor,
                      const mlcc_target_t* t, const char* cpu_key, const char* key,
                      const mlcc_tune_records_t* file, uint32_t kernel_index,
                      mlcc_tune_record_t* out) {
  bool features_ok = t->features[0] != '\0';
  for (int exact = 1; exact >= 0; --exact) {
    if (!exact && !features_ok) break;
    const char* want = exact ? cpu_key : key;
    mlcc_tune_record_t rec;
    const char* source = NULL;
    if (file != NULL) {
      const mlcc_tune_record_t* r = exact ? mlcc_tune_records_find(file, cpu_key, key, false)
                                          : mlcc_tune_records_find(file, "", key, true);
      if (r == NULL) continue;
      rec = *r;
      source = "the record file";
    } else {
      char* path = mlcc_tune_cache_path(lk->cache_dir, want);
      if (path == NULL) return false;
      char* text = NULL;
      size_t size = 0;
      const char* why = NULL;
      bool got = read_small(path, kMaxRecordFile, &text, &size, &why);
      free(path);
      bool remote = false;
      if (!got && strcmp(why, "no record") == 0 && lk->remote_fetch != NULL) {
        got = lk->remote_fetch(lk->remote_ctx, want, &text, &size);
        if (!got) why = "no record";
        if (got && size > kMaxRecordFile) {
          free(text);
          got = false;
          why = "a remote record too big";
        }
        remote = got;
      }
      if (!got) {
        if (lk->explain && strcmp(why, "no record") != 0) {
          fprintf(lk->diag, "mlcc: tuning: kernel %u: cache tuning record %s: %s\n",
                  kernel_index, want, why);
        }
        continue;
      }
      mlcc_tune_records_t one = {0};
      mlcc_status_t s = mlcc_tune_records_parse(text, size, &one);
      free(text);
      const mlcc_tune_record_t* r =
          s == NULL ? mlcc_tune_records_find(&one, exact ? cpu_key : "", key, !exact) : NULL;
      if (s != NULL || r == NULL) {
        if (lk->explain) {
          fprintf(lk->diag, "mlcc: tuning: kernel %u: cache tuning record %s is damaged (%s)\n",
                  kernel_index, want, s ? mlcc_status_message(s) : "another key");
        }
        mlcc_status_free(s);
        mlcc_tune_records_deinit(&one);
        continue;
      }
      rec = *r;
      mlcc_tune_records_deinit(&one);
      source = remote ? "the remote cache" : "the kernel cache";
      if (remote && lk->cache_dir != NULL) {
        mlcc_status_t w = mlcc_tune_cache_store(lk->cache_dir, &rec);
        mlcc_status_free(w);  // a local copy is an optimization
      }
    }
    const char* why = record_mismatch(&rec, anchor, t, exact);
    if (why != NULL) {
      char desc[160];
      mlcc_node_describe(anchor, desc, sizeof(desc));
      if (file != NULL || lk->explain) {
        fprintf(lk->diag, "mlcc: %s: kernel %u %s: tuning record from %s ignored: %s (CPU %s, "
                "space version %u)%s\n", lk->explain ? "tuning" : "warning", kernel_index, desc,
                source, why, rec.cpu, rec.space_version, exact ? "" : " [features key]");
      }
      continue;
    }
    *out = rec;
    return true;
  }
  return false;
}

mlcc_status_t mlcc_tune_apply(mlcc_graph_t* graph, const mlcc_codegen_options_t* cg,
                              const mlcc_tune_lookup_t* lookup, mlcc_tune_records_t* out_used,
                              uint32_t* out_applied) {
  *out_applied = 0;
  const mlcc_target_t* t = cg->target;
  for (uint32_t k = 0; k < graph->n_kernels; ++k) {
    mlcc_kernel_t* kern = &graph->kernels[k];
    if (kern->n_nodes == 0) continue;
    mlcc_node_t* anchor = kern->nodes[0];
    if (mlcc_sched_space(anchor) == NULL) continue;
    memset(anchor->sched, 0, sizeof(anchor->sched));
    char cpu_key[65], key[65];
    MLCC_RETURN_IF_ERROR(mlcc_codegen_tune_key(graph, k, cg, true, cpu_key));
    MLCC_RETURN_IF_ERROR(mlcc_codegen_tune_key(graph, k, cg, false, key));
    mlcc_tune_record_t rec;
    bool found = false;
    if (lookup->file != NULL && lookup->file->n > 0) {
      found = lookup_in(lookup, anchor, t, cpu_key, key, lookup->file, k, &rec);
    }
    if (!found && lookup->cache_dir != NULL) {
      found = lookup_in(lookup, anchor, t, cpu_key, key, NULL, k, &rec);
    }
    if (!found) {
      // A record of the same kernel, triple and features for another CPU:
      // never applied to this one (only explained).
      const mlcc_tune_record_t* other =
          lookup->file != NULL ? mlcc_tune_records_find(lookup->file, "", key, true) : NULL;
      if (other != NULL && lookup->explain) {
        fprintf(lookup->diag, "mlcc: tuning: kernel %u (%s): the tuning record for CPU %s is "
                "not applied to CPU %s\n", k, mlcc_op_name(anchor->op), other->cpu, t->cpu);
      }
      if (lookup->explain) {
        fprintf(lookup->diag, "mlcc: tuning: kernel %u (%s): no tuning record (key %.16s): "
                "default schedule\n", k, mlcc_op_name(anchor->op), cpu_key);
      }
      continue;
    }
    memcpy(anchor->sched, rec.sched, sizeof(anchor->sched));
    if (lookup->explain) {
      char desc[96];
      fprintf(lookup->diag, "mlcc: tuning: kernel %u (%s): tuning record %.16s: %s\n", k,
              mlcc_op_name(anchor->op), rec.cpu_key,
              mlcc_sched_format(anchor, rec.sched, desc, sizeof(desc)));
    }
    ++*out_applied;
    if (out_used != NULL) MLCC_RETURN_IF_ERROR(mlcc_tune_records_add(out_used, &rec));
  }
  return mlcc_ok_status();
}

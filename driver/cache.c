// SPDX-License-Identifier: Apache-2.0
// The local kernel cache: see cache.h for the layout and the entry format.
#include "driver/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "driver/build_id.h"
#include "driver/fsutil.h"
#include "driver/strbuf.h"

enum {
  kHeaderSize = 56,
  kTrailerSize = 32,
  kStaleTempSeconds = 3600,
};

static const char kMagic[8] = {'M', 'L', 'C', 'C', 'K', 'O', 'B', 'J'};

struct mlcc_cache_t {
  char* dir;
  uint64_t max_size;
  mode_t file_mode;  // 0666 & ~umask, read once at open
  bool read_only;    // never written (cache.h)
  atomic_uint_fast64_t hits, remote_hits, misses, damaged, stores, rejected;
  atomic_uint_fast64_t remote_errors, remote_rejected, remote_wait_ms;
  atomic_uint tmp_counter;
};

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

static char* xstrdup(const char* s) {
  size_t n = strlen(s) + 1;
  char* d = (char*)malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static char* path_printf(const char* fmt, ...) MLCC_PRINTF(1, 2);
static char* path_printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char* s = (char*)malloc((size_t)n + 1);
  if (s == NULL) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

// Opens |path| for the cache's own use: never follows a symlink at the last
// component, never blocks on a FIFO or device (O_NONBLOCK), and refuses
// anything but a regular file (errno EINVAL then). -1 on failure.
static int open_regular(const char* path, int flags, mode_t mode) {
  int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl != -1) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

static const char* env_nonempty(const char* name) {
  const char* v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

mlcc_status_t mlcc_cache_resolve_dir(const char* option_dir, char** out_dir) {
  *out_dir = NULL;
  const char* v;
  char* dir = NULL;
  if (option_dir != NULL) {
    if (option_dir[0] == '\0') {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "empty directory in --cache-dir");
    }
    dir = xstrdup(option_dir);
  } else if ((v = env_nonempty("MLCC_CACHE_DIR")) != NULL) {
    dir = xstrdup(v);
  } else if ((v = env_nonempty("XDG_CACHE_HOME")) != NULL) {
    dir = path_printf("%s/mlcc", v);
  } else if ((v = env_nonempty("HOME")) != NULL) {
    dir = path_printf("%s/.cache/mlcc", v);
  } else {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND,
                            "no kernel cache directory: set MLCC_CACHE_DIR or HOME, or pass "
                            "--cache-dir");
  }
  if (dir == NULL) return oom();
  *out_dir = dir;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_cache_parse_size(const char* text, uint64_t* out_bytes) {
  *out_bytes = 0;
  const char* p = text;
  if (*p < '0' || *p > '9') goto bad;
  uint64_t v = 0;
  for (; *p >= '0' && *p <= '9'; ++p) {
    if (v > (UINT64_MAX - 9) / 10) goto bad;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  unsigned shift = 0;
  switch (*p) {
    case '\0': break;
    case 'k': case 'K': shift = 10; ++p; break;
    case 'm': case 'M': shift = 20; ++p; break;
    case 'g': case 'G': shift = 30; ++p; break;
    case 't': case 'T': shift = 40; ++p; break;
    case 'b': case 'B': break;
    default: goto bad;
  }
  if (shift != 0 && *p == 'i') ++p;
  if (*p == 'B' || *p == 'b') ++p;
  if (*p != '\0') goto bad;
  if (v > (1ull << 60) >> shift) goto bad;
  *out_bytes = v << shift;
  return mlcc_ok_status();
bad:
  return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                          "invalid size '%s'; expected a number with an optional K, M, G or T "
                          "suffix, e.g. 5G (0 = no limit)",
                          text);
}

mlcc_status_t mlcc_cache_resolve_max_size(const char* option, uint64_t* out_bytes) {
  *out_bytes = MLCC_CACHE_DEFAULT_MAX_SIZE;
  const char* v = option;
  const char* what = "--cache-max-size";
  if (v == NULL) {
    v = env_nonempty("MLCC_CACHE_MAXSIZE");
    what = "$MLCC_CACHE_MAXSIZE";
  }
  if (v == NULL) return mlcc_ok_status();
  mlcc_status_t s = mlcc_cache_parse_size(v, out_bytes);
  if (s != NULL) {
    mlcc_status_t r = mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "%s: %s", what,
                                       mlcc_status_message(s));
    mlcc_status_free(s);
    return r;
  }
  return mlcc_ok_status();
}

void mlcc_cache_format_size(uint64_t bytes, char* buf, size_t buf_size) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) {
    snprintf(buf, buf_size, "%llu B", (unsigned long long)bytes);
    return;
  }
  double v = (double)bytes / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 3) {
    v /= 1024.0;
    ++u;
  }
  snprintf(buf, buf_size, "%.1f %s", v, kUnits[u]);
}

//===----------------------------------------------------------------------===//
// mlcc.conf
//===----------------------------------------------------------------------===//

static mlcc_status_t mkdir_p(const char* dir);
static int open_stats_locked(const char* dir, bool create);

typedef struct conf_key_desc_t {
  const char* name;
  const char* env;
  const char* default_text;
} conf_key_desc_t;

// Sorted by name: --show-config prints in this order.
static const conf_key_desc_t kConfKeys[MLCC_CACHE_CONF_COUNT] = {
    [MLCC_CACHE_CONF_MAX_SIZE] = {"max_size", "MLCC_CACHE_MAXSIZE", "5G"},
    [MLCC_CACHE_CONF_READ_ONLY] = {"read_only", "MLCC_CACHE_READONLY", "false"},
    [MLCC_CACHE_CONF_REMOTE_BUDGET] = {"remote_budget", "MLCC_REMOTE_BUDGET", "60"},
    [MLCC_CACHE_CONF_REMOTE_MAX_ERRORS] = {"remote_max_errors", "MLCC_REMOTE_MAX_ERRORS", "3"},
    [MLCC_CACHE_CONF_REMOTE_TIMEOUT] = {"remote_timeout", "MLCC_REMOTE_TIMEOUT", "5"},
};

const char* mlcc_cache_conf_key_name(mlcc_cache_conf_key_t key) {
  return key < MLCC_CACHE_CONF_COUNT ? kConfKeys[key].name : "?";
}

static int conf_key_lookup(const char* name, size_t len) {
  for (int k = 0; k < MLCC_CACHE_CONF_COUNT; ++k) {
    if (strlen(kConfKeys[k].name) == len && strncmp(kConfKeys[k].name, name, len) == 0) return k;
  }
  return -1;
}

// Seconds with up to three decimals ("2.5") into milliseconds, at most a day.
static bool parse_seconds_ms(const char* text, bool allow_zero, uint32_t* out_ms) {
  const char* p = text;
  uint64_t ms = 0;
  if (*p < '0' || *p > '9') return false;
  for (; *p >= '0' && *p <= '9'; ++p) {
    ms = ms * 10 + (uint64_t)(*p - '0');
    if (ms > 86400) return false;
  }
  ms *= 1000;
  if (*p == '.') {
    ++p;
    uint64_t scale = 100;
    if (*p < '0' || *p > '9') return false;
    for (; *p >= '0' && *p <= '9'; ++p) {
      ms += (uint64_t)(*p - '0') * scale;
      scale /= 10;
    }
  }
  if (*p != '\0' || (ms == 0 && !allow_zero)) return false;
  *out_ms = (uint32_t)ms;
  return true;
}

static bool parse_bool(const char* text, bool* out) {
  static const char* const kTrue[] = {"true", "1", "yes", "on"};
  static const char* const kFalse[] = {"false", "0", "no", "off"};
  for (int i = 0; i < 4; ++i) {
    if (strcmp(text, kTrue[i]) == 0) return *out = true, true;
    if (strcmp(text, kFalse[i]) == 0) return *out = false, true;
  }
  return false;
}

// Validates |value| for |key| and applies it to |c|. false with |why| set.
static bool conf_apply(mlcc_cache_config_t* c, int key, const char* value, char* why,
                       size_t why_size) {
  bool ok = true;
  switch (key) {
    case MLCC_CACHE_CONF_MAX_SIZE: {
      mlcc_status_t s = mlcc_cache_parse_size(value, &c->max_size);
      if (s != NULL) {
        snprintf(why, why_size, "%s", mlcc_status_message(s));
        mlcc_status_free(s);
        return false;
      }
      break;
    }
    case MLCC_CACHE_CONF_READ_ONLY:
      ok = parse_bool(value, &c->read_only);
      if (!ok) snprintf(why, why_size, "invalid read_only '%s'; expected true or false", value);
      break;
    case MLCC_CACHE_CONF_REMOTE_BUDGET:
      ok = parse_seconds_ms(value, true, &c->remote_budget_ms);
      if (!ok) {
        snprintf(why, why_size, "invalid remote_budget '%s'; expected seconds, e.g. 60 (0 = none)",
                 value);
      }
      break;
    case MLCC_CACHE_CONF_REMOTE_TIMEOUT:
      ok = parse_seconds_ms(value, false, &c->remote_timeout_ms);
      if (!ok) {
        snprintf(why, why_size, "invalid remote_timeout '%s'; expected seconds above 0, e.g. 2.5",
                 value);
      }
      break;
    case MLCC_CACHE_CONF_REMOTE_MAX_ERRORS: {
      char* end = NULL;
      errno = 0;
      unsigned long v = value[0] >= '0' && value[0] <= '9' ? strtoul(value, &end, 10) : 0;
      ok = end != NULL && *end == '\0' && errno == 0 && v >= 1 && v <= 1000000;
      if (ok) {
        c->remote_max_errors = (uint32_t)v;
      } else {
        snprintf(why, why_size, "invalid remote_max_errors '%s'; expected a number from 1", value);
      }
      break;
    }
    default:
      snprintf(why, why_size, "unknown key");
      return false;
  }
  if (ok) snprintf(c->text[key], sizeof(c->text[key]), "%s", value);
  return ok;
}

static char* conf_path(const char* dir) { return path_printf("%s/mlcc.conf", dir); }

// Reads a small text file (at most 64 KiB) through open_regular. NULL when
// missing, not regular or unreadable.
static char* read_text_file(const char* path) {
  int fd = open_regular(path, O_RDONLY, 0);
  if (fd < 0) return NULL;
  size_t cap = 1 << 16;
  char* text = (char*)malloc(cap + 1);
  size_t got = 0;
  while (text != NULL && got < cap) {
    ssize_t r = read(fd, text + got, cap - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (text != NULL) text[got] = '\0';
  return text;
}

// Calls |fn| for each "key = value" line of |text| (comments '#', blank lines
// skipped; spaces around key and value trimmed). |line_no| counts from 1.
typedef void (*conf_line_fn)(void* ctx, unsigned line_no, const char* line, size_t len,
                             const char* key, size_t key_len, const char* value);

static void conf_for_each_line(const char* text, conf_line_fn fn, void* ctx) {
  unsigned line_no = 0;
  const char* p = text;
  while (*p) {
    ++line_no;
    const char* eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char line[512];
    size_t n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
    memcpy(line, p, n);
    line[n] = '\0';
    char* a = line;
    while (*a == ' ' || *a == '\t' || *a == '\r') ++a;
    if (*a != '\0' && *a != '#') {
      char* eq = strchr(a, '=');
      const char* key = a;
      size_t key_len = 0;
      char* value = NULL;
      if (eq != NULL) {
        key_len = (size_t)(eq - a);
        while (key_len > 0 && (a[key_len - 1] == ' ' || a[key_len - 1] == '\t')) --key_len;
        value = eq + 1;
        while (*value == ' ' || *value == '\t') ++value;
        size_t vl = strlen(value);
        while (vl > 0 && (value[vl - 1] == ' ' || value[vl - 1] == '\t' ||
                          value[vl - 1] == '\r')) {
          value[--vl] = '\0';
        }
      }
      fn(ctx, line_no, p, len, key, key_len, value);
    } else {
      fn(ctx, line_no, p, len, NULL, 0, NULL);
    }
    p += len;
    if (*p == '\n') ++p;
  }
}

typedef struct conf_load_ctx_t {
  mlcc_cache_config_t* config;
  const char* path;
  FILE* diag;
  bool from_env[MLCC_CACHE_CONF_COUNT];
} conf_load_ctx_t;

static void conf_load_line(void* ctx, unsigned line_no, const char* line, size_t len,
                           const char* key, size_t key_len, const char* value) {
  (void)line;
  (void)len;
  conf_load_ctx_t* l = (conf_load_ctx_t*)ctx;
  if (key == NULL) return;  // blank or comment
  int k = value != NULL ? conf_key_lookup(key, key_len) : -1;
  char why[200] = "";
  if (value == NULL) {
    snprintf(why, sizeof(why), "expected 'key = value'");
  } else if (k < 0) {
    snprintf(why, sizeof(why), "unknown key '%.*s'", (int)key_len, key);
  } else if (l->from_env[k]) {
    return;  // the environment (or the command line) wins
  } else {
    mlcc_cache_config_t trial = *l->config;
    if (conf_apply(&trial, k, value, why, sizeof(why))) {
      *l->config = trial;
      l->config->origin[k] = MLCC_CACHE_CONF_FILE;
      return;
    }
  }
  if (l->diag != NULL) {
    fprintf(l->diag, "mlcc: warning: %s:%u: ignoring this line: %s\n", l->path, line_no, why);
  }
}

mlcc_status_t mlcc_cache_config_load(const char* dir, const char* max_size_option, FILE* diag,
                                     mlcc_cache_config_t* out) {
  memset(out, 0, sizeof(*out));
  char why[200];
  for (int k = 0; k < MLCC_CACHE_CONF_COUNT; ++k) {
    if (!conf_apply(out, k, kConfKeys[k].default_text, why, sizeof(why))) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "bad default for %s", kConfKeys[k].name);
    }
    out->origin[k] = MLCC_CACHE_CONF_DEFAULT;
  }
  conf_load_ctx_t l;
  memset(&l, 0, sizeof(l));
  l.config = out;
  l.diag = diag;
  for (int k = 0; k < MLCC_CACHE_CONF_COUNT; ++k) {
    const char* v = env_nonempty(kConfKeys[k].env);
    bool cmdline = k == MLCC_CACHE_CONF_MAX_SIZE && max_size_option != NULL;
    if (cmdline) v = max_size_option;
    if (v == NULL) continue;
    if (!conf_apply(out, k, v, why, sizeof(why))) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "%s%s: %s", cmdline ? "--" : "$",
                              cmdline ? "cache-max-size" : kConfKeys[k].env, why);
    }
    out->origin[k] = cmdline ? MLCC_CACHE_CONF_COMMAND_LINE : MLCC_CACHE_CONF_ENVIRONMENT;
    l.from_env[k] = true;
  }
  if (dir == NULL) return mlcc_ok_status();
  char* path = conf_path(dir);
  if (path == NULL) return oom();
  char* text = read_text_file(path);
  if (text != NULL) {
    l.path = path;
    conf_for_each_line(text, conf_load_line, &l);
  }
  free(text);
  free(path);
  return mlcc_ok_status();
}

typedef struct conf_set_ctx_t {
  mlcc_strbuf_t* out;
  int key;
  const char* value;
  bool done;
} conf_set_ctx_t;

static void conf_set_line(void* ctx, unsigned line_no, const char* line, size_t len,
                          const char* key, size_t key_len, const char* value) {
  (void)line_no;
  conf_set_ctx_t* c = (conf_set_ctx_t*)ctx;
  if (key != NULL && value != NULL && conf_key_lookup(key, key_len) == c->key) {
    if (c->done || c->value[0] == '\0') return;  // dropped (a duplicate, or unset)
    c->done = true;
    mlcc_strbuf_appendf(c->out, "%s = %s\n", kConfKeys[c->key].name, c->value);
    return;
  }
  mlcc_strbuf_append_n(c->out, line, len);
  mlcc_strbuf_append_char(c->out, '\n');
}

mlcc_status_t mlcc_cache_config_set(const char* dir, const char* assignment, FILE* out) {
  const char* eq = strchr(assignment, '=');
  if (eq == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "invalid --set-config '%s'; expected KEY=VALUE", assignment);
  }
  int k = conf_key_lookup(assignment, (size_t)(eq - assignment));
  if (k < 0) {
    mlcc_strbuf_t keys;
    mlcc_strbuf_init(&keys);
    for (int i = 0; i < MLCC_CACHE_CONF_COUNT; ++i) {
      mlcc_strbuf_appendf(&keys, "%s%s", i ? ", " : "", kConfKeys[i].name);
    }
    mlcc_status_t s = mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                                       "unknown configuration key '%.*s' in --set-config; "
                                       "known keys: %s",
                                       (int)(eq - assignment), assignment,
                                       mlcc_strbuf_cstr(&keys));
    mlcc_strbuf_deinit(&keys);
    return s;
  }
  const char* value = eq + 1;
  if (strlen(value) >= 64 || strchr(value, '\n') != NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "invalid value for %s in --set-config",
                            kConfKeys[k].name);
  }
  if (value[0] != '\0') {
    mlcc_cache_config_t trial;
    memset(&trial, 0, sizeof(trial));
    char why[200];
    if (!conf_apply(&trial, k, value, why, sizeof(why))) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "--set-config: %s", why);
    }
  }
  MLCC_RETURN_IF_ERROR(mkdir_p(dir));
  char* path = conf_path(dir);
  if (path == NULL) return oom();
  // Read-modify-write under the stats file's lock, so that two concurrent
  // --set-config runs do not lose one of the settings (best effort: without
  // the lock it is only racy, never corrupt, as the write is atomic).
  int lock = open_stats_locked(dir, true);
  char* old = read_text_file(path);
  mlcc_strbuf_t text;
  mlcc_strbuf_init(&text);
  if (old == NULL) {
    mlcc_strbuf_appendf(&text, "# mlcc kernel cache configuration (mlcc --set-config=KEY=VALUE)\n");
  } else {
    conf_set_ctx_t c = {&text, k, value, false};
    conf_for_each_line(old, conf_set_line, &c);
    if (c.done) value = "";  // already written in place
  }
  if (value[0] != '\0') mlcc_strbuf_appendf(&text, "%s = %s\n", kConfKeys[k].name, value);
  free(old);
  mlcc_status_t s = mlcc_fs_write_atomic(path, mlcc_strbuf_cstr(&text), text.len);
  if (lock >= 0) close(lock);
  mlcc_strbuf_deinit(&text);
  if (s == NULL) {
    if (eq[1] != '\0') {
      fprintf(out, "Set %s = %s in %s\n", kConfKeys[k].name, eq + 1, path);
    } else {
      fprintf(out, "Unset %s in %s\n", kConfKeys[k].name, path);
    }
  }
  free(path);
  return s;
}

void mlcc_cache_config_print(const mlcc_cache_config_t* config, const char* dir, FILE* out) {
  for (int k = 0; k < MLCC_CACHE_CONF_COUNT; ++k) {
    switch (config->origin[k]) {
      case MLCC_CACHE_CONF_DEFAULT: fprintf(out, "(default)"); break;
      case MLCC_CACHE_CONF_FILE: fprintf(out, "(%s/mlcc.conf)", dir ? dir : "?"); break;
      case MLCC_CACHE_CONF_ENVIRONMENT: fprintf(out, "(environment)"); break;
      case MLCC_CACHE_CONF_COMMAND_LINE: fprintf(out, "(command line)"); break;
    }
    fprintf(out, " %s = %s\n", kConfKeys[k].name, config->text[k]);
  }
}

bool mlcc_cache_key_is_valid(const char* key) {
  if (key == NULL) return false;
  for (int i = 0; i < 64; ++i) {
    char ch = key[i];
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return key[64] == '\0';
}

static void key_to_binary(const char* key, uint8_t out[32]) {
  for (int i = 0; i < 32; ++i) {
    int hi = key[2 * i] <= '9' ? key[2 * i] - '0' : key[2 * i] - 'a' + 10;
    int lo = key[2 * i + 1] <= '9' ? key[2 * i + 1] - '0' : key[2 * i + 1] - 'a' + 10;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
}

static bool sha256(const void* data, size_t size, uint8_t out[32]) {
  unsigned int len = 0;
  return EVP_Digest(data, size, out, &len, EVP_sha256(), NULL) == 1 && len == 32;
}

static void put_le(uint8_t* p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

// Checks a whole entry file's bytes. |key_bin| NULL: any key. On success
// sets |*out_payload_size| (the payload starts at kHeaderSize).
static bool check_entry(const uint8_t* buf, size_t n, const uint8_t* key_bin,
                        uint64_t* out_payload_size, char* why, size_t why_size) {
  if (n < kHeaderSize + kTrailerSize) {
    if (n >= 8 && memcmp(buf, kMagic, 8) != 0) {
      snprintf(why, why_size, "not an mlcc cache entry (bad magic)");
    } else {
      snprintf(why, why_size, "truncated (%zu bytes, shorter than a header)", n);
    }
    return false;
  }
  if (memcmp(buf, kMagic, 8) != 0) {
    snprintf(why, why_size, "not an mlcc cache entry (bad magic)");
    return false;
  }
  uint32_t version = (uint32_t)get_le(buf + 8, 4);
  if (version != MLCC_CACHE_FORMAT_VERSION) {
    snprintf(why, why_size, "format version %u, expected %u", version,
             MLCC_CACHE_FORMAT_VERSION);
    return false;
  }
  if (get_le(buf + 12, 4) != kHeaderSize) {
    snprintf(why, why_size, "bad header size");
    return false;
  }
  if (key_bin != NULL && memcmp(buf + 16, key_bin, 32) != 0) {
    snprintf(why, why_size, "foreign entry (its header holds another key)");
    return false;
  }
  uint64_t payload = get_le(buf + 48, 8);
  if (payload > MLCC_CACHE_MAX_PAYLOAD || payload + kHeaderSize + kTrailerSize != n) {
    snprintf(why, why_size, "truncated or padded (%zu bytes, the header says %llu)", n,
             (unsigned long long)(payload + kHeaderSize + kTrailerSize));
    return false;
  }
  uint8_t digest[32];
  if (!sha256(buf + kHeaderSize, (size_t)payload, digest) ||
      memcmp(digest, buf + kHeaderSize + payload, 32) != 0) {
    snprintf(why, why_size, "checksum mismatch (corrupt payload)");
    return false;
  }
  *out_payload_size = payload;
  return true;
}

// Reads a whole file of at most |limit| bytes. false with errno-based |why|.
static bool read_small_file(const char* path, size_t limit, uint8_t** out, size_t* out_n,
                            bool* out_missing, char* why, size_t why_size) {
  *out = NULL;
  *out_n = 0;
  *out_missing = false;
  // O_NONBLOCK: a FIFO planted at an entry's path must not block the build.
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    *out_missing = errno == ENOENT || errno == ENOTDIR;
    if (errno == ELOOP) {
      snprintf(why, why_size, "a symbolic link, not a regular file");
    } else {
      snprintf(why, why_size, "cannot open: %s", strerror(errno));
    }
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(why, why_size, "not a regular file");
    close(fd);
    return false;
  }
  if ((uint64_t)st.st_size > limit) {
    snprintf(why, why_size, "too large (%lld bytes)", (long long)st.st_size);
    close(fd);
    return false;
  }
  size_t n = (size_t)st.st_size;
  uint8_t* buf = (uint8_t*)malloc(n ? n : 1);
  if (buf == NULL) {
    snprintf(why, why_size, "out of memory");
    close(fd);
    return false;
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  *out = buf;
  *out_n = got;  // a file that shrank while reading fails the size check
  return true;
}

static char* entry_path(const char* dir, const char* key) {
  return path_printf("%s/%.2s/%s", dir, key, key + 2);
}

mlcc_status_t mlcc_cache_verify_entry_file(const char* path, const char* key) {
  uint8_t key_bin[32];
  if (key != NULL) {
    if (!mlcc_cache_key_is_valid(key)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "invalid cache key '%s'", key);
    }
    key_to_binary(key, key_bin);
  }
  char why[160];
  uint8_t* buf = NULL;
  size_t n = 0;
  bool missing = false;
  if (!read_small_file(path, MLCC_CACHE_MAX_PAYLOAD + kHeaderSize + kTrailerSize, &buf, &n,
                       &missing, why, sizeof(why))) {
    return mlcc_make_status(missing ? MLCC_STATUS_NOT_FOUND : MLCC_STATUS_IO, "%s: %s", path,
                            why);
  }
  uint64_t payload = 0;
  bool ok = check_entry(buf, n, key ? key_bin : NULL, &payload, why, sizeof(why));
  free(buf);
  if (!ok) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "%s: %s", path, why);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Open, lookup, store
//===----------------------------------------------------------------------===//

static mlcc_status_t mkdir_p(const char* dir) {
  char* created[32];
  uint32_t n = 0;
  mlcc_status_t s = mlcc_fs_mkdirs(dir, created, 32, &n);
  for (uint32_t i = 0; i < n && i < 32; ++i) free(created[i]);
  return s;
}

static const char kCacheDirTag[] =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by mlcc (its kernel cache).\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n";

static mlcc_status_t cache_open(const char* dir, uint64_t max_size, bool read_only,
                                mlcc_cache_t** out_cache) {
  *out_cache = NULL;
  if (read_only) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "the read-only kernel cache '%s' does not "
                              "exist", dir);
    }
  } else {
    mlcc_status_t s = mkdir_p(dir);
    if (s != NULL) {
      // A cache that exists but cannot be written is read (cache.h).
      struct stat st;
      if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return s;
      mlcc_status_free(s);
      read_only = true;
    } else if (access(dir, W_OK | X_OK) != 0) {
      if (errno != EACCES && errno != EROFS && errno != EPERM) {
        return mlcc_make_status(MLCC_STATUS_IO, "cannot write to the kernel cache '%s': %s",
                                dir, strerror(errno));
      }
      read_only = true;
    }
  }
  if (access(dir, R_OK | X_OK) != 0) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot read the kernel cache '%s': %s", dir,
                            strerror(errno));
  }
  mlcc_cache_t* c = (mlcc_cache_t*)calloc(1, sizeof(*c));
  if (c == NULL) return oom();
  c->dir = xstrdup(dir);
  if (c->dir == NULL) {
    free(c);
    return oom();
  }
  c->max_size = max_size;
  c->read_only = read_only;
  mode_t mask = umask(0);
  umask(mask);
  c->file_mode = 0666 & ~mask;
  if (!read_only) {
    char* tag = path_printf("%s/CACHEDIR.TAG", dir);
    if (tag != NULL && access(tag, F_OK) != 0) {
      mlcc_status_free(mlcc_fs_write_atomic(tag, kCacheDirTag, sizeof(kCacheDirTag) - 1));
    }
    free(tag);
  }
  *out_cache = c;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_cache_open(const char* dir, uint64_t max_size, mlcc_cache_t** out_cache) {
  return cache_open(dir, max_size, false, out_cache);
}

mlcc_status_t mlcc_cache_open_with(const char* dir, const mlcc_cache_config_t* config,
                                   mlcc_cache_t** out_cache) {
  return cache_open(dir, config->max_size, config->read_only, out_cache);
}

bool mlcc_cache_is_read_only(const mlcc_cache_t* cache) { return cache->read_only; }

const char* mlcc_cache_dir(const mlcc_cache_t* cache) { return cache->dir; }

mlcc_cache_result_t mlcc_cache_lookup(mlcc_cache_t* cache, const char* key,
                                      uint8_t** out_data, size_t* out_size, char* why,
                                      size_t why_size) {
  *out_data = NULL;
  *out_size = 0;
  char local_why[200];
  if (why == NULL || why_size == 0) {
    why = local_why;
    why_size = sizeof(local_why);
  }
  why[0] = '\0';
  if (!mlcc_cache_key_is_valid(key)) {
    snprintf(why, why_size, "invalid key");
    atomic_fetch_add(&cache->misses, 1);
    return MLCC_CACHE_MISS;
  }
  char* path = entry_path(cache->dir, key);
  if (path == NULL) {
    snprintf(why, why_size, "out of memory");
    atomic_fetch_add(&cache->misses, 1);
    return MLCC_CACHE_MISS;
  }
  uint8_t* buf = NULL;
  size_t n = 0;
  bool missing = false;
  char detail[160];
  if (!read_small_file(path, MLCC_CACHE_MAX_PAYLOAD + kHeaderSize + kTrailerSize, &buf, &n,
                       &missing, detail, sizeof(detail))) {
    atomic_fetch_add(&cache->misses, 1);
    if (missing) {
      snprintf(why, why_size, "no entry %.2s/%s", key, key + 2);
      free(path);
      return MLCC_CACHE_MISS;
    }
    snprintf(why, why_size, "entry %s unreadable: %s", path, detail);
    atomic_fetch_add(&cache->damaged, 1);
    free(path);
    return MLCC_CACHE_DAMAGED;
  }
  uint8_t key_bin[32];
  key_to_binary(key, key_bin);
  uint64_t payload = 0;
  if (!check_entry(buf, n, key_bin, &payload, detail, sizeof(detail))) {
    snprintf(why, why_size, "entry %s is damaged: %s", path, detail);
    free(buf);
    free(path);
    atomic_fetch_add(&cache->misses, 1);
    atomic_fetch_add(&cache->damaged, 1);
    return MLCC_CACHE_DAMAGED;
  }
  // Hand out the payload in place: move it to the front of the buffer.
  memmove(buf, buf + kHeaderSize, (size_t)payload);
  *out_data = buf;
  *out_size = (size_t)payload;
  // LRU: a hit is a use (atime and mtime to now). Failure is harmless.
  if (!cache->read_only) (void)utimensat(AT_FDCWD, path, NULL, 0);
  free(path);
  atomic_fetch_add(&cache->hits, 1);
  return MLCC_CACHE_HIT;
}

mlcc_status_t mlcc_cache_store(mlcc_cache_t* cache, const char* key, const void* data,
                               size_t size) {
  if (!mlcc_cache_key_is_valid(key)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "invalid cache key");
  }
  if ((uint64_t)size > MLCC_CACHE_MAX_PAYLOAD) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "kernel object of %zu bytes is too large to cache", size);
  }
  if (cache->read_only) return mlcc_ok_status();
  char* sub = path_printf("%s/%.2s", cache->dir, key);
  char* final_path = entry_path(cache->dir, key);
  char* tmp = path_printf("%s/%.2s/.tmp-%.16s-%ld-%u-XXXXXX", cache->dir, key, key + 2,
                          (long)getpid(), (unsigned)atomic_fetch_add(&cache->tmp_counter, 1));
  uint8_t* buf = (uint8_t*)malloc(size + kHeaderSize + kTrailerSize);
  mlcc_status_t s = mlcc_ok_status();
  if (sub == NULL || final_path == NULL || tmp == NULL || buf == NULL) s = oom();
  if (s == NULL && mkdir(sub, 0777) != 0 && errno != EEXIST) {
    s = mlcc_make_status(MLCC_STATUS_IO, "cannot create '%s': %s", sub, strerror(errno));
  }
  if (s == NULL) {
    memcpy(buf, kMagic, 8);
    put_le(buf + 8, MLCC_CACHE_FORMAT_VERSION, 4);
    put_le(buf + 12, kHeaderSize, 4);
    key_to_binary(key, buf + 16);
    put_le(buf + 48, size, 8);
    if (size) memcpy(buf + kHeaderSize, data, size);
    if (!sha256(data, size, buf + kHeaderSize + size)) {
      s = mlcc_make_status(MLCC_STATUS_INTERNAL, "SHA-256 failed");
    }
  }
  int fd = -1;
  if (s == NULL) {
    fd = mkstemp(tmp);
    if (fd < 0) {
      s = mlcc_make_status(MLCC_STATUS_IO, "cannot create a temporary in '%s': %s", sub,
                           strerror(errno));
    }
  }
  if (s == NULL) {
    (void)fchmod(fd, cache->file_mode);
    s = mlcc_fs_write_fd(fd, buf, size + kHeaderSize + kTrailerSize, tmp);
    if (close(fd) != 0 && s == NULL) {
      s = mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': %s", tmp, strerror(errno));
    }
    if (s == NULL && rename(tmp, final_path) != 0) {
      s = mlcc_make_status(MLCC_STATUS_IO, "cannot rename '%s' to '%s': %s", tmp, final_path,
                           strerror(errno));
    }
    if (s != NULL) unlink(tmp);
  }
  if (s == NULL) atomic_fetch_add(&cache->stores, 1);
  free(buf);
  free(tmp);
  free(final_path);
  free(sub);
  return s;
}

void mlcc_cache_count_remote_hit(mlcc_cache_t* cache) {
  // The local lookup before it counted a miss: the kernel was not compiled.
  atomic_fetch_sub(&cache->misses, 1);
  atomic_fetch_add(&cache->remote_hits, 1);
}

void mlcc_cache_count_remote(mlcc_cache_t* cache, uint64_t errors, uint64_t rejected,
                             uint64_t wait_ms) {
  atomic_fetch_add(&cache->remote_errors, errors);
  atomic_fetch_add(&cache->remote_rejected, rejected);
  atomic_fetch_add(&cache->remote_wait_ms, wait_ms);
}

void mlcc_cache_count_rejected(mlcc_cache_t* cache, bool local_hit) {
  if (cache == NULL) return;
  if (local_hit) {  // the lookup counted a hit: it is a miss after all
    atomic_fetch_sub(&cache->hits, 1);
    atomic_fetch_add(&cache->misses, 1);
  }
  atomic_fetch_add(&cache->rejected, 1);
}

//===----------------------------------------------------------------------===//
// Stats file
//===----------------------------------------------------------------------===//

// The stats file: "name value" lines. Files written before a counter
// existed read as 0 for it.
static const char* const kCounterNames[] = {
    "hits",          "remote_hits",     "misses",          "damaged",        "stores",
    "evictions",     "remote_errors",   "remote_rejected", "remote_wait_ms", "zeroed_time",
    "rejected"};
enum { kNumCounters = 11 };

static uint64_t* counter_slot(mlcc_cache_counters_t* c, int i) {
  uint64_t* slots[kNumCounters] = {&c->hits,          &c->remote_hits,     &c->misses,
                                   &c->damaged,       &c->stores,          &c->evictions,
                                   &c->remote_errors, &c->remote_rejected, &c->remote_wait_ms,
                                   &c->zeroed_time,   &c->rejected};
  return slots[i];
}

static void parse_counters(const char* text, mlcc_cache_counters_t* out) {
  memset(out, 0, sizeof(*out));
  const char* p = text;
  while (*p) {
    const char* eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    for (int i = 0; i < kNumCounters; ++i) {
      size_t nl = strlen(kCounterNames[i]);
      if (len > nl + 1 && strncmp(p, kCounterNames[i], nl) == 0 && p[nl] == ' ') {
        *counter_slot(out, i) = strtoull(p + nl + 1, NULL, 10);
      }
    }
    p += len;
    if (*p == '\n') ++p;
  }
}

// Opens <dir>/stats locked exclusively. -1 on failure.
static int open_stats_locked(const char* dir, bool create) {
  char* path = path_printf("%s/stats", dir);
  if (path == NULL) return -1;
  int fd = open_regular(path, O_RDWR | (create ? O_CREAT : 0), 0666);
  free(path);
  if (fd < 0) return -1;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

static void read_fd_text(int fd, char* buf, size_t cap) {
  size_t got = 0;
  while (got + 1 < cap) {
    ssize_t r = pread(fd, buf + got, cap - 1 - got, (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  buf[got] = '\0';
}

// Adds |delta| to the counters; with |zero|, first sets them to zero and
// records the time (-z). false when the stats file cannot be written.
static bool update_counters(const char* dir, const mlcc_cache_counters_t* delta, bool zero) {
  int fd = open_stats_locked(dir, true);
  if (fd < 0) return false;
  char text[1024];
  read_fd_text(fd, text, sizeof(text));
  mlcc_cache_counters_t c;
  parse_counters(text, &c);
  if (zero) {
    memset(&c, 0, sizeof(c));
    c.zeroed_time = (uint64_t)time(NULL);
  }
  mlcc_cache_counters_t d = *delta;
  int len = 0;
  for (int i = 0; i < kNumCounters; ++i) {
    *counter_slot(&c, i) += *counter_slot(&d, i);
    len += snprintf(text + len, sizeof(text) - (size_t)len, "%s %llu\n", kCounterNames[i],
                    (unsigned long long)*counter_slot(&c, i));
  }
  bool ok = pwrite(fd, text, (size_t)len, 0) == len && ftruncate(fd, len) == 0;
  close(fd);  // releases the lock
  return ok;
}

static void add_counters(const char* dir, const mlcc_cache_counters_t* delta) {
  (void)update_counters(dir, delta, false);
}

mlcc_status_t mlcc_cache_zero_stats(const char* dir) {
  MLCC_RETURN_IF_ERROR(mkdir_p(dir));
  mlcc_cache_counters_t none;
  memset(&none, 0, sizeof(none));
  if (!update_counters(dir, &none, true)) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot write the statistics of the kernel cache "
                            "'%s': %s", dir, strerror(errno));
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_cache_read_counters(const char* dir, mlcc_cache_counters_t* out) {
  memset(out, 0, sizeof(*out));
  char* path = path_printf("%s/stats", dir);
  if (path == NULL) return oom();
  int fd = open_regular(path, O_RDONLY, 0);
  free(path);
  if (fd < 0) return mlcc_ok_status();
  (void)flock(fd, LOCK_SH);
  char text[1024];
  read_fd_text(fd, text, sizeof(text));
  close(fd);
  parse_counters(text, out);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Scanning, trimming, clearing
//===----------------------------------------------------------------------===//

static bool is_hex2(const char* name) {
  for (int i = 0; i < 2; ++i) {
    char ch = name[i];
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return name[2] == '\0';
}

static bool is_entry_name(const char* name) {
  size_t n = strlen(name);
  if (n != 62) return false;
  for (size_t i = 0; i < n; ++i) {
    char ch = name[i];
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return true;
}

typedef struct file_info_t {
  char* path;
  uint64_t size;
  struct timespec mtime;
  bool temporary;
} file_info_t;

typedef struct file_list_t {
  file_info_t* items;
  size_t n, cap;
} file_list_t;

static void file_list_free(file_list_t* l) {
  for (size_t i = 0; i < l->n; ++i) free(l->items[i].path);
  free(l->items);
  memset(l, 0, sizeof(*l));
}

// Lists the entries and temporaries of |dir| (its fan-out folders only).
static mlcc_status_t list_files(const char* dir, file_list_t* out) {
  memset(out, 0, sizeof(*out));
  DIR* top = opendir(dir);
  if (top == NULL) {
    if (errno == ENOENT) return mlcc_ok_status();
    return mlcc_make_status(MLCC_STATUS_IO, "cannot read the kernel cache '%s': %s", dir,
                            strerror(errno));
  }
  mlcc_status_t s = mlcc_ok_status();
  struct dirent* de;
  while (s == NULL && (de = readdir(top)) != NULL) {
    if (!is_hex2(de->d_name)) continue;
    char* sub = path_printf("%s/%s", dir, de->d_name);
    if (sub == NULL) {
      s = oom();
      break;
    }
    DIR* d = opendir(sub);
    if (d == NULL) {
      free(sub);
      continue;
    }
    struct dirent* fe;
    while (s == NULL && (fe = readdir(d)) != NULL) {
      bool temporary = strncmp(fe->d_name, ".tmp-", 5) == 0;
      if (!temporary && !is_entry_name(fe->d_name)) continue;
      char* path = path_printf("%s/%s", sub, fe->d_name);
      struct stat st;
      if (path == NULL) {
        s = oom();
      } else if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(path);  // vanished (evicted or renamed by another process)
      } else {
        if (out->n == out->cap) {
          size_t cap = out->cap ? out->cap * 2 : 256;
          file_info_t* grown = (file_info_t*)realloc(out->items, cap * sizeof(*grown));
          if (grown == NULL) {
            free(path);
            s = oom();
            break;
          }
          out->items = grown;
          out->cap = cap;
        }
        file_info_t* f = &out->items[out->n++];
        f->path = path;
        f->size = (uint64_t)st.st_size;
        f->mtime = st.st_mtim;
        f->temporary = temporary;
      }
    }
    closedir(d);
    free(sub);
  }
  closedir(top);
  if (s != NULL) file_list_free(out);
  return s;
}

mlcc_status_t mlcc_cache_scan(const char* dir, mlcc_cache_usage_t* out_usage) {
  memset(out_usage, 0, sizeof(*out_usage));
  file_list_t l;
  MLCC_RETURN_IF_ERROR(list_files(dir, &l));
  for (size_t i = 0; i < l.n; ++i) {
    if (l.items[i].temporary) {
      out_usage->temporaries++;
    } else {
      out_usage->entries++;
      out_usage->bytes += l.items[i].size;
    }
  }
  file_list_free(&l);
  return mlcc_ok_status();
}

static int by_age(const void* pa, const void* pb) {
  const file_info_t* a = (const file_info_t*)pa;
  const file_info_t* b = (const file_info_t*)pb;
  if (a->mtime.tv_sec != b->mtime.tv_sec) return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
  if (a->mtime.tv_nsec != b->mtime.tv_nsec) return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
  return strcmp(a->path, b->path);
}

// Removes temporaries older than kStaleTempSeconds; trims entries to
// |target_bytes| when |trim|.
static mlcc_status_t clean(const char* dir, bool trim, uint64_t target_bytes,
                           uint64_t* out_evicted, uint64_t* out_temporaries) {
  if (out_evicted) *out_evicted = 0;
  if (out_temporaries) *out_temporaries = 0;
  file_list_t l;
  MLCC_RETURN_IF_ERROR(list_files(dir, &l));
  time_t now = time(NULL);
  uint64_t total = 0;
  for (size_t i = 0; i < l.n; ++i) {
    file_info_t* f = &l.items[i];
    if (f->temporary) {
      if (now - f->mtime.tv_sec > kStaleTempSeconds && unlink(f->path) == 0 &&
          out_temporaries) {
        (*out_temporaries)++;
      }
    } else {
      total += f->size;
    }
  }
  if (trim && total > target_bytes) {
    qsort(l.items, l.n, sizeof(l.items[0]), by_age);
    for (size_t i = 0; i < l.n && total > target_bytes; ++i) {
      file_info_t* f = &l.items[i];
      if (f->temporary) continue;
      if (unlink(f->path) == 0 && out_evicted) (*out_evicted)++;
      total -= f->size;  // also when another process evicted it first
    }
  }
  file_list_free(&l);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_cache_trim(const char* dir, uint64_t target_bytes, uint64_t* out_evicted) {
  return clean(dir, true, target_bytes, out_evicted, NULL);
}

mlcc_status_t mlcc_cache_cleanup(const char* dir, uint64_t max_size, uint64_t* out_evicted,
                                 uint64_t* out_temporaries) {
  uint64_t evicted = 0, temporaries = 0;
  if (out_evicted) *out_evicted = 0;
  if (out_temporaries) *out_temporaries = 0;
  MLCC_RETURN_IF_ERROR(clean(dir, max_size != 0, max_size / 10 * 9, &evicted, &temporaries));
  if (evicted != 0) {
    mlcc_cache_counters_t delta;
    memset(&delta, 0, sizeof(delta));
    delta.evictions = evicted;
    add_counters(dir, &delta);
  }
  if (out_evicted) *out_evicted = evicted;
  if (out_temporaries) *out_temporaries = temporaries;
  return mlcc_ok_status();
}

void mlcc_cache_close(mlcc_cache_t* cache) {
  if (cache == NULL) return;
  mlcc_cache_counters_t delta;
  memset(&delta, 0, sizeof(delta));
  delta.hits = atomic_load(&cache->hits);
  delta.remote_hits = atomic_load(&cache->remote_hits);
  delta.misses = atomic_load(&cache->misses);
  delta.damaged = atomic_load(&cache->damaged);
  delta.stores = atomic_load(&cache->stores);
  delta.remote_errors = atomic_load(&cache->remote_errors);
  delta.remote_rejected = atomic_load(&cache->remote_rejected);
  delta.remote_wait_ms = atomic_load(&cache->remote_wait_ms);
  delta.rejected = atomic_load(&cache->rejected);
  bool used = delta.hits || delta.remote_hits || delta.misses || delta.stores ||
              delta.remote_errors || delta.remote_rejected || delta.rejected;
  if (used && !cache->read_only) {
    uint64_t evicted = 0;
    bool trim = cache->max_size != 0;
    mlcc_status_free(clean(cache->dir, trim, cache->max_size / 10 * 9, &evicted, NULL));
    delta.evictions = evicted;
    add_counters(cache->dir, &delta);
  }
  free(cache->dir);
  free(cache);
}

mlcc_status_t mlcc_cache_print_stats(const char* dir, uint64_t max_size, FILE* out) {
  mlcc_cache_counters_t c;
  mlcc_cache_usage_t u;
  MLCC_RETURN_IF_ERROR(mlcc_cache_read_counters(dir, &c));
  MLCC_RETURN_IF_ERROR(mlcc_cache_scan(dir, &u));
  uint64_t all_hits = c.hits + c.remote_hits;
  uint64_t lookups = all_hits + c.misses;
  char size[32], limit[32];
  mlcc_cache_format_size(u.bytes, size, sizeof(size));
  if (max_size) {
    mlcc_cache_format_size(max_size, limit, sizeof(limit));
  } else {
    snprintf(limit, sizeof(limit), "unlimited");
  }
  fprintf(out, "Cache directory:    %s\n", dir);
  fprintf(out, "Kernel lookups:     %llu\n", (unsigned long long)lookups);
  fprintf(out, "  Hits:             %llu / %llu (%.2f %%)\n", (unsigned long long)all_hits,
          (unsigned long long)lookups, lookups ? 100.0 * (double)all_hits / (double)lookups : 0.0);
  fprintf(out, "    Local:          %llu\n", (unsigned long long)c.hits);
  fprintf(out, "    Remote:         %llu\n", (unsigned long long)c.remote_hits);
  fprintf(out, "  Misses:           %llu\n", (unsigned long long)c.misses);
  fprintf(out, "  Damaged entries:  %llu (rebuilt)\n", (unsigned long long)c.damaged);
  fprintf(out, "Remote errors:      %llu\n", (unsigned long long)c.remote_errors);
  fprintf(out, "Remote rejected:    %llu\n", (unsigned long long)c.remote_rejected);
  fprintf(out, "Remote wait:        %.1f s\n", (double)c.remote_wait_ms / 1000.0);
  fprintf(out, "Rejected objects:   %llu (foreign code, rebuilt)\n", (unsigned long long)c.rejected);
  fprintf(out, "Entries stored:     %llu\n", (unsigned long long)c.stores);
  fprintf(out, "Entries evicted:    %llu\n", (unsigned long long)c.evictions);
  fprintf(out, "Entries:            %llu\n", (unsigned long long)u.entries);
  if (max_size) {
    fprintf(out, "Cache size:         %s / %s (%.1f %%)\n", size, limit,
            100.0 * (double)u.bytes / (double)max_size);
  } else {
    fprintf(out, "Cache size:         %s / %s\n", size, limit);
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_cache_print_stats_tsv(const char* dir, uint64_t max_size, FILE* out) {
  mlcc_cache_counters_t c;
  mlcc_cache_usage_t u;
  MLCC_RETURN_IF_ERROR(mlcc_cache_read_counters(dir, &c));
  MLCC_RETURN_IF_ERROR(mlcc_cache_scan(dir, &u));
  const struct {
    const char* name;
    uint64_t value;
  } rows[] = {
      {"stats_zeroed_timestamp", c.zeroed_time}, {"local_hits", c.hits},
      {"remote_hits", c.remote_hits},            {"misses", c.misses},
      {"damaged", c.damaged},                    {"stores", c.stores},
      {"evictions", c.evictions},                {"remote_errors", c.remote_errors},
      {"remote_rejected", c.remote_rejected},    {"remote_wait_ms", c.remote_wait_ms},
      {"rejected_objects", c.rejected},
      {"entries", u.entries},                    {"cache_size_bytes", u.bytes},
      {"max_size_bytes", max_size},              {"temporaries", u.temporaries},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); ++i) {
    fprintf(out, "%s\t%llu\n", rows[i].name, (unsigned long long)rows[i].value);
  }
  return mlcc_ok_status();
}

static void clear_records(const char* dir);

mlcc_status_t mlcc_cache_clear(const char* dir, uint64_t* out_removed) {
  if (out_removed) *out_removed = 0;
  file_list_t l;
  MLCC_RETURN_IF_ERROR(list_files(dir, &l));
  uint64_t removed = 0;
  for (size_t i = 0; i < l.n; ++i) {
    if (unlink(l.items[i].path) == 0 && !l.items[i].temporary) ++removed;
  }
  file_list_free(&l);
  // Empty fan-out folders go too (rmdir fails harmlessly on non-empty ones).
  DIR* top = opendir(dir);
  if (top != NULL) {
    struct dirent* de;
    while ((de = readdir(top)) != NULL) {
      if (!is_hex2(de->d_name)) continue;
      char* sub = path_printf("%s/%s", dir, de->d_name);
      if (sub != NULL) rmdir(sub);
      free(sub);
    }
    closedir(top);
  }
  clear_records(dir);
  int fd = open_stats_locked(dir, false);
  if (fd >= 0) {
    (void)ftruncate(fd, 0);
    close(fd);
  }
  if (out_removed) *out_removed = removed;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Explain records
//===----------------------------------------------------------------------===//

enum { kMaxRecord = 1 << 16 };

static char* record_path(const char* dir, const char* id) {
  return path_printf("%s/explain/%.2s/%s", dir, id, id + 2);
}

char* mlcc_cache_record_get(mlcc_cache_t* cache, const char* id) {
  if (!mlcc_cache_key_is_valid(id)) return NULL;
  char* path = record_path(cache->dir, id);
  if (path == NULL) return NULL;
  char* text = read_text_file(path);
  free(path);
  return text;
}

void mlcc_cache_record_put(mlcc_cache_t* cache, const char* id, const char* text) {
  if (cache->read_only || !mlcc_cache_key_is_valid(id) || strlen(text) > kMaxRecord) return;
  char* sub = path_printf("%s/explain/%.2s", cache->dir, id);
  char* path = record_path(cache->dir, id);
  if (sub != NULL && path != NULL) {
    mlcc_status_t s = mkdir_p(sub);
    if (s == NULL) s = mlcc_fs_write_atomic(path, text, strlen(text));
    mlcc_status_free(s);
  }
  free(sub);
  free(path);
}

// Removes <dir>/explain/ab/* and the folders (not descending any further).
static void clear_records(const char* dir) {
  char* top_path = path_printf("%s/explain", dir);
  if (top_path == NULL) return;
  DIR* top = opendir(top_path);
  if (top != NULL) {
    struct dirent* de;
    while ((de = readdir(top)) != NULL) {
      if (!is_hex2(de->d_name)) continue;
      char* sub = path_printf("%s/%s", top_path, de->d_name);
      DIR* d = sub ? opendir(sub) : NULL;
      if (d != NULL) {
        struct dirent* fe;
        while ((fe = readdir(d)) != NULL) {
          if (fe->d_name[0] == '.' && (fe->d_name[1] == '\0' ||
                                       (fe->d_name[1] == '.' && fe->d_name[2] == '\0'))) {
            continue;
          }
          char* f = path_printf("%s/%s", sub, fe->d_name);
          if (f != NULL) unlink(f);
          free(f);
        }
        closedir(d);
        rmdir(sub);
      }
      free(sub);
    }
    closedir(top);
    rmdir(top_path);
  }
  free(top_path);
}

//===----------------------------------------------------------------------===//
// Store keys: kernel key + compiler identity
//===----------------------------------------------------------------------===//

static pthread_once_t identity_once = PTHREAD_ONCE_INIT;
static char identity_hex[8 + 65];  // "codegen:"|"content:" + hex, or "version"

static void hex_digest(const unsigned char* md, char out_hex[65]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    out_hex[2 * i] = digits[md[i] >> 4];
    out_hex[2 * i + 1] = digits[md[i] & 15];
  }
  out_hex[64] = '\0';
}

// The compiler identity for MLCC_CACHE_COMPILER_CHECK (ccache's compiler_check):
//   unset, "" or "codegen"  "codegen:" + the codegen hash (driver/build_id.h):
//                           builds of one commit share, any emitter edit misses;
//   "content"               "content:" + SHA-256 of the running executable: only
//                           the very same binary shares (the strictest check);
//   "version"               nothing beyond the mlcc and LLVM versions already in
//                           the kernel key (emitter edits without an emit_version
//                           bump then reuse stale kernels: for experiments only).
// Any other value is treated as "content". An unreadable executable under
// "content" falls back to the codegen hash.
static void compute_identity(void) {
  const char* check = getenv("MLCC_CACHE_COMPILER_CHECK");
  if (check != NULL && strcmp(check, "version") == 0) {
    strcpy(identity_hex, "version");
    return;
  }
  snprintf(identity_hex, sizeof(identity_hex), "codegen:%s", mlcc_build_codegen_hash());
  if (check == NULL || check[0] == '\0' || strcmp(check, "codegen") == 0) return;
  FILE* f = fopen("/proc/self/exe", "rb");
  if (f == NULL) return;
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
  unsigned char buf[1 << 16];
  size_t n;
  while (ok && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
    ok = EVP_DigestUpdate(md, buf, n) == 1;
  }
  unsigned char digest[32];
  unsigned int len = 0;
  if (ok && !ferror(f) && EVP_DigestFinal_ex(md, digest, &len) == 1 && len == 32) {
    memcpy(identity_hex, "content:", 8);
    hex_digest(digest, identity_hex + 8);
  }
  EVP_MD_CTX_free(md);
  fclose(f);
}

void mlcc_cache_store_key(const char kernel_key[65], char out_store_key[65]) {
  pthread_once(&identity_once, compute_identity);
  unsigned char digest[32];
  unsigned int len = 0;
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
            EVP_DigestUpdate(md, "mlcc-store-key-v1", 17) == 1 &&
            EVP_DigestUpdate(md, kernel_key, 64) == 1 &&
            EVP_DigestUpdate(md, identity_hex, strlen(identity_hex)) == 1 &&
            EVP_DigestFinal_ex(md, digest, &len) == 1 && len == 32;
  EVP_MD_CTX_free(md);
  if (ok) {
    hex_digest(digest, out_store_key);
  } else {
    // Without a digest the kernel key alone still identifies the code.
    memcpy(out_store_key, kernel_key, 65);
  }
}

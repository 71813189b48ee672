// SPDX-License-Identifier: Apache-2.0
// The remote kernel cache over HTTP (bazel-remote protocol): see remote_cache.h.
#include "driver/remote_cache.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "driver/cache.h"
#include "driver/remote_sign.h"
#include "driver/remote_cache.pb-c.h"

#ifdef MLCC_HAVE_CURL
#include <curl/curl.h>
#endif

enum { kMaxActionResult = 1 << 20 };

struct mlcc_remote_cache_t {
  char* url;       // without a trailing '/' and without userinfo: safe to print
  char* user;      // from the URL's userinfo or $MLCC_REMOTE_CACHE_CREDENTIALS; NULL: none
  char* password;  // (both percent-decoded); never printed
  char* netrc;     // $MLCC_REMOTE_CACHE_NETRC; NULL: libcurl's default ~/.netrc
  mlcc_remote_options_t options;
  atomic_bool disabled;
  atomic_flag reason_set;
  char reason[400];  // why the store was switched off (written once, before |disabled|)
  atomic_uint_fast64_t errors, rejected, wait_ms, requests;
  atomic_uint consecutive_errors;
  const mlcc_remote_key_t* key;  // NULL: unsigned (remote_sign.h)
};

struct mlcc_remote_session_t {
  mlcc_remote_cache_t* remote;
#ifdef MLCC_HAVE_CURL
  CURL* curl;     // the current request's handle (request_handle)
  CURLSH* share;  // the session's connections, kept alive across handles
#endif
};

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

static void sha256_hex(const void* data, size_t size, char out[65]) {
  unsigned char d[32];
  unsigned int len = 0;
  out[0] = '\0';
  if (EVP_Digest(data, size, d, &len, EVP_sha256(), NULL) != 1 || len != 32) return;
  for (int i = 0; i < 32; ++i) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

//===----------------------------------------------------------------------===//
// ActionResult encoding
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_remote_encode_action_result(const char* hash, uint64_t size, uint8_t** out,
                                               size_t* out_size) {
  return mlcc_remote_encode_action_result_raw(hash, size, NULL, 0, out, out_size);
}

mlcc_status_t mlcc_remote_encode_action_result_raw(const char* hash, uint64_t size,
                                                   const void* stdout_raw, size_t raw_size,
                                                   uint8_t** out, size_t* out_size) {
  *out = NULL;
  *out_size = 0;
  MlccRev2__Digest digest = MLCC_REV2__DIGEST__INIT;
  digest.hash = (char*)hash;
  digest.has_size_bytes = 1;
  digest.size_bytes = (int64_t)size;
  MlccRev2__OutputFile file = MLCC_REV2__OUTPUT_FILE__INIT;
  file.path = (char*)MLCC_REMOTE_OUTPUT_PATH;
  file.digest = &digest;
  MlccRev2__OutputFile* files[1] = {&file};
  MlccRev2__ActionResult result = MLCC_REV2__ACTION_RESULT__INIT;
  result.n_output_files = 1;
  result.output_files = files;
  if (stdout_raw != NULL) {
    result.has_stdout_raw = 1;
    result.stdout_raw.data = (uint8_t*)stdout_raw;
    result.stdout_raw.len = raw_size;
  }
  size_t n = mlcc_rev2__action_result__get_packed_size(&result);
  uint8_t* buf = (uint8_t*)malloc(n ? n : 1);
  if (buf == NULL) return oom();
  *out_size = mlcc_rev2__action_result__pack(&result, buf);
  *out = buf;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_remote_decode_action_result(const uint8_t* data, size_t size,
                                               char out_hash[65], uint64_t* out_size) {
  out_hash[0] = '\0';
  *out_size = 0;
  MlccRev2__ActionResult* r = mlcc_rev2__action_result__unpack(NULL, size, data);
  if (r == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "not an ActionResult protobuf");
  }
  mlcc_status_t s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                     "the ActionResult has no output '%s'",
                                     MLCC_REMOTE_OUTPUT_PATH);
  for (size_t i = 0; i < r->n_output_files; ++i) {
    const MlccRev2__OutputFile* f = r->output_files[i];
    if (f->path == NULL || strcmp(f->path, MLCC_REMOTE_OUTPUT_PATH) != 0) continue;
    mlcc_status_free(s);
    s = mlcc_ok_status();
    if (f->digest == NULL || !mlcc_cache_key_is_valid(f->digest->hash) ||
        f->digest->size_bytes < 0 || (uint64_t)f->digest->size_bytes > MLCC_CACHE_MAX_PAYLOAD) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "the ActionResult's digest is not a SHA-256 digest of a sane size");
    } else {
      memcpy(out_hash, f->digest->hash, 65);
      *out_size = (uint64_t)f->digest->size_bytes;
    }
    break;
  }
  mlcc_rev2__action_result__free_unpacked(r, NULL);
  return s;
}

//===----------------------------------------------------------------------===//
// Store and sessions
//===----------------------------------------------------------------------===//

void mlcc_remote_redact_url(const char* url, char* buf, size_t buf_size) {
  const char* auth = strstr(url, "://");
  auth = auth != NULL ? auth + 3 : url;
  size_t auth_len = strcspn(auth, "/?#");
  const char* at = NULL;
  for (const char* p = auth; p < auth + auth_len; ++p) {
    if (*p == '@') at = p;
  }
  if (at == NULL) {
    snprintf(buf, buf_size, "%s", url);
  } else {
    snprintf(buf, buf_size, "%.*s%s", (int)(auth - url), url, at + 1);
  }
}

static int hex_value(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

// A malloc'ed, percent-decoded copy of |n| bytes at |s|.
static char* decode_part(const char* s, size_t n) {
  char* d = (char*)malloc(n + 1);
  if (d == NULL) return NULL;
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] == '%' && i + 2 < n && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      d[j++] = (char)(hex_value(s[i + 1]) << 4 | hex_value(s[i + 2]));
      i += 2;
    } else {
      d[j++] = s[i];
    }
  }
  d[j] = '\0';
  return d;
}

// Splits "user:password" (|n| bytes) into the store's credentials.
static bool set_credentials(mlcc_remote_cache_t* r, const char* s, size_t n, bool decode) {
  const char* colon = memchr(s, ':', n);
  size_t ul = colon ? (size_t)(colon - s) : n;
  const char* pw = colon ? colon + 1 : "";
  size_t pl = colon ? n - ul - 1 : 0;
  if (decode) {
    r->user = decode_part(s, ul);
    r->password = decode_part(pw, pl);
  } else {
    r->user = strndup(s, ul);
    r->password = strndup(pw, pl);
  }
  return r->user != NULL && r->password != NULL;
}

mlcc_status_t mlcc_remote_cache_open(const char* url, bool read_only,
                                     mlcc_remote_cache_t** out) {
  mlcc_remote_options_t o = {MLCC_REMOTE_DEFAULT_TIMEOUT_MS, MLCC_REMOTE_DEFAULT_BUDGET_MS,
                             MLCC_REMOTE_DEFAULT_MAX_ERRORS, read_only};
  return mlcc_remote_cache_open_with(url, &o, out);
}

mlcc_status_t mlcc_remote_cache_open_with(const char* url, const mlcc_remote_options_t* options,
                                          mlcc_remote_cache_t** out) {
  *out = NULL;
  if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
    char shown[512];
    mlcc_remote_redact_url(url, shown, sizeof(shown));
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "invalid remote cache URL '%s'; expected http://host:port[/instance]",
                            shown);
  }
#ifndef MLCC_HAVE_CURL
  (void)options;
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                          "this mlcc was built without libcurl: no remote cache");
#else
  static atomic_bool curl_ready;
  if (!atomic_load(&curl_ready)) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      return mlcc_make_status(MLCC_STATUS_INTERNAL, "cannot initialize libcurl");
    }
    atomic_store(&curl_ready, true);
  }
  mlcc_remote_cache_t* r = (mlcc_remote_cache_t*)calloc(1, sizeof(*r));
  if (r == NULL) return oom();
  r->options = *options;
  if (r->options.timeout_ms == 0) r->options.timeout_ms = MLCC_REMOTE_DEFAULT_TIMEOUT_MS;
  if (r->options.max_errors == 0) r->options.max_errors = 1;
  atomic_init(&r->disabled, false);
  atomic_flag_clear(&r->reason_set);
  // The userinfo leaves the URL here: it goes to libcurl as credentials and
  // is never part of a printed URL.
  const char* auth = strstr(url, "://") + 3;
  size_t auth_len = strcspn(auth, "/?#");
  const char* at = NULL;
  for (const char* p = auth; p < auth + auth_len; ++p) {
    if (*p == '@') at = p;
  }
  bool ok = true;
  if (at != NULL) {
    ok = set_credentials(r, auth, (size_t)(at - auth), true);
  } else {
    const char* env = getenv("MLCC_REMOTE_CACHE_CREDENTIALS");
    if (env != NULL && env[0] != '\0') ok = set_credentials(r, env, strlen(env), false);
  }
  const char* netrc = getenv("MLCC_REMOTE_CACHE_NETRC");
  if (ok && netrc != NULL && netrc[0] != '\0') ok = (r->netrc = strdup(netrc)) != NULL;
  size_t cap = strlen(url) + 1;
  r->url = ok ? (char*)malloc(cap) : NULL;
  if (r->url == NULL) {
    mlcc_remote_cache_close(r);
    return oom();
  }
  mlcc_remote_redact_url(url, r->url, cap);
  size_t n = strlen(r->url);
  while (n > 0 && r->url[n - 1] == '/') r->url[--n] = '\0';
  *out = r;
  return mlcc_ok_status();
#endif
}

void mlcc_remote_cache_close(mlcc_remote_cache_t* remote) {
  if (remote == NULL) return;
  free(remote->url);
  if (remote->password != NULL) memset(remote->password, 0, strlen(remote->password));
  free(remote->user);
  free(remote->password);
  free(remote->netrc);
  free(remote);
}

bool mlcc_remote_cache_read_only(const mlcc_remote_cache_t* remote) {
  return remote->options.read_only;
}
void mlcc_remote_cache_set_key(mlcc_remote_cache_t* remote, const mlcc_remote_key_t* key) {
  remote->key = key;
}
const char* mlcc_remote_cache_url(const mlcc_remote_cache_t* remote) { return remote->url; }
bool mlcc_remote_cache_disabled(const mlcc_remote_cache_t* remote) {
  return atomic_load(&((mlcc_remote_cache_t*)remote)->disabled);
}

const char* mlcc_remote_cache_disabled_reason(const mlcc_remote_cache_t* remote) {
  mlcc_remote_cache_t* r = (mlcc_remote_cache_t*)remote;
  return atomic_load(&r->disabled) ? r->reason : NULL;
}

void mlcc_remote_cache_stats(const mlcc_remote_cache_t* remote, mlcc_remote_stats_t* out) {
  mlcc_remote_cache_t* r = (mlcc_remote_cache_t*)remote;
  out->requests = atomic_load(&r->requests);
  out->errors = atomic_load(&r->errors);
  out->rejected = atomic_load(&r->rejected);
  out->wait_ms = atomic_load(&r->wait_ms);
}

// Switches the store off for the rest of the run; the first reason wins.
static void disable(mlcc_remote_cache_t* r, const char* fmt, ...) MLCC_PRINTF(2, 3);
static void disable(mlcc_remote_cache_t* r, const char* fmt, ...) {
  if (!atomic_flag_test_and_set(&r->reason_set)) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
    va_end(ap);
    atomic_store(&r->disabled, true);
  }
}

mlcc_remote_session_t* mlcc_remote_session_create(mlcc_remote_cache_t* remote) {
  mlcc_remote_session_t* s = (mlcc_remote_session_t*)calloc(1, sizeof(*s));
  if (s == NULL) return NULL;
  s->remote = remote;
#ifdef MLCC_HAVE_CURL
  s->share = curl_share_init();
  if (s->share == NULL ||
      curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK) {
    curl_share_cleanup(s->share);
    free(s);
    return NULL;
  }
#endif
  return s;
}

void mlcc_remote_session_destroy(mlcc_remote_session_t* session) {
  if (session == NULL) return;
#ifdef MLCC_HAVE_CURL
  curl_easy_cleanup(session->curl);
  curl_share_cleanup(session->share);
#endif
  free(session);
}

#ifdef MLCC_HAVE_CURL

typedef struct body_t {
  uint8_t* data;
  size_t size, cap, limit;
  bool too_big;
} body_t;

static size_t on_body(char* ptr, size_t size, size_t nmemb, void* userdata) {
  body_t* b = (body_t*)userdata;
  size_t n = size * nmemb;
  if (b->size + n > b->limit) {
    b->too_big = true;
    return 0;  // aborts the transfer
  }
  if (b->size + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->size + n) cap *= 2;
    uint8_t* grown = (uint8_t*)realloc(b->data, cap);
    if (grown == NULL) return 0;
    b->data = grown;
    b->cap = cap;
  }
  memcpy(b->data + b->size, ptr, n);
  b->size += n;
  return n;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// Common options of every request on a reset handle. |timeout_ms| bounds
// the connect and the whole transfer.
static void setup(mlcc_remote_session_t* s, const char* url, long timeout_ms) {
  CURL* c = s->curl;  // a fresh handle (request_handle)
  mlcc_remote_cache_t* r = s->remote;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM timeouts
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "mlcc");
  if (r->user != NULL) {
    curl_easy_setopt(c, CURLOPT_USERNAME, r->user);
    curl_easy_setopt(c, CURLOPT_PASSWORD, r->password);
  } else {
    curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
    if (r->netrc != NULL) curl_easy_setopt(c, CURLOPT_NETRC_FILE, r->netrc);
  }
}

// The time one request may take: the per-request timeout, cut to what is
// left of the budget. 0 when the budget is spent (the store is then off).
static long request_timeout(mlcc_remote_cache_t* r) {
  long t = (long)r->options.timeout_ms;
  if (r->options.budget_ms != 0) {
    uint64_t spent = atomic_load(&r->wait_ms);
    if (spent >= r->options.budget_ms) {
      disable(r, "spent its time budget of %.1f s for this run", r->options.budget_ms / 1000.0);
      return 0;
    }
    if ((uint64_t)t > r->options.budget_ms - spent) t = (long)(r->options.budget_ms - spent);
  }
  return t;
}

// Runs the prepared request, accounts its time, and classifies a transport
// failure: a timeout or a connection failure switches the store off at once.
static CURLcode perform(mlcc_remote_session_t* s, const char* url, long timeout_ms) {
  mlcc_remote_cache_t* r = s->remote;
  uint64_t t0 = now_ms();
  CURLcode rc = curl_easy_perform(s->curl);
  uint64_t spent = now_ms() - t0;
  atomic_fetch_add(&r->requests, 1);
  uint64_t total = atomic_fetch_add(&r->wait_ms, spent) + spent;
  if (rc != CURLE_OK) {
    atomic_fetch_add(&r->errors, 1);
    bool budget = r->options.budget_ms != 0 && total >= r->options.budget_ms;
    if (rc == CURLE_OPERATION_TIMEDOUT && budget && timeout_ms < (long)r->options.timeout_ms) {
      disable(r, "spent its time budget of %.1f s for this run (%s)",
              r->options.budget_ms / 1000.0, url);
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
      disable(r, "%s: timed out after %.1f s", url, timeout_ms / 1000.0);
    } else {
      disable(r, "%s: %s", url, curl_easy_strerror(rc));
    }
  } else if (r->options.budget_ms != 0 && total >= r->options.budget_ms) {
    disable(r, "spent its time budget of %.1f s for this run", r->options.budget_ms / 1000.0);
  }
  return rc;
}

// Counts an HTTP-level answer: errors in a row switch the store off.
static void http_outcome(mlcc_remote_cache_t* r, bool error, const char* url, long http) {
  if (!error) {
    atomic_store(&r->consecutive_errors, 0);
    return;
  }
  atomic_fetch_add(&r->errors, 1);
  unsigned run = atomic_fetch_add(&r->consecutive_errors, 1) + 1;
  if (run >= r->options.max_errors) {
    disable(r, "%u requests in a row failed (last: %s: HTTP status %ld%s)", run, url, http,
            http == 401 || http == 403 ? "; check the credentials" : "");
  }
}

// A fresh handle for each request, set up for |url| and sharing the
// session's connections. Not curl_easy_reset on one handle: libcurl 7.88
// (Debian 12) keeps the previous response's headers across a reset, and a
// next response whose first header line is folded (starts with a space)
// then reads freed memory (heap-use-after-free, found by cache_fuzz; issue
// 14). NULL on OOM.
static CURL* request_handle(mlcc_remote_session_t* s, const char* url, long timeout_ms) {
  curl_easy_cleanup(s->curl);
  s->curl = curl_easy_init();
  if (s->curl == NULL) return NULL;
  setup(s, url, timeout_ms);
  curl_easy_setopt(s->curl, CURLOPT_SHARE, s->share);
  return s->curl;
}

// Drops the response body of PUTs (nginx answers with an HTML page).
static size_t discard(char* ptr, size_t size, size_t nmemb, void* userdata) {
  (void)ptr;
  (void)userdata;
  return size * nmemb;
}

static char* make_url(const mlcc_remote_cache_t* r, const char* kind, const char* hash) {
  size_t n = strlen(r->url) + strlen(kind) + 70;
  char* u = (char*)malloc(n);
  if (u) snprintf(u, n, "%s/%s/%s", r->url, kind, hash);
  return u;
}

// GET |url| into |body| (limit |limit|). HIT on 200, MISS on 404.
static mlcc_remote_result_t get(mlcc_remote_session_t* s, const char* what, const char* url,
                                size_t limit, body_t* body, char* why, size_t why_size) {
  memset(body, 0, sizeof(*body));
  body->limit = limit;
  long http = 0;
  long timeout = request_timeout(s->remote);
  if (timeout == 0) {  // |reason| may still be being written by another thread
    snprintf(why, why_size, "the remote cache's time budget for this run is spent");
    return MLCC_REMOTE_ERROR;
  }
  if (request_handle(s, url, timeout) == NULL) {
    snprintf(why, why_size, "out of memory");
    return MLCC_REMOTE_ERROR;
  }
  curl_easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(s->curl, CURLOPT_WRITEDATA, body);
  CURLcode rc = perform(s, url, timeout);
  curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &http);
  if (rc == CURLE_WRITE_ERROR && body->too_big) {
    snprintf(why, why_size, "%s %s is larger than %zu bytes", what, url, limit);
    return MLCC_REMOTE_REJECTED;
  }
  if (rc != CURLE_OK) {
    snprintf(why, why_size, "%s: %s", url, curl_easy_strerror(rc));
    return MLCC_REMOTE_ERROR;
  }
  http_outcome(s->remote, http != 200 && http != 404, url, http);
  if (http == 404) {
    snprintf(why, why_size, "no %s at %s", what, url);
    return MLCC_REMOTE_MISS;
  }
  if (http != 200) {
    snprintf(why, why_size, "%s: HTTP status %ld", url, http);
    return MLCC_REMOTE_ERROR;
  }
  return MLCC_REMOTE_HIT;
}

static bool contains(const uint8_t* hay, size_t n, const char* needle) {
  size_t m = strlen(needle);
  if (m == 0) return true;
  if (m > n) return false;
  for (size_t i = 0; i + m <= n; ++i) {
    if (hay[i] == (uint8_t)needle[0] && memcmp(hay + i, needle, m) == 0) return true;
  }
  return false;
}

#endif  // MLCC_HAVE_CURL

static mlcc_remote_result_t get_entry(mlcc_remote_session_t* session, const char* key,
                                      const char* symbol, bool object, uint8_t** out_data,
                                      size_t* out_size, char* why, size_t why_size);

mlcc_remote_result_t mlcc_remote_cache_get(mlcc_remote_session_t* session, const char* key,
                                           const char* symbol, uint8_t** out_data,
                                           size_t* out_size, char* why, size_t why_size) {
  return get_entry(session, key, symbol, true, out_data, out_size, why, why_size);
}

mlcc_remote_result_t mlcc_remote_cache_get_blob(mlcc_remote_session_t* session, const char* key,
                                                uint8_t** out_data, size_t* out_size, char* why,
                                                size_t why_size) {
  return get_entry(session, key, NULL, false, out_data, out_size, why, why_size);
}

static mlcc_remote_result_t get_entry(mlcc_remote_session_t* session, const char* key,
                                      const char* symbol, bool object, uint8_t** out_data,
                                      size_t* out_size, char* why, size_t why_size) {
  *out_data = NULL;
  *out_size = 0;
  why[0] = '\0';
#ifndef MLCC_HAVE_CURL
  (void)session;
  (void)key;
  (void)symbol;
  (void)object;
  snprintf(why, why_size, "built without libcurl");
  return MLCC_REMOTE_ERROR;
#else
  mlcc_remote_cache_t* r = session->remote;
  if (atomic_load(&r->disabled)) {
    snprintf(why, why_size, "remote cache off after an earlier error: %s", r->reason);
    return MLCC_REMOTE_ERROR;
  }
  if (!mlcc_cache_key_is_valid(key)) {
    snprintf(why, why_size, "invalid key");
    return MLCC_REMOTE_MISS;
  }
  char* ac_url = make_url(r, "ac", key);
  if (ac_url == NULL) {
    snprintf(why, why_size, "out of memory");
    return MLCC_REMOTE_ERROR;
  }
  body_t ac;
  mlcc_remote_result_t res = get(session, "action result", ac_url, kMaxActionResult, &ac, why,
                                 why_size);
  char hash[65];
  uint64_t size = 0;
  if (res == MLCC_REMOTE_HIT) {
    mlcc_status_t s = mlcc_remote_decode_action_result(ac.data ? ac.data : (const uint8_t*)"",
                                                       ac.size, hash, &size);
    if (s != NULL) {
      snprintf(why, why_size, "%s: %s", ac_url, mlcc_status_message(s));
      mlcc_status_free(s);
      res = MLCC_REMOTE_REJECTED;
    } else if (r->key != NULL) {  // issue 14: signed entries only
      s = mlcc_remote_key_verify_action_result(r->key, key, ac.data, ac.size);
      if (s != NULL) {
        snprintf(why, why_size, "%s %s: rejected", ac_url, mlcc_status_message(s));
        mlcc_status_free(s);
        res = MLCC_REMOTE_REJECTED;
      }
    }
  }
  free(ac.data);
  free(ac_url);
  if (res == MLCC_REMOTE_REJECTED) atomic_fetch_add(&r->rejected, 1);
  if (res != MLCC_REMOTE_HIT) return res;

  char* cas_url = make_url(r, "cas", hash);
  if (cas_url == NULL) {
    snprintf(why, why_size, "out of memory");
    return MLCC_REMOTE_ERROR;
  }
  body_t blob;
  res = get(session, "blob", cas_url, (size_t)size, &blob, why, why_size);
  if (res == MLCC_REMOTE_HIT) {
    char actual[65];
    sha256_hex(blob.data ? blob.data : (const uint8_t*)"", blob.size, actual);
    if (blob.size != size || strcmp(actual, hash) != 0) {
      snprintf(why, why_size,
               "%s does not match its digest (%zu bytes, sha256 %.16s...; expected %llu bytes, "
               "%.16s...): rejected",
               cas_url, blob.size, actual, (unsigned long long)size, hash);
      res = MLCC_REMOTE_REJECTED;
    } else if (object && (blob.size < 4 || memcmp(blob.data, "\x7f" "ELF", 4) != 0)) {
      snprintf(why, why_size, "%s is not an object file: rejected", cas_url);
      res = MLCC_REMOTE_REJECTED;
    } else if (symbol != NULL && !contains(blob.data, blob.size, symbol)) {
      snprintf(why, why_size, "%s does not define %s: rejected", cas_url, symbol);
      res = MLCC_REMOTE_REJECTED;
    }
  }
  free(cas_url);
  if (res != MLCC_REMOTE_HIT) {
    free(blob.data);
    if (res == MLCC_REMOTE_REJECTED) atomic_fetch_add(&r->rejected, 1);
    return res;
  }
  if (blob.data == NULL) blob.data = (uint8_t*)malloc(1);
  *out_data = blob.data;
  *out_size = blob.size;
  return MLCC_REMOTE_HIT;
#endif
}

mlcc_status_t mlcc_remote_cache_put(mlcc_remote_session_t* session, const char* key,
                                    const void* data, size_t size) {
#ifndef MLCC_HAVE_CURL
  (void)session;
  (void)key;
  (void)data;
  (void)size;
  return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "built without libcurl");
#else
  mlcc_remote_cache_t* r = session->remote;
  if (r->options.read_only || (r->key != NULL && !mlcc_remote_key_can_sign(r->key))) {
    return mlcc_ok_status();
  }
  if (atomic_load(&r->disabled)) {
    return mlcc_make_status(MLCC_STATUS_IO, "remote cache off after an earlier error: %s",
                            r->reason);
  }
  if (!mlcc_cache_key_is_valid(key)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "invalid cache key");
  }
  char hash[65];
  sha256_hex(data, size, hash);
  uint8_t* ar = NULL;
  size_t ar_size = 0;
  MLCC_RETURN_IF_ERROR(r->key != NULL ? mlcc_remote_key_sign_action_result(r->key, key, hash, size,
                                                                           &ar, &ar_size)
                                       : mlcc_remote_encode_action_result(hash, size, &ar,
                                                                          &ar_size));
  const char* kinds[2] = {"cas", "ac"};
  const char* names[2] = {hash, key};
  const void* bodies[2] = {size ? data : "", ar};
  size_t sizes[2] = {size, ar_size};
  mlcc_status_t s = mlcc_ok_status();
  for (int i = 0; i < 2 && s == NULL; ++i) {
    char* url = make_url(r, kinds[i], names[i]);
    if (url == NULL) {
      s = oom();
      break;
    }
    long http = 0;
    CURLcode rc;
    long timeout = request_timeout(r);
    if (timeout == 0) {
      s = mlcc_make_status(MLCC_STATUS_IO, "the remote cache's time budget for this run is spent");
      free(url);
      break;
    }
    CURL* c = request_handle(session, url, timeout);
    if (c == NULL) {
      s = oom();
      free(url);
      break;
    }
    {
      struct curl_slist* headers = NULL;
      headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
      headers = curl_slist_append(headers, "Expect:");
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, bodies[i]);
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)sizes[i]);
      curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
      rc = perform(session, url, timeout);
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
      curl_slist_free_all(headers);
    }
    if (rc != CURLE_OK) {
      s = mlcc_make_status(MLCC_STATUS_IO, "cannot upload to %s: %s", url,
                           curl_easy_strerror(rc));
    } else {
      http_outcome(r, http < 200 || http > 299, url, http);
      if (http < 200 || http > 299) {
        s = mlcc_make_status(MLCC_STATUS_IO, "cannot upload to %s: HTTP status %ld", url, http);
      }
    }
    free(url);
  }
  free(ar);
  return s;
#endif
}

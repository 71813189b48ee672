// SPDX-License-Identifier: Apache-2.0
// The kernel pool (kernel_pool.h): distinct kernels on -j threads through the
// local and remote kernel caches.
#include "driver/kernel_pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "driver/cache_explain.h"
#include "driver/cleanup.h"
#include "driver/fsutil.h"
#include "driver/jobs.h"
#include "driver/object_check.h"
#include "driver/strbuf.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

// Takes a malloc'ed string into the arena (freeing it); NULL on OOM.
static const char* arena_adopt(mlcc_arena_t* arena, char* s) {
  if (s == NULL) return NULL;
  const char* copy = mlcc_arena_strdup(arena, s);
  free(s);
  return copy;
}

// How a distinct kernel's object was obtained.
typedef enum kernel_origin_e {
  KERNEL_COMPILED = 0,
  KERNEL_HIT_LOCAL,
  KERNEL_HIT_REMOTE,
} kernel_origin_t;

// One distinct kernel (the first kernel index with its key).
typedef struct kernel_work_t {
  uint32_t kernel_index;
  char key[65];        // the code generator's kernel key (names the symbol)
  char store_key[65];  // the cache's key: |key| + compiler identity
  char symbol[40];
  const char* path;
  mlcc_status_t status;
  kernel_origin_t origin;
  char note[512];     // -v: a damaged local entry / rejected remote entry
  bool rejected;      // the remote's content failed verification
  char rejected_why[400];
  char explain[2048];  // -d explain-cache: why the lookups missed
  char label[160];     // -d explain-cache: "node 'NAME', Conv+Relu"
  char warning[512];  // a failed store or upload (printed once per kind)
  char refused[400];   // why a cached object was refused (object_check.h)
} kernel_work_t;

typedef struct kernel_pool_t {
  const mlcc_kernel_pool_options_t* o;
  mlcc_codegen_options_t cg;
  mlcc_output_kind_t kind;      // object, or the kernel texts of -S / --emit=ll|asm
  kernel_work_t* work;
  uint32_t n_work;
  mlcc_cache_t* cache;          // NULL: no local cache
  mlcc_remote_cache_t* remote;  // NULL: no remote cache
  atomic_uint next;
  atomic_bool failed;
  // ninja-style "[n/N]" status line (only on a terminal, not with -v).
  bool status_line;
  pthread_mutex_t status_mu;
  uint32_t n_done;
} kernel_pool_t;

static void append(char* buf, size_t cap, const char* fmt, ...) MLCC_PRINTF(3, 4);
static void append(char* buf, size_t cap, const char* fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

// The terminal's width in columns (80 when unknown).
static int terminal_columns(FILE* f) {
  struct winsize ws;
  if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

// "[n/N] compiled Conv+Relu 'conv1' for x86_64-linux-gnu (mlcc_k_...)": the
// kernel's ops (at most 3, then "+N"), its anchor node's name and the
// target, cut to the terminal's width like ninja's status line.
static void print_status(kernel_pool_t* pool, const kernel_work_t* w) {
  if (!pool->status_line) return;
  const mlcc_kernel_pool_options_t* o = pool->o;
  const mlcc_kernel_t* k = &o->graph->kernels[w->kernel_index];
  char ops[160] = "";
  for (uint32_t i = 0; i < k->n_nodes && i < 3; ++i) {
    append(ops, sizeof(ops), "%s%s", i ? "+" : "", mlcc_op_name(k->nodes[i]->op));
  }
  if (k->n_nodes > 3) append(ops, sizeof(ops), "+%u", k->n_nodes - 3);
  const char* node = k->n_nodes > 0 ? k->nodes[0]->name : "";
  pthread_mutex_lock(&pool->status_mu);
  pool->n_done++;
  char line[512];
  int n = snprintf(line, sizeof(line), "[%u/%u] %s %s%s%s%s for %s (%s)", pool->n_done,
                   pool->n_work, w->origin == KERNEL_COMPILED ? "compiled" : "cached", ops,
                   node[0] ? " '" : "", node, node[0] ? "'" : "", o->target->triple, w->symbol);
  for (char* p = line; *p; ++p) {  // a model's node name must not drive the terminal
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  }
  int cols = terminal_columns(o->diag) - 1;
  if (n > cols && cols > 3 && (size_t)cols < sizeof(line)) {
    memcpy(line + cols - 3, "...", 4);
  }
  fprintf(o->diag, "\r%s\x1b[K", line);
  fflush(o->diag);
  pthread_mutex_unlock(&pool->status_mu);
}

// Issue 14: every object from a cache, local or remote, passes
// mlcc_object_check before use. False (with |w->refused| and the -v note
// set) when it does not: the caller then treats it as a miss.
static bool object_acceptable(kernel_pool_t* pool, kernel_work_t* w, const uint8_t* data,
                              size_t size, const char* from) {
  mlcc_status_t s = mlcc_ok_status();
  if (pool->kind != MLCC_OUTPUT_OBJECT) {
    s = mlcc_codegen_check_kernel_text(pool->kind, data, size, w->symbol,
                                       mlcc_object_symbol_allowed);
  } else {
    mlcc_object_expect_t expect;
    s = mlcc_object_expect_for_target(pool->o->target, MLCC_OBJECT_KERNEL, w->symbol, &expect);
    if (s == NULL) s = mlcc_object_check(data, size, &expect);
  }
  if (s == NULL) return true;
  snprintf(w->refused, sizeof(w->refused), "the %s object for %s %s", from, w->symbol,
           mlcc_status_message(s));
  snprintf(w->note, sizeof(w->note), "%s: rejected; rebuilding", w->refused);
  append(w->explain, sizeof(w->explain), "%s%s: rejected (%s)", w->explain[0] ? "; " : "",
         from, mlcc_status_message(s));
  mlcc_status_free(s);
  return false;
}

// Local lookup, then remote. True when |w->path| holds the object.
static bool fetch_cached(kernel_pool_t* pool, mlcc_remote_session_t* session, kernel_work_t* w,
                         mlcc_status_t* out_status) {
  *out_status = mlcc_ok_status();
  uint8_t* data = NULL;
  size_t size = 0;
  char why[400];
  if (pool->cache != NULL) {
    mlcc_cache_result_t r = mlcc_cache_lookup(pool->cache, w->store_key, &data, &size, why, sizeof(why));
    if (r == MLCC_CACHE_HIT && !object_acceptable(pool, w, data, size, "local cache")) {
      mlcc_cache_count_rejected(pool->cache, true);
      free(data);
      data = NULL;
      r = MLCC_CACHE_DAMAGED;
    } else if (r == MLCC_CACHE_HIT) {
      *out_status = mlcc_fs_write_file(w->path, data, size);
      free(data);
      w->origin = KERNEL_HIT_LOCAL;
      return true;
    }
    if (w->refused[0] == '\0') append(w->explain, sizeof(w->explain), "local: %s", why);
    if (r == MLCC_CACHE_DAMAGED && w->refused[0] == '\0') {
      snprintf(w->note, sizeof(w->note), "kernel cache %s; rebuilding", why);
    }
  } else {
    append(w->explain, sizeof(w->explain), "local: cache disabled");
  }
  if (session == NULL) return false;
  mlcc_remote_result_t rr =
      mlcc_remote_cache_get(session, w->store_key, w->symbol, &data, &size, why, sizeof(why));
  if (rr == MLCC_REMOTE_HIT && !object_acceptable(pool, w, data, size, "remote cache")) {
    if (pool->cache != NULL) mlcc_cache_count_rejected(pool->cache, false);
    free(data);
    return false;
  }
  if (rr == MLCC_REMOTE_HIT) {
    if (pool->cache != NULL) {
      mlcc_status_t st = mlcc_cache_store(pool->cache, w->store_key, data, size);
      if (st != NULL) {
        snprintf(w->warning, sizeof(w->warning), "cannot store in the kernel cache: %s",
                 mlcc_status_message(st));
        mlcc_status_free(st);
      }
      mlcc_cache_count_remote_hit(pool->cache);
    }
    *out_status = mlcc_fs_write_file(w->path, data, size);
    free(data);
    w->origin = KERNEL_HIT_REMOTE;
    return true;
  }
  append(w->explain, sizeof(w->explain), "; remote: %s", why);
  if (rr == MLCC_REMOTE_REJECTED) {
    w->rejected = true;
    snprintf(w->rejected_why, sizeof(w->rejected_why), "%s", why);
    snprintf(w->note, sizeof(w->note), "remote kernel cache: %s; rebuilding", why);
  } else if (rr == MLCC_REMOTE_ERROR && w->warning[0] == '\0') {
    snprintf(w->warning, sizeof(w->warning), "remote kernel cache: %s", why);
  }
  return false;
}

static void* kernel_worker(void* arg) {
  kernel_pool_t* pool = (kernel_pool_t*)arg;
  const mlcc_kernel_pool_options_t* o = pool->o;
  mlcc_remote_session_t* session = NULL;
  if (pool->remote != NULL) session = mlcc_remote_session_create(pool->remote);
  while (!atomic_load(&pool->failed)) {
    uint32_t i = atomic_fetch_add(&pool->next, 1);
    if (i >= pool->n_work) break;
    kernel_work_t* w = &pool->work[i];
    mlcc_status_t s = mlcc_ok_status();
    if (fetch_cached(pool, session, w, &s)) {
      if (s == NULL && w->origin == KERNEL_HIT_REMOTE && pool->cache != NULL &&
          !mlcc_cache_is_read_only(pool->cache)) {
        // Copied into the local cache: record its key's components too, so
        // that a later miss there is explained (cache_explain.h).
        char rid[65];
        char* rec = NULL;
        mlcc_status_free(mlcc_cache_explain_describe(o->graph, w->kernel_index, &pool->cg, w->key,
                                                     w->store_key, rid, &rec, NULL, 0));
        if (rec != NULL) mlcc_cache_record_put(pool->cache, rid, rec);
        free(rec);
      }
      if (s != NULL) {
        w->status = s;
        atomic_store(&pool->failed, true);
      }
      print_status(pool, w);
      continue;
    }
    // A miss: the key's components, to explain it against the node's
    // previous entry and to record them with the new one (cache_explain.h).
    char record_id[65];
    char* record = NULL;
    if (pool->cache != NULL || o->explain_cache) {
      mlcc_status_t rs = mlcc_cache_explain_describe(o->graph, w->kernel_index, &pool->cg, w->key,
                                                     w->store_key, record_id, &record, w->label,
                                                     sizeof(w->label));
      mlcc_status_free(rs);  // best effort: no record, no comparison
    }
    if (record != NULL && o->explain_cache) {
      char* previous = pool->cache ? mlcc_cache_record_get(pool->cache, record_id) : NULL;
      char diff[1024];
      mlcc_cache_explain_diff(previous, record, diff, sizeof(diff));
      append(w->explain, sizeof(w->explain), "; %s", diff);
      free(previous);
    }
    if (o->verbose) {
      // One fputs per line so concurrent workers do not interleave.
      mlcc_strbuf_t sb;
      mlcc_strbuf_init(&sb);
      char kernel_arg[32];
      snprintf(kernel_arg, sizeof(kernel_arg), "--kernel=%u", w->kernel_index);
      const char* parts[] = {"mlcc", "-cc1", "codegen-kernel", kernel_arg, "-o", w->path};
      for (size_t p = 0; p < sizeof(parts) / sizeof(parts[0]); ++p) {
        mlcc_strbuf_append_char(&sb, ' ');
        mlcc_job_quote_arg(&sb, parts[p]);
      }
      mlcc_strbuf_append_char(&sb, '\n');
      fputs(mlcc_strbuf_cstr(&sb), o->diag);
      mlcc_strbuf_deinit(&sb);
    }
    mlcc_buffer_t buf = {0};
    s = mlcc_codegen_kernel(o->graph, w->kernel_index, &pool->cg, pool->kind, &buf);
    if (s == NULL) s = mlcc_fs_write_file(w->path, buf.data, buf.size);
    if (s == NULL && pool->cache != NULL) {
      mlcc_status_t st = mlcc_cache_store(pool->cache, w->store_key, buf.data, buf.size);
      if (st != NULL) {
        snprintf(w->warning, sizeof(w->warning), "cannot store in the kernel cache: %s",
                 mlcc_status_message(st));
        mlcc_status_free(st);
      } else if (record != NULL) {
        mlcc_cache_record_put(pool->cache, record_id, record);
      }
    }
    free(record);
    if (s == NULL && session != NULL && !mlcc_remote_cache_read_only(pool->remote)) {
      mlcc_status_t st = mlcc_remote_cache_put(session, w->store_key, buf.data, buf.size);
      if (st != NULL) {
        if (w->warning[0] == '\0') {
          snprintf(w->warning, sizeof(w->warning), "remote kernel cache: %s",
                   mlcc_status_message(st));
        }
        mlcc_status_free(st);
      }
    }
    mlcc_buffer_deinit(&buf);
    w->origin = KERNEL_COMPILED;
    if (s != NULL) {
      w->status = s;
      atomic_store(&pool->failed, true);
    }
    print_status(pool, w);
  }
  mlcc_remote_session_destroy(session);
  return NULL;
}


// Opens the local and remote stores for this run. Failures only turn them
// off, with a warning: the cache never breaks a build.
static void open_caches(const mlcc_kernel_pool_options_t* o, kernel_pool_t* pool) {
  pool->cache = o->local_cache != NULL ? o->local_cache(o->local_cache_ctx) : NULL;
  if (o->remote_url != NULL) {
    mlcc_status_t s = mlcc_remote_cache_open_with(o->remote_url, &o->remote, &pool->remote);
    if (s != NULL) {
      fprintf(o->diag, "mlcc: warning: remote kernel cache disabled: %s\n",
              mlcc_status_message(s));
      mlcc_status_free(s);
    }
    if (pool->remote != NULL && o->remote_key != NULL) {
      mlcc_remote_cache_set_key(pool->remote, o->remote_key);
    }
  }
  if (o->verbose) {
    if (pool->cache != NULL) {
      fprintf(o->diag, "mlcc: kernel cache: %s%s\n", mlcc_cache_dir(pool->cache),
              mlcc_cache_is_read_only(pool->cache) ? " (read-only)" : "");
    } else {
      fprintf(o->diag, "mlcc: kernel cache: off\n");
    }
    if (pool->remote != NULL) {
      fprintf(o->diag, "mlcc: remote kernel cache: %s%s\n", mlcc_remote_cache_url(pool->remote),
              o->remote.read_only ? " (read-only)" : "");
      if (o->remote_key != NULL) {
        fprintf(o->diag, "mlcc: remote kernel cache: signed entries only (%s key %s%s)\n",
                mlcc_remote_key_algorithm(o->remote_key), mlcc_remote_key_id(o->remote_key),
                mlcc_remote_key_can_sign(o->remote_key) ? "" : ", verify only: no uploads");
      }
    }
  }
}

// -v, -d explain-cache and warnings, in kernel order (deterministic under -j).
static void report_kernels(const mlcc_kernel_pool_options_t* o, const kernel_pool_t* pool) {
  // A remote that was switched off gets one warning saying why; its
  // per-kernel errors are then only consequences.
  const char* off = pool->remote ? mlcc_remote_cache_disabled_reason(pool->remote) : NULL;
  bool warned_store = false, warned_remote = off != NULL;
  uint32_t n_rejected = 0;
  const char* first_rejected = NULL;
  uint32_t n_refused = 0;
  const char* first_refused = NULL;
  for (uint32_t i = 0; i < pool->n_work; ++i) {
    if (pool->work[i].status == NULL && pool->work[i].refused[0] != '\0') {
      if (n_refused++ == 0) first_refused = pool->work[i].refused;
    }
  }
  if (n_refused != 0) {  // once per run (issue 14): foreign code in a cache
    fprintf(o->diag,
            "mlcc: warning: %u cached kernel object%s rejected and replaced (first: %s)\n",
            n_refused, n_refused == 1 ? "" : "s", first_refused);
  }
  for (uint32_t i = 0; i < pool->n_work; ++i) {
    const kernel_work_t* w = &pool->work[i];
    if (w->status != NULL) continue;
    if (w->rejected && n_rejected++ == 0) first_rejected = w->rejected_why;
    if (w->note[0] && o->verbose) fprintf(o->diag, "mlcc: note: %s\n", w->note);
    if (o->explain_cache && w->origin == KERNEL_COMPILED) {
      fprintf(o->diag, "mlcc: explain: kernel %u %s (%s): %s\n", w->kernel_index, w->symbol,
              w->label[0] ? w->label : "?", w->explain);
    }
    if (o->verbose) {
      fprintf(o->diag, "mlcc: kernel %u %s: %s\n", w->kernel_index, w->symbol,
              w->origin == KERNEL_COMPILED     ? "compiled"
              : w->origin == KERNEL_HIT_LOCAL ? "hit"
                                              : "hit (remote)");
    }
    if (w->warning[0]) {
      bool remote = strncmp(w->warning, "remote", 6) == 0;
      bool* warned = remote ? &warned_remote : &warned_store;
      if (!*warned) {
        fprintf(o->diag, "mlcc: warning: %s%s\n", w->warning,
                remote ? "; continuing without it" : "");
        *warned = true;
      }
    }
  }
  if (off != NULL) {
    fprintf(o->diag, "mlcc: warning: remote kernel cache %s: %s; off for the rest of this run\n",
            mlcc_remote_cache_url(pool->remote), off);
  }
  if (n_rejected != 0) {
    // Content that failed verification is a poisoned or damaged store: say
    // so without -v, once (the first reason names the URL).
    fprintf(o->diag,
            "mlcc: warning: remote kernel cache: %u downloaded kernel%s rejected and rebuilt "
            "(first: %s)\n",
            n_rejected, n_rejected == 1 ? " was" : "s were",
            first_rejected);
  }
}

// A kernel whose key an earlier kernel of the model has is not looked up
// or compiled again; its node gets an explain record all the same, so that
// a later change to it alone is explained (cache_explain.h).
static void record_shared_kernels(const mlcc_kernel_pool_options_t* o,
                                  const kernel_pool_t* pool, const uint32_t* shared) {
  if (shared == NULL || pool->cache == NULL || mlcc_cache_is_read_only(pool->cache)) return;
  for (uint32_t k = 0; k < o->graph->n_kernels; ++k) {
    if (shared[k] == 0) continue;
    const kernel_work_t* w = &pool->work[shared[k] - 1];
    if (w->origin == KERNEL_HIT_LOCAL) continue;  // recorded when it was stored
    char rid[65];
    char* rec = NULL;
    mlcc_status_free(mlcc_cache_explain_describe(o->graph, k, &pool->cg, w->key, w->store_key,
                                                 rid, &rec, NULL, 0));
    if (rec != NULL) mlcc_cache_record_put(pool->cache, rid, rec);
    free(rec);
  }
}

// The store key of a kernel's object, or of its LLVM IR / assembly text (a
// separate entry under a key derived from the kernel key and the kind, so
// that the three never collide and a text is checked as a text).
static mlcc_status_t kernel_store_key(mlcc_output_kind_t kind, const char key[65],
                                      char out[65]) {
  if (kind == MLCC_OUTPUT_OBJECT) {
    mlcc_cache_store_key(key, out);
    return mlcc_ok_status();
  }
  char text[128];
  int n = snprintf(text, sizeof(text), "mlcc-kernel-text-1\n%s\n%s",
                   kind == MLCC_OUTPUT_LL ? "ll" : "asm", key);
  char derived[65];
  MLCC_RETURN_IF_ERROR(mlcc_fs_sha256_buffer(text, (size_t)n, derived));
  mlcc_cache_store_key(derived, out);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_kernel_pool_run(const mlcc_kernel_pool_options_t* o, mlcc_arena_t* arena,
                                   mlcc_kernel_pool_result_t* out) {
  memset(out, 0, sizeof(*out));
  const mlcc_graph_t* g = o->graph;
  kernel_work_t* work = (kernel_work_t*)calloc(g->n_kernels ? g->n_kernels : 1, sizeof(*work));
  if (work == NULL) return oom();
  // shared[k] = 1 + the work item of a kernel whose key kernel k shares
  // (0: its own); only for explain records, so NULL on OOM is fine.
  uint32_t* shared = (uint32_t*)calloc(g->n_kernels ? g->n_kernels : 1, sizeof(*shared));
  uint32_t n_work = 0;
  mlcc_status_t s = mlcc_ok_status();
  // Keys first (cheap, serial): dedupe in first-appearance order.
  for (uint32_t k = 0; k < g->n_kernels && s == NULL; ++k) {
    char key[65];
    s = mlcc_codegen_kernel_key(g, k, &o->codegen, key);
    if (s != NULL) break;
    bool seen = false;
    for (uint32_t j = 0; j < n_work && !seen; ++j) {
      seen = strcmp(work[j].key, key) == 0;
      if (seen && shared != NULL) shared[k] = j + 1;
    }
    if (seen) continue;
    kernel_work_t* w = &work[n_work++];
    w->kernel_index = k;
    memcpy(w->key, key, sizeof(key));
    mlcc_codegen_kernel_symbol(key, w->symbol);
    s = kernel_store_key(o->kind, key, w->store_key);
    if (s != NULL) break;
    char file[64];
    snprintf(file, sizeof(file), "%s.%s", w->symbol,
             o->kind == MLCC_OUTPUT_LL ? "ll" : o->kind == MLCC_OUTPUT_ASM ? "s" : "o");
    w->path = arena_adopt(arena, mlcc_fs_join(o->dir, file));
    if (w->path == NULL) s = oom();
  }
  if (s == NULL) {
    kernel_pool_t pool;
    memset(&pool, 0, sizeof(pool));
    pool.o = o;
    pool.cg = o->codegen;
    pool.kind = o->kind;
    pool.work = work;
    pool.n_work = n_work;
    atomic_init(&pool.next, 0);
    atomic_init(&pool.failed, false);
    const char* term = getenv("TERM");
    pool.status_line = !o->verbose && isatty(fileno(o->diag)) && n_work > 0 &&
                       !(term != NULL && strcmp(term, "dumb") == 0);
    pthread_mutex_init(&pool.status_mu, NULL);
    if (n_work > 0) open_caches(o, &pool);
    uint32_t n_threads = o->jobs;
    if (n_threads > n_work) n_threads = n_work;
    pthread_t threads[64];
    if (n_threads > 64) n_threads = 64;
    uint32_t started = 0;
    // Workers start with the interrupt signals blocked: only this thread
    // runs the cleanup handler (driver/cleanup.h).
    sigset_t old_mask;
    mlcc_cleanup_block(&old_mask);
    for (uint32_t t = 1; t < n_threads; ++t) {  // the calling thread is worker 0
      if (pthread_create(&threads[started], NULL, kernel_worker, &pool) != 0) break;
      ++started;
    }
    mlcc_cleanup_unblock(&old_mask);
    kernel_worker(&pool);
    for (uint32_t t = 0; t < started; ++t) pthread_join(threads[t], NULL);
    if (pool.status_line) fprintf(o->diag, "\r\x1b[K");
    // Report the failure of the lowest kernel index: deterministic under -j.
    for (uint32_t i = 0; i < n_work; ++i) {
      if (work[i].status != NULL) {
        if (s == NULL) {
          s = work[i].status;
        } else {
          mlcc_status_free(work[i].status);
        }
      }
    }
    if (s == NULL && atomic_load(&pool.next) < n_work) {
      s = mlcc_make_status(MLCC_STATUS_INTERNAL, "kernel workers stopped early");
    }
    if (s == NULL) report_kernels(o, &pool);
    if (s == NULL) record_shared_kernels(o, &pool, shared);
    if (s == NULL) {
      out->paths = (const char**)mlcc_arena_alloc(arena, (n_work ? n_work : 1) * sizeof(char*),
                                                  _Alignof(char*));
      if (out->paths == NULL) s = oom();
      for (uint32_t i = 0; i < n_work && s == NULL; ++i) out->paths[i] = work[i].path;
    }
    out->n_distinct = n_work;
    for (uint32_t i = 0; i < n_work; ++i) {
      if (work[i].origin == KERNEL_COMPILED) out->n_compiled++;
      if (work[i].origin == KERNEL_HIT_LOCAL) out->n_cache_hits++;
      if (work[i].origin == KERNEL_HIT_REMOTE) out->n_remote_hits++;
    }
    if (pool.remote != NULL && pool.cache != NULL) {
      mlcc_remote_stats_t rs;
      mlcc_remote_cache_stats(pool.remote, &rs);
      mlcc_cache_count_remote(pool.cache, rs.errors, rs.rejected, rs.wait_ms);
    }
    mlcc_remote_cache_close(pool.remote);  // the local store stays open for the entry
    pthread_mutex_destroy(&pool.status_mu);
  }
  free(shared);
  free(work);
  return s;
}

// SPDX-License-Identifier: Apache-2.0
// See mlcc_pthread_pfor.h. C11 atomics + pthreads; no other dependency.
//
// Task hand-out: one 64-bit ticket word holds (job << 40 | lo << 20 | hi),
// the tasks [lo, hi) of job j not yet claimed. The caller claims task lo by
// CAS'ing lo to lo + 1, a worker task hi - 1 by CAS'ing hi to hi - 1, only
// while lo < hi and the word still carries job j. The caller opens job j + 1
// by storing (j + 1, 0, n) after every task of job j has finished (lo == hi),
// so a thread that was preempted in the middle of a claim can never run a
// task twice, run one of a later job with stale fn/arg, or count one that
// did not run: its CAS compares the whole word, job number included.
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif
#include "mlcc_pthread_pfor.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kHiBits = 20, kJobShift = 40 };
#define kIdxMask ((UINT64_C(1) << kHiBits) - 1)
#define kJobMask ((UINT64_C(1) << (64 - kJobShift)) - 1)
// Most tasks of one job; a larger n runs as several jobs.
#define kMaxJobTasks kIdxMask

// The fields the threads write while a job runs sit on cache lines of their
// own: the workers poll |generation| while the caller and workers CAS the
// ticket and count |done|.
struct mlcc_pthread_pool_t {
  _Alignas(64) atomic_uint_fast64_t generation;  // the current job number; bumped per job and on shutdown
  atomic_int stop;
  atomic_int sleeping;
  int n_workers;                 // threads besides the caller
  pthread_t* threads;
  // The current job (written by the caller while no task is left to claim).
  void (*fn)(void*, int64_t);
  void* arg;
  int64_t first;                 // task index of the job's task 0
  pthread_mutex_t mu;
  pthread_cond_t cv;
  _Alignas(64) atomic_uint_fast64_t ticket;  // job << kJobShift | lo << kHiBits | hi: tasks [lo, hi) left
  _Alignas(64) atomic_int_fast64_t done;     // tasks of the current job finished
  char pad_[64 - sizeof(atomic_int_fast64_t)];
};

// Idle workers spin (pause loop) this long after a job before they sleep on
// the condition variable: long enough to catch the next kernel of the same
// model run (kernels follow each other within microseconds; a serial kernel
// between two parallel ones takes tens), short enough not to hold a core
// long between runs. Sleeping workers are woken by the next job.
enum { kSpinNs = 200000, kWaitYieldRounds = 20000 };

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Runs tasks of job |job| until none is left (or a later job started): the
// caller (|from_front|) takes them from the front, the workers from the back.
static void run_tasks(mlcc_pthread_pool_t* p, uint_fast64_t job, int from_front) {
  uint_fast64_t tag = job & kJobMask;
  uint_fast64_t t = atomic_load(&p->ticket);
  for (;;) {
    if ((t >> kJobShift) != tag) return;
    uint_fast64_t lo = (t >> kHiBits) & kIdxMask, hi = t & kIdxMask;
    if (lo >= hi) return;
    uint_fast64_t next = from_front ? t + (UINT64_C(1) << kHiBits) : t - 1;
    if (!atomic_compare_exchange_weak(&p->ticket, &t, next)) continue;  // t reloaded
    p->fn(p->arg, p->first + (int64_t)(from_front ? lo : hi - 1));
    atomic_fetch_add(&p->done, 1);
    t = atomic_load(&p->ticket);
  }
}

static void* worker(void* vp) {
  mlcc_pthread_pool_t* p = vp;
  // The generation at creation (not a fresh load: a thread that starts late
  // must still notice jobs, and a shutdown, published before it ran).
  uint_fast64_t seen = 0;
  for (;;) {
    uint_fast64_t g;
    int64_t start = 0;
    unsigned spins = 0;
    while ((g = atomic_load(&p->generation)) == seen) {
      cpu_relax();
      if ((++spins & 63) != 0) continue;
      int64_t now = now_ns();
      if (start == 0) start = now;
      if (now - start < kSpinNs) continue;
      pthread_mutex_lock(&p->mu);
      atomic_fetch_add(&p->sleeping, 1);
      while (atomic_load(&p->generation) == seen) pthread_cond_wait(&p->cv, &p->mu);
      atomic_fetch_sub(&p->sleeping, 1);
      pthread_mutex_unlock(&p->mu);
      start = 0;
    }
    seen = g;
    if (atomic_load(&p->stop)) return NULL;
    run_tasks(p, g, 0);
  }
}

mlcc_pthread_pool_t* mlcc_pthread_pool_create(int n_threads) {
  if (n_threads < 1 || n_threads > 1024) return NULL;
  // sizeof is a multiple of the 64-byte alignment (the padded last field).
  mlcc_pthread_pool_t* p = aligned_alloc(64, sizeof(*p));
  if (p == NULL) return NULL;
  memset(p, 0, sizeof(*p));
  p->n_workers = n_threads - 1;
  p->threads = calloc((size_t)(p->n_workers ? p->n_workers : 1), sizeof(pthread_t));
  if (p->threads == NULL) {
    free(p);
    return NULL;
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->stop, 0);
  atomic_init(&p->ticket, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->sleeping, 0);
  for (int i = 0; i < p->n_workers; ++i) {
    if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
      p->n_workers = i;
      mlcc_pthread_pool_destroy(p);
      return NULL;
    }
  }
  return p;
}

// Bumps the generation to |g| and wakes sleeping workers.
static void publish(mlcc_pthread_pool_t* p, uint_fast64_t g) {
  atomic_store(&p->generation, g);
  if (atomic_load(&p->sleeping) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
}

void mlcc_pthread_pool_destroy(mlcc_pthread_pool_t* p) {
  if (p == NULL) return;
  atomic_store(&p->stop, 1);
  uint_fast64_t g = atomic_load(&p->generation) + 1;
  atomic_store(&p->generation, g);
  pthread_mutex_lock(&p->mu);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n_workers; ++i) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p->threads);
  free(p);
}

// Runs tasks [first, first + n) as one job, n <= kMaxJobTasks.
static void run_job(mlcc_pthread_pool_t* p, int64_t n, int64_t first) {
  uint_fast64_t g = atomic_load(&p->generation) + 1;
  uint_fast64_t job = g & kJobMask;
  // Close the ticket (lo == hi: stragglers of the last job fail their CAS
  // or find nothing), set the job up, then open it.
  atomic_store(&p->ticket, job << kJobShift);
  p->first = first;
  atomic_store(&p->done, 0);
  atomic_store(&p->ticket, (job << kJobShift) | (uint_fast64_t)n);
  publish(p, g);
  run_tasks(p, g, 1);
  // A worker may have been descheduled mid-task: spin briefly, then yield
  // the core instead of burning it.
  int spins = 0;
  while (atomic_load(&p->done) < n) {
    if (++spins < kWaitYieldRounds) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
}

void mlcc_pthread_pfor(void* ctx, int64_t n, void (*fn)(void* arg, int64_t i), void* arg) {
  mlcc_pthread_pool_t* p = ctx;
  if (n <= 0) return;
  if (p == NULL || p->n_workers == 0 || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(arg, i);
    return;
  }
  p->fn = fn;
  p->arg = arg;
  for (int64_t first = 0; first < n; first += (int64_t)kMaxJobTasks) {
    int64_t left = n - first;
    run_job(p, left < (int64_t)kMaxJobTasks ? left : (int64_t)kMaxJobTasks, first);
  }
}

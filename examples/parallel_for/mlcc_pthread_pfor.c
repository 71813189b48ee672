// SPDX-License-Identifier: Apache-2.0
// See mlcc_pthread_pfor.h. C11 atomics + pthreads; no other dependency.
#include "mlcc_pthread_pfor.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

struct mlcc_pthread_pool_t {
  int n_workers;                 // threads besides the caller
  pthread_t* threads;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_uint_fast64_t generation;  // bumped per job (and on shutdown)
  atomic_int stop;
  // The current job.
  void (*fn)(void*, int64_t);
  void* arg;
  atomic_int_fast64_t n;
  atomic_int_fast64_t next;      // next task index to take
  atomic_int_fast64_t done;      // tasks finished
  atomic_int sleeping;
};

// Workers spin this many pause rounds (tens of microseconds: long enough to
// catch the next kernel of the same run, short enough not to steal a busy
// machine's cores between runs), then sleep on the condition variable.
enum { kSpinRounds = 4000, kWaitSpinRounds = 20000 };

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static void run_tasks(mlcc_pthread_pool_t* p) {
  for (;;) {
    int64_t i = atomic_fetch_add(&p->next, 1);
    if (i >= atomic_load(&p->n)) break;
    p->fn(p->arg, i);
    atomic_fetch_add(&p->done, 1);
  }
}

static void* worker(void* vp) {
  mlcc_pthread_pool_t* p = vp;
  uint_fast64_t seen = 0;
  for (;;) {
    int spins = 0;
    uint_fast64_t g;
    while ((g = atomic_load(&p->generation)) == seen) {
      if (++spins < kSpinRounds) {
        cpu_relax();
        continue;
      }
      pthread_mutex_lock(&p->mu);
      atomic_fetch_add(&p->sleeping, 1);
      while (atomic_load(&p->generation) == seen) pthread_cond_wait(&p->cv, &p->mu);
      atomic_fetch_sub(&p->sleeping, 1);
      pthread_mutex_unlock(&p->mu);
      spins = 0;
    }
    seen = g;
    if (atomic_load(&p->stop)) return NULL;
    run_tasks(p);
  }
}

mlcc_pthread_pool_t* mlcc_pthread_pool_create(int n_threads) {
  if (n_threads < 1 || n_threads > 1024) return NULL;
  mlcc_pthread_pool_t* p = calloc(1, sizeof(*p));
  if (p == NULL) return NULL;
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
  atomic_init(&p->next, 0);
  atomic_init(&p->n, 0);
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

static void publish(mlcc_pthread_pool_t* p) {
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add(&p->generation, 1);
  if (atomic_load(&p->sleeping) > 0) pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

void mlcc_pthread_pool_destroy(mlcc_pthread_pool_t* p) {
  if (p == NULL) return;
  atomic_store(&p->stop, 1);
  publish(p);
  for (int i = 0; i < p->n_workers; ++i) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p->threads);
  free(p);
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
  atomic_store(&p->n, n);
  atomic_store(&p->done, 0);
  atomic_store(&p->next, 0);
  publish(p);
  run_tasks(p);
  // A worker may have been descheduled mid-task: spin briefly, then yield
  // the core instead of burning it.
  int spins = 0;
  while (atomic_load(&p->done) < n) {
    if (++spins < kWaitSpinRounds) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
}

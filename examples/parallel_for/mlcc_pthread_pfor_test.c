// SPDX-License-Identifier: Apache-2.0
// Tests of the pthread parallel-for (mlcc_pthread_pfor.h): every task of a
// call runs exactly once with the call's fn/arg, on pools of 1 to 4
// threads, for task counts around the job size limit too; and the caller
// takes tasks from the front, the workers from the back (with 2 threads the
// caller's tasks are a prefix of [0, n), whatever the timing).
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif
#include "mlcc_pthread_pfor.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "test.h"

typedef struct {
  atomic_int* count;     // runs per task index
  int64_t n;
  atomic_int bad;        // a task index out of range, or a wrong arg
  pthread_t caller;
  unsigned char* by_caller;  // 1 = the task ran on the calling thread
  int64_t spin;          // busy work per task
  atomic_int worker_ran; // a task ran on another thread than the caller
} job_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static atomic_llong g_sink;  // keeps the busy work

static void task(void* vp, int64_t i) {
  job_t* j = vp;
  if (i < 0 || i >= j->n) {
    atomic_fetch_add(&j->bad, 1);
    return;
  }
  atomic_fetch_add(&j->count[i], 1);
  if (j->by_caller != NULL) {
    int mine = pthread_equal(pthread_self(), j->caller) ? 1 : 0;
    j->by_caller[i] = (unsigned char)mine;
    if (!mine) atomic_store(&j->worker_ran, 1);
    // The caller's tasks wait (at most 1 s) until the worker took one, so
    // that both ends of the range are used even on a loaded machine, where
    // the worker may still be waking up when the caller is done.
    double t0 = now_s();
    while (mine && !atomic_load(&j->worker_ran) && now_s() - t0 < 1.0) {
    }
  }
  double s = 0;
  for (int64_t k = 0; k < j->spin; ++k) s += (double)k;
  atomic_store_explicit(&g_sink, (long long)s, memory_order_relaxed);
}

static int run_job(mlcc_pthread_pool_t* pool, int64_t n, int64_t spin, unsigned char* by_caller) {
  job_t j;
  j.count = calloc((size_t)(n > 0 ? n : 1), sizeof(atomic_int));
  j.n = n;
  atomic_init(&j.bad, 0);
  atomic_init(&j.worker_ran, 0);
  j.caller = pthread_self();
  j.by_caller = by_caller;
  j.spin = spin;
  mlcc_pthread_pfor(pool, n, task, &j);
  int ok = atomic_load(&j.bad) == 0;
  for (int64_t i = 0; i < n; ++i) ok = ok && atomic_load(&j.count[i]) == 1;
  free(j.count);
  return ok;
}

static void test_every_task_once(void) {
  static const int64_t ns[] = {0, 1, 2, 3, 7, 8, 17, 64, 1000};
  for (int threads = 1; threads <= 4; ++threads) {
    mlcc_pthread_pool_t* pool = mlcc_pthread_pool_create(threads);
    CHECK(pool != NULL);
    if (pool == NULL) continue;
    for (int rep = 0; rep < 300; ++rep) {
      for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); ++k) {
        if (!run_job(pool, ns[k], rep % 3 == 0 ? 200 : 0, NULL)) {
          fprintf(stderr, "threads %d n %lld rep %d: a task ran twice, never or out of range\n",
                  threads, (long long)ns[k], rep);
          CHECK(0);
          rep = 300;
          break;
        }
      }
    }
    mlcc_pthread_pool_destroy(pool);
  }
}

// More tasks than one job holds (2^20 - 1): run as several jobs.
static void test_more_tasks_than_a_job(void) {
  mlcc_pthread_pool_t* pool = mlcc_pthread_pool_create(2);
  CHECK(pool != NULL);
  if (pool == NULL) return;
  CHECK(run_job(pool, ((int64_t)1 << 20) - 1, 0, NULL));
  CHECK(run_job(pool, ((int64_t)1 << 20), 0, NULL));
  CHECK(run_job(pool, ((int64_t)1 << 21) + 5, 0, NULL));
  mlcc_pthread_pool_destroy(pool);
}

// With 2 threads the caller runs a prefix of the tasks and the worker the
// rest (front and back of one range), so kernels split the same way in a
// row keep each part of their data on one core.
static void test_caller_takes_the_front(void) {
  mlcc_pthread_pool_t* pool = mlcc_pthread_pool_create(2);
  CHECK(pool != NULL);
  if (pool == NULL) return;
  int worker_ran = 0;
  for (int rep = 0; rep < 100; ++rep) {
    int64_t n = 2 + rep % 15;
    unsigned char by_caller[16];
    CHECK(run_job(pool, n, 20000, by_caller));
    int64_t first_worker = n;
    for (int64_t i = 0; i < n; ++i) {
      if (!by_caller[i] && first_worker == n) first_worker = i;
      if (by_caller[i] && i > first_worker) {
        fprintf(stderr, "rep %d n %lld: the caller ran task %lld after the worker's task %lld\n",
                rep, (long long)n, (long long)i, (long long)first_worker);
        CHECK(0);
        rep = 100;
        break;
      }
    }
    if (first_worker < n) worker_ran = 1;
  }
  // The worker took part (the caller's tasks wait for it up to 1 s per call).
  CHECK(worker_ran);
  mlcc_pthread_pool_destroy(pool);
}

int main(void) {
  RUN(test_every_task_once);
  RUN(test_more_tasks_than_a_job);
  RUN(test_caller_takes_the_front);
  return TEST_EXIT();
}

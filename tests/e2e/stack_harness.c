// SPDX-License-Identifier: Apache-2.0
// tests/e2e/harness.c with every run on a thread whose stack is the model's
// NAME_STACK_SIZE plus the harness's own measured need (docs/generated-api.md
// "Stack"), with a 16 MiB no-access guard below it, so a bound that is too
// small crashes the run (SIGSEGV) instead of passing. Built by
// tests/e2e/stack_check.py:
//   cc -D_GNU_SOURCE -include NAME.h -DMLCC_INFO=NAME_info
//      -DMLCC_STACK_SIZE=NAME_STACK_SIZE -DMLCC_RUN_PARALLEL_V=NAME_run_parallel_v
//      stack_harness.c -lpthread
// (_GNU_SOURCE on the command line: NAME.h's <stdint.h> comes first.)
// Usage and output files as harness.c. Three runs, each stack painted and
// measured (the deepest byte written, minus what a thread that runs nothing
// writes):
//   run       NAME_run_v on the thread (its outputs are the ones written)
//   parallel  NAME_run_parallel_v on the thread, tasks run inline by the
//             parallel-for (its frame is the harness's, a few bytes)
//   task      NAME_run_parallel_v from the main thread, every task on its own
//             measured thread
// and one line "mlcc-stack bound=B baseline=B0 run=R parallel=P task=T".
// Exit 4 if R, P or T exceed B, if NAME_info.stack_size differs from B, or if
// a parallel run's outputs are not bit-identical to the serial run's.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MLCC_STACK_SIZE
#error "define MLCC_STACK_SIZE to the model's NAME_STACK_SIZE"
#endif
#ifndef MLCC_RUN_PARALLEL_V
#error "define MLCC_RUN_PARALLEL_V to the model's NAME_run_parallel_v"
#endif

enum { kPaint = 0xA7, kSlack = 4096 };
static const size_t kGuard = (size_t)16 << 20;

typedef struct job_t {
  void (*fn)(void* arg);
  void* arg;
} job_t;

static void* job_main(void* p) {
  job_t* j = (job_t*)p;
  j->fn(j->arg);
  return NULL;
}

static void nothing(void* arg) { (void)arg; }

// Runs fn(arg) on a new thread with a painted stack of |size| bytes (whole
// pages, at least PTHREAD_STACK_MIN) above kGuard no-access bytes. Returns
// the bytes of stack written (from the top), or -1 if the thread could not
// be made.
static long run_measured(void (*fn)(void*), void* arg, size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (size < (size_t)PTHREAD_STACK_MIN) size = (size_t)PTHREAD_STACK_MIN;
  size = (size + page - 1) / page * page;
  unsigned char* map = (unsigned char*)mmap(NULL, kGuard + size, PROT_NONE,
                                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return -1;
  unsigned char* stack = map + kGuard;
  long used = -1;
  pthread_attr_t attr;
  if (mprotect(stack, size, PROT_READ | PROT_WRITE) == 0 && pthread_attr_init(&attr) == 0) {
    memset(stack, kPaint, size);
    job_t job = {fn, arg};
    pthread_t t;
    if (pthread_attr_setstack(&attr, stack, size) == 0 &&
        pthread_create(&t, &attr, job_main, &job) == 0) {
      pthread_join(t, NULL);
      size_t low = 0;
      while (low < size && stack[low] == kPaint) ++low;
      used = (long)(size - low);
    }
    pthread_attr_destroy(&attr);
  }
  munmap(map, kGuard + size);
  return used;
}

typedef struct model_call_t {
  const mlcc_model_info_t* info;
  const void* const* inputs;
  void* const* outputs;
  void* ws;
  int parallel;  // 1: NAME_run_parallel_v with tasks run inline
  int rc;
} model_call_t;

static size_t g_thread_stack;  // bytes of every measured thread's stack
static long g_baseline;        // bytes a thread that runs nothing writes
static long g_task_max;        // deepest task (threaded parallel-for)

static void inline_pfor(void* ctx, int64_t n, void (*fn)(void*, int64_t), void* arg) {
  (void)ctx;
  for (int64_t i = 0; i < n; ++i) fn(arg, i);
}

typedef struct task_call_t {
  void (*fn)(void*, int64_t);
  void* arg;
  int64_t i;
} task_call_t;

static void task_main(void* p) {
  task_call_t* t = (task_call_t*)p;
  t->fn(t->arg, t->i);
}

// Every task on its own measured thread, one after the other.
static void thread_pfor(void* ctx, int64_t n, void (*fn)(void*, int64_t), void* arg) {
  int* failed = (int*)ctx;
  for (int64_t i = 0; i < n; ++i) {
    task_call_t t = {fn, arg, i};
    long used = run_measured(task_main, &t, g_thread_stack);
    if (used < 0) *failed = 1;
    if (used - g_baseline > g_task_max) g_task_max = used - g_baseline;
  }
}

static void model_main(void* p) {
  model_call_t* c = (model_call_t*)p;
  if (c->parallel) {
    c->rc = MLCC_RUN_PARALLEL_V(c->inputs, c->outputs, c->ws, inline_pfor, NULL);
  } else {
    c->rc = c->info->run(c->inputs, c->outputs, c->ws);
  }
}

static int same_outputs(const mlcc_model_info_t* info, void* const* a, void* const* b) {
  for (int i = 0; i < info->num_outputs; ++i) {
    if (memcmp(a[i], b[i], (size_t)info->outputs[i].size_bytes) != 0) {
      fprintf(stderr, "stack_harness: parallel output %d differs from the serial run\n", i);
      return 0;
    }
  }
  return 1;
}

static int stack_run(const mlcc_model_info_t* info, const void* const* inputs,
                     void* const* outputs, void* ws) {
  const long long bound = (long long)(MLCC_STACK_SIZE);
  if (info->stack_size != bound) {
    fprintf(stderr, "stack_harness: %s_info.stack_size %lld != STACK_SIZE %lld\n", info->name,
            (long long)info->stack_size, bound);
    return 4;
  }
  g_baseline = run_measured(nothing, NULL, kSlack);
  if (g_baseline < 0) return 2;
  g_thread_stack = (size_t)bound + (size_t)g_baseline + kSlack;
  model_call_t call = {info, inputs, outputs, ws, 0, -1};
  long run = run_measured(model_main, &call, g_thread_stack) - g_baseline;
  if (call.rc != 0) return call.rc;
  // The parallel entry twice, into scratch outputs compared with the run's.
  void* par[64];
  for (int i = 0; i < info->num_outputs; ++i) {
    par[i] = malloc((size_t)info->outputs[i].size_bytes + 1);
    if (par[i] == NULL) return 2;
  }
  model_call_t pcall = {info, inputs, par, ws, 1, -1};
  long parallel = run_measured(model_main, &pcall, g_thread_stack) - g_baseline;
  int ok = pcall.rc == 0 && same_outputs(info, outputs, par);
  int failed = 0;
  if (ok) ok = MLCC_RUN_PARALLEL_V(inputs, par, ws, thread_pfor, &failed) == 0 && !failed;
  if (ok) ok = same_outputs(info, outputs, par);
  for (int i = 0; i < info->num_outputs; ++i) free(par[i]);
  // The serial run's extents stay valid for NAME_output_shape: run it again.
  if (ok) ok = info->run(inputs, outputs, ws) == 0;
  printf("mlcc-stack bound=%lld baseline=%ld run=%ld parallel=%ld task=%ld\n", bound, g_baseline,
         run, parallel, g_task_max);
  if (!ok) return 4;
  if (run > bound || parallel > bound || g_task_max > bound) {
    fprintf(stderr, "stack_harness: %s used more stack than %s_STACK_SIZE (%lld)\n", info->name,
            info->name, bound);
    return 4;
  }
  return 0;
}

#define MLCC_HARNESS_RUN stack_run
#include "harness.c"

// SPDX-License-Identifier: Apache-2.0
// Minimal unit-test helpers shared by every <module>_test.c. Each test file
// has its own main() that calls RUN(test_fn) for each test and returns
// TEST_EXIT(). Prints "N passed, M failed" as its last line.
#ifndef MLCC_TESTS_TEST_H_
#define MLCC_TESTS_TEST_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/status.h"

static int test_failures_ = 0;
static int test_current_failed_ = 0;
static int test_passed_ = 0;
static int test_failed_ = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      test_current_failed_ = 1;                                            \
      test_failures_++;                                                    \
    }                                                                      \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                 \
  do {                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                    \
    if (a_ != b_) {                                                        \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n",    \
              __FILE__, __LINE__, #a, a_, #b, b_);                         \
      test_current_failed_ = 1;                                            \
      test_failures_++;                                                    \
    }                                                                      \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                              \
  do {                                                                     \
    double a_ = (double)(a), b_ = (double)(b);                             \
    if (!(fabs(a_ - b_) <= (tol))) {                                       \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %g, %s = %g\n",      \
              __FILE__, __LINE__, #a, a_, #b, b_);                         \
      test_current_failed_ = 1;                                            \
      test_failures_++;                                                    \
    }                                                                      \
  } while (0)

#define CHECK_STREQ(a, b)                                                  \
  do {                                                                     \
    const char *a_ = (a), *b_ = (b);                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                               \
      fprintf(stderr, "%s:%d: CHECK_STREQ failed: \"%s\" vs \"%s\"\n",     \
              __FILE__, __LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
      test_current_failed_ = 1;                                            \
      test_failures_++;                                                    \
    }                                                                      \
  } while (0)

// Checks a status is OK; prints and frees it otherwise.
#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    mlcc_status_t s_ = (expr);                                             \
    if (s_ != NULL) {                                                      \
      char* m_ = mlcc_status_to_string(s_);                                \
      fprintf(stderr, "%s:%d: CHECK_OK failed: %s\n", __FILE__, __LINE__,  \
              m_ ? m_ : "?");                                              \
      free(m_);                                                            \
      mlcc_status_free(s_);                                                \
      test_current_failed_ = 1;                                            \
      test_failures_++;                                                    \
    }                                                                      \
  } while (0)

// Checks a status has |code|; frees it.
#define CHECK_STATUS(expr, code)                                           \
  do {                                                                     \
    mlcc_status_t s_ = (expr);                                             \
    if (mlcc_status_code(s_) != (code)) {                                  \
      char* m_ = mlcc_status_to_string(s_);                                \
      fprintf(stderr, "%s:%d: CHECK_STATUS failed: want %s, got %s\n",    \
              __FILE__, __LINE__, mlcc_status_code_name(code),             \
              m_ ? m_ : "OK");                                             \
      free(m_);                                                            \
      test_current_failed_ = 1;                                            \
      test_failures_++;                                                    \
    }                                                                      \
    mlcc_status_free(s_);                                                  \
  } while (0)

#define RUN(fn)                                                            \
  do {                                                                     \
    test_current_failed_ = 0;                                              \
    fn();                                                                  \
    if (test_current_failed_) {                                            \
      test_failed_++;                                                      \
      fprintf(stderr, "FAIL %s\n", #fn);                                   \
    } else {                                                               \
      test_passed_++;                                                      \
    }                                                                      \
  } while (0)

#define TEST_EXIT()                                                        \
  (printf("%d passed, %d failed\n", test_passed_, test_failed_),           \
   test_failed_ ? 1 : 0)

#endif  // MLCC_TESTS_TEST_H_

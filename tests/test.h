// SPDX-License-Identifier: Apache-2.0
// Minimal unit-test helpers shared by every <module>_test.c. Each test file
// has its own main() that calls RUN(test_fn) for each test and returns
// TEST_EXIT(). Prints "N passed, M failed" as its last line.
//
// One case alone: MLCC_TEST_FILTER selects the cases RUN runs by name, a
// comma-separated list of patterns; a pattern with * ? or [ is an fnmatch(3)
// glob over the whole function name, any other pattern a substring of it:
//   MLCC_TEST_FILTER=conv_depthwise build/conv_test
//   MLCC_TEST_FILTER='test_conv_1d_*,depthwise' build/conv_test
// Unset or empty selects every case. A filter that selects nothing fails the
// executable (exit 1), so a misspelt name never passes silently.
#ifndef MLCC_TESTS_TEST_H_
#define MLCC_TESTS_TEST_H_

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/status.h"

static int test_failures_ = 0;
static int test_current_failed_ = 0;
static int test_passed_ = 0;
static int test_failed_ = 0;
static int test_skipped_ = 0;

// True if MLCC_TEST_FILTER (read on every call; see the top of this file)
// selects the case named |name|.
static inline int test_selected_(const char* name) {
  const char* p = getenv("MLCC_TEST_FILTER");
  if (p == NULL || *p == '\0') return 1;
  while (*p) {
    const char* end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char pat[256];
    if (n > 0 && n < sizeof(pat)) {
      memcpy(pat, p, n);
      pat[n] = '\0';
      int glob = strpbrk(pat, "*?[") != NULL;
      if (glob ? fnmatch(pat, name, 0) == 0 : strstr(name, pat) != NULL) return 1;
    }
    if (end == NULL) break;
    p = end + 1;
  }
  return 0;
}

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

// Runs the case |fn| (a function name) unless MLCC_TEST_FILTER leaves it out.
#define RUN(fn)                                                            \
  do {                                                                     \
    if (!test_selected_(#fn)) {                                            \
      test_skipped_++;                                                     \
      break;                                                               \
    }                                                                      \
    test_current_failed_ = 0;                                              \
    fn();                                                                  \
    if (test_current_failed_) {                                            \
      test_failed_++;                                                      \
      fprintf(stderr, "FAIL %s\n", #fn);                                   \
    } else {                                                               \
      test_passed_++;                                                      \
    }                                                                      \
  } while (0)

// Prints the counts and returns main()'s exit code: 1 if a case failed or if
// MLCC_TEST_FILTER selected no case at all.
#define TEST_EXIT()                                                        \
  (test_skipped_ ? printf("%d skipped by MLCC_TEST_FILTER=%s%s\n",         \
                          test_skipped_, getenv("MLCC_TEST_FILTER"),       \
                          test_passed_ + test_failed_ ? ""                 \
                                                      : " (none selected)") \
                 : 0,                                                      \
   printf("%d passed, %d failed\n", test_passed_, test_failed_),           \
   (test_failed_ || (test_passed_ + test_failed_ == 0 && test_skipped_)) ? 1 : 0)

#endif  // MLCC_TESTS_TEST_H_

// SPDX-License-Identifier: Apache-2.0
// Unit tests for mlcc_status_t and the arena.
#include "ir/base/status.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/base/arena.h"
#include "test.h"

static void test_ok_is_null(void) {
  mlcc_status_t s = mlcc_ok_status();
  CHECK(s == NULL);
  CHECK(mlcc_status_is_ok(s));
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_OK);
  CHECK(mlcc_status_to_string(s) == NULL);
  CHECK_EQ_INT(mlcc_status_exit_code(s), 0);
  CHECK(mlcc_status_annotate(s, "ignored %d", 1) == NULL);
  mlcc_status_free(s);
}

static void test_message_and_code(void) {
  mlcc_status_t s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "op %s opset %d", "Foo", 7);
  CHECK(s != NULL);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_UNIMPLEMENTED);
  CHECK_STREQ(mlcc_status_message(s), "op Foo opset 7");
  char* str = mlcc_status_to_string(s);
  CHECK_STREQ(str, "error: op Foo opset 7 [UNIMPLEMENTED]");
  free(str);
  mlcc_status_free(s);
}

static void test_annotations_outermost_first(void) {
  mlcc_status_t s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                     "kernel_shape has %d values but the input has %d "
                                     "spatial dims", 3, 2);
  s = mlcc_status_annotate(s, "node #%d '%s' (%s, opset %d)", 17, "conv_3", "Conv", 13);
  s = mlcc_status_annotate(s, "%s", "model.onnx");
  char* str = mlcc_status_to_string(s);
  CHECK_STREQ(str,
              "model.onnx: node #17 'conv_3' (Conv, opset 13): error: kernel_shape has 3 "
              "values but the input has 2 spatial dims [INVALID_MODEL]");
  free(str);
  // The bare message excludes annotations.
  CHECK_STREQ(mlcc_status_message(s),
              "kernel_shape has 3 values but the input has 2 spatial dims");
  mlcc_status_free(s);
}

static void test_code_names_and_exit_codes(void) {
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_OK), "OK");
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_INVALID_MODEL), "INVALID_MODEL");
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_UNIMPLEMENTED), "UNIMPLEMENTED");
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_NOT_FOUND), "NOT_FOUND");
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_IO), "IO");
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
  CHECK_STREQ(mlcc_status_code_name(MLCC_STATUS_INTERNAL), "INTERNAL");
  static const struct {
    mlcc_status_code_t code;
    int exit_code;
  } cases[] = {
      {MLCC_STATUS_INVALID_ARGUMENT, 2}, {MLCC_STATUS_INVALID_MODEL, 1},
      {MLCC_STATUS_UNIMPLEMENTED, 1},    {MLCC_STATUS_NOT_FOUND, 1},
      {MLCC_STATUS_IO, 1},               {MLCC_STATUS_RESOURCE_EXHAUSTED, 1},
      {MLCC_STATUS_INTERNAL, 70},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    mlcc_status_t s = mlcc_make_status(cases[i].code, "x");
    CHECK_EQ_INT(mlcc_status_exit_code(s), cases[i].exit_code);
    mlcc_status_free(s);
  }
}

static void test_join(void) {
  mlcc_status_t a = mlcc_make_status(MLCC_STATUS_IO, "primary");
  mlcc_status_t b = mlcc_make_status(MLCC_STATUS_INTERNAL, "cleanup");
  mlcc_status_t j = mlcc_status_join(a, b);  // frees b
  CHECK(j == a);
  CHECK_STREQ(mlcc_status_message(j), "primary");
  mlcc_status_free(j);

  mlcc_status_t c = mlcc_make_status(MLCC_STATUS_IO, "cleanup only");
  j = mlcc_status_join(NULL, c);
  CHECK(j == c);
  mlcc_status_free(j);
  CHECK(mlcc_status_join(NULL, NULL) == NULL);
}

static void test_ok_code_is_coerced(void) {
  // Misuse: making a failure with code OK yields INTERNAL, never NULL.
  mlcc_status_t s = mlcc_make_status(MLCC_STATUS_OK, "oops");
  CHECK(s != NULL);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INTERNAL);
  mlcc_status_free(s);
}

static void test_arena_alignment_and_zeroing(void) {
  mlcc_arena_t a;
  mlcc_arena_init(&a);
  for (size_t align = 1; align <= 4096; align *= 2) {
    unsigned char* p = (unsigned char*)mlcc_arena_alloc(&a, 13, align);
    CHECK(p != NULL);
    CHECK_EQ_INT((uintptr_t)p % align, 0);
    int zero = 1;
    for (int i = 0; i < 13; ++i) zero &= p[i] == 0;
    CHECK(zero);
    memset(p, 0xab, 13);
  }
  // Non power-of-two or too-large alignment and overflowing sizes fail.
  CHECK(mlcc_arena_alloc(&a, 8, 3) == NULL);
  CHECK(mlcc_arena_alloc(&a, 8, 8192) == NULL);
  CHECK(mlcc_arena_alloc(&a, SIZE_MAX - 2, 8) == NULL);
  // Big allocation gets its own block and small ones still work after it.
  char* big = (char*)mlcc_arena_alloc(&a, 1 << 20, 64);
  CHECK(big != NULL);
  big[(1 << 20) - 1] = 1;
  char* small = (char*)mlcc_arena_alloc(&a, 4, 4);
  CHECK(small != NULL);
  CHECK(a.bytes_allocated >= (1u << 20) + 4);
  // Many small allocations do not overlap.
  int* prev = NULL;
  for (int i = 0; i < 100000; ++i) {
    int* p = (int*)mlcc_arena_alloc(&a, sizeof(int), sizeof(int));
    CHECK(p != NULL);
    if (p == NULL) break;
    *p = i;
    if (prev) CHECK_EQ_INT(*prev, i - 1);
    prev = p;
  }
  mlcc_arena_deinit(&a);
  CHECK(a.head == NULL);
  CHECK_EQ_INT(a.bytes_allocated, 0);
}

static void test_arena_strdup(void) {
  mlcc_arena_t a;
  mlcc_arena_init(&a);
  char* s = mlcc_arena_strdup(&a, "hello");
  CHECK_STREQ(s, "hello");
  char* t = mlcc_arena_strndup(&a, "hello world", 5);
  CHECK_STREQ(t, "hello");
  char* e = mlcc_arena_strndup(&a, NULL, 0);
  CHECK_STREQ(e, "");
  mlcc_arena_deinit(&a);
}

int main(void) {
  RUN(test_ok_is_null);
  RUN(test_message_and_code);
  RUN(test_annotations_outermost_first);
  RUN(test_code_names_and_exit_codes);
  RUN(test_join);
  RUN(test_ok_code_is_coerced);
  RUN(test_arena_alignment_and_zeroing);
  RUN(test_arena_strdup);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: command-line parsing and driver setup. The input is
// split at NUL bytes into argv[1..] (at most kMaxArgs); then
// mlcc_options_parse, the did-you-mean suggester, the --input-shape and
// --input-value parsers on
// every argument, and for parsed options mlcc_compilation_create (name,
// target, paths, pipeline resolution) and -### job printing, which write
// nothing. Built only with -DMLCC_FUZZ=ON and clang; run by scripts/fuzz.sh.
//
// Contract checked: no crash, no sanitizer report, no leak; failures are
// INVALID_ARGUMENT or NOT_FOUND (unknown target), never INTERNAL.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compilation.h"
#include "driver/options.h"
#include "ir/base/arena.h"
#include "ir/base/status.h"

enum { kMaxArgs = 32 };

static FILE* g_null;

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  g_null = fopen("/dev/null", "w");
  if (g_null == NULL) abort();
  return 0;
}

static void check(mlcc_status_t s, const char* stage) {
  if (s == NULL) return;
  mlcc_status_code_t code = mlcc_status_code(s);
  if (code == MLCC_STATUS_INTERNAL) {
    char* text = mlcc_status_to_string(s);
    fprintf(stderr, "options_fuzz: %s after %s: %s\n", mlcc_status_code_name(code), stage,
            text ? text : "?");
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A NUL-terminated copy that argv entries point into.
  char* text = (char*)malloc(size + 1);
  if (text == NULL) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char* argv[kMaxArgs + 2];
  int argc = 0;
  argv[argc++] = "mlcc";
  for (size_t start = 0; start <= size && argc <= kMaxArgs;) {
    argv[argc++] = text + start;
    start += strlen(text + start) + 1;
  }
  argv[argc] = NULL;

  char buf[256];
  mlcc_arena_t arena;
  mlcc_arena_init(&arena);
  for (int i = 1; i < argc; ++i) {
    (void)mlcc_options_suggest(argv[i], buf, sizeof(buf));
    mlcc_input_shape_t pin;
    mlcc_status_t s = mlcc_options_parse_input_shape(argv[i], &arena, &pin);
    check(s, "parse_input_shape");
    mlcc_status_free(s);
    mlcc_input_value_t value;
    s = mlcc_options_parse_input_value(argv[i], &arena, &value);
    check(s, "parse_input_value");
    mlcc_status_free(s);
  }
  mlcc_arena_deinit(&arena);

  mlcc_options_t options;
  mlcc_status_t s = mlcc_options_parse(argc, argv, &options);
  check(s, "parse");
  if (s == NULL && !mlcc_options_info_only(&options)) {
    mlcc_compilation_t* c = NULL;
    s = mlcc_compilation_create(&options, g_null, &c);
    check(s, "compilation_create");
    if (s == NULL) {
      s = mlcc_compilation_print_jobs(c);
      check(s, "print_jobs");
    }
    mlcc_compilation_destroy(c);
  }
  mlcc_status_free(s);
  mlcc_options_deinit(&options);
  free(text);
  return 0;
}

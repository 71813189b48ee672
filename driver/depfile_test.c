// SPDX-License-Identifier: Apache-2.0
// Tests for driver/depfile.c: Make escaping and the rendered text.
#include "driver/depfile.h"

#include "test.h"

static void check_escape(const char* path, const char* want) {
  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  CHECK_OK(mlcc_depfile_escape(path, &sb));
  CHECK_STREQ(mlcc_strbuf_cstr(&sb), want);
  mlcc_strbuf_deinit(&sb);
}

static void test_escape(void) {
  check_escape("models/net.onnx", "models/net.onnx");
  check_escape("my models/a b.onnx", "my\\ models/a\\ b.onnx");
  check_escape("tab\there", "tab\\\there");
  check_escape("x#1.onnx", "x\\#1.onnx");
  check_escape("cost$.onnx", "cost$$.onnx");
  check_escape("a\\ b", "a\\\\\\ b");     // backslash before a space is doubled
  check_escape("dir\\file", "dir\\file");  // other backslashes stay
  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  CHECK_STATUS(mlcc_depfile_escape("bad\nname", &sb), MLCC_STATUS_INVALID_ARGUMENT);
  mlcc_strbuf_deinit(&sb);
}

static void test_render(void) {
  char* text = NULL;
  const char* deps[] = {"m dir/model.onnx", "m dir/weights.bin", "m dir/model.onnx"};
  CHECK_OK(mlcc_depfile_render("out/libm.a", deps, 3, &text));
  CHECK_STREQ(text, "out/libm.a: m\\ dir/model.onnx \\\n  m\\ dir/weights.bin\n");
  free(text);
  CHECK_OK(mlcc_depfile_render("libm.a", deps, 1, &text));
  CHECK_STREQ(text, "libm.a: m\\ dir/model.onnx\n");
  free(text);
  const char* bad[] = {"ok.onnx", "new\nline"};
  CHECK_STATUS(mlcc_depfile_render("libm.a", bad, 2, &text), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK(text == NULL);
}

static void test_render_rule(void) {
  char* text = NULL;
  const char* deps[] = {"m.onnx", "w b.bin", "m.onnx", "w b.bin"};
  // gcc's order (gcc -MQ q1 -MQ q2 -MT t1 -MQ q3 -MT t2 writes "t1 t2 q3 q1 q2").
  mlcc_depfile_target_t t[] = {
      {"q 1", true}, {"q2", true}, {"t$1", false}, {"q3", true}, {"t 2", false}};
  CHECK_OK(mlcc_depfile_render_rule(t, 5, deps, 4, true, &text));
  CHECK_STREQ(text, "t$1 t 2 q3 q\\ 1 q2: m.onnx \\\n  w\\ b.bin\nw\\ b.bin:\n");
  free(text);
  mlcc_depfile_target_t one = {"out.a", true};
  CHECK_OK(mlcc_depfile_render_rule(&one, 1, deps, 1, true, &text));
  CHECK_STREQ(text, "out.a: m.onnx\n");  // -MP: no rule for the model itself
  free(text);
  mlcc_depfile_target_t bad = {"a\nb", false};
  CHECK_STATUS(mlcc_depfile_render_rule(&bad, 1, deps, 1, false, &text),
               MLCC_STATUS_INVALID_ARGUMENT);
  CHECK(text == NULL);
}

int main(void) {
  RUN(test_escape);
  RUN(test_render);
  RUN(test_render_rule);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Tests for driver/options.c: parsing forms, defaults, errors, did-you-mean.
#include "driver/options.h"

#include <string.h>

#include "test.h"

#define ARGV(...) ((char*[]){"mlcc", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char*[]){"mlcc", __VA_ARGS__}) / sizeof(char*)))
#define PARSE(opts, ...) mlcc_options_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (opts))

static void test_defaults(void) {
  mlcc_options_t o;
  CHECK_OK(PARSE(&o, "model.onnx"));
  CHECK_STREQ(o.input, "model.onnx");
  CHECK(o.output == NULL);
  CHECK_EQ_INT(o.emit, MLCC_EMIT_LIB);
  CHECK_EQ_INT(o.opt_level, 2);
  CHECK(o.jobs >= 1);
  CHECK(o.name == NULL && o.target == NULL && o.cpu == NULL && o.features == NULL);
  CHECK(!o.write_depfile && !o.print_jobs_only && !o.verbose);
  CHECK(!mlcc_options_info_only(&o));
  mlcc_options_deinit(&o);
}

static void test_value_forms(void) {
  mlcc_options_t o;
  CHECK_OK(PARSE(&o, "-o", "out.a", "--name", "det", "--target=aarch64", "-mcpu=native",
                 "-mattr=+v", "-O3", "-j", "4", "-MD", "-MFdeps.d", "m.onnx"));
  CHECK_STREQ(o.output, "out.a");
  CHECK_STREQ(o.name, "det");
  CHECK_STREQ(o.target, "aarch64");
  CHECK_STREQ(o.cpu, "native");
  CHECK_STREQ(o.features, "+v");
  CHECK_EQ_INT(o.opt_level, 3);
  CHECK_EQ_INT(o.jobs, 4);
  CHECK(o.write_depfile);
  CHECK_STREQ(o.depfile, "deps.d");
  CHECK_STREQ(o.input, "m.onnx");
  mlcc_options_deinit(&o);

  CHECK_OK(PARSE(&o, "-oout.o", "--name=x", "--target", "riscv", "-j8", "-O", "m.onnx"));
  CHECK_STREQ(o.output, "out.o");
  CHECK_STREQ(o.name, "x");
  CHECK_STREQ(o.target, "riscv");
  CHECK_EQ_INT(o.jobs, 8);
  CHECK_EQ_INT(o.opt_level, 1);  // gcc: -O is -O1
  mlcc_options_deinit(&o);
}

static void test_depfile_flags(void) {
  mlcc_options_t o;
  CHECK_OK(PARSE(&o, "-MT", "a b", "-MQq$", "-MMD", "-MP", "-MTc", "--dot-all-constants",
                 "m.onnx"));
  CHECK(o.write_depfile && o.dep_phony && o.dot_all_constants);
  CHECK(o.depfile == NULL);
  CHECK_EQ_INT(o.n_dep_targets, 3);
  if (o.n_dep_targets == 3) {
    CHECK(strcmp(o.dep_targets[0].text, "a b") == 0 && !o.dep_targets[0].quote);
    CHECK(strcmp(o.dep_targets[1].text, "q$") == 0 && o.dep_targets[1].quote);
    CHECK(strcmp(o.dep_targets[2].text, "c") == 0 && !o.dep_targets[2].quote);
  }
  mlcc_options_deinit(&o);
  // -MT and -MP alone do not ask for a depfile (gcc neither).
  CHECK_OK(PARSE(&o, "-MT", "x", "-MP", "m.onnx"));
  CHECK(!o.write_depfile);
  mlcc_options_deinit(&o);
  CHECK_STATUS(PARSE(&o, "-MQ", "", "m.onnx"), MLCC_STATUS_INVALID_ARGUMENT);
  mlcc_options_deinit(&o);
  CHECK_STATUS(PARSE(&o, "m.onnx", "-MT"), MLCC_STATUS_INVALID_ARGUMENT);
  mlcc_options_deinit(&o);
}

static void test_emit_last_wins(void) {
  mlcc_options_t o;
  CHECK_OK(PARSE(&o, "-c", "m.onnx"));
  CHECK_EQ_INT(o.emit, MLCC_EMIT_OBJ);
  mlcc_options_deinit(&o);
  CHECK_OK(PARSE(&o, "-c", "-S", "m.onnx"));
  CHECK_EQ_INT(o.emit, MLCC_EMIT_LL);
  mlcc_options_deinit(&o);
  CHECK_OK(PARSE(&o, "-S", "--emit=dot", "m.onnx"));
  CHECK_EQ_INT(o.emit, MLCC_EMIT_DOT);
  mlcc_options_deinit(&o);
  CHECK_OK(PARSE(&o, "--emit", "header", "m.onnx"));
  CHECK_EQ_INT(o.emit, MLCC_EMIT_HEADER);
  CHECK_STREQ(mlcc_emit_kind_name(o.emit), "header");
  mlcc_options_deinit(&o);
}

static void test_input_shapes(void) {
  mlcc_options_t o;
  CHECK_OK(PARSE(&o, "--input-shape=images=1x3x224x224", "--input-shape", "a=b=7",
                 "--input-shape=images=2x3", "m.onnx"));
  CHECK_EQ_INT(o.n_input_shapes, 2);
  CHECK_STREQ(o.input_shapes[0].name, "images");  // last pin wins
  CHECK_EQ_INT(o.input_shapes[0].shape.rank, 2);
  CHECK_EQ_INT(o.input_shapes[0].shape.dims[0], 2);
  CHECK_EQ_INT(o.input_shapes[0].shape.dims[1], 3);
  CHECK_STREQ(o.input_shapes[1].name, "a=b");  // split at the last '='
  CHECK_EQ_INT(o.input_shapes[1].shape.rank, 1);
  CHECK_EQ_INT(o.input_shapes[1].shape.dims[0], 7);
  mlcc_options_deinit(&o);

  const char* bad[] = {"images", "=1x2", "x=", "x=1xx2", "x=1x-2", "x=1x2a",
                       "x=99999999999999999999", "x=1x1x1x1x1x1x1x1x1"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    mlcc_arena_t arena;
    mlcc_arena_init(&arena);
    mlcc_input_shape_t pin;
    CHECK_STATUS(mlcc_options_parse_input_shape(bad[i], &arena, &pin),
                 MLCC_STATUS_INVALID_ARGUMENT);
    mlcc_arena_deinit(&arena);
  }
}

static void test_input_values(void) {
  mlcc_options_t o;
  CHECK_OK(PARSE(&o, "--input-value=k=3", "--input-value", "shape=1,-1,2.5e1,nan",
                 "--input-value=a=b=@dir/x=y.pb", "--input-value=empty=", "--input-value=k=4",
                 "m.onnx"));
  CHECK_EQ_INT(o.n_input_values, 4);
  CHECK_STREQ(o.input_values[0].name, "k");  // last one wins
  CHECK_EQ_INT(o.input_values[0].n_numbers, 1);
  CHECK_EQ_INT(o.input_values[0].ints[0], 4);
  CHECK(o.input_values[0].is_int[0]);
  CHECK_STREQ(o.input_values[0].origin, "k=4");
  CHECK(o.input_values[0].file == NULL);
  const mlcc_input_value_t* sh = &o.input_values[1];
  CHECK_STREQ(sh->name, "shape");
  CHECK_EQ_INT(sh->n_numbers, 4);
  CHECK_EQ_INT(sh->ints[0], 1);
  CHECK_EQ_INT(sh->ints[1], -1);
  CHECK(sh->is_int[0] && sh->is_int[1] && !sh->is_int[2] && !sh->is_int[3]);
  CHECK(sh->reals[2] == 25.0);
  CHECK(sh->reals[3] != sh->reals[3]);  // NaN
  CHECK_STREQ(o.input_values[2].name, "a=b");  // split at the first "=@"
  CHECK_STREQ(o.input_values[2].file, "dir/x=y.pb");
  CHECK_EQ_INT(o.input_values[3].n_numbers, 0);
  mlcc_options_deinit(&o);

  CHECK_OK(PARSE(&o, "--input-value=u=18446744073709551615,-9223372036854775808", "m.onnx"));
  CHECK(o.input_values[0].above_int64[0] && !o.input_values[0].above_int64[1]);
  CHECK(o.input_values[0].ints[0] == -1);  // the uint64 bits
  CHECK(o.input_values[0].ints[1] == INT64_MIN);
  mlcc_options_deinit(&o);

  const char* bad[] = {"k", "=3", "k=@", "k=1,,2", "k=1,", "k=abc", "k=1x2",
                       "k=99999999999999999999", "k=-9223372036854775809"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    mlcc_arena_t arena;
    mlcc_arena_init(&arena);
    mlcc_input_value_t v;
    CHECK_STATUS(mlcc_options_parse_input_value(bad[i], &arena, &v),
                 MLCC_STATUS_INVALID_ARGUMENT);
    mlcc_arena_deinit(&arena);
  }
}

// Parses, expects INVALID_ARGUMENT, and checks the message contains |needle|.
static void expect_usage_error(int argc, char** argv, const char* needle) {
  mlcc_options_t o;
  mlcc_status_t s = mlcc_options_parse(argc, argv, &o);
  CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(mlcc_status_exit_code(s), 2);
  const char* msg = mlcc_status_message(s);
  if (strstr(msg, needle) == NULL) {
    fprintf(stderr, "message '%s' lacks '%s'\n", msg, needle);
    CHECK(0);
  }
  mlcc_status_free(s);
  mlcc_options_deinit(&o);
}

static void test_errors(void) {
  expect_usage_error(ARGC("--emitt=ll", "m.onnx"), ARGV("--emitt=ll", "m.onnx"),
                     "did you mean '--emit=ll'?");
  expect_usage_error(ARGC("--verify-eahc", "m.onnx"), ARGV("--verify-eahc", "m.onnx"),
                     "did you mean '--verify-each'?");
  expect_usage_error(ARGC("-mcpuu=x", "m.onnx"), ARGV("-mcpuu=x", "m.onnx"),
                     "did you mean '-mcpu=x'?");
  expect_usage_error(ARGC("--print-target"), ARGV("--print-target"),
                     "did you mean '--print-targets'?");
  expect_usage_error(ARGC("--zzzzzzzzzzzz"), ARGV("--zzzzzzzzzzzz"),
                     "unknown option '--zzzzzzzzzzzz'");
  expect_usage_error(ARGC("--emit=lll", "m.onnx"), ARGV("--emit=lll", "m.onnx"),
                     "did you mean 'll'?");
  expect_usage_error(ARGC("-O4", "m.onnx"), ARGV("-O4", "m.onnx"), "-O4");
  expect_usage_error(ARGC("-Os", "m.onnx"), ARGV("-Os", "m.onnx"), "optimization level");
  expect_usage_error(ARGC("-j0", "m.onnx"), ARGV("-j0", "m.onnx"), "job count");
  expect_usage_error(ARGC("m.onnx", "-o"), ARGV("m.onnx", "-o"), "missing argument to '-o'");
  expect_usage_error(ARGC("a.onnx", "b.onnx"), ARGV("a.onnx", "b.onnx"), "'a.onnx' and 'b.onnx'");
  expect_usage_error(ARGC("-d", "nonsense", "m.onnx"), ARGV("-d", "nonsense", "m.onnx"),
                     "explain-cache");
  expect_usage_error(ARGC("-"), ARGV("-"), "standard input");
}

static void test_info_and_cache_flags(void) {
  mlcc_options_t o;
  CHECK_OK(PARSE(&o, "--version"));
  CHECK(o.version && mlcc_options_info_only(&o));
  mlcc_options_deinit(&o);
  CHECK_OK(PARSE(&o, "--cache-dir=/tmp/c", "--no-cache", "-d", "explain-cache", "m.onnx"));
  CHECK_STREQ(o.cache_dir, "/tmp/c");
  CHECK(o.no_cache && o.explain_cache);
  CHECK(!mlcc_options_info_only(&o));
  mlcc_options_deinit(&o);
  // gcc's -f/-fno- pairs: the last one wins.
  CHECK_OK(PARSE(&o, "-fno-winograd", "-ftime-report", "m.onnx"));
  CHECK(o.no_winograd && o.time_report);
  mlcc_options_deinit(&o);
  CHECK_OK(PARSE(&o, "-fno-winograd", "-fwinograd", "m.onnx"));
  CHECK(!o.no_winograd);
  mlcc_options_deinit(&o);
  CHECK_OK(PARSE(&o, "--", "-weird.onnx"));
  CHECK_STREQ(o.input, "-weird.onnx");
  mlcc_options_deinit(&o);
  // Cache administration: alone they need no input; --set-config repeats.
  CHECK_OK(PARSE(&o, "-z", "--cleanup", "--print-stats", "--show-config", "--set-config",
                 "max_size=1G", "--set-config=read_only=true"));
  CHECK(o.zero_stats && o.cache_cleanup && o.print_stats && o.show_config);
  CHECK_EQ_INT(o.n_set_config, 2);
  CHECK_STREQ(o.set_config[0], "max_size=1G");
  CHECK_STREQ(o.set_config[1], "read_only=true");
  CHECK(mlcc_options_info_only(&o));
  mlcc_options_deinit(&o);
  CHECK_OK(PARSE(&o, "--zero-stats", "--cache-trim", "m.onnx"));
  CHECK(o.zero_stats && o.cache_cleanup && !mlcc_options_info_only(&o));
  mlcc_options_deinit(&o);
}

static void test_suggest(void) {
  char buf[64];
  CHECK(mlcc_options_suggest("--nmae=foo", buf, sizeof(buf)));
  CHECK_STREQ(buf, "--name=foo");
  CHECK(mlcc_options_suggest("-mcpu", buf, sizeof(buf)));
  CHECK_STREQ(buf, "-mcpu=CPU");
  CHECK(!mlcc_options_suggest("--completely-unrelated-thing", buf, sizeof(buf)));
}

static void test_help_lists_every_option(void) {
  FILE* f = tmpfile();
  mlcc_options_print_help(f);
  long n = ftell(f);
  rewind(f);
  char* text = (char*)calloc(1, (size_t)n + 1);
  CHECK(fread(text, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  const char* must[] = {"--emit=KIND", "-o FILE", "-mcpu=CPU", "-O0 .. -O3", "-MF FILE",
                        "--input-shape=N=DIMS", "-###", "--print-targets", "--help"};
  for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); ++i) {
    if (strstr(text, must[i]) == NULL) {
      fprintf(stderr, "help lacks '%s'\n", must[i]);
      CHECK(0);
    }
  }
  free(text);
}

int main(void) {
  RUN(test_defaults);
  RUN(test_value_forms);
  RUN(test_depfile_flags);
  RUN(test_emit_last_wins);
  RUN(test_input_shapes);
  RUN(test_input_values);
  RUN(test_errors);
  RUN(test_info_and_cache_flags);
  RUN(test_suggest);
  RUN(test_help_lists_every_option);
  return TEST_EXIT();
}

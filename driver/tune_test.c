// SPDX-License-Identifier: Apache-2.0
// Tests for tuning record sets (driver/tune.h): parse <-> format round trip,
// the canonical order and digest, the lookup order, and malformed input
// rejected with a message (never a crash).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/tune.h"
#include "test.h"

static mlcc_tune_record_t rec(char key_c, char cpu_c, const char* cpu, int32_t rows) {
  mlcc_tune_record_t r;
  memset(&r, 0, sizeof(r));
  memset(r.key, key_c, 64);
  memset(r.cpu_key, cpu_c, 64);
  snprintf(r.triple, sizeof(r.triple), "x86_64-linux-gnu");
  snprintf(r.cpu, sizeof(r.cpu), "%s", cpu);
  snprintf(r.features, sizeof(r.features), "+avx2,+fma");
  snprintf(r.op, sizeof(r.op), "MatMul");
  r.space_version = 1;
  r.sched[0] = rows;
  r.sched[1] = 2;
  r.time_ns = 1000 + rows;
  r.default_time_ns = 2000;
  return r;
}

static void test_roundtrip_and_digest(void) {
  mlcc_tune_records_t a = {0}, b = {0}, c = {0};
  mlcc_tune_record_t r1 = rec('a', 'c', "znver3", 4), r2 = rec('a', 'b', "skylake", 6);
  CHECK_OK(mlcc_tune_records_add(&a, &r1));
  CHECK_OK(mlcc_tune_records_add(&a, &r2));
  // The same set added in the other order has the same text and digest.
  CHECK_OK(mlcc_tune_records_add(&b, &r2));
  CHECK_OK(mlcc_tune_records_add(&b, &r1));
  char* ta = mlcc_tune_records_format(&a);
  char* tb = mlcc_tune_records_format(&b);
  CHECK(ta != NULL && tb != NULL);
  if (ta != NULL && tb != NULL) {
    CHECK_STREQ(ta, tb);
    CHECK_OK(mlcc_tune_records_parse(ta, strlen(ta), &c));
    CHECK_EQ_INT(c.n, 2);
    char* tc = mlcc_tune_records_format(&c);
    CHECK(tc != NULL && strcmp(tc, ta) == 0);
    free(tc);
  }
  char da[65], db[65], dc[65];
  CHECK_OK(mlcc_tune_records_digest(&a, da));
  CHECK_OK(mlcc_tune_records_digest(&b, db));
  CHECK_OK(mlcc_tune_records_digest(&c, dc));
  CHECK_STREQ(da, db);
  CHECK_STREQ(da, dc);
  CHECK_EQ_INT(strlen(da), 64);
  // A replaced record (same cpu_key) changes the digest.
  mlcc_tune_record_t r3 = rec('a', 'c', "znver3", 5);
  CHECK_OK(mlcc_tune_records_add(&c, &r3));
  CHECK_EQ_INT(c.n, 2);
  CHECK_OK(mlcc_tune_records_digest(&c, dc));
  CHECK(strcmp(da, dc) != 0);
  mlcc_tune_records_t empty = {0};
  char de[65];
  CHECK_OK(mlcc_tune_records_digest(&empty, de));
  CHECK_STREQ(de, "");
  free(ta);
  free(tb);
  mlcc_tune_records_deinit(&a);
  mlcc_tune_records_deinit(&b);
  mlcc_tune_records_deinit(&c);
}

static void test_find_order(void) {
  mlcc_tune_records_t s = {0};
  mlcc_tune_record_t r1 = rec('a', 'c', "znver3", 4), r2 = rec('a', 'b', "skylake", 6);
  CHECK_OK(mlcc_tune_records_add(&s, &r1));
  CHECK_OK(mlcc_tune_records_add(&s, &r2));
  char cpu_c[65], cpu_x[65], key_a[65], key_z[65];
  memset(cpu_c, 'c', 64), cpu_c[64] = 0;
  memset(cpu_x, 'e', 64), cpu_x[64] = 0;
  memset(key_a, 'a', 64), key_a[64] = 0;
  memset(key_z, 'f', 64), key_z[64] = 0;
  const mlcc_tune_record_t* f = mlcc_tune_records_find(&s, cpu_c, key_a, true);
  CHECK(f != NULL && strcmp(f->cpu, "znver3") == 0);  // exact CPU first
  CHECK(mlcc_tune_records_find(&s, cpu_x, key_a, false) == NULL);
  f = mlcc_tune_records_find(&s, cpu_x, key_a, true);  // features key: lowest cpu_key
  CHECK(f != NULL && strcmp(f->cpu, "skylake") == 0);
  CHECK(mlcc_tune_records_find(&s, cpu_x, key_z, true) == NULL);
  mlcc_tune_records_deinit(&s);
}

static void expect_bad(const char* text) {
  mlcc_tune_records_t s = {0};
  mlcc_tune_record_t keep = rec('a', 'c', "znver3", 4);
  CHECK_OK(mlcc_tune_records_add(&s, &keep));
  mlcc_status_t st = mlcc_tune_records_parse(text, strlen(text), &s);
  if (st == NULL) fprintf(stderr, "  accepted: %s\n", text);
  CHECK(st != NULL && mlcc_status_code(st) == MLCC_STATUS_INVALID_MODEL);
  CHECK_EQ_INT(s.n, 1);  // unchanged on error
  mlcc_status_free(st);
  mlcc_tune_records_deinit(&s);
}

static void test_malformed(void) {
  const char* k = "\"key\": \"" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "\"";
  const char* ck = "\"cpu_key\": \"" "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" "\"";
  char buf[1024];
  expect_bad("");
  expect_bad("[]");
  expect_bad("{\"format\": \"mlcc-tuning-records\"}");  // no version
  expect_bad("{\"format\": \"other\", \"version\": 1, \"records\": []}");
  expect_bad("{\"format\": \"mlcc-tuning-records\", \"version\": 2, \"records\": []}");
  expect_bad("{\"format\": \"mlcc-tuning-records\", \"version\": 1, \"records\": [{}]}");
  snprintf(buf, sizeof(buf),
           "{\"format\": \"mlcc-tuning-records\", \"version\": 1, \"records\": [{%s, %s, "
           "\"space_version\": 1, \"sched\": [1, 2, 3]}]}", k, ck);
  expect_bad(buf);  // three schedule values
  snprintf(buf, sizeof(buf),
           "{\"format\": \"mlcc-tuning-records\", \"version\": 1, \"records\": [{%s, %s, "
           "\"space_version\": 1, \"sched\": [1, -2, 0, 0]}]}", k, ck);
  expect_bad(buf);  // negative
  snprintf(buf, sizeof(buf),
           "{\"format\": \"mlcc-tuning-records\", \"version\": 1, \"records\": [{%s, "
           "\"cpu_key\": \"BB\", \"space_version\": 1, \"sched\": [1, 0, 0, 0]}]}", k);
  expect_bad(buf);  // short key
  snprintf(buf, sizeof(buf),
           "{\"format\": \"mlcc-tuning-records\", \"version\": 1, \"records\": [{%s, %s, "
           "\"space_version\": 1.5, \"sched\": [1, 0, 0, 0]}]}", k, ck);
  expect_bad(buf);  // not an integer
  snprintf(buf, sizeof(buf),
           "{\"format\": \"mlcc-tuning-records\", \"version\": 1, \"records\": [{%s, %s, "
           "\"space_version\": 1, \"sched\": [1, 0, 0, 0]}]} trailing", k, ck);
  expect_bad(buf);
  char deep[200];
  memset(deep, '[', sizeof(deep) - 1);
  deep[sizeof(deep) - 1] = '\0';
  snprintf(buf, sizeof(buf), "{\"x\": %s", deep);
  expect_bad(buf);
  // Unknown fields are skipped; a good one parses.
  snprintf(buf, sizeof(buf),
           "{\"format\": \"mlcc-tuning-records\", \"comment\": {\"a\": [1, true, null]}, "
           "\"version\": 1, \"records\": [{%s, %s, \"space_version\": 3, \"extra\": \"x\\u0041\", "
           "\"sched\": [1, 0, 4, 0]}]}", k, ck);
  mlcc_tune_records_t s = {0};
  CHECK_OK(mlcc_tune_records_parse(buf, strlen(buf), &s));
  CHECK_EQ_INT(s.n, 1);
  if (s.n == 1) {
    CHECK_EQ_INT(s.items[0].space_version, 3);
    CHECK_EQ_INT(s.items[0].sched[2], 4);
  }
  mlcc_tune_records_deinit(&s);
}

int main(void) {
  RUN(test_roundtrip_and_digest);
  RUN(test_find_order);
  RUN(test_malformed);
  return TEST_EXIT();
}

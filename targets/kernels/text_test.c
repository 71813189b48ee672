// SPDX-License-Identifier: Apache-2.0
// Tests of the text emitters (targets/kernels/text.c: TfIdfVectorizer) evaluated through
// the host JIT, against a plain C reference written from the ONNX spec
// (TfIdfVectorizer-9), covering what the ONNX node cases do not: IDF and
// TFIDF weights, 3-grams with skips, a non-identity ngram_indexes map with
// two n-grams on one coordinate, a repeated pool n-gram, and the errors.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/codegen/codegen.h"
#include "test.h"

#include "targets/emit/emit_test_util.h"


typedef struct ref_cfg_t {
  int64_t min_gram, max_gram, max_skip;
  const int64_t* pool;
  const int64_t* counts;
  int n_counts, pool_len;
  const int64_t* indexes;
  const float* weights;  // NULL: ones
  int mode;              // 0 TF, 1 IDF, 2 TFIDF
  int n_ngrams, out_dim;
} ref_cfg_t;

// Spec reference for one row x[0..cols): for every pool n-gram (first
// occurrence of identical ones only), count the (start, skip) windows
// matching it, then weight into y[indexes[i]].
static void ref_row(const ref_cfg_t* c, const int64_t* x, int cols, float* y) {
  for (int o = 0; o < c->out_dim; ++o) y[o] = 0;
  int id = 0;
  for (int k = 0; k < c->n_counts; ++k) {
    int n = k + 1;
    int end = k + 1 < c->n_counts ? (int)c->counts[k + 1] : c->pool_len;
    for (int p = (int)c->counts[k]; p < end; p += n, ++id) {
      if (n < c->min_gram || n > c->max_gram) continue;
      bool repeat = false;
      for (int q = (int)c->counts[k]; q < p; q += n) {
        repeat |= memcmp(c->pool + q, c->pool + p, (size_t)n * 8) == 0;
      }
      if (repeat) continue;
      int64_t count = 0;
      int skips = n == 1 ? 0 : (int)c->max_skip;
      for (int s = 0; s <= skips; ++s) {
        for (int st = 0; st + (n - 1) * (s + 1) < cols; ++st) {
          bool m = true;
          for (int t = 0; t < n; ++t) m &= x[st + t * (s + 1)] == c->pool[p + t];
          count += m;
        }
      }
      float w = c->weights ? c->weights[id] : 1.0f;
      float v = c->mode == 0 ? (float)count : c->mode == 1 ? (count > 0 ? w : 0.0f) : count * w;
      y[c->indexes[id]] += v;
    }
  }
}

static mlcc_status_t run_tfidf(const ref_cfg_t* c, mlcc_dtype_t dt, const void* x, int rows,
                               int cols, int rank, mlcc_value_t** out) {
  mlcc_value_t* in = C(dt, rank == 2 ? S(rows, cols) : S(cols), x);
  *out = O(MLCC_DTYPE_F32, rank == 2 ? S(rows, c->out_dim) : S(c->out_dim));
  static const char* const kModes[3] = {"TF", "IDF", "TFIDF"};
  mlcc_attr_t attrs[9] = {
      A_int("min_gram_length", c->min_gram),
      A_int("max_gram_length", c->max_gram),
      A_int("max_skip_count", c->max_skip),
      A_str("mode", kModes[c->mode]),
      A_ints("ngram_counts", c->counts, (uint32_t)c->n_counts),
      A_ints("ngram_indexes", c->indexes, (uint32_t)c->n_ngrams),
      A_ints("pool_int64s", c->pool, (uint32_t)c->pool_len),
      A_floats("weights", c->weights, (uint32_t)c->n_ngrams),
  };
  return run(MLCC_OP_TF_IDF_VECTORIZER, 9, &in, 1, out, 1, attrs, c->weights ? 8 : 7);
}

static void check_rows(const ref_cfg_t* c, const int64_t* x64, int rows, int cols,
                       const mlcc_value_t* out) {
  if (!is_const(out)) {
    CHECK(false);
    return;
  }
  float want[64];
  for (int r = 0; r < rows; ++r) {
    ref_row(c, x64 + r * cols, cols, want);
    for (int o = 0; o < c->out_dim; ++o) {
      float got = ((const float*)out->data)[r * c->out_dim + o];
      if (got != want[o]) {
        fprintf(stderr, "row %d coord %d = %g, want %g\n", r, o, got, want[o]);
        CHECK(false);
      }
    }
  }
}

// Pool: 1-grams {4, 7, 9}, 2-grams {(4,7), (7,4), (4,7) again}, 3-grams
// {(4,4,7), (9,7,4)}; coordinates map n-grams 1 and 3 onto coordinate 0.
static const int64_t kPool[] = {4, 7, 9, 4, 7, 7, 4, 4, 7, 4, 4, 7, 9, 7, 4};
static const int64_t kCounts[] = {0, 3, 9};
static const int64_t kIndexes[] = {2, 0, 5, 0, 1, 4, 3, 6};
static const float kWeights[] = {0.5f, 2.0f, 0.25f, 1.5f, 3.0f, 10.0f, 0.75f, 4.0f};
static const int64_t kX[] = {4, 7, 4, 4, 7, 9, 7, 4, 4, 7, 9, 1,  //
                             9, 9, 7, 4, 4, 4, 7, 7, 4, 9, 7, 4};

static void test_tf_idf_tfidf_against_reference(void) {
  begin();
  for (int mode = 0; mode < 3; ++mode) {
    for (int skip = 0; skip <= 3; skip += 3) {
      for (int min_gram = 1; min_gram <= 2; ++min_gram) {
        ref_cfg_t c = {.min_gram = min_gram, .max_gram = 3, .max_skip = skip, .pool = kPool,
                       .counts = kCounts, .n_counts = 3, .pool_len = 15, .indexes = kIndexes,
                       .weights = mode ? kWeights : NULL, .mode = mode, .n_ngrams = 8,
                       .out_dim = 7};
        mlcc_value_t* out = NULL;
        CHECK_OK(run_tfidf(&c, MLCC_DTYPE_I64, kX, 2, 12, 2, &out));
        check_rows(&c, kX, 2, 12, out);
        // The same first row as 1-D int32.
        int32_t x32[12];
        for (int i = 0; i < 12; ++i) x32[i] = (int32_t)kX[i];
        mlcc_value_t* out1 = NULL;
        CHECK_OK(run_tfidf(&c, MLCC_DTYPE_I32, x32, 1, 12, 1, &out1));
        check_rows(&c, kX, 1, 12, out1);
      }
    }
  }
  // Hand-checked: TF, min 2, skip 0, row 0 = 4 7 4 4 7 9 7 4 4 7 9 1:
  // (4,7) at 0, 3, 8 -> coordinate 0 = 3 (its repeat, n-gram 5 on coordinate
  // 4, adds nothing; the 1-gram 7 also on coordinate 0 is below min 2);
  // (7,4) at 1, 6 -> y[1] = 2; (4,4,7) at 2, 7 -> y[3] = 2; (9,7,4) at 5 -> y[6] = 1.
  ref_cfg_t c = {.min_gram = 2, .max_gram = 3, .max_skip = 0, .pool = kPool,
                 .counts = kCounts, .n_counts = 3, .pool_len = 15, .indexes = kIndexes,
                 .mode = 0, .n_ngrams = 8, .out_dim = 7};
  mlcc_value_t* out = NULL;
  CHECK_OK(run_tfidf(&c, MLCC_DTYPE_I64, kX, 1, 12, 1, &out));
  if (is_const(out)) {
    const float* y = out->data;
    const float want[7] = {3, 2, 0, 2, 0, 0, 1};
    for (int i = 0; i < 7; ++i) CHECK(y[i] == want[i]);
  }
  end();
}

static void test_errors(void) {
  begin();
  const int64_t x[4] = {1, 2, 3, 4};
  // ngram_counts group of 2-grams holds 3 tokens: not whole n-grams.
  static const int64_t pool[] = {1, 2, 3, 4};
  static const int64_t counts_bad[] = {0, 1};
  static const int64_t idx2[] = {0, 1};
  ref_cfg_t c = {.min_gram = 1, .max_gram = 2, .pool = pool, .counts = counts_bad,
                 .n_counts = 2, .pool_len = 4, .indexes = idx2, .n_ngrams = 2, .out_dim = 2};
  mlcc_value_t* out = NULL;
  CHECK_STATUS(run_tfidf(&c, MLCC_DTYPE_I64, x, 1, 4, 1, &out), MLCC_STATUS_INVALID_MODEL);
  // One index per n-gram: 4 1-grams need 4 indexes.
  static const int64_t counts1[] = {0};
  c.counts = counts1;
  c.n_counts = 1;
  CHECK_STATUS(run_tfidf(&c, MLCC_DTYPE_I64, x, 1, 4, 1, &out), MLCC_STATUS_INVALID_MODEL);
  // String pools are not supported.
  mlcc_value_t* in = C(MLCC_DTYPE_I64, S(4), x);
  mlcc_value_t* o = O(MLCC_DTYPE_F32, S(1));
  static const char* const strs[] = {"a"};
  mlcc_attr_t attrs[7] = {
      A_int("min_gram_length", 1), A_int("max_gram_length", 1), A_int("max_skip_count", 0),
      A_str("mode", "TF"), A_ints("ngram_counts", counts1, 1),
      A_ints("ngram_indexes", idx2, 1),
      {.name = "pool_strings", .kind = MLCC_ATTR_STRINGS, .strings = strs, .count = 1},
  };
  CHECK_STATUS(run(MLCC_OP_TF_IDF_VECTORIZER, 9, &in, 1, &o, 1, attrs, 7),
               MLCC_STATUS_UNIMPLEMENTED);
  end();
}

int main(void) {
  RUN(test_tf_idf_tfidf_against_reference);
  RUN(test_errors);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// Shared between the text ops' shape inference (ir/ops/text.c) and their
// emitters (targets/kernels/text.c): the parsed, validated attributes
// of a TfIdfVectorizer node. Thread-compatible (plain data).
#ifndef MLCC_IR_OPS_TEXT_H_
#define MLCC_IR_OPS_TEXT_H_

#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mlcc_tfidf_mode_e {
  MLCC_TFIDF_TF = 0,  // count of each n-gram
  MLCC_TFIDF_IDF,     // weight if the n-gram occurs, else 0
  MLCC_TFIDF_TFIDF,   // count * weight
} mlcc_tfidf_mode_t;

// ONNX TfIdfVectorizer (opset 9) with an integer pool (pool_int64s). The
// pool's n-grams are numbered in pool order: the 1-grams from
// pool[ngram_counts[0]], then the 2-grams from pool[ngram_counts[1]], ...
// N-gram i (length |len[i]|, tokens pool[off[i] .. off[i]+len[i])) is
// counted into output coordinate |index[i]| (ngram_indexes[i]) with weight
// |weight[i]| (1 when the attribute is absent). |counted[i]| is false for
// n-grams the node never counts: lengths outside [min_gram, max_gram] and
// repeats of an earlier identical n-gram (the first one takes the matches).
typedef struct mlcc_tfidf_t {
  mlcc_tfidf_mode_t mode;
  int64_t min_gram, max_gram, max_skip;
  uint32_t n_ngrams;
  int64_t out_dim;         // max(ngram_indexes) + 1 (0 without n-grams)
  const int64_t* pool;     // borrowed from the node's attribute
  uint32_t pool_len;
  // n_ngrams entries each, malloc'ed (mlcc_tfidf_deinit frees them).
  int64_t* off;
  int64_t* len;
  int64_t* index;
  float* weight;
  bool* counted;
} mlcc_tfidf_t;

// Parses and validates |node|'s attributes into |*out| (zeroed first; call
// mlcc_tfidf_deinit even on failure). Errors: INVALID_MODEL for missing or
// inconsistent attributes (mode not TF/IDF/TFIDF, gram lengths, ngram_counts
// not splitting the pool into whole n-grams, ngram_indexes / weights not one
// per n-gram, negative indexes); UNIMPLEMENTED for pool_strings (string
// tensors are not supported); RESOURCE_EXHAUSTED on OOM.
mlcc_status_t mlcc_tfidf_parse(const mlcc_node_t* node, mlcc_tfidf_t* out);
void mlcc_tfidf_deinit(mlcc_tfidf_t* tfidf);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_TEXT_H_

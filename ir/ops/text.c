// SPDX-License-Identifier: Apache-2.0
// Shape/type inference of the text ops (ops.def "Text"): TfIdfVectorizer.
// Attribute facts from the ONNX operator spec (TfIdfVectorizer-9).
#include "ir/ops/text.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ops/infer_impl.h"

static mlcc_status_t bad(const char* what, long long v) {
  return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "TfIdfVectorizer %s; got %lld", what, v);
}

// Required int attribute |name|.
static mlcc_status_t req_int(const mlcc_node_t* node, const char* name, int64_t* out) {
  if (mlcc_node_attr(node, name) == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer needs the attribute '%s'; it is missing", name);
  }
  return mlcc_node_attr_int(node, name, 0, out);
}

void mlcc_tfidf_deinit(mlcc_tfidf_t* t) {
  free(t->off);
  free(t->len);
  free(t->index);
  free(t->weight);
  free(t->counted);
  memset(t, 0, sizeof(*t));
}

// Orders n-grams |a| and |b| of |t| by length, then tokens: <0, 0 or >0.
static int cmp_ngram(const mlcc_tfidf_t* t, uint32_t a, uint32_t b) {
  if (t->len[a] != t->len[b]) return t->len[a] < t->len[b] ? -1 : 1;
  for (int64_t k = 0; k < t->len[a]; ++k) {
    int64_t x = t->pool[t->off[a] + k], y = t->pool[t->off[b] + k];
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// Stable merge sort of |idx[0..n)| by cmp_ngram, using |tmp| (n entries).
static void sort_ngrams(const mlcc_tfidf_t* t, uint32_t* idx, uint32_t* tmp, uint32_t n) {
  for (uint32_t width = 1; width < n; width *= 2) {
    for (uint32_t lo = 0; lo < n; lo += 2 * width) {
      uint32_t mid = lo + width < n ? lo + width : n;
      uint32_t hi = mid + width < n ? mid + width : n;
      uint32_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp_ngram(t, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof(*idx));
    if (width > n / 2) break;
  }
}

// Clears counted[i] of every counted n-gram equal to an earlier counted one
// (O(n log n): a pool may hold many thousands of n-grams).
static mlcc_status_t drop_repeats(mlcc_tfidf_t* t) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < t->n_ngrams; ++i) n += t->counted[i];
  if (n < 2) return mlcc_ok_status();
  uint32_t* idx = (uint32_t*)malloc((size_t)n * sizeof(uint32_t));
  uint32_t* tmp = (uint32_t*)malloc((size_t)n * sizeof(uint32_t));
  if (idx == NULL || tmp == NULL) {
    free(idx);
    free(tmp);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory parsing TfIdfVectorizer attributes");
  }
  n = 0;
  for (uint32_t i = 0; i < t->n_ngrams; ++i) {
    if (t->counted[i]) idx[n++] = i;
  }
  sort_ngrams(t, idx, tmp, n);  // stable: equal n-grams stay in pool order
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t first = k - 1;
    while (k < n && cmp_ngram(t, idx[first], idx[k]) == 0) t->counted[idx[k++]] = false;
  }
  free(idx);
  free(tmp);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_tfidf_parse(const mlcc_node_t* node, mlcc_tfidf_t* out) {
  memset(out, 0, sizeof(*out));
  MLCC_RETURN_IF_ERROR(req_int(node, "min_gram_length", &out->min_gram));
  MLCC_RETURN_IF_ERROR(req_int(node, "max_gram_length", &out->max_gram));
  MLCC_RETURN_IF_ERROR(req_int(node, "max_skip_count", &out->max_skip));
  if (out->min_gram < 1) return bad("attribute 'min_gram_length' must be >= 1", out->min_gram);
  if (out->max_gram < out->min_gram) {
    return bad("attribute 'max_gram_length' must be >= min_gram_length", out->max_gram);
  }
  if (out->max_skip < 0) return bad("attribute 'max_skip_count' must be >= 0", out->max_skip);
  const char* mode = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "mode", NULL, &mode));
  if (mode == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer needs the attribute 'mode'; it is missing");
  }
  if (strcmp(mode, "TF") == 0) {
    out->mode = MLCC_TFIDF_TF;
  } else if (strcmp(mode, "IDF") == 0) {
    out->mode = MLCC_TFIDF_IDF;
  } else if (strcmp(mode, "TFIDF") == 0) {
    out->mode = MLCC_TFIDF_TFIDF;
  } else {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer attribute 'mode' must be TF, IDF or TFIDF; got "
                            "'%.64s'",
                            mode);
  }
  if (mlcc_node_attr(node, "pool_strings") != NULL) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "TfIdfVectorizer with pool_strings (string tensors) is not "
                            "supported; only pool_int64s");
  }
  if (mlcc_node_attr(node, "pool_int64s") == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer needs the attribute 'pool_int64s' (or "
                            "pool_strings); both are missing");
  }
  const int64_t *counts = NULL, *indexes = NULL;
  uint32_t n_counts = 0, n_indexes = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "pool_int64s", &out->pool, &out->pool_len));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "ngram_counts", &counts, &n_counts));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "ngram_indexes", &indexes, &n_indexes));
  if (mlcc_node_attr(node, "ngram_counts") == NULL ||
      mlcc_node_attr(node, "ngram_indexes") == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer needs the attributes 'ngram_counts' and "
                            "'ngram_indexes'");
  }
  const float* weights = NULL;
  uint32_t n_weights = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_floats(node, "weights", &weights, &n_weights));
  if (weights != NULL && n_weights != n_indexes) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer attribute 'weights' must have one entry per "
                            "n-gram (%u, like ngram_indexes); it has %u",
                            n_indexes, n_weights);
  }
  // Count the n-grams each ngram_counts group holds.
  uint64_t total = 0;
  for (uint32_t k = 0; k < n_counts; ++k) {
    int64_t start = counts[k];
    int64_t end = k + 1 < n_counts ? counts[k + 1] : (int64_t)out->pool_len;
    if (start < 0 || start > end || end > (int64_t)out->pool_len) {
      return bad("attribute 'ngram_counts' must be non-decreasing offsets into the pool",
                 (long long)start);
    }
    if ((end - start) % (int64_t)(k + 1) != 0) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "TfIdfVectorizer pool slice of the %u-grams (ngram_counts[%u]) "
                              "has %lld tokens, not a multiple of %u",
                              k + 1, k, (long long)(end - start), k + 1);
    }
    total += (uint64_t)((end - start) / (int64_t)(k + 1));
  }
  if (n_counts > 0 && counts[0] != 0) {
    return bad("attribute 'ngram_counts' must start at 0", (long long)counts[0]);
  }
  if (total != n_indexes) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer attribute 'ngram_indexes' must have one entry per "
                            "pool n-gram (%llu); it has %u",
                            (unsigned long long)total, n_indexes);
  }
  out->n_ngrams = n_indexes;
  size_t n = n_indexes ? n_indexes : 1;
  out->off = (int64_t*)calloc(n, sizeof(int64_t));
  out->len = (int64_t*)calloc(n, sizeof(int64_t));
  out->index = (int64_t*)calloc(n, sizeof(int64_t));
  out->weight = (float*)calloc(n, sizeof(float));
  out->counted = (bool*)calloc(n, sizeof(bool));
  if (!out->off || !out->len || !out->index || !out->weight || !out->counted) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory parsing TfIdfVectorizer attributes");
  }
  uint32_t i = 0;
  for (uint32_t k = 0; k < n_counts; ++k) {
    int64_t end = k + 1 < n_counts ? counts[k + 1] : (int64_t)out->pool_len;
    for (int64_t p = counts[k]; p < end; p += (int64_t)(k + 1), ++i) {
      out->off[i] = p;
      out->len[i] = (int64_t)(k + 1);
    }
  }
  out->out_dim = 0;
  for (i = 0; i < out->n_ngrams; ++i) {
    if (indexes[i] < 0) return bad("ngram_indexes must be >= 0", (long long)indexes[i]);
    if (indexes[i] >= MLCC_INFER_MAX_NUMEL) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "TfIdfVectorizer output coordinate %lld is too large",
                              (long long)indexes[i]);
    }
    out->index[i] = indexes[i];
    if (indexes[i] + 1 > out->out_dim) out->out_dim = indexes[i] + 1;
    out->weight[i] = weights ? weights[i] : 1.0f;
    out->counted[i] = out->len[i] >= out->min_gram && out->len[i] <= out->max_gram;
  }
  return drop_repeats(out);
}

// X: int32/int64 [C] or [N, C]; Y: float32 [D] or [N, D], D = out_dim.
mlcc_status_t mlcc_infer_text_tfidf(mlcc_node_t* node) {
  mlcc_value_t* x = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_INT32_64));
  if (x->shape.rank != 1 && x->shape.rank != 2) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "TfIdfVectorizer input X must be 1-D [C] or 2-D [N, C]; got %s",
                            mlcc_infer_fmt_shape(&x->shape, sb));
  }
  mlcc_tfidf_t t;
  mlcc_status_t s = mlcc_tfidf_parse(node, &t);
  mlcc_shape_t y = x->shape;
  y.dims[y.rank - 1] = t.out_dim;
  mlcc_tfidf_deinit(&t);
  MLCC_RETURN_IF_ERROR(s);
  return mlcc_infer_set_output(node, 0, MLCC_DTYPE_F32, &y);
}

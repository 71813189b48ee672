// SPDX-License-Identifier: Apache-2.0
// Kernel emitters of the text ops (ops.def "Text"): TfIdfVectorizer with
// an integer pool. The pool and the n-gram tables become private constant
// arrays; the kernel counts, per output coordinate, the pool n-grams mapped
// to it, so every output element is written once through
// mlcc_emit_store_output (no scratch memory).
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/text.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

// A private constant global holding |n| (>= 1) values of |elem_ty|.
static LLVMValueRef table(mlcc_emit_ctx_t* ctx, LLVMTypeRef elem_ty, LLVMValueRef* elems,
                          unsigned n, const char* name) {
  LLVMValueRef g = LLVMAddGlobal(ctx->module, LLVMArrayType(elem_ty, n), name);
  LLVMSetInitializer(g, LLVMConstArray(elem_ty, elems, n));
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddr(g, 1);
  LLVMSetAlignment(g, 16);
  return g;
}

// An i64 table of |vals[0..n)| (one 0 entry when n == 0). NULL on OOM.
static LLVMValueRef i64_table(mlcc_emit_ctx_t* ctx, const int64_t* vals, size_t n,
                              const char* name) {
  size_t m = n ? n : 1;
  LLVMValueRef* e = (LLVMValueRef*)malloc(m * sizeof(LLVMValueRef));
  if (e == NULL) return NULL;
  for (size_t i = 0; i < m; ++i) e[i] = c64(ctx, i < n ? vals[i] : 0);
  LLVMValueRef g = table(ctx, ctx->t_i64, e, (unsigned)m, name);
  free(e);
  return g;
}

static LLVMValueRef load_at(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef g,
                            LLVMValueRef idx) {
  LLVMValueRef p = LLVMBuildInBoundsGEP2(ctx->b, t, g, &idx, 1, "");
  return LLVMBuildLoad2(ctx->b, t, p, "");
}

// ONNX TfIdfVectorizer-9 over X [C] or [N, C] (int32/int64) into Y [D] or
// [N, D] (float32). For row r and coordinate o, Y[r, o] sums over the
// counted pool n-grams i with ngram_indexes[i] == o:
//   TF: c_i, IDF: (c_i > 0 ? w_i : 0), TFIDF: c_i * w_i,
// where c_i counts the (start, skip) pairs whose tokens X[r, start + k *
// (skip + 1)], k < len_i, equal n-gram i: skip in [0, max_skip_count] for
// n-grams of 2+ tokens, skip 0 only for 1-grams (a token is one 1-gram).
static mlcc_status_t emit_text_tfidf(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (x == NULL || y == NULL || (x->dtype != MLCC_DTYPE_I32 && x->dtype != MLCC_DTYPE_I64) ||
      y->dtype != MLCC_DTYPE_F32 || x->shape.rank < 1 || x->shape.rank > 2) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "TfIdfVectorizer needs int32/int64 X of rank 1 or 2 and float Y");
  }
  mlcc_tfidf_t t;
  mlcc_status_t st = mlcc_tfidf_parse(node, &t);
  if (st != NULL) {
    mlcc_tfidf_deinit(&t);
    return st;
  }
  int64_t rows = x->shape.rank == 2 ? x->shape.dims[0] : 1;
  int64_t cols = x->shape.dims[x->shape.rank - 1];
  int64_t dim = t.out_dim;
  if (rows == 0 || dim == 0) {
    mlcc_tfidf_deinit(&t);
    return mlcc_ok_status();
  }
  // The coordinates that counted n-grams map to, ascending: coord[u], u <
  // n_coords (at most one per n-gram, so the tables never scale with |dim|,
  // which may be up to 2^40); coordinate u's n-grams are list[start[u] ..
  // start[u+1]) (CSR).
  uint32_t nn = t.n_ngrams ? t.n_ngrams : 1;
  int64_t* coord = (int64_t*)calloc(nn, sizeof(int64_t));
  int64_t* start = (int64_t*)calloc((size_t)nn + 1, sizeof(int64_t));
  int64_t* list = (int64_t*)calloc(nn, sizeof(int64_t));
  uint32_t* order = (uint32_t*)calloc(nn, sizeof(uint32_t));
  LLVMValueRef* wv = (LLVMValueRef*)calloc(nn, sizeof(LLVMValueRef));
  LLVMValueRef g_pool = NULL, g_off = NULL, g_len = NULL, g_start = NULL, g_list = NULL;
  LLVMValueRef g_w = NULL, g_coord = NULL;
  uint32_t n_coords = 0;
  if (coord != NULL && start != NULL && list != NULL && order != NULL && wv != NULL) {
    uint32_t n_list = 0;
    for (uint32_t i = 0; i < t.n_ngrams; ++i) {
      if (t.counted[i]) order[n_list++] = i;
    }
    // Insertion into |order| by index would be quadratic: sort by
    // (index, n-gram number) with a bottom-up merge.
    uint32_t* tmp = (uint32_t*)calloc(nn, sizeof(uint32_t));
    if (tmp != NULL) {
      for (uint32_t width = 1; width < n_list; width *= 2) {
        for (uint32_t lo = 0; lo < n_list; lo += 2 * width) {
          uint32_t mid = lo + width < n_list ? lo + width : n_list;
          uint32_t hi = mid + width < n_list ? mid + width : n_list;
          uint32_t i = lo, j = mid, k = lo;
          while (i < mid && j < hi) {
            tmp[k++] = t.index[order[j]] < t.index[order[i]] ? order[j++] : order[i++];
          }
          while (i < mid) tmp[k++] = order[i++];
          while (j < hi) tmp[k++] = order[j++];
        }
        memcpy(order, tmp, (size_t)n_list * sizeof(uint32_t));
        if (width > n_list / 2) break;
      }
      free(tmp);
      for (uint32_t k = 0; k < n_list; ++k) {
        int64_t o = t.index[order[k]];
        if (n_coords == 0 || coord[n_coords - 1] != o) {
          coord[n_coords] = o;
          start[n_coords] = k;
          ++n_coords;
        }
        list[k] = order[k];
      }
      start[n_coords] = n_list;
      for (uint32_t i = 0; i < nn; ++i) {
        wv[i] = mlcc_emit_f32(ctx, i < t.n_ngrams ? t.weight[i] : 0.0f);
      }
      g_pool = i64_table(ctx, t.pool, t.pool_len, "tfidf.pool");
      g_off = i64_table(ctx, t.off, t.n_ngrams, "tfidf.off");
      g_len = i64_table(ctx, t.len, t.n_ngrams, "tfidf.len");
      g_coord = i64_table(ctx, coord, n_coords, "tfidf.coord");
      g_start = i64_table(ctx, start, (size_t)n_coords + 1, "tfidf.start");
      g_list = i64_table(ctx, list, n_list, "tfidf.list");
      g_w = table(ctx, ctx->t_f32, wv, nn, "tfidf.w");
    }
  }
  free(coord);
  free(start);
  free(list);
  free(order);
  free(wv);
  if (!g_pool || !g_off || !g_len || !g_start || !g_list || !g_w || !g_coord) {
    mlcc_tfidf_deinit(&t);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory emitting TfIdfVectorizer tables");
  }
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef acc = mlcc_emit_var(ctx, ctx->t_f32, NULL);
  LLVMValueRef cnt = mlcc_emit_var(ctx, ctx->t_i64, NULL);
  LLVMValueRef match = mlcc_emit_var(ctx, ctx->t_i1, NULL);
  LLVMValueRef next = mlcc_emit_var(ctx, ctx->t_i64, NULL);  // next coord[] entry
  mlcc_loop_t lr = mlcc_emit_for(ctx, 0, rows, "row");
  LLVMValueRef row_base = LLVMBuildMul(b, lr.iv, c64(ctx, cols), "");
  LLVMBuildStore(b, c64(ctx, 0), next);
  mlcc_loop_t lo = mlcc_emit_for(ctx, 0, dim, "coord");
  LLVMBuildStore(b, mlcc_emit_f32(ctx, 0.0f), acc);
  // Coordinate lo.iv has n-grams iff it is coord[next]: then they are
  // list[start[next] .. start[next+1]), else the range is empty.
  LLVMValueRef u = LLVMBuildLoad2(b, ctx->t_i64, next, "");
  LLVMValueRef in_range = LLVMBuildICmp(b, LLVMIntULT, u, c64(ctx, n_coords), "");
  LLVMValueRef u_safe = LLVMBuildSelect(b, in_range, u, c64(ctx, 0), "");
  LLVMValueRef hit_coord = LLVMBuildAnd(
      b, in_range,
      LLVMBuildICmp(b, LLVMIntEQ, load_at(ctx, ctx->t_i64, g_coord, u_safe), lo.iv, ""), "");
  LLVMValueRef s0 = load_at(ctx, ctx->t_i64, g_start, u_safe);
  LLVMValueRef s1 = load_at(ctx, ctx->t_i64, g_start, LLVMBuildAdd(b, u_safe, c64(ctx, 1), ""));
  LLVMValueRef t0 = LLVMBuildSelect(b, hit_coord, s0, c64(ctx, 0), "");
  LLVMValueRef t1 = LLVMBuildSelect(b, hit_coord, s1, c64(ctx, 0), "");
  LLVMBuildStore(b, LLVMBuildAdd(b, u, LLVMBuildZExt(b, hit_coord, ctx->t_i64, ""), ""), next);
  mlcc_loop_t lt = mlcc_emit_loop_begin(ctx, t0, t1, 1, "ngram");
  {
    LLVMValueRef id = load_at(ctx, ctx->t_i64, g_list, lt.iv);
    LLVMValueRef off = load_at(ctx, ctx->t_i64, g_off, id);
    LLVMValueRef len = load_at(ctx, ctx->t_i64, g_len, id);
    LLVMValueRef len1 = LLVMBuildSub(b, len, c64(ctx, 1), "");
    LLVMValueRef one_gram = LLVMBuildICmp(b, LLVMIntEQ, len, c64(ctx, 1), "");
    // Skips past cols - 2 leave no room for a second token: clamp.
    int64_t max_skip = t.max_skip < cols - 1 ? t.max_skip : (cols > 1 ? cols - 2 : 0);
    LLVMValueRef n_skips =
        LLVMBuildSelect(b, one_gram, c64(ctx, 1), c64(ctx, max_skip + 1), "");
    LLVMBuildStore(b, c64(ctx, 0), cnt);
    mlcc_loop_t ls = mlcc_emit_loop_begin(ctx, c64(ctx, 0), n_skips, 1, "skip");
    LLVMValueRef step = LLVMBuildAdd(b, ls.iv, c64(ctx, 1), "");
    // Starts with the whole n-gram inside the row: start + len1*step < cols.
    LLVMValueRef n_starts = LLVMBuildSub(b, c64(ctx, cols), LLVMBuildMul(b, len1, step, ""), "");
    mlcc_loop_t lp = mlcc_emit_loop_begin(ctx, c64(ctx, 0), n_starts, 1, "start");
    LLVMBuildStore(b, LLVMConstInt(ctx->t_i1, 1, 0), match);
    mlcc_loop_t lk = mlcc_emit_loop_begin(ctx, c64(ctx, 0), len, 1, "tok");
    LLVMValueRef pos = LLVMBuildAdd(b, lp.iv, LLVMBuildMul(b, lk.iv, step, ""), "");
    LLVMValueRef xv = mlcc_emit_convert(
        ctx, mlcc_emit_load(ctx, x, LLVMBuildAdd(b, row_base, pos, "")), x->dtype,
        MLCC_DTYPE_I64);
    LLVMValueRef pv = load_at(ctx, ctx->t_i64, g_pool, LLVMBuildAdd(b, off, lk.iv, ""));
    LLVMValueRef eq = LLVMBuildICmp(b, LLVMIntEQ, xv, pv, "");
    LLVMBuildStore(b, LLVMBuildAnd(b, LLVMBuildLoad2(b, ctx->t_i1, match, ""), eq, ""), match);
    mlcc_emit_loop_end(ctx, &lk);
    LLVMValueRef hit = LLVMBuildZExt(b, LLVMBuildLoad2(b, ctx->t_i1, match, ""), ctx->t_i64, "");
    LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, ctx->t_i64, cnt, ""), hit, ""), cnt);
    mlcc_emit_loop_end(ctx, &lp);
    mlcc_emit_loop_end(ctx, &ls);
    LLVMValueRef c = LLVMBuildLoad2(b, ctx->t_i64, cnt, "");
    LLVMValueRef cf = LLVMBuildSIToFP(b, c, ctx->t_f32, "");
    LLVMValueRef w = load_at(ctx, ctx->t_f32, g_w, id);
    LLVMValueRef v = cf;
    if (t.mode == MLCC_TFIDF_IDF) {
      LLVMValueRef any = LLVMBuildICmp(b, LLVMIntSGT, c, c64(ctx, 0), "");
      v = LLVMBuildSelect(b, any, w, mlcc_emit_f32(ctx, 0.0f), "");
    } else if (t.mode == MLCC_TFIDF_TFIDF) {
      v = LLVMBuildFMul(b, cf, w, "");
    }
    LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, ctx->t_f32, acc, ""), v, ""), acc);
  }
  mlcc_emit_loop_end(ctx, &lt);
  LLVMValueRef out_idx = LLVMBuildAdd(b, LLVMBuildMul(b, lr.iv, c64(ctx, dim), ""), lo.iv, "");
  st = mlcc_emit_store_output(ctx, node, 0, out_idx, LLVMBuildLoad2(b, ctx->t_f32, acc, ""));
  mlcc_emit_loop_end(ctx, &lo);
  mlcc_emit_loop_end(ctx, &lr);
  mlcc_tfidf_deinit(&t);
  return st;
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_text_tfidf = {.emit = emit_text_tfidf};

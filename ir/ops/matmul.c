// SPDX-License-Identifier: Apache-2.0
// Shape/type inference for the contractions Gemm and MatMul.
#include <string.h>

#include "ir/ops/infer_impl.h"

// Gemm: Y[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, with C
// unidirectionally broadcastable to [M,N]. C is required before opset 11.
mlcc_status_t mlcc_infer_gemm(mlcc_node_t* node) {
  mlcc_value_t *a = NULL, *b = NULL, *c = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "A", true, &a));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "B", true, &b));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "C", node->opset < 11, &c));
  uint32_t allowed = node->opset >= 9 ? MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_INT32_64 |
                                            MLCC_INFER_DT_UINT
                                      : MLCC_INFER_DT_FLOAT;
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, a, "A", allowed));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, a, "A", b, "B"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, a, "A", c, "C"));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, a, "A", 2));
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_rank(node, b, "B", 2));
  int64_t trans_a = 0, trans_b = 0;
  float f = 0;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "transA", 0, &trans_a));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "transB", 0, &trans_b));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.f, &f));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "beta", 1.f, &f));
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Gemm attributes transA/transB must be 0 or 1; got %lld/%lld",
                            (long long)trans_a, (long long)trans_b);
  }
  int64_t m = trans_a ? a->shape.dims[1] : a->shape.dims[0];
  int64_t ka = trans_a ? a->shape.dims[0] : a->shape.dims[1];
  int64_t kb = trans_b ? b->shape.dims[1] : b->shape.dims[0];
  int64_t n = trans_b ? b->shape.dims[0] : b->shape.dims[1];
  if (ka != kb) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Gemm needs equal reduction dims; got A%s[M=%lld,K=%lld] and "
                            "B%s[K=%lld,N=%lld]",
                            trans_a ? "^T" : "", (long long)m, (long long)ka,
                            trans_b ? "^T" : "", (long long)kb, (long long)n);
  }
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = 2;
  y.dims[0] = m;
  y.dims[1] = n;
  if (c != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_unidirectional(node, &y, "Y[M,N]", &c->shape, "C"));
  }
  return mlcc_infer_set_output(node, 0, a->dtype, &y);
}

// MatMul with numpy.matmul semantics: 1-D A gets a leading 1 and 1-D B a
// trailing 1 (both removed from the result); batch dims broadcast.
mlcc_status_t mlcc_infer_matmul(mlcc_node_t* node) {
  mlcc_value_t *a = NULL, *b = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "A", true, &a));
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "B", true, &b));
  uint32_t allowed = node->opset >= 9 ? MLCC_INFER_DT_FLOAT | MLCC_INFER_DT_INT32_64 |
                                            MLCC_INFER_DT_UINT
                                      : MLCC_INFER_DT_FLOAT;
  MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, a, "A", allowed));
  MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, a, "A", b, "B"));
  if (a->shape.rank < 1 || b->shape.rank < 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MatMul needs inputs of rank >= 1; got A of rank %d and B of "
                            "rank %d",
                            (int)a->shape.rank, (int)b->shape.rank);
  }
  mlcc_shape_t sa, sb;
  mlcc_infer_matmul_promote(&a->shape, &b->shape, &sa, &sb);
  int64_t m = sa.dims[sa.rank - 2], ka = sa.dims[sa.rank - 1];
  int64_t kb = sb.dims[sb.rank - 2], n = sb.dims[sb.rank - 1];
  if (ka != kb) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MatMul needs equal reduction dims; got A[...,K=%lld] and "
                            "B[K=%lld,...]",
                            (long long)ka, (long long)kb);
  }
  mlcc_shape_t ba = sa, bb = sb, batch;
  ba.rank -= 2;
  bb.rank -= 2;
  MLCC_RETURN_IF_ERROR(mlcc_infer_broadcast2(node, &ba, "A's batch dims", &bb,
                                             "B's batch dims", &batch));
  mlcc_shape_t y = batch;
  if (a->shape.rank != 1) y.dims[y.rank++] = m;
  if (b->shape.rank != 1) y.dims[y.rank++] = n;
  return mlcc_infer_set_output(node, 0, a->dtype, &y);
}

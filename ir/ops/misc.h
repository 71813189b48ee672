// SPDX-License-Identifier: Apache-2.0
// Shared between the conformance ops' shape inference (ir/ops/misc.c) and
// their emitters (targets/kernels/attention.c): the parsed form of an Einsum
// equation. Thread-compatible (plain data).
#ifndef MLCC_IR_OPS_MISC_H_
#define MLCC_IR_OPS_MISC_H_

#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLCC_EINSUM_MAX_INPUTS 8
// Labels 0..51 are the letters a-z, A-Z; 52.. are the dims an ellipsis
// covers, counted from the right (52 = last ellipsis dim).
#define MLCC_EINSUM_MAX_LABELS (52 + MLCC_MAX_RANK)

typedef struct mlcc_einsum_t {
  uint32_t n_inputs;
  int32_t in_rank[MLCC_EINSUM_MAX_INPUTS];
  int32_t in_labels[MLCC_EINSUM_MAX_INPUTS][MLCC_MAX_RANK];
  int32_t out_rank;
  int32_t out_labels[MLCC_MAX_RANK];
  int32_t n_sum;                              // labels summed over
  int32_t sum_labels[MLCC_EINSUM_MAX_LABELS];
  int64_t label_dim[MLCC_EINSUM_MAX_LABELS];  // -1: label unused
} mlcc_einsum_t;

// Parses |node|'s 'equation' attribute against the shapes of its (inferred)
// inputs into |*out|. Explicit ("ij,jk->ik") and implicit ("ij,jk") forms,
// spaces, repeated labels (diagonals) and "..." (broadcast) are supported.
// Errors: INVALID_MODEL for malformed equations or dims that disagree,
// UNIMPLEMENTED beyond MLCC_EINSUM_MAX_INPUTS inputs.
mlcc_status_t mlcc_einsum_parse(const mlcc_node_t* node, mlcc_einsum_t* out);

// The geometry of a RotaryEmbedding-23 node. X is viewed as [B, S, H, D]
// with element (b, s, h, d) at b*x_b + s*x_s + h*x_h + d: X [B, H, S, D]
// (rank 4) or [B, S, H*D] (rank 3, H = num_heads). The first |rot| of the D
// values of each head rotate (pairs (j, j + rot/2), or (2j, 2j + 1) when
// |interleaved|); the rest pass through. The caches are [P, rot/2] indexed
// by position_ids [B, S] (|has_pos|), else [B, S, rot/2].
typedef struct mlcc_rotary_t {
  int64_t batch, seq, heads, head_size, rot;
  int64_t x_b, x_s, x_h;
  int64_t positions;  // P: rows of the caches with position_ids
  bool has_pos, interleaved;
} mlcc_rotary_t;

// Resolves |node| (RotaryEmbedding, inputs inferred) into |*out|.
// Errors: INVALID_MODEL for shapes or attributes the spec rejects.
mlcc_status_t mlcc_rotary_resolve(const mlcc_node_t* node, mlcc_rotary_t* out);

// The geometry of an Attention-23/24 node. Q, K, V are all 4-D [B, H, S, D]
// or all 3-D [B, S, H*D] (q_num_heads / kv_num_heads attributes); element
// (b, h, s, d) of Q is at b*q_b + h*q_h + s*q_s + d (K, V, Y alike).
// past_key/past_value are [B, Hkv, P, D|Dv]; total = P + kv_seq. The mask
// broadcasts to [B, Hq, Sq, total]: m_stride[k] is its stride along dim k of
// that shape (0 where broadcast); mask_kind 0 none, 1 bool (true attends),
// 2 additive (any numeric type, converted to Q's type and added, as the
// spec's function body casts the bias to T1). m_len is the number of keys
// the mask covers: total, or (Attention-24) a shorter last dim whose missing
// keys are masked (-inf). nonpad (Attention-24 nonpad_kv_seqlen, int64 [B],
// read at run time) masks key j of batch b unless j < nonpad[b]; with
// is_causal and no past it also moves the causal frontier to
// j <= i + nonpad[b] - Sq. qk_mode is qk_matmul_output_mode when output 3 is
// wanted (0 scaled Q*K^T, 1 after softcap, 2 after softcap + bias, 3 after
// the guarded softmax), else -1. softmax_dt is softmax_precision (Q's type
// when absent).
typedef struct mlcc_attention_t {
  int64_t batch, q_heads, kv_heads, q_seq, kv_seq, past, total, head, v_head;
  int64_t q_b, q_h, q_s, k_b, k_h, k_s, v_b, v_h, v_s, y_b, y_h, y_s;
  double scale, softcap;
  bool causal, nonpad;
  // Attention-25 sliding window: keys j with p - left_window <= j <= p +
  // right_window are visible to the query at absolute position p (offset +
  // query row); -1 leaves that side unbounded (and is the value before 25).
  int64_t left_window, right_window;
  int mask_kind, qk_mode;
  int64_t m_stride[4], m_len;
  mlcc_dtype_t softmax_dt;
} mlcc_attention_t;

// Resolves |node| (ONNX Attention, opset 23-25, inputs inferred) into |*out|
// and, when |out_y| is not NULL, Y's shape. Errors: INVALID_MODEL for shapes,
// types and attribute values the spec rejects (nonpad_kv_seqlen before
// opset 24, left_window_size / right_window_size before opset 25 or below
// -1, qk_matmul_output_mode outside 0-3, a softmax_precision that is not
// float, float16, bfloat16 or double).
mlcc_status_t mlcc_attention_resolve(const mlcc_node_t* node, mlcc_attention_t* out,
                                     mlcc_shape_t* out_y);

// True if Attention |a|'s causal frontier and sliding window (ONNX
// Attention-25) let query row |i| see key |j| (0..total-1), with the query's
// absolute position offset + i. Masks and nonpad_kv_seqlen are not included.
static inline bool mlcc_attention_visible(const mlcc_attention_t* a, int64_t offset, int64_t i,
                                          int64_t j) {
  int64_t p = offset + i;
  if (a->causal && j > p) return false;
  if (a->left_window >= 0 && j < p - a->left_window) return false;
  return a->right_window < 0 || j <= p + a->right_window;
}

// True if |a| has a sliding window on either side (Attention-25).
static inline bool mlcc_attention_windowed(const mlcc_attention_t* a) {
  return a->left_window >= 0 || a->right_window >= 0;
}

// The geometry of a Col2Im-18 node: input [N, C*prod(k), prod(L)] -> output
// [N, C, img...] with |n| spatial dims, block (kernel) dims |k|, |pads|
// (begin then end), |strides|, |dilations| and the block grid |blocks| (L).
#define MLCC_COL2IM_MAX_DIMS 4
typedef struct mlcc_col2im_t {
  int32_t n;
  int64_t batch, channels;
  int64_t img[MLCC_COL2IM_MAX_DIMS], k[MLCC_COL2IM_MAX_DIMS], blocks[MLCC_COL2IM_MAX_DIMS];
  int64_t pads[2 * MLCC_COL2IM_MAX_DIMS], strides[MLCC_COL2IM_MAX_DIMS],
      dilations[MLCC_COL2IM_MAX_DIMS];
} mlcc_col2im_t;

// Resolves |node| (Col2Im, constant image_shape and block_shape) into |*out|.
// Errors: INVALID_MODEL for inconsistent shapes or attributes.
mlcc_status_t mlcc_col2im_resolve(const mlcc_node_t* node, mlcc_col2im_t* out);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_OPS_MISC_H_

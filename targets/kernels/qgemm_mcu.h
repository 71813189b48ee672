// SPDX-License-Identifier: Apache-2.0
// The microcontroller inner loops of the dense QLinearConv / ConvInteger fast
// path (qgemm.h describes the form and the numerics; docs/mcu.md, int8), and
// the microcontroller QLinearMatMul / MatMulInteger kernel. Internal to
// targets/kernels: qgemm.c's dispatch calls the conv kernel after the
// depthwise kernel and before the other targets' register blocks; quant.c
// calls the matmul kernel after the x86 blocked one.
#ifndef MLCC_TARGETS_KERNELS_QGEMM_MCU_H_
#define MLCC_TARGETS_KERNELS_QGEMM_MCU_H_
#include <stdbool.h>
#include <stdint.h>

#include "ir/base/status.h"
#include "ir/graph.h"
#include "targets/emit/emit.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// Geometry of one integer convolution (qgemm.c's planner fills it; all
// counts in elements, 2-D with h = kh = 1 for 1-D windows).
typedef struct qconv_geom_t {
  int64_t batch, c, h, w, m, group, cg, mg, kh, kw, sh, sw, dh, dw, ph, pw, oh, ow;
  int64_t wp;       // padded row width the packed rows hold
  int64_t k;        // cg * kh * kw
  int64_t n_seg;    // contiguous segments per window: 1 (dw == 1) or kw
  int64_t seg_len;  // values per segment: kw * kh * cg (dw == 1) or kh * cg
} qconv_geom_t;

// Emits the packing of the KH input rows output row |oh_iv| (i64) reads, for
// the image/group whose channel-0 plane starts at element |x_img| (i64) of
// |x| (qgemm.c, qgemm.h's form): rows ([wp][kh][cg] int16) = x - |xzv| (i32
// x zero point), 0 outside the image; colsum ([kh][wp] int32) the column
// sums; pixsum ([ow] int32) each output pixel's window sum.
void mlcc_qgemm_emit_pack_rows(mlcc_emit_ctx_t* ctx, const qconv_geom_t* q,
                               const mlcc_value_t* x, LLVMValueRef xzv, LLVMValueRef rows,
                               LLVMValueRef colsum, LLVMValueRef pixsum, LLVMValueRef x_img,
                               LLVMValueRef oh_iv);

// The inner-loop flavour of |target| for int8 dot products:
//   MLCC_QMCU_NONE   not a microcontroller target (the other paths run);
//   MLCC_QMCU_DSP    Arm M-profile with the DSP extension (cortex-m4, -m7,
//                    -m33, -m35p: SMLAD on SXTB16/UXTB16-widened pairs);
//   MLCC_QMCU_HELIUM Arm M-profile with MVE (cortex-m55: VMLADAVA.S16);
//   MLCC_QMCU_PLAIN  other bare-metal cores (rv32, rv32f, Cortex-M0/M3):
//                    32-bit multiply-accumulate in general registers.
// "-dsp" in the features turns DSP off, "+dsp" on. Pure.
typedef enum mlcc_qmcu_kind_e {
  MLCC_QMCU_NONE = 0,
  MLCC_QMCU_DSP,
  MLCC_QMCU_HELIUM,
  MLCC_QMCU_PLAIN,
} mlcc_qmcu_kind_t;
mlcc_qmcu_kind_t mlcc_qgemm_mcu_kind(const mlcc_target_t* target);

// Emits the dense kernel of QLinearConv / ConvInteger |node| with geometry
// |q| (qgemm.c's plan() accepted it and its weights are packed) for a
// microcontroller target (mlcc_qgemm_mcu_kind != NONE) and sets *out_done.
// Same packed rows (stack: mlcc_qgemm_conv_stack_bytes), the same int32 sums
// and the same float requantization as qgemm.c's kernel, so the results
// are bit-identical to it and to quant.c's reference loops; blocks of 2
// output channels x 2 pixels with 4 scalar int32 accumulators. Spec: ONNX
// QLinearConv-10 / ConvInteger-10. Errors: INTERNAL when the data or weights
// are not kernel arguments; those of the output store.
mlcc_status_t mlcc_emit_qgemm_conv_mcu(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                       const qconv_geom_t* q, bool* out_done);

// Emits QLinearMatMul / MatMulInteger |node| for a microcontroller target
// (mlcc_qgemm_mcu_kind != NONE) and sets *out_done, when B is 2-D:
// A [..., M, K] (or [K]; A's batch dims are more rows) x B [K, N] (B
// row-major as the graph holds it, constant or not) with per-tensor A parameters and per-tensor or per-column
// ([N]) B parameters; otherwise leaves *out_done false (quant.c's loops run).
// Blocks of 4 output columns with i32 counters and K in steps of 2; sums
// sum_k (a - a_zp) * b - b_zp[n] * sum_k (a - a_zp) + bias[n] in int32
// (equal, modulo 2^32, to the reference's sum of (a - a_zp) * (b - b_zp)),
// and quant.c's float requantization, so the results are bit-identical to
// the reference loops. No stack buffers. Spec: ONNX QLinearMatMul-10/21
// (float32 scales), MatMulInteger-10, plus quant-fuse's int32 bias
// (MLCC_QMATMUL_BIAS_ATTR). Errors: those of mlcc_quant_matmul_resolve and
// of the output store.
mlcc_status_t mlcc_emit_qgemm_matmul_mcu(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                         bool* out_done);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_KERNELS_QGEMM_MCU_H_

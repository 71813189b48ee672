// SPDX-License-Identifier: Apache-2.0
// Microcontroller inner loops of the dense integer convolution (qgemm_mcu.h;
// the form and numerics are qgemm.h's). One kernel for every bare-metal
// target; only the K-loop step differs:
// * DSP (Cortex-M4/M7/M33): per 4 values of K, one 32-bit load of 4 weight
//   bytes widened to two int16 pairs by SXTB16 (bytes 0, 2) and SXTB16 of
//   the word rotated by 8 (bytes 1, 3) (UXTB16 for uint8 weights), the two
//   words of 4 packed int16 inputs regrouped to the same pairs (PKHBT /
//   PKHTB, from the and/or/shift pattern), and two SMLAD (a 32-bit
//   accumulator plus two 16x16 products) per output. Inputs are
//   zero-point-subtracted values in [-255, 255] and weights in [-128, 255],
//   so every product and pair sum is exact in int32, as everywhere else.
//   The word loads are 2-byte (inputs) and 1-byte (weights) aligned: single
//   LDRs, which ARMv7-M/ARMv8-M execute unaligned (only LDRD/LDM/STRD/STM
//   fault); the kernel emits no double-word or multiple loads.
// * HELIUM (Cortex-M55): per 8 values of K, one VLDRH.16 of inputs and one
//   widening VLDRB.S16 / VLDRB.U16 of weights per row, and one VMLADAVA.S16
//   (the add-reduce of the 8 widened products into a scalar) per output,
//   from LLVM's pattern add(acc, vector.reduce.add(mul(sext, sext))).
// * PLAIN (rv32, rv32f, cores without DSP): per 2 values of K, 16-bit and
//   8-bit loads and 32-bit multiply-adds in general registers.
// A K loop's remainder runs one value at a time. Loop counters are i32 (the
// cores are 32-bit: no 64-bit index arithmetic in the hot loops), and the K
// loops are not unrolled (flash).
#include "targets/kernels/qgemm_mcu.h"

#include <llvm-c/DebugInfo.h>

#include <string.h>

#include "ir/dtype.h"
#include "ir/ops.h"
#include "ir/ops/quant.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/qgemm.h"

enum { MCU_MR = 2, MCU_NR = 2 };

// True if |features| has "+|feat|" (set) or "-|feat|" (cleared) as its last
// mention; |*seen| tells whether it is mentioned at all.
static bool feature_on(const char* features, const char* feat, bool* seen) {
  bool on = false;
  size_t n = strlen(feat);
  *seen = false;
  for (const char* p = features; p != NULL && *p;) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n + 1 && strncmp(p + 1, feat, n) == 0 && (p[0] == '+' || p[0] == '-')) {
      on = p[0] == '+';
      *seen = true;
    }
    p = comma ? comma + 1 : NULL;
  }
  return on;
}

mlcc_qmcu_kind_t mlcc_qgemm_mcu_kind(const mlcc_target_t* t) {
  if (t == NULL || !mlcc_target_is_bare_metal(t)) return MLCC_QMCU_NONE;
  if (t->arch != MLCC_ARCH_CORTEX_M4 && t->arch != MLCC_ARCH_CORTEX_M55) return MLCC_QMCU_PLAIN;
  // Helium: the vector width the target resolution gave (+mve / +mve.fp).
  if (t->vector_bytes >= 16) return MLCC_QMCU_HELIUM;
  bool seen;
  bool dsp = feature_on(t->features, "dsp", &seen);
  if (seen) return dsp ? MLCC_QMCU_DSP : MLCC_QMCU_PLAIN;
  // Armv6-M / Armv7-M (Cortex-M0/M3) have no DSP extension.
  if (strncmp(t->triple, "thumbv6m", 8) == 0 || strncmp(t->triple, "thumbv7m-", 9) == 0) {
    return MLCC_QMCU_PLAIN;
  }
  static const char* const cpus[] = {"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p",
                                     "cortex-m55", "cortex-m85"};
  for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); ++i) {
    if (strcmp(t->cpu, cpus[i]) == 0) return MLCC_QMCU_DSP;
  }
  return MLCC_QMCU_PLAIN;
}

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

static LLVMValueRef c32(mlcc_emit_ctx_t* ctx, int64_t v) {
  return LLVMConstInt(ctx->t_i32, (unsigned long long)v, 1);
}

static LLVMValueRef gep(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef base,
                        LLVMValueRef idx) {
  return LLVMBuildGEP2(ctx->b, t, base, &idx, 1, "");
}

static LLVMValueRef load_al(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef p, unsigned al) {
  LLVMValueRef l = LLVMBuildLoad2(ctx->b, t, p, "");
  LLVMSetAlignment(l, al);
  return l;
}

// An |n|-element array of |t| in the entry block (16-byte aligned).
static LLVMValueRef entry_array(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, int64_t n) {
  return mlcc_emit_entry_array(ctx, t, n, 16, "qmtile");
}

// Element |idx| of integer |v| widened to i32, or 0 when |v| is NULL.
static LLVMValueRef ld_i32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx) {
  if (v == NULL) return c32(ctx, 0);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, idx), v->dtype, MLCC_DTYPE_I32);
}

static LLVMValueRef ld_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx) {
  if (v == NULL) return mlcc_emit_f32(ctx, 1.f);
  return mlcc_emit_load(ctx, v, idx);
}

static int64_t numel_or(const mlcc_value_t* v, int64_t dflt) {
  return v == NULL ? dflt : mlcc_shape_numel_unchecked(&v->shape);
}

// A counted loop [0, end) with an i32 counter and step |step|, closed by
// loop32_end (marked "llvm.loop.unroll.disable").
typedef struct loop32_t {
  LLVMValueRef iv;
  LLVMBasicBlockRef header, exit;
  int64_t step;
} loop32_t;

static loop32_t loop32_begin(mlcc_emit_ctx_t* ctx, int64_t start, int64_t end, int64_t step,
                             const char* name) {
  loop32_t l;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(ctx->b);
  LLVMValueRef fn = LLVMGetBasicBlockParent(pre);
  l.header = LLVMAppendBasicBlockInContext(ctx->llctx, fn, name);
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ctx->llctx, fn, name);
  l.exit = LLVMAppendBasicBlockInContext(ctx->llctx, fn, name);
  l.step = step;
  LLVMBuildBr(ctx->b, l.header);
  LLVMPositionBuilderAtEnd(ctx->b, l.header);
  l.iv = LLVMBuildPhi(ctx->b, ctx->t_i32, name);
  LLVMValueRef s = c32(ctx, start);
  LLVMAddIncoming(l.iv, &s, &pre, 1);
  LLVMBuildCondBr(ctx->b, LLVMBuildICmp(ctx->b, LLVMIntSLT, l.iv, c32(ctx, end), ""), body,
                  l.exit);
  LLVMPositionBuilderAtEnd(ctx->b, body);
  return l;
}

static void loop32_end(mlcc_emit_ctx_t* ctx, loop32_t* l) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(ctx->b);
  LLVMValueRef next = LLVMBuildNSWAdd(ctx->b, l->iv, c32(ctx, l->step), "");
  LLVMAddIncoming(l->iv, &next, &cur, 1);
  LLVMValueRef br = LLVMBuildBr(ctx->b, l->header);
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(ctx->llctx, NULL, 0);
  LLVMMetadataRef str = LLVMMDStringInContext2(ctx->llctx, "llvm.loop.unroll.disable", 24);
  LLVMMetadataRef dis = LLVMMDNodeInContext2(ctx->llctx, &str, 1);
  LLVMMetadataRef ops[2] = {tmp, dis};
  LLVMMetadataRef self = LLVMMDNodeInContext2(ctx->llctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, self);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(ctx->llctx, "llvm.loop", 9),
                  LLVMMetadataAsValue(ctx->llctx, self));
  LLVMPositionBuilderAtEnd(ctx->b, l->exit);
}

static LLVMValueRef acc_add(mlcc_emit_ctx_t* ctx, LLVMValueRef var, LLVMValueRef v) {
  LLVMValueRef a = LLVMBuildLoad2(ctx->b, ctx->t_i32, var, "");
  LLVMValueRef s = LLVMBuildAdd(ctx->b, a, v, "");
  LLVMBuildStore(ctx->b, s, var);
  return s;
}

static LLVMValueRef call2(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef a) {
  return mlcc_emit_intrinsic(ctx, name, &a, 1);
}

// One K step of |kind| at offset |k| (i32) for the MCU_MR x MCU_NR block:
// inputs xp[j] (int16 packed rows), weights wp[i] (int8/uint8 rows).
static void k_step(mlcc_emit_ctx_t* ctx, mlcc_qmcu_kind_t kind, bool w_u8, LLVMValueRef k,
                   LLVMValueRef* xp, LLVMValueRef* wp, LLVMValueRef acc[MCU_MR][MCU_NR]) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8, i16 = ctx->t_i16, i32 = ctx->t_i32;
  if (kind == MLCC_QMCU_DSP) {
    // x pairs (x0, x2) and (x1, x3) from the words (x0, x1), (x2, x3).
    LLVMValueRef xe[MCU_NR], xo[MCU_NR];
    LLVMValueRef lo16 = c32(ctx, 0xffff), hi16 = c32(ctx, (int64_t)0xffff0000u);
    for (int j = 0; j < MCU_NR; ++j) {
      LLVMValueRef a = load_al(ctx, i32, gep(ctx, i16, xp[j], k), 2);
      LLVMValueRef c = load_al(ctx, i32, gep(ctx, i16, xp[j], LLVMBuildAdd(b, k, c32(ctx, 2), "")),
                               2);
      xe[j] = LLVMBuildOr(b, LLVMBuildAnd(b, a, lo16, ""), LLVMBuildShl(b, c, c32(ctx, 16), ""),
                          "");
      xo[j] = LLVMBuildOr(b, LLVMBuildLShr(b, a, c32(ctx, 16), ""), LLVMBuildAnd(b, c, hi16, ""),
                          "");
    }
    const char* widen = w_u8 ? "llvm.arm.uxtb16" : "llvm.arm.sxtb16";
    for (int i = 0; i < MCU_MR; ++i) {
      LLVMValueRef w = load_al(ctx, i32, gep(ctx, i8, wp[i], k), 1);
      LLVMValueRef we = call2(ctx, widen, w);  // (w0, w2)
      LLVMValueRef rot = LLVMBuildOr(b, LLVMBuildLShr(b, w, c32(ctx, 8), ""),
                                     LLVMBuildShl(b, w, c32(ctx, 24), ""), "");
      LLVMValueRef wo = call2(ctx, widen, rot);  // (w1, w3)
      for (int j = 0; j < MCU_NR; ++j) {
        LLVMValueRef a = LLVMBuildLoad2(b, i32, acc[i][j], "");
        LLVMValueRef args[3] = {xe[j], we, a};
        a = mlcc_emit_intrinsic(ctx, "llvm.arm.smlad", args, 3);
        LLVMValueRef args2[3] = {xo[j], wo, a};
        a = mlcc_emit_intrinsic(ctx, "llvm.arm.smlad", args2, 3);
        LLVMBuildStore(b, a, acc[i][j]);
      }
    }
    return;
  }
  if (kind == MLCC_QMCU_HELIUM) {
    LLVMTypeRef v8i16 = LLVMVectorType(i16, 8), v8i32 = LLVMVectorType(i32, 8);
    LLVMValueRef xv[MCU_NR];
    for (int j = 0; j < MCU_NR; ++j) {
      xv[j] = LLVMBuildSExt(b, load_al(ctx, v8i16, gep(ctx, i16, xp[j], k), 2), v8i32, "");
    }
    for (int i = 0; i < MCU_MR; ++i) {
      LLVMValueRef w8 = load_al(ctx, LLVMVectorType(i8, 8), gep(ctx, i8, wp[i], k), 1);
      LLVMValueRef w16 = w_u8 ? LLVMBuildZExt(b, w8, v8i16, "") : LLVMBuildSExt(b, w8, v8i16, "");
      LLVMValueRef wv = LLVMBuildSExt(b, w16, v8i32, "");
      for (int j = 0; j < MCU_NR; ++j) {
        LLVMValueRef p = LLVMBuildMul(b, xv[j], wv, "");
        acc_add(ctx, acc[i][j], mlcc_emit_intrinsic(ctx, "llvm.vector.reduce.add", &p, 1));
      }
    }
    return;
  }
  // PLAIN (and every kind's remainder): |step| values, one at a time.
  int n = kind == MLCC_QMCU_PLAIN ? 2 : 1;
  for (int e = 0; e < n; ++e) {
    LLVMValueRef ke = e == 0 ? k : LLVMBuildAdd(b, k, c32(ctx, e), "");
    LLVMValueRef xs[MCU_NR];
    for (int j = 0; j < MCU_NR; ++j) {
      xs[j] = LLVMBuildSExt(b, load_al(ctx, i16, gep(ctx, i16, xp[j], ke), 2), i32, "");
    }
    for (int i = 0; i < MCU_MR; ++i) {
      LLVMValueRef wl = load_al(ctx, i8, gep(ctx, i8, wp[i], ke), 1);
      LLVMValueRef wi = w_u8 ? LLVMBuildZExt(b, wl, i32, "") : LLVMBuildSExt(b, wl, i32, "");
      for (int j = 0; j < MCU_NR; ++j) acc_add(ctx, acc[i][j], LLVMBuildMul(b, xs[j], wi, ""));
    }
  }
}

// qgemm.h's requantization of the int32 sum |r| with multiplier |mult|
// (float32): round half to even, + the output zero point |yzf|, clamped to
// [|qlo|, |qhi|], to an 8-bit integer.
static LLVMValueRef requant8(mlcc_emit_ctx_t* ctx, LLVMValueRef r, LLVMValueRef mult,
                             LLVMValueRef yzf, LLVMValueRef qlo, LLVMValueRef qhi) {
  LLVMBuilderRef b = ctx->b;
  LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, r, ctx->t_f32, ""), mult, "");
  f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
  f = LLVMBuildFAdd(b, f, yzf, "");
  f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, qlo);
  f = mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, qhi);
  return LLVMBuildTrunc(b, LLVMBuildFPToSI(b, f, ctx->t_i32, ""), ctx->t_i8, "");
}

mlcc_status_t mlcc_emit_qgemm_conv_mcu(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                       const qconv_geom_t* qp, bool* out_done) {
  *out_done = false;
  mlcc_qmcu_kind_t kind = mlcc_qgemm_mcu_kind(ctx->target);
  if (kind == MLCC_QMCU_NONE) return mlcc_ok_status();
  qconv_geom_t q = *qp;
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *x = ops.x, *w = ops.w, *xz = ops.x_zero, *wz = ops.w_zero;
  const mlcc_value_t *ws = ops.w_scale, *bias = ops.bias;
  LLVMValueRef wbase = mlcc_emit_ptr(ctx, w);
  if (wbase == NULL || mlcc_emit_ptr(ctx, x) == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: data or weights are not kernel arguments",
                            mlcc_op_name(node->op));
  }
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i16 = ctx->t_i16, i32 = ctx->t_i32, i8 = ctx->t_i8;
  bool w_u8 = w->dtype == MLCC_DTYPE_U8;
  int64_t kstep = kind == MLCC_QMCU_DSP ? 4 : kind == MLCC_QMCU_HELIUM ? 8 : 2;
  int64_t sfull = q.seg_len / kstep * kstep;
  bool w_per_channel = numel_or(wz, 1) != 1;
  bool ws_per_channel = numel_or(ws, 1) != 1;
  int64_t col_len = q.kh * q.cg;  // int16 values per packed input column

  // The same buffers as qgemm.c's kernel (mlcc_qgemm_conv_stack_bytes).
  LLVMValueRef rows = entry_array(ctx, i16, q.wp * col_len);
  LLVMValueRef colsum = entry_array(ctx, i32, q.kh * q.wp);
  LLVMValueRef pixsum = entry_array(ctx, i32, q.ow);
  LLVMValueRef zero32 = c32(ctx, 0);
  LLVMValueRef xzv = ld_i32(ctx, xz, c64(ctx, 0));
  LLVMValueRef xsv = NULL, ysv = NULL, yzf = NULL, qlo = NULL, qhi = NULL;
  if (qlinear) {
    xsv = ld_f32(ctx, ops.x_scale, c64(ctx, 0));
    ysv = ld_f32(ctx, ops.y_scale, c64(ctx, 0));
    yzf = ops.y_zero == NULL ? mlcc_emit_f32(ctx, 0.f)
                             : mlcc_emit_convert(ctx, mlcc_emit_load(ctx, ops.y_zero, c64(ctx, 0)),
                                                 ops.y_zero->dtype, MLCC_DTYPE_F32);
    mlcc_qgemm_act_bounds(ctx, node, ops.y->dtype, ysv, yzf, &qlo, &qhi);
  }
  LLVMValueRef acc[MCU_MR][MCU_NR];
  for (int i = 0; i < MCU_MR; ++i) {
    for (int j = 0; j < MCU_NR; ++j) acc[i][j] = mlcc_emit_var(ctx, i32, NULL);
  }

  // One unit per (image, group, output row): units [rb, re).
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : c64(ctx, 0);
  LLVMValueRef re = ctx->range_end ? ctx->range_end : c64(ctx, q.batch * q.group * q.oh);
  mlcc_loop_t lu = mlcc_emit_loop_begin(ctx, rb, re, 1, "qmu");
  LLVMValueRef n_iv = LLVMBuildUDiv(b, lu.iv, c64(ctx, q.group * q.oh), "");
  LLVMValueRef g_iv = LLVMBuildURem(b, LLVMBuildUDiv(b, lu.iv, c64(ctx, q.oh), ""),
                                    c64(ctx, q.group), "");
  LLVMValueRef oh_iv = LLVMBuildURem(b, lu.iv, c64(ctx, q.oh), "");
  LLVMValueRef x_img = imulc(ctx, imad(ctx, n_iv, q.c, imulc(ctx, g_iv, q.cg)), q.h * q.w);

  //--- Pack the KH input rows of output row oh (qgemm.c's layout).
  mlcc_qgemm_emit_pack_rows(ctx, &q, x, xzv, rows, colsum, pixsum, x_img, oh_iv);

  //--- MCU_MR output channels x MCU_NR pixels per block.
  mlcc_loop_t lm = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.mg), MCU_MR, "qmm");
  LLVMValueRef mrow[MCU_MR], mvalid[MCU_MR], wrow[MCU_MR], wzm[MCU_MR], bm[MCU_MR],
      mult[MCU_MR];
  for (int i = 0; i < MCU_MR; ++i) {
    LLVMValueRef mi = iaddc(ctx, lm.iv, i);
    mvalid[i] = LLVMBuildICmp(b, LLVMIntSLT, mi, c64(ctx, q.mg), "");
    mi = LLVMBuildSelect(b, mvalid[i], mi, c64(ctx, q.mg - 1), "");
    mrow[i] = iadd(ctx, imulc(ctx, g_iv, q.mg), mi);  // output channel
    wrow[i] = imulc(ctx, mrow[i], q.k);
    wzm[i] = ld_i32(ctx, wz, w_per_channel ? mrow[i] : c64(ctx, 0));
    bm[i] = bias != NULL ? ld_i32(ctx, bias, mrow[i]) : zero32;
    mult[i] = NULL;
    if (qlinear) {  // (x_scale * w_scale[m]) / y_scale, as qgemm.c
      LLVMValueRef wsm = ld_f32(ctx, ws, ws_per_channel ? mrow[i] : c64(ctx, 0));
      mult[i] = LLVMBuildFDiv(b, LLVMBuildFMul(b, xsv, wsm, ""), ysv, "mult");
    }
  }
  mlcc_loop_t lj = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.ow), MCU_NR, "qmj");
  for (int i = 0; i < MCU_MR; ++i) {
    for (int j = 0; j < MCU_NR; ++j) LLVMBuildStore(b, zero32, acc[i][j]);
  }
  // Pixel ow = lj + j starts its window at rows[ow * sw][0][0]; the block's
  // second pixel past OW reads pixel OW-1's window (its result is dropped).
  LLVMValueRef pix[MCU_NR];
  for (int j = 0; j < MCU_NR; ++j) {
    pix[j] = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, lj.iv, j), c64(ctx, q.ow - 1));
  }
  mlcc_loop_t lsg = mlcc_emit_for(ctx, 0, q.n_seg, "qms");
  // Segment s: the window's columns kw = s (dw > 1), or all of them (dw == 1).
  LLVMValueRef xp[MCU_NR], wp[MCU_MR];
  for (int j = 0; j < MCU_NR; ++j) {
    LLVMValueRef at = iadd(ctx, imulc(ctx, pix[j], q.sw * col_len),
                           imulc(ctx, lsg.iv, q.dw * col_len));
    xp[j] = gep(ctx, i16, rows, at);
  }
  for (int i = 0; i < MCU_MR; ++i) {
    wp[i] = gep(ctx, i8, wbase, iadd(ctx, wrow[i], imulc(ctx, lsg.iv, q.seg_len)));
  }
  if (sfull > 0) {
    loop32_t lk = loop32_begin(ctx, 0, sfull, kstep, "qmk");
    k_step(ctx, kind, w_u8, lk.iv, xp, wp, acc);
    loop32_end(ctx, &lk);
  }
  if (sfull < q.seg_len) {
    loop32_t lk = loop32_begin(ctx, sfull, q.seg_len, 1, "qmkt");
    k_step(ctx, MLCC_QMCU_NONE, w_u8, lk.iv, xp, wp, acc);
    loop32_end(ctx, &lk);
  }
  mlcc_emit_loop_end(ctx, &lsg);

  //--- Per output: zero-point correction, bias, requantization, store.
  LLVMValueRef ps[MCU_NR];
  for (int j = 0; j < MCU_NR; ++j) {
    ps[j] = LLVMBuildLoad2(b, i32, gep(ctx, i32, pixsum, pix[j]), "");
  }
  mlcc_status_t status = mlcc_ok_status();
  LLVMValueRef y_row = imulc(ctx, oh_iv, q.ow);
  for (int i = 0; i < MCU_MR && status == NULL; ++i) {
    for (int j = 0; j < MCU_NR && status == NULL; ++j) {
      LLVMValueRef r = LLVMBuildLoad2(b, i32, acc[i][j], "");
      r = LLVMBuildSub(b, r, LLVMBuildMul(b, wzm[i], ps[j], ""), "");
      r = LLVMBuildAdd(b, r, bm[i], "");
      LLVMValueRef out = r;
      if (qlinear) out = requant8(ctx, r, mult[i], yzf, qlo, qhi);
      LLVMValueRef o = iaddc(ctx, lj.iv, j);
      LLVMValueRef ok2 =
          LLVMBuildAnd(b, mvalid[i], LLVMBuildICmp(b, LLVMIntSLT, o, c64(ctx, q.ow), ""), "");
      mlcc_if_t br = mlcc_emit_if_begin(ctx, ok2);
      LLVMValueRef yi = imad(ctx, imad(ctx, n_iv, q.m, mrow[i]), q.oh * q.ow, iadd(ctx, y_row, o));
      status = mlcc_emit_store_output(ctx, node, 0, yi, out);
      mlcc_emit_if_end(ctx, &br);
    }
  }
  mlcc_emit_loop_end(ctx, &lj);
  mlcc_emit_loop_end(ctx, &lm);
  mlcc_emit_loop_end(ctx, &lu);
  return status;
}

//===----------------------------------------------------------------------===//
// QLinearMatMul / MatMulInteger
//===----------------------------------------------------------------------===//

enum { MCU_MM_NB = 4 };  // output columns per block

// True if |v| is a constant whose every byte is 0 (a zero point of 0).
static bool const_zero(const mlcc_value_t* v) {
  if (v == NULL) return true;
  if (v->data == NULL) return false;
  size_t bytes = (size_t)mlcc_shape_numel_unchecked(&v->shape) * mlcc_dtype_size(v->dtype);
  const uint8_t* p = (const uint8_t*)v->data;
  for (size_t i = 0; i < bytes; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

// Element |k| (i32) of the int8/uint8 row at |p|, widened to i32.
static LLVMValueRef ld_q(mlcc_emit_ctx_t* ctx, LLVMValueRef p, LLVMValueRef k, bool u8) {
  LLVMValueRef l = load_al(ctx, ctx->t_i8, gep(ctx, ctx->t_i8, p, k), 1);
  return u8 ? LLVMBuildZExt(ctx->b, l, ctx->t_i32, "") : LLVMBuildSExt(ctx->b, l, ctx->t_i32, "");
}

mlcc_status_t mlcc_emit_qgemm_matmul_mcu(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                         bool* out_done) {
  *out_done = false;
  if (mlcc_qgemm_mcu_kind(ctx->target) == MLCC_QMCU_NONE) return mlcc_ok_status();
  bool qlinear = node->op == MLCC_OP_QLINEAR_MATMUL;
  mlcc_quant_matmul_t q;
  MLCC_RETURN_IF_ERROR(mlcc_quant_matmul_resolve(node, &q));
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *a = ops.x, *bm = ops.w, *az = ops.x_zero, *bz = ops.w_zero;
  const mlcc_value_t *bs = ops.w_scale, *bias = ops.bias, *y = ops.y;
  // A 2-D B (A's batch dims, if any, are rows: [batch * M, K] x [K, N]),
  // per-tensor A parameters, per-tensor or per-column B parameters; anything
  // else stays on quant.c's loops.
  if (q.b_batch.rank != 0 || q.a_batch.rank != q.batch.rank) return mlcc_ok_status();
  int64_t rows = mlcc_shape_numel_unchecked(&q.batch) * q.m;
  if (rows * q.k * q.n == 0 || q.k > INT32_MAX / (q.n > 0 ? q.n : 1)) return mlcc_ok_status();
  if (numel_or(az, 1) != 1 || (qlinear && numel_or(ops.x_scale, 1) != 1)) {
    return mlcc_ok_status();
  }
  int64_t nbz = numel_or(bz, 1), nbs = numel_or(bs, 1);
  if ((nbz != 1 && nbz != q.n) || (nbs != 1 && nbs != q.n)) return mlcc_ok_status();
  if (bias != NULL && numel_or(bias, 0) != q.n) return mlcc_ok_status();
  LLVMValueRef abase = mlcc_emit_ptr(ctx, a), bbase = mlcc_emit_ptr(ctx, bm);
  if (abase == NULL || bbase == NULL) return mlcc_ok_status();
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8, i32 = ctx->t_i32;
  bool a_u8 = a->dtype == MLCC_DTYPE_U8, w_u8 = bm->dtype == MLCC_DTYPE_U8;
  bool need_rowsum = !const_zero(bz);
  LLVMValueRef xzv = ld_i32(ctx, az, c64(ctx, 0));
  LLVMValueRef asv = NULL, ysv = NULL, yzf = NULL, qlo = NULL, qhi = NULL;
  if (qlinear) {
    asv = ld_f32(ctx, ops.x_scale, c64(ctx, 0));
    ysv = ld_f32(ctx, ops.y_scale, c64(ctx, 0));
    const mlcc_value_t* yz = ops.y_zero;
    yzf = yz == NULL ? mlcc_emit_f32(ctx, 0.f)
                     : mlcc_emit_convert(ctx, mlcc_emit_load(ctx, yz, c64(ctx, 0)), yz->dtype,
                                         MLCC_DTYPE_F32);
    mlcc_qgemm_act_bounds(ctx, node, y->dtype, ysv, yzf, &qlo, &qhi);
  }
  LLVMValueRef acc[MCU_MM_NB];
  for (int j = 0; j < MCU_MM_NB; ++j) acc[j] = mlcc_emit_var(ctx, i32, NULL);
  LLVMValueRef rowsum = mlcc_emit_var(ctx, i32, NULL);
  LLVMValueRef zero32 = c32(ctx, 0);

  mlcc_loop_t lm = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, rows), 1, "qmmm");
  LLVMValueRef arow = gep(ctx, i8, abase, imulc(ctx, lm.iv, q.k));
  LLVMBuildStore(b, zero32, rowsum);
  if (need_rowsum) {  // sum_k (a - a_zero_point), for the B zero point term
    loop32_t lk = loop32_begin(ctx, 0, q.k, 1, "qmmr");
    acc_add(ctx, rowsum, LLVMBuildSub(b, ld_q(ctx, arow, lk.iv, a_u8), xzv, ""));
    loop32_end(ctx, &lk);
  }
  LLVMValueRef rs = LLVMBuildLoad2(b, i32, rowsum, "");
  mlcc_loop_t ln = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.n), MCU_MM_NB, "qmmn");
  // Column n + j of B ([K][N], row-major); past N a block reads column N-1
  // (its result is dropped).
  LLVMValueRef col[MCU_MM_NB], wcol[MCU_MM_NB];
  for (int j = 0; j < MCU_MM_NB; ++j) {
    col[j] = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, ln.iv, j), c64(ctx, q.n - 1));
    wcol[j] = gep(ctx, i8, bbase, col[j]);
    LLVMBuildStore(b, zero32, acc[j]);
  }
  // K in steps of 2 (one value at a time for an odd K's last one): one
  // A value, MCU_MM_NB weights and multiply-adds per value.
  int64_t kfull = q.k / 2 * 2;
  for (int part = 0; part < 2; ++part) {
    int64_t from = part == 0 ? 0 : kfull, to = part == 0 ? kfull : q.k;
    if (from >= to) continue;
    int64_t step = part == 0 ? 2 : 1;
    loop32_t lk = loop32_begin(ctx, from, to, step, part == 0 ? "qmmk" : "qmmkt");
    for (int64_t e = 0; e < step; ++e) {
      LLVMValueRef ke = e == 0 ? lk.iv : LLVMBuildAdd(b, lk.iv, c32(ctx, e), "");
      LLVMValueRef xv = LLVMBuildSub(b, ld_q(ctx, arow, ke, a_u8), xzv, "");
      LLVMValueRef wk = LLVMBuildMul(b, ke, c32(ctx, q.n), "");
      for (int j = 0; j < MCU_MM_NB; ++j) {
        acc_add(ctx, acc[j], LLVMBuildMul(b, xv, ld_q(ctx, wcol[j], wk, w_u8), ""));
      }
    }
    loop32_end(ctx, &lk);
  }
  // Per output: B zero point term, bias, requantization (quant.c's formula),
  // store.
  mlcc_status_t status = mlcc_ok_status();
  for (int j = 0; j < MCU_MM_NB && status == NULL; ++j) {
    LLVMValueRef r = LLVMBuildLoad2(b, i32, acc[j], "");
    if (need_rowsum) {
      LLVMValueRef bzj = ld_i32(ctx, bz, nbz == 1 ? c64(ctx, 0) : col[j]);
      r = LLVMBuildSub(b, r, LLVMBuildMul(b, bzj, rs, ""), "");
    }
    if (bias != NULL) r = LLVMBuildAdd(b, r, ld_i32(ctx, bias, col[j]), "");
    LLVMValueRef out = r;
    if (qlinear) {
      LLVMValueRef bsj = ld_f32(ctx, bs, nbs == 1 ? c64(ctx, 0) : col[j]);
      LLVMValueRef mult = LLVMBuildFDiv(b, LLVMBuildFMul(b, asv, bsj, ""), ysv, "mult");
      out = requant8(ctx, r, mult, yzf, qlo, qhi);
    }
    LLVMValueRef o = iaddc(ctx, ln.iv, j);
    mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(b, LLVMIntSLT, o, c64(ctx, q.n), ""));
    status = mlcc_emit_store_output(ctx, node, 0, imad(ctx, lm.iv, q.n, o), out);
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_loop_end(ctx, &ln);
  mlcc_emit_loop_end(ctx, &lm);
  return status;
}

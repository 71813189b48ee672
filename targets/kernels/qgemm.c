// SPDX-License-Identifier: Apache-2.0
// Integer micro-kernels of QLinearConv / ConvInteger: packed int16 tiles,
// exact int32 dot products, float requantization (qgemm.h describes the
// form and the numerics).
#include "targets/kernels/qgemm.h"

#include <llvm-c/DebugInfo.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/quant.h"
#include "ir/ops/spatial.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/qgemm_mcu.h"

// Stack limit of the packed rows (the same for every target, so the stack
// bound mlcc_qgemm_conv_stack_bytes is one number).
enum {
  ROWS_MAX_BYTES = 98304,
  MR = 4,  // output channels per register block
  NR_MAX = 3,  // output pixels per register block (at most)
};

// qconv_geom_t: targets/kernels/qgemm_mcu.h.

static bool is_q8(mlcc_dtype_t d) { return d == MLCC_DTYPE_U8 || d == MLCC_DTYPE_I8; }

static int64_t numel_or(const mlcc_value_t* v, int64_t dflt) {
  return v == NULL ? dflt : mlcc_shape_numel_unchecked(&v->shape);
}

// Fills |q| with the geometry and returns true when either fast path can
// take |node|'s dtypes, parameters and window (no layout or size limits).
static bool plan_common(const mlcc_node_t* node, qconv_geom_t* q) {
  memset(q, 0, sizeof(*q));
  if (node->op != MLCC_OP_QLINEAR_CONV && node->op != MLCC_OP_CONV_INTEGER) return false;
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, qlinear ? 3 : 1);
  const mlcc_value_t* xz = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (x == NULL || w == NULL || y == NULL || !x->shape_known || !w->shape_known ||
      !y->shape_known) {
    return false;
  }
  if (!is_q8(x->dtype) || !is_q8(w->dtype)) return false;
  if (qlinear ? !is_q8(y->dtype) : y->dtype != MLCC_DTYPE_I32) return false;
  if (numel_or(xz, 1) != 1) return false;  // per-tensor x zero point only
  if (qlinear && numel_or(mlcc_node_input(node, 1), 1) != 1) return false;
  mlcc_spatial_t g;
  mlcc_status_t st = mlcc_quant_conv_resolve(node, &g);
  if (st != NULL) {
    mlcc_status_free(st);
    return false;
  }
  if (g.n_spatial < 1 || g.n_spatial > 2 || x->shape.rank != g.n_spatial + 2) return false;
  bool two = g.n_spatial == 2;
  q->batch = x->shape.dims[0];
  q->c = x->shape.dims[1];
  q->h = two ? g.in[0] : 1;
  q->w = g.in[two ? 1 : 0];
  q->m = g.out_channels;
  q->group = g.group;
  if (q->group <= 0 || q->c % q->group != 0 || q->m % q->group != 0) return false;
  q->cg = q->c / q->group;
  q->mg = q->m / q->group;
  q->kh = two ? g.kernel[0] : 1;
  q->kw = g.kernel[two ? 1 : 0];
  q->sh = two ? g.strides[0] : 1;
  q->sw = g.strides[two ? 1 : 0];
  q->dh = two ? g.dilations[0] : 1;
  q->dw = g.dilations[two ? 1 : 0];
  q->ph = two ? g.pad_begin[0] : 0;
  q->pw = g.pad_begin[two ? 1 : 0];
  q->oh = two ? g.out[0] : 1;
  q->ow = g.out[two ? 1 : 0];
  if (w->shape.dims[1] != q->cg) return false;
  q->k = q->cg * q->kh * q->kw;
  if (q->k <= 0 || q->oh <= 0 || q->ow <= 0 || q->mg <= 0 || q->batch <= 0) return false;
  return true;
}

// Fills |q| and returns true when the dense fast path can take |node|.
static bool plan(const mlcc_node_t* node, qconv_geom_t* q) {
  if (!plan_common(node, q)) return false;
  // Depthwise convolutions (one input channel per group) have their own
  // kernel (emit_dw): a dot product over a 3x3 window is mostly tail.
  if (q->cg == 1 && q->group > 1) return false;
  q->wp = (q->ow - 1) * q->sw + (q->kw - 1) * q->dw + 1;
  q->n_seg = q->dw == 1 ? 1 : q->kw;
  q->seg_len = q->dw == 1 ? q->kw * q->kh * q->cg : q->kh * q->cg;
  int64_t bytes = 2 * q->kh * q->wp * q->cg;
  if (q->wp <= 0 || q->kh * q->wp > ROWS_MAX_BYTES || bytes > ROWS_MAX_BYTES) return false;
  return true;
}

// Depthwise convolutions (one input channel per group, any channel
// multiplier): their own kernel, vectorized over DW_LANES output pixels of a
// row (emit_dw). Fills |q| (row buffer width in q->wp) and returns true when
// it takes |node|.
enum { DW_LANES = 8, DW_MAX_STRIDE = 4 };
static bool plan_dw(const mlcc_node_t* node, qconv_geom_t* q) {
  qconv_geom_t g;
  memset(q, 0, sizeof(*q));
  // plan() declines depthwise shapes; rerun its checks with that one lifted.
  if (node->op != MLCC_OP_QLINEAR_CONV && node->op != MLCC_OP_CONV_INTEGER) return false;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  if (x == NULL || !x->shape_known || x->shape.rank < 3) return false;
  if (!plan_common(node, &g) || g.cg != 1 || g.group <= 1) return false;
  if (g.sw > DW_MAX_STRIDE) return false;
  int64_t owv = (g.ow + DW_LANES - 1) / DW_LANES * DW_LANES;
  g.wp = owv * g.sw + (g.kw - 1) * g.dw + DW_LANES;
  if (g.wp <= 0 || 2 * g.kh * g.wp > ROWS_MAX_BYTES) return false;
  *q = g;
  return true;
}

// Depthwise convolutions on x86-64: their own kernel over whole planes
// (emit_dw_plane, below).
enum { DWP_LANES = 16 };

// Plane rows and row width (bytes) of emit_dw_plane for |q|.
static int64_t dwp_rows(const qconv_geom_t* q) { return (q->oh - 1) * q->sh + (q->kh - 1) * q->dh + 1; }
static int64_t dwp_width(const qconv_geom_t* q) {
  int64_t nblk = (q->ow + DWP_LANES - 1) / DWP_LANES;
  return nblk * DWP_LANES * q->sw + (q->kw - 1) * q->dw;
}

// Fills |q| and returns true when emit_dw_plane takes |node| on |target|:
// a depthwise node plan_dw takes, x86-64, the padded plane within the stack
// limit.
static bool plan_dw_plane(const mlcc_node_t* node, const mlcc_target_t* target,
                          qconv_geom_t* q) {
  if (target == NULL || target->arch != MLCC_ARCH_X86_64 || !plan_dw(node, q)) return false;
  return dwp_rows(q) * dwp_width(q) <= ROWS_MAX_BYTES;
}

bool mlcc_qgemm_conv_takes(const mlcc_node_t* node) {
  qconv_geom_t q;
  return node != NULL && plan(node, &q);
}

static int64_t qblock_of(const mlcc_node_t* node);
static bool x86_vnni(const mlcc_target_t* t);
static bool x86_vbmi(const mlcc_target_t* t);

// True when |node|'s weights are in a layout a dense fast kernel reads.
static bool packed(const mlcc_node_t* node, const qconv_geom_t* q) {
  if (qblock_of(node) != 0) return true;
  if (q->kh * q->kw == 1) return true;  // [M][1][1][C] is ONNX's order
  const mlcc_attr_t* a = mlcc_node_attr(node, MLCC_QPACKED_ATTR);
  return a != NULL && a->kind == MLCC_ATTR_INT && a->i == 1;
}

void mlcc_qgemm_pack_conv_weights(const uint8_t* src, int64_t m, int64_t cg, int64_t kh,
                                  int64_t kw, uint8_t* dst) {
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t a = 0; a < kh; ++a) {
        for (int64_t e = 0; e < kw; ++e) {
          dst[((o * kw + e) * kh + a) * cg + c] = src[((o * cg + c) * kh + a) * kw + e];
        }
      }
    }
  }
}

int64_t mlcc_qgemm_conv_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target) {
  qconv_geom_t q;
  if (node == NULL) return 0;
  int64_t units;
  if (plan_dw_plane(node, target, &q)) {
    units = q.batch * q.group;  // emit_dw_plane: one per (image, group)
  } else {
    bool dw = plan_dw(node, &q);
    if (!dw && (!plan(node, &q) || !packed(node, &q))) return 0;  // reference loops
    units = q.batch * q.group * q.oh;
  }
  // A split pays for itself from about a million MACs.
  int64_t macs = q.batch * q.m * q.oh * q.ow * q.k;
  return units >= 2 && macs >= (1 << 20) ? units : 0;
}

int64_t mlcc_qgemm_conv_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* only) {
  qconv_geom_t q;
  if (node == NULL) return 0;
  if (plan_dw(node, &q)) {
    int64_t rows = 2 * q.kh * q.wp + 64;
    // emit_dw_plane (x86-64: any Linux target set includes it, |only| NULL).
    if (only != NULL && only->arch != MLCC_ARCH_X86_64) return rows;
    int64_t plane = dwp_rows(&q) * dwp_width(&q);
    if (plane > ROWS_MAX_BYTES) return rows;
    return plane + 64 > rows ? plane + 64 : rows;
  }
  if (!plan(node, &q)) return 0;
  // int16 rows + int32 per-column sums + int32 per-pixel sums + slack.
  return 2 * q.kh * q.wp * q.cg + 4 * q.kh * q.wp + 4 * q.ow + 64;
}

// Marks closed loop |loop| "llvm.loop.unroll.disable". The K loops need it:
// fully unrolled, LLVM hoists every weight vector of a register block out of
// the pixel loop (they do not depend on the pixel) and spills them all.
static void no_unroll(mlcc_emit_ctx_t* ctx, const mlcc_loop_t* loop) {
  LLVMValueRef br = LLVMGetBasicBlockTerminator(loop->latch);
  if (br == NULL) return;
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(ctx->llctx, NULL, 0);
  LLVMMetadataRef str = LLVMMDStringInContext2(ctx->llctx, "llvm.loop.unroll.disable", 24);
  LLVMMetadataRef dis = LLVMMDNodeInContext2(ctx->llctx, &str, 1);
  LLVMMetadataRef ops[2] = {tmp, dis};
  LLVMMetadataRef self = LLVMMDNodeInContext2(ctx->llctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, self);  // disposes |tmp|
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(ctx->llctx, "llvm.loop", 9),
                  LLVMMetadataAsValue(ctx->llctx, self));
}

// An |n|-element array of |t| in the entry block (64-byte aligned).
static LLVMValueRef entry_array(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, int64_t n) {
  return mlcc_emit_entry_array(ctx, t, n, 64, "qtile");
}

static LLVMValueRef gep(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, LLVMValueRef base,
                        LLVMValueRef idx) {
  return LLVMBuildGEP2(ctx->b, t, base, &idx, 1, "");
}

// A vector load of |lanes| elements of |t| at element |idx| of |base|.
static LLVMValueRef vload(mlcc_emit_ctx_t* ctx, LLVMTypeRef t, unsigned lanes,
                          LLVMValueRef base, LLVMValueRef idx, unsigned align) {
  LLVMTypeRef vt = LLVMVectorType(t, lanes);
  LLVMValueRef l = LLVMBuildLoad2(ctx->b, vt, gep(ctx, t, base, idx), "");
  LLVMSetAlignment(l, align);
  return l;
}

static LLVMValueRef ext(mlcc_emit_ctx_t* ctx, LLVMValueRef v, bool is_unsigned,
                        LLVMTypeRef to) {
  return is_unsigned ? LLVMBuildZExt(ctx->b, v, to, "") : LLVMBuildSExt(ctx->b, v, to, "");
}

// True if the x86 |target| has |feat| ("avx2", "avx512bw"): an explicit
// "+feat"/"-feat" in its features wins (the last mention; -mcpu=native lists
// every host feature), else its CPU's family does. Unknown CPUs say no, so
// the kernel falls back to SSE2, which every x86-64 CPU has.
static bool x86_has(const mlcc_target_t* t, const char* feat) {
  bool on = false, seen = false;
  size_t n = strlen(feat);
  for (const char* p = t->features; p != NULL && *p;) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n + 1 && strncmp(p + 1, feat, n) == 0) {
      on = p[0] == '+';
      seen = true;
    }
    p = comma ? comma + 1 : NULL;
  }
  if (seen) return on;
  static const char* const bw[] = {
      "skylake-avx512", "cascadelake",   "cooperlake", "cannonlake",  "icelake-client",
      "icelake-server", "tigerlake",     "sapphirerapids", "rocketlake", "znver4",
      "x86-64-v4",      "graniterapids", "emeraldrapids"};
  static const char* const avx2[] = {
      "x86-64-v3", "haswell",   "broadwell", "skylake",  "alderlake", "raptorlake",
      "meteorlake", "gracemont", "znver1",   "znver2",   "znver3",    "bdver4",
      "core-avx2", "arrowlake", "lunarlake", "sierraforest", "grandridge"};
  for (size_t i = 0; i < sizeof(bw) / sizeof(bw[0]); ++i) {
    if (strcmp(t->cpu, bw[i]) == 0) return true;
  }
  if (strcmp(feat, "avx2") != 0) return false;
  for (size_t i = 0; i < sizeof(avx2) / sizeof(avx2[0]); ++i) {
    if (strcmp(t->cpu, avx2[i]) == 0) return true;
  }
  return false;
}

// True if the aarch64 |target| has feature |feat| ("dotprod", "i8mm"):
// "+feat" in its features (the last mention wins), else a CPU of |cpus|
// (|n| names) has it.
static bool arm_has(const mlcc_target_t* t, const char* feat, const char* const* cpus, size_t n) {
  bool on = false, seen = false;
  size_t fl = strlen(feat);
  for (const char* p = t->features; p != NULL && *p;) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == fl + 1 && strncmp(p + 1, feat, fl) == 0) {
      on = p[0] == '+';
      seen = true;
    }
    p = comma ? comma + 1 : NULL;
  }
  if (seen) return on;
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(t->cpu, cpus[i]) == 0) return true;
  }
  return false;
}

// True if the aarch64 |target| has the dot-product instructions (sdot/udot):
// "+dotprod" in its features (the last mention wins), else a CPU that has
// them (Armv8.2-A cores with the extension, Armv8.4-A and later).
static bool arm_dotprod(const mlcc_target_t* t) {
  static const char* const cpus[] = {
      "cortex-a55", "cortex-a65", "cortex-a75", "cortex-a76", "cortex-a77", "cortex-a78",
      "cortex-a710", "cortex-x1", "cortex-x2", "neoverse-n1", "neoverse-n2", "neoverse-v1",
      "neoverse-v2", "apple-a13", "apple-a14", "apple-m1", "ampere1"};
  return arm_has(t, "dotprod", cpus, sizeof(cpus) / sizeof(cpus[0]));
}

// True if the aarch64 |target| has the int8 matrix multiply instructions
// (smmla/ummla/usmmla, FEAT_I8MM): "+i8mm" in its features (the last mention
// wins), else a CPU that has them (LLVM 16's Armv8.6-A and later cores).
static bool arm_i8mm(const mlcc_target_t* t) {
  static const char* const cpus[] = {
      "cortex-a510", "cortex-a710", "cortex-a715", "cortex-x2", "cortex-x3", "neoverse-n2",
      "neoverse-v1", "neoverse-v2", "neoverse-512tvb", "apple-a15", "apple-a16", "apple-m2",
      "ampere1", "ampere1a"};
  return arm_has(t, "i8mm", cpus, sizeof(cpus) / sizeof(cpus[0]));
}

// acc + |name|(a, b) for the aarch64 int8 dot / matrix intrinsics overloaded
// on the accumulator and operand types (llvm.aarch64.neon.sdot, .usmmla).
static LLVMValueRef neon_int8(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef acc,
                              LLVMValueRef a, LLVMValueRef b) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef ov[2] = {LLVMTypeOf(acc), LLVMTypeOf(a)};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, ov, 2);
  LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, ov, 2);
  LLVMValueRef args[3] = {acc, a, b};
  return LLVMBuildCall2(ctx->b, fty, fn, args, 3, "");
}

// acc + sdot(a, b): each int32 lane of |acc| (<4 x i32>) plus the four
// adjacent int8 products of |a| and |b| (<16 x i8>), exact.
static LLVMValueRef sdot(mlcc_emit_ctx_t* ctx, LLVMValueRef acc, LLVMValueRef a,
                         LLVMValueRef b) {
  return neon_int8(ctx, "llvm.aarch64.neon.sdot", acc, a, b);
}

// acc + usmmla(a, b): |acc| (<4 x i32>) is a 2x2 int32 matrix (lane i*2+j)
// plus rows i of |a| (<16 x i8>, 2 rows of 8 uint8) times rows j of |b| (2
// rows of 8 int8), exact.
static LLVMValueRef usmmla(mlcc_emit_ctx_t* ctx, LLVMValueRef acc, LLVMValueRef a,
                           LLVMValueRef b) {
  return neon_int8(ctx, "llvm.aarch64.neon.usmmla", acc, a, b);
}

// acc + a*b for int16 vectors |a|, |b| of |lanes| lanes. x86: |acc| has
// lanes/2 lanes and the products are added in adjacent pairs by pmaddwd
// (exact: |a|, |b| < 2^9 in magnitude, so no pair reaches 2^31; the
// intrinsic because LLVM's reassociation of the accumulation hides the
// generic pattern from instruction selection). Elsewhere |acc| has |lanes|
// lanes: the widening multiply-accumulate (smlal, vwmacc) LLVM selects from
// sext-mul-add.
static LLVMValueRef madd(mlcc_emit_ctx_t* ctx, bool pairwise, unsigned lanes,
                         LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b) {
  if (pairwise) {
    const char* name = lanes == 32   ? "llvm.x86.avx512.pmaddw.d.512"
                       : lanes == 16 ? "llvm.x86.avx2.pmadd.wd"
                                     : "llvm.x86.sse2.pmadd.wd";
    LLVMValueRef args[2] = {a, b};
    return LLVMBuildAdd(ctx->b, acc, mlcc_emit_intrinsic(ctx, name, args, 2), "");
  }
  LLVMTypeRef wide = LLVMVectorType(ctx->t_i32, lanes);
  LLVMValueRef p = LLVMBuildMul(ctx->b, LLVMBuildSExt(ctx->b, a, wide, ""),
                                LLVMBuildSExt(ctx->b, b, wide, ""), "");
  return LLVMBuildAdd(ctx->b, acc, p, "");
}

// |v| (a scalar) in all |n| lanes.
static LLVMValueRef splat(mlcc_emit_ctx_t* ctx, LLVMValueRef v, unsigned n) {
  LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(v), n));
  vec = LLVMBuildInsertElement(ctx->b, vec, v, LLVMConstInt(ctx->t_i32, 0, 0), "");
  LLVMValueRef zeros[64];
  for (unsigned i = 0; i < n; ++i) zeros[i] = LLVMConstInt(ctx->t_i32, 0, 0);
  return LLVMBuildShuffleVector(ctx->b, vec, LLVMGetUndef(LLVMTypeOf(vec)),
                                LLVMConstVector(zeros, n), "");
}

// Lanes [from, from + n) of |v|, or of concat(v, w) when |w| is given.
static LLVMValueRef lanes_of(mlcc_emit_ctx_t* ctx, LLVMValueRef v, LLVMValueRef w,
                             unsigned from, unsigned stride, unsigned n) {
  LLVMValueRef idx[128];
  for (unsigned i = 0; i < n; ++i) idx[i] = LLVMConstInt(ctx->t_i32, from + i * stride, 0);
  return LLVMBuildShuffleVector(ctx->b, v, w != NULL ? w : LLVMGetUndef(LLVMTypeOf(v)),
                                LLVMConstVector(idx, n), "");
}

// fold(a, b) = even(a ++ b) + odd(a ++ b): adjacent lanes of |a| summed in
// the first half, of |b| in the second (the transposing reduction step).
static LLVMValueRef fold(mlcc_emit_ctx_t* ctx, LLVMValueRef a, LLVMValueRef b, unsigned lanes) {
  return LLVMBuildAdd(ctx->b, lanes_of(ctx, a, b, 0, 2, lanes), lanes_of(ctx, a, b, 1, 2, lanes),
                      "");
}

// The lane sums of the |n| (a power of two, <= 64) int32 vectors |v| of
// |lanes| lanes each (a power of two), as one <n x i32> in order: pairs are
// folded level by level (each level halves the partial sums per vector and
// doubles the vectors per register), then vectors holding complete sums are
// concatenated, or a register of partial sums is folded with itself.
static LLVMValueRef reduce_lanes(mlcc_emit_ctx_t* ctx, LLVMValueRef* v, unsigned n,
                                 unsigned lanes) {
  unsigned count = n, part = lanes;  // vectors in |v|; partial sums per result
  while (count > 1 && part > 1) {
    for (unsigned k = 0; k < count / 2; ++k) v[k] = fold(ctx, v[2 * k], v[2 * k + 1], lanes);
    count /= 2;
    part /= 2;
  }
  while (count > 1) {  // complete sums in |count| vectors: concatenate
    for (unsigned k = 0; k < count / 2; ++k) {
      unsigned w = LLVMGetVectorSize(LLVMTypeOf(v[2 * k]));
      v[k] = lanes_of(ctx, v[2 * k], v[2 * k + 1], 0, 1, 2 * w);
    }
    count /= 2;
  }
  LLVMValueRef r = v[0];
  while (part > 1) {  // one register of |n| groups of |part| partial sums
    unsigned w = LLVMGetVectorSize(LLVMTypeOf(r));
    r = lanes_of(ctx, fold(ctx, r, r, w), NULL, 0, 1, w / 2);
    part /= 2;
  }
  return r;
}

// Element |idx| of integer |v| widened to i32, or 0 when |v| is NULL.
static LLVMValueRef ld_i32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx) {
  if (v == NULL) return LLVMConstInt(ctx->t_i32, 0, 0);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, idx), v->dtype, MLCC_DTYPE_I32);
}

static LLVMValueRef ld_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v, LLVMValueRef idx,
                           float dflt) {
  if (v == NULL) return mlcc_emit_f32(ctx, dflt);
  return mlcc_emit_load(ctx, v, idx);
}

static LLVMValueRef zp_f32(mlcc_emit_ctx_t* ctx, const mlcc_value_t* v) {
  if (v == NULL) return mlcc_emit_f32(ctx, 0.f);
  return mlcc_emit_convert(ctx, mlcc_emit_load(ctx, v, c64(ctx, 0)), v->dtype, MLCC_DTYPE_F32);
}

// The per-tensor requantization values of QLinearConv |node| whose operands
// are |ops| (mlcc_quant_conv_operands): x_scale and y_scale as float32 (1
// when absent), y_zero_point as float32 (0 when absent), and the fused
// activation's bounds on y (mlcc_qgemm_act_bounds). For ConvInteger it emits
// nothing and every field is NULL. The direct, depthwise and row conv
// kernels share it.
typedef struct {
  LLVMValueRef xs, ys, yz, lo, hi;
} qrequant_t;

// saturate(round_half_even(|v| / |ys|) + |yzf|) in float, clamped to [lo, hi].
static LLVMValueRef quantize_bound(mlcc_emit_ctx_t* ctx, float v, LLVMValueRef ys,
                                   LLVMValueRef yzf, float lo, float hi) {
  LLVMValueRef f = LLVMBuildFDiv(ctx->b, mlcc_emit_f32(ctx, v), ys, "");
  f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
  f = LLVMBuildFAdd(ctx->b, f, yzf, "");
  f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, mlcc_emit_f32(ctx, lo));
  return mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, mlcc_emit_f32(ctx, hi));
}

void mlcc_qgemm_act_bounds(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node, mlcc_dtype_t qdt,
                           LLVMValueRef ys, LLVMValueRef yzf, LLVMValueRef* out_lo,
                           LLVMValueRef* out_hi) {
  float lo = qdt == MLCC_DTYPE_I8 ? -128.f : 0.f;
  float hi = qdt == MLCC_DTYPE_I8 ? 127.f : 255.f;
  *out_lo = mlcc_emit_f32(ctx, lo);
  *out_hi = mlcc_emit_f32(ctx, hi);
  const mlcc_attr_t* a = mlcc_node_attr(node, MLCC_QACT_ATTR);
  if (a == NULL || a->kind != MLCC_ATTR_INT || a->i == 0) return;
  float alo = 0.f, ahi = INFINITY;
  if (a->i == 2) {
    const mlcc_attr_t* l = mlcc_node_attr(node, MLCC_QACT_LO_ATTR);
    const mlcc_attr_t* h = mlcc_node_attr(node, MLCC_QACT_HI_ATTR);
    alo = l != NULL && l->kind == MLCC_ATTR_FLOAT ? l->f : -INFINITY;
    ahi = h != NULL && h->kind == MLCC_ATTR_FLOAT ? h->f : INFINITY;
  }
  if (alo > -INFINITY) *out_lo = quantize_bound(ctx, alo, ys, yzf, lo, hi);
  if (ahi < INFINITY) *out_hi = quantize_bound(ctx, ahi, ys, yzf, lo, hi);
}

static qrequant_t qconv_requant(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                const mlcc_quant_conv_operands_t* ops) {
  qrequant_t r = {NULL, NULL, NULL, NULL, NULL};
  if (node->op != MLCC_OP_QLINEAR_CONV) return r;
  r.xs = ld_f32(ctx, ops->x_scale, c64(ctx, 0), 1.f);
  r.ys = ld_f32(ctx, ops->y_scale, c64(ctx, 0), 1.f);
  r.yz = zp_f32(ctx, ops->y_zero);
  mlcc_qgemm_act_bounds(ctx, node, ops->y->dtype, r.ys, r.yz, &r.lo, &r.hi);
  return r;
}

// Depthwise kernel: per (image, channel, output row) the KH input rows are
// packed as zero-point-subtracted int16 (0 outside the image), then
// DW_LANES adjacent output pixels are computed at once: for each tap,
// acc += sext(row[kh][ow * sw + kw * dw ...]) * (w[m][kh][kw] - w_zp[m]),
// all int32 (exact); the requantization is qgemm.h's, on the lanes.
static mlcc_status_t emit_dw(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                             const qconv_geom_t* qp, bool* out_done) {
  qconv_geom_t q = *qp;
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *x = ops.x, *w = ops.w, *xz = ops.x_zero, *wz = ops.w_zero;
  const mlcc_value_t *ws = ops.w_scale;
  const mlcc_value_t* bias = ops.bias;
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i16 = ctx->t_i16, i32 = ctx->t_i32, i8 = ctx->t_i8;
  const unsigned V = DW_LANES;
  LLVMTypeRef vi = LLVMVectorType(i32, V);
  bool w_per_channel = numel_or(wz, 1) != 1;
  bool ws_per_channel = numel_or(ws, 1) != 1;
  LLVMValueRef rows = entry_array(ctx, i16, q.kh * q.wp);
  LLVMValueRef zero32 = LLVMConstInt(i32, 0, 0);
  LLVMValueRef xzv = ld_i32(ctx, xz, c64(ctx, 0));
  qrequant_t rq = qconv_requant(ctx, node, &ops);
  LLVMValueRef xsv = rq.xs, ysv = rq.ys, yzf = rq.yz, qlo = rq.lo, qhi = rq.hi;
  // One parallel unit per (image, group, output row): units [rb, re).
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : c64(ctx, 0);
  LLVMValueRef re = ctx->range_end ? ctx->range_end : c64(ctx, q.batch * q.group * q.oh);
  mlcc_loop_t lu = mlcc_emit_loop_begin(ctx, rb, re, 1, "qdu");
  LLVMValueRef n_iv = LLVMBuildUDiv(b, lu.iv, c64(ctx, q.group * q.oh), "");
  LLVMValueRef g_iv = LLVMBuildURem(b, LLVMBuildUDiv(b, lu.iv, c64(ctx, q.oh), ""),
                                    c64(ctx, q.group), "");
  LLVMValueRef oh_iv = LLVMBuildURem(b, lu.iv, c64(ctx, q.oh), "");
  LLVMValueRef x_img = imulc(ctx, imad(ctx, n_iv, q.c, g_iv), q.h * q.w);
  // Pack: rows[kh][iw'] = x[ih][iw' - pw] - x_zero_point, 0 outside.
  mlcc_loop_t lkh = mlcc_emit_for(ctx, 0, q.kh, "qdkh");
  LLVMValueRef ih = iadd(ctx, imulc(ctx, oh_iv, q.sh), iaddc(ctx, imulc(ctx, lkh.iv, q.dh), -q.ph));
  LLVMValueRef ih_ok = LLVMBuildICmp(b, LLVMIntULT, ih, c64(ctx, q.h), "");
  LLVMValueRef ihc = LLVMBuildSelect(b, ih_ok, ih, c64(ctx, 0), "");
  mlcc_loop_t liw = mlcc_emit_for(ctx, 0, q.wp, "qdiw");
  LLVMValueRef iw = iaddc(ctx, liw.iv, -q.pw);
  LLVMValueRef ok = LLVMBuildAnd(b, ih_ok, LLVMBuildICmp(b, LLVMIntULT, iw, c64(ctx, q.w), ""), "");
  LLVMValueRef iwc = LLVMBuildSelect(b, ok, iw, c64(ctx, 0), "");
  LLVMValueRef xv = LLVMBuildSub(b, ld_i32(ctx, x, iadd(ctx, x_img, imad(ctx, ihc, q.w, iwc))),
                                 xzv, "");
  xv = LLVMBuildSelect(b, ok, xv, zero32, "");
  LLVMBuildStore(b, LLVMBuildTrunc(b, xv, i16, ""),
                 gep(ctx, i16, rows, imad(ctx, lkh.iv, q.wp, liw.iv)));
  mlcc_emit_loop_end(ctx, &liw);
  mlcc_emit_loop_end(ctx, &lkh);
  // Output channels of this group (the channel multiplier).
  mlcc_loop_t lmm = mlcc_emit_for(ctx, 0, q.mg, "qdm");
  LLVMValueRef m = imad(ctx, g_iv, q.mg, lmm.iv);
  LLVMValueRef wzm = ld_i32(ctx, wz, w_per_channel ? m : c64(ctx, 0));
  LLVMValueRef taps[49];
  int64_t n_taps = q.kh * q.kw;
  bool unroll_taps = n_taps <= 49;
  if (unroll_taps) {
    for (int64_t t = 0; t < n_taps; ++t) {
      LLVMValueRef wt = ld_i32(ctx, w, imad(ctx, m, n_taps, c64(ctx, t)));
      taps[t] = splat(ctx, LLVMBuildSub(b, wt, wzm, ""), V);
    }
  }
  LLVMValueRef bv = splat(ctx, bias != NULL ? ld_i32(ctx, bias, m) : zero32, V);
  LLVMValueRef multv = NULL;
  if (qlinear) {
    LLVMValueRef wsm = ld_f32(ctx, ws, ws_per_channel ? m : c64(ctx, 0), 1.f);
    multv = splat(ctx, LLVMBuildFDiv(b, LLVMBuildFMul(b, xsv, wsm, ""), ysv, "mult"), V);
  }
  mlcc_loop_t lo = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.ow), V, "qdo");
  LLVMValueRef acc = mlcc_emit_var(ctx, vi, LLVMConstNull(vi));
  LLVMValueRef base = imulc(ctx, lo.iv, q.sw);
  // One tap: the V pixels' inputs at stride sw, sign-extended to int32.
  #define DW_TAP(KH_IV, KW_IV, WTAP)                                                         \
    do {                                                                                   \
      LLVMValueRef at = iadd(ctx, iadd(ctx, base, imulc(ctx, (KW_IV), q.dw)),              \
                             imulc(ctx, (KH_IV), q.wp));                                   \
      LLVMValueRef xl = vload(ctx, i16, (unsigned)(V * q.sw), rows, at, 2);                \
      if (q.sw > 1) xl = lanes_of(ctx, xl, NULL, 0, (unsigned)q.sw, V);                    \
      LLVMValueRef p = LLVMBuildMul(b, LLVMBuildSExt(b, xl, vi, ""), (WTAP), "");          \
      LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, vi, acc, ""), p, ""), acc);      \
    } while (0)
  if (unroll_taps) {
    for (int64_t a = 0; a < q.kh; ++a) {
      for (int64_t e = 0; e < q.kw; ++e) DW_TAP(c64(ctx, a), c64(ctx, e), taps[a * q.kw + e]);
    }
  } else {
    mlcc_loop_t la = mlcc_emit_for(ctx, 0, q.kh, "qdta");
    mlcc_loop_t le = mlcc_emit_for(ctx, 0, q.kw, "qdte");
    LLVMValueRef wt = ld_i32(ctx, w, iadd(ctx, imulc(ctx, m, n_taps), imad(ctx, la.iv, q.kw, le.iv)));
    DW_TAP(la.iv, le.iv, splat(ctx, LLVMBuildSub(b, wt, wzm, ""), V));
    mlcc_emit_loop_end(ctx, &le);
    mlcc_emit_loop_end(ctx, &la);
  }
  #undef DW_TAP
  LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildLoad2(b, vi, acc, ""), bv, "");
  LLVMValueRef outv = r;
  if (qlinear) {
    LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, r, LLVMVectorType(ctx->t_f32, V), ""),
                                   multv, "");
    f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
    f = LLVMBuildFAdd(b, f, splat(ctx, yzf, V), "");
    f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, splat(ctx, qlo, V));
    f = mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, splat(ctx, qhi, V));
    outv = LLVMBuildTrunc(b, LLVMBuildFPToSI(b, f, vi, ""), LLVMVectorType(i8, V), "");
  }
  mlcc_status_t status = mlcc_ok_status();
  LLVMValueRef y_at = imad(ctx, imad(ctx, n_iv, q.m, m), q.oh * q.ow, imulc(ctx, oh_iv, q.ow));
  for (unsigned l = 0; l < V && status == NULL; ++l) {
    LLVMValueRef o = iaddc(ctx, lo.iv, l);
    mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(b, LLVMIntSLT, o, c64(ctx, q.ow), ""));
    LLVMValueRef e = LLVMBuildExtractElement(b, outv, LLVMConstInt(i32, l, 0), "");
    status = mlcc_emit_store_output(ctx, node, 0, iadd(ctx, y_at, o), e);
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_loop_end(ctx, &lo);
  mlcc_emit_loop_end(ctx, &lmm);
  mlcc_emit_loop_end(ctx, &lu);
  return status;
}

// Depthwise kernel on x86 (emit_dw_plane): one parallel unit per (image,
// group). The group's input plane is copied once, raw, into a stack plane
// padded with the x zero point (DWP_LANES-byte vector copies), so the
// padding adds (x_zp - x_zp) * w = 0 like the spec's zero padding and no
// pixel needs a border test. Then per output row, DWP_LANES adjacent output
// pixels at a time: for each tap, acc += ext(plane[oh*sh + kh*dh][ow*sw +
// kw*dw ...]) * (w - w_zp) in int32 lanes (stride 2..4: a load of
// DWP_LANES*sw bytes and every sw-th lane), and
//   sum (x - x_zp)(w - w_zp) = sum x (w - w_zp) - x_zp * sum (w - w_zp),
// all int32 and wrapping, so the result is bit-identical to the reference
// (emit_dw and quant.c). The requantization is qgemm.h's float formula on
// the lanes; full vectors are stored whole, the row's last partial one with
// a masked store.
// A store of vector |v| at element |idx| of |node|'s output 0, lanes whose
// |mask| bit is set (all lanes when |mask| is NULL); only for an unfused
// kernel (the caller checks).
static void dwp_store_at(mlcc_emit_ctx_t* ctx, LLVMValueRef p, LLVMValueRef v,
                         LLVMValueRef mask);
static void dwp_store(mlcc_emit_ctx_t* ctx, const mlcc_value_t* y, LLVMValueRef idx,
                      LLVMValueRef v, LLVMValueRef mask) {
  LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(v));
  dwp_store_at(ctx, gep(ctx, et, mlcc_emit_ptr(ctx, y), idx), v, mask);
}

// A store of vector |v| at pointer |p|, lanes whose |mask| bit is set (all
// lanes when |mask| is NULL).
static void dwp_store_at(mlcc_emit_ctx_t* ctx, LLVMValueRef p, LLVMValueRef v,
                         LLVMValueRef mask) {
  if (mask == NULL) {
    LLVMSetAlignment(LLVMBuildStore(ctx->b, v, p), 1);
    return;
  }
  const char* name = "llvm.masked.store";
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef ov[2] = {LLVMTypeOf(v), LLVMTypeOf(p)};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, ov, 2);
  LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, ov, 2);
  LLVMValueRef args[4] = {v, p, LLVMConstInt(ctx->t_i32, 1, 0), mask};
  LLVMBuildCall2(ctx->b, fty, fn, args, 4, "");
}

static mlcc_status_t emit_dw_plane(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                   const qconv_geom_t* qp, bool* out_done) {
  qconv_geom_t q = *qp;
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *x = ops.x, *w = ops.w, *xz = ops.x_zero, *wz = ops.w_zero;
  const mlcc_value_t *ws = ops.w_scale;
  const mlcc_value_t *bias = ops.bias, *y = ops.y;
  const mlcc_kernel_t* k = ctx->kernel;
  // With an epilogue fused after it (a Cast, an Add, ...), y is internal to the
  // kernel, not an argument: the chain's store_output writes the kernel's output.
  bool fused = k != NULL && k->n_nodes > 1 && k->nodes[0] == node;
  LLVMValueRef xp = mlcc_emit_ptr(ctx, x);
  if (xp == NULL || (!fused && mlcc_emit_ptr(ctx, y) == NULL)) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: data or output is not a kernel argument",
                            mlcc_op_name(node->op));
  }
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8, i32 = ctx->t_i32, f32 = ctx->t_f32;
  const unsigned V = DWP_LANES;
  LLVMTypeRef vi = LLVMVectorType(i32, V), vf = LLVMVectorType(f32, V), vb = LLVMVectorType(i8, V);
  bool x_u8 = x->dtype == MLCC_DTYPE_U8;
  bool w_pc = numel_or(wz, 1) != 1, ws_pc = numel_or(ws, 1) != 1;
  int64_t hp = dwp_rows(&q), wpl = dwp_width(&q);
  int64_t nblk = (q.ow + V - 1) / V;
  // AVX-512BW (with VL): a row's tail is copied into the plane by one masked
  // byte load and store.
  bool bw = x86_has(ctx->target, "avx512bw") && x86_has(ctx->target, "avx512vl");
  // AVX-512 VNNI + VBMI, uint8 x, int8 w, no column dilation, KW <= 8:
  // four taps of a row per vpdpbusd (dwp_dpbusd below); the plane then
  // has 64 bytes of slack for the 64-byte window loads.
  bool dpb = bw && x86_vnni(ctx->target) && x86_vbmi(ctx->target) && x_u8 &&
             w->dtype == MLCC_DTYPE_I8 && q.dw == 1 && q.kw <= 8 && q.kh * q.kw <= 49 &&
             15 * q.sw + 4 * ((q.kw + 3) / 4) - 1 < 64;
  // direct: one vector of output pixels per row (OW <= 16) and input rows of
  // at most 64 bytes (the 14 x 14 and 7 x 7 planes): no plane; each window
  // is a masked load of the input row itself, its padding columns and rows
  // the x zero point (dwp_dpbusd below).
  bool direct = dpb && nblk == 1 && q.w <= 64;
  int64_t plane_bytes = hp * wpl + (dpb ? 64 : 0);
  LLVMValueRef plane = direct ? NULL : entry_array(ctx, i8, plane_bytes);
  LLVMValueRef zero32 = LLVMConstInt(i32, 0, 0);
  LLVMValueRef xzv = ld_i32(ctx, xz, c64(ctx, 0));
  LLVMValueRef xz8 = LLVMBuildTrunc(b, xzv, i8, "");
  qrequant_t rq = qconv_requant(ctx, node, &ops);
  LLVMValueRef xsv = rq.xs, ysv = rq.ys, yzf = rq.yz, qlo = rq.lo, qhi = rq.hi;
  // One parallel unit per (image, group): units [rb, re).
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : c64(ctx, 0);
  LLVMValueRef re = ctx->range_end ? ctx->range_end : c64(ctx, q.batch * q.group);
  mlcc_loop_t lu = mlcc_emit_loop_begin(ctx, rb, re, 1, "qpu");
  LLVMValueRef n_iv = LLVMBuildUDiv(b, lu.iv, c64(ctx, q.group), "");
  LLVMValueRef g_iv = LLVMBuildURem(b, lu.iv, c64(ctx, q.group), "");
  LLVMValueRef x_img = imulc(ctx, imad(ctx, n_iv, q.c, g_iv), q.h * q.w);
  // The plane: x_zero_point everywhere, then the image rows at (ph, pw).
  if (!direct) {
    LLVMValueRef fill = splat(ctx, xz8, V);
    int64_t nfill = plane_bytes / V;
    mlcc_loop_t lf = mlcc_emit_for(ctx, 0, nfill, "qpf");
    LLVMSetAlignment(LLVMBuildStore(b, fill, gep(ctx, i8, plane, imulc(ctx, lf.iv, V))), 1);
    mlcc_emit_loop_end(ctx, &lf);
    for (int64_t t = nfill * V; t < plane_bytes; ++t) {
      LLVMBuildStore(b, xz8, gep(ctx, i8, plane, c64(ctx, t)));
    }
    // Image rows ih in [r0, r1) land on plane rows ih + ph; columns [0, cw).
    int64_t r0 = q.ph > 0 ? 0 : -q.ph, r1 = hp - q.ph < q.h ? hp - q.ph : q.h;
    int64_t c0 = q.pw > 0 ? 0 : -q.pw;
    int64_t cw = wpl - q.pw < q.w ? wpl - q.pw : q.w;  // image columns [c0, cw)
    if (r1 > r0 && cw > c0) {
      int64_t len = cw - c0, nv = len / V;
      mlcc_loop_t lr = mlcc_emit_for(ctx, r0, r1, "qpr");
      LLVMValueRef src = iadd(ctx, x_img, iaddc(ctx, imulc(ctx, lr.iv, q.w), c0));
      LLVMValueRef dst = iaddc(ctx, imulc(ctx, lr.iv, wpl), q.ph * wpl + q.pw + c0);
      if (nv > 0) {
        mlcc_loop_t lc = mlcc_emit_for(ctx, 0, nv, "qpc");
        LLVMValueRef o = imulc(ctx, lc.iv, V);
        LLVMValueRef l = vload(ctx, i8, V, xp, iadd(ctx, src, o), 1);
        LLVMSetAlignment(LLVMBuildStore(b, l, gep(ctx, i8, plane, iadd(ctx, dst, o))), 1);
        mlcc_emit_loop_end(ctx, &lc);
      }
      if (nv * V < len && bw) {
        // The row's tail: one masked load and store (AVX-512BW's vmovdqu8
        // with a mask register; bytes past the tail are neither read nor
        // written).
        LLVMValueRef mk[DWP_LANES];
        for (unsigned l = 0; l < V; ++l) mk[l] = LLVMConstInt(ctx->t_i1, (int64_t)l < len - nv * V, 0);
        LLVMValueRef mask = LLVMConstVector(mk, V);
        LLVMValueRef sp = gep(ctx, i8, xp, iaddc(ctx, src, nv * V));
        const char* name = "llvm.masked.load";
        unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
        LLVMTypeRef ov[2] = {vb, LLVMTypeOf(sp)};
        LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, ov, 2);
        LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, ov, 2);
        LLVMValueRef args[4] = {sp, LLVMConstInt(i32, 1, 0), mask, LLVMGetUndef(vb)};
        LLVMValueRef l = LLVMBuildCall2(b, fty, fn, args, 4, "");
        dwp_store_at(ctx, gep(ctx, i8, plane, iaddc(ctx, dst, nv * V)), l, mask);
      } else if (nv * V < len) {
        mlcc_loop_t lc = mlcc_emit_for(ctx, nv * V, len, "qpt");
        LLVMValueRef l = LLVMBuildLoad2(b, i8, gep(ctx, i8, xp, iadd(ctx, src, lc.iv)), "");
        LLVMBuildStore(b, l, gep(ctx, i8, plane, iadd(ctx, dst, lc.iv)));
        mlcc_emit_loop_end(ctx, &lc);
      }
      mlcc_emit_loop_end(ctx, &lr);
    }
  }
  // Output channels of this group (the channel multiplier).
  mlcc_loop_t lmm = mlcc_emit_for(ctx, 0, q.mg, "qpm");
  LLVMValueRef m = imad(ctx, g_iv, q.mg, lmm.iv);
  LLVMValueRef wzm = ld_i32(ctx, wz, w_pc ? m : c64(ctx, 0));
  int64_t n_taps = q.kh * q.kw;
  bool unroll_taps = n_taps <= 49;
  LLVMValueRef taps[49];
  // bias' = bias - x_zero_point * sum_t (w[t] - w_zp)
  LLVMValueRef wsum = zero32;
  if (unroll_taps) {
    for (int64_t t = 0; t < n_taps; ++t) {
      LLVMValueRef wt = LLVMBuildSub(b, ld_i32(ctx, w, imad(ctx, m, n_taps, c64(ctx, t))), wzm, "");
      wsum = LLVMBuildAdd(b, wsum, wt, "");
      taps[t] = splat(ctx, wt, V);
    }
  } else {
    LLVMValueRef ws_var = mlcc_emit_var(ctx, i32, zero32);
    mlcc_loop_t lt = mlcc_emit_for(ctx, 0, n_taps, "qpws");
    LLVMValueRef wt = LLVMBuildSub(b, ld_i32(ctx, w, imad(ctx, m, n_taps, lt.iv)), wzm, "");
    LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, ws_var, ""), wt, ""), ws_var);
    mlcc_emit_loop_end(ctx, &lt);
    wsum = LLVMBuildLoad2(b, i32, ws_var, "");
  }
  LLVMValueRef bm = bias != NULL ? ld_i32(ctx, bias, m) : zero32;
  bm = LLVMBuildSub(b, bm, LLVMBuildMul(b, xzv, wsum, ""), "");
  LLVMValueRef bv = splat(ctx, bm, V);
  // dpb: per kernel row a and quad j, the int8 weights w[a][4j..4j+3] as
  // the bytes of one int32 (0 past KW), in every lane; ones[j] has byte 1
  // where a tap is.
  int nquad = (int)((q.kw + 3) / 4);
  LLVMValueRef wquad[49][2], ones[2] = {NULL, NULL}, wzs = NULL;
  if (dpb) {
    for (int j = 0; j < nquad; ++j) {
      uint32_t o = 0;
      for (int i = 0; i < 4; ++i) o |= (4 * j + i < q.kw ? 1u : 0u) << (8 * i);
      ones[j] = splat(ctx, LLVMConstInt(i32, o, 0), V);
      for (int64_t a = 0; a < q.kh; ++a) {
        LLVMValueRef d = zero32;
        for (int i = 0; i < 4 && 4 * j + i < q.kw; ++i) {
          LLVMValueRef wt = ld_i32(ctx, w, imad(ctx, m, n_taps, c64(ctx, a * q.kw + 4 * j + i)));
          wt = LLVMBuildAnd(b, wt, LLVMConstInt(i32, 0xff, 0), "");
          d = LLVMBuildOr(b, d, LLVMBuildShl(b, wt, LLVMConstInt(i32, 8 * i, 0), ""), "");
        }
        wquad[a][j] = splat(ctx, d, V);
      }
    }
    wzs = splat(ctx, wzm, V);
  }
  LLVMValueRef multv = NULL, yzv = NULL, qlov = NULL, qhiv = NULL;
  if (qlinear) {
    LLVMValueRef wsm = ld_f32(ctx, ws, ws_pc ? m : c64(ctx, 0), 1.f);
    multv = splat(ctx, LLVMBuildFDiv(b, LLVMBuildFMul(b, xsv, wsm, ""), ysv, "mult"), V);
    yzv = splat(ctx, yzf, V);
    qlov = splat(ctx, qlo, V);
    qhiv = splat(ctx, qhi, V);
  }
  LLVMValueRef y_ch = imulc(ctx, imad(ctx, n_iv, q.m, m), q.oh * q.ow);
  mlcc_loop_t loh = mlcc_emit_for(ctx, 0, q.oh, "qpoh");
  LLVMValueRef prow = imulc(ctx, loh.iv, q.sh * wpl);
  LLVMValueRef y_row = iadd(ctx, y_ch, imulc(ctx, loh.iv, q.ow));
  mlcc_loop_t lb = mlcc_emit_for(ctx, 0, nblk, "qpb");
  LLVMValueRef ow0 = imulc(ctx, lb.iv, V);
  LLVMValueRef base = iadd(ctx, prow, imulc(ctx, ow0, q.sw));
  // One tap: V pixels' inputs at stride sw, extended to int32, times |wtap|.
  #define DWP_TAP(ACC, AT, WTAP)                                                      \
    do {                                                                             \
      LLVMValueRef xl_ = vload(ctx, i8, (unsigned)(V * q.sw), plane, (AT), 1);       \
      if (q.sw > 1) xl_ = lanes_of(ctx, xl_, NULL, 0, (unsigned)q.sw, V);            \
      LLVMValueRef p_ = LLVMBuildMul(b, ext(ctx, xl_, x_u8, vi), (WTAP), "");        \
      (ACC) = LLVMBuildAdd(b, (ACC), p_, "");                                        \
    } while (0)
  LLVMValueRef acc = LLVMConstNull(vi);
  if (dpb) {
    // Lane l's quad j is the 4 bytes at l * sw + 4j of a 64-byte window of
    // the plane row (vpermb): acc += sum_i x[.. + i] * w[a][4j + i]
    // (vpdpbusd, uint8 x int8, exact int32), xs += the same sum with
    // weights 1; then acc - w_zp * xs = sum x (w - w_zp).
    LLVMValueRef xsum = LLVMConstNull(vi);
    LLVMTypeRef v64 = LLVMVectorType(i8, 64);
    // direct: the window is input row ih = oh * sh + a * dh - ph (a masked
    // load of its W bytes; a row outside the image is all x zero point), and
    // lane l's byte i of quad j is column l * sw + 4j + i - pw, or the zero
    // point (lane 0 of the second shuffle operand) outside [0, W) or past KW.
    LLVMValueRef zp64 = direct ? splat(ctx, xz8, 64) : NULL;
    for (int64_t a = 0; a < q.kh; ++a) {
      LLVMValueRef win;
      if (direct) {
        LLVMValueRef ih = iaddc(ctx, imulc(ctx, loh.iv, q.sh), a * q.dh - q.ph);
        LLVMValueRef inb = LLVMBuildICmp(b, LLVMIntULT, ih, c64(ctx, q.h), "");
        LLVMValueRef ihc = LLVMBuildSelect(b, inb, ih, c64(ctx, 0), "");
        LLVMValueRef mk[64];
        for (unsigned l = 0; l < 64; ++l) mk[l] = LLVMConstInt(ctx->t_i1, (int64_t)l < q.w, 0);
        LLVMValueRef sp = gep(ctx, i8, xp, iadd(ctx, x_img, imulc(ctx, ihc, q.w)));
        const char* name = "llvm.masked.load";
        unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
        LLVMTypeRef ov[2] = {v64, LLVMTypeOf(sp)};
        LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, ov, 2);
        LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, ov, 2);
        LLVMValueRef args[4] = {sp, LLVMConstInt(i32, 1, 0), LLVMConstVector(mk, 64), zp64};
        win = LLVMBuildSelect(b, inb, LLVMBuildCall2(b, fty, fn, args, 4, ""), zp64, "");
      } else {
        win = vload(ctx, i8, 64, plane, iaddc(ctx, base, a * q.dh * wpl), 1);
      }
      for (int j = 0; j < nquad; ++j) {
        LLVMValueRef idx[64];
        for (unsigned l = 0; l < V; ++l) {
          for (unsigned i = 0; i < 4; ++i) {
            int64_t c = (int64_t)(l * q.sw + 4 * j + i);
            if (direct) {
              c -= q.pw;
              if (c < 0 || c >= q.w || 4 * j + (int64_t)i >= q.kw) c = 64;
            }
            idx[4 * l + i] = LLVMConstInt(i32, (unsigned)c, 0);
          }
        }
        LLVMValueRef u = LLVMBuildShuffleVector(b, win, direct ? zp64 : LLVMGetUndef(v64),
                                                LLVMConstVector(idx, 64), "");
        u = LLVMBuildBitCast(b, u, vi, "");
        LLVMValueRef args[3] = {acc, u, wquad[a][j]};
        acc = mlcc_emit_intrinsic(ctx, "llvm.x86.avx512.vpdpbusd.512", args, 3);
        LLVMValueRef args1[3] = {xsum, u, ones[j]};
        xsum = mlcc_emit_intrinsic(ctx, "llvm.x86.avx512.vpdpbusd.512", args1, 3);
      }
    }
    acc = LLVMBuildSub(b, acc, LLVMBuildMul(b, wzs, xsum, ""), "");
  } else if (unroll_taps) {
    for (int64_t a = 0; a < q.kh; ++a) {
      for (int64_t e = 0; e < q.kw; ++e) {
        DWP_TAP(acc, iaddc(ctx, base, a * q.dh * wpl + e * q.dw), taps[a * q.kw + e]);
      }
    }
  } else {
    LLVMValueRef accv = mlcc_emit_var(ctx, vi, LLVMConstNull(vi));
    mlcc_loop_t la = mlcc_emit_for(ctx, 0, q.kh, "qpta");
    mlcc_loop_t le = mlcc_emit_for(ctx, 0, q.kw, "qpte");
    LLVMValueRef wt = LLVMBuildSub(
        b, ld_i32(ctx, w, iadd(ctx, imulc(ctx, m, n_taps), imad(ctx, la.iv, q.kw, le.iv))), wzm, "");
    LLVMValueRef at = iadd(ctx, base, iadd(ctx, imulc(ctx, la.iv, q.dh * wpl), imulc(ctx, le.iv, q.dw)));
    LLVMValueRef a0 = LLVMBuildLoad2(b, vi, accv, "");
    DWP_TAP(a0, at, splat(ctx, wt, V));
    LLVMBuildStore(b, a0, accv);
    mlcc_emit_loop_end(ctx, &le);
    mlcc_emit_loop_end(ctx, &la);
    acc = LLVMBuildLoad2(b, vi, accv, "");
  }
  #undef DWP_TAP
  LLVMValueRef outv = LLVMBuildAdd(b, acc, bv, "");
  if (qlinear) {
    LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, outv, vf, ""), multv, "");
    f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
    f = LLVMBuildFAdd(b, f, yzv, "");
    f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, qlov);
    f = mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, qhiv);
    outv = LLVMBuildTrunc(b, LLVMBuildFPToSI(b, f, vi, ""), vb, "");
  }
  mlcc_status_t status = mlcc_ok_status();
  LLVMValueRef y_at = iadd(ctx, y_row, ow0);
  if (fused) {  // a fused chain runs per element (not expected after quant-fuse)
    for (unsigned l = 0; l < V && status == NULL; ++l) {
      LLVMValueRef o = iaddc(ctx, ow0, l);
      mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(b, LLVMIntSLT, o, c64(ctx, q.ow), ""));
      LLVMValueRef e = LLVMBuildExtractElement(b, outv, LLVMConstInt(i32, l, 0), "");
      status = mlcc_emit_store_output(ctx, node, 0, iaddc(ctx, y_at, l), e);
      mlcc_emit_if_end(ctx, &br);
    }
  } else if (q.ow % V == 0) {
    dwp_store(ctx, y, y_at, outv, NULL);
  } else {
    // Blocks before the last are full; the last one stores OW % V lanes.
    LLVMValueRef full = LLVMBuildICmp(b, LLVMIntSLT, lb.iv, c64(ctx, nblk - 1), "");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, full);
    dwp_store(ctx, y, y_at, outv, NULL);
    mlcc_emit_if_else(ctx, &br);
    LLVMValueRef mk[DWP_LANES];
    int64_t rest = q.ow - (nblk - 1) * V;
    for (unsigned l = 0; l < V; ++l) mk[l] = LLVMConstInt(ctx->t_i1, (int64_t)l < rest, 0);
    dwp_store(ctx, y, y_at, outv, LLVMConstVector(mk, V));
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_loop_end(ctx, &lb);
  mlcc_emit_loop_end(ctx, &loh);
  mlcc_emit_loop_end(ctx, &lmm);
  mlcc_emit_loop_end(ctx, &lu);
  return status;
}

// Packs the KH input rows output row |oh_iv| reads (qgemm.h's form) for the
// image/group whose channel-0 plane starts at element |x_img| of |x|:
// rows[iw'][kh][c] = x[c][ih][iw' - pw] - x_zero_point (0 outside the image),
// int16; with |dot8|, int8 x - 128 (uint8 x) or x (int8 x), padding holding
// the zero point shifted alike (|xz8| = x_zero_point - |xshift_c|; the row
// kernel's sdot form shifts by 128 for uint8 x and 0 for int8 x, the blocked
// VNNI form by 0 and -128, making the bytes uint8).
// colsum[kh][iw'] = sum_c (x - x_zero_point) and pixsum[ow] = the window sum
// of each output pixel (for the weight zero point). With |vec| (x86) the
// interior columns of the first cg / 8 * 8 channels are packed by vectors
// (emit_pack_rows_vec), the same values.
// The transpose of the 16 byte vectors |v| (<16 x i8>, row r = v[r]): in
// place, v[i] lane r = the old v[r] lane i. Four rounds of the perfect
// shuffle (interleave v[i] with v[i + 8]: punpcklbw / punpckhbw on x86).
static void transpose16(mlcc_emit_ctx_t* ctx, LLVMValueRef* v) {
  LLVMValueRef lo[16], hi[16], nv[16];
  for (unsigned k = 0; k < 8; ++k) {
    lo[2 * k] = LLVMConstInt(ctx->t_i32, k, 0);
    lo[2 * k + 1] = LLVMConstInt(ctx->t_i32, 16 + k, 0);
    hi[2 * k] = LLVMConstInt(ctx->t_i32, 8 + k, 0);
    hi[2 * k + 1] = LLVMConstInt(ctx->t_i32, 24 + k, 0);
  }
  LLVMValueRef mlo = LLVMConstVector(lo, 16), mhi = LLVMConstVector(hi, 16);
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      nv[2 * i] = LLVMBuildShuffleVector(ctx->b, v[i], v[i + 8], mlo, "");
      nv[2 * i + 1] = LLVMBuildShuffleVector(ctx->b, v[i], v[i + 8], mhi, "");
    }
    memcpy(v, nv, sizeof(nv));
  }
}

// The vector part of emit_pack_rows (x86, and aarch64's blocked kernels):
// for packed row |kh_iv| of image row |ih| (valid), columns iw' in [pw, pw +
// 16 * nvec) and channels [0, cv) (cv a multiple of 8, or on aarch64 with
// int8 rows all of fewer than 8 channels: one block of cv): per block of 16
// columns and 16 (or 8, or cv < 8) channels, one
// <16 x i8> load per channel row, a byte transpose, and one store per column
// of the channels' packed values (int8 x ^ 0x80 when |flip|, else x; or
// int16 x - x_zero_point); colsum[kh][iw'] = the columns' sum over [0, cv).
static void emit_pack_rows_vec(mlcc_emit_ctx_t* ctx, const qconv_geom_t* q, const mlcc_value_t* x,
                               LLVMValueRef xzv, bool flip, bool dot8, LLVMValueRef rows,
                               LLVMValueRef colsum, LLVMValueRef x_img, LLVMValueRef ih,
                               LLVMValueRef kh_iv, int64_t nvec, int64_t cv) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8, i16 = ctx->t_i16, i32 = ctx->t_i32;
  bool x_u8 = x->dtype == MLCC_DTYPE_U8;
  LLVMValueRef xp = mlcc_emit_ptr(ctx, x);
  LLVMTypeRef v16i32 = LLVMVectorType(i32, 16);
  LLVMValueRef sum = mlcc_emit_var(ctx, v16i32, NULL);
  mlcc_loop_t lv = mlcc_emit_for(ctx, 0, nvec, "qgvw");
  LLVMValueRef icol = imulc(ctx, lv.iv, 16);  // image column of lane 0
  LLVMValueRef x_row = iadd(ctx, iadd(ctx, x_img, imulc(ctx, ih, q->w)), icol);
  LLVMValueRef iw0 = iaddc(ctx, icol, q->pw);  // packed column of lane 0
  LLVMBuildStore(b, LLVMConstNull(v16i32), sum);
  for (int64_t c0 = 0; c0 < cv; c0 += 16) {
    int64_t cb = cv - c0 >= 16 ? 16 : cv - c0 >= 8 ? 8 : cv - c0;
    LLVMValueRef v[16];
    LLVMValueRef s = LLVMBuildLoad2(b, v16i32, sum, "");
    for (int64_t c = 0; c < 16; ++c) {
      if (c >= cb) {
        v[c] = LLVMConstNull(LLVMVectorType(i8, 16));
        continue;
      }
      v[c] = vload(ctx, i8, 16, xp, iadd(ctx, x_row, c64(ctx, (c0 + c) * q->h * q->w)), 1);
      s = LLVMBuildAdd(b, s, ext(ctx, v[c], x_u8, v16i32), "");
    }
    LLVMBuildStore(b, s, sum);
    transpose16(ctx, v);
    for (int64_t j = 0; j < 16; ++j) {
      LLVMValueRef t = lanes_of(ctx, v[j], NULL, 0, 1, (unsigned)cb);
      LLVMValueRef at = iaddc(ctx, imulc(ctx, iadd(ctx, imulc(ctx, iaddc(ctx, iw0, j), q->kh), kh_iv),
                                         q->cg), c0);
      LLVMValueRef st;
      if (dot8) {
        if (flip) t = LLVMBuildXor(b, t, splat(ctx, LLVMConstInt(i8, 0x80, 0), (unsigned)cb), "");
        st = LLVMBuildStore(b, t, gep(ctx, i8, rows, at));
        LLVMSetAlignment(st, 1);
      } else {
        LLVMTypeRef vw = LLVMVectorType(i16, (unsigned)cb);
        LLVMValueRef w16 = LLVMBuildSub(b, ext(ctx, t, x_u8, vw),
                                        splat(ctx, LLVMBuildTrunc(b, xzv, i16, ""), (unsigned)cb), "");
        st = LLVMBuildStore(b, w16, gep(ctx, i16, rows, at));
        LLVMSetAlignment(st, 2);
      }
    }
  }
  LLVMValueRef cs = LLVMBuildSub(b, LLVMBuildLoad2(b, v16i32, sum, ""),
                                 splat(ctx, LLVMBuildMul(b, xzv, LLVMConstInt(i32, (unsigned long long)cv, 0), ""), 16), "");
  LLVMValueRef st = LLVMBuildStore(b, cs, gep(ctx, i32, colsum, iadd(ctx, imulc(ctx, kh_iv, q->wp), iw0)));
  LLVMSetAlignment(st, 4);
  mlcc_emit_loop_end(ctx, &lv);
}

static void emit_pack_rows(mlcc_emit_ctx_t* ctx, const qconv_geom_t* q, const mlcc_value_t* x,
                           LLVMValueRef xzv, LLVMValueRef xz8, int64_t xshift_c, bool dot8,
                           LLVMValueRef rows,
                           LLVMValueRef colsum, LLVMValueRef pixsum, LLVMValueRef x_img,
                           LLVMValueRef oh_iv, int vec) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i32 = ctx->t_i32;
  LLVMTypeRef row_t = dot8 ? ctx->t_i8 : ctx->t_i16;
  LLVMValueRef zero32 = LLVMConstInt(i32, 0, 0);
  LLVMValueRef xshift = LLVMConstInt(i32, (unsigned long long)xshift_c, 1);
  mlcc_loop_t lkh = mlcc_emit_for(ctx, 0, q->kh, "qgkh");
  LLVMValueRef ih = iadd(ctx, imulc(ctx, oh_iv, q->sh), iaddc(ctx, imulc(ctx, lkh.iv, q->dh), -q->ph));
  LLVMValueRef ih_ok = LLVMBuildICmp(b, LLVMIntULT, ih, c64(ctx, q->h), "");
  LLVMValueRef ihc = LLVMBuildSelect(b, ih_ok, ih, c64(ctx, 0), "");
  // x86: the columns [pw, pw + 16 * nvec) of channels [0, cv) by vectors
  // (emit_pack_rows_vec); the scalar loop below does the rest.
  int64_t span = q->wp - q->pw < q->w ? q->wp - q->pw : q->w;
  int64_t nvec = vec && span > 0 ? span / 16 : 0;
  int64_t cv = vec ? q->cg / 8 * 8 : 0;
  // aarch64 int8 rows (qa_block): fewer than 8 channels (first layers) take
  // the vector transpose too, one cg-byte store per column.
  // The AMX form (|vec| 2, uint8 rows) too.
  if (vec && dot8 && cv == 0 &&
      (vec == 2 || (ctx->target != NULL && ctx->target->arch == MLCC_ARCH_AARCH64))) {
    cv = q->cg;
  }
  if (nvec == 0 || cv == 0) nvec = cv = 0;
  if (nvec > 0) {
    mlcc_if_t br = mlcc_emit_if_begin(ctx, ih_ok);
    emit_pack_rows_vec(ctx, q, x, xzv, dot8 && xshift_c != 0, dot8, rows, colsum, x_img, ih,
                       lkh.iv, nvec, cv);
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_loop_t liw = mlcc_emit_for(ctx, 0, q->wp, "qgiw");
  LLVMValueRef iw = iaddc(ctx, liw.iv, -q->pw);
  LLVMValueRef ok = LLVMBuildAnd(b, ih_ok, LLVMBuildICmp(b, LLVMIntULT, iw, c64(ctx, q->w), ""), "");
  LLVMValueRef iwc = LLVMBuildSelect(b, ok, iw, c64(ctx, 0), "");
  LLVMValueRef x_at = iadd(ctx, x_img, imad(ctx, ihc, q->w, iwc));
  LLVMValueRef r_at = imulc(ctx, imad(ctx, liw.iv, q->kh, lkh.iv), q->cg);
  LLVMValueRef cs_at = gep(ctx, i32, colsum, imad(ctx, lkh.iv, q->wp, liw.iv));
  LLVMValueRef sum = mlcc_emit_var(ctx, i32, zero32);
  LLVMValueRef cbeg = c64(ctx, 0);
  if (nvec > 0) {  // a vector column: its channels from cv on, its sum so far
    LLVMValueRef in_vec = LLVMBuildAnd(
        b, ih_ok, LLVMBuildICmp(b, LLVMIntULT, iw, c64(ctx, 16 * nvec), ""), "");
    cbeg = LLVMBuildSelect(b, in_vec, c64(ctx, cv), cbeg, "");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, in_vec);
    LLVMBuildStore(b, LLVMBuildLoad2(b, i32, cs_at, ""), sum);
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_loop_t lc = mlcc_emit_loop_begin(ctx, cbeg, c64(ctx, q->cg), 1, "qgc");
  LLVMValueRef xraw = ld_i32(ctx, x, iadd(ctx, x_at, imulc(ctx, lc.iv, q->h * q->w)));
  LLVMValueRef xv = LLVMBuildSub(b, xraw, xzv, "");
  xv = LLVMBuildSelect(b, ok, xv, zero32, "");
  LLVMValueRef packed_v = xv;
  if (dot8) {
    packed_v = LLVMBuildSelect(b, ok, LLVMBuildSub(b, xraw, xshift, ""), xz8, "");
  }
  LLVMValueRef st = LLVMBuildStore(b, LLVMBuildTrunc(b, packed_v, row_t, ""),
                                   gep(ctx, row_t, rows, iadd(ctx, r_at, lc.iv)));
  LLVMSetAlignment(st, dot8 ? 1 : 2);
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, sum, ""), xv, ""), sum);
  mlcc_emit_loop_end(ctx, &lc);
  LLVMBuildStore(b, LLVMBuildLoad2(b, i32, sum, ""), cs_at);
  mlcc_emit_loop_end(ctx, &liw);
  mlcc_emit_loop_end(ctx, &lkh);
  // Window sums per output pixel (for the weight zero point).
  {
    mlcc_loop_t lo = mlcc_emit_for(ctx, 0, q->ow, "qgps");
    LLVMValueRef s2 = zero32;
    for (int64_t a = 0; a < q->kh; ++a) {
      for (int64_t c = 0; c < q->kw; ++c) {
        LLVMValueRef at = iaddc(ctx, imulc(ctx, lo.iv, q->sw), a * q->wp + c * q->dw);
        s2 = LLVMBuildAdd(b, s2, LLVMBuildLoad2(b, i32, gep(ctx, i32, colsum, at), ""), "");
      }
    }
    LLVMBuildStore(b, s2, gep(ctx, i32, pixsum, lo.iv));
    mlcc_emit_loop_end(ctx, &lo);
  }
}

void mlcc_qgemm_emit_pack_rows(mlcc_emit_ctx_t* ctx, const qconv_geom_t* q,
                               const mlcc_value_t* x, LLVMValueRef xzv, LLVMValueRef rows,
                               LLVMValueRef colsum, LLVMValueRef pixsum, LLVMValueRef x_img,
                               LLVMValueRef oh_iv) {
  emit_pack_rows(ctx, q, x, xzv, xzv, 0, false, rows, colsum, pixsum, x_img, oh_iv, false);
}

//===----------------------------------------------------------------------===//
// Blocked x86 kernel (MLCC_QBLOCK_ATTR, pack.h): register tiles of QB_NB
// output channels x QB_NP output pixels, an outer product per pair of k.
//===----------------------------------------------------------------------===//

// QB_L int32 lanes per vector (AVX2 ymm), QB_NV vectors of output channels,
// QB_NP pixels: 12 accumulators + 2 weight vectors + 1 broadcast = 15 of the
// 16 ymm registers.
enum { QB_L = 8, QB_NV = 2, QB_NB = QB_L * QB_NV, QB_NP = 6 };
// With AVX-512 (32 vector registers; the VNNI form) a conv tile takes up to
// QB_NP_MAX pixels: 2 * 12 accumulators + 2 + 1 = 27 registers (qb_conv_np).
enum { QB_NP_MAX = 12 };

static int64_t qblock_of(const mlcc_node_t* node) {
  const mlcc_attr_t* a = mlcc_node_attr(node, MLCC_QBLOCK_ATTR);
  return a != NULL && a->kind == MLCC_ATTR_INT && a->i == QB_NB ? a->i : 0;
}

// k per weight group of |node|'s blocked layout: MLCC_QBLOCK_K_ATTR's 4
// (vpdpbusd / sdot quads) or 8 (aarch64 usmmla octets), else 2 (vpmaddwd
// pairs).
static int qblock_kg(const mlcc_node_t* node) {
  const mlcc_attr_t* a = mlcc_node_attr(node, MLCC_QBLOCK_K_ATTR);
  if (a == NULL || a->kind != MLCC_ATTR_INT) return 2;
  return a->i == 4 || a->i == 8 ? (int)a->i : 2;
}

// True if the x86 |target| has AVX-512 VNNI with 256-bit forms (vpdpbusd on
// ymm): "+avx512vnni" and "+avx512vl" in its features (the last mention
// wins; -mcpu=native lists them), else a CPU that has both.
static bool x86_vnni(const mlcc_target_t* t) {
  int vnni = -1, vl = -1;
  for (const char* p = t->features; p != NULL && *p;) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 11 && strncmp(p + 1, "avx512vnni", 10) == 0) vnni = p[0] == '+';
    if (len == 9 && strncmp(p + 1, "avx512vl", 8) == 0) vl = p[0] == '+';
    p = comma ? comma + 1 : NULL;
  }
  static const char* const cpus[] = {
      "cascadelake", "cooperlake", "icelake-client", "icelake-server", "tigerlake",
      "sapphirerapids", "rocketlake", "znver4", "graniterapids", "emeraldrapids"};
  bool cpu = false;
  for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); ++i) cpu |= strcmp(t->cpu, cpus[i]) == 0;
  return (vnni < 0 ? cpu : vnni == 1) && (vl < 0 ? cpu : vl == 1);
}

// True if the x86 |target| has AVX-512 VBMI (vpermb): "+avx512vbmi" in its
// features (the last mention wins), else a CPU that has it.
static bool x86_vbmi(const mlcc_target_t* t) {
  int on = -1;
  for (const char* p = t->features; p != NULL && *p;) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 11 && strncmp(p + 1, "avx512vbmi", 10) == 0) on = p[0] == '+';
    p = comma ? comma + 1 : NULL;
  }
  if (on >= 0) return on == 1;
  static const char* const cpus[] = {
      "cannonlake", "icelake-client", "icelake-server", "tigerlake", "sapphirerapids",
      "rocketlake", "znver4", "graniterapids", "emeraldrapids"};
  for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); ++i) {
    if (strcmp(t->cpu, cpus[i]) == 0) return true;
  }
  return false;
}

// The k group of the blocked kernel for weights of dtype |wdt| on aarch64
// |target| (qa_block), or 0 when it does not take them: int8 weights, 8
// (usmmla octets) with +i8mm, else 4 (sdot quads) with +dotprod. uint8
// weights and CPUs with neither keep the row kernel.
static int arm_block_kg(const mlcc_target_t* target, mlcc_dtype_t wdt) {
  if (target == NULL || target->arch != MLCC_ARCH_AARCH64 || wdt != MLCC_DTYPE_I8) return 0;
  return arm_i8mm(target) ? 8 : arm_dotprod(target) ? 4 : 0;
}

int64_t mlcc_qgemm_conv_block(const mlcc_node_t* node, const mlcc_target_t* target,
                              int64_t* out_segments, int64_t* out_kg) {
  qconv_geom_t q;
  if (node == NULL || target == NULL || !plan(node, &q)) return 0;
  const mlcc_value_t* wv = mlcc_node_input(node, node->op == MLCC_OP_QLINEAR_CONV ? 3 : 1);
  int akg = arm_block_kg(target, wv->dtype);
  if (akg != 0) {  // aarch64: sdot quads or usmmla octets
    if (out_segments != NULL) *out_segments = q.n_seg;
    if (out_kg != NULL) *out_kg = akg;
    return QB_NB;
  }
  if (target->arch != MLCC_ARCH_X86_64 || !x86_has(target, "avx2")) return 0;
  if (out_segments != NULL) *out_segments = q.n_seg;
  // vpdpbusd multiplies uint8 by int8: int8 weights only.
  const mlcc_value_t* w = mlcc_node_input(node, node->op == MLCC_OP_QLINEAR_CONV ? 3 : 1);
  if (out_kg != NULL) *out_kg = x86_vnni(target) && w->dtype == MLCC_DTYPE_I8 ? 4 : 2;
  return QB_NB;
}

void mlcc_qgemm_pack_conv_blocked(const uint8_t* src, int64_t m, int64_t group, int64_t cg,
                                  int64_t kh, int64_t kw, int64_t segments, int64_t nb,
                                  int64_t kg, uint8_t* dst) {
  int64_t mg = m / group, k_len = cg * kh * kw, seg = k_len / segments;
  for (int64_t o = 0; o < m; ++o) {
    int64_t g = o / mg, mo = o % mg, mb = mo / nb * nb;
    int64_t bs = mg - mb < nb ? mg - mb : nb, ci = mo - mb;
    int64_t base = (g * mg + mb) * k_len;
    for (int64_t e = 0; e < kw; ++e) {
      for (int64_t a = 0; a < kh; ++a) {
        for (int64_t c = 0; c < cg; ++c) {
          int64_t k = (e * kh + a) * cg + c;  // window order [KW][KH][C/group]
          int64_t s = k / seg, t = k % seg;
          int64_t at = base + s * seg * bs;
          int64_t full = seg / kg * kg;  // k in whole groups; the rest: [seg % kg][bs]
          at += t < full ? (t / kg) * kg * bs + ci * kg + t % kg : full * bs + (t - full) * bs + ci;
          dst[at] = src[((o * cg + c) * kh + a) * kw + e];
        }
      }
    }
  }
}

// acc + pmaddwd(a, b) on <16 x i16> |a|, |b| (<8 x i32> |acc|): adjacent
// products added in pairs, exact (both below 2^9 in magnitude). AVX2's
// vpmaddwd, else the same sums spelled out (correct on any target).
static LLVMValueRef qb_madd(mlcc_emit_ctx_t* ctx, bool avx2, LLVMValueRef acc, LLVMValueRef a,
                            LLVMValueRef b) {
  LLVMValueRef p;
  if (avx2) {
    LLVMValueRef args[2] = {a, b};
    p = mlcc_emit_intrinsic(ctx, "llvm.x86.avx2.pmadd.wd", args, 2);
  } else {
    LLVMTypeRef wide = LLVMVectorType(ctx->t_i32, 2 * QB_L);
    LLVMValueRef pr = LLVMBuildMul(ctx->b, LLVMBuildSExt(ctx->b, a, wide, ""),
                                   LLVMBuildSExt(ctx->b, b, wide, ""), "");
    p = LLVMBuildAdd(ctx->b, lanes_of(ctx, pr, NULL, 0, 2, QB_L),
                     lanes_of(ctx, pr, NULL, 1, 2, QB_L), "");
  }
  return LLVMBuildAdd(ctx->b, acc, p, "");
}

// |n| (<= |to|) lanes of |v| followed by zeros: a vector of |to| lanes.
static LLVMValueRef qb_pad(mlcc_emit_ctx_t* ctx, LLVMValueRef v, unsigned n, unsigned to) {
  if (n == to) return v;
  LLVMValueRef idx[64];
  for (unsigned i = 0; i < to; ++i) idx[i] = LLVMConstInt(ctx->t_i32, i < n ? i : n, 0);
  return LLVMBuildShuffleVector(ctx->b, v, LLVMConstNull(LLVMTypeOf(v)), LLVMConstVector(idx, to),
                                "");
}

// acc + vpdpbusd(a, b): per int32 lane the four products of the uint8 bytes
// of |a| and the int8 bytes of |b| (<8 x i32> each), exact and wrapping
// (the non-saturating form).
static LLVMValueRef qb_dpbusd(mlcc_emit_ctx_t* ctx, LLVMValueRef acc, LLVMValueRef a,
                              LLVMValueRef b) {
  LLVMValueRef args[3] = {acc, a, b};
  return mlcc_emit_intrinsic(ctx, "llvm.x86.avx512.vpdpbusd.256", args, 3);
}

// Pixels per conv tile for an output row of |ow| pixels: QB_NP, or with
// |wide| (AVX-512's 32 registers) the count in [QB_NP, QB_NP_MAX] that
// wastes the fewest pixel slots in the row's last tile (ties: the larger;
// OW 7 and 14 take 7, OW 56 and 112 take 8).
static int qb_conv_np(int64_t ow, bool wide) {
  int best = QB_NP;
  int64_t best_slots = (ow + QB_NP - 1) / QB_NP * QB_NP;
  for (int np = QB_NP + 1; wide && np <= QB_NP_MAX; ++np) {
    int64_t slots = (ow + np - 1) / np * np;
    if (slots <= best_slots) {
      best = np;
      best_slots = slots;
    }
  }
  return best;
}

// What the blocks of one unit share (emit_blocked, emit_blocked_matmul): a
// unit is one output row of a convolution (pixels = its OW outputs) or a run
// of rows of a matmul (pixels = rows of A, channels = columns of B).
typedef struct qb_unit_t {
  const mlcc_node_t* node;
  bool qlinear, w_u8, avx2;
  bool arm;                            // aarch64 (kg 4: sdot, 8: usmmla): qa_block
  int kg;                              // k per weight group: 2 (vpmaddwd) or 4 (vpdpbusd)
  LLVMValueRef xz8;                    // kg 4: x_zero_point of the uint8 rows
  const mlcc_value_t *wz, *ws, *bias;  // per-channel or per-tensor; may be NULL
  LLVMValueRef wp, rows, pixsum;       // weights; packed int16 rows; pixel sums
  LLVMValueRef ch0;                    // first output channel of the unit's group
  int64_t k;                           // weight bytes per output channel
  LLVMValueRef npix;                   // pixels of the unit (i64)
  int64_t pix_stride;                  // int16 values between pixel windows
  int64_t n_seg, seg_len, seg_stride;  // window segments, their length and stride
  LLVMValueRef y_base;                 // output element of pixel 0, channel 0
  int64_t y_ch, y_pix;                 // output strides of a channel and a pixel
  LLVMValueRef xsv, ysv, yzf, qlo, qhi;
  int np;                          // pixels per tile: QB_NP, or qb_conv_np's
  LLVMValueRef acc[QB_NV][QB_NP_MAX];  // <QB_L x i32> variables
  LLVMValueRef wsum[QB_NV];        // kg 4: per-lane sum of the weights (<QB_L x i32>)
  // The AMX form (amx_block; kg 4 on x86 with AMX-TILE and AMX-INT8): |amx|
  // when emitted, |amx_ok| the run-time i1 (the kernel's permission request
  // succeeded), |npix_c| the unit's pixel count as a constant, |cfg| the
  // 64-byte tile configuration, |cbuf| one stored C tile (16 x 16 int32),
  // |btail| per segment one zero-padded B tile of the window's last k.
  bool amx;
  int64_t npix_c;
  LLVMValueRef amx_ok, cfg, cbuf, btail;
} qb_unit_t;

// The per-lane channel parameters of a block of output channels from |m0|:
// |nv| vectors of |lanes| lanes, |cnt|[v] real channels in vector v; the
// weight zero points and int32 biases (<lanes x i32>) and, for QLinearConv,
// the requantization multipliers x_scale * w_scale / y_scale (<lanes x
// float>). Padding lanes hold 0; their results are dropped.
static void qblock_lane_params(mlcc_emit_ctx_t* ctx, const qb_unit_t* r, LLVMValueRef m0,
                               unsigned lanes, int nv, const unsigned* cnt, LLVMValueRef* wzv,
                               LLVMValueRef* biasv, LLVMValueRef* multv) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i32 = ctx->t_i32;
  LLVMTypeRef vi = LLVMVectorType(i32, lanes), vf = LLVMVectorType(ctx->t_f32, lanes);
  const mlcc_value_t *wz = r->wz, *ws = r->ws, *bias = r->bias;
  bool wz_pc = numel_or(wz, 1) != 1, ws_pc = numel_or(ws, 1) != 1;
  for (int v = 0; v < nv; ++v) {
    wzv[v] = LLVMConstNull(vi);
    biasv[v] = LLVMConstNull(vi);
    multv[v] = LLVMConstNull(vf);
    for (unsigned c = 0; c < cnt[v]; ++c) {
      LLVMValueRef m = iaddc(ctx, m0, (int64_t)(v * lanes + c));
      LLVMValueRef li = LLVMConstInt(i32, c, 0);
      wzv[v] = LLVMBuildInsertElement(b, wzv[v], ld_i32(ctx, wz, wz_pc ? m : c64(ctx, 0)), li, "");
      if (bias != NULL) biasv[v] = LLVMBuildInsertElement(b, biasv[v], ld_i32(ctx, bias, m), li, "");
      if (r->qlinear) {
        LLVMValueRef wsm = ld_f32(ctx, ws, ws_pc ? m : c64(ctx, 0), 1.f);
        LLVMValueRef mult = LLVMBuildFDiv(b, LLVMBuildFMul(b, r->xsv, wsm, ""), r->ysv, "mult");
        multv[v] = LLVMBuildInsertElement(b, multv[v], mult, li, "");
      }
    }
  }
}

// The per-lane weight sums of the block of |bs| channels at weight byte
// |wblk| (kg 4, for the x zero point): r->wsum[v] = sum_k w over the quads
// (vpdpbusd with 1 1 1 1) plus the remaining k of each segment.
static void qb_wsum(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef wblk, int64_t bs, int nv,
                    const unsigned* cnt) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8, i32 = ctx->t_i32;
  LLVMTypeRef vi = LLVMVectorType(i32, QB_L);
  int64_t nq = r->seg_len / 4, rest = r->seg_len % 4;
  LLVMValueRef ones = splat(ctx, LLVMConstInt(i32, 0x01010101u, 0), QB_L);
  for (int v = 0; v < nv; ++v) LLVMBuildStore(b, LLVMConstNull(vi), r->wsum[v]);
  mlcc_loop_t ls = mlcc_emit_for(ctx, 0, r->n_seg * nq, "qbws");
  LLVMValueRef wat = iadd(ctx, wblk, imulc(ctx, ls.iv, 4 * bs));
  if (rest > 0) {  // skip the rest rows of the segments before
    LLVMValueRef seg = LLVMBuildUDiv(b, ls.iv, c64(ctx, nq), "");
    wat = iadd(ctx, wat, imulc(ctx, seg, rest * bs));
  }
  for (int v = 0; v < nv; ++v) {
    LLVMValueRef l = vload(ctx, i8, 4 * cnt[v], r->wp, iaddc(ctx, wat, 4 * v * QB_L), 1);
    LLVMValueRef wq = LLVMBuildBitCast(b, qb_pad(ctx, l, 4 * cnt[v], 4 * QB_L), vi, "");
    LLVMValueRef ws0 = LLVMBuildLoad2(b, vi, r->wsum[v], "");
    LLVMBuildStore(b, qb_dpbusd(ctx, ws0, ones, wq), r->wsum[v]);
  }
  mlcc_emit_loop_end(ctx, &ls);
  for (int64_t sg = 0; sg < r->n_seg; ++sg) {
    for (int64_t t = 0; t < rest; ++t) {
      LLVMValueRef wat2 = iaddc(ctx, wblk, sg * r->seg_len * bs + (nq * 4 + t) * bs);
      for (int v = 0; v < nv; ++v) {
        LLVMValueRef l = vload(ctx, i8, cnt[v], r->wp, iaddc(ctx, wat2, v * QB_L), 1);
        LLVMValueRef wt = LLVMBuildSExt(b, qb_pad(ctx, l, cnt[v], QB_L), vi, "");
        LLVMValueRef ws0 = LLVMBuildLoad2(b, vi, r->wsum[v], "");
        LLVMBuildStore(b, LLVMBuildAdd(b, ws0, wt, ""), r->wsum[v]);
      }
    }
  }
}

// The epilogue of a tile of |NP| pixels from |lj| (pixel j's sums at pix[j],
// clamped to the last pixel) of the block of channels from |m0|: from the
// accumulators r->acc[v][j] (qb_block's register tile, or an AMX tile's rows).
static mlcc_status_t qb_epilogue(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef lj, int NP,
                                 const LLVMValueRef* pix, LLVMValueRef m0, int nv,
                                 const unsigned* cnt, const LLVMValueRef* wzv,
                                 const LLVMValueRef* biasv, const LLVMValueRef* multv) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8, i32 = ctx->t_i32, f32 = ctx->t_f32;
  LLVMTypeRef vi = LLVMVectorType(i32, QB_L), vf = LLVMVectorType(f32, QB_L);
  //--- Epilogue per pixel: zero-point correction, bias, requantization
  // (qgemm.h) on the channel lanes, then the stores of the valid outputs:
  // for 8 adjacent channels one vector store (matmul) or, when the tile's
  // pixels are all valid and channels are strided (conv), a byte transpose
  // of the tile and one np-byte store per channel; else one per lane.
  mlcc_status_t status = mlcc_ok_status();
  const mlcc_kernel_t* kern = ctx->kernel;
  bool fused = kern != NULL && kern->n_nodes > 1 && kern->nodes[0] == r->node;
  LLVMValueRef outs[QB_NP_MAX][QB_NV];
  for (int j = 0; j < NP; ++j) {
    LLVMValueRef psv = splat(ctx, LLVMBuildLoad2(b, i32, gep(ctx, i32, r->pixsum, pix[j]), ""),
                             QB_L);
    for (int v = 0; v < nv; ++v) {
      LLVMValueRef a = LLVMBuildLoad2(b, vi, r->acc[v][j], "");
      a = LLVMBuildSub(b, a, LLVMBuildMul(b, wzv[v], psv, ""), "");
      if (r->kg == 4) {  // - x_zero_point' * sum_k w
        LLVMValueRef wsv = LLVMBuildLoad2(b, vi, r->wsum[v], "");
        a = LLVMBuildSub(b, a, LLVMBuildMul(b, splat(ctx, r->xz8, QB_L), wsv, ""), "");
      }
      a = LLVMBuildAdd(b, a, biasv[v], "");
      outs[j][v] = a;
      if (r->qlinear) {
        LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, a, vf, ""), multv[v], "");
        f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
        f = LLVMBuildFAdd(b, f, splat(ctx, r->yzf, QB_L), "");
        f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, splat(ctx, r->qlo, QB_L));
        f = mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, splat(ctx, r->qhi, QB_L));
        outs[j][v] = LLVMBuildTrunc(b, LLVMBuildFPToSI(b, f, vi, ""), LLVMVectorType(i8, QB_L), "");
      }
    }
  }
  LLVMValueRef y_blk = iadd(ctx, r->y_base, imulc(ctx, m0, r->y_ch));
  bool transpose = r->qlinear && !fused && r->y_ch != 1 && r->y_pix == 1;
  for (int v = 0; v < nv; ++v) transpose = transpose && cnt[v] == QB_L;
  mlcc_if_t tbr;
  if (transpose) {
    LLVMValueRef all = LLVMBuildICmp(b, LLVMIntSLE, iaddc(ctx, lj, NP), r->npix, "");
    tbr = mlcc_emit_if_begin(ctx, all);
    for (int v = 0; v < nv; ++v) {
      // Concatenate the pixels' <QB_L x i8> (pixel-major), then one shuffle
      // to channel-major: lane c * NP + j = pixel j, channel c.
      LLVMValueRef cat[QB_NP_MAX + 1];
      unsigned n = (unsigned)NP, w = QB_L;
      for (int j = 0; j < NP; ++j) cat[j] = outs[j][v];
      while (n > 1) {
        if (n % 2 != 0) cat[n++] = LLVMConstNull(LLVMTypeOf(cat[0]));
        for (unsigned k = 0; k < n / 2; ++k) {
          cat[k] = lanes_of(ctx, cat[2 * k], cat[2 * k + 1], 0, 1, 2 * w);
        }
        n /= 2;
        w *= 2;
      }
      LLVMValueRef idx[QB_L * QB_NP_MAX];
      for (unsigned c = 0; c < QB_L; ++c) {
        for (unsigned j = 0; j < (unsigned)NP; ++j) idx[c * NP + j] = LLVMConstInt(i32, j * QB_L + c, 0);
      }
      LLVMValueRef t = LLVMBuildShuffleVector(b, cat[0], LLVMGetUndef(LLVMTypeOf(cat[0])),
                                              LLVMConstVector(idx, QB_L * (unsigned)NP), "");
      for (unsigned c = 0; c < QB_L; ++c) {
        LLVMValueRef row = lanes_of(ctx, t, NULL, c * (unsigned)NP, 1, (unsigned)NP);
        LLVMValueRef at = iadd(ctx, iaddc(ctx, y_blk, (v * QB_L + c) * r->y_ch), lj);
        dwp_store(ctx, mlcc_node_output(r->node, 0), at, row, NULL);
      }
    }
    mlcc_emit_if_else(ctx, &tbr);
  }
  for (int j = 0; j < NP && status == NULL; ++j) {
    LLVMValueRef o = iaddc(ctx, lj, j);
    mlcc_if_t br;
    if (j > 0) br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(b, LLVMIntSLT, o, r->npix, ""));
    LLVMValueRef y_at = iadd(ctx, y_blk, imulc(ctx, o, r->y_pix));
    for (int v = 0; v < nv && status == NULL; ++v) {
      if (r->y_ch == 1 && cnt[v] == QB_L) {
        LLVMValueRef at = iaddc(ctx, y_at, v * QB_L);
        if (fused) {
          status = mlcc_emit_store_output_vec(ctx, r->node, 0, at, outs[j][v]);
        } else {
          dwp_store(ctx, mlcc_node_output(r->node, 0), at, outs[j][v], NULL);
        }
        continue;
      }
      for (unsigned c = 0; c < cnt[v] && status == NULL; ++c) {
        LLVMValueRef e = LLVMBuildExtractElement(b, outs[j][v], LLVMConstInt(i32, c, 0), "");
        status = mlcc_emit_store_output(ctx, r->node, 0,
                                        iaddc(ctx, y_at, (v * QB_L + c) * r->y_ch), e);
      }
    }
    if (j > 0) mlcc_emit_if_end(ctx, &br);
  }
  if (transpose) mlcc_emit_if_end(ctx, &tbr);
  return status;
}

// One block of |bs| (1..QB_NB, a constant) output channels starting at
// channel |mb| of the group, all pixels of the unit.
static mlcc_status_t qb_block(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef mb, int64_t bs) {
  LLVMBuilderRef b = ctx->b;
  const int NP = r->np;
  LLVMTypeRef i8 = ctx->t_i8, i16 = ctx->t_i16, i32 = ctx->t_i32;
  LLVMTypeRef vi = LLVMVectorType(i32, QB_L);
  LLVMTypeRef vw = LLVMVectorType(i16, 2 * QB_L);
  int nv = (int)((bs + QB_L - 1) / QB_L);
  unsigned cnt[QB_NV];
  for (int v = 0; v < nv; ++v) cnt[v] = (unsigned)(bs - v * QB_L < QB_L ? bs - v * QB_L : QB_L);
  LLVMValueRef m0 = iadd(ctx, r->ch0, mb);  // first channel
  LLVMValueRef wzv[QB_NV], biasv[QB_NV], multv[QB_NV];
  qblock_lane_params(ctx, r, m0, QB_L, nv, cnt, wzv, biasv, multv);
  LLVMValueRef wblk = imulc(ctx, m0, r->k);  // the block's weights (bs * k bytes)
  int64_t npair = r->seg_len / 2;
  if (r->kg == 4) qb_wsum(ctx, r, wblk, bs, nv, cnt);
  mlcc_loop_t lj = mlcc_emit_loop_begin(ctx, c64(ctx, 0), r->npix, NP, "qbj");
  for (int v = 0; v < nv; ++v) {
    for (int j = 0; j < NP; ++j) LLVMBuildStore(b, LLVMConstNull(vi), r->acc[v][j]);
  }
  // Pixel lj + j reads its window at rows[(lj + j) * pix_stride]; past the
  // last pixel (the last tile) it reads the last pixel's, and its results
  // are dropped.
  LLVMValueRef last = iaddc(ctx, r->npix, -1);
  LLVMValueRef pix[QB_NP_MAX], pbase[QB_NP_MAX];
  for (int j = 0; j < NP; ++j) {
    pix[j] = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, lj.iv, j), last);
    pbase[j] = imulc(ctx, pix[j], r->pix_stride);
  }
  mlcc_loop_t lsg = mlcc_emit_for(ctx, 0, r->n_seg, "qbs");
  LLVMValueRef xseg[QB_NP_MAX];
  for (int j = 0; j < NP; ++j) xseg[j] = iadd(ctx, pbase[j], imulc(ctx, lsg.iv, r->seg_stride));
  LLVMValueRef wseg = iadd(ctx, wblk, imulc(ctx, lsg.iv, r->seg_len * bs));
  if (r->kg == 4) {
    // Quads: bytes x' (uint8) times int8 w, vpdpbusd.
    int64_t nq = r->seg_len / 4, rest = r->seg_len % 4;
    if (nq > 0) {
      mlcc_loop_t lq = mlcc_emit_for(ctx, 0, nq, "qbq");
      LLVMValueRef wv[QB_NV];
      LLVMValueRef wat = iadd(ctx, wseg, imulc(ctx, lq.iv, 4 * bs));
      for (int v = 0; v < nv; ++v) {
        LLVMValueRef l = vload(ctx, i8, 4 * cnt[v], r->wp, iaddc(ctx, wat, 4 * v * QB_L), 1);
        wv[v] = LLVMBuildBitCast(b, qb_pad(ctx, l, 4 * cnt[v], 4 * QB_L), vi, "");
      }
      for (int j = 0; j < NP; ++j) {
        // The quad x'[k..k+3] as one i32, broadcast (vpbroadcastd).
        LLVMValueRef at = gep(ctx, i8, r->rows, iadd(ctx, xseg[j], imulc(ctx, lq.iv, 4)));
        LLVMValueRef qd = LLVMBuildLoad2(b, i32, at, "");
        LLVMSetAlignment(qd, 1);
        LLVMValueRef xb = splat(ctx, qd, QB_L);
        for (int v = 0; v < nv; ++v) {
          LLVMValueRef a = LLVMBuildLoad2(b, vi, r->acc[v][j], "");
          LLVMBuildStore(b, qb_dpbusd(ctx, a, xb, wv[v]), r->acc[v][j]);
        }
      }
      mlcc_emit_loop_end(ctx, &lq);
      no_unroll(ctx, &lq);
    }
    for (int64_t t = 0; t < rest; ++t) {  // the segment's last k: bs bytes each
      LLVMValueRef wt[QB_NV];
      LLVMValueRef wat = iaddc(ctx, wseg, (nq * 4 + t) * bs);
      for (int v = 0; v < nv; ++v) {
        LLVMValueRef l = vload(ctx, i8, cnt[v], r->wp, iaddc(ctx, wat, v * QB_L), 1);
        wt[v] = LLVMBuildSExt(b, qb_pad(ctx, l, cnt[v], QB_L), vi, "");
      }
      for (int j = 0; j < NP; ++j) {
        LLVMValueRef at = gep(ctx, i8, r->rows, iaddc(ctx, xseg[j], nq * 4 + t));
        LLVMValueRef x1 = LLVMBuildZExt(b, LLVMBuildLoad2(b, i8, at, ""), i32, "");
        LLVMValueRef xs = splat(ctx, x1, QB_L);
        for (int v = 0; v < nv; ++v) {
          LLVMValueRef a = LLVMBuildLoad2(b, vi, r->acc[v][j], "");
          LLVMBuildStore(b, LLVMBuildAdd(b, a, LLVMBuildMul(b, xs, wt[v], ""), ""),
                         r->acc[v][j]);
        }
      }
    }
  } else {
    if (npair > 0) {
      mlcc_loop_t lp = mlcc_emit_for(ctx, 0, npair, "qbk");
      LLVMValueRef wv[QB_NV];
      LLVMValueRef wat = iadd(ctx, wseg, imulc(ctx, lp.iv, 2 * bs));
      for (int v = 0; v < nv; ++v) {
        LLVMValueRef l = vload(ctx, i8, 2 * cnt[v], r->wp, iaddc(ctx, wat, 2 * v * QB_L), 1);
        wv[v] = ext(ctx, qb_pad(ctx, l, 2 * cnt[v], 2 * QB_L), r->w_u8, vw);
      }
      for (int j = 0; j < NP; ++j) {
        // The pair (x[k], x[k + 1]) as one i32, broadcast (vpbroadcastd).
        LLVMValueRef at = gep(ctx, i16, r->rows, iadd(ctx, xseg[j], imulc(ctx, lp.iv, 2)));
        LLVMValueRef pr = LLVMBuildLoad2(b, i32, at, "");
        LLVMSetAlignment(pr, 2);
        LLVMValueRef xb = LLVMBuildBitCast(b, splat(ctx, pr, QB_L), vw, "");
        for (int v = 0; v < nv; ++v) {
          LLVMValueRef a = LLVMBuildLoad2(b, vi, r->acc[v][j], "");
          LLVMBuildStore(b, qb_madd(ctx, r->avx2, a, xb, wv[v]), r->acc[v][j]);
        }
      }
      mlcc_emit_loop_end(ctx, &lp);
      no_unroll(ctx, &lp);
    }
    if (r->seg_len % 2 != 0) {  // the segment's last k: bs single bytes
      LLVMValueRef wt[QB_NV];
      LLVMValueRef wat = iaddc(ctx, wseg, npair * 2 * bs);
      for (int v = 0; v < nv; ++v) {
        LLVMValueRef l = vload(ctx, i8, cnt[v], r->wp, iaddc(ctx, wat, v * QB_L), 1);
        wt[v] = ext(ctx, qb_pad(ctx, l, cnt[v], QB_L), r->w_u8, vi);
      }
      for (int j = 0; j < NP; ++j) {
        LLVMValueRef at = gep(ctx, i16, r->rows, iaddc(ctx, xseg[j], r->seg_len - 1));
        LLVMValueRef x1 = LLVMBuildSExt(b, LLVMBuildLoad2(b, i16, at, ""), i32, "");
        LLVMValueRef xs = splat(ctx, x1, QB_L);
        for (int v = 0; v < nv; ++v) {
          LLVMValueRef a = LLVMBuildLoad2(b, vi, r->acc[v][j], "");
          LLVMBuildStore(b, LLVMBuildAdd(b, a, LLVMBuildMul(b, xs, wt[v], ""), ""), r->acc[v][j]);
        }
      }
    }
  }
  mlcc_emit_loop_end(ctx, &lsg);

  mlcc_status_t status = qb_epilogue(ctx, r, lj.iv, NP, pix, m0, nv, cnt, wzv, biasv, multv);
  mlcc_emit_loop_end(ctx, &lj);
  return status;
}

//===----------------------------------------------------------------------===//
// Blocked aarch64 kernels: with the dot-product extension (sdot) the weight
// layout of the VNNI form (MLCC_QBLOCK_ATTR = QB_NB with MLCC_QBLOCK_K_ATTR =
// 4: per segment [L/4][bs][4] int8 quads, then [L % 4][bs]); with the int8
// matrix multiply (+i8mm, usmmla) octets (MLCC_QBLOCK_K_ATTR = 8: [L/8][bs][8],
// then [L % 8][bs]). Register tiles of QB_NB output channels x QA_NP pixels:
// 16 accumulators (sdot: QA_NV vectors of QA_L int32 lanes per pixel;
// usmmla: 8 channel pairs x 2 pixel pairs, a 2 x 2 matrix each), the weight
// and pixel vectors, of the 32 NEON registers.
//===----------------------------------------------------------------------===//

enum { QA_L = 4, QA_NV = QB_NB / QA_L, QA_NP = 4 };

// acc + sdot(w, x lane |t|): per int32 lane of |acc| (<4 x i32>) the four
// products of the int8 quad of |w| (<16 x i8>: 4 channels x 4 k) in that
// lane with quad |t| of |x16| (<4 x i32>: 4 quads of one pixel), exact. The
// splat of one 32-bit lane selects sdot's indexed form (sdot v.4s, w.16b,
// x.4b[t]).
static LLVMValueRef qa_sdot_lane(mlcc_emit_ctx_t* ctx, LLVMValueRef acc, LLVMValueRef w,
                                 LLVMValueRef x16, unsigned t) {
  LLVMValueRef xs = lanes_of(ctx, x16, NULL, t, 0, QA_L);
  LLVMValueRef xb = LLVMBuildBitCast(ctx->b, xs, LLVMVectorType(ctx->t_i8, 16), "");
  return sdot(ctx, acc, w, xb);
}

// One block of |bs| (1..QB_NB, a constant) output channels starting at
// channel |mb| of the group, all pixels of the unit |r| (r->arm).
// sdot (kg 4): the packed rows hold int8 x' = x - 128 (uint8 x) or x (int8
// x); for each run of 4 quads of a segment, one 16-byte load of each
// pixel's x' and 16 weight vectors (4 quads x 4 channel vectors), indexed
// sdot; the segment's last 1..3 quads take a broadcast 32-bit quad.
// usmmla (kg 8): uint8 x' = x (uint8 x) or x + 128 (int8 x); per octet of
// k, one 16-byte operand of 2 pixels x 8 bytes (two 8-byte loads) times 8
// channel-pair vectors of 2 x 8 int8 weights. The segment's last k (1..3,
// or 1..7) are a multiply-add of the broadcast byte. With r->xz8 the zero
// point shifted like x',
//   sum (x - x_zp)(w - w_zp) = sum x'w - x_zp' * sum w - w_zp * sum (x - x_zp)
// in int32, wrapping: bit-identical to the int16 form and the reference.
static mlcc_status_t qa_block(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef mb, int64_t bs) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8, i32 = ctx->t_i32, f32 = ctx->t_f32;
  LLVMTypeRef vi = LLVMVectorType(i32, QA_L), vf = LLVMVectorType(f32, QA_L);
  LLVMTypeRef v16 = LLVMVectorType(i8, 16);
  int nv = (int)((bs + QA_L - 1) / QA_L);
  unsigned cnt[QA_NV];
  for (int v = 0; v < nv; ++v) cnt[v] = (unsigned)(bs - v * QA_L < QA_L ? bs - v * QA_L : QA_L);
  LLVMValueRef m0 = iadd(ctx, r->ch0, mb);
  LLVMValueRef wzv[QA_NV], biasv[QA_NV], multv[QA_NV];
  qblock_lane_params(ctx, r, m0, QA_L, nv, cnt, wzv, biasv, multv);
  LLVMValueRef wblk = imulc(ctx, m0, r->k);  // the block's weights (bs * k bytes)
  // kg 4: quads (sdot); kg 8: octets (usmmla), k groups of a segment |nq|.
  const bool mm = r->kg == 8;
  const int G = mm ? 8 : 4;
  int64_t nq = r->seg_len / G, rest = r->seg_len % G, n16 = mm ? 0 : nq / 4;
  int ncp = (int)((bs + 1) / 2);  // usmmla: channel pairs
  unsigned cpc[QB_NB / 2];        // channels of each pair (1 or 2)
  for (int p = 0; p < ncp; ++p) cpc[p] = (unsigned)(bs - 2 * p < 2 ? bs - 2 * p : 2);
  // Weight vector |v| of the quad at byte |wat| of the layout (4 * cnt[v]
  // bytes, zero-padded to 16), and the bytes of a remaining k, sign-extended.
  #define QA_WQ(WAT, V)                                                                   \
    qb_pad(ctx, vload(ctx, i8, 4 * cnt[V], r->wp, iaddc(ctx, (WAT), 4 * (V) * QA_L), 1), \
           4 * cnt[V], 16)
  #define QA_W1(WAT, V)                                                                   \
    LLVMBuildSExt(b, qb_pad(ctx, vload(ctx, i8, cnt[V], r->wp, iaddc(ctx, (WAT), (V) * QA_L), 1), \
                            cnt[V], QA_L), vi, "")
  // usmmla: the octets of channel pair |P| at byte |WAT| (8 * cpc bytes,
  // zero-padded to 16: row j of the 2 x 8 operand is channel 2P + j).
  #define QA_WO(WAT, P)                                                                   \
    qb_pad(ctx, vload(ctx, i8, 8 * cpc[P], r->wp, iaddc(ctx, (WAT), 16 * (P)), 1), 8 * cpc[P], 16)
  // The block's weight sums for the x zero point: sdot(w, 1 1 1 1) over the
  // quads (usmmla(1 ... 1, w) over the octets: lanes 0 and 1 hold the pair's
  // sums), plus the remaining k of each segment.
  LLVMValueRef wsum[QA_NV];
  {
    LLVMValueRef ones = splat(ctx, LLVMConstInt(i8, 1, 0), 16);
    LLVMValueRef wsv[QA_NV], wsp[QB_NB / 2];
    for (int v = 0; v < nv; ++v) wsv[v] = mlcc_emit_var(ctx, vi, LLVMConstNull(vi));
    if (nq > 0) {
      for (int p = 0; mm && p < ncp; ++p) wsp[p] = mlcc_emit_var(ctx, vi, LLVMConstNull(vi));
      mlcc_loop_t ls = mlcc_emit_for(ctx, 0, r->n_seg * nq, "qaws");
      LLVMValueRef wat = iadd(ctx, wblk, imulc(ctx, ls.iv, G * bs));
      if (rest > 0) {  // skip the rest rows of the segments before
        LLVMValueRef seg = LLVMBuildUDiv(b, ls.iv, c64(ctx, nq), "");
        wat = iadd(ctx, wat, imulc(ctx, seg, rest * bs));
      }
      for (int v = 0; !mm && v < nv; ++v) {
        LLVMValueRef s = LLVMBuildLoad2(b, vi, wsv[v], "");
        LLVMBuildStore(b, sdot(ctx, s, QA_WQ(wat, v), ones), wsv[v]);
      }
      for (int p = 0; mm && p < ncp; ++p) {
        LLVMValueRef s = LLVMBuildLoad2(b, vi, wsp[p], "");
        LLVMBuildStore(b, usmmla(ctx, s, ones, QA_WO(wat, p)), wsp[p]);
      }
      mlcc_emit_loop_end(ctx, &ls);
      for (int v = 0; mm && v < nv; ++v) {  // channels 4v..4v+3: pairs 2v, 2v + 1
        LLVMValueRef lo = LLVMBuildLoad2(b, vi, wsp[2 * v], "");
        LLVMValueRef hi = 2 * v + 1 < ncp ? LLVMBuildLoad2(b, vi, wsp[2 * v + 1], "")
                                          : LLVMConstNull(vi);
        LLVMValueRef idx[4] = {LLVMConstInt(i32, 0, 0), LLVMConstInt(i32, 1, 0),
                               LLVMConstInt(i32, 4, 0), LLVMConstInt(i32, 5, 0)};
        LLVMBuildStore(b, LLVMBuildShuffleVector(b, lo, hi, LLVMConstVector(idx, 4), ""), wsv[v]);
      }
    }
    for (int64_t sg = 0; sg < r->n_seg; ++sg) {
      for (int64_t t = 0; t < rest; ++t) {
        LLVMValueRef wat = iaddc(ctx, wblk, sg * r->seg_len * bs + (nq * G + t) * bs);
        for (int v = 0; v < nv; ++v) {
          LLVMValueRef s = LLVMBuildLoad2(b, vi, wsv[v], "");
          LLVMBuildStore(b, LLVMBuildAdd(b, s, QA_W1(wat, v), ""), wsv[v]);
        }
      }
    }
    for (int v = 0; v < nv; ++v) wsum[v] = LLVMBuildLoad2(b, vi, wsv[v], "");
  }
  // sdot: acc[v][j] = channels 4v..4v+3 of pixel j. usmmla: macc[p][h] =
  // the 2 x 2 matrix of pixels 2h, 2h + 1 (rows) and channels 2p, 2p + 1.
  LLVMValueRef acc[QA_NV][QA_NP], macc[QB_NB / 2][QA_NP / 2];
  for (int v = 0; !mm && v < nv; ++v) {
    for (int j = 0; j < QA_NP; ++j) acc[v][j] = mlcc_emit_var(ctx, vi, NULL);
  }
  for (int p = 0; mm && p < ncp; ++p) {
    for (int h = 0; h < QA_NP / 2; ++h) macc[p][h] = mlcc_emit_var(ctx, vi, NULL);
  }
  mlcc_loop_t lj = mlcc_emit_loop_begin(ctx, c64(ctx, 0), r->npix, QA_NP, "qaj");
  for (int v = 0; !mm && v < nv; ++v) {
    for (int j = 0; j < QA_NP; ++j) LLVMBuildStore(b, LLVMConstNull(vi), acc[v][j]);
  }
  for (int p = 0; mm && p < ncp; ++p) {
    for (int h = 0; h < QA_NP / 2; ++h) LLVMBuildStore(b, LLVMConstNull(vi), macc[p][h]);
  }
  // Pixel lj + j reads its window at rows[(lj + j) * pix_stride]; past the
  // last pixel (the last tile) it reads the last pixel's, and its results
  // are dropped.
  LLVMValueRef last = iaddc(ctx, r->npix, -1);
  LLVMValueRef pix[QA_NP], pbase[QA_NP], xseg[QA_NP];
  for (int j = 0; j < QA_NP; ++j) {
    pix[j] = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, lj.iv, j), last);
    pbase[j] = imulc(ctx, pix[j], r->pix_stride);
  }
  mlcc_loop_t lsg = mlcc_emit_for(ctx, 0, r->n_seg, "qas");
  for (int j = 0; j < QA_NP; ++j) xseg[j] = iadd(ctx, pbase[j], imulc(ctx, lsg.iv, r->seg_stride));
  LLVMValueRef wseg = iadd(ctx, wblk, imulc(ctx, lsg.iv, r->seg_len * bs));
  if (n16 > 0) {  // runs of 4 quads: 16 bytes of x' per pixel
    mlcc_loop_t lq = mlcc_emit_for(ctx, 0, n16, "qaq");
    LLVMValueRef x16[QA_NP];
    for (int j = 0; j < QA_NP; ++j) {
      LLVMValueRef l = vload(ctx, i8, 16, r->rows, iadd(ctx, xseg[j], imulc(ctx, lq.iv, 16)), 1);
      x16[j] = LLVMBuildBitCast(b, l, vi, "");
    }
    LLVMValueRef wat0 = iadd(ctx, wseg, imulc(ctx, lq.iv, 16 * bs));
    for (unsigned t = 0; t < 4; ++t) {
      LLVMValueRef wat = iaddc(ctx, wat0, t * 4 * bs);
      for (int v = 0; v < nv; ++v) {
        LLVMValueRef wv = QA_WQ(wat, v);
        for (int j = 0; j < QA_NP; ++j) {
          LLVMValueRef a = LLVMBuildLoad2(b, vi, acc[v][j], "");
          LLVMBuildStore(b, qa_sdot_lane(ctx, a, wv, x16[j], t), acc[v][j]);
        }
      }
    }
    mlcc_emit_loop_end(ctx, &lq);
    no_unroll(ctx, &lq);
  }
  for (int64_t t = n16 * 4; !mm && t < nq; ++t) {  // the segment's last 1..3 quads
    LLVMValueRef xq[QA_NP];
    for (int j = 0; j < QA_NP; ++j) {
      LLVMValueRef qd = LLVMBuildLoad2(b, i32, gep(ctx, i8, r->rows, iaddc(ctx, xseg[j], 4 * t)), "");
      LLVMSetAlignment(qd, 1);
      xq[j] = LLVMBuildBitCast(b, splat(ctx, qd, QA_L), v16, "");
    }
    LLVMValueRef wat = iaddc(ctx, wseg, t * 4 * bs);
    for (int v = 0; v < nv; ++v) {
      LLVMValueRef wv = QA_WQ(wat, v);
      for (int j = 0; j < QA_NP; ++j) {
        LLVMValueRef a = LLVMBuildLoad2(b, vi, acc[v][j], "");
        LLVMBuildStore(b, sdot(ctx, a, wv, xq[j]), acc[v][j]);
      }
    }
  }
  if (mm && nq > 0) {  // octets: 2 pixels x 8 k of x' by 2 channels x 8 k, usmmla
    mlcc_loop_t lq = mlcc_emit_for(ctx, 0, nq, "qao");
    LLVMValueRef xv[QA_NP / 2];
    for (int h = 0; h < QA_NP / 2; ++h) {
      LLVMValueRef o = imulc(ctx, lq.iv, 8);
      LLVMValueRef x0 = vload(ctx, i8, 8, r->rows, iadd(ctx, xseg[2 * h], o), 1);
      LLVMValueRef x1 = vload(ctx, i8, 8, r->rows, iadd(ctx, xseg[2 * h + 1], o), 1);
      xv[h] = lanes_of(ctx, x0, x1, 0, 1, 16);
    }
    LLVMValueRef wat = iadd(ctx, wseg, imulc(ctx, lq.iv, 8 * bs));
    for (int p = 0; p < ncp; ++p) {
      LLVMValueRef wv = QA_WO(wat, p);
      for (int h = 0; h < QA_NP / 2; ++h) {
        LLVMValueRef a = LLVMBuildLoad2(b, vi, macc[p][h], "");
        LLVMBuildStore(b, usmmla(ctx, a, xv[h], wv), macc[p][h]);
      }
    }
    mlcc_emit_loop_end(ctx, &lq);
    no_unroll(ctx, &lq);
  }
  for (int64_t t = 0; mm && t < rest; ++t) {  // the segment's last 1..7 k: bs bytes each
    LLVMValueRef wat = iaddc(ctx, wseg, (nq * 8 + t) * bs);
    LLVMValueRef wt[QA_NV], xb[QA_NP];
    for (int v = 0; v < nv; ++v) wt[v] = QA_W1(wat, v);
    for (int j = 0; j < QA_NP; ++j) {
      LLVMValueRef at = gep(ctx, i8, r->rows, iaddc(ctx, xseg[j], nq * 8 + t));
      xb[j] = LLVMBuildZExt(b, LLVMBuildLoad2(b, i8, at, ""), i32, "");
    }
    for (int p = 0; p < ncp; ++p) {  // lanes (pixel i, channel c) = i * 2 + c
      unsigned c0 = (unsigned)(p % 2) * 2;
      LLVMValueRef widx[4] = {LLVMConstInt(i32, c0, 0), LLVMConstInt(i32, c0 + 1, 0),
                              LLVMConstInt(i32, c0, 0), LLVMConstInt(i32, c0 + 1, 0)};
      LLVMValueRef wq = LLVMBuildShuffleVector(b, wt[p / 2], LLVMGetUndef(vi),
                                               LLVMConstVector(widx, 4), "");
      for (int h = 0; h < QA_NP / 2; ++h) {
        LLVMValueRef xq = LLVMGetUndef(vi);
        for (unsigned l = 0; l < 4; ++l) {
          xq = LLVMBuildInsertElement(b, xq, xb[2 * h + l / 2], LLVMConstInt(i32, l, 0), "");
        }
        LLVMValueRef a = LLVMBuildLoad2(b, vi, macc[p][h], "");
        LLVMBuildStore(b, LLVMBuildAdd(b, a, LLVMBuildMul(b, xq, wq, ""), ""), macc[p][h]);
      }
    }
  }
  for (int64_t t = 0; !mm && t < rest; ++t) {  // the segment's last 1..3 k: bs bytes each
    LLVMValueRef wat = iaddc(ctx, wseg, (nq * 4 + t) * bs);
    LLVMValueRef wt[QA_NV];
    for (int v = 0; v < nv; ++v) wt[v] = QA_W1(wat, v);
    for (int j = 0; j < QA_NP; ++j) {
      LLVMValueRef at = gep(ctx, i8, r->rows, iaddc(ctx, xseg[j], nq * 4 + t));
      LLVMValueRef xs = splat(ctx, LLVMBuildSExt(b, LLVMBuildLoad2(b, i8, at, ""), i32, ""), QA_L);
      for (int v = 0; v < nv; ++v) {
        LLVMValueRef a = LLVMBuildLoad2(b, vi, acc[v][j], "");
        LLVMBuildStore(b, LLVMBuildAdd(b, a, LLVMBuildMul(b, xs, wt[v], ""), ""), acc[v][j]);
      }
    }
  }
  #undef QA_WQ
  #undef QA_W1
  #undef QA_WO
  mlcc_emit_loop_end(ctx, &lsg);

  //--- Epilogue per pixel: zero-point corrections, bias, requantization
  // (qgemm.h) on the channel lanes, then the stores of the valid outputs:
  // a matmul row's QB_NB channels as one vector, a full conv tile (channels
  // strided) by a byte transpose and one QA_NP-byte store per channel, else
  // one per lane.
  mlcc_status_t status = mlcc_ok_status();
  const mlcc_kernel_t* kern = ctx->kernel;
  bool fused = kern != NULL && kern->n_nodes > 1 && kern->nodes[0] == r->node;
  LLVMValueRef outs[QA_NP][QA_NV];
  LLVMValueRef xzs = splat(ctx, r->xz8, QA_L);
  for (int j = 0; j < QA_NP; ++j) {
    LLVMValueRef psv = splat(ctx, LLVMBuildLoad2(b, i32, gep(ctx, i32, r->pixsum, pix[j]), ""),
                             QA_L);
    for (int v = 0; v < nv; ++v) {
      LLVMValueRef a;
      if (mm) {  // pixel j's row of pairs 2v and 2v + 1
        unsigned i0 = (unsigned)(j % 2) * 2;
        LLVMValueRef lo = LLVMBuildLoad2(b, vi, macc[2 * v][j / 2], "");
        LLVMValueRef hi = 2 * v + 1 < ncp ? LLVMBuildLoad2(b, vi, macc[2 * v + 1][j / 2], "")
                                          : LLVMConstNull(vi);
        LLVMValueRef idx[4] = {LLVMConstInt(i32, i0, 0), LLVMConstInt(i32, i0 + 1, 0),
                               LLVMConstInt(i32, 4 + i0, 0), LLVMConstInt(i32, 5 + i0, 0)};
        a = LLVMBuildShuffleVector(b, lo, hi, LLVMConstVector(idx, 4), "");
      } else {
        a = LLVMBuildLoad2(b, vi, acc[v][j], "");
      }
      a = LLVMBuildSub(b, a, LLVMBuildMul(b, wzv[v], psv, ""), "");
      a = LLVMBuildSub(b, a, LLVMBuildMul(b, xzs, wsum[v], ""), "");
      a = LLVMBuildAdd(b, a, biasv[v], "");
      outs[j][v] = a;
      if (r->qlinear) {
        LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, a, vf, ""), multv[v], "");
        f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
        f = LLVMBuildFAdd(b, f, splat(ctx, r->yzf, QA_L), "");
        f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, splat(ctx, r->qlo, QA_L));
        f = mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, splat(ctx, r->qhi, QA_L));
        outs[j][v] = LLVMBuildTrunc(b, LLVMBuildFPToSI(b, f, vi, ""), LLVMVectorType(i8, QA_L), "");
      }
    }
  }
  const mlcc_value_t* y = mlcc_node_output(r->node, 0);
  LLVMValueRef y_blk = iadd(ctx, r->y_base, imulc(ctx, m0, r->y_ch));
  bool full_blk = nv == QA_NV && cnt[QA_NV - 1] == QA_L;
  bool transpose = r->qlinear && !fused && r->y_ch != 1 && r->y_pix == 1 && full_blk;
  mlcc_if_t tbr;
  if (transpose) {
    LLVMValueRef all = LLVMBuildICmp(b, LLVMIntSLE, iaddc(ctx, lj.iv, QA_NP), r->npix, "");
    tbr = mlcc_emit_if_begin(ctx, all);
    for (int v = 0; v < nv; ++v) {
      // The 4 pixels' <4 x i8> (pixel-major), one shuffle to channel-major:
      // lane c * QA_NP + j = pixel j, channel c.
      LLVMValueRef p01 = lanes_of(ctx, outs[0][v], outs[1][v], 0, 1, 8);
      LLVMValueRef p23 = lanes_of(ctx, outs[2][v], outs[3][v], 0, 1, 8);
      LLVMValueRef idx[16];
      for (unsigned c = 0; c < QA_L; ++c) {
        for (unsigned j = 0; j < QA_NP; ++j) idx[c * QA_NP + j] = LLVMConstInt(i32, j * QA_L + c, 0);
      }
      LLVMValueRef t = LLVMBuildShuffleVector(b, p01, p23, LLVMConstVector(idx, 16), "");
      for (unsigned c = 0; c < QA_L; ++c) {
        LLVMValueRef row = lanes_of(ctx, t, NULL, c * QA_NP, 1, QA_NP);
        LLVMValueRef at = iadd(ctx, iaddc(ctx, y_blk, (v * QA_L + c) * r->y_ch), lj.iv);
        dwp_store(ctx, y, at, row, NULL);
      }
    }
    mlcc_emit_if_else(ctx, &tbr);
  }
  for (int j = 0; j < QA_NP && status == NULL; ++j) {
    LLVMValueRef o = iaddc(ctx, lj.iv, j);
    mlcc_if_t br;
    if (j > 0) br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(b, LLVMIntSLT, o, r->npix, ""));
    LLVMValueRef y_at = iadd(ctx, y_blk, imulc(ctx, o, r->y_pix));
    if (r->y_ch == 1 && full_blk && !fused) {  // QB_NB adjacent outputs: one store
      LLVMValueRef lo = lanes_of(ctx, outs[j][0], outs[j][1], 0, 1, 2 * QA_L);
      LLVMValueRef hi = lanes_of(ctx, outs[j][2], outs[j][3], 0, 1, 2 * QA_L);
      dwp_store(ctx, y, y_at, lanes_of(ctx, lo, hi, 0, 1, 4 * QA_L), NULL);
    } else {
      for (int v = 0; v < nv && status == NULL; ++v) {
        if (r->y_ch == 1 && cnt[v] == QA_L) {
          LLVMValueRef at = iaddc(ctx, y_at, v * QA_L);
          if (fused) {
            status = mlcc_emit_store_output_vec(ctx, r->node, 0, at, outs[j][v]);
          } else {
            dwp_store(ctx, y, at, outs[j][v], NULL);
          }
          continue;
        }
        for (unsigned c = 0; c < cnt[v] && status == NULL; ++c) {
          LLVMValueRef e = LLVMBuildExtractElement(b, outs[j][v], LLVMConstInt(i32, c, 0), "");
          status = mlcc_emit_store_output(ctx, r->node, 0,
                                          iaddc(ctx, y_at, (v * QA_L + c) * r->y_ch), e);
        }
      }
    }
    if (j > 0) mlcc_emit_if_end(ctx, &br);
  }
  if (transpose) mlcc_emit_if_end(ctx, &tbr);
  mlcc_emit_loop_end(ctx, &lj);
  return status;
}

//===----------------------------------------------------------------------===//
// AMX form of the blocked x86 kernel (AMX-TILE and AMX-INT8, kg 4): the
// VNNI quad layout of a full block of 16 channels is the B tile layout
// (per 64 k: 16 rows of [16 channels][4] int8, 64 bytes apart), the packed
// uint8 rows are A tiles (16 pixels x 64 k, pix_stride bytes apart), and
// tdpbusd accumulates the 16 x 16 int32 C tile exactly as 16 x 16 x 16
// vpdpbusd lanes would (u8 x s8 quads, wrapping int32). Tiles: C of full
// pixel tiles tmm0..2, their A tmm3/tmm4 (alternating), B tmm5, the row's
// last partial pixel tile A tmm6 and C tmm7 (|npix| % 16 rows). A window's
// last 64 k (when its length is not a multiple of 64) multiply a B tile
// copied to the stack with zeros past the window (and the remaining 1..3 k
// interleaved as a quad), so the A bytes past the window (the next pixel's,
// or the rows buffer's 64 bytes of slack) count 0. Each C tile is stored to
// the stack and runs the VNNI form's epilogue (qb_epilogue): bit-identical.
//===----------------------------------------------------------------------===//

enum { AMX_A0 = 3, AMX_A1 = 4, AMX_B = 5, AMX_AT = 6, AMX_CT = 7, AMX_NF = 3 };

// True if the x86 |target| has AMX-TILE and AMX-INT8: "+amx-tile" and
// "+amx-int8" in its features (the last mention wins; -mcpu=native lists
// them), else a CPU that has both.
static bool x86_amx(const mlcc_target_t* t) {
  if (t == NULL || t->arch != MLCC_ARCH_X86_64) return false;
  int tile = -1, i8 = -1;
  for (const char* p = t->features; p != NULL && *p;) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 9 && strncmp(p + 1, "amx-tile", 8) == 0) tile = p[0] == '+';
    if (len == 9 && strncmp(p + 1, "amx-int8", 8) == 0) i8 = p[0] == '+';
    p = comma ? comma + 1 : NULL;
  }
  static const char* const cpus[] = {"sapphirerapids", "emeraldrapids", "graniterapids",
                                     "graniterapids-d"};
  bool cpu = false;
  for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); ++i) cpu |= strcmp(t->cpu, cpus[i]) == 0;
  return (tile < 0 ? cpu : tile == 1) && (i8 < 0 ? cpu : i8 == 1);
}

// Stack bytes the AMX form adds to the VNNI form's (rows slack, the C tile,
// the B tail tiles, the configuration, alignment) for |n_seg| segments of
// |seg_len| k.
static int64_t amx_extra_bytes(int64_t n_seg, int64_t seg_len) {
  int64_t tail = seg_len % 64 != 0 ? n_seg * 1024 : 0;
  return 64 + (tail > 1024 ? tail : 1024) + 2 * 64;
}

// A call of the non-overloaded intrinsic |name| (void result).
static void amx_call(mlcc_emit_ctx_t* ctx, const char* name, LLVMValueRef* args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (id == 0) {
    mlcc_emit_fail(ctx, mlcc_make_status(MLCC_STATUS_INTERNAL, "unknown intrinsic %s", name));
    return;
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, NULL, 0);
  LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, NULL, 0);
  LLVMBuildCall2(ctx->b, fty, fn, args, n, "");
}

static LLVMValueRef tmm(mlcc_emit_ctx_t* ctx, int t) { return LLVMConstInt(ctx->t_i8, (unsigned)t, 0); }

// tileloadd / tilestored of tile |t| at |p| with row stride |stride| bytes.
static void amx_load(mlcc_emit_ctx_t* ctx, int t, LLVMValueRef p, int64_t stride) {
  LLVMValueRef args[3] = {tmm(ctx, t), p, c64(ctx, stride)};
  amx_call(ctx, "llvm.x86.tileloadd64", args, 3);
}
static void amx_store(mlcc_emit_ctx_t* ctx, int t, LLVMValueRef p, int64_t stride) {
  LLVMValueRef args[3] = {tmm(ctx, t), p, c64(ctx, stride)};
  amx_call(ctx, "llvm.x86.tilestored64", args, 3);
}
// tdpbusd: C tile |c| += uint8 A tile |a| x int8 B tile |bt| (quads).
static void amx_dpbusd(mlcc_emit_ctx_t* ctx, int c, int a, int bt) {
  LLVMValueRef args[3] = {tmm(ctx, c), tmm(ctx, a), tmm(ctx, bt)};
  amx_call(ctx, "llvm.x86.tdpbusd", args, 3);
}

// The permission Linux asks for before the first tile instruction:
// arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18), a raw
// syscall (158) so the library needs nothing from libc; process-wide and
// idempotent, so every call of the kernel repeats it (no global state).
// Returns the i1 "granted" (0 returned); a kernel without AMX support
// returns -EINVAL, a refused request -EPERM or the like: the kernel then
// runs the VNNI form.
static LLVMValueRef amx_request(mlcc_emit_ctx_t* ctx) {
  LLVMTypeRef i64 = ctx->t_i64;
  LLVMTypeRef params[3] = {i64, i64, i64};
  LLVMTypeRef fty = LLVMFunctionType(i64, params, 3, 0);
  static const char cons[] =
      "={ax},{ax},{di},{si},~{rcx},~{r11},~{memory},~{dirflag},~{fpsr},~{flags}";
  LLVMValueRef asmv = LLVMGetInlineAsm(fty, (char*)"syscall", 7, (char*)cons, sizeof(cons) - 1,
                                       1, 0, LLVMInlineAsmDialectATT, 0);
  LLVMValueRef args[3] = {c64(ctx, 158), c64(ctx, 0x1023), c64(ctx, 18)};
  LLVMValueRef rc = LLVMBuildCall2(ctx->b, fty, asmv, args, 3, "amx_perm");
  return LLVMBuildICmp(ctx->b, LLVMIntEQ, rc, c64(ctx, 0), "amx_ok");
}

// Loads the tile configuration of unit |r| (palette 1; every tile 16 rows
// of 64 bytes but the partial pixel tile's A and C, npix % 16 rows).
static void amx_config(mlcc_emit_ctx_t* ctx, qb_unit_t* r) {
  LLVMValueRef bytes[64];
  unsigned rem = (unsigned)(r->npix_c % 16);
  for (int i = 0; i < 64; ++i) bytes[i] = LLVMConstInt(ctx->t_i8, 0, 0);
  bytes[0] = LLVMConstInt(ctx->t_i8, 1, 0);  // palette 1
  for (int t = 0; t < 8; ++t) {
    bytes[16 + 2 * t] = LLVMConstInt(ctx->t_i8, 64, 0);  // colsb (u16, little-endian)
    unsigned rows = (t == AMX_AT || t == AMX_CT) && rem != 0 ? rem : 16;
    bytes[48 + t] = LLVMConstInt(ctx->t_i8, rows, 0);
  }
  LLVMValueRef st = LLVMBuildStore(ctx->b, LLVMConstVector(bytes, 64), r->cfg);
  LLVMSetAlignment(st, 64);
  LLVMValueRef p = r->cfg;
  amx_call(ctx, "llvm.x86.ldtilecfg", &p, 1);
}

// The K loop of one pass over |nf| full pixel tiles from pixel |p0| (and,
// with |tail|, the partial tile after them) for the block at weight byte
// |wblk|: C tiles zeroed, then per segment and 64 k one B load, one A load
// and one tdpbusd per pixel tile.
static void amx_pass_k(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef wblk, LLVMValueRef p0,
                       int nf, bool tail) {
  int64_t nq = r->seg_len / 4, nkt = nq / 16;
  bool ktail = r->seg_len % 64 != 0;
  for (int t = 0; t < nf; ++t) {
    LLVMValueRef a = tmm(ctx, t);
    amx_call(ctx, "llvm.x86.tilezero", &a, 1);
  }
  if (tail) {
    LLVMValueRef a = tmm(ctx, AMX_CT);
    amx_call(ctx, "llvm.x86.tilezero", &a, 1);
  }
  LLVMValueRef pb = imulc(ctx, p0, r->pix_stride);  // pixel p0's window
  mlcc_loop_t lsg = mlcc_emit_for(ctx, 0, r->n_seg, "qxs");
  LLVMValueRef xseg = iadd(ctx, pb, imulc(ctx, lsg.iv, r->seg_stride));
  LLVMValueRef wseg = iadd(ctx, wblk, imulc(ctx, lsg.iv, r->seg_len * QB_NB));
  for (int part = 0; part < 2; ++part) {
    if (part == 0 && nkt == 0) continue;
    if (part == 1 && !ktail) continue;
    mlcc_loop_t lk;
    LLVMValueRef xk, bp;
    if (part == 0) {
      lk = mlcc_emit_for(ctx, 0, nkt, "qxk");
      xk = iadd(ctx, xseg, imulc(ctx, lk.iv, 64));
      bp = gep(ctx, ctx->t_i8, r->wp, iadd(ctx, wseg, imulc(ctx, lk.iv, 64 * QB_NB)));
    } else {
      xk = iaddc(ctx, xseg, nkt * 64);
      bp = gep(ctx, ctx->t_i8, r->btail, imulc(ctx, lsg.iv, 1024));
    }
    amx_load(ctx, AMX_B, bp, 64);
    for (int t = 0; t < nf; ++t) {
      int at = t % 2 == 0 ? AMX_A0 : AMX_A1;
      amx_load(ctx, at, gep(ctx, ctx->t_i8, r->rows, iaddc(ctx, xk, 16 * t * r->pix_stride)),
               r->pix_stride);
      amx_dpbusd(ctx, t, at, AMX_B);
    }
    if (tail) {
      amx_load(ctx, AMX_AT, gep(ctx, ctx->t_i8, r->rows, iaddc(ctx, xk, 16 * nf * r->pix_stride)),
               r->pix_stride);
      amx_dpbusd(ctx, AMX_CT, AMX_AT, AMX_B);
    }
    if (part == 0) {
      mlcc_emit_loop_end(ctx, &lk);
      no_unroll(ctx, &lk);
    }
  }
  mlcc_emit_loop_end(ctx, &lsg);
}

// Stores C tile |t| (|rows| valid pixels from pixel |p0|) and runs the
// epilogue on it: groups of 8 pixels, or one group of |rows| <= 12.
static mlcc_status_t amx_tile_out(mlcc_emit_ctx_t* ctx, qb_unit_t* r, int t, LLVMValueRef p0,
                                  int rows, LLVMValueRef m0, const unsigned* cnt,
                                  const LLVMValueRef* wzv, const LLVMValueRef* biasv,
                                  const LLVMValueRef* multv) {
  LLVMTypeRef vi = LLVMVectorType(ctx->t_i32, QB_L);
  amx_store(ctx, t, r->cbuf, 64);
  int gsz = rows <= QB_NP_MAX && rows < 16 ? rows : 8;
  mlcc_status_t status = mlcc_ok_status();
  LLVMValueRef last = c64(ctx, r->npix_c - 1);
  for (int g0 = 0; g0 < rows && status == NULL; g0 += gsz) {
    LLVMValueRef pix[QB_NP_MAX];
    LLVMValueRef lj = iaddc(ctx, p0, g0);
    for (int j = 0; j < gsz; ++j) {
      for (int v = 0; v < QB_NV; ++v) {
        LLVMValueRef ld = LLVMBuildLoad2(ctx->b, vi, gep(ctx, ctx->t_i32, r->cbuf,
                                                         c64(ctx, (g0 + j) * 16 + v * QB_L)), "");
        LLVMSetAlignment(ld, 32);
        LLVMBuildStore(ctx->b, ld, r->acc[v][j]);
      }
      pix[j] = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, lj, j), last);
    }
    status = qb_epilogue(ctx, r, lj, gsz, pix, m0, QB_NV, cnt, wzv, biasv, multv);
  }
  return status;
}

static void amx_btail(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef wblk);

// One full block of QB_NB output channels from channel |mb| of the group,
// all r->npix_c pixels of the unit, with AMX tiles (the configuration is
// loaded): runs of AMX_NF full pixel tiles, the last run with the partial
// tile, each C tile through the VNNI form's epilogue.
static mlcc_status_t amx_block(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef mb) {
  const int nv = QB_NV;
  unsigned cnt[QB_NV];
  for (int v = 0; v < nv; ++v) cnt[v] = QB_L;
  LLVMValueRef m0 = iadd(ctx, r->ch0, mb);  // first channel
  LLVMValueRef wzv[QB_NV], biasv[QB_NV], multv[QB_NV];
  qblock_lane_params(ctx, r, m0, QB_L, nv, cnt, wzv, biasv, multv);
  LLVMValueRef wblk = imulc(ctx, m0, r->k);  // the block's weights (QB_NB * k bytes)
  qb_wsum(ctx, r, wblk, QB_NB, nv, cnt);
  mlcc_status_t status = mlcc_ok_status();
  int64_t nft = r->npix_c / 16;
  int rem = (int)(r->npix_c % 16);
  int64_t nloop = nft > 0 ? (nft - 1) / AMX_NF : 0;  // runs of AMX_NF tiles before the last run
  int nlast = (int)(nft - nloop * AMX_NF);
  if (nloop > 0) {
    mlcc_loop_t lp = mlcc_emit_for(ctx, 0, nloop, "qxp");
    LLVMValueRef p0 = imulc(ctx, lp.iv, 16 * AMX_NF);
    amx_btail(ctx, r, wblk);
    amx_pass_k(ctx, r, wblk, p0, AMX_NF, false);
    for (int t = 0; t < AMX_NF && status == NULL; ++t) {
      status = amx_tile_out(ctx, r, t, iaddc(ctx, p0, 16 * t), 16, m0, cnt, wzv, biasv, multv);
    }
    mlcc_emit_loop_end(ctx, &lp);
  }
  if (status == NULL) {
    LLVMValueRef p0 = c64(ctx, nloop * 16 * AMX_NF);
    amx_btail(ctx, r, wblk);
    amx_pass_k(ctx, r, wblk, p0, nlast, rem != 0);
    for (int t = 0; t < nlast && status == NULL; ++t) {
      status = amx_tile_out(ctx, r, t, iaddc(ctx, p0, 16 * t), 16, m0, cnt, wzv, biasv, multv);
    }
    if (status == NULL && rem != 0) {
      status = amx_tile_out(ctx, r, AMX_CT, iaddc(ctx, p0, 16 * nlast), rem, m0, cnt, wzv,
                            biasv, multv);
    }
  }
  return status;
}

// Before each pass (the C tiles' stores of the pass before overwrote them:
// r->btail is r->cbuf): per segment the B tile of the window's last k, qt
// quad rows, then the rest k as one more row (lane 4c + t = w[c][k_rest +
// t]), zeros after; nothing when the window is a multiple of 64 k.
static void amx_btail(mlcc_emit_ctx_t* ctx, qb_unit_t* r, LLVMValueRef wblk) {
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i8 = ctx->t_i8;
  int64_t nq = r->seg_len / 4, rest = r->seg_len % 4, nkt = nq / 16, qt = nq % 16;
  if (r->seg_len % 64 != 0) {
    LLVMTypeRef v64 = LLVMVectorType(i8, 64), v16 = LLVMVectorType(i8, 16);
    for (int64_t sg = 0; sg < r->n_seg; ++sg) {
      LLVMValueRef dst = gep(ctx, i8, r->btail, c64(ctx, sg * 1024));
      LLVMValueRef wseg = iaddc(ctx, wblk, sg * r->seg_len * QB_NB);
      for (int64_t q = 0; q < 16; ++q) {
        LLVMValueRef row = LLVMConstNull(v64);
        if (q < qt) {
          row = vload(ctx, i8, 64, r->wp, iaddc(ctx, wseg, (nkt * 16 + q) * 64), 1);
        } else if (q == qt && rest > 0) {
          LLVMValueRef part[4];
          for (int t = 0; t < 4; ++t) {
            part[t] = t < rest ? vload(ctx, i8, 16, r->wp, iaddc(ctx, wseg, nq * 64 + t * 16), 1)
                               : LLVMConstNull(v16);
          }
          LLVMValueRef lo = lanes_of(ctx, part[0], part[1], 0, 1, 32);
          LLVMValueRef hi = lanes_of(ctx, part[2], part[3], 0, 1, 32);
          LLVMValueRef all = lanes_of(ctx, lo, hi, 0, 1, 64);
          LLVMValueRef idx[64];
          for (unsigned c = 0; c < 16; ++c) {
            for (unsigned t = 0; t < 4; ++t) {
              idx[4 * c + t] = LLVMConstInt(ctx->t_i32, t < rest ? t * 16 + c : 48, 0);
            }
          }
          row = LLVMBuildShuffleVector(b, all, LLVMGetUndef(v64), LLVMConstVector(idx, 64), "");
        }
        LLVMValueRef st = LLVMBuildStore(b, row, gep(ctx, i8, dst, c64(ctx, q * 64)));
        LLVMSetAlignment(st, 64);
      }
    }
  }
}

// The AMX buffers of unit |r| (|n_seg| segments of |seg_len| k, |npix|
// pixels a unit: a constant) and the permission request, before the unit
// loop.
static void amx_unit_init(mlcc_emit_ctx_t* ctx, qb_unit_t* r, int64_t n_seg, int64_t seg_len,
                          int64_t npix) {
  r->npix_c = npix;
  // One buffer: the configuration (read by ldtilecfg at the unit's start),
  // the B tail tiles (rebuilt before each pass), one stored C tile.
  int64_t tail = seg_len % 64 != 0 ? n_seg * 1024 : 0;
  r->cbuf = entry_array(ctx, ctx->t_i8, tail > 1024 ? tail : 1024);
  r->cfg = r->cbuf;
  r->btail = r->cbuf;
  r->amx_ok = amx_request(ctx);
}

// After the unit loop: the tile state released (tilerelease) when it was used.
static void amx_unit_done(mlcc_emit_ctx_t* ctx, qb_unit_t* r) {
  mlcc_if_t br = mlcc_emit_if_begin(ctx, r->amx_ok);
  amx_call(ctx, "llvm.x86.tilerelease", NULL, 0);
  mlcc_emit_if_end(ctx, &br);
}

// All blocks of the unit |r|: |mg| output channels in blocks of QB_NB (a
// loop over the full blocks, then one shorter block).
static mlcc_status_t qb_unit(mlcc_emit_ctx_t* ctx, qb_unit_t* r, int64_t mg) {
  mlcc_status_t status = mlcc_ok_status();
  int64_t nfull = mg / QB_NB * QB_NB;
  if (nfull > 0 && r->amx) {
    // AMX when the permission request succeeded, else the VNNI form; the
    // channel tail block below is VNNI's either way.
    mlcc_if_t br = mlcc_emit_if_begin(ctx, r->amx_ok);
    amx_config(ctx, r);
    mlcc_loop_t lm = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, nfull), QB_NB, "qxm");
    status = amx_block(ctx, r, lm.iv);
    mlcc_emit_loop_end(ctx, &lm);
    mlcc_emit_if_else(ctx, &br);
    if (status == NULL) {
      mlcc_loop_t lv = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, nfull), QB_NB, "qbm");
      status = qb_block(ctx, r, lv.iv, QB_NB);
      mlcc_emit_loop_end(ctx, &lv);
    }
    mlcc_emit_if_end(ctx, &br);
  } else if (nfull > 0) {
    mlcc_loop_t lm = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, nfull), QB_NB, "qbm");
    status = r->arm ? qa_block(ctx, r, lm.iv, QB_NB) : qb_block(ctx, r, lm.iv, QB_NB);
    mlcc_emit_loop_end(ctx, &lm);
  }
  if (status == NULL && nfull < mg) {
    status = r->arm ? qa_block(ctx, r, c64(ctx, nfull), mg - nfull)
                     : qb_block(ctx, r, c64(ctx, nfull), mg - nfull);
  }
  return status;
}

// The blocked kernel of QLinearConv / ConvInteger |node| (weights in the
// MLCC_QBLOCK_ATTR layout): per (image, group, output row) unit the KH input
// rows are packed as for the row kernel (emit_pack_rows), then each block of
// QB_NB output channels runs QB_NP pixels at a time: for each k pair, QB_NV
// weight vectors ([bs][2] int8 pairs sign- or zero-extended to int16, one
// load each) times the pixel's (x[k], x[k+1]) int16 pair broadcast to every
// lane, vpmaddwd into int32 (exact). The zero-point correction, bias and
// requantization are the row kernel's, on channel lanes.
static mlcc_status_t emit_blocked(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                  const qconv_geom_t* qp, bool* out_done) {
  qconv_geom_t q = *qp;
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  qb_unit_t r;
  memset(&r, 0, sizeof(r));
  r.node = node;
  r.qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  const mlcc_value_t *x = ops.x, *w = ops.w, *xz = ops.x_zero;
  r.wz = ops.w_zero;
  r.ws = ops.w_scale;
  r.bias = ops.bias;
  r.wp = mlcc_emit_ptr(ctx, w);
  if (r.wp == NULL || mlcc_emit_ptr(ctx, x) == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: data or weights are not kernel arguments",
                            mlcc_op_name(node->op));
  }
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i32 = ctx->t_i32;
  r.w_u8 = w->dtype == MLCC_DTYPE_U8;
  r.avx2 = ctx->target != NULL && ctx->target->arch == MLCC_ARCH_X86_64 &&
           x86_has(ctx->target, "avx2");
  int64_t col_len = q.kh * q.cg;
  r.kg = qblock_kg(node);
  r.arm = r.kg >= 4 && ctx->target != NULL && ctx->target->arch == MLCC_ARCH_AARCH64;
  // VNNI and usmmla: uint8 bytes x - xshift (x, or x + 128 for int8 x); 3
  // bytes of slack for the last quad of a window (their weights are not
  // read). aarch64 sdot (qa_block): int8 bytes x - 128 (uint8 x) or x.
  // AMX (amx_block): with 64 bytes of slack, when its buffers fit in the
  // stack bound of the int16 rows (mlcc_qgemm_conv_stack_bytes).
  // Windows of fewer than 64 k (1x1 convs of 16 or 24 channels) keep VNNI:
  // measured slower on AMX (mobilenet_v2 features.2 conv.0, K 16: 0.43 ->
  // 0.60 ms), the tile stores and epilogue outweigh one part-empty tdpbusd.
  r.amx = !r.arm && r.kg == 4 && x86_amx(ctx->target) && q.k >= 64 &&
          amx_extra_bytes(q.n_seg, q.seg_len) + 64 <= q.wp * col_len;
  r.rows = r.kg >= 4 ? entry_array(ctx, ctx->t_i8, q.wp * col_len + (r.amx ? 64 : 4))
                     : entry_array(ctx, ctx->t_i16, q.wp * col_len);
  LLVMValueRef colsum = entry_array(ctx, i32, q.kh * q.wp);
  r.pixsum = entry_array(ctx, i32, q.ow);
  LLVMValueRef xzv = ld_i32(ctx, xz, c64(ctx, 0));
  int64_t xshift = x->dtype == MLCC_DTYPE_U8 ? 0 : -128;
  if (r.arm && r.kg == 4) xshift = x->dtype == MLCC_DTYPE_U8 ? 128 : 0;
  r.xz8 = LLVMBuildSub(b, xzv, LLVMConstInt(i32, (unsigned long long)xshift, 1), "");
  qrequant_t rq = qconv_requant(ctx, node, &ops);
  r.xsv = rq.xs;
  r.ysv = rq.ys;
  r.yzf = rq.yz;
  r.qlo = rq.lo;
  r.qhi = rq.hi;
  LLVMTypeRef vi = LLVMVectorType(i32, QB_L);
  r.np = qb_conv_np(q.ow, r.kg == 4);  // VNNI-512 implies AVX-512's registers
  for (int v = 0; v < QB_NV; ++v) {
    for (int j = 0; j < (r.amx ? QB_NP_MAX : r.np); ++j) r.acc[v][j] = mlcc_emit_var(ctx, vi, NULL);
    r.wsum[v] = mlcc_emit_var(ctx, vi, NULL);
  }
  if (r.amx) amx_unit_init(ctx, &r, q.n_seg, q.seg_len, q.ow);
  r.k = q.k;
  r.npix = c64(ctx, q.ow);
  r.pix_stride = q.sw * col_len;
  r.n_seg = q.n_seg;
  r.seg_len = q.seg_len;
  r.seg_stride = q.dw * col_len;
  r.y_ch = q.oh * q.ow;
  r.y_pix = 1;
  // One parallel unit per (image, group, output row): units [rb, re).
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : c64(ctx, 0);
  LLVMValueRef re = ctx->range_end ? ctx->range_end : c64(ctx, q.batch * q.group * q.oh);
  mlcc_loop_t lu = mlcc_emit_loop_begin(ctx, rb, re, 1, "qbu");
  LLVMValueRef n_iv = LLVMBuildUDiv(b, lu.iv, c64(ctx, q.group * q.oh), "");
  LLVMValueRef g_iv = LLVMBuildURem(b, LLVMBuildUDiv(b, lu.iv, c64(ctx, q.oh), ""),
                                    c64(ctx, q.group), "");
  LLVMValueRef oh_iv = LLVMBuildURem(b, lu.iv, c64(ctx, q.oh), "");
  LLVMValueRef x_img = imulc(ctx, imad(ctx, n_iv, q.c, imulc(ctx, g_iv, q.cg)), q.h * q.w);
  emit_pack_rows(ctx, &q, x, xzv, r.xz8, r.kg >= 4 ? xshift : 0, r.kg >= 4, r.rows, colsum,
                 r.pixsum, x_img, oh_iv, r.amx ? 2 : 1);
  r.ch0 = imulc(ctx, g_iv, q.mg);
  r.y_base = iadd(ctx, imulc(ctx, n_iv, q.m * q.oh * q.ow), imulc(ctx, oh_iv, q.ow));
  mlcc_status_t status = qb_unit(ctx, &r, q.mg);
  mlcc_emit_loop_end(ctx, &lu);
  if (r.amx) amx_unit_done(ctx, &r);
  return status;
}

//===----------------------------------------------------------------------===//
// QLinearMatMul / MatMulInteger through the blocked kernel (x86, constant
// 2-D B in the MLCC_QBLOCK_ATTR layout): columns of B are the channels, rows
// of A the pixels.
//===----------------------------------------------------------------------===//

typedef struct qmm_geom_t {
  int64_t batch, m, k, n;
  int64_t rows;    // rows of A per unit (packed int16 on the stack)
  int64_t chunks;  // units per batch item: ceil(m / rows)
} qmm_geom_t;

// Fills |g| and returns true when the blocked matmul can take |node|: int8 /
// uint8 A and B with B a 2-D value (its batch not broadcast), per-tensor A
// parameters, B's per-tensor or per-column ([N]), output int8/uint8
// (QLinearMatMul) or int32 (MatMulInteger), K pairs of a row within the
// stack limit. Whatever B's layout.
static bool plan_matmul(const mlcc_node_t* node, qmm_geom_t* g) {
  memset(g, 0, sizeof(*g));
  if (node == NULL || (node->op != MLCC_OP_QLINEAR_MATMUL && node->op != MLCC_OP_MATMUL_INTEGER)) {
    return false;
  }
  bool qlinear = node->op == MLCC_OP_QLINEAR_MATMUL;
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  const mlcc_value_t* bm = mlcc_node_input(node, qlinear ? 3 : 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (a == NULL || bm == NULL || y == NULL || !a->shape_known || !bm->shape_known ||
      !y->shape_known || bm->shape.rank != 2) {
    return false;
  }
  if (!is_q8(a->dtype) || !is_q8(bm->dtype)) return false;
  if (qlinear ? !is_q8(y->dtype) : y->dtype != MLCC_DTYPE_I32) return false;
  mlcc_quant_matmul_t q;
  mlcc_status_t st = mlcc_quant_matmul_resolve(node, &q);
  if (st != NULL) {
    mlcc_status_free(st);
    return false;
  }
  if (numel_or(mlcc_node_input(node, 2), 1) != 1) return false;  // a_zero_point
  if (qlinear && numel_or(mlcc_node_input(node, 1), 1) != 1) return false;  // a_scale
  int64_t bzn = numel_or(mlcc_node_input(node, qlinear ? 5 : 3), 1);
  int64_t bsn = qlinear ? numel_or(mlcc_node_input(node, 4), 1) : 1;
  if ((bzn != 1 && bzn != q.n) || (bsn != 1 && bsn != q.n)) return false;
  // B is 2-D, so A's batch items are consecutive runs of rows of one
  // [batch * M, K] matrix, and Y's of one [batch * M, N]: fold them (a
  // [64, 1, 128] x [128, N] projection is 64 rows, not 64 products of one row).
  g->batch = 1;
  g->m = mlcc_shape_numel_unchecked(&q.batch) * q.m;
  g->k = q.k;
  g->n = q.n;
  if (g->batch <= 0 || g->m <= 0 || g->k <= 0 || g->n <= 0) return false;
  if (2 * g->k > ROWS_MAX_BYTES) return false;
  int64_t rows = ROWS_MAX_BYTES / (2 * g->k);
  if (rows >= QB_NP) rows = rows / QB_NP * QB_NP;
  if (rows > 16 * QB_NP) rows = 16 * QB_NP;  // units for the parallel split
  if (rows > g->m) rows = g->m;
  g->rows = rows;
  g->chunks = (g->m + rows - 1) / rows;
  return true;
}

int64_t mlcc_qgemm_matmul_block(const mlcc_node_t* node, const mlcc_target_t* target,
                                int64_t* out_kg) {
  qmm_geom_t g;
  if (target == NULL || !plan_matmul(node, &g)) return 0;
  const mlcc_value_t* bm = mlcc_node_input(node, node->op == MLCC_OP_QLINEAR_MATMUL ? 3 : 1);
  int akg = arm_block_kg(target, bm->dtype);
  if (akg != 0) {  // aarch64: sdot quads or usmmla octets
    if (out_kg != NULL) *out_kg = akg;
    return QB_NB;
  }
  if (target->arch != MLCC_ARCH_X86_64 || !x86_has(target, "avx2")) return 0;
  if (out_kg != NULL) *out_kg = x86_vnni(target) && bm->dtype == MLCC_DTYPE_I8 ? 4 : 2;
  return QB_NB;
}

int64_t mlcc_qgemm_matmul_stack_bytes(const mlcc_node_t* node) {
  qmm_geom_t g;
  if (node == NULL || qblock_of(node) == 0 || !plan_matmul(node, &g)) return 0;
  return 2 * g.rows * g.k + 4 * g.rows + 64;
}

int64_t mlcc_qgemm_matmul_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target) {
  (void)target;
  qmm_geom_t g;
  if (node == NULL || qblock_of(node) == 0 || !plan_matmul(node, &g)) return 0;
  int64_t units = g.batch * g.chunks;
  int64_t macs = g.batch * g.m * g.k * g.n;
  return units >= 2 && macs >= (1 << 20) ? units : 0;
}

mlcc_status_t mlcc_emit_qgemm_matmul(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                     bool* out_done) {
  *out_done = false;
  if (qblock_of(node) == 0) return mlcc_ok_status();
  qmm_geom_t g;
  if (!plan_matmul(node, &g)) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: %s weights the blocked kernel cannot take",
                            mlcc_op_name(node->op), MLCC_QBLOCK_ATTR);
  }
  bool qlinear = node->op == MLCC_OP_QLINEAR_MATMUL;
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  const mlcc_value_t* bm = mlcc_node_input(node, qlinear ? 3 : 1);
  const mlcc_value_t* az = mlcc_node_input(node, 2);
  qb_unit_t r;
  memset(&r, 0, sizeof(r));
  r.node = node;
  r.qlinear = qlinear;
  r.wz = mlcc_node_input(node, qlinear ? 5 : 3);
  r.ws = qlinear ? mlcc_node_input(node, 4) : NULL;
  // quant-fuse's int32 bias (MLCC_QMATMUL_BIAS_ATTR, ir/ops/quant.h): input 8.
  r.bias = qlinear ? mlcc_node_input(node, 8) : NULL;
  r.wp = mlcc_emit_ptr(ctx, bm);
  if (r.wp == NULL || mlcc_emit_ptr(ctx, a) == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: A or B is not a kernel argument",
                            mlcc_op_name(node->op));
  }
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i32 = ctx->t_i32, i16 = ctx->t_i16;
  r.w_u8 = bm->dtype == MLCC_DTYPE_U8;
  r.avx2 = ctx->target != NULL && ctx->target->arch == MLCC_ARCH_X86_64 &&
           x86_has(ctx->target, "avx2");
  r.kg = qblock_kg(node);
  r.arm = r.kg >= 4 && ctx->target != NULL && ctx->target->arch == MLCC_ARCH_AARCH64;
  // VNNI (kg 4) and usmmla (kg 8): uint8 bytes a - ashift (a, or a + 128
  // for int8 A), 4 bytes of slack for the last quad. aarch64 sdot (qa_block,
  // kg 4): int8 bytes a - 128 (uint8 A) or a (int8 A).
  // AMX (amx_block): with 64 bytes of slack, when its buffers fit in the
  // stack bound of the int16 rows (mlcc_qgemm_matmul_stack_bytes).
  r.amx = !r.arm && r.kg == 4 && x86_amx(ctx->target) && g.k >= 64 &&
          amx_extra_bytes(1, g.k) + 64 <= g.rows * g.k;
  r.rows = r.kg >= 4 ? entry_array(ctx, ctx->t_i8, g.rows * g.k + (r.amx ? 64 : 4))
                     : entry_array(ctx, i16, g.rows * g.k);
  r.pixsum = entry_array(ctx, i32, g.rows);
  LLVMValueRef azv = ld_i32(ctx, az, c64(ctx, 0));
  int64_t ashift = a->dtype == MLCC_DTYPE_U8 ? 0 : -128;
  if (r.arm && r.kg == 4) ashift = a->dtype == MLCC_DTYPE_U8 ? 128 : 0;
  LLVMValueRef ashiftv = LLVMConstInt(i32, (unsigned long long)ashift, 1);
  r.xz8 = LLVMBuildSub(b, azv, ashiftv, "");
  if (qlinear) {
    r.xsv = ld_f32(ctx, mlcc_node_input(node, 1), c64(ctx, 0), 1.f);
    r.ysv = ld_f32(ctx, mlcc_node_input(node, 6), c64(ctx, 0), 1.f);
    r.yzf = zp_f32(ctx, mlcc_node_input(node, 7));
    mlcc_qgemm_act_bounds(ctx, node, mlcc_node_output(node, 0)->dtype, r.ysv, r.yzf, &r.qlo,
                          &r.qhi);
  }
  LLVMTypeRef vi = LLVMVectorType(i32, QB_L);
  r.np = QB_NP;
  for (int v = 0; v < QB_NV; ++v) {
    for (int j = 0; j < (r.amx ? QB_NP_MAX : QB_NP); ++j) r.acc[v][j] = mlcc_emit_var(ctx, vi, NULL);
    r.wsum[v] = mlcc_emit_var(ctx, vi, NULL);
  }
  if (r.amx) amx_unit_init(ctx, &r, 1, g.k, g.rows);
  r.ch0 = c64(ctx, 0);
  r.k = g.k;
  r.pix_stride = g.k;
  r.n_seg = 1;
  r.seg_len = g.k;
  r.seg_stride = 0;
  r.y_ch = 1;
  r.y_pix = g.n;
  // One parallel unit per (batch item, run of g.rows rows of A).
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : c64(ctx, 0);
  LLVMValueRef re = ctx->range_end ? ctx->range_end : c64(ctx, g.batch * g.chunks);
  mlcc_loop_t lu = mlcc_emit_loop_begin(ctx, rb, re, 1, "qmu");
  LLVMValueRef bi = LLVMBuildUDiv(b, lu.iv, c64(ctx, g.chunks), "");
  LLVMValueRef row0 = imulc(ctx, LLVMBuildURem(b, lu.iv, c64(ctx, g.chunks), ""), g.rows);
  r.npix = mlcc_emit_min(ctx, MLCC_DTYPE_I64, c64(ctx, g.rows),
                         LLVMBuildSub(b, c64(ctx, g.m), row0, ""));
  LLVMValueRef a_at = imulc(ctx, imad(ctx, bi, g.m, row0), g.k);  // first element of the run
  // Pack: rows[p][k] = A[row0 + p][k] - a_zero_point, pixsum[p] = the row's sum.
  mlcc_loop_t lp = mlcc_emit_loop_begin(ctx, c64(ctx, 0), r.npix, 1, "qmp");
  LLVMValueRef sum = mlcc_emit_var(ctx, i32, LLVMConstInt(i32, 0, 0));
  mlcc_loop_t lk = mlcc_emit_for(ctx, 0, g.k, "qmk");
  LLVMValueRef at = imad(ctx, lp.iv, g.k, lk.iv);
  LLVMValueRef araw = ld_i32(ctx, a, iadd(ctx, a_at, at));
  LLVMValueRef xv = LLVMBuildSub(b, araw, azv, "");
  LLVMValueRef st;
  if (r.kg >= 4) {
    st = LLVMBuildStore(b, LLVMBuildTrunc(b, LLVMBuildSub(b, araw, ashiftv, ""), ctx->t_i8, ""),
                        gep(ctx, ctx->t_i8, r.rows, at));
    LLVMSetAlignment(st, 1);
  } else {
    st = LLVMBuildStore(b, LLVMBuildTrunc(b, xv, i16, ""), gep(ctx, i16, r.rows, at));
    LLVMSetAlignment(st, 2);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, sum, ""), xv, ""), sum);
  mlcc_emit_loop_end(ctx, &lk);
  LLVMBuildStore(b, LLVMBuildLoad2(b, i32, sum, ""), gep(ctx, i32, r.pixsum, lp.iv));
  mlcc_emit_loop_end(ctx, &lp);
  r.y_base = imulc(ctx, imad(ctx, bi, g.m, row0), g.n);
  mlcc_status_t status;
  int64_t last = g.m - (g.chunks - 1) * g.rows;  // rows of the last unit of a batch item
  if (r.amx && last != g.rows) {
    // The AMX tiles take the unit's row count as a constant: full units, then the last.
    mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(b, LLVMIntSLE, iaddc(ctx, row0, g.rows),
                                                         c64(ctx, g.m), ""));
    r.npix = c64(ctx, g.rows);
    status = qb_unit(ctx, &r, g.n);
    mlcc_emit_if_else(ctx, &br);
    r.npix_c = last;
    r.npix = c64(ctx, last);
    if (status == NULL) status = qb_unit(ctx, &r, g.n);
    mlcc_emit_if_end(ctx, &br);
  } else {
    status = qb_unit(ctx, &r, g.n);
  }
  mlcc_emit_loop_end(ctx, &lu);
  if (r.amx) amx_unit_done(ctx, &r);
  return status;
}

mlcc_status_t mlcc_emit_qgemm_conv(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node,
                                   bool* out_done) {
  *out_done = false;
  qconv_geom_t q;
  if (plan_dw_plane(node, ctx->target, &q)) return emit_dw_plane(ctx, node, &q, out_done);
  if (plan_dw(node, &q)) return emit_dw(ctx, node, &q, out_done);
  if (!plan(node, &q)) return mlcc_ok_status();
  // Dispatch: depthwise (above); the x86 register blocks (their layout is
  // written on x86 only); microcontrollers; the row kernel below.
  if (qblock_of(node) != 0) return emit_blocked(ctx, node, &q, out_done);
  if (!packed(node, &q)) return mlcc_ok_status();
  if (mlcc_qgemm_mcu_kind(ctx->target) != MLCC_QMCU_NONE) {
    return mlcc_emit_qgemm_conv_mcu(ctx, node, &q, out_done);
  }
  bool qlinear = node->op == MLCC_OP_QLINEAR_CONV;
  mlcc_quant_conv_operands_t ops;
  mlcc_quant_conv_operands(node, &ops);
  const mlcc_value_t *x = ops.x, *w = ops.w, *xz = ops.x_zero, *wz = ops.w_zero;
  const mlcc_value_t *ws = ops.w_scale;
  const mlcc_value_t* bias = ops.bias;
  LLVMValueRef wp = mlcc_emit_ptr(ctx, w);
  if (wp == NULL || mlcc_emit_ptr(ctx, x) == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: data or weights are not kernel arguments",
                            mlcc_op_name(node->op));
  }
  *out_done = true;
  LLVMBuilderRef b = ctx->b;
  LLVMTypeRef i16 = ctx->t_i16, i32 = ctx->t_i32, i8 = ctx->t_i8;
  bool w_u8 = w->dtype == MLCC_DTYPE_U8;
  bool pairwise = ctx->target != NULL && ctx->target->arch == MLCC_ARCH_X86_64;
  int64_t vb = ctx->target != NULL && ctx->target->vector_bytes > 0 ? ctx->target->vector_bytes
                                                                     : 16;
  unsigned lanes = (unsigned)(vb / 2);  // int16 lanes per block
  if (lanes < 8) lanes = 8;
  if (lanes > 32) lanes = 32;
  if (pairwise) {
    // The widest pmaddwd the CPU has.
    if (lanes == 32 && !x86_has(ctx->target, "avx512bw")) lanes = 16;
    if (lanes == 16 && !x86_has(ctx->target, "avx2")) lanes = 8;
  }
  // riscv64 with V (vector_bytes 32): 8 int16 lanes, LMUL 1 at VLEN 128, so
  // the 8 <8 x i32> accumulators of a register block take LMUL 2 each (16 of
  // the 32 vector registers). With 16 lanes they took LMUL 4, all 32
  // registers, and the k loop spilled them (vs4r.v / vl4r.v each step).
  if (ctx->target != NULL && ctx->target->arch == MLCC_ARCH_RISCV64) lanes = 8;
  // aarch64 with +dotprod and int8 weights: the packed rows hold int8
  // x' = x - 128 (uint8 x) or x (int8 x), padding x' = x_zero_point' (the
  // zero point shifted alike), and sdot sums x' * w; then
  //   sum (x - x_zp)(w - w_zp) = sum x'w - x_zp' * sum w - w_zp * sum (x - x_zp)
  // (all int32, wrapping: bit-identical to the int16 form).
  bool dot8 = ctx->target != NULL && ctx->target->arch == MLCC_ARCH_AARCH64 && !w_u8 &&
              arm_dotprod(ctx->target);
  if (dot8) lanes = 16;
  unsigned acc_lanes = dot8 ? 4 : pairwise ? lanes / 2 : lanes;
  LLVMTypeRef row_t = dot8 ? i8 : i16;  // packed row element
  // 2 pixels: measured on an AVX2 machine (3x3, 64 channels, 56x56), 4 x 3
  // blocks ran 12% slower than 4 x 2 and 2 x 4 blocks 20% slower; NEON's
  // accumulators take two registers each.
  const int nr = 2;
  const int nl = MR * nr;                      // outputs per register block
  const unsigned npad = nl <= 8 ? 8 : 16;      // lanes of the epilogue vectors
  LLVMTypeRef acc_t = LLVMVectorType(i32, acc_lanes);
  LLVMTypeRef v16 = LLVMVectorType(i16, lanes);
  int64_t sfull = q.seg_len / lanes * lanes;  // vector part of a segment
  bool w_per_channel = numel_or(wz, 1) != 1;
  bool ws_per_channel = numel_or(ws, 1) != 1;
  int64_t col_len = q.kh * q.cg;  // int16 values per packed input column

  LLVMValueRef rows = entry_array(ctx, row_t, q.wp * col_len);
  LLVMValueRef colsum = entry_array(ctx, i32, q.kh * q.wp);
  LLVMValueRef pixsum = entry_array(ctx, i32, q.ow);
  LLVMValueRef zero32 = LLVMConstInt(i32, 0, 0);
  LLVMValueRef xzv = ld_i32(ctx, xz, c64(ctx, 0));
  bool x_u8 = x->dtype == MLCC_DTYPE_U8;
  LLVMValueRef xshift = LLVMConstInt(i32, x_u8 ? 128 : 0, 0);
  LLVMValueRef xz8 = LLVMBuildSub(b, xzv, xshift, "");  // x_zero_point' (dot8)
  qrequant_t rq = qconv_requant(ctx, node, &ops);
  LLVMValueRef xsv = rq.xs, ysv = rq.ys, yzf = rq.yz, qlo = rq.lo, qhi = rq.hi;
  LLVMValueRef acc[MR][NR_MAX], tacc[MR][NR_MAX];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < nr; ++j) {
      acc[i][j] = mlcc_emit_var(ctx, acc_t, NULL);
      tacc[i][j] = mlcc_emit_var(ctx, i32, NULL);
    }
  }

  // One parallel unit per (image, group, output row): units [rb, re).
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : c64(ctx, 0);
  LLVMValueRef re = ctx->range_end ? ctx->range_end : c64(ctx, q.batch * q.group * q.oh);
  mlcc_loop_t lu = mlcc_emit_loop_begin(ctx, rb, re, 1, "qgu");
  LLVMValueRef n_iv = LLVMBuildUDiv(b, lu.iv, c64(ctx, q.group * q.oh), "");
  LLVMValueRef g_iv = LLVMBuildURem(b, LLVMBuildUDiv(b, lu.iv, c64(ctx, q.oh), ""),
                                    c64(ctx, q.group), "");
  LLVMValueRef oh_iv = LLVMBuildURem(b, lu.iv, c64(ctx, q.oh), "");
  LLVMValueRef x_img = imulc(ctx, imad(ctx, n_iv, q.c, imulc(ctx, g_iv, q.cg)), q.h * q.w);

  emit_pack_rows(ctx, &q, x, xzv, xz8, x_u8 ? 128 : 0, dot8, rows, colsum, pixsum, x_img, oh_iv,
                 ctx->target != NULL && ctx->target->arch == MLCC_ARCH_X86_64);

  //--- Compute: MR output channels x nr pixels per register block.
  mlcc_loop_t lm = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.mg), MR, "qgm");
  LLVMValueRef mrow[MR], mvalid[MR], wrow[MR];
  for (int i = 0; i < MR; ++i) {
    LLVMValueRef mi = iaddc(ctx, lm.iv, i);
    mvalid[i] = LLVMBuildICmp(b, LLVMIntSLT, mi, c64(ctx, q.mg), "");
    mi = LLVMBuildSelect(b, mvalid[i], mi, c64(ctx, q.mg - 1), "");
    mrow[i] = iadd(ctx, imulc(ctx, g_iv, q.mg), mi);  // output channel
    wrow[i] = imulc(ctx, mrow[i], q.k);
  }
  // Per-lane (lane i * nr + j) channel parameters of this block.
  LLVMTypeRef v_out = LLVMVectorType(i32, npad);
  LLVMValueRef wzv = LLVMGetUndef(v_out), biasv = LLVMGetUndef(v_out);
  LLVMValueRef multv = LLVMGetUndef(LLVMVectorType(ctx->t_f32, npad));
  for (int i = 0; i < MR; ++i) {
    LLVMValueRef m = mrow[i];
    LLVMValueRef wzm = ld_i32(ctx, wz, w_per_channel ? m : c64(ctx, 0));
    LLVMValueRef bm = bias != NULL ? ld_i32(ctx, bias, m) : zero32;
    if (dot8) {  // bias - x_zero_point' * sum_k w[m][k]
      LLVMValueRef wsum = mlcc_emit_var(ctx, i32, zero32);
      mlcc_loop_t lw = mlcc_emit_for(ctx, 0, q.k, "qgws");
      LLVMValueRef wl = LLVMBuildLoad2(b, i8, gep(ctx, i8, wp, iadd(ctx, wrow[i], lw.iv)), "");
      LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, wsum, ""),
                                     LLVMBuildSExt(b, wl, i32, ""), ""), wsum);
      mlcc_emit_loop_end(ctx, &lw);
      bm = LLVMBuildSub(b, bm, LLVMBuildMul(b, xz8, LLVMBuildLoad2(b, i32, wsum, ""), ""), "");
    }
    LLVMValueRef mult = NULL;
    if (qlinear) {
      LLVMValueRef wsm = ld_f32(ctx, ws, ws_per_channel ? m : c64(ctx, 0), 1.f);
      mult = LLVMBuildFDiv(b, LLVMBuildFMul(b, xsv, wsm, ""), ysv, "mult");
    }
    for (int j = 0; j < nr; ++j) {
      LLVMValueRef li = LLVMConstInt(i32, (unsigned)(i * nr + j), 0);
      wzv = LLVMBuildInsertElement(b, wzv, wzm, li, "");
      biasv = LLVMBuildInsertElement(b, biasv, bm, li, "");
      if (qlinear) multv = LLVMBuildInsertElement(b, multv, mult, li, "");
    }
  }
  mlcc_loop_t lj = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, q.ow), nr, "qgj");
  LLVMValueRef acc_zero = LLVMConstNull(acc_t);
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < nr; ++j) {
      LLVMBuildStore(b, acc_zero, acc[i][j]);
      LLVMBuildStore(b, zero32, tacc[i][j]);
    }
  }
  // Pixel ow = lj + j starts its window at rows[.][ow * sw][0]; the last
  // block's second pixel may lie past OW: it reads pixel OW-1's window.
  LLVMValueRef pbase[NR_MAX];
  for (int j = 0; j < nr; ++j) {
    LLVMValueRef o = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, lj.iv, j), c64(ctx, q.ow - 1));
    pbase[j] = imulc(ctx, o, q.sw * col_len);
  }
  mlcc_loop_t lsg = mlcc_emit_for(ctx, 0, q.n_seg, "qgs");
  // Segment s: the window's columns kw = s (dw > 1), or all of them (dw == 1).
  LLVMValueRef xoff = imulc(ctx, lsg.iv, q.dw * col_len);
  LLVMValueRef woff = imulc(ctx, lsg.iv, q.seg_len);
  LLVMValueRef xseg[NR_MAX], wseg[MR];
  for (int j = 0; j < nr; ++j) xseg[j] = iadd(ctx, pbase[j], xoff);
  for (int i = 0; i < MR; ++i) wseg[i] = iadd(ctx, wrow[i], woff);
  if (sfull > 0) {
    mlcc_loop_t lk = mlcc_emit_loop_begin(ctx, c64(ctx, 0), c64(ctx, sfull), lanes, "qgk");
    LLVMValueRef xvv[NR_MAX], wv[MR];
    for (int j = 0; j < nr; ++j) {
      xvv[j] = vload(ctx, row_t, lanes, rows, iadd(ctx, xseg[j], lk.iv), dot8 ? 1 : 2);
    }
    for (int i = 0; i < MR; ++i) {
      wv[i] = vload(ctx, i8, lanes, wp, iadd(ctx, wseg[i], lk.iv), 1);
      if (!dot8) wv[i] = ext(ctx, wv[i], w_u8, v16);
    }
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < nr; ++j) {
        LLVMValueRef a = LLVMBuildLoad2(b, acc_t, acc[i][j], "");
        LLVMValueRef r2 = dot8 ? sdot(ctx, a, xvv[j], wv[i])
                               : madd(ctx, pairwise, lanes, a, xvv[j], wv[i]);
        LLVMBuildStore(b, r2, acc[i][j]);
      }
    }
    mlcc_emit_loop_end(ctx, &lk);
    no_unroll(ctx, &lk);
  }
  if (sfull < q.seg_len) {
    mlcc_loop_t lk = mlcc_emit_for(ctx, sfull, q.seg_len, "qgkt");
    LLVMValueRef xs1[NR_MAX];
    for (int j = 0; j < nr; ++j) {
      LLVMValueRef l = LLVMBuildLoad2(b, row_t, gep(ctx, row_t, rows, iadd(ctx, xseg[j], lk.iv)), "");
      xs1[j] = LLVMBuildSExt(b, l, i32, "");
    }
    for (int i = 0; i < MR; ++i) {
      LLVMValueRef wl = LLVMBuildLoad2(b, i8, gep(ctx, i8, wp, iadd(ctx, wseg[i], lk.iv)), "");
      LLVMValueRef wi = ext(ctx, wl, w_u8, i32);
      for (int j = 0; j < nr; ++j) {
        LLVMValueRef t = LLVMBuildLoad2(b, i32, tacc[i][j], "");
        LLVMBuildStore(b, LLVMBuildAdd(b, t, LLVMBuildMul(b, xs1[j], wi, ""), ""), tacc[i][j]);
      }
    }
    mlcc_emit_loop_end(ctx, &lk);
  }
  mlcc_emit_loop_end(ctx, &lsg);

  //--- Epilogue on all MR * nr outputs at once (lane l = i * nr + j; lanes
  // past MR * nr are padding): zero-point correction, bias, requantization;
  // then one store per lane.
  LLVMValueRef list[16];
  for (int l = 0; l < (int)npad; ++l) {
    list[l] = l < nl ? LLVMBuildLoad2(b, acc_t, acc[l / nr][l % nr], "") : LLVMConstNull(acc_t);
  }
  LLVMValueRef r = reduce_lanes(ctx, list, npad, acc_lanes);  // <npad x i32>
  LLVMValueRef tailv = LLVMConstNull(v_out);
  LLVMValueRef psv = LLVMConstNull(v_out);
  for (int l = 0; l < nl; ++l) {
    LLVMValueRef li = LLVMConstInt(i32, (unsigned)l, 0);
    tailv = LLVMBuildInsertElement(b, tailv, LLVMBuildLoad2(b, i32, tacc[l / nr][l % nr], ""),
                                   li, "");
    LLVMValueRef o = mlcc_emit_min(ctx, MLCC_DTYPE_I64, iaddc(ctx, lj.iv, l % nr),
                                   c64(ctx, q.ow - 1));
    psv = LLVMBuildInsertElement(b, psv, LLVMBuildLoad2(b, i32, gep(ctx, i32, pixsum, o), ""),
                                 li, "");
  }
  r = LLVMBuildAdd(b, r, tailv, "");
  r = LLVMBuildSub(b, r, LLVMBuildMul(b, wzv, psv, ""), "");
  r = LLVMBuildAdd(b, r, biasv, "");
  LLVMValueRef outv = r;
  if (qlinear) {
    LLVMTypeRef vf = LLVMVectorType(ctx->t_f32, npad);
    LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, r, vf, ""), multv, "");
    f = mlcc_emit_intrinsic(ctx, "llvm.roundeven", &f, 1);
    f = LLVMBuildFAdd(b, f, splat(ctx, yzf, npad), "");
    f = mlcc_emit_max(ctx, MLCC_DTYPE_F32, f, splat(ctx, qlo, npad));
    f = mlcc_emit_min(ctx, MLCC_DTYPE_F32, f, splat(ctx, qhi, npad));
    // f is integral and in [-128, 255]: through i32 then truncate (an
    // f32 -> i8 conversion vectorizes to RVV's narrowing vfncvt at
    // fractional LMUL, which qemu 7.2's translator asserts on).
    outv = LLVMBuildTrunc(b, LLVMBuildFPToSI(b, f, v_out, ""), LLVMVectorType(i8, npad), "");
  }
  mlcc_status_t status = mlcc_ok_status();
  LLVMValueRef y_row = imulc(ctx, oh_iv, q.ow);
  for (int l = 0; l < nl && status == NULL; ++l) {
    int i = l / nr, j = l % nr;
    LLVMValueRef o = iaddc(ctx, lj.iv, j);
    LLVMValueRef ok2 =
        LLVMBuildAnd(b, mvalid[i], LLVMBuildICmp(b, LLVMIntSLT, o, c64(ctx, q.ow), ""), "");
    mlcc_if_t br = mlcc_emit_if_begin(ctx, ok2);
    LLVMValueRef e = LLVMBuildExtractElement(b, outv, LLVMConstInt(i32, (unsigned)l, 0), "");
    LLVMValueRef yi = imad(ctx, imad(ctx, n_iv, q.m, mrow[i]), q.oh * q.ow, iadd(ctx, y_row, o));
    status = mlcc_emit_store_output(ctx, node, 0, yi, e);
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_loop_end(ctx, &lj);
  mlcc_emit_loop_end(ctx, &lm);
  mlcc_emit_loop_end(ctx, &lu);
  return status;
}

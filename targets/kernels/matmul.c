// SPDX-License-Identifier: Apache-2.0
// Kernel emitters for Gemm and MatMul.
//
// Both are built from one register-tiled micro-kernel: an RT x CT block of
// accumulators (mlcc_emit_var, promoted to registers by SROA) updated by a
// runtime loop over k; the CT column updates are straight-line so the SLP
// vectorizer packs them. The tile grid is fixed at compile time from the
// constant shapes (full tiles in loops, remainders as smaller tiles), so no
// bounds checks run in the inner loop. Each output element is stored once.
// float32 with B rows contiguous along n (MatMul, Gemm transB=0) uses an
// explicit vector micro-kernel instead: rt rows x nv vectors of the target's
// lanes (6-8 x 4 x 16 on AVX-512), A broadcast, B rows loaded as vectors.
// Parallel units (mm_make_plan, shared with matmul_parallel_units)
// are row tiles of (batch, rows); when those are too few (M = 1 classifier
// heads) each row tile is further split into its column tiles.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/kernels.h"

enum { kMaxRows = 4, kMaxCols = 16 };

// A product of fewer multiply-adds does not pay for a parallel-for call:
// 1M in general (cache-resident products run ~5 us per 512K MACs, about the
// cost of the call), 256K when every row tile is a whole batch's rows (M <=
// rt, e.g. M = 1 classifier heads): each B element is then used once per
// row tile, so the product streams B from memory and is many times slower
// per MAC (resnet18's 512x1000 fc: ~130 us).
static const int64_t kMinParallelMacs = (int64_t)1 << 20;
static const int64_t kMinParallelMacsStreamB = (int64_t)1 << 18;
// Fewer (batch, row tile) units than this: split each one by column tiles.
enum { kMinRowUnits = 8 };

// Arithmetic in the computational type of |dt| (float or integer).
static LLVMValueRef amul(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef a, LLVMValueRef b) {
  return mlcc_dtype_is_float(dt) ? LLVMBuildFMul(ctx->b, a, b, "") : LLVMBuildMul(ctx->b, a, b, "");
}
static LLVMValueRef aadd(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef a, LLVMValueRef b) {
  return mlcc_dtype_is_float(dt) ? LLVMBuildFAdd(ctx->b, a, b, "") : LLVMBuildAdd(ctx->b, a, b, "");
}
static LLVMValueRef amac(mlcc_emit_ctx_t* ctx, mlcc_dtype_t dt, LLVMValueRef a, LLVMValueRef b,
                         LLVMValueRef c) {
  return mlcc_dtype_is_float(dt) ? mlcc_emit_fmuladd(ctx, a, b, c)
                                 : LLVMBuildAdd(ctx->b, LLVMBuildMul(ctx->b, a, b, ""), c, "");
}

static bool supported_dtype(mlcc_dtype_t dt) {
  return dt == MLCC_DTYPE_F32 || dt == MLCC_DTYPE_F64 || mlcc_dtype_is_int(dt);
}

// A matrix operand: element (r, c) is at linear index base + r*rs + c*cs.
typedef struct mm_operand_t {
  const mlcc_value_t* v;
  LLVMValueRef base;
  int64_t rs, cs;
} mm_operand_t;

// Called once per output element (i, j) with the accumulated dot product.
typedef mlcc_status_t (*mm_store_fn)(void* user, mlcc_emit_ctx_t* ctx, LLVMValueRef i,
                                     LLVMValueRef j, LLVMValueRef acc);

typedef struct mm_t {
  mlcc_emit_ctx_t* ctx;
  mlcc_dtype_t dt;
  LLVMTypeRef t;
  mm_operand_t a, b;        // A is [M, K], B is [K, N] (logical)
  int64_t m, n, k;
  int rt, ct;               // full tile sizes
  mm_store_fn store;
  void* user;
  // Vector micro-kernel (vl > 0): rt rows x nv vectors of vl columns.
  int vl, nv;
  // Optional vector store of lanes (i, j..j+vl-1); NULL = per-lane |store|.
  mlcc_status_t (*store_vec)(void* user, mlcc_emit_ctx_t* ctx, LLVMValueRef i, LLVMValueRef j,
                             LLVMValueRef v);
  // Batched products: |batch| points a/b bases and the output at batch |bi|.
  int64_t nbatch;
  void (*batch)(struct mm_t* mm, LLVMValueRef bi);
  const int32_t* sched;     // the anchor's schedule (mm_make_plan)
} mm_t;

// Tiling of a product, shared by the emitter and the parallel unit count
// (they must agree): rows are split into tiles of rt, columns into cfull
// full tiles of cw (nv vectors of vl, or ct scalars) plus, when n is not a
// multiple of cw, one remainder tile. A parallel unit is one (batch, row
// tile) if ctiles == 1, else one (batch, row tile, column tile) with ctiles
// column tiles per row tile (only when the product is parallel and has
// fewer than kMinRowUnits row units; every column is then computed by the
// same code whatever the range, so outputs do not depend on the split).
// parallel: the product is large enough for the parallel entry to split it
// (kMinParallelMacs*) and has more than one unit.
typedef struct mm_plan_t {
  int rt, vl, nv;        // vl == 0: scalar tiles
  int ct;                // scalar tile columns
  int64_t mtiles, units;
  int64_t cw, cfull, ctiles;
  bool parallel;
} mm_plan_t;

// Schedule parameters (mlcc_emit_matmul_space): 0 = the heuristic's choice.
enum { kSchedRows = 0, kSchedVectors = 1, kSchedCols = 2 };

// The vector micro-kernel applies (float32, B rows contiguous, n >= lanes):
// its lanes in |*out_l| and the vector registers in |*out_nregs|.
static bool mm_vector_path(mlcc_dtype_t dt, int64_t n, int64_t k, int64_t b_cs,
                           const mlcc_target_t* target, int* out_l, int* out_nregs) {
  int L = target ? target->vector_bytes / 4 : 0;
  *out_l = L;
  *out_nregs = target && target->arch == MLCC_ARCH_X86_64 && L < 16 ? 16 : 32;
  return dt == MLCC_DTYPE_F32 && b_cs == 1 && L >= 4 && L <= 16 && n >= L && k > 0;
}

// |sched| (NULL: all default) overrides the heuristic's tile; values out of
// range are clamped so that no schedule can overflow the tile arrays.
static void mm_make_plan(mlcc_dtype_t dt, int64_t m, int64_t n, int64_t k, int64_t b_cs,
                         int64_t nbatch, const mlcc_target_t* target, const int32_t* sched,
                         mm_plan_t* p) {
  memset(p, 0, sizeof(*p));
  int64_t elem = (int64_t)mlcc_dtype_size(dt);
  int64_t vb = target && target->vector_bytes > 0 ? target->vector_bytes : 16;
  int64_t ct = 2 * vb / (elem > 0 ? elem : 4);
  if (ct > kMaxCols) ct = kMaxCols;
  if (ct < 4) ct = 4;
  // Strided B columns (transposed B) do not vectorize across j; keep the
  // tile narrow then and block more rows instead.
  if (b_cs != 1 && ct > 8) ct = 8;
  if (sched != NULL && sched[kSchedCols] > 0) {
    ct = sched[kSchedCols] > kMaxCols ? kMaxCols : sched[kSchedCols];
  }
  p->ct = (int)ct;
  int L = 0, nregs = 0;
  if (mm_vector_path(dt, n, k, b_cs, target, &L, &nregs)) {
    int64_t nvec = n / L;
    p->vl = L;
    p->nv = nvec >= 4 ? 4 : (int)nvec;
    if (nregs == 16 && p->nv > 2) p->nv = 2;
    if (sched != NULL && sched[kSchedVectors] > 0) {
      p->nv = sched[kSchedVectors] > 4 ? 4 : sched[kSchedVectors];
      if (p->nv > nvec) p->nv = (int)nvec;
    }
    p->rt = (nregs - p->nv - 2) / p->nv;
    if (p->rt > 8) p->rt = 8;
    if (sched != NULL && sched[kSchedRows] > 0) p->rt = sched[kSchedRows] > 8 ? 8 : sched[kSchedRows];
  } else {
    p->rt = m >= kMaxRows ? kMaxRows : (m > 0 ? (int)m : 1);
    if (sched != NULL && sched[kSchedRows] > 0) {
      p->rt = sched[kSchedRows] > kMaxRows ? kMaxRows : sched[kSchedRows];
    }
  }
  if (p->rt > m) p->rt = m > 0 ? (int)m : 1;
  if (p->vl == 0 && p->rt > kMaxRows) p->rt = kMaxRows;
  p->mtiles = m > 0 ? (m + p->rt - 1) / p->rt : 0;
  p->units = nbatch * p->mtiles;
  p->cw = p->vl > 0 ? (int64_t)p->nv * p->vl : p->ct;
  p->cfull = n > 0 ? n / p->cw : 0;
  p->ctiles = 1;
  int64_t min_macs = p->mtiles == 1 ? kMinParallelMacsStreamB : kMinParallelMacs;
  if (nbatch * m * n * k < min_macs) return;
  int64_t ct_all = p->cfull + (n > 0 && n % p->cw != 0 ? 1 : 0);
  if (p->units > 0 && p->units < kMinRowUnits && ct_all > 1) {
    p->ctiles = ct_all;
    p->units *= ct_all;
  }
  p->parallel = p->units > 1;
}

// Dot-product form of an R x C tile for float32 when both A's rows and B's
// columns are contiguous along k (B transposed, e.g. Gemm transB=1 with a few
// rows): R*C vector accumulators run along k, reduced once at the end, then a
// scalar tail. Returns false (nothing emitted) when it does not apply.
static bool mm_tile_dot(mm_t* mm, LLVMValueRef i0, LLVMValueRef j0, int r, int c,
                        mlcc_status_t* out_status) {
  mlcc_emit_ctx_t* ctx = mm->ctx;
  *out_status = mlcc_ok_status();
  if (mm->dt != MLCC_DTYPE_F32 || mm->a.cs != 1 || mm->b.rs != 1 || ctx->target == NULL) return false;
  int L = ctx->target->vector_bytes / 4;
  if (L < 4 || L > 16 || mm->k < L || r * c > 24) return false;
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, (unsigned)L);
  int64_t kv = mm->k / L, krem = mm->k % L;
  LLVMValueRef acc[kMaxRows * kMaxCols];
  for (int x = 0; x < r * c; ++x) acc[x] = mlcc_emit_var(ctx, vt, LLVMConstNull(vt));
  LLVMValueRef ap = mlcc_emit_ptr(ctx, mm->a.v), bp = mlcc_emit_ptr(ctx, mm->b.v);
  if (ap == NULL || bp == NULL) return false;
  LLVMValueRef arow = iadd(ctx, mm->a.base, imulc(ctx, i0, mm->a.rs));
  LLVMValueRef bcol = iadd(ctx, mm->b.base, imulc(ctx, j0, mm->b.cs));
  mlcc_loop_t l_k = mlcc_emit_for(ctx, 0, kv, "kv");
  LLVMValueRef k0 = imulc(ctx, l_k.iv, L);
  LLVMValueRef av[kMaxRows], bv[kMaxCols];
  for (int x = 0; x < r; ++x) {
    LLVMValueRef i = iadd(ctx, iaddc(ctx, arow, x * mm->a.rs), k0);
    av[x] = LLVMBuildLoad2(ctx->b, vt, LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, ap, &i, 1, ""), "");
    LLVMSetAlignment(av[x], 4);
  }
  for (int y = 0; y < c; ++y) {
    LLVMValueRef i = iadd(ctx, iaddc(ctx, bcol, y * mm->b.cs), k0);
    bv[y] = LLVMBuildLoad2(ctx->b, vt, LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, bp, &i, 1, ""), "");
    LLVMSetAlignment(bv[y], 4);
  }
  for (int x = 0; x < r; ++x) {
    for (int y = 0; y < c; ++y) {
      LLVMValueRef cur = LLVMBuildLoad2(ctx->b, vt, acc[x * c + y], "");
      LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, av[x], bv[y], cur), acc[x * c + y]);
    }
  }
  mlcc_emit_loop_end(ctx, &l_k);
  for (int x = 0; x < r; ++x) {
    for (int y = 0; y < c; ++y) {
      // Pairwise tree reduction of the lanes.
      LLVMValueRef v = LLVMBuildLoad2(ctx->b, vt, acc[x * c + y], "");
      for (int w = L / 2; w >= 1; w /= 2) {
        LLVMValueRef lo[16], hi[16];
        for (int q = 0; q < w; ++q) {
          lo[q] = LLVMConstInt(ctx->t_i32, (unsigned long long)q, 0);
          hi[q] = LLVMConstInt(ctx->t_i32, (unsigned long long)(q + w), 0);
        }
        LLVMValueRef a = LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(lo, (unsigned)w), "");
        LLVMValueRef b = LLVMBuildShuffleVector(ctx->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(hi, (unsigned)w), "");
        v = LLVMBuildFAdd(ctx->b, a, b, "");
      }
      LLVMValueRef sum = LLVMBuildExtractElement(ctx->b, v, LLVMConstInt(ctx->t_i32, 0, 0), "");
      for (int64_t t = 0; t < krem; ++t) {
        LLVMValueRef ai = iaddc(ctx, arow, x * mm->a.rs + kv * L + t);
        LLVMValueRef bi = iaddc(ctx, bcol, y * mm->b.cs + kv * L + t);
        sum = mlcc_emit_fmuladd(ctx, mlcc_emit_load(ctx, mm->a.v, ai), mlcc_emit_load(ctx, mm->b.v, bi), sum);
      }
      mlcc_status_t st = mm->store(mm->user, ctx, iaddc(ctx, i0, x), iaddc(ctx, j0, y), sum);
      if (!mlcc_status_is_ok(st)) {
        *out_status = st;
        return true;
      }
    }
  }
  return true;
}

// One R x C tile at (i0, j0).
static mlcc_status_t mm_tile(mm_t* mm, LLVMValueRef i0, LLVMValueRef j0, int r, int c) {
  mlcc_emit_ctx_t* ctx = mm->ctx;
  mlcc_status_t dst;
  if (mm_tile_dot(mm, i0, j0, r, c, &dst)) return dst;
  LLVMValueRef acc[kMaxRows * kMaxCols];
  for (int x = 0; x < r * c; ++x) acc[x] = mlcc_emit_var(ctx, mm->t, mlcc_emit_const(ctx, mm->dt, 0.0));
  if (mm->k > 0) {
    mlcc_loop_t l_k = mlcc_emit_for(ctx, 0, mm->k, "k");
    LLVMValueRef av[kMaxRows], bv[kMaxCols];
    LLVMValueRef arow = iadd(ctx, iadd(ctx, mm->a.base, imulc(ctx, i0, mm->a.rs)),
                             imulc(ctx, l_k.iv, mm->a.cs));
    for (int x = 0; x < r; ++x) av[x] = mlcc_emit_load(ctx, mm->a.v, iaddc(ctx, arow, x * mm->a.rs));
    LLVMValueRef brow = iadd(ctx, iadd(ctx, mm->b.base, imulc(ctx, l_k.iv, mm->b.rs)),
                             imulc(ctx, j0, mm->b.cs));
    for (int y = 0; y < c; ++y) bv[y] = mlcc_emit_load(ctx, mm->b.v, iaddc(ctx, brow, y * mm->b.cs));
    for (int x = 0; x < r; ++x) {
      for (int y = 0; y < c; ++y) {
        LLVMValueRef cur = LLVMBuildLoad2(ctx->b, mm->t, acc[x * c + y], "");
        LLVMBuildStore(ctx->b, amac(ctx, mm->dt, av[x], bv[y], cur), acc[x * c + y]);
      }
    }
    mlcc_emit_loop_end(ctx, &l_k);
  }
  for (int x = 0; x < r; ++x) {
    for (int y = 0; y < c; ++y) {
      LLVMValueRef v = LLVMBuildLoad2(ctx->b, mm->t, acc[x * c + y], "");
      MLCC_RETURN_IF_ERROR(mm->store(mm->user, ctx, iaddc(ctx, i0, x), iaddc(ctx, j0, y), v));
    }
  }
  return mlcc_ok_status();
}

// Vector tile: R rows from i0 x nvt vectors of vl columns from j0 (f32,
// B rows contiguous along j). A is broadcast, B loaded as vectors.
static mlcc_status_t mm_tile_vec(mm_t* mm, LLVMValueRef i0, LLVMValueRef j0, int r, int nvt) {
  mlcc_emit_ctx_t* ctx = mm->ctx;
  LLVMTypeRef vt = LLVMVectorType(ctx->t_f32, (unsigned)mm->vl);
  LLVMValueRef acc[8][4];
  for (int x = 0; x < r; ++x) {
    for (int v = 0; v < nvt; ++v) acc[x][v] = mlcc_emit_var(ctx, vt, LLVMConstNull(vt));
  }
  LLVMValueRef ap = mlcc_emit_ptr(ctx, mm->a.v), bp = mlcc_emit_ptr(ctx, mm->b.v);
  mlcc_loop_t l_k = mlcc_emit_for(ctx, 0, mm->k, "k");
  LLVMValueRef bi = iadd(ctx, iadd(ctx, mm->b.base, imulc(ctx, l_k.iv, mm->b.rs)), j0);
  LLVMValueRef bv[4];
  for (int v = 0; v < nvt; ++v) {
    LLVMValueRef i = iaddc(ctx, bi, (int64_t)v * mm->vl);
    bv[v] = LLVMBuildLoad2(ctx->b, vt, LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, bp, &i, 1, ""), "");
    LLVMSetAlignment(bv[v], 4);
  }
  LLVMValueRef ai = iadd(ctx, iadd(ctx, mm->a.base, imulc(ctx, i0, mm->a.rs)),
                         imulc(ctx, l_k.iv, mm->a.cs));
  LLVMValueRef zeros[16];
  for (int q = 0; q < mm->vl; ++q) zeros[q] = LLVMConstInt(ctx->t_i32, 0, 0);
  LLVMValueRef zmask = LLVMConstVector(zeros, (unsigned)mm->vl);
  for (int x = 0; x < r; ++x) {
    LLVMValueRef i = iaddc(ctx, ai, x * mm->a.rs);
    LLVMValueRef as = LLVMBuildLoad2(ctx->b, ctx->t_f32, LLVMBuildInBoundsGEP2(ctx->b, ctx->t_f32, ap, &i, 1, ""), "");
    LLVMSetAlignment(as, 4);
    LLVMValueRef ins = LLVMBuildInsertElement(ctx->b, LLVMGetUndef(vt), as, LLVMConstInt(ctx->t_i32, 0, 0), "");
    LLVMValueRef av = LLVMBuildShuffleVector(ctx->b, ins, LLVMGetUndef(vt), zmask, "");
    for (int v = 0; v < nvt; ++v) {
      LLVMValueRef cur = LLVMBuildLoad2(ctx->b, vt, acc[x][v], "");
      LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, av, bv[v], cur), acc[x][v]);
    }
  }
  mlcc_emit_loop_end(ctx, &l_k);
  for (int x = 0; x < r; ++x) {
    LLVMValueRef i = iaddc(ctx, i0, x);
    for (int v = 0; v < nvt; ++v) {
      LLVMValueRef val = LLVMBuildLoad2(ctx->b, vt, acc[x][v], "");
      LLVMValueRef j = iaddc(ctx, j0, (int64_t)v * mm->vl);
      if (mm->store_vec) {
        MLCC_RETURN_IF_ERROR(mm->store_vec(mm->user, ctx, i, j, val));
        continue;
      }
      for (int q = 0; q < mm->vl; ++q) {
        LLVMValueRef lane = LLVMBuildExtractElement(ctx->b, val, LLVMConstInt(ctx->t_i32, (unsigned long long)q, 0), "");
        MLCC_RETURN_IF_ERROR(mm->store(mm->user, ctx, i, iaddc(ctx, j, q), lane));
      }
    }
  }
  return mlcc_ok_status();
}

// Full column tiles [lo, hi) (of width nv*vl, or ct scalar columns) for
// the R rows starting at i0.
static mlcc_status_t mm_full_cols(mm_t* mm, LLVMValueRef i0, int r, LLVMValueRef lo,
                                  LLVMValueRef hi) {
  mlcc_emit_ctx_t* ctx = mm->ctx;
  if (mm->vl > 0) {
    int64_t w = (int64_t)mm->nv * mm->vl;
    mlcc_loop_t l_j = mlcc_emit_loop_begin(ctx, lo, hi, 1, "jv");
    MLCC_RETURN_IF_ERROR(mm_tile_vec(mm, i0, imulc(ctx, l_j.iv, w), r, mm->nv));
    mlcc_emit_loop_end(ctx, &l_j);
    return mlcc_ok_status();
  }
  mlcc_loop_t l_j = mlcc_emit_loop_begin(ctx, lo, hi, 1, "jt");
  MLCC_RETURN_IF_ERROR(mm_tile(mm, i0, imulc(ctx, l_j.iv, mm->ct), r, mm->ct));
  mlcc_emit_loop_end(ctx, &l_j);
  return mlcc_ok_status();
}

// The columns after the full tiles (the remainder tile; may be empty) for
// the R rows starting at i0.
static mlcc_status_t mm_rem_cols(mm_t* mm, LLVMValueRef i0, int r) {
  mlcc_emit_ctx_t* ctx = mm->ctx;
  if (mm->vl > 0) {
    int64_t w = (int64_t)mm->nv * mm->vl;
    int64_t vfull = mm->n / w, vrem = (mm->n % w) / mm->vl;
    if (vrem > 0) MLCC_RETURN_IF_ERROR(mm_tile_vec(mm, i0, c64(ctx, vfull * w), r, (int)vrem));
    int64_t col0 = vfull * w + vrem * mm->vl;
    if (col0 >= mm->n) return mlcc_ok_status();
    // Leftover columns (fewer than one vector) as one scalar tile per row group.
    int64_t ncols = mm->n - col0;
    for (int x = 0; x < r; x += kMaxRows) {
      int rr = r - x < kMaxRows ? r - x : kMaxRows;
      MLCC_RETURN_IF_ERROR(mm_tile(mm, iaddc(ctx, i0, x), c64(ctx, col0), rr, (int)ncols));
    }
    return mlcc_ok_status();
  }
  int64_t nfull = mm->n / mm->ct, rem = mm->n % mm->ct;
  if (rem > 0) MLCC_RETURN_IF_ERROR(mm_tile(mm, i0, c64(ctx, nfull * mm->ct), r, (int)rem));
  return mlcc_ok_status();
}

// The R rows starting at i0: all columns (cb == NULL), or only the column
// tiles [cb, ce) of mm_make_plan (tile cfull is the remainder tile).
static mlcc_status_t mm_rows(mm_t* mm, LLVMValueRef i0, int r, LLVMValueRef cb, LLVMValueRef ce) {
  mlcc_emit_ctx_t* ctx = mm->ctx;
  int64_t w = mm->vl > 0 ? (int64_t)mm->nv * mm->vl : mm->ct;
  int64_t cfull = mm->n / w;
  if (cb == NULL) {
    if (cfull > 0) MLCC_RETURN_IF_ERROR(mm_full_cols(mm, i0, r, c64(ctx, 0), c64(ctx, cfull)));
    return mm_rem_cols(mm, i0, r);
  }
  if (cfull > 0) {
    LLVMValueRef lim = c64(ctx, cfull);
    MLCC_RETURN_IF_ERROR(mm_full_cols(mm, i0, r, mlcc_emit_min(ctx, MLCC_DTYPE_I64, cb, lim),
                                      mlcc_emit_min(ctx, MLCC_DTYPE_I64, ce, lim)));
  }
  if (mm->n % w == 0) return mlcc_ok_status();
  LLVMValueRef has_rem = LLVMBuildICmp(ctx->b, LLVMIntSGT, ce, c64(ctx, cfull), "");
  mlcc_if_t br = mlcc_emit_if_begin(ctx, has_rem);
  MLCC_RETURN_IF_ERROR(mm_rem_cols(mm, i0, r));
  mlcc_emit_if_end(ctx, &br);
  return mlcc_ok_status();
}

// Whole product: every batch (mm->batch sets the bases; nbatch 1 without
// it), or with ctx->range_begin/end only the parallel units [begin, end) of
// mm_make_plan (one unit = one row tile of one batch, or one column tile of
// one row tile when the plan splits columns).
static mlcc_status_t mm_emit(mm_t* mm) {
  mlcc_emit_ctx_t* ctx = mm->ctx;
  if (mm->nbatch <= 0) mm->nbatch = 1;
  mm_plan_t p;
  mm_make_plan(mm->dt, mm->m, mm->n, mm->k, mm->b.cs, mm->nbatch, ctx->target, mm->sched, &p);
  mm->ct = p.ct;
  mm->rt = p.rt;
  mm->vl = p.vl;
  mm->nv = p.nv;
  int64_t mfull = mm->m / mm->rt, rem = mm->m % mm->rt;
  if (p.units == 0) return mlcc_ok_status();
  LLVMValueRef zero = c64(ctx, 0), units = c64(ctx, p.units);
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : zero;
  LLVMValueRef re = ctx->range_end ? ctx->range_end : units;
  rb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, rb, units), zero);
  re = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, re, units), zero);
  // Column split: row units [rb / ctiles, ceil(re / ctiles)), each covering
  // its column tiles [cb, ce) that fall inside [rb, re).
  LLVMValueRef cb = NULL, ce = NULL, ru_b = rb, ru_e = re;
  if (p.ctiles > 1) {
    LLVMValueRef cn = c64(ctx, p.ctiles);
    ru_b = LLVMBuildSDiv(ctx->b, rb, cn, "");
    ru_e = LLVMBuildSDiv(ctx->b, iaddc(ctx, re, p.ctiles - 1), cn, "");
  }
  mlcc_loop_t l_u = mlcc_emit_loop_begin(ctx, ru_b, ru_e, 1, "mu");
  if (p.ctiles > 1) {
    LLVMValueRef base = imulc(ctx, l_u.iv, p.ctiles);
    cb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, LLVMBuildSub(ctx->b, rb, base, ""), zero);
    ce = mlcc_emit_min(ctx, MLCC_DTYPE_I64, LLVMBuildSub(ctx->b, re, base, ""), c64(ctx, p.ctiles));
  }
  LLVMValueRef t = l_u.iv;
  if (mm->nbatch > 1 || mm->batch) {
    LLVMValueRef bi = LLVMBuildSDiv(ctx->b, l_u.iv, c64(ctx, p.mtiles), "");
    t = LLVMBuildSRem(ctx->b, l_u.iv, c64(ctx, p.mtiles), "");
    if (mm->batch) mm->batch(mm, bi);
  }
  LLVMValueRef i0 = imulc(ctx, t, mm->rt);
  if (rem == 0) {
    MLCC_RETURN_IF_ERROR(mm_rows(mm, i0, mm->rt, cb, ce));
  } else if (mfull == 0) {
    MLCC_RETURN_IF_ERROR(mm_rows(mm, zero, (int)rem, cb, ce));
  } else {
    mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, t, c64(ctx, mfull), ""));
    MLCC_RETURN_IF_ERROR(mm_rows(mm, i0, mm->rt, cb, ce));
    mlcc_emit_if_else(ctx, &br);
    MLCC_RETURN_IF_ERROR(mm_rows(mm, c64(ctx, mfull * mm->rt), (int)rem, cb, ce));
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_loop_end(ctx, &l_u);
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

typedef struct gemm_store_t {
  const mlcc_node_t* node;
  mlcc_dtype_t dt;
  const mlcc_value_t* c;
  int64_t n;               // output columns
  int64_t cm, cn;          // C's shape right-aligned to 2-D
  double alpha, beta;
} gemm_store_t;

static mlcc_status_t gemm_store(void* user, mlcc_emit_ctx_t* ctx, LLVMValueRef i, LLVMValueRef j,
                                LLVMValueRef acc) {
  gemm_store_t* s = user;
  LLVMValueRef v = acc;
  if (s->alpha != 1.0) v = amul(ctx, s->dt, v, mlcc_emit_const(ctx, s->dt, s->alpha));
  if (s->c && s->beta != 0.0) {
    LLVMValueRef ci = c64(ctx, 0);
    if (s->cm != 1) ci = imulc(ctx, i, s->cn);
    if (s->cn != 1) ci = iadd(ctx, ci, j);
    LLVMValueRef cv = mlcc_emit_load(ctx, s->c, ci);
    if (s->beta != 1.0) cv = amul(ctx, s->dt, cv, mlcc_emit_const(ctx, s->dt, s->beta));
    v = aadd(ctx, s->dt, v, cv);
  }
  LLVMValueRef idx = iadd(ctx, imulc(ctx, i, s->n), j);
  return mlcc_emit_store_output(ctx, s->node, 0, idx, v);
}

// Y = alpha * A' * B' + beta * C (ONNX Gemm 7-17; C broadcast unidirectionally
// to [M, N]). float32/64 and integer types.
static mlcc_status_t emit_gemm(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  const mlcc_value_t* b = mlcc_node_input(node, 1);
  const mlcc_value_t* c = mlcc_node_input(node, 2);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (!a || !b || !y) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Gemm needs A, B and Y");
  mlcc_dtype_t dt = y->dtype;
  if (!supported_dtype(dt) || a->dtype != dt || b->dtype != dt || (c && c->dtype != dt)) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "Gemm supports float32/float64/integers with equal input dtypes; "
                            "got A %s, B %s, Y %s",
                            mlcc_dtype_name(a->dtype), mlcc_dtype_name(b->dtype),
                            mlcc_dtype_name(dt));
  }
  if (a->shape.rank != 2 || b->shape.rank != 2 || y->shape.rank != 2 ||
      (c && c->shape.rank > 2)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "Gemm needs 2-D A, B, Y and C of rank <= 2");
  }
  int64_t trans_a = 0, trans_b = 0;
  float alpha = 1.0f, beta = 1.0f;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "transA", 0, &trans_a));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "transB", 0, &trans_b));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "alpha", 1.0f, &alpha));
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_float(node, "beta", 1.0f, &beta));
  int64_t m = y->shape.dims[0], n = y->shape.dims[1];
  int64_t k = trans_a ? a->shape.dims[0] : a->shape.dims[1];
  int64_t am = trans_a ? a->shape.dims[1] : a->shape.dims[0];
  int64_t bk = trans_b ? b->shape.dims[1] : b->shape.dims[0];
  int64_t bn = trans_b ? b->shape.dims[0] : b->shape.dims[1];
  if (am != m || bn != n || bk != k) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Gemm: A'[%lld,%lld] x B'[%lld,%lld] does not give Y[%lld,%lld]",
                            (long long)am, (long long)k, (long long)bk, (long long)bn,
                            (long long)m, (long long)n);
  }
  gemm_store_t st = {.node = node, .dt = dt, .c = c, .n = n, .cm = 1, .cn = 1,
                     .alpha = alpha, .beta = beta};
  if (c) {
    if (c->shape.rank >= 1) st.cn = c->shape.dims[c->shape.rank - 1];
    if (c->shape.rank == 2) st.cm = c->shape.dims[0];
    if ((st.cm != 1 && st.cm != m) || (st.cn != 1 && st.cn != n)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "Gemm: C [%lld,%lld] does not broadcast to [%lld,%lld]",
                              (long long)st.cm, (long long)st.cn, (long long)m, (long long)n);
    }
  }
  mm_t mm = {.ctx = ctx, .dt = dt, .t = mlcc_emit_type(ctx, dt), .m = m, .n = n, .k = k,
             .store = gemm_store, .user = &st, .sched = node->sched};
  mm.a = (mm_operand_t){a, c64(ctx, 0), trans_a ? 1 : k, trans_a ? m : 1};
  mm.b = (mm_operand_t){b, c64(ctx, 0), trans_b ? 1 : n, trans_b ? k : 1};
  return mm_emit(&mm);
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

typedef struct matmul_store_t {
  const mlcc_node_t* node;
  LLVMValueRef out_base;
  int64_t m, n, k;
  const mlcc_value_t *a, *b;
  mlcc_shape_t ab, bb, ob;   // batch shapes of A, B and Y
} matmul_store_t;

static mlcc_status_t matmul_store(void* user, mlcc_emit_ctx_t* ctx, LLVMValueRef i,
                                  LLVMValueRef j, LLVMValueRef acc) {
  matmul_store_t* s = user;
  LLVMValueRef idx = iadd(ctx, s->out_base, iadd(ctx, imulc(ctx, i, s->n), j));
  return mlcc_emit_store_output(ctx, s->node, 0, idx, acc);
}

static mlcc_status_t matmul_store_vec(void* user, mlcc_emit_ctx_t* ctx, LLVMValueRef i,
                                      LLVMValueRef j, LLVMValueRef v) {
  matmul_store_t* s = user;
  LLVMValueRef idx = iadd(ctx, s->out_base, iadd(ctx, imulc(ctx, i, s->n), j));
  return mlcc_emit_store_output_vec(ctx, s->node, 0, idx, v);
}

static LLVMValueRef batch_index(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* out, LLVMValueRef bi,
                                const mlcc_shape_t* in);

static void matmul_batch(mm_t* mm, LLVMValueRef bi) {
  matmul_store_t* s = mm->user;
  mlcc_emit_ctx_t* ctx = mm->ctx;
  s->out_base = imulc(ctx, bi, s->m * s->n);
  mm->a.base = imulc(ctx, batch_index(ctx, &s->ob, bi, &s->ab), s->m * s->k);
  mm->b.base = imulc(ctx, batch_index(ctx, &s->ob, bi, &s->bb), s->k * s->n);
}

// Batch offset of an operand with batch shape |in| inside the output batch
// shape |out| (numpy broadcast) for output batch index |bi|.
static LLVMValueRef batch_index(mlcc_emit_ctx_t* ctx, const mlcc_shape_t* out, LLVMValueRef bi,
                                const mlcc_shape_t* in) {
  int64_t in_numel = mlcc_shape_numel_unchecked(in);
  if (in_numel == 1) return c64(ctx, 0);
  if (in_numel == mlcc_shape_numel_unchecked(out)) return bi;  // same dims (after 1s)
  return mlcc_emit_broadcast_index(ctx, out, bi, in);
}

// Y = A @ B with numpy semantics (ONNX MatMul 1-17): 1-D operands are
// promoted and the added dim removed; batch dims broadcast.
static mlcc_status_t emit_matmul(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  const mlcc_value_t* b = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (!a || !b || !y) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "MatMul needs A, B and Y");
  mlcc_dtype_t dt = y->dtype;
  if (!supported_dtype(dt) || a->dtype != dt || b->dtype != dt) {
    return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                            "MatMul supports float32/float64/integers with equal dtypes; got "
                            "A %s, B %s, Y %s",
                            mlcc_dtype_name(a->dtype), mlcc_dtype_name(b->dtype),
                            mlcc_dtype_name(dt));
  }
  int ar = a->shape.rank, br = b->shape.rank;
  if (ar < 1 || br < 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "MatMul needs operands of rank >= 1");
  }
  bool a1 = ar == 1, b1 = br == 1;
  int64_t m = a1 ? 1 : a->shape.dims[ar - 2];
  int64_t k = a->shape.dims[ar - 1];
  int64_t bk = b1 ? b->shape.dims[0] : b->shape.dims[br - 2];
  int64_t n = b1 ? 1 : b->shape.dims[br - 1];
  if (k != bk) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "MatMul needs equal reduction dims; got A[...,K=%lld] and "
                            "B[K=%lld,...]",
                            (long long)k, (long long)bk);
  }
  mlcc_shape_t ab = {0}, bb = {0}, ob = {0};
  ab.rank = a1 ? 0 : ar - 2;
  for (int i = 0; i < ab.rank; ++i) ab.dims[i] = a->shape.dims[i];
  bb.rank = b1 ? 0 : br - 2;
  for (int i = 0; i < bb.rank; ++i) bb.dims[i] = b->shape.dims[i];
  ob.rank = y->shape.rank - (a1 ? 0 : 1) - (b1 ? 0 : 1);
  if (ob.rank < 0 || ob.rank < ab.rank || ob.rank < bb.rank) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "MatMul: output rank %d is inconsistent",
                            (int)y->shape.rank);
  }
  for (int i = 0; i < ob.rank; ++i) ob.dims[i] = y->shape.dims[i];
  int64_t nbatch = mlcc_shape_numel_unchecked(&ob);
  if (mlcc_shape_numel_unchecked(&y->shape) != nbatch * m * n) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "MatMul: output shape is inconsistent");
  }
  for (int i = 0; i < ab.rank; ++i) {
    int64_t od = ob.dims[ob.rank - ab.rank + i];
    if (ab.dims[i] != 1 && ab.dims[i] != od) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "MatMul: A's batch dims do not broadcast");
    }
  }
  for (int i = 0; i < bb.rank; ++i) {
    int64_t od = ob.dims[ob.rank - bb.rank + i];
    if (bb.dims[i] != 1 && bb.dims[i] != od) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "MatMul: B's batch dims do not broadcast");
    }
  }
  // B shared by every batch (2-D or 1-D) and A not broadcast: the batches are
  // consecutive rows of one [nbatch*m, k] x [k, n] product.
  if (mlcc_shape_numel_unchecked(&bb) == 1 && mlcc_shape_numel_unchecked(&ab) == nbatch &&
      nbatch > 1) {
    m *= nbatch;
    nbatch = 1;
    ab.rank = 0;
    ob.rank = 0;
  }
  matmul_store_t st = {.node = node, .out_base = c64(ctx, 0), .m = m, .n = n, .k = k,
                       .a = a, .b = b, .ab = ab, .bb = bb, .ob = ob};
  mm_t mm = {.ctx = ctx, .dt = dt, .t = mlcc_emit_type(ctx, dt), .m = m, .n = n, .k = k,
             .store = matmul_store, .store_vec = matmul_store_vec, .user = &st,
             .nbatch = nbatch, .batch = nbatch > 1 ? matmul_batch : NULL,
             .sched = node->sched};
  mm.a = (mm_operand_t){a, c64(ctx, 0), k, 1};
  mm.b = (mm_operand_t){b, c64(ctx, 0), n, 1};
  return mm_emit(&mm);
}

// Shapes of a MatMul as the emitter sees them (batches of B-shared products
// merged into rows). False if the node is not a well-formed MatMul.
static bool matmul_dims(const mlcc_node_t* node, int64_t* nbatch, int64_t* m, int64_t* n,
                        int64_t* k) {
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  const mlcc_value_t* b = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (!a || !b || !y || a->shape.rank < 1 || b->shape.rank < 1) return false;
  int ar = a->shape.rank, br = b->shape.rank;
  bool a1 = ar == 1, b1 = br == 1;
  *m = a1 ? 1 : a->shape.dims[ar - 2];
  *k = a->shape.dims[ar - 1];
  *n = b1 ? 1 : b->shape.dims[br - 1];
  int64_t ynum = mlcc_shape_numel_unchecked(&y->shape);
  if (*m <= 0 || *n <= 0 || ynum % (*m * *n) != 0) return false;
  *nbatch = ynum / (*m * *n);
  int64_t bnum = mlcc_shape_numel_unchecked(&b->shape) / (*k > 0 ? *k * *n : 1);
  int64_t anum = mlcc_shape_numel_unchecked(&a->shape) / (*k > 0 ? *k * *m : 1);
  if (bnum == 1 && anum == *nbatch && *nbatch > 1) {
    *m *= *nbatch;
    *nbatch = 1;
  }
  return true;
}

// The product a Gemm or MatMul node computes, as mm_make_plan sees it.
// False if the node is not a well-formed Gemm or MatMul.
static bool mm_node_dims(const mlcc_node_t* node, int64_t* nbatch, int64_t* m, int64_t* n,
                         int64_t* k, int64_t* b_cs) {
  *nbatch = 1;
  *b_cs = 1;
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (y == NULL) return false;
  if (node->op == MLCC_OP_MATMUL) return matmul_dims(node, nbatch, m, n, k);
  if (node->op != MLCC_OP_GEMM) return false;
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  if (a == NULL || a->shape.rank != 2 || y->shape.rank != 2) return false;
  int64_t ta = 0, tb = 0;
  mlcc_status_t s = mlcc_node_attr_int(node, "transA", 0, &ta);
  if (s == NULL) s = mlcc_node_attr_int(node, "transB", 0, &tb);
  if (s != NULL) {
    mlcc_status_free(s);
    return false;
  }
  *m = y->shape.dims[0];
  *n = y->shape.dims[1];
  *k = ta ? a->shape.dims[0] : a->shape.dims[1];
  *b_cs = tb ? *k : 1;
  return true;
}

// Gemm and MatMul: one unit per (batch, row tile), or per (batch, row tile, column tile)
// when there are fewer than 8 row units (M=1 classifier heads).
static int64_t matmul_parallel_units(const mlcc_node_t* node, const mlcc_target_t* target) {
  int64_t nbatch = 1, m = 0, n = 0, k = 0, b_cs = 1;
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (y == NULL || target == NULL) return 0;
  if (!mm_node_dims(node, &nbatch, &m, &n, &k, &b_cs)) return 0;
  mm_plan_t p;
  mm_make_plan(y->dtype, m, n, k, b_cs, nbatch, target, node->sched, &p);
  return p.parallel ? p.units : 0;
}

// The schedule space (kernels.h, docs/tuning.md): "rows" of the register
// tile (1..8 on the vector path, 1..4 on the scalar path, at most M),
// "vectors" of lanes per tile row (vector path: 1..min(4, N/lanes)) and
// "cols" of the scalar tile (scalar path: 4, 8, 16; 8 at most with
// transposed B). The vector path keeps rows*vectors accumulators, the B
// vectors and the A broadcast in registers.
static uint32_t matmul_sched_values(const mlcc_node_t* node, const mlcc_target_t* target,
                                    uint32_t param, int32_t* out, uint32_t cap) {
  int64_t nbatch = 1, m = 0, n = 0, k = 0, b_cs = 1;
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (y == NULL || !mm_node_dims(node, &nbatch, &m, &n, &k, &b_cs) || m <= 0 || n <= 0) return 0;
  int L = 0, nregs = 0;
  bool vec = mm_vector_path(y->dtype, n, k, b_cs, target, &L, &nregs);
  uint32_t count = 0;
  if (param == kSchedRows) {
    int64_t hi = vec ? 8 : kMaxRows;
    if (hi > m) hi = m;
    for (int64_t r = 1; r <= hi; ++r) {
      if (count < cap) out[count] = (int32_t)r;
      ++count;
    }
  } else if (param == kSchedVectors && vec) {
    int64_t hi = n / L < 4 ? n / L : 4;
    for (int64_t v = 1; v <= hi; ++v) {
      if (count < cap) out[count] = (int32_t)v;
      ++count;
    }
  } else if (param == kSchedCols && !vec) {
    static const int32_t cols[] = {4, 8, 16};
    for (int i = 0; i < 3; ++i) {
      if (cols[i] > 8 && b_cs != 1) continue;
      if (count < cap) out[count] = cols[i];
      ++count;
    }
  }
  return count;
}

static bool matmul_sched_valid(const mlcc_node_t* node, const mlcc_target_t* target,
                               const int32_t* sched) {
  int64_t nbatch = 1, m = 0, n = 0, k = 0, b_cs = 1;
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (y == NULL || !mm_node_dims(node, &nbatch, &m, &n, &k, &b_cs)) return false;
  int L = 0, nregs = 0;
  if (!mm_vector_path(y->dtype, n, k, b_cs, target, &L, &nregs)) return true;
  // The point as mm_make_plan resolves it: accumulators + B vectors + A.
  mm_plan_t p;
  mm_make_plan(y->dtype, m, n, k, b_cs, nbatch, target, sched, &p);
  return p.rt * p.nv + p.nv + 1 <= nregs;
}

static const mlcc_sched_space_t mlcc_emit_matmul_space = {
    .version = 1,
    .n_params = 3,
    .names = {"rows", "vectors", "cols"},
    .values = matmul_sched_values,
    .valid = matmul_sched_valid,
};

// FLOPs (kernels.h): 2*K per output element.
static int64_t matmul_flops(const mlcc_node_t* n) {
  const mlcc_value_t* a = mlcc_node_input(n, 0);
  if (a == NULL || !a->shape_known || a->shape.rank < 1) return -1;
  return 2 * mlcc_kernels_numel(mlcc_node_output(n, 0)) * a->shape.dims[a->shape.rank - 1];
}

static int64_t gemm_flops(const mlcc_node_t* n) {
  const mlcc_value_t* a = mlcc_node_input(n, 0);
  if (a == NULL || !a->shape_known || a->shape.rank != 2) return -1;
  int64_t trans_a = 0;
  mlcc_status_t s = mlcc_node_attr_int(n, "transA", 0, &trans_a);
  if (s != NULL) {
    mlcc_status_free(s);
    return -1;
  }
  return 2 * mlcc_kernels_numel(mlcc_node_output(n, 0)) * a->shape.dims[trans_a ? 0 : 1];
}

// pack.h. With B transposed (b_cs = K) the full tiles of a product of at
// least kMaxRows rows are scalar tiles (kMaxRows x 8 is over mm_tile_dot's 24
// accumulators) whose strided B loads the SLP vectorizer gathers: the
// transformer's 64x128x128 out_proj ran at 29 GFLOP/s against 160-200 for
// its MatMuls. Stored as [K, N] the same product takes the vector
// micro-kernel. Products of fewer rows (M = 1 classifier heads) keep the dot
// form, which streams B once along k.
bool mlcc_gemm_transpose_b_wins(const mlcc_node_t* node, const mlcc_target_t* target) {
  if (node == NULL || node->op != MLCC_OP_GEMM || target == NULL) return false;
  const mlcc_value_t* a = mlcc_node_input(node, 0);
  const mlcc_value_t* b = mlcc_node_input(node, 1);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  if (a == NULL || b == NULL || y == NULL || !b->shape_known || !y->shape_known ||
      b->dtype != MLCC_DTYPE_F32 || y->dtype != MLCC_DTYPE_F32 || b->shape.rank != 2 ||
      y->shape.rank != 2) {
    return false;
  }
  int64_t trans_b = 0;
  mlcc_status_t s = mlcc_node_attr_int(node, "transB", 0, &trans_b);
  if (s != NULL) {
    mlcc_status_free(s);
    return false;
  }
  int64_t m = y->shape.dims[0], n = y->shape.dims[1], k = b->shape.dims[1];
  if (trans_b != 1 || b->shape.dims[0] != n || m < kMaxRows) return false;
  int L = 0, nregs = 0;
  return mm_vector_path(MLCC_DTYPE_F32, n, k, 1, target, &L, &nregs);
}

//===----------------------------------------------------------------------===//
// Emitters (targets/kernels/kernels.h; named by the emit column of ir/ops.def)
//===----------------------------------------------------------------------===//

const mlcc_emitter_t mlcc_emit_gemm = {
    .emit = emit_gemm,
    .parallel_units = matmul_parallel_units,
    .flops = gemm_flops,
    .sched_space = &mlcc_emit_matmul_space,
};
const mlcc_emitter_t mlcc_emit_matmul = {
    .emit = emit_matmul,
    .parallel_units = matmul_parallel_units,
    .flops = matmul_flops,
    .sched_space = &mlcc_emit_matmul_space,
};

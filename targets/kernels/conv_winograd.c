// SPDX-License-Identifier: Apache-2.0
// Winograd convolution F(m x m, 3 x 3), m = 2 or 4 (Lavin & Gray, "Fast
// Algorithms for Convolutional Neural Networks", CVPR 2016), for ONNX Conv
// (opsets 1-17): 3x3 kernel, strides 1, dilations 1, group 1, any pads,
// float32, 2 spatial dims. See targets/kernels/conv_winograd.h and pack.h.
//
// The output is cut into tiles of m x m pixels (TH x TW tiles; each reads an
// alpha x alpha input patch, alpha = m + 2). With U = G g G^T precomputed per
// (oc, ic) at compile time (pack-weights), one tile is
//   Y = A^T [ sum_ic U[oc, ic] (.) V[ic] ] A,   V[ic] = B^T d[ic] B,
// i.e. alpha^2 independent GEMMs M[xi] = U[xi] (M x C) * V[xi] (C x tiles),
// which take (alpha/m)^2 / 9 of the direct conv's multiplies.
//
// Work is split into blocks of RB tile rows (T = RB*TW tiles, the block's
// "lanes" rounded up to L, the target's float lanes). Per block:
//  1. input transform: per input channel, tiles are taken L at a time along
//     a tile row (or several narrow tile rows per vector): each patch row is
//     loaded as a few whole vectors of X (compile-time masks for padded
//     columns, a select for padded rows), patch column j of tile l is lane
//     l*m + j of those (one shuffle), and B^T . B runs on whole vectors. V
//     goes to a panel [alpha^2][C][TS] on the stack;
//  2. per block of MR output channels and chunk of NV vectors of tiles:
//     alpha^2 register-blocked GEMMs (MR x NV vector accumulators; per input
//     channel NV vector loads of V and MR broadcasts of U, packed
//     channel-block-contiguous) leave M in a small stack buffer; the output
//     transform A^T . A then runs per vector of tiles, adds the bias,
//     interleaves the m columns of each tile back into output rows and
//     stores them through mlcc_emit_store_output_vec (fused epilogues run
//     on vectors).
// The pack-weights pass picks F(2x2), F(4x4) or the direct kernels per layer
// with a cost model fitted on measured layer times (wino_cost).
// Parallel units are (image, block, chunk of channel blocks) triples; units
// of one block in one range share its input transform.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ops/spatial.h"
#include "targets/emit/emit.h"
#include "targets/emit/emit_helpers.h"
#include "targets/kernels/conv_winograd.h"
#include "targets/kernels/pack.h"

enum {
  kWinoMaxAlpha = 6,
  kWinoMaxXi = 36,
  kWinoMaxL = 16,
  kWinoMaxMr = 24,
  kWinoMaxNv = 4,
  kWinoTargetUnits = 8,  // enough parallel units for the entry's tasks
};

// Stack budget of one kernel call (input panel + output buffer; the
// kernel's NAME_STACK_SIZE share, mlcc_conv_winograd_stack_bytes). 768 KiB
// keeps every blocking the cost model picked with 1 MiB on x86 (AVX2 and
// AVX-512) for the shared models, and caps the 4-lane targets' largest
// panels (resnet18's 28x28x128 layers: one block of 959 KB) at two blocks.
static const int64_t kWinoStackBytes = (int64_t)768 << 10;

//===----------------------------------------------------------------------===//
// Weight transform (compile time)
//===----------------------------------------------------------------------===//

static const double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
static const double kG4[6][3] = {{1.0 / 4, 0, 0},
                                 {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                 {0, 0, 1}};

void mlcc_conv_winograd_pack_weights(const float* w, int64_t mo, int64_t c, int64_t m,
                                     int64_t mr, float* out) {
  int alpha = (int)m + 2;
  const double(*gm)[3] = m == 4 ? kG4 : kG2;
  int64_t nxi = (int64_t)alpha * alpha;
  for (int64_t oc = 0; oc < mo; ++oc) {
    int64_t oc0 = oc - oc % mr;
    int64_t bs = mo - oc0 < mr ? mo - oc0 : mr;
    for (int64_t ic = 0; ic < c; ++ic) {
      const float* g = w + (oc * c + ic) * 9;
      double tmp[kWinoMaxAlpha][3];  // G g
      for (int i = 0; i < alpha; ++i) {
        for (int k = 0; k < 3; ++k) {
          tmp[i][k] = gm[i][0] * g[k] + gm[i][1] * g[3 + k] + gm[i][2] * g[6 + k];
        }
      }
      for (int i = 0; i < alpha; ++i) {
        for (int j = 0; j < alpha; ++j) {
          double u = tmp[i][0] * gm[j][0] + tmp[i][1] * gm[j][1] + tmp[i][2] * gm[j][2];
          int64_t xi = i * alpha + j;
          out[oc0 * c * nxi + (xi * c + ic) * bs + (oc - oc0)] = (float)u;
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Geometry and plan
//===----------------------------------------------------------------------===//

typedef struct wino_geom_t {
  int64_t n, c, mo;      // batch, input channels, output channels
  int64_t h, w, oh, ow;  // input and output spatial dims
  int64_t pt, pl;        // top and left padding
} wino_geom_t;

// Reads |node|'s geometry; false if it is not a 2-D float32 Conv with a
// 3x3 kernel, strides 1, dilations 1 and group 1. W's spatial dims are not
// looked at (they differ between the ONNX and the Winograd layouts): the
// window (mlcc_spatial_resolve_as, ir/ops/spatial.h) is resolved with W
// read as [M, C, 3, 3], M and C from Y and X.
static bool wino_geom(const mlcc_node_t* node, wino_geom_t* g) {
  memset(g, 0, sizeof(*g));
  if (node == NULL || node->op != MLCC_OP_CONV) return false;
  const mlcc_value_t* x = mlcc_node_input(node, 0);
  const mlcc_value_t* y = mlcc_node_output(node, 0);
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  if (x == NULL || y == NULL || w == NULL || !x->shape_known || !y->shape_known) return false;
  if (x->dtype != MLCC_DTYPE_F32 || y->dtype != MLCC_DTYPE_F32) return false;
  if (x->shape.rank != 4 || y->shape.rank != 4) return false;
  mlcc_value_t w33 = *w;
  w33.shape_known = true;
  w33.shape.rank = 4;
  w33.shape.dims[0] = y->shape.dims[1];
  w33.shape.dims[1] = x->shape.dims[1];
  w33.shape.dims[2] = w33.shape.dims[3] = 3;
  mlcc_spatial_t sp;
  mlcc_status_t st = mlcc_spatial_resolve_as(node, MLCC_OP_CONV, 0, x, &w33, &sp);
  if (st != NULL) {
    mlcc_status_free(st);
    return false;
  }
  if (sp.group != 1) return false;
  for (int i = 0; i < 2; ++i) {
    if (sp.kernel[i] != 3 || sp.strides[i] != 1 || sp.dilations[i] != 1) return false;
  }
  g->n = x->shape.dims[0];
  g->c = x->shape.dims[1];
  g->h = x->shape.dims[2];
  g->w = x->shape.dims[3];
  g->mo = y->shape.dims[1];
  g->oh = y->shape.dims[2];
  g->ow = y->shape.dims[3];
  if (y->shape.dims[0] != g->n || g->n <= 0 || g->c <= 0 || g->mo <= 0 || g->h <= 0 ||
      g->w <= 0 || g->oh <= 0 || g->ow <= 0 || g->oh != sp.out[0] || g->ow != sp.out[1]) {
    return false;
  }
  g->pt = sp.pad_begin[0];
  g->pl = sp.pad_begin[1];
  // i64 index arithmetic in the kernel stays far from overflow.
  if (g->n * g->c * g->h * g->w >= ((int64_t)1 << 40) ||
      g->n * g->mo * g->oh * g->ow >= ((int64_t)1 << 40) || g->mo * g->c >= ((int64_t)1 << 30)) {
    return false;
  }
  return true;
}

typedef struct wino_plan_t {
  int m, alpha, nxi;  // tile size, patch size, transform elements
  int L, nv, mr;      // lanes; GEMM vectors per chunk; channels per block
  int nregs;
  int64_t th, tw;     // tile rows and columns
  int64_t rb, nblk, rlast;  // tile rows per block, blocks, rows of the last block
  int64_t rv;         // tile rows per input-transform vector (TW < L), else 1
  int64_t ts;         // panel lanes per (xi, ic) row (multiple of L)
  int64_t xs;         // panel stride between xi: C*ts + L (the transform's
                      // alpha^2 stores of one vector hit distinct cache sets)
  int64_t ms;         // output-buffer lanes per (xi, channel) row
  int64_t ocb;        // channel blocks (ceil(mo / mr))
  int64_t cchunk;     // channel blocks per unit
  int64_t noc;        // channel chunks
  int64_t units;      // n * nblk * noc
} wino_plan_t;

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int target_lanes(const mlcc_target_t* target) {
  int L = target != NULL ? target->vector_bytes / 4 : 4;
  if (L < 4) L = 4;
  if (L > kWinoMaxL) L = kWinoMaxL;
  return L;
}

// Vector registers of L floats: 32 on AVX-512 and NEON, 16 on AVX2; RVV
// (L = 8) holds 16 at the VLEN of 128 LLVM assumes (register pairs; spills
// of those are whole-register moves that qemu 7.2 cannot run, see
// targets/emit/emit.c); without V a vector is 4 of the 32 scalar FP registers.
static int target_regs(const mlcc_target_t* target, int L) {
  if (target == NULL) return 16;
  if (target->arch == MLCC_ARCH_X86_64) return L < 16 ? 16 : 32;
  if (target->arch == MLCC_ARCH_RISCV64) return target->vector_bytes > 16 ? 16 : 8;
  return 32;
}

// GEMM vectors per chunk for a channel block of |mr|: as many as the
// registers hold (mr*nv accumulators + nv loads + 2 spare).
static int plan_nv(int nregs, int mr) {
  int nv = (nregs - 2) / (mr + 1);
  if (nv < 1) nv = 1;
  if (nv > kWinoMaxNv) nv = kWinoMaxNv;
  return nv;
}

// Picks the tile-row blocking for tile size |m| (everything but mr/nv).
// False if no blocking fits the stack budget.
static bool plan_blocks(const wino_geom_t* g, int m, int L, wino_plan_t* p) {
  p->m = m;
  p->alpha = m + 2;
  p->nxi = p->alpha * p->alpha;
  p->L = L;
  p->th = ceil_div(g->oh, m);
  p->tw = ceil_div(g->ow, m);
  // Narrow rows: several tile rows per input-transform vector (their loads,
  // nq vectors per row, feed one lane shuffle of at most 8 vectors).
  p->rv = 1;
  if (p->tw < L) {
    int64_t nq = ceil_div((p->tw - 1) * m + p->alpha, L);
    p->rv = L / p->tw;
    while (p->rv > 1 && p->rv * nq > 8) --p->rv;
  }
  int64_t ubytes = (int64_t)p->nxi * g->mo * g->c * 4;
  // Lane efficiency of every blocking within the budget. The output buffer
  // takes nxi * mr * nv * L floats, and mr * nv <= max(nregs - 2, mr) <= 30
  // (plan_nv, kWinoMaxMr).
  int64_t mb_max = (int64_t)p->nxi * 30 * L * 4;
  // Pass 1: the best lane efficiency; pass 2: among blockings within 2% of
  // it, U larger than a share of L2 (streamed once per block) takes the
  // fewest blocks and of those the smallest panel (resnet18's 28x28x128
  // layers on AVX-512: 4 tile rows, 592 KB, ran 3-8% faster than 6 rows,
  // 887 KB, and need less stack); else the fewest blocks whose GEMM has at
  // least 2 vectors of tiles (fewer loads per FMA), else 1 vector (more
  // parallel units).
  double best = 0.0;
  for (int pass = 0; pass < 2; ++pass) {
    int64_t pick_rb = 0;
    for (int64_t rb = 1; rb <= p->th; ++rb) {
      int64_t ts = round_up(rb * p->tw, L);
      if ((int64_t)p->nxi * (g->c * ts + L) * 4 + mb_max > kWinoStackBytes) break;
      int64_t nblk = ceil_div(p->th, rb), rlast = p->th - (nblk - 1) * rb;
      int64_t lanes = (nblk - 1) * ts + round_up(rlast * p->tw, L);
      double eff = (double)(p->th * p->tw) / (double)lanes;
      if (pass == 0) {
        if (eff > best) best = eff;
        continue;
      }
      if (eff < best - 0.02) continue;
      if (ubytes > ((int64_t)1 << 20)) {
        // The fewest blocks (U streams once per block); of those the
        // smallest panel (loop order: the first rb to reach that count).
        if (pick_rb == 0 || nblk < ceil_div(p->th, pick_rb)) pick_rb = rb;
      } else if (pick_rb == 0 || (round_up(pick_rb * p->tw, L) < 2 * L && ts >= 2 * L)) {
        pick_rb = rb;
      }
    }
    if (pass == 1 && pick_rb > 0) {
      p->rb = pick_rb;
      p->ts = round_up(pick_rb * p->tw, L);
      p->nblk = ceil_div(p->th, pick_rb);
      p->rlast = p->th - (p->nblk - 1) * pick_rb;
      p->xs = g->c * p->ts + L;
    }
  }
  return p->rb > 0;
}

// Completes the plan for channel block |mr| on |target|.
static void plan_finish(const wino_geom_t* g, const mlcc_target_t* target, int mr,
                        wino_plan_t* p) {
  p->nregs = target_regs(target, p->L);
  p->mr = mr;
  p->nv = plan_nv(p->nregs, mr);
  p->ms = (int64_t)p->nv * p->L;
  p->ocb = ceil_div(g->mo, mr);
  // Few blocks: also split the channel blocks into chunks, so that a few
  // threads get balanced work. Each chunk redoes its block's input
  // transform (about 21/M of the block's GEMM, see wino_cost), so chunks
  // stop at 25% extra work, or 2 units.
  int64_t base = g->n * p->nblk;
  p->noc = base >= kWinoTargetUnits ? 1 : ceil_div(kWinoTargetUnits, base);
  int64_t cap = 1 + g->mo / 84;
  if (cap < ceil_div(2, base)) cap = ceil_div(2, base);
  if (p->noc > cap) p->noc = cap;
  if (p->noc > p->ocb) p->noc = p->ocb;
  p->cchunk = ceil_div(p->ocb, p->noc);
  p->noc = ceil_div(p->ocb, p->cchunk);
  p->units = base * p->noc;
}

// Schedule parameters (the Conv space's indices, targets/kernels/conv.c):
// 0 = the heuristic's choice.
enum { kWinoSchedRows = 1, kWinoSchedVectors = 2 };

// Largest mb_max of plan_blocks: nxi * 30 * L floats.
static int64_t plan_mb_max(const wino_plan_t* p) { return (int64_t)p->nxi * 30 * p->L * 4; }

// Sets the blocking to |rb| tile rows per block; false (|p| unchanged) if
// rb is outside 1..th or its panel exceeds the stack budget.
static bool plan_set_rows(const wino_geom_t* g, int64_t rb, wino_plan_t* p) {
  if (rb < 1 || rb > p->th) return false;
  int64_t ts = round_up(rb * p->tw, p->L);
  if ((int64_t)p->nxi * (g->c * ts + p->L) * 4 + plan_mb_max(p) > kWinoStackBytes) return false;
  p->rb = rb;
  p->ts = ts;
  p->nblk = ceil_div(p->th, rb);
  p->rlast = p->th - (p->nblk - 1) * rb;
  p->xs = g->c * ts + p->L;
  return true;
}

// GEMM vectors |nv| fit with |mr| rows: mr*nv accumulators + nv loads + 1.
static bool plan_nv_fits(int nregs, int mr, int nv) {
  return nv >= 1 && nv <= kWinoMaxNv && mr * nv + nv + 1 <= nregs;
}

// Plans blocking, then channel block |mr|, with |sched|'s rows and vectors
// where they are valid (a value that does not fit this geometry or target
// is ignored: the stack and unit queries of other targets see the same
// schedule).
static bool plan_with_sched(const wino_geom_t* g, const mlcc_target_t* target, int m, int mr,
                            const int32_t* sched, wino_plan_t* p) {
  memset(p, 0, sizeof(*p));
  if (!plan_blocks(g, m, target_lanes(target), p)) return false;
  if (sched[kWinoSchedRows] > 0) (void)plan_set_rows(g, sched[kWinoSchedRows], p);
  plan_finish(g, target, mr, p);
  int32_t nv = sched[kWinoSchedVectors];
  if (nv > 0 && nv != p->nv && plan_nv_fits(p->nregs, mr, nv)) {
    p->nv = nv;
    p->ms = (int64_t)nv * p->L;
  }
  return true;
}

// The Winograd layout {m, mr} of |node|, or false.
static bool wino_layout(const mlcc_node_t* node, int* out_m, int* out_mr) {
  const mlcc_attr_t* a = node != NULL ? mlcc_node_attr(node, MLCC_CONV_WINOGRAD_ATTR) : NULL;
  if (a == NULL || a->kind != MLCC_ATTR_INTS || a->count != 2) return false;
  if ((a->ints[0] != 2 && a->ints[0] != 4) || a->ints[1] < 1 || a->ints[1] > kWinoMaxMr) {
    return false;
  }
  *out_m = (int)a->ints[0];
  *out_mr = (int)a->ints[1];
  return true;
}

bool mlcc_conv_is_winograd(const mlcc_node_t* node) {
  return node != NULL && mlcc_node_attr(node, MLCC_CONV_WINOGRAD_ATTR) != NULL;
}

// Full plan of a node in the Winograd layout; false if it does not apply.
static bool wino_make_plan(const mlcc_node_t* node, const mlcc_target_t* target,
                           wino_geom_t* g, wino_plan_t* p) {
  memset(p, 0, sizeof(*p));
  int m = 0, mr = 0;
  if (!wino_layout(node, &m, &mr) || !wino_geom(node, g)) return false;
  return plan_with_sched(g, target, m, mr, node->sched, p);
}

int64_t mlcc_emit_conv_winograd_parallel_units(const mlcc_node_t* node,
                                               const mlcc_target_t* target) {
  wino_geom_t g;
  wino_plan_t p;
  if (!wino_make_plan(node, target, &g, &p)) return 0;
  return p.units > 1 ? p.units : 0;
}

// Cost model of the choice between the direct kernels and F(2x2) or
// F(4x4), in units of one GEMM multiply-add on one lane. Fitted on per-layer
// timings of the 13 distinct 3x3 stride-1 convs of resnet18, squeezenet1_1
// and the detector with AVX-512 (7x7 to 80x80 pixels, 16 to 512 channels,
// each conv timed alone, F(2x2) and F(4x4) forced): predicted
// Winograd/direct ratios within about 10% of the measured ones. Terms: the GEMM over padded tile lanes, the input
// transform (21 per transformed input element), the output transform (4.2
// per transformed output element), U streamed again for every further
// block (1.4 per byte), and both kernels' first read of their weights (4 per
// byte; U is (alpha/3)^2 times W).
static const double kWinoMinGain = 0.9;  // model error margin

// Inside whole models U comes from memory, not from the cache it sits in
// when a conv is timed alone: a U beyond about L2 + a bit, multiplied into
// fewer than kWinoMinReuse tile lanes per element (small images, many
// channels: resnet18's layer3/4) made the Winograd kernel memory-bound and
// no faster than the direct one in whole-model profiles. Those stay direct.
static const int64_t kWinoMaxColdU = (int64_t)3 << 20;
static const int64_t kWinoMinReuse = 128;

static double direct_cost(const wino_geom_t* g) {
  double wbytes = 9.0 * (double)g->c * (double)g->mo * 4.0;
  return 1.03 * 9.0 * (double)g->c * (double)g->mo * (double)(g->n * g->oh * g->ow) +
         4.0 * wbytes;
}

// Tile lanes of the whole conv (padded lanes of every block of every image).
static int64_t wino_lanes(const wino_geom_t* g, const wino_plan_t* p) {
  return g->n * ((p->nblk - 1) * p->ts + round_up(p->rlast * p->tw, p->L));
}

static double wino_cost(const wino_geom_t* g, const wino_plan_t* p) {
  double lanes = (double)wino_lanes(g, p);
  double nxi = p->nxi, c = (double)g->c, mo = (double)g->mo;
  double ubytes = nxi * mo * c * 4.0;
  return nxi * c * mo * lanes + 21.0 * nxi * c * lanes + 4.2 * nxi * mo * lanes +
         1.4 * ubytes * (double)(g->n * p->nblk - 1) + 4.0 * ubytes;
}

// False if U would stream from memory with too little reuse (see above).
static bool wino_memory_ok(const wino_geom_t* g, const wino_plan_t* p) {
  int64_t ubytes = (int64_t)p->nxi * g->mo * g->c * 4;
  return ubytes <= kWinoMaxColdU || wino_lanes(g, p) >= kWinoMinReuse;
}

// Channel block for |mo| output channels: as many rows as the registers
// allow for the GEMM's vector count, balanced over the blocks.
static int choose_mr(int64_t mo, int nregs, int vecs) {
  int nv = vecs <= 1 ? 1 : (vecs % 2 != 0 && vecs % 3 == 0) ? 3 : 2;
  int mr = (nregs - 2 - nv) / nv;
  if (mr > kWinoMaxMr) mr = kWinoMaxMr;
  if (mr < 1) mr = 1;
  int64_t nb = ceil_div(mo, mr);
  return (int)ceil_div(mo, nb);
}

// The layout {m, mr} the pack-weights pass picks for the conv of geometry
// |g| on |target| by the cost model, or false (the direct kernels win).
static bool wino_choose_geom(const wino_geom_t* g, const mlcc_target_t* target, int* out_m,
                             int* out_mr) {
  // Tile size by the cost model; Winograd only where it clearly wins.
  if (g->c < 8 || g->mo < 8) return false;
  int L = target_lanes(target);
  int m = 0;
  double best = kWinoMinGain * direct_cost(g);
  wino_plan_t p;
  for (int cand = 2; cand <= 4; cand += 2) {
    wino_plan_t q;
    memset(&q, 0, sizeof(q));
    if (!plan_blocks(g, cand, L, &q) || !wino_memory_ok(g, &q)) continue;
    double cost = wino_cost(g, &q);
    if (cost < best) {
      best = cost;
      m = cand;
      p = q;
    }
  }
  if (m == 0) return false;
  *out_m = m;
  *out_mr = choose_mr(g->mo, target_regs(target, L), (int)(p.ts / L));
  return true;
}

bool mlcc_conv_winograd_choose(const mlcc_node_t* node, const mlcc_target_t* target,
                               int64_t* out_m, int64_t* out_mr) {
  *out_m = 0;
  *out_mr = 0;
  if (node == NULL || target == NULL || node->op != MLCC_OP_CONV) return false;
  if (mlcc_node_attr(node, MLCC_CONV_WINOGRAD_ATTR) != NULL ||
      mlcc_node_attr(node, MLCC_CONV_PACKED_ATTR) != NULL) {
    return false;
  }
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  if (w == NULL || w->kind != MLCC_VALUE_CONSTANT || w->dtype != MLCC_DTYPE_F32 ||
      !w->shape_known || w->shape.rank != 4 || w->shape.dims[2] != 3 || w->shape.dims[3] != 3) {
    return false;
  }
  wino_geom_t g;
  if (!wino_geom(node, &g) || w->shape.dims[0] != g.mo || w->shape.dims[1] != g.c) return false;
  const mlcc_value_t* b = mlcc_node_input(node, 2);
  if (b != NULL && (b->dtype != MLCC_DTYPE_F32 || !b->shape_known ||
                    mlcc_shape_numel_unchecked(&b->shape) != g.mo)) {
    return false;
  }
  int m = 0, mr = 0;
  if (!wino_choose_geom(&g, target, &m, &mr)) return false;
  *out_m = m;
  *out_mr = mr;
  return true;
}

// Bytes of the kernel's stack buffers for |plan|: the input panel
// [nxi][xs] and the GEMM output buffer [nxi][mr][ms], floats.
static int64_t wino_buffer_bytes(const wino_plan_t* p) {
  return ((int64_t)p->nxi * p->xs + (int64_t)p->nxi * p->mr * p->ms) * 4;
}

int64_t mlcc_conv_winograd_stack_bytes(const mlcc_node_t* node, const mlcc_target_t* target) {
  // The layout the pack-weights pass picks on |target|
  // (mlcc_conv_winograd_choose) from the node's geometry alone, so a node
  // that some other target packed (W transformed, a layout attribute)
  // reports the same bytes; W must be a float32 constant.
  wino_geom_t g;
  int m = 0, mr = 0;
  const mlcc_value_t* w = mlcc_node_input(node, 1);
  if (target == NULL || w == NULL || w->kind != MLCC_VALUE_CONSTANT ||
      w->dtype != MLCC_DTYPE_F32 || !wino_geom(node, &g) ||
      !wino_choose_geom(&g, target, &m, &mr)) {
    return 0;
  }
  wino_plan_t p;
  if (!plan_with_sched(&g, target, m, mr, node->sched, &p)) return 0;
  return wino_buffer_bytes(&p);
}

uint32_t mlcc_conv_winograd_sched_values(const mlcc_node_t* node, const mlcc_target_t* target,
                                         uint32_t param, int32_t* out, uint32_t cap) {
  wino_geom_t g;
  wino_plan_t p;
  int m = 0, mr = 0;
  int32_t zero[MLCC_SCHED_MAX_PARAMS] = {0};
  if (target == NULL || !wino_layout(node, &m, &mr) || !wino_geom(node, &g) ||
      !plan_with_sched(&g, target, m, mr, zero, &p)) {
    return 0;
  }
  uint32_t count = 0;
  if (param == kWinoSchedRows) {
    for (int64_t rb = 1; rb <= p.th && rb <= INT32_MAX; ++rb) {
      wino_plan_t q = p;
      if (!plan_set_rows(&g, rb, &q)) break;  // larger blocks only grow the panel
      if (count < cap) out[count] = (int32_t)rb;
      ++count;
    }
  } else if (param == kWinoSchedVectors) {
    for (int nv = 1; nv <= kWinoMaxNv; ++nv) {
      if (!plan_nv_fits(p.nregs, mr, nv) && nv != p.nv) continue;
      if (count < cap) out[count] = nv;
      ++count;
    }
  }
  return count;
}

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

typedef struct wino_t {
  mlcc_emit_ctx_t* ctx;
  const mlcc_node_t* node;
  const wino_geom_t* g;
  const wino_plan_t* p;
  const mlcc_value_t *x, *w, *bias;
  LLVMTypeRef vt;  // <L x float>
  LLVMValueRef xptr, wptr, panel, mbuf;
  // Per unit.
  LLVMValueRef n;    // image
  LLVMValueRef tr0;  // first tile row of the block
} wino_t;

static LLVMValueRef gep(wino_t* e, LLVMValueRef base, LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(e->ctx->b, e->ctx->t_f32, base, &idx, 1, "");
}

static LLVMValueRef vload(wino_t* e, LLVMValueRef base, LLVMValueRef idx, unsigned align) {
  LLVMValueRef v = LLVMBuildLoad2(e->ctx->b, e->vt, gep(e, base, idx), "");
  LLVMSetAlignment(v, align);
  return v;
}

static void vstore(wino_t* e, LLVMValueRef v, LLVMValueRef base, LLVMValueRef idx,
                   unsigned align) {
  LLVMValueRef s = LLVMBuildStore(e->ctx->b, v, gep(e, base, idx));
  LLVMSetAlignment(s, align);
}

static LLVMValueRef i32c(wino_t* e, int64_t v) {
  return LLVMConstInt(e->ctx->t_i32, (unsigned long long)v, 0);
}

// <L x float> of constant |v|.
static LLVMValueRef vconst(wino_t* e, double v) {
  LLVMValueRef c = LLVMConstReal(e->ctx->t_f32, v);
  LLVMValueRef lanes[kWinoMaxL];
  for (int i = 0; i < e->p->L; ++i) lanes[i] = c;
  return LLVMConstVector(lanes, (unsigned)e->p->L);
}

static LLVMValueRef vsplat(wino_t* e, LLVMValueRef s) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMValueRef undef = LLVMGetUndef(e->vt);
  LLVMValueRef ins = LLVMBuildInsertElement(ctx->b, undef, s, i32c(e, 0), "");
  LLVMValueRef zeros[kWinoMaxL];
  for (int i = 0; i < e->p->L; ++i) zeros[i] = i32c(e, 0);
  return LLVMBuildShuffleVector(ctx->b, ins, undef, LLVMConstVector(zeros, (unsigned)e->p->L), "");
}

static LLVMValueRef fadd(wino_t* e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFAdd(e->ctx->b, a, b, "");
}
static LLVMValueRef fsub(wino_t* e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFSub(e->ctx->b, a, b, "");
}
// a*c + b for a constant c.
static LLVMValueRef fmac(wino_t* e, LLVMValueRef a, double c, LLVMValueRef b) {
  return mlcc_emit_fmuladd(e->ctx, a, vconst(e, c), b);
}

// Lanes |idx[0..n)| of the concatenation of |vs[0..nvs)| (each <L x float>),
// as an <n x float> vector (a scalar when n == 1). Index -1: don't care.
static LLVMValueRef pick(wino_t* e, const LLVMValueRef* vs, int nvs, const int* idx, int n) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  LLVMValueRef cur[8];
  int cnt = nvs, width = e->p->L;
  for (int i = 0; i < nvs; ++i) cur[i] = vs[i];
  while (cnt > 1) {
    LLVMValueRef cat[4 * kWinoMaxL * 8];
    for (int i = 0; i < 2 * width; ++i) cat[i] = i32c(e, i);
    LLVMValueRef mask = LLVMConstVector(cat, (unsigned)(2 * width));
    int next = 0;
    for (int i = 0; i < cnt; i += 2) {
      LLVMValueRef b = i + 1 < cnt ? cur[i + 1] : LLVMGetUndef(LLVMTypeOf(cur[i]));
      cur[next++] = LLVMBuildShuffleVector(ctx->b, cur[i], b, mask, "");
    }
    cnt = next;
    width *= 2;
  }
  if (n == 1) return LLVMBuildExtractElement(ctx->b, cur[0], i32c(e, idx[0] < 0 ? 0 : idx[0]), "");
  LLVMValueRef sel[64];
  for (int i = 0; i < n; ++i) sel[i] = idx[i] < 0 ? LLVMGetUndef(ctx->t_i32) : i32c(e, idx[i]);
  return LLVMBuildShuffleVector(ctx->b, cur[0], LLVMGetUndef(LLVMTypeOf(cur[0])),
                                LLVMConstVector(sel, (unsigned)n), "");
}

//===----------------------------------------------------------------------===//
// Transforms on vectors of tiles
//===----------------------------------------------------------------------===//

// out = B^T in (alpha values).
static void input_1d(wino_t* e, const LLVMValueRef* d, LLVMValueRef* r) {
  if (e->p->m == 2) {
    r[0] = fsub(e, d[0], d[2]);
    r[1] = fadd(e, d[1], d[2]);
    r[2] = fsub(e, d[2], d[1]);
    r[3] = fsub(e, d[1], d[3]);
    return;
  }
  LLVMValueRef a = fmac(e, d[1], -4.0, d[3]);  // d3 - 4 d1
  LLVMValueRef b = fmac(e, d[2], -4.0, d[4]);  // d4 - 4 d2
  LLVMValueRef c = fsub(e, d[4], d[2]);
  LLVMValueRef f = fsub(e, d[3], d[1]);
  r[0] = fmac(e, d[0], 4.0, fmac(e, d[2], -5.0, d[4]));
  r[1] = fadd(e, a, b);
  r[2] = fsub(e, b, a);
  r[3] = fmac(e, f, 2.0, c);
  r[4] = fmac(e, f, -2.0, c);
  r[5] = fmac(e, d[1], 4.0, fmac(e, d[3], -5.0, d[5]));
}

// out = A^T in (alpha values in, m out).
static void output_1d(wino_t* e, const LLVMValueRef* d, LLVMValueRef* o) {
  if (e->p->m == 2) {
    o[0] = fadd(e, fadd(e, d[0], d[1]), d[2]);
    o[1] = fsub(e, fsub(e, d[1], d[2]), d[3]);
    return;
  }
  LLVMValueRef s12 = fadd(e, d[1], d[2]), d12 = fsub(e, d[1], d[2]);
  LLVMValueRef s34 = fadd(e, d[3], d[4]), d34 = fsub(e, d[3], d[4]);
  o[0] = fadd(e, fadd(e, d[0], s12), s34);
  o[1] = fmac(e, d34, 2.0, d12);
  o[2] = fmac(e, s34, 4.0, s12);
  o[3] = fadd(e, fmac(e, d34, 8.0, d12), d[5]);
}

// Stores the first |w| lanes of |v| at base[idx..idx+w).
static void store_lanes(wino_t* e, LLVMValueRef v, int w, LLVMValueRef base, LLVMValueRef idx) {
  if (w == e->p->L) {
    vstore(e, v, base, idx, 4);
    return;
  }
  int sel[kWinoMaxL];
  for (int i = 0; i < w; ++i) sel[i] = i;
  LLVMValueRef s = pick(e, &v, 1, sel, w);
  LLVMValueRef st = LLVMBuildStore(e->ctx->b, s, gep(e, base, idx));
  LLVMSetAlignment(st, 4);
}

static LLVMValueRef call_masked_load(wino_t* e, LLVMValueRef ptr, LLVMValueRef mask) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const char* name = "llvm.masked.load";
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef ov[2] = {e->vt, ctx->t_ptr};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(ctx->module, id, ov, 2);
  LLVMTypeRef fty = LLVMIntrinsicGetType(ctx->llctx, id, ov, 2);
  LLVMValueRef args[4] = {ptr, i32c(e, 4), mask, LLVMConstNull(e->vt)};
  return LLVMBuildCall2(ctx->b, fty, fn, args, 4, "");
}

// Loads X columns [col0, col0 + L) of the row at |row| (index of column 0):
// lanes outside [0, W) read as 0 (compile-time mask).
static LLVMValueRef load_cols(wino_t* e, LLVMValueRef row, int64_t col0) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  int L = e->p->L;
  LLVMValueRef m[kWinoMaxL];
  int on = 0;
  for (int i = 0; i < L; ++i) {
    bool in = col0 + i >= 0 && col0 + i < e->g->w;
    on += in;
    m[i] = LLVMConstInt(ctx->t_i1, in ? 1 : 0, 0);
  }
  if (on == 0) return LLVMConstNull(e->vt);
  LLVMValueRef idx = iaddc(ctx, row, col0);
  if (on == L) return vload(e, e->xptr, idx, 4);
  // Not inbounds: the first lanes may precede the buffer (masked off).
  LLVMValueRef p = LLVMBuildGEP2(ctx->b, ctx->t_f32, e->xptr, &idx, 1, "");
  return call_masked_load(e, p, LLVMConstVector(m, (unsigned)L));
}

//===----------------------------------------------------------------------===//
// Kernel pieces
//===----------------------------------------------------------------------===//

// Panel index of row (ic, xi): layout [nxi][C][ts] with xi stride xs.
static LLVMValueRef panel_row(wino_t* e, LLVMValueRef ic, LLVMValueRef xi) {
  return iadd(e->ctx, imulc(e->ctx, xi, e->p->xs), imulc(e->ctx, ic, e->p->ts));
}

// Input transform of one vector of tiles for input channel |ic| (X plane at
// |plane|): |nr| tile rows from block row |k| (runtime), columns [c0, c0+w)
// of each (nr > 1 only for whole rows: c0 == 0, w == TW). Lane l holds tile
// (k + l / w, c0 + l % w); the nr*w lanes go to the panel at k*TW + c0.
static void emit_input_vec(wino_t* e, LLVMValueRef plane, LLVMValueRef ic, LLVMValueRef k,
                           int nr, int64_t c0, int w) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const wino_geom_t* g = e->g;
  const wino_plan_t* p = e->p;
  int m = p->m, alpha = p->alpha, L = p->L;
  int64_t s0 = c0 * m - g->pl;
  int nq = (int)ceil_div((int64_t)(w - 1) * m + alpha, L);  // loads per tile row
  LLVMValueRef zero = LLVMConstNull(e->vt);
  LLVMValueRef t[kWinoMaxAlpha][kWinoMaxAlpha];
  for (int i = 0; i < alpha; ++i) {
    // Patch row i of every tile row: nq vectors of X columns each (a row
    // outside the input reads as 0).
    LLVMValueRef q[8];
    for (int kk = 0; kk < nr; ++kk) {
      LLVMValueRef ih = iaddc(ctx, imulc(ctx, iadd(ctx, e->tr0, iaddc(ctx, k, kk)), m), i - g->pt);
      LLVMValueRef ge = LLVMBuildICmp(ctx->b, LLVMIntSGE, ih, c64(ctx, 0), "");
      LLVMValueRef lt = LLVMBuildICmp(ctx->b, LLVMIntSLT, ih, c64(ctx, g->h), "");
      LLVMValueRef valid = LLVMBuildAnd(ctx->b, ge, lt, "");
      LLVMValueRef ihc = mlcc_emit_max(ctx, MLCC_DTYPE_I64,
                                       mlcc_emit_min(ctx, MLCC_DTYPE_I64, ih, c64(ctx, g->h - 1)),
                                       c64(ctx, 0));
      LLVMValueRef row = iadd(ctx, plane, imulc(ctx, ihc, g->w));
      for (int j = 0; j < nq; ++j) {
        q[kk * nq + j] =
            LLVMBuildSelect(ctx->b, valid, load_cols(e, row, s0 + (int64_t)j * L), zero, "");
      }
    }
    // Patch column j of lane l: column c*m + j of its tile row's vectors.
    LLVMValueRef d[kWinoMaxAlpha];
    for (int j = 0; j < alpha; ++j) {
      int sel[kWinoMaxL];
      for (int l = 0; l < L; ++l) {
        int kk = l / w, c = l % w;
        sel[l] = kk < nr ? kk * nq * L + c * m + j : -1;
      }
      d[j] = pick(e, q, nr * nq, sel, L);
    }
    input_1d(e, d, t[i]);
  }
  LLVMValueRef off = iaddc(ctx, imulc(ctx, k, p->tw), c0);
  for (int jj = 0; jj < alpha; ++jj) {
    LLVMValueRef col[kWinoMaxAlpha], v[kWinoMaxAlpha];
    for (int i = 0; i < alpha; ++i) col[i] = t[i][jj];
    input_1d(e, col, v);
    for (int ii = 0; ii < alpha; ++ii) {
      int64_t xi = (int64_t)ii * alpha + jj;
      LLVMValueRef pi = iadd(ctx, panel_row(e, ic, c64(ctx, xi)), off);
      store_lanes(e, v[ii], nr * w, e->panel, pi);
    }
  }
}

// Input transform of the block (|rows| tile rows from e->tr0) into the
// panel: rows of at least L tiles in chunks of L, narrower rows
// p->rv at a time.
static void emit_input_transform(wino_t* e, int64_t rows) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const wino_geom_t* g = e->g;
  const wino_plan_t* p = e->p;
  int L = p->L;
  mlcc_loop_t l_ic = mlcc_emit_for(ctx, 0, g->c, "wic");
  LLVMValueRef plane = imulc(ctx, imad(ctx, e->n, g->c, l_ic.iv), g->h * g->w);
  if (p->rv == 1) {
    mlcc_loop_t l_k = mlcc_emit_for(ctx, 0, rows, "wk");
    for (int64_t c0 = 0; c0 < p->tw; c0 += L) {
      int w = (int)(p->tw - c0 < L ? p->tw - c0 : L);
      emit_input_vec(e, plane, l_ic.iv, l_k.iv, 1, c0, w);
    }
    mlcc_emit_loop_end(ctx, &l_k);
  } else {
    int64_t ng = rows / p->rv, rem = rows % p->rv;
    if (ng > 0) {
      mlcc_loop_t l_k = mlcc_emit_for(ctx, 0, ng, "wkg");
      emit_input_vec(e, plane, l_ic.iv, imulc(ctx, l_k.iv, p->rv), (int)p->rv, 0, (int)p->tw);
      mlcc_emit_loop_end(ctx, &l_k);
    }
    if (rem > 0) emit_input_vec(e, plane, l_ic.iv, c64(ctx, ng * p->rv), (int)rem, 0, (int)p->tw);
  }
  mlcc_emit_loop_end(ctx, &l_ic);
}

// GEMMs of channel block |oc0| (|bs| channels) for the tile chunk of |nvq|
// vectors at panel lane |s_q|: M[xi][r][j*L..] into the output buffer.
static void emit_gemm(wino_t* e, LLVMValueRef oc0, int bs, int64_t s_q, int nvq) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const wino_geom_t* g = e->g;
  const wino_plan_t* p = e->p;
  int L = p->L;
  unsigned valign = (unsigned)(4 * L);
  mlcc_loop_t l_xi = mlcc_emit_for(ctx, 0, p->nxi, "wxi");
  LLVMValueRef acc[kWinoMaxMr][kWinoMaxNv];
  LLVMValueRef zero = LLVMConstNull(e->vt);
  for (int r = 0; r < bs; ++r) {
    for (int j = 0; j < nvq; ++j) acc[r][j] = mlcc_emit_var(ctx, e->vt, zero);
  }
  // U of the block: [xi][ic][bs] at oc0*C*nxi (pack.h), one stream per block.
  LLVMValueRef ubase = iadd(ctx, imulc(ctx, oc0, g->c * p->nxi), imulc(ctx, l_xi.iv, g->c * bs));
  LLVMValueRef vbase = iaddc(ctx, panel_row(e, c64(ctx, 0), l_xi.iv), s_q);
  mlcc_loop_t l_ic = mlcc_emit_for(ctx, 0, g->c, "wgc");
  LLVMValueRef vrow = iadd(ctx, vbase, imulc(ctx, l_ic.iv, p->ts));
  LLVMValueRef urow = iadd(ctx, ubase, imulc(ctx, l_ic.iv, bs));
  LLVMValueRef v[kWinoMaxNv];
  for (int j = 0; j < nvq; ++j) v[j] = vload(e, e->panel, iaddc(ctx, vrow, (int64_t)j * L), valign);
  for (int r = 0; r < bs; ++r) {
    LLVMValueRef us = LLVMBuildLoad2(ctx->b, ctx->t_f32, gep(e, e->wptr, iaddc(ctx, urow, r)), "");
    LLVMSetAlignment(us, 4);
    LLVMValueRef uv = vsplat(e, us);
    for (int j = 0; j < nvq; ++j) {
      LLVMValueRef a = LLVMBuildLoad2(ctx->b, e->vt, acc[r][j], "");
      LLVMBuildStore(ctx->b, mlcc_emit_fmuladd(ctx, uv, v[j], a), acc[r][j]);
    }
  }
  mlcc_emit_loop_end(ctx, &l_ic);
  for (int r = 0; r < bs; ++r) {
    LLVMValueRef mrow = imulc(ctx, iaddc(ctx, imulc(ctx, l_xi.iv, p->mr), r), p->ms);
    for (int j = 0; j < nvq; ++j) {
      vstore(e, LLVMBuildLoad2(ctx->b, e->vt, acc[r][j], ""), e->mbuf,
             iaddc(ctx, mrow, (int64_t)j * L), valign);
    }
  }
  mlcc_emit_loop_end(ctx, &l_xi);
}

// Output transform of channel block |oc0| (|bs| channels) for the chunk of
// |nvq| vectors at panel lane |s_q| of a block of |rows| tile rows: per
// vector of L tiles (lanes of several tile rows when rows are narrow),
// A^T . A, the bias, then per tile row and output row the m columns of each
// tile interleaved into a run of output columns, stored through
// mlcc_emit_store_output_vec in pieces of at most L.
static mlcc_status_t emit_output(wino_t* e, LLVMValueRef oc0, int bs, int64_t rows,
                                 int64_t s_q, int nvq) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const wino_geom_t* g = e->g;
  const wino_plan_t* p = e->p;
  int m = p->m, alpha = p->alpha, L = p->L;
  int64_t T = rows * p->tw;
  mlcc_loop_t l_r = mlcc_emit_for(ctx, 0, bs, "wor");
  LLVMValueRef oc = iadd(ctx, oc0, l_r.iv);
  LLVMValueRef bv = NULL;
  if (e->bias != NULL) bv = vsplat(e, mlcc_emit_load(ctx, e->bias, oc));
  LLVMValueRef ybase = imulc(ctx, imad(ctx, e->n, g->mo, oc), g->oh);
  LLVMValueRef mrow0 = imulc(ctx, l_r.iv, p->ms);
  int64_t oh_tail = g->oh % m;  // valid rows of the last tile row (0: all)
  mlcc_status_t st = mlcc_ok_status();
  for (int j = 0; j < nvq && mlcc_status_is_ok(st); ++j) {
    int64_t a = s_q + (int64_t)j * L;  // first tile (block lane) of the vector
    int64_t b = a + L < T ? a + L : T;
    if (a >= b) break;
    LLVMValueRef mv[kWinoMaxXi];
    for (int xi = 0; xi < p->nxi; ++xi) {
      LLVMValueRef idx = iaddc(ctx, mrow0, ((int64_t)xi * p->mr) * p->ms + (int64_t)j * L);
      mv[xi] = vload(e, e->mbuf, idx, (unsigned)(4 * L));
    }
    // Rows: tmp[i][jo] = sum_j A^T[jo][j] M[i][j]; then columns.
    LLVMValueRef tmp[kWinoMaxAlpha][4];
    for (int i = 0; i < alpha; ++i) output_1d(e, &mv[i * alpha], tmp[i]);
    LLVMValueRef y[4][4];
    for (int jo = 0; jo < m; ++jo) {
      LLVMValueRef col[kWinoMaxAlpha], o[4];
      for (int i = 0; i < alpha; ++i) col[i] = tmp[i][jo];
      output_1d(e, col, o);
      for (int io = 0; io < m; ++io) y[io][jo] = bv != NULL ? fadd(e, o[io], bv) : o[io];
    }
    for (int64_t k = a / p->tw; k * p->tw < b && mlcc_status_is_ok(st); ++k) {
      int64_t lo = k * p->tw > a ? k * p->tw : a;
      int64_t hi = (k + 1) * p->tw < b ? (k + 1) * p->tw : b;
      int64_t c_lo = lo - k * p->tw;  // first tile column
      int lb = (int)(lo - a);         // its lane
      int64_t ncols = (hi - lo) * m;
      if (ncols > g->ow - c_lo * m) ncols = g->ow - c_lo * m;
      LLVMValueRef trow = iaddc(ctx, e->tr0, k);
      for (int io = 0; io < m && mlcc_status_is_ok(st); ++io) {
        LLVMValueRef ohv = iaddc(ctx, imulc(ctx, trow, m), io);
        bool check = oh_tail != 0 && io >= oh_tail;
        mlcc_if_t br;
        if (check) {
          br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, ohv, c64(ctx, g->oh), ""));
        }
        LLVMValueRef yrow = iaddc(ctx, imulc(ctx, iadd(ctx, ybase, ohv), g->ow), c_lo * m);
        for (int64_t s0 = 0; s0 < ncols && mlcc_status_is_ok(st); s0 += L) {
          int cnt = (int)(ncols - s0 < L ? ncols - s0 : L);
          int sel[kWinoMaxL];
          for (int q = 0; q < cnt; ++q) {
            int64_t c = s0 + q;  // column within the run: tile c / m, column c % m
            sel[q] = (int)((c % m) * L + lb + c / m);
          }
          LLVMValueRef v = pick(e, y[io], m, sel, cnt);
          LLVMValueRef yi = iaddc(ctx, yrow, s0);
          st = cnt == 1 ? mlcc_emit_store_output(ctx, e->node, 0, yi, v)
                        : mlcc_emit_store_output_vec(ctx, e->node, 0, yi, v);
        }
        if (check) mlcc_emit_if_end(ctx, &br);
      }
    }
  }
  mlcc_emit_loop_end(ctx, &l_r);
  return st;
}

// GEMM + output transform of one channel block over every chunk.
static mlcc_status_t emit_channel_block(wino_t* e, LLVMValueRef oc0, int bs, int64_t rows) {
  const wino_plan_t* p = e->p;
  int64_t lanes = round_up(rows * p->tw, p->L);
  int64_t step = (int64_t)p->nv * p->L;
  for (int64_t s_q = 0; s_q < lanes; s_q += step) {
    int nvq = (int)((lanes - s_q < step ? lanes - s_q : step) / p->L);
    emit_gemm(e, oc0, bs, s_q, nvq);
    MLCC_RETURN_IF_ERROR(emit_output(e, oc0, bs, rows, s_q, nvq));
  }
  return mlcc_ok_status();
}

// One unit's block of |rows| tile rows, channel blocks [cb0, cb1).
static mlcc_status_t emit_block(wino_t* e, int64_t rows, LLVMValueRef cb0, LLVMValueRef cb1) {
  mlcc_emit_ctx_t* ctx = e->ctx;
  const wino_plan_t* p = e->p;
  emit_input_transform(e, rows);
  int64_t last = p->ocb - 1;
  int rem = (int)(e->g->mo - last * p->mr);  // channels of the last block
  mlcc_loop_t l_b = mlcc_emit_loop_begin(ctx, cb0, cb1, 1, "wcb");
  LLVMValueRef oc0 = imulc(ctx, l_b.iv, p->mr);
  if (rem == p->mr) {
    MLCC_RETURN_IF_ERROR(emit_channel_block(e, oc0, p->mr, rows));
  } else {
    mlcc_if_t br = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, l_b.iv, c64(ctx, last), ""));
    MLCC_RETURN_IF_ERROR(emit_channel_block(e, oc0, p->mr, rows));
    mlcc_emit_if_else(ctx, &br);
    MLCC_RETURN_IF_ERROR(emit_channel_block(e, oc0, rem, rows));
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_loop_end(ctx, &l_b);
  return mlcc_ok_status();
}

// Zeroes lanes [from, to) of every panel row.
static void zero_panel_lanes(wino_t* e, int64_t from, int64_t to) {
  if (from >= to) return;
  mlcc_emit_ctx_t* ctx = e->ctx;
  mlcc_loop_t l_xi = mlcc_emit_for(ctx, 0, e->p->nxi, "wzx");
  mlcc_loop_t l_ic = mlcc_emit_for(ctx, 0, e->g->c, "wzc");
  LLVMValueRef row = panel_row(e, l_ic.iv, l_xi.iv);
  LLVMValueRef zero = LLVMConstNull(e->vt);
  for (int64_t a = from; a < to; a += e->p->L) {
    int w = (int)(to - a < e->p->L ? to - a : e->p->L);
    store_lanes(e, zero, w, e->panel, iaddc(ctx, row, a));
  }
  mlcc_emit_loop_end(ctx, &l_ic);
  mlcc_emit_loop_end(ctx, &l_xi);
}

mlcc_status_t mlcc_emit_conv_winograd(mlcc_emit_ctx_t* ctx, const mlcc_node_t* node) {
  wino_geom_t g;
  wino_plan_t p;
  if (!wino_make_plan(node, ctx->target, &g, &p)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Conv: the Winograd weight layout needs a float32 2-D conv with a "
                            "3x3 kernel, strides 1, dilations 1 and group 1");
  }
  wino_t e;
  memset(&e, 0, sizeof(e));
  e.ctx = ctx;
  e.node = node;
  e.g = &g;
  e.p = &p;
  e.x = mlcc_node_input(node, 0);
  e.w = mlcc_node_input(node, 1);
  e.bias = mlcc_node_input(node, 2);
  if (e.w == NULL || e.w->dtype != MLCC_DTYPE_F32 ||
      mlcc_shape_numel_unchecked(&e.w->shape) != (int64_t)p.nxi * g.mo * g.c) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Conv: W does not hold the Winograd layout F(%dx%d, 3x3) for %lld x "
                            "%lld channels",
                            p.m, p.m, (long long)g.mo, (long long)g.c);
  }
  if (e.bias != NULL && (e.bias->dtype != MLCC_DTYPE_F32 ||
                         mlcc_shape_numel_unchecked(&e.bias->shape) != g.mo)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "Conv: B must be float32 with %lld elements", (long long)g.mo);
  }
  e.vt = LLVMVectorType(ctx->t_f32, (unsigned)p.L);
  e.xptr = mlcc_emit_ptr(ctx, e.x);
  e.wptr = mlcc_emit_ptr(ctx, e.w);
  // Stack buffers: the panel [nxi][C][ts] and the GEMM output [nxi][mr][ms].
  LLVMValueRef panel = mlcc_emit_var(
      ctx, LLVMArrayType(ctx->t_f32, (unsigned)((int64_t)p.nxi * p.xs)), NULL);
  LLVMSetAlignment(panel, 64);
  LLVMValueRef mbuf = mlcc_emit_var(
      ctx, LLVMArrayType(ctx->t_f32, (unsigned)((int64_t)p.nxi * p.mr * p.ms)), NULL);
  LLVMSetAlignment(mbuf, 64);
  e.panel = panel;
  e.mbuf = mbuf;
  // Panel lanes the GEMM reads but no transform writes hold zeros (never
  // uninitialized stack: no NaN or denormal slow paths).
  int64_t tmin = p.rb * p.tw < p.rlast * p.tw ? p.rb * p.tw : p.rlast * p.tw;
  zero_panel_lanes(&e, tmin, p.ts);

  LLVMValueRef zero = c64(ctx, 0), units = c64(ctx, p.units);
  LLVMValueRef rb = ctx->range_begin ? ctx->range_begin : zero;
  LLVMValueRef re = ctx->range_end ? ctx->range_end : units;
  rb = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, rb, units), zero);
  re = mlcc_emit_max(ctx, MLCC_DTYPE_I64, mlcc_emit_min(ctx, MLCC_DTYPE_I64, re, units), zero);
  // Units u = (n*nblk + blk)*noc + chunk. Consecutive units of one block
  // share its input transform: loop over the blocks the range meets, each
  // with its part of the range's channel chunks.
  LLVMValueRef noc = c64(ctx, p.noc);
  LLVMValueRef g0 = LLVMBuildSDiv(ctx->b, rb, noc, "");
  LLVMValueRef g1 = LLVMBuildSDiv(ctx->b, iaddc(ctx, re, p.noc - 1), noc, "");
  mlcc_loop_t l_g = mlcc_emit_loop_begin(ctx, g0, g1, 1, "wg");
  LLVMValueRef u0 = imulc(ctx, l_g.iv, p.noc);
  LLVMValueRef c_lo = LLVMBuildSub(ctx->b, mlcc_emit_max(ctx, MLCC_DTYPE_I64, rb, u0), u0, "");
  LLVMValueRef c_hi = LLVMBuildSub(
      ctx->b, mlcc_emit_min(ctx, MLCC_DTYPE_I64, re, iaddc(ctx, u0, p.noc)), u0, "");
  e.n = LLVMBuildSDiv(ctx->b, l_g.iv, c64(ctx, p.nblk), "");
  LLVMValueRef blk = LLVMBuildSRem(ctx->b, l_g.iv, c64(ctx, p.nblk), "");
  e.tr0 = imulc(ctx, blk, p.rb);
  LLVMValueRef cb0 = imulc(ctx, c_lo, p.cchunk);
  LLVMValueRef cb1 = mlcc_emit_min(ctx, MLCC_DTYPE_I64, imulc(ctx, c_hi, p.cchunk), c64(ctx, p.ocb));
  mlcc_if_t any = mlcc_emit_if_begin(ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, cb0, cb1, ""));
  if (p.rlast == p.rb) {
    MLCC_RETURN_IF_ERROR(emit_block(&e, p.rb, cb0, cb1));
  } else {
    mlcc_if_t br = mlcc_emit_if_begin(
        ctx, LLVMBuildICmp(ctx->b, LLVMIntSLT, blk, c64(ctx, p.nblk - 1), ""));
    MLCC_RETURN_IF_ERROR(emit_block(&e, p.rb, cb0, cb1));
    mlcc_emit_if_else(ctx, &br);
    MLCC_RETURN_IF_ERROR(emit_block(&e, p.rlast, cb0, cb1));
    mlcc_emit_if_end(ctx, &br);
  }
  mlcc_emit_if_end(ctx, &any);
  mlcc_emit_loop_end(ctx, &l_g);
  return mlcc_ok_status();
}

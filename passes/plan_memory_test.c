// SPDX-License-Identifier: Apache-2.0
// Unit tests for the plan-memory pass (passes/plan_memory.c): offsets,
// in-place reuse, sizes and the naive/peak statistics, against an independent
// liveness check (check_plan) and byte counts worked out by hand.
#include <stdio.h>
#include <stdlib.h>

#include "passes/plan_memory.h"
#include "passes/pass_test_util.h"

//===----------------------------------------------------------------------===//
// plan-memory
//===----------------------------------------------------------------------===//

// True if |out| is the in-place output of a kernel reusing |in|'s bytes
// (mlcc_kernel_t.inplace_input; |in| may be read through a Reshape alias).
static bool inplace_pair(const mlcc_graph_t* g, const mlcc_value_t* in, const mlcc_value_t* out) {
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &g->kernels[k];
    const mlcc_value_t* v = kern->inplace_input;
    if (v == NULL || mlcc_node_output(kern->nodes[kern->n_nodes - 1], 0) != out) continue;
    if (v == in || v->alias_of == in) return true;
  }
  return false;
}

// Independent liveness: for each slot value, [def, last] in kernel indices.
// Checks: alignment, in-bounds, no overlap between simultaneously live
// values, and no overlap between any kernel's outputs and its inputs, except
// an in-place output and the input it reuses, which must then share offset
// and size, and the input must die at that kernel.
static void check_plan(const mlcc_graph_t* g) {
  CHECK_EQ_INT(g->workspace_align, 64);
  CHECK_EQ_INT(g->workspace_size % 64, 0);
  uint32_t n = g->n_values;
  int64_t* def = (int64_t*)malloc(n * sizeof(int64_t));
  int64_t* last = (int64_t*)malloc(n * sizeof(int64_t));
  for (uint32_t i = 0; i < n; ++i) def[i] = last[i] = -1;
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &g->kernels[k];
    for (uint32_t j = 0; j < kern->n_nodes; ++j) {
      const mlcc_node_t* nd = kern->nodes[j];
      for (uint32_t i = 0; i < nd->n_inputs; ++i) {
        const mlcc_value_t* iv = nd->inputs[i];
        if (iv == NULL || iv->ws_offset < 0) continue;
        last[iv->id] = k;
        if (iv->alias_of != NULL) last[iv->alias_of->id] = k;  // a Reshape view
      }
      for (uint32_t i = 0; i < nd->n_outputs; ++i) {
        const mlcc_value_t* o = nd->outputs[i];
        if (o == NULL) continue;
        bool chain_internal = j + 1 < kern->n_nodes;
        if (chain_internal) CHECK_EQ_INT(o->ws_offset, -1);
        if (o->kind == MLCC_VALUE_INTERMEDIATE && !o->is_output && !chain_internal) {
          CHECK(o->ws_offset >= 0);
        }
        if (o->is_output) CHECK_EQ_INT(o->ws_offset, -1);
        if (o->ws_offset >= 0) {
          def[o->id] = k;
          if (last[o->id] < 0) last[o->id] = k;
        }
      }
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_value_t* a = g->values[i];
    if (a->alias_of != NULL) {  // the source's bytes
      CHECK_EQ_INT(a->ws_offset, a->alias_of->ws_offset);
      continue;
    }
    if (a->ws_offset < 0) continue;
    int64_t sa = (int64_t)mlcc_value_byte_size(a);
    CHECK_EQ_INT(a->ws_offset % 64, 0);
    CHECK(a->ws_offset + sa <= g->workspace_size);
    for (uint32_t j = i + 1; j < n; ++j) {
      const mlcc_value_t* b = g->values[j];
      if (b->ws_offset < 0 || b->alias_of != NULL) continue;
      int64_t sb = (int64_t)mlcc_value_byte_size(b);
      bool live_together = def[i] <= last[j] && def[j] <= last[i];
      bool overlap = a->ws_offset < b->ws_offset + (sb ? sb : 1) &&
                     b->ws_offset < a->ws_offset + (sa ? sa : 1);
      if (inplace_pair(g, a, b) || inplace_pair(g, b, a)) {
        const mlcc_value_t* in = inplace_pair(g, a, b) ? a : b;
        const mlcc_value_t* out = in == a ? b : a;
        CHECK_EQ_INT(in->ws_offset, out->ws_offset);
        CHECK_EQ_INT(sa, sb);
        CHECK(last[in->id] <= def[out->id]);
        continue;
      }
      if (live_together && overlap) {
        fprintf(stderr, "overlap: '%s' [%lld,+%lld) k%lld..%lld and '%s' [%lld,+%lld) k%lld..%lld\n",
                a->name, (long long)a->ws_offset, (long long)sa, (long long)def[i],
                (long long)last[i], b->name, (long long)b->ws_offset, (long long)sb,
                (long long)def[j], (long long)last[j]);
      }
      CHECK(!(live_together && overlap));
    }
  }
  // Outputs of a kernel vs its inputs, all pairs.
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    const mlcc_kernel_t* kern = &g->kernels[k];
    const mlcc_node_t* lastn = kern->nodes[kern->n_nodes - 1];
    for (uint32_t o = 0; o < lastn->n_outputs; ++o) {
      const mlcc_value_t* ov = lastn->outputs[o];
      if (ov == NULL || ov->ws_offset < 0) continue;
      int64_t so = (int64_t)mlcc_value_byte_size(ov);
      for (uint32_t j = 0; j < kern->n_nodes; ++j) {
        const mlcc_node_t* nd = kern->nodes[j];
        for (uint32_t i = 0; i < nd->n_inputs; ++i) {
          const mlcc_value_t* iv = nd->inputs[i];
          if (iv == NULL || iv->ws_offset < 0 || iv == kern->inplace_input) continue;
          int64_t si = (int64_t)mlcc_value_byte_size(iv);
          CHECK(ov->ws_offset + so <= iv->ws_offset || iv->ws_offset + si <= ov->ws_offset);
        }
      }
    }
  }
  free(def);
  free(last);
}

// x -> a -> b -> c -> d(out): each value dies when the next is written, so
// b and c are written in place over a.
static void test_plan_memory_chain_reuses(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 1, 256, 0, 0);  // 1 KiB
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* d = val(g, "d", s);
  unary(g, MLCC_OP_RELU, "n0", x, a);
  unary(g, MLCC_OP_EXP, "n1", a, b);
  unary(g, MLCC_OP_NEG, "n2", b, c);
  unary(g, MLCC_OP_ABS, "n3", c, d);
  mark_output(g, d);
  mlcc_pass_ctx_t ctx = ctx_at(0);
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  CHECK_EQ_INT(a->ws_offset, 0);
  CHECK_EQ_INT(b->ws_offset, 0);  // in place over a
  CHECK_EQ_INT(c->ws_offset, 0);  // in place over b
  CHECK_EQ_INT(d->ws_offset, -1);  // graph output: the caller's buffer
  CHECK_EQ_INT(x->ws_offset, -1);
  CHECK(g->kernels[0].inplace_input == NULL);  // x is a graph input
  CHECK(g->kernels[1].inplace_input == a);
  CHECK(g->kernels[2].inplace_input == b);
  CHECK(g->kernels[3].inplace_input == NULL);  // d is a graph output
  CHECK_EQ_INT(g->workspace_size, 1024);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 3072);
  CHECK_EQ_INT(peak, 1024);
  CHECK(g->workspace_size < naive);
  check_plan(g);
  mlcc_graph_destroy(g);
}

// A value read much later stays live; odd sizes round to 64; fused chains
// get no slots inside; a multi-output node with an unread output.
static void test_plan_memory_liveness(void) {
  mlcc_graph_t* g = new_graph();
  mlcc_shape_t s = shp(2, 1, 10, 0, 0);     // 40 bytes -> 64
  mlcc_shape_t big = shp(2, 3, 100, 0, 0);  // 1200 bytes -> 1216
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* v1 = val(g, "v1", s);
  mlcc_value_t* v2 = val(g, "v2", big);
  mlcc_value_t* v3 = val(g, "v3", big);
  mlcc_value_t* v4 = val(g, "v4", s);
  mlcc_value_t* v5 = val(g, "v5", s);
  mlcc_value_t* idx = val(g, "idx", s);
  idx->dtype = MLCC_DTYPE_I64;
  mlcc_value_t* v6 = val(g, "v6", s);
  mlcc_value_t* y = val(g, "y", s);
  mlcc_value_t* w = NULL;
  float wd[300];
  for (int i = 0; i < 300; ++i) wd[i] = (float)i;
  w = cst(g, "w", big, wd);
  unary(g, MLCC_OP_RELU, "relu", x, v1);                 // v1 lives until "add"
  binary(g, MLCC_OP_ADD, "bcast", w, v1, v2);            // [3,100]? (shapes by hand)
  unary(g, MLCC_OP_EXP, "exp", v2, v3);
  mlcc_value_t* rin[1] = {v3};
  node(g, MLCC_OP_REDUCE_MEAN, "mean", rin, 1, v4);
  binary(g, MLCC_OP_ADD, "add", v4, v1, v5);             // reads v1 again
  mlcc_node_t* mp = NULL;
  mlcc_value_t* mouts[2] = {v6, idx};
  CHECK_OK(mlcc_graph_add_node(g, MLCC_OP_MAX_POOL, 12, "pool", &v5, 1, mouts, 2, NULL, 0, &mp));
  unary(g, MLCC_OP_SIGMOID, "sig", v6, y);
  mark_output(g, y);
  mlcc_pass_ctx_t ctx = ctx_at(2);
  ctx.verify_each = false;  // the by-hand shapes above are not all consistent
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  // relu | bcast+exp ([3,100]) | mean+add (v1 is older than mean) | pool | sig
  CHECK_EQ_INT(g->n_kernels, 5);
  CHECK_EQ_INT(v2->ws_offset, -1);  // inside a fused chain
  CHECK_EQ_INT(v4->ws_offset, -1);
  CHECK(v1->ws_offset >= 0 && v3->ws_offset >= 0);
  CHECK(v5->ws_offset >= 0 && v6->ws_offset >= 0);
  CHECK(idx->ws_offset >= 0);  // never read, still written by the pool
  CHECK(w->ws_offset == -1);
  check_plan(g);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 64 + 1216 + 64 + 64 + 128);  // v1 v3 v5 v6 idx(80 -> 128)
  CHECK(peak <= g->workspace_size);
  CHECK(g->workspace_size < naive);
  // Deterministic: planning again gives the same offsets.
  int64_t before[16];
  for (uint32_t i = 0; i < g->n_values && i < 16; ++i) before[i] = g->values[i]->ws_offset;
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  for (uint32_t i = 0; i < g->n_values && i < 16; ++i) {
    CHECK_EQ_INT(g->values[i]->ws_offset, before[i]);
  }
  mlcc_graph_destroy(g);
}

// Many random DAGs: the plan is always consistent.
static void test_plan_memory_random(void) {
  uint32_t seed = 12345;
  for (int iter = 0; iter < 200; ++iter) {
    mlcc_graph_t* g = new_graph();
    mlcc_value_t* vals[40];
    uint32_t nv = 0;
    vals[nv++] = input(g, "x", shp(1, 64, 0, 0, 0));
    int n_nodes = 5 + iter % 30;
    for (int i = 0; i < n_nodes; ++i) {
      seed = seed * 1103515245u + 12345u;
      mlcc_value_t* a = vals[(seed >> 8) % nv];
      seed = seed * 1103515245u + 12345u;
      mlcc_value_t* b = vals[(seed >> 8) % nv];
      char name[16];
      snprintf(name, sizeof(name), "v%d", i);
      int64_t sz = 16 * (1 + (int64_t)((seed >> 4) % 7));
      mlcc_value_t* o = val(g, name, shp(1, sz, 0, 0, 0));
      if ((seed >> 12) % 2) {
        unary(g, MLCC_OP_RELU, name, a, o);
      } else {
        binary(g, MLCC_OP_ADD, name, a, b, o);
      }
      vals[nv++] = o;
    }
    mark_output(g, vals[nv - 1]);
    mlcc_pass_ctx_t ctx = ctx_at(iter % 3);
    ctx.verify_each = false;  // random sizes do not broadcast
    mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
    CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
    check_plan(g);
    int64_t naive = 0, peak = 0;
    CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
    CHECK(peak <= g->workspace_size);
    CHECK(g->workspace_size <= naive);
    mlcc_graph_destroy(g);
  }
}

// In place: the planner's decision (choose_inplace) on small graphs at -O0
// (one kernel per node) and -O2 (fused).
static void test_plan_memory_inplace_elementwise(void) {
  mlcc_shape_t s = shp(2, 4, 16, 0, 0);  // 256 bytes
  // Input read later: a is read by Exp and by Add, so Exp does not overwrite
  // it; Add is the last reader of both a and b and takes the first (b).
  mlcc_graph_t* g = new_graph();
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", x, a);
  unary(g, MLCC_OP_EXP, "exp", a, b);
  binary(g, MLCC_OP_ADD, "add", b, a, c);
  unary(g, MLCC_OP_SOFTMAX, "softmax", c, y);
  mark_output(g, y);
  mlcc_pass_ctx_t ctx = ctx_at(0);
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  CHECK(g->kernels[0].inplace_input == NULL);  // graph input
  CHECK(g->kernels[1].inplace_input == NULL);  // a is read again by add
  CHECK(g->kernels[2].inplace_input == b);
  CHECK(g->kernels[3].inplace_input == NULL);  // graph output
  CHECK(b->ws_offset != a->ws_offset);
  CHECK_EQ_INT(c->ws_offset, b->ws_offset);
  CHECK_EQ_INT(g->workspace_size, 512);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 768);
  CHECK_EQ_INT(peak, 512);
  check_plan(g);
  mlcc_graph_destroy(g);

  // Broadcast input: a [1,16] broadcasts to Add's [4,16] output; z is a graph
  // input. Neither may be overwritten.
  g = new_graph();
  mlcc_value_t* xs = input(g, "xs", shp(2, 1, 16, 0, 0));
  mlcc_value_t* z = input(g, "z", s);
  a = val(g, "a", shp(2, 1, 16, 0, 0));
  b = val(g, "b", s);
  y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", xs, a);
  binary(g, MLCC_OP_ADD, "add", a, z, b);
  unary(g, MLCC_OP_SOFTMAX, "softmax", b, y);
  mark_output(g, y);
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 3);
  for (uint32_t k = 0; k < g->n_kernels; ++k) CHECK(g->kernels[k].inplace_input == NULL);
  CHECK(a->ws_offset >= 0 && b->ws_offset >= 0 && a->ws_offset != b->ws_offset);
  check_plan(g);
  mlcc_graph_destroy(g);

  // A Softmax anchor reads a whole row: never in place, even though a dies.
  g = new_graph();
  x = input(g, "x", s);
  a = val(g, "a", s);
  b = val(g, "b", s);
  y = val(g, "y", s);
  unary(g, MLCC_OP_RELU, "relu", x, a);
  unary(g, MLCC_OP_SOFTMAX, "softmax", a, b);
  unary(g, MLCC_OP_SOFTMAX, "softmax2", b, y);
  mark_output(g, y);
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK(g->kernels[1].inplace_input == NULL);
  CHECK(a->ws_offset != b->ws_offset);
  CHECK_EQ_INT(g->workspace_size, 512);
  check_plan(g);
  mlcc_graph_destroy(g);
}

// In place through a Reshape alias; an alias read later keeps its source.
static void test_plan_memory_inplace_alias(void) {
  mlcc_shape_t s = shp(2, 2, 8, 0, 0);
  mlcc_shape_t flat = shp(1, 16, 0, 0, 0);
  int64_t dims[1] = {16};
  mlcc_shape_t s1 = shp(1, 1, 0, 0, 0);
  for (int late = 0; late < 2; ++late) {
    mlcc_graph_t* g = new_graph();
    mlcc_value_t* x = input(g, "x", s);
    mlcc_value_t* a = val(g, "a", s);
    mlcc_value_t* r = val(g, "r", flat);
    mlcc_value_t* b = val(g, "b", flat);
    mlcc_value_t* y = val(g, "y", flat);
    mlcc_value_t* shape = NULL;
    CHECK_OK(mlcc_graph_add_constant(g, "shape", MLCC_DTYPE_I64, &s1, dims, true, &shape));
    unary(g, MLCC_OP_RELU, "relu", x, a);
    binary(g, MLCC_OP_RESHAPE, "reshape", a, shape, r);
    unary(g, MLCC_OP_NEG, "neg", r, b);
    unary(g, MLCC_OP_SOFTMAX, "softmax", b, y);
    mark_output(g, y);
    mlcc_value_t* y2 = NULL;
    if (late) {  // r is read again after neg
      y2 = val(g, "y2", flat);
      unary(g, MLCC_OP_SOFTMAX, "softmax2", r, y2);
      mark_output(g, y2);
    }
    mlcc_pass_ctx_t ctx = ctx_at(2);
    mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
    CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
    CHECK(r->alias_of == a);
    CHECK_EQ_INT(g->n_kernels, late ? 4 : 3);
    if (g->n_kernels < 2) {
      mlcc_graph_destroy(g);
      continue;
    }
    CHECK(g->kernels[1].nodes[0]->op == MLCC_OP_NEG);
    if (late) {
      CHECK(g->kernels[1].inplace_input == NULL);
      CHECK(b->ws_offset != a->ws_offset);
    } else {
      CHECK(g->kernels[1].inplace_input == r);
      CHECK_EQ_INT(b->ws_offset, a->ws_offset);
      CHECK_EQ_INT(g->workspace_size, 64);
    }
    check_plan(g);
    mlcc_graph_destroy(g);
  }
}

// MatMul + residual Add: the residual, read only by the epilogue, is
// overwritten; an input the MatMul anchor itself reads never is.
static void test_plan_memory_inplace_matmul(void) {
  mlcc_shape_t s = shp(2, 8, 8, 0, 0);  // 256 bytes
  float wd[64];
  for (int i = 0; i < 64; ++i) wd[i] = (float)(i % 7) - 3.0f;
  for (int anchor_reads = 0; anchor_reads < 2; ++anchor_reads) {
    mlcc_graph_t* g = new_graph();
    mlcc_value_t* x = input(g, "x", s);
    mlcc_value_t* w = cst(g, "w", s, wd);
    mlcc_value_t* r = val(g, "r", s);
    mlcc_value_t* m = val(g, "m", s);
    mlcc_value_t* t = val(g, "t", s);
    mlcc_value_t* y = val(g, "y", s);
    unary(g, MLCC_OP_RELU, "relu", x, r);
    binary(g, MLCC_OP_MATMUL, "matmul", anchor_reads ? r : x, w, m);
    binary(g, MLCC_OP_ADD, "residual", m, r, t);
    unary(g, MLCC_OP_SOFTMAX, "softmax", t, y);
    mark_output(g, y);
    mlcc_pass_ctx_t ctx = ctx_at(2);
    mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
    CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
    CHECK_EQ_INT(g->n_kernels, 3);
    if (g->n_kernels != 3) {
      mlcc_graph_destroy(g);
      continue;
    }
    CHECK_EQ_INT(g->kernels[1].n_nodes, 2);
    if (anchor_reads) {
      CHECK(g->kernels[1].inplace_input == NULL);
      CHECK(t->ws_offset != r->ws_offset);
      CHECK_EQ_INT(g->workspace_size, 512);
    } else {
      CHECK(g->kernels[1].inplace_input == r);
      CHECK_EQ_INT(t->ws_offset, r->ws_offset);
      CHECK_EQ_INT(g->workspace_size, 256);
      int64_t naive = 0, peak = 0;
      CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
      CHECK_EQ_INT(naive, 512);
      CHECK_EQ_INT(peak, 256);
    }
    check_plan(g);
    mlcc_graph_destroy(g);
  }
}

// A diamond at -O0: a (1 KiB) is read by Exp and Neg, so Exp's b gets a slot
// of its own; Neg, a's last reader, writes c in place over a; Add writes the
// graph output. Live at once: {a, b}, then {b, c}: 2 KiB of 3 KiB.
static void test_plan_memory_diamond(void) {
  mlcc_shape_t s = shp(2, 4, 64, 0, 0);  // 1024 bytes
  mlcc_graph_t* g = new_graph();
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* a = val(g, "a", s);
  mlcc_value_t* b = val(g, "b", s);
  mlcc_value_t* c = val(g, "c", s);
  mlcc_value_t* d = val(g, "d", s);
  unary(g, MLCC_OP_RELU, "relu", x, a);
  unary(g, MLCC_OP_EXP, "exp", a, b);
  unary(g, MLCC_OP_NEG, "neg", a, c);
  binary(g, MLCC_OP_ADD, "add", b, c, d);
  mark_output(g, d);
  mlcc_pass_ctx_t ctx = ctx_at(0);
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  if (g->n_kernels == 4) {
    CHECK(g->kernels[1].inplace_input == NULL);  // a is read again by neg
    CHECK(g->kernels[2].inplace_input == a);
    CHECK(g->kernels[3].inplace_input == NULL);  // d is a graph output
  }
  CHECK(a->ws_offset >= 0 && b->ws_offset >= 0 && a->ws_offset != b->ws_offset);
  CHECK_EQ_INT(c->ws_offset, a->ws_offset);
  CHECK_EQ_INT(d->ws_offset, -1);
  CHECK_EQ_INT(g->workspace_size, 2048);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 3072);
  CHECK_EQ_INT(peak, 2048);
  check_plan(g);
  mlcc_graph_destroy(g);
}

// Slot sizes follow the dtype and round up to 64 bytes: 100 float64 (800 ->
// 832), 100 int8 (100 -> 128), 100 float16 (200 -> 256); a chain of casts
// at -O0 where each value dies at the next kernel, and no kernel is in place
// (the element sizes differ), so two neighbours are live at a time.
static void test_plan_memory_dtype_sizes(void) {
  mlcc_shape_t s = shp(1, 100, 0, 0, 0);
  mlcc_graph_t* g = new_graph();
  mlcc_value_t* x = input(g, "x", s);
  mlcc_value_t* f64 = val(g, "f64", s);
  f64->dtype = MLCC_DTYPE_F64;
  mlcc_value_t* i8 = val(g, "i8", s);
  i8->dtype = MLCC_DTYPE_I8;
  mlcc_value_t* f16 = val(g, "f16", s);
  f16->dtype = MLCC_DTYPE_F16;
  mlcc_value_t* y = val(g, "y", s);
  unary(g, MLCC_OP_CAST, "to_f64", x, f64);
  unary(g, MLCC_OP_CAST, "to_i8", f64, i8);
  unary(g, MLCC_OP_CAST, "to_f16", i8, f16);
  unary(g, MLCC_OP_CAST, "to_f32", f16, y);
  mark_output(g, y);
  mlcc_pass_ctx_t ctx = ctx_at(0);
  ctx.verify_each = false;  // Cast's 'to' attribute is left out: only sizes matter here
  mlcc_pass_id_t ids[] = {MLCC_PASS_FUSE, MLCC_PASS_PLAN_MEMORY};
  CHECK_OK(mlcc_pass_run_pipeline(&ctx, g, ids, 2));
  CHECK_EQ_INT(g->n_kernels, 4);
  for (uint32_t k = 0; k < g->n_kernels; ++k) CHECK(g->kernels[k].inplace_input == NULL);
  int64_t naive = 0, peak = 0;
  CHECK_OK(mlcc_pass_plan_memory_stats(g, &naive, &peak));
  CHECK_EQ_INT(naive, 832 + 128 + 256);
  CHECK_EQ_INT(peak, 832 + 128);  // f64 and i8 at to_i8
  CHECK(g->workspace_size >= peak && g->workspace_size <= naive);
  check_plan(g);
  mlcc_graph_destroy(g);
}

int main(void) {
  RUN(test_plan_memory_chain_reuses);
  RUN(test_plan_memory_liveness);
  RUN(test_plan_memory_random);
  RUN(test_plan_memory_inplace_elementwise);
  RUN(test_plan_memory_inplace_alias);
  RUN(test_plan_memory_inplace_matmul);
  RUN(test_plan_memory_diamond);
  RUN(test_plan_memory_dtype_sizes);
  return TEST_EXIT();
}

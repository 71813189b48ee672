// SPDX-License-Identifier: Apache-2.0
// -d explain-cache records and their comparison: see cache_explain.h.
#include "driver/cache_explain.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "driver/strbuf.h"
#include "ir/dtype.h"
#include "ir/ops.h"

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

static void to_hex(const unsigned char* md, size_t n, char* out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[md[i] >> 4];
    out[2 * i + 1] = digits[md[i] & 15];
  }
  out[2 * n] = '\0';
}

// Tabs and newlines would break the record's lines: replaced by spaces.
static void append_clean(mlcc_strbuf_t* sb, const char* s) {
  for (; s != NULL && *s; ++s) mlcc_strbuf_append_char(sb, *s == '\t' || *s == '\n' ? ' ' : *s);
}

static void digest_update(EVP_MD_CTX* md, const void* p, size_t n) {
  uint64_t len = n;
  EVP_DigestUpdate(md, &len, sizeof(len));
  if (n) EVP_DigestUpdate(md, p, n);
}

// A short digest of one attribute's value (its kind and contents).
static void attr_digest(const mlcc_attr_t* a, char out[17]) {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  unsigned char d[32];
  unsigned int len = 0;
  out[0] = '\0';
  if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(md);
    snprintf(out, 17, "?");
    return;
  }
  int64_t kind = a->kind;
  digest_update(md, &kind, sizeof(kind));
  switch (a->kind) {
    case MLCC_ATTR_INT: digest_update(md, &a->i, sizeof(a->i)); break;
    case MLCC_ATTR_FLOAT: digest_update(md, &a->f, sizeof(a->f)); break;
    case MLCC_ATTR_STRING: digest_update(md, a->s, a->s ? a->s_len : 0); break;
    case MLCC_ATTR_INTS: digest_update(md, a->ints, a->count * sizeof(*a->ints)); break;
    case MLCC_ATTR_FLOATS: digest_update(md, a->floats, a->count * sizeof(*a->floats)); break;
    case MLCC_ATTR_STRINGS:
      for (uint32_t i = 0; i < a->count; ++i) {
        digest_update(md, a->strings[i], a->strings[i] ? strlen(a->strings[i]) : 0);
      }
      break;
    case MLCC_ATTR_TENSOR: {
      int64_t dt = a->t_dtype;
      digest_update(md, &dt, sizeof(dt));
      digest_update(md, a->t_shape.dims, (size_t)a->t_shape.rank * sizeof(a->t_shape.dims[0]));
      int64_t n = mlcc_shape_numel_unchecked(&a->t_shape);
      size_t bytes = a->t_data && n > 0 ? (size_t)n * mlcc_dtype_size(a->t_dtype) : 0;
      digest_update(md, a->t_data, bytes);
      break;
    }
    case MLCC_ATTR_GRAPH: break;
  }
  if (EVP_DigestFinal_ex(md, d, &len) == 1 && len == 32) {
    to_hex(d, 8, out);
  } else {
    snprintf(out, 17, "?");
  }
  EVP_MD_CTX_free(md);
}

static void append_slot(mlcc_strbuf_t* sb, uint32_t node, const char* dir, uint32_t index,
                        const mlcc_value_t* v) {
  if (v == NULL) return;
  mlcc_strbuf_append(sb, "slot\t");
  if (node != 0) mlcc_strbuf_appendf(sb, "node %u ", node);
  mlcc_strbuf_appendf(sb, "%s %u\t%s\t", dir, index, mlcc_dtype_name(v->dtype));
  char shape[256];
  mlcc_shape_format(&v->shape, shape, sizeof(shape));
  mlcc_strbuf_appendf(sb, "%s\n", shape);
}

mlcc_status_t mlcc_cache_explain_describe(const mlcc_graph_t* g, uint32_t kernel_index,
                                          const mlcc_codegen_options_t* options,
                                          const char* kernel_key, const char* store_key,
                                          char out_id[65], char** out_text, char* out_label,
                                          size_t label_size) {
  out_id[0] = '\0';
  *out_text = NULL;
  if (out_label != NULL && label_size) out_label[0] = '\0';
  if (kernel_index >= g->n_kernels || g->kernels[kernel_index].n_nodes == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "no kernel %u", kernel_index);
  }
  const mlcc_kernel_t* k = &g->kernels[kernel_index];
  const mlcc_node_t* anchor = k->nodes[0];
  char node_name[300];
  if (anchor->name != NULL && anchor->name[0] != '\0') {
    snprintf(node_name, sizeof(node_name), "%s", anchor->name);
  } else {
    snprintf(node_name, sizeof(node_name), "#%u", anchor->id);
  }
  const mlcc_target_t* t = options->target;
  const char* model = options->name ? options->name : "";
  // The record's name: target, model, node.
  unsigned char md[32];
  unsigned int md_len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
  if (ok) {
    digest_update(ctx, "mlcc-explain-v1", 15);
    digest_update(ctx, t->triple, strlen(t->triple));
    digest_update(ctx, model, strlen(model));
    digest_update(ctx, node_name, strlen(node_name));
    ok = EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len == 32;
  }
  EVP_MD_CTX_free(ctx);
  if (!ok) return mlcc_make_status(MLCC_STATUS_INTERNAL, "SHA-256 failed");
  to_hex(md, 32, out_id);

  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  mlcc_strbuf_append(&sb, "node\t");
  append_clean(&sb, node_name);
  mlcc_strbuf_append(&sb, "\nops\t");
  mlcc_strbuf_t ops;
  mlcc_strbuf_init(&ops);
  for (uint32_t i = 0; i < k->n_nodes; ++i) {
    const mlcc_op_desc_t* d = mlcc_op_desc(k->nodes[i]->op);
    mlcc_strbuf_appendf(&ops, "%s%s", i ? "+" : "", d ? d->name : "?");
  }
  mlcc_strbuf_append(&sb, mlcc_strbuf_cstr(&ops));
  mlcc_strbuf_append(&sb, "\ntriple\t");
  append_clean(&sb, t->triple);
  mlcc_strbuf_append(&sb, "\ncpu\t");
  append_clean(&sb, t->cpu);
  mlcc_strbuf_append(&sb, "\nfeatures\t");
  append_clean(&sb, t->features);
  mlcc_strbuf_appendf(&sb, "\nopt\t%d\n", options->opt_level);
  for (uint32_t j = 0; j < k->n_nodes; ++j) {
    const mlcc_node_t* n = k->nodes[j];
    for (uint32_t s = 0; s < n->n_inputs; ++s) append_slot(&sb, j, "input", s, n->inputs[s]);
    for (uint32_t o = 0; o < n->n_outputs; ++o) append_slot(&sb, j, "output", o, n->outputs[o]);
  }
  for (uint32_t j = 0; j < k->n_nodes; ++j) {
    const mlcc_node_t* n = k->nodes[j];
    for (uint32_t a = 0; a < n->n_attrs; ++a) {
      char dg[17];
      attr_digest(&n->attrs[a], dg);
      mlcc_strbuf_append(&sb, "attr\t");
      if (j != 0) mlcc_strbuf_appendf(&sb, "node %u ", j);
      append_clean(&sb, n->attrs[a].name ? n->attrs[a].name : "?");
      mlcc_strbuf_appendf(&sb, "\t%s\n", dg);
    }
  }
  mlcc_strbuf_appendf(&sb, "kernel_key\t%.64s\nstore_key\t%.64s\n", kernel_key, store_key);
  if (out_label != NULL && label_size) {
    snprintf(out_label, label_size, "node '%s', %s", node_name, mlcc_strbuf_cstr(&ops));
  }
  mlcc_strbuf_deinit(&ops);
  char* text = mlcc_strbuf_take(&sb);
  if (text == NULL) return oom();
  *out_text = text;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

enum { kMaxLines = 512, kFieldLen = 300 };

typedef struct rec_line_t {
  char tag[16];
  char a[kFieldLen], b[kFieldLen], c[kFieldLen];  // the fields after the tag
} rec_line_t;

typedef struct record_t {
  rec_line_t* lines;
  uint32_t n;
} record_t;

static void copy_field(char* dst, const char* src, size_t n) {
  size_t m = n < kFieldLen - 1 ? n : kFieldLen - 1;
  memcpy(dst, src, m);
  dst[m] = '\0';
}

static bool parse_record(const char* text, record_t* out) {
  out->n = 0;
  out->lines = (rec_line_t*)calloc(kMaxLines, sizeof(rec_line_t));
  if (out->lines == NULL) return false;
  const char* p = text;
  while (p != NULL && *p && out->n < kMaxLines) {
    const char* eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    rec_line_t* l = &out->lines[out->n];
    const char* f = p;
    const char* end = p + len;
    char* dst[4] = {l->tag, l->a, l->b, l->c};
    size_t caps[4] = {sizeof(l->tag), kFieldLen, kFieldLen, kFieldLen};
    for (int i = 0; i < 4 && f <= end; ++i) {
      const char* tab = memchr(f, '\t', (size_t)(end - f));
      const char* fe = tab ? tab : end;
      size_t n = (size_t)(fe - f);
      if (n >= caps[i]) n = caps[i] - 1;
      if (i == 0) {
        memcpy(dst[i], f, n);
        dst[i][n] = '\0';
      } else {
        copy_field(dst[i], f, n);
      }
      if (tab == NULL) break;
      f = tab + 1;
    }
    if (l->tag[0] != '\0') out->n++;
    p = eol ? eol + 1 : NULL;
  }
  return true;
}

static const char* scalar(const record_t* r, const char* tag) {
  for (uint32_t i = 0; i < r->n; ++i) {
    if (strcmp(r->lines[i].tag, tag) == 0) return r->lines[i].a;
  }
  return NULL;
}

static const rec_line_t* find_line(const record_t* r, const char* tag, const char* label) {
  for (uint32_t i = 0; i < r->n; ++i) {
    if (strcmp(r->lines[i].tag, tag) == 0 && strcmp(r->lines[i].a, label) == 0) {
      return &r->lines[i];
    }
  }
  return NULL;
}

static uint32_t count_tag(const record_t* r, const char* tag) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < r->n; ++i) n += strcmp(r->lines[i].tag, tag) == 0;
  return n;
}

static bool same(const char* a, const char* b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

typedef struct parts_t {
  mlcc_strbuf_t sb;
  uint32_t n;
} parts_t;

static void part(parts_t* p, const char* fmt, ...) MLCC_PRINTF(2, 3);
static void part(parts_t* p, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  mlcc_strbuf_appendf(&p->sb, "%s%s", p->n++ ? ", " : "", buf);
}

static void scalar_part(parts_t* p, const record_t* old, const record_t* cur, const char* tag,
                        const char* what) {
  const char* a = scalar(old, tag);
  const char* b = scalar(cur, tag);
  if (!same(a, b)) {
    part(p, "%s (%s -> %s)", what, a && a[0] ? a : "none", b && b[0] ? b : "none");
  }
}

// Slots: the first differing dtype and the first differing shape, with a
// count of the others.
static void slot_parts(parts_t* p, const record_t* old, const record_t* cur) {
  uint32_t n_old = count_tag(old, "slot"), n_cur = count_tag(cur, "slot");
  if (n_old != n_cur) {
    part(p, "shape (%u inputs and outputs -> %u)", n_old, n_cur);
    return;
  }
  const rec_line_t* first_dtype = NULL;
  const rec_line_t* first_dtype_old = NULL;
  const rec_line_t* first_shape = NULL;
  const rec_line_t* first_shape_old = NULL;
  uint32_t n_dtype = 0, n_shape = 0;
  for (uint32_t i = 0; i < cur->n; ++i) {
    const rec_line_t* c = &cur->lines[i];
    if (strcmp(c->tag, "slot") != 0) continue;
    const rec_line_t* o = find_line(old, "slot", c->a);
    if (o == NULL) {
      ++n_shape;
      continue;
    }
    if (strcmp(o->b, c->b) != 0 && n_dtype++ == 0) {
      first_dtype = c;
      first_dtype_old = o;
    }
    if (strcmp(o->c, c->c) != 0 && n_shape++ == 0) {
      first_shape = c;
      first_shape_old = o;
    }
  }
  if (first_shape != NULL) {
    char more[48] = "";
    if (n_shape > 1) snprintf(more, sizeof(more), "; and %u more", n_shape - 1);
    part(p, "shape (%s %s%s -> %s%s%s)", first_shape->a, first_shape_old->b,
         first_shape_old->c, first_shape->b, first_shape->c, more);
  } else if (n_shape != 0) {
    part(p, "shape (the kernel's inputs and outputs differ)");
  }
  if (first_dtype != NULL) {
    char more[48] = "";
    if (n_dtype > 1) snprintf(more, sizeof(more), "; and %u more", n_dtype - 1);
    part(p, "dtype (%s %s -> %s%s)", first_dtype->a, first_dtype_old->b, first_dtype->b, more);
  }
}

static void attr_parts(parts_t* p, const record_t* old, const record_t* cur) {
  mlcc_strbuf_t names;
  mlcc_strbuf_init(&names);
  uint32_t n = 0;
  for (uint32_t i = 0; i < cur->n; ++i) {
    const rec_line_t* c = &cur->lines[i];
    if (strcmp(c->tag, "attr") != 0) continue;
    const rec_line_t* o = find_line(old, "attr", c->a);
    if (o == NULL || strcmp(o->b, c->b) != 0) {
      mlcc_strbuf_appendf(&names, "%s%s%s", n++ ? ", " : "", c->a, o == NULL ? " added" : "");
    }
  }
  for (uint32_t i = 0; i < old->n; ++i) {
    const rec_line_t* o = &old->lines[i];
    if (strcmp(o->tag, "attr") == 0 && find_line(cur, "attr", o->a) == NULL) {
      mlcc_strbuf_appendf(&names, "%s%s removed", n++ ? ", " : "", o->a);
    }
  }
  if (n != 0) part(p, "attribute (%s)", mlcc_strbuf_cstr(&names));
  mlcc_strbuf_deinit(&names);
}

void mlcc_cache_explain_diff(const char* previous, const char* current, char* buf,
                             size_t buf_size) {
  if (previous == NULL) {
    snprintf(buf, buf_size, "no previous entry for this node");
    return;
  }
  record_t old = {0}, cur = {0};
  if (!parse_record(previous, &old) || !parse_record(current, &cur)) {
    free(old.lines);
    free(cur.lines);
    snprintf(buf, buf_size, "out of memory comparing with the previous entry");
    return;
  }
  parts_t p;
  mlcc_strbuf_init(&p.sb);
  p.n = 0;
  scalar_part(&p, &old, &cur, "ops", "ops");
  slot_parts(&p, &old, &cur);
  attr_parts(&p, &old, &cur);
  scalar_part(&p, &old, &cur, "triple", "target");
  scalar_part(&p, &old, &cur, "cpu", "CPU");
  scalar_part(&p, &old, &cur, "features", "features");
  scalar_part(&p, &old, &cur, "opt", "opt level");
  const char* old_kernel = scalar(&old, "kernel_key");
  const char* old_store = scalar(&old, "store_key");
  bool kernel_same = same(old_kernel, scalar(&cur, "kernel_key"));
  bool store_same = same(old_store, scalar(&cur, "store_key"));
  if (p.n == 0 && !kernel_same) {
    part(&p, "codegen (the code generator's key: mlcc or LLVM version, an emitter, the fused "
             "structure or the key format)");
  } else if (p.n == 0 && !store_same) {
    part(&p, "codegen hash (another mlcc build: the store key's compiler identity)");
  }
  char prev_symbol[40];
  snprintf(prev_symbol, sizeof(prev_symbol), "mlcc_k_%.24s", old_kernel ? old_kernel : "?");
  if (p.n == 0) {
    snprintf(buf, buf_size,
             "previous entry for this node (%s) has the same key: the entry was removed "
             "(evicted, cleared or damaged)",
             prev_symbol);
  } else {
    snprintf(buf, buf_size, "previous entry for this node (%s): changed: %s", prev_symbol,
             mlcc_strbuf_cstr(&p.sb));
  }
  mlcc_strbuf_deinit(&p.sb);
  free(old.lines);
  free(cur.lines);
}

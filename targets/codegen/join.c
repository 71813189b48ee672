// SPDX-License-Identifier: Apache-2.0
// Joining separately emitted LLVM IR / assembly parts into one -S /
// --emit=ll|asm output, and the checks a cached kernel text passes first
// (codegen.h: mlcc_codegen_join_text, mlcc_codegen_check_kernel_text).
#include <ctype.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/codegen/codegen.h"
#include "targets/llvm/llvm_ctx.h"

// ---------------------------------------------------------------------------
// LLVM IR: parse every part into one context and link them.

typedef struct diag_capture_t {
  char text[512];
} diag_capture_t;

static void capture_diagnostic(LLVMDiagnosticInfoRef info, void* ctx) {
  diag_capture_t* d = (diag_capture_t*)ctx;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || d->text[0] != '\0') return;
  char* msg = LLVMGetDiagInfoDescription(info);
  snprintf(d->text, sizeof(d->text), "%s", msg ? msg : "?");
  LLVMDisposeMessage(msg);
}

// Parses |size| bytes of IR text (copied; need not be NUL-terminated).
static mlcc_status_t parse_ll(LLVMContextRef llctx, const uint8_t* data, size_t size,
                              const char* what, LLVMModuleRef* out) {
  *out = NULL;
  LLVMMemoryBufferRef mb =
      LLVMCreateMemoryBufferWithMemoryRangeCopy((const char*)data, size, what);
  if (mb == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory (%zu bytes)", size);
  }
  char* err = NULL;
  if (LLVMParseIRInContext(llctx, mb, out, &err)) {  // takes |mb| in all cases
    *out = NULL;
    return mlcc_llvm_message_status(MLCC_STATUS_INVALID_MODEL, what, err);
  }
  if (err) LLVMDisposeMessage(err);
  return mlcc_ok_status();
}

static mlcc_status_t join_ll(const mlcc_buffer_t* parts, uint32_t n_parts, mlcc_buffer_t* out) {
  mlcc_llvm_init();
  LLVMContextRef llctx = LLVMContextCreate();
  diag_capture_t diag = {{0}};
  LLVMContextSetDiagnosticHandler(llctx, capture_diagnostic, &diag);
  LLVMModuleRef dest = NULL;
  mlcc_status_t s = parse_ll(llctx, parts[0].data, parts[0].size, "LLVM IR part 1", &dest);
  for (uint32_t i = 1; i < n_parts && s == NULL; ++i) {
    char what[64];
    snprintf(what, sizeof(what), "LLVM IR part %u", i + 1);
    LLVMModuleRef src = NULL;
    s = parse_ll(llctx, parts[i].data, parts[i].size, what, &src);
    if (s == NULL && LLVMLinkModules2(dest, src)) {  // |src| is destroyed either way
      s = mlcc_make_status(MLCC_STATUS_INTERNAL, "linking %s: %s", what,
                           diag.text[0] ? diag.text : "LLVM linker error");
    }
  }
  if (s == NULL) {
    char* err = NULL;
    if (LLVMVerifyModule(dest, LLVMReturnStatusAction, &err)) {
      s = mlcc_llvm_message_status(MLCC_STATUS_INTERNAL, "the joined module", err);
    } else if (err) {
      LLVMDisposeMessage(err);
    }
  }
  if (s == NULL) s = mlcc_llvm_emit(dest, NULL, MLCC_OUTPUT_LL, out);
  if (dest != NULL) LLVMDisposeModule(dest);
  LLVMContextDispose(llctx);
  return s;
}

// ---------------------------------------------------------------------------
// Assembly: concatenate, renaming each part's assembler-local labels.

static bool symbol_char(int ch) {
  return isalnum(ch) || ch == '_' || ch == '.' || ch == '$';
}

// A growable output text; |failed| on allocation failure.
typedef struct text_out_t {
  char* data;
  size_t size, cap;
  bool failed;
} text_out_t;

static void text_reserve(text_out_t* o, size_t more) {
  if (o->failed || o->size + more <= o->cap) return;
  size_t cap = o->cap ? o->cap : 4096;
  while (cap < o->size + more) cap *= 2;
  char* d = (char*)realloc(o->data, cap);
  if (d == NULL) {
    o->failed = true;
    return;
  }
  o->data = d;
  o->cap = cap;
}

static void text_append(text_out_t* o, const char* s, size_t n) {
  text_reserve(o, n);
  if (o->failed) return;
  memcpy(o->data + o->size, s, n);
  o->size += n;
}

// True if the line |line| (|len| bytes, leading blanks skipped) is the
// directive |name|.
static bool directive_is(const char* line, size_t len, const char* name) {
  size_t n = strlen(name);
  return len > n && memcmp(line, name, n) == 0 && (line[n] == ' ' || line[n] == '\t');
}

// Appends part |index|'s text with every ".L<name>" token outside a string
// literal renamed ".Lm<index>_<name>": LLVM numbers its local labels
// (.LBB0_1, .LCPI0_0, .Ltmp0, .Lfunc_end0) per module, so two parts would
// otherwise define the same ones. Parts after the first lose their ".file"
// line (one source file name per output) and their RISC-V ".attribute"
// lines, which GNU as takes only before the first instruction (every part
// is built for the same target, so the first part's are the output's).
static void append_asm_part(text_out_t* o, const mlcc_buffer_t* part, uint32_t index) {
  const char* t = (const char*)part->data;
  size_t n = part->size;
  char prefix[24];
  int prefix_len = snprintf(prefix, sizeof(prefix), ".Lm%u_", index);
  size_t i = 0;
  while (i < n && !o->failed) {
    size_t eol = i;
    while (eol < n && t[eol] != '\n') ++eol;
    size_t first = i;
    while (first < eol && (t[first] == ' ' || t[first] == '\t')) ++first;
    bool skip = index > 0 && (directive_is(t + first, eol - first, ".file") ||
                              directive_is(t + first, eol - first, ".attribute"));
    if (!skip) {
      bool in_string = false;
      size_t span = i;  // start of the text not yet copied
      for (size_t p = i; p < eol; ++p) {
        char ch = t[p];
        if (in_string) {
          if (ch == '\\') {
            ++p;
          } else if (ch == '"') {
            in_string = false;
          }
          continue;
        }
        if (ch == '"') {
          in_string = true;
        } else if (ch == '.' && p + 2 < eol && t[p + 1] == 'L' &&
                   symbol_char((unsigned char)t[p + 2]) &&
                   (p == i || !symbol_char((unsigned char)t[p - 1]))) {
          text_append(o, t + span, p - span);
          text_append(o, prefix, (size_t)prefix_len);
          span = p + 2;
          ++p;
        }
      }
      text_append(o, t + span, eol - span);
      text_append(o, "\n", 1);
    }
    i = eol + 1;
  }
}

static mlcc_status_t join_asm(const mlcc_buffer_t* parts, uint32_t n_parts, mlcc_buffer_t* out) {
  text_out_t o = {0};
  size_t total = 0;
  for (uint32_t i = 0; i < n_parts; ++i) total += parts[i].size;
  text_reserve(&o, total + total / 16 + 64);
  for (uint32_t i = 0; i < n_parts; ++i) append_asm_part(&o, &parts[i], i);
  if (o.failed) {
    free(o.data);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory joining %zu bytes of assembly", total);
  }
  out->data = (uint8_t*)o.data;
  out->size = o.size;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_join_text(mlcc_output_kind_t kind, const mlcc_buffer_t* parts,
                                     uint32_t n_parts, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  if (n_parts == 0 || (kind != MLCC_OUTPUT_LL && kind != MLCC_OUTPUT_ASM)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "joining needs at least one LLVM IR or assembly part");
  }
  return kind == MLCC_OUTPUT_LL ? join_ll(parts, n_parts, out) : join_asm(parts, n_parts, out);
}

// ---------------------------------------------------------------------------
// Checks of a cached kernel text.

// |name| is the kernel's own symbol or its range part "<symbol>_r".
static bool own_symbol(const char* name, size_t len, const char* symbol) {
  size_t n = strlen(symbol);
  if (len == n && memcmp(name, symbol, n) == 0) return true;
  return len == n + 2 && memcmp(name, symbol, n) == 0 && memcmp(name + n, "_r", 2) == 0;
}

static mlcc_status_t check_ll(const uint8_t* data, size_t size, const char* symbol,
                              bool (*allowed)(const char* name)) {
  mlcc_llvm_init();
  LLVMContextRef llctx = LLVMContextCreate();
  diag_capture_t diag = {{0}};
  LLVMContextSetDiagnosticHandler(llctx, capture_diagnostic, &diag);
  LLVMModuleRef m = NULL;
  mlcc_status_t s = parse_ll(llctx, data, size, "does not parse", &m);
  if (s == NULL) {
    size_t asm_len = 0;
    LLVMGetModuleInlineAsm(m, &asm_len);
    if (asm_len != 0) s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has module-level asm");
  }
  bool defined = false;
  for (LLVMValueRef f = m ? LLVMGetFirstFunction(m) : NULL; f != NULL && s == NULL;
       f = LLVMGetNextFunction(f)) {
    size_t len = 0;
    const char* name = LLVMGetValueName2(f, &len);
    if (LLVMIsDeclaration(f)) {
      if (LLVMGetIntrinsicID(f) != 0) continue;
      char buf[128];
      snprintf(buf, sizeof(buf), "%.*s", (int)(len < 127 ? len : 127), name);
      if (len >= 127 || !allowed(buf)) {
        s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                             "calls '%s', which is not on the allowlist", buf);
      }
    } else if (own_symbol(name, len, symbol)) {
      defined = true;
    } else if (LLVMGetLinkage(f) != LLVMPrivateLinkage && LLVMGetLinkage(f) != LLVMInternalLinkage) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "defines the foreign function '%.*s'",
                           (int)(len < 100 ? len : 100), name);
    }
  }
  for (LLVMValueRef g = m ? LLVMGetFirstGlobal(m) : NULL; g != NULL && s == NULL;
       g = LLVMGetNextGlobal(g)) {
    size_t len = 0;
    const char* name = LLVMGetValueName2(g, &len);
    LLVMLinkage l = LLVMGetLinkage(g);
    bool local = l == LLVMPrivateLinkage || l == LLVMInternalLinkage;
    if (!local || !LLVMIsGlobalConstant(g) || LLVMIsThreadLocal(g) ||
        LLVMIsDeclaration(g)) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                           "has the global '%.*s' (a kernel holds only private constants)",
                           (int)(len < 100 ? len : 100), name);
    }
  }
  if (s == NULL && m != NULL && LLVMGetFirstGlobalAlias(m) != NULL) {
    s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has an alias");
  }
  if (s == NULL && !defined) {
    s = mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "does not define '%s'", symbol);
  }
  if (m != NULL) LLVMDisposeModule(m);
  LLVMContextDispose(llctx);
  return s;
}

// The directives an LLVM-written kernel file uses for the supported targets.
static const char* const kAsmDirectives[] = {
    ".text", ".section", ".globl", ".weak", ".hidden", ".type", ".size", ".p2align",
    ".align", ".file", ".ident", ".addrsig", ".addrsig_sym", ".byte", ".short", ".hword",
    ".word", ".long", ".quad", ".zero", ".ascii", ".asciz", ".attribute", ".option",
    ".eabi_attribute", ".syntax", ".thumb", ".thumb_func", ".code", ".fpu", ".arch",
    ".cpu", ".arch_extension", ".variant_pcs", ".inst", ".p2alignl", ".p2alignw",
    ".cfi_sections", ".cfi_startproc", ".cfi_endproc", ".cfi_def_cfa_offset",
    ".cfi_offset", ".cfi_def_cfa", ".cfi_def_cfa_register", ".cfi_restore",
    ".cfi_adjust_cfa_offset", ".cfi_rel_offset", ".cfi_remember_state",
    ".cfi_restore_state", ".fnstart", ".fnend", ".cantunwind", ".save", ".vsave",
    ".pad", ".setfp", ".movsp", ".personality", ".handlerdata", ".unreq", ".req",
    ".ltorg", ".pool", ".balign", ".space", ".float", ".double", ".int", ".2byte",
    ".4byte", ".8byte", ".loc", ".previous", ".pushsection", ".popsection",
};

// Sections a kernel may put anything in (prefix match on the name).
static const char* const kAsmSections[] = {
    ".text", ".rodata", ".note.GNU-stack", ".ARM.exidx", ".ARM.extab", ".srodata",
};

static bool known_directive(const char* tok, size_t len) {
  for (size_t i = 0; i < sizeof(kAsmDirectives) / sizeof(kAsmDirectives[0]); ++i) {
    if (strlen(kAsmDirectives[i]) == len && memcmp(kAsmDirectives[i], tok, len) == 0) return true;
  }
  return len > 5 && memcmp(tok, ".cfi_", 5) == 0;
}

static bool allowed_section(const char* name, size_t len) {
  if (len > 0 && name[0] == '"') {  // a quoted name
    ++name;
    len = len >= 2 ? len - 2 : 0;
  }
  for (size_t i = 0; i < sizeof(kAsmSections) / sizeof(kAsmSections[0]); ++i) {
    size_t n = strlen(kAsmSections[i]);
    if (len >= n && memcmp(name, kAsmSections[i], n) == 0 &&
        (len == n || name[n] == '.' || strcmp(kAsmSections[i], ".rodata") == 0)) {
      return true;
    }
  }
  return false;
}

static mlcc_status_t check_asm(const uint8_t* data, size_t size, const char* symbol) {
  for (size_t i = 0; i < size; ++i) {
    uint8_t b = data[i];
    if (b != '\n' && b != '\t' && (b < 0x20 || b > 0x7e)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "is not assembly text (byte 0x%02x at offset %zu)", b, i);
    }
  }
  const char* t = (const char*)data;
  bool defined = false;
  size_t line = 0;
  for (size_t i = 0; i < size; ++line) {
    size_t eol = i;
    while (eol < size && t[eol] != '\n') ++eol;
    size_t p = i;
    while (p < eol && (t[p] == ' ' || t[p] == '\t')) ++p;
    size_t tok = p;
    while (p < eol && symbol_char((unsigned char)t[p])) ++p;
    size_t tok_len = p - tok;
    if (tok_len > 0 && p < eol && t[p] == ':') {  // a label
      bool local = tok_len > 2 && t[tok] == '.' && t[tok + 1] == 'L';
      if (own_symbol(t + tok, tok_len, symbol)) {
        defined = true;
      } else if (!local) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "defines the label '%.*s' (line %zu)",
                                (int)(tok_len < 100 ? tok_len : 100), t + tok, line + 1);
      }
    } else if (tok_len > 1 && t[tok] == '.') {  // a directive
      if (!known_directive(t + tok, tok_len)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "uses the directive '%.*s' (line %zu)",
                                (int)(tok_len < 100 ? tok_len : 100), t + tok, line + 1);
      }
      while (p < eol && (t[p] == ' ' || t[p] == '\t')) ++p;
      size_t arg = p;
      while (p < eol && t[p] != ',' && t[p] != ' ' && t[p] != '\t') ++p;
      size_t arg_len = p - arg;
      bool names_symbol = (tok_len == 6 && memcmp(t + tok, ".globl", 6) == 0) ||
                          (tok_len == 5 && memcmp(t + tok, ".weak", 5) == 0) ||
                          (tok_len == 7 && memcmp(t + tok, ".hidden", 7) == 0);
      if (names_symbol && !own_symbol(t + arg, arg_len, symbol)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "declares the foreign symbol '%.*s' (line %zu)",
                                (int)(arg_len < 100 ? arg_len : 100), t + arg, line + 1);
      }
      bool section = (tok_len == 8 && memcmp(t + tok, ".section", 8) == 0) ||
                     (tok_len == 12 && memcmp(t + tok, ".pushsection", 12) == 0);
      if (section && !allowed_section(t + arg, arg_len)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "uses the section '%.*s' (line %zu)",
                                (int)(arg_len < 100 ? arg_len : 100), t + arg, line + 1);
      }
    } else if (p < eol && t[p] == '=') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "assigns a symbol (line %zu)",
                              line + 1);
    }
    i = eol + 1;
  }
  if (!defined) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "does not define '%s'", symbol);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_codegen_check_kernel_text(mlcc_output_kind_t kind, const uint8_t* data,
                                             size_t size, const char* symbol,
                                             bool (*allowed)(const char* name)) {
  if (kind == MLCC_OUTPUT_LL) return check_ll(data, size, symbol, allowed);
  if (kind == MLCC_OUTPUT_ASM) return check_asm(data, size, symbol);
  return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "not a text output kind");
}

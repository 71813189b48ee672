// SPDX-License-Identifier: Apache-2.0
// ELF64 little-endian relocatable object with one data section and one
// symbol; see targets/llvm/elf_writer.h for the layout. Field offsets and values are the
// gABI's (Elf64_Ehdr, Elf64_Shdr, Elf64_Sym); every field is encoded
// explicitly little-endian, so the output does not depend on the host.
#include "targets/llvm/elf_writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// gABI constants used below.
enum {
  kEhdrSize = 64,       // sizeof(Elf64_Ehdr)
  kShdrSize = 64,       // sizeof(Elf64_Shdr)
  kSymSize = 24,        // sizeof(Elf64_Sym)
  kET_REL = 1,
  kEV_CURRENT = 1,
  kELFCLASS64 = 2,
  kELFDATA2LSB = 1,
  kELFOSABI_NONE = 0,
  kSHT_PROGBITS = 1,
  kSHT_SYMTAB = 2,
  kSHT_STRTAB = 3,
  kSHF_ALLOC = 0x2,
  kSTB_LOCAL = 0,
  kSTB_GLOBAL = 1,
  kSTT_OBJECT = 1,
  kSTT_SECTION = 3,
  kSTV_HIDDEN = 2,
  kMaxAlign = 4096,
};

// Section indices, in header-table order.
enum {
  kSecNull = 0,
  kSecData = 1,
  kSecNote = 2,
  kSecSymtab = 3,
  kSecStrtab = 4,
  kSecShstrtab = 5,
  kSecCount = 6,
};

static const char kNoteName[] = ".note.GNU-stack";
static const char kSymtabName[] = ".symtab";
static const char kStrtabName[] = ".strtab";
static const char kShstrtabName[] = ".shstrtab";

//===----------------------------------------------------------------------===//
// Target mapping
//===----------------------------------------------------------------------===//

// True if the comma-separated LLVM feature list enables |name| (the last
// "+name"/"-name" wins, as in LLVM).
static bool feature_enabled(const char* features, const char* name) {
  bool on = false;
  size_t nlen = strlen(name);
  for (const char* p = features; p != NULL && *p != '\0';) {
    const char* end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == nlen + 1 && (p[0] == '+' || p[0] == '-') && memcmp(p + 1, name, nlen) == 0) {
      on = p[0] == '+';
    }
    p = end ? end + 1 : NULL;
  }
  return on;
}

mlcc_status_t mlcc_elf_machine_for_target(const mlcc_target_t* target, uint16_t* out_machine,
                                          uint32_t* out_flags) {
  *out_machine = 0;
  *out_flags = 0;
  if (target == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "no target for the ELF writer");
  }
  switch (target->arch) {
    case MLCC_ARCH_X86_64: *out_machine = MLCC_ELF_EM_X86_64; return mlcc_ok_status();
    case MLCC_ARCH_AARCH64: *out_machine = MLCC_ELF_EM_AARCH64; return mlcc_ok_status();
    case MLCC_ARCH_RISCV64: {
      // The float ABI follows the "target-abi" module flag that
      // mlcc_llvm_set_module_target derives from the features (same test,
      // so the weights object always agrees with the kernels; GNU ld refuses
      // to link objects with different float ABIs). RVC is OR-ed by linkers,
      // so a CPU that implies C without "+c" is harmless.
      uint32_t flags = 0;
      if (strstr(target->features, "+d") != NULL) {
        flags |= MLCC_ELF_EF_RISCV_FLOAT_ABI_DOUBLE;
      } else if (strstr(target->features, "+f") != NULL) {
        flags |= MLCC_ELF_EF_RISCV_FLOAT_ABI_SINGLE;
      }
      if (feature_enabled(target->features, "c")) flags |= MLCC_ELF_EF_RISCV_RVC;
      *out_machine = MLCC_ELF_EM_RISCV;
      *out_flags = flags;
      return mlcc_ok_status();
    }
    default: break;  // the 32-bit microcontrollers: weights.c uses LLVM there
  }
  return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "no ELF machine for target '%s'",
                          target->triple);
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

typedef struct layout_t {
  uint64_t data_off;
  uint64_t note_off;
  uint64_t symtab_off, symtab_size;
  uint64_t strtab_off, strtab_size;
  uint64_t shstrtab_off, shstrtab_size;
  uint64_t shoff;
  uint64_t total;
  // .shstrtab offsets of each section's name.
  uint32_t name_data, name_note, name_symtab, name_strtab, name_shstrtab;
} layout_t;

static bool add_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (a > UINT64_MAX - b) return false;
  *out = a + b;
  return true;
}

static bool align_u64(uint64_t v, uint64_t align, uint64_t* out) {
  return add_u64(v, align - 1, out) && ((*out &= ~(align - 1)), true);
}

static mlcc_status_t compute_layout(const mlcc_elf_data_object_t* o, layout_t* out) {
  memset(out, 0, sizeof(*out));
  if (o == NULL || o->section_name == NULL || o->section_name[0] == '\0' ||
      o->symbol == NULL || o->symbol[0] == '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "an ELF data object needs a section name and a symbol");
  }
  if (o->align == 0 || o->align > kMaxAlign || (o->align & (o->align - 1)) != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "ELF section alignment must be a power of two in 1..%d; got %llu",
                            kMaxAlign, (unsigned long long)o->align);
  }
  if (o->n_chunks != 0 && o->chunks == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "%u chunks but no chunk array",
                            o->n_chunks);
  }
  uint64_t prev_end = 0;
  for (uint32_t i = 0; i < o->n_chunks; ++i) {
    const mlcc_elf_chunk_t* c = &o->chunks[i];
    uint64_t end;
    if (c->offset < prev_end || !add_u64(c->offset, c->size, &end) || end > o->size ||
        (c->size != 0 && c->data == NULL)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "ELF data chunk %u [%llu, +%llu) must follow the previous one "
                              "(ending at %llu), have data, and lie inside the %llu-byte "
                              "section",
                              i, (unsigned long long)c->offset, (unsigned long long)c->size,
                              (unsigned long long)prev_end, (unsigned long long)o->size);
    }
    prev_end = end;
  }
  size_t sec_len = strlen(o->section_name), sym_len = strlen(o->symbol);
  // .shstrtab: "\0" data "\0" note "\0" symtab "\0" strtab "\0" shstrtab "\0".
  uint64_t sh = 1;
  out->name_data = (uint32_t)sh;
  sh += sec_len + 1;
  out->name_note = (uint32_t)sh;
  sh += sizeof(kNoteName);
  out->name_symtab = (uint32_t)sh;
  sh += sizeof(kSymtabName);
  out->name_strtab = (uint32_t)sh;
  sh += sizeof(kStrtabName);
  out->name_shstrtab = (uint32_t)sh;
  sh += sizeof(kShstrtabName);
  if (sec_len > UINT32_MAX / 2 || sym_len > UINT32_MAX / 2) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "ELF names too long");
  }
  out->shstrtab_size = sh;
  out->strtab_size = 1 + sym_len + 1;
  out->symtab_size = 3 * kSymSize;
  bool ok = align_u64(kEhdrSize, o->align, &out->data_off) &&
            add_u64(out->data_off, o->size, &out->note_off) &&
            align_u64(out->note_off, 8, &out->symtab_off) &&
            add_u64(out->symtab_off, out->symtab_size, &out->strtab_off) &&
            add_u64(out->strtab_off, out->strtab_size, &out->shstrtab_off) &&
            add_u64(out->shstrtab_off, out->shstrtab_size, &out->shoff) &&
            align_u64(out->shoff, 8, &out->shoff) &&
            add_u64(out->shoff, (uint64_t)kSecCount * kShdrSize, &out->total);
  if (!ok) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "ELF object size overflows (%llu data bytes)",
                            (unsigned long long)o->size);
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_elf_object_size(const mlcc_elf_data_object_t* object, uint64_t* out_size) {
  *out_size = 0;
  layout_t l;
  MLCC_RETURN_IF_ERROR(compute_layout(object, &l));
  *out_size = l.total;
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Output sink: a FILE* or a preallocated buffer
//===----------------------------------------------------------------------===//

typedef struct sink_t {
  FILE* file;      // either this,
  uint8_t* mem;    // or this (sized to the layout's total)
  uint64_t pos;
  int error;       // errno of the first failed write, or -1 if unknown
} sink_t;

static void put(sink_t* s, const void* data, uint64_t size) {
  if (s->error != 0 || size == 0) return;
  if (s->mem != NULL) {
    memcpy(s->mem + s->pos, data, (size_t)size);
  } else if (fwrite(data, 1, (size_t)size, s->file) != (size_t)size) {
    s->error = errno ? errno : -1;
    return;
  }
  s->pos += size;
}

static void put_zeros(sink_t* s, uint64_t size) {
  static const uint8_t zeros[4096];
  while (size > 0 && s->error == 0) {
    uint64_t n = size < sizeof(zeros) ? size : sizeof(zeros);
    put(s, zeros, n);
    size -= n;
  }
}

// Pads with zeros up to file offset |off| (never backwards).
static void pad_to(sink_t* s, uint64_t off) {
  if (off > s->pos) put_zeros(s, off - s->pos);
}

static void le16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static void le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

// Elf64_Shdr.
static void put_shdr(sink_t* s, uint32_t name, uint32_t type, uint64_t flags, uint64_t offset,
                     uint64_t size, uint32_t link, uint32_t info, uint64_t align,
                     uint64_t entsize) {
  uint8_t h[kShdrSize];
  memset(h, 0, sizeof(h));
  le32(h + 0, name);
  le32(h + 4, type);
  le64(h + 8, flags);
  le64(h + 16, 0);  // sh_addr: not loaded yet
  le64(h + 24, offset);
  le64(h + 32, size);
  le32(h + 40, link);
  le32(h + 44, info);
  le64(h + 48, align);
  le64(h + 56, entsize);
  put(s, h, sizeof(h));
}

// Elf64_Sym.
static void put_sym(sink_t* s, uint32_t name, uint8_t info, uint8_t other, uint16_t shndx,
                    uint64_t value, uint64_t size) {
  uint8_t e[kSymSize];
  memset(e, 0, sizeof(e));
  le32(e + 0, name);
  e[4] = info;
  e[5] = other;
  le16(e + 6, shndx);
  le64(e + 8, value);
  le64(e + 16, size);
  put(s, e, sizeof(e));
}

static void write_object(const mlcc_elf_data_object_t* o, const layout_t* l, sink_t* s) {
  // Elf64_Ehdr.
  uint8_t h[kEhdrSize];
  memset(h, 0, sizeof(h));
  h[0] = 0x7f;
  h[1] = 'E';
  h[2] = 'L';
  h[3] = 'F';
  h[4] = kELFCLASS64;
  h[5] = kELFDATA2LSB;
  h[6] = kEV_CURRENT;
  h[7] = kELFOSABI_NONE;
  le16(h + 16, kET_REL);
  le16(h + 18, o->machine);
  le32(h + 20, kEV_CURRENT);
  le64(h + 24, 0);  // e_entry
  le64(h + 32, 0);  // e_phoff: no program headers
  le64(h + 40, l->shoff);
  le32(h + 48, o->flags);
  le16(h + 52, kEhdrSize);
  le16(h + 54, 0);  // e_phentsize
  le16(h + 56, 0);  // e_phnum
  le16(h + 58, kShdrSize);
  le16(h + 60, kSecCount);
  le16(h + 62, kSecShstrtab);
  put(s, h, sizeof(h));

  // The data, chunk by chunk, zero-filling the gaps.
  pad_to(s, l->data_off);
  for (uint32_t i = 0; i < o->n_chunks; ++i) {
    pad_to(s, l->data_off + o->chunks[i].offset);
    put(s, o->chunks[i].data, o->chunks[i].size);
  }
  pad_to(s, l->note_off);  // the tail of the data; .note.GNU-stack is empty

  // .symtab: null, section symbol, the global.
  pad_to(s, l->symtab_off);
  put_sym(s, 0, 0, 0, 0, 0, 0);
  put_sym(s, 0, (kSTB_LOCAL << 4) | kSTT_SECTION, 0, kSecData, 0, 0);
  put_sym(s, 1, (kSTB_GLOBAL << 4) | kSTT_OBJECT, kSTV_HIDDEN, kSecData, 0, o->size);

  // .strtab, .shstrtab.
  put(s, "", 1);
  put(s, o->symbol, strlen(o->symbol) + 1);
  put(s, "", 1);
  put(s, o->section_name, strlen(o->section_name) + 1);
  put(s, kNoteName, sizeof(kNoteName));
  put(s, kSymtabName, sizeof(kSymtabName));
  put(s, kStrtabName, sizeof(kStrtabName));
  put(s, kShstrtabName, sizeof(kShstrtabName));

  // Section header table.
  pad_to(s, l->shoff);
  put_shdr(s, 0, 0, 0, 0, 0, 0, 0, 0, 0);  // SHN_UNDEF
  put_shdr(s, l->name_data, kSHT_PROGBITS, kSHF_ALLOC, l->data_off, o->size, 0, 0, o->align, 0);
  put_shdr(s, l->name_note, kSHT_PROGBITS, 0, l->note_off, 0, 0, 0, 1, 0);
  // sh_link: the string table; sh_info: one past the last local symbol.
  put_shdr(s, l->name_symtab, kSHT_SYMTAB, 0, l->symtab_off, l->symtab_size, kSecStrtab, 2, 8,
           kSymSize);
  put_shdr(s, l->name_strtab, kSHT_STRTAB, 0, l->strtab_off, l->strtab_size, 0, 0, 1, 0);
  put_shdr(s, l->name_shstrtab, kSHT_STRTAB, 0, l->shstrtab_off, l->shstrtab_size, 0, 0, 1, 0);
}

mlcc_status_t mlcc_elf_write_file(const mlcc_elf_data_object_t* object, const char* path) {
  layout_t l;
  MLCC_RETURN_IF_ERROR(compute_layout(object, &l));
  FILE* f = fopen(path, "wb");
  if (f == NULL) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot create '%s': %s", path, strerror(errno));
  }
  // Small pieces (headers, padding) are buffered; large chunks bypass the
  // buffer and go straight to write(2).
  static const size_t kBuffer = 1 << 16;
  setvbuf(f, NULL, _IOFBF, kBuffer);
  sink_t s = {f, NULL, 0, 0};
  errno = 0;
  write_object(object, &l, &s);
  if (s.error == 0 && fflush(f) != 0) s.error = errno ? errno : -1;
  if (fclose(f) != 0 && s.error == 0) s.error = errno ? errno : -1;
  if (s.error == 0 && s.pos != l.total) s.error = -1;
  if (s.error != 0) {
    int err = s.error;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) remove(path);
    return mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': %s", path,
                            err > 0 ? strerror(err) : "short write");
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_elf_write_buffer(const mlcc_elf_data_object_t* object, uint8_t** out_data,
                                    size_t* out_size) {
  *out_data = NULL;
  *out_size = 0;
  layout_t l;
  MLCC_RETURN_IF_ERROR(compute_layout(object, &l));
  if (l.total > SIZE_MAX) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "ELF object of %llu bytes",
                            (unsigned long long)l.total);
  }
  uint8_t* mem = malloc((size_t)l.total);
  if (mem == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory for an ELF object of %llu bytes",
                            (unsigned long long)l.total);
  }
  sink_t s = {NULL, mem, 0, 0};
  write_object(object, &l, &s);
  if (s.pos != l.total) {
    free(mem);
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "ELF writer wrote %llu of %llu bytes",
                            (unsigned long long)s.pos, (unsigned long long)l.total);
  }
  *out_data = mem;
  *out_size = (size_t)l.total;
  return mlcc_ok_status();
}

// SPDX-License-Identifier: Apache-2.0
// Checks of cached kernel objects before use: see object_check.h.
#include "driver/object_check.h"

#include <stdlib.h>
#include <string.h>

#include "targets/llvm/elf_writer.h"

// ELF constants (the System V gABI; only what the check needs).
// Field offsets and sizes of one ELF class (the System V gABI).
typedef struct elf_layout_t {
  int is64;
  uint32_t ehdr, shdr, sym, rela, rel;
  // Elf_Ehdr
  uint32_t e_phoff, e_shoff, e_flags, e_phnum, e_shentsize, e_shnum, e_shstrndx;
  // Elf_Shdr
  uint32_t sh_flags, sh_offset, sh_size, sh_link, sh_info, sh_entsize;
  // Elf_Sym
  uint32_t st_info, st_shndx;
} elf_layout_t;

static const elf_layout_t kElf64 = {
    .is64 = 1, .ehdr = 64, .shdr = 64, .sym = 24, .rela = 24, .rel = 16,
    .e_phoff = 32, .e_shoff = 40, .e_flags = 48, .e_phnum = 56, .e_shentsize = 58,
    .e_shnum = 60, .e_shstrndx = 62,
    .sh_flags = 8, .sh_offset = 24, .sh_size = 32, .sh_link = 40, .sh_info = 44, .sh_entsize = 56,
    .st_info = 4, .st_shndx = 6};
static const elf_layout_t kElf32 = {
    .is64 = 0, .ehdr = 52, .shdr = 40, .sym = 16, .rela = 12, .rel = 8,
    .e_phoff = 28, .e_shoff = 32, .e_flags = 36, .e_phnum = 44, .e_shentsize = 46,
    .e_shnum = 48, .e_shstrndx = 50,
    .sh_flags = 8, .sh_offset = 16, .sh_size = 20, .sh_link = 24, .sh_info = 28, .sh_entsize = 36,
    .st_info = 12, .st_shndx = 14};

#define MLCC_ELF_EM_ARM 40
#define EF_ARM_EABI_VER5 0x05000000u
#define EF_ARM_FLOAT_ABI_BITS 0x600u  // EF_ARM_ABI_FLOAT_SOFT | _HARD
#define SHT_ARM_EXIDX 0x70000001u
#define SHT_ARM_ATTRIBUTES 0x70000003u
#define SHF_LINK_ORDER 0x80u  // .ARM.exidx only: orders the unwind table by its function

enum {
  kEtRel = 1,
  kShnUndef = 0,
  kShnLoreserve = 0xff00,
  kShnAbs = 0xfff1,
  kShnCommon = 0xfff2,
  kShnXindex = 0xffff,
  kSttNotype = 0,
  kSttObject = 1,
  kSttFunc = 2,
  kSttSection = 3,
  kSttFile = 4,
  kSttTls = 6,
  kStbLocal = 0,
  kStbGlobal = 1,
  kStbWeak = 2,
};

// Section types.
enum {
  kShtNull = 0,
  kShtProgbits = 1,
  kShtSymtab = 2,
  kShtStrtab = 3,
  kShtRela = 4,
  kShtNote = 7,
  kShtNobits = 8,
  kShtRel = 9,
};
#define SHT_LLVM_ADDRSIG 0x6fff4c03u
#define SHT_X86_64_UNWIND 0x70000001u
#define SHT_RISCV_ATTRIBUTES 0x70000003u

// Section flags a kernel may have.
#define SHF_WRITE 0x1u
#define SHF_ALLOC 0x2u
#define SHF_EXECINSTR 0x4u
#define SHF_MERGE 0x10u
#define SHF_STRINGS 0x20u
#define SHF_INFO_LINK 0x40u
#define SHF_TLS 0x400u
// No SHF_GROUP or SHF_LINK_ORDER: mlcc never emits COMDAT groups, and a
// group in a foreign object could make the linker discard another object's
// sections.
#define kAllowedFlags \
  (SHF_WRITE | SHF_ALLOC | SHF_EXECINSTR | SHF_MERGE | SHF_STRINGS | SHF_INFO_LINK)

static uint16_t rd16(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t rd64(const uint8_t* p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }
// An address-sized field (Elf64_Addr/Off/Xword or their 32-bit forms).
static uint64_t rdw(const elf_layout_t* L, const uint8_t* p) { return L->is64 ? rd64(p) : rd32(p); }

// True if [off, off+len) lies inside an object of |size| bytes.
static bool in_range(uint64_t off, uint64_t len, size_t size) {
  return off <= size && len <= size - off;
}

//===----------------------------------------------------------------------===//
// The allowlist
//===----------------------------------------------------------------------===//

// C99 <math.h> functions (double names; the float name adds 'f').
static const char* const kLibm[] = {
    "acos",  "acosh",     "asin",   "asinh",     "atan",    "atan2",  "atanh",   "cbrt",
    "ceil",  "copysign",  "cos",    "cosh",      "erf",     "erfc",   "exp",     "exp10",
    "exp2",  "expm1",     "fabs",   "fdim",      "floor",   "fma",    "fmax",    "fmin",
    "fmod",  "frexp",     "hypot",  "ilogb",     "ldexp",   "lgamma", "llrint",  "llround",
    "log",   "log10",     "log1p",  "log2",      "logb",    "lrint",  "lround",  "modf",
    "nan",   "nearbyint", "nextafter", "pow",    "remainder", "remquo", "rint",  "round",
    "roundeven", "scalbn", "sin",   "sincos",    "sinh",    "sqrt",   "tan",     "tanh",
    "tgamma", "trunc",
};

// The string functions LLVM calls for memory intrinsics, and the libgcc /
// compiler-rt helpers its backends call for types without instructions.
static const char* const kHelpers[] = {
    "memcpy", "memmove", "memset",
    // half and bfloat16 conversions
    "__extendhfsf2", "__extendhfdf2", "__truncsfhf2", "__truncdfhf2", "__gnu_h2f_ieee",
    "__gnu_f2h_ieee", "__truncsfbf2", "__truncdfbf2",
    // 128-bit integers
    "__multi3", "__divti3", "__udivti3", "__modti3", "__umodti3", "__udivmodti4", "__divmodti4",
    "__muloti4", "__ashlti3", "__ashrti3", "__lshrti3", "__floattisf", "__floattidf",
    "__floatuntisf", "__floatuntidf", "__fixsfti", "__fixdfti", "__fixunssfti", "__fixunsdfti",
    "__popcountsi2", "__popcountdi2", "__clzsi2", "__clzdi2", "__ctzsi2", "__ctzdi2",
    // powi
    "__powisf2", "__powidf2",
    // binary128 (long double on aarch64 and riscv64)
    "__addtf3", "__subtf3", "__multf3", "__divtf3", "__negtf2", "__extendsftf2",
    "__extenddftf2", "__trunctfsf2", "__trunctfdf2", "__fixtfsi", "__fixtfdi", "__fixunstfsi",
    "__fixunstfdi", "__floatsitf", "__floatditf", "__floatunsitf", "__floatunditf", "__eqtf2",
    "__netf2", "__lttf2", "__letf2", "__gttf2", "__getf2", "__unordtf2",
    // 64-bit integers on 32-bit targets
    "__divdi3", "__udivdi3", "__moddi3", "__umoddi3", "__muldi3", "__ashldi3", "__ashrdi3",
    "__lshrdi3", "__udivmoddi4", "__divmoddi4", "__mulsi3", "__divsi3", "__udivsi3", "__modsi3",
    "__umodsi3",
    // software float32 and float64 (rv32 without F, the float64 of rv32f and cortex-m4)
    "__addsf3", "__subsf3", "__mulsf3", "__divsf3", "__negsf2", "__eqsf2", "__nesf2", "__ltsf2",
    "__lesf2", "__gtsf2", "__gesf2", "__unordsf2", "__fixsfsi", "__fixunssfsi", "__fixsfdi",
    "__fixunssfdi", "__floatsisf", "__floatunsisf", "__floatdisf", "__floatundisf",
    "__extendsfdf2", "__truncdfsf2", "__adddf3", "__subdf3", "__muldf3", "__divdf3", "__negdf2",
    "__eqdf2", "__nedf2", "__ltdf2", "__ledf2", "__gtdf2", "__gedf2", "__unorddf2", "__fixdfsi",
    "__fixunsdfsi", "__fixdfdi", "__fixunsdfdi", "__floatsidf", "__floatunsidf", "__floatdidf",
    "__floatundidf",
};

bool mlcc_object_symbol_allowed(const char* name) {
  // The Arm run-time ABI's helper family (RTABI: integer division, soft
  // float, conversions, memory): arithmetic and memory only.
  if (strncmp(name, "__aeabi_", 8) == 0 && name[8] != '\0') return true;
  for (size_t i = 0; i < sizeof(kHelpers) / sizeof(kHelpers[0]); ++i) {
    if (strcmp(name, kHelpers[i]) == 0) return true;
  }
  size_t n = strlen(name);
  for (size_t i = 0; i < sizeof(kLibm) / sizeof(kLibm[0]); ++i) {
    size_t m = strlen(kLibm[i]);
    if (strncmp(name, kLibm[i], m) != 0) continue;
    if (n == m || (n == m + 1 && name[m] == 'f')) return true;
  }
  return false;
}

// "mlcc_k_" + 24 lowercase hex digits, optionally + "_r".
static bool is_kernel_symbol(const char* name) {
  if (strncmp(name, "mlcc_k_", 7) != 0) return false;
  for (int i = 0; i < 24; ++i) {
    char ch = name[7 + i];
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return name[31] == '\0' || strcmp(name + 31, "_r") == 0;
}

//===----------------------------------------------------------------------===//
// The check
//===----------------------------------------------------------------------===//

mlcc_status_t mlcc_object_expect_for_target(const mlcc_target_t* target,
                                            mlcc_object_kind_t kind, const char* symbol,
                                            mlcc_object_expect_t* out) {
  memset(out, 0, sizeof(*out));
  out->elf_class = 2;
  if (mlcc_target_is_bare_metal(target)) {  // ELF32: objects LLVM writes
    out->elf_class = 1;
    if (strncmp(target->triple, "riscv32", 7) == 0) {
      out->machine = MLCC_ELF_EM_RISCV;
      out->flags = strstr(target->features, "+f") != NULL ? MLCC_ELF_EF_RISCV_FLOAT_ABI_SINGLE : 0;
    } else {
      out->machine = MLCC_ELF_EM_ARM;
      out->flags = EF_ARM_EABI_VER5;
    }
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_elf_machine_for_target(target, &out->machine, &out->flags));
  }
  out->kind = kind;
  out->symbol = symbol;
  return mlcc_ok_status();
}

#define REJECT(...) mlcc_make_status(MLCC_STATUS_INVALID_MODEL, __VA_ARGS__)

// A NUL-terminated string at |off| of the string table [tab, tab+tab_size).
static const char* string_at(const uint8_t* tab, uint64_t tab_size, uint64_t off) {
  if (off >= tab_size) return NULL;
  if (memchr(tab + off, '\0', (size_t)(tab_size - off)) == NULL) return NULL;
  return (const char*)tab + off;
}

// True if |name| is |base| or starts with |base| + '.' (".ctors.65535").
static bool is_section(const char* name, const char* base) {
  size_t n = strlen(base);
  return strncmp(name, base, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

// What a section name says the section is for, when a kernel must not have
// it: "a constructor or destructor", "a thread-local", "a dynamic-linking or
// linker-directive"; NULL for other names.
static const char* forbidden_section(const char* name) {
  static const char* const kCtors[] = {".init_array", ".fini_array", ".preinit_array",
                                       ".ctors",      ".dtors",      ".init",
                                       ".fini"};
  static const char* const kTls[] = {".tdata", ".tbss"};
  static const char* const kLink[] = {".deplibs", ".linker-options", ".interp",
                                      ".dynamic", ".dynsym",         ".dynstr"};
  const char* base = strncmp(name, ".rela", 5) == 0 ? name + 5
                     : strncmp(name, ".rel", 4) == 0 ? name + 4
                                                     : name;
  for (size_t i = 0; i < sizeof(kCtors) / sizeof(kCtors[0]); ++i) {
    if (is_section(base, kCtors[i])) return "a constructor or destructor";
  }
  for (size_t i = 0; i < sizeof(kTls) / sizeof(kTls[0]); ++i) {
    if (is_section(base, kTls[i])) return "a thread-local";
  }
  for (size_t i = 0; i < sizeof(kLink) / sizeof(kLink[0]); ++i) {
    if (is_section(base, kLink[i])) return "a dynamic-linking or linker-directive";
  }
  return NULL;
}

static bool allowed_section_type(uint32_t type, uint16_t machine) {
  switch (type) {
    case kShtNull:
    case kShtProgbits:
    case kShtSymtab:
    case kShtStrtab:
    case kShtRela:
    case kShtRel:
    case kShtNote:
    case kShtNobits:
    case SHT_LLVM_ADDRSIG:
      return true;
    case SHT_X86_64_UNWIND:  // == SHT_ARM_EXIDX
      return machine == MLCC_ELF_EM_X86_64 || machine == MLCC_ELF_EM_ARM;
    case SHT_RISCV_ATTRIBUTES:  // == SHT_ARM_ATTRIBUTES
      return machine == MLCC_ELF_EM_RISCV || machine == MLCC_ELF_EM_ARM;
    default:
      return false;
  }
}

// Checks one symbol (|index| > 0) of the symbol table.
static mlcc_status_t check_symbol(const mlcc_object_expect_t* expect, const char* name,
                                  uint8_t info, uint16_t shndx, uint16_t n_sections,
                                  int* inout_defined_main) {
  int type = info & 0xf;
  int bind = info >> 4;
  if (type == kSttTls) return REJECT("has a thread-local symbol '%s'", name);
  if (type != kSttNotype && type != kSttObject && type != kSttFunc && type != kSttSection &&
      type != kSttFile) {
    return REJECT("has a symbol '%s' of an unexpected type (IFUNC or other)", name);
  }
  if (bind != kStbLocal && bind != kStbGlobal && bind != kStbWeak) {
    return REJECT("has a symbol '%s' of an unexpected binding (GNU_UNIQUE or other)", name);
  }
  if (shndx == kShnXindex || (shndx >= kShnLoreserve && shndx != kShnAbs &&
                              shndx != kShnCommon)) {
    return REJECT("has a symbol '%s' in a reserved section index", name);
  }
  if (shndx != kShnUndef && shndx < kShnLoreserve && shndx >= n_sections) {
    return REJECT("has a symbol '%s' in a section that does not exist", name);
  }
  if (bind == kStbLocal) {
    if (shndx == kShnUndef && name[0] != '\0') {
      return REJECT("has an undefined local symbol '%s'", name);
    }
    return mlcc_ok_status();
  }
  if (shndx == kShnCommon || shndx == kShnAbs) {
    return REJECT("defines a common or absolute symbol '%s'", name);
  }
  const char* want = expect->symbol ? expect->symbol : "";
  size_t want_len = strlen(want);
  if (shndx == kShnUndef) {
    if (mlcc_object_symbol_allowed(name)) return mlcc_ok_status();
    if (expect->kind == MLCC_OBJECT_ENTRY) {
      if (is_kernel_symbol(name) || strcmp(name, "clock_gettime") == 0) return mlcc_ok_status();
      if (strncmp(name, want, want_len) == 0 && strcmp(name + want_len, "_weights") == 0) {
        return mlcc_ok_status();
      }
    }
    return REJECT("calls or references '%s', which is not on the allowlist", name);
  }
  // A definition.
  if (expect->kind == MLCC_OBJECT_ENTRY) {
    if (want_len == 0 || strncmp(name, want, want_len) != 0 || name[want_len] != '_') {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "defines '%s', which is not a '%s_' entry point", name, want);
    }
    return mlcc_ok_status();
  }
  bool is_main = strcmp(name, want) == 0;
  bool is_range = !is_main && strncmp(name, want, want_len) == 0 &&
                  strcmp(name + want_len, "_r") == 0 && want_len > 0;
  if (!is_main && !is_range) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "defines '%s', which is not the kernel's symbol %s", name, want);
  }
  if (type != kSttFunc) return REJECT("defines '%s' but not as a function", name);
  if (is_main) ++*inout_defined_main;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_object_check(const uint8_t* data, size_t size,
                                const mlcc_object_expect_t* expect) {
  const elf_layout_t* L = expect->elf_class == 1 ? &kElf32 : &kElf64;
  if (data == NULL || size < L->ehdr || memcmp(data, "\x7f" "ELF", 4) != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "is not an ELF object");
  }
  if (data[4] != (L->is64 ? 2 : 1) || data[5] != 1 || data[6] != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "is not a little-endian ELF%d object of version 1",
                            L->is64 ? 64 : 32);
  }
  if (data[7] != 0 && data[7] != 3) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has OS ABI %u (expected SYSV or GNU)",
                            (unsigned)data[7]);
  }
  uint16_t type = rd16(data + 16), machine = rd16(data + 18);
  uint32_t flags = rd32(data + L->e_flags);
  if (type != kEtRel) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "is not a relocatable object (e_type %u)", (unsigned)type);
  }
  if (machine != expect->machine) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "is for machine %u, not %u", (unsigned)machine,
                            (unsigned)expect->machine);
  }
  uint32_t ignored = machine == MLCC_ELF_EM_RISCV ? MLCC_ELF_EF_RISCV_RVC
                     : machine == MLCC_ELF_EM_ARM ? EF_ARM_FLOAT_ABI_BITS
                                                  : 0;
  if ((flags & ~ignored) != (expect->flags & ~ignored)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has ABI flags 0x%x, expected 0x%x",
                            (unsigned)flags, (unsigned)expect->flags);
  }
  uint64_t phoff = rdw(L, data + L->e_phoff), shoff = rdw(L, data + L->e_shoff);
  uint16_t phnum = rd16(data + L->e_phnum), shentsize = rd16(data + L->e_shentsize);
  uint16_t shnum = rd16(data + L->e_shnum), shstrndx = rd16(data + L->e_shstrndx);
  if (phnum != 0 || phoff != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has program headers");
  }
  if (shentsize != L->shdr || shnum == 0 || shnum >= kShnLoreserve || shstrndx >= shnum ||
      !in_range(shoff, (uint64_t)shnum * L->shdr, size)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed section header table");
  }
  const uint8_t* sh = data + shoff;
  // The section-name string table.
  const uint8_t* names = sh + (size_t)shstrndx * L->shdr;
  uint64_t names_off = rdw(L, names + L->sh_offset), names_size = rdw(L, names + L->sh_size);
  if (rd32(names + 4) != kShtStrtab || !in_range(names_off, names_size, size)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed section name table");
  }
  uint32_t symtab = 0;
  bool stack_note = false;
  for (uint32_t i = 1; i < shnum; ++i) {
    const uint8_t* s = sh + (size_t)i * L->shdr;
    const char* name = string_at(data + names_off, names_size, rd32(s));
    uint32_t stype = rd32(s + 4);
    uint64_t sflags = rdw(L, s + L->sh_flags), off = rdw(L, s + L->sh_offset);
    uint64_t ssize = rdw(L, s + L->sh_size);
    uint32_t link = rd32(s + L->sh_link), info = rd32(s + L->sh_info);
    uint64_t entsize = rdw(L, s + L->sh_entsize);
    if (name == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a section without a valid name");
    }
    const char* forbidden = forbidden_section(name);
    if (forbidden != NULL) return REJECT("has %s section '%s'", forbidden, name);
    if (stype == 14 || stype == 15 || stype == 16) {
      return REJECT("has a constructor or destructor section '%s'", name);
    }
    if (!allowed_section_type(stype, machine)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a section '%s' of type 0x%x", name,
                              (unsigned)stype);
    }
    if (sflags & SHF_TLS) return REJECT("has a thread-local section '%s'", name);
    uint64_t allowed = kAllowedFlags;
    if (machine == MLCC_ELF_EM_ARM && stype == SHT_ARM_EXIDX) allowed |= SHF_LINK_ORDER;
    if (sflags & ~allowed) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a section '%s' with flags 0x%llx",
                              name, (unsigned long long)sflags);
    }
    if ((sflags & SHF_WRITE) && (sflags & SHF_EXECINSTR)) {
      return REJECT("has a writable and executable section '%s'", name);
    }
    if (stype != kShtNobits && !in_range(off, ssize, size)) {
      return REJECT("has a section '%s' outside the file", name);
    }
    if (strcmp(name, ".note.GNU-stack") == 0) {
      if (sflags & SHF_EXECINSTR) return REJECT("asks for an executable stack (%s)", name);
      stack_note = true;
    }
    if (stype == kShtSymtab) {
      if (symtab != 0) return REJECT("has a second symbol table '%s'", name);
      if (entsize != L->sym || ssize % L->sym != 0 || link == 0 || link >= shnum) {
        return REJECT("has a malformed symbol table '%s'", name);
      }
      symtab = i;
    }
    if (stype == kShtRela || stype == kShtRel) {
      uint64_t esz = stype == kShtRela ? L->rela : L->rel;
      if (entsize != esz || ssize % esz != 0 || link == 0 || link >= shnum || info >= shnum) {
        return REJECT("has a malformed relocation section '%s'", name);
      }
    }
  }
  if (!stack_note) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "has no .note.GNU-stack (the linker would make the stack executable)");
  }
  if (symtab == 0) return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has no symbol table");
  const uint8_t* st = sh + (size_t)symtab * L->shdr;
  const uint8_t* strs = sh + (size_t)rd32(st + L->sh_link) * L->shdr;
  uint64_t str_off = rdw(L, strs + L->sh_offset), str_size = rdw(L, strs + L->sh_size);
  if (rd32(strs + 4) != kShtStrtab || !in_range(str_off, str_size, size)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed symbol string table");
  }
  uint64_t sym_off = rdw(L, st + L->sh_offset), n_syms = rdw(L, st + L->sh_size) / L->sym;
  int defined_main = 0;
  for (uint64_t k = 1; k < n_syms; ++k) {
    const uint8_t* y = data + sym_off + k * L->sym;
    const char* name = string_at(data + str_off, str_size, rd32(y));
    if (name == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a symbol without a valid name");
    }
    MLCC_RETURN_IF_ERROR(check_symbol(expect, name, y[L->st_info], rd16(y + L->st_shndx), shnum,
                                      &defined_main));
  }
  // Relocations must name symbols of the table.
  for (uint32_t i = 1; i < shnum; ++i) {
    const uint8_t* s = sh + (size_t)i * L->shdr;
    uint32_t stype = rd32(s + 4);
    if (stype != kShtRela && stype != kShtRel) continue;
    if (rd32(s + L->sh_link) != symtab) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "has relocations against another symbol table");
    }
    uint64_t esz = stype == kShtRela ? L->rela : L->rel;
    uint64_t off = rdw(L, s + L->sh_offset), n = rdw(L, s + L->sh_size) / esz;
    for (uint64_t r = 0; r < n; ++r) {
      // r_info: the symbol index is its high 32 (ELF64) or 24 (ELF32) bits.
      uint64_t sym = L->is64 ? rd64(data + off + r * esz + 8) >> 32
                             : rd32(data + off + r * esz + 4) >> 8;
      if (sym >= n_syms) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "has a relocation against symbol %llu of %llu",
                                (unsigned long long)sym, (unsigned long long)n_syms);
      }
    }
  }
  if (expect->kind == MLCC_OBJECT_KERNEL && defined_main != 1) {
    return REJECT("does not define %s", expect->symbol ? expect->symbol : "(none)");
  }
  return mlcc_ok_status();
}

// SPDX-License-Identifier: Apache-2.0
// Checks of cached kernel objects before use: see object_check.h.
#include "driver/object_check.h"

#include <stdlib.h>
#include <string.h>

#include "targets/llvm/elf_writer.h"

// ELF constants (the System V gABI; only what the check needs).
enum {
  kEhdrSize = 64,
  kShdrSize = 64,
  kSymSize = 24,
  kRelaSize = 24,
  kRelSize = 16,
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
};

bool mlcc_object_symbol_allowed(const char* name) {
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
  MLCC_RETURN_IF_ERROR(mlcc_elf_machine_for_target(target, &out->machine, &out->flags));
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
    case SHT_X86_64_UNWIND:
      return machine == MLCC_ELF_EM_X86_64;
    case SHT_RISCV_ATTRIBUTES:
      return machine == MLCC_ELF_EM_RISCV;
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
  if (data == NULL || size < kEhdrSize || memcmp(data, "\x7f" "ELF", 4) != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "is not an ELF object");
  }
  if (data[4] != 2 || data[5] != 1 || data[6] != 1) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "is not a little-endian ELF64 object of version 1");
  }
  if (data[7] != 0 && data[7] != 3) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has OS ABI %u (expected SYSV or GNU)",
                            (unsigned)data[7]);
  }
  uint16_t type = rd16(data + 16), machine = rd16(data + 18);
  uint32_t flags = rd32(data + 48);
  if (type != kEtRel) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "is not a relocatable object (e_type %u)", (unsigned)type);
  }
  if (machine != expect->machine) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "is for machine %u, not %u", (unsigned)machine,
                            (unsigned)expect->machine);
  }
  uint32_t ignored = machine == MLCC_ELF_EM_RISCV ? MLCC_ELF_EF_RISCV_RVC : 0;
  if ((flags & ~ignored) != (expect->flags & ~ignored)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has ABI flags 0x%x, expected 0x%x",
                            (unsigned)flags, (unsigned)expect->flags);
  }
  uint64_t phoff = rd64(data + 32), shoff = rd64(data + 40);
  uint16_t phnum = rd16(data + 56), shentsize = rd16(data + 58), shnum = rd16(data + 60);
  uint16_t shstrndx = rd16(data + 62);
  if (phnum != 0 || phoff != 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has program headers");
  }
  if (shentsize != kShdrSize || shnum == 0 || shnum >= kShnLoreserve || shstrndx >= shnum ||
      !in_range(shoff, (uint64_t)shnum * kShdrSize, size)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed section header table");
  }
  const uint8_t* sh = data + shoff;
  // The section-name string table.
  const uint8_t* names = sh + (size_t)shstrndx * kShdrSize;
  uint64_t names_off = rd64(names + 24), names_size = rd64(names + 32);
  if (rd32(names + 4) != kShtStrtab || !in_range(names_off, names_size, size)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed section name table");
  }
  uint32_t symtab = 0;
  bool stack_note = false;
  for (uint32_t i = 1; i < shnum; ++i) {
    const uint8_t* s = sh + (size_t)i * kShdrSize;
    const char* name = string_at(data + names_off, names_size, rd32(s));
    uint32_t stype = rd32(s + 4);
    uint64_t sflags = rd64(s + 8), off = rd64(s + 24), ssize = rd64(s + 32);
    uint32_t link = rd32(s + 40), info = rd32(s + 44);
    uint64_t entsize = rd64(s + 56);
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
    if (sflags & ~(uint64_t)kAllowedFlags) {
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
      if (entsize != kSymSize || ssize % kSymSize != 0 || link == 0 || link >= shnum) {
        return REJECT("has a malformed symbol table '%s'", name);
      }
      symtab = i;
    }
    if (stype == kShtRela || stype == kShtRel) {
      uint64_t esz = stype == kShtRela ? kRelaSize : kRelSize;
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
  const uint8_t* st = sh + (size_t)symtab * kShdrSize;
  const uint8_t* strs = sh + (size_t)rd32(st + 40) * kShdrSize;
  uint64_t str_off = rd64(strs + 24), str_size = rd64(strs + 32);
  if (rd32(strs + 4) != kShtStrtab || !in_range(str_off, str_size, size)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a malformed symbol string table");
  }
  uint64_t sym_off = rd64(st + 24), n_syms = rd64(st + 32) / kSymSize;
  int defined_main = 0;
  for (uint64_t k = 1; k < n_syms; ++k) {
    const uint8_t* y = data + sym_off + k * kSymSize;
    const char* name = string_at(data + str_off, str_size, rd32(y));
    if (name == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL, "has a symbol without a valid name");
    }
    MLCC_RETURN_IF_ERROR(check_symbol(expect, name, y[4], rd16(y + 6), shnum, &defined_main));
  }
  // Relocations must name symbols of the table.
  for (uint32_t i = 1; i < shnum; ++i) {
    const uint8_t* s = sh + (size_t)i * kShdrSize;
    uint32_t stype = rd32(s + 4);
    if (stype != kShtRela && stype != kShtRel) continue;
    if (rd32(s + 40) != symtab) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "has relocations against another symbol table");
    }
    uint64_t esz = stype == kShtRela ? kRelaSize : kRelSize;
    uint64_t off = rd64(s + 24), n = rd64(s + 32) / esz;
    for (uint64_t r = 0; r < n; ++r) {
      uint64_t sym = rd64(data + off + r * esz + 8) >> 32;
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

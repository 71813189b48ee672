// SPDX-License-Identifier: Apache-2.0
// Tests for the ELF writer: objects for each machine are parsed back field by
// field (header, section table, names, data bytes, symbols) with an
// independent little reader written from the gABI; e_machine/e_flags are
// checked against what LLVM itself writes for the same target; invalid
// descriptions and unwritable paths are refused.
#include "targets/llvm/elf_writer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "targets/llvm/llvm_ctx.h"
#include "test.h"

//===----------------------------------------------------------------------===//
// A tiny ELF64 LE reader
//===----------------------------------------------------------------------===//

static uint64_t rd(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

typedef struct shdr_t {
  uint32_t name, type, link, info;
  uint64_t flags, offset, size, align, entsize;
} shdr_t;

static shdr_t section(const uint8_t* obj, int index) {
  uint64_t shoff = rd(obj + 40, 8);
  const uint8_t* h = obj + shoff + (uint64_t)index * 64;
  shdr_t s = {(uint32_t)rd(h, 4),      (uint32_t)rd(h + 4, 4), (uint32_t)rd(h + 40, 4),
              (uint32_t)rd(h + 44, 4), rd(h + 8, 8),           rd(h + 24, 8),
              rd(h + 32, 8),           rd(h + 48, 8),          rd(h + 56, 8)};
  return s;
}

static const char* section_name(const uint8_t* obj, int index) {
  shdr_t shstr = section(obj, (int)rd(obj + 62, 2));
  return (const char*)obj + shstr.offset + section(obj, index).name;
}

//===----------------------------------------------------------------------===//
// Fixtures
//===----------------------------------------------------------------------===//

// 300 bytes of data in three chunks with gaps (offsets 0, 64, 256) and a
// zero tail up to 320: what a weights blob with three constants looks like.
static uint8_t g_a[10], g_b[100], g_c[44];
static mlcc_elf_chunk_t g_chunks[3];

static mlcc_elf_data_object_t fixture(uint16_t machine, uint32_t flags) {
  for (int i = 0; i < 10; ++i) g_a[i] = (uint8_t)(1 + i);
  for (int i = 0; i < 100; ++i) g_b[i] = (uint8_t)(100 + i);
  for (int i = 0; i < 44; ++i) g_c[i] = (uint8_t)(0xA0 + i);
  g_chunks[0] = (mlcc_elf_chunk_t){g_a, 0, sizeof(g_a)};
  g_chunks[1] = (mlcc_elf_chunk_t){g_b, 64, sizeof(g_b)};
  g_chunks[2] = (mlcc_elf_chunk_t){g_c, 256, sizeof(g_c)};
  mlcc_elf_data_object_t o;
  memset(&o, 0, sizeof(o));
  o.machine = machine;
  o.flags = flags;
  o.section_name = ".rodata.mlcc_weights";
  o.align = 64;
  o.symbol = "detector_weights";
  o.size = 320;
  o.chunks = g_chunks;
  o.n_chunks = 3;
  return o;
}

// Parses |obj| back and checks every field the writer promises.
static void check_object(const uint8_t* obj, size_t size, const mlcc_elf_data_object_t* o) {
  CHECK(size >= 64);
  if (size < 64) return;
  static const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  CHECK(memcmp(obj, ident, 16) == 0);
  CHECK_EQ_INT(rd(obj + 16, 2), 1);  // ET_REL
  CHECK_EQ_INT(rd(obj + 18, 2), o->machine);
  CHECK_EQ_INT(rd(obj + 20, 4), 1);  // EV_CURRENT
  CHECK_EQ_INT(rd(obj + 24, 8), 0);  // e_entry
  CHECK_EQ_INT(rd(obj + 32, 8), 0);  // e_phoff
  CHECK_EQ_INT(rd(obj + 48, 4), o->flags);
  CHECK_EQ_INT(rd(obj + 52, 2), 64);  // e_ehsize
  CHECK_EQ_INT(rd(obj + 56, 2), 0);   // e_phnum
  CHECK_EQ_INT(rd(obj + 58, 2), 64);  // e_shentsize
  CHECK_EQ_INT(rd(obj + 60, 2), 6);   // e_shnum
  CHECK_EQ_INT(rd(obj + 62, 2), 5);   // e_shstrndx
  uint64_t shoff = rd(obj + 40, 8);
  CHECK_EQ_INT(shoff % 8, 0);
  CHECK_EQ_INT(shoff + 6 * 64, size);  // the table ends the file
  if (shoff + 6 * 64 != size) return;

  shdr_t null = section(obj, 0);
  CHECK(null.type == 0 && null.size == 0 && null.offset == 0 && null.name == 0);

  shdr_t data = section(obj, 1);
  CHECK_STREQ(section_name(obj, 1), o->section_name);
  CHECK_EQ_INT(data.type, 1);   // SHT_PROGBITS
  CHECK_EQ_INT(data.flags, 2);  // SHF_ALLOC only: read-only, not executable
  CHECK_EQ_INT(data.align, o->align);
  CHECK_EQ_INT(data.offset % o->align, 0);
  CHECK_EQ_INT(data.size, o->size);
  CHECK(data.offset + data.size <= shoff);
  // The bytes: chunks in place, zeros elsewhere.
  uint8_t* want = calloc(o->size, 1);
  for (uint32_t i = 0; want && i < o->n_chunks; ++i) {
    memcpy(want + o->chunks[i].offset, o->chunks[i].data, o->chunks[i].size);
  }
  CHECK(want != NULL && memcmp(obj + data.offset, want, o->size) == 0);
  free(want);

  shdr_t note = section(obj, 2);
  CHECK_STREQ(section_name(obj, 2), ".note.GNU-stack");
  CHECK(note.type == 1 && note.flags == 0 && note.size == 0);

  shdr_t symtab = section(obj, 3), strtab = section(obj, 4), shstrtab = section(obj, 5);
  CHECK_STREQ(section_name(obj, 3), ".symtab");
  CHECK_STREQ(section_name(obj, 4), ".strtab");
  CHECK_STREQ(section_name(obj, 5), ".shstrtab");
  CHECK_EQ_INT(symtab.type, 2);  // SHT_SYMTAB
  CHECK_EQ_INT(symtab.link, 4);  // its string table
  CHECK_EQ_INT(symtab.info, 2);  // first global symbol
  CHECK_EQ_INT(symtab.entsize, 24);
  CHECK_EQ_INT(symtab.size, 3 * 24);
  CHECK_EQ_INT(symtab.offset % 8, 0);
  CHECK_EQ_INT(strtab.type, 3);
  CHECK_EQ_INT(shstrtab.type, 3);
  CHECK(strtab.offset + strtab.size <= shoff && shstrtab.offset + shstrtab.size <= shoff);
  CHECK_EQ_INT(obj[strtab.offset], 0);
  CHECK_EQ_INT(obj[strtab.offset + strtab.size - 1], 0);

  const uint8_t* sym = obj + symtab.offset;
  // [0] the null symbol.
  for (int i = 0; i < 24; ++i) CHECK_EQ_INT(sym[i], 0);
  // [1] the section symbol: local, STT_SECTION, in the data section.
  const uint8_t* ss = sym + 24;
  CHECK_EQ_INT(ss[4], (0 << 4) | 3);
  CHECK_EQ_INT(rd(ss + 6, 2), 1);
  CHECK_EQ_INT(rd(ss + 8, 8), 0);
  // [2] the global: STB_GLOBAL, STT_OBJECT, STV_HIDDEN, value 0, size.
  const uint8_t* gs = sym + 48;
  CHECK_STREQ((const char*)obj + strtab.offset + rd(gs, 4), o->symbol);
  CHECK_EQ_INT(gs[4], (1 << 4) | 1);
  CHECK_EQ_INT(gs[5], 2);
  CHECK_EQ_INT(rd(gs + 6, 2), 1);
  CHECK_EQ_INT(rd(gs + 8, 8), 0);
  CHECK_EQ_INT(rd(gs + 16, 8), o->size);
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

// Each machine, parsed back; the file and buffer forms agree byte for byte,
// and two writes are identical (determinism).
static void test_objects_per_machine(void) {
  static const char* const aliases[3] = {"x86", "aarch64", "riscv"};
  static const uint16_t machines[3] = {62, 183, 243};
  static const uint32_t flags[3] = {0, 0, 0x5};  // riscv: RVC | FLOAT_ABI_DOUBLE
  for (int i = 0; i < 3; ++i) {
    mlcc_target_t t;
    CHECK_OK(mlcc_target_resolve(aliases[i], NULL, NULL, &t));
    uint16_t machine = 0;
    uint32_t fl = 0;
    CHECK_OK(mlcc_elf_machine_for_target(&t, &machine, &fl));
    CHECK_EQ_INT(machine, machines[i]);
    CHECK_EQ_INT(fl, flags[i]);
    mlcc_elf_data_object_t o = fixture(machine, fl);
    uint8_t* buf = NULL;
    size_t size = 0;
    CHECK_OK(mlcc_elf_write_buffer(&o, &buf, &size));
    uint64_t predicted = 0;
    CHECK_OK(mlcc_elf_object_size(&o, &predicted));
    CHECK_EQ_INT(predicted, size);
    if (buf == NULL) continue;
    check_object(buf, size, &o);

    char path[] = "/tmp/mlcc_elf_writer_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) {
      free(buf);
      continue;
    }
    close(fd);
    CHECK_OK(mlcc_elf_write_file(&o, path));
    FILE* f = fopen(path, "rb");
    uint8_t* back = malloc(size + 1);
    size_t got = (f && back) ? fread(back, 1, size + 1, f) : 0;
    if (f) fclose(f);
    CHECK_EQ_INT(got, size);
    CHECK(back != NULL && got == size && memcmp(back, buf, size) == 0);
    uint8_t* again = NULL;
    size_t again_size = 0;
    CHECK_OK(mlcc_elf_write_buffer(&o, &again, &again_size));
    CHECK(again != NULL && again_size == size && memcmp(again, buf, size) == 0);
    free(again);
    free(back);
    free(buf);
    remove(path);
  }
}

// Empty data (a model without weights) and a larger alignment still make a
// valid object.
static void test_empty_and_aligned(void) {
  mlcc_elf_data_object_t o = fixture(MLCC_ELF_EM_X86_64, 0);
  o.size = 0;
  o.n_chunks = 0;
  uint8_t* buf = NULL;
  size_t size = 0;
  CHECK_OK(mlcc_elf_write_buffer(&o, &buf, &size));
  if (buf) check_object(buf, size, &o);
  free(buf);
  o = fixture(MLCC_ELF_EM_AARCH64, 0);
  o.align = 4096;
  o.symbol = "a_rather_long_model_name_with_many_characters_in_it_weights";
  CHECK_OK(mlcc_elf_write_buffer(&o, &buf, &size));
  if (buf) {
    check_object(buf, size, &o);
    CHECK_EQ_INT(section(buf, 1).offset, 4096);
  }
  free(buf);
}

// What LLVM writes for the same target: e_machine and e_flags must agree, or
// GNU ld refuses to link the weights with the kernels (RISC-V float ABI).
static void check_against_llvm(const char* alias, const char* features) {
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve(alias, NULL, features, &t));
  uint16_t machine = 0;
  uint32_t flags = 0;
  CHECK_OK(mlcc_elf_machine_for_target(&t, &machine, &flags));
  LLVMTargetMachineRef tm = NULL;
  CHECK_OK(mlcc_llvm_target_machine(&t, 2, &tm));
  if (tm == NULL) return;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("probe", ctx);
  mlcc_llvm_set_module_target(m, tm);
  LLVMValueRef init = LLVMConstStringInContext(ctx, "abcd", 4, 1);
  LLVMValueRef g = LLVMAddGlobal(m, LLVMTypeOf(init), "probe_weights");
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  mlcc_buffer_t obj = {0};
  CHECK_OK(mlcc_llvm_emit(m, tm, MLCC_OUTPUT_OBJECT, &obj));
  CHECK(obj.size >= 64);
  if (obj.size >= 64) {
    if (rd(obj.data + 18, 2) != machine || rd(obj.data + 48, 4) != flags) {
      fprintf(stderr, "  %s -mattr=%s: LLVM machine %u flags 0x%x, ELF writer %u 0x%x\n",
              alias, features ? features : "(default)", (unsigned)rd(obj.data + 18, 2),
              (unsigned)rd(obj.data + 48, 4), machine, flags);
    }
    CHECK_EQ_INT(rd(obj.data + 18, 2), machine);
    CHECK_EQ_INT(rd(obj.data + 48, 4), flags);
  }
  mlcc_buffer_deinit(&obj);
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
}

static void test_flags_match_llvm(void) {
  check_against_llvm("x86", NULL);
  check_against_llvm("aarch64", NULL);
  check_against_llvm("riscv", NULL);
  check_against_llvm("riscv", "+v");
  check_against_llvm("riscv", "-c");
  check_against_llvm("riscv", "-d");
}

static void test_invalid(void) {
  mlcc_elf_data_object_t o = fixture(MLCC_ELF_EM_X86_64, 0);
  uint64_t size = 0;
  o.align = 48;  // not a power of two
  CHECK_STATUS(mlcc_elf_object_size(&o, &size), MLCC_STATUS_INVALID_ARGUMENT);
  o = fixture(MLCC_ELF_EM_X86_64, 0);
  o.align = 8192;  // over the limit
  CHECK_STATUS(mlcc_elf_object_size(&o, &size), MLCC_STATUS_INVALID_ARGUMENT);
  o = fixture(MLCC_ELF_EM_X86_64, 0);
  o.symbol = "";
  CHECK_STATUS(mlcc_elf_object_size(&o, &size), MLCC_STATUS_INVALID_ARGUMENT);
  o = fixture(MLCC_ELF_EM_X86_64, 0);
  o.size = 299;  // the last chunk ends at 300
  CHECK_STATUS(mlcc_elf_object_size(&o, &size), MLCC_STATUS_INVALID_ARGUMENT);
  o = fixture(MLCC_ELF_EM_X86_64, 0);
  g_chunks[1].offset = 5;  // overlaps the first chunk
  CHECK_STATUS(mlcc_elf_object_size(&o, &size), MLCC_STATUS_INVALID_ARGUMENT);
  o = fixture(MLCC_ELF_EM_X86_64, 0);
  g_chunks[2].offset = UINT64_MAX - 2;  // offset + size wraps
  CHECK_STATUS(mlcc_elf_object_size(&o, &size), MLCC_STATUS_INVALID_ARGUMENT);
  o = fixture(MLCC_ELF_EM_X86_64, 0);
  o.size = UINT64_MAX - 10;  // the object's size overflows
  CHECK_STATUS(mlcc_elf_object_size(&o, &size), MLCC_STATUS_RESOURCE_EXHAUSTED);
  uint8_t* buf = (uint8_t*)1;
  size_t n = 1;
  CHECK_STATUS(mlcc_elf_write_buffer(&o, &buf, &n), MLCC_STATUS_RESOURCE_EXHAUSTED);
  CHECK(buf == NULL && n == 0);
  // An unwritable path: IO, and nothing left behind.
  o = fixture(MLCC_ELF_EM_X86_64, 0);
  CHECK_STATUS(mlcc_elf_write_file(&o, "/nonexistent-dir/x/w.o"), MLCC_STATUS_IO);
}

int main(void) {
  RUN(test_objects_per_machine);
  RUN(test_empty_and_aligned);
  RUN(test_flags_match_llvm);
  RUN(test_invalid);
  return TEST_EXIT();
}

// SPDX-License-Identifier: Apache-2.0
// ELF section sizes (objsize.h), from the System V gABI's section header
// layout: only the ELF header and the section header table are read.
#include "driver/objsize.h"

#include <stdio.h>
#include <string.h>

enum {
  kShfWrite = 0x1,
  kShfAlloc = 0x2,
  kShfExecInstr = 0x4,
  kShtNoBits = 8,
};

static uint64_t get_le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reads the sections of the ELF object open as |f| (named |path| in
// messages) and closes |f|.
static mlcc_status_t add_stream(FILE* f, const char* path, mlcc_objsize_t* inout_size) {
  uint8_t eh[64];
  size_t got = fread(eh, 1, sizeof(eh), f);
  mlcc_status_t s = mlcc_ok_status();
  bool is64 = got >= 52 && eh[4] == 2;
  if (got < 52 || memcmp(eh, "\x7f" "ELF", 4) != 0 || (eh[4] != 1 && eh[4] != 2) ||
      eh[5] != 1 || (is64 && got < 64)) {
    fclose(f);
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "'%s' is not a little-endian ELF object", path);
  }
  uint64_t shoff = is64 ? get_le(eh + 0x28, 8) : get_le(eh + 0x20, 4);
  uint64_t shentsize = get_le(eh + (is64 ? 0x3A : 0x2E), 2);
  uint64_t shnum = get_le(eh + (is64 ? 0x3C : 0x30), 2);
  uint64_t need = is64 ? 64 : 40;
  if (shnum != 0 && (shentsize < need || shentsize > 256)) {
    fclose(f);
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "'%s': bad ELF section header size %llu", path,
                            (unsigned long long)shentsize);
  }
  mlcc_objsize_t add = {0};
  for (uint64_t i = 0; i < shnum && s == NULL; ++i) {
    uint8_t sh[256];
    if (fseek(f, (long)(shoff + i * shentsize), SEEK_SET) != 0 ||
        fread(sh, 1, (size_t)shentsize, f) != shentsize) {
      s = mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                           "'%s': section header %llu lies outside the file", path,
                           (unsigned long long)i);
      break;
    }
    uint64_t type = get_le(sh + 4, 4);
    uint64_t flags = is64 ? get_le(sh + 8, 8) : get_le(sh + 8, 4);
    uint64_t size = is64 ? get_le(sh + 32, 8) : get_le(sh + 20, 4);
    if ((flags & kShfAlloc) == 0) continue;
    if (type == kShtNoBits) {
      add.bss += size;
    } else if (flags & kShfExecInstr) {
      add.code += size;
    } else if (flags & kShfWrite) {
      add.data += size;
    } else {
      add.rodata += size;
    }
  }
  fclose(f);
  if (s == NULL) {
    inout_size->code += add.code;
    inout_size->rodata += add.rodata;
    inout_size->data += add.data;
    inout_size->bss += add.bss;
  }
  return s;
}

mlcc_status_t mlcc_objsize_add_file(const char* path, mlcc_objsize_t* inout_size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return mlcc_make_status(MLCC_STATUS_IO, "cannot open '%s'", path);
  return add_stream(f, path, inout_size);
}

mlcc_status_t mlcc_objsize_add_buffer(const void* data, size_t size,
                                      mlcc_objsize_t* inout_size) {
  if (size == 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "'(object in memory)' is not a little-endian ELF object");
  }
  FILE* f = fmemopen((void*)data, size, "rb");
  if (f == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "fmemopen failed");
  return add_stream(f, "(object in memory)", inout_size);
}

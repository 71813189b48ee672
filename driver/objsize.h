// SPDX-License-Identifier: Apache-2.0
// Section sizes of the relocatable objects mlcc writes, for `-v`'s flash and
// RAM figures (docs/mcu.md): what `size` (binutils) prints as text, data and
// bss, with read-only data split from text. Reads ELF32 and ELF64
// little-endian objects (every target mlcc has). Thread-safe (no state).
#ifndef MLCC_DRIVER_OBJSIZE_H_
#define MLCC_DRIVER_OBJSIZE_H_

#include <stddef.h>
#include <stdint.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Bytes of the SHF_ALLOC sections of one or more objects, summed.
typedef struct mlcc_objsize_t {
  uint64_t code;    // SHF_EXECINSTR: flash
  uint64_t rodata;  // read-only data (the weights blob, constant pools): flash
  uint64_t data;    // writable PROGBITS: flash (initial values) and RAM
  uint64_t bss;     // SHT_NOBITS: RAM
} mlcc_objsize_t;

// Adds the section sizes of the ELF object |path| to |inout_size|. IO if
// the file cannot be read, INVALID_ARGUMENT if it is not a little-endian
// ELF32/ELF64 file whose section headers lie inside it.
mlcc_status_t mlcc_objsize_add_file(const char* path, mlcc_objsize_t* inout_size);

// The same for an object of |size| bytes at |data| (borrowed, read only):
// INVALID_ARGUMENT as above, RESOURCE_EXHAUSTED if no stream can be opened.
mlcc_status_t mlcc_objsize_add_buffer(const void* data, size_t size,
                                      mlcc_objsize_t* inout_size);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_OBJSIZE_H_

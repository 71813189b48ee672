// SPDX-License-Identifier: Apache-2.0
// Semihosting calls for the bare-metal test boards (tests/mcu/README.md):
// the Arm semihosting interface ("Semihosting for AArch32 and AArch64",
// operation numbers and parameter blocks), which QEMU implements for Arm
// M-profile (BKPT 0xAB) and RISC-V (the slli/ebreak/srai sequence of the
// RISC-V semihosting spec) when started with -semihosting-config
// enable=on,target=native. File names are relative to QEMU's working
// directory. Not thread-safe (there is one thread).
#ifndef MLCC_TESTS_MCU_SEMIHOST_H_
#define MLCC_TESTS_MCU_SEMIHOST_H_

#include <stddef.h>
#include <stdint.h>

// Writes the NUL-terminated |text| to QEMU's stdout (SYS_WRITE0).
void semihost_write0(const char* text);

// Opens |name| (mode "rb" or "wb"); returns a handle >= 0, or -1.
int semihost_open(const char* name, const char* mode);
// Length of the open file |handle| in bytes, or -1 (SYS_FLEN).
long semihost_flen(int handle);
// Reads/writes |size| bytes; returns the number of bytes NOT transferred
// (0 = all), as the semihosting calls do.
long semihost_read(int handle, void* data, size_t size);
long semihost_write(int handle, const void* data, size_t size);
void semihost_close(int handle);

// Ends the simulation with exit status |status| (SYS_EXIT_EXTENDED with
// ADP_Stopped_ApplicationExit). Does not return.
void semihost_exit(int status) __attribute__((noreturn));

#endif  // MLCC_TESTS_MCU_SEMIHOST_H_

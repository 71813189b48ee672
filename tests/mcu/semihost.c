// SPDX-License-Identifier: Apache-2.0
// Semihosting calls (semihost.h): one trap per operation, r0/a0 = the
// operation number, r1/a1 = the parameter block, result in r0/a0.
#include "semihost.h"

#include <string.h>

enum {
  kSysOpen = 0x01,
  kSysClose = 0x02,
  kSysWrite0 = 0x04,
  kSysWrite = 0x05,
  kSysRead = 0x06,
  kSysFlen = 0x0C,
  kSysExitExtended = 0x20,
  kAdpStoppedApplicationExit = 0x20026,
};

static long semihost_call(long op, const void* param) {
#if defined(__arm__)
  register long r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = param;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
#elif defined(__riscv)
  register long a0 __asm__("a0") = op;
  register const void* a1 __asm__("a1") = param;
  // The three instructions must be uncompressed and in one page, so QEMU
  // recognizes the ebreak as a semihosting call.
  __asm__ volatile(
      ".option push\n"
      ".option norvc\n"
      ".balign 16\n"
      "slli zero, zero, 0x1f\n"
      "ebreak\n"
      "srai zero, zero, 7\n"
      ".option pop\n"
      : "+r"(a0)
      : "r"(a1)
      : "memory");
  return a0;
#else
#error "semihosting: unsupported architecture"
#endif
}

void semihost_write0(const char* text) { semihost_call(kSysWrite0, text); }

int semihost_open(const char* name, const char* mode) {
  // Mode numbers of SYS_OPEN: 1 "rb", 5 "wb".
  long m = (mode[0] == 'w') ? 5 : 1;
  long block[3] = {(long)(uintptr_t)name, m, (long)strlen(name)};
  return (int)semihost_call(kSysOpen, block);
}

long semihost_flen(int handle) {
  long block[1] = {handle};
  return semihost_call(kSysFlen, block);
}

long semihost_read(int handle, void* data, size_t size) {
  long block[3] = {handle, (long)(uintptr_t)data, (long)size};
  return semihost_call(kSysRead, block);
}

long semihost_write(int handle, const void* data, size_t size) {
  long block[3] = {handle, (long)(uintptr_t)data, (long)size};
  return semihost_call(kSysWrite, block);
}

void semihost_close(int handle) {
  long block[1] = {handle};
  semihost_call(kSysClose, block);
}

void semihost_exit(int status) {
  long block[2] = {kAdpStoppedApplicationExit, status};
  semihost_call(kSysExitExtended, block);
  for (;;) {
  }
}

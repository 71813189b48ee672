// SPDX-License-Identifier: Apache-2.0
// Start-up for the Cortex-M test boards (mps2-an386, mps3-an547): the
// vector table (initial SP and the reset handler at its first two words,
// read by the core at reset from VTOR = 0), FPU/MVE access, .bss cleared,
// main, exit through semihosting. .data is loaded in place by QEMU's ELF
// loader (its load and run addresses are the same in the linker scripts),
// so it is not copied. Faults print the fault status registers and exit 5.
#include <stdint.h>

#include "semihost.h"

extern uint32_t __bss_start[], __bss_end[], __stack_top[];
int main(void);

static void put_hex(uint32_t v) {
  char s[11] = "0x";
  for (int i = 0; i < 8; ++i) s[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xF];
  s[10] = '\0';
  semihost_write0(s);
}

static void fault_handler(void) {
  semihost_write0("harness: fault, CFSR ");
  put_hex(*(volatile uint32_t*)0xE000ED28u);
  semihost_write0(" HFSR ");
  put_hex(*(volatile uint32_t*)0xE000ED2Cu);
  semihost_write0(" MMFAR ");
  put_hex(*(volatile uint32_t*)0xE000ED34u);
  semihost_write0(" BFAR ");
  put_hex(*(volatile uint32_t*)0xE000ED38u);
  semihost_write0("\n");
  semihost_exit(5);
}

__attribute__((noreturn)) void reset_handler(void) {
  // CPACR: full access to CP10/CP11 (the FPU, and Helium on v8.1-M), before
  // any floating-point instruction runs.
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  for (volatile uint32_t* w = __bss_start; w < __bss_end; ++w) *w = 0;
  semihost_exit(main());
}

typedef void (*vector_t)(void);

// Exceptions 1-15: reset, then NMI, HardFault, MemManage, BusFault,
// UsageFault, SecureFault, reserved x3, SVCall, DebugMonitor, reserved,
// PendSV, SysTick.
__attribute__((section(".vectors"), used)) const vector_t mlcc_vectors[16] = {
    (vector_t)(uintptr_t)__stack_top, reset_handler, fault_handler, fault_handler,
    fault_handler, fault_handler, fault_handler, fault_handler, 0, 0, 0,
    fault_handler, fault_handler, 0, fault_handler, fault_handler,
};
